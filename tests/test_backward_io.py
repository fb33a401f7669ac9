#!/usr/bin/python3
"""test_backward_io.py: `bench run --pass backward --input/--output` against numpy float64.

A file holding q [B,H,T,D], k, v [B,Hkv,S,D] and do [B,H,T,D] (the gradient of a loss with
respect to the output) goes through `bench run KIND --pass backward --input f.h5 --output g.h5`;
the gradients dq [B,H,T,D], dk and dv [B,Hkv,S,D] it writes beside `o` must reproduce the
gradients of the kind's definition computed independently here in numpy float64 (written from
`bench list --verbose`, not from the C code), to <= 1e-5 relative L2 each:
  - full, non-causal, cross attention (T != S), and gqa causal (Hkv < H);
  - window (a block-sparse kind: masked softmax over |p - j| < w);
  - linear (map elu: phi(x) = elu(x) + 1), causal and not.
Then `--pass train` writes the same gradients (o from the same forward), and a file without
`do` still runs (dout generated from the seed).
Softmax gradient, per head with P the masked row softmax of scale * Q K^T:
  dV = P^T dO, dP = dO V^T, dS = P o (dP - rowsum(dO o O)), dQ = scale dS K, dK = scale dS^T Q;
grouped KV heads sum dK, dV over the query heads of their group.
Usage: /usr/bin/python3 tests/test_backward_io.py [path/to/bench]   (needs python3-h5py)
Run by the `backward_io` test of ./bench test.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bench")
TARGET = 1e-5


def positions(T, S):
    """Query i sits at position i + S - T (the newest T positions of S)."""
    return np.arange(T)[:, None] + S - T, np.arange(S)[None, :]


def full_mask(T, S, causal, params):
    p, j = positions(T, S)
    return (j <= p) if causal else np.ones((T, S), bool)


def window_mask(T, S, causal, params):
    p, j = positions(T, S)
    near = np.abs(p - j) < params["window"]
    return near & (j <= p) if causal else near


def softmax_grads(qh, kh, vh, do, mask):
    """dq, dk, dv of one head of masked softmax attention (rows without keys: 0)."""
    scale = 1 / np.sqrt(qh.shape[1])
    s = np.where(mask, scale * qh @ kh.T, -np.inf)
    top = np.max(s, 1, keepdims=True)
    top[~np.isfinite(top)] = 0
    e = np.exp(s - top)
    den = e.sum(1, keepdims=True)
    P = np.divide(e, den, out=np.zeros_like(e), where=den > 0)
    o = P @ vh
    dv = P.T @ do
    dP = do @ vh.T
    dS = P * (dP - (do * o).sum(1, keepdims=True))
    return scale * dS @ kh, scale * dS.T @ qh, dv


def elu1(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def elu1_grad(x):
    return np.where(x > 0, 1.0, np.exp(np.minimum(x, 0)))


def linear_grads(qh, kh, vh, do, mask):
    """dq, dk, dv of one head of linear attention with phi = elu + 1: A = phi(Q) phi(K)^T o mask,
    O = A V / A 1."""
    fq, fk = elu1(qh), elu1(kh)
    A = (fq @ fk.T) * mask
    den = A.sum(1, keepdims=True)
    o = (A @ vh) / den
    dnum = do / den
    dA = (dnum @ vh.T - (do * o).sum(1, keepdims=True) / den) * mask
    return (dA @ fk) * elu1_grad(qh), (dA.T @ fq) * elu1_grad(kh), A.T @ dnum


def reference(q, k, v, do, causal, mask_of, grads_of, params):
    B, H, T, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    mask = mask_of(T, S, causal, params)
    f = lambda a: a.astype(np.float64)
    for b in range(B):
        for h in range(H):
            g = h // (H // Hkv)
            a, c, e = grads_of(f(q[b, h]), f(k[b, g]), f(v[b, g]), f(do[b, h]), mask)
            dq[b, h] += a
            dk[b, g] += c
            dv[b, g] += e
    return dq, dk, dv


def rel_l2(x, ref):
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def bench_run(args):
    return subprocess.run([bench, "run"] + args + ["--reps", "1", "--warmup", "0"],
                          capture_output=True, text=True)


CASES = [
    # label, kind args, causal, shape (B, H, Hkv, T, S, D), mask, grads, params
    ("full", ["full"], 0, (2, 4, 4, 37, 53, 16), full_mask, softmax_grads, {}),
    ("gqa causal", ["gqa"], 1, (1, 8, 2, 61, 61, 8), full_mask,
     softmax_grads, {}),
    ("window w=9 causal", ["window", "window=9"], 1, (2, 2, 1, 70, 70, 8), window_mask,
     softmax_grads, {"window": 9}),
    ("linear elu", ["linear", "map=elu"], 0, (2, 4, 2, 33, 47, 8), full_mask, linear_grads, {}),
    ("linear elu causal", ["linear", "map=elu", "chunk=7"], 1, (1, 2, 2, 45, 45, 4), full_mask,
     linear_grads, {}),
]


def check(tmp, label, args, causal, shape, mask_of, grads_of, params, seed):
    B, H, Hkv, T, S, D = shape
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, H, T, D)).astype(np.float32)
    k = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
    v = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
    do = rng.standard_normal((B, H, T, D)).astype(np.float32)
    qkv, out = os.path.join(tmp, "qkv.h5"), os.path.join(tmp, "g.h5")
    with h5py.File(qkv, "w") as f:
        f["q"], f["k"], f["v"], f["do"] = q, k, v, do
    ref = reference(q, k, v, do, causal, mask_of, grads_of, params)
    ok = True
    for pass_ in ("backward", "train"):
        if os.path.exists(out):
            os.remove(out)
        r = bench_run(args + ["--causal", str(causal), "--pass", pass_, "--input", qkv,
                              "--output", out])
        if r.returncode != 0:
            print(f"{label} --pass {pass_}: bench failed: {r.stderr.strip()}")
            ok = False
            continue
        with h5py.File(out, "r") as f:
            errs = [rel_l2(f[n][:], x) for n, x in zip(("dq", "dk", "dv"), ref)]
        good = max(errs) <= TARGET
        print(f"{label} --pass {pass_}: B={B} H={H} Hkv={Hkv} T={T} S={S} D={D}: rel L2 dq "
              f"{errs[0]:.2e} dk {errs[1]:.2e} dv {errs[2]:.2e} (target <= {TARGET:g}): "
              f"{'yes' if good else 'no'}")
        ok &= good
    return ok


def check_generated(tmp):
    """Without `do` in the file: generated from the seed, the same for the same seed."""
    rng = np.random.default_rng(7)
    qkv = os.path.join(tmp, "plain.h5")
    with h5py.File(qkv, "w") as f:
        for n, t in (("q", 40), ("k", 40), ("v", 40)):
            f[n] = rng.standard_normal((1, 2, t, 8)).astype(np.float32)
    got = []
    for i in range(2):
        out = os.path.join(tmp, f"gen{i}.h5")
        r = bench_run(["full", "--pass", "backward", "--input", qkv, "--output", out])
        if r.returncode != 0:
            print(f"generated dout: bench failed: {r.stderr.strip()}")
            return False
        with h5py.File(out, "r") as f:
            got.append(f["dq"][:])
    good = np.array_equal(got[0], got[1]) and np.linalg.norm(got[0]) > 0
    print(f"generated dout: dq repeatable and nonzero: {'yes' if good else 'no'}")
    return good


ok = True
with tempfile.TemporaryDirectory() as tmp:
    for n, case in enumerate(CASES):
        ok &= check(tmp, *case, seed=n)
    ok &= check_generated(tmp)
sys.exit(0 if ok else 1)
