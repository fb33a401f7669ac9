/* args.c — option tables, --help, and value parsers with messages that say what to fix. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "attn_suggest.h"

/* "unknown option '--thread' for bench run (did you mean '--threads'?)": the option of the
 * table closest to the first len characters of arg (one dash counts as a typo of two). */
static attn_status unknown_option(const char *arg, size_t len, const bench_opt *opts, int nopts,
                                  const char *command, char *msg, size_t msg_len)
{
    char word[64], hint[96], see[64];
    snprintf(word, sizeof word, "%.*s", (int)len, arg);
    attn_suggest s = attn_suggest_start(word);
    for (int n = 0; n < nopts; n++) attn_suggest_offer(&s, opts[n].name);
    snprintf(see, sizeof see, "see bench %s --help", command);
    return attn_fail(ATTN_EINVAL, msg, msg_len, "unknown option '%s' for bench %s (%s)", word,
                     command, attn_suggest_hint(&s, see, hint, sizeof hint));
}

attn_status bench_parse_opts(int argc, char **argv, int first, const bench_opt *opts, int nopts,
                             const char **positional, int max_pos, int *npos, const char *command,
                             char *msg, size_t msg_len)
{
    *npos = 0;
    for (int a = first; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-h") == 0) arg = "--help"; /* found below when the command has --help */
        if (arg[0] == '-' && isalpha((unsigned char)arg[1])) /* -n 5: one dash */
            return unknown_option(arg, strcspn(arg, "="), opts, nopts, command, msg, msg_len);
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (*npos >= max_pos) {
                return attn_fail(ATTN_EINVAL, msg, msg_len,
                                 "unexpected argument '%s' (see bench %s --help)", arg, command);
            }
            positional[(*npos)++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const bench_opt *o = NULL;
        for (int n = 0; n < nopts; n++)
            if (strlen(opts[n].name) == len && strncmp(opts[n].name, arg, len) == 0) o = &opts[n];
        if (o == NULL) return unknown_option(arg, len, opts, nopts, command, msg, msg_len);
        const char **slot = o->value;
        if (o->count) {
            if (*o->count >= o->max) {
                return attn_fail(ATTN_EINVAL, msg, msg_len, "option %s given more than %d times",
                                 o->name, o->max);
            }
            slot = &o->value[(*o->count)++];
        } else if (*slot != NULL) {
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "option %s given twice: give it once (lists take A,B,...)", o->name);
        }
        if (o->metavar == NULL) {
            if (eq) {
                return attn_fail(ATTN_EINVAL, msg, msg_len, "option %s takes no value", o->name);
            }
            *slot = "1";
        } else if (eq) {
            *slot = eq + 1;
        } else if (a + 1 < argc) {
            *slot = argv[++a];
        } else {
            return attn_fail(ATTN_EINVAL, msg, msg_len, "option %s needs a value (%s)", o->name,
                             o->metavar);
        }
    }
    return ATTN_OK;
}

bool bench_help_options_only = false;
const char *bench_help_values_of = NULL;

void bench_print_help(const char *usage, const char *description, const bench_opt *opts, int nopts)
{
    if (bench_help_values_of) {
        for (int n = 0; n < nopts; n++)
            for (int c = 0; strcmp(opts[n].name, bench_help_values_of) == 0 && opts[n].choices &&
                            opts[n].choices[c];
                 c++)
                printf("%s\n", opts[n].choices[c]);
        return;
    }
    if (bench_help_options_only) {
        for (int n = 0; n < nopts; n++)
            printf("%s%s%s\n", opts[n].name, opts[n].metavar ? " " : "",
                   opts[n].metavar ? opts[n].metavar : "");
        return;
    }
    printf("usage: %s\n\n%s\n", usage, description);
    if (nopts) printf("\noptions:\n");
    for (int n = 0; n < nopts; n++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", opts[n].name, opts[n].metavar ? " " : "",
                 opts[n].metavar ? opts[n].metavar : "");
        printf("  %-22s %s\n", left, opts[n].help);
    }
}

attn_status bench_parse_i64(const char *text, const char *what, int64_t min, int64_t max,
                            int64_t *out, char *msg, size_t msg_len)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    long long mult = 1;
    if (end != text && (*end == 'K' || *end == 'k')) mult = 1024, end++;
    else if (end != text && (*end == 'M' || *end == 'm')) mult = 1048576, end++;
    if (end == text || *end != '\0' || errno == ERANGE) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: '%s' is not an integer", what, text);
    }
    if (v > max / mult || v < min / mult || v * mult < min || v * mult > max) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: %s is out of range [%lld, %lld]", what,
                         text, (long long)min, (long long)max);
    }
    *out = (int64_t)(v * mult);
    return ATTN_OK;
}

attn_status bench_parse_double(const char *text, const char *what, double min, double max,
                               double *out, char *msg, size_t msg_len)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: '%s' is not a number", what, text);
    }
    if (v < min || v > max) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: %s is out of range [%.12g, %.12g]", what,
                         text, min, max);
    }
    *out = v;
    return ATTN_OK;
}

attn_status bench_split_list(const char *text, const char *what, char ***items, int *n, char *msg,
                             size_t msg_len)
{
    int count = 1;
    for (const char *c = text; *c; c++) count += *c == ',';
    char **out = calloc((size_t)count, sizeof *out);
    if (!out) {
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory", what);
    }
    const char *start = text;
    for (int k = 0; k < count; k++) {
        const char *stop = strchr(start, ',');
        size_t len = stop ? (size_t)(stop - start) : strlen(start);
        if (len == 0) {
            snprintf(msg, msg_len, "%s: empty item in '%s'", what, text);
            bench_free_strings(out, k);
            return ATTN_EINVAL;
        }
        out[k] = malloc(len + 1);
        if (!out[k]) {
            bench_free_strings(out, k);
            return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory", what);
        }
        memcpy(out[k], start, len);
        out[k][len] = '\0';
        start = stop ? stop + 1 : start + len;
        for (int e = 0; e < k; e++)
            if (strcmp(out[e], out[k]) == 0) {
                snprintf(msg, msg_len, "%s: '%s' given twice in '%s'", what, out[k], text);
                bench_free_strings(out, k + 1);
                return ATTN_EINVAL;
            }
    }
    *items = out;
    *n = count;
    return ATTN_OK;
}

void bench_free_strings(char **items, int n)
{
    for (int k = 0; k < n; k++) free(items[k]);
    free(items);
}

enum { MAX_LIST = 4096 };

/* One item of an integer list: a number or a range; appends to vals. */
static attn_status parse_item(char *item, const char *what, int64_t min, int64_t max, int64_t *vals,
                              int *n, char *msg, size_t msg_len)
{
    char *c1 = strchr(item, ':');
    if (!c1) {
        if (*n >= MAX_LIST) goto too_many;
        return bench_parse_i64(item, what, min, max, &vals[(*n)++], msg, msg_len);
    }
    *c1 = '\0';
    char *c2 = strchr(c1 + 1, ':');
    if (c2) *c2 = '\0';
    int64_t a, b, step = 2;
    bool geometric = true;
    if (bench_parse_i64(item, what, min, max, &a, msg, msg_len) != ATTN_OK ||
        bench_parse_i64(c1 + 1, what, min, max, &b, msg, msg_len) != ATTN_OK)
        return ATTN_EINVAL;
    if (c2) {
        char kind = c2[1];
        if ((kind != 'x' && kind != '+') ||
            bench_parse_i64(c2 + 2, what, kind == 'x' ? 2 : 1, INT64_MAX / 4, &step, msg,
                            msg_len) != ATTN_OK) {
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s: range step '%s' must be xF (factor F >= 2) or +S (step S >= 1)",
                             what, c2 + 1);
        }
        geometric = kind == 'x';
    }
    if (b < a) {
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: range %lld:%lld ends before it starts",
                         what, (long long)a, (long long)b);
    }
    for (int64_t v = a; v <= b; v = geometric ? v * step : v + step) {
        if (*n >= MAX_LIST) goto too_many;
        vals[(*n)++] = v;
        if ((geometric && v > b / step) || (!geometric && v > b - step)) break;
    }
    return ATTN_OK;
too_many:
    return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: more than %d values", what, MAX_LIST);
}

attn_status bench_parse_i64_list(const char *text, const char *what, int64_t min, int64_t max,
                                 int64_t **vals, int *n, char *msg, size_t msg_len)
{
    char **items = NULL;
    int nitems = 0;
    attn_status st = bench_split_list(text, what, &items, &nitems, msg, msg_len);
    if (st != ATTN_OK) return st;
    int64_t *out = malloc(MAX_LIST * sizeof *out);
    int count = 0;
    if (!out) st = attn_fail(ATTN_EFAIL, msg, msg_len, "%s: out of memory", what);
    for (int k = 0; st == ATTN_OK && k < nitems; k++)
        st = parse_item(items[k], what, min, max, out, &count, msg, msg_len);
    bench_free_strings(items, nitems);
    for (int k = 1; st == ATTN_OK && k < count; k++)
        for (int e = 0; e < k; e++)
            if (out[e] == out[k]) {
                st = attn_fail(ATTN_EINVAL, msg, msg_len,
                               "%s: %lld given twice in '%s' (do ranges overlap?)", what,
                               (long long)out[k], text);
                break;
            }
    if (st != ATTN_OK) {
        free(out);
        return st;
    }
    *vals = out;
    *n = count;
    return ATTN_OK;
}

attn_status bench_parse_file_args(int argc, char **argv, const bench_opt *opts, int nopts,
                                  const char *command, const char **path,
                                  const char *const *run_text, int64_t *run_id, char *msg,
                                  size_t msg_len)
{
    const char *pos[1] = {NULL};
    int npos = 0;
    *run_id = 0;
    attn_status st =
        bench_parse_opts(argc, argv, 2, opts, nopts, pos, 1, &npos, command, msg, msg_len);
    if (!st && *run_text)
        st = bench_parse_i64(*run_text, "--run", 1, INT64_MAX, run_id, msg, msg_len);
    *path = pos[0];
    return st;
}
