/* stats.h — summary statistics of timing samples (stats.c) and the timed loop (timing.c). */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "attn_core.h"

typedef struct bench_stats {
    int64_t n;
    double median, min, max, p95, mean, stddev, cv; /* stddev: sample (n-1); cv = stddev/mean */
} bench_stats;

/* Statistics of x[0..n) (x is not modified). p95 by linear interpolation between order
 * statistics (numpy's default). n == 0 gives NaNs; n == 1 gives stddev and cv NaN (one
 * repetition measures no variation). */
bench_stats bench_stats_of(const double *x, int64_t n);

/* How much repetition times vary, judged so that one outlier cannot set it: the interquartile
 * range over the median, (q75 - q25) / median, quartiles interpolated as p95 is. With at least
 * BENCH_SPREAD_MIN_REPS repetitions the quartiles are inner order statistics, untouched by the
 * largest or smallest one; with fewer, NaN (not judged). */
enum { BENCH_SPREAD_MIN_REPS = 5 };
double bench_relative_iqr(const double *x, int64_t n);
/* The spread above which a point's timings are said to vary (its median less certain). */
#define BENCH_SPREAD_LIMIT 0.10
/* Do x[0..n)'s times vary: bench_relative_iqr above BENCH_SPREAD_LIMIT? */
bool bench_timings_vary(const double *x, int64_t n);

/* Monotonic clock in seconds. */
double bench_now_s(void);

typedef struct bench_timing_cfg {
    int warmup;           /* untimed runs first, at least this many ... */
    double warmup_time_s; /* ... and for at least this long (thread pools, caches, clocks) */
    int min_reps;         /* at least this many timed runs ... */
    double min_time_s;    /* ... and at least this much timed time in all */
    int max_reps;         /* never more (bounds the samples of very fast forwards) */
} bench_timing_cfg;

/* Warm up (both warm-up minimums), then run fn(ctx) until both minimums are met; every duration
 * goes into *samples_s (malloc'd). A test hook replaces the durations recorded (never the runs):
 * the environment variable BENCH_TEST_TIMES, a list of s, o, v for the process's timed loops in
 * turn (its last item for the loops after), records every repetition as 1 ms (s), the first as
 * 100 ms and the others as 1 ms (o: one outlier), or 1 ms and 2 ms in turn (v: varying), so that
 * tests of how variation is judged and reported do not depend on this machine's noise. A non-OK
 * status from fn stops the loop and is returned; a stop request (bench_stop_signal, signals.h)
 * stops it before the next run with ATTN_EFAIL, nothing kept: the caller abandons the point. */
attn_status bench_time_loop(const bench_timing_cfg *cfg, attn_status (*fn)(void *ctx), void *ctx,
                            double **samples_s, int64_t *n);

/* Optional hooks of the loop (NULL members: none). decide: every decision to run fn once more
 * goes through it (a collective kind's ranks follow rank 0's clock: bench_coll_decide). after:
 * called after each timed run, outside its timed interval (a kind's own measurements). backend:
 * the runs are timed on its clock, each ending when its sync returns (NULL: the CPU's). */
typedef struct bench_loop_hooks {
    bool (*decide)(bool go);
    void (*after)(void *ctx);
    const attn_backend *backend;
} bench_loop_hooks;
attn_status bench_time_loop_hooked(const bench_timing_cfg *cfg, attn_status (*fn)(void *ctx),
                                   void *ctx, const bench_loop_hooks *hooks, double **samples_s,
                                   int64_t *n);

#endif
