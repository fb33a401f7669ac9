/*
 * vec_x86.h — primitives both x86 vector layers (vec_avx2.h, vec_avx512.h) share: 256-bit forms
 * that need AVX2 only. Included by those layers, after their core operations; see vec_generic.h
 * for each primitive's contract.
 */
#ifndef ATTN_VEC_X86_H
#define ATTN_VEC_X86_H

#include <immintrin.h>
#include <stdint.h>

/* kt[d·ldk + i] = k[i][d0 + d] for i < n, 0 for n <= i < 8 (d < 8): one 8 × 8 transpose in
 * registers, rows from n on not read. */
#define VEC_HAS_TRANS8 1
static inline void vtrans8(float *kt, int64_t ldk, const float *const *k, int64_t d0, int n)
{
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = i < n ? _mm256_loadu_ps(k[i] + d0) : _mm256_setzero_ps();
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; j++) {
            r[i + j] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
            r[i + j + 2] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
    /* r[0..3]: columns (0, 4), (2, 6), (1, 5), (3, 7) of rows 0-3 (low, high 128-bit half);
     * r[4..7] the same of rows 4-7 */
    static const int col[4] = {0, 2, 1, 3};
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(kt + col[i] * ldk, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(kt + (col[i] + 4) * ldk, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}

/* The store fence of the non-temporal stores (vstream). */
static inline void vstore_fence(void) { _mm_sfence(); }

#endif
