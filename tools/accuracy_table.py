#!/usr/bin/python3
"""accuracy_table.py: rel. error and needle retrieval of every kind at its default parameters.

Runs `bench sweep` over every registered kind at one n (default 4096), causal 0 and 1, on the
datasets gaussian, local and needle (8 heads of dim 64), one timed repetition per point (only
accuracy is read: timings do not matter here), then prints a markdown table: rel_err per dataset
and causal flag, and the needle retrieval accuracy with its number of planted queries.

Usage: /usr/bin/python3 tools/accuracy_table.py [--bench build/harness/bench] [--n 4096]
                                                 [--out results/accuracy.h5]   (needs python3-h5py)
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

DATASETS = ("gaussian", "local", "needle")


def text(column):
    return [x.decode("utf-8") for x in column]


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(top, "build", "harness", "bench"))
    ap.add_argument("--n", default="4096")
    ap.add_argument("--out", help="results file to keep (default: a temporary one)")
    args = ap.parse_args()
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="attnbench-acc-"), "acc.h5")
    cmd = [args.bench, "sweep", "--n", args.n, "--causal", "0,1", "--dataset", ",".join(DATASETS),
           "--reps", "1", "--warmup", "0", "--min-time", "0", "--quiet", "--out", out]
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    with h5py.File(out, "r") as f:
        p = f["points"][:]
    kinds, datasets, status = text(p["kind"]), text(p["dataset"]), text(p["status"])
    rows = {}
    for e in range(len(p)):
        if status[e] != "ok":
            print(f"{kinds[e]} {datasets[e]} causal={p['causal'][e]}: {status[e]}", file=sys.stderr)
            continue
        rows.setdefault(kinds[e], {})[(datasets[e], int(p["causal"][e]))] = p[e]
    head = ["kind"] + [f"rel_err {d} c0 / c1" for d in DATASETS] + ["needle retrieval c0 / c1 (planted)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for kind, r in rows.items():
        cells = [kind]
        for d in DATASETS:
            cells.append(" / ".join(f"{r[(d, c)]['rel_err']:.2e}" if (d, c) in r else "-" for c in (0, 1)))
        ret = [r.get(("needle", c)) for c in (0, 1)]
        cells.append(" / ".join(f"{100 * x['retrieval']:.1f} %" if x is not None and not np.isnan(x["retrieval"])
                                else "-" for x in ret) +
                     " (" + ", ".join(str(x["retrieval_queries"]) if x is not None else "-" for x in ret) + ")")
        print("| " + " | ".join(cells) + " |")
    print(f"results: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
