/* accuracy.c — sampled-row comparison of a kind's output with float64 references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"

int64_t bench_sample_rows(int64_t total, int64_t wanted, uint64_t seed, int64_t *rows)
{
    return ds_sample_rows(total, wanted, seed, rows);
}

double bench_rel_l2(const float *o, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t e = 0; e < n; e++) {
        double d = (double)o[e] - ref[e];
        num += d * d;
        den += ref[e] * ref[e];
    }
    if (den == 0) return num == 0 ? 0.0 : INFINITY;
    return sqrt(num / den);
}

attn_status bench_measure_accuracy(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                   const float *q, const float *k, const float *v, const float *out,
                                   int64_t rows_wanted, uint64_t seed, bench_accuracy *acc,
                                   char *msg, size_t msg_len)
{
    const int64_t total = s->B * s->H * s->T, D = s->D;
    const int64_t cap = total < rows_wanted ? total : rows_wanted;
    int64_t *rows = malloc((size_t)cap * sizeof *rows);
    double *exact = malloc((size_t)(cap * D) * sizeof *exact);
    double *own = malloc((size_t)(cap * D) * sizeof *own);
    float *got = malloc((size_t)(cap * D) * sizeof *got);
    attn_status st = ATTN_EFAIL;
    if (!rows || !exact || !own || !got) {
        snprintf(msg, msg_len, "accuracy: out of memory for %lld rows", (long long)cap);
        goto done;
    }
    const int64_t n = bench_sample_rows(total, rows_wanted, seed, rows);
    if (attn_exact_reference(ops, s, p, q, k, v, rows, n, exact) != ATTN_OK ||
        attn_kind_reference(ops, s, p, q, k, v, rows, n, own) != ATTN_OK) {
        snprintf(msg, msg_len, "accuracy: the float64 reference of '%s' failed", ops->name);
        goto done;
    }
    double max_abs = 0, cos_sum = 0;
    for (int64_t r = 0; r < n; r++) {
        double dot = 0, go = 0, ex = 0;
        for (int64_t d = 0; d < D; d++) {
            const double o = out[rows[r] * D + d], x = exact[r * D + d];
            got[r * D + d] = (float)o;
            double e = fabs(o - x);
            if (!(e <= max_abs)) max_abs = e; /* NaN propagates */
            dot += o * x, go += o * o, ex += x * x;
        }
        cos_sum += go == 0 && ex == 0 ? 1.0 : (go == 0 || ex == 0 ? 0.0 : dot / sqrt(go * ex));
    }
    acc->cosine = n ? cos_sum / (double)n : NAN;
    acc->rows = n;
    acc->rel_err = bench_rel_l2(got, exact, n * D);
    acc->max_abs_err = max_abs;
    acc->self_rel_err = bench_rel_l2(got, own, n * D);
    st = ATTN_OK;
done:
    free(rows);
    free(exact);
    free(own);
    free(got);
    return st;
}

double bench_retrieval(const attn_shape *s, int threads, const float *v, const float *out,
                       const ds_plant *plants, int64_t n)
{
    const int64_t D = s->D, S = s->S;
    int64_t hits = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : hits) num_threads(threads)
    for (int64_t e = 0; e < n; e++) {
        const float *o = out + plants[e].row * D;
        const float *vg = v + ds_kv_head(s, plants[e].row / s->T) * S * D;
        double marker = 0, nearest_other = INFINITY; /* squared distances */
        for (int64_t j = 0; j < S; j++) {
            double dist = 0;
            for (int64_t d = 0; d < D; d++) {
                const double x = (double)o[d] - vg[j * D + d];
                dist += x * x;
            }
            if (j == plants[e].key) marker = dist;
            else if (dist < nearest_other) nearest_other = dist;
        }
        hits += marker < nearest_other;
    }
    return n ? (double)hits / (double)n : NAN;
}

attn_status bench_measure_retrieval(const ds_ops *ds, const ds_params *p, const attn_shape *s,
                                    int threads, uint64_t seed, const float *v, const float *out,
                                    int64_t *queries, double *retrieval, char *msg, size_t msg_len)
{
    ds_plant *plants;
    const int64_t n = ds_plants_list(ds, s, p, seed, &plants);
    *queries = 0;
    *retrieval = NAN;
    if (n < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "retrieval: out of memory for the %s plants",
                         ds->name);
    *queries = n;
    *retrieval = bench_retrieval(s, threads, v, out, plants, n);
    free(plants);
    return ATTN_OK;
}
