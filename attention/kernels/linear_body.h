/*
 * linear_body.h — the elementwise loops of linear attention (feature_maps.c, linear.c,
 * linear_backward.c), written once against the vector layer (vec_<isa>.h, included before this
 * by kernels/set_<isa>.c via set_body.h); the set file puts them in its table (LINEAR_SLOTS). Each
 * loop: O(n) time, no scratch, one thread; the flops rule is the callers' (feature_maps.c,
 * linear.c). feature maps: elu + 1 (exp of vmath.h), relu, their gradients; favor's shifted
 * logarithms and exponentials; trig's (sin, cos) pairs, vsincos below. sin, cos (vsincos): x =
 * j·π/2 + r, j = round(x·2/π), r by a three-part π/2 (Cephes DP1-3, with FMA), |r| <= π/4; sin r,
 * cos r by Cephes sinf/cosf polynomials, then the quadrant j mod 4 picks and signs them (by exact
 * 0/1 arithmetic, no integer lanes). Error < 2 ulp for |x| <= SINCOS_MAX; a vector with a larger
 * (or non-finite) lane goes to libm sinf/cosf. rows: x ∘ r, x + c, acc / den, y + a·x, a·x copies
 * (the scan's state and output rows).
 */
#include "vmath.h"

#define SINCOS_MAX 8192.0f

/* s = sin x, c = cos x, |x| <= SINCOS_MAX (the caller checks). */
static inline void vsincos(vf x, vf *s, vf *c)
{
    const vf j = vround(vmul(x, vset1(0.636619772367581343f)));
    vf r = vfnma(j, vset1(1.5703125f), x);
    r = vfnma(j, vset1(4.837512969970703125e-4f), r);
    r = vfnma(j, vset1(7.54978995489188216e-8f), r);
    const vf z = vmul(r, r);
    vf ps = vfma(vset1(-1.9515295891e-4f), z, vset1(8.3321608736e-3f));
    ps = vfma(ps, z, vset1(-1.6666654611e-1f));
    const vf sr = vfma(vmul(ps, z), r, r);
    vf pc = vfma(vset1(2.443315711809948e-5f), z, vset1(-1.388731625493765e-3f));
    pc = vfma(pc, z, vset1(4.166664568298827e-2f));
    const vf cr = vfma(vmul(pc, z), z, vfnma(vset1(0.5f), z, vset1(1.0f)));
    /* q = j mod 4 in {0,1,2,3}; odd = q & 1, hi = q >> 1, as floats (round of exact quarters) */
    const vf q = vfnma(vset1(4.0f), vround(vfma(j, vset1(0.25f), vset1(-0.375f))), j);
    const vf hi = vround(vfma(q, vset1(0.5f), vset1(-0.25f)));
    const vf odd = vfnma(vset1(2.0f), hi, q), even = vsub(vset1(1.0f), odd);
    const vf sb = vfma(odd, cr, vmul(even, sr)), cb = vfma(odd, sr, vmul(even, cr));
    /* sin: - for q >= 2; cos: - for q = 1, 2 (odd xor hi) */
    const vf sgn_c =
        vfnma(vset1(2.0f), vfnma(vmul(vset1(2.0f), odd), hi, vadd(odd, hi)), vset1(1.0f));
    *s = vmul(sb, vfnma(vset1(2.0f), hi, vset1(1.0f)));
    *c = vmul(cb, sgn_c);
}

/* phi = elu(x) + 1: x + 1 where x > 0, exp(x) elsewhere. */
static void k_elu1(const float *x, float *phi, int64_t n)
{
    const vf zero = vzero();
    int64_t e = 0;
    for (; e + VW <= n; e += VW) {
        const vf v = vload(x + e); /* exp(min(x, 0)) + max(x, 0): 1 + x above 0 */
        vstore(phi + e, vadd(vexp(vmin(v, zero)), vmax(v, zero)));
    }
    for (; e < n; e++) phi[e] = x[e] > 0.0f ? x[e] + 1.0f : attn_exp_scalar(x[e]);
}

static void k_relu(const float *x, float *phi, int64_t n)
{
    const vf zero = vzero();
    int64_t e = 0;
    for (; e + VW <= n; e += VW) vstore(phi + e, vmax(vload(x + e), zero));
    for (; e < n; e++) phi[e] = x[e] > 0.0f ? x[e] : 0.0f;
}

/* dx = dphi where x > 0, else dphi·phi (elu) or 0 (relu). */
static void k_feature_grad(const float *x, const float *phi, const float *dphi, float *dx,
                           int64_t n, bool elu)
{
    int64_t e = 0;
    for (; e + VW <= n; e += VW) { /* x > 0: phi = x + 1 > 1, elu's exp(x <= 0) <= 1 */
        const vf g = vload(dphi + e), v = vload(x + e);
        const vf pos = vmin(vmax(vmul(v, vset1(INFINITY)), vzero()), vset1(1.0f)); /* 1 or 0 */
        const vf neg = elu ? vmul(g, vload(phi + e)) : vzero();
        vstore(dx + e, vfma(pos, g, vmul(vsub(vset1(1.0f), pos), neg)));
    }
    for (; e < n; e++) dx[e] = x[e] > 0.0f ? dphi[e] : (elu ? dphi[e] * phi[e] : 0.0f);
}

/* favor keys: row[l] -= h, cmax[l] = max(cmax[l], row[l]). */
static void k_sub_max(float *row, float h, float *cmax, int64_t n)
{
    const vf vh = vset1(h);
    int64_t l = 0;
    for (; l + VW <= n; l += VW) {
        const vf v = vsub(vload(row + l), vh);
        vstore(row + l, v);
        vstore(cmax + l, vmax(v, vload(cmax + l)));
    }
    for (; l < n; l++) {
        row[l] -= h;
        cmax[l] = row[l] > cmax[l] ? row[l] : cmax[l];
    }
}

/* y[l] = exp(x[l] - c[l]) (y may be x). */
static void k_exp_sub(const float *x, const float *c, float *y, int64_t n)
{
    int64_t l = 0;
    for (; l + VW <= n; l += VW) vstore(y + l, vexp(vsub(vload(x + l), vload(c + l))));
    for (; l < n; l++) y[l] = attn_exp_scalar(x[l] - c[l]);
}

/* trig: row[m + l] = wt·cos(row[l]), row[l] = wt·sin(row[l]), l < m. */
static void k_sincos(float *row, int64_t m, float wt)
{
    const vf w = vset1(wt);
    int64_t l = 0;
    for (; l + VW <= m; l += VW) {
        const vf u = vload(row + l);
        if (!(vhmax(vabs(u)) <= SINCOS_MAX)) break; /* a large or non-finite lane: libm */
        vf s, c;
        vsincos(u, &s, &c);
        vstore(row + m + l, vmul(w, c));
        vstore(row + l, vmul(w, s));
    }
    for (; l < m; l++) {
        const float u = row[l];
        row[m + l] = wt * cosf(u);
        row[l] = wt * sinf(u);
    }
}

/* trig's gradient of the projections, in place: g[l] = g[l]·p[m + l] - g[m + l]·p[l], l < m. */
static void k_trig_du(float *g, const float *p, int64_t m)
{
    int64_t l = 0;
    for (; l + VW <= m; l += VW)
        vstore(g + l, vfnma(vload(g + m + l), vload(p + l), vmul(vload(g + l), vload(p + m + l))));
    for (; l < m; l++) g[l] = g[l] * p[m + l] - g[m + l] * p[l];
}

/* x[l] += c[l] */
static void k_add(float *x, const float *c, int64_t n)
{
    int64_t l = 0;
    for (; l + VW <= n; l += VW) vstore(x + l, vadd(vload(x + l), vload(c + l)));
    for (; l < n; l++) x[l] += c[l];
}

/* x[l] *= r[l] */
static void k_mul(float *x, const float *r, int64_t n)
{
    int64_t l = 0;
    for (; l + VW <= n; l += VW) vstore(x + l, vmul(vload(x + l), vload(r + l)));
    for (; l < n; l++) x[l] *= r[l];
}

/* y[e] = a·x[e] (y may be x) */
static void k_scale_copy(float *y, const float *x, float a, int64_t n)
{
    const vf va = vset1(a);
    int64_t e = 0;
    for (; e + VW <= n; e += VW) vstore(y + e, vmul(va, vload(x + e)));
    for (; e < n; e++) y[e] = a * x[e];
}

/* y[e] += a·x[e] */
static void k_axpy(float *y, float a, const float *x, int64_t n)
{
    const vf va = vset1(a);
    int64_t e = 0;
    for (; e + VW <= n; e += VW) vstore(y + e, vfma(va, vload(x + e), vload(y + e)));
    for (; e < n; e++) y[e] += a * x[e];
}

/* out[d] = acc[d] / den */
static void k_div(float *out, const float *acc, float den, int64_t n)
{
    const vf vd = vset1(den);
    int64_t d = 0;
    for (; d + VW <= n; d += VW) vstore(out + d, vdiv(vload(acc + d), vd));
    for (; d < n; d++) out[d] = acc[d] / den;
}

/* The backward's row: g[d] = dt[d] / den; returns -Σ g[d]·acc[d] / den. */
static float k_grad_row(float *g, const float *dt, const float *acc, float den, int64_t n)
{
    const vf vd = vset1(den);
    vf s = vzero();
    int64_t d = 0;
    for (; d + VW <= n; d += VW) {
        const vf gd = vdiv(vload(dt + d), vd);
        vstore(g + d, gd);
        s = vfma(gd, vdiv(vload(acc + d), vd), s);
    }
    float sum = vhsum(s);
    for (; d < n; d++) {
        g[d] = dt[d] / den;
        sum += g[d] * acc[d] / den;
    }
    return -sum;
}

#define LINEAR_SLOTS                                                                               \
    {                                                                                              \
        .elu1 = k_elu1, .relu = k_relu, .feature_grad = k_feature_grad, .sub_max = k_sub_max,      \
        .exp_sub = k_exp_sub, .sincos = k_sincos, .trig_du = k_trig_du, .add = k_add,              \
        .mul = k_mul, .scale_copy = k_scale_copy, .axpy = k_axpy, .div = k_div,                    \
        .grad_row = k_grad_row,                                                                    \
    }
