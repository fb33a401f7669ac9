/*
 * decode_body.h — the decode kernel's inner loop (attention/engines/decode.c), written once against
 * the vector layer; included by kernels/set_<isa>.c via set_body.h after vec_<isa>.h, math_body.h,
 * tile_body.h and convert_body.h. One chunk: G query rows (float32, already
 * multiplied by the score scale) against n keys of one KV head, K/V rows of D elements stored as
 * f32, bf16 or f16 (attn_dtype). Keys go by blocks of DECODE_KB: scores s_rj = q_r·k_j, then per
 * row the online softmax m' = max(m, max_j s_rj), l' = l·e^(m-m') + Σ_j e^(s_rj-m'), acc' =
 * acc·e^(m-m') + Σ_j e^(s_rj-m') v_j (unnormalised; decode.c merges the chunks and divides by l).
 *   G < 8 (MHA, narrow GQA: memory bound) reads the rows in place and takes each block's keys
 *   from DEC_STREAMS (4) equal parts of the chunk at once, one key of each in turn: 8
 *   sequential streams (K and V of each part) in flight instead of one K and one V, which a core's
 *   prefetchers serve faster (the softmax does not depend on the order of the keys; a 2-vCPU
 *   Xeon, n = 65536, H = 32, D = 128, f32, 1 thread: gqa ~50 -> ~30 ms per step with 16 parts;
 *   a 2-vCPU Zen 5, same shape, 4 parts against 16, same process, steps alternating: MHA f32
 *   ~1.2x, MHA bf16 ~1.1x faster, gqa f32 the same; 2 or 8 parts no better).
 *   G < 4: scores sixteen keys at a time on AVX-512
 *   (sixteen chains side by side, their sums by one transposing tree): f32 by FMAs, bf16 with
 *   AVX512_BF16 (avx512 set, attn_cpu_has_avx512bf16(), unscaled bf16 q given) by vdpbf16ps on
 *   the stored values (exact products, float32 sums); else one dot product per key (bf16/f16
 *   converted in registers). p.v by 8 vectors of D and two key parities at once (AVX-512; AVX2
 *   one); bf16 rows widened as pairs (vload_bf16_eo: one load, a shift and a mask per two
 *   vectors), so the chunk keeps those rows' acc in that paired order (dec_pair) until its end.
 *   4 <= G < 8 (GQA) runs the rows four at a time against the block in place: each key and value
 *   vector is loaded (bf16/f16 converted in registers) once for the four rows; scores by tiles
 *   of 4 rows x 4 keys (AVX2: 2 keys) whose accumulators are summed together (AVX-512: one
 *   transposing tree instead of sixteen horizontal sums); p.v by 4 rows x 4 vectors of D
 *   (AVX2: 2). It prefetches the next block into L1 as it goes: f32, a K row per key of its
 *   score tiles and a V row per key of its first p.v pass; bf16/f16, both rows per key of its
 *   score tiles, lines of K and V alternating (Zen 5 as above: gqa f32 ~1.35x, bf16 ~2.6x
 *   faster; f32 both in the scores ~1.2x, bf16 split ~0.9x of the other; the same in the G < 4
 *   scores: MHA bf16 ~0.9x, f32 ~0.8x, so not there). The rows left over (G % 4, or D not
 *   a multiple of VW) run as G = 1 does (on the same block).
 *   On AVX-512, f32 with D % (8·VW) == 0 runs that p.v as 2 rows x 8 vectors (dec_pv4w_f32).
 *   G >= 8 (MQA, wide GQA: compute bound) transposes the chunk's G rows once (qt [D][G rounded
 *   up to VW]) and runs each block as small GEMMs with the rows in lanes (dec_chunk_lanes): scores
 *   by tiles of DEC_LJ keys (read in place; bf16/f16 converted once per block) x 2 vectors of
 *   rows, the online softmax down the keys with m, l as vectors, p·v by DEC_TR rows x 4 vectors
 *   of D (each load of V shared by the rows); no transpose of K (it took ~20 % of the time).
 *   bf16 goes the same way (vdpbf16ps measured slower here than converting the block once: it
 *   issues half as many per cycle as FMAs). It prefetches the next block's K and V rows, a line
 *   per step of its score and p·v tiles (software prefetch hints, GCC/Clang; G < 8 has its
 *   streams, 4 <= G < 8 also its prefetch above).
 *   time O(G·n·D), flops 4·D per score (q·k and p·v); scratch: DECODE_KB·(G + 2·D) floats, G >= 8
 *   (gp = G rounded up to VW) gp·(D + 3 + DECODE_KB) + 2·DECODE_KB·D if more
 *   (decode_scratch_floats); one thread.
 */

/* Prefetch the bytes [p, p + len) into the caches (a hint: no effect where unsupported). */
static inline void dec_prefetch(const void *p, size_t len)
{
#if defined(__GNUC__)
    for (size_t o = 0; o < len; o += 64) __builtin_prefetch((const char *)p + o, 0, 3);
#else
    (void)p, (void)len;
#endif
}
/* The next block's rows (its K rows kr[j], V rows vr[j], j < n, of row bytes each), which the
 * in-place multi-row path prefetches while it runs the current block: its V rows in the p·v
 * pass (split) or with the K rows in the scores. */
typedef struct dec_next {
    const void *const *kr, *const *vr;
    int64_t n;
    size_t row;
    bool split;
} dec_next;

/* Prefetch rows [j0, j1) of the next block (nx NULL: nothing): from the scores (values false)
 * its K rows, and its V rows unless split (lines of K and V alternating); from the p·v pass
 * (values true) its V rows if split. */
static inline void dec_prefetch_next(const dec_next *nx, bool values, int64_t j0, int64_t j1)
{
    if (!nx || (values && !nx->split)) return;
    for (int64_t j = j0; j < j1 && j < nx->n; j++)
        if (values) dec_prefetch(nx->vr[j], nx->row);
        else if (nx->split) dec_prefetch(nx->kr[j], nx->row);
        else
            for (size_t o = 0; o < nx->row; o += 64)
                dec_prefetch((const char *)nx->kr[j] + o, 1),
                    dec_prefetch((const char *)nx->vr[j] + o, 1);
}

/* Dot products and weighted sums over one dtype's rows, defined per element type. */
#define DECODE_ROW_OPS(sfx, ELEM, VLOAD, SLOAD)                                                    \
    TILE_INLINE float dec_dot_##sfx(const float *q, const ELEM *k, int64_t D)                      \
    {                                                                                              \
        vf a0 = vzero(), a1 = vzero();                                                             \
        int64_t d = 0;                                                                             \
        for (; d + 2 * VW <= D; d += 2 * VW) {                                                     \
            a0 = vfma(vload(q + d), VLOAD(k + d), a0);                                             \
            a1 = vfma(vload(q + d + VW), VLOAD(k + d + VW), a1);                                   \
        }                                                                                          \
        for (; d + VW <= D; d += VW) a0 = vfma(vload(q + d), VLOAD(k + d), a0);                    \
        float s = vhsum(vadd(a0, a1));                                                             \
        for (; d < D; d++) s += q[d] * SLOAD(k[d]);                                                \
        return s;                                                                                  \
    }                                                                                              \
    /* acc[d] += Σ_j p[j]·v_j[d], j < n (v_j = vr[j]): acc in registers, 4 vectors at a time */  \
    static void dec_pv_##sfx(float *acc, const float *p, const void *const *vr, int64_t n,         \
                             int64_t D)                                                            \
    {                                                                                              \
        int64_t d = 0;                                                                             \
        for (; d + 4 * VW <= D; d += 4 * VW) {                                                     \
            vf a0 = vload(acc + d), a1 = vload(acc + d + VW), a2 = vload(acc + d + 2 * VW),        \
               a3 = vload(acc + d + 3 * VW);                                                       \
            for (int64_t j = 0; j < n; j++) {                                                      \
                const vf pj = vset1(p[j]);                                                         \
                const ELEM *r = (const ELEM *)vr[j] + d;                                           \
                a0 = vfma(pj, VLOAD(r), a0), a1 = vfma(pj, VLOAD(r + VW), a1);                     \
                a2 = vfma(pj, VLOAD(r + 2 * VW), a2), a3 = vfma(pj, VLOAD(r + 3 * VW), a3);        \
            }                                                                                      \
            vstore(acc + d, a0), vstore(acc + d + VW, a1);                                         \
            vstore(acc + d + 2 * VW, a2), vstore(acc + d + 3 * VW, a3);                            \
        }                                                                                          \
        for (; d + VW <= D; d += VW) {                                                             \
            vf a = vload(acc + d);                                                                 \
            for (int64_t j = 0; j < n; j++)                                                        \
                a = vfma(vset1(p[j]), VLOAD((const ELEM *)vr[j] + d), a);                          \
            vstore(acc + d, a);                                                                    \
        }                                                                                          \
        for (; d < D; d++) {                                                                       \
            float a = acc[d];                                                                      \
            for (int64_t j = 0; j < n; j++) a += p[j] * SLOAD(((const ELEM *)vr[j])[d]);           \
            acc[d] = a;                                                                            \
        }                                                                                          \
    }

static inline float dec_f32_scalar(float x) { return x; }
DECODE_ROW_OPS(f32, float, vload, dec_f32_scalar)
DECODE_ROW_OPS(bf16, uint16_t, vload_bf16, attn_bf16_to_f32)
DECODE_ROW_OPS(f16, uint16_t, vload_f16, attn_f16_to_f32)

/* G = 1, bf16 V, D % (2·VW) == 0: the chunk keeps its acc "paired": each group of 2·VW floats
 * of D holds the group's even elements, then its odd ones, the order vload_bf16_eo widens a row
 * in (one load, a shift and a mask per two vectors, not two widening loads and two shifts).
 * dec_pair: acc into that order (to = true) or back. */
static void dec_pair(float *acc, int64_t D, bool to)
{
    float t[2 * VW];
    for (int64_t g = 0; g < D; g += 2 * VW) {
        memcpy(t, acc + g, sizeof t);
        for (int w = 0; w < VW; w++)
            if (to) acc[g + w] = t[2 * w], acc[g + VW + w] = t[2 * w + 1];
            else acc[g + 2 * w] = t[w], acc[g + 2 * w + 1] = t[VW + w];
    }
}

/* Vector pairs of D per pass of dec_pv_bf16_eo (2·DEC_EOG accumulators per key parity) and key
 * parities summed apart (AVX-512: two, so 16 independent FMA chains; AVX2 has 16 registers). */
enum { DEC_EOG = 4, DEC_EOJ = VW == 16 ? 2 : 1 };

/* acc (paired, see dec_pair) += Σ_j p[j]·v_j for j < n, bf16 rows v_j = vr[j], D % (2·VW) == 0. */
static void dec_pv_bf16_eo(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D)
{
    for (int64_t d = 0; d < D; d += 2 * VW * DEC_EOG) {
        const int ng = D - d >= 2 * VW * DEC_EOG ? DEC_EOG : (int)((D - d) / (2 * VW));
        vf a[DEC_EOJ][2 * DEC_EOG];
        for (int u = 0; u < DEC_EOJ; u++)
            for (int e = 0; e < 2 * DEC_EOG; e++)
                a[u][e] = u == 0 && e < 2 * ng ? vload(acc + d + e * VW) : vzero();
        int64_t j = 0;
        if (ng == DEC_EOG)
            for (; j + DEC_EOJ <= n; j += DEC_EOJ)
                for (int u = 0; u < DEC_EOJ; u++) {
                    const vf pj = vset1(p[j + u]);
                    const uint16_t *r = (const uint16_t *)vr[j + u] + d;
                    for (int g = 0; g < DEC_EOG; g++) {
                        vf ev, od;
                        vload_bf16_eo(r + 2 * VW * g, &ev, &od);
                        a[u][2 * g] = vfma(pj, ev, a[u][2 * g]);
                        a[u][2 * g + 1] = vfma(pj, od, a[u][2 * g + 1]);
                    }
                }
        for (; j < n; j++) {
            const vf pj = vset1(p[j]);
            for (int g = 0; g < ng; g++) {
                vf ev, od;
                vload_bf16_eo((const uint16_t *)vr[j] + d + 2 * VW * g, &ev, &od);
                a[0][2 * g] = vfma(pj, ev, a[0][2 * g]);
                a[0][2 * g + 1] = vfma(pj, od, a[0][2 * g + 1]);
            }
        }
        for (int e = 0; e < 2 * ng; e++) {
            vf x = a[0][e];
            for (int u = 1; u < DEC_EOJ; u++) x = vadd(x, a[u][e]);
            vstore(acc + d + e * VW, x);
        }
    }
}

/* acc += Σ_j p[j]·v_j for j < n, f32 rows v_j = vr[j], D % VW == 0: 2·DEC_EOG vectors of D per
 * pass, DEC_EOJ key parities summed apart (as dec_pv_bf16_eo, without the pairing). */
static void dec_pv_f32_wide(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D)
{
    for (int64_t d = 0; d < D; d += 2 * VW * DEC_EOG) {
        const int nv = D - d >= 2 * VW * DEC_EOG ? 2 * DEC_EOG : (int)((D - d) / VW);
        vf a[DEC_EOJ][2 * DEC_EOG];
        for (int u = 0; u < DEC_EOJ; u++)
            for (int e = 0; e < 2 * DEC_EOG; e++)
                a[u][e] = u == 0 && e < nv ? vload(acc + d + e * VW) : vzero();
        int64_t j = 0;
        if (nv == 2 * DEC_EOG)
            for (; j + DEC_EOJ <= n; j += DEC_EOJ)
                for (int u = 0; u < DEC_EOJ; u++) {
                    const vf pj = vset1(p[j + u]);
                    const float *r = (const float *)vr[j + u] + d;
                    for (int e = 0; e < 2 * DEC_EOG; e++)
                        a[u][e] = vfma(pj, vload(r + e * VW), a[u][e]);
                }
        for (; j < n; j++) {
            const vf pj = vset1(p[j]);
            for (int e = 0; e < nv; e++)
                a[0][e] = vfma(pj, vload((const float *)vr[j] + d + e * VW), a[0][e]);
        }
        for (int e = 0; e < nv; e++) {
            vf x = a[0][e];
            for (int u = 1; u < DEC_EOJ; u++) x = vadd(x, a[u][e]);
            vstore(acc + d + e * VW, x);
        }
    }
}

enum {
    DECODE_KB = 64,     /* keys per block */
    DECODE_GROUPED = 8, /* from this many rows per KV head the transposed block pays off */
    DECODE_QUAD = 4,    /* rows of the in-place multi-row path (G in [4, DECODE_GROUPED)) */
    /* keys per score tile of that path (DECODE_QUAD·DEC_QK accumulators) and vectors of D per
     * p·v step (DECODE_QUAD·DEC_PVV accumulators): AVX2 has 16 registers, AVX-512 32 */
    DEC_QK = VW == 8 ? 2 : 4,
    DEC_PVV = VW == 8 ? 2 : 4,
};

#if VW == 16
/* Lane i of the result = Σ_lanes a[i], i < 16: a transposing tree of 45 shuffles and adds. */
static inline vf dec_sums16(const vf *a)
{
    vf t[8], u[4], w[2];
    for (int i = 0; i < 8; i++) /* lanes 0, 2 of each 128-bit block: a[2i], 1, 3: a[2i + 1] */
        t[i] = vadd(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]),
                    _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; i++) { /* each 128-bit block: a[4i .. 4i + 3] (that block's part) */
        const __m512d x = _mm512_castps_pd(t[2 * i]), y = _mm512_castps_pd(t[2 * i + 1]);
        u[i] = vadd(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                    _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    for (int i = 0; i < 2; i++) /* blocks: u[2i] (0+1, 2+3), u[2i + 1] (0+1, 2+3) */
        w[i] = vadd(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                    _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    return vadd(_mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)),
                _mm512_shuffle_f32x4(w[0], w[1], _MM_SHUFFLE(3, 1, 3, 1)));
}
#endif

#if VW == 16
/* G = 1, f32: s[j] = q·k_j (k_j = kr[j]) for j < n, D % 16 == 0: sixteen keys at a time (sixteen
 * independent chains side by side, their sums by one transposing tree), the rest key by key. */
static void dec_scores1_f32(const float *q, const void *const *kr, int64_t n, int64_t D, float *s)
{
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        vf a[16];
        for (int i = 0; i < 16; i++) a[i] = vzero();
        for (int64_t d = 0; d < D; d += 16) {
            const vf qd = vload(q + d);
            for (int i = 0; i < 16; i++) a[i] = vfma(qd, vload((const float *)kr[j + i] + d), a[i]);
        }
        vstore(s + j, dec_sums16(a));
    }
    for (; j < n; j++) s[j] = dec_dot_f32(q, (const float *)kr[j], D);
}
#endif

/* s[(i / DEC_QK)·DECODE_KB + j + i % DEC_QK] = Σ_lanes a[i], i < DECODE_QUAD·DEC_QK: the sums of
 * the score tile's accumulators (row i / DEC_QK, key j + i % DEC_QK). AVX-512: the sixteen
 * vectors reduced together by a transposing tree (45 shuffles and adds, no horizontal sums). */
static inline void dec_tile_sums(vf *a, float *s, int64_t j)
{
#if VW == 16
    float tmp[16];
    vstore(tmp, dec_sums16(a));
    for (int i = 0; i < 16; i++) s[(i / DEC_QK) * DECODE_KB + j + i % DEC_QK] = tmp[i];
#else
    for (int i = 0; i < DECODE_QUAD * DEC_QK; i++)
        s[(i / DEC_QK) * DECODE_KB + j + i % DEC_QK] = vhsum(a[i]);
#endif
}

/* The in-place multi-row path (DECODE_QUAD <= G < DECODE_GROUPED, D % VW == 0), per element
 * type, over the block's rows kr[j], vr[j] (dec_streams_block: from DEC_STREAMS parts):
 * dec_scores4: s[r·DECODE_KB + j] = q_r·k_j for DECODE_QUAD rows and keys j < n, DEC_QK keys at
 * a time: each vector of a key row is loaded (and converted) once for the four rows;
 * dec_pv4: acc_r[d] += Σ_j p_r[j]·v_j[d] (p_r = s + r·DECODE_KB), each vector of a value row
 * loaded once for the four rows, DEC_PVV vectors of D at a time. */
#define DECODE_QUAD_OPS(sfx, ELEM, VLOAD)                                                          \
    static void dec_scores4_##sfx(const float *q, const void *const *kr, int64_t n, int64_t D,     \
                                  float *s, const dec_next *nx)                                    \
    {                                                                                              \
        int64_t j = 0;                                                                             \
        for (; j + DEC_QK <= n; j += DEC_QK) {                                                     \
            dec_prefetch_next(nx, false, j, j + DEC_QK);                                           \
            const ELEM *kc[DEC_QK];                                                                \
            for (int c = 0; c < DEC_QK; c++) kc[c] = (const ELEM *)kr[j + c];                      \
            vf a[DECODE_QUAD * DEC_QK];                                                            \
            for (int i = 0; i < DECODE_QUAD * DEC_QK; i++) a[i] = vzero();                         \
            for (int64_t d = 0; d < D; d += VW) {                                                  \
                vf x[DEC_QK];                                                                      \
                for (int c = 0; c < DEC_QK; c++) x[c] = VLOAD(kc[c] + d);                          \
                for (int r = 0; r < DECODE_QUAD; r++) {                                            \
                    const vf qr = vload(q + r * D + d);                                            \
                    for (int c = 0; c < DEC_QK; c++)                                               \
                        a[r * DEC_QK + c] = vfma(qr, x[c], a[r * DEC_QK + c]);                     \
                }                                                                                  \
            }                                                                                      \
            dec_tile_sums(a, s, j);                                                                \
        }                                                                                          \
        dec_prefetch_next(nx, false, j, DECODE_KB);                                                \
        for (; j < n; j++)                                                                         \
            for (int r = 0; r < DECODE_QUAD; r++)                                                  \
                s[r * DECODE_KB + j] = dec_dot_##sfx(q + r * D, (const ELEM *)kr[j], D);           \
    }                                                                                              \
    static void dec_pv4_##sfx(float *acc, const float *s, const void *const *vr, int64_t n,        \
                              int64_t D, const dec_next *nx)                                       \
    {                                                                                              \
        int64_t d = 0;                                                                             \
        for (; d + DEC_PVV * VW <= D; d += DEC_PVV * VW) {                                         \
            vf a[DECODE_QUAD * DEC_PVV];                                                           \
            for (int r = 0; r < DECODE_QUAD; r++)                                                  \
                for (int c = 0; c < DEC_PVV; c++)                                                  \
                    a[r * DEC_PVV + c] = vload(acc + r * D + d + c * VW);                          \
            for (int64_t j = 0; j < n; j++) {                                                      \
                if (d == 0) dec_prefetch_next(nx, true, j, j + 1);                                 \
                const ELEM *v = (const ELEM *)vr[j];                                               \
                vf x[DEC_PVV];                                                                     \
                for (int c = 0; c < DEC_PVV; c++) x[c] = VLOAD(v + d + c * VW);                    \
                for (int r = 0; r < DECODE_QUAD; r++) {                                            \
                    const vf p = vset1(s[r * DECODE_KB + j]);                                      \
                    for (int c = 0; c < DEC_PVV; c++)                                              \
                        a[r * DEC_PVV + c] = vfma(p, x[c], a[r * DEC_PVV + c]);                    \
                }                                                                                  \
            }                                                                                      \
            for (int r = 0; r < DECODE_QUAD; r++)                                                  \
                for (int c = 0; c < DEC_PVV; c++)                                                  \
                    vstore(acc + r * D + d + c * VW, a[r * DEC_PVV + c]);                          \
        }                                                                                          \
        dec_prefetch_next(nx, true, d == 0 ? 0 : n, DECODE_KB); /* the rows not yet asked for */   \
        for (; d < D; d += VW)                                  /* D % VW == 0 */                  \
            for (int r = 0; r < DECODE_QUAD; r++) {                                                \
                vf a = vload(acc + r * D + d);                                                     \
                for (int64_t j = 0; j < n; j++)                                                    \
                    a = vfma(vset1(s[r * DECODE_KB + j]), VLOAD((const ELEM *)vr[j] + d), a);      \
                vstore(acc + r * D + d, a);                                                        \
            }                                                                                      \
    }

DECODE_QUAD_OPS(f32, float, vload)
DECODE_QUAD_OPS(bf16, uint16_t, vload_bf16)
DECODE_QUAD_OPS(f16, uint16_t, vload_f16)

#if VW == 16
/* dec_pv4 for f32 rows with D % (8·VW) == 0 (AVX-512): two passes of 2 rows x 8 vectors of D,
 * so each pass streams whole value rows (8 lines of D = 128) in key order rather than half rows
 * twice (4 rows x 4 vectors); each load of V serves two rows. Zen 5, gqa n = 65536, H = 32,
 * Hkv = 8, D = 128, 2 threads, processes alternating: ~1.04-1.05x (bf16 the same, not used). */
static void dec_pv4w_f32(float *acc, const float *s, const void *const *vr, int64_t n, int64_t D,
                         const dec_next *nx)
{
    for (int64_t d = 0; d < D; d += 8 * VW)
        for (int r0 = 0; r0 < DECODE_QUAD; r0 += 2) {
            vf a[16];
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 8; c++) a[r * 8 + c] = vload(acc + (r0 + r) * D + d + c * VW);
            for (int64_t j = 0; j < n; j++) {
                if (r0 == 0 && d == 0) dec_prefetch_next(nx, true, j, j + 1);
                const float *v = (const float *)vr[j] + d;
                const vf p0 = vset1(s[r0 * DECODE_KB + j]), p1 = vset1(s[(r0 + 1) * DECODE_KB + j]);
                for (int c = 0; c < 8; c++) {
                    const vf x = vload(v + c * VW);
                    a[c] = vfma(p0, x, a[c]), a[8 + c] = vfma(p1, x, a[8 + c]);
                }
            }
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 8; c++) vstore(acc + (r0 + r) * D + d + c * VW, a[r * 8 + c]);
        }
    dec_prefetch_next(nx, true, n, DECODE_KB); /* the rows not yet asked for */
}
#endif

#if VW == 16 && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define DECODE_HAVE_DPBF16 1
/* Σ_d q[d]·k[d] of bf16 rows (D even, a multiple of 32 for the vector part) by vdpbf16ps. */
__attribute__((target("avx512bf16"))) static float dec_dot_dpbf16(const uint16_t *q,
                                                                  const uint16_t *k, int64_t D)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int64_t d = 0;
    for (; d + 64 <= D; d += 64) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_loadu_si512(q + d),
                              (__m512bh)_mm512_loadu_si512(k + d));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh)_mm512_loadu_si512(q + d + 32),
                              (__m512bh)_mm512_loadu_si512(k + d + 32));
    }
    for (; d + 32 <= D; d += 32)
        a0 = _mm512_dpbf16_ps(a0, (__m512bh)_mm512_loadu_si512(q + d),
                              (__m512bh)_mm512_loadu_si512(k + d));
    float s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    for (; d < D; d++) s += attn_bf16_to_f32(q[d]) * attn_bf16_to_f32(k[d]);
    return s;
}

/* G = 1, bf16: s[j] = scale·q·k_j (k_j = kr[j]) for j < n by vdpbf16ps, sixteen keys at a time
 * (D % 32 == 0: sixteen independent chains side by side, their sums by one transposing tree),
 * the rest key by key. */
__attribute__((target("avx512bf16"))) static void dec_scores1_dp(const uint16_t *q,
                                                                 const void *const *kr, int64_t n,
                                                                 int64_t D, float scale, float *s)
{
    const __m512 sc = _mm512_set1_ps(scale);
    int64_t j = 0;
    if (D % 32 == 0)
        for (; j + 16 <= n; j += 16) {
            __m512 a[16];
            for (int i = 0; i < 16; i++) a[i] = _mm512_setzero_ps();
            for (int64_t d = 0; d < D; d += 32) {
                const __m512bh qd = (__m512bh)_mm512_loadu_si512(q + d);
                for (int i = 0; i < 16; i++)
                    a[i] = _mm512_dpbf16_ps(a[i], qd,
                                            (__m512bh)_mm512_loadu_si512(
                                                (const uint16_t *)kr[j + i] + d));
            }
            _mm512_storeu_ps(s + j, _mm512_mul_ps(sc, dec_sums16(a)));
        }
    for (; j < n; j++) s[j] = scale * dec_dot_dpbf16(q, (const uint16_t *)kr[j], D);
}

#endif

/* G < DECODE_GROUPED: scores [G][DECODE_KB] (and room for [DECODE_KB][2·D]); G >= it: the
 * lanes path's (dec_lanes_scratch) */
static int64_t dec_lanes_scratch(int64_t G, int64_t D);
static int64_t dec_scratch_floats(int64_t G, int64_t D)
{
    const int64_t lanes = dec_lanes_scratch(G, D), old = DECODE_KB * (G + 2 * D);
    return lanes > old ? lanes : old;
}

/* Row r's online-softmax step over the block's scores s[0..n): m, l updated, s turned into the
 * weights e^(s - m'), acc rescaled by e^(m - m'). */
static void dec_softmax_step(float *s, int64_t n, float *m, float *l, float *acc, int64_t D)
{
    const float mb = k_vmax(s, n);
    if (mb == -INFINITY) return; /* NaN-free inputs never get here */
    const float mn = *m > mb ? *m : mb;
    const float corr = *m == mn ? 1.0f : *m == -INFINITY ? 0.0f : attn_exp_scalar(*m - mn);
    const float sum = k_vexp_sum(s, n, mn);
    if (corr != 1.0f) k_vscale(acc, D, corr);
    *l = *l * corr + sum;
    *m = mn;
}

/* G >= DECODE_GROUPED: rows per p·v tile of the lanes path (DEC_TR rows x 4 vectors of
 * accumulators: AVX2 has 16 registers, AVX-512 32). */
enum { DEC_TR = VW == 16 ? 4 : 2 };

/* G >= DECODE_GROUPED ("rows in lanes"): the chunk's G rows transposed once,
 * qt [D][gp] (gp = G rounded up to VW, rows past G zero), so that a block's scores are a small
 * GEMM against the keys read in place (no transpose of K): s[j·gp + r] = Σ_d k_j[d]·qt[d·gp + r],
 * tiles of DEC_LJ keys x 2 vectors of rows (2·DEC_LJ FMA chains; per d two loads of qt and
 * DEC_LJ broadcasts of k). The online softmax then runs down the keys with the rows in lanes
 * (m, l as vectors), and p·v by DEC_TR rows x 4 vectors of D as the transposed path does. */
enum { DEC_LJ = VW == 8 ? 6 : 12 };

/* JT keys (rows k + j·D) x nv (1 or 2) vectors of rows from r0: s[j·gp + r0 ..] (JT, nv
 * constants once inlined). */
TILE_INLINE void dec_lanes_tile(const float *qt, int64_t gp, int64_t r0, int nv, int JT,
                                const float *k, int64_t D, float *s, const char *pf, int64_t pfl)
{
    vf a[2 * DEC_LJ];
    for (int i = 0; i < 2 * JT; i++) a[i] = vzero();
    for (int64_t d = 0; d < D; d++) {
        if (d < pfl) dec_prefetch(pf + 64 * d, 1);
        const vf q0 = vload(qt + d * gp + r0), q1 = nv > 1 ? vload(qt + d * gp + r0 + VW) : q0;
        for (int j = 0; j < JT; j++) {
            const vf x = vset1(k[j * D + d]);
            a[2 * j] = vfma(x, q0, a[2 * j]);
            if (nv > 1) a[2 * j + 1] = vfma(x, q1, a[2 * j + 1]);
        }
    }
    for (int j = 0; j < JT; j++) {
        vstore(s + j * gp + r0, a[2 * j]);
        if (nv > 1) vstore(s + j * gp + r0 + VW, a[2 * j + 1]);
    }
}

/* The scores of one strip of rows [r0, r0 + nv·VW) against the nb keys (nv constant per call,
 * so each tile shape is inlined): tiles of DEC_LJ keys, then 4, then 1; the first strip
 * prefetches pk's rows (pn rows of row bytes), a line per step of d of each tile. */
TILE_INLINE void dec_scores_strip(const float *qt, int64_t gp, int64_t r0, int nv, const float *k,
                                  int64_t nb, int64_t D, float *s, const char *pk, int64_t pn,
                                  size_t row)
{
#define DEC_LANES_PF(JT)                                                                           \
    pk + (size_t)j *row,                                                                           \
        r0 == 0 && j < pn ? (int64_t)((size_t)((pn - j < (JT) ? pn - j : (JT))) * row / 64) : 0
    int64_t j = 0;
    for (; j + DEC_LJ <= nb; j += DEC_LJ)
        dec_lanes_tile(qt, gp, r0, nv, DEC_LJ, k + j * D, D, s + j * gp, DEC_LANES_PF(DEC_LJ));
    for (; j + 4 <= nb; j += 4)
        dec_lanes_tile(qt, gp, r0, nv, 4, k + j * D, D, s + j * gp, DEC_LANES_PF(4));
    for (; j < nb; j++)
        dec_lanes_tile(qt, gp, r0, nv, 1, k + j * D, D, s + j * gp, DEC_LANES_PF(1));
#undef DEC_LANES_PF
}

/* s[j·gp + r] = q_r·k_j for r < gp, j < nb (f32 rows k), by strips of 2·VW rows (the last may
 * be VW); prefetches pk's rows (pn rows of row bytes) tile by tile. */
static void dec_scores_lanes(const float *qt, int64_t gp, const float *k, int64_t nb, int64_t D,
                             float *s, const char *pk, int64_t pn, size_t row)
{
    for (int64_t r0 = 0; r0 < gp; r0 += 2 * VW)
        if (gp - r0 >= 2 * VW) dec_scores_strip(qt, gp, r0, 2, k, nb, D, s, pk, pn, row);
        else dec_scores_strip(qt, gp, r0, 1, k, nb, D, s, pk, pn, row);
}

/* The online-softmax step of the block (nb >= 1 keys) for every row, rows in lanes: mv, lv
 * [gp] updated, s turned into the weights e^(s - m'), corr[r] = e^(m - m') (m = -inf: 0). */
static void dec_softmax_lanes(float *s, int64_t nb, int64_t gp, float *mv, float *lv, float *corr)
{
    for (int64_t r = 0; r < gp; r += VW) {
        vf mx = vload(s + r);
        for (int64_t j = 1; j < nb; j++) mx = vmax(mx, vload(s + j * gp + r));
        const vf m = vload(mv + r), mn = vmax(m, mx), c = vexp(vsub(m, mn));
        vf sum0 = vzero(), sum1 = vzero();
        int64_t j = 0;
        for (; j + 2 <= nb; j += 2) {
            const vf e0 = vexp(vsub(vload(s + j * gp + r), mn));
            const vf e1 = vexp(vsub(vload(s + (j + 1) * gp + r), mn));
            vstore(s + j * gp + r, e0), vstore(s + (j + 1) * gp + r, e1);
            sum0 = vadd(sum0, e0), sum1 = vadd(sum1, e1);
        }
        for (; j < nb; j++) {
            const vf e0 = vexp(vsub(vload(s + j * gp + r), mn));
            vstore(s + j * gp + r, e0), sum0 = vadd(sum0, e0);
        }
        vstore(lv + r, vfma(vload(lv + r), c, vadd(sum0, sum1)));
        vstore(mv + r, mn), vstore(corr + r, c);
    }
}

/* acc_r[e] += Σ_j p[j·gp + r]·v[j·D + e] for DEC_TR rows from r0 (rows past G: row G - 1 again,
 * not stored) and the nv (<= 4, a constant once inlined) vectors of D from d. */
TILE_INLINE void dec_pv_lanes_tile(float *acc, const float *p, int64_t gp, const float *v,
                                   int64_t G, int64_t r0, int64_t n, int64_t D, int64_t d, int nv,
                                   const char *pf, int64_t pfl)
{
    int64_t rr[DEC_TR];
    for (int i = 0; i < DEC_TR; i++) rr[i] = r0 + i < G ? r0 + i : G - 1;
    vf a[DEC_TR * 4];
    for (int i = 0; i < DEC_TR; i++)
        for (int e = 0; e < nv; e++) a[4 * i + e] = vload(acc + rr[i] * D + d + e * VW);
    for (int64_t j = 0; j < n; j++) {
        const float *vr = v + j * D + d;
        if (j < pfl) dec_prefetch(pf + 64 * j, 1);
        vf x[4];
        for (int e = 0; e < nv; e++) x[e] = vload(vr + e * VW);
        for (int i = 0; i < DEC_TR; i++) {
            const vf pj = vset1(p[j * gp + rr[i]]);
            for (int e = 0; e < nv; e++) a[4 * i + e] = vfma(pj, x[e], a[4 * i + e]);
        }
    }
    for (int i = 0; i < DEC_TR && r0 + i < G; i++)
        for (int e = 0; e < nv; e++) vstore(acc + (r0 + i) * D + d + e * VW, a[4 * i + e]);
}

/* acc_r[d] += Σ_j p[j·gp + r]·v[j·D + d] for every r < G, d < D (f32 rows v). */
static void dec_pv_lanes(float *acc, const float *p, int64_t gp, int64_t G, const float *v,
                         int64_t n, int64_t D, const char *pf, int64_t lines)
{
    int64_t d = 0, l0 = 0; /* lines [l0, l0 + n) of pf prefetched by the next tile */
#define DEC_PV_PF pf + 64 * l0, lines - l0 < n ? lines - l0 : n
    for (; d + 4 * VW <= D; d += 4 * VW) /* v's columns stay in L1 for all the rows */
        for (int64_t r = 0; r < G; r += DEC_TR, l0 += n)
            dec_pv_lanes_tile(acc, p, gp, v, G, r, n, D, d, 4, DEC_PV_PF);
    for (; d + VW <= D; d += VW)
        for (int64_t r = 0; r < G; r += DEC_TR, l0 += n)
            dec_pv_lanes_tile(acc, p, gp, v, G, r, n, D, d, 1, DEC_PV_PF);
#undef DEC_PV_PF
    for (; d < D; d++)
        for (int64_t r = 0; r < G; r++) {
            float a = acc[r * D + d];
            for (int64_t j = 0; j < n; j++) a += p[j * gp + r] * v[j * D + d];
            acc[r * D + d] = a;
        }
}

/* gp: G rounded up to VW. Scratch: qt [D][gp], mv, lv, corr [gp], s [DECODE_KB][gp], kbuf and
 * vbuf [DECODE_KB][D] (16-bit rows converted). */
static int64_t dec_lanes_gp(int64_t G) { return (G + VW - 1) / VW * VW; }
static int64_t dec_lanes_scratch(int64_t G, int64_t D)
{
    const int64_t gp = dec_lanes_gp(G);
    return gp * (D + 3 + DECODE_KB) + 2 * DECODE_KB * D;
}

/* The chunk for G >= DECODE_GROUPED: n keys by blocks of DECODE_KB. */
static void dec_chunk_lanes(int t, const float *q, int64_t G, int64_t D, const void *k,
                            const void *v, int64_t n, float *m, float *l, float *acc,
                            float *scratch)
{
    const int64_t gp = dec_lanes_gp(G);
    const size_t row = (size_t)D * (t == ATTN_F32 ? 4 : 2);
    float *qt = scratch, *mv = qt + D * gp, *lv = mv + gp, *corr = lv + gp, *s = corr + gp,
          *kbuf = s + DECODE_KB * gp, *vbuf = kbuf + DECODE_KB * D;
    for (int64_t d = 0; d < D; d++)
        for (int64_t r = 0; r < gp; r++) qt[d * gp + r] = r < G ? q[r * D + d] : 0.0f;
    for (int64_t r = 0; r < gp; r++) mv[r] = r < G ? m[r] : -INFINITY, lv[r] = r < G ? l[r] : 0;
    for (int64_t j0 = 0; j0 < n; j0 += DECODE_KB) {
        const int64_t nb = n - j0 < DECODE_KB ? n - j0 : DECODE_KB;
        const char *kb = (const char *)k + (size_t)j0 * row,
                   *vb = (const char *)v + (size_t)j0 * row;
        const float *kf = (const float *)kb, *vf32 = (const float *)vb;
        if (t != ATTN_F32) cvt_to_f32(t, kb, kbuf, nb * D), kf = kbuf;
        const int64_t pn = n - j0 - nb < DECODE_KB ? n - j0 - nb : DECODE_KB; /* next block */
        dec_scores_lanes(qt, gp, kf, nb, D, s, kb + (size_t)nb * row, pn, row);
        dec_softmax_lanes(s, nb, gp, mv, lv, corr);
        for (int64_t r = 0; r < G; r++)
            if (corr[r] != 1.0f) k_vscale(acc + r * D, D, corr[r]);
        if (t != ATTN_F32) cvt_to_f32(t, vb, vbuf, nb * D), vf32 = vbuf;
        dec_pv_lanes(acc, s, gp, G, vf32, nb, D, vb + (size_t)nb * row,
                     (int64_t)((size_t)pn * row / 64));
    }
    for (int64_t r = 0; r < G; r++) m[r] = mv[r], l[r] = lv[r];
}

/* DECODE_QUAD rows (q, m, l, acc: theirs) against the nb keys kr[j], values vr[j] read in place
 * (bf16/f16 converted in registers), each key and value vector loaded once for the four rows;
 * s: scores, DECODE_QUAD rows of DECODE_KB. */
static void dec_block_quad(int t, const float *q, int64_t D, const void *const *kr,
                           const void *const *vr, int64_t nb, float *m, float *l, float *acc,
                           float *s, const dec_next *nx)
{
    if (t == ATTN_F32) dec_scores4_f32(q, kr, nb, D, s, nx);
    else if (t == ATTN_BF16) dec_scores4_bf16(q, kr, nb, D, s, nx);
    else dec_scores4_f16(q, kr, nb, D, s, nx);
    for (int64_t r = 0; r < DECODE_QUAD; r++)
        dec_softmax_step(s + r * DECODE_KB, nb, m + r, l + r, acc + r * D, D);
    if (t == ATTN_F32) {
#if VW == 16
        if (D % (8 * VW) == 0) {
            dec_pv4w_f32(acc, s, vr, nb, D, nx);
            return;
        }
#endif
        dec_pv4_f32(acc, s, vr, nb, D, nx);
    } else if (t == ATTN_BF16) dec_pv4_bf16(acc, s, vr, nb, D, nx);
    else dec_pv4_f16(acc, s, vr, nb, D, nx);
}

/* One row (G = 1) against the nb keys kr[j], values vr[j] read in place (bf16/f16 converted in
 * registers; bf16 acc paired where D % (2·VW) == 0, see dec_pair). */
static void dec_block_single(int t, const float *q, const uint16_t *qh, float scale, int64_t D,
                             const void *const *kr, const void *const *vr, int64_t nb, float *m,
                             float *l, float *acc, float *s)
{
    (void)qh, (void)scale;
#ifdef DECODE_HAVE_DPBF16
    if (qh && t == ATTN_BF16) {
        dec_scores1_dp(qh, kr, nb, D, scale, s);
    } else
#endif
        if (t == ATTN_F32) {
#if VW == 16
        if (D % VW == 0) dec_scores1_f32(q, kr, nb, D, s);
        else
#endif
            for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_f32(q, (const float *)kr[j], D);
    } else if (t == ATTN_BF16) {
        for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_bf16(q, (const uint16_t *)kr[j], D);
    } else {
        for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_f16(q, (const uint16_t *)kr[j], D);
    }
    dec_softmax_step(s, nb, m, l, acc, D);
    if (t == ATTN_F32 && D % VW == 0) dec_pv_f32_wide(acc, s, vr, nb, D);
    else if (t == ATTN_F32) dec_pv_f32(acc, s, vr, nb, D);
    else if (t == ATTN_BF16 && D % (2 * VW) == 0) dec_pv_bf16_eo(acc, s, vr, nb, D);
    else if (t == ATTN_BF16) dec_pv_bf16(acc, s, vr, nb, D);
    else dec_pv_f16(acc, s, vr, nb, D);
}

/* G < DECODE_GROUPED: each block takes its keys from DEC_STREAMS equal parts of the chunk at
 * once, one key of each in turn (DECODE_KB / DEC_STREAMS keys of each part): 2·DEC_STREAMS
 * sequential streams (K and V) in flight instead of two, which a core's prefetchers serve faster
 * (the softmax does not depend on the order of the keys). dec_streams_block fills kr, vr with the
 * next block's rows (pos[i]: part i's next key, end[i] its end) and returns how many. */
enum { DEC_STREAMS = 4 };

static int64_t dec_streams_block(const char *k, const char *v, size_t row, int64_t *pos,
                                 const int64_t *end, const void **kr, const void **vr)
{
    int64_t nb = 0;
    for (int c = 0; c < DECODE_KB / DEC_STREAMS; c++)
        for (int i = 0; i < DEC_STREAMS; i++)
            if (pos[i] < end[i]) {
                kr[nb] = k + (size_t)pos[i] * row, vr[nb] = v + (size_t)pos[i] * row;
                pos[i]++, nb++;
            }
    return nb;
}

/* G rows against n keys of dtype t, by blocks of DECODE_KB keys. */
static void dec_chunk(int t, const float *q, const uint16_t *qh, float scale, int64_t G, int64_t D,
                      const void *k, const void *v, int64_t n, float *m, float *l, float *acc,
                      float *scratch)
{
    if (G >= DECODE_GROUPED) { /* bf16 too: converted once per block, as fast as vdpbf16ps */
        dec_chunk_lanes(t, q, G, D, k, v, n, m, l, acc, scratch);
        return;
    }
    const size_t esz = t == ATTN_F32 ? 4 : 2, row = (size_t)D * esz;
    /* rows r1.. run as G = 1 does; their bf16 acc paired over the chunk (dec_pair) */
    const int64_t r1 = G >= DECODE_QUAD && D % VW == 0 ? G / DECODE_QUAD * DECODE_QUAD : 0;
    const bool paired = t == ATTN_BF16 && D % (2 * VW) == 0;
    /* this block's rows and the next one's (from DEC_STREAMS parts), in turn */
    const void *kr[2][DECODE_KB], *vr[2][DECODE_KB];
    if (paired)
        for (int64_t r = r1; r < G; r++) dec_pair(acc + r * D, D, true);
    int64_t pos[DEC_STREAMS], end[DEC_STREAMS];
    for (int i = 0; i < DEC_STREAMS; i++)
        pos[i] = n * i / DEC_STREAMS, end[i] = n * (i + 1) / DEC_STREAMS;
    int64_t nb = dec_streams_block(k, v, row, pos, end, kr[0], vr[0]);
    for (int b = 0; nb > 0; b ^= 1) {
        const dec_next nx = {kr[b ^ 1], vr[b ^ 1],
                             dec_streams_block(k, v, row, pos, end, kr[b ^ 1], vr[b ^ 1]), row,
                             t == ATTN_F32};
        for (int64_t r = 0; r < r1; r += DECODE_QUAD)
            dec_block_quad(t, q + r * D, D, kr[b], vr[b], nb, m + r, l + r, acc + r * D, scratch,
                           r == 0 ? &nx : NULL);
        for (int64_t r = r1; r < G; r++) /* the block stays in L1 or L2 for the next rows */
            dec_block_single(t, q + r * D, qh ? qh + r * D : NULL, scale, D, kr[b], vr[b], nb,
                             m + r, l + r, acc + r * D, scratch);
        nb = nx.n;
    }
    if (paired)
        for (int64_t r = r1; r < G; r++) dec_pair(acc + r * D, D, false);
}

static bool dec_has_dpbf16(void)
{
#ifdef DECODE_HAVE_DPBF16
    return true;
#else
    return false;
#endif
}

#define DECODE_SLOTS                                                                               \
    {                                                                                              \
        .chunk = dec_chunk, .scratch_floats = dec_scratch_floats, .has_dpbf16 = dec_has_dpbf16     \
    }
