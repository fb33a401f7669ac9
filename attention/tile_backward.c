/*
 * tile_backward.c — the FlashAttention-2 backward tile (kernels.h: attn_btile): one block of
 * query rows against a block of keys, given the rows' log-sum-exp (saved by the forward) and
 * Δ = rowsum(dout∘out); never more than rows × cols scores.
 *   q, dout [rows,D]  k, v, dk, dv [cols,D]  dq accumulator [rows,D]
 *   1  S  = scale · q kᵀ                        kᵀ packed, scores micro-kernel, rows×cols×D
 *                                               (attn_btile_visit_packed: kᵀ, vᵀ given packed)
 *   2  per row: softcap (keeping 1 - tanh²), ALiBi, mask, P = exp(S - lse)   (exp on vectors)
 *   3  dP = dout vᵀ                             vᵀ packed, scores micro-kernel, rows×cols×D
 *   4  dS = scale · P∘(dP - Δ)·ds/du            (vectorised)
 *   5  dv += Pᵀ dout,  dk += dSᵀ q,  dq += dS k  the p·v micro-kernel (Pᵀ, dSᵀ read transposed)
 *   The micro-kernels are the kernel set's (simd/tile_body.h, as the forward tile's; no BLAS).
 *   Rows against listed keys (attn_btile_visit_list, _visit_one: one row, one key) by vector
 *   loops: the dot products, then dq, dk, dv in one pass (the set's dot2, axpy3).
 *   time O(rows·cols·D), 10·rows·cols·D flops; scratch attn_btile_floats; single-threaded.
 */
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "simd/kernel_set.h"

enum { ALIGN_FLOATS = 16 };

static int64_t round_up(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }
static int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

int64_t attn_btile_floats(int64_t rows_max, int64_t cols_max, int64_t D, bool cap)
{
    const int64_t block = round_up(rows_max * attn_tile_score_ld(cols_max));
    return attn_tile_floats(rows_max, cols_max, D) + block + (cap ? block : 0);
}

void attn_btile_begin(attn_btile *b, float *scratch, int64_t rows, int64_t cols_max, int64_t D,
                      float scale, bool cap)
{
    attn_tile_begin(&b->t, scratch, rows, D, scale);
    b->dp = scratch + attn_tile_floats(rows, cols_max, D);
    b->dcap = cap ? b->dp + round_up(rows * attn_tile_score_ld(cols_max)) : NULL;
    b->grows = NULL;
}

void attn_btile_row(attn_btile *b, int64_t r, float lse, const float *dout, const float *out)
{
    b->t.m[r] = lse;
    b->t.l[r] = attn_vdot(dout, out, b->t.D);
}

/* Row r of the scores (ld floats, cols seen within [a, e) minus [xa, xe)) into probabilities:
 * modifiers (softcap's derivative into dcap), the mask at -inf, exp(s - lse). */
static void probabilities(attn_btile *b, int64_t r, float *row, float *dcap, int64_t cols,
                          int64_t a, int64_t e, int64_t xa, int64_t xe)
{
    const attn_tile *t = &b->t;
    if (t->cap > 0.0f && e > a) {
        attn_vsoftcap(row + a, e - a, t->cap);
        const float inv = 1.0f / t->cap;
        for (int64_t j = a; j < e; j++) dcap[j] = 1.0f - (row[j] * inv) * (row[j] * inv);
        for (int64_t j = 0; j < a; j++) dcap[j] = 0.0f; /* unseen: finite (times P = 0) */
        for (int64_t j = e; j < cols; j++) dcap[j] = 0.0f;
    } else if (dcap) {
        memset(dcap, 0, (size_t)cols * sizeof(float));
    }
    attn_tile_alibi_row(t, r, row, a, e);
    for (int64_t j = 0; j < a; j++) row[j] = -INFINITY;
    for (int64_t j = xa; j < xe; j++) row[j] = -INFINITY;
    for (int64_t j = e; j < round_up(cols); j++) row[j] = -INFINITY;
    attn_vexp_sum(row, round_up(cols), t->m[r]);
}

/* Steps 1-2 of a visit: P [nrows, ld] from the packed kᵀ (kt, ldkt floats a row). */
static void visit_probabilities(attn_btile *b, int64_t r0, int64_t nrows, const float *q,
                                int64_t ldq, const float *kt, int64_t ldkt, int64_t cols,
                                const attn_tile_mask *mask)
{
    attn_tile *t = &b->t;
    const int64_t ld = attn_tile_score_ld(cols);
    float *P = t->scores;
    attn_ks()->tile.scores(P, ld, q, ldq, kt, ldkt, nrows, cols, t->D, t->scale);
    for (int64_t r = 0; r < nrows; r++) {
        int64_t a = 0, e = cols, xa = 0, xe = 0;
        if (mask) {
            if (mask->lo) a = clamp64(mask->lo[r] - mask->col0, 0, cols);
            if (mask->hi) e = clamp64(mask->hi[r] - mask->col0, a, cols);
            if (mask->xlo) {
                xa = clamp64(mask->xlo[r] - mask->col0, a, e);
                xe = clamp64(mask->xhi[r] - mask->col0, xa, e);
            }
        }
        probabilities(b, r0 + r, P + r * ld, b->dcap ? b->dcap + r * ld : NULL, cols, a, e, xa, xe);
    }
}

/* Steps 3-5 of a visit, given P: dP from the packed vᵀ (vt, ldvt floats a row), dS, then
 * dv, dk (rows ldg apart) and dq (dS k, k rows ldk apart). */
static void visit_gradients(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                            const float *dout, int64_t lddo, const float *vt, int64_t ldvt,
                            const float *k, int64_t ldk, float *dk, float *dv, int64_t ldg,
                            int64_t cols)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &attn_ks()->tile;
    const int64_t D = t->D, ld = attn_tile_score_ld(cols);
    float *P = t->scores, *dS = b->dp;
    kt->scores(dS, ld, dout, lddo, vt, ldvt, nrows, cols, D, 1.0f); /* dP = dout vᵀ */
    for (int64_t r = 0; r < nrows; r++) { /* dS, scaled once for dk and dq */
        attn_ks()->math.scores_grad(P + r * ld, dS + r * ld, b->dcap ? b->dcap + r * ld : NULL,
                                    t->l[r0 + r], cols);
        attn_ks()->math.vscale(dS + r * ld, cols, t->scale);
    }
    if (b->grows) { /* key c's gradient rows at grows[c]·ldg */
        kt->pv_rows(dv, ldg, b->grows, P, 1, ld, dout, lddo, cols, nrows, D);
        kt->pv_rows(dk, ldg, b->grows, dS, 1, ld, q, ldq, cols, nrows, D);
    } else {
        kt->pv(dv, ldg, P, 1, ld, dout, lddo, cols, nrows, D); /* dv += Pᵀ dout */
        kt->pv(dk, ldg, dS, 1, ld, q, ldq, cols, nrows, D);    /* dk += scale·dSᵀ q */
    }
    kt->pv(t->acc + r0 * D, D, dS, ld, 1, k, ldk, nrows, cols, D); /* dq += scale·dS k */
}

void attn_btile_visit(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                      const float *dout, int64_t lddo, const float *k, const float *v, int64_t ldkv,
                      float *dk, float *dv, int64_t ldg, int64_t cols, const attn_tile_mask *mask)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &attn_ks()->tile;
    const int64_t ld = attn_tile_score_ld(cols);
    float *packed = t->scores + round_up(t->rows * ld);
    kt->pack_kt(packed, ld, k, ldkv, cols, t->D);
    visit_probabilities(b, r0, nrows, q, ldq, packed, ld, cols, mask);
    kt->pack_kt(packed, ld, v, ldkv, cols, t->D); /* vᵀ: dP = dout vᵀ */
    visit_gradients(b, r0, nrows, q, ldq, dout, lddo, packed, ld, k, ldkv, dk, dv, ldg, cols);
}

void attn_btile_visit_packed(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                             const float *dout, int64_t lddo, const float *kt, const float *vt,
                             int64_t ldt, const float *k, int64_t ldk, float *dk, float *dv,
                             int64_t ldg, int64_t cols, const attn_tile_mask *mask)
{
    visit_probabilities(b, r0, nrows, q, ldq, kt, ldt, cols, mask);
    visit_gradients(b, r0, nrows, q, ldq, dout, lddo, vt, ldt, k, ldk, dk, dv, ldg, cols);
}

void attn_btile_visit_list(attn_btile *b, int64_t r, const float *q, const float *dout,
                           const float *k, const float *v, float *dk, float *dv, const int64_t *idx,
                           int64_t n)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &attn_ks()->tile;
    const int64_t D = t->D;
    float *P = t->scores, *dcap = b->dcap;
    for (int64_t x = 0; x < n; x++) P[x] = t->scale * attn_vdot(q, k + idx[x] * D, D);
    if (t->cap > 0.0f) {
        attn_vsoftcap(P, n, t->cap);
        for (int64_t x = 0; x < n; x++) dcap[x] = 1.0f - (P[x] / t->cap) * (P[x] / t->cap);
    }
    if (t->alibi)
        for (int64_t x = 0; x < n; x++) P[x] -= t->slope[r] * fabsf(t->qpos[r] - (float)idx[x]);
    for (int64_t x = n; x < round_up(n); x++) P[x] = -INFINITY;
    attn_vexp_sum(P, round_up(n), t->m[r]);
    float *dq = t->acc + r * D;
    for (int64_t x = 0; x < n; x++) {
        const float *kx = k + idx[x] * D, *vx = v + idx[x] * D;
        float ds = P[x] * (attn_vdot(dout, vx, D) - t->l[r]) * t->scale;
        if (t->cap > 0.0f) ds *= dcap[x];
        kt->axpy3(dq, ds, kx, dk + idx[x] * D, ds, q, dv + idx[x] * D, P[x], dout, D);
    }
}

void attn_btile_visit_one(attn_btile *b, int64_t r, const float *q, const float *dout, int64_t j,
                          const float *kj, const float *vj, float *dkj, float *dvj)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &attn_ks()->tile;
    float dots[2]; /* q·k, dout·v */
    kt->dot2(q, kj, dout, vj, t->D, dots);
    float s = t->scale * dots[0], dcap = 1.0f;
    if (t->cap > 0.0f) {
        attn_vsoftcap(&s, 1, t->cap);
        dcap = 1.0f - (s / t->cap) * (s / t->cap);
    }
    if (t->alibi) s -= t->slope[r] * fabsf(t->qpos[r] - (float)j);
    const float p = expf(s - t->m[r]); /* lse = +inf (a row that sees no key): 0 */
    const float ds = p * (dots[1] - t->l[r]) * t->scale * dcap;
    kt->axpy3(t->acc + r * t->D, ds, kj, dkj, ds, q, dvj, p, dout, t->D);
}
