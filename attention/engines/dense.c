/*
 * dense.c — the dense softmax-attention engine of the kinds full, mqa and gqa (dense.h): every
 * allowed key (all, or the causal ones), tiled with an online softmax (FlashAttention-2 order).
 * The G = H/Hkv query heads of a KV head run together.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / G
 *   score modifiers (alibi, softcap: score_mod.h) in the tile, on every score it computes; tile
 *     row r's position and slope are set once per task, the key positions once per key block
 *   time O(B·H·T·S·D)   flops 4·D per allowed score (q·k and p·v), counted exactly (the
 *     modifiers are not counted, like the exp)
 *   grouped K/V: a tile holds P = max(1, block_q / G) query positions × the G heads of one KV
 *     head, stacked position-major, head-minor (tile row r = position i0 + r/G, head g·G + r%G),
 *     so each K/V block is loaded once for all G heads and the causal key limits of the rows stay
 *     non-decreasing. The rows are gathered into a buffer and scattered back only when G > 1 and
 *     T > 1 (G = 1: one head's rows; T = 1: the G heads' rows are adjacent in q and out).
 *   key chunks (flash-decoding): the key blocks of each (b, kv head, query block) are cut into
 *     `split` chunks; each chunk's tile leaves its running max m, sum l and unnormalised acc in a
 *     partial slot, merged exactly: out = Σ_c e^(m_c-M) acc_c / Σ_c e^(m_c-M) l_c, M = max_c m_c.
 *     Auto (split=0): enough chunks for TASKS_TARGET tasks, each >= MIN_CHUNK_KEYS keys, so a
 *     decode step (few rows, long S) streams the KV cache on every thread. The chunking never
 *     depends on the thread count, so neither does the result.
 *   workspace: threads × (tile: rows × ld scores + D × ld packed keys (ld = block_k rounded up
 *              to 64) + rows × D accumulator + 2·rows floats;
 *              rows int64 key limits; rows × D gather buffer when G > 1 and T > 1), rows = P·G;
 *              plus, when split > 1, tasks × rows × (D + 2) floats of partials (auto: fewer than
 *              2·TASKS_TARGET slots). Independent of S except through the number of chunks.
 *              materialize=1 (baseline): one tile of T·G rows × S keys, split 1.
 *              alibi adds 2·rows + block_k floats per thread (positions and slopes).
 *   threads: OpenMP over (b, kv head, query block, key chunk), dynamic schedule (causal rows are
 *            uneven), then over (b, kv head, query block) for the merge. The tiles run the
 *            kernel set's micro-kernels (no BLAS).
 *   saved (forward_train): each row's log-sum-exp, B·H·T floats (+inf: the row sees no key).
 * Backward (FlashAttention-2, attn_btile in tile_backward.c): a task is one key block of one
 *   (b, kv head); it owns that block's dk, dv rows (zeroed, then accumulated over every query
 *   block that sees it: the G heads of a group are stacked in the tile as in the forward, so
 *   their sum needs no reduction), and recomputes, per query block, S = scale·QKᵀ (+ causal
 *   limits by row groups across the diagonal, + the modifiers), P = exp(S - lse),
 *   dS = P∘(dO·Vᵀ - Δ), Δ = rowsum(dO∘O); dV += Pᵀ dO, dK += scale·dSᵀ Q; the block's
 *   dQ = scale·dS K goes to a tile accumulator and is added to dq one thread at a time (an
 *   OpenMP critical section, rows × D adds per rows × block_k × D × 10 flops; the order of the
 *   adds may vary between runs, like FlashAttention-2's atomics). Never the T×S matrix;
 *   materialize=1 is the baseline whose one tile per (b, kv head) is the whole T·G × S P and dP.
 *   flops 2.5 × forward (10·D per allowed score: five products against two).
 *   workspace: threads × (attn_btile: tile + rows × block_k dP (+ the same for softcap's
 *              derivative) + modifiers + 2 rows × D stacks when G > 1 and T > 1 + rows int64),
 *              independent of n (materialize=1: 2·T·G·S floats per thread).
 *   threads: OpenMP over (b, kv head, key block), dynamic; dq zeroed in parallel first.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "decode.h"
#include "dense.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_BLOCK_Q, P_BLOCK_K, P_MATERIALIZE, P_SPLIT };

enum {
    /* A key block that crosses the causal diagonal is visited by groups of this many tile rows,
     * each computing only the keys its last row sees: about 1/2 + DIAG_ROWS/(2·block) of the
     * block's scores instead of all of them. */
    DIAG_ROWS = 64,
    TASKS_TARGET = 32, /* auto split: at least this many tasks (load balance, any thread count) */
    MIN_CHUNK_KEYS = 512, /* auto split: no chunk shorter than this (merge cost stays small) */
    ALIGN_FLOATS = 16,    /* 64 bytes */
};

const attn_param_def attn_dense_params[ATTN_DENSE_NPARAMS] = {
    [P_BLOCK_Q] = {"block_q", "tile rows: query positions x the G heads sharing a KV head", 256, 1,
                   4096, true},
    [P_BLOCK_K] = {"block_k", "keys per tile (online-softmax step)", 256, 1, 65536, true},
    [P_MATERIALIZE] = {"materialize", "1: baseline that builds the whole T×S score matrix per head",
                       0, 0, 1, true},
    [P_SPLIT] = {"split",
                 "key chunks per (batch, KV head, query block), merged exactly "
                 "(flash-decoding); 0: auto",
                 0, 0, 1024, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* The modifiers set in p (found by name, as for every kind: the dense kinds share this table). */
static attn_score_mod score_mod(const attn_shape *s, const attn_params *p)
{
    const attn_param_table t = {.owner = "dense",
                                .defs = attn_dense_params,
                                .count = ATTN_DENSE_NPARAMS};
    return attn_score_mod_of(&t, p, s);
}

typedef struct plan {
    int64_t G;             /* query heads per KV head */
    int64_t positions;     /* query positions per tile (P) */
    int64_t rows;          /* tile rows: positions × G */
    int64_t block_k;       /* keys per visit (clipped to S) */
    int64_t nqb, nkb;      /* query blocks per (b, kv head); key blocks per head */
    int64_t split;         /* key chunks per (b, kv head, query block) */
    int64_t groups, tasks; /* (b, kv head, query block) count; × split */
    bool gather;           /* stack the G heads' rows in a buffer */
    int64_t tile_floats, gather_floats, slot_floats;
    int64_t mod_floats;  /* the modifiers' scratch in a tile (ALiBi positions and slopes) */
    size_t thread_bytes; /* tile + modifiers + gather buffer + key limits */
    attn_score_mod mod;
} plan;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up(int64_t n) { return ceil_div(n, ALIGN_FLOATS) * ALIGN_FLOATS; }

static plan make_plan(const attn_shape *s, const attn_params *p)
{
    plan pl;
    const bool whole = p->v[P_MATERIALIZE] != 0;
    pl.G = s->H / s->Hkv;
    pl.positions = whole ? s->T : min64(max64(1, (int64_t)p->v[P_BLOCK_Q] / pl.G), s->T);
    pl.rows = pl.positions * pl.G;
    pl.block_k = whole ? s->S : min64((int64_t)p->v[P_BLOCK_K], s->S);
    pl.nqb = ceil_div(s->T, pl.positions);
    pl.nkb = ceil_div(s->S, pl.block_k);
    pl.groups = s->B * s->Hkv * pl.nqb;
    int64_t split = (int64_t)p->v[P_SPLIT];
    if (whole) split = 1;
    else if (split == 0) /* auto */
        split = min64(ceil_div(TASKS_TARGET, pl.groups), max64(1, s->S / MIN_CHUNK_KEYS));
    pl.split = min64(split, pl.nkb); /* every chunk holds at least one key block */
    pl.tasks = pl.groups * pl.split;
    pl.gather = pl.G > 1 && s->T > 1;
    pl.tile_floats = attn_tile_floats(pl.rows, pl.block_k, s->D);
    pl.mod = score_mod(s, p);
    pl.mod_floats = round_up(attn_tile_mod_floats(&pl.mod, pl.rows, pl.block_k));
    pl.gather_floats = pl.gather ? round_up(pl.rows * s->D) : 0;
    pl.slot_floats = pl.split > 1 ? round_up(pl.rows * (s->D + 2)) : 0;
    int64_t limits = ceil_div(pl.rows, 8) * 8; /* int64 key limits, in whole 64-byte lines */
    pl.thread_bytes = (size_t)(pl.tile_floats + pl.mod_floats + pl.gather_floats) * sizeof(float) +
                      (size_t)limits * sizeof(int64_t);
    return pl;
}

attn_status attn_dense_check(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             char *msg, size_t msg_len)
{
    return ATTN_OK; /* every shape accepted by attn_shape_check and every in-range tile works */
}

/* T = 1 without modifiers or materialize: the streaming decode kernel (decode.c). */
static bool use_decode(const attn_shape *s, const attn_params *p)
{
    const attn_score_mod mod = score_mod(s, p);
    return s->T == 1 && p->v[P_MATERIALIZE] == 0 && !attn_score_mod_on(&mod);
}

size_t attn_dense_workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                  const attn_params *p)
{
    const plan pl = make_plan(s, p);
    const size_t tile = attn_widen_bytes(s) + (size_t)x->threads * pl.thread_bytes +
                        (size_t)pl.tasks * (size_t)pl.slot_floats * sizeof(float);
    if (!use_decode(s, p)) return tile;
    /* forward_train (f32 only: no backward takes another dtype) keeps the tile: room for both */
    const size_t dec = attn_decode_workspace_bytes(x, s, (int64_t)p->v[P_SPLIT]);
    return dec > tile || s->dtype != ATTN_F32 ? dec : tile;
}

void attn_dense_resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    if (p->v[P_SPLIT] == 0) p->v[P_SPLIT] = (double)make_plan(s, p).split;
}

double attn_dense_allowed_scores(const attn_shape *s)
{
    double per_head = 0;
    if (!s->causal) per_head = (double)s->T * (double)s->S;
    else
        for (int64_t i = 0; i < s->T; i++) per_head += (double)attn_causal_keys(s, i);
    return per_head * (double)s->B * (double)s->H;
}

double attn_dense_flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    return 4.0 * (double)s->D * attn_dense_allowed_scores(s);
}

double attn_dense_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const double stored = (double)attn_dtype_size(s->dtype); /* q, k, v; out is float32 */
    return (stored + sizeof(float)) * (double)attn_q_elems(s) +
           2.0 * stored * (double)attn_kv_elems(s);
}

/* Row of q/out [B·H·T, D] holding tile row r of the group (b, g) whose first position is i0. */
static int64_t row_of(const attn_shape *s, int64_t G, int64_t b, int64_t g, int64_t i0, int64_t r)
{
    return (b * s->H + g * G + r % G) * s->T + i0 + r / G;
}

/* One task: tile rows of group (b, g, positions from i0) against key blocks [kb0, kb1). */
static void visit_chunk(const attn_shape *s, const plan *pl, attn_tile *tile, const float *qt,
                        const float *kg, const float *vg, int64_t i0, int64_t npos, int64_t kb0,
                        int64_t kb1, int64_t *col_end)
{
    const int64_t D = s->D, rows = npos * pl->G, G = pl->G;
    /* keys seen by the first and by the last position of this query block */
    const int64_t first_sees = attn_causal_keys(s, i0);
    const int64_t last_sees = attn_causal_keys(s, i0 + npos - 1);
    const int64_t end = min64(kb1 * pl->block_k, min64(s->S, last_sees));
    for (int64_t j0 = kb0 * pl->block_k; j0 < end; j0 += pl->block_k) {
        const int64_t cols = min64(pl->block_k, s->S - j0);
        attn_tile_mod_keys(tile, j0, 1, cols); /* ALiBi: the block's key positions */
        if (j0 + cols <= first_sees) {         /* every row sees every key of the block */
            attn_tile_visit(tile, 0, rows, qt, kg + j0 * D, vg + j0 * D, cols, NULL);
            continue;
        }
        /* the block crosses the causal diagonal: row groups, each up to its last key (the
         * block's keys packed once for all groups) */
        for (int64_t r = 0; r < rows; r++) col_end[r] = attn_causal_keys(s, i0 + r / G) - j0;
        attn_tile_pack_keys(tile, kg + j0 * D, D, min64(cols, col_end[rows - 1]));
        for (int64_t r0 = 0; r0 < rows; r0 += DIAG_ROWS) {
            const int64_t nr = min64(DIAG_ROWS, rows - r0);
            const int64_t gcols = min64(cols, col_end[r0 + nr - 1]);
            const attn_tile_mask mask = {.hi = col_end + r0};
            if (gcols > 0)
                attn_tile_visit_packed(tile, r0, nr, qt + r0 * D, D, vg + j0 * D, D, gcols, &mask);
        }
    }
}

/* Merge the split partials of one group into its output rows (exact rescaling by the maxima),
 * and their log-sum-exp into lse (when set). */
static void merge_group(const attn_shape *s, const plan *pl, const float *slots, int64_t group,
                        float *out, float *lse)
{
    const int64_t D = s->D, qb = group % pl->nqb, bg = group / pl->nqb;
    const int64_t b = bg / s->Hkv, g = bg % s->Hkv, i0 = qb * pl->positions;
    const int64_t rows = min64(pl->positions, s->T - i0) * pl->G;
    const float *first = slots + group * pl->split * pl->slot_floats;
    for (int64_t r = 0; r < rows; r++) {
        float *o = out + row_of(s, pl->G, b, g, i0, r) * D;
        float M = -INFINITY;
        for (int64_t c = 0; c < pl->split; c++) M = fmaxf(M, first[c * pl->slot_floats + r]);
        memset(o, 0, (size_t)D * sizeof(float));
        if (lse) lse[row_of(s, pl->G, b, g, i0, r)] = INFINITY;
        if (M == -INFINITY) continue; /* the row sees no key */
        float L = 0;
        for (int64_t c = 0; c < pl->split; c++) {
            const float *slot = first + c * pl->slot_floats;
            const float m = slot[r], l = slot[pl->rows + r];
            if (m == -INFINITY) continue; /* this chunk held no key the row sees */
            const float w = expf(m - M), *acc = slot + 2 * pl->rows + r * D;
            L += w * l;
            for (int64_t d = 0; d < D; d++) o[d] += w * acc[d];
        }
        const float inv = 1.0f / L;
        for (int64_t d = 0; d < D; d++) o[d] *= inv;
        if (lse) lse[row_of(s, pl->G, b, g, i0, r)] = M + logf(L);
    }
}

/* The forward; with lse set, each row's log-sum-exp there too ([B,H,T] floats, +inf for a row
 * that sees no key). */
static attn_status forward(const attn_exec *x, const attn_shape *s, const attn_params *p,
                           const float *q, const float *k, const float *v, float *out, float *lse,
                           void *workspace)
{
    attn_shape wide = *s; /* a low-precision dtype: float32 copies at the workspace's head */
    workspace = attn_widen(x, s, &q, &k, &v, workspace);
    wide.dtype = ATTN_F32;
    s = &wide;
    const plan pl = make_plan(s, p);
    const int64_t T = s->T, S = s->S, D = s->D, G = pl.G;
    float *slots = (float *)((char *)workspace + (size_t)x->threads * pl.thread_bytes);
    attn_blas_threads(1);

#pragma omp parallel num_threads(x->threads)
    {
        char *mine = (char *)workspace + (size_t)omp_get_thread_num() * pl.thread_bytes;
        float *scratch = (float *)mine, *mods = scratch + pl.tile_floats;
        float *stack = mods + pl.mod_floats;
        int64_t *col_end = (int64_t *)(stack + pl.gather_floats);
        attn_tile tile;

#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < pl.tasks; task++) {
            const int64_t group = task / pl.split, chunk = task % pl.split;
            const int64_t qb = group % pl.nqb, bg = group / pl.nqb;
            const int64_t b = bg / s->Hkv, g = bg % s->Hkv, i0 = qb * pl.positions;
            const int64_t npos = min64(pl.positions, T - i0), rows = npos * G;
            const float *kg = k + bg * S * D, *vg = v + bg * S * D;
            const float *qt = q + row_of(s, G, b, g, i0, 0) * D; /* rows adjacent unless gather */
            if (pl.gather) { /* stack position-major, head-minor */
                for (int64_t r = 0; r < rows; r++)
                    memcpy(stack + r * D, q + row_of(s, G, b, g, i0, r) * D,
                           (size_t)D * sizeof(float));
                qt = stack;
            }

            attn_tile_begin(&tile, x->ks, scratch, rows, D, (float)s->scale);
            attn_tile_mods(&tile, &pl.mod, mods);
            for (int64_t r = 0; tile.alibi && r < rows; r++) /* position i0 + r/G, head gG + r%G */
                attn_tile_mod_row(&tile, &pl.mod, r, g * G + r % G, i0 + r / G);
            visit_chunk(s, &pl, &tile, qt, kg, vg, i0, npos, chunk * pl.nkb / pl.split,
                        (chunk + 1) * pl.nkb / pl.split, col_end);

            if (pl.split > 1) { /* leave (m, l, acc) for the merge */
                float *slot = slots + task * pl.slot_floats;
                memcpy(slot, tile.m, (size_t)rows * sizeof(float));
                memcpy(slot + pl.rows, tile.l, (size_t)rows * sizeof(float));
                memcpy(slot + 2 * pl.rows, tile.acc, (size_t)(rows * D) * sizeof(float));
                continue;
            }
            if (lse) /* rows of one position are G heads (T apart in lse), positions adjacent */
                for (int64_t h = 0; h < G; h++)
                    attn_tile_lse(&tile, h, G, lse + row_of(s, G, b, g, i0, h), 1);
            if (pl.gather) { /* normalise into the stack, then scatter */
                attn_tile_end(&tile, stack);
                for (int64_t r = 0; r < rows; r++)
                    memcpy(out + row_of(s, G, b, g, i0, r) * D, stack + r * D,
                           (size_t)D * sizeof(float));
            } else {
                attn_tile_end(&tile, out + row_of(s, G, b, g, i0, 0) * D);
            }
        }

        if (pl.split > 1) {
#pragma omp for schedule(static)
            for (int64_t group = 0; group < pl.groups; group++)
                merge_group(s, &pl, slots, group, out, lse);
        }
    }
    return ATTN_OK;
}

attn_status attn_dense_forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                               const attn_params *p, const float *q, const float *k, const float *v,
                               float *out, void *workspace)
{
    if (use_decode(s, p))
        return attn_decode_forward(x, s, (int64_t)p->v[P_SPLIT], q, k, v, out, workspace);
    return forward(x, s, p, q, k, v, out, NULL, workspace);
}

attn_status attn_dense_forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                     const attn_params *p, const float *q, const float *k,
                                     const float *v, float *out, void *saved, void *workspace)
{
    return forward(x, s, p, q, k, v, out, saved, workspace);
}

size_t attn_dense_saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    return (size_t)(s->B * s->H * s->T) * sizeof(float);
}

/* ---- backward (FlashAttention-2) ---- */

/* Per-thread scratch of the backward: the backward tile, the modifiers, q and dout stacks (G > 1
 * and T > 1), the key limits. */
typedef struct bplan {
    plan f;
    int64_t tile_floats, stack_floats;
    size_t thread_bytes;
} bplan;

static bplan make_bplan(const attn_shape *s, const attn_params *p)
{
    bplan bp = {.f = make_plan(s, p)};
    const plan *pl = &bp.f;
    bp.tile_floats = round_up(attn_btile_floats(pl->rows, pl->block_k, s->D, pl->mod.softcap > 0));
    bp.stack_floats = pl->gather ? round_up(pl->rows * s->D) : 0;
    const int64_t limits = ceil_div(pl->rows, 8) * 8;
    bp.thread_bytes =
        (size_t)(bp.tile_floats + pl->mod_floats + 2 * bp.stack_floats) * sizeof(float) +
        (size_t)limits * sizeof(int64_t);
    return bp;
}

size_t attn_dense_backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                           const attn_shape *s, const attn_params *p)
{
    return (size_t)x->threads * make_bplan(s, p).thread_bytes;
}

/* One thread's scratch and the tensors of a backward. */
typedef struct bwd {
    const attn_kernel_set *ks;
    const attn_shape *s;
    const bplan *bp;
    attn_bwd_io io;
    float *scratch, *mods, *qstack, *dstack;
    int64_t *col_end;
} bwd;

/* Query positions [i0, i0 + npos) of group (b, g) against keys [j0, j0 + cols): dk, dv of those
 * keys accumulated in place, the rows' dq contributions added to dq (one thread at a time). */
static void backward_block(const bwd *w, int64_t b, int64_t g, int64_t i0, int64_t npos, int64_t j0,
                           int64_t cols)
{
    const attn_shape *s = w->s;
    const plan *pl = &w->bp->f;
    const int64_t D = s->D, G = pl->G, rows = npos * G, kv = (b * s->Hkv + g) * s->S + j0;
    const float *qt = w->io.q + row_of(s, G, b, g, i0, 0) * D;
    const float *dt = w->io.dout + row_of(s, G, b, g, i0, 0) * D;
    attn_btile bt;
    attn_btile_begin(&bt, w->ks, w->scratch, rows, pl->block_k, D, (float)s->scale,
                     pl->mod.softcap > 0);
    attn_tile_mods(&bt.t, &pl->mod, w->mods);
    attn_tile_mod_keys(&bt.t, j0, 1, cols);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t row = row_of(s, G, b, g, i0, r);
        attn_tile_mod_row(&bt.t, &pl->mod, r, g * G + r % G, i0 + r / G);
        attn_btile_row(&bt, r, w->io.lse[row], w->io.dout + row * D, w->io.out + row * D);
        if (!pl->gather) continue;
        memcpy(w->qstack + r * D, w->io.q + row * D, (size_t)D * sizeof(float));
        memcpy(w->dstack + r * D, w->io.dout + row * D, (size_t)D * sizeof(float));
    }
    if (pl->gather) qt = w->qstack, dt = w->dstack;
    const float *kb = w->io.k + kv * D, *vb = w->io.v + kv * D;
    float *dkb = w->io.dk + kv * D, *dvb = w->io.dv + kv * D;
    if (j0 + cols <= attn_causal_keys(s, i0)) { /* every row sees every key of the block */
        attn_btile_visit(&bt, 0, rows, qt, D, dt, D, kb, vb, D, dkb, dvb, D, cols, NULL);
    } else { /* across the causal diagonal: row groups, each up to its last key */
        for (int64_t r = 0; r < rows; r++) w->col_end[r] = attn_causal_keys(s, i0 + r / G) - j0;
        for (int64_t r0 = 0; r0 < rows; r0 += DIAG_ROWS) {
            const int64_t nr = min64(DIAG_ROWS, rows - r0);
            const int64_t gcols = min64(cols, w->col_end[r0 + nr - 1]);
            const attn_tile_mask mask = {.hi = w->col_end + r0};
            if (gcols > 0)
                attn_btile_visit(&bt, r0, nr, qt + r0 * D, D, dt + r0 * D, D, kb, vb, D, dkb, dvb,
                                 D, gcols, &mask);
        }
    }
#pragma omp critical(attn_dense_dq)
    for (int64_t r = 0; r < rows; r++) {
        float *dq = w->io.dq + row_of(s, G, b, g, i0, r) * D;
        const float *acc = bt.t.acc + r * D;
        for (int64_t d = 0; d < D; d++) dq[d] += acc[d];
    }
}

attn_status attn_dense_backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                const attn_params *p, const float *q, const float *k,
                                const float *v, const float *out, const void *saved,
                                const float *dout, float *dq, float *dk, float *dv, void *workspace)
{
    const bplan bp = make_bplan(s, p);
    const plan *pl = &bp.f;
    const int64_t S = s->S, T = s->T, D = s->D, tasks = s->B * s->Hkv * pl->nkb;
    attn_blas_threads(1);

#pragma omp parallel num_threads(x->threads)
    {
        char *mine = (char *)workspace + (size_t)omp_get_thread_num() * bp.thread_bytes;
        bwd w = {.ks = x->ks, .s = s, .bp = &bp, .scratch = (float *)mine};
        w.io = (attn_bwd_io){q, k, v, out, saved, dout, dq, dk, dv};
        w.mods = w.scratch + bp.tile_floats;
        w.qstack = w.mods + pl->mod_floats;
        w.dstack = w.qstack + bp.stack_floats;
        w.col_end = (int64_t *)(w.dstack + bp.stack_floats);

#pragma omp for schedule(static)
        for (int64_t row = 0; row < s->B * s->H * T; row++)
            memset(dq + row * D, 0, (size_t)D * sizeof(float));

            /* a task owns one key block of one (b, kv head): its dk, dv rows are its alone */
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < tasks; task++) {
            const int64_t bg = task / pl->nkb, j0 = task % pl->nkb * pl->block_k;
            const int64_t cols = min64(pl->block_k, S - j0);
            memset(dk + (bg * S + j0) * D, 0, (size_t)(cols * D) * sizeof(float));
            memset(dv + (bg * S + j0) * D, 0, (size_t)(cols * D) * sizeof(float));
            /* the first query that sees key j0: i + S - T >= j0 when causal */
            const int64_t first = s->causal ? max64(0, j0 - (S - T)) : 0;
            for (int64_t i0 = first / pl->positions * pl->positions; i0 < T; i0 += pl->positions)
                backward_block(&w, bg / s->Hkv, bg % s->Hkv, i0, min64(pl->positions, T - i0), j0,
                               cols);
        }
    }
    return ATTN_OK;
}

bool attn_dense_allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                       int64_t i, int64_t j)
{
    return attn_causal_allows(s, i, j);
}

const attn_train_ops attn_dense_train = {
    .saved_bytes = attn_dense_saved_bytes,
    .forward = attn_dense_forward_train,
    .workspace_bytes = attn_dense_backward_workspace_bytes,
    .backward = attn_dense_backward,
};
