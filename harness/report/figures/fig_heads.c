/*
 * fig_heads.c — time_vs_heads and time_vs_kv_heads: the median time against query heads (each
 * line says how it sets its KV heads: = H for MHA, = 1 for MQA) and against KV heads at fixed H
 * (MHA to GQA to MQA), at the largest n where a series has 2 or more values of the axis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"

/* The largest n where some series of ss over the axis (x: ss->x) has 2 or more values of it
 * (0: none), and the grouping *by its lines follow: vs heads, a series follows its kind's
 * kv_heads rule (MHA: = heads; mqa: 1) unless the run swept kv_heads too, then one series per
 * kv_heads value. ATTN_EFAIL: out of memory. */
static attn_status heads_best_n(const bench_run_data *rd, const plot_subset *ss, bool kv,
                                bench_group_by *by, int64_t *best_n)
{
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = ATTN_OK;
    *best_n = 0;
    for (int attempt = 0; !st && attempt < 2; attempt++) {
        bench_group_by with_n = {by->fields | BENCH_K_N, NULL};
        st = bench_series_group(rd, ss->idx, ss->n, with_n, ss->x, &set, &nset);
        bool dup = false;
        for (int64_t k = 0; !st && k < nset; k++) {
            int64_t distinct = 1;
            for (int64_t i = 1; i < set[k].n; i++) {
                const bool same = ss->x[set[k].idx[i]] == ss->x[set[k].idx[i - 1]];
                distinct += !same;
                dup |= same;
            }
            if (distinct >= 2 && rd->pts[set[k].idx[0]].kv_len > *best_n)
                *best_n = rd->pts[set[k].idx[0]].kv_len;
        }
        bench_series_free(set, nset);
        set = NULL, nset = 0;
        if (!dup || kv) break;
        by->fields |= BENCH_K_KV_HEADS, *best_n = 0;
    }
    return st;
}

/* After each line of p (drawn from set, against query heads) how it sets its KV heads:
 * " (Hkv = H)", " (Hkv = 1)", " (Hkv = H/4)", or nothing when none of these holds. */
static void kv_rules(const bench_run_data *rd, const bench_series *set, panel *p)
{
    for (int s = 0; s < p->ns; s++) {
        const bench_series *src = set;
        while (src->idx[0] != p->s[s].first) src++;
        bool mha = true, mqa = true, ratio = true;
        const bench_point *a = &rd->pts[src->idx[0]];
        for (int64_t i = 0; i < src->n; i++) {
            const bench_point *b = &rd->pts[src->idx[i]];
            mha &= b->kv_heads == b->heads, mqa &= b->kv_heads == 1;
            ratio &= b->heads * a->kv_heads == a->heads * b->kv_heads;
        }
        char rule[48] = "";
        if (mha) snprintf(rule, sizeof rule, " (Hkv = H)");
        else if (mqa) snprintf(rule, sizeof rule, " (Hkv = 1)");
        else if (ratio)
            snprintf(rule, sizeof rule, " (Hkv = H/%lld)", (long long)(a->heads / a->kv_heads));
        const size_t used = strlen(p->s[s].label);
        snprintf(p->s[s].label + used, sizeof p->s[s].label - used, "%s", rule);
    }
}

/* Time vs heads (axis BENCH_K_HEADS) or vs kv_heads (BENCH_K_KV_HEADS), at the largest n where
 * some series has 2 or more values of it. */
static attn_status fig_time_vs_heads(plot_ctx *cx, const plot_subset *ss, unsigned axis, char *msg,
                                     size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    const bool kv = axis == BENCH_K_KV_HEADS;
    const char *name = kv ? "time_vs_kv_heads" : "time_vs_heads";
    bench_group_by by = {BENCH_K_ALL & ~BENCH_K_N & ~axis & ~(kv ? 0u : (unsigned)BENCH_K_KV_HEADS),
                         NULL};
    for (int64_t i = 0; i < ss->n; i++)
        ss->x[ss->idx[i]] = (double)(kv ? rd->pts[ss->idx[i]].kv_heads : rd->pts[ss->idx[i]].heads);
    int64_t best_n = 0;
    bench_series *set = NULL;
    int64_t nset = 0;
    int64_t *idx = malloc((size_t)ss->n * sizeof *idx), m = 0;
    attn_status st = idx ? heads_best_n(rd, ss, kv, &by, &best_n) : ATTN_EFAIL;
    if (st) {
        free(idx);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    }
    if (best_n == 0) {
        bench_plot_skip(cx, ss, name,
                        kv ? "no series was measured at 2 or more kv_heads (sweep --kv-heads 1,2,8)"
                           : "no series was measured at 2 or more heads (sweep --heads 4,8,16)");
        free(idx);
        return ATTN_OK;
    }
    st = bench_plot_group_at_n(rd, ss, best_n, by, idx, &m, &set, &nset, msg, msg_len);
    figure f;
    char title[160], c[32];
    snprintf(title, sizeof title,
             kv ? "Time vs KV heads (MHA to GQA to MQA) at n = %s"
                : "Time vs query heads at n = %s",
             bench_format_count((double)best_n, c, sizeof c));
    bench_plot_begin(&f, cx, ss, name, title, idx, m,
                     axis | (kv ? 0u : (unsigned)BENCH_K_KV_HEADS));
    panel *p =
        bench_fig_add_panel(&f, "", kv ? "key/value heads Hkv" : "query heads H",
                            strcmp(ss->mode, "decode") == 0 ? "median time per decode step (ms)"
                                                            : "median time per forward (ms)");
    p->logx = p->logy = p->ntics = true;
    if (!st)
        bench_fig_add_set(p, rd, set, nset, by, ss->x, bench_plot_y_time_ms,
                          bench_plot_bar_time_ms);
    bench_plot_time_bars(rd, idx, m, "the median time", p->bars, sizeof p->bars);
    if (!st && !kv) kv_rules(rd, set, p);
    if (!st) st = bench_fig_draw(cx, &f, msg, msg_len);
    bench_fig_free(&f);
    bench_series_free(set, nset);
    free(idx);
    return st;
}

static attn_status fig_time_vs_query_heads(plot_ctx *cx, const plot_subset *ss,
                                           const plot_sets *sets, char *msg, size_t msg_len)
{
    return fig_time_vs_heads(cx, ss, BENCH_K_HEADS, msg, msg_len);
}

static attn_status fig_time_vs_kv_heads(plot_ctx *cx, const plot_subset *ss, const plot_sets *sets,
                                        char *msg, size_t msg_len)
{
    return fig_time_vs_heads(cx, ss, BENCH_K_KV_HEADS, msg, msg_len);
}

const bench_figure bench_figure_time_vs_heads = {
    .name = "time_vs_heads",
    .summary = "median time vs query heads at one n (each line says how it sets Hkv)",
    .group = BENCH_FIG_COST,
    .over_n = false,
    .quiet = false,
    .draw = fig_time_vs_query_heads,
};

const bench_figure bench_figure_time_vs_kv_heads = {
    .name = "time_vs_kv_heads",
    .summary = "median time vs KV heads at fixed H: MHA to GQA to MQA",
    .group = BENCH_FIG_COST,
    .over_n = false,
    .quiet = false,
    .draw = fig_time_vs_kv_heads,
};
