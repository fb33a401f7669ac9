/*
 * compare.c — the statistics, matching and figure of `bench compare` (compare.h): the ratio of
 * medians with a percentile bootstrap interval, points of two runs matched by their settings,
 * and a gnuplot figure of the ratios with their intervals.
 */
#include "compare.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Quantile q of sorted v[0..n) by linear interpolation (numpy's default, as stats.c). */
static double quantile(const double *v, int64_t n, double q)
{
    const double h = q * (double)(n - 1);
    const int64_t i = (int64_t)floor(h);
    return i + 1 < n ? v[i] + (h - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

void bench_interval95(double *v, int64_t n, double *lo, double *hi)
{
    if (n <= 0) {
        *lo = *hi = NAN;
        return;
    }
    qsort(v, (size_t)n, sizeof *v, by_value);
    *lo = quantile(v, n, 0.025);
    *hi = quantile(v, n, 0.975);
}

/* The median of n draws with replacement from sorted[0..n): draw counts per index into count,
 * then walk them to the two middle order statistics (the median of an even count is their mean). */
static double resample_median(const double *sorted, int64_t n, int64_t *count, ds_rng *r)
{
    memset(count, 0, (size_t)n * sizeof *count);
    for (int64_t i = 0; i < n; i++) count[ds_rng_u64(r) % (uint64_t)n]++;
    const int64_t lo = (n - 1) / 2, hi = n / 2;
    double v_lo = NAN, v_hi = NAN;
    for (int64_t i = 0, seen = 0; i < n; i++) {
        if (seen <= lo && lo < seen + count[i]) v_lo = sorted[i];
        if (seen <= hi && hi < seen + count[i]) {
            v_hi = sorted[i];
            break;
        }
        seen += count[i];
    }
    return 0.5 * (v_lo + v_hi);
}

/* At most BENCH_BOOT_MAX_SAMPLES evenly spaced order statistics of sorted v[0..*n), in place
 * (kept sorted): a bootstrap over fewer values gives a wider interval, never a narrower one. */
static void thin(double *v, int64_t *n)
{
    if (*n <= BENCH_BOOT_MAX_SAMPLES) return;
    for (int64_t i = 0; i < BENCH_BOOT_MAX_SAMPLES; i++)
        v[i] = v[i * (*n - 1) / (BENCH_BOOT_MAX_SAMPLES - 1)];
    *n = BENCH_BOOT_MAX_SAMPLES;
}

attn_status bench_ratio_of_medians(const double *a, int64_t na, const double *b, int64_t nb,
                                   uint64_t stream, bench_ratio *out, double *log_draws)
{
    *out = (bench_ratio){.ratio = NAN, .lo = NAN, .hi = NAN};
    if (na < 1 || nb < 1) return ATTN_EINVAL;
    double *sa = malloc((size_t)(na + nb) * sizeof *sa), *sb = sa ? sa + na : NULL;
    int64_t *count = malloc((size_t)(na > nb ? na : nb) * sizeof *count);
    double *draws = malloc(BENCH_BOOT_RESAMPLES * sizeof *draws);
    attn_status st = sa && count && draws ? ATTN_OK : ATTN_EFAIL;
    if (st == ATTN_OK) {
        memcpy(sa, a, (size_t)na * sizeof *sa);
        memcpy(sb, b, (size_t)nb * sizeof *sb);
        qsort(sa, (size_t)na, sizeof *sa, by_value);
        qsort(sb, (size_t)nb, sizeof *sb, by_value);
        out->ratio = quantile(sb, nb, 0.5) / quantile(sa, na, 0.5);
        thin(sa, &na);
        thin(sb, &nb);
        const bool interval = na >= BENCH_BOOT_MIN_SAMPLES && nb >= BENCH_BOOT_MIN_SAMPLES;
        ds_rng r = ds_rng_stream(BENCH_BOOT_SEED, stream);
        for (int d = 0; d < BENCH_BOOT_RESAMPLES; d++) {
            draws[d] =
                interval
                    ? log(resample_median(sb, nb, count, &r) / resample_median(sa, na, count, &r))
                    : log(out->ratio);
            if (log_draws) log_draws[d] = draws[d];
        }
        if (interval && isfinite(out->ratio)) {
            bench_interval95(draws, BENCH_BOOT_RESAMPLES, &out->lo, &out->hi);
            out->lo = exp(out->lo), out->hi = exp(out->hi);
            out->change = out->lo > 1 ? 1 : out->hi < 1 ? -1 : 0;
        }
    }
    free(sa);
    free(count);
    free(draws);
    return st;
}

/* ---- matching ---- */

static bool same_key(const bench_run_data *a, int64_t i, const bench_run_data *b, int64_t j,
                     bool threads, bool isa, bool dtype)
{
    const bench_point *x = &a->pts[i], *y = &b->pts[j];
    return strcmp(x->kind, y->kind) == 0 && strcmp(a->params[i], b->params[j]) == 0 &&
           strcmp(x->dataset, y->dataset) == 0 &&
           strcmp(x->dataset_params, y->dataset_params) == 0 && strcmp(x->mode, y->mode) == 0 &&
           x->batch == y->batch && x->heads == y->heads && x->kv_heads == y->kv_heads &&
           x->q_len == y->q_len && x->kv_len == y->kv_len && x->head_dim == y->head_dim &&
           x->causal == y->causal && strcmp(x->pass, y->pass) == 0 &&
           (!threads || x->threads == y->threads) && (!isa || strcmp(x->isa, y->isa) == 0) &&
           (!dtype || strcmp(x->dtype, y->dtype) == 0);
}

/* The text setting (at offset `at` of bench_point) every point of rd shares, or NULL (none or
 * several). */
static const char *one_text(const bench_run_data *rd, size_t at)
{
    const char *first = rd->n ? (const char *)&rd->pts[0] + at : NULL;
    for (int64_t i = 1; i < rd->n; i++)
        if (strcmp((const char *)&rd->pts[i] + at, first) != 0) return NULL;
    return first;
}

/* Do a and b each have one value of text setting `at`, a different one? */
static bool runs_differ_in(const bench_run_data *a, const bench_run_data *b, size_t at)
{
    const char *x = one_text(a, at), *y = one_text(b, at);
    return x && y && strcmp(x, y) != 0;
}

/* The thread count every point of rd shares, or -1 (none or several). */
static int64_t one_thread_count(const bench_run_data *rd)
{
    for (int64_t i = 1; i < rd->n; i++)
        if (rd->pts[i].threads != rd->pts[0].threads) return -1;
    return rd->n ? rd->pts[0].threads : -1;
}

attn_status bench_compare_match(const bench_run_data *a, const bench_run_data *b, bench_match *m)
{
    *m = (bench_match){0};
    m->b_of_a = malloc((size_t)(a->n ? a->n : 1) * sizeof *m->b_of_a);
    m->a_of_b = malloc((size_t)(b->n ? b->n : 1) * sizeof *m->a_of_b);
    if (!m->b_of_a || !m->a_of_b) {
        bench_match_free(m);
        return ATTN_EFAIL;
    }
    const int64_t ta = one_thread_count(a), tb = one_thread_count(b);
    m->threads_compared = ta > 0 && tb > 0 && ta != tb;
    m->isa_compared = runs_differ_in(a, b, offsetof(bench_point, isa));
    m->dtype_compared = runs_differ_in(a, b, offsetof(bench_point, dtype));
    for (int64_t j = 0; j < b->n; j++) m->a_of_b[j] = -1;
    for (int64_t i = 0; i < a->n; i++) {
        m->b_of_a[i] = -1;
        for (int64_t j = 0; j < b->n && m->b_of_a[i] < 0; j++)
            if (m->a_of_b[j] < 0 &&
                same_key(a, i, b, j, !m->threads_compared, !m->isa_compared, !m->dtype_compared)) {
                m->b_of_a[i] = j, m->a_of_b[j] = i;
                m->matched++;
            }
    }
    return ATTN_OK;
}

void bench_match_free(bench_match *m)
{
    free(m->b_of_a);
    free(m->a_of_b);
    *m = (bench_match){0};
}

/* ---- samples ---- */

static int by_point(const void *x, const void *y)
{
    const bench_sample *a = x, *b = y;
    if (a->run_id != b->run_id) return (a->run_id > b->run_id) - (a->run_id < b->run_id);
    if (a->point_id != b->point_id)
        return (a->point_id > b->point_id) - (a->point_id < b->point_id);
    return (a->rep > b->rep) - (a->rep < b->rep);
}

void bench_samples_sort(bench_sample *samples, int64_t n)
{
    if (n > 0) qsort(samples, (size_t)n, sizeof *samples, by_point);
}

void bench_samples_of(const bench_sample *samples, int64_t n, int64_t run_id, int64_t point_id,
                      int64_t *first, int64_t *count)
{
    const bench_sample key = {.run_id = run_id, .point_id = point_id, .rep = INT32_MIN};
    int64_t lo = 0, hi = n; /* the first sample not below key */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (by_point(&samples[mid], &key) < 0) lo = mid + 1;
        else hi = mid;
    }
    int64_t end = lo;
    while (end < n && samples[end].run_id == run_id && samples[end].point_id == point_id) end++;
    *first = lo;
    *count = end - lo;
}

/* ---- the figure ---- */

/* The data file: "row ratio lo hi" per point of class c (-1 faster, 0, +1 slower); a point
 * without an interval gets lo = hi = ratio. */
static attn_status write_data(bench_gnuplot *g, const bench_compare_row *rows, int64_t n, int c,
                              char *quoted, size_t len)
{
    FILE *f = bench_gnuplot_data(g, quoted, len);
    if (!f) return ATTN_EFAIL;
    int written = 0;
    for (int64_t i = 0; i < n; i++) {
        const bench_ratio *r = &rows[i].r;
        if (r->change != c || !(r->ratio > 0) || !isfinite(r->ratio)) continue;
        const bool ci = isfinite(r->lo) && isfinite(r->hi);
        fprintf(f, "%lld %.9g %.9g %.9g\n", (long long)i, r->ratio, ci ? r->lo : r->ratio,
                ci ? r->hi : r->ratio);
        written++;
    }
    if (!written) fprintf(f, "-10 1 1 1\n"); /* outside the y range: keeps the plot valid */
    return fclose(f) == 0 ? ATTN_OK : ATTN_EFAIL;
}

/* The x range: every ratio and interval, padded, with 1 inside. */
static void x_range(const bench_compare_row *rows, int64_t n, double *lo, double *hi)
{
    *lo = 1, *hi = 1;
    for (int64_t i = 0; i < n; i++) {
        const bench_ratio *r = &rows[i].r;
        const double v[3] = {r->ratio, r->lo, r->hi};
        for (int k = 0; k < 3; k++)
            if (v[k] > 0 && isfinite(v[k])) *lo = fmin(*lo, v[k]), *hi = fmax(*hi, v[k]);
    }
    *lo = fmin(*lo / 1.15, 0.9), *hi = fmax(*hi * 1.15, 1.1);
}

/* Tics at 1, 2, 5 times powers of ten in [lo, hi]; closer ones around 1 when the range is
 * narrow. */
static void x_tics(FILE *t, double lo, double hi)
{
    static const double near[] = {0.9, 0.95, 1.05, 1.1}, mid[] = {0.8, 1.25, 1.5};
    const double *extra = hi / lo < 1.5 ? near : hi / lo < 4 ? mid : NULL;
    const int nextra = hi / lo < 1.5 ? 4 : 3;
    fprintf(t, "set xtics (");
    int said = 0;
    for (int e = -3; e <= 3; e++)
        for (int m = 0; m < 3; m++) {
            const double v = (m == 0 ? 1 : m == 1 ? 2 : 5) * pow(10, e);
            if (v >= lo && v <= hi) fprintf(t, "%s%g", said++ ? ", " : "", v);
        }
    for (int i = 0; extra && i < nextra; i++)
        if (extra[i] >= lo && extra[i] <= hi) fprintf(t, "%s%g", said++ ? ", " : "", extra[i]);
    fprintf(t, ")\n");
}

static const struct {
    int change;
    const char *color, *title;
    int pt;
} classes[] = {{-1, "#1a7f37", "B faster (interval below 1)", 7},
               {1, "#cf222e", "B slower (interval above 1)", 5},
               {0, "#6e7781", "no significant change", 6}};

static void script_of(FILE *t, const bench_compare_row *rows, int64_t n, const char *title,
                      const char *subtitle, char data[][8500])
{
    char q[1024], s[1024], lab[400];
    bench_gnuplot_quote(title, false, q, sizeof q);
    bench_gnuplot_quote(subtitle, false, s, sizeof s);
    double lo, hi;
    x_range(rows, n, &lo, &hi);
    fprintf(t, "set encoding utf8\nset termoption noenhanced\n");
    fprintf(t, "set title %s . \"\\n\" . %s\n", q, s);
    fprintf(t, "set logscale x\nset xrange [%.6g:%.6g]\nset format x '%%g'\n", lo, hi);
    x_tics(t, lo, hi);
    fprintf(t, "set yrange [%lld-0.5:-0.5]\nset grid xtics mxtics lc rgb '#dddddd'\n",
            (long long)n);
    fprintf(t, "set xlabel 'median time of B / median time of A, with its 95 %% bootstrap interval "
               "(below 1: B faster)'\n");
    fprintf(t, "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.5 lc rgb '#000000'\n");
    fprintf(t, "set key outside top center horizontal\nset ytics (");
    for (int64_t i = 0; i < n; i++) {
        bench_gnuplot_quote(rows[i].label, false, lab, sizeof lab);
        fprintf(t, "%s%s %lld", i ? ", " : "", lab, (long long)i);
    }
    fprintf(t, ") font ',9'\nplot ");
    for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++) {
        bench_gnuplot_quote(classes[c].title, false, q, sizeof q);
        fprintf(t, "%s%s using 2:1:3:4 with xerrorbars pt %d ps 1.2 lw 1.5 lc rgb '%s' title %s",
                c ? ", \\\n  " : "", data[c], classes[c].pt, classes[c].color, q);
    }
    fprintf(t, "\n");
}

attn_status bench_compare_plot(const bench_compare_row *rows, int64_t n, const char *title,
                               const char *subtitle, const char *dest, char *msg, size_t msg_len)
{
    const char *dot = strrchr(dest, '.');
    if (!dot || strchr(dot, '/') || !bench_gnuplot_format_ok(dot + 1))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--plot %s: the file name must end in .png, .svg or .pdf", dest);
    if (n < 1) return attn_fail(ATTN_EINVAL, msg, msg_len, "no matched point to draw");
    bench_gnuplot g;
    attn_status st = bench_gnuplot_open(&g, msg, msg_len);
    if (st != ATTN_OK) return st;
    char data[3][8500];
    for (int c = 0; c < 3 && st == ATTN_OK; c++)
        if (write_data(&g, rows, n, classes[c].change, data[c], sizeof data[c]) != ATTN_OK)
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write the figure's data in %s", g.dir);
    char *script = NULL;
    size_t len = 0;
    FILE *t = st == ATTN_OK ? open_memstream(&script, &len) : NULL;
    if (t) script_of(t, rows, n, title, subtitle, data);
    if (st == ATTN_OK && (!t || fclose(t) != 0))
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for the figure's script");
    const int height = 120 + 18 * (int)(n < 12 ? 12 : n > 400 ? 400 : n);
    if (st == ATTN_OK)
        st = bench_gnuplot_render(&g, script, dot + 1, 1000, height, dest, msg, msg_len);
    free(script);
    bench_gnuplot_close(&g);
    return st;
}
