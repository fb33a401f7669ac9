/* test_stats.c — summary statistics (against values numpy gives) and the timed loop's rules. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "finite.h"
#include "stats.h"

Test(stats, known_values)
{
    double x[20];
    for (int k = 0; k < 20; k++) x[k] = 20 - k; /* 20 .. 1, unsorted on purpose */
    bench_stats s = bench_stats_of(x, 20);
    cr_expect_eq(s.n, 20);
    cr_expect_float_eq(s.median, 10.5, 1e-12);
    cr_expect_float_eq(s.p95, 19.05, 1e-12); /* numpy.percentile(range(1, 21), 95) */
    cr_expect_float_eq(s.min, 1, 1e-12);
    cr_expect_float_eq(s.max, 20, 1e-12);
    cr_expect_float_eq(s.mean, 10.5, 1e-12);
    cr_expect_float_eq(s.stddev, 5.916079783099616, 1e-12); /* sample stddev, ddof=1 */
    cr_expect_float_eq(s.cv, 5.916079783099616 / 10.5, 1e-12);
    cr_expect_eq(x[0], 20, "input must not be reordered");
}

Test(stats, odd_count_single_and_empty)
{
    double x[3] = {3, 1, 2};
    bench_stats s = bench_stats_of(x, 3);
    cr_expect_eq(s.median, 2);
    cr_expect_float_eq(s.p95, 2.9, 1e-12);
    s = bench_stats_of(x, 1);
    cr_expect_eq(s.median, 3);
    /* one repetition measures no variation: not 0 (a steady point), NaN (not measured) */
    cr_expect(isnan(s.stddev) && isnan(s.cv), "stddev %g, cv %g", s.stddev, s.cv);
    s = bench_stats_of(x, 0);
    cr_expect(isnan(s.median) && isnan(s.stddev));
}

/* The spread that judges variation: one outlier, however large, does not set it (the CV it
 * sets); a quarter of slow repetitions does; too few repetitions are not judged. */
Test(stats, relative_iqr_is_not_set_by_one_outlier)
{
    const double outlier[5] = {1, 1.01, 100, 0.99, 1.02};
    cr_expect_gt(bench_stats_of(outlier, 5).cv, 1, "the CV is set by the outlier");
    cr_expect_float_eq(bench_relative_iqr(outlier, 5), 0.02 / 1.01, 1e-12); /* (1.02 - 1) / 1.01 */
    cr_expect(!bench_timings_vary(outlier, 5));
    const double low[6] = {0.001, 1, 1.01, 1.02, 0.99, 1.0}; /* a low one likewise */
    cr_expect(!bench_timings_vary(low, 6));
    const double two_speeds[6] = {1, 2, 1, 2, 1, 2};
    cr_expect_float_eq(bench_relative_iqr(two_speeds, 6), 1 / 1.5, 1e-12);
    cr_expect(bench_timings_vary(two_speeds, 6));
    const double few[4] = {1, 2, 1, 2};
    cr_expect(isnan(bench_relative_iqr(few, 4)) && !bench_timings_vary(few, 4),
              "under BENCH_SPREAD_MIN_REPS repetitions: not judged");
    cr_expect(isnan(bench_relative_iqr(few, 1)) && !bench_timings_vary(few, 0));
}

static int calls;
static attn_status count_call(void *ctx)
{
    (void)ctx;
    calls++;
    return ATTN_OK;
}

static double call_start_s[4096]; /* when each call of sleep_1ms began */

static attn_status sleep_1ms(void *ctx)
{
    (void)ctx;
    if (calls < 4096) call_start_s[calls] = bench_now_s();
    calls++;
    double t0 = bench_now_s();
    while (bench_now_s() - t0 < 1e-3) {}
    return ATTN_OK;
}

static attn_status fail_third(void *ctx)
{
    (void)ctx;
    return ++calls == 3 ? ATTN_EFAIL : ATTN_OK;
}

Test(stats, time_loop_runs_warmup_then_min_reps)
{
    bench_timing_cfg cfg = {.warmup = 2, .min_reps = 7, .min_time_s = 0, .max_reps = 1000};
    double *s = NULL;
    int64_t n = 0;
    calls = 0;
    cr_assert_eq(bench_time_loop(&cfg, count_call, NULL, &s, &n), ATTN_OK);
    cr_expect_eq(n, 7);
    cr_expect_eq(calls, 9);
    for (int64_t k = 0; k < n; k++) cr_expect_geq(s[k], 0);
    free(s);
}

Test(stats, time_loop_runs_until_min_time_and_keeps_every_sample)
{
    bench_timing_cfg cfg = {.warmup = 0, .min_reps = 1, .min_time_s = 0.02, .max_reps = 1000};
    double *s = NULL, total = 0;
    int64_t n = 0;
    calls = 0;
    cr_assert_eq(bench_time_loop(&cfg, sleep_1ms, NULL, &s, &n), ATTN_OK);
    for (int64_t k = 0; k < n; k++) total += s[k];
    cr_expect_geq(total, 0.02, "stopped after %g s", total);
    cr_expect_eq(n, calls);
    cr_expect_geq(n, 2);
    free(s);
    cfg.max_reps = 3; /* the cap wins over min-time */
    cr_assert_eq(bench_time_loop(&cfg, sleep_1ms, NULL, &s, &n), ATTN_OK);
    cr_expect_eq(n, 3);
    free(s);
}

Test(stats, time_loop_warms_up_for_a_minimum_time)
{
    bench_timing_cfg cfg = {.warmup = 1, .warmup_time_s = 0.01, .min_reps = 2, .max_reps = 10};
    double *s = NULL;
    int64_t n = 0;
    calls = 0;
    const double start = bench_now_s();
    cr_assert_eq(bench_time_loop(&cfg, sleep_1ms, NULL, &s, &n), ATTN_OK);
    cr_expect_eq(n, 2);
    /* Judged by the clock, not by a call count (a loaded machine stretches each call): the
     * warm-up lasted the minimum time, and its last run began before the minimum was reached
     * (with 5 ms for a preemption between the loop's clock check and the call). */
    const int warm = calls - (int)n;
    cr_assert_geq(warm, 2, "a 10 ms warm-up of 1 ms runs made %d runs", warm);
    cr_expect_geq(call_start_s[warm] - start, 0.01, "timed runs began %.4f s after the start",
                  call_start_s[warm] - start);
    cr_expect_lt(call_start_s[warm - 1] - start, 0.015, "a warm-up run began after 10 ms (%.4f s)",
                 call_start_s[warm - 1] - start);
    free(s);
    cfg.warmup = 0; /* no warm-up at all, whatever the time */
    calls = 0;
    cr_assert_eq(bench_time_loop(&cfg, sleep_1ms, NULL, &s, &n), ATTN_OK);
    cr_expect_eq(calls, 2);
    free(s);
}

Test(stats, time_loop_stops_on_error)
{
    bench_timing_cfg cfg = {.warmup = 1, .min_reps = 10, .min_time_s = 0, .max_reps = 1000};
    double *s = NULL;
    int64_t n = 0;
    calls = 0;
    cr_expect_eq(bench_time_loop(&cfg, fail_third, NULL, &s, &n), ATTN_EFAIL);
    cr_expect_eq(calls, 3);
    cr_expect_null(s);
}

/* The non-finite scan finds the first NaN/Inf wherever it sits (block edges included), names its
 * position, and passes finite data, extremes included. */
Test(stats, nonfinite_scan)
{
    enum { N = 3 * 4096 + 7 };
    float *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = (float)(i % 17) - 8.0f;
    x[5] = FLT_MAX, x[6] = -FLT_MAX, x[7] = FLT_MIN / 4; /* finite: max, min, subnormal */
    cr_expect_eq(bench_find_nonfinite(x, N), -1);
    const int64_t at[] = {0, 4095, 4096, 8191, N - 1};
    const float bad[] = {NAN, INFINITY, -INFINITY, -NAN, NAN};
    for (size_t c = 0; c < sizeof at / sizeof at[0]; c++) {
        const float keep = x[at[c]];
        x[at[c]] = bad[c];
        cr_expect_eq(bench_find_nonfinite(x, N), at[c], "case %zu", c);
        x[at[c]] = keep;
    }
    x[9000] = NAN, x[10000] = INFINITY; /* the first one is reported */
    cr_expect_eq(bench_find_nonfinite(x, N), 9000);
    const int64_t dims[4] = {1, 3, 4096, 1}; /* 9000 = [0, 2, 808, 0] */
    char msg[ATTN_MSG_LEN];
    cr_expect_eq(bench_check_finite(x, dims, "q", "f.h5", 10, " (hint)", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect_str_eq(msg, "f.h5: q[0,2,818,0] is NaN (hint)");
    x[9000] = 1;
    cr_expect_eq(bench_check_finite(x, dims, "k", NULL, 0, NULL, msg, sizeof msg), ATTN_EINVAL);
    cr_expect_str_eq(msg, "k[0,2,1808,0] is +Inf");
    free(x);
}
