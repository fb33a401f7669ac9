/* cmd_list.c — `bench list`: the registered kinds, their parameters, and the datasets. */
#include <stdio.h>

#include "commands.h"
#include "datasets.h"

int bench_cmd_list(int argc, char **argv)
{
    const char *help = NULL, *verbose = NULL;
    const bench_opt opts[] = {
        {"--verbose", NULL, "also print each kind's exact definition", &verbose},
        {"--help", NULL, "this help", &help},
    };
    const int nopts = sizeof opts / sizeof opts[0];
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 0, &npos, "list", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help("bench list [--verbose]",
                         "Lists the attention kinds with their parameters (defaults and ranges)\n"
                         "and the input datasets. Set a parameter with NAME=VALUE after the kind\n"
                         "in `bench run`, or sweep it with --set NAME=V1,V2 in `bench sweep`.",
                         opts, nopts);
        return 0;
    }
    printf("kinds:\n");
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *k = attn_kind_at(n);
        printf("  %-12s %s\n", k->name, k->summary);
        if (verbose && k->definition) {
            printf("      ");
            for (const char *c = k->definition; *c; c++) {
                putchar(*c);
                if (*c == '\n') printf("      ");
            }
            putchar('\n');
        }
        for (int p = 0; p < k->nparams; p++) {
            const attn_param_def *d = &k->params[p];
            char def[32];
            attn_param_value_format(d, d->def, def, sizeof def);
            printf("      %-14s = %-8s %s [%g, %g]%s\n", d->name, def, d->summary, d->min,
                   d->max, d->integer ? ", integer" : "");
            for (int c = 0; verbose && c < attn_param_choice_count(d); c++)
                printf("      %-14s   %d = %s\n", "", c, d->choices[c]);
        }
    }
    printf("\ndatasets (--dataset; their parameters: bench datasets):\n");
    for (int n = 0; n < ds_count(); n++) printf("  %-12s %s\n", ds_at(n)->name, ds_at(n)->summary);
    return 0;
}
