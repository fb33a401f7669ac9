/*
 * reformer — LSH attention (Kitaev et al. 2020, "Reformer: The Efficient Transformer", sec. 2):
 * angular LSH by random rotations, keys sorted by (bucket, position) and cut into chunks, each
 * query attending to the keys of its bucket in its chunk and the one before, several rounds
 * combined by log-sum-exp. Definition: .definition below; what rel_err means: docs/accuracy.md.
 * Choices against the paper and its implementations (trax, lucidrains/reformer-pytorch, HF):
 *  - shared QK: the paper's keys are the normalised queries (one projection: k = q); here the
 *    shared vectors come from k (normalised for the scores) and each query is hashed from q and
 *    placed where its (bucket, position) falls among the keys: the paper's attention wherever
 *    q_i = k at its position (the tied and local datasets), and defined for T != S and decode
 *    (the newest queries against a cache equal the last rows of the prefill).
 *  - a query sees only keys of its own bucket inside its two chunks (the paper's mask m(j, P_i),
 *    trax's attend_across_buckets=False; lucidrains and HF attend across buckets by default);
 *    the first chunk does not look back to the last (the paper's eq. 4; implementations wrap).
 *  - duplicates: the paper subtracts log N_ij, N_ij = rounds with j in i's bucket; here N_ij
 *    counts the rounds that attend j (same bucket and within the chunks), so the result is
 *    exactly the softmax over the union of the rounds' sets (trax's allow_duplicate_attention=
 *    False); the forward attends each key in the first round that sees it only.
 *  - self mask: score - 1e5, the paper's value, as in trax and HF.
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv)
 *   weight rotations [n_r, D, b/2] (n_r = hashes, b = buckets), N(0, 1) from `seed`
 *   time O(n_r·(B·(H·T + Hkv·S)·D·b/2 + B·H·T·2c·(D + n_r)) + sort): linear in n at fixed b
 *        and c (plus a binary search per query, O(log n)). What is read at random (rows of q,
 *        k, v, out and the per-key and per-query state, in sorted order) is read once per
 *        window or query and prefetched, so that the time per query stays flat once the data
 *        leaves the caches.
 *   flops (nominal, data-independent): 2·D·b/2 per hashed vector and round (queries of every
 *        head, keys of every KV head), 2·D per key norm (shared_qk), and 4·D·min(2c, S) per query
 *        and round: the sgemms Q·Kᵀ and P·V over a full window of two chunks. The windows of the
 *        first chunk and of a partial last chunk are smaller, so this bounds the products run.
 *        The argmax, sorts, masks and exp are not counted.
 *   layout: phase 1, per (b, kv head, round): bucket of every key (hash_rows), a stable counting
 *        sort by bucket (perm: slot -> key, slot: key -> slot, start: first slot per bucket), and
 *        per (b, kv head) the keys' inverse norms. Phase 2, per (b, head): for each round, every
 *        query's bucket and slot (binary search in its bucket) into its record (running max and
 *        sum, (bucket, slot) per round: one cache line), a counting sort of the queries by chunk,
 *        then per chunk the window's keys and values, and its keys' inverse norms, buckets and
 *        slots in the earlier rounds, gathered once; per block of QBLOCK queries Q·Kᵀ by sgemm,
 *        the masks (same bucket, causal, seen in an earlier round, self; branch-free over the
 *        window) and the running softmax (max, sum, output row) updated through P·V by sgemm.
 *   workspace: global n_r·B·Hkv·(3S + b + 1) int32 (phase 1) and B·Hkv·S floats (inverse norms);
 *        per thread (2 + 2·n_r)·T (query records) + T + 2·(S/c + 2) + b int32, 4·D floats, and
 *        the window 2·W·D, QB·D, QB·W, QB·D floats and 2·(n_r - 1)·W int32 + W floats (W =
 *        min(2c, S), QB = min(QBLOCK, T)), each piece padded to 64 bytes. O(n) in total, no T×S
 *        matrix.
 *   threads: OpenMP over (b, kv head, round) then over (b, head), dynamic; OpenBLAS
 *        single-threaded inside. Every output row is computed by one task in a fixed order: the
 *        same output on every thread count.
 * Buckets are computed in float32 by one routine (hash_rows) that the float64 reference calls
 * too, so both see the same buckets (a float64 argmax would flip near-ties); the attention itself
 * is float64 in the reference.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "attention.h"
#include "feature_maps.h"
#include "kernel_set.h"
#include "kernels.h"

enum { P_BUCKETS, P_HASHES, P_CHUNK, P_SHARED_QK, P_SEED };
enum { QBLOCK = 64 };                                            /* query rows per sgemm block */
enum { MAX_ROUNDS = 16 };                                        /* the range of `hashes` */
enum { HASH_ROWS = ATTN_HASH_ROWS, HASH_COLS = ATTN_HASH_COLS }; /* kernels/kernel_set.h */
#define SELF_MASK 1e5 /* the paper's self mask: a token's own score minus 1e5 */

static const attn_param_def params[] = {
    [P_BUCKETS] = {"buckets", "b: hash buckets per round (even): h(x) = argmax([xR; -xR])", 64, 2,
                   1024, true},
    [P_HASHES] = {"hashes", "rounds of hashing, combined by log-sum-exp (n_rounds)", 4, 1,
                  MAX_ROUNDS, true},
    [P_CHUNK] = {"chunk", "c: sorted keys per chunk; a query sees its chunk and the one before", 64,
                 1, 4096, true},
    [P_SHARED_QK] = {"shared_qk",
                     "1: keys unit-normalised, own position masked (shared-QK); 0: raw", 1, 0, 1,
                     true},
    [P_SEED] = {"seed", "seed of the random rotations", 0, 0, 4294967295.0, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; } /* 64-byte pieces */

/* The buckets of HASH_ROWS rows x (row stride ldx) under one round's rotation Rp [D, halfp]: the
 * kernel set's slot (kernels/reformer_body.h), one routine for the forward and the reference
 * alike, so both see the same buckets. */
static void hash_rows(const attn_kernel_set *ks, const float *x, int64_t ldx, const float *Rp,
                      int64_t D, int64_t half, int64_t halfp, int32_t *out)
{
    ks->reformer.hash_rows(x, ldx, Rp, D, half, halfp, out);
}

/* Rp [n_r, D, halfp] from the rotations R [n_r, D, half]: zero columns appended. */
static void pad_rotations(const float *R, int64_t nr, int64_t D, int64_t half, int64_t halfp,
                          float *Rp)
{
    for (int64_t e = 0; e < nr * D; e++)
        for (int64_t c = 0; c < halfp; c++) Rp[e * halfp + c] = c < half ? R[e * half + c] : 0.0f;
}

/* Buckets of n rows x [n, D] (out [n]): blocks of HASH_ROWS, the last one through buf. */
static void hash_all(const attn_kernel_set *ks, const float *x, int64_t n, const float *Rp,
                     int64_t D, int64_t half, int64_t halfp, float *buf, int32_t *out)
{
    int64_t i = 0;
    for (; i + HASH_ROWS <= n; i += HASH_ROWS)
        hash_rows(ks, x + i * D, D, Rp, D, half, halfp, out + i);
    if (i == n) return;
    int32_t last[HASH_ROWS];
    memset(buf, 0, (size_t)(HASH_ROWS * D) * sizeof *buf);
    memcpy(buf, x + i * D, (size_t)((n - i) * D) * sizeof *buf);
    hash_rows(ks, buf, D, Rp, D, half, halfp, last);
    memcpy(out + i, last, (size_t)(n - i) * sizeof *out);
}

/* ---- the plan: sizes and workspace offsets ---- */

typedef struct plan {
    int64_t b, half, halfp, nr, C, W, QB, nch; /* buckets, b/2, rounds, chunk, window, query block,
                                           chunk indices a query slot may fall in (S/C + 1) */
    int64_t QR; /* a query's record: running max m, sum l (floats), (bucket, slot) per round */
    bool shared;
    /* global, per (b, g, r): kb [S], slot [S], perm [S], start [b + 1] int32 */
    int64_t round_ints, global_ints, norm_floats, rot_floats; /* + Rp [n_r, D, halfp] */
    /* per thread (in 4-byte units): */
    int64_t qrec, qorder, cstart, ccur, cursor, hbuf, kw, vw, qw, sc, ow, wkb, wks, winv;
    int64_t thread_units;
    int threads;
    const attn_kernel_set *ks; /* the set of the call (NULL: counts, the reference) */
} plan;

static plan make_plan(const attn_shape *s, const attn_params *p, int threads)
{
    plan pl;
    pl.b = (int64_t)p->v[P_BUCKETS], pl.half = pl.b / 2, pl.nr = (int64_t)p->v[P_HASHES];
    pl.halfp = (pl.half + HASH_COLS - 1) / HASH_COLS * HASH_COLS;
    pl.rot_floats = pad16(pl.nr * s->D * pl.halfp);
    pl.C = (int64_t)p->v[P_CHUNK], pl.shared = p->v[P_SHARED_QK] != 0;
    pl.QR = 2 + 2 * pl.nr, pl.W = min64(2 * pl.C, s->S), pl.QB = min64(QBLOCK, s->T),
    pl.nch = s->S / pl.C + 1;
    pl.round_ints = pad16(3 * s->S + pl.b + 1);
    pl.global_ints = pl.round_ints * s->B * s->Hkv * pl.nr;
    pl.norm_floats = pad16(s->B * s->Hkv * s->S);
    int64_t off = 0;
#define PIECE(name, n) (pl.name = off, off += pad16(n))
    PIECE(qrec, pl.QR * s->T);
    PIECE(qorder, s->T);
    PIECE(cstart, pl.nch + 1);
    PIECE(ccur, pl.nch);
    PIECE(cursor, pl.b);
    PIECE(hbuf, HASH_ROWS * s->D);
    PIECE(kw, pl.W * s->D);
    PIECE(vw, pl.W * s->D);
    PIECE(qw, pl.QB * s->D);
    PIECE(sc, pl.QB * pl.W);
    PIECE(ow, pl.QB * s->D);
    PIECE(wkb, (pl.nr - 1) * pl.W);
    PIECE(wks, (pl.nr - 1) * pl.W);
    PIECE(winv, pl.W);
#undef PIECE
    pl.thread_units = off;
    pl.threads = threads;
    return pl;
}

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    plan pl = make_plan(s, p, x->threads);
    pl.ks = x->ks;
    return (size_t)(pl.global_ints + pl.norm_floats + pl.rot_floats +
                    pl.threads * pl.thread_units) *
           4;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    if ((int64_t)p->v[P_BUCKETS] % 2 != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "reformer: buckets=%g must be even (h(x) = argmax([xR; -xR]))",
                         p->v[P_BUCKETS]);
    if (s->S > INT32_MAX / 4 || s->T > INT32_MAX / 4)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "reformer: q_len and kv_len must be below 2^29 (int32 slots)");
    return ATTN_OK;
}

static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    out[0] = (attn_weight){"rotations",
                           "random rotations R [hashes, D, buckets/2], N(0, 1)",
                           3,
                           {(int64_t)p->v[P_HASHES], s->D, (int64_t)p->v[P_BUCKETS] / 2}};
    return 1;
}

static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    attn_weight d[ATTN_MAX_WEIGHTS];
    weights(self, s, p, d);
    attn_weights_normal(w[0], attn_weight_elems(&d[0]), 1.0, (uint64_t)p->v[P_SEED], 0);
    return ATTN_OK;
}

/* ---- phase 1: the keys of one (b, kv head) in one round ---- */

/* The sort of one (b, g, r): pointers into the global workspace. */
typedef struct keysort {
    int32_t *kb, *slot, *perm, *start; /* [S], [S], [S], [b + 1] */
} keysort;

static keysort keysort_at(const plan *pl, const attn_shape *s, int32_t *global, int64_t bg,
                          int64_t r)
{
    int32_t *base = global + (bg * pl->nr + r) * pl->round_ints;
    return (keysort){base, base + s->S, base + 2 * s->S, base + 3 * s->S};
}

/* Buckets of the S keys kg [S, D] under R, and their stable counting sort by bucket. */
static void sort_keys(const plan *pl, const attn_shape *s, const float *kg, const float *Rp,
                      keysort ks, int32_t *cursor, float *buf)
{
    const int64_t S = s->S;
    memset(ks.start, 0, (size_t)(pl->b + 1) * 4);
    hash_all(pl->ks, kg, S, Rp, s->D, pl->half, pl->halfp, buf, ks.kb);
    for (int64_t j = 0; j < S; j++) ks.start[ks.kb[j] + 1]++;
    for (int64_t c = 0; c < pl->b; c++) ks.start[c + 1] += ks.start[c];
    memcpy(cursor, ks.start, (size_t)pl->b * 4);
    for (int64_t j = 0; j < S; j++) {
        const int32_t t = cursor[ks.kb[j]]++;
        ks.perm[t] = (int32_t)j, ks.slot[j] = t;
    }
}

/* ---- phase 2: the queries of one (b, head) ---- */

typedef struct task {
    const plan *pl;
    const attn_shape *s;
    const float *qh, *kg, *vg, *inv; /* [T, D], [S, D], [S, D] of the head; inverse key norms */
    const float *Rp;                 /* padded rotations [n_r, D, halfp] */
    int32_t *global;                 /* phase 1's sorts */
    int64_t bg;                      /* b·Hkv + g */
    float *out;                      /* [T, D] of the head */
    int32_t *wi;                     /* this thread's scratch (plan offsets), as int32 */
    float *wf;                       /* the same, as floats */
} task;

/* Query i's slot in round r: where (bucket, p_i) falls among the keys' (bucket, position). */
static int64_t query_slot(const keysort *ks, int32_t bucket, int64_t p)
{
    int64_t lo = ks->start[bucket], hi = ks->start[bucket + 1];
    while (lo < hi) { /* first slot of the bucket whose key position is >= p */
        const int64_t mid = lo + (hi - lo) / 2;
        if (ks->perm[mid] < p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The window slots [w0, w0 + W) of round r: each key's bucket and slot in the rounds before r
 * (wkb, wks [r, W]) and its inverse norm (winv [W]), gathered once per window so that the rows'
 * masks read them contiguously (phase 1's arrays are indexed by key: scattered reads). */
static void window_keys(const task *t, const keysort *ks, int64_t r, int64_t w0, int64_t W)
{
    const plan *pl = t->pl;
    int32_t *wkb = t->wi + pl->wkb, *wks = t->wi + pl->wks;
    float *winv = t->wf + pl->winv;
    const int32_t *perm = ks->perm + w0;
    if (pl->shared)
        for (int64_t u = 0; u < W; u++) winv[u] = t->inv[perm[u]];
    for (int64_t e = 0; e < r; e++) {
        const keysort ke = keysort_at(pl, t->s, t->global, t->bg, e);
        for (int64_t u = 0; u < W; u++)
            wkb[e * W + u] = ke.kb[perm[u]], wks[e * W + u] = ke.slot[perm[u]];
    }
}

/* Mask (-inf) the window keys u in [a, e) that the query attended in a round before r: key u
 * had its bucket and a slot in its two chunks (each key counts once over the rounds). Branch-free
 * over u, one pass per earlier round. */
static void mask_seen(const task *t, int64_t r, int64_t i, int64_t a, int64_t e, int64_t W,
                      float *sc)
{
    const plan *pl = t->pl;
    for (int64_t x = 0; x < r; x++) {
        const int32_t *wkb = t->wi + pl->wkb + x * W, *wks = t->wi + pl->wks + x * W;
        const int32_t *q = t->wi + pl->qrec + i * pl->QR + 2 + 2 * x, bucket = q[0];
        const int32_t lo = (int32_t)((q[1] / pl->C - 1) * pl->C);
        const uint32_t span = (uint32_t)(2 * pl->C);
        for (int64_t u = a; u < e; u++)
            sc[u] = wkb[u] == bucket && (uint32_t)(wks[u] - lo) < span ? -INFINITY : sc[u];
    }
}

/* One query row of a block: its scores sc [W] over window slots [w0, w0 + W) become weights
 * (0 where masked), the running max m and sum l are updated, *alpha is the factor of its output
 * row so far; returns false when the row sees nothing new in this round (the weights are then
 * all 0, *alpha 1). */
static bool row_weights(const task *t, const keysort *ks, int64_t r, int64_t i, int64_t w0,
                        int64_t W, float *sc, float *alpha)
{
    const plan *pl = t->pl;
    const attn_shape *s = t->s;
    const int64_t p = i + s->S - s->T;
    const int32_t *q = t->wi + pl->qrec + i * pl->QR + 2 + 2 * r, bucket = q[0];
    const int64_t a = max64(w0, ks->start[bucket]) - w0;
    int64_t e = max64(a, min64(w0 + W, ks->start[bucket + 1]) - w0);
    /* the query's slot: the bucket's keys before it have positions < p, then key p if present */
    const int64_t slot = q[1];
    const bool own = slot < ks->start[bucket + 1] && ks->perm[slot] == p;
    if (s->causal) e = max64(a, min64(e, slot + own - w0)); /* the bucket's keys up to p */
    const float scale = (float)s->scale, *winv = t->wf + pl->winv;
    for (int64_t u = 0; u < a; u++) sc[u] = -INFINITY;
    for (int64_t u = e; u < W; u++) sc[u] = -INFINITY;
    if (pl->shared)
        for (int64_t u = a; u < e; u++) sc[u] *= scale * winv[u];
    else
        for (int64_t u = a; u < e; u++) sc[u] *= scale;
    if (pl->shared && own && slot - w0 >= a && slot - w0 < e) sc[slot - w0] -= (float)SELF_MASK;
    mask_seen(t, r, i, a, e, W, sc);
    const float top = attn_vmax(pl->ks, sc + a, e - a);
    *alpha = 1.0f;
    if (top == -INFINITY) {
        memset(sc, 0, (size_t)W * sizeof *sc);
        return false;
    }
    float *m = t->wf + pl->qrec + i * pl->QR, *l = m + 1;
    const float mnew = *m > top ? *m : top;
    *alpha = *m == -INFINITY ? 0.0f : expf(*m - mnew);
    *l = *l * *alpha + attn_vexp_sum(pl->ks, sc, W, mnew), *m = mnew;
    return true;
}

/* Prefetch rows idx[0..n) of x [., D]: the rows of the queries, scattered in sorted order. */
static void prefetch_rows(const float *x, const int32_t *idx, int64_t n, int64_t D)
{
#if defined(__GNUC__)
    for (int64_t i = 0; i < n; i++)
        for (int64_t d = 0; d < D; d += 16) __builtin_prefetch(x + idx[i] * D + d);
#else
    (void)x, (void)idx, (void)n, (void)D;
#endif
}

/* The queries qs[0..nq) of chunk c in round r against the window of chunks c - 1 and c. */
static void chunk_attend(const task *t, const keysort *ks, int64_t r, int64_t c, const int32_t *qs,
                         int64_t nq)
{
    const plan *pl = t->pl;
    const attn_shape *s = t->s;
    const int64_t D = s->D, w0 = max64(0, (c - 1) * pl->C), W = min64(s->S, (c + 1) * pl->C) - w0;
    float *kw = t->wf + pl->kw, *vw = t->wf + pl->vw, *qw = t->wf + pl->qw;
    float *sc = t->wf + pl->sc, *ow = t->wf + pl->ow;
    for (int64_t u = 0; u < W; u++) {
        const int64_t j = ks->perm[w0 + u];
        memcpy(kw + u * D, t->kg + j * D, (size_t)D * sizeof *kw);
        memcpy(vw + u * D, t->vg + j * D, (size_t)D * sizeof *vw);
    }
    window_keys(t, ks, r, w0, W);
    for (int64_t q0 = 0; q0 < nq; q0 += pl->QB) {
        const int64_t nb = min64(pl->QB, nq - q0);
        const int64_t next = min64(pl->QB, nq - q0 - nb);
        prefetch_rows(t->wf + pl->qrec, qs + q0, nb, pl->QR); /* read after Q·Kᵀ */
        prefetch_rows(t->out, qs + q0, nb, D);                /* updated after P·V */
        prefetch_rows(t->qh, qs + q0 + nb, next, D);          /* the next block */
        for (int64_t x = 0; x < nb; x++)
            memcpy(qw + x * D, t->qh + qs[q0 + x] * D, (size_t)D * sizeof *qw);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nb, (int)W, (int)D, 1.0f, qw,
                    (int)D, kw, (int)D, 0.0f, sc, (int)W);
        bool any = false, seen[QBLOCK];
        float alpha[QBLOCK];
        for (int64_t x = 0; x < nb; x++)
            any |= seen[x] = row_weights(t, ks, r, qs[q0 + x], w0, W, sc + x * W, &alpha[x]);
        if (!any) continue;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nb, (int)D, (int)W, 1.0f, sc,
                    (int)W, vw, (int)D, 0.0f, ow, (int)D);
        for (int64_t x = 0; x < nb; x++) {
            float *o = t->out + qs[q0 + x] * D;
            for (int64_t d = 0; seen[x] && d < D; d++) o[d] = o[d] * alpha[x] + ow[x * D + d];
        }
    }
}

/* Round r of one head: the queries' buckets, slots and chunks, their counting sort by chunk,
 * then every chunk that has queries. */
static void head_round(const task *t, int64_t r)
{
    const plan *pl = t->pl;
    const attn_shape *s = t->s;
    const int64_t T = s->T, D = s->D;
    const keysort ks = keysort_at(pl, s, t->global, t->bg, r);
    int32_t *rec = t->wi + pl->qrec + 2 + 2 * r; /* query i's (bucket, slot): rec[i·QR + 0, 1] */
    int32_t *order = t->wi + pl->qorder, *cstart = t->wi + pl->cstart, *ccur = t->wi + pl->ccur;
    memset(cstart, 0, (size_t)(pl->nch + 1) * 4);
    /* the buckets, through order, then the slots */
    hash_all(pl->ks, t->qh, T, t->Rp + r * D * pl->halfp, D, pl->half, pl->halfp, t->wf + pl->hbuf,
             order);
    for (int64_t i = 0; i < T; i++) {
        int32_t *q = rec + i * pl->QR;
        q[0] = order[i], q[1] = (int32_t)query_slot(&ks, q[0], i + s->S - T);
        cstart[q[1] / pl->C + 1]++;
    }
    for (int64_t c = 0; c < pl->nch; c++) cstart[c + 1] += cstart[c];
    memcpy(ccur, cstart, (size_t)pl->nch * 4);
    for (int64_t i = 0; i < T; i++) order[ccur[rec[i * pl->QR + 1] / pl->C]++] = (int32_t)i;
    for (int64_t c = 0; c < pl->nch; c++)
        if (cstart[c + 1] > cstart[c])
            chunk_attend(t, &ks, r, c, order + cstart[c], cstart[c + 1] - cstart[c]);
}

static void head(task *t)
{
    const plan *pl = t->pl;
    const int64_t T = t->s->T, D = t->s->D;
    float *ml = t->wf + pl->qrec; /* m, l: the first two units of a query's record */
    for (int64_t i = 0; i < T; i++) ml[i * pl->QR] = -INFINITY, ml[i * pl->QR + 1] = 0.0f;
    memset(t->out, 0, (size_t)(T * D) * sizeof *t->out);
    for (int64_t r = 0; r < pl->nr; r++) head_round(t, r);
    for (int64_t i = 0; i < T; i++) {
        const float l = ml[i * pl->QR + 1], f = l > 0 ? 1.0f / l : 0.0f;
        for (int64_t d = 0; d < D; d++) t->out[i * D + d] *= f;
    }
}

static void key_norms(const attn_shape *s, const float *kg, float *inv)
{
    for (int64_t j = 0; j < s->S; j++) {
        float n2 = 0;
        for (int64_t d = 0; d < s->D; d++) n2 += kg[j * s->D + d] * kg[j * s->D + d];
        inv[j] = n2 > 0 ? 1.0f / sqrtf(n2) : 0.0f;
    }
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    char msg[ATTN_MSG_LEN];
    const attn_status st = attn_weights_given(self, s, p, msg, sizeof msg);
    if (st != ATTN_OK) return st;
    plan pl = make_plan(s, p, x->threads);
    pl.ks = x->ks;
    const int64_t B = s->B, H = s->H, Hkv = s->Hkv, T = s->T, S = s->S, D = s->D;
    const int64_t G = H / Hkv;
    int32_t *global = workspace;
    float *inv = (float *)(global + pl.global_ints), *Rp = inv + pl.norm_floats;
    int32_t *threads_base = (int32_t *)(Rp + pl.rot_floats);
    pad_rotations(p->w[0], pl.nr, D, pl.half, pl.halfp, Rp);
    attn_blas_threads(1);
#pragma omp parallel num_threads(pl.threads)
    {
        int32_t *wi = threads_base + (size_t)omp_get_thread_num() * (size_t)pl.thread_units;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < B * Hkv * pl.nr; u++) {
            const int64_t bg = u / pl.nr, r = u % pl.nr;
            const float *kg = k + bg * S * D;
            sort_keys(&pl, s, kg, Rp + r * D * pl.halfp, keysort_at(&pl, s, global, bg, r),
                      wi + pl.cursor, (float *)wi + pl.hbuf);
            if (r == 0) key_norms(s, kg, inv + bg * S);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t bh = 0; bh < B * H; bh++) {
            const int64_t b = bh / H, g = (bh % H) / G, bg = b * Hkv + g;
            task t = {.pl = &pl,
                      .s = s,
                      .qh = q + bh * T * D,
                      .kg = k + bg * S * D,
                      .vg = v + bg * S * D,
                      .inv = inv + bg * S,
                      .Rp = Rp,
                      .global = global,
                      .bg = bg,
                      .out = out + bh * T * D,
                      .wi = wi,
                      .wf = (float *)wi};
            head(&t);
        }
    }
    return ATTN_OK;
}

/* ---- counts ---- */

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const plan pl = make_plan(s, p, 1);
    const double D = (double)s->D, nq = (double)(s->B * s->H * s->T);
    const double nk = (double)(s->B * s->Hkv * s->S), nr = (double)pl.nr;
    return nr * (nq + nk) * 2.0 * D * (double)pl.half + (pl.shared ? nk * 2.0 * D : 0.0) +
           nr * nq * 4.0 * D * (double)pl.W;
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const plan pl = make_plan(s, p, 1);
    return 4.0 * (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s) +
                  (double)(pl.nr * s->D * pl.half));
}

/* ---- the float64 definition ---- */

/* The keys of one (b, kv head) in every round: buckets and slots (the rank of (bucket,
 * position)), float32 hashes by hash_rows on the kernel set in force (the one the harness runs the
 * forward on: the buckets are the forward's); key norms in double. */
typedef struct refkeys {
    int64_t bg;
    int32_t *kb, *slot, *start, *cur; /* [n_r·S], [n_r·S], [n_r·(b+1)], [b] */
    double *norm;                     /* [S] */
    float *Rp, *buf;                  /* padded rotations, HASH_ROWS·D floats for hash_all */
} refkeys;

static void ref_keys(const plan *pl, const attn_shape *s, const float *kg, refkeys *rk)
{
    const int64_t S = s->S, D = s->D, b = pl->b;
    for (int64_t r = 0; r < pl->nr; r++) {
        int32_t *kb = rk->kb + r * S, *slot = rk->slot + r * S, *start = rk->start + r * (b + 1);
        memset(start, 0, (size_t)(b + 1) * 4);
        hash_all(attn_ks(), kg, S, rk->Rp + r * D * pl->halfp, D, pl->half, pl->halfp, rk->buf, kb);
        for (int64_t j = 0; j < S; j++) start[kb[j] + 1]++;
        for (int64_t c = 0; c < b; c++) start[c + 1] += start[c];
        memcpy(rk->cur, start, (size_t)b * 4); /* rank: the bucket's start + earlier keys in it */
        for (int64_t j = 0; j < S; j++) slot[j] = rk->cur[kb[j]]++;
    }
    for (int64_t j = 0; j < S; j++) {
        double n2 = 0;
        for (int64_t d = 0; d < D; d++) n2 += (double)kg[j * D + d] * kg[j * D + d];
        rk->norm[j] = sqrt(n2);
    }
}

/* Does query (bucket qbk[r], slot qs[r] per round) at position p attend to key j in some round? */
static bool ref_sees(const plan *pl, const attn_shape *s, const refkeys *rk, const int32_t *qbk,
                     const int64_t *qs, int64_t p, int64_t j)
{
    if (s->causal && j > p) return false;
    for (int64_t r = 0; r < pl->nr; r++) {
        const int64_t c = qs[r] / pl->C, sj = rk->slot[r * s->S + j] / pl->C;
        if (rk->kb[r * s->S + j] == qbk[r] && sj >= c - 1 && sj <= c) return true;
    }
    return false;
}

static void ref_row(const plan *pl, const attn_shape *s, const refkeys *rk, const float *qi,
                    const float *kg, const float *vg, int64_t i, double *score, double *o)
{
    const int64_t S = s->S, D = s->D, p = i + S - s->T;
    int32_t qbk[MAX_ROUNDS];
    int64_t qs[MAX_ROUNDS];
    for (int64_t r = 0; r < pl->nr; r++) { /* slot: keys with (bucket, position) < (qb, p) */
        hash_all(attn_ks(), qi, 1, rk->Rp + r * D * pl->halfp, D, pl->half, pl->halfp, rk->buf,
                 &qbk[r]);
        qs[r] = rk->start[r * (pl->b + 1) + qbk[r]];
        for (int64_t j = 0; j < S && j < p; j++) qs[r] += rk->kb[r * S + j] == qbk[r];
    }
    for (int64_t j = 0; j < S; j++) {
        score[j] = -INFINITY;
        if (!ref_sees(pl, s, rk, qbk, qs, p, j)) continue;
        double dot = 0;
        for (int64_t d = 0; d < D; d++) dot += (double)qi[d] * kg[j * D + d];
        score[j] = s->scale * dot / (pl->shared ? (rk->norm[j] > 0 ? rk->norm[j] : INFINITY) : 1);
        if (pl->shared && j == p) score[j] -= SELF_MASK;
    }
    attn_softmax_reference_row(score, S, vg, D, o);
}

static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const plan pl = make_plan(s, p, 1);
    const int64_t S = s->S, D = s->D, T = s->T, G = s->H / s->Hkv;
    refkeys rk = {.bg = -1};
    rk.kb = malloc((size_t)(pl.nr * S) * 4), rk.slot = malloc((size_t)(pl.nr * S) * 4);
    rk.start = malloc((size_t)(pl.nr * (pl.b + 1)) * 4);
    rk.norm = malloc((size_t)S * sizeof *rk.norm), rk.buf = malloc((size_t)(HASH_ROWS * D) * 4);
    rk.Rp = malloc((size_t)(pl.nr * D * pl.halfp) * 4);
    rk.cur = malloc((size_t)pl.b * 4);
    double *score = malloc((size_t)S * sizeof *score);
    attn_status st = rk.kb && rk.slot && rk.start && rk.cur && rk.norm && rk.buf && rk.Rp && score
                         ? ATTN_OK
                         : ATTN_EFAIL;
    if (st == ATTN_OK) pad_rotations(p->w[0], pl.nr, D, pl.half, pl.halfp, rk.Rp);
    for (int64_t n = 0; n < nrows && st == ATTN_OK; n++) {
        const int64_t bh = rows[n] / T, i = rows[n] % T;
        const int64_t bg = (bh / s->H) * s->Hkv + (bh % s->H) / G;
        if (bg != rk.bg) ref_keys(&pl, s, k + bg * S * D, &rk), rk.bg = bg;
        ref_row(&pl, s, &rk, q + rows[n] * D, k + bg * S * D, v + bg * S * D, i, score,
                out + n * D);
    }
    free(rk.kb), free(rk.slot), free(rk.start), free(rk.cur), free(rk.norm), free(rk.buf),
        free(rk.Rp), free(score);
    return st;
}

static const attn_weight_ops weight_ops = {
    .list = weights,
    .draw = draw_weights,
};

const attn_ops attn_kind_reformer = {
    .name = "reformer",
    .no_backward = "not implemented: its LSH buckets (an argmax of random rotations) are "
                   "piecewise constant in q and k",
    .summary = "LSH attention (Reformer): hashed buckets, sorted chunks, rounds by log-sum-exp",
    .definition =
        "LSH attention (Kitaev et al. 2020, sec. 2). Key j sits at position j, query i at\n"
        "p_i = i + S - T. Round r = 1..n_r (hashes) has a rotation R_r [D, b/2] (weight\n"
        "`rotations`, N(0,1) from seed); h_r(x) = argmax([x R_r ; -x R_r]) in 0..b-1 (first\n"
        "maximum), computed in float32 (the reference uses the same routine). Keys are hashed\n"
        "from k_j, queries from q_i. In round r the keys are sorted by (h_r(k_j), j): slot_r(j)\n"
        "is key j's rank; query i takes slot s_r(i) = #{j : (h_r(k_j), j) < (h_r(q_i), p_i)}\n"
        "(with q_i = k_{p_i}: its own key's slot). Chunks of c (chunk) slots: query i attends in\n"
        "round r to A_r(i) = {j : h_r(k_j) = h_r(q_i), floor(slot_r(j)/c) in {floor(s_r(i)/c) - 1,\n"
        "floor(s_r(i)/c)}}: its bucket within its chunk and the one before (no wrap-around);\n"
        "causal: j <= p_i. Scores: shared_qk=1 (default) s_ij = scale*q_i.k_j/|k_j| - 1e5*[j = p_i]\n"
        "(shared-QK attention: the paper's keys are the unit-normalised queries, k = q here, e.g.\n"
        "the tied dataset; a token attends to itself only when it sees nothing else);\n"
        "shared_qk=0: s_ij = scale*q_i.k_j. Output: softmax over the union A(i) of the rounds'\n"
        "sets, each key once: o_i = sum_{j in A(i)} e^{s_ij} v_j / sum_{j in A(i)} e^{s_ij} (the\n"
        "rounds combined by log-sum-exp with the paper's duplicate correction N_ij, counted over\n"
        "the rounds that attend j); o_i = 0 when A(i) is empty. scale 1/sqrt(D).",
    .params = ATTN_PARAM_TABLE("reformer", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .weights = &weight_ops,
};
