/* test_kernels.c — the shared compute pieces: vector exp/max/tanh, and the online-softmax tile
 * visited in uneven blocks against a one-shot float64 softmax; the tile's micro-kernels of every
 * kernel set against float64 sums, and the fused visits (tile.attend, tile.attend_own) and the
 * second visit in lanes (tile.attend_lanes) against the float64 softmax, and the backward's fused
 * score pass (backward.grad_scores) and key products (backward.key_grads) against float64. */
#include <criterion/criterion.h>

#include <string.h>

#include "attn_isa.h"
#include "kernel_set.h"
#include "kernels.h"
#include "test_util.h"
#include "vtanh.h"

Test(kernels, vexp_is_accurate_over_the_range)
{
    enum { N = 20011 }; /* odd: exercises the scalar tail */
    float *x = malloc(N * sizeof *x);
    double sum = 0, worst = 0;
    /* [-86.5, 80.5] after the shift: normal floats, and a sum that fits in float */
    for (int j = 0; j < N; j++) x[j] = -86.0f + 167.0f * (float)j / (N - 1);
    float shift = 0.5f;
    float *y = malloc(N * sizeof *y);
    memcpy(y, x, N * sizeof *y);
    float got_sum = attn_vexp_sum(attn_ks(), y, N, shift);
    for (int j = 0; j < N; j++) {
        double e =
            exp((double)(x[j] - shift)); /* the argument rounded to float, as the kernel sees it */
        sum += e;
        double rel = fabs(y[j] - e) / e;
        if (rel > worst) worst = rel;
    }
    cr_expect_leq(worst, 3e-7, "worst relative error of exp: %g", worst);
    cr_expect_leq(fabs(got_sum - sum) / sum, 1e-5, "sum %g vs %g", got_sum, sum);
    free(x), free(y);
}

/* vtanh.h: within 4e-7 (absolute and relative) of double tanh over [-12, 12] (the scalar form;
 * the vector one is vsoftcap's in test_isa.c); exact 0 at 0, ±1 far out, odd. */
Test(kernels, vtanh_is_accurate_over_the_range)
{
    enum { N = 240001 };
    double worst = 0;
    for (int j = 0; j < N; j++) {
        const float x = -12.0f + 24.0f * (float)j / (N - 1);
        const float got = attn_tanh(x);
        const double e = tanh((double)x), scale = fabs(e) < 1 ? fmax(fabs(e), 1e-30) : 1;
        worst = fmax(worst, fmax(fabs(got - e), fabs(got - e) / scale));
        cr_expect_eq(attn_tanh(-x), -attn_tanh(x), "tanh is odd at %g", x);
    }
    cr_expect_leq(worst, 4.5e-7, "worst error of tanh: %g", worst);
    cr_expect_eq(attn_tanh(0.0f), 0.0f);
    cr_expect_eq(attn_tanh(1e4f), 1.0f);
    cr_expect_eq(attn_tanh(-1e4f), -1.0f);
    cr_expect_leq(fabs(attn_tanh(1e-20f) - 1e-20) / 1e-20, 4.5e-7);
}

Test(kernels, vexp_of_minus_infinity_is_exactly_zero)
{
    float x[37];
    for (int j = 0; j < 37; j++) x[j] = (j % 3 == 0) ? -INFINITY : (j % 3 == 1 ? -200.0f : 0.0f);
    float s = attn_vexp_sum(attn_ks(), x, 37, 0.0f);
    for (int j = 0; j < 37; j++)
        cr_expect_eq(x[j], (j % 3 == 2) ? 1.0f : 0.0f, "exp at %d = %g", j, x[j]);
    cr_expect_eq(s, 12.0f);
}

Test(kernels, vmax_handles_every_length)
{
    cr_expect_eq(attn_vmax(attn_ks(), NULL, 0), -INFINITY);
    float x[41];
    for (int n = 1; n <= 41; n++) {
        for (int j = 0; j < n; j++) x[j] = (float)((j * 7) % 11) - 100.0f;
        x[n - 1] = 5.0f; /* max in the tail */
        cr_expect_eq(attn_vmax(attn_ks(), x, n), 5.0f, "n=%d", n);
        x[0] = 9.0f; /* max first */
        cr_expect_eq(attn_vmax(attn_ks(), x, n), 9.0f, "n=%d", n);
    }
}

/* 5 queries against 23 keys in blocks of 7, 7, 7, 2, with a per-row visibility limit, the
 * rows visited in two ranges. */
Test(kernels, tile_matches_one_shot_softmax)
{
    const int64_t rows = 5, S = 23, D = 6, blk = 7;
    float *q = tu_random(rows * D, 2.0, 1), *k = tu_random(S * D, 2.0, 2),
          *v = tu_random(S * D, 1, 3);
    const int64_t sees[5] = {0, 1, 8, 22, 23}; /* keys visible to each row */
    float *scratch = bench_alloc(attn_tile_floats(rows, blk, D) * sizeof(float));
    float out[5 * 6];
    attn_tile t;
    attn_blas_threads(1);
    attn_tile_begin(&t, attn_ks(), scratch, rows, D, 0.4f);
    for (int64_t j0 = 0; j0 < S; j0 += blk) {
        int64_t cols = S - j0 < blk ? S - j0 : blk, ends[5];
        for (int r = 0; r < rows; r++) ends[r] = sees[r] - j0;
        attn_tile_visit(&t, 0, 2, q, k + j0 * D, v + j0 * D, cols, ends); /* rows 0-1, then 2-4 */
        attn_tile_visit(&t, 2, 3, q + 2 * D, k + j0 * D, v + j0 * D, cols, ends + 2);
    }
    attn_tile_end(&t, out);
    for (int r = 0; r < rows; r++) {
        double w[23], mx = -INFINITY, sum = 0;
        for (int j = 0; j < sees[r]; j++) {
            w[j] = 0;
            for (int d = 0; d < D; d++) w[j] += 0.4 * q[r * D + d] * k[j * D + d];
            mx = fmax(mx, w[j]);
        }
        for (int j = 0; j < sees[r]; j++) sum += (w[j] = exp(w[j] - mx));
        for (int d = 0; d < D; d++) {
            double o = 0;
            for (int j = 0; j < sees[r]; j++) o += w[j] / sum * v[j * D + d];
            cr_expect(fabs(out[r * D + d] - o) <= 1e-5 * (1 + fabs(o)), "row %d d %d: %g vs %g", r,
                      d, out[r * D + d], o);
        }
    }
    free(q), free(k), free(v), free(scratch);
}

/* The tile's GEMM micro-kernels (kernels/tile_body.h) of every set the CPU runs, at sizes that
 * leave partial row groups, column blocks and vectors, against float64 sums. */
Test(kernels, tile_micro_kernels_match_float64_in_every_set)
{
    const int64_t rows = 13, cols = 37, D = 19, ldq = 21, ldkv = 23, ldo = 20;
    const int64_t ld = attn_tile_score_ld(cols);
    float *q = tu_random(rows * ldq, 1, 4), *k = tu_random(cols * ldkv, 1, 5);
    float *v = tu_random(cols * ldkv, 1, 6), *p = tu_random(rows * ld, 1, 7);
    float *o = tu_random(rows * ldo, 1, 8);
    float *kt = bench_alloc(D * ld * sizeof(float)), *s = bench_alloc(rows * ld * sizeof(float));
    float *acc = bench_alloc(rows * ldo * sizeof(float));
    float *pt = bench_alloc(cols * ldo * sizeof(float));
    for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
        const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
        if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
        ks->tile.pack_kt(kt, ld, k, ldkv, cols, D);
        ks->tile.scores(s, ld, q, ldq, kt, ld, rows, cols, D, 0.5f);
        memcpy(acc, o, (size_t)(rows * ldo) * sizeof(float));
        ks->tile.pv(acc, ldo, p, ld, 1, v, ldkv, rows, cols, D);
        memset(pt, 0, (size_t)(cols * ldo) * sizeof(float));
        ks->tile.pv(pt, ldo, p, 1, ld, q, ldq, cols, rows, D); /* pᵀ q: p read transposed */
        for (int64_t c = 0; c < cols; c++)
            for (int64_t d = 0; d < D; d++) {
                double x = 0;
                for (int64_t i = 0; i < rows; i++) x += (double)p[i * ld + c] * q[i * ldq + d];
                cr_expect(fabs(pt[c * ldo + d] - x) <= 1e-5 * (1 + fabs(x)), "%s: pᵀq %ld %ld",
                          attn_isa_name(isa), (long)c, (long)d);
            }
        for (int64_t c = cols; c < ld; c++)
            cr_expect(kt[c] == 0.0f, "%s: padding", attn_isa_name(isa));
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t c = 0; c < cols; c++) {
                double x = 0;
                for (int64_t d = 0; d < D; d++) x += 0.5 * q[i * ldq + d] * k[c * ldkv + d];
                cr_expect(fabs(s[i * ld + c] - x) <= 1e-5 * (1 + fabs(x)), "%s: score %ld %ld",
                          attn_isa_name(isa), (long)i, (long)c);
            }
            for (int64_t d = 0; d < D; d++) {
                double x = o[i * ldo + d];
                for (int64_t c = 0; c < cols; c++) x += (double)p[i * ld + c] * v[c * ldkv + d];
                cr_expect(fabs(acc[i * ldo + d] - x) <= 1e-5 * (1 + fabs(x)), "%s: pv %ld %ld",
                          attn_isa_name(isa), (long)i, (long)d);
            }
        }
    }
    free(q), free(k), free(v), free(p), free(o), free(kt), free(s), free(acc), free(pt);
}

/* The tile's streamed end (tile.end_stream) of every set equals acc / l row by row (0 where
 * l = 0): rows aligned for non-temporal stores (D = 48, 64-byte rows 2·D apart), and not (D = 19,
 * odd strides), exactly as the plain end computes it. */
Test(kernels, tile_end_stream_matches_plain_division_in_every_set)
{
    const int64_t rows = 7, Ds[2] = {48, 19}, ldos[2] = {96, 23};
    for (int e = 0; e < 2; e++) {
        const int64_t D = Ds[e], ldo = ldos[e];
        float *a = tu_random(rows * D, 1, 9), *l = tu_random(rows, 1, 10);
        float *o = bench_alloc((size_t)(rows * ldo + 1) * sizeof(float));
        l[3] = 0.0f;
        for (int64_t r = 0; r < rows; r++) l[r] = fabsf(l[r]) + (r == 3 ? 0.0f : 0.5f);
        for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
            const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
            if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
            float *out = o + e; /* the second case also off the 64-byte alignment */
            memset(o, 0, (size_t)(rows * ldo + 1) * sizeof(float));
            ks->tile.end_stream(out, ldo, a, D, l, rows, D);
            for (int64_t r = 0; r < rows; r++) {
                const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
                for (int64_t d = 0; d < D; d++)
                    cr_expect(out[r * ldo + d] == a[r * D + d] * inv, "%s: D=%ld row %ld d %ld",
                              attn_isa_name(isa), (long)D, (long)r, (long)d);
            }
        }
        free(a), free(l), free(o);
    }
}

/* The fused visit (tile.attend) of every set against the online softmax update in float64: rows
 * in a partial register group, keys in partial column blocks and vectors, rows seeing a prefix
 * of the keys (none, some, all) or, with lower bounds, an interval (empty, inside one vector,
 * across vectors, to the end), fresh rows (m = -inf) and rows with a running state. */
Test(kernels, tile_attend_matches_the_float64_update_in_every_set)
{
    const int64_t rows = 13, cols = 37, D = 19, ldq = 21, ldkv = 23;
    const int64_t ld = attn_tile_score_ld(cols);
    const int64_t hi[13] = {37, 0, 5, 36, 37, 1, 16, 17, 33, 37, 2, 0, 20};
    const int64_t lo[13] = {0, 0, 3, 20, 36, 1, 15, 2, 17, 16, 0, -1, 20};
    float *q = tu_random(rows * ldq, 1, 11), *k = tu_random(cols * ldkv, 1, 12);
    float *v = tu_random(cols * ldkv, 1, 13), *acc0 = tu_random(rows * D, 1, 14);
    float *kt = bench_alloc(D * ld * sizeof(float)), *s = bench_alloc(rows * ld * sizeof(float));
    float *acc = bench_alloc(rows * D * sizeof(float)), m0[13], l0[13], m[13], l[13];
    for (int64_t r = 0; r < rows; r++) {
        const bool fresh = r % 3 == 1; /* rows 1, 4, 7, 10: nothing seen before */
        m0[r] = fresh ? -INFINITY : 0.25f * (float)(r % 5) - 0.5f;
        l0[r] = fresh ? 0.0f : 1.0f + 0.1f * (float)r;
        for (int64_t d = 0; fresh && d < D; d++) acc0[r * D + d] = 0.0f;
    }
    for (int narrow = 0; narrow < 3; narrow++) /* 37 keys, 20 or 9 (2 vectors, 1 of avx512) */
        for (int bounded = 0; bounded < 2; bounded++)
            for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
                const int64_t *los = bounded ? lo : NULL, nc = narrow == 0   ? cols
                                                               : narrow == 1 ? 20
                                                                             : 9;
                const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
                if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
                memcpy(m, m0, sizeof m), memcpy(l, l0, sizeof l);
                memcpy(acc, acc0, (size_t)(rows * D) * sizeof(float));
                ks->tile.pack_kt(kt, ld, k, ldkv, nc, D);
                ks->tile.attend(acc, D, m, l, s, ld, q, ldq, kt, ld, v, ldkv, los, hi, rows, nc, D,
                                0.5f);
                for (int64_t r = 0; r < rows; r++) {
                    double sc[37], mx = m0[r];
                    const int64_t h = hi[r] < nc ? hi[r] : nc;
                    const int64_t c0 = los && los[r] > 0 ? (los[r] < h ? los[r] : h) : 0;
                    for (int64_t c = c0; c < h; c++) {
                        sc[c] = 0;
                        for (int64_t d = 0; d < D; d++)
                            sc[c] += 0.5 * q[r * ldq + d] * k[c * ldkv + d];
                        mx = fmax(mx, sc[c]);
                    }
                    const double alpha = m0[r] == -INFINITY ? 0.0 : exp(m0[r] - mx);
                    double sum = l0[r] * alpha;
                    for (int64_t c = c0; c < h; c++) sum += exp(sc[c] - mx);
                    cr_expect(mx == -INFINITY ? m[r] == -INFINITY && l[r] == 0.0f
                                              : fabs(m[r] - mx) <= 1e-5 * (1 + fabs(mx)) &&
                                                    fabs(l[r] - sum) <= 1e-5 * sum,
                              "%s (lo %d): row %ld m %g vs %g, l %g vs %g", attn_isa_name(isa),
                              bounded, (long)r, m[r], mx, l[r], sum);
                    for (int64_t d = 0; d < D; d++) {
                        double x = mx == -INFINITY ? acc0[r * D + d] : acc0[r * D + d] * alpha;
                        for (int64_t c = c0; c < h; c++) x += exp(sc[c] - mx) * v[c * ldkv + d];
                        cr_expect(fabs(acc[r * D + d] - x) <= 1e-5 * (1 + fabs(x)),
                                  "%s: acc %ld %ld", attn_isa_name(isa), (long)r, (long)d);
                    }
                }
            }
    free(q), free(k), free(v), free(acc0), free(kt), free(s), free(acc);
}

/* The fused fresh visit with own keys (tile.attend_own) of every set against the softmax in
 * float64: rows in a partial register group (13 and 11 rows: last groups of 1, 3 or 5 rows, rows
 * past them not written), keys in partial column blocks and vectors (and more than one column
 * block), rows seeing a prefix of the keys (none, some, all) with or without an
 * own key (a row seeing nothing: m = -inf, l = 0, acc = 0), no keys at all, and every row seeing
 * every key (whole vectors: no masks); with spans asked for ahead and the rows written normalised
 * into an output (plain and non-temporal stores) instead of acc; the keys in place (pack_kt) or
 * listed (scattered rows: pack_kt_rows, v read through the list; packed columns past those the
 * visit reads left NaN). */
Test(kernels, tile_attend_own_matches_the_float64_softmax_in_every_set)
{
    enum { ROWS = 13 };
    const int64_t D = 19, ldq = 21, ldkv = 23, nk = 40;
    const int64_t hi[ROWS] = {37, 0, 5, 36, 37, 1, 16, 17, 33, 37, 2, 0, 20};
    const int64_t own[ROWS] = {3, -1, 7, 39, 0, 12, -1, 30, 31, 2, 9, 5, 38};
    float *q = tu_random(ROWS * ldq, 1, 11), *k = tu_random(nk * ldkv, 1, 12);
    float *v = tu_random(nk * ldkv, 1, 13), *ko = tu_random(nk * D, 1, 15);
    float *vo = tu_random(nk * D, 1, 16);
    const int64_t ld = attn_tile_score_ld(nk);
    float *kt = bench_alloc(D * ld * sizeof(float)), *s = bench_alloc(ROWS * ld * sizeof(float));
    float *acc = bench_alloc(ROWS * D * sizeof(float)), m[ROWS], l[ROWS];
    float *o = bench_alloc(ROWS * ldq * sizeof(float));
    const int64_t colss[4] = {37, 0, 8, 32}; /* 32: every row sees every key (hi NULL) */
    int64_t list[40];                        /* listed keys: rows 39, 37, ..., 1, 38, ..., 0 */
    for (int64_t c = 0; c < nk; c++) list[c] = c < nk / 2 ? nk - 1 - 2 * c : nk - 2 - 2 * (c - 20);
    for (int e = 0; e < 16; e++) { /* e >= 8: the first 11 rows (a last group of 5 or 3) */
        const int64_t cols = colss[e % 4], rows = e >= 8 ? 11 : ROWS;
        const int64_t *his = e % 4 == 3 ? NULL : hi, *idx = e / 4 % 2 ? list : NULL;
        for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
            const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
            if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
            for (int64_t x = 0; x < ROWS * D; x++) acc[x] = NAN; /* never read */
            for (int64_t r = 0; r < ROWS; r++) m[r] = l[r] = NAN;
            for (int64_t x = 0; x < D * ld; x++) kt[x] = NAN; /* what packing leaves: not read */
            if (cols > 0 && idx) ks->tile.pack_kt_rows(kt, ld, k, ldkv, idx, cols, D);
            else if (cols > 0) ks->tile.pack_kt(kt, ld, k, ldkv, cols, D);
            /* spans asked for meanwhile: no effect on the result (one past the arrays, one empty,
             * more lines than the groups' steps of d) */
            const attn_ks_span ahead[3] = {{(uintptr_t)q, ROWS * ldq * (int64_t)sizeof(float)},
                                           {(uintptr_t)(k + nk * ldkv) + 4096, 256},
                                           {(uintptr_t)v, 0}};
            /* odd e: the rows normalised into o (rows ldq apart; e 3: non-temporal stores), acc
             * not written */
            for (int64_t x = 0; x < ROWS * ldq; x++) o[x] = NAN;
            ks->tile.attend_own(acc, m, l, s, ld, q, ldq, kt, ld, v, ldkv, idx, his, ko, vo, D, own,
                                rows, cols, D, 0.5f, e % 2 ? ahead : NULL, 3, e % 2 ? o : NULL, ldq,
                                e % 4 == 3);
            for (int64_t r = rows; r < ROWS; r++) /* rows past those visited: not written */
                cr_expect(isnan(m[r]) && isnan(acc[r * D]) && isnan(o[r * ldq]),
                          "%s: row %ld past %ld written", attn_isa_name(isa), (long)r, (long)rows);
            for (int64_t r = 0; r < rows; r++) {
                const int64_t h = his && his[r] < cols ? his[r] : cols;
                double sc[40], so = -INFINITY, mx = -INFINITY;
                for (int64_t c = 0; c < h; c++) {
                    sc[c] = 0;
                    const int64_t kc = idx ? idx[c] : c;
                    for (int64_t d = 0; d < D; d++)
                        sc[c] += 0.5 * q[r * ldq + d] * k[kc * ldkv + d];
                    mx = fmax(mx, sc[c]);
                }
                if (own[r] >= 0) {
                    so = 0;
                    for (int64_t d = 0; d < D; d++) so += 0.5 * q[r * ldq + d] * ko[own[r] * D + d];
                    mx = fmax(mx, so);
                }
                double sum = own[r] >= 0 ? exp(so - mx) : 0;
                for (int64_t c = 0; c < h; c++) sum += exp(sc[c] - mx);
                cr_expect(mx == -INFINITY ? m[r] == -INFINITY && l[r] == 0.0f
                                          : fabs(m[r] - mx) <= 1e-5 * (1 + fabs(mx)) &&
                                                fabs(l[r] - sum) <= 1e-5 * sum,
                          "%s: cols %ld row %ld m %g vs %g, l %g vs %g", attn_isa_name(isa),
                          (long)cols, (long)r, m[r], mx, l[r], sum);
                for (int64_t d = 0; d < D; d++) {
                    double x = own[r] >= 0 ? exp(so - mx) * vo[own[r] * D + d] : 0;
                    for (int64_t c = 0; c < h; c++)
                        x += exp(sc[c] - mx) * v[(idx ? idx[c] : c) * ldkv + d];
                    if (e % 2) { /* normalised in o (a row seeing nothing: 0), acc untouched */
                        x = sum > 0 ? x / sum : 0;
                        cr_expect(fabs(o[r * ldq + d] - x) <= 1e-5 * (1 + fabs(x)) &&
                                      isnan(acc[r * D + d]),
                                  "%s: cols %ld out %ld %ld: %g vs %g", attn_isa_name(isa),
                                  (long)cols, (long)r, (long)d, o[r * ldq + d], x);
                        continue;
                    }
                    cr_expect(fabs(acc[r * D + d] - x) <= 1e-5 * (1 + fabs(x)),
                              "%s: cols %ld acc %ld %ld: %g vs %g", attn_isa_name(isa), (long)cols,
                              (long)r, (long)d, acc[r * D + d], x);
                }
            }
        }
    }
    free(q), free(k), free(v), free(ko), free(vo), free(kt), free(s), free(acc), free(o);
}

/* The second visit in lanes (tile.attend_lanes) of every set against the float64 update: 3 lanes
 * and all of the set's, 1-8 rows per lane (partial row blocks), 0-9 keys per lane, self offsets
 * -1..2 (causal: rows seeing no key, some, all of them; not causal: one excluded, or none past
 * the keys), fresh rows (m = -inf, l = 0, acc = 0) and running ones, D = 19 (a tail of D % VW);
 * rows past a lane's and lanes past `lanes` untouched. */
Test(kernels, tile_attend_lanes_matches_the_float64_update_in_every_set)
{
    enum { X = 16, R = 8, C = 9, D = 19 };
    const int64_t ldx = D + 2, ldr = X * ldx + 3, ldc = X * (D + 1) + 5, mlr = 2 * X;
    const int64_t kn = C * ldc + X * (D + 1);
    float *q = tu_random(R * ldr, 1, 21), *k = tu_random(kn, 1, 22), *v = tu_random(kn, 1, 23);
    float *o0 = tu_random(R * ldr, 1, 24), *o = bench_alloc(R * ldr * sizeof(float));
    float *sc = bench_alloc(((C + 6) * (D + 1) * X + 6 * C * X) * sizeof(float));
    float ml0[R * 2 * X], ml[R * 2 * X];
    int64_t nr[X], nk[X], kx[X], self0[X];
    for (int64_t x = 0; x < X; x++) {
        nr[x] = 1 + (x * 5) % R, nk[x] = (x * 7) % (C + 1), kx[x] = x * (D + 1);
        self0[x] = x % 4 - 1;
        for (int64_t r = 0; r < R; r++) {
            const bool fresh = (x + r) % 3 == 0;
            ml0[2 * x + r * mlr] = fresh ? -INFINITY : 0.25f * (float)(r % 5) - 0.5f;
            ml0[2 * x + r * mlr + 1] = fresh ? 0.0f : 1.0f + 0.1f * (float)r;
            for (int64_t d = 0; fresh && d < D; d++) o0[x * ldx + r * ldr + d] = 0.0f;
        }
    }
    for (int causal = 0; causal < 2; causal++)
        for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
            const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
            if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
            for (int64_t lanes = ks->lanes < 3 ? ks->lanes : 3; lanes <= ks->lanes;
                 lanes = lanes < ks->lanes ? ks->lanes : lanes + 1) {
                memcpy(o, o0, (size_t)(R * ldr) * sizeof(float));
                memcpy(ml, ml0, sizeof ml);
                ks->tile.attend_lanes(o, q, ldx, ldr, ml, mlr, k, v, kx, ldc, nr, nk, self0, causal,
                                      lanes, D, 0.5f, sc);
                for (int64_t x = 0; x < X; x++)
                    for (int64_t r = 0; r < R; r++) {
                        const int64_t at = x * ldx + r * ldr, self = r + self0[x];
                        const float *m = ml + 2 * x + r * mlr, *m0 = ml0 + 2 * x + r * mlr;
                        if (x >= lanes || r >= nr[x]) { /* untouched */
                            cr_expect(!memcmp(o + at, o0 + at, D * sizeof(float)) &&
                                          !memcmp(m, m0, 2 * sizeof(float)),
                                      "%s: lanes %ld: lane %ld row %ld written", attn_isa_name(isa),
                                      (long)lanes, (long)x, (long)r);
                            continue;
                        }
                        double s[C], mx = m0[0];
                        for (int64_t c = 0; c < nk[x]; c++) {
                            s[c] = -INFINITY;
                            if (causal ? c >= self : c == self) continue;
                            s[c] = 0;
                            for (int64_t d = 0; d < D; d++)
                                s[c] += 0.5 * q[at + d] * k[kx[x] + c * ldc + d];
                            mx = fmax(mx, s[c]);
                        }
                        const double alpha = m0[0] == -INFINITY ? 0.0 : exp(m0[0] - mx);
                        double sum = m0[1] * alpha;
                        for (int64_t c = 0; c < nk[x]; c++) sum += exp(s[c] - mx);
                        cr_expect(mx == -INFINITY ? m[0] == -INFINITY && m[1] == 0.0f
                                                  : fabs(m[0] - mx) <= 1e-5 * (1 + fabs(mx)) &&
                                                        fabs(m[1] - sum) <= 1e-5 * sum,
                                  "%s (causal %d, lanes %ld): lane %ld row %ld m %g vs %g, l %g vs "
                                  "%g",
                                  attn_isa_name(isa), causal, (long)lanes, (long)x, (long)r, m[0],
                                  mx, m[1], sum);
                        for (int64_t d = 0; d < D; d++) {
                            double y = mx == -INFINITY ? 0 : o0[at + d] * alpha;
                            for (int64_t c = 0; c < nk[x]; c++)
                                y += exp(s[c] - mx) * v[kx[x] + c * ldc + d];
                            y = sum > 0 ? y / sum : 0;
                            cr_expect(fabs(o[at + d] - y) <= 1e-5 * (1 + fabs(y)),
                                      "%s (causal %d, lanes %ld): lane %ld row %ld d %ld: %g vs %g",
                                      attn_isa_name(isa), causal, (long)lanes, (long)x, (long)r,
                                      (long)d, o[at + d], y);
                        }
                    }
            }
        }
    free(q), free(k), free(v), free(o0), free(o), free(sc);
}

/* The backward's fused score pass (backward.grad_scores) of every set against float64: rows in a
 * partial register group, keys in partial column blocks and vectors, rows seeing an interval of
 * the keys (none, some, all; lo, hi or neither), a row that sees no key (lse = +inf: p = 0). */
Test(kernels, backward_grad_scores_match_float64_in_every_set)
{
    enum { ROWS = 13 };
    const int64_t D = 19, ldq = 21, ldkv = 23, nk = 40;
    const int64_t hi[ROWS] = {37, 0, 5, 36, 37, 1, 16, 17, 33, 37, 2, 0, 20};
    const int64_t lo[ROWS] = {0, 0, 3, 20, 36, 1, 15, 2, 17, 16, 0, -1, 20};
    float *q = tu_random(ROWS * ldq, 1, 11), *k = tu_random(nk * ldkv, 1, 12);
    float *v = tu_random(nk * ldkv, 1, 13), *g = tu_random(ROWS * ldq, 1, 14);
    const int64_t ld = attn_tile_score_ld(nk);
    float *kt = bench_alloc(D * ld * sizeof(float)), *vt = bench_alloc(D * ld * sizeof(float));
    float *p = bench_alloc(ROWS * ld * sizeof(float)), *ds = bench_alloc(ROWS * ld * sizeof(float));
    float lse[ROWS], delta[ROWS];
    for (int64_t r = 0; r < ROWS; r++) {
        lse[r] = r == 5 ? INFINITY : 0.3f * (float)(r % 4) + 1.0f;
        delta[r] = 0.1f * (float)(r % 7) - 0.3f;
    }
    const int64_t colss[3] = {37, 8, 32};
    for (int e = 0; e < 3; e++)
        for (int bounds = 0; bounds < 3; bounds++) /* none, hi, lo and hi */
            for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
                const int64_t cols = colss[e], *his = bounds ? hi : NULL;
                const int64_t *los = bounds == 2 ? lo : NULL;
                const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
                if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
                ks->tile.pack_kt(kt, ld, k, ldkv, cols, D);
                ks->tile.pack_kt(vt, ld, v, ldkv, cols, D);
                ks->backward.grad_scores(p, ds, ld, q, ldq, g, ldq, kt, vt, ld, lse, delta, los,
                                         his, ROWS, cols, D, 0.5f);
                for (int64_t r = 0; r < ROWS; r++) {
                    const int64_t h = his && his[r] < cols ? his[r] : cols;
                    const int64_t a = los && los[r] > 0 ? (los[r] < h ? los[r] : h) : 0;
                    for (int64_t c = 0; c < cols; c++) {
                        double s = 0, dp = 0;
                        for (int64_t d = 0; d < D; d++) {
                            s += 0.5 * q[r * ldq + d] * k[c * ldkv + d];
                            dp += 0.5 * g[r * ldq + d] * v[c * ldkv + d];
                        }
                        const double pe = c >= a && c < h ? exp(s - lse[r]) : 0.0;
                        const double dse = pe * (dp - 0.5 * delta[r]);
                        cr_expect(fabs(p[r * ld + c] - pe) <= 1e-5 * (1 + pe) &&
                                      fabs(ds[r * ld + c] - dse) <= 1e-5 * (1 + fabs(dse)),
                                  "%s: cols %ld bounds %d row %ld col %ld: p %g vs %g, ds %g vs %g",
                                  attn_isa_name(isa), (long)cols, bounds, (long)r, (long)c,
                                  p[r * ld + c], pe, ds[r * ld + c], dse);
                    }
                }
            }
    free(q), free(k), free(v), free(g), free(kt), free(vt), free(p), free(ds);
}

/* The backward's key products (backward.key_grads) of every set against float64: dv += pᵀ dout,
 * dk += dsᵀ q from existing values, keys in a partial register group (cols 1, 7, 32), D not a
 * multiple of any vector width (19) and of one (64), the rows in place or scattered (grows). */
Test(kernels, backward_key_grads_match_float64_in_every_set)
{
    enum { ROWS = 13, NK = 32, NG = 70 };
    const int64_t lds = 40, ldq = 67, ldg = 66;
    const int64_t grows[NK] = {5,  0,  69, 12, 33, 7,  8,  9,  60, 1,  2,  3,  40, 41, 42, 43,
                               44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59};
    float *p = tu_random(ROWS * lds, 1, 21), *ds = tu_random(ROWS * lds, 1, 22);
    float *q = tu_random(ROWS * ldq, 1, 23), *g = tu_random(ROWS * ldq, 1, 24);
    float *dk0 = tu_random(NG * ldg, 1, 25), *dv0 = tu_random(NG * ldg, 1, 26);
    float *dk = bench_alloc(NG * ldg * sizeof(float)), *dv = bench_alloc(NG * ldg * sizeof(float));
    const int64_t colss[3] = {1, 7, 32}, Ds[2] = {19, 64};
    for (int e = 0; e < 3; e++)
        for (int x = 0; x < 2; x++)
            for (int scattered = 0; scattered < 2; scattered++)
                for (int isa = 0; isa < ATTN_ISA_COUNT; isa++) {
                    const int64_t cols = colss[e], D = Ds[x];
                    const int64_t *gr = scattered ? grows : NULL;
                    const attn_kernel_set *ks = attn_ks_of((attn_isa)isa);
                    if (!ks || !attn_isa_supported((attn_isa)isa)) continue;
                    memcpy(dk, dk0, NG * ldg * sizeof(float));
                    memcpy(dv, dv0, NG * ldg * sizeof(float));
                    ks->backward.key_grads(dk, dv, ldg, gr, p, ds, lds, q, ldq, g, ldq, ROWS, cols,
                                           D);
                    for (int64_t c = 0; c < cols; c++) {
                        const int64_t o = (gr ? gr[c] : c) * ldg;
                        for (int64_t d = 0; d < D; d++) {
                            double ek = dk0[o + d], ev = dv0[o + d];
                            for (int64_t r = 0; r < ROWS; r++) {
                                ek += (double)ds[r * lds + c] * q[r * ldq + d];
                                ev += (double)p[r * lds + c] * g[r * ldq + d];
                            }
                            cr_expect(fabs(dk[o + d] - ek) <= 1e-5 * (1 + fabs(ek)) &&
                                          fabs(dv[o + d] - ev) <= 1e-5 * (1 + fabs(ev)),
                                      "%s: cols %ld D %ld scattered %d key %ld d %ld: dk %g vs %g, "
                                      "dv %g vs %g",
                                      attn_isa_name(isa), (long)cols, (long)D, scattered, (long)c,
                                      (long)d, dk[o + d], ek, dv[o + d], ev);
                        }
                    }
                    /* rows of no key untouched */
                    for (int64_t j = 0; j < NG; j++) {
                        bool listed = false;
                        for (int64_t c = 0; c < cols; c++) listed |= (gr ? gr[c] : c) == j;
                        if (!listed)
                            cr_expect(memcmp(dk + j * ldg, dk0 + j * ldg, ldg * sizeof(float)) ==
                                              0 &&
                                          memcmp(dv + j * ldg, dv0 + j * ldg,
                                                 ldg * sizeof(float)) == 0,
                                      "%s: row %ld of no key changed", attn_isa_name(isa), (long)j);
                    }
                }
    free(p), free(ds), free(q), free(g), free(dk0), free(dv0), free(dk), free(dv);
}
