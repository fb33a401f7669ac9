#!/bin/sh
# check_training.sh — issue 12's targets for the backward pass, measured (H=8, D=64, B=1,
# 2 threads, gaussian data). Each ratio is taken within one run; A repeats it ROUNDS times and
# reports the median of the rounds' ratios.
#   A. `full` backward >= 60 % of its forward GFLOP/s at n=4096 (not causal, the two passes
#      measured one after the other), and its backward workspace the same at n = 1K ... 16K;
#   B. (the sparse kinds' backward >= 50 % of full's per score: tools/check_kernels.sh group D)
#   C. `linear` causal `train` time ~ n^k over n = 4K ... 64K with k = 1 +- 0.1 (least squares
#      on log-log axes);
#   D. a training step's memory (saved + workspace, and peak RSS added) of `full` against its
#      `materialize=1` baseline at n = 16K, not causal: printed, no target (the baseline keeps
#      the T x S scores, so it needs ~4 GiB).
# Run it on an otherwise idle machine; about 3 minutes.
# Usage: tools/check_training.sh [path/to/bench] [rounds] [A|C|D ...] (default ./bench, 3, all)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$top/tools/need_python.sh"
bench=${1:-"$top/bench"}
rounds=${2:-3}
[ "$#" -ge 2 ] && shift 2 || shift "$#"
groups=${*:-"A C D"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
common="--dataset gaussian --batch 1 --heads 8 --head-dim 64 --threads 2 --quiet"

# verdicts FILE.h5 GROUP: the targets of GROUP from the file's points (python below)
verdicts() {
    /usr/bin/python3 - "$1" "$2" "$top/tools" <<'EOF' || status=1
import sys
import numpy as np

path, group = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import check_points

pts = check_points.load(path)
s = lambda col: check_points.column(pts, col)
MiB = 1 << 20
ok = True


def target(label, value, passed, goal):
    global ok
    ok &= passed
    print("  %-60s %s  (target %s): %s" % (label, value, goal, "PASS" if passed else "FAIL"))


if group == "A":
    pas, n = s("pass"), pts["kv_len"]
    order = lambda m: pts[m][np.argsort(pts[m]["run_id"], kind="stable")]
    fwd, bwd = order((pas == "forward") & (n == 4096)), order((pas == "backward") & (n == 4096))
    r = min(len(fwd), len(bwd))
    print("  round  forward GF/s  backward GF/s")
    for i in range(r):
        print("  %5d %13.1f %14.1f" % (i + 1, fwd[i]["gflops_per_s"], bwd[i]["gflops_per_s"]))
    ratio = 100 * float(np.median(bwd["gflops_per_s"][:r] / fwd["gflops_per_s"][:r]))
    target("full backward / forward GFLOP/s, n = 4096", "%6.1f %%" % ratio, ratio >= 60, ">= 60 %")
    ws = order((pas == "backward") & (n != 4096))
    sizes = ", ".join("%d: %.2f" % (p["kv_len"], p["workspace_bytes"] / MiB) for p in ws)
    target("full backward workspace (MiB) by n", sizes, len(set(ws["workspace_bytes"])) == 1,
           "the same at every n")
elif group == "C":
    n, t = pts["kv_len"].astype(float), pts["time_median_s"]
    for a, b in zip(n, t):
        print("  n = %6d  train %9.2f ms" % (a, 1e3 * b))
    k = float(np.polyfit(np.log(n), np.log(t), 1)[0])
    target("linear causal train: exponent k of time ~ n^k", "%6.3f" % k, abs(k - 1) <= 0.1,
           "1 +- 0.1")
else:
    mat = np.array([b"materialize=1" in p for p in pts["params"]])
    for label, m in (("full (flash backward)", ~mat), ("full materialize=1", mat)):
        p = pts[m][0]
        print("  %-24s saved + workspace %10.1f MiB, peak RSS added %10.1f MiB, step %7.2f s" %
              (label, (p["saved_bytes"] + p["workspace_bytes"]) / MiB,
               (p["peak_rss_bytes"] - p["base_rss_bytes"]) / MiB, p["time_median_s"]))
sys.exit(0 if ok else 1)
EOF
}

for g in $groups; do
    case "$g" in
    A)
        echo "== A: full forward vs backward, n=4096, not causal ($rounds rounds); workspace by n"
        i=0
        while [ "$i" -lt "$rounds" ]; do
            "$bench" sweep --kinds full --n 4096 --causal 0 --pass forward,backward --reps 5 \
                $common --out "$tmp/a.h5" >/dev/null
            i=$((i + 1))
        done
        "$bench" sweep --kinds full --n 1024:16384:x2 --causal 0 --pass backward --reps 1 \
            --warmup 0 --min-time 0 $common --out "$tmp/a.h5" >/dev/null
        verdicts "$tmp/a.h5" A
        ;;
    C)
        echo "== C: linear causal train, n = 4K ... 64K"
        "$bench" sweep --kinds linear --n 4096:65536:x2 --causal 1 --pass train --reps 5 \
            $common --out "$tmp/c.h5" >/dev/null
        verdicts "$tmp/c.h5" C
        ;;
    D)
        echo "== D: training step memory, full vs materialize=1, n=16384, not causal"
        "$bench" sweep --kinds full --set materialize=0,1 --n 16384 --causal 0 --pass train \
            --reps 2 --warmup 0 $common --out "$tmp/d.h5" >/dev/null
        verdicts "$tmp/d.h5" D
        ;;
    *)
        echo "unknown group '$g' (A, C or D)" >&2
        exit 2
        ;;
    esac
done
exit "$status"
