/*
 * bigbird — BigBird block-sparse attention (Zaheer et al. 2020, ITC): window + global + random
 * at the level of blocks of b positions. Definition: .definition below. Random blocks are drawn
 * per (head, query block) among the candidate blocks [0, N) (N = ceil(S/b), causal:
 * min(qb + 1, N)) that are neither global nor in the window, numbered in order: one in each of
 * r equal strata of that numbering (attn_bs_draw), all when r >= their number; so each key
 * counts once.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·(2w - 1 + g + r)·b·D + B·H·g·b·S·D)   flops 4·D per allowed score (exact)
 *   layout (block-sparse engine): one task per query block; its key blocks (window, global,
 *           random) sorted and merged into contiguous ranges, each one dense visit (causal:
 *           the diagonal block by groups of rows)
 *   workspace: threads × (b×256 scores + b×D acc + 2·b floats + (b + min(r, NB)) int64)
 *   threads: OpenMP over (b, h, query block), dynamic; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_BLOCK, P_WINDOW, P_GLOBALS, P_RANDOM, P_SEED };

static const attn_param_def params[] = {
    [P_BLOCK] = {"block", "b: positions per block", 64, 1, 4096, true},
    [P_WINDOW] = {"window_blocks", "w: key blocks with |qb - kb| < w (2: 3 blocks)", 2, 0, 1000000,
                  true},
    [P_GLOBALS] = {"global_blocks", "g: blocks 0..g-1 are global", 2, 0, 1000000, true},
    [P_RANDOM] = {"random_blocks", "r: random key blocks per query block and head", 3, 0, 1000000,
                  true},
    [P_SEED] = {"seed", "seed of the random blocks", 1, 0, 1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* The blocks query block qb never draws: global and window blocks, as sorted disjoint
 * intervals [a[k], e[k]) inside [0, N), N the candidate range. */
typedef struct fixed_blocks {
    int64_t N, a[2], e[2], n, count; /* count: candidates left for the draws */
} fixed_blocks;

static fixed_blocks fixed_of(const attn_shape *s, const attn_params *p, int64_t qb)
{
    const int64_t b = (int64_t)p->v[P_BLOCK], w = (int64_t)p->v[P_WINDOW];
    const int64_t NB = (s->S + b - 1) / b;
    fixed_blocks f = {.N = s->causal ? attn_bs_clamp(qb + 1, 0, NB) : NB};
    const int64_t ga = 0, ge = attn_bs_min((int64_t)p->v[P_GLOBALS], f.N);
    const int64_t wa = attn_bs_max(qb - w + 1, 0), we = attn_bs_min(qb + w, f.N);
    if (ge > ga) f.a[f.n] = ga, f.e[f.n++] = ge;
    if (we > wa) {
        if (f.n && wa <= f.e[0]) f.e[0] = attn_bs_max(f.e[0], we); /* overlaps the globals */
        else f.a[f.n] = wa, f.e[f.n++] = we;
    }
    f.count = f.N;
    for (int64_t k = 0; k < f.n; k++) f.count -= f.e[k] - f.a[k];
    return f;
}

/* Candidate number u -> block, skipping the fixed blocks. */
static int64_t candidate_block(const fixed_blocks *f, int64_t u)
{
    for (int64_t k = 0; k < f->n; k++)
        if (u >= f->a[k]) u += f->e[k] - f->a[k];
    return u;
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    const int64_t b = (int64_t)p->v[P_BLOCK], NB = (s->S + b - 1) / b;
    attn_bs_plan_blocks(s, b, pl);
    pl->ints = pl->rows_max + attn_bs_min((int64_t)p->v[P_RANDOM], NB); /* hi, picks */
}

/* One dense segment of key blocks [kb0, kb1) for all rows of the task. */
static void visit_blocks(const attn_shape *s, const attn_bs_task *t, int64_t b, int64_t kb0,
                         int64_t kb1, int64_t *hi, attn_bs_run *run)
{
    const int64_t p0 = attn_bs_pos(s, t->rows.i0), j0 = kb0 * b;
    for (int64_t r = 0; r < t->rows.n; r++) hi[r] = p0 + r + 1 - j0; /* causal: j <= p */
    const attn_bs_seg seg = {.keys = attn_bs_range(j0, attn_bs_min(kb1 * b, s->S)),
                             .r0 = 0,
                             .nrows = t->rows.n,
                             .hi = s->causal ? hi : NULL};
    attn_bs_visit(run, &seg);
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t b = (int64_t)p->v[P_BLOCK], r_blocks = (int64_t)p->v[P_RANDOM];
    const int64_t qb = attn_bs_floordiv(attn_bs_pos(s, t->rows.i0), b);
    int64_t *hi = t->ints, *picks = hi + t->rows.n;
    if (qb >= 0 && qb < (int64_t)p->v[P_GLOBALS]) { /* a global query block: every key */
        visit_blocks(s, t, b, 0, (s->S + b - 1) / b, hi, run);
        return;
    }
    const fixed_blocks f = fixed_of(s, p, qb);
    int64_t npicks = 0;
    if (r_blocks >= f.count) /* every candidate */
        for (int64_t u = 0; u < f.count; u++) picks[npicks++] = candidate_block(&f, u);
    else
        for (int64_t k = 0; k < r_blocks; k++)
            picks[npicks++] = candidate_block(&f, attn_bs_draw((uint64_t)p->v[P_SEED], t->h, qb, k,
                                                               f.count, r_blocks));
    /* merge the fixed intervals and the (increasing) picks into maximal ranges */
    int64_t k = 0, x = 0, kb0 = -1, kb1 = -1;
    while (k < f.n || x < npicks) {
        int64_t a, e;
        if (x >= npicks || (k < f.n && f.a[k] < picks[x])) a = f.a[k], e = f.e[k++];
        else a = picks[x], e = picks[x++] + 1;
        if (a == kb1) {
            kb1 = e;
            continue;
        }
        if (kb1 > kb0) visit_blocks(s, t, b, kb0, kb1, hi, run);
        kb0 = a, kb1 = e;
    }
    if (kb1 > kb0) visit_blocks(s, t, b, kb0, kb1, hi, run);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    const int64_t b = (int64_t)p->v[P_BLOCK], g = (int64_t)p->v[P_GLOBALS];
    const int64_t qb = attn_bs_floordiv(attn_bs_pos(s, i), b), kb = j / b;
    if (!attn_causal_allows(s, i, j)) return false;
    if ((qb >= 0 && qb < g) || kb < g ||
        (qb - kb < (int64_t)p->v[P_WINDOW] && kb - qb < (int64_t)p->v[P_WINDOW]))
        return true;
    const fixed_blocks f = fixed_of(s, p, qb);
    int64_t u = kb; /* its candidate number */
    for (int64_t k = 0; k < f.n; k++)
        if (kb >= f.e[k]) u -= f.e[k] - f.a[k];
    return kb < f.N &&
           attn_bs_drawn((uint64_t)p->v[P_SEED], h, qb, u, f.count, (int64_t)p->v[P_RANDOM]);
}

const attn_ops attn_kind_bigbird = {
    .name = "bigbird",
    .summary = "BigBird: block window + global blocks + seeded random blocks (ITC)",
    .definition = "blocks of b positions; query i at p = i + S - T in block qb = floor(p/b)\n"
                  "sees key j in block kb = floor(j/b) iff 0 <= qb < g (global query), kb < g,\n"
                  "|qb - kb| < w, or kb is one of r random blocks of (head, qb): one per equal\n"
                  "stratum of the other blocks (causal: kb <= qb), hashed from the seed; and\n"
                  "j <= p when causal.",
    .params = ATTN_PARAM_TABLE("bigbird", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
};
