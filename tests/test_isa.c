/*
 * test_isa.c — the kernel sets (attention/kernels/kernel_set.h) and their selection (attn_isa.h).
 * Every slot of every set this machine runs (attn_isa_supported) is checked against a float64
 * computation and against the portable set, at every length 0 .. 3·16 (every tail of the
 * 1-, 8- and 16-lane sets) and a few longer ones, with guard values after the end that must
 * stay untouched (a tail that writes past n fails even without a sanitizer).
 *
 * Extending: a slot group (kernel_set.h) is a table of slot_case {slot name, check function}
 * and one Test that calls check_group() on it. A check gets the set under test and the
 * portable set, and reports with the set's name (isa_label). Add a table and a Test per new
 * group (tile, sparse, convert, decode, linear) as its body lands.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_isa.h"
#include "kernel_set.h"
#include "kernels.h"
#include "test_util.h"

enum {
    MAX_VW = 16,           /* the widest set's lanes */
    MAX_TAIL = 3 * MAX_VW, /* lengths 0 .. MAX_TAIL: every tail of every set */
    GUARD = 4              /* guard floats after the end of an in-place row */
};
static const int64_t long_lengths[] = {100, 257, 1031};
enum { NLONG = sizeof long_lengths / sizeof long_lengths[0] };
static const float guard_value = 12345.5f;

/* Length number i of the lengths every slot is checked at (false past the last). */
static bool length_at(int i, int64_t *n)
{
    if (i <= MAX_TAIL) *n = i;
    else if (i - MAX_TAIL - 1 < NLONG) *n = long_lengths[i - MAX_TAIL - 1];
    else return false;
    return true;
}

static const char *isa_label(const attn_kernel_set *ks) { return attn_isa_name(ks->isa); }

/* A row of n values (seeded normal, scaled) followed by GUARD guard values. */
static float *row_with_guard(int64_t n, double sigma, uint64_t seed)
{
    float *x = tu_random(n + GUARD, sigma, seed);
    for (int g = 0; g < GUARD; g++) x[n + g] = guard_value;
    return x;
}

static void expect_guard(const attn_kernel_set *ks, const char *slot, const float *x, int64_t n)
{
    for (int g = 0; g < GUARD; g++)
        cr_expect_eq(x[n + g], guard_value, "%s %s n=%lld: wrote past the end (index %lld)",
                     isa_label(ks), slot, (long long)n, (long long)(n + g));
}

/* |got - want| <= tol · scale, where scale is never below tiny (a relative test that turns into
 * an absolute one near 0) */
static bool close_to(double got, double want, double tol, double scale)
{
    return fabs(got - want) <= tol * fmax(scale, 1e-30);
}

/* ---- math group (math_body.h) ---- */

static void check_vmax(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.vmax);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *x = row_with_guard(n, 3.0, 100 + (uint64_t)i);
        for (int64_t at = 0; at < n; at += n / 5 + 1) { /* the max at several places */
            const float saved = x[at];
            x[at] = 50.0f;
            double want = -INFINITY;
            for (int64_t j = 0; j < n; j++) want = tu_max(want, x[j]);
            cr_expect_eq(ks->math.vmax(x, n), (float)want, "%s vmax n=%lld max at %lld",
                         isa_label(ks), (long long)n, (long long)at);
            x[at] = saved;
        }
        cr_expect_eq(ks->math.vmax(x, n), pt->math.vmax(x, n), "%s vmax n=%lld vs portable",
                     isa_label(ks), (long long)n);
        for (int64_t j = 0; j < n; j++) x[j] = -INFINITY; /* every score masked */
        cr_expect_eq(ks->math.vmax(x, n), -INFINITY, "%s vmax of -inf n=%lld", isa_label(ks),
                     (long long)n);
        free(x);
    }
}

/* exp of the float difference x - shift (as the kernel sees it), in float64 */
static double exp_ref(float x, float shift) { return exp((double)(x - shift)); }

/* One vexp_sum call on a copy of x[0..n): every value and the sum against float64 (relative
 * 3e-7 per value, 1e-6 for the sum), and against the portable set. */
static void vexp_sum_case(const attn_kernel_set *ks, const attn_kernel_set *pt, const float *x,
                          int64_t n, float shift, const char *what)
{
    float *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
    memcpy(y, x, (size_t)n * sizeof *y);
    memcpy(yp, x, (size_t)n * sizeof *yp);
    const float sum = ks->math.vexp_sum(y, n, shift), psum = pt->math.vexp_sum(yp, n, shift);
    double want_sum = 0;
    for (int64_t j = 0; j < n; j++) {
        const double e = exp_ref(x[j], shift);
        want_sum += e;
        cr_expect(close_to(y[j], e, 3e-7, e),
                  "%s vexp_sum %s n=%lld: exp(%g - %g) = %.9g, not %.9g", isa_label(ks), what,
                  (long long)n, x[j], shift, y[j], e);
        cr_expect(close_to(y[j], yp[j], 6e-7, e),
                  "%s vexp_sum %s n=%lld [%lld]: %.9g, portable %.9g", isa_label(ks), what,
                  (long long)n, (long long)j, y[j], yp[j]);
    }
    cr_expect(close_to(sum, want_sum, 1e-6, want_sum), "%s vexp_sum %s n=%lld: sum %.9g, not %.9g",
              isa_label(ks), what, (long long)n, sum, want_sum);
    cr_expect(close_to(sum, psum, 2e-6, want_sum), "%s vexp_sum %s n=%lld: sum %.9g, portable %.9g",
              isa_label(ks), what, (long long)n, sum, psum);
    expect_guard(ks, "vexp_sum", y, n);
    free(y), free(yp);
}

static void check_vexp_sum(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.vexp_sum);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *x = tu_random(n + 1, 4.0, 200 + (uint64_t)i);
        vexp_sum_case(ks, pt, x, n, 0.5f, "normal");
        /* the range the polynomial covers: [-87, 80] (the sum stays a float) */
        for (int64_t j = 0; j < n; j++)
            x[j] = -87.0f + 167.0f * (float)j / (float)(n > 1 ? n - 1 : 1);
        vexp_sum_case(ks, pt, x, n, 0.0f, "range");
        free(x);
    }
}

/* -inf and far below: exactly 0; NaN stays NaN; far above: exp(88.37) (clamped, finite) in every
 * set; tiny differences: 1 within rounding. Each special value at every position of the row. */
static void check_vexp_sum_special(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    const float specials[] = {-INFINITY, -1e30f, -200.0f, -87.5f, NAN, 100.0f, 1e30f, 1e-30f};
    enum { NSPEC = sizeof specials / sizeof specials[0] };
    for (int64_t n = 1; n <= MAX_TAIL; n++)
        for (int s = 0; s < NSPEC; s++)
            for (int64_t at = 0; at < n; at++) {
                float x[MAX_TAIL], y[MAX_TAIL];
                for (int64_t j = 0; j < n; j++) x[j] = (float)(j % 7) * -0.25f;
                x[at] = specials[s];
                memcpy(y, x, sizeof x);
                ks->math.vexp_sum(x, n, 0.0f);
                pt->math.vexp_sum(y, n, 0.0f);
                const float got = x[at], sp = specials[s];
                const char *who = isa_label(ks);
                if (isnan(sp))
                    cr_expect(isnan(got), "%s vexp_sum: exp(NaN) = %g at %lld of %lld", who, got,
                              (long long)at, (long long)n);
                else if (sp < -87.33f)
                    cr_expect_eq(got, 0.0f, "%s vexp_sum: exp(%g) = %g, not 0 (at %lld of %lld)",
                                 who, sp, got, (long long)at, (long long)n);
                else if (sp > 88.37f)
                    cr_expect(close_to(got, exp((double)88.37f), 3e-7, exp((double)88.37f)) &&
                                  close_to(got, y[at], 6e-7, got),
                              "%s vexp_sum: exp(%g) = %g (portable %g), not exp(88.37) at %lld of "
                              "%lld",
                              who, sp, got, y[at], (long long)at, (long long)n);
                else
                    cr_expect(close_to(got, exp((double)sp), 3e-7, exp((double)sp)),
                              "%s vexp_sum: exp(%g) = %.9g at %lld of %lld", who, sp, got,
                              (long long)at, (long long)n);
                for (int64_t j = 0; j < n; j++) /* the other values are unaffected */
                    if (j != at)
                        cr_expect(close_to(x[j], exp((double)((float)(j % 7) * -0.25f)), 3e-7, 1),
                                  "%s vexp_sum: neighbour %lld of a %g at %lld", who, (long long)j,
                                  sp, (long long)at);
            }
}

static void check_vsoftcap(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.vsoftcap);
    const float caps[] = {1.0f, 30.0f};
    int64_t n;
    for (int i = 0; length_at(i, &n); i++)
        for (int c = 0; c < 2; c++) {
            const float cap = caps[c];
            float *x = row_with_guard(n, 2.0 * cap, 300 + (uint64_t)i),
                  *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
            if (n > 2) x[0] = 1e4f * cap, x[1] = -1e4f * cap, x[2] = 1e-20f; /* ends, tiny */
            memcpy(y, x, (size_t)n * sizeof *y);
            memcpy(yp, x, (size_t)n * sizeof *yp);
            ks->math.vsoftcap(y, n, cap);
            pt->math.vsoftcap(yp, n, cap);
            for (int64_t j = 0; j < n; j++) {
                const double e = cap * tanh((double)x[j] / cap);
                cr_expect(close_to(y[j], e, 1e-6, fabs(e)),
                          "%s vsoftcap cap=%g: %g -> %.9g, not %.9g", isa_label(ks), cap, x[j],
                          y[j], e);
                cr_expect(close_to(y[j], yp[j], 1e-6, fabs(e)),
                          "%s vsoftcap cap=%g: %.9g, portable %.9g", isa_label(ks), cap, y[j],
                          yp[j]);
            }
            expect_guard(ks, "vsoftcap", y, n);
            free(x), free(y), free(yp);
        }
}

static void check_vdot(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.vdot);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *a = tu_random(n + 1, 1.0, 400 + (uint64_t)i),
              *b = tu_random(n + 1, 1.0, 500 + (uint64_t)i);
        double want = 0, mag = 0;
        for (int64_t d = 0; d < n; d++) {
            want += (double)a[d] * b[d];
            mag += fabs((double)a[d] * b[d]);
        }
        /* float accumulation in any order: within n·eps of the sum of magnitudes */
        const double tol = (double)(n + 1) * FLT_EPSILON;
        const float got = ks->math.vdot(a, b, n);
        cr_expect(close_to(got, want, tol, mag), "%s vdot n=%lld: %.9g, not %.9g", isa_label(ks),
                  (long long)n, got, want);
        cr_expect(close_to(got, pt->math.vdot(a, b, n), 2 * tol, mag), "%s vdot n=%lld vs portable",
                  isa_label(ks), (long long)n);
        free(a), free(b);
    }
}

static void check_alibi_row(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.alibi_row);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *x = row_with_guard(n, 2.0, 600 + (uint64_t)i), *kpos = tu_random(n + 1, 1, 1);
        float *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
        for (int64_t c = 0; c < n; c++) kpos[c] = (float)(c * 3 % 17);
        const float pos = 7.0f, slope = 0.0625f * (float)(i % 5 + 1);
        memcpy(y, x, (size_t)n * sizeof *y);
        memcpy(yp, x, (size_t)n * sizeof *yp);
        ks->math.alibi_row(y, kpos, n, pos, slope);
        pt->math.alibi_row(yp, kpos, n, pos, slope);
        for (int64_t c = 0; c < n; c++) {
            const double bias = (double)slope * fabs((double)pos - kpos[c]),
                         e = (double)x[c] - bias, scale = fabs((double)x[c]) + bias;
            cr_expect(close_to(y[c], e, 3e-7, scale), "%s alibi_row n=%lld [%lld]: %.9g, not %.9g",
                      isa_label(ks), (long long)n, (long long)c, y[c], e);
            cr_expect(close_to(y[c], yp[c], 3e-7, scale), "%s alibi_row n=%lld vs portable",
                      isa_label(ks), (long long)n);
        }
        expect_guard(ks, "alibi_row", y, n);
        free(x), free(kpos), free(y), free(yp);
    }
}

static void check_scores_grad(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.scores_grad);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++)
        for (int with_cap = 0; with_cap < 2; with_cap++) {
            float *p = tu_random(n + 1, 1.0, 700 + (uint64_t)i), *cap = tu_random(n + 1, 1.0, 800);
            float *ds = row_with_guard(n, 2.0, 900 + (uint64_t)i);
            float *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
            const float delta = 0.375f;
            memcpy(y, ds, (size_t)n * sizeof *y);
            memcpy(yp, ds, (size_t)n * sizeof *yp);
            ks->math.scores_grad(p, y, with_cap ? cap : NULL, delta, n);
            pt->math.scores_grad(p, yp, with_cap ? cap : NULL, delta, n);
            for (int64_t j = 0; j < n; j++) {
                const double cj = with_cap ? cap[j] : 1.0, e = (double)p[j] * (ds[j] - delta) * cj,
                             scale = fabs((double)p[j] * cj) * (fabs(ds[j]) + delta);
                cr_expect(close_to(y[j], e, 4e-7, scale),
                          "%s scores_grad cap=%d n=%lld: %.9g, not %.9g", isa_label(ks), with_cap,
                          (long long)n, y[j], e);
                cr_expect(close_to(y[j], yp[j], 4e-7, scale), "%s scores_grad vs portable",
                          isa_label(ks));
            }
            expect_guard(ks, "scores_grad", y, n);
            free(p), free(cap), free(ds), free(y), free(yp);
        }
}

/* gather_axpy: n gathered rows (out of order, some repeated) of width D, every D's tail too */
static void check_gather_axpy(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.gather_axpy);
    const int64_t rows = 40, counts[] = {0, 1, 5, 33};
    int64_t D;
    for (int i = 0; length_at(i, &D) && D <= 2 * MAX_TAIL; i++)
        for (int c = 0; c < 4; c++) {
            const int64_t n = counts[c];
            float *v = tu_random(rows * D + 1, 1.0, 1000 + (uint64_t)i),
                  *p = tu_random(n + 1, 1.0, 1100 + (uint64_t)c);
            float *acc = row_with_guard(D, 1.0, 1200), *y = row_with_guard(D, 1, 1),
                  *yp = row_with_guard(D, 1, 1);
            int64_t idx[33];
            for (int64_t x = 0; x < n; x++) idx[x] = (x * 7 + 3) % rows;
            memcpy(y, acc, (size_t)D * sizeof *y);
            memcpy(yp, acc, (size_t)D * sizeof *yp);
            ks->math.gather_axpy(y, p, v, idx, n, D);
            pt->math.gather_axpy(yp, p, v, idx, n, D);
            for (int64_t d = 0; d < D; d++) {
                double e = acc[d], mag = fabs((double)acc[d]);
                for (int64_t x = 0; x < n; x++) {
                    e += (double)p[x] * v[idx[x] * D + d];
                    mag += fabs((double)p[x] * v[idx[x] * D + d]);
                }
                const double tol = (double)(n + 1) * FLT_EPSILON;
                cr_expect(close_to(y[d], e, tol, mag),
                          "%s gather_axpy D=%lld n=%lld [%lld]: %.9g, not %.9g", isa_label(ks),
                          (long long)D, (long long)n, (long long)d, y[d], e);
                cr_expect(close_to(y[d], yp[d], 2 * tol, mag), "%s gather_axpy vs portable",
                          isa_label(ks));
            }
            expect_guard(ks, "gather_axpy", y, D);
            free(v), free(p), free(acc), free(y), free(yp);
        }
}

/* vscale: one rounding per value, so every set gives the exact float product */
static void check_vscale(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.vscale);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *x = row_with_guard(n, 3.0, 1300 + (uint64_t)i), *y = row_with_guard(n, 1, 1);
        const float a = -0.7f;
        memcpy(y, x, (size_t)n * sizeof *y);
        ks->math.vscale(y, n, a);
        for (int64_t j = 0; j < n; j++)
            cr_expect_eq(y[j], (float)((double)x[j] * a), "%s vscale n=%lld [%lld]", isa_label(ks),
                         (long long)n, (long long)j);
        expect_guard(ks, "vscale", y, n);
        (void)pt;
        free(x), free(y);
    }
}

/* ---- peak group (peak_body.h) ---- */

/* The loop's value against float64: chains c start at seed + c·1e-3 and take acc·a + b each
 * round; every lane holds the same chains, so the value is lanes · Σ_c chain_c. The chain count
 * is flops_per_iter / (2·lanes). */
static void check_fma_loop(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->peak.fma_loop);
    const int64_t per = ks->peak_flops_per_iter;
    cr_assert(per > 0 && per % (2 * ks->lanes) == 0, "%s peak: flops_per_iter %lld for %d lanes",
              isa_label(ks), (long long)per, ks->lanes);
    const int chains = (int)(per / (2 * ks->lanes));
    const int64_t iters[] = {0, 1, 7, 2000};
    for (int t = 0; t < 4; t++) {
        const float seed = 0.25f;
        double want = 0;
        for (int c = 0; c < chains; c++) {
            double acc = (float)(seed + (float)c * 1e-3f);
            for (int64_t i = 0; i < iters[t]; i++) acc = acc * (double)0.999999f + (double)1e-7f;
            want += acc;
        }
        want *= ks->lanes;
        /* one float rounding per round and chain (FMA) or two (portable): iters·eps at most */
        const double tol = (double)(iters[t] + 1) * FLT_EPSILON;
        const float got = ks->peak.fma_loop(iters[t], seed);
        cr_expect(close_to(got, want, tol, want), "%s peak: fma_loop(%lld) = %.9g, not %.9g",
                  isa_label(ks), (long long)iters[t], got, want);
        /* the portable set has one lane: the same chains give 1/lanes of the value */
        if (pt->peak_flops_per_iter * ks->lanes == per)
            cr_expect(close_to(got, ks->lanes * pt->peak.fma_loop(iters[t], seed), 2 * tol, want),
                      "%s peak vs portable", isa_label(ks));
    }
    /* the value depends on the seed (the loop is not optimised away) */
    cr_expect_neq(ks->peak.fma_loop(100, 1.0f), ks->peak.fma_loop(100, 2.0f));
}

/* ---- the groups ---- */

typedef struct slot_case {
    const char *slot;
    void (*check)(const attn_kernel_set *ks, const attn_kernel_set *portable);
} slot_case;

/* Every case of a group on every set this machine supports (the portable set too: against
 * float64, and against itself, which must then agree exactly where checked). */
static void check_group(const slot_case *cases, int ncases)
{
    const attn_kernel_set *pt = attn_ks_of(ATTN_ISA_PORTABLE);
    cr_assert_not_null(pt);
    int sets = 0;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        if (!attn_isa_supported((attn_isa)i)) continue;
        const attn_kernel_set *ks = attn_ks_of((attn_isa)i);
        cr_assert_not_null(ks, "%s is supported but has no set", attn_isa_name((attn_isa)i));
        cr_assert_eq(ks->isa, (attn_isa)i);
        for (int c = 0; c < ncases; c++) cases[c].check(ks, pt);
        sets++;
    }
    cr_expect_geq(sets, 1);
}

/* sigmoid_row: σ(x + bias) up to the limit hi (below n, at n, past n, at 0), 0 after it; scores
 * of every sign and size, so that σ runs from ~1e-30 to 1 (relative error everywhere) */
static void check_sigmoid_row(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.sigmoid_row);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++)
        for (int lim = 0; lim < 4; lim++) {
            const int64_t hi = lim == 0 ? n : lim == 1 ? n / 2 : lim == 2 ? n + 5 : 0;
            float *x = row_with_guard(n, 8.0, 1400 + (uint64_t)i);
            float *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
            const float bias = -4.5f;
            memcpy(y, x, (size_t)n * sizeof *y);
            memcpy(yp, x, (size_t)n * sizeof *yp);
            ks->math.sigmoid_row(y, n, hi, bias);
            pt->math.sigmoid_row(yp, n, hi, bias);
            for (int64_t c = 0; c < n; c++) {
                const double u = (double)x[c] + bias, e = c < hi ? 1.0 / (1.0 + exp(-u)) : 0.0;
                const double tol = 4e-7 + fabs(u) * FLT_EPSILON / 2; /* u rounded to float */
                cr_expect(close_to(y[c], e, tol, e),
                          "%s sigmoid_row n=%lld hi=%lld [%lld]: "
                          "%.9g, not %.9g",
                          isa_label(ks), (long long)n, (long long)hi, (long long)c, y[c], e);
                cr_expect(close_to(y[c], yp[c], 2 * tol, e), "%s sigmoid_row vs portable",
                          isa_label(ks));
            }
            expect_guard(ks, "sigmoid_row", y, n);
            free(x), free(y), free(yp);
        }
}

/* sigmoid_grad: a·ds·p·(1 - p), p in [0, 1] */
static void check_sigmoid_grad(const attn_kernel_set *ks, const attn_kernel_set *pt)
{
    cr_assert_not_null(ks->math.sigmoid_grad);
    int64_t n;
    for (int i = 0; length_at(i, &n); i++) {
        float *p = tu_random(n + 1, 1.0, 1500 + (uint64_t)i);
        for (int64_t c = 0; c < n; c++) p[c] = 1.0f / (1.0f + expf(-p[c] * 4.0f));
        float *ds = row_with_guard(n, 2.0, 1600 + (uint64_t)i);
        float *y = row_with_guard(n, 1, 1), *yp = row_with_guard(n, 1, 1);
        const float a = 0.125f;
        memcpy(y, ds, (size_t)n * sizeof *y);
        memcpy(yp, ds, (size_t)n * sizeof *yp);
        ks->math.sigmoid_grad(p, y, n, a);
        pt->math.sigmoid_grad(p, yp, n, a);
        for (int64_t c = 0; c < n; c++) {
            const double e = (double)a * ds[c] * p[c] * (1.0 - (double)p[c]);
            cr_expect(close_to(y[c], e, 4e-7, fabs(e)),
                      "%s sigmoid_grad n=%lld [%lld]: %.9g, "
                      "not %.9g",
                      isa_label(ks), (long long)n, (long long)c, y[c], e);
            cr_expect(close_to(y[c], yp[c], 4e-7, fabs(e)), "%s sigmoid_grad vs portable",
                      isa_label(ks));
        }
        expect_guard(ks, "sigmoid_grad", y, n);
        free(p), free(ds), free(y), free(yp);
    }
}

#define GROUP_SIZE(t) ((int)(sizeof(t) / sizeof((t)[0])))

static const slot_case math_cases[] = {
    {"vmax", check_vmax},
    {"vexp_sum", check_vexp_sum},
    {"vexp_sum special values", check_vexp_sum_special},
    {"vsoftcap", check_vsoftcap},
    {"vdot", check_vdot},
    {"alibi_row", check_alibi_row},
    {"scores_grad", check_scores_grad},
    {"gather_axpy", check_gather_axpy},
    {"vscale", check_vscale},
    {"sigmoid_row", check_sigmoid_row},
    {"sigmoid_grad", check_sigmoid_grad},
};
Test(isa, math_slots_match_float64_and_portable)
{
    check_group(math_cases, GROUP_SIZE(math_cases));
}

static const slot_case peak_cases[] = {{"fma_loop", check_fma_loop}};
Test(isa, peak_slots_match_float64_and_portable)
{
    check_group(peak_cases, GROUP_SIZE(peak_cases));
}

/* ---- attn_isa_*: names, what is built and supported, selection, ATTN_ISA ---- */

Test(isa, names_parse_back)
{
    const int lanes[ATTN_ISA_COUNT] = {1, 8, 16};
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        attn_isa got = ATTN_ISA_COUNT;
        cr_expect(attn_isa_parse(attn_isa_name((attn_isa)i), &got));
        cr_expect_eq(got, (attn_isa)i, "%s parses to %d", attn_isa_name((attn_isa)i), got);
        const attn_kernel_set *ks = attn_ks_of((attn_isa)i);
        cr_expect_eq(attn_isa_built((attn_isa)i), ks != NULL);
        if (ks)
            cr_expect_eq(ks->lanes, lanes[i], "%s lanes %d", attn_isa_name((attn_isa)i), ks->lanes);
    }
    cr_expect_str_eq(attn_isa_name(ATTN_ISA_PORTABLE), "portable");
    cr_expect_str_eq(attn_isa_name(ATTN_ISA_AVX2), "avx2");
    cr_expect_str_eq(attn_isa_name(ATTN_ISA_AVX512), "avx512");
    cr_expect_str_eq(attn_isa_name(ATTN_ISA_COUNT), "?");
    cr_expect_str_eq(attn_isa_name((attn_isa)-1), "?");
    const char *bad[] = {"", "AVX2", "avx", "avx5120", "sse", " portable", "avx2 "};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        attn_isa got = ATTN_ISA_AVX2;
        cr_expect_not(attn_isa_parse(bad[b], &got), "'%s' parsed", bad[b]);
        cr_expect_eq(got, ATTN_ISA_AVX2, "'%s' changed the output", bad[b]);
    }
    attn_isa got = ATTN_ISA_AVX2;
    cr_expect_not(attn_isa_parse(NULL, &got));
}

Test(isa, portable_is_always_there_and_best_is_the_widest_supported)
{
    cr_expect(attn_isa_built(ATTN_ISA_PORTABLE));
    cr_expect(attn_isa_supported(ATTN_ISA_PORTABLE));
    cr_expect_not(attn_isa_built(ATTN_ISA_COUNT));
    cr_expect_not(attn_isa_supported(ATTN_ISA_COUNT));
    attn_isa best = attn_isa_best();
    cr_expect(attn_isa_supported(best));
    for (int i = best + 1; i < ATTN_ISA_COUNT; i++)
        cr_expect_not(attn_isa_supported((attn_isa)i), "%s is supported, best is %s",
                      attn_isa_name((attn_isa)i), attn_isa_name(best));
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        if (attn_isa_supported((attn_isa)i)) cr_expect(attn_isa_built((attn_isa)i));
#if !defined(__x86_64__) && !defined(__i386__)
    cr_expect_eq(best, ATTN_ISA_PORTABLE, "only the portable set runs off x86");
#endif
}

/* ---- the registry: every set complete, completion from the portable reference ---- */

Test(isa, every_registered_set_is_complete_with_its_facts)
{
    const int rows[ATTN_ISA_COUNT] = {4, 6, 6};
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        const attn_isa isa = (attn_isa)i;
        const attn_kernel_set *ks = attn_ks_of(isa);
        cr_expect_eq(attn_kernel_set_for(isa), attn_isa_supported(isa) ? ks : NULL, "%s",
                     attn_isa_name(isa));
        if (!ks) continue;
        cr_expect_eq(ks->isa, isa);
        cr_expect_eq(attn_kernel_set_missing(ks), 0, "%s: %d slots NULL after registration",
                     attn_isa_name(isa), attn_kernel_set_missing(ks));
        cr_expect_eq(ks->tile_rows, rows[i], "%s tile_rows %d", attn_isa_name(isa), ks->tile_rows);
        cr_expect_eq(ks->peak_flops_per_iter % (2 * ks->lanes), 0);
        cr_expect_eq(attn_ks_of(isa), ks, "registered once: the same table every time");
    }
    cr_expect_eq(attn_kernel_set_best(), attn_ks_of(attn_isa_best()));
    cr_expect_null(attn_kernel_set_for(ATTN_ISA_COUNT));
    cr_expect_null(attn_ks_of((attn_isa)-1));
}

Test(isa, a_set_with_null_slots_gets_the_portable_ones)
{
    const attn_kernel_set *pt = attn_ks_of(ATTN_ISA_PORTABLE), *best = attn_kernel_set_best();
    cr_assert_not_null(pt);
    cr_assert_not_null(best);
    attn_kernel_set s = *best; /* a set that leaves three slots to the reference */
    s.tile.attend = NULL, s.decode.chunk = NULL, s.convert.to_f32 = NULL;
    cr_expect_eq(attn_kernel_set_missing(&s), 3);
    cr_expect_eq(attn_kernel_set_complete(&s, pt), 3);
    cr_expect_eq(attn_kernel_set_missing(&s), 0);
    cr_expect(s.tile.attend == pt->tile.attend && s.decode.chunk == pt->decode.chunk &&
              s.convert.to_f32 == pt->convert.to_f32);
    cr_expect(s.tile.scores == best->tile.scores && s.math.vmax == best->math.vmax,
              "the slots it has stay its own");
    cr_expect_eq(s.lanes, best->lanes, "its facts stay its own");
    float h[4] = {1.5f, -2.0f, 0.25f, 3.0f}, out[4];
    uint16_t bf[4];
    s.convert.from_f32(ATTN_BF16, h, bf, 4);
    s.convert.to_f32(ATTN_BF16, bf, out, 4); /* the completed slot runs */
    for (int i = 0; i < 4; i++) cr_expect_eq(out[i], h[i]);
    attn_kernel_set empty = {.isa = ATTN_ISA_PORTABLE, .lanes = 1}; /* every slot left */
    const int all = attn_kernel_set_missing(&empty);
    cr_expect_gt(all, 40, "%d slots", all);
    cr_expect_eq(attn_kernel_set_complete(&empty, pt), all);
    cr_expect(empty.math.vmax == pt->math.vmax &&
              empty.backward.key_grads == pt->backward.key_grads &&
              empty.reformer.hash_rows == pt->reformer.hash_rows);
    cr_expect_eq(attn_kernel_set_complete(&empty, best), 0, "a complete set: nothing to fill");
}

Test(isa, select_puts_a_set_in_force_or_refuses_with_a_reason)
{
    char msg[ATTN_MSG_LEN];
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        const attn_isa isa = (attn_isa)i;
        msg[0] = '\0';
        const attn_status st = attn_isa_select(isa, msg, sizeof msg);
        if (attn_isa_supported(isa)) {
            cr_expect_eq(st, ATTN_OK, "%s: %s", attn_isa_name(isa), msg);
            cr_expect_eq(attn_isa_current(), isa);
            cr_expect_eq(attn_ks(), attn_ks_of(isa));
            continue;
        }
        const attn_isa before = attn_isa_current();
        cr_expect_eq(st, ATTN_EINVAL, "%s selected though unsupported", attn_isa_name(isa));
        cr_expect_eq(attn_isa_current(), before, "a refused select changed the set in force");
        cr_expect(strstr(msg, attn_isa_name(isa)) != NULL, "message names the ISA: %s", msg);
        cr_expect(strstr(msg, attn_isa_built(isa) ? "cannot run" : "not built") != NULL,
                  "message gives the reason: %s", msg);
        cr_expect(strchr(msg, '\n') == NULL, "one line: %s", msg);
    }
    cr_expect_eq(attn_isa_select(ATTN_ISA_COUNT, msg, sizeof msg), ATTN_EINVAL);
    cr_expect_eq(attn_isa_select(ATTN_ISA_PORTABLE, msg, sizeof msg), ATTN_OK);
    cr_expect_eq(attn_isa_current(), ATTN_ISA_PORTABLE);
    cr_expect_eq(attn_exec_init(1).ks, attn_ks_of(ATTN_ISA_PORTABLE),
                 "a new execution context runs on the set in force");
}

Test(isa, environment_variable_is_checked)
{
    char msg[ATTN_MSG_LEN];
    attn_isa got = ATTN_ISA_COUNT;
    unsetenv("ATTN_ISA");
    cr_expect_eq(attn_isa_from_env(&got, msg, sizeof msg), ATTN_OK);
    cr_expect_eq(got, ATTN_ISA_COUNT, "unset: output unchanged");
    setenv("ATTN_ISA", "", 1);
    cr_expect_eq(attn_isa_from_env(&got, msg, sizeof msg), ATTN_OK);
    cr_expect_eq(got, ATTN_ISA_COUNT, "empty: output unchanged");
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        const attn_isa isa = (attn_isa)i;
        setenv("ATTN_ISA", attn_isa_name(isa), 1);
        got = ATTN_ISA_COUNT;
        msg[0] = '\0';
        const attn_status st = attn_isa_from_env(&got, msg, sizeof msg);
        if (attn_isa_supported(isa)) {
            cr_expect_eq(st, ATTN_OK, "ATTN_ISA=%s: %s", attn_isa_name(isa), msg);
            cr_expect_eq(got, isa);
        } else {
            cr_expect_eq(st, ATTN_EINVAL, "ATTN_ISA=%s accepted though unsupported",
                         attn_isa_name(isa));
            cr_expect_eq(got, ATTN_ISA_COUNT);
            cr_expect(strstr(msg, attn_isa_name(isa)) != NULL, "%s", msg);
        }
    }
    setenv("ATTN_ISA", "neon", 1);
    got = ATTN_ISA_COUNT;
    cr_expect_eq(attn_isa_from_env(&got, msg, sizeof msg), ATTN_EINVAL);
    cr_expect_eq(got, ATTN_ISA_COUNT);
    cr_expect(strstr(msg, "neon") != NULL && strstr(msg, "portable") != NULL, "%s", msg);
    unsetenv("ATTN_ISA");
}

/* The first use of the kernels (attn_ks) follows ATTN_ISA; Criterion runs each test in a fresh
 * process, so nothing is in force yet here. */
Test(isa, first_use_follows_the_environment)
{
    setenv("ATTN_ISA", "portable", 1);
    cr_expect_eq(attn_isa_current(), ATTN_ISA_PORTABLE);
    unsetenv("ATTN_ISA");
}

Test(isa, first_use_without_environment_is_the_best)
{
    unsetenv("ATTN_ISA");
    cr_expect_eq(attn_isa_current(), attn_isa_best());
}
