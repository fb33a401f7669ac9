/*
 * report_html.h — the pieces of the one-file HTML page of `bench report` (cmd_report.c puts them
 * together): text escaped for HTML, gnuplot's SVG made fit to sit inline in a page, the page's
 * head (inline CSS) and end (the inline script that sorts tables), and the sections drawn from
 * the results file: the command that reproduces the run, the machine and build facts, the
 * points table. Nothing written here refers to anything outside the page: no link, image, font
 * or script from elsewhere (the page's Content-Security-Policy forbids them).
 *
 * Every string that comes from a results file goes through bench_html_text, so a kind parameter,
 * a dataset or a command holding < & " ' cannot open a tag or end an attribute.
 */
#ifndef BENCH_REPORT_HTML_H
#define BENCH_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "attn_core.h"
#include "results.h"

/* text with & < > " ' as character references; control characters other than tab and newline
 * (which HTML does not allow) as U+FFFD. Safe in element content and in quoted attributes. */
void bench_html_text(FILE *f, const char *text);
/* bench_html_text of the formatted text. */
void bench_html_textf(FILE *f, const char *fmt, ...) ATTN_PRINTF(2, 3);

/* A gnuplot SVG document (svg terminal, without `mouse`) written inline: from its <svg> element
 * on (the XML declaration dropped), every id and every reference to one ("#gpPt5", url(#...))
 * prefixed with prefix so that several figures in one page keep their ids apart, and a bare &
 * that gnuplot leaves in enhanced text written &amp;. ATTN_EFAIL (nothing written) when svg has
 * no <svg element or holds a script or an external reference. */
attn_status bench_html_svg(FILE *f, const char *svg, const char *prefix, char *msg, size_t msg_len);

/* <!DOCTYPE html> up to the opening <main>: charset, viewport, the Content-Security-Policy that
 * allows nothing from outside the page, the title (escaped) and the style sheet. */
void bench_html_begin(FILE *f, const char *title);
/* </main>, the script that makes every table.sortable sortable by a click (or Enter) on its
 * column headers, and the end of the page. */
void bench_html_end(FILE *f);

/* A <table class="sortable"> cell: text (escaped, "-" when empty) or a number. A number cell
 * sorts by value (data-v, empty for NaN: last either way) and shows it with printf's fmt
 * ("-" for NaN) times scale. */
void bench_html_td(FILE *f, const char *text);
void bench_html_td_num(FILE *f, double v, const char *fmt, double scale);
/* A header cell; numeric: the column sorts by number (class "num"), title: its tool tip (NULL:
 * none). */
void bench_html_th(FILE *f, const char *label, int numeric, const char *title);

/* The command that made the run, as recorded (shell-quoted where an argument needs it: see
 * bench_join_args), and the commit its binary was built from. */
void bench_html_command(FILE *f, const bench_run *run);
/* The machine and build facts of the run, one row each. */
void bench_html_run_facts(FILE *f, const bench_run *run);
/* Every point of run run_id among pts[0..n), failed ones included (status, message), as a
 * sortable table: settings, timings, throughput, memory and accuracy. */
void bench_html_points(FILE *f, const bench_point *pts, int64_t n, int64_t run_id);

#endif
