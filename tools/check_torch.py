#!/usr/bin/env python3
"""check_torch.py — `full` against PyTorch's CPU
torch.nn.functional.scaled_dot_product_attention (float32) at the same shape, thread count by
thread count, in the same run.

Each round measures, for every thread count t in turn, `bench run full --threads t` and SDPA under
torch.set_num_threads(t) one right after the other (which of the two goes first alternates by
round), so a slow period of the machine hits both. The verdict for t is the median over rounds of
that round's ratio full / SDPA (GFLOP/s), target >= 1. Both count 4·D flops per allowed score
(causal: T(T+1)/2 scores per head at T = S), so the ratio is a ratio of times.

Needs a python3 that imports torch (2.x: SDPA) and an attnbench build; run it on the machine to
compare (docs/performance.md). Exit status 0 when every thread count passes, 1 otherwise, 2 on
bad usage or a missing piece.

usage: python3 tools/check_torch.py [--bench PATH] [--threads 1,2,4,8,16] [--rounds 3]
                                    [--n 4096] [--heads 16] [--head-dim 64] [--causal 0]
                                    [--reps 5] [--min-time 1]
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(TOP, "build", "harness", "bench"),
                    help="the bench executable (default: build/harness/bench)")
    ap.add_argument("--threads", default="1,2,4,8,16", help="thread counts (default 1,2,4,8,16)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--n", type=int, default=4096, help="sequence length (default 4096)")
    ap.add_argument("--heads", type=int, default=16, help="heads (default 16)")
    ap.add_argument("--head-dim", type=int, default=64, help="head dimension (default 64)")
    ap.add_argument("--causal", type=int, choices=(0, 1), default=0, help="causal (default 0)")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions, at least (default 5)")
    ap.add_argument("--min-time", type=float, default=1.0,
                    help="and time them for at least this many seconds (default 1)")
    a = ap.parse_args()
    try:
        a.threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        ap.error("--threads %r: give a comma-separated list of counts, e.g. 1,2,4" % a.threads)
    if not a.threads or min(a.threads) < 1 or a.rounds < 1 or a.reps < 1 or a.n < 1 \
            or a.heads < 1 or a.head_dim < 1 or a.min_time < 0:
        ap.error("--threads, --rounds, --reps, --n, --heads and --head-dim must be >= 1, "
                 "--min-time >= 0")
    return a


def scores(a):
    """allowed scores per head (bench's count for full: every pair, or j <= i when causal)"""
    return a.n * (a.n + 1) // 2 if a.causal else a.n * a.n


def bench_gflops(a, threads, out):
    """full's median GFLOP/s from one `bench run`, read by column name from bench export"""
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.bench, "run", "full", "--dataset", "gaussian", "--n", str(a.n), "--heads",
           str(a.heads), "--head-dim", str(a.head_dim), "--causal", str(a.causal), "--batch", "1",
           "--threads", str(threads), "--reps", str(a.reps), "--min-time", str(a.min_time),
           "--out", out]
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit("check_torch: %s failed:\n%s" % (" ".join(cmd), run.stderr.strip()))
    csv_text = subprocess.run([a.bench, "export", out, "--format", "csv"], check=True,
                              capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    return float(rows[-1]["gflops_per_s"])


def sdpa_gflops(torch, a, threads, qkv):
    """SDPA's median GFLOP/s: warm-up, then repetitions until both --reps and --min-time"""
    torch.set_num_threads(threads)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q, k, v = qkv
    with torch.no_grad():
        for _ in range(2):
            sdpa(q, k, v, is_causal=bool(a.causal))
        times, start = [], time.perf_counter()
        while len(times) < a.reps or time.perf_counter() - start < a.min_time:
            t0 = time.perf_counter()
            sdpa(q, k, v, is_causal=bool(a.causal))
            times.append(time.perf_counter() - t0)
    flops = 4.0 * a.head_dim * scores(a) * a.heads
    return flops / statistics.median(times) / 1e9


def main():
    a = parse_args()
    try:
        import torch
    except ImportError:
        sys.stderr.write("check_torch: this python3 (%s) has no torch: run it with the python3 "
                         "that holds PyTorch 2.x\n" % sys.executable)
        return 2
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        sys.stderr.write("check_torch: torch %s has no scaled_dot_product_attention (2.0 and "
                         "later)\n" % torch.__version__)
        return 2
    if not os.access(a.bench, os.X_OK):
        sys.stderr.write("check_torch: no bench executable at %s: build first (meson setup "
                         "build -Dtests=false && ninja -C build) or pass --bench\n" % a.bench)
        return 2
    torch.manual_seed(1)
    shape = (1, a.heads, a.n, a.head_dim)
    qkv = [torch.randn(shape, dtype=torch.float32) for _ in range(3)]
    print("== full vs torch %s SDPA (CPU, float32), n=%d H=%d D=%d causal=%d, %d rounds"
          % (torch.__version__, a.n, a.heads, a.head_dim, a.causal, a.rounds))
    ratios = {t: [] for t in a.threads}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "full.h5")
        for r in range(a.rounds):
            for t in a.threads:
                if r % 2 == 0:
                    full = bench_gflops(a, t, out)
                    torch_rate = sdpa_gflops(torch, a, t, qkv)
                else:
                    torch_rate = sdpa_gflops(torch, a, t, qkv)
                    full = bench_gflops(a, t, out)
                ratios[t].append(full / torch_rate)
                print("  round %d  threads %3d  full %8.1f GFLOP/s  sdpa %8.1f GFLOP/s  "
                      "ratio %.2f" % (r + 1, t, full, torch_rate, full / torch_rate), flush=True)
    ok = True
    for t in a.threads:
        m = statistics.median(ratios[t])
        ok &= m >= 1.0
        print("  full / SDPA, %3d threads (median of %d rounds) %6.2f  (target >= 1): %s"
              % (t, len(ratios[t]), m, "PASS" if m >= 1.0 else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
