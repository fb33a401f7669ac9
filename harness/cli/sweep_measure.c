/*
 * sweep_measure.c — measuring a sweep's points (sweep_measure.h): the hooks bench_sweep_spread
 * calls (measure a point, record it on rank 0, stop), the prediction of a point's time from the
 * previous point of its series (--max-point-time, the ETA), the progress line and the tally.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_mpi.h"
#include "progress.h"
#include "signals.h"
#include "stats.h"
#include "sweep_measure.h"
#include "sweep_mpi.h"
#include "table.h"
#include "yardstick.h"

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
        (long long)sp->shape.D, sp->shape.causal, sp->exec.threads,
        attn_isa_name(attn_exec_isa(&sp->exec)), sp->dataset->name, *dparams ? "(" : "", dparams,
        *dparams ? ")" : "", params);
}

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
           x->causal == y->causal && x->decode == y->decode && a->exec.threads == b->exec.threads &&
           a->exec.ks == b->exec.ks && a->pass == b->pass && x->dtype == y->dtype &&
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
    bool verbose;       /* a line per point whose timings vary, as it is stored */
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
    const attn_status st =
        bench_point_run_steady(sp, &x->points[p], samples, nsamples, NULL, why, sizeof why);
    if (bench_stop_signal()) return;     /* abandoned: record_point will not store it */
    bench_yardstick_fill(&x->points[p]); /* of its (threads, isa), on this host: once each */
    if (st == ATTN_OK) return;
    if (!x->quiet) bench_progress_end(&x->pr);
    if (bench_mpi_size() > 1)
        fprintf(stderr, "bench: rank %d (%s): %s: %s\n", bench_mpi_rank(), bench_mpi_host(), label,
                why);
    else fprintf(stderr, "bench: %s: %s\n", label, why);
}

/* "full local n=1024 causal", "gqa gaussian decode n=4096 bf16": a point named in a closing line
 * (the pass and dtype when not forward and f32). */
static void short_label(const bench_point *pt, char *buf, size_t len)
{
    const bool decode = strcmp(pt->mode, "decode") == 0, forward = strcmp(pt->pass, "forward") == 0;
    snprintf(buf, len, "%s %s%s n=%lld%s%s%s%s%s", pt->kind, pt->dataset, decode ? " decode" : "",
             (long long)pt->kv_len, pt->causal && !decode ? " causal" : "", forward ? "" : " ",
             forward ? "" : pt->pass, strcmp(pt->dtype, "f32") != 0 ? " " : "",
             strcmp(pt->dtype, "f32") != 0 ? pt->dtype : "");
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
    if (bench_timings_vary(samples, nsamples)) {
        if (x->t.noisy < SWEEP_NOISY_NAMED)
            short_label(pt, x->t.noisy_named[x->t.noisy], sizeof x->t.noisy_named[0]);
        x->t.noisy++;
        if (x->verbose && !x->quiet) bench_progress_end(&x->pr);
        if (x->verbose) bench_warn_noisy(pt, samples, nsamples, false);
    }
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
                                      .collective = specs[p].ops->distributed != NULL};
    }
    return items;
}

sweep_tally bench_sweep_measure(const bench_point_spec *specs, bench_point *points, int64_t npoints,
                                int64_t run_id, bench_store *store, bool quiet, bool verbose,
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
                         .verbose = verbose,
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
