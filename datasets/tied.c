/*
 * tied — one sequence attending to itself: Q = K = V = X, the plain softmax(X Xᵀ/sqrt(D)) X
 * (definition: .definition below). X runs over the latent positions t = 0..L-1 (L = max(S, T)):
 * key j is latent j + L - S, query i latent i + L - T. At τ = 1, D = 64 the own key weighs
 * e^8 against e^0.5 per other key. X: stream 1. Cost O(B·Hkv·L·D + q elements).
 */
#include <math.h>
#include <string.h>

#include "datasets.h"

enum { TEMPERATURE };

static const attn_param_def params[] = {
    [TEMPERATURE] = {"temperature", "X elements ~ N(0, 1/temperature)", 1, 0.01, 100, false},
};

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    if (ds_fill_sequence(s, seed, threads, 1.0 / sqrt(p->v[TEMPERATURE]), 0.0, q, k, "tied", msg,
                         msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    memcpy(v, k, (size_t)attn_kv_elems(s) * sizeof *v);
    return ATTN_OK;
}

const ds_ops ds_tied = {
    .name = "tied",
    .summary = "Q = K = V = X, X ~ N(0, 1/temperature): softmax(X X^T/sqrt(D)) X",
    .definition =
        "X ~ N(0, 1/temperature) i.i.d. per KV head over the positions; k = v = X at the key\n"
        "positions, q = X at the query positions i+S-T (every query head of the group): with\n"
        "T = S and H = Hkv, q = k = v. The own key scores ~ sqrt(D)/temperature, others\n"
        "~ N(0, 1/temperature^2): attention peaks on the diagonal.",
    .params = DS_PARAM_TABLE("tied", params),
    .fill = fill,
};
