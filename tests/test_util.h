/* test_util.h — helpers the test files share: test shapes, seeded random tensors, exact-size
 * workspaces, running a kind's forward, relative L2 error. Header-only (static) so each test links
 * alone. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "attn_isa.h"
#include "memory.h"
#include "rng.h"

/* A test shape: sizes and the causal flag (the threads a test runs it on are its attn_exec's:
 * tu_exec). */
typedef struct tu_shape_case {
    int64_t B, H, Hkv, T, S, D;
    bool causal;
} tu_shape_case;

static inline attn_shape tu_make_shape(const tu_shape_case *c)
{
    return attn_shape_init(c->B, c->H, c->Hkv, c->T, c->S, c->D, c->causal);
}

/* An execution context of `threads` threads on the kernel set in force (attn_exec_init): build it
 * after putting an ISA in force (tu_isa_next) so that its kernel set is that ISA's. */
static inline attn_exec tu_exec(int threads) { return attn_exec_init(threads); }

/* Case n (from 0) of a ';'-separated list of parameter cases (kind_cases.h) into buf; false
 * past the last case (or when list is NULL). */
static inline bool tu_case(const char *list, int n, char *buf, size_t len)
{
    for (; list && n > 0; n--) {
        list = strchr(list, ';');
        if (list) list++;
    }
    if (!list) return false;
    const char *end = strchr(list, ';');
    snprintf(buf, len, "%.*s", end ? (int)(end - list) : (int)strlen(list), list);
    return true;
}

/* Parameters of a kind from "name=value,..." (NULL or "": the defaults), resolved for s. */
static inline attn_params tu_params(const attn_ops *ops, const char *text, const attn_shape *s)
{
    attn_params p = attn_params_defaults(attn_kind_params(ops));
    char buf[256], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", text ? text : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        cr_assert_not_null(eq, "%s: bad parameter text %s", ops->name, tok);
        *eq = '\0';
        cr_assert_eq(attn_param_set(attn_kind_params(ops), &p, tok, eq + 1, msg, sizeof msg),
                     ATTN_OK, "%s", msg);
    }
    attn_params_resolve(ops, s, &p);
    return p;
}

/* The generic tests run on the kernel set the process starts with (ATTN_ISA, else the best:
 * attn_isa.h); the accuracy tests of kinds also run the other sets this machine supports:
 *     for (attn_isa isa = TU_ISA_FIRST; tu_isa_next(&isa);) { ... }
 * puts each supported ISA but the starting one in force in turn; after the last, the starting
 * one is in force again. */
#define TU_ISA_FIRST ATTN_ISA_COUNT
static inline attn_isa tu_isa_start(void)
{
    char msg[ATTN_MSG_LEN];
    attn_isa start = attn_isa_best();
    (void)attn_isa_from_env(&start, msg, sizeof msg);
    return start;
}
static inline bool tu_isa_next(attn_isa *isa)
{
    char msg[ATTN_MSG_LEN];
    const attn_isa start = tu_isa_start();
    for (int i = *isa == TU_ISA_FIRST ? 0 : (int)*isa + 1; i < ATTN_ISA_COUNT; i++)
        if (attn_isa_supported((attn_isa)i) && (attn_isa)i != start) {
            cr_assert_eq(attn_isa_select((attn_isa)i, msg, sizeof msg), ATTN_OK, "%s", msg);
            *isa = (attn_isa)i;
            return true;
        }
    cr_assert_eq(attn_isa_select(start, msg, sizeof msg), ATTN_OK, "%s", msg);
    return false;
}

static inline float *tu_random(int64_t n, double sigma, uint64_t seed)
{
    float *x = bench_alloc((size_t)n * sizeof(float));
    ds_rng r = ds_rng_stream(seed, 77);
    for (int64_t e = 0; e < n; e++) x[e] = (float)(sigma * ds_rng_normal(&r));
    return x;
}

/* Run ops->forward on x with a workspace of exactly the declared size (sanitizers catch
 * overruns), the kind's weights drawn from its seed where p gives none (as the harness does). */
static inline attn_status tu_forward(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                                     const attn_params *p, const float *q, const float *k,
                                     const float *v, float *out)
{
    attn_params given = *p;
    float *owned[ATTN_MAX_WEIGHTS];
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(attn_weights_draw(ops, s, &given, owned, msg, sizeof msg), ATTN_OK, "%s", msg);
    void *ws = bench_alloc(ops->workspace_bytes(ops, x, s, &given));
    attn_status st = ops->forward(ops, x, s, &given, q, k, v, out, ws);
    free(ws);
    attn_weights_free(owned);
    return st;
}

/* The kind's own float64 definition on every row. */
static inline double *tu_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                   const float *q, const float *k, const float *v)
{
    int64_t rows = s->B * s->H * s->T;
    int64_t *idx = malloc((size_t)rows * sizeof *idx);
    double *ref = malloc((size_t)(rows * s->D) * sizeof *ref);
    for (int64_t r = 0; r < rows; r++) idx[r] = r;
    attn_kind_reference(ops, s, p, q, k, v, idx, rows, ref);
    free(idx);
    return ref;
}

/* max(a, b) by a comparison, for running maxima in loops: GCC 12.2 for arm64 crashes (internal
 * compiler error in vect_transform_reduction, -O3) vectorising an fmax reduction over floats
 * widened to double; tools/cross_check.sh compiles the tests for arm64. NaN b: a. */
static inline double tu_max(double a, double b) { return b > a ? b : a; }

static inline double tu_rel_l2(const float *o, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t e = 0; e < n; e++) {
        num += ((double)o[e] - ref[e]) * ((double)o[e] - ref[e]);
        den += ref[e] * ref[e];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#endif
