/* cmd_info.c — `bench info`: the machine and build facts recorded with every run, and the
 * OpenBLAS sgemm yardstick (GFLOP/s of a large square product on this machine). */
#include <stdio.h>

#include "commands.h"
#include "machine.h"
#include "memory.h"

int bench_cmd_info(int argc, char **argv)
{
    const char *help = NULL, *threads_s = NULL, *n_s = NULL, *reps_s = NULL, *skip = NULL;
    const char *skip_bw = NULL;
    const bench_opt opts[] = {
        {"--threads", "N", "BLAS threads for the sgemm measurement (default: all CPUs)",
         &threads_s},
        {"--sgemm-n", "N", "size of the square sgemm (default 2048)", &n_s},
        {"--reps", "N", "sgemm repetitions, median reported (default 5)", &reps_s},
        {"--no-sgemm", NULL, "skip the sgemm measurement", &skip},
        {"--no-bandwidth", NULL, "skip the memory bandwidth measurement", &skip_bw},
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
            "bench info [--threads N] [--sgemm-n N] [--no-sgemm] [--no-bandwidth]",
            "Prints the facts every results file records (host, CPU, build, libraries,\n"
            "git commit) and measures the two yardsticks results are read against:\n"
            "OpenBLAS sgemm GFLOP/s (compute) and memory read GB/s (decode).",
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
    if (!skip) {
        double g = bench_sgemm_gflops((int)threads, (int)n, (int)reps);
        printf("sgemm           %.1f GFLOP/s  (OpenBLAS, %lld^3, %lld threads, median of %lld)\n",
               g, (long long)n, (long long)threads, (long long)reps);
    }
    if (!skip_bw) {
        double bw =
            bench_mem_bandwidth_gbs((int)threads, BENCH_BANDWIDTH_BYTES, BENCH_BANDWIDTH_REPS);
        printf(
            "memory read     %.1f GB/s  (parallel sum over %d MiB, %lld threads, median of %d)\n",
            bw, BENCH_BANDWIDTH_BYTES >> 20, (long long)threads, BENCH_BANDWIDTH_REPS);
    }
    return 0;
}
