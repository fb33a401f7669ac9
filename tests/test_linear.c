/*
 * test_linear.c — linear attention (attention/kinds/linear.c, feature_maps.c): every feature map
 * against its float64 reference (causal and not, odd sizes, Hkv != H, T != S, chunk sizes, large
 * logits), decode from the recurrent state against the last rows of the causal prefill, FAVOR+
 * error against exact softmax shrinking with the number of features, the denominator guards,
 * zero influence of future keys, seeds and threads, and the counts (flops, bytes, workspace).
 */
#include <criterion/criterion.h>
#include <float.h>
#include <stdio.h>

#include "test_util.h"

enum { MAPS = 4 };
static const char *const map_names[MAPS] = {"elu", "relu", "favor", "trig"};

static const tu_shape_case shapes[] = {
    {1, 1, 1, 1, 1, 1, false},    /* smallest */
    {1, 2, 1, 1, 7, 8, true},     /* one query (decode-like), MQA */
    {2, 4, 2, 13, 13, 16, true},  /* odd T, GQA, batch */
    {1, 4, 4, 33, 70, 32, false}, /* S > T */
    {1, 4, 2, 33, 70, 32, true},  /* S > T causal: queries at positions 37..69 */
    {1, 2, 2, 70, 33, 32, true},  /* T > S: the first 37 rows see no key */
    {1, 3, 1, 5, 300, 1, false},  /* D = 1, long S */
    {1, 3, 1, 5, 300, 1, true},     {1, 2, 1, 65, 130, 128, true}, /* D = 128 */
    {2, 2, 2, 129, 129, 64, false},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

static const attn_ops *linear(void)
{
    const attn_ops *ops = attn_kind_find("linear");
    cr_assert_not_null(ops, "kind 'linear' is not registered");
    return ops;
}

static attn_params with(const char *settings)
{
    const attn_ops *ops = linear();
    attn_params p = attn_params_defaults(attn_kind_params(ops));
    char buf[256], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        cr_assert_not_null(eq, "bad setting %s", tok);
        *eq = '\0';
        cr_assert_eq(attn_param_set(attn_kind_params(ops), &p, tok, eq + 1, msg, sizeof msg),
                     ATTN_OK, "%s", msg);
    }
    return p;
}

static void label(const attn_shape *s, const char *settings, char *buf, size_t len)
{
    snprintf(buf, len, "[B=%lld H=%lld Hkv=%lld T=%lld S=%lld D=%lld causal=%d %s]",
             (long long)s->B, (long long)s->H, (long long)s->Hkv, (long long)s->T, (long long)s->S,
             (long long)s->D, s->causal, settings);
}

/* Forward on x vs the kind's float64 reference; returns the relative L2 error (inf if not
 * finite). */
static double error_vs_reference(const attn_exec *x, const attn_shape *s, const attn_params *p,
                                 double sigma, float *max_abs_out)
{
    const attn_ops *ops = linear();
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(attn_check(ops, s, p, msg, sizeof msg), ATTN_OK, "%s", msg);
    const int64_t qn = attn_q_elems(s), kvn = attn_kv_elems(s);
    float *q = tu_random(qn, sigma, 1), *k = tu_random(kvn, sigma, 2), *v = tu_random(kvn, 1, 3);
    float *o = bench_alloc((size_t)qn * 4);
    cr_assert_eq(tu_forward(ops, x, s, p, q, k, v, o), ATTN_OK);
    double *ref = tu_reference(ops, s, p, q, k, v);
    double err = tu_rel_l2(o, ref, qn);
    float mx = 0;
    for (int64_t e = 0; e < qn; e++) {
        if (!isfinite(o[e])) err = INFINITY;
        mx = fmaxf(mx, fabsf(o[e]));
    }
    if (max_abs_out) *max_abs_out = mx;
    free(q), free(k), free(v), free(o), free(ref);
    return err;
}

Test(linear, every_map_matches_its_reference)
{
    const char *extra[] = {"", "chunk=1", "chunk=5", "features=7", "features=33 chunk=16"};
    for (int m = 0; m < MAPS; m++)
        for (int c = 0; c < NSHAPES; c++)
            for (size_t ex = 0; ex < sizeof extra / sizeof extra[0]; ex++) {
                char settings[96], lab[256];
                snprintf(settings, sizeof settings, "map=%s %s", map_names[m], extra[ex]);
                const attn_shape s = tu_make_shape(&shapes[c]);
                const attn_exec x = tu_exec(2);
                attn_params p = with(settings);
                label(&s, settings, lab, sizeof lab);
                double err = error_vs_reference(&x, &s, &p, 1.0, NULL);
                cr_expect(err <= 1e-5, "%s: rel L2 error %.3g > 1e-5", lab, err);
            }
}

/* Inputs 10 and 30 times unit variance: scores q·k/sqrt(D) of ~1e2 and ~1e3, feature exponents
 * of thousands. No inf/NaN; against the reference within 1e-3 (float32 rounding of exponents
 * this large is ~1e-4 relative, as for full). Causal favor and trig rows whose visible keys
 * underflow under the chunk's shift are redone with their own shift (measured worst: 6e-5). */
Test(linear, large_logits_stay_finite_and_accurate)
{
    const double sigmas[] = {10, 30};
    for (int m = 0; m < MAPS; m++)
        for (int c = 0; c < NSHAPES; c++)
            for (int si = 0; si < 2; si++)
                for (int chunk = 0; chunk < 2; chunk++) {
                    char settings[96], lab[256];
                    snprintf(settings, sizeof settings, "map=%s chunk=%d", map_names[m],
                             chunk ? 7 : 64);
                    const attn_shape s = tu_make_shape(&shapes[c]);
                    const attn_exec x = tu_exec(2);
                    attn_params p = with(settings);
                    label(&s, settings, lab, sizeof lab);
                    float mx;
                    double err = error_vs_reference(&x, &s, &p, sigmas[si], &mx);
                    cr_expect(err <= 1e-3, "%s sigma=%g: rel L2 error %.3g > 1e-3", lab, sigmas[si],
                              err);
                }
}

/* trig with one frequency: den = Σ_j w_j cos(u_i - u_j) is often ~0 or negative. The floor
 * keeps |out| <= max|v| / 1e-3 and the forward agrees with the reference, which floors the same
 * way (a floored row's error is at most float rounding / 1e-3: tolerance 1e-3). */
Test(linear, trig_denominator_floor)
{
    const tu_shape_case cases[] = {{1, 4, 2, 40, 40, 16, true}, {1, 4, 4, 40, 60, 16, false}};
    for (size_t c = 0; c < 2; c++) {
        const attn_shape s = tu_make_shape(&cases[c]);
        const attn_exec x = tu_exec(2);
        attn_params p = with("map=trig features=1 chunk=8");
        float mx;
        double err = error_vs_reference(&x, &s, &p, 1.0, &mx);
        cr_expect(err <= 1e-3, "case %zu: rel L2 error %.3g", c, err);
        /* v ~ N(0,1) over a few thousand draws: |v| < 6 */
        cr_expect(mx <= 6.0f / 1e-3f, "case %zu: |out| = %g beyond max|v| / floor", c, mx);
    }
}

/* relu: a query with no positive component has φ(q) = 0, so den = 0: its row is 0. */
Test(linear, relu_row_without_features_is_zero)
{
    const attn_ops *ops = linear();
    for (int causal = 0; causal < 2; causal++) {
        attn_shape s = attn_shape_init(1, 1, 1, 4, 6, 3, causal);
        const attn_exec x = tu_exec(1);
        attn_params p = with("map=relu");
        float *q = tu_random(12, 1, 1), *k = tu_random(18, 1, 2), *v = tu_random(18, 1, 3);
        float o[12];
        for (int d = 0; d < 3; d++) q[2 * 3 + d] = -fabsf(q[2 * 3 + d]) - 0.1f; /* row 2 */
        cr_assert_eq(tu_forward(ops, &x, &s, &p, q, k, v, o), ATTN_OK);
        double *ref = tu_reference(ops, &s, &p, q, k, v);
        for (int d = 0; d < 3; d++) {
            cr_expect_eq(o[2 * 3 + d], 0.0f);
            cr_expect_eq(ref[2 * 3 + d], 0.0);
        }
        cr_expect_leq(tu_rel_l2(o, ref, 12), 1e-6);
        free(q), free(k), free(v), free(ref);
    }
}

/* Decode: prepare the state from the first S-T keys, decode the T newest queries; equals the
 * last T rows of the causal prefill (up to rounding: other chunk boundaries), leaves the state
 * unchanged, and repeats bitwise. Workspace and state of exactly the declared sizes. */
Test(linear, decode_equals_last_rows_of_prefill)
{
    const attn_ops *ops = linear();
    const int64_t B = 2, H = 4, Hkv = 2, S = 100, D = 16, Ts[] = {1, 3, 37, 100};
    const char *extra[] = {"", "chunk=16", "chunk=1"};
    char msg[ATTN_MSG_LEN];
    for (int m = 0; m < MAPS; m++)
        for (size_t ex = 0; ex < 3; ex++)
            for (int ti = 0; ti < 4; ti++) {
                char settings[64];
                snprintf(settings, sizeof settings, "map=%s %s", map_names[m], extra[ex]);
                attn_params p = with(settings);
                const attn_shape pre = attn_shape_init(B, H, Hkv, S, S, D, true);
                const attn_exec x = tu_exec(2);
                const int64_t T = Ts[ti], qn = attn_q_elems(&pre), kvn = attn_kv_elems(&pre);
                float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2),
                      *v = tu_random(kvn, 1, 3);
                float *o = bench_alloc((size_t)qn * 4);
                cr_assert_eq(tu_forward(ops, &x, &pre, &p, q, k, v, o), ATTN_OK);

                attn_shape dec = attn_shape_init(B, H, Hkv, T, S, D, true);
                dec.decode = true;
                cr_assert_eq(attn_check(ops, &dec, &p, msg, sizeof msg), ATTN_OK, "%s", msg);
                const size_t sb = ops->decode->state_bytes(ops, &dec, &p);
                float *qd = bench_alloc((size_t)(B * H * T * D) * 4);
                float *od = bench_alloc((size_t)(B * H * T * D) * 4);
                float *od2 = bench_alloc((size_t)(B * H * T * D) * 4);
                double *want = malloc((size_t)(B * H * T * D) * sizeof(double));
                for (int64_t bh = 0; bh < B * H; bh++) {
                    memcpy(qd + bh * T * D, q + (bh * S + S - T) * D, (size_t)(T * D) * 4);
                    for (int64_t e = 0; e < T * D; e++)
                        want[bh * T * D + e] = o[(bh * S + S - T) * D + e];
                }
                void *state = bench_alloc(sb), *copy = bench_alloc(sb);
                void *ws = bench_alloc(ops->workspace_bytes(ops, &x, &dec, &p));
                float *owned[ATTN_MAX_WEIGHTS]; /* the features tu_forward drew for the prefill */
                cr_assert_eq(attn_weights_draw(ops, &dec, &p, owned, msg, sizeof msg), ATTN_OK);
                cr_assert_eq(ops->decode->prepare(ops, &x, &dec, &p, k, v, state, ws), ATTN_OK);
                memcpy(copy, state, sb);
                cr_assert_eq(ops->decode->step(ops, &x, &dec, &p, qd, k, v, od, state, ws),
                             ATTN_OK);
                cr_assert_eq(ops->decode->step(ops, &x, &dec, &p, qd, k, v, od2, state, ws),
                             ATTN_OK);
                double err = tu_rel_l2(od, want, B * H * T * D);
                cr_expect(err <= 1e-5, "%s T=%lld: decode vs prefill rel L2 %.3g", settings,
                          (long long)T, err);
                cr_expect(memcmp(state, copy, sb) == 0, "%s T=%lld: decode changed the state",
                          settings, (long long)T);
                cr_expect(memcmp(od, od2, (size_t)(B * H * T * D) * 4) == 0,
                          "%s T=%lld: a second decode differs", settings, (long long)T);
                free(q), free(k), free(v), free(o), free(qd), free(od), free(od2), free(want);
                free(state), free(copy), free(ws);
                attn_weights_free(owned);
            }
}

/* Decode costs do not depend on the cache length S: the state replaces it. */
Test(linear, decode_cost_is_independent_of_the_cache)
{
    const attn_ops *ops = linear();
    for (int m = 0; m < MAPS; m++) {
        char settings[32];
        snprintf(settings, sizeof settings, "map=%s", map_names[m]);
        attn_params p = with(settings);
        attn_shape a = attn_shape_init(1, 8, 8, 1, 1000, 64, true), b = a;
        const attn_exec x = tu_exec(2);
        a.decode = b.decode = true;
        b.S = 1000000;
        cr_expect_eq(ops->flops(ops, &a, &p), ops->flops(ops, &b, &p), "%s flops", settings);
        cr_expect_eq(ops->bytes(ops, &a, &p), ops->bytes(ops, &b, &p), "%s bytes", settings);
        cr_expect_eq(ops->workspace_bytes(ops, &x, &a, &p), ops->workspace_bytes(ops, &x, &b, &p),
                     "%s workspace", settings);
        cr_expect_eq(ops->decode->state_bytes(ops, &a, &p), ops->decode->state_bytes(ops, &b, &p),
                     "%s state", settings);
        /* bytes: q, out, the state read and one new k, v row per KV head */
        const double W = m >= 2 ? 256.0 * 64 : 0, M = m == 3 ? 512 : (m == 2 ? 256 : 64);
        const double want = 4.0 * (2 * 8 * 64 + W + 8 * (M * 65 + M + 1) + 2 * 8 * 64);
        cr_expect_eq(ops->bytes(ops, &a, &p), want, "%s bytes %.0f, want %.0f", settings,
                     ops->bytes(ops, &a, &p), want);
    }
}

/* FAVOR+ against exact softmax attention: the error is random (the features are), so take
 * the mean over seeds; it shrinks as features grows (~1/sqrt(m) for small errors). Inputs of
 * standard deviation 0.5 at D=16 keep the estimator's variance moderate (Performer, Lemma 2:
 * relative MSE (exp(|x+y|²) - 1)/m). Measured means (8 seeds): 0.45, 0.26, 0.15 non-causal,
 * 0.32, 0.19, 0.11 causal at m = 16, 64, 256; bounds leave a margin of ~2 standard deviations. */
Test(linear, favor_error_shrinks_with_features)
{
    const attn_ops *ops = linear();
    const int64_t D = 16, n = 128, ms[] = {16, 64, 256};
    for (int causal = 0; causal < 2; causal++) {
        const attn_shape s = attn_shape_init(1, 4, 4, n, n, D, causal);
        const attn_exec x = tu_exec(2);
        const int64_t qn = attn_q_elems(&s), rows = s.B * s.H * s.T;
        float *q = tu_random(qn, 0.5, 11), *k = tu_random(qn, 0.5, 12), *v = tu_random(qn, 1, 13);
        float *o = bench_alloc((size_t)qn * 4);
        int64_t *idx = malloc((size_t)rows * sizeof *idx);
        double *exact = malloc((size_t)qn * sizeof *exact), err[3] = {0};
        for (int64_t r = 0; r < rows; r++) idx[r] = r;
        cr_assert_eq(attn_masked_reference(NULL, &s, NULL, q, k, v, idx, rows, exact), ATTN_OK);
        for (int mi = 0; mi < 3; mi++)
            for (int seed = 0; seed < 4; seed++) {
                char settings[64];
                snprintf(settings, sizeof settings, "map=favor features=%lld seed=%d",
                         (long long)ms[mi], seed);
                attn_params p = with(settings);
                cr_assert_eq(tu_forward(ops, &x, &s, &p, q, k, v, o), ATTN_OK);
                err[mi] += tu_rel_l2(o, exact, qn) / 4;
            }
        cr_log_info("causal=%d: mean error %.3f %.3f %.3f at m = 16, 64, 256", causal, err[0],
                    err[1], err[2]);
        cr_expect(err[1] < 0.8 * err[0] && err[2] < 0.8 * err[1],
                  "causal=%d: error does not shrink: %.3f %.3f %.3f", causal, err[0], err[1],
                  err[2]);
        cr_expect(err[2] < 0.5 * err[0], "causal=%d: m=256 error %.3f not half of m=16's %.3f",
                  causal, err[2], err[0]);
        cr_expect(err[2] < 0.2, "causal=%d: m=256 error %.3f", causal, err[2]);
        free(q), free(k), free(v), free(o), free(idx), free(exact);
    }
}

/* Future keys (j > position of the query) have no influence: bitwise for elu and relu (the
 * masked scores are zeroed), within rounding for favor and trig (a chunk's shift includes all
 * its keys; keys perturbed to |k| ~ 30 also push the visible ones below float range, so the
 * rows are redone with their own shift). */
Test(linear, future_keys_have_no_influence)
{
    const attn_ops *ops = linear();
    const tu_shape_case c = {1, 2, 1, 40, 40, 8, true};
    for (int m = 0; m < MAPS; m++) {
        char settings[64];
        snprintf(settings, sizeof settings, "map=%s chunk=16", map_names[m]);
        attn_params p = with(settings);
        const attn_shape s = tu_make_shape(&c);
        const attn_exec x = tu_exec(2);
        const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s), D = s.D;
        float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2), *v = tu_random(kvn, 1, 3);
        float *noise = tu_random(kvn, 30, 4), *k2 = bench_alloc((size_t)kvn * 4);
        float *v2 = bench_alloc((size_t)kvn * 4), *o = bench_alloc((size_t)qn * 4);
        float *o2 = bench_alloc((size_t)qn * 4);
        tu_forward(ops, &x, &s, &p, q, k, v, o);
        const int64_t positions[] = {0, 7, 20, 31};
        for (int pi = 0; pi < 4; pi++) {
            const int64_t i = positions[pi];
            memcpy(k2, k, (size_t)kvn * 4), memcpy(v2, v, (size_t)kvn * 4);
            for (int64_t e = (i + 1) * D; e < kvn; e++) k2[e] = noise[e], v2[e] = -1e3f;
            tu_forward(ops, &x, &s, &p, q, k2, v2, o2);
            for (int64_t h = 0; h < s.H; h++) {
                const float *a = o + (h * s.T + i) * D, *b = o2 + (h * s.T + i) * D;
                if (m < 2) {
                    cr_expect(memcmp(a, b, (size_t)D * 4) == 0, "%s: row %lld of head %lld moved",
                              settings, (long long)i, (long long)h);
                    continue;
                }
                double num = 0, den = 0;
                for (int64_t d = 0; d < D; d++)
                    num += (a[d] - b[d]) * (a[d] - b[d]), den += a[d] * a[d];
                cr_expect(sqrt(num / den) <= 1e-5, "%s: row %lld of head %lld moved by %.3g",
                          settings, (long long)i, (long long)h, sqrt(num / den));
            }
        }
        free(q), free(k), free(v), free(noise), free(k2), free(v2), free(o), free(o2);
    }
}

/* The random features come from `seed` alone: the same on 1 and 2 threads, different for
 * another seed. */
Test(linear, features_depend_on_the_seed_only)
{
    const attn_ops *ops = linear();
    const tu_shape_case c = {2, 4, 2, 50, 70, 16, true};
    for (int m = 2; m < MAPS; m++)
        for (int causal = 0; causal < 2; causal++) {
            char settings[64], other[64];
            snprintf(settings, sizeof settings, "map=%s seed=5", map_names[m]);
            snprintf(other, sizeof other, "map=%s seed=6", map_names[m]);
            attn_params p = with(settings), p2 = with(other);
            tu_shape_case cc = c;
            cc.causal = causal;
            const attn_shape s = tu_make_shape(&cc);
            const attn_exec x1 = tu_exec(1), x2 = tu_exec(2);
            const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
            float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2), *v = tu_random(kvn, 1, 3);
            float *o1 = bench_alloc((size_t)qn * 4), *o2 = bench_alloc((size_t)qn * 4);
            float *o3 = bench_alloc((size_t)qn * 4);
            tu_forward(ops, &x1, &s, &p, q, k, v, o1);
            tu_forward(ops, &x2, &s, &p, q, k, v, o2);
            tu_forward(ops, &x2, &s, &p2, q, k, v, o3);
            double same = 0, diff = 0;
            for (int64_t e = 0; e < qn; e++)
                same = tu_max(same, fabs(o1[e] - o2[e])), diff = tu_max(diff, fabs(o1[e] - o3[e]));
            cr_expect_leq(same, 1e-6, "%s causal=%d: 1 vs 2 threads differ by %g", settings, causal,
                          same);
            cr_expect_gt(diff, 1e-3, "%s causal=%d: seeds 5 and 6 give the same output", settings,
                         causal);
            free(q), free(k), free(v), free(o1), free(o2), free(o3);
        }
}

/* Flops counted from the loops that run: elu non-causal in closed form; the causal scan costs
 * the same for every middle chunk (linear in n). Workspace does not grow with n. */
Test(linear, counts)
{
    const attn_ops *ops = linear();
    attn_params p = with("map=elu chunk=64");
    const double n = 1000, D = 64, E = D + 1, H = 8;
    attn_shape s = attn_shape_init(1, 8, 8, 1000, 1000, 64, false);
    /* per head: key features n·D + φ(K)ᵀ[V 1] 2·n·D·E; queries n·D + 2·n·D·E; division n·D */
    cr_expect_eq(ops->flops(ops, &s, &p), H * (3 * n * D + 4 * n * D * E), "flops %.0f",
                 ops->flops(ops, &s, &p));
    cr_expect_eq(ops->bytes(ops, &s, &p), 4.0 * 4 * 8 * 1000 * 64);
    for (int m = 0; m < MAPS; m++) {
        char settings[32];
        snprintf(settings, sizeof settings, "map=%s", map_names[m]);
        p = with(settings);
        s = attn_shape_init(1, 8, 8, 64 * 10, 64 * 10, 64, true);
        double f10 = ops->flops(ops, &s, &p);
        s.T = s.S = 64 * 20;
        double f20 = ops->flops(ops, &s, &p);
        s.T = s.S = 64 * 30;
        double f30 = ops->flops(ops, &s, &p);
        cr_expect_eq(f30 - f20, f20 - f10, "%s: causal flops not linear in n", settings);
        for (int causal = 0; causal < 2; causal++) {
            attn_shape a = attn_shape_init(1, 8, 8, 4096, 4096, 64, causal), b = a;
            const attn_exec x = tu_exec(2);
            b.T = b.S = 65536;
            cr_expect_eq(ops->workspace_bytes(ops, &x, &a, &p),
                         ops->workspace_bytes(ops, &x, &b, &p),
                         "%s causal=%d: workspace grows with n", settings, causal);
            cr_expect_lt(ops->workspace_bytes(ops, &x, &b, &p), (size_t)4 << 20);
        }
    }
}

Test(linear, params_and_checks)
{
    const attn_ops *ops = linear();
    attn_params p = with("map=favor features=64");
    char buf[160], msg[ATTN_MSG_LEN];
    attn_params_format(attn_kind_params(ops), &p, buf, sizeof buf);
    cr_expect(strstr(buf, "map=favor,features=64,") == buf, "formatted: %s", buf);
    cr_expect_eq(attn_param_set(attn_kind_params(ops), &p, "map", "softmax", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect(strstr(msg, "elu, relu, favor, trig") != NULL, "%s", msg);
    attn_shape s = attn_shape_init(1, 2, 2, 8, 4, 16, true);
    s.decode = true;
    cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "q_len 8 <= kv_len 4") != NULL, "%s", msg);
    s.T = 2, s.causal = false;
    cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "causal") != NULL, "%s", msg);
}

/* favor and trig take their projections as the weight `features` [m, D] (elu, relu: none):
 * forward refuses to run without it, and with features of the caller's (the drawn ones,
 * perturbed) forward, decode and the float64 reference all use them. */
Test(linear, features_are_a_weight)
{
    const attn_ops *ops = linear();
    char msg[ATTN_MSG_LEN];
    for (int m = 0; m < MAPS; m++)
        for (int causal = 0; causal < 2; causal++) {
            char settings[64];
            snprintf(settings, sizeof settings, "map=%s features=24", map_names[m]);
            attn_params p = with(settings);
            const attn_shape s = attn_shape_init(1, 4, 2, 40, 40, 16, causal);
            const attn_exec x = tu_exec(2);
            attn_weight w[ATTN_MAX_WEIGHTS];
            const int nw = attn_kind_weights(ops, &s, &p, w);
            cr_expect_eq(nw, m >= 2, "%s: %d weights", settings, nw);
            if (nw != 1) continue;
            cr_expect_str_eq(w[0].name, "features");
            cr_expect(w[0].rank == 2 && w[0].dims[0] == 24 && w[0].dims[1] == 16, "%s", settings);
            const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
            float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2), *v = tu_random(kvn, 1, 3);
            float *o = bench_alloc((size_t)qn * 4), *od = bench_alloc((size_t)qn * 4);
            void *ws = bench_alloc(ops->workspace_bytes(ops, &x, &s, &p));
            cr_expect_eq(ops->forward(ops, &x, &s, &p, q, k, v, o, ws), ATTN_EINVAL, "%s",
                         settings);
            free(ws);
            float *owned[ATTN_MAX_WEIGHTS], *noise = tu_random(24 * 16, 0.5, 9);
            attn_params drawn = p, given = p;
            cr_assert_eq(attn_weights_draw(ops, &s, &drawn, owned, msg, sizeof msg), ATTN_OK);
            float mine[24 * 16];
            for (int e = 0; e < 24 * 16; e++) mine[e] = owned[0][e] + noise[e];
            given.w[0] = mine;
            cr_assert_eq(tu_forward(ops, &x, &s, &given, q, k, v, o), ATTN_OK);
            cr_assert_eq(tu_forward(ops, &x, &s, &drawn, q, k, v, od), ATTN_OK);
            double *ref = tu_reference(ops, &s, &given, q, k, v);
            const double err = tu_rel_l2(o, ref, qn), moved = tu_rel_l2(od, ref, qn);
            cr_expect_leq(err, 1e-5, "%s causal=%d: rel L2 %.3g with given features", settings,
                          causal, err);
            cr_expect_gt(moved, 1e-3, "%s causal=%d: the given features changed nothing", settings,
                         causal);
            if (causal) { /* decode the last 5 rows from a state prepared with them */
                attn_shape dec = attn_shape_init(1, 4, 2, 5, 40, 16, true);
                dec.decode = true;
                float *qd = bench_alloc(4 * 5 * 16 * 4), *odec = bench_alloc(4 * 5 * 16 * 4);
                double want[4 * 5 * 16];
                for (int64_t h = 0; h < 4; h++)
                    for (int64_t e = 0; e < 5 * 16; e++)
                        qd[h * 80 + e] = q[(h * 40 + 35) * 16 + e],
                                    want[h * 80 + e] = o[(h * 40 + 35) * 16 + e];
                void *st = bench_alloc(ops->decode->state_bytes(ops, &dec, &given));
                void *dws = bench_alloc(ops->workspace_bytes(ops, &x, &dec, &given));
                cr_assert_eq(ops->decode->prepare(ops, &x, &dec, &given, k, v, st, dws), ATTN_OK);
                cr_assert_eq(ops->decode->step(ops, &x, &dec, &given, qd, k, v, odec, st, dws),
                             ATTN_OK);
                cr_expect_leq(tu_rel_l2(odec, want, 4 * 5 * 16), 1e-5, "%s decode", settings);
                free(qd), free(odec), free(st), free(dws);
            }
            attn_weights_free(owned);
            free(q), free(k), free(v), free(o), free(od), free(ref), free(noise);
        }
}
