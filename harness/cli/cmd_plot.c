/*
 * cmd_plot.c — `bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]`: the options.
 * The figures (each one's name, what it plots, how it is drawn) are the registry of
 * report/plot.h, drawn by its driver (report/plot.c); this file parses the options, lists the
 * registry in --help and calls the driver.
 */
#include <stdio.h>

#include "commands.h"
#include "gnuplot.h"
#include "plot.h"

static const char plot_description[] =
    "Draws one figure per question about a run with gnuplot, for each mode measured:\n"
    "time vs n (log-log, fitted power laws with exponents and R², two laws or none\n"
    "where one does not fit), speed-up over full vs n, memory vs n (measured RSS and\n"
    "declared workspace), throughput vs n (against sgemm or memory bandwidth),\n"
    "accuracy vs n, accuracy vs each swept kind parameter, error vs time, and time vs\n"
    "heads and kv_heads. Error bars: the 95 % CI of the median time from the stored\n"
    "repetitions (min-max below 6), Wilson 95 % CIs on retrieval. Figures the run has\n"
    "no data for are skipped, with the reason. The figures go into a folder of the\n"
    "run's own (plots/<file>-run<ID>/) or --out DIR, where those of an earlier plot\n"
    "are removed. Prints the files written and the folder.";

/* The help: the description, then one line per figure of the registry. */
static void print_help(const bench_opt *opts, int nopts)
{
    char description[4096];
    int w = snprintf(description, sizeof description,
                     "%s\n\nfigures, in the order drawn (a decode run's names end in _decode):",
                     plot_description);
    for (int i = 0; i < bench_figure_count() && w < (int)sizeof description; i++)
        w += snprintf(description + w, sizeof description - (size_t)w, "\n  %-20s %s",
                      bench_figure_at(i)->name, bench_figure_at(i)->summary);
    bench_print_help("bench plot FILE.h5 [--out DIR] [--run ID] [--format png|svg|pdf]",
                     description, opts, nopts);
}

int bench_cmd_plot(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *out_s = NULL, *format = NULL;
    const char *formats[8] = {0};
    for (int i = 0; i < 7 && bench_gnuplot_format_at(i); i++)
        formats[i] = bench_gnuplot_format_at(i);
    const bench_opt opts[] = {
        {"--out", "DIR",
         "where the figures go (default: plots/<file>-run<ID>/ under the bench directory); "
         "figures of an earlier plot there are removed",
         &out_s},
        {"--run", "ID", "the run to draw (default: the last run in the file)", &run_s},
        {"--format", "FMT", "png (default, 800x500), svg or pdf", &format, .choices = formats},
        {"--help", NULL, "this help", &help},
    };
    const char *file = NULL;
    char msg[ATTN_MSG_LEN];
    int64_t run_id = 0;
    if (bench_parse_file_args(argc, argv, opts, sizeof opts / sizeof opts[0], "plot", &file, &run_s,
                              &run_id, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        print_help(opts, sizeof opts / sizeof opts[0]);
        return 0;
    }
    if (!file)
        return bench_fail(ATTN_EINVAL, "bench plot needs a results file: bench plot FILE.h5");
    attn_status st = bench_plot_results(file, run_id, out_s, format ? format : "png", stdout, NULL,
                                        msg, sizeof msg);
    return st ? bench_fail(st, msg) : 0;
}
