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
 * statistics (numpy's default). n == 0 gives NaNs; n == 1 gives stddev 0. */
bench_stats bench_stats_of(const double *x, int64_t n);

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
 * goes into *samples_s (malloc'd). A non-OK status from fn stops the loop and is returned; a stop
 * request (bench_stop_signal, signals.h) stops it before the next run with ATTN_EFAIL, nothing
 * kept: the caller abandons the point. */
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
