/* backend_cpu.c — the host CPU as a backend (attn_core.h): host memory, memcpy, a monotonic
 * clock. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "attn_core.h"

enum { HUGE_BYTES = 1 << 21 }; /* a huge page on x86-64 */

/* Exactly `bytes` long (so sanitizers catch overruns); bytes == 0 gives a valid 64-byte block.
 * From 2 MiB on, aligned to and advised onto huge pages: every tensor of a point, and the
 * harness's yardsticks, are measured on the same kind of pages. */
static void *cpu_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes >= HUGE_BYTES) {
        if (posix_memalign(&p, HUGE_BYTES, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, bytes, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
        return p;
    }
    return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
}

static void cpu_release(void *p) { free(p); }

static void cpu_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes) memcpy(dst, src, bytes);
}

static void cpu_sync(void) {}

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const attn_backend attn_backend_cpu = {.name = "cpu",
                                       .host_memory = true,
                                       .alloc = cpu_alloc,
                                       .release = cpu_release,
                                       .copy = cpu_copy,
                                       .sync = cpu_sync,
                                       .now_s = cpu_now_s};
