/*
 * lowrank — q and k in a rank-r subspace per KV head, plus isotropic noise ν (definition:
 * .definition below). Elements have variance ~1; score std ~ (1 - ν²)·sqrt(1 + D/r): low rank
 * aligns queries with keys. Streams: U per head, rows by row (ds_fill_rows); v: stream 3.
 * Cost O((S + T)·r·D) per head.
 */
#include <math.h>

#include "datasets.h"

enum { RANK, NOISE };
enum { MAX_RANK = 1024 };

static const attn_param_def params[] = {
    [RANK] = {"rank", "dimension r of the subspace of q and k", 8, 1, MAX_RANK, true},
    [NOISE] = {"noise", "weight of isotropic noise (0: exactly rank r)", 0.1, 0, 1, false},
};

/* One row: sqrt(1 - nu²)·z U + nu·e, z and e drawn from rng; ctx: the parameters. */
static void draw_row(ds_rng *rng, const float *U, const void *ctx, int64_t D, float *out)
{
    const ds_params *p = ctx;
    const int64_t r = (int64_t)p->v[RANK];
    const double nu = p->v[NOISE], a = sqrt(1.0 - nu * nu);
    double z[MAX_RANK];
    for (int64_t c = 0; c < r; c++) z[c] = ds_rng_normal(rng);
    for (int64_t d = 0; d < D; d++) {
        double x = 0;
        for (int64_t c = 0; c < r; c++) x += z[c] * U[c * D + d];
        out[d] = (float)(a * x + nu * ds_rng_normal(rng));
    }
}

static attn_status fill(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len)
{
    const double r = p->v[RANK];
    if (ds_fill_rows(s, seed, threads, (int64_t)r * s->D, 1.0 / sqrt(r), draw_row, p, q, k,
                     "lowrank", msg, msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    ds_fill_normal(v, attn_kv_elems(s), 1.0, seed, 3);
    return ATTN_OK;
}

const ds_ops ds_lowrank = {
    .name = "lowrank",
    .summary = "q and k in a rank-r subspace per KV head, plus noise",
    .definition =
        "Per KV head, a basis U (r x D, entries N(0, 1/r)). Every key and query row of the\n"
        "group: sqrt(1-noise^2) * z U + noise * e, z ~ N(0, I_r), e ~ N(0, I_D); v ~ N(0,1).\n"
        "At noise 0, q and k (and the scores) have rank min(r, D) exactly.",
    .params = DS_PARAM_TABLE("lowrank", params),
    .fill = fill,
};
