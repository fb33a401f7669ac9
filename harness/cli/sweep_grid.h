/*
 * sweep_grid.h — within cli/: the grid of `bench sweep` (sweep_grid.c) and its options as text.
 * The grid is kinds x their --set values x mode x dataset (x its --set values) x causal x pass x
 * dtype x batch x heads x kv_heads x head_dim x threads x kernel set (isa) x n; every point of it
 * is built and checked before anything is measured, and those outside their kind's definition
 * are left out and counted.
 */
#ifndef BENCH_SWEEP_GRID_H
#define BENCH_SWEEP_GRID_H

#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "datasets.h"
#include "point.h"
#include "skips.h"

enum { MAX_SETS = 8, MAX_POINTS = 100000 };

#define DEFAULT_N "512:8192:x2"
#define DEFAULT_CAUSAL "auto"
#define DEFAULT_DATASETS "gaussian,local,needle"

/* The options of bench sweep as text (NULL: not given). */
typedef struct sweep_opts {
    const char *help, *kinds, *n, *mode, *q_len, *heads, *kv_heads, *head_dim, *batch, *causal;
    const char *max_point_time, *pass;
    const char *dtype;
    const char *dataset, *out, *quiet, *verbose, *plots;
    const char *set[MAX_SETS];
    int nset;
    bench_measure_opts measure;
} sweep_opts;

typedef struct int_axis {
    const char *name;
    int64_t *v;
    int n;
} int_axis;

typedef struct param_axis {
    char name[64];
    char **values;
    int n;
} param_axis;

/* A dataset with one combination of its --set values. */
typedef struct ds_variant {
    const ds_ops *ops;
    ds_params params;
} ds_variant;

typedef struct sweep_grid {
    char **kind_names, **dataset_names; /* dataset_names hold the file paths the points use */
    int nkinds, ndatasets;
    ds_variant *datasets; /* one per --dataset item, then (expand_datasets) one per variant */
    int nvariants;
    int_axis n, heads, kv_heads, head_dim, batch, causal, q_len;
    int_axis mode;         /* 0 prefill, 1 decode */
    int_axis pass;         /* bench_pass values */
    int_axis threads, isa; /* --threads (OpenMP threads per point), --isa (attn_isa values) */
    int_axis dtype;        /* attn_dtype values */
    param_axis sets[MAX_SETS];
    int nsets;
} sweep_grid;

/* The points found so far; those left out (outside their kind's definition), and those --causal
 * auto measures without the mask. */
typedef struct spec_list {
    bench_point_spec *v;
    int64_t n, cap;
    bench_skips undefined, uncausal;
} spec_list;

/* The grid of the options (kinds, datasets and their variants, the shape axes, --set values,
 * --threads and --isa as axes), each item checked; mc->threads becomes the largest thread count
 * (the run's). ATTN_EINVAL with a message naming the option. Free with bench_sweep_grid_free,
 * also after a failure. */
attn_status bench_sweep_parse_grid(const sweep_opts *o, bench_measure_cfg *mc, sweep_grid *g,
                                   char *msg, size_t msg_len);
void bench_sweep_grid_free(sweep_grid *g);
/* Every point of the grid, in a fixed order (kinds, their --set combinations, then the grid
 * axes, n turning fastest); each one built and checked, those outside their kind's definition
 * left out (list->undefined; with --causal auto first tried without the mask: list->uncausal).
 * ATTN_EINVAL: a point that cannot be built, more than MAX_POINTS, or nothing left to measure.
 * Free list->v and its skips. */
attn_status bench_sweep_enumerate(const sweep_grid *g, const bench_measure_cfg *mc, spec_list *list,
                                  char *msg, size_t msg_len);
/* Every file dataset of the grid read once: a NaN or Inf in q, k or v is refused before anything
 * is measured (unless --allow-nonfinite). */
attn_status bench_sweep_check_files(const sweep_grid *g, const bench_measure_cfg *mc, char *msg,
                                    size_t msg_len);

#endif
