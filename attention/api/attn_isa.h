/*
 * attn_isa.h — the instruction sets the kernels are built for, and which one is in force.
 * The kernels exist in up to three sets (attention/kernels/): a portable C reference (every
 * platform), AVX2+FMA+F16C and AVX-512 (F/BW/VL/DQ; x86-64 builds with -Dsimd=true). One is chosen
 * at start-up: the best the CPU and OS support, or the one the environment variable ATTN_ISA
 * names (portable|avx2|avx512), or attn_isa_select() (the CLI's --isa). Nothing is compiled
 * for an ISA the whole program then assumes: one binary runs on any x86-64.
 * Select before any parallel region runs kernels (the set is a process-wide pointer).
 */
#ifndef ATTN_ISA_H
#define ATTN_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attn_core.h"

typedef enum attn_isa {
    ATTN_ISA_PORTABLE = 0,
    ATTN_ISA_AVX2,
    ATTN_ISA_AVX512,
    ATTN_ISA_COUNT
} attn_isa;

/* "portable", "avx2", "avx512". */
const char *attn_isa_name(attn_isa isa);
/* The ISA of that name (case as printed); false for any other text. */
bool attn_isa_parse(const char *name, attn_isa *out);
/* Built into this binary (the portable set always is). */
bool attn_isa_built(attn_isa isa);
/* Built in, and this CPU and OS run it (AVX state enabled by the OS: xgetbv). */
bool attn_isa_supported(attn_isa isa);
/* The best supported ISA. */
attn_isa attn_isa_best(void);
/* Put isa in force; ATTN_EINVAL with a one-line reason when it is not supported here. */
attn_status attn_isa_select(attn_isa isa, char *msg, size_t msg_len);
/* The ISA in force (first use: ATTN_ISA when set and valid, else the best). */
attn_isa attn_isa_current(void);
/* An execution context (attn_core.h) of `threads` threads on the set of `isa`, which must be
 * built and supported (attn_isa_supported); the set in force otherwise. */
attn_exec attn_exec_of(int threads, attn_isa isa);
/* The ISA of x's kernel set. */
attn_isa attn_exec_isa(const attn_exec *x);
/* ATTN_ISA read and checked: ATTN_OK with *out unchanged when unset; ATTN_EINVAL and a one-line
 * reason when it names no ISA or one this machine cannot run (the CLI refuses to start). */
attn_status attn_isa_from_env(attn_isa *out, char *msg, size_t msg_len);
/* The FMA peak yardstick's loop of isa's set (kernels/peak_body.h), for the harness: iters rounds
 * of attn_isa_peak_flops_per_iter(isa) flops over registers; returns a value that depends on every
 * chain. Runs on the calling thread; isa must be supported (else NaN, nothing run). */
float attn_isa_peak_loop(attn_isa isa, int64_t iters, float seed);
/* Flops of one round of that loop (0: isa not built). */
int64_t attn_isa_peak_flops_per_iter(attn_isa isa);
/* Does the CPU have AVX512_BF16 (vdpbf16ps)? The avx512 set uses it for bf16 dot products. */
bool attn_cpu_has_avx512bf16(void);

/* ---- the registry of kernel sets (isa.c): one row per ISA, the sets attention/meson.build
 * built (kernel_sets), each completed from the portable reference when first asked for. The sets'
 * contents: attention/kernels/kernel_set.h (internal to attention/ and tests/). ---- */

typedef struct attn_kernel_set attn_kernel_set;
/* The set of isa, completed, if built into this binary (NULL: not built), whether or not this CPU
 * runs it: tests compare sets. */
const attn_kernel_set *attn_ks_of(attn_isa isa);
/* The set of isa if built and this CPU and OS run it, else NULL: what an execution context picks
 * its set by. */
const attn_kernel_set *attn_kernel_set_for(attn_isa isa);
/* The best set this CPU runs (attn_isa_best's). */
const attn_kernel_set *attn_kernel_set_best(void);
/* Set each NULL slot of set to ref's (BLIS-style completion); returns how many were NULL. */
int attn_kernel_set_complete(attn_kernel_set *set, const attn_kernel_set *ref);
/* Slots of set that are NULL (0: complete). */
int attn_kernel_set_missing(const attn_kernel_set *set);
/* The set in force: ATTN_ISA or the best at first use, attn_isa_select's after. The default an
 * execution context is built with (attn_exec_init); code that runs kernels takes the set of its
 * context instead. */
const attn_kernel_set *attn_ks(void);

#endif
