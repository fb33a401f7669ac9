/*
 * commands.h — the bench subcommands. Each returns the process exit status:
 * 0 success, 2 bad usage or input (one line on stderr, nothing written), 1 failure while running.
 *
 * Room cli/ (the top: main, options, the commands, progress and tables): may include every room
 * below it (report/, store/, measure/), attention/ and datasets/; nothing includes cli/.
 */
#ifndef BENCH_COMMANDS_H
#define BENCH_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"
#include "attn_isa.h"
#include "plot.h"
#include "point.h"
#include "results.h"
#include "series.h"
#include "stats.h"

/* A subcommand of bench: its name and its function (main.c's table). */
typedef struct bench_command {
    const char *name;
    int (*fn)(int argc, char **argv);
} bench_command;

/* `bench complete WHAT ...` (hidden; for tools/bench-completion.bash): the words the shell may
 * complete, one a line: commands, kinds, datasets, the options of a command ("--name METAVAR"),
 * the values an option of a command takes (its table's choices), the parameters of kinds and
 * datasets, the choices of a parameter. */
int bench_cmd_complete(int argc, char **argv, const bench_command *cmds, int ncmds);
int bench_cmd_list(int argc, char **argv);
int bench_cmd_info(int argc, char **argv);
int bench_cmd_run(int argc, char **argv);
int bench_cmd_sweep(int argc, char **argv);
int bench_cmd_datasets(int argc, char **argv);
int bench_cmd_fit(int argc, char **argv);
int bench_cmd_plot(int argc, char **argv);
int bench_cmd_report(int argc, char **argv);
int bench_cmd_export(int argc, char **argv);
int bench_cmd_compare(int argc, char **argv);
int bench_cmd_pattern(int argc, char **argv);

/* The fit rows `bench fit` prints and stores for run rd (*rows malloc'd, free it; none when no
 * series has 2 or more n). ATTN_EFAIL: out of memory. */
attn_status bench_fit_compute(const bench_run_data *rd, bench_fit_row **rows, int64_t *nrows);
/* A fit row's comparison with full: "faster above n=1270 (0.21x at 8K)" and the like. */
void bench_fit_crossover_text(const bench_fit_row *r, char *buf, size_t len);
/* `bench report`: the one-file HTML page of run run_id (0: the last) of results file path, written
 * to out_path (replacing it only once complete). ATTN_EINVAL: bad file, run or output path;
 * ATTN_EFAIL: gnuplot missing or failing, out of memory, a failed write (no page is left). */
attn_status bench_report_write(const char *path, int64_t run_id, const char *out_path, char *msg,
                               size_t msg_len);

/* Measurement options shared by run and sweep, as text (NULL: default) and parsed. */
typedef struct bench_measure_opts {
    const char *threads, *reps, *warmup, *warmup_time, *min_time, *seed, *accuracy_rows;
    const char *allow_nonfinite;
    const char *isa; /* --isa */
} bench_measure_opts;

typedef struct bench_measure_cfg {
    int threads;
    bench_timing_cfg timing;
    uint64_t seed;
    int64_t accuracy_rows;
    bool allow_nonfinite; /* measure inputs holding NaN or Inf instead of refusing them */
    attn_isa isa;         /* the kernel set (--isa; default: ATTN_ISA, else the best) */
} bench_measure_cfg;

/* The option table entries for m (a bench_measure_opts *), to end a command's table, which the
 * compiler then sizes: bench_opt opts[] = {..., BENCH_MEASURE_OPTS(&mo)}. */
#define BENCH_MEASURE_OPTS(m)                                                                      \
    {"--threads", "N",                                                                             \
     "OpenMP threads (default: all CPUs; sweep: a list, an axis); BLAS 1 inside", &(m)->threads},  \
        {"--reps", "N", "timed repetitions, at least (default 5)", &(m)->reps},                    \
        {"--warmup", "N", "untimed runs first, at least (default 1; 0: none)", &(m)->warmup},      \
        {"--warmup-time", "SEC", "and warm up for at least this long (default 0.05)",              \
         &(m)->warmup_time},                                                                       \
        {"--min-time", "SEC", "time repetitions for at least this long in all (default 0.2)",      \
         &(m)->min_time},                                                                          \
        {"--seed", "N", "seed of the generated inputs (default 1)", &(m)->seed},                   \
        {"--accuracy-rows", "N", "query rows checked against float64 (default 64; all if fewer)",  \
         &(m)->accuracy_rows},                                                                     \
        {"--isa", "SET",                                                                           \
         "kernel set: portable, avx2, avx512 (default: ATTN_ISA, else the best; "                  \
         "sweep: a list, an axis)",                                                                \
         &(m)->isa},                                                                               \
    {                                                                                              \
        "--allow-nonfinite", NULL, "measure inputs holding NaN or Inf (default: refused)",         \
            &(m)->allow_nonfinite                                                                  \
    }
/* Parse with defaults: threads = CPUs, reps 5, warmup 1 run and 0.05 s, min-time 0.2 s,
 * seed 1, rows 64. */
attn_status bench_measure_parse(const bench_measure_opts *m, bench_measure_cfg *cfg, char *msg,
                                size_t msg_len);
/* --isa NAME (what: the option, for the message) into *isa: a set built into this binary that
 * this CPU runs; else ATTN_EINVAL, "--isa avx513: unknown kernel set (did you mean 'avx512'?)"
 * or why it cannot run here. */
attn_status bench_parse_isa(const char *text, const char *what, attn_isa *isa, char *msg,
                            size_t msg_len);
/* "portable, avx2" : the sets built (supported: only those this CPU runs) into buf. */
const char *bench_isa_list(bool supported, char *buf, size_t len);
/* A run record: machine facts, the command line, threads and seed, and the sgemm yardstick
 * measured now with cfg->threads BLAS threads. */
bench_run bench_new_run(int argc, char **argv, const bench_measure_cfg *cfg);
/* `bench list` / `bench datasets` entry: name, summary, definition (NULL: none) and the
 * parameters with defaults and ranges (or named choices). */
void bench_print_entry(const char *name, const char *summary, const char *definition,
                       const attn_param_def *params, int nparams);
/* "prefill" or "decode" (anything else is refused). */
attn_status bench_parse_mode(const char *text, bool *decode, char *msg, size_t msg_len);
/* "forward", "backward" or "train" (anything else is refused, with a did-you-mean). */
attn_status bench_parse_pass(const char *text, bench_pass *pass, char *msg, size_t msg_len);
/* "f32", "bf16" or "f16" (anything else is refused, with a did-you-mean). */
attn_status bench_parse_dtype(const char *text, attn_dtype *dtype, char *msg, size_t msg_len);
/* ATTN_EINVAL, msg "<prefix>unknown kind 'NAME' (did you mean 'KIND'?)" (or "(see bench list)"
 * when no kind is close). */
attn_status bench_unknown_kind(const char *name, const char *prefix, char *msg, size_t msg_len);
/* Print "bench: <msg>" on stderr (msg NULL: nothing; another rank said it) and return the exit
 * status for st (2 usage, 1 failure). */
int bench_fail(attn_status st, const char *msg);
/* Refuse (ATTN_EINVAL) a path that cannot be written: an existing file without write
 * permission, or a new file in a missing or read-only directory. Writes nothing. */
attn_status bench_check_writable(const char *path, const char *what, char *msg, size_t msg_len);
/* The command line as one string (for results files), each argument that a POSIX shell would
 * split or expand in single quotes ('a b', 'it'\''s'), so that it runs again as it was typed; an
 * argument holding bytes that are not UTF-8, or control characters, as $'...' with those bytes
 * as \xNN (bash, zsh, ksh; POSIX.1-2024 sh), so that the string is valid UTF-8 and still runs. */
void bench_join_args(int argc, char **argv, char *buf, size_t len);

#endif
