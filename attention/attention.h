/*
 * attention.h — the plug-in interface every attention kind implements.
 *
 * Tensors are row-major float32:
 *   q [B,H,T,D]   k [B,Hkv,S,D]   v [B,Hkv,S,D]   out [B,H,T,D]
 * Query head h reads KV head h / (H/Hkv): MHA is Hkv == H, MQA Hkv == 1, GQA in between.
 * T (queries) and S (keys) may differ (cross attention, decode). A causal mask aligns the last
 * query with the last key: query i sees key j iff j <= i + S - T. A query that sees no key
 * (causal with T > S) outputs zeros. Patterns that depend on positions (windows, strides, random
 * draws) place query i at position i + S - T (aligned at the end, as the causal rule does), so
 * decoding the last query equals the last row of the prefill.
 *
 * A kind is one file, attention/<kind>.c, that keeps everything static except one
 *   const attn_ops attn_kind_<kind>;
 * and is listed once in attention/meson.build (the registry is generated from that list).
 * Nothing here knows about HDF5, the CLI or timing.
 */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ATTN_MAX_PARAMS = 16, ATTN_MSG_LEN = 256 };

/* Status codes returned by library functions; the message buffer says what was wrong. */
typedef enum { ATTN_OK = 0, ATTN_EINVAL = 2, ATTN_EFAIL = 1 } attn_status;

/* The problem a forward solves, and the threads it may use. */
typedef struct attn_shape {
    int64_t B;      /* batch */
    int64_t H;      /* query heads */
    int64_t Hkv;    /* key/value heads; divides H */
    int64_t T;      /* queries per head (q_len) */
    int64_t S;      /* keys per head (kv_len) */
    int64_t D;      /* head dimension (of q, k and v) */
    bool causal;    /* query i sees key j only if j <= i + S - T */
    double scale;   /* score scale; attn_shape_init sets 1/sqrt(D) */
    int threads;    /* OpenMP threads the forward may use (>= 1); workspace is planned for them */
    bool decode;    /* decode mode: the T queries are the newest positions S-T..S-1 of a sequence
                       whose S keys are a KV cache; kinds with a decode state use it (see below) */
} attn_shape;

/* A named parameter of a kind: value range and default; integers are stored exactly in doubles. */
typedef struct attn_param_def {
    const char *name;    /* e.g. "block_q" */
    const char *summary; /* one line for `bench list` */
    double def, min, max;
    bool integer;        /* refuse non-integral values */
    const char *const *choices; /* named values: NULL-terminated names of the integer values
                                   0..n-1 (integer, min 0, max n-1); NULL for a number */
} attn_param_def;

/* Parameter values, in the order of the kind's param table. */
typedef struct attn_params {
    double v[ATTN_MAX_PARAMS];
} attn_params;

typedef struct attn_ops {
    const char *name;                  /* unique, [a-z0-9_]+: the CLI's KIND */
    const char *summary;               /* one line for `bench list` */
    const char *definition;            /* exact definition, several lines, for `bench list --verbose` */
    const attn_param_def *params;      /* table of nparams parameters (may be NULL if none) */
    int nparams;

    /* Refuse every invalid shape/parameter combination: fill msg, return ATTN_EINVAL. */
    attn_status (*check)(const attn_shape *s, const attn_params *p, char *msg, size_t msg_len);
    /* Exact scratch bytes forward uses for this shape, parameters and s->threads. */
    size_t (*workspace_bytes)(const attn_shape *s, const attn_params *p);
    /* Useful floating-point work (allowed scores only) and bytes of q,k,v,out moved once. */
    double (*flops)(const attn_shape *s, const attn_params *p);
    double (*bytes)(const attn_shape *s, const attn_params *p);
    /* The computation. No allocation, printing or exit; scratch comes from workspace. */
    attn_status (*forward)(const attn_shape *s, const attn_params *p, const float *q, const float *k,
                           const float *v, float *out, void *workspace);

    /* Exactly one of the two definitions below is set. */
    /* Softmax over a mask: may query i of head h see key j? (the generic reference checks it) */
    bool (*allows)(const attn_shape *s, const attn_params *p, int64_t h, int64_t i, int64_t j);
    /* Or the kind's own exact definition in float64, for query rows i of head (b,h):
     * out[r][d] for rows[r] = (b*H + h)*T + i, r < nrows. */
    attn_status (*reference)(const attn_shape *s, const attn_params *p, const float *q, const float *k,
                             const float *v, const int64_t *rows, int64_t nrows, double *out);

    /* ---- optional slots (NULL: the generic behaviour) ---- */

    /* KV heads this kind runs with, given H query heads and the user's request (0: none given).
     * NULL: the request, or H when none (MHA). mqa returns 1, gqa a grouping of its own. */
    int64_t (*kv_heads)(int64_t H, int64_t requested);
    /* Replace parameters left at 'auto' (documented per parameter, e.g. stride=0 meaning
     * ceil(sqrt(S))) by the values this shape implies, so the results record what ran. */
    void (*resolve)(const attn_shape *s, attn_params *p);

    /* Decoding from a state instead of the whole KV cache (linear attention's recurrent state).
     * Used when s->decode; all three are set or none. prepare summarises keys [0, S - T) into
     * state (once, untimed); decode computes the T newest queries (positions S-T..S-1) from the
     * state and keys [S - T, S) and leaves the state unchanged (timed, repeatable). When
     * s->decode, workspace_bytes, flops and bytes describe the decode step. Kinds without them
     * decode with forward on the (T, S) shape. */
    size_t (*state_bytes)(const attn_shape *s, const attn_params *p);
    attn_status (*prepare)(const attn_shape *s, const attn_params *p, const float *k,
                           const float *v, void *state, void *workspace);
    attn_status (*decode)(const attn_shape *s, const attn_params *p, const float *q, const float *k,
                          const float *v, float *out, const void *state, void *workspace);
} attn_ops;

/* Fill msg (printf-style) and return st: the one way library code reports an error. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
attn_status attn_fail(attn_status st, char *msg, size_t msg_len, const char *fmt, ...);

/* ---- shapes (shape.c) ---- */

/* A shape with scale 1/sqrt(D), threads 1. */
attn_shape attn_shape_init(int64_t B, int64_t H, int64_t Hkv, int64_t T, int64_t S, int64_t D,
                           bool causal);
/* Generic checks every kind shares: sizes >= 1, Hkv divides H, element counts fit in memory. */
attn_status attn_shape_check(const attn_shape *s, char *msg, size_t msg_len);
/* Element counts of q (and out) and of k (and v). */
int64_t attn_q_elems(const attn_shape *s);
int64_t attn_kv_elems(const attn_shape *s);
/* The causal rule: does query i see key j? (always true when !s->causal) */
static inline bool attn_causal_allows(const attn_shape *s, int64_t i, int64_t j)
{
    return !s->causal || j <= i + s->S - s->T;
}
/* Number of keys query i sees under the causal rule alone: in [0, S]. */
int64_t attn_causal_keys(const attn_shape *s, int64_t i);

/* ---- registry (registry.c) ---- */

int attn_kind_count(void);
const attn_ops *attn_kind_at(int index);
const attn_ops *attn_kind_find(const char *name);
/* Validate one module: a valid name, required slots, exactly one definition, sane params. */
attn_status attn_kind_validate(const attn_ops *ops, char *msg, size_t msg_len);
/* Validate every registered module (unique names, required slots, a definition, sane params).
 * Returns ATTN_OK or fills msg with the first broken module. */
attn_status attn_registry_validate(char *msg, size_t msg_len);

/* KV heads ops runs with for H query heads and the user's request (0: none): ops->kv_heads or
 * the request, or H. */
int64_t attn_kind_kv_heads(const attn_ops *ops, int64_t H, int64_t requested);

/* ---- parameters (params.c) ---- */

/* Defaults of a kind. */
attn_params attn_params_defaults(const attn_ops *ops);
/* Index of a parameter by name, or -1. */
int attn_param_index(const attn_ops *ops, const char *name);
/* Set name=value (value as text; a choice's name or its index for a parameter with choices):
 * unknown name, non-numeric, non-integral, out-of-range values or unknown choices are refused
 * with a message naming the kind, the parameter and its range. */
attn_status attn_param_set(const attn_ops *ops, attn_params *p, const char *name, const char *value,
                           char *msg, size_t msg_len);
/* Resolve 'auto' parameter values for shape s (ops->resolve; nothing when NULL). */
void attn_params_resolve(const attn_ops *ops, const attn_shape *s, attn_params *p);
/* "name=value,name=value" for results files (choices by name); returns the characters written. */
int attn_params_format(const attn_ops *ops, const attn_params *p, char *buf, size_t len);
/* One value of parameter d as text: its choice name, or %.12g; returns the characters written. */
int attn_param_value_format(const attn_param_def *d, double v, char *buf, size_t len);
/* Number of choices of d (0 for a numeric parameter). */
int attn_param_choice_count(const attn_param_def *d);
/* Shape checks, then the kind's own check. */
attn_status attn_check(const attn_ops *ops, const attn_shape *s, const attn_params *p, char *msg,
                       size_t msg_len);

/* ---- float64 references (reference.c) ---- */

/* Exact softmax attention restricted to ops->allows (or exact full attention if ops == NULL),
 * in float64, for the given query rows (row = (b*H + h)*T + i): out[r*D + d].
 * ATTN_EFAIL only when out of memory (one row of S doubles). */
attn_status attn_masked_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                  const float *q, const float *k, const float *v,
                                  const int64_t *rows, int64_t nrows, double *out);
/* The kind's own definition: its reference() if it has one, else the masked reference. */
attn_status attn_kind_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                const float *q, const float *k, const float *v, const int64_t *rows,
                                int64_t nrows, double *out);

#endif
