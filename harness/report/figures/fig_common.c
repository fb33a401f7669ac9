/*
 * fig_common.c — what the figures of the registry share (figures.h): a figure's file name, title
 * and subtitle (the settings its points share, the run, threads and kernel set), skipping it
 * with the reason, drawing it when it has a curve; the series over n, the points at one n; the
 * time axis (median ms, its 95 % CI, their legend row).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "figures.h"

const bench_group_by bench_plot_over_n = {BENCH_K_ALL & ~BENCH_K_N, NULL};

double bench_plot_y_time_ms(const bench_point *pt) { return pt->time_median_s * 1e3; }

/* Error bars: the 95 % CI of the median time (bench_point_time_ci), carried over to what is
 * computed from it (fig_throughput.c). */
bool bench_plot_bar_time_ms(const bench_run_data *rd, int64_t p, double *lo, double *hi)
{
    int64_t reps;
    if (!bench_point_time_ci(rd, p, lo, hi, &reps)) return false;
    *lo *= 1e3, *hi *= 1e3;
    return true;
}

/* The legend row of time bars over points idx[0..n): a 95 % CI of the median when every point
 * has 6 or more repetitions, else what the smallest count gives (min-max of 5: 93.8 %). `of`
 * names the quantity ("the median time", "the median GFLOP/s"). */
void bench_plot_time_bars(const bench_run_data *rd, const int64_t *idx, int64_t n, const char *of,
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

/* A figure's file name (no extension): name, the subset's suffix, then the mode unless prefill. */
static void figure_name(const plot_subset *ss, const char *name, char *buf, size_t len)
{
    const bool other = strcmp(ss->mode, "prefill") != 0;
    snprintf(buf, len, "%s%s%s%s", name, ss->suffix, other ? "_" : "", other ? ss->mode : "");
}

void bench_plot_skip(plot_ctx *cx, const plot_subset *ss, const char *name, const char *why)
{
    char file[256];
    figure_name(ss, name, file, sizeof file);
    if (cx->out) fprintf(cx->out, "skipped %s.%s: %s\n", file, cx->format, why);
    cx->skipped++;
}

/* Name, title and subtitle of a figure for subset ss (the settings all its points share,
 * except those in `varying`). */
void bench_plot_begin(figure *f, const plot_ctx *cx, const plot_subset *ss, const char *name,
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
attn_status bench_plot_finish(plot_ctx *cx, const plot_subset *ss, figure *f, const char *why,
                              char *msg, size_t msg_len)
{
    attn_status st = ATTN_OK;
    if (bench_fig_has_curve(f)) st = bench_fig_draw(cx, f, msg, msg_len);
    else bench_plot_skip(cx, ss, f->base, why);
    bench_fig_free(f);
    return st;
}

const char *bench_plot_n_axis(const plot_subset *ss)
{
    return strcmp(ss->mode, "decode") == 0 ? "KV-cache length n (keys)"
                                           : "sequence length n (queries = keys = n)";
}

/* Group ss's points over n. */
attn_status bench_plot_series_over_n(const plot_ctx *cx, const plot_subset *ss, bench_series **set,
                                     int64_t *nset)
{
    for (int64_t i = 0; i < ss->n; i++) ss->x[ss->idx[i]] = (double)cx->rd->pts[ss->idx[i]].kv_len;
    return bench_series_group(cx->rd, ss->idx, ss->n, bench_plot_over_n, ss->x, set, nset);
}

/* The points of subset ss measured at n (into idx: *m of them), grouped into series by `by`
 * (x from ss->x); ATTN_EFAIL with the message when memory runs out. */
attn_status bench_plot_group_at_n(const bench_run_data *rd, const plot_subset *ss, int64_t n,
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

/* [a-z0-9_] only, for file names made from parameter names. */
void bench_plot_file_safe(const char *in, char *out, size_t len)
{
    size_t w = 0;
    for (; *in && w + 1 < len; in++)
        out[w++] = (*in >= 'a' && *in <= 'z') || (*in >= '0' && *in <= '9') ? *in : '_';
    out[w] = '\0';
}
