/*
 * blocksparse.h — the block-sparse engine the sparse kinds (window, global, random, strided,
 * fixed, bigbird, dilated, sink, document, prefix) run on.
 *
 * A pattern splits the T query rows of each head into tasks (a block of rows, or rows a fixed
 * step apart) and says, for each task, which keys its rows visit: segments, each a set of keys
 * (contiguous, every step-th, runs of `run` keys every `step`, or a list) with, per row, the
 * interval [lo, hi) of those keys it sees minus an excluded interval [xlo, xhi). The pattern
 * must list every allowed key of a row exactly once over its segments (the union of its
 * components, never a key twice). The engine computes only what is listed with the online-
 * softmax tile (scores and p·v by its micro-kernels, running max and sum): the keys every row of
 * the segment sees in one dense visit of all rows, the rest by groups of `sub` rows, each up to its
 * own bounds (the forward packs the keys of such groups once per segment, and then each group
 * visits all its keys, the common ones too). Keys are read in
 * place (every step-th key by a leading dimension) or gathered into scratch (runs, lists).
 * Nothing of size T×S exists.
 *
 * Two-phase patterns (strided) revisit every row in a second arrangement of tasks: the first
 * phase leaves each row's unnormalised output in `out` and its running (max, sum) in the
 * workspace, the second continues from them (the online softmax merges exactly).
 *
 * The same pattern code runs in a counting mode: flops (4·D per listed score) and bytes (q,
 * out, and each K/V row some query of its group reads, once) come from the real layout.
 *
 * Threads: OpenMP over (phase,) b, h, task with a dynamic schedule (rows are uneven; two-phase
 * forwards with enough heads: over (b, h), each thread both phases of its heads);
 * one thread per tile. Workspace: threads × (tile + gather buffers + gathered query rows + the
 * pattern's int64 scratch + the forward's packed span [+ a class block's keys in lanes, with
 * plan.class_step]) + 2 floats per query row for two-phase patterns, exact.
 */
#ifndef ATTN_BLOCKSPARSE_H
#define ATTN_BLOCKSPARSE_H

#include "attention.h"
#include "score_mod.h" /* ATTN_SCORE_MOD_PARAMS */

/* Query rows of a task: i0 + r·step for r in [0, n). */
typedef struct attn_bs_rows {
    int64_t i0, n, step;
} attn_bs_rows;

/* Keys of a segment: key x in [0, n) is idx[x] when idx is set, else
 * j0 + (x / run)·step + x % run (contiguous: run = step; every step-th key: run = 1). */
typedef struct attn_bs_keys {
    int64_t j0, n, run, step;
    const int64_t *idx;
} attn_bs_keys;

/* One segment: task rows [r0, r0 + nrows) against keys; task row r sees key x iff
 * lo[r] <= x < hi[r] and not xlo[r] <= x < xhi[r]. The arrays are indexed by task row; NULL
 * means no bound (lo 0, hi keys.n, no exclusion; xlo and xhi are set together).
 * Or, with row_start (and a key list, no bounds), a list per row: task row r sees exactly
 * keys.idx[row_start[r - r0]] .. keys.idx[row_start[r - r0 + 1] - 1] (computed row by row,
 * each row's keys read in place, the next row's prefetched meanwhile). */
typedef struct attn_bs_seg {
    attn_bs_keys keys;
    int64_t r0, nrows;
    const int64_t *lo, *hi, *xlo, *xhi;
    const int64_t *row_start;
    /* Or else, with own (no row_start, no lo, no exclusion): task row r also sees one key of its
     * own, own[r] (a key index, not among keys; -1: none); keys may then be empty. The forward
     * visits a fresh tile's own keys (plan.seeds) with keys that fit in one visit in one fused
     * pass per group of rows (attn_tile_attend_own). */
    const int64_t *own;
    /* With own: keys the thread's next task likely reads (a guess, never visited: their k and v
     * rows are asked for during that fused pass; n 0: none). */
    attn_bs_keys ahead;
    /* The task's last segment (the forward's last phase may then write out from its visit). */
    bool last;
} attn_bs_seg;

/* What a pattern needs for a shape; filled by its plan(). */
typedef struct attn_bs_plan {
    int nphases;         /* 1, or 2 (the second phase continues the first's softmax state) */
    int64_t tasks[2];    /* tasks per (b, h) in each phase (a task may have no rows) */
    int64_t block;       /* phase 0 rows when the pattern has no rows(): position blocks of this
                            size (attn_bs_plan_blocks sets it) */
    int64_t rows_max;    /* rows of a task at most */
    int64_t cols_max;    /* keys per visit at most (0: 256) */
    int64_t sub;         /* rows per group on keys not every row of a segment sees (0: 64) */
    int64_t ints;        /* int64 scratch per task that visit() uses (task.ints) */
    bool gather_rows;    /* tasks may have rows a step apart: their queries are copied together
                            once per task (rows_max·D floats per thread) */
    bool seeds;          /* a task's first segment may be a list of at most one key per row: the
                            forward starts the tile from those keys (m = score, l = 1, acc = v row,
                            written into the fresh tile), no per-row visit */
    bool gathers;        /* some segment has a key list, or runs that are not contiguous
                            (or every step-th key with step·D > INT_MAX) */
    int64_t gather_max;  /* with gathers: a segment of scattered keys up to this many that groups
                            of rows revisit (it has row bounds) is copied together once, then
                            visited in place; others are copied cols_max keys at a time
                            (raised to cols_max) */
    int64_t v[8];        /* the pattern's own values (resolved parameters ...) */
    int64_t task_chunk;  /* the forward: consecutive tasks a thread takes at once (0: 1; fewer
                            when a thread would get under 4 grabs); for tasks of even cost whose
                            neighbours share rows or are asked for ahead */
    int64_t class_step;  /* two phases, strided's second: the row at position p sees the keys
                            j ≡ p (mod class_step) below p (causal) or but p. The forward without
                            score modifiers may then run that phase as blocks of as many residue
                            classes as the kernel set has lanes, side by side
                            (the set's tile.attend_lanes), instead of rows()' tasks (0: never) */
    int64_t kernel_rows; /* set by the engine before plan(): the register rows of the kernel
                            set's micro-kernels (attn_kernel_set.tile_rows), which row groups
                            come in multiples of */
} attn_bs_plan;

/* The task visit() describes. */
typedef struct attn_bs_task {
    int phase;
    int64_t h; /* query head */
    attn_bs_rows rows;
    int64_t *ints; /* plan.ints of scratch */
    bool kept;     /* ints hold what this thread's previous task of this forward call left there */
} attn_bs_task;

typedef struct attn_bs_run attn_bs_run; /* the engine's side of a visit (compute or count) */

typedef struct attn_bs_pattern {
    void (*plan)(const attn_shape *s, const attn_params *p, attn_bs_plan *pl);
    /* Rows of task `index` of `phase`; each phase's tasks cover every row 0..T-1 once.
     * NULL: position blocks of plan.block (one phase). */
    attn_bs_rows (*rows)(const attn_shape *s, const attn_bs_plan *pl, int phase, int64_t index);
    /* Hand the task's segments to attn_bs_visit (in any order). */
    void (*visit)(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run);
} attn_bs_pattern;

/* Compute (or count) one segment of the current task. */
void attn_bs_visit(attn_bs_run *run, const attn_bs_seg *seg);

/* The engine's slots (attention.h): self->engine_data is the kind's attn_bs_pattern and
 * self->params its table, where the engine finds the score modifiers (score_mod.h: every sparse
 * kind appends ATTN_SCORE_MOD_PARAMS to its table). flops =
 * 4·D·(scores listed); bytes = 4·(q + out + 2·D·Σ over (b, kv head) of the keys read by some query
 * of the group). flops/bytes allocate an S-bit map and plan.ints of scratch while counting (NaN if
 * the scratch fails; bytes also if the map does). */
size_t attn_bs_workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                               const attn_params *p);
double attn_bs_flops(const attn_ops *self, const attn_shape *s, const attn_params *p);
double attn_bs_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p);
/* The cells slot (attention.h): the scores of query head h the pattern lists, counted by the same
 * visits as flops (cells[i·S + j] += 1 per listing, saturating at 255; the caller zeroes them).
 * ATTN_EFAIL when its scratch cannot be allocated. */
attn_status attn_bs_cells(const attn_ops *self, const attn_shape *s, const attn_params *p,
                          int64_t h, uint8_t *cells);
attn_status attn_bs_forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            float *out, void *workspace);
/* Training (attn_bs_train): the forward that also saves each row's log-sum-exp (B·H·T floats,
 * attn_bs_saved_bytes; +inf for a row that sees no key), and the backward over the same visits
 * (attn_btile: scores recomputed, P = exp(S - lse), dS = P∘(dP - Δ); dk, dv accumulated in place
 * or in gradient gather buffers added back to the keys' rows). Parallel over (b, kv head): a
 * thread owns the dk, dv of its KV head and the dq rows of its query heads (no races; the
 * parallelism is B·Hkv). Workspace: threads × (backward tile + modifiers + 2× the gather buffers
 * + 2× the gathered rows + ints + 2× the forward's packed span: kᵀ and vᵀ [+ T floats of
 * Δ = dout·out for two-phase patterns: the first phase's for the second]), otherwise independent
 * of n as the forward's. Flops counted 2.5 × the forward's. */
extern const attn_train_ops attn_bs_train;
attn_status attn_bs_forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                  const attn_params *p, const float *q, const float *k,
                                  const float *v, float *out, void *saved, void *workspace);
size_t attn_bs_saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p);
size_t attn_bs_backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                        const attn_shape *s, const attn_params *p);
attn_status attn_bs_backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                             const attn_params *p, const float *q, const float *k, const float *v,
                             const float *out, const void *saved, const float *dout, float *dq,
                             float *dk, float *dv, void *workspace);

/* A sparse kind's file reads
 *   static const attn_param_def params[] = {..., ATTN_SCORE_MOD_PARAMS};
 *   static const attn_bs_pattern pattern = {.plan = plan, .rows = rows, .visit = visit};
 *   const attn_ops attn_kind_NAME = {
 *       .name = ..., .summary = ..., .definition = ..., .params = ATTN_PARAM_TABLE("NAME", params),
 *       .check = attn_bs_accept (or its own), ATTN_BS_SLOTS(pattern), .allows = allows,
 *   };
 * The engine's slots read the pattern from self->engine_data and the score modifiers from the
 * kind's parameter table (self->params). */
#define ATTN_BS_SLOTS(pattern)                                                                     \
    .workspace_bytes = attn_bs_workspace_bytes, .flops = attn_bs_flops, .bytes = attn_bs_bytes,    \
    .forward = attn_bs_forward, .cells = attn_bs_cells, .train = &attn_bs_train,                   \
    .engine = ATTN_ENGINE_BLOCK_SPARSE, .engine_data = &(pattern)

/* ---- helpers the patterns share ---- */

static inline int64_t attn_bs_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t attn_bs_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t attn_bs_clamp(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}
/* A one-phase plan over position blocks of `block` queries (rows_max = min(block, T)). */
void attn_bs_plan_blocks(const attn_shape *s, int64_t block, attn_bs_plan *pl);
/* A check for kinds that accept every shape and every parameter value in range. */
attn_status attn_bs_accept(const attn_ops *self, const attn_shape *s, const attn_params *p,
                           char *msg, size_t msg_len);

/* Position of query i: i + S - T (the last query sits on the last key). */
static inline int64_t attn_bs_pos(const attn_shape *s, int64_t i) { return i + s->S - s->T; }
/* floor(a / b) and a - b·floor(a / b) for b > 0 (positions may be negative when T > S). */
int64_t attn_bs_floordiv(int64_t a, int64_t b);
int64_t attn_bs_floormod(int64_t a, int64_t b);
/* Keys [j0, j1) as a segment's key set (empty when j1 <= j0). */
attn_bs_keys attn_bs_range(int64_t j0, int64_t j1);
/* Tasks of rows grouped by position blocks [k·size, (k+1)·size): their number, and the rows
 * of task t (blocks in order of position; the first and last may be partial). */
int64_t attn_bs_block_tasks(const attn_shape *s, int64_t size);
attn_bs_rows attn_bs_block_rows(const attn_shape *s, int64_t size, int64_t t);
/* Tasks of rows a step apart: the rows of one residue class i ≡ a (mod step), a < min(step, T)
 * (so positions ≡ a + S - T), in chunks of `size` rows: their number, and the rows of task t
 * (class t / chunks, chunk t % chunks; a chunk may have no rows). */
int64_t attn_bs_class_tasks(const attn_shape *s, int64_t step, int64_t size);
attn_bs_rows attn_bs_class_rows(const attn_shape *s, int64_t step, int64_t size, int64_t t);

/* The sliding band of task rows [r0, r1) (rows one apart): row r at position p sees keys
 * max(from, p - w + 1) <= j < min(S, p + w), and j <= p when causal — one segment, per-row
 * bounds in ints[r0..r1) and ints[n + r0..n + r1) (n = t->rows.n: 2n int64 of scratch). */
void attn_bs_band(const attn_shape *s, const attn_bs_task *t, int64_t r0, int64_t r1, int64_t w,
                  int64_t from, int64_t *ints, attn_bs_run *run);
/* Rows per group for a band of half-width w (plan.sub): 5 register blocks of the tile
 * micro-kernels (plan.kernel_rows: 30 rows on avx2, avx512); 2 below a row width (2w - 1,
 * causal w) of 192 keys, 10 from 1024; small groups waste fewer scores in their triangle, and the
 * band's keys are packed once for all groups (the forward). */
int64_t attn_bs_band_sub(const attn_shape *s, const attn_bs_plan *pl, int64_t w);
/* A band's plan.sub (attn_bs_band_sub) and plan.cols_max: a group's keys in one visit (width +
 * sub - 1 rounded up to 64, in [256, 512]). */
void attn_bs_plan_band(const attn_shape *s, int64_t w, attn_bs_plan *pl);
/* A stride parameter's value: v, or ceil(sqrt(S)) when v is 0 ('auto'). */
int64_t attn_bs_stride(const attn_shape *s, double v);

/* Seeded stratified draws: r distinct values from [0, N), one uniform in each of r equal
 * strata [floor(k·N/r), floor((k+1)·N/r)), a pure function of (seed, h, who) — so any query
 * (who) re-draws the same keys in prefill, decode and the mask predicate. r >= N draws all.
 * draw: the k-th (increasing in k) for r < N. drawn: is x one of them (O(1)). The offset in
 * a stratum of length len is the high word of hash·len. */
int64_t attn_bs_draw(uint64_t seed, int64_t h, int64_t who, int64_t k, int64_t N, int64_t r);
/* All r draws at once (r < N), increasing: out[k] = attn_bs_draw(..., k, N, r). */
void attn_bs_draws(uint64_t seed, int64_t h, int64_t who, int64_t N, int64_t r, int64_t *out);
bool attn_bs_drawn(uint64_t seed, int64_t h, int64_t who, int64_t x, int64_t N, int64_t r);

#endif
