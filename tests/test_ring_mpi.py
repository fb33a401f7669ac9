#!/usr/bin/python3
"""test_ring_mpi.py: the `ring` kind under `mpirun -n 2` and `-n 3` against numpy float64 and `full`.

For each case (ranks, shape, causal, parameters) it writes random q [B,H,T,D], k and v [B,Hkv,S,D]
to an HDF5 file, runs `mpirun -n R bench run ring --input qkv.h5 --output o.h5` (rank 0 reads the
file and broadcasts it, every rank computes its own rows, rank 0 gathers and writes `o`), and
compares `o` with softmax attention computed independently in numpy float64, and with `bench run
full` on the same file (one process). The cases cover causal and not, T != S (both ways), Hkv < H
(grouped and one KV head), n not divisible by R (and fewer rows than chunks: empty chunks), B = 2,
ALiBi and soft-capping, and the newest queries only (--q-len, decode-like). The largest case is
the acceptance example: `mpirun -n 3 bench run ring --causal 1 --input qkv.h5 --output o.h5` at
n = 3000.
It also checks what rank 0 prints: the ring line with R ranks, bytes sent and the overlap.
Oversubscribed (--oversubscribe) and, when root, allowed to run as root; 1 thread per rank.
Target: relative L2 error <= 1e-5 against float64; ring and full within 1e-5 of each other.
Usage: /usr/bin/python3 tests/test_ring_mpi.py [path/to/bench]  (needs python3-h5py, mpirun)
Run by the `ring_mpi` test of ./bench test. Exits 77 (skipped) when mpirun is missing or the
bench binary was built without MPI (a run under mpirun then sees 1 rank).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bench")
TARGET = 1e-5
FAST = ["--threads", "1", "--reps", "1", "--warmup", "0", "--warmup-time", "0", "--min-time", "0"]

# (ranks, B, H, Hkv, T, S, D, causal, kind parameters, extra options)
CASES = [
    (2, 1, 4, 4, 64, 64, 16, 0, [], []),
    (2, 1, 4, 4, 64, 64, 16, 1, [], []),
    (2, 2, 4, 2, 37, 45, 8, 1, [], []),              # T != S, grouped heads, B = 2
    (2, 1, 4, 1, 45, 37, 8, 0, ["block_q=8", "block_k=5"], []),  # T > S, one KV head, many tiles
    (3, 1, 4, 2, 100, 31, 8, 1, [], []),             # n % 3 != 0, T > S: early rows see nothing
    (3, 1, 2, 2, 5, 7, 8, 0, [], []),                # fewer rows than 2R chunks: empty chunks
    (3, 1, 4, 2, 61, 61, 8, 1, ["alibi=1", "softcap=5"], []),
    (3, 1, 4, 2, 50, 50, 8, 1, [], ["--q-len", "2"]),  # the 2 newest queries against 50 keys
    (3, 1, 8, 2, 3000, 3000, 32, 1, [], []),         # the acceptance example at n = 3000
]


def mpirun(ranks):
    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def reference(q, k, v, causal, alibi, softcap):
    """Softmax attention in float64, query head h reading KV head h // (H/Hkv); the score
    modifiers as their definition says (softcap C·tanh(s/C), then ALiBi -m_h·|p - j|)."""
    B, H, T, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    i, j = np.arange(T)[:, None] + S - T, np.arange(S)[None, :]
    mask = (j <= i) if causal else np.ones((T, S), bool)
    out = np.zeros((B, H, T, D))
    for b in range(B):
        for h in range(H):
            g = h // (H // Hkv)
            s = q[b, h].astype(np.float64) @ k[b, g].astype(np.float64).T / np.sqrt(D)
            if softcap > 0:
                s = softcap * np.tanh(s / softcap)
            if alibi:  # H a power of two here: m_h = 2^(-8(h+1)/H)
                s = s - 2.0 ** (-8.0 * (h + 1) / H) * np.abs(i - j)
            s = np.where(mask, s, -np.inf)
            top = s.max(-1, keepdims=True)
            p = np.exp(s - np.where(np.isfinite(top), top, 0))
            den = p.sum(-1, keepdims=True)
            p = np.divide(p, den, out=np.zeros_like(p), where=den > 0)
            out[b, h] = p @ v[b, g].astype(np.float64)
    return out


def rel(a, b):
    n = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (n if n > 0 else 1.0)


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print(f"FAIL {what}: exit {r.returncode}\n{' '.join(cmd)}\n{r.stdout}{r.stderr}")
        return None
    return r.stdout


def check(tmp, case, rng):
    ranks, B, H, Hkv, T, S, D, causal, params, extra = case
    what = f"R={ranks} B={B} H={H} Hkv={Hkv} T={T} S={S} D={D} causal={causal} {params} {extra}"
    path, o_ring, o_full = (os.path.join(tmp, n) for n in ("qkv.h5", "ring.h5", "full.h5"))
    for p in (path, o_ring, o_full):
        if os.path.exists(p):
            os.remove(p)
    q = rng.standard_normal((B, H, T, D)).astype(np.float32)
    k = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
    v = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
    with h5py.File(path, "w") as f:
        f["q"], f["k"], f["v"] = q, k, v
    common = ["--causal", str(causal), "--input", path] + extra + FAST
    out = run(mpirun(ranks) + [bench, "run", "ring"] + params + common + ["--output", o_ring], what)
    if out is None or run([bench, "run", "full"] + params + common + ["--output", o_full],
                          what + " (full)") is None:
        return False
    line = re.search(rf"ring on (\d+) ranks?: .* sent ([0-9.]+ \S+), overlap ([0-9.]+)%", out)
    if not line or int(line.group(1)) != ranks:
        print(f"FAIL {what}: no 'ring on {ranks} ranks' line with bytes and overlap:\n{out}")
        return False
    with h5py.File(o_ring, "r") as f:
        got = f["o"][()]
    with h5py.File(o_full, "r") as f:
        full = f["o"][()]
    if "--q-len" in extra:
        Tq = int(extra[extra.index("--q-len") + 1])
        q = q[:, :, T - Tq:]  # the newest queries (last positions)
    want = reference(q, k, v, causal, "alibi=1" in params,
                     float(next((p[8:] for p in params if p.startswith("softcap=")), 0)))
    e64, efull = rel(got, want), rel(got, full.astype(np.float64))
    ok = got.shape == want.shape and e64 <= TARGET and efull <= TARGET
    print(f"{'ok  ' if ok else 'FAIL'} {what}: vs float64 {e64:.2e}, vs full {efull:.2e}; "
          f"sent {line.group(2)}, overlap {line.group(3)} %")
    return ok


def main():
    if not shutil.which("mpirun"):
        print("skipped: no mpirun (apt-get install openmpi-bin)")
        return 77
    os.environ["OMP_NUM_THREADS"] = "1"
    probe = subprocess.run(mpirun(2) + [bench, "run", "ring", "--n", "16"] + FAST,
                           capture_output=True, text=True, timeout=120)
    if probe.returncode == 0 and "ring on 1 rank:" in probe.stdout:
        print("skipped: bench was built without MPI (-Dmpi=disabled or no libopenmpi-dev)")
        return 77
    rng = np.random.default_rng(15)
    with tempfile.TemporaryDirectory() as tmp:
        failed = sum(not check(tmp, case, rng) for case in CASES)
    print(f"{len(CASES) - failed} of {len(CASES)} ring cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
