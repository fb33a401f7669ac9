/*
 * cmd_plot.c — `bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]`: one figure per
 * question about a run, drawn by gnuplot (gnuplot.h), for each mode (prefill, decode) measured:
 *   time_vs_n           median time vs n, log-log, with each series' least-squares power law
 *                       and its exponent in the legend
 *   memory_vs_n         peak RSS - RSS at the point's start (measured) and workspace (declared)
 *   throughput_vs_n     GFLOP/s (prefill) or GB/s (decode) vs n, with the run's sgemm peak or
 *                       memory bandwidth as a line
 *   accuracy_vs_n       relative error vs exact float64 attention (and retrieval) vs n
 *   accuracy_vs_<param> the same vs each kind parameter the run swept, one line per n
 *   error_vs_cost       error vs time at the largest n, one point per parameter value
 *   time_vs_heads       time vs query heads, and time_vs_kv_heads (MHA, GQA, MQA)
 * A series is one line (series.h); each kind keeps its colour and marker across the run's
 * figures; dashes and open markers mark causal when a figure has both. With several datasets,
 * the time, memory, throughput and heads figures show the first dataset (a note names the
 * others) and the accuracy figures come once per dataset (_<dataset>); with causal 0 and 1 and
 * more than MAX_LINES lines, every figure comes once per causal value (_noncausal, _causal).
 * A figure without data in the run is skipped with one line saying why.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "fit.h"
#include "gnuplot.h"
#include "series.h"

enum { MAX_PANELS = 2, LABEL_LEN = 256, PAGE_W = 800, PAGE_H = 500, PANEL2_W = 1150, MAX_H = 900 };
static const double ROW_PX = 16.5; /* a legend row at font 9, spacing 1.15 (pngcairo) */

typedef struct pseries {
    char label[LABEL_LEN];  /* legend text (plain) */
    char suffix[64];        /* enhanced-text markup after it, e.g. "  (n^{2.01})" */
    char color_key[LABEL_LEN];
    int color;              /* its kind's place in the run: the same colour in every figure */
    int variant;            /* its place among its kind's series of the figure (marker) */
    bool causal;
    int64_t n;
    double *x, *y;
    char (*tag)[48];        /* text beside each point, or NULL */
    int64_t first;          /* the first point of the series it was made from */
    bool fit;               /* draw y = c·x^k over [x0, x1] */
    double c, k, x0, x1;
} pseries;

typedef struct panel {
    char title[160], xlabel[160], ylabel[160];
    bool logx, logy, yzero, ntics, lines;
    double hline;           /* a horizontal reference (NaN: none) */
    char hline_label[160];
    pseries *s;
    int ns;
} panel;

typedef struct figure {
    char base[80];          /* what it shows: time_vs_n */
    char name[256];         /* file name without extension: time_vs_n, time_vs_n_decode */
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

/* ---- figures in memory ---- */

static void figure_free(figure *f)
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

static panel *add_panel(figure *f, const char *title, const char *xlabel, const char *ylabel)
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

typedef double (*y_of)(const bench_point *pt);

static double y_time_ms(const bench_point *pt) { return pt->time_median_s * 1e3; }
static double y_rss_added(const bench_point *pt) { return bench_rss_of(pt, true); }
static double y_rss(const bench_point *pt) { return bench_rss_of(pt, false); }
static double y_workspace(const bench_point *pt) { return (double)pt->workspace_bytes; }
static double y_gflops(const bench_point *pt) { return pt->gflops_per_s; }
static double y_gbytes(const bench_point *pt) { return pt->gbytes_per_s; }
static double y_rel_err(const bench_point *pt) { return pt->rel_err; }
static double y_retrieval(const bench_point *pt)
{
    return pt->retrieval_queries > 0 ? pt->retrieval : NAN;
}

/* Add series s of rd (x per point index) to panel p with y = y(point); points with y not finite
 * (or not > 0 on a log axis) are left out. Returns the points added (0: no series added). */
static int64_t add_series(panel *p, const bench_run_data *rd, const bench_series *s, const double *x,
                          y_of y, const char *label, const char *color_key, bool causal)
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
static void bytes_unit(panel *p, const char *what)
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
static bool has_curve(const figure *f)
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
static void add_set(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                    bench_group_by by, const double *x, y_of y)
{
    bench_group_by no_causal = {by.fields & ~BENCH_K_CAUSAL, by.except_param};
    for (int64_t k = 0; k < nset; k++) {
        char label[LABEL_LEN], key[LABEL_LEN];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
        add_series(p, rd, &set[k], x, y, label, key, rd->pts[set[k].idx[0]].causal != 0);
    }
}

/* ---- gnuplot script ---- */

static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                      "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#9467BD",
                                      "#17BECF", "#B8860B"};
enum { NCOLORS = sizeof palette / sizeof palette[0] };

typedef struct script {
    char *s;
    size_t len, cap;
    bool failed;
} script;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
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
        if (!isnan(f->p[p].hline) && (int)strlen(f->p[p].hline_label) > w) w = (int)strlen(f->p[p].hline_label);
        for (int s = 0; s < f->p[p].ns; s++)
            if (f->p[p].s[s].fit && (int)strlen(FITS_ENTRY) > w) w = (int)strlen(FITS_ENTRY);
    }
    return w;
}

static attn_status draw(plot_ctx *cx, figure *f, char *msg, size_t msg_len)
{
    assign_colors(cx->rd, f);
    /* the legend lists panel 0's series, its reference line and the fits' entry, every one of
     * them: to the right of the panels, as wide as its longest entry, in one column while the
     * page can grow to MAX_H to hold it, else in two (gnuplot fits the rows in the panel's
     * height and would put further columns off the page). The page widens rather than squeeze
     * the panels below 500 pixels each. */
    bool fits = false;
    for (int s = 0; s < f->p[0].ns; s++) fits |= f->p[0].s[s].fit;
    const int entries = f->p[0].ns + !isnan(f->p[0].hline) + fits;
    bool causal = false, noncausal = false; /* open markers and dashes for causal, if both */
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++) causal |= f->p[p].s[s].causal, noncausal |= !f->p[p].s[s].causal;
    const bool mixed = causal && noncausal;
    const int fit_rows = (int)((MAX_H - 165) / ROW_PX) - 1;
    const int cols = entries > fit_rows ? 2 : 1, rows = (entries + cols - 1) / cols;
    const int height = (int)fmax(PAGE_H, 165 + (rows + 1) * ROW_PX);
    const double key_px = cols * fmax(130, max_label(f) * 7.4 + 75), left_px = 84, gap_px = 72;
    const double need = left_px + f->np * 500 + (f->np - 1) * gap_px + key_px;
    const int base = f->np > 1 ? PANEL2_W : PAGE_W;
    const int width = (int)fmax(need, base);
    const double kw = key_px / width;
    const double left = left_px / width, right = 1 - kw, gap = gap_px / width;
    const double pw = (right - left - gap * (f->np - 1)) / f->np;
    script b = {0};
    char q[1200], q2[1200];
    put(&b, "set encoding utf8\nset multiplot\nset samples 400\n");
    bench_gnuplot_quote(f->title, true, q, sizeof q);
    /* vertical layout in pixels from the top: title, subtitle, panels, x labels */
    const double title_y = 1 - 22.0 / height, sub_y = 1 - 47.0 / height, top = 1 - 100.0 / height;
    const double note_y = 1 - 62.0 / height;
    const double bottom = 65.0 / height, key_y = 1 - 85.0 / height;
    put(&b, "set label 1 %s at screen 0.5,%.4f center font ',13'\n", q, title_y);
    bench_gnuplot_quote(f->subtitle, true, q, sizeof q);
    put(&b, "set label 2 %s at screen 0.5,%.4f center font ',8' textcolor rgb '#444444'\n", q, sub_y);
    if (f->note[0]) {
        bench_gnuplot_quote(f->note, true, q, sizeof q);
        put(&b, "set label 3 %s at screen 0.5,%.4f center font ',8' textcolor rgb '#444444'\n", q, note_y);
    }
    put(&b, "set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1, lc rgb '#f2f2f2' lw 1\n"
            "set border lc rgb '#555555'\nset tics nomirror out scale 0.6\n"
            "set key at screen %.4f,%.4f left top Left reverse samplen 2.5 spacing 1.15 font ',9' "
            "maxrows %d noautotitle\n", right + 0.012, key_y, rows);
    for (int pi = 0; pi < f->np && !b.failed; pi++) {
        const panel *p = &f->p[pi];
        const double l = left + pi * (pw + gap);
        put(&b, "set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
                "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", l, l + pw, top, bottom);
        bench_gnuplot_quote(p->title, true, q, sizeof q);
        put(&b, "set title %s font ',10' offset 0,-0.3\n", f->np > 1 ? q : "''");
        bench_gnuplot_quote(p->xlabel, true, q, sizeof q);
        bench_gnuplot_quote(p->ylabel, true, q2, sizeof q2);
        put(&b, "set xlabel %s\nset ylabel %s\n", q, q2);
        put(&b, "%s logscale x\n%s logscale y\n", p->logx ? "set" : "unset", p->logy ? "set" : "unset");
        put(&b, "set format x '%%g'\nset format y '%%g'\nset xtics autofreq\nset ytics autofreq\n");
        if (p->ntics) n_tics(&b, p);
        char xr[80], yr[80];
        double x0, x1, y0, y1;
        axis_range(p, true, xr, sizeof xr, &x0, &x1);
        axis_range(p, false, yr, sizeof yr, &y0, &y1);
        put(&b, "set xrange %s\nset yrange %s\n", xr, yr);
        /* gnuplot's own decades: as powers of ten when far from 1 */
        if (p->logy && (y0 < 1e-3 || y1 >= 1e5)) put(&b, "set format y '10^{%%L}'\n");
        if (p->logy) log_tics(&b, "y", y0, y1);
        if (p->logx && !p->ntics) log_tics(&b, "x", x0, x1);
        if (pi > 0) put(&b, "unset label 1\nunset label 2\nunset label 3\nunset key\n");
        put(&b, "plot ");
        int items = 0;
        for (int s = 0; s < p->ns; s++) {
            const pseries *ps = &p->s[s];
            char data[4400];
            if (!write_data(&cx->gp, ps, data, sizeof data)) {
                free(b.s);
                return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write a data file in %s",
                                 cx->gp.dir);
            }
            const char *color = palette[ps->color % NCOLORS];
            /* each kind its colour and marker (the next marker for each further series of it);
             * open markers for causal */
            static const int filled[] = {7, 5, 9, 13, 11, 15}, open[] = {6, 4, 8, 12, 10, 14};
            const bool dashed = ps->causal && mixed;
            const int pt = (dashed ? open : filled)[(ps->color + ps->variant) % 6];
            char title[LABEL_LEN * 2 + 80];
            bench_gnuplot_quote(ps->label, true, title, sizeof title - 70);
            title[strlen(title) - 1] = '\0'; /* reopen the quote for the suffix */
            snprintf(title + strlen(title), sizeof title - strlen(title), "%s'", ps->suffix);
            put(&b, "%s%s using 1:2 with %s lc rgb '%s' pt %d ps 1.1 lw 1.6 dt %d title %s", items++ ? ", \\\n  " : "",
                data, p->lines ? "linespoints" : "points", color, pt, dashed ? 2 : 1,
                pi == 0 ? title : "''");
            if (ps->tag)
                put(&b, ", \\\n  %s using 1:2:3 with labels offset char 0.6,0.6 left font ',8' "
                        "textcolor rgb '%s' notitle", data, color);
            if (ps->fit)
                put(&b, ", \\\n  (x >= %.17g && x <= %.17g) ? %.17g * x**%.17g : 1/0 with lines "
                        "lc rgb '%s' lw 1.3 dt %d notitle", ps->x0, ps->x1, ps->c, ps->k, color,
                    dashed ? 2 : 1);
        }
        if (!isnan(p->hline)) {
            bench_gnuplot_quote(p->hline_label, true, q, sizeof q);
            put(&b, "%s%.17g with lines lc rgb '#333333' lw 1.5 dt 3 title %s", items++ ? ", \\\n  " : "",
                p->hline, pi == 0 ? q : "''");
        }
        if (fits && pi == 0)
            put(&b, ", \\\n  1/0 with lines lc rgb '#333333' lw 1.3 title '%s'", FITS_ENTRY);
        put(&b, "\n");
    }
    put(&b, "unset multiplot\n");
    if (b.failed) {
        free(b.s);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory building a gnuplot script");
    }
    char dest[4400];
    snprintf(dest, sizeof dest, "%s/%s.%s", cx->dir, f->name, cx->format);
    attn_status st = bench_gnuplot_render(&cx->gp, b.s, cx->format, width, height, dest, msg, msg_len);
    free(b.s);
    if (st == ATTN_OK) {
        if (cx->out) fprintf(cx->out, "wrote %s\n", dest);
        cx->written++;
    }
    return st;
}

/* ---- the figures ---- */

typedef struct subset {
    const char *mode;        /* "prefill", "decode", ... */
    int64_t *idx;            /* points of that mode (and dataset, causal: see plot_mode) */
    int64_t n;
    double *x;               /* scratch: one x per point of the run */
    char suffix[96];         /* after the figure's name: "", "_needle", "_causal" */
    char title[64];          /* after its title: "", " on needle", " (causal)" */
    char note[256];          /* a line under the subtitle, or "" */
} subset;

/* A figure's file name (no extension): name, the subset's suffix, then the mode unless prefill. */
static void figure_name(const subset *ss, const char *name, char *buf, size_t len)
{
    const bool other = strcmp(ss->mode, "prefill") != 0;
    snprintf(buf, len, "%s%s%s%s", name, ss->suffix, other ? "_" : "", other ? ss->mode : "");
}

static void skip(plot_ctx *cx, const subset *ss, const char *name, const char *why)
{
    char file[256];
    figure_name(ss, name, file, sizeof file);
    if (cx->out) fprintf(cx->out, "skipped %s.%s: %s\n", file, cx->format, why);
    cx->skipped++;
}

/* Name, title and subtitle of a figure for subset ss (the settings all its points share,
 * except those in `varying`). */
static void begin(figure *f, const plot_ctx *cx, const subset *ss, const char *name,
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
    snprintf(origin, sizeof origin, "run %lld of %s, %d thread%s, %.40s",
             (long long)cx->rd->run.run_id, file ? file + 1 : cx->rd->path, cx->rd->run.threads,
             cx->rd->run.threads == 1 ? "" : "s", cx->rd->run.cpu_model);
    /* one line of 8-point text holds about 120 characters on the narrowest (800 px) page: a
     * longer subtitle gives its origin part to the line below */
    if (strlen(common) + strlen(origin) + 5 <= 120) {
        snprintf(f->subtitle, sizeof f->subtitle, "%s  |  %s", common, origin);
    } else {
        snprintf(f->subtitle, sizeof f->subtitle, "%s", common);
        char note[sizeof f->note];
        snprintf(note, sizeof note, "%s%s%s", origin, ss->note[0] ? "  |  " : "", ss->note);
        snprintf(f->note, sizeof f->note, "%s", note);
    }
}

/* Draw f if a series of it has 2 or more x, else say why it is skipped; frees f. */
static attn_status finish(plot_ctx *cx, const subset *ss, figure *f, const char *why, char *msg,
                          size_t msg_len)
{
    attn_status st = ATTN_OK;
    if (has_curve(f)) st = draw(cx, f, msg, msg_len);
    else skip(cx, ss, f->base, why);
    figure_free(f);
    return st;
}

static const char *n_axis(const subset *ss)
{
    return strcmp(ss->mode, "decode") == 0 ? "KV-cache length n (keys)"
                                           : "sequence length n (queries = keys = n)";
}

static const bench_group_by over_n = {BENCH_K_ALL & ~BENCH_K_N, NULL};

/* Group ss's points over n. */
static attn_status series_over_n(const plot_ctx *cx, const subset *ss, bench_series **set, int64_t *nset)
{
    for (int64_t i = 0; i < ss->n; i++) ss->x[ss->idx[i]] = (double)cx->rd->pts[ss->idx[i]].kv_len;
    return bench_series_group(cx->rd, ss->idx, ss->n, over_n, ss->x, set, nset);
}

static attn_status fig_time_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                 int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    begin(&f, cx, ss, "time_vs_n",
          decode ? "Time per decode step vs KV-cache length" : "Time per forward vs sequence length",
          ss->idx, ss->n, BENCH_K_N);
    panel *p = add_panel(&f, "", n_axis(ss), decode ? "median time per decode step (ms)"
                                                    : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    p->lines = false;
    add_set(p, cx->rd, set, nset, over_n, ss->x, y_time_ms);
    for (int s = 0; s < p->ns; s++) {
        pseries *ps = &p->s[s];
        bench_fit fit;
        char why[ATTN_MSG_LEN];
        if (bench_fit_power_law(ps->x, ps->y, ps->n, &fit, why, sizeof why) != ATTN_OK) continue;
        ps->fit = true;
        ps->c = exp(fit.intercept), ps->k = fit.slope;
        ps->x0 = ps->x[0], ps->x1 = ps->x[ps->n - 1];
        snprintf(ps->suffix, sizeof ps->suffix, "  (n^{%.2f})", fit.slope);
    }
    return finish(cx, ss, &f, "every series has a single n (sweep --n with 2 or more values)", msg, msg_len);
}

static attn_status fig_memory_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                   int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    begin(&f, cx, ss, "memory_vs_n", "Memory vs sequence length", ss->idx, ss->n, BENCH_K_N);
    bool added = true, workspace = false;
    for (int64_t i = 0; i < ss->n; i++) {
        added &= !isnan(bench_rss_of(&cx->rd->pts[ss->idx[i]], true));
        workspace |= cx->rd->pts[ss->idx[i]].workspace_bytes > 0;
    }
    panel *p = add_panel(&f, added ? "measured: peak RSS - RSS at the point's start (what it added)"
                                   : "measured: peak RSS of the process", n_axis(ss), "");
    p->logx = p->logy = p->ntics = true;
    add_set(p, cx->rd, set, nset, over_n, ss->x, added ? y_rss_added : y_rss);
    bytes_unit(p, added ? "peak RSS - base RSS" : "peak RSS");
    if (workspace) {
        panel *w = add_panel(&f, "declared: workspace (scratch the kind asks for)", n_axis(ss), "");
        w->logx = w->logy = w->ntics = true;
        add_set(w, cx->rd, set, nset, over_n, ss->x, y_workspace);
        bytes_unit(w, "workspace");
    }
    return finish(cx, ss, &f, "no series has a known peak RSS at 2 or more n", msg, msg_len);
}

static attn_status fig_throughput_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                       int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    const bool decode = strcmp(ss->mode, "decode") == 0;
    const bench_run *run = &cx->rd->run;
    begin(&f, cx, ss, "throughput_vs_n", decode ? "Decode throughput vs KV-cache length: bytes "
                                                  "read per second" : "Throughput vs sequence length",
          ss->idx, ss->n, BENCH_K_N);
    panel *p = add_panel(&f, "", n_axis(ss), decode ? "GB/s (q, k, v, out bytes / median time)"
                                                    : "GFLOP/s (useful flops / median time)");
    p->logx = p->ntics = p->yzero = true;
    add_set(p, cx->rd, set, nset, over_n, ss->x, decode ? y_gbytes : y_gflops);
    const double line = decode ? run->mem_bandwidth_gbs : run->sgemm_gflops;
    if (line > 0) {
        p->hline = line;
        if (decode) snprintf(p->hline_label, sizeof p->hline_label, "memory read bandwidth: %.1f GB/s", line);
        else snprintf(p->hline_label, sizeof p->hline_label, "OpenBLAS sgemm (n=2048): %.0f GFLOP/s", line);
    }
    return finish(cx, ss, &f, "every series has a single n (sweep --n with 2 or more values)", msg, msg_len);
}

static bool any_retrieval(const plot_ctx *cx, const int64_t *idx, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (cx->rd->pts[idx[i]].retrieval_queries > 0 && isfinite(cx->rd->pts[idx[i]].retrieval)) return true;
    return false;
}

static attn_status fig_accuracy_vs_n(plot_ctx *cx, const subset *ss, const bench_series *set,
                                     int64_t nset, char *msg, size_t msg_len)
{
    figure f;
    begin(&f, cx, ss, "accuracy_vs_n", "Accuracy vs sequence length (against exact float64 attention)",
          ss->idx, ss->n, BENCH_K_N);
    panel *p = add_panel(&f, "relative L2 error", n_axis(ss), "relative L2 error vs exact float64");
    p->logx = p->logy = p->ntics = true;
    add_set(p, cx->rd, set, nset, over_n, ss->x, y_rel_err);
    if (any_retrieval(cx, ss->idx, ss->n)) {
        panel *r = add_panel(&f, "retrieval (needle datasets)", n_axis(ss),
                             "fraction of planted queries retrieved");
        r->logx = r->ntics = r->yzero = true;
        add_set(r, cx->rd, set, nset, over_n, ss->x, y_retrieval);
    }
    return finish(cx, ss, &f, "no series has a finite error at 2 or more n", msg, msg_len);
}

/* The parameters swept in ss: names whose (normalized) value differs between two points of one
 * kind. Names go into names[0..*count) (at most max). */
static void swept_params(const plot_ctx *cx, const subset *ss, char names[][64], int *count, int max)
{
    const bench_run_data *rd = cx->rd;
    *count = 0;
    for (int64_t i = 0; i < ss->n; i++) {
        const int64_t a = ss->idx[i];
        const char *params = rd->params[a];
        for (const char *s = params; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
            const char *eq = strchr(s, '=');
            if (!eq || eq - s >= 64) break;
            char name[64], va[64], vb[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
            bool known = false;
            for (int k = 0; k < *count; k++) known |= strcmp(names[k], name) == 0;
            if (known || *count == max) continue;
            bench_param_value(params, name, va, sizeof va);
            for (int64_t j = 0; j < ss->n; j++) {
                const int64_t b = ss->idx[j];
                if (strcmp(rd->pts[a].kind, rd->pts[b].kind) != 0) continue;
                bench_param_value(rd->params[b], name, vb, sizeof vb);
                if (strcmp(va, vb) != 0) {
                    snprintf(names[(*count)++], 64, "%s", name);
                    break;
                }
            }
        }
    }
}

/* [a-z0-9_] only, for file names made from parameter names. */
static void file_safe(const char *in, char *out, size_t len)
{
    size_t w = 0;
    for (; *in && w + 1 < len; in++)
        out[w++] = (*in >= 'a' && *in <= 'z') || (*in >= '0' && *in <= '9') ? *in : '_';
    out[w] = '\0';
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* At most 4 of the subset's n, spread from the smallest to the largest, into ns; how many. */
static int spread_n(const bench_run_data *rd, const subset *ss, int64_t ns[4])
{
    int64_t *all = malloc((size_t)ss->n * sizeof *all), d = 0;
    if (!all) return 0;
    for (int64_t i = 0; i < ss->n; i++) all[i] = rd->pts[ss->idx[i]].kv_len;
    qsort(all, (size_t)ss->n, sizeof *all, by_value);
    for (int64_t i = 0; i < ss->n; i++)
        if (d == 0 || all[i] != all[d - 1]) all[d++] = all[i];
    const int k = d < 4 ? (int)d : 4;
    for (int i = 0; i < k; i++) ns[i] = all[k == 1 ? 0 : (int64_t)llround((double)i * (double)(d - 1) / (k - 1))];
    free(all);
    return k;
}

static attn_status fig_accuracy_vs_param(plot_ctx *cx, const subset *ss, const char *name,
                                         char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    int64_t ns[4];
    const int nn = spread_n(rd, ss, ns);
    for (int64_t i = 0; i < ss->n; i++) {
        char v[64];
        bench_param_value(rd->pts[ss->idx[i]].params, name, v, sizeof v);
        char *end;
        const double x = strtod(v, &end);
        bool shown_n = false;
        for (int k = 0; k < nn; k++) shown_n |= rd->pts[ss->idx[i]].kv_len == ns[k];
        if (!v[0] || *end || !shown_n) continue;
        ss->x[ss->idx[i]] = x;
        idx[m++] = ss->idx[i];
    }
    const bench_group_by by = {BENCH_K_ALL, name};
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = bench_series_group(rd, idx, m, by, ss->x, &set, &nset);
    if (st) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    figure f;
    char fname[96], safe[64], title[160];
    file_safe(name, safe, sizeof safe);
    snprintf(fname, sizeof fname, "accuracy_vs_%s", safe);
    snprintf(title, sizeof title, "Accuracy vs parameter %s%s", name,
             nn == 4 ? " (at 4 of the measured n)" : "");
    begin(&f, cx, ss, fname, title, idx, m, BENCH_K_N | BENCH_K_PARAMS);
    panel *p = add_panel(&f, "relative L2 error", name, "relative L2 error vs exact float64");
    double lo = INFINITY, hi = 0;
    for (int64_t i = 0; i < m; i++) lo = fmin(lo, ss->x[idx[i]]), hi = fmax(hi, ss->x[idx[i]]);
    p->logx = lo > 0 && hi >= 4 * lo;
    p->logy = true;
    p->ntics = p->logx; /* ticks at the measured values */
    if (!st) add_set(p, rd, set, nset, by, ss->x, y_rel_err);
    if (!st && any_retrieval(cx, idx, m)) {
        panel *r = add_panel(&f, "retrieval (needle datasets)", name, "fraction of planted queries retrieved");
        r->logx = r->ntics = p->logx;
        r->yzero = true;
        add_set(r, rd, set, nset, by, ss->x, y_retrieval);
    }
    if (!st) st = finish(cx, ss, &f, "no series has a finite error at 2 or more values", msg, msg_len);
    else figure_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* Error vs time at the largest n where a kind was measured at 2 or more parameter values: one
 * point per parameter value (labelled with the swept values), one line per kind and setting. */
static attn_status fig_error_vs_cost(plot_ctx *cx, const subset *ss, char names[][64], int nnames,
                                     char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    const bench_group_by by = {BENCH_K_ALL & ~BENCH_K_PARAMS, NULL};
    bench_series *set = NULL;
    int64_t nset = 0, best_n = 0;
    for (int64_t i = 0; i < ss->n; i++) ss->x[ss->idx[i]] = rd->pts[ss->idx[i]].time_median_s * 1e3;
    attn_status st = bench_series_group(rd, ss->idx, ss->n, by, ss->x, &set, &nset);
    for (int64_t k = 0; !st && k < nset; k++)
        if (set[k].n >= 2 && rd->pts[set[k].idx[0]].kv_len > best_n) best_n = rd->pts[set[k].idx[0]].kv_len;
    bench_series_free(set, nset);
    set = NULL, nset = 0;
    if (st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    if (best_n == 0) {
        skip(cx, ss, "error_vs_cost", "no kind was measured at 2 or more parameter values at one n");
        return ATTN_OK;
    }
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    if (!idx) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    for (int64_t i = 0; i < ss->n; i++)
        if (rd->pts[ss->idx[i]].kv_len == best_n) idx[m++] = ss->idx[i];
    st = bench_series_group(rd, idx, m, by, ss->x, &set, &nset);
    if (st) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title, "Error vs cost at n = %s: one point per parameter value",
             bench_format_count((double)best_n, c, sizeof c));
    begin(&f, cx, ss, "error_vs_cost", title, idx, m, BENCH_K_PARAMS);
    panel *p = add_panel(&f, "", "median time per forward (ms)", "relative L2 error vs exact float64");
    p->logx = p->logy = true;
    const bench_group_by no_causal = {by.fields & ~BENCH_K_CAUSAL, NULL};
    for (int64_t k = 0; !st && k < nset; k++) {
        /* labels among all series (as add_set makes them), and the swept values beside each point */
        char label[LABEL_LEN], key[LABEL_LEN];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
        if (!add_series(p, rd, &set[k], ss->x, y_rel_err, label, key, rd->pts[set[k].idx[0]].causal != 0))
            continue;
        pseries *ps = &p->s[p->ns - 1];
        bool twin = false; /* a causal series whose non-causal twin carries the tags */
        for (int64_t o = 0; o < nset && rd->pts[set[k].idx[0]].causal; o++)
            twin |= o != k && !rd->pts[set[o].idx[0]].causal &&
                    bench_same_settings(rd, set[o].idx[0], set[k].idx[0], no_causal);
        if (set[k].n < 2 || twin || !(ps->tag = calloc((size_t)ps->n, sizeof *ps->tag))) continue;
        for (int64_t i = 0, j = 0; i < set[k].n && j < ps->n; i++) {
            const bench_point *pt = &rd->pts[set[k].idx[i]];
            if (!isfinite(pt->rel_err) || !(pt->rel_err > 0) || !(pt->time_median_s > 0)) continue;
            int w = 0;
            for (int q = 0; q < nnames && w < 48; q++) {
                char v[64];
                bench_param_value(rd->params[set[k].idx[i]], names[q], v, sizeof v);
                if (v[0]) w += snprintf(ps->tag[j] + w, 48 - (size_t)w, "%s%s", w ? "," : "", v);
            }
            for (char *t = ps->tag[j]; *t; t++)
                if (*t == '"' || *t == '\\') *t = '?';
            j++;
        }
    }
    if (!st && p->ns > 0) st = draw(cx, &f, msg, msg_len);
    else if (!st) skip(cx, ss, "error_vs_cost", "no point has a finite error");
    figure_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* Time vs heads (axis BENCH_K_HEADS) or vs kv_heads (BENCH_K_KV_HEADS), at the largest n where
 * some series has 2 or more values of it. */
static attn_status fig_time_vs_heads(plot_ctx *cx, const subset *ss, unsigned axis, char *msg,
                                     size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    const bool kv = axis == BENCH_K_KV_HEADS;
    const char *name = kv ? "time_vs_kv_heads" : "time_vs_heads";
    /* vs heads, a series follows its kind's kv_heads rule (MHA: = heads; mqa: 1) unless the run
     * swept kv_heads too, then one series per kv_heads value */
    bench_group_by by = {BENCH_K_ALL & ~BENCH_K_N & ~axis & ~(kv ? 0u : (unsigned)BENCH_K_KV_HEADS), NULL};
    for (int64_t i = 0; i < ss->n; i++)
        ss->x[ss->idx[i]] = (double)(kv ? rd->pts[ss->idx[i]].kv_heads : rd->pts[ss->idx[i]].heads);
    int64_t best_n = 0;
    bench_series *set = NULL;
    int64_t nset = 0;
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    attn_status st = idx ? ATTN_OK : ATTN_EFAIL;
    for (int attempt = 0; !st && attempt < 2; attempt++) {
        bench_group_by with_n = {by.fields | BENCH_K_N, NULL};
        st = bench_series_group(rd, ss->idx, ss->n, with_n, ss->x, &set, &nset);
        bool dup = false;
        for (int64_t k = 0; !st && k < nset; k++) {
            int64_t distinct = 1;
            for (int64_t i = 1; i < set[k].n; i++) {
                const bool same = ss->x[set[k].idx[i]] == ss->x[set[k].idx[i - 1]];
                distinct += !same;
                dup |= same;
            }
            if (distinct >= 2 && rd->pts[set[k].idx[0]].kv_len > best_n) best_n = rd->pts[set[k].idx[0]].kv_len;
        }
        bench_series_free(set, nset);
        set = NULL, nset = 0;
        if (!dup || kv) break;
        by.fields |= BENCH_K_KV_HEADS, best_n = 0;
    }
    if (st) {
        free(idx);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    }
    if (best_n == 0) {
        skip(cx, ss, name, kv ? "no series was measured at 2 or more kv_heads (sweep --kv-heads 1,2,8)"
                              : "no series was measured at 2 or more heads (sweep --heads 4,8,16)");
        free(idx);
        return ATTN_OK;
    }
    for (int64_t i = 0; i < ss->n; i++)
        if (rd->pts[ss->idx[i]].kv_len == best_n) idx[m++] = ss->idx[i];
    st = bench_series_group(rd, idx, m, by, ss->x, &set, &nset);
    if (st) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title, kv ? "Time vs KV heads (MHA to GQA to MQA) at n = %s"
                                     : "Time vs query heads at n = %s",
             bench_format_count((double)best_n, c, sizeof c));
    begin(&f, cx, ss, name, title, idx, m, axis | (kv ? 0u : (unsigned)BENCH_K_KV_HEADS));
    panel *p = add_panel(&f, "", kv ? "key/value heads Hkv" : "query heads H",
                         strcmp(ss->mode, "decode") == 0 ? "median time per decode step (ms)"
                                                         : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    if (!st) add_set(p, rd, set, nset, by, ss->x, y_time_ms);
    for (int s = 0; !st && !kv && s < p->ns; s++) { /* how each line sets its KV heads */
        const bench_series *src = set;
        while (src->idx[0] != p->s[s].first) src++;
        bool mha = true, mqa = true, ratio = true;
        const bench_point *a = &rd->pts[src->idx[0]];
        for (int64_t i = 0; i < src->n; i++) {
            const bench_point *b = &rd->pts[src->idx[i]];
            mha &= b->kv_heads == b->heads, mqa &= b->kv_heads == 1;
            ratio &= b->heads * a->kv_heads == a->heads * b->kv_heads;
        }
        char rule[48] = "";
        if (mha) snprintf(rule, sizeof rule, " (Hkv = H)");
        else if (mqa) snprintf(rule, sizeof rule, " (Hkv = 1)");
        else if (ratio) snprintf(rule, sizeof rule, " (Hkv = H/%lld)", (long long)(a->heads / a->kv_heads));
        const size_t used = strlen(p->s[s].label);
        snprintf(p->s[s].label + used, sizeof p->s[s].label - used, "%s", rule);
    }
    if (!st) st = draw(cx, &f, msg, msg_len);
    figure_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

/* Which figures plot_figures draws. */
enum { FIG_COST = 1, FIG_ACCURACY = 2 };
/* More lines than this over n with causal 0 and 1: one figure per causal value. */
enum { MAX_LINES = 12 };

/* The figures `which` of subset ss. */
static attn_status plot_figures(plot_ctx *cx, subset *ss, unsigned which, char *msg, size_t msg_len)
{
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = series_over_n(cx, ss, &set, &nset);
    if (st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bool over_n_curve = false;
    for (int64_t k = 0; k < nset; k++)
        for (int64_t i = 1; i < set[k].n; i++)
            over_n_curve |= cx->rd->pts[set[k].idx[i]].kv_len != cx->rd->pts[set[k].idx[0]].kv_len;
    if (over_n_curve) {
        if (which & FIG_COST) {
            st = fig_time_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_memory_vs_n(cx, ss, set, nset, msg, msg_len);
            if (!st) st = fig_throughput_vs_n(cx, ss, set, nset, msg, msg_len);
        }
        if (!st && which & FIG_ACCURACY) st = fig_accuracy_vs_n(cx, ss, set, nset, msg, msg_len);
    } else {
        skip(cx, ss, which == FIG_COST ? "{time,memory,throughput}_vs_n"
                     : which == FIG_ACCURACY ? "accuracy_vs_n" : "{time,memory,throughput,accuracy}_vs_n",
             "every series has a single n (sweep --n with 2 or more values)");
    }
    bench_series_free(set, nset);
    if (!st && which & FIG_ACCURACY) {
        char names[16][64];
        int nnames = 0;
        swept_params(cx, ss, names, &nnames, 16);
        for (int k = 0; !st && k < nnames; k++) st = fig_accuracy_vs_param(cx, ss, names[k], msg, msg_len);
        if (!st && nnames) st = fig_error_vs_cost(cx, ss, names, nnames, msg, msg_len);
    }
    if (!st && which & FIG_COST) st = fig_time_vs_heads(cx, ss, BENCH_K_HEADS, msg, msg_len);
    if (!st && which & FIG_COST) st = fig_time_vs_heads(cx, ss, BENCH_K_KV_HEADS, msg, msg_len);
    return st;
}

/* The points of ss that share the settings `fields` with point like, into sub (its idx has room
 * for ss->n). */
static void narrow(const plot_ctx *cx, const subset *ss, subset *sub, int64_t like, unsigned fields)
{
    const bench_group_by by = {fields, NULL};
    sub->n = 0;
    for (int64_t i = 0; i < ss->n; i++)
        if (bench_same_settings(cx->rd, ss->idx[i], like, by)) sub->idx[sub->n++] = ss->idx[i];
}

/* ss's figures `which`; with causal 0 and 1 and more than MAX_LINES series over n, once per
 * causal value (suffix _noncausal, _causal). */
static attn_status plot_by_causal(plot_ctx *cx, subset *ss, unsigned which, char *msg, size_t msg_len)
{
    int64_t with[2] = {-1, -1}; /* a point of each causal value */
    for (int64_t i = 0; i < ss->n; i++) with[cx->rd->pts[ss->idx[i]].causal != 0] = ss->idx[i];
    bench_series *set = NULL;
    int64_t nset = 0;
    if (with[0] < 0 || with[1] < 0) return plot_figures(cx, ss, which, msg, msg_len);
    if (series_over_n(cx, ss, &set, &nset)) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bench_series_free(set, nset);
    if (nset <= MAX_LINES) return plot_figures(cx, ss, which, msg, msg_len);
    subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    attn_status st = ATTN_OK;
    for (int c = 0; !st && c < 2; c++) {
        narrow(cx, ss, &sub, with[c], BENCH_K_CAUSAL);
        snprintf(sub.suffix, sizeof sub.suffix, "%s%s", ss->suffix, c ? "_causal" : "_noncausal");
        snprintf(sub.title, sizeof sub.title, "%s%s", ss->title, c ? " (causal)" : " (non-causal)");
        st = plot_figures(cx, &sub, which, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* Every figure of one mode. With several datasets, the time, memory, throughput and heads
 * figures show only the first dataset of the run (times hardly depend on the values; the note
 * says which datasets are left out), and the accuracy figures come once per dataset (suffix
 * _<dataset>). */
static attn_status plot_mode(plot_ctx *cx, subset *ss, char *msg, size_t msg_len)
{
    const unsigned ds = BENCH_K_DATASET;
    int64_t first[64]; /* the first point of each dataset */
    int nds = 0;
    for (int64_t i = 0; i < ss->n && nds < 64; i++) {
        int k = 0;
        while (k < nds && !bench_same_settings(cx->rd, first[k], ss->idx[i], (bench_group_by){ds, NULL})) k++;
        if (k == nds) first[nds++] = ss->idx[i];
    }
    if (nds <= 1) return plot_by_causal(cx, ss, FIG_COST | FIG_ACCURACY, msg, msg_len);
    /* a dataset's name, with its params when another dataset has the same name */
    char text[64][160];
    for (int k = 0; k < nds; k++) {
        const bench_point *pt = &cx->rd->pts[first[k]];
        bool twin = false;
        for (int o = 0; o < nds; o++) twin |= o != k && strcmp(cx->rd->pts[first[o]].dataset, pt->dataset) == 0;
        snprintf(text[k], sizeof text[k], "%s%s%s%s", pt->dataset, twin ? "(" : "",
                 twin ? pt->dataset_params : "", twin ? ")" : "");
    }
    subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    narrow(cx, ss, &sub, first[0], ds);
    int w = snprintf(sub.note, sizeof sub.note, "timings and memory on %s only (they hardly depend "
                     "on the data); the run also has ", text[0]);
    for (int k = 1; k < nds && w < (int)sizeof sub.note; k++)
        w += snprintf(sub.note + w, sizeof sub.note - (size_t)w, "%s%s", k > 1 ? ", " : "", text[k]);
    snprintf(sub.title, sizeof sub.title, " on %s", text[0]);
    attn_status st = plot_by_causal(cx, &sub, FIG_COST, msg, msg_len);
    sub.note[0] = '\0';
    for (int k = 0; !st && k < nds; k++) {
        narrow(cx, ss, &sub, first[k], ds);
        char safe[64];
        file_safe(cx->rd->pts[first[k]].dataset, safe, sizeof safe);
        int same_name = 0; /* earlier datasets of the same name: _needle, _needle_2 */
        for (int o = 0; o < k; o++)
            same_name += strcmp(cx->rd->pts[first[o]].dataset, cx->rd->pts[first[k]].dataset) == 0;
        if (same_name) snprintf(sub.suffix, sizeof sub.suffix, "%s_%s_%d", ss->suffix, safe, same_name + 1);
        else snprintf(sub.suffix, sizeof sub.suffix, "%s_%s", ss->suffix, safe);
        snprintf(sub.title, sizeof sub.title, " on %s", text[k]);
        st = plot_by_causal(cx, &sub, FIG_ACCURACY, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* mkdir -p */
static attn_status make_dirs(const char *dir, char *msg, size_t msg_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *s = path + 1;; s++) {
        const bool end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot create %s: %s (choose another --out)",
                                 path, strerror(errno));
            if (end) break;
            *s = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is not a directory (choose another --out)", dir);
    if (access(dir, W_OK | X_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot write in %s: %s (choose another --out)",
                         dir, strerror(errno));
    return ATTN_OK;
}

attn_status bench_plot_results(const char *path, int64_t run_id, const char *dir,
                               const char *format, FILE *out, char *msg, size_t msg_len)
{
    if (!bench_gnuplot_format_ok(format))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--format: '%s' is not png, svg or pdf", format);
    bench_run_data rd;
    attn_status st = bench_run_load(path, run_id, &rd, msg, msg_len);
    if (st) return st;
    plot_ctx cx = {.rd = &rd, .dir = dir, .format = format, .out = out};
    st = make_dirs(dir, msg, msg_len);
    if (!st) st = bench_gnuplot_open(&cx.gp, msg, msg_len);
    subset ss = {0};
    ss.idx = malloc((size_t)rd.n * sizeof *ss.idx);
    ss.x = malloc((size_t)rd.n * sizeof *ss.x);
    if (!st && (!ss.idx || !ss.x)) st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    /* modes in order of first appearance */
    for (int64_t first = 0; !st && first < rd.n; first++) {
        bool seen = false;
        for (int64_t e = 0; e < first && !seen; e++) seen = strcmp(rd.pts[e].mode, rd.pts[first].mode) == 0;
        if (seen) continue;
        ss.mode = rd.pts[first].mode;
        ss.n = 0;
        for (int64_t p = 0; p < rd.n; p++)
            if (strcmp(rd.pts[p].mode, ss.mode) == 0) ss.idx[ss.n++] = p;
        st = plot_mode(&cx, &ss, msg, msg_len);
    }
    if (!st && cx.written == 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "run %lld of %s: nothing to draw (%d figures "
                       "skipped%s)", (long long)rd.run.run_id, path, cx.skipped,
                       out ? ", see above" : ": sweep --n with 2 or more values");
    else if (!st)
        fprintf(out ? out : stdout, "plots: %d figure%s of run %lld in %s%s\n", cx.written, cx.written == 1 ? "" : "s", (long long)rd.run.run_id, dir,
                rd.failed ? " (failed points left out)" : "");
    free(ss.idx);
    free(ss.x);
    bench_gnuplot_close(&cx.gp);
    bench_run_data_free(&rd);
    return st;
}

/* plots/ under $ATTNBENCH_HOME (set by ./bench) or the current directory. */
void bench_default_plot_dir(char *dir, size_t len)
{
    const char *home = getenv("ATTNBENCH_HOME");
    snprintf(dir, len, "%s/plots", home && *home ? home : ".");
}

int bench_cmd_plot(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *out_s = NULL, *format = "png";
    const bench_opt opts[] = {
        {"--out", "DIR", "where the figures go (default: plots/ under the bench directory)", &out_s},
        {"--run", "ID", "the run to draw (default: the last run in the file)", &run_s},
        {"--format", "FMT", "png (default, 800x500), svg or pdf", &format},
        {"--help", NULL, "this help", &help},
    };
    const char *file = NULL;
    char msg[ATTN_MSG_LEN];
    int64_t run_id = 0;
    if (bench_parse_file_args(argc, argv, opts, sizeof opts / sizeof opts[0], "plot", &file,
                              &run_s, &run_id, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]",
            "Draws one figure per question about a run with gnuplot, for each mode measured:\n"
            "time vs n (log-log, with fitted power laws and their exponents), memory vs n\n"
            "(measured RSS and declared workspace), throughput vs n (against sgemm or memory\n"
            "bandwidth), accuracy vs n, accuracy vs each swept kind parameter, error vs time,\n"
            "and time vs heads and kv_heads. Figures the run has no data for are skipped, with\n"
            "the reason. Prints the files written.",
            opts, sizeof opts / sizeof opts[0]);
        return 0;
    }
    if (!file) return bench_fail(ATTN_EINVAL, "bench plot needs a results file: bench plot FILE.h5");
    char dir[4096];
    if (out_s) snprintf(dir, sizeof dir, "%s", out_s);
    else bench_default_plot_dir(dir, sizeof dir);
    attn_status st = bench_plot_results(file, run_id, dir, format, stdout, msg, sizeof msg);
    return st ? bench_fail(st, msg) : 0;
}
