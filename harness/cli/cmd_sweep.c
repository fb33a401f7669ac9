/*
 * cmd_sweep.c — `bench sweep`: a grid of kinds × parameter values × dataset × causal × batch ×
 * heads × kv_heads × head_dim × threads × kernel set (isa) × n, every point validated before
 * anything is written, then measured and appended (flushed) to a results file, with progress and a
 * closing summary table.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attn_suggest.h"
#include "bench_mpi.h"
#include "commands.h"
#include "machine.h"
#include "point.h"
#include "progress.h"
#include "signals.h"
#include "skips.h"
#include "spec.h"
#include "sweep_mpi.h"
#include "table.h"
#include "yardstick.h"

enum { MAX_SETS = 8, MAX_POINTS = 100000 };

#define DEFAULT_N "512:8192:x2"
#define DEFAULT_CAUSAL "auto"
#define CAUSAL_AUTO (-1) /* --causal auto: 1, or 0 where the kind is defined without the mask */
/* With the default --n, a point predicted to take longer (seconds) is skipped: see
 * over_budget. */
#define DEFAULT_MAX_POINT_TIME "4"
#define DEFAULT_DATASETS "gaussian,local,needle"

typedef struct int_axis {
    const char *name;
    int64_t *v;
    int n;
} int_axis;

typedef struct param_axis {
    char name[64];
    char **values;
    int n;
} param_axis;

/* A dataset with one combination of its --set values. */
typedef struct ds_variant {
    const ds_ops *ops;
    ds_params params;
} ds_variant;

typedef struct grid {
    char **kind_names, **dataset_names; /* dataset_names hold the file paths the points use */
    int nkinds, ndatasets;
    ds_variant *datasets; /* one per --dataset item, then (expand_datasets) one per variant */
    int nvariants;
    int_axis n, heads, kv_heads, head_dim, batch, causal, q_len;
    int_axis mode;         /* 0 prefill, 1 decode */
    int_axis pass;         /* bench_pass values */
    int_axis threads, isa; /* --threads (OpenMP threads per point), --isa (attn_isa values) */
    int_axis dtype;        /* attn_dtype values */
    param_axis sets[MAX_SETS];
    int nsets;
} grid;

static void grid_free(grid *g)
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
static attn_status parse_datasets(grid *g, char *msg, size_t msg_len)
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
static void set_sizes(const grid *g, const bool *has, int *size)
{
    for (int s = 0; s < g->nsets; s++) size[s] = has[s] ? g->sets[s].n : 1;
}

/* Each --dataset item times the combinations of the --set values of its parameters. */
static attn_status expand_datasets(grid *g, char *msg, size_t msg_len)
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
static attn_status parse_set(grid *g, const char *text, char *msg, size_t msg_len)
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

/* The points found so far; those left out (outside their kind's definition), and those --causal
 * auto measures without the mask. */
typedef struct spec_list {
    bench_point_spec *v;
    int64_t n, cap;
    bench_skips undefined, uncausal;
} spec_list;

/* Is grid position i of kind ops a point, and not a repeat of an earlier one? */
static bool is_point(const grid *g, const attn_ops *ops, const int *i)
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
static attn_status build_point(const grid *g, const bench_measure_cfg *mc, const attn_ops *ops,
                               const attn_params *p, const int *i, bool causal,
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
static attn_status add_point(const grid *g, const bench_measure_cfg *mc, const attn_ops *ops,
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
static attn_status add_kind_points(const grid *g, const bench_measure_cfg *mc, const attn_ops *ops,
                                   const attn_params *p, spec_list *out, char *msg, size_t msg_len)
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
static attn_status enumerate(const grid *g, const bench_measure_cfg *mc, spec_list *list, char *msg,
                             size_t msg_len)
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

/* results/<UTC timestamp>.h5 under $ATTNBENCH_HOME (set by ./bench) or the current directory. */
static attn_status default_out(char *path, size_t len, char *msg, size_t msg_len)
{
    const char *home = getenv("ATTNBENCH_HOME");
    char dir[3072];
    snprintf(dir, sizeof dir, "%s/results", home && *home ? home : ".");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot create %s: %s (use --out FILE.h5)", dir,
                         strerror(errno));
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(path, len, "%s/%s.h5", dir, stamp);
    return ATTN_OK;
}

/* Seconds a point should take at flops_per_s: its warm-up and timed runs, or the time minimums
 * when those are longer. Accuracy and allocation are left out (small beside them). */
static double predict_s(const bench_point_spec *sp, double flops_per_s)
{
    double runs = sp->timing.warmup + sp->timing.min_reps;
    double t = runs * bench_point_flops(sp) / flops_per_s;
    double floor = (sp->timing.warmup ? sp->timing.warmup_time_s : 0) + sp->timing.min_time_s;
    return t > floor ? t : floor;
}

static void describe(const bench_point_spec *sp, char *buf, size_t len)
{
    char params[160], dparams[160];
    attn_params_format(attn_kind_params(sp->ops), &sp->params, params, sizeof params);
    ds_params_format(sp->dataset, &sp->dataset_params, dparams, sizeof dparams);
    snprintf(
        buf, len,
        "%s%s%s%s%s%s n=%lld B=%lld H=%lld Hkv=%lld D=%lld causal=%d threads=%d %s %s%s%s%s %s",
        sp->ops->name, sp->shape.decode ? " decode" : "", sp->pass ? " " : "",
        sp->pass ? bench_pass_name(sp->pass) : "", sp->shape.dtype ? " " : "",
        sp->shape.dtype ? attn_dtype_name(sp->shape.dtype) : "", (long long)sp->shape.S,
        (long long)sp->shape.B, (long long)sp->shape.H, (long long)sp->shape.Hkv,
        (long long)sp->shape.D, sp->shape.causal, sp->shape.threads, attn_isa_name(sp->isa),
        sp->dataset->name, *dparams ? "(" : "", dparams, *dparams ? ")" : "", params);
}

/* The options of bench sweep as text (NULL: not given). */
typedef struct sweep_opts {
    const char *help, *kinds, *n, *mode, *q_len, *heads, *kv_heads, *head_dim, *batch, *causal;
    const char *max_point_time, *pass;
    const char *dtype;
    const char *dataset, *out, *quiet, *plots;
    const char *set[MAX_SETS];
    int nset;
    bench_measure_opts measure;
} sweep_opts;

static const char sweep_description[] =
    "Measures every point of a grid (kinds x parameter values x mode x dataset x causal x pass x\n"
    "batch x heads x kv_heads x head_dim x threads x isa x n) and appends one row per point to\n"
    "an HDF5 results file, flushed as each point ends. With no options: every kind,\n"
    "n = " DEFAULT_N ", causal (--causal auto: non-causal for a kind defined without the\n"
    "mask), 8 heads of dim 64, datasets " DEFAULT_DATASETS
    ", points predicted over " DEFAULT_MAX_POINT_TIME " s skipped\n"
    "(--max-point-time; under 3 minutes on 2 cores), then its figures are drawn into plots/.\n"
    "Points outside their kind's definition (a causal mask for a kind defined without one)\n"
    "are skipped and listed once before measuring.\n"
    "A file dataset (--dataset file=qkv.h5) fixes the shape: --n, --heads, --kv-heads,\n"
    "--head-dim and --batch do not apply to its points (decode: its --q-len newest queries).\n"
    "Example: bench sweep --kinds full --n 1K:16K:x2 --causal 1 --out full.h5";

/* --kinds (default: every kind), each one known. */
static attn_status parse_kinds(const sweep_opts *o, grid *g, char *msg, size_t msg_len)
{
    char all[1024] = "";
    for (int k = 0, w = 0; k < attn_kind_count() && w < (int)sizeof all; k++)
        w += snprintf(all + w, sizeof all - (size_t)w, "%s%s", k ? "," : "", attn_kind_at(k)->name);
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
static attn_status parse_machine_axes(const sweep_opts *o, bench_measure_cfg *mc, grid *g,
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

/* The grid of the options: kinds, datasets, the shape axes, --set values, dataset variants. */
static attn_status parse_grid(const sweep_opts *o, bench_measure_cfg *mc, grid *g, char *msg,
                              size_t msg_len)
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
    if (!st) st = parse_machine_axes(o, mc, g, msg, msg_len);
    return st;
}

/* The results file (--out, or results/<time>.h5) into path, checked and opened. */
static attn_status open_results(const sweep_opts *o, char *path, size_t len, bench_store **store,
                                char *msg, size_t msg_len)
{
    attn_status st = ATTN_OK;
    if (o->out) snprintf(path, len, "%s", o->out);
    else st = default_out(path, len, msg, msg_len);
    if (!st) st = bench_check_writable(path, "--out", msg, msg_len);
    if (!st) st = bench_store_open(path, store, msg, msg_len);
    return st;
}

/* Every file dataset of the grid read once: a NaN or Inf in q, k or v is refused before anything
 * is measured (unless --allow-nonfinite). */
static attn_status check_file_datasets(const grid *g, const bench_measure_cfg *mc, char *msg,
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

/* The figures' directory (--plots DIR; plots/ for the no-options sweep), checked before the sweep:
 * an existing directory we can write into, or one we can create. */
static attn_status check_plot_dir(const sweep_opts *o, bool draws, char *msg, size_t msg_len)
{
    if (!draws) return ATTN_OK;
    char dir[4096];
    if (o->plots) snprintf(dir, sizeof dir, "%s", o->plots);
    else bench_default_plot_dir(dir, sizeof dir);
    if (!*dir) return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots: empty directory name");
    /* the nearest existing ancestor (plot makes the missing ones) must be a writable directory */
    char at[4096];
    snprintf(at, sizeof at, "%s", dir);
    struct stat sb;
    while (stat(at, &sb) != 0) {
        char *slash = strrchr(at, '/');
        while (slash && slash > at && slash[1] == '\0') *slash = '\0', slash = strrchr(at, '/');
        if (!slash) snprintf(at, sizeof at, ".");
        else if (slash == at) at[1] = '\0';
        else *slash = '\0';
    }
    if (!S_ISDIR(sb.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots %s: %s is not a directory", dir, at);
    if (access(at, W_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--plots %s: cannot write into %s (%s)", dir,
                         at, strerror(errno));
    return ATTN_OK;
}

/* What happened to a sweep's points. */
typedef struct sweep_tally {
    int failed, noisy; /* points that failed; that warned of noisy timings */
    int nonfinite;     /* points whose output held a NaN or Inf */
    bool store_failed; /* a point could not be stored (msg says why): the sweep stopped */
    bench_skips over;  /* points skipped as over the time budget (status "skipped") */
} sweep_tally;

/* Points a and b of one series: the same but for n (q_len and kv_len). */
static bool same_series(const bench_point_spec *a, const bench_point_spec *b)
{
    const attn_shape *x = &a->shape, *y = &b->shape;
    const bool same_path = a->dataset_params.path == b->dataset_params.path ||
                           (a->dataset_params.path && b->dataset_params.path &&
                            strcmp(a->dataset_params.path, b->dataset_params.path) == 0);
    return a->ops == b->ops && memcmp(a->params.v, b->params.v, sizeof a->params.v) == 0 &&
           a->dataset == b->dataset &&
           memcmp(a->dataset_params.v, b->dataset_params.v, sizeof a->dataset_params.v) == 0 &&
           same_path && x->B == y->B && x->H == y->H && x->Hkv == y->Hkv && x->D == y->D &&
           x->causal == y->causal && x->decode == y->decode && x->threads == y->threads &&
           a->isa == b->isa && a->pass == b->pass && x->dtype == y->dtype &&
           (x->decode ? x->T == y->T : true);
}

/* Would point p take longer than budget_s? Predicted (predict_s) at the rate of the previous
 * point of its series, measured just before it at a smaller n (n turns fastest): that point's
 * flops over its median time. A point after one skipped so is skipped too; a series' first point
 * never is, so every kind is measured. */
static bool over_budget(const bench_point_spec *specs, const bench_point *points, int64_t p,
                        double budget_s)
{
    if (!(budget_s > 0) || p == 0 || !same_series(&specs[p - 1], &specs[p])) return false;
    const bench_point *prev = &points[p - 1];
    if (strcmp(prev->status, "skipped") == 0) return true;
    if (strcmp(prev->status, "ok") != 0 || !(prev->time_median_s > 0) || !(prev->flops > 0))
        return false;
    return predict_s(&specs[p], prev->flops / prev->time_median_s) > budget_s;
}

/* A sweep's measuring and recording (the hooks of bench_sweep_spread, sweep_mpi.h). */
typedef struct sweep_ctx {
    const bench_point_spec *specs;
    bench_point *points;
    int64_t npoints, run_id;
    bench_store *store; /* rank 0 only */
    bool quiet;         /* no progress: --quiet, and on every rank but 0 */
    double budget_s;    /* --max-point-time (0: none) */
    bench_progress pr;
    int64_t recorded;            /* points recorded so far (rank 0) */
    bool *done;                  /* which (for the ETA) */
    double timed_flops, timed_s; /* the rate seen so far, for the ETA */
    sweep_tally t;               /* rank 0 */
    char msg[ATTN_MSG_LEN];      /* why the store failed */
} sweep_ctx;

/* Seconds the points not recorded yet should take at the rate seen so far, over the ranks; NaN
 * before any. */
static double eta_s(const sweep_ctx *x)
{
    if (!(x->timed_s > 0)) return NAN;
    double eta = 0;
    for (int64_t r = 0; r < x->npoints; r++)
        if (!x->done[r]) eta += predict_s(&x->specs[r], x->timed_flops / x->timed_s);
    return eta / bench_mpi_size();
}

/* Measure point p into points[p]; a point over the time budget (over_budget) is only marked
 * "skipped". */
static void measure_point(void *ctx, int64_t p, double **samples, int64_t *nsamples)
{
    sweep_ctx *x = ctx;
    const bench_point_spec *sp = &x->specs[p];
    if (over_budget(x->specs, x->points, p, x->budget_s)) {
        snprintf(x->points[p].status, sizeof x->points[p].status, "skipped");
        return;
    }
    char label[256], why[ATTN_MSG_LEN];
    describe(sp, label, sizeof label);
    if (!x->quiet) bench_progress_point(&x->pr, x->recorded + 1, label, eta_s(x));
    const attn_status st = bench_point_run(sp, NULL, NULL, NULL, &x->points[p], samples, nsamples,
                                           NULL, why, sizeof why);
    if (bench_stop_signal()) return;     /* abandoned: record_point will not store it */
    bench_yardstick_fill(&x->points[p]); /* of its (threads, isa), on this host: once each */
    if (st == ATTN_OK) return;
    if (!x->quiet) bench_progress_end(&x->pr);
    if (bench_mpi_size() > 1)
        fprintf(stderr, "bench: rank %d (%s): %s: %s\n", bench_mpi_rank(), bench_mpi_host(), label,
                why);
    else fprintf(stderr, "bench: %s: %s\n", label, why);
}

/* Rank 0: store point p (measured here or on another rank) and count it; false when it could not
 * be stored (x->msg says why). A skipped point is listed, not stored. */
static bool record_point(void *ctx, int64_t p, const double *samples, int64_t nsamples)
{
    sweep_ctx *x = ctx;
    if (bench_stop_signal()) return false; /* abandoned: its repetitions may have been cut short */
    bench_point *pt = &x->points[p];
    x->done[p] = true;
    x->recorded++;
    if (strcmp(pt->status, "skipped") == 0) {
        char what[64], why[ATTN_MSG_LEN];
        snprintf(what, sizeof what, "n=%lld", (long long)x->specs[p].shape.S);
        snprintf(why, sizeof why,
                 "predicted over --max-point-time %g s from the time at the previous n",
                 x->budget_s);
        x->t.store_failed = bench_skips_add(&x->t.over, x->specs[p].ops->name, what, why, x->msg,
                                            sizeof x->msg) != ATTN_OK;
        return !x->t.store_failed;
    }
    if (!x->quiet && pt->rank > 0) { /* measured on another rank: it ends now */
        char label[256], ranked[300];
        describe(&x->specs[p], label, sizeof label);
        snprintf(ranked, sizeof ranked, "%s (rank %d)", label, pt->rank);
        bench_progress_point(&x->pr, x->recorded, ranked, eta_s(x));
    }
    x->t.failed += strcmp(pt->status, "error") == 0;
    for (int64_t r = 0; r < nsamples; r++) x->timed_s += samples[r];
    if (nsamples) x->timed_flops += pt->flops * (double)nsamples;
    pt->run_id = x->run_id;
    if (bench_store_add_point(x->store, pt, samples, nsamples, x->msg, sizeof x->msg))
        x->t.store_failed = true;
    if (!x->quiet && pt->time_cv > 0.10) bench_progress_end(&x->pr);
    if (!x->quiet) x->t.noisy += bench_warn_noisy(pt, false);
    if (strcmp(pt->status, "nonfinite") == 0) {
        if (!x->quiet) bench_progress_end(&x->pr);
        x->t.nonfinite += bench_warn_nonfinite(pt);
    }
    return !x->t.store_failed;
}

static bool stopping(void *ctx)
{
    const sweep_ctx *x = ctx;
    return x->t.store_failed || bench_stop_signal(); /* SIGINT, SIGTERM: signals.h */
}

/* What bench_sweep_spread needs of each point: its series, predicted cost, collective kind. */
static bench_sweep_item *sweep_items(const bench_point_spec *specs, int64_t n)
{
    bench_sweep_item *items = malloc((size_t)(n > 0 ? n : 1) * sizeof *items);
    for (int64_t p = 0, series = 0; items && p < n; p++) {
        series += p > 0 && !same_series(&specs[p - 1], &specs[p]);
        items[p] = (bench_sweep_item){.series = series,
                                      .cost_s = predict_s(&specs[p], 1e10), /* relative only */
                                      .collective = specs[p].ops->collective};
    }
    return items;
}

/* Measure every point into points[] (spread over the ranks under mpirun) and store it on rank 0
 * (run run_id), with progress unless quiet; a point over budget_s (over_budget; 0: none) is
 * skipped: status "skipped", not stored. The tally is rank 0's (the others': empty). A stop
 * request (SIGINT, SIGTERM: signals.h) ends the loop; the point in progress is not stored. */
static sweep_tally measure_points(const bench_point_spec *specs, bench_point *points,
                                  int64_t npoints, int64_t run_id, bench_store *store, bool quiet,
                                  double budget_s, char *msg, size_t msg_len)
{
    sweep_ctx *x = calloc(1, sizeof *x);
    bench_sweep_item *items = sweep_items(specs, npoints);
    sweep_tally t = {0};
    if (x) x->done = calloc((size_t)npoints + 1, sizeof *x->done);
    bool speak; /* every rank spreads, or none */
    if (bench_mpi_agree(x && x->done && items ? ATTN_OK : ATTN_EFAIL, &speak) != ATTN_OK) {
        t.store_failed = true;
        snprintf(msg, msg_len, "out of memory for %lld points", (long long)npoints);
    } else {
        *x = (sweep_ctx){.specs = specs,
                         .points = points,
                         .npoints = npoints,
                         .run_id = run_id,
                         .store = store,
                         .quiet = quiet,
                         .budget_s = budget_s,
                         .pr = bench_progress_start(npoints),
                         .done = x->done};
        const bench_sweep_hooks hooks = {x, measure_point, record_point, stopping};
        bench_sweep_spread(items, points, npoints, &hooks);
        if (!quiet) bench_progress_end(&x->pr);
        t = x->t;
        if (t.store_failed) snprintf(msg, msg_len, "%s", x->msg);
    }
    if (x) free(x->done);
    free(x);
    free(items);
    return t;
}

/* The closing lines: the summary table (unless quiet), where the results went, noise. */
static void print_summary(const bench_run *run, const bench_host *hosts, int nhosts,
                          const bench_point *points, int64_t npoints, const char *out_path,
                          bool quiet, const sweep_tally *t)
{
    if (!quiet) {
        if (bench_mpi_size() == 1)
            printf("run %lld: sgemm %.1f GFLOP/s on %d threads; %s\n", (long long)run->run_id,
                   run->sgemm_gflops, run->threads, run->cpu_model);
        else
            printf("run %lld: %d ranks on %d host%s\n", (long long)run->run_id, bench_mpi_size(),
                   nhosts, nhosts == 1 ? "" : "s");
        for (int h = 0; bench_mpi_size() > 1 && h < nhosts; h++)
            printf("  %s (ranks %d, yardsticks by rank %d): sgemm %.1f GFLOP/s on %d threads; %s\n",
                   hosts[h].host, hosts[h].ranks, hosts[h].rank, hosts[h].sgemm_gflops,
                   hosts[h].threads, hosts[h].cpu_model);
        const bench_table_cols cols = bench_table_columns(points, npoints);
        bench_table_header(stdout, &cols);
        for (int64_t p = 0; p < npoints; p++) /* %sgemm: against the sgemm of the point's host */
            if (strcmp(points[p].status, "skipped") != 0)
                bench_table_row(stdout, &points[p],
                                bench_sweep_host_sgemm(hosts, nhosts, points[p].host), &cols);
    }
    printf("results: %s (run %lld, %lld points%s%s)\n", out_path, (long long)run->run_id,
           (long long)(npoints - t->over.total),
           t->failed ? ", some failed: see status/message" : "",
           t->nonfinite ? ", some with non-finite outputs: status nonfinite" : "");
    bench_skips_print(
        stderr, &t->over, "skipped",
        "over the time budget (give --n, or raise --max-point-time, to measure them)");
    if (t->noisy)
        fprintf(stderr,
                "bench: %d point(s) had CV > 10%%: their medians are less certain; to "
                "steady them, " BENCH_NOISE_FIX ".\n",
                t->noisy);
}

/* The run's figures into --plots DIR (or plots/<file>-run<ID>); 0, or 1 when they cannot be drawn.
 */
static int draw_plots(const char *plots, const char *out_path, int64_t run_id)
{
    char msg[ATTN_MSG_LEN]; /* no --plots: plots/<file>-run<ID> */
    if (bench_plot_results(out_path, run_id, plots, "png", NULL, NULL, msg, sizeof msg)) {
        fprintf(stderr, "bench: no plots: %s (the results are saved: bench plot %s)\n", msg,
                out_path);
        return 1;
    }
    return 0;
}

/* Rank 0: the run and its hosts into store. */
static attn_status begin_run(bench_store *store, bench_run *run, bench_host *hosts, int nhosts,
                             char *msg, size_t msg_len)
{
    attn_status st = bench_store_begin_run(store, run, msg, msg_len);
    for (int h = 0; !st && h < nhosts; h++)
        st = bench_store_add_host(store, &hosts[h], msg, msg_len);
    return st;
}

/* A signal stopped the sweep: mark its run interrupted, close the file, say what was kept (one
 * line). The exit status: 128 + the signal. */
static int interrupted(bench_store *store, const char *out_path)
{
    const int sig = bench_stop_signal();
    if (!store) return 128 + sig; /* a rank other than 0: rank 0 speaks */
    int64_t kept = 0, planned = bench_store_planned(store);
    const int64_t run_id = bench_store_interrupt(store, sig, &kept);
    if (run_id > 0)
        fprintf(stderr, "bench: interrupted (SIG%s): %lld of %lld points kept in %s (run %lld)\n",
                bench_signal_name(sig), (long long)kept, (long long)planned, out_path,
                (long long)run_id);
    else
        fprintf(stderr,
                "bench: interrupted (SIG%s) before the first point: nothing written to %s\n",
                bench_signal_name(sig), out_path);
    return 128 + sig;
}

/* The run (machine facts, the yardsticks of every host), every point into store (rank 0; closed
 * here), the summary, then the figures: asked for with --plots, and always after the no-options
 * sweep. The exit status (under mpirun: rank 0's is the sweep's, the other ranks' 128 + a signal
 * or 0). */
static int sweep(int argc, char **argv, const sweep_opts *o, const bench_measure_cfg *mc,
                 const spec_list *list, double budget_s, bench_point *points, bench_store *store,
                 const char *out_path)
{
    char msg[ATTN_MSG_LEN];
    const bool lead = bench_mpi_rank() == 0, quiet = o->quiet != NULL || !lead;
    if (lead) {
        bench_skips_print(stderr, &list->undefined, "skipping", "outside their kind's definition");
        bench_skips_print(stderr, &list->uncausal, "--causal auto: measuring",
                          "without the causal mask (their kind is defined without one)");
    }
    if (!quiet)
        fprintf(stderr,
                "bench: measuring the yardsticks: OpenBLAS sgemm (2048^3, %d threads) and "
                "memory read bandwidth (FMA peaks, other thread counts: as points need them)...\n",
                mc->threads);
    bench_signals_catch(); /* SIGINT, SIGTERM: stop after the point in progress, abandoned */
    bench_run run;
    bench_host *hosts = NULL;
    int nhosts = 0;
    attn_status st = bench_sweep_machines(argc, argv, mc, &run, &hosts, &nhosts, msg, sizeof msg);
    if (!st && bench_mpi_size() == 1) /* the other threads and the peaks: as points need them */
        bench_yardstick_seed(run.threads, run.sgemm_gflops, run.mem_bandwidth_gbs);
    if (bench_mpi_size() == 1 && bench_stop_signal()) { /* ranks would part: the loop stops them */
        free(hosts);
        return interrupted(store, out_path);
    }
    if (lead) bench_store_set_planned(store, list->n);
    if (!st && lead) st = begin_run(store, &run, hosts, nhosts, msg, sizeof msg);
    bool speak;
    if ((st = bench_mpi_agree(st, &speak)) != ATTN_OK) {
        bench_store_close(store);
        free(hosts);
        return bench_fail(st, speak ? msg : NULL);
    }
    sweep_tally t = measure_points(list->v, points, list->n, run.run_id, store, quiet, budget_s,
                                   msg, sizeof msg);
    if (bench_stop_signal() && !t.store_failed) {
        bench_skips_free(&t.over);
        free(hosts);
        return interrupted(store, out_path);
    }
    bench_store_close(store);
    int exit_code = t.failed || (t.nonfinite && !mc->allow_nonfinite) ? 1 : 0;
    if (!lead) exit_code = 0; /* rank 0 speaks for the sweep */
    else if (t.store_failed) exit_code = bench_fail(ATTN_EFAIL, msg);
    else print_summary(&run, hosts, nhosts, points, list->n, out_path, quiet, &t);
    if (lead && !t.store_failed && (o->plots || argc == 2) &&
        draw_plots(o->plots, out_path, run.run_id))
        exit_code = 1;
    bench_skips_free(&t.over);
    free(hosts);
    return exit_code;
}

int bench_cmd_sweep(int argc, char **argv)
{
    sweep_opts o = {0};
    const bench_opt opts[] = {
        {"--kinds", "LIST", "kinds to sweep, comma-separated (default: every kind)", &o.kinds},
        {"--n", "LIST",
         "sequence lengths: 512,1024 or ranges 256:8192:x2, 1K:8K:+1K (default " DEFAULT_N ")",
         &o.n},
        {"--mode", "LIST",
         "prefill, decode or prefill,decode (default prefill); decode: --q-len "
         "newest queries against a KV cache of n keys, causal",
         &o.mode},
        {"--q-len", "LIST", "decode only: new queries per step (default 1)", &o.q_len},
        {"--heads", "LIST", "query heads (default 8)", &o.heads},
        {"--kv-heads", "LIST", "key/value heads, each dividing every --heads (default: = heads)",
         &o.kv_heads},
        {"--head-dim", "LIST", "head dimensions (default 64)", &o.head_dim},
        {"--batch", "LIST", "batch sizes (default 1)", &o.batch},
        {"--causal", "LIST",
         "0, 1, 0,1 or auto: 1, or 0 for a kind defined without a causal mask (default " DEFAULT_CAUSAL
         "); a point outside its kind's definition is skipped and listed",
         &o.causal},
        {"--pass", "LIST",
         "forward, backward, train or a list (default forward): backward times dq, dk, dv "
         "given dout; train forward and backward together; a kind without a backward is "
         "skipped and listed",
         &o.pass},
        {"--dtype", "LIST",
         "storage of q, k, v: f32, bf16, f16 or a list (default f32); a kind that takes f32 "
         "only is skipped and listed",
         &o.dtype},
        {"--dataset", "LIST",
         "datasets, NAME or file=PATH.h5 (default " DEFAULT_DATASETS "; see "
         "bench datasets)",
         &o.dataset},
        {"--set", "NAME=V1,V2",
         "sweep a parameter of the kinds or of the datasets (repeatable); "
         "those without it ignore it",
         o.set, &o.nset, BENCH_COUNT(o.set)},
        {"--out", "FILE.h5",
         "results file; appended to if it exists (default "
         "results/<UTC time>.h5)",
         &o.out},
        {"--max-point-time", "SEC",
         "skip a point predicted (from its previous n) to take longer, listing it (default " DEFAULT_MAX_POINT_TIME
         " with the default --n, else 0: none)",
         &o.max_point_time},
        {"--quiet", NULL, "no progress line and no summary table", &o.quiet},
        {"--help", NULL, "this help", &o.help},
        {"--plots", "DIR",
         "then draw the run's figures into DIR (as bench plot does; with no "
         "options at all, into plots/<file>-run<ID>/)",
         &o.plots},
        BENCH_MEASURE_OPTS(&o.measure),
    };
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    const bool lead = bench_mpi_rank() == 0; /* under mpirun: every rank parses alike */
    if (bench_parse_opts(argc, argv, 2, opts, BENCH_COUNT(opts), pos, 0, &npos, "sweep", msg,
                         sizeof msg))
        return bench_fail(ATTN_EINVAL, lead ? msg : NULL);
    if (o.help) {
        if (lead)
            bench_print_help("bench sweep [options]", sweep_description, opts, BENCH_COUNT(opts));
        return 0;
    }
    bench_measure_cfg mc;
    grid g = {0};
    spec_list list = {0};
    bench_point *points = NULL;
    char out_path[4096];
    bench_store *store = NULL;
    double budget_s = 0;
    bench_measure_opts one = o.measure; /* --threads and --isa are axes: parse_machine_axes */
    one.threads = one.isa = NULL;
    attn_status st = bench_measure_parse(&one, &mc, msg, sizeof msg);
    if (!st && !o.measure.threads) mc.threads = bench_mpi_default_threads(mc.threads);
    if (!st && (o.max_point_time || !o.n))
        st = bench_parse_double(o.max_point_time ? o.max_point_time : DEFAULT_MAX_POINT_TIME,
                                "--max-point-time", 0, 1e9, &budget_s, msg, sizeof msg);
    if (!st) st = parse_grid(&o, &mc, &g, msg, sizeof msg);
    if (!st) st = enumerate(&g, &mc, &list, msg, sizeof msg);
    if (!st) st = check_plot_dir(&o, o.plots || argc == 2, msg, sizeof msg);
    if (!st) st = check_file_datasets(&g, &mc, msg, sizeof msg);
    if (!st && !(points = calloc((size_t)list.n + 1, sizeof *points)))
        st = attn_fail(ATTN_EFAIL, msg, sizeof msg, "out of memory for %lld points",
                       (long long)list.n);
    bool speak; /* a failure every rank shares is printed once, by rank 0 */
    if ((st = bench_mpi_agree(st, &speak)) == ATTN_OK) { /* rank 0 alone opens the results */
        if (lead) st = open_results(&o, out_path, sizeof out_path, &store, msg, sizeof msg);
        st = bench_mpi_agree(st, &speak);
    }
    const int exit_code = st ? bench_fail(st, speak ? msg : NULL)
                             : sweep(argc, argv, &o, &mc, &list, budget_s, points, store, out_path);
    grid_free(&g); /* after the points: their file paths point into it */
    free(points);
    free(list.v);
    bench_skips_free(&list.undefined);
    bench_skips_free(&list.uncausal);
    return exit_code;
}
