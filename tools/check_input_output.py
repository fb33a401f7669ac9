#!/usr/bin/python3
"""check_input_output.py: `bench run --input/--output` against numpy in float64.

1. `full`: writes random q [B,H,T,D], k and v [B,Hkv,S,D] (GQA, cross attention) to an HDF5
   file, runs `bench run full` on it, causal and not, and compares the output `o` with softmax
   attention computed independently in numpy float64.
2. Kinds with weights (the table WEIGHTED below): with the weights in the file beside q, k, v
   (datasets named by weight), `o` reproduces the kind's numpy float64 definition computed with
   those weights, and --output writes them back unchanged; without them in the file the kind
   draws them from its seed, the row records `weights=seed`, and --output writes the drawn ones
   (the numpy definition with those reproduces `o`); a weight of other dims exits 2 with one
   line naming it.
Target: relative L2 error <= 1e-5.
Usage: /usr/bin/python3 tools/check_input_output.py [path/to/bench]   (needs python3-h5py)
Run by the `input_output` test of ./bench test.
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bench")
TARGET = 1e-5


def visible(T, S, causal):
    """[T, S] mask of the keys each query sees: all, or j <= i + S - T when causal."""
    i, j = np.arange(T)[:, None], np.arange(S)[None, :]
    return (j <= i + S - T) if causal else np.ones((T, S), bool)


def per_head(q, k, v, causal, head):
    """Apply head(qh [T,D], kh [S,D], vh [S,D], mask [T,S]) -> [T,D] to every (b, h) in float64,
    query head h reading KV head h // (H/Hkv)."""
    B, H, T, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    out = np.zeros((B, H, T, D))
    mask = visible(T, S, causal)
    for b in range(B):
        for h in range(H):
            g = h // (H // Hkv)
            out[b, h] = head(q[b, h].astype(np.float64), k[b, g].astype(np.float64),
                             v[b, g].astype(np.float64), mask)
    return out


def softmax_head(qh, kh, vh, mask):
    s = np.where(mask, qh @ kh.T / np.sqrt(qh.shape[1]), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ vh


def linear_favor(q, k, v, causal, w, params):
    """Performer FAVOR+ with projections W = w["features"] [m, D]: x = q / D^(1/4),
    kappa(x, y) = sum_l exp(w_l.x - |x|^2/2) exp(w_l.y - |y|^2/2) (the 1/m cancels), in log
    space per pair; out_i = sum_j kappa_ij v_j / sum_j kappa_ij over the visible keys."""
    W = w["features"].astype(np.float64)

    def head(qh, kh, vh, mask):
        r = qh.shape[1] ** -0.25
        a = (qh * r) @ W.T - 0.5 * ((qh * r) ** 2).sum(1, keepdims=True)  # [T, m]
        b = (kh * r) @ W.T - 0.5 * ((kh * r) ** 2).sum(1, keepdims=True)  # [S, m]
        t = a[:, None, :] + b[None, :, :]                                  # [T, S, m]
        mx = t.max(-1, keepdims=True)
        logk = np.where(mask, (mx[..., 0] + np.log(np.exp(t - mx).sum(-1))), -np.inf)
        rows = np.isfinite(logk).any(1)
        p = np.zeros_like(logk)
        p[rows] = np.exp(logk[rows] - logk[rows].max(1, keepdims=True))
        den = p.sum(1, keepdims=True)
        return np.divide(p @ vh, den, out=np.zeros((qh.shape[0], vh.shape[1])), where=den > 0)

    return per_head(q, k, v, causal, head)


def linear_trig(q, k, v, causal, w, params):
    """RFA random Fourier features with W = w["features"] [m, D]: x = q / D^(1/4), key weight
    e_j = exp(|y_j|^2/2), kappa_ij = e_j sum_l cos(w_l.(x_i - y_j)) (a per-row factor of the
    query dropped, as the kind does); den_i = max(sum_j kappa_ij, 1e-3 m sum_j e_j) over the
    visible keys; a row that sees no key is 0."""
    W = w["features"].astype(np.float64)
    m = W.shape[0]

    def head(qh, kh, vh, mask):
        r = qh.shape[1] ** -0.25
        u, z = (qh * r) @ W.T, (kh * r) @ W.T                             # [T, m], [S, m]
        h = 0.5 * ((kh * r) ** 2).sum(1)
        e = np.exp(h - h.max())                                           # e_j up to a constant
        kappa = (np.cos(u[:, None, :] - z[None, :, :]).sum(-1) * e[None, :]) * mask
        den = np.maximum(kappa.sum(1), 1e-3 * m * (mask * e[None, :]).sum(1))[:, None]
        return np.divide(kappa @ vh, den, out=np.zeros((qh.shape[0], vh.shape[1])), where=den > 0)

    return per_head(q, k, v, causal, head)


# Kinds with weights: name -> the kind, its parameters for `bench run`, the causal values its
# definition covers, its weights as given in the file (name -> array, from the shape and an rng),
# and its numpy float64 definition f(q, k, v, causal, weights, params) -> o.
# Hook for the other kinds of issue 11 (the integrator fills these in as they land):
#   linformer  weights proj_k, proj_v  (causal: (0,))
#   reformer   weights rotations
#   additive   weights w1, w2, va
#   bilinear   weights w
WEIGHTED = {
    "linear map=favor": dict(kind="linear", params=["map=favor", "features=24"], causal=(0, 1),
                             weights=lambda sh, rng: {"features": rng.standard_normal((24, sh["D"]))},
                             ref=linear_favor),
    "linear map=trig": dict(kind="linear", params=["map=trig", "features=24"], causal=(0, 1),
                            weights=lambda sh, rng: {"features": rng.standard_normal((24, sh["D"]))},
                            ref=linear_trig),
}


def rel_l2(o, ref):
    return float(np.linalg.norm(o - ref) / np.linalg.norm(ref))


def report(label, err):
    print(f"{label}: rel L2 vs numpy float64 = {err:.2e}  (target <= {TARGET:g}): "
          f"{'yes' if err <= TARGET else 'no'}")
    return err <= TARGET


def run(args):
    return subprocess.run([bench, "run"] + args + ["--reps", "2", "--warmup", "0"],
                          capture_output=True, text=True)


def write_qkv(path, q, k, v, weights=None):
    with h5py.File(path, "w") as f:
        f["q"], f["k"], f["v"] = q, k, v
        for name, a in (weights or {}).items():
            f[name] = a


def check_full(tmp):
    B, H, Hkv, T, S, D = 2, 8, 2, 300, 517, 64
    rng = np.random.default_rng(0)
    q = (2 * rng.standard_normal((B, H, T, D))).astype(np.float32)
    k = (2 * rng.standard_normal((B, Hkv, S, D))).astype(np.float32)
    v = rng.standard_normal((B, Hkv, S, D)).astype(np.float32)
    qkv, out = os.path.join(tmp, "qkv.h5"), os.path.join(tmp, "o.h5")
    write_qkv(qkv, q, k, v)
    ok = True
    for causal in (0, 1):
        r = run(["full", "--causal", str(causal), "--input", qkv, "--output", out])
        if r.returncode != 0:
            print(f"full causal={causal}: bench failed: {r.stderr.strip()}")
            ok = False
            continue
        with h5py.File(out, "r") as f:
            o = f["o"][:]
        ref = per_head(q, k, v, causal, softmax_head)
        ok &= report(f"full causal={causal}: B={B} H={H} Hkv={Hkv} T={T} S={S} D={D}",
                     rel_l2(o, ref))
    return ok


def check_weighted(tmp, label, e):
    """Given weights reproduce numpy; missing ones are drawn, recorded and written; wrong dims
    are refused with one line."""
    sh = dict(B=1, H=4, Hkv=2, T=37, S=53, D=16)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((sh["B"], sh["H"], sh["T"], sh["D"])).astype(np.float32)
    k = rng.standard_normal((sh["B"], sh["Hkv"], sh["S"], sh["D"])).astype(np.float32)
    v = rng.standard_normal((sh["B"], sh["Hkv"], sh["S"], sh["D"])).astype(np.float32)
    given = e["weights"](sh, rng)                                          # float64 in the file
    ok = True
    for causal in e["causal"]:
        for with_weights in (True, False):
            qkv, out = os.path.join(tmp, "w.h5"), os.path.join(tmp, "wo.h5")
            write_qkv(qkv, q, k, v, given if with_weights else None)
            r = run([e["kind"]] + e["params"] + ["--causal", str(causal), "--input", qkv,
                                                 "--output", out])
            what = f"{label} causal={causal} weights={'file' if with_weights else 'seed'}"
            if r.returncode != 0:
                print(f"{what}: bench failed: {r.stderr.strip()}")
                ok = False
                continue
            source = "weights=file" if with_weights else "weights=seed"
            if source not in r.stdout:
                print(f"{what}: the row does not record {source}: {r.stdout.strip()}")
                ok = False
            with h5py.File(out, "r") as f:
                o = f["o"][:]
                used = {name: f[name][:] for name in given}
                kinds = {name: f[name].attrs.get("kind") for name in given}
            for name in given:
                if kinds[name] not in (e["kind"], e["kind"].encode()):
                    print(f"{what}: --output's '{name}' lacks the attribute kind={e['kind']}")
                    ok = False
                if with_weights and not np.array_equal(used[name], given[name].astype(np.float32)):
                    print(f"{what}: --output's '{name}' is not the weight given")
                    ok = False
            ref = e["ref"](q, k, v, causal, used, e["params"])
            ok &= report(what, rel_l2(o, ref))
    for name, a in given.items():  # a weight of other dims: exit 2, one line naming it
        wrong = dict(given)
        wrong[name] = np.zeros((a.shape[0] + 1,) + a.shape[1:])
        write_qkv(os.path.join(tmp, "bad.h5"), q, k, v, wrong)
        r = run([e["kind"]] + e["params"] + ["--input", os.path.join(tmp, "bad.h5")])
        lines = r.stderr.strip().splitlines()
        good = r.returncode == 2 and len(lines) == 1 and f"'{name}'" in lines[0]
        print(f"{label}: weight '{name}' of dims {list(wrong[name].shape)}: exit {r.returncode}, "
              f"{lines}: {'refused' if good else 'NOT refused as expected'}")
        ok &= good
    return ok


ok = True
with tempfile.TemporaryDirectory() as tmp:
    ok &= check_full(tmp)
    for label, e in WEIGHTED.items():
        ok &= check_weighted(tmp, label, e)
sys.exit(0 if ok else 1)
