/*
 * test_kinds.c — every registered kind against its float64 definition, generated from the
 * registry: awkward shapes (T=1, odd T, S != T, T > S causal, Hkv != H, D=1, D=128), every
 * parameter at its default, minimum and maximum (integers also at 1, 2, 3, 7), resolved for the
 * shape, large logits, zero influence of masked keys, exact flop count from the mask for every
 * variant, thread-count independence, and registry validation.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "test_util.h"

static const tu_shape_case shapes[] = {
    {1, 1, 1, 1, 1, 1, false},     /* smallest */
    {1, 2, 1, 1, 7, 8, true},      /* T=1 decode-like, MQA */
    {2, 4, 2, 13, 13, 16, true},   /* odd T, GQA, batch */
    {1, 4, 4, 33, 70, 32, false},  /* cross attention S > T */
    {1, 2, 2, 70, 33, 32, true},   /* causal with T > S: first rows see no key */
    {1, 3, 1, 5, 300, 1, false},   /* D = 1, long S */
    {1, 2, 1, 65, 130, 128, true}, /* D = 128 */
    {2, 2, 2, 129, 129, 64, false},
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* Small values an integer parameter also takes (when inside its range and not already an end
 * or the default): they make windows, strides, blocks and draws awkward at the test shapes. */
static const double small_values[] = {1, 2, 3, 7};
enum {
    NSMALL = sizeof small_values / sizeof small_values[0],
    MAX_VARIANTS = 1 + (2 + NSMALL) * ATTN_MAX_PARAMS
};

/* Parameter variants of a kind: defaults, then each parameter at its min and at its max, and
 * each integer parameter at the small values. Resolve them per shape (attn_params_resolve). */
static int variants(const attn_ops *ops, attn_params *out, char names[][96])
{
    int n = 0;
    out[n] = attn_params_defaults(attn_kind_params(ops));
    snprintf(names[n++], 96, "defaults");
    for (int p = 0; p < ops->params.count; p++) {
        const attn_param_def *d = &ops->params.defs[p];
        double values[2 + NSMALL] = {d->min, d->max};
        int nv = 2;
        for (int k = 0; d->integer && k < NSMALL; k++)
            if (small_values[k] > d->min && small_values[k] < d->max && small_values[k] != d->def)
                values[nv++] = small_values[k];
        for (int e = 0; e < nv; e++) {
            out[n] = attn_params_defaults(attn_kind_params(ops));
            out[n].v[p] = values[e];
            snprintf(names[n++], 96, "%s=%g", d->name, values[e]);
        }
    }
    return n;
}

static void check_against_definition(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                                     const attn_params *p, const char *label, double sigma,
                                     double tol)
{
    char msg[ATTN_MSG_LEN];
    attn_params resolved = *p;
    attn_params_resolve(ops, s, &resolved);
    p = &resolved;
    if (attn_check(ops, s, p, msg, sizeof msg) != ATTN_OK) return; /* refused: not a case */
    float *q = tu_random(attn_q_elems(s), sigma, 1), *k = tu_random(attn_kv_elems(s), sigma, 2);
    float *v = tu_random(attn_kv_elems(s), 1.0, 3), *o = bench_alloc(attn_q_elems(s) * 4);
    cr_assert_eq(tu_forward(ops, x, s, p, q, k, v, o), ATTN_OK, "%s %s: forward failed", ops->name,
                 label);
    double *ref = tu_reference(ops, s, p, q, k, v);
    int64_t n = attn_q_elems(s);
    bool finite = true;
    for (int64_t e = 0; e < n; e++) finite &= isfinite(o[e]);
    double err = tu_rel_l2(o, ref, n);
    cr_expect(finite, "%s %s: output has inf/NaN", ops->name, label);
    cr_expect(err <= tol, "%s %s: rel L2 error %.3g > %.1g", ops->name, label, err, tol);
    free(q), free(k), free(v), free(o), free(ref);
}

static void shape_label(const attn_shape *s, const attn_exec *x, const char *variant, char *buf,
                        size_t len)
{
    snprintf(buf, len, "[B=%lld H=%lld Hkv=%lld T=%lld S=%lld D=%lld causal=%d threads=%d %s]",
             (long long)s->B, (long long)s->H, (long long)s->Hkv, (long long)s->T, (long long)s->S,
             (long long)s->D, s->causal, x->threads, variant);
}

Test(kinds, registry_is_valid)
{
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(attn_registry_validate(msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_gt(attn_kind_count(), 0);
    cr_assert_not_null(attn_kind_find("full"));
    cr_assert_null(attn_kind_find("no_such_kind"));
}

static attn_status dummy_reference(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                   const float *q, const float *k, const float *v,
                                   const int64_t *rows, int64_t nrows, double *out)
{
    return ATTN_OK;
}

Test(kinds, broken_module_is_reported)
{
    attn_ops broken = *attn_kind_find("full");
    char msg[ATTN_MSG_LEN];
    broken.forward = NULL;
    cr_expect_eq(attn_kind_validate(&broken, msg, sizeof msg), ATTN_EFAIL);
    cr_expect(strstr(msg, "forward") != NULL, "message: %s", msg);
    broken = *attn_kind_find("full");
    broken.name = "Bad Name";
    cr_expect_eq(attn_kind_validate(&broken, msg, sizeof msg), ATTN_EFAIL);
    broken = *attn_kind_find("full");
    broken.allows = NULL, broken.reference = NULL; /* no definition */
    cr_expect_eq(attn_kind_validate(&broken, msg, sizeof msg), ATTN_EFAIL);
    broken = *attn_kind_find("full");
    broken.reference = dummy_reference; /* two definitions (full has allows) */
    cr_expect_eq(attn_kind_validate(&broken, msg, sizeof msg), ATTN_EFAIL);
    cr_expect(strstr(msg, "exactly one") != NULL, "message: %s", msg);
}

Test(kinds, match_their_definition_at_awkward_shapes)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        attn_params ps[MAX_VARIANTS];
        char names[MAX_VARIANTS][96];
        int nv = variants(ops, ps, names);
        for (int c = 0; c < NSHAPES; c++)
            for (int pv = 0; pv < nv; pv++) {
                const attn_shape s = tu_make_shape(&shapes[c]);
                const attn_exec x = tu_exec(2);
                char label[256];
                shape_label(&s, &x, names[pv], label, sizeof label);
                check_against_definition(ops, &x, &s, &ps[pv], label, 1.0, 1e-5);
            }
    }
}

/* The other kernel sets this machine supports (tu_isa_next: the test above, and the rest of the
 * suite, run the one in force at start, the best or ATTN_ISA's): every kind against its
 * definition at a few representative shapes, defaults at each, every parameter variant at the
 * first, large logits at the last. */
Test(kinds, every_isa_matches_the_definition)
{
    const tu_shape_case few[] = {
        {2, 4, 2, 13, 13, 16, true},    /* odd T, GQA: every tail, partial tiles */
        {1, 4, 4, 33, 70, 32, false},   /* cross attention */
        {1, 8, 2, 1, 300, 64, true},    /* decode: one query, grouped heads */
        {2, 2, 2, 129, 129, 64, false}, /* several tiles */
    };
    enum { NFEW = sizeof few / sizeof few[0] };
    int sets = 0, supported = 0;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) supported += attn_isa_supported((attn_isa)i);
    for (attn_isa isa = TU_ISA_FIRST; tu_isa_next(&isa); sets++)
        for (int kn = 0; kn < attn_kind_count(); kn++) {
            const attn_ops *ops = attn_kind_at(kn);
            attn_params ps[MAX_VARIANTS];
            char names[MAX_VARIANTS][96], variant[128], label[320];
            const int nv = variants(ops, ps, names);
            for (int c = 0; c < NFEW; c++)
                for (int pv = 0; pv < (c == 0 ? nv : 1); pv++) {
                    const attn_shape s = tu_make_shape(&few[c]);
                    const attn_exec x = tu_exec(2); /* on isa, in force */
                    cr_assert_eq(attn_exec_isa(&x), isa);
                    snprintf(variant, sizeof variant, "isa=%s %s", attn_isa_name(isa), names[pv]);
                    shape_label(&s, &x, variant, label, sizeof label);
                    check_against_definition(ops, &x, &s, &ps[pv], label, 1.0, 1e-5);
                    if (c == NFEW - 1)
                        check_against_definition(ops, &x, &s, &ps[pv], label, 30.0, 1e-3);
                }
        }
    cr_expect_eq(sets, supported - 1, "ran %d sets besides the starting one, %d supported", sets,
                 supported);
    cr_expect_eq(attn_isa_current(), tu_isa_start(), "the starting set is in force again");
}

/* Scores of magnitude ~1e3: a naive exp overflows; the online max must keep it finite.
 * Tolerance 1e-3: float32 rounding of scores this large is ~1e-4 absolute, which moves the
 * (nearly one-hot) weights by that much relatively. */
Test(kinds, large_logits_stay_finite_and_accurate)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        for (int c = 0; c < NSHAPES; c++) {
            const attn_shape s = tu_make_shape(&shapes[c]);
            const attn_exec x = tu_exec(2);
            char label[256];
            shape_label(&s, &x, "large logits", label, sizeof label);
            check_against_definition(ops, &x, &s, &p, label, 30.0, 1e-3);
        }
    }
}

/* For kinds defined by a mask: changing keys/values a query cannot see leaves its output
 * bitwise unchanged. Checked for every (head, query) of small shapes, with small tiles so
 * masked and visible keys share blocks. */
Test(kinds, masked_keys_have_zero_influence)
{
    const tu_shape_case cases[] = {{1, 2, 1, 9, 12, 8, true},
                                   {1, 2, 2, 12, 9, 8, true},
                                   {1, 2, 1, 100, 90, 8, true}, /* diagonal blocks in row groups */
                                   {1, 2, 1, 3, 2, 4, true}};   /* T > S: row 0 sees nothing */
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!ops->allows) continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const attn_shape s = tu_make_shape(&cases[c]);
            const attn_exec x = tu_exec(2);
            attn_params p = attn_params_defaults(attn_kind_params(ops));
            attn_params_resolve(ops, &s, &p);
            char msg[ATTN_MSG_LEN];
            if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
            const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s), D = s.D;
            float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2), *v = tu_random(kvn, 1, 3);
            float *k2 = bench_alloc(kvn * 4), *v2 = bench_alloc(kvn * 4);
            float *o = bench_alloc(qn * 4), *o2 = bench_alloc(qn * 4);
            tu_forward(ops, &x, &s, &p, q, k, v, o);
            int64_t masked_pairs = 0;
            for (int64_t h = 0; h < s.H; h++)
                for (int64_t i = 0; i < s.T; i++) {
                    memcpy(k2, k, kvn * 4), memcpy(v2, v, kvn * 4);
                    const int64_t g = h / (s.H / s.Hkv);
                    for (int64_t j = 0; j < s.S; j++) {
                        if (ops->allows(ops, &s, &p, h, i, j)) continue;
                        masked_pairs++;
                        for (int64_t d = 0; d < D; d++) {
                            k2[(g * s.S + j) * D + d] = 1e3f;
                            v2[(g * s.S + j) * D + d] = -1e3f;
                        }
                    }
                    tu_forward(ops, &x, &s, &p, q, k2, v2, o2);
                    const int64_t row = (h * s.T + i) * D;
                    cr_expect(memcmp(o + row, o2 + row, D * 4) == 0,
                              "%s: masked keys moved output row h=%lld i=%lld (case %zu)",
                              ops->name, (long long)h, (long long)i, c);
                }
            cr_expect_gt(masked_pairs, 0, "case %zu masks nothing: the test would be empty", c);
            free(q), free(k), free(v), free(k2), free(v2), free(o), free(o2);
        }
    }
}

/* flops() counts 4·D per allowed score: for mask kinds it equals the predicate's count, for
 * every parameter variant (sparse kinds count their real layout: this checks it lists every
 * allowed score exactly once). */
Test(kinds, flops_count_the_allowed_scores)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!ops->allows) continue;
        attn_params ps[MAX_VARIANTS];
        char names[MAX_VARIANTS][96];
        int nv = variants(ops, ps, names);
        for (int c = 0; c < NSHAPES; c++)
            for (int pv = 0; pv < nv; pv++) {
                const attn_shape s = tu_make_shape(&shapes[c]);
                attn_params p = ps[pv];
                attn_params_resolve(ops, &s, &p);
                char msg[ATTN_MSG_LEN];
                if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
                double allowed = 0;
                for (int64_t h = 0; h < s.H; h++)
                    for (int64_t i = 0; i < s.T; i++)
                        for (int64_t j = 0; j < s.S; j++)
                            allowed += ops->allows(ops, &s, &p, h, i, j);
                double expect = 4.0 * (double)s.D * (double)s.B * allowed;
                cr_expect_eq(ops->flops(ops, &s, &p), expect,
                             "%s case %d %s: flops %.0f, mask says %.0f", ops->name, c, names[pv],
                             ops->flops(ops, &s, &p), expect);
            }
    }
}

/* The result does not depend on the thread count (each output row is computed by one thread).
 * Causal, or non-causal for a kind defined without a causal mask. */
Test(kinds, threads_do_not_change_the_result)
{
    const tu_shape_case c = {2, 4, 2, 100, 150, 32, true};
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        attn_shape s = tu_make_shape(&c);
        const attn_exec x1 = tu_exec(1), x2 = tu_exec(2);
        char msg[ATTN_MSG_LEN];
        attn_params_resolve(ops, &s, &p);
        if (attn_check(ops, &s, &p, msg, sizeof msg) == ATTN_ENODEF) /* defined without a mask */
            s.causal = false;
        const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
        float *q = tu_random(qn, 1, 1), *k = tu_random(kvn, 1, 2), *v = tu_random(kvn, 1, 3);
        float *o1 = bench_alloc(qn * 4), *o2 = bench_alloc(qn * 4);
        tu_forward(ops, &x1, &s, &p, q, k, v, o1);
        tu_forward(ops, &x2, &s, &p, q, k, v, o2);
        double max_diff = 0;
        for (int64_t e = 0; e < qn; e++) max_diff = tu_max(max_diff, fabs(o1[e] - o2[e]));
        cr_expect_leq(max_diff, 1e-6, "%s: 1 vs 2 threads differ by %g", ops->name, max_diff);
        free(q), free(k), free(v), free(o1), free(o2);
    }
}

/* Workspace never grows with the square of the sequence: on the dense engine it is
 * O(threads·block·D), the same at n = 4096 and n = 65536. */
Test(kinds, dense_workspace_is_independent_of_n)
{
    int dense = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (ops->engine != ATTN_ENGINE_DENSE) continue;
        dense++;
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        const int64_t Hkv = attn_kind_kv_heads(ops, 8, 0);
        attn_shape s = attn_shape_init(1, 8, Hkv, 65536, 65536, 64, false);
        const attn_exec x = tu_exec(2);
        size_t big = ops->workspace_bytes(ops, &x, &s, &p);
        cr_expect_lt(big, (size_t)64 << 20, "%s: workspace at n=65536 is %zu bytes", ops->name,
                     big);
        s.T = s.S = 4096;
        cr_expect_eq(ops->workspace_bytes(ops, &x, &s, &p), big, "%s: workspace grows with n",
                     ops->name);
    }
    cr_expect_gt(dense, 0, "no kind on the dense engine");
}

Test(kinds, shape_checks_refuse_bad_shapes)
{
    char msg[ATTN_MSG_LEN];
    attn_shape s = attn_shape_init(1, 8, 3, 16, 16, 64, false);
    cr_expect_eq(attn_shape_check(&s, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "kv_heads 3 does not divide heads 8") != NULL, "message: %s", msg);
    s = attn_shape_init(1, 8, 8, 0, 16, 64, false);
    cr_expect_eq(attn_shape_check(&s, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "q_len") != NULL, "message: %s", msg);
    s = attn_shape_init(1, 8, 16, 16, 16, 64, false);
    cr_expect_eq(attn_shape_check(&s, msg, sizeof msg), ATTN_EINVAL);
    s = attn_shape_init(1, 8, 8, 16, 16, 64, false);
    cr_expect_eq(attn_shape_check(&s, msg, sizeof msg), ATTN_OK);
}

Test(kinds, params_refuse_bad_values)
{
    const attn_param_table *pt = attn_kind_params(attn_kind_find("full"));
    attn_params p = attn_params_defaults(pt);
    char msg[ATTN_MSG_LEN];
    cr_expect_eq(attn_param_set(pt, &p, "nope", "1", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "has no parameter 'nope'") && strstr(msg, "block_q"), "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "block_q", "abc", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "not a number") != NULL, "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "block_q", "1.5", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "integer") != NULL, "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "block_q", "0", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "out of range") != NULL, "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "block_q", "32", msg, sizeof msg), ATTN_OK);
    cr_expect_eq(p.v[attn_param_index(pt, "block_q")], 32);
    char buf[128];
    attn_params_format(pt, &p, buf, sizeof buf);
    cr_expect(strstr(buf, "block_q=32,") == buf, "formatted: %s", buf);
}

/* A parameter with named choices: set by name or index, recorded by name, validated. */
Test(kinds, params_with_choices)
{
    static const char *const colours[] = {"red", "green", "blue", NULL};
    attn_param_def defs[] = {
        {"colour", "a choice", 1, 0, 2, true, colours},
        {"size", "a number", 4, 1, 8, true, NULL},
    };
    attn_ops ops = *attn_kind_find("full");
    ops.params = (attn_param_table){.owner = "full", .defs = defs, .count = 2};
    const attn_param_table *pt = attn_kind_params(&ops);
    char msg[ATTN_MSG_LEN], buf[128];
    cr_assert_eq(attn_kind_validate(&ops, msg, sizeof msg), ATTN_OK, "%s", msg);
    attn_params p = attn_params_defaults(pt);
    attn_params_format(pt, &p, buf, sizeof buf);
    cr_expect_str_eq(buf, "colour=green,size=4");
    cr_expect_eq(attn_param_set(pt, &p, "colour", "blue", msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(p.v[0], 2);
    cr_expect_eq(attn_param_set(pt, &p, "colour", "0", msg, sizeof msg), ATTN_OK, "%s", msg);
    attn_params_format(pt, &p, buf, sizeof buf);
    cr_expect_str_eq(buf, "colour=red,size=4");
    cr_expect_eq(attn_param_set(pt, &p, "colour", "pink", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "'pink' is not one of red, green, blue") != NULL, "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "colour", "3", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "out of range") != NULL, "%s", msg);
    cr_expect_eq(attn_param_set(pt, &p, "size", "red", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "not a number") != NULL, "%s", msg);
    defs[0].max = 3; /* a range that does not match the 3 choices */
    cr_expect_eq(attn_kind_validate(&ops, msg, sizeof msg), ATTN_EFAIL);
    cr_expect(strstr(msg, "3 choices") != NULL, "%s", msg);
    defs[0].max = 2, defs[0].integer = false;
    cr_expect_eq(attn_kind_validate(&ops, msg, sizeof msg), ATTN_EFAIL);
}

/* Every kind is defined for a plain non-causal prefill at its defaults (ATTN_ENODEF, "not in
 * the kind's definition", is for causal masks, decode ... never for everything). */
Test(kinds, defined_for_plain_prefill)
{
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        attn_shape s = attn_shape_init(1, 4, attn_kind_kv_heads(ops, 4, 0), 64, 64, 16, false);
        attn_params p = tu_params(ops, NULL, &s);
        char msg[ATTN_MSG_LEN];
        cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_OK, "%s: %s", ops->name, msg);
    }
}

/* Weights are inputs: with weights of the caller's (the drawn ones, changed), forward and the
 * float64 reference both use them, and the output differs from the drawn weights' output. */
Test(kinds, weights_are_inputs)
{
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        attn_shape s = attn_shape_init(1, 4, attn_kind_kv_heads(ops, 4, 2), 24, 40, 16, false);
        attn_params p = tu_params(ops, NULL, &s);
        attn_weight w[ATTN_MAX_WEIGHTS];
        const int nw = attn_kind_weights(ops, &s, &p, w);
        if (nw == 0) continue;
        char msg[ATTN_MSG_LEN];
        cr_expect_eq(attn_weights_given(ops, &s, &p, msg, sizeof msg), ATTN_EINVAL, "%s",
                     ops->name);
        float *owned[ATTN_MAX_WEIGHTS];
        attn_params drawn = p;
        cr_assert_eq(attn_weights_draw(ops, &s, &drawn, owned, msg, sizeof msg), ATTN_OK, "%s",
                     msg);
        cr_expect_eq(attn_weights_given(ops, &s, &drawn, msg, sizeof msg), ATTN_OK, "%s", msg);
        float *mine[ATTN_MAX_WEIGHTS] = {0};
        attn_params given = p;
        for (int i = 0; i < nw; i++) {
            const int64_t e = attn_weight_elems(&w[i]);
            float *noise = tu_random(e, 0.3, 40 + (uint64_t)i);
            mine[i] = bench_alloc((size_t)e * sizeof(float));
            for (int64_t x = 0; x < e; x++) mine[i][x] = 0.8f * owned[i][x] + noise[x];
            free(noise);
            given.w[i] = mine[i];
        }
        float *q = tu_random(attn_q_elems(&s), 1.0, 1), *k = tu_random(attn_kv_elems(&s), 1.0, 2);
        float *v = tu_random(attn_kv_elems(&s), 1.0, 3);
        float *o = bench_alloc(attn_q_elems(&s) * 4), *od = bench_alloc(attn_q_elems(&s) * 4);
        const attn_exec x = tu_exec(1);
        cr_assert_eq(tu_forward(ops, &x, &s, &given, q, k, v, o), ATTN_OK, "%s", ops->name);
        cr_assert_eq(tu_forward(ops, &x, &s, &drawn, q, k, v, od), ATTN_OK, "%s", ops->name);
        double *ref = tu_reference(ops, &s, &given, q, k, v);
        const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
        double diff = 0, norm = 0;
        for (int64_t e = 0; e < attn_q_elems(&s); e++)
            diff += (o[e] - od[e]) * (o[e] - od[e]), norm += o[e] * o[e];
        cr_expect(err < 1e-5, "%s with given weights: rel L2 %.3g against float64", ops->name, err);
        cr_expect(sqrt(diff / norm) > 1e-3, "%s ignores the weights it is given", ops->name);
        for (int i = 0; i < nw; i++) free(mine[i]);
        attn_weights_free(owned);
        free(q), free(k), free(v), free(o), free(od), free(ref);
    }
}

static int bad_weights(const attn_ops *self, const attn_shape *s, const attn_params *p,
                       attn_weight *out)
{
    out[0] = (attn_weight){"k", "clashes with the tensor k", 2, {s->D, s->D}};
    return 1;
}

static attn_status draw_nothing(const attn_ops *self, const attn_shape *s, const attn_params *p,
                                float *const *w)
{
    return ATTN_OK;
}

/* The weights table sets both of its slots and weight names never shadow q, k, v, o or the
 * gradients. */
Test(kinds, weight_names_are_validated)
{
    attn_ops ops = *attn_kind_find("full");
    char msg[ATTN_MSG_LEN];
    attn_weight_ops weights = {.list = bad_weights};
    ops.weights = &weights;
    cr_expect_eq(attn_kind_validate(&ops, msg, sizeof msg), ATTN_EFAIL);
    cr_expect(strstr(msg, "both") != NULL, "%s", msg);
    weights.draw = draw_nothing;
    cr_expect_eq(attn_kind_validate(&ops, msg, sizeof msg), ATTN_EFAIL);
    cr_expect(strstr(msg, "'k'") != NULL, "%s", msg);
}
