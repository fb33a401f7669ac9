/*
 * isa.c — the registry of kernel sets (kernels/kernel_set.h) and which one is in force: one table
 * row per ISA (its name and whether this CPU runs it), the sets attention/meson.build built
 * (kernel_sets_built.h), each completed from the portable reference at registration; CPU
 * detection, ATTN_ISA, selection; and the kernels.h entry points that forward to the set in force.
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_isa.h"
#include "kernel_set.h"
#include "kernel_sets_built.h"
#include "kernels.h"

/* ---- CPU detection: whether this CPU and OS run each set ---- */

static bool cpu_runs_portable(void) { return true; }

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
static bool cpu_runs_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
}

static bool cpu_runs_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("fma") && cpu_has_f16c();
}

bool attn_cpu_has_avx512bf16(void)
{
    /* asked by every bf16 decode call: cpuid once (in a VM it traps, dear beside a small call) */
    static int known = -1; /* -1: not asked yet; racing threads store the same answer */
    int has = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (has < 0) {
        __builtin_cpu_init();
        has = cpu_runs_avx512() && __builtin_cpu_supports("avx512bf16");
        __atomic_store_n(&known, has, __ATOMIC_RELAXED);
    }
    return has;
}
#else
static bool cpu_runs_avx2(void) { return false; }
static bool cpu_runs_avx512(void) { return false; }
bool attn_cpu_has_avx512bf16(void) { return false; }
#endif

/* ---- the registry ---- */

/* One row per ISA this project knows (attn_isa.h's order: a later supported row is better): its
 * name, whether this CPU and OS run it. Its set is the table kernels/set_<name>.c defines, where
 * attention/meson.build built it. */
typedef struct ks_row {
    attn_isa isa;
    const char *name;
    bool (*cpu_runs)(void);
} ks_row;

static const ks_row registry[] = {
    {ATTN_ISA_PORTABLE, "portable", cpu_runs_portable},
    {ATTN_ISA_AVX2, "avx2", cpu_runs_avx2},
    {ATTN_ISA_AVX512, "avx512", cpu_runs_avx512},
};
_Static_assert(sizeof registry / sizeof *registry == ATTN_ISA_COUNT, "one row per attn_isa");

/* The sets built (kernel_sets_built.h), by name. */
#define KS_DECLARE(name) extern const attn_kernel_set attn_kernels_##name;
ATTN_KERNEL_SETS(KS_DECLARE)
#define KS_BUILT(name) {#name, &attn_kernels_##name},
static const struct {
    const char *name;
    const attn_kernel_set *set;
} built[] = {ATTN_KERNEL_SETS(KS_BUILT)};

/* The registered sets, completed (indexed by attn_isa; NULL: not built). */
static attn_kernel_set completed[ATTN_ISA_COUNT];
static const attn_kernel_set *registered[ATTN_ISA_COUNT];
static pthread_once_t registering = PTHREAD_ONCE_INIT;

/* The slots of a set: the pointers after its facts, up to its end (kernel_set.h). */
typedef void (*ks_slot)(void);
enum { KS_SLOTS_AT = offsetof(attn_kernel_set, math) };
enum { KS_SLOTS = (sizeof(attn_kernel_set) - KS_SLOTS_AT) / sizeof(ks_slot) };
_Static_assert((sizeof(attn_kernel_set) - KS_SLOTS_AT) % sizeof(ks_slot) == 0,
               "the slot groups end attn_kernel_set and hold function pointers only");

static ks_slot slot_at(const attn_kernel_set *set, int i)
{
    ks_slot f;
    memcpy(&f, (const char *)set + KS_SLOTS_AT + (size_t)i * sizeof f, sizeof f);
    return f;
}

int attn_kernel_set_complete(attn_kernel_set *set, const attn_kernel_set *ref)
{
    int filled = 0;
    for (int i = 0; i < KS_SLOTS; i++)
        if (!slot_at(set, i)) {
            const ks_slot f = slot_at(ref, i);
            memcpy((char *)set + KS_SLOTS_AT + (size_t)i * sizeof f, &f, sizeof f);
            filled++;
        }
    return filled;
}

int attn_kernel_set_missing(const attn_kernel_set *set)
{
    int missing = 0;
    for (int i = 0; i < KS_SLOTS; i++) missing += !slot_at(set, i);
    return missing;
}

/* Every built set into its row, completed from the portable one. A built set without a row, or
 * whose table names another ISA, is a build error: said, and the program stops. */
static void register_sets(void)
{
    const attn_kernel_set *ref = NULL;
    for (size_t b = 0; b < sizeof built / sizeof *built; b++)
        if (strcmp(built[b].name, "portable") == 0) ref = built[b].set;
    for (size_t b = 0; b < sizeof built / sizeof *built; b++) {
        int r = 0;
        while (r < ATTN_ISA_COUNT && strcmp(registry[r].name, built[b].name) != 0) r++;
        if (r == ATTN_ISA_COUNT || built[b].set->isa != registry[r].isa || !ref) {
            fprintf(stderr, "kernel set '%s': no row of its ISA in isa.c's registry\n",
                    built[b].name);
            abort();
        }
        completed[r] = *built[b].set;
        attn_kernel_set_complete(&completed[r], ref);
        registered[r] = &completed[r];
    }
}

const attn_kernel_set *attn_ks_of(attn_isa isa)
{
    if (isa < 0 || isa >= ATTN_ISA_COUNT) return NULL;
    pthread_once(&registering, register_sets);
    return registered[isa];
}

const char *attn_isa_name(attn_isa isa)
{
    return isa >= 0 && isa < ATTN_ISA_COUNT ? registry[isa].name : "?";
}

bool attn_isa_parse(const char *name, attn_isa *out)
{
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        if (name && strcmp(name, registry[i].name) == 0) {
            *out = registry[i].isa;
            return true;
        }
    return false;
}

bool attn_isa_built(attn_isa isa) { return attn_ks_of(isa) != NULL; }

bool attn_isa_supported(attn_isa isa) { return attn_isa_built(isa) && registry[isa].cpu_runs(); }

attn_isa attn_isa_best(void)
{
    for (int i = ATTN_ISA_COUNT - 1; i > 0; i--)
        if (attn_isa_supported((attn_isa)i)) return (attn_isa)i;
    return ATTN_ISA_PORTABLE;
}

const attn_kernel_set *attn_kernel_set_for(attn_isa isa)
{
    return attn_isa_supported(isa) ? attn_ks_of(isa) : NULL;
}

const attn_kernel_set *attn_kernel_set_best(void) { return attn_ks_of(attn_isa_best()); }

/* The set in force (NULL until first asked for: attn_ks). */
static const attn_kernel_set *in_force = NULL;

/* The names of the ISAs (only those built: built_only) into buf: "a, b, c" (last: " or c"). */
static const char *isa_list(char *buf, size_t len, bool built_only, const char *last)
{
    int n = 0, w = 0;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) n += !built_only || attn_isa_built((attn_isa)i);
    buf[0] = '\0';
    for (int i = 0, k = 0; i < ATTN_ISA_COUNT && w >= 0 && (size_t)w < len; i++) {
        if (built_only && !attn_isa_built((attn_isa)i)) continue;
        w += snprintf(buf + w, len - (size_t)w, "%s%s",
                      k == 0       ? ""
                      : k == n - 1 ? last
                                   : ", ",
                      attn_isa_name((attn_isa)i));
        k++;
    }
    return buf;
}

static attn_status refuse(attn_isa isa, char *msg, size_t msg_len)
{
    char list[128];
    if (!attn_isa_built(isa))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "ISA '%s' is not built into this binary (built: %s)", attn_isa_name(isa),
                         isa_list(list, sizeof list, true, ", "));
    return attn_fail(ATTN_EINVAL, msg, msg_len, "this CPU cannot run ISA '%s' (best here: %s)",
                     attn_isa_name(isa), attn_isa_name(attn_isa_best()));
}

attn_status attn_isa_select(attn_isa isa, char *msg, size_t msg_len)
{
    if (!attn_isa_supported(isa)) return refuse(isa, msg, msg_len);
    in_force = attn_ks_of(isa);
    return ATTN_OK;
}

attn_status attn_isa_from_env(attn_isa *out, char *msg, size_t msg_len)
{
    const char *e = getenv("ATTN_ISA");
    if (!e || !*e) return ATTN_OK;
    attn_isa isa;
    if (!attn_isa_parse(e, &isa)) {
        char list[128];
        return attn_fail(ATTN_EINVAL, msg, msg_len, "ATTN_ISA='%s' names no instruction set (%s)",
                         e, isa_list(list, sizeof list, false, " or "));
    }
    if (!attn_isa_supported(isa)) return refuse(isa, msg, msg_len);
    *out = isa;
    return ATTN_OK;
}

const attn_kernel_set *attn_ks(void)
{
    if (in_force) return in_force;
    attn_isa isa = attn_isa_best();
    char msg[ATTN_MSG_LEN];
    (void)attn_isa_from_env(&isa, msg, sizeof msg); /* invalid: the best (the CLI refuses it) */
    in_force = attn_ks_of(isa);
    return in_force;
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
    return k ? k->peak_flops_per_iter : 0;
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
