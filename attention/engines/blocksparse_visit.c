/*
 * blocksparse_visit.c — the block-sparse engine's visit of one segment (attn_bs_visit): computing
 * it with the tile (the forward's and the backward's visits, spans, lists, own keys) or counting
 * its scores and keys. The contract of the whole engine: blocksparse.c.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocksparse_engine.h"

/* ---- computing a segment ---- */

static int64_t key_at(const attn_bs_keys *ks, int64_t x)
{
    return ks->idx ? ks->idx[x] : ks->j0 + (x / ks->run) * ks->step + x % ks->run;
}

static bool contiguous(const attn_bs_keys *ks)
{
    return !ks->idx && (ks->run == ks->step || ks->run >= ks->n);
}

/* Every step-th key, rows a leading dimension (an int for BLAS) apart? */
static bool every_step(const attn_bs_keys *ks, int64_t D)
{
    return !ks->idx && ks->run == 1 && attn_blas_int_ok(ks->step * D);
}

/* Ask for the rows idx[0..n) of k and v: the misses of a scattered row overlap. */
static void prefetch_rows(const attn_bs_run *run, const int64_t *idx, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        for (int64_t d = 0; d < run->D; d += 16) {
            __builtin_prefetch(run->kg + idx[x] * run->D + d);
            __builtin_prefetch(run->vg + idx[x] * run->D + d);
        }
}

/* Ask for the query of task row r. */
static void prefetch_query(const attn_bs_run *run, int64_t r)
{
    for (int64_t d = 0; d < run->D; d += 16) __builtin_prefetch(run->q + r * run->ldq + d);
}

/* Ask for `floats` floats from base + off, where base + off may lie past its array (a guess at
 * the next task's rows): the address is formed as an integer (no out-of-bounds pointer); a
 * prefetch never faults. */
static void prefetch_guess(const float *base, int64_t off, int64_t floats)
{
    const uintptr_t a = (uintptr_t)base + (uintptr_t)off * sizeof(float);
    for (int64_t d = 0; d < floats; d += 16)
        __builtin_prefetch((const void *)(a + d * sizeof(float)));
}

/* prefetch_guess into the outer caches only (locality 1: prefetcht2; the backward's next block,
 * a whole task ahead, would only evict L1 lines still in use). */
static void prefetch_l2(const float *base, int64_t off, int64_t floats)
{
    const uintptr_t a = (uintptr_t)base + (uintptr_t)off * sizeof(float);
    for (int64_t d = 0; d < floats; d += 16)
        __builtin_prefetch((const void *)(a + d * sizeof(float)), 0, 1);
}

/* Keys [x0, x0 + cols) of a segment as rows of stride *ld: in place, or gathered into buf
 * (always when gather). */
static const float *keys_of(attn_bs_run *run, const attn_bs_keys *ks, const float *src, float *buf,
                            int64_t x0, int64_t cols, int64_t *ld, bool gather)
{
    const int64_t D = run->D;
    if (!gather && contiguous(ks)) {
        *ld = D;
        return src + (ks->j0 + x0) * D;
    }
    /* every step-th key: by the leading dimension (an int for BLAS) */
    if (!gather && every_step(ks, D)) {
        *ld = ks->step * D;
        return src + (ks->j0 + x0 * ks->step) * D;
    }
    *ld = D;
    for (int64_t x = x0; x < x0 + cols;) {
        const int64_t len = ks->idx ? 1 : attn_bs_min(ks->run - x % ks->run, x0 + cols - x);
        memcpy(buf + (x - x0) * D, src + key_at(ks, x) * D, (size_t)(len * D) * sizeof(float));
        x += len;
    }
    return buf;
}

/* dst rows of keys [x0, x0 + cols) of a segment += buf rows (the inverse of a gather). */
static void scatter_add(const attn_bs_run *run, const attn_bs_keys *ks, const float *buf,
                        float *dst, int64_t x0, int64_t cols)
{
    const int64_t D = run->D;
    for (int64_t x = x0; x < x0 + cols;) {
        const int64_t len = ks->idx ? 1 : attn_bs_min(ks->run - x % ks->run, x0 + cols - x);
        float *to = dst + key_at(ks, x) * D;
        const float *from = buf + (x - x0) * D;
        for (int64_t e = 0; e < len * D; e++) to[e] += from[e];
        x += len;
    }
}

/* The backward of one visit: dk, dv in place where the keys are read in place, else in the
 * gradient buffers, added back to the keys' rows after. */
static void backward_visit(attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                           int64_t x0, int64_t cols, const float *kp, const float *vp, int64_t ld,
                           const attn_tile_mask *mask)
{
    const bool gathered = kp == run->kbuf;
    float *dkp = run->dkbuf, *dvp = run->dvbuf;
    if (run->grows) { /* keys copied from a list: their dk, dv rows updated in place */
        dkp = run->dkg, dvp = run->dvg, run->bt->grows = run->grows + x0;
    } else if (gathered) {
        memset(dkp, 0, (size_t)(cols * run->D) * sizeof(float));
        memset(dvp, 0, (size_t)(cols * run->D) * sizeof(float));
    } else {
        dkp = run->dkg + (kp - run->kg), dvp = run->dvg + (vp - run->vg);
    }
    const float *q = run->q + g0 * run->ldq, *dout = run->dout + g0 * run->lddo;
    if (run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1) /* packed once */
        attn_btile_visit_packed(run->bt, g0, gn, q, run->ldq, dout, run->lddo,
                                run->span_kt + (x0 - run->span_u0),
                                run->span_vt + (x0 - run->span_u0), run->span_ld, kp, ld, dkp, dvp,
                                ld, cols, mask);
    else
        attn_btile_visit(run->bt, g0, gn, q, run->ldq, dout, run->lddo, kp, vp, ld, dkp, dvp, ld,
                         cols, mask);
    run->bt->grows = NULL;
    if (!gathered) return;
    scatter_add(run, &seg->keys, dkp, run->dkg, x0, cols);
    scatter_add(run, &seg->keys, dvp, run->dvg, x0, cols);
}

/* The backward's span: vᵀ of keys [u0, u1) of a segment next to its kᵀ (pack_span). */
static void pack_span_values(attn_bs_run *run, const attn_bs_seg *seg, int64_t u0, int64_t u1)
{
    int64_t ld;
    const float *vp = keys_of(run, &seg->keys, run->vg, NULL, u0, u1 - u0, &ld, false);
    run->tile->ks->tile.pack_kt(run->vspan, run->span_ld, vp, ld, u1 - u0, run->D);
    run->span_vt = run->vspan;
}

/* Task rows [g0, g0 + gn) against keys [x0, x0 + cols) of the packed span (v rows ld apart):
 * the scores micro-kernel from the span's kᵀ, then the tile's softmax and p·v. */
static void visit_span(attn_bs_run *run, int64_t g0, int64_t gn, int64_t x0, int64_t cols,
                       const float *vp, int64_t ld, const attn_tile_mask *mask)
{
    attn_tile *t = run->tile;
    run->tile->ks->tile.scores(t->scores, attn_tile_score_ld(cols), run->q + g0 * run->ldq,
                               run->ldq, run->span_kt + (x0 - run->span_u0), run->span_ld, gn, cols,
                               run->D, t->scale);
    attn_tile_visit_scores(t, g0, gn, vp, ld, cols, mask);
}

/* The forward's fused visit (the set's tile.attend: scores, online softmax and p·v per register
 * block of rows, tile_rows; the scores in L1, no call per row): task rows [g0, g0 + gn) against
 * keys [x0, x0 + cols) of the segment, kᵀ at kt (rows ldk apart), v rows ld apart, row r seeing the
 * keys in [lo[r], hi[r]) (segment numbering; NULL: from the first, up to all). */
static void visit_fused(attn_bs_run *run, int64_t g0, int64_t gn, int64_t x0, int64_t cols,
                        const float *kt, int64_t ldk, const float *vp, int64_t ld,
                        const int64_t *lo, const int64_t *hi)
{
    enum { ROWS = 60 };
    attn_tile *t = run->tile;
    const int64_t D = run->D, lds = attn_tile_score_ld(cols), mr = run->tile->ks->tile_rows;
    /* rows per call: their scores within the tile's (rows × cols_max), whole register blocks */
    const int64_t most =
        attn_bs_clamp(t->rows * attn_tile_score_ld(run->cols_max) / lds / mr * mr, mr, ROWS);
    int64_t h[ROWS], a[ROWS];
    for (int64_t g = g0; g < g0 + gn; g += most) {
        const int64_t n = attn_bs_min(most, g0 + gn - g);
        for (int64_t r = 0; hi && r < n; r++) h[r] = hi[g + r] - x0;
        for (int64_t r = 0; lo && r < n; r++) a[r] = lo[g + r] - x0;
        run->tile->ks->tile.attend(t->acc + g * t->acc_ld, t->acc_ld, t->m + g, t->l + g, t->scores,
                                   attn_tile_score_ld(cols), run->q + g * run->ldq, run->ldq, kt,
                                   ldk, vp, ld, lo ? a : NULL, hi ? h : NULL, n, cols, D, t->scale);
    }
}

/* Pack keys [u0, u1) of a segment read in place (contiguous, or every step-th) into the span,
 * when there is one and they fit: the forward's row groups then share one packing. */
static void pack_span(attn_bs_run *run, const attn_bs_seg *seg, int64_t u0, int64_t u1)
{
    run->span_kt = NULL;
    if (!run->span || u1 - u0 > run->span_max ||
        !(contiguous(&seg->keys) || every_step(&seg->keys, run->D)))
        return;
    int64_t ld;
    const float *kp = keys_of(run, &seg->keys, run->kg, NULL, u0, u1 - u0, &ld, false);
    run->span_ld = (u1 - u0 + SPAN_VEC - 1) / SPAN_VEC * SPAN_VEC + SPAN_VEC;
    run->tile->ks->tile.pack_kt(run->span, run->span_ld, kp, ld, u1 - u0, run->D);
    run->span_kt = run->span, run->span_u0 = u0, run->span_u1 = u1;
    if (run->vspan) pack_span_values(run, seg, u0, u1);
}

/* Task rows [g0, g0 + gn) against keys [c0, c1) of the segment, masked by the row bounds
 * (bounds) and the exclusions, in blocks of cols_max keys. */
static void visit_range(attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                        int64_t c0, int64_t c1, bool bounds)
{
    attn_tile_mask mask = {0};
    if (bounds && seg->lo) mask.lo = seg->lo + g0;
    if (bounds && seg->hi) mask.hi = seg->hi + g0;
    if (seg->xlo) mask.xlo = seg->xlo + g0, mask.xhi = seg->xhi + g0;
    const bool masked = mask.lo || mask.hi || mask.xlo;
    /* the forward, row bounds only (no exclusion), no modifier: the fused visit */
    const bool fused = !run->bt && !mask.xlo && !run->tile->alibi && run->tile->cap == 0.0f &&
                       (!mask.lo || c1 - c0 <= FUSED_BAND_COLS);
    for (int64_t x0 = c0; x0 < c1; x0 += run->cols_max) {
        const int64_t cols = attn_bs_min(run->cols_max, c1 - x0);
        int64_t ld; /* the same for keys and values */
        if (seg->keys.idx) prefetch_rows(run, seg->keys.idx + x0, cols); /* gathered below */
        const float *kp = keys_of(run, &seg->keys, run->kg, run->kbuf, x0, cols, &ld, false);
        const float *vp = keys_of(run, &seg->keys, run->vg, run->vbuf, x0, cols, &ld, false);
        mask.col0 = x0;
        if (run->tile->alibi) /* the positions of keys x0 .. x0 + cols */
            for (int64_t c = 0; c < cols; c++)
                run->tile->kpos[c] = (float)key_at(run->at ? run->at : &seg->keys, x0 + c);
        if (run->bt) backward_visit(run, seg, g0, gn, x0, cols, kp, vp, ld, masked ? &mask : NULL);
        else if (fused && run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1)
            visit_fused(run, g0, gn, x0, cols, run->span_kt + (x0 - run->span_u0), run->span_ld, vp,
                        ld, mask.lo ? seg->lo : NULL, mask.hi ? seg->hi : NULL);
        else if (fused) {
            attn_tile_pack_keys(run->tile, kp, ld, cols);
            visit_fused(run, g0, gn, x0, cols, run->tile->kt, run->tile->kt_ld, vp, ld,
                        mask.lo ? seg->lo : NULL, mask.hi ? seg->hi : NULL);
        } else if (run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1)
            visit_span(run, g0, gn, x0, cols, vp, ld, masked ? &mask : NULL);
        else
            attn_tile_visit_masked(run->tile, g0, gn, run->q + g0 * run->ldq, run->ldq, kp, vp, ld,
                                   cols, masked ? &mask : NULL);
    }
}

/* Seen keys [lo, hi) of task row r, clipped to the segment. */
static void row_bounds(const attn_bs_seg *seg, int64_t r, int64_t *lo, int64_t *hi)
{
    *lo = seg->lo ? attn_bs_max(seg->lo[r], 0) : 0;
    *hi = seg->hi ? attn_bs_min(seg->hi[r], seg->keys.n) : seg->keys.n;
}

/* Union [*u0, *u1) and intersection [*i0, *i1) of the rows' seen intervals (empty: u0 >= u1;
 * the intersection is empty when any row sees nothing). */
static void span(const attn_bs_seg *seg, int64_t r0, int64_t nr, int64_t *u0, int64_t *u1,
                 int64_t *i0, int64_t *i1)
{
    *u0 = seg->keys.n, *u1 = 0, *i0 = 0, *i1 = seg->keys.n;
    for (int64_t r = r0; r < r0 + nr; r++) {
        int64_t lo, hi;
        row_bounds(seg, r, &lo, &hi);
        if (lo >= hi) {
            *i1 = *i0;
            continue;
        }
        *u0 = attn_bs_min(*u0, lo), *u1 = attn_bs_max(*u1, hi);
        *i0 = attn_bs_max(*i0, lo), *i1 = attn_bs_min(*i1, hi);
    }
}

/* The keys of segment row x (task row r0 + x) of a list per row (row_start) or of the own keys
 * (own): *n of them at *keys. */
static const int64_t *row_list(const attn_bs_seg *seg, int64_t x, int64_t *n)
{
    if (!seg->row_start) {
        const int64_t *j = seg->own + seg->r0 + x;
        *n = *j >= 0;
        return j;
    }
    *n = seg->row_start[x + 1] - seg->row_start[x];
    return seg->keys.idx + seg->row_start[x];
}

/* Ask for the k, v rows of segment rows [x0, x1) of a list per row (or own keys). */
static void prefetch_list(const attn_bs_run *run, const attn_bs_seg *seg, int64_t x0, int64_t x1)
{
    for (int64_t x = x0; x < attn_bs_min(x1, seg->nrows); x++) {
        int64_t n;
        const int64_t *idx = row_list(seg, x, &n);
        prefetch_rows(run, idx, n);
    }
}

/* A fresh tile and at most one key per row: start each row from its key (score s: m = s, l = 1,
 * acc = its v row; no key: the fresh m = -inf, l = 0, acc = 0) written into the tile, instead of
 * a visit per row. False (nothing done) when the case does not apply. */
static bool seed_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t D = run->D, ahead = 8;
    attn_tile *t = run->tile;
    if (run->bt || !run->fresh || !run->seeds) return false;
    for (int64_t x = 0; x < seg->nrows && !seg->own; x++)
        if (seg->row_start[x + 1] - seg->row_start[x] > 1) return false;
    prefetch_list(run, seg, 0, ahead);
    for (int64_t x = 0; x < attn_bs_min(ahead, seg->nrows); x++) prefetch_query(run, seg->r0 + x);
    for (int64_t x = 0; x < seg->nrows; x++) {
        if (x + ahead < seg->nrows) {
            prefetch_list(run, seg, x + ahead, x + ahead + 1);
            prefetch_query(run, seg->r0 + x + ahead); /* ahead of its first use */
        }
        int64_t n;
        const int64_t *key = row_list(seg, x, &n);
        const int64_t r = seg->r0 + x, j = n > 0 ? *key : -1;
        /* own keys (a block's positions): the next block's row x, likely next (the hardware
         * sees no stream across tasks) */
        if (seg->own) {
            prefetch_guess(run->q, (r + seg->nrows) * run->ldq, D);
            if (j >= 0) {
                prefetch_guess(run->kg, (j + seg->nrows) * D, D);
                prefetch_guess(run->vg, (j + seg->nrows) * D, D);
            }
        }
        if (j < 0) continue;
        float sc = t->scale * attn_vdot(t->ks, run->q + r * run->ldq, run->kg + j * D, D);
        if (t->cap > 0.0f) attn_vsoftcap(t->ks, &sc, 1, t->cap);
        if (t->alibi) sc -= t->slope[r] * fabsf(t->qpos[r] - (float)j);
        t->m[r] = sc, t->l[r] = 1.0f;
        memcpy(t->acc + r * t->acc_ld, run->vg + j * D, (size_t)D * sizeof(float));
    }
    return true;
}

/* Ask for the rows idx[0..n) of k, v and of their gradients (the backward). */
static void prefetch_grads(const attn_bs_run *run, const int64_t *idx, int64_t n)
{
    prefetch_rows(run, idx, n);
    for (int64_t x = 0; x < n; x++)
        for (int64_t d = 0; d < run->D; d += 16) {
            __builtin_prefetch(run->dkg + idx[x] * run->D + d, 1);
            __builtin_prefetch(run->dvg + idx[x] * run->D + d, 1);
        }
}

/* Keys of seg.ahead the backward's own-key pass asks for at most (as the forward's AHEAD_KEYS). */
enum { BWD_AHEAD_KEYS = 128 };

/* The backward of a list per row: row by row (a one-key list in one pass: attn_btile_visit_one),
 * the keys and gradients of the row AHEAD rows on prefetched meanwhile. */
static void backward_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t D = run->D, ahead = 4;
    for (int64_t r = 0; r < seg->nrows; r++) {
        for (int64_t x = r == 0 ? 0 : r + ahead; x <= r + ahead && x < seg->nrows; x++) {
            int64_t nx;
            const int64_t *ix = row_list(seg, x, &nx);
            prefetch_grads(run, ix, nx);
        }
        const int64_t row = seg->r0 + r;
        int64_t n;
        const int64_t *idx = row_list(seg, r, &n);
        const float *q = run->q + row * run->ldq, *dout = run->dout + row * run->lddo;
        if (seg->own && n == 1) { /* the next block's row r (likely this thread's next task) */
            const int64_t nx = seg->nrows, j = *idx + nx;
            prefetch_l2(run->q, (row + nx) * run->ldq, D);
            prefetch_l2(run->dout, (row + nx) * run->lddo, D);
            if (run->out) prefetch_l2(run->out, (row + nx) * run->lddo, D);
            prefetch_l2(run->kg, j * D, D);
            prefetch_l2(run->vg, j * D, D);
            prefetch_l2(run->dkg, j * D, D);
            prefetch_l2(run->dvg, j * D, D);
            /* row r's share of the next block's keys (seg.ahead) and their gradient rows */
            const int64_t na = attn_bs_min(seg->ahead.n, BWD_AHEAD_KEYS);
            for (int64_t x = r * na / nx; x < (r + 1) * na / nx; x++) {
                const int64_t a = key_at(&seg->ahead, x);
                prefetch_l2(run->kg, a * D, D);
                prefetch_l2(run->vg, a * D, D);
                prefetch_l2(run->dkg, a * D, D);
                prefetch_l2(run->dvg, a * D, D);
            }
        }
        if (n == 1) {
            const int64_t j = *idx;
            attn_btile_visit_one(run->bt, row, q, dout, j, run->kg + j * D, run->vg + j * D,
                                 run->dkg + j * D, run->dvg + j * D);
            continue;
        }
        for (int64_t x0 = 0; x0 < n; x0 += run->cols_max)
            attn_btile_visit_list(run->bt, row, q, dout, run->kg, run->vg, run->dkg, run->dvg,
                                  idx + x0, attn_bs_min(run->cols_max, n - x0));
    }
}

/* A list per row (or own keys): row by row, the next row's keys prefetched while this one
 * computes. */
static void compute_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    if (run->bt) {
        backward_lists(run, seg);
        return;
    }
    if (seed_lists(run, seg)) return;
    prefetch_list(run, seg, 0, 1);
    for (int64_t r = 0; r < seg->nrows; r++) {
        prefetch_list(run, seg, r + 1, r + 2);
        const int64_t row = seg->r0 + r;
        int64_t n;
        const int64_t *idx = row_list(seg, r, &n);
        for (int64_t x0 = 0; x0 < n; x0 += run->cols_max)
            attn_tile_visit_list(run->tile, row, run->q + row * run->ldq, run->kg, run->vg,
                                 idx + x0, attn_bs_min(run->cols_max, n - x0));
    }
}

static void compute_seg(attn_bs_run *run, const attn_bs_seg *seg);

/* A fresh tile begun without zeroing acc (plan.seeds): zero it now. */
void attn_bs_unzeroed_to_zero(attn_bs_run *run)
{
    if (run->unzeroed) attn_tile_zero_acc(run->tile);
    run->unzeroed = false;
}

/* Rows per call of the fused visit with own keys (compute_own), and keys of seg.ahead asked for
 * per segment at most (the rest would not stay in L2 anyway). */
enum { OWN_ROWS = 64, AHEAD_KEYS = 128 };

/* Append the span of `bytes` at `at` to sp[0..*n), merged with the last when it continues it. */
static void add_span(attn_ks_span *sp, int64_t *n, uintptr_t at, int64_t bytes)
{
    if (*n > 0 && sp[*n - 1].at + (uintptr_t)sp[*n - 1].bytes == at) sp[*n - 1].bytes += bytes;
    else sp[(*n)++] = (attn_ks_span){.at = at, .bytes = bytes};
}

/* The address of base[off] as an integer (a guess at the next task's rows may lie past its array:
 * no out-of-bounds pointer is formed). */
static uintptr_t address(const float *base, int64_t off)
{
    return (uintptr_t)base + (uintptr_t)off * sizeof(float);
}

/* The spans a fused own visit of segment rows [g0, g0 + gn) asks for: the rows of the next block
 * (nr on: likely this thread's next task) and its share of seg.ahead's k and v rows. Returns how
 * many. */
static int64_t own_ahead(const attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                         attn_ks_span *sp)
{
    const int64_t D = run->D, nr = seg->nrows, row = (int64_t)sizeof(float) * D;
    const int64_t r0 = seg->r0 + g0;
    int64_t n = 0;
    add_span(sp, &n, address(run->q, (r0 + nr) * run->ldq), gn * run->ldq * (int64_t)sizeof(float));
    /* the own keys' rows by runs of consecutive keys (random: the block's positions), k then v */
    for (int64_t r = r0; r < r0 + gn;) {
        const int64_t j = seg->own[r];
        int64_t e = r + 1;
        if (j < 0) {
            r = e;
            continue;
        }
        while (e < r0 + gn && seg->own[e] == j + (e - r)) e++;
        add_span(sp, &n, address(run->kg, (j + nr) * D), (e - r) * row);
        add_span(sp, &n, address(run->vg, (j + nr) * D), (e - r) * row);
        r = e;
    }
    const int64_t na = attn_bs_min(seg->ahead.n, AHEAD_KEYS);
    for (int64_t x = g0 * na / nr; x < (g0 + gn) * na / nr; x++) {
        const int64_t j = key_at(&seg->ahead, x);
        add_span(sp, &n, address(run->kg, j * D), row);
        add_span(sp, &n, address(run->vg, j * D), row);
    }
    return n;
}

/* A segment with own keys. The forward of a fresh tile without score modifiers, its keys in one
 * visit (listed keys packed from their rows, their v rows read through the list: no copy): the
 * own keys and the keys in one pass per group of rows (attn_tile_attend_own: the scores, softmax
 * and p·v of a group's rows together, no seeding pass, acc never zeroed or rescaled), the next
 * block's queries and own keys and seg.ahead's keys asked for meanwhile, spread over the pass
 * (not in bursts between calls, which stall the pass); the task's only visit (seg.last, all its
 * rows, the last phase) writes out normalised itself (no pass over acc after). Otherwise the own
 * keys as a list per row (the forward's fresh tile starts from them: seed_lists), then the keys. */
static void compute_own(attn_bs_run *run, const attn_bs_seg *seg)
{
    const attn_tile *t = run->tile;
    const int64_t n = seg->keys.n, D = run->D, nr = seg->nrows;
    const bool in_place = contiguous(&seg->keys) || every_step(&seg->keys, run->D);
    const bool fused = !run->bt && run->fresh && run->seeds && t->cap == 0.0f && !t->alibi &&
                       n <= run->cols_max &&
                       (n <= 0 || in_place || seg->keys.idx || (run->kbuf && n <= run->gather_max));
    if (!fused) {
        attn_bs_unzeroed_to_zero(run);
        const attn_bs_seg own = {.r0 = seg->r0,
                                 .nrows = seg->nrows,
                                 .own = seg->own,
                                 .ahead = seg->ahead};
        compute_lists(run, &own);
        run->fresh = false;
        attn_bs_seg rest = *seg;
        rest.own = NULL;
        if (n > 0) compute_seg(run, &rest);
        return;
    }
    if (seg->r0 > 0 || nr < t->rows) attn_bs_unzeroed_to_zero(run); /* rows not set below */
    run->unzeroed = false;
    int64_t ld = D;
    const float *vp = run->vg;
    const int64_t *vidx = seg->keys.idx; /* listed keys: packed and read where they are */
    if (n > 0 && vidx) {
        /* the drawn keys were asked for during the previous block (seg.ahead): no burst here */
        attn_tile_pack_key_rows(run->tile, run->kg, D, vidx, n);
    } else if (n > 0) { /* in place, or runs of keys gathered */
        const float *kp = keys_of(run, &seg->keys, run->kg, run->kbuf, 0, n, &ld, false);
        vp = keys_of(run, &seg->keys, run->vg, run->vbuf, 0, n, &ld, false);
        attn_tile_pack_key_rows(run->tile, kp, ld, NULL, n);
    }
    attn_ks_span ahead[1 + 2 * OWN_ROWS + 2 * AHEAD_KEYS];
    /* the task's only visit: out written from it (no pass over acc after) */
    const bool to_out = run->end_out && seg->last && seg->r0 == 0 && nr == t->rows;
    for (int64_t g0 = 0; g0 < nr; g0 += OWN_ROWS) {
        const int64_t gn = attn_bs_min(OWN_ROWS, nr - g0), r0 = seg->r0 + g0;
        attn_tile_attend_own(run->tile, r0, gn, run->q + r0 * run->ldq, run->ldq, vp, ld, vidx, n,
                             seg->hi, run->kg, run->vg, seg->own, ahead,
                             own_ahead(run, seg, g0, gn, ahead),
                             to_out ? run->end_out + r0 * run->end_ld : NULL, run->end_ld,
                             run->end_stream);
    }
    run->ended = to_out;
    run->fresh = false;
}

/* One segment on the tile: its own keys (compute_own), key lists (compute_lists), scattered keys
 * gathered once or read in place, the backward's gradient rows, then the bounded visits split by
 * row groups. Over 80 lines on purpose: the cases decide in order which copy of the keys every
 * later visit reads, and that order reads best in one place. */
static void compute_seg(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t r0 = seg->r0, nr = seg->nrows;
    if (seg->own) {
        compute_own(run, seg);
        return;
    }
    attn_bs_unzeroed_to_zero(run);
    if (seg->row_start) {
        compute_lists(run, seg);
        return;
    }
    /* scattered keys that groups of rows visit again and again: copied together once, then read
     * in place (the backward reads and updates every step-th key in place: no scatter; the
     * forward packs every step-th key into its span in place: no copy) */
    const bool stepped = every_step(&seg->keys, run->D); /* read in place by a leading dim. */
    if (!contiguous(&seg->keys) && run->kbuf && (seg->lo || seg->hi) &&
        seg->keys.n <= run->gather_max && !(run->bt && stepped) &&
        !(stepped && run->span && seg->keys.n <= run->span_max)) {
        int64_t ld;
        if (seg->keys.idx) prefetch_rows(run, seg->keys.idx, seg->keys.n);
        keys_of(run, &seg->keys, run->kg, run->kbuf, 0, seg->keys.n, &ld, true);
        keys_of(run, &seg->keys, run->vg, run->vbuf, 0, seg->keys.n, &ld, true);
        attn_bs_run here = *run;
        attn_bs_seg copied = *seg;
        here.kg = run->kbuf, here.vg = run->vbuf, here.kbuf = here.vbuf = NULL;
        here.dkg = run->dkbuf, here.dvg = run->dvbuf, here.dkbuf = here.dvbuf = NULL;
        here.at = &seg->keys;
        copied.keys = attn_bs_range(0, seg->keys.n);
        const bool scatter = run->bt && !seg->keys.idx;
        if (run->bt && seg->keys.idx) /* a list: its keys' dk, dv rows updated in place */
            here.dkg = run->dkg, here.dvg = run->dvg, here.grows = seg->keys.idx;
        if (scatter) { /* the segment's gradients, added back to the keys' rows after */
            memset(run->dkbuf, 0, (size_t)(seg->keys.n * run->D) * sizeof(float));
            memset(run->dvbuf, 0, (size_t)(seg->keys.n * run->D) * sizeof(float));
        }
        compute_seg(&here, &copied);
        if (scatter) {
            scatter_add(run, &seg->keys, run->dkbuf, run->dkg, 0, seg->keys.n);
            scatter_add(run, &seg->keys, run->dvbuf, run->dvg, 0, seg->keys.n);
        }
        return;
    }
    if (!seg->lo && !seg->hi) { /* every row sees every key (but its exclusion) */
        visit_range(run, seg, r0, nr, 0, seg->keys.n, false);
        return;
    }
    int64_t u0, u1, i0, i1;
    span(seg, r0, nr, &u0, &u1, &i0, &i1);
    if (u0 >= u1) return;
    /* the forward's fused visits with upper bounds only (no modifier: visit_range) by FUSED_BLOCKS
     * register blocks of rows (a band's narrow visits are fused too, by its own sub) */
    const bool fused =
        !run->bt && !seg->lo && !seg->xlo && !run->tile->alibi && run->tile->cap == 0.0f;
    const int64_t mr = run->tile->ks->tile_rows, sub = fused ? FUSED_BLOCKS * mr : run->sub;
    /* rows in one group: one masked visit of [u0, u1) (the same keys in one call rather than
     * the common keys apart: fewer, larger GEMMs) */
    if (nr > sub) pack_span(run, seg, u0, u1); /* several groups: one packing */
    /* the forward with the span packed: each group visits all its keys; the common visit would
     * save only masks, and leave each group a short visit of its own few keys (fixed's summary:
     * 8-24 keys per group after ~500 common ones) */
    const bool common = i1 - i0 >= COMMON_MIN && nr > sub && !(run->span_kt && !run->bt);
    if (common) visit_range(run, seg, r0, nr, i0, i1, false);
    /* fused: the rows short of a multiple of the micro-kernels' register rows first, alone
     * (their block repeats a row to fill it; under causal bounds the first rows see the fewest
     * keys), then whole blocks */
    const int64_t first = fused && nr % mr != 0 ? nr % mr : sub;
    for (int64_t g0 = r0; g0 < r0 + nr; g0 += g0 == r0 ? first : sub) {
        const int64_t gn = attn_bs_min(g0 == r0 ? first : sub, r0 + nr - g0);
        int64_t g_u0, g_u1, g_i0, g_i1;
        span(seg, g0, gn, &g_u0, &g_u1, &g_i0, &g_i1);
        if (g_u0 >= g_u1) continue;
        if (!common) {
            visit_range(run, seg, g0, gn, g_u0, g_u1, true);
            continue;
        }
        if (g_u0 < i0) visit_range(run, seg, g0, gn, g_u0, attn_bs_min(g_u1, i0), true);
        if (g_u1 > i1) visit_range(run, seg, g0, gn, attn_bs_max(g_u0, i1), g_u1, true);
    }
    run->span_kt = NULL;
}

/* ---- counting a segment ---- */

static void mark(attn_bs_run *run, int64_t j)
{
    uint64_t *w = &run->bits[j >> 6], bit = 1ull << (j & 63);
    run->marked += !(*w & bit);
    *w |= bit;
}

static void mark_range(attn_bs_run *run, int64_t j0, int64_t j1)
{
    for (int64_t j = j0; j < j1;) {
        const int64_t end = attn_bs_min(j1, (j | 63) + 1);
        const uint64_t m = (end - j == 64) ? ~0ull : (((1ull << (end - j)) - 1) << (j & 63));
        uint64_t *w = &run->bits[j >> 6];
        run->marked += __builtin_popcountll(m & ~*w);
        *w |= m;
        j = end;
    }
}

/* Mark keys x in [a, b) of the segment as read. */
static void mark_keys(attn_bs_run *run, const attn_bs_keys *ks, int64_t a, int64_t b)
{
    if (contiguous(ks)) {
        mark_range(run, ks->j0 + a, ks->j0 + b);
        return;
    }
    for (int64_t x = a; x < b && run->marked < run->S; x++) mark(run, key_at(ks, x));
}

/* Count score (task row r, key j) in run->cells when drawing them. */
static void cell(attn_bs_run *run, int64_t r, int64_t j)
{
    uint8_t *c = &run->cells[(run->rows.i0 + r * run->rows.step) * run->S + j];
    *c += *c < UINT8_MAX;
}

/* Count the scores of task row r against keys x in [a, b) of the segment. */
static void cells_of(attn_bs_run *run, const attn_bs_keys *ks, int64_t r, int64_t a, int64_t b)
{
    for (int64_t x = a; x < b; x++) cell(run, r, key_at(ks, x));
}

static void count_seg(attn_bs_run *run, const attn_bs_seg *seg)
{
    for (int64_t r = seg->r0; run->cells && seg->own && r < seg->r0 + seg->nrows; r++)
        if (seg->own[r] >= 0) cell(run, r, seg->own[r]);
    for (int64_t r = seg->r0; run->cells && seg->row_start && r < seg->r0 + seg->nrows; r++)
        cells_of(run, &seg->keys, r, seg->row_start[r - seg->r0], seg->row_start[r - seg->r0 + 1]);
    for (int64_t r = seg->r0; seg->own && r < seg->r0 + seg->nrows; r++)
        if (seg->own[r] >= 0) {
            run->scores += 1.0;
            if (run->bits) mark(run, seg->own[r]);
        }
    if (seg->row_start) { /* a list per row */
        const int64_t a = seg->row_start[0], e = seg->row_start[seg->nrows];
        run->scores += (double)(e - a);
        if (run->bits) mark_keys(run, &seg->keys, a, e);
        return;
    }
    for (int64_t r = seg->r0; r < seg->r0 + seg->nrows; r++) {
        int64_t lo, hi;
        row_bounds(seg, r, &lo, &hi);
        if (lo >= hi) continue;
        int64_t xa = hi, xe = hi; /* the excluded part inside [lo, hi) */
        if (seg->xlo) {
            xa = attn_bs_clamp(seg->xlo[r], lo, hi);
            xe = attn_bs_clamp(seg->xhi[r], xa, hi);
        }
        run->scores += (double)(hi - lo - (xe - xa));
        if (run->cells) {
            cells_of(run, &seg->keys, r, lo, xa);
            cells_of(run, &seg->keys, r, xe, hi);
        }
        if (run->bits && run->marked < run->S) {
            mark_keys(run, &seg->keys, lo, xa);
            mark_keys(run, &seg->keys, xe, hi);
        }
    }
}

void attn_bs_visit(attn_bs_run *run, const attn_bs_seg *seg)
{
    if (seg->nrows <= 0 || (seg->keys.n <= 0 && !seg->own)) return;
    if (run->counting) count_seg(run, seg);
    else compute_seg(run, seg), run->fresh = false;
}
