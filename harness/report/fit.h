/*
 * fit.h — complexity curves from measured points: a power law y = c·x^k fitted by least squares
 * on log-log axes (exponent k with its 95 % confidence interval from Student's t, and R²), and
 * the crossover of two measured curves (where one falls below the other), interpolated in
 * log-log between the measured points around it. Pure arithmetic: no I/O.
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
