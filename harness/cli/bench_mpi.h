/*
 * bench_mpi.h — the MPI of a bench process: initialised only when launched by mpirun (Open MPI's
 * OMPI_COMM_WORLD_SIZE, or PMIX_RANK / PMI_RANK in the environment), so a plain `bench ...` never
 * touches MPI. A build without MPI (meson -Dmpi=disabled, or Open MPI absent: BENCH_HAVE_MPI
 * undefined) is rank 0 of 1, and refuses to start under an mpirun of several ranks.
 * The sweep's distribution over ranks is sweep_mpi.h; docs/distributed.md.
 */
#ifndef BENCH_BENCH_MPI_H
#define BENCH_BENCH_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "attn_core.h"

/* MPI_Init when launched by mpirun, and the hosts of the ranks (gathered once). ATTN_EINVAL
 * (msg says why) when launched by mpirun with several ranks but built without MPI. */
attn_status bench_mpi_init(int *argc, char ***argv, char *msg, size_t msg_len);
/* MPI_Finalize when bench_mpi_init initialised MPI; nothing otherwise. */
void bench_mpi_finalize(void);
/* This process's rank in MPI_COMM_WORLD, and their number (0 and 1 without mpirun). */
int bench_mpi_rank(void);
int bench_mpi_size(void);
/* This host's name (gethostname, at most 63 bytes); the ranks on it; whether this rank is the
 * lowest on it (the one that measures the host's yardsticks). */
const char *bench_mpi_host(void);
int bench_mpi_host_ranks(void);
bool bench_mpi_host_leader(void);
/* OpenMP threads for this rank's forwards when --threads is not given, of `cpus` online: all of
 * them without mpirun; else the CPUs this rank is bound to (mpirun --bind-to), or, unbound, the
 * host's CPUs shared among its ranks (at least 1). */
int bench_mpi_default_threads(int cpus);

/* The statuses of every rank combined (collective): the lowest failing rank's status, or ATTN_OK.
 * *speak: whether this rank is that rank (it prints the error; the others stay silent, so a
 * failure every rank shares is printed once, by rank 0). */
attn_status bench_mpi_agree(attn_status st, bool *speak);
/* Collective: every rank's `bytes` bytes of mine into all[rank * bytes ...] (rank 0 only; others
 * may pass NULL). */
void bench_mpi_gather(const void *mine, void *all, size_t bytes);
/* Collective: rank 0's `bytes` bytes of buf into every rank's buf. */
void bench_mpi_bcast(void *buf, size_t bytes);
/* Collective: wait for every rank, without spinning: Open MPI's blocking calls poll a core at
 * full speed, which would slow the ranks still measuring on the same host; this one tests every
 * millisecond and sleeps in between. Call it before a collective some ranks may reach long
 * before the others. */
void bench_mpi_barrier(void);
/* Sleep a millisecond (between tests of a pending message). */
void bench_mpi_nap(void);

#endif
