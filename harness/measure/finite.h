/*
 * finite.h — non-finite values (NaN, ±Inf) in a rank-4 float tensor: one pass over the data,
 * outside any timed region. The scan reads every element once (a branch-free OR over blocks of
 * bit tests that the compiler vectorises; only a block that holds a bad value is searched again),
 * so its cost is a memory read of the tensor: far below one forward.
 */
#ifndef BENCH_FINITE_H
#define BENCH_FINITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

/* Index of the first non-finite element of x[0..n), or -1 when every element is finite. */
int64_t bench_find_nonfinite(const float *x, int64_t n);

/* Refuse (ATTN_EINVAL) a tensor `name` of dims [4] (row-major) holding a non-finite value, with
 * its position and what it is: "<where>: q[0,3,17,5] is NaN<hint>" (where: NULL or "" for none;
 * row_offset is added to index 2, e.g. the file rows skipped before the newest queries). */
attn_status bench_check_finite(const float *x, const int64_t dims[4], const char *name,
                               const char *where, int64_t row_offset, const char *hint, char *msg,
                               size_t msg_len);

#endif
