/*
 * linear_backward.c — the backward pass of linear attention (linear.c) for every feature map:
 * dq, dk, dv of out_i = ψ_i·S_i[:, :D] / ψ_i·S_i[:, D], S_i = Σ_(j seen) φ(k_j)[v_j, 1] ([M, E],
 * E = D + 1), the weights W constant. Float64 definition of the gradient: linear_reference.c.
 *   q, dq [B,H,T,D]  k, v, dk, dv [B,Hkv,S,D]   per (b, kv head), its H/Hkv query heads together
 * Per row, from acc = ψ_i S_i: den = acc[D] (trig: floored at F·m·Σ_(j seen) w_j as the forward),
 *   o = acc[:D] / den, G_i = [dout_i / den, -dout_i·o / den] (den's entry 0 and fl_i =
 *   -dout_i·o·F·m / den when floored; G = 0 for a zero row); then dψ_i = G_i S_iᵀ and every key j
 *   the row sees gets dφ(k_j) += (G_i·[v_j, 1]) ψ_i, d[v_j, 1] += (ψ_i·φ(k_j)) G_i, and (trig
 *   floor) fl_i on its log-weight; dq and dk through the features (attn_fm_backward).
 * Non-causal: S = Σ_j φ(k_j)[v_j, 1] once; dq rows from G·Sᵀ; R = Σ_i ψ_iᵀ G_i ([M, E]); then
 *   dφ(K) = [V 1]·Rᵀ, dV = φ(K)·R[:, :D]: sgemms over blocks of BLOCK rows.
 * Causal: a forward scan over chunks of `chunk` keys keeps the state before each chunk (the
 *   states per chunk: O(S/chunk · M·E) floats per thread); then a reverse scan from the last chunk
 *   carries R = Σ ψ_iᵀ G_i over the queries of the later chunks: chunk c's keys get [V_c 1]·Rᵀ and
 *   φ(K_c)·R, its queries dψ = G S_inᵀ + mask(G [V_c 1]ᵀ) φ(K_c), and its keys the masked
 *   intra-chunk terms; then R += ψ_cᵀ G_c. O(n·M·D) time.
 * Shifts: the keys' features use one shift per (b, kv head) over all its keys (a first pass),
 *   so both scans see the same constants; the forward's per-row fallback for rows whose keys all
 *   underflow (inputs ~10× unit variance) is not repeated: such rows get the gradient of zero.
 *   time O(B·H·n·M·D) (+ O(n·chunk·(M+D)) causal)   flops counted 2.5 × forward (attention.h)
 *   workspace: per thread, C = chunk (causal) or BLOCK rows clipped to S and T: key features,
 *          their gradients [C, M] each, [V 1] and its gradient [C, E], query features and their
 *          gradients [C, M] each, scores and their gradients [C, C] each, acc and G [C, E],
 *          dx [C, D], a few rows of M and C, R [M·E + 1]; non-causal one state [M·E + 1];
 *          causal one state per chunk. (W is an input, not workspace.)
 *   loops: sgemm for every product; the row gradients (row_grads) and the features' gradients by
 *          the kernel set in force (kernels/linear_body.h).
 *   threads: OpenMP over (b, kv head), dynamic: a thread owns the dk, dv of its KV head and the
 *            dq rows of its query heads; OpenBLAS single-threaded inside.
 */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "feature_maps.h"
#include "kernel_set.h"
#include "kernels.h"

enum { BLOCK = 128 }; /* non-causal rows per block (as the forward) */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; }

typedef struct bplan {
    int64_t C, Ck, Cq, E, nchunks, state;
    int64_t phik, dphik, vx, dvx, wk, dwk, psi, dpsi, a, da, acc, g, fl, nrow, dx, cstar, cnew, r,
        states, floats;
} bplan;

static bplan make_bplan(const attn_fm *f, int64_t chunk, const attn_shape *s)
{
    bplan b;
    const int64_t M = f->M;
    b.C = s->causal ? chunk : BLOCK;
    b.Ck = min64(b.C, s->S), b.Cq = min64(b.C, s->T), b.E = s->D + 1;
    b.nchunks = (s->S + b.Ck - 1) / b.Ck;
    b.state = pad16(M * b.E + 1); /* S [M, E] and Σ w (trig) */
    int64_t off = 0;
#define PIECE(name, n) (b.name = off, off += pad16(n))
    PIECE(phik, b.Ck * M);
    PIECE(dphik, b.Ck * M);
    PIECE(vx, b.Ck * b.E);
    PIECE(dvx, b.Ck * b.E);
    PIECE(wk, b.Ck);
    PIECE(dwk, b.Ck);
    PIECE(psi, b.Cq * M);
    PIECE(dpsi, b.Cq * M);
    PIECE(a, s->causal ? b.Cq * b.Ck : 0);
    PIECE(da, s->causal ? b.Cq * b.Ck : 0);
    PIECE(acc, b.Cq * b.E);
    PIECE(g, b.Cq * b.E);
    PIECE(fl, b.Cq);
    PIECE(nrow, b.Cq);
    PIECE(dx, max64(b.Cq, b.Ck) * s->D);
    PIECE(cstar, M);
    PIECE(cnew, M);
    PIECE(r, b.state);
    PIECE(states, (s->causal ? b.nchunks : 1) * b.state);
#undef PIECE
    b.floats = off;
    return b;
}

size_t attn_linear_backward_bytes(const attn_exec *x, const attn_fm *f, int64_t chunk,
                                  const attn_shape *s)
{
    const int64_t groups = s->B * s->Hkv, threads = min64(x->threads, groups);
    return (size_t)(threads * make_bplan(f, chunk, s).floats) * sizeof(float);
}

/* One (b, kv head) and this thread's scratch. */
typedef struct lb {
    const attn_fm *f;
    const attn_shape *s;
    const bplan *bp;
    double den_floor;
    const float *kg, *vg, *q, *dout; /* q, dout of the group's first query head; next + T·D */
    float *dq, *dkg, *dvg, *ws;
    int64_t nh;
} lb;

/* Features of keys [j0, j0 + nk) under the head's shift, [V 1] and (trig) weights. */
static void key_features(const lb *t, int64_t j0, int64_t nk)
{
    const bplan *bp = t->bp;
    const int64_t D = t->s->D, E = bp->E;
    float *ws = t->ws;
    attn_fm_keys(t->f, t->kg + j0 * D, nk, ws + bp->cstar, ws + bp->cnew, ws + bp->phik,
                 ws + bp->wk, NULL);
    for (int64_t j = 0; j < nk; j++) {
        memcpy(ws + bp->vx + j * E, t->vg + (j0 + j) * D, (size_t)D * sizeof(float));
        ws[bp->vx + j * E + D] = 1.0f;
    }
}

/* The head's shift: the running maximum over all its keys (favor per feature, trig one). */
static void head_shift(const lb *t)
{
    const bplan *bp = t->bp;
    float *c = t->ws + bp->cstar;
    if (!attn_fm_shifted(t->f)) return;
    for (int64_t l = 0; l < t->f->M; l++) c[l] = -INFINITY;
    for (int64_t j0 = 0; j0 < t->s->S; j0 += bp->Ck) {
        key_features(t, j0, min64(bp->Ck, t->s->S - j0));
        memcpy(c, t->ws + bp->cnew, (size_t)t->f->M * sizeof(float));
    }
}

/* G and fl of nq rows from acc and nrow (their Σ w), dout rows dt: see the header. */
static void row_grads(const lb *t, int64_t nq, const float *dt)
{
    const bplan *bp = t->bp;
    const int64_t D = t->s->D, E = bp->E;
    float *ws = t->ws, *acc = ws + bp->acc, *G = ws + bp->g, *fl = ws + bp->fl;
    const bool trig = t->f->map == ATTN_FM_TRIG;
    for (int64_t i = 0; i < nq; i++) {
        float den = acc[i * E + D], *g = G + i * E;
        const float floor_ = (float)(t->den_floor * (double)t->f->m) * ws[bp->nrow + i];
        const bool floored = trig && den <= floor_;
        if (floored) den = floor_;
        fl[i] = 0.0f;
        if (!(den > 0.0f)) {
            memset(g, 0, (size_t)E * sizeof(float));
            continue;
        }
        const float gden = t->f->ks->linear.grad_row(g, dt + i * D, acc + i * E, den, D);
        g[D] = floored ? 0.0f : gden;
        if (floored) fl[i] = gden * (float)(t->den_floor * (double)t->f->m);
    }
}

/* dq rows of nq queries (q rows qt) from dpsi: through the query features. */
static void query_grads(const lb *t, int64_t nq, const float *qt, float *dq)
{
    float *ws = t->ws;
    attn_fm_backward(t->f, qt, nq, false, ws + t->bp->psi, ws + t->bp->dpsi, NULL, dq);
}

/* dk, dv of keys [j0, j0 + nk) from dphik, dvx, dwk (the floor's share of each weight). */
static void key_grads(const lb *t, int64_t j0, int64_t nk)
{
    const bplan *bp = t->bp;
    const int64_t D = t->s->D, E = bp->E;
    float *ws = t->ws;
    for (int64_t j = 0; j < nk; j++) {
        memcpy(t->dvg + (j0 + j) * D, ws + bp->dvx + j * E, (size_t)D * sizeof(float));
        ws[bp->dwk + j] *= ws[bp->wk + j];
    }
    attn_fm_backward(t->f, t->kg + j0 * D, nk, true, ws + bp->phik, ws + bp->dphik, ws + bp->dwk,
                     t->dkg + j0 * D);
}

/* [V 1] Rᵀ into dphik and φ(K) R into dvx (beta 0): the keys' share of later queries. */
static void from_r(const lb *t, int64_t nk)
{
    const bplan *bp = t->bp;
    const int M = (int)t->f->M, E = (int)bp->E;
    float *ws = t->ws, *R = ws + bp->r;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nk, M, E, 1.0f, ws + bp->vx, E, R, E,
                0.0f, ws + bp->dphik, M);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nk, E, M, 1.0f, ws + bp->phik, M, R,
                E, 0.0f, ws + bp->dvx, E);
    for (int64_t j = 0; j < nk; j++) ws[bp->dwk + j] = R[M * E];
}

/* R += ψᵀ G over nq rows, and its floor sum. */
static void into_r(const lb *t, int64_t nq)
{
    const bplan *bp = t->bp;
    const int M = (int)t->f->M, E = (int)bp->E;
    float *ws = t->ws, *R = ws + bp->r;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, E, (int)nq, 1.0f, ws + bp->psi, M,
                ws + bp->g, E, 1.0f, R, E);
    for (int64_t i = 0; i < nq; i++) R[M * E] += ws[bp->fl + i];
}

/* acc = ψ·st, dψ = G·stᵀ (beta 0) for nq rows: the state's part. */
static void state_product(const lb *t, int64_t nq, const float *st, bool grads)
{
    const bplan *bp = t->bp;
    const int M = (int)t->f->M, E = (int)bp->E;
    float *ws = t->ws;
    if (!grads)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, E, M, 1.0f, ws + bp->psi, M,
                    st, E, 0.0f, ws + bp->acc, E);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, M, E, 1.0f, ws + bp->g, E, st,
                    E, 0.0f, ws + bp->dpsi, M);
}

/* st += φ(K)ᵀ[V 1] and Σ w of nk keys. */
static void add_keys(const lb *t, int64_t nk, float *st)
{
    const bplan *bp = t->bp;
    const int M = (int)t->f->M, E = (int)bp->E;
    float *ws = t->ws;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, E, (int)nk, 1.0f, ws + bp->phik, M,
                ws + bp->vx, E, 1.0f, st, E);
    for (int64_t j = 0; j < nk; j++) st[M * E] += ws[bp->wk + j];
}

static void noncausal(const lb *t)
{
    const bplan *bp = t->bp;
    const attn_shape *s = t->s;
    const int64_t S = s->S, T = s->T, D = s->D, M = t->f->M, E = bp->E;
    float *ws = t->ws, *st = ws + bp->states;
    memset(st, 0, (size_t)bp->state * sizeof(float));
    for (int64_t j0 = 0; j0 < S; j0 += bp->Ck) {
        const int64_t nk = min64(bp->Ck, S - j0);
        key_features(t, j0, nk);
        add_keys(t, nk, st);
    }
    memset(ws + bp->r, 0, (size_t)bp->state * sizeof(float));
    for (int64_t h = 0; h < t->nh; h++)
        for (int64_t i0 = 0; i0 < T; i0 += bp->Cq) {
            const int64_t nq = min64(bp->Cq, T - i0), row = h * T + i0;
            attn_fm_queries(t->f, t->q + row * D, nq, ws + bp->cstar, ws + bp->psi);
            state_product(t, nq, st, false);
            for (int64_t i = 0; i < nq; i++) ws[bp->nrow + i] = st[M * E];
            row_grads(t, nq, t->dout + row * D);
            state_product(t, nq, st, true);
            query_grads(t, nq, t->q + row * D, t->dq + row * D);
            into_r(t, nq);
        }
    for (int64_t j0 = 0; j0 < S; j0 += bp->Ck) {
        const int64_t nk = min64(bp->Ck, S - j0);
        key_features(t, j0, nk);
        from_r(t, nk);
        key_grads(t, j0, nk);
    }
}

/* Zero the scores of queries [0, nq) (positions p0 + i) at keys j0 + x > position. */
static void causal_mask(float *a, int64_t nq, int64_t nk, int64_t p0, int64_t j0)
{
    for (int64_t i = 0; i < nq; i++)
        for (int64_t x = max64(0, p0 + i - j0 + 1); x < nk; x++) a[i * nk + x] = 0.0f;
}

/* Queries of head h whose positions fall in chunk [j0, j0 + nk), state st_in before it. */
static void causal_queries(const lb *t, int64_t h, int64_t j0, int64_t nk, const float *st_in)
{
    const bplan *bp = t->bp;
    const attn_shape *s = t->s;
    const int64_t T = s->T, D = s->D, M = t->f->M, E = bp->E, shift = s->S - s->T;
    const int64_t i0 = max64(0, j0 - shift), i1 = min64(T, max64(0, j0 + nk - shift));
    const int64_t nq = i1 - i0, row = h * T + i0;
    if (nq <= 0) return;
    float *ws = t->ws, *a = ws + bp->a, *da = ws + bp->da;
    const int im = (int)M, ie = (int)E, ik = (int)nk, iq = (int)nq;
    attn_fm_queries(t->f, t->q + row * D, nq, ws + bp->cstar, ws + bp->psi);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, iq, ik, im, 1.0f, ws + bp->psi, im,
                ws + bp->phik, im, 0.0f, a, ik);
    causal_mask(a, nq, nk, i0 + shift, j0);
    state_product(t, nq, st_in, false);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, iq, ie, ik, 1.0f, a, ik, ws + bp->vx, ie,
                1.0f, ws + bp->acc, ie);
    for (int64_t i = 0; i < nq; i++) {
        float sum = st_in[M * E];
        for (int64_t x = 0; x <= i0 + shift + i - j0 && x < nk; x++) sum += ws[bp->wk + x];
        ws[bp->nrow + i] = sum;
    }
    row_grads(t, nq, t->dout + row * D);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, iq, ik, ie, 1.0f, ws + bp->g, ie,
                ws + bp->vx, ie, 0.0f, da, ik);
    causal_mask(da, nq, nk, i0 + shift, j0);
    state_product(t, nq, st_in, true);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, iq, im, ik, 1.0f, da, ik, ws + bp->phik,
                im, 1.0f, ws + bp->dpsi, im);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ik, im, iq, 1.0f, da, ik, ws + bp->psi, im,
                1.0f, ws + bp->dphik, im);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ik, ie, iq, 1.0f, a, ik, ws + bp->g, ie,
                1.0f, ws + bp->dvx, ie);
    for (int64_t i = 0; i < nq; i++) /* the floor: keys x <= the row's position */
        for (int64_t x = 0; x <= i0 + shift + i - j0 && x < nk; x++)
            ws[bp->dwk + x] += ws[bp->fl + i];
    query_grads(t, nq, t->q + row * D, t->dq + row * D);
    into_r(t, nq);
}

static void causal(const lb *t)
{
    const bplan *bp = t->bp;
    const int64_t S = t->s->S;
    float *ws = t->ws, *states = ws + bp->states;
    float *st = states; /* the state before chunk c is states[c] */
    memset(st, 0, (size_t)bp->state * sizeof(float));
    for (int64_t c = 0; c + 1 < bp->nchunks; c++) {
        const int64_t j0 = c * bp->Ck;
        key_features(t, j0, min64(bp->Ck, S - j0));
        memcpy(st + bp->state, st, (size_t)bp->state * sizeof(float));
        st += bp->state;
        add_keys(t, min64(bp->Ck, S - j0), st);
    }
    memset(ws + bp->r, 0, (size_t)bp->state * sizeof(float));
    for (int64_t c = bp->nchunks - 1; c >= 0; c--) {
        const int64_t j0 = c * bp->Ck, nk = min64(bp->Ck, S - j0);
        key_features(t, j0, nk);
        from_r(t, nk); /* the later chunks' queries, before this chunk's join R */
        for (int64_t h = 0; h < t->nh; h++) causal_queries(t, h, j0, nk, states + c * bp->state);
        key_grads(t, j0, nk);
    }
}

attn_status attn_linear_backward(const attn_exec *x, const attn_fm *f, int64_t chunk,
                                 double den_floor, const attn_shape *s, const float *q,
                                 const float *k, const float *v, const float *dout, float *dq,
                                 float *dk, float *dv, void *workspace)
{
    const bplan bp = make_bplan(f, chunk, s);
    const int64_t T = s->T, S = s->S, D = s->D, group = s->H / s->Hkv, groups = s->B * s->Hkv;
    attn_fm on = *f; /* its row loops on x's kernel set */
    on.ks = x->ks;
    attn_blas_threads(1);

#pragma omp parallel num_threads((int)min64(x->threads, groups))
    {
        float *ws = (float *)workspace + (int64_t)omp_get_thread_num() * bp.floats;
#pragma omp for schedule(dynamic, 1)
        for (int64_t bg = 0; bg < groups; bg++) {
            const int64_t first = (bg / s->Hkv * s->H + bg % s->Hkv * group) * T * D;
            const lb t = {.f = &on,
                          .s = s,
                          .bp = &bp,
                          .den_floor = den_floor,
                          .kg = k + bg * S * D,
                          .vg = v + bg * S * D,
                          .q = q + first,
                          .dout = dout + first,
                          .dq = dq + first,
                          .dkg = dk + bg * S * D,
                          .dvg = dv + bg * S * D,
                          .ws = ws,
                          .nh = group};
            memset(t.dq, 0, (size_t)(group * T * D) * sizeof(float)); /* rows seeing no key */
            head_shift(&t);
            if (s->causal) causal(&t);
            else noncausal(&t);
        }
    }
    return ATTN_OK;
}
