/*
 * args.h — command-line parsing for the bench subcommands: a table of options per command
 * (which also prints the command's --help), and value parsers that refuse bad input with a
 * message naming the option, the value and what is expected.
 */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

typedef struct bench_opt {
    const char *name;    /* "--n" */
    const char *metavar; /* "LIST"; NULL for a flag (its value becomes "1") */
    const char *help;    /* one line, may mention the default */
    const char **value;  /* where the text goes; left unchanged when the option is absent */
    int *count;          /* repeatable option: value is an array of max entries, count = used */
    int max;
    const char *const *choices; /* the values it takes, NULL-terminated, for shell completion
                                   (NULL: not a fixed list) */
} bench_opt;

/* Parse argv[first..argc): options from the table ("--name value" or "--name=value"),
 * everything else into positional[] (at most max_pos). */
attn_status bench_parse_opts(int argc, char **argv, int first, const bench_opt *opts, int nopts,
                             const char **positional, int max_pos, int *npos, const char *command,
                             char *msg, size_t msg_len);
/* "usage: ...\n\n<description>\n\noptions:\n  --name METAVAR  help" on stdout; under
 * bench_help_options_only only the options, one a line: "--name METAVAR" (or "--name"); under
 * bench_help_values_of only the choices of that option, one a line (none: nothing). */
void bench_print_help(const char *usage, const char *description, const bench_opt *opts, int nopts);
/* Set by `bench complete options COMMAND` and `bench complete values COMMAND OPTION` (shell
 * completion), which then call the command with --help. */
extern bool bench_help_options_only;
extern const char *bench_help_values_of;
/* Entries of an array whose size the compiler knows (an option table). */
#define BENCH_COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

/* An integer in [min, max]; accepts K and M suffixes (×1024, ×1048576). */
attn_status bench_parse_i64(const char *text, const char *what, int64_t min, int64_t max,
                            int64_t *out, char *msg, size_t msg_len);
attn_status bench_parse_double(const char *text, const char *what, double min, double max,
                               double *out, char *msg, size_t msg_len);
/* A list of integers: items separated by commas, each a number or a range A:B[:xF | :+S]
 * (geometric by factor F, default x2, or arithmetic by step S), e.g. "256:8192:x2,12288".
 * *vals is malloc'd (free it). At most 4096 values. */
attn_status bench_parse_i64_list(const char *text, const char *what, int64_t min, int64_t max,
                                 int64_t **vals, int *n, char *msg, size_t msg_len);
/* Split a comma list into malloc'd copies (free with bench_free_strings). Empty items refused. */
attn_status bench_split_list(const char *text, const char *what, char ***items, int *n, char *msg,
                             size_t msg_len);
void bench_free_strings(char **items, int n);

/* Parse `bench COMMAND FILE.h5 [options]` (options from opts; one positional, the file, into
 * *path, NULL if absent); then the text the --run option left in *run_text into *run_id (0 when
 * absent). ATTN_EINVAL with a message on bad usage. */
attn_status bench_parse_file_args(int argc, char **argv, const bench_opt *opts, int nopts,
                                  const char *command, const char **path,
                                  const char *const *run_text, int64_t *run_id, char *msg,
                                  size_t msg_len);

#endif
