/*
 * fit.c — power-law fits on log-log axes, Student's t quantiles for their confidence intervals,
 * and crossovers of measured curves (fit.h).
 *
 * Fit: ordinary least squares of Y = ln y on X = ln x:
 *   slope = Sxy / Sxx,  intercept = mean(Y) - slope · mean(X)
 *   SSE = Σ (Y - intercept - slope·X)²,  SST = Σ (Y - mean Y)²,  R² = 1 - SSE/SST
 *   se(slope) = sqrt(SSE / (n-2) / Sxx),  95 % CI = slope ± t(0.975; n-2) · se(slope)
 * Student's t CDF through the regularized incomplete beta function (continued fraction,
 * modified Lentz), inverted by bisection.
 *
 * Median CI: the number of values below the median is Bin(n, 1/2), so [x(l), x(n-1-l)] (0-based
 * order statistics) holds it with probability Σ_{i=l+1}^{n-l-1} C(n,i) / 2^n.
 * Wilson: centre (p + z²/2m) / (1 + z²/m), half-width z/(1 + z²/m) · sqrt(p(1-p)/m + z²/4m²).
 */
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

attn_status bench_fit_power_law(const double *x, const double *y, int64_t n, bench_fit *fit,
                                char *msg, size_t msg_len)
{
    *fit = (bench_fit){.n = n,
                       .slope = NAN,
                       .intercept = NAN,
                       .slope_se = NAN,
                       .slope_lo = NAN,
                       .slope_hi = NAN,
                       .r2 = NAN};
    if (n < 2)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "a power-law fit needs 2 points or more (got %lld)", (long long)n);
    double mx = 0, my = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0) || !isfinite(x[i]) || !isfinite(y[i]))
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "a log-log fit needs positive finite values (point %lld: x=%g y=%g)",
                             (long long)i, x[i], y[i]);
        mx += log(x[i]);
        my += log(y[i]);
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, sst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double dx = log(x[i]) - mx, dy = log(y[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
        sst += dy * dy;
    }
    if (!(sxx > 0))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "a power-law fit needs 2 distinct x values (all %lld points at x=%g)",
                         (long long)n, x[0]);
    fit->slope = sxy / sxx;
    fit->intercept = my - fit->slope * mx;
    double sse = 0;
    for (int64_t i = 0; i < n; i++) {
        const double r = log(y[i]) - fit->intercept - fit->slope * log(x[i]);
        sse += r * r;
    }
    if (sst > 0) fit->r2 = 1 - sse / sst;
    if (n >= 3) {
        fit->slope_se = sqrt(sse / (double)(n - 2) / sxx);
        const double half = bench_student_t_quantile(0.975, (double)(n - 2)) * fit->slope_se;
        fit->slope_lo = fit->slope - half;
        fit->slope_hi = fit->slope + half;
    }
    return ATTN_OK;
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        for (int half = 0; half < 2; half++) {
            d = 1 + aa * d;
            if (fabs(d) < tiny) d = tiny;
            c = 1 + aa / c;
            if (fabs(c) < tiny) c = tiny;
            d = 1 / d;
            h *= d * c;
            aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        }
        if (fabs(d * c - 1) < 1e-15) break;
    }
    return h;
}

/* Regularized incomplete beta I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double bench_student_t_cdf(double t, double dof)
{
    if (isnan(t) || !(dof > 0)) return NAN;
    if (isinf(t)) return t > 0 ? 1 : 0;
    const double tail = 0.5 * beta_inc(dof / 2, 0.5, dof / (dof + t * t)); /* P(T > |t|) */
    return t >= 0 ? 1 - tail : tail;
}

double bench_student_t_quantile(double p, double dof)
{
    if (!(p > 0 && p < 1) || !(dof > 0)) return NAN;
    if (p < 0.5) return -bench_student_t_quantile(1 - p, dof);
    double lo = 0, hi = 1;
    while (bench_student_t_cdf(hi, dof) < p && hi < 1e300) hi *= 2;
    for (int it = 0; it < 400 && hi - lo > 1e-14 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (bench_student_t_cdf(mid, dof) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

typedef struct ratio_at {
    double x, log_ratio;
} ratio_at;

static int by_x(const void *a, const void *b)
{
    const ratio_at *p = a, *q = b;
    return (p->x > q->x) - (p->x < q->x);
}

/* x where the line through (ln a.x, a.log_ratio) and (ln b.x, b.log_ratio) crosses 0. */
static double zero_between(ratio_at a, ratio_at b)
{
    if (a.log_ratio == b.log_ratio) return a.x;
    const double f = a.log_ratio / (a.log_ratio - b.log_ratio);
    return exp(log(a.x) + f * (log(b.x) - log(a.x)));
}

bench_crossover bench_crossover_find(const double *x, const double *y, int64_t n, const double *xr,
                                     const double *yr, int64_t nr)
{
    bench_crossover c = {.kind = BENCH_CROSS_NONE, .at = NAN, .ratio_at_max = NAN, .max_x = NAN};
    ratio_at *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r) return c;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;
        for (int64_t j = 0; j < nr; j++)
            if (xr[j] == x[i] && yr[j] > 0) {
                r[m++] = (ratio_at){x[i], log(y[i] / yr[j])};
                break;
            }
    }
    c.common = m;
    if (m > 0) {
        qsort(r, (size_t)m, sizeof *r, by_x);
        c.max_x = r[m - 1].x;
        c.ratio_at_max = exp(r[m - 1].log_ratio);
        int64_t below = 0, last_change = -1; /* crossing between last_change and last_change+1 */
        for (int64_t i = 0; i < m; i++) {
            below += r[i].log_ratio < 0;
            if (i > 0 && (r[i].log_ratio < 0) != (r[i - 1].log_ratio < 0)) last_change = i - 1;
        }
        if (below == m) c.kind = BENCH_CROSS_ALWAYS;
        else if (below == 0) c.kind = BENCH_CROSS_NEVER;
        else {
            c.kind = r[m - 1].log_ratio < 0 ? BENCH_CROSS_ABOVE : BENCH_CROSS_BELOW;
            c.at = zero_between(r[last_change], r[last_change + 1]);
        }
    }
    free(r);
    return c;
}

/* ---- one law, two, or none ---- */

/* Largest factor between a point and the law fit (>= 1). */
static double worst_ratio(const double *x, const double *y, int64_t n, const bench_fit *fit)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(log(y[i]) - fit->intercept - fit->slope * log(x[i])));
    return exp(worst);
}

attn_status bench_fit_curve(const double *x, const double *y, int64_t n, bench_curve_fit *cf,
                            char *msg, size_t msg_len)
{
    memset(cf, 0, sizeof *cf);
    cf->split = NAN;
    attn_status st = bench_fit_power_law(x, y, n, &cf->all, msg, msg_len);
    if (st) return st;
    cf->max_ratio = worst_ratio(x, y, n, &cf->all);
    if (cf->all.r2 >= BENCH_FIT_R2_MIN || cf->max_ratio <= BENCH_FIT_CLOSE) {
        cf->pieces = 1;
        return ATTN_OK;
    }
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) distinct += i == 0 || x[i] != x[i - 1];
    if (distinct < 4) return ATTN_OK; /* no line: two pieces of 2 points say nothing */
    int64_t d = -1, mid = 0;
    for (int64_t i = 0; i < n && d < (distinct - 1) / 2; i++)
        if (i == 0 || x[i] != x[i - 1]) d++, mid = i;
    cf->split = x[mid];
    int64_t below = mid + 1;
    while (below < n && x[below] == cf->split) below++;
    if (bench_fit_power_law(x, y, below, &cf->lower, msg, msg_len) ||
        bench_fit_power_law(x + mid, y + mid, n - mid, &cf->upper, msg, msg_len))
        return ATTN_OK;
    cf->pieces = 2;
    return ATTN_OK;
}

/* ---- intervals ---- */

void bench_median_ci(const double *sorted, int64_t n, double *lo, double *hi, double *coverage)
{
    if (n <= 0) {
        *lo = *hi = NAN;
        if (coverage) *coverage = NAN;
        return;
    }
    /* pmf of Bin(n, 1/2) from its middle outwards: coverage(l) = 1 - 2 · P(B <= l) */
    double tail = 0, cov = 1 - 2 * exp(-(double)n * log(2.0)); /* l = 0 */
    int64_t l = 0;
    for (int64_t k = 0; k + 1 < n - 1 - k; k++) {
        tail += exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) -
                    (double)n * log(2.0));
        const double next = 1 - 2 * (tail + exp(lgamma((double)n + 1) - lgamma((double)k + 2) -
                                                lgamma((double)(n - k)) - (double)n * log(2.0)));
        if (next < 0.95) break;
        l = k + 1, cov = next;
    }
    *lo = sorted[l];
    *hi = sorted[n - 1 - l];
    if (coverage) *coverage = n == 1 ? 0 : cov;
}

void bench_wilson(double successes, double trials, double *lo, double *hi)
{
    const double z = 1.959963984540054, m = trials, p = successes / trials;
    const double d = 1 + z * z / m, centre = (p + z * z / (2 * m)) / d;
    const double half = z / d * sqrt(p * (1 - p) / m + z * z / (4 * m * m));
    *lo = fmax(0, centre - half);
    *hi = fmin(1, centre + half);
}
