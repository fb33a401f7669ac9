/* table.c — one aligned line per point: shape, median time, throughput, memory, error. */
#include <math.h>
#include <string.h>

#include "memory.h"
#include "stats.h"
#include "table.h"

/* An error column: %.2e, or "nan" / "inf" (never "-nan": the sign of a NaN means nothing). */
static const char *err_text(double x, char *buf, size_t len)
{
    if (isnan(x)) snprintf(buf, len, "nan");
    else if (isinf(x)) snprintf(buf, len, "inf");
    else snprintf(buf, len, "%.2e", x);
    return buf;
}

bench_table_cols bench_table_columns(const bench_point *pts, int64_t n)
{
    bench_table_cols c = {.retrieval = bench_table_has_retrieval(pts, n)};
    const bench_point *first = NULL; /* the first point measured (skipped ones carry no values) */
    for (int64_t p = 0; p < n; p++) {
        if (strcmp(pts[p].status, "skipped") == 0) continue;
        if (!first) first = &pts[p];
        c.threads |= pts[p].threads != first->threads;
        c.isa |= strcmp(pts[p].isa, first->isa) != 0;
        c.dtype |= *pts[p].dtype && strcmp(pts[p].dtype, "f32") != 0;
    }
    return c;
}

void bench_table_header(FILE *f, const bench_table_cols *c)
{
    fprintf(f, "%-8s %-9s %-3s %-4s %-4s %-7s %-7s %-4s %-3s %-8s ", "kind", "dataset", "B", "H",
            "Hkv", "T", "S", "D", "cau", "pass");
    if (c->threads) fprintf(f, "%-3s ", "thr");
    if (c->isa) fprintf(f, "%-8s ", "isa");
    if (c->dtype) fprintf(f, "%-5s ", "dtype");
    fprintf(f, "%11s %6s %9s %7s %6s %8s %10s %10s %9s %9s%s  %s\n", "median_ms", "cv%", "GFLOP/s",
            "%sgemm", "%peak", "GB/s", "workspace", "peak_rss", "rel_err", "self_err",
            c->retrieval ? "  retrieval/n" : "", "params (kind  dataset)");
}

/* A percentage as "42%", or "-" when it is not a positive number (not measured). */
static const char *pct_text(double pct, char *buf, size_t len)
{
    if (isfinite(pct) && pct > 0) snprintf(buf, len, "%.0f%%", pct);
    else snprintf(buf, len, "-");
    return buf;
}

bool bench_table_has_retrieval(const bench_point *pts, int64_t n)
{
    for (int64_t p = 0; p < n; p++)
        if (pts[p].retrieval_queries > 0) return true;
    return false;
}

void bench_table_row(FILE *f, const bench_point *pt, double sgemm_gflops, const bench_table_cols *c)
{
    const bool retrieval = c->retrieval;
    char ws[32], rss[32];
    bench_format_bytes((double)pt->workspace_bytes, ws, sizeof ws);
    if (pt->peak_rss_bytes >= 0) bench_format_bytes((double)pt->peak_rss_bytes, rss, sizeof rss);
    else snprintf(rss, sizeof rss, "?");
    fprintf(f, "%-8s %-9s %-3lld %-4lld %-4lld %-7lld %-7lld %-4lld %-3d %-8s ", pt->kind,
            pt->dataset, (long long)pt->batch, (long long)pt->heads, (long long)pt->kv_heads,
            (long long)pt->q_len, (long long)pt->kv_len, (long long)pt->head_dim, pt->causal,
            *pt->pass ? pt->pass : "forward");
    if (c->threads) fprintf(f, "%-3d ", (int)pt->threads);
    if (c->isa) fprintf(f, "%-8s ", pt->isa);
    if (c->dtype) fprintf(f, "%-5s ", *pt->dtype ? pt->dtype : "f32");
    if (strcmp(pt->status, "ok") != 0 && strcmp(pt->status, "nonfinite") != 0) {
        fprintf(f, "error: %s\n", pt->message);
        return;
    }
    char frac[16], peak[16];
    pct_text(pt->pct_sgemm > 0  ? pt->pct_sgemm
             : sgemm_gflops > 0 ? 100 * pt->gflops_per_s / sgemm_gflops
                                : NAN,
             frac, sizeof frac);
    pct_text(pt->pct_peak, peak, sizeof peak);
    /* retrieval: hits in % of the planted queries / their count */
    char retr[40] = "", val[24] = "-";
    if (pt->retrieval_queries > 0)
        snprintf(val, sizeof val, "%.1f%%/%d", 100 * pt->retrieval, (int)pt->retrieval_queries);
    if (retrieval) snprintf(retr, sizeof retr, "  %11s", val);
    char rel[16], self[16], cv[16] = "-"; /* one repetition: no variation measured */
    if (isfinite(pt->time_cv)) snprintf(cv, sizeof cv, "%.1f", pt->time_cv * 100);
    const bool nonfinite = strcmp(pt->status, "nonfinite") == 0;
    fprintf(f, "%11.3f %6s %9.1f %7s %6s %8.1f %10s %10s %9s %9s%s  %s%s%s%s\n",
            pt->time_median_s * 1e3, cv, pt->gflops_per_s, frac, peak, pt->gbytes_per_s, ws, rss,
            err_text(pt->rel_err, rel, sizeof rel), err_text(pt->self_rel_err, self, sizeof self),
            retr, pt->params, *pt->dataset_params ? "  " : "", pt->dataset_params,
            nonfinite ? "  [nonfinite output]" : "");
}

int bench_warn_nonfinite(const bench_point *pt)
{
    if (strcmp(pt->status, "ok") == 0 && pt->message[0]) /* inputs measured anyway */
        fprintf(stderr, "bench: %s T=%lld S=%lld: %s\n", pt->kind, (long long)pt->q_len,
                (long long)pt->kv_len, pt->message);
    if (strcmp(pt->status, "nonfinite") != 0) return 0;
    fprintf(stderr, "bench: %s T=%lld S=%lld: status nonfinite: %s\n", pt->kind,
            (long long)pt->q_len, (long long)pt->kv_len, pt->message);
    return 1;
}

int bench_warn_noisy(const bench_point *pt, const double *samples, int64_t nsamples, bool with_fix)
{
    if (!bench_timings_vary(samples, nsamples)) return 0;
    fprintf(stderr,
            "bench: warning: %s T=%lld S=%lld: timings vary (interquartile range %.0f%% of the "
            "median %.3g ms over %lld reps)%s%s\n",
            pt->kind, (long long)pt->q_len, (long long)pt->kv_len,
            100 * bench_relative_iqr(samples, nsamples), pt->time_median_s * 1e3,
            (long long)nsamples, with_fix ? ": the machine is busy or the run is short: " : "",
            with_fix ? BENCH_NOISE_FIX : "");
    return 1;
}

void bench_table_comm(FILE *f, const bench_point *pt, int ranks)
{
    if (isnan(pt->compute_time_s)) return;
    char sent[32];
    bench_format_bytes(pt->comm_bytes, sent, sizeof sent);
    fprintf(f,
            "%s on %d rank%s: compute %.3f ms (slowest rank; imbalance %.1f%%), waiting for "
            "messages %.3f ms, sent %s",
            pt->kind, ranks, ranks == 1 ? "" : "s", pt->compute_time_s * 1e3,
            pt->compute_imbalance * 100, pt->comm_time_s * 1e3, sent);
    if (isnan(pt->overlap)) fprintf(f, ", no messages\n");
    else fprintf(f, ", overlap %.1f%% of their time in flight hidden\n", pt->overlap * 100);
}
