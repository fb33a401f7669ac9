/* machine.c — host, CPU, build and library facts; the OpenBLAS sgemm peak measurement. */
#include <cblas.h>
#include <hdf5.h>
#include <math.h>
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

double bench_mem_bandwidth_gbs(int threads, size_t bytes, int reps)
{
    const size_t n = bytes / sizeof(float);
    float *a = bench_alloc(n * sizeof(float));
    double *t = malloc((size_t)reps * sizeof *t);
    double gbs = NAN;
    if (a && t && n >= 32) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t e = 0; e < n; e++) a[e] = (float)(e & 1023) * 1e-3f; /* first touch too */
        volatile float sink = 0;
        for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
            double t0 = bench_now_s();
            float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
            {
                /* 32 running sums (four AVX2 registers) kept across the whole range: the adds
                 * are independent, so the loop waits on memory, not on add latency */
                float acc[32] = {0};
#pragma omp for schedule(static)
                for (size_t c = 0; c < n / 32; c++) {
                    const float *x = a + c * 32;
                    for (int e = 0; e < 32; e++) acc[e] += x[e];
                }
                for (int e = 0; e < 32; e++) total += acc[e];
            }
            if (r >= 0) t[r] = bench_now_s() - t0;
            sink = sink + total;
        }
        (void)sink;
        gbs = (double)(n / 32 * 32) * sizeof(float) / bench_stats_of(t, reps).median / 1e9;
    }
    free(a);
    free(t);
    return gbs;
}
