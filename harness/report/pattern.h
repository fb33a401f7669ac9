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

#include <stdint.h>
#include <stdio.h>

#include "attention.h"

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

/* Refuse (ATTN_EINVAL, the kind's message) a shape or parameters the kind of a single panel
 * refuses (beside other kinds, its panel says why instead: bench_pattern_draw). */
attn_status bench_pattern_check(bench_pattern_panel *panels, int npanels, const attn_shape *s,
                                char *msg, size_t msg_len);

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

#endif
