/*
 * gaussian — i.i.d. normal inputs: q, k ~ N(0, 1), v ~ N(0, 1).
 * With scale 1/sqrt(D) the scores have unit variance: attention is broad (nearly uniform at
 * large S), the easy case for approximations. q, k, v use streams 1, 2, 3 of the seed.
 */
#include "datasets.h"

static attn_status fill(const attn_shape *s, uint64_t seed, float *q, float *k, float *v, char *msg,
                        size_t msg_len)
{
    (void)msg, (void)msg_len;
    ds_fill_normal(q, attn_q_elems(s), 1.0, seed, 1);
    ds_fill_normal(k, attn_kv_elems(s), 1.0, seed, 2);
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    return ATTN_OK;
}

const ds_ops ds_gaussian = {
    .name = "gaussian",
    .summary = "i.i.d. N(0,1) q, k, v: broad attention (the easy case for approximations)",
    .fill = fill,
};
