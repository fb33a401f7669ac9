/*
 * set_portable.c — the portable kernel set, the reference every other set is checked against and
 * completed from: its vector layer (vec_portable.h: one float, plain C), its blocking (set_body.h
 * says what each constant is: here scalar accumulators the compiler may keep in registers or
 * vectorise), and set_body.h, which compiles every body against them into the table
 * attn_kernels_portable. Compiled with this file's own flags only (attention/meson.build).
 */
#include "vec_portable.h"
#define VSET_ISA ATTN_ISA_PORTABLE

enum {
    TILE_MR = 4, /* tile: 4 rows × 4 columns */
    TILE_NR = 4,
    BWD_NB = 2,
    BWD_KG_NR = 4,
    DEC_QK = 4,
    DEC_PVV = 4,
    DEC_EOJ = 1,
    DEC_TR = 2,
    DEC_LJ = 12,
    DEC_PV_WIDE = 0,
};

#include "set_body.h"
