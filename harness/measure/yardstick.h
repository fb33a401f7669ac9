/*
 * yardstick.h — what a point's speed is read against, per (threads, ISA): the FMA peak of the
 * kernel set (attention/kernels/peak_body.h's loop on every thread at once), OpenBLAS sgemm and the
 * memory read bandwidth (machine.h) on that many threads. Measured once per process and
 * combination (a sweep with --threads and --isa axes measures each combination it meets), then
 * recorded with every point (/points: peak_gflops, sgemm_gflops, bandwidth_gbs, pct_peak,
 * pct_sgemm).
 */
#ifndef BENCH_YARDSTICK_H
#define BENCH_YARDSTICK_H

#include "attn_isa.h"
#include "record.h"

/* FMA peak GFLOP/s of isa's kernel set on `threads` OpenMP threads at once: each thread runs the
 * peak loop for about seconds_per_rep; best of reps (after a calibration on one thread). NaN when
 * isa is not supported here. Many short repetitions: on a busy machine the scheduler takes the
 * core away for tens of ms at a time, and a short repetition is more often left whole. */
double bench_peak_gflops(attn_isa isa, int threads, double seconds_per_rep, int reps);
enum { BENCH_PEAK_REPS = 20 };
#define BENCH_PEAK_SECONDS 0.005

/* How much the yardsticks of `run`, `sweep` and `bench info` measure: sgemm 2048^3 x 5 (bench
 * info: its options), read bandwidth x 5 over a buffer sized to this machine (8 x its last-level
 * cache, 64 MiB to 1 GiB, at most an eighth of the available memory: bench_bandwidth_bytes,
 * machine.h), peak 20 x 5 ms, about 2 s of a process. With the
 * environment variable BENCH_TEST_QUICK_YARDSTICKS=1 (a test hook: the test suite's environment)
 * about 30 times less: the same code paths and columns, imprecise figures; the suite starts a few
 * hundred processes and checks what they record, not this machine's speed. */
typedef struct bench_yardstick_size {
    int sgemm_n, sgemm_reps;
    size_t bandwidth_bytes;
    int bandwidth_reps;
    double peak_seconds;
    int peak_reps;
} bench_yardstick_size;
bench_yardstick_size bench_yardstick_size_in_force(void);

/* The yardsticks of one (threads, isa). */
typedef struct bench_yardstick {
    int threads;
    attn_isa isa;
    double peak_gflops, sgemm_gflops, bandwidth_gbs;
} bench_yardstick;

/* Take sgemm and bandwidth already measured on `threads` (the run's) instead of measuring them
 * again for that thread count. */
void bench_yardstick_seed(int threads, double sgemm_gflops, double bandwidth_gbs);
/* The yardsticks of (threads, isa) in this process: measured on first use (peak per
 * combination; sgemm and bandwidth per thread count), then remembered. */
bench_yardstick bench_yardstick_get(int threads, attn_isa isa);
/* Fill pt's yardstick columns for its threads and isa (pt->isa names it; measured now if not
 * yet) and pct_peak, pct_sgemm from its GFLOP/s (NaN when a yardstick or the rate is missing). */
void bench_yardstick_fill(bench_point *pt);

#endif
