/*
 * document — document masking of packed sequences (FlexAttention's document mask, FlashAttention's
 * variable-length batches): the sequence is documents of L positions each, packed end to end,
 * and a query sees only the keys of its own document. Definition: .definition below.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·L·D)   flops 4·D per allowed score, counted from the layout (exact)
 *   layout (block-sparse engine): blocks of 256 queries; per block one segment per document its
 *           rows lie in (one when L is a multiple of 256): those rows against the document's
 *           keys, all of them (dense visits) or, causal, up to each row (per-row bounds)
 *   workspace: threads × (256×256 scores + 256×D acc + 2·256 floats + 256 int64), any n
 *   threads: OpenMP over (b, h, query block), dynamic by 8 blocks; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_DOC };
enum { BLOCK = 256 };
/* Blocks a thread takes at once: neighbouring blocks, whose rows the hardware then streams on. */
enum { TASK_CHUNK = 8 };

static const attn_param_def params[] = {
    [P_DOC] = {"doc", "L: positions per document (the last one may be shorter)", 1024, 1,
               1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* The document of position p: floor(p / L); positions before key 0 (T > S) are in the first. */
static int64_t doc_of(int64_t p, int64_t L) { return p < 0 ? 0 : p / L; }

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    (void)p;
    attn_bs_plan_blocks(s, BLOCK, pl);
    pl->ints = pl->rows_max;
    pl->task_chunk = TASK_CHUNK;
}

/* One segment per document of the task's rows: the rows of document d against its keys
 * [d·L, min(S, (d + 1)·L)), causal: up to each row's position. */
static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)pl;
    const int64_t L = (int64_t)p->v[P_DOC], n = t->rows.n;
    if (n == 0) return;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    int64_t *hi = t->ints;
    for (int64_t d = doc_of(p0, L), last = doc_of(p0 + n - 1, L); d <= last; d++) {
        const int64_t j0 = d * L, j1 = attn_bs_min(s->S, j0 + L);
        /* rows of document d: positions in [j0, j0 + L), or below 0 for the first */
        const int64_t r0 = d == 0 ? 0 : attn_bs_clamp(j0 - p0, 0, n);
        const int64_t r1 = attn_bs_clamp(j0 + L - p0, 0, n);
        if (r1 <= r0 || j1 <= j0) continue;
        if (s->causal)
            for (int64_t r = r0; r < r1; r++) hi[r] = p0 + r + 1 - j0;
        const attn_bs_seg seg = {.keys = attn_bs_range(j0, j1),
                                 .r0 = r0,
                                 .nrows = r1 - r0,
                                 .hi = s->causal ? hi : NULL};
        attn_bs_visit(run, &seg);
    }
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t L = (int64_t)p->v[P_DOC];
    return doc_of(attn_bs_pos(s, i), L) == j / L && attn_causal_allows(s, i, j);
}

const attn_ops attn_kind_document = {
    .name = "document",
    .summary = "document masking: packed documents of L positions, each attends within itself",
    .definition =
        "the positions are packed documents of L each: document m holds positions\n"
        "[m*L, (m+1)*L) (the last one up to S - 1 may be shorter). Query i at position\n"
        "p = i + S - T sees key j iff j is in p's document: floor(j/L) = floor(p/L), with\n"
        "positions p < 0 (T > S) in document 0; causal: also j <= p. Block-diagonal\n"
        "(FlexAttention's document mask; FlashAttention's variable-length batch of equal\n"
        "lengths), bidirectional within each document without the causal mask. Softmax over\n"
        "those keys, scale 1/sqrt(D). Default L = 1024 whatever n: documents of a typical\n"
        "pretraining length, more of them packed into a longer context (n <= L: one\n"
        "document, full attention). L >= S equals full.",
    .params = ATTN_PARAM_TABLE("document", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
    .on_request =
        "a mask whose cost per score is the block-sparse engine's, which the default sweep measures",
};
