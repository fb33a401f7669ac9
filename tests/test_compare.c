/*
 * test_compare.c — `bench compare`: the ratio of medians and its bootstrap interval on cases whose
 * answer is certain (a 2x slowdown with 1 % noise, identical samples, too few repetitions), the
 * matching of points by their settings (duplicates in order, unmatched ones, the thread-count
 * rule), and the command on synthetic results files: self-compare finds nothing, a known
 * slowdown and speed-up are marked, --fail-above exits 1 only above its threshold, unmatched
 * points are listed, --plot draws.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "rng.h"
#include "stats.h"
#include "test_run.h"

/* n times around t: t·(1 + noise·N(0,1)), seeded. */
static void noisy(double *x, int n, double t, double noise, uint64_t seed)
{
    ds_rng r = ds_rng_stream(seed, 3);
    for (int i = 0; i < n; i++) x[i] = t * (1 + noise * ds_rng_normal(&r));
}

Test(compare, a_2x_slowdown_is_found_and_bounded)
{
    double a[20], b[20];
    noisy(a, 20, 1e-3, 0.01, 1);
    noisy(b, 20, 2e-3, 0.01, 2);
    bench_ratio r;
    cr_assert_eq(bench_ratio_of_medians(a, 20, b, 20, 0, &r, NULL), ATTN_OK);
    cr_expect(fabs(r.ratio - 2) < 0.02, "ratio %g", r.ratio);
    cr_expect(r.lo > 1.95 && r.lo <= r.ratio && r.ratio <= r.hi && r.hi < 2.05, "[%g, %g]", r.lo,
              r.hi);
    cr_expect_eq(r.change, 1);
    cr_assert_eq(bench_ratio_of_medians(b, 20, a, 20, 0, &r, NULL), ATTN_OK);
    cr_expect(fabs(r.ratio - 0.5) < 0.005 && r.hi < 1, "ratio %g [%g, %g]", r.ratio, r.lo, r.hi);
    cr_expect_eq(r.change, -1);
}

Test(compare, identical_samples_give_ratio_1_not_significant)
{
    for (int n = 3; n <= 40; n += 6) {
        for (uint64_t seed = 1; seed <= 5; seed++) {
            double a[40];
            noisy(a, n, 1e-3, 0.3, seed); /* very noisy: wide intervals, still around 1 */
            bench_ratio r;
            double draws[BENCH_BOOT_RESAMPLES];
            cr_assert_eq(bench_ratio_of_medians(a, n, a, n, seed, &r, draws), ATTN_OK);
            cr_expect_eq(r.ratio, 1.0, "n %d: ratio %.17g", n, r.ratio);
            cr_expect(r.lo <= 1 && r.hi >= 1 && r.change == 0, "n %d seed %llu: [%g, %g]", n,
                      (unsigned long long)seed, r.lo, r.hi);
            cr_expect(r.lo < r.hi, "n %d: a degenerate interval [%g, %g]", n, r.lo, r.hi);
        }
    }
}

Test(compare, same_inputs_same_interval_and_median_definition)
{
    const double a[] = {4, 1, 3, 2}, b[] = {5, 30, 10, 3, 1000};
    bench_ratio r1, r2;
    cr_assert_eq(bench_ratio_of_medians(a, 4, b, 5, 7, &r1, NULL), ATTN_OK);
    cr_assert_eq(bench_ratio_of_medians(a, 4, b, 5, 7, &r2, NULL), ATTN_OK);
    cr_expect_eq(r1.ratio, 10 / 2.5, "median of an even count is the mean of the middle two");
    cr_expect(r1.lo == r2.lo && r1.hi == r2.hi, "the seed is fixed");
}

Test(compare, too_few_repetitions_have_no_interval)
{
    const double a[] = {1, 1.1}, b[] = {3, 3.1, 2.9};
    bench_ratio r;
    cr_assert_eq(bench_ratio_of_medians(a, 2, b, 3, 0, &r, NULL), ATTN_OK);
    cr_expect(fabs(r.ratio - 3 / 1.05) < 1e-12);
    cr_expect(isnan(r.lo) && isnan(r.hi) && r.change == 0);
    cr_expect_eq(bench_ratio_of_medians(a, 0, b, 3, 0, &r, NULL), ATTN_EINVAL);
}

Test(compare, many_repetitions_are_thinned_and_still_decide)
{
    enum { N = 30000 }; /* a very fast point timed for --min-time */
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    noisy(a, N, 1e-5, 0.05, 4);
    noisy(b, N, 1.02e-5, 0.05, 5);
    bench_ratio same, up;
    cr_assert_eq(bench_ratio_of_medians(a, N, a, N, 0, &same, NULL), ATTN_OK);
    cr_expect(same.ratio == 1 && same.change == 0 && same.lo < 1 && same.hi > 1);
    cr_assert_eq(bench_ratio_of_medians(a, N, b, N, 0, &up, NULL), ATTN_OK);
    cr_expect(fabs(up.ratio - 1.02) < 0.003, "ratio %g", up.ratio);
    /* from 2000 order statistics: a 2 % change under 5 % noise is still seen */
    cr_expect(up.change == 1 && up.lo > 1.005 && up.hi < 1.04, "[%g, %g]", up.lo, up.hi);
    free(a);
    free(b);
}

Test(compare, interval95_is_the_2_5th_and_97_5th_percentile)
{
    double v[101];
    for (int i = 0; i < 101; i++) v[i] = 100 - i; /* sorted by the call */
    double lo, hi;
    bench_interval95(v, 101, &lo, &hi);
    cr_expect(fabs(lo - 2.5) < 1e-12 && fabs(hi - 97.5) < 1e-12, "[%g, %g]", lo, hi);
}

/* ---- matching ---- */

typedef struct mp {
    const char *kind;
    int64_t n;
    int threads;
    const char *pass, *dtype; /* NULL: forward, f32 */
} mp;

static void fill(bench_run_data *rd, const mp *p, int n)
{
    memset(rd, 0, sizeof *rd);
    rd->pts = calloc((size_t)n, sizeof *rd->pts);
    rd->params = calloc((size_t)n, sizeof *rd->params);
    rd->n = n;
    for (int i = 0; i < n; i++) {
        bench_point *pt = &rd->pts[i];
        snprintf(pt->kind, sizeof pt->kind, "%s", p[i].kind);
        snprintf(pt->dataset, sizeof pt->dataset, "gaussian");
        snprintf(pt->mode, sizeof pt->mode, "prefill");
        pt->batch = 1, pt->heads = 8, pt->kv_heads = 8, pt->head_dim = 64;
        pt->q_len = pt->kv_len = p[i].n;
        pt->threads = p[i].threads;
        pt->point_id = i;
        snprintf(pt->pass, sizeof pt->pass, "%s", p[i].pass ? p[i].pass : "forward");
        snprintf(pt->dtype, sizeof pt->dtype, "%s", p[i].dtype ? p[i].dtype : "f32");
        snprintf(rd->params[i], sizeof rd->params[i], "w=%d", strcmp(p[i].kind, "win") ? 0 : 64);
    }
}

Test(compare, points_match_by_settings_in_order)
{
    const mp a[] = {{"full", 1024, 1}, {"full", 2048, 1}, {"win", 1024, 1}, {"full", 1024, 1}};
    const mp b[] = {{"win", 1024, 1}, {"full", 1024, 1}, {"full", 4096, 1}, {"full", 1024, 1}};
    bench_run_data ra, rb;
    fill(&ra, a, 4);
    fill(&rb, b, 4);
    bench_match m;
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    const int64_t b_of_a[] = {1, -1, 0, 3}, a_of_b[] = {2, 0, -1, 3};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(m.b_of_a[i], b_of_a[i], "a[%d] -> %lld", i, (long long)m.b_of_a[i]);
        cr_expect_eq(m.a_of_b[i], a_of_b[i], "b[%d] -> %lld", i, (long long)m.a_of_b[i]);
    }
    cr_expect_eq(m.matched, 3);
    cr_expect(!m.threads_compared);
    bench_match_free(&m);
    /* one more setting differs: no match */
    rb.pts[1].causal = 1, rb.pts[3].head_dim = 128;
    snprintf(rb.params[0], sizeof rb.params[0], "w=128");
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect_eq(m.matched, 0);
    bench_match_free(&m);
    bench_run_data_free(&ra);
    bench_run_data_free(&rb);
}

Test(compare, threads_are_compared_between_runs_of_one_thread_count_each)
{
    const mp a[] = {{"full", 1024, 1}, {"full", 2048, 1}};
    const mp b2[] = {{"full", 2048, 2}, {"full", 1024, 2}};
    const mp mixed[] = {{"full", 2048, 2}, {"full", 1024, 1}};
    bench_run_data ra, rb;
    fill(&ra, a, 2);
    fill(&rb, b2, 2);
    bench_match m;
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect(m.threads_compared);
    cr_expect(m.matched == 2 && m.b_of_a[0] == 1 && m.b_of_a[1] == 0);
    bench_match_free(&m);
    bench_run_data_free(&rb);
    fill(&rb, mixed, 2); /* not one thread count: threads are matched */
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect(!m.threads_compared);
    cr_expect(m.matched == 1 && m.b_of_a[0] == 1 && m.b_of_a[1] == -1);
    bench_match_free(&m);
    bench_run_data_free(&ra);
    bench_run_data_free(&rb);
}

/* A forward is never paired with a backward, nor f32 with bf16 within runs that measure both;
 * runs of one dtype each compare the dtypes (said by dtype_compared). */
Test(compare, pass_and_dtype_are_matched_and_whole_run_dtypes_compared)
{
    const mp a[] = {{"full", 1024, 1, NULL, NULL}, {"full", 1024, 1, NULL, "bf16"}};
    const mp b[] = {{"full", 1024, 1, "backward", NULL},
                    {"full", 1024, 1, NULL, "bf16"},
                    {"full", 1024, 1, NULL, NULL}};
    bench_run_data ra, rb;
    fill(&ra, a, 2);
    fill(&rb, b, 3);
    bench_match m;
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect(m.matched == 2 && m.b_of_a[0] == 2 && m.b_of_a[1] == 1 && m.a_of_b[0] == -1,
              "a[0] -> %lld, a[1] -> %lld", (long long)m.b_of_a[0], (long long)m.b_of_a[1]);
    cr_expect(!m.dtype_compared);
    bench_match_free(&m);
    bench_run_data_free(&ra);
    bench_run_data_free(&rb);

    const mp fwd[] = {{"full", 1024, 1, NULL, NULL}}, bwd[] = {{"full", 1024, 1, "backward", NULL}};
    fill(&ra, fwd, 1);
    fill(&rb, bwd, 1);
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect_eq(m.matched, 0, "a forward run and a backward run have nothing to compare");
    bench_match_free(&m);
    bench_run_data_free(&rb);

    const mp half[] = {{"full", 1024, 1, NULL, "bf16"}};
    fill(&rb, half, 1);
    cr_assert_eq(bench_compare_match(&ra, &rb, &m), ATTN_OK);
    cr_expect(m.dtype_compared && m.matched == 1);
    bench_match_free(&m);
    bench_run_data_free(&ra);
    bench_run_data_free(&rb);
}

Test(compare, samples_of_a_point)
{
    bench_sample s[] = {{2, 5, 1, 0.5}, {1, 0, 0, 1}, {2, 5, 0, 0.25}, {1, 1, 0, 2}, {2, 4, 0, 3}};
    bench_samples_sort(s, 5);
    int64_t first, count;
    bench_samples_of(s, 5, 2, 5, &first, &count);
    cr_expect(count == 2 && s[first].seconds == 0.25 && s[first + 1].seconds == 0.5);
    bench_samples_of(s, 5, 1, 1, &first, &count);
    cr_expect(count == 1 && s[first].seconds == 2);
    bench_samples_of(s, 5, 1, 4, &first, &count);
    cr_expect_eq(count, 0);
}

/* ---- the command on synthetic files ---- */

static char out_text[1 << 16], err_text[1 << 14];
#define bench(...) tu_bench(out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

/* A results file of one run (pass: NULL for forward): kinds ka at n = 256, 512, 1024 with 12
 * repetitions each around scale[i] ms (1 % noise; scale 1 gives the same samples in every file),
 * and extra (n = 2048) when asked. */
static void write_file_of(const char *path, const double scale[3], bool extra, const char *pass)
{
    bench_store *st;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_run run = {.threads = 2, .blas_threads = 1, .seed = 1, .sgemm_gflops = 90};
    snprintf(run.started_at, sizeof run.started_at, "2026-11-23T00:00:00Z");
    snprintf(run.git_commit, sizeof run.git_commit, "synthetic");
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    for (int i = 0; i < 3 + extra; i++) {
        bench_point pt = {.batch = 1, .heads = 4, .kv_heads = 4, .head_dim = 64, .threads = 2};
        snprintf(pt.kind, sizeof pt.kind, "ka");
        snprintf(pt.dataset, sizeof pt.dataset, "gaussian");
        snprintf(pt.mode, sizeof pt.mode, "prefill");
        snprintf(pt.status, sizeof pt.status, "ok");
        if (pass) snprintf(pt.pass, sizeof pt.pass, "%s", pass);
        pt.q_len = pt.kv_len = 256 << i;
        double t[12];
        noisy(t, 12, 1e-3 * (i < 3 ? scale[i] : 1) * (double)(1 << i), 0.01, 10 + (uint64_t)i);
        bench_stats s = bench_stats_of(t, 12);
        pt.reps = 12, pt.time_median_s = s.median;
        cr_assert_eq(bench_store_add_point(st, &pt, t, 12, msg, sizeof msg), ATTN_OK, "%s", msg);
    }
    bench_store_close(st);
}

static void write_file(const char *path, const double scale[3], bool extra)
{
    write_file_of(path, scale, extra, NULL);
}

Test(compare_cli, self_slower_faster_unmatched_and_fail_above, .timeout = 120)
{
    char dir[] = "/tmp/attnbench-compare-XXXXXX", a[300], b[300], svg[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.h5", dir);
    snprintf(b, sizeof b, "%s/b.h5", dir);
    snprintf(svg, sizeof svg, "%s/ratio.svg", dir);
    write_file(a, (const double[]){1, 1, 1}, false);
    write_file(b, (const double[]){2, 1, 0.8}, true);

    cr_expect_eq(bench("compare %s %s", a, a), 0, "%s", err_text);
    cr_expect(strstr(out_text, "0 faster, 0 slower, 3 without significant change") != NULL, "%s",
              out_text);
    cr_expect(strstr(out_text, "*  ") == NULL && strstr(out_text, "faster *") == NULL, "%s",
              out_text);

    cr_expect_eq(bench("compare %s:1 %s --plot %s", a, b, svg), 0, "%s", err_text);
    cr_expect(strstr(out_text, "slower * (+") != NULL && strstr(out_text, "faster * (-") != NULL,
              "%s", out_text);
    cr_expect(strstr(out_text, "1 faster, 1 slower, 1 without significant change") != NULL, "%s",
              out_text);
    cr_expect(strstr(out_text, "only in B (1 point, not compared): ka n=2K") != NULL, "%s",
              out_text);
    cr_expect(strstr(out_text, "geometric mean B/A 1.170") != NULL, "(2 x 1 x 0.8)^(1/3): %s",
              out_text);
    struct stat sb;
    cr_expect(stat(svg, &sb) == 0 && sb.st_size > 1000, "no figure at %s", svg);

    cr_expect_eq(bench("compare %s %s --fail-above 50", a, b), 1, "2x is above 50 %%");
    cr_expect(strstr(err_text, "1 point is significantly slower in B by more than 50 %") != NULL,
              "%s", err_text);
    cr_expect_eq(bench("compare %s %s --fail-above 150", a, b), 0, "%s", err_text);
    cr_expect_eq(bench("compare %s %s --fail-above 20", b, a), 1, "1/0.8 is 25 %% slower");
    cr_expect_eq(bench("compare %s %s --fail-above 30", b, a), 0, "%s", err_text);

    /* a backward run against a forward one: refused, saying what differs */
    char back[300];
    snprintf(back, sizeof back, "%s/back.h5", dir);
    write_file_of(back, (const double[]){100, 100, 100}, false, "backward");
    cr_expect_eq(bench("compare %s %s --fail-above 5", a, back), 2, "%s", out_text);
    cr_expect(strstr(err_text, "nothing to compare") && strstr(err_text, "A: pass forward") &&
                  strstr(err_text, "B: pass backward"),
              "%s", err_text);
    cr_expect_eq(unlink(back), 0);

    cr_expect_eq(bench("compare %s:2 %s", a, b), 2);
    cr_expect(strstr(err_text, "has no run 2") != NULL, "%s", err_text);
    cr_expect_eq(bench("compare %s", a), 2);
    cr_expect_eq(bench("compare %s %s --plot %s/x.gif", a, b, dir), 2, "%s", err_text);
    const char *made[] = {a, b, svg};
    for (int i = 0; i < 3; i++) cr_expect_eq(unlink(made[i]), 0, "%s", made[i]);
    cr_expect_eq(rmdir(dir), 0, "%s holds more than the test made", dir);
}
