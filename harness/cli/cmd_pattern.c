/*
 * cmd_pattern.c — `bench pattern KIND [NAME=VALUE ...] [--kinds K1,K2,...] [options]`: the
 * options. The figure (which scores a kind computes, from the registry) is report/pattern.h's;
 * this file parses the options, builds the panels and the shape, and calls it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic.h"
#include "commands.h"
#include "datasets.h"
#include "gnuplot.h"
#include "pattern.h"
#include "targets.h"

static const char pattern_description[] =
    "Draws which scores a kind computes: query rows i down, key columns j across, a\n"
    "dark cell per score, for one head of one shape; the title of each panel gives the\n"
    "count of computed scores and their share of T×S. The cells come from the kind\n"
    "itself: what the block-sparse engine lists (the same visits that count its\n"
    "flops), else its mask predicate; kinds with random draws show the draws of their\n"
    "seed parameter. Kinds defined by their own reference (low-rank, hashed, linear)\n"
    "mix every key into every query: their panel says they have no computed set.\n"
    "Several kinds side by side with --kinds; NAME=VALUE sets that parameter of every\n"
    "kind that has it. Beyond 512 cells a side, a pixel is a block of cells shaded by\n"
    "the share computed. --data writes the cells as digits, one line per query row.\n"
    "With --dataset D, the kinds' weights on that input instead (up to 4 kinds), for\n"
    "--head: the coefficients that mix each value into each output row, from one-hot\n"
    "probes of v through the kind's forward (its attention weights for a softmax\n"
    "kind), beside exact attention's and their difference (log colour scale), and\n"
    "the mass each query row recalls: sum over j of min(kind, exact), for a masked\n"
    "kind the share of exact attention's weight on the keys it computes.\n"
    "  bench pattern bigbird --n 128 --causal 1\n"
    "  bench pattern --kinds window,strided,bigbird window=16 --n 96 --out cmp.svg\n"
    "  bench pattern window window=32 --dataset needle --n 256 --causal 1";

/* The options of bench pattern as text (NULL: not given). */
typedef struct pattern_opts {
    const char *help, *kinds, *n, *q_len, *kv_len, *heads, *kv_heads, *head, *causal, *out, *data;
    const char *dataset, *seed, *head_dim;
} pattern_opts;

/* The dataset of --dataset (its parameters set by NAME=VALUE the kinds do not have). */
typedef struct pattern_input {
    const ds_ops *ds; /* NULL: no --dataset */
    ds_params params;
} pattern_input;

/* NAME=VALUE: set on every panel whose kind has the parameter; refused when none has it. */
static attn_status set_param(bench_pattern_panel *panels, int npanels, pattern_input *in,
                             const char *arg, char *msg, size_t msg_len)
{
    const char *eq = strchr(arg, '=');
    char name[64];
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof name)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "expected NAME=VALUE after the kind, got '%s'",
                         arg);
    snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
    int set = 0;
    for (int k = 0; k < npanels; k++) {
        const attn_param_table *t = attn_kind_params(panels[k].ops);
        if (attn_param_index(t, name) < 0) continue;
        if (attn_param_set(t, &panels[k].params, name, eq + 1, msg, msg_len)) return ATTN_EINVAL;
        set++;
    }
    if (!set && in->ds && ds_param_index(in->ds, name) >= 0)
        return ds_param_set(in->ds, &in->params, name, eq + 1, msg, msg_len);
    if (!set)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s: no kind drawn has a parameter '%s'%s (see bench list --verbose)", arg,
                         name, in->ds ? ", nor has the dataset" : "");
    return ATTN_OK;
}

/* The kinds (positional 0, or --kinds) and their parameters into panels. */
static attn_status choose(const pattern_opts *o, const char **pos, int npos,
                          bench_pattern_panel *panels, int *npanels, pattern_input *in, char *msg,
                          size_t msg_len)
{
    *in = (pattern_input){0};
    if (o->dataset) {
        if (ds_parse(o->dataset, &in->ds, &in->params, msg, msg_len)) return ATTN_EINVAL;
        if (in->ds->shape)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "--dataset %s: bench pattern draws generated inputs only (see bench "
                             "datasets)",
                             o->dataset);
    }
    char **names = NULL;
    int nnames = 0, first = 0;
    if (o->kinds) {
        if (bench_split_list(o->kinds, "--kinds", &names, &nnames, msg, msg_len))
            return ATTN_EINVAL;
    } else if (npos < 1 || strchr(pos[0], '=')) {
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "pattern needs a KIND or --kinds K1,K2 (see bench list)");
    } else {
        first = 1;
    }
    if (o->dataset && nnames > BENCH_PATTERN_WEIGHTS) {
        bench_free_strings(names, nnames);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--kinds lists %d kinds: at most %d on one --dataset", nnames,
                         BENCH_PATTERN_WEIGHTS);
    }
    if (nnames > BENCH_PATTERN_PANELS) {
        bench_free_strings(names, nnames);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--kinds lists %d kinds: at most %d side by side", nnames,
                         BENCH_PATTERN_PANELS);
    }
    *npanels = o->kinds ? nnames : 1;
    attn_status st = ATTN_OK;
    for (int k = 0; k < *npanels && st == ATTN_OK; k++) {
        const char *name = o->kinds ? names[k] : pos[0];
        panels[k].ops = attn_kind_find(name);
        if (!panels[k].ops)
            st = bench_unknown_kind(name, o->kinds ? "--kinds: " : "", msg, msg_len);
        else panels[k].params = attn_params_defaults(attn_kind_params(panels[k].ops));
    }
    bench_free_strings(names, nnames);
    for (int a = first; a < npos && st == ATTN_OK; a++) {
        const size_t len = strcspn(pos[a], "=");
        for (int e = first; e < a && st == ATTN_OK; e++)
            if (strcspn(pos[e], "=") == len && strncmp(pos[e], pos[a], len) == 0)
                st = attn_fail(ATTN_EINVAL, msg, msg_len, "%.*s given twice ('%s', '%s')", (int)len,
                               pos[a], pos[e], pos[a]);
        if (st == ATTN_OK) st = set_param(panels, *npanels, in, pos[a], msg, msg_len);
    }
    return st;
}

/* The shape (defaults: n 256, one head, not causal) and the head drawn. */
static attn_status parse_shape(const pattern_opts *o, attn_shape *s, int64_t *head, char *msg,
                               size_t msg_len)
{
    int64_t n = 256, T = -1, S = -1, H = 1, Hkv = 0, causal = 0, D = 64;
    *head = 0;
    const int64_t most = 1 << 14; /* T·S bytes of cells per panel: 256 MiB at most */
    if ((o->n && bench_parse_i64(o->n, "--n", 1, most, &n, msg, msg_len)) ||
        (o->q_len && bench_parse_i64(o->q_len, "--q-len", 1, most, &T, msg, msg_len)) ||
        (o->kv_len && bench_parse_i64(o->kv_len, "--kv-len", 1, most, &S, msg, msg_len)) ||
        (o->heads && bench_parse_i64(o->heads, "--heads", 1, 1 << 12, &H, msg, msg_len)) ||
        (o->kv_heads &&
         bench_parse_i64(o->kv_heads, "--kv-heads", 1, 1 << 12, &Hkv, msg, msg_len)) ||
        (o->causal && bench_parse_i64(o->causal, "--causal", 0, 1, &causal, msg, msg_len)) ||
        (o->head_dim && bench_parse_i64(o->head_dim, "--head-dim", 1, 1024, &D, msg, msg_len)))
        return ATTN_EINVAL;
    if (o->head && bench_parse_i64(o->head, "--head", 0, H - 1, head, msg, msg_len))
        return ATTN_EINVAL;
    if (Hkv > 0 && H % Hkv != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--kv-heads %lld does not divide --heads %lld",
                         (long long)Hkv, (long long)H);
    if (o->dataset && (T > 0 ? T : n) * (S > 0 ? S : n) > 2048 * 2048)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--dataset draws every weight: T x S at most 2048 x 2048 (give a smaller "
                         "--n)");
    *s = attn_shape_init(1, H, Hkv, T > 0 ? T : n, S > 0 ? S : n, D, causal != 0);
    return ATTN_OK;
}

/* The image's format from its extension (png, svg, pdf); NULL: none of them. */
static const char *format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && bench_gnuplot_format_ok(dot + 1) ? dot + 1 : NULL;
}

/* The default image: plots/pattern_<kinds>_n<N>[_causal].png (plots/ made if missing). */
static attn_status default_out(const bench_pattern_panel *panels, int npanels, const attn_shape *s,
                               const char *dataset, char *path, size_t len, char *msg,
                               size_t msg_len)
{
    char dir[4096];
    bench_default_plot_dir(dir, sizeof dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot make %s: %s (give --out FILE.png)", dir,
                         strerror(errno));
    int w = snprintf(path, len, "%s/pattern", dir);
    for (int k = 0; k < npanels && w < (int)len; k++)
        w += snprintf(path + w, len - (size_t)w, "_%s", panels[k].ops->name);
    if (w < (int)len)
        snprintf(path + w, len - (size_t)w, "_n%lld%s%s%s.png", (long long)s->S,
                 s->causal ? "_causal" : "", dataset ? "_" : "", dataset ? dataset : "");
    return ATTN_OK;
}

/* What the request asks that cannot be drawn, refused before any work: a kind refusing the shape
 * (when drawn alone or on --dataset; beside other kinds, its panel says why), an --out of another
 * format, options that go with --dataset only or never with it, and outputs that are not
 * writable, are each other or name a results file (targets.h). The image's path into path. */
static attn_status check_request(const pattern_opts *o, bench_pattern_panel *panels, int npanels,
                                 const attn_shape *s, const pattern_input *in, bool draw,
                                 char *path, size_t path_len, char *msg, size_t msg_len)
{
    attn_shape ran;
    for (int k = 0; k < (in->ds || npanels == 1 ? npanels : 0); k++)
        if (bench_pattern_shape(&panels[k], s, &ran, msg, msg_len)) return ATTN_EINVAL;
    if (o->out && !format_of(o->out))
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--out needs a file ending in .png, .svg or .pdf");
    if (o->data && in->ds)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--data writes the cells: not with --dataset");
    if ((o->seed || o->head_dim) && !in->ds)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--seed and --head-dim set the inputs of --dataset: give --dataset NAME, "
                         "or a kind's seed as seed=N");
    if (o->out) snprintf(path, path_len, "%s", o->out);
    else if (draw && default_out(panels, npanels, s, in->ds ? in->ds->name : NULL, path, path_len,
                                 msg, msg_len))
        return ATTN_EINVAL;
    const bool data_file = o->data && strcmp(o->data, "-") != 0;
    const bench_input image[] = {{"--data", data_file ? o->data : NULL}},
                      data[] = {{"--out", draw ? path : NULL}};
    if ((draw && bench_check_target(path, "--out", BENCH_TARGET_FILE, image, 1, msg, msg_len)) ||
        (data_file &&
         bench_check_target(o->data, "--data", BENCH_TARGET_FILE, data, 1, msg, msg_len)))
        return ATTN_EINVAL;
    return ATTN_OK;
}

/* The cells as digits into `to` (-: stdout; a file: written whole, then renamed into place). */
static attn_status write_data(const char *to, bench_pattern_panel *panels, int npanels,
                              const attn_shape *s, int64_t head, char *msg, size_t msg_len)
{
    if (strcmp(to, "-") == 0)
        return bench_pattern_write_data(stdout, panels, npanels, s, head, msg, msg_len);
    char tmp[4400];
    FILE *f = bench_tmp_fopen(to, tmp, sizeof tmp, msg, msg_len);
    if (!f) return ATTN_EINVAL;
    const attn_status st = bench_pattern_write_data(f, panels, npanels, s, head, msg, msg_len);
    return bench_tmp_fclose(f, tmp, to, st, msg, msg_len);
}

int bench_cmd_pattern(int argc, char **argv)
{
    pattern_opts o = {0};
    const bench_opt opts[] = {
        {"--kinds", "K1,K2", "several kinds side by side (instead of KIND)", &o.kinds},
        {"--n", "N", "queries and keys (default 256; at most 16384)", &o.n},
        {"--q-len", "T", "queries (default: n)", &o.q_len},
        {"--kv-len", "S", "keys (default: n)", &o.kv_len},
        {"--causal", "0|1", "causal mask (default 0)", &o.causal},
        {"--heads", "H", "query heads of the shape (default 1)", &o.heads},
        {"--kv-heads", "N", "KV heads (default: the kind's for --heads)", &o.kv_heads},
        {"--head", "I", "the query head drawn (default 0; patterns may differ by head)", &o.head},
        {"--out", "FILE", "the image, .png, .svg or .pdf (default: plots/pattern_<kinds>_n<N>.png)",
         &o.out},
        {"--data", "FILE",
         "write the cells as digits, one line per query row (-: stdout); no image unless --out",
         &o.data},
        {"--dataset", "NAME", "draw the kind's weights on this input instead (bench datasets)",
         &o.dataset},
        {"--seed", "N", "seed of the dataset's inputs (default 1)", &o.seed},
        {"--head-dim", "D", "head dimension of the inputs (default 64)", &o.head_dim},
        {"--help", NULL, "this help", &o.help},
    };
    const char *pos[1 + ATTN_MAX_PARAMS];
    int npos = 0;
    char msg[ATTN_MSG_LEN];
    if (bench_parse_opts(argc, argv, 2, opts, BENCH_COUNT(opts), pos, 1 + ATTN_MAX_PARAMS, &npos,
                         "pattern", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (o.help) {
        bench_print_help("bench pattern KIND [NAME=VALUE ...] [options]\n"
                         "       bench pattern --kinds K1,K2,... [NAME=VALUE ...] [options]",
                         pattern_description, opts, BENCH_COUNT(opts));
        return 0;
    }
    bench_pattern_panel panels[BENCH_PATTERN_PANELS];
    int npanels = 0;
    attn_shape s;
    int64_t head;
    char path[4400];
    pattern_input in;
    int64_t seed = 1;
    if (choose(&o, pos, npos, panels, &npanels, &in, msg, sizeof msg) ||
        (o.seed && bench_parse_i64(o.seed, "--seed", 0, INT64_MAX, &seed, msg, sizeof msg)) ||
        parse_shape(&o, &s, &head, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    const bool draw = o.out || !o.data; /* --data alone: the data only */
    if (check_request(&o, panels, npanels, &s, &in, draw, path, sizeof path, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    attn_status st = ATTN_OK;
    if (in.ds) {
        st = bench_pattern_weights_draw(panels, npanels, &s, head, in.ds, &in.params,
                                        (uint64_t)seed, path, format_of(path), msg, sizeof msg);
        if (st != ATTN_OK) return bench_fail(st, msg);
        printf("wrote %s\n", path);
        return 0;
    }
    if (o.data && (st = write_data(o.data, panels, npanels, &s, head, msg, sizeof msg)) != ATTN_OK)
        return bench_fail(st, msg);
    if (!draw) return 0;
    st = bench_pattern_draw(panels, npanels, &s, head, path, format_of(path), msg, sizeof msg);
    if (st != ATTN_OK) return bench_fail(st, msg);
    printf("wrote %s\n", path);
    return 0;
}
