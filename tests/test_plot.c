/*
 * test_plot.c — `bench plot` and `bench fit` on synthetic results files with known answers
 * (plot_fixture.h), through the CLI: the figures a run calls for are written as real images
 * (PNG magic and size, SVG, PDF) and the others skipped with a reason; bad files, empty runs
 * and bad options exit 2 with one line; a missing or failing gnuplot exits 1 and leaves no image
 * and no temporary files; fit recovers the exponents and crossovers the fixture was built with,
 * and replaces its /fits rows. The figures' honesty, read from the gnuplot scripts and data a
 * capturing fake gnuplot keeps: error bars from the repetitions, Wilson bars on retrieval, a
 * distinct marker and dash per series, R² and piecewise fits, the speed-up figure; a run's own
 * folder, and stale figures removed. Underneath: the series grouping ('auto' parameters,
 * labels), the kinds' styles, the median CI, Wilson's interval and the fit rule.
 * Tests that draw are skipped where gnuplot is not installed.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "figure.h"
#include "figures/figures.h"
#include "fit.h"
#include "plot_fixture.h"
#include "results.h"
#include "series.h"
#include "test_run.h"

static char dir[256], file[300];

static void write_fixture(void)
{
    snprintf(dir, sizeof dir, "/tmp/attnbench-plot-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/syn.h5", dir);
    bench_store *st;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_open(file, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(pf_write_scaling(st, 0.03, 1), 0);
    cr_assert_eq(pf_write_heads(st, false), 0);
    cr_assert_eq(pf_write_heads(st, true), 0);
    bench_store_close(st);
}

static void remove_dir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(plot, .init = write_fixture, .fini = remove_dir, .timeout = 120);

/* Entries of a directory (0 if it does not exist). */
static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static const char *in_dir(const char *name)
{
    static char path[4][512];
    static int which;
    which = (which + 1) % 4;
    snprintf(path[which], sizeof path[which], "%s/%s", dir, name);
    return path[which];
}

/* A PNG of at least min_bytes whose IHDR says width x height within the given bounds. */
static long expect_png(const char *path)
{
    unsigned char head[24] = {0};
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s was not written", path);
    const size_t got = fread(head, 1, sizeof head, f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fclose(f);
    cr_expect(got == 24 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", path);
    const long w = (long)head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19];
    const long h = (long)head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23];
    cr_expect(w >= 800 && w <= 2600 && h >= 500 && h <= 1200, "%s is %ldx%ld", path, w, h);
    cr_expect_gt(size, 10000, "%s has only %ld bytes", path, size);
    return w;
}

Test(plot, a_scaling_run_draws_its_figures_and_skips_the_others)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    const char *out = in_dir("figs");
    cr_assert_eq(bench_env("", "plot %s --run 1 --out %s", file, out), 0, "stderr: %s", err_text);
    /* prefill on gaussian and needle: time, memory, throughput on gaussian (the first), accuracy
     * once per dataset; decode on gaussian only: the single-dataset names */
    const char *figs[] = {"time_vs_n",
                          "speedup_vs_n",
                          "memory_vs_n",
                          "throughput_vs_n",
                          "accuracy_vs_n_gaussian",
                          "accuracy_vs_n_needle",
                          "accuracy_vs_window_gaussian",
                          "accuracy_vs_window_needle",
                          "error_vs_cost_gaussian",
                          "error_vs_cost_needle",
                          "time_vs_n_decode",
                          "memory_vs_n_decode",
                          "throughput_vs_n_decode",
                          "accuracy_vs_n_decode"};
    const int nfigs = sizeof figs / sizeof figs[0];
    for (int k = 0; k < nfigs; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.png", out, figs[k]);
        expect_png(path);
        cr_expect(strstr(out_text, path) != NULL, "stdout does not list %s:\n%s", path, out_text);
    }
    cr_expect_eq(count_entries(out), nfigs, "the output directory holds more than the figures");
    cr_expect(strstr(out_text, "skipped time_vs_heads.png: no series was measured at 2 or more "
                               "heads") != NULL,
              "%s", out_text);
    cr_expect(strstr(out_text, "plots: 14 figures of run 1") != NULL, "%s", out_text);
    cr_expect(strstr(out_text, "skipped speedup_vs_n_decode.png: no kind has a full series") !=
                  NULL,
              "%s", out_text);

    /* the heads and kv_heads runs: those figures, and one line for the figures over n */
    cr_assert_eq(bench_env("", "plot %s --run 2 --out %s", file, in_dir("heads")), 0, "%s",
                 err_text);
    expect_png(in_dir("heads/time_vs_heads.png"));
    cr_expect(strstr(out_text, "every series has a single n") != NULL, "%s", out_text);
    cr_assert_eq(bench_env("", "plot %s --out %s", file, in_dir("kv")), 0, "%s",
                 err_text); /* last run */
    expect_png(in_dir("kv/time_vs_kv_heads.png"));
    cr_expect_eq(count_entries(in_dir("kv")), 1);
}

Test(plot, many_kinds_on_several_datasets_one_figure_per_causal_value_and_accuracy_per_dataset)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    char kinds_file[600], msg[ATTN_MSG_LEN];
    snprintf(kinds_file, sizeof kinds_file, "%s/kinds.h5", dir);
    bench_store *st;
    cr_assert_eq(bench_store_open(kinds_file, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(pf_write_kinds(st), 0);
    bench_store_close(st);
    const char *out = in_dir("kinds");
    cr_assert_eq(bench_env("", "plot %s --out %s", kinds_file, out), 0, "stderr: %s", err_text);
    /* 14 series per dataset with causal 0 and 1: each figure once per causal value */
    static const char *const cost[] = {"time_vs_n", "speedup_vs_n", "memory_vs_n",
                                       "throughput_vs_n"};
    static const char *const ds[] = {"gaussian", "local", "needle"};
    static const char *const causal[] = {"_noncausal", "_causal"};
    int expected = 0;
    for (int c = 0; c < 2; c++) {
        char path[700];
        for (int k = 0; k < 4; k++, expected++) {
            snprintf(path, sizeof path, "%s/%s%s.png", out, cost[k], causal[c]);
            expect_png(path);
        }
        for (int d = 0; d < 3; d++, expected++) {
            snprintf(path, sizeof path, "%s/accuracy_vs_n_%s%s.png", out, ds[d], causal[c]);
            /* a retrieval panel beside the error (a wider page) only where it was measured */
            const long w = expect_png(path);
            cr_expect(d == 2 ? w >= 1150 : w < 1150, "%s is %ld pixels wide", path, w);
        }
    }
    cr_expect_eq(count_entries(out), expected, "%s", out_text);
    /* no figure mixes the causal values */
    cr_expect(strstr(out_text, "time_vs_n.png") == NULL, "%s", out_text);
}

Test(plot, svg_and_pdf)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    const char *formats[][2] = {{"svg", "<?xml"}, {"pdf", "%PDF-"}};
    for (int k = 0; k < 2; k++) {
        char out[300], path[400], head[8] = {0};
        snprintf(out, sizeof out, "%s/%s", dir, formats[k][0]);
        cr_assert_eq(bench_env("", "plot %s --run 2 --out %s --format %s", file, out,
                               formats[k][0]),
                     0, "%s", err_text);
        snprintf(path, sizeof path, "%s/time_vs_heads.%s", out, formats[k][0]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s missing", path);
        cr_expect_eq(fread(head, 1, 5, f), 5);
        fclose(f);
        cr_expect(memcmp(head, formats[k][1], 5) == 0, "%s starts with '%.5s'", path, head);
    }
}

static void expect_refused(const char *words, int code, const char *env, const char *args)
{
    const int got = bench_env(env, "%s", args);
    cr_expect_eq(got, code, "bench %s: exit %d, stderr: %s", args, got, err_text);
    cr_expect(strstr(err_text, words) != NULL, "bench %s: stderr '%s' lacks '%s'", args, err_text,
              words);
    cr_expect(strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
              "bench %s: expected one line on stderr, got '%s'", args, err_text);
}

Test(plot, bad_files_empty_runs_and_bad_options_exit_2_and_draw_nothing)
{
    char msg[ATTN_MSG_LEN], args[1200];
    const char *notes = in_dir("notes.txt"), *empty = in_dir("empty.h5"),
               *failed = in_dir("failed.h5");
    FILE *f = fopen(notes, "w");
    fputs("my notes\n", f);
    fclose(f);
    bench_store *st;
    cr_assert_eq(bench_store_open(empty, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_close(st);
    cr_assert_eq(bench_store_open(failed, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(pf_begin(st), 0);
    cr_assert_eq(pf_begin(st), 0); /* run 2: one point, failed */
    bench_point pt = {0};
    snprintf(pt.kind, sizeof pt.kind, "full");
    snprintf(pt.status, sizeof pt.status, "error");
    cr_assert_eq(bench_store_add_point(st, &pt, NULL, 0, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_close(st);

    const char *out = in_dir("none");
    const struct {
        const char *words, *fmt, *path;
    } cases[] = {
        {"No such file", "%s %s --out %s", "/nonexistent/r.h5"},
        {"not an attnbench results file", "%s %s --out %s", notes},
        {"has no runs yet", "%s %s --out %s", empty},
        {"has no points", "%s %s --run 1 --out %s", failed},
        {"all 1 failed", "%s %s --out %s", failed},
        {"has no run 7 (it has runs 1..3)", "%s %s --run 7 --out %s", file},
        {"--run: 0 is out of range", "%s %s --run 0 --out %s", file},
    };
    for (int cmd = 0; cmd < 2; cmd++) /* plot, then fit */
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            snprintf(args, sizeof args, cases[c].fmt, cmd ? "fit" : "plot", cases[c].path, out);
            if (cmd) *strstr(args, " --out") = '\0';
            expect_refused(cases[c].words, 2, "", args);
        }
    snprintf(args, sizeof args, "plot %s --format gif --out %s", file, out);
    expect_refused("'gif' is not png, svg or pdf", 2, "", args);
    snprintf(args, sizeof args, "plot %s --out %s/sub", file, notes);
    expect_refused("cannot create", 2, "", args);
    expect_refused("needs a results file", 2, "", "plot");
    expect_refused("needs a results file", 2, "", "fit --run 1");
    snprintf(args, sizeof args, "fit %s --run 2", file);
    expect_refused("no series measured at 2 or more n", 2, "", args);
    cr_expect_eq(count_entries(out), 0, "a refused plot drew something");
    f = fopen(notes, "r");
    char kept[32] = "";
    cr_expect(fgets(kept, sizeof kept, f) && strcmp(kept, "my notes\n") == 0, "notes were changed");
    fclose(f);
}

/* A fake gnuplot (a shell script) in dir/bin doing `body`. */
static const char *fake_gnuplot(const char *body)
{
    static char bin[300];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    mkdir(bin, 0700);
    char path[400];
    snprintf(path, sizeof path, "%s/gnuplot", bin);
    FILE *f = fopen(path, "w");
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0700);
    return bin;
}

Test(plot, a_missing_or_failing_gnuplot_exits_1_and_leaves_no_image_and_no_temporary_files)
{
    const char *out = in_dir("out"), *tmp = in_dir("tmp");
    char env[1200], args[1200];
    mkdir(tmp, 0700);
    mkdir(out, 0700);
    FILE *f = fopen(in_dir("out/time_vs_n.png"), "w"); /* an image from before */
    fputs("old figure", f);
    fclose(f);
    snprintf(args, sizeof args, "plot %s --run 1 --out %s", file, out);
    snprintf(env, sizeof env, "TMPDIR=%s PATH=%s/nowhere", tmp, dir);
    expect_refused("gnuplot is not installed", 1, env, args);
    expect_refused("sudo apt-get install gnuplot-nox", 1, env, args);

    /* gnuplot that fails; gnuplot that "succeeds" without drawing a PNG */
    const char *bin = fake_gnuplot("cat >/dev/null; echo 'line 3: unknown command' >&2; exit 3");
    snprintf(env, sizeof env, "TMPDIR=%s PATH=%s:/usr/bin:/bin", tmp, bin);
    expect_refused("gnuplot failed drawing", 1, env, args);
    cr_expect(strstr(err_text, "exit 3") && strstr(err_text, "unknown command"), "%s", err_text);
    fake_gnuplot("out=$(sed -n \"s/^set output '\\(.*\\)'\\$/\\1/p\" | head -n 1)\n"
                 "echo 'not an image' > \"$out\"");
    expect_refused("drew no valid png image", 1, env, args);

    cr_expect_eq(count_entries(out), 1, "a failed plot left files in %s", out);
    char old[32] = "";
    f = fopen(in_dir("out/time_vs_n.png"), "r");
    cr_expect(fgets(old, sizeof old, f) && strcmp(old, "old figure") == 0,
              "the old image was replaced");
    fclose(f);
    cr_expect_eq(count_entries(tmp), 0, "temporary files left in %s", tmp);

    if (!have_gnuplot()) return;
    snprintf(env, sizeof env, "TMPDIR=%s", tmp); /* the real one: also cleans up after itself */
    cr_expect_eq(bench_env(env, "%s", args), 0, "%s", err_text);
    cr_expect_eq(count_entries(tmp), 0, "temporary files left in %s", tmp);
    expect_png(in_dir("out/time_vs_n.png"));
}

static const bench_fit_row *find_row(const bench_fit_row *rows, int64_t n, const char *kind,
                                     const char *params, const char *dataset, int causal,
                                     const char *mode, const char *metric)
{
    for (int64_t r = 0; r < n; r++)
        if (strcmp(rows[r].kind, kind) == 0 && strcmp(rows[r].params, params) == 0 &&
            strcmp(rows[r].dataset, dataset) == 0 && rows[r].causal == causal &&
            strcmp(rows[r].mode, mode) == 0 && strcmp(rows[r].metric, metric) == 0)
            return &rows[r];
    cr_assert_fail("no /fits row for %s %s %s causal=%d %s %s", kind, params, dataset, causal, mode,
                   metric);
    return NULL;
}

Test(plot, fit_recovers_the_fixture_exponents_and_crossovers_and_replaces_its_rows)
{
    cr_assert_eq(bench_env("", "fit %s --run 1", file), 0, "stderr: %s", err_text);
    cr_expect(strstr(out_text, "faster above n=") && strstr(out_text, "stored: 28 rows in /fits"),
              "%s", out_text);
    bench_fit_row *rows;
    int64_t n;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_read_fits(file, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 28); /* 13 series: time and rss each, and lowrank's varying workspace (x2) */
    for (int causal = 0; causal <= 1; causal++) {
        const bench_fit_row *full =
            find_row(rows, n, "full", PF_FULL, "gaussian", causal, "prefill", "time");
        cr_expect(fabs(full->exponent - 2) < 0.1 && full->exponent_lo < 2 && full->exponent_hi > 2,
                  "full: %g [%g, %g]", full->exponent, full->exponent_lo, full->exponent_hi);
        cr_expect(fabs(full->theory - 2) < 1e-9 && full->points == 6 && full->n_min == 256 &&
                  full->n_max == 8192 && full->r2 > 0.99);
        cr_expect_str_eq(full->crossover, "");
        const bench_fit_row *w64 =
            find_row(rows, n, "window", "window=64", "gaussian", causal, "prefill", "time");
        cr_expect(fabs(w64->exponent - 1) < 0.1 && fabs(w64->theory - 1) < 1e-9, "%g",
                  w64->exponent);
        cr_expect_str_eq(w64->crossover, "always");
        cr_expect_str_eq(w64->reference_params, PF_FULL);
        const bench_fit_row *w256 =
            find_row(rows, n, "window", "window=256", "gaussian", causal, "prefill", "time");
        cr_expect_str_eq(w256->crossover, "above");
        cr_expect(fabs(w256->crossover_n / 614.4 - 1) < 0.1, "crossover at %g, built at 614.4",
                  w256->crossover_n);
        cr_expect(fabs(w256->ratio_at_max - 614.4 / 8192) < 0.01 && w256->ratio_n == 8192);
        const bench_fit_row *ws =
            find_row(rows, n, "lowrank", "features=64", "gaussian", causal, "prefill", "workspace");
        cr_expect(fabs(ws->exponent - 1) < 1e-9 && isnan(ws->theory));
        const bench_fit_row *rss =
            find_row(rows, n, "full", PF_FULL, "gaussian", causal, "prefill", "rss_added");
        cr_expect(fabs(rss->exponent - rss->theory) < 1e-9, "rss %g vs theory %g", rss->exponent,
                  rss->theory);
    }
    const bench_fit_row *dec = find_row(rows, n, "full", PF_FULL, "gaussian", 1, "decode", "time");
    cr_expect(fabs(dec->exponent - 1) < 0.1 && dec->q_len == 1, "decode: %g", dec->exponent);
    free(rows);

    /* again, and with --no-store: still one fit of run 1 */
    cr_assert_eq(bench_env("", "fit %s --run 1", file), 0, "%s", err_text);
    cr_assert_eq(bench_env("", "fit %s --run 1 --no-store", file), 0, "%s", err_text);
    cr_expect(strstr(out_text, "stored:") == NULL, "%s", out_text);
    cr_assert_eq(bench_store_read_fits(file, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(n, 28);
    free(rows);
}

/* ---- series: 'auto' parameters and labels, on hand-made runs ---- */

static const attn_param_def stride_params[] = {
    {"stride", "keys between strided columns; 0: ceil(sqrt(S))", 0, 0, 1 << 20, true},
    {"block", "block size", 64, 1, 1024, true},
};

static void resolve_stride(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    (void)self;
    if (p->v[0] == 0) p->v[0] = ceil(sqrt((double)s->S));
}

static const attn_ops fake_strided = {.name = "strided",
                                      .params = ATTN_PARAM_TABLE("strided", stride_params),
                                      .resolve = resolve_stride};

static const attn_ops *find_fake(const char *name)
{
    return strcmp(name, "strided") == 0 ? &fake_strided : attn_kind_find(name);
}

static void put_point(bench_run_data *rd, const char *kind, const char *params, int64_t n,
                      int causal)
{
    bench_point *pt = &rd->pts[rd->n++];
    memset(pt, 0, sizeof *pt);
    snprintf(pt->kind, sizeof pt->kind, "%s", kind);
    snprintf(pt->params, sizeof pt->params, "%s", params);
    snprintf(pt->dataset, sizeof pt->dataset, "gaussian");
    snprintf(pt->mode, sizeof pt->mode, "prefill");
    pt->batch = 1, pt->heads = 8, pt->kv_heads = 8, pt->head_dim = 64, pt->threads = 2;
    pt->q_len = pt->kv_len = n, pt->causal = causal;
}

static const bench_group_by over_n = {BENCH_K_ALL & ~BENCH_K_N, NULL};

/* rd's 8 points over n: idx[i] = i; 4 series expected. */
static void group_8_points_over_n(const bench_run_data *rd, int64_t idx[8], bench_series **set,
                                  int64_t *nset)
{
    double x[8];
    for (int i = 0; i < 8; i++) idx[i] = i, x[i] = (double)rd->pts[i].kv_len;
    cr_assert_eq(bench_series_group(rd, idx, 8, over_n, x, set, nset), ATTN_OK);
    cr_assert_eq(*nset, 4);
}

Test(plot, auto_parameters_keep_one_series_and_labels_name_what_differs)
{
    bench_run_data rd = {0};
    rd.pts = calloc(16, sizeof *rd.pts);
    rd.params = calloc(16, sizeof *rd.params);
    /* stride left at auto: recorded as ceil(sqrt(n)), one series; stride=8 set by hand */
    put_point(&rd, "strided", "stride=16,block=64", 256, 0);
    put_point(&rd, "strided", "stride=32,block=64", 1024, 0);
    put_point(&rd, "strided", "stride=64,block=64", 4096, 0);
    put_point(&rd, "strided", "stride=8,block=64", 256, 0);
    put_point(&rd, "strided", "stride=8,block=64", 1024, 0);
    put_point(&rd, "full", PF_FULL, 256, 0);
    put_point(&rd, "full", PF_FULL, 1024, 0);
    put_point(&rd, "full", PF_FULL, 1024, 1);
    bench_series_normalize(&rd, find_fake);
    cr_expect_str_eq(rd.params[0], "stride=auto,block=64");
    cr_expect_str_eq(rd.params[2], "stride=auto,block=64");
    cr_expect_str_eq(rd.params[3], "stride=8,block=64");
    cr_expect_str_eq(rd.params[5], PF_FULL);

    int64_t idx[8];
    bench_series *set;
    int64_t nset;
    group_8_points_over_n(&rd, idx, &set, &nset);
    cr_expect_eq(set[0].n, 3);
    cr_expect(set[0].idx[0] == 0 && set[0].idx[2] == 2);
    char label[256];
    const char *want[] = {"stride=auto", "stride=8", "full", "full causal"};
    for (int k = 0; k < 4; k++) {
        bench_series_label(&rd, set, nset, k, over_n, label, sizeof label);
        char expected[64];
        snprintf(expected, sizeof expected, "%s%s", k < 2 ? "strided " : "", want[k]);
        cr_expect_str_eq(label, expected);
    }
    bench_common_settings(&rd, idx, 8, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect_str_eq(label, "gaussian, prefill, B=1, H=8, Hkv=8, D=64");
    bench_common_settings(&rd, idx + 3, 3, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect_str_eq(label, "non-causal, gaussian, prefill, B=1, H=8, Hkv=8, D=64");
    bench_series_free(set, nset);
    bench_run_data_free(&rd);
}

/* Storage changes the work: f32 and bf16 points are two series (labels name the dtype, the
 * subtitle a shared one unless f32), and bench fit stores one /fits row each, with its dtype. */
Test(plot, dtypes_make_series_of_their_own_and_fits_keep_them_apart)
{
    const char *path = in_dir("dtypes.h5");
    bench_store *st;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(pf_begin(st), 0);
    ds_rng r = ds_rng_stream(3, 0);
    const char *dtypes[] = {"f32", "bf16"};
    for (int d = 0; d < 2; d++)
        for (int64_t n = 256; n <= 2048; n *= 2) {
            /* f32 grows as n^2, bf16 as n^1 ten times faster: merged, they fit neither */
            const double t = d ? 1e-5 * (double)n / 256 : 1e-3 * (double)(n * n) / (256 * 256);
            pf_point p = {.kind = "full",
                          .params = PF_FULL,
                          .heads = 8,
                          .kv_heads = 8,
                          .n = n,
                          .time_s = t,
                          .flops = 4.0 * PF_D * 8 * (double)(n * n),
                          .rel_err = 1e-7,
                          .workspace = 1 << 20,
                          .dtype = dtypes[d]};
            cr_assert_eq(pf_add(st, &p, 0, &r), 0);
        }
    bench_store_close(st);

    bench_run_data rd;
    cr_assert_eq(bench_run_load(path, 0, &rd, msg, sizeof msg), ATTN_OK, "%s", msg);
    int64_t idx[8];
    for (int i = 0; i < 8; i++) idx[i] = i;
    double x[8];
    for (int i = 0; i < 8; i++) x[i] = (double)rd.pts[i].kv_len;
    bench_series *set;
    int64_t nset;
    cr_assert_eq(bench_series_group(&rd, idx, 8, over_n, x, &set, &nset), ATTN_OK);
    cr_assert_eq(nset, 2, "f32 and bf16 merged into %lld series", (long long)nset);
    char label[256];
    bench_series_label(&rd, set, nset, 0, over_n, label, sizeof label);
    cr_expect_str_eq(label, "full f32");
    bench_series_label(&rd, set, nset, 1, over_n, label, sizeof label);
    cr_expect_str_eq(label, "full bf16");
    bench_common_settings(&rd, idx + 4, 4, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect(strstr(label, "bf16") != NULL, "a shared bf16 goes into the subtitle: %s", label);
    bench_common_settings(&rd, idx, 4, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect(strstr(label, "f32") == NULL, "a shared f32 goes without saying: %s", label);
    bench_series_free(set, nset);
    bench_run_data_free(&rd);

    cr_assert_eq(bench_env("", "fit %s", path), 0, "stderr: %s", err_text);
    bench_fit_row *rows;
    int64_t n;
    cr_assert_eq(bench_store_read_fits(path, &rows, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    int seen = 0;
    for (int64_t k = 0; k < n; k++) {
        if (strcmp(rows[k].metric, "time") != 0) continue;
        const bool bf16 = strcmp(rows[k].dtype, "bf16") == 0;
        cr_expect(bf16 || strcmp(rows[k].dtype, "f32") == 0, "dtype '%s'", rows[k].dtype);
        cr_expect(rows[k].points == 4 && fabs(rows[k].exponent - (bf16 ? 1 : 2)) < 1e-6,
                  "%s: %d points, exponent %g", rows[k].dtype, rows[k].points, rows[k].exponent);
        seen |= 1 << bf16;
    }
    cr_expect_eq(seen, 3, "a time fit per dtype");
    free(rows);
}

/* One repetition measures no interval: no error bar, never a zero-width one. */
Test(plot, a_point_of_one_repetition_has_no_interval)
{
    bench_point pts[3] = {{.reps = 1, .time_min_s = 1e-3, .time_max_s = 1e-3},
                          {.reps = 5},
                          {.reps = 1, .time_min_s = 2e-3, .time_max_s = 2e-3}};
    double samples[6] = {1e-3, 1e-3, 1.1e-3, 1.2e-3, 1.3e-3, 1.4e-3};
    int64_t first[3] = {0, 1, 6}, count[3] = {1, 5, 0};
    bench_run_data rd = {
        .pts = pts, .n = 3, .samples = samples, .sample_first = first, .sample_count = count};
    double lo, hi;
    int64_t reps;
    cr_expect(!bench_point_time_ci(&rd, 0, &lo, &hi, &reps), "one stored repetition");
    cr_expect(bench_point_time_ci(&rd, 1, &lo, &hi, &reps) && lo < hi && reps == 5);
    cr_expect(!bench_point_time_ci(&rd, 2, &lo, &hi, &reps), "reps 1, none stored: min = max");
}

Test(plot, labels_leave_settings_that_only_differ_between_kinds_to_the_subtitle)
{
    bench_run_data rd = {0};
    rd.pts = calloc(16, sizeof *rd.pts);
    rd.params = calloc(16, sizeof *rd.params);
    const char *ds[] = {"gaussian", "needle"};
    for (int d = 0; d < 2; d++)
        for (int64_t n = 256; n <= 512; n *= 2) {
            put_point(&rd, "full", PF_FULL, n, 1);
            put_point(&rd, "mqa", PF_FULL, n, 1);
            rd.pts[rd.n - 1].kv_heads = 1;
            for (int64_t p = rd.n - 2; p < rd.n; p++) {
                snprintf(rd.pts[p].dataset, sizeof rd.pts[p].dataset, "%s", ds[d]);
                snprintf(rd.pts[p].dataset_params, sizeof rd.pts[p].dataset_params, "%s",
                         d ? "needles=16,margin=4" : "temperature=1");
            }
        }
    bench_series_normalize(&rd, find_fake);
    int64_t idx[8];
    bench_series *set;
    int64_t nset;
    group_8_points_over_n(&rd, idx, &set, &nset);
    /* all datasets: the dataset by its name; Hkv differs only between kinds; causal is shared */
    const char *want[] = {"full gaussian", "mqa gaussian", "full needle", "mqa needle"};
    char label[256];
    for (int k = 0; k < 4; k++) {
        bench_series_label(&rd, set, nset, k, over_n, label, sizeof label);
        cr_expect_str_eq(label, want[k]);
    }
    bench_common_settings(&rd, idx, 8, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect_str_eq(label, "causal, prefill, B=1, H=8, Hkv=8 (mqa Hkv=1), D=64");
    /* one dataset: the kinds alone, the dataset with its params in the subtitle */
    bench_series_label(&rd, set, 2, 1, over_n, label, sizeof label);
    cr_expect_str_eq(label, "mqa");
    bench_common_settings(&rd, idx + 4, 4, BENCH_K_ALL & ~BENCH_K_N, label, sizeof label);
    cr_expect_str_eq(
        label, "causal, needle(needles=16,margin=4), prefill, B=1, H=8, Hkv=8 (mqa Hkv=1), D=64");
    bench_series_free(set, nset);
    bench_run_data_free(&rd);
}

Test(plot, sweep_with_plots_draws_its_run)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    const char *tiny = "sweep --kinds full --n 8,16 --causal 0 --heads 2 --head-dim 4 --reps 1 "
                       "--warmup 0 --min-time 0 --threads 1 --quiet";
    const char *res = in_dir("sweep.h5"), *figs = in_dir("sweep-figs");
    cr_assert_eq(bench_env("", "%s --out %s --plots %s", tiny, res, figs), 0, "%s", err_text);
    char line[600];
    snprintf(line, sizeof line, "plots: 6 figures of run 1 in %s", figs); /* 3 datasets */
    cr_expect(strstr(out_text, line) != NULL, "%s", out_text);
    expect_png(in_dir("sweep-figs/time_vs_n.png"));
    expect_png(in_dir("sweep-figs/accuracy_vs_n_needle.png"));
    /* a directory that cannot be made: refused before the sweep (exit 2), nothing measured */
    const int code = bench_env("", "%s --out %s --plots %s/notes/x", tiny, res, res);
    cr_expect_eq(code, 2, "%s", err_text);
    cr_expect(strstr(err_text, "is not a directory"), "%s", err_text);
    bench_run *runs;
    int64_t n;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_read_runs(res, &runs, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(n, 1);
    free(runs);
}

Test(plot, help)
{
    const char *cmds[] = {"plot --help", "fit --help", "--help"};
    for (int c = 0; c < 3; c++) {
        cr_expect_eq(bench_env("", "%s", cmds[c]), 0, "bench %s", cmds[c]);
        cr_expect(strstr(out_text, "usage:") && strstr(out_text, c == 1 ? "--no-store" : "plot"),
                  "bench %s: %s", cmds[c], out_text);
    }
}

/* The registry of figures (report/figures/figures.c) is what --help lists, what
 * docs/plots-and-fits.md's table of figures describes, and what a plot removes from its folder. */
Test(plot, the_registry_of_figures_is_what_help_and_the_docs_list)
{
    cr_assert_eq(bench_env("", "plot --help"), 0);
    const char *src = getenv("BENCH_SOURCE_DIR");
    cr_assert_not_null(src, "BENCH_SOURCE_DIR is not set (run through meson test)");
    char path[600];
    static char md[1 << 17];
    snprintf(path, sizeof path, "%s/docs/plots-and-fits.md", src);
    tu_slurp(path, md, sizeof md);
    char *table = strstr(md, "\n## The figures\n");
    cr_assert_not_null(table, "%s has no section 'The figures'", path);
    char *end = strstr(table + 1, "\n## ");
    if (end) *end = '\0';
    for (int i = 0; i < bench_figure_count(); i++) {
        const char *name = bench_figure_at(i)->name;
        char line[128], doc[128];
        snprintf(line, sizeof line, "\n  %s ", name);
        snprintf(doc, sizeof doc, "`%s.png`", name);
        cr_expect(strstr(out_text, line), "bench plot --help does not list %s", name);
        cr_expect(strstr(table, doc), "docs/plots-and-fits.md does not describe %s", doc);
    }
    for (const char *row = strstr(table, "\n| `"); row; row = strstr(row + 1, "\n| `"))
        for (const char *at = row + 3; *at == '`';) { /* each `NAME.png` of the row's first cell */
            const char *dot = strstr(at, ".png`");
            cr_assert_not_null(dot);
            bool known = false;
            for (int i = 0; i < bench_figure_count(); i++)
                known |= strlen(bench_figure_at(i)->name) == (size_t)(dot - at - 1) &&
                         strncmp(bench_figure_at(i)->name, at + 1, (size_t)(dot - at - 1)) == 0;
            cr_expect(known, "docs/plots-and-fits.md describes %.*s, not a registered figure",
                      (int)(dot - at - 1), at + 1);
            at = dot + 5;
            at += strspn(at, ", ");
        }
    const char *figures[] = {"time_vs_n_decode.pdf", "accuracy_vs_window_needle.svg",
                             "scaling_full.png", "train_vs_forward_causal.png"};
    const char *others[] = {"notes.txt", "time_vs_n.txt", "scaling.png", "figure.png"};
    for (int k = 0; k < 4; k++) {
        cr_expect(bench_figure_file(figures[k]), "%s is a figure", figures[k]);
        cr_expect(!bench_figure_file(others[k]), "%s is not a figure", others[k]);
    }
}

/* ---- honest figures: what the gnuplot scripts and their data hold ---- */

/* A fake gnuplot that keeps each script (and the data files it reads) in dir/cap/<k>/ and
 * draws a minimal "PNG" (its magic and a byte). Returns the capture directory. */
static const char *capturing_gnuplot(char *env, size_t len)
{
    static char cap[400];
    snprintf(cap, sizeof cap, "%s/cap", dir);
    mkdir(cap, 0700);
    char body[1400];
    snprintf(
        body, sizeof body,
        "cap='%s'\n"
        "k=$(ls \"$cap\" | wc -l)\nmkdir \"$cap/$k\"\ncat > \"$cap/$k/script.gp\"\n"
        "out=$(sed -n \"s/^set output '\\(.*\\)'\\$/\\1/p\" \"$cap/$k/script.gp\" | head -n 1)\n"
        "cp \"$(dirname \"$out\")\"/data*.dat \"$cap/$k/\" 2>/dev/null\n"
        "printf '\\211PNG\\r\\n\\032\\nfake' > \"$out\"",
        cap);
    const char *bin = fake_gnuplot(body);
    snprintf(env, len, "PATH=%s:/usr/bin:/bin", bin);
    return cap;
}

/* The captured script whose text holds `needle` (its directory into cap_dir), malloc'd; NULL if
 * none. */
static char *find_script(const char *cap, const char *needle, char *cap_dir, size_t len)
{
    for (int k = 0; k < 200; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%d/script.gp", cap, k);
        FILE *f = fopen(path, "r");
        if (!f) break;
        char *text = calloc(1, 1 << 20);
        const size_t got = fread(text, 1, (1 << 20) - 1, f);
        fclose(f);
        text[got] = '\0';
        if (strstr(text, needle)) {
            snprintf(cap_dir, len, "%s/%d", cap, k);
            return text;
        }
        free(text);
    }
    return NULL;
}

/* Rows (x, y, lo, hi) of the data file named by the first plot item after `from` that uses
 * `style` ("yerrorbars"), read from the capture; how many (at most max). */
static int bar_rows(const char *from, const char *style, const char *cap_dir, double rows[][4],
                    int max)
{
    const char *item = strstr(from, style);
    if (!item) return 0;
    const char *q = item;
    while (q > from && *q != '\'') q--; /* the closing quote of the data file's path */
    const char *open = q - 1;
    while (open > from && *open != '\'') open--;
    const char *name = q;
    while (name > open && name[-1] != '/') name--;
    char path[700];
    snprintf(path, sizeof path, "%s/%.*s", cap_dir, (int)(q - name), name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no data file %s", path);
    int n = 0;
    while (n < max && fscanf(f, "%lf %lf %lf %lf%*[^\n]", &rows[n][0], &rows[n][1], &rows[n][2],
                             &rows[n][3]) == 4)
        n++;
    fclose(f);
    return n;
}

/* Every "keyentry with linespoints ... pt P ... dt D" of script: distinct (P, D) pairs? The count
 * into *n. */
static bool distinct_key_styles(const char *script, int *n)
{
    char styles[64][48];
    *n = 0;
    bool distinct = true;
    for (const char *k = strstr(script, "keyentry with linespoints"); k && *n < 64;
         k = strstr(k + 1, "keyentry with linespoints")) {
        const char *pt = strstr(k, " pt "), *dt = strstr(k, " dt ");
        cr_assert(pt && dt);
        int p = atoi(pt + 4);
        char d[32];
        sscanf(dt + 4, "%31s", d);
        snprintf(styles[*n], sizeof styles[*n], "%d %s", p, d);
        for (int o = 0; o < *n; o++) distinct &= strcmp(styles[o], styles[*n]) != 0;
        (*n)++;
    }
    return distinct;
}

Test(plot, figures_draw_error_bars_wilson_intervals_distinct_styles_fits_and_the_speedup)
{
    char env[1200], cap_dir[600];
    const char *cap = capturing_gnuplot(env, sizeof env);
    cr_assert_eq(bench_env(env, "plot %s --run 1 --out %s", file, in_dir("honest")), 0, "%s",
                 err_text);
    /* time vs n: a bar per point from the 3 repetitions (min-max: 0.96 t .. 1.05 t), said in
     * the legend; one (marker, dash) per series; R² beside each exponent */
    char *time = find_script(cap, "Time per forward vs sequence length", cap_dir, sizeof cap_dir);
    cr_assert_not_null(time, "no time_vs_n script");
    cr_expect(strstr(time, "bars: min-max of 3 reps (75.0 % CI of the median time)"), "%s", time);
    double rows[16][4];
    int n = bar_rows(time, "with yerrorbars", cap_dir, rows, 16);
    cr_expect_eq(n, 6, "time bars: %d rows", n);
    for (int i = 0; i < n; i++)
        cr_expect(fabs(rows[i][2] / rows[i][1] - 0.96) < 1e-9 &&
                      fabs(rows[i][3] / rows[i][1] - 1.05) < 1e-9,
                  "bar [%g, %g] around %g", rows[i][2], rows[i][3], rows[i][1]);
    int keys;
    cr_expect(distinct_key_styles(time, &keys), "two series share a marker and dash:\n%s", time);
    cr_expect_eq(keys, 8, "8 series (full, window=64, window=256, lowrank; causal or not)");
    cr_expect(strstr(time, "(n^{2.0") && strstr(time, ", R² 0.99"), "%s", time);
    free(time);

    /* speed-up over full: time of full / time of window, bars from both intervals */
    char *speed = find_script(cap, "Speed-up over full attention", cap_dir, sizeof cap_dir);
    cr_assert_not_null(speed, "no speedup_vs_n script");
    n = bar_rows(speed, "with yerrorbars", cap_dir, rows, 16);
    cr_expect_eq(n, 6);
    for (int i = 0; i < n; i++) {
        cr_expect(fabs(rows[i][2] / rows[i][1] - 0.96 / 1.05) < 1e-9 &&
                      fabs(rows[i][3] / rows[i][1] - 1.05 / 0.96) < 1e-9,
                  "speed-up bar [%g, %g] around %g", rows[i][2], rows[i][3], rows[i][1]);
        /* window=64 from the fixture: (4 D H n^2/60e9 / 2 ...) / (4 D H n w/25e9): n·25/(60·64) */
        cr_expect(fabs(log(rows[i][1] / (rows[i][0] * 25 / (60.0 * 64)))) < 0.15,
                  "speed-up %g at n=%g", rows[i][1], rows[i][0]);
    }
    cr_expect(strstr(speed, "1: as fast as full"), "%s", speed);
    free(speed);

    /* retrieval on needle (16 planted queries): Wilson bars; at 1.0, from 16/(16 + z²) to 1 */
    char *acc = find_script(cap, "fraction of planted queries retrieved", cap_dir, sizeof cap_dir);
    cr_assert_not_null(acc, "no retrieval panel");
    cr_expect(strstr(acc, "bars: Wilson 95 % CI (16 planted queries)"), "%s", acc);
    const char *panel2 = strstr(acc, "fraction of planted queries retrieved");
    n = bar_rows(panel2, "with yerrorbars", cap_dir, rows, 16);
    cr_expect_gt(n, 3);
    bool saw_one = false;
    for (int i = 0; i < n; i++) {
        cr_expect(rows[i][2] <= rows[i][1] && rows[i][1] <= rows[i][3] && rows[i][2] >= 0 &&
                      rows[i][3] <= 1 && rows[i][3] - rows[i][2] > 0.05,
                  "retrieval bar [%g, %g] around %g", rows[i][2], rows[i][3], rows[i][1]);
        if (rows[i][1] == 1) {
            saw_one = true;
            const double z2 = 1.959963984540054 * 1.959963984540054;
            cr_expect(fabs(rows[i][2] - 16 / (16 + z2)) < 1e-9 && rows[i][3] == 1, "%g %g",
                      rows[i][2], rows[i][3]);
        }
    }
    cr_expect(saw_one);
    free(acc);
}

Test(plot, a_run_gets_a_folder_of_its_own_and_a_plot_removes_the_figures_of_an_earlier_one)
{
    char env[1200];
    capturing_gnuplot(env, sizeof env); /* fast: the figures' content is not looked at here */
    char home_env[1400];
    snprintf(home_env, sizeof home_env, "%s ATTNBENCH_HOME=%s", env, dir);
    cr_assert_eq(bench_env(home_env, "plot %s --run 2", file), 0, "%s", err_text);
    char line[700];
    snprintf(line, sizeof line, "plots: 1 figure of run 2 in %s/plots/syn-run2\n", dir);
    cr_expect(strstr(out_text, line), "%s", out_text);
    cr_expect_eq(count_entries(in_dir("plots/syn-run2")), 1);
    cr_assert_eq(bench_env(home_env, "plot %s", file), 0, "%s", err_text); /* the last run: 3 */
    cr_expect_eq(count_entries(in_dir("plots")), 2, "runs 2 and 3 in folders of their own");

    /* one --out for two runs: the second plot leaves only its own figures (and other files) */
    const char *out = in_dir("shared");
    cr_assert_eq(bench_env(env, "plot %s --run 1 --out %s", file, out), 0, "%s", err_text);
    FILE *f = fopen(in_dir("shared/notes.txt"), "w");
    fputs("mine\n", f);
    fclose(f);
    cr_assert_eq(bench_env(env, "plot %s --run 2 --out %s", file, out), 0, "%s", err_text);
    snprintf(line, sizeof line, "removed 14 figures of an earlier plot from %s\n", out);
    cr_expect(strstr(out_text, line), "%s", out_text);
    cr_expect_eq(count_entries(out), 2, "time_vs_heads.png and notes.txt");
    struct stat sb;
    cr_expect(stat(in_dir("shared/time_vs_heads.png"), &sb) == 0);
    cr_expect(stat(in_dir("shared/notes.txt"), &sb) == 0);
}

Test(plot, every_kind_has_its_own_marker_and_dash_the_same_in_every_figure)
{
    const int nk = attn_kind_count();
    bench_kind_style st[64];
    for (int k = 0; k < nk && k < 64; k++) {
        st[k] = bench_fig_kind_style(attn_kind_at(k)->name);
        const bench_kind_style again = bench_fig_kind_style(attn_kind_at(k)->name);
        cr_expect(again.color == st[k].color && again.shape == st[k].shape &&
                  again.dash == st[k].dash);
        cr_expect(st[k].shape >= 0 && st[k].shape < BENCH_SHAPES && st[k].dash >= 0 &&
                  st[k].dash < BENCH_DASHES);
        for (int o = 0; o < k; o++) {
            cr_expect(st[o].shape != st[k].shape || st[o].dash != st[k].dash,
                      "%s and %s share a marker and a dash", attn_kind_at(o)->name,
                      attn_kind_at(k)->name);
            cr_expect(st[o].color != st[k].color, "%s and %s share a colour", attn_kind_at(o)->name,
                      attn_kind_at(k)->name);
        }
    }
    /* kinds whose curves lie on top of each other differ in both */
    static const char *const groups[][3] = {{"full", "mqa", "gqa"},
                                            {"window", "global", "dilated"}};
    for (int g = 0; g < 2; g++)
        for (int a = 0; a < 3; a++)
            for (int b = a + 1; b < 3; b++) {
                const bench_kind_style x = bench_fig_kind_style(groups[g][a]),
                                       y = bench_fig_kind_style(groups[g][b]);
                cr_expect(x.shape != y.shape && x.dash != y.dash, "%s, %s", groups[g][a],
                          groups[g][b]);
            }
    const bench_kind_style u = bench_fig_kind_style("a-kind-of-the-future"),
                           v = bench_fig_kind_style("a-kind-of-the-future");
    cr_expect(u.color == v.color && u.shape == v.shape && u.dash == v.dash);
}

Test(plot, median_interval_wilson_interval_and_the_fit_rule)
{
    double x[32], lo, hi, cov;
    for (int i = 0; i < 32; i++) x[i] = i + 1;
    bench_median_ci(x, 5, &lo, &hi, &cov); /* below 6: min-max, 1 - 2/32 */
    cr_expect(lo == 1 && hi == 5 && fabs(cov - 0.9375) < 1e-12, "%g %g %g", lo, hi, cov);
    bench_median_ci(x, 20, &lo, &hi, &cov); /* tables: x(6)..x(15), 95.86 % */
    cr_expect(lo == 6 && hi == 15 && fabs(cov - 0.958610535) < 1e-6, "%g %g %g", lo, hi, cov);
    bench_median_ci(x, 6, &lo, &hi, &cov);
    cr_expect(lo == 1 && hi == 6 && fabs(cov - 0.96875) < 1e-12);
    bench_wilson(0, 10, &lo, &hi); /* 0 of 10: [0, 0.2775] */
    cr_expect(lo == 0 && fabs(hi - 0.27753) < 1e-4, "%g %g", lo, hi);
    bench_wilson(64, 128, &lo, &hi);
    cr_expect(fabs(lo - 0.41468) < 1e-4 && fabs(hi - 0.58532) < 1e-4, "%g %g", lo, hi);

    /* one law; a floor then n^2 (two laws, the upper near 2); flat within 10 % (one law, low
     * R²); curved with 3 n (none) */
    double n[8], y[8];
    char msg[ATTN_MSG_LEN];
    bench_curve_fit cf;
    for (int i = 0; i < 8; i++) n[i] = 1024 << i, y[i] = 3e-9 * n[i] * n[i];
    cr_assert_eq(bench_fit_curve(n, y, 8, &cf, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect(cf.pieces == 1 && fabs(cf.all.slope - 2) < 1e-9);
    for (int i = 0; i < 8; i++) y[i] = 0.02 + 1e-9 * n[i] * n[i]; /* R² 0.95 */
    cr_assert_eq(bench_fit_curve(n, y, 8, &cf, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect(cf.pieces == 2 && cf.all.r2 < BENCH_FIT_R2_MIN && cf.split == n[3], "%d %g %g",
              cf.pieces, cf.all.r2, cf.split);
    cr_expect(fabs(cf.upper.slope - 2) < 0.1 && cf.lower.slope < 1.5, "%g %g", cf.lower.slope,
              cf.upper.slope);
    for (int i = 0; i < 8; i++) y[i] = 0.02 * (i % 2 ? 1.04 : 0.97);
    cr_assert_eq(bench_fit_curve(n, y, 8, &cf, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect(cf.pieces == 1 && !(cf.all.r2 >= BENCH_FIT_R2_MIN) && cf.max_ratio < 1.1, "%g %g",
              cf.all.r2, cf.max_ratio);
    y[0] = y[1] = 1, y[2] = 10; /* R² 0.75 */
    cr_assert_eq(bench_fit_curve(n, y, 3, &cf, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(cf.pieces, 0, "r2 %g", cf.all.r2);
}

/* A run's recorded parameters parse for the figures whatever else the run wrote beside them: the
 * weights item (where a kind's weights came from) and "auto" (a default resolved per shape) are
 * skipped, so kinds with weights are drawn like any other (the report's patterns once left them
 * out); an item the kind does not have still fails. */
Test(plot, recorded_params_skip_the_weights_item_and_auto)
{
    const attn_ops *lf = attn_kind_find("linformer"), *full = attn_kind_find("full");
    cr_assert(lf && full);
    attn_params p;
    cr_assert(bench_recorded_params(lf, "k=32,share=none,weights=seed", &p));
    cr_expect_eq(p.v[attn_param_index(attn_kind_params(lf), "k")], 32);
    cr_assert(bench_recorded_params(full, "block_q=64,split=auto", &p));
    const int split = attn_param_index(attn_kind_params(full), "split");
    cr_expect_eq(p.v[split], full->params.defs[split].def);
    cr_expect(!bench_recorded_params(full, "nope=3", &p));
}
