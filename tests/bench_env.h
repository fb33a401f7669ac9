/* bench_env.h — the CLI runner of the suites that read bench's output (test_plot, test_report,
 * test_yardstick): bench_env runs `ENV bench ARGS` with stdout and stderr into out_text and
 * err_text; have_gnuplot. */
#ifndef BENCH_ENV_H
#define BENCH_ENV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_run.h"

static char out_text[1 << 16], err_text[1 << 16];

/* Run `ENV bench ARGS` through sh (env: assignments such as PATH=..., or ""); exit status, with
 * stdout and stderr in out_text and err_text. Paths here have no spaces or quotes. */
static int bench_env(const char *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int st = tu_vbench(env, out_text, sizeof out_text, err_text, sizeof err_text, fmt, ap);
    va_end(ap);
    return st;
}

static bool have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

#endif
