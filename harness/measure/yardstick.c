/* yardstick.c — the FMA peak yardstick and the per-(threads, ISA) yardstick memo (yardstick.h).
 * Threads: the peak loop runs on `threads` OpenMP threads; sgemm and bandwidth as machine.c. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "memory.h"
#include "stats.h"
#include "yardstick.h"

/* Seconds of one round of the peak loop on all threads at once, iters rounds each; *sink keeps
 * the results alive. */
static double peak_round_s(attn_isa isa, int threads, int64_t iters, float *sink)
{
    float total = 0;
    const double t0 = bench_now_s();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += attn_isa_peak_loop(isa, iters, 1.0f + 1e-3f * (float)omp_get_thread_num());
    const double t = bench_now_s() - t0;
    *sink += total;
    return t;
}

double bench_peak_gflops(attn_isa isa, int threads, double seconds_per_rep, int reps)
{
    const int64_t per_iter = attn_isa_peak_flops_per_iter(isa);
    if (!attn_isa_supported(isa) || per_iter <= 0 || threads < 1 || reps < 1) return NAN;
    float sink = 0;
    /* calibrate on this thread alone (a parallel region's start-up would dominate short
     * rounds): grow the rounds until one takes a tenth of the target, then scale up */
    int64_t iters = 1 << 12;
    double t = 0;
    while (iters < ((int64_t)1 << 40)) {
        t = INFINITY; /* the fastest of 3: a try the scheduler interrupted says nothing */
        for (int k = 0; k < 3; k++) {
            const double t0 = bench_now_s();
            sink += attn_isa_peak_loop(isa, iters, 1.0f);
            t = fmin(t, bench_now_s() - t0);
        }
        if (t >= seconds_per_rep / 10) break;
        iters *= 4;
    }
    if (t > 0 && t < seconds_per_rep) iters = (int64_t)((double)iters * seconds_per_rep / t) + 1;
    double best = 0;
    for (int r = 0; r < reps; r++) {
        t = peak_round_s(isa, threads, iters, &sink);
        const double g = (double)iters * (double)per_iter * threads / t / 1e9;
        if (g > best) best = g;
    }
    volatile float keep = sink; /* the loops' results are used */
    (void)keep;
    return best;
}

bench_yardstick_size bench_yardstick_size_in_force(void)
{
    const char *quick = getenv("BENCH_TEST_QUICK_YARDSTICKS");
    if (quick && strcmp(quick, "1") == 0)
        return (bench_yardstick_size){.sgemm_n = 512,
                                      .sgemm_reps = 3,
                                      .bandwidth_bytes = (size_t)32 << 20,
                                      .bandwidth_reps = 3,
                                      .peak_seconds = 0.001,
                                      .peak_reps = 3};
    return (bench_yardstick_size){.sgemm_n = 2048,
                                  .sgemm_reps = 5,
                                  .bandwidth_bytes =
                                      bench_bandwidth_bytes(bench_llc_bytes(),
                                                            bench_available_memory_bytes(NULL)),
                                  .bandwidth_reps = BENCH_BANDWIDTH_REPS,
                                  .peak_seconds = BENCH_PEAK_SECONDS,
                                  .peak_reps = BENCH_PEAK_REPS};
}

enum { MAX_MEMO = 64 };
static bench_yardstick memo[MAX_MEMO]; /* peak: per (threads, isa); NaN until measured */
static int nmemo;
static struct {
    int threads;
    double sgemm, bandwidth;
} blas_memo[MAX_MEMO]; /* per threads */
static int nblas;

void bench_yardstick_seed(int threads, double sgemm_gflops, double bandwidth_gbs)
{
    for (int i = 0; i < nblas; i++)
        if (blas_memo[i].threads == threads) return;
    if (nblas == MAX_MEMO) return;
    blas_memo[nblas].threads = threads;
    blas_memo[nblas].sgemm = sgemm_gflops, blas_memo[nblas].bandwidth = bandwidth_gbs;
    nblas++;
}

bench_yardstick bench_yardstick_get(int threads, attn_isa isa)
{
    for (int i = 0; i < nmemo; i++)
        if (memo[i].threads == threads && memo[i].isa == isa) return memo[i];
    bench_yardstick y = {.threads = threads, .isa = isa};
    int b = 0;
    while (b < nblas && blas_memo[b].threads != threads) b++;
    const bench_yardstick_size size = bench_yardstick_size_in_force();
    if (b == nblas) { /* measured now, for this thread count */
        const double sgemm = bench_sgemm_gflops(threads, size.sgemm_n, size.sgemm_reps);
        bench_yardstick_seed(threads, sgemm,
                             bench_mem_bandwidth_gbs(threads, size.bandwidth_bytes,
                                                     size.bandwidth_reps));
    }
    y.sgemm_gflops = b < nblas ? blas_memo[b].sgemm : NAN;
    y.bandwidth_gbs = b < nblas ? blas_memo[b].bandwidth : NAN;
    y.peak_gflops = bench_peak_gflops(isa, threads, size.peak_seconds, size.peak_reps);
    if (nmemo < MAX_MEMO) memo[nmemo++] = y;
    return y;
}

void bench_yardstick_fill(bench_point *pt)
{
    attn_isa isa;
    if (!attn_isa_parse(pt->isa, &isa)) isa = attn_isa_current();
    const bench_yardstick y = bench_yardstick_get(pt->threads > 0 ? pt->threads : 1, isa);
    pt->peak_gflops = y.peak_gflops;
    pt->sgemm_gflops = y.sgemm_gflops;
    pt->bandwidth_gbs = y.bandwidth_gbs;
    const bool rate = pt->gflops_per_s > 0;
    pt->pct_peak = rate && y.peak_gflops > 0 ? 100 * pt->gflops_per_s / y.peak_gflops : NAN;
    pt->pct_sgemm = rate && y.sgemm_gflops > 0 ? 100 * pt->gflops_per_s / y.sgemm_gflops : NAN;
}
