/*
 * tables.c — the tables of a results file (results.h, h5table.h): one field table per row struct
 * (each column's name, offset, kind, size, unit and description), the tables that hold them
 * (dataset, chunk, title), the HDF5 compound types built from them, and the columns for generic
 * readers (bench_store_column: bench export, the column attributes).
 */
#include <hdf5.h>
#include <stddef.h>
#include <string.h>

#include "h5table.h"

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
          "coefficient of variation: stddev / mean, a fraction (0.05 is 5 %; NaN: one rep)"),
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

static const field sample_fields[] = {
    FIELD(sample_row, run_id, F_I64, "1", "the run of the point"),
    FIELD(sample_row, point_id, F_I64, "1", "the point of /points"),
    FIELD(sample_row, rep, F_I32, "1", "the timed repetition: 0, 1, ... within the point"),
    FIELD(sample_row, seconds, F_F64, "s", "time of that forward (decode: that step)"),
};

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
    FIELD(bench_fit_row, dtype, F_STR, "text",
          "storage of q, k, v of the series' points: f32, bf16 or f16 (empty: fitted before "
          "the column)"),
};
/* clang-format on */

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* clang-format off */
const table bench_h5_runs = {"/runs", run_fields, NFIELDS(run_fields), sizeof(bench_run), 64,
                                 "one row per run"};
const table bench_h5_points = {"/points", point_fields, NFIELDS(point_fields),
                                   sizeof(bench_point), 64, "one row per measured point"};
const table bench_h5_samples = {"/samples", sample_fields, NFIELDS(sample_fields),
                                    sizeof(sample_row), 1024,
                                    "one row per timed repetition of a point"};
const table bench_h5_status = {"/run_status", status_fields, NFIELDS(status_fields),
                                   sizeof(status_row), 64, "one row per run: how it ended"};
const table bench_h5_hosts = {"/hosts", host_fields, NFIELDS(host_fields), sizeof(bench_host),
                                  64, "one row per host of a run: its machine facts and yardsticks"};
const table bench_h5_fits = {"/fits", fit_fields, NFIELDS(fit_fields), sizeof(bench_fit_row),
                                 64, "one row per fitted series and metric (bench fit)"};

/* The compound type of a table: in memory (struct offsets, NUL-terminated strings) or in the
 * file (packed, NUL-padded strings). Returns a type id to H5Tclose, or -1. */
/* The compound type of t; with `only` (a file's type, or -1: none) only the members it has. */
static hid_t compound_type(const table *t, bool in_file, hid_t only)
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
        if (only >= 0 && H5Tget_member_index(only, f->name) < 0) continue;
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

hid_t bench_h5_compound_type(const table *t, bool in_file)
{
    return compound_type(t, in_file, -1);
}

hid_t bench_h5_memory_type_of(const table *t, hid_t dset)
{
    hid_t ftype = H5Dget_type(dset);
    if (ftype < 0) return -1;
    const hid_t mt = compound_type(t, false, ftype);
    H5Tclose(ftype);
    return mt;
}

/* Strings read back are NUL-terminated even if a foreign writer filled the whole field. */
void bench_h5_terminate_strings(const table *t, void *rows, int64_t n)
{
    for (int64_t r = 0; r < n; r++) {
        char *row = (char *)rows + (size_t)r * t->row_size;
        for (size_t i = 0; i < t->nfields; i++)
            if (t->fields[i].kind == F_STR) row[t->fields[i].offset + t->fields[i].size - 1] = '\0';
    }
}

/* ---- the columns, for generic readers ---- */

static const table *table_of(bench_table_id t)
{
    switch (t) {
    case BENCH_TABLE_RUNS: return &bench_h5_runs;
    case BENCH_TABLE_POINTS: return &bench_h5_points;
    case BENCH_TABLE_SAMPLES: return &bench_h5_samples;
    case BENCH_TABLE_RUN_STATUS: return &bench_h5_status;
    case BENCH_TABLE_HOSTS: return &bench_h5_hosts;
    case BENCH_TABLE_FITS: return &bench_h5_fits;
    case BENCH_NTABLES: break;
    }
    return &bench_h5_points;
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
