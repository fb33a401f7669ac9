/*
 * figure.c — the figure model of `bench plot` (figure.h) and its drawing: figures, panels and
 * series in memory, each kind's colour and marker across a run, and the gnuplot script that
 * lays out the panels and the legend, chooses axis ranges and ticks, and renders the file
 * through gnuplot.h. Which figures a run gets is cmd_plot.c's job.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"

enum { PAGE_W = 800, PAGE_H = 500, PANEL2_W = 1150, MAX_H = 900 };
static const double ROW_PX = 16.5; /* a legend row at font 9, spacing 1.15 (pngcairo) */

/* ---- figures in memory ---- */

void bench_fig_free(figure *f)
{
    for (int p = 0; p < f->np; p++) {
        for (int s = 0; s < f->p[p].ns; s++) {
            free(f->p[p].s[s].x);
            free(f->p[p].s[s].y);
            free(f->p[p].s[s].tag);
        }
        free(f->p[p].s);
    }
    memset(f, 0, sizeof *f);
}

panel *bench_fig_add_panel(figure *f, const char *title, const char *xlabel, const char *ylabel)
{
    panel *p = &f->p[f->np++];
    memset(p, 0, sizeof *p);
    snprintf(p->title, sizeof p->title, "%s", title);
    snprintf(p->xlabel, sizeof p->xlabel, "%s", xlabel);
    snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel);
    p->hline = NAN;
    p->lines = true;
    return p;
}

/* Add series s of rd (x per point index) to panel p with y = y(point); points with y not finite
 * (or not > 0 on a log axis) are left out. Returns the points added (0: no series added). */
int64_t bench_fig_add_series(panel *p, const bench_run_data *rd, const bench_series *s,
                             const double *x, y_of y, const char *label, const char *color_key,
                             bool causal)
{
    pseries *grown = realloc(p->s, (size_t)(p->ns + 1) * sizeof *grown);
    if (!grown) return 0;
    p->s = grown;
    pseries *ps = &p->s[p->ns];
    memset(ps, 0, sizeof *ps);
    ps->x = malloc((size_t)s->n * sizeof *ps->x);
    ps->y = malloc((size_t)s->n * sizeof *ps->y);
    if (!ps->x || !ps->y) {
        free(ps->x);
        free(ps->y);
        return 0;
    }
    for (int64_t i = 0; i < s->n; i++) {
        const double xv = x[s->idx[i]], yv = y(&rd->pts[s->idx[i]]);
        if (!isfinite(yv) || !isfinite(xv) || (p->logy && !(yv > 0)) || (p->logx && !(xv > 0)))
            continue;
        ps->x[ps->n] = xv;
        ps->y[ps->n++] = yv;
    }
    if (ps->n == 0) {
        free(ps->x);
        free(ps->y);
        return 0;
    }
    snprintf(ps->label, sizeof ps->label, "%s", label);
    snprintf(ps->color_key, sizeof ps->color_key, "%s", color_key);
    ps->causal = causal;
    ps->first = s->idx[0];
    p->ns++;
    return ps->n;
}

/* Bytes on panel p's y axis in the unit that suits their largest value; the unit ends the
 * y label ("workspace" -> "workspace (MiB)"). */
void bench_fig_bytes_unit(panel *p, const char *what)
{
    double hi = 0;
    for (int s = 0; s < p->ns; s++)
        for (int64_t i = 0; i < p->s[s].n; i++) hi = fmax(hi, p->s[s].y[i]);
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double div = 1;
    while (u < 4 && hi / div >= 2048) div *= 1024, u++;
    for (int s = 0; s < p->ns; s++)
        for (int64_t i = 0; i < p->s[s].n; i++) p->s[s].y[i] /= div;
    snprintf(p->ylabel, sizeof p->ylabel, "%s (%s)", what, units[u]);
}

/* Does any series of the figure have 2 or more distinct x? */
bool bench_fig_has_curve(const figure *f)
{
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++)
            for (int64_t i = 1; i < f->p[p].s[s].n; i++)
                if (f->p[p].s[s].x[i] != f->p[p].s[s].x[0]) return true;
    return false;
}

static int by_color_then_causal(const void *a, const void *b)
{
    const pseries *x = a, *y = b;
    if (x->color != y->color) return x->color - y->color;
    if (x->variant != y->variant) return x->variant - y->variant;
    return (int)x->causal - (int)y->causal;
}

/* Colours: one per kind, in the order the run first measured each kind, so a kind has the same
 * colour (and marker) in every figure of the run; the series of one kind in a figure differ by
 * marker (variant: one per distinct colour key, the label without causal). Each panel's series
 * then in kind order, a non-causal series before its causal twin. */
static int kind_index(const bench_run_data *rd, const char *kind)
{
    const char *seen[64];
    int nseen = 0;
    for (int64_t p = 0; p < rd->n; p++) {
        int k = 0;
        while (k < nseen && strcmp(seen[k], rd->pts[p].kind) != 0) k++;
        if (strcmp(rd->pts[p].kind, kind) == 0) return k;
        if (k == nseen && nseen < 64) seen[nseen++] = rd->pts[p].kind;
    }
    return nseen;
}

static void assign_colors(const bench_run_data *rd, figure *f)
{
    const char *keys[256];
    int nkeys = 0, key_color[256], key_variant[256];
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++) {
            pseries *ps = &f->p[p].s[s];
            ps->color = kind_index(rd, rd->pts[ps->first].kind);
            int k = 0;
            while (k < nkeys && strcmp(keys[k], ps->color_key) != 0) k++;
            if (k == nkeys && nkeys < 256) {
                key_color[k] = ps->color, key_variant[k] = 0;
                for (int o = 0; o < nkeys; o++) key_variant[k] += key_color[o] == ps->color;
                keys[nkeys++] = ps->color_key;
            }
            ps->variant = k < nkeys ? key_variant[k] : 0;
        }
    for (int p = 0; p < f->np; p++)
        qsort(f->p[p].s, (size_t)f->p[p].ns, sizeof *f->p[p].s, by_color_then_causal);
}

/* Add every series of set to panel p (labels computed among the set with `by`). */
void bench_fig_add_set(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                       bench_group_by by, const double *x, y_of y)
{
    bench_group_by no_causal = {by.fields & ~BENCH_K_CAUSAL, by.except_param};
    for (int64_t k = 0; k < nset; k++) {
        char label[LABEL_LEN], key[LABEL_LEN];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
        bench_fig_add_series(p, rd, &set[k], x, y, label, key, rd->pts[set[k].idx[0]].causal != 0);
    }
}

/* ---- gnuplot script ---- */

static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000", "#8C564B",
                                      "#7F7F7F", "#9467BD", "#17BECF", "#B8860B"};
enum { NCOLORS = sizeof palette / sizeof palette[0] };

typedef struct script {
    char *s;
    size_t len, cap;
    bool failed;
} script;

static void put(script *b, const char *fmt, ...) ATTN_PRINTF(2, 3);
static void put(script *b, const char *fmt, ...)
{
    va_list ap;
    for (int attempt = 0; attempt < 2 && !b->failed; attempt++) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
}

/* Ticks at the x values of an n axis (when there are few), labelled 256, 1K, 32K. */
static void n_tics(script *b, const panel *p)
{
    double v[64];
    int nv = 0;
    for (int s = 0; s < p->ns; s++)
        for (int64_t i = 0; i < p->s[s].n; i++) {
            int k = 0;
            while (k < nv && v[k] != p->s[s].x[i]) k++;
            if (k == nv) {
                if (nv == 64) return; /* too many: gnuplot's own ticks */
                v[nv++] = p->s[s].x[i];
            }
        }
    if (nv > 12) return;
    put(b, "set xtics (");
    for (int k = 0; k < nv; k++) {
        char c[32];
        put(b, "%s'%s' %.17g", k ? ", " : "", bench_format_count(v[k], c, sizeof c), v[k]);
    }
    put(b, ")\n");
}

/* Write the data of series ps to a file of the private directory; its quoted path into path. */
static bool write_data(bench_gnuplot *gp, const pseries *ps, char *path, size_t len)
{
    FILE *f = bench_gnuplot_data(gp, path, len);
    if (!f) return false;
    for (int64_t i = 0; i < ps->n; i++) {
        fprintf(f, "%.17g %.17g", ps->x[i], ps->y[i]);
        if (ps->tag) fprintf(f, " \"%s\"", ps->tag[i]); /* tags are numbers and names */
        fprintf(f, "\n");
    }
    return fclose(f) == 0;
}

/* 0.5, 20, 3000 as they are; very small or large values as 4×10^{-7} (enhanced text). */
static void tic_label(double v, char *buf, size_t len)
{
    if (v == 0 || (fabs(v) >= 1e-3 && fabs(v) < 1e5)) {
        snprintf(buf, len, "%.6g", v);
        return;
    }
    const int e = (int)floor(log10(fabs(v)) + 1e-9);
    const double m = v / pow(10, e);
    if (fabs(m - 1) < 1e-9) snprintf(buf, len, "10^{%d}", e);
    else snprintf(buf, len, "%.2g×10^{%d}", m, e);
}

/* Ticks for a log axis over [lo, hi] that always label a few values: whole decades over a
 * wide range, 1-2-5 or 1..9 mantissas over a narrower one, evenly spaced values over a tiny one. */
static void log_tics(script *b, const char *axis, double lo, double hi)
{
    if (!(lo > 0 && hi > lo)) return;
    const double decades = log10(hi / lo);
    if (decades > 3) return; /* gnuplot's decades */
    static const double m125[] = {1, 2, 5}, m19[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const double *m = decades > 1 ? m125 : m19;
    const int nm = decades > 1 ? 3 : 9;
    double v[64];
    int nv = 0;
    for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)) && nv < 60; e++)
        for (int k = 0; k < nm; k++) {
            const double t = m[k] * pow(10, e);
            if (t >= lo && t <= hi && nv < 60) v[nv++] = t;
        }
    if (nv < 3) { /* tiny range: 4 or 5 evenly spaced round values */
        const double raw = (hi - lo) / 4, mag = pow(10, floor(log10(raw)));
        const double r = raw / mag;
        const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
        nv = 0;
        for (double t = ceil(lo / step) * step; t <= hi && nv < 60; t += step) v[nv++] = t;
    }
    put(b, "set %stics (", axis);
    for (int k = 0; k < nv; k++) {
        char label[48];
        tic_label(v[k], label, sizeof label);
        put(b, "%s'%s' %.17g", k ? ", " : "", label, v[k]);
    }
    put(b, ")\n");
}

/* "[lo:hi]" around the panel's x (or y) values with a 5 % margin (on log axes, of the log
 * range), rather than gnuplot's widening to whole decades. */
static void axis_range(const panel *p, bool x, char *buf, size_t len, double *from, double *to)
{
    *from = *to = NAN;
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < p->ns; s++) {
        const pseries *ps = &p->s[s];
        for (int64_t i = 0; i < ps->n; i++) {
            const double v = x ? ps->x[i] : ps->y[i];
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
        if (ps->fit && !x) {
            const double a = ps->c * pow(ps->x0, ps->k), b = ps->c * pow(ps->x1, ps->k);
            lo = fmin(lo, fmin(a, b)), hi = fmax(hi, fmax(a, b));
        }
    }
    if (!x && !isnan(p->hline)) lo = fmin(lo, p->hline), hi = fmax(hi, p->hline);
    const bool log_axis = x ? p->logx : p->logy;
    if (!(lo <= hi)) {
        snprintf(buf, len, "[*:*]");
    } else if (log_axis) {
        const double span = hi > lo ? log(hi / lo) : log(4.0);
        *from = lo * exp(-0.06 * span), *to = hi * exp(0.06 * span);
        snprintf(buf, len, "[%.17g:%.17g]", *from, *to);
    } else {
        if (!x && p->yzero) lo = fmin(lo, 0);
        const double span = hi > lo ? hi - lo : fabs(hi) > 0 ? fabs(hi) : 1;
        snprintf(buf, len, "[%.17g:%.17g]", !x && p->yzero && lo >= 0 ? 0 : lo - 0.06 * span,
                 hi + 0.08 * span);
    }
}

static const char FITS_ENTRY[] = "lines: least-squares fits";

static int max_label(const figure *f)
{
    int w = 0;
    for (int p = 0; p < f->np; p++) {
        for (int s = 0; s < f->p[p].ns; s++) {
            int n = (int)(strlen(f->p[p].s[s].label) + strlen(f->p[p].s[s].suffix) * 0.6);
            if (n > w) w = n;
        }
        if (!isnan(f->p[p].hline) && (int)strlen(f->p[p].hline_label) > w)
            w = (int)strlen(f->p[p].hline_label);
        for (int s = 0; s < f->p[p].ns; s++)
            if (f->p[p].s[s].fit && (int)strlen(FITS_ENTRY) > w) w = (int)strlen(FITS_ENTRY);
    }
    return w;
}

/* Where a figure's parts go: page size, panel positions (fractions of the page) and the legend. */
typedef struct layout {
    int width, height, rows;     /* pixels; legend rows */
    double left, right, gap, pw; /* panel 0's left edge, the legend's, between panels, a panel */
    bool fits;                   /* the legend has the fits' entry */
    bool mixed;                  /* causal and non-causal series: open markers, dashes for causal */
} layout;

/* The legend lists panel 0's series, its reference line and the fits' entry, every one of them:
 * to the right of the panels, as wide as its longest entry, in one column while the page can grow
 * to MAX_H to hold it, else in two (gnuplot fits the rows in the panel's height and would put
 * further columns off the page). The page widens rather than squeeze the panels below 500 pixels
 * each. */
static layout plan_layout(const figure *f)
{
    layout L = {0};
    for (int s = 0; s < f->p[0].ns; s++) L.fits |= f->p[0].s[s].fit;
    const int entries = f->p[0].ns + !isnan(f->p[0].hline) + L.fits;
    bool causal = false, noncausal = false;
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++)
            causal |= f->p[p].s[s].causal, noncausal |= !f->p[p].s[s].causal;
    L.mixed = causal && noncausal;
    const int fit_rows = (int)((MAX_H - 165) / ROW_PX) - 1;
    const int cols = entries > fit_rows ? 2 : 1;
    L.rows = (entries + cols - 1) / cols;
    L.height = (int)fmax(PAGE_H, 165 + (L.rows + 1) * ROW_PX);
    const double key_px = cols * fmax(130, max_label(f) * 7.4 + 75), left_px = 84, gap_px = 72;
    const double need = left_px + f->np * 500 + (f->np - 1) * gap_px + key_px;
    const int base = f->np > 1 ? PANEL2_W : PAGE_W;
    L.width = (int)fmax(need, base);
    L.left = left_px / L.width, L.right = 1 - key_px / L.width, L.gap = gap_px / L.width;
    L.pw = (L.right - L.left - L.gap * (f->np - 1)) / f->np;
    return L;
}

/* The page: title, subtitle and note (pixels from the top), grid, borders, tics and legend. */
static void put_page(script *b, const figure *f, const layout *L)
{
    char q[1200];
    const double title_y = 1 - 22.0 / L->height, sub_y = 1 - 47.0 / L->height;
    const double note_y = 1 - 62.0 / L->height, key_y = 1 - 85.0 / L->height;
    put(b, "set encoding utf8\nset multiplot\nset samples 400\n");
    bench_gnuplot_quote(f->title, true, q, sizeof q);
    put(b, "set label 1 %s at screen 0.5,%.4f center font ',13'\n", q, title_y);
    bench_gnuplot_quote(f->subtitle, true, q, sizeof q);
    put(b, "set label 2 %s at screen 0.5,%.4f center font ',8' textcolor rgb '#444444'\n", q,
        sub_y);
    if (f->note[0]) {
        bench_gnuplot_quote(f->note, true, q, sizeof q);
        put(b, "set label 3 %s at screen 0.5,%.4f center font ',8' textcolor rgb '#444444'\n", q,
            note_y);
    }
    put(b,
        "set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1, lc rgb '#f2f2f2' lw 1\n"
        "set border lc rgb '#555555'\nset tics nomirror out scale 0.6\n"
        "set key at screen %.4f,%.4f left top Left reverse samplen 2.5 spacing 1.15 font ',9' "
        "maxrows %d noautotitle\n",
        L->right + 0.012, key_y, L->rows);
}

/* Panel pi's place, titles, scales, tics and ranges. */
static void put_axes(script *b, const figure *f, int pi, const layout *L)
{
    const panel *p = &f->p[pi];
    const double l = L->left + pi * (L->pw + L->gap);
    const double top = 1 - 100.0 / L->height, bottom = 65.0 / L->height;
    char q[1200], q2[1200];
    put(b,
        "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
        "set tmargin at screen %.4f\nset bmargin at screen %.4f\n",
        l, l + L->pw, top, bottom);
    bench_gnuplot_quote(p->title, true, q, sizeof q);
    put(b, "set title %s font ',10' offset 0,-0.3\n", f->np > 1 ? q : "''");
    bench_gnuplot_quote(p->xlabel, true, q, sizeof q);
    bench_gnuplot_quote(p->ylabel, true, q2, sizeof q2);
    put(b, "set xlabel %s\nset ylabel %s\n", q, q2);
    put(b, "%s logscale x\n%s logscale y\n", p->logx ? "set" : "unset", p->logy ? "set" : "unset");
    put(b, "set format x '%%g'\nset format y '%%g'\nset xtics autofreq\nset ytics autofreq\n");
    if (p->ntics) n_tics(b, p);
    char xr[80], yr[80];
    double x0, x1, y0, y1;
    axis_range(p, true, xr, sizeof xr, &x0, &x1);
    axis_range(p, false, yr, sizeof yr, &y0, &y1);
    put(b, "set xrange %s\nset yrange %s\n", xr, yr);
    /* gnuplot's own decades: as powers of ten when far from 1 */
    if (p->logy && (y0 < 1e-3 || y1 >= 1e5)) put(b, "set format y '10^{%%L}'\n");
    if (p->logy) log_tics(b, "y", y0, y1);
    if (p->logx && !p->ntics) log_tics(b, "x", x0, x1);
    if (pi > 0) put(b, "unset label 1\nunset label 2\nunset label 3\nunset key\n");
}

/* The plot items of series ps of panel p (number pi), its data in file `data`: points (and
 * lines), tags, the fitted power law. Each kind its colour and marker (the next marker for each
 * further series of it); open markers for causal. */
static void put_series(script *b, const panel *p, int pi, const pseries *ps, const char *data,
                       const layout *L, int item)
{
    const char *color = palette[ps->color % NCOLORS];
    static const int filled[] = {7, 5, 9, 13, 11, 15}, open[] = {6, 4, 8, 12, 10, 14};
    const bool dashed = ps->causal && L->mixed;
    const int pt = (dashed ? open : filled)[(ps->color + ps->variant) % 6];
    char title[LABEL_LEN * 2 + 80];
    bench_gnuplot_quote(ps->label, true, title, sizeof title - 70);
    title[strlen(title) - 1] = '\0'; /* reopen the quote for the suffix */
    snprintf(title + strlen(title), sizeof title - strlen(title), "%s'", ps->suffix);
    put(b, "%s%s using 1:2 with %s lc rgb '%s' pt %d ps 1.1 lw 1.6 dt %d title %s",
        item ? ", \\\n  " : "", data, p->lines ? "linespoints" : "points", color, pt,
        dashed ? 2 : 1, pi == 0 ? title : "''");
    if (ps->tag)
        put(b,
            ", \\\n  %s using 1:2:3 with labels offset char 0.6,0.6 left font ',8' "
            "textcolor rgb '%s' notitle",
            data, color);
    if (ps->fit)
        put(b,
            ", \\\n  (x >= %.17g && x <= %.17g) ? %.17g * x**%.17g : 1/0 with lines "
            "lc rgb '%s' lw 1.3 dt %d notitle",
            ps->x0, ps->x1, ps->c, ps->k, color, dashed ? 2 : 1);
}

/* Panel pi's plot command: its series (data files written now), reference line, fits' entry. */
static attn_status put_plot(plot_ctx *cx, script *b, const figure *f, int pi, const layout *L,
                            char *msg, size_t msg_len)
{
    const panel *p = &f->p[pi];
    put(b, "plot ");
    int items = 0;
    for (int s = 0; s < p->ns; s++) {
        char data[4400];
        if (!write_data(&cx->gp, &p->s[s], data, sizeof data))
            return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write a data file in %s",
                             cx->gp.dir);
        put_series(b, p, pi, &p->s[s], data, L, items++);
    }
    if (!isnan(p->hline)) {
        char q[1200];
        bench_gnuplot_quote(p->hline_label, true, q, sizeof q);
        put(b, "%s%.17g with lines lc rgb '#333333' lw 1.5 dt 3 title %s",
            items++ ? ", \\\n  " : "", p->hline, pi == 0 ? q : "''");
    }
    if (L->fits && pi == 0)
        put(b, ", \\\n  1/0 with lines lc rgb '#333333' lw 1.3 title '%s'", FITS_ENTRY);
    put(b, "\n");
    return ATTN_OK;
}

attn_status bench_fig_draw(plot_ctx *cx, figure *f, char *msg, size_t msg_len)
{
    assign_colors(cx->rd, f);
    const layout L = plan_layout(f);
    script b = {0};
    put_page(&b, f, &L);
    attn_status st = ATTN_OK;
    for (int pi = 0; pi < f->np && !b.failed && !st; pi++) {
        put_axes(&b, f, pi, &L);
        st = put_plot(cx, &b, f, pi, &L, msg, msg_len);
    }
    put(&b, "unset multiplot\n");
    if (!st && b.failed)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory building a gnuplot script");
    char dest[4400];
    snprintf(dest, sizeof dest, "%s/%s.%s", cx->dir, f->name, cx->format);
    if (!st)
        st = bench_gnuplot_render(&cx->gp, b.s, cx->format, L.width, L.height, dest, msg, msg_len);
    free(b.s);
    if (st == ATTN_OK) {
        if (cx->out) fprintf(cx->out, "wrote %s\n", dest);
        cx->written++;
    }
    return st;
}
