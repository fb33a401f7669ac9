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
 * beyond the caches: bench_bandwidth_bytes), median of reps after one warm-up, `threads` OpenMP
 * threads. NaN when the array cannot be allocated. */
double bench_mem_bandwidth_gbs(int threads, size_t bytes, int reps);
enum { BENCH_BANDWIDTH_REPS = 5 };
/* The size of the largest cache of this machine in bytes (the last level: the highest level in
 * /sys/devices/system/cpu/cpu0/cache, which a virtual machine reports as the guest sees it; else
 * sysconf's L3), 0 when unknown. */
uint64_t bench_llc_bytes(void);
/* The bandwidth yardstick's buffer for a last-level cache of llc bytes (0: unknown, taken as
 * 32 MiB) and available bytes of memory (0: unknown): 8 x llc, so that at most an eighth of it
 * could be served from the cache whatever the replacement policy; then at least 64 MiB and at
 * most 1 GiB (more reads no differently); then at most an eighth of the available memory, but
 * never under 2 x llc (a buffer the cache holds measures the cache). A multiple of 4 KiB. */
size_t bench_bandwidth_bytes(uint64_t llc, uint64_t available);
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
