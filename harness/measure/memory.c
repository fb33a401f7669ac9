/* memory.c — aligned allocation and peak-RSS bookkeeping per grid point. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn_core.h"
#include "memory.h"

void *bench_alloc(size_t bytes) { return attn_backend_cpu.alloc(bytes); }

void bench_memory_setup(void) { mallopt(M_MMAP_THRESHOLD, 256 * 1024); }

int bench_peak_rss_reset(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* A "Vm...:  N kB" line of /proc/self/status, in bytes. */
static int64_t status_bytes(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long kib = -1;
    size_t len = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0 && sscanf(line + len, "%lld", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : (int64_t)kib * 1024;
}

int64_t bench_peak_rss_bytes(void) { return status_bytes("VmHWM:"); }
int64_t bench_rss_bytes(void) { return status_bytes("VmRSS:"); }

uint64_t bench_physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

const char *bench_format_bytes(double bytes, char *buf, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}
