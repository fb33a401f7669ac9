/*
 * figure.h — a figure of `bench plot` in memory and its drawing by gnuplot (internal to
 * cmd_plot.c and figure.c). A figure is one output file: a title, a subtitle, an optional note
 * and one or two panels side by side sharing one legend. A panel is one pair of axes (labels,
 * log or linear, an optional horizontal reference line) holding series. A series (pseries) is
 * one line of points x, y with its legend label, optional per-point tags and an optional power
 * law fit; its colour follows its kind (the same in every figure of a run), its marker its
 * place among its kind's series, and dashes with open markers mark causal when a figure holds
 * both causal and non-causal series.
 */
#ifndef BENCH_FIGURE_H
#define BENCH_FIGURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gnuplot.h"
#include "series.h"

enum { MAX_PANELS = 2, LABEL_LEN = 256 };

typedef struct pseries {
    char label[LABEL_LEN]; /* legend text (plain) */
    char suffix[64];       /* enhanced-text markup after it, e.g. "  (n^{2.01})" */
    char color_key[LABEL_LEN];
    int color;   /* its kind's place in the run: the same colour in every figure */
    int variant; /* its place among its kind's series of the figure (marker) */
    bool causal;
    int64_t n;
    double *x, *y;
    char (*tag)[48]; /* text beside each point, or NULL */
    int64_t first;   /* the first point of the series it was made from */
    bool fit;        /* draw y = c·x^k over [x0, x1] */
    double c, k, x0, x1;
} pseries;

typedef struct panel {
    char title[160], xlabel[160], ylabel[160];
    bool logx, logy, yzero, ntics, lines;
    double hline; /* a horizontal reference (NaN: none) */
    char hline_label[160];
    pseries *s;
    int ns;
} panel;

typedef struct figure {
    char base[80];  /* what it shows: time_vs_n */
    char name[256]; /* file name without extension: time_vs_n, time_vs_n_decode */
    char title[256], subtitle[512], note[256];
    panel p[MAX_PANELS];
    int np;
} figure;

typedef struct plot_ctx {
    const bench_run_data *rd;
    bench_gnuplot gp;
    const char *dir, *format;
    int written, skipped;
    FILE *out;
} plot_ctx;

/* What a series shows of each point (y axis). */
typedef double (*y_of)(const bench_point *pt);

/* Free the series of every panel of f and clear it. */
void bench_fig_free(figure *f);

/* Add a panel to f (at most MAX_PANELS) with these titles, linear axes, lines and no reference
 * line. */
panel *bench_fig_add_panel(figure *f, const char *title, const char *xlabel, const char *ylabel);

/* Add series s of rd (x per point index) to panel p with y = y(point); points with y not finite
 * (or not > 0 on a log axis) are left out. Returns the points added (0: no series added). */
int64_t bench_fig_add_series(panel *p, const bench_run_data *rd, const bench_series *s,
                             const double *x, y_of y, const char *label, const char *color_key,
                             bool causal);

/* Add every series of set to panel p (labels computed among the set with `by`). */
void bench_fig_add_set(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                       bench_group_by by, const double *x, y_of y);

/* Bytes on panel p's y axis in the unit that suits their largest value; the unit ends the
 * y label ("workspace" -> "workspace (MiB)"). */
void bench_fig_bytes_unit(panel *p, const char *what);

/* Does any series of the figure have 2 or more distinct x? */
bool bench_fig_has_curve(const figure *f);

/* Draw f to cx->dir/f->name.cx->format with gnuplot (colours assigned here), print "wrote ..."
 * to cx->out (if not NULL) and count it in cx->written. */
attn_status bench_fig_draw(plot_ctx *cx, figure *f, char *msg, size_t msg_len);

#endif
