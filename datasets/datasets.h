/*
 * datasets.h — the inputs of a point: seeded generators of q [B,H,T,D], k and v [B,Hkv,S,D],
 * and the user's own tensors from an HDF5 file; one file per dataset, datasets/<name>.c defining
 * `const ds_ops ds_<name>`, listed once in datasets/meson.build (the list is generated from it).
 * A generator's output depends on (seed, shape, parameters) only, never on the thread count.
 * Each dataset's exact definition is its ds_ops.definition (`bench datasets --verbose`); its
 * file's header says how it is generated (streams, layout, cost).
 *
 * Positions, as for the kinds: key j sits at position j, query i at position p_i = i + S - T
 * (the queries are the newest positions: decode's T queries are the last of the sequence).
 * Query head h belongs to KV group g = h / (H/Hkv); the structured generators draw the queries
 * of every head of a group from that group's structure (its sequence, subspace or centroids).
 * Sequence generators (local, tied) run a latent sequence over L = max(S, T) positions:
 * key j is latent t = j + L - S, query i is latent t = i + L - T.
 */
#ifndef DS_DATASETS_H
#define DS_DATASETS_H

#include <stdint.h>

#include "attention.h"
#include "rng.h"

/* A dataset's parameter values (in the order of its parameter table) and, for a dataset read
 * from a file (selected as NAME=PATH), the path (not owned: the caller keeps it alive). */
typedef struct ds_params {
    double v[ATTN_MAX_PARAMS];
    const char *path;
} ds_params;

/* A planted query of a retrieval dataset: query row (b*H + h)*T + i, whose planted key is key j
 * of its KV head (b, g = h / (H/Hkv)); the value v[b,g,j] is its marker. */
typedef struct ds_plant {
    int64_t row, key;
} ds_plant;

typedef struct ds_ops {
    const char *name;        /* the CLI's --dataset value, [a-z0-9_]+ */
    const char *summary;     /* one line for `bench datasets` */
    const char *definition;  /* exact definition, several lines, for `bench datasets --verbose` */
    attn_param_table params; /* DS_PARAM_TABLE(name, defs); no parameters:
                                {.owner = name, .role = "dataset"} */
    bool takes_path;         /* selected as NAME=PATH (file); the path is ds_params.path */

    /* q, k, v for shape s: deterministic in (seed, s, p), whatever the threads (OpenMP threads
     * it may use). May allocate temporaries (ATTN_EFAIL when out of memory). */
    attn_status (*fill)(const attn_shape *s, const ds_params *p, uint64_t seed, int threads,
                        float *q, float *k, float *v, char *msg, size_t msg_len);

    /* ---- optional slots (NULL: none) ---- */

    /* The dataset fixes the shape (file): set B, H, Hkv, S, D and scale (1/sqrt(D)) from the
     * data. On entry s->T is the number of newest queries wanted (0: all the data has); more
     * than the data has is refused. */
    attn_status (*shape)(const ds_params *p, attn_shape *s, char *msg, size_t msg_len);
    /* A retrieval task (needle): the planted queries of fill(s, p, seed), in row order, into
     * plants (NULL: only count them); returns their number. */
    int64_t (*plants)(const attn_shape *s, const ds_params *p, uint64_t seed, ds_plant *plants);
    /* Named tensors beside q, k, v (file: a kind's weights, attn_weight in attention.h): *found
     * false when the data has no tensor `name`; else *found true, its rank and dims (dims of a
     * rank above 4 not set) and, when data is not NULL, its values as float32 (float64
     * converted; the caller sized data from the dims). ATTN_EINVAL (message) when it is not
     * floating point or cannot be read. */
    attn_status (*tensor)(const ds_params *p, const char *name, int *rank, int64_t dims[4],
                          float *data, bool *found, char *msg, size_t msg_len);
} ds_ops;

/* A dataset's parameter table (parameters named in messages as "dataset 'NAME'"). */
#define DS_PARAM_TABLE(name, def_array)                                                            \
    {                                                                                              \
        .owner = (name), .defs = (def_array),                                                      \
        .count = (int)(sizeof(def_array) / sizeof((def_array)[0])), .role = "dataset"              \
    }

/* ---- the list (datasets.c, generated from datasets/meson.build) ---- */

int ds_count(void);
const ds_ops *ds_at(int index);
const ds_ops *ds_find(const char *name);
/* A --dataset item: NAME, or NAME=PATH for a dataset that takes a path. Sets *ops and *p to
 * the defaults (p->path points into item). Unknown names and a missing or unexpected path are
 * refused with a message. */
attn_status ds_parse(const char *item, const ds_ops **ops, ds_params *p, char *msg, size_t msg_len);

/* ---- input files (datasets.c) ---- */

/* May path be read as an input file? An existing regular file this process may read: ATTN_OK;
 * otherwise ATTN_EINVAL, msg "cannot read PATH: No such file or directory", "cannot read PATH:
 * Permission denied", "PATH is a FIFO, not a regular file ..." (then `fix`, e.g. "; give a
 * file"). Looks with stat() and access() only: never opens path, so a FIFO or a device is
 * refused without waiting on it. */
attn_status ds_check_input_file(const char *path, const char *fix, char *msg, size_t msg_len);

/* ---- parameters (datasets.c; parsing and ranges as for the kinds' parameters) ---- */

ds_params ds_params_defaults(const ds_ops *ops);
/* Index of a parameter by name, or -1. */
int ds_param_index(const ds_ops *ops, const char *name);
/* Set name=value (value as text); unknown names, non-numbers, non-integers and values out of
 * range are refused with a message naming the dataset, the parameter and its range. */
attn_status ds_param_set(const ds_ops *ops, ds_params *p, const char *name, const char *value,
                         char *msg, size_t msg_len);
/* "name=value,..." (and "path=PATH" first for a file) for results files; characters written. */
int ds_params_format(const ds_ops *ops, const ds_params *p, char *buf, size_t len);

/* The planted queries of ops (none without a plants slot) for (s, p, seed), malloc'd into
 * *list (NULL when there are none; the caller frees it): their number, or -1 when out of
 * memory. */
int64_t ds_plants_list(const ds_ops *ops, const attn_shape *s, const ds_params *p, uint64_t seed,
                       ds_plant **list);

/* Stratified sample of `wanted` distinct rows of [0, total), increasing, a pure function of
 * seed: one uniform row in each of `wanted` equal strata (all rows when total <= wanted).
 * Returns the number written to rows. (The accuracy measure's row sample.) */
int64_t ds_sample_rows(int64_t total, int64_t wanted, uint64_t seed, int64_t *rows);

/* ---- helpers the generators share (datasets.c) ---- */

/* Fill n floats with N(0, sigma²) from stream (seed, stream), in chunks of independent
 * substreams: the same numbers on any thread count. */
void ds_fill_normal(float *x, int64_t n, double sigma, uint64_t seed, uint64_t stream);
/* The random stream of one row (key, query, head ...) of a generator: purpose (>= 16, one per
 * use in a generator) and the row's index; disjoint from ds_fill_normal's streams. */
static inline ds_rng ds_row_rng(uint64_t seed, uint64_t purpose, int64_t index)
{
    return ds_rng_stream(seed, (purpose << 48) + (uint64_t)index);
}
/* An index drawn (u uniform in [0, 1)) in stratum r of n equal integer strata of [0, E),
 * n <= E: distinct strata give distinct indices. */
static inline int64_t ds_stratum(int64_t r, int64_t n, int64_t E, double u)
{
    const int64_t lo = r * E / n, hi = (r + 1) * E / n;
    return lo + (int64_t)(u * (double)(hi - lo));
}
/* The KV head b*Hkv + g of query head bh = b*H + h (g = h / (H/Hkv)). */
static inline int64_t ds_kv_head(const attn_shape *s, int64_t bh)
{
    return bh / s->H * s->Hkv + bh % s->H / (s->H / s->Hkv);
}
/* Latent sequence length L = max(S, T) of the sequence generators. */
static inline int64_t ds_latent_len(const attn_shape *s) { return s->S > s->T ? s->S : s->T; }
/* The sequence generators: per KV head and coordinate a latent AR(1) sequence over L positions,
 * x_0 = e_0, x_t = rho·x_{t-1} + sqrt(1 - rho²)·e_t, e ~ N(0, sigma²) from stream 1 (rho = 0:
 * i.i.d.), laid out as keys and queries by ds_from_latent. ATTN_EFAIL when out of memory. */
attn_status ds_fill_sequence(const attn_shape *s, uint64_t seed, int threads, double sigma,
                             double rho, float *q, float *k, const char *who, char *msg,
                             size_t msg_len);
/* From a latent sequence x [B,Hkv,L,D]: k[b,g,j] = x[b,g,j+L-S] and q[b,h,i] = x[b,g,i+L-T]
 * for every head h of group g. x may be k itself when L == S. */
void ds_from_latent(const attn_shape *s, int threads, const float *x, float *q, float *k);
/* Row generators with a per-KV-head table (a basis, centroids): per head (b, g) a table of
 * `table_elems` N(0, table_sigma²) floats from its own stream, then every key row of (b, g) and
 * every query row of a head of group g drawn by draw(rng of the row, table of its head, ctx, D,
 * out row) from their own streams. ATTN_EFAIL (message naming `who`) when out of memory. */
typedef void (*ds_draw_row)(ds_rng *rng, const float *table, const void *ctx, int64_t D,
                            float *out);
attn_status ds_fill_rows(const attn_shape *s, uint64_t seed, int threads, int64_t table_elems,
                         double table_sigma, ds_draw_row draw, const void *ctx, float *q, float *k,
                         const char *who, char *msg, size_t msg_len);
/* Scale every row of x [rows, D] to Euclidean norm `norm` (an all-zero row stays zero). */
void ds_normalize_rows(float *x, int64_t rows, int64_t D, double norm, int threads);

#endif
