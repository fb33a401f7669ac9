#!/bin/sh
# check_intrinsics.sh SOURCE_DIR: intrinsics live only in the vector layers
# (attention/kernels/vec_*.h, docs/adding-a-kernel-set.md). Fails, naming each file and its first
# such line, when another tracked .c or .h file uses an intrinsic, a vector register type, an
# intrinsics header or an ISA feature macro: _mm*_ / _MM_* names, __m64/128/256/512* types and
# __mmask*, <immintrin.h> and the other *intrin.h, <arm_neon.h>, <arm_sve.h>, __AVX*__, __SSE*__,
# __FMA__, __F16C__, __ARM_NEON*. CPU detection is not an intrinsic: isa.c's <cpuid.h> and
# __builtin_cpu_supports pass. Tracked files in a git checkout, else every .c/.h outside build*.
# The meson test 'intrinsics'.
set -eu
top=$1
cd "$top"
pattern='(^|[^A-Za-z0-9])_mm[0-9]*_[A-Za-z0-9]|_MM_[A-Z]|__m(64|128|256|512)[a-z]*([^A-Za-z0-9_]|$)|__mmask|[a-z0-9_]*intrin\.h|arm_(neon|sve)\.h|__(AVX|SSE|FMA|F16C)[A-Z0-9_]*__|__ARM_NEON'
files=$({ git ls-files -- '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' ! -path './build*' | sed 's|^\./||'; } |
    grep -v -E '^attention/kernels/vec_[a-z0-9_]+\.h$' || true)
[ -n "$files" ] || { echo "intrinsics: no .c/.h files under $top" >&2; exit 1; }
bad=$(for f in $files; do
    l=$(grep -n -m 1 -E "$pattern" "$f" || true)
    [ -z "$l" ] || printf '  %s:%s\n' "$f" "$l"
done)
if [ -n "$bad" ]; then
    printf 'intrinsics: outside the vector layers (attention/kernels/vec_*.h), move them into a primitive there:\n%s\n' "$bad" >&2
    exit 1
fi
echo "intrinsics: $(echo "$files" | wc -l) C files without intrinsics; they live in attention/kernels/vec_*.h only"
