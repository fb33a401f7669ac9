/* test_pattern.c — bench pattern's data: the cells its figure draws (report/pattern.h, as
 * bench pattern --data writes them) against the kinds' definitions. Iterates the registry: every
 * kind with a mask predicate, at small odd shapes, causal and not, at its defaults and at the
 * small cases of kind_cases.h, every head; a kind defined without a mask has no cells. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "kind_cases.h"
#include "pattern.h"

/* (T, S) pairs: single cells, odd sizes, T < S and T > S (causal rows that see no key). */
static const int64_t shapes[][2] = {{1, 1},  {1, 7},   {7, 1},   {9, 9},  {13, 7},
                                    {7, 13}, {37, 37}, {41, 23}, {23, 41}};
enum { NSHAPES = sizeof shapes / sizeof shapes[0], HEADS = 3, MAX_CASES = 8 };

/* The kind's parameter cases: its defaults, then each of kind_cases.h's small cases. */
static int cases_of(const attn_ops *ops, attn_params *out)
{
    int n = 0;
    out[n++] = attn_params_defaults(attn_kind_params(ops));
    const char *small = tu_cases(ops).small;
    char text[512];
    snprintf(text, sizeof text, "%s", small ? small : "");
    char *save_case = NULL;
    for (char *c = strtok_r(text, ";", &save_case); c && n < MAX_CASES;
         c = strtok_r(NULL, ";", &save_case)) {
        attn_params p = attn_params_defaults(attn_kind_params(ops));
        char *save_item = NULL;
        for (char *item = strtok_r(c, ",", &save_item); item;
             item = strtok_r(NULL, ",", &save_item)) {
            char *eq = strchr(item, '=');
            cr_assert(eq, "%s: bad case item '%s' in kind_cases.h", ops->name, item);
            *eq = '\0';
            char msg[ATTN_MSG_LEN];
            cr_assert_eq(attn_param_set(attn_kind_params(ops), &p, item, eq + 1, msg, sizeof msg),
                         ATTN_OK, "%s: %s", ops->name, msg);
        }
        out[n++] = p;
    }
    return n;
}

/* The data bench pattern --data writes for one kind, read back: the header's fields and T·S
 * cell counts (malloc'd). */
typedef struct pattern_data {
    char source[16];
    long long T, S, head, computed, repeated;
    int *cells;
} pattern_data;

static pattern_data read_data(bench_pattern_panel *pn, const attn_shape *s, int64_t h)
{
    char *text = NULL, msg[ATTN_MSG_LEN];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    const attn_status st = bench_pattern_write_data(f, pn, 1, s, h, msg, sizeof msg);
    fclose(f);
    cr_assert_eq(st, ATTN_OK, "%s: %s", pn->ops->name, msg);
    pattern_data d = {0};
    char kind[64], params[512];
    int used = 0;
    cr_assert_eq(sscanf(text,
                        "# kind %63s params %511s source %15s T %lld S %lld head %lld computed "
                        "%lld repeated %lld\n%n",
                        kind, params, d.source, &d.T, &d.S, &d.head, &d.computed, &d.repeated,
                        &used),
                 8, "%s: bad header: %.200s", pn->ops->name, text);
    cr_assert_str_eq(kind, pn->ops->name);
    cr_assert(d.T == s->T && d.S == s->S && d.head == h);
    d.cells = malloc((size_t)(d.T * d.S) * sizeof *d.cells);
    const char *c = text + used;
    for (long long i = 0; i < d.T; i++) {
        for (long long j = 0; j < d.S; j++, c++) {
            cr_assert(*c >= '0' && *c <= '9', "%s: row %lld is short", pn->ops->name, i);
            d.cells[i * d.S + j] = *c - '0';
        }
        cr_assert_eq(*c++, '\n', "%s: row %lld is long", pn->ops->name, i);
    }
    cr_assert_eq(*c, '\0', "%s: more rows than T", pn->ops->name);
    free(text);
    return d;
}

/* Every cell the figure's data shows is computed exactly once when the mask allows it and never
 * otherwise: the block-sparse engine's listing (or the mask itself) equals the predicate. */
Test(pattern, cells_drawn_are_the_cells_the_mask_allows)
{
    int kinds = 0;
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!ops->allows) continue;
        kinds++;
        attn_params cases[MAX_CASES];
        const int ncases = cases_of(ops, cases);
        int64_t checked = 0;
        for (int c = 0; c < ncases; c++)
            for (int sh = 0; sh < NSHAPES; sh++)
                for (int causal = 0; causal <= 1; causal++) {
                    attn_shape s =
                        attn_shape_init(1, HEADS, 0, shapes[sh][0], shapes[sh][1], 8, causal);
                    s.Hkv = attn_kind_kv_heads(ops, HEADS, 0);
                    bench_pattern_panel pn = {.ops = ops, .params = cases[c]};
                    attn_params p = cases[c];
                    attn_params_resolve(ops, &s, &p);
                    char msg[ATTN_MSG_LEN];
                    if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
                    for (int64_t h = 0; h < HEADS; h++) {
                        pattern_data d = read_data(&pn, &s, h);
                        cr_expect_str_eq(d.source, ops->cells ? "engine" : "mask");
                        long long allowed = 0, wrong = 0, first_i = -1, first_j = -1;
                        for (int64_t i = 0; i < s.T; i++)
                            for (int64_t j = 0; j < s.S; j++) {
                                const bool a = ops->allows(ops, &s, &p, h, i, j);
                                allowed += a;
                                if (d.cells[i * s.S + j] != (int)a && wrong++ == 0)
                                    first_i = i, first_j = j;
                            }
                        cr_expect_eq(wrong, 0,
                                     "%s case %d T=%lld S=%lld causal=%d head %lld: %lld cells "
                                     "differ from the mask, first (%lld, %lld): drawn %d, allowed "
                                     "%d",
                                     ops->name, c, (long long)s.T, (long long)s.S, causal,
                                     (long long)h, wrong, first_i, first_j,
                                     wrong ? d.cells[first_i * s.S + first_j] : 0,
                                     wrong ? ops->allows(ops, &s, &p, h, first_i, first_j) : 0);
                        cr_expect_eq(d.computed, allowed, "%s: the header's count", ops->name);
                        cr_expect_eq(d.repeated, 0, "%s: a score listed twice", ops->name);
                        free(d.cells);
                        checked++;
                    }
                }
        cr_expect_gt(checked, 0, "%s: no shape checked", ops->name);
    }
    cr_assert_gt(kinds, 0, "no kind has a mask predicate");
}

/* A kind defined by its own reference has no computed set: its data says so and holds no cell. */
Test(pattern, kinds_without_a_mask_have_no_cells)
{
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (ops->allows) continue;
        attn_shape s = attn_shape_init(1, 2, 0, 9, 9, 8, false);
        bench_pattern_panel pn = {.ops = ops,
                                  .params = attn_params_defaults(attn_kind_params(ops))};
        attn_params p = pn.params;
        s.Hkv = attn_kind_kv_heads(ops, 2, 0);
        attn_params_resolve(ops, &s, &p);
        char msg[ATTN_MSG_LEN];
        if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
        pattern_data d = read_data(&pn, &s, 1);
        cr_expect_str_eq(d.source, "none", "%s", ops->name);
        cr_expect_eq(d.computed, 0, "%s", ops->name);
        free(d.cells);
    }
}

/* bench pattern --dataset: a masked kind's weights (probes of its forward) vanish outside the
 * cells it computes, sum to 1 on rows that see a key, and its recalled mass is exact attention's
 * weight on those cells (at most that on a row with cells exact attention gives no weight: a
 * prefix seen both ways under a causal mask). Every masked kind, its small cases, causal and
 * not. */
Test(pattern, weights_follow_the_cells)
{
    const ds_ops *ds = ds_find("gaussian");
    cr_assert(ds);
    const ds_params dsp = ds_params_defaults(ds);
    for (int kn = 0; kn < attn_kind_count(); kn++) {
        const attn_ops *ops = attn_kind_at(kn);
        if (!ops->allows) continue;
        attn_params cases[MAX_CASES];
        const int ncases = cases_of(ops, cases);
        for (int c = 0; c < ncases; c++)
            for (int causal = 0; causal <= 1; causal++) {
                attn_shape s = attn_shape_init(1, 2, 0, 37, 45, 16, causal);
                bench_pattern_panel pn = {.ops = ops, .params = cases[c]};
                char msg[ATTN_MSG_LEN];
                attn_shape ran;
                bench_pattern_panel probe = pn;
                if (bench_pattern_shape(&probe, &s, &ran, msg, sizeof msg) != ATTN_OK) continue;
                bench_pattern_weights_out w;
                bench_pattern_cells cells;
                cr_assert_eq(bench_pattern_weights(&pn, &s, 1, ds, &dsp, 3, &w, msg, sizeof msg),
                             ATTN_OK, "%s: %s", ops->name, msg);
                cr_assert_eq(bench_pattern_cells_of(&probe, &s, 1, &cells, msg, sizeof msg),
                             ATTN_OK, "%s: %s", ops->name, msg);
                for (int64_t i = 0; i < s.T; i++) {
                    double sum = 0, on_cells = 0;
                    bool beyond = false; /* a cell exact attention gives no weight (prefix's
                                            bidirectional prefix under a causal mask) */
                    for (int64_t j = 0; j < s.S; j++) {
                        const double a = w.kind[i * s.S + j];
                        if (!cells.cells[i * s.S + j])
                            cr_expect_eq(a, 0.0,
                                         "%s case %d causal %d: weight %g at (%lld, %lld), "
                                         "a cell it does not compute",
                                         ops->name, c, causal, a, (long long)i, (long long)j);
                        else on_cells += w.exact[i * s.S + j];
                        beyond |= cells.cells[i * s.S + j] && w.exact[i * s.S + j] == 0;
                        sum += a;
                    }
                    if (on_cells > 0)
                        cr_expect_float_eq(sum, 1.0, 1e-4, "%s row %lld: weights sum to %g",
                                           ops->name, (long long)i, sum);
                    /* within exact's keys the kind renormalises exact's weights upwards, so it
                     * recalls all exact puts on its cells; beyond them, at most that */
                    if (!beyond)
                        cr_expect_float_eq(w.recall[i], on_cells, 1e-4,
                                           "%s row %lld: recall %g, exact mass on its cells %g",
                                           ops->name, (long long)i, w.recall[i], on_cells);
                    else
                        cr_expect_leq(w.recall[i], on_cells + 1e-4,
                                      "%s row %lld: recall %g above exact mass on its cells %g",
                                      ops->name, (long long)i, w.recall[i], on_cells);
                }
                bench_pattern_cells_free(&cells);
                bench_pattern_weights_free(&w);
            }
    }
}
