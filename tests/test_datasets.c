/*
 * test_datasets.c — the input datasets: a valid list, the same output per seed on 1 and 2
 * threads (and another with another seed), the statistics each one states (mean, variance,
 * lag-1 correlation, rank, cluster structure, the needle's planted scores and keys, tied
 * equality), the file dataset against what was written, parameters, and the CLI around them
 * (bench datasets, --set of a dataset parameter, dataset_params in the results).
 */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>

#include "datasets.h"
#include "results.h"
#include "test_run.h"
#include "test_util.h"

typedef struct inputs {
    float *q, *k, *v;
} inputs;

static attn_shape shape(int64_t B, int64_t H, int64_t Hkv, int64_t T, int64_t S, int64_t D,
                        bool causal)
{
    return attn_shape_init(B, H, Hkv, T, S, D, causal);
}

/* q, k, v of dataset ds for s, filled on `threads` threads. */
static inputs make(const ds_ops *ds, const attn_shape *s, const ds_params *p, uint64_t seed,
                   int threads)
{
    inputs in = {bench_alloc((size_t)attn_q_elems(s) * sizeof(float)),
                 bench_alloc((size_t)attn_kv_elems(s) * sizeof(float)),
                 bench_alloc((size_t)attn_kv_elems(s) * sizeof(float))};
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(ds->fill(s, p, seed, threads, in.q, in.k, in.v, msg, sizeof msg), ATTN_OK,
                 "%s: %s", ds->name, msg);
    return in;
}

static void release(inputs *in) { free(in->q), free(in->k), free(in->v); }

/* Dataset by name with its defaults and name=value overrides ("rho=0.5,temperature=2"). */
static const ds_ops *dataset(const char *name, ds_params *p, const char *sets)
{
    const ds_ops *ds = ds_find(name);
    cr_assert_not_null(ds, "no dataset %s", name);
    *p = ds_params_defaults(ds);
    char buf[256], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", sets);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        cr_assert_eq(ds_param_set(ds, p, tok, eq + 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    }
    return ds;
}

static void moments(const float *x, int64_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (int64_t e = 0; e < n; e++) s += x[e], ss += (double)x[e] * x[e];
    *mean = s / (double)n;
    *var = ss / (double)n - *mean * *mean;
}

static double cosine(const float *a, const float *b, int64_t D)
{
    double ab = 0, aa = 0, bb = 0;
    for (int64_t d = 0; d < D; d++)
        ab += (double)a[d] * b[d], aa += (double)a[d] * a[d], bb += (double)b[d] * b[d];
    return ab / sqrt(aa * bb);
}

Test(datasets, list_is_valid)
{
    cr_assert_geq(ds_count(), 7);
    const char *expected[] = {"gaussian", "local", "lowrank", "clustered",
                              "needle",   "tied",  "file"};
    for (size_t e = 0; e < sizeof expected / sizeof expected[0]; e++)
        cr_expect_not_null(ds_find(expected[e]), "%s missing", expected[e]);
    for (int n = 0; n < ds_count(); n++) {
        const ds_ops *d = ds_at(n);
        cr_expect(d->name && d->summary && d->definition && d->fill, "dataset %d incomplete", n);
        cr_expect_eq(ds_find(d->name), d, "%s: name not unique", d->name);
        cr_expect_eq(d->takes_path, d->shape != NULL, "%s: a path and a shape go together",
                     d->name);
        cr_expect(d->params.count >= 0 && d->params.count <= ATTN_MAX_PARAMS);
        for (int p = 0; p < d->params.count; p++) {
            const attn_param_def *pd = &d->params.defs[p];
            cr_expect(pd->min <= pd->def && pd->def <= pd->max, "%s.%s default", d->name, pd->name);
            cr_expect(!pd->integer || pd->def == floor(pd->def), "%s.%s", d->name, pd->name);
            cr_expect_eq(ds_param_index(d, pd->name), p, "%s.%s not unique", d->name, pd->name);
        }
    }
}

/* Same seed: the same bytes on 1 and 2 threads; another seed: other numbers. */
Test(datasets, deterministic_per_seed_and_thread_count)
{
    const attn_shape shapes[] = {shape(2, 4, 2, 37, 53, 16, true), shape(1, 2, 1, 40, 30, 8, false),
                                 shape(1, 3, 3, 1, 700, 8, true)};
    for (int n = 0; n < ds_count(); n++) {
        const ds_ops *ds = ds_at(n);
        if (ds->takes_path) continue;
        const ds_params p = ds_params_defaults(ds);
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
            const attn_shape s = shapes[c];
            omp_set_num_threads(1);
            inputs a = make(ds, &s, &p, 7, 1);
            omp_set_num_threads(2);
            inputs b = make(ds, &s, &p, 7, 2), other = make(ds, &s, &p, 8, 2);
            const size_t qb = (size_t)attn_q_elems(&s) * 4, kb = (size_t)attn_kv_elems(&s) * 4;
            cr_expect(memcmp(a.q, b.q, qb) == 0 && memcmp(a.k, b.k, kb) == 0 &&
                          memcmp(a.v, b.v, kb) == 0,
                      "%s shape %zu: 1 and 2 threads differ", ds->name, c);
            cr_expect(memcmp(a.q, other.q, qb) != 0 && memcmp(a.k, other.k, kb) != 0,
                      "%s shape %zu: seeds 7 and 8 give the same inputs", ds->name, c);
            bool finite = true;
            for (size_t e = 0; e < qb / 4; e++) finite &= isfinite(a.q[e]);
            for (size_t e = 0; e < kb / 4; e++) finite &= isfinite(a.k[e]) && isfinite(a.v[e]);
            cr_expect(finite, "%s shape %zu: inf or NaN", ds->name, c);
            release(&a), release(&b), release(&other);
        }
    }
}

Test(datasets, gaussian_moments_and_temperature)
{
    const attn_shape s = shape(1, 4, 4, 512, 512, 32, false);
    const double temps[] = {1, 4};
    for (int t = 0; t < 2; t++) {
        char sets[64];
        snprintf(sets, sizeof sets, "temperature=%g", temps[t]);
        ds_params p;
        const ds_ops *ds = dataset("gaussian", &p, sets);
        inputs in = make(ds, &s, &p, 3, 1);
        double m, var;
        moments(in.q, attn_q_elems(&s), &m, &var);
        cr_expect(fabs(m) < 0.01 && fabs(var * temps[t] - 1) < 0.03, "q: mean %g var %g", m, var);
        moments(in.k, attn_kv_elems(&s), &m, &var);
        cr_expect(fabs(m) < 0.01 && fabs(var * temps[t] - 1) < 0.03, "k: mean %g var %g", m, var);
        moments(in.v, attn_kv_elems(&s), &m, &var);
        cr_expect(fabs(m) < 0.01 && fabs(var - 1) < 0.03, "v: mean %g var %g", m, var);
        if (temps[t] == 1) { /* the default is the original N(0,1) inputs, number for number */
            float *ref = bench_alloc((size_t)attn_q_elems(&s) * 4);
            ds_fill_normal(ref, attn_q_elems(&s), 1.0, 3, 1);
            cr_expect(memcmp(ref, in.q, (size_t)attn_q_elems(&s) * 4) == 0);
            free(ref);
        }
        release(&in);
    }
}

/* Lag-`lag` autocorrelation of k along positions, pooled over heads and coordinates. */
static double autocorrelation(const float *k, const attn_shape *s, int64_t lag)
{
    double xy = 0, xx = 0;
    for (int64_t bg = 0; bg < s->B * s->Hkv; bg++)
        for (int64_t j = 0; j + lag < s->S; j++)
            for (int64_t d = 0; d < s->D; d++) {
                const float *x = k + (bg * s->S + j) * s->D + d;
                xy += (double)x[0] * x[lag * s->D];
                xx += (double)x[0] * x[0];
            }
    return xy / xx;
}

Test(datasets, local_is_an_ar1_sequence)
{
    const attn_shape s = shape(1, 8, 4, 1024, 1024, 32, true);
    const double rhos[] = {0.9, 0.5, 0};
    for (int r = 0; r < 3; r++) {
        char sets[64];
        snprintf(sets, sizeof sets, "rho=%g,temperature=2", rhos[r]);
        ds_params p;
        const ds_ops *ds = dataset("local", &p, sets);
        inputs in = make(ds, &s, &p, 5, 1);
        double m, var;
        moments(in.k, attn_kv_elems(&s), &m, &var);
        cr_expect(fabs(m) < 0.06 && fabs(var * 2 - 1) < 0.1, "rho %g: mean %g var %g", rhos[r], m,
                  var);
        double c1 = autocorrelation(in.k, &s, 1), c2 = autocorrelation(in.k, &s, 2);
        cr_expect(fabs(c1 - rhos[r]) < 0.02, "rho %g: lag-1 correlation %g", rhos[r], c1);
        cr_expect(fabs(c2 - rhos[r] * rhos[r]) < 0.03, "rho %g: lag-2 correlation %g", rhos[r], c2);
        /* the query at position p is the key at p, for every head of the group */
        for (int64_t h = 0; h < s.H; h++)
            cr_expect(memcmp(in.q + h * s.T * s.D, in.k + h / 2 * s.S * s.D,
                             (size_t)(s.T * s.D) * 4) == 0,
                      "head %lld", (long long)h);
        release(&in);
    }
    /* decode-like T < S: the T queries are the newest positions */
    attn_shape d = shape(1, 2, 2, 3, 50, 8, true);
    ds_params p;
    const ds_ops *ds = dataset("local", &p, "");
    inputs in = make(ds, &d, &p, 5, 1);
    cr_expect(memcmp(in.q, in.k + 47 * 8, 3 * 8 * 4) == 0);
    release(&in);
}

/* Rank of the rows x [n, D] by Gaussian elimination with full pivoting (relative tolerance). */
static int rank_of(const float *x, int64_t n, int64_t D, double tol)
{
    double *a = malloc((size_t)(n * D) * sizeof *a);
    double top = 0;
    for (int64_t e = 0; e < n * D; e++) a[e] = x[e], top = tu_max(top, fabs(x[e]));
    int rank = 0;
    for (int64_t c = 0; c < D && rank < n; c++) {
        int64_t pr = -1, pc = -1;
        double best = 0;
        for (int64_t i = rank; i < n; i++)
            for (int64_t j = 0; j < D; j++)
                if (fabs(a[i * D + j]) > best) best = fabs(a[i * D + j]), pr = i, pc = j;
        if (best <= tol * top) break;
        for (int64_t j = 0; j < D; j++) { /* row pr to position rank */
            double t = a[rank * D + j];
            a[rank * D + j] = a[pr * D + j], a[pr * D + j] = t;
        }
        for (int64_t i = rank + 1; i < n; i++) {
            double f = a[i * D + pc] / a[rank * D + pc];
            for (int64_t j = 0; j < D; j++) a[i * D + j] -= f * a[rank * D + j];
            a[i * D + pc] = 0;
        }
        for (int64_t j = 0; j < D; j++) a[rank * D + j] = j == pc ? a[rank * D + j] : 0;
        rank++;
    }
    free(a);
    return rank;
}

Test(datasets, lowrank_has_the_stated_rank)
{
    const attn_shape s = shape(2, 4, 2, 64, 96, 16, false);
    ds_params p;
    const ds_ops *ds = dataset("lowrank", &p, "rank=5,noise=0");
    inputs in = make(ds, &s, &p, 9, 1);
    for (int64_t bg = 0; bg < s.B * s.Hkv; bg++) {
        cr_expect_eq(rank_of(in.k + bg * s.S * s.D, s.S, s.D, 1e-4), 5, "keys of head %lld",
                     (long long)bg);
        /* keys and the queries of the group together: the same 5-dim subspace */
        const int64_t b = bg / s.Hkv, g = bg % s.Hkv, h = g * (s.H / s.Hkv);
        float *both = malloc((size_t)((s.S + s.T) * s.D) * 4);
        memcpy(both, in.k + bg * s.S * s.D, (size_t)(s.S * s.D) * 4);
        memcpy(both + s.S * s.D, in.q + (b * s.H + h) * s.T * s.D, (size_t)(s.T * s.D) * 4);
        cr_expect_eq(rank_of(both, s.S + s.T, s.D, 1e-4), 5, "keys and queries of head %lld",
                     (long long)bg);
        free(both);
    }
    release(&in);
    ds = dataset("lowrank", &p, "rank=5,noise=0.3");
    in = make(ds, &s, &p, 9, 1);
    cr_expect_eq(rank_of(in.k, s.S, s.D, 1e-4), 16, "noise makes it full rank");
    double m, var;
    moments(in.k, attn_kv_elems(&s), &m, &var);
    cr_expect(fabs(m) < 0.1 && fabs(var - 1) < 0.2, "k: mean %g var %g", m, var);
    release(&in);
}

Test(datasets, clustered_rows_gather_around_centroids)
{
    const attn_shape s = shape(1, 2, 1, 150, 200, 64, false);
    ds_params p;
    const ds_ops *ds = dataset("clustered", &p, "clusters=4,spread=0.3");
    inputs in = make(ds, &s, &p, 11, 1);
    /* pairs of keys: same cluster (cos ~ 1/(1+0.09) = 0.92) a quarter of the time, else ~0 */
    int64_t close = 0, middle = 0, pairs = 0;
    double close_cos = 0;
    for (int64_t a = 0; a < s.S; a++)
        for (int64_t b = a + 1; b < s.S; b++, pairs++) {
            double c = cosine(in.k + a * s.D, in.k + b * s.D, s.D);
            if (c > 0.5) close++, close_cos += c;
            else if (c > 0.45) middle++;
        }
    cr_expect(fabs((double)close / pairs - 0.25) < 0.06, "same-cluster pairs %g",
              (double)close / pairs);
    cr_expect(fabs(close_cos / close - 1 / 1.09) < 0.03, "same-cluster cosine %g",
              close_cos / close);
    cr_expect_lt((double)middle / pairs, 0.01, "no gap between clusters");
    /* every query lies near the keys of one cluster */
    for (int64_t i = 0; i < s.H * s.T; i++) {
        double best = -1;
        for (int64_t j = 0; j < s.S; j++)
            best = fmax(best, cosine(in.q + i * s.D, in.k + j * s.D, s.D));
        cr_expect_gt(best, 0.8, "query %lld is near no key (%g)", (long long)i, best);
    }
    double m, var;
    moments(in.k, attn_kv_elems(&s), &m, &var);
    cr_expect(fabs(m) < 0.15 && fabs(var - 1) < 0.25, "k: mean %g var %g", m, var);
    release(&in);
}

Test(datasets, tied_is_q_equals_k_equals_v)
{
    attn_shape s = shape(2, 3, 3, 40, 40, 16, true);
    ds_params p;
    const ds_ops *ds = dataset("tied", &p, "");
    inputs in = make(ds, &s, &p, 13, 1);
    const size_t bytes = (size_t)attn_q_elems(&s) * 4;
    cr_expect(memcmp(in.q, in.k, bytes) == 0 && memcmp(in.k, in.v, bytes) == 0);
    double m, var;
    moments(in.q, attn_q_elems(&s), &m, &var);
    cr_expect(fabs(m) < 0.05 && fabs(var - 1) < 0.06, "mean %g var %g", m, var);
    release(&in);
    s = shape(1, 4, 2, 5, 9, 8, true); /* GQA, T < S: q[h] = the newest keys of its group */
    in = make(ds, &s, &p, 13, 1);
    for (int64_t h = 0; h < 4; h++)
        cr_expect(memcmp(in.q + h * 5 * 8, in.k + (h / 2 * 9 + 4) * 8, 5 * 8 * 4) == 0);
    cr_expect(memcmp(in.k, in.v, (size_t)attn_kv_elems(&s) * 4) == 0);
    release(&in);
}

static ds_plant *plants_of(const ds_ops *ds, const attn_shape *s, const ds_params *p, uint64_t seed,
                           int64_t *n)
{
    *n = ds->plants(s, p, seed, NULL);
    ds_plant *pl = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *pl);
    cr_assert_eq(ds->plants(s, p, seed, pl), *n);
    return pl;
}

/* Planted keys score exactly ln(keys seen) + margin, sit where distance says, are distinct per
 * KV head, and take most of the exact attention; values have norm sqrt(D). */
static void check_needle(const attn_shape *s, const char *sets, int64_t min_plants,
                         int64_t max_plants)
{
    ds_params p;
    const ds_ops *ds = dataset("needle", &p, sets);
    inputs in = make(ds, s, &p, 17, 1);
    int64_t n;
    ds_plant *pl = plants_of(ds, s, &p, 17, &n);
    cr_expect(n >= min_plants && n <= max_plants, "%s: %lld plants", sets, (long long)n);
    const int64_t D = s->D, group = s->H / s->Hkv,
                  dist = (int64_t)p.v[ds_param_index(ds, "distance")];
    const double margin = p.v[ds_param_index(ds, "margin")];
    double weight = 0;
    for (int64_t e = 0; e < n; e++) {
        const int64_t i = pl[e].row % s->T, bh = pl[e].row / s->T;
        const int64_t bg = bh / s->H * s->Hkv + bh % s->H / group, pos = i + s->S - s->T;
        if (e) cr_expect_gt(pl[e].row, pl[e - 1].row, "rows in order");
        if (dist >= 0) cr_expect_eq(pl[e].key, pos - dist);
        else cr_expect(pl[e].key >= 0 && pl[e].key < (s->causal ? pos + 1 : s->S));
        for (int64_t f = 0; f < e; f++) {
            const int64_t bhf = pl[f].row / s->T;
            if (bhf / s->H * s->Hkv + bhf % s->H / group == bg)
                cr_expect_neq(pl[f].key, pl[e].key, "two plants share a key");
        }
        const float *kj = in.k + (bg * s->S + pl[e].key) * D, *qi = in.q + pl[e].row * D;
        double dot = 0;
        for (int64_t d = 0; d < D; d++) dot += (double)qi[d] * kj[d];
        const double want = log((double)attn_causal_keys(s, i)) + margin;
        cr_expect(fabs(dot * s->scale - want) < 1e-4 * want, "planted score %g, want %g",
                  dot * s->scale, want);
        /* exact attention weight on the planted key */
        double mx = -INFINITY, sum = 0;
        double *sc = malloc((size_t)s->S * sizeof *sc);
        for (int64_t j = 0; j < s->S; j++) {
            double x = 0;
            for (int64_t d = 0; d < D; d++) x += (double)qi[d] * in.k[(bg * s->S + j) * D + d];
            sc[j] = attn_causal_allows(s, i, j) ? x * s->scale : -INFINITY;
            mx = fmax(mx, sc[j]);
        }
        for (int64_t j = 0; j < s->S; j++) sum += exp(sc[j] - mx);
        weight += exp(sc[pl[e].key] - mx) / sum;
        free(sc);
    }
    if (n) {
        const double expect = 1 / (1 + exp(0.5 - margin));
        cr_expect(fabs(weight / n - expect) < 0.02, "%s: mean planted weight %g, stated %g", sets,
                  weight / n, expect);
    }
    for (int64_t r = 0; r < s->B * s->Hkv * s->S; r++) {
        double norm = 0;
        for (int64_t d = 0; d < D; d++) norm += (double)in.v[r * D + d] * in.v[r * D + d];
        cr_expect(fabs(sqrt(norm) - sqrt((double)D)) < 1e-5 * D, "value %lld norm %g", (long long)r,
                  sqrt(norm));
    }
    free(pl);
    release(&in);
}

/* D = 64 as in the default sweep: every planted key (norm ~ ln(n) + margin) is also in the
 * haystack of the other queries; at small D it takes a visible share of their attention and the
 * planted weight falls below the stated value (at D = 16 with 32 plants per KV head: 0.93). */
Test(datasets, needle_plants_what_it_states)
{
    const attn_shape prefill = shape(1, 4, 4, 256, 256, 64, true);
    check_needle(&prefill, "", 64, 64);                        /* uniform distance */
    check_needle(&prefill, "distance=100,needles=20", 80, 80); /* 156 eligible per head */
    check_needle(&prefill, "distance=0,margin=2", 64, 64);     /* its own position */
    check_needle(&prefill, "distance=256", 0, 0);              /* beyond every query: none */
    const attn_shape cross = shape(2, 2, 2, 50, 300, 64, false);
    check_needle(&cross, "", 64, 64);
    check_needle(&cross, "distance=280", 64, 64); /* positions 250..299: 20 eligible per head */
    /* grouped heads, fixed distance: two heads of a group may pick the same query, whose key
     * only one of them keeps */
    const attn_shape gqa = shape(1, 4, 2, 256, 256, 64, true);
    check_needle(&gqa, "distance=10", 32, 64);
    check_needle(&gqa, "", 64, 64);
    /* decode (T = 1): the one query of each head is planted; with one KV head for 4 query heads
     * a fixed distance leaves one plant per KV head, a uniform one plants every head */
    check_needle(&(attn_shape){.B = 1,
                               .H = 4,
                               .Hkv = 4,
                               .T = 1,
                               .S = 500,
                               .D = 64,
                               .causal = true,
                               .scale = 1 / 8.0,
                               .decode = true},
                 "", 4, 4);
    const attn_shape mqa = shape(1, 4, 1, 1, 500, 64, true);
    check_needle(&mqa, "distance=10", 1, 1);
    check_needle(&mqa, "", 4, 4);
    check_needle(&mqa, "needles=3", 4, 4);
}

Test(datasets, file_reads_the_newest_queries_of_the_file)
{
    char dir[] = "/tmp/attnbench-ds-XXXXXX", path[256], bad[256], msg[ATTN_MSG_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/qkv.h5", dir);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    const int64_t qd[4] = {2, 4, 6, 3}, kd[4] = {2, 2, 9, 3};
    float *q = tu_random(2 * 4 * 6 * 3, 1, 1), *k = tu_random(2 * 2 * 9 * 3, 1, 2);
    float *v = tu_random(2 * 2 * 9 * 3, 1, 3);
    cr_assert_eq(bench_tensor_write(path, "q", qd, q, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(path, "k", kd, k, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(path, "v", kd, v, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(bad, "q", qd, q, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(bad, "k", kd, k, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(bad, "v", qd, q, msg, sizeof msg), ATTN_OK, "%s", msg);

    const ds_ops *ds;
    ds_params p;
    char item[300];
    snprintf(item, sizeof item, "file=%s", path);
    cr_assert_eq(ds_parse(item, &ds, &p, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_str_eq(ds->name, "file");
    cr_assert_str_eq(p.path, path);
    char fmt[300], want[300];
    ds_params_format(ds, &p, fmt, sizeof fmt);
    snprintf(want, sizeof want, "path=%s", path);
    cr_expect_str_eq(fmt, want);
    for (int64_t T = 0; T <= 6; T += 2) { /* 0: all six queries */
        attn_shape s = shape(1, 1, 1, T, 1, 1, true);
        cr_assert_eq(ds->shape(&p, &s, msg, sizeof msg), ATTN_OK, "%s", msg);
        const int64_t t = T ? T : 6;
        cr_expect(s.B == 2 && s.H == 4 && s.Hkv == 2 && s.T == t && s.S == 9 && s.D == 3);
        cr_expect_float_eq(s.scale, 1 / sqrt(3.0), 1e-12);
        inputs in = make(ds, &s, &p, 0, 1);
        for (int64_t bh = 0; bh < 8; bh++)
            cr_expect(memcmp(in.q + bh * t * 3, q + (bh * 6 + 6 - t) * 3, (size_t)t * 12) == 0);
        cr_expect(memcmp(in.k, k, sizeof(float) * 2 * 2 * 9 * 3) == 0);
        cr_expect(memcmp(in.v, v, sizeof(float) * 2 * 2 * 9 * 3) == 0);
        release(&in);
    }
    attn_shape s = shape(1, 1, 1, 7, 1, 1, true);
    cr_expect_eq(ds->shape(&p, &s, msg, sizeof msg), ATTN_EINVAL, "7 of 6 queries");
    cr_expect(strstr(msg, "6 queries") != NULL, "%s", msg);
    p.path = bad;
    s.T = 0;
    cr_expect_eq(ds->shape(&p, &s, msg, sizeof msg), ATTN_EINVAL, "v shaped like q");
    cr_expect(strstr(msg, "do not fit") != NULL, "%s", msg);
    snprintf(item, sizeof item, "%s/none.h5", dir);
    p.path = item;
    cr_expect_eq(ds->shape(&p, &s, msg, sizeof msg), ATTN_EINVAL, "missing file");
    cr_expect_eq(ds_parse("file", &ds, &p, msg, sizeof msg), ATTN_EINVAL, "file without a path");
    cr_expect_eq(ds_parse("local=3", &ds, &p, msg, sizeof msg), ATTN_EINVAL, "a path for local");
    cr_expect_eq(ds_parse("nope", &ds, &p, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "unknown dataset 'nope'") != NULL, "%s", msg);
    free(q), free(k), free(v);
    snprintf(item, sizeof item, "rm -rf '%s'", dir);
    cr_expect_eq(system(item), 0);
}

Test(datasets, parameters_are_checked_and_formatted)
{
    char msg[ATTN_MSG_LEN], buf[160];
    const ds_ops *ds = ds_find("local");
    ds_params p = ds_params_defaults(ds);
    ds_params_format(ds, &p, buf, sizeof buf);
    cr_expect_str_eq(buf, "rho=0.9,temperature=1");
    cr_expect_eq(ds_param_set(ds, &p, "rho", "0.25", msg, sizeof msg), ATTN_OK, "%s", msg);
    ds_params_format(ds, &p, buf, sizeof buf);
    cr_expect_str_eq(buf, "rho=0.25,temperature=1");
    cr_expect_eq(ds_param_set(ds, &p, "rho", "1.5", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "local") && strstr(msg, "rho=1.5") && strstr(msg, "[0, 1]"), "%s", msg);
    cr_expect_eq(ds_param_set(ds, &p, "window", "3", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "dataset 'local' has no parameter 'window'") && strstr(msg, "rho"), "%s",
              msg);
    ds = ds_find("needle");
    p = ds_params_defaults(ds);
    cr_expect_eq(ds_param_set(ds, &p, "needles", "2.5", msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "integer") != NULL, "%s", msg);
    cr_expect_eq(ds_param_set(ds, &p, "distance", "-2", msg, sizeof msg), ATTN_EINVAL);
}

/* ---- the CLI ---- */

/* Run `bench ARGS` with stdout and stderr into out; returns the exit status. */
static int run_bench(char *out, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int st = tu_vbench("", out, len, NULL, 0, fmt, ap);
    va_end(ap);
    return st;
}

#define SMALL                                                                                      \
    "--kinds full --heads 2 --head-dim 32 --reps 1 --warmup 0 --min-time 0 --threads 1 --quiet"

Test(datasets, cli_lists_sweeps_and_records_dataset_parameters)
{
    static char out[1 << 16];
    cr_assert_eq(run_bench(out, sizeof out, "datasets"), 0, "%s", out);
    for (int n = 0; n < ds_count(); n++)
        cr_expect(strstr(out, ds_at(n)->name) != NULL, "bench datasets lacks %s", ds_at(n)->name);
    cr_expect(strstr(out, "rho") && !strstr(out, "AR(1) sequence over positions"), "%s", out);
    cr_assert_eq(run_bench(out, sizeof out, "datasets --verbose"), 0, "%s", out);
    cr_expect(strstr(out, "AR(1) sequence over positions") != NULL, "%s", out);

    char dir[] = "/tmp/attnbench-dscli-XXXXXX", file[256], msg[ATTN_MSG_LEN];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/r.h5", dir);
    cr_assert_eq(run_bench(out, sizeof out,
                           "sweep " SMALL " --n 40 --causal 1 --dataset local,needle "
                           "--set rho=0.5,0.8 --set distance=3 --out %s",
                           file),
                 0, "%s", out);
    bench_point *pts;
    int64_t np;
    cr_assert_eq(bench_store_read_points(file, &pts, &np, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(np, 3);
    cr_expect_str_eq(pts[0].dataset_params, "rho=0.5,temperature=1");
    cr_expect_str_eq(pts[1].dataset_params, "rho=0.8,temperature=1");
    cr_expect_str_eq(pts[2].dataset, "needle");
    cr_expect_str_eq(pts[2].dataset_params, "needles=16,distance=3,margin=4");
    cr_expect_eq(pts[0].retrieval_queries, 0);
    cr_expect(isnan(pts[0].retrieval));
    cr_expect_eq(pts[2].retrieval_queries, 2 * 16);
    cr_expect_eq(pts[2].retrieval, 1.0, "full retrieves every needle: %g", pts[2].retrieval);
    free(pts);

    /* no --dataset: gaussian, local and needle */
    snprintf(file, sizeof file, "%s/d.h5", dir);
    cr_assert_eq(run_bench(out, sizeof out, "sweep " SMALL " --n 16 --causal 0 --out %s", file), 0,
                 "%s", out);
    cr_assert_eq(bench_store_read_points(file, &pts, &np, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(np, 3);
    cr_expect(!strcmp(pts[0].dataset, "gaussian") && !strcmp(pts[1].dataset, "local") &&
              !strcmp(pts[2].dataset, "needle"));
    free(pts);

    /* a file dataset fixes the shape: one point per causal value; a shape option, which would
     * not apply, is refused (it applies when a generated dataset is swept beside the file) */
    char qkv[256];
    snprintf(qkv, sizeof qkv, "%s/qkv.h5", dir);
    const int64_t qd[4] = {1, 2, 5, 4}, kd[4] = {1, 1, 7, 4};
    float *x = tu_random(64, 1, 1);
    cr_assert_eq(bench_tensor_write(qkv, "q", qd, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(qkv, "k", kd, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(qkv, "v", kd, x + 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    free(x);
    snprintf(file, sizeof file, "%s/f.h5", dir);
    cr_expect_eq(run_bench(out, sizeof out, "sweep " SMALL " --n 16,32 --dataset file=%s --out %s",
                           qkv, file),
                 2, "%s", out);
    cr_expect(strstr(out, "--n 16,32 does not apply") != NULL, "%s", out);
    cr_expect_eq(access(file, F_OK), -1, "nothing written");
    cr_assert_eq(run_bench(out, sizeof out,
                           "sweep --kinds full --reps 1 --warmup 0 --min-time 0 --threads 1 "
                           "--quiet --causal 0,1 --mode prefill,decode --q-len 2 --dataset "
                           "file=%s --out %s",
                           qkv, file),
                 0, "%s", out);
    cr_assert_eq(bench_store_read_points(file, &pts, &np, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(np, 3, "prefill causal 0 and 1, decode");
    for (int64_t e = 0; e < np; e++) {
        cr_expect(pts[e].heads == 2 && pts[e].kv_heads == 1 && pts[e].kv_len == 7 &&
                  pts[e].head_dim == 4 && pts[e].q_len == (e < 2 ? 5 : 2));
        cr_expect_leq(pts[e].rel_err, 1e-5);
        cr_expect(strstr(pts[e].dataset_params, "path=") != NULL);
    }
    free(pts);

    /* bench run: NAME=VALUE of the dataset; refusals */
    cr_assert_eq(run_bench(out, sizeof out,
                           "run full --dataset needle needles=3 --n 64 --heads 2 "
                           "--head-dim 16 --reps 1 --warmup 0 --min-time 0 --threads 1"),
                 0, "%s", out);
    cr_expect(strstr(out, "100.0%/6") != NULL, "retrieval column: %s", out);
    cr_expect_eq(run_bench(out, sizeof out, "run full rho=0.5 --n 8"), 2, "%s", out);
    cr_expect(strstr(out, "nor has dataset 'gaussian'") != NULL, "%s", out);
    cr_expect_eq(run_bench(out, sizeof out, "sweep " SMALL " --dataset gaussian --set rho=0.5"), 2);
    cr_expect(strstr(out, "no swept kind has a parameter 'rho'") != NULL, "%s", out);
    cr_expect_eq(run_bench(out, sizeof out, "sweep " SMALL " --dataset local --set rho=0.5,2"), 2);
    cr_expect(strstr(out, "out of range") != NULL, "%s", out);
    cr_expect_eq(run_bench(out, sizeof out, "sweep " SMALL " --dataset file"), 2);
    cr_expect(strstr(out, "file=PATH") != NULL, "%s", out);
    cr_expect_eq(run_bench(out, sizeof out, "run full --dataset file=%s --heads 4", qkv), 2);
    cr_expect(strstr(out, "gives the shape") != NULL, "%s", out);
    snprintf(file, sizeof file, "rm -rf '%s'", dir);
    cr_expect_eq(system(file), 0);
}
