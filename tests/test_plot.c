/*
 * test_plot.c — `bench plot` and `bench fit` on synthetic results files with known answers
 * (plot_fixture.h), through the CLI: the figures a run calls for are written as real images
 * (PNG magic and size, SVG, PDF) and the others skipped with a reason; bad files, empty runs
 * and bad options exit 2 with one line; a missing or failing gnuplot exits 1 and leaves no image
 * and no temporary files; fit recovers the exponents and crossovers the fixture was built with,
 * and replaces its /fits rows. Also the series grouping underneath: 'auto' parameters, labels.
 * Tests that draw are skipped where gnuplot is not installed.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_fixture.h"
#include "results.h"
#include "series.h"
#include "test_run.h"

static char dir[256], file[300];
static char out_text[1 << 16], err_text[1 << 16];

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

/* Run `ENV bench ARGS` through sh (env: assignments such as PATH=..., or ""); exit status, with
 * stdout and stderr in out_text and err_text. Paths here have no spaces or quotes. */
static int bench_env(const char *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int st = tu_vbench(env, out_text, sizeof out_text, err_text, sizeof err_text, fmt, ap);
    va_end(ap);
    return st;
}

static bool have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

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
    cr_expect(strstr(out_text, "plots: 13 figures of run 1") != NULL, "%s", out_text);

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
    static const char *const cost[] = {"time_vs_n", "memory_vs_n", "throughput_vs_n"};
    static const char *const ds[] = {"gaussian", "local", "needle"};
    static const char *const causal[] = {"_noncausal", "_causal"};
    int expected = 0;
    for (int c = 0; c < 2; c++) {
        char path[700];
        for (int k = 0; k < 3; k++, expected++) {
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

static void resolve_stride(const attn_shape *s, attn_params *p)
{
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
