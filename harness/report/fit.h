/*
 * fit.h — complexity curves from measured points: a power law y = c·x^k fitted by least squares
 * on log-log axes (exponent k with its 95 % confidence interval from Student's t, and R²), and
 * the crossover of two measured curves (where one falls below the other), interpolated in
 * log-log between the measured points around it; the rule that says whether one power law
 * describes a curve (else two, below and above its middle x); and the intervals the figures draw:
 * a distribution-free confidence interval of a median, Wilson's interval of a proportion.
 * Pure arithmetic: no I/O.
 */
#ifndef BENCH_FIT_H
#define BENCH_FIT_H

#include <stdint.h>

#include "attn_core.h"

typedef struct bench_fit {
    int64_t n;        /* points fitted */
    double slope;     /* the exponent k: ln y = intercept + slope · ln x */
    double intercept; /* ln c */
    double slope_se;  /* standard error of the slope; NaN when n < 3 */
    double slope_lo,
        slope_hi; /* 95 % confidence interval, slope ± t(0.975, n-2) · se; NaN when n < 3 */
    double r2;    /* 1 - SSE/SST of the log-log fit; NaN when every ln y is equal */
} bench_fit;

/* Least squares line through (ln x[i], ln y[i]), i < n. Needs n >= 2, every x and y finite and
 * > 0, and at least two distinct x: otherwise ATTN_EINVAL with a message naming the problem. */
attn_status bench_fit_power_law(const double *x, const double *y, int64_t n, bench_fit *fit,
                                char *msg, size_t msg_len);

/* Student's t distribution with dof > 0 degrees of freedom: P(T <= t), and its inverse
 * (the t with P(T <= t) = p, 0 < p < 1). Accurate to ~1e-10. */
double bench_student_t_cdf(double t, double dof);
double bench_student_t_quantile(double p, double dof);

/* One power law describes a curve when its R² >= BENCH_FIT_R2_MIN, or when every point lies
 * within BENCH_FIT_CLOSE (as a ratio) of the line: a flat curve (time of a fixed window in decode)
 * has an R² near 0 by construction, yet the law fits it. */
#define BENCH_FIT_R2_MIN 0.98
#define BENCH_FIT_CLOSE 1.10

typedef struct bench_curve_fit {
    int pieces;       /* 1: one law (all); 2: lower and upper; 0: none (fewer than 4 distinct x
                         and one law does not fit, or no fit at all) */
    bench_fit all;    /* one law through every point: its r2 is what the legend shows */
    double max_ratio; /* largest factor between a point and that law (>= 1) */
    bench_fit lower, upper; /* pieces == 2: over x <= split and over x >= split */
    double split;           /* the middle distinct x */
} bench_curve_fit;

/* Apply the rule to the points (x[i], y[i]), x ascending: one law if it fits (see above), else
 * with 4 or more distinct x one law over x <= the middle distinct x and one over x >= it, else
 * none. ATTN_EINVAL when not even one law can be fitted (bench_fit_power_law's message). */
attn_status bench_fit_curve(const double *x, const double *y, int64_t n, bench_curve_fit *cf,
                            char *msg, size_t msg_len);

/* Distribution-free confidence interval of the median of sorted[0..n) (ascending), from order
 * statistics: [x(l), x(n-1-l)] with the largest l whose coverage P(l < B < n-l), B ~ Bin(n, 1/2),
 * is at least 95 %. Below 6 values no l reaches 95 %: [min, max], coverage 1 - 2^(1-n) (93.75 %
 * for 5). *coverage gets it (may be NULL). n == 0: NaNs. */
void bench_median_ci(const double *sorted, int64_t n, double *lo, double *hi, double *coverage);

/* Wilson score interval (95 %, z = 1.96) of a proportion: successes of trials (trials > 0). */
void bench_wilson(double successes, double trials, double *lo, double *hi);

typedef enum {
    BENCH_CROSS_NONE,   /* no x in common: nothing to compare */
    BENCH_CROSS_ALWAYS, /* below the reference at every common x */
    BENCH_CROSS_NEVER,  /* at or above it at every common x */
    BENCH_CROSS_ABOVE,  /* below it from x = at on (above it somewhere before) */
    BENCH_CROSS_BELOW,  /* below it only up to x = at: above it at the largest common x */
} bench_cross_kind;

typedef struct bench_crossover {
    bench_cross_kind kind;
    double at;           /* ABOVE, BELOW: the crossing; NaN otherwise */
    double ratio_at_max; /* y / y_ref at the largest common x (NaN if none) */
    double max_x;        /* that x */
    int64_t common;      /* x values the two curves share */
} bench_crossover;

/* Where curve y(x) falls below the reference yr(xr). The curves are compared at the x values
 * both have (x need not be sorted; y, yr > 0). The crossing is the last sign change of
 * ln(y/yr) over ascending x, interpolated linearly in (ln x, ln y/yr) between its two points. */
bench_crossover bench_crossover_find(const double *x, const double *y, int64_t n, const double *xr,
                                     const double *yr, int64_t nr);

#endif
