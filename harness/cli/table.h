/* table.h — results rows on the terminal: the summary table of run and sweep, CV warnings. */
#ifndef BENCH_TABLE_H
#define BENCH_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "results.h"

/* The optional columns of a table: retrieval (some point has planted queries), threads and isa
 * (the points differ in them: a sweep over --threads or --isa), dtype (some point stores q, k, v
 * in 16 bits). */
typedef struct bench_table_cols {
    bool retrieval, threads, isa, dtype;
} bench_table_cols;
/* The optional columns the n points need. */
bench_table_cols bench_table_columns(const bench_point *pts, int64_t n);
void bench_table_header(FILE *f, const bench_table_cols *c);
/* sgemm_gflops: the run's measured sgemm, for the %sgemm column when the point has no
 * pct_sgemm of its own (NaN: not measured); %peak: the point's pct_peak ("-": none). */
void bench_table_row(FILE *f, const bench_point *pt, double sgemm_gflops,
                     const bench_table_cols *c);
/* Does any of the n points have a retrieval accuracy (planted queries)? */
bool bench_table_has_retrieval(const bench_point *pts, int64_t n);
/* On stderr, when the point's repetitions samples[0..nsamples) vary (bench_timings_vary: their
 * interquartile range above 10 % of the median, after being measured twice): which point, and
 * (with_fix) how to fix it. Returns 1 if it warned. */
int bench_warn_noisy(const bench_point *pt, const double *samples, int64_t nsamples, bool with_fix);
/* A point with status "nonfinite": one line on stderr naming the first bad output value; 1 if
 * so, 0 otherwise. A point measured on non-finite inputs (--allow-nonfinite): a line saying so. */
int bench_warn_nonfinite(const bench_point *pt);
/* A distributed kind's line after its row (nothing for other kinds): compute, waiting for
 * messages, bytes sent and overlap (the stats columns) on `ranks` ranks. */
void bench_table_comm(FILE *f, const bench_point *pt, int ranks);
/* The fix for noisy timings, one line. */
#define BENCH_NOISE_FIX "close other programs, raise --min-time or --reps, or lower --threads"

#endif
