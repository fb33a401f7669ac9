/*
 * fig_pattern.c — the pattern figure (pattern.h): one panel per kind, query rows i down, key
 * columns j across, a dark cell per score the kind computes for one head; the panel's title gives
 * the count of computed scores and their share of T×S, and where the cells come from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "pattern.h"

/* Layout (pixels): a panel's width, the room of its three title lines and axis labels, the
 * figure's title; panels a row at most. */
enum { PANEL_PX = 400, PANEL_TITLE_PX = 110, TITLE_PX = 80, PANELS_A_ROW = 4 };

attn_status bench_pattern_shape(bench_pattern_panel *pn, const attn_shape *asked, attn_shape *s,
                                char *msg, size_t msg_len)
{
    *s = *asked;
    s->Hkv = attn_kind_kv_heads(pn->ops, asked->H, asked->Hkv);
    attn_params_resolve(pn->ops, s, &pn->params);
    char why[ATTN_MSG_LEN];
    if (attn_check(pn->ops, s, &pn->params, why, sizeof why) != ATTN_OK)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s", why);
    return ATTN_OK;
}

attn_status bench_pattern_cells_of(bench_pattern_panel *pn, const attn_shape *asked, int64_t h,
                                   bench_pattern_cells *out, char *msg, size_t msg_len)
{
    *out = (bench_pattern_cells){0};
    attn_shape shape;
    if (bench_pattern_shape(pn, asked, &shape, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    const attn_shape *s = &shape;
    out->cells = malloc((size_t)(s->T * s->S));
    if (!out->cells)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %lld x %lld cells",
                         (long long)s->T, (long long)s->S);
    out->source = attn_kind_cells_source(pn->ops);
    attn_status st = attn_kind_cells(pn->ops, s, &pn->params, h, out->cells, msg, msg_len);
    for (int64_t e = 0; st == ATTN_OK && e < s->T * s->S; e++) {
        out->computed += out->cells[e] > 0;
        out->repeated += out->cells[e] > 1;
    }
    return st;
}

void bench_pattern_cells_free(bench_pattern_cells *c)
{
    free(c->cells);
    c->cells = NULL;
}

void bench_pattern_params_text(const bench_pattern_panel *pn, bool all, char *buf, size_t len)
{
    const attn_param_table *t = attn_kind_params(pn->ops);
    attn_param_def defs[ATTN_MAX_PARAMS];
    attn_params p = {0};
    attn_param_table changed = {.owner = t->owner, .defs = defs, .role = t->role};
    for (int i = 0; i < t->count && i < ATTN_MAX_PARAMS; i++)
        if (all || pn->params.v[i] != t->defs[i].def) {
            defs[changed.count] = t->defs[i];
            p.v[changed.count++] = pn->params.v[i];
        }
    buf[0] = '\0';
    if (changed.count) attn_params_format(&changed, &p, buf, len);
}

/* Lines joined by "\n" as a gnuplot string expression (each quoted for enhanced text). */
static void quote_lines(const char *text, char *buf, size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    for (const char *line = text; w < len;) {
        const size_t n = strcspn(line, "\n");
        char part[512], q[1100];
        snprintf(part, sizeof part, "%.*s", (int)n, line);
        bench_gnuplot_quote(part, true, q, sizeof q);
        w += (size_t)snprintf(buf + w, len - w, "%s%s", line == text ? "" : ".\"\\n\".", q);
        if (!line[n]) break;
        line += n + 1;
    }
}

attn_status bench_pattern_write_data(FILE *f, bench_pattern_panel *panels, int npanels,
                                     const attn_shape *s, int64_t h, char *msg, size_t msg_len)
{
    for (int k = 0; k < npanels; k++) {
        bench_pattern_cells c;
        attn_status st = bench_pattern_cells_of(&panels[k], s, h, &c, msg, msg_len);
        if (st != ATTN_OK) {
            bench_pattern_cells_free(&c);
            return st;
        }
        char params[512];
        bench_pattern_params_text(&panels[k], true, params, sizeof params);
        fprintf(
            f,
            "# kind %s params %s source %s T %lld S %lld head %lld computed %lld repeated %lld\n",
            panels[k].ops->name, params[0] ? params : "-",
            c.source == ATTN_CELLS_LISTED ? "engine"
            : c.source == ATTN_CELLS_MASK ? "mask"
                                          : "none",
            (long long)s->T, (long long)s->S, (long long)h, (long long)c.computed,
            (long long)c.repeated);
        for (int64_t i = 0; i < s->T; i++) {
            for (int64_t j = 0; j < s->S; j++) {
                const int n = c.cells[i * s->S + j];
                fputc('0' + (n > 9 ? 9 : n), f);
            }
            fputc('\n', f);
        }
        bench_pattern_cells_free(&c);
    }
    return ferror(f) ? attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write the pattern data")
                     : ATTN_OK;
}

/* Cells per pixel side: 1 up to PATTERN_PIXELS cells, else the fewest that fit. */
static int64_t block_of(const attn_shape *s)
{
    const int64_t n = s->T > s->S ? s->T : s->S;
    return (n + PATTERN_PIXELS - 1) / PATTERN_PIXELS;
}

/* The panel's image as a gnuplot matrix: one value per block of b×b cells, the share of its
 * cells computed (1 = every score of the block). */
static attn_status write_matrix(bench_gnuplot *g, const bench_pattern_cells *c, const attn_shape *s,
                                int64_t b, char *quoted, size_t len)
{
    FILE *f = bench_gnuplot_data(g, quoted, len);
    if (!f) return ATTN_EFAIL;
    for (int64_t bi = 0; bi * b < s->T; bi++) {
        for (int64_t bj = 0; bj * b < s->S; bj++) {
            int64_t on = 0, all = 0;
            for (int64_t i = bi * b; i < (bi + 1) * b && i < s->T; i++)
                for (int64_t j = bj * b; j < (bj + 1) * b && j < s->S; j++)
                    on += c->cells[i * s->S + j] > 0, all++;
            fprintf(f, "%s%.4g", bj ? " " : "", (double)on / (double)all);
        }
        fputc('\n', f);
    }
    return fclose(f) == 0 ? ATTN_OK : ATTN_EFAIL;
}

/* The panel's title: the kind and its parameters, the count and share, the source. */
static void panel_title(const bench_pattern_panel *pn, const bench_pattern_cells *c,
                        const attn_shape *s, char *buf, size_t len)
{
    char params[256], text[768];
    bench_pattern_params_text(pn, false, params, sizeof params);
    const double share = 100.0 * (double)c->computed / ((double)s->T * (double)s->S);
    if (c->source == ATTN_CELLS_NONE)
        snprintf(text, sizeof text, "%s%s%s\n%s", pn->ops->name, params[0] ? "  " : "", params,
                 attn_cells_source_name(c->source));
    else
        snprintf(text, sizeof text, "%s%s%s\n%lld scores (%.3g %% of T×S)%s\n%s", pn->ops->name,
                 params[0] ? "  " : "", params, (long long)c->computed, share,
                 c->repeated ? ", some computed twice" : "", attn_cells_source_name(c->source));
    quote_lines(text, buf, len);
}

attn_status bench_pattern_draw(bench_pattern_panel *panels, int npanels, const attn_shape *s,
                               int64_t h, const char *dest, const char *format, char *msg,
                               size_t msg_len)
{
    bench_gnuplot g;
    attn_status st = bench_gnuplot_open(&g, msg, msg_len);
    if (st != ATTN_OK) return st;
    char *script = NULL;
    size_t script_len = 0;
    FILE *t = open_memstream(&script, &script_len);
    if (!t) {
        bench_gnuplot_close(&g);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for a gnuplot script");
    }
    const int64_t b = block_of(s);
    char title[512], quoted[1400];
    int w = snprintf(title, sizeof title,
                     "Scores computed\nT=%lld queries × S=%lld keys%s, head %lld of %lld",
                     (long long)s->T, (long long)s->S, s->causal ? ", causal" : "", (long long)h,
                     (long long)s->H);
    if (b > 1)
        snprintf(title + w, sizeof title - (size_t)w,
                 "\neach pixel %lld×%lld scores, shaded by the share computed", (long long)b,
                 (long long)b);
    quote_lines(title, quoted, sizeof quoted);
    const int cols = npanels < PANELS_A_ROW ? npanels : PANELS_A_ROW;
    const int rows = (npanels + cols - 1) / cols;
    fprintf(t,
            "set multiplot layout %d,%d title %s font ',11'\n"
            "set palette defined (0 '#ffffff', 1 '#1f3f8f')\nset cbrange [0:1]\nunset colorbox\n"
            "set size ratio %.6g\nset xrange [-0.5:%.6g]\nset yrange [%.6g:-0.5]\n"
            "set xlabel 'key j' font ',9'\nset ylabel 'query i' font ',9'\nset tics font ',8' out\n"
            "set xtics %s\nset ytics %s\n",
            rows, cols, quoted, (double)s->T / (double)s->S, (double)s->S - 0.5, (double)s->T - 0.5,
            s->S > 8 ? "auto" : "1", s->T > 8 ? "auto" : "1");
    for (int k = 0; k < npanels && st == ATTN_OK; k++) {
        bench_pattern_cells c;
        st = bench_pattern_cells_of(&panels[k], s, h, &c, msg, msg_len);
        char data[4300], ptitle[2400];
        if (st == ATTN_EINVAL) { /* a kind refusing the shape: say so in its panel */
            char text[ATTN_MSG_LEN + 64];
            snprintf(text, sizeof text, "%s\nnot drawn:\n%s", panels[k].ops->name, msg);
            quote_lines(text, ptitle, sizeof ptitle);
            bench_pattern_cells_free(&c);
            c.cells = calloc((size_t)(s->T * s->S), 1);
            st = c.cells ? ATTN_OK
                         : attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for the cells");
        } else if (st == ATTN_OK) {
            panel_title(&panels[k], &c, s, ptitle, sizeof ptitle);
        }
        if (st == ATTN_OK && write_matrix(&g, &c, s, b, data, sizeof data) != ATTN_OK)
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write gnuplot data in %s", g.dir);
        if (st == ATTN_OK)
            fprintf(t,
                    "set title %s font ',9'\n"
                    "plot %s matrix using ($1*%lld+%.6g):($2*%lld+%.6g):3 with image notitle\n",
                    ptitle, data, (long long)b, (double)(b - 1) / 2, (long long)b,
                    (double)(b - 1) / 2);
        bench_pattern_cells_free(&c);
    }
    fprintf(t, "unset multiplot\n");
    if (fclose(t) != 0 && st == ATTN_OK)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for a gnuplot script");
    const double aspect = (double)s->T / (double)s->S;
    const int height =
        TITLE_PX + rows * (PANEL_TITLE_PX + (int)(PANEL_PX * (aspect < 1.5 ? aspect : 1.5) + 0.5));
    if (st == ATTN_OK)
        st = bench_gnuplot_render(&g, script, format, PANEL_PX * cols + (cols > 1 ? 40 : 80),
                                  height, dest, msg, msg_len);
    free(script);
    bench_gnuplot_close(&g);
    return st;
}

attn_status bench_pattern_run(const bench_run_data *rd, const char *dir, const char *format,
                              char (*names)[256], int max, int *n, char *msg, size_t msg_len)
{
    *n = 0;
    bench_pattern_panel panels[BENCH_PATTERN_PANELS];
    int np = 0;
    int64_t S = 0;
    bool causal = false;
    for (int64_t p = 0; p < rd->n; p++)
        if (!S || rd->pts[p].kv_len < S) S = rd->pts[p].kv_len, causal = rd->pts[p].causal != 0;
    if (S > PATTERN_PIXELS) S = PATTERN_PIXELS;
    const attn_shape s = attn_shape_init(1, 1, 0, S, S, 64, causal);
    attn_status st = ATTN_OK;
    for (int64_t p = 0; p <= rd->n && st == ATTN_OK; p++) {
        const attn_ops *ops = p < rd->n ? attn_kind_find(rd->pts[p].kind) : NULL;
        bool seen = false; /* drawn from an earlier point */
        for (int64_t e = 0; ops && e < p && !seen; e++)
            seen = strcmp(rd->pts[e].kind, ops->name) == 0;
        if (ops && !seen && bench_recorded_params(ops, rd->params[p], &panels[np].params))
            panels[np++].ops = ops;
        if (np == BENCH_PATTERN_PANELS || (p == rd->n && np > 0)) {
            if (*n == max) break;
            if (*n) snprintf(names[*n], 256, "patterns_%d.%s", *n + 1, format);
            else snprintf(names[*n], 256, "patterns.%s", format);
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, names[*n]);
            st = bench_pattern_draw(panels, np, &s, 0, path, format, msg, msg_len);
            if (st == ATTN_OK) ++*n;
            np = 0;
        }
    }
    return st;
}
