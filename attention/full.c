/*
 * full — exact scaled dot-product softmax attention, tiled with an online softmax.
 *   out[b,h,i] = Σ_j softmax_j(scale · q[b,h,i]·k[b,g,j]) v[b,g,j],  g = h / (H/Hkv),
 *   over all keys j, or j <= i + S - T when causal.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]
 *   time O(B·H·T·S·D)   flops 4·D per allowed score (q·k and p·v), counted exactly
 *   workspace: threads × (tile of block_q × block_k scores + block_q × D accumulator + 2·block_q
 *              floats + block_q int64) — never the T×S matrix unless materialize=1 (baseline:
 *              one tile of T×S per head, the textbook O(n²)-memory algorithm)
 *   threads: OpenMP over (b, h, query block), dynamic schedule (causal rows are uneven);
 *            OpenBLAS single-threaded inside.
 */
#include <omp.h>
#include <stdio.h>

#include "attention.h"
#include "kernels.h"

enum { P_BLOCK_Q, P_BLOCK_K, P_MATERIALIZE };

/* A key block that crosses the causal diagonal is visited by groups of this many query rows,
 * each computing only the keys its last row sees: about 1/2 + DIAG_ROWS/(2·block) of the
 * block's scores instead of all of them. */
enum { DIAG_ROWS = 64 };

static const attn_param_def params[] = {
    [P_BLOCK_Q] = {"block_q", "queries per tile", 256, 1, 4096, true},
    [P_BLOCK_K] = {"block_k", "keys per tile (online-softmax step)", 256, 1, 65536, true},
    [P_MATERIALIZE] = {"materialize", "1: baseline that builds the whole T×S score matrix per head",
                       0, 0, 1, true},
};

typedef struct plan {
    int64_t block_q, block_k;   /* effective tile sizes (clipped to T and S) */
    int64_t tile_floats;        /* per-thread tile scratch */
    size_t thread_bytes;        /* per-thread workspace: tile + col_end */
} plan;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    bool whole = p->v[P_MATERIALIZE] != 0;
    pl.block_q = whole ? s->T : min64((int64_t)p->v[P_BLOCK_Q], s->T);
    pl.block_k = whole ? s->S : min64((int64_t)p->v[P_BLOCK_K], s->S);
    pl.tile_floats = attn_tile_floats(pl.block_q, pl.block_k, s->D);
    int64_t col_end = (pl.block_q + 7) / 8 * 8; /* keeps 64-byte alignment per thread */
    pl.thread_bytes = (size_t)pl.tile_floats * sizeof(float) + (size_t)col_end * sizeof(int64_t);
    return pl;
}

static attn_status check(const attn_shape *s, const attn_params *p, char *msg, size_t msg_len)
{
    (void)s, (void)p, (void)msg, (void)msg_len;
    return ATTN_OK; /* every shape accepted by attn_shape_check and every in-range tile works */
}

static size_t workspace_bytes(const attn_shape *s, const attn_params *p)
{
    return (size_t)s->threads * make_plan(s, p).thread_bytes;
}

static double allowed_scores(const attn_shape *s)
{
    double per_head = 0;
    if (!s->causal) per_head = (double)s->T * (double)s->S;
    else
        for (int64_t i = 0; i < s->T; i++) per_head += (double)attn_causal_keys(s, i);
    return per_head * (double)s->B * (double)s->H;
}

static double flops(const attn_shape *s, const attn_params *p)
{
    (void)p;
    return 4.0 * (double)s->D * allowed_scores(s);
}

static double bytes(const attn_shape *s, const attn_params *p)
{
    (void)p;
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s));
}

static attn_status forward(const attn_shape *s, const attn_params *p, const float *q, const float *k,
                           const float *v, float *out, void *workspace)
{
    const plan pl = make_plan(s, p);
    const int64_t H = s->H, T = s->T, S = s->S, D = s->D, group = s->H / s->Hkv;
    const int64_t nqb = (T + pl.block_q - 1) / pl.block_q, tasks = s->B * H * nqb;
    attn_blas_threads(1);

#pragma omp parallel num_threads(s->threads)
    {
        char *mine = (char *)workspace + (size_t)omp_get_thread_num() * pl.thread_bytes;
        float *scratch = (float *)mine;
        int64_t *col_end = (int64_t *)(mine + (size_t)pl.tile_floats * sizeof(float));
        attn_tile tile;

#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t bh = task / nqb, b = bh / H, h = bh % H, g = h / group;
            const int64_t i0 = (task % nqb) * pl.block_q, rows = min64(pl.block_q, T - i0);
            const float *kg = k + (b * s->Hkv + g) * S * D, *vg = v + (b * s->Hkv + g) * S * D;
            /* keys seen by the first and by the last row of this query block */
            const int64_t first_sees = attn_causal_keys(s, i0);
            const int64_t last_sees = attn_causal_keys(s, i0 + rows - 1);

            attn_tile_begin(&tile, scratch, rows, D, (float)s->scale);
            const float *qb = q + ((b * H + h) * T + i0) * D;
            for (int64_t j0 = 0; j0 < last_sees; j0 += pl.block_k) {
                const int64_t cols = min64(pl.block_k, S - j0);
                if (j0 + cols <= first_sees) { /* every row sees every key of the block */
                    attn_tile_visit(&tile, 0, rows, qb, kg + j0 * D, vg + j0 * D, cols, NULL);
                    continue;
                }
                /* the block crosses the causal diagonal: row groups, each up to its last key */
                for (int64_t r = 0; r < rows; r++) col_end[r] = attn_causal_keys(s, i0 + r) - j0;
                for (int64_t r0 = 0; r0 < rows; r0 += DIAG_ROWS) {
                    const int64_t nr = min64(DIAG_ROWS, rows - r0);
                    const int64_t gcols = min64(cols, col_end[r0 + nr - 1]);
                    if (gcols > 0)
                        attn_tile_visit(&tile, r0, nr, qb + r0 * D, kg + j0 * D, vg + j0 * D,
                                        gcols, col_end + r0);
                }
            }
            attn_tile_end(&tile, out + ((b * H + h) * T + i0) * D);
        }
    }
    return ATTN_OK;
}

static bool allows(const attn_shape *s, const attn_params *p, int64_t h, int64_t i, int64_t j)
{
    (void)p, (void)h;
    return attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_full = {
    .name = "full",
    .summary = "exact softmax attention, tiled online softmax (FlashAttention-2 order)",
    .definition = "out_i = sum_j softmax_j(scale * q_i . k_j) v_j over every key j\n"
                  "(causal: j <= i + S - T). scale = 1/sqrt(D). Never builds the T x S matrix\n"
                  "unless materialize=1.",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .allows = allows,
};
