/*
 * decode_body.h — the decode kernel's inner loop (attention/decode.c), written once against the
 * vector layer; included by simd/set_<isa>.c after vec_<isa>.h, math_body.h and convert_body.h.
 *   One chunk: G query rows (float32, already multiplied by the score scale) against n keys of
 *   one KV head, K/V rows of D elements stored as f32, bf16 or f16 (attn_dtype). Keys go by
 *   blocks of DECODE_KB: scores s_rj = q_r·k_j, then per row the online softmax
 *   m' = max(m, max_j s_rj), l' = l·e^(m-m') + Σ_j e^(s_rj-m'), acc' = acc·e^(m-m') +
 *   Σ_j e^(s_rj-m') v_j (unnormalised; decode.c merges the chunks and divides by l).
 *   G = 1 reads bf16/f16 rows directly, converted in registers (each byte of the KV cache read
 *   once); G > 1 converts each block once into kbuf/vbuf (L1) and reuses it for the G rows.
 *   With AVX512_BF16 (avx512 set, attn_cpu_has_avx512bf16(), bf16 K, unscaled bf16 q given)
 *   the scores use vdpbf16ps on the stored bf16 values (exact products, float32 sums).
 *   time O(G·n·D), flops 4·D per score (q·k and p·v); scratch: DECODE_KB·(G + 2·D) floats
 *   (decode_scratch_floats); one thread.
 */

/* Dot products and weighted sums over one dtype's rows, defined per element type. */
#define DECODE_ROW_OPS(sfx, ELEM, VLOAD, SLOAD)                                                    \
    static float dec_dot_##sfx(const float *q, const ELEM *k, int64_t D)                           \
    {                                                                                              \
        vf a0 = vzero(), a1 = vzero();                                                             \
        int64_t d = 0;                                                                             \
        for (; d + 2 * VW <= D; d += 2 * VW) {                                                     \
            a0 = vfma(vload(q + d), VLOAD(k + d), a0);                                             \
            a1 = vfma(vload(q + d + VW), VLOAD(k + d + VW), a1);                                   \
        }                                                                                          \
        for (; d + VW <= D; d += VW) a0 = vfma(vload(q + d), VLOAD(k + d), a0);                    \
        float s = vhsum(vadd(a0, a1));                                                             \
        for (; d < D; d++) s += q[d] * SLOAD(k[d]);                                                \
        return s;                                                                                  \
    }                                                                                              \
    /* acc[d] += Σ_j p[j]·v[j·D + d], j < n: acc in registers, 4 vectors at a time */           \
    static void dec_pv_##sfx(float *acc, const float *p, const ELEM *v, int64_t n, int64_t D)      \
    {                                                                                              \
        int64_t d = 0;                                                                             \
        for (; d + 4 * VW <= D; d += 4 * VW) {                                                     \
            vf a0 = vload(acc + d), a1 = vload(acc + d + VW), a2 = vload(acc + d + 2 * VW),        \
               a3 = vload(acc + d + 3 * VW);                                                       \
            for (int64_t j = 0; j < n; j++) {                                                      \
                const vf pj = vset1(p[j]);                                                         \
                const ELEM *r = v + j * D + d;                                                     \
                a0 = vfma(pj, VLOAD(r), a0), a1 = vfma(pj, VLOAD(r + VW), a1);                     \
                a2 = vfma(pj, VLOAD(r + 2 * VW), a2), a3 = vfma(pj, VLOAD(r + 3 * VW), a3);        \
            }                                                                                      \
            vstore(acc + d, a0), vstore(acc + d + VW, a1);                                         \
            vstore(acc + d + 2 * VW, a2), vstore(acc + d + 3 * VW, a3);                            \
        }                                                                                          \
        for (; d + VW <= D; d += VW) {                                                             \
            vf a = vload(acc + d);                                                                 \
            for (int64_t j = 0; j < n; j++) a = vfma(vset1(p[j]), VLOAD(v + j * D + d), a);        \
            vstore(acc + d, a);                                                                    \
        }                                                                                          \
        for (; d < D; d++) {                                                                       \
            float a = acc[d];                                                                      \
            for (int64_t j = 0; j < n; j++) a += p[j] * SLOAD(v[j * D + d]);                       \
            acc[d] = a;                                                                            \
        }                                                                                          \
    }

static inline float dec_f32_scalar(float x) { return x; }
DECODE_ROW_OPS(f32, float, vload, dec_f32_scalar)
DECODE_ROW_OPS(bf16, uint16_t, vload_bf16, attn_bf16_to_f32)
DECODE_ROW_OPS(f16, uint16_t, vload_f16, attn_f16_to_f32)

#if VW == 16 && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define DECODE_HAVE_DPBF16 1
/* Σ_d q[d]·k[d] of bf16 rows (D even, a multiple of 32 for the vector part) by vdpbf16ps. */
__attribute__((target("avx512bf16"))) static float dec_dot_dpbf16(const uint16_t *q,
                                                                  const uint16_t *k, int64_t D)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int64_t d = 0;
    for (; d + 64 <= D; d += 64) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_loadu_si512(q + d),
                              (__m512bh)_mm512_loadu_si512(k + d));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh)_mm512_loadu_si512(q + d + 32),
                              (__m512bh)_mm512_loadu_si512(k + d + 32));
    }
    for (; d + 32 <= D; d += 32)
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_loadu_si512(q + d),
                              (__m512bh)_mm512_loadu_si512(k + d));
    float s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    for (; d < D; d++) s += attn_bf16_to_f32(q[d]) * attn_bf16_to_f32(k[d]);
    return s;
}
#endif

enum { DECODE_KB = 64 }; /* keys per block */

static int64_t dec_scratch_floats(int64_t G, int64_t D) { return DECODE_KB * (G + 2 * D); }

/* Row r's online-softmax step over the block's scores s[0..n): m, l updated, s turned into the
 * weights e^(s - m'), acc rescaled by e^(m - m'). */
static void dec_softmax_step(float *s, int64_t n, float *m, float *l, float *acc, int64_t D)
{
    const float mb = k_vmax(s, n);
    if (mb == -INFINITY) return; /* NaN-free inputs never get here */
    const float mn = *m > mb ? *m : mb;
    const float corr = *m == -INFINITY ? 0.0f : attn_exp_scalar(*m - mn);
    const float sum = k_vexp_sum(s, n, mn);
    if (corr != 1.0f) k_vscale(acc, D, corr);
    *l = *l * corr + sum;
    *m = mn;
}

/* Scores of G rows against n keys of dtype t (rows kr, or kbuf when converted), then the
 * softmax steps and the weighted sums. */
static void dec_chunk(int t, const float *q, const uint16_t *qh, float scale, int64_t G, int64_t D,
                      const void *k, const void *v, int64_t n, float *m, float *l, float *acc,
                      float *scratch)
{
    float *s = scratch, *kbuf = s + DECODE_KB * G, *vbuf = kbuf + DECODE_KB * D;
    const size_t esz = t == ATTN_F32 ? 4 : 2;
    const bool convert = t != ATTN_F32 && G > 1;
    (void)qh, (void)scale;
    for (int64_t j0 = 0; j0 < n; j0 += DECODE_KB) {
        const int64_t nb = n - j0 < DECODE_KB ? n - j0 : DECODE_KB;
        const void *kb = (const char *)k + (size_t)(j0 * D) * esz;
        const void *vb = (const char *)v + (size_t)(j0 * D) * esz;
        if (convert) {
            cvt_to_f32(t, vb, vbuf, nb * D);
#ifdef DECODE_HAVE_DPBF16
            if (!(qh && t == ATTN_BF16))
#endif
                cvt_to_f32(t, kb, kbuf, nb * D);
        }
        for (int64_t r = 0; r < G; r++) {
            const float *qr = q + r * D;
            float *sr = s + r * DECODE_KB;
#ifdef DECODE_HAVE_DPBF16
            if (qh && t == ATTN_BF16) {
                for (int64_t j = 0; j < nb; j++)
                    sr[j] = scale * dec_dot_dpbf16(qh + r * D, (const uint16_t *)kb + j * D, D);
            } else
#endif
                if (t == ATTN_F32 || convert) {
                const float *kf = convert ? kbuf : kb;
                for (int64_t j = 0; j < nb; j++) sr[j] = dec_dot_f32(qr, kf + j * D, D);
            } else if (t == ATTN_BF16) {
                for (int64_t j = 0; j < nb; j++)
                    sr[j] = dec_dot_bf16(qr, (const uint16_t *)kb + j * D, D);
            } else {
                for (int64_t j = 0; j < nb; j++)
                    sr[j] = dec_dot_f16(qr, (const uint16_t *)kb + j * D, D);
            }
            dec_softmax_step(sr, nb, m + r, l + r, acc + r * D, D);
            if (t == ATTN_F32 || convert) dec_pv_f32(acc + r * D, sr, convert ? vbuf : vb, nb, D);
            else if (t == ATTN_BF16) dec_pv_bf16(acc + r * D, sr, vb, nb, D);
            else dec_pv_f16(acc + r * D, sr, vb, nb, D);
        }
    }
}

static bool dec_has_dpbf16(void)
{
#ifdef DECODE_HAVE_DPBF16
    return true;
#else
    return false;
#endif
}

#define DECODE_SLOTS                                                                               \
    {                                                                                              \
        .chunk = dec_chunk, .scratch_floats = dec_scratch_floats, .has_dpbf16 = dec_has_dpbf16     \
    }
