/*
 * results.h — the HDF5 store (tables.c, writer.c, reader.c, h5file.c) of what sweeps record: runs
 * and points (bench_run and bench_point, measure/record.h), their timed repetitions and the fits of
 * `bench fit` (bench_fit_row); and rank-4 tensors written for `bench run --output` (tensor_io.c).
 *
 * Room store/ (above measure/, below report/ and cli/): includes its own headers, measure/'s,
 * attention/ and datasets/, never report/ or cli/.
 *
 * File layout (format "attnbench-results", format_version 3):
 *   /            attributes: format, format_version
 *   /runs        extendable chunked compound table, one row per run   (bench_run)
 *   /points      extendable chunked compound table, one row per point (bench_point)
 *   /samples     extendable chunked compound table, one row per timed repetition:
 *                run_id, point_id, rep, seconds
 *   /run_status  extendable chunked compound table, one row per run: run_id, status ("running"
 *                until closed, "complete", "incomplete" after a failed write, "interrupted" by a
 *                signal), planned_points, finished_points, started_at, ended_at, message
 *   /hosts       (sweeps) one row per host of a run: its facts and yardsticks (bench_host),
 *                measured once per host; a distributed sweep (mpirun) has one row per host
 *   /fits        (optional: written by `bench fit`) one row per fitted series and metric of a run
 *                (bench_fit_row); a new fit of a run replaces that run's rows
 * Every table carries the attributes of the HDF5 high-level table convention (CLASS = "TABLE",
 * VERSION, TITLE, FIELD_<i>_NAME) and, per column, FIELD_<i>_UNIT and FIELD_<i>_DESCRIPTION
 * (bench_store_column). Version 2 (no column attributes, a 3-column /run_status) is read, not
 * appended to.
 * Strings are fixed-length, NUL-padded UTF-8 (h5py reads them as bytes: .str.decode()).
 * Every row is flushed to disk as soon as it is added, so an interrupted sweep keeps its points.
 * A new file is written under a temporary name and renamed into place once valid; a write that
 * fails is rolled back; one writer at a time holds a lock on the file (atomic.h,
 * docs/results-format.md "Writing safely"). Writers and bench's readers open files with HDF5's
 * own file locking off, so that anyone can read a file while a sweep writes it.
 */
#ifndef BENCH_RESULTS_H
#define BENCH_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attn_core.h"
#include "record.h"

#define BENCH_FORMAT "attnbench-results"
enum { BENCH_FORMAT_VERSION = 3, BENCH_FORMAT_VERSION_READ = 2 /* the oldest read */ };

/* One row of /fits: a power law metric ≈ prefactor · n^exponent fitted over n (= kv_len) to
 * one series of a run (the points sharing every setting but n), beside its theory and its
 * crossover with `full` at the same settings. */
typedef struct bench_fit_row {
    int64_t run_id;
    char kind[32];
    char params[160]; /* as in /points; a parameter the sweep resolved per n is "auto" */
    char dataset[32];
    char dataset_params[96];
    char mode[16];
    int64_t batch, heads, kv_heads, head_dim;
    int64_t q_len; /* decode: queries per step; 0 in prefill (where q_len = n) */
    int32_t causal;
    char pass[16];   /* forward, backward or train, as in /points */
    char metric[16]; /* "time": median s per forward; "rss_added": peak - base RSS
                        bytes (what the point added); "peak_rss": peak RSS bytes (files
                        without base RSS); "workspace": declared scratch bytes */
    int32_t points;  /* points fitted */
    int64_t n_min, n_max;
    double exponent; /* least squares slope of ln metric on ln n */
    double exponent_lo,
        exponent_hi;            /* its 95 % confidence interval (Student's t; NaN < 3 points) */
    double r2;                  /* of the log-log fit */
    double prefactor;           /* metric ≈ prefactor · n^exponent */
    double theory;              /* slope of ln flops (time), or of ln(q, k, v, out + workspace +
                                   state bytes) (rss), over the same points; NaN for workspace */
    char reference_params[160]; /* the full series compared against ("" if none, or full itself) */
    int64_t reference_kv_heads;
    char crossover[16];  /* below full's metric: "above" n = crossover_n, "below" it,
                            "always", "never" (in the common n range), "" (no reference) */
    double crossover_n;  /* interpolated in log-log between measured points; NaN otherwise */
    double ratio_at_max; /* metric / full's metric at the largest common n */
    int64_t ratio_n;     /* that n */
    int32_t threads;     /* the series' OpenMP threads */
    char isa[16];        /* its kernel set ("" in files before the column) */
    char dtype[8]; /* its storage of q, k, v: f32, bf16, f16 ("" in files before the column) */
} bench_fit_row;

/* One row of /samples: one timed repetition of a point. */
typedef struct bench_sample {
    int64_t run_id;
    int64_t point_id;
    int32_t rep; /* 0, 1, ... within the point */
    double seconds;
} bench_sample;

typedef struct bench_store bench_store;

/* Open path for appending under the writers' lock, creating it if absent. An existing file that
 * is not an attnbench results file (or has another format_version), or that another process is
 * writing, is refused and left untouched. A new file is written as ".NAME.tmp-PID" and takes its
 * name with its first run (bench_store_begin_run), or at bench_store_close if no run was begun
 * (then valid and empty); a failed or interrupted creation leaves no file. */
attn_status bench_store_open(const char *path, bench_store **store, char *msg, size_t msg_len);
/* The number of points the next run sets out to measure (its /run_status planned_points;
 * 0, the default: not said). Call before bench_store_begin_run. */
void bench_store_set_planned(bench_store *st, int64_t planned);
int64_t bench_store_planned(const bench_store *st);
/* Append a run row (and its "running" /run_status row); sets run->run_id. Checks the room on
 * disk first; a failure writes nothing and says why ("disk full (...): run 2 not started"). */
attn_status bench_store_begin_run(bench_store *st, bench_run *run, char *msg, size_t msg_len);
/* Append a point row and its nsamples repetition times; sets pt->point_id; flushes. When it
 * cannot (no room, a failed write), /points and /samples are rolled back to their last good size,
 * the run is marked incomplete and no further point is accepted; msg says what was kept. */
attn_status bench_store_add_point(bench_store *st, bench_point *pt, const double *samples_s,
                                  int64_t nsamples, char *msg, size_t msg_len);
/* Append a /hosts row for the run begun through st (sets h->run_id; creates /hosts if absent);
 * flushes. A failure rolls the row back and marks the run incomplete, as for a point. */
attn_status bench_store_add_host(bench_store *st, bench_host *h, char *msg, size_t msg_len);
/* Mark the run complete (unless it is incomplete), flush, publish a new file, unlock, close. */
void bench_store_close(bench_store *st);
/* A signal (sig) stopped the command: mark the run interrupted (unless it is incomplete), with
 * its finished points and end time, flush, unlock, close. A new file that has no finished point
 * (no run yet, or a run without points) is removed: no file is left. The points of the run kept
 * into *kept (may be NULL); returns the run's id, or 0 when no run was begun or its new file was
 * removed. */
int64_t bench_store_interrupt(bench_store *st, int sig, int64_t *kept);

/* The strings of a results file are UTF-8: the length of the valid UTF-8 sequence that starts at
 * s (1 to 4 bytes; 1 for ASCII), or 0 when s[0] starts none (a stray byte, an overlong or
 * surrogate encoding). Strings written are made valid first (a stray byte becomes "\xNN"). */
size_t bench_utf8_sequence(const char *s);

/* Is path an existing regular file holding a results file (an HDF5 file whose root attribute
 * `format` is "attnbench-results", whatever its version)? Reads only that attribute; false for
 * anything else, missing or unreadable. For commands that must never write into one. */
bool bench_store_is_results(const char *path);

/* Read back (plots, fits, tests): every row of /runs or /points; free() the arrays. A file a
 * sweep is writing is read as of its last flushed point (a read that meets a flush in progress
 * is retried). */
attn_status bench_store_read_runs(const char *path, bench_run **runs, int64_t *n, char *msg,
                                  size_t msg_len);
attn_status bench_store_read_points(const char *path, bench_point **points, int64_t *n, char *msg,
                                    size_t msg_len);
/* Replace the /fits rows of run_id by rows[0..n) (creating /fits if absent; other runs' rows are
 * kept, and a /fits written before a column was added is rewritten in the current layout, the
 * missing column empty). rows[i].run_id is set to run_id. */
attn_status bench_store_write_fits(const char *path, int64_t run_id, const bench_fit_row *rows,
                                   int64_t n, char *msg, size_t msg_len);
/* Every row of /hosts; none (ATTN_OK, *n = 0) when the file has no /hosts. free() the array. */
attn_status bench_store_read_hosts(const char *path, bench_host **hosts, int64_t *n, char *msg,
                                   size_t msg_len);
/* Every row of /fits; none (ATTN_OK, *n = 0) when the file has no /fits. free() the array. */
attn_status bench_store_read_fits(const char *path, bench_fit_row **rows, int64_t *n, char *msg,
                                  size_t msg_len);

/* Every row of /samples (every run's repetitions, in the order written). free() the array. */
attn_status bench_store_read_samples(const char *path, bench_sample **rows, int64_t *n, char *msg,
                                     size_t msg_len);

/* The columns of the tables, for readers that take every column (bench export) and for the
 * column attributes: the same field tables build the HDF5 types, so a column added there appears
 * here too. A row of runs, points, samples, hosts or fits is the C struct its reader returns
 * (bench_run, bench_point, bench_sample, bench_host, bench_fit_row); /run_status has no reader. */
typedef enum {
    BENCH_TABLE_RUNS,
    BENCH_TABLE_POINTS,
    BENCH_TABLE_SAMPLES,
    BENCH_TABLE_RUN_STATUS,
    BENCH_TABLE_HOSTS,
    BENCH_TABLE_FITS,
    BENCH_NTABLES
} bench_table_id;
typedef enum {
    BENCH_COL_I32,
    BENCH_COL_I64,
    BENCH_COL_U64,
    BENCH_COL_F64,
    BENCH_COL_STR
} bench_col_type;
typedef struct bench_column {
    const char *name; /* as in the file */
    size_t offset;    /* in the row struct */
    bench_col_type type;
    size_t size;             /* bytes; for BENCH_COL_STR the buffer length (NUL-terminated) */
    const char *unit;        /* FIELD_<i>_UNIT: "s", "B", "GFLOP/s", "1", "text", ... */
    const char *description; /* FIELD_<i>_DESCRIPTION */
} bench_column;
/* The number of columns of table t, and column i (0 <= i < that number) in file order. */
int bench_store_ncolumns(bench_table_id t);
bench_column bench_store_column(bench_table_id t, int i);
/* "/points" and so on; the size of one row struct. */
const char *bench_store_table_name(bench_table_id t);
size_t bench_store_row_size(bench_table_id t);

/* ---- tensors in HDF5 (tensor_io.c): `bench run --output` (--input is read by the file
 * dataset, datasets/file.c) ---- */

/* May bench_tensor_write add to path? Absent, or an HDF5 file that is not a results file: yes;
 * anything else is refused (and left untouched). Lets a caller refuse before a long computation. */
attn_status bench_tensor_check_target(const char *path, char *msg, size_t msg_len);
/* Write (create or replace) dataset `name` [dims] in path. An absent path is created under a
 * temporary name and renamed into place once complete (a failure leaves no file); an existing
 * one is written under the writers' lock. The room on disk is checked first. */
attn_status bench_tensor_write(const char *path, const char *name, const int64_t dims[4],
                               const float *data, char *msg, size_t msg_len);
/* Add a float32 dataset `name` of rank 1..4 [dims] to the HDF5 file path (which exists: `o`
 * was written first), replacing a dataset of that name, with string attributes: names[i] =
 * values[i] for i < nattrs (a kind's weight beside `o`: kind, summary, source). */
attn_status bench_tensor_add(const char *path, const char *name, int rank, const int64_t *dims,
                             const float *data, const char *const *names, const char *const *values,
                             int nattrs, char *msg, size_t msg_len);

#endif
