/*
 * sweep_measure.h — within cli/: measuring the points of `bench sweep` and recording them
 * (sweep_measure.c), spread over the ranks under mpirun (sweep_mpi.h), with progress, an ETA
 * and the --max-point-time budget.
 */
#ifndef BENCH_SWEEP_MEASURE_H
#define BENCH_SWEEP_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "point.h"
#include "results.h"
#include "skips.h"

/* What happened to a sweep's points. */
typedef struct sweep_tally {
    int failed, noisy; /* points that failed; that warned of noisy timings */
    int nonfinite;     /* points whose output held a NaN or Inf */
    bool store_failed; /* a point could not be stored (msg says why): the sweep stopped */
    bench_skips over;  /* points skipped as over the time budget (status "skipped") */
} sweep_tally;

/* Measure every point into points[] (spread over the ranks under mpirun) and store it on rank 0
 * (run run_id), with progress unless quiet; a point over budget_s (predicted from the previous
 * point of its series; 0: no budget) is skipped: status "skipped", not stored. The tally is
 * rank 0's (the others': empty). A stop request (SIGINT, SIGTERM: signals.h) ends the loop; the
 * point in progress is not stored. */
sweep_tally bench_sweep_measure(const bench_point_spec *specs, bench_point *points, int64_t npoints,
                                int64_t run_id, bench_store *store, bool quiet, double budget_s,
                                char *msg, size_t msg_len);

#endif
