/*
 * tile_lanes_body.h — the tile's attend_lanes slot (kernel_set.h: attn_ks_tile.attend_lanes),
 * written once against the vector layer, after tile_body.h (its packing, tile_pv_cols, TILE_MR ×
 * TILE_NR blocking). Strided's second visit: VW row sets (residue classes) side by side, lane x's
 * rows and keys its own: the keys transposed into lanes once (kt [nk][D][VW], rows padded by one
 * vector), then per TILE_MR rows of every lane their queries likewise, scores lane by lane
 * (TILE_MR × TILE_NR FMAs per TILE_MR + TILE_NR vector loads, no broadcast, no horizontal sum),
 * each row's softmax vertically (masks only on keys some lane does not see), and p·v per lane by
 * tile_pv_cols (p read VW floats apart, v rows in place, acc rescaled in the load and normalised
 * in the store). 4·Σ(seen keys)·D flops plus a block's triangle; scratch: kernel_set.h; one
 * thread.
 */

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
    if (nc == 4 && TILE_NR >= 4) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 4);
    else if (nc == 3 && TILE_NR >= 3) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 3);
    else if (nc == 2 && TILE_NR >= 2) tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 2);
    else tile_lanes_scores(s, lds, qt, kt, c0, D, scale, 1);
}

/* attend_lanes' pass 0: kt[c][d][x] = key c of lane x, c < nkmax (a lane past its keys, or past
 * lanes: a key of lane xk, which has the most; never seen), rows ldl floats apart; the keys
 * TILE_LANES_AHEAD on asked for meanwhile (their rows lie far apart). */
TILE_INLINE void tile_lanes_keys(float *kt, int64_t ldl, const float *k, const float *v,
                                 const int64_t *kx, int64_t ldc, const int64_t *nk, int64_t lanes,
                                 int64_t nkmax, int64_t xk, int64_t D)
{
    int64_t idx[VW];
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
}

/* A block's bounds and state in lanes: row i (r0 + i) of lane x sees keys c < hb[i][x], c !=
 * eb[i][x] (-1: none), state mo, lo (-inf, 0 past its rows); every lane's row i sees c < full[i]
 * but the keys ex0[i] .. ex1[i]; returns the most keys a row sees. Its queries packed into qt
 * (rows ldl floats apart), lanes like kt. */
TILE_INLINE int64_t tile_lanes_rows(float *qt, int64_t ldl, const float *q, int64_t ldx,
                                    int64_t ldr, const float *ml, int64_t mlr, const int64_t *nr,
                                    const int64_t *nk, const int64_t *self0, bool causal,
                                    int64_t lanes, int64_t nkmax, int64_t D, int64_t r0,
                                    float (*hb)[VW], float (*eb)[VW], float (*mo)[VW],
                                    float (*lo)[VW], int64_t *full, int64_t *ex0, int64_t *ex1)
{
    int64_t idx[VW], cmax = 0;
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
    return cmax;
}

/* Row i's online softmax over its cmax scores si[c·VW + x], lane by lane (keys c past hv or at ev
 * -inf): si turned into p, mo, lo updated, al = exp(m - m'), inv = 1/l' (0 where l' = 0). */
TILE_INLINE void tile_lanes_softmax(float *si, int64_t cmax, int64_t full, int64_t ex0, int64_t ex1,
                                    const float *hb, const float *eb, float *mo, float *lo,
                                    float *al, float *inv)
{
    const vf ninf = vset1(-INFINITY), half = vset1(0.5f), lowest = vset1(-FLT_MAX);
    const vf hv = vsub(vload(hb), half), ev = vload(eb);
    const vf em = vsub(ev, half), ep = vadd(ev, half);
    vf mx = vload(mo);
    for (int64_t c = 0; c < cmax; c++) {
        vf x = vload(si + c * VW);
        if (c >= full || (c >= ex0 && c <= ex1)) { /* some lane does not see c */
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
    const vf a = vexp(vsub(vload(mo), mu)), ln = vfma(vload(lo), a, sum);
    vstore(al, a), vstore(lo, ln), vstore(mo, mx);
    vstore(inv, vzero_below(vdiv(vset1(1.0f), ln), ln, half)); /* l >= 1 or 0 */
}

/* Lane x's rows r0.. of the block (nrx of them in all): o = (al·o + p v)·inv over its cols keys
 * (p: s + i·lds·VW + x, VW floats apart; v rows vx + c·ldc, in place). */
TILE_INLINE void tile_lanes_pv(float *o, int64_t ldx, int64_t ldr, const float *s, int64_t lds,
                               const float *vx, int64_t ldc, float (*al)[VW], float (*inv)[VW],
                               int64_t x, int64_t r0, int64_t nrx, int64_t cols, int64_t D)
{
    const float *pr[TILE_MR];
    float *orow[TILE_MR], *od[TILE_MR], a0[TILE_MR], iv[TILE_MR];
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        const int64_t ii = tile_min(r0 + i, nrx - 1) - r0;
        pr[i] = s + ii * lds * VW + x, orow[i] = o + x * ldx + (r0 + ii) * ldr;
        a0[i] = al[ii][x], iv[i] = inv[ii][x];
    }
    int64_t d0 = 0;
    for (; d0 + TILE_NR * VW <= D; d0 += TILE_NR * VW) {
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
        tile_pv_cols(od, pr, VW, vx + d0, ldc, NULL, cols, (const float *const *)od, a0, TILE_NR,
                     iv, false, TILE_MR);
    }
    for (; d0 + VW <= D; d0 += VW) {
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) od[i] = orow[i] + d0;
        tile_pv_cols(od, pr, VW, vx + d0, ldc, NULL, cols, (const float *const *)od, a0, 1, iv,
                     false, TILE_MR);
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
    tile_lanes_keys(kt, ldl, k, v, kx, ldc, nk, lanes, nkmax, xk, D);
    const vf vs = vset1(scale);
    for (int64_t r0 = 0; r0 < nrmax; r0 += TILE_MR) {
        for (int64_t x = 0; x < lanes; x++) /* the next block's rows, into L2 */
            for (int64_t r = r0 + TILE_MR; r < tile_min(r0 + 2 * TILE_MR, nr[x]); r++)
                for (int64_t d = 0; d < D; d += 16) {
                    __builtin_prefetch(q + x * ldx + r * ldr + d, 0, 2);
                    __builtin_prefetch(o + x * ldx + r * ldr + d, 1, 2);
                }
        float hb[TILE_MR][VW], eb[TILE_MR][VW], mo[TILE_MR][VW], lo[TILE_MR][VW];
        float al[TILE_MR][VW], inv[TILE_MR][VW];
        int64_t full[TILE_MR], ex0[TILE_MR], ex1[TILE_MR];
        const int64_t cmax = tile_lanes_rows(qt, ldl, q, ldx, ldr, ml, mlr, nr, nk, self0, causal,
                                             lanes, nkmax, D, r0, hb, eb, mo, lo, full, ex0, ex1);
        for (int64_t c0 = 0; c0 < cmax; c0 += TILE_NR) /* scores */
            tile_lanes_scores_cols(s, lds, qt, kt, c0, cmax, D, vs);
        for (int i = 0; i < TILE_MR; i++) { /* each row's softmax, lane by lane */
            tile_lanes_softmax(s + i * lds * VW, cmax, full[i], ex0[i], ex1[i], hb[i], eb[i], mo[i],
                               lo[i], al[i], inv[i]);
            for (int64_t x = 0; x < lanes; x++)
                if (r0 + i < nr[x]) {
                    ml[2 * x + (r0 + i) * mlr] = mo[i][x];
                    ml[2 * x + (r0 + i) * mlr + 1] = lo[i][x];
                }
        }
        for (int64_t x = 0; x < lanes; x++) /* acc = (alpha·acc + p v) / l, lane x's rows */
            if (nr[x] > r0)
                tile_lanes_pv(o, ldx, ldr, s, lds, v + kx[x], ldc, al, inv, x, r0, nr[x],
                              tile_min(cmax, nk[x]), D);
    }
}
