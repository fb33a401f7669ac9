#!/usr/bin/python3
"""test_files.py — what bench leaves on disk when things go wrong.

  test_files.py signals    BENCH   SIGINT, SIGTERM, SIGKILL at seeded random moments (half in the
                                   first second) on run --out NEW, sweep --out NEW, sweep appending,
                                   run --output NEW: afterwards no file, or one h5py opens with
                                   every finished point and no blank row or orphan sample
  test_files.py disk       BENCH   a file size limit (ulimit -f: everywhere) and a small tmpfs
                                   (where mount works: root with CAP_SYS_ADMIN; else skipped with
                                   a message): failed writes roll back, the run is marked
                                   incomplete, a new file at 0 bytes free leaves no file
  test_files.py concurrent BENCH   two writers on one file, HDF5 file locking off and on: both
                                   points kept, or the second refused with one line
  test_files.py limits     BENCH   under ulimit -v 200000 bench exits with one line, never hangs;
                                   a point larger than the room left under ulimit -v is refused
                                   before allocating (exit 2, the bytes needed and available);
                                   a stored 64-token run stays far below 1 GiB (the bandwidth
                                   yardstick's buffer follows the last-level cache)
  test_files.py paths      BENCH   a FIFO as an input or output of every command is refused at
                                   once (exit 2, one line); an unreadable input says "Permission
                                   denied" (as nobody when run as root); a non-UTF-8 --out path is
                                   stored escaped ($'\\xff') and the README's pandas line reads
                                   /runs; sweep --plots with nothing to draw saves, says so, exit 0
  test_files.py interrupt  BENCH   h5py and `bench fit` read a file while a sweep writes it (no
                                   environment variables; h5py retries a read that meets a
                                   flush, for up to 2 s, as the docs advise); SIGINT mid-sweep:
                                   exit 130, one line, the run marked interrupted with its
                                   planned and finished counts, every finished point readable;
                                   SIGTERM: 143; a second SIGINT ends a long point at once and
                                   leaves no temporary file; SIGINT during the first point of a
                                   sweep into a new file leaves no file and says so

Seeded (BENCH_TEST_SEED, default 16); prints what it did. Exit 0 pass, 1 fail, 77 skip (meson).
Run with Debian's python (/usr/bin/python3: h5py).
"""
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import h5py
except ImportError:
    print("skip: h5py is not installed for", sys.executable)
    sys.exit(77)

FAILURES = []


def fail(what):
    FAILURES.append(what)
    print("FAIL:", what)


def default_signals():
    """Children start with SIGINT at its default (a test runner may ignore it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(cmd, env=None, limits=(), timeout=120):
    """Run cmd to its end: (returncode, stderr text)."""
    def pre():
        default_signals()
        for res, value in limits:
            resource.setrlimit(res, (value, value))
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                       preexec_fn=pre, timeout=timeout)
    return p.returncode, p.stderr.decode(errors="replace")


def wait_or_kill(p, what, timeout=30):
    """p's exit status, or None (a failure: what) when it is still running after timeout s."""
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        fail(what)
        return None


def temps(directory):
    return [n for n in os.listdir(directory) if ".tmp-" in n]


def check_results(path, what, base=None):
    """The file at path opens with h5py, has no blank row and no orphan sample, keeps base
    (the points of an earlier state, as (run_id, point_id, kind) tuples) and every run marked
    complete has all its points. Returns the points' (run_id, point_id, kind), or None."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"{what}: h5py cannot open {path}: {e}")
        return None
    with f:
        if f.attrs.get("format") not in (b"attnbench-results", "attnbench-results"):
            fail(f"{what}: {path} has no format attribute")
            return None
        runs, pts, smp = f["runs"][:], f["points"][:], f["samples"][:]
        status = f["run_status"][:] if "run_status" in f else []
    rows = [(int(p["run_id"]), int(p["point_id"]), p["kind"].decode()) for p in pts]
    if any(r["run_id"] == 0 for r in runs) or any(r[0] == 0 or not r[2] for r in rows):
        fail(f"{what}: {path} has a blank row")
    if sorted(int(r["run_id"]) for r in runs) != list(range(1, len(runs) + 1)):
        fail(f"{what}: {path}: run ids are not 1..{len(runs)}")
    if [r[1] for r in rows] != list(range(len(rows))):
        fail(f"{what}: {path}: point ids are not 0..{len(rows) - 1}")
    orphans = {(int(s["run_id"]), int(s["point_id"])) for s in smp} - {r[:2] for r in rows}
    if orphans:
        fail(f"{what}: {path}: samples of no point {sorted(orphans)[:3]}")
    if base is not None and rows[:len(base)] != base:
        fail(f"{what}: {path} lost points it had before")
    for s in status:
        run_id, state = int(s["run_id"]), s["status"].decode()
        n = sum(1 for r in rows if r[0] == run_id)
        if state == "incomplete" and f"; {n} point" not in s["message"].decode():
            fail(f"{what}: run {run_id} incomplete with {n} points: '{s['message'].decode()}'")
        if "finished_points" in s.dtype.names and state != "running" and \
                int(s["finished_points"]) != n:
            fail(f"{what}: run {run_id} {state} with {n} points says finished_points = "
                 f"{int(s['finished_points'])}")
    return rows


# ---- signals ----

# 24 points of about 0.1 s after the yardsticks (about 1.5 s)
SIGNAL_SWEEP_ARGS = ["--kinds", "full,window", "--n", "64:512:x2", "--reps", "2", "--min-time",
                     "0.1", "--warmup", "0", "--quiet"]

def signal_trial(exe, tmp, rng, trial, base_file, base_rows, tally):
    kind = rng.choice(["run", "sweep-new", "sweep-append", "output"])
    sig = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL][trial % 3]
    delay = rng.uniform(0.0, 1.0) if trial % 2 == 0 else rng.uniform(1.0, 3.0)
    dest = os.path.join(tmp, f"t{trial}.h5")
    # each lasts longer than the latest signal (3 s), so that nearly every trial gets one
    sweep = [exe, "sweep", *SIGNAL_SWEEP_ARGS, "--out", dest]
    cmd = {"run": [exe, "run", "full", "--n", "512", "--min-time", "2.5", "--out", dest],
           "sweep-new": sweep, "sweep-append": sweep,
           "output": [exe, "run", "full", "--n", "768", "--min-time", "3", "--output", dest]}[kind]
    if kind == "sweep-append":
        shutil.copy(base_file, dest)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=default_signals)
    time.sleep(delay)
    sent = p.poll() is None
    if sent:
        p.send_signal(sig)
        tally["sent"] += 1
    rc = wait_or_kill(p, f"trial {trial}: {kind} did not end within 30 s of {sig.name}")
    if rc is None:
        return
    what = f"trial {trial} ({kind}, {sig.name if sent else 'no signal'} after {delay:.2f} s, " \
           f"exit {rc})"
    print(what, "file" if os.path.exists(dest) else "no file")
    left = temps(tmp)
    if left and (sig != signal.SIGKILL or not sent):
        fail(f"{what}: left {left}")
    for name in left:  # SIGKILL cannot clean up: allowed, never read
        os.unlink(os.path.join(tmp, name))
        tally["kill_temps"] += 1
    if not os.path.exists(dest):
        if kind == "sweep-append":
            fail(f"{what}: the existing file is gone")
        tally["no file"] += 1
        return
    if kind == "output":
        try:
            with h5py.File(dest, "r") as f:
                if f["o"].shape != (1, 8, 768, 64):
                    fail(f"{what}: dataset o has shape {f['o'].shape}")
        except (OSError, KeyError) as e:
            fail(f"{what}: {dest} is damaged: {e}")
        tally["valid file"] += 1
        return
    rows = check_results(dest, what, base_rows if kind == "sweep-append" else None)
    if rows is not None:
        tally["valid file"] += 1
        added = len(rows) - (len(base_rows) if kind == "sweep-append" else 0)
        if rc == 0 and added != (1 if kind == "run" else len(base_rows)):
            fail(f"{what}: finished but added {added} points")


def test_signals(exe, tmp, rng):
    base_file = os.path.join(tmp, "base.h5")
    rc, err = run([exe, "sweep", *SIGNAL_SWEEP_ARGS, "--out", base_file])
    if rc != 0:
        fail(f"the base sweep failed: {err}")
        return
    base_rows = check_results(base_file, "base sweep")
    tally = {"sent": 0, "no file": 0, "valid file": 0, "kill_temps": 0}
    trials = int(os.environ.get("BENCH_TEST_SIGNALS", "20"))
    for trial in range(trials):
        signal_trial(exe, tmp, rng, trial, base_file, base_rows, tally)
    # a path an interrupted run left (or not) never blocks a later run
    rc, err = run([exe, "run", "full", "--n", "64", "--reps", "1", "--min-time", "0",
                   "--out", os.path.join(tmp, "t0.h5")])
    if rc != 0:
        fail(f"a later run --out on an interrupted path failed: {err.strip()}")
    print(f"signals: {trials} trials, {tally['sent']} signals sent; afterwards "
          f"{tally['no file']} without a file, {tally['valid file']} with a valid one; "
          f"{tally['kill_temps']} .tmp files left by SIGKILL (removed)")


# ---- interrupt: a clean stop on SIGINT / SIGTERM, reading while a sweep writes ----

READS = {"reads": 0, "retried": 0}  # h5py reads during sweeps, and the tries again


def read_while_writing(exe, path, env):
    """h5py (as the docs show, no environment variable) and `bench fit --no-store` read path
    while a sweep writes it: the number of points h5py saw, or None when it could not.
    As docs/results-format.md tells h5py users: a read that meets a flush half done (OSError) is
    tried again, for up to 2 s, and blank rows (run_id 0) at the end are left out."""
    READS["reads"] += 1
    for attempt in range(11):
        try:
            with h5py.File(path, "r") as f:
                n = int((f["points"]["run_id"][:] != 0).sum())
                status = f["run_status"][:]
            break
        except OSError as e:
            if attempt == 10:
                fail(f"h5py cannot open {path} while a sweep writes it, for 2 s: {e}")
                return None
            READS["retried"] += 1
            time.sleep(0.2)
    status = status[status["run_id"] != 0]
    if not len(status) or status[-1]["status"].decode() != "running":
        fail(f"{path} being written: its run is not 'running': {status}")
    if n < 2:  # fit needs a series at 2 n (the first points are full at n = 64, 128, ...)
        return n
    p = subprocess.run([exe, "fit", path, "--no-store"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    if p.returncode != 0:
        fail(f"bench fit --no-store on a file being written: exit {p.returncode}: "
             f"{p.stderr.decode().strip()}")
    return n


def interrupt_sweep(exe, tmp, sig, env):
    """Start a sweep of 24 points, read its file while it runs, send sig after a few points:
    check what it leaves."""
    out = os.path.join(tmp, f"int-{sig.name}.h5")
    args = [a if a != "0.1" else "0.3" for a in SIGNAL_SWEEP_ARGS]  # --min-time: 24 x 0.3 s
    p = subprocess.Popen([exe, "sweep", *args, "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                         preexec_fn=default_signals)
    seen, fits, deadline = 0, 0, time.time() + 60
    while p.poll() is None and time.time() < deadline and (seen < 3 or not fits):
        time.sleep(0.2)
        if os.path.exists(out):
            seen = read_while_writing(exe, out, env) or 0
            fits += seen >= 2
    if p.poll() is not None:
        fail(f"{sig.name}: the sweep ended before it could be interrupted "
             f"(exit {p.returncode}): {p.stderr.read().decode().strip()}")
        return
    p.send_signal(sig)
    rc = wait_or_kill(p, f"{sig.name}: the sweep did not stop within 30 s")
    if rc is None:
        return
    err = p.stderr.read().decode()
    lines = [l for l in err.splitlines() if l.strip()]
    if rc != 128 + sig:
        fail(f"{sig.name}: exit {rc}, expected {128 + sig}")
    rows = check_results(out, f"{sig.name} mid-sweep") or []
    with h5py.File(out, "r") as f:
        status = f["run_status"][:]
        points = f["points"][:]
        samples = f["samples"][:]
    if len(status) != 1 or status[0]["status"].decode() != "interrupted":
        fail(f"{sig.name}: run_status is {status}, expected one interrupted run")
        return
    s = status[0]
    kept, planned = int(s["finished_points"]), int(s["planned_points"])
    if planned != 24 or kept != len(rows) or not 3 <= kept < 24:
        fail(f"{sig.name}: planned {planned}, finished {kept}, {len(rows)} points stored "
             f"(expected 24 planned, 3 to 23 finished, all stored)")
    if not s["ended_at"].decode() or s["ended_at"] < s["started_at"]:
        fail(f"{sig.name}: started {s['started_at']}, ended {s['ended_at']}")
    for pt in points:  # every finished point is whole: measured, with its repetitions
        reps = sum(1 for r in samples if r["point_id"] == pt["point_id"])
        if pt["status"].decode() != "ok" or not pt["time_median_s"] > 0 or reps != pt["reps"]:
            fail(f"{sig.name}: point {pt['point_id']} is not whole: status "
                 f"{pt['status']}, median {pt['time_median_s']}, {reps} of {pt['reps']} samples")
    want = f"bench: interrupted (SIG{sig.name[3:]}): {kept} of 24 points kept in {out} (run 1)"
    if lines != [want]:
        fail(f"{sig.name}: stderr {lines}, expected [{want!r}]")
    print(f"{sig.name} after {seen}+ points: exit {rc}, {lines[-1] if lines else ''} "
          f"(h5py so far: {READS['reads']} reads while writing, {READS['retried']} tries again)")


def double_interrupt(exe, tmp, env):
    """A second SIGINT ends a long point at once; the new --out file's temporary name goes."""
    out = os.path.join(tmp, "double.h5")
    # one forward at n = 16384, H = 16 (1.1 TFLOP) takes 2 s or more on 2 cores even at the FMA
    # peak (at n = 12288, H = 8 the avx512 tile finished it before the second SIGINT): the first
    # SIGINT waits for its end. The first SIGINT comes 3 s in, after the inputs are made (0.8-1.1 s
    # on a 2-vCPU Xeon, 1.2-1.7 s in the sanitizer build; a SIGINT before the point ends the run
    # at once, with 130), while the point's 3 repetitions (6 s or more) run.
    p = subprocess.Popen([exe, "run", "full", "--n", "16384", "--heads", "16", "--causal", "0",
                          "--warmup", "0", "--reps", "3", "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env, preexec_fn=default_signals)
    time.sleep(3.0)
    p.send_signal(signal.SIGINT)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    second = time.time()
    rc = wait_or_kill(p, "a second SIGINT did not end bench run within 30 s")
    if rc is None:
        return
    took = time.time() - second
    if rc != -signal.SIGINT or took > 1.0:
        fail(f"a second SIGINT: exit {rc} after {took:.2f} s, expected death by SIGINT at once")
    if os.path.exists(out) or temps(tmp):
        fail(f"a second SIGINT left {out} or {temps(tmp)}")
    print(f"second SIGINT: exit {rc} {took:.2f} s after it, no file left")


def interrupt_first_point(exe, tmp, env):
    """SIGINT while the first point of a sweep into a new file runs: no file is left (it would
    hold a run without a point), exit 130, one line saying nothing was written."""
    out = os.path.join(tmp, "first.h5")
    # one forward at n = 8192, H = 16 (275 GFLOP) takes a second or more on 2 cores: the SIGINT
    # comes 0.3 s after the file appears (the run begun, its first point started)
    p = subprocess.Popen([exe, "sweep", "--kinds", "full", "--n", "8192", "--heads", "16",
                          "--reps", "3", "--warmup", "0", "--quiet", "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                         preexec_fn=default_signals)
    deadline = time.time() + 60
    while not os.path.exists(out) and p.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    rc = wait_or_kill(p, "SIGINT in the first point: the sweep did not stop within 30 s")
    if rc is None:
        return
    lines = [l for l in p.stderr.read().decode().splitlines() if l.strip()]
    want = f"bench: interrupted (SIGINT) before the first point finished: nothing written to {out}"
    if rc != 130 or lines != [want] or os.path.exists(out) or temps(tmp):
        fail(f"SIGINT in the first point: exit {rc}, stderr {lines}, file left: "
             f"{os.path.exists(out)}, temporary files: {temps(tmp)} (expected 130, [{want!r}], "
             "no file)")
    else:
        print(f"SIGINT in the first point: exit {rc}, no file left")


def test_interrupt(exe, tmp):
    env = {k: v for k, v in os.environ.items() if k != "HDF5_USE_FILE_LOCKING"}
    interrupt_first_point(exe, tmp, env)
    interrupt_sweep(exe, tmp, signal.SIGINT, env)
    interrupt_sweep(exe, tmp, signal.SIGTERM, env)
    double_interrupt(exe, tmp, env)


# ---- disk ----

SWEEP_ARGS = ["--kinds", "full,window", "--n", "64:4096:x2", "--dataset", "gaussian", "--reps", "1",
              "--min-time", "0", "--warmup", "0", "--quiet"]  # 14 points
# 48 points: the second sweep crosses the first 64-row chunk of /points
WIDE_SWEEP_ARGS = ["--kinds", "full,window", "--n", "64:8192:x2", "--reps", "1", "--min-time", "0",
                   "--warmup", "0", "--quiet"]


def expect_failure(rc, err, what, words):
    lines = [l for l in err.splitlines() if l.strip()]
    if rc == 0 or rc < 0:
        fail(f"{what}: exit {rc} (a signal?), expected an error exit; stderr: {err.strip()}")
    elif len(lines) != 1 or not all(w in lines[0] for w in words):
        fail(f"{what}: expected one line with {words}, got: {err.strip()}")


# HDF5 meets the full disk: the rollback of a write that failed half way. HDF5 leaks a buffer of
# its own on that path (sanitizer builds would report it at exit).
NO_ROOM_CHECK = dict(os.environ, BENCH_TEST_NO_ROOM_CHECK="1",
                     ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def fill_until_failure(exe, out, what, words, args=SWEEP_ARGS, env=None, max_sweeps=3):
    """Sweep into out until a sweep fails; check the file after each failure."""
    before = []
    for i in range(max_sweeps):
        rc, err = run([exe, "sweep", *args, "--out", out], env=env)
        if rc == 0:
            before = check_results(out, f"{what}: sweep {i + 1}", before) or []
            continue
        expect_failure(rc, err, f"{what}: sweep {i + 1}", [out, *words])
        if os.path.exists(out):
            check_results(out, f"{what}: after the failed sweep {i + 1}", before)
        print(f"{what}: sweep {i + 1} stopped: {err.strip()}")
        return True
    fail(f"{what}: {max_sweeps} sweeps never met the limit")
    return False


def test_fsize(exe, tmp):
    out = os.path.join(tmp, "f.h5")
    rc, err = run([exe, "sweep", *WIDE_SWEEP_ARGS, "--out", out])
    if rc != 0:
        fail(f"the base sweep failed: {err}")
        return
    rows = check_results(out, "base") or []
    # the next sweep needs a second chunk of /points at its 17th point
    limit = (resource.RLIMIT_FSIZE, os.path.getsize(out) + 100 * 1024)
    rc, err = run([exe, "sweep", *WIDE_SWEEP_ARGS, "--out", out], limits=[limit])
    expect_failure(rc, err, "sweep under ulimit -f", ["file size limit"])
    check_results(out, "sweep under ulimit -f", rows)
    print(f"ulimit -f: {err.strip()}")
    small = (resource.RLIMIT_FSIZE, 16 * 1024)
    for cmd, dest in (([exe, "run", "full", "--n", "128", "--reps", "1", "--out"], "new.h5"),
                      ([exe, "run", "full", "--n", "128", "--reps", "1", "--output"], "o.h5")):
        path = os.path.join(tmp, dest)
        rc, err = run(cmd + [path], limits=[small])
        expect_failure(rc, err, f"{cmd[-1]} under ulimit -f 16", ["file size limit", "nothing"])
        if os.path.exists(path) or temps(tmp):
            fail(f"{cmd[-1]} under ulimit -f 16 left {path} or {temps(tmp)}")


def mount_tmpfs(point, size):
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", point],
                       stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    return r.returncode == 0, r.stderr.decode().strip()


def test_tmpfs(exe, tmp):
    point = os.path.join(tmp, "mnt")
    os.mkdir(point)
    ok, why = mount_tmpfs(point, "220k")
    if not ok:
        print(f"skip: the full-disk part needs a small tmpfs, and mount failed here ({why})")
        return
    try:
        fill_until_failure(exe, os.path.join(point, "r.h5"), "tmpfs 220k", ["disk full"],
                           WIDE_SWEEP_ARGS)
        subprocess.run(["umount", point], check=True)
        # the rollback of a write HDF5 failed half way: no room check, a chunk boundary
        mount_tmpfs(point, "220k")
        env = NO_ROOM_CHECK
        fill_until_failure(exe, os.path.join(point, "r.h5"), "tmpfs 220k, no room check",
                           ["disk full", "run marked incomplete"], WIDE_SWEEP_ARGS, env)
        subprocess.run(["umount", point], check=True)
        # 0 bytes free: a new --out or --output leaves no file, and does not block a later run
        mount_tmpfs(point, "512k")
        filler = os.path.join(point, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        for env in (None, NO_ROOM_CHECK):
            for opt, name in (("--out", "new.h5"), ("--output", "o.h5")):
                path = os.path.join(point, name)
                rc, err = run([exe, "run", "full", "--n", "128", "--reps", "1", opt, path], env)
                what = f"{opt} at 0 bytes free{' (no room check)' if env else ''}"
                expect_failure(rc, err, what, ["disk full", "nothing"])
                if os.path.exists(path) or temps(point):
                    fail(f"{what}: left {os.listdir(point)}")
                print(f"{what}: {err.strip()}")
        os.unlink(filler)
        rc, err = run([exe, "run", "full", "--n", "128", "--reps", "1", "--out",
                       os.path.join(point, "new.h5")])
        if rc != 0:
            fail(f"run --out after freeing the disk failed: {err.strip()}")
    finally:
        subprocess.run(["umount", point])


# ---- concurrent writers ----

def test_concurrent(exe, tmp):
    out = os.path.join(tmp, "c.h5")
    sweep = [exe, "sweep", "--kinds", "full,window", "--n", "64:1024:x2", "--reps", "2",
             "--min-time", "0", "--warmup", "0", "--quiet", "--out", out]
    rc, err = run(sweep)
    if rc != 0:
        fail(f"the base sweep failed: {err}")
        return
    per_sweep = len(check_results(out, "base") or [])
    for locking in ("FALSE", None):
        env = dict(os.environ)
        env.pop("HDF5_USE_FILE_LOCKING", None)
        if locking:
            env["HDF5_USE_FILE_LOCKING"] = locking
        before = check_results(out, "before") or []
        procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=env, preexec_fn=default_signals)
                 for cmd in (sweep, sweep, [exe, "run", "full", "--n", "256", "--out", out])]
        results = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]
        expected = len(before)
        for (rc, err), n in zip(results, (per_sweep, per_sweep, 1)):
            if rc == 0:
                expected += n
            elif rc != 2 or "being written by another bench process" not in err or \
                    len(err.strip().splitlines()) != 1:
                fail(f"locking {locking or 'on'}: a writer failed with {rc}: {err.strip()}")
        rows = check_results(out, f"locking {locking or 'on'}", before) or []
        if len(rows) != expected:
            fail(f"locking {locking or 'on'}: {len(rows)} points, expected {expected} "
                 f"(exits {[r[0] for r in results]})")
        print(f"three writers at once, HDF5 locking {locking or 'on'}: exits "
              f"{[r[0] for r in results]}, {len(rows) - len(before)} points added")


# ---- limits ----

def test_limits(exe):
    # OpenBLAS at its default thread count (the suite pins it to 1, where it starts no thread)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    try:
        rc, err = run([exe, "list"], env=env, limits=[(resource.RLIMIT_AS, 200000 * 1024)],
                      timeout=20)
    except subprocess.TimeoutExpired:
        fail("bench list under ulimit -v 200000 hangs")
        return
    if "Sanitizer" in err:
        print("skip: a sanitizer build cannot start under ulimit -v (its shadow memory)")
        sys.exit(77)
    expect_failure(rc, err, "bench list under ulimit -v 200000", ["address-space limit"])
    print(f"ulimit -v 200000: exit {rc}: {err.strip()}")
    # q, k, v, out of H = 8, n = 1024, D = 100000: 12.6 GiB, more than 6 GB of address space
    start = time.time()
    rc, err = run([exe, "run", "full", "--head-dim", "100000"], env=env,
                  limits=[(resource.RLIMIT_AS, 6 << 30)], timeout=60)
    if rc != 2 or len(err.splitlines()) != 1 or not all(
            w in err for w in ("needs 12.6 GiB", "left under ulimit -v", "bytes")):
        fail(f"--head-dim 100000 under ulimit -v 6 GiB: exit {rc}, expected 2 and one line with "
             f"the bytes needed and left: {err.strip()}")
    print(f"--head-dim 100000 under ulimit -v 6 GiB: exit {rc} in {time.time() - start:.1f} s: "
          f"{err.strip()}")
    yardstick_memory(exe, env)


def yardstick_memory(exe, env):
    """A stored run measures the yardsticks (quick ones off: their real size); its peak RSS
    follows the bandwidth buffer (8 x the last-level cache, 64 MiB to 1 GiB), not 1 GiB."""
    caches = []  # (level, bytes) of the data and unified caches, as bench_llc_bytes reads them
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(f"{base}/{index}/type") as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(f"{base}/{index}/level") as f:
                level = int(f.read())
            with open(f"{base}/{index}/size") as f:
                size = f.read().strip()
            caches.append((level, int(size[:-1]) << (20 if size.endswith("M") else 10)))
        except (OSError, ValueError):
            continue
    llc = max(caches)[1] if caches else 0
    if not llc or 8 * llc > 512 << 20:
        print(f"yardstick memory: skipped (last-level cache {llc} bytes: the buffer may be 1 GiB)")
        return
    quick = {k: v for k, v in env.items() if k != "BENCH_TEST_QUICK_YARDSTICKS"}
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([exe, "run", "full", "--n", "64", "--threads", "2", "--reps", "1",
                              "--out", os.path.join(d, "r.h5")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=quick)
        _, status, usage = os.wait4(p.pid, 0)
        err = p.stderr.read().decode()
    peak = usage.ru_maxrss * 1024
    limit = max(8 * llc, 64 << 20) + (256 << 20)
    if os.waitstatus_to_exitcode(status) != 0 or peak > limit:
        fail(f"run full --n 64 --out: exit {os.waitstatus_to_exitcode(status)}, peak RSS "
             f"{peak >> 20} MiB, expected under {limit >> 20} MiB (last-level cache "
             f"{llc >> 20} MiB): {err.strip()}")
    print(f"run full --n 64 --out with its yardsticks: peak RSS {peak >> 20} MiB "
          f"(last-level cache {llc >> 20} MiB)")


# ---- paths: what is read and written ----

def one_line(rc, err, what, words, want_rc=2):
    lines = [l for l in err.splitlines() if l.strip()]
    if rc != want_rc or len(lines) != 1 or not all(w in lines[0] for w in words):
        fail(f"{what}: exit {rc}, expected {want_rc} and one line with {words}: {err.strip()}")
        return False
    return True


def results_file(exe, path):
    rc, err = run([exe, "run", "full", "--n", "16", "--heads", "2", "--reps", "1", "--warmup", "0",
                   "--min-time", "0", "--out", path])
    if rc != 0:
        fail(f"cannot make the results file {path}: {err.strip()}")


def test_fifo(exe, tmp):
    """A FIFO is no file to read or write: refused at once, never opened (which would wait for a
    writer forever)."""
    fifo, good = os.path.join(tmp, "fifo"), os.path.join(tmp, "good.h5")
    os.mkfifo(fifo)
    results_file(exe, good)
    cases = [["run", "full", "--input", fifo], ["run", "full", "--dataset", f"file={fifo}"],
             ["sweep", "--kinds", "full", "--dataset", f"file={fifo}",
              "--out", os.path.join(tmp, "s.h5")],
             ["fit", fifo], ["plot", fifo], ["report", fifo, "--out", os.path.join(tmp, "r.html")],
             ["export", fifo, "--format", "csv"], ["compare", fifo, good], ["compare", good, fifo],
             ["run", "full", "--n", "16", "--out", fifo], ["run", "full", "--n", "16", "--output", fifo],
             ["sweep", "--kinds", "full", "--n", "16", "--out", fifo],
             ["export", good, "--format", "csv", "--out", fifo],
             ["report", good, "--out", fifo]]
    for args in cases:
        what = "bench " + " ".join(args)
        try:
            rc, err = run([exe, *args], timeout=20)
        except subprocess.TimeoutExpired:
            fail(f"{what}: no answer in 20 s (waiting on the FIFO?)")
            continue
        one_line(rc, err, what, [fifo, "is a FIFO"])
    if not stat_is_fifo(fifo):
        fail("the FIFO was replaced")
    print(f"FIFO: {len(cases)} commands refused it at once")


def stat_is_fifo(path):
    import stat
    return stat.S_ISFIFO(os.lstat(path).st_mode)


def as_nobody():
    """preexec_fn: run as nobody when we are root (root reads any file), else as we are."""
    default_signals()
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


def test_permission(exe, tmp):
    """An input the user may not read: "cannot read X: Permission denied", exit 2."""
    os.chmod(tmp, 0o755)  # nobody enters it
    d = os.path.join(tmp, "perm")
    os.mkdir(d)
    os.chmod(d, 0o777)
    good, qkv = os.path.join(d, "good.h5"), os.path.join(d, "qkv.h5")
    results_file(exe, good)
    with h5py.File(qkv, "w") as f:
        for name in "qkv":
            f[name] = [[[[1.0] * 8] * 16] * 2]
    for path in (good, qkv):
        os.chmod(path, 0o000)
    cases = [["run", "full", "--input", qkv], ["fit", good], ["plot", good],
             ["export", good, "--format", "csv"], ["compare", good, good],
             ["report", good, "--out", os.path.join(d, "r.html")]]
    for args in cases:
        p = subprocess.run([exe, *args], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=as_nobody, timeout=60)
        one_line(p.returncode, p.stderr.decode(errors="replace"), "bench " + " ".join(args),
                 ["cannot read", "Permission denied"])
    print(f"permission denied: {len(cases)} commands said so")


def test_non_utf8(exe, tmp):
    """A --out path that is not UTF-8: the command stored escaped ($'...\\xff...'), every
    string column decodes as UTF-8 (the README's pandas line), and the file is not damaged."""
    out = os.path.join(tmp, "bad").encode() + b"\xff.h5"
    p = subprocess.run([exe.encode(), b"run", b"full", b"--n", b"16", b"--heads", b"2",
                        b"--reps", b"1", b"--warmup", b"0", b"--min-time", b"0", b"--out", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0 or not os.path.exists(out):
        fail(f"run --out non-UTF-8: exit {p.returncode}: {p.stderr.decode(errors='replace')}")
        return
    import pandas as pd
    with h5py.File(out, "r") as f:
        for table in ("runs", "points", "run_status"):
            try:
                pd.DataFrame(f[table][:]).apply(
                    lambda c: c.str.decode("utf-8") if c.dtype == object else c)
            except UnicodeDecodeError as e:
                fail(f"/{table} of a run with a non-UTF-8 --out does not decode: {e}")
        command = f["runs"][0]["command"].decode("utf-8", errors="replace")
    if "--out $'" not in command or "bad\\xff.h5'" not in command:
        fail(f"the command of a non-UTF-8 --out is stored as {command!r}, expected $'...\\xff.h5'")
    print(f"non-UTF-8 --out: stored as {command.split('--out ')[-1]}")


def test_nothing_to_draw(exe, tmp):
    """sweep --plots DIR of a run with one n: the results are saved, no figure, said, exit 0."""
    out, plots = os.path.join(tmp, "one-n.h5"), os.path.join(tmp, "one-n-plots")
    p = subprocess.run([exe, "sweep", "--kinds", "full", "--n", "64", "--reps", "1", "--warmup",
                        "0", "--min-time", "0", "--quiet", "--plots", plots, "--out", out],
                       capture_output=True, text=True)
    if p.returncode != 0 or "nothing to draw" not in p.stdout or "plots" in p.stderr or \
            not os.path.exists(out):
        fail(f"sweep --plots with nothing to draw: exit {p.returncode} (expected 0), stdout "
             f"{p.stdout.strip()!r}, stderr {p.stderr.strip()!r}, results saved: "
             f"{os.path.exists(out)}")
    else:
        print(f"--plots, nothing to draw: exit 0: {p.stdout.strip().splitlines()[-1]}")


def test_paths(exe, tmp):
    test_fifo(exe, tmp)
    test_permission(exe, tmp)
    test_non_utf8(exe, tmp)
    test_nothing_to_draw(exe, tmp)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    what, exe = sys.argv[1], os.path.abspath(sys.argv[2])
    seed = int(os.environ.get("BENCH_TEST_SEED", "16"))
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="bench-files-")
    start = time.time()
    try:
        if what == "signals":
            print(f"seed {seed}")
            test_signals(exe, tmp, rng)
        elif what == "disk":
            test_fsize(exe, tmp)
            test_tmpfs(exe, tmp)
        elif what == "concurrent":
            test_concurrent(exe, tmp)
        elif what == "limits":
            test_limits(exe)
        elif what == "interrupt":
            test_interrupt(exe, tmp)
        elif what == "paths":
            test_paths(exe, tmp)
        else:
            print(__doc__)
            return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{what}: {len(FAILURES)} failure(s) in {time.time() - start:.1f} s")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
