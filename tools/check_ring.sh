#!/bin/sh
# check_ring.sh — the ring kind against full, and its scaling over MPI ranks (docs/distributed.md):
#   1. ring on 2 ranks x 1 thread against full on 1 rank x 1 thread at n = N (default 16384),
#      causal, H = 8, D = 64: times, speed-up, and the measured overlap (the share of the
#      messages' time in flight hidden behind compute). On one machine the messages go through
#      shared memory (loopback), not a network: say so when quoting it.
#   2. strong scaling: ring at n = N on R = 1, 2, 4 ... ranks (RANKS), 1 thread each;
#   3. weak scaling: ring at n = N0·R (N0 = N / largest R), so each rank keeps N0 keys and values
#      (its compute grows like R: attention is quadratic).
# Parallel efficiency E(R) = ring's GFLOP/s on R ranks / (R × full's GFLOP/s on 1 rank × 1 thread
# at the same n (strong) or at n = N0 (weak)): 1 is perfect scaling over the serial kernel.
# Figures (gnuplot, PNG) and a table, in OUTDIR (default results/ring-<time>); every point is kept
# in OUTDIR/ring.h5 (one run per mpirun; the ring rows record ranks=R in params).
# Ranks beyond the cores are oversubscribed (--oversubscribe): their timings then mean nothing;
# run it where R cores are free (issue 15: 1 to 8 ranks at n = 64K on a 16-core machine).
# Usage: tools/check_ring.sh [path/to/bench] [N] [RANKS] [OUTDIR]
#        e.g. tools/check_ring.sh build/harness/bench 65536 "1 2 4 8"
#        QUICK=1 tools/check_ring.sh   (a smoke test of the script: n = 1024, 1 rep)
set -eu
top=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
. "$top/tools/need_python.sh"
bench=${1:-"$top/build/harness/bench"}
n=${2:-16384}
ranks=${3:-"1 2 4"}
out=${4:-"$top/results/ring-$(date -u +%Y%m%dT%H%M%SZ)"}
timing="--reps 3 --min-time 1"
[ "${QUICK:-0}" = 1 ] && n=1024 timing="--reps 1 --warmup 0 --warmup-time 0 --min-time 0"
mkdir -p "$out"
h5="$out/ring.h5"
mpi="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && mpi="$mpi --allow-run-as-root"
export OMP_NUM_THREADS=1
shape="--heads 8 --head-dim 64 --causal 1 --threads 1 $timing --out $h5"
largest=1
for r in $ranks; do [ "$r" -gt "$largest" ] && largest=$r; done
n0=$((n / largest))

echo "== 1. ring on 2 ranks x 1 thread vs full on 1 rank x 1 thread, n=$n, causal, H=8, D=64"
echo "   (one machine: messages through shared memory, loopback)"
"$bench" run full --n "$n" $shape
$mpi -n 2 "$bench" run ring --n "$n" $shape
echo "== 2. strong scaling: ring at n=$n on ranks: $ranks"
for r in $ranks; do $mpi -n "$r" "$bench" run ring --n "$n" $shape | tail -n +2; done
echo "== 3. weak scaling: ring at n=$n0 x R on ranks: $ranks (and full at n=$n0)"
"$bench" run full --n "$n0" $shape | tail -n +2
for r in $ranks; do $mpi -n "$r" "$bench" run ring --n $((n0 * r)) $shape | tail -n +2; done

/usr/bin/python3 - "$h5" "$n" "$n0" "$out" <<'EOF'
import re
import sys

import h5py
import numpy as np

path, n, n0, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with h5py.File(path, "r") as f:
    pts = f["points"][:]
pts = pts[pts["status"] == b"ok"]
kind = np.array([k.decode() for k in pts["kind"]])

def ranks_of(p):
    m = re.search(r"ranks=(\d+)", p["params"].decode())
    return int(m.group(1)) if m else 1

def full_at(length):
    sel = pts[(kind == "full") & (pts["q_len"] == length)]
    return float(sel["gflops_per_s"][-1])

print("\nscaling   R        n   median_s  GFLOP/s  efficiency  compute_s  wait_s  overlap  imbalance")
for label, base_n, with_n in (("strong", n, lambda r: n), ("weak", n0, lambda r: n0 * r)):
    serial = full_at(base_n)
    rows = []
    for p in pts[kind == "ring"]:
        r = ranks_of(p)
        if p["q_len"] != with_n(r) or any(x[0] == r for x in rows):
            continue
        eff = float(p["gflops_per_s"]) / (r * serial)
        rows.append((r, int(p["q_len"]), float(p["time_median_s"]), float(p["gflops_per_s"]), eff,
                     float(p["compute_time_s"]), float(p["comm_time_s"]), float(p["overlap"]),
                     float(p["compute_imbalance"])))
    rows.sort()
    with open(f"{out}/{label}.dat", "w") as d:
        d.write("# R n median_s gflops efficiency compute_s wait_s overlap imbalance\n")
        for row in rows:
            d.write(" ".join(str(x) for x in row) + "\n")
            print("%-7s %3d %8d %10.4f %8.1f %10.2f %10.4f %7.4f %7.1f%% %9.1f%%" %
                  ((label,) + row[:7] + (100 * row[7], 100 * row[8])))
    print(f"{label:7s} full on 1 rank x 1 thread at n={base_n}: {serial:.1f} GFLOP/s")
EOF

if command -v gnuplot >/dev/null; then
    gnuplot <<EOF
set terminal pngcairo size 900,380 enhanced font 'sans,10' background '#ffffff'
set output '$out/scaling.png'
set multiplot layout 1,2
set grid
set key top left
set logscale x 2
set xlabel 'ranks R (1 thread each)'
set ylabel 'GFLOP/s'
set title 'ring, causal, H=8, D=64: throughput'
plot '$out/strong.dat' u 1:4 w lp t 'strong: n=$n', '$out/weak.dat' u 1:4 w lp t 'weak: n=$n0·R'
set ylabel 'parallel efficiency'
set yrange [0:1.2]
set title 'efficiency vs full on 1 rank x 1 thread'
plot '$out/strong.dat' u 1:5 w lp t 'strong', '$out/weak.dat' u 1:5 w lp t 'weak', 1 w l dt 2 t 'ideal'
unset multiplot
EOF
    echo "figure: $out/scaling.png"
fi
echo "results: $h5 (tables: $out/strong.dat, $out/weak.dat)"
