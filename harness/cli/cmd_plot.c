/*
 * cmd_plot.c — `bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]`: one figure per
 * question about a run, for each mode (prefill, decode) measured; this file chooses the figures
 * and fills them, figure.c draws them (figure.h):
 *   time_vs_n           median time vs n, log-log, with each series' least-squares power law
 *                       and its exponent in the legend
 *   memory_vs_n         peak RSS - RSS at the point's start (measured) and workspace (declared)
 *   throughput_vs_n     GFLOP/s (prefill) or GB/s (decode) vs n, with the run's sgemm or
 *                       memory bandwidth as a line, and the FMA peak of each (kernel set,
 *                       threads) present (per threads sgemm/bandwidth with several --threads)
 *   accuracy_vs_n       relative error vs exact float64 attention (and retrieval) vs n
 *   accuracy_vs_<param> the same vs each kind parameter the run swept, one line per n
 *   error_vs_cost       error vs time at the largest n, one point per parameter value
 *   time_vs_heads       time vs query heads, and time_vs_kv_heads (MHA, GQA, MQA)
 *   scaling_<kind>      (several --threads) speed-up T(fewest)/T(p) and parallel efficiency vs
 *                       threads, one line per setting
 * A series is one line (series.h); each kind keeps its colour and marker across the run's
 * figures; dashes and open markers mark causal when a figure has both. With several datasets,
 * the time, memory, throughput and heads figures show the first dataset (a note names the
 * others) and the accuracy figures come once per dataset (_<dataset>); with causal 0 and 1 and
 * more than MAX_LINES lines, every figure comes once per causal value (_noncausal, _causal).
 * A figure without data in the run is skipped with one line saying why.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "figure.h"
#include "fit.h"
#include "gnuplot.h"
#include "series.h"

static double y_time_ms(const bench_point *pt) { return pt->time_median_s * 1e3; }
static double y_rss_added(const bench_point *pt) { return bench_rss_of(pt, true); }
static double y_rss(const bench_point *pt) { return bench_rss_of(pt, false); }
static double y_workspace(const bench_point *pt) { return (double)pt->workspace_bytes; }
static double y_gflops(const bench_point *pt) { return pt->gflops_per_s; }
static double y_gbytes(const bench_point *pt) { return pt->gbytes_per_s; }
static double y_rel_err(const bench_point *pt) { return pt->rel_err; }
static double y_retrieval(const bench_point *pt)
{
    return pt->retrieval_queries > 0 ? pt->retrieval : NAN;
}

/* Error bars: the 95 % CI of the median time (bench_point_time_ci), carried over to what is
 * computed from it; Wilson's interval of the retrieved fraction of the planted queries. */
static bool bar_time_ms(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    int64_t reps;
    if (!bench_point_time_ci(rd, p, lo, hi, &reps)) return false;
    *lo *= 1e3, *hi *= 1e3;
    return true;
}

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

static bool bar_retrieval(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    const bench_point *pt = &rd->pts[p];
    if (!(pt->retrieval_queries > 0) || !isfinite(pt->retrieval)) return false;
    bench_wilson(round(pt->retrieval * pt->retrieval_queries), pt->retrieval_queries, lo, hi);
    return true;
}

/* The legend row of time bars over points idx[0..n): a 95 % CI of the median when every point
 * has 6 or more repetitions, else what the smallest count gives (min-max of 5: 93.8 %). `of`
 * names the quantity ("the median time", "the median GFLOP/s"). */
static void time_bars(const bench_run_data *rd, const int64_t *idx, int64_t n, const char *of,
                      char *buf, size_t len)
{
    int64_t fewest = -1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = rd->sample_count ? rd->sample_count[idx[i]] : 0;
        if (fewest < 0 || c < fewest) fewest = c;
    }
    if (fewest == 0) snprintf(buf, len, "bars: min-max of the repetitions");
    else if (fewest >= 6) snprintf(buf, len, "bars: 95 %% CI of %s", of);
    else
        snprintf(buf, len, "bars: min-max of %lld reps (%.1f %% CI of %s)", (long long)fewest,
                 100 * (1 - pow(2, 1 - (double)fewest)), of);
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

/* ---- the figures ---- */

typedef struct subset {
    const char *mode; /* "prefill", "decode", ... */
    int64_t *idx;     /* points of that mode (and dataset, causal: see plot_mode) */
    int64_t n;
    double *x;       /* scratch: one x per point of the run */
    char suffix[96]; /* after the figure's name: "", "_needle", "_causal" */
    char title[64];  /* after its title: "", " on needle", " (causal)" */
    char note[256];  /* a line under the subtitle, or "" */
} subset;

/* A figure's file name (no extension): name, the subset's suffix, then the mode unless prefill. */
static void figure_name(const subset *ss, const char *name, char *buf, size_t len)
{
    const bool other = strcmp(ss->mode, "prefill") != 0;
    snprintf(buf, len, "%s%s%s%s", name, ss->suffix, other ? "_" : "", other ? ss->mode : "");
}

static void skip(plot_ctx *cx, const subset *ss, const char *name, const char *why)
{
    char file[256];
    figure_name(ss, name, file, sizeof file);
    if (cx->out) fprintf(cx->out, "skipped %s.%s: %s\n", file, cx->format, why);
    cx->skipped++;
}

/* Name, title and subtitle of a figure for subset ss (the settings all its points share,
 * except those in `varying`). */
static void begin(figure *f, const plot_ctx *cx, const subset *ss, const char *name,
                  const char *title, const int64_t *idx, int64_t n, unsigned varying)
{
    memset(f, 0, sizeof *f);
    snprintf(f->base, sizeof f->base, "%s", name);
    figure_name(ss, name, f->name, sizeof f->name);
    snprintf(f->title, sizeof f->title, "%s%s", title, ss->title);
    snprintf(f->note, sizeof f->note, "%s", ss->note);
    char common[256];
    bench_common_settings(cx->rd, idx, n, BENCH_K_ALL & ~varying, common, sizeof common);
    const char *file = strrchr(cx->rd->path, '/');
    char origin[256];
    /* the points' threads and kernel set when they share them (else the lines' labels say) */
    bool one_threads = true, one_isa = true;
    const bench_point *p0 = n ? &cx->rd->pts[idx[0]] : NULL;
    for (int64_t i = 1; i < n; i++) {
        one_threads &= cx->rd->pts[idx[i]].threads == p0->threads;
        one_isa &= strcmp(cx->rd->pts[idx[i]].isa, p0->isa) == 0;
    }
    char thr[32] = "", isa[32] = "";
    if (p0 && one_threads)
        snprintf(thr, sizeof thr, ", %d thread%s", (int)p0->threads, p0->threads == 1 ? "" : "s");
    if (p0 && one_isa && p0->isa[0]) snprintf(isa, sizeof isa, ", %s", p0->isa);
    snprintf(origin, sizeof origin, "run %lld of %s%s%s, %.40s", (long long)cx->rd->run.run_id,
             file ? file + 1 : cx->rd->path, thr, isa, cx->rd->run.cpu_model);
    /* figure.c wraps the header to the page's width */
    snprintf(f->subtitle, sizeof f->subtitle, "%s  |  %s", common, origin);
}

/* Draw f if a series of it has 2 or more x, else say why it is skipped; frees f. */
static attn_status finish(plot_ctx *cx, const subset *ss, figure *f, const char *why, char *msg,
                          size_t msg_len)
{
    attn_status st = ATTN_OK;
    if (bench_fig_has_curve(f)) st = bench_fig_draw(cx, f, msg, msg_len);
    else skip(cx, ss, f->base, why);
    bench_fig_free(f);
    return st;
}

static const char *n_axis(const subset *ss)
{
    return strcmp(ss->mode, "decode") == 0 ? "KV-cache length n (keys)"
                                           : "sequence length n (queries = keys = n)";
}

static const bench_group_by over_n = {BENCH_K_ALL & ~BENCH_K_N, NULL};

/* Group ss's points over n. */
static attn_status series_over_n(const plot_ctx *cx, const subset *ss, bench_series **set,
                                 int64_t *nset)
{
    for (int64_t i = 0; i < ss->n; i++) ss->x[ss->idx[i]] = (double)cx->rd->pts[ss->idx[i]].kv_len;
    return bench_series_group(cx->rd, ss->idx, ss->n, over_n, ss->x, set, nset);
}

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

static attn_status fig_time_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                 int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    begin(&f, cx, ss, "time_vs_n",
          decode ? "Time per decode step vs KV-cache length"
                 : "Time per forward vs sequence length",
          ss->idx, ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "", n_axis(ss),
                                   decode ? "median time per decode step (ms)"
                                          : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    p->lines = false;
    bench_fig_add_set(p, cx->rd, set, nset, over_n, ss->x, y_time_ms, bar_time_ms);
    time_bars(cx->rd, ss->idx, ss->n, "the median time", p->bars, sizeof p->bars);
    if (fit_laws(p)) {
        snprintf(f.note + strlen(f.note), sizeof f.note - strlen(f.note), "%s%s",
                 f.note[0] ? "  |  " : "", FIT_RULE);
    }
    snprintf(f.fits, sizeof f.fits, "lines: least-squares power laws");
    return finish(cx, ss, &f, "every series has a single n (sweep --n with 2 or more values)", msg,
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
static attn_status fig_train_vs_forward(plot_ctx *cx, const subset *ss, const bench_series *set,
                                        int64_t nset, char *msg, size_t msg_len)
{
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
        begin(&f, cx, ss, "train_vs_forward", "Training step (forward + backward) vs forward",
              ss->idx, ss->n, BENCH_K_N | BENCH_K_PASS);
        panel *p = bench_fig_add_panel(&f, "", n_axis(ss), "median time (ms)");
        p->logx = p->logy = p->ntics = true;
        p->lines = false;
        bench_fig_add_set(p, cx->rd, pick, npick, over_n, ss->x, y_time_ms, bar_time_ms);
        time_bars(cx->rd, ss->idx, ss->n, "the median time", p->bars, sizeof p->bars);
        fit_laws(p);
        snprintf(f.fits, sizeof f.fits, "lines: least-squares power laws");
        st = finish(cx, ss, &f,
                    "no kind has both a forward and a train series over 2 or more n (sweep "
                    "--pass forward,train)",
                    msg, msg_len);
    }
    free(pick);
    return st;
}

static attn_status fig_memory_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                   int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    begin(&f, cx, ss, "memory_vs_n", "Memory vs sequence length", ss->idx, ss->n, BENCH_K_N);
    bool added = true, workspace = false;
    for (int64_t i = 0; i < ss->n; i++) {
        added &= !isnan(bench_rss_of(&cx->rd->pts[ss->idx[i]], true));
        workspace |= cx->rd->pts[ss->idx[i]].workspace_bytes > 0;
    }
    panel *p =
        bench_fig_add_panel(&f,
                            added ? "measured: peak RSS - RSS at the point's start (what it added)"
                                  : "measured: peak RSS of the process",
                            n_axis(ss), "");
    p->logx = p->logy = p->ntics = true;
    bench_fig_add_set(p, cx->rd, set, nset, over_n, ss->x, added ? y_rss_added : y_rss, NULL);
    bench_fig_bytes_unit(p, added ? "peak RSS - base RSS" : "peak RSS");
    if (workspace) {
        panel *w = bench_fig_add_panel(&f, "declared: workspace (scratch the kind asks for)",
                                       n_axis(ss), "");
        w->logx = w->logy = w->ntics = true;
        bench_fig_add_set(w, cx->rd, set, nset, over_n, ss->x, y_workspace, NULL);
        bench_fig_bytes_unit(w, "workspace");
    }
    return finish(cx, ss, &f, "no series has a known peak RSS at 2 or more n", msg, msg_len);
}

/* The yardsticks of subset ss's points as reference lines of p: (prefill) the FMA peak of each
 * (kernel set, threads) present, one line each; and, when its points have several thread counts,
 * sgemm (prefill) or read bandwidth (decode) per thread count. Returns whether it drew the
 * per-threads lines (the run's single sgemm or bandwidth line is then left out). */
static bool yardstick_refs(const bench_run_data *rd, const subset *ss, panel *p, bool decode)
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

static attn_status fig_throughput_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                       int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    const bench_run *run = &cx->rd->run;
    begin(&f, cx, ss, "throughput_vs_n",
          decode ? "Decode throughput vs KV-cache length: bytes "
                   "read per second"
                 : "Throughput vs sequence length",
          ss->idx, ss->n, BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "", n_axis(ss),
                                   decode ? "GB/s (q, k, v, out bytes / median time)"
                                          : "GFLOP/s (useful flops / median time)");
    p->logx = p->ntics = p->yzero = true;
    bench_fig_add_set(p, cx->rd, set, nset, over_n, ss->x, decode ? y_gbytes : y_gflops,
                      decode ? bar_gbytes : bar_gflops);
    time_bars(cx->rd, ss->idx, ss->n, decode ? "the median GB/s" : "the median GFLOP/s", p->bars,
              sizeof p->bars);
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
    return finish(cx, ss, &f, "every series has a single n (sweep --n with 2 or more values)", msg,
                  msg_len);
}

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
    const bench_group_by no_causal = {over_n.fields & ~BENCH_K_CAUSAL, NULL};
    bench_series_label(rd, set, nset, k, over_n, label, sizeof label);
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
static attn_status fig_speedup_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                    int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    begin(&f, cx, ss, "speedup_vs_n",
          decode ? "Speed-up over full attention per decode step vs KV-cache length"
                 : "Speed-up over full attention vs sequence length",
          ss->idx, ss->n, BENCH_K_N);
    panel *p =
        bench_fig_add_panel(&f, "", n_axis(ss), "speed-up: time of full / time of the kind (×)");
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
        skip(cx, ss, "speedup_vs_n",
             "no kind has a full series at the same settings (sweep --kinds full,KIND)");
        return ATTN_OK;
    }
    return finish(cx, ss, &f, "every series has a single n (sweep --n with 2 or more values)", msg,
                  msg_len);
}

static bool any_retrieval(const plot_ctx *cx, const int64_t *idx, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (cx->rd->pts[idx[i]].retrieval_queries > 0 && isfinite(cx->rd->pts[idx[i]].retrieval))
            return true;
    return false;
}

static attn_status fig_accuracy_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                     int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    begin(&f, cx, ss, "accuracy_vs_n",
          "Accuracy vs sequence length (against exact float64 attention)", ss->idx, ss->n,
          BENCH_K_N);
    panel *p = bench_fig_add_panel(&f, "relative L2 error", n_axis(ss),
                                   "relative L2 error vs exact float64");
    p->logx = p->logy = p->ntics = true;
    bench_fig_add_set(p, cx->rd, set, nset, over_n, ss->x, y_rel_err, NULL);
    if (any_retrieval(cx, ss->idx, ss->n)) {
        panel *r = bench_fig_add_panel(&f, "retrieval (needle datasets)", n_axis(ss),
                                       "fraction of planted queries retrieved");
        r->logx = r->ntics = r->yzero = true;
        bench_fig_add_set(r, cx->rd, set, nset, over_n, ss->x, y_retrieval, bar_retrieval);
        retrieval_bars(cx->rd, ss->idx, ss->n, r->bars, sizeof r->bars);
    }
    return finish(cx, ss, &f, "no series has a finite error at 2 or more n", msg, msg_len);
}

/* The parameters swept in ss: names whose (normalized) value differs between two points of one
 * kind. Names go into names[0..*count) (at most max). */
static void swept_params(const plot_ctx *cx, const subset *ss, char names[][64], int *count,
                         int max)
{
    const bench_run_data *rd = cx->rd;
    *count = 0;
    for (int64_t i = 0; i < ss->n; i++) {
        const int64_t a = ss->idx[i];
        const char *params = rd->params[a];
        for (const char *s = params; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
            const char *eq = strchr(s, '=');
            if (!eq || eq - s >= 64) break;
            char name[64], va[64], vb[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
            bool known = false;
            for (int k = 0; k < *count; k++) known |= strcmp(names[k], name) == 0;
            if (known || *count == max) continue;
            bench_param_value(params, name, va, sizeof va);
            for (int64_t j = 0; j < ss->n; j++) {
                const int64_t b = ss->idx[j];
                if (strcmp(rd->pts[a].kind, rd->pts[b].kind) != 0) continue;
                bench_param_value(rd->params[b], name, vb, sizeof vb);
                if (strcmp(va, vb) != 0) {
                    snprintf(names[(*count)++], 64, "%s", name);
                    break;
                }
            }
        }
    }
}

/* [a-z0-9_] only, for file names made from parameter names. */
static void file_safe(const char *in, char *out, size_t len)
{
    size_t w = 0;
    for (; *in && w + 1 < len; in++)
        out[w++] = (*in >= 'a' && *in <= 'z') || (*in >= '0' && *in <= '9') ? *in : '_';
    out[w] = '\0';
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* At most 4 of the subset's n, spread from the smallest to the largest, into ns; how many. */
static int spread_n(const bench_run_data *rd, const subset *ss, int64_t ns[4])
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

static attn_status fig_accuracy_vs_param(plot_ctx *cx, const subset *ss, const char *name,
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
    file_safe(name, safe, sizeof safe);
    snprintf(fname, sizeof fname, "accuracy_vs_%s", safe);
    snprintf(title, sizeof title, "Accuracy vs parameter %s%s", name,
             nn == 4 ? " (at 4 of the measured n)" : "");
    begin(&f, cx, ss, fname, title, idx, m, BENCH_K_N | BENCH_K_PARAMS);
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
        st = finish(cx, ss, &f, "no series has a finite error at 2 or more values", msg, msg_len);
    else bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* The points of subset ss measured at n (into idx: *m of them), grouped into series by `by`
 * (x from ss->x); ATTN_EFAIL with the message when memory runs out. */
static attn_status group_at_n(const bench_run_data *rd, const subset *ss, int64_t n,
                              bench_group_by by, int64_t *idx, int64_t *m, bench_series **set,
                              int64_t *nset, char *msg, size_t msg_len)
{
    *m = 0;
    for (int64_t i = 0; i < ss->n; i++)
        if (rd->pts[ss->idx[i]].kv_len == n) idx[(*m)++] = ss->idx[i];
    if (bench_series_group(rd, idx, *m, by, ss->x, set, nset) != ATTN_OK)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    return ATTN_OK;
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
        if (!bar_time_ms(rd, s->idx[i], &ps->lo[j], &ps->hi[j]) || !(ps->lo[j] > 0))
            ps->lo[j] = ps->hi[j] = ps->x[j];
        j++;
    }
}

/* Error vs time at the largest n where a kind was measured at 2 or more parameter values: one
 * point per parameter value (labelled with the swept values), one line per kind and setting. */
static attn_status fig_error_vs_cost(plot_ctx *cx, const subset *ss, char names[][64], int nnames,
                                     char *msg, size_t msg_len)
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
        skip(cx, ss, "error_vs_cost",
             "no kind was measured at 2 or more parameter values at one n");
        return ATTN_OK;
    }
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    st = group_at_n(rd, ss, best_n, by, idx, &m, &set, &nset, msg, msg_len);
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title, "Error vs cost at n = %s: one point per parameter value",
             bench_format_count((double)best_n, c, sizeof c));
    begin(&f, cx, ss, "error_vs_cost", title, idx, m, BENCH_K_PARAMS);
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
    time_bars(rd, idx, m, "the median time", p->bars, sizeof p->bars);
    if (!st && p->ns > 0) st = bench_fig_draw(cx, &f, msg, msg_len);
    else if (!st) skip(cx, ss, "error_vs_cost", "no point has a finite error");
    bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* Time vs heads (axis BENCH_K_HEADS) or vs kv_heads (BENCH_K_KV_HEADS), at the largest n where
 * some series has 2 or more values of it. */
static attn_status fig_time_vs_heads(plot_ctx *cx, const subset *ss, unsigned axis, char *msg,
                                     size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    const bool kv = axis == BENCH_K_KV_HEADS;
    const char *name = kv ? "time_vs_kv_heads" : "time_vs_heads";
    /* vs heads, a series follows its kind's kv_heads rule (MHA: = heads; mqa: 1) unless the run
     * swept kv_heads too, then one series per kv_heads value */
    bench_group_by by = {BENCH_K_ALL & ~BENCH_K_N & ~axis & ~(kv ? 0u : (unsigned)BENCH_K_KV_HEADS),
                         NULL};
    for (int64_t i = 0; i < ss->n; i++)
        ss->x[ss->idx[i]] = (double)(kv ? rd->pts[ss->idx[i]].kv_heads : rd->pts[ss->idx[i]].heads);
    int64_t best_n = 0;
    bench_series *set = NULL;
    int64_t nset = 0;
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    attn_status st = idx ? ATTN_OK : ATTN_EFAIL;
    for (int attempt = 0; !st && attempt < 2; attempt++) {
        bench_group_by with_n = {by.fields | BENCH_K_N, NULL};
        st = bench_series_group(rd, ss->idx, ss->n, with_n, ss->x, &set, &nset);
        bool dup = false;
        for (int64_t k = 0; !st && k < nset; k++) {
            int64_t distinct = 1;
            for (int64_t i = 1; i < set[k].n; i++) {
                const bool same = ss->x[set[k].idx[i]] == ss->x[set[k].idx[i - 1]];
                distinct += !same;
                dup |= same;
            }
            if (distinct >= 2 && rd->pts[set[k].idx[0]].kv_len > best_n)
                best_n = rd->pts[set[k].idx[0]].kv_len;
        }
        bench_series_free(set, nset);
        set = NULL, nset = 0;
        if (!dup || kv) break;
        by.fields |= BENCH_K_KV_HEADS, best_n = 0;
    }
    if (st) {
        free(idx);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    }
    if (best_n == 0) {
        skip(cx, ss, name,
             kv ? "no series was measured at 2 or more kv_heads (sweep --kv-heads 1,2,8)"
                : "no series was measured at 2 or more heads (sweep --heads 4,8,16)");
        free(idx);
        return ATTN_OK;
    }
    st = group_at_n(rd, ss, best_n, by, idx, &m, &set, &nset, msg, msg_len);
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title,
             kv ? "Time vs KV heads (MHA to GQA to MQA) at n = %s"
                : "Time vs query heads at n = %s",
             bench_format_count((double)best_n, c, sizeof c));
    begin(&f, cx, ss, name, title, idx, m, axis | (kv ? 0u : (unsigned)BENCH_K_KV_HEADS));
    panel *p =
        bench_fig_add_panel(&f, "", kv ? "key/value heads Hkv" : "query heads H",
                            strcmp(ss->mode, "decode") == 0 ? "median time per decode step (ms)"
                                                            : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    if (!st) bench_fig_add_set(p, rd, set, nset, by, ss->x, y_time_ms, bar_time_ms);
    time_bars(rd, idx, m, "the median time", p->bars, sizeof p->bars);
    for (int s = 0; !st && !kv && s < p->ns; s++) { /* how each line sets its KV heads */
        const bench_series *src = set;
        while (src->idx[0] != p->s[s].first) src++;
        bool mha = true, mqa = true, ratio = true;
        const bench_point *a = &rd->pts[src->idx[0]];
        for (int64_t i = 0; i < src->n; i++) {
            const bench_point *b = &rd->pts[src->idx[i]];
            mha &= b->kv_heads == b->heads, mqa &= b->kv_heads == 1;
            ratio &= b->heads * a->kv_heads == a->heads * b->kv_heads;
        }
        char rule[48] = "";
        if (mha) snprintf(rule, sizeof rule, " (Hkv = H)");
        else if (mqa) snprintf(rule, sizeof rule, " (Hkv = 1)");
        else if (ratio)
            snprintf(rule, sizeof rule, " (Hkv = H/%lld)", (long long)(a->heads / a->kv_heads));
        const size_t used = strlen(p->s[s].label);
        snprintf(p->s[s].label + used, sizeof p->s[s].label - used, "%s", rule);
    }
    if (!st) st = bench_fig_draw(cx, &f, msg, msg_len);
    bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

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
static attn_status fig_scaling(plot_ctx *cx, const subset *ss, char *msg, size_t msg_len)
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
        begin(&f, cx, ss, name, title, idx, m, BENCH_K_THREADS | BENCH_K_N);
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
        if (!st) st = finish(cx, ss, &f, "no series has 2 or more thread counts", msg, msg_len);
        else bench_fig_free(&f);
        bench_series_free(set, nset);
    }
    free(idx);
    return st;
}

/* Which figures plot_figures draws. */
enum { FIG_COST = 1, FIG_ACCURACY = 2 };
/* More lines than this over n with causal 0 and 1: one figure per causal value. */
enum { MAX_LINES = 12 };

/* The figures `which` of subset ss. */
static attn_status plot_figures(plot_ctx *cx, subset *ss, unsigned which, char *msg, size_t msg_len)
{
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = series_over_n(cx, ss, &set, &nset);
    if (st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bool over_n_curve = false;
    for (int64_t k = 0; k < nset; k++)
        for (int64_t i = 1; i < set[k].n; i++)
            over_n_curve |= cx->rd->pts[set[k].idx[i]].kv_len != cx->rd->pts[set[k].idx[0]].kv_len;
    if (over_n_curve) {
        if (which & FIG_COST) {
            st = fig_time_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_speedup_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_memory_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_throughput_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_train_vs_forward(cx, ss, set, nset, msg, msg_len);
        }
        if (!st && which & FIG_ACCURACY) st = fig_accuracy_vs_n(cx, ss, set, nset, msg, msg_len);
    } else {
        skip(cx, ss,
             which == FIG_COST       ? "{time,speedup,memory,throughput}_vs_n"
             : which == FIG_ACCURACY ? "accuracy_vs_n"
                                     : "{time,speedup,memory,throughput,accuracy}_vs_n",
             "every series has a single n (sweep --n with 2 or more values)");
    }
    bench_series_free(set, nset);
    if (!st && which & FIG_ACCURACY) {
        char names[16][64];
        int nnames = 0;
        swept_params(cx, ss, names, &nnames, 16);
        for (int k = 0; !st && k < nnames; k++)
            st = fig_accuracy_vs_param(cx, ss, names[k], msg, msg_len);
        if (!st && nnames) st = fig_error_vs_cost(cx, ss, names, nnames, msg, msg_len);
    }
    if (!st && which & FIG_COST) st = fig_time_vs_heads(cx, ss, BENCH_K_HEADS, msg, msg_len);
    if (!st && which & FIG_COST) st = fig_time_vs_heads(cx, ss, BENCH_K_KV_HEADS, msg, msg_len);
    if (!st && which & FIG_COST) st = fig_scaling(cx, ss, msg, msg_len);
    return st;
}

/* The points of ss that share the settings `fields` with point like, into sub (its idx has room
 * for ss->n). */
static void narrow(const plot_ctx *cx, const subset *ss, subset *sub, int64_t like, unsigned fields)
{
    const bench_group_by by = {fields, NULL};
    sub->n = 0;
    for (int64_t i = 0; i < ss->n; i++)
        if (bench_same_settings(cx->rd, ss->idx[i], like, by)) sub->idx[sub->n++] = ss->idx[i];
}

/* ss's figures `which`; with causal 0 and 1 and more than MAX_LINES series over n, once per
 * causal value (suffix _noncausal, _causal). */
static attn_status plot_by_causal(plot_ctx *cx, subset *ss, unsigned which, char *msg,
                                  size_t msg_len)
{
    int64_t with[2] = {-1, -1}; /* a point of each causal value */
    for (int64_t i = 0; i < ss->n; i++) with[cx->rd->pts[ss->idx[i]].causal != 0] = ss->idx[i];
    bench_series *set = NULL;
    int64_t nset = 0;
    if (with[0] < 0 || with[1] < 0) return plot_figures(cx, ss, which, msg, msg_len);
    if (series_over_n(cx, ss, &set, &nset))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bench_series_free(set, nset);
    if (nset <= MAX_LINES) return plot_figures(cx, ss, which, msg, msg_len);
    subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    attn_status st = ATTN_OK;
    for (int c = 0; !st && c < 2; c++) {
        narrow(cx, ss, &sub, with[c], BENCH_K_CAUSAL);
        snprintf(sub.suffix, sizeof sub.suffix, "%s%s", ss->suffix, c ? "_causal" : "_noncausal");
        snprintf(sub.title, sizeof sub.title, "%s%s", ss->title, c ? " (causal)" : " (non-causal)");
        st = plot_figures(cx, &sub, which, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* Every figure of one mode. With several datasets, the time, memory, throughput and heads
 * figures show only the first dataset of the run (times hardly depend on the values; the note
 * says which datasets are left out), and the accuracy figures come once per dataset (suffix
 * _<dataset>). */
static attn_status plot_mode(plot_ctx *cx, subset *ss, char *msg, size_t msg_len)
{
    const unsigned ds = BENCH_K_DATASET;
    int64_t first[64]; /* the first point of each dataset */
    int nds = 0;
    for (int64_t i = 0; i < ss->n && nds < 64; i++) {
        int k = 0;
        while (k < nds &&
               !bench_same_settings(cx->rd, first[k], ss->idx[i], (bench_group_by){ds, NULL}))
            k++;
        if (k == nds) first[nds++] = ss->idx[i];
    }
    if (nds <= 1) return plot_by_causal(cx, ss, FIG_COST | FIG_ACCURACY, msg, msg_len);
    /* a dataset's name, with its params when another dataset has the same name */
    char text[64][160];
    for (int k = 0; k < nds; k++) {
        const bench_point *pt = &cx->rd->pts[first[k]];
        bool twin = false;
        for (int o = 0; o < nds; o++)
            twin |= o != k && strcmp(cx->rd->pts[first[o]].dataset, pt->dataset) == 0;
        snprintf(text[k], sizeof text[k], "%s%s%s%s", pt->dataset, twin ? "(" : "",
                 twin ? pt->dataset_params : "", twin ? ")" : "");
    }
    subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    narrow(cx, ss, &sub, first[0], ds);
    int w = snprintf(sub.note, sizeof sub.note,
                     "timings and memory on %s only (they hardly depend "
                     "on the data); the run also has ",
                     text[0]);
    for (int k = 1; k < nds && w < (int)sizeof sub.note; k++)
        w +=
            snprintf(sub.note + w, sizeof sub.note - (size_t)w, "%s%s", k > 1 ? ", " : "", text[k]);
    snprintf(sub.title, sizeof sub.title, " on %s", text[0]);
    attn_status st = plot_by_causal(cx, &sub, FIG_COST, msg, msg_len);
    sub.note[0] = '\0';
    for (int k = 0; !st && k < nds; k++) {
        narrow(cx, ss, &sub, first[k], ds);
        char safe[64];
        file_safe(cx->rd->pts[first[k]].dataset, safe, sizeof safe);
        int same_name = 0; /* earlier datasets of the same name: _needle, _needle_2 */
        for (int o = 0; o < k; o++)
            same_name += strcmp(cx->rd->pts[first[o]].dataset, cx->rd->pts[first[k]].dataset) == 0;
        if (same_name)
            snprintf(sub.suffix, sizeof sub.suffix, "%s_%s_%d", ss->suffix, safe, same_name + 1);
        else snprintf(sub.suffix, sizeof sub.suffix, "%s_%s", ss->suffix, safe);
        snprintf(sub.title, sizeof sub.title, " on %s", text[k]);
        st = plot_by_causal(cx, &sub, FIG_ACCURACY, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* mkdir -p */
static attn_status make_dirs(const char *dir, char *msg, size_t msg_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *s = path + 1;; s++) {
        const bool end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return attn_fail(ATTN_EINVAL, msg, msg_len,
                                 "cannot create %s: %s (choose another --out)", path,
                                 strerror(errno));
            if (end) break;
            *s = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is not a directory (choose another --out)",
                         dir);
    if (access(dir, W_OK | X_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot write in %s: %s (choose another --out)",
                         dir, strerror(errno));
    return ATTN_OK;
}

/* Is name a figure of `bench plot` (a known figure name, any of its image formats)? */
static bool is_figure_file(const char *name)
{
    static const char *const bases[] = {"time_vs_",        "speedup_vs_",  "memory_vs_",
                                        "throughput_vs_",  "accuracy_vs_", "error_vs_cost",
                                        "train_vs_forward"};
    const char *dot = strrchr(name, '.');
    if (!dot || !(strcmp(dot, ".png") == 0 || strcmp(dot, ".svg") == 0 || strcmp(dot, ".pdf") == 0))
        return false;
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        if (strncmp(name, bases[b], strlen(bases[b])) == 0) return true;
    return false;
}

/* Remove the figures in cx->dir that this plot did not write (another run's, an older plot's):
 * a folder holds the figures of one plot. Says how many on out. */
static void remove_stale(const plot_ctx *cx, FILE *out)
{
    DIR *d = opendir(cx->dir);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_figure_file(e->d_name)) continue;
        bool mine = false;
        for (int k = 0; k < cx->nfiles && !mine; k++) mine = strcmp(cx->files[k], e->d_name) == 0;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", cx->dir, e->d_name);
        if (!mine && unlink(path) == 0) removed++;
    }
    if (d) closedir(d);
    if (removed)
        fprintf(out, "removed %d figure%s of an earlier plot from %s\n", removed,
                removed == 1 ? "" : "s", cx->dir);
}

/* The folder of a run's figures when none is given: plots/<file name without .h5>-run<ID>. */
static void run_plot_dir(const char *path, int64_t run_id, char *dir, size_t len)
{
    char root[4096], stem[256];
    bench_default_plot_dir(root, sizeof root);
    const char *file = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", file ? file + 1 : path);
    char *ext = strrchr(stem, '.');
    if (ext && ext != stem) *ext = '\0';
    snprintf(dir, len, "%s/%s-run%lld", root, stem, (long long)run_id);
}

/* Every mode's figures of rd, in order of first appearance. */
static attn_status plot_modes(plot_ctx *cx, char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    subset ss = {0};
    ss.idx = malloc((size_t)rd->n * sizeof *ss.idx);
    ss.x = malloc((size_t)rd->n * sizeof *ss.x);
    attn_status st =
        ss.idx && ss.x ? ATTN_OK : attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    for (int64_t first = 0; !st && first < rd->n; first++) {
        bool seen = false;
        for (int64_t e = 0; e < first && !seen; e++)
            seen = strcmp(rd->pts[e].mode, rd->pts[first].mode) == 0;
        if (seen) continue;
        ss.mode = rd->pts[first].mode;
        ss.n = 0;
        for (int64_t p = 0; p < rd->n; p++)
            if (strcmp(rd->pts[p].mode, ss.mode) == 0) ss.idx[ss.n++] = p;
        st = plot_mode(cx, &ss, msg, msg_len);
    }
    free(ss.idx);
    free(ss.x);
    return st;
}

attn_status bench_plot_results(const char *path, int64_t run_id, const char *dir,
                               const char *format, FILE *out, char *msg, size_t msg_len)
{
    if (!bench_gnuplot_format_ok(format))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--format: '%s' is not png, svg or pdf",
                         format);
    bench_run_data rd;
    attn_status st = bench_run_load(path, run_id, &rd, msg, msg_len);
    if (st) return st;
    char own[4096];
    if (!dir) run_plot_dir(path, rd.run.run_id, own, sizeof own);
    plot_ctx cx = {.rd = &rd, .dir = dir ? dir : own, .format = format, .out = out};
    st = make_dirs(cx.dir, msg, msg_len);
    if (!st) st = bench_gnuplot_open(&cx.gp, msg, msg_len);
    if (!st) st = plot_modes(&cx, msg, msg_len);
    if (!st && cx.written == 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "run %lld of %s: nothing to draw (%d figures "
                       "skipped%s)",
                       (long long)rd.run.run_id, path, cx.skipped,
                       out ? ", see above" : ": sweep --n with 2 or more values");
    else if (!st) {
        remove_stale(&cx, out ? out : stdout);
        fprintf(out ? out : stdout, "plots: %d figure%s of run %lld in %s%s\n", cx.written,
                cx.written == 1 ? "" : "s", (long long)rd.run.run_id, cx.dir,
                rd.failed ? " (failed points left out)" : "");
    }
    free(cx.files);
    bench_gnuplot_close(&cx.gp);
    bench_run_data_free(&rd);
    return st;
}

/* plots/ under $ATTNBENCH_HOME (set by ./bench) or the current directory. */
void bench_default_plot_dir(char *dir, size_t len)
{
    const char *home = getenv("ATTNBENCH_HOME");
    snprintf(dir, len, "%s/plots", home && *home ? home : ".");
}

int bench_cmd_plot(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *out_s = NULL, *format = NULL;
    const char *formats[8] = {0};
    for (int i = 0; i < 7 && bench_gnuplot_format_at(i); i++)
        formats[i] = bench_gnuplot_format_at(i);
    const bench_opt opts[] = {
        {"--out", "DIR",
         "where the figures go (default: plots/<file>-run<ID>/ under the bench directory); "
         "figures of an earlier plot there are removed",
         &out_s},
        {"--run", "ID", "the run to draw (default: the last run in the file)", &run_s},
        {"--format", "FMT", "png (default, 800x500), svg or pdf", &format, .choices = formats},
        {"--help", NULL, "this help", &help},
    };
    const char *file = NULL;
    char msg[ATTN_MSG_LEN];
    int64_t run_id = 0;
    if (bench_parse_file_args(argc, argv, opts, sizeof opts / sizeof opts[0], "plot", &file, &run_s,
                              &run_id, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]",
            "Draws one figure per question about a run with gnuplot, for each mode measured:\n"
            "time vs n (log-log, fitted power laws with exponents and R², two laws or none\n"
            "where one does not fit), speed-up over full vs n, memory vs n (measured RSS and\n"
            "declared workspace), throughput vs n (against sgemm or memory bandwidth),\n"
            "accuracy vs n, accuracy vs each swept kind parameter, error vs time, and time vs\n"
            "heads and kv_heads. Error bars: the 95 % CI of the median time from the stored\n"
            "repetitions (min-max below 6), Wilson 95 % CIs on retrieval. Figures the run has\n"
            "no data for are skipped, with the reason. The figures go into a folder of the\n"
            "run's own (plots/<file>-run<ID>/) or --out DIR, where those of an earlier plot\n"
            "are removed. Prints the files written and the folder.",
            opts, sizeof opts / sizeof opts[0]);
        return 0;
    }
    if (!file)
        return bench_fail(ATTN_EINVAL, "bench plot needs a results file: bench plot FILE.h5");
    attn_status st =
        bench_plot_results(file, run_id, out_s, format ? format : "png", stdout, msg, sizeof msg);
    return st ? bench_fail(st, msg) : 0;
}
