/* machine.c — host, CPU, build and library facts; the OpenBLAS sgemm peak measurement. */
#include <cblas.h>
#include <hdf5.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "attn_isa.h"
#include "blas_core.h"
#include "machine.h"
#include "memory.h"
#include "stats.h"
#include "version.h"

int bench_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

uint64_t bench_llc_bytes(void)
{
    uint64_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[128], type[32] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        const bool typed = fscanf(f, "%31s", type) == 1;
        fclose(f);
        if (!typed || strcmp(type, "Instruction") == 0) continue;
        int level = 0;
        unsigned long long kib = 0;
        char unit = 'K';
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu%c", &kib, &unit) < 1) kib = 0;
            fclose(f);
        }
        const uint64_t bytes = (uint64_t)kib * (unit == 'M' ? 1 << 20 : unit == 'K' ? 1 << 10 : 1);
        if (level > best_level && bytes > 0) best_level = level, best = bytes;
    }
    if (best) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) return (uint64_t)l3;
#endif
    return 0;
}

size_t bench_bandwidth_bytes(uint64_t llc, uint64_t available)
{
    const uint64_t mib = 1 << 20;
    if (llc == 0) llc = 32 * mib;
    uint64_t bytes = 8 * llc;
    if (bytes < 64 * mib) bytes = 64 * mib;
    if (bytes > 1024 * mib) bytes = 1024 * mib;
    if (available > 0 && bytes > available / 8) bytes = available / 8;
    if (bytes < 2 * llc) bytes = 2 * llc;
    bytes &= ~(uint64_t)4095;
    return bytes > SIZE_MAX ? SIZE_MAX & ~(size_t)4095 : (size_t)bytes;
}

int bench_address_space_check(char *msg, size_t msg_len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
    const uint64_t mib = 1 << 20;
    /* the yardstick runs OpenBLAS on as many threads as the forwards' OpenMP (default: CPUs) */
    uint64_t threads = (uint64_t)bench_cpu_count();
    if ((uint64_t)openblas_get_num_threads() > threads)
        threads = (uint64_t)openblas_get_num_threads();
    /* per thread: OpenBLAS's buffer, a malloc arena (64 MiB), a stack; then the libraries and
     * the main heap (measured on 2 threads: a run hangs at 400 MB, runs at 500 MB) */
    const uint64_t need = threads * 256 * mib + 192 * mib;
    if ((uint64_t)rl.rlim_cur >= need) return 0;
    snprintf(msg, msg_len,
             "the address-space limit (ulimit -v %llu KiB) is below the %llu MiB bench needs on "
             "%llu threads: OpenBLAS reserves 128 MiB per thread and waits forever when it "
             "cannot; raise or remove the limit",
             (unsigned long long)(rl.rlim_cur / 1024), (unsigned long long)(need / mib),
             (unsigned long long)threads);
    return -1;
}

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *c = strchr(line, ':');
        if (!c) continue;
        c++;
        while (*c == ' ' || *c == '\t') c++;
        snprintf(buf, len, "%.*s", (int)strcspn(c, "\n"), c);
        break;
    }
    fclose(f);
}

void bench_machine_facts(bench_run *run)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(run->started_at, sizeof run->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(run->host, sizeof run->host) != 0) snprintf(run->host, sizeof run->host, "?");
    run->host[sizeof run->host - 1] = '\0';
    cpu_model(run->cpu_model, sizeof run->cpu_model);
    snprintf(run->git_commit, sizeof run->git_commit, "%s", BENCH_GIT_COMMIT);
    char sets[48] = ""; /* the kernel sets built in (attn_isa.h), chosen at run time */
    for (int i = 0, w = 0; i < ATTN_ISA_COUNT && w < (int)sizeof sets; i++)
        if (attn_isa_built((attn_isa)i))
            w += snprintf(sets + w, sizeof sets - (size_t)w, "%s%s", w ? "+" : "",
                          attn_isa_name((attn_isa)i));
#ifdef __OPTIMIZE__
    const char *opt = "optimized";
#else
    const char *opt = "unoptimized";
#endif
    snprintf(run->build, sizeof run->build, "gcc %s, %s, kernel sets %s", __VERSION__, opt, sets);
    snprintf(run->openblas_config, sizeof run->openblas_config, "%s (core %s%s)",
             openblas_get_config(), openblas_get_corename(), bench_blas_core_note());
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(run->hdf5_version, sizeof run->hdf5_version, "%u.%u.%u", maj, min, rel);
}

double bench_sgemm_gflops(int threads, int n, int reps)
{
    size_t bytes = (size_t)n * (size_t)n * sizeof(float);
    float *a = bench_alloc(bytes), *b = bench_alloc(bytes), *c = bench_alloc(bytes);
    double gflops = NAN;
    if (a && b && c) {
        for (size_t e = 0; e < (size_t)n * (size_t)n; e++) {
            a[e] = (float)((e * 7) % 13) / 13.0f - 0.5f;
            b[e] = (float)((e * 5) % 11) / 11.0f - 0.5f;
        }
        attn_blas_threads(threads);
        double *t = malloc((size_t)reps * sizeof *t);
        if (t) {
            for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
                double t0 = bench_now_s();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
                            0.0f, c, n);
                if (r >= 0) t[r] = bench_now_s() - t0;
            }
            gflops = 2.0 * n * (double)n * n / bench_stats_of(t, reps).median / 1e9;
            free(t);
        }
        attn_blas_threads(1);
        /* OpenBLAS workers spin for a while after their last call before they sleep; let them,
         * or the first forward after this measurement shares its cores with them. */
        struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    free(a);
    free(b);
    free(c);
    return gflops;
}

/* The read-bandwidth yardstick: the best plain read of a large array, a sum of every float of
 * `bytes` (first touched in parallel, then read once per repetition: no reuse). Each thread reads
 * its contiguous share (whole 64-byte lines of 16 floats; the last thread also the tail) as
 * BW_STREAMS equal parts side by side, two lines of each part in turn: one sequential stream per
 * thread keeps too few misses in flight on some cores to reach what memory gives, while a kernel
 * reading several streams at once (decode: K and V) gets more, so the yardstick reads several
 * too. Plain C (no SIMD flags, no prefetch hints):
 * 32 running sums (two lines' worth: a loop compilers vectorise), so the adds never wait long.
 * The threads' sums are added in thread order (deterministic); median of reps after one warm-up. */
double bench_mem_bandwidth_gbs(int threads, size_t bytes, int reps)
{
    enum { LINE = 16, BW_STREAMS = 8 };
    const size_t n = bytes / sizeof(float), lines = n / LINE;
    float *a = bench_alloc(n * sizeof(float));
    double *t = malloc((size_t)reps * sizeof *t);
    float *part = calloc((size_t)(threads > 0 ? threads : 1), sizeof *part);
    double gbs = NAN;
    if (a && t && part && lines >= (size_t)BW_STREAMS) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t e = 0; e < n; e++) a[e] = (float)(e & 1023) * 1e-3f; /* first touch too */
        volatile float sink = 0;
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            double t0 = bench_now_s();
#pragma omp parallel num_threads(threads)
            {
                const size_t nt = (size_t)omp_get_num_threads(), it = (size_t)omp_get_thread_num();
                const size_t l0 = lines * it / nt, l1 = lines * (it + 1) / nt;
                /* lines per stream, even: each visit reads two (128 bytes) */
                const size_t per = (l1 - l0) / BW_STREAMS / 2 * 2;
                float acc[2 * LINE] = {0};
                const float *x = a + l0 * LINE;
                for (size_t c = 0; c < per * LINE; c += 2 * LINE)
                    for (size_t st = 0; st < BW_STREAMS; st++) {
                        const float *y = x + st * per * LINE + c;
                        for (int e = 0; e < 2 * LINE; e++) acc[e] += y[e];
                    }
                /* the lines left over, and the last thread the floats past the last line */
                const size_t rest = it + 1 == nt ? n : l1 * LINE;
                for (size_t e = (l0 + BW_STREAMS * per) * LINE; e < rest; e++)
                    acc[e % (2 * LINE)] += a[e];
                float sum = 0;
                for (int e = 0; e < 2 * LINE; e++) sum += acc[e];
                part[it] = sum;
            }
            if (r >= 0) t[r] = bench_now_s() - t0;
            float total = 0;
            for (int i = 0; i < threads; i++) total += part[i];
            sink = sink + total;
        }
        (void)sink;
        gbs = (double)n * sizeof(float) / bench_stats_of(t, reps).median / 1e9;
    }
    free(a);
    free(t);
    free(part);
    return gbs;
}
