/*
 * additive_body.h — additive attention's pairwise scores (attention/kinds/additive.c), written once
 * against the vector layer (vec_<isa>.h, included before this by kernels/set_<isa>.c via
 * set_body.h); the set file puts it in its table (ADDITIVE_SLOTS). sc[r][c] = Σ_u
 * va[u]·tanh(a[r][u] + bt[u][c]),  r < nr (rows of a, stride U), c < n8 (a multiple of 8; bt rows
 * of stride Sp, sc rows of stride ldc). tanh: vtanh of vmath.h. Vector sets: VW keys a vector
 * against ADD_GROUP query rows at a time (ADD_GROUP independent tanh chains in flight); a layer
 * with masks (VEC_HAS_MASK) takes the last 8 keys of a 16-lane vector by a masked load and store.
 * VEC_SCALAR (portable): u outer, keys inner (the compiler may vectorise with the baseline). time
 * O(nr·n8·U) tanh; no scratch; one thread. Flops rule: additive.c.
 */
#include "vmath.h"

enum { ADD_GROUP = 4 }; /* query rows at a time (additive.c calls with nr <= 4) */

/* The keys of a vector of columns: every lane where the layer has no masks (n8 a multiple of
 * VW), else the first n (vmask_first) by masked loads and stores (a 16-lane vector's last 8). */
_Static_assert(VEC_HAS_MASK || 8 % VW == 0, "n8 is a multiple of 8: a wider vector needs masks");
static inline vf add_load(const float *p, vmask m)
{
    return VEC_HAS_MASK ? vload_mask(p, m) : vload(p);
}
static inline void add_store(float *p, vf x, vmask m)
{
    if (VEC_HAS_MASK) vstore_mask(p, x, m);
    else vstore(p, x);
}

/* One vector of keys (bt, lanes m) against ADD_GROUP query rows (a, stride U): the scores into sc
 * (stride ldc). A function of its own so that the compiler keeps the accumulators in registers
 * (inlined into the loops at -O3, gcc spilled them to the stack). */
__attribute__((noinline)) static void add_group_vector(const float *a, const float *bt, int64_t Sp,
                                                       const float *va, int64_t U, float *sc,
                                                       int64_t ldc, vmask m)
{
    const float *a0 = a, *a1 = a0 + U, *a2 = a1 + U, *a3 = a2 + U;
    vf s0 = vzero(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t u = 0; u < U; u++) {
        const vf b = add_load(bt + u * Sp, m), w = vset1(va[u]);
        s0 = vfma(w, vtanh(vadd(vset1(a0[u]), b)), s0);
        s1 = vfma(w, vtanh(vadd(vset1(a1[u]), b)), s1);
        s2 = vfma(w, vtanh(vadd(vset1(a2[u]), b)), s2);
        s3 = vfma(w, vtanh(vadd(vset1(a3[u]), b)), s3);
    }
    add_store(sc, s0, m);
    add_store(sc + ldc, s1, m);
    add_store(sc + 2 * ldc, s2, m);
    add_store(sc + 3 * ldc, s3, m);
}

/* One vector of keys against one query row. */
static void add_row_vector(const float *a, const float *bt, int64_t Sp, const float *va, int64_t U,
                           float *sc, vmask m)
{
    vf s0 = vzero();
    for (int64_t u = 0; u < U; u++)
        s0 = vfma(vset1(va[u]), vtanh(vadd(vset1(a[u]), add_load(bt + u * Sp, m))), s0);
    add_store(sc, s0, m);
}

static void k_pair_scores_vec(const float *a, int64_t nr, const float *bt, int64_t Sp,
                              const float *va, int64_t U, int64_t n8, float *sc, int64_t ldc)
{
    int64_t r = 0;
    for (; r + ADD_GROUP <= nr; r += ADD_GROUP)
        for (int64_t c = 0; c < n8; c += VW)
            add_group_vector(a + r * U, bt + c, Sp, va, U, sc + r * ldc + c, ldc,
                             vmask_first(n8 - c));
    for (; r < nr; r++)
        for (int64_t c = 0; c < n8; c += VW)
            add_row_vector(a + r * U, bt + c, Sp, va, U, sc + r * ldc + c, vmask_first(n8 - c));
}

/* One float at a time (VEC_SCALAR): u outer, columns inner, for the compiler's vectoriser. */
static void k_pair_scores_rows(const float *a, int64_t nr, const float *bt, int64_t Sp,
                               const float *va, int64_t U, int64_t n8, float *sc, int64_t ldc)
{
    for (int64_t r = 0; r < nr; r++) { /* u outer, columns inner (the compiler may vectorise) */
        float *row = sc + r * ldc;
        memset(row, 0, (size_t)n8 * sizeof(float));
        for (int64_t u = 0; u < U; u++) {
            const float au = a[r * U + u], w = va[u], *b = bt + u * Sp;
            for (int64_t c = 0; c < n8; c++) row[c] += w * attn_tanh(au + b[c]);
        }
    }
}

#define ADDITIVE_SLOTS                                                                             \
    {                                                                                              \
        .pair_scores = VEC_SCALAR ? k_pair_scores_rows : k_pair_scores_vec                         \
    }
