/*
 * decode_chunk_body.h — the decode kernel's chunk (kernel_set.h: attn_ks_decode; engines/decode.c),
 * written once against the vector layer; included by kernels/set_<isa>.c via set_body.h after
 * decode_body.h (the per-dtype block forms) and dtype_body.h (the traits table that reaches them:
 * the chunk never branches on the dtype). One chunk: G query rows (float32, already multiplied by
 * the score scale) against n keys of one KV head, K/V rows of D elements stored as f32, bf16 or
 * f16 (attn_dtype). Keys go by blocks of DECODE_KB: scores s_rj = q_r·k_j, then per row the online
 * softmax m' = max(m, max_j s_rj), l' = l·e^(m-m') + Σ_j e^(s_rj-m'), acc' = acc·e^(m-m') +
 * Σ_j e^(s_rj-m') v_j (unnormalised; decode.c merges the chunks and divides by l).
 *   G < 8 (MHA, narrow GQA: memory bound) reads the rows in place and takes each block's keys
 *   from DEC_STREAMS (4) equal parts of the chunk at once, one key of each in turn: 8 sequential
 *   streams (K and V of each part) in flight instead of one K and one V, which a core's
 *   prefetchers serve faster (the softmax does not depend on the order of the keys; more parts
 *   than a core's prefetch streams would thrash them). Rows four at a time (4 <= G < 8, GQA) run
 * the multi-row forms (dec_block_quad: each key and value vector loaded once for the four rows),
 *   which prefetch the next block into L1 as they go: f32, a K row per key of the score tiles
 *   and a V row per key of the first p·v pass; bf16/f16, both rows per key of the score tiles,
 *   lines of K and V alternating (the traits' prefetch_split); the rows left over (G % 4, or D
 *   not a multiple of VW) and G < 4 run the one-row forms (dec_block_single) on the same block.
 *   G >= 8 (MQA, wide GQA: compute bound) transposes the chunk's G rows once (qt [D][G rounded
 *   up to VW]) and runs each block as small GEMMs with the rows in lanes (dec_chunk_lanes):
 *   scores by tiles of DEC_LJ keys (read in place; bf16/f16 converted once per block) x 2 vectors
 *   of rows, the online softmax down the keys with m, l as vectors, p·v by DEC_TR rows x 4
 *   vectors of D (each load of V shared by the rows); no transpose of K. bf16 goes the same way
 *   (vdpbf16ps issues half as many per cycle as FMAs: slower here than converting the block
 *   once). It prefetches the next block's K and V rows, a line per step of its score and p·v
 *   tiles (software prefetch hints, GCC/Clang).
 *   time O(G·n·D), flops 4·D per score (q·k and p·v); scratch: DECODE_KB·(G + 2·D) floats, G >= 8
 *   (gp = G rounded up to VW) gp·(D + 3 + DECODE_KB) + 2·DECODE_KB·D if more
 *   (dec_scratch_floats); one thread.
 */

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

/* G >= DECODE_GROUPED: DEC_TR (the set's blocking) rows per p·v tile of the lanes path (DEC_TR
 * rows x 4 vectors of accumulators). */

/* G >= DECODE_GROUPED ("rows in lanes"): the chunk's G rows transposed once,
 * qt [D][gp] (gp = G rounded up to VW, rows past G zero), so that a block's scores are a small
 * GEMM against the keys read in place (no transpose of K): s[j·gp + r] = Σ_d k_j[d]·qt[d·gp + r],
 * tiles of DEC_LJ keys x 2 vectors of rows (2·DEC_LJ FMA chains; per d two loads of qt and
 * DEC_LJ broadcasts of k). The online softmax then runs down the keys with the rows in lanes
 * (m, l as vectors), and p·v by DEC_TR rows x 4 vectors of D as the transposed path does. DEC_LJ:
 * the set's blocking. */

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
static void dec_chunk_lanes(const dt_traits *tr, const float *q, int64_t G, int64_t D,
                            const void *k, const void *v, int64_t n, float *m, float *l, float *acc,
                            float *scratch)
{
    const int64_t gp = dec_lanes_gp(G);
    const size_t row = (size_t)D * tr->size;
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
        if (!tr->floats) tr->to_f32(kb, kbuf, nb * D), kf = kbuf;
        const int64_t pn = n - j0 - nb < DECODE_KB ? n - j0 - nb : DECODE_KB; /* next block */
        dec_scores_lanes(qt, gp, kf, nb, D, s, kb + (size_t)nb * row, pn, row);
        dec_softmax_lanes(s, nb, gp, mv, lv, corr);
        for (int64_t r = 0; r < G; r++)
            if (corr[r] != 1.0f) k_vscale(acc + r * D, D, corr[r]);
        if (!tr->floats) tr->to_f32(vb, vbuf, nb * D), vf32 = vbuf;
        dec_pv_lanes(acc, s, gp, G, vf32, nb, D, vb + (size_t)nb * row,
                     (int64_t)((size_t)pn * row / 64));
    }
    for (int64_t r = 0; r < G; r++) m[r] = mv[r], l[r] = lv[r];
}

/* DECODE_QUAD rows (q, m, l, acc: theirs) against the nb keys kr[j], values vr[j] read in place
 * (bf16/f16 converted in registers), each key and value vector loaded once for the four rows;
 * s: scores, DECODE_QUAD rows of DECODE_KB. */
static void dec_block_quad(const dt_traits *tr, const float *q, int64_t D, const void *const *kr,
                           const void *const *vr, int64_t nb, float *m, float *l, float *acc,
                           float *s, const dec_next *nx)
{
    tr->scores4(q, kr, nb, D, s, nx);
    for (int64_t r = 0; r < DECODE_QUAD; r++)
        dec_softmax_step(s + r * DECODE_KB, nb, m + r, l + r, acc + r * D, D);
    tr->pv4(acc, s, vr, nb, D, nx);
}

/* One row (G = 1) against the nb keys kr[j], values vr[j] read in place (bf16/f16 converted in
 * registers; bf16 acc paired where D % (2·VW) == 0, see dec_pair). */
static void dec_block_single(const dt_traits *tr, const float *q, const uint16_t *qh, float scale,
                             int64_t D, const void *const *kr, const void *const *vr, int64_t nb,
                             float *m, float *l, float *acc, float *s)
{
    tr->scores1(q, qh, scale, kr, nb, D, s);
    dec_softmax_step(s, nb, m, l, acc, D);
    tr->pv1(acc, s, vr, nb, D);
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

/* G rows against n keys of dtype t (its row of dt_types), by blocks of DECODE_KB keys. */
static void dec_chunk(int t, const float *q, const uint16_t *qh, float scale, int64_t G, int64_t D,
                      const void *k, const void *v, int64_t n, float *m, float *l, float *acc,
                      float *scratch)
{
    const dt_traits *tr = &dt_types[t];
    if (G >= DECODE_GROUPED) { /* bf16 too: converted once per block, as fast as vdpbf16ps */
        dec_chunk_lanes(tr, q, G, D, k, v, n, m, l, acc, scratch);
        return;
    }
    const size_t row = (size_t)D * tr->size;
    /* rows r1.. run as G = 1 does; their bf16 acc paired over the chunk (dec_pair) */
    const int64_t r1 = G >= DECODE_QUAD && D % VW == 0 ? G / DECODE_QUAD * DECODE_QUAD : 0;
    const bool paired = tr->pairs && D % (2 * VW) == 0;
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
                             tr->prefetch_split};
        for (int64_t r = 0; r < r1; r += DECODE_QUAD)
            dec_block_quad(tr, q + r * D, D, kr[b], vr[b], nb, m + r, l + r, acc + r * D, scratch,
                           r == 0 ? &nx : NULL);
        for (int64_t r = r1; r < G; r++) /* the block stays in L1 or L2 for the next rows */
            dec_block_single(tr, q + r * D, qh ? qh + r * D : NULL, scale, D, kr[b], vr[b], nb,
                             m + r, l + r, acc + r * D, scratch);
        nb = nx.n;
    }
    if (paired)
        for (int64_t r = r1; r < G; r++) dec_pair(acc + r * D, D, false);
}

static bool dec_has_dpbf16(void) { return VEC_HAS_DPBF16; }

#define DECODE_SLOTS                                                                               \
    {                                                                                              \
        .chunk = dec_chunk, .scratch_floats = dec_scratch_floats, .has_dpbf16 = dec_has_dpbf16     \
    }
