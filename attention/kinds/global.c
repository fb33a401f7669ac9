/*
 * global — Longformer-style global + sliding-window attention: the first g positions are
 * global tokens (they see and are seen by every position), the others also see a window of w.
 * Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·(T·(g + w) + g·S)·D)   flops 4·D per allowed score, counted from the layout
 *   layout (block-sparse engine): blocks of 256 queries; global query rows: all keys; the other
 *           rows: the global keys [0, g) in one segment, then the window minus [0, g) (each key
 *           once), by groups of 32-64 rows,
 *           each group's window keys in one masked visit (attn_bs_plan_band)
 *   workspace: threads × (256×c scores + 256×D acc + 2·256 floats + 3·256 int64), any n;
 *              c = a group's window keys rounded up to 64, in [256, 512]
 *   threads: OpenMP over (b, h, query block), dynamic; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_GLOBALS, P_WINDOW };
enum { BLOCK = 256 };

static const attn_param_def params[] = {
    [P_GLOBALS] = {"globals", "g: positions 0..g-1 are global (see and are seen by all)", 16, 0,
                   1000000000, true},
    [P_WINDOW] = {"window", "w: local keys with |p - j| < w (0: global only)", 256, 0, 1000000000,
                  true},
    ATTN_SCORE_MOD_PARAMS,
};

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, BLOCK, pl);
    attn_bs_plan_band(s, (int64_t)p->v[P_WINDOW], pl);
    pl->ints = 3 * pl->rows_max;
}

/* Non-global task rows [r0, r1): the global keys, then the window without them (each once). */
static void visit_local(const attn_shape *s, const attn_params *p, const attn_bs_task *t,
                        int64_t r0, int64_t r1, attn_bs_run *run)
{
    if (r1 <= r0) return;
    const int64_t g = attn_bs_min((int64_t)p->v[P_GLOBALS], s->S), w = (int64_t)p->v[P_WINDOW];
    int64_t *ghi = t->ints + 2 * t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    for (int64_t r = r0; r < r1; r++) ghi[r] = s->causal ? attn_bs_min(g, p0 + r + 1) : g;
    const attn_bs_seg globals = {.keys = attn_bs_range(0, g),
                                 .r0 = r0,
                                 .nrows = r1 - r0,
                                 .hi = ghi};
    attn_bs_visit(run, &globals);
    attn_bs_band(s, t, r0, r1, w, g, t->ints, run);
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t g = (int64_t)p->v[P_GLOBALS], n = t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    /* rows with p < 0 (T > S), then global rows 0 <= p < g, then the others */
    const int64_t rg0 = attn_bs_clamp(-p0, 0, n), rg1 = attn_bs_clamp(g - p0, 0, n);
    visit_local(s, p, t, 0, rg0, run);
    if (rg1 > rg0) {
        int64_t *hi = t->ints;
        for (int64_t r = rg0; r < rg1; r++) hi[r] = s->causal ? p0 + r + 1 : s->S;
        const attn_bs_seg all = {.keys = attn_bs_range(0, s->S),
                                 .r0 = rg0,
                                 .nrows = rg1 - rg0,
                                 .hi = hi};
        attn_bs_visit(run, &all);
    }
    visit_local(s, p, t, rg1, n, run);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t pos = attn_bs_pos(s, i), g = (int64_t)p->v[P_GLOBALS];
    const int64_t w = (int64_t)p->v[P_WINDOW], d = pos - j;
    const bool seen = j < g || (pos >= 0 && pos < g) || (d > -w && d < w);
    return seen && attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_global = {
    .name = "global",
    .summary = "Longformer: g global tokens plus a sliding window (block-sparse engine)",
    .definition = "positions 0..g-1 are global. Query i at position p = i + S - T sees key j iff\n"
                  "j < g, or 0 <= p < g (global query: every key), or |p - j| < w (window);\n"
                  "causal: also j <= p. Softmax over those keys, scale 1/sqrt(D).\n"
                  "w = 0: global tokens only; g = 0: the window kind.",
    .params = ATTN_PARAM_TABLE("global", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
};
