/*
 * accuracy.h — a kind's output against float64 references on a sample of query rows:
 *   rel_err      = ||o - o_exact||_2 / ||o_exact||_2   (o_exact: exact softmax attention)
 *   max_abs_err  = max |o - o_exact|
 *   cosine       = mean over rows r of o_r·o_exact_r / (|o_r| |o_exact_r|)  (1 when both are 0,
 *                  0 when one is)
 *   self_rel_err = ||o - o_def||_2 / ||o_def||_2       (o_def: the kind's own definition)
 * over the sampled rows (all rows when B·H·T <= rows_wanted). Cost O(rows · S · D).
 * For a retrieval dataset (needle), over its planted queries r with planted key j*_r in KV head
 * (b, g) (every planted query, not a sample; cost O(planted · S · D)):
 *   hit_r        = ||o_r - v[b,g,j*_r]||_2 < ||o_r - v[b,g,j]||_2 for every key j != j*_r of (b, g)
 *   retrieval    = (number of hits) / (number of planted queries)   (NaN when there are none)
 */
#ifndef BENCH_ACCURACY_H
#define BENCH_ACCURACY_H

#include <stdint.h>

#include "attention.h"
#include "datasets.h"

typedef struct bench_accuracy {
    int64_t rows;
    double rel_err, max_abs_err, self_rel_err, cosine;
} bench_accuracy;

/* Rows (b*H + h)*T + i to compare: all when total <= wanted, else `wanted` rows spread evenly
 * with a seeded jitter. Returns the count; rows must hold min(total, wanted). */
int64_t bench_sample_rows(int64_t total, int64_t wanted, uint64_t seed, int64_t *rows);

attn_status bench_measure_accuracy(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                   const float *q, const float *k, const float *v, const float *out,
                                   int64_t rows_wanted, uint64_t seed, bench_accuracy *acc,
                                   char *msg, size_t msg_len);

/* Retrieval accuracy of out on n planted queries (definition above); NaN when n == 0. */
double bench_retrieval(const attn_shape *s, int threads, const float *v, const float *out,
                       const ds_plant *plants, int64_t n);
/* The planted queries that dataset ds (parameters p, seed) made for shape s, and the retrieval
 * accuracy of out on them: *queries = 0 and *retrieval = NaN for a dataset without plants.
 * ATTN_EFAIL only when out of memory. */
attn_status bench_measure_retrieval(const ds_ops *ds, const ds_params *p, const attn_shape *s,
                                    int threads, uint64_t seed, const float *v, const float *out,
                                    int64_t *queries, double *retrieval, char *msg, size_t msg_len);

/* Relative L2 error of float o against double ref over n values (0 when both are zero). */
double bench_rel_l2(const float *o, const double *ref, int64_t n);

#endif
