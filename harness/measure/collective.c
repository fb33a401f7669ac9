/* collective.c — the ranks of a collective kind's point (collective.h). */
#include "collective.h"

#ifdef BENCH_HAVE_MPI
#include <mpi.h>

/* MPI_COMM_WORLD's size, 1 when MPI is not (or no longer) initialised. */
static bool active(int *rank, int *size)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    *rank = 0, *size = 1;
    if (!init || fin) return false;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return *size > 1;
}

int bench_coll_rank(void)
{
    int r, n;
    active(&r, &n);
    return r;
}

int bench_coll_size(void)
{
    int r, n;
    active(&r, &n);
    return n;
}

bool bench_coll_decide(bool go)
{
    int r, n, flag = go;
    if (active(&r, &n)) MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return flag != 0;
}

attn_status bench_coll_agree(attn_status st)
{
    int r, n, worst = (int)st, mine = (int)st;
    if (active(&r, &n)) MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return (attn_status)worst;
}

void bench_coll_bcast(float *x, int64_t n)
{
    int r, size;
    if (!active(&r, &size)) return;
    for (int64_t at = 0; at < n; at += 1 << 30) { /* MPI counts are int */
        const int64_t part = n - at < (1 << 30) ? n - at : (1 << 30);
        MPI_Bcast(x + at, (int)part, MPI_FLOAT, 0, MPI_COMM_WORLD);
    }
}

void bench_coll_reduce(double *x, int n, bench_coll_op op)
{
    int r, size;
    if (!active(&r, &size)) return;
    const MPI_Op mop = op == BENCH_COLL_MAX ? MPI_MAX : op == BENCH_COLL_MIN ? MPI_MIN : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, mop, MPI_COMM_WORLD);
}
#else
int bench_coll_rank(void) { return 0; }
int bench_coll_size(void) { return 1; }
bool bench_coll_decide(bool go) { return go; }
attn_status bench_coll_agree(attn_status st) { return st; }
void bench_coll_bcast(float *x, int64_t n) { (void)x, (void)n; }
void bench_coll_reduce(double *x, int n, bench_coll_op op) { (void)x, (void)n, (void)op; }
#endif
