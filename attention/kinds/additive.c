/*
 * additive — Bahdanau (additive, "concat") attention: the score of a query and a key is a
 * one-hidden-layer tanh network of the two, vaᵀ tanh(W1 q + W2 k), with U hidden units.
 * Definition: .definition below. Not an approximation of dot-product attention: its accuracy is
 * self_rel_err against its own float64 definition (rel_err against softmax(q·k) is meaningless).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   weights (inputs, drawn from `seed` when not given): w1 [U,D], w2 [U,D], va [U]
 *   time O(B·H·T·S·U) tanh (quadratic in n, with U tanh per score) + O(n·U·D) projections
 *   layout: A = Q·W1ᵀ for every query head [B,H,T,U] and Bᵀ = W2·Kᵀ once per KV head
 *     [B,Hkv,U,Sp] (Sp = S rounded up to 8, + 16 when a multiple of 256: no L1 set aliasing
 *     between its rows; padding zeroed) by sgemm; then per task (b, h,
 *     block of BLOCK_Q queries) the keys in blocks of block_k: scores[r][c] = Σ_u va[u]·
 *     tanh(A[r][u] + Bᵀ[u][j0+c]) (kernels/additive_body.h in every kernel set: a vector of keys
 *     against 4 queries at a time) into the tile, then the online softmax and p·v of
 *     softmax_tile.c (attn_tile_visit_scores). Causal:
 *     key blocks past a block's last visible key are skipped, a block crossing the diagonal
 *     computes each group of 4 rows up to its last row's key. Never the T×S matrix.
 *   flops (counting rule): per allowed score U·(1 add + TANH_FLOPS + 2 for the mul-add by va)
 *     + 2·D (p·v); plus 2·T·U·D per query head (A) and 2·S·U·D per KV head (Bᵀ). TANH_FLOPS = 1
 *     (a tanh counts as one operation, as exp does in linear; vtanh, kernels/vmath.h, spends ~13
 *     vector operations and a division on it). Exponentials of the softmax are not counted
 *     (as dense).
 *   bytes: q, k, v, out once, and the weights (2·U·D + U floats).
 *   workspace: A (B·H·T·U floats) + Bᵀ (B·Hkv·U·Sp floats), each padded to 64 bytes, + threads
 *     × (tile: BLOCK_Q rows × block_k scores + BLOCK_Q × D accumulator + 2·BLOCK_Q floats;
 *     BLOCK_Q int64 key limits). O(n·U): the projected queries and keys, never O(n²).
 *   threads: OpenMP over (b, head) for the projections, then over (b, head, query block),
 *            dynamic schedule (causal blocks are uneven); OpenBLAS single-threaded inside.
 *   decode: forward on the decode shape (the queries are the last T positions): Bᵀ of the whole
 *     cache is recomputed each step (O(S·U·D), more than the O(S·U) tanh of one query).
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "dense.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_UNITS, P_SEED };
enum { W_W1, W_W2, W_VA };
enum {
    BLOCK_Q = 64,      /* queries per task */
    BLOCK_K_MAX = 256, /* keys per visit at most */
    KEY_FLOATS = 8192, /* U × block_k floats of Bᵀ per visit (32 KiB: stays in L1) */
    GROUP = 4,         /* query rows computed together (4 tanh chains in flight) */
    ALIGN_FLOATS = 16, /* 64 bytes */
    TANH_FLOPS = 1,    /* the flops rule's count for one tanh */
};

static const attn_param_def params[] = {
    [P_UNITS] = {"units",
                 "U: hidden units of the score network (0: D, as Bahdanau's n = model size)", 0, 0,
                 1024, true},
    [P_SEED] = {"seed", "seed of the weights w1, w2 ~ N(0, 1/D) and va ~ N(0, 1/U)", 0, 0,
                4294967295.0, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t round8(int64_t n) { return (n + 7) / 8 * 8; }
static int64_t pad(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

static int64_t units_of(const attn_shape *s, const attn_params *p)
{
    return p->v[P_UNITS] > 0 ? (int64_t)p->v[P_UNITS] : s->D;
}

static void resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    p->v[P_UNITS] = (double)units_of(s, p);
}

typedef struct plan {
    int64_t U, Sp;         /* hidden units; row stride of Bᵀ (S rounded up to 8, see plan) */
    int64_t rows, block_k; /* queries per task; keys per visit (a multiple of 8) */
    int64_t nqb;           /* query blocks per head */
    int64_t a_floats, b_floats, tile_floats;
    size_t thread_bytes;       /* tile + key limits */
    const attn_kernel_set *ks; /* the set of the call (NULL: counts, the reference) */
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    pl.U = units_of(s, p);
    pl.Sp = round8(s->S);
    if (pl.Sp % 256 == 0) pl.Sp += 16; /* rows of Bᵀ 1 KiB multiples apart share L1 sets */
    pl.rows = min64(BLOCK_Q, s->T);
    pl.block_k = min64(round8(s->S), max64(8, min64(BLOCK_K_MAX, KEY_FLOATS / pl.U / 8 * 8)));
    pl.nqb = (s->T + pl.rows - 1) / pl.rows;
    pl.a_floats = pad(s->B * s->H * s->T * pl.U);
    pl.b_floats = pad(s->B * s->Hkv * pl.U * pl.Sp);
    pl.tile_floats = attn_tile_floats(pl.rows, pl.block_k, s->D);
    pl.thread_bytes =
        (size_t)pl.tile_floats * sizeof(float) + (size_t)(round8(pl.rows)) * sizeof(int64_t);
    return pl;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    (void)p;
    if (!attn_blas_int_ok(s->T) || !attn_blas_int_ok(round8(s->S)))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "additive: q_len and kv_len must stay below 2^31 (BLAS sizes)");
    return ATTN_OK;
}

static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    const int64_t U = units_of(s, p), D = s->D;
    out[W_W1] =
        (attn_weight){"w1", "W1 [U, D]: the query's projection in the score network", 2, {U, D}};
    out[W_W2] =
        (attn_weight){"w2", "W2 [U, D]: the key's projection in the score network", 2, {U, D}};
    out[W_VA] = (attn_weight){"va", "va [U]: the output weights of the score network", 1, {U}};
    return 3;
}

/* LeCun-normal: W1 q and W2 k have unit variance for unit-variance q, k (tanh in its active
 * range), and va·tanh(...) sums to scores of variance E[tanh²] ~ 0.4 (a soft, non-uniform
 * softmax). Bahdanau et al. initialise W_a, U_a ~ N(0, 0.001²) and v_a = 0 before training, a
 * uniform attention: no case to measure. */
static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    const int64_t U = units_of(s, p), D = s->D;
    const uint64_t seed = (uint64_t)p->v[P_SEED];
    attn_weights_normal(w[W_W1], U * D, 1.0 / sqrt((double)D), seed, W_W1);
    attn_weights_normal(w[W_W2], U * D, 1.0 / sqrt((double)D), seed, W_W2);
    attn_weights_normal(w[W_VA], U, 1.0 / sqrt((double)U), seed, W_VA);
    return ATTN_OK;
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    return (size_t)(pl.a_floats + pl.b_floats) * sizeof(float) +
           (size_t)x->threads * pl.thread_bytes;
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const double U = (double)units_of(s, p), D = (double)s->D;
    const double proj = 2.0 * U * D * (double)s->B * ((double)s->H * s->T + (double)s->Hkv * s->S);
    return attn_dense_allowed_scores(s) * (U * (3.0 + TANH_FLOPS) + 2.0 * D) + proj;
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const double U = (double)units_of(s, p);
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s) +
                            2.0 * U * (double)s->D + U);
}

/* ---- the pairwise scores ---- */

/* sc[r][c] = Σ_u va[u]·tanh(a[r][u] + bt[u][c]) for rows r < nr (row stride U of a, ldc of sc)
 * and columns c < n8 (a multiple of 8; bt rows have stride Sp): the kernel set's slot
 * (kernels/additive_body.h). */
static void scores(const attn_kernel_set *ks, const float *a, int64_t nr, const float *bt,
                   int64_t Sp, const float *va, int64_t U, int64_t n8, float *sc, int64_t ldc)
{
    ks->additive.pair_scores(a, nr, bt, Sp, va, U, n8, sc, ldc);
}

/* ---- forward ---- */

/* A = Q·W1ᵀ per query head and Bᵀ = W2·Kᵀ per KV head (padding columns zeroed). */
static void project(const attn_exec *x, const attn_shape *s, const plan *pl, const attn_params *p,
                    const float *q, const float *k, float *A, float *BT)
{
    const int64_t heads = s->B * s->H, kv_heads = s->B * s->Hkv, T = s->T, S = s->S, D = s->D;
    const int U = (int)pl->U;
#pragma omp parallel for schedule(dynamic, 1) num_threads(x->threads)
    for (int64_t t = 0; t < heads + kv_heads; t++) {
        if (t < heads) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, U, (int)D, 1.0f,
                        q + t * T * D, (int)D, p->w[W_W1], (int)D, 0.0f, A + t * T * U, U);
            continue;
        }
        const int64_t bg = t - heads;
        float *bt = BT + bg * U * pl->Sp;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, U, (int)S, (int)D, 1.0f, p->w[W_W2],
                    (int)D, k + bg * S * D, (int)D, 0.0f, bt, (int)pl->Sp);
        for (int64_t u = 0; u < U && pl->Sp > S; u++)
            memset(bt + u * pl->Sp + S, 0, (size_t)(pl->Sp - S) * sizeof(float));
    }
}

/* One task: queries [i0, i0 + nr) of head (b, h) against every key they see. */
static void task(const attn_shape *s, const plan *pl, const float *va, const float *A,
                 const float *BT, const float *v, float *out, int64_t b, int64_t h, int64_t i0,
                 int64_t nr, float *scratch, int64_t *hi)
{
    const int64_t T = s->T, S = s->S, D = s->D, U = pl->U, g = h / (s->H / s->Hkv);
    const float *a = A + ((b * s->H + h) * T + i0) * U, *bt = BT + (b * s->Hkv + g) * U * pl->Sp;
    const float *vg = v + (b * s->Hkv + g) * S * D;
    const int64_t first_sees = attn_causal_keys(s, i0), end = attn_causal_keys(s, i0 + nr - 1);
    attn_tile tile;
    attn_tile_begin(&tile, pl->ks, scratch, nr, D, 1.0f);
    for (int64_t r = 0; r < nr; r++) hi[r] = attn_causal_keys(s, i0 + r);
    for (int64_t j0 = 0; j0 < end; j0 += pl->block_k) {
        const int64_t cols = min64(pl->block_k, S - j0), ldc = attn_tile_score_ld(cols);
        const bool diagonal = j0 + cols > first_sees; /* some row sees only part of the block */
        for (int64_t r0 = 0; r0 < nr; r0 += GROUP) {
            const int64_t n = min64(GROUP, nr - r0), last = hi[r0 + n - 1] - j0;
            const int64_t n8 = diagonal ? round8(min64(cols, max64(0, last))) : ldc;
            scores(pl->ks, a + r0 * U, n, bt + j0, pl->Sp, va, U, n8, tile.scores + r0 * ldc, ldc);
        }
        const attn_tile_mask mask = {.col0 = j0, .hi = hi};
        attn_tile_visit_scores(&tile, 0, nr, vg + j0 * D, D, cols, diagonal ? &mask : NULL);
    }
    attn_tile_end(&tile, out + ((b * s->H + h) * T + i0) * D);
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    const attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    float *A = workspace, *BT = A + pl.a_floats;
    char *region = (char *)(BT + pl.b_floats);
    attn_blas_threads(1);
    project(x, s, &pl, p, q, k, A, BT);
    const int64_t tasks = s->B * s->H * pl.nqb;
#pragma omp parallel num_threads(x->threads)
    {
        char *mine = region + (size_t)omp_get_thread_num() * pl.thread_bytes;
        int64_t *hi = (int64_t *)(mine + (size_t)pl.tile_floats * sizeof(float));
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            const int64_t bh = t / pl.nqb, i0 = (t % pl.nqb) * pl.rows;
            task(s, &pl, p->w[W_VA], A, BT, v, out, bh / s->H, bh % s->H, i0,
                 min64(pl.rows, s->T - i0), (float *)mine, hi);
        }
    }
    return ATTN_OK;
}

/* ---- the float64 definition ---- */

/* W·x for the U rows of W [U, D], in double. */
static void project_row(const float *W, const float *x, int64_t U, int64_t D, double *y)
{
    for (int64_t u = 0; u < U; u++) {
        double acc = 0;
        for (int64_t d = 0; d < D; d++) acc += (double)W[u * D + d] * x[d];
        y[u] = acc;
    }
}

/* Row by row from scratch in double; W2·k_j of a KV head computed once per run of its rows. */
static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const int64_t U = units_of(s, p), D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv;
    const float *va = p->w[W_VA];
    double *bk = malloc((size_t)(S * U + U + S) * sizeof(double)), *a = bk + S * U, *e = a + U;
    if (!bk) return ATTN_EFAIL;
    int64_t cached = -1;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / T, i = rows[r] % T, bg = bh / s->H * s->Hkv + bh % s->H / G;
        if (bg != cached)
            for (int64_t j = 0; j < S; j++)
                project_row(p->w[W_W2], k + (bg * S + j) * D, U, D, bk + j * U);
        cached = bg;
        project_row(p->w[W_W1], q + rows[r] * D, U, D, a);
        const int64_t n = attn_causal_keys(s, i);
        for (int64_t j = 0; j < n; j++) {
            e[j] = 0;
            for (int64_t u = 0; u < U; u++) e[j] += (double)va[u] * tanh(a[u] + bk[j * U + u]);
        }
        attn_softmax_reference_row(e, n, v + bg * S * D, D, out + r * D);
    }
    free(bk);
    return ATTN_OK;
}

static const attn_weight_ops weight_ops = {
    .list = weights,
    .draw = draw_weights,
};

const attn_ops attn_kind_additive = {
    .name = "additive",
    .no_backward = "not implemented (the tanh score network)",
    .summary = "Bahdanau additive (concat) scores va.tanh(W1 q + W2 k), U hidden units, tiled",
    .definition =
        "out_i = sum_j softmax_j(e_ij) v_j over every key j (causal: j <= i + S - T) with the\n"
        "additive score of Bahdanau et al. (2015), Luong et al.'s (2015) 'concat':\n"
        "e_ij = va . tanh(W1 q_i + W2 k_j), W1, W2 [U, D], va [U]; U = units (0: D, as the\n"
        "paper's alignment model is as wide as its states). Bahdanau's e_ij = v_a^T tanh(W_a\n"
        "s_{i-1} + U_a h_j) with the decoder state s_{i-1} as query q_i and the annotation h_j as\n"
        "key k_j. No scale: the shape's 1/sqrt(D) is not applied. The weights w1, w2, va are\n"
        "inputs, drawn from seed when not given: w1, w2 ~ N(0, 1/D), va ~ N(0, 1/U). Query head h\n"
        "reads KV head h / (H/Hkv). Another score function, not an approximation of dot-product\n"
        "attention: rel_err (against softmax(q.k/sqrt(D))) is no error; self_rel_err is.",
    .params = ATTN_PARAM_TABLE("additive", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .resolve = resolve,
    .weights = &weight_ops,
};
