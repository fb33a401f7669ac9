/*
 * set_body.h — one kernel set (kernel_set.h): every body compiled against the vector layer the
 * including set_<isa>.c chose (VSET, VW), and the table of their slots, attn_kernels_<VSET>.
 * Add a body here (and its slot group to kernel_set.h): every set has it.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_set.h"

#include "additive_body.h"
#include "linear_body.h"
#include "math_body.h"
#include "peak_body.h"
#include "tile_body.h"

/* after math_body.h and tile_body.h: they use their loops */
#include "backward_body.h"
#include "convert_body.h"
#include "decode_body.h"
#include "reformer_body.h"

#define SET_CAT2(a, b) a##b
#define SET_CAT(a, b) SET_CAT2(a, b)

const attn_kernel_set SET_CAT(attn_kernels_, VSET) = {
    .isa = VSET_ISA,
    .lanes = VW,
    .math = MATH_SLOTS,
    .peak = PEAK_SLOTS,
    .tile = TILE_SLOTS,
    .convert = CONVERT_SLOTS,
    .decode = DECODE_SLOTS,
    .linear = LINEAR_SLOTS,
    .additive = ADDITIVE_SLOTS,
    .reformer = REFORMER_SLOTS,
    .backward = BACKWARD_SLOTS,
};
