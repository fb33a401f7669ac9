/*
 * vec_avx512.h — the vector layer of the AVX-512 set (F/BW/VL/DQ): vf is __m512 (VW 16).
 */
#ifndef ATTN_VEC_AVX512_H
#define ATTN_VEC_AVX512_H

#include <immintrin.h>

#define VW 16
#define VSET avx512
typedef __m512 vf;

static inline vf vzero(void) { return _mm512_setzero_ps(); }
static inline vf vset1(float x) { return _mm512_set1_ps(x); }
static inline vf vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void vstore(float *p, vf x) { _mm512_storeu_ps(p, x); }
static inline vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vfnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vabs(vf a) { return _mm512_abs_ps(a); }
static inline float vhsum(vf v) { return _mm512_reduce_add_ps(v); }
static inline float vhmax(vf v) { return _mm512_reduce_max_ps(v); }
static inline vf vround(vf x)
{
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vf vscale2(vf p, vf n) { return _mm512_scalef_ps(p, n); }
static inline vf vzero_below(vf x, vf v, vf lo)
{
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, lo, _CMP_NLT_UQ), x);
}

#endif
