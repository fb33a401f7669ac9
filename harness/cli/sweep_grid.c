/*
 * sweep_grid.c — the grid of `bench sweep` (sweep_grid.h): the options parsed into axes (lists,
 * ranges, named values), the datasets and their --set variants, --set values given to the kinds
 * or datasets that have the parameter, and every point enumerated, built and checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_suggest.h"
#include "bench_mpi.h"
#include "spec.h"
#include "sweep_grid.h"

#define CAUSAL_AUTO (-1) /* --causal auto: 1, or 0 where the kind is defined without the mask */

void bench_sweep_grid_free(sweep_grid *g)
{
    bench_free_strings(g->kind_names, g->nkinds);
    bench_free_strings(g->dataset_names, g->ndatasets);
    free(g->datasets);
    int_axis *axes[] = {&g->n,    &g->heads, &g->kv_heads, &g->head_dim, &g->batch, &g->causal,
                        &g->mode, &g->q_len, &g->pass,     &g->threads,  &g->isa,   &g->dtype};
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) free(axes[a]->v);
    for (int s = 0; s < g->nsets; s++) bench_free_strings(g->sets[s].values, g->sets[s].n);
}

static attn_status parse_axis(int_axis *ax, const char *what, const char *text, int64_t min,
                              int64_t max, char *msg, size_t msg_len)
{
    ax->name = what;
    return bench_parse_i64_list(text, what, min, max, &ax->v, &ax->n, msg, msg_len);
}

/* --causal auto (one value, CAUSAL_AUTO) or a list of 0 and 1. */
static attn_status parse_causal(int_axis *ax, const char *text, char *msg, size_t msg_len)
{
    if (strcmp(text, "auto") != 0) return parse_axis(ax, "--causal", text, 0, 1, msg, msg_len);
    ax->name = "--causal";
    if (!(ax->v = malloc(sizeof *ax->v)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    ax->v[0] = CAUSAL_AUTO, ax->n = 1;
    return ATTN_OK;
}

/* One named item of a list axis into its value. */
typedef attn_status (*named_value)(const char *text, int64_t *v, char *msg, size_t msg_len);

static attn_status mode_value(const char *text, int64_t *v, char *msg, size_t msg_len)
{
    bool decode = false;
    const attn_status st = bench_parse_mode(text, &decode, msg, msg_len);
    *v = decode;
    return st;
}

static attn_status pass_value(const char *text, int64_t *v, char *msg, size_t msg_len)
{
    bench_pass pass = BENCH_PASS_FORWARD;
    const attn_status st = bench_parse_pass(text, &pass, msg, msg_len);
    *v = pass;
    return st;
}

static attn_status isa_value(const char *text, int64_t *v, char *msg, size_t msg_len)
{
    attn_isa isa = ATTN_ISA_PORTABLE;
    const attn_status st = bench_parse_isa(text, "--isa", &isa, msg, msg_len);
    *v = isa;
    return st;
}

static attn_status dtype_value(const char *text, int64_t *v, char *msg, size_t msg_len)
{
    attn_dtype t = ATTN_F32;
    const attn_status st = bench_parse_dtype(text, &t, msg, msg_len);
    *v = t;
    return st;
}

/* A list of names as an axis of their values: --mode prefill,decode (0 prefill, 1 decode),
 * --pass forward,backward,train (bench_pass). */
static attn_status parse_named(int_axis *ax, const char *what, const char *text, named_value one,
                               char *msg, size_t msg_len)
{
    char **names = NULL;
    int n = 0;
    ax->name = what;
    if (bench_split_list(text, what, &names, &n, msg, msg_len)) return ATTN_EINVAL;
    attn_status st = (ax->v = calloc((size_t)n, sizeof *ax->v)) ? ATTN_OK : ATTN_EFAIL;
    for (int m = 0; !st && m < n; m++) st = one(names[m], &ax->v[m], msg, msg_len);
    ax->n = st ? 0 : n; /* a repeat was refused by bench_split_list */
    bench_free_strings(names, n);
    return st;
}

/* --dataset items: NAME or NAME=PATH. */
static attn_status parse_datasets(sweep_grid *g, char *msg, size_t msg_len)
{
    if (!(g->datasets = calloc((size_t)g->ndatasets, sizeof *g->datasets)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %d datasets", g->ndatasets);
    g->nvariants = g->ndatasets;
    for (int d = 0; d < g->ndatasets; d++)
        if (ds_parse(g->dataset_names[d], &g->datasets[d].ops, &g->datasets[d].params, msg,
                     msg_len))
            return ATTN_EINVAL;
    return ATTN_OK;
}

/* Advance the odometer idx[0..n) over sizes size[0..n) (idx[0] turns fastest); false after the
 * last combination (idx is then back at all zeros). */
static bool odometer_next(int *idx, const int *size, int n)
{
    for (int a = 0; a < n; a++) {
        if (++idx[a] < size[a]) return true;
        idx[a] = 0;
    }
    return false;
}

/* The sizes of the --set axes for a kind or dataset that has parameter s when has[s]: an axis
 * it has not counts 1 (one value: the default). */
static void set_sizes(const sweep_grid *g, const bool *has, int *size)
{
    for (int s = 0; s < g->nsets; s++) size[s] = has[s] ? g->sets[s].n : 1;
}

/* Each --dataset item times the combinations of the --set values of its parameters. */
static attn_status expand_datasets(sweep_grid *g, char *msg, size_t msg_len)
{
    ds_variant *out = NULL;
    int n = 0, cap = 0;
    for (int d = 0; d < g->ndatasets; d++) {
        const ds_variant base = g->datasets[d];
        bool has[MAX_SETS];
        int size[MAX_SETS], idx[MAX_SETS] = {0};
        for (int s = 0; s < g->nsets; s++) has[s] = ds_param_index(base.ops, g->sets[s].name) >= 0;
        set_sizes(g, has, size);
        do {
            if (n == cap) {
                ds_variant *grown = realloc(out, (size_t)(cap = 2 * cap + 8) * sizeof *out);
                if (!grown) {
                    free(out);
                    return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for datasets");
                }
                out = grown;
            }
            out[n] = base;
            for (int s = 0; s < g->nsets; s++)
                if (has[s] && ds_param_set(base.ops, &out[n].params, g->sets[s].name,
                                           g->sets[s].values[idx[s]], msg, msg_len)) {
                    free(out);
                    return ATTN_EINVAL;
                }
            n++;
        } while (odometer_next(idx, size, g->nsets));
    }
    free(g->datasets);
    g->datasets = out;
    g->nvariants = n;
    return ATTN_OK;
}

/* --set NAME=V1,V2: the name must belong to a swept kind or a swept dataset, not to both. */
static attn_status parse_set(sweep_grid *g, const char *text, char *msg, size_t msg_len)
{
    const char *eq = strchr(text, '=');
    param_axis *pa = &g->sets[g->nsets];
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof pa->name) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--set expects NAME=V1,V2,... (got '%s')",
                         text);
    }
    snprintf(pa->name, sizeof pa->name, "%.*s", (int)(eq - text), text);
    for (int s = 0; s < g->nsets; s++)
        if (strcmp(g->sets[s].name, pa->name) == 0) {
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "--set %s given twice: list all values in one --set", pa->name);
        }
    const char *kind = NULL, *dataset = NULL;
    attn_suggest near = attn_suggest_start(pa->name);
    for (int k = 0; k < g->nkinds; k++) {
        const attn_param_table *t = attn_kind_params(attn_kind_find(g->kind_names[k]));
        if (attn_param_index(t, pa->name) >= 0) kind = g->kind_names[k];
        for (int n = 0; n < t->count; n++) attn_suggest_offer(&near, t->defs[n].name);
    }
    for (int d = 0; d < g->ndatasets; d++) {
        const attn_param_table *t = &g->datasets[d].ops->params;
        if (attn_param_index(t, pa->name) >= 0) dataset = g->datasets[d].ops->name;
        for (int n = 0; n < t->count; n++) attn_suggest_offer(&near, t->defs[n].name);
    }
    if (!kind && !dataset) {
        char hint[96];
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--set %s: no swept kind has a parameter '%s', nor has a swept "
                         "dataset (%s)",
                         pa->name, pa->name,
                         attn_suggest_hint(&near, "see bench list, bench datasets", hint,
                                           sizeof hint));
    }
    if (kind && dataset) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--set %s is ambiguous: kind '%s' and dataset '%s' both have a parameter "
                         "'%s'; sweep them in separate runs",
                         pa->name, kind, dataset, pa->name);
    }
    if (bench_split_list(eq + 1, "--set", &pa->values, &pa->n, msg, msg_len)) return ATTN_EINVAL;
    g->nsets++;
    return ATTN_OK;
}

/* The grid axes of one kind's parameter combination, in odometer order: n turns fastest. */
enum {
    AX_N,
    AX_ISA, /* just above n: a series per kernel set, the sets' series side by side */
    AX_THREADS,
    AX_HEAD_DIM,
    AX_KV_HEADS,
    AX_HEADS,
    AX_BATCH,
    AX_Q_LEN,
    AX_CAUSAL,
    AX_PASS,
    AX_DTYPE,
    AX_DATASET,
    AX_MODE,
    NAXES
};

/* Is grid position i of kind ops a point, and not a repeat of an earlier one? */
static bool is_point(const sweep_grid *g, const attn_ops *ops, const int *i)
{
    const bool decode = g->mode.v[i[AX_MODE]] != 0;
    /* a dataset that fixes the shape (file) has one point per kind, mode, causal */
    if (g->datasets[i[AX_DATASET]].ops->shape &&
        (i[AX_BATCH] || i[AX_HEADS] || i[AX_KV_HEADS] || i[AX_HEAD_DIM] || i[AX_N]))
        return false;
    /* decode is causal (the queries are the newest positions) and the only mode with a q_len
     * axis: other combinations would repeat points */
    if ((decode && i[AX_CAUSAL] > 0) || (!decode && i[AX_Q_LEN] > 0)) return false;
    /* kinds that fix their KV heads (mqa) see one value only */
    const int64_t H = g->heads.v[i[AX_HEADS]];
    const int64_t Hkv =
        attn_kind_kv_heads(ops, H, g->kv_heads.n ? g->kv_heads.v[i[AX_KV_HEADS]] : 0);
    for (int gj = 0; gj < i[AX_KV_HEADS]; gj++)
        if (attn_kind_kv_heads(ops, H, g->kv_heads.v[gj]) == Hkv) return false;
    return true;
}

/* Build the point of kind ops with parameters p at grid position i into sp, causal or not
 * (decode: always), and check it (bench_point_check's status; why says what is wrong). */
static attn_status build_point(const sweep_grid *g, const bench_measure_cfg *mc,
                               const attn_ops *ops, const attn_params *p, const int *i, bool causal,
                               bench_point_spec *sp, char *why, size_t why_len)
{
    const ds_variant *dv = &g->datasets[i[AX_DATASET]];
    const bool decode = g->mode.v[i[AX_MODE]] != 0;
    bench_measure_cfg at = *mc; /* the point's threads and kernel set */
    at.threads = (int)g->threads.v[i[AX_THREADS]], at.isa = (attn_isa)g->isa.v[i[AX_ISA]];
    mc = &at;
    *sp = (bench_point_spec){.ops = ops,
                             .params = *p,
                             .dataset = dv->ops,
                             .dataset_params = dv->params,
                             .pass = (bench_pass)g->pass.v[i[AX_PASS]]};
    const bench_shape_req req = {.n = g->n.v[i[AX_N]],
                                 .q_len = decode ? g->q_len.v[i[AX_Q_LEN]] : 0,
                                 .batch = g->batch.v[i[AX_BATCH]],
                                 .heads = g->heads.v[i[AX_HEADS]],
                                 .head_dim = g->head_dim.v[i[AX_HEAD_DIM]],
                                 .kv_heads = g->kv_heads.n ? g->kv_heads.v[i[AX_KV_HEADS]] : 0,
                                 .causal = decode || causal,
                                 .decode = decode,
                                 .dtype = (attn_dtype)g->dtype.v[i[AX_DTYPE]]};
    char where[4200];
    snprintf(where, sizeof where, "--dataset %s=%s", dv->ops->name,
             dv->params.path ? dv->params.path : "");
    if (bench_spec_build(sp, &req, mc, where, ": leave it out (--kinds)", why, why_len))
        return ATTN_EFAIL; /* why is the whole message */
    return bench_point_check(sp, why, why_len);
}

/* Append the point of kind ops with parameters p at grid position i, built and checked. A point
 * outside the kind's definition (ATTN_ENODEF) is left out and counted in out->undefined; with
 * --causal auto, a causal one is first tried without the mask (counted in out->uncausal). */
static attn_status add_point(const sweep_grid *g, const bench_measure_cfg *mc, const attn_ops *ops,
                             const attn_params *p, const int *i, spec_list *out, char *msg,
                             size_t msg_len)
{
    if (out->n == MAX_POINTS)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "the grid has more than %d points: narrow it",
                         MAX_POINTS);
    if (out->n == out->cap) {
        const int64_t cap = out->cap ? 2 * out->cap : 256;
        bench_point_spec *grown = realloc(out->v, (size_t)cap * sizeof *grown);
        if (!grown)
            return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %lld points",
                             (long long)cap);
        out->v = grown, out->cap = cap;
    }
    bench_point_spec *sp = &out->v[out->n];
    const bool decode = g->mode.v[i[AX_MODE]] != 0, autocausal = g->causal.v[i[AX_CAUSAL]] < 0;
    char why[ATTN_MSG_LEN], masked[ATTN_MSG_LEN];
    attn_status st =
        build_point(g, mc, ops, p, i, g->causal.v[i[AX_CAUSAL]] != 0, sp, why, sizeof why);
    if (st == ATTN_ENODEF && autocausal && !decode) {
        snprintf(masked, sizeof masked, "%s", why);
        st = build_point(g, mc, ops, p, i, false, sp, why, sizeof why);
        if (st == ATTN_OK &&
            bench_skips_add(&out->uncausal, ops->name, "causal=0", masked, msg, msg_len))
            return ATTN_EFAIL;
    }
    if (st == ATTN_ENODEF) {
        char what[80];
        snprintf(what, sizeof what, "%s%s%s%s%s",
                 decode ? "decode" : (sp->shape.causal ? "causal=1" : "causal=0"),
                 sp->pass ? " pass=" : "", sp->pass ? bench_pass_name(sp->pass) : "",
                 sp->shape.dtype ? " dtype=" : "",
                 sp->shape.dtype ? attn_dtype_name(sp->shape.dtype) : "");
        return bench_skips_add(&out->undefined, ops->name, what, why, msg, msg_len);
    }
    if (st == ATTN_EFAIL) return attn_fail(ATTN_EINVAL, msg, msg_len, "%s", why);
    if (st)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s n=%lld heads=%lld kv_heads=%lld: %s",
                         ops->name, sp->dataset->name, (long long)sp->shape.S,
                         (long long)sp->shape.H, (long long)sp->shape.Hkv, why);
    out->n++;
    return ATTN_OK;
}

/* The points of kind ops with parameters p: every grid position, the mode turning slowest and n
 * fastest. */
static attn_status add_kind_points(const sweep_grid *g, const bench_measure_cfg *mc,
                                   const attn_ops *ops, const attn_params *p, spec_list *out,
                                   char *msg, size_t msg_len)
{
    int size[NAXES] = {[AX_N] = g->n.n,
                       [AX_ISA] = g->isa.n,
                       [AX_THREADS] = g->threads.n,
                       [AX_HEAD_DIM] = g->head_dim.n,
                       [AX_KV_HEADS] = g->kv_heads.n ? g->kv_heads.n : 1,
                       [AX_HEADS] = g->heads.n,
                       [AX_BATCH] = g->batch.n,
                       [AX_Q_LEN] = g->q_len.n,
                       [AX_CAUSAL] = g->causal.n,
                       [AX_PASS] = g->pass.n,
                       [AX_DTYPE] = g->dtype.n,
                       [AX_DATASET] = g->nvariants,
                       [AX_MODE] = g->mode.n};
    int i[NAXES] = {0};
    for (int a = 0; a < NAXES; a++)
        if (size[a] == 0) return ATTN_OK;
    do {
        if (!is_point(g, ops, i)) continue;
        const attn_status st = add_point(g, mc, ops, p, i, out, msg, msg_len);
        if (st) return st;
    } while (odometer_next(i, size, NAXES));
    return ATTN_OK;
}

/* Every point of the grid, in a fixed order (kinds, their --set combinations, then the grid
 * axes); each one checked, those outside their kind's definition left out (out->undefined). */
attn_status bench_sweep_enumerate(const sweep_grid *g, const bench_measure_cfg *mc, spec_list *list,
                                  char *msg, size_t msg_len)
{
    spec_list out = {0};
    attn_status st = ATTN_OK;
    for (int k = 0; !st && k < g->nkinds; k++) {
        const attn_ops *ops = attn_kind_find(g->kind_names[k]);
        const attn_param_table *pt = attn_kind_params(ops);
        bool has[MAX_SETS];
        int size[MAX_SETS], idx[MAX_SETS] = {0};
        for (int s = 0; s < g->nsets; s++) has[s] = attn_param_index(pt, g->sets[s].name) >= 0;
        set_sizes(g, has, size);
        do {
            attn_params p = attn_params_defaults(pt);
            for (int s = 0; !st && s < g->nsets; s++)
                if (has[s] && attn_param_set(pt, &p, g->sets[s].name, g->sets[s].values[idx[s]],
                                             msg, msg_len))
                    st = ATTN_EINVAL;
            if (!st) st = add_kind_points(g, mc, ops, &p, &out, msg, msg_len);
        } while (!st && odometer_next(idx, size, g->nsets));
    }
    if (st) {
        free(out.v);
        bench_skips_free(&out.undefined);
        bench_skips_free(&out.uncausal);
        return st;
    }
    *list = out;
    if (out.n == 0 && out.undefined.total > 0) {
        if (bench_mpi_rank() == 0) /* every rank has the same grid: one prints */
            bench_skips_print(stderr, &out.undefined, "skipping",
                              "outside their kind's definition");
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "nothing to measure: every point of the grid is outside its kind's "
                         "definition");
    }
    return ATTN_OK;
}

/* --kinds (default: every kind but those measured on request), each one known. */
static attn_status parse_kinds(const sweep_opts *o, sweep_grid *g, char *msg, size_t msg_len)
{
    char all[1024] = "";
    for (int k = 0, w = 0; k < attn_kind_count() && w < (int)sizeof all; k++)
        if (!attn_kind_at(k)->on_request)
            w += snprintf(all + w, sizeof all - (size_t)w, "%s%s", w ? "," : "",
                          attn_kind_at(k)->name);
    if (bench_split_list(o->kinds ? o->kinds : all, "--kinds", &g->kind_names, &g->nkinds, msg,
                         msg_len))
        return ATTN_EINVAL;
    for (int k = 0; k < g->nkinds; k++)
        if (!attn_kind_find(g->kind_names[k]))
            return bench_unknown_kind(g->kind_names[k], "--kinds: ", msg, msg_len);
    return ATTN_OK;
}

/* --threads and --isa as axes (default: mc's one value each); mc->threads becomes the largest
 * thread count (the run's: its yardsticks, its threads column). */
static attn_status parse_machine_axes(const sweep_opts *o, bench_measure_cfg *mc, sweep_grid *g,
                                      char *msg, size_t msg_len)
{
    char one[32];
    snprintf(one, sizeof one, "%d", mc->threads);
    attn_status st =
        parse_axis(&g->threads, "--threads", o->measure.threads ? o->measure.threads : one, 1, 1024,
                   msg, msg_len);
    if (!st)
        st = parse_named(&g->isa, "--isa", o->measure.isa ? o->measure.isa : attn_isa_name(mc->isa),
                         isa_value, msg, msg_len);
    for (int t = 0; !st && t < g->threads.n; t++)
        if (t == 0 || g->threads.v[t] > mc->threads) mc->threads = (int)g->threads.v[t];
    return st;
}

/* --kv-heads: every kind runs with one of the values asked at every --heads, or is refused (mqa
 * has one KV head; a grid of 1,8 measures it at 1). */
static attn_status check_kv_heads(const sweep_grid *g, const char *given, char *msg, size_t msg_len)
{
    for (int h = 0; h < g->heads.n; h++) /* the points' shape check says which does not divide */
        for (int v = 0; v < g->kv_heads.n; v++)
            if (g->heads.v[h] % g->kv_heads.v[v] != 0) return ATTN_OK;
    for (int k = 0; k < g->nkinds; k++) {
        const attn_ops *ops = attn_kind_find(g->kind_names[k]);
        for (int h = 0; h < g->heads.n; h++) {
            const int64_t H = g->heads.v[h];
            bool honoured = false;
            for (int v = 0; v < g->kv_heads.n && !honoured; v++)
                honoured = attn_kind_kv_heads(ops, H, g->kv_heads.v[v]) == g->kv_heads.v[v];
            const int64_t Hkv = attn_kind_kv_heads(ops, H, g->kv_heads.v[0]);
            if (!honoured)
                return attn_fail(ATTN_EINVAL, msg, msg_len,
                                 "--kv-heads %s: %s has %lld KV head%s at --heads %lld, none of "
                                 "those asked: add %lld to --kv-heads, or leave %s out of --kinds",
                                 given, ops->name, (long long)Hkv, Hkv == 1 ? "" : "s",
                                 (long long)H, (long long)Hkv, ops->name);
        }
    }
    return ATTN_OK;
}

/* A shape option when every dataset gives the shape (a file) would not apply: refused. */
static attn_status check_shape_applies(const sweep_opts *o, const sweep_grid *g, char *msg,
                                       size_t msg_len)
{
    for (int d = 0; d < g->nvariants; d++)
        if (!g->datasets[d].ops->shape) return ATTN_OK; /* a generated one takes the options */
    const struct {
        const char *given, *name;
    } opts[] = {{o->n, "--n"},
                {o->heads, "--heads"},
                {o->kv_heads, "--kv-heads"},
                {o->head_dim, "--head-dim"},
                {o->batch, "--batch"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (opts[i].given)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s %s does not apply: every --dataset gives the shape (a file fixes "
                             "B, H, Hkv, S, D): drop %s",
                             opts[i].name, opts[i].given, opts[i].name);
    return ATTN_OK;
}

/* The grid of the options: kinds, datasets, the shape axes, --set values, dataset variants. */
attn_status bench_sweep_parse_grid(const sweep_opts *o, bench_measure_cfg *mc, sweep_grid *g,
                                   char *msg, size_t msg_len)
{
    attn_status st = parse_kinds(o, g, msg, msg_len);
    if (!st)
        st = bench_split_list(o->dataset ? o->dataset : DEFAULT_DATASETS, "--dataset",
                              &g->dataset_names, &g->ndatasets, msg, msg_len);
    if (!st) st = parse_datasets(g, msg, msg_len);
    if (!st) st = parse_axis(&g->n, "--n", o->n ? o->n : DEFAULT_N, 1, INT64_MAX / 2, msg, msg_len);
    if (!st)
        st = parse_named(&g->mode, "--mode", o->mode ? o->mode : "prefill", mode_value, msg,
                         msg_len);
    if (!st && o->q_len && !(g->mode.v[0] || (g->mode.n > 1 && g->mode.v[1])))
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "--q-len applies to decode points only (prefill: q_len = n); add --mode "
                       "decode or prefill,decode");
    if (!st)
        st = parse_axis(&g->q_len, "--q-len", o->q_len ? o->q_len : "1", 1, INT64_MAX / 2, msg,
                        msg_len);
    if (!st)
        st = parse_axis(&g->heads, "--heads", o->heads ? o->heads : "8", 1, 1 << 20, msg, msg_len);
    if (!st && o->kv_heads)
        st = parse_axis(&g->kv_heads, "--kv-heads", o->kv_heads, 1, 1 << 20, msg, msg_len);
    if (!st && o->kv_heads) st = check_kv_heads(g, o->kv_heads, msg, msg_len);
    if (!st)
        st = parse_axis(&g->head_dim, "--head-dim", o->head_dim ? o->head_dim : "64", 1, 1 << 20,
                        msg, msg_len);
    if (!st)
        st = parse_axis(&g->batch, "--batch", o->batch ? o->batch : "1", 1, 1 << 20, msg, msg_len);
    if (!st) st = parse_causal(&g->causal, o->causal ? o->causal : DEFAULT_CAUSAL, msg, msg_len);
    if (!st)
        st = parse_named(&g->pass, "--pass", o->pass ? o->pass : "forward", pass_value, msg,
                         msg_len);
    if (!st)
        st = parse_named(&g->dtype, "--dtype", o->dtype ? o->dtype : "f32", dtype_value, msg,
                         msg_len);
    for (int s = 0; !st && s < o->nset; s++) st = parse_set(g, o->set[s], msg, msg_len);
    if (!st) st = expand_datasets(g, msg, msg_len);
    if (!st) st = check_shape_applies(o, g, msg, msg_len);
    if (!st) st = parse_machine_axes(o, mc, g, msg, msg_len);
    return st;
}

/* Every file dataset of the grid read once: a NaN or Inf in q, k or v is refused before anything
 * is measured (unless --allow-nonfinite). */
attn_status bench_sweep_check_files(const sweep_grid *g, const bench_measure_cfg *mc, char *msg,
                                    size_t msg_len)
{
    if (mc->allow_nonfinite) return ATTN_OK;
    for (int d = 0; d < g->nvariants; d++) {
        const attn_status st =
            bench_dataset_check_finite(g->datasets[d].ops, &g->datasets[d].params, msg, msg_len);
        if (st) return st;
    }
    return ATTN_OK;
}
