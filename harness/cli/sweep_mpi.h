/*
 * sweep_mpi.h — a sweep's points over the MPI ranks of `mpirun -n R bench sweep`
 * (docs/distributed.md). Every rank builds the same grid; the points are spread by series (the
 * points differing only in n, measured on one rank in increasing n, so --max-point-time predicts
 * from the previous n as in a serial sweep), each series to the rank with the least predicted
 * work so far, largest first. Rank 0 measures its share too and is the only writer: the others
 * send each point (row and samples) to it as it ends. Points of a collective kind (ring) are
 * measured afterwards by every rank together, in grid order, and record rank -1. Without mpirun
 * (one rank) the points are measured and recorded in grid order.
 */
#ifndef BENCH_SWEEP_MPI_H
#define BENCH_SWEEP_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "record.h"

/* What the spreading needs to know of point p. */
typedef struct bench_sweep_item {
    int64_t series;  /* equal for the points of one series, which are adjacent in grid order */
    double cost_s;   /* predicted seconds (its share of the work) */
    bool collective; /* its kind runs on every rank together (attn_ops.collective) */
} bench_sweep_item;

/* The sweep's side (sweep_measure.c). */
typedef struct bench_sweep_hooks {
    void *ctx;
    /* Measure point p on this rank into points[p] (or mark it skipped), its timed repetitions
     * malloc'd into *samples. */
    void (*measure)(void *ctx, int64_t p, double **samples, int64_t *nsamples);
    /* Rank 0: store and count point p (points[p] as measured here or received). false: it
     * could not be stored; the sweep stops. */
    bool (*record)(void *ctx, int64_t p, const double *samples, int64_t nsamples);
    /* Should this rank stop measuring (checked between points)? */
    bool (*stopping)(void *ctx);
} bench_sweep_hooks;

/* Measure points[0..n) over the ranks (collective), recording every one on rank 0. Each point
 * records the rank that measured it (rank -1: a collective point under mpirun) and its host. */
void bench_sweep_spread(const bench_sweep_item *items, bench_point *points, int64_t n,
                        const bench_sweep_hooks *h);

/* The run row of this rank (bench_new_run, with mc's threads): on the lowest rank of each host
 * with the yardsticks measured, on the other ranks with the facts only (yardsticks NaN). Then
 * (collective) rank 0 gets one bench_host per host into *hosts (malloc'd; free()), *nhosts;
 * the other ranks get none. */
attn_status bench_sweep_machines(int argc, char **argv, const bench_measure_cfg *mc, bench_run *run,
                                 bench_host **hosts, int *nhosts, char *msg, size_t msg_len);
/* The sgemm GFLOP/s of host `name` among hosts[0..n) (NaN when absent). */
double bench_sweep_host_sgemm(const bench_host *hosts, int n, const char *name);

#endif
