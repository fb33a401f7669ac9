/*
 * test_reformer.c — what is particular to the reformer kind (LSH attention), beyond the generic
 * tests that check it against its float64 definition (which also catch a key attended in
 * several rounds counted more than once): two identical rounds give the output of one (the
 * rounds' log-sum-exp combination is normalised), and a token attends to itself only when it
 * sees nothing else.
 */
#include <criterion/criterion.h>

#include "test_util.h"

static const attn_ops *reformer(void)
{
    const attn_ops *ops = attn_kind_find("reformer");
    cr_assert_not_null(ops);
    return ops;
}

/* Forward on x with the given rotations. */
static float *run_with(const attn_exec *x, const attn_shape *s, const char *params,
                       const float *rot, const float *q, const float *k, const float *v)
{
    attn_params p = tu_params(reformer(), params, s);
    p.w[0] = rot;
    float *o = bench_alloc((size_t)attn_q_elems(s) * 4);
    cr_assert_eq(tu_forward(reformer(), x, s, &p, q, k, v, o), ATTN_OK);
    return o;
}

/* hashes=2 with both rounds' rotations equal: the same keys in both rounds, combined into exactly
 * the output of one round (up to float rounding). */
Test(reformer, two_equal_rounds_are_one_round)
{
    for (int causal = 0; causal <= 1; causal++) {
        const attn_shape s = attn_shape_init(1, 2, 2, 300, 300, 16, causal);
        const attn_exec x = tu_exec(2);
        const int64_t half = 4, one = s.D * half; /* buckets=8 */
        float *r1 = tu_random(one, 1, 5), *r2 = bench_alloc((size_t)(2 * one) * 4);
        memcpy(r2, r1, (size_t)one * 4), memcpy(r2 + one, r1, (size_t)one * 4);
        float *q = tu_random(attn_q_elems(&s), 1, 1), *k = tu_random(attn_kv_elems(&s), 1, 2);
        float *v = tu_random(attn_kv_elems(&s), 1, 3);
        float *o1 = run_with(&x, &s, "buckets=8,hashes=1,chunk=16", r1, q, k, v);
        float *o2 = run_with(&x, &s, "buckets=8,hashes=2,chunk=16", r2, q, k, v);
        double diff = 0;
        for (int64_t e = 0; e < attn_q_elems(&s); e++) diff = fmax(diff, fabs(o1[e] - o2[e]));
        cr_expect_leq(diff, 1e-5, "causal=%d: two equal rounds differ from one by %g", causal,
                      diff);
        free(r1), free(r2), free(q), free(k), free(v), free(o1), free(o2);
    }
}

/* Shared QK, q = k, causal: the first token sees only itself and outputs its own value; the
 * others never attend to themselves when they see anything else (perturbing their own value
 * leaves them unchanged when some other key is visible, which chunk=4096 and buckets=2 make
 * likely: half the earlier keys share the bucket). */
Test(reformer, a_token_attends_to_itself_only_when_alone)
{
    const attn_shape s = attn_shape_init(1, 1, 1, 64, 64, 8, true);
    const attn_exec one = tu_exec(1);
    float *x = tu_random(attn_q_elems(&s), 1, 7), *v = tu_random(attn_kv_elems(&s), 1, 8);
    const char *params = "buckets=2,hashes=1,chunk=4096";
    attn_params p = tu_params(reformer(), params, &s);
    float *owned[ATTN_MAX_WEIGHTS];
    cr_assert_eq(attn_weights_draw(reformer(), &s, &p, owned, NULL, 0), ATTN_OK);
    float *o = run_with(&one, &s, params, p.w[0], x, x, v);
    for (int64_t d = 0; d < s.D; d++)
        cr_expect_float_eq(o[d], v[d], 1e-6, "token 0, d=%lld", (long long)d);
    int alone = 0;
    for (int64_t i = 1; i < s.T; i++) {
        float *vi = bench_alloc((size_t)attn_kv_elems(&s) * 4);
        memcpy(vi, v, (size_t)attn_kv_elems(&s) * 4);
        for (int64_t d = 0; d < s.D; d++) vi[i * s.D + d] += 100.0f;
        float *oi = run_with(&one, &s, params, p.w[0], x, x, vi);
        const bool same = memcmp(oi + i * s.D, o + i * s.D, (size_t)s.D * 4) == 0;
        alone += !same; /* only a token alone in its bucket so far may move */
        if (!same)
            for (int64_t d = 0; d < s.D; d++)
                cr_expect_float_eq(oi[i * s.D + d], vi[i * s.D + d], 1e-5, "token %lld alone",
                                   (long long)i);
        free(vi), free(oi);
    }
    cr_expect_lt(alone, 8, "%d tokens saw only themselves: the test would be empty", alone);
    attn_weights_free(owned);
    free(x), free(v), free(o);
}
