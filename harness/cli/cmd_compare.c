/*
 * cmd_compare.c — `bench compare A.h5[:RUN] B.h5[:RUN] [--fail-above PCT] [--plot PATH]`: the
 * points of two runs matched by their settings, per point the ratio of median times B/A with a
 * 95 % bootstrap interval from the stored repetitions (report/compare.h), what is significant,
 * the geometric mean ratio, the points left unmatched; exit 1 on a significant slowdown above
 * PCT %, and a figure of the ratios.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "compare.h"
#include "targets.h"

/* One side of the comparison: a run of a file and the file's repetitions (sorted). */
typedef struct side {
    char path[4096];
    int64_t run_id; /* as asked: 0 for the last */
    bench_run_data rd;
    bench_sample *samples;
    int64_t nsamples;
} side;

/* "FILE" or "FILE:RUN" (an existing file whose name ends in ":N" is taken whole). */
static attn_status parse_side(const char *arg, side *sd, char *msg, size_t msg_len)
{
    memset(sd, 0, sizeof *sd);
    const char *colon = strrchr(arg, ':');
    if (!colon || access(arg, F_OK) == 0 || strlen(colon + 1) == 0 ||
        strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
        snprintf(sd->path, sizeof sd->path, "%s", arg);
        return ATTN_OK;
    }
    snprintf(sd->path, sizeof sd->path, "%.*s", (int)(colon - arg), arg);
    return bench_parse_i64(colon + 1, "the run after ':'", 1, INT64_MAX, &sd->run_id, msg, msg_len);
}

static attn_status load_side(side *sd, char *msg, size_t msg_len)
{
    attn_status st = bench_run_load(sd->path, sd->run_id, &sd->rd, msg, msg_len);
    if (st != ATTN_OK) return st;
    st = bench_store_read_samples(sd->path, &sd->samples, &sd->nsamples, msg, msg_len);
    if (st == ATTN_OK) bench_samples_sort(sd->samples, sd->nsamples);
    return st;
}

static void side_free(side *sd)
{
    bench_run_data_free(&sd->rd);
    free(sd->samples);
}

/* The repetition times of point p of sd (its median alone when none are stored) into *buf
 * (grown as needed); returns how many, or -1 out of memory. */
static int64_t point_times(const side *sd, int64_t p, double **buf, char *msg, size_t msg_len)
{
    const bench_point *pt = &sd->rd.pts[p];
    int64_t first, n;
    bench_samples_of(sd->samples, sd->nsamples, pt->run_id, pt->point_id, &first, &n);
    double *t = realloc(*buf, (size_t)(n > 0 ? n : 1) * sizeof *t);
    if (!t) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory"), -1;
    *buf = t;
    for (int64_t i = 0; i < n; i++) t[i] = sd->samples[first + i].seconds;
    if (n == 0) t[0] = pt->time_median_s, n = 1;
    return n;
}

/* The comparison: per point of a, its ratio (when matched); the labels; the summary. */
typedef struct comparison {
    bench_compare_row *rows; /* per matched point, in a's order */
    int64_t *a_idx;          /* per row: the point of a */
    int64_t nrows;
    double *sum_log; /* per bootstrap draw: the sum over rows of ln(ratio) */
    int faster, slower, no_interval;
} comparison;

static void comparison_free(comparison *c)
{
    free(c->rows);
    free(c->a_idx);
    free(c->sum_log);
}

/* Label of point i of rd among all of rd's points (kind, then the settings that differ). */
static void point_label(const bench_run_data *rd, bench_series *one, int64_t i, char *buf,
                        size_t len)
{
    const bench_group_by all = {BENCH_K_ALL, NULL};
    bench_series_label(rd, one, rd->n, i, all, buf, len);
}

/* Singleton series over every point of rd (for labels); NULL when out of memory. */
static bench_series *singletons(const bench_run_data *rd, int64_t **idx)
{
    bench_series *s = malloc((size_t)rd->n * sizeof *s);
    *idx = malloc((size_t)rd->n * sizeof **idx);
    if (!s || !*idx) {
        free(s);
        free(*idx);
        return NULL;
    }
    for (int64_t i = 0; i < rd->n; i++) (*idx)[i] = i, s[i] = (bench_series){*idx + i, 1};
    return s;
}

/* The distinct values of text setting `at` of rd's points, "forward" or "f32 bf16", appended to
 * buf at *w. */
static void distinct_values(const bench_run_data *rd, size_t at, char *buf, size_t len, int *w)
{
    for (int64_t i = 0, said = 0; i < rd->n && *w < (int)len; i++) {
        const char *v = (const char *)&rd->pts[i] + at;
        bool seen = false;
        for (int64_t j = 0; j < i && !seen; j++)
            seen = strcmp((const char *)&rd->pts[j] + at, v) == 0;
        if (!seen) *w += snprintf(buf + *w, len - (size_t)*w, "%s%s", said++ ? " " : "", v);
    }
}

/* What sets the runs' points apart beyond their shapes: "pass forward, dtype f32". */
static void pass_and_dtype(const bench_run_data *rd, char *buf, size_t len)
{
    int w = snprintf(buf, len, "pass ");
    distinct_values(rd, offsetof(bench_point, pass), buf, len, &w);
    if (w < (int)len) w += snprintf(buf + w, len - (size_t)w, ", dtype ");
    distinct_values(rd, offsetof(bench_point, dtype), buf, len, &w);
}

static attn_status compare_points(const side *a, const side *b, const bench_match *m, comparison *c,
                                  char *msg, size_t msg_len)
{
    *c = (comparison){0};
    c->rows = calloc((size_t)(m->matched ? m->matched : 1), sizeof *c->rows);
    c->a_idx = malloc((size_t)(m->matched ? m->matched : 1) * sizeof *c->a_idx);
    c->sum_log = calloc(BENCH_BOOT_RESAMPLES, sizeof *c->sum_log);
    double *draws = malloc(BENCH_BOOT_RESAMPLES * sizeof *draws), *ta = NULL, *tb = NULL;
    int64_t *idx = NULL;
    bench_series *one = singletons(&a->rd, &idx);
    attn_status st = c->rows && c->a_idx && c->sum_log && draws && one
                         ? ATTN_OK
                         : attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory comparing");
    for (int64_t i = 0; i < a->rd.n && st == ATTN_OK; i++) {
        const int64_t j = m->b_of_a[i];
        if (j < 0) continue;
        const int64_t na = point_times(a, i, &ta, msg, msg_len);
        const int64_t nb = na < 0 ? -1 : point_times(b, j, &tb, msg, msg_len);
        if (nb < 0) {
            st = ATTN_EFAIL;
            break;
        }
        bench_compare_row *row = &c->rows[c->nrows];
        st = bench_ratio_of_medians(ta, na, tb, nb, (uint64_t)i, &row->r, draws);
        if (st != ATTN_OK) {
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory comparing");
            break;
        }
        point_label(&a->rd, one, i, row->label, sizeof row->label);
        for (int d = 0; d < BENCH_BOOT_RESAMPLES; d++) c->sum_log[d] += draws[d];
        c->faster += row->r.change < 0;
        c->slower += row->r.change > 0;
        c->no_interval += isnan(row->r.lo);
        c->a_idx[c->nrows++] = i;
    }
    free(draws);
    free(ta);
    free(tb);
    free(one);
    free(idx);
    return st;
}

static void print_side(const char *name, const side *sd)
{
    const bench_run *r = &sd->rd.run;
    printf("%s: %s run %lld (%s, %s, %s, %d thread%s, commit %s)\n", name, sd->path,
           (long long)r->run_id, r->started_at, r->host[0] ? r->host : "?", r->cpu_model,
           (int)r->threads, r->threads == 1 ? "" : "s", r->git_commit);
}

static void print_rows(const side *a, const side *b, const bench_match *m, const comparison *c)
{
    int width = 5;
    for (int64_t r = 0; r < c->nrows; r++)
        if ((int)strlen(c->rows[r].label) > width) width = (int)strlen(c->rows[r].label);
    printf("%-*s  %12s  %12s  %7s  %-17s  %s\n", width, "point", "A median ms", "B median ms",
           "B/A", "95% CI", "change");
    for (int64_t r = 0; r < c->nrows; r++) {
        const bench_ratio *q = &c->rows[r].r;
        const int64_t i = c->a_idx[r], j = m->b_of_a[i];
        char ci[48] = "-";
        if (!isnan(q->lo)) snprintf(ci, sizeof ci, "[%.3f, %.3f]", q->lo, q->hi);
        const char *verdict = isnan(q->lo)    ? "(too few repetitions for an interval)"
                              : q->change < 0 ? "faster *"
                              : q->change > 0 ? "slower *"
                                              : "";
        char pct[32] = "";
        if (q->change) snprintf(pct, sizeof pct, " (%+.1f%%)", 100 * (q->ratio - 1));
        printf("%-*s  %12.4g  %12.4g  %7.3f  %-17s  %s%s\n", width, c->rows[r].label,
               a->rd.pts[i].time_median_s * 1e3, b->rd.pts[j].time_median_s * 1e3, q->ratio, ci,
               verdict, pct);
    }
}

/* The points of one side that have no match, by label. */
static void print_unmatched(const char *name, const bench_run_data *rd, const int64_t *other,
                            int64_t unmatched)
{
    if (unmatched == 0) return;
    int64_t *idx = NULL;
    bench_series *one = singletons(rd, &idx);
    printf("only in %s (%lld point%s, not compared):", name, (long long)unmatched,
           unmatched == 1 ? "" : "s");
    for (int64_t i = 0, said = 0; i < rd->n && one; i++) {
        if (other[i] >= 0) continue;
        char label[160];
        point_label(rd, one, i, label, sizeof label);
        printf("%s %s", said++ ? ";" : "", label);
    }
    printf("\n");
    free(one);
    free(idx);
}

static void print_summary(const side *a, const side *b, const bench_match *m, comparison *c)
{
    print_unmatched("A", &a->rd, m->b_of_a, a->rd.n - m->matched);
    print_unmatched("B", &b->rd, m->a_of_b, b->rd.n - m->matched);
    if (a->rd.failed || b->rd.failed)
        printf("failed points left out: %lld in A, %lld in B\n", (long long)a->rd.failed,
               (long long)b->rd.failed);
    double sum = 0;
    for (int64_t r = 0; r < c->nrows; r++) sum += log(c->rows[r].r.ratio);
    const double n = (double)c->nrows;
    for (int d = 0; d < BENCH_BOOT_RESAMPLES; d++) c->sum_log[d] /= n;
    double lo, hi;
    bench_interval95(c->sum_log, BENCH_BOOT_RESAMPLES, &lo, &hi);
    printf("summary: %lld points compared: %d faster, %d slower, %lld without significant "
           "change%s; geometric mean B/A %.3f [%.3f, %.3f]\n",
           (long long)c->nrows, c->faster, c->slower, (long long)(c->nrows - c->faster - c->slower),
           c->no_interval ? " (some without an interval)" : "", exp(sum / n), exp(lo), exp(hi));
    printf("B/A: median time of B / median time of A (below 1: B faster). 95%% CI: percentile "
           "bootstrap of that ratio\nover the stored repetitions (%d resamples, fixed seed); "
           "* marks an interval that excludes 1.\n",
           BENCH_BOOT_RESAMPLES);
}

/* The points slowed down significantly by more than pct %; their count (0 when pct < 0). */
static int regressions(const comparison *c, double pct)
{
    int n = 0;
    for (int64_t r = 0; pct >= 0 && r < c->nrows; r++)
        n += c->rows[r].r.change > 0 && c->rows[r].r.ratio > 1 + pct / 100;
    return n;
}

static attn_status draw(const side *a, const side *b, const comparison *c, const char *dest,
                        char *msg, size_t msg_len)
{
    char title[256], sub[600];
    snprintf(title, sizeof title, "B / A: median time per point, with 95 %% bootstrap intervals");
    const bench_run *ra = &a->rd.run, *rb = &b->rd.run;
    snprintf(sub, sizeof sub,
             "A = %s run %lld (%d thread%s, %s)   B = %s run %lld (%d thread%s, %s)", a->path,
             (long long)ra->run_id, (int)ra->threads, ra->threads == 1 ? "" : "s", ra->git_commit,
             b->path, (long long)rb->run_id, (int)rb->threads, rb->threads == 1 ? "" : "s",
             rb->git_commit);
    attn_status st = bench_compare_plot(c->rows, c->nrows, title, sub, dest, msg, msg_len);
    if (st == ATTN_OK) printf("figure: %s\n", dest);
    return st;
}

/* Compare; *regressed: the points over --fail-above. */
static attn_status compare(side *a, side *b, double fail_pct, const char *plot, int *regressed,
                           char *msg, size_t msg_len)
{
    attn_status st = load_side(a, msg, msg_len);
    if (st == ATTN_OK) st = load_side(b, msg, msg_len);
    if (st != ATTN_OK) return st;
    bench_match m;
    if (bench_compare_match(&a->rd, &b->rd, &m) != ATTN_OK)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory matching points");
    if (m.matched == 0) {
        bench_match_free(&m);
        char pa[128], pb[128];
        pass_and_dtype(&a->rd, pa, sizeof pa);
        pass_and_dtype(&b->rd, pb, sizeof pb);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "nothing to compare: no point of %s run %lld has the settings of a "
                         "point of %s run %lld (A: %s; B: %s)",
                         a->path, (long long)a->rd.run.run_id, b->path, (long long)b->rd.run.run_id,
                         pa, pb);
    }
    comparison c;
    st = compare_points(a, b, &m, &c, msg, msg_len);
    if (st == ATTN_OK) {
        print_side("A", a);
        print_side("B", b);
        int64_t *idx = malloc((size_t)c.nrows * sizeof *idx);
        char common[512] = "";
        if (idx) {
            memcpy(idx, c.a_idx, (size_t)c.nrows * sizeof *idx);
            bench_common_settings(&a->rd, idx, c.nrows, BENCH_K_ALL, common, sizeof common);
        }
        free(idx);
        printf("matched on kind, params, dataset, mode, shape, causal, pass%s%s%s; in common: "
               "%s\n",
               m.threads_compared ? " (threads differ between the runs: compared, not matched)"
                                  : ", threads",
               m.isa_compared ? " (kernel sets differ between the runs: compared, not matched)"
                              : ", kernel set",
               m.dtype_compared ? " (dtypes differ between the runs: compared, not matched)"
                                : " and dtype",
               common[0] ? common : "-");
        if (m.dtype_compared)
            printf("A stores q, k, v as %s, B as %s: the ratios say what the storage changes\n",
                   a->rd.pts[0].dtype, b->rd.pts[0].dtype);
        printf("\n");
        print_rows(a, b, &m, &c);
        printf("\n");
        print_summary(a, b, &m, &c);
        *regressed = regressions(&c, fail_pct);
        if (plot) st = draw(a, b, &c, plot, msg, msg_len);
    }
    comparison_free(&c);
    bench_match_free(&m);
    return st;
}

static void help(const bench_opt *opts, int nopts)
{
    bench_print_help(
        "bench compare A.h5[:RUN] B.h5[:RUN] [--fail-above PCT] [--plot PATH]",
        "Compares the points of run RUN of A.h5 (default: its last run) with those of run RUN of\n"
        "B.h5: points are matched by kind, params, dataset (and its params), mode, batch, heads,\n"
        "kv_heads, q_len, kv_len, head_dim, causal, pass, threads, kernel set and dtype (threads,\n"
        "kernel set or dtype are compared instead when each run has one value and the two differ);\n"
        "points without a match are listed.\n"
        "Per point: the ratio B/A of the median times and its 95 % confidence interval, a\n"
        "percentile bootstrap over the repetitions stored in /samples (4000 resamples, fixed\n"
        "seed: the same files always give the same intervals). A change is significant (*) when\n"
        "the interval excludes 1. Then the geometric mean ratio over the points, with its\n"
        "interval. A and B may be the same file: A.h5:1 A.h5:2 compares two of its runs.",
        opts, nopts);
}

int bench_cmd_compare(int argc, char **argv)
{
    const char *help_s = NULL, *fail_s = NULL, *plot = NULL, *pos[2] = {NULL, NULL};
    const bench_opt opts[] = {
        {"--fail-above", "PCT",
         "exit 1 when a point is significantly slower in B by more than PCT % (for CI)", &fail_s},
        {"--plot", "PATH", "draw the ratios and intervals into PATH (.png, .svg or .pdf)", &plot},
        {"--help", NULL, "this help", &help_s},
    };
    char msg[ATTN_MSG_LEN];
    int npos = 0;
    if (bench_parse_opts(argc, argv, 2, opts, BENCH_COUNT(opts), pos, 2, &npos, "compare", msg,
                         sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help_s) {
        help(opts, BENCH_COUNT(opts));
        return 0;
    }
    if (npos != 2)
        return bench_fail(ATTN_EINVAL, "bench compare needs two results files: bench compare "
                                       "A.h5[:RUN] B.h5[:RUN]");
    double pct = -1;
    side a, b;
    if ((fail_s && bench_parse_double(fail_s, "--fail-above", 0, 1e6, &pct, msg, sizeof msg)) ||
        parse_side(pos[0], &a, msg, sizeof msg) || parse_side(pos[1], &b, msg, sizeof msg) ||
        (plot &&
         bench_check_target(plot, "--plot", BENCH_TARGET_FILE,
                            (const bench_input[]){{"", a.path}, {"", b.path}}, 2, msg, sizeof msg)))
        return bench_fail(ATTN_EINVAL, msg);
    const char *ext = plot ? strrchr(plot, '.') : NULL;
    if (plot && (!ext || strchr(ext, '/') || !bench_gnuplot_format_ok(ext + 1))) {
        snprintf(msg, sizeof msg, "--plot %.200s: the name must end in .png, .svg or .pdf", plot);
        return bench_fail(ATTN_EINVAL, msg);
    }
    int regressed = 0;
    attn_status st = compare(&a, &b, pct, plot, &regressed, msg, sizeof msg);
    side_free(&a);
    side_free(&b);
    if (st != ATTN_OK) return bench_fail(st, msg);
    if (regressed) {
        fprintf(stderr, "bench: %d point%s significantly slower in B by more than %g %%\n",
                regressed, regressed == 1 ? " is" : "s are", pct);
        return 1;
    }
    return 0;
}
