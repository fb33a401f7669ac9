/*
 * fig_weights.c — the weights figure of bench pattern --dataset (pattern.h): for one head on a
 * dataset's q and k, the kind's mixing matrix beside exact attention's weights and their
 * difference (log colour scale), and the row-wise mass the kind recalls.
 *
 * Both matrices come from one-hot probes of v: with v[j] = e_(j mod D) for the keys j of a chunk
 * of D keys (zero elsewhere), out[i] holds row i's coefficients of those keys; ceil(S/D) calls
 * give all of them. Through the kind's forward this is its attention weights for a softmax kind
 * and, for any kind whose output is linear in v (all of the registry's), the matrix that mixes
 * the values; through attn_exact_reference, exact softmax attention's weights.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "pattern.h"

/* The coefficients A[i·S + j] that mix value j into output row i of head h: probes of v through
 * the kind's forward (exact: attn_exact_reference instead). q, k as the dataset gave them. */
static attn_status mixing(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                          const float *q, const float *k, int64_t h, bool exact, double *A,
                          char *msg, size_t msg_len)
{
    const int64_t T = s->T, S = s->S, D = s->D;
    const attn_exec x = attn_exec_init(1);
    const size_t ws_bytes = exact ? 0 : ops->workspace_bytes(ops, &x, s, p);
    float *v = calloc((size_t)attn_kv_elems(s), sizeof *v);
    float *out = malloc((size_t)attn_q_elems(s) * sizeof *out);
    double *ref = malloc((size_t)(T * D) * sizeof *ref);
    int64_t *rows = malloc((size_t)T * sizeof *rows);
    void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
    attn_status st =
        v && out && ref && rows && (ws || !ws_bytes)
            ? ATTN_OK
            : attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory probing %s", ops->name);
    for (int64_t i = 0; i < T && st == ATTN_OK; i++) rows[i] = h * T + i;
    for (int64_t j0 = 0; j0 < S && st == ATTN_OK; j0 += D) {
        const int64_t j1 = j0 + D < S ? j0 + D : S;
        memset(v, 0, (size_t)attn_kv_elems(s) * sizeof *v);
        for (int64_t g = 0; g < s->Hkv; g++)
            for (int64_t j = j0; j < j1; j++) v[(g * S + j) * D + (j - j0)] = 1.0f;
        if (exact) {
            st = attn_exact_reference(ops, s, p, q, k, v, rows, T, ref);
            for (int64_t i = 0; i < T && st == ATTN_OK; i++)
                for (int64_t j = j0; j < j1; j++) A[i * S + j] = ref[i * D + (j - j0)];
        } else {
            st = ops->forward(ops, &x, s, p, q, k, v, out, ws);
            for (int64_t i = 0; i < T && st == ATTN_OK; i++)
                for (int64_t j = j0; j < j1; j++) A[i * S + j] = out[(h * T + i) * D + (j - j0)];
        }
        if (st != ATTN_OK) st = attn_fail(st, msg, msg_len, "%s failed on a probe", ops->name);
    }
    free(v), free(out), free(ref), free(rows), free(ws);
    return st;
}

attn_status bench_pattern_weights(bench_pattern_panel *pn, const attn_shape *asked, int64_t h,
                                  const ds_ops *ds, const ds_params *dsp, uint64_t seed,
                                  bench_pattern_weights_out *w, char *msg, size_t msg_len)
{
    *w = (bench_pattern_weights_out){0};
    attn_status st = bench_pattern_shape(pn, asked, &w->s, msg, msg_len);
    if (st != ATTN_OK) return st;
    const attn_shape *s = &w->s;
    float *q = malloc((size_t)attn_q_elems(s) * sizeof *q);
    float *k = malloc((size_t)attn_kv_elems(s) * sizeof *k);
    float *v = malloc((size_t)attn_kv_elems(s) * sizeof *v);
    w->kind = malloc((size_t)(s->T * s->S) * sizeof *w->kind);
    w->exact = malloc((size_t)(s->T * s->S) * sizeof *w->exact);
    w->recall = malloc((size_t)s->T * sizeof *w->recall);
    float *owned[ATTN_MAX_WEIGHTS] = {0};
    if (!q || !k || !v || !w->kind || !w->exact || !w->recall)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for the weights of %s",
                       pn->ops->name);
    if (st == ATTN_OK) st = ds->fill(s, dsp, seed, 1, q, k, v, msg, msg_len);
    if (st == ATTN_OK) st = attn_weights_draw(pn->ops, s, &pn->params, owned, msg, msg_len);
    if (st == ATTN_OK) st = mixing(pn->ops, s, &pn->params, q, k, h, false, w->kind, msg, msg_len);
    if (st == ATTN_OK) st = mixing(pn->ops, s, &pn->params, q, k, h, true, w->exact, msg, msg_len);
    for (int64_t i = 0; st == ATTN_OK && i < s->T; i++) {
        double r = 0;
        for (int64_t j = 0; j < s->S; j++) {
            const double a = w->kind[i * s->S + j], e = w->exact[i * s->S + j];
            r += fmin(a > 0 ? a : 0, e);
        }
        w->recall[i] = r;
    }
    attn_weights_free(owned);
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++) pn->params.w[i] = NULL;
    free(q), free(k), free(v);
    return st;
}

void bench_pattern_weights_free(bench_pattern_weights_out *w)
{
    free(w->kind), free(w->exact), free(w->recall);
    *w = (bench_pattern_weights_out){0};
}

/* A T×S matrix for a log colour scale: |a| (or |a - b|), values under the scale's 1e-6 as NaN
 * (blank: float32 rounding of the difference stays out of sight). */
static attn_status write_log_matrix(bench_gnuplot *g, const double *a, const double *b,
                                    const attn_shape *s, char *quoted, size_t len)
{
    FILE *f = bench_gnuplot_data(g, quoted, len);
    if (!f) return ATTN_EFAIL;
    for (int64_t i = 0; i < s->T; i++) {
        for (int64_t j = 0; j < s->S; j++) {
            const double x = fabs(a[i * s->S + j] - (b ? b[i * s->S + j] : 0));
            fprintf(f, j ? " %.4g" : "%.4g", x >= 1e-6 ? x : NAN);
        }
        fputc('\n', f);
    }
    return fclose(f) == 0 ? ATTN_OK : ATTN_EFAIL;
}

/* The log colour scale and axes of the matrix panels. */
static void matrix_axes(FILE *t, const attn_shape *s)
{
    fprintf(t,
            "set logscale cb\nset cbrange [1e-6:1]\nset format cb '10^{%%L}'\n"
            "set xrange [-0.5:%.6g]\nset yrange [%.6g:-0.5]\nset size ratio %.6g\n"
            "set xlabel 'key j' font ',9'\nset ylabel 'query i' font ',9'\nunset grid\n",
            (double)s->S - 0.5, (double)s->T - 0.5, (double)s->T / (double)s->S);
}

/* The recall curves' colours, one per kind of the figure. */
static const char *const colors[BENCH_PATTERN_WEIGHTS] = {"#1f3f8f", "#c0392b", "#2e8b57",
                                                          "#8e44ad"};

/* The figure's gnuplot script into t: the title naming the input and the kinds, the exact
 * weights and each kind's (top row), the mass recalled per row and each kind's |difference|
 * (bottom row), from the data files written for them. */
static void weights_script(FILE *t, const bench_pattern_panel *panels, int npanels,
                           const attn_shape *ws, int64_t h, const ds_ops *ds, uint64_t seed,
                           char files[][3][4300], const char *exact_file, const double *mean)
{
    char text[1024], title[1400];
    int n = snprintf(text, sizeof text,
                     "Weights on %s (seed %llu), head %lld, T=%lld × S=%lld%s:", ds->name,
                     (unsigned long long)seed, (long long)h, (long long)ws->T, (long long)ws->S,
                     ws->causal ? ", causal" : "");
    for (int k = 0; k < npanels && n < (int)sizeof text; k++) {
        char params[256];
        bench_pattern_params_text(&panels[k], false, params, sizeof params);
        n += snprintf(text + n, sizeof text - (size_t)n, "%s %s%s%s", k ? "," : "",
                      panels[k].ops->name, params[0] ? " " : "", params);
    }
    bench_gnuplot_quote(text, true, title, sizeof title);
    fprintf(t,
            "set multiplot layout 2,%d title %s font ',12'\n"
            "set palette defined (0 '#fff7bc', 0.4 '#fe9929', 0.7 '#cc4c02', 1 '#3f0f00')\n"
            "set cbtics font ',8'\nset tics font ',8' out\n",
            npanels + 1, title);
    matrix_axes(t, ws);
    fprintf(t,
            "set title 'exact attention: weights' font ',9'\n"
            "plot %s matrix with image notitle\n",
            exact_file);
    for (int k = 0; k < npanels; k++) {
        char ptitle[300];
        snprintf(text, sizeof text, "%s: |weights| (one-hot probes of v)", panels[k].ops->name);
        bench_gnuplot_quote(text, true, ptitle, sizeof ptitle);
        fprintf(t, "set title %s font ',9'\nplot %s matrix with image notitle\n", ptitle,
                files[k][0]);
    }
    fprintf(t,
            "unset logscale cb\nset size noratio\nset xrange [0:%lld]\nset yrange [0:1.05]\n"
            "set xlabel 'query i'\nset ylabel 'Σ_j min(kind_{ij}, exact_{ij})'\n"
            "set title 'mass recalled per query row' font ',9'\nset grid\n"
            "set key bottom left font ',8'\nplot ",
            (long long)(ws->T > 1 ? ws->T - 1 : 1));
    for (int k = 0; k < npanels; k++) {
        char label[300];
        snprintf(text, sizeof text, "%s (mean %.3f)", panels[k].ops->name, mean[k]);
        bench_gnuplot_quote(text, true, label, sizeof label);
        fprintf(t, "%s%s using 1:2 with lines lw 1.5 lc rgb '%s' title %s", k ? ", " : "",
                files[k][2], colors[k], label);
    }
    fputc('\n', t);
    matrix_axes(t, ws);
    for (int k = 0; k < npanels; k++) {
        char ptitle[300];
        snprintf(text, sizeof text, "%s: |weight - exact|", panels[k].ops->name);
        bench_gnuplot_quote(text, true, ptitle, sizeof ptitle);
        fprintf(t, "set title %s font ',9'\nplot %s matrix with image notitle\n", ptitle,
                files[k][1]);
    }
    fputs("unset multiplot\n", t);
}

attn_status bench_pattern_weights_draw(bench_pattern_panel *panels, int npanels,
                                       const attn_shape *s, int64_t h, const ds_ops *ds,
                                       const ds_params *dsp, uint64_t seed, const char *dest,
                                       const char *format, char *msg, size_t msg_len)
{
    if (npanels < 1 || npanels > BENCH_PATTERN_WEIGHTS)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%d kinds: 1 to %d on one input", npanels,
                         BENCH_PATTERN_WEIGHTS);
    bench_pattern_weights_out w[BENCH_PATTERN_WEIGHTS] = {{{0}}};
    attn_status st = ATTN_OK;
    for (int k = 0; k < npanels && st == ATTN_OK; k++)
        st = bench_pattern_weights(&panels[k], s, h, ds, dsp, seed, &w[k], msg, msg_len);
    bench_gnuplot g = {0};
    if (st == ATTN_OK) st = bench_gnuplot_open(&g, msg, msg_len);
    /* per kind: its weights, |difference|, recall; then exact attention's weights */
    char files[BENCH_PATTERN_WEIGHTS][3][4300] = {{{0}}}, exact_file[4300] = "";
    double mean[BENCH_PATTERN_WEIGHTS] = {0};
    const attn_shape *ws = &w[0].s;
    if (st == ATTN_OK && write_log_matrix(&g, w[0].exact, NULL, ws, exact_file, sizeof exact_file))
        st = ATTN_EFAIL;
    for (int k = 0; k < npanels && st == ATTN_OK; k++) {
        if (write_log_matrix(&g, w[k].kind, NULL, ws, files[k][0], sizeof files[k][0]) ||
            write_log_matrix(&g, w[k].kind, w[k].exact, ws, files[k][1], sizeof files[k][1])) {
            st = ATTN_EFAIL;
            break;
        }
        FILE *f = bench_gnuplot_data(&g, files[k][2], sizeof files[k][2]);
        for (int64_t i = 0; f && i < ws->T; i++) {
            fprintf(f, "%lld %.6g\n", (long long)i, w[k].recall[i]);
            mean[k] += w[k].recall[i] / (double)ws->T;
        }
        if (!f || fclose(f) != 0) st = ATTN_EFAIL;
    }
    if (st == ATTN_EFAIL && g.dir[0])
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write gnuplot data in %s", g.dir);
    char *script = NULL;
    size_t script_len = 0;
    FILE *t = st == ATTN_OK ? open_memstream(&script, &script_len) : NULL;
    if (st == ATTN_OK && !t) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for a script");
    if (st == ATTN_OK) {
        weights_script(t, panels, npanels, ws, h, ds, seed, files, exact_file, mean);
        if (fclose(t) != 0) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for a script");
    }
    const int cols = npanels + 1;
    if (st == ATTN_OK)
        st = bench_gnuplot_render(&g, script, format, 30 + 470 * cols, 900, dest, msg, msg_len);
    free(script);
    bench_gnuplot_close(&g);
    for (int k = 0; k < npanels; k++) bench_pattern_weights_free(&w[k]);
    return st;
}
