/*
 * isa.c — which kernel set (kernels/kernel_set.h) is in force: CPU detection, ATTN_ISA, selection;
 * and the kernels.h entry points that forward to the set in force.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_isa.h"
#include "kernel_set.h"
#include "kernels.h"

static const char *const isa_names[ATTN_ISA_COUNT] = {"portable", "avx2", "avx512"};

const char *attn_isa_name(attn_isa isa)
{
    return isa >= 0 && isa < ATTN_ISA_COUNT ? isa_names[isa] : "?";
}

bool attn_isa_parse(const char *name, attn_isa *out)
{
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        if (name && strcmp(name, isa_names[i]) == 0) {
            *out = (attn_isa)i;
            return true;
        }
    return false;
}

const attn_kernel_set *attn_ks_of(attn_isa isa)
{
    switch (isa) {
    case ATTN_ISA_PORTABLE: return &attn_kernels_portable;
#ifdef ATTN_HAVE_AVX2
    case ATTN_ISA_AVX2: return &attn_kernels_avx2;
#endif
#ifdef ATTN_HAVE_AVX512
    case ATTN_ISA_AVX512: return &attn_kernels_avx512;
#endif
    default: return NULL;
    }
}

bool attn_isa_built(attn_isa isa) { return attn_ks_of(isa) != NULL; }

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* F16C (the AVX2 and AVX-512 sets convert f16 with vcvtph2ps): CPUID leaf 1, ECX bit 29 (not a
 * name every compiler's __builtin_cpu_supports knows). */
static bool cpu_has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
}

/* __builtin_cpu_supports checks the OS's XSAVE state too (AVX, AVX-512 registers enabled). */
static bool cpu_runs(attn_isa isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case ATTN_ISA_PORTABLE: return true;
    case ATTN_ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case ATTN_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("fma") && cpu_has_f16c();
    default: return false;
    }
}

bool attn_cpu_has_avx512bf16(void)
{
    /* asked by every bf16 decode call: cpuid once (in a VM it traps, ~9 % of a small call) */
    static int known = -1; /* -1: not asked yet; racing threads store the same answer */
    int has = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (has < 0) {
        __builtin_cpu_init();
        has = cpu_runs(ATTN_ISA_AVX512) && __builtin_cpu_supports("avx512bf16");
        __atomic_store_n(&known, has, __ATOMIC_RELAXED);
    }
    return has;
}
#else
static bool cpu_runs(attn_isa isa) { return isa == ATTN_ISA_PORTABLE; }
bool attn_cpu_has_avx512bf16(void) { return false; }
#endif

bool attn_isa_supported(attn_isa isa) { return attn_isa_built(isa) && cpu_runs(isa); }

attn_isa attn_isa_best(void)
{
    for (int i = ATTN_ISA_COUNT - 1; i > 0; i--)
        if (attn_isa_supported((attn_isa)i)) return (attn_isa)i;
    return ATTN_ISA_PORTABLE;
}

const attn_kernel_set *attn_ks_in_force = NULL;

static attn_status refuse(attn_isa isa, char *msg, size_t msg_len)
{
    if (!attn_isa_built(isa))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "ISA '%s' is not built into this binary (built: portable%s%s)",
                         attn_isa_name(isa), attn_isa_built(ATTN_ISA_AVX2) ? ", avx2" : "",
                         attn_isa_built(ATTN_ISA_AVX512) ? ", avx512" : "");
    return attn_fail(ATTN_EINVAL, msg, msg_len, "this CPU cannot run ISA '%s' (best here: %s)",
                     attn_isa_name(isa), attn_isa_name(attn_isa_best()));
}

attn_status attn_isa_select(attn_isa isa, char *msg, size_t msg_len)
{
    if (!attn_isa_supported(isa)) return refuse(isa, msg, msg_len);
    attn_ks_in_force = attn_ks_of(isa);
    return ATTN_OK;
}

attn_status attn_isa_from_env(attn_isa *out, char *msg, size_t msg_len)
{
    const char *e = getenv("ATTN_ISA");
    if (!e || !*e) return ATTN_OK;
    attn_isa isa;
    if (!attn_isa_parse(e, &isa))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "ATTN_ISA='%s' names no instruction set (portable, avx2 or avx512)", e);
    if (!attn_isa_supported(isa)) return refuse(isa, msg, msg_len);
    *out = isa;
    return ATTN_OK;
}

const attn_kernel_set *attn_ks_init(void)
{
    attn_isa isa = attn_isa_best();
    char msg[ATTN_MSG_LEN];
    (void)attn_isa_from_env(&isa, msg, sizeof msg); /* invalid: the best (the CLI refuses it) */
    attn_ks_in_force = attn_ks_of(isa);
    return attn_ks_in_force;
}

attn_isa attn_isa_current(void) { return attn_ks()->isa; }

float attn_isa_peak_loop(attn_isa isa, int64_t iters, float seed)
{
    if (!attn_isa_supported(isa)) return NAN;
    return attn_ks_of(isa)->peak.fma_loop(iters, seed);
}

int64_t attn_isa_peak_flops_per_iter(attn_isa isa)
{
    const attn_kernel_set *k = attn_ks_of(isa);
    return k ? k->peak.flops_per_iter : 0;
}

/* ---- kernels.h entry points ---- */

float attn_vmax(const attn_kernel_set *ks, const float *x, int64_t n)
{
    return ks->math.vmax(x, n);
}
float attn_vexp_sum(const attn_kernel_set *ks, float *x, int64_t n, float shift)
{
    return ks->math.vexp_sum(x, n, shift);
}
void attn_vsoftcap(const attn_kernel_set *ks, float *x, int64_t n, float cap)
{
    ks->math.vsoftcap(x, n, cap);
}
float attn_vdot(const attn_kernel_set *ks, const float *a, const float *b, int64_t n)
{
    return ks->math.vdot(a, b, n);
}
