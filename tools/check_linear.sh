#!/bin/sh
# check_linear.sh — the performance targets of `linear`, measured, not assumed:
#   1. linear (map=elu, B=1, H=8, D=64, 2 threads) time grows as n^a with a within 1 ± 0.1 over
#      n = 1K..256K, causal and not (least-squares fit of log median time on log n);
#   2. at n = 65536 (H=8, D=64, not causal) linear is >= 20 times faster than full (full: one
#      repetition, no warm-up: about 80 s on 2 cores).
# Both go to one results file (two runs); numpy reads them back. Needs ~2.5 GiB at n = 256K.
# Usage: tools/check_linear.sh [path/to/bench]   (default: ./bench, which builds first)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$top/tools/need_python.sh"
bench=${1:-"$top/bench"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common="--dataset gaussian --heads 8 --head-dim 64 --batch 1 --threads 2 --accuracy-rows 16 --out $tmp/linear.h5"

echo "== linear (elu) over n = 1K..256K, causal 0 and 1, H=8, D=64, 2 threads"
"$bench" sweep --kinds linear --set map=elu --n 1K:256K:x2 --causal 0,1 --reps 5 --min-time 0.2 \
    $common 2>/dev/null
echo "== full at n = 65536, H=8, D=64, not causal (one repetition, ~80 s)"
"$bench" sweep --kinds full --n 65536 --causal 0 --reps 1 --warmup 0 --min-time 0 $common 2>/dev/null

/usr/bin/python3 - "$tmp/linear.h5" <<'EOF'
import sys
import h5py
import numpy as np

pts = h5py.File(sys.argv[1], "r")["points"][:]
kind = np.array([k.decode() for k in pts["kind"]])
ok = np.array([s.decode() == "ok" for s in pts["status"]])
lin = ok & (kind == "linear")
passed = True
for causal in (0, 1):
    sel = lin & (pts["causal"] == causal)
    n, t = pts["kv_len"][sel].astype(float), pts["time_median_s"][sel]
    a, _ = np.polyfit(np.log(n), np.log(t), 1)
    a_min, _ = np.polyfit(np.log(n), np.log(pts["time_min_s"][sel]), 1)
    good = abs(a - 1) <= 0.1 and sel.sum() == 9
    passed &= good
    print(f"linear causal={causal}: time ~ n^{a:.3f} over n = {int(n.min())}..{int(n.max())} "
          f"({sel.sum()} points; target 1 +- 0.1): {'yes' if good else 'no'}")
    print(f"    (fit on the minimum times: n^{a_min:.3f}; medians that are multiples of 4 ms, or far "
          f"from the minimum, mean a busy machine: rerun it alone)")
    for ni, ti, tm in zip(n, t, pts["time_min_s"][sel]):
        print(f"    n={int(ni):7d}  median {1e3 * ti:10.2f} ms   min {1e3 * tm:10.2f} ms")
at = lambda k, c: pts["time_median_s"][ok & (kind == k) & (pts["causal"] == c) & (pts["kv_len"] == 65536)]
full, linear = at("full", 0), at("linear", 0)
if len(full) == 1 and len(linear) == 1:
    r = full[0] / linear[0]
    good = r >= 20
    print(f"n=65536 not causal: full {full[0]:.2f} s / linear {1e3 * linear[0]:.1f} ms = {r:.0f}x "
          f"(target >= 20x): {'yes' if good else 'no'}")
else:
    good = False
    print("n=65536: a point is missing")
passed &= good
print("PASS" if passed else "FAIL")
sys.exit(0 if passed else 1)
EOF
