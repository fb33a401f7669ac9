/*
 * set_portable.c — the portable kernel set: set_body.h against vec_portable.h, compiled with this
 * file's own flags only (attention/meson.build).
 */
#include "vec_portable.h"
#define VSET_ISA ATTN_ISA_PORTABLE

#include "set_body.h"
