/*
 * set_avx512.c — the avx512 kernel set: set_body.h against vec_avx512.h, compiled with this file's
 * own flags only (attention/meson.build).
 */
#include "vec_avx512.h"
#define VSET_ISA ATTN_ISA_AVX512

#include "set_body.h"
