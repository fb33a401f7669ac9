/*
 * fig_speedup.c — speedup_vs_n: time of full / time of the kind against n, one line per series
 * that has a full series at the same settings (bench_series_reference), bars from both median
 * times' CIs, a line at 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"

/* Point j of series r at point i's n, or -1. */
static int64_t at_same_n(const bench_run_data *rd, const bench_series *r, int64_t i)
{
    for (int64_t j = 0; j < r->n; j++)
        if (rd->pts[r->idx[j]].kv_len == rd->pts[i].kv_len) return r->idx[j];
    return -1;
}

/* Series k's speed-up over its full reference r at each n both have: time of full / time of the
 * kind, bars from both CIs at their ends (full's low / kind's high .. full's high / kind's low).
 * Added to p; false when they share no n. */
static bool add_speedup(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                        int64_t k, int64_t r)
{
    const bench_series *s = &set[k];
    double *v = malloc((size_t)s->n * 4 * sizeof *v);
    if (!v) return false;
    double *x = v, *y = v + s->n, *lo = v + 2 * s->n, *hi = v + 3 * s->n;
    int64_t m = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const int64_t a = s->idx[i], b = at_same_n(rd, &set[r], a);
        if (b < 0 || !(rd->pts[a].time_median_s > 0)) continue;
        double al, ah, bl, bh;
        int64_t reps;
        x[m] = (double)rd->pts[a].kv_len;
        y[m] = rd->pts[b].time_median_s / rd->pts[a].time_median_s;
        const bool bars = bench_point_time_ci(rd, a, &al, &ah, &reps) &&
                          bench_point_time_ci(rd, b, &bl, &bh, &reps);
        lo[m] = bars ? bl / ah : y[m], hi[m] = bars ? bh / al : y[m];
        m++;
    }
    char label[LABEL_LEN], key[LABEL_LEN];
    const bench_group_by no_causal = {bench_plot_over_n.fields & ~BENCH_K_CAUSAL, NULL};
    bench_series_label(rd, set, nset, k, bench_plot_over_n, label, sizeof label);
    bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
    const bench_point *me = &rd->pts[s->idx[0]], *ref = &rd->pts[set[r].idx[0]];
    if (me->kv_heads != ref->kv_heads) { /* mqa against MHA full: say so */
        const size_t used = strlen(label);
        snprintf(label + used, sizeof label - used, " (vs full Hkv=%lld)",
                 (long long)ref->kv_heads);
    }
    const bool added =
        m > 0 && bench_fig_add_xy(p, rd, s->idx[0], m, x, y, lo, hi, label, key, me->causal != 0);
    free(v);
    return added;
}

/* Speed-up over full vs n: the question the README opens with. One line per series that has a
 * full series at the same settings (bench_series_reference). */
static attn_status fig_speedup_vs_n(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                    char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    bench_plot_begin(&f, cx, ss, "speedup_vs_n",
                     decode ? "Speed-up over full attention per decode step vs KV-cache length"
                            : "Speed-up over full attention vs sequence length",
                     ss->idx, ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "", bench_plot_n_axis(ss),
                                   "speed-up: time of full / time of the kind (×)");
    p->logx = p->logy = p->ntics = true;
    p->hline = 1;
    snprintf(p->hline_label, sizeof p->hline_label, "1: as fast as full (same settings)");
    snprintf(p->bars, sizeof p->bars, "bars: from both median times' CIs");
    for (int64_t k = 0; k < nset; k++) {
        const int64_t r = bench_series_reference(cx->rd, set, nset, k);
        if (r >= 0) add_speedup(p, cx->rd, set, nset, k, r);
    }
    if (p->ns == 0) {
        bench_fig_free(&f);
        bench_plot_skip(cx, ss, "speedup_vs_n",
                        "no kind has a full series at the same settings (sweep --kinds full,KIND)");
        return ATTN_OK;
    }
    return bench_plot_finish(cx, ss, &f,
                             "every series has a single n (sweep --n with 2 or more values)", msg,
                             msg_len);
}

const bench_figure bench_figure_speedup_vs_n = {
    .name = "speedup_vs_n",
    .summary = "time of full / time of the kind at the same settings vs n, log-log",
    .group = BENCH_FIG_COST,
    .over_n = true,
    .quiet = false,
    .draw = fig_speedup_vs_n,
};
