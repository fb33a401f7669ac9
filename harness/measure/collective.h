/*
 * collective.h — what a collective kind's point (attn_ops.collective: ring) needs from the ranks
 * of mpirun: every rank runs the point together, rank 0 makes the inputs and measures the
 * accuracy. Uses MPI_COMM_WORLD when MPI is initialised (bench_mpi_init under mpirun); otherwise
 * there is one rank and every function here is trivial.
 */
#ifndef BENCH_COLLECTIVE_H
#define BENCH_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "attn_core.h"

int bench_coll_rank(void);
int bench_coll_size(void);
/* Rank 0's go, on every rank (the timed loop's decisions, which depend on its clock). */
bool bench_coll_decide(bool go);
/* The worst status over the ranks (every rank calls it). */
attn_status bench_coll_agree(attn_status st);
/* x[0..n) from rank 0 to every rank. */
void bench_coll_bcast(float *x, int64_t n);
/* Element-wise over the ranks, into x on every rank: the maximum, minimum or sum. */
typedef enum { BENCH_COLL_MAX, BENCH_COLL_MIN, BENCH_COLL_SUM } bench_coll_op;
void bench_coll_reduce(double *x, int n, bench_coll_op op);

#endif
