/* spec.c — the point-spec builder of run and sweep (spec.h). */
#include "spec.h"

/* The shape a dataset fixes (file), with its newest T queries (0: all); the kind must run with
 * the data's KV heads. */
static attn_status file_shape(const bench_point_spec *spec, attn_shape *s, int64_t T,
                              const char *where, const char *hint, char *msg, size_t msg_len)
{
    s->T = T;
    if (spec->dataset->shape(&spec->dataset_params, s, msg, msg_len)) return ATTN_EINVAL;
    const int64_t Hkv = attn_kind_kv_heads(spec->ops, s->H, s->Hkv);
    if (Hkv != s->Hkv)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s has %lld KV heads but kind %s runs with "
                         "%lld%s",
                         where, (long long)s->Hkv, spec->ops->name, (long long)Hkv, hint);
    return ATTN_OK;
}

attn_status bench_spec_build(bench_point_spec *spec, const bench_shape_req *req,
                             const bench_measure_cfg *mc, const char *where, const char *hint,
                             char *msg, size_t msg_len)
{
    attn_shape *s = &spec->shape;
    *s = attn_shape_init(req->batch, req->heads,
                         attn_kind_kv_heads(spec->ops, req->heads, req->kv_heads),
                         req->q_len > 0 ? req->q_len : req->n,
                         req->kv_len > 0 ? req->kv_len : req->n, req->head_dim, req->causal);
    if (spec->dataset->shape &&
        file_shape(spec, s, req->q_len > 0 ? req->q_len : 0, where, hint, msg, msg_len))
        return ATTN_EINVAL;
    s->decode = req->decode;
    s->dtype = req->dtype;
    /* the shape first: a kind's resolve may divide by its sizes (H / Hkv) */
    if (attn_shape_check(s, msg, msg_len) != ATTN_OK) return ATTN_EINVAL;
    attn_params_resolve(spec->ops, s, &spec->params);
    spec->seed = mc->seed;
    spec->timing = mc->timing;
    spec->accuracy_rows = mc->accuracy_rows;
    spec->allow_nonfinite = mc->allow_nonfinite;
    spec->exec = attn_exec_of(mc->threads, mc->isa); /* --threads, --isa */
    return ATTN_OK;
}
