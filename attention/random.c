/*
 * random — each query attends to itself and r keys drawn at random (BigBird's random part,
 * per token).
 *   Query i of head h at position p = i + S - T draws its keys from the candidates [0, N),
 *   N = S, or N = p + 1 when causal (so every draw respects the mask): one key uniformly in
 *   each of r equal strata [floor(k·N/r), floor((k+1)·N/r)), k < r — r distinct keys spread over
 *   the whole range — by a hash of (seed, h, p, k); all N candidates when r >= N. It sees those
 *   keys and itself (j = p, when 0 <= p), each once. Draws are per token and per head, and a
 *   pure function of (seed, h, p): the mask predicate, prefill and decode agree.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·r·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 64 queries, each row against its own sorted key
 *           list (no two rows share keys): scores and p·v by vector loops over the keys read in
 *           place, the next row's keys prefetched meanwhile
 *   workspace: threads × (64×256 scores + 64×D acc + 2·64 floats +
 *              max(4096, min(r, S) + 1) + 65 int64)
 *   threads: OpenMP over (b, h, query block), dynamic; OpenBLAS single-threaded inside.
 */
#include "blocksparse.h"

enum { P_RANDOM, P_SEED };
enum { BLOCK = 64 };

static const attn_param_def params[] = {
    [P_RANDOM] = {"random", "r: random keys per query (plus itself), drawn per token and head",
                  32, 0, 1000000000, true},
    [P_SEED] = {"seed", "seed of the draws", 1, 0, 1000000000, true},
};


/* Candidates of the query at position pos: [0, N). */
static int64_t candidates(const attn_shape *s, int64_t pos)
{
    if (!s->causal) return s->S;
    return pos + 1 < 0 ? 0 : attn_bs_min(pos + 1, s->S);
}

/* Keys of the row lists batched into one segment, at least (a row may need more). */
enum { BATCH_KEYS = 4096 };

/* Most keys one row lists: its draws and itself. */
static int64_t row_keys_max(const attn_shape *s, const attn_params *p)
{
    return attn_bs_min((int64_t)p->v[P_RANDOM], s->S) + 1;
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, BLOCK, pl);
    /* the lists, then the rows' starts */
    pl->ints = attn_bs_max(BATCH_KEYS, row_keys_max(s, p)) + pl->rows_max + 1;
}

/* Rows [r0, r1) of the task, their lists in list[0..start[r1 - r0]). */
static void flush(attn_bs_run *run, const int64_t *list, const int64_t *start, int64_t r0,
                  int64_t r1)
{
    if (r1 <= r0) return;
    const attn_bs_seg seg = {.keys = {.n = start[r1 - r0], .idx = list}, .r0 = r0,
                             .nrows = r1 - r0, .row_start = start};
    attn_bs_visit(run, &seg);
}

/* Each row: its draws in increasing order with itself merged in (once); rows batched into
 * segments of per-row lists; a row that sees every candidate is one contiguous visit. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    const int64_t r_keys = (int64_t)p->v[P_RANDOM], cap = pl->ints - pl->rows_max - 1;
    const uint64_t seed = (uint64_t)p->v[P_SEED];
    int64_t *list = t->ints, *start = list + cap, *draws;
    int64_t r0 = 0; /* first row of the batch */
    start[0] = 0;
    for (int64_t r = 0; r < t->rows.n; r++) {
        const int64_t pos = attn_bs_pos(s, t->rows.i0 + r), N = candidates(s, pos);
        int64_t n = start[r - r0];
        if (r_keys >= N || n + r_keys + 1 > cap) { /* close the batch before this row */
            flush(run, list, start, r0, r);
            r0 = r, n = start[0] = 0;
        }
        if (r_keys >= N) { /* every candidate (itself included when it is a key) */
            const attn_bs_seg all = {.keys = attn_bs_range(0, N), .r0 = r, .nrows = 1};
            attn_bs_visit(run, &all);
            r0 = r + 1;
            continue;
        }
        draws = list + n + 1; /* room for itself in front */
        attn_bs_draws(seed, t->h, pos, N, r_keys, draws);
        bool self = pos < 0; /* already listed, or not a key */
        for (int64_t k = 0; k < r_keys; k++) {
            const int64_t x = draws[k];
            if (!self && pos <= x) {
                if (pos < x) list[n++] = pos;
                self = true;
            }
            list[n++] = x; /* n <= k + 1 + start: never past draws[k] */
        }
        if (!self) list[n++] = pos;
        start[r - r0 + 1] = n;
    }
    flush(run, list, start, r0, t->rows.n);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};
ATTN_BS_SLOTS(pattern)

static bool allows(const attn_shape *s, const attn_params *p, int64_t h, int64_t i, int64_t j)
{
    const int64_t pos = attn_bs_pos(s, i);
    if (!attn_causal_allows(s, i, j)) return false;
    if (j == pos) return true;
    return attn_bs_drawn((uint64_t)p->v[P_SEED], h, pos, j, candidates(s, pos),
                         (int64_t)p->v[P_RANDOM]);
}

const attn_ops attn_kind_random = {
    .name = "random",
    .summary = "random: each query sees itself and r seeded random keys, per token and head",
    .definition = "query i of head h at position p = i + S - T sees itself (j = p) and r keys\n"
                  "drawn from [0, N), N = S (causal: p + 1): one uniform key in each of r equal\n"
                  "strata [floor(k N/r), floor((k+1) N/r)), by a hash of (seed, h, p, k); all N\n"
                  "when r >= N. Per token, per head. Softmax over those keys, scale 1/sqrt(D).",
    .params = params,
    .nparams = sizeof params / sizeof params[0],
    .check = attn_bs_accept,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .allows = allows,
};
