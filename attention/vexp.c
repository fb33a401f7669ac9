/*
 * vexp.c — vector max and exp-with-sum over float rows (the softmax inner loops).
 *   exp(x) = 2^n · p(r), n = round(x·log2 e), r = x - n·ln 2 (two-part ln 2), p a degree-6
 *   polynomial (Cephes expf coefficients): relative error < 2e-7 on [-87.3, 88.7].
 *   softcap: C·tanh(x/C) with the rational tanh of vtanh.h (error < 4e-7).
 *   AVX2+FMA: 8 lanes; elsewhere the same algorithms in scalar C.   time O(n)
 */
#include <math.h>

#include "kernels.h"
#include "vtanh.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

#define EXP_LO (-87.33f) /* below: result 0 (keeps 2^n normal) */
#define EXP_HI 88.37f

static inline float exp_scalar(float x)
{
    if (x < EXP_LO) return 0.0f;
    if (x > EXP_HI) x = EXP_HI;
    float n = nearbyintf(x * 1.44269504088896341f);
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return ldexpf(p, (int)n);
}

#ifdef __AVX2__
static inline __m256 exp_avx2(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(EXP_LO);
    __m256 dead = _mm256_cmp_ps(x, lo, _CMP_LT_OQ); /* also true for -inf; NaN stays NaN below */
    x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(EXP_HI));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(dead, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float hmax(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif

float attn_vmax(const float *x, int64_t n)
{
    float m = -INFINITY;
    int64_t j = 0;
#ifdef __AVX2__
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    for (; j + 16 <= n; j += 16) {
        m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + j));
        m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + j + 8));
    }
    m = hmax(_mm256_max_ps(m0, m1));
#endif
    for (; j < n; j++) m = x[j] > m ? x[j] : m;
    return m;
}

float attn_vexp_sum(float *x, int64_t n, float shift)
{
    float sum = 0.0f;
    int64_t j = 0;
#ifdef __AVX2__
    const __m256 sh = _mm256_set1_ps(shift);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    for (; j + 16 <= n; j += 16) {
        __m256 e0 = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + j), sh));
        __m256 e1 = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), sh));
        _mm256_storeu_ps(x + j, e0);
        _mm256_storeu_ps(x + j + 8, e1);
        s0 = _mm256_add_ps(s0, e0);
        s1 = _mm256_add_ps(s1, e1);
    }
    sum = hsum(_mm256_add_ps(s0, s1));
#endif
    for (; j < n; j++) {
        x[j] = exp_scalar(x[j] - shift);
        sum += x[j];
    }
    return sum;
}

void attn_vsoftcap(float *x, int64_t n, float cap)
{
    const float inv = 1.0f / cap;
    int64_t j = 0;
#ifdef __AVX2__
    const __m256 c = _mm256_set1_ps(cap), ic = _mm256_set1_ps(inv);
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j,
                         _mm256_mul_ps(c, attn_tanh8(_mm256_mul_ps(_mm256_loadu_ps(x + j), ic))));
#endif
    for (; j < n; j++) x[j] = cap * attn_tanh(x[j] * inv);
}
