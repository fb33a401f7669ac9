/*
 * backward.c — the training slots' helpers (attention.h: has a backward, why not, checks,
 * saved bytes, flops, the float64 gradient reference of a kind's own definition).
 */
#include <stdio.h>

#include "attention.h"

bool attn_kind_has_backward(const attn_ops *ops) { return ops->train != NULL; }

const char *attn_kind_no_backward_reason(const attn_ops *ops)
{
    if (attn_kind_has_backward(ops)) return "";
    return ops->no_backward ? ops->no_backward : "its backward pass is not implemented";
}

attn_status attn_backward_check(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                char *msg, size_t msg_len)
{
    const attn_status st = attn_check(ops, s, p, msg, msg_len);
    if (st != ATTN_OK) return st;
    if (!attn_kind_has_backward(ops))
        return attn_fail(ATTN_ENODEF, msg, msg_len, "%s has no backward pass: %s", ops->name,
                         attn_kind_no_backward_reason(ops));
    if (s->dtype != ATTN_F32)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "%s: the backward takes float32 q, k, v (not %s)", ops->name,
                         attn_dtype_name(s->dtype));
    if (s->decode && ops->decode)
        return attn_fail(ATTN_ENODEF, msg, msg_len,
                         "%s: no backward pass in decode mode (a decode step from the recurrent "
                         "state is no training step)",
                         ops->name);
    return ATTN_OK;
}

size_t attn_kind_saved_bytes(const attn_ops *ops, const attn_shape *s, const attn_params *p)
{
    return ops->train && ops->train->saved_bytes ? ops->train->saved_bytes(ops, s, p) : 0;
}

attn_status attn_kind_forward_train(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                                    const attn_params *p, const float *q, const float *k,
                                    const float *v, float *out, void *saved, void *workspace)
{
    if (ops->train && ops->train->forward)
        return ops->train->forward(ops, x, s, p, q, k, v, out, saved, workspace);
    return ops->forward(ops, x, s, p, q, k, v, out, workspace);
}

double attn_kind_backward_flops(const attn_ops *ops, const attn_shape *s, const attn_params *p)
{
    return 2.5 * ops->flops(ops, s, p);
}

attn_status attn_kind_reference_backward(const attn_ops *ops, const attn_shape *s,
                                         const attn_params *p, const float *q, const float *k,
                                         const float *v, const float *dout, double *dq, double *dk,
                                         double *dv)
{
    attn_params given = *p;
    float *owned[ATTN_MAX_WEIGHTS];
    if (attn_weights_draw(ops, s, &given, owned, NULL, 0) != ATTN_OK) return ATTN_EFAIL;
    const attn_status st =
        ops->train && ops->train->reference
            ? ops->train->reference(ops, s, &given, q, k, v, dout, dq, dk, dv)
            : attn_masked_reference_backward(ops, s, &given, q, k, v, dout, dq, dk, dv);
    attn_weights_free(owned);
    return st;
}
