/* registry.c — the list of kinds (generated from attention/meson.build) and its validation. */
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "registry_kinds.h"

#define ATTN_DECLARE(name) extern const attn_ops attn_kind_##name;
ATTN_KINDS(ATTN_DECLARE)
#undef ATTN_DECLARE

#define ATTN_ADDRESS(name) &attn_kind_##name,
static const attn_ops *const kinds[] = {ATTN_KINDS(ATTN_ADDRESS)};
#undef ATTN_ADDRESS

int attn_kind_count(void) { return (int)(sizeof kinds / sizeof kinds[0]); }

const attn_ops *attn_kind_at(int index)
{
    return index >= 0 && index < attn_kind_count() ? kinds[index] : NULL;
}

const attn_ops *attn_kind_find(const char *name)
{
    for (int n = 0; n < attn_kind_count(); n++)
        if (strcmp(kinds[n]->name, name) == 0) return kinds[n];
    return NULL;
}

/* Weight names never taken: the tensors of --input/--output files. */
static const char *const reserved_tensors[] = {"q", "k", "v", "o", "do", "dq", "dk", "dv"};

/* Both weight slots or neither; at a sample shape, valid unique names that are not a tensor's,
 * summaries, ranks 1..4 and dims >= 1. */
static attn_status validate_weights(const attn_ops *k, char *msg, size_t msg_len)
{
    if (!k->weights) return ATTN_OK;
    if (!k->weights->list || !k->weights->draw)
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': its weights table needs both list and draw", k->name);
    const attn_shape s = attn_shape_init(1, 4, 2, 16, 24, 8, false);
    const attn_params p = attn_params_defaults(&k->params);
    attn_weight w[ATTN_MAX_WEIGHTS];
    const int n = k->weights->list(k, &s, &p, w);
    if (n < 0 || n > ATTN_MAX_WEIGHTS)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "kind '%s': %d weights (at most %d)", k->name, n,
                         ATTN_MAX_WEIGHTS);
    for (int i = 0; i < n; i++) {
        bool ok = attn_valid_name(w[i].name) && w[i].summary && w[i].rank >= 1 && w[i].rank <= 4;
        for (int d = 0; ok && d < w[i].rank; d++) ok = w[i].dims[d] >= 1;
        for (size_t r = 0; ok && r < sizeof reserved_tensors / sizeof *reserved_tensors; r++)
            ok = strcmp(w[i].name, reserved_tensors[r]) != 0;
        for (int j = 0; ok && j < i; j++) ok = strcmp(w[i].name, w[j].name) != 0;
        if (!ok)
            return attn_fail(ATTN_EFAIL, msg, msg_len,
                             "kind '%s': weight %d ('%s') needs a unique [a-z0-9_] name that is "
                             "not a tensor's (q, k, v, o, do, dq, dk, dv), a summary, rank 1..4 "
                             "and dims >= 1",
                             k->name, i, w[i].name ? w[i].name : "");
    }
    return ATTN_OK;
}

attn_status attn_kind_validate(const attn_ops *k, char *msg, size_t msg_len)
{
    const char *name = k->name ? k->name : "(unnamed)";
    if (!attn_valid_name(k->name)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len, "kind '%s': name must be non-empty [a-z0-9_]",
                         name);
    }
    if (!k->summary || !k->check || !k->workspace_bytes || !k->flops || !k->bytes || !k->forward) {
        return attn_fail(
            ATTN_EFAIL, msg, msg_len,
            "kind '%s': summary, check, workspace_bytes, flops, bytes and forward are required",
            name);
    }
    if ((k->allows == NULL) == (k->reference == NULL)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': set exactly one of allows and reference", name);
    }
    if (k->decode && !(k->decode->state_bytes && k->decode->prepare && k->decode->step)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': its decode table needs state_bytes, prepare and step", name);
    }
    if (k->distributed && !(k->distributed->gather && k->distributed->stats)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': its distributed table needs gather (its rows to rank 0) and "
                         "stats",
                         name);
    }
    if (k->train && (!k->train->backward || !k->train->workspace_bytes ||
                     (k->train->saved_bytes == NULL) != (k->train->forward == NULL))) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': its train table needs backward and workspace_bytes, and "
                         "saved_bytes with forward or neither",
                         name);
    }
    if (k->params.owner == NULL || strcmp(k->params.owner, k->name) != 0) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': its parameter table belongs to '%s' (ATTN_PARAM_TABLE(\"%s\", "
                         "...))",
                         name, k->params.owner ? k->params.owner : "nobody", name);
    }
    char what[96];
    snprintf(what, sizeof what, "kind '%s'", name);
    if (attn_param_table_validate(&k->params, what, msg, msg_len) != ATTN_OK) return ATTN_EFAIL;
    return validate_weights(k, msg, msg_len);
}

int64_t attn_kind_kv_heads(const attn_ops *ops, int64_t H, int64_t requested)
{
    if (ops->kv_heads) return ops->kv_heads(ops, H, requested);
    return requested > 0 ? requested : H;
}

attn_status attn_registry_validate(char *msg, size_t msg_len)
{
    for (int n = 0; n < attn_kind_count(); n++) {
        if (attn_kind_validate(kinds[n], msg, msg_len) != ATTN_OK) return ATTN_EFAIL;
        for (int m = 0; m < n; m++)
            if (strcmp(kinds[m]->name, kinds[n]->name) == 0) {
                return attn_fail(ATTN_EFAIL, msg, msg_len, "kind '%s' is registered twice",
                                 kinds[n]->name);
            }
    }
    return ATTN_OK;
}
