/*
 * softmax_tile.c — one block of queries against blocks of keys with an online softmax
 * (FlashAttention-2 order: never the rows×S score matrix, only rows×cols_max at a time).
 *   q [rows,D] (row stride ldq)  k,v [cols,D] (row stride ldkv)  acc [rows,D]
 *   pass 0  kt = kᵀ [D, ld] packed once per visit (the keys along the vector lanes)
 *   pass 1  scores  = scale · q kᵀ        micro-kernel, rows×cols×D FMAs (t->ks->tile.scores)
 *   pass 2  per row: score modifiers if any (softcap, ALiBi: score_mod.h, once over the row's
 *           seen columns), mask, block max, m' = max(m, max), p = exp(s - m'), l = l·e^(m-m') + Σp,
 *           acc ·= e^(m-m')   (score rows padded: exp on whole vectors only)
 *   pass 3  acc    += p v                 micro-kernel, rows×D×cols FMAs (t->ks->tile.pv),
 *           v read in place
 *   The micro-kernels are kernels/tile_body.h, in the kernel set in force (no BLAS here).
 *   time O(rows·cols·D) per block; flops 4·rows·cols·D per block (+ O(rows·cols) for the
 *   softmax, not counted); scratch attn_tile_floats(): m, l, acc, rows × ld scores and the
 *   D × ld packed keys, ld = cols_max rounded up to ATTN_TILE_COLS_ALIGN; single-threaded.
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernel_set.h"
#include "kernels.h"

enum { ALIGN_FLOATS = 16 }; /* 64 bytes */

static int64_t round_up(int64_t n) { return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS; }

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

int64_t attn_tile_score_ld(int64_t cols)
{
    return (cols + ATTN_TILE_COLS_ALIGN - 1) / ATTN_TILE_COLS_ALIGN * ATTN_TILE_COLS_ALIGN;
}

int64_t attn_tile_floats(int64_t rows_max, int64_t cols_max, int64_t D)
{
    const int64_t ld = attn_tile_score_ld(cols_max);
    return 2 * round_up(rows_max) + round_up(rows_max * D) + round_up(rows_max * ld) +
           round_up(D * ld);
}

/* The tile's layout in scratch, no modifiers; m, l and acc not set. */
static void tile_layout(attn_tile *t, const attn_kernel_set *ks, float *scratch, int64_t rows,
                        int64_t D, float scale)
{
    t->ks = ks;
    t->rows = rows;
    t->D = D;
    t->scale = scale;
    t->m = scratch;
    t->l = t->m + round_up(rows);
    t->acc = t->l + round_up(rows);
    t->acc_ld = D;
    t->scores = t->acc + round_up(rows * D);
    t->cap = 0.0f;
    t->alibi = false;
    t->qpos = t->slope = t->kpos = NULL;
    t->kt = NULL;
    t->kt_ld = 0;
}

void attn_tile_begin_unzeroed(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                              int64_t rows, int64_t D, float scale)
{
    tile_layout(t, ks, scratch, rows, D, scale);
    for (int64_t r = 0; r < rows; r++) {
        t->m[r] = -INFINITY;
        t->l[r] = 0.0f;
    }
}

void attn_tile_zero_acc(attn_tile *t)
{
    for (int64_t r = 0; r < t->rows; r++)
        memset(t->acc + r * t->acc_ld, 0, (size_t)t->D * sizeof(float));
}

void attn_tile_begin(attn_tile *t, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                     int64_t D, float scale)
{
    attn_tile_begin_unzeroed(t, ks, scratch, rows, D, scale);
    attn_tile_zero_acc(t);
}

void attn_tile_begin_over(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                          int64_t rows, int64_t D, float scale, float *acc, int64_t ldo)
{
    attn_tile_begin_unzeroed(t, ks, scratch, rows, D, scale);
    t->acc = acc, t->acc_ld = ldo;
}

void attn_tile_begin_at(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                        int64_t rows, int64_t D, float scale, float *acc, int64_t ldo)
{
    attn_tile_begin_over(t, ks, scratch, rows, D, scale, acc, ldo);
    attn_tile_zero_acc(t);
}

void attn_tile_resume_at(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                         int64_t rows, int64_t D, float scale, float *acc, int64_t ldo,
                         const float *ml, int64_t ml_stride)
{
    tile_layout(t, ks, scratch, rows, D, scale);
    t->acc = acc, t->acc_ld = ldo;
    for (int64_t r = 0; r < rows; r++) {
        t->m[r] = ml[r * ml_stride];
        t->l[r] = ml[r * ml_stride + 1];
    }
}

void attn_tile_resume(attn_tile *t, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                      int64_t D, float scale, const float *acc, int64_t ldo, const float *ml,
                      int64_t ml_stride)
{
    tile_layout(t, ks, scratch, rows, D, scale);
    attn_tile_load(t, acc, ldo, ml, ml_stride);
}

/* ---- score modifiers ---- */

int64_t attn_tile_mod_floats(const attn_score_mod *m, int64_t rows_max, int64_t cols_max)
{
    return m && m->alibi ? 2 * round_up(rows_max) + round_up(cols_max) : 0;
}

void attn_tile_mods(attn_tile *t, const attn_score_mod *m, float *scratch)
{
    t->cap = m && m->softcap > 0 ? (float)m->softcap : 0.0f;
    t->alibi = m && m->alibi;
    if (!t->alibi) return;
    t->qpos = scratch;
    t->slope = t->qpos + round_up(t->rows);
    t->kpos = t->slope + round_up(t->rows);
}

void attn_tile_mod_row(attn_tile *t, const attn_score_mod *m, int64_t r, int64_t h, int64_t i)
{
    if (!t->alibi) return;
    t->qpos[r] = (float)(i + m->shift);
    t->slope[r] = (float)attn_alibi_slope(h, m->H);
}

void attn_tile_mod_keys(attn_tile *t, int64_t j0, int64_t step, int64_t n)
{
    if (!t->alibi) return;
    for (int64_t c = 0; c < n; c++) t->kpos[c] = (float)(j0 + c * step);
}

void attn_tile_alibi_row(const attn_tile *t, int64_t r, float *row, int64_t a, int64_t e)
{
    if (t->alibi && e > a)
        t->ks->math.alibi_row(row + a, t->kpos + a, e - a, t->qpos[r], t->slope[r]);
}

/* The modifiers on columns [a, e) of tile row r's scores (kpos indexed by column). */
static void modify_row(const attn_tile *t, int64_t r, float *row, int64_t a, int64_t e)
{
    if (e <= a) return;
    if (t->cap > 0.0f) attn_vsoftcap(t->ks, row + a, e - a, t->cap);
    if (t->alibi) t->ks->math.alibi_row(row + a, t->kpos + a, e - a, t->qpos[r], t->slope[r]);
}

/* Where the packed keys of a visit of cols keys go: after the scores of every tile row. */
static void lay_out_packed_keys(attn_tile *t, int64_t cols)
{
    t->kt_ld = attn_tile_score_ld(cols);
    t->kt = t->scores + round_up(t->rows * t->kt_ld);
}

void attn_tile_pack_keys(attn_tile *t, const float *k, int64_t ldkv, int64_t cols)
{
    lay_out_packed_keys(t, cols);
    t->ks->tile.pack_kt(t->kt, t->kt_ld, k, ldkv, cols, t->D);
}

void attn_tile_visit_packed(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                            const float *v, int64_t ldkv, int64_t cols, const attn_tile_mask *mask)
{
    const int64_t ld = attn_tile_score_ld(cols);
    t->ks->tile.scores(t->scores, ld, q, ldq, t->kt, t->kt_ld, nrows, cols, t->D, t->scale);
    attn_tile_visit_scores(t, r0, nrows, v, ldkv, cols, mask);
}

void attn_tile_visit_masked(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                            const float *k, const float *v, int64_t ldkv, int64_t cols,
                            const attn_tile_mask *mask)
{
    attn_tile_pack_keys(t, k, ldkv, cols);
    attn_tile_visit_packed(t, r0, nrows, q, ldq, v, ldkv, cols, mask);
}

void attn_tile_visit_scores(attn_tile *t, int64_t r0, int64_t nrows, const float *v, int64_t ldkv,
                            int64_t cols, const attn_tile_mask *mask)
{
    const int64_t rows = nrows, D = t->D;
    const int64_t ldc = attn_tile_score_ld(cols); /* row stride: exp runs on whole vectors */
    float *sc = t->scores;                        /* [rows, cols] */
    const int64_t lda = t->acc_ld;
    float *m = t->m + r0, *l = t->l + r0, *acc = t->acc + r0 * lda; /* this row range's state */
    const bool modified = t->cap > 0.0f || t->alibi;

    /* pass 2: modifiers, mask, running max, exp and sum, rescale acc */
    for (int64_t r = 0; r < rows; r++) {
        float *row = sc + r * ldc;
        int64_t a = 0, e = cols; /* the row sees columns [a, e) minus [xa, xe) */
        if (mask) {
            if (mask->lo) a = clamp64(mask->lo[r] - mask->col0, 0, cols);
            if (mask->hi) e = clamp64(mask->hi[r] - mask->col0, a, cols);
        }
        if (modified) modify_row(t, r0 + r, row, a, e); /* before the exclusion's -inf */
        if (mask && mask->xlo) {
            const int64_t xa = clamp64(mask->xlo[r] - mask->col0, a, e);
            const int64_t xe = clamp64(mask->xhi[r] - mask->col0, xa, e);
            for (int64_t j = xa; j < xe; j++) row[j] = -INFINITY;
        }
        /* exp over [av, ev): whole vectors of 16 (the widest set's: a partial one would fall to
         * the scalar exp, dearer per element than the vector's), the unseen columns in it at
         * -inf (exp 0); the rows are padded to ATTN_TILE_COLS_ALIGN */
        const int64_t av = a / ALIGN_FLOATS * ALIGN_FLOATS, ev = av + round_up(e - av);
        for (int64_t j = av; j < a; j++) row[j] = -INFINITY;
        for (int64_t j = e; j < ev; j++) row[j] = -INFINITY;
        float mb = attn_vmax(t->ks, row + a, e - a);
        float m_new = mb > m[r] ? mb : m[r];
        if (m_new == -INFINITY) { /* nothing seen yet: this block contributes nothing */
            memset(row, 0, (size_t)cols * sizeof(float));
            continue;
        }
        if (av > 0) memset(row, 0, (size_t)av * sizeof(float));
        if (ev < cols) memset(row + ev, 0, (size_t)(cols - ev) * sizeof(float));
        /* 0 on the first block (m = -inf: no call, libm's expf(-inf) is a slow path); acc then
         * set to 0, not scaled (a tile begun over unset rows: attn_tile_begin_over) */
        const bool fresh = m[r] == -INFINITY;
        float alpha = fresh ? 0.0f : expf(m[r] - m_new);
        float sum = attn_vexp_sum(t->ks, row + av, ev - av, m_new);
        l[r] = l[r] * alpha + sum;
        m[r] = m_new;
        if (fresh) memset(acc + r * lda, 0, (size_t)D * sizeof(float));
        else if (alpha != 1.0f) t->ks->math.vscale(acc + r * lda, D, alpha);
    }

    /* pass 3: weighted V */
    t->ks->tile.pv(acc, lda, sc, ldc, 1, v, ldkv, rows, cols, D);
}

void attn_tile_visit_list(attn_tile *t, int64_t r, const float *q, const float *k, const float *v,
                          const int64_t *idx, int64_t n)
{
    const int64_t D = t->D;
    float *sc = t->scores, *acc = t->acc + r * t->acc_ld;

    /* pass 1: scores */
    for (int64_t x = 0; x < n; x++) sc[x] = t->scale * attn_vdot(t->ks, q, k + idx[x] * D, D);
    if (t->cap > 0.0f) attn_vsoftcap(t->ks, sc, n, t->cap);
    if (t->alibi)
        for (int64_t x = 0; x < n; x++) sc[x] -= t->slope[r] * fabsf(t->qpos[r] - (float)idx[x]);

    /* pass 2: modifiers, running max, exp and sum, rescale acc */
    const float m_new = fmaxf(t->m[r], attn_vmax(t->ks, sc, n));
    if (m_new == -INFINITY) return;
    const float alpha = expf(t->m[r] - m_new);
    const bool fresh = t->m[r] == -INFINITY; /* acc set, not scaled (attn_tile_begin_over) */
    for (int64_t x = n; x < round_up(n); x++) sc[x] = -INFINITY; /* exp on whole vectors */
    t->l[r] = t->l[r] * alpha + attn_vexp_sum(t->ks, sc, round_up(n), m_new);
    t->m[r] = m_new;
    if (fresh) memset(acc, 0, (size_t)D * sizeof(float));
    else if (alpha != 1.0f)
        for (int64_t d = 0; d < D; d++) acc[d] *= alpha;

    /* pass 3: weighted V, gathered rows */
    t->ks->math.gather_axpy(acc, sc, v, idx, n, D);
}

void attn_tile_visit(attn_tile *t, int64_t r0, int64_t nrows, const float *q, const float *k,
                     const float *v, int64_t cols, const int64_t *col_end)
{
    const attn_tile_mask mask = {.hi = col_end};
    attn_tile_visit_masked(t, r0, nrows, q, t->D, k, v, t->D, cols, col_end ? &mask : NULL);
}

void attn_tile_pack_key_rows(attn_tile *t, const float *k, int64_t ldkv, const int64_t *idx,
                             int64_t cols)
{
    lay_out_packed_keys(t, cols);
    t->ks->tile.pack_kt_rows(t->kt, t->kt_ld, k, ldkv, idx, cols, t->D);
}

void attn_tile_attend_own(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                          const float *v, int64_t ldkv, const int64_t *vidx, int64_t cols,
                          const int64_t *hi, const float *ko, const float *vo, const int64_t *own,
                          const attn_ks_span *ahead, int64_t n_ahead, float *out, int64_t ldout,
                          bool stream)
{
    t->ks->tile.attend_own(t->acc + r0 * t->D, t->m + r0, t->l + r0, t->scores,
                           attn_tile_score_ld(cols), q, ldq, t->kt, t->kt_ld, v, ldkv, vidx,
                           hi ? hi + r0 : NULL, ko, vo, t->D, own ? own + r0 : NULL, nrows, cols,
                           t->D, t->scale, ahead, n_ahead, out, ldout, stream);
}

void attn_tile_store_fence(const attn_kernel_set *ks) { ks->tile.store_fence(); }

void attn_tile_save(const attn_tile *t, float *acc, int64_t ldo, float *ml, int64_t ml_stride)
{
    for (int64_t r = 0; r < t->rows; r++) {
        if (acc != t->acc) /* else in place */
            memcpy(acc + r * ldo, t->acc + r * t->acc_ld, (size_t)t->D * sizeof(float));
        if (t->m[r] == -INFINITY) /* saw nothing: acc 0 (attn_tile_begin_over left it unset) */
            memset(acc + r * ldo, 0, (size_t)t->D * sizeof(float));
        ml[r * ml_stride] = t->m[r];
        ml[r * ml_stride + 1] = t->l[r];
    }
}

void attn_tile_load(attn_tile *t, const float *acc, int64_t ldo, const float *ml, int64_t ml_stride)
{
    for (int64_t r = 0; r < t->rows; r++) {
        memcpy(t->acc + r * t->acc_ld, acc + r * ldo, (size_t)t->D * sizeof(float));
        t->m[r] = ml[r * ml_stride];
        t->l[r] = ml[r * ml_stride + 1];
    }
}

void attn_tile_end_strided(const attn_tile *t, float *out, int64_t ldo)
{
    for (int64_t r = 0; r < t->rows; r++) {
        const float *a = t->acc + r * t->acc_ld;
        float *o = out + r * ldo;
        float inv = t->l[r] > 0.0f ? 1.0f / t->l[r] : 0.0f;
        for (int64_t d = 0; d < t->D; d++) o[d] = a[d] * inv;
    }
}

void attn_tile_end_stream(const attn_tile *t, float *out, int64_t ldo)
{
    t->ks->tile.end_stream(out, ldo, t->acc, t->acc_ld, t->l, t->rows, t->D);
}

void attn_tile_end(const attn_tile *t, float *out) { attn_tile_end_strided(t, out, t->D); }

void attn_blas_threads(int n)
{
    if (openblas_get_num_threads() != n) openblas_set_num_threads(n);
}

void attn_tile_lse(const attn_tile *t, int64_t r0, int64_t rstep, float *lse, int64_t stride)
{
    for (int64_t r = r0, x = 0; r < t->rows; r += rstep, x++)
        lse[x * stride] = t->l[r] > 0.0f ? t->m[r] + logf(t->l[r]) : INFINITY;
}
