/*
 * kernels.h — the compute pieces kinds share: vector exp/max, and the online-softmax tile
 * (FlashAttention-2 style) that accumulates one block of queries against blocks of keys.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "attn_core.h" /* attn_blas_threads */
#include "score_mod.h"

/* Can x be handed to BLAS, whose sizes and leading dimensions are int? Every stride or leading
 * dimension computed from the shape (step·D, rows·D ...) goes through this guard first. */
static inline bool attn_blas_int_ok(int64_t x) { return x >= 0 && x <= INT_MAX; }

struct attn_kernel_set; /* kernel_set.h: the set a call runs on (attn_exec.ks) */

/* Vector loops of kernel set ks. max of x[0..n), -INFINITY when n == 0. */
float attn_vmax(const struct attn_kernel_set *ks, const float *x, int64_t n);
/* x[j] = exp(x[j] - shift) in place (exact 0 where x[j] - shift < -87.3, e.g. -INFINITY);
 * returns the sum. Relative error of each exp below 2e-7. */
float attn_vexp_sum(const struct attn_kernel_set *ks, float *x, int64_t n, float shift);
/* x[j] = cap · tanh(x[j] / cap) in place (the softcap modifier, cap > 0), tanh by vtanh.h's
 * rational approximation: error below 4e-7. */
void attn_vsoftcap(const struct attn_kernel_set *ks, float *x, int64_t n, float cap);
/* a·b over n floats (8 lanes and FMA with AVX2). */
float attn_vdot(const struct attn_kernel_set *ks, const float *a, const float *b, int64_t n);

/*
 * Online-softmax tile: rows queries (row stride D) against key blocks of at most cols_max keys.
 *   q [rows,D]  k,v blocks [cols,D]  out [rows,D]      scores = scale · q kᵀ
 *   per block: running max m, running sum l, acc = Σ exp(s - m) v  (acc rescaled when m grows)
 *   scores and p·v by the micro-kernels of the kernel set in force (kernels/tile_body.h: kᵀ packed
 *   once per visit, register-blocked; no BLAS), the exp by the set's vexp
 *   flops per block: 4·rows·cols·D (2·rows·cols·D each micro-kernel) + O(rows·cols) for
 *   max/exp/sum (not counted)
 * Scratch (floats): attn_tile_floats(rows_max, cols_max, D): m, l, acc [rows,D], scores
 * [rows, attn_tile_score_ld(cols_max)] and the packed keys [D, attn_tile_score_ld(cols_max)].
 * One thread per tile.
 */
typedef struct attn_tile {
    const struct attn_kernel_set *ks; /* the kernel set its visits run on (attn_tile_begin's) */
    int64_t rows, D;
    float scale;
    float *m, *l; /* [rows] running max and sum */
    float *acc;   /* [rows,D] unnormalised output, rows acc_ld apart (D; in place: a caller's) */
    int64_t acc_ld;
    float *scores; /* [rows,cols] (row stride attn_tile_score_ld(cols)) one block of scores,
                      then probabilities; the visit's packed keys follow the rows' scores */
    /* Score modifiers (score_mod.h), off after attn_tile_begin; attn_tile_mods turns them on.
     * With alibi the caller sets qpos[r] and slope[r] of every tile row (attn_tile_mod_row) and,
     * before each attn_tile_visit or attn_tile_visit_masked, kpos[c], the position of each key
     * of the block (attn_tile_mod_keys; attn_tile_visit_list reads its keys' indices). */
    float cap;                  /* softcap C; 0: off */
    bool alibi;                 /* ALiBi bias -slope[r]·|qpos[r] - kpos[c]| */
    float *qpos, *slope, *kpos; /* [rows], [rows], [cols_max] */
    float *kt;                  /* the packed keys of the last attn_tile_pack_keys: [D, kt_ld] */
    int64_t kt_ld;
} attn_tile;

int64_t attn_tile_floats(int64_t rows_max, int64_t cols_max, int64_t D);
/* Lay the tile out in scratch (64-byte aligned pieces, sized by attn_tile_floats) and reset it
 * for `rows` queries, its visits on kernel set ks (every begin and resume below takes it); every
 * later visit has at most the cols_max keys the scratch was sized for. */
void attn_tile_begin(attn_tile *t, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                     int64_t D, float scale);
/* attn_tile_begin but acc left as the scratch holds it, for a caller whose first visit sets every
 * row's acc or writes out itself (attn_tile_attend_own), or that zeroes it first
 * (attn_tile_zero_acc). */
void attn_tile_begin_unzeroed(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                              int64_t rows, int64_t D, float scale);
void attn_tile_zero_acc(attn_tile *t);
/* Accumulate keys [0, cols) of a block into tile rows [r0, r0 + nrows); q points at row r0's
 * query. col_end (or NULL: all keys allowed) gives, for each of those rows, the number of
 * leading keys of the block it may see; the others have no influence. */
void attn_tile_visit(attn_tile *t, int64_t r0, int64_t nrows, const float *q, const float *k,
                     const float *v, int64_t cols, const int64_t *col_end);
/* Scratch (floats) the modifiers m need in a tile: 0 unless ALiBi (2·rows_max + cols_max). */
int64_t attn_tile_mod_floats(const attn_score_mod *m, int64_t rows_max, int64_t cols_max);
/* Apply the modifiers m (NULL: none) in the visits of a begun tile; scratch holds
 * attn_tile_mod_floats(m, rows_max, cols_max) floats. Applied to every seen score of a visit,
 * after scale·q·k and before the mask: softcap, then ALiBi. Nothing on: the plain tile, whose
 * visits test a flag once per row. */
void attn_tile_mods(attn_tile *t, const attn_score_mod *m, float *scratch);
/* Tile row r holds query i of head h (ALiBi: its position i + S - T and its slope). */
void attn_tile_mod_row(attn_tile *t, const attn_score_mod *m, int64_t r, int64_t h, int64_t i);
/* kpos of the next visit: keys j0, j0 + step, ... (n of them). */
void attn_tile_mod_keys(attn_tile *t, int64_t j0, int64_t step, int64_t n);
/* The ALiBi bias of tile row r on columns [a, e) of its scores row (nothing unless alibi). */
void attn_tile_alibi_row(const attn_tile *t, int64_t r, float *row, int64_t a, int64_t e);
/* out[r] = acc[r] / l[r] (zeros for rows that saw no key). */
void attn_tile_end(const attn_tile *t, float *out);

/* Which keys of a visited block each row sees (the block sparse engine's masks): row r of the
 * visit sees block column c iff lo[r] <= col0 + c < hi[r] and not xlo[r] <= col0 + c < xhi[r].
 * A NULL array means no bound (xlo and xhi are set together); col0 is the block's first key in
 * the coordinates of the bounds. Unseen keys have no influence. */
typedef struct attn_tile_mask {
    int64_t col0;
    const int64_t *lo, *hi, *xlo, *xhi;
} attn_tile_mask;
/* attn_tile_visit with row strides (ldq for q, ldkv for k and v, in floats) and a mask (NULL:
 * every row sees every key). attn_tile_visit is this with strides D and hi = col_end. */
void attn_tile_visit_masked(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                            const float *k, const float *v, int64_t ldkv, int64_t cols,
                            const attn_tile_mask *mask);
/* attn_tile_visit_masked in two steps, so that several visits of one key block (row groups
 * across a causal diagonal) pack its keys once: pack_keys packs keys [0, cols) of k (rows ldkv
 * apart) into the tile; visit_packed is a visit of the first cols' <= cols of those keys (v rows
 * ldkv apart), valid until the next pack_keys or visit_masked of the same tile. */
void attn_tile_pack_keys(attn_tile *t, const float *k, int64_t ldkv, int64_t cols);
void attn_tile_visit_packed(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                            const float *v, int64_t ldkv, int64_t cols, const attn_tile_mask *mask);
/* Scores of a kind's own (additive attention's tanh scores): a visit of cols keys whose scores
 * the caller wrote into t->scores — tile rows r0..r0 + nrows as rows of stride
 * attn_tile_score_ld(cols) floats (cols rounded up to ATTN_TILE_COLS_ALIGN, 64), already
 * scaled — then the online softmax and p·v as attn_tile_visit_masked (which is the packing and
 * scores micro-kernel, then this). Only the columns a row sees are read: the others may hold
 * anything. */
int64_t attn_tile_score_ld(int64_t cols);
void attn_tile_visit_scores(attn_tile *t, int64_t r0, int64_t nrows, const float *v, int64_t ldkv,
                            int64_t cols, const attn_tile_mask *mask);
/* One row r against the keys idx[0..n) of k and v (rows of D floats), read in place: scores
 * and p·v by vector loops (a single row is no GEMM), n <= cols_max. */
void attn_tile_visit_list(attn_tile *t, int64_t r, const float *q, const float *k, const float *v,
                          const int64_t *idx, int64_t n);
/* attn_tile_pack_keys of the rows k + (idx ? idx[c] : c)·ldkv (scattered keys packed where they
 * are, no copy), for attn_tile_attend_own only (padding zeroed only up to cols rounded up to 16:
 * what it reads). */
void attn_tile_pack_key_rows(attn_tile *t, const float *k, int64_t ldkv, const int64_t *idx,
                             int64_t cols);
/* A visit of a fresh tile (nothing visited yet, no score modifier): tile rows r0..r0 + nrows
 * by keys [0, cols) packed before (attn_tile_pack_keys or attn_tile_pack_key_rows; cols 0: none;
 * key c's v row at v + (vidx ? vidx[c] : c)·ldkv), row r
 * seeing keys [0, hi[r]) of them (hi NULL: all; indexed by tile row, as own) and its own key
 * own[r] (a row of ko and vo, rows D apart; -1: none): scores, softmax and p·v in one pass per
 * group of rows (attn_ks()->tile.attend_own), m, l and acc set without reading them; a caller
 * may run it a few rows at a time on one packing. The n_ahead spans of ahead (kernels/kernel_set.h;
 * NULL: none) are asked for meanwhile, spread over the groups of rows. out set (the visit is the
 * rows' last): the rows normalised into out (row r0 there; rows ldout apart; non-temporal stores
 * when stream, as attn_tile_end_stream but not fenced: the caller calls attn_tile_store_fence
 * before out is read on another thread) instead of acc, whose rows are then left as they were
 * (m and l set). */
struct attn_ks_span;
void attn_tile_attend_own(attn_tile *t, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                          const float *v, int64_t ldkv, const int64_t *vidx, int64_t cols,
                          const int64_t *hi, const float *ko, const float *vo, const int64_t *own,
                          const struct attn_ks_span *ahead, int64_t n_ahead, float *out,
                          int64_t ldout, bool stream);
/* A store fence (x86: sfence): this thread's non-temporal stores visible before its later ones. */
void attn_tile_store_fence(const struct attn_kernel_set *ks);
/* Keep a tile's unnormalised state between two passes over the same rows: acc rows to acc
 * (row stride ldo floats; rows that saw no key zeroed), and (m, l) pairs to ml[r*ml_stride],
 * ml[r*ml_stride + 1]; load puts them back into a tile begun for the same number of rows. */
void attn_tile_save(const attn_tile *t, float *acc, int64_t ldo, float *ml, int64_t ml_stride);
void attn_tile_load(attn_tile *t, const float *acc, int64_t ldo, const float *ml,
                    int64_t ml_stride);
/* attn_tile_begin with acc in place: the rows of acc (row stride ldo floats), zeroed; the tile
 * accumulates there (attn_tile_save then keeps only (m, l), attn_tile_end* normalise in place). */
void attn_tile_begin_at(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                        int64_t rows, int64_t D, float scale, float *acc, int64_t ldo);
/* attn_tile_begin_at without zeroing acc's rows: a row's first visit that sees a key sets its
 * acc row (attend, visit_scores and visit_list read no acc row whose m is -inf), attn_tile_save
 * zeroes the rows that saw none (two phases: no memset of out's rows before the first). */
void attn_tile_begin_over(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                          int64_t rows, int64_t D, float scale, float *acc, int64_t ldo);
/* attn_tile_resume with acc in place: (m, l) loaded, acc's rows (saved there) used where they are.
 */
void attn_tile_resume_at(attn_tile *t, const struct attn_kernel_set *ks, float *scratch,
                         int64_t rows, int64_t D, float scale, float *acc, int64_t ldo,
                         const float *ml, int64_t ml_stride);
/* attn_tile_begin then attn_tile_load, without resetting what the load overwrites. */
void attn_tile_resume(attn_tile *t, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                      int64_t D, float scale, const float *acc, int64_t ldo, const float *ml,
                      int64_t ml_stride);
/* attn_tile_end into rows of stride ldo floats. */
void attn_tile_end_strided(const attn_tile *t, float *out, int64_t ldo);
/* attn_tile_end_strided by non-temporal stores (attn_ks()->tile.end_stream): for an output far
 * larger than the caches, written once and not read again soon (no read for ownership). */
void attn_tile_end_stream(const attn_tile *t, float *out, int64_t ldo);

/* The log-sum-exp m + log l of tile rows r0, r0 + rstep, ... into lse[0], lse[stride], ...
 * (+INFINITY for a row that saw no key: its probabilities exp(s - lse) are 0 in the backward). */
void attn_tile_lse(const attn_tile *t, int64_t r0, int64_t rstep, float *lse, int64_t stride);

/*
 * Backward tile (FlashAttention-2 backward, tile_backward.c): rows queries against blocks of keys,
 * given each row's log-sum-exp and Δ = dout·out. Per visit of cols keys:
 *   S = scale·q kᵀ, the modifiers (softcap keeps ds/du = 1 - tanh²), mask,
 *   P = exp(S - lse), dP = dout vᵀ, dS = P∘(dP - Δ)·ds/du,
 *   dv += Pᵀ dout, dk += scale·dSᵀ q (into the caller's rows: ldg floats apart),
 *   dq += scale·dS k (into the tile's accumulator t.acc [rows, D]); the five products by the
 *   forward tile's micro-kernels (kernels/tile_body.h).
 *   flops 10·rows·cols·D (five products: 2.5 × the forward's two); never more than rows × cols.
 * Scratch: attn_btile_floats(rows_max, cols_max, D, cap); single-threaded.
 */
/* The tensors of a backward (attention.h's backward slot): lse is what forward_train saved. */
typedef struct attn_bwd_io {
    const float *q, *k, *v, *out, *lse, *dout;
    float *dq, *dk, *dv;
} attn_bwd_io;

typedef struct attn_btile {
    attn_tile t; /* rows, D, scale, modifiers; t.m: each row's log-sum-exp, t.l: its Δ,
                    t.acc: the dq accumulator [rows, D], t.scores: P [rows, ld] */
    float *dp;   /* [rows, ld]: dP, then dS */
    float *dcap; /* [rows, ld]: softcap's ds/du (NULL without softcap) */
    /* NULL after attn_btile_begin; set by the caller: the dk, dv row of key c of the next visits
     * is dk + grows[c]·ldg, dv + grows[c]·ldg (scattered keys' gradients updated in place) */
    const int64_t *grows;
} attn_btile;

int64_t attn_btile_floats(int64_t rows_max, int64_t cols_max, int64_t D, bool cap);
/* Lay out and reset (dq accumulator 0); the caller then sets t.m[r], t.l[r] of every row
 * (attn_btile_row) and the modifiers (attn_tile_mods, _mod_row, _mod_keys on &b->t; softcap
 * needs cap set in attn_btile_floats and here). */
void attn_btile_begin(attn_btile *b, const struct attn_kernel_set *ks, float *scratch, int64_t rows,
                      int64_t cols_max, int64_t D, float scale, bool cap);
/* attn_btile_begin with the dq accumulator at dq (rows D floats apart, zeroed here): the rows'
 * dq itself, no copy after. */
void attn_btile_begin_at(attn_btile *b, const struct attn_kernel_set *ks, float *scratch,
                         int64_t rows, int64_t cols_max, int64_t D, float scale, bool cap,
                         float *dq);
/* Row r's log-sum-exp and Δ = dout·out (D floats each); returns Δ. */
float attn_btile_row(attn_btile *b, int64_t r, float lse, const float *dout, const float *out);
/* Row r's log-sum-exp and a Δ computed before (attn_btile_row's). */
void attn_btile_row_delta(attn_btile *b, int64_t r, float lse, float delta);
/* Tile rows [r0, r0 + nrows) (q and dout rows ldq, lddo floats apart, of row r0) against keys
 * [0, cols) (k, v rows ldkv apart), mask as attn_tile_visit_masked (NULL: all seen); dk, dv rows
 * of the same keys, ldg floats apart, are accumulated. */
void attn_btile_visit(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                      const float *dout, int64_t lddo, const float *k, const float *v, int64_t ldkv,
                      float *dk, float *dv, int64_t ldg, int64_t cols, const attn_tile_mask *mask);
/* attn_btile_visit from keys packed by the caller, so that several visits share one packing:
 * kt = kᵀ and vt = vᵀ of keys [0, cols) ([D, ldt] as attn_ks()->tile.pack_kt writes them, each
 * row readable up to column round_up(cols, 64): the columns past cols are masked, anything
 * finite), k rows ldk apart (dq = dS k). */
void attn_btile_visit_packed(attn_btile *b, int64_t r0, int64_t nrows, const float *q, int64_t ldq,
                             const float *dout, int64_t lddo, const float *kt, const float *vt,
                             int64_t ldt, const float *k, int64_t ldk, float *dk, float *dv,
                             int64_t ldg, int64_t cols, const attn_tile_mask *mask);
/* One row r against keys idx[0..n) of k, v (rows of D floats, read and accumulated in place in
 * dk, dv), n <= cols_max; vector loops. */
void attn_btile_visit_list(attn_btile *b, int64_t r, const float *q, const float *dout,
                           const float *k, const float *v, float *dk, float *dv, const int64_t *idx,
                           int64_t n);
/* One row r against one key (position j: ALiBi's; row kj of k, vj of v, whose gradients dkj, dvj
 * are accumulated): attn_btile_visit_list of a one-key list, in one pass of two dot products and
 * one of three axpys (no scores row). */
void attn_btile_visit_one(attn_btile *b, int64_t r, const float *q, const float *dout, int64_t j,
                          const float *kj, const float *vj, float *dkj, float *dvj);

#endif
