/*
 * clustered — keys around a few centroids, queries near them (σ = spread), per KV head
 * (definition: .definition below). Elements have variance 1; same-cluster rows have cosine
 * ~1/(1 + σ²): each query attends to the ~S/C keys of its cluster (what clustering and routing
 * attentions exploit). Streams: centroids per head, rows by row (ds_fill_rows); v: stream 3.
 * Cost O((S + T)·D) per head.
 */
#include <math.h>

#include "datasets.h"

enum { CLUSTERS, SPREAD };

static const attn_param_def params[] = {
    [CLUSTERS] = {"clusters", "number C of centroids per KV head", 16, 1, 4096, true},
    [SPREAD] = {"spread", "noise around a centroid, relative to it", 0.5, 0, 10, false},
};

/* One row near a centroid drawn uniformly from the C of its head; ctx: the parameters. */
static void draw_row(ds_rng *rng, const float *centroids, const void *ctx, int64_t D, float *out)
{
    const ds_params *p = ctx;
    const int64_t C = (int64_t)p->v[CLUSTERS];
    const double spread = p->v[SPREAD], f = 1.0 / sqrt(1.0 + spread * spread);
    const int64_t a = (int64_t)(ds_rng_uniform(rng) * (double)C);
    const float *c = centroids + (a < C ? a : C - 1) * D;
    for (int64_t d = 0; d < D; d++) out[d] = (float)(f * (c[d] + spread * ds_rng_normal(rng)));
}

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    if (ds_fill_rows(s, seed, threads, (int64_t)p->v[CLUSTERS] * s->D, 1.0, draw_row, p, q, k,
                     "clustered", msg, msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    return ATTN_OK;
}

const ds_ops ds_clustered = {
    .name = "clustered",
    .summary = "keys around C centroids per KV head, queries near them",
    .definition =
        "Per KV head, centroids c_1..c_C ~ N(0, I_D). Every key and query row of the group picks\n"
        "a centroid a uniformly: (c_a + spread * e) / sqrt(1 + spread^2), e ~ N(0, I_D);\n"
        "v ~ N(0,1). Same-cluster scores ~ sqrt(D)/(1+spread^2), others ~ N(0,1): each query\n"
        "attends to the ~S/C keys of its cluster.",
    .params = DS_PARAM_TABLE("clustered", params),
    .fill = fill,
};
