/* memory.h — aligned buffers and the process's peak resident set (Linux /proc). */
#ifndef BENCH_MEMORY_H
#define BENCH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Host memory for the harness's own buffers: the CPU backend's alloc (attn_backend_cpu,
 * attn_core.h: 64-byte aligned, exactly `bytes` long, huge-page advised from 2 MiB on), so that
 * yardsticks and tensors sit on the same kind of pages. NULL on failure; free with free(). */
void *bench_alloc(size_t bytes);
/* Make freed buffers leave the resident set (glibc: a fixed mmap threshold, so large blocks
 * are unmapped on free), so that one point's peak does not carry the last one's heap. */
void bench_memory_setup(void);
/* Return free heap to the system, then reset the peak RSS to the current RSS (writes 5 to
 * /proc/self/clear_refs); 0 on success. */
int bench_peak_rss_reset(void);
/* Peak RSS (VmHWM) and current RSS (VmRSS) in bytes, or -1 when unknown. */
int64_t bench_peak_rss_bytes(void);
int64_t bench_rss_bytes(void);
/* Bytes of physical memory, or 0 if unknown. */
uint64_t bench_physical_memory_bytes(void);
/* Bytes this process may still allocate: the least of the memory the kernel reports available
 * (MemAvailable in /proc/meminfo: free memory and caches it can drop), the room left under this
 * process's cgroup v2 limit (memory.max less memory.current) and under its address-space limit
 * (ulimit -v less VmSize); 0 when none is known. *what (may be NULL) names the one that binds:
 * "available", "left under the cgroup's memory.max", "left under ulimit -v". */
uint64_t bench_available_memory_bytes(const char **what);
/* Human-readable bytes ("12.0 MiB") into buf. */
const char *bench_format_bytes(double bytes, char *buf, size_t len);

#endif
