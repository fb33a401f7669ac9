/*
 * diff — the Differential Transformer's attention (Ye et al. 2024): the difference of two softmax
 * attentions over the same values, softmax(Q1K1ᵀ) − λ·softmax(Q2K2ᵀ), each head normalised by
 * RMSNorm and scaled by (1 − λ_init). Definition: .definition below. Another function, not an
 * approximation of softmax attention: its accuracy is self_rel_err against its own float64
 * definition (rel_err against softmax(q·k) is meaningless).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv); D even
 *   weights (inputs, drawn from `seed` when not given): lambda [4, D/2] (rows λq1, λk1, λq2,
 *     λk2; N(0, 0.1²)), norm [D] (ones)
 *   layout: two passes of the dense engine (dense.c: tiled online softmax) at the engine's
 *     default parameters, on k and v in place and a query of D floats with the other half zero:
 *     Q1' = [Q1, 0] and Q2' = [0, Q2], so that Q1'·k = Q1·K1 and Q2'·k = Q2·K2, at the scale
 *     1/sqrt(D/2) (the shape's scale · √2). Then per row y = O1 − λ·O2, out = RMSNorm(y)·norm
 *     ·(1 − λ_init). The engine takes one head dimension for scores and values, so each pass
 *     multiplies D/2 zeros per score: the work done is 8·D per allowed score for the 6·D counted.
 *   time O(B·H·T·S·D)
 *   flops: per allowed score 2·(2·(D/2) + 2·D) (scores over D/2, p·v over D, two passes), plus
 *     6 per output element (y, its sum of squares, the scaling).
 *   bytes: the dense engine's for each pass (q, k, v, out once each) + the weights.
 *   workspace: Q' and O2 (B·H·T·D floats each, padded to 64 bytes) + the dense engine's
 *     workspace. forward_train writes O1, O2 and both passes' row log-sum-exp into saved instead.
 *   backward: through the scaling, the RMSNorm and the difference (dO1 = dy, dO2 = −λ·dy), then
 *     the dense engine's backward on each pass (dk, dv summed; dq by halves). The λ vectors and
 *     norm are weights, constants of the backward: their gradients are not computed.
 *   threads: OpenMP over blocks of ROWS rows for the copies and the combination, then the dense
 *            engine's (b, kv head, query block, key chunk) tasks; OpenBLAS single-threaded inside.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"

enum { P_DEPTH, P_SEED };
enum { W_LAMBDA, W_NORM, NWEIGHTS };
enum { L_Q1, L_K1, L_Q2, L_K2, NLAMBDA }; /* rows of the weight lambda */
enum { ROWS = 256, ALIGN_FLOATS = 16 };
static const double NORM_EPS = 1e-5;
static const double LAMBDA_SIGMA = 0.1;

static const attn_param_def params[] = {
    [P_DEPTH] = {"depth", "layer index from 0: lambda_init = 0.8 - 0.6 exp(-0.3 depth)", 0, 0,
                 1000000, true},
    [P_SEED] = {"seed", "seed of the lambda vectors ~ N(0, 0.1^2)", 0, 0, 4294967295.0, true},
};

static int64_t pad(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

static double lambda_init(const attn_params *p) { return 0.8 - 0.6 * exp(-0.3 * p->v[P_DEPTH]); }

/* λ = exp(λq1·λk1) − exp(λq2·λk2) + λ_init, in double. */
static double lambda_of(const attn_shape *s, const attn_params *p)
{
    const int64_t h = s->D / 2;
    const float *l = p->w[W_LAMBDA];
    double d1 = 0, d2 = 0;
    for (int64_t d = 0; d < h; d++) {
        d1 += (double)l[L_Q1 * h + d] * l[L_K1 * h + d];
        d2 += (double)l[L_Q2 * h + d] * l[L_K2 * h + d];
    }
    return exp(d1) - exp(d2) + lambda_init(p);
}

/* The shape of a pass: s at the scale 1/sqrt(D/2). */
static attn_shape pass_shape(const attn_shape *s)
{
    attn_shape ps = *s;
    ps.scale = s->scale * sqrt(2.0);
    return ps;
}

/* The dense engine's default parameters, resolved for s. */
static attn_params dense_params(const attn_shape *s)
{
    const attn_param_table t = ATTN_DENSE_PARAMS("diff");
    attn_params dp = attn_params_defaults(&t);
    attn_dense_resolve(NULL, s, &dp);
    return dp;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    (void)p;
    if (s->D % 2 != 0)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "diff: the head dimension must be even (q and k split into two halves); "
                         "choose an even --head-dim");
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    return attn_dense_check(self, &ps, &dp, msg, msg_len);
}

static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    (void)self, (void)p;
    const int64_t half = s->D / 2;
    out[W_LAMBDA] = (attn_weight){"lambda",
                                  "lambda [4, D/2]: rows lambda_q1, lambda_k1, lambda_q2, "
                                  "lambda_k2 of lambda = exp(q1.k1) - exp(q2.k2) + lambda_init",
                                  2,
                                  {NLAMBDA, half}};
    out[W_NORM] = (attn_weight){"norm", "norm [D]: the RMSNorm's elementwise gain", 1, {s->D}};
    return NWEIGHTS;
}

/* The released initialisation: λ vectors ~ N(0, 0.1²), the norm's gain ones. */
static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    (void)self;
    attn_weights_normal(w[W_LAMBDA], NLAMBDA * (s->D / 2), LAMBDA_SIGMA, (uint64_t)p->v[P_SEED], 0);
    for (int64_t d = 0; d < s->D; d++) w[W_NORM][d] = 1.0f;
    return ATTN_OK;
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    (void)p;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    return 2 * (size_t)pad(attn_q_elems(s)) * sizeof(float) +
           attn_dense_workspace_bytes(self, x, &ps, &dp);
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)self, (void)p;
    return 2.0 * (2.0 * (double)(s->D / 2) + 2.0 * (double)s->D) * attn_dense_allowed_scores(s) +
           6.0 * (double)attn_q_elems(s);
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    return 2.0 * attn_dense_bytes(self, &ps, &dp) + sizeof(float) * 3.0 * (double)s->D;
}

/* qp = [Q1, 0] (half 0) or [0, Q2] (half 1) for every row of q. */
static void half_query(const attn_exec *x, const attn_shape *s, int half, const float *q, float *qp)
{
    const int64_t n = s->B * s->H * s->T, D = s->D, h = D / 2, blocks = (n + ROWS - 1) / ROWS;
#pragma omp parallel for schedule(static) num_threads(x->threads) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t r1 = (b + 1) * ROWS < n ? (b + 1) * ROWS : n;
        for (int64_t r = b * ROWS; r < r1; r++) {
            float *row = qp + r * D;
            memset(row + (half ? 0 : h), 0, (size_t)h * sizeof(float));
            memcpy(row + (half ? h : 0), q + r * D + (half ? h : 0), (size_t)h * sizeof(float));
        }
    }
}

/* out = RMSNorm(O1 − λ·O2)·norm·(1 − λ_init), row by row (out may be o1). */
static void combine(const attn_exec *x, const attn_shape *s, const attn_params *p, double lambda,
                    const float *o1, const float *o2, float *out)
{
    const int64_t n = s->B * s->H * s->T, D = s->D, blocks = (n + ROWS - 1) / ROWS;
    const float *g = p->w[W_NORM], l = (float)lambda;
    const double c = 1.0 - lambda_init(p);
#pragma omp parallel for schedule(static) num_threads(x->threads) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t r1 = (b + 1) * ROWS < n ? (b + 1) * ROWS : n;
        for (int64_t r = b * ROWS; r < r1; r++) {
            const float *a = o1 + r * D, *z = o2 + r * D;
            float *y = out + r * D, ss = 0;
            for (int64_t d = 0; d < D; d++) {
                y[d] = a[d] - l * z[d];
                ss += y[d] * y[d];
            }
            const float m = (float)(c / sqrt((double)ss / (double)D + NORM_EPS));
            for (int64_t d = 0; d < D; d++) y[d] *= m * g[d];
        }
    }
}

/* The forward; saved (when set) holds O1, O2 (B·H·T·D floats each) and the two passes' saved
 * log-sum-exp, one after the other. */
static attn_status forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                 const attn_params *p, const float *q, const float *k,
                                 const float *v, float *out, void *saved, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    const int64_t nq = attn_q_elems(s);
    float *qp = workspace, *o2 = qp + pad(nq);
    void *rest = o2 + pad(nq);
    float *o1 = out;
    char *lse[2] = {NULL, NULL};
    if (saved) {
        o1 = saved;
        o2 = o1 + nq;
        lse[0] = (char *)(o2 + nq);
        lse[1] = lse[0] + attn_dense_saved_bytes(self, &ps, &dp);
    }
    float *o[2] = {o1, o2};
    for (int half = 0; half < 2 && st == ATTN_OK; half++) {
        half_query(x, s, half, q, qp);
        st = saved ? attn_dense_forward_train(self, x, &ps, &dp, qp, k, v, o[half], lse[half], rest)
                   : attn_dense_forward(self, x, &ps, &dp, qp, k, v, o[half], rest);
    }
    if (st == ATTN_OK) combine(x, s, p, lambda_of(s, p), o1, o2, out);
    return st;
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    return forward_train(self, x, s, p, q, k, v, out, NULL, workspace);
}

/* ---- training ---- */

static size_t saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    return 2 * (size_t)attn_q_elems(s) * sizeof(float) + 2 * attn_dense_saved_bytes(self, &ps, &dp);
}

static size_t backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                       const attn_shape *s, const attn_params *p)
{
    (void)p;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    return (4 * (size_t)pad(attn_q_elems(s)) + 2 * (size_t)pad(attn_kv_elems(s))) * sizeof(float) +
           attn_dense_backward_workspace_bytes(self, x, &ps, &dp);
}

/* dO1 = dy and dO2 = −λ·dy from dout, through out = c·g∘y/rms(y): dy = (c/rms)·(u − y·(u·y)/
 * (D·rms²)) with u = g∘dout. */
static void combine_backward(const attn_exec *x, const attn_shape *s, const attn_params *p,
                             double lambda, const float *o1, const float *o2, const float *dout,
                             float *do1, float *do2)
{
    const int64_t n = s->B * s->H * s->T, D = s->D, blocks = (n + ROWS - 1) / ROWS;
    const float *g = p->w[W_NORM];
    const double c = 1.0 - lambda_init(p);
#pragma omp parallel for schedule(static) num_threads(x->threads) if (blocks > 1)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t r1 = (b + 1) * ROWS < n ? (b + 1) * ROWS : n;
        for (int64_t r = b * ROWS; r < r1; r++) {
            const float *a = o1 + r * D, *z = o2 + r * D, *go = dout + r * D;
            double ss = 0, uy = 0;
            for (int64_t d = 0; d < D; d++) {
                const double y = (double)a[d] - lambda * z[d];
                ss += y * y;
                uy += (double)g[d] * go[d] * y;
            }
            const double ms = ss / (double)D + NORM_EPS, inv = 1.0 / sqrt(ms);
            for (int64_t d = 0; d < D; d++) {
                const double y = (double)a[d] - lambda * z[d];
                const double dy = c * inv * ((double)g[d] * go[d] - y * uy / ((double)D * ms));
                do1[r * D + d] = (float)dy;
                do2[r * D + d] = (float)(-lambda * dy);
            }
        }
    }
}

static attn_status backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            const float *out, const void *saved, const float *dout, float *dq,
                            float *dk, float *dv, void *workspace)
{
    (void)out;
    char msg[ATTN_MSG_LEN];
    attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    const attn_shape ps = pass_shape(s);
    const attn_params dp = dense_params(&ps);
    const int64_t nq = attn_q_elems(s), nkv = attn_kv_elems(s), D = s->D, h = D / 2;
    const float *o1 = saved, *o2 = o1 + nq;
    const char *lse0 = (const char *)(o2 + nq);
    const void *lse[2] = {lse0, lse0 + attn_dense_saved_bytes(self, &ps, &dp)};
    float *qp = workspace, *dqp = qp + pad(nq), *do1 = dqp + pad(nq), *do2 = do1 + pad(nq);
    float *dk2 = do2 + pad(nq), *dv2 = dk2 + pad(nkv);
    void *rest = dv2 + pad(nkv);
    combine_backward(x, s, p, lambda_of(s, p), o1, o2, dout, do1, do2);
    const float *o[2] = {o1, o2}, *dov[2] = {do1, do2};
    for (int half = 0; half < 2 && st == ATTN_OK; half++) {
        half_query(x, s, half, q, qp);
        st = attn_dense_backward(self, x, &ps, &dp, qp, k, v, o[half], lse[half], dov[half], dqp,
                                 half ? dk2 : dk, half ? dv2 : dv, rest);
        if (st != ATTN_OK) break;
        for (int64_t r = 0; r < nq / D; r++)
            memcpy(dq + r * D + half * h, dqp + r * D + half * h, (size_t)h * sizeof(float));
    }
    if (st != ATTN_OK) return st;
    for (int64_t e = 0; e < nkv; e++) {
        dk[e] += dk2[e];
        dv[e] += dv2[e];
    }
    return ATTN_OK;
}

/* ---- float64 definition ---- */

/* P[j] = softmax over the n keys of scale·q_half·k_half(j) (half = 0: the first D/2 dims). */
static void probabilities(const attn_shape *s, int half, const float *qi, const float *kg,
                          int64_t n, double *P)
{
    const int64_t D = s->D, h = D / 2, o = half * h;
    const double sc = s->scale * sqrt(2.0);
    double top = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++) {
        double dot = 0;
        for (int64_t d = 0; d < h; d++) dot += (double)qi[o + d] * kg[j * D + o + d];
        P[j] = sc * dot;
        top = P[j] > top ? P[j] : top;
    }
    for (int64_t j = 0; j < n; j++) sum += P[j] = exp(P[j] - top);
    for (int64_t j = 0; j < n; j++) P[j] /= sum;
}

/* One row of the definition: P1, P2 [n], o1, o2, y [D]; returns 1/rms(y). */
static double row64(const attn_shape *s, const attn_params *p, double lambda, const float *qi,
                    const float *kg, const float *vg, int64_t n, double *P1, double *P2, double *o1,
                    double *o2, double *y)
{
    const int64_t D = s->D;
    probabilities(s, 0, qi, kg, n, P1);
    probabilities(s, 1, qi, kg, n, P2);
    double ss = 0;
    for (int64_t d = 0; d < D; d++) {
        o1[d] = o2[d] = 0;
        for (int64_t j = 0; j < n; j++) {
            o1[d] += P1[j] * vg[j * D + d];
            o2[d] += P2[j] * vg[j * D + d];
        }
        y[d] = o1[d] - lambda * o2[d];
        ss += y[d] * y[d];
    }
    (void)p;
    return 1.0 / sqrt(ss / (double)D + NORM_EPS);
}

static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    (void)self;
    const int64_t D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv;
    const double lambda = lambda_of(s, p), c = 1.0 - lambda_init(p);
    double *P1 = malloc((size_t)(2 * S + 3 * D) * sizeof(double));
    if (!P1) return ATTN_EFAIL;
    double *P2 = P1 + S, *o1 = P2 + S, *o2 = o1 + D, *y = o2 + D;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / T, i = rows[r] % T, bg = bh / s->H * s->Hkv + bh % s->H / G;
        const int64_t n = attn_causal_keys(s, i);
        if (n <= 0) {
            for (int64_t d = 0; d < D; d++) out[r * D + d] = 0;
            continue;
        }
        const double inv = row64(s, p, lambda, q + rows[r] * D, k + bg * S * D, v + bg * S * D, n,
                                 P1, P2, o1, o2, y);
        for (int64_t d = 0; d < D; d++) out[r * D + d] = c * inv * p->w[W_NORM][d] * y[d];
    }
    free(P1);
    return ATTN_OK;
}

/* Float64 gradient, row by row: dy through the norm, then each softmax's gradient on its half. */
static attn_status reference_backward(const attn_ops *self, const attn_shape *s,
                                      const attn_params *p, const float *q, const float *k,
                                      const float *v, const float *dout, double *dq, double *dk,
                                      double *dv)
{
    (void)self;
    const int64_t D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv, h = D / 2;
    const double lambda = lambda_of(s, p), c = 1.0 - lambda_init(p), sc = s->scale * sqrt(2.0);
    memset(dq, 0, (size_t)attn_q_elems(s) * sizeof *dq);
    memset(dk, 0, (size_t)attn_kv_elems(s) * sizeof *dk);
    memset(dv, 0, (size_t)attn_kv_elems(s) * sizeof *dv);
    double *P1 = malloc((size_t)(2 * S + 5 * D) * sizeof(double));
    if (!P1) return ATTN_EFAIL;
    double *P2 = P1 + S, *o1 = P2 + S, *o2 = o1 + D, *y = o2 + D, *dy = y + D, *u = dy + D;
    for (int64_t row = 0; row < s->B * s->H * T; row++) {
        const int64_t bh = row / T, i = row % T, bg = bh / s->H * s->Hkv + bh % s->H / G;
        const int64_t n = attn_causal_keys(s, i);
        if (n <= 0) continue;
        const float *qi = q + row * D, *kg = k + bg * S * D, *vg = v + bg * S * D;
        const float *go = dout + row * D;
        const double inv = row64(s, p, lambda, qi, kg, vg, n, P1, P2, o1, o2, y);
        double uy = 0;
        for (int64_t d = 0; d < D; d++) {
            u[d] = (double)p->w[W_NORM][d] * go[d];
            uy += u[d] * y[d];
        }
        for (int64_t d = 0; d < D; d++) dy[d] = c * inv * (u[d] - y[d] * uy * inv * inv / D);
        for (int half = 0; half < 2; half++) {
            const double *P = half ? P2 : P1, *o = half ? o2 : o1, f = half ? -lambda : 1.0;
            const int64_t off = half * h;
            double delta = 0;
            for (int64_t d = 0; d < D; d++) delta += f * dy[d] * o[d];
            for (int64_t j = 0; j < n; j++) {
                double dp = 0;
                for (int64_t d = 0; d < D; d++) {
                    dp += f * dy[d] * vg[j * D + d];
                    dv[(bg * S + j) * D + d] += P[j] * f * dy[d];
                }
                const double ds = P[j] * (dp - delta) * sc;
                for (int64_t d = 0; d < h; d++) {
                    dq[row * D + off + d] += ds * kg[j * D + off + d];
                    dk[(bg * S + j) * D + off + d] += ds * qi[off + d];
                }
            }
        }
    }
    free(P1);
    return ATTN_OK;
}

static const attn_weight_ops weight_ops = {
    .list = weights,
    .draw = draw_weights,
};

static const attn_train_ops train_ops = {
    .saved_bytes = saved_bytes,
    .forward = forward_train,
    .workspace_bytes = backward_workspace_bytes,
    .backward = backward,
    .reference = reference_backward,
};

const attn_ops attn_kind_diff = {
    .name = "diff",
    .summary = "Differential Transformer: (softmax(Q1K1) - lambda softmax(Q2K2))V, RMSNorm",
    .definition =
        "Differential attention (Ye et al. 2024, 'Differential Transformer', arXiv:2410.05258;\n"
        "code: microsoft/unilm Diff-Transformer, multihead_flashdiff_1.py). D even, h = D/2:\n"
        "q_i = [q1_i, q2_i] and k_j = [k1_j, k2_j] split into halves of h; v_j whole (D). Over\n"
        "every key j (causal: j <= i + S - T), with s = 1/sqrt(h) (the shape's scale * sqrt(2)):\n"
        "  o1_i = sum_j softmax_j(s q1_i.k1_j) v_j,  o2_i = sum_j softmax_j(s q2_i.k2_j) v_j,\n"
        "  y_i = o1_i - lambda o2_i,\n"
        "  out_i = norm * y_i / sqrt(mean_d(y_i[d]^2) + 1e-5) * (1 - lambda_init),\n"
        "  lambda = exp(lambda_q1.lambda_k1) - exp(lambda_q2.lambda_k2) + lambda_init,\n"
        "  lambda_init = 0.8 - 0.6 exp(-0.3 depth).\n"
        "depth counts layers from 0 as the released code does (the paper's l = depth + 1). The\n"
        "weights lambda [4, h] (rows lambda_q1, lambda_k1, lambda_q2, lambda_k2; shared by the\n"
        "heads) and norm [D] (the RMSNorm's gain: elementwise_affine in the released code) are\n"
        "inputs, drawn from seed when not given, as released: lambda ~ N(0, 0.1^2), norm = 1.\n"
        "Query head h reads KV head h / (H/Hkv) for both halves, as the released flash code\n"
        "(multihead_flashdiff_1.py) pairs them; the naive file (multihead_diffattn.py) repeats\n"
        "the key sub-heads, which pairs them differently under grouped heads (not offered).\n"
        "Not an approximation of softmax attention: rel_err (against softmax(q.k/sqrt(D))) is\n"
        "no error; self_rel_err is. The lambda vectors and norm are weights: the backward\n"
        "gives dq, dk, dv only.",
    .params = ATTN_PARAM_TABLE("diff", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .weights = &weight_ops,
    .train = &train_ops,
    .on_request = "a dense kind at twice full's work per score, measured when named",
};
