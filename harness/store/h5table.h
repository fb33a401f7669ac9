/*
 * h5table.h — within store/ only (tables.c, h5file.c, writer.c, reader.c): the tables of a results
 * file and the HDF5 plumbing its writer and readers share.
 *
 * A table is a 1-D extendable, chunked dataset of a compound type built from one field table per
 * struct (name, offset, kind, size, unit, description): adding a column to bench_run or
 * bench_point is one line in its field table (tables.c). In memory the types follow the C structs
 * (offsetof) with NUL-terminated strings; in the file they are packed, NUL-padded UTF-8. Files are
 * opened with HDF5's own file locking off (the writers' lock of atomic.h serialises writers).
 */
#ifndef BENCH_H5TABLE_H
#define BENCH_H5TABLE_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results.h"

typedef enum { F_I32, F_I64, F_U64, F_F64, F_STR } field_kind;

typedef struct field {
    const char *name; /* member name in the file: the struct field's name */
    size_t offset;    /* offsetof in the C struct */
    field_kind kind;
    size_t size;             /* sizeof the struct field (the string length for F_STR) */
    const char *unit;        /* FIELD_<i>_UNIT: see the units in tables.c */
    const char *description; /* FIELD_<i>_DESCRIPTION: one line */
} field;

typedef struct table {
    const char *dset; /* "/runs" */
    const field *fields;
    size_t nfields;
    size_t row_size; /* sizeof the C struct */
    hsize_t chunk_rows;
    const char *title; /* its TITLE attribute */
} table;

/* One row of /samples (results.h). */
typedef bench_sample sample_row;

/* One row of /run_status: how the run ended. */
typedef struct status_row {
    int64_t run_id;
    char status[16]; /* running, complete, incomplete, interrupted */
    int64_t planned_points;
    int64_t finished_points;
    char started_at[32];
    char ended_at[32];
    char message[160]; /* why a run is incomplete or interrupted */
} status_row;

/* The tables (tables.c): /runs, /points, /samples, /run_status, /hosts, /fits. */
extern const table bench_h5_runs, bench_h5_points, bench_h5_samples, bench_h5_status,
    bench_h5_hosts, bench_h5_fits;

/* ---- types (tables.c) ---- */

/* The compound type of a table: in memory (struct offsets, NUL-terminated strings) or in the
 * file (packed, NUL-padded strings). Returns a type id to H5Tclose, or -1. */
hid_t bench_h5_compound_type(const table *t, bool in_file);
/* The in-memory type of t holding only the columns dataset dset has (an optional table written
 * by an older build, before a column was added: the others stay as the caller zeroed them).
 * Returns a type id to H5Tclose, or -1. */
hid_t bench_h5_memory_type_of(const table *t, hid_t dset);
/* Strings read back are NUL-terminated even if a foreign writer filled the whole field. */
void bench_h5_terminate_strings(const table *t, void *rows, int64_t n);

/* ---- files and datasets (h5file.c) ---- */

/* Library code never prints: turn off HDF5's automatic error stack printing. */
void bench_h5_quiet(void);
/* File access properties with HDF5's own file locking off; H5Pclose it. */
hid_t bench_h5_unlocked_fapl(void);
/* H5Fopen path (flags: H5F_ACC_RDONLY or H5F_ACC_RDWR) without HDF5's file locking. */
hid_t bench_h5_open_unlocked(const char *path, unsigned flags);
/* Create an empty, extendable, chunked 1-D dataset for table t, described by the attributes of
 * the HDF5 table convention and ours (FIELD_<i>_UNIT, FIELD_<i>_DESCRIPTION). */
herr_t bench_h5_create_table(hid_t file, const table *t);
/* Number of rows of a 1-D dataset, or -1. */
int64_t bench_h5_table_rows(hid_t dset);
/* Resize a 1-D dataset to n rows. */
herr_t bench_h5_set_rows(hid_t dset, int64_t n);
/* Write (or read) rows [first, first+n) of a 1-D dataset from (into) buf, memory type mtype. */
herr_t bench_h5_rows_io(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf, bool write);
/* Append n rows to a 1-D dataset that currently has `first` rows. */
herr_t bench_h5_append_rows(hid_t dset, hid_t mtype, int64_t first, const void *rows, int64_t n);
herr_t bench_h5_read_rows(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf);
/* Make every string of rows[0..n) of table t valid UTF-8, as the file's string type says it is:
 * a byte outside a valid UTF-8 sequence becomes the four characters \xNN, and a string that
 * then no longer fits its field is cut before the sequence that does not fit (never inside one).
 * Valid strings are left as they are. Called on every row before it is written. */
void bench_h5_utf8_rows(const table *t, void *rows, int64_t n);
/* The root's format and format_version attributes of a new results file. */
herr_t bench_h5_write_format_attrs(hid_t file);
/* Is the existing file at path an attnbench results file of a format_version from min_version
 * to ours? Opens it read-only; never modifies it. ATTN_OK or ATTN_EINVAL with a message ending in
 * `fix` (what to do: "; choose another --out" when writing, "" when reading). */
attn_status bench_h5_check_results_file(const char *path, const char *fix, int min_version,
                                        char *msg, size_t msg_len);

#endif
