/*
 * blocksparse_engine.h — what the block-sparse engine's files share (internal to
 * attention/engines/blocksparse*.c): the engine's sizes, the state of a visit (attn_bs_run), the
 * layout of a shape. The engine itself: blocksparse.c (its contract at the top).
 */
#ifndef ATTN_BLOCKSPARSE_ENGINE_H
#define ATTN_BLOCKSPARSE_ENGINE_H

#include "blocksparse.h"
#include "kernel_set.h"
#include "kernels.h"

enum { COLS_DEFAULT = 256, SUB_DEFAULT = 64, ALIGN = 64, BAND_COLS_MAX = 512 };
/* Rows per group of a band: BAND_BLOCKS register blocks of the tile micro-kernels (the set's
 * tile_rows: 30 rows on avx2, avx512), small so that a group's triangle of unseen scores stays
 * small beside its seen ones; twice as many from width 1024 on (the triangle matters less), 2
 * blocks below width BAND_NARROW (narrow bands: strided's local band, dilated). */
enum { BAND_BLOCKS = 5, BAND_NARROW = 192 };
/* Register blocks per group of the forward's fused visits (visit_fused: a block at a time, the
 * scores in L1): small groups compute little beyond their rows' upper bounds; one block would
 * pay the per-call cost twice as often. */
enum { FUSED_BLOCKS = 2 };
/* Keys of a visit with per-row lower bounds (a band's group) fused at most: narrow bands
 * (strided's local phase), not window's 256 + 29 (wider visits gain from the separate GEMMs). */
enum { FUSED_BAND_COLS = 192 };
/* Keys every row of a segment sees, at least, for a visit of their own (fewer: each group visits
 * them with the rest of its keys; a band's rows share one key: 3 visits per group otherwise). */
enum { COMMON_MIN = 64 };
enum { PHASE_CHUNK_BYTES = 8 << 20 }; /* see phase_chunk */
/* (b, h) per thread from which a two-phase forward gives each thread whole heads (both phases of
 * one, then the next; no barrier between the phases). */
enum { HEADS_PER_THREAD = 4 };
/* Register blocks per group in the backward at least: its tile runs 5 products per visit, whose
 * fixed cost outweighs the masked scores of groups of about 32 rows rather than 16; 5 blocks: 30
 * rows on avx2, avx512. */
enum { BWD_BLOCKS_MIN = 5 };
/* Keys of a bounded segment packed (kᵀ) once for all its row groups, at most this many. */
enum { SPAN_MAX = 1024 };
/* Floats of the widest vector of any set (kernel_set.h): the scores micro-kernel reads a visit's
 * columns rounded up to it (tile_body.h), so a span's rows need that much slack, not a whole
 * column block (whose padding the packing would have to zero in every row). */
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
    /* drawing the cells (attn_bs_cells): the current task's rows, and one count per score
     * (i·S + j) listed, saturating at 255; NULL: not drawing */
    uint8_t *cells;
    attn_bs_rows rows;
};

static inline size_t attn_bs_align_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* The layout of a shape for a pattern: the plan, the modifiers, per-thread scratch. */
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

/* The layout for shape s, parameters p, the kind's table t (its score modifiers; NULL: none) and
 * context x (NULL: counting, which lists the same scores whatever the row groups). */
layout attn_bs_layout_of(const attn_exec *x, const attn_bs_pattern *pat, const attn_param_table *t,
                         const attn_shape *s, const attn_params *p);
/* The kind's pattern (its engine data). */
static inline const attn_bs_pattern *attn_bs_pattern_of(const attn_ops *self)
{
    return (const attn_bs_pattern *)self->engine_data;
}
/* Rows of task `index` of `phase`: the pattern's rows(), or position blocks of plan.block. */
attn_bs_rows attn_bs_task_rows(const attn_bs_pattern *pat, const attn_shape *s,
                               const attn_bs_plan *pl, int phase, int64_t index);
/* A fresh tile's acc zeroed if a seeded visit left it unzeroed (blocksparse_visit.c). */
void attn_bs_unzeroed_to_zero(attn_bs_run *run);

#endif
