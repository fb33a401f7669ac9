/* progress.h — progress of a sweep on stderr: one updating line on a terminal, cut to the
 * terminal's width with the counter and the ETA always whole; plain lines otherwise (logs, CI). */
#ifndef BENCH_PROGRESS_H
#define BENCH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
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

/* "42s", "3m12s", "2h05m" (rounded to the second); "--" for a negative or NaN time. */
void bench_format_duration(double s, char *buf, size_t len);
/* "[k/N] LABEL  (ELAPSED, ETA ETA)" in at most width - 1 columns (the last column would wrap on
 * many terminals; width <= 0: no limit): a label too long for the room is cut in its middle
 * ("window n=...=1 dataset=gaussian"), never the counter or the times, which stay whole even
 * when they alone overflow. Returns buf. */
const char *bench_progress_format(char *buf, size_t len, int width, int64_t k, int64_t total,
                                  const char *label, double elapsed_s, double eta_s);
/* The columns of the terminal on stderr (TIOCGWINSZ), else $COLUMNS, else 80. */
int bench_terminal_width(void);

#endif
