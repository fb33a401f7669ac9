/*
 * bench_mpi.h — MPI for bench under mpirun (built with BENCH_HAVE_MPI): initialised only when the
 * process was launched by mpirun (its environment says so), so a plain `bench` never touches MPI
 * and a build without MPI has one rank. docs/distributed.md.
 */
#ifndef BENCH_MPI_H
#define BENCH_MPI_H

/* MPI_Init_thread (MPI_THREAD_FUNNELED: ring tests its messages from OpenMP's thread 0) when
 * launched by mpirun; nothing otherwise. */
void bench_mpi_init(int *argc, char ***argv);
/* This process's rank and the number of ranks (0 and 1 without MPI). */
int bench_mpi_rank(void);
int bench_mpi_size(void);
/* MPI_Finalize when bench_mpi_init initialised MPI. */
void bench_mpi_finalize(void);

#endif
