/* cmd_complete.c — `bench complete ...`: the words of the command line, for shell completion
 * (tools/bench-completion.bash asks bench, so completion follows the tables it prints from). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "datasets.h"

static const char complete_usage[] =
    "bench complete commands | kinds | datasets | options COMMAND | values COMMAND OPTION |\n"
    "               params [KIND|DATASET ...] | choices KIND|DATASET PARAM";

/* The parameter table of a kind or a dataset called name; NULL: neither. */
static const attn_param_table *params_of(const char *name)
{
    const attn_ops *k = attn_kind_find(name);
    if (k) return attn_kind_params(k);
    const ds_ops *d = ds_find(name);
    return d ? &d->params : NULL;
}

/* Print the names of table t not printed yet; seen ("\nNAME\nNAME\n...") lists those printed. */
static void print_new_params(const attn_param_table *t, char *seen, size_t len)
{
    for (int n = 0; n < t->count; n++) {
        char line[80];
        snprintf(line, sizeof line, "\n%s\n", t->defs[n].name);
        if (strstr(seen, line)) continue;
        printf("%s\n", t->defs[n].name);
        const size_t used = strlen(seen);
        snprintf(seen + used, len - used, "%s\n", t->defs[n].name);
    }
}

/* Parameters of the named kinds and datasets (of all when none is named), each once. */
static int complete_params(int argc, char **argv)
{
    static char seen[8192];
    snprintf(seen, sizeof seen, "\n");
    if (argc <= 3) {
        for (int k = 0; k < attn_kind_count(); k++)
            print_new_params(attn_kind_params(attn_kind_at(k)), seen, sizeof seen);
        for (int d = 0; d < ds_count(); d++) print_new_params(&ds_at(d)->params, seen, sizeof seen);
        return 0;
    }
    for (int a = 3; a < argc; a++) {
        const attn_param_table *t = params_of(argv[a]);
        if (t) print_new_params(t, seen, sizeof seen);
    }
    return 0;
}

int bench_cmd_complete(int argc, char **argv, const bench_command *cmds, int ncmds)
{
    const char *what = argc > 2 ? argv[2] : "";
    if (strcmp(what, "commands") == 0) {
        for (int c = 0; c < ncmds; c++) printf("%s\n", cmds[c].name);
    } else if (strcmp(what, "kinds") == 0) {
        for (int k = 0; k < attn_kind_count(); k++) printf("%s\n", attn_kind_at(k)->name);
    } else if (strcmp(what, "datasets") == 0) {
        for (int d = 0; d < ds_count(); d++) printf("%s\n", ds_at(d)->name);
    } else if (strcmp(what, "options") == 0 && argc == 4) {
        for (int c = 0; c < ncmds; c++)
            if (strcmp(argv[3], cmds[c].name) == 0) {
                char *help_argv[] = {argv[0], argv[3], "--help", NULL};
                bench_help_options_only = true;
                return cmds[c].fn(3, help_argv);
            }
        return 0; /* not a command: nothing to complete */
    } else if (strcmp(what, "values") == 0 && argc == 5) {
        for (int c = 0; c < ncmds; c++)
            if (strcmp(argv[3], cmds[c].name) == 0) {
                char *help_argv[] = {argv[0], argv[3], "--help", NULL};
                bench_help_values_of = argv[4];
                return cmds[c].fn(3, help_argv);
            }
        return 0; /* not a command: nothing to complete */
    } else if (strcmp(what, "params") == 0) {
        return complete_params(argc, argv);
    } else if (strcmp(what, "choices") == 0 && argc == 5) {
        const attn_param_table *t = params_of(argv[3]);
        const int i = t ? attn_param_index(t, argv[4]) : -1;
        for (int c = 0; i >= 0 && c < attn_param_choice_count(&t->defs[i]); c++)
            printf("%s\n", t->defs[i].choices[c]);
    } else {
        fprintf(stderr, "usage: %s\n", complete_usage);
        return 2;
    }
    return 0;
}
