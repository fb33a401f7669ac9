#!/bin/sh
# check_decode.sh — the decode targets of issue 4, measured in one run (same machine state):
# one new query (T=1) against a KV cache of n=32768 keys, H=32 query heads, D=128, 2 threads:
#   1. gqa (8 KV heads, its default at H=32) >= 3x faster than MHA (full, 32 KV heads);
#   2. mqa (1 KV head) >= 6x faster than MHA;
#   3. MHA reads its KV cache (kv_bytes / median time) at >= 60 % of the memory read bandwidth
#      the run measured (mem_bandwidth_gbs).
# The three kinds are interleaved ROUNDS times in one sweep; each kind's time is the median of
# all its timed repetitions. Needs about 1.2 GiB of memory and a minute.
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
"$bench" sweep --mode decode --kinds "$kinds" --n 32768 --heads 32 --head-dim 128 --batch 1 \
    --threads 2 --reps 10 --min-time 0.5 --out "$tmp/decode.h5" 2>/dev/null

/usr/bin/python3 - "$tmp/decode.h5" <<'EOF'
import sys
import h5py
import numpy as np

with h5py.File(sys.argv[1], "r") as f:
    run = f["runs"][-1]
    pts = f["points"][:]
    smp = f["samples"][:]
pts = pts[pts["run_id"] == run["run_id"]]
smp = smp[smp["run_id"] == run["run_id"]]
bw = float(run["mem_bandwidth_gbs"])
if np.any(pts["status"] != b"ok"):
    sys.exit("some points failed: " + ", ".join(m.decode() for m in pts["message"] if m))

t, kvh, kvb = {}, {}, {}
for kind in ("full", "gqa", "mqa"):
    mine = pts[pts["kind"] == kind.encode()]
    times = smp["seconds"][np.isin(smp["point_id"], mine["point_id"])]
    t[kind] = float(np.median(times))
    kvh[kind] = int(mine["kv_heads"][0])
    kvb[kind] = float(mine["kv_bytes"][0])
    rounds = ", ".join("%.2f" % (1e3 * m) for m in mine["time_median_s"])
    print("%-4s kv_heads=%-2d  %8.2f ms (median of %d reps; per round: %s)  KV %.1f GB/s"
          % (kind, kvh[kind], 1e3 * t[kind], len(times), rounds, kvb[kind] / t[kind] / 1e9))

ok = True
def target(label, value, goal, unit):
    global ok
    passed = value >= goal
    ok &= passed
    print("%-46s %6.2f%s  (target >= %g%s): %s" % (label, value, unit, goal, unit,
                                                   "PASS" if passed else "FAIL"))

print()
print("memory read bandwidth of the run: %.1f GB/s" % bw)
target("gqa (%d KV heads) speed-up over MHA" % kvh["gqa"], t["full"] / t["gqa"], 3, "x")
target("mqa (%d KV head) speed-up over MHA" % kvh["mqa"], t["full"] / t["mqa"], 6, "x")
target("MHA KV read rate / memory bandwidth", 100 * kvb["full"] / t["full"] / 1e9 / bw, 60, " %")
if kvh["full"] != 32 or kvh["gqa"] != 8 or kvh["mqa"] != 1:
    print("unexpected KV heads: full %(full)d, gqa %(gqa)d, mqa %(mqa)d" % kvh)
    ok = False
sys.exit(0 if ok else 1)
EOF
