/*
 * set_avx2.c — the avx2 kernel set: set_body.h against vec_avx2.h, compiled with this file's own
 * flags only (attention/meson.build).
 */
#include "vec_avx2.h"
#define VSET_ISA ATTN_ISA_AVX2

#include "set_body.h"
