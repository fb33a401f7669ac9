/*
 * point.h — measure one grid point: inputs made (or given) outside the timed region, workspace
 * of the exact declared size, warm-up + timed samples, accuracy on sampled rows, peak RSS.
 */
#ifndef BENCH_POINT_H
#define BENCH_POINT_H

#include "attention.h"
#include "attn_isa.h"
#include "datasets.h"
#include "record.h"
#include "stats.h"

/* The timed pass: the forward; the backward (dq, dk, dv given dout and what forward_train
 * saved, both made once untimed); or a training step (forward_train then backward). */
typedef enum bench_pass { BENCH_PASS_FORWARD, BENCH_PASS_BACKWARD, BENCH_PASS_TRAIN } bench_pass;

/* "forward", "backward", "train". */
const char *bench_pass_name(bench_pass pass);

typedef struct bench_point_spec {
    const attn_ops *ops;
    attn_params params;
    attn_shape shape;
    const ds_ops *dataset;    /* generator; ignored when inputs are given */
    ds_params dataset_params; /* its parameters (and file path) */
    uint64_t seed;
    bench_timing_cfg timing;
    int64_t accuracy_rows; /* rows compared with the float64 references */
    bool allow_nonfinite;  /* measure inputs holding NaN or ±Inf instead of refusing them */
    bench_pass pass;       /* default (0): forward */
    float **keep_grads;    /* pass != forward and not NULL: receives dq, dk, dv (malloc'd, the
                              caller frees keep_grads[0..2]; NULL when the point failed) */
    attn_exec exec;        /* how the point runs: threads, kernel set (attn_exec_of) */
} bench_point_spec;

/* The seed stream of a generated dout (a point's inputs use others of the same seed). */
#define BENCH_DOUT_STREAM 0x64c0ffeeULL

/* The hint a refusal of non-finite inputs ends with. */
#define BENCH_NONFINITE_HINT " (--allow-nonfinite measures it anyway)"

/* Fill pt's identity columns (kind, params, shape, dataset, seed, ...) from spec. */
void bench_point_describe(const bench_point_spec *spec, bench_point *pt);

/* Decode mode with a kind that decodes from a state (prepared untimed, then decode timed)? */
bool bench_point_uses_state(const bench_point_spec *spec);
/* The decode state's bytes (0 when the point does not use one). */
size_t bench_point_state_bytes(const bench_point_spec *spec);
/* Bytes the point allocates: q, k, v, out (inputs given or not), the kind's weights, workspace
 * and decode state; backward and train add dout, dq, dk, dv and the saved bytes. */
double bench_point_bytes(const bench_point_spec *spec);
/* Useful flops of the timed pass: forward; backward 2.5 x forward (attn_kind_backward_flops);
 * train both. */
double bench_point_flops(const bench_point_spec *spec);
/* Scratch of the timed pass (forward: the kind's; backward: backward_workspace_bytes; train: the
 * larger of the two, one buffer used by the forward, then by the backward). */
size_t bench_point_workspace_bytes(const bench_point_spec *spec);
/* attn_check, and attn_backward_check for backward and train (ATTN_ENODEF kept: outside the kind's
 * definition), then refuse (ATTN_EINVAL) a point whose buffers exceed 90 % of physical memory
 * rather than let the kernel kill the process mid-sweep, and weights in the data (a file's datasets
 * of their names) of other dims than the kind lists: "PATH: weight 'NAME' of KIND is [found],
 * expected [dims] (summary)". */
attn_status bench_point_check(const bench_point_spec *spec, char *msg, size_t msg_len);

/* A dataset that reads its data (file): read all of it once and refuse (ATTN_EINVAL) a NaN or
 * ±Inf in q, k or v with its position, "PATH: q[b,h,row,d] is NaN (--allow-nonfinite ...)"
 * (row: the file's). ATTN_OK at once for generators (finite by construction; bench_point_run
 * scans what they make anyway). Run before anything is measured or written. */
attn_status bench_dataset_check_finite(const ds_ops *ds, const ds_params *p, char *msg,
                                       size_t msg_len);

/* The point's params column records where a kind's weights came from: ",weights=SOURCE" after its
 * parameters, SOURCE the dataset's name (file: read from it), "seed" (drawn from the kind's
 * seed) or "given" (by the caller), joined by '+' when they differ between weights. */
#define BENCH_WEIGHTS_ITEM "weights"

/* The kind's weights for the point into p->w: those p gives stay; those the dataset holds (a
 * file's datasets of their names, dims checked) are read; the rest are drawn from the kind's
 * seed (untimed). owned[i] (free with attn_weights_free) are the buffers made here; from[i] says
 * where weight i came from: "given", the dataset's name (file) or "seed". */
attn_status bench_point_weights(const bench_point_spec *spec, attn_params *p,
                                float *owned[ATTN_MAX_WEIGHTS], const char *from[ATTN_MAX_WEIGHTS],
                                char *msg, size_t msg_len);

/* Run the point. q, k, v NULL: allocate and fill them from spec->dataset (and measure its
 * retrieval accuracy when it plants queries); else use them (shapes must match spec->shape).
 * out_keep, when not NULL, receives the output (caller frees).
 * Inputs it makes are scanned, untimed: a NaN or ±Inf is refused (status "error", ATTN_EINVAL,
 * nothing timed) unless spec->allow_nonfinite (then measured, and pt->message says what was
 * found). The output is scanned after timing: a NaN or ±Inf gives status "nonfinite" (times and
 * errors kept; pt->message names the first bad value) and still returns ATTN_OK.
 * Backward and train: dout is the data's `do` [B,H,T,D] (a file holding one: its newest T rows)
 * or generated (normal, seed spec->seed, stream BENCH_DOUT_STREAM); the accuracy columns are
 * the forward output's (forward_train's), and dq, dk, dv are scanned like the output.
 * Always returns a described point: status "ok", "nonfinite", or "error" with the reason in
 * pt->message (also in msg) and the status code. *samples_s (malloc'd) holds every timed
 * repetition. */
attn_status bench_point_run(const bench_point_spec *spec, const float *q, const float *k,
                            const float *v, bench_point *pt, double **samples_s, int64_t *nsamples,
                            float **out_keep, char *msg, size_t msg_len);

/* bench_point_run on generated (or the dataset's) inputs, and, when the point's repetitions vary
 * (bench_timings_vary, stats.h: one busy moment), once more: the steadier of the two measurements
 * (the smaller interquartile range over the median) is kept, whole (times, memory, accuracy) with
 * its repetitions. Not measured again: a failed or non-finite point, one whose output or
 * gradients are kept (out_keep, spec->keep_grads: --output), a collective kind (its ranks
 * measure together), or after a stop request. (steady.c) */
attn_status bench_point_run_steady(const bench_point_spec *spec, bench_point *pt,
                                   double **samples_s, int64_t *nsamples, float **out_keep,
                                   char *msg, size_t msg_len);

#endif
