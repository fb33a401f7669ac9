/* machine.h — facts about this machine and build, recorded with every run; the sgemm yardstick. */
#ifndef BENCH_MACHINE_H
#define BENCH_MACHINE_H

#include "record.h"

/* Fill the machine/build fields of a run (host, CPU, build, OpenBLAS, HDF5, commit, time). */
void bench_machine_facts(bench_run *run);
/* OpenBLAS sgemm GFLOP/s for C = A·B, n×n×n, with `threads` BLAS threads: median of reps after
 * one warm-up. Returns NaN when the matrices cannot be allocated. */
double bench_sgemm_gflops(int threads, int n, int reps);
/* Memory read bandwidth in GB/s (1e9 bytes/s): a STREAM-like parallel sum over `bytes` (well
 * beyond the caches: 1 GiB, over 3x the 300 MiB L3 of the largest machine seen), median of reps
 * after one warm-up, `threads` OpenMP threads. NaN when the array cannot be allocated. */
double bench_mem_bandwidth_gbs(int threads, size_t bytes, int reps);
enum { BENCH_BANDWIDTH_BYTES = 1 << 30, BENCH_BANDWIDTH_REPS = 5 };
/* Logical CPUs online. */
int bench_cpu_count(void);
/* Is the address-space limit (ulimit -v, RLIMIT_AS) enough for OpenBLAS? Each OpenBLAS thread
 * reserves a 128 MiB buffer (and a 64 MiB malloc arena), and when it cannot, OpenBLAS retries
 * forever (blas_memory_alloc in OpenBLAS's driver/others/memory.c): the process then hangs,
 * at the latest in OpenBLAS's exit handler, which waits for its threads. 0 when the limit is
 * absent or large enough; -1 with msg saying what is needed otherwise: the caller must then
 * leave with _exit(), not exit(). */
int bench_address_space_check(char *msg, size_t msg_len);

#endif
