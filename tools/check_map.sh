#!/bin/sh
# check_map.sh — the performance targets of the kinds of issue 11, measured, not assumed
# (B=1, H=8, D=64, 2 threads, not causal: linformer and nystrom are defined without a mask):
#   1. time ~ n^a, least squares on log median time over n: linformer, nystrom (fixed k, m) and
#      reformer over n = 1K..64K: a within 1 ± 0.1 (reformer: 1 .. 1.15); additive, bilinear
#      (quadratic) over n = 1K..8K: a within 2 ± 0.1;
#   2. linformer and nystrom at n = 8192: >= 50 % of the run's sgemm GFLOP/s;
#   3. additive against full at n = 4096: the time ratio, beside the flop ratio of their counts;
#   4. error against cost at n = 4096 on `local` and `tied`: linformer k, nystrom landmarks,
#      reformer hashes (rel_err against exact attention, median time), and the error_vs_cost
#      figures of that run (bench plot) in $OUT_DIR (default: a temporary folder, then removed).
# Every sweep goes to one results file; numpy reads it back. About 5 minutes on 2 idle cores.
# Usage: tools/check_map.sh [path/to/bench] [OUT_DIR]   (default: ./bench, which builds first)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$top/tools/need_python.sh"
bench=${1:-"$top/bench"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out_dir=${2:-"$tmp/plots"}
h5="$tmp/map.h5"
common="--heads 8 --head-dim 64 --batch 1 --threads 2 --causal 0 --accuracy-rows 16 --quiet"

echo "== 1. time vs n: linformer, nystrom, reformer (n = 1K..64K); additive, bilinear (1K..8K)"
"$bench" sweep --kinds linformer,nystrom,reformer --n 1K:64K:x2 --dataset gaussian --reps 5 \
    --min-time 0.2 $common --out "$h5" >/dev/null
"$bench" sweep --kinds additive,bilinear,full --n 1K:8K:x2 --dataset gaussian --reps 3 \
    --min-time 0.2 $common --out "$h5" >/dev/null
echo "== 4. error vs cost at n = 4096 on local and tied"
"$bench" sweep --kinds linformer,nystrom,reformer,full --set k=16,32,64,128,256,512 \
    --set landmarks=8,16,32,64,128,256 --set hashes=1,2,4,8 --n 4096 --dataset local,tied \
    --reps 3 $common --out "$h5" >/dev/null
mkdir -p "$out_dir"
"$bench" plot "$h5" --out "$out_dir" >"$tmp/plot.txt" 2>&1 || cat "$tmp/plot.txt"

/usr/bin/python3 - "$h5" "$out_dir" <<'EOF'
import sys
import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
pts, runs = f["points"][:], f["runs"][:]
txt = lambda col: np.array([x.decode() for x in pts[col]])
kind, params, dataset, status = txt("kind"), txt("params"), txt("dataset"), txt("status")
ok = status == "ok"
n = pts["kv_len"].astype(float)
t = pts["time_median_s"]
sgemm = dict(zip(runs["run_id"], runs["sgemm_gflops"]))
passed = True

def series(k, run):
    sel = ok & (kind == k) & (pts["run_id"] == run) & (dataset == "gaussian")
    order = np.argsort(n[sel])
    return n[sel][order], t[sel][order], pts["gflops_per_s"][sel][order]

print("\n1. time exponents (least squares on log median time; B=1 H=8 D=64, 2 threads, not causal)")
targets = {"linformer": (0.9, 1.1), "nystrom": (0.9, 1.1), "reformer": (0.9, 1.15),
           "additive": (1.9, 2.1), "bilinear": (1.9, 2.1)}
first, second = runs["run_id"][0], runs["run_id"][1]
for k, (lo, hi) in targets.items():
    nn, tt, _ = series(k, first if k in ("linformer", "nystrom", "reformer") else second)
    if len(nn) < 2:
        print(f"   {k}: fewer than 2 points"); passed = False; continue
    a = np.polyfit(np.log(nn), np.log(tt), 1)[0]
    good = lo <= a <= hi
    passed &= good
    times = "  ".join(f"{int(x) // 1024}K:{1e3 * y:.1f}ms" for x, y in zip(nn, tt))
    print(f"   {k:9s} n^{a:.3f} (target {lo}..{hi}): {'yes' if good else 'NO'}   {times}")

print("\n2. GFLOP/s at n = 8192 against the run's sgemm")
for k in ("linformer", "nystrom"):
    nn, _, g = series(k, first)
    at = g[nn == 8192]
    if len(at) != 1:
        print(f"   {k}: no point at n = 8192"); passed = False; continue
    r = at[0] / sgemm[first]
    passed &= r >= 0.5
    print(f"   {k:9s} {at[0]:6.1f} GFLOP/s = {100 * r:.0f} % of sgemm {sgemm[first]:.1f} "
          f"(target >= 50 %): {'yes' if r >= 0.5 else 'NO'}")

print("\n3. additive against full at n = 4096")
sel = lambda k: ok & (kind == k) & (pts["run_id"] == second) & (n == 4096)
a, fu = sel("additive"), sel("full")
if a.sum() == 1 and fu.sum() == 1:
    tr = t[a][0] / t[fu][0]
    fr = pts["flops"][a][0] / pts["flops"][fu][0]
    print(f"   additive {1e3 * t[a][0]:.1f} ms / full {1e3 * t[fu][0]:.1f} ms = {tr:.2f}x time; "
          f"counted flops {fr:.2f}x; GFLOP/s {pts['gflops_per_s'][a][0]:.1f} vs "
          f"{pts['gflops_per_s'][fu][0]:.1f}")
else:
    print("   a point is missing"); passed = False

print("\n4. error vs cost at n = 4096 (rel_err against exact attention; median ms)")
late = pts["run_id"] == runs["run_id"][2]
for ds in ("local", "tied"):
    fsel = ok & late & (kind == "full") & (dataset == ds)
    ft = t[fsel][0] if fsel.sum() else float("nan")
    print(f"   {ds}: full {1e3 * ft:.1f} ms")
    for k, p in (("linformer", "k"), ("nystrom", "landmarks"), ("reformer", "hashes")):
        sel = ok & late & (kind == k) & (dataset == ds)
        rows = []
        for i in np.flatnonzero(sel):
            v = dict(x.split("=") for x in params[i].split(","))[p]
            rows.append((int(v), pts["rel_err"][i], 1e3 * t[i]))
        rows.sort()
        print(f"     {k:9s} " + "  ".join(f"{p}={v}: {e:.3f} @ {ms:.1f}ms" for v, e, ms in rows))
print(f"\nfigures of the last run: {sys.argv[2]} (error_vs_cost ...)")
print("PASS" if passed else "FAIL")
sys.exit(0 if passed else 1)
EOF
