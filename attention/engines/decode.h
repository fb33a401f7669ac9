/*
 * decode.h — the dense engine's decode kernel and its low-precision prefill path (decode.c),
 * internal to attention/ (dense.c calls them) and tests/.
 */
#ifndef ATTN_DECODE_H
#define ATTN_DECODE_H

#include "attention.h"

/* Key chunks per (b, KV head) the decode kernel uses: requested (> 0), or auto (0). */
int64_t attn_decode_split(const attn_shape *s, int64_t requested);
/* Exact scratch of attn_decode_forward for s (T = 1) and split (0: auto). */
size_t attn_decode_workspace_bytes(const attn_exec *x, const attn_shape *s, int64_t split);
/* out [B,H,1,D] of the G = H/Hkv query heads of each KV head against every key (T = 1: the
 * causal rule allows them all), no score modifiers; q, k, v of s->dtype. */
attn_status attn_decode_forward(const attn_exec *x, const attn_shape *s, int64_t split,
                                const float *q, const float *k, const float *v, float *out,
                                void *workspace);

/* The dense prefill of a non-f32 dtype: q, k, v converted up front into float32 copies at the
 * start of the workspace (4·(B·H·T + 2·B·Hkv·S·D)... bytes: attn_widen_bytes, 0 for f32), in
 * parallel on x->threads. attn_widen points *q, *k, *v at the copies (unchanged for f32) and
 * returns the workspace after them. */
size_t attn_widen_bytes(const attn_shape *s);
void *attn_widen(const attn_exec *x, const attn_shape *s, const float **q, const float **k,
                 const float **v, void *workspace);

#endif
