#!/usr/bin/python3
"""perf.py — the performance checks of attnbench: one driver, one table of targets.

Every target lives in TARGETS below (name, what, threshold, how it is measured); each check
measures with the bench binary (`bench sweep` or `bench run` into a temporary results file),
reads the results back from the HDF5 file by column name (h5py, numpy) and prints one line per
target: PASS or FAIL, the value measured and the threshold read from TARGETS. Targets without a
threshold ("info") print what was measured. A summary closes the output.

Performance is checked here, on an otherwise idle machine, never by timed unit tests: a verdict
measured on a busy machine says little. Run it with Debian's python (/usr/bin/python3, which has
numpy and h5py once ./bench test has run); docs/performance.md is the manual.

usage: tools/perf.py list [--markdown | --check FILE]
       tools/perf.py check GROUP [GROUP ...] [--bench PATH] [--rounds N] [--parts A,C]
                               [--out DIR] [--n N] [--ranks 1,2,4] [--quick]
Exit status: 0 when every target checked passed; 1 when one failed, or a measurement could not
be made (a bench command failed, no bench executable, no mpirun for ring); 2 on bad usage or
when this python lacks numpy and h5py.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MiB = 1 << 20
GiB = 1 << 30
SPARSE_KINDS = "window,dilated,global,random,strided,fixed,bigbird"


# --------------------------------------------------------------------------------------------
# The targets: every threshold a check applies is read from here.


@dataclass(frozen=True)
class Target:
    name: str  # group.what, the name the check's lines print
    run: str  # the command part that measures it: "kernels A" is `check kernels --parts A`
    what: str
    rule: str  # min: value >= goal; max: value < goal; within: |value - goal| <= tol;
    #            range: lo <= value <= hi; same: one value at every n; info: no threshold
    goal: object = None  # a number, (goal, tol) for within, (lo, hi) for range
    unit: str = ""
    how: str = ""

    def passes(self, value):
        if self.rule == "min":
            return value >= self.goal
        if self.rule == "max":
            return value < self.goal
        if self.rule == "within":
            return abs(value - self.goal[0]) <= self.goal[1]
        if self.rule == "range":
            return self.goal[0] <= value <= self.goal[1]
        if self.rule == "same":
            return len(set(value)) == 1
        return True

    def threshold(self, markdown=False):
        ge, pm, to = ("≥", "±", "…") if markdown else (">=", "+-", "..")
        if self.rule == "min":
            return f"{ge} {self.goal:g}{self.unit}"
        if self.rule == "max":
            return f"< {self.goal:g}{self.unit}"
        if self.rule == "within":
            return f"{self.goal[0]:g} {pm} {self.goal[1]:g}{self.unit}"
        if self.rule == "range":
            return f"{self.goal[0]:g} {to} {self.goal[1]:g}{self.unit}"
        if self.rule == "same":
            return "the same at every n"
        return "none: measured and printed"


TARGETS = [
    Target("full.sgemm", "full", "`full` GFLOP/s over the run's OpenBLAS sgemm (2048³, 2 threads)",
           "min", 40, " %",
           "sweep full, n = 4096, B=1 H=8 D=64, not causal, 2 threads, --reps 10 --min-time 2; "
           "sgemm measured at the start of the same run"),
    Target("full.workspace", "full", "`full` workspace at n = 65536", "max", 64, " MiB",
           "run full, n = 65536, H=1 (the workspace does not depend on H), D=64, 2 threads, "
           "one repetition"),
    Target("kernels.peak", "kernels A", "`full` prefill, avx512 set, over the avx512 FMA peak",
           "min", 60, " %",
           "sweep full, n = 4096, H=8 D=64, 2 threads, --isa avx2,avx512 --causal 0,1, "
           "--reps 10 --min-time 1; the peak measured in the same run; median over rounds"),
    Target("kernels.avx512", "kernels A", "`full` prefill, avx512 set over avx2 set", "min", 1.5,
           "x", "the same sweep; the two sets' FMA peaks are printed beside it (a core that "
           "splits 512-bit FMAs, Zen 4, peaks alike on both)"),
    Target("kernels.causal", "kernels A", "`full` causal over non-causal, per allowed score",
           "min", 90, " %", "the same sweep, avx512 set"),
    Target("kernels.sparse", "kernels B",
           "window, dilated, global, random, strided, fixed, bigbird over `full`, per computed "
           "score, n = 8192, causal", "min", 70, " %",
           "sweep of the 7 kinds and full, H=8 D=64, 2 threads, --reps 5; median over rounds "
           "of each round's ratio"),
    Target("kernels.strided", "kernels B",
           "`strided` over `full` per computed score, n = 1024, 2048, 4096, causal", "min", 50,
           " %", "sweep strided and full, H=8 D=64, 2 threads, --reps 10 --min-time 0.5; "
           "median over rounds"),
    Target("decode.bandwidth", "kernels C",
           "MHA decode step (`full`, f32): KV bytes read per second over the run's read "
           "bandwidth", "min", 85, " %",
           "sweep --mode decode full, gqa, mqa, --dtype f32,f16,bf16, one query against n = 65536 "
           "keys, H=32 D=128, 2 threads, --reps 10 --min-time 0.5; median over rounds"),
    Target("decode.bf16", "kernels C", "MHA decode step, bf16 K/V over f32: speed-up", "min",
           1.8, "x", "the same sweep"),
    Target("decode.f16", "kernels C", "MHA decode step, f16 K/V over f32: speed-up", "min",
           1.8, "x", "the same sweep"),
    Target("decode.bandwidth16", "kernels C",
           "MHA decode step, bf16 and f16 K/V (each): KV bytes read per second over the run's "
           "read bandwidth", "min", 90, " %", "the same sweep"),
    Target("decode.gqa", "kernels C", "`gqa` (8 KV heads) decode step over MHA, f32: speed-up",
           "min", 3.5, "x", "the same sweep"),
    Target("decode.mqa", "kernels C", "`mqa` decode step over MHA, f32: speed-up", "min", 10,
           "x", "the same sweep"),
    Target("kernels.backward", "kernels D",
           "the 7 sparse kinds' backward over `full`'s backward, per computed score, n = 8192, "
           "causal", "min", 50, " %",
           "sweep --pass backward (flops: 2.5 × forward), H=8 D=64, 2 threads, --reps 5; "
           "median over rounds"),
    Target("sparse.ratio", "sparse",
           "window (w=256), strided over `full`, per allowed score, n = 16384, causal 0 and 1",
           "min", 50, " %", "sweep of the three, H=8 D=64, 2 threads, --reps 2 --min-time 1; "
           "median over rounds of each round's ratio"),
    Target("sparse.million", "sparse", "`window` (w=256) at n = 1,048,576: peak RSS", "max", 2,
           " GiB", "run window, H=1 D=64, 2 threads, one forward"),
    Target("sparse.exponent-1", "sparse",
           "time exponent over n = 1K…64K: window, global, random (draw=block)", "within",
           (1, 0.15), "", "sweep, H=1 D=64, not causal, 1 thread (a busy machine then stalls "
           "no barrier), --reps 3; least squares of log median time on log n"),
    Target("sparse.exponent-1.5", "sparse", "time exponent over n = 1K…64K: strided, fixed",
           "within", (1.5, 0.15), "", "the same sweep"),
    Target("sparse.exponent-2", "sparse", "time exponent over n = 1K…64K: full", "within",
           (2, 0.15), "", "the same sweep (--reps 2); random draw=token printed beside, "
           "without a threshold"),
    Target("linear.exponent", "linear",
           "`linear` (elu) time exponent over n = 1K…256K (9 points), causal 0 and 1",
           "within", (1, 0.1), "",
           "sweep, H=8 D=64, 2 threads, --reps 5 --min-time 0.2; least squares of log median "
           "time on log n (about 2.5 GiB at 256K)"),
    Target("linear.vs-full", "linear", "`full` time over `linear` time at n = 65536, not causal",
           "min", 20, "x", "full in the same results file, one repetition, no warm-up"),
    Target("map.exponent-1", "map",
           "time exponent over n = 1K…64K: linformer (k=256), nystrom (64 landmarks)", "range",
           (0.9, 1.1), "", "sweep, B=1 H=8 D=64, 2 threads, not causal, --reps 5 "
           "--min-time 0.2; least squares of log median time on log n"),
    Target("map.exponent-reformer", "map", "reformer time exponent (n log n) over n = 1K…64K",
           "range", (0.9, 1.15), "", "the same sweep"),
    Target("map.exponent-2", "map", "time exponent over n = 1K…8K: additive, bilinear", "range",
           (1.9, 2.1), "", "sweep with full, --reps 3 --min-time 0.2"),
    Target("map.sgemm", "map", "linformer, nystrom GFLOP/s over the run's sgemm, n = 8192",
           "min", 50, " %", "the first sweep's points and the sgemm of that run"),
    Target("map.additive", "map", "additive over full at n = 4096: time and counted-flop "
           "ratios", "info", how="the second sweep"),
    Target("map.error-cost", "map",
           "error against cost at n = 4096 on local and tied: linformer k, nystrom landmarks, "
           "reformer hashes", "info",
           how="sweep with --set k=16…512, landmarks=8…256, hashes=1…8, --reps 3; rel_err "
           "against exact attention, median time; bench plot's error_vs_cost figures"),
    Target("mods.cost", "mods",
           "time of full and window (w=256) with alibi=1, softcap=30 and both over none; "
           "self_rel_err", "info",
           how="sweep n = 4096, H=8 D=64, causal 0,1, 2 threads, --reps 3; 4 rounds of all 16 "
           "points interleaved, median over rounds of each round's ratio"),
    Target("ring.speedup", "ring",
           "ring on 2 ranks × 1 thread against full on 1 rank × 1 thread at n = N, causal: "
           "times, overlap", "info",
           how="run under mpirun --oversubscribe, H=8 D=64, --reps 3 --min-time 1; on one "
           "machine the messages go through shared memory (loopback)"),
    Target("ring.scaling", "ring",
           "ring's parallel efficiency, strong (n = N) and weak (n = N0·R) over ranks R",
           "info", how="efficiency = ring GFLOP/s / (R × full's GFLOP/s on 1 rank × 1 thread); "
           "table, strong.dat, weak.dat, scaling.png, ring.h5 in the output folder"),
    Target("training.backward", "training A",
           "`full` backward over forward GFLOP/s, n = 4096, not causal", "min", 60, " %",
           "sweep --pass forward,backward, H=8 D=64, 2 threads, --reps 5; median over rounds"),
    Target("training.workspace", "training A", "`full` backward workspace over n = 1K…16K",
           "same", how="sweep --pass backward, one repetition each"),
    Target("training.linear", "training C",
           "`linear` causal train time exponent over n = 4K…64K", "within", (1, 0.1), "",
           "sweep --pass train, H=8 D=64, 2 threads, --reps 5; least squares on log-log"),
    Target("training.memory", "training D",
           "training step memory of `full` against `materialize=1`, n = 16384, not causal: "
           "saved + workspace, peak RSS added, time", "info",
           how="sweep --pass train --reps 2 (the baseline keeps the T × S scores: ~4 GiB)"),
]
TARGET = {t.name: t for t in TARGETS}


def target_table(markdown):
    if not markdown:
        rows = [(t.name, t.run, t.threshold(), t.what) for t in TARGETS]
        w = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join(f"{a:{w[0]}}  {b:{w[1]}}  {c:{w[2]}}  {d}" for a, b, c, d in rows)
    lines = ["| target | `perf.py check` | threshold | what | how measured |",
             "|---|---|---|---|---|"]
    for t in TARGETS:
        run = t.run.split()
        cmd = run[0] + (f" --parts {run[1]}" if len(run) > 1 else "")
        lines.append(f"| `{t.name}` | `{cmd}` | {t.threshold(markdown=True)} | {t.what} | "
                     f"{t.how} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Shared helpers: running bench, reading results, verdicts.


class MeasureError(Exception):
    """a bench command failed or a results file holds a failed point"""


def need_numpy():
    """numpy and h5py, imported once; exits 2 with what to do when this python lacks them"""
    global np, h5py
    try:
        import h5py
        import numpy as np
    except ImportError:
        sys.exit(f"perf.py: its verdicts need numpy and h5py, which {sys.executable} lacks: run "
                 "it as /usr/bin/python3 tools/perf.py (Debian's python3-h5py: ./bench test "
                 "installs it, or apt-get install -y python3-h5py)")


class Bench:
    """the bench binary and the temporary folder of one check's results files"""

    def __init__(self, path, tmp, env=None):
        self.path, self.tmp, self.env = path, tmp, env

    def file(self, name):
        return os.path.join(self.tmp, name)

    def __call__(self, *args, show=False, skip_header=False, prefix=()):
        """run bench with args (prefix: a launcher such as mpirun before it); stdout printed
        when show (without its first line when skip_header); MeasureError on failure"""
        argv = list(prefix) + [self.path] + [str(a) for a in args]
        env = dict(os.environ, **self.env) if self.env else None
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env)
        if done.returncode != 0:
            tail = (done.stderr.strip() or done.stdout.strip())[-2000:]
            raise MeasureError(f"{' '.join(argv)} exited {done.returncode}:\n{tail}")
        if show:
            lines = done.stdout.splitlines()
            print("\n".join(lines[1:] if skip_header else lines))

    def rounds(self, rounds, *args):
        """`bench sweep ARGS` ROUNDS times, each a run appended to the same file"""
        for _ in range(rounds):
            self("sweep", *args)


def read_table(path, table):
    with h5py.File(path, "r") as f:
        return f[table][:]


def points(path, refuse_failed=True):
    """the /points table of a results file; MeasureError naming every failed point unless
    refuse_failed is false"""
    pts = read_table(path, "points")
    bad = pts[pts["status"] != b"ok"]
    if refuse_failed and len(bad):
        raise MeasureError(f"{path}: points failed: " + "; ".join(
            f"{b['kind'].decode()}: {b['message'].decode()}" for b in bad))
    return pts


def text(pts, col):
    """column col as str (decoded when it holds bytes)"""
    return np.char.decode(pts[col]) if pts[col].dtype.kind == "S" else pts[col]


def by_round(pts, mask):
    """the points of mask in the order of their runs (one per round)"""
    sel = pts[mask]
    return sel[np.argsort(sel["run_id"], kind="stable")]


def exponent(n, t):
    """k of t ~ n^k: least squares of log t on log n"""
    return float(np.polyfit(np.log(np.asarray(n, dtype=float)), np.log(t), 1)[0])


class Verdicts:
    """PASS/FAIL lines, each against its target in TARGETS, and their tally per group"""

    def __init__(self):
        self.tally = {}  # group -> [passed, failed, errors]
        self.group = None

    def start(self, group):
        self.group = group
        self.tally.setdefault(group, [0, 0, 0])

    def check(self, name, value, label, shown=None, also=True):
        """one verdict: value against target name (also: a further condition, false fails)"""
        t = TARGET[name]
        passed = bool(t.passes(value) and also)
        if shown is None:
            shown = f"{value:.2f}{t.unit}"
        print(f"  {'PASS' if passed else 'FAIL'}  {label}: {shown}  "
              f"(target {t.threshold()}; {name})")
        self.tally[self.group][0 if passed else 1] += 1
        return passed

    def missing(self, name, label):
        print(f"  FAIL  {label}: a point is missing  ({name})")
        self.tally[self.group][1] += 1

    def error(self, what):
        print(f"  ERROR {what}")
        self.tally[self.group][2] += 1

    def summary(self):
        print("\n== summary")
        failed = 0
        for group, (p, f, e) in self.tally.items():
            state = "ok" if not f and not e else "FAILED"
            print(f"  {group:9s} {p} passed, {f} failed" +
                  (f", {e} measurement(s) failed" if e else "") + f": {state}")
            failed += f + e
        print("perf: every target checked passed" if not failed else
              f"perf: {failed} failure(s)")
        return 0 if not failed else 1


V = Verdicts()


# --------------------------------------------------------------------------------------------
# The checks. Each takes the Bench, the options, and prints its verdicts through V.


def check_full(b, o):
    common = ["--dataset", "gaussian", "--head-dim", 64, "--threads", 2]
    print("== full vs sgemm, n=4096, H=8, D=64, 2 threads (same run)")
    b("sweep", "--kinds", "full", "--n", 4096, "--causal", 0, "--heads", 8, "--batch", 1,
      "--reps", 10, "--min-time", 2, *common, "--out", b.file("full.h5"), show=True)
    print("== full workspace at n=65536 (H=1, D=64, 2 threads, one repetition)")
    b("run", "full", "--n", 65536, "--heads", 1, "--reps", 1, "--warmup", 0, "--min-time", 0,
      *common, "--out", b.file("big.h5"), show=True)
    sgemm = float(read_table(b.file("full.h5"), "runs")["sgemm_gflops"][-1])
    pts = points(b.file("full.h5"))
    full = float(pts[pts["kind"] == b"full"]["gflops_per_s"][-1])
    V.check("full.sgemm", 100 * full / sgemm, "full / sgemm",
            f"{full:.1f} / {sgemm:.1f} GFLOP/s = {100 * full / sgemm:.0f} %")
    big = points(b.file("big.h5"))
    ws = float(big[big["kind"] == b"full"]["workspace_bytes"][-1]) / MiB
    V.check("full.workspace", ws, "workspace at n=65536", f"{ws:.1f} MiB")


def kernels_A(pts):
    isa, causal = text(pts, "isa"), pts["causal"]
    a512 = by_round(pts, (isa == "avx512") & (causal == 0))
    a2 = by_round(pts, (isa == "avx2") & (causal == 0))
    c512 = by_round(pts, (isa == "avx512") & (causal == 1))
    n = min(len(a512), len(a2), len(c512))
    print("  round  avx2 GF/s  avx512 GF/s  causal GF/s  avx2 peak  avx512 peak  %peak")
    for r in range(n):
        print("  %5d %10.1f %12.1f %12.1f %10.1f %12.1f %6.1f" % (
            r + 1, a2[r]["gflops_per_s"], a512[r]["gflops_per_s"], c512[r]["gflops_per_s"],
            a2[r]["peak_gflops"], a512[r]["peak_gflops"], a512[r]["pct_peak"]))
    V.check("kernels.peak", float(np.median(a512["pct_peak"][:n])),
            "full avx512 / avx512 FMA peak")
    V.check("kernels.avx512",
            float(np.median(a512["gflops_per_s"][:n] / a2["gflops_per_s"][:n])),
            "full avx512 / avx2")
    print("  info  avx512 FMA peak / avx2 FMA peak: %.2fx  (no target: what the CPU allows)" %
          float(np.median(a512["peak_gflops"][:n] / a2["peak_gflops"][:n])))
    V.check("kernels.causal",
            100 * float(np.median(c512["gflops_per_s"][:n] / a512["gflops_per_s"][:n])),
            "full causal / non-causal per allowed score (avx512)")


def kernels_per_score(pts, backward):
    """B and D: each kind over full per computed score, at every n of the file"""
    kind, ns = text(pts, "kind"), pts["kv_len"]
    for n in sorted(set(ns)):
        full = by_round(pts, (kind == "full") & (ns == n))["gflops_per_s"]
        for k in dict.fromkeys(kind[ns == n]):
            if k == "full":
                continue
            g = by_round(pts, (kind == k) & (ns == n))["gflops_per_s"]
            m = min(len(g), len(full))
            name = ("kernels.backward" if backward else
                    "kernels.sparse" if n == 8192 else "kernels.strided")
            V.check(name, 100 * float(np.median(g[:m] / full[:m])),
                    "%s / full per score, n = %d (full %.0f GFLOP/s)" % (k, n, np.median(full)))


def kernels_C(pts):
    kind, dtype = text(pts, "kind"), text(pts, "dtype")
    t = lambda k, d: by_round(pts, (kind == k) & (dtype == d))["time_median_s"]
    full32, bf16, f16 = t("full", "f32"), t("full", "bf16"), t("full", "f16")
    gqa, mqa = t("gqa", "f32"), t("mqa", "f32")
    m = min(len(full32), len(bf16), len(f16), len(gqa), len(mqa))
    mha = {d: by_round(pts, (kind == "full") & (dtype == d))[:m] for d in ("f32", "bf16", "f16")}
    rate = {d: p["kv_bytes"] / p["time_median_s"] / 1e9 for d, p in mha.items()}
    print("  round  MHA f32 ms  bf16 ms  f16 ms  gqa ms  mqa ms  KV GB/s f32 bf16 f16  read GB/s")
    for r in range(m):
        print("  %5d %11.2f %8.2f %7.2f %7.2f %7.2f %12.1f %4.1f %4.1f %10.1f" % (
            r + 1, 1e3 * full32[r], 1e3 * bf16[r], 1e3 * f16[r], 1e3 * gqa[r], 1e3 * mqa[r],
            rate["f32"][r], rate["bf16"][r], rate["f16"][r], mha["f32"][r]["bandwidth_gbs"]))
    frac = lambda d: 100 * float(np.median(rate[d] / mha[d]["bandwidth_gbs"]))
    V.check("decode.bandwidth", frac("f32"), "MHA f32 KV read rate / read bandwidth")
    V.check("decode.bf16", float(np.median(full32[:m] / bf16[:m])),
            "MHA bf16 KV speed-up over f32")
    V.check("decode.f16", float(np.median(full32[:m] / f16[:m])), "MHA f16 KV speed-up over f32")
    for d in ("bf16", "f16"):
        V.check("decode.bandwidth16", frac(d), "MHA %s KV read rate / read bandwidth" % d)
    V.check("decode.gqa", float(np.median(full32[:m] / gqa[:m])),
            "gqa (8 KV heads) speed-up over MHA")
    V.check("decode.mqa", float(np.median(full32[:m] / mqa[:m])), "mqa speed-up over MHA")


def check_kernels(b, o):
    """A full prefill; B sparse forward; C decode; D sparse backward. Each ratio is taken within
    one run (the compared points measured one right after the other: --isa, --causal and --dtype
    turn inside the sweep), the run repeated --rounds times; a verdict is the median over rounds,
    so one disturbed round does not decide. Needs the avx512 set, ~2.5 GiB."""
    r = o.rounds or 3
    common = ["--dataset", "gaussian", "--batch", 1, "--threads", 2, "--quiet"]
    shape = ["--heads", 8, "--head-dim", 64]
    for part in o.parts or "ABCD":
        try:
            if part == "A":
                print(f"== kernels A: full prefill n=4096 H=8 D=64, 2 threads, --isa avx2,avx512,"
                      f" causal 0,1 ({r} rounds)")
                b.rounds(r, "--kinds", "full", "--n", 4096, *shape, "--isa", "avx2,avx512",
                         "--causal", "0,1", "--reps", 10, "--min-time", 1, *common, "--out",
                         b.file("a.h5"))
                kernels_A(points(b.file("a.h5")))
            elif part == "B":
                print(f"== kernels B: sparse kinds vs full, causal, H=8 D=64, 2 threads "
                      f"({r} rounds)")
                b.rounds(r, "--kinds", "full," + SPARSE_KINDS, "--n", 8192, "--causal", 1, *shape,
                         "--reps", 5, *common, "--out", b.file("b.h5"))
                kernels_per_score(points(b.file("b.h5")), backward=False)
                b.rounds(r, "--kinds", "full,strided", "--n", "1024,2048,4096", "--causal", 1,
                         *shape, "--reps", 10, "--min-time", 0.5, *common, "--out",
                         b.file("b2.h5"))
                kernels_per_score(points(b.file("b2.h5")), backward=False)
            elif part == "C":
                print(f"== kernels C: decode, n=65536 H=32 D=128, 2 threads, f32, f16 and bf16 "
                      f"({r} rounds)")
                b.rounds(r, "--mode", "decode", "--kinds", "full,gqa,mqa", "--n", 65536, "--heads",
                         32, "--head-dim", 128, "--dtype", "f32,f16,bf16", "--reps", 10,
                         "--min-time", 0.5, "--max-point-time", 0, *common, "--out",
                         b.file("c.h5"))
                kernels_C(points(b.file("c.h5")))
            elif part == "D":
                print(f"== kernels D: sparse kinds' backward vs full's, causal, n=8192 H=8 D=64, "
                      f"2 threads ({r} rounds)")
                b.rounds(r, "--kinds", "full," + SPARSE_KINDS, "--pass", "backward", "--n", 8192,
                         "--causal", 1, *shape, "--reps", 5, *common, "--out", b.file("d.h5"))
                kernels_per_score(points(b.file("d.h5")), backward=True)
        except MeasureError as e:
            V.error(f"kernels {part}: {e}")


def check_sparse(b, o):
    r = o.rounds or 3
    quiet = ["--accuracy-rows", 8, "--quiet"]
    print(f"== sparse 1: window, strided vs full, n=16384, H=8, D=64, 2 threads ({r} rounds)")
    b.rounds(r, "--kinds", "full,window,strided", "--dataset", "gaussian", "--set", "window=256",
             "--n", 16384, "--heads", 8, "--head-dim", 64, "--causal", "0,1", "--threads", 2,
             "--reps", 2, "--warmup", 0, "--min-time", 1, *quiet, "--out", b.file("ratio.h5"))
    print("== sparse 2: window w=256 at n=1048576, H=1, D=64, 2 threads, one forward")
    b("run", "window", "window=256", "--n", 1048576, "--heads", 1, "--head-dim", 64, "--threads",
      2, "--reps", 1, "--warmup", 0, "--min-time", 0, "--accuracy-rows", 8, "--out",
      b.file("big.h5"))
    print("== sparse 3: time over n = 1K..64K, H=1, D=64, not causal, 1 thread")
    over_n = ["--dataset", "gaussian", "--n", "1K:64K:x2", "--heads", 1, "--head-dim", 64,
              "--causal", 0, "--threads", 1, "--warmup", 0, "--min-time", 0.2, *quiet]
    b("sweep", "--kinds", "window,global,random,strided,fixed", *over_n, "--reps", 3, "--out",
      b.file("exp.h5"))
    b("sweep", "--kinds", "random", "--set", "draw=token", *over_n, "--reps", 3, "--out",
      b.file("token.h5"))
    b("sweep", "--kinds", "full", *over_n, "--reps", 2, "--out", b.file("exp.h5"))

    p = points(b.file("ratio.h5"))
    for causal in (0, 1):
        q = p[p["causal"] == causal]
        full = q[q["kind"] == b"full"]
        for kind in (b"window", b"strided"):
            k = q[q["kind"] == kind]
            ratio = float(np.median(k["gflops_per_s"] / full["gflops_per_s"]))  # a row a round
            rounds = ", ".join(f"{a:.0f}/{f:.0f}" for a, f in zip(k["gflops_per_s"],
                                                                  full["gflops_per_s"]))
            V.check("sparse.ratio", 100 * ratio,
                    f"{kind.decode()} causal={causal} ({k['params'][0].decode()}) / full",
                    f"{100 * ratio:.0f} % of full's GFLOP/s (median of rounds {rounds})")
    big = points(b.file("big.h5"))[0]
    rss = big["peak_rss_bytes"] / GiB
    V.check("sparse.million", rss, "window n=1048576: peak RSS",
            f"{rss:.2f} GiB, {big['time_median_s']:.1f} s, workspace "
            f"{big['workspace_bytes'] / 1024:.0f} KiB")

    def slope(pts):
        k = np.sort(pts, order="q_len")
        times = " ".join(f"{t * 1e3:.3g}" for t in k["time_median_s"])
        return exponent(k["q_len"], k["time_median_s"]), times

    p = points(b.file("exp.h5"))
    for kind, name in (("window", "1"), ("global", "1"), ("random", "1"), ("strided", "1.5"),
                       ("fixed", "1.5"), ("full", "2")):
        a, times = slope(p[p["kind"] == kind.encode()])
        V.check("sparse.exponent-" + name, a, f"{kind}: time ~ n^k",
                f"k = {a:.2f} (ms at n=1K..64K: {times})")
    a, times = slope(points(b.file("token.h5")))  # per-token draws reuse no key: information
    print(f"  info  random draw=token: time ~ n^{a:.2f} (no target; ms at n=1K..64K: {times})")


def check_linear(b, o):
    common = ["--dataset", "gaussian", "--heads", 8, "--head-dim", 64, "--batch", 1, "--threads",
              2, "--accuracy-rows", 16, "--out", b.file("linear.h5")]
    print("== linear (elu) over n = 1K..256K, causal 0 and 1, H=8, D=64, 2 threads")
    b("sweep", "--kinds", "linear", "--set", "map=elu", "--n", "1K:256K:x2", "--causal", "0,1",
      "--reps", 5, "--min-time", 0.2, *common, show=True)
    print("== full at n = 65536, H=8, D=64, not causal (one repetition, ~80 s)")
    b("sweep", "--kinds", "full", "--n", 65536, "--causal", 0, "--reps", 1, "--warmup", 0,
      "--min-time", 0, *common, show=True)

    pts = points(b.file("linear.h5"), refuse_failed=False)
    kind, ok = text(pts, "kind"), pts["status"] == b"ok"
    lin = ok & (kind == "linear")
    for causal in (0, 1):
        sel = lin & (pts["causal"] == causal)
        n, t, tmin = pts["kv_len"][sel], pts["time_median_s"][sel], pts["time_min_s"][sel]
        if sel.sum() < 2:
            V.missing("linear.exponent", f"linear causal={causal}")
            continue
        a = exponent(n, t)
        V.check("linear.exponent", a, f"linear causal={causal}: time ~ n^k",
                f"k = {a:.3f} over n = {int(n.min())}..{int(n.max())} ({sel.sum()} points)",
                also=sel.sum() == 9)
        print(f"        (fit on the minimum times: n^{exponent(n, tmin):.3f}; medians that are "
              f"multiples of 4 ms, or far from the minimum, mean a busy machine: rerun it alone)")
        for ni, ti, tm in zip(n, t, tmin):
            print(f"        n={int(ni):7d}  median {1e3 * ti:10.2f} ms   min {1e3 * tm:10.2f} ms")
    at = lambda k: pts["time_median_s"][ok & (kind == k) & (pts["causal"] == 0) &
                                        (pts["kv_len"] == 65536)]
    full, linear = at("full"), at("linear")
    if len(full) == 1 and len(linear) == 1:
        r = full[0] / linear[0]
        V.check("linear.vs-full", r, "n=65536 not causal: full / linear",
                f"{full[0]:.2f} s / {1e3 * linear[0]:.1f} ms = {r:.0f}x")
    else:
        V.missing("linear.vs-full", "n=65536 not causal: full / linear")


def check_map(b, o):
    h5 = b.file("map.h5")
    out_dir = o.out_for("map") or b.file("plots")
    common = ["--heads", 8, "--head-dim", 64, "--batch", 1, "--threads", 2, "--causal", 0,
              "--accuracy-rows", 16, "--quiet", "--out", h5]
    print("== map 1: time vs n: linformer, nystrom, reformer (n = 1K..64K); additive, bilinear "
          "(1K..8K)")
    b("sweep", "--kinds", "linformer,nystrom,reformer", "--n", "1K:64K:x2", "--dataset",
      "gaussian", "--reps", 5, "--min-time", 0.2, *common)
    b("sweep", "--kinds", "additive,bilinear,full", "--n", "1K:8K:x2", "--dataset", "gaussian",
      "--reps", 3, "--min-time", 0.2, *common)
    print("== map 4: error vs cost at n = 4096 on local and tied")
    b("sweep", "--kinds", "linformer,nystrom,reformer,full", "--set", "k=16,32,64,128,256,512",
      "--set", "landmarks=8,16,32,64,128,256", "--set", "hashes=1,2,4,8", "--n", 4096,
      "--dataset", "local,tied", "--reps", 3, *common)
    os.makedirs(out_dir, exist_ok=True)
    try:
        b("plot", h5, "--out", out_dir)
    except MeasureError as e:  # the figures are a by-product: the verdicts still stand
        print(f"  (bench plot failed: {e})")

    pts, runs = points(h5, refuse_failed=False), read_table(h5, "runs")
    kind, params, dataset = text(pts, "kind"), text(pts, "params"), text(pts, "dataset")
    ok = pts["status"] == b"ok"
    n, t = pts["kv_len"].astype(float), pts["time_median_s"]
    sgemm = dict(zip(runs["run_id"], runs["sgemm_gflops"]))
    first, second, third = runs["run_id"][0], runs["run_id"][1], runs["run_id"][2]

    def series(k, run):
        sel = ok & (kind == k) & (pts["run_id"] == run) & (dataset == "gaussian")
        order = np.argsort(n[sel])
        return n[sel][order], t[sel][order], pts["gflops_per_s"][sel][order]

    print("\n  1. time exponents (least squares on log median time; B=1 H=8 D=64, 2 threads, "
          "not causal)")
    for k, name in (("linformer", "map.exponent-1"), ("nystrom", "map.exponent-1"),
                    ("reformer", "map.exponent-reformer"), ("additive", "map.exponent-2"),
                    ("bilinear", "map.exponent-2")):
        nn, tt, _ = series(k, first if k in ("linformer", "nystrom", "reformer") else second)
        if len(nn) < 2:
            V.missing(name, f"{k}: time ~ n^k")
            continue
        a = exponent(nn, tt)
        times = "  ".join(f"{int(x) // 1024}K:{1e3 * y:.1f}ms" for x, y in zip(nn, tt))
        V.check(name, a, f"{k}: time ~ n^k", f"k = {a:.3f}   {times}")

    print("\n  2. GFLOP/s at n = 8192 against the run's sgemm")
    for k in ("linformer", "nystrom"):
        nn, _, g = series(k, first)
        at = g[nn == 8192]
        if len(at) != 1:
            V.missing("map.sgemm", f"{k} at n = 8192")
            continue
        r = at[0] / sgemm[first]
        V.check("map.sgemm", 100 * r, f"{k} / sgemm",
                f"{at[0]:.1f} GFLOP/s = {100 * r:.0f} % of sgemm {sgemm[first]:.1f}")

    print("\n  3. additive against full at n = 4096 (map.additive)")
    sel = lambda k: ok & (kind == k) & (pts["run_id"] == second) & (n == 4096)
    a, fu = sel("additive"), sel("full")
    if a.sum() == 1 and fu.sum() == 1:
        tr = t[a][0] / t[fu][0]
        fr = pts["flops"][a][0] / pts["flops"][fu][0]
        print(f"  info  additive {1e3 * t[a][0]:.1f} ms / full {1e3 * t[fu][0]:.1f} ms = "
              f"{tr:.2f}x time; counted flops {fr:.2f}x; GFLOP/s "
              f"{pts['gflops_per_s'][a][0]:.1f} vs {pts['gflops_per_s'][fu][0]:.1f}")
    else:
        V.missing("map.additive", "additive and full at n = 4096")

    print("\n  4. error vs cost at n = 4096 (rel_err against exact attention; median ms; "
          "map.error-cost)")
    late = pts["run_id"] == third
    for ds in ("local", "tied"):
        fsel = ok & late & (kind == "full") & (dataset == ds)
        ft = t[fsel][0] if fsel.sum() else float("nan")
        print(f"     {ds}: full {1e3 * ft:.1f} ms")
        for k, p in (("linformer", "k"), ("nystrom", "landmarks"), ("reformer", "hashes")):
            rows = []
            for i in np.flatnonzero(ok & late & (kind == k) & (dataset == ds)):
                v = dict(x.split("=") for x in params[i].split(","))[p]
                rows.append((int(v), pts["rel_err"][i], 1e3 * t[i]))
            rows.sort()
            print(f"       {k:9s} " + "  ".join(f"{p}={v}: {e:.3f} @ {ms:.1f}ms"
                                                for v, e, ms in rows))
    print(f"\n  figures of the last run: {out_dir} (error_vs_cost ...)"
          + ("" if o.out_for("map") else ": removed at exit; --out DIR keeps them"))


def check_mods(b, o):
    r = o.rounds or 4
    print(f"== mods: full, window (w=256): none, alibi=1, softcap=30, both; n=4096, H=8, D=64, "
          f"2 threads ({r} rounds)")
    b.rounds(r, "--kinds", "full,window", "--set", "alibi=0,1", "--set", "softcap=0,30",
             "--dataset", "gaussian", "--n", 4096, "--heads", 8, "--head-dim", 64, "--causal",
             "0,1", "--threads", 2, "--reps", 3, "--warmup", 1, "--min-time", 0,
             "--accuracy-rows", 8, "--quiet", "--out", b.file("mods.h5"))
    p = points(b.file("mods.h5"))

    def setting(params):
        kv = dict(x.split("=") for x in params.decode().split(","))
        on = [m for m in ("alibi", "softcap") if float(kv[m]) != 0]
        return ",".join(f"{m}={kv[m]}" for m in on) or "none"

    names = np.array([setting(x) for x in p["params"]])
    print(f"\n  {'kind':8} {'causal':>6} {'setting':20} {'median ms':>10} {'ratio':>6}  "
          f"{'ratios per round':28} {'self_rel_err':>12}")
    for kind in (b"full", b"window"):
        for causal in (0, 1):
            sel = (p["kind"] == kind) & (p["causal"] == causal)
            base = p[sel & (names == "none")]["time_median_s"]  # one per round, in order
            for s in ("none", "alibi=1", "softcap=30", "alibi=1,softcap=30"):
                k = p[sel & (names == s)]
                ratios = k["time_median_s"] / base
                rounds = " ".join(f"{x:.3f}" for x in ratios)
                print(f"  {kind.decode():8} {causal:>6} {s:20} "
                      f"{np.median(k['time_median_s']) * 1e3:10.2f} {np.median(ratios):6.3f}  "
                      f"{rounds:28} {np.max(k['self_rel_err']):12.2e}")
    print("  info  mods.cost: measured, no target")


def check_training(b, o):
    """A full backward vs forward and its workspace; C linear train exponent; D step memory.
    (The sparse kinds' backward is kernels D.)"""
    r = o.rounds or 3
    common = ["--dataset", "gaussian", "--batch", 1, "--heads", 8, "--head-dim", 64, "--threads",
              2, "--quiet"]
    for part in o.parts or "ACD":
        try:
            if part == "A":
                print(f"== training A: full forward vs backward, n=4096, not causal ({r} rounds); "
                      "workspace by n")
                b.rounds(r, "--kinds", "full", "--n", 4096, "--causal", 0, "--pass",
                         "forward,backward", "--reps", 5, *common, "--out", b.file("a.h5"))
                b("sweep", "--kinds", "full", "--n", "1024:16384:x2", "--causal", 0, "--pass",
                  "backward", "--reps", 1, "--warmup", 0, "--min-time", 0, *common, "--out",
                  b.file("a.h5"))
                pts = points(b.file("a.h5"))
                pas, n = text(pts, "pass"), pts["kv_len"]
                fwd = by_round(pts, (pas == "forward") & (n == 4096))
                bwd = by_round(pts, (pas == "backward") & (n == 4096))
                m = min(len(fwd), len(bwd))
                print("  round  forward GF/s  backward GF/s")
                for i in range(m):
                    print("  %5d %13.1f %14.1f" % (i + 1, fwd[i]["gflops_per_s"],
                                                   bwd[i]["gflops_per_s"]))
                ratio = 100 * float(np.median(bwd["gflops_per_s"][:m] / fwd["gflops_per_s"][:m]))
                V.check("training.backward", ratio, "full backward / forward GFLOP/s, n = 4096")
                ws = by_round(pts, (pas == "backward") & (n != 4096))
                sizes = ", ".join("%d: %.2f" % (p["kv_len"], p["workspace_bytes"] / MiB)
                                  for p in ws)
                V.check("training.workspace", list(ws["workspace_bytes"]),
                        "full backward workspace (MiB) by n", sizes)
            elif part == "C":
                print("== training C: linear causal train, n = 4K ... 64K")
                b("sweep", "--kinds", "linear", "--n", "4096:65536:x2", "--causal", 1, "--pass",
                  "train", "--reps", 5, *common, "--out", b.file("c.h5"))
                pts = points(b.file("c.h5"))
                for a, t in zip(pts["kv_len"], pts["time_median_s"]):
                    print("  n = %6d  train %9.2f ms" % (a, 1e3 * t))
                k = exponent(pts["kv_len"], pts["time_median_s"])
                V.check("training.linear", k, "linear causal train: time ~ n^k", f"k = {k:.3f}")
            elif part == "D":
                print("== training D: training step memory, full vs materialize=1, n=16384, "
                      "not causal")
                b("sweep", "--kinds", "full", "--set", "materialize=0,1", "--n", 16384,
                  "--causal", 0, "--pass", "train", "--reps", 2, "--warmup", 0, *common, "--out",
                  b.file("d.h5"))
                pts = points(b.file("d.h5"))
                mat = np.array([b"materialize=1" in p for p in pts["params"]])
                for label, m in (("full (flash backward)", ~mat), ("full materialize=1", mat)):
                    p = pts[m][0]
                    print("  info  %-24s saved + workspace %10.1f MiB, peak RSS added %10.1f "
                          "MiB, step %7.2f s" % (label, (p["saved_bytes"] + p["workspace_bytes"])
                                                 / MiB, (p["peak_rss_bytes"] - p["base_rss_bytes"])
                                                 / MiB, p["time_median_s"]))
        except MeasureError as e:
            V.error(f"training {part}: {e}")


RING_PLOT = """set terminal pngcairo size 900,380 enhanced font 'sans,10' background '#ffffff'
set output '{out}/scaling.png'
set multiplot layout 1,2
set grid
set key top left
set logscale x 2
set xlabel 'ranks R (1 thread each)'
set ylabel 'GFLOP/s'
set title 'ring, causal, H=8, D=64: throughput'
plot '{out}/strong.dat' u 1:4 w lp t 'strong: n={n}', \\
     '{out}/weak.dat' u 1:4 w lp t 'weak: n={n0}·R'
set ylabel 'parallel efficiency'
set yrange [0:1.2]
set title 'efficiency vs full on 1 rank x 1 thread'
plot '{out}/strong.dat' u 1:5 w lp t 'strong', '{out}/weak.dat' u 1:5 w lp t 'weak', \\
     1 w l dt 2 t 'ideal'
unset multiplot
"""


def check_ring(b, o):
    """ring (MPI) against full and its strong and weak scaling. Ranks beyond the free cores are
    oversubscribed (--oversubscribe): their timings then mean nothing; run it where R cores are
    free. Every point is kept in OUT/ring.h5 (one run per mpirun; ring rows record ranks=R)."""
    if not shutil.which("mpirun"):
        raise MeasureError("no mpirun: BENCH_MPI=1 ./bench info installs Open MPI and builds "
                           "bench with it")
    n = o.n or (1024 if o.quick else 16384)
    ranks = o.ranks
    timing = (["--reps", 1, "--warmup", 0, "--warmup-time", 0, "--min-time", 0] if o.quick
              else ["--reps", 3, "--min-time", 1])
    out = o.out_for("ring") or os.path.join(
        TOP, "results", "ring-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    h5 = os.path.join(out, "ring.h5")
    mpi = ["mpirun", "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    b.env = {"OMP_NUM_THREADS": "1"}
    shape = ["--heads", 8, "--head-dim", 64, "--causal", 1, "--threads", 1, *timing, "--out", h5]
    n0 = n // max(ranks)

    print(f"== ring 1: ring on 2 ranks x 1 thread vs full on 1 rank x 1 thread, n={n}, causal, "
          "H=8, D=64\n   (one machine: messages through shared memory, loopback)")
    b("run", "full", "--n", n, *shape, show=True)
    b("run", "ring", "--n", n, *shape, show=True, prefix=mpi + ["-n", "2"])
    print(f"== ring 2: strong scaling: ring at n={n} on ranks: {' '.join(map(str, ranks))}")
    for r in ranks:
        b("run", "ring", "--n", n, *shape, show=True, skip_header=True,
          prefix=mpi + ["-n", str(r)])
    print(f"== ring 3: weak scaling: ring at n={n0} x R on ranks: {' '.join(map(str, ranks))} "
          f"(and full at n={n0})")
    b("run", "full", "--n", n0, *shape, show=True, skip_header=True)
    for r in ranks:
        b("run", "ring", "--n", n0 * r, *shape, show=True, skip_header=True,
          prefix=mpi + ["-n", str(r)])

    pts = points(h5, refuse_failed=False)
    pts = pts[pts["status"] == b"ok"]
    kind = text(pts, "kind")

    def ranks_of(p):
        m = re.search(r"ranks=(\d+)", p["params"].decode())
        return int(m.group(1)) if m else 1

    def full_at(length):
        return float(pts[(kind == "full") & (pts["q_len"] == length)]["gflops_per_s"][-1])

    print("\n  scaling   R        n   median_s  GFLOP/s  efficiency  compute_s  wait_s  overlap  "
          "imbalance")
    for label, base_n, with_n in (("strong", n, lambda r: n), ("weak", n0, lambda r: n0 * r)):
        serial = full_at(base_n)
        rows = []
        for p in pts[kind == "ring"]:
            r = ranks_of(p)
            if p["q_len"] != with_n(r) or any(x[0] == r for x in rows):
                continue
            rows.append((r, int(p["q_len"]), float(p["time_median_s"]), float(p["gflops_per_s"]),
                         float(p["gflops_per_s"]) / (r * serial), float(p["compute_time_s"]),
                         float(p["comm_time_s"]), float(p["overlap"]),
                         float(p["compute_imbalance"])))
        rows.sort()
        with open(os.path.join(out, f"{label}.dat"), "w") as d:
            d.write("# R n median_s gflops efficiency compute_s wait_s overlap imbalance\n")
            for row in rows:
                d.write(" ".join(str(x) for x in row) + "\n")
                print("  %-7s %3d %8d %10.4f %8.1f %10.2f %10.4f %7.4f %7.1f%% %9.1f%%" %
                      ((label,) + row[:7] + (100 * row[7], 100 * row[8])))
        print(f"  {label:7s} full on 1 rank x 1 thread at n={base_n}: {serial:.1f} GFLOP/s")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot"], input=RING_PLOT.format(out=out, n=n, n0=n0), text=True,
                       check=False)
        print(f"  figure: {out}/scaling.png")
    print(f"  results: {h5} (tables: {out}/strong.dat, {out}/weak.dat)")
    print("  info  ring.speedup, ring.scaling: measured, no target")


# group -> (its check, what it measures: the help's line)
GROUPS = {
    "full": (check_full, "full vs sgemm at n = 4096; its workspace at n = 65536 (~2 min)"),
    "kernels": (check_kernels, "A full vs the FMA peak and avx2, causal; B sparse kinds vs full; "
                "C decode; D sparse backward (--parts, --rounds 3; ~10 min, 2.5 GiB)"),
    "decode": (check_kernels,
               "kernels C alone: decode bandwidth, bf16, f16, gqa, mqa (--rounds 3)"),
    "sparse": (check_sparse, "window, strided vs full; window at n = 1M; exponents (--rounds 3; "
               "~3 min)"),
    "linear": (check_linear, "linear's exponent to 256K; vs full at 64K (~3 min, 2.5 GiB)"),
    "map": (check_map, "linformer, nystrom, reformer, additive, bilinear: exponents, vs sgemm, "
            "error vs cost (--out DIR keeps the figures; ~5 min)"),
    "mods": (check_mods, "cost of alibi, softcap on full and window, no verdict (--rounds 4)"),
    "training": (check_training, "A full backward vs forward, workspace; C linear train "
                 "exponent; D step memory (--parts, --rounds 3; ~3 min, 4 GiB)"),
    "ring": (check_ring, "ring (MPI) vs full; strong and weak scaling (--n, --ranks, --out, "
             "--quick; default bench build/harness/bench)"),
}
ALL = ["full", "kernels", "sparse", "linear", "map", "mods", "training", "ring"]
PARTS = {"kernels": "ABCD", "training": "ACD", "decode": "C"}


def parse(argv):
    groups = "\n".join(f"  {g:9s} {w}" for g, (_, w) in GROUPS.items())
    p = argparse.ArgumentParser(
        prog="tools/perf.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The performance checks of attnbench (docs/performance.md): measure with "
        "bench, print PASS or FAIL per target of one table (tools/perf.py list).",
        epilog="examples:\n  /usr/bin/python3 tools/perf.py list\n"
        "  tools/perf.py check full\n  tools/perf.py check kernels --parts A,C --rounds 1 "
        "--bench build/harness/bench\n  tools/perf.py check ring --quick\n"
        "  tools/perf.py check all\nexit status: 0 every target passed, 1 a target or a "
        "measurement failed, 2 bad usage or no numpy and h5py")
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,check}")
    ls = sub.add_parser("list", help="print the table of targets",
                        description="Print the table of targets (name, check, threshold, what).")
    how = ls.add_mutually_exclusive_group()
    how.add_argument("--markdown", action="store_true",
                     help="as the markdown table of docs/performance.md (with how measured)")
    how.add_argument("--check", metavar="FILE",
                     help="exit 1 unless FILE holds that markdown table between the lines "
                     "'<!-- tools/perf.py list --markdown -->' and '<!-- end -->'")
    ck = sub.add_parser("check", help="measure and print the verdicts of GROUP ...",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="Measure and print PASS or FAIL per target.\n\ngroups:\n" +
                        groups + "\n  all       " + " ".join(ALL),
                        epilog="Run on an otherwise idle machine: the verdicts compare rates.")
    ck.add_argument("groups", nargs="+", metavar="GROUP", help="|".join(list(GROUPS) + ["all"]))
    ck.add_argument("--bench", metavar="PATH",
                    help="the bench executable (default: ./bench, which builds first; ring: "
                    "build/harness/bench, since mpirun starts it once per rank)")
    ck.add_argument("--rounds", type=int, metavar="N",
                    help="repeat each ratio's run N times, verdict the median (kernels, decode, "
                    "training A, sparse: default 3; mods: 4)")
    ck.add_argument("--parts", metavar="LIST",
                    help="kernels: A,B,C,D (default all); training: A,C,D (default all)")
    ck.add_argument("--out", metavar="DIR",
                    help="map: keep the figures in DIR; ring: its results folder (default "
                    "results/ring-TIME); DIR/GROUP when both run")
    ck.add_argument("--n", type=int, metavar="N", help="ring: n (default 16384; --quick 1024)")
    ck.add_argument("--ranks", default="1,2,4", metavar="LIST",
                    help="ring: the rank counts R of the scaling runs (default 1,2,4)")
    ck.add_argument("--quick", action="store_true",
                    help="ring: a smoke test of the check (n = 1024, one repetition)")
    o = p.parse_args(argv)
    if o.command == "check":
        bad = [g for g in o.groups if g not in GROUPS and g != "all"]
        if bad:
            p.error(f"unknown group {', '.join(bad)}: choose from {', '.join(GROUPS)} or all")
        o.groups = list(dict.fromkeys(x for g in o.groups for x in (ALL if g == "all" else [g])))
        if o.rounds is not None and o.rounds < 1:
            p.error("--rounds takes a count of at least 1")
        try:
            o.ranks = [int(x) for x in re.split(r"[,\s]+", o.ranks.strip())]
            assert o.ranks and min(o.ranks) >= 1
        except (ValueError, AssertionError):
            p.error(f"--ranks takes rank counts such as 1,2,4, not '{o.ranks}'")
        if o.parts is not None:
            o.parts = "".join(re.split(r"[,\s]+", o.parts.upper()))
            with_parts = [g for g in o.groups if g in ("kernels", "training")]
            if len(with_parts) != 1:
                p.error("--parts goes with exactly one of the groups kernels and training")
            wrong = set(o.parts) - set(PARTS[with_parts[0]])
            if wrong or not o.parts:
                p.error(f"--parts of {with_parts[0]}: {','.join(PARTS[with_parts[0]])} "
                        f"(not '{o.parts}')")
        shared_out = len([g for g in o.groups if g in ("map", "ring")]) > 1
        o.out_for = lambda g: (None if not o.out else
                               os.path.join(o.out, g) if shared_out else o.out)
    return o


def doc_block(path):
    """the lines of path between the perf.py markers, or None"""
    begin, end = "<!-- tools/perf.py list --markdown -->", "<!-- end -->"
    lines = open(path, encoding="utf-8").read().split("\n")
    if begin not in lines:
        return None
    i = lines.index(begin) + 1
    j = lines.index(end, i) if end in lines[i:] else len(lines)
    return "\n".join(lines[i:j]).strip("\n")


def main(argv):
    o = parse(argv)
    if o.command == "list":
        if o.check:
            if doc_block(o.check) == target_table(markdown=True):
                print(f"perf.py: the table of targets in {o.check} matches TARGETS")
                return 0
            print(f"perf.py: {o.check} does not hold the table of targets of tools/perf.py "
                  "between '<!-- tools/perf.py list --markdown -->' and '<!-- end -->': paste "
                  "the output of /usr/bin/python3 tools/perf.py list --markdown there")
            return 1
        print(target_table(o.markdown))
        return 0

    need_numpy()
    for g in o.groups:
        default = os.path.join(TOP, "build", "harness", "bench") if g == "ring" else \
            os.path.join(TOP, "bench")
        path = os.path.abspath(o.bench) if o.bench else default
        V.start(g)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            V.error(f"{g}: no bench executable at {path}: build first (./bench info) or pass "
                    "--bench PATH")
            continue
        parts = o.parts
        o.parts = PARTS["decode"] if g == "decode" else o.parts if g in PARTS else None
        with tempfile.TemporaryDirectory(prefix=f"perf-{g}-") as tmp:
            try:
                GROUPS[g][0](Bench(path, tmp), o)
            except MeasureError as e:
                V.error(f"{g}: {e}")
        o.parts = parts
        print()
    return V.summary()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
