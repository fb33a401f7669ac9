/*
 * dilated — Longformer's dilated sliding window (Beltagy et al. 2020): each query sees itself
 * and w - 1 keys on each side, d positions apart (gaps of d - 1): a receptive field of
 * 2(w - 1)·d + 1 positions for the cost of 2w - 1 keys. Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·w·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): the positions of one residue class p ≡ c (mod d) see only keys
 *           j ≡ c, and in the class's own numbering (x = (j - c)/d) the window is a plain band
 *           |x_p - x| < w. So a task is up to 256 query rows a step d apart (one class,
 *           its queries copied together once), its keys every d-th key from the band's
 *           first (packed (kᵀ) once per task from k, leading dimension d·D, when at most
 *           1024; else gathered once per task when at most 256 + 2w and 4096, else read in
 *           place, or gathered per visit where d·D is no BLAS int); the band by groups of
 *           12-60 rows, each group's keys in one masked visit (attn_bs_plan_band). Tasks
 *           ordered by chunk, then class (neighbouring rows of the d classes together).
 *   workspace: blocksparse.c's, with rows_max = min(256, T), cols_max c (a group's keys
 *           rounded up to 64, in [256, 512]), gather_max = max(c, min(rows_max + 2w, 4096))
 *           (d > 1), gathered queries (d > 1), ints 2·rows_max.
 *   threads: OpenMP over (b, h, task), dynamic by 8 tasks; one thread per tile.
 */
#include "blocksparse.h"

enum { P_WINDOW, P_DILATION };
enum { CLASS_ROWS = 256, GATHER_MAX = 4096 };
/* Tasks a thread takes at once: neighbouring chunks of positions, whose rows the hardware then
 * streams on. */
enum { TASK_CHUNK = 8 };
enum { V_DILATION }; /* plan.v: d */

static const attn_param_def params[] = {
    [P_WINDOW] = {"window", "w: keys p - d·m for |m| < w (itself, w-1 per side; causal: w back)",
                  128, 1, 1000000000, true},
    [P_DILATION] = {"dilation", "d: distance between neighbouring keys of the window (1: window)",
                    2, 1, 1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    const int64_t w = (int64_t)p->v[P_WINDOW], d = (int64_t)p->v[P_DILATION];
    pl->nphases = 1;
    pl->v[V_DILATION] = d;
    pl->tasks[0] = attn_bs_class_tasks(s, d, CLASS_ROWS);
    pl->rows_max = attn_bs_min(CLASS_ROWS, s->T);
    pl->ints = 2 * pl->rows_max;
    attn_bs_plan_band(s, w, pl);
    pl->gather_rows = d > 1;
    pl->gathers = d > 1; /* every d-th key: copied together once per task when few enough */
    pl->gather_max = attn_bs_min(pl->rows_max + 2 * w, GATHER_MAX);
    pl->task_chunk = TASK_CHUNK;
}

/* Rows a, a + d, a + 2d, ... (one residue class of positions), in chunks of CLASS_ROWS. */
static attn_bs_rows rows(const attn_shape *s, const attn_bs_plan *pl, int phase, int64_t index)
{
    (void)phase;
    const int64_t d = pl->v[V_DILATION], classes = attn_bs_min(d, s->T);
    const int64_t chunks = pl->tasks[0] / classes; /* task index: chunk-major, class-minor */
    return attn_bs_class_rows(s, d, CLASS_ROWS, index % classes * chunks + index / classes);
}

/* The task's rows sit at positions p0 + r·d, all in the class c = p0 mod d, whose keys are
 * j = c + d·x, x in [0, nk). Row r is key index xr = (p0 - c)/d + r of that numbering and sees
 * xr - w < x < xr + w (causal: x <= xr): a band, one segment over every d-th key. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    const int64_t w = (int64_t)p->v[P_WINDOW], d = pl->v[V_DILATION], n = t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0), c = attn_bs_floormod(p0, d);
    const int64_t x0 = attn_bs_floordiv(p0, d), nk = c < s->S ? (s->S - c + d - 1) / d : 0;
    const int64_t reach = s->causal ? 1 : w; /* keys seen up to xr + reach, excluded */
    const int64_t first = attn_bs_max(0, x0 - w + 1), last = attn_bs_min(nk, x0 + n - 1 + reach);
    if (last <= first) return;
    int64_t *lo = t->ints, *hi = lo + n;
    for (int64_t r = 0; r < n; r++) {
        lo[r] = attn_bs_max(0, x0 + r - w + 1) - first;
        hi[r] = attn_bs_min(nk, x0 + r + reach) - first;
    }
    const attn_bs_seg seg = {.keys = {.j0 = c + d * first, .n = last - first, .run = 1, .step = d},
                             .r0 = 0,
                             .nrows = n,
                             .lo = lo,
                             .hi = hi};
    attn_bs_visit(run, &seg);
}

static const attn_bs_pattern pattern = {.plan = plan, .rows = rows, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t w = (int64_t)p->v[P_WINDOW], d = (int64_t)p->v[P_DILATION];
    const int64_t delta = attn_bs_pos(s, i) - j; /* = d·m */
    return delta % d == 0 && delta / d > -w && delta / d < w && attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_dilated = {
    .name = "dilated",
    .summary = "dilated sliding window (Longformer): w keys per side, d positions apart",
    .definition = "query i at position p = i + S - T sees key j iff j = p - d*m for an integer m\n"
                  "with |m| < w: itself and w-1 keys on each side, d positions apart (2w-1 keys\n"
                  "spanning 2(w-1)d+1 positions); causal: 0 <= m < w (itself and the w-1 before\n"
                  "it). Softmax over those keys, scale 1/sqrt(D). d = 1 is the window kind.",
    .params = ATTN_PARAM_TABLE("dilated", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
};
