/*
 * plot.c — `bench plot`'s driver (plot.h): load a run, make its folder, and for each subset of
 * its points draw the figures of the registry (figures.c) in the table's order; then remove the
 * figures an earlier plot left in the folder. The subsets: each mode measured, in order of first
 * appearance; with several datasets, the cost figures (BENCH_FIG_COST) show the first dataset (a
 * note names the others) and the accuracy figures (BENCH_FIG_ACCURACY) come once per dataset
 * (_<dataset>); with causal 0 and 1 and more than MAX_LINES lines, every figure comes once per
 * causal value (_noncausal, _causal). A figure without data in the run is skipped with one line
 * saying why; the figures over n (bench_figure.over_n) are skipped together when no series has 2
 * or more n.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "figures/figures.h"
#include "plot.h"

/* More lines than this over n with causal 0 and 1: one figure per causal value. */
enum { MAX_LINES = 12 };

/* The parameters swept in ss: names whose (normalized) value differs between two points of one
 * kind. Names go into names[0..*count) (at most max). */
static void swept_params(const plot_ctx *cx, const plot_subset *ss, char names[][64], int *count,
                         int max)
{
    const bench_run_data *rd = cx->rd;
    *count = 0;
    for (int64_t i = 0; i < ss->n; i++) {
        const int64_t a = ss->idx[i];
        const char *params = rd->params[a];
        for (const char *s = params; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
            const char *eq = strchr(s, '=');
            if (!eq || eq - s >= 64) break;
            char name[64], va[64], vb[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
            bool known = false;
            for (int k = 0; k < *count; k++) known |= strcmp(names[k], name) == 0;
            if (known || *count == max) continue;
            bench_param_value(params, name, va, sizeof va);
            for (int64_t j = 0; j < ss->n; j++) {
                const int64_t b = ss->idx[j];
                if (strcmp(rd->pts[a].kind, rd->pts[b].kind) != 0) continue;
                bench_param_value(rd->params[b], name, vb, sizeof vb);
                if (strcmp(va, vb) != 0) {
                    snprintf(names[(*count)++], 64, "%s", name);
                    break;
                }
            }
        }
    }
}

/* The over_n figures of group `which` that say when skipped, as one name:
 * "{time,speedup,memory,throughput}_vs_n", "accuracy_vs_n"; false when there is none. */
static bool over_n_names(unsigned which, char *buf, size_t len)
{
    const char *names[32];
    int n = 0;
    bool vs_n = true; /* every one is NAME_vs_n */
    for (int i = 0; i < bench_figure_count() && n < 32; i++) {
        const bench_figure *fig = bench_figure_at(i);
        if (!(fig->group & which) || !fig->over_n || fig->quiet) continue;
        names[n++] = fig->name;
        const size_t l = strlen(fig->name);
        vs_n &= l > 5 && strcmp(fig->name + l - 5, "_vs_n") == 0;
    }
    if (n <= 1) {
        snprintf(buf, len, "%s", n ? names[0] : "");
        return n == 1;
    }
    size_t w = (size_t)snprintf(buf, len, "{");
    for (int k = 0; k < n && w < len; k++)
        w += (size_t)snprintf(buf + w, len - w, "%s%.*s", k ? "," : "",
                              (int)(strlen(names[k]) - (vs_n ? 5 : 0)), names[k]);
    if (w < len) snprintf(buf + w, len - w, "}%s", vs_n ? "_vs_n" : "");
    return true;
}

/* The figures of the registry in group `which` (BENCH_FIG_COST, BENCH_FIG_ACCURACY or both) for
 * subset ss, in the table's order. */
static attn_status plot_figures(plot_ctx *cx, plot_subset *ss, unsigned which, char *msg,
                                size_t msg_len)
{
    bench_series *set = NULL;
    int64_t nset = 0;
    attn_status st = bench_plot_series_over_n(cx, ss, &set, &nset);
    if (st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bool over_n_curve = false;
    for (int64_t k = 0; k < nset; k++)
        for (int64_t i = 1; i < set[k].n; i++)
            over_n_curve |= cx->rd->pts[set[k].idx[i]].kv_len != cx->rd->pts[set[k].idx[0]].kv_len;
    plot_sets sets = {.over_n = set, .nover_n = nset};
    swept_params(cx, ss, sets.params, &sets.nparams, PLOT_MAX_PARAMS);
    bool said = false; /* the over_n figures' skip line */
    for (int f = 0; !st && f < bench_figure_count(); f++) {
        const bench_figure *fig = bench_figure_at(f);
        if (!(fig->group & which)) continue;
        if (fig->over_n && !over_n_curve) {
            char names[256];
            if (!said && over_n_names(which, names, sizeof names))
                bench_plot_skip(cx, ss, names,
                                "every series has a single n (sweep --n with 2 or more values)");
            said = true;
            continue;
        }
        for (int64_t i = 0; fig->over_n && i < ss->n; i++) /* the x of the series over n */
            ss->x[ss->idx[i]] = (double)cx->rd->pts[ss->idx[i]].kv_len;
        st = fig->draw(cx, ss, &sets, msg, msg_len);
    }
    bench_series_free(set, nset);
    return st;
}

/* The points of ss that share the settings `fields` with point like, into sub (its idx has room
 * for ss->n). */
static void narrow(const plot_ctx *cx, const plot_subset *ss, plot_subset *sub, int64_t like,
                   unsigned fields)
{
    const bench_group_by by = {fields, NULL};
    sub->n = 0;
    for (int64_t i = 0; i < ss->n; i++)
        if (bench_same_settings(cx->rd, ss->idx[i], like, by)) sub->idx[sub->n++] = ss->idx[i];
}

/* ss's figures `which`; with causal 0 and 1 and more than MAX_LINES series over n, once per
 * causal value (suffix _noncausal, _causal), the value with more points first (the main figures:
 * a default sweep measures most kinds causal, the few defined without a mask not). */
static attn_status plot_by_causal(plot_ctx *cx, plot_subset *ss, unsigned which, char *msg,
                                  size_t msg_len)
{
    int64_t with[2] = {-1, -1}, points[2] = {0, 0}; /* a point of each causal value; how many */
    for (int64_t i = 0; i < ss->n; i++) {
        const int c = cx->rd->pts[ss->idx[i]].causal != 0;
        with[c] = ss->idx[i], points[c]++;
    }
    bench_series *set = NULL;
    int64_t nset = 0;
    if (with[0] < 0 || with[1] < 0) return plot_figures(cx, ss, which, msg, msg_len);
    if (bench_plot_series_over_n(cx, ss, &set, &nset))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bench_series_free(set, nset);
    if (nset <= MAX_LINES) return plot_figures(cx, ss, which, msg, msg_len);
    plot_subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    attn_status st = ATTN_OK;
    const int major = points[1] > points[0];
    for (int k = 0; !st && k < 2; k++) {
        const int c = k ? !major : major;
        narrow(cx, ss, &sub, with[c], BENCH_K_CAUSAL);
        snprintf(sub.suffix, sizeof sub.suffix, "%s%s", ss->suffix, c ? "_causal" : "_noncausal");
        snprintf(sub.title, sizeof sub.title, "%s%s", ss->title, c ? " (causal)" : " (non-causal)");
        st = plot_figures(cx, &sub, which, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* Every figure of one mode. With several datasets, the time, memory, throughput and heads
 * figures show only the first dataset of the run (times hardly depend on the values; the note
 * says which datasets are left out), and the accuracy figures come once per dataset (suffix
 * _<dataset>). */
static attn_status plot_mode(plot_ctx *cx, plot_subset *ss, char *msg, size_t msg_len)
{
    const unsigned ds = BENCH_K_DATASET;
    int64_t first[64]; /* the first point of each dataset */
    int nds = 0;
    for (int64_t i = 0; i < ss->n && nds < 64; i++) {
        int k = 0;
        while (k < nds &&
               !bench_same_settings(cx->rd, first[k], ss->idx[i], (bench_group_by){ds, NULL}))
            k++;
        if (k == nds) first[nds++] = ss->idx[i];
    }
    if (nds <= 1) return plot_by_causal(cx, ss, BENCH_FIG_COST | BENCH_FIG_ACCURACY, msg, msg_len);
    /* a dataset's name, with its params when another dataset has the same name */
    char text[64][160];
    for (int k = 0; k < nds; k++) {
        const bench_point *pt = &cx->rd->pts[first[k]];
        bool twin = false;
        for (int o = 0; o < nds; o++)
            twin |= o != k && strcmp(cx->rd->pts[first[o]].dataset, pt->dataset) == 0;
        snprintf(text[k], sizeof text[k], "%s%s%s%s", pt->dataset, twin ? "(" : "",
                 twin ? pt->dataset_params : "", twin ? ")" : "");
    }
    plot_subset sub = *ss;
    if (!(sub.idx = malloc((size_t)ss->n * sizeof *sub.idx)))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    narrow(cx, ss, &sub, first[0], ds);
    int w = snprintf(sub.note, sizeof sub.note,
                     "timings and memory on %s only (they hardly depend "
                     "on the data); the run also has ",
                     text[0]);
    for (int k = 1; k < nds && w < (int)sizeof sub.note; k++)
        w +=
            snprintf(sub.note + w, sizeof sub.note - (size_t)w, "%s%s", k > 1 ? ", " : "", text[k]);
    snprintf(sub.title, sizeof sub.title, " on %s", text[0]);
    attn_status st = plot_by_causal(cx, &sub, BENCH_FIG_COST, msg, msg_len);
    sub.note[0] = '\0';
    for (int k = 0; !st && k < nds; k++) {
        narrow(cx, ss, &sub, first[k], ds);
        char safe[64];
        bench_plot_file_safe(cx->rd->pts[first[k]].dataset, safe, sizeof safe);
        int same_name = 0; /* earlier datasets of the same name: _needle, _needle_2 */
        for (int o = 0; o < k; o++)
            same_name += strcmp(cx->rd->pts[first[o]].dataset, cx->rd->pts[first[k]].dataset) == 0;
        if (same_name)
            snprintf(sub.suffix, sizeof sub.suffix, "%s_%s_%d", ss->suffix, safe, same_name + 1);
        else snprintf(sub.suffix, sizeof sub.suffix, "%s_%s", ss->suffix, safe);
        snprintf(sub.title, sizeof sub.title, " on %s", text[k]);
        st = plot_by_causal(cx, &sub, BENCH_FIG_ACCURACY, msg, msg_len);
    }
    free(sub.idx);
    return st;
}

/* mkdir -p */
static attn_status make_dirs(const char *dir, char *msg, size_t msg_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *s = path + 1;; s++) {
        const bool end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return attn_fail(ATTN_EINVAL, msg, msg_len,
                                 "cannot create %s: %s (choose another --out)", path,
                                 strerror(errno));
            if (end) break;
            *s = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is not a directory (choose another --out)",
                         dir);
    if (access(dir, W_OK | X_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot write in %s: %s (choose another --out)",
                         dir, strerror(errno));
    return ATTN_OK;
}

/* Remove the figures in cx->dir that this plot did not write (another run's, an older plot's):
 * a folder holds the figures of one plot. Says how many on out. */
static void remove_stale(const plot_ctx *cx, FILE *out)
{
    DIR *d = opendir(cx->dir);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!bench_figure_file(e->d_name)) continue;
        bool mine = false;
        for (int k = 0; k < cx->nfiles && !mine; k++) mine = strcmp(cx->files[k], e->d_name) == 0;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", cx->dir, e->d_name);
        if (!mine && unlink(path) == 0) removed++;
    }
    if (d) closedir(d);
    if (removed)
        fprintf(out, "removed %d figure%s of an earlier plot from %s\n", removed,
                removed == 1 ? "" : "s", cx->dir);
}

/* The folder of a run's figures when none is given: plots/<file name without .h5>-run<ID>. */
static void run_plot_dir(const char *path, int64_t run_id, char *dir, size_t len)
{
    char root[4096], stem[256];
    bench_default_plot_dir(root, sizeof root);
    const char *file = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", file ? file + 1 : path);
    char *ext = strrchr(stem, '.');
    if (ext && ext != stem) *ext = '\0';
    snprintf(dir, len, "%s/%s-run%lld", root, stem, (long long)run_id);
}

/* Every mode's figures of rd, in order of first appearance. */
static attn_status plot_modes(plot_ctx *cx, char *msg, size_t msg_len)
{
    const bench_run_data *rd = cx->rd;
    plot_subset ss = {0};
    ss.idx = malloc((size_t)rd->n * sizeof *ss.idx);
    ss.x = malloc((size_t)rd->n * sizeof *ss.x);
    attn_status st =
        ss.idx && ss.x ? ATTN_OK : attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    for (int64_t first = 0; !st && first < rd->n; first++) {
        bool seen = false;
        for (int64_t e = 0; e < first && !seen; e++)
            seen = strcmp(rd->pts[e].mode, rd->pts[first].mode) == 0;
        if (seen) continue;
        ss.mode = rd->pts[first].mode;
        ss.n = 0;
        for (int64_t p = 0; p < rd->n; p++)
            if (strcmp(rd->pts[p].mode, ss.mode) == 0) ss.idx[ss.n++] = p;
        st = plot_mode(cx, &ss, msg, msg_len);
    }
    free(ss.idx);
    free(ss.x);
    return st;
}

void bench_plot_drawn_free(bench_plot_drawn *d)
{
    free(d->files);
    d->files = NULL, d->n = 0;
}

attn_status bench_plot_results(const char *path, int64_t run_id, const char *dir,
                               const char *format, FILE *out, bench_plot_drawn *drawn, char *msg,
                               size_t msg_len)
{
    if (drawn) *drawn = (bench_plot_drawn){0};
    if (!bench_gnuplot_format_ok(format))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "--format: '%s' is not png, svg or pdf",
                         format);
    bench_run_data rd;
    attn_status st = bench_run_load(path, run_id, &rd, msg, msg_len);
    if (st) return st;
    char own[4096];
    if (!dir) run_plot_dir(path, rd.run.run_id, own, sizeof own);
    plot_ctx cx = {.rd = &rd, .dir = dir ? dir : own, .format = format, .out = out};
    st = make_dirs(cx.dir, msg, msg_len);
    if (!st) st = bench_gnuplot_open(&cx.gp, msg, msg_len);
    if (!st) st = plot_modes(&cx, msg, msg_len);
    if (!st && cx.written == 0)
        st = attn_fail(ATTN_ENODEF, msg, msg_len,
                       "run %lld of %s: nothing to draw (%d figures "
                       "skipped%s)",
                       (long long)rd.run.run_id, path, cx.skipped,
                       out ? ", see above" : ": sweep --n with 2 or more values");
    else if (!st) {
        remove_stale(&cx, out ? out : stdout);
        fprintf(out ? out : stdout, "plots: %d figure%s of run %lld in %s%s\n", cx.written,
                cx.written == 1 ? "" : "s", (long long)rd.run.run_id, cx.dir,
                rd.failed ? " (failed points left out)" : "");
    }
    if (drawn) *drawn = (bench_plot_drawn){cx.files, cx.nfiles};
    else free(cx.files);
    bench_gnuplot_close(&cx.gp);
    bench_run_data_free(&rd);
    return st;
}

/* plots/ under $ATTNBENCH_HOME (set by ./bench) or the current directory. */
void bench_default_plot_dir(char *dir, size_t len)
{
    const char *home = getenv("ATTNBENCH_HOME");
    snprintf(dir, len, "%s/plots", home && *home ? home : ".");
}
