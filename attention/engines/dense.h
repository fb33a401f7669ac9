/*
 * dense.h — the dense softmax-attention engine (dense.c) shared by the kinds full, mqa and gqa:
 * one kernel, thin kinds that differ only in the KV heads they run with.
 * Internal to attention/ (and tests/): the harness reaches it through the kinds' ops structs.
 *
 * A dense kind's file reads
 *   const attn_ops attn_kind_NAME = {
 *       .name = "NAME", .summary = ..., .definition = ...,
 *       .params = ATTN_DENSE_PARAMS("NAME"),
 *       .check = attn_dense_check (or its own, calling it), [.kv_heads = ...,]
 *       ATTN_DENSE_SLOTS,
 *   };
 */
#ifndef ATTN_DENSE_H
#define ATTN_DENSE_H

#include "attention.h"
#include "score_mod.h"

/* block_q, block_k, materialize, split (see dense.c), then the score modifiers alibi and softcap
 * (score_mod.h) */
enum { ATTN_DENSE_NPARAMS = 4 + ATTN_SCORE_MOD_NPARAMS };
extern const attn_param_def attn_dense_params[ATTN_DENSE_NPARAMS];

/* The engine's slots (attention.h). They read p by the engine's own table (attn_dense_params), so
 * a kind with a table of its own (bilinear) calls them with dense parameters of its making. */
attn_status attn_dense_check(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             char *msg, size_t msg_len);
size_t attn_dense_workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                  const attn_params *p);
double attn_dense_flops(const attn_ops *self, const attn_shape *s, const attn_params *p);
double attn_dense_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p);
attn_status attn_dense_forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                               const attn_params *p, const float *q, const float *k, const float *v,
                               float *out, void *workspace);
/* Training: the row log-sum-exp saved (B·H·T floats) and the FlashAttention-2 backward. */
extern const attn_train_ops attn_dense_train;
size_t attn_dense_saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p);
attn_status attn_dense_forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                     const attn_params *p, const float *q, const float *k,
                                     const float *v, float *out, void *saved, void *workspace);
size_t attn_dense_backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                           const attn_shape *s, const attn_params *p);
attn_status attn_dense_backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                const attn_params *p, const float *q, const float *k,
                                const float *v, const float *out, const void *saved,
                                const float *dout, float *dq, float *dk, float *dv,
                                void *workspace);
/* Scores the causal rule allows (all T·S when not causal), over every batch and query head. */
double attn_dense_allowed_scores(const attn_shape *s);
/* The causal rule alone (the mask of every dense kind). */
bool attn_dense_allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                       int64_t i, int64_t j);
/* split=0 (auto) replaced by the number of key chunks the shape gets. */
void attn_dense_resolve(const attn_ops *self, const attn_shape *s, attn_params *p);

/* The engine's parameter table, owned by the kind `name`. */
#define ATTN_DENSE_PARAMS(name)                                                                    \
    {                                                                                              \
        .owner = (name), .defs = attn_dense_params, .count = ATTN_DENSE_NPARAMS                    \
    }

/* The slots every dense kind shares, as named initializers (the engine, its mask, its training
 * table). */
#define ATTN_DENSE_SLOTS                                                                           \
    .workspace_bytes = attn_dense_workspace_bytes, .flops = attn_dense_flops,                      \
    .bytes = attn_dense_bytes, .forward = attn_dense_forward, .allows = attn_dense_allows,         \
    .resolve = attn_dense_resolve, .train = &attn_dense_train, .dtypes = ATTN_DTYPES_ALL,          \
    .engine = ATTN_ENGINE_DENSE

#endif
