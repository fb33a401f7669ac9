/*
 * export.h — `bench export` as a registry of formats: one table of a results file (its rows, the
 * run's alone with --run, and every run for context) written as one document to a file or stdout.
 *
 * A format is one file in report/export/ that defines a const bench_export_format {name,
 * extension, summary, write}, listed once in the table of report/export/export.c. Everything
 * that names the formats reads that table: `bench export --help`, its error messages, shell
 * completion (`bench complete values export --format`) and the check of docs/cli.md
 * (tests/test_export.py). Adding a format: docs/cli.md#adding-an-export-format.
 *
 * Room report/: includes store/'s and measure/'s headers, never cli/.
 */
#ifndef BENCH_EXPORT_H
#define BENCH_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn_core.h"
#include "results.h"

/* The rows of one table of a file (the run's alone with run_id), and every run for context. */
typedef struct bench_export_data {
    const char *path;
    bench_table_id table;
    void *rows; /* n rows of row_size bytes: the table's C struct (bench_store_column) */
    int64_t n;
    size_t row_size;
    bench_run *runs; /* every run of the file */
    int64_t nruns;
    int64_t run_id; /* --run, or 0: every run's rows */
} bench_export_data;

/* One output format. write puts the whole document for d on f; ATTN_EFAIL when it cannot be
 * built (out of memory). Errors writing to f are the caller's to find (ferror). */
typedef struct bench_export_format {
    const char *name;      /* --format NAME */
    const char *extension; /* the usual file extension, without the dot */
    const char *summary;   /* one line: what the document holds (bench export --help) */
    attn_status (*write)(FILE *f, const bench_export_data *d);
} bench_export_format;

/* The registered formats, in the order --help lists them: index 0 .. count - 1. */
int bench_export_format_count(void);
const bench_export_format *bench_export_format_at(int i);
/* The format called name, or NULL. */
const bench_export_format *bench_export_format_find(const char *name);
/* The names of the formats into buf, sep between two and last before the last one:
 * (", ", " or ") gives "csv, json or markdown", ("|", "|") "csv|json|markdown". Returns buf. */
const char *bench_export_format_names(const char *sep, const char *last, char *buf, size_t len);

/* The tables bench export reads, by their --table names, in the order --help lists them (points
 * first, the default); /run_status has none. */
int bench_export_table_count(void);
bench_table_id bench_export_table_at(int i);
/* The --table name of t ("points"), or NULL when bench export does not read t. */
const char *bench_export_table_name(bench_table_id t);
/* The table called name into *t; false when there is none. */
bool bench_export_table_find(const char *name, bench_table_id *t);
/* Their names joined as bench_export_format_names does. Returns buf. */
const char *bench_export_table_names(const char *sep, const char *last, char *buf, size_t len);

/* Read table d->table of d->path and every run (d->path, d->table and d->run_id set by the
 * caller); keep the rows of run d->run_id (all when 0). ATTN_EINVAL: not a results file, no such
 * run; ATTN_EFAIL: out of memory. Free with bench_export_free. */
attn_status bench_export_load(bench_export_data *d, char *msg, size_t msg_len);
void bench_export_free(bench_export_data *d);
/* Write d as format fmt to out (NULL: stdout); a file is written under a temporary name beside
 * it and renamed into place once complete (bench_tmp_fopen, store/atomic.h). ATTN_EFAIL: out
 * cannot be written, or a write failed (a file that was at out stays as it was; no temporary
 * file is left). The caller refuses an out that is an input or a results file first. */
attn_status bench_export_write(const bench_export_data *d, const bench_export_format *fmt,
                               const char *out, char *msg, size_t msg_len);

/* For the formats: where row r's column c is, and a number or string cell as text (integers
 * exactly, reals with `digits` significant digits, "" for NaN, inf / -inf, strings as they
 * are). */
const void *bench_export_cell(const bench_export_data *d, int64_t r, const bench_column *c);
void bench_export_cell_text(const bench_column *c, const void *cell, int digits, char *buf,
                            size_t len);

#endif
