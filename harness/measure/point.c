/* point.c — one grid point from inputs to a filled results row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accuracy.h"
#include "collective.h"
#include "finite.h"
#include "memory.h"
#include "point.h"
#include "rng.h"
#include "signals.h"

const char *bench_pass_name(bench_pass pass)
{
    return pass == BENCH_PASS_BACKWARD ? "backward"
           : pass == BENCH_PASS_TRAIN  ? "train"
                                       : "forward";
}

/* A pass with a backward the kind has (describe may run before the check refuses the point). */
static bool runs_backward(const bench_point_spec *spec)
{
    return spec->pass != BENCH_PASS_FORWARD && attn_kind_has_backward(spec->ops);
}

size_t bench_point_workspace_bytes(const bench_point_spec *spec)
{
    const size_t fw =
        spec->ops->workspace_bytes(spec->ops, &spec->exec, &spec->shape, &spec->params);
    if (!runs_backward(spec)) return fw;
    const size_t bw =
        spec->ops->train->workspace_bytes(spec->ops, &spec->exec, &spec->shape, &spec->params);
    return spec->pass == BENCH_PASS_BACKWARD || bw > fw ? bw : fw;
}

double bench_point_flops(const bench_point_spec *spec)
{
    const double fwd = spec->ops->flops(spec->ops, &spec->shape, &spec->params);
    const double bwd =
        runs_backward(spec) ? attn_kind_backward_flops(spec->ops, &spec->shape, &spec->params) : 0;
    return spec->pass == BENCH_PASS_BACKWARD ? bwd : spec->pass ? fwd + bwd : fwd;
}

/* The buffer's size: the backward pass also runs the forward once (untimed) in it. */
static size_t workspace_alloc_bytes(const bench_point_spec *spec)
{
    const size_t fw =
        spec->ops->workspace_bytes(spec->ops, &spec->exec, &spec->shape, &spec->params);
    const size_t all = bench_point_workspace_bytes(spec);
    return all > fw ? all : fw;
}

void bench_point_describe(const bench_point_spec *spec, bench_point *pt)
{
    const attn_shape *s = &spec->shape;
    memset(pt, 0, sizeof *pt);
    snprintf(pt->kind, sizeof pt->kind, "%s", spec->ops->name);
    attn_params_format(attn_kind_params(spec->ops), &spec->params, pt->params, sizeof pt->params);
    snprintf(pt->dataset, sizeof pt->dataset, "%s", spec->dataset ? spec->dataset->name : "input");
    if (spec->dataset)
        ds_params_format(spec->dataset, &spec->dataset_params, pt->dataset_params,
                         sizeof pt->dataset_params);
    snprintf(pt->mode, sizeof pt->mode, "%s", s->decode ? "decode" : "prefill");
    pt->batch = s->B, pt->heads = s->H, pt->kv_heads = s->Hkv;
    pt->q_len = s->T, pt->kv_len = s->S, pt->head_dim = s->D;
    pt->causal = s->causal, pt->threads = spec->exec.threads, pt->seed = spec->seed;
    pt->warmup = spec->timing.warmup;
    /* backward: 2.5 x forward flops, and q, k, v, out, dout read, dq, dk, dv written: twice
     * the forward's tensors; train: both */
    const double passes = spec->pass == BENCH_PASS_TRAIN ? 3 : spec->pass ? 2 : 1;
    pt->flops = bench_point_flops(spec);
    pt->bytes = passes * spec->ops->bytes(spec->ops, s, &spec->params);
    /* q of the dtype, out float32 */
    pt->kv_bytes = pt->bytes - passes * (double)(attn_dtype_size(s->dtype) + sizeof(float)) *
                                   (double)attn_q_elems(s);
    snprintf(pt->dtype, sizeof pt->dtype, "%s", attn_dtype_name(s->dtype));
    pt->state_bytes = (int64_t)bench_point_state_bytes(spec);
    pt->workspace_bytes = (int64_t)bench_point_workspace_bytes(spec);
    snprintf(pt->pass, sizeof pt->pass, "%s", bench_pass_name(spec->pass));
    pt->saved_bytes =
        runs_backward(spec) ? (int64_t)attn_kind_saved_bytes(spec->ops, s, &spec->params) : 0;
    snprintf(pt->isa, sizeof pt->isa, "%s", attn_isa_name(attn_exec_isa(&spec->exec)));
    pt->peak_gflops = pt->sgemm_gflops = pt->bandwidth_gbs = pt->pct_peak = pt->pct_sgemm = NAN;
    pt->time_median_s = pt->time_min_s = pt->time_max_s = pt->time_p95_s = NAN;
    pt->time_mean_s = pt->time_stddev_s = pt->time_cv = NAN;
    pt->gflops_per_s = pt->gbytes_per_s = NAN;
    pt->rel_err = pt->max_abs_err = pt->self_rel_err = pt->cosine = pt->retrieval = NAN;
    pt->comm_time_s = pt->compute_time_s = pt->comm_bytes = pt->overlap = NAN;
    pt->compute_imbalance = NAN;
    pt->peak_rss_bytes = pt->base_rss_bytes = -1;
    if (gethostname(pt->host, sizeof pt->host) != 0) snprintf(pt->host, sizeof pt->host, "?");
    pt->host[sizeof pt->host - 1] = '\0';
    snprintf(pt->status, sizeof pt->status, "ok");
}

bool bench_point_uses_state(const bench_point_spec *spec)
{
    return spec->shape.decode && spec->ops->decode != NULL;
}

size_t bench_point_state_bytes(const bench_point_spec *spec)
{
    return bench_point_uses_state(spec)
               ? spec->ops->decode->state_bytes(spec->ops, &spec->shape, &spec->params)
               : 0;
}

double bench_point_bytes(const bench_point_spec *spec)
{
    const attn_shape *s = &spec->shape;
    attn_weight w[ATTN_MAX_WEIGHTS];
    double weights = 0;
    for (int i = attn_kind_weights(spec->ops, s, &spec->params, w) - 1; i >= 0; i--)
        weights += sizeof(float) * (double)attn_weight_elems(&w[i]);
    const double grads = runs_backward(spec) ? 2 : 1; /* dout, dq beside q, out; dk, dv */
    const double saved =
        runs_backward(spec) ? (double)attn_kind_saved_bytes(spec->ops, s, &spec->params) : 0;
    /* a low-precision dtype: q, k, v stored in it beside the float32 inputs they were rounded
     * from (kept for the accuracy reference) */
    const double stored = s->dtype == ATTN_F32 ? 0 : (double)attn_dtype_size(s->dtype);
    return sizeof(float) * grads *
               (2.0 * (double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s)) +
           stored * ((double)attn_q_elems(s) + 2.0 * (double)attn_kv_elems(s)) + weights +
           (double)workspace_alloc_bytes(spec) + (double)bench_point_state_bytes(spec) + saved;
}

/* "[a,b,...]" of the first rank dims. */
static void format_dims(int rank, const int64_t *dims, char *buf, size_t len)
{
    int w = snprintf(buf, len, "[");
    for (int d = 0; d < rank && d < 4 && w < (int)len; d++)
        w += snprintf(buf + w, len - (size_t)w, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (rank > 4 && w < (int)len) w += snprintf(buf + w, len - (size_t)w, ",...");
    if (w < (int)len) snprintf(buf + w, len - (size_t)w, "]");
}

/* Weight w of the point in its data (a file's dataset of its name): *found, and its values into
 * data when not NULL; ATTN_EINVAL (message) when its dims are not the ones the kind lists. */
static attn_status data_weight(const bench_point_spec *spec, const attn_weight *w, float *data,
                               bool *found, char *msg, size_t msg_len)
{
    *found = false;
    if (!spec->dataset || !spec->dataset->tensor) return ATTN_OK;
    int rank = 0;
    int64_t dims[4] = {0};
    if (spec->dataset->tensor(&spec->dataset_params, w->name, &rank, dims, NULL, found, msg,
                              msg_len))
        return ATTN_EINVAL;
    if (!*found) return ATTN_OK;
    bool same = rank == w->rank;
    for (int d = 0; same && d < rank; d++) same = dims[d] == w->dims[d];
    if (!same) {
        char got[96], want[96];
        format_dims(rank, dims, got, sizeof got);
        format_dims(w->rank, w->dims, want, sizeof want);
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: weight '%s' of %s is %s, expected %s (%s)",
                         spec->dataset_params.path ? spec->dataset_params.path
                                                   : spec->dataset->name,
                         w->name, spec->ops->name, got, want, w->summary);
    }
    return data ? spec->dataset->tensor(&spec->dataset_params, w->name, &rank, dims, data, found,
                                        msg, msg_len)
                : ATTN_OK;
}

/* Is weight `name` among used[0..n)? */
static bool weight_listed(const attn_weight *used, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(used[i].name, name) == 0) return true;
    return false;
}

/* A weight the data gives that the kind does not use with the point's parameters, though it would
 * with another value of one of them (linformer share=kv reads proj_k alone, share=headwise also
 * proj_v), is refused: the data's values would be silently left unread. */
static attn_status check_unused_weights(const bench_point_spec *spec, const attn_weight *used,
                                        int nused, char *msg, size_t msg_len)
{
    if (!spec->dataset || !spec->dataset->tensor) return ATTN_OK;
    const attn_param_table *t = attn_kind_params(spec->ops);
    for (int i = 0; i < t->count; i++) {
        const int choices = attn_param_choice_count(&t->defs[i]), def = (int)t->defs[i].def;
        for (int j = 0; j < choices; j++) { /* the default first: the value to suggest */
            const int c = j == 0 ? def : j <= def ? j - 1 : j;
            attn_params other = spec->params;
            other.v[i] = c;
            attn_weight w[ATTN_MAX_WEIGHTS];
            const int n = attn_kind_weights(spec->ops, &spec->shape, &other, w);
            for (int k = 0; k < n; k++) {
                if (weight_listed(used, nused, w[k].name)) continue;
                int rank = 0;
                int64_t dims[4] = {0};
                bool found = false;
                if (spec->dataset->tensor(&spec->dataset_params, w[k].name, &rank, dims, NULL,
                                          &found, msg, msg_len))
                    return ATTN_EINVAL;
                if (!found) continue;
                char now[64], then[64];
                attn_param_value_format(&t->defs[i], spec->params.v[i], now, sizeof now);
                attn_param_value_format(&t->defs[i], (double)c, then, sizeof then);
                return attn_fail(ATTN_EINVAL, msg, msg_len,
                                 "%s holds weight '%s', which %s %s=%s does not use: remove it "
                                 "from the data, or set %s=%s to use it",
                                 spec->dataset_params.path ? spec->dataset_params.path
                                                           : spec->dataset->name,
                                 w[k].name, spec->ops->name, t->defs[i].name, now, t->defs[i].name,
                                 then);
            }
        }
    }
    return ATTN_OK;
}

attn_status bench_point_check(const bench_point_spec *spec, char *msg, size_t msg_len)
{
    const attn_status st =
        spec->pass != BENCH_PASS_FORWARD
            ? attn_backward_check(spec->ops, &spec->shape, &spec->params, msg, msg_len)
            : attn_check(spec->ops, &spec->shape, &spec->params, msg, msg_len);
    if (st != ATTN_OK) return st == ATTN_ENODEF ? ATTN_ENODEF : ATTN_EINVAL;
    /* checked before anything is allocated, against what this process may allocate now */
    const char *bound;
    const double need = bench_point_bytes(spec),
                 have = (double)bench_available_memory_bytes(&bound);
    if (have > 0 && need > 0.9 * have) {
        char a[32], b[32];
        return attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "%s needs %s (%.0f bytes) for q, k, v, out, weights and workspace; %s "
            "(%.0f bytes) %s, of which a point takes at most 90 %%: lower --n, --heads, "
            "--head-dim or --batch",
            spec->ops->name, bench_format_bytes(need, a, sizeof a), need,
            bench_format_bytes(have, b, sizeof b), have, bound);
    }
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = attn_kind_weights(spec->ops, &spec->shape, &spec->params, w);
    for (int i = 0; i < n; i++) {
        bool found;
        if (!spec->params.w[i] && data_weight(spec, &w[i], NULL, &found, msg, msg_len))
            return ATTN_EINVAL;
    }
    return check_unused_weights(spec, w, n, msg, msg_len);
}

/* The '+'-joined distinct sources of a kind's n weights into buf ("" when none). */
static void join_sources(const char *const *from, int n, char *buf, size_t len)
{
    int w = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++) seen |= strcmp(from[i], from[j]) == 0;
        if (!seen && w < (int)len)
            w += snprintf(buf + w, len - (size_t)w, "%s%s", w ? "+" : "", from[i]);
    }
}

/* The distinct sources of the kind's weights (from: given, seed, the dataset's name) appended to
 * pt->params as the weights item, when the kind has weights. */
static void note_weights_source(const bench_point_spec *spec, const char *const *from,
                                bench_point *pt)
{
    attn_weight w[ATTN_MAX_WEIGHTS];
    char source[64];
    join_sources(from, attn_kind_weights(spec->ops, &spec->shape, &spec->params, w), source,
                 sizeof source);
    if (!*source) return;
    const size_t used = strlen(pt->params);
    snprintf(pt->params + used, sizeof pt->params - used, "%s" BENCH_WEIGHTS_ITEM "=%s",
             used ? "," : "", source);
}

attn_status bench_point_weights(const bench_point_spec *spec, attn_params *p,
                                float *owned[ATTN_MAX_WEIGHTS], const char *from[ATTN_MAX_WEIGHTS],
                                char *msg, size_t msg_len)
{
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++) owned[i] = NULL, from[i] = NULL;
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = attn_kind_weights(spec->ops, &spec->shape, p, w);
    attn_status st = ATTN_EINVAL; /* the data's weights; ATTN_EFAIL when memory or drawing fails */
    for (int i = 0; i < n; i++) {
        bool found;
        if (p->w[i]) {
            from[i] = "given";
            continue;
        }
        if (data_weight(spec, &w[i], NULL, &found, msg, msg_len)) goto fail;
        if (!found) {
            from[i] = "seed";
            continue;
        }
        if (!(owned[i] = malloc((size_t)attn_weight_elems(&w[i]) * sizeof(float) + 1))) {
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for weight '%s'", w[i].name);
            goto fail;
        }
        if (data_weight(spec, &w[i], owned[i], &found, msg, msg_len)) goto fail;
        p->w[i] = owned[i];
        from[i] = spec->dataset->name;
    }
    float *drawn[ATTN_MAX_WEIGHTS];
    if ((st = attn_weights_draw(spec->ops, &spec->shape, p, drawn, msg, msg_len))) goto fail;
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++)
        if (drawn[i]) owned[i] = drawn[i];
    return ATTN_OK;
fail:
    for (int i = 0; i < ATTN_MAX_WEIGHTS; i++)
        if (owned[i]) p->w[i] = NULL;
    attn_weights_free(owned);
    return st;
}

typedef struct forward_call {
    const bench_point_spec *spec;
    const float *q, *k, *v;
    float *out;
    void *workspace;
    const void *state; /* decode from a state: NULL when the forward runs */
    bench_pass pass;
    void *saved;         /* backward, train: what forward_train saves */
    const float *dout;   /* backward, train: the given gradient of out */
    float *dq, *dk, *dv; /* backward, train: the gradients */
    attn_stats sum;      /* the kind's own measurements (ops->stats), summed over timed runs */
    int64_t runs;
} forward_call;

/* After a timed forward: add what the kind measured of it (bench_loop_hooks.after). */
static void add_stats(void *ctx)
{
    forward_call *c = ctx;
    attn_stats one;
    c->spec->ops->distributed->stats(c->spec->ops, &c->spec->shape, &c->spec->params, c->workspace,
                                     &one);
    c->sum.compute_s += one.compute_s, c->sum.wait_s += one.wait_s;
    c->sum.inflight_s += one.inflight_s, c->sum.bytes += one.bytes;
    c->runs++;
}

/* The stats columns of pt from the sums over the timed runs: of every rank when the point runs
 * on the ranks together (each rank calls it then), else of this process. */
static void stats_columns(const forward_call *c, bool together, bench_point *pt)
{
    if (c->runs == 0) return;
    const double n = (double)c->runs, ranks = together ? bench_coll_size() : 1;
    double hi[2] = {c->sum.compute_s / n, c->sum.wait_s / n};
    double sum[4] = {hi[0], c->sum.wait_s, c->sum.inflight_s, c->sum.bytes / n};
    if (together) {
        bench_coll_reduce(hi, 2, BENCH_COLL_MAX);
        bench_coll_reduce(sum, 4, BENCH_COLL_SUM);
    }
    pt->compute_time_s = hi[0], pt->comm_time_s = hi[1], pt->comm_bytes = sum[3];
    pt->compute_imbalance = sum[0] > 0 ? hi[0] / (sum[0] / ranks) - 1 : NAN;
    pt->overlap = sum[2] > 0 ? 1 - sum[1] / sum[2] : NAN;
}

static attn_status call_forward(void *ctx)
{
    forward_call *c = ctx;
    const bench_point_spec *sp = c->spec;
    if (c->state)
        return sp->ops->decode->step(sp->ops, &sp->exec, &sp->shape, &sp->params, c->q, c->k, c->v,
                                     c->out, c->state, c->workspace);
    if (c->pass == BENCH_PASS_FORWARD)
        return sp->ops->forward(sp->ops, &sp->exec, &sp->shape, &sp->params, c->q, c->k, c->v,
                                c->out, c->workspace);
    if (c->pass == BENCH_PASS_TRAIN) {
        const attn_status st =
            attn_kind_forward_train(sp->ops, &sp->exec, &sp->shape, &sp->params, c->q, c->k, c->v,
                                    c->out, c->saved, c->workspace);
        if (st != ATTN_OK) return st;
    }
    return sp->ops->train->backward(sp->ops, &sp->exec, &sp->shape, &sp->params, c->q, c->k, c->v,
                                    c->out, c->saved, c->dout, c->dq, c->dk, c->dv, c->workspace);
}

/* Mark the point as failed with the message already in msg. */
static attn_status mark_failed(bench_point *pt, attn_status st, const char *msg)
{
    snprintf(pt->status, sizeof pt->status, "error");
    snprintf(pt->message, sizeof pt->message, "%s", msg);
    return st;
}

/* The buffers of a point, allocated, copied and released through its backend (spec->exec).
 * On the backend, what the kind reads and writes: in (q, k, v as the kind takes them), out, ws,
 * state, dout_in, grad, saved. On the host: the inputs the point makes (own_*), their rounding to
 * a low-precision dtype (low), the gradient of out it makes (dout), and out and the gradients as
 * the harness reads them (host_out, host_grad). On a host-memory backend the two sides are the
 * same buffers: nothing is copied. */
typedef struct buffers {
    const attn_backend *be;
    float *own_q, *own_k, *own_v; /* host: the dataset's inputs */
    void *low[3];                 /* host: q, k, v rounded to a low-precision dtype */
    float *dout;                  /* host: backward, train: the given gradient of out */
    const void *in[3];            /* backend: the kind's q, k, v */
    const float *dout_in;         /* backend: dout */
    float *out, *grad[3];         /* backend: out; backward, train: dq, dk, dv */
    void *ws, *state, *saved;     /* backend */
    float *host_out, *host_grad[3];
    void *copies[5]; /* backend copies of host data (in, dout_in); host copies of out, grads */
    float *host_copies[4];
} buffers;

static void free_buffers(buffers *b)
{
    free(b->own_q);
    free(b->own_k);
    free(b->own_v);
    for (int t = 0; t < 3; t++) free(b->low[t]);
    free(b->dout);
    const attn_backend *be = b->be;
    be->release(b->out);
    be->release(b->ws);
    be->release(b->state);
    for (int g = 0; g < 3; g++) be->release(b->grad[g]);
    be->release(b->saved);
    for (int c = 0; c < 5; c++) be->release(b->copies[c]);
    for (int c = 0; c < 4; c++) free(b->host_copies[c]);
}

/* Allocate b (the host inputs too when make_inputs); false with a message when one fails. */
static bool alloc_buffers(const bench_point_spec *spec, const bench_point *pt, bool make_inputs,
                          buffers *b, char *msg, size_t msg_len)
{
    const size_t qn = (size_t)attn_q_elems(&spec->shape), kvn = (size_t)attn_kv_elems(&spec->shape);
    const bool use_state = bench_point_uses_state(spec);
    const attn_backend *be = spec->exec.backend;
    *b = (buffers){.be = be};
    b->out = be->alloc(qn * sizeof(float));
    b->ws = be->alloc(workspace_alloc_bytes(spec));
    b->state = use_state ? be->alloc((size_t)pt->state_bytes) : NULL;
    const bool grads = runs_backward(spec);
    if (grads) {
        b->dout = bench_alloc(qn * sizeof(float));
        b->grad[0] = be->alloc(qn * sizeof(float));
        b->grad[1] = be->alloc(kvn * sizeof(float));
        b->grad[2] = be->alloc(kvn * sizeof(float));
        b->saved = be->alloc((size_t)pt->saved_bytes);
    }
    if (make_inputs) {
        b->own_q = bench_alloc(qn * sizeof(float));
        b->own_k = bench_alloc(kvn * sizeof(float));
        b->own_v = bench_alloc(kvn * sizeof(float));
    }
    const attn_dtype dt = spec->shape.dtype;
    if (dt != ATTN_F32) {
        b->low[0] = bench_alloc(qn * attn_dtype_size(dt));
        b->low[1] = bench_alloc(kvn * attn_dtype_size(dt));
        b->low[2] = bench_alloc(kvn * attn_dtype_size(dt));
    }
    if ((dt == ATTN_F32 || (b->low[0] && b->low[1] && b->low[2])) && b->out && b->ws &&
        (!use_state || b->state) &&
        (!grads || (b->dout && b->grad[0] && b->grad[1] && b->grad[2] && b->saved)) &&
        (!make_inputs || (b->own_q && b->own_k && b->own_v)))
        return true;
    char need[32];
    bench_format_bytes(bench_point_bytes(spec), need, sizeof need);
    snprintf(msg, msg_len, "cannot allocate %s for inputs, output and workspace", need);
    return false;
}

/* Host data as the backend's: itself on a host-memory backend, else a copy on the backend (kept
 * in *copy, released with the buffers); NULL when out of memory. */
static const void *to_backend(const attn_backend *be, const void *host, size_t bytes, void **copy)
{
    if (be->host_memory) return host;
    if (!(*copy = be->alloc(bytes))) return NULL;
    be->copy(*copy, host, bytes);
    return *copy;
}

/* Backend data as the host's: itself on a host-memory backend, else a copy on the host (kept in
 * *copy, freed with the buffers); NULL when out of memory or dev is NULL. */
static float *to_host(const attn_backend *be, float *dev, size_t bytes, float **copy)
{
    if (be->host_memory || !dev) return dev;
    if (!(*copy = bench_alloc(bytes))) return NULL;
    be->copy(*copy, dev, bytes);
    return *copy;
}

/* The kind's inputs on the backend (b->in, b->dout_in) from the host's q, k, v (b->low when
 * rounded) and b->dout; false with a message when memory runs out. */
static bool inputs_to_backend(const bench_point_spec *spec, const void *q, const void *k,
                              const void *v, buffers *b, char *msg, size_t msg_len)
{
    const attn_shape *s = &spec->shape;
    const size_t el = attn_dtype_size(s->dtype);
    const size_t qb = (size_t)attn_q_elems(s) * el, kvb = (size_t)attn_kv_elems(s) * el;
    b->in[0] = to_backend(b->be, q, qb, &b->copies[0]);
    b->in[1] = to_backend(b->be, k, kvb, &b->copies[1]);
    b->in[2] = to_backend(b->be, v, kvb, &b->copies[2]);
    b->dout_in =
        b->dout ? to_backend(b->be, b->dout, (size_t)attn_q_elems(s) * sizeof(float), &b->copies[3])
                : NULL;
    if (b->in[0] && b->in[1] && b->in[2] && (!b->dout || b->dout_in)) return true;
    snprintf(msg, msg_len, "%s: cannot copy the inputs to the %s backend", spec->ops->name,
             b->be->name);
    return false;
}

/* out and the gradients on the host (b->host_out, b->host_grad) after the timed runs; false with
 * a message when memory runs out. */
static bool results_to_host(const bench_point_spec *spec, buffers *b, char *msg, size_t msg_len)
{
    const size_t qb = (size_t)attn_q_elems(&spec->shape) * sizeof(float);
    const size_t kvb = (size_t)attn_kv_elems(&spec->shape) * sizeof(float);
    b->host_out = to_host(b->be, b->out, qb, &b->host_copies[0]);
    bool ok = b->host_out != NULL;
    for (int g = 0; g < 3; g++) {
        b->host_grad[g] = to_host(b->be, b->grad[g], g ? kvb : qb, &b->host_copies[1 + g]);
        ok &= !b->grad[g] || b->host_grad[g];
    }
    if (!ok)
        snprintf(msg, msg_len, "%s: cannot copy the results from the %s backend", spec->ops->name,
                 b->be->name);
    return ok;
}

/* Take a host result out of b for the caller (who frees it with free()): host memory either way
 * (a host-memory backend's memory is the C heap's). */
static float *take_host(float **host, float **dev, float **host_copy)
{
    float *p = *host;
    if (*host_copy == p) *host_copy = NULL;
    else *dev = NULL;
    *host = NULL;
    return p;
}

/* Time the forward on the backend's inputs b->in (decode: prepare the state untimed, then time
 * decode) into pt's time columns; every repetition into *samples_s. */
static attn_status time_point(const bench_point_spec *spec, buffers *b, bench_point *pt,
                              double **samples_s, int64_t *nsamples, char *msg, size_t msg_len)
{
    const float *q = b->in[0], *k = b->in[1], *v = b->in[2];
    if (b->state && spec->ops->decode->prepare(spec->ops, &spec->exec, &spec->shape, &spec->params,
                                               k, v, b->state, b->ws) != ATTN_OK)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: preparing the decode state failed",
                         spec->ops->name);
    forward_call call = {.spec = spec,
                         .q = q,
                         .k = k,
                         .v = v,
                         .out = b->out,
                         .workspace = b->ws,
                         .state = b->state,
                         .pass = spec->pass,
                         .saved = b->saved,
                         .dout = b->dout_in,
                         .dq = b->grad[0],
                         .dk = b->grad[1],
                         .dv = b->grad[2]};
    if (spec->pass == BENCH_PASS_BACKWARD &&
        attn_kind_forward_train(spec->ops, &spec->exec, &spec->shape, &spec->params, q, k, v,
                                b->out, b->saved, b->ws) != ATTN_OK)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: the forward before the backward failed",
                         spec->ops->name);
    const bool together = spec->ops->distributed && bench_coll_size() > 1;
    const bench_loop_hooks hooks = {.decide = together ? bench_coll_decide : NULL,
                                    .after = spec->ops->distributed ? add_stats : NULL,
                                    .backend = b->be};
    const attn_status st =
        bench_time_loop_hooked(&spec->timing, call_forward, &call, &hooks, samples_s, nsamples);
    if (st != ATTN_OK && bench_stop_signal())
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: interrupted (SIG%s)", spec->ops->name,
                         bench_signal_name(bench_stop_signal()));
    if (st != ATTN_OK)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s %s failed (status %d)", spec->ops->name,
                         bench_pass_name(spec->pass), (int)st);
    stats_columns(&call, together, pt);
    if (together && spec->ops->distributed->gather(spec->ops, &spec->shape, &spec->params, b->out,
                                                   msg, msg_len))
        return ATTN_EFAIL;
    pt->peak_rss_bytes = bench_peak_rss_bytes();
    bench_stats t = bench_stats_of(*samples_s, *nsamples);
    pt->reps = (int32_t)t.n;
    pt->time_median_s = t.median, pt->time_min_s = t.min, pt->time_max_s = t.max;
    pt->time_p95_s = t.p95, pt->time_mean_s = t.mean, pt->time_stddev_s = t.stddev;
    pt->time_cv = t.cv;
    pt->gflops_per_s = pt->flops / t.median / 1e9;
    pt->gbytes_per_s = pt->bytes / t.median / 1e9;
    return ATTN_OK;
}

/* The output's accuracy columns of pt; the retrieval ones too when the dataset made the inputs
 * (generated: planted queries known). */
static attn_status measure_point_accuracy(const bench_point_spec *spec, const float *q,
                                          const float *k, const float *v, const float *out,
                                          bool generated, bench_point *pt, char *msg,
                                          size_t msg_len)
{
    const attn_shape *s = &spec->shape;
    bench_accuracy acc;
    if (bench_measure_accuracy(spec->ops, s, &spec->params, q, k, v, out, spec->accuracy_rows,
                               spec->seed, &acc, msg, msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    pt->accuracy_rows = (int32_t)acc.rows;
    pt->rel_err = acc.rel_err, pt->max_abs_err = acc.max_abs_err;
    pt->self_rel_err = acc.self_rel_err;
    pt->cosine = acc.cosine;
    int64_t planted = 0;
    if (generated && bench_measure_retrieval(spec->dataset, &spec->dataset_params, s,
                                             spec->exec.threads, spec->seed, v, out, &planted,
                                             &pt->retrieval, msg, msg_len) != ATTN_OK)
        return ATTN_EFAIL;
    pt->retrieval_queries = (int32_t)planted;
    return ATTN_OK;
}

/* The inputs the point made: refused with ATTN_EINVAL unless spec->allow_nonfinite; allowed, the
 * first bad value goes into pt->message. */
static attn_status check_inputs(const bench_point_spec *spec, const float *q, const float *k,
                                const float *v, bench_point *pt, char *msg, size_t msg_len)
{
    const attn_shape *s = &spec->shape;
    const int64_t qd[4] = {s->B, s->H, s->T, s->D}, kd[4] = {s->B, s->Hkv, s->S, s->D};
    const char *hint =
        spec->allow_nonfinite ? " (measured: --allow-nonfinite)" : BENCH_NONFINITE_HINT;
    const char *where = spec->dataset ? spec->dataset->name : "";
    attn_status st = bench_check_finite(q, qd, "q", where, 0, hint, msg, msg_len);
    if (!st) st = bench_check_finite(k, kd, "k", where, 0, hint, msg, msg_len);
    if (!st) st = bench_check_finite(v, kd, "v", where, 0, hint, msg, msg_len);
    if (st && spec->allow_nonfinite) {
        snprintf(pt->message, sizeof pt->message, "input %s", msg);
        return ATTN_OK;
    }
    return st;
}

/* A NaN or ±Inf in the output: status "nonfinite", the first one named in pt->message (after
 * what the input scan left there). */
static void check_output(const bench_point_spec *spec, const buffers *b, bench_point *pt)
{
    const attn_shape *s = &spec->shape;
    const int64_t od[4] = {s->B, s->H, s->T, s->D}, kd[4] = {s->B, s->Hkv, s->S, s->D};
    char why[ATTN_MSG_LEN];
    attn_status st =
        bench_check_finite(b->host_out, od, "output o", NULL, 0, NULL, why, sizeof why);
    if (!st && b->host_grad[0])
        st = bench_check_finite(b->host_grad[0], od, "gradient dq", NULL, 0, NULL, why, sizeof why);
    if (!st && b->host_grad[1])
        st = bench_check_finite(b->host_grad[1], kd, "gradient dk", NULL, 0, NULL, why, sizeof why);
    if (!st && b->host_grad[2])
        st = bench_check_finite(b->host_grad[2], kd, "gradient dv", NULL, 0, NULL, why, sizeof why);
    if (st == ATTN_OK) return;
    snprintf(pt->status, sizeof pt->status, "nonfinite");
    char prev[sizeof pt->message];
    snprintf(prev, sizeof prev, "%s", pt->message);
    snprintf(pt->message, sizeof pt->message, "%s%s%s", why, *prev ? "; " : "", prev);
}

/* The data's `do` [B,H,Tf,D] (a file: dims those of its q, the newest T rows used) into dout;
 * *found false when the data has none. */
static attn_status data_dout(const bench_point_spec *spec, float *dout, bool *found, char *msg,
                             size_t msg_len)
{
    const ds_ops *ds = spec->dataset;
    const attn_shape *s = &spec->shape;
    const char *path = spec->dataset_params.path ? spec->dataset_params.path : ds->name;
    int rank = 0, qrank = 0;
    int64_t dims[4] = {0}, qdims[4] = {0};
    bool qfound = false;
    *found = false;
    if (!ds->tensor) return ATTN_OK;
    if (ds->tensor(&spec->dataset_params, "do", &rank, dims, NULL, found, msg, msg_len) ||
        ds->tensor(&spec->dataset_params, "q", &qrank, qdims, NULL, &qfound, msg, msg_len))
        return ATTN_EINVAL;
    if (!*found) return ATTN_OK;
    if (rank != 4 || dims[0] != s->B || dims[1] != s->H || dims[3] != s->D || dims[2] < s->T ||
        (qfound && dims[2] != qdims[2]))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: 'do' must be [B,H,T,D] like its q", path);
    const size_t rows = (size_t)dims[2], per = (size_t)s->D;
    float *all = bench_alloc((size_t)(s->B * s->H) * rows * per * sizeof *all);
    if (!all) return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory reading 'do'", path);
    attn_status st = ds->tensor(&spec->dataset_params, "do", &rank, dims, all, found, msg, msg_len);
    for (int64_t bh = 0; !st && bh < s->B * s->H; bh++) /* the newest T rows, as q's */
        memcpy(dout + (size_t)bh * (size_t)s->T * per,
               all + ((size_t)bh * rows + rows - (size_t)s->T) * per,
               (size_t)s->T * per * sizeof *dout);
    free(all);
    return st;
}

/* dout of a backward or train point: the data's `do`, else normal from the point's seed. */
static attn_status make_dout(const bench_point_spec *spec, float *dout, char *msg, size_t msg_len)
{
    bool found = false;
    if (data_dout(spec, dout, &found, msg, msg_len)) return ATTN_EINVAL;
    if (found) return ATTN_OK;
    ds_rng r = ds_rng_stream(spec->seed, BENCH_DOUT_STREAM);
    for (int64_t i = 0; i < attn_q_elems(&spec->shape); i++) dout[i] = (float)ds_rng_normal(&r);
    return ATTN_OK;
}

attn_status bench_dataset_check_finite(const ds_ops *ds, const ds_params *p, char *msg,
                                       size_t msg_len)
{
    if (!ds->shape) return ATTN_OK;
    attn_shape s = attn_shape_init(1, 1, 1, 0, 1, 1, false); /* T = 0: every query of the file */
    if (ds->shape(p, &s, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    const size_t qn = (size_t)attn_q_elems(&s), kvn = (size_t)attn_kv_elems(&s);
    float *q = bench_alloc(qn * sizeof *q), *k = bench_alloc(kvn * sizeof *k),
          *v = bench_alloc(kvn * sizeof *v);
    attn_status st =
        q && k && v ? ATTN_OK
                    : attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory reading it", p->path);
    if (!st) st = ds->fill(&s, p, 0, 1, q, k, v, msg, msg_len);
    const int64_t qd[4] = {s.B, s.H, s.T, s.D}, kd[4] = {s.B, s.Hkv, s.S, s.D};
    if (!st) st = bench_check_finite(q, qd, "q", p->path, 0, BENCH_NONFINITE_HINT, msg, msg_len);
    if (!st) st = bench_check_finite(k, kd, "k", p->path, 0, BENCH_NONFINITE_HINT, msg, msg_len);
    if (!st) st = bench_check_finite(v, kd, "v", p->path, 0, BENCH_NONFINITE_HINT, msg, msg_len);
    free(q);
    free(k);
    free(v);
    return st;
}

/* q, k, v rounded to the point's dtype into b->low, on the host (untimed). The accuracy is then
 * measured against the float64 result of the unrounded q, k, v: rel_err includes what the
 * rounding costs. */
static void lowp_inputs(const bench_point_spec *spec, const float *q, const float *k,
                        const float *v, buffers *b)
{
    const attn_shape *s = &spec->shape;
    attn_dtype_from_f32(s->dtype, q, b->low[0], attn_q_elems(s));
    attn_dtype_from_f32(s->dtype, k, b->low[1], attn_kv_elems(s));
    attn_dtype_from_f32(s->dtype, v, b->low[2], attn_kv_elems(s));
}

attn_status bench_point_run(const bench_point_spec *spec, const float *q, const float *k,
                            const float *v, bench_point *pt, double **samples_s, int64_t *nsamples,
                            float **out_keep, char *msg, size_t msg_len)
{
    *samples_s = NULL;
    *nsamples = 0;
    if (out_keep) *out_keep = NULL;
    bench_point_describe(spec, pt);
    const attn_status checked = bench_point_check(spec, msg, msg_len);
    if (checked != ATTN_OK) return mark_failed(pt, checked, msg);
    /* the kernel set first: every kernel of the point, inputs included, runs with it */
    if (attn_isa_select(attn_exec_isa(&spec->exec), msg, msg_len) != ATTN_OK)
        return mark_failed(pt, ATTN_EINVAL, msg);

    /* the kind's weights: the caller's, the data's (--input), else drawn from its seed, untimed */
    bench_point_spec given = *spec;
    float *owned[ATTN_MAX_WEIGHTS];
    const char *from[ATTN_MAX_WEIGHTS];
    const attn_status weighed = bench_point_weights(spec, &given.params, owned, from, msg, msg_len);
    if (weighed != ATTN_OK) return mark_failed(pt, weighed, msg);
    note_weights_source(spec, from, pt);
    spec = &given;

    bench_peak_rss_reset();
    pt->base_rss_bytes = bench_rss_bytes();
    const bool generate = q == NULL;
    /* a collective kind's ranks: rank 0 makes the inputs and measures the accuracy */
    const bool together = spec->ops->distributed && bench_coll_size() > 1;
    const bool root = bench_coll_rank() == 0;
    buffers b;
    attn_status st = ATTN_OK;
    if (!alloc_buffers(spec, pt, generate, &b, msg, msg_len)) {
        st = mark_failed(pt, ATTN_EFAIL, msg);
    } else if (generate) {
        q = b.own_q, k = b.own_k, v = b.own_v;
        if (!root && together) { /* rank 0's, below */
        } else if (spec->dataset->fill(&spec->shape, &spec->dataset_params, spec->seed,
                                       spec->exec.threads, b.own_q, b.own_k, b.own_v, msg,
                                       msg_len) != ATTN_OK)
            st = mark_failed(pt, ATTN_EINVAL, msg);
        else if (check_inputs(spec, q, k, v, pt, msg, msg_len) != ATTN_OK)
            st = mark_failed(pt, ATTN_EINVAL, msg);
    }
    if (together && (st = bench_coll_agree(st)) != ATTN_OK && !*pt->message)
        mark_failed(pt, st, "failed on another rank");
    if (together && generate && !st) {
        bench_coll_bcast(b.own_q, attn_q_elems(&spec->shape));
        bench_coll_bcast(b.own_k, attn_kv_elems(&spec->shape));
        bench_coll_bcast(b.own_v, attn_kv_elems(&spec->shape));
    }
    if (!st && b.dout && make_dout(spec, b.dout, msg, msg_len) != ATTN_OK)
        st = mark_failed(pt, ATTN_EINVAL, msg);
    if (!st && b.low[0]) lowp_inputs(spec, q, k, v, &b);
    if (!st && !inputs_to_backend(spec, b.low[0] ? b.low[0] : q, b.low[0] ? b.low[1] : k,
                                  b.low[0] ? b.low[2] : v, &b, msg, msg_len))
        st = mark_failed(pt, ATTN_EFAIL, msg);
    if (!st && time_point(spec, &b, pt, samples_s, nsamples, msg, msg_len) != ATTN_OK)
        st = mark_failed(pt, ATTN_EFAIL, msg);
    if (!st && !results_to_host(spec, &b, msg, msg_len)) st = mark_failed(pt, ATTN_EFAIL, msg);
    bench_point_spec wide = *spec; /* the references take the float32 inputs */
    wide.shape.dtype = ATTN_F32;
    if (!st && (root || !together) &&
        measure_point_accuracy(&wide, q, k, v, b.host_out, generate, pt, msg, msg_len))
        st = mark_failed(pt, ATTN_EFAIL, msg);
    if (!st && (root || !together)) check_output(spec, &b, pt);
    if (!st && out_keep) *out_keep = take_host(&b.host_out, &b.out, &b.host_copies[0]);
    if (spec->keep_grads)
        for (int g = 0; g < 3; g++)
            spec->keep_grads[g] =
                st ? NULL : take_host(&b.host_grad[g], &b.grad[g], &b.host_copies[1 + g]);
    free_buffers(&b);
    attn_weights_free(owned);
    return st;
}
