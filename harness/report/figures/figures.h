/*
 * figures.h — within report/ only: what the figures of the registry (report/figures/, plot.h)
 * and the plot driver (plot.c) share. A subset is the points one pass over the registry draws
 * from (one mode; one dataset and causal value when plot.c splits them) with the suffix and
 * title its figures get; plot_sets is what plot.c computes once per subset for every figure.
 * The helpers name, title, skip and finish a figure the same way for every entry, and give the
 * time axis, its error bars and their legend row, which several figures share.
 */
#ifndef BENCH_FIGURES_H
#define BENCH_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

#include "figure.h"
#include "plot.h"
#include "series.h"

struct plot_subset {
    const char *mode; /* "prefill", "decode", ... */
    int64_t *idx;     /* points of that mode (and dataset, causal: see plot.c) */
    int64_t n;
    double *x;       /* scratch: one x per point of the run */
    char suffix[96]; /* after the figure's name: "", "_needle", "_causal" */
    char title[64];  /* after its title: "", " on needle", " (causal)" */
    char note[256];  /* a line under the subtitle, or "" */
};

enum { PLOT_MAX_PARAMS = 16 };

struct plot_sets {
    /* the subset's points grouped into series over n (bench_plot_over_n; x = kv_len in ss->x
     * when an over_n figure is drawn) */
    const bench_series *over_n;
    int64_t nover_n;
    char params[PLOT_MAX_PARAMS][64]; /* the kind parameters the subset swept */
    int nparams;
};

/* Series over n: every setting but n. */
extern const bench_group_by bench_plot_over_n;

/* Say "skipped NAME.FORMAT: why" (NAME: name, the subset's suffix, then the mode unless
 * prefill) and count it. */
void bench_plot_skip(plot_ctx *cx, const plot_subset *ss, const char *name, const char *why);
/* Name, title and subtitle of a figure for subset ss (the settings all its points idx[0..n)
 * share, except those in `varying`). */
void bench_plot_begin(figure *f, const plot_ctx *cx, const plot_subset *ss, const char *name,
                      const char *title, const int64_t *idx, int64_t n, unsigned varying);
/* Draw f if a series of it has 2 or more x, else say why it is skipped; frees f. */
attn_status bench_plot_finish(plot_ctx *cx, const plot_subset *ss, figure *f, const char *why,
                              char *msg, size_t msg_len);
/* The n axis label of the subset's mode. */
const char *bench_plot_n_axis(const plot_subset *ss);
/* Group ss's points over n (x = kv_len into ss->x). ATTN_EFAIL: out of memory. */
attn_status bench_plot_series_over_n(const plot_ctx *cx, const plot_subset *ss, bench_series **set,
                                     int64_t *nset);
/* The points of subset ss measured at n (into idx: *m of them), grouped into series by `by`
 * (x from ss->x); ATTN_EFAIL with the message when memory runs out. */
attn_status bench_plot_group_at_n(const bench_run_data *rd, const plot_subset *ss, int64_t n,
                                  bench_group_by by, int64_t *idx, int64_t *m, bench_series **set,
                                  int64_t *nset, char *msg, size_t msg_len);
/* [a-z0-9_] only, for file names made from parameter and dataset names. */
void bench_plot_file_safe(const char *in, char *out, size_t len);

/* The median time in ms, and its error bar: the 95 % CI of the median (bench_point_time_ci). */
double bench_plot_y_time_ms(const bench_point *pt);
bool bench_plot_bar_time_ms(const bench_run_data *rd, int64_t p, double *lo, double *hi);
/* The legend row of time bars over points idx[0..n): a 95 % CI of the median when every point
 * has 6 or more repetitions, else what the smallest count gives (min-max of 5: 93.8 %). `of`
 * names the quantity ("the median time", "the median GFLOP/s"). */
void bench_plot_time_bars(const bench_run_data *rd, const int64_t *idx, int64_t n, const char *of,
                          char *buf, size_t len);

/* Is name (a file name with its extension) a figure of the registry in png, svg or pdf: does it
 * start with a registered figure's name up to its first '<'? (figures.c) */
bool bench_figure_file(const char *name);

#endif
