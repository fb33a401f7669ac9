/*
 * compare.h — `bench compare`: the points of two runs matched by their settings, the ratio of
 * their median times with a bootstrap confidence interval from the stored repetitions, and the
 * comparison figure.
 *
 * The ratio of point p is median(B's repetitions) / median(A's repetitions): below 1, B is
 * faster. Its 95 % interval is a percentile bootstrap: BENCH_BOOT_RESAMPLES times, draw A's and
 * B's repetitions again with replacement (as many as each has), take the ratio of the two medians;
 * the 2.5th and 97.5th percentiles of these ratios bound the interval. The generator is seeded
 * with a fixed seed (and the point's number), so the same files give the same intervals. A change
 * is significant when the interval excludes 1. With fewer than BENCH_BOOT_MIN_SAMPLES repetitions
 * on either side there is no interval (and no verdict). A side with more than
 * BENCH_BOOT_MAX_SAMPLES repetitions (a very fast point timed for --min-time) is bootstrapped
 * from that many evenly spaced order statistics of its repetitions: bounded time, and an
 * interval only wider than the full bootstrap's.
 *
 * Room report/: includes store/'s and measure/'s headers, never cli/.
 */
#ifndef BENCH_COMPARE_H
#define BENCH_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "gnuplot.h"
#include "results.h"
#include "series.h"

enum { BENCH_BOOT_RESAMPLES = 4000, BENCH_BOOT_MIN_SAMPLES = 3, BENCH_BOOT_MAX_SAMPLES = 2000 };
#define BENCH_BOOT_SEED 20261123u

typedef struct bench_ratio {
    double ratio;  /* median(b) / median(a) */
    double lo, hi; /* its 95 % interval; NaN without one */
    int change;    /* -1: significantly lower (B faster), +1: higher (B slower), 0: neither */
} bench_ratio;

/* The ratio of the medians of b[0..nb) and a[0..na) (times > 0) and its bootstrap interval drawn
 * with stream `stream` of BENCH_BOOT_SEED. log_draws (NULL, or BENCH_BOOT_RESAMPLES entries)
 * receives ln(ratio) of every resample (all ln(ratio) when there is no interval), for intervals of
 * a summary over points. ATTN_EINVAL when a side has no sample, ATTN_EFAIL out of memory. */
attn_status bench_ratio_of_medians(const double *a, int64_t na, const double *b, int64_t nb,
                                   uint64_t stream, bench_ratio *out, double *log_draws);

/* The 2.5th and 97.5th percentiles of v[0..n) (v is sorted in place). */
void bench_interval95(double *v, int64_t n, double *lo, double *hi);

/* The points of run a matched to those of run b: equal kind, params (as series.h normalizes
 * them), dataset, dataset_params, mode, batch, heads, kv_heads, q_len, kv_len, head_dim, causal,
 * pass, threads, kernel set (isa) and dtype. Threads are left out (threads_compared) when every
 * point of a has one thread count and every point of b another: the runs then compare thread
 * counts; the kernel set likewise (isa_compared: a run on avx2 against one on avx512), and the
 * dtype (dtype_compared: an f32 run against a bf16 one). The pass is always matched: a forward
 * and a backward are different work. A setting measured several times in a run is matched in
 * order (the k-th in a with the k-th in b). */
typedef struct bench_match {
    int64_t *b_of_a; /* per point of a: its point in b, or -1 */
    int64_t *a_of_b; /* per point of b: its point in a, or -1 */
    int64_t matched;
    bool threads_compared;
    bool isa_compared;
    bool dtype_compared;
} bench_match;

attn_status bench_compare_match(const bench_run_data *a, const bench_run_data *b, bench_match *m);
void bench_match_free(bench_match *m);

/* The repetitions of point point_id of run run_id among samples[0..n), which are sorted by
 * bench_samples_sort: *first (index) and *count (0: none). */
void bench_samples_sort(bench_sample *samples, int64_t n);
void bench_samples_of(const bench_sample *samples, int64_t n, int64_t run_id, int64_t point_id,
                      int64_t *first, int64_t *count);

/* One row of the comparison figure. */
typedef struct bench_compare_row {
    char label[160];
    bench_ratio r;
} bench_compare_row;

/* Draw rows[0..n) as a figure (format by dest's extension: .png, .svg, .pdf): one line per
 * point, its ratio B/A as a dot on a log axis with its interval as a bar, significant changes in
 * colour, 1 marked. title and subtitle (the two runs). ATTN_EINVAL: bad extension or no rows;
 * ATTN_EFAIL: gnuplot missing or failing (dest is left as it was). */
attn_status bench_compare_plot(const bench_compare_row *rows, int64_t n, const char *title,
                               const char *subtitle, const char *dest, char *msg, size_t msg_len);

#endif
