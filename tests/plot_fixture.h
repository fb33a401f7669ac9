/*
 * plot_fixture.h — synthetic results files for test_plot.c, written through the results store:
 * exact power laws times a little seeded noise, so figures and fits have known answers.
 *
 * Run 1 (pf_write_scaling): n = 256..8192 (x2), H=8, D=64, prefill causal 0 and 1, plus decode:
 *   full     block_q=256,...  time = 4·D·H·n² / 60 GFLOP/s (half when causal); workspace fixed
 *   window   window=64, 256   time = 4·D·H·n·w / 25 GFLOP/s: faster than full above n = 2.4·w,
 *                             so always (w=64) or from n = 614.4 (w=256); rel_err 0.05·sqrt(n/w);
 *                             also on the needle dataset with retrieval = min(1, 4w/n)
 *   lowrank  features=64      time = 4·D·f·H·n / 20 GFLOP/s; workspace 4·H·n·f bytes (varies)
 *   every point's RSS grows by its q, k, v, out (4·4·H·n·D bytes) plus its workspace; its 3
 *   repetitions are 1.05 t, t, 0.96 t (stored in /samples in that order).
 * Run 2 (pf_write_heads, kv false): n = 1024, full (MHA) and mqa (Hkv = 1) at H = 4, 8, 16.
 * Run 3 (kv true): n = 1024, H = 8: full at Hkv = 1, 2, 4, 8 and mqa. Time ∝ H (and a little Hkv).
 * pf_write_kinds (a file of its own): a default-like sweep, n = 256..2048, 7 kinds (mqa with
 *   Hkv = 1, the others 8) × causal 0 and 1 × datasets gaussian, local, needle (retrieval on
 *   needle only): 14 series per dataset, more than one figure should hold.
 * Also (bench_env.h) the CLI runner both suites use: bench_env (stdout, stderr into out_text,
 * err_text) and have_gnuplot.
 */
#ifndef PLOT_FIXTURE_H
#define PLOT_FIXTURE_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_env.h"
#include "results.h"
#include "rng.h"

typedef struct pf_point {
    const char *kind, *params, *dataset, *mode;
    int causal;
    int64_t heads, kv_heads, n, q_len;
    double time_s, flops, rel_err, retrieval;
    int64_t workspace;
    int retrieval_queries;
    const char *dtype; /* NULL: none recorded (a file before the column) */
} pf_point;

enum { PF_D = 64 };

/* Append p to the store's current run (noise: time times exp(noise·N(0,1))). 0 on success. */
static int pf_add(bench_store *st, const pf_point *p, double noise, ds_rng *r)
{
    bench_point pt;
    memset(&pt, 0, sizeof pt);
    snprintf(pt.kind, sizeof pt.kind, "%s", p->kind);
    snprintf(pt.params, sizeof pt.params, "%s", p->params);
    snprintf(pt.dataset, sizeof pt.dataset, "%s", p->dataset ? p->dataset : "gaussian");
    snprintf(pt.mode, sizeof pt.mode, "%s", p->mode ? p->mode : "prefill");
    const bool decode = strcmp(pt.mode, "decode") == 0;
    pt.batch = 1, pt.heads = p->heads, pt.kv_heads = p->kv_heads, pt.head_dim = PF_D;
    pt.kv_len = p->n, pt.q_len = decode ? p->q_len : p->n;
    pt.causal = decode ? 1 : p->causal, pt.threads = 2, pt.seed = 1, pt.warmup = 1, pt.reps = 3;
    const double t = p->time_s * exp(noise * ds_rng_normal(r));
    /* 3 repetitions around the median: 0.96 t, t, 1.05 t (the figures' bars: min-max) */
    pt.time_median_s = pt.time_mean_s = t, pt.time_min_s = 0.96 * t;
    pt.time_max_s = pt.time_p95_s = 1.05 * t;
    pt.time_stddev_s = pt.time_cv = 0;
    pt.flops = p->flops;
    pt.gflops_per_s = p->flops / t / 1e9;
    pt.bytes = 4.0 * (2.0 * pt.heads * pt.q_len * PF_D + 2.0 * pt.kv_heads * pt.kv_len * PF_D);
    pt.kv_bytes = 4.0 * 2.0 * pt.kv_heads * pt.kv_len * PF_D;
    pt.gbytes_per_s = pt.bytes / t / 1e9;
    pt.workspace_bytes = p->workspace;
    pt.base_rss_bytes = 20 << 20;
    pt.peak_rss_bytes = pt.base_rss_bytes + (int64_t)pt.bytes + p->workspace;
    pt.accuracy_rows = 64;
    pt.rel_err = p->rel_err, pt.max_abs_err = p->rel_err, pt.self_rel_err = 3e-7;
    pt.cosine = 1 - p->rel_err * p->rel_err / 2;
    pt.retrieval_queries = p->retrieval_queries;
    pt.retrieval = p->retrieval_queries ? p->retrieval : NAN;
    snprintf(pt.status, sizeof pt.status, "ok");
    if (p->dtype) snprintf(pt.dtype, sizeof pt.dtype, "%s", p->dtype);
    double samples[3] = {1.05 * t, t, 0.96 * t};
    char msg[ATTN_MSG_LEN];
    return bench_store_add_point(st, &pt, samples, 3, msg, sizeof msg) != ATTN_OK;
}

static int pf_begin(bench_store *st)
{
    bench_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-22T03:05:00Z");
    snprintf(run.command, sizeof run.command, "bench sweep (synthetic)");
    snprintf(run.cpu_model, sizeof run.cpu_model, "Synthetic CPU");
    run.threads = 2, run.blas_threads = 1, run.seed = 1;
    run.sgemm_gflops = 95, run.mem_bandwidth_gbs = 12.5;
    char msg[ATTN_MSG_LEN];
    return bench_store_begin_run(st, &run, msg, sizeof msg) != ATTN_OK;
}

static const char *const PF_FULL = "block_q=256,block_k=256,materialize=0";

/* Run 1: scaling over n (see the header comment). Returns 0 on success. */
static int pf_write_scaling(bench_store *st, double noise, uint64_t seed)
{
    ds_rng r = ds_rng_stream(seed, 5);
    int bad = pf_begin(st);
    const double H = 8, D = PF_D;
    for (int64_t n = 256; n <= 8192 && !bad; n *= 2) {
        for (int causal = 0; causal <= 1; causal++) {
            const double c = causal ? 0.5 : 1;
            const double ff = 4 * D * H * (double)n * (double)n * c;
            pf_point full = {.kind = "full",
                             .params = PF_FULL,
                             .causal = causal,
                             .heads = 8,
                             .kv_heads = 8,
                             .n = n,
                             .time_s = ff / 60e9,
                             .flops = ff,
                             .rel_err = 3e-7,
                             .workspace = 663552};
            bad |= pf_add(st, &full, noise, &r);
            for (int w = 64; w <= 256; w *= 4) {
                char params[32];
                snprintf(params, sizeof params, "window=%d", w);
                const double flops = 4 * D * H * (double)n * w * c;
                const double err = fmin(0.9, 0.05 * sqrt((double)n / w));
                pf_point win = {.kind = "window",
                                .params = params,
                                .causal = causal,
                                .heads = 8,
                                .kv_heads = 8,
                                .n = n,
                                .time_s = flops / 25e9,
                                .flops = flops,
                                .rel_err = err,
                                .workspace = 2 * 256 * w * 4};
                bad |= pf_add(st, &win, noise, &r);
                win.dataset = "needle";
                win.retrieval_queries = 16;
                win.retrieval = fmin(1, 4.0 * w / (double)n);
                bad |= pf_add(st, &win, noise, &r);
            }
            const double lf = 4 * D * 64 * H * (double)n;
            pf_point low = {.kind = "lowrank",
                            .params = "features=64",
                            .causal = causal,
                            .heads = 8,
                            .kv_heads = 8,
                            .n = n,
                            .time_s = lf / 20e9,
                            .flops = lf,
                            .rel_err = 0.2,
                            .workspace = 4 * 8 * n * 64};
            bad |= pf_add(st, &low, noise, &r);
        }
        /* decode: one query against n cached keys, bandwidth-bound at 10 GB/s */
        const double bytes = 4.0 * (2 * H * D + 2 * H * (double)n * D);
        pf_point dec = {.kind = "full",
                        .params = PF_FULL,
                        .mode = "decode",
                        .causal = 1,
                        .heads = 8,
                        .kv_heads = 8,
                        .n = n,
                        .q_len = 1,
                        .time_s = bytes / 10e9,
                        .flops = 4 * D * H * (double)n,
                        .rel_err = 3e-7,
                        .workspace = 663552};
        bad |= pf_add(st, &dec, noise, &r);
    }
    return bad;
}

/* Run 2 (kv false): heads; run 3 (kv true): kv_heads; at n = 1024 (see the header comment). */
static int pf_write_heads(bench_store *st, bool kv)
{
    ds_rng r = ds_rng_stream(9, 5);
    int bad = pf_begin(st);
    const double base = 4.0 * PF_D * 1024 * 1024 / 60e9;
    for (int64_t v = kv ? 1 : 4; v <= (kv ? 8 : 16) && !bad; v *= 2) {
        const int64_t H = kv ? 8 : v, Hkv = v;
        pf_point full = {.kind = "full",
                         .params = PF_FULL,
                         .heads = H,
                         .kv_heads = Hkv,
                         .n = 1024,
                         .time_s = base * H * (1 + 0.1 * Hkv / H),
                         .flops = 4.0 * PF_D * 1024 * 1024 * H,
                         .rel_err = 3e-7,
                         .workspace = 663552};
        bad |= pf_add(st, &full, 0, &r);
        pf_point mqa = full;
        mqa.kind = "mqa", mqa.params = "", mqa.kv_heads = 1, mqa.time_s = base * H * 0.95;
        if (!kv || v == 1) bad |= pf_add(st, &mqa, 0, &r);
    }
    return bad;
}

/* The many-kinds run (see the header comment). Returns 0 on success. */
static int pf_write_kinds(bench_store *st)
{
    static const char *const kinds[] = {"full",   "mqa",     "window", "global",
                                        "random", "strided", "linear"};
    static const char *const datasets[] = {"gaussian", "local", "needle"};
    ds_rng r = ds_rng_stream(3, 5);
    int bad = pf_begin(st);
    for (int64_t n = 256; n <= 2048 && !bad; n *= 2)
        for (int k = 0; k < 7; k++)
            for (int causal = 0; causal <= 1; causal++)
                for (int d = 0; d < 3; d++) {
                    const double e = k < 2 ? 2 : 1;
                    const double flops = 4.0 * PF_D * 8 * pow((double)n, e) * (k < 2 ? 1 : 64);
                    pf_point p = {.kind = kinds[k],
                                  .params = k < 2 ? PF_FULL : "",
                                  .dataset = datasets[d],
                                  .causal = causal,
                                  .heads = 8,
                                  .kv_heads = k == 1 ? 1 : 8,
                                  .n = n,
                                  .time_s = flops / 30e9,
                                  .flops = flops,
                                  .rel_err = k < 2 ? 3e-7 : 0.1 * (k + 1),
                                  .workspace = 65536 * (k + 1),
                                  .retrieval_queries = d == 2 ? 16 : 0};
                    p.retrieval = k < 2 ? 1 : 64.0 / (double)n;
                    bad |= pf_add(st, &p, 0.02, &r);
                }
    return bad;
}

#endif
