/*
 * fig_throughput.c — throughput_vs_n: GFLOP/s (prefill) or GB/s (decode) against n, with the
 * run's sgemm or memory read bandwidth as a line (one per thread count with several --threads)
 * and the FMA peak of each (kernel set, threads) present.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"

static double y_gflops(const bench_point *pt) { return pt->gflops_per_s; }

static double y_gbytes(const bench_point *pt) { return pt->gbytes_per_s; }

/* y = work / time: the bar of 1/time times y·median. */
static bool bar_per_time(const bench_run_data *rd, int64_t p, double y, double *lo, double *hi)
{
    int64_t reps;
    double tl, th;
    if (!bench_point_time_ci(rd, p, &tl, &th, &reps)) return false;
    const double t = rd->pts[p].time_median_s;
    *lo = y * t / th, *hi = y * t / tl;
    return true;
}

static bool bar_gflops(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    return bar_per_time(rd, p, rd->pts[p].gflops_per_s, lo, hi);
}

static bool bar_gbytes(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    return bar_per_time(rd, p, rd->pts[p].gbytes_per_s, lo, hi);
}

/* The yardsticks of subset ss's points as reference lines of p: (prefill) the FMA peak of each
 * (kernel set, threads) present, one line each; and, when its points have several thread counts,
 * sgemm (prefill) or read bandwidth (decode) per thread count. Returns whether it drew the
 * per-threads lines (the run's single sgemm or bandwidth line is then left out). */
static bool yardstick_refs(const bench_run_data *rd, const plot_subset *ss, panel *p, bool decode)
{
    bool several = false;
    for (int64_t i = 1; i < ss->n; i++)
        several |= rd->pts[ss->idx[i]].threads != rd->pts[ss->idx[0]].threads;
    for (int64_t i = 0; i < ss->n; i++) {
        const bench_point *pt = &rd->pts[ss->idx[i]];
        bool seen = false; /* an earlier point of the same (isa, threads) */
        for (int64_t j = 0; j < i && !seen; j++)
            seen = rd->pts[ss->idx[j]].threads == pt->threads &&
                   strcmp(rd->pts[ss->idx[j]].isa, pt->isa) == 0;
        bool thr_seen = false; /* of the same threads */
        for (int64_t j = 0; j < i && !thr_seen; j++)
            thr_seen = rd->pts[ss->idx[j]].threads == pt->threads;
        char label[96];
        const char *thr = pt->threads == 1 ? "" : "s";
        if (!seen && !decode && pt->peak_gflops > 0) {
            snprintf(label, sizeof label, "FMA peak %s, %d thread%s: %.0f GFLOP/s", pt->isa,
                     (int)pt->threads, thr, pt->peak_gflops);
            bench_fig_add_ref(p, pt->peak_gflops, label);
        }
        const double y = decode ? pt->bandwidth_gbs : pt->sgemm_gflops;
        if (several && !thr_seen && y > 0) {
            if (decode)
                snprintf(label, sizeof label, "memory read, %d thread%s: %.1f GB/s",
                         (int)pt->threads, thr, y);
            else
                snprintf(label, sizeof label, "OpenBLAS sgemm, %d thread%s: %.0f GFLOP/s",
                         (int)pt->threads, thr, y);
            bench_fig_add_ref(p, y, label);
        }
    }
    return several;
}

static attn_status fig_throughput_vs_n(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                       char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    const bench_run *run = &cx->rd->run;
    bench_plot_begin(&f, cx, ss, "throughput_vs_n",
                     decode ? "Decode throughput vs KV-cache length: bytes "
                              "read per second"
                            : "Throughput vs sequence length",
                     ss->idx, ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "", bench_plot_n_axis(ss),
                                   decode ? "GB/s (q, k, v, out bytes / median time)"
                                          : "GFLOP/s (useful flops / median time)");
    p->logx = p->ntics = p->yzero = true;
    bench_fig_add_set(p, cx->rd, set, nset, bench_plot_over_n, ss->x, decode ? y_gbytes : y_gflops,
                      decode ? bar_gbytes : bar_gflops);
    bench_plot_time_bars(cx->rd, ss->idx, ss->n, decode ? "the median GB/s" : "the median GFLOP/s",
                         p->bars, sizeof p->bars);
    const bool per_threads = yardstick_refs(cx->rd, ss, p, decode);
    const double line = decode ? run->mem_bandwidth_gbs : run->sgemm_gflops;
    if (line > 0 && !per_threads) {
        p->hline = line;
        if (decode)
            snprintf(p->hline_label, sizeof p->hline_label, "memory read bandwidth: %.1f GB/s",
                     line);
        else
            snprintf(p->hline_label, sizeof p->hline_label, "OpenBLAS sgemm (n=2048): %.0f GFLOP/s",
                     line);
    }
    return bench_plot_finish(cx, ss, &f,
                             "every series has a single n (sweep --n with 2 or more values)", msg,
                             msg_len);
}

const bench_figure bench_figure_throughput_vs_n = {
    .name = "throughput_vs_n",
    .summary = "GFLOP/s or GB/s (decode) vs n, against sgemm or bandwidth and FMA peaks",
    .group = BENCH_FIG_COST,
    .over_n = true,
    .quiet = false,
    .draw = fig_throughput_vs_n,
};
