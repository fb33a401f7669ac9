/*
 * gqa — grouped-query attention (Ainslie et al. 2023): query heads in Hkv groups of G = H/Hkv,
 * each group sharing one key/value head (definition: .definition below).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]
 *   Hkv = --kv-heads; when none is given, the largest divisor of H that is <= H/4 (groups of at
 *   least 4 heads; 1 when none is above 1): H=32 -> 8, H=8 -> 2, H=12 -> 3, H=4 -> 1.
 *   time O(B·H·T·S·D)   flops 4·D per allowed score   KV bytes G times fewer than MHA
 *   kernel, workspace and threads: the dense engine (dense.c): the G heads of a group are
 *   stacked in one tile, so each K/V block is read once for all of them.
 */
#include "dense.h"

static int64_t kv_heads(const attn_ops *self, int64_t H, int64_t requested)
{
    if (requested > 0) return requested;
    for (int64_t Hkv = H / 4; Hkv > 1; Hkv--)
        if (H % Hkv == 0) return Hkv;
    return 1;
}

const attn_ops attn_kind_gqa = {
    .name = "gqa",
    .summary =
        "grouped-query attention: groups of H/Hkv query heads share a KV head (default >= 4 a group)",
    .definition = "out_i = sum_j softmax_j(scale * q_i . k_j) v_j, query head h reading KV head\n"
                  "h / (H/Hkv) (causal: j <= i + S - T), scale = 1/sqrt(D). Hkv = --kv-heads, by\n"
                  "default the largest divisor of H that is <= H/4 (H=32: 8). The heads of a\n"
                  "group are computed together: each K/V block is loaded once for all of them.",
    .params = ATTN_DENSE_PARAMS("gqa"),
    .check = attn_dense_check,
    .kv_heads = kv_heads,
    ATTN_DENSE_SLOTS,
};
