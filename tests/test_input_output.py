#!/usr/bin/python3
"""test_input_output.py: `bench run --input/--output` against numpy in float64.

1. `full`: writes random q [B,H,T,D], k and v [B,Hkv,S,D] (GQA, cross attention) to an HDF5
   file, runs `bench run full` on it, causal and not, and compares the output `o` with softmax
   attention computed independently in numpy float64.
2. Kinds with weights (the table WEIGHTED below: linear's two maps, linformer's three sharing
   modes, additive, bilinear, diff, reformer with and without shared QK): with the weights in the file
   beside q, k, v (datasets named by weight), `o` reproduces the kind's numpy float64 definition
   computed with those weights, and --output writes them back unchanged; without them in the file
   the kind draws them from its seed, the row records `weights=seed`, and --output writes the
   drawn ones (the numpy definition with those reproduces `o`); a weight of other dims exits 2
   with one line naming it.
3. Kinds without weights that no other check compares with an independent definition (the table
   PLAIN: nystrom; the masks of sink, document and prefix; sigmoid at its default bias and at a
   fixed training length): `o` against numpy float64.
4. A float64 value beyond float32's range (1e300) in q is refused as what it is, not as "+Inf".
Every numpy definition here is written from the kind's `.definition` (bench list --verbose), not
from its C code. Shapes are small and odd (T != S, Hkv < H, B = 2) so that the whole check runs in
a few seconds.
Target: relative L2 error <= 1e-5.
Usage: /usr/bin/python3 tests/test_input_output.py [path/to/bench]   (needs python3-h5py)
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
SHAPE = dict(B=2, H=4, Hkv=2, T=37, S=45, D=8)  # of the WEIGHTED and PLAIN checks


def visible(T, S, causal):
    """[T, S] mask of the keys each query sees: all, or j <= i + S - T when causal."""
    i, j = np.arange(T)[:, None], np.arange(S)[None, :]
    return (j <= i + S - T) if causal else np.ones((T, S), bool)


def per_head(q, k, v, causal, head):
    """Apply head(qh [T,D], kh [S,D], vh [S,D], mask [T,S], g) -> [T,D] to every (b, h) in
    float64, query head h reading KV head g = h // (H/Hkv)."""
    B, H, T, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    out = np.zeros((B, H, T, D))
    mask = visible(T, S, causal)
    for b in range(B):
        for h in range(H):
            g = h // (H // Hkv)
            out[b, h] = head(q[b, h].astype(np.float64), k[b, g].astype(np.float64),
                             v[b, g].astype(np.float64), mask, g)
    return out


def masked_softmax(s, mask):
    """Row softmax of s over mask's True entries; a row with none is 0."""
    s = np.where(mask, s, -np.inf)
    top = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(top), top, 0))
    den = p.sum(-1, keepdims=True)
    return np.divide(p, den, out=np.zeros_like(p), where=den > 0)


def softmax(s):
    return masked_softmax(s, np.ones(s.shape, bool))


def softmax_head(qh, kh, vh, mask, g):
    return masked_softmax(qh @ kh.T / np.sqrt(qh.shape[1]), mask) @ vh


def param(params, name, default):
    """The value of `name=...` among the `bench run` parameters, else default."""
    for p in params:
        key, _, value = p.partition("=")
        if key == name:
            return value
    return default


def linear_favor(q, k, v, causal, w, params):
    """Performer FAVOR+ with projections W = w["features"] [m, D]: x = q / D^(1/4),
    kappa(x, y) = sum_l exp(w_l.x - |x|^2/2) exp(w_l.y - |y|^2/2) (the 1/m cancels), in log
    space per pair; out_i = sum_j kappa_ij v_j / sum_j kappa_ij over the visible keys."""
    W = w["features"].astype(np.float64)

    def head(qh, kh, vh, mask, g):
        r = qh.shape[1] ** -0.25
        a = (qh * r) @ W.T - 0.5 * ((qh * r) ** 2).sum(1, keepdims=True)  # [T, m]
        b = (kh * r) @ W.T - 0.5 * ((kh * r) ** 2).sum(1, keepdims=True)  # [S, m]
        t = a[:, None, :] + b[None, :, :]                                  # [T, S, m]
        mx = t.max(-1, keepdims=True)
        return masked_softmax(mx[..., 0] + np.log(np.exp(t - mx).sum(-1)), mask) @ vh

    return per_head(q, k, v, causal, head)


def linear_trig(q, k, v, causal, w, params):
    """RFA random Fourier features with W = w["features"] [m, D]: x = q / D^(1/4), key weight
    e_j = exp(|y_j|^2/2), kappa_ij = e_j sum_l cos(w_l.(x_i - y_j)) (a per-row factor of the
    query dropped, as the kind does); den_i = max(sum_j kappa_ij, 1e-3 m sum_j e_j) over the
    visible keys; a row that sees no key is 0."""
    W = w["features"].astype(np.float64)
    m = W.shape[0]

    def head(qh, kh, vh, mask, g):
        r = qh.shape[1] ** -0.25
        u, z = (qh * r) @ W.T, (kh * r) @ W.T                             # [T, m], [S, m]
        h = 0.5 * ((kh * r) ** 2).sum(1)
        e = np.exp(h - h.max())                                           # e_j up to a constant
        kappa = (np.cos(u[:, None, :] - z[None, :, :]).sum(-1) * e[None, :]) * mask
        den = np.maximum(kappa.sum(1), 1e-3 * m * (mask * e[None, :]).sum(1))[:, None]
        return np.divide(kappa @ vh, den, out=np.zeros((qh.shape[0], vh.shape[1])), where=den > 0)

    return per_head(q, k, v, causal, head)


def linformer(q, k, v, causal, w, params):
    """Wang et al. 2020: K' = E K, V' = F V (E = proj_k, F = proj_v; share=kv: F = E; share=none:
    E[g], F[g] of KV head g), out = softmax(q K'^T / sqrt(D)) V' over the k projected keys."""
    share = param(params, "share", "headwise")
    E = w["proj_k"].astype(np.float64)
    F = E if share == "kv" else w["proj_v"].astype(np.float64)

    def head(qh, kh, vh, mask, g):
        Eg, Fg = (E[g], F[g]) if share == "none" else (E, F)
        return softmax(qh @ (Eg @ kh).T / np.sqrt(qh.shape[1])) @ (Fg @ vh)

    return per_head(q, k, v, causal, head)


def additive(q, k, v, causal, w, params):
    """Bahdanau: e_ij = va . tanh(W1 q_i + W2 k_j) (no scale), out = softmax_j(e_ij) v_j over the
    visible keys."""
    W1, W2, va = (w[n].astype(np.float64) for n in ("w1", "w2", "va"))

    def head(qh, kh, vh, mask, g):
        e = np.tanh((qh @ W1.T)[:, None, :] + (kh @ W2.T)[None, :, :]) @ va  # [T, S]
        return masked_softmax(e, mask) @ vh

    return per_head(q, k, v, causal, head)


def bilinear(q, k, v, causal, w, params):
    """Luong 'general': out = softmax_j(q_i^T W k_j / sqrt(D)) v_j over the visible keys."""
    W = w["w"].astype(np.float64)

    def head(qh, kh, vh, mask, g):
        return masked_softmax(qh @ W @ kh.T / np.sqrt(qh.shape[1]), mask) @ vh

    return per_head(q, k, v, causal, head)


def diff(q, k, v, causal, w, params):
    """Differential attention: with h = D/2 halves q = [q1, q2], k = [k1, k2] and s = 1/sqrt(h),
    y = softmax(s q1 k1^T) v - lam softmax(s q2 k2^T) v over the visible keys, out = norm * y /
    sqrt(mean(y^2) + 1e-5) * (1 - lam_init); lam = exp(lq1.lk1) - exp(lq2.lk2) + lam_init,
    lam_init = 0.8 - 0.6 exp(-0.3 depth)."""
    lq1, lk1, lq2, lk2 = w["lambda"].astype(np.float64)
    norm = w["norm"].astype(np.float64)
    lam_init = 0.8 - 0.6 * np.exp(-0.3 * float(param(params, "depth", 0)))
    lam = np.exp(lq1 @ lk1) - np.exp(lq2 @ lk2) + lam_init

    def head(qh, kh, vh, mask, g):
        h = qh.shape[1] // 2
        a1 = masked_softmax(qh[:, :h] @ kh[:, :h].T / np.sqrt(h), mask) @ vh
        a2 = masked_softmax(qh[:, h:] @ kh[:, h:].T / np.sqrt(h), mask) @ vh
        y = a1 - lam * a2
        return norm * y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-5) * (1 - lam_init)

    return per_head(q, k, v, causal, head)


def lsh_buckets(x, R):
    """h(x) = argmax([x R ; -x R]) (first maximum) of the rows of x [n, D] under R [D, b/2], in
    float32 in the kind's order: y = (((x_0 R_0) + x_1 R_1) + ...) + x_{D-1} R_{D-1}, every
    product and sum rounded to float32 (the kind's hash routine: one multiply and one add per d,
    no FMA contraction under -std=c11). So the buckets are the kind's bit for bit, near-ties
    included, and the attention that follows is float64. (At this check's inputs no argmax is
    near a tie either: the smallest float64 margin between the two largest of [xR, -xR] is
    1.9e-4 with the rotations of the file, 1.1e-4 with the seed's, and float64 hashing gives the
    same buckets to all 476 rows in every round.)"""
    x, R = x.astype(np.float32), R.astype(np.float32)
    y = np.zeros((x.shape[0], R.shape[1]), np.float32)
    for d in range(x.shape[1]):
        y = y + x[:, d:d + 1] * R[d][None, :]
    return np.argmax(np.concatenate([y, -y], 1), 1)


def reformer(q, k, v, causal, w, params):
    """LSH attention as reformer's definition states: in round r, keys sorted by (h_r(k_j), j),
    slot_r(j) its rank; query i at p_i = i + S - T takes s_r(i) = #{j : (h_r(k_j), j) <
    (h_r(q_i), p_i)}; A_r(i) = same bucket and floor(slot_r(j)/c) in {floor(s_r(i)/c) - 1,
    floor(s_r(i)/c)}; causal: j <= p_i. Softmax over the union of the rounds' sets, each key
    once; scores scale q.k/|k| - 1e5 [j = p_i] (shared_qk=1) or scale q.k (0); empty: 0."""
    R = w["rotations"]                                                    # [n_r, D, b/2]
    c, shared = int(param(params, "chunk", 64)), param(params, "shared_qk", "1") == "1"

    def head(qh, kh, vh, mask, g):
        T, S = qh.shape[0], kh.shape[0]
        j, p = np.arange(S), np.arange(T) + S - T
        seen = np.zeros((T, S), bool)
        for Rr in R:
            kb, qb = lsh_buckets(kh, Rr), lsh_buckets(qh, Rr)
            slot = np.empty(S, int)
            slot[np.lexsort((j, kb))] = np.arange(S)
            same = kb[None, :] == qb[:, None]                                # [T, S]
            qslot = ((kb[None, :] < qb[:, None]) | (same & (j[None, :] < p[:, None]))).sum(1)
            cq, ck = (qslot // c)[:, None], (slot // c)[None, :]
            seen |= same & (ck >= cq - 1) & (ck <= cq)
        s = qh @ kh.T / np.sqrt(qh.shape[1])
        if shared:
            s = s / np.linalg.norm(kh, axis=1)[None, :] - 1e5 * (j[None, :] == p[:, None])
        return masked_softmax(s, seen & mask) @ vh

    return per_head(q, k, v, causal, head)


def nystrom(q, k, v, causal, w, params):
    """Xiong et al. 2021 as nystrom's definition states: m = min(landmarks, T, S), landmark l the
    mean of rows [floor(l n/m), floor((l+1) n/m)) (unequal segments when m does not divide n);
    F = softmax(Q K~^T s), A = softmax(Q~ K~^T s), B = softmax(Q~ K^T s), s = 1/sqrt(D);
    Z0 = A^T / (|A|_1 |A|_inf), pinv_iters steps Z <- Z (13I - AZ (15I - AZ (7I - AZ))) / 4;
    out = F Z (B V)."""
    L, iters = int(param(params, "landmarks", 64)), int(param(params, "pinv_iters", 6))

    def head(qh, kh, vh, mask, g):
        T, S, D = qh.shape[0], kh.shape[0], qh.shape[1]
        m = min(L, T, S)

        def means(x, n):
            return np.stack([x[l * n // m:(l + 1) * n // m].mean(0) for l in range(m)])

        Qt, Kt = means(qh, T), means(kh, S)
        F, A, Bm = (softmax(a @ b.T / np.sqrt(D)) for a, b in ((qh, Kt), (Qt, Kt), (Qt, kh)))
        Z = A.T / (np.abs(A).sum(0).max() * np.abs(A).sum(1).max())
        I = np.eye(m)
        for _ in range(iters):
            AZ = A @ Z
            Z = 0.25 * Z @ (13 * I - AZ @ (15 * I - AZ @ (7 * I - AZ)))
        return F @ (Z @ (Bm @ vh))

    return per_head(q, k, v, causal, head)


def positions(T, S):
    """[T, 1] query positions p = i + S - T and [1, S] key indices j."""
    return np.arange(T)[:, None] + S - T, np.arange(S)[None, :]


def sink_mask(T, S, causal, params):
    """sink: j < s, or p - j within w (current=extra: itself besides the w keys before it;
    current=counted: itself one of the w), on both sides without the causal mask."""
    s, w = int(param(params, "sinks", 4)), int(param(params, "window", 256))
    reach = w if param(params, "current", "extra") == "extra" else w - 1
    p, j = positions(T, S)
    d = p - j
    seen = (j < s) | (np.abs(d) <= reach)
    return seen & (d >= 0) if causal else seen


def document_mask(T, S, causal, params):
    """document: documents of L positions; p sees j iff floor(j/L) = floor(p/L) (p < 0: 0)."""
    L = int(param(params, "doc", 1024))
    p, j = positions(T, S)
    seen = np.maximum(p, 0) // L == j // L
    return seen & (j <= p) if causal else seen


def prefix_mask(T, S, causal, params):
    """prefix: a query in the prefix (0 <= p < P) sees j < P; any other sees j < P and, causal,
    j <= p (else every key). P = -1: S // 2."""
    P = int(param(params, "prefix", -1))
    P = S // 2 if P < 0 else P
    p, j = positions(T, S)
    rest = (j < P) | (j <= p) if causal else np.ones((T, S), bool)
    return np.where((p >= 0) & (p < P), j < P, rest)


def masked(mask_of):
    """The numpy definition of a softmax kind over the mask mask_of(T, S, causal, params)."""
    def ref(q, k, v, causal, w, params):
        mask = mask_of(q.shape[2], k.shape[2], causal, params)
        return per_head(q, k, v, causal, lambda qh, kh, vh, _, g: softmax_head(qh, kh, vh, mask, g))

    return ref


def sigmoid(q, k, v, causal, w, params):
    """Ramapuram et al. 2024: out_i = sum_j sigma(q_i.k_j / sqrt(D) + b) v_j over the visible keys,
    no normalisation; b = bias - ln n_b, n_b = bias_len, or S (the keys) when 0."""
    n_b = float(param(params, "bias_len", 0)) or k.shape[2]
    b = float(param(params, "bias", 0)) - np.log(n_b)

    def head(qh, kh, vh, mask, g):
        p = 1.0 / (1.0 + np.exp(-(qh @ kh.T / np.sqrt(qh.shape[1]) + b)))
        return (p * mask) @ vh

    return per_head(q, k, v, causal, head)


def normal(*dims):
    """Weights of the given dims (the shape's names or numbers), float64 from rng."""
    return lambda sh, rng, scale=1.0: scale * rng.standard_normal(
        tuple(sh[d] if isinstance(d, str) else d for d in dims))


def entry(kind, params, causal, weights, ref):
    return dict(kind=kind, params=params, causal=causal, weights=weights, ref=ref)


LIN_K, UNITS, BUCKETS, HASHES, CHUNK = 11, 12, 8, 3, 5


def diff_weights(sh, rng):
    """diff's lambda vectors (wider than drawn: lambda moves off lambda_init) and a norm gain."""
    return {"lambda": normal(4, sh["D"] // 2)(sh, rng, 0.5),
            "norm": 1 + normal("D")(sh, rng, 0.3)}


def linformer_entry(share):
    dims = ("Hkv", LIN_K, "S") if share == "none" else (LIN_K, "S")
    names = ("proj_k",) if share == "kv" else ("proj_k", "proj_v")
    return entry("linformer", [f"k={LIN_K}", f"share={share}"], (0,),
                 lambda sh, rng: {n: normal(*dims)(sh, rng, LIN_K ** -0.5) for n in names},
                 linformer)


def reformer_entry(shared_qk):
    return entry("reformer", [f"buckets={BUCKETS}", f"hashes={HASHES}", f"chunk={CHUNK}",
                              f"shared_qk={shared_qk}"], (0, 1),
                 lambda sh, rng: {"rotations": normal(HASHES, "D", BUCKETS // 2)(sh, rng)},
                 reformer)


# Kinds with weights: name -> the kind, its parameters for `bench run`, the causal values its
# definition covers, its weights as given in the file (name -> array, from the shape and an rng),
# and its numpy float64 definition f(q, k, v, causal, weights, params) -> o.
WEIGHTED = {
    "linear map=favor": entry("linear", ["map=favor", "features=24"], (0, 1),
                              lambda sh, rng: {"features": normal(24, "D")(sh, rng)}, linear_favor),
    "linear map=trig": entry("linear", ["map=trig", "features=24"], (0, 1),
                             lambda sh, rng: {"features": normal(24, "D")(sh, rng)}, linear_trig),
    "linformer share=none": linformer_entry("none"),
    "linformer share=headwise": linformer_entry("headwise"),
    "linformer share=kv": linformer_entry("kv"),
    "additive": entry("additive", [f"units={UNITS}"], (0, 1),
                      lambda sh, rng: {"w1": normal(UNITS, "D")(sh, rng, sh["D"] ** -0.5),
                                       "w2": normal(UNITS, "D")(sh, rng, sh["D"] ** -0.5),
                                       "va": normal(UNITS)(sh, rng)}, additive),
    "bilinear": entry("bilinear", [], (0, 1),
                      lambda sh, rng: {"w": normal("D", "D")(sh, rng, sh["D"] ** -0.5)}, bilinear),
    "diff": entry("diff", [], (0, 1), diff_weights, diff),
    "diff depth=5": entry("diff", ["depth=5"], (0, 1), diff_weights, diff),
    "reformer shared_qk=1": reformer_entry(1),
    "reformer shared_qk=0": reformer_entry(0),
}

# Kinds without weights: name -> the kind, its parameters, causal values, numpy definition.
# nystrom: 7 landmarks of T = 37 (segments of 5 and 6 rows) and S = 45 (6 and 7 keys). The masks
# of sink, document and prefix (block-sparse kinds, whose other tests compare them with the C mask
# predicate) written from their definitions: queries at p = i + 8, documents cut mid-row-block.
PLAIN = {
    "nystrom landmarks=7": entry("nystrom", ["landmarks=7", "pinv_iters=6"], (0,), None, nystrom),
    "sink sinks=3 window=6": entry("sink", ["sinks=3", "window=6"], (0, 1), None,
                                   masked(sink_mask)),
    "sink current=counted": entry("sink", ["sinks=2", "window=9", "current=counted"], (0, 1), None,
                                  masked(sink_mask)),
    "document doc=7": entry("document", ["doc=7"], (0, 1), None, masked(document_mask)),
    "document doc=20": entry("document", ["doc=20"], (0, 1), None, masked(document_mask)),
    "prefix prefix=20": entry("prefix", ["prefix=20"], (0, 1), None, masked(prefix_mask)),
    "prefix (P = S/2)": entry("prefix", [], (0, 1), None, masked(prefix_mask)),
    "sigmoid": entry("sigmoid", [], (0, 1), None, sigmoid),
    "sigmoid bias_len=1024,bias=0.5": entry("sigmoid", ["bias_len=1024", "bias=0.5"], (0, 1), None,
                                            sigmoid),
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


def run_io(args, qkv, out, what):
    """`bench run ARGS --input qkv --output out`; None, with a line, when it fails."""
    r = run(args + ["--input", qkv, "--output", out])
    if r.returncode != 0:
        print(f"{what}: bench failed: {r.stderr.strip()}")
        return None
    return r


def write_qkv(path, q, k, v, weights=None):
    with h5py.File(path, "w") as f:
        f["q"], f["k"], f["v"] = q, k, v
        for name, a in (weights or {}).items():
            f[name] = a


def random_qkv(sh, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((sh["B"], sh["H"], sh["T"], sh["D"])).astype(np.float32)
    k = rng.standard_normal((sh["B"], sh["Hkv"], sh["S"], sh["D"])).astype(np.float32)
    v = rng.standard_normal((sh["B"], sh["Hkv"], sh["S"], sh["D"])).astype(np.float32)
    return q, k, v, rng


def shape_label(sh):
    return " ".join(f"{n}={x}" for n, x in sh.items())


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
        if not run_io(["full", "--causal", str(causal)], qkv, out, f"full causal={causal}"):
            ok = False
            continue
        with h5py.File(out, "r") as f:
            o = f["o"][:]
        ref = per_head(q, k, v, causal, softmax_head)
        ok &= report(f"full causal={causal}: B={B} H={H} Hkv={Hkv} T={T} S={S} D={D}",
                     rel_l2(o, ref))
    return ok


def check_plain(tmp, label, e):
    """A kind without weights: `o` reproduces its numpy float64 definition."""
    q, k, v, _ = random_qkv(SHAPE, 2)
    qkv, out = os.path.join(tmp, "p.h5"), os.path.join(tmp, "po.h5")
    write_qkv(qkv, q, k, v)
    ok = True
    for causal in e["causal"]:
        what = f"{label} causal={causal}: {shape_label(SHAPE)}"
        if not run_io([e["kind"]] + e["params"] + ["--causal", str(causal)], qkv, out, what):
            ok = False
            continue
        with h5py.File(out, "r") as f:
            o = f["o"][:]
        ok &= report(what, rel_l2(o, e["ref"](q, k, v, causal, {}, e["params"])))
    return ok


def check_weighted(tmp, label, e):
    """Given weights reproduce numpy; missing ones are drawn, recorded and written; wrong dims
    are refused with one line."""
    q, k, v, rng = random_qkv(SHAPE, 1)
    given = e["weights"](SHAPE, rng)                                       # float64 in the file
    ok = True
    for causal in e["causal"]:
        for with_weights in (True, False):
            qkv, out = os.path.join(tmp, "w.h5"), os.path.join(tmp, "wo.h5")
            write_qkv(qkv, q, k, v, given if with_weights else None)
            what = f"{label} causal={causal} weights={'file' if with_weights else 'seed'}"
            r = run_io([e["kind"]] + e["params"] + ["--causal", str(causal)], qkv, out, what)
            if not r:
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


def check_beyond_float32(tmp):
    """A float64 value beyond float32's range (1e300) is named as what it is, not as +Inf; a true
    infinity still reads +Inf. Exit 2, one line."""
    rng = np.random.default_rng(7)
    ok = True
    for value, says in ((1e300, "q[0,1,3,2] is 1e+300, beyond float32's range"),
                        (-1e300, "q[0,1,3,2] is -1e+300, beyond float32's range"),
                        (np.inf, "q[0,1,3,2] is +Inf")):
        q, k, v = (rng.standard_normal((1, 2, 6, 4)) for _ in range(3))
        q[0, 1, 3, 2] = value
        path = os.path.join(tmp, "wide.h5")
        with h5py.File(path, "w") as f:
            f["q"], f["k"], f["v"] = q, k, v  # float64
        r = run(["full", "--input", path])
        lines = r.stderr.strip().splitlines()
        good = r.returncode == 2 and len(lines) == 1 and says in lines[0]
        print(f"float64 {value:g} in q: exit {r.returncode}, {lines}: "
              f"{'as expected' if good else 'NOT as expected'}")
        ok &= good
    return ok


ok = True
with tempfile.TemporaryDirectory() as tmp:
    ok &= check_beyond_float32(tmp)
    ok &= check_full(tmp)
    print(f"weighted and plain kinds: {shape_label(SHAPE)}")
    for label, e in WEIGHTED.items():
        ok &= check_weighted(tmp, label, e)
    for label, e in PLAIN.items():
        ok &= check_plain(tmp, label, e)
sys.exit(0 if ok else 1)
