/* memory.c — aligned allocation and peak-RSS bookkeeping per grid point. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* The first number after key in the file at path ("MemAvailable:" in /proc/meminfo; "" for a
 * file holding one number), times unit; -1 when absent or not a number ("max"). */
static int64_t number_in(const char *path, const char *key, int64_t unit)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    const size_t len = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0) {
            if (sscanf(line + len, "%lld", &v) != 1) v = -1;
            break;
        }
    fclose(f);
    return v < 0 ? -1 : (int64_t)v * unit;
}

/* Room left under this process's cgroup v2 memory.max (from /proc/self/cgroup's "0::PATH"), or
 * -1 when there is no such limit. */
static int64_t cgroup_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char line[1024], dir[1200] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", strcmp(line + 3, "/") ? line + 3 : "");
            break;
        }
    fclose(f);
    if (!*dir) return -1;
    char path[1300];
    snprintf(path, sizeof path, "%s/memory.max", dir);
    const int64_t max = number_in(path, "", 1);
    snprintf(path, sizeof path, "%s/memory.current", dir);
    const int64_t used = number_in(path, "", 1);
    if (max < 0 || used < 0) return -1;
    return max > used ? max - used : 0;
}

uint64_t bench_available_memory_bytes(const char **what)
{
    struct {
        int64_t bytes;
        const char *what;
    } limits[3] = {{number_in("/proc/meminfo", "MemAvailable:", 1024), "available"},
                   {cgroup_room(), "left under the cgroup's memory.max"},
                   {-1, "left under ulimit -v"}};
    struct rlimit rl;
    const int64_t mapped = status_bytes("VmSize:");
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && mapped >= 0)
        limits[2].bytes = (int64_t)rl.rlim_cur > mapped ? (int64_t)rl.rlim_cur - mapped : 0;
    int best = -1;
    for (int i = 0; i < 3; i++)
        if (limits[i].bytes >= 0 && (best < 0 || limits[i].bytes < limits[best].bytes)) best = i;
    if (what) *what = best < 0 ? "unknown" : limits[best].what;
    return best < 0 ? 0 : (uint64_t)limits[best].bytes;
}

const char *bench_format_bytes(double bytes, char *buf, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}
