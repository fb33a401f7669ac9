/*
 * local — a sequence whose neighbouring tokens are alike, so attention concentrates near the
 * diagonal, as in language (definition: .definition below). The AR(1) sequence runs per KV head
 * (b, g) and coordinate over the latent positions t = 0..L-1 (L = max(S, T), ds_fill_sequence):
 * key j is latent j + L - S, query i latent i + L - T, so the query at position p equals the key
 * at p. Streams: e 1, v 3. Cost O(B·Hkv·L·D + q elements).
 */
#include <math.h>

#include "datasets.h"

enum { RHO, TEMPERATURE };

static const attn_param_def params[] = {
    [RHO] = {"rho", "correlation of neighbouring positions (AR(1) coefficient)", 0.9, 0, 1, false},
    [TEMPERATURE] = {"temperature", "q, k elements ~ N(0, 1/temperature)", 1, 0.01, 100, false},
};

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    if (ds_fill_sequence(s, seed, threads, 1.0 / sqrt(p->v[TEMPERATURE]), p->v[RHO], q, k, "local",
                         msg, msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    return ATTN_OK;
}

const ds_ops ds_local = {
    .name = "local",
    .summary = "AR(1) sequence (correlation rho): attention concentrates near the diagonal",
    .definition =
        "Per KV head and coordinate, an AR(1) sequence over positions:\n"
        "  x_0 = e_0, x_t = rho*x_{t-1} + sqrt(1-rho^2)*e_t, e_t ~ N(0, 1/temperature)\n"
        "k[j] = x at key position j; q[i] = x at query position i+S-T (every query head of the\n"
        "group); v ~ N(0,1) i.i.d. corr(x_t, x_t+d) = rho^|d|, so E[q.k]/sqrt(D) =\n"
        "sqrt(D)*rho^|distance|/temperature: the mass sits within ~1/(1-rho) positions.",
    .params = DS_PARAM_TABLE("local", params),
    .fill = fill,
};
