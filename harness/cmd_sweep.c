/*
 * cmd_sweep.c — `bench sweep`: a grid of kinds × parameter values × dataset × causal × batch ×
 * heads × kv_heads × head_dim × n, every point validated before anything is written, then
 * measured and appended (flushed) to a results file, with progress and a closing summary table.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "commands.h"
#include "machine.h"
#include "point.h"
#include "progress.h"
#include "table.h"

enum { MAX_SETS = 8, MAX_POINTS = 100000 };

#define DEFAULT_N "512:8192:x2"
#define DEFAULT_CAUSAL "1"
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
    int_axis n, heads, kv_heads, head_dim, batch, causal, mode, q_len; /* mode: 0 prefill, 1 decode */
    param_axis sets[MAX_SETS];
    int nsets;
} grid;

static void grid_free(grid *g)
{
    bench_free_strings(g->kind_names, g->nkinds);
    bench_free_strings(g->dataset_names, g->ndatasets);
    free(g->datasets);
    int_axis *axes[] = {&g->n,     &g->heads,  &g->kv_heads, &g->head_dim,
                        &g->batch, &g->causal, &g->mode,     &g->q_len};
    for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++) free(axes[a]->v);
    for (int s = 0; s < g->nsets; s++) bench_free_strings(g->sets[s].values, g->sets[s].n);
}

static attn_status parse_axis(int_axis *ax, const char *what, const char *text, int64_t min,
                              int64_t max, char *msg, size_t msg_len)
{
    ax->name = what;
    return bench_parse_i64_list(text, what, min, max, &ax->v, &ax->n, msg, msg_len);
}

/* --mode prefill,decode as an axis of 0 (prefill) and 1 (decode). */
static attn_status parse_modes(int_axis *ax, const char *text, char *msg, size_t msg_len)
{
    char **names = NULL;
    int n = 0;
    ax->name = "--mode";
    if (bench_split_list(text, "--mode", &names, &n, msg, msg_len)) return ATTN_EINVAL;
    attn_status st = (ax->v = calloc((size_t)n, sizeof *ax->v)) ? ATTN_OK : ATTN_EFAIL;
    for (int m = 0; !st && m < n; m++) {
        bool decode = false;
        st = bench_parse_mode(names[m], &decode, msg, msg_len);
        ax->v[m] = decode;
        for (int e = 0; !st && e < m; e++)
            if (ax->v[e] == ax->v[m])
                st = attn_fail(ATTN_EINVAL, msg, msg_len, "--mode: %s given twice", names[m]);
    }
    ax->n = st ? 0 : n;
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

/* Advance the mixed-radix counter idx over the --set axes with has[s]; false after the last
 * combination. */
static bool next_combination(const grid *g, int *idx, const bool *has)
{
    for (int s = 0; s < g->nsets; s++) {
        if (!has[s]) continue;
        if (++idx[s] < g->sets[s].n) return true;
        idx[s] = 0;
    }
    return false;
}

/* Each --dataset item times the combinations of the --set values of its parameters. */
static attn_status expand_datasets(grid *g, char *msg, size_t msg_len)
{
    ds_variant *out = NULL;
    int n = 0, cap = 0;
    for (int d = 0; d < g->ndatasets; d++) {
        const ds_variant base = g->datasets[d];
        bool has[MAX_SETS];
        int idx[MAX_SETS] = {0};
        for (int s = 0; s < g->nsets; s++) has[s] = ds_param_index(base.ops, g->sets[s].name) >= 0;
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
        } while (next_combination(g, idx, has));
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
    for (int k = 0; k < g->nkinds; k++)
        if (attn_param_index(attn_kind_params(attn_kind_find(g->kind_names[k])), pa->name) >= 0)
            kind = g->kind_names[k];
    for (int d = 0; d < g->ndatasets; d++)
        if (ds_param_index(g->datasets[d].ops, pa->name) >= 0) dataset = g->datasets[d].ops->name;
    if (!kind && !dataset) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--set %s: no swept kind has a parameter '%s', nor has a swept "
                         "dataset (see bench list, bench datasets)", pa->name, pa->name);
    }
    if (kind && dataset) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--set %s is ambiguous: kind '%s' and dataset '%s' both have a parameter "
                         "'%s'; sweep them in separate runs", pa->name, kind, dataset, pa->name);
    }
    if (bench_split_list(eq + 1, "--set", &pa->values, &pa->n, msg, msg_len)) return ATTN_EINVAL;
    g->nsets++;
    return ATTN_OK;
}

/* The shape a dataset fixes (file), with its newest T queries (0: all); the kind must run with
 * the data's KV heads. */
static attn_status file_shape(const attn_ops *ops, const ds_variant *dv, attn_shape *s, int64_t T,
                              char *msg, size_t msg_len)
{
    s->T = T;
    if (dv->ops->shape(&dv->params, s, msg, msg_len)) return ATTN_EINVAL;
    const int64_t Hkv = attn_kind_kv_heads(ops, s->H, s->Hkv);
    if (Hkv != s->Hkv)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--dataset %s=%s has %lld KV heads but kind %s "
                         "runs with %lld: leave it out (--kinds)", dv->ops->name, dv->params.path,
                         (long long)s->Hkv, ops->name, (long long)Hkv);
    return ATTN_OK;
}

/* Every point of the grid, in a fixed order; each one checked. */
static attn_status enumerate(const grid *g, const bench_measure_cfg *mc, bench_point_spec **out,
                             int64_t *count, char *msg, size_t msg_len)
{
    int64_t cap = 256, n = 0;
    bench_point_spec *specs = malloc((size_t)cap * sizeof *specs);
    if (!specs) return ATTN_EFAIL;
    for (int ki = 0; ki < g->nkinds; ki++) {
        const attn_ops *ops = attn_kind_find(g->kind_names[ki]);
        int idx[MAX_SETS] = {0}; /* mixed-radix counter over the sets this kind has */
        bool has[MAX_SETS];
        const attn_param_table *pt = attn_kind_params(ops);
        for (int s = 0; s < g->nsets; s++) has[s] = attn_param_index(pt, g->sets[s].name) >= 0;
        for (;;) {
            attn_params p = attn_params_defaults(pt);
            for (int s = 0; s < g->nsets; s++)
                if (has[s] && attn_param_set(pt, &p, g->sets[s].name, g->sets[s].values[idx[s]],
                                             msg, msg_len))
                    goto invalid;
            for (int mi = 0; mi < g->mode.n; mi++)
            for (int di = 0; di < g->nvariants; di++)
            for (int ci = 0; ci < g->causal.n; ci++)
            for (int ti = 0; ti < g->q_len.n; ti++)
            for (int bi = 0; bi < g->batch.n; bi++)
            for (int hi = 0; hi < g->heads.n; hi++)
            for (int gi = 0; gi < (g->kv_heads.n ? g->kv_heads.n : 1); gi++)
            for (int dd = 0; dd < g->head_dim.n; dd++)
            for (int ni = 0; ni < g->n.n; ni++) {
                const bool decode = g->mode.v[mi] != 0;
                const ds_variant *dv = &g->datasets[di];
                /* a dataset that fixes the shape (file) has one point per kind, mode, causal */
                if (dv->ops->shape && (bi || hi || gi || dd || ni)) continue;
                /* decode is causal (the queries are the newest positions) and the only mode with
                 * a q_len axis: other combinations would repeat points */
                if ((decode && ci > 0) || (!decode && ti > 0)) continue;
                const int64_t H = g->heads.v[hi];
                const int64_t Hkv = attn_kind_kv_heads(ops, H, g->kv_heads.n ? g->kv_heads.v[gi] : 0);
                bool repeat = false; /* kinds that fix their KV heads (mqa) see one value only */
                for (int gj = 0; gj < gi; gj++)
                    repeat |= attn_kind_kv_heads(ops, H, g->kv_heads.v[gj]) == Hkv;
                if (repeat) continue;
                if (n == MAX_POINTS) {
                    snprintf(msg, msg_len, "the grid has more than %d points: narrow it",
                             MAX_POINTS);
                    goto invalid;
                }
                if (n == cap) {
                    bench_point_spec *grown = realloc(specs, (size_t)(cap *= 2) * sizeof *specs);
                    if (!grown) goto invalid;
                    specs = grown;
                }
                bench_point_spec *sp = &specs[n++];
                *sp = (bench_point_spec){
                    .ops = ops, .params = p, .dataset = dv->ops, .dataset_params = dv->params,
                    .seed = mc->seed, .timing = mc->timing, .accuracy_rows = mc->accuracy_rows};
                sp->shape = attn_shape_init(g->batch.v[bi], H, Hkv,
                                            decode ? g->q_len.v[ti] : g->n.v[ni], g->n.v[ni],
                                            g->head_dim.v[dd], decode || g->causal.v[ci] != 0);
                if (dv->ops->shape && file_shape(ops, dv, &sp->shape, decode ? g->q_len.v[ti] : 0,
                                                 msg, msg_len))
                    goto invalid;
                sp->shape.decode = decode;
                sp->shape.threads = mc->threads;
                attn_params_resolve(ops, &sp->shape, &sp->params);
                char why[ATTN_MSG_LEN];
                if (bench_point_check(sp, why, sizeof why)) {
                    snprintf(msg, msg_len, "%s %s n=%lld heads=%lld kv_heads=%lld: %s", ops->name,
                             dv->ops->name, (long long)sp->shape.S, (long long)sp->shape.H,
                             (long long)sp->shape.Hkv, why);
                    goto invalid;
                }
            }
            if (!next_combination(g, idx, has)) break;
        }
    }
    *out = specs;
    *count = n;
    return ATTN_OK;
invalid:
    free(specs);
    return ATTN_EINVAL;
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
    double t = runs * sp->ops->flops(&sp->shape, &sp->params) / flops_per_s;
    double floor = (sp->timing.warmup ? sp->timing.warmup_time_s : 0) + sp->timing.min_time_s;
    return t > floor ? t : floor;
}

static void describe(const bench_point_spec *sp, char *buf, size_t len)
{
    char params[160], dparams[160];
    attn_params_format(attn_kind_params(sp->ops), &sp->params, params, sizeof params);
    ds_params_format(sp->dataset, &sp->dataset_params, dparams, sizeof dparams);
    snprintf(buf, len, "%s%s n=%lld B=%lld H=%lld Hkv=%lld D=%lld causal=%d %s%s%s%s %s", sp->ops->name,
             sp->shape.decode ? " decode" : "",
             (long long)sp->shape.S, (long long)sp->shape.B, (long long)sp->shape.H,
             (long long)sp->shape.Hkv, (long long)sp->shape.D, sp->shape.causal,
             sp->dataset->name, *dparams ? "(" : "", dparams, *dparams ? ")" : "", params);
}

int bench_cmd_sweep(int argc, char **argv)
{
    const char *help = NULL, *kinds_s = NULL, *n_s = NULL, *heads_s = NULL, *kvh_s = NULL;
    const char *d_s = NULL, *b_s = NULL, *causal_s = NULL, *dataset_s = NULL, *out_s = NULL;
    const char *quiet = NULL, *set_s[MAX_SETS], *mode_s = NULL, *qlen_s = NULL;
    int nset = 0;
    const char *plots_s = NULL;
    bench_measure_opts mo = {0};
    bench_opt opts[18 + BENCH_MEASURE_NOPTS] = {
        {"--kinds", "LIST", "kinds to sweep, comma-separated (default: every kind)", &kinds_s},
        {"--n", "LIST", "sequence lengths: 512,1024 or ranges 256:8192:x2, 1K:8K:+1K (default "
                        DEFAULT_N ")", &n_s},
        {"--mode", "LIST", "prefill, decode or prefill,decode (default prefill); decode: --q-len "
                           "newest queries against a KV cache of n keys, causal", &mode_s},
        {"--q-len", "LIST", "decode only: new queries per step (default 1)", &qlen_s},
        {"--heads", "LIST", "query heads (default 8)", &heads_s},
        {"--kv-heads", "LIST", "key/value heads, each dividing every --heads (default: = heads)",
         &kvh_s},
        {"--head-dim", "LIST", "head dimensions (default 64)", &d_s},
        {"--batch", "LIST", "batch sizes (default 1)", &b_s},
        {"--causal", "LIST", "0, 1 or 0,1 (default " DEFAULT_CAUSAL ")", &causal_s},
        {"--dataset", "LIST", "datasets, NAME or file=PATH.h5 (default " DEFAULT_DATASETS "; see "
                              "bench datasets)", &dataset_s},
        {"--set", "NAME=V1,V2", "sweep a parameter of the kinds or of the datasets (repeatable); "
                                "those without it ignore it", set_s, &nset, MAX_SETS},
        {"--out", "FILE.h5", "results file; appended to if it exists (default "
                             "results/<UTC time>.h5)", &out_s},
        {"--quiet", NULL, "no progress line and no summary table", &quiet},
        {"--help", NULL, "this help", &help},
        {"--plots", "DIR", "then draw the run's figures into DIR (as bench plot does; with no "
                           "options at all, into plots/)", &plots_s},
    };
    int nopts = 15;
    bench_measure_opt_table(&mo, opts + nopts);
    nopts += BENCH_MEASURE_NOPTS;
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 0, &npos, "sweep", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench sweep [options]",
            "Measures every point of a grid (kinds x parameter values x mode x dataset x causal x\n"
            "batch x heads x kv_heads x head_dim x n) and appends one row per point to an HDF5 results\n"
            "file, flushed as each point ends. With no options: every kind, n = " DEFAULT_N ",\n"
            "causal, 8 heads of dim 64, datasets " DEFAULT_DATASETS " (about 3 minutes on 2\n"
            "cores), then its figures are drawn into plots/.\n"
            "A file dataset (--dataset file=qkv.h5) fixes the shape: --n, --heads, --kv-heads,\n"
            "--head-dim and --batch do not apply to its points (decode: its --q-len newest queries).\n"
            "Example: bench sweep --kinds full --n 1K:16K:x2 --causal 1 --out full.h5",
            opts, nopts);
        return 0;
    }

    bench_measure_cfg mc;
    grid g = {0};
    bench_point_spec *specs = NULL;
    int64_t npoints = 0;
    attn_status st = bench_measure_parse(&mo, &mc, msg, sizeof msg);
    if (!st) {
        char all[1024] = "";
        for (int k = 0, w = 0; k < attn_kind_count() && w < (int)sizeof all; k++)
            w += snprintf(all + w, sizeof all - (size_t)w, "%s%s", k ? "," : "", attn_kind_at(k)->name);
        st = bench_split_list(kinds_s ? kinds_s : all, "--kinds", &g.kind_names, &g.nkinds, msg,
                              sizeof msg);
    }
    for (int k = 0; !st && k < g.nkinds; k++)
        if (!attn_kind_find(g.kind_names[k])) {
            snprintf(msg, sizeof msg, "--kinds: unknown kind '%s' (see bench list)", g.kind_names[k]);
            st = ATTN_EINVAL;
        }
    if (!st)
        st = bench_split_list(dataset_s ? dataset_s : DEFAULT_DATASETS, "--dataset",
                              &g.dataset_names, &g.ndatasets, msg, sizeof msg);
    if (!st) st = parse_datasets(&g, msg, sizeof msg);
    if (!st) st = parse_axis(&g.n, "--n", n_s ? n_s : DEFAULT_N, 1, INT64_MAX / 2, msg, sizeof msg);
    if (!st) st = parse_modes(&g.mode, mode_s ? mode_s : "prefill", msg, sizeof msg);
    if (!st) st = parse_axis(&g.q_len, "--q-len", qlen_s ? qlen_s : "1", 1, INT64_MAX / 2, msg, sizeof msg);
    if (!st) st = parse_axis(&g.heads, "--heads", heads_s ? heads_s : "8", 1, 1 << 20, msg, sizeof msg);
    if (!st && kvh_s) st = parse_axis(&g.kv_heads, "--kv-heads", kvh_s, 1, 1 << 20, msg, sizeof msg);
    if (!st) st = parse_axis(&g.head_dim, "--head-dim", d_s ? d_s : "64", 1, 1 << 20, msg, sizeof msg);
    if (!st) st = parse_axis(&g.batch, "--batch", b_s ? b_s : "1", 1, 1 << 20, msg, sizeof msg);
    if (!st)
        st = parse_axis(&g.causal, "--causal", causal_s ? causal_s : DEFAULT_CAUSAL, 0, 1, msg,
                        sizeof msg);
    for (int s = 0; !st && s < nset; s++) st = parse_set(&g, set_s[s], msg, sizeof msg);
    if (!st) st = expand_datasets(&g, msg, sizeof msg);
    if (!st) st = enumerate(&g, &mc, &specs, &npoints, msg, sizeof msg);
    bench_point *points = NULL;
    if (!st && !(points = calloc((size_t)npoints, sizeof *points)))
        st = attn_fail(ATTN_EFAIL, msg, sizeof msg, "out of memory for %lld points", (long long)npoints);
    char out_path[4096];
    if (!st && out_s) snprintf(out_path, sizeof out_path, "%s", out_s);
    if (!st && !out_s) st = default_out(out_path, sizeof out_path, msg, sizeof msg);
    bench_store *store = NULL;
    if (!st) st = bench_check_writable(out_path, "--out", msg, sizeof msg);
    if (!st) st = bench_store_open(out_path, &store, msg, sizeof msg);
    if (st) {
        grid_free(&g);
        free(points);
        free(specs);
        return bench_fail(st, msg);
    }

    /* the run: machine facts and the sgemm yardstick, then every point */
    if (!quiet) fprintf(stderr, "bench: measuring the yardsticks: OpenBLAS sgemm (2048^3, %d threads) and memory read bandwidth...\n", mc.threads);
    bench_run run = bench_new_run(argc, argv, &mc);
    if (bench_store_begin_run(store, &run, msg, sizeof msg)) {
        bench_store_close(store);
        grid_free(&g);
        free(points);
        free(specs);
        return bench_fail(ATTN_EFAIL, msg);
    }

    bench_progress pr = bench_progress_start(npoints);
    int failed = 0, noisy = 0, store_failed = 0;
    double timed_flops = 0, timed_s = 0; /* the rate seen so far, for the ETA */
    for (int64_t p = 0; p < npoints && !store_failed; p++) {
        char label[256];
        describe(&specs[p], label, sizeof label);
        double eta = NAN;
        if (timed_s > 0) {
            eta = 0;
            for (int64_t r = p; r < npoints; r++) eta += predict_s(&specs[r], timed_flops / timed_s);
        }
        if (!quiet) bench_progress_point(&pr, p + 1, label, eta);
        double *samples = NULL;
        int64_t nsamples = 0;
        char why[ATTN_MSG_LEN];
        if (bench_point_run(&specs[p], NULL, NULL, NULL, &points[p], &samples, &nsamples, NULL,
                            why, sizeof why) != ATTN_OK) {
            failed++;
            if (!quiet) bench_progress_end(&pr);
            fprintf(stderr, "bench: %s: %s\n", label, why);
        }
        for (int64_t r = 0; r < nsamples; r++) timed_s += samples[r];
        if (nsamples) timed_flops += points[p].flops * (double)nsamples;
        points[p].run_id = run.run_id;
        if (bench_store_add_point(store, &points[p], samples, nsamples, msg, sizeof msg)) store_failed = 1;
        free(samples);
        if (!quiet && points[p].time_cv > 0.10) bench_progress_end(&pr);
        if (!quiet) noisy += bench_warn_noisy(&points[p], false);
    }
    if (!quiet) bench_progress_end(&pr);
    bench_store_close(store);
    grid_free(&g); /* the points' file paths pointed into it */
    if (store_failed) {
        free(points);
        free(specs);
        return bench_fail(ATTN_EFAIL, msg);
    }
    if (!quiet) {
        printf("run %lld: sgemm %.1f GFLOP/s on %d threads; %s\n", (long long)run.run_id,
               run.sgemm_gflops, mc.threads, run.cpu_model);
        const bool retrieval = bench_table_has_retrieval(points, npoints);
        bench_table_header(stdout, retrieval);
        for (int64_t p = 0; p < npoints; p++)
            bench_table_row(stdout, &points[p], run.sgemm_gflops, retrieval);
    }
    printf("results: %s (run %lld, %lld points%s)\n", out_path, (long long)run.run_id,
           (long long)npoints, failed ? ", some failed: see status/message" : "");
    if (noisy)
        fprintf(stderr, "bench: %d point(s) had CV > 10%%: their medians are less certain; to "
                "steady them, " BENCH_NOISE_FIX ".\n", noisy);
    free(points);
    free(specs);
    /* the run's figures: asked for with --plots, and always after the no-options sweep */
    if (plots_s || argc == 2) {
        char plot_dir[4096];
        if (plots_s) snprintf(plot_dir, sizeof plot_dir, "%s", plots_s);
        else bench_default_plot_dir(plot_dir, sizeof plot_dir);
        if (bench_plot_results(out_path, run.run_id, plot_dir, "png", NULL, msg, sizeof msg)) {
            fprintf(stderr, "bench: no plots: %s (the results are saved: bench plot %s)\n", msg,
                    out_path);
            return 1;
        }
    }
    return failed ? 1 : 0;
}
