/* test_sparse.c — the kinds on the block-sparse engine (every kind whose ops say
 * ATTN_ENGINE_BLOCK_SPARSE), generated from the registry with the cases kind_cases.h lists for
 * each kind: limits that equal full attention (every kind with an as_full case),
 * decoding the last query equals the last prefill row, bytes count each K/V row read once,
 * masked keys have no influence with small parameters, larger shapes that split tasks and
 * visits, workspace linear in n, the seeded stratified draws, and the auto stride of every kind
 * with a `stride` parameter. (test_kinds checks every kind against its mask at awkward shapes and
 * every parameter's ends.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "blocksparse.h"
#include "kind_cases.h"
#include "test_util.h"

enum { MAX_KINDS = 64 };

/* The block-sparse kinds, in registry order; kind_cases.h lists small, large and as_full cases for
 * each. */
static int sparse_kinds(const attn_ops **out)
{
    int n = 0;
    for (int k = 0; k < attn_kind_count(); k++) {
        const attn_ops *ops = attn_kind_at(k);
        if (ops->engine != ATTN_ENGINE_BLOCK_SPARSE) continue;
        const tu_kind_cases cases = tu_cases(ops);
        cr_assert(cases.small && cases.large && cases.as_full,
                  "%s runs on the block-sparse engine: kind_cases.h must list its small, large and "
                  "as_full cases",
                  ops->name);
        cr_assert_lt(n, MAX_KINDS);
        out[n++] = ops;
    }
    cr_assert_gt(n, 0, "no kind runs on the block-sparse engine");
    return n;
}

static attn_shape shape(int64_t H, int64_t Hkv, int64_t T, int64_t S, int64_t D, bool causal)
{
    return attn_shape_init(1, H, Hkv, T, S, D, causal);
}

/* The tests here run on 2 threads (but where they say otherwise). */
enum { THREADS = 2 };

/* Forward of ops on x on fresh seeded inputs; also returns the inputs when wanted. */
static float *run(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                  const attn_params *p, float **q_out, float **k_out, float **v_out)
{
    float *q = tu_random(attn_q_elems(s), 1, 1), *k = tu_random(attn_kv_elems(s), 1, 2);
    float *v = tu_random(attn_kv_elems(s), 1, 3), *o = bench_alloc(attn_q_elems(s) * 4);
    cr_assert_eq(tu_forward(ops, x, s, p, q, k, v, o), ATTN_OK, "%s forward failed", ops->name);
    if (q_out) *q_out = q, *k_out = k, *v_out = v;
    else free(q), free(k), free(v);
    return o;
}

/* Every kind with an as_full case (kind_cases.h; dense kinds: their defaults) equals full
 * attention at S <= 64 under it: the same mask, flops and output. */
Test(sparse, limits_equal_full_attention)
{
    const attn_ops *full = attn_kind_find("full");
    const int64_t cases[][4] = {
        {37, 37, 1, 0}, {37, 37, 1, 1}, {13, 40, 2, 1}, {1, 50, 2, 1}, {40, 13, 1, 0}};
    const attn_exec x = tu_exec(THREADS);
    int ran = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        const char *as_full = tu_cases(ops).as_full;
        if (!as_full) continue;
        cr_assert_not_null(ops->allows, "%s has an as_full case but no mask", ops->name);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            attn_shape s = shape(2, cases[c][2], cases[c][0], cases[c][1], 16, cases[c][3]);
            attn_params p = tu_params(ops, as_full, &s), pf = tu_params(full, NULL, &s);
            char msg[ATTN_MSG_LEN];
            if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue; /* mqa, Hkv > 1 */
            for (int64_t h = 0; h < s.H; h++)
                for (int64_t i = 0; i < s.T; i++)
                    for (int64_t j = 0; j < s.S; j++)
                        cr_assert_eq(ops->allows(ops, &s, &p, h, i, j),
                                     full->allows(full, &s, &pf, h, i, j),
                                     "%s %s case %zu: (h %lld, i %lld, j %lld) differs from full",
                                     ops->name, as_full, c, (long long)h, (long long)i,
                                     (long long)j);
            cr_expect_eq(ops->flops(ops, &s, &p), full->flops(full, &s, &pf), "%s case %zu",
                         ops->name, c);
            float *o = run(ops, &x, &s, &p, NULL, NULL, NULL);
            float *of = run(full, &x, &s, &pf, NULL, NULL, NULL);
            double num = 0, den = 0;
            for (int64_t e = 0; e < attn_q_elems(&s); e++)
                num += (o[e] - of[e]) * (o[e] - of[e]), den += of[e] * of[e];
            cr_expect_leq(sqrt(num / den), 1e-5, "%s case %zu: %.3g from full", ops->name, c,
                          sqrt(num / den));
            free(o), free(of);
            ran++;
        }
    }
    const attn_ops *kinds[MAX_KINDS];
    cr_expect_geq(ran, 5 * sparse_kinds(kinds), "only %d cases ran", ran);
}

/* Positions are aligned at the end: query 0 of a decode step (T=1) against S keys is the last
 * query of the prefill of S, in mask and in output (causal and not). */
static void decode_matches_last_row(const attn_ops *ops, const char *text, bool causal)
{
    const int64_t S = 45, D = 16;
    attn_shape pre = shape(2, 1, S, S, D, causal), dec = shape(2, 1, 1, S, D, causal);
    const attn_exec x = tu_exec(THREADS);
    dec.decode = causal;
    attn_params pp = tu_params(ops, text, &pre), pd = tu_params(ops, text, &dec);
    float *q, *k, *v;
    float *o = run(ops, &x, &pre, &pp, &q, &k, &v), *od = bench_alloc(2 * D * 4);
    float *qd = bench_alloc(2 * D * 4);
    for (int64_t h = 0; h < 2; h++) {
        memcpy(qd + h * D, q + (h * S + S - 1) * D, D * 4);
        for (int64_t j = 0; j < S; j++)
            cr_assert_eq(ops->allows(ops, &pre, &pp, h, S - 1, j),
                         ops->allows(ops, &dec, &pd, h, 0, j),
                         "%s %s causal=%d: key %lld of head %lld", ops->name,
                         text ? text : "defaults", causal, (long long)j, (long long)h);
    }
    cr_assert_eq(tu_forward(ops, &x, &dec, &pd, qd, k, v, od), ATTN_OK);
    for (int64_t e = 0; e < 2 * D; e++) {
        const float a = o[((e / D) * S + S - 1) * D + e % D], b = od[e];
        cr_expect(fabsf(a - b) <= 1e-5f * (1 + fabsf(a)),
                  "%s %s causal=%d h=%lld d=%lld: prefill %g, decode %g", ops->name,
                  text ? text : "defaults", causal, (long long)(e / D), (long long)(e % D), a, b);
    }
    free(q), free(k), free(v), free(o), free(od), free(qd);
}

Test(sparse, decode_is_the_last_prefill_row)
{
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    char text[256];
    for (int kn = 0; kn < nk; kn++)
        for (int causal = 0; causal < 2; causal++) {
            decode_matches_last_row(kinds[kn], NULL, causal);
            for (int v = 0; tu_case(tu_cases(kinds[kn]).small, v, text, sizeof text); v++)
                decode_matches_last_row(kinds[kn], text, causal);
        }
}

/* bytes = 4·(q + out + 2·D·B·Σ over kv heads of the keys some query of the group sees). */
static void bytes_match_the_mask(const attn_ops *ops, const attn_shape *s, const char *text)
{
    const attn_params p = tu_params(ops, text, s);
    const int64_t group = s->H / s->Hkv;
    double keys = 0;
    for (int64_t g = 0; g < s->Hkv; g++)
        for (int64_t j = 0; j < s->S; j++) {
            bool read = false;
            for (int64_t h = g * group; h < (g + 1) * group && !read; h++)
                for (int64_t i = 0; i < s->T && !read; i++) read = ops->allows(ops, s, &p, h, i, j);
            keys += read;
        }
    const double expect = 4.0 * (2.0 * attn_q_elems(s) + 2.0 * s->D * s->B * keys);
    cr_expect_eq(ops->bytes(ops, s, &p), expect,
                 "%s %s T=%lld S=%lld causal=%d: bytes %.0f, mask says %.0f", ops->name,
                 text ? text : "defaults", (long long)s->T, (long long)s->S, s->causal,
                 ops->bytes(ops, s, &p), expect);
}

Test(sparse, bytes_count_each_kv_row_read_once)
{
    const int64_t cases[][6] = {/* H, Hkv, T, S, causal, small params (else defaults) */
                                {4, 2, 40, 40, 1, 1}, {4, 1, 1, 300, 0, 1}, {2, 2, 13, 90, 1, 1},
                                {2, 1, 90, 13, 0, 1}, {4, 2, 40, 40, 0, 0}, {2, 1, 1, 300, 1, 0}};
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    char text[256];
    for (int kn = 0; kn < nk; kn++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const int64_t *cs = cases[c];
            const attn_shape s = shape(cs[0], cs[1], cs[2], cs[3], 8, cs[4]);
            if (!cs[5]) bytes_match_the_mask(kinds[kn], &s, NULL);
            for (int v = 0; cs[5] && tu_case(tu_cases(kinds[kn]).small, v, text, sizeof text); v++)
                bytes_match_the_mask(kinds[kn], &s, text);
        }
}

/* With small parameters most keys are masked: perturbing them leaves each row bitwise equal. */
static void masked_keys_do_not_move_rows(const attn_ops *ops, const attn_shape *sp,
                                         const char *text)
{
    const attn_shape s = *sp;
    const attn_exec x = tu_exec(THREADS);
    attn_params p = tu_params(ops, text, &s);
    const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s), D = s.D;
    float *q, *k, *v, *o = run(ops, &x, &s, &p, &q, &k, &v);
    float *k2 = bench_alloc(kvn * 4), *v2 = bench_alloc(kvn * 4), *o2 = bench_alloc(qn * 4);
    int64_t masked = 0;
    for (int64_t h = 0; h < s.H; h++)
        for (int64_t i = 0; i < s.T; i++) {
            memcpy(k2, k, kvn * 4), memcpy(v2, v, kvn * 4);
            for (int64_t j = 0; j < s.S; j++) {
                if (ops->allows(ops, &s, &p, h, i, j)) continue;
                masked++;
                for (int64_t d = 0; d < D; d++) k2[j * D + d] = 1e3f, v2[j * D + d] = -1e3f;
            }
            tu_forward(ops, &x, &s, &p, q, k2, v2, o2);
            cr_expect(memcmp(o + (h * s.T + i) * D, o2 + (h * s.T + i) * D, D * 4) == 0,
                      "%s %s T=%lld S=%lld: masked keys moved row h=%lld i=%lld", ops->name, text,
                      (long long)s.T, (long long)s.S, (long long)h, (long long)i);
        }
    cr_expect_gt(masked, s.H * s.T, "%s %s T=%lld S=%lld: too few masked keys", ops->name, text,
                 (long long)s.T, (long long)s.S);
    free(q), free(k), free(v), free(o), free(k2), free(v2), free(o2);
}

Test(sparse, masked_keys_have_zero_influence_with_small_parameters)
{
    const int64_t cases[][4] = {{40, 40, 0}, {40, 40, 1}, {17, 45, 1}};
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    char text[256];
    for (int kn = 0; kn < nk; kn++)
        for (int v = 0; tu_case(tu_cases(kinds[kn]).small, v, text, sizeof text); v++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                const attn_shape s = shape(2, 1, cases[c][0], cases[c][1], 8, cases[c][2]);
                masked_keys_do_not_move_rows(kinds[kn], &s, text);
            }
}

/* Each kind's large cases at shapes that split rows into several tasks and keys into several
 * visits of at most 256 (bands wider than a block, strided classes in several chunks, lists
 * and summaries longer than one visit, blocks not aligned with T), T > S and S > T, and a long
 * S with more scattered keys than the engine copies together at once. */
Test(sparse, larger_shapes_match_the_mask)
{
    const int64_t shapes[][2] = {{600, 600}, {333, 777}, {700, 500}, {50, 9000}}; /* T, S */
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    char text[256];
    for (int kn = 0; kn < nk; kn++)
        for (int c0 = 0; tu_case(tu_cases(kinds[kn]).large, c0, text, sizeof text); c0++)
            for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
                for (int causal = 0; causal < 2; causal++) {
                    const attn_ops *ops = kinds[kn];
                    const attn_shape s = shape(2, 1, shapes[c][0], shapes[c][1], 8, causal);
                    const attn_exec x = tu_exec(THREADS);
                    attn_params p = tu_params(ops, text, &s);
                    float *q, *k, *v, *o = run(ops, &x, &s, &p, &q, &k, &v);
                    double *ref = tu_reference(ops, &s, &p, q, k, v);
                    const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
                    cr_expect_leq(err, 1e-5, "%s %s T=%lld S=%lld causal=%d: rel L2 error %.3g",
                                  ops->name, text, (long long)s.T, (long long)s.S, causal, err);
                    free(q), free(k), free(v), free(o), free(ref);
                }
}

/* strided's two phases run by chunks of heads when a head's rows are large (blocksparse.c's
 * phase_chunk: 8 MiB of q, k, v, out rows per chunk): at D = 128, S = 3500 two (b, h) pairs per
 * chunk, so 3 query heads make a partial last chunk; grouped KV heads, causal and not. */
Test(sparse, two_phases_by_chunks_of_heads_match_the_mask)
{
    const attn_ops *ops = attn_kind_find("strided");
    for (int causal = 0; causal < 2; causal++)
        for (int64_t Hkv = 1; Hkv <= 3; Hkv += 2) {
            const attn_shape s = shape(3, Hkv, 64, 3500, 128, causal);
            const attn_exec x = tu_exec(THREADS);
            attn_params p = tu_params(ops, NULL, &s);
            float *q, *k, *v, *o = run(ops, &x, &s, &p, &q, &k, &v);
            double *ref = tu_reference(ops, &s, &p, q, k, v);
            const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
            cr_expect_leq(err, 1e-5, "strided H=3 Hkv=%lld causal=%d: rel L2 error %.3g",
                          (long long)Hkv, causal, err);
            free(q), free(k), free(v), free(o), free(ref);
        }
}

/* strided's two phases head by head (each thread both phases of whole (b, h): blocksparse.c's
 * by_heads, from 4 (b, h) per thread): B = 2, H = 9, grouped KV heads, on 1 and 2 threads, T != S
 * both ways, with and without a score modifier (alibi: its second phase not in lanes). */
Test(sparse, two_phases_head_by_head_match_the_mask)
{
    const attn_ops *ops = attn_kind_find("strided");
    const int64_t shapes[][2] = {{300, 300}, {200, 333}, {333, 200}}; /* T, S */
    const char *variants[] = {NULL, "alibi=1"};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (int causal = 0; causal < 2; causal++)
            for (int threads = 1; threads <= 2; threads++)
                for (int var = 0; var < 2; var++) {
                    attn_shape s = shape(9, 3, shapes[c][0], shapes[c][1], 16, causal);
                    s.B = 2;
                    const attn_exec x = tu_exec(threads);
                    attn_params p = tu_params(ops, variants[var], &s);
                    float *q, *k, *v, *o = run(ops, &x, &s, &p, &q, &k, &v);
                    double *ref = tu_reference(ops, &s, &p, q, k, v);
                    const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
                    cr_expect_leq(err, 1e-5,
                                  "strided %s B=2 H=9 T=%lld S=%lld causal=%d threads=%d: rel L2 "
                                  "error %.3g",
                                  variants[var] ? variants[var] : "", (long long)s.T,
                                  (long long)s.S, causal, threads, err);
                    free(q), free(k), free(v), free(o), free(ref);
                }
}

/* Every sparse kind's output is the same whatever out and the workspace held before (NaN or 0):
 * strided's first phase accumulates in out's rows without zeroing them first (each row's first
 * visit sets its row; rows that see nothing are zeroed), rows seeing nothing included (causal
 * T > S), with and without score modifiers (fused visits and not). */
Test(sparse, output_does_not_depend_on_what_out_held)
{
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    const int64_t cases[][3] = {{70, 40, 1}, {45, 90, 1}, {60, 60, 0}};
    const char *const texts[] = {NULL, "alibi=1", "softcap=5"};
    for (int kn = 0; kn < nk; kn++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
                const attn_ops *ops = kinds[kn];
                const attn_shape s = shape(2, 2, cases[c][0], cases[c][1], 19, cases[c][2]);
                const attn_exec x = tu_exec(THREADS);
                attn_params p = tu_params(ops, texts[t], &s);
                const int64_t n = attn_q_elems(&s);
                float *q = tu_random(n, 1, 1), *k = tu_random(attn_kv_elems(&s), 1, 2);
                float *v = tu_random(attn_kv_elems(&s), 1, 3);
                float *o0 = bench_alloc(n * 4), *o1 = bench_alloc(n * 4);
                const size_t wb = ops->workspace_bytes(ops, &x, &s, &p);
                void *ws = bench_alloc(wb + 1);
                for (int64_t e = 0; e < n; e++) o0[e] = 0.0f, o1[e] = NAN;
                memset(ws, 0, wb);
                cr_assert_eq(ops->forward(ops, &x, &s, &p, q, k, v, o0, ws), ATTN_OK);
                memset(ws, 0xff, wb); /* NaN floats */
                cr_assert_eq(ops->forward(ops, &x, &s, &p, q, k, v, o1, ws), ATTN_OK);
                cr_expect(!memcmp(o0, o1, (size_t)n * 4), "%s T=%lld S=%lld %s: out differs",
                          ops->name, (long long)cases[c][0], (long long)cases[c][1],
                          texts[t] ? texts[t] : "");
                free(q), free(k), free(v), free(o0), free(o1), free(ws);
            }
}

/* Memory O(n·keys per row) at most: at n = 1M (H=1, 2 threads) every workspace is small. */
Test(sparse, workspace_is_small_at_a_million_keys)
{
    const attn_ops *kinds[MAX_KINDS];
    const int nk = sparse_kinds(kinds);
    for (int kn = 0; kn < nk; kn++) {
        const attn_ops *ops = kinds[kn];
        const attn_shape s = shape(1, 1, 1 << 20, 1 << 20, 64, false);
        const attn_exec x = tu_exec(THREADS);
        attn_params p = tu_params(ops, NULL, &s);
        const size_t ws = ops->workspace_bytes(ops, &x, &s, &p);
        cr_expect_lt(ws, (size_t)16 << 20, "%s: workspace %zu bytes at n=1M", ops->name, ws);
    }
}

/* random, both draws, at blocks not aligned with T (b = 7), cross attention both ways (causal
 * T > S: rows before position 0), r below and above a block's candidates: output against the
 * mask, flops from the mask, decode = last prefill row; draw=block: the queries of a block see
 * the same drawn keys (non-causal: exactly min(r, S) of them, plus themselves when not drawn). */
Test(sparse, random_draws_per_block_and_per_token)
{
    const attn_ops *ops = attn_kind_find("random");
    const int64_t cases[][3] = {{45, 45, 1}, {45, 45, 0}, {50, 37, 1}, {50, 37, 0},
                                {13, 70, 1}, {13, 70, 0}, {1, 70, 1}};
    const char *const texts[] = {"draw=block,block=7,random=4,seed=5",
                                 "draw=block,block=7,random=20,seed=5",
                                 "draw=block,block=1,random=3", "draw=token,random=4,seed=5",
                                 "draw=token,random=20,seed=5"};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const int64_t T = cases[c][0], S = cases[c][1], D = 8;
            const bool causal = cases[c][2], per_block = strstr(texts[t], "block,") != NULL;
            const attn_shape s = shape(2, 1, T, S, D, causal);
            const attn_exec x = tu_exec(THREADS);
            attn_params p = tu_params(ops, texts[t], &s);
            float *q, *k, *v, *o = run(ops, &x, &s, &p, &q, &k, &v);
            double *ref = tu_reference(ops, &s, &p, q, k, v);
            const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
            cr_expect_leq(err, 1e-5, "%s T=%lld S=%lld causal=%d: rel L2 error %.3g", texts[t],
                          (long long)T, (long long)S, causal, err);
            double allowed = 0;
            const attn_param_table *pt = attn_kind_params(ops);
            const int64_t b = per_block ? (int64_t)p.v[attn_param_index(pt, "block")] : 1;
            const int64_t r = (int64_t)p.v[attn_param_index(pt, "random")];
            for (int64_t h = 0; h < s.H; h++)
                for (int64_t i = 0; i < T; i++) {
                    const int64_t pos = i + S - T;
                    int64_t seen = 0;
                    for (int64_t j = 0; j < S; j++) {
                        const bool a = ops->allows(ops, &s, &p, h, i, j);
                        seen += a;
                        /* the block's first row in T: same drawn keys (causal: up to both) */
                        const int64_t i0 = attn_bs_max(0, i - attn_bs_floormod(pos, b));
                        const int64_t pos0 = i0 + S - T;
                        if (per_block && j != pos && j != pos0 && (!causal || j <= pos0))
                            cr_expect_eq(a, ops->allows(ops, &s, &p, h, i0, j),
                                         "%s T=%lld S=%lld causal=%d h=%lld: rows %lld and %lld"
                                         " differ on key %lld",
                                         texts[t], (long long)T, (long long)S, causal, (long long)h,
                                         (long long)i, (long long)i0, (long long)j);
                    }
                    allowed += (double)seen;
                    if (per_block && !causal) {
                        const int64_t drawn = attn_bs_min(r, S), self = pos >= 0;
                        cr_expect(seen == drawn || (self && seen == drawn + 1),
                                  "%s T=%lld S=%lld row %lld sees %lld keys, not %lld (+ itself)",
                                  texts[t], (long long)T, (long long)S, (long long)i,
                                  (long long)seen, (long long)drawn);
                    }
                }
            cr_expect_eq(ops->flops(ops, &s, &p), 4.0 * D * allowed, "%s T=%lld S=%lld causal=%d",
                         texts[t], (long long)T, (long long)S, causal);
            free(q), free(k), free(v), free(o), free(ref);
        }
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) /* decode = last prefill row */
        for (int causal = 0; causal < 2; causal++) {
            const int64_t S = 45, D = 8;
            attn_shape pre = shape(2, 1, S, S, D, causal), dec = shape(2, 1, 1, S, D, causal);
            const attn_exec x = tu_exec(THREADS);
            dec.decode = causal;
            attn_params pp = tu_params(ops, texts[t], &pre), pd = tu_params(ops, texts[t], &dec);
            float *q, *k, *v, *o = run(ops, &x, &pre, &pp, &q, &k, &v),
                              *qd = bench_alloc(2 * D * 4);
            float *od = bench_alloc(2 * D * 4);
            for (int64_t h = 0; h < 2; h++) {
                memcpy(qd + h * D, q + (h * S + S - 1) * D, D * 4);
                for (int64_t j = 0; j < S; j++)
                    cr_expect_eq(ops->allows(ops, &pre, &pp, h, S - 1, j),
                                 ops->allows(ops, &dec, &pd, h, 0, j),
                                 "%s causal=%d: key %lld of head %lld", texts[t], causal,
                                 (long long)j, (long long)h);
            }
            cr_assert_eq(tu_forward(ops, &x, &dec, &pd, qd, k, v, od), ATTN_OK);
            for (int64_t e = 0; e < 2 * D; e++) {
                const float a = o[((e / D) * S + S - 1) * D + e % D], bd = od[e];
                cr_expect(fabsf(a - bd) <= 1e-5f * (1 + fabsf(a)),
                          "%s causal=%d: prefill %g, "
                          "decode %g",
                          texts[t], causal, a, bd);
            }
            free(q), free(k), free(v), free(o), free(od), free(qd);
        }
}

Test(sparse, stratified_draws_are_distinct_in_their_strata_and_pure)
{
    const int64_t N = 1000, r = 7;
    int64_t prev = -1, hits = 0, all[7];
    attn_bs_draws(5, 2, 123, N, r, all);
    for (int64_t k = 0; k < r; k++) {
        const int64_t x = attn_bs_draw(5, 2, 123, k, N, r);
        cr_expect_eq(all[k], x, "attn_bs_draws and attn_bs_draw differ at %lld", (long long)k);
        cr_expect(x >= k * N / r && x < (k + 1) * N / r, "draw %lld = %lld outside its stratum",
                  (long long)k, (long long)x);
        cr_expect_gt(x, prev);
        cr_expect_eq(x, attn_bs_draw(5, 2, 123, k, N, r), "not a pure function");
        prev = x;
    }
    for (int64_t x = 0; x < N; x++) hits += attn_bs_drawn(5, 2, 123, x, N, r);
    cr_expect_eq(hits, r, "drawn() agrees with %lld values, not %lld", (long long)hits,
                 (long long)r);
    int same = 0; /* other heads and queries draw other keys */
    for (int64_t k = 0; k < r; k++)
        same += attn_bs_draw(5, 3, 123, k, N, r) == attn_bs_draw(5, 2, 123, k, N, r);
    cr_expect_lt(same, r);
    for (int64_t x = 0; x < 5; x++) cr_expect(attn_bs_drawn(1, 0, 0, x, 5, 5), "r >= N draws all");
    cr_expect_not(attn_bs_drawn(1, 0, 0, 5, 5, 9));
}

/* Every kind with a `stride` parameter whose 0 means 'auto' resolves it to ceil(sqrt(S)). */
Test(sparse, auto_stride_resolves_to_ceil_sqrt_of_kv_len)
{
    const int64_t S[] = {1, 2, 1000, 1024, 1025, 16384}, want[] = {1, 2, 32, 32, 33, 128};
    int found = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        const int idx = attn_param_index(attn_kind_params(ops), "stride");
        if (idx < 0 || ops->params.defs[idx].def != 0) continue;
        found++;
        for (size_t c = 0; c < sizeof S / sizeof S[0]; c++) {
            attn_shape s = shape(1, 1, 1, S[c], 8, true);
            attn_params p = tu_params(ops, NULL, &s);
            cr_expect_eq(p.v[idx], want[c], "%s S=%lld: stride %g", ops->name, (long long)S[c],
                         p.v[idx]);
        }
        attn_shape s = shape(1, 1, 1, 1000, 8, true);
        cr_expect_eq(tu_params(ops, "stride=5", &s).v[idx], 5, "a given stride is kept");
    }
    cr_expect_geq(found, 2, "only %d kinds with an auto stride", found);
}
