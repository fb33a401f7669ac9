/* progress.c — "[k/N] label  (elapsed, ETA)" on stderr, fitted to the terminal's width. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress.h"
#include "stats.h"

bench_progress bench_progress_start(int64_t total)
{
    bench_progress pr = {.total = total, .started_s = bench_now_s(), .tty = isatty(2) == 1};
    return pr;
}

void bench_format_duration(double s, char *buf, size_t len)
{
    if (!(s >= 0) || s > 1e9) {
        snprintf(buf, len, "--");
        return;
    }
    const long long t = llround(s);
    if (t < 60) snprintf(buf, len, "%llds", t);
    else if (t < 3600) snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
    else snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
}

const char *bench_progress_format(char *buf, size_t len, int width, int64_t k, int64_t total,
                                  const char *label, double elapsed_s, double eta_s)
{
    char head[48], tail[64], elapsed[24], eta[24];
    snprintf(head, sizeof head, "[%lld/%lld] ", (long long)k, (long long)total);
    bench_format_duration(elapsed_s, elapsed, sizeof elapsed);
    bench_format_duration(eta_s, eta, sizeof eta);
    snprintf(tail, sizeof tail, "  (%s, ETA %s)", elapsed, eta);
    const size_t fixed = strlen(head) + strlen(tail), full = strlen(label);
    const size_t room = width <= 0                  ? full
                        : (size_t)width - 1 > fixed ? (size_t)width - 1 - fixed
                                                    : 0;
    if (full <= room) {
        snprintf(buf, len, "%s%s%s", head, label, tail);
    } else if (room < 7) { /* no room for a useful piece of the label */
        snprintf(buf, len, "%s%.*s%s", head, (int)room, "......", tail);
    } else { /* the start (kind, n: two thirds) and the end of the label around "..." */
        const size_t left = (room - 3) * 2 / 3 + 1, right = room - 3 - left;
        snprintf(buf, len, "%s%.*s...%s%s", head, (int)left, label, label + full - right, tail);
    }
    return buf;
}

int bench_terminal_width(void)
{
    struct winsize ws;
    if (isatty(2) && ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *cols = getenv("COLUMNS");
    char *end = NULL;
    const long c = cols ? strtol(cols, &end, 10) : 0;
    return cols && end != cols && *end == '\0' && c > 0 && c < 100000 ? (int)c : 80;
}

void bench_progress_point(bench_progress *pr, int64_t k, const char *label, double eta_s)
{
    char line[1024];
    bench_progress_format(line, sizeof line, pr->tty ? bench_terminal_width() : 0, k, pr->total,
                          label, bench_now_s() - pr->started_s, eta_s);
    if (pr->tty) fprintf(stderr, "\r\033[K%s", line);
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void bench_progress_end(bench_progress *pr)
{
    if (pr->tty) fprintf(stderr, "\r\033[K");
    fflush(stderr);
}
