/* mpi.c — MPI_Init only under mpirun, rank and size, the hosts of the ranks, and the few
 * collectives the distributed sweep needs. Its header is bench_mpi.h: an "mpi.h" of ours would
 * hide Open MPI's <mpi.h>. Without BENCH_HAVE_MPI: rank 0 of 1. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef BENCH_HAVE_MPI
#include <mpi.h>
#endif

#include "bench_mpi.h"

enum { HOST_LEN = 64 };

static struct {
    bool initialized; /* by bench_mpi_init: MPI_Finalize at the end */
    int rank, size;
    int host_ranks; /* ranks on this host */
    bool leader;    /* the lowest rank on this host */
    char host[HOST_LEN];
} mpi = {.size = 1, .host_ranks = 1, .leader = true};

/* The world size mpirun announces in the environment (0: not launched by mpirun). */
static int launched_size(void)
{
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (size && atoi(size) > 0) return atoi(size);
    if (getenv("PMIX_RANK") || getenv("PMI_RANK")) return 1; /* some launcher: size unknown */
    return 0;
}

static void set_host(void)
{
    if (gethostname(mpi.host, sizeof mpi.host) != 0) snprintf(mpi.host, sizeof mpi.host, "?");
    mpi.host[sizeof mpi.host - 1] = '\0';
}

#ifdef BENCH_HAVE_MPI
/* Which ranks share this host: gather the names, count those equal to ours. */
static attn_status gather_hosts(char *msg, size_t msg_len)
{
    char *all = malloc((size_t)mpi.size * HOST_LEN);
    if (!all) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %d hosts", mpi.size);
    MPI_Allgather(mpi.host, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, MPI_COMM_WORLD);
    int lowest = mpi.rank;
    mpi.host_ranks = 0;
    for (int r = 0; r < mpi.size; r++)
        if (strcmp(all + (size_t)r * HOST_LEN, mpi.host) == 0) {
            mpi.host_ranks++;
            if (r < lowest) lowest = r;
        }
    mpi.leader = lowest == mpi.rank;
    free(all);
    return ATTN_OK;
}
#endif

attn_status bench_mpi_init(int *argc, char ***argv, char *msg, size_t msg_len)
{
    set_host();
    const int launched = launched_size();
    if (!launched) return ATTN_OK;
#ifdef BENCH_HAVE_MPI
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "MPI_Init failed under mpirun");
    mpi.initialized = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi.size);
    return gather_hosts(msg, msg_len);
#else
    (void)argc, (void)argv;
    if (launched > 1)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "launched by mpirun with %d ranks, but this bench was built without MPI: "
                         "install libopenmpi-dev and rebuild (BENCH_MPI=1 ./bench info; "
                         "docs/distributed.md)",
                         launched);
    return ATTN_OK;
#endif
}

void bench_mpi_finalize(void)
{
#ifdef BENCH_HAVE_MPI
    if (mpi.initialized) MPI_Finalize();
#endif
    mpi.initialized = false;
}

int bench_mpi_rank(void) { return mpi.rank; }
int bench_mpi_size(void) { return mpi.size; }
const char *bench_mpi_host(void)
{
    if (!mpi.host[0]) set_host();
    return mpi.host;
}
int bench_mpi_host_ranks(void) { return mpi.host_ranks; }
bool bench_mpi_host_leader(void) { return mpi.leader; }

int bench_mpi_default_threads(int cpus)
{
    if (mpi.size == 1) return cpus;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < cpus)
        return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1; /* bound by mpirun */
    return cpus / mpi.host_ranks > 0 ? cpus / mpi.host_ranks : 1;
}

attn_status bench_mpi_agree(attn_status st, bool *speak)
{
    *speak = st != ATTN_OK;
#ifdef BENCH_HAVE_MPI
    if (mpi.size == 1) return st;
    int *all = malloc((size_t)mpi.size * sizeof *all), mine = (int)st;
    if (!all) return st; /* cannot agree: this rank decides alone */
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    attn_status agreed = ATTN_OK;
    for (int r = 0; r < mpi.size && agreed == ATTN_OK; r++)
        if (all[r] != ATTN_OK) {
            agreed = (attn_status)all[r];
            *speak = r == mpi.rank;
        }
    free(all);
    return agreed;
#else
    return st;
#endif
}

void bench_mpi_gather(const void *mine, void *all, size_t bytes)
{
#ifdef BENCH_HAVE_MPI
    if (mpi.size > 1) {
        MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        return;
    }
#endif
    memcpy(all, mine, bytes);
}

void bench_mpi_bcast(void *buf, size_t bytes)
{
#ifdef BENCH_HAVE_MPI
    if (mpi.size > 1) MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    (void)buf, (void)bytes;
#endif
}

void bench_mpi_nap(void)
{
    struct timespec ms = {0, 1000 * 1000};
    nanosleep(&ms, NULL);
}

void bench_mpi_barrier(void)
{
#ifdef BENCH_HAVE_MPI
    if (mpi.size == 1) return;
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        bench_mpi_nap();
#endif
}
