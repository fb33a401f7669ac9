/* cmd_list.c — `bench list`: the registered kinds, their parameters, and the datasets. */
#include <stdio.h>

#include "commands.h"
#include "datasets.h"

void bench_print_entry(const char *name, const char *summary, const char *definition,
                       const attn_param_def *params, int nparams)
{
    printf("  %-12s %s\n", name, summary);
    if (definition) {
        printf("      ");
        for (const char *c = definition; *c; c++) {
            putchar(*c);
            if (*c == '\n') printf("      ");
        }
        putchar('\n');
    }
    for (int p = 0; p < nparams; p++) {
        const attn_param_def *d = &params[p];
        char def[32], range[160];
        attn_param_value_format(d, d->def, def, sizeof def);
        const int nchoices = attn_param_choice_count(d);
        if (nchoices > 0) { /* named choices: list them instead of a numeric range */
            int w = snprintf(range, sizeof range, "{");
            for (int c = 0; c < nchoices && w < (int)sizeof range; c++)
                w += snprintf(range + w, sizeof range - (size_t)w, "%s%s", c ? ", " : "",
                              d->choices[c]);
            if (w < (int)sizeof range) snprintf(range + w, sizeof range - (size_t)w, "}");
        } else {
            snprintf(range, sizeof range, "[%.12g, %.12g]%s", d->min, d->max,
                     d->integer ? ", integer" : "");
        }
        printf("      %-14s = %-8s %s %s\n", d->name, def, d->summary, range);
    }
}

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
        bench_print_entry(k->name, k->summary, verbose ? k->definition : NULL, k->params.defs,
                          k->params.count);
    }
    printf("\ndatasets (--dataset; their parameters: bench datasets):\n");
    for (int n = 0; n < ds_count(); n++) printf("  %-12s %s\n", ds_at(n)->name, ds_at(n)->summary);
    return 0;
}
