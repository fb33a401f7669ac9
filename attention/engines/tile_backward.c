/*
 * tile_backward.c — the FlashAttention-2 backward tile (kernels.h: attn_btile): one block of
 * query rows against a block of keys, given the rows' log-sum-exp (saved by the forward) and
 * Δ = rowsum(dout∘out); never more than rows × cols scores.
 *   q, dout [rows,D]  k, v, dk, dv [cols,D]  dq accumulator [rows,D] (in the scratch, or the
 *   caller's dq rows: attn_btile_begin_at)
 *   1  S  = scale · q kᵀ                        kᵀ packed, scores micro-kernel, rows×cols×D
 *                                               (attn_btile_visit_packed: kᵀ, vᵀ given packed)
 *   2  per row: softcap (keeping 1 - tanh²), ALiBi, mask, P = exp(S - lse)   (exp on vectors)
 *   3  scale·dP = scale · dout vᵀ               vᵀ packed, scores micro-kernel, rows×cols×D
 *   4  dS = P∘(scale·dP - scale·Δ)·ds/du       (vectorised; step 3 scales dP)
 *   5  dv += Pᵀ dout,  dk += dSᵀ q,  dq += dS k  the p·v micro-kernel (Pᵀ, dSᵀ read transposed)
 *   The micro-kernels are the kernel set's (kernels/tile_body.h, as the forward tile's; no BLAS).
 *   A masked visit (at most TRIM_ROWS rows, TRIM_COLS keys) runs them by blocks of tile_rows rows
 *   (the set's; 1, 3: whole vectors from the first column the block sees, shifted left only to
 *   stay inside the row's vectors; dq: over the columns it sees) and of tile_rows keys
 *   (dv, dk: against the rows that see them): a band's or causal diagonal's unseen triangles
 *   mostly skipped (P and dS are 0 there: the other columns of a row are -inf, resp. zeroed).
 *   A small visit (at most FUSED_COLS keys and FUSED_ROWS rows, no score modifier, no
 *   exclusion: random's drawn keys) fuses steps 1-4 (t->ks->backward.grad_scores: both
 *   products, exp and dS per group of rows in registers; kᵀ and vᵀ packed side by side), then
 *   step 5 untrimmed (P and dS are 0 where unseen): dv and dk by backward.key_grads (4 keys per
 *   register block: 32 keys without a repeated one), dq by the p·v micro-kernel.
 *   Rows against listed keys (attn_btile_visit_list, _visit_one: one row, one key) by vector
 *   loops: the dot products, then dq, dk, dv in one pass (the set's dot2, axpy3).
 *   time O(rows·cols·D), 10·rows·cols·D flops (fewer computed when masked); scratch
 *   attn_btile_floats; single-threaded.
 */
#include <math.h>
#include <string.h>

#include "kernel_set.h"
#include "kernels.h"

enum { ALIGN_FLOATS = 16 };
/* Rows (and keys) per block of a masked visit, each block's products over only the keys (rows)
 * it sees: the micro-kernels' register rows (the set's tile_rows: 6 on avx2 and avx512), at
 * least TRIM_MIN. */
enum { TRIM_MIN = 4, TRIM_ROWS = 120, TRIM_COLS = 1020 };
/* A visit of at most FUSED_COLS keys and FUSED_ROWS rows (random's 64 rows against its 32 drawn
 * keys) in one fused pass over its scores (visit_small), untrimmed. */
enum { FUSED_COLS = 64, FUSED_ROWS = 120 };

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

/* The backward's pieces after the tile in scratch: dP (and softcap's derivative when cap). */
static void btile_lay_out(attn_btile *b, float *scratch, int64_t rows, int64_t cols_max, int64_t D,
                          bool cap)
{
    b->dp = scratch + attn_tile_floats(rows, cols_max, D);
    b->dcap = cap ? b->dp + round_up(rows * attn_tile_score_ld(cols_max)) : NULL;
    b->grows = NULL;
}

void attn_btile_begin(attn_btile *b, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                      int64_t cols_max, int64_t D, float scale, bool cap)
{
    attn_tile_begin(&b->t, ks, scratch, rows, D, scale);
    btile_lay_out(b, scratch, rows, cols_max, D, cap);
}

void attn_btile_begin_at(attn_btile *b, const struct attn_kernel_set *ks, float *scratch,
                         int64_t rows, int64_t cols_max, int64_t D, float scale, bool cap,
                         float *dq)
{
    attn_tile_begin_at(&b->t, ks, scratch, rows, D, scale, dq, D);
    btile_lay_out(b, scratch, rows, cols_max, D, cap);
}

float attn_btile_row(attn_btile *b, int64_t r, float lse, const float *dout, const float *out)
{
    attn_btile_row_delta(b, r, lse, attn_vdot(b->t.ks, dout, out, b->t.D));
    return b->t.l[r];
}

void attn_btile_row_delta(attn_btile *b, int64_t r, float lse, float delta)
{
    b->t.m[r] = lse;
    b->t.l[r] = delta;
}

/* Row r of the scores (ld floats, cols seen within [a, e) minus [xa, xe)) into probabilities:
 * modifiers (softcap's derivative into dcap), the mask at -inf, exp(s - lse). */
static void probabilities(attn_btile *b, int64_t r, float *row, float *dcap, int64_t cols,
                          int64_t a, int64_t e, int64_t xa, int64_t xe)
{
    const attn_tile *t = &b->t;
    if (t->cap > 0.0f && e > a) {
        attn_vsoftcap(t->ks, row + a, e - a, t->cap);
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
    attn_vexp_sum(t->ks, row, round_up(cols), t->m[r]);
}

/* Row r's seen columns of a visit: [a, e) minus [xa, xe) (every column without a mask). */
static void seen_cols(const attn_tile_mask *mask, int64_t r, int64_t cols, int64_t c[4])
{
    c[0] = 0, c[1] = cols, c[2] = c[3] = 0;
    if (!mask) return;
    if (mask->lo) c[0] = clamp64(mask->lo[r] - mask->col0, 0, cols);
    if (mask->hi) c[1] = clamp64(mask->hi[r] - mask->col0, c[0], cols);
    if (mask->xlo) {
        c[2] = clamp64(mask->xlo[r] - mask->col0, c[0], c[1]);
        c[3] = clamp64(mask->xhi[r] - mask->col0, c[2], c[1]);
    }
}

/* The blocks of a masked visit (at most TRIM_ROWS rows, TRIM_COLS keys): step rows each over the
 * columns they see, step keys each against the rows that see them (step 0: one block of all). */
typedef struct trim {
    int64_t step;
    int64_t rc[TRIM_ROWS / TRIM_MIN][2]; /* row block i's columns [c0, c1) */
    int64_t kr[TRIM_COLS / TRIM_MIN][2]; /* key block j's rows [r0, r1) */
} trim;

static void trim_plan(trim *tr, const attn_kernel_set *ks, const attn_tile_mask *mask,
                      int64_t nrows, int64_t cols)
{
    const int64_t mr = ks->tile_rows, step = mr > TRIM_MIN ? mr : TRIM_MIN;
    tr->step = mask && nrows <= TRIM_ROWS && cols <= TRIM_COLS ? step : 0;
    if (!tr->step) return;
    for (int64_t i = 0; i < (nrows + step - 1) / step; i++) tr->rc[i][0] = cols, tr->rc[i][1] = 0;
    for (int64_t j = 0; j < (cols + step - 1) / step; j++) tr->kr[j][0] = nrows, tr->kr[j][1] = 0;
    for (int64_t r = 0; r < nrows; r++) {
        int64_t c[4];
        seen_cols(mask, r, cols, c);
        if (c[0] >= c[1]) continue;
        int64_t *rc = tr->rc[r / step];
        rc[0] = c[0] < rc[0] ? c[0] : rc[0], rc[1] = c[1] > rc[1] ? c[1] : rc[1];
        for (int64_t j = c[0] / step; j <= (c[1] - 1) / step; j++) {
            if (tr->kr[j][0] > r) tr->kr[j][0] = r;
            tr->kr[j][1] = r + 1;
        }
    }
    /* a block's scores: whole vectors from its first column (kept inside the row's vectors) */
    const int64_t end = round_up(cols);
    for (int64_t i = 0; i < (nrows + step - 1) / step; i++) {
        int64_t *rc = tr->rc[i];
        if (rc[0] < rc[1] && rc[0] + round_up(rc[1] - rc[0]) > end)
            rc[0] = end - round_up(rc[1] - rc[0]);
    }
}

/* Block i's rows [*i0, *i1) and columns [*c0, *c1) (for key blocks: keys and rows swapped). */
static void trim_block(const trim *tr, const int64_t (*range)[2], int64_t i, int64_t n, int64_t m,
                       int64_t *i0, int64_t *i1, int64_t *c0, int64_t *c1)
{
    *i0 = i * (tr->step ? tr->step : n);
    *i1 = tr->step && *i0 + tr->step < n ? *i0 + tr->step : n;
    *c0 = tr->step ? range[i][0] : 0, *c1 = tr->step ? range[i][1] : m;
}

/* o [nrows, ld] = scale · a bᵀ from the packed bᵀ (ldb floats a row): the scores micro-kernel,
 * each row block over only the columns it sees, by ATTN_TILE_COLS_ALIGN columns from its first
 * (not from a vector's multiple: up to 15 fewer columns a row). */
static void trimmed_scores(const attn_kernel_set *ks, float *o, int64_t ld, const float *a,
                           int64_t lda, const float *bt, int64_t ldb, const trim *tr, int64_t nrows,
                           int64_t cols, int64_t D, float scale)
{
    const attn_ks_tile *kt = &ks->tile;
    if (!tr->step) {
        kt->scores(o, ld, a, lda, bt, ldb, nrows, cols, D, scale);
        return;
    }
    for (int64_t i = 0; i * tr->step < nrows; i++) {
        int64_t i0, i1, c0, c1;
        trim_block(tr, tr->rc, i, nrows, cols, &i0, &i1, &c0, &c1);
        for (int64_t x = c0; x < c1; x += ATTN_TILE_COLS_ALIGN) {
            const int64_t w = c1 - x < ATTN_TILE_COLS_ALIGN ? c1 - x : ATTN_TILE_COLS_ALIGN;
            kt->scores(o + i0 * ld + x, ld, a + i0 * lda, lda, bt + x, ldb, i1 - i0, w, D, scale);
        }
    }
}

/* Steps 1-2 of a visit: P [nrows, ld] from the packed kᵀ (kt, ldkt floats a row); the scores of
 * each block of rows only over the columns it sees (the others: unseen, -inf). */
static void visit_probabilities(attn_btile *b, const trim *tr, int64_t r0, int64_t nrows,
                                const float *q, int64_t ldq, const float *kt, int64_t ldkt,
                                int64_t cols, const attn_tile_mask *mask)
{
    attn_tile *t = &b->t;
    const int64_t ld = attn_tile_score_ld(cols);
    float *P = t->scores;
    trimmed_scores(t->ks, P, ld, q, ldq, kt, ldkt, tr, nrows, cols, t->D, t->scale);
    for (int64_t r = 0; r < nrows; r++) {
        int64_t c[4];
        seen_cols(mask, r, cols, c);
        probabilities(b, r0 + r, P + r * ld, b->dcap ? b->dcap + r * ld : NULL, cols, c[0], c[1],
                      c[2], c[3]);
    }
}

/* Step 4 for row r, scale·dP in ds over the columns [c0, c1) its block sees: dS (the scale
 * once for dk and dq: scale·P∘(dP - Δ) = P∘(scale·dP - scale·Δ)); 0 in the other columns (which
 * dk's products read). */
static void row_ds(attn_btile *b, int64_t r, const float *p, float *ds, const float *dcap,
                   int64_t cols, int64_t c0, int64_t c1)
{
    if (c0 < c1)
        b->t.ks->math.scores_grad(p + c0, ds + c0, dcap ? dcap + c0 : NULL, b->t.scale * b->t.l[r],
                                  c1 - c0);
    const int64_t z0 = c0 < c1 ? c0 : cols, z1 = c0 < c1 ? c1 : cols;
    if (z0 > 0) memset(ds, 0, (size_t)z0 * sizeof(float));
    if (z1 < cols) memset(ds + z1, 0, (size_t)(cols - z1) * sizeof(float));
}

/* g += xᵀ y (x [nrows, ld] read transposed, y rows ldy apart, g rows ldg apart: in place, or at
 * b->grows[c]·ldg for key c), by blocks of keys, each against the rows that see it. */
static void key_products(const attn_btile *b, const trim *tr, float *g, int64_t ldg, const float *x,
                         int64_t ld, const float *y, int64_t ldy, int64_t nrows, int64_t cols)
{
    const attn_ks_tile *kt = &b->t.ks->tile;
    for (int64_t j = 0; j * (tr->step ? tr->step : cols) < cols; j++) {
        int64_t c0, c1, i0, i1;
        trim_block(tr, tr->kr, j, cols, nrows, &c0, &c1, &i0, &i1);
        if (i0 >= i1) continue;
        const float *xb = x + i0 * ld + c0, *yb = y + i0 * ldy;
        if (b->grows)
            kt->pv_rows(g, ldg, b->grows + c0, xb, 1, ld, yb, ldy, c1 - c0, i1 - i0, b->t.D);
        else kt->pv(g + c0 * ldg, ldg, xb, 1, ld, yb, ldy, c1 - c0, i1 - i0, b->t.D);
    }
}

/* Steps 3-5 of a visit, given P: dP from the packed vᵀ (vt, ldvt floats a row), dS, then
 * dv, dk (rows ldg apart; by blocks of keys, each against the rows that see it) and dq (dS k,
 * k rows ldk apart; by blocks of rows, each over the keys it sees). */
static void visit_gradients(attn_btile *b, const trim *tr, int64_t r0, int64_t nrows,
                            const float *q, int64_t ldq, const float *dout, int64_t lddo,
                            const float *vt, int64_t ldvt, const float *k, int64_t ldk, float *dk,
                            float *dv, int64_t ldg, int64_t cols)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &t->ks->tile;
    const int64_t D = t->D, ld = attn_tile_score_ld(cols);
    float *P = t->scores, *dS = b->dp;
    trimmed_scores(t->ks, dS, ld, dout, lddo, vt, ldvt, tr, nrows, cols, D,
                   t->scale); /* scale·dout vᵀ */
    for (int64_t i = 0; i * (tr->step ? tr->step : nrows) < nrows; i++) {
        int64_t i0, i1, c0, c1;
        trim_block(tr, tr->rc, i, nrows, cols, &i0, &i1, &c0, &c1);
        for (int64_t r = i0; r < i1; r++)
            row_ds(b, r0 + r, P + r * ld, dS + r * ld, b->dcap ? b->dcap + r * ld : NULL, cols, c0,
                   c1);
    }
    key_products(b, tr, dv, ldg, P, ld, dout, lddo, nrows, cols); /* dv += Pᵀ dout */
    key_products(b, tr, dk, ldg, dS, ld, q, ldq, nrows, cols);    /* dk += scale·dSᵀ q */
    for (int64_t i = 0; i * (tr->step ? tr->step : nrows) < nrows; i++) {
        int64_t i0, i1, c0, c1;
        trim_block(tr, tr->rc, i, nrows, cols, &i0, &i1, &c0, &c1);
        if (c0 < c1) /* dq += scale·dS k */
            kt->pv(t->acc + (r0 + i0) * D, D, dS + i0 * ld + c0, ld, 1, k + c0 * ldk, ldk, i1 - i0,
                   c1 - c0, D);
    }
}

/* A small visit (at most FUSED_COLS keys, FUSED_ROWS rows, no score modifier, no exclusion):
 * P and dS of all its scores in one fused pass (t->ks->backward.grad_scores: both products,
 * exp and dS per group of rows in registers), then dv and dk (backward.key_grads) and dq. kᵀ, vᵀ
 * packed (rows ldt floats), k rows ldk apart. */
static void visit_small(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                        const float *dout, int64_t lddo, const float *kt, const float *vt,
                        int64_t ldt, const float *k, int64_t ldk, float *dk, float *dv, int64_t ldg,
                        int64_t cols, const attn_tile_mask *mask)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *tk = &t->ks->tile;
    const int64_t D = t->D, ld = attn_tile_score_ld(cols);
    int64_t lo[FUSED_ROWS], hi[FUSED_ROWS];
    for (int64_t r = 0; mask && r < nrows; r++) {
        int64_t c[4];
        seen_cols(mask, r, cols, c);
        lo[r] = c[0], hi[r] = c[1];
    }
    float *P = t->scores, *dS = b->dp;
    t->ks->backward.grad_scores(P, dS, ld, q, ldq, dout, lddo, kt, vt, ldt, t->m + r0, t->l + r0,
                                mask ? lo : NULL, mask ? hi : NULL, nrows, cols, D, t->scale);
    /* dv += Pᵀ dout, dk += scale·dSᵀ q */
    t->ks->backward.key_grads(dk, dv, ldg, b->grows, P, dS, ld, q, ldq, dout, lddo, nrows, cols, D);
    tk->pv(t->acc + r0 * D, D, dS, ld, 1, k, ldk, nrows, cols, D); /* dq += scale·dS k */
}

/* Whether a visit is small enough for visit_small (and has neither modifier nor exclusion). */
static bool small_visit(const attn_btile *b, int64_t nrows, int64_t cols,
                        const attn_tile_mask *mask)
{
    return cols <= FUSED_COLS && nrows <= FUSED_ROWS && b->t.cap == 0.0f && !b->t.alibi &&
           !(mask && mask->xlo);
}

void attn_btile_visit(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                      const float *dout, int64_t lddo, const float *k, const float *v, int64_t ldkv,
                      float *dk, float *dv, int64_t ldg, int64_t cols, const attn_tile_mask *mask)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &t->ks->tile;
    const int64_t ld = attn_tile_score_ld(cols);
    float *packed = t->scores + round_up(t->rows * ld);
    kt->pack_kt(packed, ld, k, ldkv, cols, t->D);
    /* visit_small: vᵀ after kᵀ, where the scratch (scores, packed keys for cols_max) has room */
    if (small_visit(b, nrows, cols, mask) && packed + 2 * t->D * ld <= b->dp) {
        kt->pack_kt(packed + t->D * ld, ld, v, ldkv, cols, t->D);
        visit_small(b, r0, nrows, q, ldq, dout, lddo, packed, packed + t->D * ld, ld, k, ldkv, dk,
                    dv, ldg, cols, mask);
        return;
    }
    trim tr;
    trim_plan(&tr, b->t.ks, mask, nrows, cols);
    visit_probabilities(b, &tr, r0, nrows, q, ldq, packed, ld, cols, mask);
    kt->pack_kt(packed, ld, v, ldkv, cols, t->D); /* vᵀ: dP = dout vᵀ */
    visit_gradients(b, &tr, r0, nrows, q, ldq, dout, lddo, packed, ld, k, ldkv, dk, dv, ldg, cols);
}

void attn_btile_visit_packed(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                             const float *dout, int64_t lddo, const float *kt, const float *vt,
                             int64_t ldt, const float *k, int64_t ldk, float *dk, float *dv,
                             int64_t ldg, int64_t cols, const attn_tile_mask *mask)
{
    if (small_visit(b, nrows, cols, mask)) {
        visit_small(b, r0, nrows, q, ldq, dout, lddo, kt, vt, ldt, k, ldk, dk, dv, ldg, cols, mask);
        return;
    }
    trim tr;
    trim_plan(&tr, b->t.ks, mask, nrows, cols);
    visit_probabilities(b, &tr, r0, nrows, q, ldq, kt, ldt, cols, mask);
    visit_gradients(b, &tr, r0, nrows, q, ldq, dout, lddo, vt, ldt, k, ldk, dk, dv, ldg, cols);
}

void attn_btile_visit_list(attn_btile *b, int64_t r, const float *q, const float *dout,
                           const float *k, const float *v, float *dk, float *dv, const int64_t *idx,
                           int64_t n)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &t->ks->tile;
    const int64_t D = t->D;
    float *P = t->scores, *dcap = b->dcap;
    for (int64_t x = 0; x < n; x++) P[x] = t->scale * attn_vdot(t->ks, q, k + idx[x] * D, D);
    if (t->cap > 0.0f) {
        attn_vsoftcap(t->ks, P, n, t->cap);
        for (int64_t x = 0; x < n; x++) dcap[x] = 1.0f - (P[x] / t->cap) * (P[x] / t->cap);
    }
    if (t->alibi)
        for (int64_t x = 0; x < n; x++) P[x] -= t->slope[r] * fabsf(t->qpos[r] - (float)idx[x]);
    for (int64_t x = n; x < round_up(n); x++) P[x] = -INFINITY;
    attn_vexp_sum(t->ks, P, round_up(n), t->m[r]);
    float *dq = t->acc + r * D;
    for (int64_t x = 0; x < n; x++) {
        const float *kx = k + idx[x] * D, *vx = v + idx[x] * D;
        float ds = P[x] * (attn_vdot(t->ks, dout, vx, D) - t->l[r]) * t->scale;
        if (t->cap > 0.0f) ds *= dcap[x];
        kt->axpy3(dq, ds, kx, dk + idx[x] * D, ds, q, dv + idx[x] * D, P[x], dout, D);
    }
}

void attn_btile_visit_one(attn_btile *b, int64_t r, const float *q, const float *dout, int64_t j,
                          const float *kj, const float *vj, float *dkj, float *dvj)
{
    attn_tile *t = &b->t;
    const attn_ks_tile *kt = &t->ks->tile;
    float dots[2]; /* q·k, dout·v */
    kt->dot2(q, kj, dout, vj, t->D, dots);
    float s = t->scale * dots[0], dcap = 1.0f;
    if (t->cap > 0.0f) {
        attn_vsoftcap(t->ks, &s, 1, t->cap);
        dcap = 1.0f - (s / t->cap) * (s / t->cap);
    }
    if (t->alibi) s -= t->slope[r] * fabsf(t->qpos[r] - (float)j);
    const float p = expf(s - t->m[r]); /* lse = +inf (a row that sees no key): 0 */
    const float ds = p * (dots[1] - t->l[r]) * t->scale * dcap;
    kt->axpy3(t->acc + r * t->D, ds, kj, dkj, ds, q, dvj, p, dout, t->D);
}
