/* stats.c — median, min, max, p95, mean, stddev, CV of a set of samples, and their robust
 * spread (interquartile range over the median). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0 <= q <= 1) of sorted[0..n), linear interpolation. */
static double quantile_sorted(const double *sorted, int64_t n, double q)
{
    if (n <= 0) return NAN;
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

bench_stats bench_stats_of(const double *x, int64_t n)
{
    bench_stats st = {.n = n,
                      .median = NAN,
                      .min = NAN,
                      .max = NAN,
                      .p95 = NAN,
                      .mean = NAN,
                      .stddev = NAN,
                      .cv = NAN};
    if (n <= 0) return st;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return st;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    st.min = s[0];
    st.max = s[n - 1];
    st.median = quantile_sorted(s, n, 0.5);
    st.p95 = quantile_sorted(s, n, 0.95);
    double sum = 0;
    for (int64_t k = 0; k < n; k++) sum += s[k];
    st.mean = sum / (double)n;
    double ss = 0;
    for (int64_t k = 0; k < n; k++) ss += (s[k] - st.mean) * (s[k] - st.mean);
    st.stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
    st.cv = st.mean > 0 ? st.stddev / st.mean : NAN;
    free(s);
    return st;
}

double bench_relative_iqr(const double *x, int64_t n)
{
    if (n < BENCH_SPREAD_MIN_REPS) return NAN;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    const double median = quantile_sorted(s, n, 0.5);
    const double iqr = quantile_sorted(s, n, 0.75) - quantile_sorted(s, n, 0.25);
    free(s);
    return median > 0 ? iqr / median : NAN;
}

bool bench_timings_vary(const double *x, int64_t n)
{
    return bench_relative_iqr(x, n) > BENCH_SPREAD_LIMIT;
}
