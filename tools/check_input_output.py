#!/usr/bin/python3
"""check_input_output.py: `bench run full --input/--output` against numpy in float64.

Writes random q [B,H,T,D], k and v [B,Hkv,S,D] (GQA, cross attention) to an HDF5 file, runs
`bench run full` on it, causal and not, and compares the output `o` with softmax attention
computed independently in numpy float64. Target: relative L2 error <= 1e-5.
Usage: /usr/bin/python3 tools/check_input_output.py [path/to/bench]   (needs python3-h5py)
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bench")
B, H, Hkv, T, S, D = 2, 8, 2, 300, 517, 64
rng = np.random.default_rng(0)
q = (2 * rng.standard_normal((B, H, T, D))).astype(np.float32)
k = (2 * rng.standard_normal((B, Hkv, S, D))).astype(np.float32)
v = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
ok = True
with tempfile.TemporaryDirectory() as tmp:
    qkv, out = os.path.join(tmp, "qkv.h5"), os.path.join(tmp, "o.h5")
    with h5py.File(qkv, "w") as f:
        f["q"], f["k"], f["v"] = q, k, v
    kk = np.repeat(k.astype(np.float64), H // Hkv, axis=1)
    vv = np.repeat(v.astype(np.float64), H // Hkv, axis=1)
    for causal in (0, 1):
        subprocess.run([bench, "run", "full", "--causal", str(causal), "--input", qkv,
                        "--output", out, "--reps", "2"], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(out, "r") as f:
            o = f["o"][:]
        s = q.astype(np.float64) @ kk.transpose(0, 1, 3, 2) / np.sqrt(D)
        if causal:
            i, j = np.arange(T)[:, None], np.arange(S)[None, :]
            s = np.where(j <= i + S - T, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        ref = (p / p.sum(-1, keepdims=True)) @ vv
        err = np.linalg.norm(o - ref) / np.linalg.norm(ref)
        ok &= bool(err <= 1e-5)
        print(f"causal={causal}: B={B} H={H} Hkv={Hkv} T={T} S={S} D={D}  rel L2 vs numpy float64 "
              f"= {err:.2e}  (target <= 1e-5): {'yes' if err <= 1e-5 else 'no'}")
sys.exit(0 if ok else 1)
