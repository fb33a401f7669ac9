/*
 * nystrom — Nyströmformer (Xiong et al. 2021): softmax attention approximated from m landmarks,
 * the segment means of the queries and of the keys, with the iterative Moore–Penrose
 * pseudo-inverse of the paper. Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   m = min(landmarks, T, S); Q~ [m,D] means of T/m query segments, K~ [m,D] of S/m keys
 *   F = softmax(Q K~ᵀ·scale) [T,m]   A = softmax(Q~ K~ᵀ·scale) [m,m]   B = softmax(Q~ Kᵀ·scale)
 *   out = F · (Z · (B·V)),  Z = pinv_iters steps of Z ← ¼ Z(13I − AZ(15I − AZ(7I − AZ)))
 *   from Z0 = Aᵀ / (‖A‖₁‖A‖∞)
 *   Computed as three attentions: B·V is the attention of the m landmark queries Q~ over the S
 *   keys (online-softmax tile, kernels.h: B [m,S] is never stored), W = Z·(B·V) [m,D], and out
 *   is the attention of the T queries over the m landmark keys K~ with values W.
 *   A's scores and softmax in float64 (m²·D), the iteration and W in float32 by sgemm, as the
 *   paper's code runs them (in float64 the m³ iteration would run on half the vector lanes).
 *   The iteration multiplies rounding errors by up to ~3.25 per step along A's small singular
 *   values, so pinv_iters <= 12: the float32 output stays within 5e-6 of the float64 definition
 *   at the test shapes (more iterations leave that bound, even with the iteration in float64).
 *   time O(B·H·(n·m·D + m³·pinv_iters)): linear in n at fixed m
 *   flops: 2 per multiply-add of every product run, per (b, head): 4·m·S·D (B·V), 4·T·m·D
 *          (F·W), 2·m²·D (A), 8·m³ per iteration (four m×m products), 2·m²·D (W = Z·BV); the
 *          means, the softmax's max, exp and sums and the identity shifts are not counted
 *   bytes: q, k, v, out once each
 *   workspace: K~ and W [B,H,m,D] floats; per thread a tile (the larger of attn_tile_floats(m,
 *              min(BV_KEYS, S), D) and attn_tile_floats(min(QBLOCK, T), min(KBLOCK, m), D)),
 *              Q~ and B·V [m,D] and A, Z and 3 products [m,m] floats, A's scores [m,m] and
 *              Q~, K~ [m,D] doubles. Independent of n but for the tile's key block.
 *   threads: OpenMP over (b, head) for the landmarks, B·V (key blocks of BV_KEYS), A, Z and W
 *            (phase 1), then over (b, head, block of QBLOCK queries) for F·W (phase 2);
 *            OpenBLAS single-threaded.
 * Non-causal by definition (check: ATTN_ENODEF for a causal mask and for decode): the landmarks
 * average the whole sequence. The paper's optional depthwise convolution of V added to the output
 * (conv_kernel_size in its code) is left out: it is a separate layer with weights of its own.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "attention.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_LANDMARKS, P_ITERS };
enum { QBLOCK = 256, KBLOCK = 256, BV_KEYS = 1024, ALIGN_FLOATS = 16 };

static const attn_param_def params[] = {
    [P_LANDMARKS] = {"landmarks", "m: segment means of Q and of K (min(m, T, S) are used)", 64, 1,
                     1024, true},
    [P_ITERS] = {"pinv_iters", "iterations of the Moore-Penrose approximation of A's inverse", 6, 0,
                 12, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t round_up(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

typedef struct plan {
    int64_t m, iters;
    int64_t qb, kb;            /* phase 2: queries per task (<= T); landmark keys per visit */
    int64_t kb1;               /* phase 1 (B·V): keys per visit (<= S) */
    int64_t md;                /* floats of one [m,D] matrix, padded */
    int64_t tile_floats;       /* per thread: the tile */
    int64_t thread_floats;     /* tile; Q~, B·V [m,D]; A, Z and 3 products [m,m] */
    int64_t thread_doubles;    /* A's scores [m,m]; Q~, K~ [m,D] */
    const attn_kernel_set *ks; /* the set of the call (NULL: counts, the reference) */
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    pl.m = min64((int64_t)p->v[P_LANDMARKS], min64(s->T, s->S));
    pl.iters = (int64_t)p->v[P_ITERS];
    pl.qb = min64(QBLOCK, s->T);
    pl.kb = min64(KBLOCK, pl.m);
    pl.kb1 = min64(BV_KEYS, s->S);
    pl.md = round_up(pl.m * s->D);
    pl.tile_floats =
        round_up(max64(attn_tile_floats(pl.m, pl.kb1, s->D), attn_tile_floats(pl.qb, pl.kb, s->D)));
    pl.thread_floats = pl.tile_floats + 2 * pl.md + 5 * round_up(pl.m * pl.m);
    pl.thread_doubles = round_up(pl.m * pl.m + 2 * pl.m * s->D);
    return pl;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    (void)p;
    if (s->decode)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "nystrom: no decode step (the landmarks average the whole sequence)");
    if (s->causal)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "nystrom: defined without a causal mask (Xiong et al. 2021: the landmarks "
                         "average the whole sequence)");
    return ATTN_OK;
}

/* Layout: per thread [doubles | floats], then K~ and W of every (b, head). */
static size_t thread_bytes(const plan *pl)
{
    return (size_t)pl->thread_doubles * sizeof(double) + (size_t)pl->thread_floats * sizeof(float);
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    return (size_t)x->threads * thread_bytes(&pl) +
           (size_t)(2 * s->B * s->H * pl.md) * sizeof(float);
}

/* Row l of the m segment means of x [n,D]: rows [l·n/m, (l+1)·n/m) (sizes ⌊n/m⌋ or ⌈n/m⌉). */
static void segment_mean(const float *x, int64_t n, int64_t m, int64_t l, int64_t D, double *mean)
{
    const int64_t a = l * n / m, e = (l + 1) * n / m;
    for (int64_t d = 0; d < D; d++) mean[d] = 0;
    for (int64_t j = a; j < e; j++)
        for (int64_t d = 0; d < D; d++) mean[d] += x[j * D + d];
    for (int64_t d = 0; d < D; d++) mean[d] /= (double)(e - a);
}

/* The m landmarks of x [n,D] as floats (sums in double). row: D doubles of scratch. */
static void landmarks(const float *x, int64_t n, int64_t m, int64_t D, double *row, float *out)
{
    for (int64_t l = 0; l < m; l++) {
        segment_mean(x, n, m, l, D, row);
        for (int64_t d = 0; d < D; d++) out[l * D + d] = (float)row[d];
    }
}

/* c = alpha·a·b, [m,m] row-major floats. */
static void mm(int64_t m, float alpha, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)m, (int)m, alpha, a, (int)m,
                b, (int)m, 0.0f, c, (int)m);
}

/* x = c·I − x, [m,m]. */
static void shift_neg(int64_t m, float c, float *x)
{
    for (int64_t e = 0; e < m * m; e++) x[e] = -x[e];
    for (int64_t i = 0; i < m; i++) x[i * m + i] += c;
}

/* 1 / (‖A‖₁‖A‖∞): the largest column and row sums of |A|; Z0 = Aᵀ times this. */
static double pinv_scale(int64_t m, const double *A)
{
    double n1 = 0, ninf = 0;
    for (int64_t i = 0; i < m; i++) {
        double row = 0, col = 0;
        for (int64_t j = 0; j < m; j++) row += fabs(A[i * m + j]), col += fabs(A[j * m + i]);
        n1 = fmax(n1, col), ninf = fmax(ninf, row);
    }
    return 1.0 / (n1 * ninf);
}

/* Z = the iterative pseudo-inverse of A [m,m] (float64) in float32, as the paper's code runs it;
 * f: 5·round_up(m²) floats, Z the second of them. */
static float *pinv(int64_t m, int64_t iters, const double *A, float *f)
{
    const int64_t mm2 = round_up(m * m);
    float *Af = f, *Z = Af + mm2, *AZ = Z + mm2, *t1 = AZ + mm2, *t2 = t1 + mm2;
    const double c = pinv_scale(m, A);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++)
            Af[i * m + j] = (float)A[i * m + j], Z[i * m + j] = (float)(c * A[j * m + i]);
    for (int64_t it = 0; it < iters; it++) {
        mm(m, 1.0f, Af, Z, AZ);
        memcpy(t1, AZ, (size_t)(m * m) * sizeof(float));
        shift_neg(m, 7.0f, t1); /* 7I − AZ */
        mm(m, 1.0f, AZ, t1, t2);
        shift_neg(m, 15.0f, t2); /* 15I − AZ(7I − AZ) */
        mm(m, 1.0f, AZ, t2, t1);
        shift_neg(m, 13.0f, t1); /* 13I − AZ(15I − AZ(7I − AZ)) */
        mm(m, 0.25f, Z, t1, t2); /* the next Z */
        memcpy(Z, t2, (size_t)(m * m) * sizeof(float));
    }
    return Z;
}

/* Each row of x [m,n] replaced by its softmax. */
static void softmax_rows(double *x, int64_t m, int64_t n)
{
    for (int64_t i = 0; i < m; i++) {
        double *row = x + i * n, mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; j++) mx = fmax(mx, row[j]);
        for (int64_t j = 0; j < n; j++) sum += (row[j] = exp(row[j] - mx));
        for (int64_t j = 0; j < n; j++) row[j] /= sum;
    }
}

/* Phase 1 for (b, head) bh: K~ and W = Z·(B·V) into the shared store. */
static void landmark_phase(const attn_shape *s, const plan *pl, int64_t bh, const float *q,
                           const float *k, const float *v, float *store, double *dw, float *fw)
{
    const int64_t D = s->D, S = s->S, m = pl->m, b = bh / s->H, g = (bh % s->H) / (s->H / s->Hkv);
    const float *kg = k + (b * s->Hkv + g) * S * D, *vg = v + (b * s->Hkv + g) * S * D;
    double *A = dw, *qd = A + m * m, *kd = qd + m * D;
    float *qt = fw + pl->tile_floats, *bv = qt + pl->md, *f = bv + pl->md;
    float *kt = store + bh * pl->md, *w = store + (s->B * s->H + bh) * pl->md;
    landmarks(q + bh * s->T * D, s->T, m, D, qd, qt);
    landmarks(kg, S, m, D, qd, kt);
    attn_tile t; /* B·V: the m landmark queries over every key */
    attn_tile_begin(&t, pl->ks, fw, m, D, (float)s->scale);
    for (int64_t j0 = 0; j0 < S; j0 += pl->kb1)
        attn_tile_visit(&t, 0, m, qt, kg + j0 * D, vg + j0 * D, min64(pl->kb1, S - j0), NULL);
    attn_tile_end(&t, bv);
    for (int64_t e = 0; e < m * D; e++) qd[e] = qt[e], kd[e] = kt[e];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)m, (int)D, s->scale, qd,
                (int)D, kd, (int)D, 0.0, A, (int)m); /* A = softmax(Q~ K~ᵀ·scale) */
    softmax_rows(A, m, m);
    const float *Z = pinv(m, pl->iters, A, f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)D, (int)m, 1.0f, Z, (int)m,
                bv, (int)D, 0.0f, w, (int)D); /* W = Z·(B·V) */
}

/* Phase 2: queries [i0, i0 + n) of (b, head) bh over the m landmark keys K~ with values W. */
static void answer(const attn_shape *s, const plan *pl, int64_t bh, int64_t i0, int64_t n,
                   const float *q, const float *store, float *out, float *tile_scratch)
{
    const int64_t D = s->D, m = pl->m, off = (bh * s->T + i0) * D;
    const float *kt = store + bh * pl->md, *w = store + (s->B * s->H + bh) * pl->md;
    attn_tile t;
    attn_tile_begin(&t, pl->ks, tile_scratch, n, D, (float)s->scale);
    for (int64_t j0 = 0; j0 < m; j0 += pl->kb)
        attn_tile_visit(&t, 0, n, q + off, kt + j0 * D, w + j0 * D, min64(pl->kb, m - j0), NULL);
    attn_tile_end(&t, out + off);
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    const attn_status st = check(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    plan pl = make_plan(s, p);
    pl.ks = x->ks;
    const size_t per_thread = thread_bytes(&pl);
    float *store = (float *)((char *)workspace + (size_t)x->threads * per_thread);
    const int64_t BH = s->B * s->H, nqb = (s->T + pl.qb - 1) / pl.qb;
    attn_blas_threads(1);
#pragma omp parallel num_threads(x->threads)
    {
        char *mine = (char *)workspace + (size_t)omp_get_thread_num() * per_thread;
        double *dw = (double *)mine;
        float *fw = (float *)(mine + (size_t)pl.thread_doubles * sizeof(double));
#pragma omp for schedule(dynamic, 1)
        for (int64_t bh = 0; bh < BH; bh++) landmark_phase(s, &pl, bh, q, k, v, store, dw, fw);
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < BH * nqb; task++) {
            const int64_t i0 = (task % nqb) * pl.qb;
            answer(s, &pl, task / nqb, i0, min64(pl.qb, s->T - i0), q, store, out, fw);
        }
    }
    return ATTN_OK;
}

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const plan pl = make_plan(s, p);
    const double m = (double)pl.m, D = (double)s->D;
    const double head =
        4.0 * m * D * (double)(s->S + s->T) + 4.0 * m * m * D + 8.0 * m * m * m * (double)pl.iters;
    return head * (double)(s->B * s->H);
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    (void)p;
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s));
}

/* ---- the float64 definition (plain loops, independent of the forward's BLAS calls) ---- */

/* c [m,n] = a [m,m] · b [m,n] */
static void ref_mul(int64_t m, int64_t n, const double *a, const double *b, double *c)
{
    for (int64_t i = 0; i < m; i++) {
        double *ci = c + i * n;
        for (int64_t j = 0; j < n; j++) ci[j] = 0;
        for (int64_t l = 0; l < m; l++)
            for (int64_t j = 0; j < n; j++) ci[j] += a[i * m + l] * b[l * n + j];
    }
}

/* Z = pinv_iters steps from Z0 = Aᵀ/(‖A‖₁‖A‖∞), as in the paper; t: 3·m² doubles. */
static void ref_pinv(int64_t m, int64_t iters, const double *A, double *Z, double *t)
{
    const double c = pinv_scale(m, A);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) Z[i * m + j] = c * A[j * m + i];
    double *AZ = t, *x = t + m * m, *y = x + m * m;
    for (int64_t it = 0; it < iters; it++) {
        ref_mul(m, m, A, Z, AZ);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++) x[i * m + j] = 7.0 * (i == j) - AZ[i * m + j];
        ref_mul(m, m, AZ, x, y);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++) y[i * m + j] = 15.0 * (i == j) - y[i * m + j];
        ref_mul(m, m, AZ, y, x);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++) x[i * m + j] = 13.0 * (i == j) - x[i * m + j];
        ref_mul(m, m, Z, x, y);
        for (int64_t e = 0; e < m * m; e++) Z[e] = 0.25 * y[e];
    }
}

/* K~ and W = Z·(B·V) of (b, head) bh in float64 into kt, w [m,D]; buf: the scratch below. */
static void ref_head(const attn_shape *s, int64_t m, int64_t iters, int64_t bh, const float *q,
                     const float *k, const float *v, double *kt, double *w, double *buf)
{
    const int64_t D = s->D, S = s->S, b = bh / s->H, g = (bh % s->H) / (s->H / s->Hkv);
    const float *kg = k + (b * s->Hkv + g) * S * D, *vg = v + (b * s->Hkv + g) * S * D;
    double *qt = buf, *A = qt + m * D, *Z = A + m * m, *t = Z + m * m, *bv = t + 3 * m * m;
    double *sc = bv + m * D; /* [S] */
    for (int64_t l = 0; l < m; l++) {
        segment_mean(q + bh * s->T * D, s->T, m, l, D, qt + l * D);
        segment_mean(kg, S, m, l, D, kt + l * D);
    }
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < m; j++) {
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += qt[i * D + d] * kt[j * D + d];
            A[i * m + j] = dot * s->scale;
        }
        for (int64_t j = 0; j < S; j++) { /* row i of B, then (B·V)_i */
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += qt[i * D + d] * kg[j * D + d];
            sc[j] = dot * s->scale;
        }
        attn_softmax_reference_row(sc, S, vg, D, bv + i * D);
    }
    softmax_rows(A, m, m);
    ref_pinv(m, iters, A, Z, t);
    ref_mul(m, D, Z, bv, w);
}

static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const int64_t D = s->D, m = make_plan(s, p).m, iters = (int64_t)p->v[P_ITERS];
    const int64_t scratch = 2 * m * D + 5 * m * m + m * D + max64(s->S, m);
    double *kt = malloc((size_t)(scratch + 2 * m * D) * sizeof(double));
    if (!kt) return ATTN_EFAIL;
    double *w = kt + m * D, *buf = w + m * D, *f = buf; /* f: one row of F, after ref_head */
    int64_t have = -1;
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t bh = rows[r] / s->T;
        if (bh != have) ref_head(s, m, iters, bh, q, k, v, kt, w, buf), have = bh;
        const float *qi = q + rows[r] * D;
        for (int64_t l = 0; l < m; l++) {
            double dot = 0;
            for (int64_t d = 0; d < D; d++) dot += (double)qi[d] * kt[l * D + d];
            f[l] = dot * s->scale;
        }
        attn_softmax_reference_row64(f, m, w, D, out + r * D);
    }
    free(kt);
    return ATTN_OK;
}

const attn_ops attn_kind_nystrom = {
    .name = "nystrom",
    .no_backward = "not implemented (the landmarks and the pseudo-inverse of their kernel)",
    .summary = "Nystromformer: m landmarks (segment means), softmax kernels, iterative pinv",
    .definition =
        "Xiong et al. 2021, non-causal. m = min(landmarks, T, S); landmark l of the queries is\n"
        "the mean of rows [floor(l T/m), floor((l+1) T/m)) of Q (Q~ [m,D]: segments of floor or\n"
        "ceil(T/m) rows; the paper's code needs m | n); of the keys, the same over the S rows of\n"
        "K (K~). F = softmax(scale Q K~^T) [T,m], A = softmax(scale Q~ K~^T) [m,m],\n"
        "B = softmax(scale Q~ K^T) [m,S] (row-wise, scale 1/sqrt(D)); out = F Z (B V), Z the\n"
        "paper's approximate Moore-Penrose inverse of A: Z0 = A^T/(|A|_1 |A|_inf) (per head;\n"
        "the code's default init takes the largest column sum over all heads), then pinv_iters\n"
        "steps Z <- Z(13I - AZ(15I - AZ(7I - AZ)))/4. m >= T = S: the landmarks are the rows.\n"
        "Without the optional depthwise convolution of V (conv_kernel_size in the paper's code).\n"
        "No causal mask, no decode (refused: the landmarks average the whole sequence).",
    .params = ATTN_PARAM_TABLE("nystrom", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
};
