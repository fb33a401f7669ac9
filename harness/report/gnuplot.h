/*
 * gnuplot.h — drawing with gnuplot as a child process, safely:
 *   - gnuplot is found on PATH and started with posix_spawn (never through a shell);
 *   - the script goes through a pipe; data go through files in a private directory made with
 *     mkdtemp, removed by bench_gnuplot_close whatever happened;
 *   - strings from results files are quoted (bench_gnuplot_quote), so they cannot end a string
 *     or inject commands;
 *   - the image is drawn into the private directory and reaches its destination (by an atomic
 *     rename) only when gnuplot exited with 0 and the file has the right magic bytes: a failure
 *     never leaves a broken image behind.
 */
#ifndef BENCH_GNUPLOT_H
#define BENCH_GNUPLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "attn_core.h"

typedef struct bench_gnuplot {
    char exe[4096]; /* the gnuplot executable found on PATH */
    char dir[4096]; /* the private temporary directory ("" when closed) */
    int files;      /* data files made so far */
} bench_gnuplot;

/* Find gnuplot on PATH and make the private directory (under $TMPDIR or /tmp). ATTN_EFAIL with a
 * message saying how to install gnuplot when it is missing. */
attn_status bench_gnuplot_open(bench_gnuplot *g, char *msg, size_t msg_len);
/* Remove the private directory and everything in it. Safe to call twice. */
void bench_gnuplot_close(bench_gnuplot *g);

/* A new data file in the private directory, open for writing; its path goes into path (already
 * quoted for a script when quoted_path is given). NULL on failure. */
FILE *bench_gnuplot_data(bench_gnuplot *g, char *quoted_path, size_t len);

/* text as a gnuplot single-quoted string literal, quotes included. enhanced: also escape the
 * enhanced-text markup characters (^ _ @ & ~ { } \) so they print as themselves. Control
 * characters become '?'. Truncated (still well formed) to fit len. */
void bench_gnuplot_quote(const char *text, bool enhanced, char *buf, size_t len);

/* Formats: "png" (pngcairo), "svg", "pdf" (pdfcairo). Is name one of them? */
bool bench_gnuplot_format_ok(const char *name);
/* The name of format i ("png"), NULL past the last. */
const char *bench_gnuplot_format_at(int i);

/* Draw script (the commands after `set terminal`/`set output`, which this adds) as a
 * width x height image (pixels; for pdf, 1/100 inch) in format, and move it to dest.
 * ATTN_EFAIL with gnuplot's first error line when it fails; dest is then left as it was. */
attn_status bench_gnuplot_render(bench_gnuplot *g, const char *script, const char *format,
                                 int width, int height, const char *dest, char *msg,
                                 size_t msg_len);

#endif
