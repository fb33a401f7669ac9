/*
 * set_avx512.c — the avx512 kernel set (kernel_set.h): the bodies compiled against vec_avx512.h,
 * with this file's own compiler flags only (attention/meson.build).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_set.h"
#include "vec_avx512.h"

#include "additive_body.h"
#include "linear_body.h"
#include "math_body.h"
#include "peak_body.h"
#include "tile_body.h"

/* after math_body.h: they use its loops */
#include "convert_body.h"
#include "decode_body.h"
#include "reformer_body.h"

const attn_kernel_set attn_kernels_avx512 = {
    .isa = ATTN_ISA_AVX512,
    .lanes = VW,
    .math = MATH_SLOTS,
    .peak = PEAK_SLOTS,
    .tile = TILE_SLOTS,
    .convert = CONVERT_SLOTS,
    .decode = DECODE_SLOTS,
    .linear = LINEAR_SLOTS,
    .additive = ADDITIVE_SLOTS,
    .reformer = REFORMER_SLOTS,
};
