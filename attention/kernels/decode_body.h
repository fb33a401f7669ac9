/*
 * decode_body.h — the decode kernel's per-dtype forms (attention/engines/decode.c; the chunk that
 * runs them: decode_chunk_body.h), written once against the vector layer; included by
 * kernels/set_<isa>.c via set_body.h after vec_<isa>.h, math_body.h, tile_body.h and
 * convert_body.h. K/V rows of D elements stored as f32, bf16 or f16 (attn_dtype), read in place
 * (bf16/f16 widened in registers: vload_bf16, vload_f16 of the vector layer); q float32, already
 * multiplied by the score scale. Each form is instantiated per dtype (DECODE_ROW_OPS,
 * DECODE_WIDE_OPS, DECODE_QUAD_OPS) and reached through the traits table (dtype_body.h), not by
 * branches on it.
 *   one row (G = 1): dot products q·k_j one key at a time, each row read whole and in order
 *   (two FMA chains; bf16 with VEC_HAS_DPBF16 and the CPU's AVX512_BF16, unscaled bf16 q given:
 *   vdpbf16ps on the stored values, exact products, float32 sums), the keys independent of each
 *   other so the core overlaps them with the rows' misses; p·v by 2·DEC_EOG vectors of D and
 *   DEC_EOJ key parities at once (f16 widened by vload_f16, one conversion per vector), bf16
 *   rows widened as pairs (vload_bf16_eo: one load, a shift and a mask per two vectors), so the
 *   chunk keeps those rows' acc in that paired order (dec_pair) until its end. No software
 *   prefetch: the rows come from the chunk's parts in sequence, which the core's prefetchers
 *   serve (hints there cost more than they bring).
 *   four rows (DECODE_QUAD, 4 <= G < 8, D % VW == 0): each key and value vector loaded (and
 *   converted) once for the four rows: scores by tiles of 4 rows x DEC_QK keys whose
 *   accumulators are summed together (vhsums where they make VW vectors), p·v by 4 rows x
 *   DEC_PVV vectors of D (DEC_PV_WIDE sets, f32 with D % (8·VW) == 0: 2 rows x 8 vectors); both
 *   prefetch the next block's rows as they go (dec_next).
 *   time O(rows·keys·D), flops 4·D per score (q·k and p·v); no scratch; one thread.
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

/* Vector pairs of D per pass of dec_pv_bf16_eo (2·DEC_EOG accumulators per key parity; DEC_EOJ
 * key parities summed apart: the set's blocking). */
enum { DEC_EOG = 4 };

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

/* The one-row (G = 1) p·v over whole vectors of D (D % VW == 0), per element type: acc +=
 * Σ_j p[j]·v_j (v_j = vr[j]), 2·DEC_EOG vectors of D per pass and DEC_EOJ key parities summed
 * apart (as dec_pv_bf16_eo, without the pairing). */
#define DECODE_WIDE_OPS(sfx, ELEM, VLOAD)                                                          \
    static void dec_pv_wide_##sfx(float *acc, const float *p, const void *const *vr, int64_t n,    \
                                  int64_t D)                                                       \
    {                                                                                              \
        for (int64_t d = 0; d < D; d += 2 * VW * DEC_EOG) {                                        \
            const int nv = D - d >= 2 * VW * DEC_EOG ? 2 * DEC_EOG : (int)((D - d) / VW);          \
            vf a[DEC_EOJ][2 * DEC_EOG];                                                            \
            for (int u = 0; u < DEC_EOJ; u++)                                                      \
                for (int e = 0; e < 2 * DEC_EOG; e++)                                              \
                    a[u][e] = u == 0 && e < nv ? vload(acc + d + e * VW) : vzero();                \
            int64_t j = 0;                                                                         \
            if (nv == 2 * DEC_EOG)                                                                 \
                for (; j + DEC_EOJ <= n; j += DEC_EOJ)                                             \
                    for (int u = 0; u < DEC_EOJ; u++) {                                            \
                        const vf pj = vset1(p[j + u]);                                             \
                        const ELEM *r = (const ELEM *)vr[j + u] + d;                               \
                        for (int e = 0; e < 2 * DEC_EOG; e++)                                      \
                            a[u][e] = vfma(pj, VLOAD(r + e * VW), a[u][e]);                        \
                    }                                                                              \
            for (; j < n; j++) {                                                                   \
                const vf pj = vset1(p[j]);                                                         \
                for (int e = 0; e < nv; e++)                                                       \
                    a[0][e] = vfma(pj, VLOAD((const ELEM *)vr[j] + d + e * VW), a[0][e]);          \
            }                                                                                      \
            for (int e = 0; e < nv; e++) {                                                         \
                vf x = a[0][e];                                                                    \
                for (int u = 1; u < DEC_EOJ; u++) x = vadd(x, a[u][e]);                            \
                vstore(acc + d + e * VW, x);                                                       \
            }                                                                                      \
        }                                                                                          \
    }

DECODE_WIDE_OPS(f32, float, vload)
DECODE_WIDE_OPS(f16, uint16_t, vload_f16)

enum {
    DECODE_KB = 64,     /* keys per block */
    DECODE_GROUPED = 8, /* from this many rows per KV head the transposed block pays off */
    DECODE_QUAD = 4,    /* rows of the in-place multi-row path (G in [4, DECODE_GROUPED)) */
};
/* The set's blocking of that path: DEC_QK keys per score tile (DECODE_QUAD·DEC_QK accumulators),
 * DEC_PVV vectors of D per p·v step (DECODE_QUAD·DEC_PVV accumulators). */

/* s[(i / DEC_QK)·DECODE_KB + j + i % DEC_QK] = Σ_lanes a[i], i < DECODE_QUAD·DEC_QK: the sums of
 * the score tile's accumulators (row i / DEC_QK, key j + i % DEC_QK). Where they are VW vectors and
 * the layer has vhsums: reduced together by its transposing tree (no horizontal sums). */
static inline void dec_tile_sums(vf *a, float *s, int64_t j)
{
    if (VEC_HAS_HSUMS && DECODE_QUAD * DEC_QK == VW) {
        float tmp[VW];
        vstore(tmp, vhsums(a));
        for (int i = 0; i < VW; i++) s[(i / DEC_QK) * DECODE_KB + j + i % DEC_QK] = tmp[i];
    } else {
        for (int i = 0; i < DECODE_QUAD * DEC_QK; i++)
            s[(i / DEC_QK) * DECODE_KB + j + i % DEC_QK] = vhsum(a[i]);
    }
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

/* dec_pv4 for f32 rows with D % (8·VW) == 0 (sets with DEC_PV_WIDE: 16 accumulators and room
 * for more): two passes of 2 rows x 8 vectors of D, so each pass streams whole value rows (8
 * lines of D = 128 at 16 lanes) in key order rather than half rows twice (4 rows x 4 vectors);
 * each load of V serves two rows. */
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

/* Σ_d q[d]·k[d] of bf16 rows (D even; the vector part by 2·VW) by vdot_bf16 (vdpbf16ps). */
VEC_DPBF16_FN static float dec_dot_dpbf16(const uint16_t *q, const uint16_t *k, int64_t D)
{
    vf a0 = vzero(), a1 = vzero();
    int64_t d = 0;
    for (; d + 4 * VW <= D; d += 4 * VW) {
        a0 = vdot_bf16(a0, q + d, k + d);
        a1 = vdot_bf16(a1, q + d + 2 * VW, k + d + 2 * VW);
    }
    for (; d + 2 * VW <= D; d += 2 * VW) a0 = vdot_bf16(a0, q + d, k + d);
    float s = vhsum(vadd(a0, a1));
    for (; d < D; d++) s += attn_bf16_to_f32(q[d]) * attn_bf16_to_f32(k[d]);
    return s;
}

/* The block forms of the traits table (dtype_body.h), one per dtype:
 * scores1: G = 1, s[j] = q·k_j, j < nb, key by key (bf16 with qh, the row as stored: scale·qh·k_j
 * by vdpbf16ps where the layer has it); pv1: acc += Σ_j s[j]·v_j (bf16: acc paired where D %
 * (2·VW) == 0, see dec_pair); pv4w: the four rows' p·v of the multi-row path. */
static void dec_scores1_f32(const float *q, const uint16_t *qh, float scale, const void *const *kr,
                            int64_t nb, int64_t D, float *s)
{
    (void)qh, (void)scale;
    for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_f32(q, (const float *)kr[j], D);
}
static void dec_scores1_bf16(const float *q, const uint16_t *qh, float scale, const void *const *kr,
                             int64_t nb, int64_t D, float *s)
{
    if (VEC_HAS_DPBF16 && qh)
        for (int64_t j = 0; j < nb; j++)
            s[j] = scale * dec_dot_dpbf16(qh, (const uint16_t *)kr[j], D);
    else
        for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_bf16(q, (const uint16_t *)kr[j], D);
}
static void dec_scores1_f16(const float *q, const uint16_t *qh, float scale, const void *const *kr,
                            int64_t nb, int64_t D, float *s)
{
    (void)qh, (void)scale;
    for (int64_t j = 0; j < nb; j++) s[j] = dec_dot_f16(q, (const uint16_t *)kr[j], D);
}
static void dec_pv1_f32(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D)
{
    if (D % VW == 0) dec_pv_wide_f32(acc, p, vr, n, D);
    else dec_pv_f32(acc, p, vr, n, D);
}
static void dec_pv1_f16(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D)
{
    if (D % VW == 0) dec_pv_wide_f16(acc, p, vr, n, D);
    else dec_pv_f16(acc, p, vr, n, D);
}
static void dec_pv1_bf16(float *acc, const float *p, const void *const *vr, int64_t n, int64_t D)
{
    if (D % (2 * VW) == 0) dec_pv_bf16_eo(acc, p, vr, n, D);
    else dec_pv_bf16(acc, p, vr, n, D);
}
static void dec_pv4w_any_f32(float *acc, const float *s, const void *const *vr, int64_t n,
                             int64_t D, const dec_next *nx)
{
    if (DEC_PV_WIDE && D % (8 * VW) == 0) dec_pv4w_f32(acc, s, vr, n, D, nx);
    else dec_pv4_f32(acc, s, vr, n, D, nx);
}
