/*
 * test_backward.c — the backward pass of every kind that has one (attention.h, training slots),
 * generated from the registry: dq, dk, dv against the float64 gradient of the kind's own
 * definition (attn_kind_reference_backward) at odd shapes (T != S, Hkv < H, causal and not, T > S,
 * T = 1, D = 1 and 128) and parameter cases (blocks smaller than the shape, materialize=1, the
 * score modifiers, the block-sparse `small` cases, every linear feature map and chunk sizes), to
 * relative L2 <= 1e-5; forward_train's out equals forward's; threads agree; a central finite
 * difference of the float64 forward reference checks the float64 gradients themselves; kinds
 * without a backward are refused with ATTN_ENODEF and a reason.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "kind_cases.h"
#include "test_util.h"

static const tu_shape_case shapes[] = {
    {1, 2, 2, 13, 13, 16, false}, /* odd T */
    {2, 4, 2, 17, 29, 8, true},   /* T < S causal, GQA, batch */
    {1, 3, 1, 31, 12, 5, true},   /* T > S causal: the first rows see no key; MQA */
    {1, 4, 2, 23, 11, 7, false},  /* T > S */
    {1, 2, 1, 9, 40, 1, false},   /* D = 1 */
    {1, 2, 2, 20, 33, 128, true}, /* D = 128 */
    {1, 4, 4, 1, 50, 16, true},   /* one query */
};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* Extra parameter cases of every kind of an engine (';'-separated), besides the defaults and its
 * `small` cases. */
static const char *extra_cases(const attn_ops *ops)
{
    if (ops->engine == ATTN_ENGINE_DENSE)
        return "block_q=8,block_k=8;block_q=5,block_k=3,alibi=1;materialize=1;"
               "alibi=1,softcap=3;softcap=0.7,block_k=16";
    if (ops->engine == ATTN_ENGINE_BLOCK_SPARSE) return "alibi=1,softcap=2";
    if (strcmp(ops->name, "linear") == 0)
        return "map=relu;map=favor;map=trig;map=elu,chunk=5;map=favor,chunk=3,features=7;"
               "map=relu,chunk=1";
    if (strcmp(ops->name, "sigmoid") == 0)
        return "block_q=8,block_k=8;block_q=5,block_k=3;block_q=1,block_k=1;bias_len=1,bias=2;"
               "bias_len=100000,bias=-3.5";
    return NULL;
}

/* The kind's shape for a case: its own KV heads (mqa: 1) when they divide H. */
static bool kind_shape(const attn_ops *ops, const tu_shape_case *c, attn_shape *s)
{
    *s = tu_make_shape(c);
    s->Hkv = attn_kind_kv_heads(ops, s->H, c->Hkv);
    return s->Hkv >= 1 && s->H % s->Hkv == 0;
}

typedef struct grads {
    float *q, *k, *v, *dout, *out, *dq, *dk, *dv;
    void *saved;
} grads;

static void grads_free(grads *g)
{
    free(g->q), free(g->k), free(g->v), free(g->dout), free(g->out);
    free(g->dq), free(g->dk), free(g->dv), free(g->saved);
}

/* forward_train and backward on x with workspaces of exactly the declared sizes (the
 * sanitizer build catches overruns), the weights drawn from the kind's seed. */
static attn_status run_backward(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                                const attn_params *p, grads *g, double sigma)
{
    const int64_t qn = attn_q_elems(s), kvn = attn_kv_elems(s);
    g->q = tu_random(qn, sigma, 1), g->k = tu_random(kvn, sigma, 2), g->v = tu_random(kvn, 1, 3);
    g->dout = tu_random(qn, 1, 4);
    g->out = bench_alloc((size_t)qn * 4), g->dq = bench_alloc((size_t)qn * 4);
    g->dk = bench_alloc((size_t)kvn * 4), g->dv = bench_alloc((size_t)kvn * 4);
    g->saved = bench_alloc(attn_kind_saved_bytes(ops, s, p) + 1);
    attn_params given = *p;
    float *owned[ATTN_MAX_WEIGHTS];
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(attn_weights_draw(ops, s, &given, owned, msg, sizeof msg), ATTN_OK, "%s", msg);
    void *ws = bench_alloc(ops->workspace_bytes(ops, x, s, &given));
    attn_status st =
        attn_kind_forward_train(ops, x, s, &given, g->q, g->k, g->v, g->out, g->saved, ws);
    free(ws);
    ws = bench_alloc(ops->train->workspace_bytes(ops, x, s, &given));
    if (st == ATTN_OK)
        st = ops->train->backward(ops, x, s, &given, g->q, g->k, g->v, g->out, g->saved, g->dout,
                                  g->dq, g->dk, g->dv, ws);
    free(ws);
    attn_weights_free(owned);
    return st;
}

static void label_of(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                     const char *params, char *buf, size_t len)
{
    snprintf(buf, len, "%s [B=%lld H=%lld Hkv=%lld T=%lld S=%lld D=%lld causal=%d threads=%d %s]",
             ops->name, (long long)s->B, (long long)s->H, (long long)s->Hkv, (long long)s->T,
             (long long)s->S, (long long)s->D, s->causal, x->threads, params);
}

/* Relative L2 error of a against r; a gradient that is exactly 0 (|r| below 1e-9 of |dv| per
 * element: linear at D = 1, whose out does not depend on q) is a cancellation of terms of the
 * other gradients' size: then |a| <= 1e-4 |dv| per element is required and 0 returned. */
static double rel_err(const float *a, const double *r, int64_t n, const double *rv, int64_t nv)
{
    double num = 0, den = 0, dv = 0, norm = 0;
    for (int64_t e = 0; e < n; e++) num += ((double)a[e] - r[e]) * ((double)a[e] - r[e]);
    for (int64_t e = 0; e < n; e++) den += r[e] * r[e], norm += (double)a[e] * a[e];
    for (int64_t e = 0; e < nv; e++) dv += rv[e] * rv[e];
    const double dv_per = dv / (double)nv;
    if (den / (double)n > 1e-18 * dv_per) return sqrt(num / den);
    cr_expect(norm / (double)n <= 1e-8 * dv_per, "a zero gradient came out as %.3g (|dv| %.3g)",
              sqrt(norm / (double)n), sqrt(dv_per));
    return 0;
}

/* dq, dk, dv computed on x against the float64 gradients; returns the worst relative L2 error. */
static double check_gradients(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                              const char *text, double sigma, double tol)
{
    char lab[320], msg[ATTN_MSG_LEN];
    const attn_params p = tu_params(ops, text, s);
    label_of(ops, x, s, text, lab, sizeof lab);
    if (attn_backward_check(ops, s, &p, msg, sizeof msg) != ATTN_OK) return 0; /* not a case */
    grads g = {0};
    cr_assert_eq(run_backward(ops, x, s, &p, &g, sigma), ATTN_OK, "%s: backward failed", lab);
    const int64_t qn = attn_q_elems(s), kvn = attn_kv_elems(s);
    double *rq = malloc((size_t)qn * sizeof *rq), *rk = malloc((size_t)kvn * sizeof *rk);
    double *rv = malloc((size_t)kvn * sizeof *rv);
    cr_assert_eq(attn_kind_reference_backward(ops, s, &p, g.q, g.k, g.v, g.dout, rq, rk, rv),
                 ATTN_OK);
    const double eq = rel_err(g.dq, rq, qn, rv, kvn), ek = rel_err(g.dk, rk, kvn, rv, kvn);
    const double ev = tu_rel_l2(g.dv, rv, kvn);
    cr_expect(eq <= tol && ek <= tol && ev <= tol,
              "%s: rel L2 error dq %.3g, dk %.3g, dv %.3g > %.1g", lab, eq, ek, ev, tol);
    grads_free(&g);
    free(rq), free(rk), free(rv);
    return fmax(eq, fmax(ek, ev));
}

/* Every parameter case of a kind: the defaults, its `small` cases (kind_cases.h), its engine's
 * extra cases. */
static int kind_cases(const attn_ops *ops, char cases[][128], int max)
{
    int n = 0;
    snprintf(cases[n++], 128, "%s", "");
    const char *lists[2] = {tu_cases(ops).small, extra_cases(ops)};
    for (int l = 0; l < 2; l++)
        for (int c = 0; n < max && tu_case(lists[l], c, cases[n], 128); c++) n++;
    return n;
}

Test(backward, every_kind_matches_its_float64_gradient)
{
    int kinds = 0;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        if (!attn_kind_has_backward(ops)) continue;
        kinds++;
        char cases[16][128];
        const int ncases = kind_cases(ops, cases, 16);
        const attn_exec x = tu_exec(2);
        for (int c = 0; c < NSHAPES; c++)
            for (int cn = 0; cn < ncases; cn++) {
                attn_shape s;
                if (kind_shape(ops, &shapes[c], &s))
                    check_gradients(ops, &x, &s, cases[cn], 1, 1e-5);
            }
    }
    cr_expect(kinds >= 11, "only %d kinds have a backward pass", kinds);
}

/* The other kernel sets this machine supports (tu_isa_next; the test above runs the one in
 * force at start): every kind's gradients at two of the shapes above (GQA causal with T < S;
 * D = 128), every parameter case. */
Test(backward, every_isa_matches_the_float64_gradient)
{
    const int few[] = {1, 5};
    for (attn_isa isa = TU_ISA_FIRST; tu_isa_next(&isa);)
        for (int n = 0; n < attn_kind_count(); n++) {
            const attn_ops *ops = attn_kind_at(n);
            if (!attn_kind_has_backward(ops)) continue;
            char cases[16][128];
            const int ncases = kind_cases(ops, cases, 16);
            const attn_exec x = tu_exec(2); /* on isa, in force */
            cr_assert_eq(attn_exec_isa(&x), isa);
            for (int c = 0; c < 2; c++)
                for (int cn = 0; cn < ncases; cn++) {
                    attn_shape s;
                    if (!kind_shape(ops, &shapes[few[c]], &s)) continue;
                    const double err = check_gradients(ops, &x, &s, cases[cn], 1, 1e-5);
                    cr_expect(err <= 1e-5, "isa=%s: %s '%s' shape %d: %.3g", attn_isa_name(isa),
                              ops->name, cases[cn], few[c], err);
                }
        }
}

/* trig with few features: its denominator is a signed sum that comes close to 0 (or to the
 * floor), and the gradients grow like 1/den², so float32 rounding of den is amplified more than in
 * the forward (measured 2.6e-5 at m = 9): 1e-4. */
Test(backward, linear_trig_with_few_features)
{
    const attn_ops *ops = attn_kind_find("linear");
    cr_assert_not_null(ops);
    const attn_exec x = tu_exec(2);
    for (int c = 0; c < NSHAPES; c++) {
        attn_shape s;
        if (kind_shape(ops, &shapes[c], &s)) {
            check_gradients(ops, &x, &s, "map=trig,chunk=4,features=9", 1, 1e-4);
            check_gradients(ops, &x, &s, "map=trig,chunk=4", 1, 1e-4);
            check_gradients(ops, &x, &s, "map=trig,features=1", 1, 1e-4);
        }
    }
}

/* The block-sparse `large` cases (kind_cases.h: several tasks and visits, gathered and strided
 * keys, longer key sets than a visit) at a few hundred rows. */
Test(backward, block_sparse_large_cases)
{
    const tu_shape_case cases[] = {{1, 2, 1, 600, 600, 8, false}, {1, 2, 2, 333, 777, 4, true}};
    const attn_exec x = tu_exec(2);
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        if (!attn_kind_has_backward(ops) || ops->engine != ATTN_ENGINE_BLOCK_SPARSE) continue;
        char text[128];
        for (int c = 0; tu_case(tu_cases(ops).large, c, text, sizeof text); c++)
            for (size_t cn = 0; cn < sizeof cases / sizeof cases[0]; cn++) {
                attn_shape s;
                if (kind_shape(ops, &cases[cn], &s)) check_gradients(ops, &x, &s, text, 1, 1e-5);
            }
    }
}

/* Scores of magnitude ~100 (inputs 10 times unit variance): the saved log-sum-exp keeps the
 * probabilities exact. Softmax kinds only (linear's features overflow differently). */
Test(backward, large_logits)
{
    const tu_shape_case c = {1, 2, 2, 40, 57, 16, true};
    const attn_exec x = tu_exec(2);
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        attn_shape s;
        if (!attn_kind_has_backward(ops) || !ops->allows || !kind_shape(ops, &c, &s)) continue;
        check_gradients(ops, &x, &s, "", 10, 1e-4);
    }
}

/* forward_train writes the same out as forward; 1 and 2 threads give the same gradients (up to
 * the order of the dq additions). */
Test(backward, forward_train_and_threads)
{
    const tu_shape_case c = {2, 4, 2, 70, 90, 16, true};
    const attn_exec x1 = tu_exec(1), x2 = tu_exec(2);
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        attn_shape s;
        if (!attn_kind_has_backward(ops) || !kind_shape(ops, &c, &s)) continue;
        const attn_params p = tu_params(ops, "", &s);
        grads a = {0}, b = {0};
        cr_assert_eq(run_backward(ops, &x1, &s, &p, &a, 1), ATTN_OK);
        cr_assert_eq(run_backward(ops, &x2, &s, &p, &b, 1), ATTN_OK);
        const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
        float *o = bench_alloc((size_t)qn * 4);
        cr_assert_eq(tu_forward(ops, &x1, &s, &p, a.q, a.k, a.v, o), ATTN_OK);
        cr_expect(memcmp(o, a.out, (size_t)qn * 4) == 0, "%s: forward_train's out differs",
                  ops->name);
        double *ref = malloc((size_t)kvn * sizeof *ref);
        for (int64_t e = 0; e < kvn; e++) ref[e] = a.dk[e];
        cr_expect(tu_rel_l2(b.dk, ref, kvn) <= 1e-6, "%s: dk differs with 2 threads", ops->name);
        for (int64_t e = 0; e < qn && e < kvn; e++) ref[e] = a.dq[e];
        cr_expect(tu_rel_l2(b.dq, ref, qn < kvn ? qn : kvn) <= 1e-6,
                  "%s: dq differs with 2 threads", ops->name);
        free(o), free(ref);
        grads_free(&a), grads_free(&b);
    }
}

/* L = Σ dout·out over the float64 forward reference, at a copy of (q, k, v). */
static double loss(const attn_ops *ops, const attn_shape *s, const attn_params *p, const float *q,
                   const float *k, const float *v, const float *dout)
{
    double *ref = tu_reference(ops, s, p, q, k, v), L = 0;
    for (int64_t e = 0; e < attn_q_elems(s); e++) L += ref[e] * (double)dout[e];
    free(ref);
    return L;
}

/* Central differences of the float64 reference against its analytic gradient, at a few entries
 * of q, k and v (the perturbation as float32 represents it). */
static void finite_difference(const attn_ops *ops, const tu_shape_case *c, const char *text)
{
    attn_shape s;
    cr_assert(kind_shape(ops, c, &s));
    const attn_params p = tu_params(ops, text, &s);
    const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
    float *x[3] = {tu_random(qn, 1, 1), tu_random(kvn, 1, 2), tu_random(kvn, 1, 3)};
    float *dout = tu_random(qn, 1, 4);
    double *g[3] = {malloc((size_t)qn * 8), malloc((size_t)kvn * 8), malloc((size_t)kvn * 8)};
    cr_assert_eq(attn_kind_reference_backward(ops, &s, &p, x[0], x[1], x[2], dout, g[0], g[1],
                                              g[2]),
                 ATTN_OK);
    const int64_t sizes[3] = {qn, kvn, kvn};
    for (int t = 0; t < 3; t++) {
        double rms = 0;
        for (int64_t e = 0; e < sizes[t]; e++) rms += g[t][e] * g[t][e];
        rms = sqrt(rms / (double)sizes[t]);
        for (int64_t e = 7 % sizes[t]; e < sizes[t]; e += sizes[t] / 5 + 1) {
            const float x0 = x[t][e];
            const double h = 1.0 / 512;
            x[t][e] = (float)(x0 + h);
            const double up = (double)x[t][e] - x0, Lp = loss(ops, &s, &p, x[0], x[1], x[2], dout);
            x[t][e] = (float)(x0 - h);
            const double dn = (double)x[t][e] - x0, Lm = loss(ops, &s, &p, x[0], x[1], x[2], dout);
            x[t][e] = x0;
            const double fd = (Lp - Lm) / (up - dn);
            cr_expect(fabs(fd - g[t][e]) <= 1e-4 * (fabs(g[t][e]) + rms),
                      "%s %s: d%c[%lld]: finite difference %.9g, analytic %.9g", ops->name, text,
                      "qkv"[t], (long long)e, fd, g[t][e]);
        }
    }
    for (int t = 0; t < 3; t++) free(x[t]), free(g[t]);
    free(dout);
}

Test(backward, float64_gradients_match_finite_differences)
{
    const tu_shape_case causal = {1, 4, 2, 9, 12, 6, true}, cross = {1, 2, 1, 11, 7, 5, false};
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        if (!attn_kind_has_backward(ops)) continue;
        char cases[16][128];
        const int ncases = kind_cases(ops, cases, 16);
        for (int cn = 0; cn < ncases; cn++) {
            finite_difference(ops, &causal, cases[cn]);
            finite_difference(ops, &cross, cases[cn]);
        }
    }
}

Test(backward, kinds_without_one_are_refused_with_a_reason)
{
    const attn_shape s = attn_shape_init(1, 2, 2, 8, 8, 4, false);
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        const attn_params p = tu_params(ops, "", &s);
        char msg[ATTN_MSG_LEN] = "";
        const attn_status st = attn_backward_check(ops, &s, &p, msg, sizeof msg);
        if (attn_kind_has_backward(ops)) {
            cr_expect(st == ATTN_OK || st == ATTN_EINVAL, "%s: %s", ops->name, msg);
            cr_expect_str_empty(attn_kind_no_backward_reason(ops));
            continue;
        }
        cr_expect_eq(st == ATTN_EINVAL ? ATTN_ENODEF : st, ATTN_ENODEF, "%s: status %d", ops->name,
                     st);
        cr_expect(st != ATTN_ENODEF || strstr(msg, "no backward pass"), "%s: %s", ops->name, msg);
        cr_expect(strlen(attn_kind_no_backward_reason(ops)) > 0, "%s: no reason", ops->name);
    }
}
