/*
 * record.h — the rows a measurement fills: bench_run (the machine, build and command of one
 * run) and bench_point (one grid point: its identity, timings, memory and accuracy). The store
 * (store/results.h) keeps them as the /runs and /points tables of a results file.
 *
 * Room measure/ (below store/, report/, cli/): includes only its own headers, attention/ and
 * datasets/.
 */
#ifndef BENCH_RECORD_H
#define BENCH_RECORD_H

#include <stdint.h>

typedef struct bench_run {
    int64_t run_id;      /* assigned by bench_store_begin_run: 1, 2, ... within a file */
    char started_at[32]; /* ISO 8601 UTC, e.g. 2026-11-22T03:05:02Z */
    char command[1024];  /* the command line, arguments separated by spaces */
    char git_commit[64]; /* `git describe --always --dirty` at build time */
    char host[64];
    char cpu_model[128];
    char build[128];           /* compiler, build type, flags that matter */
    char openblas_config[128]; /* openblas_get_config() */
    char hdf5_version[32];
    int32_t threads;          /* OpenMP threads used by the forwards */
    int32_t blas_threads;     /* OpenBLAS threads in force outside parallel regions */
    uint64_t seed;            /* base seed of the inputs */
    double sgemm_gflops;      /* measured OpenBLAS sgemm (2048^3) at the start of the run */
    double mem_bandwidth_gbs; /* measured memory read bandwidth (STREAM-like sum) at the start */
} bench_run;

typedef struct bench_point {
    int64_t run_id;
    int64_t point_id; /* 0, 1, ... within the file (unique across runs) */
    char kind[32];
    char params[160]; /* "name=value,..." in the kind's parameter order */
    char dataset[32];
    char dataset_params[96]; /* "name=value,..." of the dataset's parameters */
    char mode[16];           /* "prefill", or "decode": q_len newest queries against a KV cache
                                of kv_len keys; one forward is one decode step */
    int64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
    int32_t causal;
    int32_t threads;
    uint64_t seed;        /* seed of this point's inputs */
    int32_t warmup, reps; /* warm-up runs and timed repetitions (reps rows in /samples) */
    double time_median_s, time_min_s, time_max_s, time_p95_s, time_mean_s, time_stddev_s, time_cv;
    double flops;            /* useful flops of one forward */
    double gflops_per_s;     /* flops / median time / 1e9 */
    double bytes;            /* bytes of q, out and of the k, v rows the kind reads, moved once */
    double gbytes_per_s;     /* bytes / median time / 1e9 */
    double kv_bytes;         /* of which k and v (the KV cache read per decode step) */
    int64_t state_bytes;     /* decode state kept between steps (linear), 0 if none */
    int64_t workspace_bytes; /* exact scratch declared by the kind and allocated */
    int64_t peak_rss_bytes;  /* peak resident set of the process during the point */
    int64_t base_rss_bytes;  /* resident set when the point started (libraries, code): the
                                point itself added at most peak - base */
    int32_t accuracy_rows;   /* query rows compared to the float64 reference */
    double rel_err;     /* ||o - o_ref||_2 / ||o_ref||_2 over the sampled rows, vs exact softmax */
    double max_abs_err; /* max |o - o_ref| over the sampled rows, vs exact softmax */
    double cosine;      /* mean over sampled rows of cos(o_row, o_ref_row), vs exact softmax */
    int32_t retrieval_queries; /* planted queries of a retrieval dataset (needle), 0 otherwise */
    double retrieval;          /* fraction of them whose output is nearest to the planted value
                                  (NaN when retrieval_queries == 0) */
    double self_rel_err; /* rel. L2 error vs the kind's own definition (implementation check) */
    int32_t rank;        /* MPI rank that measured it (0 without mpirun; -1: all ranks together,
                            a collective kind) */
    char host[64];       /* host that measured it (a collective point: rank 0's) */
    /* A distributed kind's own measurements (attn_stats; ring over MPI ranks), means over the
     * timed repetitions; NaN for other kinds (docs/distributed.md). */
    double comm_time_s;       /* waiting for messages (MPI_Wait) per forward, slowest rank */
    double compute_time_s;    /* computing per forward, slowest rank */
    double comm_bytes;        /* sent per forward, all ranks together */
    double overlap;           /* share of the messages' time in flight hidden behind compute:
                                 1 - waiting / in flight over all ranks (NaN: no messages) */
    double compute_imbalance; /* slowest rank's compute / mean rank's - 1 (0: balanced) */
    char pass[16];            /* the timed pass: "forward", "backward" or "train" (forward and
                                 backward together); flops, bytes and workspace are its own */
    int64_t saved_bytes;      /* bytes the forward saves for the backward (0: forward pass) */
    /* The kernel set in force and the yardsticks of (threads, isa) on the measuring host
     * (yardstick.h), measured once per run and combination; NaN when not measured. */
    char isa[16];         /* "portable", "avx2" or "avx512" (attn_isa.h) */
    double peak_gflops;   /* FMA peak of isa's set on the point's threads */
    double sgemm_gflops;  /* OpenBLAS sgemm (2048^3) on the point's threads */
    double bandwidth_gbs; /* memory read bandwidth on the point's threads */
    double pct_peak;      /* 100 * gflops_per_s / peak_gflops */
    double pct_sgemm;     /* 100 * gflops_per_s / sgemm_gflops */
    char dtype[8];        /* storage of q, k, v: "f32", "bf16" or "f16" (attn_dtype) */
    char status[16];      /* "ok" or "error" */
    char message[160];    /* why, when status is "error" */
} bench_point;

/* One host of a run (the /hosts table): its facts and yardsticks, measured once per host by the
 * lowest rank on it, with that rank's threads; %sgemm of a point is against its host's sgemm. */
typedef struct bench_host {
    int64_t run_id;
    char host[64];
    int32_t rank;  /* the rank that measured the yardsticks (the lowest on the host) */
    int32_t ranks; /* ranks of the run on this host */
    char cpu_model[128];
    int32_t threads;          /* OpenMP threads of its ranks' forwards and of the yardsticks */
    double sgemm_gflops;      /* OpenBLAS sgemm (2048^3) on this host at the start of the run */
    double mem_bandwidth_gbs; /* memory read bandwidth on this host at the start of the run */
} bench_host;

#endif
