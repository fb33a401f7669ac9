/*
 * set_avx2.c — the avx2 kernel set: its vector layer (vec_avx2.h: 8 lanes, 16 registers), its
 * register blocking (set_body.h says what each constant is), and set_body.h, which compiles every
 * body against them into the table attn_kernels_avx2. Compiled with this file's own flags only
 * (attention/meson.build: kernel_sets).
 */
#include "vec_avx2.h"
#define VSET_ISA ATTN_ISA_AVX2

enum {
    TILE_MR = 6, /* tile: 6 rows × 2 vectors of accumulators (12 of 16 registers) */
    TILE_NR = 2,
    BWD_NB = 1, /* backward: 6 × 1 of p and of dS (12) */
    BWD_KG_NR = 2,
    DEC_QK = 2, /* decode, 4 rows in place: 4 × 2 score accumulators, 4 × 2 of p·v */
    DEC_PVV = 2,
    DEC_EOJ = 1,     /* decode, one row: one key parity of 8 vectors */
    DEC_TR = 2,      /* decode, rows in lanes: 2 rows × 4 vectors of p·v */
    DEC_LJ = 6,      /* and 6 keys × 2 vectors of rows of scores */
    DEC_PV_WIDE = 0, /* no 2 rows × 8 vectors p·v (16 accumulators: no registers left) */
};

#include "set_body.h"
