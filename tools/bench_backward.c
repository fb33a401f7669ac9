/*
 * bench_backward.c — times a kind's forward (forward_train, which also saves what the backward
 * needs) against its backward at one shape and prints the GFLOP/s of each and their ratio
 * (backward flops = 2.5 × forward flops, attn_kind_backward_flops). A tuning aid, not part of the
 * harness: `--pass backward` of `bench run` is the measurement of record.
 *   build/tools/bench_backward [KIND [n [H [D [causal [threads [reps [params]]]]]]]]
 *   defaults: full 4096 8 64 0 2 5 ""  (params: "name=value,...")
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

static float *filled(int64_t n, unsigned seed)
{
    float *x = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
    srand(seed);
    for (int64_t e = 0; e < n; e++) x[e] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    return x;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static attn_params parse(const attn_ops *ops, const char *text)
{
    attn_params p = attn_params_defaults(attn_kind_params(ops));
    char buf[256], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        if (attn_param_set(attn_kind_params(ops), &p, tok, eq + 1, msg, sizeof msg) != ATTN_OK) {
            fprintf(stderr, "bench_backward: %s\n", msg);
            exit(2);
        }
    }
    return p;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "full";
    const int64_t n = argc > 2 ? atoll(argv[2]) : 4096, H = argc > 3 ? atoll(argv[3]) : 8;
    const int64_t D = argc > 4 ? atoll(argv[4]) : 64;
    const bool causal = argc > 5 && atoi(argv[5]);
    const int threads = argc > 6 ? atoi(argv[6]) : 2, reps = argc > 7 ? atoi(argv[7]) : 5;
    const attn_ops *ops = attn_kind_find(name);
    if (!ops || !attn_kind_has_backward(ops)) {
        fprintf(stderr, "bench_backward: no kind '%s' with a backward\n", name);
        return 2;
    }
    attn_shape s = attn_shape_init(1, H, attn_kind_kv_heads(ops, H, 0), n, n, D, causal);
    const attn_exec x = attn_exec_init(threads);
    attn_params p = parse(ops, argc > 8 ? argv[8] : "");
    attn_params_resolve(ops, &s, &p);
    char msg[ATTN_MSG_LEN];
    float *owned[ATTN_MAX_WEIGHTS];
    if (attn_backward_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK ||
        attn_weights_draw(ops, &s, &p, owned, msg, sizeof msg) != ATTN_OK) {
        fprintf(stderr, "bench_backward: %s\n", msg);
        return 2;
    }
    const int64_t qn = attn_q_elems(&s), kvn = attn_kv_elems(&s);
    float *q = filled(qn, 1), *k = filled(kvn, 2), *v = filled(kvn, 3), *dout = filled(qn, 4);
    float *out = filled(qn, 5), *dq = filled(qn, 6), *dk = filled(kvn, 7), *dv = filled(kvn, 8);
    const size_t saved_b = attn_kind_saved_bytes(ops, &s, &p);
    const size_t fw_b = ops->workspace_bytes(ops, &x, &s, &p),
                 bw_b = ops->train->workspace_bytes(ops, &x, &s, &p);
    void *saved = malloc(saved_b + 1), *fw = malloc(fw_b + 1), *bw = malloc(bw_b + 1);
    double tf[64], tb[64];
    const int R = reps < 1 ? 1 : (reps > 64 ? 64 : reps);
    for (int r = -1; r < R; r++) { /* one warm-up round */
        double t0 = omp_get_wtime();
        attn_kind_forward_train(ops, &x, &s, &p, q, k, v, out, saved, fw);
        double t1 = omp_get_wtime();
        ops->train->backward(ops, &x, &s, &p, q, k, v, out, saved, dout, dq, dk, dv, bw);
        double t2 = omp_get_wtime();
        if (r >= 0) tf[r] = t1 - t0, tb[r] = t2 - t1;
    }
    qsort(tf, (size_t)R, sizeof *tf, cmp);
    qsort(tb, (size_t)R, sizeof *tb, cmp);
    const double ff = ops->flops(ops, &s, &p), bf = attn_kind_backward_flops(ops, &s, &p);
    const double gf = ff / tf[R / 2] * 1e-9, gb = bf / tb[R / 2] * 1e-9;
    printf("%s n=%lld H=%lld Hkv=%lld D=%lld causal=%d threads=%d reps=%d\n", name, (long long)n,
           (long long)H, (long long)s.Hkv, (long long)D, causal, threads, R);
    printf("forward  %9.2f ms  %7.2f GFLOP/s  workspace %zu B  saved %zu B\n", tf[R / 2] * 1e3, gf,
           fw_b, saved_b);
    printf("backward %9.2f ms  %7.2f GFLOP/s  workspace %zu B  (flops 2.5 x forward)\n",
           tb[R / 2] * 1e3, gb, bw_b);
    printf("backward/forward GFLOP/s %.3f   time ratio %.3f\n", gb / gf, tb[R / 2] / tf[R / 2]);
    attn_weights_free(owned);
    free(q), free(k), free(v), free(dout), free(out), free(dq), free(dk), free(dv);
    free(saved), free(fw), free(bw);
    return 0;
}
