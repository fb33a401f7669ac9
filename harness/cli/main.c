/* main.c — the bench CLI: validates the registry, dispatches subcommands, owns exit codes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_mpi.h"
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
        "  list      kinds and their parameters\n"
        "  datasets  input generators, their parameters and definitions\n"
        "  info      machine and build facts; sgemm GFLOP/s and memory read GB/s\n"
        "  test      (./bench launcher only) build and run the test suite\n");
}

int main(int argc, char **argv)
{
    char msg[ATTN_MSG_LEN];
    bench_memory_setup();
    if (bench_address_space_check(msg, sizeof msg) != 0) {
        fprintf(stderr, "bench: %s\n", msg);
        _exit(1); /* not exit(): OpenBLAS's exit handler would wait forever for its threads */
    }
    if (attn_registry_validate(msg, sizeof msg) != ATTN_OK) {
        fprintf(stderr, "bench: broken attention module: %s\n", msg);
        return 1;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("attnbench %s\n", BENCH_GIT_COMMIT);
        return 0;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"sweep", bench_cmd_sweep},       {"run", bench_cmd_run},
                {"list", bench_cmd_list},         {"info", bench_cmd_info},
                {"datasets", bench_cmd_datasets}, {"fit", bench_cmd_fit},
                {"plot", bench_cmd_plot}};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++)
        if (strcmp(argv[1], cmds[c].name) == 0) {
            bench_mpi_init(&argc, &argv); /* only under mpirun */
            const int rc = cmds[c].fn(argc, argv);
            bench_mpi_finalize();
            return rc;
        }
    fprintf(stderr,
            "bench: unknown command '%s' (commands: sweep, run, plot, fit, list, datasets, info)\n",
            argv[1]);
    return 2;
}
