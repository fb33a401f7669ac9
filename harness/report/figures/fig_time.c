/*
 * fig_time.c — the figures of time against n: time_vs_n (median time per forward or decode step,
 * log-log, error bars, each series with its least-squares power law, two or none where one does
 * not fit: bench_fit_curve's rule, said under the subtitle) and train_vs_forward (a forward and a
 * training step of every kind measured in both passes, each with its law; nothing drawn or said
 * without --pass train points).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "fit.h"

/* The rule of fit_laws, said under the subtitle when it drew two laws or none somewhere. */
static const char FIT_RULE[] =
    "lines: one power law where R² >= 0.98 or every point lies within 10 % of it; "
    "else one below and one above the middle n (4 or more n), else none";

/* Each series of p its power laws (bench_fit_curve), with exponents and R² in the legend.
 * Returns whether a series got two laws or none (the figure then states the rule). */
static bool fit_laws(panel *p)
{
    bool told = false;
    for (int s = 0; s < p->ns; s++) {
        pseries *ps = &p->s[s];
        bench_curve_fit cf;
        char why[ATTN_MSG_LEN], r2[32] = "";
        if (bench_fit_curve(ps->x, ps->y, ps->n, &cf, why, sizeof why) != ATTN_OK) continue;
        if (isfinite(cf.all.r2)) snprintf(r2, sizeof r2, ", R² %.3f", cf.all.r2);
        const double x0 = ps->x[0], x1 = ps->x[ps->n - 1];
        if (cf.pieces == 1) {
            ps->nfit = 1;
            ps->fit[0] = (fit_line){exp(cf.all.intercept), cf.all.slope, x0, x1};
            snprintf(ps->suffix, sizeof ps->suffix, "  (n^{%.2f}%s)", cf.all.slope, r2);
            continue;
        }
        told = true;
        if (cf.pieces == 0) {
            snprintf(ps->suffix, sizeof ps->suffix, "  (no single law%s)", r2);
            continue;
        }
        ps->nfit = 2;
        ps->fit[0] = (fit_line){exp(cf.lower.intercept), cf.lower.slope, x0, cf.split};
        ps->fit[1] = (fit_line){exp(cf.upper.intercept), cf.upper.slope, cf.split, x1};
        char c[32];
        snprintf(ps->suffix, sizeof ps->suffix, "  (n^{%.2f}, n^{%.2f} from %s; one law%s)",
                 cf.lower.slope, cf.upper.slope, bench_format_count(cf.split, c, sizeof c), r2);
    }
    return told;
}

static attn_status fig_time_vs_n(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                 char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    bench_plot_begin(&f, cx, ss, "time_vs_n",
                     decode ? "Time per decode step vs KV-cache length"
                            : "Time per forward vs sequence length",
                     ss->idx, ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "", bench_plot_n_axis(ss),
                                   decode ? "median time per decode step (ms)"
                                          : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    p->lines = false;
    bench_fig_add_set(p, cx->rd, set, nset, bench_plot_over_n, ss->x, bench_plot_y_time_ms,
                      bench_plot_bar_time_ms);
    bench_plot_time_bars(cx->rd, ss->idx, ss->n, "the median time", p->bars, sizeof p->bars);
    if (fit_laws(p)) {
        snprintf(f.note + strlen(f.note), sizeof f.note - strlen(f.note), "%s%s",
                 f.note[0] ? "  |  " : "", FIT_RULE);
    }
    snprintf(f.fits, sizeof f.fits, "lines: least-squares power laws");
    return bench_plot_finish(cx, ss, &f,
                             "every series has a single n (sweep --n with 2 or more values)", msg,
                             msg_len);
}

/* Series k of set is of pass `name`? */
static bool of_pass(const plot_ctx *cx, const bench_series *set, int64_t k, const char *name)
{
    return strcmp(cx->rd->pts[set[k].idx[0]].pass, name) == 0;
}

/* Time of a forward and of a training step (forward + backward, --pass train) per kind against
 * n: the series of both passes of every kind that has both (nothing drawn or said when the run
 * has no train points). */
static attn_status fig_train_vs_forward(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                        char *msg, size_t msg_len)
{
    const bench_series *set = sets->over_n;
    const int64_t nset = sets->nover_n;
    bench_series *pick = malloc((size_t)(nset ? nset : 1) * sizeof *pick);
    if (!pick) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    int64_t npick = 0, trains = 0;
    for (int64_t k = 0; k < nset; k++) {
        const bool train = of_pass(cx, set, k, "train");
        if (!train && !of_pass(cx, set, k, "forward")) continue;
        trains += train;
        bool twin = false; /* the other pass of the same kind */
        for (int64_t o = 0; o < nset && !twin; o++)
            twin = o != k && of_pass(cx, set, o, train ? "forward" : "train") &&
                   strcmp(cx->rd->pts[set[o].idx[0]].kind, cx->rd->pts[set[k].idx[0]].kind) == 0;
        if (twin) pick[npick++] = set[k];
    }
    attn_status st = ATTN_OK;
    if (trains > 0) {
        figure f;
        bench_plot_begin(&f, cx, ss, "train_vs_forward",
                         "Training step (forward + backward) vs forward", ss->idx, ss->n,
                         BENCH_K_N | BENCH_K_PASS);
        panel *p = bench_fig_add_panel(&f, "", bench_plot_n_axis(ss), "median time (ms)");
        p->logx = p->logy = p->ntics = true;
        p->lines = false;
        bench_fig_add_set(p, cx->rd, pick, npick, bench_plot_over_n, ss->x, bench_plot_y_time_ms,
                          bench_plot_bar_time_ms);
        bench_plot_time_bars(cx->rd, ss->idx, ss->n, "the median time", p->bars, sizeof p->bars);
        fit_laws(p);
        snprintf(f.fits, sizeof f.fits, "lines: least-squares power laws");
        st = bench_plot_finish(
            cx, ss, &f,
            "no kind has both a forward and a train series over 2 or more n (sweep "
            "--pass forward,train)",
            msg, msg_len);
    }
    free(pick);
    return st;
}

const bench_figure bench_figure_time_vs_n = {
    .name = "time_vs_n",
    .summary = "median time vs n, log-log, each series with its least-squares power law",
    .group = BENCH_FIG_COST,
    .over_n = true,
    .quiet = false,
    .draw = fig_time_vs_n,
};

const bench_figure bench_figure_train_vs_forward = {
    .name = "train_vs_forward",
    .summary = "a forward and a training step vs n, for the kinds measured in both passes",
    .group = BENCH_FIG_COST,
    .over_n = true,
    .quiet = true,
    .draw = fig_train_vs_forward,
};
