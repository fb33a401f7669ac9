/*
 * gaussian — i.i.d. normal inputs with a temperature τ (definition: .definition below): at
 * τ = 1 (the default) attention is broad, the easy case for approximations; small τ makes it
 * peaked. q, k, v use streams 1, 2, 3 of the seed (τ = 1: the original N(0,1) inputs).
 * Cost O(elements); threads: ds_fill_normal's chunks.
 */
#include <math.h>

#include "datasets.h"

enum { TEMPERATURE };

static const attn_param_def params[] = {
    [TEMPERATURE] = {"temperature", "score std is 1/temperature (q, k ~ N(0, 1/temperature))", 1,
                     0.01, 100, false},
};

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    (void)msg, (void)msg_len;
    const double sigma = 1.0 / sqrt(p->v[TEMPERATURE]);
    ds_fill_normal(q, attn_q_elems(s), sigma, seed, 1);
    ds_fill_normal(k, attn_kv_elems(s), sigma, seed, 2);
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    return ATTN_OK;
}

const ds_ops ds_gaussian = {
    .name = "gaussian",
    .summary = "i.i.d. normal q, k, v; temperature sets how peaked attention is (1: broad)",
    .definition = "q, k ~ N(0, 1/temperature) i.i.d., v ~ N(0, 1) i.i.d.\n"
                  "A score q.k/sqrt(D) has mean 0 and std 1/temperature: at 1 (default) attention\n"
                  "is broad, nearly uniform at large S; below 1 it is peaked.",
    .params = DS_PARAM_TABLE("gaussian", params),
    .fill = fill,
};
