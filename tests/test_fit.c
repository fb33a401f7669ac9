/*
 * test_fit.c — the arithmetic of `bench fit`: power-law fits recover known exponents from noisy
 * synthetic data and their 95 % intervals cover the truth about 95 % of the time (which needs
 * Student's t, not the normal 1.96, at few points); R², the interval and t quantiles against
 * hand-computed values; crossovers on synthetic curves; the /fits table of results files
 * (a run's fits replaced, other runs' kept, files without /fits read as none, a /fits written
 * before the dtype column read and rewritten with it).
 */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "fit.h"
#include "results.h"
#include "rng.h"

#define NEAR(a, b, tol)                                                                            \
    cr_expect(fabs((a) - (b)) <= (tol), "%s = %.12g, expected %.12g", #a, (a), (b))

Test(fit, student_t_quantiles_match_tables)
{
    const struct {
        double dof, t;
    } table[] = {
        {1, 12.7062047364},  {2, 4.30265272991},  {3, 3.18244630528},    {4, 2.77644510520},
        {10, 2.22813885196}, {30, 2.04227245630}, {1000, 1.96233908083}, {1e5, 1.95998770753},
    };
    for (size_t r = 0; r < sizeof table / sizeof table[0]; r++) {
        NEAR(bench_student_t_quantile(0.975, table[r].dof), table[r].t, 1e-8 * table[r].t);
        NEAR(bench_student_t_cdf(table[r].t, table[r].dof), 0.975, 1e-10);
    }
    NEAR(bench_student_t_quantile(0.5, 3), 0, 1e-12);
    NEAR(bench_student_t_quantile(0.025, 5), -2.57058183661, 1e-8);
    NEAR(bench_student_t_cdf(1, 1), 0.75, 1e-12); /* Cauchy: 1/2 + atan(1)/pi */
    cr_expect(isnan(bench_student_t_quantile(1, 3)) && isnan(bench_student_t_quantile(0.9, 0)));
}

Test(fit, least_squares_matches_hand_values)
{
    /* ln x = 0,1,2,3 and ln y = 1,3,4,7: Sxx = 5, Sxy = 9.5, slope 1.9, intercept 0.9,
     * residuals 0.1,0.2,-0.7,0.4: SSE 0.7, SST 18.75, R² = 1 - 0.7/18.75,
     * se = sqrt(0.35/5), CI = 1.9 ± t(0.975, 2)·se */
    const double x[] = {1, exp(1), exp(2), exp(3)};
    const double y[] = {exp(1), exp(3), exp(4), exp(7)};
    bench_fit f;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_fit_power_law(x, y, 4, &f, msg, sizeof msg), ATTN_OK, "%s", msg);
    NEAR(f.slope, 1.9, 1e-12);
    NEAR(f.intercept, 0.9, 1e-12);
    NEAR(f.r2, 1 - 0.7 / 18.75, 1e-12);
    NEAR(f.slope_se, sqrt(0.07), 1e-12);
    NEAR(f.slope_lo, 1.9 - 4.30265272991 * sqrt(0.07), 1e-8);
    NEAR(f.slope_hi, 1.9 + 4.30265272991 * sqrt(0.07), 1e-8);
    cr_expect_eq(f.n, 4);

    /* exact power law: slope exact, R² = 1, zero-width interval */
    const double xs[] = {256, 512, 1024, 4096};
    double ys[4];
    for (int i = 0; i < 4; i++) ys[i] = 3e-9 * pow(xs[i], 1.5);
    cr_assert_eq(bench_fit_power_law(xs, ys, 4, &f, msg, sizeof msg), ATTN_OK);
    NEAR(f.slope, 1.5, 1e-12);
    NEAR(f.r2, 1, 1e-12);
    NEAR(f.slope_hi - f.slope_lo, 0, 1e-6);
    NEAR(exp(f.intercept), 3e-9, 1e-18);

    /* two points: a line but no interval */
    cr_assert_eq(bench_fit_power_law(xs, ys, 2, &f, msg, sizeof msg), ATTN_OK);
    NEAR(f.slope, 1.5, 1e-12);
    cr_expect(isnan(f.slope_lo) && isnan(f.slope_hi) && isnan(f.slope_se));
}

Test(fit, bad_input_is_refused_with_a_message)
{
    const double x[] = {256, 512, 512}, y[] = {1, 2, 0}, same[] = {512, 512};
    bench_fit f;
    char msg[ATTN_MSG_LEN] = "";
    cr_expect_eq(bench_fit_power_law(x, y, 1, &f, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "2 points") != NULL, "%s", msg);
    cr_expect_eq(bench_fit_power_law(x, y, 3, &f, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "positive") != NULL, "%s", msg);
    cr_expect_eq(bench_fit_power_law(same, y, 2, &f, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "distinct") != NULL, "%s", msg);
    cr_expect(isnan(f.slope));
}

/* Fit y = c·n^k·exp(sigma·N(0,1)) at npts geometric n from 256, over `trials` seeds: every
 * slope within tol of k, and the number of 95 % intervals missing k. */
static int misses(double k, int npts, double sigma, int trials, double tol)
{
    int missed = 0;
    for (int t = 0; t < trials; t++) {
        ds_rng r = ds_rng_stream(1234 + (uint64_t)t, (uint64_t)(k * 10));
        double x[16], y[16];
        for (int i = 0; i < npts; i++) {
            x[i] = 256.0 * pow(2, i);
            y[i] = 2e-9 * pow(x[i], k) * exp(sigma * ds_rng_normal(&r));
        }
        bench_fit f;
        char msg[ATTN_MSG_LEN];
        cr_assert_eq(bench_fit_power_law(x, y, npts, &f, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_expect(fabs(f.slope - k) < tol, "k=%g trial %d: slope %g", k, t, f.slope);
        cr_expect(f.r2 > 0.9 && f.r2 <= 1, "k=%g trial %d: R² %g", k, t, f.r2);
        missed += !(f.slope_lo <= k && k <= f.slope_hi);
    }
    return missed;
}

Test(fit, recovers_known_exponents_and_the_interval_covers_them)
{
    const double ks[] = {1, 1.5, 2};
    for (int e = 0; e < 3; e++) {
        /* 8 points n = 256..32K with 5 % noise: within 0.05; 200 intervals miss ~10 times */
        int m = misses(ks[e], 8, 0.05, 200, 0.05);
        cr_expect(m >= 2 && m <= 20, "k=%g: %d of 200 intervals missed (expected ~10)", ks[e], m);
    }
    /* 4 points (2 degrees of freedom): t = 4.30, the normal's 1.96 would miss ~25 % */
    int m = misses(1.5, 4, 0.05, 400, 0.3);
    cr_expect(m >= 8 && m <= 34, "4 points: %d of 400 intervals missed (expected ~20)", m);
}

Test(fit, crossover_on_synthetic_curves)
{
    const double n[] = {16, 32, 64, 128, 256}, big[] = {64, 128, 256, 512, 1024};
    double full[5], lin[5], half[5], cubic[5], fullbig[5];
    for (int i = 0; i < 5; i++) {
        full[i] = n[i] * n[i];
        lin[i] = 100 * n[i];                /* faster than full above n = 100 */
        half[i] = 0.5 * full[i];            /* always faster */
        cubic[i] = n[i] * n[i] * n[i] / 50; /* faster only below n = 50 */
        fullbig[i] = big[i] * big[i];
    }
    bench_crossover c = bench_crossover_find(n, lin, 5, n, full, 5);
    cr_expect_eq(c.kind, BENCH_CROSS_ABOVE);
    NEAR(c.at, 100, 1e-9); /* exact: the ratio is a power law, linear in log-log */
    NEAR(c.ratio_at_max, 100.0 / 256, 1e-12);
    cr_expect_eq(c.common, 5);

    c = bench_crossover_find(n, half, 5, n, full, 5);
    cr_expect_eq(c.kind, BENCH_CROSS_ALWAYS);
    cr_expect(isnan(c.at));
    NEAR(c.ratio_at_max, 0.5, 1e-12);

    c = bench_crossover_find(n, full, 5, n, half, 5);
    cr_expect_eq(c.kind, BENCH_CROSS_NEVER);
    c = bench_crossover_find(n, full, 5, n, full, 5); /* equal is not faster */
    cr_expect_eq(c.kind, BENCH_CROSS_NEVER);

    c = bench_crossover_find(n, cubic, 5, n, full, 5);
    cr_expect_eq(c.kind, BENCH_CROSS_BELOW);
    NEAR(c.at, 50, 1e-9);

    /* only the shared n count (64, 128, 256), in any order */
    const double rev[] = {256, 128, 64, 32, 16};
    double revlin[5];
    for (int i = 0; i < 5; i++) revlin[i] = 100 * rev[i];
    c = bench_crossover_find(rev, revlin, 5, big, fullbig, 5);
    cr_expect_eq(c.common, 3);
    cr_expect_eq(c.kind, BENCH_CROSS_ABOVE);
    NEAR(c.at, 100, 1e-9);
    NEAR(c.max_x, 256, 0);

    c = bench_crossover_find(n, lin, 2, big + 3, fullbig + 3, 2); /* nothing in common */
    cr_expect_eq(c.kind, BENCH_CROSS_NONE);
    cr_expect(isnan(c.ratio_at_max));

    /* noise: the last sign change decides (between 256 and 512 here, ratios 1.1 -> 0.8) */
    const double xs[] = {128, 256, 512, 1024, 2048}, one[] = {1, 1, 1, 1, 1};
    const double ratios[] = {1.2, 1.1, 0.8, 0.9, 0.7}, flip[] = {1.2, 0.9, 1.1, 0.8, 0.7};
    c = bench_crossover_find(xs, ratios, 5, xs, one, 5);
    cr_expect_eq(c.kind, BENCH_CROSS_ABOVE);
    NEAR(c.at, exp(log(256) + log(1.1) / (log(1.1) - log(0.8)) * log(2)), 1e-9);
    c = bench_crossover_find(xs, flip, 5, xs, one, 5);
    cr_expect(c.kind == BENCH_CROSS_ABOVE && c.at > 512 && c.at < 1024, "at %g", c.at);
}

static bench_fit_row fit_row(const char *kind, const char *metric, double exponent)
{
    bench_fit_row r = {0};
    snprintf(r.kind, sizeof r.kind, "%s", kind);
    snprintf(r.params, sizeof r.params, "stride=auto,block=64");
    snprintf(r.dataset, sizeof r.dataset, "gaussian");
    snprintf(r.mode, sizeof r.mode, "prefill");
    snprintf(r.metric, sizeof r.metric, "%s", metric);
    r.batch = 1, r.heads = 8, r.kv_heads = 2, r.head_dim = 64, r.causal = 1;
    r.points = 6, r.n_min = 256, r.n_max = 8192;
    r.exponent = exponent, r.exponent_lo = exponent - 0.1, r.exponent_hi = exponent + 0.1;
    r.r2 = 0.999, r.prefactor = 1e-9, r.theory = 2, r.crossover_n = NAN, r.ratio_at_max = 0.25;
    return r;
}

Test(fit, fits_table_replaces_one_runs_rows)
{
    char dir[] = "/tmp/attnbench-fit-XXXXXX", path[256], msg[ATTN_MSG_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.h5", dir);
    bench_store *st;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    for (int r = 0; r < 2; r++) {
        bench_run run = {0};
        cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    }
    bench_store_close(st);

    bench_fit_row *rows;
    int64_t n = -1;
    cr_assert_eq(bench_store_read_fits(path, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(n, 0, "a file without /fits has no fits");

    bench_fit_row one[2] = {fit_row("full", "time", 2.01), fit_row("full", "rss_added", 0.97)};
    bench_fit_row two[1] = {fit_row("window", "time", 1.02)};
    cr_assert_eq(bench_store_write_fits(path, 1, one, 2, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_write_fits(path, 2, two, 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_fit_row again = fit_row("strided", "time", 1.49);
    cr_assert_eq(bench_store_write_fits(path, 1, &again, 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_read_fits(path, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 2);
    cr_expect_eq(rows[0].run_id, 2);
    cr_expect_str_eq(rows[0].kind, "window");
    cr_expect_eq(rows[1].run_id, 1);
    cr_expect_str_eq(rows[1].kind, "strided");
    cr_expect_str_eq(rows[1].params, "stride=auto,block=64");
    cr_expect_str_eq(rows[1].metric, "time");
    cr_expect_eq(rows[1].exponent, 1.49);
    cr_expect_eq(rows[1].kv_heads, 2);
    cr_expect(isnan(rows[1].crossover_n));
    free(rows);

    /* no such run; not a results file */
    cr_expect_eq(bench_store_write_fits(path, 3, &again, 1, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "no run 3") != NULL, "%s", msg);
    char notes[256];
    snprintf(notes, sizeof notes, "%s/notes.txt", dir);
    FILE *f = fopen(notes, "w");
    fputs("notes\n", f);
    fclose(f);
    cr_expect_eq(bench_store_write_fits(notes, 1, &again, 1, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "not an attnbench results file") && !strstr(msg, "--out"), "%s", msg);
    cr_expect_eq(bench_store_read_fits(notes, &rows, &n, msg, sizeof msg), ATTN_EINVAL);
    unlink(notes);
    unlink(path);
    rmdir(dir);
}

/* A /fits of an older build, without the dtype column: read (dtype empty), and rewritten in the
 * current layout by the next fit, its other runs' rows kept. */
Test(fit, a_fits_table_without_the_dtype_column_is_read_and_rewritten_with_it)
{
    char dir[] = "/tmp/attnbench-fit-XXXXXX", path[256], msg[ATTN_MSG_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/r.h5", dir);
    bench_store *st;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    for (int r = 0; r < 2; r++) {
        bench_run run = {0};
        cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    }
    bench_store_close(st);

    struct old_row {
        int64_t run_id;
        char kind[32];
        char metric[16];
        double exponent;
    } old = {2, "window", "time", 1.02};
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(file, 0);
    hid_t s32 = H5Tcopy(H5T_C_S1), s16 = H5Tcopy(H5T_C_S1);
    H5Tset_size(s32, 32), H5Tset_cset(s32, H5T_CSET_UTF8); /* as this store writes strings */
    H5Tset_size(s16, 16), H5Tset_cset(s16, H5T_CSET_UTF8);
    hid_t type = H5Tcreate(H5T_COMPOUND, sizeof old);
    H5Tinsert(type, "run_id", HOFFSET(struct old_row, run_id), H5T_NATIVE_INT64);
    H5Tinsert(type, "kind", HOFFSET(struct old_row, kind), s32);
    H5Tinsert(type, "metric", HOFFSET(struct old_row, metric), s16);
    H5Tinsert(type, "exponent", HOFFSET(struct old_row, exponent), H5T_NATIVE_DOUBLE);
    const hsize_t one = 1, unlimited = H5S_UNLIMITED;
    hid_t space = H5Screate_simple(1, &one, &unlimited), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &one);
    hid_t dset = H5Dcreate2(file, "/fits", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    cr_assert_geq(dset, 0);
    cr_assert_geq(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &old), 0);
    H5Dclose(dset), H5Pclose(dcpl), H5Sclose(space), H5Tclose(type), H5Tclose(s16);
    H5Tclose(s32), H5Fclose(file);

    bench_fit_row *rows;
    int64_t n = -1;
    cr_assert_eq(bench_store_read_fits(path, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 1);
    cr_expect(strcmp(rows[0].kind, "window") == 0 && rows[0].dtype[0] == '\0');
    free(rows);

    bench_fit_row fresh = fit_row("full", "time", 2.01);
    snprintf(fresh.dtype, sizeof fresh.dtype, "bf16");
    cr_assert_eq(bench_store_write_fits(path, 1, &fresh, 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_read_fits(path, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 2, "the other run's row is kept");
    cr_expect(rows[0].run_id == 2 && strcmp(rows[0].kind, "window") == 0 &&
              rows[0].exponent == 1.02 && rows[0].dtype[0] == '\0');
    cr_expect(rows[1].run_id == 1 && strcmp(rows[1].dtype, "bf16") == 0, "dtype '%s'",
              rows[1].dtype);
    free(rows);
    unlink(path);
    rmdir(dir);
}
