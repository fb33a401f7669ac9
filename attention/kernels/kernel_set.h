/*
 * kernel_set.h — the kernel slots, one table per instruction set (attn_isa.h), registered and
 * chosen at run time (isa.c), BLIS style. Each set is one source, kernels/set_<isa>.c, compiled
 * with that ISA's flags only: it includes a vector layer (vec_<isa>.h: the type vf of VW floats,
 * its operations and optional primitives), defines its register blocking, and includes
 * set_body.h, which includes the bodies (*_body.h, written once against that layer) and fills the
 * set's table; so the sets run the same algorithm at 1, 8 or 16 lanes. The portable set is the
 * reference: a set may leave slots NULL and gets the portable set's for them when it is registered
 * (attn_kernel_set_complete). Code outside kernels/ never uses intrinsics: it calls the slots of
 * the set its execution context carries (attn_exec.ks; the registry, attn_isa.h, hands sets out),
 * directly or through kernels.h, and asks the set for its blocking facts (lanes, tile_rows)
 * rather than assuming them.
 * A slot group per body keeps each body's slots together; add a slot to the group's struct and
 * to the body (a new body: its include and slot line in set_body.h), and it exists in every set.
 * Adding a set: docs/adding-a-kernel-set.md.
 */
#ifndef ATTN_KERNEL_SET_H
#define ATTN_KERNEL_SET_H

#include <stdbool.h>
#include <stdint.h>

#include "attn_core.h"
#include "attn_isa.h"

/* math_body.h: vector loops over float rows (softmax inner loops, dot products). */
typedef struct attn_ks_math {
    float (*vmax)(const float *x, int64_t n);
    float (*vexp_sum)(float *x, int64_t n, float shift);
    void (*vsoftcap)(float *x, int64_t n, float cap);
    float (*vdot)(const float *a, const float *b, int64_t n);
    /* x[c] -= slope·|pos - kpos[c]|, c < n */
    void (*alibi_row)(float *x, const float *kpos, int64_t n, float pos, float slope);
    /* ds[j] = p[j]·(ds[j] - delta)·(cap ? cap[j] : 1), j < n */
    void (*scores_grad)(const float *p, float *ds, const float *cap, float delta, int64_t n);
    /* acc[d] += Σ_x p[x]·v[idx[x]·D + d], d < D, x < n (a gathered weighted sum of rows) */
    void (*gather_axpy)(float *acc, const float *p, const float *v, const int64_t *idx, int64_t n,
                        int64_t D);
    /* x[d] *= a, d < n */
    void (*vscale)(float *x, int64_t n, float a);
    /* sigmoid attention's probabilities: x[c] = σ(x[c] + bias) = 1/(1 + exp(-x[c] - bias)) for
     * c < min(hi, n), 0 for hi <= c < n (the causal limit); relative error below 4e-7 +
     * |u|·2^-24 (u = x[c] + bias, rounded to float) while u >= -87 (below: at most 5e-39) */
    void (*sigmoid_row)(float *x, int64_t n, int64_t hi, float bias);
    /* its backward: ds[c] = a·ds[c]·p[c]·(1 - p[c]), c < n (dS = dP∘σ'(S), times a scale) */
    void (*sigmoid_grad)(const float *p, float *ds, int64_t n, float a);
} attn_ks_math;

/* peak_body.h: the FMA peak yardstick's inner loop: `iters` rounds of independent FMA chains
 * over registers; returns a value that depends on every chain (so nothing is optimised away).
 * Flops done: iters · attn_kernel_set.peak_flops_per_iter. */
typedef struct attn_ks_peak {
    float (*fma_loop)(int64_t iters, float seed);
} attn_ks_peak;

/* tile_body.h: the dense tile's GEMM micro-kernels (softmax_tile.c). Column blocks of the packed
 * keys and of the scores are padded to ATTN_TILE_COLS_ALIGN floats: the row strides ldk and lds
 * are multiples of it. */
enum { ATTN_TILE_COLS_ALIGN = 64 };
/* Floats in the widest vector of any set (avx512's 16): the columns a visit reads of the packed
 * keys are cols rounded up to it, whichever set runs (pack_kt_rows zeroes up to there). */
enum { ATTN_VEC_FLOATS_MAX = 16 };
/* Bytes [at, at + bytes) a kernel asks for (prefetches) while it computes: a guess at what its
 * caller reads next (an address as an integer: it may lie past an array; never read). */
typedef struct attn_ks_span {
    uintptr_t at;
    int64_t bytes;
} attn_ks_span;
typedef struct attn_ks_tile {
    /* kt[d·ldk + c] = k[c·ldkv + d] (c < cols, d < D), 0 for cols <= c < ldk */
    void (*pack_kt)(float *kt, int64_t ldk, const float *k, int64_t ldkv, int64_t cols, int64_t D);
    /* pack_kt of the rows k + (idx ? idx[c] : c)·ldkv, zero only columns cols..cols rounded up to
     * ATTN_VEC_FLOATS_MAX (what the visits read; ldk at least that) */
    void (*pack_kt_rows)(float *kt, int64_t ldk, const float *k, int64_t ldkv, const int64_t *idx,
                         int64_t cols, int64_t D);
    /* s[i·lds + c] = scale·Σ_d q[i·ldq + d]·kt[d·ldk + c], i < rows, c < cols rounded up to
     * ATTN_TILE_COLS_ALIGN */
    void (*scores)(float *s, int64_t lds, const float *q, int64_t ldq, const float *kt, int64_t ldk,
                   int64_t rows, int64_t cols, int64_t D, float scale);
    /* o[i·ldo + d] += Σ_c p[i·pr + c·pc]·v[c·ldv + d], i < rows, c < cols, d < D */
    void (*pv)(float *o, int64_t ldo, const float *p, int64_t pr, int64_t pc, const float *v,
               int64_t ldv, int64_t rows, int64_t cols, int64_t D);
    /* pv with output row i at o + oidx[i]·ldo */
    void (*pv_rows)(float *o, int64_t ldo, const int64_t *oidx, const float *p, int64_t pr,
                    int64_t pc, const float *v, int64_t ldv, int64_t rows, int64_t cols, int64_t D);
    /* out[0] = Σ_d a[d]·b[d], out[1] = Σ_d c[d]·e[d], d < n */
    void (*dot2)(const float *a, const float *b, const float *c, const float *e, int64_t n,
                 float *out);
    /* y0[d] += a0·x0[d], y1[d] += a1·x1[d], y2[d] += a2·x2[d], d < n */
    void (*axpy3)(float *y0, float a0, const float *x0, float *y1, float a1, const float *x1,
                  float *y2, float a2, const float *x2, int64_t n);
    /* o[i·ldo + d] = a[i·lda + d]·(l[i] > 0 ? 1/l[i] : 0), i < rows, d < D (a may be o), stored
     * past the caches (non-temporal) where the set has such stores and the row is aligned for them
     */
    void (*end_stream)(float *o, int64_t ldo, const float *a, int64_t lda, const float *l,
                       int64_t rows, int64_t D);
    /* the online softmax update of rows i < rows (state m[i], l[i], acc [rows, D], rows lda
     * apart) by the keys
     * lo[i] <= c < hi[i] (lo NULL: 0, hi NULL: cols) of kt (packed) and v [cols, D] (rows ldv
     * apart): scores, max, exp and sum, acc rescaled, acc += p v, one pass per group of rows;
     * s: scores scratch [rows, lds], lds >= cols rounded up to ATTN_TILE_COLS_ALIGN */
    void (*attend)(float *acc, int64_t lda, float *m, float *l, float *s, int64_t lds,
                   const float *q, int64_t ldq, const float *kt, int64_t ldk, const float *v,
                   int64_t ldv, const int64_t *lo, const int64_t *hi, int64_t rows, int64_t cols,
                   int64_t D, float scale);
    /* the online softmax of rows i < rows from a fresh start (m = -inf, l = 0, acc = 0: none of
     * them read) by the keys c < hi[i] (hi NULL: cols) of kt (packed) and v (key c's row at
     * v + (vidx ? vidx[c] : c)·ldv) and row i's own key own[i] of ko, vo (rows ldo apart; own NULL
     * or own[i] < 0: none): m, l and acc [rows, D] after those keys (rows seeing nothing: -inf, 0,
     * 0), one pass per group of rows; s: scores scratch [rows, lds], lds >= cols rounded up to
     * ATTN_TILE_COLS_ALIGN; the n_ahead spans of ahead asked for meanwhile, spread over the
     * groups of rows (ahead NULL: none); out set: row i normalised, acc[i]·(l[i] > 0 ? 1/l[i] :
     * 0), into out[i·ldout ..] instead of acc (acc not written), by non-temporal stores when
     * stream (as end_stream, but not fenced: the caller fences) */
    void (*attend_own)(float *acc, float *m, float *l, float *s, int64_t lds, const float *q,
                       int64_t ldq, const float *kt, int64_t ldk, const float *v, int64_t ldv,
                       const int64_t *vidx, const int64_t *hi, const float *ko, const float *vo,
                       int64_t ldo, const int64_t *own, int64_t rows, int64_t cols, int64_t D,
                       float scale, const attn_ks_span *ahead, int64_t n_ahead, float *out,
                       int64_t ldout, bool stream);
    /* a store fence: this thread's non-temporal stores (end_stream, attend_own's out) visible
     * before its later stores (x86 sets: sfence; a set without such stores: nothing) */
    void (*store_fence)(void);
    /* strided's second visit, rows in lanes: lanes <= VW (attn_kernel_set.lanes) row sets side by
     * side; lane x's rows r < nr[x] (nr[x] >= 1): query q + x·ldx + r·ldr, output o + x·ldx +
     * r·ldr (on entry the earlier visits' unnormalised acc; on return the normalised output,
     * acc·(l > 0 ? 1/l : 0)), state m, l at ml[2x + r·mlr], ml[2x + r·mlr + 1] (updated); its
     * keys c < nk[x]: k + kx[x] + c·ldc, v likewise. Row r of lane x sees keys c < min(nk[x],
     * r + self0[x]) (causal), or c < nk[x] but c = r + self0[x]. scratch: (max nk + R)·(D + 1)·VW +
     * R·max nk·VW floats at most, R = attn_kernel_set.tile_rows (keys and each block's queries in
     * lanes, scores). */
    void (*attend_lanes)(float *o, const float *q, int64_t ldx, int64_t ldr, float *ml, int64_t mlr,
                         const float *k, const float *v, const int64_t *kx, int64_t ldc,
                         const int64_t *nr, const int64_t *nk, const int64_t *self0, bool causal,
                         int64_t lanes, int64_t D, float scale, float *scratch);
} attn_ks_tile;
/* convert_body.h: 16-bit storage (attn_dtype) to and from float32, n elements; dtype t as int
 * (ATTN_F32 copies). */
typedef struct attn_ks_convert {
    void (*to_f32)(int t, const void *src, float *dst, int64_t n);
    void (*from_f32)(int t, const float *src, void *dst, int64_t n);
} attn_ks_convert;

/* decode_body.h: one chunk of the decode kernel: G query rows q [G,D] (float32, times the
 * score scale) against n keys k, v [n,D] of dtype t, updating the online softmax state m [G],
 * l [G], acc [G,D] (unnormalised). qh: the G rows as stored bf16 (unscaled; the scores then use
 * vdpbf16ps and are multiplied by scale) when t is bf16 and has_dpbf16() and the CPU has
 * AVX512_BF16, else NULL. scratch: scratch_floats(G, D) floats. */
typedef struct attn_ks_decode {
    void (*chunk)(int t, const float *q, const uint16_t *qh, float scale, int64_t G, int64_t D,
                  const void *k, const void *v, int64_t n, float *m, float *l, float *acc,
                  float *scratch);
    int64_t (*scratch_floats)(int64_t G, int64_t D);
    bool (*has_dpbf16)(void);
} attn_ks_decode;
/* linear_body.h: the elementwise loops of linear attention's feature maps and scan. */
typedef struct attn_ks_linear {
    void (*elu1)(const float *x, float *phi, int64_t n); /* phi = elu(x) + 1 */
    void (*relu)(const float *x, float *phi, int64_t n); /* phi = max(x, 0) */
    /* dx = dphi where x > 0, else dphi·phi (elu) or 0 (relu) */
    void (*feature_grad)(const float *x, const float *phi, const float *dphi, float *dx, int64_t n,
                         bool elu);
    void (*sub_max)(float *row, float h, float *cmax, int64_t n); /* row -= h; cmax max= row */
    void (*exp_sub)(const float *x, const float *c, float *y, int64_t n); /* y = exp(x - c) */
    /* row[m + l] = wt·cos(row[l]), row[l] = wt·sin(row[l]), l < m */
    void (*sincos)(float *row, int64_t m, float wt);
    void (*trig_du)(float *g, const float *p, int64_t m); /* g[l] = g[l]p[m+l] - g[m+l]p[l] */
    void (*add)(float *x, const float *c, int64_t n);     /* x += c */
    void (*mul)(float *x, const float *r, int64_t n);     /* x ∘= r */
    void (*scale_copy)(float *y, const float *x, float a, int64_t n); /* y = a·x */
    void (*axpy)(float *y, float a, const float *x, int64_t n);       /* y += a·x */
    void (*div)(float *out, const float *acc, float den, int64_t n);  /* out = acc / den */
    /* g = dt / den; returns -Σ g·acc / den */
    float (*grad_row)(float *g, const float *dt, const float *acc, float den, int64_t n);
} attn_ks_linear;

/* additive_body.h: additive attention's pairwise tanh scores,
 * sc[r][c] = Σ_u va[u]·tanh(a[r][u] + bt[u][c]), r < nr <= 4, c < n8 (a multiple of 8). */
typedef struct attn_ks_additive {
    void (*pair_scores)(const float *a, int64_t nr, const float *bt, int64_t Sp, const float *va,
                        int64_t U, int64_t n8, float *sc, int64_t ldc);
} attn_ks_additive;

/* reformer_body.h: reformer's buckets of ATTN_HASH_ROWS rows x (row stride ldx) under one
 * round's rotation Rp [D, halfp] (halfp a multiple of ATTN_HASH_COLS, zero columns past half):
 * argmax over [xR; -xR], the first maximum, into out. */
enum { ATTN_HASH_ROWS = 4, ATTN_HASH_COLS = 8 };
typedef struct attn_ks_reformer {
    void (*hash_rows)(const float *x, int64_t ldx, const float *Rp, int64_t D, int64_t half,
                      int64_t halfp, int32_t *out);
} attn_ks_reformer;

/* backward_body.h: the backward tile's fused pass over a small visit's scores: rows i < rows
 * against keys c < cols of kt, vt (packed kᵀ, vᵀ [D, ldk], zero columns cols..ldk):
 * p[i·lds + c] = exp(scale·q_i·k_c - lse[i]) where lo[i] <= c < hi[i] (lo, hi NULL: 0, cols), else
 * 0; ds[i·lds + c] = p·(scale·dout_i·v_c - scale·delta[i]); columns up to cols rounded up to the
 * vector written (lds covers them). */
typedef struct attn_ks_backward {
    void (*grad_scores)(float *p, float *ds, int64_t lds, const float *q, int64_t ldq,
                        const float *dout, int64_t lddo, const float *kt, const float *vt,
                        int64_t ldk, const float *lse, const float *delta, const int64_t *lo,
                        const int64_t *hi, int64_t rows, int64_t cols, int64_t D, float scale);
    /* dv += pᵀ dout, dk += dsᵀ q into the rows of keys c < cols at (grows ? grows[c] : c)·ldg */
    void (*key_grads)(float *dk, float *dv, int64_t ldg, const int64_t *grows, const float *p,
                      const float *ds, int64_t lds, const float *q, int64_t ldq, const float *dout,
                      int64_t lddo, int64_t rows, int64_t cols, int64_t D);
} attn_ks_backward;

/* A set: its ISA, the facts of its kernels that engines size their work by, then its slot groups.
 * The slot groups come last and hold function pointers only: registration completes a set slot
 * by slot from the reference (attn_kernel_set_complete). */
typedef struct attn_kernel_set {
    attn_isa isa;
    int lanes; /* floats per vector (VW) */
    /* rows per register block of the tile micro-kernels (TILE_MR: tile.scores, pv, attend,
     * attend_own, attend_lanes, backward.grad_scores): a group of rows a multiple of it repeats
     * no row; attend_lanes' scratch is counted in it */
    int tile_rows;
    int64_t peak_flops_per_iter; /* flops of one round of peak.fma_loop */
    attn_ks_math math;
    attn_ks_peak peak;
    attn_ks_tile tile;
    attn_ks_convert convert;
    attn_ks_decode decode;
    attn_ks_linear linear;
    attn_ks_additive additive;
    attn_ks_reformer reformer;
    attn_ks_backward backward;
} attn_kernel_set;

/* The registry of sets (which set an ISA has, the set in force) is declared in attn_isa.h and
 * implemented in isa.c, which includes this header: this header declares no function, so the
 * dependency points one way. */

#endif
