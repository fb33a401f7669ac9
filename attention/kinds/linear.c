/*
 * linear — linearised attention with a feature map φ (attention/engines/feature_maps.c: elu, relu,
 * favor, trig), computed as φ(Q)(φ(K)ᵀV) in time linear in n. Definition: .definition below
 * (its float64 form: linear_reference.c, the kind's own reference slot).
 *   q [B,H,T,D]  k,v [B,Hkv,S,D]  out [B,H,T,D]   kv head g = h / (H/Hkv);  M features
 * The normaliser: den = φ(q_i)ᵀ Σ_j φ(k_j) is >= 0 for elu, relu and favor (favor: >= 1 in
 * its shifted form whenever the row sees every key summed, i.e. non-causal, see
 * feature_maps.c); it is 0 when φ(q) is 0 (relu) or the row sees no key, and then the row
 * is 0. trig's den is a sum of signed terms and may be ~0 or negative: it is clamped to
 * DEN_FLOOR·|φ(q)|·Σ_j |φ(k_j)| (Cauchy–Schwarz bound of |den|, relative floor 1e-3), so
 * |out| <= max |v| / DEN_FLOOR and nothing is inf or NaN. float32 range: a causal row sees only
 * part of its chunk, whose shift (feature_maps.c) is the maximum over all the chunk's keys; when
 * its visible terms all fall below float range (favor den, or trig's Σ key weights, < 1e-30:
 * inputs ~10 times unit variance at D=64), the row is redone with its own shift, the maximum
 * over the keys it sees (own_shift_row: O(chunk·M) per such row, data-dependent, so not in flops).
 *
 * Non-causal: per (b, kv head) the state KV' = Σ_j φ(k_j) [v_j, 1] ([M, D+1]: φ(K)ᵀV and
 *   φ(K)ᵀ1 in one sgemm per block of BLOCK keys), shared by the H/Hkv query heads of the group;
 *   then φ(Q)·KV' by sgemm per block of BLOCK queries, and out = num / den.
 * Causal: chunked scan over chunks of `chunk` keys (exact prefix sums): the queries whose
 *   positions fall in a chunk get φ(Q_c)·KV'(keys before the chunk) (inter-chunk, the running
 *   state) + masked(φ(Q_c)φ(K_c)ᵀ)[V_c, 1] (intra-chunk); then KV' += φ(K_c)ᵀ[V_c, 1].
 * Decode (s->decode, causal): prepare sums keys [0, S-T) into a state per (b, kv head)
 *   (untimed); decode runs the same scan over keys [S-T, S) from that state, which it only
 *   reads (O(T·M·D) per head, independent of S).
 *   time O(B·H·n·M·D) (+ O(n·chunk·(M+D)) causal)
 *   flops: 2 per multiply-add of every sgemm actually run (the masked half of each diagonal
 *          chunk included), features per attn_fm_flops, 1 per rescaled state entry, per
 *          prefix-sum step and per output element (division); counted by walking the same
 *          loops as forward (count mode).
 *   weights: favor, trig: `features` W [m, D], the random projections w_l (feature_maps.c),
 *          drawn from `seed` by draw_weights (untimed; favor's Gram–Schmidt scratch allocated
 *          there) or given by the caller (--input); read from p->w[0]. elu, relu: none.
 *   bytes: prefill q, k, v, out once and W; decode q, out, W, the state read (KV', shifts,
 *          sums) and the T new k, v rows.
 *   workspace: non-causal: B·Hkv states; per thread, C = chunk (causal, decode) or BLOCK
 *          (non-causal), clipped to S and T: features of keys [C, M] and queries [C, M],
 *          [V_c, 1] and an accumulator [C, D+1]; causal: masked scores [C, C], a running state
 *          (M·(D+2)+1 floats), favor/trig the raw key logarithms [C, m+1] and 3 rows of M for
 *          own_shift_row. Independent of n. (W is an input, not workspace.)
 *   state (decode): one state per (b, kv head), padded to 64 bytes.
 *   loops: sgemm for every product; the features (feature_maps.c) and the row loops (output
 *          division, state rescaling, own_shift_row) by the kernel set in force
 *          (kernels/linear_body.h).
 *   threads: OpenMP over (b, kv head) for state sums (non-causal phase 1, prepare, decode;
 *            a decode step under DECODE_SERIAL_FLOPS runs on one thread), over (b, head, query
 *            block) (non-causal phase 2; when B·Hkv >= threads, each (b, kv head) task answers
 *            its group's queries itself, without a barrier), and over (b, head) (causal:
 *            each query head rebuilds the key state, H/Hkv times per group, for parallelism);
 *            OpenBLAS single-threaded inside.
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

enum { P_MAP, P_FEATURES, P_SEED, P_CHUNK };

#define DEN_FLOOR 1e-3         /* trig: den >= DEN_FLOOR · |φ(q)| · Σ_j |φ(k_j)| */
#define OWN_SHIFT_BELOW 1e-30f /* favor den or trig Σ weights below: the row's own shift */
/* Non-causal rows per block (keys of the state sums, queries per task): larger sgemms than the
 * causal chunk, whose intra-chunk cost grows with its size. */
enum { BLOCK = 128 };
/* A decode step under this many flops runs on one thread: it takes microseconds, less than
 * waking a second thread, which waits for the scheduler when the other core is busy. */
#define DECODE_SERIAL_FLOPS 4e6

static const attn_param_def params[] = {
    [P_MAP] = {"map", "feature map", 0, 0, 3, true, attn_fm_names},
    [P_FEATURES] = {"features", "random features m (favor: M = m, trig: M = 2m)", 256, 1, 4096,
                    true},
    [P_SEED] = {"seed", "seed of the random features (weight `features`, unless given)", 0, 0,
                4294967295.0, true},
    [P_CHUNK] = {"chunk", "keys per chunk of the causal scan (prefill, prepare, decode)", 32, 1,
                 4096, true},
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t clamp64(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}
static int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; } /* 64-byte pieces */

typedef struct plan {
    attn_fm fm;
    int64_t E;            /* D + 1: the value columns and a column of ones (the denominator) */
    int64_t Ck, Cq;       /* key rows per chunk (<= S), query rows per chunk or block (<= T) */
    int64_t state_used;   /* one state: KV' [M, E], shifts c [M], trig's Σ key weights [1] */
    int64_t state_floats; /* the same, padded */
    /* per-thread scratch, offsets in floats */
    int64_t phik, psi, a, vx, acc, cnew, r, wk, nrow, state, raw, crow, prow, frow, thread_floats;
    bool own;            /* causal favor, trig: rows may be redone with their own shift */
    int threads;         /* threads the forward or decode step runs on */
    size_t region_bytes; /* the threads' scratch */
} plan;

/* Run on `threads` threads: their scratch region. */
static void set_threads(plan *pl, int threads)
{
    pl->threads = threads;
    pl->region_bytes = (size_t)threads * (size_t)pl->thread_floats * sizeof(float);
}

/* The feature map of p for shape s, with the weight `features` of p when it has one (p->w[0]). */
static attn_fm feature_map(const attn_shape *s, const attn_params *p)
{
    attn_fm f = attn_fm_make((attn_fm_map)p->v[P_MAP], s->D, (int64_t)p->v[P_FEATURES], s->scale);
    f.W = f.m ? p->w[0] : NULL;
    return f;
}

static plan make_plan(const attn_shape *s, const attn_params *p, const attn_exec *x)
{
    plan pl;
    pl.fm = feature_map(s, p);
    pl.fm.ks = x ? x->ks : NULL;
    const bool scan = s->causal || s->decode;
    const int64_t M = pl.fm.M, chunk = scan ? (int64_t)p->v[P_CHUNK] : BLOCK;
    pl.E = s->D + 1;
    pl.Ck = min64(chunk, s->S), pl.Cq = min64(chunk, s->T);
    pl.state_used = M * pl.E + M + 1;
    pl.state_floats = pad16(pl.state_used);
    int64_t off = 0;
#define PIECE(name, n) (pl.name = off, off += pad16(n))
    PIECE(phik, pl.Ck * M);
    PIECE(psi, pl.Cq * M);
    PIECE(a, scan ? pl.Cq * pl.Ck : 0);
    PIECE(vx, pl.Ck * pl.E);
    PIECE(acc, pl.Cq * pl.E);
    PIECE(cnew, M);
    PIECE(r, M);
    PIECE(wk, pl.Ck);
    PIECE(nrow, pl.Cq);
    PIECE(state, scan ? pl.state_floats : 0);
    pl.own = scan && attn_fm_shifted(&pl.fm); /* own_shift_row's pieces */
    PIECE(raw, pl.own ? pl.Ck * (pl.fm.m + 1) : 0);
    PIECE(crow, pl.own ? M : 0);
    PIECE(prow, pl.own ? M : 0);
    PIECE(frow, pl.own ? M : 0);
#undef PIECE
    pl.thread_floats = off;
    set_threads(&pl, x ? x->threads : 1);
    return pl;
}

/* Non-causal prefill keeps one state per (b, kv head) between its two phases. */
static size_t states_bytes(const attn_shape *s, const plan *pl)
{
    return s->causal ? 0 : (size_t)(s->B * s->Hkv * pl->state_floats) * sizeof(float);
}

static plan decode_plan(const attn_shape *s, const attn_params *p, const attn_exec *x);

static size_t workspace_bytes(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p)
{
    const plan pl = s->decode ? decode_plan(s, p, x) : make_plan(s, p, x);
    if (s->decode) return pl.region_bytes;
    return states_bytes(s, &pl) + pl.region_bytes;
}

/* The decode state: one state per (b, kv head). */
static size_t state_bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const plan pl = make_plan(s, p, NULL);
    return (size_t)(s->B * s->Hkv * pl.state_floats) * sizeof(float);
}

/* favor, trig: the weight `features` W [m, D] (see the header); elu, relu: none. */
static int weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                   attn_weight *out)
{
    const attn_fm f = feature_map(s, p);
    if (!f.m) return 0;
    out[0] = (attn_weight){"features",
                           "random projections w_l, [m, D] (m = features): favor: orthogonal "
                           "blocks of N(0, I_D) rows; trig: i.i.d. N(0, I_D) rows",
                           2,
                           {f.m, f.D}};
    return 1;
}

static attn_status draw_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    const attn_fm f = feature_map(s, p);
    if (!f.m) return ATTN_OK;
    void *scratch = malloc(attn_fm_draw_bytes(&f) + 1);
    if (!scratch) return ATTN_EFAIL;
    attn_fm_draw(&f, (uint64_t)p->v[P_SEED], w[0], scratch);
    free(scratch);
    return ATTN_OK;
}

static attn_status check(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len)
{
    (void)p;
    if (s->decode && !s->causal)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "linear: decode mode is causal (the queries are the newest positions)");
    if (s->decode && s->T > s->S)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "linear: decode needs q_len %lld <= kv_len %lld (the queries are the "
                         "newest of the kv_len positions)",
                         (long long)s->T, (long long)s->S);
    return ATTN_OK;
}

/* ---- one chunk of the scan ---- */

/* The keys of one KV head, the query heads it answers, this thread's scratch; or, with flops
 * set, only counting what the same calls would compute. */
typedef struct task {
    const plan *pl;
    const attn_shape *s;
    const float *k, *v; /* [S, D] of the KV head */
    const float *q;     /* [T, D] of the first query head answered; the next at + T·D */
    float *out;         /* laid out as q */
    int64_t nh;         /* query heads answered */
    float *ws;          /* this thread's scratch (plan offsets) */
    double *flops;      /* count mode: add the flops here and compute nothing */
} task;

/* out rows = acc[:, 0..D) / den with den = acc[:, D], guarded (see the header). */
static void normalise(const task *t, int64_t nq, float *out)
{
    const plan *pl = t->pl;
    const int64_t D = t->s->D, E = pl->E;
    const float *acc = t->ws + pl->acc, *nrow = t->ws + pl->nrow;
    const bool trig = pl->fm.map == ATTN_FM_TRIG;
    for (int64_t i = 0; i < nq; i++) {
        float den = acc[i * E + D];
        if (trig) {
            const float floor_ = (float)(DEN_FLOOR * (double)pl->fm.m) * nrow[i];
            den = den > floor_ ? den : floor_;
        }
        if (den > 0) t->pl->fm.ks->linear.div(out + i * D, acc + i * E, den, D);
        else memset(out + i * D, 0, (size_t)D * sizeof(float));
    }
}

/* acc (+)= psi · KV' of state st (beta 0 or 1): the queries against the keys summed in st. */
static void from_state(const task *t, int64_t nq, const float *st, float beta)
{
    const plan *pl = t->pl;
    const int M = (int)pl->fm.M, E = (int)pl->E;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, E, M, 1.0f, t->ws + pl->psi, M,
                st, E, beta, t->ws + pl->acc, E);
}

/*
 * Query row i of a chunk (query qrow, seeing the chunk's first `sees` keys and state `in`) again
 * with its own shift, the maximum over the keys it sees: its largest term is then 1, where the
 * chunk's shift (over all the chunk's keys) let them all underflow. Fills its acc row and nrow.
 */
static void own_shift_row(const task *t, const float *qrow, int64_t i, int64_t sees,
                          const float *in)
{
    const plan *pl = t->pl;
    const attn_fm *f = &pl->fm;
    const int64_t M = f->M, m = f->m, E = pl->E;
    float *ws = t->ws, *raw = ws + pl->raw, *crow = ws + pl->crow, *prow = ws + pl->prow;
    float *frow = ws + pl->frow, *acc = ws + pl->acc + i * E;
    const float *c_in = in ? in + M * E : NULL;
    const bool trig = f->map == ATTN_FM_TRIG;
    for (int64_t l = 0; l < M; l++) crow[l] = c_in ? c_in[l] : -INFINITY;
    for (int64_t j = 0; j < sees; j++)
        for (int64_t l = 0; l < (trig ? 1 : m); l++)
            crow[l] = fmaxf(crow[l], raw[j * (m + 1) + (trig ? m : l)]);
    for (int64_t l = 1; l < M && trig; l++) crow[l] = crow[0];
    attn_fm_queries(f, qrow, 1, crow, prow);
    float nsum = 0;
    memset(acc, 0, (size_t)E * sizeof(float));
    for (int64_t j = 0; j < sees; j++) {
        nsum += attn_fm_key_from_raw(f, raw + j * (m + 1), crow, frow);
        t->pl->fm.ks->linear.axpy(acc, attn_vdot(t->pl->fm.ks, prow, frow, M), ws + pl->vx + j * E,
                                  E);
    }
    if (in) {
        for (int64_t l = 0; l < M; l++) prow[l] *= expf(c_in[l] - crow[l]);
        nsum += expf(c_in[0] - crow[0]) * in[M * E + M];
        cblas_sgemv(CblasRowMajor, CblasTrans, (int)M, (int)E, 1.0f, in, (int)E, prow, 1, 1.0f, acc,
                    1);
    }
    ws[pl->nrow + i] = nsum;
}

/*
 * Keys [j0, j1) of the task's KV head, answering queries [i0, i1) of each of its heads (their
 * positions lie in [j0, j1)): intra-chunk with the masked products, inter-chunk from state `in`
 * (the keys before j0; NULL: none). With upd, the state after j1 goes there (upd may be in).
 */
static void step(const task *t, int64_t j0, int64_t j1, int64_t i0, int64_t i1, const float *in,
                 float *upd)
{
    const plan *pl = t->pl;
    const attn_shape *s = t->s;
    const attn_fm *f = &pl->fm;
    const int64_t D = s->D, M = f->M, E = pl->E, T = s->T, nk = j1 - j0, nq = i1 - i0;
    const bool shifted = attn_fm_shifted(f), trig = f->map == ATTN_FM_TRIG;
    if (t->flops) {
        double fl = attn_fm_flops(f, nk, true) + (shifted ? M : 0) + (trig ? nk : 0);
        if (nq > 0)
            fl += (double)t->nh * (attn_fm_flops(f, nq, false) + 2.0 * nq * nk * (M + E) +
                                   (in ? 2.0 * nq * M * E + (shifted ? nq * M : 0) : 0) + nq * D);
        if (upd) fl += 2.0 * nk * M * E + (in && shifted ? M * E : 0);
        *t->flops += fl;
        return;
    }
    float *ws = t->ws, *phik = ws + pl->phik, *psi = ws + pl->psi, *a = ws + pl->a;
    float *vx = ws + pl->vx, *cnew = ws + pl->cnew, *r = ws + pl->r, *wk = ws + pl->wk;
    const float *c_in = in ? in + M * E : NULL, nsum_in = in ? in[M * E + M] : 0.0f;

    /* key features; shift c_new = max(c_in, chunk maxima); r = exp(c_in - c_new) rescales in */
    attn_fm_keys(f, t->k + j0 * D, nk, c_in, cnew, phik, wk, pl->own ? ws + pl->raw : NULL);
    if (shifted && in) t->pl->fm.ks->linear.exp_sub(c_in, cnew, r, M);
    else if (shifted) memset(r, 0, (size_t)M * sizeof(float));
    if (trig) /* prefix sums of the key weights (for the denominator floor) */
        for (int64_t j = 1; j < nk; j++) wk[j] += wk[j - 1];
    for (int64_t j = 0; j < nk; j++) {
        memcpy(vx + j * E, t->v + (j0 + j) * D, (size_t)D * sizeof(float));
        vx[j * E + D] = 1.0f;
    }

    for (int64_t hh = 0; hh < t->nh && nq > 0; hh++) {
        const float *qh = t->q + (hh * T + i0) * D;
        attn_fm_queries(f, qh, nq, cnew, psi);
        /* intra-chunk: scores φ(Q_c)φ(K_c)ᵀ, causal mask, then [V_c, 1] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)M, 1.0f, psi,
                    (int)M, phik, (int)M, 0.0f, a, (int)nk);
        float *nrow = ws + pl->nrow;
        for (int64_t i = 0; i < nq; i++) {
            const int64_t sees = clamp64(i0 + i + s->S - T - j0 + 1, 0, nk); /* keys of the chunk */
            memset(a + i * nk + sees, 0, (size_t)(nk - sees) * sizeof(float));
            if (trig) nrow[i] = (in ? r[0] * nsum_in : 0.0f) + (sees ? wk[sees - 1] : 0.0f);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)E, (int)nk, 1.0f, a,
                    (int)nk, vx, (int)E, 0.0f, ws + pl->acc, (int)E);
        /* inter-chunk: (ψ ∘ r) · KV'_in */
        if (in) {
            for (int64_t i = 0; i < nq && shifted; i++) t->pl->fm.ks->linear.mul(psi + i * M, r, M);
            from_state(t, nq, in, 1.0f);
        }
        for (int64_t i = 0; i < nq && pl->own; i++) /* underflowed rows (see the header) */
            if ((trig ? nrow[i] : ws[pl->acc + i * E + D]) < OWN_SHIFT_BELOW)
                own_shift_row(t, qh + i * D, i, clamp64(i0 + i + s->S - T - j0 + 1, 0, nk), in);
        normalise(t, nq, t->out + (hh * T + i0) * D);
    }

    if (!upd) return;
    /* state update: KV' = r ∘ KV'_in + φ(K_c)ᵀ [V_c, 1];  c = c_new;  Σ weights */
    float beta = 1.0f;
    if (!in) beta = 0.0f;
    else if (shifted)
        for (int64_t l = 0; l < M; l++)
            t->pl->fm.ks->linear.scale_copy(upd + l * E, in + l * E, r[l], E);
    else if (upd != in) memcpy(upd, in, (size_t)(M * E) * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)M, (int)E, (int)nk, 1.0f, phik,
                (int)M, vx, (int)E, beta, upd, (int)E);
    if (shifted) memcpy(upd + M * E, cnew, (size_t)M * sizeof(float));
    upd[M * E + M] = (in ? (shifted ? r[0] : 1.0f) * nsum_in : 0.0f) + (trig ? wk[nk - 1] : 0.0f);
}

/*
 * Keys [j_begin, j_end) in chunks of Ck from state `in` (keys [0, j_begin); NULL: none). answer:
 * each chunk answers the queries whose positions fall in it (causal). keep: the final state
 * ends in `work`, which otherwise holds the running state between chunks.
 */
static void scan(const task *t, int64_t j_begin, int64_t j_end, const float *in, float *work,
                 bool answer, bool keep)
{
    const int64_t S = t->s->S, T = t->s->T, Ck = t->pl->Ck;
    const float *cur = in;
    for (int64_t j0 = j_begin; j0 < j_end; j0 += Ck) {
        const int64_t j1 = min64(j0 + Ck, j_end);
        const int64_t i0 = answer ? clamp64(j0 - (S - T), 0, T) : 0;
        const int64_t i1 = answer ? clamp64(j1 - (S - T), 0, T) : 0;
        float *upd = j1 < j_end || keep ? work : NULL;
        step(t, j0, j1, i0, i1, cur, upd);
        cur = upd;
    }
}

/* Queries [i0, i0 + nq) of the task's head from a finished state st (non-causal). */
static void answer_block(const task *t, int64_t i0, int64_t nq, const float *st)
{
    const plan *pl = t->pl;
    const int64_t D = t->s->D, M = pl->fm.M, E = pl->E;
    if (t->flops) {
        *t->flops += attn_fm_flops(&pl->fm, nq, false) + 2.0 * nq * M * E + nq * D;
        return;
    }
    attn_fm_queries(&pl->fm, t->q + i0 * D, nq, st + M * E, t->ws + pl->psi);
    from_state(t, nq, st, 0.0f);
    for (int64_t i = 0; i < nq; i++) t->ws[pl->nrow + i] = st[M * E + M];
    normalise(t, nq, t->out + i0 * D);
}

/* The task of KV head (b, g) answering nh query heads from head h (no queries when nh = 0). */
static task make_task(const plan *pl, const attn_shape *s, int64_t b, int64_t g, int64_t h,
                      int64_t nh, const float *q, const float *k, const float *v, float *out,
                      float *ws, double *flops)
{
    const int64_t kv_off = (b * s->Hkv + g) * s->S * s->D, q_off = (b * s->H + h) * s->T * s->D;
    task t = {pl, s, k + kv_off, v + kv_off, q + q_off, out + q_off, nh, ws, flops};
    return t;
}

/* The whole prefill (or, with flops, its count: every task has the same shape). */
static void prefill(const plan *pl, const attn_shape *s, const float *q, const float *k,
                    const float *v, float *out, float *states, char *region, double *flops)
{
    const int64_t B = s->B, H = s->H, Hkv = s->Hkv, T = s->T, S = s->S, D = s->D;
    const int64_t group = H / Hkv, nqb = (T + pl->Cq - 1) / pl->Cq;
    float dummy[1];
    if (flops) { /* one task of each phase, times their number */
        double one = 0;
        task t = {pl, s, k, v, q, out, 1, NULL, &one};
        if (s->causal) {
            scan(&t, 0, S, NULL, dummy, true, false);
            *flops = one * (double)(B * H);
            return;
        }
        scan(&t, 0, S, NULL, dummy, false, true);
        *flops = one * (double)(B * Hkv);
        one = 0;
        for (int64_t i0 = 0; i0 < T; i0 += pl->Cq)
            answer_block(&t, i0, min64(pl->Cq, T - i0), dummy);
        *flops += one * (double)(B * H);
        return;
    }
#pragma omp parallel num_threads(pl->threads)
    {
        float *mine = (float *)region + (size_t)omp_get_thread_num() * (size_t)pl->thread_floats;
        if (s->causal) {
#pragma omp for schedule(dynamic, 1)
            for (int64_t bh = 0; bh < B * H; bh++) {
                const int64_t b = bh / H, h = bh % H;
                task t = make_task(pl, s, b, h / group, h, 1, q, k, v, out, mine, NULL);
                const int64_t blind = clamp64(T - S, 0, T); /* positions < 0 see no key */
                memset(t.out, 0, (size_t)(blind * D) * sizeof(float));
                scan(&t, 0, S, NULL, mine + pl->state, true, false);
            }
        } else if (B * Hkv >= pl->threads) { /* one task per group: no barrier between phases */
#pragma omp for schedule(dynamic, 1)
            for (int64_t bg = 0; bg < B * Hkv; bg++) {
                const int64_t b = bg / Hkv, g = bg % Hkv;
                float *st = states + bg * pl->state_floats;
                task t = make_task(pl, s, b, g, 0, 0, q, k, v, out, mine, NULL);
                scan(&t, 0, S, NULL, st, false, true);
                for (int64_t h = g * group; h < (g + 1) * group; h++) {
                    task th = make_task(pl, s, b, g, h, 1, q, k, v, out, mine, NULL);
                    for (int64_t i0 = 0; i0 < T; i0 += pl->Cq)
                        answer_block(&th, i0, min64(pl->Cq, T - i0), st);
                }
            }
        } else {
#pragma omp for schedule(dynamic, 1)
            for (int64_t bg = 0; bg < B * Hkv; bg++) {
                task t = make_task(pl, s, bg / Hkv, bg % Hkv, 0, 0, q, k, v, out, mine, NULL);
                scan(&t, 0, S, NULL, states + bg * pl->state_floats, false, true);
            }
#pragma omp for schedule(dynamic, 1)
            for (int64_t task_id = 0; task_id < B * H * nqb; task_id++) {
                const int64_t bh = task_id / nqb, b = bh / H, h = bh % H, g = h / group;
                const int64_t i0 = (task_id % nqb) * pl->Cq;
                task t = make_task(pl, s, b, g, h, 1, q, k, v, out, mine, NULL);
                answer_block(&t, i0, min64(pl->Cq, T - i0),
                             states + (b * Hkv + g) * pl->state_floats);
            }
        }
    }
}

static attn_status forward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace)
{
    const attn_status given = attn_weights_given(self, s, p, NULL, 0);
    if (given != ATTN_OK) return given;
    const plan pl = make_plan(s, p, x);
    float *states = workspace;
    char *region = (char *)workspace + states_bytes(s, &pl);
    attn_blas_threads(1);
    prefill(&pl, s, q, k, v, out, states, region, NULL);
    return ATTN_OK;
}

/* ---- decode from the recurrent state ---- */

static attn_status prepare(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *k, const float *v, void *state,
                           void *workspace)
{
    const attn_status given = attn_weights_given(self, s, p, NULL, 0);
    if (given != ATTN_OK) return given;
    const plan pl = decode_plan(s, p, x);
    float *states = state;
    attn_blas_threads(1);
    const int64_t B = s->B, Hkv = s->Hkv, prefix = s->S - s->T;
#pragma omp parallel for schedule(dynamic, 1) num_threads(pl.threads)
    for (int64_t bg = 0; bg < B * Hkv; bg++) {
        float *mine = (float *)workspace + (size_t)omp_get_thread_num() * (size_t)pl.thread_floats;
        task t = make_task(&pl, s, bg / Hkv, bg % Hkv, 0, 0, NULL, k, v, NULL, mine, NULL);
        scan(&t, 0, prefix, NULL, states + bg * pl.state_floats, false, true);
    }
    return ATTN_OK;
}

/* The decode step: per (b, kv head) the keys [S-T, S) from the prepared state, answering the
 * H/Hkv query heads of the group (or, with flops, its count). */
static void decode_step(const plan *pl, const attn_shape *s, const float *q, const float *k,
                        const float *v, float *out, const float *states, void *workspace,
                        double *flops)
{
    const int64_t B = s->B, Hkv = s->Hkv, group = s->H / Hkv, prefix = s->S - s->T;
    if (flops) {
        float dummy[1];
        task t = {pl, s, k, v, q, out, group, NULL, flops};
        *flops = 0;
        scan(&t, prefix, s->S, prefix > 0 ? dummy : NULL, dummy, true, false);
        *flops *= (double)(B * Hkv);
        return;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(pl->threads)
    for (int64_t bg = 0; bg < B * Hkv; bg++) {
        float *mine = (float *)workspace + (size_t)omp_get_thread_num() * (size_t)pl->thread_floats;
        const int64_t b = bg / Hkv, g = bg % Hkv;
        task t = make_task(pl, s, b, g, g * group, group, q, k, v, out, mine, NULL);
        scan(&t, prefix, s->S, prefix > 0 ? states + bg * pl->state_floats : NULL, mine + pl->state,
             true, false);
    }
}

/* The decode plan: one thread when the step is small (DECODE_SERIAL_FLOPS); prepare uses the
 * same threads, so the workspace fits both. */
static plan decode_plan(const attn_shape *s, const attn_params *p, const attn_exec *x)
{
    plan pl = make_plan(s, p, x);
    double fl;
    decode_step(&pl, s, NULL, NULL, NULL, NULL, NULL, NULL, &fl);
    if (fl < DECODE_SERIAL_FLOPS) set_threads(&pl, 1);
    return pl;
}

static attn_status decode(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                          const attn_params *p, const float *q, const float *k, const float *v,
                          float *out, const void *state, void *workspace)
{
    const attn_status given = attn_weights_given(self, s, p, NULL, 0);
    if (given != ATTN_OK) return given;
    const plan pl = decode_plan(s, p, x);
    attn_blas_threads(1);
    decode_step(&pl, s, q, k, v, out, state, workspace, NULL);
    return ATTN_OK;
}

/* ---- counts ---- */

static double flops(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const plan pl = make_plan(s, p, NULL);
    double fl = 0;
    if (s->decode) decode_step(&pl, s, NULL, NULL, NULL, NULL, NULL, NULL, &fl);
    else prefill(&pl, s, NULL, NULL, NULL, NULL, NULL, NULL, &fl);
    return fl;
}

static double bytes(const attn_ops *self, const attn_shape *s, const attn_params *p)
{
    const double qb = sizeof(float) * (double)attn_q_elems(s);
    const plan pl = make_plan(s, p, NULL);
    const double W = sizeof(float) * (double)attn_fm_w_floats(&pl.fm);
    if (!s->decode) return 2.0 * qb + 2.0 * sizeof(float) * (double)attn_kv_elems(s) + W;
    const double kv_heads = (double)(s->B * s->Hkv);
    const double state = s->S > s->T ? kv_heads * (double)pl.state_used : 0;
    return 2.0 * qb + W + sizeof(float) * (state + 2.0 * kv_heads * (double)(s->T * s->D));
}

/* The float64 definition (linear_reference.c) with the weight `features` forward reads. */
static attn_status reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out)
{
    const attn_status given = attn_weights_given(self, s, p, NULL, 0);
    if (given != ATTN_OK) return given;
    const attn_fm f = feature_map(s, p);
    return attn_fm_reference(&f, DEN_FLOOR, s, q, k, v, rows, nrows, out);
}

/* ---- training: linear_backward.c (nothing saved: the backward recomputes the states) ---- */

static size_t backward_workspace_bytes(const attn_ops *self, const attn_exec *x,
                                       const attn_shape *s, const attn_params *p)
{
    const attn_fm f = feature_map(s, p);
    return attn_linear_backward_bytes(x, &f, (int64_t)p->v[P_CHUNK], s);
}

static attn_status backward(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            const float *out, const void *saved, const float *dout, float *dq,
                            float *dk, float *dv, void *workspace)
{
    (void)out, (void)saved;
    const attn_fm f = feature_map(s, p);
    return attn_linear_backward(x, &f, (int64_t)p->v[P_CHUNK], DEN_FLOOR, s, q, k, v, dout, dq, dk,
                                dv, workspace);
}

static attn_status reference_backward(const attn_ops *self, const attn_shape *s,
                                      const attn_params *p, const float *q, const float *k,
                                      const float *v, const float *dout, double *dq, double *dk,
                                      double *dv)
{
    const attn_fm f = feature_map(s, p);
    return attn_fm_reference_backward(&f, DEN_FLOOR, s, q, k, v, dout, dq, dk, dv);
}

static const attn_decode_ops decode_ops = {
    .state_bytes = state_bytes,
    .prepare = prepare,
    .step = decode,
};

static const attn_weight_ops weight_ops = {
    .list = weights,
    .draw = draw_weights,
};

static const attn_train_ops train_ops = {
    .workspace_bytes = backward_workspace_bytes,
    .backward = backward,
    .reference = reference_backward,
};

const attn_ops attn_kind_linear = {
    .name = "linear",
    .summary = "linearised attention phi(Q)(phi(K)^T V): elu, relu, favor (FAVOR+), trig (RFA)",
    .definition =
        "out_i = phi(q_i)^T sum_j phi(k_j) v_j^T / phi(q_i)^T sum_j phi(k_j) over every key j\n"
        "(causal: j <= i + S - T). map: elu(x)+1 (Katharopoulos 2020), relu, favor: positive\n"
        "orthogonal random features of exp(q.k/sqrt(D)) (Performer FAVOR+, Choromanski 2021),\n"
        "trig: random Fourier sin/cos features of exp(q.k/sqrt(D)) (RFA, Peng 2021); random\n"
        "projections w_l: the weight `features` [m, D] (drawn from `seed`, or given), seen as\n"
        "w_l . q / D^(1/4). trig's denominator is floored at 1e-3 |phi(q)| sum |phi(k)|; a\n"
        "row with denominator 0 is 0. Non-causal: phi(K)^T [V 1] per KV head by sgemm;\n"
        "causal: chunked scan; decode: recurrent state of the first S-T keys.",
    .params = ATTN_PARAM_TABLE("linear", params),
    .check = check,
    .workspace_bytes = workspace_bytes,
    .flops = flops,
    .bytes = bytes,
    .forward = forward,
    .reference = reference,
    .decode = &decode_ops,
    .weights = &weight_ops,
    .train = &train_ops,
};
