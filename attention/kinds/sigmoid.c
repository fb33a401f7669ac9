/*
 * sigmoid — sigmoid attention (Ramapuram et al. 2024, "Theory, Analysis, and Best Practices for
 * Sigmoid Self-Attention"): each score through σ(scale·q·k + b), no row normalisation, tiled as
 * their FlashSigmoid is. Definition: .definition below. Not an approximation of softmax attention:
 * its accuracy is self_rel_err against its own float64 definition (the kind's reference slot).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / G, G = H/Hkv
 *   b = bias - ln n_b, n_b = bias_len, or the call's S when bias_len = 0 (the default)
 *   time O(B·H·T·S·D)   flops 4·D per allowed score (q·k and p·v), counted exactly; the σ is
 *     not counted (like the softmax kinds' exp)
 *   bytes: q, k, v, out once
 * Forward: a task is one block of `block_q` tile rows of one (b, kv head): max(1, block_q / G)
 *   query positions × the G heads sharing the KV head, stacked position-major, head-minor (tile
 *   row r = position i0 + r/G, head g·G + r%G) as in the dense engine, so each key block is read
 *   once for all G heads; the rows are gathered into a buffer when G > 1 and T > 1. Per key block
 *   of `block_k` keys: kᵀ packed once (x->ks->tile.pack_kt), then per group of GROUP_ROWS rows
 *   (up to the keys the group's last row sees, when the block crosses the causal diagonal):
 *     1  S  = scale · q kᵀ                 tile.scores micro-kernel
 *     2  P  = σ(S + b), 0 past each row's causal limit      math.sigmoid_row
 *     3  acc += P v                        tile.pv micro-kernel, v read in place
 *   no running max, no row sum, no rescaling: acc is the output, copied to out at the end.
 *   Key blocks past a block's last visible key are skipped.
 *   workspace: threads × (kᵀ [D, ld] + scores [GROUP_ROWS, ld] + acc [rows, D] (+ the gathered
 *     queries [rows, D] when G > 1 and T > 1) floats + rows int64 key limits), ld = block_k
 *     (clipped to S) rounded up to 64, rows = tile rows (block_q clipped to T·G), each piece
 *     padded to 64 bytes. Independent of n beyond the clipping.
 *   threads: OpenMP over (b, kv head, query block), dynamic schedule (causal blocks are uneven);
 *     each output row is computed by one task in one order: the result does not depend on the
 *     thread count. No BLAS.
 *   decode: the forward on the decode shape (T newest queries against the S cached keys; b from
 *     the call's S, so a decode step equals the last rows of the prefill).
 * Backward: nothing saved (P is recomputed from q, k). A task is one key block of one (b, kv
 *   head), which owns that block's dk, dv rows; kᵀ and vᵀ packed once per task. For every query
 *   block that sees the key block, per group of GROUP_ROWS rows:
 *     S = scale·q kᵀ, P = σ(S + b) (0 past the causal limit), dP = dout vᵀ (tile.scores),
 *     dS = scale·dP∘P∘(1 - P) (math.sigmoid_grad: the scale once for dk and dq),
 *     dv += Pᵀ dout, dk += dSᵀ q, dq_acc += dS k (tile.pv)
 *   then the block's dq_acc is added to dq one thread at a time (OpenMP critical, rows × D adds
 *   per 10·rows·block_k·D flops; the order of those adds may vary between runs). Never T × S.
 *   flops 10·D per allowed score (five products): 2.5 × forward, the generic rule's count.
 *   workspace: threads × (kᵀ, vᵀ [D, ld] + P, dS [GROUP_ROWS, ld] + dq_acc [rows, D] (+ the
 *     gathered q and dout [rows, D] each when G > 1 and T > 1) floats + rows int64), each piece
 *     padded to 64 bytes.
 *   threads: OpenMP over (b, kv head, key block), dynamic; dq zeroed in parallel first.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_BIAS_LEN, P_BIAS, P_BLOCK_Q, P_BLOCK_K };
enum {
    GROUP_ROWS = 48,   /* rows per scores pass: a multiple of every set's tile_rows (4, 6) */
    ALIGN_FLOATS = 16, /* 64 bytes */
};

static const attn_param_def params[] = {
    [P_BIAS_LEN] = {"bias_len",
                    "n_b of b = bias - ln n_b: 0: the call's S (the paper); L: a fixed training "
                    "length (Apple's released config)",
                    0, 0, 1000000000, true},
    [P_BIAS] = {"bias", "added to -ln n_b (bias_len=1: b = bias exactly)", 0, -50, 50, false},
    [P_BLOCK_Q] = {"block_q", "tile rows: query positions x the G heads sharing a KV head", 256, 1,
                   4096, true},
    [P_BLOCK_K] = {"block_k", "keys per tile", 256, 1, 65536, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t n) { return ceil_div(n, ALIGN_FLOATS) * ALIGN_FLOATS; }

/* b = bias - ln n_b (n_b: bias_len, or S when 0), in double for the reference. */
static double bias_of(const attn_shape *s, const attn_params *p)
{
    const double n = p->v[P_BIAS_LEN] > 0 ? p->v[P_BIAS_LEN] : (double)s->S;
    return p->v[P_BIAS] - log(n);
}

typedef struct plan {
    int64_t G;         /* query heads per KV head */
    int64_t positions; /* query positions per tile */
    int64_t rows;      /* tile rows: positions × G */
    int64_t block_k;   /* keys per block (clipped to S) */
    int64_t ld;        /* row stride of the scores and the packed keys */
    int64_t nqb, nkb;  /* query blocks per (b, kv head); key blocks per head */
    bool gather;       /* stack the G heads' rows in a buffer */
    int64_t kt_floats, sc_floats, acc_floats, stack_floats;
    size_t thread_bytes;  /* forward */
    size_t bthread_bytes; /* backward */
    float bias;
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    pl.G = s->H / s->Hkv;
    pl.positions = min64(max64(1, (int64_t)p->v[P_BLOCK_Q] / pl.G), s->T);
    pl.rows = pl.positions * pl.G;
    pl.block_k = min64((int64_t)p->v[P_BLOCK_K], s->S);
    pl.ld = attn_tile_score_ld(pl.block_k);
    pl.nqb = ceil_div(s->T, pl.positions);
    pl.nkb = ceil_div(s->S, pl.block_k);
    pl.gather = pl.G > 1 && s->T > 1;
    pl.kt_floats = round_up(s->D * pl.ld);
    pl.sc_floats = round_up(min64(GROUP_ROWS, pl.rows) * pl.ld);
    pl.acc_floats = round_up(pl.rows * s->D);
    pl.stack_floats = pl.gather ? pl.acc_floats : 0;
    const size_t limits = (size_t)ceil_div(pl.rows, 8) * 8 * sizeof(int64_t);
    pl.thread_bytes =
        (size_t)(pl.kt_floats + pl.sc_floats + pl.acc_floats + pl.stack_floats) * sizeof(float) +
        limits;
    pl.bthread_bytes =
        (size_t)(2 * pl.kt_floats + 2 * pl.sc_floats + pl.acc_floats + 2 * pl.stack_floats) *
            sizeof(float) +
        limits;
    pl.bias = (float)bias_of(s, p);
    return pl;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    return ATTN_OK; /* every shape accepted by attn_shape_check and every in-range parameter */
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    return (size_t)x->threads * make_plan(s, p).thread_bytes;
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    return 4.0 * (double)s->D * attn_dense_allowed_scores(s);
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s));
}

/* Row of q/out [B·H·T, D] holding tile row r of the group (b, g) whose first position is i0. */
static int64_t row_of(const attn_shape *s, int64_t G, int64_t b, int64_t g, int64_t i0, int64_t r)
{
    return (b * s->H + g * G + r % G) * s->T + i0 + r / G;
}

/* ---- forward ---- */

/* One thread's scratch. */
typedef struct scratch {
    float *kt, *sc, *acc, *stack;
    int64_t *hi;
} scratch;

static scratch lay_out(const plan *pl, char *mine)
{
    scratch w;
    w.kt = (float *)mine;
    w.sc = w.kt + pl->kt_floats;
    w.acc = w.sc + pl->sc_floats;
    w.stack = w.acc + pl->acc_floats;
    w.hi = (int64_t *)(w.stack + pl->stack_floats);
    return w;
}

/* Tile rows of group (b, g, positions [i0, i0 + npos)) against every key they see, into w.acc. */
static void forward_task(const attn_kernel_set *ks, const attn_shape *s, const plan *pl,
                         const float *qt, const float *kg, const float *vg, int64_t i0,
                         int64_t npos, const scratch *w)
{
    const int64_t D = s->D, G = pl->G, rows = npos * G;
    const int64_t first_sees = attn_causal_keys(s, i0), end = attn_causal_keys(s, i0 + npos - 1);
    memset(w->acc, 0, (size_t)(rows * D) * sizeof(float));
    for (int64_t r = 0; r < rows; r++) w->hi[r] = attn_causal_keys(s, i0 + r / G);
    for (int64_t j0 = 0; j0 < end; j0 += pl->block_k) {
        const int64_t cols = min64(pl->block_k, s->S - j0);
        const bool diagonal = j0 + cols > first_sees; /* some row sees only part of the block */
        ks->tile.pack_kt(w->kt, pl->ld, kg + j0 * D, D, min64(cols, end - j0), D);
        for (int64_t r0 = 0; r0 < rows; r0 += GROUP_ROWS) {
            const int64_t nr = min64(GROUP_ROWS, rows - r0);
            const int64_t gcols = diagonal ? min64(cols, w->hi[r0 + nr - 1] - j0) : cols;
            if (gcols <= 0) continue;
            /* 1: scores */
            ks->tile.scores(w->sc, pl->ld, qt + r0 * D, D, w->kt, pl->ld, nr, gcols, D,
                            (float)s->scale);
            /* 2: σ(S + b) up to each row's limit */
            for (int64_t r = 0; r < nr; r++)
                ks->math.sigmoid_row(w->sc + r * pl->ld, gcols, w->hi[r0 + r] - j0, pl->bias);
            /* 3: acc += P v */
            ks->tile.pv(w->acc + r0 * D, D, w->sc, pl->ld, 1, vg + j0 * D, D, nr, gcols, D);
        }
    }
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    const plan pl = make_plan(s, p);
    const int64_t T = s->T, S = s->S, D = s->D, G = pl.G, tasks = s->B * s->Hkv * pl.nqb;

#pragma omp parallel num_threads(x->threads)
    {
        const scratch w =
            lay_out(&pl, (char *)workspace + (size_t)omp_get_thread_num() * pl.thread_bytes);
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t qb = task % pl.nqb, bg = task / pl.nqb;
            const int64_t b = bg / s->Hkv, g = bg % s->Hkv, i0 = qb * pl.positions;
            const int64_t npos = min64(pl.positions, T - i0), rows = npos * G;
            const float *qt = q + row_of(s, G, b, g, i0, 0) * D; /* rows adjacent unless gather */
            if (pl.gather) { /* stack position-major, head-minor */
                for (int64_t r = 0; r < rows; r++)
                    memcpy(w.stack + r * D, q + row_of(s, G, b, g, i0, r) * D,
                           (size_t)D * sizeof(float));
                qt = w.stack;
            }
            forward_task(x->ks, s, &pl, qt, k + bg * S * D, v + bg * S * D, i0, npos, &w);
            for (int64_t r = 0; r < rows; r++)
                memcpy(out + row_of(s, G, b, g, i0, r) * D, w.acc + r * D,
                       (size_t)D * sizeof(float));
        }
    }
    return ATTN_OK;
}

/* ---- backward ---- */

typedef struct bscratch {
    float *kt, *vt, *P, *dS, *dq, *qstack, *dstack;
    int64_t *hi;
} bscratch;

static bscratch lay_out_backward(const plan *pl, char *mine)
{
    bscratch w;
    w.kt = (float *)mine;
    w.vt = w.kt + pl->kt_floats;
    w.P = w.vt + pl->kt_floats;
    w.dS = w.P + pl->sc_floats;
    w.dq = w.dS + pl->sc_floats;
    w.qstack = w.dq + pl->acc_floats;
    w.dstack = w.qstack + pl->stack_floats;
    w.hi = (int64_t *)(w.dstack + pl->stack_floats);
    return w;
}

static size_t backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                       const attn_shape *s, const attn_params *p)
{
    return (size_t)x->threads * make_plan(s, p).bthread_bytes;
}

/* Query positions [i0, i0 + npos) of group (b, g) against keys [j0, j0 + cols), whose kᵀ, vᵀ are
 * packed in w: dk, dv of those keys accumulated (rows D floats apart), the rows' dq added to dq
 * one thread at a time. */
static void backward_block(const attn_kernel_set *ks, const attn_shape *s, const plan *pl,
                           const bscratch *w, const attn_bwd_io *io, int64_t b, int64_t g,
                           int64_t i0, int64_t npos, int64_t j0, int64_t cols)
{
    const int64_t D = s->D, G = pl->G, rows = npos * G, ld = pl->ld;
    const int64_t kv = (b * s->Hkv + g) * s->S + j0;
    const float *qt = io->q + row_of(s, G, b, g, i0, 0) * D;
    const float *dt = io->dout + row_of(s, G, b, g, i0, 0) * D;
    if (pl->gather) {
        for (int64_t r = 0; r < rows; r++) {
            const int64_t row = row_of(s, G, b, g, i0, r);
            memcpy(w->qstack + r * D, io->q + row * D, (size_t)D * sizeof(float));
            memcpy(w->dstack + r * D, io->dout + row * D, (size_t)D * sizeof(float));
        }
        qt = w->qstack, dt = w->dstack;
    }
    const float *kb = io->k + kv * D;
    float *dkb = io->dk + kv * D, *dvb = io->dv + kv * D;
    const bool diagonal = j0 + cols > attn_causal_keys(s, i0);
    memset(w->dq, 0, (size_t)(rows * D) * sizeof(float));
    for (int64_t r = 0; r < rows; r++) w->hi[r] = attn_causal_keys(s, i0 + r / G) - j0;
    for (int64_t r0 = 0; r0 < rows; r0 += GROUP_ROWS) {
        const int64_t nr = min64(GROUP_ROWS, rows - r0);
        const int64_t gcols = diagonal ? min64(cols, w->hi[r0 + nr - 1]) : cols;
        if (gcols <= 0) continue;
        const float *qr = qt + r0 * D, *dr = dt + r0 * D;
        /* P = σ(scale·q kᵀ + b), 0 past each row's limit */
        ks->tile.scores(w->P, ld, qr, D, w->kt, ld, nr, gcols, D, (float)s->scale);
        for (int64_t r = 0; r < nr; r++)
            ks->math.sigmoid_row(w->P + r * ld, gcols, w->hi[r0 + r], pl->bias);
        /* dS = scale·(dout vᵀ)∘P∘(1 - P) */
        ks->tile.scores(w->dS, ld, dr, D, w->vt, ld, nr, gcols, D, 1.0f);
        for (int64_t r = 0; r < nr; r++)
            ks->math.sigmoid_grad(w->P + r * ld, w->dS + r * ld, gcols, (float)s->scale);
        /* dv += Pᵀ dout, dk += dSᵀ q, dq += dS k */
        ks->tile.pv(dvb, D, w->P, 1, ld, dr, D, gcols, nr, D);
        ks->tile.pv(dkb, D, w->dS, 1, ld, qr, D, gcols, nr, D);
        ks->tile.pv(w->dq + r0 * D, D, w->dS, ld, 1, kb, D, nr, gcols, D);
    }
#pragma omp critical(attn_sigmoid_dq)
    for (int64_t r = 0; r < rows; r++) {
        float *dq = io->dq + row_of(s, G, b, g, i0, r) * D;
        const float *acc = w->dq + r * D;
        for (int64_t d = 0; d < D; d++) dq[d] += acc[d];
    }
}

static attn_status backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            const float *out, const void *saved, const float *dout, float *dq,
                            float *dk, float *dv, void *workspace)
{
    const plan pl = make_plan(s, p);
    const int64_t S = s->S, T = s->T, D = s->D, tasks = s->B * s->Hkv * pl.nkb;
    const attn_bwd_io io = {q, k, v, out, NULL, dout, dq, dk, dv};

#pragma omp parallel num_threads(x->threads)
    {
        const bscratch w = lay_out_backward(&pl, (char *)workspace + (size_t)omp_get_thread_num() *
                                                                         pl.bthread_bytes);

#pragma omp for schedule(static)
        for (int64_t row = 0; row < s->B * s->H * T; row++)
            memset(dq + row * D, 0, (size_t)D * sizeof(float));

            /* a task owns one key block of one (b, kv head): its dk, dv rows are its alone */
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t bg = task / pl.nkb, j0 = task % pl.nkb * pl.block_k;
            const int64_t cols = min64(pl.block_k, S - j0);
            memset(dk + (bg * S + j0) * D, 0, (size_t)(cols * D) * sizeof(float));
            memset(dv + (bg * S + j0) * D, 0, (size_t)(cols * D) * sizeof(float));
            x->ks->tile.pack_kt(w.kt, pl.ld, k + (bg * S + j0) * D, D, cols, D);
            x->ks->tile.pack_kt(w.vt, pl.ld, v + (bg * S + j0) * D, D, cols, D);
            /* the first query that sees key j0: i + S - T >= j0 when causal */
            const int64_t first = s->causal ? max64(0, j0 - (S - T)) : 0;
            for (int64_t i0 = first / pl.positions * pl.positions; i0 < T; i0 += pl.positions)
                backward_block(x->ks, s, &pl, &w, &io, bg / s->Hkv, bg % s->Hkv, i0,
                               min64(pl.positions, T - i0), j0, cols);
        }
    }
    return ATTN_OK;
}

/* ---- the float64 definition ---- */

static double sigmoid64(double x) { return 1.0 / (1.0 + exp(-x)); }

/* q_i · k_j in double. */
static double dot64(const float *a, const float *b, int64_t D)
{
    double acc = 0;
    for (int64_t d = 0; d < D; d++) acc += (double)a[d] * b[d];
    return acc;
}

static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const int64_t D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv;
    const double bias = bias_of(s, p);
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / T, i = rows[r] % T, bg = bh / s->H * s->Hkv + bh % s->H / G;
        const float *qi = q + rows[r] * D, *kg = k + bg * S * D, *vg = v + bg * S * D;
        double *o = out + r * D;
        memset(o, 0, (size_t)D * sizeof(double));
        for (int64_t j = 0; j < attn_causal_keys(s, i); j++) {
            const double pj = sigmoid64(s->scale * dot64(qi, kg + j * D, D) + bias);
            for (int64_t d = 0; d < D; d++) o[d] += pj * vg[j * D + d];
        }
    }
    return ATTN_OK;
}

/* dv_j += Σ_i P_ij dout_i, dS_ij = (dout_i · v_j) P_ij (1 - P_ij), dq_i = scale Σ_j dS_ij k_j,
 * dk_j = scale Σ_i dS_ij q_i: row by row in double. */
static attn_status reference_backward(const attn_ops *self, const attn_shape *s,
                                      const attn_params *p, const float *q, const float *k,
                                      const float *v, const float *dout, double *dq, double *dk,
                                      double *dv)
{
    const int64_t D = s->D, S = s->S, T = s->T, G = s->H / s->Hkv;
    const double bias = bias_of(s, p);
    memset(dq, 0, (size_t)attn_q_elems(s) * sizeof(double));
    memset(dk, 0, (size_t)attn_kv_elems(s) * sizeof(double));
    memset(dv, 0, (size_t)attn_kv_elems(s) * sizeof(double));
    for (int64_t bh = 0; bh < s->B * s->H; bh++) {
        const int64_t bg = bh / s->H * s->Hkv + bh % s->H / G;
        for (int64_t i = 0; i < T; i++) {
            const int64_t row = bh * T + i;
            const float *qi = q + row * D, *gi = dout + row * D;
            for (int64_t j = 0; j < attn_causal_keys(s, i); j++) {
                const int64_t kj = bg * S + j;
                const double P = sigmoid64(s->scale * dot64(qi, k + kj * D, D) + bias);
                const double dS = s->scale * dot64(gi, v + kj * D, D) * P * (1.0 - P);
                for (int64_t d = 0; d < D; d++) {
                    dv[kj * D + d] += P * gi[d];
                    dq[row * D + d] += dS * k[kj * D + d];
                    dk[kj * D + d] += dS * qi[d];
                }
            }
        }
    }
    return ATTN_OK;
}

static const attn_train_ops train = {
    .workspace_bytes = backward_workspace_bytes,
    .backward = backward,
    .reference = reference_backward,
};

const attn_ops attn_kind_sigmoid = {
    .name = "sigmoid",
    .summary =
        "sigmoid attention (FlashSigmoid): sigma(scale q.k + b), b = -ln n, no normalisation",
    .definition =
        "out_i = sum_j sigma(scale * q_i . k_j + b) v_j over every key j (causal:\n"
        "j <= i + S - T), sigma(x) = 1/(1 + exp(-x)), scale = 1/sqrt(D); no row normalisation\n"
        "(Ramapuram et al. 2024, 'Theory, Analysis, and Best Practices for Sigmoid\n"
        "Self-Attention'; apple/ml-sigmoid-attention's FlashSigmoid). b = bias - ln n_b with\n"
        "n_b = bias_len, or the call's S (keys) when bias_len = 0, the default: the paper's\n"
        "b = -log(n) for a sequence of n, which keeps the output's scale as the sequence grows;\n"
        "Apple's released training config instead fixes b = -ln(max_sequence_length): bias_len\n"
        "= L. bias_len = 1 makes b = bias. Query head h reads KV head h / (H/Hkv). A decode step\n"
        "(the last T queries against S cached keys) uses the S of the call, so it equals the\n"
        "last rows of the prefill. Another attention, not an approximation of softmax attention:\n"
        "rel_err (against softmax(q.k/sqrt(D))) is no error; self_rel_err is. Gradients: P =\n"
        "sigma(S + b), dV = P^T dO, dS = (dO V^T) o P o (1 - P), dQ = scale dS K, dK = scale\n"
        "dS^T Q.",
    .params = ATTN_PARAM_TABLE("sigmoid", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .train = &train,
    .on_request = "dense like full, at full's cost per score: bench sweep --kinds sigmoid,full",
};
