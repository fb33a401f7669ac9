/* cells.c — what a kind computes, cell by cell (attention.h): its engine's listing, or its mask. */
#include <string.h>

#include "attention.h"

attn_cells_source attn_kind_cells_source(const attn_ops *ops)
{
    if (ops->cells) return ATTN_CELLS_LISTED;
    return ops->allows ? ATTN_CELLS_MASK : ATTN_CELLS_NONE;
}

const char *attn_cells_source_name(attn_cells_source src)
{
    switch (src) {
    case ATTN_CELLS_LISTED: return "as its engine lists them";
    case ATTN_CELLS_MASK: return "as its mask predicate allows them";
    case ATTN_CELLS_NONE: break;
    }
    return "no computed set: defined by its own reference, not a mask";
}

attn_status attn_kind_cells(const attn_ops *ops, const attn_shape *s, const attn_params *p,
                            int64_t h, uint8_t *cells, char *msg, size_t msg_len)
{
    const size_t n = (size_t)(s->T * s->S);
    memset(cells, 0, n);
    switch (attn_kind_cells_source(ops)) {
    case ATTN_CELLS_LISTED:
        if (ops->cells(ops, s, p, h, cells) != ATTN_OK)
            return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory listing its scores",
                             ops->name);
        break;
    case ATTN_CELLS_MASK:
        for (int64_t i = 0; i < s->T; i++)
            for (int64_t j = 0; j < s->S; j++)
                cells[i * s->S + j] = ops->allows(ops, s, p, h, i, j);
        break;
    case ATTN_CELLS_NONE: break;
    }
    return ATTN_OK;
}
