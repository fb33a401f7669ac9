/*
 * series.h — one run of a results file as series, for `bench plot` and `bench fit`.
 *
 * A series is the points of a run that share every setting except the one on the x axis:
 * kind, params, dataset (and its params), mode, causal, pass, dtype, batch, heads, kv_heads,
 * head_dim, the decode q_len, threads, kernel set (isa), and n (= kv_len) unless n is the axis. A
 * parameter the kind resolved from the shape (an 'auto' value such as stride = ceil(sqrt(n))) reads
 * "auto", so such a sweep stays one series. Labels name only what differs between the series drawn
 * together; what they all share goes into the figure's subtitle.
 *
 * Room report/ (series, fits, figures, gnuplot; above store/, below cli/): includes its own
 * headers, store/'s and measure/'s, attention/ and datasets/, never cli/.
 */
#ifndef BENCH_SERIES_H
#define BENCH_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "attention.h"
#include "results.h"

/* One run's measured points. */
typedef struct bench_run_data {
    char path[4096];
    bench_run run;
    int64_t nruns;       /* runs in the file */
    bench_point *pts;    /* the run's points with status "ok", in file order */
    char (*params)[160]; /* per point: params with the values the kind resolved written "auto" */
    int64_t n;
    int64_t failed; /* the run's points with another status (left out) */
    /* the timed repetitions (/samples) per point: samples[sample_first[p] .. + sample_count[p]),
     * ascending; NULL arrays (a hand-made run) or a count of 0: none stored */
    double *samples;
    int64_t *sample_first, *sample_count;
} bench_run_data;

/* Load run run_id of path (0: the last run). Not a results file, no such run, or a run without
 * one measured point: ATTN_EINVAL with a message saying which and what to do. A point of a file
 * written before the pass or dtype column reads "forward" or "f32" (all such files measured). */
attn_status bench_run_load(const char *path, int64_t run_id, bench_run_data *rd, char *msg,
                           size_t msg_len);
void bench_run_data_free(bench_run_data *rd);
/* Parse a run's "name=value,..." of a known kind into p, from its defaults: the weights item
 * (where the weights came from) skipped, an "auto" value (bench_series_normalize) left at the
 * default, which the kind resolves per shape. false if an item does not parse. */
bool bench_recorded_params(const attn_ops *ops, const char *text, attn_params *p);
/* Fill rd->params from rd->pts: as recorded, except that a parameter the kind resolves from the
 * shape (its default changes under ops->resolve for some point of its kind in the run) reads
 * "auto" wherever it holds the value its default resolves to. find looks kinds up
 * (attn_kind_find; kinds it does not know keep their text). bench_run_load calls it. */
void bench_series_normalize(bench_run_data *rd, const attn_ops *(*find)(const char *name));

/* The settings that make a series (bit mask). */
enum {
    BENCH_K_KIND = 1 << 0,
    BENCH_K_PARAMS = 1 << 1,
    BENCH_K_DATASET = 1 << 2, /* dataset and dataset_params */
    BENCH_K_MODE = 1 << 3,
    BENCH_K_CAUSAL = 1 << 4,
    BENCH_K_BATCH = 1 << 5,
    BENCH_K_HEADS = 1 << 6,
    BENCH_K_KV_HEADS = 1 << 7,
    BENCH_K_HEAD_DIM = 1 << 8,
    BENCH_K_Q_LEN = 1 << 9, /* decode only (prefill has q_len = n) */
    BENCH_K_N = 1 << 10,
    BENCH_K_PASS = 1 << 11,    /* forward, backward, train */
    BENCH_K_THREADS = 1 << 12, /* OpenMP threads (a --threads axis) */
    BENCH_K_ISA = 1 << 13,     /* kernel set (a --isa axis) */
    BENCH_K_DTYPE = 1 << 14,   /* storage of q, k, v: f32, bf16, f16 (a --dtype axis) */
    BENCH_K_ALL = (1 << 15) - 1,
};

/* How points are grouped: the settings compared, and (with BENCH_K_PARAMS) one parameter left
 * out of the comparison (NULL: none), for plots against that parameter. */
typedef struct bench_group_by {
    unsigned fields;
    const char *except_param;
} bench_group_by;

typedef struct bench_series {
    int64_t *idx; /* its points: indices into rd->pts, in ascending x */
    int64_t n;
} bench_series;

/* Group points idx[0..m) of rd into series by `by`, each ordered by x[point index] (x has
 * rd->n entries). Series come in order of their first point. ATTN_EFAIL when out of memory. */
attn_status bench_series_group(const bench_run_data *rd, const int64_t *idx, int64_t m,
                               bench_group_by by, const double *x, bench_series **set,
                               int64_t *nset);
void bench_series_free(bench_series *set, int64_t nset);

/* Do points a and b of rd agree on the settings of `by`? */
bool bench_same_settings(const bench_run_data *rd, int64_t a, int64_t b, bench_group_by by);

/* Label of set[which] among set[0..nset): its kind, then the parameters and the settings of
 * `by` that differ between two series of the same kind ("window=64 causal"; the dataset by its
 * name alone unless its params differ too). A setting that differs only between kinds (the
 * kv_heads of mqa and full) is left to the subtitle (bench_common_settings). */
void bench_series_label(const bench_run_data *rd, const bench_series *set, int64_t nset,
                        int64_t which, bench_group_by by, char *buf, size_t len);
/* The settings of `fields` that all points idx[0..m) share, as "prefill, gaussian, B=1 H=8
 * Hkv=8 D=64" (dtype only when not f32: "bf16"); one that is the same within each kind but not
 * between kinds as "Hkv=8 (mqa Hkv=1, gqa Hkv=2)": the first point's value, then each kind with
 * another (kind and params are never included, nor threads and isa: a figure's origin line says
 * those when shared). */
void bench_common_settings(const bench_run_data *rd, const int64_t *idx, int64_t m, unsigned fields,
                           char *buf, size_t len);

/* The 95 % confidence interval of point p's median time in seconds (bench_median_ci over its
 * repetitions; *reps gets how many); without stored repetitions, its min and max (*reps 0).
 * false when neither is known, and for a point of one repetition (no interval measured: never
 * a zero-width one). */
bool bench_point_time_ci(const bench_run_data *rd, int64_t p, double *lo, double *hi,
                         int64_t *reps);

/* The full series that set[k] is compared with (speed-up, crossover): same settings but kind
 * and params, full's default parameters if measured, else the first; failing that, the same
 * with kv_heads = heads (MHA). -1 when set[k] is full or has none. */
int64_t bench_series_reference(const bench_run_data *rd, const bench_series *set, int64_t nset,
                               int64_t k);

/* Bytes a point's q, k, v, out, workspace and decode state occupy: what its RSS should add. */
double bench_expected_bytes(const bench_point *pt);
/* Its peak RSS - base RSS (added: what the point allocated) or its peak RSS; NaN if unknown. */
double bench_rss_of(const bench_point *pt, bool added);

/* The value of parameter `name` in a "name=value,..." list into buf ("" if absent). */
void bench_param_value(const char *params, const char *name, char *buf, size_t len);
/* Counts as 256, 4K, 1.5K, 32K, 1M (exact multiples of 1024 get a suffix). */
const char *bench_format_count(double v, char *buf, size_t len);

#endif
