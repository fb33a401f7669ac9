/*
 * figure.h — a figure of `bench plot` in memory and its drawing by gnuplot (within report/:
 * the figures of report/figures/ fill it, figure.c draws it). A figure is one output file: a title,
 * a subtitle, an optional note and one or two panels side by side sharing one legend. A panel is
 * one pair of axes (labels, log or linear, an optional horizontal reference line) holding series. A
 * series (pseries) is one line of points x, y with its legend label, optional error bars, optional
 * per-point tags and up to two fitted power laws. Its kind sets its colour, marker shape and dash
 * pattern, the same in every figure (bench_fig_kind_style: told apart in grey print too); a further
 * series of the same kind in a figure takes the next shape and dash; markers are open, and filled
 * for the causal series when a figure holds both causal and non-causal ones. The output format
 * (png, svg, pdf: gnuplot's terminal) is chosen in one place, plot_ctx.format, and set by
 * bench_gnuplot_render; a figure's content does not depend on it.
 */
#ifndef BENCH_FIGURE_H
#define BENCH_FIGURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gnuplot.h"
#include "series.h"

enum { MAX_PANELS = 2, LABEL_LEN = 256, MAX_REFS = 10 };

/* How a kind looks in every figure (deterministic by its name): a colour, a marker shape and a
 * dash pattern; (shape, dash) differs between any two registered kinds, and kinds that often
 * overlap (full, mqa, gqa; window, global, dilated) differ in both. */
typedef struct bench_kind_style {
    int color; /* index into the palette */
    int shape; /* 0..BENCH_SHAPES-1: square, circle, triangle, inverted triangle, diamond, pentagon
                */
    int dash;  /* 0..BENCH_DASHES-1: solid, dashed, dotted, dash-dot, dash-dot-dot, long dashes */
} bench_kind_style;
enum { BENCH_SHAPES = 6, BENCH_DASHES = 6 };
bench_kind_style bench_fig_kind_style(const char *kind);

/* A fitted power law y = c·x^k drawn over [x0, x1]. */
typedef struct fit_line {
    double c, k, x0, x1;
} fit_line;

typedef struct pseries {
    char label[LABEL_LEN]; /* legend text (plain) */
    char suffix[96];       /* enhanced-text markup after it, e.g. "  (n^{2.01}, R^2 0.999)" */
    char color_key[LABEL_LEN];
    char kind[32];
    bench_kind_style style; /* its kind's, shifted for a further series of the kind (variant) */
    int variant;            /* its place among its kind's series of the figure */
    bool causal;
    int64_t n;
    double *x, *y;
    double *lo, *hi; /* an error bar per point (NULL: none): on y, or on x when xbars */
    bool xbars;
    char (*tag)[48]; /* text beside each point, or NULL */
    int64_t first;   /* the first point of the series it was made from */
    int nfit;        /* power laws drawn through it: 0, 1, or 2 (below and above a split) */
    fit_line fit[2];
} pseries;

typedef struct panel {
    char title[160], xlabel[160], ylabel[160];
    bool logx, logy, yzero, ntics, lines;
    double hline; /* a horizontal reference (NaN: none) */
    char hline_label[160];
    /* further horizontal references (the FMA peak of each kernel set and thread count drawn),
     * each in its own colour and dashes: bench_fig_add_ref */
    double refs[MAX_REFS];
    char ref_labels[MAX_REFS][96];
    int nrefs;
    char bars[160]; /* what the error bars are, a legend row ("" when none are drawn) */
    pseries *s;
    int ns;
} panel;

typedef struct figure {
    char base[80];  /* what it shows: time_vs_n */
    char name[256]; /* file name without extension: time_vs_n, time_vs_n_decode */
    char title[256], subtitle[512], note[512];
    char fits[160]; /* the legend row for the fitted lines ("" when none) */
    panel p[MAX_PANELS];
    int np;
} figure;

typedef struct plot_ctx {
    const bench_run_data *rd;
    bench_gnuplot gp;
    const char *dir, *format; /* format: the one place the gnuplot terminal comes from */
    int written, skipped;
    char (*files)[256]; /* the file names written (for removing stale figures), nfiles of them */
    int nfiles;
    FILE *out;
} plot_ctx;

/* What a series shows of each point (y axis). */
typedef double (*y_of)(const bench_point *pt);

/* Free the series of every panel of f and clear it. */
void bench_fig_free(figure *f);

/* Add a panel to f (at most MAX_PANELS) with these titles, linear axes, lines and no reference
 * line. */
panel *bench_fig_add_panel(figure *f, const char *title, const char *xlabel, const char *ylabel);

/* The error bar of a point: its interval [*lo, *hi] (in the units of y); false: none. */
typedef bool (*bar_of)(const bench_run_data *rd, int64_t point, double *lo, double *hi);

/* Add series s of rd (x per point index) to panel p with y = y(point) and, when bar is given,
 * its error bar; points with y not finite (or not > 0 on a log axis) are left out. Returns the
 * points added (0: no series added). */
int64_t bench_fig_add_series(panel *p, const bench_run_data *rd, const bench_series *s,
                             const double *x, y_of y, bar_of bar, const char *label,
                             const char *color_key, bool causal);

/* Add every series of set to panel p (labels computed among the set with `by`). */
void bench_fig_add_set(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                       bench_group_by by, const double *x, y_of y, bar_of bar);

/* Add a series of n points made by the caller (x, y and, if lo is not NULL, y bars; copied) for
 * the points of rd from `first` on (its kind and style). Returns it, or NULL (nothing added). */
pseries *bench_fig_add_xy(panel *p, const bench_run_data *rd, int64_t first, int64_t n,
                          const double *x, const double *y, const double *lo, const double *hi,
                          const char *label, const char *color_key, bool causal);

/* Add a horizontal reference line at y with a legend row (at most MAX_REFS; false: no room). */
bool bench_fig_add_ref(panel *p, double y, const char *label);

/* Bytes on panel p's y axis in the unit that suits their largest value; the unit ends the
 * y label ("workspace" -> "workspace (MiB)"). */
void bench_fig_bytes_unit(panel *p, const char *what);

/* Does any series of the figure have 2 or more distinct x? */
bool bench_fig_has_curve(const figure *f);

/* Draw f to cx->dir/f->name.cx->format with gnuplot (styles assigned here), print "wrote ..."
 * to cx->out (if not NULL), count it in cx->written and add its name to cx->files. */
attn_status bench_fig_draw(plot_ctx *cx, figure *f, char *msg, size_t msg_len);

#endif
