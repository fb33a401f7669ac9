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
 *     keys) fused, a register block of rows at a time (the set's tile.attend, tile_rows: the
 *     scores stay in L1, no call per row), by groups of FUSED_BLOCKS blocks (upper bounds only:
 *     the rows short of a whole block in a group of their own, first) or the band's sub;
 *   then normalise into out (or save the state for the next phase: two phases accumulate in
 *   out's rows in place, only (m, l) saved); out by non-temporal stores when q, k, v and out
 *   exceed STREAM_BYTES (attn_tile_end_stream); a last segment visited fused with its own keys
 *   over all the task's rows writes out itself (seg.last).
 *   two phases with plan.class_step (strided), the forward without score modifiers, at most
 *     LANE_KEYS_MAX keys per class: the second phase as blocks of VW residue classes side by
 *     side, rows in lanes (the set's tile.attend_lanes, lanes_task: no rows() tasks there; out
 *     normalised by the kernel).
 *   forward spans: the keys [u0, u1) of a segment that several groups visit (up to SPAN_MAX,
 *     read in place: contiguous or every step-th key) are packed (kᵀ, the set's tile.pack_kt)
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
 *     both phases of one before the next, no barrier between the phases (a head's rows stay
 *     cached from one phase to the other); fewer: by
 *     chunks of (b, h) (phase_chunk: both phases of a chunk while its rows are cached), every
 *     thread on each phase's tasks.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocksparse_engine.h"

/* ---- the layout of a shape ---- */

layout attn_bs_layout_of(const attn_exec *x, const attn_bs_pattern *pat, const attn_param_table *t,
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
    L.thread_bytes =
        attn_bs_align_up((size_t)L.tile_floats * sizeof(float)) +
        attn_bs_align_up((size_t)L.mod_floats * sizeof(float)) + attn_bs_align_up(gather) +
        attn_bs_align_up(rows) + attn_bs_align_up((size_t)L.pl.ints * sizeof(int64_t)) +
        attn_bs_align_up(L.span_bytes) + attn_bs_align_up((size_t)L.lane_floats * sizeof(float));
    L.ml_bytes = L.pl.nphases > 1 ? 2 * (size_t)(s->B * s->H * s->T) * sizeof(float) : 0;
    return L;
}

size_t attn_bs_workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                               const attn_params *p)
{
    const layout L = attn_bs_layout_of(x, attn_bs_pattern_of(self), &self->params, s, p);
    return (size_t)x->threads * L.thread_bytes + L.ml_bytes;
}

/* ---- counting a shape ---- */

attn_bs_rows attn_bs_task_rows(const attn_bs_pattern *pat, const attn_shape *s,
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
                                       .rows = attn_bs_task_rows(pat, s, &L->pl, phase, t),
                                       .ints = ints};
            run->rows = task.rows;
            if (task.rows.n > 0) pat->visit(s, p, &L->pl, &task, run);
        }
}

/* Listed scores over all heads (one batch), and keys read summed over kv heads (one batch;
 * NaN when the bit map cannot be allocated). */
static void count(const attn_bs_pattern *pat, const attn_shape *s, const attn_params *p,
                  double *scores, double *keys_read)
{
    const layout L =
        attn_bs_layout_of(NULL, pat, NULL, s, p); /* modifiers and lanes change no count */
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
    count(attn_bs_pattern_of(self), s, p, &scores, &keys);
    return 4.0 * (double)s->D * (double)s->B * scores;
}

double attn_bs_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    double scores, keys;
    count(attn_bs_pattern_of(self), s, p, &scores, &keys);
    const double kv = 2.0 * (double)s->D * (double)s->B * keys;
    return sizeof(float) * (2.0 * (double)attn_q_elems(s) + kv);
}

attn_status attn_bs_cells(const attn_ops *self, const attn_shape *s, const attn_params *p,
                          int64_t h, uint8_t *cells)
{
    const attn_bs_pattern *pat = attn_bs_pattern_of(self);
    const layout L = attn_bs_layout_of(NULL, pat, NULL, s, p);
    int64_t *ints = malloc((size_t)attn_bs_max(L.pl.ints, 1) * sizeof *ints);
    if (!ints) return ATTN_EFAIL;
    attn_bs_run run = {.counting = true, .cells = cells, .S = s->S};
    count_head(pat, s, p, &L, h, ints, &run);
    free(ints);
    return ATTN_OK;
}

/* ---- the forward ---- */

/* (b, h) pairs whose q, k, v and out rows stay cached between two phases (about a quarter of a
 * 32 MiB L3: at n = 8192, D = 64 one head); all of them for one-phase patterns (no barrier per
 * chunk). */
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

/* Block x of the second phase in lanes of (b, h) = bh (the set's tile.attend_lanes): the
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
                            .rows = attn_bs_task_rows(f->pat, s, &L->pl, phase, index),
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
    attn_bs_unzeroed_to_zero(&run); /* no visit: rows that saw nothing end at 0 */
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

/* A thread's buffers, carved from its part of the workspace (laid out as layout.thread_bytes). */
static void fwd_carve(fwd_thread *f, char *mine)
{
    const layout *L = f->L;
    const int64_t D = f->s->D;
    f->scratch = (float *)mine;
    mine += attn_bs_align_up((size_t)L->tile_floats * sizeof(float));
    f->mods = (float *)mine;
    mine += attn_bs_align_up((size_t)L->mod_floats * sizeof(float));
    f->kbuf = L->pl.gathers ? (float *)mine : NULL;
    f->vbuf = L->pl.gathers ? f->kbuf + L->pl.gather_max * D : NULL;
    if (L->pl.gathers) mine += attn_bs_align_up(2 * (size_t)(L->pl.gather_max * D) * sizeof(float));
    f->qbuf = L->pl.gather_rows ? (float *)mine : NULL;
    if (L->pl.gather_rows) mine += attn_bs_align_up((size_t)(L->pl.rows_max * D) * sizeof(float));
    f->ints = (int64_t *)mine;
    mine += attn_bs_align_up((size_t)L->pl.ints * sizeof(int64_t));
    f->span = (float *)mine;
    f->lane_scratch = (float *)(mine + attn_bs_align_up(L->span_bytes));
    f->kept = false;
}

attn_status attn_bs_forward_train(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                                  const attn_params *p, const float *q, const float *k,
                                  const float *v, float *out, void *saved, void *workspace)
{
    const attn_bs_pattern *pat = attn_bs_pattern_of(self);
    const layout L = attn_bs_layout_of(x, pat, &self->params, s, p);
    const int64_t D = s->D, BH = s->B * s->H;
    float *ml = (float *)((char *)workspace + (size_t)x->threads * L.thread_bytes);
    int64_t most = 1; /* threads beyond the largest phase's task count would only wait */
    for (int phase = 0; phase < L.pl.nphases; phase++)
        most = attn_bs_max(most, BH * L.pl.tasks[phase]);
    const int threads = (int)attn_bs_min(x->threads, most);
    attn_blas_threads(1);
    /* q, k, v and out beyond STREAM_BYTES: out's rows would leave the caches before anyone reads
     * them, they are stored past the caches (no read for ownership) */
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
        fwd_carve(&f, (char *)workspace + (size_t)omp_get_thread_num() * L.thread_bytes);

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
                    attn_tile_store_fence(L.ks); /* attend_own's out: once per chunk, not per
                                                task */
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
