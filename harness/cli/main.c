/* main.c — the bench CLI: validates the registry, dispatches subcommands, owns exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn_isa.h"
#include "attn_suggest.h"
#include "bench_mpi.h"
#include "blas_core.h"
#include "commands.h"
#include "machine.h"
#include "memory.h"
#include "version.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: bench COMMAND [options]      (bench COMMAND --help for its options)\n\n"
        "attnbench measures efficient-attention kinds: time, throughput, memory and accuracy\n"
        "against exact float64 attention, into HDF5 results files.\n\n"
        "commands:\n"
        "  sweep     measure a grid of kinds and shapes into results/<time>.h5\n"
        "  run       measure one kind at one shape (or on your own q/k/v from HDF5)\n"
        "  plot      figures of a run: time, memory, throughput, accuracy vs n, heads, parameters\n"
        "  fit       exponents of time and memory over n, crossovers with full (stored in /fits)\n"
        "  report    one self-contained HTML page of a run: figures, fits, points, machine\n"
        "  export    a table of a results file as CSV, JSON (with the machine context) or Markdown\n"
        "  compare   two runs point by point: time ratios with confidence intervals, regressions\n"
        "  pattern   a figure of which scores a kind computes (query rows x key columns)\n"
        "  list      kinds and their parameters\n"
        "  datasets  input generators, their parameters and definitions\n"
        "  info      machine and build facts; sgemm GFLOP/s and memory read GB/s\n"
        "  test      (./bench launcher only) build and run the test suite\n");
    fprintf(f, "\nbench --version: version and commit. bash completion: source "
               "tools/bench-completion.bash\n");
}

/* "bench: unknown command 'swep' (did you mean 'sweep'?)", else the list of commands; exit 2. */
static int unknown_command(const char *word, const bench_command *cmds, int ncmds)
{
    static const char *const launcher[] = {"test", "format", "fuzz"};
    for (size_t l = 0; l < sizeof launcher / sizeof *launcher; l++)
        if (strcmp(word, launcher[l]) == 0) {
            fprintf(stderr, "bench: '%s' is a command of the launcher: ./bench %s\n", word, word);
            return 2;
        }
    attn_suggest s = attn_suggest_start(word);
    char names[512] = "", hint[96];
    for (int c = 0, w = 0; c < ncmds; c++) {
        attn_suggest_offer(&s, cmds[c].name);
        if (w < (int)sizeof names)
            w += snprintf(names + w, sizeof names - (size_t)w, "%s%s",
                          c ? ", " : "commands: ", cmds[c].name);
    }
    for (size_t l = 0; l < sizeof launcher / sizeof *launcher; l++)
        attn_suggest_offer(&s, launcher[l]);
    attn_suggest_offer(&s, "--help");
    attn_suggest_offer(&s, "--version");
    fprintf(stderr, "bench: unknown command '%s' (%s)\n", word,
            attn_suggest_hint(&s, names, hint, sizeof hint));
    return 2;
}

int main(int argc, char **argv)
{
    char msg[ATTN_MSG_LEN];
    bench_blas_core_select(argv); /* may re-execute with OpenBLAS's best kernels */
    bench_memory_setup();
    if (bench_address_space_check(msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", msg);
        _exit(1); /* not exit(): OpenBLAS's exit handler would wait forever for its threads */
    }
    if (attn_registry_validate(msg, sizeof msg) != ATTN_OK) {
        fprintf(stderr, "bench: broken attention module: %s\n", msg);
        return 1;
    }
    attn_isa isa; /* ATTN_ISA must name a set this machine runs (attn_isa.h) */
    if (attn_isa_from_env(&isa, msg, sizeof msg) != ATTN_OK) return bench_fail(ATTN_EINVAL, msg);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("attnbench %s (commit %s)\n", BENCH_VERSION, BENCH_GIT_COMMIT);
        return 0;
    }
    static const bench_command cmds[] = {
        {"sweep", bench_cmd_sweep},       {"run", bench_cmd_run},
        {"list", bench_cmd_list},         {"info", bench_cmd_info},
        {"datasets", bench_cmd_datasets}, {"fit", bench_cmd_fit},
        {"plot", bench_cmd_plot},         {"report", bench_cmd_report},
        {"export", bench_cmd_export},     {"compare", bench_cmd_compare},
        {"pattern", bench_cmd_pattern}};
    const int ncmds = (int)(sizeof cmds / sizeof cmds[0]);
    for (int c = 0; c < ncmds; c++) {
        if (strcmp(argv[1], cmds[c].name) != 0) continue;
        /* under mpirun: MPI for the command's whole life (a sweep spreads its points) */
        const attn_status st = bench_mpi_init(&argc, &argv, msg, sizeof msg);
        if (st != ATTN_OK) { /* once, by rank 0 */
            const char *rank = getenv("OMPI_COMM_WORLD_RANK");
            return bench_fail(st, !rank || atoi(rank) == 0 ? msg : NULL);
        }
        const int status = cmds[c].fn(argc, argv);
        bench_mpi_finalize();
        return status;
    }
    if (strcmp(argv[1], "complete") == 0) return bench_cmd_complete(argc, argv, cmds, ncmds);
    return unknown_command(argv[1], cmds, ncmds);
}
