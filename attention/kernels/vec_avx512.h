/*
 * vec_avx512.h — the vector layer of the AVX-512 set (F/BW/VL/DQ, with AVX2, FMA, F16C): vf is
 * __m512 (VW 16). The core operations every layer has, then the optional primitives this one has
 * (vec_generic.h lists them and gives the rest).
 */
#ifndef ATTN_VEC_AVX512_H
#define ATTN_VEC_AVX512_H

#include <immintrin.h>
#include <stdint.h>

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

/* ---- optional primitives (vec_generic.h) ---- */

#define VEC_HAS_BF16 1
static inline vf vload_bf16(const uint16_t *p)
{
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline void vload_bf16_eo(const uint16_t *p, vf *even, vf *odd)
{
    const __m512i w = _mm512_loadu_si512(p);
    *even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    *odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int)0xffff0000u)));
}

#define VEC_HAS_F16 1
static inline vf vload_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

/* kt[d·ldk + i] = k[i][d0 + d] (i, d < 16): one 16 × 16 transpose in registers (half the
 * shuffles, loads and stores of two 8 × 8 ones per 8 × 16). After the two in-lane steps, r[4g +
 * m] holds in its 128-bit lane L the column 4L + (0, 2, 1, 3)[m] of rows 4g..4g + 3; the lanes of
 * r[m], r[4 + m], r[8 + m], r[12 + m] are then transposed as 4 × 4 blocks. */
#define VEC_HAS_TRANS16 1
static inline void vtrans16(float *kt, int64_t ldk, const float *const *k, int64_t d0)
{
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(k[i] + d0);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int j = 0; j < 2; j++) {
            r[i + j] = _mm512_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
            r[i + j + 2] = _mm512_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
    static const int col[4] = {0, 2, 1, 3};
    for (int m = 0; m < 4; m++) {
        const __m512 u0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x44);
        const __m512 u1 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xEE);
        const __m512 u2 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x44);
        const __m512 u3 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xEE);
        _mm512_storeu_ps(kt + col[m] * ldk, _mm512_shuffle_f32x4(u0, u2, 0x88));
        _mm512_storeu_ps(kt + (4 + col[m]) * ldk, _mm512_shuffle_f32x4(u0, u2, 0xDD));
        _mm512_storeu_ps(kt + (8 + col[m]) * ldk, _mm512_shuffle_f32x4(u1, u3, 0x88));
        _mm512_storeu_ps(kt + (12 + col[m]) * ldk, _mm512_shuffle_f32x4(u1, u3, 0xDD));
    }
}

/* Lane i of the result = Σ_lanes a[i], i < 16: a transposing tree of 45 shuffles and adds. */
#define VEC_HAS_HSUMS 1
static inline vf vhsums(const vf *a)
{
    vf t[8], u[4], w[2];
    for (int i = 0; i < 8; i++) /* lanes 0, 2 of each 128-bit block: a[2i], 1, 3: a[2i + 1] */
        t[i] = vadd(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]),
                    _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; i++) { /* each 128-bit block: a[4i .. 4i + 3] (that block's part) */
        const __m512d x = _mm512_castps_pd(t[2 * i]), y = _mm512_castps_pd(t[2 * i + 1]);
        u[i] = vadd(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                    _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    for (int i = 0; i < 2; i++) /* blocks: u[2i] (0+1, 2+3), u[2i + 1] (0+1, 2+3) */
        w[i] = vadd(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                    _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    return vadd(_mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                _mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Half vectors: __m256 (AMD Zen 4 issues a 512-bit FMA as two 256-bit halves, so a half costs
 * half). */
#define VEC_HAS_HALF 1
#define VH 8
typedef __m256 vhalf;
static inline vhalf vh_zero(void) { return _mm256_setzero_ps(); }
static inline vhalf vh_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vh_store(float *p, vhalf x) { _mm256_storeu_ps(p, x); }
static inline vhalf vh_mul(vhalf a, vhalf b) { return _mm256_mul_ps(a, b); }
static inline vhalf vh_fma(vhalf a, vhalf b, vhalf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vhalf vlow(vf x) { return _mm512_castps512_ps256(x); }

#define VEC_HAS_STREAM 1
static inline void vstream(float *p, vf x) { _mm512_stream_ps(p, x); }

#define VEC_HAS_MASK 1
typedef __mmask16 vmask;
static inline vmask vmask_first(int64_t n) { return (vmask)(n >= 16 ? 0xFFFF : (1u << n) - 1); }
static inline vf vload_mask(const float *p, vmask m) { return _mm512_maskz_loadu_ps(m, p); }
static inline void vstore_mask(float *p, vf x, vmask m) { _mm512_mask_storeu_ps(p, m, x); }

/* vdpbf16ps (AVX512_BF16): GCC 10 on; a function that uses it is compiled for that target. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define VEC_HAS_DPBF16 1
#define VEC_DPBF16_FN __attribute__((target("avx512bf16")))
VEC_DPBF16_FN static inline vf vdot_bf16(vf acc, const uint16_t *a, const uint16_t *b)
{
    return _mm512_dpbf16_ps(acc, (__m512bh)_mm512_loadu_si512(a), (__m512bh)_mm512_loadu_si512(b));
}
#endif

#include "vec_x86.h" /* vtrans8, vstore_fence */

#include "vec_generic.h"

#endif
