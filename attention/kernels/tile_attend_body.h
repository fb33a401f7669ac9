/*
 * tile_attend_body.h — the tile's attend slot (kernel_set.h: attn_ks_tile.attend), written once
 * against the vector layer, after tile_body.h (its scores and p·v micro-kernels, TILE_MR rows ×
 * TILE_NR vectors). A visit of cols packed keys (kt [D, ldk], v rows ldv apart) updates the online
 * softmax state of rows r < rows (m[r], l[r], acc rows lda apart), row r seeing keys
 * [lo[r], hi[r]) (NULL: from 0, up to all), in one pass per group of TILE_MR rows: their scores
 * into s (rows × lds), over only the columns some row of the group sees (a band's or triangle's
 * group: a fraction of the visit's); the unseen ones -inf; the softmax update of the group's rows
 * side by side (their max, exp and sum chains independent: no row waits on the one before); then
 * acc = alpha·acc + p v (the rescale in p·v's load, no pass of its own over acc). A partial last
 * group repeats its last row. At most 4·rows·cols·D flops; no scratch but s; one thread.
 */

/* The group's row maxima over its columns [0, n) of the scores sr[i] (column 0 = the visit's
 * c_lo): row i sees the visit's columns [ra[i], rh[i]); vm[i] = max(m[row[i]], its seen scores),
 * lanes not reduced. The unseen columns are set to -inf in sr, unless every row sees every column
 * in whole vectors (then no mask at all). */
TILE_INLINE void tile_attend_max(float *const *sr, const int64_t *row, const int64_t *ra,
                                 const int64_t *rh, const float *m, int64_t c_lo, int64_t n,
                                 vf iota, vf *vm)
{
    const vf ninf = vset1(-INFINITY), half = vset1(0.5f);
    vf am[TILE_MR], hm[TILE_MR];
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
}

/* From the row maxima vm[i] (lanes not reduced) and the old m[row[i]]: old[i] = that old maximum,
 * mx[i] the new one, al[i] = exp(old - new) (1 where equal, 0 from -inf), vm[i] = mx[i] broadcast
 * (0 where the row has seen nothing: every p then 0). */
TILE_INLINE void tile_attend_alpha(vf *vm, const float *m, const int64_t *row, float *old,
                                   float *mx, float *al)
{
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
}

/* sr[i][c] = exp(sr[i][c] - vm[i]) for c < n rounded up to VW (unseen: -inf, so 0); sum[i] their
 * sums, lanes not reduced. */
TILE_INLINE void tile_attend_exp(float *const *sr, int64_t n, const vf *vm, vf *sum)
{
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
}

/* The group's acc rows orow[i] (rows i0.. of acc, lda apart) = al[i]·acc + p v over the n columns
 * of p = sr (v rows vg + c·ldv); a fresh row's acc (old[i] = -inf) not read: p v alone (its rows
 * may be unset, attn_tile_begin_over). */
TILE_INLINE void tile_attend_pv(float *acc, int64_t lda, float *const *orow, float *const *sr,
                                const float *s, int64_t lds, const float *vg, int64_t ldv,
                                const float *old, const float *al, int64_t i0, int64_t rows,
                                int64_t n, int64_t D)
{
    float *od[TILE_MR];
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
        tile_pv_from(od, (const float *const *)sr, vg + d0, ldv, NULL, n, xd, al, 1, NULL, false,
                     TILE_MR);
    }
    for (int64_t r = i0; r < tile_min(i0 + TILE_MR, rows) && d0 < D; r++) /* D % VW left */
        for (int64_t d = d0; d < D; d++) {
            float x = old[r - i0] == -INFINITY ? 0.0f : acc[r * lda + d] * al[r - i0];
            for (int64_t c = 0; c < n; c++) x += s[r * lds + c] * vg[c * ldv + d];
            acc[r * lda + d] = x;
        }
}

static void k_tile_attend(float *acc, int64_t lda, float *m, float *l, float *s, int64_t lds,
                          const float *q, int64_t ldq, const float *kt, int64_t ldk, const float *v,
                          int64_t ldv, const int64_t *lo, const int64_t *hi, int64_t rows,
                          int64_t cols, int64_t D, float scale)
{
    const vf vs = vset1(scale);
    float lane[VW];
    for (int k = 0; k < VW; k++) lane[k] = (float)k;
    const vf iota = vload(lane);
    for (int64_t i0 = 0; i0 < rows; i0 += TILE_MR) {
        const float *qr[TILE_MR];
        float *sr[TILE_MR], *orow[TILE_MR];
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
        /* the group's columns [c_lo, c_hi) only, numbered from c_lo; scores read whole vectors:
         * from a vector boundary where an exact start would read past the visit's last vector */
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
        vf vm[TILE_MR], sum[TILE_MR];
        float old[TILE_MR], mx[TILE_MR], al[TILE_MR];
        tile_attend_max(sr, row, ra, rh, m, c_lo, n, iota, vm);
        tile_attend_alpha(vm, m, row, old, mx, al);
        tile_attend_exp(sr, n, vm, sum); /* p = exp(s - m') (0 where unseen) */
        for (int64_t r = i0; r < tile_min(i0 + TILE_MR, rows); r++) {
            const int i = (int)(r - i0);
            if (mx[i] == -INFINITY) continue; /* nothing seen yet: m, l, acc as they were */
            l[r] = l[r] * al[i] + vhsum(sum[i]), m[r] = mx[i];
        }
        TILE_UNROLL
        for (int i = 0; i < TILE_MR; i++)
            if (mx[i] == -INFINITY) al[i] = 1.0f; /* acc 0, p 0 */
        tile_attend_pv(acc, lda, orow, sr, s, lds, vg, ldv, old, al, i0, rows, n, D);
    }
}
