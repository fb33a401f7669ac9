#!/bin/sh
# cross_check.sh [BUILD_DIR]: the arm64 cross-build (BUILD_DIR, default build-arm64/).
# Builds attnbench for arm64 with the portable kernel set only (no x86 file is compiled there),
# every warning an error (--werror, warning_level=2), with Debian's gcc-aarch64-linux-gnu and
# tools/cross/aarch64-linux-gnu.ini. With the arm64 libraries installed (found by
# aarch64-linux-gnu-pkg-config: openblas, hdf5, criterion, jansson) it builds and links
# everything. Without them (an x86 Debian machine with the cross compiler only) it compiles
# every C file of the project (attention/, datasets/, harness/, tests/, tools/) to arm64 object
# files against this machine's headers of those libraries, and links nothing. Prints one
# "cross-check: ..." line. CI runs it. It also fails when a file outside attention/kernels/ uses
# x86 intrinsics or x86 feature macros.
set -eu

top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
dir=${1:-$top/build-arm64}
say() { printf 'cross-check: %s\n' "$*" >&2; }

# No file outside attention/kernels/ uses x86 intrinsics or x86 feature macros (attention/kernels/isa.c
# detects the CPU, under #if defined(__x86_64__)). Tracked C files when in a git checkout.
x86=$(cd "$top" && { git ls-files -- '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]'; } |
    grep -v -e '^attention/kernels/' -e '^\./attention/kernels/' -e '^build' -e '^\./build' |
    xargs grep -l -E '_mm(256|512)?_[a-z]|__m(128|256|512)|(imm|x86)intrin\.h|__(AVX|SSE|FMA|F16C)[A-Z0-9_]*__' \
        2>/dev/null || true)
# shellcheck disable=SC2086 # one line of file names
[ -z "$x86" ] || say "x86 intrinsics or x86 feature macros outside attention/kernels/:" $x86

command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || {
    say "aarch64-linux-gnu-gcc not found" \
        "(Debian: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
    exit 1
}
cross="--cross-file $top/tools/cross/aarch64-linux-gnu.ini"
mode=link
if ! aarch64-linux-gnu-pkg-config --exists openblas hdf5 criterion jansson 2>/dev/null; then
    mode=compile
    cross="$cross --cross-file $top/tools/cross/headers-only.ini"
fi
if [ ! -f "$dir/build.ninja" ]; then
    setup_log=$(mktemp)
    # shellcheck disable=SC2086 # $cross is a list of options
    if ! meson setup "$dir" "$top" $cross -Dmpi=disabled --werror --buildtype=release \
        >"$setup_log" 2>&1; then
        cat "$setup_log" >&2
        rm -f "$setup_log"
        say "meson setup failed"
        exit 1
    fi
    mv "$setup_log" "$dir/setup.log"
fi
log="$dir/compile.log"
if [ "$mode" = link ]; then
    targets=""
else # every object file, nothing linked
    targets=$(ninja -C "$dir" -t targets all | sed -n 's/^\([^:]*\.o\): .*/\1/p')
fi
# shellcheck disable=SC2086 # $targets is a list of ninja targets
if ! ninja -C "$dir" $targets >"$log" 2>&1; then
    grep -E -A5 'error|warning' "$log" >&2 || cat "$log" >&2
    say "arm64 build failed (log: $log)"
    exit 1
fi
objects=$(find "$dir" -name '*.c.o' | wc -l)
isa_o=$(find "$dir" -name '*kernels_isa.c.o' | head -n 1)
arch=$(aarch64-linux-gnu-readelf -h "$isa_o" | sed -n 's/^ *Machine: *//p')
case "$arch" in
AArch64) ;;
*) say "attention/kernels/isa.c.o is not an arm64 object: $arch"; exit 1 ;;
esac
if [ "$mode" = link ]; then
    echo "cross-check: arm64 build linked, $objects C files compiled with -Werror ($arch)"
else
    echo "cross-check: $objects C files compiled for arm64 with -Werror ($arch);" \
        "not linked (no arm64 OpenBLAS/HDF5/Criterion/jansson libraries here)"
fi
[ -z "$x86" ] # the x86 check above fails the run, after the build
