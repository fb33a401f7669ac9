#!/bin/sh
# check_full.sh — the performance targets of `full`, measured, not assumed:
#   1. full at B=1, H=8, D=64, n=4096, 2 threads reaches >= 40 % of the GFLOP/s of OpenBLAS
#      sgemm (2048^3, 2 threads) measured at the start of the same run;
#   2. its workspace at n=65536 stays under 64 MiB (run for real at H=1: the workspace does not
#      depend on H, the time does).
# Usage: tools/check_full.sh [path/to/bench]   (default: ./bench, which builds first)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
bench=${1:-"$top/bench"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== full vs sgemm, n=4096, H=8, D=64, 2 threads (same run)"
"$bench" sweep --kinds full --dataset gaussian --n 4096 --causal 0 --heads 8 --head-dim 64 --batch 1 --threads 2 \
    --reps 10 --min-time 2 --out "$tmp/full.h5" 2>/dev/null | tee "$tmp/sweep.txt"
sgemm=$(awk '/^run [0-9]+: sgemm/ {print $4}' "$tmp/sweep.txt")
full=$(awk '$1 == "full" {print $12}' "$tmp/sweep.txt")
pct=$(awk -v f="$full" -v s="$sgemm" 'BEGIN {r = f / s; printf "%.0f", 100 * r; exit !(r >= 0.40)}') && pass1=yes || pass1=no

echo "== full workspace and peak RSS at n=65536 (H=1, D=64, 2 threads, one repetition)"
"$bench" run full --dataset gaussian --n 65536 --heads 1 --head-dim 64 --threads 2 --reps 1 --warmup 0 --min-time 0 \
    --out "$tmp/big.h5" 2>/dev/null | tee "$tmp/big.txt"
ws=$(awk '$1 == "full" {print $15, $16}' "$tmp/big.txt")
pass2=$(awk -v w="$ws" 'BEGIN {split(w, a, " "); m = a[2] == "KiB" ? a[1] / 1024 : (a[2] == "MiB" ? a[1] : (a[2] == "B" ? 0 : 1e9)); print (m < 64 ? "yes" : "no")}')

echo
echo "full / sgemm = ${full} / ${sgemm} GFLOP/s = ${pct}%  (target >= 40%): ${pass1}"
echo "workspace at n=65536 = ${ws}  (target < 64 MiB): ${pass2}"
[ "$pass1" = yes ] && [ "$pass2" = yes ]
