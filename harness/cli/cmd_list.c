/* cmd_list.c — `bench list`: the registered kinds, their parameters, and the datasets. */
#include <stdio.h>
#include <string.h>

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

/* A kind's weights (attn_ops.weights) at n = 1024, 8 heads of dim 64: those of its defaults,
 * then those only a named choice of a parameter brings (linear map=favor), each once:
 *   "      weight NAME [dims] (setting; at n=1024 H=8 D=64) SUMMARY". */
static void print_weights(const attn_ops *k)
{
    const attn_param_table *t = attn_kind_params(k);
    char shown[ATTN_MAX_WEIGHTS * 8][64];
    int nshown = 0;
    for (int i = -1; i < t->count; i++)
        for (int c = 0; c < (i < 0 ? 1 : attn_param_choice_count(&t->defs[i])); c++) {
            attn_shape s =
                attn_shape_init(1, 8, attn_kind_kv_heads(k, 8, 0), 1024, 1024, 64, false);
            attn_params p = attn_params_defaults(t);
            char setting[96] = "defaults", msg[ATTN_MSG_LEN];
            if (i >= 0) {
                p.v[i] = c;
                snprintf(setting, sizeof setting, "%s=%s", t->defs[i].name, t->defs[i].choices[c]);
            }
            attn_params_resolve(k, &s, &p);
            attn_weight w[ATTN_MAX_WEIGHTS];
            const int n =
                attn_check(k, &s, &p, msg, sizeof msg) ? 0 : attn_kind_weights(k, &s, &p, w);
            for (int j = 0; j < n; j++) {
                bool seen = false;
                for (int e = 0; e < nshown && !seen; e++) seen = strcmp(shown[e], w[j].name) == 0;
                if (seen || nshown == (int)(sizeof shown / sizeof shown[0])) continue;
                snprintf(shown[nshown++], 64, "%s", w[j].name);
                char dims[96];
                int len = snprintf(dims, sizeof dims, "[");
                for (int d = 0; d < w[j].rank; d++)
                    len += snprintf(dims + len, sizeof dims - (size_t)len, "%s%lld", d ? "," : "",
                                    (long long)w[j].dims[d]);
                snprintf(dims + len, sizeof dims - (size_t)len, "]");
                printf("      weight %s %s (%s; at n=1024 H=8 D=64) %s\n", w[j].name, dims, setting,
                       w[j].summary);
            }
        }
}

/* Parameters that several kinds share by name (the score modifiers alibi and softcap of every
 * softmax kind): "score modifiers (NAME, NAME: parameters of KIND, KIND, ...)" once, found in the
 * tables rather than listed here. */
static void print_modifiers(void)
{
    static const char *const names[] = {"alibi", "softcap"};
    char kinds[1024] = "";
    int len = 0, found = 0;
    for (int n = 0; n < attn_kind_count() && len < (int)sizeof kinds; n++) {
        const attn_param_table *t = attn_kind_params(attn_kind_at(n));
        if (attn_param_index(t, names[0]) < 0 || attn_param_index(t, names[1]) < 0) continue;
        len += snprintf(kinds + len, sizeof kinds - (size_t)len, "%s%s", found++ ? ", " : "",
                        t->owner);
    }
    if (!found) return;
    printf("\nscore modifiers (parameters of %s):\n", kinds);
    const attn_param_table *t = attn_kind_params(attn_kind_find("full"));
    for (size_t m = 0; m < sizeof names / sizeof *names; m++) {
        const int i = attn_param_index(t, names[m]);
        if (i >= 0) printf("  %-12s %s\n", names[m], t->defs[i].summary);
    }
}

/* The kinds `bench sweep` leaves out without --kinds (attn_ops.on_request), with why. */
static void print_on_request(void)
{
    bool header = false;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *k = attn_kind_at(n);
        if (!k->on_request) continue;
        if (!header)
            printf("\nmeasured on request (not in the default sweep: bench sweep --kinds NAME):\n");
        header = true;
        printf("  %-12s %s\n", k->name, k->on_request);
    }
}

int bench_cmd_list(int argc, char **argv)
{
    const char *help = NULL, *verbose = NULL;
    const bench_opt opts[] = {
        {"--verbose", NULL,
         "also print each kind's exact definition and its weights (the tensors --input may "
         "give)",
         &verbose},
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
        if (verbose) print_weights(k);
    }
    print_modifiers();
    print_on_request();
    printf("\ndatasets (--dataset; their parameters: bench datasets):\n");
    for (int n = 0; n < ds_count(); n++) printf("  %-12s %s\n", ds_at(n)->name, ds_at(n)->summary);
    return 0;
}
