/*
 * figure.c — the figure model of `bench plot` (figure.h) and its drawing: figures, panels and
 * series in memory, each kind's colour, marker and dash (the same in every figure), and the
 * gnuplot script that lays out the header, the panels and the legend, chooses axis ranges and
 * ticks, draws error bars and fitted laws, and renders the file through gnuplot.h. Which figures
 * a run gets is the registry's (plot.h, report/figures/).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figure.h"

enum { PAGE_W = 800, PAGE_H = 500, PANEL2_W = 1150, MAX_H = 900 };
static const double ROW_PX = 16.5; /* a legend row at font 9, spacing 1.15 (pngcairo) */
/* Widths of a character (pixels, generous) at the title's font 13 and the subtitle's font 8. */
static const double TITLE_CHAR_PX = 10.2, SUB_CHAR_PX = 6.0;

/* ---- figures in memory ---- */

void bench_fig_free(figure *f)
{
    for (int p = 0; p < f->np; p++) {
        for (int s = 0; s < f->p[p].ns; s++) {
            pseries *ps = &f->p[p].s[s];
            free(ps->x);
            free(ps->y);
            free(ps->lo);
            free(ps->hi);
            free(ps->tag);
        }
        free(f->p[p].s);
    }
    memset(f, 0, sizeof *f);
}

bool bench_fig_add_ref(panel *p, double y, const char *label)
{
    if (p->nrefs == MAX_REFS || !isfinite(y)) return false;
    p->refs[p->nrefs] = y;
    snprintf(p->ref_labels[p->nrefs++], sizeof p->ref_labels[0], "%s", label);
    return true;
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

/* A new empty series at the end of panel p with room for n points (and bars), or NULL. */
static pseries *new_series(panel *p, int64_t n, bool bars)
{
    pseries *grown = realloc(p->s, (size_t)(p->ns + 1) * sizeof *grown);
    if (!grown) return NULL;
    p->s = grown;
    pseries *ps = &p->s[p->ns];
    memset(ps, 0, sizeof *ps);
    const size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(double);
    ps->x = malloc(bytes), ps->y = malloc(bytes);
    if (bars) ps->lo = malloc(bytes), ps->hi = malloc(bytes);
    if (!ps->x || !ps->y || (bars && (!ps->lo || !ps->hi))) {
        free(ps->x), free(ps->y), free(ps->lo), free(ps->hi);
        return NULL;
    }
    return ps;
}

/* Keep series ps (the last of p) if it has points: label, kind and its first point. */
static pseries *keep_series(panel *p, pseries *ps, const bench_run_data *rd, int64_t first,
                            const char *label, const char *color_key, bool causal)
{
    if (ps->n == 0) {
        free(ps->x), free(ps->y), free(ps->lo), free(ps->hi);
        return NULL;
    }
    snprintf(ps->label, sizeof ps->label, "%s", label);
    snprintf(ps->color_key, sizeof ps->color_key, "%s", color_key);
    snprintf(ps->kind, sizeof ps->kind, "%s", rd->pts[first].kind);
    ps->causal = causal;
    ps->first = first;
    p->ns++;
    return ps;
}

/* Can (x, y) and its bar [lo, hi] be drawn on p's axes? A bar that cannot is dropped (lo = hi
 * = y), never the point. */
static bool drawable(const panel *p, double x, double y, double *lo, double *hi)
{
    if (!isfinite(y) || !isfinite(x) || (p->logy && !(y > 0)) || (p->logx && !(x > 0)))
        return false;
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > y || *hi < y || (p->logy && !(*lo > 0)))
        *lo = *hi = y;
    return true;
}

pseries *bench_fig_add_xy(panel *p, const bench_run_data *rd, int64_t first, int64_t n,
                          const double *x, const double *y, const double *lo, const double *hi,
                          const char *label, const char *color_key, bool causal)
{
    pseries *ps = new_series(p, n, lo != NULL);
    if (!ps) return NULL;
    for (int64_t i = 0; i < n; i++) {
        double l = lo ? lo[i] : y[i], h = hi ? hi[i] : y[i];
        if (!drawable(p, x[i], y[i], &l, &h)) continue;
        ps->x[ps->n] = x[i], ps->y[ps->n] = y[i];
        if (ps->lo) ps->lo[ps->n] = l, ps->hi[ps->n] = h;
        ps->n++;
    }
    return keep_series(p, ps, rd, first, label, color_key, causal);
}

int64_t bench_fig_add_series(panel *p, const bench_run_data *rd, const bench_series *s,
                             const double *x, y_of y, bar_of bar, const char *label,
                             const char *color_key, bool causal)
{
    pseries *ps = new_series(p, s->n, bar != NULL);
    if (!ps) return 0;
    for (int64_t i = 0; i < s->n; i++) {
        const int64_t pt = s->idx[i];
        const double xv = x[pt], yv = y(&rd->pts[pt]);
        double l = yv, h = yv;
        if (bar && !bar(rd, pt, &l, &h)) l = h = yv;
        if (!drawable(p, xv, yv, &l, &h)) continue;
        ps->x[ps->n] = xv, ps->y[ps->n] = yv;
        if (ps->lo) ps->lo[ps->n] = l, ps->hi[ps->n] = h;
        ps->n++;
    }
    ps = keep_series(p, ps, rd, s->idx[0], label, color_key, causal);
    return ps ? ps->n : 0;
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
        for (int64_t i = 0; i < p->s[s].n; i++) {
            p->s[s].y[i] /= div;
            if (p->s[s].lo) p->s[s].lo[i] /= div, p->s[s].hi[i] /= div;
        }
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

/* Add every series of set to panel p (labels computed among the set with `by`). */
void bench_fig_add_set(panel *p, const bench_run_data *rd, const bench_series *set, int64_t nset,
                       bench_group_by by, const double *x, y_of y, bar_of bar)
{
    bench_group_by no_causal = {by.fields & ~BENCH_K_CAUSAL, by.except_param};
    for (int64_t k = 0; k < nset; k++) {
        char label[LABEL_LEN], key[LABEL_LEN];
        bench_series_label(rd, set, nset, k, by, label, sizeof label);
        bench_series_label(rd, set, nset, k, no_causal, key, sizeof key);
        bench_fig_add_series(p, rd, &set[k], x, y, bar, label, key,
                             rd->pts[set[k].idx[0]].causal != 0);
    }
}

/* ---- styles: one per kind, by its name ---- */

static const char *const palette[] = {
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B",
    "#7F7F7F", "#9467BD", "#17BECF", "#B8860B", "#E6194B", "#808000", "#000075", "#3CB44B",
    "#911EB4", "#F58231", "#469990", "#9A6324", "#800000", "#F032E6", "#008080", "#AA6E28",
    "#4363D8", "#6B8E23", "#C71585", "#2F4F4F", "#B22222", "#5F9EA0", "#8B008B", "#D2691E",
};
enum { NCOLORS = sizeof palette / sizeof palette[0] };

/* Shapes: gnuplot's open and filled point types (square, circle, triangle, inverted triangle,
 * diamond, pentagon); dash patterns in line widths. */
static const int open_pt[BENCH_SHAPES] = {4, 6, 8, 10, 12, 14};
static const int filled_pt[BENCH_SHAPES] = {5, 7, 9, 11, 13, 15};
static const char *const dashes[BENCH_DASHES] = {
    "1", "(7,4)", "(1.5,3)", "(9,3,1.5,3)", "(9,3,1.5,3,1.5,3)", "(18,5)"};

/* The kinds this build knows (and ring, being written): colour, shape, dash. Groups that lie on
 * top of each other differ in both shape and dash: full/mqa/gqa/ring/prefix/sigmoid (exact, nearly,
 * or dense), window/global/dilated/fixed/sink (local), random/bigbird/strided/document,
 * linear/linformer/nystrom/reformer. */
static const struct {
    const char *kind;
    bench_kind_style style;
} known_styles[] = {
    {"full", {0, 1, 0}},      {"mqa", {1, 0, 1}},       {"gqa", {2, 2, 2}},
    {"window", {3, 4, 3}},    {"global", {4, 3, 4}},    {"random", {5, 0, 3}},
    {"strided", {6, 2, 5}},   {"fixed", {7, 0, 0}},     {"bigbird", {8, 5, 1}},
    {"linear", {9, 4, 2}},    {"dilated", {10, 5, 5}},  {"linformer", {11, 1, 4}},
    {"nystrom", {12, 5, 0}},  {"reformer", {13, 0, 5}}, {"additive", {14, 2, 3}},
    {"bilinear", {15, 4, 5}}, {"ring", {16, 3, 3}},     {"sink", {17, 1, 2}},
    {"document", {18, 3, 1}}, {"prefix", {19, 5, 2}},   {"sigmoid", {20, 2, 4}},
};
enum { NKNOWN = sizeof known_styles / sizeof known_styles[0] };

/* A registered kind without a row above gets the next colour after the table's, by its place
 * among such kinds in the registry, and a shape and dash spread likewise: a new kind needs no row
 * here while the palette lasts. Any other name (a kind of another build, in a results file): a
 * hash of the name, the same in every figure. */
bench_kind_style bench_fig_kind_style(const char *kind)
{
    for (int k = 0; k < NKNOWN; k++)
        if (strcmp(known_styles[k].kind, kind) == 0) return known_styles[k].style;
    for (int n = 0, extra = 0; n < attn_kind_count(); n++) {
        const char *name = attn_kind_at(n)->name;
        bool listed = false;
        for (int k = 0; k < NKNOWN && !listed; k++)
            listed = strcmp(known_styles[k].kind, name) == 0;
        if (listed) continue;
        if (strcmp(name, kind) == 0 && NKNOWN + extra < NCOLORS)
            return (bench_kind_style){NKNOWN + extra, (extra + 1) % BENCH_SHAPES,
                                      (extra + 3) % BENCH_DASHES};
        extra++;
    }
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)kind; *c; c++) h = (h ^ *c) * 16777619u;
    return (bench_kind_style){(int)(h % NCOLORS), (int)(h / NCOLORS % BENCH_SHAPES),
                              (int)(h / NCOLORS / BENCH_SHAPES % BENCH_DASHES)};
}

static int by_kind_then_variant(const void *a, const void *b)
{
    const pseries *x = a, *y = b;
    const bench_kind_style sx = bench_fig_kind_style(x->kind), sy = bench_fig_kind_style(y->kind);
    if (sx.color != sy.color) return sx.color - sy.color;
    if (strcmp(x->kind, y->kind) != 0) return strcmp(x->kind, y->kind);
    if (x->variant != y->variant) return x->variant - y->variant;
    return (int)x->causal - (int)y->causal;
}

/* Each series its kind's style; a further series of a kind in the figure (variant v: one per
 * distinct colour key, the label without causal) the next shape and dash. Each panel's series
 * then in kind order, a non-causal series before its causal twin. */
static void assign_styles(figure *f)
{
    const char *keys[256], *key_kind[256];
    int nkeys = 0, key_variant[256];
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++) {
            pseries *ps = &f->p[p].s[s];
            int k = 0;
            while (k < nkeys && strcmp(keys[k], ps->color_key) != 0) k++;
            if (k == nkeys && nkeys < 256) {
                key_variant[k] = 0;
                for (int o = 0; o < nkeys; o++)
                    key_variant[k] += strcmp(key_kind[o], ps->kind) == 0;
                keys[nkeys] = ps->color_key, key_kind[nkeys++] = ps->kind;
            }
            ps->variant = k < nkeys ? key_variant[k] : 0;
            ps->style = bench_fig_kind_style(ps->kind);
            ps->style.shape = (ps->style.shape + ps->variant) % BENCH_SHAPES;
            ps->style.dash = (ps->style.dash + ps->variant) % BENCH_DASHES;
        }
    for (int p = 0; p < f->np; p++)
        qsort(f->p[p].s, (size_t)f->p[p].ns, sizeof *f->p[p].s, by_kind_then_variant);
}

/* ---- gnuplot script ---- */

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

/* Write the data of series ps (x, y, bar low, bar high, tag) to a file of the private directory;
 * its quoted path into path. */
static bool write_data(bench_gnuplot *gp, const pseries *ps, char *path, size_t len)
{
    FILE *f = bench_gnuplot_data(gp, path, len);
    if (!f) return false;
    for (int64_t i = 0; i < ps->n; i++) {
        fprintf(f, "%.17g %.17g %.17g %.17g", ps->x[i], ps->y[i], ps->lo ? ps->lo[i] : ps->y[i],
                ps->hi ? ps->hi[i] : ps->y[i]);
        if (ps->tag) fprintf(f, " \"%s\"", ps->tag[i]); /* tags are numbers and names */
        fprintf(f, "\n");
    }
    return fclose(f) == 0;
}

/* Widen [*lo, *hi] to hold v. */
static void hold(double v, double *lo, double *hi)
{
    if (isfinite(v)) *lo = fmin(*lo, v), *hi = fmax(*hi, v);
}

/* "[lo:hi]" around the panel's x (or y) values, bars and fitted lines with a 6 % margin (on log
 * axes, of the log range), rather than gnuplot's widening to whole decades. */
static void axis_range(const panel *p, bool x, char *buf, size_t len, double *from, double *to)
{
    *from = *to = NAN;
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < p->ns; s++) {
        const pseries *ps = &p->s[s];
        const bool bars = ps->lo && ps->xbars == x;
        for (int64_t i = 0; i < ps->n; i++) {
            hold(x ? ps->x[i] : ps->y[i], &lo, &hi);
            if (bars) hold(ps->lo[i], &lo, &hi), hold(ps->hi[i], &lo, &hi);
        }
        for (int k = 0; k < ps->nfit && !x; k++) {
            const fit_line *l = &ps->fit[k];
            hold(l->c * pow(l->x0, l->k), &lo, &hi), hold(l->c * pow(l->x1, l->k), &lo, &hi);
        }
    }
    if (!x && !isnan(p->hline)) hold(p->hline, &lo, &hi);
    for (int r = 0; r < p->nrefs && !x; r++) hold(p->refs[r], &lo, &hi);
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

/* The legend's rows below the series: a panel's reference line, then what the lines and the
 * bars are (each text once), into rows[]; how many. */
static int extra_rows(const figure *f, const char *rows[], int max)
{
    int n = 0;
    if (f->fits[0] && n < max) rows[n++] = f->fits;
    for (int p = 0; p < f->np; p++) {
        bool dup = !f->p[p].bars[0];
        for (int k = 0; k < n && !dup; k++) dup = strcmp(rows[k], f->p[p].bars) == 0;
        if (!dup && n < max) rows[n++] = f->p[p].bars;
    }
    return n;
}

static int max_label(const figure *f)
{
    int w = 0;
    for (int s = 0; s < f->p[0].ns; s++) {
        /* the suffix's markup ({, }, ^) takes no room, and superscripts are small */
        const int n = (int)(strlen(f->p[0].s[s].label) + strlen(f->p[0].s[s].suffix) * 0.8);
        if (n > w) w = n;
    }
    if (!isnan(f->p[0].hline) && (int)strlen(f->p[0].hline_label) > w)
        w = (int)strlen(f->p[0].hline_label);
    for (int r = 0; r < f->p[0].nrefs; r++)
        if ((int)strlen(f->p[0].ref_labels[r]) > w) w = (int)strlen(f->p[0].ref_labels[r]);
    const char *rows[MAX_PANELS + 1];
    for (int k = extra_rows(f, rows, MAX_PANELS + 1); k-- > 0;)
        if ((int)strlen(rows[k]) > w) w = (int)strlen(rows[k]);
    return w;
}

enum { MAX_HEAD = 8, HEAD_LEN = 512 };

/* Where a figure's parts go: page size, header lines, panel positions (fractions of the page)
 * and the legend. */
typedef struct layout {
    int width, height, rows;     /* pixels; legend rows */
    double left, right, gap, pw; /* panel 0's left edge, the legend's, between panels, a panel */
    double top_px;               /* the panels' top edge, pixels from the top */
    bool mixed; /* causal and non-causal series: filled markers for the causal ones */
    char head[MAX_HEAD][HEAD_LEN]; /* title lines, then subtitle and note lines */
    int ntitle, nhead;
} layout;

/* Break text into lines of at most width characters, at "  |  " where one is near the end of a
 * line, else after ", " or "; ", else at a space; appended to L->head. */
static void wrap(layout *L, const char *text, int width)
{
    while (*text == ' ') text++;
    while (*text && L->nhead < MAX_HEAD) {
        int take = (int)strlen(text);
        if (take > width) {
            int cut = -1;
            for (int i = width - 5; i >= width * 2 / 5 && cut < 0; i--)
                if (strncmp(text + i, "  |  ", 5) == 0) cut = i;
            for (int i = width - 1; i > width / 3 && cut < 0; i--)
                if ((text[i] == ',' || text[i] == ';') && text[i + 1] == ' ') cut = i + 1;
            for (int i = width; i > width / 3 && cut < 0; i--)
                if (text[i] == ' ') cut = i;
            take = cut > 0 ? cut : width;
        }
        snprintf(L->head[L->nhead++], HEAD_LEN, "%.*s", take, text);
        text += take;
        while (*text == ' ' || *text == '|') text++;
    }
}

/* The legend lists panel 0's series, its reference line and the rows saying what lines and bars
 * are, every one of them: to the right of the panels, as wide as its longest entry, in one column
 * while the page can grow to MAX_H to hold it, else in two. The page widens rather than squeeze
 * the panels below 500 pixels each; the header's lines are wrapped to the page's width and push
 * the panels down. */
static layout plan_layout(const figure *f)
{
    layout L = {0};
    const char *rows[MAX_PANELS + 1];
    const int entries =
        f->p[0].ns + !isnan(f->p[0].hline) + f->p[0].nrefs + extra_rows(f, rows, MAX_PANELS + 1);
    bool causal = false, noncausal = false;
    for (int p = 0; p < f->np; p++)
        for (int s = 0; s < f->p[p].ns; s++)
            causal |= f->p[p].s[s].causal, noncausal |= !f->p[p].s[s].causal;
    L.mixed = causal && noncausal;
    const int fit_rows = (int)((MAX_H - 165) / ROW_PX) - 1;
    const int cols = entries > fit_rows ? 2 : 1;
    L.rows = (entries + cols - 1) / cols;
    const double key_px = cols * fmax(130, max_label(f) * 7.0 + 60), left_px = 84, gap_px = 72;
    const double need = left_px + f->np * 500 + (f->np - 1) * gap_px + key_px;
    const int base = f->np > 1 ? PANEL2_W : PAGE_W;
    L.width = (int)fmax(need, base);
    wrap(&L, f->title, (int)((L.width - 30) / TITLE_CHAR_PX));
    L.ntitle = L.nhead;
    wrap(&L, f->subtitle, (int)((L.width - 30) / SUB_CHAR_PX));
    wrap(&L, f->note, (int)((L.width - 30) / SUB_CHAR_PX));
    const double last = 24 + 20.0 * (L.ntitle - 1) + (L.nhead > L.ntitle ? 24 : 0) +
                        14.0 * (L.nhead - L.ntitle - (L.nhead > L.ntitle));
    L.top_px = fmax(100, last + (f->np > 1 ? 48 : 24));
    L.height = (int)(fmax(PAGE_H, 165 + (L.rows + 1) * ROW_PX) + L.top_px - 100);
    L.left = left_px / L.width, L.right = 1 - key_px / L.width, L.gap = gap_px / L.width;
    L.pw = (L.right - L.left - L.gap * (f->np - 1)) / f->np;
    return L;
}

/* The page: title, subtitle and note lines (pixels from the top), grid, borders, tics, bars and
 * the legend. */
static void put_page(script *b, const layout *L)
{
    char q[1200];
    put(b, "set encoding utf8\nset multiplot\nset samples 400\nset bars 0.5\n");
    double y = 24;
    for (int k = 0; k < L->nhead; k++) {
        const bool title = k < L->ntitle;
        if (k > 0) y += title ? 20 : k == L->ntitle ? 24 : 14;
        bench_gnuplot_quote(L->head[k], true, q, sizeof q);
        put(b, "set label %d %s at screen 0.5,%.4f center font ',%d'%s\n", k + 1, q,
            1 - y / L->height, title ? 13 : 8, title ? "" : " textcolor rgb '#444444'");
    }
    put(b,
        "set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1, lc rgb '#f2f2f2' lw 1\n"
        "set border lc rgb '#555555'\nset tics nomirror out scale 0.6\n"
        "set key at screen %.4f,%.4f left top Left reverse samplen 3.2 spacing 1.15 font ',9' "
        "maxrows %d noautotitle\n",
        L->right + 0.012, 1 - (L->top_px - 15) / L->height, L->rows);
}

/* Panel pi's place, titles, scales, tics and ranges. */
static void put_axes(script *b, const figure *f, int pi, const layout *L)
{
    const panel *p = &f->p[pi];
    const double l = L->left + pi * (L->pw + L->gap);
    const double top = 1 - L->top_px / L->height, bottom = 65.0 / L->height;
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
    if (pi > 0) {
        for (int k = 0; k < L->nhead; k++) put(b, "unset label %d\n", k + 1);
        put(b, "unset key\n");
    }
}

/* A series' colour, "#RRGGBB", or with transparency ("#AARRGGBB", 00 opaque) for bars. */
static void color_of(const pseries *ps, const char *alpha, char *buf, size_t len)
{
    snprintf(buf, len, "#%s%s", alpha, palette[ps->style.color % NCOLORS] + 1);
}

/* Its point type: open, or filled for causal when the figure has both. */
static int point_type(const pseries *ps, const layout *L)
{
    return (ps->causal && L->mixed ? filled_pt : open_pt)[ps->style.shape % BENCH_SHAPES];
}

/* The plot items of series ps of panel p, its data in file `data`: bars (translucent), points
 * (and lines), tags, the fitted laws (in its dash). Titles come from key rows (put_key_rows). */
static void put_series(script *b, const panel *p, const pseries *ps, const char *data,
                       const layout *L, int item)
{
    char color[16], faint[16];
    color_of(ps, "", color, sizeof color);
    color_of(ps, "60", faint, sizeof faint);
    const char *dt = dashes[ps->style.dash % BENCH_DASHES];
    put(b, "%s", item ? ", \\\n  " : "");
    if (ps->lo)
        put(b, "%s using 1:2:3:4 with %s lc rgb '%s' lw 1.2 pt 7 ps 0 notitle, \\\n  ", data,
            ps->xbars ? "xerrorbars" : "yerrorbars", faint);
    put(b, "%s using 1:2 with %s lc rgb '%s' pt %d ps 1.1 lw 1.6 dt %s notitle", data,
        p->lines ? "linespoints" : "points", color, point_type(ps, L), dt);
    if (ps->tag)
        put(b,
            ", \\\n  %s using 1:2:5 with labels offset char 0.6,0.6 left font ',8' "
            "textcolor rgb '%s' notitle",
            data, color);
    for (int k = 0; k < ps->nfit; k++)
        put(b,
            ", \\\n  (x >= %.17g && x <= %.17g) ? %.17g * x**%.17g : 1/0 with lines "
            "lc rgb '%s' lw 1.4 dt %s notitle",
            ps->fit[k].x0, ps->fit[k].x1, ps->fit[k].c, ps->fit[k].k, color, dt);
}

/* The further reference lines' colours (dark, apart from the series') and gnuplot dash types. */
enum { REF_STYLES = 6 };
static const char *const ref_colors[REF_STYLES] = {"#8b1a1a", "#1a3d8b", "#2e6b1f",
                                                   "#6b4a1f", "#5a1f6b", "#1f6b66"};
static const int ref_dashes[REF_STYLES] = {2, 4, 5, 6, 2, 4};

/* The legend (drawn with panel 0): a row per series with its marker and dash, the reference
 * line, then what the lines and the bars are. */
static void put_key_rows(script *b, const figure *f, const layout *L)
{
    const panel *p = &f->p[0];
    for (int s = 0; s < p->ns; s++) {
        const pseries *ps = &p->s[s];
        char color[16], title[LABEL_LEN * 2 + 120];
        color_of(ps, "", color, sizeof color);
        bench_gnuplot_quote(ps->label, true, title, sizeof title - 100);
        title[strlen(title) - 1] = '\0'; /* reopen the quote for the suffix */
        snprintf(title + strlen(title), sizeof title - strlen(title), "%s'", ps->suffix);
        put(b, ", \\\n  keyentry with linespoints lc rgb '%s' pt %d ps 1.1 lw 1.6 dt %s title %s",
            color, point_type(ps, L), dashes[ps->style.dash % BENCH_DASHES], title);
    }
    char q[1200];
    if (!isnan(p->hline)) {
        bench_gnuplot_quote(p->hline_label, true, q, sizeof q);
        put(b, ", \\\n  keyentry with lines lc rgb '#333333' lw 1.5 dt 3 title %s", q);
    }
    for (int r = 0; r < p->nrefs; r++) {
        bench_gnuplot_quote(p->ref_labels[r], true, q, sizeof q);
        put(b, ", \\\n  keyentry with lines lc rgb '%s' lw 1.5 dt %d title %s",
            ref_colors[r % REF_STYLES], ref_dashes[(r + r / REF_STYLES) % REF_STYLES], q);
    }
    const char *rows[MAX_PANELS + 1];
    const int n = extra_rows(f, rows, MAX_PANELS + 1);
    for (int k = 0; k < n; k++) {
        bench_gnuplot_quote(rows[k], true, q, sizeof q);
        put(b, ", \\\n  keyentry with %s lc rgb '#555555' lw 1.2 pt 7 ps 0 title %s",
            rows[k] == f->fits ? "lines" : "yerrorbars", q);
    }
}

/* Panel pi's plot command: its series (data files written now), reference line, legend rows. */
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
        put_series(b, p, &p->s[s], data, L, items++);
    }
    if (!isnan(p->hline))
        put(b, "%s%.17g with lines lc rgb '#333333' lw 1.5 dt 3 notitle", items++ ? ", \\\n  " : "",
            p->hline);
    for (int r = 0; r < p->nrefs; r++)
        put(b, "%s%.17g with lines lc rgb '%s' lw 1.5 dt %d notitle", items++ ? ", \\\n  " : "",
            p->refs[r], ref_colors[r % REF_STYLES], ref_dashes[(r + r / REF_STYLES) % REF_STYLES]);
    if (items == 0) put(b, "1/0 notitle");
    if (pi == 0) put_key_rows(b, f, L);
    put(b, "\n");
    return ATTN_OK;
}

attn_status bench_fig_draw(plot_ctx *cx, figure *f, char *msg, size_t msg_len)
{
    assign_styles(f);
    const layout lay = plan_layout(f), *L = &lay;
    script b = {0};
    put_page(&b, L);
    attn_status st = ATTN_OK;
    for (int pi = 0; pi < f->np && !b.failed && !st; pi++) {
        put_axes(&b, f, pi, L);
        st = put_plot(cx, &b, f, pi, L, msg, msg_len);
    }
    put(&b, "unset multiplot\n");
    if (!st && b.failed)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory building a gnuplot script");
    char dest[4400];
    snprintf(dest, sizeof dest, "%s/%s.%s", cx->dir, f->name, cx->format);
    if (!st)
        st =
            bench_gnuplot_render(&cx->gp, b.s, cx->format, L->width, L->height, dest, msg, msg_len);
    free(b.s);
    if (st == ATTN_OK) {
        if (cx->out) fprintf(cx->out, "wrote %s\n", dest);
        cx->written++;
        char(*grown)[256] = realloc(cx->files, (size_t)(cx->nfiles + 1) * sizeof *grown);
        if (grown) {
            cx->files = grown;
            snprintf(cx->files[cx->nfiles++], sizeof *grown, "%s.%s", f->name, cx->format);
        }
    }
    return st;
}
