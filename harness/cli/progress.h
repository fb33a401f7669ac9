/* progress.h — progress of a sweep on stderr: one updating line on a terminal, plain lines
 * otherwise (logs, CI). */
#ifndef BENCH_PROGRESS_H
#define BENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bench_progress {
    int64_t total;
    double started_s;
    bool tty;
} bench_progress;

bench_progress bench_progress_start(int64_t total);
/* Point k (1-based) is starting; label describes it; eta_s: predicted seconds left (NaN: not
 * known yet). */
void bench_progress_point(bench_progress *pr, int64_t k, const char *label, double eta_s);
/* Clear the updating line (terminal) before other output. */
void bench_progress_end(bench_progress *pr);

#endif
