/*
 * strided — the strided pattern of the Sparse Transformer (Child et al. 2019), both factorised
 * components (local l keys, every l-th key) united within every head. Definition: .definition
 * below. The paper's local set {t, ..., i}, t = max(0, i - l), has one key more (i - l), which
 * the strided set contains anyway: the union is the same (OpenAI's code uses l local keys, as
 * here). Each allowed key counts once: the two components share only j = p, given to the local
 * one.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·(l + S/l)·D), O(n^1.5) at l = sqrt(n); flops 4·D per allowed score (exact)
 *   layout (block-sparse engine, two phases):
 *     1. local: blocks of 256 queries against their band (as the window kind: groups of 32-64
 *        rows, each group's keys in one masked visit);
 *     2. strided: the queries of one residue class p ≡ c (mod l) against the keys j ≡ c,
 *        continuing each row's online softmax from phase 1 (exact merge of (max, sum, acc)).
 *        The forward without score modifiers, up to 512 keys per class: as many classes as the
 *        kernel set has lanes side by side (VW: 16 avx512, 8 avx2, 1 portable), rows in lanes
 *        (blocksparse.h plan.class_step, the set's tile.attend_lanes: each class's keys
 *        transposed once, scores and softmax lane by lane, p·v per class from its v rows in
 *        place, out normalised there). Otherwise (and the backward, and the counts): one dense
 *        tile per class (its queries read in place, l·D apart; its keys and values read with a
 *        leading dimension of l·D, or, causal, copied together once per task when at most 4096).
 *   workspace: threads × (256×c scores (c: a local group's keys rounded up to 64, in [256, 512]) +
 * 256×D acc + 2·max(256, min(ceil(S/l), 4096))·D keys and values + 2·256 floats + 2·256 int64
 * [+ VW·((ceil(S/l) + 6)·(D + 1) + 6·ceil(S/l)) floats in lanes])
 *              + 2·B·H·T floats (each row's running max and sum between the phases)
 *   threads: OpenMP over (b, h, task) in each phase, dynamic; one thread per tile, no BLAS.
 */
#include "blocksparse.h"
#include "kernels.h"

enum { P_STRIDE };
enum { BLOCK = 256, CLASS_ROWS = 256, GATHER_MAX = 4096 };
enum { V_STRIDE }; /* plan.v: stride used */

static const attn_param_def params[] = {
    [P_STRIDE] = {"stride", "l: local keys |p - j| < l plus every l-th key (0: ceil(sqrt(S)))", 0,
                  0, 1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* The stride of the layout: beyond max(T, S) every stride gives the same pattern (all local). */
static int64_t layout_stride(const attn_shape *s, const attn_params *p)
{
    return attn_bs_min(attn_bs_stride(s, p->v[P_STRIDE]), attn_bs_max(s->T, s->S));
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    const int64_t l = layout_stride(s, p);
    pl->nphases = 2;
    pl->tasks[0] = attn_bs_block_tasks(s, BLOCK);
    pl->v[V_STRIDE] = l;
    pl->tasks[1] = attn_bs_class_tasks(s, l, CLASS_ROWS);
    pl->rows_max = attn_bs_min(attn_bs_max(BLOCK, CLASS_ROWS), s->T);
    pl->ints = 2 * pl->rows_max;
    attn_bs_plan_band(s, l, pl);
    /* no gather_rows: a class's queries (and in the backward its output gradients) read in
     * place, l·D apart (the tile's row stride), rather than copied together per task */
    pl->gathers = true; /* a class's keys are copied together once per task (if few enough) */
    pl->gather_max = attn_bs_min((s->S + l - 1) / l, GATHER_MAX);
    pl->class_step = l; /* the forward's phase 2: classes side by side, rows in lanes */
}

/* Phase 0: blocks of positions. Phase 1: rows a, a + l, a + 2l, ... (one residue class of
 * positions), in chunks of CLASS_ROWS. */
static attn_bs_rows rows(const attn_shape *s, const attn_bs_plan *pl, int phase, int64_t index)
{
    if (phase == 0) return attn_bs_block_rows(s, BLOCK, index);
    return attn_bs_class_rows(s, pl->v[V_STRIDE], CLASS_ROWS, index);
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)p;
    const int64_t l = pl->v[V_STRIDE], n = t->rows.n;
    if (t->phase == 0) { /* local: |p - j| < l, j <= p when causal */
        attn_bs_band(s, t, 0, n, l, 0, t->ints, run);
        return;
    }
    /* strided: keys j = c, c + l, ... of the class c = p mod l, without j = p (local has it) */
    const int64_t p0 = attn_bs_pos(s, t->rows.i0), c = attn_bs_floormod(p0, l);
    int64_t *a = t->ints, *e = a + n;
    attn_bs_seg seg = {
        .keys = {.j0 = c, .n = c < s->S ? (s->S - c + l - 1) / l : 0, .run = 1, .step = l},
        .r0 = 0,
        .nrows = n};
    const int64_t self0 = attn_bs_floordiv(p0 - c, l); /* key index of j = p0 */
    for (int64_t r = 0; r < n; r++) {
        const int64_t self = self0 + r;     /* key index of j = p0 + r·l */
        a[r] = s->causal ? 0 : self;        /* causal: [0, self) */
        e[r] = s->causal ? self : self + 1; /* else all but self */
    }
    if (s->causal) seg.hi = e;
    else seg.xlo = a, seg.xhi = e;
    attn_bs_visit(run, &seg);
}

static const attn_bs_pattern pattern = {.plan = plan, .rows = rows, .visit = visit};

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    const int64_t l = layout_stride(s, p);
    if (!attn_blas_int_ok(l * s->D)) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "strided: stride %lld x head_dim %lld must stay below 2^31 (it is a BLAS "
                         "leading dimension): use a smaller stride",
                         (long long)l, (long long)s->D);
    }
    return ATTN_OK;
}

static void resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    p->v[P_STRIDE] = (double)attn_bs_stride(s, p->v[P_STRIDE]);
}

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t l = attn_bs_stride(s, p->v[P_STRIDE]), d = attn_bs_pos(s, i) - j;
    if (!attn_causal_allows(s, i, j)) return false;
    return (d > -l && d < l) || d % l == 0;
}

const attn_ops attn_kind_strided = {
    .name = "strided",
    .summary = "Sparse Transformer strided: local l keys plus every l-th key (l = sqrt(S))",
    .definition = "stride l (0: ceil(sqrt(S))). Query i at position p = i + S - T sees key j iff\n"
                  "|p - j| < l (local; causal: p - l < j <= p) or (p - j) mod l == 0 (strided),\n"
                  "and j <= p when causal: the union of the two components of Child et al.\n"
                  "(2019) in every head. Softmax over those keys, scale 1/sqrt(D).",
    .params = ATTN_PARAM_TABLE("strided", params),
    .check = check,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
    .resolve = resolve,
};
