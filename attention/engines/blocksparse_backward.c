/*
 * blocksparse_backward.c — the block-sparse engine's backward (the train table: blocksparse.h):
 * the forward's visits again, each with the backward tile (attn_btile), parallel over
 * (b, kv head). The contract of the whole engine: blocksparse.c.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocksparse_engine.h"

/* ---- the backward ---- */

/* Two phases: Δ of one head's rows (T floats), set by the first phase for the second. */
static size_t delta_bytes(const layout *L, int64_t T)
{
    return L->pl.nphases > 1 ? attn_bs_align_up((size_t)T * sizeof(float)) : 0;
}

/* Per-thread bytes of the backward: the backward tile, modifiers, key and gradient gather
 * buffers, gathered query and dout rows, the pattern's ints, the packed span (kᵀ and vᵀ), Δ. */
static size_t backward_thread_bytes(const layout *L, int64_t D, int64_t T)
{
    const attn_bs_plan *pl = &L->pl;
    const int64_t tile = attn_btile_floats(pl->rows_max, pl->cols_max, D, L->mod.softcap > 0);
    const size_t gather = pl->gathers ? 2 * (size_t)(pl->gather_max * D) * sizeof(float) : 0;
    const size_t rows = pl->gather_rows ? (size_t)(pl->rows_max * D) * sizeof(float) : 0;
    return attn_bs_align_up((size_t)tile * sizeof(float)) +
           attn_bs_align_up((size_t)L->mod_floats * sizeof(float)) + 2 * attn_bs_align_up(gather) +
           2 * attn_bs_align_up(rows) + attn_bs_align_up((size_t)pl->ints * sizeof(int64_t)) +
           2 * attn_bs_align_up(L->span_bytes) + delta_bytes(L, T);
}

size_t attn_bs_backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                        const attn_shape *s, const attn_params *p)
{
    const layout L = attn_bs_layout_of(x, attn_bs_pattern_of(self), &self->params, s, p);
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
    mine += attn_bs_align_up(
        (size_t)attn_btile_floats(pl->rows_max, pl->cols_max, D, w->L->mod.softcap > 0) *
        sizeof(float));
    w->mods = (float *)mine;
    mine += attn_bs_align_up((size_t)w->L->mod_floats * sizeof(float));
    const size_t gather = 2 * (size_t)(pl->gather_max * D) * sizeof(float);
    w->kbuf = w->vbuf = w->dkbuf = w->dvbuf = NULL;
    if (pl->gathers) {
        w->kbuf = (float *)mine, w->vbuf = w->kbuf + pl->gather_max * D;
        mine += attn_bs_align_up(gather);
        w->dkbuf = (float *)mine, w->dvbuf = w->dkbuf + pl->gather_max * D;
        mine += attn_bs_align_up(gather);
    }
    w->qbuf = w->dobuf = NULL;
    if (pl->gather_rows) {
        w->qbuf = (float *)mine;
        mine += attn_bs_align_up((size_t)(pl->rows_max * D) * sizeof(float));
        w->dobuf = (float *)mine;
        mine += attn_bs_align_up((size_t)(pl->rows_max * D) * sizeof(float));
    }
    w->ints = (int64_t *)mine;
    mine += attn_bs_align_up((size_t)pl->ints * sizeof(int64_t));
    w->kspan = (float *)mine;
    w->vspan = (float *)(mine + attn_bs_align_up(w->L->span_bytes));
    mine += 2 * attn_bs_align_up(w->L->span_bytes);
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
    const attn_bs_pattern *pat = attn_bs_pattern_of(self);
    const layout L = attn_bs_layout_of(x, pat, &self->params, s, p);
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
                                                .rows =
                                                    attn_bs_task_rows(pat, s, &L.pl, phase, index),
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
