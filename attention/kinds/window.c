/*
 * window — sliding-window softmax attention (local attention of Longformer, Mistral): each
 * query sees the keys within w positions of its own. Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·w·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 256 queries, by groups of 32-64 rows (about a quarter
 *           of the band: attn_bs_plan_band), each group's keys in one masked visit (at most 512)
 *   workspace: threads × (256×c scores + 256×D acc + 2·256 floats + 2·256 int64), any n;
 *              c = the group's keys rounded up to 64, in [256, 512]
 *   threads: OpenMP over (b, h, query block), dynamic by 8 blocks; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_WINDOW };
enum { BLOCK = 256 };
/* Blocks a thread takes at once: neighbouring blocks, whose rows the hardware then streams on. */
enum { TASK_CHUNK = 8 };

static const attn_param_def params[] = {
    [P_WINDOW] = {"window", "w: keys with |p - j| < w (itself and w-1 per side; causal: w back)",
                  256, 1, 1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, BLOCK, pl);
    attn_bs_plan_band(s, (int64_t)p->v[P_WINDOW], pl);
    pl->ints = 2 * pl->rows_max;
    pl->task_chunk = TASK_CHUNK;
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    attn_bs_band(s, t, 0, t->rows.n, (int64_t)p->v[P_WINDOW], 0, t->ints, run);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t d = attn_bs_pos(s, i) - j, w = (int64_t)p->v[P_WINDOW];
    return d > -w && d < w && attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_window = {
    .name = "window",
    .summary = "sliding window: each query sees the keys within w positions (block-sparse engine)",
    .definition = "query i at position p = i + S - T sees key j iff |p - j| < w (itself and w-1\n"
                  "keys on each side); causal: also j <= p (itself and the w-1 before it).\n"
                  "Softmax over those keys, scale 1/sqrt(D). w >= max(T, S) equals full.",
    .params = ATTN_PARAM_TABLE("window", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
};
