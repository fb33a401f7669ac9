/*
 * mqa — multi-query attention (Shazeer 2019): every query head shares one key/value head
 * (definition: .definition below).
 *   q [B,H,T,D]  k,v [B,1,S,D]  out [B,H,T,D]   Hkv = 1 (kv_heads slot; another --kv-heads is
 * refused) time O(B·H·T·S·D)   flops 4·D per allowed score   KV bytes H times fewer than MHA
 *   kernel, workspace and threads: the dense engine (dense.c) with G = H: the H heads of a
 *   position are stacked in one tile, so each K/V block is read once for all of them.
 */
#include "dense.h"

static int64_t kv_heads(const attn_ops *self, int64_t H, int64_t requested)
{
    (void)H, (void)requested;
    return 1;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    if (s->Hkv != 1) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "mqa has one KV head, got kv_heads %lld: use gqa or full for more",
                         (long long)s->Hkv);
    }
    return attn_dense_check(self, s, p, msg, msg_len);
}

const attn_ops attn_kind_mqa = {
    .name = "mqa",
    .summary = "multi-query attention: one KV head shared by all query heads (exact softmax)",
    .definition = "out_i = sum_j softmax_j(scale * q_i . k_j) v_j with a single KV head (Hkv = 1)\n"
                  "read by every query head (causal: j <= i + S - T), scale = 1/sqrt(D).\n"
                  "The query heads are computed together: each K/V block is loaded once.",
    .params = ATTN_DENSE_PARAMS("mqa"),
    .check = check,
    .kv_heads = kv_heads,
    ATTN_DENSE_SLOTS,
};
