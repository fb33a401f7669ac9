/*
 * random — each query attends to itself and r keys drawn at random (BigBird's random part at
 * the level of tokens), drawn per query block (draw=block, default) or per query (draw=token).
 * Definition: .definition below. The draws are stratified (attn_bs_draw: one key uniformly in
 * each of r equal strata of the candidates, hashed from (seed, h, who, k)) and per head, a pure
 * function of (seed, h, who, N): the mask predicate, prefill and decode agree; query blocks are
 * aligned on positions, so prefill and decode share them. A key both drawn and the query itself
 * counts once.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·r·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine):
 *     block: one task per query block, one segment: its r drawn keys (a list), each row seeing
 *           those up to itself when causal (row bounds), and each row's own key (when not drawn:
 *           seg.own). The forward visits the own keys and the drawn keys in one pass per group of
 *           rows (attn_tile_attend_own: scores, softmax and p·v fused, from a fresh start; kᵀ
 *           packed from the drawn rows, v read through the list, no copy), asking meanwhile for
 *           the next block's rows and drawn keys (seg.ahead: likely the thread's next task, which
 *           then takes those draws from the ints its thread kept, task.kept); the backward
 *           visits the own key as a one-key list, then the drawn keys (K and V rows gathered
 *           once).
 *           K/V rows are read r per block, not r per query: the time stays linear in n once K
 *           and V outgrow the caches (measured exponents in docs/performance.md).
 *     token: blocks of 64 queries, each row against its own sorted key list (no two rows share
 *           keys): scores and p·v by vector loops over the keys read in place, the next row's
 *           keys prefetched meanwhile (a cache miss per score once K, V exceed the caches).
 *   workspace: threads × (rows×256 scores + rows×D acc + 2·rows floats + ints int64 [+ block:
 *              2·max(256, min(r, 4096))·D gathered floats when r < S]), rows = min(b, T) (block)
 *              or min(64, T) (token); ints = 2 + 2·min(r, S) + 2·rows (block) or
 *              max(4096, min(r, S) + 1) + rows + 1 (token)
 *   threads: OpenMP over (b, h, query block), dynamic (draw=block: 16 blocks at a time); one
 *            thread per tile, no BLAS.
 */
#include <string.h>

#include "blocksparse.h"

enum { P_RANDOM, P_SEED, P_DRAW, P_BLOCK };
enum { DRAW_BLOCK, DRAW_TOKEN };
enum { TOKEN_BLOCK = 64, GATHER_MAX = 4096 };
/* Blocks a thread takes at once (draw=block): its next block is then the one whose rows it asked
 * for ahead. */
enum { TASK_CHUNK = 16 };

static const char *const draw_names[] = {"block", "token", NULL};

static const attn_param_def params[] = {
    [P_RANDOM] = {"random", "r: random keys per query (plus itself), drawn per head", 32, 0,
                  1000000000, true},
    [P_SEED] = {"seed", "seed of the draws", 1, 0, 1000000000, true},
    [P_DRAW] = {"draw", "draws per query block (shared by its queries) or per token", DRAW_BLOCK, 0,
                1, true, draw_names},
    [P_BLOCK] = {"block", "b: positions per query block of draw=block", 64, 1, 4096, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* ---- draw=token ---- */

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

static void plan_token(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, TOKEN_BLOCK, pl);
    /* the lists, then the rows' starts */
    pl->ints = attn_bs_max(BATCH_KEYS, row_keys_max(s, p)) + pl->rows_max + 1;
}

/* Rows [r0, r1) of the task, their lists in list[0..start[r1 - r0]). */
static void flush(attn_bs_run *run, const int64_t *list, const int64_t *start, int64_t r0,
                  int64_t r1)
{
    if (r1 <= r0) return;
    const attn_bs_seg seg = {.keys = {.n = start[r1 - r0], .idx = list},
                             .r0 = r0,
                             .nrows = r1 - r0,
                             .row_start = start};
    attn_bs_visit(run, &seg);
}

/* Each row: its draws in increasing order with itself merged in (once); rows batched into
 * segments of per-row lists; a row that sees every candidate is one contiguous visit. */
static void visit_token(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
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

/* ---- draw=block ---- */

/* Candidates [0, N) of query block qb: those of its last position, (qb + 1)·b - 1. */
static int64_t block_candidates(const attn_shape *s, int64_t b, int64_t qb)
{
    if (!s->causal) return s->S;
    return attn_bs_clamp((qb + 1) * b, 0, s->S);
}

static void plan_block(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    const int64_t r = attn_bs_min((int64_t)p->v[P_RANDOM], s->S);
    attn_bs_plan_blocks(s, (int64_t)p->v[P_BLOCK], pl);
    /* (h, qb) of the next block's draws, the draws, the next block's, row bounds, own keys */
    pl->ints = 2 + 2 * r + 2 * pl->rows_max;
    pl->gathers = r < s->S;      /* some block may draw scattered keys */
    pl->seeds = true;            /* the own keys, one per row, first */
    pl->task_chunk = TASK_CHUNK; /* a thread's next block: the one it asks for ahead */
    if (pl->gathers) pl->gather_max = attn_bs_min(r, GATHER_MAX); /* copied once per task */
}

/* The keys of query block qb of head h: its draws into draws[0..r), or all its candidates
 * (a range) when r >= N. */
static attn_bs_keys block_keys(const attn_shape *s, const attn_params *p, int64_t h, int64_t qb,
                               int64_t *draws)
{
    const int64_t r_keys = (int64_t)p->v[P_RANDOM];
    const int64_t N = block_candidates(s, (int64_t)p->v[P_BLOCK], qb);
    if (r_keys >= N) return attn_bs_range(0, attn_bs_max(N, 0));
    attn_bs_draws((uint64_t)p->v[P_SEED], h, qb, N, r_keys, draws);
    return (attn_bs_keys){.n = r_keys, .idx = draws};
}

/* The block's draws (all candidates when r >= N) against all its rows, each up to itself when
 * causal, and each row's own key when it is not drawn (seg.own: the engine computes both in one
 * pass per group of rows), the next block's keys asked for meanwhile (seg.ahead: that block is
 * likely this thread's next task). */
static void visit_block(const attn_shape *s, const attn_params *p, const attn_bs_task *t,
                        attn_bs_run *run)
{
    const int64_t r_keys = (int64_t)p->v[P_RANDOM], b = (int64_t)p->v[P_BLOCK], n = t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0), qb = attn_bs_floordiv(p0, b);
    const int64_t N = block_candidates(s, b, qb), nd = attn_bs_min(r_keys, attn_bs_max(N, 0));
    const int64_t most = attn_bs_min(r_keys, s->S); /* draws of a block at most */
    int64_t *tag = t->ints, *draws = tag + 2, *next = draws + most, *hi = next + most;
    int64_t *own = hi + n;
    const bool all = r_keys >= N;
    attn_bs_keys keys;
    if (t->kept && tag[0] == t->h && tag[1] == qb) { /* drawn by the thread's previous task */
        memcpy(draws, next, (size_t)nd * sizeof *draws);
        keys = (attn_bs_keys){.n = nd, .idx = draws};
    } else {
        keys = block_keys(s, p, t->h, qb, draws);
    }

    /* per row: drawn keys j <= p (c of them, increasing in p), and whether p is one */
    int64_t c = 0;
    for (int64_t r = 0; r < n; r++) {
        const int64_t pos = p0 + r;
        bool drawn;
        if (all) {
            c = attn_bs_clamp(pos + 1, 0, nd);
            drawn = pos >= 0 && pos < nd;
        } else {
            while (c < nd && draws[c] <= pos) c++;
            drawn = c > 0 && draws[c - 1] == pos;
        }
        hi[r] = c;
        own[r] = pos >= 0 && !drawn ? pos : -1;
    }
    const attn_bs_keys ahead = block_keys(s, p, t->h, qb + 1, next);
    tag[0] = ahead.idx ? t->h : -1, tag[1] = qb + 1; /* next: draws of the block after, kept */
    const attn_bs_seg seg = {.keys = keys,
                             .r0 = 0,
                             .nrows = n,
                             .hi = s->causal ? hi : NULL,
                             .own = own,
                             .ahead = ahead,
                             .last = true};
    attn_bs_visit(run, &seg);
}

/* ---- the pattern ---- */

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    if ((int)p->v[P_DRAW] == DRAW_TOKEN) plan_token(s, p, pl);
    else plan_block(s, p, pl);
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    if ((int)p->v[P_DRAW] == DRAW_TOKEN) visit_token(s, p, pl, t, run);
    else visit_block(s, p, t, run);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    const int64_t pos = attn_bs_pos(s, i), r = (int64_t)p->v[P_RANDOM];
    const uint64_t seed = (uint64_t)p->v[P_SEED];
    if (!attn_causal_allows(s, i, j)) return false;
    if (j == pos) return true;
    if ((int)p->v[P_DRAW] == DRAW_TOKEN)
        return attn_bs_drawn(seed, h, pos, j, candidates(s, pos), r);
    const int64_t b = (int64_t)p->v[P_BLOCK], qb = attn_bs_floordiv(pos, b);
    return attn_bs_drawn(seed, h, qb, j, block_candidates(s, b, qb), r);
}

const attn_ops attn_kind_random = {
    .name = "random",
    .summary = "random: itself + r seeded random keys per query block (default) or token, per head",
    .definition =
        "query i of head h at position p = i + S - T sees itself (j = p) and r keys\n"
        "drawn from [0, N): one uniform key in each of r equal strata\n"
        "[floor(k N/r), floor((k+1) N/r)), by a hash of (seed, h, who, k); all N when\n"
        "r >= N. draw=block (default): who = qb = floor(p/b), N = S (causal:\n"
        "min(S, (qb+1) b)), shared by the block's queries, causal ones see drawn j <= p.\n"
        "draw=token: who = p, N = S (causal: p + 1). Per head; each key once.\n"
        "Softmax over those keys, scale 1/sqrt(D).",
    .params = ATTN_PARAM_TABLE("random", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
};
