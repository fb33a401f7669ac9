/*
 * window — sliding-window softmax attention (local attention of Longformer, Mistral).
 *   Query i sits at position p = i + S - T and sees key j iff |p - j| < w: itself and w - 1
 *   keys on each side (2w - 1 keys); causal: also j <= p, i.e. itself and the w - 1 before it
 *   (w keys, "look-back w"). w >= max(T, S) is full attention.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·w·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 256 queries; the band keys every row of a block sees
 *           in one dense visit, the two triangles at its edges by groups of 64 rows
 *   workspace: threads × (256×256 scores + 256×D acc + 2·256 floats + 2·256 int64), any n
 *   threads: OpenMP over (b, h, query block), dynamic; OpenBLAS single-threaded inside.
 */
#include "blocksparse.h"

enum { P_WINDOW };
enum { BLOCK = 256 };

static const attn_param_def params[] = {
    [P_WINDOW] = {"window", "w: keys with |p - j| < w (itself and w-1 per side; causal: w back)",
                  256, 1, 1073741824, true},
};


static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    (void)p;
    attn_bs_plan_blocks(s, BLOCK, pl);
    pl->ints = 2 * pl->rows_max;
}

/* One segment: the keys from the first row's lowest to the last row's highest, per-row bounds. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t w = (int64_t)p->v[P_WINDOW], n = t->rows.n;
    int64_t *lo = t->ints, *hi = lo + n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    const int64_t j0 = attn_bs_max(0, p0 - w + 1); /* the first row's lowest key */
    for (int64_t r = 0; r < n; r++) {
        const int64_t pos = p0 + r;
        lo[r] = attn_bs_max(0, pos - w + 1) - j0;
        hi[r] = attn_bs_min(s->S, s->causal ? pos + 1 : pos + w) - j0;
    }
    const attn_bs_seg seg = {.keys = attn_bs_range(j0, j0 + hi[n - 1]), .r0 = 0, .nrows = n,
                             .lo = lo, .hi = hi};
    attn_bs_visit(run, &seg);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};
ATTN_BS_SLOTS(pattern)

static bool allows(const attn_shape *s, const attn_params *p, int64_t h, int64_t i, int64_t j)
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
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .check = attn_bs_accept,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .allows = allows,
};
