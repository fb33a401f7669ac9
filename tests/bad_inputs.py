#!/usr/bin/python3
"""The bad-input table (tests/bad_inputs.tsv): every case must exit with status 2, print exactly
one line on stderr ("bench: ..."; containing the case's expected text when it has one) and leave
every file of its working directory unchanged (SHA-256 of every file, and the set of paths,
before and after). Usage: bad_inputs.py BENCH_EXE LAUNCHER TABLE.tsv"""
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def snapshot(top):
    """Path -> SHA-256 (or 'dir') of everything under top."""
    out = {}
    for root, dirs, files in os.walk(top):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), top)] = "dir"
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, top)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def fixtures(bench, top):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 2, 16, 8)).astype("f4")
    k = rng.standard_normal((1, 2, 16, 8)).astype("f4")
    v = rng.standard_normal((1, 2, 16, 8)).astype("f4")
    for name, (qq, kk) in {"qkv.h5": (q, k), "nan.h5": (q.copy(), k), "inf.h5": (q, k.copy())}.items():
        if name == "nan.h5":
            qq[0, 1, 3, 5] = np.nan
        if name == "inf.h5":
            kk[0, 0, 2, 1] = np.inf
        with h5py.File(os.path.join(top, name), "w") as f:
            f["q"], f["k"], f["v"] = qq, kk, v
    r = subprocess.run([bench, "run", "full", "--n", "16", "--heads", "2", "--reps", "1",
                        "--warmup", "0", "--min-time", "0", "--out", "good.h5"],
                       cwd=top, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bad_inputs: cannot make the results fixture: {r.stderr}")
    shutil.copyfile(os.path.join(top, "good.h5"), os.path.join(top, "other.h5"))
    with open(os.path.join(top, "good.h5"), "rb") as f:
        head = f.read(96)
    with open(os.path.join(top, "truncated.h5"), "wb") as f:
        f.write(head)
    with open(os.path.join(top, "notes.txt"), "w") as f:
        f.write("not a tensor file\n")
    open(os.path.join(top, "empty.h5"), "wb").close()
    os.mkdir(os.path.join(top, "adir"))


def main():
    bench, launcher, table = (os.path.abspath(a) for a in sys.argv[1:4])
    cases = []
    with open(table) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            cases.append((lineno, cols[0], cols[1], cols[2] if len(cols) > 2 else ""))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("ATTNBENCH_HOME", None)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="bad_inputs.") as top:
        fixtures(bench, top)
        before = snapshot(top)
        for lineno, prog, args, expect in cases:
            argv = [bench if prog == "bench" else launcher] + shlex.split(args)
            try:
                r = subprocess.run(argv, cwd=top, env=env, capture_output=True, text=True,
                                   timeout=60, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                print(f"line {lineno}: {prog} {args}: no answer in 60 s")
                failures += 1
                continue
            lines = r.stderr.splitlines()
            why = []
            if r.returncode != 2:
                why.append(f"exit status {r.returncode}, expected 2")
            if len(lines) != 1:
                why.append(f"{len(lines)} stderr lines, expected 1")
            elif not lines[0].startswith("bench: "):
                why.append("the stderr line does not start with 'bench: '")
            if expect and expect not in r.stderr:
                why.append(f"stderr lacks '{expect}'")
            after = snapshot(top)
            if after != before:
                changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
                why.append(f"files changed: {', '.join(changed)}")
                before = after
            if why:
                failures += 1
                print(f"line {lineno}: {prog} {args}: {'; '.join(why)}")
                for l in lines[:5]:
                    print(f"    stderr: {l}")
    print(f"bad_inputs: {len(cases) - failures} of {len(cases)} bad invocations refused cleanly "
          "(exit 2, one stderr line, files unchanged)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
