/*
 * results.h — what one sweep records: a run (its metadata) and its points (one per grid point),
 * and the HDF5 store that keeps them (h5store.c).
 *
 * File layout (format "attnbench-results", format_version 2):
 *   /            attributes: format, format_version
 *   /runs        extendable chunked compound table, one row per run   (bench_run)
 *   /points      extendable chunked compound table, one row per point (bench_point)
 *   /samples     extendable chunked compound table, one row per timed repetition:
 *                run_id, point_id, rep, seconds
 *   /fits        (optional: written by `bench fit`) one row per fitted series and metric of a run
 *                (bench_fit_row); a new fit of a run replaces that run's rows
 * Strings are fixed-length, NUL-padded UTF-8 (h5py reads them as bytes: .str.decode()).
 * Every row is flushed to disk as soon as it is added, so an interrupted sweep keeps its points.
 */
#ifndef BENCH_RESULTS_H
#define BENCH_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#define BENCH_FORMAT "attnbench-results"
enum { BENCH_FORMAT_VERSION = 2 };

typedef struct bench_run {
    int64_t run_id;            /* assigned by bench_store_begin_run: 1, 2, ... within a file */
    char started_at[32];       /* ISO 8601 UTC, e.g. 2026-11-22T03:05:02Z */
    char command[1024];        /* the command line, arguments separated by spaces */
    char git_commit[64];       /* `git describe --always --dirty` at build time */
    char host[64];
    char cpu_model[128];
    char build[128];           /* compiler, build type, flags that matter */
    char openblas_config[128]; /* openblas_get_config() */
    char hdf5_version[32];
    int32_t threads;           /* OpenMP threads used by the forwards */
    int32_t blas_threads;      /* OpenBLAS threads in force outside parallel regions */
    uint64_t seed;             /* base seed of the inputs */
    double sgemm_gflops;       /* measured OpenBLAS sgemm (2048^3) at the start of the run */
    double mem_bandwidth_gbs;  /* measured memory read bandwidth (STREAM-like sum) at the start */
} bench_run;

typedef struct bench_point {
    int64_t run_id;
    int64_t point_id;          /* 0, 1, ... within the file (unique across runs) */
    char kind[32];
    char params[160];          /* "name=value,..." in the kind's parameter order */
    char dataset[32];
    char dataset_params[96];   /* "name=value,..." of the dataset's parameters */
    char mode[16];             /* "prefill", or "decode": q_len newest queries against a KV cache
                                  of kv_len keys; one forward is one decode step */
    int64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
    int32_t causal;
    int32_t threads;
    uint64_t seed;             /* seed of this point's inputs */
    int32_t warmup, reps;      /* warm-up runs and timed repetitions (reps rows in /samples) */
    double time_median_s, time_min_s, time_max_s, time_p95_s, time_mean_s, time_stddev_s, time_cv;
    double flops;              /* useful flops of one forward */
    double gflops_per_s;       /* flops / median time / 1e9 */
    double bytes;              /* bytes of q, out and of the k, v rows the kind reads, moved once */
    double gbytes_per_s;       /* bytes / median time / 1e9 */
    double kv_bytes;           /* of which k and v (the KV cache read per decode step) */
    int64_t state_bytes;       /* decode state kept between steps (linear), 0 if none */
    int64_t workspace_bytes;   /* exact scratch declared by the kind and allocated */
    int64_t peak_rss_bytes;    /* peak resident set of the process during the point */
    int64_t base_rss_bytes;    /* resident set when the point started (libraries, code): the
                                  point itself added at most peak - base */
    int32_t accuracy_rows;     /* query rows compared to the float64 reference */
    double rel_err;            /* ||o - o_ref||_2 / ||o_ref||_2 over the sampled rows, vs exact softmax */
    double max_abs_err;        /* max |o - o_ref| over the sampled rows, vs exact softmax */
    double cosine;             /* mean over sampled rows of cos(o_row, o_ref_row), vs exact softmax */
    int32_t retrieval_queries; /* planted queries of a retrieval dataset (needle), 0 otherwise */
    double retrieval;          /* fraction of them whose output is nearest to the planted value
                                  (NaN when retrieval_queries == 0) */
    double self_rel_err;       /* rel. L2 error vs the kind's own definition (implementation check) */
    char status[16];           /* "ok" or "error" */
    char message[160];         /* why, when status is "error" */
} bench_point;

/* One row of /fits: a power law metric ≈ prefactor · n^exponent fitted over n (= kv_len) to
 * one series of a run (the points sharing every setting but n), beside its theory and its
 * crossover with `full` at the same settings. */
typedef struct bench_fit_row {
    int64_t run_id;
    char kind[32];
    char params[160];          /* as in /points; a parameter the sweep resolved per n is "auto" */
    char dataset[32];
    char dataset_params[96];
    char mode[16];
    int64_t batch, heads, kv_heads, head_dim;
    int64_t q_len;             /* decode: queries per step; 0 in prefill (where q_len = n) */
    int32_t causal;
    char metric[16];           /* "time": median s per forward; "rss_added": peak - base RSS
                                  bytes (what the point added); "peak_rss": peak RSS bytes (files
                                  without base RSS); "workspace": declared scratch bytes */
    int32_t points;            /* points fitted */
    int64_t n_min, n_max;
    double exponent;           /* least squares slope of ln metric on ln n */
    double exponent_lo, exponent_hi; /* its 95 % confidence interval (Student's t; NaN < 3 points) */
    double r2;                 /* of the log-log fit */
    double prefactor;          /* metric ≈ prefactor · n^exponent */
    double theory;             /* slope of ln flops (time), or of ln(q, k, v, out + workspace +
                                  state bytes) (rss), over the same points; NaN for workspace */
    char reference_params[160]; /* the full series compared against ("" if none, or full itself) */
    int64_t reference_kv_heads;
    char crossover[16];        /* below full's metric: "above" n = crossover_n, "below" it,
                                  "always", "never" (in the common n range), "" (no reference) */
    double crossover_n;        /* interpolated in log-log between measured points; NaN otherwise */
    double ratio_at_max;       /* metric / full's metric at the largest common n */
    int64_t ratio_n;           /* that n */
} bench_fit_row;

typedef struct bench_store bench_store;

/* Open path for appending, creating it if absent. An existing file that is not an attnbench
 * results file (or has another format_version) is refused and left untouched. */
attn_status bench_store_open(const char *path, bench_store **store, char *msg, size_t msg_len);
/* Append a run row; sets run->run_id. */
attn_status bench_store_begin_run(bench_store *st, bench_run *run, char *msg, size_t msg_len);
/* Append a point row and its nsamples repetition times; sets pt->point_id; flushes. */
attn_status bench_store_add_point(bench_store *st, bench_point *pt, const double *samples_s,
                                  int64_t nsamples, char *msg, size_t msg_len);
void bench_store_close(bench_store *st);

/* Read back (tests, plots): every row of /runs or /points; free() the arrays. */
attn_status bench_store_read_runs(const char *path, bench_run **runs, int64_t *n, char *msg,
                                  size_t msg_len);
attn_status bench_store_read_points(const char *path, bench_point **points, int64_t *n, char *msg,
                                    size_t msg_len);
/* Samples of one point, in repetition order. */
attn_status bench_store_read_samples(const char *path, int64_t point_id, double **samples_s,
                                     int64_t *n, char *msg, size_t msg_len);
/* Replace the /fits rows of run_id by rows[0..n) (creating /fits if absent; other runs' rows are
 * kept). rows[i].run_id is set to run_id. */
attn_status bench_store_write_fits(const char *path, int64_t run_id, const bench_fit_row *rows,
                                   int64_t n, char *msg, size_t msg_len);
/* Every row of /fits; none (ATTN_OK, *n = 0) when the file has no /fits. free() the array. */
attn_status bench_store_read_fits(const char *path, bench_fit_row **rows, int64_t *n, char *msg,
                                  size_t msg_len);

/* ---- tensors in HDF5 (tensor_io.c): `bench run --input/--output` ---- */

/* Read a rank-4 float32 dataset `name` (converting other float types); dims from the file.
 * Missing file, missing dataset, wrong rank or type, zero sizes: ATTN_EINVAL with a message. */
attn_status bench_tensor_read(const char *path, const char *name, int64_t dims[4], float **data,
                              char *msg, size_t msg_len);
/* May bench_tensor_write add to path? Absent, or an HDF5 file: yes; anything else is refused
 * (and left untouched). Lets a caller refuse before a long computation. */
attn_status bench_tensor_check_target(const char *path, char *msg, size_t msg_len);
/* Write (create or replace) dataset `name` [dims] in path (created if absent). */
attn_status bench_tensor_write(const char *path, const char *name, const int64_t dims[4],
                               const float *data, char *msg, size_t msg_len);

#endif
