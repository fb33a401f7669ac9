/*
 * backward_body.h — the backward tile's fused score pass (kernel_set.h: attn_ks_backward), written
 * once against the vector layer, after tile_body.h (its TILE_MR rows) and vmath.h (vexp); BWD_NB
 * and BWD_KG_NR are the set's blocking (set_<isa>.c).
 *   grad_scores  rows i < rows against keys c < cols of kt, vt (packed kᵀ, vᵀ [D, ldk], zero
 *            columns cols..ldk): per TILE_MR rows × BWD_NB vectors of keys, both score products
 *            (scale·q kᵀ and scale·dout vᵀ) side by side in registers, then
 *              p  = exp(scale·q·k - lse[i])              where lo[i] <= c < hi[i], else 0
 *              ds = p·(scale·dout·v - scale·delta[i])
 *            stored into p, ds [rows, lds] (columns up to cols rounded up to VW; lds >= that):
 *            the scores, probabilities and dS of a small visit in one pass, no scores stored
 *            and read back. 4·rows·cols·D flops (the two products), the exp per score.
 *   key_grads  dv += pᵀ dout, dk += dsᵀ q (p, ds [rows, lds]; q, dout rows ldq, lddo apart) into
 *            the rows of keys c < cols: at (grows ? grows[c] : c)·ldg of dk, dv; per BWD_KG_MR
 *            keys × BWD_KG_NR vectors of D in registers (32 keys: no repeated key). 4·rows·cols·D
 *            flops.
 * The same operations as the unfused steps (tile_body.h's scores, math_body.h's vexp_sum and
 * scores_grad), the mask applied to p after the exp. A partial group of rows repeats its last
 * row. No scratch, one thread.
 */

/* One TILE_MR × nv·VW block of p and ds (columns c0 ..), nv <= BWD_NB. */
TILE_INLINE void bwd_grad_block(float *const *pr, float *const *dr, const float *const *qr,
                                const float *const *gr, const float *kt, const float *vt,
                                int64_t ldk, int64_t D, float scale, const float *lse,
                                const float *sdelta, const float *am, const float *hm, int64_t c0,
                                int nv)
{
    vf s[TILE_MR][BWD_NB], g[TILE_MR][BWD_NB];
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) s[i][j] = vzero(), g[i][j] = vzero();
    for (int64_t d = 0; d < D; d++, kt += ldk, vt += ldk) {
        vf bk[BWD_NB], bv[BWD_NB];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) bk[j] = vload(kt + j * VW), bv[j] = vload(vt + j * VW);
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const vf a = vset1(qr[i][d]), b = vset1(gr[i][d]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) {
                s[i][j] = vfma(a, bk[j], s[i][j]);
                g[i][j] = vfma(b, bv[j], g[i][j]);
            }
        }
    }
    float lane[VW];
    for (int k = 0; k < VW; k++) lane[k] = (float)k;
    const vf iota = vload(lane), vs = vset1(scale);
    TILE_UNROLL
    for (int i = 0; i < TILE_MR; i++) {
        const vf l = vset1(lse[i]), dl = vset1(sdelta[i]), a = vset1(am[i]), h = vset1(hm[i]);
        TILE_UNROLL
        for (int j = 0; j < nv; j++) {
            const vf cv = vadd(iota, vset1((float)(c0 + j * VW)));
            vf p = vexp(vsub(vmul(s[i][j], vs), l));
            p = vzero_below(vzero_below(p, h, cv), cv, a); /* seen: a <= c < h */
            vstore(pr[i] + j * VW, p);
            vstore(dr[i] + j * VW, vmul(p, vsub(vmul(g[i][j], vs), dl)));
        }
    }
}

static void k_bwd_grad_scores(float *p, float *ds, int64_t lds, const float *q, int64_t ldq,
                              const float *dout, int64_t lddo, const float *kt, const float *vt,
                              int64_t ldk, const float *lse, const float *delta, const int64_t *lo,
                              const int64_t *hi, int64_t rows, int64_t cols, int64_t D, float scale)
{
    for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
        const float *qr[TILE_MR], *gr[TILE_MR];
        float *prow[TILE_MR], *drow[TILE_MR], l[TILE_MR], sd[TILE_MR], am[TILE_MR], hm[TILE_MR];
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++) {
            const int64_t r = tile_min(i0 + i, rows - 1);
            const int64_t h = hi ? tile_min(hi[r] < 0 ? 0 : hi[r], cols) : cols;
            const int64_t a = lo ? tile_min(lo[r] < 0 ? 0 : lo[r], h) : 0;
            qr[i] = q + r * ldq, gr[i] = dout + r * lddo;
            prow[i] = p + r * lds, drow[i] = ds + r * lds;
            l[i] = lse[r], sd[i] = scale * delta[r];
            am[i] = (float)a - 0.5f, hm[i] = (float)h - 0.5f; /* whole numbers at half offsets */
        }
        for (int64_t c0 = 0; c0 < cols; c0 += BWD_NB * VW) {
            const int nv = (int)tile_min(BWD_NB, (cols - c0 + VW - 1) / VW);
            float *pc[TILE_MR], *dc[TILE_MR];
            TILE_UNROLL
            for (int i = 0; i < TILE_MR; i++) pc[i] = prow[i] + c0, dc[i] = drow[i] + c0;
            if (nv < BWD_NB) /* the last block's vectors (BWD_NB 2: one) */
                bwd_grad_block(pc, dc, qr, gr, kt + c0, vt + c0, ldk, D, scale, l, sd, am, hm, c0,
                               1);
            else
                bwd_grad_block(pc, dc, qr, gr, kt + c0, vt + c0, ldk, D, scale, l, sd, am, hm, c0,
                               BWD_NB);
        }
    }
}

/* Keys per register block of key_grads (a divisor of random's 32 drawn keys: no repeated key,
 * where the tile's 6 rows compute 36); BWD_KG_NR vectors of D per block (the set's blocking). */
#define BWD_KG_MR 4

/* Keys orow[i] (nv vectors from their column d0, i < BWD_KG_MR) += Σ_r x[r·ld + ci[i]]·y_r. */
TILE_INLINE void bwd_key_block(float *const *orow, const float *x, const int64_t *ci, int64_t ld,
                               const float *y, int64_t ldy, int64_t rows, int nv)
{
    vf acc[BWD_KG_MR][BWD_KG_NR];
    TILE_UNROLL
    for (int i = 0; i < BWD_KG_MR; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) acc[i][j] = vload(orow[i] + j * VW);
    for (int64_t r = 0; r < rows; r++, x += ld, y += ldy) {
        vf b[BWD_KG_NR];
        TILE_UNROLL
        for (int j = 0; j < nv; j++) b[j] = vload(y + j * VW);
        TILE_UNROLL
        for (int i = 0; i < BWD_KG_MR; i++) {
            const vf a = vset1(x[ci[i]]);
            TILE_UNROLL
            for (int j = 0; j < nv; j++) acc[i][j] = vfma(a, b[j], acc[i][j]);
        }
    }
    TILE_UNROLL
    for (int i = 0; i < BWD_KG_MR; i++) TILE_UNROLL
    for (int j = 0; j < nv; j++) vstore(orow[i] + j * VW, acc[i][j]);
}

/* g rows of keys c < cols (at g + (grows ? grows[c] : c)·ldg) += Σ_r x[r·ld + c]·y_r (y rows ldy
 * apart, r < rows): per BWD_KG_MR keys, by BWD_KG_NR vectors of D. */
static void bwd_key_product(float *g, int64_t ldg, const int64_t *grows, const float *x, int64_t ld,
                            const float *y, int64_t ldy, int64_t rows, int64_t cols, int64_t D)
{
    for (int64_t c0 = 0; c0 < cols; c0 += BWD_KG_MR) {
        int64_t ci[BWD_KG_MR];
        float *orow[BWD_KG_MR], *od[BWD_KG_MR];
        TILE_UNROLL
        for (int i = 0; i < BWD_KG_MR; i++) {
            const int64_t c = tile_min(c0 + i, cols - 1); /* a partial group repeats its last */
            ci[i] = c;
            orow[i] = g + (grows ? grows[c] : c) * ldg;
        }
        int64_t d0 = 0;
        for (; d0 + BWD_KG_NR * VW <= D; d0 += BWD_KG_NR * VW) {
            TILE_UNROLL
            for (int i = 0; i < BWD_KG_MR; i++) od[i] = orow[i] + d0;
            bwd_key_block(od, x, ci, ld, y + d0, ldy, rows, BWD_KG_NR);
        }
        for (; d0 + VW <= D; d0 += VW) {
            TILE_UNROLL
            for (int i = 0; i < BWD_KG_MR; i++) od[i] = orow[i] + d0;
            bwd_key_block(od, x, ci, ld, y + d0, ldy, rows, 1);
        }
        for (int64_t c = c0; c < tile_min(c0 + BWD_KG_MR, cols) && d0 < D; c++) /* D % VW left */
            for (int64_t r = 0; r < rows; r++)
                for (int64_t d = d0; d < D; d++)
                    g[(grows ? grows[c] : c) * ldg + d] += x[r * ld + c] * y[r * ldy + d];
    }
}

static void k_bwd_key_grads(float *dk, float *dv, int64_t ldg, const int64_t *grows, const float *p,
                            const float *ds, int64_t lds, const float *q, int64_t ldq,
                            const float *dout, int64_t lddo, int64_t rows, int64_t cols, int64_t D)
{
    bwd_key_product(dv, ldg, grows, p, lds, dout, lddo, rows, cols, D);
    bwd_key_product(dk, ldg, grows, ds, lds, q, ldq, rows, cols, D);
}

#define BACKWARD_SLOTS                                                                             \
    {                                                                                              \
        .grad_scores = k_bwd_grad_scores, .key_grads = k_bwd_key_grads                             \
    }
