/*
 * full — exact scaled dot-product softmax attention (definition: .definition below), with any
 * number of KV heads.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   Hkv = --kv-heads (default H: MHA)
 *   time O(B·H·T·S·D)   flops 4·D per allowed score, counted exactly
 *   kernel, layout, workspace and threads: the dense engine (dense.c): the G = H/Hkv heads of a
 *   KV head stacked in one tile, key chunks merged exactly; workspace independent of S except
 *   through the chunk count (materialize=1: the T×S baseline).
 */
#include "dense.h"

const attn_ops attn_kind_full = {
    .name = "full",
    .summary =
        "exact softmax attention, tiled online softmax (FlashAttention-2 order), any kv_heads",
    .definition = "out_i = sum_j softmax_j(scale * q_i . k_j) v_j over every key j\n"
                  "(causal: j <= i + S - T). scale = 1/sqrt(D). Query head h reads KV head\n"
                  "h / (H/Hkv); the heads sharing a KV head are computed together. Never builds\n"
                  "the T x S matrix unless materialize=1.",
    .params = ATTN_DENSE_PARAMS("full"),
    .check = attn_dense_check,
    ATTN_DENSE_SLOTS,
};
