/*
 * tile_body.h — the dense tile's GEMM micro-kernels (kernel_set.h: attn_ks_tile), written once
 * against the vector layer and register-blocked per set: TILE_MR rows × TILE_NR vectors of
 * accumulators (avx512 6 × 4 of 32 registers, avx2 6 × 2 of 16, portable 4 × 4 scalars).
 *   pack_kt  kt [D, ldk] = kᵀ of a key block k [cols, D] (row stride ldkv), zero columns
 *            cols..ldk: the keys along the lanes, so that the scores need no horizontal sum.
 *            O(cols·D), no flops.
 *   pack_kt_rows  pack_kt of the rows k + idx[c]·ldkv (idx NULL: c·ldkv), zeroing only columns
 *            cols..cols rounded up to 16 (what scores and attend_own read).
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
 *   attend   a visit of cols packed keys (kt, v rows ldv apart) in one pass per TILE_MR rows
 *            (acc rows lda apart),
 *            row r seeing keys [lo[r], hi[r]) (NULL: from 0, up to all): scores, the online
 *            softmax update of m, l, acc of the group's rows side by side (acc = alpha·acc + p v,
 *            the rescale in p·v's load), no call per row; each group over only the columns its
 *            rows see (a band's or a triangle's group: a fraction of the visit's), avx512 a last
 *            half vector of scores by 256-bit FMAs; s: the scores, rows × lds.
 *            At most 4·rows·cols·D flops.
 *   attend_own  a fresh visit of cols packed keys (kt; v rows ldv apart, or at v + vidx[c]·ldv:
 *            listed keys read where they are, no copy) in one pass per TILE_MR
 *            rows, row r seeing the first hi[r] (NULL: all) and its own key own[r] (rows of ko,
 *            vo; -1: none): scores, the own keys' scores, the rows' softmax together (their
 *            max, exp and sum chains side by side), acc = p_own v_own + p v; m, l and acc set,
 *            none read. s: the scores, its first min(rows, TILE_MR) rows × lds. The spans
 *            `ahead` (the caller's next rows) asked for into L2 meanwhile, an equal share of
 *            their cache lines during each group's scores (no burst). out set (the rows' last
 *            visit): acc/l written there instead of acc (as end_stream: non-temporal stores when
 *            stream, but no fence: the caller's, once for many calls). 4·rows·(cols + 1)·D flops.
 *   attend_lanes  strided's second visit, VW row sets (residue classes) side by side, lane x's
 *            rows and keys its own (kernel_set.h): the keys transposed into lanes once
 *            (kt [nk][D][VW], rows padded by one vector), then per TILE_MR rows of every lane
 *            their queries likewise, scores lane by lane (TILE_MR × TILE_NR FMAs per TILE_MR +
 *            TILE_NR vector loads, no broadcast, no horizontal sum), each row's softmax
 *            vertically (masks only on keys some lane does not see), and p·v per lane by
 *            tile_pv_cols (p read VW floats apart, v rows in place, acc rescaled in the load and
 *            normalised in the store). 4·Σ(seen keys)·D flops plus a block's triangle.
 *   end_stream  o [rows, D] (row stride ldo) = acc / l per row (acc rows lda apart; may be o),
 *            by non-temporal stores (avx512, avx2: rows 32-byte aligned, D a multiple of VW; else
 *            plain stores), then a store fence: the output of a large forward, not read again
 *            soon, bypasses the caches.
 *   store_fence  that fence alone (sfence in the x86 sets; nothing in the portable set, which
 *            has no non-temporal stores).
 * Every column block a kernel reads or writes is at most ATTN_TILE_COLS_ALIGN (64) floats wide.
 * A partial group of rows at the end repeats its last row (same inputs, same result, same
 * place), so each kernel has one shape of inner loop; attend_own's last group of at most
 * TILE_MR_LAST rows has a narrower one (a task of 64 rows: 10 · 6 + 4, no FMA on repeated rows;
 * random n = 8192 1 thread 8.67 -> 8.24 ms). No scratch, one thread.
 */
#include <float.h>

#if VW == 16
#define TILE_MR 6
#define TILE_NR 4
#elif VW == 8
#define TILE_MR 6
#define TILE_NR 2
#else
#define TILE_MR 4
#define TILE_NR 4
#endif
/* attend_lanes asks for the rows of the key this many keys on while it packs one */
#define TILE_LANES_AHEAD 4
/* attend_lanes' floats per key or row in lanes: D vectors and one of padding (D·VW floats alone
 * would put the scores' 10 streams 4 KiB apart, in one set of L1) */
#define TILE_LANES_LD(D) (((D) + 1) * VW)
/* attend_own's last group of rows when it has at most this many (64 = 10·6 + 4 rows) */
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

#ifdef __AVX2__
/* kt[d·ldk + c] = k[c][d0 + d] for c < n, 0 for n <= c < 8 (d < 8): one 8 × 8 transpose in
 * registers (avx2, avx512), rows from n on not read. */
static inline void tile_transpose8(float *kt, int64_t ldk, const float *const *k, int64_t d0, int n)
{
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = i < n ? _mm256_loadu_ps(k[i] + d0) : _mm256_setzero_ps();
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; j++) {
            r[i + j] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
            r[i + j + 2] = _mm256_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
    /* r[0..3]: columns (0, 4), (2, 6), (1, 5), (3, 7) of rows 0-3 (low, high 128-bit half);
     * r[4..7] the same of rows 4-7 */
    static const int col[4] = {0, 2, 1, 3};
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(kt + col[i] * ldk, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(kt + (col[i] + 4) * ldk, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}
#endif

#if VW == 16
/* kt[d·ldk + i] = k[i][d0 + d] (i, d < 16): one 16 × 16 transpose in registers (avx512; half the
 * shuffles, loads and stores of two 8 × 8 ones per 8 × 16: strided n = 1024, whose second phase
 * transposes each key and query into lanes, see the commit). After the two in-lane steps, r[4g +
 * m] holds in its 128-bit lane L the column 4L + (0, 2, 1, 3)[m] of rows 4g..4g + 3; the lanes of
 * r[m], r[4 + m], r[8 + m], r[12 + m] are then transposed as 4 × 4 blocks. */
static inline void tile_transpose16(float *kt, int64_t ldk, const float *const *k, int64_t d0)
{
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(k[i] + d0);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int j = 0; j < 2; j++) {
            r[i + j] = _mm512_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
            r[i + j + 2] = _mm512_shuffle_ps(t[i + j], t[i + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
    static const int col[4] = {0, 2, 1, 3};
    for (int m = 0; m < 4; m++) {
        const __m512 u0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x44);
        const __m512 u1 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xEE);
        const __m512 u2 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x44);
        const __m512 u3 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xEE);
        _mm512_storeu_ps(kt + col[m] * ldk, _mm512_shuffle_f32x4(u0, u2, 0x88));
        _mm512_storeu_ps(kt + (4 + col[m]) * ldk, _mm512_shuffle_f32x4(u0, u2, 0xDD));
        _mm512_storeu_ps(kt + (8 + col[m]) * ldk, _mm512_shuffle_f32x4(u1, u3, 0x88));
        _mm512_storeu_ps(kt + (12 + col[m]) * ldk, _mm512_shuffle_f32x4(u1, u3, 0xDD));
    }
}
#endif

/* kt [D, ldk] = kᵀ of the keys k + (idx ? idx[c] : c)·ldkv (c < cols), zero columns cols..z1
 * (cols <= z1 <= ldk). */
static void tile_pack(float *kt, int64_t ldk, const float *k, int64_t ldkv, const int64_t *idx,
                      int64_t cols, int64_t D, int64_t z1)
{
    int64_t c0 = 0, z0 = cols; /* keys [c0, cols) left; columns [z0, z1) to zero */
#if VW == 16
    for (; c0 + 16 <= cols && D >= 16; c0 += 16) { /* whole blocks of 16 keys */
        const float *kr[16];
        for (int i = 0; i < 16; i++) kr[i] = k + (idx ? idx[c0 + i] : c0 + i) * ldkv;
        int64_t d = 0;
        for (; d + 16 <= D; d += 16) tile_transpose16(kt + d * ldk + c0, ldk, kr, d);
        for (; d < D; d++) /* the last D % 16 dimensions of these keys */
            for (int i = 0; i < 16; i++) kt[d * ldk + c0 + i] = kr[i][d];
    }
#endif
#ifdef __AVX2__
    const int64_t d8 = D / 8 * 8;
    for (; c0 < cols && c0 + 8 <= z1; c0 += 8) { /* the last block: its padding columns too */
        const int n = (int)tile_min(8, cols - c0);
        const float *kr[8];
        for (int i = 0; i < 8; i++) {
            const int64_t c = c0 + tile_min(i, n - 1); /* rows from n on not read */
            kr[i] = k + (idx ? idx[c] : c) * ldkv;
        }
        for (int64_t d = 0; d < d8; d += 8) tile_transpose8(kt + d * ldk + c0, ldk, kr, d, n);
        for (int64_t d = d8; d < D; d++) /* the last D % 8 dimensions of these keys */
            for (int i = 0; i < 8; i++) kt[d * ldk + c0 + i] = i < n ? kr[i][d] : 0.0f;
    }
    z0 = c0 > cols ? c0 : cols;
    c0 = c0 < cols ? c0 : cols;
#endif
    for (int64_t c = c0; c < cols; c++) { /* the remaining keys (all of them without AVX2) */
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
 * vector (16 floats). */
static int64_t tile_read_cols(int64_t cols) { return (cols + 15) / 16 * 16; }

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
#if TILE_NR == 4
    if (nv == 1) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 1, pf, mr);
    else if (nv == 2) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 2, pf, mr);
    else if (nv == 3) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 3, pf, mr);
    else tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 4, pf, mr);
#else
    if (nv == 1) tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, 1, pf, mr);
    else tile_scores_block_ahead(sr, qr, kt, ldk, D, scale, TILE_NR, pf, mr);
#endif
}

TILE_INLINE void tile_scores_tail(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int nv)
{
    tile_scores_tail_ahead(sr, qr, kt, ldk, D, scale, nv, NULL, TILE_MR);
}

#if VW == 16
/* A last column block of nv whole vectors and half of one more (at most VW/2 columns left after
 * them): that half by 256-bit FMAs, of half the cost where 512-bit FMAs run as two 256-bit halves
 * (AMD Zen 4). The other half of its scores is not written. nv < TILE_NR. */
TILE_INLINE void tile_scores_half(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int nv)
{
    vf acc[TILE_MR][TILE_NR];
    __m256 hacc[TILE_MR];
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        hacc[i] = _mm256_setzero_ps();
        TILE_UNROLL
        for (int j = 0; j < nv; j++) acc[i][j] = vzero();
    }
    for (int64_t d = 0; d < D; d++, kt += ldk) {
        vf b[TILE_NR];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(kt + j * VW);
        const __m256 hb = _mm256_loadu_ps(kt + nv * VW);
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const vf a = vset1(qr[i][d]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
            hacc[i] = _mm256_fmadd_ps(_mm512_castps512_ps256(a), hb, hacc[i]);
        }
    }
    const __m256 hs = _mm512_castps512_ps256(scale);
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        TILE_UNROLL
        for (int j = 0; j < nv; j++) vstore(sr[i] + j * VW, vmul(acc[i][j], scale));
        _mm256_storeu_ps(sr[i] + nv * VW, _mm256_mul_ps(hacc[i], hs));
    }
}
#endif

/* Scores of columns [c0, c0 + TILE_NR·VW) of a visit whose n - c0 columns are left: whole
 * vectors, avx512 the last half vector by itself where at most half of it holds columns. */
TILE_INLINE void tile_scores_cols(float *const *sr, const float *const *qr, const float *kt,
                                  int64_t ldk, int64_t D, vf scale, int64_t left)
{
    const int nv = (int)tile_min(TILE_NR, (left + VW - 1) / VW); /* vectors with columns */
#if VW == 16
    if (left < TILE_NR * VW && left % VW != 0 && left % VW <= VW / 2) {
        if (nv == 1) tile_scores_half(sr, qr, kt, ldk, D, scale, 0);
        else if (nv == 2) tile_scores_half(sr, qr, kt, ldk, D, scale, 1);
        else if (nv == 3) tile_scores_half(sr, qr, kt, ldk, D, scale, 2);
        else tile_scores_half(sr, qr, kt, ldk, D, scale, 3);
        return;
    }
#endif
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

/* Store x at p: non-temporal when stream and p is aligned for it (avx512, avx2), else plain. */
TILE_INLINE void tile_store(float *p, vf x, bool stream)
{
#if VW == 16 && defined(__AVX512F__)
    if (stream && ((uintptr_t)p & 63) == 0) {
        _mm512_stream_ps(p, x);
        return;
    }
#elif VW == 8 && defined(__AVX2__)
    if (stream && ((uintptr_t)p & 31) == 0) {
        _mm256_stream_ps(p, x);
        return;
    }
#endif
    (void)stream;
    vstore(p, x);
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

/* attend: per group of TILE_MR rows the scores into s, then the softmax update of the group's
 * rows together (their max, exp and sum chains side by side: no row waits on the one before;
 * unseen columns set to -inf in s), then acc = alpha·acc + p v (the rescale in p·v's load). */
static void k_tile_attend(float *acc, int64_t lda, float *m, float *l, float *s, int64_t lds,
                          const float *q, int64_t ldq, const float *kt, int64_t ldk, const float *v,
                          int64_t ldv, const int64_t *lo, const int64_t *hi, int64_t rows,
                          int64_t cols, int64_t D, float scale)
{
    const vf vs = vset1(scale), ninf = vset1(-INFINITY), half = vset1(0.5f);
    float lane[VW];
    for (int k = 0; k < VW; k++) lane[k] = (float)k;
    const vf iota = vload(lane);
    for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
        const float *qr[TILE_MR];
        float *sr[TILE_MR], *orow[TILE_MR], *od[TILE_MR];
        int64_t row[TILE_MR], ra[TILE_MR], rh[TILE_MR];
        int64_t c_lo = cols, c_hi = 0; /* the columns some row of the group sees */
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const int64_t r = tile_min(i0 + i, rows - 1);
            row[i] = r;
            qr[i] = q + r * ldq, sr[i] = s + r * lds, orow[i] = acc + r * lda;
            rh[i] = hi ? tile_min(hi[r] < 0 ? 0 : hi[r], cols) : cols;
            ra[i] = lo ? tile_min(lo[r] < 0 ? 0 : lo[r], rh[i]) : 0;
            if (ra[i] < rh[i]) c_lo = tile_min(c_lo, ra[i]), c_hi = c_hi > rh[i] ? c_hi : rh[i];
        }
        if (c_hi <= c_lo) continue; /* no row sees a key: m, l, acc as they were */
        /* the group's columns [c_lo, c_hi) only (a band's or triangle's group of rows sees a
         * fraction of the visit's columns), numbered from c_lo; scores read whole vectors: from a
         * vector boundary where an exact start would read past the visit's last vector */
        if (c_lo + (c_hi - c_lo + VW - 1) / VW * VW > (cols + VW - 1) / VW * VW)
            c_lo = c_lo / VW * VW;
        const int64_t n = c_hi - c_lo;
        const float *ktg = kt + c_lo, *vg = v + c_lo * ldv;
        for (int64_t c0 = 0; c0 < n; c0 += TILE_NR * VW) { /* scores */
            float *sc[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) sc[i] = sr[i] + c0;
            tile_scores_cols(sc, qr, ktg + c0, ldk, D, vs, n - c0);
        }
        /* each row's max over its seen columns [a, h) and its running max */
        vf am[TILE_MR], hm[TILE_MR], vm[TILE_MR];
        float mx[TILE_MR], al[TILE_MR];
        bool whole = n % VW == 0; /* every row sees every column, whole vectors: no masks */
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const int64_t h = tile_min(rh[i] > c_lo ? rh[i] - c_lo : 0, n);
            const int64_t a = tile_min(ra[i] > c_lo ? ra[i] - c_lo : 0, h);
            am[i] = vsub(vset1((float)a), half), hm[i] = vsub(vset1((float)h), half);
            vm[i] = vset1(m[row[i]]);
            whole &= a == 0 && h == n;
        }
        for (int64_t c = 0; c < n && whole; c += VW) {
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) vm[i] = vmax(vm[i], vload(sr[i] + c));
        }
        for (int64_t c = 0; c < n && !whole; c += VW) { /* unseen: -inf, stored */
            const vf cv = vadd(iota, vset1((float)c));
            vf x[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) x[i] = vload(sr[i] + c);
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) {
                /* c >= h or c < a: -inf (both compares on whole numbers at half offsets) */
                x[i] = vzero_below(vzero_below(x[i], hm[i], cv), cv, am[i]);
                x[i] = vadd(x[i], vadd(vzero_below(ninf, cv, hm[i]), vzero_below(ninf, am[i], cv)));
                vm[i] = vmax(vm[i], x[i]);
            }
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) vstore(sr[i] + c, x[i]);
        }
        float old[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            old[i] = m[row[i]];
            mx[i] = vhmax(vm[i]);
            vm[i] = vset1(mx[i] == -INFINITY ? 0.0f : mx[i]); /* seeing nothing: all p = 0 */
            al[i] = old[i] == -INFINITY ? -INFINITY : old[i] - mx[i];
        }
        for (int k0 = 0; k0 < TILE_MR; k0 += VW) { /* alpha = exp(m - m'): by vectors */
            float x[VW];
            for (int k = 0; k < VW; k++) x[k] = k0 + k < TILE_MR ? al[k0 + k] : -INFINITY;
            vstore(x, vexp(vload(x)));
            for (int k = 0; k < VW && k0 + k < TILE_MR; k++)
                al[k0 + k] = old[k0 + k] == mx[k0 + k] ? 1.0f : x[k];
        }
        /* p = exp(s - m') (0 where unseen, up to cols rounded up to VW), sums */
        vf sum[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) sum[i] = vzero();
        for (int64_t c = 0; c < n; c += VW) { /* all loads first: a repeated row once */
            vf x[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) x[i] = vload(sr[i] + c);
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) {
                x[i] = vexp(vsub(x[i], vm[i]));
                sum[i] = vadd(sum[i], x[i]);
            }
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) vstore(sr[i] + c, x[i]);
        }
        for (int64_t r = i0; r < tile_min(i0 + TILE_MR, rows); r++) {
            const int i = (int)(r - i0);
            if (mx[i] == -INFINITY) continue; /* nothing seen yet: m, l, acc as they were */
            l[r] = l[r] * al[i] + vhsum(sum[i]), m[r] = mx[i];
        }
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++)
            if (mx[i] == -INFINITY) al[i] = 1.0f; /* acc 0, p 0 */
        /* acc = alpha·acc + p v; a fresh row's acc (m = -inf) not read: p v alone (its rows may
         * be unset, attn_tile_begin_over) */
        const float *xd[TILE_MR];
        int64_t d0 = 0;
        for (; d0 + TILE_NR * VW <= D; d0 += TILE_NR * VW) {
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++)
                od[i] = orow[i] + d0, xd[i] = old[i] == -INFINITY ? NULL : od[i];
            tile_pv_from(od, (const float *const *)sr, vg + d0, ldv, NULL, n, xd, al, TILE_NR, NULL,
                         false, TILE_MR);
        }
        for (; d0 + VW <= D; d0 += VW) {
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++)
                od[i] = orow[i] + d0, xd[i] = old[i] == -INFINITY ? NULL : od[i];
            tile_pv_from(od, (const float *const *)sr, vg + d0, ldv, NULL, n, xd, al, 1, NULL,
                         false, TILE_MR);
        }
        for (int64_t r = i0; r < tile_min(i0 + TILE_MR, rows) && d0 < D; r++) /* D % VW left */
            for (int64_t d = d0; d < D; d++) {
                float x = old[r - i0] == -INFINITY ? 0.0f : acc[r * lda + d] * al[r - i0];
                for (int64_t c = 0; c < n; c++) x += s[r * lds + c] * vg[c * ldv + d];
                acc[r * lda + d] = x;
            }
    }
}

/* attend_lanes' scores of its TILE_MR rows in lanes, qt [TILE_MR][D][VW], against keys c0 .. c0 +
 * nc of kt [.][D][VW] (nc <= TILE_NR, a constant): s[(i·lds + c)·VW + x] = scale·Σ_d, lane by lane
 * (no broadcast, no horizontal sum). */
TILE_INLINE void tile_lanes_scores(float *s, int64_t lds, const float *qt, const float *kt,
                                   int64_t c0, int64_t D, vf scale, int nc)
{
    vf acc[TILE_MR][TILE_NR];
    const int64_t ldl = TILE_LANES_LD(D);
    const float *kc = kt + c0 * ldl;
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) TILE_UNROLL
    for (int j = 0; j < nc; j++) acc[i][j] = vzero();
    for (int64_t d = 0; d < D; d++) {
        vf b[TILE_NR];
        TILE_UNROLL
        for (int j = 0; j < nc; j++) b[j] = vload(kc + j * ldl + d * VW);
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const vf a = vload(qt + i * ldl + d * VW);
            TILE_UNROLL
            for (int j = 0; j < nc; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
        }
    }
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) TILE_UNROLL
    for (int j = 0; j < nc; j++) vstore(s + (i * lds + c0 + j) * VW, vmul(acc[i][j], scale));
}

/* The lanes' scores of keys [c0, min(c0 + TILE_NR, n)): the last block by only its keys. */
TILE_INLINE void tile_lanes_scores_cols(float *s, int64_t lds, const float *qt, const float *kt,
                                        int64_t c0, int64_t n, int64_t D, vf scale)
{
    const int64_t nc = tile_min(TILE_NR, n - c0);
#if TILE_NR == 4
    if (nc == 4) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 4);
    else if (nc == 3) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 3);
    else if (nc == 2) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 2);
    else tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 1);
#else
    if (nc == TILE_NR) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, TILE_NR);
    else tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 1);
#endif
}

/* attend_lanes: VW row sets side by side, lane x holding its rows and keys (strided's residue
 * classes). pass 0: the keys in lanes, kt[c][d][x] (one transpose per key and lane); then per
 * TILE_MR rows of every lane: their queries in lanes, scores lane by lane (both operands whole
 * vectors: TILE_MR × TILE_NR FMAs per TILE_MR + TILE_NR loads), the masks only on columns some
 * lane does not see, the online softmax of each row vertically (max, exp, sum over keys: no
 * horizontal step), then p·v per lane in rows (p read with a stride of VW from the scores, v rows
 * in place), acc rescaled in p·v's load and normalised in its store. */
static void k_tile_attend_lanes(float *o, const float *q, int64_t ldx, int64_t ldr, float *ml,
                                int64_t mlr, const float *k, const float *v, const int64_t *kx,
                                int64_t ldc, const int64_t *nr, const int64_t *nk,
                                const int64_t *self0, bool causal, int64_t lanes, int64_t D,
                                float scale, float *scratch)
{
    int64_t nkmax = 0, nrmax = 0, xk = 0; /* xk: a lane with the most keys */
    for (int64_t x = 0; x < lanes; x++) {
        if (nk[x] > nkmax) nkmax = nk[x], xk = x;
        nrmax = nr[x] > nrmax ? nr[x] : nrmax;
    }
    const int64_t ldl = TILE_LANES_LD(D);
    float *kt = scratch, *qt = kt + nkmax * ldl, *s = qt + TILE_MR * ldl;
    const int64_t lds = nkmax;
    int64_t idx[VW];
    /* pass 0: kt[c][d][x] = key c of lane x (a lane past its keys, or past lanes: a key of a lane
     * that has it; never seen) */
    for (int64_t c = 0; c < nkmax; c++) {
        for (int64_t x = 0; x < lanes && c + TILE_LANES_AHEAD < nk[x]; x++) /* rows far apart */
            for (int64_t d = 0; d < D; d += 16) {
                __builtin_prefetch(k + kx[x] + (c + TILE_LANES_AHEAD) * ldc + d);
                __builtin_prefetch(v + kx[x] + (c + TILE_LANES_AHEAD) * ldc + d, 0, 2);
            }
        for (int x = 0; x < VW; x++) {
            int64_t y = tile_min(x, lanes - 1);
            if (nk[y] <= 0) y = xk;
            idx[x] = kx[y] + tile_min(c, nk[y] - 1) * ldc;
        }
        tile_pack(kt + c * ldl, VW, k, 1, idx, VW, D, VW);
    }
    const vf vs = vset1(scale), ninf = vset1(-INFINITY), half = vset1(0.5f);
    const vf lowest = vset1(-FLT_MAX), one = vset1(1.0f);
    for (int64_t r0 = 0; r0 < nrmax; r0 += TILE_MR) {
        for (int64_t x = 0; x < lanes; x++) /* the next block's rows, into L2 */
            for (int64_t r = r0 + TILE_MR; r < tile_min(r0 + 2 * TILE_MR, nr[x]); r++)
                for (int64_t d = 0; d < D; d += 16) {
                    __builtin_prefetch(q + x * ldx + r * ldr + d, 0, 2);
                    __builtin_prefetch(o + x * ldx + r * ldr + d, 1, 2);
                }
        float hb[TILE_MR][VW], eb[TILE_MR][VW], mo[TILE_MR][VW], lo[TILE_MR][VW];
        float al[TILE_MR][VW], inv[TILE_MR][VW];
        int64_t full[TILE_MR], ex0[TILE_MR], ex1[TILE_MR], cmax = 0;
        for (int i = 0; i < TILE_MR; i++) { /* the rows in lanes, their bounds and state */
            const int64_t r = r0 + i;
            full[i] = nkmax, ex0[i] = nkmax, ex1[i] = -1;
            for (int x = 0; x < VW; x++) {
                const int64_t y = tile_min(x, lanes - 1), self = r + self0[y];
                const bool ok = x < lanes && r < nr[y];
                idx[x] = y * ldx + tile_min(r, nr[y] - 1) * ldr;
                /* row r of lane x sees keys c < h, c != e */
                const int64_t h = !ok ? 0 : causal ? (self < 0 ? 0 : tile_min(self, nk[y])) : nk[y];
                const int64_t e = ok && !causal ? self : -1;
                hb[i][x] = (float)h, eb[i][x] = (float)e;
                mo[i][x] = ok ? ml[2 * x + r * mlr] : -INFINITY;
                lo[i][x] = ok ? ml[2 * x + r * mlr + 1] : 0.0f;
                cmax = h > cmax ? h : cmax, full[i] = tile_min(full[i], h);
                if (e >= 0) ex0[i] = tile_min(ex0[i], e), ex1[i] = e > ex1[i] ? e : ex1[i];
            }
            tile_pack(qt + i * ldl, VW, q, 1, idx, VW, D, VW);
        }
        for (int64_t c0 = 0; c0 < cmax; c0 += TILE_NR) /* scores */
            tile_lanes_scores_cols(s, lds, qt, kt, c0, cmax, D, vs);
        for (int i = 0; i < TILE_MR; i++) { /* each row's softmax, lane by lane */
            float *si = s + i * lds * VW;
            const vf hv = vsub(vload(hb[i]), half), ev = vload(eb[i]);
            const vf em = vsub(ev, half), ep = vadd(ev, half);
            vf mx = vload(mo[i]);
            for (int64_t c = 0; c < cmax; c++) {
                vf x = vload(si + c * VW);
                if (c >= full[i] || (c >= ex0[i] && c <= ex1[i])) { /* some lane does not see c */
                    const vf cv = vset1((float)c);
                    x = vadd(vzero_below(x, hv, cv), vzero_below(ninf, cv, hv)); /* c >= h: -inf */
                    x = vadd(x, vzero_below(vzero_below(ninf, cv, em), ep, cv)); /* c == e: -inf */
                    vstore(si + c * VW, x);
                }
                mx = vmax(mx, x);
            }
            const vf mu = vmax(mx, lowest); /* seeing nothing: every p = 0, alpha = 0 */
            vf sum = vzero();
            for (int64_t c = 0; c < cmax; c++) {
                const vf p = vexp(vsub(vload(si + c * VW), mu));
                vstore(si + c * VW, p);
                sum = vadd(sum, p);
            }
            const vf a = vexp(vsub(vload(mo[i]), mu)), ln = vfma(vload(lo[i]), a, sum);
            vstore(al[i], a), vstore(lo[i], ln), vstore(mo[i], mx);
            vstore(inv[i], vzero_below(vdiv(one, ln), ln, half)); /* l >= 1 or 0 */
            for (int64_t x = 0; x < lanes; x++)
                if (r0 + i < nr[x]) {
                    ml[2 * x + (r0 + i) * mlr] = mo[i][x];
                    ml[2 * x + (r0 + i) * mlr + 1] = lo[i][x];
                }
        }
        for (int64_t x = 0; x < lanes; x++) { /* acc = (alpha·acc + p v) / l, lane x's rows */
            if (nr[x] <= r0) continue;
            const float *pr[TILE_MR];
            float *orow[TILE_MR], *od[TILE_MR], a0[TILE_MR], iv[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) {
                const int64_t ii = tile_min(r0 + i, nr[x] - 1) - r0;
                pr[i] = s + ii * lds * VW + x, orow[i] = o + x * ldx + (r0 + ii) * ldr;
                a0[i] = al[ii][x], iv[i] = inv[ii][x];
            }
            const int64_t cols = tile_min(cmax, nk[x]);
            const float *vx = v + kx[x];
            int64_t d0 = 0;
            for (; d0 + TILE_NR * VW <= D; d0 += TILE_NR * VW) {
                TILE_UNROLL
                for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
                tile_pv_cols(od, pr, VW, vx + d0, ldc, NULL, cols, (const float *const *)od, a0,
                             TILE_NR, iv, false, TILE_MR);
            }
            for (; d0 + VW <= D; d0 += VW) {
                TILE_UNROLL
                for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
                tile_pv_cols(od, pr, VW, vx + d0, ldc, NULL, cols, (const float *const *)od, a0, 1,
                             iv, false, TILE_MR);
            }
            for (int i = 0; i < TILE_MR && d0 < D; i++) { /* D % VW left (repeated rows alike) */
                if (i > 0 && orow[i] == orow[i - 1]) continue;
                for (int64_t d = d0; d < D; d++) {
                    float y = a0[i] * orow[i][d];
                    for (int64_t c = 0; c < cols; c++) y += pr[i][c * VW] * vx[c * ldc + d];
                    orow[i][d] = y * iv[i];
                }
            }
        }
    }
}

/* x where column c < h, -inf elsewhere (c, h: per lane, as floats; NaN in x only where seen). */
TILE_INLINE vf tile_seen(vf x, vf c, vf h)
{
    const vf half = vset1(0.5f), hm = vsub(h, half); /* c < h for whole numbers: c <= h - 0.5 */
    return vadd(vzero_below(x, hm, c), vzero_below(vset1(-INFINITY), c, hm));
}

/* attend_own's p·v of a group of mr rows: orow[i] = (a0[i]·x0[i] + Σ_c p[i][c] v[c])·(inv ? inv[i]
 * : 1), v[c] at v + (vidx ? vidx[c] : c)·ldv. */
TILE_INLINE void tile_own_pv(float *const *orow, const float *const *pr, const float *v,
                             int64_t ldv, const int64_t *vidx, const float *const *x0,
                             const float *a0, int64_t cols, int64_t D, const float *inv,
                             bool stream, int mr)
{
    float *od[TILE_MR];
    const float *xd[TILE_MR];
    int64_t d0 = 0;
    for (; d0 + TILE_NR * VW <= D; d0 += TILE_NR * VW) {
        TILE_UNROLL
        for (int i = 0; i < mr; i++) od[i] = orow[i] + d0, xd[i] = x0[i] ? x0[i] + d0 : NULL;
        tile_pv_from(od, pr, v + d0, ldv, vidx, cols, xd, a0, TILE_NR, inv, stream, mr);
    }
    for (; d0 + VW <= D; d0 += VW) {
        TILE_UNROLL
        for (int i = 0; i < mr; i++) od[i] = orow[i] + d0, xd[i] = x0[i] ? x0[i] + d0 : NULL;
        tile_pv_from(od, pr, v + d0, ldv, vidx, cols, xd, a0, 1, inv, stream, mr);
    }
    for (int i = 0; i < mr && d0 < D; i++) /* D % VW left (a repeated row: same values) */
        for (int64_t d = d0; d < D; d++) {
            float x = x0[i] ? a0[i] * x0[i][d] : 0.0f;
            for (int64_t c = 0; c < cols; c++) x += pr[i][c] * v[(vidx ? vidx[c] : c) * ldv + d];
            orow[i][d] = inv ? x * inv[i] : x;
        }
}

/* One group of mr <= TILE_MR rows of attend_own (mr a constant: TILE_MR, or TILE_MR_LAST for a
 * last group of at most that many rows), rows i0.. (the last repeated past rows). */
TILE_INLINE void tile_own_group(float *acc, float *m, float *l, float *s, int64_t lds,
                                const float *q, int64_t ldq, const float *kt, int64_t ldk,
                                const float *v, int64_t ldv, const int64_t *vidx, const int64_t *hi,
                                const float *ko, const float *vo, int64_t ldo, const int64_t *own,
                                int64_t rows, int64_t cols, int64_t D, float scale, float *out,
                                int64_t ldout, bool stream, int64_t i0, tile_ahead *pf, vf iota,
                                int mr)
{
    const vf vs = vset1(scale);
    const float *qr[TILE_MR], *kor[TILE_MR], *vor[TILE_MR];
    float *sr[TILE_MR], *orow[TILE_MR];
    int64_t row[TILE_MR];
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        const int64_t r = tile_min(i0 + i, rows - 1), j = own ? own[r] : -1;
        row[i] = r;
        /* the group's scores in its first rows of s (a few KB, kept in L1) */
        qr[i] = q + r * ldq, sr[i] = s + tile_min(i, rows - 1) * lds;
        orow[i] = out ? out + r * ldout : acc + r * D;
        kor[i] = j >= 0 ? ko + j * ldo : NULL, vor[i] = j >= 0 ? vo + j * ldo : NULL;
    }
    for (int64_t c0 = 0; c0 < cols; c0 += TILE_NR * VW) { /* scores */
        const int nv = (int)tile_min(TILE_NR, (cols - c0 + VW - 1) / VW);
        float *sc[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < mr; i++) sc[i] = sr[i] + c0;
        if (nv == TILE_NR) tile_scores_block_ahead(sc, qr, kt + c0, ldk, D, vs, TILE_NR, pf, mr);
        else tile_scores_tail_ahead(sc, qr, kt + c0, ldk, D, vs, nv, pf, mr);
    }
    while (pf->left > 0) tile_ahead_next(pf); /* no keys, or more lines than steps of d */
    /* own scores (-inf: none), then each row's max over them and its seen columns */
    float so[TILE_MR], mx[TILE_MR], po[TILE_MR];
    vf hv[TILE_MR], vm[TILE_MR];
    /* every row of the group sees every column, whole vectors: no masks (random n = 8192: most
     * groups; the kernel 3 % faster) */
    bool whole = cols % VW == 0;
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        vf a = vzero();
        int64_t d = 0;
        for (; kor[i] && d + VW <= D; d += VW) a = vfma(vload(qr[i] + d), vload(kor[i] + d), a);
        float x = vhsum(a);
        for (; kor[i] && d < D; d++) x += qr[i][d] * kor[i][d];
        so[i] = kor[i] ? scale * x : -INFINITY;
        const int64_t h = hi ? tile_min(hi[row[i]] < 0 ? 0 : hi[row[i]], cols) : cols;
        hv[i] = vset1((float)h), vm[i] = vset1(so[i]);
        whole &= h == cols;
    }
    for (int64_t c = 0; c < cols && whole; c += VW) {
        TILE_UNROLL
        for (int i = 0; i < mr; i++) vm[i] = vmax(vm[i], vload(sr[i] + c));
    }
    for (int64_t c = 0; c < cols && !whole; c += VW) {
        const vf cv = vadd(iota, vset1((float)c));
        TILE_UNROLL
        for (int i = 0; i < mr; i++) vm[i] = vmax(vm[i], tile_seen(vload(sr[i] + c), cv, hv[i]));
    }
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        mx[i] = vhmax(vm[i]);
        vm[i] = vset1(mx[i] == -INFINITY ? 0.0f : mx[i]); /* seeing nothing: all p = 0 */
        po[i] = so[i] - (mx[i] == -INFINITY ? 0.0f : mx[i]);
    }
    for (int k0 = 0; k0 < mr; k0 += VW) { /* p of the own keys: exp by vectors */
        float x[VW];
        for (int k = 0; k < VW; k++) x[k] = k0 + k < mr ? po[k0 + k] : -INFINITY;
        vstore(x, vexp(vload(x)));
        for (int k = 0; k < VW && k0 + k < mr; k++) po[k0 + k] = x[k];
    }
    /* p = exp(s - m) on the seen columns (0 elsewhere, up to cols rounded up to VW), l */
    vf sum[TILE_MR];
    TILE_UNROLL
    for (int i = 0; i < mr; i++) sum[i] = vzero();
    for (int64_t c = 0; c < cols; c += VW) { /* all loads first: a repeated row once */
        const vf cv = vadd(iota, vset1((float)c));
        vf x[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < mr; i++) x[i] = vload(sr[i] + c);
        TILE_UNROLL
        for (int i = 0; i < mr; i++) {
            x[i] = vexp(vsub(x[i], vm[i]));
            if (!whole) x[i] = vzero_below(x[i], vsub(hv[i], vset1(0.5f)), cv);
            sum[i] = vadd(sum[i], x[i]);
        }
        TILE_UNROLL
        for (int i = 0; i < mr; i++) vstore(sr[i] + c, x[i]);
    }
    float inv[TILE_MR]; /* out: the rows normalised (1/l, 0 where nothing is seen) */
    TILE_UNROLL
    for (int i = 0; i < mr; i++) {
        const float li = mx[i] == -INFINITY ? 0.0f : vhsum(sum[i]) + po[i];
        if (i0 + i < rows) m[i0 + i] = mx[i], l[i0 + i] = li;
        inv[i] = li > 0.0f ? 1.0f / li : 0.0f;
    }
    /* acc = p_own v_own + p v (listed keys: rows vidx[c] of v, a loop of its own) */
    const float *scale_out = out ? inv : NULL;
    if (vidx)
        tile_own_pv(orow, (const float *const *)sr, v, ldv, vidx, vor, po, cols, D, scale_out,
                    stream, mr);
    else
        tile_own_pv(orow, (const float *const *)sr, v, ldv, NULL, vor, po, cols, D, scale_out,
                    stream, mr);
}

/* attend_own: rows start fresh, row r seeing its own key own[r] (ko, vo rows ldo apart; -1:
 * none) and the first hi[r] of the cols packed keys. Per group of TILE_MR rows: scores into s,
 * the own keys' scores, then the softmax of the group's rows together (independent chains: no
 * row waits on the one before), acc = p_own·v_own + p v. */
static void k_tile_attend_own(float *acc, float *m, float *l, float *s, int64_t lds, const float *q,
                              int64_t ldq, const float *kt, int64_t ldk, const float *v,
                              int64_t ldv, const int64_t *vidx, const int64_t *hi, const float *ko,
                              const float *vo, int64_t ldo, const int64_t *own, int64_t rows,
                              int64_t cols, int64_t D, float scale, const attn_ks_span *ahead,
                              int64_t n_ahead, float *out, int64_t ldout, bool stream)
{
    float lane[VW];
    for (int k = 0; k < VW; k++) lane[k] = (float)k;
    const vf iota = vload(lane);
    /* the spans' lines, an equal share per group of rows, asked for during its scores */
    tile_ahead pf = {.sp = ahead, .n = ahead ? n_ahead : 0};
    int64_t lines = 0;
    for (int64_t k = 0; k < pf.n; k++)
        lines += ahead[k].bytes > 0
                     ? (int64_t)(((ahead[k].at + (uintptr_t)ahead[k].bytes + 63) >> 6) -
                                 (ahead[k].at >> 6))
                     : 0;
    for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
        const int64_t groups_left = (rows - i0 + TILE_MR - 1) / TILE_MR;
        pf.left = (lines + groups_left - 1) / groups_left;
        lines -= pf.left;
        if (rows - i0 <= TILE_MR_LAST) /* a last group of a few rows: no FMA on repeated rows */
            tile_own_group(acc, m, l, s, lds, q, ldq, kt, ldk, v, ldv, vidx, hi, ko, vo, ldo, own,
                           rows, cols, D, scale, out, ldout, stream, i0, &pf, iota, TILE_MR_LAST);
        else
            tile_own_group(acc, m, l, s, lds, q, ldq, kt, ldk, v, ldv, vidx, hi, ko, vo, ldo, own,
                           rows, cols, D, scale, out, ldout, stream, i0, &pf, iota, TILE_MR);
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

/* This thread's non-temporal stores visible before its later stores (the sets with such stores:
 * avx2, avx512). */
static void k_tile_store_fence(void)
{
#if defined(__AVX2__)
    _mm_sfence();
#endif
}

static void k_tile_end_stream(float *o, int64_t ldo, const float *a, int64_t lda, const float *l,
                              int64_t rows, int64_t D)
{
    for (int64_t r = 0; r < rows; r++) {
        float *orow = o + r * ldo;
        const float *ar = a + r * lda;
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        int64_t d = 0;
#if defined(__AVX512F__)
        if (((uintptr_t)orow & 63) == 0)
            for (; d + 16 <= D; d += 16)
                _mm512_stream_ps(orow + d,
                                 _mm512_mul_ps(_mm512_loadu_ps(ar + d), _mm512_set1_ps(inv)));
#elif defined(__AVX2__)
        if (((uintptr_t)orow & 31) == 0)
            for (; d + 8 <= D; d += 8)
                _mm256_stream_ps(orow + d,
                                 _mm256_mul_ps(_mm256_loadu_ps(ar + d), _mm256_set1_ps(inv)));
#endif
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
