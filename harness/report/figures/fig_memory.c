/*
 * fig_memory.c — memory_vs_n: measured (peak RSS minus the RSS at the point's start, or the peak
 * RSS of files without it) and, beside it, declared (the workspace the kind asks for) against n.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"

static double y_rss_added(const bench_point *pt) { return bench_rss_of(pt, true); }

static double y_rss(const bench_point *pt) { return bench_rss_of(pt, false); }

static double y_workspace(const bench_point *pt) { return (double)pt->workspace_bytes; }

static attn_status fig_memory_vs_n(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                   char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    figure f;
    bench_plot_begin(&f, cx, ss, "memory_vs_n", "Memory vs sequence length", ss->idx, ss->n,
                     BENCH_K_N);
    bool added = true, workspace = false;
    for (int64_t i = 0; i < ss->n; i++) {
        added &= !isnan(bench_rss_of(&cx->rd->pts[ss->idx[i]], true));
        workspace |= cx->rd->pts[ss->idx[i]].workspace_bytes > 0;
    }
    panel *p =
        bench_fig_add_panel(&f,
                            added ? "measured: peak RSS - RSS at the point's start (what it added)"
                                  : "measured: peak RSS of the process",
                            bench_plot_n_axis(ss), "");
    p->logx = p->logy = p->ntics = true;
    bench_fig_add_set(p, cx->rd, set, nset, bench_plot_over_n, ss->x, added ? y_rss_added : y_rss,
                      NULL);
    bench_fig_bytes_unit(p, added ? "peak RSS - base RSS" : "peak RSS");
    if (workspace) {
        panel *w = bench_fig_add_panel(&f, "declared: workspace (scratch the kind asks for)",
                                       bench_plot_n_axis(ss), "");
        w->logx = w->logy = w->ntics = true;
        bench_fig_add_set(w, cx->rd, set, nset, bench_plot_over_n, ss->x, y_workspace, NULL);
        bench_fig_bytes_unit(w, "workspace");
    }
    return bench_plot_finish(cx, ss, &f, "no series has a known peak RSS at 2 or more n", msg,
                             msg_len);
}

const bench_figure bench_figure_memory_vs_n = {
    .name = "memory_vs_n",
    .summary = "peak RSS - RSS at the point's start (measured), workspace (declared) vs n",
    .group = BENCH_FIG_COST,
    .over_n = true,
    .quiet = false,
    .draw = fig_memory_vs_n,
};
