/*
 * prefix — prefix-LM attention (Raffel et al. 2020, T5's prefix LM; Dong et al. 2019, UniLM):
 * the first P positions (the prefix) attend to each other bidirectionally, every later position
 * sees the whole prefix and, causal, the positions up to itself. Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·S·D) (a causal mask relaxed on the prefix)   flops 4·D per allowed score,
 *           counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 256 queries, one segment each: the keys [0, S) up to
 *           each row's bound (P in the prefix, else max(P, p + 1), or S without the causal mask;
 *           the keys all rows see in dense visits, the rest by groups of rows)
 *   workspace: threads × (256×256 scores + 256×D acc + 2·256 floats + 256 int64), any n
 *   threads: OpenMP over (b, h, query block), dynamic; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_PREFIX };
enum { BLOCK = 256 };

static const attn_param_def params[] = {
    [P_PREFIX] = {"prefix", "P: positions 0..P-1 are the prefix (-1: floor(S/2))", -1, -1,
                  1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* P of the shape: the parameter, or floor(S/2) for -1. */
static int64_t prefix_of(const attn_shape *s, const attn_params *p)
{
    const int64_t P = (int64_t)p->v[P_PREFIX];
    return P < 0 ? s->S / 2 : P;
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    (void)p;
    attn_bs_plan_blocks(s, BLOCK, pl);
    pl->ints = pl->rows_max;
}

/* One segment: keys [0, S), each row up to hi: P for a prefix row, else p + 1 or S. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t n = t->rows.n, P = attn_bs_min(prefix_of(s, p), s->S);
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    int64_t *hi = t->ints, j1 = 0;
    for (int64_t r = 0; r < n; r++) {
        const int64_t pos = p0 + r;
        if (pos >= 0 && pos < P) hi[r] = P;
        else hi[r] = s->causal ? attn_bs_max(P, pos + 1) : s->S;
        j1 = attn_bs_max(j1, hi[r]);
    }
    const attn_bs_seg seg = {.keys = attn_bs_range(0, j1), .r0 = 0, .nrows = n, .hi = hi};
    attn_bs_visit(run, &seg);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static void resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    p->v[P_PREFIX] = (double)prefix_of(s, p);
}

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t P = prefix_of(s, p), pos = attn_bs_pos(s, i);
    if (pos >= 0 && pos < P) return j < P;
    return j < P || attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_prefix = {
    .name = "prefix",
    .summary = "prefix-LM: bidirectional over the first P positions, causal after",
    .definition =
        "prefix-LM (Raffel et al. 2020, T5; Dong et al. 2019, UniLM): the first P positions\n"
        "are the prefix (P = -1: floor(S/2)). Query i at position p = i + S - T: in the prefix\n"
        "(0 <= p < P) it sees exactly the keys j < P (the prefix attends bidirectionally,\n"
        "not to what follows); any other query sees the prefix j < P and, causal, the keys\n"
        "j <= p, without the causal mask every key. Causal, this is the mask j < P or j <= p.\n"
        "Softmax over those keys, scale 1/sqrt(D). P = 0 is full attention. Default half the\n"
        "keys: T5's prefix LM splits a span at a random point, half on average, and the\n"
        "bidirectional share of the work is then the same at every n; a decode step's last\n"
        "query sees every key whatever P.",
    .params = ATTN_PARAM_TABLE("prefix", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
    .on_request =
        "a mask whose cost per score is the block-sparse engine's, which the default sweep measures",
    .resolve = resolve,
};
