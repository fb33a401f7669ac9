/*
 * vec_generic.h — the optional primitives of the vector layer, in plain C over its core
 * operations, for a layer that lacks them. Every vec_<isa>.h includes it last: it defines each
 * capability constant the layer left undefined as 0, and for those the primitive's plain form
 * (correct for any VW). The bodies test the constants as plain C (`if (VEC_HAS_HSUMS)`), so the
 * forms a set does not use compile to nothing; those they do use regardless (vload_bf16 ...)
 * are then just slower than a layer's own.
 *
 *   VEC_SCALAR       1: a vector is one float (vec_portable.h): bodies leave loops over elements
 *                    to the compiler's vectoriser where they have such a form
 *   VEC_HAS_BF16     vload_bf16(p): VW bf16 widened to a vf; vload_bf16_eo(p, &even, &odd): 2·VW
 *                    bf16 as their even and odd elements (one load, a shift and a mask per two)
 *   VEC_HAS_F16      vload_f16(p): VW IEEE binary16 widened (exact)
 *   VEC_HAS_TRANS8   vtrans8(kt, ldk, k, d0, n): kt[d·ldk + i] = k[i][d0 + d] for i < n, 0 for
 *                    n <= i < 8 (d < 8): an 8 × 8 transpose in registers; rows n.. not read
 *   VEC_HAS_TRANS16  vtrans16(kt, ldk, k, d0): the same, 16 × 16, all 16 rows read
 *   VEC_HAS_HSUMS    vhsums(a): lane i = Σ_lanes a[i], i < VW (VW vectors at once, cheaper than
 *                    VW vhsum)
 *   VEC_HAS_HALF     vhalf, VH floats (VW/2; without: VH = VW, vhalf = vf): vh_zero, vh_load,
 *                    vh_store, vh_mul, vh_fma, vlow(x) (lanes 0..VH-1 of x); 1 where a
 *                    half-width FMA costs half a whole one (512-bit FMAs issued as two halves)
 *   VEC_HAS_STREAM   vstream(p, x): a non-temporal store (p aligned to sizeof(vf));
 *                    vstore_fence(): this thread's such stores visible before its later stores.
 *                    Without: vstore, and no fence
 *   VEC_HAS_MASK     vmask, vmask_first(n) (the first min(n, VW) lanes), vload_mask(p, m) (lanes
 *                    outside m 0, not read), vstore_mask(p, x, m) (lanes outside m not written)
 *   VEC_HAS_DPBF16   vdot_bf16(acc, a, b): acc + the sums of adjacent pairs of products of the
 *                    2·VW bf16 at a and b (lane i: a[2i]·b[2i] + a[2i+1]·b[2i+1]) by vdpbf16ps;
 *                    a function using it is marked VEC_DPBF16_FN (the instruction's target) and
 *                    runs only where the CPU has it (attn_cpu_has_avx512bf16). Without: by FMAs
 * A capability a layer has: it defines the constant as 1 and the primitive before including this.
 */
#ifndef ATTN_VEC_GENERIC_H
#define ATTN_VEC_GENERIC_H

#include <stdint.h>
#include <string.h>

#include "half.h"

#ifndef VEC_SCALAR
#define VEC_SCALAR 0
#endif

#ifndef VEC_HAS_BF16
#define VEC_HAS_BF16 0
static inline vf vload_bf16(const uint16_t *p)
{
    float f[VW];
    for (int i = 0; i < VW; i++) f[i] = attn_bf16_to_f32(p[i]);
    return vload(f);
}
static inline void vload_bf16_eo(const uint16_t *p, vf *even, vf *odd)
{
    float e[VW], o[VW];
    for (int i = 0; i < VW; i++)
        e[i] = attn_bf16_to_f32(p[2 * i]), o[i] = attn_bf16_to_f32(p[2 * i + 1]);
    *even = vload(e), *odd = vload(o);
}
#endif

#ifndef VEC_HAS_F16
#define VEC_HAS_F16 0
static inline vf vload_f16(const uint16_t *p)
{
    float f[VW];
    for (int i = 0; i < VW; i++) f[i] = attn_f16_to_f32(p[i]);
    return vload(f);
}
#endif

#ifndef VEC_HAS_TRANS8
#define VEC_HAS_TRANS8 0
static inline void vtrans8(float *kt, int64_t ldk, const float *const *k, int64_t d0, int n)
{
    for (int d = 0; d < 8; d++)
        for (int i = 0; i < 8; i++) kt[d * ldk + i] = i < n ? k[i][d0 + d] : 0.0f;
}
#endif

#ifndef VEC_HAS_TRANS16
#define VEC_HAS_TRANS16 0
static inline void vtrans16(float *kt, int64_t ldk, const float *const *k, int64_t d0)
{
    for (int d = 0; d < 16; d++)
        for (int i = 0; i < 16; i++) kt[d * ldk + i] = k[i][d0 + d];
}
#endif

#ifndef VEC_HAS_HSUMS
#define VEC_HAS_HSUMS 0
static inline vf vhsums(const vf *a)
{
    float s[VW];
    for (int i = 0; i < VW; i++) s[i] = vhsum(a[i]);
    return vload(s);
}
#endif

#ifndef VEC_HAS_HALF
#define VEC_HAS_HALF 0
#define VH VW
typedef vf vhalf;
static inline vhalf vh_zero(void) { return vzero(); }
static inline vhalf vh_load(const float *p) { return vload(p); }
static inline void vh_store(float *p, vhalf x) { vstore(p, x); }
static inline vhalf vh_mul(vhalf a, vhalf b) { return vmul(a, b); }
static inline vhalf vh_fma(vhalf a, vhalf b, vhalf c) { return vfma(a, b, c); }
static inline vhalf vlow(vf x) { return x; }
#endif

#ifndef VEC_HAS_STREAM
#define VEC_HAS_STREAM 0
static inline void vstream(float *p, vf x) { vstore(p, x); }
static inline void vstore_fence(void) {}
#endif

#ifndef VEC_HAS_MASK
#define VEC_HAS_MASK 0
typedef int vmask; /* lanes 0 .. m-1 */
static inline vmask vmask_first(int64_t n) { return (vmask)(n < VW ? n : VW); }
static inline vf vload_mask(const float *p, vmask m)
{
    float f[VW] = {0};
    memcpy(f, p, (size_t)m * sizeof(float));
    return vload(f);
}
static inline void vstore_mask(float *p, vf x, vmask m)
{
    float f[VW];
    vstore(f, x);
    memcpy(p, f, (size_t)m * sizeof(float));
}
#endif

#ifndef VEC_HAS_DPBF16
#define VEC_HAS_DPBF16 0
#define VEC_DPBF16_FN
static inline vf vdot_bf16(vf acc, const uint16_t *a, const uint16_t *b)
{
    vf ae, ao, be, bo;
    vload_bf16_eo(a, &ae, &ao);
    vload_bf16_eo(b, &be, &bo);
    return vfma(ao, bo, vfma(ae, be, acc));
}
#endif

#endif
