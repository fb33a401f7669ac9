/*
 * test_lowrank.c — what the generic tests cannot see of the low-rank kinds. linformer: its
 * sharing modes agree with each other when given the same matrices (the generic tests compare
 * each mode with a reference that picks E and F the same way), and refuses causal masks and
 * decode as outside its definition. nystrom: with the rows as landmarks and enough iterations it
 * is full attention, its landmarks are segment means of unequal segments (any n), and it refuses
 * causal masks and decode.
 */
#include <criterion/criterion.h>

#include "test_util.h"

/* Output of ops on s, run on x, with parameters text and the given weights (NULL: drawn). */
static float *run(const char *kind, const attn_exec *x, const attn_shape *s, const char *text,
                  const float *w0, const float *w1)
{
    const attn_ops *ops = attn_kind_find(kind);
    cr_assert_not_null(ops);
    attn_params p = tu_params(ops, text, s);
    p.w[0] = w0, p.w[1] = w1;
    const float *q = tu_random(attn_q_elems(s), 1, 1), *k = tu_random(attn_kv_elems(s), 1, 2);
    const float *v = tu_random(attn_kv_elems(s), 1, 3);
    float *o = bench_alloc((size_t)attn_q_elems(s) * sizeof(float));
    cr_assert_eq(tu_forward(ops, x, s, &p, q, k, v, o), ATTN_OK, "%s %s", kind, text);
    free((void *)q), free((void *)k), free((void *)v);
    return o;
}

static double rel_diff(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t e = 0; e < n; e++) num += (a[e] - b[e]) * (a[e] - b[e]), den += b[e] * b[e];
    return sqrt(num / den);
}

Test(lowrank, linformer_sharing_modes_agree_on_the_same_matrices)
{
    const attn_shape s = attn_shape_init(2, 4, 2, 37, 53, 16, false);
    const attn_exec x = tu_exec(2);
    const int64_t kk = 20, es = kk * s.S;
    float *E = tu_random(es, 0.2, 7), *F = tu_random(es, 0.2, 8);
    float *E2 = bench_alloc((size_t)(2 * es) * sizeof(float)),
          *F2 = bench_alloc((size_t)(2 * es) * 4);
    for (int g = 0; g < 2; g++) /* share=none with both KV heads' matrices equal to E and F */
        memcpy(E2 + g * es, E, (size_t)es * 4), memcpy(F2 + g * es, F, (size_t)es * 4);
    const int64_t n = attn_q_elems(&s);
    float *headwise = run("linformer", &x, &s, "k=20,share=headwise", E, F);
    float *none = run("linformer", &x, &s, "k=20,share=none", E2, F2);
    float *kv = run("linformer", &x, &s, "k=20,share=kv", E, NULL);
    float *headwise_ee = run("linformer", &x, &s, "k=20,share=headwise", E, E);
    cr_expect_leq(rel_diff(none, headwise, n), 1e-6, "none with equal heads != headwise");
    cr_expect_leq(rel_diff(kv, headwise_ee, n), 1e-6, "kv != headwise with F = E");
    cr_expect_gt(rel_diff(kv, headwise, n), 1e-2, "kv ignores that F = E");
    float *noise = tu_random(es, 0.1, 9); /* KV head 1 gets its own E (not E + c: softmax */
    for (int64_t e = 0; e < es; e++) E2[es + e] += noise[e]; /* ignores a shift of every key) */
    free(noise);
    float *none2 = run("linformer", &x, &s, "k=20,share=none", E2, F2);
    const int64_t half = s.H / 2 * s.T * s.D; /* heads 0, 1 read KV head 0; heads 2, 3 head 1 */
    double head0 = rel_diff(none2, headwise, half),
           head1 = rel_diff(none2 + half, headwise + half, half);
    cr_expect_leq(head0, 1e-6, "KV head 0 moved when only KV head 1's E changed");
    cr_expect_gt(head1, 1e-2, "KV head 1 ignores its own E");
    free(E), free(F), free(E2), free(F2), free(headwise), free(none), free(kv), free(headwise_ee),
        free(none2);
}

Test(lowrank, refused_outside_their_definition)
{
    const char *kinds[] = {"linformer", "nystrom"};
    for (int n = 0; n < 2; n++) {
        const attn_ops *ops = attn_kind_find(kinds[n]);
        cr_assert_not_null(ops);
        char msg[ATTN_MSG_LEN];
        attn_shape s = attn_shape_init(1, 4, 4, 64, 64, 16, true);
        attn_params p = tu_params(ops, NULL, &s);
        cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_ENODEF, "%s", kinds[n]);
        cr_expect(strstr(msg, "causal") && !strstr(msg, "64"), "%s: %s", kinds[n], msg);
        s.T = 1, s.decode = true;
        cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_ENODEF, "%s", kinds[n]);
        s.causal = s.decode = false;
        cr_expect_eq(attn_check(ops, &s, &p, msg, sizeof msg), ATTN_OK, "%s: %s", kinds[n], msg);
    }
}

/* Landmarks = the rows (m >= n) and a converged pseudo-inverse: F A⁺ B V = A A⁺ A V = A V. */
Test(lowrank, nystrom_with_every_row_a_landmark_is_full_attention)
{
    const attn_shape s = attn_shape_init(1, 2, 1, 48, 48, 16, false);
    const attn_exec x = tu_exec(2);
    const float *q = tu_random(attn_q_elems(&s), 0.5, 1), *k = tu_random(attn_kv_elems(&s), 0.5, 2);
    const float *v = tu_random(attn_kv_elems(&s), 1, 3);
    const attn_ops *nys = attn_kind_find("nystrom");
    double err[2];
    const char *texts[] = {"landmarks=1024,pinv_iters=12", "landmarks=24,pinv_iters=12"};
    for (int c = 0; c < 2; c++) {
        attn_params p = tu_params(nys, texts[c], &s);
        float *o = bench_alloc((size_t)attn_q_elems(&s) * sizeof(float));
        cr_assert_eq(tu_forward(nys, &x, &s, &p, q, k, v, o), ATTN_OK);
        double *exact = malloc((size_t)attn_q_elems(&s) * sizeof(double));
        int64_t rows[96];
        for (int64_t r = 0; r < s.H * s.T; r++) rows[r] = r;
        cr_assert_eq(attn_masked_reference(NULL, &s, &p, q, k, v, rows, s.H * s.T, exact), ATTN_OK);
        err[c] = tu_rel_l2(o, exact, attn_q_elems(&s));
        free(o), free(exact);
    }
    cr_expect_leq(err[0], 1e-3, "rows as landmarks: %.3g from full attention", err[0]);
    cr_expect_gt(err[1], 10 * err[0], "24 landmarks as close as 48 (%.3g, %.3g)", err[1], err[0]);
    free((void *)q), free((void *)k), free((void *)v);
}

/* The landmarks are means of segments [floor(l·n/m), floor((l+1)·n/m)): n = 7, m = 4 gives
 * segments of 1, 2, 2 and 2 rows (not 1, 1, 1, 4). Checked against the definition written out
 * here (D = 1, pinv_iters = 0: Z = Aᵀ/‖A‖₁ as the rows of A sum to 1). */
Test(lowrank, nystrom_segments_of_unequal_length)
{
    enum { N = 7, M = 4 };
    const attn_shape s = attn_shape_init(1, 1, 1, N, N, 1, false);
    const attn_exec x = tu_exec(1);
    const attn_ops *nys = attn_kind_find("nystrom");
    attn_params p = tu_params(nys, "landmarks=4,pinv_iters=0", &s);
    float q[N] = {1, 3, -2, 0, 4, 4, 1}, k[N] = {0, 1, 2, 3, 4, 5, 6},
          v[N] = {1, -1, 2, 0, 3, 1, 0};
    float *o = bench_alloc(N * sizeof(float));
    cr_assert_eq(tu_forward(nys, &x, &s, &p, q, k, v, o), ATTN_OK);
    double qt[M] = {0}, kt[M] = {0}, A[M][M], Bv[M], W[M], n1 = 0;
    for (int l = 0; l < M; l++) {
        const int a = l * N / M, e = (l + 1) * N / M;
        for (int j = a; j < e; j++)
            qt[l] += q[j] / (double)(e - a), kt[l] += k[j] / (double)(e - a);
    }
    for (int i = 0; i < M; i++) {
        double sum = 0, bsum = 0, bv = 0;
        for (int j = 0; j < M; j++) sum += exp(qt[i] * kt[j]);
        for (int j = 0; j < M; j++) A[i][j] = exp(qt[i] * kt[j]) / sum;
        for (int j = 0; j < N; j++) bsum += exp(qt[i] * k[j]), bv += exp(qt[i] * k[j]) * v[j];
        Bv[i] = bv / bsum;
    }
    for (int j = 0; j < M; j++) {
        double col = 0;
        for (int i = 0; i < M; i++) col += A[i][j];
        n1 = fmax(n1, col);
    }
    for (int i = 0; i < M; i++) { /* W = Z0 · (B·V), Z0[i][j] = A[j][i] / n1 */
        W[i] = 0;
        for (int j = 0; j < M; j++) W[i] += A[j][i] / n1 * Bv[j];
    }
    double num = 0, den = 0;
    for (int i = 0; i < N; i++) {
        double sum = 0, o_i = 0;
        for (int l = 0; l < M; l++) sum += exp(q[i] * kt[l]);
        for (int l = 0; l < M; l++) o_i += exp(q[i] * kt[l]) / sum * W[l];
        num += (o[i] - o_i) * (o[i] - o_i), den += o_i * o_i;
    }
    cr_expect_leq(sqrt(num / den), 1e-5, "against the definition: rel err %.3g", sqrt(num / den));
    free(o);
}
