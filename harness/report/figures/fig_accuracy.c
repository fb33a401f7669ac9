/*
 * fig_accuracy.c — the accuracy figures, drawn once per dataset: accuracy_vs_n (relative L2 error
 * against exact float64 attention, and beside it retrieval with Wilson 95 % bars on needle
 * datasets), accuracy_vs_<param> (the same against each kind parameter the run swept, one line
 * per n, at most 4 n) and error_vs_cost (error against time at the largest n where a kind has 2
 * or more parameter values, one point per value, labelled).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "fit.h"

static double y_rel_err(const bench_point *pt) { return pt->rel_err; }

static double y_retrieval(const bench_point *pt)
{
    return pt->retrieval_queries > 0 ? pt->retrieval : NAN;
}

/* Wilson's 95 % interval of the retrieved fraction of the planted queries. */
static bool bar_retrieval(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    const bench_point *pt = &rd->pts[p];
    if (!(pt->retrieval_queries > 0) || !isfinite(pt->retrieval)) return false;
    bench_wilson(round(pt->retrieval * pt->retrieval_queries), pt->retrieval_queries, lo, hi);
    return true;
}

/* The legend row of retrieval bars over points idx[0..n). */
static void retrieval_bars(const bench_run_data *rd, const int64_t *idx, int64_t n, char *buf,
                           size_t len)
{
    int32_t q = -1;
    for (int64_t i = 0; i < n; i++) {
        const int32_t c = rd->pts[idx[i]].retrieval_queries;
        if (c > 0) q = q < 0 || q == c ? c : 0;
    }
    if (q > 0) snprintf(buf, len, "bars: Wilson 95 %% CI (%d planted queries)", q);
    else snprintf(buf, len, "bars: Wilson 95 %% CI of the planted queries");
}

static bool any_retrieval(const plot_ctx *cx, const int64_t *idx, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (cx->rd->pts[idx[i]].retrieval_queries > 0 && isfinite(cx->rd->pts[idx[i]].retrieval))
            return true;
    return false;
}

static attn_status fig_accuracy_vs_n(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                     char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    figure f;
    bench_plot_begin(&f, cx, ss, "accuracy_vs_n",
                     "Accuracy vs sequence length (against exact float64 attention)", ss->idx,
                     ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "relative L2 error", bench_plot_n_axis(ss),
                                   "relative L2 error vs exact float64");
    p->logx = p->logy = p->ntics = true;
    bench_fig_add_set(p, cx->rd, set, nset, bench_plot_over_n, ss->x, y_rel_err, NULL);
    if (any_retrieval(cx, ss->idx, ss->n)) {
        panel *r = bench_fig_add_panel(&f, "retrieval (needle datasets)", bench_plot_n_axis(ss),
                                       "fraction of planted queries retrieved");
        r->logx = r->ntics = r->yzero = true;
        bench_fig_add_set(r, cx->rd, set, nset, bench_plot_over_n, ss->x, y_retrieval,
                          bar_retrieval);
        retrieval_bars(cx->rd, ss->idx, ss->n, r->bars, sizeof r->bars);
    }
    return bench_plot_finish(cx, ss, &f, "no series has a finite error at 2 or more n", msg,
                             msg_len);
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* At most 4 of the subset's n, spread from the smallest to the largest, into ns; how many. */
static int spread_n(const bench_run_data *rd, const plot_subset *ss, int64_t ns[4])
{
    int64_t *all = malloc((size_t)ss->n * sizeof *all), d = 0;
    if (!all) return 0;
    for (int64_t i = 0; i < ss->n; i++) all[i] = rd->pts[ss->idx[i]].kv_len;
    qsort(all, (size_t)ss->n, sizeof *all, by_value);
    for (int64_t i = 0; i < ss->n; i++)
        if (d == 0 || all[i] != all[d - 1]) all[d++] = all[i];
    const int k = d < 4 ? (int)d : 4;
    for (int i = 0; i < k; i++)
        ns[i] = all[k == 1 ? 0 : (int64_t)llround((double)i * (double)(d - 1) / (k - 1))];
    free(all);
    return k;
}

static attn_status fig_accuracy_vs_param(plot_ctx *cx, const plot_subset *ss, const char *name,
                                         char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    int64_t ns[4];
    const int nn = spread_n(rd, ss, ns);
    for (int64_t i = 0; i < ss->n; i++) {
        char v[64];
        bench_param_value(rd->pts[ss->idx[i]].params, name, v, sizeof v);
        char *end;
        const double x = strtod(v, &end);
        bool shown_n = false;
        for (int k = 0; k < nn; k++) shown_n |= rd->pts[ss->idx[i]].kv_len == ns[k];
        if (!v[0] || *end || !shown_n) continue;
        ss->x[ss->idx[i]] = x;
        idx[m++] = ss->idx[i];
    }
    const bench_group_by by = {BENCH_K_ALL, name};
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = bench_series_group(rd, idx, m, by, ss->x, &set, &nset);
    if (st) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    figure f;
    char fname[96], safe[64], title[160];
    bench_plot_file_safe(name, safe, sizeof safe);
    snprintf(fname, sizeof fname, "accuracy_vs_%s", safe);
    snprintf(title, sizeof title, "Accuracy vs parameter %s%s", name,
             nn == 4 ? " (at 4 of the measured n)" : "");
    bench_plot_begin(&f, cx, ss, fname, title, idx, m, BENCH_K_N | BENCH_K_PARAMS);
    panel *p =
        bench_fig_add_panel(&f, "relative L2 error", name, "relative L2 error vs exact float64");
    double lo = INFINITY, hi = 0;
    for (int64_t i = 0; i < m; i++) lo = fmin(lo, ss->x[idx[i]]), hi = fmax(hi, ss->x[idx[i]]);
    p->logx = lo > 0 && hi >= 4 * lo;
    p->logy = true;
    p->ntics = p->logx; /* ticks at the measured values */
    if (!st) bench_fig_add_set(p, rd, set, nset, by, ss->x, y_rel_err, NULL);
    if (!st && any_retrieval(cx, idx, m)) {
        panel *r = bench_fig_add_panel(&f, "retrieval (needle datasets)", name,
                                       "fraction of planted queries retrieved");
        r->logx = r->ntics = p->logx;
        r->yzero = true;
        bench_fig_add_set(r, rd, set, nset, by, ss->x, y_retrieval, bar_retrieval);
        retrieval_bars(rd, idx, m, r->bars, sizeof r->bars);
    }
    if (!st)
        st = bench_plot_finish(cx, ss, &f, "no series has a finite error at 2 or more values", msg,
                               msg_len);
    else bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* accuracy_vs_<param>: one figure per parameter the subset swept. */
static attn_status fig_accuracy_vs_params(plot_ctx *cx, const plot_subset *ss,
                                          const plot_sets *sets, char *msg, size_t msg_len)
{
    attn_status st = ATTN_OK;
    for (int k = 0; !st && k < sets->nparams; k++)
        st = fig_accuracy_vs_param(cx, ss, sets->params[k], msg, msg_len);
    return st;
}

/* Bars on x (time, ms) for series ps made from s with y = rel_err (the points it kept). */
static void time_bars_on_x(const bench_run_data *rd, const bench_series *s, pseries *ps)
{
    if (!(ps->lo = malloc((size_t)ps->n * sizeof *ps->lo)) ||
        !(ps->hi = malloc((size_t)ps->n * sizeof *ps->hi))) {
        free(ps->lo), ps->lo = NULL;
        return;
    }
    ps->xbars = true;
    for (int64_t i = 0, j = 0; i < s->n && j < ps->n; i++) {
        const bench_point *pt = &rd->pts[s->idx[i]];
        if (!isfinite(pt->rel_err) || !(pt->rel_err > 0) || !(pt->time_median_s > 0)) continue;
        if (!bench_plot_bar_time_ms(rd, s->idx[i], &ps->lo[j], &ps->hi[j]) || !(ps->lo[j] > 0))
            ps->lo[j] = ps->hi[j] = ps->x[j];
        j++;
    }
}

/* Error vs time at the largest n where a kind was measured at 2 or more parameter values: one
 * point per parameter value (labelled with the swept values), one line per kind and setting. */
static attn_status fig_error_vs_cost(plot_ctx *cx, const plot_subset *ss, const char names[][64],
                                     int nnames, char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    const bench_group_by by = {BENCH_K_ALL & ~BENCH_K_PARAMS, NULL};
    bench_series *set = NULL;
    int64_t nset = 0, best_n = 0;
    for (int64_t i = 0; i < ss->n; i++) ss->x[ss->idx[i]] = rd->pts[ss->idx[i]].time_median_s * 1e3;
    attn_status st = bench_series_group(rd, ss->idx, ss->n, by, ss->x, &set, &nset);
    for (int64_t k = 0; !st && k < nset; k++)
        if (set[k].n >= 2 && rd->pts[set[k].idx[0]].kv_len > best_n)
            best_n = rd->pts[set[k].idx[0]].kv_len;
    bench_series_free(set, nset);
    set = NULL, nset = 0;
    if (st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    if (best_n == 0) {
        bench_plot_skip(cx, ss, "error_vs_cost",
                        "no kind was measured at 2 or more parameter values at one n");
        return ATTN_OK;
    }
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    st = bench_plot_group_at_n(rd, ss, best_n, by, idx, &m, &set, &nset, msg, msg_len);
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title, "Error vs cost at n = %s: one point per parameter value",
             bench_format_count((double)best_n, c, sizeof c));
    bench_plot_begin(&f, cx, ss, "error_vs_cost", title, idx, m, BENCH_K_PARAMS);
    panel *p = bench_fig_add_panel(&f, "", "median time per forward (ms)",
                                   "relative L2 error vs exact float64");
    p->logx = p->logy = true;
    const bench_group_by no_causal = {by.fields & ~BENCH_K_CAUSAL, NULL};
    for (int64_t k = 0; !st && k < nset; k++) {
        /* labels among all series (as add_set makes them), and the swept values beside each point
         */
        char label[LABEL_LEN], key[LABEL_LEN];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
        if (!bench_fig_add_series(p, rd, &set[k], ss->x, y_rel_err, NULL, label, key,
                                  rd->pts[set[k].idx[0]].causal != 0))
            continue;
        pseries *ps = &p->s[p->ns - 1];
        time_bars_on_x(rd, &set[k], ps);
        bool twin = false; /* a causal series whose non-causal twin carries the tags */
        for (int64_t o = 0; o < nset && rd->pts[set[k].idx[0]].causal; o++)
            twin |= o != k && !rd->pts[set[o].idx[0]].causal &&
                    bench_same_settings(rd, set[o].idx[0], set[k].idx[0], no_causal);
        if (set[k].n < 2 || twin || !(ps->tag = calloc((size_t)ps->n, sizeof *ps->tag))) continue;
        for (int64_t i = 0, j = 0; i < set[k].n && j < ps->n; i++) {
            const bench_point *pt = &rd->pts[set[k].idx[i]];
            if (!isfinite(pt->rel_err) || !(pt->rel_err > 0) || !(pt->time_median_s > 0)) continue;
            int w = 0;
            for (int q = 0; q < nnames && w < 48; q++) {
                char v[64];
                bench_param_value(rd->params[set[k].idx[i]], names[q], v, sizeof v);
                if (v[0]) w += snprintf(ps->tag[j] + w, 48 - (size_t)w, "%s%s", w ? "," : "", v);
            }
            for (char *t = ps->tag[j]; *t; t++)
                if (*t == '"' || *t == '\\') *t = '?';
            j++;
        }
    }
    bench_plot_time_bars(rd, idx, m, "the median time", p->bars, sizeof p->bars);
    if (!st && p->ns > 0) st = bench_fig_draw(cx, &f, msg, msg_len);
    else if (!st) bench_plot_skip(cx, ss, "error_vs_cost", "no point has a finite error");
    bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* error_vs_cost: only when the subset swept a parameter (nothing said otherwise). */
static attn_status fig_error_vs_costs(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                      char *msg, size_t msg_len)
{
    if (sets->nparams == 0) return ATTN_OK;
    return fig_error_vs_cost(cx, ss, sets->params, sets->nparams, msg, msg_len);
}

const bench_figure bench_figure_accuracy_vs_n = {
    .name = "accuracy_vs_n",
    .summary = "relative error vs exact float64 attention (and retrieval on needle) vs n",
    .group = BENCH_FIG_ACCURACY,
    .over_n = true,
    .quiet = false,
    .draw = fig_accuracy_vs_n,
};

const bench_figure bench_figure_accuracy_vs_param = {
    .name = "accuracy_vs_<param>",
    .summary = "the same vs each kind parameter the run swept, one line per n",
    .group = BENCH_FIG_ACCURACY,
    .over_n = false,
    .quiet = false,
    .draw = fig_accuracy_vs_params,
};

const bench_figure bench_figure_error_vs_cost = {
    .name = "error_vs_cost",
    .summary = "error vs time at the largest n, one point per parameter value",
    .group = BENCH_FIG_ACCURACY,
    .over_n = false,
    .quiet = false,
    .draw = fig_error_vs_costs,
};
