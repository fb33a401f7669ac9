/*
 * test_report.c — `bench report` through the CLI on synthetic results files (plot_fixture.h),
 * reading the page as text (the browser test, tests/test_report_browser.py, loads it in
 * Chromium): one inline figure per figure bench plot draws, with ids unique across the page;
 * nothing loaded from elsewhere; text from the file (a command, a kind parameter, a dataset, a
 * host holding < & " ') escaped everywhere; the fits and points tables; a run with nothing to
 * draw still reported; bad usage exits 2 and a missing gnuplot 1, neither leaving a page or
 * touching an older one. Also the shell quoting of the recorded command (bench_join_args).
 * Tests that draw are skipped where gnuplot is not installed.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "plot_fixture.h"
#include "report_html.h"
#include "results.h"
#include "test_run.h"

static char dir[256], file[300], page[300];
static char *html; /* the last page read */

/* Run 3: a run whose strings hold HTML's special characters, over n = 256, 512. */
static int write_nasty_run(bench_store *st)
{
    bench_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-22T03:05:00Z");
    snprintf(run.command, sizeof run.command,
             "bench sweep --set 'w=<b>1</b>' --out 'a&amp;b \"q\".h5' </script><script>x()");
    snprintf(run.host, sizeof run.host, "host<h>&'");
    snprintf(run.cpu_model, sizeof run.cpu_model, "CPU <c> & \"d\"");
    run.threads = 1, run.blas_threads = 1, run.seed = 1;
    char msg[ATTN_MSG_LEN];
    if (bench_store_begin_run(st, &run, msg, sizeof msg) != ATTN_OK) return 1;
    ds_rng r = ds_rng_stream(3, 5);
    int bad = 0;
    for (int64_t n = 256; n <= 512 && !bad; n *= 2) {
        pf_point p = {.kind = "full",
                      .params = "block_q=<i>&\"'",
                      .dataset = "ga<u>ss&\"'",
                      .heads = 8,
                      .kv_heads = 8,
                      .n = n,
                      .time_s = 1e-3 * (double)n,
                      .flops = 1e9,
                      .rel_err = 1e-7,
                      .workspace = 4096};
        bad |= pf_add(st, &p, 0, &r);
    }
    return bad;
}

/* Run 4: one point: nothing to draw or fit. */
static int write_single_point(bench_store *st)
{
    ds_rng r = ds_rng_stream(4, 5);
    pf_point p = {.kind = "full",
                  .params = PF_FULL,
                  .heads = 8,
                  .kv_heads = 8,
                  .n = 256,
                  .time_s = 1e-3,
                  .flops = 1e9,
                  .rel_err = 1e-7};
    return pf_begin(st) || pf_add(st, &p, 0, &r);
}

static void write_fixture(void)
{
    snprintf(dir, sizeof dir, "/tmp/attnbench-report-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/syn.h5", dir);
    snprintf(page, sizeof page, "%s/report.html", dir);
    bench_store *st;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_open(file, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(pf_write_scaling(st, 0.03, 1), 0);
    cr_assert_eq(pf_write_heads(st, false), 0);
    cr_assert_eq(write_nasty_run(st), 0);
    cr_assert_eq(write_single_point(st), 0);
    bench_store_close(st);
    (void)pf_write_kinds; /* plot_fixture.h's many-series file: not used here */
}

static void remove_dir(void)
{
    free(html);
    html = NULL;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(report, .init = write_fixture, .fini = remove_dir, .timeout = 120);

/* The page at path into html (NULL when absent). */
static const char *read_page(const char *path)
{
    free(html);
    html = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    rewind(f);
    html = malloc((size_t)len + 1);
    cr_assert_not_null(html);
    html[fread(html, 1, (size_t)len, f)] = '\0';
    fclose(f);
    return html;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *s = text; (s = strstr(s, what)); s += strlen(what)) n++;
    return n;
}

/* Body rows of the table with this id in html (-1: no such table). */
static int rows_in(const char *id)
{
    char open[64];
    snprintf(open, sizeof open, "<table class=\"sortable\" id=\"%s\"", id);
    const char *t = strstr(html, open), *end = t ? strstr(t, "</table>") : NULL;
    if (!end) return -1;
    int n = 0;
    for (const char *s = strstr(t, "<tbody>"); s && (s = strstr(s, "<tr")) && s < end; s += 3) n++;
    return n;
}

/* Nothing in the page refers outside it: no src, no href but to #fragments (and the empty data:
 * icon, and PNG data inline: the pattern figures' rasters), no url() but to #ids, "http" only in
 * the SVG namespaces and http-equiv. */
static void expect_self_contained(const char *text)
{
    cr_expect_eq(count(text, "src="), 0, "the page loads something (src=)");
    for (const char *s = text; (s = strstr(s, "href=")); s += 5)
        cr_expect(s[6] == '#' || strncmp(s + 6, "data:,", 6) == 0 ||
                      strncmp(s + 6, "data:image/png;base64,", 22) == 0,
                  "a link outside the page: %.60s", s);
    for (const char *s = text; (s = strstr(s, "url(")); s += 4)
        cr_expect_eq(s[4], '#', "url() outside the page: %.40s", s);
    for (const char *s = text; (s = strstr(s, "http")); s += 4)
        cr_expect(strncmp(s, "http-equiv", 10) == 0 ||
                      strncmp(s, "http://www.w3.org/2000/svg\"", 27) == 0 ||
                      strncmp(s, "http://www.w3.org/1999/xlink\"", 29) == 0,
                  "an address in the page: %.60s", s);
    cr_expect(strstr(text, "Content-Security-Policy\" content=\"default-src 'none';") != NULL);
}

/* Every id="..." or id='...' of the page differs from every other. */
static void expect_unique_ids(const char *text)
{
    char(*ids)[64] = calloc(20000, sizeof *ids);
    int n = 0, twice = 0;
    for (const char *s = text; (s = strstr(s, " id=")) && n < 20000; s += 4) {
        const char q = s[4];
        const char *end = strchr(s + 5, q);
        cr_assert(end && end - s - 5 < 64);
        snprintf(ids[n], sizeof ids[n], "%.*s", (int)(end - s - 5), s + 5);
        for (int k = 0; k < n; k++)
            if (strcmp(ids[k], ids[n]) == 0 && twice++ == 0) cr_expect_fail("id %s twice", ids[n]);
        n++;
    }
    cr_expect_eq(twice, 0, "%d ids used twice", twice);
    cr_expect_gt(n, 100, "only %d ids", n);
    free(ids);
}

Test(report, a_scaling_run_gives_one_self_contained_page_with_every_figure_fit_and_point)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    cr_assert_eq(bench_env("", "report %s --run 1 --out %s", file, page), 0, "%s", err_text);
    cr_assert_not_null(read_page(page));
    /* the 14 figures of test_plot's scaling run (speedup_vs_n among them) and the patterns of its
     * kinds, inline, each named */
    cr_expect(strstr(out_text, "15 figures") != NULL, "%s", out_text);
    cr_expect_eq(count(html, "<figure "), 15);
    cr_expect_eq(count(html, "<svg"), 15);
    cr_expect(strstr(html, "<figcaption>patterns</figcaption>") != NULL, "no patterns figure");
    cr_expect_geq(count(html, "data:image/png;base64,"), 2, "the patterns have no panels");
    cr_expect_eq(count(html, "<?xml"), 0, "an XML declaration left inside the page");
    const char *names[] = {"time_vs_n", "memory_vs_n_decode", "accuracy_vs_window_needle",
                           "speedup_vs_n"};
    for (int k = 0; k < 4; k++) {
        char caption[96];
        snprintf(caption, sizeof caption, "<figcaption>%s</figcaption>", names[k]);
        cr_expect(strstr(html, caption) != NULL, "no figure %s", names[k]);
    }
    cr_expect(strstr(html, "time_vs_heads.svg: no series was measured") != NULL,
              "the skipped figures are not listed");
    expect_self_contained(html);
    expect_unique_ids(html);
    cr_expect_eq(count(html, "<script"), 1);
    /* fits: full, window 64 and 256, lowrank, each causal 0 and 1, at least time and memory */
    cr_expect_geq(rows_in("fits-table"), 16, "%d fit rows", rows_in("fits-table"));
    cr_expect(strstr(strstr(html, "id=\"fits-table\""), "faster above n=") != NULL,
              "no crossover with full in the fits");
    /* every point of run 1 is a row */
    bench_point *pts;
    int64_t npts, run1 = 0;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_read_points(file, &pts, &npts, msg, sizeof msg), ATTN_OK);
    for (int64_t i = 0; i < npts; i++) run1 += pts[i].run_id == 1;
    free(pts);
    cr_expect_eq(rows_in("points-table"), run1);
    /* the recorded program (bench) reproduced as the launcher, ./bench */
    cr_expect(strstr(html, "<code>./bench sweep (synthetic)</code>") != NULL);
    cr_expect(strstr(html, "Synthetic CPU") != NULL);
}

Test(report, text_from_the_file_is_escaped_in_tables_figures_and_the_command)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    cr_assert_eq(bench_env("", "report %s --run 3 --out %s", file, page), 0, "%s", err_text);
    cr_assert_not_null(read_page(page));
    const char *raw[] = {"<b>", "</b>", "<i>", "<u>", "<h>", "<c>", "</script><script>"};
    for (int k = 0; k < 7; k++) cr_expect(strstr(html, raw[k]) == NULL, "%s unescaped", raw[k]);
    cr_expect_eq(count(html, "<script"), 1, "a second script in the page");
    cr_expect_eq(count(html, "</script>"), 1);
    cr_expect(strstr(html,
                     "bench sweep --set &#39;w=&lt;b&gt;1&lt;/b&gt;&#39; --out &#39;a&amp;amp;b "
                     "&quot;q&quot;.h5&#39; &lt;/script&gt;&lt;script&gt;x()") != NULL,
              "the command is not shown escaped");
    cr_expect(strstr(html, "<td>block_q=&lt;i&gt;&amp;&quot;&#39;</td>") != NULL);
    cr_expect(strstr(html, "<td>host&lt;h&gt;&amp;&#39;</td>") != NULL);
    /* in the figures: gnuplot writes < as &lt;, and every & starts a reference */
    const char *svg = strstr(html, "<svg");
    cr_assert_not_null(svg);
    cr_expect(strstr(svg, "ga&lt;u>ss") != NULL, "the dataset is not in the figures");
    static const char name[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789#";
    int bare = 0;
    const char *first = NULL;
    for (const char *s = html; (s = strchr(s, '&')); s++) {
        const size_t n = strspn(s + 1, name);
        if (n == 0 || s[1 + n] != ';') bare++, first = first ? first : s;
    }
    cr_expect_eq(bare, 0, "%d bare &, the first: %.40s", bare, first ? first : "");
    expect_self_contained(html);
}

Test(report, a_run_with_nothing_to_draw_or_fit_is_still_reported)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    cr_assert_eq(bench_env("", "report %s --out %s", file, page), 0, "%s", err_text);
    cr_assert_not_null(read_page(page));
    /* no figure of bench plot; the pattern of its kind */
    cr_expect(strstr(out_text, "run 4") && strstr(out_text, "1 figure,"), "%s", out_text);
    cr_expect(strstr(html, "No figure: run 4 of") != NULL);
    cr_expect(strstr(html, "nothing to fit") != NULL);
    cr_expect_eq(count(html, "<svg"), 1);
    cr_expect(strstr(html, "<figcaption>patterns</figcaption>") != NULL, "no patterns figure");
    cr_expect_eq(rows_in("points-table"), 1);
}

/* cmd fails with status and a one-line message holding what; no page, the old one kept. */
static void expect_refused(const char *env, int status, const char *what, const char *args)
{
    FILE *f = fopen(page, "w");
    fputs("old report", f);
    fclose(f);
    cr_expect_eq(bench_env(env, "%s", args), status, "bench %s: %s", args, err_text);
    cr_expect(strstr(err_text, what) != NULL && count(err_text, "\n") == 1, "bench %s: %s", args,
              err_text);
    cr_expect_str_eq(read_page(page), "old report", "bench %s changed the old page", args);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    char n[16] = "";
    cr_expect(fgets(n, sizeof n, p) && atoi(n) == 0, "temporary files left in %s", dir);
    pclose(p);
}

Test(report, bad_usage_exits_2_and_a_missing_gnuplot_1_leaving_no_page)
{
    char args[1024], env[600];
    snprintf(args, sizeof args, "report %s", file);
    expect_refused("", 2, "needs --out", args);
    snprintf(args, sizeof args, "report --out %s", page);
    expect_refused("", 2, "needs a results file", args);
    snprintf(args, sizeof args, "report %s --run 9 --out %s", file, page);
    expect_refused("", 2, "run 9", args);
    snprintf(args, sizeof args, "report %s --out %s", page, page);
    expect_refused("", 2, page, args);
    snprintf(args, sizeof args, "report %s --out %s/no/such/dir/r.html", file, dir);
    expect_refused("", 2, "--out", args);
    snprintf(env, sizeof env, "PATH=%s/nowhere", dir);
    snprintf(args, sizeof args, "report %s --run 1 --out %s", file, page);
    expect_refused(env, 1, "gnuplot is not installed", args);
}

Test(report, the_recorded_command_is_shell_quoted_and_runs_again_as_typed)
{
    char *argv[] = {"bench", "sweep", "--set", "w=1,2", "a b", "it's", "x<y>&", "", "$HOME"};
    char joined[1024];
    bench_join_args(9, argv, joined, sizeof joined);
    cr_expect_str_eq(joined, "bench sweep --set w=1,2 'a b' 'it'\\''s' 'x<y>&' '' '$HOME'");
    /* a shell splits it back into the same words */
    char cmd[1200], words[1024] = "";
    snprintf(cmd, sizeof cmd, "printf '[%%s]' %s", joined);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(words, sizeof words, p));
    pclose(p);
    cr_expect_str_eq(words, "[bench][sweep][--set][w=1,2][a b][it's][x<y>&][][$HOME]");
    /* cut short: still a string within the buffer */
    char small[12];
    bench_join_args(9, argv, small, sizeof small);
    cr_expect_eq(strlen(small), 11u, "%s", small);
}

/* A run measured mostly causal, with two kinds defined without a mask (the default sweep's
 * shape): the page opens with the causal figures, the two-kind non-causal ones after them. The
 * tables wrap: parameter lists break after their commas, headers after their underscores. The
 * recorded program, wherever the binary was, reads ./bench. */
Test(report, main_figures_first_and_tables_that_wrap)
{
    if (!have_gnuplot()) cr_skip_test("gnuplot is not installed");
    char mixed[320], out[320];
    snprintf(mixed, sizeof mixed, "%s/mixed.h5", dir);
    snprintf(out, sizeof out, "%s/mixed.html", dir);
    bench_store *st;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_open(mixed, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.command, sizeof run.command, "/somewhere/build/harness/bench sweep --n 256,512");
    run.threads = 2, run.blas_threads = 1, run.seed = 1;
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    ds_rng r = ds_rng_stream(6, 5);
    for (int w = 1; w <= 14; w++) /* 14 causal series: more than a figure holds */
        for (int64_t n = 256; n <= 512; n *= 2) {
            char params[48];
            snprintf(params, sizeof params, "window=%d,alibi=0,softcap=0", 8 * w);
            pf_point p = {.kind = "window",
                          .params = params,
                          .causal = 1,
                          .heads = 8,
                          .kv_heads = 8,
                          .n = n,
                          .time_s = 1e-6 * (double)(n * w),
                          .flops = 1e9,
                          .rel_err = 1e-3,
                          .workspace = 4096};
            cr_assert_eq(pf_add(st, &p, 0, &r), 0);
        }
    const char *const plain[] = {"linformer", "nystrom"};
    for (int k = 0; k < 2; k++)
        for (int64_t n = 256; n <= 512; n *= 2) {
            pf_point p = {.kind = plain[k],
                          .params = "k=64",
                          .causal = 0,
                          .heads = 8,
                          .kv_heads = 8,
                          .n = n,
                          .time_s = 1e-6 * (double)n,
                          .flops = 1e9,
                          .rel_err = 1e-2,
                          .workspace = 4096};
            cr_assert_eq(pf_add(st, &p, 0, &r), 0);
        }
    bench_store_close(st);
    cr_assert_eq(bench_env("", "report %s --out %s", mixed, out), 0, "%s", err_text);
    cr_assert_not_null(read_page(out));
    const char *first = strstr(html, "<figcaption>");
    cr_assert_not_null(first, "no figure");
    cr_expect(strncmp(first, "<figcaption>time_vs_n_causal</figcaption>", 41) == 0,
              "the first figure: %.60s", first);
    const char *causal = strstr(html, "<figcaption>time_vs_n_causal<");
    const char *noncausal = strstr(html, "<figcaption>time_vs_n_noncausal<");
    cr_expect(causal && noncausal && causal < noncausal, "causal figures before non-causal ones");
    cr_expect(strstr(html, "window=8,<wbr>alibi=0,<wbr>softcap=0") != NULL,
              "a parameter list breaks after its commas");
    cr_expect(strstr(html, ">max_<wbr>abs_<wbr>err</th>") != NULL, "headers break too");
    cr_expect(strstr(html, "<code>./bench sweep --n 256,512</code>") != NULL,
              "the program as ./bench");
    unlink(mixed);
    unlink(out);
}

/* An inline PNG (gnuplot's `with image` in SVG: the pattern figures) stays as it is; any other
 * data: or outside reference is refused, and nothing is written then. */
Test(report, inline_png_data_is_kept_and_other_references_refused)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_html_svg(f,
                                "<svg><image xlink:href='data:image/png;base64,iVBO+/w=='/>"
                                "<use xlink:href='#a'/></svg>",
                                "p-", msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    fflush(f);
    cr_expect(strstr(text, "xlink:href='data:image/png;base64,iVBO+/w=='") != NULL, "%s", text);
    cr_expect(strstr(text, "xlink:href='#p-a'") != NULL, "%s", text);
    const char *bad[] = {"<svg><image xlink:href='data:text/html;base64,PHg+'/></svg>",
                         "<svg><image xlink:href='data:image/png;base64,iV BO'/></svg>",
                         "<svg><image href='https://x.org/a.png'/></svg>"};
    for (int k = 0; k < 3; k++) {
        const size_t before = len;
        cr_expect_eq(bench_html_svg(f, bad[k], "p-", msg, sizeof msg), ATTN_EFAIL, "%s", bad[k]);
        fflush(f);
        cr_expect_eq(len, before, "%s: written although refused", bad[k]);
    }
    fclose(f);
    free(text);
}
