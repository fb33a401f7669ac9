/*
 * fig_scaling.c — scaling_<kind>, in a run with several --threads: per kind, the speed-up
 * T(fewest threads)/T(p) and the parallel efficiency against threads, one line per setting (n,
 * kernel set, ...), bars from both median times' CIs. Nothing drawn or said with one thread
 * count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"

/* Series s (x: threads, ascending) as speed-up over its fewest threads (T(base)/T(p)) into
 * panel sp and parallel efficiency (speed-up · base / p) into ep, with bars from both median
 * times' CIs; false when it has fewer than 2 thread counts or no memory. */
static bool add_scaling(panel *sp, panel *ep, const bench_run_data *rd, const bench_series *s,
                        const char *label)
{
    if (s->n < 2 || rd->pts[s->idx[0]].threads == rd->pts[s->idx[s->n - 1]].threads) return false;
    double *v = malloc((size_t)s->n * 8 * sizeof *v);
    if (!v) return false;
    double *x = v, *su = v + s->n, *slo = v + 2 * s->n, *shi = v + 3 * s->n, *ef = v + 4 * s->n,
           *elo = v + 5 * s->n, *ehi = v + 6 * s->n;
    const bench_point *b = &rd->pts[s->idx[0]];
    double bl = b->time_median_s, bh = bl, l, h;
    int64_t reps;
    if (bench_point_time_ci(rd, s->idx[0], &l, &h, &reps)) bl = l, bh = h;
    for (int64_t i = 0; i < s->n; i++) {
        const bench_point *pt = &rd->pts[s->idx[i]];
        double tl = pt->time_median_s, th = tl;
        if (bench_point_time_ci(rd, s->idx[i], &l, &h, &reps)) tl = l, th = h;
        const double per = (double)b->threads / (double)pt->threads;
        x[i] = (double)pt->threads;
        su[i] = b->time_median_s / pt->time_median_s, slo[i] = bl / th, shi[i] = bh / tl;
        if (i == 0) slo[i] = shi[i] = 1; /* the base: 1 by definition */
        ef[i] = su[i] * per, elo[i] = slo[i] * per, ehi[i] = shi[i] * per;
    }
    char key[LABEL_LEN];
    snprintf(key, sizeof key, "%s", label);
    const bool causal = b->causal != 0;
    bench_fig_add_xy(sp, rd, s->idx[0], s->n, x, su, slo, shi, label, key, causal);
    bench_fig_add_xy(ep, rd, s->idx[0], s->n, x, ef, elo, ehi, label, key, causal);
    free(v);
    return true;
}

/* scaling_<kind>: per kind of ss, speed-up T(fewest threads)/T(p) and parallel efficiency
 * against threads, one line per setting (n, kernel set, ...). Nothing drawn or said when ss has
 * a single thread count. */
static attn_status fig_scaling(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                               char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    bool several = false;
    for (int64_t i = 1; i < ss->n; i++)
        several |= rd->pts[ss->idx[i]].threads != rd->pts[ss->idx[0]].threads;
    int64_t *idx = several ? malloc((size_t)ss->n * sizeof *idx) : NULL;
    if (!several) return ATTN_OK;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    const bench_group_by by = {BENCH_K_ALL & ~BENCH_K_THREADS, NULL};
    attn_status st = ATTN_OK;
    for (int64_t k = 0; !st && k < ss->n; k++) {
        const bench_point *first = &rd->pts[ss->idx[k]];
        bool seen = false; /* its kind was drawn already */
        for (int64_t j = 0; j < k && !seen; j++)
            seen = !strcmp(rd->pts[ss->idx[j]].kind, first->kind);
        if (seen) continue;
        int64_t m = 0;
        for (int64_t i = 0; i < ss->n; i++)
            if (strcmp(rd->pts[ss->idx[i]].kind, first->kind) == 0) {
                idx[m++] = ss->idx[i];
                ss->x[ss->idx[i]] = (double)rd->pts[ss->idx[i]].threads;
            }
        bench_series *set = NULL;
        int64_t nset = 0;
        if (bench_series_group(rd, idx, m, by, ss->x, &set, &nset))
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
        figure f;
        char name[80], title[160];
        snprintf(name, sizeof name, "scaling_%s", first->kind);
        snprintf(title, sizeof title, "Thread scaling of %s", first->kind);
        bench_plot_begin(&f, cx, ss, name, title, idx, m, BENCH_K_THREADS | BENCH_K_N);
        panel *sp = bench_fig_add_panel(&f, "speed-up", "OpenMP threads p",
                                        "speed-up T(fewest threads) / T(p) (×)");
        panel *ep = bench_fig_add_panel(&f, "parallel efficiency", "OpenMP threads p",
                                        "efficiency: speed-up × fewest / p");
        sp->logx = ep->logx = sp->ntics = ep->ntics = true;
        sp->yzero = ep->yzero = true;
        ep->hline = 1;
        snprintf(ep->hline_label, sizeof ep->hline_label, "1: linear speed-up");
        snprintf(sp->bars, sizeof sp->bars, "bars: from both median times' CIs");
        for (int64_t s = 0; !st && s < nset; s++) {
            char label[LABEL_LEN];
            bench_series_label(rd, set, nset, s, by, label, sizeof label);
            add_scaling(sp, ep, rd, &set[s], label);
        }
        if (!st)
            st = bench_plot_finish(cx, ss, &f, "no series has 2 or more thread counts", msg,
                                   msg_len);
        else bench_fig_free(&f);
        bench_series_free(set, nset);
    }
    free(idx);
    return st;
}

const bench_figure bench_figure_scaling = {
    .name = "scaling_<kind>",
    .summary = "per kind, speed-up over the fewest threads and parallel efficiency vs threads",
    .group = BENCH_FIG_COST,
    .over_n = false,
    .quiet = false,
    .draw = fig_scaling,
};
