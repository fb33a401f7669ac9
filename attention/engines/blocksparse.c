/*
 * blocksparse.c — the block-sparse engine (see blocksparse.h for the pattern contract).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   per task: tile begin (or load the first phase's state), the pattern's segments, each
 *     1. the keys every row of the segment sees, when at least COMMON_MIN and not in a span the
 *        forward packed (below): one visit of all rows, masks only for the excluded interval;
 *     2. the other keys by groups of `sub` rows, each over [its min lo, its max hi) minus part 1,
 *        masked per row (a segment of at most `sub` rows: one masked visit of all its keys);
 *     every visit in blocks of at most cols_max keys: scores = scale·q kᵀ, mask, running max
 *     and sum, acc += p v (the tile's micro-kernels, kernels.h); the forward's visits with row
 *     bounds only (no exclusion, no score modifier; with lower bounds: at most FUSED_BAND_COLS
 *     keys) fused, a register block of rows at a time (attn_ks()->tile.attend, tile_rows: the
 *     scores stay in L1, no call per row), by groups of FUSED_BLOCKS blocks (upper bounds only:
 *     the rows short of a whole block in a group of their own, first) or the band's sub;
 *   then normalise into out (or save the state for the next phase: two phases accumulate in
 *   out's rows in place, only (m, l) saved); out by non-temporal stores when q, k, v and out
 *   exceed STREAM_BYTES (attn_tile_end_stream); a last segment visited fused with its own keys
 *   over all the task's rows writes out itself (seg.last).
 *   two phases with plan.class_step (strided), the forward without score modifiers, at most
 *     LANE_KEYS_MAX keys per class: the second phase as blocks of VW residue classes side by
 *     side, rows in lanes (attn_ks()->tile.attend_lanes, lanes_task: no rows() tasks there; out
 *     normalised by the kernel; strided n = 1024 1 thread 1.49 -> 1.31 ms).
 *   forward spans: the keys [u0, u1) of a segment that several groups visit (up to SPAN_MAX,
 *     read in place: contiguous or every step-th key) are packed (kᵀ, attn_ks()->tile.pack_kt)
 *     once per segment; each group's scores start at its column of the span.
 *   bands (attn_bs_plan_band): groups of 5 register blocks (30 rows on avx2, avx512; 2 blocks
 *     below width BAND_NARROW, 10 from 1024), a group's keys in one visit (cols_max up to 512).
 *   seeds (plan.seeds, the forward): a list segment of at most one key per row seen first starts
 *     the tile from those keys (m = score, l = 1, acc = v row, written into the fresh tile), no
 *     visit per row; a segment's own keys (seg.own) with its keys, when they fit in one visit and
 *     there is no score modifier, in one fused pass per group of rows (attn_tile_attend_own; else
 *     seeded so; listed keys packed from their rows and their v rows read through the list, no
 *     copy), the next block's queries, own keys and seg.ahead's keys asked for meanwhile (spread
 *     over the pass).
 *   the backward (attn_btile): groups of at least 30 rows, every step-th key read and updated in
 *     place (other scattered keys as above; a list's dk, dv updated in place through
 *     attn_btile.grows, runs' in gradient buffers added back after);
 *     spans as the forward's, kᵀ and vᵀ packed once per segment (attn_btile_visit_packed);
 *     dq set by the first phase's visit of each row, added by the second; a first-phase task
 *     of consecutive rows accumulates in its dq rows themselves (attn_btile_begin_at: zeroed
 *     there, no copy after), any other copies its tile's accumulator (no zeroing of dq);
 *     Δ = dout·out of each row computed by the first phase, kept (T floats a thread) for the
 *     second (which then reads no out row);
 *     lists row by row, a one-key list (random's own keys) in one pass (attn_btile_visit_one),
 *     own keys with the next block's rows (q, dout, out, k, v, dk, dv) and its keys (seg.ahead:
 *     k, v, dk, dv rows, an equal share per row) asked for meanwhile.
 *   score modifiers (alibi, softcap: score_mod.h, found in the kind's table) in the tile: row
 *     positions and slopes once per task, key positions once per visit (from the segment's keys,
 *     also when they were gathered); not counted in flops (like the exp).
 *   time O(visited scores · D); flops 4·D per listed score (exact, from the same layout).
 *   workspace: threads × (attn_tile_floats(rows_max, cols_max, D) floats
 *              [+ 2·rows_max + cols_max floats with alibi] [+ 2·gather_max·D gathered keys]
 *              [+ rows_max·D gathered queries] + plan.ints int64
 *              + D·(score_ld(min(SPAN_MAX, S)) + 64) floats of span
 *              [+ VW·((nk + R)·(D + 1) + R·nk) floats in lanes, nk = ceil(S/class_step), R the
 *              set's tile_rows])
 *              [+ 2·B·H·T floats for two phases]
 *   backward workspace: attn_bs_backward_workspace_bytes (blocksparse.h).
 *   threads: OpenMP over (b, h, task) per phase, dynamic schedule (the forward: plan.task_chunk
 *     tasks at a time, fewer where a thread would get under 4 grabs); one thread per tile; two
 *     phases with at least HEADS_PER_THREAD (b, h) per thread: each thread takes whole (b, h),
 *     both phases of one before the next, no barrier between the phases (strided causal H=8
 *     D=64 2 threads, interleaved: n = 1024 0.79 -> 0.69 ms, 8192 13.5 -> 12.1 ms); fewer: by
 *     chunks of (b, h) (phase_chunk: both phases of a chunk while its rows are cached), every
 *     thread on each phase's tasks.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocksparse.h"
#include "kernel_set.h" /* attn_ks()->tile: packing a span's keys once for its row groups */
#include "kernels.h"

enum { COLS_DEFAULT = 256, SUB_DEFAULT = 64, ALIGN = 64, BAND_COLS_MAX = 512 };
/* Rows per group of a band: BAND_BLOCKS register blocks of the tile micro-kernels (the set's
 * tile_rows: 30 rows on avx2, avx512), small so that a group's triangle of unseen scores stays
 * small (measured at w = 256 causal, the span packed once: 24-36 rows best, 64 about 10 % slower);
 * twice as many from width 1024 on, 2 blocks below width BAND_NARROW (strided's local band at
 * n = 8192, w = 91: 12 rows 5 % faster; dilated w = 128: 8 %). */
enum { BAND_BLOCKS = 5, BAND_NARROW = 192 };
/* Register blocks per group of the forward's fused visits (visit_fused: a block at a time, the
 * scores in L1): small groups compute little beyond their rows' upper bounds (n = 8192 causal,
 * 1 thread: fixed 4 %, bigbird 2 % faster at 12 rows than 64; 6 rows no faster, strided's
 * phase 2 slower) */
enum { FUSED_BLOCKS = 2 };
/* Keys of a visit with per-row lower bounds (a band's group) fused at most: narrow bands (strided's
 * local phase; n = 1024-8192, 1 thread, see the commit), not window's 256 + 29 (7 % slower). */
enum { FUSED_BAND_COLS = 192 };
/* Keys every row of a segment sees, at least, for a visit of their own (fewer: each group visits
 * them with the rest of its keys; a band's rows share one key: 3 visits per group otherwise). */
enum { COMMON_MIN = 64 };
enum { PHASE_CHUNK_BYTES = 8 << 20 }; /* see phase_chunk */
/* (b, h) per thread from which a two-phase forward gives each thread whole heads (both phases of
 * one, then the next; no barrier between the phases). */
enum { HEADS_PER_THREAD = 4 };
/* Register blocks per group in the backward at least: its tile runs 5 products per visit, whose
 * fixed cost outweighs the masked scores of groups of 32 rows rather than 16 (strided, window:
 * +8 %, measured with sgemm products); 5 blocks: 30 rows on avx2, avx512. */
enum { BWD_BLOCKS_MIN = 5 };
/* Keys of a bounded segment packed (kᵀ) once for all its row groups, at most this many. */
enum { SPAN_MAX = 1024 };
/* Floats of the widest vector of any set (kernel_set.h): the scores micro-kernel reads a visit's
 * columns rounded up to it (tile_body.h), so a span's rows need that much slack, not a whole
 * column block (64: the packing zeroed up to 112 padding columns per row, 3 % of strided's time at
 * n = 1024). */
enum { SPAN_VEC = ATTN_VEC_FLOATS_MAX };
/* Keys of a residue class that the second phase in lanes (plan.class_step) keeps in lanes at
 * most (16 lanes × 64 dims: 2 MiB per thread); beyond, rows()' tasks. */
enum { LANE_KEYS_MAX = 512 };
/* Bytes of q, k, v and out from which the forward stores out past the caches (a 32 MiB L3). */
enum { STREAM_BYTES = 32 << 20 };

struct attn_bs_run {
    bool counting;
    /* computing */
    attn_tile *tile;
    const float *q;         /* query of task row 0 */
    int64_t ldq;            /* floats between task rows */
    const float *kg, *vg;   /* keys and values of this (b, kv head): [S, D] */
    float *kbuf, *vbuf;     /* gather buffers [gather_max, D] (NULL if the plan gathers nothing) */
    const attn_bs_keys *at; /* with keys gathered into a buffer: where segment key x really is
                               (key_at(at, x), for ALiBi); NULL: the segment's own keys */
    int64_t D, cols_max, gather_max, sub;
    bool fresh; /* the tile has seen no key yet (first phase, before the first segment) */
    /* the forward's packed span: keys [span_u0, span_u1) of the segment being computed, kᵀ in
     * span_kt [D, span_ld] (span_ld = length rounded up to SPAN_VEC + SPAN_VEC of slack, so that
     * a visit from any column reads its last, partial vector inside the row; the packing zeroes
     * only that much padding); span_kt NULL: none */
    float *span; /* [D, span_max + ATTN_TILE_COLS_ALIGN] floats (the backward: kᵀ, + vspan) */
    int64_t span_max;
    const float *span_kt;
    int64_t span_ld, span_u0, span_u1;
    bool seeds;    /* plan.seeds: the fresh tile may start from one key per row (forward) */
    bool unzeroed; /* the fresh tile's acc not zeroed yet (plan.seeds: a fused own visit of all
                      its rows sets it or writes out; any other visit zeroes it first) */
    /* the forward's last phase: out of task row 0 (rows end_ld apart; end_stream: non-temporal
     * stores), where a fused own visit of a last segment writes its rows (ended: all of them) */
    float *end_out;
    int64_t end_ld;
    bool end_stream, ended;
    /* the backward (bt set): the backward tile (tile is &bt->t), dout of task row 0 (rows lddo
     * apart), the gradients of this (b, kv head) [S, D] and their gather buffers */
    attn_btile *bt;
    const float *dout;
    const float *out; /* out of task row 0 (rows lddo apart): asked for ahead only; or NULL */
    int64_t lddo;
    float *dkg, *dvg, *dkbuf, *dvbuf;
    const int64_t *grows; /* keys gathered from a list: their gradient rows in dkg, dvg */
    float *vspan;         /* the backward's packed span holds vᵀ too: [D, span_max + 64] floats */
    const float *span_vt; /* vᵀ of the span's keys (rows span_ld floats), with span_kt */
    /* counting */
    double scores;     /* listed scores */
    uint64_t *bits;    /* keys read by the current kv group, one bit per key (or NULL) */
    int64_t marked, S; /* bits set, of S */
};

static size_t align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* ---- helpers ---- */

int64_t attn_bs_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

int64_t attn_bs_floormod(int64_t a, int64_t b) { return a - b * attn_bs_floordiv(a, b); }

attn_bs_keys attn_bs_range(int64_t j0, int64_t j1)
{
    const int64_t n = j1 > j0 ? j1 - j0 : 0;
    return (attn_bs_keys){.j0 = j0, .n = n, .run = n > 0 ? n : 1, .step = n > 0 ? n : 1};
}

int64_t attn_bs_block_tasks(const attn_shape *s, int64_t size)
{
    return attn_bs_floordiv(s->S - 1, size) - attn_bs_floordiv(s->S - s->T, size) + 1;
}

attn_bs_rows attn_bs_block_rows(const attn_shape *s, int64_t size, int64_t t)
{
    const int64_t shift = s->S - s->T; /* position of row 0 */
    const int64_t block = attn_bs_floordiv(shift, size) + t;
    const int64_t i0 = attn_bs_max(0, block * size - shift);
    const int64_t i1 = attn_bs_min(s->T, (block + 1) * size - shift);
    return (attn_bs_rows){.i0 = i0, .n = attn_bs_max(0, i1 - i0), .step = 1};
}

/* Chunks of `size` rows in the largest residue class (ceil(T/step) rows). */
static int64_t class_chunks(const attn_shape *s, int64_t step, int64_t size)
{
    return ((s->T + step - 1) / step + size - 1) / size;
}

int64_t attn_bs_class_tasks(const attn_shape *s, int64_t step, int64_t size)
{
    return attn_bs_min(step, s->T) * class_chunks(s, step, size);
}

attn_bs_rows attn_bs_class_rows(const attn_shape *s, int64_t step, int64_t size, int64_t t)
{
    const int64_t chunks = class_chunks(s, step, size), a = t / chunks, chunk = t % chunks;
    const int64_t count = (s->T - a + step - 1) / step, first = chunk * size;
    return (attn_bs_rows){.i0 = a + first * step,
                          .n = attn_bs_clamp(count - first, 0, size),
                          .step = step};
}

void attn_bs_plan_blocks(const attn_shape *s, int64_t block, attn_bs_plan *pl)
{
    pl->nphases = 1;
    pl->block = block;
    pl->tasks[0] = attn_bs_block_tasks(s, block);
    pl->rows_max = attn_bs_min(block, s->T);
}

attn_status attn_bs_accept(const attn_ops *self, const attn_shape *s, const attn_params *p,
                           char *msg, size_t msg_len)
{
    (void)s, (void)p, (void)msg, (void)msg_len;
    return ATTN_OK;
}

void attn_bs_band(const attn_shape *s, const attn_bs_task *t, int64_t r0, int64_t r1, int64_t w,
                  int64_t from, int64_t *ints, attn_bs_run *run)
{
    if (r1 <= r0 || w <= 0) return;
    int64_t *lo = ints, *hi = ints + t->rows.n;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    const int64_t j0 = attn_bs_max(from, p0 + r0 - w + 1); /* the first row's lowest key */
    for (int64_t r = r0; r < r1; r++) {
        const int64_t pos = p0 + r;
        lo[r] = attn_bs_max(from, pos - w + 1) - j0;
        hi[r] = attn_bs_min(s->S, s->causal ? pos + 1 : pos + w) - j0;
    }
    const attn_bs_seg seg = {
        .keys = attn_bs_range(j0, j0 + hi[r1 - 1]), .r0 = r0, .nrows = r1 - r0, .lo = lo, .hi = hi};
    attn_bs_visit(run, &seg);
}

int64_t attn_bs_band_sub(const attn_shape *s, const attn_bs_plan *pl, int64_t w)
{
    const int64_t width = s->causal ? w : 2 * w - 1, mr = pl->kernel_rows;
    if (width < BAND_NARROW) return 2 * mr; /* 12 rows: a triangle of at most 11 extra */
    return (width >= 1024 ? 2 * BAND_BLOCKS : BAND_BLOCKS) * mr;
}

void attn_bs_plan_band(const attn_shape *s, int64_t w, attn_bs_plan *pl)
{
    const int64_t width = s->causal ? w : 2 * w - 1;
    pl->sub = attn_bs_band_sub(s, pl, w);
    /* a group's keys (width + sub - 1) in one visit, up to BAND_COLS_MAX */
    pl->cols_max = attn_bs_clamp((width + pl->sub + 63) / 64 * 64, COLS_DEFAULT, BAND_COLS_MAX);
}

int64_t attn_bs_stride(const attn_shape *s, double v)
{
    if (v > 0) return (int64_t)v;
    int64_t r = (int64_t)sqrt((double)s->S);
    while (r * r < s->S) r++;
    while (r > 1 && (r - 1) * (r - 1) >= s->S) r--;
    return r;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* floor(k·N/r) without overflow (k <= r, r < 2^31, N < 2^62). */
static int64_t stratum_start(int64_t k, int64_t N, int64_t r)
{
    return k * (N / r) + k * (N % r) / r;
}

/* The hash of (seed, h, who), then of draw k: uniform 64-bit words. */
static uint64_t draw_base(uint64_t seed, int64_t h, int64_t who)
{
    return mix64(mix64(mix64(seed) ^ (uint64_t)h) ^ (uint64_t)who);
}

/* a + a uniform offset in [0, len): the high word of z·len. */
static int64_t pick(uint64_t base, int64_t k, int64_t a, int64_t len)
{
    return a + (int64_t)(((unsigned __int128)mix64(base ^ (uint64_t)k) * (uint64_t)len) >> 64);
}

int64_t attn_bs_draw(uint64_t seed, int64_t h, int64_t who, int64_t k, int64_t N, int64_t r)
{
    const int64_t a = stratum_start(k, N, r);
    return pick(draw_base(seed, h, who), k, a, stratum_start(k + 1, N, r) - a);
}

void attn_bs_draws(uint64_t seed, int64_t h, int64_t who, int64_t N, int64_t r, int64_t *out)
{
    if (r <= 0) return;
    const uint64_t base = draw_base(seed, h, who);
    const int64_t q = N / r, rem = N % r;
    int64_t a = 0, carry = 0; /* a = floor(k·N/r), carry = k·rem mod r */
    for (int64_t k = 0; k < r; k++) {
        carry += rem;
        const int64_t len = q + (carry >= r);
        if (carry >= r) carry -= r;
        out[k] = pick(base, k, a, len);
        a += len;
    }
}

bool attn_bs_drawn(uint64_t seed, int64_t h, int64_t who, int64_t x, int64_t N, int64_t r)
{
    if (x < 0 || x >= N) return false;
    if (r >= N) return true;
    if (r <= 0) return false;
    int64_t k = (int64_t)((double)x * (double)r / (double)N); /* its stratum, then exact */
    k = attn_bs_clamp(k, 0, r - 1);
    while (k > 0 && stratum_start(k, N, r) > x) k--;
    while (k + 1 < r && stratum_start(k + 1, N, r) <= x) k++;
    return attn_bs_draw(seed, h, who, k, N, r) == x;
}

/* ---- the layout of a shape ---- */

typedef struct layout {
    attn_bs_plan pl;
    attn_score_mod mod;
    int64_t tile_floats, mod_floats;
    int64_t lanes, lane_floats;    /* class_step in lanes: the set's lanes (0: not so), scratch */
    size_t thread_bytes, ml_bytes; /* per-thread workspace; (m, l) of two-phase patterns */
    int64_t span_max;              /* keys of a packed span at most (forward only) */
    size_t span_bytes;             /* per thread: its packed keys */
    const attn_kernel_set *ks;     /* the set the forward and backward run on (NULL: counting) */
} layout;

static layout layout_of(const attn_exec *x, const attn_bs_pattern *pat, const attn_param_table *t,
                        const attn_shape *s, const attn_params *p)
{
    layout L;
    L.ks = x ? x->ks : NULL;
    memset(&L.pl, 0, sizeof L.pl);
    /* counting (no context) lists the same scores whatever the row groups: the default set's */
    L.pl.kernel_rows = (L.ks ? L.ks : attn_ks())->tile_rows;
    pat->plan(s, p, &L.pl);
    if (L.pl.cols_max <= 0) L.pl.cols_max = COLS_DEFAULT;
    L.pl.gather_max = attn_bs_max(L.pl.gather_max, L.pl.cols_max);
    if (L.pl.sub <= 0) L.pl.sub = SUB_DEFAULT;
    L.tile_floats = attn_tile_floats(L.pl.rows_max, L.pl.cols_max, s->D);
    L.mod = attn_score_mod_of(t, p, s);
    L.mod_floats = attn_tile_mod_floats(&L.mod, L.pl.rows_max, L.pl.cols_max);
    const size_t gather = L.pl.gathers ? 2 * (size_t)(L.pl.gather_max * s->D) * sizeof(float) : 0;
    const size_t rows = L.pl.gather_rows ? (size_t)(L.pl.rows_max * s->D) * sizeof(float) : 0;
    L.span_max = attn_bs_min(SPAN_MAX, s->S);
    L.span_bytes =
        (size_t)(s->D * (attn_tile_score_ld(L.span_max) + ATTN_TILE_COLS_ALIGN)) * sizeof(float);
    /* the second phase in lanes: every class's keys (at most LANE_KEYS_MAX) in lanes, a register
     * block of rows' queries and their scores (tile.attend_lanes, kernel_set.h) */
    const int64_t nk = L.pl.class_step > 0 ? (s->S + L.pl.class_step - 1) / L.pl.class_step : 0;
    L.lanes = L.pl.class_step > 0 && L.pl.nphases == 2 && !L.pl.seeds && nk <= LANE_KEYS_MAX &&
                      !L.mod.alibi && !(L.mod.softcap > 0)
                  ? (x ? x->ks->lanes : 0)
                  : 0;
    const int64_t mr = L.pl.kernel_rows;
    L.lane_floats = L.lanes * ((nk + mr) * (s->D + 1) + mr * nk);
    L.thread_bytes = align_up((size_t)L.tile_floats * sizeof(float)) +
                     align_up((size_t)L.mod_floats * sizeof(float)) + align_up(gather) +
                     align_up(rows) + align_up((size_t)L.pl.ints * sizeof(int64_t)) +
                     align_up(L.span_bytes) + align_up((size_t)L.lane_floats * sizeof(float));
    L.ml_bytes = L.pl.nphases > 1 ? 2 * (size_t)(s->B * s->H * s->T) * sizeof(float) : 0;
    return L;
}

/* The kind's pattern (its engine data). */
static const attn_bs_pattern *pattern_of(const attn_ops *self)
{
    return (const attn_bs_pattern *)self->engine_data;
}

size_t attn_bs_workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                               const attn_params *p)
{
    const layout L = layout_of(x, pattern_of(self), &self->params, s, p);
    return (size_t)x->threads * L.thread_bytes + L.ml_bytes;
}

/* ---- computing a segment ---- */

static int64_t key_at(const attn_bs_keys *ks, int64_t x)
{
    return ks->idx ? ks->idx[x] : ks->j0 + (x / ks->run) * ks->step + x % ks->run;
}

static bool contiguous(const attn_bs_keys *ks)
{
    return !ks->idx && (ks->run == ks->step || ks->run >= ks->n);
}

/* Every step-th key, rows a leading dimension (an int for BLAS) apart? */
static bool every_step(const attn_bs_keys *ks, int64_t D)
{
    return !ks->idx && ks->run == 1 && attn_blas_int_ok(ks->step * D);
}

/* Ask for the rows idx[0..n) of k and v: the misses of a scattered row overlap. */
static void prefetch_rows(const attn_bs_run *run, const int64_t *idx, int64_t n)
{
    for (int64_t x = 0; x < n; x++)
        for (int64_t d = 0; d < run->D; d += 16) {
            __builtin_prefetch(run->kg + idx[x] * run->D + d);
            __builtin_prefetch(run->vg + idx[x] * run->D + d);
        }
}

/* Ask for the query of task row r. */
static void prefetch_query(const attn_bs_run *run, int64_t r)
{
    for (int64_t d = 0; d < run->D; d += 16) __builtin_prefetch(run->q + r * run->ldq + d);
}

/* Ask for `floats` floats from base + off, where base + off may lie past its array (a guess at
 * the next task's rows): the address is formed as an integer (no out-of-bounds pointer); a
 * prefetch never faults. */
static void prefetch_guess(const float *base, int64_t off, int64_t floats)
{
    const uintptr_t a = (uintptr_t)base + (uintptr_t)off * sizeof(float);
    for (int64_t d = 0; d < floats; d += 16)
        __builtin_prefetch((const void *)(a + d * sizeof(float)));
}

/* prefetch_guess into the outer caches only (locality 1: prefetcht2; the backward's next block,
 * a whole task ahead: random n = 8192 1 thread 4 % faster, t0 no faster). */
static void prefetch_l2(const float *base, int64_t off, int64_t floats)
{
    const uintptr_t a = (uintptr_t)base + (uintptr_t)off * sizeof(float);
    for (int64_t d = 0; d < floats; d += 16)
        __builtin_prefetch((const void *)(a + d * sizeof(float)), 0, 1);
}

/* Keys [x0, x0 + cols) of a segment as rows of stride *ld: in place, or gathered into buf
 * (always when gather). */
static const float *keys_of(attn_bs_run *run, const attn_bs_keys *ks, const float *src, float *buf,
                            int64_t x0, int64_t cols, int64_t *ld, bool gather)
{
    const int64_t D = run->D;
    if (!gather && contiguous(ks)) {
        *ld = D;
        return src + (ks->j0 + x0) * D;
    }
    /* every step-th key: by the leading dimension (an int for BLAS) */
    if (!gather && every_step(ks, D)) {
        *ld = ks->step * D;
        return src + (ks->j0 + x0 * ks->step) * D;
    }
    *ld = D;
    for (int64_t x = x0; x < x0 + cols;) {
        const int64_t len = ks->idx ? 1 : attn_bs_min(ks->run - x % ks->run, x0 + cols - x);
        memcpy(buf + (x - x0) * D, src + key_at(ks, x) * D, (size_t)(len * D) * sizeof(float));
        x += len;
    }
    return buf;
}

/* dst rows of keys [x0, x0 + cols) of a segment += buf rows (the inverse of a gather). */
static void scatter_add(const attn_bs_run *run, const attn_bs_keys *ks, const float *buf,
                        float *dst, int64_t x0, int64_t cols)
{
    const int64_t D = run->D;
    for (int64_t x = x0; x < x0 + cols;) {
        const int64_t len = ks->idx ? 1 : attn_bs_min(ks->run - x % ks->run, x0 + cols - x);
        float *to = dst + key_at(ks, x) * D;
        const float *from = buf + (x - x0) * D;
        for (int64_t e = 0; e < len * D; e++) to[e] += from[e];
        x += len;
    }
}

/* The backward of one visit: dk, dv in place where the keys are read in place, else in the
 * gradient buffers, added back to the keys' rows after. */
static void backward_visit(attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                           int64_t x0, int64_t cols, const float *kp, const float *vp, int64_t ld,
                           const attn_tile_mask *mask)
{
    const bool gathered = kp == run->kbuf;
    float *dkp = run->dkbuf, *dvp = run->dvbuf;
    if (run->grows) { /* keys copied from a list: their dk, dv rows updated in place */
        dkp = run->dkg, dvp = run->dvg, run->bt->grows = run->grows + x0;
    } else if (gathered) {
        memset(dkp, 0, (size_t)(cols * run->D) * sizeof(float));
        memset(dvp, 0, (size_t)(cols * run->D) * sizeof(float));
    } else {
        dkp = run->dkg + (kp - run->kg), dvp = run->dvg + (vp - run->vg);
    }
    const float *q = run->q + g0 * run->ldq, *dout = run->dout + g0 * run->lddo;
    if (run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1) /* packed once */
        attn_btile_visit_packed(run->bt, g0, gn, q, run->ldq, dout, run->lddo,
                                run->span_kt + (x0 - run->span_u0),
                                run->span_vt + (x0 - run->span_u0), run->span_ld, kp, ld, dkp, dvp,
                                ld, cols, mask);
    else
        attn_btile_visit(run->bt, g0, gn, q, run->ldq, dout, run->lddo, kp, vp, ld, dkp, dvp, ld,
                         cols, mask);
    run->bt->grows = NULL;
    if (!gathered) return;
    scatter_add(run, &seg->keys, dkp, run->dkg, x0, cols);
    scatter_add(run, &seg->keys, dvp, run->dvg, x0, cols);
}

/* The backward's span: vᵀ of keys [u0, u1) of a segment next to its kᵀ (pack_span). */
static void pack_span_values(attn_bs_run *run, const attn_bs_seg *seg, int64_t u0, int64_t u1)
{
    int64_t ld;
    const float *vp = keys_of(run, &seg->keys, run->vg, NULL, u0, u1 - u0, &ld, false);
    run->tile->ks->tile.pack_kt(run->vspan, run->span_ld, vp, ld, u1 - u0, run->D);
    run->span_vt = run->vspan;
}

/* Task rows [g0, g0 + gn) against keys [x0, x0 + cols) of the packed span (v rows ld apart):
 * the scores micro-kernel from the span's kᵀ, then the tile's softmax and p·v. */
static void visit_span(attn_bs_run *run, int64_t g0, int64_t gn, int64_t x0, int64_t cols,
                       const float *vp, int64_t ld, const attn_tile_mask *mask)
{
    attn_tile *t = run->tile;
    run->tile->ks->tile.scores(t->scores, attn_tile_score_ld(cols), run->q + g0 * run->ldq,
                               run->ldq, run->span_kt + (x0 - run->span_u0), run->span_ld, gn, cols,
                               run->D, t->scale);
    attn_tile_visit_scores(t, g0, gn, vp, ld, cols, mask);
}

/* The forward's fused visit (attn_ks()->tile.attend: scores, online softmax and p·v per register
 * block of rows, tile_rows; the scores in L1, no call per row): task rows [g0, g0 + gn) against
 * keys [x0, x0 + cols) of the segment, kᵀ at kt (rows ldk apart), v rows ld apart, row r seeing the
 * keys in [lo[r], hi[r]) (segment numbering; NULL: from the first, up to all). */
static void visit_fused(attn_bs_run *run, int64_t g0, int64_t gn, int64_t x0, int64_t cols,
                        const float *kt, int64_t ldk, const float *vp, int64_t ld,
                        const int64_t *lo, const int64_t *hi)
{
    enum { ROWS = 60 };
    attn_tile *t = run->tile;
    const int64_t D = run->D, lds = attn_tile_score_ld(cols), mr = run->tile->ks->tile_rows;
    /* rows per call: their scores within the tile's (rows × cols_max), whole register blocks */
    const int64_t most =
        attn_bs_clamp(t->rows * attn_tile_score_ld(run->cols_max) / lds / mr * mr, mr, ROWS);
    int64_t h[ROWS], a[ROWS];
    for (int64_t g = g0; g < g0 + gn; g += most) {
        const int64_t n = attn_bs_min(most, g0 + gn - g);
        for (int64_t r = 0; hi && r < n; r++) h[r] = hi[g + r] - x0;
        for (int64_t r = 0; lo && r < n; r++) a[r] = lo[g + r] - x0;
        run->tile->ks->tile.attend(t->acc + g * t->acc_ld, t->acc_ld, t->m + g, t->l + g, t->scores,
                                   attn_tile_score_ld(cols), run->q + g * run->ldq, run->ldq, kt,
                                   ldk, vp, ld, lo ? a : NULL, hi ? h : NULL, n, cols, D, t->scale);
    }
}

/* Pack keys [u0, u1) of a segment read in place (contiguous, or every step-th) into the span,
 * when there is one and they fit: the forward's row groups then share one packing. */
static void pack_span(attn_bs_run *run, const attn_bs_seg *seg, int64_t u0, int64_t u1)
{
    run->span_kt = NULL;
    if (!run->span || u1 - u0 > run->span_max ||
        !(contiguous(&seg->keys) || every_step(&seg->keys, run->D)))
        return;
    int64_t ld;
    const float *kp = keys_of(run, &seg->keys, run->kg, NULL, u0, u1 - u0, &ld, false);
    run->span_ld = (u1 - u0 + SPAN_VEC - 1) / SPAN_VEC * SPAN_VEC + SPAN_VEC;
    run->tile->ks->tile.pack_kt(run->span, run->span_ld, kp, ld, u1 - u0, run->D);
    run->span_kt = run->span, run->span_u0 = u0, run->span_u1 = u1;
    if (run->vspan) pack_span_values(run, seg, u0, u1);
}

/* Task rows [g0, g0 + gn) against keys [c0, c1) of the segment, masked by the row bounds
 * (bounds) and the exclusions, in blocks of cols_max keys. */
static void visit_range(attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                        int64_t c0, int64_t c1, bool bounds)
{
    attn_tile_mask mask = {0};
    if (bounds && seg->lo) mask.lo = seg->lo + g0;
    if (bounds && seg->hi) mask.hi = seg->hi + g0;
    if (seg->xlo) mask.xlo = seg->xlo + g0, mask.xhi = seg->xhi + g0;
    const bool masked = mask.lo || mask.hi || mask.xlo;
    /* the forward, row bounds only (no exclusion), no modifier: the fused visit */
    const bool fused = !run->bt && !mask.xlo && !run->tile->alibi && run->tile->cap == 0.0f &&
                       (!mask.lo || c1 - c0 <= FUSED_BAND_COLS);
    for (int64_t x0 = c0; x0 < c1; x0 += run->cols_max) {
        const int64_t cols = attn_bs_min(run->cols_max, c1 - x0);
        int64_t ld; /* the same for keys and values */
        if (seg->keys.idx) prefetch_rows(run, seg->keys.idx + x0, cols); /* gathered below */
        const float *kp = keys_of(run, &seg->keys, run->kg, run->kbuf, x0, cols, &ld, false);
        const float *vp = keys_of(run, &seg->keys, run->vg, run->vbuf, x0, cols, &ld, false);
        mask.col0 = x0;
        if (run->tile->alibi) /* the positions of keys x0 .. x0 + cols */
            for (int64_t c = 0; c < cols; c++)
                run->tile->kpos[c] = (float)key_at(run->at ? run->at : &seg->keys, x0 + c);
        if (run->bt) backward_visit(run, seg, g0, gn, x0, cols, kp, vp, ld, masked ? &mask : NULL);
        else if (fused && run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1)
            visit_fused(run, g0, gn, x0, cols, run->span_kt + (x0 - run->span_u0), run->span_ld, vp,
                        ld, mask.lo ? seg->lo : NULL, mask.hi ? seg->hi : NULL);
        else if (fused) {
            attn_tile_pack_keys(run->tile, kp, ld, cols);
            visit_fused(run, g0, gn, x0, cols, run->tile->kt, run->tile->kt_ld, vp, ld,
                        mask.lo ? seg->lo : NULL, mask.hi ? seg->hi : NULL);
        } else if (run->span_kt && x0 >= run->span_u0 && x0 + cols <= run->span_u1)
            visit_span(run, g0, gn, x0, cols, vp, ld, masked ? &mask : NULL);
        else
            attn_tile_visit_masked(run->tile, g0, gn, run->q + g0 * run->ldq, run->ldq, kp, vp, ld,
                                   cols, masked ? &mask : NULL);
    }
}

/* Seen keys [lo, hi) of task row r, clipped to the segment. */
static void row_bounds(const attn_bs_seg *seg, int64_t r, int64_t *lo, int64_t *hi)
{
    *lo = seg->lo ? attn_bs_max(seg->lo[r], 0) : 0;
    *hi = seg->hi ? attn_bs_min(seg->hi[r], seg->keys.n) : seg->keys.n;
}

/* Union [*u0, *u1) and intersection [*i0, *i1) of the rows' seen intervals (empty: u0 >= u1;
 * the intersection is empty when any row sees nothing). */
static void span(const attn_bs_seg *seg, int64_t r0, int64_t nr, int64_t *u0, int64_t *u1,
                 int64_t *i0, int64_t *i1)
{
    *u0 = seg->keys.n, *u1 = 0, *i0 = 0, *i1 = seg->keys.n;
    for (int64_t r = r0; r < r0 + nr; r++) {
        int64_t lo, hi;
        row_bounds(seg, r, &lo, &hi);
        if (lo >= hi) {
            *i1 = *i0;
            continue;
        }
        *u0 = attn_bs_min(*u0, lo), *u1 = attn_bs_max(*u1, hi);
        *i0 = attn_bs_max(*i0, lo), *i1 = attn_bs_min(*i1, hi);
    }
}

/* The keys of segment row x (task row r0 + x) of a list per row (row_start) or of the own keys
 * (own): *n of them at *keys. */
static const int64_t *row_list(const attn_bs_seg *seg, int64_t x, int64_t *n)
{
    if (!seg->row_start) {
        const int64_t *j = seg->own + seg->r0 + x;
        *n = *j >= 0;
        return j;
    }
    *n = seg->row_start[x + 1] - seg->row_start[x];
    return seg->keys.idx + seg->row_start[x];
}

/* Ask for the k, v rows of segment rows [x0, x1) of a list per row (or own keys). */
static void prefetch_list(const attn_bs_run *run, const attn_bs_seg *seg, int64_t x0, int64_t x1)
{
    for (int64_t x = x0; x < attn_bs_min(x1, seg->nrows); x++) {
        int64_t n;
        const int64_t *idx = row_list(seg, x, &n);
        prefetch_rows(run, idx, n);
    }
}

/* A fresh tile and at most one key per row: start each row from its key (score s: m = s, l = 1,
 * acc = its v row; no key: the fresh m = -inf, l = 0, acc = 0) written into the tile, instead of
 * a visit per row. False (nothing done) when the case does not apply. */
static bool seed_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t D = run->D, ahead = 8;
    attn_tile *t = run->tile;
    if (run->bt || !run->fresh || !run->seeds) return false;
    for (int64_t x = 0; x < seg->nrows && !seg->own; x++)
        if (seg->row_start[x + 1] - seg->row_start[x] > 1) return false;
    prefetch_list(run, seg, 0, ahead);
    for (int64_t x = 0; x < attn_bs_min(ahead, seg->nrows); x++) prefetch_query(run, seg->r0 + x);
    for (int64_t x = 0; x < seg->nrows; x++) {
        if (x + ahead < seg->nrows) {
            prefetch_list(run, seg, x + ahead, x + ahead + 1);
            prefetch_query(run, seg->r0 + x + ahead); /* its first use: random 12 % faster */
        }
        int64_t n;
        const int64_t *key = row_list(seg, x, &n);
        const int64_t r = seg->r0 + x, j = n > 0 ? *key : -1;
        /* own keys (a block's positions): the next block's row x, likely next (the hardware
         * sees no stream across tasks; random 1 thread 5 % faster) */
        if (seg->own) {
            prefetch_guess(run->q, (r + seg->nrows) * run->ldq, D);
            if (j >= 0) {
                prefetch_guess(run->kg, (j + seg->nrows) * D, D);
                prefetch_guess(run->vg, (j + seg->nrows) * D, D);
            }
        }
        if (j < 0) continue;
        float sc = t->scale * attn_vdot(t->ks, run->q + r * run->ldq, run->kg + j * D, D);
        if (t->cap > 0.0f) attn_vsoftcap(t->ks, &sc, 1, t->cap);
        if (t->alibi) sc -= t->slope[r] * fabsf(t->qpos[r] - (float)j);
        t->m[r] = sc, t->l[r] = 1.0f;
        memcpy(t->acc + r * t->acc_ld, run->vg + j * D, (size_t)D * sizeof(float));
    }
    return true;
}

/* Ask for the rows idx[0..n) of k, v and of their gradients (the backward). */
static void prefetch_grads(const attn_bs_run *run, const int64_t *idx, int64_t n)
{
    prefetch_rows(run, idx, n);
    for (int64_t x = 0; x < n; x++)
        for (int64_t d = 0; d < run->D; d += 16) {
            __builtin_prefetch(run->dkg + idx[x] * run->D + d, 1);
            __builtin_prefetch(run->dvg + idx[x] * run->D + d, 1);
        }
}

/* Keys of seg.ahead the backward's own-key pass asks for at most (as the forward's AHEAD_KEYS). */
enum { BWD_AHEAD_KEYS = 128 };

/* The backward of a list per row: row by row (a one-key list in one pass: attn_btile_visit_one),
 * the keys and gradients of the row AHEAD rows on prefetched meanwhile. */
static void backward_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t D = run->D, ahead = 4;
    for (int64_t r = 0; r < seg->nrows; r++) {
        for (int64_t x = r == 0 ? 0 : r + ahead; x <= r + ahead && x < seg->nrows; x++) {
            int64_t nx;
            const int64_t *ix = row_list(seg, x, &nx);
            prefetch_grads(run, ix, nx);
        }
        const int64_t row = seg->r0 + r;
        int64_t n;
        const int64_t *idx = row_list(seg, r, &n);
        const float *q = run->q + row * run->ldq, *dout = run->dout + row * run->lddo;
        if (seg->own && n == 1) { /* the next block's row r (likely this thread's next task) */
            const int64_t nx = seg->nrows, j = *idx + nx;
            prefetch_l2(run->q, (row + nx) * run->ldq, D);
            prefetch_l2(run->dout, (row + nx) * run->lddo, D);
            if (run->out) prefetch_l2(run->out, (row + nx) * run->lddo, D);
            prefetch_l2(run->kg, j * D, D);
            prefetch_l2(run->vg, j * D, D);
            prefetch_l2(run->dkg, j * D, D);
            prefetch_l2(run->dvg, j * D, D);
            /* row r's share of the next block's keys (seg.ahead) and their gradient rows */
            const int64_t na = attn_bs_min(seg->ahead.n, BWD_AHEAD_KEYS);
            for (int64_t x = r * na / nx; x < (r + 1) * na / nx; x++) {
                const int64_t a = key_at(&seg->ahead, x);
                prefetch_l2(run->kg, a * D, D);
                prefetch_l2(run->vg, a * D, D);
                prefetch_l2(run->dkg, a * D, D);
                prefetch_l2(run->dvg, a * D, D);
            }
        }
        if (n == 1) {
            const int64_t j = *idx;
            attn_btile_visit_one(run->bt, row, q, dout, j, run->kg + j * D, run->vg + j * D,
                                 run->dkg + j * D, run->dvg + j * D);
            continue;
        }
        for (int64_t x0 = 0; x0 < n; x0 += run->cols_max)
            attn_btile_visit_list(run->bt, row, q, dout, run->kg, run->vg, run->dkg, run->dvg,
                                  idx + x0, attn_bs_min(run->cols_max, n - x0));
    }
}

/* A list per row (or own keys): row by row, the next row's keys prefetched while this one
 * computes. */
static void compute_lists(attn_bs_run *run, const attn_bs_seg *seg)
{
    if (run->bt) {
        backward_lists(run, seg);
        return;
    }
    if (seed_lists(run, seg)) return;
    prefetch_list(run, seg, 0, 1);
    for (int64_t r = 0; r < seg->nrows; r++) {
        prefetch_list(run, seg, r + 1, r + 2);
        const int64_t row = seg->r0 + r;
        int64_t n;
        const int64_t *idx = row_list(seg, r, &n);
        for (int64_t x0 = 0; x0 < n; x0 += run->cols_max)
            attn_tile_visit_list(run->tile, row, run->q + row * run->ldq, run->kg, run->vg,
                                 idx + x0, attn_bs_min(run->cols_max, n - x0));
    }
}

static void compute_seg(attn_bs_run *run, const attn_bs_seg *seg);

/* A fresh tile begun without zeroing acc (plan.seeds): zero it now. */
static void unzeroed_to_zero(attn_bs_run *run)
{
    if (run->unzeroed) attn_tile_zero_acc(run->tile);
    run->unzeroed = false;
}

/* Rows per call of the fused visit with own keys (compute_own), and keys of seg.ahead asked for
 * per segment at most (the rest would not stay in L2 anyway). */
enum { OWN_ROWS = 64, AHEAD_KEYS = 128 };

/* Append the span of `bytes` at `at` to sp[0..*n), merged with the last when it continues it. */
static void add_span(attn_ks_span *sp, int64_t *n, uintptr_t at, int64_t bytes)
{
    if (*n > 0 && sp[*n - 1].at + (uintptr_t)sp[*n - 1].bytes == at) sp[*n - 1].bytes += bytes;
    else sp[(*n)++] = (attn_ks_span){.at = at, .bytes = bytes};
}

/* The address of base[off] as an integer (a guess at the next task's rows may lie past its array:
 * no out-of-bounds pointer is formed). */
static uintptr_t address(const float *base, int64_t off)
{
    return (uintptr_t)base + (uintptr_t)off * sizeof(float);
}

/* The spans a fused own visit of segment rows [g0, g0 + gn) asks for: the rows of the next block
 * (nr on: likely this thread's next task) and its share of seg.ahead's k and v rows. Returns how
 * many. */
static int64_t own_ahead(const attn_bs_run *run, const attn_bs_seg *seg, int64_t g0, int64_t gn,
                         attn_ks_span *sp)
{
    const int64_t D = run->D, nr = seg->nrows, row = (int64_t)sizeof(float) * D;
    const int64_t r0 = seg->r0 + g0;
    int64_t n = 0;
    add_span(sp, &n, address(run->q, (r0 + nr) * run->ldq), gn * run->ldq * (int64_t)sizeof(float));
    /* the own keys' rows by runs of consecutive keys (random: the block's positions), k then v */
    for (int64_t r = r0; r < r0 + gn;) {
        const int64_t j = seg->own[r];
        int64_t e = r + 1;
        if (j < 0) {
            r = e;
            continue;
        }
        while (e < r0 + gn && seg->own[e] == j + (e - r)) e++;
        add_span(sp, &n, address(run->kg, (j + nr) * D), (e - r) * row);
        add_span(sp, &n, address(run->vg, (j + nr) * D), (e - r) * row);
        r = e;
    }
    const int64_t na = attn_bs_min(seg->ahead.n, AHEAD_KEYS);
    for (int64_t x = g0 * na / nr; x < (g0 + gn) * na / nr; x++) {
        const int64_t j = key_at(&seg->ahead, x);
        add_span(sp, &n, address(run->kg, j * D), row);
        add_span(sp, &n, address(run->vg, j * D), row);
    }
    return n;
}

/* A segment with own keys. The forward of a fresh tile without score modifiers, its keys in one
 * visit (listed keys packed from their rows, their v rows read through the list: no copy; random
 * n = 8192 1 thread 9.05 -> 8.78 ms): the own keys and the keys in one pass per group of rows
 * (attn_tile_attend_own: the
 * scores, softmax and p·v of a group's rows together, no seeding pass, acc never zeroed or
 * rescaled; random n = 8192 1 thread 12.1 -> 11.3 ms), the next block's queries and own keys
 * and seg.ahead's keys asked for meanwhile, spread over the pass (not in bursts between calls:
 * random n = 8192, 1 thread, CPU time 14.4 -> 9.9 ms); the task's only visit (seg.last, all its
 * rows, the last phase) writes out normalised itself (no pass over acc after). Otherwise the own
 * keys as a list per row (the forward's fresh tile starts from them: seed_lists), then the keys. */
static void compute_own(attn_bs_run *run, const attn_bs_seg *seg)
{
    const attn_tile *t = run->tile;
    const int64_t n = seg->keys.n, D = run->D, nr = seg->nrows;
    const bool in_place = contiguous(&seg->keys) || every_step(&seg->keys, run->D);
    const bool fused = !run->bt && run->fresh && run->seeds && t->cap == 0.0f && !t->alibi &&
                       n <= run->cols_max &&
                       (n <= 0 || in_place || seg->keys.idx || (run->kbuf && n <= run->gather_max));
    if (!fused) {
        unzeroed_to_zero(run);
        const attn_bs_seg own = {.r0 = seg->r0,
                                 .nrows = seg->nrows,
                                 .own = seg->own,
                                 .ahead = seg->ahead};
        compute_lists(run, &own);
        run->fresh = false;
        attn_bs_seg rest = *seg;
        rest.own = NULL;
        if (n > 0) compute_seg(run, &rest);
        return;
    }
    if (seg->r0 > 0 || nr < t->rows) unzeroed_to_zero(run); /* rows not set below */
    run->unzeroed = false;
    int64_t ld = D;
    const float *vp = run->vg;
    const int64_t *vidx = seg->keys.idx; /* listed keys: packed and read where they are */
    if (n > 0 && vidx) {
        /* the drawn keys were asked for during the previous block (seg.ahead): no burst here */
        attn_tile_pack_key_rows(run->tile, run->kg, D, vidx, n);
    } else if (n > 0) { /* in place, or runs of keys gathered */
        const float *kp = keys_of(run, &seg->keys, run->kg, run->kbuf, 0, n, &ld, false);
        vp = keys_of(run, &seg->keys, run->vg, run->vbuf, 0, n, &ld, false);
        attn_tile_pack_key_rows(run->tile, kp, ld, NULL, n);
    }
    attn_ks_span ahead[1 + 2 * OWN_ROWS + 2 * AHEAD_KEYS];
    /* the task's only visit: out written from it (no pass over acc after) */
    const bool to_out = run->end_out && seg->last && seg->r0 == 0 && nr == t->rows;
    for (int64_t g0 = 0; g0 < nr; g0 += OWN_ROWS) {
        const int64_t gn = attn_bs_min(OWN_ROWS, nr - g0), r0 = seg->r0 + g0;
        attn_tile_attend_own(run->tile, r0, gn, run->q + r0 * run->ldq, run->ldq, vp, ld, vidx, n,
                             seg->hi, run->kg, run->vg, seg->own, ahead,
                             own_ahead(run, seg, g0, gn, ahead),
                             to_out ? run->end_out + r0 * run->end_ld : NULL, run->end_ld,
                             run->end_stream);
    }
    run->ended = to_out;
    run->fresh = false;
}

static void compute_seg(attn_bs_run *run, const attn_bs_seg *seg)
{
    const int64_t r0 = seg->r0, nr = seg->nrows;
    if (seg->own) {
        compute_own(run, seg);
        return;
    }
    unzeroed_to_zero(run);
    if (seg->row_start) {
        compute_lists(run, seg);
        return;
    }
    /* scattered keys that groups of rows visit again and again: copied together once, then read
     * in place (the backward reads and updates every step-th key in place: no scatter; the
     * forward packs every step-th key into its span in place: no copy) */
    const bool stepped = every_step(&seg->keys, run->D); /* read in place by a leading dim. */
    if (!contiguous(&seg->keys) && run->kbuf && (seg->lo || seg->hi) &&
        seg->keys.n <= run->gather_max && !(run->bt && stepped) &&
        !(stepped && run->span && seg->keys.n <= run->span_max)) {
        int64_t ld;
        if (seg->keys.idx) prefetch_rows(run, seg->keys.idx, seg->keys.n);
        keys_of(run, &seg->keys, run->kg, run->kbuf, 0, seg->keys.n, &ld, true);
        keys_of(run, &seg->keys, run->vg, run->vbuf, 0, seg->keys.n, &ld, true);
        attn_bs_run here = *run;
        attn_bs_seg copied = *seg;
        here.kg = run->kbuf, here.vg = run->vbuf, here.kbuf = here.vbuf = NULL;
        here.dkg = run->dkbuf, here.dvg = run->dvbuf, here.dkbuf = here.dvbuf = NULL;
        here.at = &seg->keys;
        copied.keys = attn_bs_range(0, seg->keys.n);
        const bool scatter = run->bt && !seg->keys.idx;
        if (run->bt && seg->keys.idx) /* a list: its keys' dk, dv rows updated in place */
            here.dkg = run->dkg, here.dvg = run->dvg, here.grows = seg->keys.idx;
        if (scatter) { /* the segment's gradients, added back to the keys' rows after */
            memset(run->dkbuf, 0, (size_t)(seg->keys.n * run->D) * sizeof(float));
            memset(run->dvbuf, 0, (size_t)(seg->keys.n * run->D) * sizeof(float));
        }
        compute_seg(&here, &copied);
        if (scatter) {
            scatter_add(run, &seg->keys, run->dkbuf, run->dkg, 0, seg->keys.n);
            scatter_add(run, &seg->keys, run->dvbuf, run->dvg, 0, seg->keys.n);
        }
        return;
    }
    if (!seg->lo && !seg->hi) { /* every row sees every key (but its exclusion) */
        visit_range(run, seg, r0, nr, 0, seg->keys.n, false);
        return;
    }
    int64_t u0, u1, i0, i1;
    span(seg, r0, nr, &u0, &u1, &i0, &i1);
    if (u0 >= u1) return;
    /* the forward's fused visits with upper bounds only (no modifier: visit_range) by FUSED_BLOCKS
     * register blocks of rows (a band's narrow visits are fused too, by its own sub) */
    const bool fused =
        !run->bt && !seg->lo && !seg->xlo && !run->tile->alibi && run->tile->cap == 0.0f;
    const int64_t mr = run->tile->ks->tile_rows, sub = fused ? FUSED_BLOCKS * mr : run->sub;
    /* rows in one group: one masked visit of [u0, u1) (the same keys in one call rather than
     * the common keys apart: fewer, larger GEMMs) */
    if (nr > sub) pack_span(run, seg, u0, u1); /* several groups: one packing */
    /* the forward with the span packed: each group visits all its keys; the common visit would
     * save only masks, and leave each group a short visit of its own few keys (fixed's summary:
     * 8-24 keys per group after ~500 common ones; 3-6 % faster without) */
    const bool common = i1 - i0 >= COMMON_MIN && nr > sub && !(run->span_kt && !run->bt);
    if (common) visit_range(run, seg, r0, nr, i0, i1, false);
    /* fused: the rows short of a multiple of the micro-kernels' register rows first, alone
     * (their block repeats a row to fill it; under causal bounds the first rows see the fewest
     * keys), then whole blocks */
    const int64_t first = fused && nr % mr != 0 ? nr % mr : sub;
    for (int64_t g0 = r0; g0 < r0 + nr; g0 += g0 == r0 ? first : sub) {
        const int64_t gn = attn_bs_min(g0 == r0 ? first : sub, r0 + nr - g0);
        int64_t g_u0, g_u1, g_i0, g_i1;
        span(seg, g0, gn, &g_u0, &g_u1, &g_i0, &g_i1);
        if (g_u0 >= g_u1) continue;
        if (!common) {
            visit_range(run, seg, g0, gn, g_u0, g_u1, true);
            continue;
        }
        if (g_u0 < i0) visit_range(run, seg, g0, gn, g_u0, attn_bs_min(g_u1, i0), true);
        if (g_u1 > i1) visit_range(run, seg, g0, gn, attn_bs_max(g_u0, i1), g_u1, true);
    }
    run->span_kt = NULL;
}

/* ---- counting a segment ---- */

static void mark(attn_bs_run *run, int64_t j)
{
    uint64_t *w = &run->bits[j >> 6], bit = 1ull << (j & 63);
    run->marked += !(*w & bit);
    *w |= bit;
}

static void mark_range(attn_bs_run *run, int64_t j0, int64_t j1)
{
    for (int64_t j = j0; j < j1;) {
        const int64_t end = attn_bs_min(j1, (j | 63) + 1);
        const uint64_t m = (end - j == 64) ? ~0ull : (((1ull << (end - j)) - 1) << (j & 63));
        uint64_t *w = &run->bits[j >> 6];
        run->marked += __builtin_popcountll(m & ~*w);
        *w |= m;
        j = end;
    }
}

/* Mark keys x in [a, b) of the segment as read. */
static void mark_keys(attn_bs_run *run, const attn_bs_keys *ks, int64_t a, int64_t b)
{
    if (contiguous(ks)) {
        mark_range(run, ks->j0 + a, ks->j0 + b);
        return;
    }
    for (int64_t x = a; x < b && run->marked < run->S; x++) mark(run, key_at(ks, x));
}

static void count_seg(attn_bs_run *run, const attn_bs_seg *seg)
{
    for (int64_t r = seg->r0; seg->own && r < seg->r0 + seg->nrows; r++)
        if (seg->own[r] >= 0) {
            run->scores += 1.0;
            if (run->bits) mark(run, seg->own[r]);
        }
    if (seg->row_start) { /* a list per row */
        const int64_t a = seg->row_start[0], e = seg->row_start[seg->nrows];
        run->scores += (double)(e - a);
        if (run->bits) mark_keys(run, &seg->keys, a, e);
        return;
    }
    for (int64_t r = seg->r0; r < seg->r0 + seg->nrows; r++) {
        int64_t lo, hi;
        row_bounds(seg, r, &lo, &hi);
        if (lo >= hi) continue;
        int64_t xa = hi, xe = hi; /* the excluded part inside [lo, hi) */
        if (seg->xlo) {
            xa = attn_bs_clamp(seg->xlo[r], lo, hi);
            xe = attn_bs_clamp(seg->xhi[r], xa, hi);
        }
        run->scores += (double)(hi - lo - (xe - xa));
        if (run->bits && run->marked < run->S) {
            mark_keys(run, &seg->keys, lo, xa);
            mark_keys(run, &seg->keys, xe, hi);
        }
    }
}

void attn_bs_visit(attn_bs_run *run, const attn_bs_seg *seg)
{
    if (seg->nrows <= 0 || (seg->keys.n <= 0 && !seg->own)) return;
    if (run->counting) count_seg(run, seg);
    else compute_seg(run, seg), run->fresh = false;
}

/* ---- counting a shape ---- */

static attn_bs_rows task_rows(const attn_bs_pattern *pat, const attn_shape *s,
                              const attn_bs_plan *pl, int phase, int64_t index)
{
    return pat->rows ? pat->rows(s, pl, phase, index) : attn_bs_block_rows(s, pl->block, index);
}

/* Listed scores of head h; marks the keys they read in run->bits. */
static void count_head(const attn_bs_pattern *pat, const attn_shape *s, const attn_params *p,
                       const layout *L, int64_t h, int64_t *ints, attn_bs_run *run)
{
    for (int phase = 0; phase < L->pl.nphases; phase++)
        for (int64_t t = 0; t < L->pl.tasks[phase]; t++) {
            const attn_bs_task task = {.phase = phase,
                                       .h = h,
                                       .rows = task_rows(pat, s, &L->pl, phase, t),
                                       .ints = ints};
            if (task.rows.n > 0) pat->visit(s, p, &L->pl, &task, run);
        }
}

/* Listed scores over all heads (one batch), and keys read summed over kv heads (one batch;
 * NaN when the bit map cannot be allocated). */
static void count(const attn_bs_pattern *pat, const attn_shape *s, const attn_params *p,
                  double *scores, double *keys_read)
{
    const layout L = layout_of(NULL, pat, NULL, s, p); /* modifiers and lanes change no count */
    const size_t words = (size_t)(s->S + 63) / 64;
    int64_t *ints = malloc((size_t)attn_bs_max(L.pl.ints, 1) * sizeof *ints);
    uint64_t *bits = malloc(words * sizeof *bits);
    attn_bs_run run = {.counting = true, .bits = bits, .S = s->S};
    const int64_t group = s->H / s->Hkv;
    *keys_read = 0;
    for (int64_t g = 0; g < s->Hkv; g++) {
        if (bits) memset(bits, 0, words * sizeof *bits);
        run.marked = 0;
        for (int64_t h = g * group; h < (g + 1) * group; h++)
            if (ints) count_head(pat, s, p, &L, h, ints, &run);
        *keys_read += (double)run.marked;
    }
    *scores = ints ? run.scores : NAN;
    if (!bits) *keys_read = NAN;
    free(ints);
    free(bits);
}

double attn_bs_flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    double scores, keys;
    count(pattern_of(self), s, p, &scores, &keys);
    return 4.0 * (double)s->D * (double)s->B * scores;
}

double attn_bs_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    double scores, keys;
    count(pattern_of(self), s, p, &scores, &keys);
    const double kv = 2.0 * (double)s->D * (double)s->B * keys;
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + kv);
}

/* ---- the forward ---- */

/* (b, h) pairs whose q, k, v and out rows stay cached between two phases (about a quarter of a
 * 32 MiB L3: at n = 8192, D = 64 one head; strided 7 % faster there than phase by phase over all
 * heads); all of them for one-phase patterns (no barrier per chunk). */
static int64_t phase_chunk(const attn_shape *s, int nphases)
{
    const int64_t BH = s->B * s->H;
    if (nphases < 2) return BH;
    const double head_bytes = 2.0 * (double)(s->T + s->S) * (double)s->D * sizeof(float);
    return attn_bs_clamp((int64_t)((double)PHASE_CHUNK_BYTES / head_bytes), 1, BH);
}

/* The second phase in lanes (layout.lanes): blocks of that many residue classes mod class_step
 * per (b, h). */
static int64_t lane_tasks(const attn_shape *s, const layout *L)
{
    return (attn_bs_min(L->pl.class_step, s->T) + L->lanes - 1) / L->lanes;
}

/* Block x of the second phase in lanes of (b, h) = bh (attn_ks()->tile.attend_lanes): the
 * classes a0 + x of rows i ≡ a0 + x (mod l) side by side, their keys j ≡ p (mod l) (p the
 * position of row a0 + x) read in place, out (the first phase's acc, in place) normalised,
 * (m, l) in ml updated; lse (training) from them. */
static void lanes_task(const attn_shape *s, const layout *L, int64_t bh, int64_t block,
                       const float *q, const float *kg, const float *vg, float *out, float *ml,
                       float *lse, float *scratch)
{
    const int64_t T = s->T, S = s->S, D = s->D, l = L->pl.class_step, a0 = block * L->lanes;
    const int64_t lanes = attn_bs_min(L->lanes, attn_bs_min(l, T) - a0);
    int64_t nr[16], nk[16], kx[16], self0[16];
    for (int64_t x = 0; x < lanes; x++) {
        const int64_t a = a0 + x, p = attn_bs_pos(s, a), c = attn_bs_floormod(p, l);
        nr[x] = (T - a + l - 1) / l;
        nk[x] = c < S ? (S - c + l - 1) / l : 0;
        kx[x] = c * D;
        self0[x] = attn_bs_floordiv(p - c, l); /* key index of j = p */
    }
    const int64_t row0 = bh * T + a0;
    L->ks->tile.attend_lanes(out + row0 * D, q + row0 * D, D, l * D, ml + 2 * row0, 2 * l, kg, vg,
                             kx, l * D, nr, nk, self0, s->causal, lanes, D, (float)s->scale,
                             scratch);
    for (int64_t x = 0; lse && x < lanes; x++)
        for (int64_t r = 0; r < nr[x]; r++) {
            const float *mr = ml + 2 * (row0 + x + r * l);
            lse[row0 + x + r * l] = mr[1] > 0.0f ? mr[0] + logf(mr[1]) : INFINITY;
        }
}

/* One thread's side of the forward: the call's tensors and layout, the thread's parts of the
 * workspace, and what its tasks hand on (its tile; kept: ints hold its previous task's). */
typedef struct fwd_thread {
    const attn_bs_pattern *pat;
    const attn_shape *s;
    const attn_params *p;
    const layout *L;
    const float *q, *k, *v;
    float *out, *ml, *lse;
    bool stream, in_place;
    float *scratch, *mods, *kbuf, *vbuf, *qbuf, *span, *lane_scratch;
    int64_t *ints;
    attn_tile tile;
    bool kept;
} fwd_thread;

/* Task `index` of `phase` of (b, h) = bh: its rows' visits from the tile's start (first phase)
 * or from the saved (m, l) and out's rows (second), out written or the state saved after. */
static void fwd_task(fwd_thread *f, int phase, int64_t bh, int64_t index)
{
    const attn_shape *s = f->s;
    const layout *L = f->L;
    const int64_t H = s->H, T = s->T, S = s->S, D = s->D, group = s->H / s->Hkv;
    const int64_t b = bh / H, h = bh % H, g = h / group;
    const bool first = phase == 0, last = phase + 1 == L->pl.nphases;
    if (phase == 1 && L->lanes > 0) { /* the second phase in lanes */
        const int64_t kv = (b * s->Hkv + g) * S * D;
        lanes_task(s, L, bh, index, f->q, f->k + kv, f->v + kv, f->out, f->ml, f->lse,
                   f->lane_scratch);
        return;
    }
    const attn_bs_task t = {.phase = phase,
                            .h = h,
                            .rows = task_rows(f->pat, s, &L->pl, phase, index),
                            .ints = f->ints,
                            .kept = f->kept};
    if (t.rows.n <= 0) return;
    f->kept = true;
    const int64_t row0 = bh * T + t.rows.i0, ld = t.rows.step * D;
    float *o = f->out + row0 * D, *m = f->ml + 2 * row0;
    attn_tile *tile = &f->tile;

    const float *qt = f->q + row0 * D;
    int64_t ldq = ld;
    if (t.rows.step > 1 && f->qbuf) { /* the task's queries together, once */
        for (int64_t r = 0; r < t.rows.n; r++)
            memcpy(f->qbuf + r * D, qt + r * ld, (size_t)D * sizeof(float));
        qt = f->qbuf, ldq = D;
    }
    const float sc = (float)s->scale;
    /* plan.seeds: acc zeroed only if the first visit does not set it all */
    if (first && f->in_place)
        attn_tile_begin_over(tile, f->L->ks, f->scratch, t.rows.n, D, sc, o, ld);
    else if (first && L->pl.seeds)
        attn_tile_begin_unzeroed(tile, f->L->ks, f->scratch, t.rows.n, D, sc);
    else if (first) attn_tile_begin(tile, f->L->ks, f->scratch, t.rows.n, D, sc);
    else if (f->in_place)
        attn_tile_resume_at(tile, f->L->ks, f->scratch, t.rows.n, D, sc, o, ld, m, 2 * t.rows.step);
    else attn_tile_resume(tile, f->L->ks, f->scratch, t.rows.n, D, sc, o, ld, m, 2 * t.rows.step);
    attn_tile_mods(tile, &L->mod, f->mods);
    for (int64_t r = 0; tile->alibi && r < t.rows.n; r++)
        attn_tile_mod_row(tile, &L->mod, r, h, t.rows.i0 + r * t.rows.step);
    attn_bs_run run = {.tile = tile,
                       .q = qt,
                       .ldq = ldq,
                       .kg = f->k + (b * s->Hkv + g) * S * D,
                       .vg = f->v + (b * s->Hkv + g) * S * D,
                       .kbuf = f->kbuf,
                       .vbuf = f->vbuf,
                       .D = D,
                       .cols_max = L->pl.cols_max,
                       .gather_max = L->pl.gather_max,
                       .sub = L->pl.sub,
                       .fresh = first,
                       .seeds = L->pl.seeds,
                       .unzeroed = first && L->pl.seeds,
                       .end_out = last ? o : NULL,
                       .end_ld = ld,
                       .end_stream = f->stream,
                       .span = f->span,
                       .span_max = L->span_max};
    f->pat->visit(s, f->p, &L->pl, &t, &run);
    unzeroed_to_zero(&run); /* no visit: rows that saw nothing end at 0 */
    if (last && f->lse) attn_tile_lse(tile, 0, 1, f->lse + row0, t.rows.step);
    if (run.ended) return; /* out written by the visit */
    if (last && f->stream) attn_tile_end_stream(tile, o, ld);
    else if (last) attn_tile_end_strided(tile, o, ld);
    else attn_tile_save(tile, o, ld, m, 2 * t.rows.step);
}

/* Tasks of one (b, h) in a phase. */
static int64_t fwd_tasks_per_head(const attn_shape *s, const layout *L, int phase)
{
    return phase == 1 && L->lanes > 0 ? lane_tasks(s, L) : L->pl.tasks[phase];
}

attn_status attn_bs_forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                  const attn_params *p, const float *q, const float *k,
                                  const float *v, float *out, void *saved, void *workspace)
{
    const attn_bs_pattern *pat = pattern_of(self);
    const layout L = layout_of(x, pat, &self->params, s, p);
    const int64_t D = s->D, BH = s->B * s->H;
    float *ml = (float *)((char *)workspace + (size_t)x->threads * L.thread_bytes);
    int64_t most = 1; /* threads beyond the largest phase's task count would only wait */
    for (int phase = 0; phase < L.pl.nphases; phase++)
        most = attn_bs_max(most, BH * L.pl.tasks[phase]);
    const int threads = (int)attn_bs_min(x->threads, most);
    attn_blas_threads(1);
    /* q, k, v and out beyond STREAM_BYTES: out's rows would leave the caches before anyone reads
     * them, they are stored past the caches (no read for ownership; dilated n = 8192: 4 %) */
    const double tensors =
        2.0 * (double)(attn_q_elems(s) + s->B * s->Hkv * s->S * D) * sizeof(float);
    /* two phases with at least HEADS_PER_THREAD (b, h) per thread: a thread takes whole heads,
     * both phases of one before the next (no barrier between the phases, the head's rows cached
     * from one to the other) */
    const bool by_heads = L.pl.nphases > 1 && BH >= HEADS_PER_THREAD * threads;
    const fwd_thread shared = {
        .pat = pat,
        .s = s,
        .p = p,
        .L = &L,
        .q = q,
        .k = k,
        .v = v,
        .out = out,
        .ml = ml,
        .lse = saved,
        .stream = tensors > (double)STREAM_BYTES,
        /* two phases: the tile's acc in out's rows, in place (no copy to out and back between
         * the phases); one phase: in the tile (out stored once, at the end); not with seeds (a
         * fresh tile's own keys: attn_tile_attend_own writes the tile's rows) */
        .in_place = L.pl.nphases > 1 && !L.pl.seeds};

#pragma omp parallel num_threads(threads)
    {
        fwd_thread f = shared;
        char *mine = (char *)workspace + (size_t)omp_get_thread_num() * L.thread_bytes;
        f.scratch = (float *)mine;
        mine += align_up((size_t)L.tile_floats * sizeof(float));
        f.mods = (float *)mine;
        mine += align_up((size_t)L.mod_floats * sizeof(float));
        f.kbuf = L.pl.gathers ? (float *)mine : NULL;
        f.vbuf = L.pl.gathers ? f.kbuf + L.pl.gather_max * D : NULL;
        if (L.pl.gathers) mine += align_up(2 * (size_t)(L.pl.gather_max * D) * sizeof(float));
        f.qbuf = L.pl.gather_rows ? (float *)mine : NULL;
        if (L.pl.gather_rows) mine += align_up((size_t)(L.pl.rows_max * D) * sizeof(float));
        f.ints = (int64_t *)mine;
        mine += align_up((size_t)L.pl.ints * sizeof(int64_t));
        f.span = (float *)mine;
        f.lane_scratch = (float *)(mine + align_up(L.span_bytes));
        f.kept = false;

        if (by_heads) {
#pragma omp for schedule(dynamic, 1) nowait
            for (int64_t bh = 0; bh < BH; bh++)
                for (int phase = 0; phase < L.pl.nphases; phase++)
                    for (int64_t i = 0; i < fwd_tasks_per_head(s, &L, phase); i++)
                        fwd_task(&f, phase, bh, i);
            attn_tile_store_fence(L.ks);
        } else {
            /* two phases: both for a chunk of heads before the next, while their rows are cached */
            const int64_t chunk = phase_chunk(s, L.pl.nphases);
            for (int64_t c0 = 0; c0 < BH; c0 += chunk)
                for (int phase = 0; phase < L.pl.nphases; phase++) {
                    const int64_t per_head = fwd_tasks_per_head(s, &L, phase);
                    const int64_t tasks = attn_bs_min(chunk, BH - c0) * per_head;
                    /* plan.task_chunk tasks at a time, but at least 4 grabs per thread (balance) */
                    const int64_t task_chunk =
                        attn_bs_clamp(tasks / (4 * threads), 1, attn_bs_max(1, L.pl.task_chunk));
                    /* nowait: the thread's non-temporal stores of out fenced once, then the
                     * barrier */
#pragma omp for schedule(dynamic, task_chunk) nowait
                    for (int64_t i = 0; i < tasks; i++) {
                        const int64_t task = c0 * per_head + i;
                        fwd_task(&f, phase, task / per_head, task % per_head);
                    }
                    attn_tile_store_fence(L.ks); /* attend_own's out (random: 1 % faster than per
                                                task) */
#pragma omp barrier
                }
        }
    }
    return ATTN_OK;
}

attn_status attn_bs_forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            float *out, void *workspace)
{
    return attn_bs_forward_train(self, x, s, p, q, k, v, out, NULL, workspace);
}

size_t attn_bs_saved_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    return (size_t)(s->B * s->H * s->T) * sizeof(float);
}

/* ---- the backward ---- */

/* Two phases: Δ of one head's rows (T floats), set by the first phase for the second. */
static size_t delta_bytes(const layout *L, int64_t T)
{
    return L->pl.nphases > 1 ? align_up((size_t)T * sizeof(float)) : 0;
}

/* Per-thread bytes of the backward: the backward tile, modifiers, key and gradient gather
 * buffers, gathered query and dout rows, the pattern's ints, the packed span (kᵀ and vᵀ), Δ. */
static size_t backward_thread_bytes(const layout *L, int64_t D, int64_t T)
{
    const attn_bs_plan *pl = &L->pl;
    const int64_t tile = attn_btile_floats(pl->rows_max, pl->cols_max, D, L->mod.softcap > 0);
    const size_t gather = pl->gathers ? 2 * (size_t)(pl->gather_max * D) * sizeof(float) : 0;
    const size_t rows = pl->gather_rows ? (size_t)(pl->rows_max * D) * sizeof(float) : 0;
    return align_up((size_t)tile * sizeof(float)) +
           align_up((size_t)L->mod_floats * sizeof(float)) + 2 * align_up(gather) +
           2 * align_up(rows) + align_up((size_t)pl->ints * sizeof(int64_t)) +
           2 * align_up(L->span_bytes) + delta_bytes(L, T);
}

size_t attn_bs_backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                        const attn_shape *s, const attn_params *p)
{
    const layout L = layout_of(x, pattern_of(self), &self->params, s, p);
    return (size_t)x->threads * backward_thread_bytes(&L, s->D, s->T);
}

/* One thread's buffers (carved from its workspace) and the tensors of a backward. */
typedef struct bs_bwd {
    const attn_bs_pattern *pat;
    const attn_shape *s;
    const attn_params *p;
    const layout *L;
    attn_bwd_io io;
    float *scratch, *mods, *kbuf, *vbuf, *dkbuf, *dvbuf, *qbuf, *dobuf, *kspan, *vspan;
    float *delta; /* [T] Δ of the head's rows (two phases), else NULL */
    int64_t *ints;
} bs_bwd;

static void carve(bs_bwd *w, char *mine)
{
    const attn_bs_plan *pl = &w->L->pl;
    const int64_t D = w->s->D;
    w->scratch = (float *)mine;
    mine +=
        align_up((size_t)attn_btile_floats(pl->rows_max, pl->cols_max, D, w->L->mod.softcap > 0) *
                 sizeof(float));
    w->mods = (float *)mine;
    mine += align_up((size_t)w->L->mod_floats * sizeof(float));
    const size_t gather = 2 * (size_t)(pl->gather_max * D) * sizeof(float);
    w->kbuf = w->vbuf = w->dkbuf = w->dvbuf = NULL;
    if (pl->gathers) {
        w->kbuf = (float *)mine, w->vbuf = w->kbuf + pl->gather_max * D;
        mine += align_up(gather);
        w->dkbuf = (float *)mine, w->dvbuf = w->dkbuf + pl->gather_max * D;
        mine += align_up(gather);
    }
    w->qbuf = w->dobuf = NULL;
    if (pl->gather_rows) {
        w->qbuf = (float *)mine;
        mine += align_up((size_t)(pl->rows_max * D) * sizeof(float));
        w->dobuf = (float *)mine;
        mine += align_up((size_t)(pl->rows_max * D) * sizeof(float));
    }
    w->ints = (int64_t *)mine;
    mine += align_up((size_t)pl->ints * sizeof(int64_t));
    w->kspan = (float *)mine;
    w->vspan = (float *)(mine + align_up(w->L->span_bytes));
    mine += 2 * align_up(w->L->span_bytes);
    w->delta = delta_bytes(w->L, w->s->T) ? (float *)mine : NULL;
}

/* Task t of query head h (batch b): its visits' dk, dv into the KV head's gradients, its rows'
 * dq added to dq. */
static void backward_task(const bs_bwd *w, int64_t b, int64_t h, const attn_bs_task *t)
{
    const attn_shape *s = w->s;
    const int64_t D = s->D, n = t->rows.n, step = t->rows.step, g = h / (s->H / s->Hkv);
    const int64_t row0 = (b * s->H + h) * s->T + t->rows.i0, ld = step * D;
    const float *qt = w->io.q + row0 * D, *dt = w->io.dout + row0 * D;
    int64_t ldq = ld;
    if (step > 1 && w->qbuf) { /* the task's rows together, once */
        for (int64_t r = 0; r < n; r++) {
            memcpy(w->qbuf + r * D, qt + r * ld, (size_t)D * sizeof(float));
            memcpy(w->dobuf + r * D, dt + r * ld, (size_t)D * sizeof(float));
        }
        qt = w->qbuf, dt = w->dobuf, ldq = D;
    }
    /* the first phase's rows one after another: dq accumulated in place (no copy after) */
    const bool in_dq = t->phase == 0 && step == 1;
    attn_btile bt;
    if (in_dq)
        attn_btile_begin_at(&bt, w->L->ks, w->scratch, n, w->L->pl.cols_max, D, (float)s->scale,
                            w->L->mod.softcap > 0, w->io.dq + row0 * D);
    else
        attn_btile_begin(&bt, w->L->ks, w->scratch, n, w->L->pl.cols_max, D, (float)s->scale,
                         w->L->mod.softcap > 0);
    attn_tile_mods(&bt.t, &w->L->mod, w->mods);
    for (int64_t r = 0; r < n; r++) {
        const int64_t row = row0 + r * step;
        const int64_t i = t->rows.i0 + r * step;
        attn_tile_mod_row(&bt.t, &w->L->mod, r, h, i);
        if (!w->delta)
            attn_btile_row(&bt, r, w->io.lse[row], w->io.dout + row * D, w->io.out + row * D);
        else if (t->phase == 0) /* covers every row once: Δ kept for the second */
            w->delta[i] =
                attn_btile_row(&bt, r, w->io.lse[row], w->io.dout + row * D, w->io.out + row * D);
        else attn_btile_row_delta(&bt, r, w->io.lse[row], w->delta[i]);
    }
    const int64_t kv = (b * s->Hkv + g) * s->S * D;
    attn_bs_run run = {.tile = &bt.t,
                       .bt = &bt,
                       .q = qt,
                       .ldq = ldq,
                       .dout = dt,
                       .out = step > 1 && w->qbuf ? NULL : w->io.out + row0 * D,
                       .lddo = ldq,
                       .kg = w->io.k + kv,
                       .vg = w->io.v + kv,
                       .dkg = w->io.dk + kv,
                       .dvg = w->io.dv + kv,
                       .kbuf = w->kbuf,
                       .vbuf = w->vbuf,
                       .dkbuf = w->dkbuf,
                       .dvbuf = w->dvbuf,
                       .D = D,
                       .cols_max = w->L->pl.cols_max,
                       .gather_max = w->L->pl.gather_max,
                       .sub = attn_bs_max(w->L->pl.sub, BWD_BLOCKS_MIN * w->L->pl.kernel_rows),
                       .span = w->kspan,
                       .vspan = w->vspan,
                       .span_max = w->L->span_max};
    w->pat->visit(s, w->p, &w->L->pl, t, &run);
    for (int64_t r = 0; r < n && !in_dq; r++) { /* phase 0 covers every row once: it sets dq */
        float *dq = w->io.dq + (row0 + r * step) * D;
        const float *acc = bt.t.acc + r * D;
        if (t->phase == 0) memcpy(dq, acc, (size_t)D * sizeof(float));
        else
            for (int64_t d = 0; d < D; d++) dq[d] += acc[d];
    }
}

attn_status attn_bs_backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                             const attn_params *p, const float *q, const float *k, const float *v,
                             const float *out, const void *saved, const float *dout, float *dq,
                             float *dk, float *dv, void *workspace)
{
    const attn_bs_pattern *pat = pattern_of(self);
    const layout L = layout_of(x, pat, &self->params, s, p);
    const size_t thread_bytes = backward_thread_bytes(&L, s->D, s->T);
    const int64_t H = s->H, S = s->S, D = s->D, group = H / s->Hkv;
    const int64_t groups = s->B * s->Hkv;
    attn_blas_threads(1);

#pragma omp parallel num_threads((int)attn_bs_min(x->threads, groups))
    {
        bs_bwd w = {.pat = pat, .s = s, .p = p, .L = &L};
        w.io = (attn_bwd_io){q, k, v, out, saved, dout, dq, dk, dv};
        carve(&w, (char *)workspace + (size_t)omp_get_thread_num() * thread_bytes);

        /* a task owns one (b, kv head): its dk, dv and the dq rows of its query heads (set by
         * the first phase, which visits each row once) */
#pragma omp for schedule(dynamic, 1)
        for (int64_t bg = 0; bg < groups; bg++) {
            const int64_t b = bg / s->Hkv, g = bg % s->Hkv;
            memset(dk + bg * S * D, 0, (size_t)(S * D) * sizeof(float));
            memset(dv + bg * S * D, 0, (size_t)(S * D) * sizeof(float));
            for (int64_t h = g * group; h < (g + 1) * group; h++)
                for (int phase = 0; phase < L.pl.nphases; phase++)
                    for (int64_t index = 0; index < L.pl.tasks[phase]; index++) {
                        const attn_bs_task t = {.phase = phase,
                                                .h = h,
                                                .rows = task_rows(pat, s, &L.pl, phase, index),
                                                .ints = w.ints};
                        if (t.rows.n > 0) backward_task(&w, b, h, &t);
                    }
        }
    }
    return ATTN_OK;
}

const attn_train_ops attn_bs_train = {
    .saved_bytes = attn_bs_saved_bytes,
    .forward = attn_bs_forward_train,
    .workspace_bytes = attn_bs_backward_workspace_bytes,
    .backward = attn_bs_backward,
};
