/*
 * pattern.h — `bench pattern`'s figure in the report room: which scores a kind computes, query
 * rows i against key columns j, one cell per score, for one head of one shape (several kinds side
 * by side). The cells come from the registry (attn_kind_cells, attention.h): what a block-sparse
 * kind's engine lists, else the kind's mask predicate; a kind defined by its own reference
 * (low-rank, hashed, linear ...) has no computed set, and its panel says so in its title. Kinds
 * with random draws show the draws of their seed parameter. The figure: report/figures/
 * fig_pattern.c, drawn by gnuplot (gnuplot.h) as png, svg or pdf.
 *
 * Room report/: includes store/'s and measure/'s headers, never cli/.
 */
#ifndef BENCH_PATTERN_H
#define BENCH_PATTERN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "attention.h"
#include "datasets.h"
#include "series.h"

/* Cells a side drawn one per pixel at most (beyond, a pixel is a block of cells); kinds a
 * figure holds side by side at most. */
enum { PATTERN_PIXELS = 512, BENCH_PATTERN_PANELS = 8 };

/* A panel: a kind and its parameters (resolved for the shape by bench_pattern_cells). */
typedef struct bench_pattern_panel {
    const attn_ops *ops;
    attn_params params;
} bench_pattern_panel;

/* What a panel draws: the kind's cells of head h and their counts. */
typedef struct bench_pattern_cells {
    uint8_t *cells; /* T·S: times score (i, j) is computed (cells[i·S + j]); malloc'd */
    attn_cells_source source;
    int64_t computed; /* cells computed at least once */
    int64_t repeated; /* cells computed more than once (a pattern listing a score twice) */
} bench_pattern_cells;

/* The shape s of a pattern (the functions below) gives s->Hkv as the KV heads asked for (0: the
 * kind's default for s->H: attn_kind_kv_heads); each panel runs with its kind's. */

/* The shape panel pn runs with (its kind's KV heads for asked) and its parameters resolved for
 * it, checked: ATTN_EINVAL with the kind's message (bench pattern refuses a kind drawn alone or on
 * a dataset that way; beside other kinds, its panel says why: bench_pattern_draw). */
attn_status bench_pattern_shape(bench_pattern_panel *pn, const attn_shape *asked, attn_shape *s,
                                char *msg, size_t msg_len);

/* The panel's parameters as "name=value,..." text: all of them (all), or those not at their
 * default ("" when none). */
void bench_pattern_params_text(const bench_pattern_panel *pn, bool all, char *buf, size_t len);

/* The cells of panel pn (its parameters resolved for s in place, then checked: ATTN_EINVAL with
 * the kind's message) for query head h of s; ATTN_EFAIL when out of memory. Free with
 * bench_pattern_cells_free (also after a failure). */
attn_status bench_pattern_cells_of(bench_pattern_panel *pn, const attn_shape *s, int64_t h,
                                   bench_pattern_cells *out, char *msg, size_t msg_len);
void bench_pattern_cells_free(bench_pattern_cells *c);

/* The panels' cells as text on f: per panel a header line
 *   "# kind NAME params P source SOURCE T T S S head H computed N repeated R"
 * then T lines of S digits (the count of each cell, 9 for 9 or more). */
attn_status bench_pattern_write_data(FILE *f, bench_pattern_panel *panels, int npanels,
                                     const attn_shape *s, int64_t h, char *msg, size_t msg_len);

/* Draw the panels side by side into dest as format (png, svg, pdf); cells beyond 512 in a
 * direction are shown as blocks shaded by the share of their scores computed. ATTN_EINVAL: a
 * kind refuses the shape; ATTN_EFAIL: gnuplot missing or failing, out of memory. */
attn_status bench_pattern_draw(bench_pattern_panel *panels, int npanels, const attn_shape *s,
                               int64_t h, const char *dest, const char *format, char *msg,
                               size_t msg_len);

/* The patterns of every kind of run rd (bench report), up to BENCH_PATTERN_PANELS a figure, into
 * dir as format: each kind at the parameters of its first point ('auto' resolved for the shape),
 * one head at the run's smallest kv_len (at most PATTERN_PIXELS) and its causal value, queries =
 * keys. The file names (patterns.FORMAT, patterns_2.FORMAT ...) into names[0..*n), at most max.
 * Kinds this binary does not know are left out. ATTN_EFAIL: gnuplot missing or failing. */
attn_status bench_pattern_run(const bench_run_data *rd, const char *dir, const char *format,
                              char (*names)[256], int max, int *n, char *msg, size_t msg_len);

/* ---- bench pattern --dataset: weights on an input (fig_weights.c) ---- */

/* What the weights figure draws for query head h of a dataset's q, k (v is replaced by one-hot
 * probes: the coefficients are those of the kind's forward on q, k, for any v). */
typedef struct bench_pattern_weights_out {
    attn_shape s;   /* the shape the kind ran with */
    double *kind;   /* T·S: kind[i·S + j] the weight of value j in the kind's output row i (its
                       attention weights for a softmax kind; its mixing matrix for the others) */
    double *exact;  /* T·S: exact softmax attention's weights (attn_exact_reference) */
    double *recall; /* T: Σ_j min(max(kind, 0), exact): for a masked softmax kind, the share of
                       exact attention's mass on the keys it computes; else the overlap of the two
                       rows */
} bench_pattern_weights_out;

/* Fill w for panel pn (its parameters resolved, its weights drawn from its seed for the call)
 * on dataset ds (parameters dsp, seed) at shape asked; ATTN_EINVAL: the kind refuses the shape;
 * ATTN_EFAIL: out of memory, a forward failing. Free with bench_pattern_weights_free (also after
 * a failure). */
attn_status bench_pattern_weights(bench_pattern_panel *pn, const attn_shape *asked, int64_t h,
                                  const ds_ops *ds, const ds_params *dsp, uint64_t seed,
                                  bench_pattern_weights_out *w, char *msg, size_t msg_len);
void bench_pattern_weights_free(bench_pattern_weights_out *w);
/* Kinds drawn on one input at most. */
enum { BENCH_PATTERN_WEIGHTS = 4 };
/* Draw panels[0..npanels) (1 to BENCH_PATTERN_WEIGHTS kinds) on one input into dest as format:
 * exact attention's weights and each kind's (log colour scale, blank under 1e-6) above; the mass
 * recalled per query row (a line per kind) and each kind's |difference| from exact below. */
attn_status bench_pattern_weights_draw(bench_pattern_panel *panels, int npanels,
                                       const attn_shape *s, int64_t h, const ds_ops *ds,
                                       const ds_params *dsp, uint64_t seed, const char *dest,
                                       const char *format, char *msg, size_t msg_len);

#endif
