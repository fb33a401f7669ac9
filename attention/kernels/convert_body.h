/*
 * convert_body.h — row conversions between float32 and the storage dtypes (attn_dtype: f32, bf16,
 * f16), one function per dtype and direction, written once against the vector layer; the traits
 * table (dtype_body.h) holds them, and the convert slots and the decode chunk reach them through
 * it. dst[i] = src[i] converted, i < n. bf16 -> f32: the 16 bits shifted into the top half
 * (vload_bf16; exact). f16 -> f32: vload_f16 (vcvtph2ps where the layer has it; else half.h's
 * bit manipulation; exact). f32 -> bf16/f16 (inputs, untimed): half.h's scalar rounding in every
 * set. f32 to f32 copies. O(n), no scratch, one thread.
 */

static void cvt_f32_to_f32(const void *src, float *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void cvt_bf16_to_f32(const void *src, float *dst, int64_t n)
{
    const uint16_t *h = src;
    int64_t i = 0;
    for (; i + VW <= n; i += VW) vstore(dst + i, vload_bf16(h + i));
    for (; i < n; i++) dst[i] = attn_bf16_to_f32(h[i]);
}

static void cvt_f16_to_f32(const void *src, float *dst, int64_t n)
{
    const uint16_t *h = src;
    int64_t i = 0;
    for (; i + VW <= n; i += VW) vstore(dst + i, vload_f16(h + i));
    for (; i < n; i++) dst[i] = attn_f16_to_f32(h[i]);
}

static void cvt_f32_from_f32(const float *src, void *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void cvt_bf16_from_f32(const float *src, void *dst, int64_t n)
{
    uint16_t *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = attn_f32_to_bf16(src[i]);
}

static void cvt_f16_from_f32(const float *src, void *dst, int64_t n)
{
    uint16_t *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = attn_f32_to_f16(src[i]);
}
