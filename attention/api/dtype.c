/*
 * dtype.c — the storage dtypes of q, k, v (attn_dtype, attn_core.h): names, sizes, and the
 * whole-tensor conversions through the kernel set in force (kernels/convert_body.h; bit-exact
 * against the scalar rules of kernels/half.h in every set). O(n), no scratch, one thread.
 */
#include <string.h>

#include "attn_core.h"
#include "kernel_set.h"

static const char *const dtype_names[ATTN_DTYPE_COUNT] = {"f32", "bf16", "f16"};

const char *attn_dtype_name(attn_dtype t)
{
    return t >= 0 && t < ATTN_DTYPE_COUNT ? dtype_names[t] : "?";
}

bool attn_dtype_parse(const char *name, attn_dtype *out)
{
    for (int i = 0; i < ATTN_DTYPE_COUNT; i++)
        if (name && strcmp(name, dtype_names[i]) == 0) {
            *out = (attn_dtype)i;
            return true;
        }
    return false;
}

size_t attn_dtype_size(attn_dtype t) { return t == ATTN_F32 ? 4 : 2; }

void attn_dtype_from_f32(attn_dtype t, const float *src, void *dst, int64_t n)
{
    attn_ks()->convert.from_f32((int)t, src, dst, n);
}

void attn_dtype_to_f32(attn_dtype t, const void *src, float *dst, int64_t n)
{
    attn_ks()->convert.to_f32((int)t, src, dst, n);
}
