/*
 * cmd_fit.c — `bench fit FILE.h5 [--run ID]`: for every series of a run measured at 2 or more n,
 * power laws over n of its time and memory (exponent, 95 % CI, R²) beside the exponent its own
 * flop and byte counts imply, and where it becomes faster / leaner than `full` at the same
 * settings. Printed as a table and stored in the file's /fits table (replacing the run's last fit).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fit.h"
#include "series.h"

/* The settings of a series over n (its reference: bench_series_reference). */
static const bench_group_by over_n = {BENCH_K_ALL & ~BENCH_K_N, NULL};

typedef enum { M_TIME, M_RSS, M_WORKSPACE, M_COUNT } metric;

/* Does every point of the series know its base RSS (so peak - base is what it added)? */
static bool rss_added_known(const bench_run_data *rd, const bench_series *s)
{
    for (int64_t i = 0; i < s->n; i++)
        if (rd->pts[s->idx[i]].base_rss_bytes < 0 || rd->pts[s->idx[i]].peak_rss_bytes < 0)
            return false;
    return true;
}

static double metric_value(const bench_point *pt, int m, bool rss_added)
{
    if (m == M_TIME) return pt->time_median_s;
    if (m == M_WORKSPACE) return (double)pt->workspace_bytes;
    return bench_rss_of(pt, rss_added);
}

/* x = n and y = metric of the series' points with y > 0; returns how many. */
static int64_t series_xy(const bench_run_data *rd, const bench_series *s, int m, bool added,
                         double *x, double *y, double *theory_y)
{
    int64_t k = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const bench_point *pt = &rd->pts[s->idx[i]];
        const double v = metric_value(pt, m, added);
        if (!(v > 0) || !isfinite(v)) continue;
        x[k] = (double)pt->kv_len;
        y[k] = v;
        if (theory_y) theory_y[k] = m == M_TIME ? pt->flops : bench_expected_bytes(pt);
        k++;
    }
    return k;
}

static int64_t distinct_n(const bench_run_data *rd, const bench_series *s)
{
    int64_t d = 0;
    for (int64_t i = 0; i < s->n; i++)
        d += i == 0 || rd->pts[s->idx[i]].kv_len != rd->pts[s->idx[i - 1]].kv_len;
    return d;
}

static const char *const metric_names[M_COUNT] = {"time", "rss_added", "workspace"};

/* The fit rows of series k of the set (time; memory; workspace when it varies). */
static int fit_series(const bench_run_data *rd, const bench_series *set, int64_t nset, int64_t k,
                      bench_fit_row rows[M_COUNT], double *buf)
{
    const bench_series *s = &set[k];
    const bench_point *pt = &rd->pts[s->idx[0]];
    const int64_t ref = bench_series_reference(rd, set, nset, k);
    /* buf holds 5 arrays of rd->n: x, y and the theory's y of this series, x and y of full */
    double *x = buf, *y = x + rd->n, *ty = y + rd->n, *xr = ty + rd->n, *yr = xr + rd->n;
    const bool added = rss_added_known(rd, s) && (ref < 0 || rss_added_known(rd, &set[ref]));
    int nrows = 0;
    for (int m = 0; m < M_COUNT; m++) {
        if (m == M_WORKSPACE) { /* only when it varies over n */
            bool varies = false;
            for (int64_t i = 1; i < s->n; i++)
                varies |= rd->pts[s->idx[i]].workspace_bytes != pt->workspace_bytes;
            if (!varies) continue;
        }
        const int64_t np = series_xy(rd, s, m, added, x, y, ty);
        bench_fit f, th;
        char msg[ATTN_MSG_LEN];
        if (bench_fit_power_law(x, y, np, &f, msg, sizeof msg) != ATTN_OK) continue;
        bench_fit_row *r = &rows[nrows++];
        *r = (bench_fit_row){.run_id = rd->run.run_id,
                             .batch = pt->batch,
                             .heads = pt->heads,
                             .kv_heads = pt->kv_heads,
                             .head_dim = pt->head_dim,
                             .q_len = strcmp(pt->mode, "decode") == 0 ? pt->q_len : 0,
                             .causal = pt->causal,
                             .points = (int32_t)np,
                             .n_min = (int64_t)x[0],
                             .n_max = (int64_t)x[np - 1],
                             .exponent = f.slope,
                             .exponent_lo = f.slope_lo,
                             .exponent_hi = f.slope_hi,
                             .r2 = f.r2,
                             .prefactor = exp(f.intercept),
                             .theory = NAN,
                             .crossover_n = NAN,
                             .ratio_at_max = NAN,
                             .threads = pt->threads};
        snprintf(r->isa, sizeof r->isa, "%s", pt->isa);
        snprintf(r->dtype, sizeof r->dtype, "%s", pt->dtype);
        snprintf(r->kind, sizeof r->kind, "%s", pt->kind);
        snprintf(r->params, sizeof r->params, "%s", rd->params[s->idx[0]]);
        snprintf(r->dataset, sizeof r->dataset, "%s", pt->dataset);
        snprintf(r->dataset_params, sizeof r->dataset_params, "%s", pt->dataset_params);
        snprintf(r->mode, sizeof r->mode, "%s", pt->mode);
        snprintf(r->pass, sizeof r->pass, "%s", pt->pass);
        snprintf(r->metric, sizeof r->metric, "%s",
                 m == M_RSS && !added ? "peak_rss" : metric_names[m]);
        if (m != M_WORKSPACE && bench_fit_power_law(x, ty, np, &th, msg, sizeof msg) == ATTN_OK)
            r->theory = th.slope;
        if (ref < 0) continue;
        const bench_point *rp = &rd->pts[set[ref].idx[0]];
        snprintf(r->reference_params, sizeof r->reference_params, "%s",
                 rd->params[set[ref].idx[0]]);
        r->reference_kv_heads = rp->kv_heads;
        const int64_t nr = series_xy(rd, &set[ref], m, added, xr, yr, NULL);
        bench_crossover c = bench_crossover_find(x, y, np, xr, yr, nr);
        static const char *const names[] = {"", "always", "never", "above", "below"};
        snprintf(r->crossover, sizeof r->crossover, "%s", names[c.kind]);
        r->crossover_n = c.at;
        r->ratio_at_max = c.ratio_at_max;
        r->ratio_n = c.kind == BENCH_CROSS_NONE ? 0 : (int64_t)c.max_x;
    }
    return nrows;
}

/* "faster above n≈1270 (0.21x at 8K)" and the like. */
void bench_fit_crossover_text(const bench_fit_row *r, char *buf, size_t len)
{
    const bool time = strcmp(r->metric, "time") == 0;
    const char *better = time ? "faster" : "leaner";
    char at[32], hkv[48] = "";
    if (r->reference_params[0] == '\0' && r->crossover[0] == '\0') {
        snprintf(buf, len, "%s", strcmp(r->kind, "full") == 0 ? "-" : "no full at these settings");
        return;
    }
    if (r->crossover[0] == '\0') {
        snprintf(buf, len, "no n in common with full");
        return;
    }
    if (r->reference_kv_heads != r->kv_heads)
        snprintf(hkv, sizeof hkv, ", vs full Hkv=%lld", (long long)r->reference_kv_heads);
    bench_format_count((double)r->ratio_n, at, sizeof at);
    if (strcmp(r->crossover, "above") == 0 || strcmp(r->crossover, "below") == 0)
        snprintf(buf, len, "%s %s n=%.0f (%.2fx at %s%s)", better, r->crossover, r->crossover_n,
                 r->ratio_at_max, at, hkv);
    else
        snprintf(buf, len, "%s %s in range (%.2fx at %s%s)", r->crossover, better, r->ratio_at_max,
                 at, hkv); /* "always" or "never" */
}

static void print_table(const bench_run_data *rd, const bench_series *set, int64_t nset,
                        const int64_t *row_series, const bench_fit_row *rows, int64_t nrows)
{
    char label[256], range[64], a[32], b[32], ci[48], r2[16], th[16], vs[160];
    int width = 6;
    for (int64_t r = 0; r < nrows; r++) {
        bench_series_label(rd, set, nset, row_series[r], over_n, label, sizeof label);
        if ((int)strlen(label) > width) width = (int)strlen(label);
    }
    printf("%-*s  %-9s  %-11s %3s  %8s  %-15s %7s  %6s  %s\n", width, "series", "metric", "n",
           "pts", "exponent", "95% CI", "R2", "theory", "vs full at the same settings");
    for (int64_t r = 0; r < nrows; r++) {
        const bench_fit_row *f = &rows[r];
        bench_series_label(rd, set, nset, row_series[r], over_n, label, sizeof label);
        snprintf(range, sizeof range, "%s..%s", bench_format_count((double)f->n_min, a, sizeof a),
                 bench_format_count((double)f->n_max, b, sizeof b));
        if (isnan(f->exponent_lo)) snprintf(ci, sizeof ci, "-");
        else snprintf(ci, sizeof ci, "[%.2f, %.2f]", f->exponent_lo, f->exponent_hi);
        if (isnan(f->r2)) snprintf(r2, sizeof r2, "-");
        else snprintf(r2, sizeof r2, "%.4f", f->r2);
        if (isnan(f->theory)) snprintf(th, sizeof th, "-");
        else snprintf(th, sizeof th, "%.2f", f->theory);
        bench_fit_crossover_text(f, vs, sizeof vs);
        printf("%-*s  %-9s  %-11s %3d  %8.2f  %-15s %7s  %6s  %s\n", width,
               r == 0 || row_series[r] != row_series[r - 1] ? label : "", f->metric, range,
               f->points, f->exponent, ci, r2, th, vs);
    }
}

/* A fit of one run: its series, those fitted, and their rows. */
typedef struct fit_work {
    int64_t *all;          /* every point of the run: 0..rd->n-1 */
    double *n_of;          /* per point: its n */
    double *buf;           /* scratch of fit_series: 5 arrays of rd->n */
    bench_fit_row *rows;   /* the fit rows, M_COUNT per series at most */
    int64_t *row_series;   /* per row: its series in fit_set */
    bench_series *set;     /* the run's series over n */
    bench_series *fit_set; /* those measured at 2+ n (not owned: set's) */
    int64_t nset, fitted, nrows;
} fit_work;

static void fit_work_free(fit_work *w)
{
    free(w->fit_set);
    bench_series_free(w->set, w->nset);
    free(w->all);
    free(w->n_of);
    free(w->buf);
    free(w->rows);
    free(w->row_series);
}

/* Group the run into series over n; ATTN_EFAIL when out of memory. */
static attn_status group_series(const bench_run_data *rd, fit_work *w)
{
    *w = (fit_work){0};
    w->all = malloc((size_t)rd->n * sizeof *w->all);
    w->n_of = malloc((size_t)rd->n * sizeof *w->n_of);
    w->buf = malloc(5 * (size_t)rd->n * sizeof *w->buf);
    w->rows = malloc((size_t)rd->n * M_COUNT * sizeof *w->rows);
    w->row_series = malloc((size_t)rd->n * M_COUNT * sizeof *w->row_series);
    if (!w->all || !w->n_of || !w->buf || !w->rows || !w->row_series) return ATTN_EFAIL;
    for (int64_t p = 0; p < rd->n; p++) w->all[p] = p, w->n_of[p] = (double)rd->pts[p].kv_len;
    if (bench_series_group(rd, w->all, rd->n, over_n, w->n_of, &w->set, &w->nset))
        return ATTN_EFAIL;
    return (w->fit_set = calloc((size_t)w->nset, sizeof *w->fit_set)) ? ATTN_OK : ATTN_EFAIL;
}

/* The series measured at 2+ n into w->fit_set, in their own set so labels compare only them;
 * those of the run's first dataset first, then of its second... (a kind's rows per dataset
 * together). */
static void select_series(const bench_run_data *rd, fit_work *w)
{
    const bench_group_by by_dataset = {BENCH_K_DATASET, NULL};
    const bench_series *set = w->set;
    for (int64_t d = 0; d < w->nset; d++) {
        bool seen = false; /* set[d] opens a dataset (series come in order of first point) */
        for (int64_t e = 0; e < d && !seen; e++)
            seen = bench_same_settings(rd, set[e].idx[0], set[d].idx[0], by_dataset);
        for (int64_t k = d; !seen && k < w->nset; k++)
            if (bench_same_settings(rd, set[k].idx[0], set[d].idx[0], by_dataset) &&
                distinct_n(rd, &set[k]) >= 2)
                w->fit_set[w->fitted++] = set[k];
    }
}

/* The fit rows of every selected series. */
static void fit_all(const bench_run_data *rd, fit_work *w)
{
    for (int64_t k = 0; k < w->fitted; k++) {
        const int got = fit_series(rd, w->fit_set, w->fitted, k, w->rows + w->nrows, w->buf);
        for (int g = 0; g < got; g++) w->row_series[w->nrows + g] = k;
        w->nrows += got;
    }
}

/* The header line, the table and what its columns mean. */
static void print_report(const bench_run_data *rd, const fit_work *w)
{
    char common[256];
    bench_common_settings(rd, w->all, rd->n, BENCH_K_ALL & ~BENCH_K_N, common, sizeof common);
    printf("run %lld of %s: %s; %lld series fitted over n", (long long)rd->run.run_id, rd->path,
           common, (long long)w->fitted);
    if (w->nset > w->fitted)
        printf(" (%lld with a single n left out)", (long long)(w->nset - w->fitted));
    if (rd->failed) printf("; %lld failed points left out", (long long)rd->failed);
    printf("\n\n");
    print_table(rd, w->fit_set, w->fitted, w->row_series, w->rows, w->nrows);
    printf("\nexponent: slope of ln(metric) on ln(n) by least squares; 95%% CI from Student's t "
           "(n-2 dof); R2 of that fit.\n"
           "time: median seconds per forward; rss_added: peak RSS - RSS at the point's start "
           "(what it allocated);\npeak_rss: peak RSS (base unknown); workspace: declared "
           "scratch bytes (listed when it varies).\n"
           "theory: the same slope of the kind's flop count (time) or of its q, k, v, out, "
           "workspace and state\nbytes (memory) over the same points. vs full: where the "
           "metric falls below full's, interpolated in log-log.\n");
}

attn_status bench_fit_compute(const bench_run_data *rd, bench_fit_row **rows, int64_t *nrows)
{
    fit_work w;
    attn_status st = group_series(rd, &w);
    *rows = NULL, *nrows = 0;
    if (!st) {
        select_series(rd, &w);
        fit_all(rd, &w);
        *rows = w.rows, *nrows = w.nrows;
        w.rows = NULL;
    }
    fit_work_free(&w);
    return st;
}

/* With several thread counts: per series over threads (the settings but threads shared), the
 * speed-up T(fewest)/T(p) and parallel efficiency at each further thread count, one line each
 * (nothing when the run has one thread count). */
static void print_scaling(const bench_run_data *rd)
{
    double *x = malloc((size_t)(rd->n ? rd->n : 1) * sizeof *x);
    int64_t *idx = malloc((size_t)(rd->n ? rd->n : 1) * sizeof *idx);
    bench_series *set = NULL;
    int64_t nset = 0;
    const bench_group_by by = {BENCH_K_ALL & ~BENCH_K_THREADS, NULL};
    for (int64_t i = 0; x && idx && i < rd->n; i++) x[i] = rd->pts[i].threads, idx[i] = i;
    if (!x || !idx || bench_series_group(rd, idx, rd->n, by, x, &set, &nset) != ATTN_OK) nset = 0;
    bool said = false;
    for (int64_t k = 0; k < nset; k++) {
        const bench_point *b = &rd->pts[set[k].idx[0]];
        if (set[k].n < 2 || rd->pts[set[k].idx[set[k].n - 1]].threads == b->threads) continue;
        if (!said)
            printf("\nthread scaling: speed-up T(fewest threads)/T(p), parallel efficiency = "
                   "speed-up x fewest / p\n");
        said = true;
        char label[256], c[32];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        printf("  %s", label);
        if (!strstr(label, "n=")) /* the label names n only where it differs */
            printf(" n=%s", bench_format_count((double)b->kv_len, c, sizeof c));
        printf(":");
        for (int64_t i = 1; i < set[k].n; i++) {
            const bench_point *p = &rd->pts[set[k].idx[i]];
            const double su = b->time_median_s / p->time_median_s;
            printf("  %d->%d threads %.3gx (%.0f%%)", (int)b->threads, (int)p->threads, su,
                   100 * su * b->threads / p->threads);
        }
        printf("\n");
    }
    bench_series_free(set, nset);
    free(x);
    free(idx);
}

/* Fit run run_id of file, print the table, store it unless no_store. */
static attn_status fit_run(const char *file, int64_t run_id, bool no_store, char *msg,
                           size_t msg_len)
{
    bench_run_data rd;
    attn_status st = bench_run_load(file, run_id, &rd, msg, msg_len);
    if (st) return st;
    fit_work w;
    st = group_series(&rd, &w);
    if (st) snprintf(msg, msg_len, "out of memory fitting %lld points", (long long)rd.n);
    if (!st) {
        select_series(&rd, &w);
        fit_all(&rd, &w);
    }
    if (!st && w.nrows == 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "run %lld of %s has no series measured at 2 or more n: nothing to fit "
                       "(sweep --n with several values, e.g. --n 1K:16K:x2)",
                       (long long)rd.run.run_id, rd.path);
    if (!st) print_report(&rd, &w);
    if (!st) print_scaling(&rd);
    if (!st && !no_store) {
        st = bench_store_write_fits(rd.path, rd.run.run_id, w.rows, w.nrows, msg, msg_len);
        if (st == ATTN_OK)
            printf("stored: %lld rows in /fits of %s (run %lld)\n", (long long)w.nrows, rd.path,
                   (long long)rd.run.run_id);
        else st = ATTN_EFAIL; /* the table is printed: a failure while running */
    }
    fit_work_free(&w);
    bench_run_data_free(&rd);
    return st;
}

int bench_cmd_fit(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *no_store = NULL;
    const bench_opt opts[] = {
        {"--run", "ID", "the run to fit (default: the last run in the file)", &run_s},
        {"--no-store", NULL, "print only: leave the file's /fits table as it is", &no_store},
        {"--help", NULL, "this help", &help},
    };
    const char *file = NULL;
    char msg[ATTN_MSG_LEN];
    int64_t run_id = 0;
    if (bench_parse_file_args(argc, argv, opts, BENCH_COUNT(opts), "fit", &file, &run_s, &run_id,
                              msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench fit FILE.h5 [--run ID] [--no-store]",
            "For every series of a run (the points sharing kind, params, dataset, mode, causal,\n"
            "batch, heads, kv_heads, head_dim, threads and kernel set) measured at 2 or more n: the exponent k of\n"
            "time ~ n^k and of memory ~ n^k by least squares on log-log axes, its 95 % confidence\n"
            "interval (Student's t) and R², beside the exponent the kind's own flop and byte\n"
            "counts imply over the same points; and the n from which each kind is faster (and\n"
            "leaner) than full at the same settings, interpolated in log-log between measured n.\n"
            "The table is also stored in the file as /fits (replacing the run's previous fit).",
            opts, BENCH_COUNT(opts));
        return 0;
    }
    if (!file) return bench_fail(ATTN_EINVAL, "bench fit needs a results file: bench fit FILE.h5");
    const attn_status st = fit_run(file, run_id, no_store != NULL, msg, sizeof msg);
    return st ? bench_fail(st, msg) : 0;
}
