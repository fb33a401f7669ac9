/*
 * convert_body.h — 16-bit storage (bf16, f16: attn_dtype) to float32, written once against the
 * vector layer (included by kernels/set_<isa>.c via set_body.h after vec_<isa>.h). O(n), no
 * scratch, one thread. bf16 -> f32: the 16 bits shifted into the top half (exact). f16 -> f32:
 * vcvtph2ps (F16C in the avx2 set, AVX-512F in the avx512 set; exact), the portable set half.h's
 * bit manipulation. f32 -> bf16/f16 (inputs, untimed): half.h's scalar rounding in every set.
 * vload_bf16 / vload_f16 load VW elements as a vf (used by decode_body.h to read K/V rows
 * directly), vload_bf16_eo 2·VW bf16 as their even and odd elements; cvt_to_f32 converts a row into
 * floats (the dense engine's prefill widening).
 */
#include "half.h"

#if VW == 16
static inline vf vload_bf16(const uint16_t *p)
{
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline vf vload_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
#elif VW == 8
static inline vf vload_bf16(const uint16_t *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
#ifdef __F16C__
static inline vf vload_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
#else
static inline vf vload_f16(const uint16_t *p)
{
    float f[8];
    for (int i = 0; i < 8; i++) f[i] = attn_f16_to_f32(p[i]);
    return vload(f);
}
#endif
#else
static inline vf vload_bf16(const uint16_t *p) { return attn_bf16_to_f32(*p); }
static inline vf vload_f16(const uint16_t *p) { return attn_f16_to_f32(*p); }
#endif

/* The 2·VW bf16 at p widened by one load, a shift and a mask: *even = elements 0, 2, .., 2·VW - 2,
 * *odd = elements 1, 3, .., 2·VW - 1 (each 32-bit word holds one of each; exact). */
static inline void vload_bf16_eo(const uint16_t *p, vf *even, vf *odd)
{
#if VW == 16
    const __m512i w = _mm512_loadu_si512(p);
    *even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    *odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int)0xffff0000u)));
#elif VW == 8
    const __m256i w = _mm256_loadu_si256((const __m256i *)p);
    *even = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    *odd = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int)0xffff0000u)));
#else
    *even = attn_bf16_to_f32(p[0]), *odd = attn_bf16_to_f32(p[1]);
#endif
}

/* dst[i] = src[i] as float, i < n, src of dtype t (ATTN_BF16 or ATTN_F16; f32 copies). */
static void cvt_to_f32(int t, const void *src, float *dst, int64_t n)
{
    const uint16_t *h = src;
    int64_t i = 0;
    if (t == ATTN_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
    } else if (t == ATTN_BF16) {
        for (; i + VW <= n; i += VW) vstore(dst + i, vload_bf16(h + i));
        for (; i < n; i++) dst[i] = attn_bf16_to_f32(h[i]);
    } else {
        for (; i + VW <= n; i += VW) vstore(dst + i, vload_f16(h + i));
        for (; i < n; i++) dst[i] = attn_f16_to_f32(h[i]);
    }
}

/* dst[i] = src[i] rounded to dtype t, i < n (f32 copies). */
static void cvt_from_f32(int t, const float *src, void *dst, int64_t n)
{
    uint16_t *h = dst;
    if (t == ATTN_F32) memcpy(dst, src, (size_t)n * sizeof(float));
    else if (t == ATTN_BF16)
        for (int64_t i = 0; i < n; i++) h[i] = attn_f32_to_bf16(src[i]);
    else
        for (int64_t i = 0; i < n; i++) h[i] = attn_f32_to_f16(src[i]);
}

#define CONVERT_SLOTS                                                                              \
    {                                                                                              \
        .to_f32 = cvt_to_f32, .from_f32 = cvt_from_f32                                             \
    }
