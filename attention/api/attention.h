/*
 * attention.h — the plug-in interface every attention kind implements, the registry of kinds,
 * and the float64 references. Shapes, status codes and parameters: attn_core.h.
 *
 * Tensors are row-major float32:
 *   q [B,H,T,D]   k [B,Hkv,S,D]   v [B,Hkv,S,D]   out [B,H,T,D]
 * Low precision (attn_shape.dtype, attn_core.h): with dtype bf16 or f16 the pointers q, k and v a
 * forward (forward_train, prepare, decode) receives point at uint16_t elements of that format
 * (typed const float * for the interface's sake: cast them back, never read them as floats);
 * out stays float32. Only kinds whose attn_ops.dtypes lists the dtype get such a shape
 * (attn_check refuses the others with ATTN_ENODEF); the float64 references always take float32.
 * Query head h reads KV head h / (H/Hkv): MHA is Hkv == H, MQA Hkv == 1, GQA in between.
 * T (queries) and S (keys) may differ (cross attention, decode). A causal mask aligns the last
 * query with the last key: query i sees key j iff j <= i + S - T. A query that sees no key
 * (causal with T > S) outputs zeros. Patterns that depend on positions (windows, strides, random
 * draws) place query i at position i + S - T (aligned at the end, as the causal rule does), so
 * decoding the last query equals the last row of the prefill.
 *
 * Training (optional, attn_train_ops below): a kind with a backward pass saves, in its forward,
 * what the backward needs and computes the gradients of q, k and v from dout.
 * Backward flops are counted as 2.5 × forward flops (FlashAttention's rule: 5 products of the
 * score size against the forward's 2), whatever the kind computes (attn_kind_backward_flops).
 * A kind without a backward leaves train NULL (and may say why in no_backward);
 * attn_backward_check refuses it, and decode shapes of kinds with a decode state, with
 * ATTN_ENODEF and a one-line reason.
 *
 * A kind is one file, attention/kinds/<kind>.c, that keeps everything static except one
 *   const attn_ops attn_kind_<kind>;
 * and is listed once in attention/meson.build (the registry is generated from that list).
 * docs/adding-a-kind.md walks through one. Nothing here knows about HDF5, the CLI or timing.
 */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include "attn_core.h"

/* The shared engine a kind runs on (its forward, workspace, flops and bytes slots come from
 * the engine's slot macro), so that the tests of an engine's family find its kinds. */
typedef enum attn_engine {
    ATTN_ENGINE_OWN = 0,      /* the kind's own forward (linear) */
    ATTN_ENGINE_DENSE,        /* dense.h: every key, tiled online softmax (full, mqa, gqa) */
    ATTN_ENGINE_BLOCK_SPARSE, /* blocksparse.h: the keys a pattern lists (window, strided, ...) */
} attn_engine;

/* A weight tensor of a kind (a projection, a rotation, random features ...): row-major float32,
 * read from and written to --input/--output files as the dataset of that name beside q, k, v. */
typedef struct attn_weight {
    const char *name;    /* [a-z0-9_]+, unique in its kind; never q, k, v, o, do, dq, dk, dv */
    const char *summary; /* one line: what it is and its shape in the kind's letters */
    int rank;            /* 1..4 */
    int64_t dims[4];
} attn_weight;

/* What a kind measured of its last forward on this process beyond its time (distributed.stats):
 * a distributed kind's split between computing and waiting for messages. */
typedef struct attn_stats {
    double compute_s;  /* in its own computation (kernels, packing its blocks) */
    double wait_s;     /* waiting for messages to complete (MPI_Wait): communication not hidden */
    double inflight_s; /* from posting the messages to seeing them complete, summed over them:
                          overlap = 1 - wait_s / inflight_s is the share of it hidden */
    double bytes;      /* sent by this process */
} attn_stats;

typedef struct attn_ops attn_ops;

/* Decoding from a state instead of the whole KV cache (linear attention's recurrent state).
 * Used when s->decode. prepare summarises keys [0, S - T) into state (once, untimed); step
 * computes the T newest queries (positions S-T..S-1) from the state and keys [S - T, S) and
 * leaves the state unchanged (timed, repeatable). When s->decode, the kind's workspace_bytes,
 * flops and bytes describe the decode step. Kinds without this table decode with forward on the
 * (T, S) shape. All three slots are set. */
typedef struct attn_decode_ops {
    size_t (*state_bytes)(const attn_ops *self, const attn_shape *s, const attn_params *p);
    attn_status (*prepare)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *k, const float *v, void *state,
                           void *workspace);
    attn_status (*step)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                        const attn_params *p, const float *q, const float *k, const float *v,
                        float *out, const void *state, void *workspace);
} attn_decode_ops;

/* A kind's weights: list() describes the tensors shape s and parameters p use (at most
 * ATTN_MAX_WEIGHTS; their names do not depend on s or p) and returns their count. draw() fills
 * w[i] (the product of dims floats each) with the values the kind draws from its seed (it may
 * allocate: callers run it once, untimed). forward, decode, train and reference read the weights
 * from p->w, which callers always set (attn_weights_draw below, or weights of their own: --input):
 * weights are inputs like q, k and v, so timings and workspaces never include drawing them. Both
 * slots are set. */
typedef struct attn_weight_ops {
    int (*list)(const attn_ops *self, const attn_shape *s, const attn_params *p, attn_weight *out);
    attn_status (*draw)(const attn_ops *self, const attn_shape *s, const attn_params *p,
                        float *const *w);
} attn_weight_ops;

/* Training (see the top of this file). The forward saves what the backward needs besides out
 * (softmax kinds: the row log-sum-exp, B·H·T floats); the backward computes dq [B,H,T,D] and
 * dk, dv [B,Hkv,S,D] from dout [B,H,T,D] (the gradient of a loss with respect to out).
 * workspace_bytes and backward are set; saved_bytes and forward both, or neither (nothing saved:
 * the kind's own forward serves); reference may be NULL. */
typedef struct attn_train_ops {
    /* bytes of `saved` (0: nothing besides out) */
    size_t (*saved_bytes)(const attn_ops *self, const attn_shape *s, const attn_params *p);
    /* the forward that also fills saved; the same workspace_bytes as the kind's forward */
    attn_status (*forward)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *saved, void *workspace);
    /* exact scratch of backward */
    size_t (*workspace_bytes)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p);
    /* out and saved as forward left them; dq, dk, dv are overwritten. The kind's weights (random
     * features ...) are constants: not differentiated. */
    attn_status (*backward)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                            const attn_params *p, const float *q, const float *k, const float *v,
                            const float *out, const void *saved, const float *dout, float *dq,
                            float *dk, float *dv, void *workspace);
    /* The kind's own float64 gradient of its definition (dq [B,H,T,D], dk, dv [B,Hkv,S,D],
     * overwritten) for the tests; NULL: the masked softmax gradient (kinds with allows). */
    attn_status (*reference)(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const float *dout,
                             double *dq, double *dk, double *dv);
} attn_train_ops;

/* Distributed kinds (ring): collective. Their forward and gather are called by every MPI rank of
 * MPI_COMM_WORLD together, with the same shape, parameters and inputs (each rank reads its own
 * slices of q, k, v and writes its own rows of out); without MPI, or outside mpirun, the process
 * is the only rank and nothing changes. Both slots are set. */
typedef struct attn_distributed_ops {
    /* collective, after the forwards, untimed: every rank's rows of out into out on rank 0 */
    attn_status (*gather)(const attn_ops *self, const attn_shape *s, const attn_params *p,
                          float *out, char *msg, size_t msg_len);
    /* local, cheap, after a forward, untimed: what that forward measured of itself, kept in its
     * workspace */
    void (*stats)(const attn_ops *self, const attn_shape *s, const attn_params *p,
                  const void *workspace, attn_stats *out);
} attn_distributed_ops;

/* A kind: one static struct per file, like a driver's. Every slot receives the kind itself
 * (self), so an engine serves all its kinds from one set of functions, reading the kind's
 * parameter table (self->params) and its engine data (self->engine_data). Slots that run or plan
 * work also receive the execution context x (threads, kernel set: attn_core.h). */
struct attn_ops {
    const char *name;    /* unique, [a-z0-9_]+: the CLI's KIND */
    const char *summary; /* one line for `bench list` */
    /* The exact definition, several lines, for `bench list --verbose` (and docs/kinds.md, which
     * is generated from it): the one place the kind's mathematics is written down. */
    const char *definition;
    attn_param_table params; /* ATTN_PARAM_TABLE(name, defs); none: {.owner = name} */

    /* Refuse every invalid shape/parameter combination: fill msg, return ATTN_EINVAL. */
    attn_status (*check)(const attn_ops *self, const attn_shape *s, const attn_params *p, char *msg,
                         size_t msg_len);
    /* Exact scratch bytes forward uses for this shape, parameters and x->threads. */
    size_t (*workspace_bytes)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                              const attn_params *p);
    /* Useful floating-point work (allowed scores only) and bytes of q,k,v,out moved once. */
    double (*flops)(const attn_ops *self, const attn_shape *s, const attn_params *p);
    double (*bytes)(const attn_ops *self, const attn_shape *s, const attn_params *p);
    /* The computation. No allocation, printing or exit; scratch comes from workspace. */
    attn_status (*forward)(const attn_ops *self, const attn_exec *x, const attn_shape *s,
                           const attn_params *p, const float *q, const float *k, const float *v,
                           float *out, void *workspace);

    /* Exactly one of the two definitions below is set. */
    /* Softmax over a mask: may query i of head h see key j? (the generic reference checks it) */
    bool (*allows)(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                   int64_t i, int64_t j);
    /* Or the kind's own exact definition in float64, for query rows i of head (b,h):
     * out[r][d] for rows[r] = (b*H + h)*T + i, r < nrows. */
    attn_status (*reference)(const attn_ops *self, const attn_shape *s, const attn_params *p,
                             const float *q, const float *k, const float *v, const int64_t *rows,
                             int64_t nrows, double *out);

    /* ---- optional slots (NULL: the generic behaviour) ---- */

    /* KV heads this kind runs with, given H query heads and the user's request (0: none given).
     * NULL: the request, or H when none (MHA). mqa returns 1, gqa a grouping of its own. */
    int64_t (*kv_heads)(const attn_ops *self, int64_t H, int64_t requested);
    /* Replace parameters left at 'auto' (documented per parameter, e.g. stride=0 meaning
     * ceil(sqrt(S))) by the values this shape implies, so the results record what ran. */
    void (*resolve)(const attn_ops *self, const attn_shape *s, attn_params *p);
    /* The scores forward computes for query head h, as its engine lists them (the block-sparse
     * engine's visits): cells[i·S + j] += 1 per listing (T·S bytes the caller zeroed; saturating
     * at 255). ATTN_EFAIL: out of memory. NULL: allows stands for them (attn_kind_cells). */
    attn_status (*cells)(const attn_ops *self, const attn_shape *s, const attn_params *p, int64_t h,
                         uint8_t *cells);

    /* ---- optional capabilities: each a table whose slots are all set, or NULL ---- */

    const attn_decode_ops *decode;           /* a decode state (linear) */
    const attn_weight_ops *weights;          /* weights (projections, random features ...) */
    const attn_train_ops *train;             /* a backward pass */
    const attn_distributed_ops *distributed; /* collective across MPI ranks (ring) */
    /* Why the kind has no backward (one line, no period), when it has none; NULL: generic. */
    const char *no_backward;
    /* Why `bench sweep` without --kinds leaves the kind out (one line, no period): measured only
     * when named; NULL: in the default sweep. */
    const char *on_request;

    /* Storage dtypes of q, k, v the forward accepts (ATTN_DTYPE_BIT set, attn_core.h); 0: f32
     * only. The backward always takes float32 (attn_backward_check refuses other dtypes). */
    unsigned dtypes;

    /* ---- what the kind's engine reads (no behaviour of its own) ---- */

    attn_engine engine;      /* set by the engine's slot macro */
    const void *engine_data; /* the engine's description of this kind (block-sparse: its
                                attn_bs_pattern); NULL for engines that need none */
};

/* ---- registry (registry.c) ---- */

int attn_kind_count(void);
const attn_ops *attn_kind_at(int index);
const attn_ops *attn_kind_find(const char *name);
/* Validate one module: a valid name, required slots, exactly one definition, sane params
 * (a table owned by the kind's name). */
attn_status attn_kind_validate(const attn_ops *ops, char *msg, size_t msg_len);
/* Validate every registered module (unique names, required slots, a definition, sane params).
 * Returns ATTN_OK or fills msg with the first broken module. */
attn_status attn_registry_validate(char *msg, size_t msg_len);

/* KV heads ops runs with for H query heads and the user's request (0: none): ops->kv_heads or
 * the request, or H. */
int64_t attn_kind_kv_heads(const attn_ops *ops, int64_t H, int64_t requested);

/* ---- what a kind computes (cells.c) ---- */

/* Where attn_kind_cells takes a kind's computed scores from. */
typedef enum attn_cells_source {
    ATTN_CELLS_NONE = 0, /* no computed set: a kind defined by its own reference (low-rank,
                            hashed, linear ...) mixes every key into every query */
    ATTN_CELLS_LISTED,   /* what its engine lists (ops->cells: the block-sparse engine's visits) */
    ATTN_CELLS_MASK,     /* its mask predicate, allows (the engine computes every allowed score) */
} attn_cells_source;

/* The source attn_kind_cells uses for ops, and its name in words ("listed by the engine" ...). */
attn_cells_source attn_kind_cells_source(const attn_ops *ops);
const char *attn_cells_source_name(attn_cells_source src);
/* The scores ops computes for query head h of shape s and parameters p (resolved and checked):
 * cells[i·S + j] (T·S bytes, overwritten) the number of times score (i, j) is computed (1 for
 * each computed score of a correct kind; all 0 for ATTN_CELLS_NONE). ATTN_EFAIL (message) when
 * out of memory. */
attn_status attn_kind_cells(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                            int64_t h, uint8_t *cells, char *msg, size_t msg_len);

/* ---- training (backward.c) ---- */

/* Does ops have a backward pass? */
bool attn_kind_has_backward(const attn_ops *ops);
/* One line saying why ops has no backward ("" when it has one). */
const char *attn_kind_no_backward_reason(const attn_ops *ops);
/* attn_check, then ATTN_ENODEF (message) when ops has no backward, or s is a decode shape of a
 * kind with a decode state (its decode step is no training step). */
attn_status attn_backward_check(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                char *msg, size_t msg_len);
/* Bytes the forward saves for the backward (0 when nothing besides out). */
size_t attn_kind_saved_bytes(const attn_ops *ops, const attn_shape *s, const attn_params *p);
/* train->forward, or forward when the kind saves nothing. */
attn_status attn_kind_forward_train(const attn_ops *ops, const attn_exec *x, const attn_shape *s,
                                    const attn_params *p, const float *q, const float *k,
                                    const float *v, float *out, void *saved, void *workspace);
/* Backward flops: 2.5 × ops->flops (FlashAttention's counting rule). */
double attn_kind_backward_flops(const attn_ops *ops, const attn_shape *s, const attn_params *p);
/* Float64 gradients of the kind's own definition for dout (all rows): its reference_backward,
 * or the masked softmax gradient; the weights p does not give are drawn for the call.
 * ATTN_EFAIL when out of memory. */
attn_status attn_kind_reference_backward(const attn_ops *ops, const attn_shape *s,
                                         const attn_params *p, const float *q, const float *k,
                                         const float *v, const float *dout, double *dq, double *dk,
                                         double *dv);
/* The gradient of softmax attention restricted to ops->allows with the kind's score modifiers
 * (the derivative of attn_masked_reference): in float64, O(B·H·T·S·D), memory 3·S doubles. */
attn_status attn_masked_reference_backward(const attn_ops *ops, const attn_shape *s,
                                           const attn_params *p, const float *q, const float *k,
                                           const float *v, const float *dout, double *dq,
                                           double *dk, double *dv);

/* The same with the queries given in float64 (a kind that transforms its queries first:
 * bilinear's q·W). */
attn_status attn_softmax_reference_backward64(const attn_ops *ops, const attn_shape *s,
                                              const attn_params *p, const double *q, const float *k,
                                              const float *v, const float *dout, double *dq,
                                              double *dk, double *dv);

/* ---- a kind's weights (weights.c) ---- */

/* The weights ops uses for s and p, described into out[ATTN_MAX_WEIGHTS]: their count (0 when the
 * kind has none). */
int attn_kind_weights(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                      attn_weight *out);
/* Elements of a weight: the product of its dims. */
int64_t attn_weight_elems(const attn_weight *w);
/* Draw every weight p does not give yet (p->w[i] NULL) into new buffers, owned[i], and point
 * p->w[i] at them; owned[i] stays NULL for weights p already gave. Free with attn_weights_free.
 * ATTN_EFAIL (message) when out of memory or the kind's draw fails. */
attn_status attn_weights_draw(const attn_ops *ops, const attn_shape *s, attn_params *p,
                              float *owned[ATTN_MAX_WEIGHTS], char *msg, size_t msg_len);
void attn_weights_free(float *owned[ATTN_MAX_WEIGHTS]);
/* For a kind's forward: ATTN_EINVAL (message) unless p gives every weight the kind lists. */
attn_status attn_weights_given(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                               char *msg, size_t msg_len);

/* Seeded normals for drawing weights (and random features): a splitmix64 stream per (seed,
 * stream), Box–Muller. attn_rng_state(seed, 0) is the stream linear's features are drawn from. */
uint64_t attn_rng_state(uint64_t seed, uint64_t stream);
double attn_rng_normal(uint64_t *state); /* N(0, 1); advances state */
/* w[e] = sigma · N(0, 1) for e < n, from stream (seed, stream). */
void attn_weights_normal(float *w, int64_t n, double sigma, uint64_t seed, uint64_t stream);

/* ---- a kind's parameters (params.c; the table API is in attn_core.h) ---- */

/* The kind's parameter table, for attn_params_defaults, attn_param_set, attn_params_format ... */
static inline const attn_param_table *attn_kind_params(const attn_ops *ops) { return &ops->params; }
/* Resolve 'auto' parameter values for shape s (ops->resolve; nothing when NULL, or when s fails
 * attn_shape_check: resolvers divide by its sizes). */
void attn_params_resolve(const attn_ops *ops, const attn_shape *s, attn_params *p);
/* Shape checks, the dtype (ATTN_ENODEF unless ops->dtypes lists it), then the kind's own check. */
attn_status attn_check(const attn_ops *ops, const attn_shape *s, const attn_params *p, char *msg,
                       size_t msg_len);

/* ---- float64 references (reference.c) ---- */

/* Exact softmax attention restricted to ops->allows, with the kind's score modifiers (alibi,
 * softcap: attention/engines/score_mod.h) when its table has them (or exact full attention, no
 * modifiers, if ops == NULL), in float64, for the given query rows (row = (b*H + h)*T + i): out[r*D
 * + d]. ATTN_EFAIL only when out of memory (one row of S doubles). */
attn_status attn_masked_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                  const float *q, const float *k, const float *v,
                                  const int64_t *rows, int64_t nrows, double *out);
/* The accuracy yardstick of every kind (results' rel_err): exact softmax attention over every
 * key the causal rule allows, with the score modifiers (ALiBi, softcap) ops's parameters p set
 * when its table has them; in float64, rows as above. */
attn_status attn_exact_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                 const float *q, const float *k, const float *v,
                                 const int64_t *rows, int64_t nrows, double *out);
/* The last step of a float64 reference: out[0..D) = Σ_j softmax(score)_j · v[j] over the keys
 * j < n (v rows of D floats) whose score is not -INFINITY; zeros when there is none. */
void attn_softmax_reference_row(const double *score, int64_t n, const float *v, int64_t D,
                                double *out);
/* The same over float64 rows v (a kind's own float64 keys' values: projected, landmark-mixed). */
void attn_softmax_reference_row64(const double *score, int64_t n, const double *v, int64_t D,
                                  double *out);
/* The kind's own definition: its reference() if it has one, else the masked reference. For a
 * kind with weights, those p does not give are drawn (attn_weights_draw) for the call. */
attn_status attn_kind_reference(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                                const float *q, const float *k, const float *v, const int64_t *rows,
                                int64_t nrows, double *out);

#endif
