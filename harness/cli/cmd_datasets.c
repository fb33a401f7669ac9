/* cmd_datasets.c — `bench datasets`: the input datasets, their parameters and definitions. */
#include <stdio.h>

#include "commands.h"
#include "datasets.h"

int bench_cmd_datasets(int argc, char **argv)
{
    const char *help = NULL, *verbose = NULL;
    const bench_opt opts[] = {
        {"--verbose", NULL, "also print each dataset's exact definition", &verbose},
        {"--help", NULL, "this help", &help},
    };
    const int nopts = sizeof opts / sizeof opts[0];
    const char *pos[1];
    int npos;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, nopts, pos, 0, &npos, "datasets", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help("bench datasets [--verbose]",
                         "Lists the input datasets with their parameters (defaults and ranges).\n"
                         "Choose one with --dataset NAME (file: --dataset file=PATH.h5); set a\n"
                         "parameter with NAME=VALUE after the kind in `bench run`, or sweep it\n"
                         "with --set NAME=V1,V2 in `bench sweep`. Every generator is seeded\n"
                         "(--seed) and gives the same inputs on any number of threads.",
                         opts, nopts);
        return 0;
    }
    printf("datasets (--dataset):\n");
    for (int n = 0; n < ds_count(); n++) {
        const ds_ops *d = ds_at(n);
        bench_print_entry(d->name, d->summary, verbose ? d->definition : NULL, d->params.defs,
                          d->params.count);
    }
    return 0;
}
