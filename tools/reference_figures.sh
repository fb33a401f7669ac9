#!/bin/sh
# The reference figures of docs/plots-and-fits.md: measure, fit and draw into docs/figures/
# (small PNGs to commit).
#   tools/reference_figures.sh [N_RANGE] [extra sweep options for run 1...]
# Four runs in one results file, run serially on an otherwise idle machine:
#   1. every kind over n (default 1K:16K:x2), causal           -> *_vs_n, accuracy_vs_<param>,
#      error_vs_cost (these two need a parameter sweep: pass e.g. --set window=64,256)
#   2. heads 2,4,8,16 at n = 4K                                -> time_vs_heads
#   3. kv_heads 1,2,4,8 at heads 8, n = 4K                     -> time_vs_kv_heads
#   4. decode, one query against n cached keys (1K:64K:x4)     -> *_vs_n_decode
# bench fit of run 1 goes to docs/figures/fit.txt.
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
n=${1:-1K:16K:x2}
[ $# -gt 0 ] && shift
out=$top/results/reference-$(date -u +%Y%m%d-%H%M%S).h5
figs=$top/docs/figures
mkdir -p "$figs"
"$top/bench" sweep --n "$n" --out "$out" "$@"
"$top/bench" sweep --dataset gaussian --n 4K --heads 2,4,8,16 --causal 1 --out "$out" --quiet
"$top/bench" sweep --dataset gaussian --n 4K --heads 8 --kv-heads 1,2,4,8 --causal 1 --out "$out" --quiet
"$top/bench" sweep --dataset gaussian --mode decode --n 1K:64K:x4 --out "$out" --quiet
"$top/bench" fit "$out" --run 1 | tee "$figs/fit.txt"
# each run into a folder of its own (a plot removes an earlier plot's figures from its folder),
# then all of them into docs/figures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3 4; do
    "$top/bench" plot "$out" --run "$run" --out "$tmp/run$run"
    cp "$tmp/run$run"/*.png "$figs/"
done
echo "results: $out; figures: $figs"
