/*
 * h5store.c — the HDF5 results store of results.h: one file holds the runs, points and timing
 * samples of any number of sweeps as three appendable compound tables (/runs, /points, /samples),
 * flushed after every point so an interrupted sweep keeps what it finished, and /run_status (how
 * each run ended). Also reads them back, and keeps the optional /fits table of `bench fit`
 * (rewritten whole, one run's rows replaced). New files, the writers' lock and the room check
 * come from atomic.h; a write that fails half way is rolled back after reopening the file (HDF5
 * cannot shrink a table whose unwritten chunk is still in its cache).
 *
 * Compound types are built from one field table per struct (name, offset, kind, size): adding a
 * field to bench_run or bench_point is one line in its table. In memory the types follow the C
 * structs (offsetof) with NUL-terminated strings; in the file they are packed, NUL-padded UTF-8.
 */
#include "results.h"

#include "atomic.h"

#include <errno.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "signals.h"

/* Library code never prints: turn off HDF5's automatic error stack printing. */
static void quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

/* H5Pset_file_locking: HDF5 1.10.7 and later 1.10, 1.12.1 and later. */
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7) || H5_VERSION_GE(1, 12, 1)
#define HAVE_SET_FILE_LOCKING 1
#endif

/* File access properties with HDF5's own file locking off (a flock() held while the file is open:
 * a writer's would refuse every reader for the whole sweep). Writers are serialised by the
 * writers' lock of atomic.h instead; readers see the file as of its last flush. H5Pclose it. */
static hid_t unlocked_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#ifdef HAVE_SET_FILE_LOCKING
    if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1);
#else
    setenv("HDF5_USE_FILE_LOCKING", "FALSE", 0); /* older HDF5 reads it at every open */
#endif
    return fapl;
}

/* H5Fopen path (flags: H5F_ACC_RDONLY or H5F_ACC_RDWR) without HDF5's file locking. */
static hid_t open_unlocked(const char *path, unsigned flags)
{
    hid_t fapl = unlocked_fapl();
    hid_t file = fapl < 0 ? -1 : H5Fopen(path, flags, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    return file;
}

/* ---- compound types from field tables ---- */

typedef enum { F_I32, F_I64, F_U64, F_F64, F_STR } field_kind;

typedef struct field {
    const char *name; /* member name in the file: the struct field's name */
    size_t offset;    /* offsetof in the C struct */
    field_kind kind;
    size_t size;             /* sizeof the struct field (the string length for F_STR) */
    const char *unit;        /* FIELD_<i>_UNIT: see UNITS below */
    const char *description; /* FIELD_<i>_DESCRIPTION: one line */
} field;

/* The units of FIELD_<i>_UNIT (docs/results-format.md "Units and descriptions"): "s" seconds; "B"
 * bytes; "flop" floating-point operations; "GFLOP/s" 1e9 flop per second; "GB/s" 1e9 bytes per
 * second (not GiB); "1" a dimensionless number (a count, an index, a ratio, a fraction: never a
 * percentage); "%" a percentage (100 = all); "flag" 0 or 1; "text" a string; "ISO 8601 UTC" a time
 * as text. */

/* The field tables, one column each: FIELD(T, f, kind, unit, description). A column added with
 * FIELD(T, f, kind) compiles with an empty unit and description (and fails the test that every
 * column is described: tests/test_h5store.c). clang-format would pack them into columns. */
/* clang-format off */
#define FIELD_(T, f, kind, unit, description, ...) \
    { #f, offsetof(T, f), kind, sizeof(((T *)0)->f), unit, description }
#define FIELD(T, f, ...) FIELD_(T, f, __VA_ARGS__, "", "", 0)

static const field run_fields[] = {
    FIELD(bench_run, run_id, F_I64, "1", "the run: 1, 2, ... in the order runs were appended"),
    FIELD(bench_run, started_at, F_STR, "ISO 8601 UTC", "when the run started"),
    FIELD(bench_run, command, F_STR, "text", "the command line, arguments separated by spaces"),
    FIELD(bench_run, git_commit, F_STR, "text", "git describe --always --dirty of the build"),
    FIELD(bench_run, host, F_STR, "text", "host name of the machine"),
    FIELD(bench_run, cpu_model, F_STR, "text", "CPU model of the machine"),
    FIELD(bench_run, build, F_STR, "text", "compiler, build type and the flags that matter"),
    FIELD(bench_run, openblas_config, F_STR, "text", "openblas_get_config()"),
    FIELD(bench_run, hdf5_version, F_STR, "text", "HDF5 library version of the build"),
    FIELD(bench_run, threads, F_I32, "1", "OpenMP threads of the forwards"),
    FIELD(bench_run, blas_threads, F_I32, "1",
          "OpenBLAS threads in force outside parallel regions"),
    FIELD(bench_run, seed, F_U64, "1", "base seed of the inputs (--seed)"),
    FIELD(bench_run, sgemm_gflops, F_F64, "GFLOP/s",
          "OpenBLAS sgemm (2048^3) measured at the start of the run, 1e9 flop/s"),
    FIELD(bench_run, mem_bandwidth_gbs, F_F64, "GB/s",
          "memory read bandwidth (parallel sum over 1 GiB) at the start of the run, 1e9 B/s"),
};

static const field point_fields[] = {
    FIELD(bench_point, run_id, F_I64, "1", "the run of /runs the point belongs to"),
    FIELD(bench_point, point_id, F_I64, "1", "the point: 0, 1, ... unique within the file"),
    FIELD(bench_point, kind, F_STR, "text", "the attention kind (bench list)"),
    FIELD(bench_point, params, F_STR, "text",
          "the kind's parameters as name=value,..., resolved for the point"),
    FIELD(bench_point, dataset, F_STR, "text", "the input dataset (bench datasets)"),
    FIELD(bench_point, dataset_params, F_STR, "text",
          "the dataset's parameters as name=value,..."),
    FIELD(bench_point, mode, F_STR, "text",
          "prefill, or decode: q_len newest queries against a KV cache of kv_len keys"),
    FIELD(bench_point, batch, F_I64, "1", "batch size B"),
    FIELD(bench_point, heads, F_I64, "1", "query heads H"),
    FIELD(bench_point, kv_heads, F_I64, "1", "key/value heads Hkv"),
    FIELD(bench_point, q_len, F_I64, "1", "queries per head T"),
    FIELD(bench_point, kv_len, F_I64, "1", "keys per head S (n)"),
    FIELD(bench_point, head_dim, F_I64, "1", "head dimension D"),
    FIELD(bench_point, causal, F_I32, "flag", "causal mask, last query aligned with last key"),
    FIELD(bench_point, threads, F_I32, "1", "OpenMP threads of the forward"),
    FIELD(bench_point, seed, F_U64, "1", "seed of the point's inputs"),
    FIELD(bench_point, warmup, F_I32, "1", "untimed warm-up runs before timing (at least)"),
    FIELD(bench_point, reps, F_I32, "1", "timed repetitions (rows in /samples)"),
    FIELD(bench_point, time_median_s, F_F64, "s", "median time of one forward (decode: one step)"),
    FIELD(bench_point, time_min_s, F_F64, "s", "fastest timed repetition"),
    FIELD(bench_point, time_max_s, F_F64, "s", "slowest timed repetition"),
    FIELD(bench_point, time_p95_s, F_F64, "s", "95th percentile of the timed repetitions"),
    FIELD(bench_point, time_mean_s, F_F64, "s", "mean of the timed repetitions"),
    FIELD(bench_point, time_stddev_s, F_F64, "s", "standard deviation of the timed repetitions"),
    FIELD(bench_point, time_cv, F_F64, "1",
          "coefficient of variation: stddev / mean, a fraction (0.05 is 5 %)"),
    FIELD(bench_point, flops, F_F64, "flop",
          "useful floating-point operations of the timed pass (backward: 2.5 x forward)"),
    FIELD(bench_point, gflops_per_s, F_F64, "GFLOP/s", "flops / median time / 1e9"),
    FIELD(bench_point, bytes, F_F64, "B",
          "bytes of q, out and of the k, v rows the kind reads, each moved once"),
    FIELD(bench_point, gbytes_per_s, F_F64, "GB/s", "bytes / median time / 1e9 (not GiB)"),
    FIELD(bench_point, kv_bytes, F_F64, "B", "the k, v part of bytes (the KV cache of decode)"),
    FIELD(bench_point, state_bytes, F_I64, "B", "decode state kept between steps, 0 if none"),
    FIELD(bench_point, workspace_bytes, F_I64, "B",
          "scratch the kind declared for the shape, threads and pass, allocated exactly"),
    FIELD(bench_point, peak_rss_bytes, F_I64, "B",
          "peak resident set of the process during the point"),
    FIELD(bench_point, base_rss_bytes, F_I64, "B",
          "resident set when the point started: the point added at most peak - base"),
    FIELD(bench_point, accuracy_rows, F_I32, "1",
          "query rows compared with the float64 reference"),
    FIELD(bench_point, rel_err, F_F64, "1",
          "||o - o_ref||_2 / ||o_ref||_2 over the sampled rows, against exact softmax attention"),
    FIELD(bench_point, max_abs_err, F_F64, "1",
          "max |o - o_ref| over the sampled rows, against exact softmax attention"),
    FIELD(bench_point, cosine, F_F64, "1",
          "mean over the sampled rows of cos(o_row, o_ref_row), against exact softmax attention"),
    FIELD(bench_point, retrieval_queries, F_I32, "1",
          "planted queries of a retrieval dataset (needle), 0 otherwise"),
    FIELD(bench_point, retrieval, F_F64, "1",
          "fraction of the planted queries retrieved (NaN when retrieval_queries is 0)"),
    FIELD(bench_point, self_rel_err, F_F64, "1",
          "relative L2 error against the kind's own float64 definition"),
    FIELD(bench_point, rank, F_I32, "1",
          "MPI rank that measured the point: 0 without mpirun, -1 for a collective point"),
    FIELD(bench_point, host, F_STR, "text", "host that measured the point (its facts in /hosts)"),
    FIELD(bench_point, comm_time_s, F_F64, "s",
          "distributed kinds: time waiting for messages per forward, slowest rank (NaN: others)"),
    FIELD(bench_point, compute_time_s, F_F64, "s",
          "distributed kinds: time computing per forward, slowest rank (NaN: others)"),
    FIELD(bench_point, comm_bytes, F_F64, "B",
          "distributed kinds: bytes sent per forward, all ranks together (NaN: others)"),
    FIELD(bench_point, overlap, F_F64, "1",
          "distributed kinds: share of the messages' time in flight hidden behind compute"),
    FIELD(bench_point, compute_imbalance, F_F64, "1",
          "distributed kinds: slowest rank's compute time / the mean rank's - 1 (0: balanced)"),
    FIELD(bench_point, pass, F_STR, "text",
          "the timed pass: forward, backward (dq, dk, dv given dout) or train (both)"),
    FIELD(bench_point, saved_bytes, F_I64, "B",
          "bytes the forward saves for the backward (row log-sum-exp ...; 0: forward pass)"),
    FIELD(bench_point, isa, F_STR, "text",
          "kernel set in force: portable, avx2 or avx512 (--isa, ATTN_ISA; default the best)"),
    FIELD(bench_point, peak_gflops, F_F64, "GFLOP/s",
          "FMA peak of the point's kernel set on its threads (all at once), 1e9 flop/s"),
    FIELD(bench_point, sgemm_gflops, F_F64, "GFLOP/s",
          "OpenBLAS sgemm (2048^3) on the point's threads, measured once per run and threads"),
    FIELD(bench_point, bandwidth_gbs, F_F64, "GB/s",
          "memory read bandwidth on the point's threads, measured once per run and threads"),
    FIELD(bench_point, pct_peak, F_F64, "%", "100 * gflops_per_s / peak_gflops"),
    FIELD(bench_point, pct_sgemm, F_F64, "%", "100 * gflops_per_s / sgemm_gflops"),
    FIELD(bench_point, dtype, F_STR, "text",
          "storage of q, k, v: f32, bf16 or f16 (out and gradients float32); bytes count it"),
    FIELD(bench_point, status, F_STR, "text", "ok, nonfinite (output holds NaN or Inf) or error"),
    FIELD(bench_point, message, F_STR, "text", "why, when status is not ok; notes otherwise"),
};

/* One row of /samples (results.h). */
typedef bench_sample sample_row;

static const field sample_fields[] = {
    FIELD(sample_row, run_id, F_I64, "1", "the run of the point"),
    FIELD(sample_row, point_id, F_I64, "1", "the point of /points"),
    FIELD(sample_row, rep, F_I32, "1", "the timed repetition: 0, 1, ... within the point"),
    FIELD(sample_row, seconds, F_F64, "s", "time of that forward (decode: that step)"),
};

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

static const field status_fields[] = {
    FIELD(status_row, run_id, F_I64, "1", "the run of /runs"),
    FIELD(status_row, status, F_STR, "text",
          "running (not closed: being written, or killed), complete, incomplete (a write "
          "failed) or interrupted (SIGINT, SIGTERM, SIGHUP)"),
    FIELD(status_row, planned_points, F_I64, "1",
          "points the run set out to measure (a sweep's grid; 0: not said)"),
    FIELD(status_row, finished_points, F_I64, "1", "points of the run stored in /points"),
    FIELD(status_row, started_at, F_STR, "ISO 8601 UTC", "when the run started"),
    FIELD(status_row, ended_at, F_STR, "ISO 8601 UTC",
          "when the run was closed, or its last point stored (running)"),
    FIELD(status_row, message, F_STR, "text", "what happened, when incomplete or interrupted"),
};

static const field host_fields[] = {
    FIELD(bench_host, run_id, F_I64, "1", "the run of /runs the host served"),
    FIELD(bench_host, host, F_STR, "text", "host name"),
    FIELD(bench_host, rank, F_I32, "1", "the rank that measured the yardsticks (lowest on the host)"),
    FIELD(bench_host, ranks, F_I32, "1", "ranks of the run on this host"),
    FIELD(bench_host, cpu_model, F_STR, "text", "CPU model of the host"),
    FIELD(bench_host, threads, F_I32, "1", "OpenMP threads of its ranks' forwards and yardsticks"),
    FIELD(bench_host, sgemm_gflops, F_F64, "GFLOP/s",
          "OpenBLAS sgemm (2048^3) on this host at the start of the run, 1e9 flop/s"),
    FIELD(bench_host, mem_bandwidth_gbs, F_F64, "GB/s",
          "memory read bandwidth on this host at the start of the run, 1e9 B/s"),
};

static const field fit_fields[] = {
    FIELD(bench_fit_row, run_id, F_I64, "1", "the run fitted"),
    FIELD(bench_fit_row, kind, F_STR, "text", "the series' kind"),
    FIELD(bench_fit_row, params, F_STR, "text",
          "its parameters as in /points (auto: resolved per n by the sweep)"),
    FIELD(bench_fit_row, dataset, F_STR, "text", "the series' dataset"),
    FIELD(bench_fit_row, dataset_params, F_STR, "text", "its parameters"),
    FIELD(bench_fit_row, mode, F_STR, "text", "prefill or decode"),
    FIELD(bench_fit_row, batch, F_I64, "1", "batch size B"),
    FIELD(bench_fit_row, heads, F_I64, "1", "query heads H"),
    FIELD(bench_fit_row, kv_heads, F_I64, "1", "key/value heads Hkv"),
    FIELD(bench_fit_row, head_dim, F_I64, "1", "head dimension D"),
    FIELD(bench_fit_row, q_len, F_I64, "1", "decode: queries per step; 0 in prefill (q_len = n)"),
    FIELD(bench_fit_row, causal, F_I32, "flag", "causal mask"),
    FIELD(bench_fit_row, pass, F_STR, "text", "the timed pass: forward, backward or train"),
    FIELD(bench_fit_row, metric, F_STR, "text",
          "time (median s per forward), rss_added (peak - base RSS, B), peak_rss (B) or "
          "workspace (B)"),
    FIELD(bench_fit_row, points, F_I32, "1", "points fitted"),
    FIELD(bench_fit_row, n_min, F_I64, "1", "smallest n fitted"),
    FIELD(bench_fit_row, n_max, F_I64, "1", "largest n fitted"),
    FIELD(bench_fit_row, exponent, F_F64, "1", "k of metric = prefactor * n^k (log-log slope)"),
    FIELD(bench_fit_row, exponent_lo, F_F64, "1",
          "lower end of the exponent's 95 % confidence interval (NaN under 3 points)"),
    FIELD(bench_fit_row, exponent_hi, F_F64, "1",
          "upper end of the exponent's 95 % confidence interval (NaN under 3 points)"),
    FIELD(bench_fit_row, r2, F_F64, "1", "R^2 of the log-log fit"),
    FIELD(bench_fit_row, prefactor, F_F64, "metric / n^exponent",
          "prefactor of the power law, in the metric's unit (s or B) per n^exponent"),
    FIELD(bench_fit_row, theory, F_F64, "1",
          "the exponent the kind's own counts imply (flops or bytes) over the same points"),
    FIELD(bench_fit_row, reference_params, F_STR, "text",
          "the full series compared against (empty: none, or full itself)"),
    FIELD(bench_fit_row, reference_kv_heads, F_I64, "1", "its key/value heads"),
    FIELD(bench_fit_row, crossover, F_STR, "text",
          "below full's metric: above crossover_n, below it, always, never, or empty"),
    FIELD(bench_fit_row, crossover_n, F_F64, "1",
          "the n where the metric crosses full's (log-log interpolation), NaN otherwise"),
    FIELD(bench_fit_row, ratio_at_max, F_F64, "1",
          "metric / full's metric at the largest common n"),
    FIELD(bench_fit_row, ratio_n, F_I64, "1", "that n"),
    FIELD(bench_fit_row, threads, F_I32, "1", "OpenMP threads of the series' points"),
    FIELD(bench_fit_row, isa, F_STR, "text", "kernel set of the series' points"),
};
/* clang-format on */

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

typedef struct table {
    const char *dset; /* "/runs" */
    const field *fields;
    size_t nfields;
    size_t row_size; /* sizeof the C struct */
    hsize_t chunk_rows;
    const char *title; /* its TITLE attribute */
} table;

/* clang-format off */
static const table runs_table = {"/runs", run_fields, NFIELDS(run_fields), sizeof(bench_run), 64,
                                 "one row per run"};
static const table points_table = {"/points", point_fields, NFIELDS(point_fields),
                                   sizeof(bench_point), 64, "one row per measured point"};
static const table samples_table = {"/samples", sample_fields, NFIELDS(sample_fields),
                                    sizeof(sample_row), 1024,
                                    "one row per timed repetition of a point"};
static const table status_table = {"/run_status", status_fields, NFIELDS(status_fields),
                                   sizeof(status_row), 64, "one row per run: how it ended"};
static const table hosts_table = {"/hosts", host_fields, NFIELDS(host_fields), sizeof(bench_host),
                                  64, "one row per host of a run: its machine facts and yardsticks"};
static const table fits_table = {"/fits", fit_fields, NFIELDS(fit_fields), sizeof(bench_fit_row),
                                 64, "one row per fitted series and metric (bench fit)"};
/* clang-format on */
/* The compound type of a table: in memory (struct offsets, NUL-terminated strings) or in the
 * file (packed, NUL-padded strings). Returns a type id to H5Tclose, or -1. */
static hid_t compound_type(const table *t, bool in_file)
{
    size_t size = t->row_size;
    if (in_file) {
        size = 0;
        for (size_t i = 0; i < t->nfields; i++) size += t->fields[i].size;
    }
    hid_t ct = H5Tcreate(H5T_COMPOUND, size);
    if (ct < 0) return -1;
    size_t packed = 0;
    for (size_t i = 0; i < t->nfields; i++) {
        const field *f = &t->fields[i];
        size_t offset = in_file ? packed : f->offset;
        packed += f->size;
        herr_t err;
        if (f->kind == F_STR) {
            hid_t st = H5Tcopy(H5T_C_S1);
            err = st < 0 ? -1 : 0;
            if (err >= 0) err = H5Tset_size(st, f->size);
            if (err >= 0) err = H5Tset_strpad(st, in_file ? H5T_STR_NULLPAD : H5T_STR_NULLTERM);
            if (err >= 0) err = H5Tset_cset(st, H5T_CSET_UTF8);
            if (err >= 0) err = H5Tinsert(ct, f->name, offset, st);
            if (st >= 0) H5Tclose(st);
        } else {
            hid_t nt = f->kind == F_I32   ? H5T_NATIVE_INT32
                       : f->kind == F_I64 ? H5T_NATIVE_INT64
                       : f->kind == F_U64 ? H5T_NATIVE_UINT64
                                          : H5T_NATIVE_DOUBLE;
            err = H5Tinsert(ct, f->name, offset, nt);
        }
        if (err < 0) {
            H5Tclose(ct);
            return -1;
        }
    }
    return ct;
}

/* Strings read back are NUL-terminated even if a foreign writer filled the whole field. */
static void terminate_strings(const table *t, void *rows, int64_t n)
{
    for (int64_t r = 0; r < n; r++) {
        char *row = (char *)rows + (size_t)r * t->row_size;
        for (size_t i = 0; i < t->nfields; i++)
            if (t->fields[i].kind == F_STR) row[t->fields[i].offset + t->fields[i].size - 1] = '\0';
    }
}

/* ---- datasets ---- */

/* Attribute `name` of obj: the string value (fixed length, NUL-terminated, UTF-8). */
static herr_t write_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t stype = H5Tcopy(H5T_C_S1);
    hid_t scalar = H5Screate(H5S_SCALAR);
    herr_t err = (stype < 0 || scalar < 0) ? -1 : 0;
    if (err >= 0) err = H5Tset_size(stype, strlen(value) + 1);
    if (err >= 0) err = H5Tset_strpad(stype, H5T_STR_NULLTERM);
    if (err >= 0) err = H5Tset_cset(stype, H5T_CSET_UTF8);
    if (err >= 0) {
        hid_t a = H5Acreate2(obj, name, stype, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, stype, value);
        if (a >= 0) H5Aclose(a);
    }
    if (scalar >= 0) H5Sclose(scalar);
    if (stype >= 0) H5Tclose(stype);
    return err;
}

/* The attributes that describe table t (the HDF5 high-level table convention, H5TB): CLASS,
 * VERSION, TITLE, FIELD_<i>_NAME; and ours: FIELD_<i>_UNIT, FIELD_<i>_DESCRIPTION. */
static herr_t describe_table(hid_t dset, const table *t)
{
    herr_t err = write_string_attr(dset, "CLASS", "TABLE");
    if (err >= 0) err = write_string_attr(dset, "VERSION", "3.0");
    if (err >= 0) err = write_string_attr(dset, "TITLE", t->title);
    for (size_t i = 0; i < t->nfields && err >= 0; i++) {
        const char *what[] = {"NAME", "UNIT", "DESCRIPTION"};
        const char *value[] = {t->fields[i].name, t->fields[i].unit, t->fields[i].description};
        for (int w = 0; w < 3 && err >= 0; w++) {
            char name[64];
            snprintf(name, sizeof name, "FIELD_%zu_%s", i, what[w]);
            err = write_string_attr(dset, name, value[w]);
        }
    }
    return err;
}

/* Create an empty, extendable, chunked 1-D dataset for table t, described (describe_table). */
static herr_t create_table(hid_t file, const table *t)
{
    hsize_t dims = 0, maxdims = H5S_UNLIMITED;
    hid_t ftype = compound_type(t, true);
    hid_t space = H5Screate_simple(1, &dims, &maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t err = (ftype < 0 || space < 0 || dcpl < 0) ? -1 : 0;
    if (err >= 0) err = H5Pset_chunk(dcpl, 1, &t->chunk_rows);
    if (err >= 0) {
        hid_t dset = H5Dcreate2(file, t->dset, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        err = dset < 0 ? -1 : describe_table(dset, t);
        if (dset >= 0 && H5Dclose(dset) < 0) err = -1;
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    return err;
}

/* Number of rows of a 1-D dataset, or -1. */
static int64_t table_rows(hid_t dset)
{
    hid_t space = H5Dget_space(dset);
    if (space < 0) return -1;
    int64_t n = -1;
    if (H5Sget_simple_extent_ndims(space) == 1) {
        hsize_t dims;
        if (H5Sget_simple_extent_dims(space, &dims, NULL) == 1) n = (int64_t)dims;
    }
    H5Sclose(space);
    return n;
}

/* Resize a 1-D dataset to n rows. */
static herr_t set_rows(hid_t dset, int64_t n)
{
    hsize_t dims = (hsize_t)n;
    return H5Dset_extent(dset, &dims);
}

/* Write (or read) rows [first, first+n) of a 1-D dataset from (into) buf, memory type mtype. */
static herr_t rows_io(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf, bool write)
{
    if (n == 0) return 0;
    hsize_t start = (hsize_t)first, count = (hsize_t)n;
    hid_t fspace = H5Dget_space(dset);
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    herr_t err = (fspace < 0 || mspace < 0) ? -1 : 0;
    if (err >= 0) err = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
    if (err >= 0)
        err = write ? H5Dwrite(dset, mtype, mspace, fspace, H5P_DEFAULT, buf)
                    : H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf);
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
    return err;
}

/* Append n rows to a 1-D dataset that currently has `first` rows. */
static herr_t append_rows(hid_t dset, hid_t mtype, int64_t first, const void *rows, int64_t n)
{
    if (n == 0) return 0;
    if (set_rows(dset, first + n) < 0) return -1;
    return rows_io(dset, mtype, first, n, (void *)rows, true);
}

static herr_t read_rows(hid_t dset, hid_t mtype, int64_t first, int64_t n, void *buf)
{
    return rows_io(dset, mtype, first, n, buf, false);
}

/* ---- the format attributes ---- */

static herr_t write_format_attrs(hid_t file)
{
    hid_t stype = H5Tcopy(H5T_C_S1);
    hid_t scalar = H5Screate(H5S_SCALAR);
    herr_t err = (stype < 0 || scalar < 0) ? -1 : 0;
    if (err >= 0) err = H5Tset_size(stype, strlen(BENCH_FORMAT));
    if (err >= 0) err = H5Tset_strpad(stype, H5T_STR_NULLPAD);
    if (err >= 0) err = H5Tset_cset(stype, H5T_CSET_UTF8);
    if (err >= 0) {
        hid_t a = H5Acreate2(file, "format", stype, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, stype, BENCH_FORMAT);
        if (a >= 0) H5Aclose(a);
    }
    if (err >= 0) {
        int32_t version = BENCH_FORMAT_VERSION;
        hid_t a =
            H5Acreate2(file, "format_version", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
        err = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT32, &version);
        if (a >= 0) H5Aclose(a);
    }
    if (scalar >= 0) H5Sclose(scalar);
    if (stype >= 0) H5Tclose(stype);
    return err;
}

/* Read the scalar string attribute `name` of obj into buf (fixed or variable length).
 * Returns 1 if read, 0 if absent or not a scalar string, -1 on error. */
static int read_string_attr(hid_t obj, const char *name, char *buf, size_t len)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists <= 0) return exists < 0 ? -1 : 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ftype = a < 0 ? -1 : H5Aget_type(a);
    hid_t space = a < 0 ? -1 : H5Aget_space(a);
    hid_t mtype = -1;
    int result = -1;
    if (ftype < 0 || space < 0) goto done;
    result = 0;
    if (H5Tget_class(ftype) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1) goto done;
    mtype = H5Tcopy(H5T_C_S1);
    /* HDF5 does not convert between ASCII and UTF-8: read in the attribute's own cset */
    if (mtype < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
        result = -1;
        goto done;
    }
    if (H5Tis_variable_str(ftype) > 0) {
        char *s = NULL;
        if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(a, mtype, &s) < 0) {
            result = -1;
            goto done;
        }
        snprintf(buf, len, "%s", s ? s : "");
        H5free_memory(s);
    } else {
        if (H5Tset_size(mtype, len) < 0 || H5Tset_strpad(mtype, H5T_STR_NULLTERM) < 0 ||
            H5Aread(a, mtype, buf) < 0) {
            result = -1;
            goto done;
        }
        buf[len - 1] = '\0';
    }
    result = 1;
done:
    if (mtype >= 0) H5Tclose(mtype);
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (a >= 0) H5Aclose(a);
    return result;
}

/* Read the scalar integer attribute `name` of obj. Returns 1 if read, 0 if absent or not an
 * integer, -1 on error. */
static int read_int_attr(hid_t obj, const char *name, int64_t *value)
{
    htri_t exists = H5Aexists(obj, name);
    if (exists <= 0) return exists < 0 ? -1 : 0;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ftype = a < 0 ? -1 : H5Aget_type(a);
    hid_t space = a < 0 ? -1 : H5Aget_space(a);
    int result = -1;
    if (ftype >= 0 && space >= 0) {
        result = 0;
        if (H5Tget_class(ftype) == H5T_INTEGER && H5Sget_simple_extent_npoints(space) == 1)
            result = H5Aread(a, H5T_NATIVE_INT64, value) < 0 ? -1 : 1;
    }
    if (space >= 0) H5Sclose(space);
    if (ftype >= 0) H5Tclose(ftype);
    if (a >= 0) H5Aclose(a);
    return result;
}

/* Is the existing file at path an attnbench results file of a format_version from min_version
 * to ours? Opens it read-only; never modifies it. ATTN_OK or ATTN_EINVAL with a message ending in
 * `fix` (what to do: "; choose another --out" when writing, "" when reading). */
static attn_status check_results_file(const char *path, const char *fix, int min_version, char *msg,
                                      size_t msg_len)
{
#if H5_VERSION_GE(1, 12, 0)
    htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is_h5 = H5Fis_hdf5(path);
#endif
    if (is_h5 == 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is not an attnbench results file (not an HDF5 file)%s", path, fix);
    if (is_h5 < 0) {
        if (access(path, R_OK) != 0)
            return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path,
                             strerror(errno));
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is not an attnbench results file (HDF5 cannot read it)%s", path, fix);
    }
    hid_t file = open_unlocked(path, H5F_ACC_RDONLY);
    if (file < 0)
        return attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "cannot open %s: HDF5 refused it (damaged, or open for writing elsewhere?)", path);
    attn_status st = ATTN_OK;
    char format[64];
    int64_t version = 0;
    int got = read_string_attr(file, "format", format, sizeof format);
    if (got < 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read the 'format' attribute of %s", path);
    } else if (got == 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is not an attnbench results file (no 'format' attribute)%s", path, fix);
    } else if (strcmp(format, BENCH_FORMAT) != 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is not an attnbench results file (format '%.40s', expected '%s')%s",
                       path, format, BENCH_FORMAT, fix);
    } else if ((got = read_int_attr(file, "format_version", &version)) <= 0) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s has no readable integer 'format_version' attribute%s", path, fix);
    } else if (version >= BENCH_FORMAT_VERSION_READ && version < min_version) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is an attnbench results file of format_version %lld (an older build): "
                       "this build reads it but appends runs only to version %d files%s",
                       path, (long long)version, BENCH_FORMAT_VERSION, fix);
    } else if (version < min_version || version > BENCH_FORMAT_VERSION) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is an attnbench results file of format_version %lld, but this build "
                       "reads versions %d to %d and writes version %d%s",
                       path, (long long)version, BENCH_FORMAT_VERSION_READ, BENCH_FORMAT_VERSION,
                       BENCH_FORMAT_VERSION, fix);
    } else {
        const char *names[] = {runs_table.dset, points_table.dset, samples_table.dset};
        for (size_t i = 0; i < sizeof names / sizeof names[0] && st == ATTN_OK; i++)
            if (H5Lexists(file, names[i], H5P_DEFAULT) <= 0)
                st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s is damaged: it has no %s table%s",
                               path, names[i], fix);
    }
    H5Fclose(file);
    return st;
}

/* ---- the store ---- */

/* Room checked before each write (atomic.h, bench_room): the chunks a row may add, and this for
 * the metadata (B-tree nodes, object headers, the superblock). */
enum { ROOM_MARGIN = 64 * 1024 };

/* The bytes of the new chunks that adding `add` rows to table t of `rows` rows allocates. */
static int64_t new_chunk_bytes(const table *t, int64_t rows, int64_t add)
{
    const int64_t per = (int64_t)t->chunk_rows, allocated = (rows + per - 1) / per;
    const int64_t needed = (rows + add + per - 1) / per;
    return (needed - allocated) * per * (int64_t)t->row_size;
}

struct bench_store {
    hid_t file;
    hid_t runs, points, samples, status;                  /* datasets */
    hid_t run_type, point_type, sample_type, status_type; /* memory types */
    int64_t run_id;           /* last run begun through this handle, or 0 */
    int64_t status_row;       /* its row in /run_status */
    int64_t run_points;       /* its points stored */
    int64_t planned;          /* its planned points (bench_store_set_planned), 0: not said */
    char started_at[32];      /* its start (bench_run.started_at) */
    bool run_failed;          /* a write failed: the run is marked incomplete */
    bool write_failed;        /* a run could not be begun: a new file is not published */
    int lock_fd;              /* the writers' lock (atomic.h), or -1 */
    char tmp[BENCH_PATH_MAX]; /* a new file's temporary name until it is published, or "" */
    char path[BENCH_PATH_MAX];
};

/* Close st's HDF5 objects and file. */
static void close_hdf5(bench_store *st)
{
    hid_t *ids[] = {&st->run_type, &st->point_type, &st->sample_type, &st->status_type};
    for (size_t i = 0; i < NFIELDS(ids); i++)
        if (*ids[i] >= 0) H5Tclose(*ids[i]), *ids[i] = -1;
    hid_t *dsets[] = {&st->runs, &st->points, &st->samples, &st->status};
    for (size_t i = 0; i < NFIELDS(dsets); i++)
        if (*dsets[i] >= 0) H5Dclose(*dsets[i]), *dsets[i] = -1;
    if (st->file >= 0) H5Fclose(st->file), st->file = -1;
}

/* Close the file (discarding an unpublished new one) and release the lock; st stays. */
static void store_close_file(bench_store *st)
{
    close_hdf5(st);
    bench_tmp_discard(st->tmp);
    st->tmp[0] = '\0';
    bench_unlock(st->lock_fd);
    st->lock_fd = -1;
}

static void store_free(bench_store *st)
{
    store_close_file(st);
    free(st);
}

/* Open the tables of st->file and build the row types. */
static attn_status open_tables(bench_store *st, char *msg, size_t msg_len)
{
    st->runs = H5Dopen2(st->file, runs_table.dset, H5P_DEFAULT);
    st->points = H5Dopen2(st->file, points_table.dset, H5P_DEFAULT);
    st->samples = H5Dopen2(st->file, samples_table.dset, H5P_DEFAULT);
    st->status = H5Dopen2(st->file, status_table.dset, H5P_DEFAULT);
    if (st->runs < 0 || st->points < 0 || st->samples < 0 || st->status < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is damaged: it lacks one of /runs, /points, /samples, /run_status; "
                         "choose another --out",
                         st->path);
    st->run_type = compound_type(&runs_table, false);
    st->point_type = compound_type(&points_table, false);
    st->sample_type = compound_type(&samples_table, false);
    st->status_type = compound_type(&status_table, false);
    if (st->run_type < 0 || st->point_type < 0 || st->sample_type < 0 || st->status_type < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot build the HDF5 row types for %s",
                         st->path);
    return ATTN_OK;
}

/* Flush st->file; on failure the reason (atomic.h) into why. */
static herr_t flush_file(const bench_store *st, char *why, size_t why_len)
{
    errno = 0;
    herr_t err = H5Fflush(st->file, H5F_SCOPE_GLOBAL);
    if (err < 0) bench_write_reason(st->path, errno, why, why_len);
    return err;
}

/* Open the existing results file st->path (of our format_version) for appending, under the
 * writers' lock. */
static attn_status open_existing(bench_store *st, char *msg, size_t msg_len)
{
    static const char fix[] = "; choose another --out";
    st->lock_fd = bench_lock(st->path, fix, msg, msg_len);
    if (st->lock_fd < 0) return ATTN_EINVAL;
    attn_status cs = check_results_file(st->path, fix, BENCH_FORMAT_VERSION, msg, msg_len);
    if (cs != ATTN_OK) return cs;
    st->file = open_unlocked(st->path, H5F_ACC_RDWR);
    if (st->file < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "cannot open %s for writing (permissions, or open elsewhere?)", st->path);
    return open_tables(st, msg, msg_len);
}

/* Create st->path as a new results file: written under a temporary name (atomic.h), with its
 * empty tables flushed, locked; published by the first run (bench_store_begin_run). */
static attn_status create_new(bench_store *st, char *msg, size_t msg_len)
{
    char dir[BENCH_PATH_MAX];
    bench_dir_of(st->path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot create %s: directory %s: %s", st->path,
                         dir, strerror(errno));
    char why[64] = "HDF5 could not create the file (check the path and permissions)";
    if (bench_room(-1, st->path, ROOM_MARGIN, why, sizeof why) < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot create %s: %s; nothing was written",
                         st->path, why);
    attn_status s = bench_tmp_begin(st->path, st->tmp, sizeof st->tmp, msg, msg_len);
    if (s != ATTN_OK) return s;
    errno = 0;
    hid_t fapl = unlocked_fapl();
    st->file = fapl < 0 ? -1 : H5Fcreate(st->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (st->file < 0) {
        if (errno) bench_write_reason(st->path, errno, why, sizeof why);
    } else if (write_format_attrs(st->file) < 0 || create_table(st->file, &runs_table) < 0 ||
               create_table(st->file, &points_table) < 0 ||
               create_table(st->file, &samples_table) < 0 ||
               create_table(st->file, &status_table) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
    } else if (flush_file(st, why, sizeof why) >= 0) {
        st->lock_fd = bench_lock(st->tmp, "", msg, msg_len);
        return st->lock_fd < 0 ? ATTN_EFAIL : open_tables(st, msg, msg_len);
    }
    return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot create %s: %s; nothing was written",
                     st->path, why);
}

attn_status bench_store_open(const char *path, bench_store **store, char *msg, size_t msg_len)
{
    quiet_hdf5();
    *store = NULL;
    if (!path || !*path)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "no results file given; pass --out FILE.h5");
    if (strlen(path) >= BENCH_PATH_MAX)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "results file path is too long (%zu characters)", strlen(path));
    bench_store *st = malloc(sizeof *st);
    if (!st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory opening %s", path);
    *st = (bench_store){.file = -1,
                        .runs = -1,
                        .points = -1,
                        .samples = -1,
                        .status = -1,
                        .run_type = -1,
                        .point_type = -1,
                        .sample_type = -1,
                        .status_type = -1,
                        .lock_fd = -1};
    snprintf(st->path, sizeof st->path, "%s", path);
    attn_status s =
        access(path, F_OK) == 0 ? open_existing(st, msg, msg_len) : create_new(st, msg, msg_len);
    if (s != ATTN_OK) {
        store_free(st);
        return s;
    }
    *store = st;
    return ATTN_OK;
}

/* After a failed write: close the file, dropping HDF5's caches (whose chunks that could not be
 * written confuse a later resize), and open it again as the disk has it. */
static herr_t reopen_file(bench_store *st)
{
    close_hdf5(st);
    st->file = open_unlocked(st->tmp[0] ? st->tmp : st->path, H5F_ACC_RDWR);
    char msg[ATTN_MSG_LEN];
    return st->file < 0 || open_tables(st, msg, sizeof msg) != ATTN_OK ? -1 : 0;
}

/* The current time, ISO 8601 UTC (as bench_run.started_at). */
static void iso_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Write the status of the run begun through st, with `finished` points stored and the time now,
 * into its /run_status row (in place: no new space is needed once the row exists). */
static herr_t mark_run(bench_store *st, const char *status, const char *message, int64_t finished)
{
    status_row row = {.run_id = st->run_id,
                      .planned_points = st->planned,
                      .finished_points = finished};
    snprintf(row.status, sizeof row.status, "%s", status);
    snprintf(row.message, sizeof row.message, "%s", message);
    snprintf(row.started_at, sizeof row.started_at, "%s", st->started_at);
    iso_now(row.ended_at, sizeof row.ended_at);
    return rows_io(st->status, st->status_type, st->status_row, 1, &row, true);
}

void bench_store_set_planned(bench_store *st, int64_t planned)
{
    if (st) st->planned = planned > 0 ? planned : 0;
}

int64_t bench_store_planned(const bench_store *st) { return st ? st->planned : 0; }

/* Append run (and its "running" /run_status row) and flush; on failure shrink both tables back
 * and say why. */
static attn_status append_run(bench_store *st, bench_run *run, char *msg, size_t msg_len)
{
    int64_t n = table_rows(st->runs), ns = table_rows(st->status);
    if (n < 0 || ns < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the size of /runs in %s", st->path);
    run->run_id = n + 1;
    status_row row = {.run_id = run->run_id, .status = "running", .planned_points = st->planned};
    snprintf(row.started_at, sizeof row.started_at, "%s", run->started_at);
    char why[64] = "write error";
    if (bench_room(st->lock_fd, st->path,
                   new_chunk_bytes(&runs_table, n, 1) + new_chunk_bytes(&status_table, ns, 1) +
                       ROOM_MARGIN,
                   why, sizeof why) < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: run %lld not started; nothing written",
                         st->path, why, (long long)run->run_id);
    errno = 0;
    if (append_rows(st->runs, st->run_type, n, run, 1) < 0 ||
        append_rows(st->status, st->status_type, ns, &row, 1) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
    } else if (flush_file(st, why, sizeof why) >= 0) {
        st->run_id = run->run_id;
        st->status_row = ns;
        st->run_points = 0;
        snprintf(st->started_at, sizeof st->started_at, "%s", run->started_at);
        st->run_failed = false;
        return ATTN_OK;
    }
    char again[64];
    const bool rolled_back = reopen_file(st) >= 0 && set_rows(st->runs, n) >= 0 &&
                             set_rows(st->status, ns) >= 0 &&
                             flush_file(st, again, sizeof again) >= 0;
    return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: run %lld not started%s", st->path, why,
                     (long long)run->run_id,
                     rolled_back ? "; nothing written" : " (its rollback failed too)");
}

attn_status bench_store_begin_run(bench_store *st, bench_run *run, char *msg, size_t msg_len)
{
    quiet_hdf5();
    attn_status s = append_run(st, run, msg, msg_len);
    if (s != ATTN_OK) st->write_failed = true;
    if (s != ATTN_OK || !st->tmp[0]) return s;
    /* a new file: now valid with its first run, it takes its name */
    bool exists;
    s = bench_tmp_publish(st->tmp, st->path, &exists, msg, msg_len);
    if (s == ATTN_OK) {
        st->tmp[0] = '\0';
        return ATTN_OK;
    }
    st->run_id = 0;
    if (!exists) return s;
    /* another process created the file meanwhile: append the run there instead */
    store_close_file(st);
    s = open_existing(st, msg, msg_len);
    return s != ATTN_OK ? s : append_run(st, run, msg, msg_len);
}

/* Point point_id cannot be stored (why): if its write failed half way (wrote), shrink /points and
 * /samples back to npoints and nsamples rows; mark the run incomplete, flush, and say what was
 * kept. */
static attn_status stop_run(bench_store *st, int64_t point_id, bool wrote, int64_t npoints,
                            int64_t nsamples, const char *why, char *msg, size_t msg_len)
{
    bool ok = !wrote || (reopen_file(st) >= 0 && set_rows(st->points, npoints) >= 0 &&
                         set_rows(st->samples, nsamples) >= 0);
    char note[160], again[64], what[32] = "/hosts"; /* point_id < 0: a /hosts row */
    if (point_id >= 0) snprintf(what, sizeof what, "point %lld", (long long)point_id);
    snprintf(note, sizeof note, "%s writing %s; %lld point%s kept", why, what,
             (long long)st->run_points, st->run_points == 1 ? "" : "s");
    ok = mark_run(st, "incomplete", note, st->run_points) >= 0 && ok;
    ok = flush_file(st, again, sizeof again) >= 0 && ok;
    st->run_failed = true;
    return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: %lld point%s of run %lld kept, %s",
                     st->path, why, (long long)st->run_points, st->run_points == 1 ? "" : "s",
                     (long long)st->run_id,
                     ok ? "run marked incomplete"
                        : "but the rollback could not be written either (the file may hold "
                          "blank rows)");
}

attn_status bench_store_add_point(bench_store *st, bench_point *pt, const double *samples_s,
                                  int64_t nsamples, char *msg, size_t msg_len)
{
    quiet_hdf5();
    if (nsamples < 0 || nsamples > INT32_MAX || (nsamples > 0 && !samples_s))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "invalid sample count %lld for a point",
                         (long long)nsamples);
    if (st->run_failed)
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "%s: run %lld is marked incomplete after a failed write; no more points",
                         st->path, (long long)st->run_id);
    int64_t nruns = table_rows(st->runs);
    int64_t npoints = table_rows(st->points);
    int64_t nrows = table_rows(st->samples);
    if (nruns < 0 || npoints < 0 || nrows < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the table sizes of %s", st->path);
    if (pt->run_id == 0) pt->run_id = st->run_id; /* the run begun through this handle */
    if (pt->run_id < 1 || pt->run_id > nruns)
        return attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "point has run_id %lld but %s has runs 1..%lld; call bench_store_begin_run "
            "first",
            (long long)pt->run_id, st->path, (long long)nruns);
    pt->point_id = npoints;

    sample_row *rows = malloc((size_t)(nsamples > 0 ? nsamples : 1) * sizeof *rows);
    if (!rows)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %lld samples",
                         (long long)nsamples);
    for (int64_t r = 0; r < nsamples; r++)
        rows[r] = (sample_row){.run_id = pt->run_id,
                               .point_id = pt->point_id,
                               .rep = (int32_t)r,
                               .seconds = samples_s[r]};
    /* Samples first, then the point row; any failure (the flush included) rolls both back, so
     * no blank point row and no orphan samples remain. */
    char why[64] = "write error";
    const int64_t need = new_chunk_bytes(&points_table, npoints, 1) +
                         new_chunk_bytes(&samples_table, nrows, nsamples) + ROOM_MARGIN;
    if (bench_room(st->lock_fd, st->path, need, why, sizeof why) < 0) {
        free(rows);
        return stop_run(st, pt->point_id, false, npoints, nrows, why, msg, msg_len);
    }
    errno = 0;
    herr_t err = append_rows(st->samples, st->sample_type, nrows, rows, nsamples);
    if (err >= 0) err = append_rows(st->points, st->point_type, npoints, pt, 1);
    if (err >= 0 && pt->run_id == st->run_id) err = mark_run(st, "running", "", st->run_points + 1);
    if (err < 0) bench_write_reason(st->path, errno, why, sizeof why);
    else err = flush_file(st, why, sizeof why);
    free(rows);
    if (err < 0) return stop_run(st, pt->point_id, true, npoints, nrows, why, msg, msg_len);
    if (pt->run_id == st->run_id) st->run_points++;
    return ATTN_OK;
}

attn_status bench_store_add_host(bench_store *st, bench_host *h, char *msg, size_t msg_len)
{
    quiet_hdf5();
    if (st->run_id < 1 || st->run_failed)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: no run to add a host to", st->path);
    h->run_id = st->run_id;
    char why[64] = "write error";
    errno = 0;
    if (H5Lexists(st->file, hosts_table.dset, H5P_DEFAULT) <= 0 &&
        create_table(st->file, &hosts_table) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
        return stop_run(st, -1, false, 0, 0, why, msg, msg_len);
    }
    hid_t dset = H5Dopen2(st->file, hosts_table.dset, H5P_DEFAULT);
    hid_t mtype = compound_type(&hosts_table, false);
    const int64_t n = dset < 0 ? -1 : table_rows(dset);
    herr_t err = n < 0 || mtype < 0 ? -1 : 0;
    if (err >= 0 &&
        bench_room(st->lock_fd, st->path, new_chunk_bytes(&hosts_table, n, 1) + ROOM_MARGIN, why,
                   sizeof why) < 0)
        err = -2; /* no room: nothing written */
    if (err == 0 && (err = append_rows(dset, mtype, n, h, 1)) < 0)
        bench_write_reason(st->path, errno, why, sizeof why);
    if (err == 0) err = flush_file(st, why, sizeof why);
    if (mtype >= 0) H5Tclose(mtype);
    if (dset >= 0) H5Dclose(dset);
    if (err == 0) return ATTN_OK;
    /* shrink /hosts back (reopened: HDF5 keeps the unwritten chunk in its cache) */
    if (err == -1 && n >= 0 && reopen_file(st) >= 0) {
        hid_t again = H5Dopen2(st->file, hosts_table.dset, H5P_DEFAULT);
        if (again >= 0) set_rows(again, n), H5Dclose(again);
    }
    return stop_run(st, -1, false, 0, 0, why, msg, msg_len);
}

void bench_store_close(bench_store *st)
{
    if (!st) return;
    quiet_hdf5();
    if (st->run_id > 0 && !st->run_failed && st->file >= 0)
        mark_run(st, "complete", "", st->run_points);
    if (st->file >= 0 && H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0) st->write_failed = true;
    /* a new file closed before any run (a caller that only creates it): valid, and empty */
    char msg[ATTN_MSG_LEN];
    bool exists;
    if (st->tmp[0] && !st->write_failed &&
        bench_tmp_publish(st->tmp, st->path, &exists, msg, sizeof msg) == ATTN_OK)
        st->tmp[0] = '\0';
    store_free(st);
}

int64_t bench_store_interrupt(bench_store *st, int sig, int64_t *kept)
{
    if (kept) *kept = 0;
    if (!st) return 0;
    quiet_hdf5();
    const int64_t run = st->run_id;
    if (kept) *kept = st->run_points;
    if (run > 0 && !st->run_failed && st->file >= 0) {
        char note[160];
        if (st->planned > 0)
            snprintf(note, sizeof note, "SIG%s after %lld of %lld points", bench_signal_name(sig),
                     (long long)st->run_points, (long long)st->planned);
        else
            snprintf(note, sizeof note, "SIG%s after %lld points", bench_signal_name(sig),
                     (long long)st->run_points);
        mark_run(st, "interrupted", note, st->run_points);
        H5Fflush(st->file, H5F_SCOPE_GLOBAL);
    }
    store_free(st); /* a new file without a run is discarded, not published */
    return run;
}

/* ---- reading back ---- */

/* Open path read-only after checking it is a results file, and open dataset t->dset. */
static attn_status open_table_ro(const char *path, const table *t, hid_t *file, hid_t *dset,
                                 char *msg, size_t msg_len)
{
    *file = *dset = -1;
    if (!path || access(path, F_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path ? path : "(null)",
                         path ? strerror(errno) : "no path");
    attn_status cs = check_results_file(path, "", BENCH_FORMAT_VERSION_READ, msg, msg_len);
    if (cs != ATTN_OK) return cs;
    *file = open_unlocked(path, H5F_ACC_RDONLY);
    if (*file < 0) return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot open %s for reading", path);
    *dset = H5Dopen2(*file, t->dset, H5P_DEFAULT);
    if (*dset < 0) {
        H5Fclose(*file);
        *file = -1;
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is damaged: it has no %s table", path,
                         t->dset);
    }
    return ATTN_OK;
}

/* Could the file hold `rows` rows of dset? A damaged extent may claim terabytes; the tables are
 * not compressed, so their rows take at least rows × the row's size on disk. A writer extends a
 * table just before writing its new rows: 64 MiB of slack covers that. */
static bool rows_fit_file(const char *path, hid_t dset, int64_t rows)
{
    struct stat st;
    hid_t ft = H5Dget_type(dset);
    const size_t row = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    if (row == 0 || stat(path, &st) != 0) return false;
    return (double)rows * (double)row <= (double)st.st_size + 64.0 * 1024 * 1024;
}

/* Read every row of table t into a malloc'd array (once: read_table retries). */
static attn_status read_table_once(const char *path, const table *t, void **out, int64_t *n,
                                   char *msg, size_t msg_len)
{
    *out = NULL;
    *n = 0;
    hid_t file, dset;
    attn_status st = open_table_ro(path, t, &file, &dset, msg, msg_len);
    if (st != ATTN_OK) return st;
    hid_t mtype = compound_type(t, false);
    int64_t rows = table_rows(dset);
    void *buf = NULL;
    if (mtype < 0 || rows < 0) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the size of %s in %s", t->dset, path);
    } else if ((uint64_t)rows > SIZE_MAX / t->row_size || !rows_fit_file(path, dset, rows)) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is damaged: its %s table claims %lld rows, more than the file holds",
                       path, t->dset, (long long)rows);
    } else if (rows > 0 && !(buf = calloc((size_t)rows, t->row_size))) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory reading %lld rows of %s in %s",
                       (long long)rows, t->dset, path);
    } else if (read_rows(dset, mtype, 0, rows, buf) < 0) {
        st = attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "cannot read %s in %s: its columns do not match this build's (another version?)",
            t->dset, path);
        free(buf);
        buf = NULL;
    } else {
        terminate_strings(t, buf, rows);
        *out = buf;
        *n = rows;
    }
    if (mtype >= 0) H5Tclose(mtype);
    H5Dclose(dset);
    H5Fclose(file);
    return st;
}

/* Every row of table t into a malloc'd array. While another process writes the file (it holds
 * the writers' lock), a read that fails may have met a flush half done: it is tried again (for
 * about 2 s); rows not yet written (run_id 0: the table grew, its rows are not on disk yet) are
 * left out at the end. Every table's first column is run_id. */
static attn_status read_table(const char *path, const table *t, void **out, int64_t *n, char *msg,
                              size_t msg_len)
{
    quiet_hdf5();
    attn_status st = read_table_once(path, t, out, n, msg, msg_len);
    for (int tries = 0; st != ATTN_OK && tries < 20 && bench_locked_by_other(path); tries++) {
        nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
        st = read_table_once(path, t, out, n, msg, msg_len);
    }
    if (st == ATTN_OK && bench_locked_by_other(path))
        while (*n > 0 &&
               *(const int64_t *)((const char *)*out + (size_t)(*n - 1) * t->row_size) == 0)
            --*n;
    return st;
}

attn_status bench_store_read_runs(const char *path, bench_run **runs, int64_t *n, char *msg,
                                  size_t msg_len)
{
    void *rows;
    attn_status st = read_table(path, &runs_table, &rows, n, msg, msg_len);
    *runs = rows;
    return st;
}

attn_status bench_store_read_points(const char *path, bench_point **points, int64_t *n, char *msg,
                                    size_t msg_len)
{
    void *rows;
    attn_status st = read_table(path, &points_table, &rows, n, msg, msg_len);
    *points = rows;
    return st;
}

/* ---- /fits: replaced per run by `bench fit` ---- */

/* Every row of table t, which a results file may lack (then none: ATTN_OK, *n = 0). */
static attn_status read_optional_table(const char *path, const table *t, void **rows, int64_t *n,
                                       char *msg, size_t msg_len)
{
    quiet_hdf5();
    *rows = NULL;
    *n = 0;
    hid_t file, runs;
    attn_status st = open_table_ro(path, &runs_table, &file, &runs, msg, msg_len);
    if (st != ATTN_OK) return st;
    htri_t has = H5Lexists(file, t->dset, H5P_DEFAULT);
    H5Dclose(runs);
    H5Fclose(file);
    if (has <= 0) return ATTN_OK;
    return read_table(path, t, rows, n, msg, msg_len);
}

attn_status bench_store_read_fits(const char *path, bench_fit_row **rows, int64_t *n, char *msg,
                                  size_t msg_len)
{
    void *buf; /* none: written before any `bench fit` */
    attn_status st = read_optional_table(path, &fits_table, &buf, n, msg, msg_len);
    *rows = buf;
    return st;
}

attn_status bench_store_read_hosts(const char *path, bench_host **hosts, int64_t *n, char *msg,
                                   size_t msg_len)
{
    void *buf; /* none: written before /hosts existed */
    attn_status st = read_optional_table(path, &hosts_table, &buf, n, msg, msg_len);
    *hosts = buf;
    return st;
}

attn_status bench_store_write_fits(const char *path, int64_t run_id, const bench_fit_row *rows,
                                   int64_t n, char *msg, size_t msg_len)
{
    quiet_hdf5();
    if (n < 0 || (n > 0 && !rows))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "invalid fit row count %lld", (long long)n);
    if (!path || access(path, F_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path ? path : "(null)",
                         path ? strerror(errno) : "no path");
    const int lock = bench_lock(path, "", msg, msg_len);
    if (lock < 0) return ATTN_EINVAL;
    attn_status st = check_results_file(path, "", BENCH_FORMAT_VERSION_READ, msg, msg_len);
    hid_t file = st != ATTN_OK ? -1 : open_unlocked(path, H5F_ACC_RDWR);
    if (st == ATTN_OK && file < 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "cannot open %s for writing the fits (permissions, or open elsewhere?)",
                       path);
    if (st != ATTN_OK) {
        bench_unlock(lock);
        return st;
    }
    hid_t runs = H5Dopen2(file, runs_table.dset, H5P_DEFAULT), dset = -1;
    hid_t mtype = compound_type(&fits_table, false);
    int64_t nruns = runs < 0 ? -1 : table_rows(runs), old = 0, kept = 0;
    bench_fit_row *all = NULL;
    if (nruns < 0 || mtype < 0) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read /runs of %s", path);
        goto done;
    }
    if (run_id < 1 || run_id > nruns) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s has no run %lld (it has runs 1..%lld)", path,
                       (long long)run_id, (long long)nruns);
        goto done;
    }
    if (H5Lexists(file, fits_table.dset, H5P_DEFAULT) > 0) {
        dset = H5Dopen2(file, fits_table.dset, H5P_DEFAULT);
        old = dset < 0 ? -1 : table_rows(dset);
    }
    all = malloc((size_t)(old > 0 ? old : 0) * sizeof *all + (size_t)n * sizeof *all + 1);
    if (!all) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for the fits of %s", path);
        goto done;
    }
    if (old < 0 || read_rows(dset, mtype, 0, old, all) < 0) {
        /* derived data in another layout (an older build): recomputable, so replace it */
        if (dset >= 0) H5Dclose(dset);
        dset = -1;
        old = 0;
        H5Ldelete(file, fits_table.dset, H5P_DEFAULT);
    }
    for (int64_t r = 0; r < old; r++)
        if (all[r].run_id != run_id) all[kept++] = all[r];
    for (int64_t r = 0; r < n; r++) {
        all[kept + r] = rows[r];
        all[kept + r].run_id = run_id;
    }
    if (dset < 0 && create_table(file, &fits_table) >= 0)
        dset = H5Dopen2(file, fits_table.dset, H5P_DEFAULT);
    if (dset < 0 || set_rows(dset, kept + n) < 0 ||
        rows_io(dset, mtype, 0, kept + n, all, true) < 0 || H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write /fits in %s (disk full?)", path);
done:
    free(all);
    if (dset >= 0) H5Dclose(dset);
    if (mtype >= 0) H5Tclose(mtype);
    if (runs >= 0) H5Dclose(runs);
    H5Fclose(file);
    bench_unlock(lock);
    return st;
}

attn_status bench_store_read_samples(const char *path, bench_sample **rows, int64_t *n, char *msg,
                                     size_t msg_len)
{
    void *buf;
    attn_status st = read_table(path, &samples_table, &buf, n, msg, msg_len);
    *rows = buf;
    return st;
}

/* ---- the columns, for generic readers ---- */

static const table *table_of(bench_table_id t)
{
    switch (t) {
    case BENCH_TABLE_RUNS: return &runs_table;
    case BENCH_TABLE_POINTS: return &points_table;
    case BENCH_TABLE_SAMPLES: return &samples_table;
    case BENCH_TABLE_RUN_STATUS: return &status_table;
    case BENCH_TABLE_HOSTS: return &hosts_table;
    case BENCH_TABLE_FITS: return &fits_table;
    case BENCH_NTABLES: break;
    }
    return &points_table;
}

int bench_store_ncolumns(bench_table_id t) { return (int)table_of(t)->nfields; }

const char *bench_store_table_name(bench_table_id t) { return table_of(t)->dset; }

size_t bench_store_row_size(bench_table_id t) { return table_of(t)->row_size; }

bench_column bench_store_column(bench_table_id t, int i)
{
    const field *f = &table_of(t)->fields[i];
    const bench_col_type type = f->kind == F_I32   ? BENCH_COL_I32
                                : f->kind == F_I64 ? BENCH_COL_I64
                                : f->kind == F_U64 ? BENCH_COL_U64
                                : f->kind == F_F64 ? BENCH_COL_F64
                                                   : BENCH_COL_STR;
    return (bench_column){f->name, f->offset, type, f->size, f->unit, f->description};
}
