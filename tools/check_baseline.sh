#!/bin/sh
# check_baseline.sh BUILD_DIR: one x86-64 binary runs on any x86-64. No object file of the build
# but the AVX2 and AVX-512 kernel sets (attention/kernels/set_avx2.c, set_avx512.c) holds an AVX
# instruction (VEX/EVEX: v-prefixed mnemonics, ymm/zmm registers), and the AVX2 set holds no
# AVX-512 one (zmm or mask registers). x86-64 only (the meson test 'baseline'); needs objdump.
set -eu
dir=$1
objs=$(find "$dir" -name '*.c.o' ! -name '*set_avx2.c.o' ! -name '*set_avx512.c.o')
[ -n "$objs" ] || { echo "baseline: no object files under $dir" >&2; exit 1; }
# one line per object with an AVX instruction: the object and its first such instruction
bad=$(for o in $objs; do
    i=$(objdump -d --no-show-raw-insn "$o" | grep -m 1 -E '%[yz]mm|^ +[0-9a-f]+:[[:space:]]+v[a-z0-9]+ ') &&
        printf '%s: %s\n' "${o#"$dir"/}" "$(echo "$i" | tr -s ' \t' ' ')"
done || true)
if [ -n "$bad" ]; then
    printf 'baseline: AVX instructions outside the AVX kernel sets (one binary must run on any x86-64):\n%s\n' "$bad" >&2
    exit 1
fi
n=$(echo "$objs" | wc -l)
avx2=$(find "$dir" -name '*set_avx2.c.o')
for o in $avx2; do
    if objdump -d --no-show-raw-insn "$o" | grep -q -E '%zmm|%k[0-7]'; then
        echo "baseline: $o holds AVX-512 instructions" >&2
        exit 1
    fi
done
echo "baseline: $n object files without AVX instructions; the AVX2 set without AVX-512 ones"
