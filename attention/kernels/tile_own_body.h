/*
 * tile_own_body.h — the tile's attend_own slot (kernel_set.h: attn_ks_tile.attend_own), written
 * once against the vector layer, after tile_body.h (its scores and p·v micro-kernels, the
 * prefetch cursor tile_ahead). A fresh visit of cols packed keys (kt; v rows ldv apart, or at v +
 * vidx[c]·ldv: listed keys read where they are, no copy) in one pass per TILE_MR rows, row r
 * seeing the first hi[r] (NULL: all) and its own key own[r] (rows of ko, vo; -1: none): scores,
 * the own keys' scores, the rows' softmax together (their max, exp and sum chains side by side),
 * acc = p_own v_own + p v; m, l and acc set, none read. s: the scores, its first min(rows,
 * TILE_MR) rows × lds. The spans `ahead` (the caller's next rows) asked for into L2 meanwhile, an
 * equal share of their cache lines during each group's scores (no burst). out set (the rows' last
 * visit): acc/l written there instead of acc (as end_stream: non-temporal stores when stream, but
 * no fence: the caller's, once for many calls). The last group of at most TILE_MR_LAST rows has a
 * narrower register block. 4·rows·(cols + 1)·D flops; no scratch but s; one thread.
 */

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

/* attend_own's row maxima of a group of mr rows: so[i] = scale·q_i·own key (-inf: none, kor[i]
 * NULL), vm[i] = max(so[i], the scores sr[i][c] of the columns c < hv[i] it sees), lanes not
 * reduced (hv[i]: that bound broadcast). Returns whether every row sees every column in whole
 * vectors (then no mask anywhere). */
TILE_INLINE bool tile_own_max(float *const *sr, const float *const *qr, const float *const *kor,
                              const int64_t *row, const int64_t *hi, int64_t cols, int64_t D,
                              float scale, vf iota, float *so, vf *hv, vf *vm, int mr)
{
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
    return whole;
}

/* From the maxima vm[i]: mx[i] (the row's max, -inf: nothing seen), po[i] = exp(so[i] - mx[i])
 * (the own key's p), sr[i][c] = exp(sr[i][c] - mx[i]) on the seen columns (0 elsewhere, up to
 * cols rounded up to VW), sum[i] their sums, lanes not reduced. */
TILE_INLINE void tile_own_exp(float *const *sr, int64_t cols, bool whole, vf iota, const vf *hv,
                              vf *vm, const float *so, float *mx, float *po, vf *sum, int mr)
{
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
    float so[TILE_MR], mx[TILE_MR], po[TILE_MR];
    vf hv[TILE_MR], vm[TILE_MR], sum[TILE_MR];
    const bool whole = tile_own_max(sr, qr, kor, row, hi, cols, D, scale, iota, so, hv, vm, mr);
    tile_own_exp(sr, cols, whole, iota, hv, vm, so, mx, po, sum, mr);
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
