#!/bin/sh
# check_mods.sh — what the score modifiers cost (docs/engines.md#score-modifiers): full and window
# (w=256) at n=4096, H=8, D=64, 2 threads, causal and not, each with no modifier, alibi=1,
# softcap=30 and both. Four rounds, each measuring all 16 points one after the other
# (interleaved, so a busy moment hits every setting alike); per point the median time of its
# round, then per setting the median over rounds of time / time of the same kind and causal flag
# without modifiers in that round. Also each setting's self_rel_err (the output against the
# kind's float64 definition with the same modifiers). Prints a table; no verdict (the cost is
# measured, not a target). 2.5 minutes measured on 2 cores kept busy by other builds (load ~9);
# the forwards take about a fifth of that time on idle cores.
# Usage: tools/check_mods.sh [path/to/bench]   (default: ./bench, which builds first)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$top/tools/need_python.sh"
bench=${1:-"$top/bench"}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== full, window (w=256): none, alibi=1, softcap=30, both; n=4096, H=8, D=64, 2 threads (4 rounds)"
for round in 1 2 3 4; do
    "$bench" sweep --kinds full,window --set alibi=0,1 --set softcap=0,30 --dataset gaussian \
        --n 4096 --heads 8 --head-dim 64 --causal 0,1 --threads 2 --reps 3 --warmup 1 \
        --min-time 0 --accuracy-rows 8 --quiet --out "$tmp/mods.h5" 2>/dev/null
done

"$py" - "$tmp/mods.h5" <<'EOF'
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    p = f["points"][:]
bad = p[p["status"] != b"ok"]
if len(bad):
    sys.exit(f"failed points: {[(b['kind'], b['message']) for b in bad]}")

def setting(params):
    kv = dict(x.split("=") for x in params.decode().split(","))
    on = [n for n in ("alibi", "softcap") if float(kv[n]) != 0]
    return ",".join(f"{n}={kv[n]}" for n in on) or "none"

names = [setting(x) for x in p["params"]]
order = ["none", "alibi=1", "softcap=30", "alibi=1,softcap=30"]
print()
print(f"{'kind':8} {'causal':>6} {'setting':20} {'median ms':>10} {'ratio':>6}  "
      f"{'ratios per round':28} {'self_rel_err':>12}")
for kind in (b"full", b"window"):
    for causal in (0, 1):
        sel = (p["kind"] == kind) & (p["causal"] == causal)
        base = p[sel & (np.array(names) == "none")]["time_median_s"]  # one per round, in order
        for s in order:
            k = p[sel & (np.array(names) == s)]
            ratios = k["time_median_s"] / base
            rounds = " ".join(f"{r:.3f}" for r in ratios)
            print(f"{kind.decode():8} {causal:>6} {s:20} {np.median(k['time_median_s']) * 1e3:10.2f} "
                  f"{np.median(ratios):6.3f}  {rounds:28} {np.max(k['self_rel_err']):12.2e}")
EOF
