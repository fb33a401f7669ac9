/* machine.h — facts about this machine and build, recorded with every run; the sgemm yardstick. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include "results.h"

/* Fill the machine/build fields of a run (host, CPU, build, OpenBLAS, HDF5, commit, time). */
void bench_machine_facts(bench_run *run);
/* OpenBLAS sgemm GFLOP/s for C = A·B, n×n×n, with `threads` BLAS threads: median of reps after
 * one warm-up. Returns NaN when the matrices cannot be allocated. */
double bench_sgemm_gflops(int threads, int n, int reps);
/* Logical CPUs online. */
int bench_cpu_count(void);

#endif
