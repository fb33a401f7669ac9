/*
 * set_body.h — one kernel set (kernel_set.h): every body compiled against the vector layer and the
 * register blocking the including set_<isa>.c chose, and the table of their slots,
 * attn_kernels_<VSET>. Add a body here (and its slot group to kernel_set.h): every set has it.
 * The set file defines, before including this:
 *   the vector layer (vec_<isa>.h: vf, VW, VSET and the primitives; vec_generic.h)
 *   VSET_ISA      its attn_isa
 *   TILE_MR, TILE_NR  the tile micro-kernels' register block: rows × vectors of columns
 *                 (tile_body.h; TILE_NR 1 to 4)
 *   BWD_NB        vectors of keys per block of the backward's fused score pass (backward_body.h)
 *   BWD_KG_NR     vectors of D per block of its key gradients
 *   DEC_QK, DEC_PVV  decode's four-row forms: keys per score tile, vectors of D per p·v step
 *   DEC_EOJ       decode's one-row p·v: key parities summed apart (8 vectors each)
 *   DEC_TR, DEC_LJ  decode's rows-in-lanes path: rows per p·v tile (× 4 vectors), keys per score
 *                 tile (× 2 vectors of rows)
 *   DEC_PV_WIDE   1: decode's four-row f32 p·v as 2 rows × 8 vectors where D % (8·VW) == 0
 * (accumulators: the products of the pairs, which must fit the layer's registers with room for
 * the operands).
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

/* after tile_body.h: they use its micro-kernels */
#include "tile_attend_body.h"
#include "tile_lanes_body.h"
#include "tile_own_body.h"

/* after math_body.h and tile_body.h: they use their loops */
#include "backward_body.h"
#include "convert_body.h"
#include "decode_body.h"
#include "reformer_body.h"

/* after convert_body.h and decode_body.h: the traits table of their per-dtype forms, then what
 * reaches them through it */
#include "dtype_body.h"

#include "decode_chunk_body.h"

#define SET_CAT2(a, b) a##b
#define SET_CAT(a, b) SET_CAT2(a, b)

/* the set's table (isa.c registers it, by name, from kernel_sets_built.h) */
extern const attn_kernel_set SET_CAT(attn_kernels_, VSET);
const attn_kernel_set SET_CAT(attn_kernels_, VSET) = {
    .isa = VSET_ISA,
    .lanes = VW,
    .tile_rows = TILE_MR,
    .peak_flops_per_iter = 2 * VW * PEAK_CHAINS,
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
