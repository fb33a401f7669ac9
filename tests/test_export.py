#!/usr/bin/python3
"""test_export.py BENCH — `bench export` as pandas reads it, against the HDF5 tables read by h5py.

A tiny results file (two runs, one on the needle dataset so that some reals are NaN, fitted so it
has /fits) is exported as CSV and JSON, whole and per run; pd.read_csv and
pd.read_json(orient="table") must give the table's columns in its order and its rows with equal
values: integers exactly, strings as decoded UTF-8 (pandas reads an empty CSV field as NaN:
counted as ""), reals to the last bit (17 digits; read_json with precise_float=True), NaN as NaN; read_json
parses started_at as a timestamp (a column ending in _at): compared as one.
Also: the JSON context block is the run's /runs row, Markdown has one line per point, bad
options exit 2 with one line, and the formats of the registry (bench complete values export
--format) are those --help names and docs/cli.md's export table describes.
"""
import io
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pandas as pd

BENCH = sys.argv[1]
TABLES = ("points", "runs", "samples", "fits")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def bench(*args, ok=True):
    r = subprocess.run([BENCH, *args], capture_output=True, text=True)
    if ok and r.returncode != 0:
        sys.exit(f"bench {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r


def h5_table(path, table, run):
    with h5py.File(path, "r") as f:
        rows = f[table][:]
    if run:
        rows = rows[rows["run_id"] == run]
    return rows


def same_value(a, b, tol):
    """a from h5py (numpy scalar or bytes), b from pandas."""
    if isinstance(a, bytes) and isinstance(b, pd.Timestamp):  # read_json parses *_at columns
        return pd.Timestamp(a.decode("utf-8")) == b
    if isinstance(a, bytes):
        s = a.decode("utf-8")
        return s == ("" if isinstance(b, float) and math.isnan(b) else str(b))
    if isinstance(a, (np.floating, float)):
        if math.isnan(a):
            return b is None or (isinstance(b, float) and math.isnan(b))
        return b is not None and abs(float(b) - float(a)) <= tol * abs(float(a))
    return int(a) == int(b)


def compare(rows, df, what, tol):
    names = list(rows.dtype.names)
    check(list(df.columns) == names, f"{what}: columns {list(df.columns)} != {names}")
    check(len(df) == len(rows), f"{what}: {len(df)} rows, the file has {len(rows)}")
    if list(df.columns) != names or len(df) != len(rows):
        return
    bad = [(i, n, rows[i][n], df[n].iloc[i]) for i in range(len(rows)) for n in names
           if not same_value(rows[i][n], df[n].iloc[i], tol)]
    check(not bad, f"{what}: {len(bad)} values differ, first: {bad[:3]}")


def main():
    tmp = tempfile.mkdtemp(prefix="attnbench-export-")
    h5 = os.path.join(tmp, "r.h5")
    common = ["--heads", "2", "--head-dim", "16", "--threads", "1", "--reps", "3", "--warmup", "0",
              "--min-time", "0", "--quiet", "--out", h5]
    bench("sweep", "--kinds", "full,window", "--dataset", "gaussian", "--n", "128,256", *common)
    bench("sweep", "--kinds", "full", "--dataset", "needle", "--n", "256", *common)
    bench("fit", h5, "--run", "1")

    for table in TABLES:
        for run in (0, 1, 2):
            rows = h5_table(h5, table, run)
            sel = ["--run", str(run)] if run else []
            what = f"{table} run {run or 'all'}"
            csv = bench("export", h5, "--table", table, "--format", "csv", *sel).stdout
            df = pd.read_csv(io.StringIO(csv), float_precision="round_trip")
            compare(rows, df, what + " csv", 0)
            out = os.path.join(tmp, f"{table}{run}.json")
            bench("export", h5, "--table", table, "--format", "json", "--out", out, *sel)
            compare(rows, pd.read_json(out, orient="table", precise_float=True), what + " json", 0)
            with open(out) as f:
                doc = json.load(f)
            with h5py.File(h5, "r") as f:
                last = f["runs"][:][(run or 2) - 1]
            ctx = doc["context"]
            check(ctx["run_id"] == (run or 2) and ctx["host"] == last["host"].decode()
                  and ctx["sgemm_gflops"] == float(last["sgemm_gflops"])
                  and ctx["command"] == last["command"].decode(),
                  f"{what}: the JSON context is not the run's /runs row: {ctx}")
            check(doc["attnbench"]["table"] == table, f"{what}: JSON names table {doc['attnbench']}")

    # NaN reaches both formats as missing, never as a number or "nan"
    points = h5_table(h5, "points", 2)
    check(np.all(np.isnan(h5_table(h5, "points", 1)["retrieval"])), "run 1 has NaN retrieval")
    check(points["retrieval_queries"][0] > 0, "the needle run has planted queries")

    md = bench("export", h5, "--format", "markdown").stdout
    lines = [l for l in md.splitlines() if l.startswith("| full ") or l.startswith("| window ")]
    check(len(lines) == len(h5_table(h5, "points", 0)), f"markdown: {len(lines)} point lines")
    check("### Run 2" in md, "markdown names each run")

    for args in (["export", h5], ["export", h5, "--format", "xml"],
                 ["export", h5, "--format", "csv", "--table", "nope"],
                 ["export", h5, "--format", "csv", "--run", "9"],
                 ["export", os.path.join(tmp, "missing.h5"), "--format", "csv"]):
        r = bench(*args, ok=False)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == "",
              f"bench {' '.join(args[2:])}: exit {r.returncode}, stderr {r.stderr!r}")

    # the registry of formats (report/export/export.c) is what --help and docs/cli.md describe
    formats = bench("complete", "values", "export", "--format").stdout.split()
    check(formats and formats[:3] == ["csv", "json", "markdown"], f"registered formats {formats}")
    usage = bench("export", "--help").stdout
    check("--format " + "|".join(formats) in usage, f"--help names the formats: {usage[:200]!r}")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                           "cli.md")) as f:
        cli_md = f.read()
    section = cli_md[cli_md.index("## `bench export`"):]
    section = section[:section.index("\n## ", 1)]
    rows = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    check(rows == set(formats),
          f"docs/cli.md's export table lists {sorted(rows)}, the registry {sorted(formats)}")

    subprocess.run(["rm", "-rf", tmp])
    if failures:
        sys.exit(f"{len(failures)} export checks failed")
    print("export: CSV and JSON load in pandas with the HDF5 tables' rows and columns")


main()
