#!/bin/sh
# check_decode.sh — the decode targets, measured in one run (same machine state):
# one new query (T=1) against a KV cache of n=32768 keys, H=32 query heads, D=128, 2 threads:
#   1. gqa (8 KV heads, its default at H=32) >= 3x faster than MHA (full, 32 KV heads);
#   2. mqa (1 KV head) >= 6x faster than MHA;
#   3. MHA reads its KV cache (kv_bytes / median time) at >= 60 % of the memory read bandwidth
#      the run measured (mem_bandwidth_gbs).
# The three kinds are interleaved ROUNDS times in one sweep; each verdict is the median over the
# rounds of that round's ratio. Needs about 1.2 GiB of memory and under a minute.
# Usage: tools/check_decode.sh [path/to/bench] [rounds]   (default: ./bench, which builds first; 3)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
bench=${1:-"$top/bench"}
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

kinds=full,gqa,mqa
i=1
while [ "$i" -lt "$rounds" ]; do kinds="$kinds,full,gqa,mqa"; i=$((i + 1)); done

echo "== decode, n=32768, H=32, D=128, T=1, 2 threads: $kinds (one run)"
"$bench" sweep --mode decode --dataset gaussian --kinds "$kinds" --n 32768 --heads 32 --head-dim 128 --batch 1 \
    --threads 2 --reps 10 --min-time 0.5 --out "$tmp/decode.h5" 2>/dev/null

/usr/bin/python3 - "$tmp/decode.h5" <<'EOF'
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    run = f["runs"][-1]
    pts = f["points"][:]
pts = pts[pts["run_id"] == run["run_id"]]
bw = float(run["mem_bandwidth_gbs"])
if np.any(pts["status"] != b"ok"):
    sys.exit("some points failed: " + ", ".join(m.decode() for m in pts["message"] if m))

# per round (full, gqa, mqa measured one after the other): medians, ratios; verdicts on the
# median over rounds, so one disturbed round does not decide
kinds = ("full", "gqa", "mqa")
by = {k: pts[pts["kind"] == k.encode()] for k in kinds}
kvh = {k: int(by[k]["kv_heads"][0]) for k in kinds}
mha_kv_bytes = float(by["full"]["kv_bytes"][0])
rounds = min(len(by[k]) for k in kinds)
print("round   full ms    gqa ms    mqa ms   full/gqa  full/mqa  MHA KV GB/s")
r_gqa, r_mqa, t_full = [], [], []
for r in range(rounds):
    t = {k: float(by[k]["time_median_s"][r]) for k in kinds}
    r_gqa.append(t["full"] / t["gqa"])
    r_mqa.append(t["full"] / t["mqa"])
    t_full.append(t["full"])
    print("%5d %9.2f %9.2f %9.2f %9.2f %9.2f %12.1f" % (r + 1, 1e3 * t["full"], 1e3 * t["gqa"],
          1e3 * t["mqa"], r_gqa[-1], r_mqa[-1], mha_kv_bytes / t["full"] / 1e9))

ok = True
def target(label, value, goal, unit):
    global ok
    passed = value >= goal
    ok &= passed
    print("%-46s %6.2f%s  (target >= %g%s): %s" % (label, value, unit, goal, unit,
                                                   "PASS" if passed else "FAIL"))

print()
print("KV heads: full %(full)d, gqa %(gqa)d, mqa %(mqa)d; memory read bandwidth of the run: " % kvh
      + "%.1f GB/s; medians over %d rounds:" % (bw, rounds))
target("gqa speed-up over MHA", float(np.median(r_gqa)), 3, "x")
target("mqa speed-up over MHA", float(np.median(r_mqa)), 6, "x")
target("MHA KV read rate / memory bandwidth",
       100 * mha_kv_bytes / float(np.median(t_full)) / 1e9 / bw, 60, " %")
if kvh["full"] != 32 or kvh["gqa"] != 8 or kvh["mqa"] != 1:
    print("unexpected KV heads")
    ok = False
sys.exit(0 if ok else 1)
EOF
