#!/usr/bin/python3
"""test_mpi.py — distributed sweeps (docs/distributed.md).

  test_mpi.py same_points  BENCH   `bench sweep` of full and window (2 datasets: 4 series) alone,
                                   then under mpirun -n 2 and -n 3 (oversubscribed): each writes
                                   one file with the same points (settings equal, accuracy bit for
                                   bit: the inputs are seeded), every rank measured a series, each
                                   point names its rank and this host, /hosts has this host once
                                   with its yardsticks, the run is complete, pandas reads it
  test_mpi.py errors_once  BENCH   a bad sweep under mpirun -n 2 prints its error once (rank 0),
                                   exits 2 and writes nothing
  test_mpi.py collective   BENCH   (when the ring kind is registered) full and ring under
                                   mpirun -n 2: ring's points are measured by both ranks together
                                   (rank -1, rank 0's host), full's by one rank each; all stored
  test_mpi.py absent       BENCH   (a build without MPI) launched as if by an mpirun of 2 ranks,
                                   bench refuses with one line and exit 2 instead of running two
                                   sweeps

Exit 0 pass, 1 fail, 77 skip (meson). Run with Debian's python (/usr/bin/python3: h5py, pandas).
mpirun runs as root with OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 (set here), --oversubscribe always.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import pandas as pd
except ImportError:
    print("skip: h5py, numpy or pandas is not installed for", sys.executable)
    sys.exit(77)

FAILURES = []

# Small and quick: 8 points, one thread each (threads are a setting: equal in every run).
GRID = ["--kinds", "full,window", "--n", "96,160", "--dataset", "gaussian,local", "--heads", "2",
        "--kv-heads", "1", "--head-dim", "16", "--threads", "1", "--reps", "2", "--warmup", "0",
        "--min-time", "0", "--accuracy-rows", "16", "--quiet"]
SETTINGS = ["kind", "params", "dataset", "dataset_params", "mode", "batch", "heads", "kv_heads",
            "q_len", "kv_len", "head_dim", "causal", "threads", "seed", "flops", "bytes",
            "kv_bytes", "state_bytes", "workspace_bytes", "accuracy_rows", "retrieval_queries",
            "status"]
ACCURACY = ["rel_err", "max_abs_err", "cosine", "retrieval", "self_rel_err"]
KEY = ["kind", "params", "dataset", "dataset_params", "kv_len"]


def fail(what):
    FAILURES.append(what)
    print("FAIL:", what)


def env():
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    e.pop("ATTNBENCH_HOME", None)
    return e


def mpirun(ranks):
    return ["mpirun", "--oversubscribe", "-n", str(ranks)]


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def table(path, name):
    with h5py.File(path, "r") as f:
        frame = pd.DataFrame(f[name][()])
    for c in frame.columns:  # fixed-length strings come back as bytes
        if frame[c].dtype == object:
            frame[c] = frame[c].str.decode("utf-8")
    return frame


def same_points(bench, tmp):
    host = socket.gethostname()[:63]
    code, _, err = run([bench, "sweep", *GRID, "--out", "serial.h5"], tmp)
    if code != 0:
        return fail("the serial sweep failed (%d): %s" % (code, err))
    serial = table(os.path.join(tmp, "serial.h5"), "points").sort_values(KEY, ignore_index=True)
    if len(serial) != 8 or set(serial["rank"]) != {0} or set(serial["host"]) != {host}:
        fail("serial: 8 points of rank 0 on %s expected, got %d, ranks %s, hosts %s"
             % (host, len(serial), sorted(set(serial["rank"])), sorted(set(serial["host"]))))
    for ranks in (2, 3):
        out = "mpi%d.h5" % ranks
        code, _, err = run(mpirun(ranks) + [bench, "sweep", *GRID, "--out", out], tmp)
        if code != 0:
            fail("mpirun -n %d: exit %d: %s" % (ranks, code, err))
            continue
        path = os.path.join(tmp, out)
        points = table(path, "points")
        print("mpirun -n %d: %d points, ranks %s" % (ranks, len(points),
                                                      sorted(set(points["rank"]))))
        if sorted(points["point_id"]) != list(range(len(points))):
            fail("mpirun -n %d: point_ids %s" % (ranks, sorted(points["point_id"])))
        dist = points.sort_values(KEY, ignore_index=True)
        if len(dist) != len(serial):
            fail("mpirun -n %d: %d points, the serial sweep %d" % (ranks, len(dist), len(serial)))
            continue
        for c in SETTINGS:
            if not (dist[c] == serial[c]).all():
                fail("mpirun -n %d: column %s differs from the serial sweep" % (ranks, c))
        for c in ACCURACY:  # bit for bit (NaN where NaN)
            a, b = dist[c].to_numpy(), serial[c].to_numpy()
            if not np.array_equal(a.view(np.uint64), b.view(np.uint64)):
                fail("mpirun -n %d: %s not bit for bit: %s vs %s" % (ranks, c, a, b))
        if set(dist["rank"]) != set(range(ranks)):
            fail("mpirun -n %d: points measured by ranks %s, expected each of 0..%d (4 series)"
                 % (ranks, sorted(set(dist["rank"])), ranks - 1))
        if set(dist["host"]) != {host}:
            fail("mpirun -n %d: hosts %s, expected %s" % (ranks, sorted(set(dist["host"])), host))
        for _, series in dist.groupby(["kind", "dataset"]):  # a series stays on one rank
            if series["rank"].nunique() != 1:
                fail("mpirun -n %d: a series spread over ranks %s" % (ranks, list(series["rank"])))
        hosts = table(path, "hosts")
        if (len(hosts) != 1 or hosts["host"][0] != host or hosts["rank"][0] != 0 or
                hosts["ranks"][0] != ranks or not hosts["sgemm_gflops"][0] > 0 or
                not hosts["mem_bandwidth_gbs"][0] > 0 or hosts["threads"][0] != 1):
            fail("mpirun -n %d: /hosts should be this host once, rank 0 of %d ranks, 1 thread, "
                 "with its yardsticks: %s" % (ranks, ranks, hosts.to_dict("records")))
        status = table(path, "run_status")
        if list(status["status"]) != ["complete"]:
            fail("mpirun -n %d: run status %s" % (ranks, list(status["status"])))
        samples = table(path, "samples")
        if len(samples) != int(points["reps"].sum()):
            fail("mpirun -n %d: %d samples for %d reps" % (ranks, len(samples),
                                                            int(points["reps"].sum())))
        if len(table(path, "runs")) != 1:
            fail("mpirun -n %d: one run expected in /runs" % ranks)


def errors_once(bench, tmp):
    code, out, err = run(mpirun(2) + [bench, "sweep", "--kinds", "full,nosuch", "--out", "x.h5"],
                         tmp)
    lines = [l for l in err.splitlines() if l.startswith("bench:")]
    print("mpirun -n 2 bench sweep --kinds full,nosuch: exit %d, %r" % (code, lines))
    if code != 2 or len(lines) != 1 or "nosuch" not in lines[0]:
        fail("a bad sweep under mpirun -n 2: exit 2 and one line expected, got %d: %r"
             % (code, err))
    if os.listdir(tmp):
        fail("a bad sweep under mpirun wrote %s" % os.listdir(tmp))


def collective(bench, tmp):
    kinds = subprocess.run([bench, "list"], stdout=subprocess.PIPE, env=env()).stdout.decode()
    if not any(line.split()[:1] == ["ring"] for line in kinds.splitlines()):
        print("skip: no ring kind in this build (bench list)")
        return 77
    grid = ["--kinds", "full,ring", "--n", "96,128", "--dataset", "gaussian,local", "--heads",
            "2", "--head-dim", "16", "--threads", "1", "--reps", "2", "--warmup", "0",
            "--min-time", "0", "--quiet", "--out", "c.h5"]
    code, _, err = run(mpirun(2) + [bench, "sweep", *grid], tmp)
    if code != 0:
        return fail("full,ring under mpirun -n 2: exit %d: %s" % (code, err))
    points = table(os.path.join(tmp, "c.h5"), "points")
    ring, full = points[points["kind"] == "ring"], points[points["kind"] == "full"]
    print("ring ranks %s, full ranks %s" % (sorted(set(ring["rank"])), sorted(set(full["rank"]))))
    if len(ring) != 4 or set(ring["rank"]) != {-1} or set(ring["status"]) != {"ok"}:
        fail("ring: 4 points of rank -1 expected: %s" % ring[["kv_len", "rank", "status"]])
    if len(full) != 4 or set(full["rank"]) != {0, 1}:
        fail("full: 4 points over ranks 0 and 1 expected: %s" % full[["kv_len", "rank"]])


def absent(bench, tmp):
    e = dict(env(), OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="0")
    p = subprocess.run([bench, "sweep", "--kinds", "full", "--n", "64", "--out", "x.h5"], cwd=tmp,
                       env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors="replace")
    print("bench sweep as rank 0 of 2 without MPI: exit %d, %r" % (p.returncode, err))
    if p.returncode != 2 or len(err.splitlines()) != 1 or "without MPI" not in err:
        fail("a build without MPI under mpirun -n 2: one line and exit 2 expected")
    if os.listdir(tmp):
        fail("a build without MPI under mpirun wrote %s" % os.listdir(tmp))


def main():
    part, bench = sys.argv[1], os.path.abspath(sys.argv[2])
    if part != "absent" and not shutil.which("mpirun"):
        print("skip: mpirun not found (apt-get install openmpi-bin)")
        return 77
    parts = {"same_points": same_points, "errors_once": errors_once, "collective": collective,
             "absent": absent}
    with tempfile.TemporaryDirectory() as tmp:
        if parts[part](bench, tmp) == 77:
            return 77
    print("%s: %s" % (part, "FAIL" if FAILURES else "ok"))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
