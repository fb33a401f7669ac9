/* blas_core.c — OpenBLAS on CPUs newer than it knows (blas_core.h).
 * Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) chooses its kernels from the CPU *model* when it
 * loads. On a model it does not know (seen: Intel Xeon family 6 model 207, Emerald Rapids) it
 * falls back to "Prescott", SSE3 kernels that run sgemm at a fraction of what the CPU's vector
 * units allow, so the sgemm yardstick and every kind that calls BLAS would measure a crippled
 * library: bench then asks for the core the CPU's features run (SkylakeX, Haswell). OpenBLAS
 * reads OPENBLAS_CORETYPE only while it loads, hence the re-execution; a user's own
 * OPENBLAS_CORETYPE is always left alone. */
#include <cblas.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "blas_core.h"

#define CHOSEN_MARK "ATTNBENCH_OPENBLAS_CORE_CHOSEN" /* set in the re-executed environment */

/* The OpenBLAS core for this CPU's features, or NULL (not x86-64, or nothing better). */
static const char *core_for_features(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void bench_blas_core_select(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE")) return; /* the user's choice, or already re-executed */
    const char *core = openblas_get_corename();
    if (!core || strcmp(core, "Prescott") != 0) return; /* OpenBLAS knows this CPU */
    const char *better = core_for_features();
    if (!better) return;
    if (setenv("OPENBLAS_CORETYPE", better, 1) != 0 || setenv(CHOSEN_MARK, "1", 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* execv failed: run on, with the generic kernels */
    unsetenv(CHOSEN_MARK);
}

/* Whether an OpenBLAS 0.3.21 core runs AVX-512 kernels (its names, any case). */
static bool core_has_avx512(const char *core)
{
    const char *wide[] = {"skylakex", "cooperlake", "sapphirerapids"};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (strcasecmp(core, wide[i]) == 0) return true;
    return false;
}

const char *bench_blas_core_note(void)
{
    if (getenv(CHOSEN_MARK)) return ", set by bench";
    const char *set = getenv("OPENBLAS_CORETYPE"), *core = openblas_get_corename(),
               *features = core_for_features();
    /* a user's OPENBLAS_CORETYPE without AVX-512 on a CPU with it (seen: Haswell exported by a
     * machine's environment on an AMD Zen 5, where OpenBLAS itself picks Cooperlake) is kept,
     * but its sgemm runs on half-width kernels: say so beside the core's name */
    if (set && core && features && strcmp(features, "SkylakeX") == 0 && !core_has_avx512(core))
        return ", OPENBLAS_CORETYPE: no AVX-512"; /* record.h: 128 bytes in all */
    return "";
}
