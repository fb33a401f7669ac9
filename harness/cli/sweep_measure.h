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
enum { SWEEP_NOISY_NAMED = 4 }; /* points whose timings vary named in the closing line */

typedef struct sweep_tally {
    int failed, noisy; /* points that failed; whose timings vary (bench_timings_vary) */
    char noisy_named[SWEEP_NOISY_NAMED][64]; /* the first noisy ones, "full n=1024" */
    int nonfinite;                           /* points whose output held a NaN or Inf */
    bool store_failed; /* a point could not be stored (msg says why): the sweep stopped */
    bench_skips over;  /* points skipped as over the time budget (status "skipped") */
} sweep_tally;

/* Measure every point into points[] (spread over the ranks under mpirun; one whose timings vary
 * measured once more: bench_point_run_steady) and store it on rank 0 (run run_id), with progress
 * unless quiet; a point whose timings still vary is counted (and warned of as it is stored when
 * verbose); a point over budget_s (predicted from the previous point of its series; 0: no
 * budget) is skipped: status "skipped", not stored. The tally is rank 0's (the others': empty).
 * A stop request (SIGINT, SIGTERM: signals.h) ends the loop; the point in progress is not
 * stored. */
sweep_tally bench_sweep_measure(const bench_point_spec *specs, bench_point *points, int64_t npoints,
                                int64_t run_id, bench_store *store, bool quiet, bool verbose,
                                double budget_s, char *msg, size_t msg_len);

#endif
