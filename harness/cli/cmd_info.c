/* cmd_info.c — `bench info`: the machine and build facts recorded with every run, the kernel
 * sets (built, runnable, in force) and the yardsticks: FMA peak per kernel set, OpenBLAS sgemm
 * (GFLOP/s of a large square product) and memory read bandwidth on this machine. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "machine.h"
#include "memory.h"
#include "yardstick.h"

int bench_cmd_info(int argc, char **argv)
{
    const char *help = NULL, *threads_s = NULL, *n_s = NULL, *reps_s = NULL, *skip = NULL;
    const char *skip_bw = NULL, *skip_peak = NULL;
    const bench_opt opts[] = {
        {"--threads", "N", "BLAS threads for the sgemm measurement (default: all CPUs)",
         &threads_s},
        {"--sgemm-n", "N", "size of the square sgemm (default 2048)", &n_s},
        {"--reps", "N", "sgemm repetitions, median reported (default 5)", &reps_s},
        {"--no-sgemm", NULL, "skip the sgemm measurement", &skip},
        {"--no-bandwidth", NULL, "skip the memory bandwidth measurement", &skip_bw},
        {"--no-peak", NULL, "skip the FMA peak measurements", &skip_peak},
        {"--help", NULL, "this help", &help},
    };
    const int nopts = sizeof opts / sizeof opts[0];
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    int64_t threads = bench_cpu_count(), n = 2048, reps = 5;
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 0, &npos, "info", msg, sizeof msg) ||
        (threads_s &&
         bench_parse_i64(threads_s, "--threads", 1, 1024, &threads, msg, sizeof msg)) ||
        (n_s && bench_parse_i64(n_s, "--sgemm-n", 16, 32768, &n, msg, sizeof msg)) ||
        (reps_s && bench_parse_i64(reps_s, "--reps", 1, 1000, &reps, msg, sizeof msg)))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench info [--threads N] [--sgemm-n N] [--no-sgemm] [--no-bandwidth] [--no-peak]",
            "Prints the facts every results file records (host, CPU, build, libraries,\n"
            "git commit, kernel sets) and measures the yardsticks results are read against:\n"
            "the FMA peak of every kernel set this CPU runs, OpenBLAS sgemm GFLOP/s (compute)\n"
            "and memory read GB/s (decode), on --threads threads.",
            opts, nopts);
        return 0;
    }
    bench_run run = {0};
    bench_machine_facts(&run);
    printf("host            %s\n", run.host);
    char mem[32];
    printf("cpu             %s (%d logical CPUs, %s memory)\n", run.cpu_model, bench_cpu_count(),
           bench_format_bytes((double)bench_physical_memory_bytes(), mem, sizeof mem));
    printf("threads         forwards: OpenMP, %d by default (--threads); OpenBLAS: 1 inside them\n",
           bench_cpu_count());
    printf("build           %s\n", run.build);
    printf("git commit      %s\n", run.git_commit);
    printf("openblas        %s\n", run.openblas_config);
    printf("hdf5            %s\n", run.hdf5_version);
    char built[64], runs[64];
    const char *env = getenv("ATTN_ISA");
    printf("kernel sets     built: %s; this CPU runs: %s; in force: %s (%s)\n",
           bench_isa_list(false, built, sizeof built), bench_isa_list(true, runs, sizeof runs),
           attn_isa_name(attn_isa_current()), env && *env ? "ATTN_ISA" : "the best");
    for (int i = 0; !skip_peak && i < ATTN_ISA_COUNT; i++) {
        if (!attn_isa_supported((attn_isa)i)) continue;
        const double g =
            bench_peak_gflops((attn_isa)i, (int)threads, BENCH_PEAK_SECONDS, BENCH_PEAK_REPS);
        printf("peak %-10s %.1f GFLOP/s  (FMA loop on %lld thread%s at once, best of %d)\n",
               attn_isa_name((attn_isa)i), g, (long long)threads, threads == 1 ? "" : "s",
               BENCH_PEAK_REPS);
    }
    if (!skip) {
        double g = bench_sgemm_gflops((int)threads, (int)n, (int)reps);
        printf("sgemm           %.1f GFLOP/s  (OpenBLAS, %lld^3, %lld threads, median of %lld)\n",
               g, (long long)n, (long long)threads, (long long)reps);
    }
    if (!skip_bw) {
        const bench_yardstick_size size = bench_yardstick_size_in_force();
        double bw =
            bench_mem_bandwidth_gbs((int)threads, size.bandwidth_bytes, size.bandwidth_reps);
        char llc[32];
        printf("memory read     %.1f GB/s  (parallel sum over %zu MiB, %lld threads, median of %d; "
               "last-level cache %s)\n",
               bw, size.bandwidth_bytes >> 20, (long long)threads, size.bandwidth_reps,
               bench_format_bytes((double)bench_llc_bytes(), llc, sizeof llc));
    }
    return 0;
}
