/* spec.h — the point-spec builder `bench run` and `bench sweep` share: from a kind, a dataset and
 * the shape asked for to a checked-ready bench_point_spec (a file dataset gives its own shape). */
#ifndef BENCH_SPEC_H
#define BENCH_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "point.h"

/* The shape asked for on the command line. */
typedef struct bench_shape_req {
    int64_t n;             /* q_len and kv_len unless given */
    int64_t q_len, kv_len; /* <= 0: n; a file dataset: its newest q_len queries (<= 0: all) */
    int64_t batch, heads, head_dim;
    int64_t kv_heads; /* 0: the kind's default for heads */
    bool causal, decode;
    attn_dtype dtype; /* storage of q, k, v (default f32) */
} bench_shape_req;

/* With spec->ops, params, dataset and dataset_params set: the shape from req (the kind's KV
 * heads for req->heads), or from the data for a dataset that fixes it (file); then the mode,
 * mc's threads, the kind's parameters resolved for the shape, and mc's seed, timing and
 * accuracy rows. A file whose KV heads the kind cannot run with is refused (ATTN_EINVAL):
 * "<where> has N KV heads but kind K runs with M<hint>". bench_point_check is the caller's. */
attn_status bench_spec_build(bench_point_spec *spec, const bench_shape_req *req,
                             const bench_measure_cfg *mc, const char *where, const char *hint,
                             char *msg, size_t msg_len);

#endif
