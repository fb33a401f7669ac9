/*
 * half.h — scalar conversions between float32 and the 16-bit storage formats (attn_dtype,
 * attn_core.h), portable C on the bit patterns: bf16 is the top half of a float32 (rounded to
 * nearest even; NaN kept quiet), f16 IEEE binary16 (rounded to nearest even; overflow to ±inf;
 * subnormals kept). The reference the vector forms (convert_body.h) must equal bit for bit.
 */
#ifndef ATTN_HALF_H
#define ATTN_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t attn_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float attn_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float attn_bf16_to_f32(uint16_t h) { return attn_bits_f32((uint32_t)h << 16); }

static inline uint16_t attn_f32_to_bf16(float f)
{
    const uint32_t x = attn_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float attn_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return attn_bits_f32(sign | 0x7f800000u | (m << 13)); /* inf, NaN */
    if (e) return attn_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    return attn_bits_f32(sign | attn_f32_bits((float)m * 0x1p-24f)); /* zero, subnormal */
}

static inline uint16_t attn_f32_to_f16(float f)
{
    const uint32_t x = attn_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: rounds to inf */
    uint32_t r, rem, half;
    if (ax >= 0x38800000u) { /* normal: rebias the exponent, drop 13 mantissa bits */
        r = ((ax >> 23) - 112u) << 10 | ((ax >> 13) & 0x3ffu);
        rem = ax & 0x1fffu, half = 0x1000u;
    } else { /* below 2^-14: a multiple of 2^-24 (subnormal or zero) */
        if (ax < 0x33000000u) return (uint16_t)sign; /* below 2^-25: 0 */
        const uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;
        r = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    }
    r += rem > half || (rem == half && (r & 1u)); /* nearest, ties to even (carries are right) */
    return (uint16_t)(sign | r);
}

#endif
