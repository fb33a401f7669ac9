/*
 * test_mods.c — the score modifiers alibi and softcap (attention/engines/score_mod.h), generated
 * from the registry: every kind on the dense and block-sparse engines has them; each such kind with
 * alibi=1, softcap=5, softcap=30 and both matches its float64 masked reference on odd shapes
 * (T != S, Hkv < H, causal and not, D = 1 and 128, its small and large cases, dense tilings), its
 * decoded rows equal the last rows of its prefill, and the modifiers do change the output. Also
 * the slopes (Press et al.'s get_slopes), the vector tanh, and kinds without the modifiers.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "kernel_set.h"
#include "kernels.h"
#include "kind_cases.h"
#include "score_mod.h"
#include "test_util.h"

static bool has_mods(const attn_ops *ops)
{
    return attn_param_index(attn_kind_params(ops), "alibi") >= 0 &&
           attn_param_index(attn_kind_params(ops), "softcap") >= 0;
}

/* The modifier settings every kind is checked with. */
static const char *const settings[] = {"alibi=1", "softcap=5", "softcap=30", "alibi=1,softcap=5"};
enum { NSETTINGS = sizeof settings / sizeof settings[0] };

Test(mods, slopes_follow_the_paper)
{
    /* get_slopes(n) of the ALiBi reference code, written out */
    const double h8[] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625};
    for (int h = 0; h < 8; h++) cr_expect_eq(attn_alibi_slope(h, 8), h8[h], "H=8 h=%d", h);
    cr_expect_eq(attn_alibi_slope(0, 1), 1.0 / 256);
    cr_expect_eq(attn_alibi_slope(0, 2), 1.0 / 16);
    cr_expect_eq(attn_alibi_slope(1, 2), 1.0 / 256);
    cr_expect_eq(attn_alibi_slope(2, 3), 0.25); /* H=3: [2^-4, 2^-8] + get_slopes(4)[0::2][:1] */
    /* H=12: the 8 slopes of 8 heads, then every other slope of 16 heads: 2^-0.5, 2^-1.5 ... */
    for (int h = 0; h < 8; h++) cr_expect_eq(attn_alibi_slope(h, 12), h8[h], "H=12 h=%d", h);
    for (int h = 8; h < 12; h++) {
        const double want = pow(2.0, -0.5 - (h - 8));
        cr_expect(fabs(attn_alibi_slope(h, 12) - want) <= 1e-15 * want, "H=12 h=%d: %.17g vs %.17g",
                  h, attn_alibi_slope(h, 12), want);
    }
}

Test(mods, softcap_tanh_is_accurate)
{
    enum { N = 40001 }; /* odd: the scalar tail too */
    const float caps[] = {0.5f, 5.0f, 30.0f, 1e6f};
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        for (int j = 0; j < N; j++) x[j] = -200.0f + 400.0f * (float)j / (N - 1);
        x[N / 2] = 0.0f, x[N / 2 + 1] = 1e-30f;
        memcpy(y, x, N * sizeof *y);
        attn_vsoftcap(attn_ks(), y, N, caps[c]);
        double worst = 0;
        for (int j = 0; j < N; j++) {
            const double want = caps[c] * tanh((double)x[j] / caps[c]);
            const double err = want == 0 ? fabs(y[j]) : fabs(y[j] - want) / fabs(want);
            worst = fmax(worst, err);
        }
        cr_expect_leq(worst, 5e-7, "cap %g: worst relative error %g", caps[c], worst);
    }
    free(x), free(y);
}

/* Every kind on a softmax engine has both modifiers; a kind with none (linear) reads them off. */
Test(mods, softmax_kinds_have_them_and_others_are_unaffected)
{
    int with = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        const bool engine =
            ops->engine == ATTN_ENGINE_DENSE || ops->engine == ATTN_ENGINE_BLOCK_SPARSE;
        cr_expect(!engine || has_mods(ops), "%s runs on a softmax engine without alibi, softcap",
                  ops->name);
        with += has_mods(ops);
        if (has_mods(ops)) continue;
        attn_shape s = attn_shape_init(1, 4, 4, 8, 8, 8, true);
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        for (int n = 0; n < ATTN_MAX_PARAMS; n++) p.v[n] = 1; /* whatever its values */
        const attn_score_mod m = attn_score_mod_of(attn_kind_params(ops), &p, &s);
        cr_expect_not(attn_score_mod_on(&m), "%s has no modifiers but reads some", ops->name);
    }
    cr_expect_geq(with, 10, "only %d kinds have the modifiers", with);
}

/* ops at shape s on x with parameters text (resolved) vs its float64 reference; returns the
 * relative L2 distance of the output from the same kind with parameters base (NULL: not wanted,
 * -1), or -2 when the kind refuses the case. */
static double check_case(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                         const char *text, const char *base, double sigma, const char *what)
{
    attn_params p = tu_params(ops, text, s);
    char msg[ATTN_MSG_LEN];
    if (attn_check(ops, s, &p, msg, sizeof msg) != ATTN_OK) return -2;
    const int64_t qn = attn_q_elems(s), kvn = attn_kv_elems(s);
    float *q = tu_random(qn, sigma, 31), *k = tu_random(kvn, sigma, 32), *v = tu_random(kvn, 1, 33);
    float *o = bench_alloc((size_t)qn * 4);
    cr_assert_eq(tu_forward(ops, x, s, &p, q, k, v, o), ATTN_OK, "%s %s: forward failed", ops->name,
                 text);
    double *ref = tu_reference(ops, s, &p, q, k, v);
    const double err = tu_rel_l2(o, ref, qn);
    cr_expect(err <= 1e-5, "%s %s [%s T=%lld S=%lld H=%lld Hkv=%lld D=%lld causal=%d]: rel L2 %.3g",
              ops->name, text, what, (long long)s->T, (long long)s->S, (long long)s->H,
              (long long)s->Hkv, (long long)s->D, s->causal, err);
    double moved = -1;
    if (base) {
        attn_params pb = tu_params(ops, base, s);
        double *plain = malloc((size_t)qn * sizeof *plain);
        float *ob = bench_alloc((size_t)qn * 4);
        cr_assert_eq(tu_forward(ops, x, s, &pb, q, k, v, ob), ATTN_OK);
        for (int64_t e = 0; e < qn; e++) plain[e] = ob[e];
        moved = tu_rel_l2(o, plain, qn);
        free(plain), free(ob);
    }
    free(q), free(k), free(v), free(o), free(ref);
    return moved;
}

/* "a,b" of two parameter texts (either may be empty or NULL). */
static void join(char *buf, size_t len, const char *a, const char *b)
{
    a = a ? a : "", b = b ? b : "";
    snprintf(buf, len, "%s%s%s", a, *a && *b ? "," : "", b);
}

Test(mods, every_kind_matches_float64_with_modifiers)
{
    const tu_shape_case shapes[] = {
        {1, 4, 2, 33, 70, 16, true},    /* T != S, grouped */
        {2, 4, 1, 70, 33, 8, false},    /* T > S, MQA grouping, batch */
        {1, 3, 3, 37, 37, 1, true},     /* D = 1, H not a power of two */
        {1, 2, 1, 65, 130, 128, false}, /* D = 128 */
        {1, 6, 2, 9, 300, 32, true},    /* few queries, long S; H = 6 (slopes of 4, then of 8) */
    };
    const char *dense_tilings[] = {"block_q=8,block_k=16,split=3", "materialize=1"};
    int ran = 0;
    double moved[NSETTINGS] = {0};
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!has_mods(ops)) continue;
        /* the kind's own cases: defaults, its small cases (sparse), other tilings (dense) */
        const char *cases[8] = {""};
        int nc = 1;
        char small[4][128];
        for (int v = 0; v < 4 && tu_case(tu_cases(ops).small, v, small[v], sizeof small[v]); v++)
            cases[nc++] = small[v];
        for (int t = 0; t < 2 && ops->engine == ATTN_ENGINE_DENSE; t++)
            cases[nc++] = dense_tilings[t];
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
            for (int pc = 0; pc < nc; pc++)
                for (int st = 0; st < NSETTINGS; st++) {
                    /* 2 threads on the first shape (results do not depend on it) */
                    attn_shape s = tu_make_shape(&shapes[c]);
                    const attn_exec x = tu_exec(c == 0 ? 2 : 1);
                    s.Hkv = attn_kind_kv_heads(ops, s.H, s.Hkv);
                    char text[256];
                    join(text, sizeof text, cases[pc], settings[st]);
                    /* sigma 2: scores of std ~4, so softcap=5 bends them; the change the
                     * modifiers make is measured on the kind's defaults */
                    const double d = check_case(ops, &x, &s, text, pc == 0 ? cases[pc] : NULL, 2.0,
                                                "odd shapes");
                    ran += d != -2;
                    moved[st] = fmax(moved[st], d);
                }
    }
    cr_expect_geq(ran, 10 * 5 * NSETTINGS, "only %d cases ran", ran);
    for (int st = 0; st < NSETTINGS; st++) /* not a no-op: the output moved */
        cr_expect_gt(moved[st], 1e-3, "%s moved the output by at most %.3g", settings[st],
                     moved[st]);
}

/* The block-sparse layouts that split into tasks, visits and gathered keys (their large cases,
 * kind_cases.h). */
Test(mods, sparse_large_cases_with_modifiers)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!has_mods(ops) || ops->engine != ATTN_ENGINE_BLOCK_SPARSE) continue;
        char large[128], text[256];
        for (int v = 0; tu_case(tu_cases(ops).large, v, large, sizeof large); v++)
            for (int causal = 0; causal < 2; causal++) {
                const tu_shape_case c = {1, 2, 1, 600, 650, 16, causal};
                const attn_shape s = tu_make_shape(&c);
                const attn_exec x = tu_exec(2);
                join(text, sizeof text, large, "alibi=1,softcap=5");
                check_case(ops, &x, &s, text, NULL, 1.0, "large");
            }
    }
}

/* Large logits (scores ~ 1e2 to 1e3): soft-capped, and ALiBi on top, stay accurate. */
Test(mods, large_logits_with_modifiers)
{
    const tu_shape_case shape = {1, 4, 2, 40, 90, 16, true};
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!has_mods(ops)) continue;
        attn_shape s = tu_make_shape(&shape);
        const attn_exec x = tu_exec(2);
        s.Hkv = attn_kind_kv_heads(ops, s.H, s.Hkv);
        check_case(ops, &x, &s, "softcap=30", NULL, 10.0, "large logits");
        check_case(ops, &x, &s, "alibi=1,softcap=50", NULL, 10.0, "large logits");
    }
}

/* Decoding the newest T positions with the modifiers equals the last T rows of the prefill
 * (positions, and so the ALiBi distances, are aligned at the end). */
static void decode_case(const attn_ops *ops, int64_t H, int64_t Hkv, int64_t S, int64_t T,
                        const char *text)
{
    Hkv = attn_kind_kv_heads(ops, H, Hkv);
    attn_shape pre = attn_shape_init(1, H, Hkv, S, S, 16, true);
    attn_shape dec = attn_shape_init(1, H, Hkv, T, S, 16, true);
    const attn_exec xpre = tu_exec(1), xdec = tu_exec(2); /* results do not depend on it */
    dec.decode = true;
    attn_params pp = tu_params(ops, text, &pre), pd = tu_params(ops, text, &dec);
    char msg[ATTN_MSG_LEN];
    if (attn_check(ops, &pre, &pp, msg, sizeof msg) || attn_check(ops, &dec, &pd, msg, sizeof msg))
        return;
    const int64_t D = 16, qn = attn_q_elems(&pre), kvn = attn_kv_elems(&pre);
    float *q = tu_random(qn, 1, 41), *k = tu_random(kvn, 1, 42), *v = tu_random(kvn, 1, 43);
    float *o = bench_alloc((size_t)qn * 4), *qd = bench_alloc((size_t)(H * T * D) * 4);
    float *od = bench_alloc((size_t)(H * T * D) * 4);
    double *last = malloc((size_t)(H * T * D) * sizeof *last);
    cr_assert_eq(tu_forward(ops, &xpre, &pre, &pp, q, k, v, o), ATTN_OK);
    for (int64_t h = 0; h < H; h++) {
        const int64_t from = (h * S + S - T) * D;
        memcpy(qd + h * T * D, q + from, (size_t)(T * D) * 4);
        for (int64_t e = 0; e < T * D; e++) last[h * T * D + e] = o[from + e];
    }
    cr_assert_eq(tu_forward(ops, &xdec, &dec, &pd, qd, k, v, od), ATTN_OK);
    const double err = tu_rel_l2(od, last, H * T * D);
    cr_expect(err <= 1e-5, "%s %s H=%lld Hkv=%lld S=%lld T=%lld: decode vs prefill rel L2 %.3g",
              ops->name, text, (long long)H, (long long)Hkv, (long long)S, (long long)T, err);
    free(q), free(k), free(v), free(o), free(qd), free(od), free(last);
}

Test(mods, decode_rows_equal_the_last_prefill_rows)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!has_mods(ops)) continue;
        /* the kind's first small case (sparse); key chunks merged, with small tiles (dense) */
        char own[128] = "", text[256];
        if (!tu_case(tu_cases(ops).small, 0, own, sizeof own) && ops->engine == ATTN_ENGINE_DENSE)
            snprintf(own, sizeof own, "block_q=8,block_k=16,split=3");
        for (int st = 0; st < NSETTINGS; st++)
            for (int64_t T = 1; T <= (st == NSETTINGS - 1 ? 3 : 1); T += 2) { /* T=3: both on */
                decode_case(ops, 4, 2, 37, T, settings[st]);
                join(text, sizeof text, own, settings[st]);
                if (*own) decode_case(ops, 6, 0, 101, T, text); /* kind's default KV heads */
            }
    }
}
