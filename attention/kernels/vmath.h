/*
 * vmath.h — the elementary functions on vectors, written once against the vector layer
 * (vec_<isa>.h, included before this by kernels/set_<isa>.c via set_body.h) and shared by every
 * body that needs them (math_body.h, linear_body.h, additive_body.h). Static inline; O(1) per lane.
 *   exp(x) = 2^n · p(r), n = round(x·log2 e), r = x - n·ln 2 (two-part ln 2), p a degree-6
 *   polynomial (Cephes expf coefficients): relative error < 2e-7 on [-87.3, 88.7]; exact 0 below
 *   -87.33 (and for -inf), NaN stays NaN.
 *   tanh(x) = x·P(x²)/Q(x²) (vtanh.h's coefficients, the scalar attn_tanh there), error < 4e-7.
 */
#ifndef ATTN_VMATH_H
#define ATTN_VMATH_H

#include "vtanh.h"

#define EXP_LO (-87.33f) /* below: result 0 (keeps 2^n normal) */
#define EXP_HI 88.37f

static inline float attn_exp_scalar(float x) /* the same algorithm, one value */
{
    if (x != x) return x; /* NaN */
    if (x < EXP_LO) return 0.0f;
    if (x > EXP_HI) x = EXP_HI;
    const float n = nearbyintf(x * 1.44269504088896341f);
    const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return ldexpf(p, (int)n);
}

static inline vf vexp(vf x)
{
    const vf lo = vset1(EXP_LO);
    const vf xc = vmin(vset1(EXP_HI), vmax(lo, x)); /* this order keeps NaN (x86 max/min, C) */
    const vf n = vround(vmul(xc, vset1(1.44269504088896341f)));
    vf r = vfnma(n, vset1(0.693359375f), xc);
    r = vfnma(n, vset1(-2.12194440e-4f), r);
    vf p = vset1(1.9875691500e-4f);
    p = vfma(p, r, vset1(1.3981999507e-3f));
    p = vfma(p, r, vset1(8.3334519073e-3f));
    p = vfma(p, r, vset1(4.1665795894e-2f));
    p = vfma(p, r, vset1(1.6666665459e-1f));
    p = vfma(p, r, vset1(5.0000001201e-1f));
    p = vfma(vmul(p, r), r, vadd(r, vset1(1.0f)));
    return vzero_below(vscale2(p, n), x, lo);
}

static inline vf vtanh(vf x)
{
    const vf c = vset1(ATTN_TANH_CLAMP);
    x = vmax(vmin(x, c), vsub(vzero(), c));
    const vf x2 = vmul(x, x);
    vf p = vfma(vset1(ATTN_TANH_P6), x2, vset1(ATTN_TANH_P5));
    p = vfma(p, x2, vset1(ATTN_TANH_P4));
    p = vfma(p, x2, vset1(ATTN_TANH_P3));
    p = vfma(p, x2, vset1(ATTN_TANH_P2));
    p = vfma(p, x2, vset1(ATTN_TANH_P1));
    p = vfma(p, x2, vset1(ATTN_TANH_P0));
    vf q = vfma(vset1(ATTN_TANH_Q3), x2, vset1(ATTN_TANH_Q2));
    q = vfma(q, x2, vset1(ATTN_TANH_Q1));
    q = vfma(q, x2, vset1(ATTN_TANH_Q0));
    return vdiv(vmul(x, p), q);
}

#endif
