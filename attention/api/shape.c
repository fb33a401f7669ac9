/* shape.c — the problem shape every kind shares: construction, generic checks, element counts. */
#include <math.h>
#include <stdio.h>

#include "attention.h"

attn_shape attn_shape_init(int64_t B, int64_t H, int64_t Hkv, int64_t T, int64_t S, int64_t D,
                           bool causal)
{
    attn_shape s = {.B = B,
                    .H = H,
                    .Hkv = Hkv,
                    .T = T,
                    .S = S,
                    .D = D,
                    .causal = causal,
                    .scale = D > 0 ? 1.0 / sqrt((double)D) : 1.0};
    return s;
}

int64_t attn_q_elems(const attn_shape *s) { return s->B * s->H * s->T * s->D; }
int64_t attn_kv_elems(const attn_shape *s) { return s->B * s->Hkv * s->S * s->D; }

int64_t attn_causal_keys(const attn_shape *s, int64_t i)
{
    if (!s->causal) return s->S;
    int64_t n = i + s->S - s->T + 1;
    return n < 0 ? 0 : (n > s->S ? s->S : n);
}

attn_status attn_shape_check(const attn_shape *s, char *msg, size_t msg_len)
{
    const struct {
        const char *name;
        int64_t v;
    } dims[] = {
        {"batch", s->B}, {"heads", s->H},  {"kv_heads", s->Hkv},
        {"q_len", s->T}, {"kv_len", s->S}, {"head_dim", s->D},
    };
    for (size_t n = 0; n < sizeof dims / sizeof dims[0]; n++) {
        if (dims[n].v < 1) {
            return attn_fail(ATTN_EINVAL, msg, msg_len, "%s must be at least 1 (got %lld)",
                             dims[n].name, (long long)dims[n].v);
        }
    }
    if (s->Hkv > s->H || s->H % s->Hkv != 0) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "kv_heads %lld does not divide heads %lld (MQA: 1, MHA: heads)",
                         (long long)s->Hkv, (long long)s->H);
    }
    if (s->dtype < 0 || s->dtype >= ATTN_DTYPE_COUNT)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "dtype %d is not f32, bf16 or f16",
                         (int)s->dtype);
    if (!(s->scale > 0) || !isfinite(s->scale)) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "scale must be finite and positive (got %g)",
                         s->scale);
    }
    /* q, k, v, out each below 2^40 floats (4 TiB): products below stay exact in int64. */
    const double limit = 1099511627776.0;
    double qn = (double)s->B * s->H * s->T * s->D, kn = (double)s->B * s->Hkv * s->S * s->D;
    if (qn > limit || kn > limit) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "tensors too large: q has %.3g and k %.3g elements", qn, kn);
    }
    return ATTN_OK;
}
