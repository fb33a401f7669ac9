/*
 * bilinear — Luong et al.'s (2015) "general" score: q_iᵀ W k_j with one learned D×D matrix W,
 * scaled by the shape's scale (1/sqrt(D)), then softmax. Definition: .definition below. Another
 * score function, not an approximation of dot-product attention: its accuracy is self_rel_err
 * against its own float64 definition (rel_err against softmax(q·k) is meaningless).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   weight (an input, drawn from `seed` when not given): w [D,D]
 *   layout: q_iᵀ W k_j = (Wᵀ q_i)·k_j, so Q' = Q·W ([B·H·T, D] by sgemm, in the workspace) and
 *     then the dense engine (dense.c: tiled online softmax, the G = H/Hkv heads of a KV head in
 *     one tile, key chunks when few rows) on Q', k, v at the engine's default parameters. Q'
 *     (not K' = K·Wᵀ) so that a decode step projects its T queries, not the cache.
 *   time O(B·H·T·S·D) + O(B·H·T·D²)
 *   flops: 2·D² per query row (Q·W) + the dense engine's 4·D per allowed score.
 *   bytes: the dense engine's (q, k, v, out once) + the weight (D² floats).
 *   workspace: Q' (B·H·T·D floats, padded to 64 bytes) + the dense engine's workspace.
 *   threads: OpenMP over blocks of ROWS rows of Q' for the projection, then the dense engine's
 *            (b, kv head, query block, key chunk) tasks; OpenBLAS single-threaded inside.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include <cblas.h>

#include "dense.h"
#include "kernels.h"

enum { P_SEED };
enum { ROWS = 512, ALIGN_FLOATS = 16 };

static const attn_param_def params[] = {
    [P_SEED] = {"seed", "seed of the weight w ~ N(0, 1/D)", 0, 0, 4294967295.0, true},
};

static int64_t pad(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

/* The dense engine's default parameters, resolved for s. */
static attn_params dense_params(const attn_shape *s)
{
    const attn_param_table t = ATTN_DENSE_PARAMS("bilinear");
    attn_params dp = attn_params_defaults(&t);
    attn_dense_resolve(NULL, s, &dp);
    return dp;
}

static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    (void)p;
    out[0] =
        (attn_weight){"w", "W [D, D]: the bilinear form of the score q^T W k", 2, {s->D, s->D}};
    return 1;
}

/* N(0, 1/D) (LeCun-normal): q·W has the variance of q, so scores have the spread of full's. */
static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    attn_weights_normal(w[0], s->D * s->D, 1.0 / sqrt((double)s->D), (uint64_t)p->v[P_SEED], 0);
    return ATTN_OK;
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    (void)p;
    const attn_params dp = dense_params(s);
    return (size_t)pad(attn_q_elems(s)) * sizeof(float) +
           attn_dense_workspace_bytes(self, x, s, &dp);
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    const attn_params dp = dense_params(s);
    return 2.0 * (double)attn_q_elems(s) * (double)s->D + attn_dense_flops(self, s, &dp);
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    const attn_params dp = dense_params(s);
    return attn_dense_bytes(self, s, &dp) + sizeof(float) * (double)s->D * (double)s->D;
}

/* out = in·W (transposed: in·Wᵀ) for the B·H·T rows of in, by blocks of ROWS rows in parallel. */
static void project(const attn_exec *x, const attn_shape *s, const float *W, bool transposed,
                    const float *in, float *out)
{
    const int64_t n = s->B * s->H * s->T, D = s->D, blocks = (n + ROWS - 1) / ROWS;
    attn_blas_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(x->threads)
    for (int64_t b = 0; b < blocks; b++) {
        const int64_t r0 = b * ROWS, rows = n - r0 < ROWS ? n - r0 : ROWS;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, transposed ? CblasTrans : CblasNoTrans, (int)rows,
                    (int)D, (int)D, 1.0f, in + r0 * D, (int)D, W, (int)D, 0.0f, out + r0 * D,
                    (int)D);
    }
}

/* The forward, saving the dense engine's row log-sum-exp when saved is set. */
static attn_status forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                 const attn_params *p, const float *q, const float *k,
                                 const float *v, float *out, void *saved, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    const attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    float *qw = workspace;
    project(x, s, p->w[0], false, q, qw);
    const attn_params dp = dense_params(s);
    void *rest = qw + pad(attn_q_elems(s));
    return saved ? attn_dense_forward_train(self, x, s, &dp, qw, k, v, out, saved, rest)
                 : attn_dense_forward(self, x, s, &dp, qw, k, v, out, rest);
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    return forward_train(self, x, s, p, q, k, v, out, NULL, workspace);
}

/* ---- training: the dense engine's backward on Q' = Q·W, then dq = dQ'·Wᵀ (W constant) ---- */

static size_t saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const attn_params dp = dense_params(s);
    (void)p;
    return attn_dense_saved_bytes(self, s, &dp);
}

static size_t backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                       const attn_shape *s, const attn_params *p)
{
    const attn_params dp = dense_params(s);
    (void)p;
    return 2 * (size_t)pad(attn_q_elems(s)) * sizeof(float) +
           attn_dense_backward_workspace_bytes(self, x, s, &dp);
}

static attn_status backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            const float *out, const void *saved, const float *dout, float *dq,
                            float *dk, float *dv, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    const attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    float *qw = workspace, *dqw = qw + pad(attn_q_elems(s));
    project(x, s, p->w[0], false, q, qw);
    const attn_params dp = dense_params(s);
    const attn_status bst = attn_dense_backward(self, x, s, &dp, qw, k, v, out, saved, dout, dqw,
                                                dk, dv, dqw + pad(attn_q_elems(s)));
    if (bst == ATTN_OK) project(x, s, p->w[0], true, dqw, dq);
    return bst;
}

/* Float64: the softmax gradient at q' = q·W, then dq = dq'·Wᵀ. */
static attn_status reference_backward(const attn_ops *self, const attn_shape *s,
                                      const attn_params *p, const float *q, const float *k,
                                      const float *v, const float *dout, double *dq, double *dk,
                                      double *dv)
{
    const int64_t n = s->B * s->H * s->T, D = s->D;
    const float *W = p->w[0];
    double *qw = calloc((size_t)(2 * n * D), sizeof *qw), *dqw = qw + n * D;
    if (!qw) return ATTN_EFAIL;
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < D; c++) {
            qw[r * D + c] = 0;
            for (int64_t d = 0; d < D; d++) qw[r * D + c] += (double)q[r * D + d] * W[d * D + c];
        }
    const attn_status st =
        attn_softmax_reference_backward64(NULL, s, p, qw, k, v, dout, dqw, dk, dv);
    for (int64_t r = 0; r < n; r++)
        for (int64_t d = 0; d < D; d++) {
            dq[r * D + d] = 0;
            for (int64_t c = 0; c < D; c++) dq[r * D + d] += dqw[r * D + c] * W[d * D + c];
        }
    free(qw);
    return st;
}

/* Row by row in double: q' = Wᵀ q_i, scores scale·q'·k_j over the keys the causal rule allows. */
static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const int64_t D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv;
    const float *W = p->w[0];
    double *qw = malloc((size_t)(D + S) * sizeof(double)), *e = qw + D;
    if (!qw) return ATTN_EFAIL;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / T, i = rows[r] % T, bg = bh / s->H * s->Hkv + bh % s->H / G;
        const float *qi = q + rows[r] * D, *kg = k + bg * S * D;
        for (int64_t c = 0; c < D; c++) {
            qw[c] = 0;
            for (int64_t d = 0; d < D; d++) qw[c] += (double)qi[d] * W[d * D + c];
        }
        const int64_t n = attn_causal_keys(s, i);
        for (int64_t j = 0; j < n; j++) {
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += qw[d] * kg[j * D + d];
            e[j] = s->scale * dot;
        }
        attn_softmax_reference_row(e, n, v + bg * S * D, D, out + r * D);
    }
    free(qw);
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

const attn_ops attn_kind_bilinear = {
    .name = "bilinear",
    .summary = "Luong general (bilinear) scores q^T W k, as dense attention on Q' = Q W",
    .definition =
        "out_i = sum_j softmax_j(scale * q_i^T W k_j) v_j over every key j (causal:\n"
        "j <= i + S - T): Luong et al.'s (2015) 'general' score h_t^T W_a h_s with the query as\n"
        "h_t and the key as h_s, W [D, D]. scale = 1/sqrt(D), the shape's (Luong has none: it is\n"
        "W/sqrt(D) in his terms), so that W = I is full attention exactly. The weight w is an\n"
        "input, drawn from seed when not given: w ~ N(0, 1/D). Query head h reads KV head\n"
        "h / (H/Hkv). Computed as full attention on Q' = Q W. Another score function, not an\n"
        "approximation of dot-product attention: rel_err (against softmax(q.k/sqrt(D))) is no\n"
        "error; self_rel_err is.",
    .params = ATTN_PARAM_TABLE("bilinear", params),
    .check = attn_dense_check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .weights = &weight_ops,
    .train = &train_ops,
};
