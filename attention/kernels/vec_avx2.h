/*
 * vec_avx2.h — the vector layer of the AVX2+FMA(+F16C) set: vf is __m256 (VW 8). The core
 * operations every layer has, then the optional primitives this one has (vec_generic.h lists them
 * and gives the rest).
 */
#ifndef ATTN_VEC_AVX2_H
#define ATTN_VEC_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#define VW 8
#define VSET avx2
typedef __m256 vf;

static inline vf vzero(void) { return _mm256_setzero_ps(); }
static inline vf vset1(float x) { return _mm256_set1_ps(x); }
static inline vf vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void vstore(float *p, vf x) { _mm256_storeu_ps(p, x); }
static inline vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vfnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vabs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline float vhsum(vf v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vhmax(vf v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline vf vround(vf x)
{
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vf vscale2(vf p, vf n)
{
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
/* x in the lanes where v >= lo (ordered), else 0 (also where v is -inf) */
static inline vf vzero_below(vf x, vf v, vf lo)
{
    return _mm256_andnot_ps(_mm256_cmp_ps(v, lo, _CMP_LT_OQ), x);
}

/* ---- optional primitives (vec_generic.h) ---- */

#define VEC_HAS_BF16 1
static inline vf vload_bf16(const uint16_t *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline void vload_bf16_eo(const uint16_t *p, vf *even, vf *odd)
{
    const __m256i w = _mm256_loadu_si256((const __m256i *)p);
    *even = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    *odd = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int)0xffff0000u)));
}

#ifdef __F16C__
#define VEC_HAS_F16 1
static inline vf vload_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
#endif

#define VEC_HAS_STREAM 1
static inline void vstream(float *p, vf x) { _mm256_stream_ps(p, x); }

#include "vec_x86.h" /* vtrans8, vstore_fence */

#include "vec_generic.h"

#endif
