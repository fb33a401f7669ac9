/*
 * test_accuracy.c — the accuracy metrics on small cases computed by hand (relative L2 error,
 * max-abs error, mean cosine, error against the kind's own definition, retrieval with ties and
 * grouped heads), the row sample, and retrieval on the needle dataset through a whole point:
 * `full` retrieves every needle (prefill and decode); `window` with the needle beyond its
 * window retrieves none (skipped while that kind is not registered).
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "accuracy.h"
#include "point.h"
#include "test_util.h"

/* A kind that sees key 0 only: its own definition is o_i = v_0. */
static bool first_key_only(const attn_ops *self, const attn_shape *s, const attn_params *p,
                           int64_t h, int64_t i, int64_t j)
{
    (void)self, (void)s, (void)p, (void)h, (void)i;
    return j == 0;
}

static const attn_ops first_key = {.name = "first_key", .allows = first_key_only};

/* q = 0: exact attention is the mean of the values. v0 = (2,0), v1 = (0,2): o_exact = (1,1) for
 * both rows. Outputs (1,0) and (2,2):
 *   rel_err  = ||(0,-1,1,1)|| / ||(1,1,1,1)|| = sqrt(3/4)
 *   max_abs  = 1
 *   cosine   = ((1·1 + 0·1)/(1·sqrt 2) + 1) / 2 = (1/sqrt 2 + 1) / 2
 *   self     = vs o_def = (2,0): ||(-1,0,0,2)|| / ||(2,0,2,0)|| = sqrt(5/8) */
Test(accuracy, metrics_on_a_case_computed_by_hand)
{
    attn_shape s = attn_shape_init(1, 1, 1, 2, 2, 2, false);
    const float q[4] = {0, 0, 0, 0}, k[4] = {1, 2, 3, 4}, v[4] = {2, 0, 0, 2};
    const float out[4] = {1, 0, 2, 2};
    attn_params p = {{0}};
    bench_accuracy acc;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_measure_accuracy(&first_key, &s, &p, q, k, v, out, 64, 1, &acc, msg,
                                        sizeof msg),
                 ATTN_OK, "%s", msg);
    cr_expect_eq(acc.rows, 2);
    cr_expect_float_eq(acc.rel_err, sqrt(0.75), 1e-12);
    cr_expect_float_eq(acc.max_abs_err, 1.0, 1e-12);
    cr_expect_float_eq(acc.cosine, (1 / sqrt(2.0) + 1) / 2, 1e-12);
    cr_expect_float_eq(acc.self_rel_err, sqrt(5.0 / 8), 1e-12);

    /* cosine of a zero row: 1 against a zero reference, 0 against a non-zero one */
    const float zero_v[4] = {0, 0, 0, 0}, zero_out[4] = {0, 0, 0, 0};
    cr_assert_eq(bench_measure_accuracy(&first_key, &s, &p, q, k, zero_v, zero_out, 64, 1, &acc,
                                        msg, sizeof msg),
                 ATTN_OK);
    cr_expect_float_eq(acc.cosine, 1.0, 1e-12);
    cr_expect_eq(acc.rel_err, 0.0);
    cr_assert_eq(bench_measure_accuracy(&first_key, &s, &p, q, k, v, zero_out, 64, 1, &acc, msg,
                                        sizeof msg),
                 ATTN_OK);
    cr_expect_float_eq(acc.cosine, 0.0, 1e-12);
    cr_expect_float_eq(acc.rel_err, 1.0, 1e-12);
    cr_expect_float_eq(bench_rel_l2((const float[]){1, 2}, (const double[]){1, 1}, 2), sqrt(0.5),
                       1e-12);
}

Test(accuracy, sample_rows_one_per_stratum)
{
    int64_t rows[100];
    cr_expect_eq(bench_sample_rows(5, 64, 1, rows), 5);
    for (int r = 0; r < 5; r++) cr_expect_eq(rows[r], r);
    cr_assert_eq(bench_sample_rows(150, 100, 3, rows), 100);
    for (int r = 0; r < 100; r++) {
        cr_expect(rows[r] >= r * 150 / 100 && rows[r] < (r + 1) * 150 / 100,
                  "row %lld in stratum %d", (long long)rows[r], r);
        if (r) cr_expect_gt(rows[r], rows[r - 1], "distinct rows");
    }
}

/* Values v0 = (1,0), v1 = (0,1), v2 = (-1,0). An output (0.6,0.5) is at squared distance 0.41
 * from v0, 0.61 from v1, 2.81 from v2: a hit when v0 is the marker, a miss when v1 is; (0.5,0.5)
 * is as far from v0 as from v1: a tie is a miss. */
Test(accuracy, retrieval_on_a_case_computed_by_hand)
{
    attn_shape s = attn_shape_init(1, 2, 1, 2, 3, 2, false); /* two query heads, one KV head */
    const float v[6] = {1, 0, 0, 1, -1, 0};
    const float out[8] = {0.6f, 0.5f, 0.6f, 0.5f, 0.5f, 0.5f, 0.6f, 0.5f};
    const ds_plant plants[4] = {{0, 0}, {1, 1}, {2, 0}, {3, 0}};
    cr_expect_float_eq(bench_retrieval(&s, 1, v, out, plants, 1), 1.0, 1e-12);
    cr_expect_float_eq(bench_retrieval(&s, 1, v, out, plants + 1, 1), 0.0, 1e-12);
    cr_expect_float_eq(bench_retrieval(&s, 1, v, out, plants + 2, 1), 0.0, 1e-12, "a tie");
    cr_expect_float_eq(bench_retrieval(&s, 1, v, out, plants, 4), 0.5, 1e-12);
    cr_expect(isnan(bench_retrieval(&s, 1, v, out, plants, 0)));
    /* batch 2: row 2 of shape (B=2, H=1, T=1) reads the values of batch 1 */
    attn_shape b2 = attn_shape_init(2, 1, 1, 1, 3, 2, false);
    const float v2[12] = {1, 0, 0, 1, -1, 0, -1, 0, 0, 1, 1, 0};
    const float o2[4] = {0, 0, 0.6f, 0.5f};
    const ds_plant p2 = {1, 2};
    cr_expect_float_eq(bench_retrieval(&b2, 1, v2, o2, &p2, 1), 1.0, 1e-12);
}

/* One point of kind `kind` on the needle dataset on `threads` threads, returning the results
 * row. */
static bench_point needle_point(const attn_ops *ops, const attn_params *kp, attn_shape s,
                                int threads, const char *needle_sets)
{
    bench_point_spec spec = {.ops = ops,
                             .params = *kp,
                             .shape = s,
                             .exec = tu_exec(threads),
                             .dataset = ds_find("needle"),
                             .seed = 3,
                             .accuracy_rows = 32,
                             .timing = {.warmup = 0, .min_reps = 1, .max_reps = 1}};
    spec.dataset_params = ds_params_defaults(spec.dataset);
    char buf[128], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", needle_sets);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        cr_assert_eq(ds_param_set(spec.dataset, &spec.dataset_params, tok, eq + 1, msg, sizeof msg),
                     ATTN_OK, "%s", msg);
    }
    attn_params_resolve(ops, &spec.shape, &spec.params);
    bench_point pt;
    double *samples;
    int64_t n;
    cr_assert_eq(bench_point_run(&spec, NULL, NULL, NULL, &pt, &samples, &n, NULL, msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    free(samples);
    return pt;
}

Test(accuracy, full_retrieves_every_needle)
{
    const attn_ops *full = attn_kind_find("full");
    const attn_params p = attn_params_defaults(attn_kind_params(full));
    for (int causal = 0; causal <= 1; causal++) {
        attn_shape s = attn_shape_init(1, 4, 2, 300, 300, 32, causal);
        const char *sets[] = {"", "distance=250", "distance=1,needles=40"};
        for (int c = 0; c < 3; c++) {
            bench_point pt = needle_point(full, &p, s, 2, sets[c]);
            cr_expect_gt(pt.retrieval_queries, 0);
            cr_expect_eq(pt.retrieval, 1.0, "causal=%d %s: retrieval %g of %d", causal, sets[c],
                         pt.retrieval, pt.retrieval_queries);
        }
    }
    attn_shape d = attn_shape_init(1, 8, 2, 1, 2000, 64, true); /* decode: the one new query */
    d.decode = true;
    bench_point pt = needle_point(full, &p, d, 1, "");
    cr_expect_eq(pt.retrieval_queries, 8);
    cr_expect_eq(pt.retrieval, 1.0, "decode: retrieval %g", pt.retrieval);
}

/* window sees keys within `window` of the query: a needle 64 keys back is out of
 * reach of a window of 16 (retrieval ~0), one 4 keys back within it (retrieval 1). */
Test(accuracy, window_misses_needles_beyond_the_window)
{
    const attn_ops *window = attn_kind_find("window");
    if (!window) cr_skip_test("kind 'window' is not registered in this build");
    attn_params p = attn_params_defaults(attn_kind_params(window));
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(attn_param_set(attn_kind_params(window), &p, "window", "16", msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    for (int causal = 0; causal <= 1; causal++) {
        attn_shape s = attn_shape_init(1, 4, 4, 256, 256, 32, causal);
        bench_point far = needle_point(window, &p, s, 2, "distance=64");
        cr_expect_eq(far.retrieval_queries, 4 * 16);
        cr_expect_leq(far.retrieval, 0.05, "causal=%d: needle beyond the window, retrieval %g",
                      causal, far.retrieval);
        bench_point near = needle_point(window, &p, s, 2, "distance=4");
        cr_expect_eq(near.retrieval, 1.0, "causal=%d: needle inside the window, retrieval %g",
                     causal, near.retrieval);
    }
}

/* The rel_err yardstick carries the kind's score modifiers: full with ALiBi and a soft cap is
 * exact against it (rel_err ~ self_rel_err ~ 1e-7), while plain attention is far from it; a
 * window kind with modifiers is compared with full attention with the same modifiers. */
Test(accuracy, yardstick_has_the_kinds_modifiers)
{
    attn_shape s = attn_shape_init(1, 4, 2, 48, 64, 16, true);
    float *q = tu_random(attn_q_elems(&s), 2.0, 1), *k = tu_random(attn_kv_elems(&s), 2.0, 2);
    float *v = tu_random(attn_kv_elems(&s), 1.0, 3), *o = bench_alloc(attn_q_elems(&s) * 4);
    const attn_ops *full = attn_kind_find("full");
    const attn_exec x = tu_exec(1);
    attn_params p = tu_params(full, "alibi=1,softcap=5", &s);
    cr_assert_eq(tu_forward(full, &x, &s, &p, q, k, v, o), ATTN_OK);
    bench_accuracy acc;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_measure_accuracy(full, &s, &p, q, k, v, o, 64, 1, &acc, msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    cr_expect(acc.rel_err < 1e-5 && acc.self_rel_err < 1e-5, "rel_err %g self %g", acc.rel_err,
              acc.self_rel_err);
    const attn_params plain = tu_params(full, NULL, &s);
    cr_assert_eq(bench_measure_accuracy(full, &s, &plain, q, k, v, o, 64, 1, &acc, msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    cr_expect(acc.rel_err > 0.05, "ALiBi + softcap output vs plain attention: %g", acc.rel_err);
    /* a window of 8 with the modifiers: its error is against modified full attention only */
    const attn_ops *window = attn_kind_find("window");
    p = tu_params(window, "window=8,alibi=1,softcap=5", &s);
    cr_assert_eq(tu_forward(window, &x, &s, &p, q, k, v, o), ATTN_OK);
    double *exact = malloc((size_t)attn_q_elems(&s) * sizeof *exact);
    int64_t *rows = malloc((size_t)(s.H * s.T) * sizeof *rows);
    for (int64_t r = 0; r < s.H * s.T; r++) rows[r] = r;
    cr_assert_eq(attn_exact_reference(window, &s, &p, q, k, v, rows, s.H * s.T, exact), ATTN_OK);
    cr_assert_eq(bench_measure_accuracy(window, &s, &p, q, k, v, o, 10000, 1, &acc, msg,
                                        sizeof msg),
                 ATTN_OK, "%s", msg);
    cr_expect_float_eq(acc.rel_err, bench_rel_l2(o, exact, attn_q_elems(&s)), 1e-12);
    cr_expect(acc.self_rel_err < 1e-5, "window self_rel_err %g", acc.self_rel_err);
    free(q), free(k), free(v), free(o), free(exact), free(rows);
}
