/* bench_mpi.c — MPI for bench under mpirun (bench_mpi.h; not mpi.h, which would hide MPI's). */
#include <stdbool.h>
#include <stdlib.h>

#include "bench_mpi.h"

#ifdef BENCH_HAVE_MPI
#include <mpi.h>

static bool initialised;

/* Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI/PMIx launchers (srun, hydra) set theirs. */
static bool launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

void bench_mpi_init(int *argc, char ***argv)
{
    int provided = 0;
    if (launched() && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS)
        initialised = true;
}

int bench_mpi_rank(void)
{
    int r = 0;
    if (initialised) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int bench_mpi_size(void)
{
    int n = 1;
    if (initialised) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

void bench_mpi_finalize(void)
{
    if (initialised) MPI_Finalize();
    initialised = false;
}
#else
void bench_mpi_init(int *argc, char ***argv) { (void)argc, (void)argv; }
int bench_mpi_rank(void) { return 0; }
int bench_mpi_size(void) { return 1; }
void bench_mpi_finalize(void) {}
#endif
