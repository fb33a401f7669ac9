/*
 * vtanh.h — tanh in float32 for the kernels (header-only, inlined into the loops that use it):
 *   tanh(x) ≈ x·P(x²)/Q(x²), P of degree 6 and Q of degree 3 in x² (a 13/6 odd/even rational,
 *   the coefficients of Eigen's generic_fast_tanh_float), x clamped to [-9, 9] (tanh rounds to
 *   ±1 in float32 beyond). Absolute and relative error below 4e-7 everywhere (measured against
 *   double tanh on a 1e-5 grid of [-12, 12]: 3.3e-7 with FMA, 4.0e-7 without; exact 0 at 0).
 *   Cost per value: 1 mul (x²), 6 FMA + 1 mul (P), 3 FMA (Q), 1 division, 2 compares (clamp).
 *   attn_tanh: scalar, here; the same algorithm on vectors: vtanh in kernels/vmath.h (every kernel
 *   set), used by the bodies (math_body.h's softcap, additive_body.h's pairwise scores).
 */
#ifndef ATTN_VTANH_H
#define ATTN_VTANH_H

#define ATTN_TANH_CLAMP 9.0f
#define ATTN_TANH_P6 (-2.76076847742355e-16f)
#define ATTN_TANH_P5 2.00018790482477e-13f
#define ATTN_TANH_P4 (-8.60467152213735e-11f)
#define ATTN_TANH_P3 5.12229709037114e-08f
#define ATTN_TANH_P2 1.48572235717979e-05f
#define ATTN_TANH_P1 6.37261928875436e-04f
#define ATTN_TANH_P0 4.89352455891786e-03f
#define ATTN_TANH_Q3 1.19825839466702e-06f
#define ATTN_TANH_Q2 1.18534705686654e-04f
#define ATTN_TANH_Q1 2.26843463243900e-03f
#define ATTN_TANH_Q0 4.89352518554385e-03f

static inline float attn_tanh(float x)
{
    x = x < -ATTN_TANH_CLAMP ? -ATTN_TANH_CLAMP : (x > ATTN_TANH_CLAMP ? ATTN_TANH_CLAMP : x);
    const float x2 = x * x;
    float p = ATTN_TANH_P6;
    p = p * x2 + ATTN_TANH_P5;
    p = p * x2 + ATTN_TANH_P4;
    p = p * x2 + ATTN_TANH_P3;
    p = p * x2 + ATTN_TANH_P2;
    p = p * x2 + ATTN_TANH_P1;
    p = p * x2 + ATTN_TANH_P0;
    float q = ATTN_TANH_Q3;
    q = q * x2 + ATTN_TANH_Q2;
    q = q * x2 + ATTN_TANH_Q1;
    q = q * x2 + ATTN_TANH_Q0;
    return x * p / q;
}

#endif
