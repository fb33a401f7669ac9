/*
 * attn_core.h — the small core every part of attnbench shares: status codes and messages, the
 * problem shape, named parameters (a table of definitions and the values set from text), and
 * the OpenBLAS thread count. Nothing here knows about kinds, datasets, HDF5 or the CLI:
 * attention.h builds the kinds' plug-in interface on it, datasets/ its generators, harness/
 * everything else.
 */
#ifndef ATTN_CORE_H
#define ATTN_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ATTN_MAX_PARAMS = 16, ATTN_MAX_WEIGHTS = 4, ATTN_MSG_LEN = 256 };

/* Status codes returned by library functions; the message buffer says what was wrong.
 * ATTN_ENODEF: the request is valid, but the kind's definition does not cover it (a causal mask
 * for a kind defined without one, ...): `run` refuses it like ATTN_EINVAL, a sweep skips the
 * point and lists it once with the reason. */
typedef enum { ATTN_OK = 0, ATTN_EFAIL = 1, ATTN_EINVAL = 2, ATTN_ENODEF = 3 } attn_status;

/* printf-style format checking where the compiler has it. */
#if defined(__GNUC__)
#define ATTN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define ATTN_PRINTF(fmt, args)
#endif

/* Fill msg (printf-style) and return st: the one way library code reports an error. */
attn_status attn_fail(attn_status st, char *msg, size_t msg_len, const char *fmt, ...)
    ATTN_PRINTF(4, 5);

/* ---- shapes (shape.c) ---- */

/* The element type of the stored q, k and v (out, dout and the gradients are always float32):
 * f32, or 16-bit words: bf16 (the top half of a float32, rounded to nearest even) or f16 (IEEE
 * binary16). Kernels compute in float32 whatever the storage. */
typedef enum attn_dtype { ATTN_F32 = 0, ATTN_BF16, ATTN_F16, ATTN_DTYPE_COUNT } attn_dtype;
/* A set of dtypes (attn_ops.dtypes): bit (1 << dtype). */
#define ATTN_DTYPE_BIT(t) (1u << (t))
#define ATTN_DTYPES_ALL                                                                            \
    (ATTN_DTYPE_BIT(ATTN_F32) | ATTN_DTYPE_BIT(ATTN_BF16) | ATTN_DTYPE_BIT(ATTN_F16))

/* "f32", "bf16", "f16" ("?" out of range); parse returns false for an unknown name. */
const char *attn_dtype_name(attn_dtype t);
bool attn_dtype_parse(const char *name, attn_dtype *out);
/* Bytes per stored element: 4 or 2. */
size_t attn_dtype_size(attn_dtype t);
/* float32 <-> dtype element-wise, n elements (portable C; the kernel sets have vector forms:
 * kernels/convert_body.h). to_dtype rounds to nearest even (bf16: NaN stays a quiet NaN; f16:
 * overflow to ±inf, subnormals kept). For ATTN_F32 both copy. */
void attn_dtype_from_f32(attn_dtype t, const float *src, void *dst, int64_t n);
void attn_dtype_to_f32(attn_dtype t, const void *src, float *dst, int64_t n);

/* The problem a forward solves (how it runs: attn_exec below).
 * Tensors are row-major float32 (q, k, v: of s->dtype, see attn_dtype): q [B,H,T,D]  k [B,Hkv,S,D]
 * v [B,Hkv,S,D]  out [B,H,T,D]. Query head h reads KV head h / (H/Hkv): MHA is Hkv == H, MQA Hkv ==
 * 1, GQA in between. T (queries) and S (keys) may differ (cross attention, decode). A causal mask
 * aligns the last query with the last key: query i sees key j iff j <= i + S - T. */
typedef struct attn_shape {
    int64_t B;        /* batch */
    int64_t H;        /* query heads */
    int64_t Hkv;      /* key/value heads; divides H */
    int64_t T;        /* queries per head (q_len) */
    int64_t S;        /* keys per head (kv_len) */
    int64_t D;        /* head dimension (of q, k and v) */
    bool causal;      /* query i sees key j only if j <= i + S - T */
    double scale;     /* score scale; attn_shape_init sets 1/sqrt(D) */
    bool decode;      /* decode mode: the T queries are the newest positions S-T..S-1 of a sequence
                         whose S keys are a KV cache; kinds with a decode state use it
                         (attention.h) */
    attn_dtype dtype; /* storage of q, k, v (default ATTN_F32); a kind accepts the dtypes its
                         attn_ops.dtypes lists (attn_check) */
} attn_shape;

/* A shape with scale 1/sqrt(D). */
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

/* ---- named parameters (params.c) ---- */

/* A named parameter: value range and default; integers are stored exactly in doubles. */
typedef struct attn_param_def {
    const char *name;    /* e.g. "block_q" */
    const char *summary; /* one line for `bench list` */
    double def, min, max;
    bool integer;               /* refuse non-integral values */
    const char *const *choices; /* named values: NULL-terminated names of the integer values
                                   0..n-1 (integer, min 0, max n-1); NULL for a number */
} attn_param_def;

/* Parameter values, in the order of their table; and the weights of a kind that has some
 * (projections, rotations, random features: attn_ops.weights in attention.h), given by the caller
 * in the order the kind lists them. Defaults leave w NULL. */
typedef struct attn_params {
    double v[ATTN_MAX_PARAMS];
    const float *w[ATTN_MAX_WEIGHTS];
} attn_params;

/* The parameters of one owner (a kind, a dataset): count definitions (defs may be NULL when
 * count is 0), and the owner's name and role, used in messages ("kind 'window' has no
 * parameter 'x'", "window: parameter window=0 is out of range [1, 1e+09]"). */
typedef struct attn_param_table {
    const char *owner; /* the kind's or dataset's name */
    const attn_param_def *defs;
    int count;
    const char *role; /* what the owner is: NULL for "kind", or e.g. "dataset" */
} attn_param_table;

/* A table initializer from a static array of definitions: ATTN_PARAM_TABLE("window", params). */
#define ATTN_PARAM_TABLE(owner_name, def_array)                                                    \
    {                                                                                              \
        .owner = (owner_name), .defs = (def_array),                                                \
        .count = (int)(sizeof(def_array) / sizeof((def_array)[0]))                                 \
    }

/* The defaults of a table. */
attn_params attn_params_defaults(const attn_param_table *t);
/* Index of a parameter by name, or -1. */
int attn_param_index(const attn_param_table *t, const char *name);
/* Set name=value (value as text; a choice's name or its index for a parameter with choices):
 * unknown names, non-numeric, non-integral, out-of-range values or unknown choices are refused
 * with a message naming the owner, the parameter and its range. */
attn_status attn_param_set(const attn_param_table *t, attn_params *p, const char *name,
                           const char *value, char *msg, size_t msg_len);
/* "name=value,name=value" for results files (choices by name); returns the characters written. */
int attn_params_format(const attn_param_table *t, const attn_params *p, char *buf, size_t len);
/* One value of parameter d as text: its choice name, or %.12g; returns the characters written. */
int attn_param_value_format(const attn_param_def *d, double v, char *buf, size_t len);
/* Number of choices of d (0 for a numeric parameter). */
int attn_param_choice_count(const attn_param_def *d);
/* Is s a valid name of a kind, dataset or parameter: non-empty [a-z0-9_]+? */
bool attn_valid_name(const char *s);
/* A table's own consistency: a valid owner name, and every definition named [a-z0-9_]+ once,
 * summarised, with its default in [min, max] (integral for integers) and choices matching its
 * range. Fills msg with the first fault (prefixed by `what`, e.g. "kind 'x'"). */
attn_status attn_param_table_validate(const attn_param_table *t, const char *what, char *msg,
                                      size_t msg_len);

/* ---- execution context (exec.c) ---- */

/* Where a call's tensors live and how its time is read. The harness allocates a point's tensors,
 * copies its inputs in and its results out, and times its runs through these slots; the kernel
 * set of the context (ks) runs on the memory alloc returns. attn_backend_cpu is the only backend
 * built today; another accelerator would be another table (and its own kernel set). */
typedef struct attn_backend {
    const char *name; /* "cpu" */
    bool host_memory; /* its memory is the host's C heap: the harness hands host tensors to the
                         kernels in place, without copies, and frees what it keeps with free() */
    /* `bytes` of its memory, 64-byte aligned and exactly that long; NULL when out of memory */
    void *(*alloc)(size_t bytes);
    void (*release)(void *p); /* of alloc; NULL does nothing */
    /* bytes from src to dst, each either host memory or the backend's (the backend tells) */
    void (*copy)(void *dst, const void *src, size_t bytes);
    void (*sync)(void);    /* returns when all work issued so far is done */
    double (*now_s)(void); /* a monotonic clock, seconds */
} attn_backend;

/* The host CPU: alloc is posix_memalign, huge-page advised from 2 MiB on (THP "madvise"), so
 * that scattered rows cost no page walk each; release is free(); copy is memcpy; sync does
 * nothing; now_s is CLOCK_MONOTONIC. */
extern const attn_backend attn_backend_cpu;

struct attn_kernel_set; /* attention/kernels/kernel_set.h */

/* How a call runs, as opposed to what it computes (attn_shape, attn_params): the harness builds
 * one per point and passes it to every slot that runs or plans work (forward, workspace_bytes,
 * the decode and training slots). Nothing in attention/ reads a process-wide setting instead. */
typedef struct attn_exec {
    int threads;                      /* OpenMP threads a call may use (>= 1); workspaces are
                                         planned for them */
    const struct attn_kernel_set *ks; /* the kernel set its kernels run on */
    const attn_backend *backend;      /* where its tensors live, how it is timed */
} attn_exec;

/* A context of `threads` threads (at least 1) on the kernel set in force (attn_isa_current:
 * ATTN_ISA, --isa, or the best the CPU runs), on the CPU. attn_exec_of (attn_isa.h) names the set.
 */
attn_exec attn_exec_init(int threads);

/* ---- threads (softmax_tile.c) ---- */

/* OpenBLAS threads: set to n when different (cheap when already n). */
void attn_blas_threads(int n);

#endif
