/*
 * tile_body.h — the dense tile's GEMM micro-kernels (kernel_set.h: attn_ks_tile), written once
 * against the vector layer and register-blocked per set: TILE_MR rows × TILE_NR vectors of
 * accumulators (the set file's constants: avx512 6 × 4 of 32 registers, avx2 6 × 2 of 16,
 * portable 4 × 4 scalars). This file: the packing, scores and p·v micro-kernels, the single-score
 * backward loops and the streaming stores; the fused visits are tile_attend_body.h (attend),
 * tile_own_body.h (attend_own) and tile_lanes_body.h (attend_lanes), included after it.
 *   pack_kt  kt [D, ldk] = kᵀ of a key block k [cols, D] (row stride ldkv), zero columns
 *            cols..ldk: the keys along the lanes, so that the scores need no horizontal sum
 *            (in-register transposes where the layer has them: vtrans16, vtrans8). O(cols·D),
 *            no flops.
 *   pack_kt_rows  pack_kt of the rows k + idx[c]·ldkv (idx NULL: c·ldkv), zeroing only columns
 *            cols..cols rounded up to ATTN_VEC_FLOATS_MAX (what scores and attend_own read).
 *   scores   s [rows, lds] = scale · q kᵀ from kt: rows × round_up(cols, VW) scores (the
 *            padding columns of the last vector are written too: lds and ldk cover them; a last
 *            column block narrower than TILE_NR·VW computes only its vectors). 2·rows·cols·D
 *            flops.
 *   pv       o [rows, D] (row stride ldo) += p v, p [rows, cols] (element i, c at p[i·pr + c·pc]:
 *            row-major, or transposed for the backward's Pᵀ dO), v [cols, D] (row stride ldv),
 *            read in place. 2·rows·cols·D flops.
 *   pv_rows  pv into scattered rows: output row i at o + oidx[i]·ldo (the backward's dk, dv of
 *            listed keys, accumulated in place).
 *   dot2, axpy3  the backward of single scores (a row against one listed key): two dot
 *            products in one pass, three axpys in one pass. 4·n and 6·n flops.
 *   end_stream  o [rows, D] (row stride ldo) = acc / l per row (acc rows lda apart; may be o),
 *            by non-temporal stores where the layer has them (VEC_HAS_STREAM: rows aligned to a
 *            vector, D a multiple of VW; else plain stores), then a store fence: the output of a
 *            large forward, not read again soon, bypasses the caches.
 *   store_fence  that fence alone (vstore_fence: sfence in the x86 sets; nothing in a set
 *            without non-temporal stores).
 * Every column block a kernel reads or writes is at most ATTN_TILE_COLS_ALIGN (64) floats wide.
 * A partial group of rows at the end repeats its last row (same inputs, same result, same
 * place), so each kernel has one shape of inner loop. No scratch, one thread.
 */
#include <float.h>

_Static_assert(TILE_NR >= 1 && TILE_NR <= 4, "the column-block dispatch knows 1 to 4 vectors");
_Static_assert(TILE_MR > 2, "attend_own's last group has TILE_MR_LAST = TILE_MR - 2 rows");
_Static_assert(VW <= ATTN_VEC_FLOATS_MAX, "a vector wider than the packed keys' padding");

/* attend_lanes asks for the rows of the key this many keys on while it packs one */
#define TILE_LANES_AHEAD 4
/* attend_lanes' floats per key or row in lanes: D vectors and one of padding (D·VW floats alone
 * would put the scores' 10 streams 4 KiB apart, in one set of L1) */
#define TILE_LANES_LD(D) (((D) + 1) * VW)
/* attend_own's last group of rows when it has at most this many (64 rows: 10·6 + 4, no FMA on
 * repeated rows) */
#define TILE_MR_LAST (TILE_MR - 2)

/* The loops over the register block are unrolled at every optimisation level (-O2 builds too:
 * their accumulators must live in registers, not on the stack). */
#define TILE_UNROLL _Pragma("GCC unroll 16")
#if defined(__GNUC__)
#define TILE_INLINE static inline __attribute__((always_inline))
#else
#define TILE_INLINE static inline
#endif

static int64_t tile_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* kt [D, ldk] = kᵀ of the keys k + (idx ? idx[c] : c)·ldkv (c < cols), zero columns cols..z1
 * (cols <= z1 <= ldk). */
static void tile_pack(float *kt, int64_t ldk, const float *k, int64_t ldkv, const int64_t *idx,
                      int64_t cols, int64_t D, int64_t z1)
{
    int64_t c0 = 0, z0 = cols; /* keys [c0, cols) left; columns [z0, z1) to zero */
    if (VEC_HAS_TRANS16)
        for (; c0 + 16 <= cols && D >= 16; c0 += 16) { /* whole blocks of 16 keys */
            const float *kr[16];
            for (int i = 0; i < 16; i++) kr[i] = k + (idx ? idx[c0 + i] : c0 + i) * ldkv;
            int64_t d = 0;
            for (; d + 16 <= D; d += 16) vtrans16(kt + d * ldk + c0, ldk, kr, d);
            for (; d < D; d++) /* the last D % 16 dimensions of these keys */
                for (int i = 0; i < 16; i++) kt[d * ldk + c0 + i] = kr[i][d];
        }
    if (VEC_HAS_TRANS8) { /* blocks of 8 keys, the last with its padding columns */
        const int64_t d8 = D / 8 * 8;
        for (; c0 < cols && c0 + 8 <= z1; c0 += 8) { /* the last block: its padding columns too */
            const int n = (int)tile_min(8, cols - c0);
            const float *kr[8];
            for (int i = 0; i < 8; i++) {
                const int64_t c = c0 + tile_min(i, n - 1); /* rows from n on not read */
                kr[i] = k + (idx ? idx[c] : c) * ldkv;
            }
            for (int64_t d = 0; d < d8; d += 8) vtrans8(kt + d * ldk + c0, ldk, kr, d, n);
            for (int64_t d = d8; d < D; d++) /* the last D % 8 dimensions of these keys */
                for (int i = 0; i < 8; i++) kt[d * ldk + c0 + i] = i < n ? kr[i][d] : 0.0f;
        }
        z0 = c0 > cols ? c0 : cols;
        c0 = c0 < cols ? c0 : cols;
    }
    for (int64_t c = c0; c < cols;
         c++) { /* the remaining keys (all of them without in-register transposes) */
        const float *kc = k + (idx ? idx[c] : c) * ldkv;
        for (int64_t d = 0; d < D; d++) kt[d * ldk + c] = kc[d];
    }
    for (int64_t d = 0; d < D && z1 > z0; d++) {
        float *row = kt + d * ldk;
        int64_t c = z0;
        for (; c + VW <= z1; c += VW) vstore(row + c, vzero());
        for (; c < z1; c++) row[c] = 0.0f;
    }
}

static void k_tile_pack_kt(float *kt, int64_t ldk, const float *k, int64_t ldkv, int64_t cols,
                           int64_t D)
{
    tile_pack(kt, ldk, k, ldkv, NULL, cols, D, ldk);
}

/* Columns a visit of cols keys reads of the packed keys: cols rounded up to the widest set's
 * vector (ATTN_VEC_FLOATS_MAX). */
static int64_t tile_read_cols(int64_t cols)
{
    return (cols + ATTN_VEC_FLOATS_MAX - 1) / ATTN_VEC_FLOATS_MAX * ATTN_VEC_FLOATS_MAX;
}

static void k_tile_pack_kt_rows(float *kt, int64_t ldk, const float *k, int64_t ldkv,
                                const int64_t *idx, int64_t cols, int64_t D)
{
    tile_pack(kt, ldk, k, ldkv, idx, cols, D, tile_min(tile_read_cols(cols), ldk));
}

/* A cursor over spans asked for (prefetched) by cache lines while a kernel computes (attend_own's
 * ahead): `left` lines still to ask for in the current group of rows. */
typedef struct tile_ahead {
    const attn_ks_span *sp;
    int64_t n, k, left;
    uintptr_t at, end;
} tile_ahead;

/* Ask for the next cache line of the spans (none left: left = 0). */
TILE_INLINE void tile_ahead_next(tile_ahead *a)
{
    while (a->at >= a->end) {
        if (a->k >= a->n) {
            a->left = 0;
            return;
        }
        a->at = a->sp[a->k].at & ~(uintptr_t)63;
        a->end = a->sp[a->k].at + (uintptr_t)a->sp[a->k].bytes;
        a->k++;
    }
    __builtin_prefetch((const void *)a->at, 0, 2); /* to L2 (T1): L1's few miss buffers not held */
    a->at += 64;
    a->left--;
}

/* One mr × nv·VW block of scores: rows qr[i], columns kt[.. + j·VW], nv <= TILE_NR, mr <= TILE_MR
 * (a constant: TILE_MR but for attend_own's last group); pf (a constant NULL but for attend_own):
 * up to two lines asked for per step of d. */
TILE_INLINE void tile_scores_block_ahead(float *const *sr, const float *const *qr, const float *kt,
                                         int64_t ldk, int64_t D, vf scale, int nv, tile_ahead *pf,
                                         int mr)
{
    vf acc[TILE_MR][TILE_NR];
    TILE_UNROLL
    for (int i = 0; i < mr; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) acc[i][j] = vzero();
    for (int64_t d = 0; d < D; d++, kt += ldk) {
        vf b[TILE_NR];
        if (pf && pf->left > 0) tile_ahead_next(pf);
        if (pf && pf->left > 0) tile_ahead_next(pf);
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(kt + j * VW);
        TILE_UNROLL
        for (int i = 0; i < mr; i++) {
            const vf a = vset1(qr[i][d]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
        }
    }
    TILE_UNROLL
    for (int i = 0; i < mr; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) vstore(sr[i] + j * VW, vmul(acc[i][j], scale));
}

TILE_INLINE void tile_scores_block(float *const *sr, const float *const *qr, const float *kt,
                                   int64_t ldk, int64_t D, vf scale, int nv)
{
    tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, nv, NULL, TILE_MR);
}

/* The last column block: only the vectors that hold columns (a constant nv per call). */
TILE_INLINE void tile_scores_tail_ahead(float *const *sr, const float *const *qr, const float *kt,
                                        int64_t ldk, int64_t D, vf scale, int nv, tile_ahead *pf,
                                        int mr)
{
    if (nv == 1 || TILE_NR == 1) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 1, pf, mr);
    else if (nv == 2 || TILE_NR == 2) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 2, pf, mr);
    else if (nv == 3 || TILE_NR == 3) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 3, pf, mr);
    else tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 4, pf, mr);
}

TILE_INLINE void tile_scores_tail(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int nv)
{
    tile_scores_tail_ahead(sr, qr, kt, ldk, D, scale, nv, NULL, TILE_MR);
}

/* A last column block of nv whole vectors and one half vector more (at most VH columns left after
 * them): that half by half-width FMAs, of half the cost where whole ones issue as two halves
 * (VEC_HAS_HALF). The columns of the vector past the half are not written. nv < TILE_NR. */
TILE_INLINE void tile_scores_half(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int nv)
{
    vf acc[TILE_MR][TILE_NR];
    vhalf hacc[TILE_MR];
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        hacc[i] = vh_zero();
        TILE_UNROLL
        for (int j = 0; j < nv; j++) acc[i][j] = vzero();
    }
    for (int64_t d = 0; d < D; d++, kt += ldk) {
        vf b[TILE_NR];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(kt + j * VW);
        const vhalf hb = vh_load(kt + nv * VW);
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const vf a = vset1(qr[i][d]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
            hacc[i] = vh_fma(vlow(a), hb, hacc[i]);
        }
    }
    const vhalf hs = vlow(scale);
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        TILE_UNROLL
        for (int j = 0; j < nv; j++) vstore(sr[i] + j * VW, vmul(acc[i][j], scale));
        vh_store(sr[i] + nv * VW, vh_mul(hacc[i], hs));
    }
}

/* Scores of columns [c0, c0 + TILE_NR·VW) of a visit whose n - c0 columns are left: whole
 * vectors; with VEC_HAS_HALF the last half vector by itself where at most VH of its columns are
 * left. */
TILE_INLINE void tile_scores_cols(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int64_t left)
{
    const int nv = (int)tile_min(TILE_NR, (left + VW - 1) / VW); /* vectors with columns */
    if (VEC_HAS_HALF && left < TILE_NR * VW && left % VW != 0 && left % VW <= VH) {
        if (nv == 1 || TILE_NR == 1) tile_scores_half(sr, qr, kt, ldk, D, scale, 0);
        else if (nv == 2 || TILE_NR == 2) tile_scores_half(sr, qr, kt, ldk, D, scale, 1);
        else if (nv == 3 || TILE_NR == 3) tile_scores_half(sr, qr, kt, ldk, D, scale, 2);
        else tile_scores_half(sr, qr, kt, ldk, D, scale, 3);
        return;
    }
    if (nv == TILE_NR) tile_scores_block(sr, qr, kt, ldk, D, scale, TILE_NR);
    else tile_scores_tail(sr, qr, kt, ldk, D, scale, nv);
}

static void k_tile_scores(float *s, int64_t lds, const float *q, int64_t ldq, const float *kt,
                          int64_t ldk, int64_t rows, int64_t cols, int64_t D, float scale)
{
    const vf vs = vset1(scale);
    for (int64_t c0 = 0; c0 < cols; c0 += TILE_NR * VW) {
        const int nv = (int)tile_min(TILE_NR, (cols - c0 + VW - 1) / VW); /* vectors with columns */
        for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
            const float *qr[TILE_MR];
            float *sr[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) {
                const int64_t r = tile_min(i0 + i, rows - 1);
                qr[i] = q + r * ldq;
                sr[i] = s + r * lds + c0;
            }
            if (nv == TILE_NR) tile_scores_block(sr, qr, kt + c0, ldk, D, vs, TILE_NR);
            else tile_scores_tail(sr, qr, kt + c0, ldk, D, vs, nv);
        }
    }
}

/* o rows orow[i], nv vectors from column d0, += Σ_c p[i][c·pc] v[c][d0..]: nv <= TILE_NR. */
TILE_INLINE void tile_pv_block(float *const *orow, const float *const *pr, int64_t pc,
                               const float *v, int64_t ldv, int64_t cols, int nv)
{
    vf acc[TILE_MR][TILE_NR];
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) acc[i][j] = vload(orow[i] + j * VW);
    for (int64_t c = 0, x = 0; c < cols; c++, x += pc, v += ldv) {
        vf b[TILE_NR];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(v + j * VW);
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const vf a = vset1(pr[i][x]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
        }
    }
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) vstore(orow[i] + j * VW, acc[i][j]);
}

/* k_tile_pv with output row r at o + (oidx ? oidx[r] : r)·ldo (oidx a constant NULL for pv). */
TILE_INLINE void tile_pv(float *o, int64_t ldo, const int64_t *oidx, const float *p, int64_t pr_,
                         int64_t pc, const float *v, int64_t ldv, int64_t rows, int64_t cols,
                         int64_t D)
{
    for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
        const float *pr[TILE_MR];
        float *orow[TILE_MR], *od[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const int64_t r = tile_min(i0 + i, rows - 1);
            pr[i] = p + r * pr_;
            orow[i] = o + (oidx ? oidx[r] : r) * ldo;
        }
        int64_t d0 = 0;
        for (; d0 + TILE_NR * VW <= D; d0 += TILE_NR * VW) {
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
            tile_pv_block(od, pr, pc, v + d0, ldv, cols, TILE_NR);
        }
        for (; d0 + VW <= D; d0 += VW) {
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
            tile_pv_block(od, pr, pc, v + d0, ldv, cols, 1);
        }
        for (int64_t r = i0; r < tile_min(i0 + TILE_MR, rows) && d0 < D; r++) /* D % VW left */
            for (int64_t c = 0; c < cols; c++)
                for (int64_t d = d0; d < D; d++)
                    o[(oidx ? oidx[r] : r) * ldo + d] += p[r * pr_ + c * pc] * v[c * ldv + d];
    }
}

static void k_tile_pv(float *o, int64_t ldo, const float *p, int64_t pr_, int64_t pc,
                      const float *v, int64_t ldv, int64_t rows, int64_t cols, int64_t D)
{
    tile_pv(o, ldo, NULL, p, pr_, pc, v, ldv, rows, cols, D);
}

static void k_tile_pv_rows(float *o, int64_t ldo, const int64_t *oidx, const float *p, int64_t pr_,
                           int64_t pc, const float *v, int64_t ldv, int64_t rows, int64_t cols,
                           int64_t D)
{
    tile_pv(o, ldo, oidx, p, pr_, pc, v, ldv, rows, cols, D);
}

/* Store x at p: non-temporal when stream, the layer has such stores and p is aligned for them
 * (VEC_HAS_STREAM), else plain. */
TILE_INLINE void tile_store(float *p, vf x, bool stream)
{
    if (VEC_HAS_STREAM && stream && ((uintptr_t)p & (sizeof(vf) - 1)) == 0) vstream(p, x);
    else vstore(p, x);
}

/* acc rows orow[i], nv vectors: a0[i]·x0[i] (0 where x0[i] is NULL) + Σ_c p[i][c] v[c], nv <=
 * TILE_NR, mr <= TILE_MR rows (a constant), v[c] at v + (vidx ? vidx[c] : c)·ldv (vidx a constant
 * NULL but for attend_own's listed keys). attend: x0 = orow (the online softmax's rescale folded
 * into the load, no pass of its own over acc); attend_own: x0 = the own key's value row, a0 its p.
 * inv (a constant NULL but for attend_own's out): the rows stored times inv[i], by tile_store
 * (stream). */
TILE_INLINE void tile_pv_cols(float *const *orow, const float *const *pr, int64_t pc,
                              const float *v, int64_t ldv, const int64_t *vidx, int64_t cols,
                              const float *const *x0, const float *a0, int nv, const float *inv,
                              bool stream, int mr);

TILE_INLINE void tile_pv_from(float *const *orow, const float *const *pr, const float *v,
                              int64_t ldv, const int64_t *vidx, int64_t cols,
                              const float *const *x0, const float *a0, int nv, const float *inv,
                              bool stream, int mr)
{
    tile_pv_cols(orow, pr, 1, v, ldv, vidx, cols, x0, a0, nv, inv, stream, mr);
}

/* tile_pv_from with p[i][c] at pr[i][c·pc] (pc a constant 1 but for attend_lanes: p in lanes). */
TILE_INLINE void tile_pv_cols(float *const *orow, const float *const *pr, int64_t pc,
                              const float *v, int64_t ldv, const int64_t *vidx, int64_t cols,
                              const float *const *x0, const float *a0, int nv, const float *inv,
                              bool stream, int mr)
{
    vf acc[TILE_MR][TILE_NR];
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        const vf a = vset1(a0[i]);
        TILE_UNROLL
        for (int j = 0; j < nv; j++) acc[i][j] = x0[i] ? vmul(a, vload(x0[i] + j * VW)) : vzero();
    }
    for (int64_t c = 0; c < cols; c++) {
        const float *vc = v + (vidx ? vidx[c] : c) * ldv;
        vf b[TILE_NR];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(vc + j * VW);
        TILE_UNROLL
        for (int i = 0; i < mr; i++) {
            const vf a = vset1(pr[i][c * pc]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
        }
    }
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        const vf a = vset1(inv ? inv[i] : 1.0f);
        TILE_UNROLL
        for (int j = 0; j < nv; j++)
            if (inv) tile_store(orow[i] + j * VW, vmul(acc[i][j], a), stream);
            else vstore(orow[i] + j * VW, acc[i][j]);
    }
}

/* The backward of one score (tile_backward.c, a row against one listed key): both dot products
 * a·b and c·e over n floats in one pass, into out[0], out[1]. */
static void k_tile_dot2(const float *a, const float *b, const float *c, const float *e, int64_t n,
                        float *out)
{
    vf s0 = vzero(), s1 = vzero();
    int64_t d = 0;
    for (; d + VW <= n; d += VW) {
        s0 = vfma(vload(a + d), vload(b + d), s0);
        s1 = vfma(vload(c + d), vload(e + d), s1);
    }
    float x = vhsum(s0), y = vhsum(s1);
    for (; d < n; d++) x += a[d] * b[d], y += c[d] * e[d];
    out[0] = x, out[1] = y;
}

/* y0 += a0·x0, y1 += a1·x1, y2 += a2·x2 over n floats (the backward of one score: dq, dk, dv). */
static void k_tile_axpy3(float *y0, float a0, const float *x0, float *y1, float a1, const float *x1,
                         float *y2, float a2, const float *x2, int64_t n)
{
    const vf v0 = vset1(a0), v1 = vset1(a1), v2 = vset1(a2);
    int64_t d = 0;
    for (; d + VW <= n; d += VW) {
        vstore(y0 + d, vfma(v0, vload(x0 + d), vload(y0 + d)));
        vstore(y1 + d, vfma(v1, vload(x1 + d), vload(y1 + d)));
        vstore(y2 + d, vfma(v2, vload(x2 + d), vload(y2 + d)));
    }
    for (; d < n; d++) y0[d] += a0 * x0[d], y1[d] += a1 * x1[d], y2[d] += a2 * x2[d];
}

/* This thread's non-temporal stores visible before its later stores (a layer without such
 * stores: nothing). */
static void k_tile_store_fence(void) { vstore_fence(); }

static void k_tile_end_stream(float *o, int64_t ldo, const float *a, int64_t lda, const float *l,
                              int64_t rows, int64_t D)
{
    for (int64_t r = 0; r < rows; r++) {
        float *orow = o + r * ldo;
        const float *ar = a + r * lda;
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        int64_t d = 0;
        if (VEC_HAS_STREAM && ((uintptr_t)orow & (sizeof(vf) - 1)) == 0)
            for (; d + VW <= D; d += VW) vstream(orow + d, vmul(vload(ar + d), vset1(inv)));
        for (; d < D; d++) orow[d] = ar[d] * inv;
    }
    k_tile_store_fence();
}

#define TILE_SLOTS                                                                                 \
    {                                                                                              \
        .pack_kt = k_tile_pack_kt, .pack_kt_rows = k_tile_pack_kt_rows, .scores = k_tile_scores,   \
        .pv = k_tile_pv, .pv_rows = k_tile_pv_rows, .dot2 = k_tile_dot2, .axpy3 = k_tile_axpy3,    \
        .end_stream = k_tile_end_stream, .attend = k_tile_attend, .attend_own = k_tile_attend_own, \
        .store_fence = k_tile_store_fence, .attend_lanes = k_tile_attend_lanes                     \
    }
