/* progress.c — "[k/N] label  elapsed, ETA" on stderr. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "progress.h"
#include "stats.h"

bench_progress bench_progress_start(int64_t total)
{
    bench_progress pr = {.total = total, .started_s = bench_now_s(), .tty = isatty(2) == 1};
    return pr;
}

void bench_progress_point(bench_progress *pr, int64_t k, const char *label, double eta_s)
{
    double elapsed = bench_now_s() - pr->started_s;
    char eta[32] = "ETA --";
    if (eta_s >= 0) snprintf(eta, sizeof eta, "ETA %.0f s", eta_s);
    if (pr->tty)
        fprintf(stderr, "\r\033[K[%lld/%lld] %s  (%.0f s, %s)", (long long)k, (long long)pr->total,
                label, elapsed, eta);
    else
        fprintf(stderr, "[%lld/%lld] %s  (%.0f s, %s)\n", (long long)k, (long long)pr->total, label,
                elapsed, eta);
    fflush(stderr);
}

void bench_progress_end(bench_progress *pr)
{
    if (pr->tty) fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
