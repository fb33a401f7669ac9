#!/usr/bin/python3
"""ab.py — two bench builds on the same grid, interleaved: is B slower than A anywhere?

A sweep measured with one build and then with the other drifts with the machine (its clock,
its read bandwidth, what else runs) for minutes between the two; on a noisy machine two sweeps
of the *same* build then differ "significantly" at many points. This driver interleaves: the
grid is cut into one chunk per kind, and each chunk is measured by A and by B back to back (AB
in one round, BA in the next, alternating from chunk to chunk), each into its own results file
(one run per chunk and round). Then, per chunk and round, `bench compare A.h5:RUN B.h5:RUN
--fail-above PCT` (B's binary) judges every point; a point counts as slower only when it is
significantly slower by more than PCT % in every round (a real regression repeats; drift
changes side). Its output:
  - per round: points compared, and those bench compare flags as slower by more than PCT %;
  - the points flagged in every round, with their ratios (the verdict);
  - the geometric mean of B/A over all points and rounds;
  - whether the two builds computed the same thing: every column but the timings (errors,
    retrieval, FLOPs, bytes, workspace, state and saved bytes) bit-identical, point by point.

usage: /usr/bin/python3 tools/ab.py A_BENCH B_BENCH [--rounds N] [--kinds LIST] [--fail-above PCT]
                                    [--out DIR] [-- SWEEP OPTIONS ...]
  A_BENCH, B_BENCH   bench executables (e.g. a build of the base commit, build/harness/bench)
  --rounds N         rounds of the whole grid (default 2)
  --kinds LIST       the chunks (default: every kind both builds register)
  --fail-above PCT   the threshold of bench compare (default 3)
  --out DIR          keep A.h5 and B.h5 there, and each sweep's output as
                     A-ROUND-KIND.log, B-ROUND-KIND.log (default: a temporary folder, removed)
  SWEEP OPTIONS      passed to every `bench sweep` (default: none, the default sweep)
Exit status: 0 when no point is slower in every round and the non-timing columns agree; 1
otherwise or when a bench command fails; 2 on bad usage.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

KEY = ("kind", "params", "dataset", "dataset_params", "mode", "batch", "heads", "kv_heads",
       "q_len", "kv_len", "head_dim", "causal", "threads", "pass", "dtype", "isa")
SAME = ("rel_err", "max_abs_err", "self_rel_err", "cosine", "retrieval", "retrieval_queries",
        "accuracy_rows", "flops", "bytes", "kv_bytes", "workspace_bytes", "state_bytes",
        "saved_bytes", "status")
SLOWER = re.compile(r"^(\S.*?)\s{2,}\S+\s+\S+\s+(\d+\.\d+)\s+\[.*\]\s+slower \* \(\+([\d.]+) ?%\)")


def run(argv):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return done.returncode, done.stdout, done.stderr


def kinds_of(bench):
    rc, out, err = run([bench, "complete", "kinds"])
    if rc != 0:
        sys.exit(f"ab.py: {bench} complete kinds exited {rc}: {err.strip()}")
    return out.split()


def parse(argv):
    rest = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(prog="tools/ab.py", description=__doc__.split("\n\n")[0])
    p.add_argument("a", metavar="A_BENCH")
    p.add_argument("b", metavar="B_BENCH")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--kinds")
    p.add_argument("--fail-above", type=float, default=3.0)
    p.add_argument("--out")
    o = p.parse_args(argv)
    o.sweep = rest
    for b in (o.a, o.b):
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            p.error(f"{b} is not an executable file")
    if o.rounds < 1:
        p.error("--rounds takes a count of at least 1")
    if not o.fail_above > 0:
        p.error("--fail-above takes a percentage above 0")
    return o


def measure(o, kinds, files):
    """every chunk and round, AB or BA; returns {(round, kind): (run of A, run of B)}"""
    runs, count = {}, {"a": 0, "b": 0}
    total, done, start = o.rounds * len(kinds) * 2, 0, time.time()
    for r in range(o.rounds):
        for i, kind in enumerate(kinds):
            order = ("a", "b") if (i + r) % 2 == 0 else ("b", "a")
            for side in order:
                bench = o.a if side == "a" else o.b
                rc, out, err = run([bench, "sweep", "--kinds", kind, "--out", files[side]] +
                                   o.sweep)
                if o.out:
                    with open(os.path.join(o.out, f"{side.upper()}-{r + 1}-{kind}.log"), "w") as f:
                        f.write(out + err)
                if rc != 0:
                    sys.exit(f"ab.py: {bench} sweep --kinds {kind} exited {rc}: {err.strip()}")
                count[side] += 1
                done += 1
                left = (time.time() - start) / done * (total - done)
                print(f"\rab.py: round {r + 1}/{o.rounds}, {kind} ({side.upper()}), "
                      f"{done}/{total} sweeps, about {left / 60:.0f} min left   ",
                      end="", file=sys.stderr, flush=True)
            runs[(r, kind)] = (count["a"], count["b"])
    print(file=sys.stderr)
    return runs


def verdicts(o, kinds, files, runs):
    """bench compare per chunk and round: {label: [pct per round it was flagged]}, ratios"""
    flagged, compared = {}, [0] * o.rounds
    for (r, kind), (ra, rb) in runs.items():
        rc, out, err = run([o.b, "compare", f"{files['a']}:{ra}", f"{files['b']}:{rb}",
                            "--fail-above", f"{o.fail_above:g}"])
        if rc not in (0, 1):
            sys.exit(f"ab.py: bench compare exited {rc}: {err.strip()}")
        m = re.search(r"summary: (\d+) points compared", out)
        compared[r] += int(m.group(1)) if m else 0
        for line in out.splitlines():
            s = SLOWER.match(line)
            if s and float(s.group(3)) > o.fail_above:
                flagged.setdefault(s.group(1).strip(), {})[r] = float(s.group(3))
    return flagged, compared


def table(path):
    with h5py.File(path, "r") as f:
        return f["points"][:]


def key(row):
    return tuple(row[c].decode() if isinstance(row[c], bytes) else int(row[c]) for c in KEY)


def same(x, y):
    if isinstance(x, bytes) or isinstance(y, bytes):
        return x == y
    return (math.isnan(x) and math.isnan(y)) if isinstance(x, float) and math.isnan(x) else x == y


def paired(files, runs):
    """per point key: [(A row, B row) per round], from the runs of its chunk and round"""
    a, b = table(files["a"]), table(files["b"])
    pairs = {}
    for (r, kind), (ra, rb) in runs.items():
        rows_b = {key(x): x for x in b[b["run_id"] == rb]}
        for x in a[a["run_id"] == ra]:
            y = rows_b.get(key(x))
            if y is not None:
                pairs.setdefault(key(x), []).append((x, y))
    return pairs


def main(argv):
    o = parse(argv)
    both = [k for k in kinds_of(o.a) if k in set(kinds_of(o.b))]
    kinds = o.kinds.split(",") if o.kinds else both
    missing = [k for k in kinds if k not in both]
    if missing:
        sys.exit(f"ab.py: not a kind of both builds: {', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="ab-") as tmp:
        folder = o.out or tmp
        os.makedirs(folder, exist_ok=True)
        files = {s: os.path.join(folder, f"{s.upper()}.h5") for s in "ab"}
        for f in files.values():
            if os.path.exists(f):
                sys.exit(f"ab.py: {f} exists: choose an empty --out folder")
        print(f"ab.py: A = {o.a}, B = {o.b}; {len(kinds)} chunks ({','.join(kinds)}), "
              f"{o.rounds} rounds, sweep options: {' '.join(o.sweep) or '(default sweep)'}")
        runs = measure(o, kinds, files)
        flagged, compared = verdicts(o, kinds, files, runs)
        pairs = paired(files, runs)
    for r in range(o.rounds):
        n = sum(1 for pct in flagged.values() if r in pct)
        print(f"round {r + 1}: {compared[r]} points compared; bench compare flags {n} as "
              f"significantly slower in B by more than {o.fail_above:g} %")
    always = {k: v for k, v in flagged.items() if len(v) == o.rounds}
    print(f"slower in every round: {len(always)}")
    for label, pct in sorted(always.items()):
        print(f"  {label}: " + ", ".join(f"+{pct[r]:.1f} %" for r in range(o.rounds)))
    ratios = [y["time_median_s"] / x["time_median_s"] for v in pairs.values() for x, y in v
              if x["time_median_s"] > 0 and y["time_median_s"] > 0]
    if ratios:
        per_point = [np.median([y["time_median_s"] / x["time_median_s"] for x, y in v])
                     for v in pairs.values()]
        print(f"B/A over {len(pairs)} points x {o.rounds} rounds: geometric mean "
              f"{math.exp(np.mean(np.log(ratios))):.3f}; per point (median over rounds): "
              f"min {min(per_point):.3f}, median {np.median(per_point):.3f}, "
              f"max {max(per_point):.3f}")
    differ = []
    for k, v in pairs.items():
        x, y = v[0]
        bad = [c for c in SAME if not same(x[c], y[c])]
        if bad:
            differ.append(f"{k[0]} {k[1]} n={k[8]}/{k[9]} {k[13]} {k[14]}: {', '.join(bad)}")
    print(f"non-timing columns ({', '.join(SAME)}): "
          f"{'identical at all ' + str(len(pairs)) + ' points' if not differ else str(len(differ)) + ' points differ'}")
    for d in differ[:20]:
        print(f"  {d}")
    return 1 if always or differ else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
