/* blas_core.h — OpenBLAS on CPUs newer than it knows: pick its kernels from the CPU's features. */
#ifndef BENCH_BLAS_CORE_H
#define BENCH_BLAS_CORE_H

/* Call first in main(). When OpenBLAS fell back to its generic "Prescott" kernels (it does not
 * know this CPU model) and OPENBLAS_CORETYPE is unset, re-executes the program with
 * OPENBLAS_CORETYPE naming the kernels the CPU's features run (SkylakeX: AVX-512 F/CD/BW/DQ/VL;
 * Haswell: AVX2 + FMA). Returns only when nothing needs doing or the re-execution failed. */
void bench_blas_core_select(char **argv);

/* "" normally; ", set by bench" when this process runs the core bench_blas_core_select chose;
 * a warning when the user's OPENBLAS_CORETYPE names a core without AVX-512 kernels on a CPU that
 * runs them (sgemm then reads about half what the CPU gives, so %sgemm flatters) */
const char *bench_blas_core_note(void);

#endif
