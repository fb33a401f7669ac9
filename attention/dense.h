/*
 * dense.h — the dense softmax-attention engine (defined in full.c) shared by the kinds full, mqa
 * and gqa: one kernel, three ops structs that differ only in the KV heads they run with.
 * Internal to attention/: the harness and the tests reach it through the kinds' ops structs.
 */
#ifndef ATTN_DENSE_H
#define ATTN_DENSE_H

#include "attention.h"

/* block_q, block_k, materialize, split (see full.c) */
enum { ATTN_DENSE_NPARAMS = 4 };
extern const attn_param_def attn_dense_params[ATTN_DENSE_NPARAMS];

attn_status attn_dense_check(const attn_shape *s, const attn_params *p, char *msg, size_t msg_len);
size_t attn_dense_workspace_bytes(const attn_shape *s, const attn_params *p);
double attn_dense_flops(const attn_shape *s, const attn_params *p);
double attn_dense_bytes(const attn_shape *s, const attn_params *p);
attn_status attn_dense_forward(const attn_shape *s, const attn_params *p, const float *q,
                               const float *k, const float *v, float *out, void *workspace);
/* The causal rule alone (the mask of all three kinds). */
bool attn_dense_allows(const attn_shape *s, const attn_params *p, int64_t h, int64_t i, int64_t j);
/* split=0 (auto) replaced by the number of key chunks the shape gets. */
void attn_dense_resolve(const attn_shape *s, attn_params *p);

/* The slots every dense kind shares, as named initializers; a kind adds its name, summary,
 * definition, check and (mqa, gqa) kv_heads. */
#define ATTN_DENSE_SLOTS                                                                          \
    .params = attn_dense_params, .nparams = ATTN_DENSE_NPARAMS,                                   \
    .workspace_bytes = attn_dense_workspace_bytes, .flops = attn_dense_flops,                     \
    .bytes = attn_dense_bytes, .forward = attn_dense_forward, .allows = attn_dense_allows,        \
    .resolve = attn_dense_resolve

#endif
