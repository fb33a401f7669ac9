/* test_backend.c — a point is allocated, copied and timed through its execution context's backend
 * (attn_exec.backend, harness/measure/point.c).
 *
 * A test backend keeps its memory apart from the host's (host_memory false: blocks of its own,
 * counted), copies with memcpy (counted) and reads a fake clock that advances 1 ms per reading.
 * Points run through it must give bit for bit the outputs and gradients of the CPU backend (the
 * harness copied the inputs in and the results out), release every block they took, time every
 * repetition on its clock (each run's sync before the second reading), and the CPU backend must
 * copy nothing. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "point.h"
#include "test_util.h"

static struct {
    int64_t live, allocs, copies, syncs, readings;
    void *blocks[64];
} dev;

static void *dev_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) return NULL;
    for (int i = 0; i < 64; i++)
        if (!dev.blocks[i]) {
            dev.blocks[i] = p;
            dev.live++, dev.allocs++;
            return p;
        }
    cr_assert_fail("more than 64 blocks live on the test backend");
    return NULL;
}

static void dev_release(void *p)
{
    if (!p) return;
    for (int i = 0; i < 64; i++)
        if (dev.blocks[i] == p) {
            dev.blocks[i] = NULL;
            dev.live--;
            free(p);
            return;
        }
    cr_assert_fail("released a block the test backend did not allocate");
}

static void dev_copy(void *dst, const void *src, size_t bytes)
{
    dev.copies++;
    memcpy(dst, src, bytes);
}

static void dev_sync(void) { dev.syncs++; }

static double dev_now_s(void) { return 1e-3 * (double)dev.readings++; }

static const attn_backend apart = {.name = "apart",
                                   .host_memory = false,
                                   .alloc = dev_alloc,
                                   .release = dev_release,
                                   .copy = dev_copy,
                                   .sync = dev_sync,
                                   .now_s = dev_now_s};

/* A point of kind on shape s (generated inputs, seed 5, 3 timed runs) on backend be: its output
 * (and gradients when pass is not forward), which the caller frees. */
static bench_point run_on(const attn_backend *be, const char *kind, attn_shape s, bench_pass pass,
                          float **out, float *grads[3])
{
    const attn_ops *ops = attn_kind_find(kind);
    cr_assert_not_null(ops, "%s", kind);
    bench_point_spec spec = {.ops = ops,
                             .params = attn_params_defaults(attn_kind_params(ops)),
                             .shape = s,
                             .exec = attn_exec_init(2),
                             .dataset = ds_find("gaussian"),
                             .seed = 5,
                             .accuracy_rows = 8,
                             .pass = pass,
                             .keep_grads = pass != BENCH_PASS_FORWARD ? grads : NULL,
                             .timing = {.warmup = 1, .min_reps = 3, .max_reps = 3}};
    spec.exec.backend = be;
    spec.dataset_params = ds_params_defaults(spec.dataset);
    attn_params_resolve(ops, &spec.shape, &spec.params);
    bench_point pt;
    double *samples;
    int64_t n;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_point_run(&spec, NULL, NULL, NULL, &pt, &samples, &n, out, msg, sizeof msg),
                 ATTN_OK, "%s on %s: %s", kind, be->name, msg);
    cr_assert_eq(n, 3);
    free(samples);
    return pt;
}

static void same_bits(const float *a, const float *b, int64_t n, const char *what)
{
    cr_assert_not_null(a, "%s", what);
    cr_assert_not_null(b, "%s", what);
    cr_expect_eq(memcmp(a, b, (size_t)n * sizeof *a), 0, "%s differs between the backends", what);
}

/* kind on s, forward or with its gradients, on both backends: the same bits, no block left. */
static void check_kind(const char *kind, attn_shape s, bench_pass pass)
{
    float *cpu_out = NULL, *dev_out = NULL, *cpu_g[3] = {0}, *dev_g[3] = {0};
    memset(&dev, 0, sizeof dev);
    bench_point a = run_on(&attn_backend_cpu, kind, s, pass, &cpu_out, cpu_g);
    cr_expect_eq(dev.allocs + dev.copies + dev.readings, 0, "the CPU backend used the test one");
    bench_point b = run_on(&apart, kind, s, pass, &dev_out, dev_g);
    cr_expect_eq(dev.live, 0, "%s: %lld blocks left on the backend", kind, (long long)dev.live);
    cr_expect_gt(dev.allocs, 0);
    /* in: q, k, v (and dout); out: o (and dq, dk, dv) */
    cr_expect_geq(dev.copies, pass != BENCH_PASS_FORWARD ? 8 : 4, "%s: %lld copies", kind,
                  (long long)dev.copies);
    cr_expect_geq(dev.syncs, 4, "a sync per run, warm-up included");
    cr_expect_float_eq(b.time_median_s, 1e-3, 1e-12, "timed on the backend's clock");
    cr_expect_float_eq(b.time_max_s, 1e-3, 1e-12);
    cr_expect_eq(a.rel_err, b.rel_err, "%s: accuracy measured on the copied-out output", kind);
    same_bits(cpu_out, dev_out, attn_q_elems(&s), "out");
    for (int g = 0; pass != BENCH_PASS_FORWARD && g < 3; g++)
        same_bits(cpu_g[g], dev_g[g], g ? attn_kv_elems(&s) : attn_q_elems(&s), "a gradient");
    free(cpu_out);
    free(dev_out);
    for (int g = 0; g < 3; g++) free(cpu_g[g]), free(dev_g[g]);
}

Test(backend, forward_through_a_separate_memory)
{
    check_kind("full", attn_shape_init(1, 4, 2, 33, 33, 16, true), BENCH_PASS_FORWARD);
    check_kind("window", attn_shape_init(2, 2, 2, 70, 70, 8, false), BENCH_PASS_FORWARD);
    check_kind("linformer", attn_shape_init(1, 2, 2, 40, 40, 8, false), BENCH_PASS_FORWARD);
}

Test(backend, gradients_through_a_separate_memory)
{
    check_kind("full", attn_shape_init(1, 2, 1, 21, 21, 8, true), BENCH_PASS_BACKWARD);
    check_kind("window", attn_shape_init(1, 2, 2, 30, 30, 8, true), BENCH_PASS_TRAIN);
}

Test(backend, decode_and_low_precision_through_a_separate_memory)
{
    attn_shape s = attn_shape_init(1, 4, 2, 1, 300, 16, true);
    s.decode = true;
    check_kind("full", s, BENCH_PASS_FORWARD);
    attn_shape h = attn_shape_init(1, 2, 2, 17, 17, 16, false);
    h.dtype = ATTN_BF16;
    check_kind("full", h, BENCH_PASS_FORWARD);
}
