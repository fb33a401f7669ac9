/*
 * plot.h — `bench plot` in the report room: the figures of one run of a results file, drawn from
 * the registry of figures (report/figures/figures.c) into a folder, once per subset of its points
 * (each mode; with several datasets, the accuracy figures once per dataset; with causal 0 and 1
 * and many lines, once per causal value: plot.c).
 *
 * A figure of the registry is one file in report/figures/ (or one of a family in one file)
 * defining a const bench_figure {name, summary, group, over_n, quiet, draw}, listed once in the
 * table of figures.c, which fixes the order they are drawn in. `bench plot --help`, the removal of
 * an earlier plot's figures, `bench report` (through the files a plot drew) and the check of
 * docs/plots-and-fits.md (tests/test_plot.c) read that table. Adding a figure:
 * docs/plots-and-fits.md#adding-a-figure.
 *
 * Room report/: includes store/'s and measure/'s headers, never cli/.
 */
#ifndef BENCH_PLOT_H
#define BENCH_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn_core.h"

typedef struct plot_ctx plot_ctx;       /* the run, gnuplot, the folder (figure.h) */
typedef struct plot_subset plot_subset; /* the points a figure is drawn from (figures.h) */
typedef struct plot_sets plot_sets;     /* what plot.c computes once per subset (figures.h) */

/* Which figures a subset gets: with several datasets, the cost figures show the first dataset
 * only and the accuracy figures come once per dataset. */
enum { BENCH_FIG_COST = 1, BENCH_FIG_ACCURACY = 2 };

typedef struct bench_figure {
    /* its file name before the subset's suffixes (_<dataset>, _causal, _decode); a part in <>
     * is filled per figure: "accuracy_vs_<param>" is one figure per swept parameter */
    const char *name;
    const char *summary; /* what it plots, one line (bench plot --help) */
    unsigned group;      /* BENCH_FIG_COST or BENCH_FIG_ACCURACY */
    /* drawn from the subset's series over n: when none has 2 or more n, the figures with over_n
     * are skipped together with one line (those with quiet left out of it) */
    bool over_n;
    bool quiet; /* says nothing when the run has no data for it (train_vs_forward) */
    /* Draw it for subset ss (or say why not: bench_plot_skip), or several (one per parameter,
     * per kind); ATTN_EFAIL with msg when gnuplot fails or memory runs out. */
    attn_status (*draw)(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets, char *msg,
                        size_t msg_len);
} bench_figure;

/* The registered figures, in the order they are drawn: index 0 .. count - 1. */
int bench_figure_count(void);
const bench_figure *bench_figure_at(int i);

/* The figures a plot drew: their file names (with the extension) in dir, in the order drawn. */
typedef struct bench_plot_drawn {
    char (*files)[256];
    int n;
} bench_plot_drawn;
void bench_plot_drawn_free(bench_plot_drawn *d);

/* Draw the figures of run run_id (0: the last) of results file path into dir (created if
 * missing; NULL: plots/<file name without .h5>-run<ID>) as format (png, svg, pdf); lists the
 * files written and the figures skipped on out (NULL: only the closing "plots: N figures ...
 * in DIR" line, on stdout); the files drawn into *drawn when not NULL (free it with
 * bench_plot_drawn_free, also after a failure). Once every figure is drawn, the figures in dir
 * that it did not write (an earlier plot's) are removed, and the count said: a folder holds one
 * plot's figures. ATTN_EINVAL: bad file, run, format or directory; ATTN_ENODEF: the run has
 * nothing to draw (msg says why; `bench plot` exits 2 on it, a sweep does not); ATTN_EFAIL:
 * gnuplot missing or failing (no broken image is left). */
attn_status bench_plot_results(const char *path, int64_t run_id, const char *dir,
                               const char *format, FILE *out, bench_plot_drawn *drawn, char *msg,
                               size_t msg_len);

/* plots/ under $ATTNBENCH_HOME (set by ./bench), else ./plots. */
void bench_default_plot_dir(char *dir, size_t len);

#endif
