/*
 * math_body.h — the vector loops over float rows, written once against the vector layer
 * (vec_<isa>.h, included before this by kernels/set_<isa>.c via set_body.h): every function is
 * static and the set file puts them in its table (MATH_SLOTS). Each loop: O(n) time, no scratch,
 * one thread. exp and tanh: vexp, vtanh of vmath.h (shared with the other bodies); softcap
 * C·tanh(x/C); sigmoid 1/(1 + exp(-x)) (not FlashSigmoid's 0.5·(1 + tanh(x/2)), whose 1 + tanh
 * cancels: a σ near 1/n keeps only ~1e-3 of relative precision in float32).
 */
#include "vmath.h"

static float k_vmax(const float *x, int64_t n)
{
    vf m0 = vset1(-INFINITY), m1 = m0;
    int64_t j = 0;
    for (; j + 2 * VW <= n; j += 2 * VW) {
        m0 = vmax(m0, vload(x + j));
        m1 = vmax(m1, vload(x + j + VW));
    }
    float m = vhmax(vmax(m0, m1));
    for (; j < n; j++) m = x[j] > m ? x[j] : m;
    return m;
}

static float k_vexp_sum(float *x, int64_t n, float shift)
{
    const vf sh = vset1(shift);
    vf s0 = vzero(), s1 = s0;
    int64_t j = 0;
    for (; j + 2 * VW <= n; j += 2 * VW) {
        const vf e0 = vexp(vsub(vload(x + j), sh)), e1 = vexp(vsub(vload(x + j + VW), sh));
        vstore(x + j, e0);
        vstore(x + j + VW, e1);
        s0 = vadd(s0, e0);
        s1 = vadd(s1, e1);
    }
    for (; j + VW <= n; j += VW) {
        const vf e0 = vexp(vsub(vload(x + j), sh));
        vstore(x + j, e0);
        s0 = vadd(s0, e0);
    }
    float sum = vhsum(vadd(s0, s1));
    for (; j < n; j++) {
        x[j] = attn_exp_scalar(x[j] - shift);
        sum += x[j];
    }
    return sum;
}

static void k_vsoftcap(float *x, int64_t n, float cap)
{
    const float inv = 1.0f / cap;
    const vf c = vset1(cap), ic = vset1(inv);
    int64_t j = 0;
    for (; j + VW <= n; j += VW) vstore(x + j, vmul(c, vtanh(vmul(vload(x + j), ic))));
    for (; j < n; j++) x[j] = cap * attn_tanh(x[j] * inv);
}

static float k_vdot(const float *a, const float *b, int64_t n)
{
    vf a0 = vzero(), a1 = vzero();
    int64_t d = 0;
    for (; d + 2 * VW <= n; d += 2 * VW) {
        a0 = vfma(vload(a + d), vload(b + d), a0);
        a1 = vfma(vload(a + d + VW), vload(b + d + VW), a1);
    }
    for (; d + VW <= n; d += VW) a0 = vfma(vload(a + d), vload(b + d), a0);
    float sum = vhsum(vadd(a0, a1));
    for (; d < n; d++) sum += a[d] * b[d];
    return sum;
}

static void k_alibi_row(float *x, const float *kpos, int64_t n, float pos, float slope)
{
    const vf p = vset1(pos), m = vset1(slope);
    int64_t c = 0;
    for (; c + VW <= n; c += VW)
        vstore(x + c, vfnma(m, vabs(vsub(p, vload(kpos + c))), vload(x + c)));
    for (; c < n; c++) x[c] -= slope * fabsf(pos - kpos[c]);
}

static void k_scores_grad(const float *p, float *ds, const float *cap, float delta, int64_t n)
{
    const vf dl = vset1(delta);
    int64_t j = 0;
    for (; j + VW <= n; j += VW) {
        vf g = vmul(vload(p + j), vsub(vload(ds + j), dl));
        if (cap) g = vmul(g, vload(cap + j));
        vstore(ds + j, g);
    }
    for (; j < n; j++) ds[j] = p[j] * (ds[j] - delta) * (cap ? cap[j] : 1.0f);
}

static void k_gather_axpy(float *acc, const float *p, const float *v, const int64_t *idx, int64_t n,
                          int64_t D)
{
    int64_t d0 = 0;
    for (; d0 + VW <= D; d0 += VW) { /* VW accumulators kept in a register over the rows */
        vf a = vload(acc + d0);
        for (int64_t x = 0; x < n; x++) a = vfma(vset1(p[x]), vload(v + idx[x] * D + d0), a);
        vstore(acc + d0, a);
    }
    for (int64_t x = 0; x < n && d0 < D; x++) {
        const float *vx = v + idx[x] * D, px = p[x];
        for (int64_t d = d0; d < D; d++) acc[d] += px * vx[d];
    }
}

static void k_vscale(float *x, int64_t n, float a)
{
    const vf va = vset1(a);
    int64_t j = 0;
    for (; j + VW <= n; j += VW) vstore(x + j, vmul(vload(x + j), va));
    for (; j < n; j++) x[j] *= a;
}

static void k_sigmoid_row(float *x, int64_t n, int64_t hi, float bias)
{
    const int64_t e = hi < n ? (hi > 0 ? hi : 0) : n;
    const vf nb = vset1(-bias), one = vset1(1.0f);
    int64_t c = 0;
    for (; c + VW <= e; c += VW) vstore(x + c, vdiv(one, vadd(one, vexp(vsub(nb, vload(x + c))))));
    for (; c < e; c++) x[c] = 1.0f / (1.0f + attn_exp_scalar(-bias - x[c]));
    if (e < n) memset(x + e, 0, (size_t)(n - e) * sizeof(float));
}

static void k_sigmoid_grad(const float *p, float *ds, int64_t n, float a)
{
    const vf va = vset1(a), one = vset1(1.0f);
    int64_t c = 0;
    for (; c + VW <= n; c += VW) {
        const vf pc = vload(p + c);
        vstore(ds + c, vmul(vmul(va, vload(ds + c)), vmul(pc, vsub(one, pc))));
    }
    for (; c < n; c++) ds[c] = a * ds[c] * (p[c] * (1.0f - p[c]));
}

#define MATH_SLOTS                                                                                 \
    {                                                                                              \
        .vmax = k_vmax, .vexp_sum = k_vexp_sum, .vsoftcap = k_vsoftcap, .vdot = k_vdot,            \
        .alibi_row = k_alibi_row, .scores_grad = k_scores_grad, .gather_axpy = k_gather_axpy,      \
        .vscale = k_vscale, .sigmoid_row = k_sigmoid_row, .sigmoid_grad = k_sigmoid_grad,          \
    }
