/*
 * kernels.h — the compute pieces kinds share: vector exp/max, and the online-softmax tile
 * (FlashAttention-2 style) that accumulates one block of queries against blocks of keys.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* max of x[0..n), -INFINITY when n == 0. */
float attn_vmax(const float *x, int64_t n);
/* x[j] = exp(x[j] - shift) in place (exact 0 where x[j] - shift < -87.3, e.g. -INFINITY);
 * returns the sum. Relative error of each exp below 2e-7. */
float attn_vexp_sum(float *x, int64_t n, float shift);

/*
 * Online-softmax tile: rows queries (row stride D) against key blocks of at most cols_max keys.
 *   q [rows,D]  k,v blocks [cols,D]  out [rows,D]      scores = scale · q kᵀ by sgemm
 *   per block: running max m, running sum l, acc = Σ exp(s - m) v  (acc rescaled when m grows)
 *   flops per block: 4·rows·cols·D (two sgemms) + O(rows·cols) for max/exp/sum
 * Scratch (floats): attn_tile_floats(rows_max, cols_max, D); OpenBLAS must be single-threaded
 * when tiles run inside a parallel region.
 */
typedef struct attn_tile {
    int64_t rows, D;
    float scale;
    float *m, *l;    /* [rows] running max and sum */
    float *acc;      /* [rows,D] unnormalised output */
    float *scores;   /* [rows,cols] one block of scores, then probabilities */
} attn_tile;

int64_t attn_tile_floats(int64_t rows_max, int64_t cols_max, int64_t D);
/* Lay the tile out in scratch (64-byte aligned pieces, sized by attn_tile_floats) and reset it
 * for `rows` queries; every later visit has at most the cols_max keys the scratch was sized for. */
void attn_tile_begin(attn_tile *t, float *scratch, int64_t rows, int64_t D, float scale);
/* Accumulate keys [0, cols) of a block into tile rows [r0, r0 + nrows); q points at row r0's
 * query. col_end (or NULL: all keys allowed) gives, for each of those rows, the number of
 * leading keys of the block it may see; the others have no influence. */
void attn_tile_visit(attn_tile *t, int64_t r0, int64_t nrows, const float *q, const float *k,
                     const float *v, int64_t cols, const int64_t *col_end);
/* out[r] = acc[r] / l[r] (zeros for rows that saw no key). */
void attn_tile_end(const attn_tile *t, float *out);

/* OpenBLAS threads: set to n when different (cheap when already n). */
void attn_blas_threads(int n);

#endif
