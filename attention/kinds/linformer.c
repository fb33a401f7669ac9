/*
 * linformer — Linformer (Wang et al. 2020): keys and values projected along the sequence to k
 * rows, K' = E·K and V' = F·V, then exact softmax attention over the k projected keys.
 * Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   weights (inputs, drawn from `seed` when not given: N(0, 1/k) entries, streams 0 and 1):
 *     share=headwise  proj_k = E, proj_v = F [k,S], shared by every head (the paper's headwise
 *                     sharing; fairseq's default: one compression per layer for all heads)
 *     share=kv        proj_k = E = F [k,S] (key-value sharing; the only weight listed)
 *     share=none      proj_k, proj_v [Hkv,k,S]: a pair per KV head
 *   K', V' are computed once per (b, kv head) and shared by its H/Hkv query heads.
 *   time O(B·Hkv·k·S·D + B·H·T·k·D): linear in n at fixed k
 *   flops: 2 per multiply-add of every product run: 4·k·S·D per (b, kv head) (E·K and F·V) and
 *          4·T·k·D per (b, head) (scores Q·K'ᵀ and P·V'); the softmax's max, exp and sums are
 *          not counted (as on the dense engine, which counts 4·D per score)
 *   bytes: q, k, v, out and the weights, once each
 *   workspace: K', V' [B,Hkv,k,D] floats, then per thread one online-softmax tile
 *              (attn_tile_floats(min(T, QBLOCK), min(k, KBLOCK), D)); independent of n for the
 *              tiles, B·Hkv·2·k·D floats for the projections
 *   threads: OpenMP over (b, kv head, K or V, block of PROJ_ROWS rows of E or F) for the
 *            projections (sgemm [rows,S]×[S,D]), then over (b, head, block of QBLOCK queries):
 *            the tile visits K', V' in blocks of KBLOCK keys (one visit when k <= KBLOCK: the
 *            exact row softmax; more: the online softmax, exact too); OpenBLAS single-threaded.
 * Non-causal by definition (check: ATTN_ENODEF for a causal mask and for decode): every row of
 * E mixes every position of the sequence.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include <cblas.h>

#include "attention.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_K, P_SHARE, P_SEED };
enum { SHARE_NONE, SHARE_HEADWISE, SHARE_KV };
enum { QBLOCK = 256, KBLOCK = 512, PROJ_ROWS = 64, ALIGN_FLOATS = 16 };

extern const attn_ops attn_kind_linformer; /* forward checks its weights against the list */

static const char *const share_names[] = {"none", "headwise", "kv", NULL};

static const attn_param_def params[] = {
    [P_K] = {"k", "projected length: rows of E and F (keys the softmax sees)", 256, 1, 4096, true},
    [P_SHARE] = {"share",
                 "none: E, F per KV head; headwise: E, F shared by the heads; kv: F = E, shared", 1,
                 0, 2, true, share_names},
    [P_SEED] = {"seed", "seed of the projections E and F", 0, 0, 4294967295.0, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round_up(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

typedef struct plan {
    int64_t kk, share;         /* projected length, sharing */
    int64_t qb, kb;            /* queries per task (<= T), keys per visit (<= k) */
    int64_t proj_floats;       /* K' or V' of all (b, kv head), padded */
    int64_t tile_floats;       /* per thread */
    const attn_kernel_set *ks; /* the set of the call (NULL: counts, the reference) */
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    pl.kk = (int64_t)p->v[P_K];
    pl.share = (int64_t)p->v[P_SHARE];
    pl.qb = min64(QBLOCK, s->T);
    pl.kb = min64(KBLOCK, pl.kk);
    pl.proj_floats = round_up(s->B * s->Hkv * pl.kk * s->D);
    pl.tile_floats = round_up(attn_tile_floats(pl.qb, pl.kb, s->D));
    return pl;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    (void)p;
    if (s->decode)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "linformer: no decode step (every projected key mixes the whole "
                         "sequence)");
    if (s->causal)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "linformer: defined without a causal mask (Wang et al. 2020 project "
                         "along the sequence)");
    return ATTN_OK;
}

static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    const int64_t kk = (int64_t)p->v[P_K], share = (int64_t)p->v[P_SHARE];
    const attn_weight per_head = {"", "", 3, {s->Hkv, kk, s->S}}, shared = {"", "", 2, {kk, s->S}};
    out[0] = out[1] = share == SHARE_NONE ? per_head : shared;
    out[0].name = "proj_k";
    out[1].name = "proj_v";
    if (share == SHARE_NONE) {
        out[0].summary = "E [Hkv,k,S]: K' = E[g]·K of KV head g";
        out[1].summary = "F [Hkv,k,S]: V' = F[g]·V of KV head g";
        return 2;
    }
    out[0].summary = share == SHARE_KV ? "E = F [k,S]: K' = E·K and V' = E·V of every head"
                                       : "E [k,S]: K' = E·K of every head";
    out[1].summary = "F [k,S]: V' = F·V of every head";
    return share == SHARE_KV ? 1 : 2;
}

static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    attn_weight list[ATTN_MAX_WEIGHTS];
    const int n = weights(self, s, p, list);
    const double sigma = 1.0 / sqrt(p->v[P_K]);
    for (int i = 0; i < n; i++)
        attn_weights_normal(w[i], attn_weight_elems(&list[i]), sigma, (uint64_t)p->v[P_SEED],
                            (uint64_t)i);
    return ATTN_OK;
}

/* E (which = 0) or F (which = 1) of KV head g: [k,S]. */
static const float *projection(const attn_shape *s, const attn_params *p, int which, int64_t g)
{
    const int64_t kk = (int64_t)p->v[P_K], share = (int64_t)p->v[P_SHARE];
    if (share == SHARE_KV) return p->w[0];
    return p->w[which] + (share == SHARE_NONE ? g * kk * s->S : 0);
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    return (size_t)(2 * pl.proj_floats + (int64_t)x->threads * pl.tile_floats) * sizeof(float);
}

/* Rows [r0, r0 + n) of K' (which = 0) or V' of (b, g): E or F rows times K or V by sgemm. */
static void project(const attn_shape *s, const attn_params *p, const plan *pl, int64_t bg,
                    int which, int64_t r0, int64_t n, const float *k, const float *v, float *proj)
{
    const int64_t S = s->S, D = s->D;
    const float *E = projection(s, p, which, bg % s->Hkv) + r0 * S;
    const float *x = (which ? v : k) + bg * S * D;
    float *dst = proj + (which ? pl->proj_floats : 0) + (bg * pl->kk + r0) * D;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)D, (int)S, 1.0f, E, (int)S,
                x, (int)D, 0.0f, dst, (int)D);
}

/* Queries [i0, i0 + n) of (b, h) against the k projected keys of its KV head. */
static void answer(const attn_shape *s, const plan *pl, int64_t bh, int64_t i0, int64_t n,
                   const float *q, const float *proj, float *out, float *tile_scratch)
{
    const int64_t D = s->D, b = bh / s->H, g = (bh % s->H) / (s->H / s->Hkv);
    const float *kp = proj + (b * s->Hkv + g) * pl->kk * D, *vp = kp + pl->proj_floats;
    const int64_t off = (bh * s->T + i0) * D;
    attn_tile t;
    attn_tile_begin(&t, pl->ks, tile_scratch, n, D, (float)s->scale);
    for (int64_t j0 = 0; j0 < pl->kk; j0 += pl->kb)
        attn_tile_visit(&t, 0, n, q + off, kp + j0 * D, vp + j0 * D, min64(pl->kb, pl->kk - j0),
                        NULL);
    attn_tile_end(&t, out + off);
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st == ATTN_OK) st = check(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    float *proj = workspace, *tiles = proj + 2 * pl.proj_floats;
    const int64_t nrb = (pl.kk + PROJ_ROWS - 1) / PROJ_ROWS, nqb = (s->T + pl.qb - 1) / pl.qb;
    const int64_t proj_tasks = s->B * s->Hkv * 2 * nrb, answer_tasks = s->B * s->H * nqb;
    attn_blas_threads(1);
#pragma omp parallel num_threads(x->threads)
    {
        float *mine = tiles + (size_t)omp_get_thread_num() * (size_t)pl.tile_floats;
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < proj_tasks; task++) {
            const int64_t rb = task % nrb, which = (task / nrb) % 2, bg = task / (2 * nrb);
            const int64_t r0 = rb * PROJ_ROWS;
            project(s, p, &pl, bg, (int)which, r0, min64(PROJ_ROWS, pl.kk - r0), k, v, proj);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < answer_tasks; task++) {
            const int64_t i0 = (task % nqb) * pl.qb;
            answer(s, &pl, task / nqb, i0, min64(pl.qb, s->T - i0), q, proj, out, mine);
        }
    }
    return ATTN_OK;
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const double kk = p->v[P_K], D = (double)s->D;
    return 4.0 * kk * D * ((double)(s->B * s->Hkv * s->S) + (double)(s->B * s->H * s->T));
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = weights(self, s, p, w);
    double floats = 2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s);
    for (int i = 0; i < n; i++) floats += (double)attn_weight_elems(&w[i]);
    return sizeof(float) * floats;
}

/* K' and V' of (b, g) in float64: [k,D] each. */
static void project64(const attn_shape *s, const attn_params *p, int64_t b, int64_t g,
                      const float *k, const float *v, double *kp, double *vp)
{
    const int64_t S = s->S, D = s->D, kk = (int64_t)p->v[P_K];
    const float *x[2] = {k + (b * s->Hkv + g) * S * D, v + (b * s->Hkv + g) * S * D};
    double *dst[2] = {kp, vp};
    for (int which = 0; which < 2; which++) {
        const float *E = projection(s, p, which, g);
        for (int64_t l = 0; l < kk; l++) {
            double *row = dst[which] + l * D;
            for (int64_t d = 0; d < D; d++) row[d] = 0;
            for (int64_t j = 0; j < S; j++) {
                const double e = E[l * S + j];
                for (int64_t d = 0; d < D; d++) row[d] += e * x[which][j * D + d];
            }
        }
    }
}

/* The definition in float64: exact softmax over the k projected keys, row by row. */
static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const int64_t D = s->D, kk = (int64_t)p->v[P_K], G = s->H / s->Hkv;
    double *kp = malloc((size_t)(2 * kk * D + kk) * sizeof(double));
    if (!kp) return ATTN_EFAIL;
    double *vp = kp + kk * D, *w = vp + kk * D;
    int64_t have = -1; /* the (b, kv head) kp and vp hold */
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / s->T, b = bh / s->H, g = (bh % s->H) / G;
        if (b * s->Hkv + g != have) project64(s, p, b, g, k, v, kp, vp), have = b * s->Hkv + g;
        const float *qi = q + rows[r] * D;
        for (int64_t l = 0; l < kk; l++) {
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += (double)qi[d] * kp[l * D + d];
            w[l] = dot * s->scale;
        }
        attn_softmax_reference_row64(w, kk, vp, D, out + r * D);
    }
    free(kp);
    return ATTN_OK;
}

static const attn_weight_ops weight_ops = {
    .list = weights,
    .draw = draw_weights,
};

const attn_ops attn_kind_linformer = {
    .name = "linformer",
    .no_backward = "not implemented (the projected keys and values E·K, F·V)",
    .summary = "Linformer: K, V projected along the sequence to k rows (E, F), softmax over them",
    .definition =
        "Wang et al. 2020, non-causal: K' = E K, V' = F V with E, F [k,S] (weights proj_k,\n"
        "proj_v; drawn from `seed` with N(0, 1/k) entries unless given), then exact softmax\n"
        "over the k projected keys: out_i = sum_l softmax_l(scale q_i . K'_l) V'_l, scale\n"
        "1/sqrt(D). share=headwise (default): one E and one F for every head; kv: F = E;\n"
        "none: E[g], F[g] per KV head g. K', V' are per KV head (its query heads share them).\n"
        "k may exceed S. No causal mask, no decode (refused: E mixes every position).",
    .params = ATTN_PARAM_TABLE("linformer", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .weights = &weight_ops,
};
