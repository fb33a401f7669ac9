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
    if (!(k->state_bytes && k->prepare && k->decode) &&
        (k->state_bytes || k->prepare || k->decode)) {
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "kind '%s': set all of state_bytes, prepare and decode, or none", name);
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
    return ATTN_OK;
}

int64_t attn_kind_kv_heads(const attn_ops *ops, int64_t H, int64_t requested)
{
    if (ops->kv_heads) return ops->kv_heads(H, requested);
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
