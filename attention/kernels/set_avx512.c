/*
 * set_avx512.c — the avx512 kernel set: its vector layer (vec_avx512.h: 16 lanes, 32 registers),
 * its register blocking (set_body.h says what each constant is), and set_body.h, which compiles
 * every body against them into the table attn_kernels_avx512. Compiled with this file's own
 * flags only (attention/meson.build: kernel_sets).
 */
#include "vec_avx512.h"
#define VSET_ISA ATTN_ISA_AVX512

enum {
    TILE_MR = 6, /* tile: 6 rows × 4 vectors of accumulators (24 of 32 registers) */
    TILE_NR = 4,
    BWD_NB = 2, /* backward: 6 × 2 of p and of dS (24) */
    BWD_KG_NR = 4,
    DEC_QK = 4, /* decode, 4 rows in place: 4 × 4 score accumulators, 4 × 4 of p·v */
    DEC_PVV = 4,
    DEC_EOJ = 2,     /* decode, one row: two key parities of 8 vectors (16 chains) */
    DEC_TR = 4,      /* decode, rows in lanes: 4 rows × 4 vectors of p·v */
    DEC_LJ = 12,     /* and 12 keys × 2 vectors of rows of scores */
    DEC_PV_WIDE = 1, /* decode, 4 rows in place, f32: p·v by 2 rows × 8 vectors (D % 128 == 0) */
};

#include "set_body.h"
