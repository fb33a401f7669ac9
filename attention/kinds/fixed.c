/*
 * fixed — the fixed pattern of the Sparse Transformer (Child et al. 2019), both factorised
 * components (own block of l, the last c' = min(c, l) keys of every block) united within every
 * head. Definition: .definition below. The summary set is the paper's
 * A(2) = {j : j mod l ∈ {t, ..., l}}, t = l - c, read with j mod l in [0, l): c summary keys per
 * block. Each allowed key counts once: the summary keys of the query's own block belong to the
 * first component.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   time O(B·H·T·(l + c·S/l)·D), O(n^1.5) at l = sqrt(n); flops 4·D per allowed score (exact)
 *   layout (block-sparse engine): blocks of 512 queries; each fixed block the rows touch against
 *           its keys; all rows against the summary keys, gathered (runs of c' keys every l) and
 *           packed once per task, visited by groups of 64 rows, each row without its own block's
 *           summary (causal: only earlier blocks)
 *   workspace: threads × (512×256 scores + 512×D acc + 2·512 floats + 3·512 int64 [+ when
 *              c' < l: 2·max(256, min(c'·S/l, 4096))·D gathered keys and values]; rows
 *              min(512, T))
 *   threads: OpenMP over (b, h, query block), dynamic; one thread per tile, no BLAS.
 */
#include "blocksparse.h"

enum { P_STRIDE, P_SUMMARY };
/* Queries per task: the summary keys are gathered and packed once per task, for all its rows. */
enum { BLOCK = 512, GATHER_MAX = 4096 };
enum { V_STRIDE, V_SUMMARY }; /* plan.v: stride and c' used */

static const attn_param_def params[] = {
    [P_STRIDE] = {"stride", "l: block length (0: ceil(sqrt(S)))", 0, 0, 1000000000, true},
    [P_SUMMARY] = {"summary", "c: the last c positions of every block are seen by all", 8, 1,
                   1000000000, true},
    ATTN_SCORE_MOD_PARAMS,
};

/* The summary keys: runs of c' keys every l, the last block possibly partial. */
static attn_bs_keys summary_keys_of(const attn_shape *s, const attn_bs_plan *pl)
{
    const int64_t l = pl->v[V_STRIDE], c = pl->v[V_SUMMARY];
    return (attn_bs_keys){.j0 = l - c,
                          .run = c,
                          .step = l,
                          .n = s->S / l * c + attn_bs_max(0, s->S % l - (l - c))};
}

static void plan(const attn_shape *s, const attn_params *p, attn_bs_plan *pl)
{
    attn_bs_plan_blocks(s, BLOCK, pl);
    pl->v[V_STRIDE] = attn_bs_stride(s, p->v[P_STRIDE]);
    pl->v[V_SUMMARY] = attn_bs_min((int64_t)p->v[P_SUMMARY], pl->v[V_STRIDE]);
    pl->ints = 3 * pl->rows_max;
    pl->gathers = pl->v[V_SUMMARY] < pl->v[V_STRIDE]; /* runs of c' keys every l */
    pl->gather_max = attn_bs_min(summary_keys_of(s, pl).n, GATHER_MAX); /* copied once per task */
}

static void visit(const attn_shape *s, const attn_params *p, const attn_bs_plan *pl,
                  const attn_bs_task *t, attn_bs_run *run)
{
    (void)p;
    const int64_t l = pl->v[V_STRIDE], c = pl->v[V_SUMMARY], n = t->rows.n, S = s->S;
    const int64_t p0 = attn_bs_pos(s, t->rows.i0);
    int64_t *hi = t->ints, *a = hi + n, *e = a + n;

    /* own block: rows [ra, rb) of fixed block fb against its keys [fb·l, fb·l + l) */
    for (int64_t fb = attn_bs_max(0, attn_bs_floordiv(p0, l));
         fb <= attn_bs_floordiv(p0 + n - 1, l) && fb * l < S; fb++) {
        const int64_t ra = attn_bs_clamp(fb * l - p0, 0, n);
        const int64_t rb = attn_bs_clamp(fb * l + l - p0, 0, n);
        for (int64_t r = ra; r < rb; r++) hi[r] = p0 + r + 1 - fb * l; /* causal: j <= p */
        const attn_bs_seg own = {.keys = attn_bs_range(fb * l, attn_bs_min(fb * l + l, S)),
                                 .r0 = ra,
                                 .nrows = rb - ra,
                                 .hi = s->causal ? hi : NULL};
        attn_bs_visit(run, &own);
    }

    /* summary keys of the other blocks: key x is block x / c, offset l - c + x % c */
    const attn_bs_keys summary = summary_keys_of(s, pl);
    for (int64_t r = 0; r < n; r++) {
        const int64_t own = attn_bs_floordiv(p0 + r, l) * c; /* first summary key of its block */
        a[r] = own, e[r] = own + c;
    }
    attn_bs_seg seg = {.keys = summary, .r0 = 0, .nrows = n};
    if (s->causal) seg.hi = a; /* earlier blocks only */
    else seg.xlo = a, seg.xhi = e;
    attn_bs_visit(run, &seg);
}

static const attn_bs_pattern pattern = {.plan = plan, .visit = visit};

static void resolve(const attn_ops *self, const attn_shape *s, attn_params *p)
{
    p->v[P_STRIDE] = (double)attn_bs_stride(s, p->v[P_STRIDE]);
}

static bool allows(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j)
{
    (void)h;
    const int64_t l = attn_bs_stride(s, p->v[P_STRIDE]);
    const int64_t c = attn_bs_min((int64_t)p->v[P_SUMMARY], l), pos = attn_bs_pos(s, i);
    if (!attn_causal_allows(s, i, j)) return false;
    return attn_bs_floordiv(j, l) == attn_bs_floordiv(pos, l) || j % l >= l - c;
}

const attn_ops attn_kind_fixed = {
    .name = "fixed",
    .summary = "Sparse Transformer fixed: own block of l plus the last c keys of every block",
    .definition = "stride l (0: ceil(sqrt(S))), summary c' = min(c, l). Query i at position\n"
                  "p = i + S - T sees key j iff floor(j/l) == floor(p/l) (own block) or\n"
                  "j mod l >= l - c' (summary keys), and j <= p when causal: the union of the two\n"
                  "components of Child et al. (2019) in every head. Softmax, scale 1/sqrt(D).",
    .params = ATTN_PARAM_TABLE("fixed", params),
    .check = attn_bs_accept,
    ATTN_BS_SLOTS(pattern),
    .allows = allows,
    .resolve = resolve,
};
