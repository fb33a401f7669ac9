#!/bin/sh
# check_full.sh — the performance targets of `full`, measured, not assumed:
#   1. full at B=1, H=8, D=64, n=4096, 2 threads reaches >= 40 % of the GFLOP/s of OpenBLAS
#      sgemm (2048^3, 2 threads) measured at the start of the same run;
#   2. its workspace at n=65536 stays under 64 MiB (run for real at H=1: the workspace does not
#      depend on H, the time does).
# The numbers are read from `bench export --format csv` by column name, never from the printed
# table (whose columns move).
# Usage: tools/check_full.sh [path/to/bench]   (default: ./bench, which builds first)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
bench=${1:-"$top/bench"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# value FILE.h5 TABLE COLUMN [KIND]: COLUMN of the table's last row (of kind KIND, for points).
value() {
    "$bench" export "$1" --table "$2" --format csv | /usr/bin/python3 -c '
import csv, sys
column, kind = sys.argv[1], (sys.argv[2:] or [None])[0]
rows = [r for r in csv.DictReader(sys.stdin) if kind is None or r["kind"] == kind]
print(rows[-1][column] if rows else "")' "$3" ${4:+"$4"}
}

echo "== full vs sgemm, n=4096, H=8, D=64, 2 threads (same run)"
"$bench" sweep --kinds full --dataset gaussian --n 4096 --causal 0 --heads 8 --head-dim 64 --batch 1 --threads 2 \
    --reps 10 --min-time 2 --out "$tmp/full.h5" 2>/dev/null
sgemm=$(value "$tmp/full.h5" runs sgemm_gflops | awk '{printf "%.1f", $1}')
full=$(value "$tmp/full.h5" points gflops_per_s full | awk '{printf "%.1f", $1}')
pct=$(awk -v f="$full" -v s="$sgemm" 'BEGIN {r = f / s; printf "%.0f", 100 * r; exit !(r >= 0.40)}') && pass1=yes || pass1=no

echo "== full workspace and peak RSS at n=65536 (H=1, D=64, 2 threads, one repetition)"
"$bench" run full --dataset gaussian --n 65536 --heads 1 --head-dim 64 --threads 2 --reps 1 --warmup 0 --min-time 0 \
    --out "$tmp/big.h5" 2>/dev/null
ws_bytes=$(value "$tmp/big.h5" points workspace_bytes full)
ws=$(awk -v b="$ws_bytes" 'BEGIN {printf "%.1f MiB", b / 1048576}')
pass2=$(awk -v b="$ws_bytes" 'BEGIN {print (b != "" && b < 64 * 1048576 ? "yes" : "no")}')

echo
echo "full / sgemm = ${full} / ${sgemm} GFLOP/s = ${pct}%  (target >= 40%): ${pass1}"
echo "workspace at n=65536 = ${ws}  (target < 64 MiB): ${pass2}"
[ "$pass1" = yes ] && [ "$pass2" = yes ]
