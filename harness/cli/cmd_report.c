/*
 * cmd_report.c — `bench report FILE.h5 [--run ID] --out REPORT.html`: one self-contained HTML
 * page of a run: the command that reproduces it, the figures of `bench plot` drawn as SVG and
 * set inline (in the order its registry draws them, report/plot.h), the fits of `bench fit`
 * (computed as it does, the file is not changed), every point in a table sortable by any column,
 * and the machine and build facts. Nothing in the page comes from elsewhere (inline CSS, SVG and
 * script; report_html.h), so it can be mailed or archived as one file. The page is written beside
 * its destination and renamed into place once complete (store/atomic.h): a failure leaves no half
 * page and an older report untouched. The page never replaces the results file or another one.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "commands.h"
#include "pattern.h"
#include "report_html.h"
#include "targets.h"

/* A figure drawn into the scratch directory. */
typedef struct svg_file {
    char path[4400], name[256];
} svg_file;

typedef struct report {
    bench_run_data rd;
    bench_point *pts; /* every point of the file (the table shows the run's, failed ones too) */
    int64_t npts;
    bench_fit_row *fits;
    int64_t nfits;
    char dir[4096]; /* scratch directory of the figures ("" when none) */
    char *log;      /* what bench plot printed: "wrote ...", "skipped ..." */
    size_t log_len;
    char no_figures[ATTN_MSG_LEN]; /* why there is no figure, or "" */
    svg_file *svgs;                /* in the order bench plot drew them (its registry's) */
    int nsvgs;
} report;

/* Remove dir and everything under it (what bench plot wrote there). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
            else unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The run's figures as SVG into a scratch directory. A run with nothing to draw is no failure
 * (r->no_figures says why); gnuplot missing or failing is. */
static attn_status draw_figures(report *r, const char *path, char *msg, size_t msg_len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(r->dir, sizeof r->dir, "%s/attnbench-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(r->dir)) {
        const int e = errno;
        r->dir[0] = '\0';
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot make a temporary directory: %s",
                         strerror(e));
    }
    FILE *log = open_memstream(&r->log, &r->log_len);
    if (!log) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bench_plot_drawn drawn;
    attn_status st =
        bench_plot_results(path, r->rd.run.run_id, r->dir, "svg", log, &drawn, msg, msg_len);
    fclose(log);
    if (st == ATTN_ENODEF) { /* nothing to draw */
        snprintf(r->no_figures, sizeof r->no_figures, "%s", msg);
        st = ATTN_OK;
    }
    enum { PATTERN_FIGURES = 8 };
    if (!st && !(r->svgs = calloc((size_t)drawn.n + PATTERN_FIGURES, sizeof *r->svgs)))
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    for (int i = 0; !st && i < drawn.n; i++) {
        svg_file *s = &r->svgs[r->nsvgs++];
        snprintf(s->path, sizeof s->path, "%s/%s", r->dir, drawn.files[i]);
        const char *dot = strrchr(drawn.files[i], '.');
        snprintf(s->name, sizeof s->name, "%.*s",
                 (int)(dot ? dot - drawn.files[i] : (long)strlen(drawn.files[i])), drawn.files[i]);
    }
    bench_plot_drawn_free(&drawn);
    /* the scores each kind of the run computes (bench pattern) */
    char names[PATTERN_FIGURES][256];
    int npatterns = 0;
    if (!st && r->rd.n > 0)
        st = bench_pattern_run(&r->rd, r->dir, "svg", names, PATTERN_FIGURES, &npatterns, msg,
                               msg_len);
    for (int i = 0; !st && i < npatterns; i++) {
        svg_file *s = &r->svgs[r->nsvgs++];
        snprintf(s->path, sizeof s->path, "%s/%s", r->dir, names[i]);
        snprintf(s->name, sizeof s->name, "%.*s", (int)(strlen(names[i]) - 4), names[i]);
    }
    return st;
}

/* The whole of a (small) file, NUL-terminated; NULL if it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    char block[65536];
    for (size_t n; out && (n = fread(block, 1, sizeof block, f)) > 0;) fwrite(block, 1, n, out);
    const bool ok = !ferror(f);
    fclose(f);
    if (out) fclose(out);
    if (!ok) free(text);
    return ok ? text : NULL;
}

static attn_status put_figures(FILE *f, const report *r, char *msg, size_t msg_len)
{
    fputs("<h2 id=\"figures\">Figures</h2>\n", f);
    if (r->no_figures[0]) {
        fputs("<p class=\"note\">No figure: ", f);
        bench_html_text(f, r->no_figures);
        fputs(".</p>\n", f);
    }
    if (r->nsvgs) fputs("<div id=\"figure-list\">\n", f);
    for (int i = 0; i < r->nsvgs; i++) {
        char *svg = slurp(r->svgs[i].path), prefix[32];
        if (!svg) return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read %s", r->svgs[i].path);
        snprintf(prefix, sizeof prefix, "f%d-", i + 1);
        fprintf(f, "<figure id=\"fig-%d\">\n", i + 1);
        char why[ATTN_MSG_LEN];
        const attn_status st = bench_html_svg(f, svg, prefix, why, sizeof why);
        free(svg);
        if (st) return attn_fail(st, msg, msg_len, "figure %s: %s", r->svgs[i].name, why);
        fputs("<figcaption>", f);
        bench_html_text(f, r->svgs[i].name);
        fputs("</figcaption>\n</figure>\n", f);
    }
    if (r->nsvgs) fputs("</div>\n", f);
    /* the figures bench plot skipped, with its reasons */
    bool list = false;
    for (const char *line = r->log; line && *line;) {
        const char *end = strchr(line, '\n');
        const size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > 8 && strncmp(line, "skipped ", 8) == 0) {
            fputs(list ? "<li>" : "<p class=\"note\">Not drawn:</p>\n<ul class=\"note\">\n<li>", f);
            list = true;
            char text[1024];
            snprintf(text, sizeof text, "%.*s", (int)(len - 8), line + 8);
            bench_html_text(f, text);
            fputs("</li>\n", f);
        }
        line = end ? end + 1 : NULL;
    }
    if (list) fputs("</ul>\n", f);
    return ATTN_OK;
}

static void put_fits(FILE *f, const report *r)
{
    fputs("<h2 id=\"fits\">Fits</h2>\n", f);
    if (r->nfits == 0) {
        fputs("<p class=\"note\">No series was measured at 2 or more n: nothing to fit.</p>\n", f);
        return;
    }
    fputs("<p class=\"note\">As <code>bench fit</code> computes them: metric &asymp; prefactor "
          "&middot; n<sup>exponent</sup> by least squares on log-log axes, its 95 % confidence "
          "interval (Student's t) and R&sup2;; theory: the same slope of the kind's flop count "
          "(time) or of its q, k, v, out, workspace and state bytes (memory); vs full: where "
          "the metric falls below full's at the same settings.</p>\n"
          "<div class=\"scroll\"><table class=\"sortable\" id=\"fits-table\">\n<thead><tr>",
          f);
    bool pass = false, dtype = false; /* columns only when some series is not forward, f32 */
    for (int64_t i = 0; i < r->nfits; i++) {
        pass |= r->fits[i].pass[0] && strcmp(r->fits[i].pass, "forward") != 0;
        dtype |= r->fits[i].dtype[0] && strcmp(r->fits[i].dtype, "f32") != 0;
    }
    static const char *const text_cols[] = {"kind", "params", "dataset", "mode"};
    for (int c = 0; c < 4; c++) bench_html_th(f, text_cols[c], 0, NULL);
    if (pass) bench_html_th(f, "pass", 0, NULL);
    if (dtype) bench_html_th(f, "dtype", 0, "storage of q, k, v");
    static const char *const num_cols[] = {"causal", "H", "Hkv", "d", "q_len"};
    for (int c = 0; c < 5; c++) bench_html_th(f, num_cols[c], 1, NULL);
    bench_html_th(f, "metric", 0, NULL);
    static const char *const fit_cols[] = {"n from",  "n to",      "points", "exponent", "CI low",
                                           "CI high", "R\xC2\xB2", "theory", "prefactor"};
    for (int c = 0; c < 9; c++) bench_html_th(f, fit_cols[c], 1, NULL);
    bench_html_th(f, "vs full at the same settings", 0, NULL);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int64_t i = 0; i < r->nfits; i++) {
        const bench_fit_row *x = &r->fits[i];
        fputs("<tr>", f);
        bench_html_td(f, x->kind);
        bench_html_td(f, x->params);
        bench_html_td(f, x->dataset);
        bench_html_td(f, x->mode);
        if (pass) bench_html_td(f, x->pass);
        if (dtype) bench_html_td(f, x->dtype);
        const double v[] = {x->causal, (double)x->heads, (double)x->kv_heads, (double)x->head_dim,
                            (double)x->q_len};
        for (int c = 0; c < 5; c++) bench_html_td_num(f, v[c], "%.0f", 1);
        bench_html_td(f, x->metric);
        bench_html_td_num(f, (double)x->n_min, "%.0f", 1);
        bench_html_td_num(f, (double)x->n_max, "%.0f", 1);
        bench_html_td_num(f, x->points, "%.0f", 1);
        bench_html_td_num(f, x->exponent, "%.2f", 1);
        bench_html_td_num(f, x->exponent_lo, "%.2f", 1);
        bench_html_td_num(f, x->exponent_hi, "%.2f", 1);
        bench_html_td_num(f, x->r2, "%.4f", 1);
        bench_html_td_num(f, x->theory, "%.2f", 1);
        bench_html_td_num(f, x->prefactor, "%.3g", 1);
        char vs[200];
        bench_fit_crossover_text(x, vs, sizeof vs);
        bench_html_td(f, vs);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

/* The page's title, the line under it and the contents. */
static void put_header(FILE *f, const report *r)
{
    const char *slash = strrchr(r->rd.path, '/'), *file = slash ? slash + 1 : r->rd.path;
    char title[512];
    snprintf(title, sizeof title, "attnbench: run %lld of %s", (long long)r->rd.run.run_id, file);
    bench_html_begin(f, title);
    fputs("<header>\n<h1>", f);
    bench_html_text(f, title);
    fputs("</h1>\n<p>", f);
    int64_t *all = malloc((size_t)r->rd.n * sizeof *all);
    char common[512] = "";
    if (all) {
        for (int64_t i = 0; i < r->rd.n; i++) all[i] = i;
        bench_common_settings(&r->rd, all, r->rd.n, BENCH_K_ALL & ~BENCH_K_N, common,
                              sizeof common);
        free(all);
    }
    bench_html_textf(f, "Started %s on %s, %d thread%s; %lld measured points%s%s.",
                     r->rd.run.started_at, r->rd.run.host, r->rd.run.threads,
                     r->rd.run.threads == 1 ? "" : "s", (long long)r->rd.n,
                     common[0] ? ", all " : "", common);
    if (r->rd.failed) bench_html_textf(f, " %lld failed points.", (long long)r->rd.failed);
    fputs("</p>\n<nav><a href=\"#reproduce\">Reproduce</a><a href=\"#figures\">Figures</a>"
          "<a href=\"#fits\">Fits</a><a href=\"#points\">Points</a>"
          "<a href=\"#machine\">Machine and build</a></nav>\n</header>\n<main>\n",
          f);
}

static attn_status put_page(FILE *f, const report *r, char *msg, size_t msg_len)
{
    put_header(f, r);
    bench_html_command(f, &r->rd.run);
    const attn_status st = put_figures(f, r, msg, msg_len);
    if (st) return st;
    put_fits(f, r);
    bench_html_points(f, r->pts, r->npts, r->rd.run.run_id);
    bench_html_run_facts(f, &r->rd.run);
    char now[32];
    const time_t t = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fputs("<p class=\"note\">Written by <code>bench report</code> at ", f);
    bench_html_text(f, now);
    fputs(" from ", f);
    bench_html_text(f, r->rd.path);
    fputs(".</p>\n", f);
    bench_html_end(f);
    return ATTN_OK;
}

/* The page into a temporary file beside out_path, renamed over it once complete (atomic.h). */
static attn_status write_page(const report *r, const char *out_path, char *msg, size_t msg_len)
{
    char tmp[BENCH_PATH_MAX];
    FILE *f = bench_tmp_fopen(out_path, tmp, sizeof tmp, msg, msg_len);
    if (!f) return ATTN_EFAIL;
    return bench_tmp_fclose(f, tmp, out_path, put_page(f, r, msg, msg_len), msg, msg_len);
}

attn_status bench_report_write(const char *path, int64_t run_id, const char *out_path, char *msg,
                               size_t msg_len)
{
    const bench_input input = {"", path};
    if (bench_check_target(out_path, "--out", BENCH_TARGET_FILE, &input, 1, msg, msg_len))
        return ATTN_EINVAL;
    report r = {0};
    attn_status st = bench_run_load(path, run_id, &r.rd, msg, msg_len);
    if (st) return st;
    st = bench_store_read_points(path, &r.pts, &r.npts, msg, msg_len);
    if (!st && bench_fit_compute(&r.rd, &r.fits, &r.nfits))
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory fitting %lld points",
                       (long long)r.rd.n);
    if (!st) st = draw_figures(&r, path, msg, msg_len);
    if (!st) st = write_page(&r, out_path, msg, msg_len);
    if (!st)
        printf("report: run %lld of %s, %d figure%s, %lld fits, %lld points in %s\n",
               (long long)r.rd.run.run_id, path, r.nsvgs, r.nsvgs == 1 ? "" : "s",
               (long long)r.nfits, (long long)r.rd.n, out_path);
    if (r.dir[0]) remove_tree(r.dir);
    free(r.svgs);
    free(r.log);
    free(r.fits);
    free(r.pts);
    bench_run_data_free(&r.rd);
    return st;
}

int bench_cmd_report(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *out_s = NULL;
    const bench_opt opts[] = {
        {"--out", "FILE", "the HTML page to write (required), e.g. report.html", &out_s},
        {"--run", "ID", "the run to report (default: the last run in the file)", &run_s},
        {"--help", NULL, "this help", &help},
    };
    const char *file = NULL;
    char msg[ATTN_MSG_LEN];
    int64_t run_id = 0;
    if (bench_parse_file_args(argc, argv, opts, BENCH_COUNT(opts), "report", &file, &run_s, &run_id,
                              msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench report FILE.h5 [--run ID] --out REPORT.html",
            "Writes one self-contained HTML page about a run (inline figures, style and script;\n"
            "nothing loaded from elsewhere, so it can be mailed or archived as one file): the\n"
            "command that reproduces the run, the figures of bench plot (as SVG), the fits of\n"
            "bench fit (computed, the results file is not changed), every point in a table that\n"
            "sorts by any column on a click, and the machine and build facts.",
            opts, BENCH_COUNT(opts));
        return 0;
    }
    if (!file)
        return bench_fail(
            ATTN_EINVAL,
            "bench report needs a results file: bench report FILE.h5 --out REPORT.html");
    if (!out_s)
        return bench_fail(ATTN_EINVAL,
                          "bench report needs --out: bench report FILE.h5 --out REPORT.html");
    const attn_status st = bench_report_write(file, run_id, out_s, msg, sizeof msg);
    return st ? bench_fail(st, msg) : 0;
}
