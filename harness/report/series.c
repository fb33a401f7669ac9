/* series.c — one run's points as series, their labels and shared settings (series.h). */
#include "series.h"

#include "fit.h"
#include "point.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading a run ---- */

/* The shape a point ran with. */
static attn_shape point_shape(const bench_point *pt)
{
    attn_shape s = attn_shape_init(pt->batch, pt->heads, pt->kv_heads, pt->q_len, pt->kv_len,
                                   pt->head_dim, pt->causal != 0);
    s.decode = strcmp(pt->mode, "decode") == 0;
    return s;
}

bool bench_recorded_params(const attn_ops *ops, const char *text, attn_params *p)
{
    *p = attn_params_defaults(attn_kind_params(ops));
    char buf[160], msg[ATTN_MSG_LEN];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return false;
        *eq = '\0';
        if (strcmp(item, BENCH_WEIGHTS_ITEM) == 0) continue; /* where the weights came from */
        if (strcmp(eq + 1, "auto") == 0) continue;           /* the default, resolved per shape */
        if (attn_param_set(attn_kind_params(ops), p, item, eq + 1, msg, sizeof msg) != ATTN_OK)
            return false;
    }
    return true;
}

/* Parameter i's value when left at its default, as the kind resolves it for the point. */
static double resolved_default(const attn_ops *ops, const bench_point *pt, const attn_params *p,
                               int i)
{
    attn_params q = *p;
    q.v[i] = ops->params.defs[i].def;
    attn_shape s = point_shape(pt);
    attn_params_resolve(ops, &s, &q);
    return q.v[i];
}

void bench_series_normalize(bench_run_data *rd, const attn_ops *(*find)(const char *name))
{
    for (int64_t p = 0; p < rd->n; p++) snprintf(rd->params[p], 160, "%s", rd->pts[p].params);
    for (int64_t first = 0; first < rd->n; first++) {
        const attn_ops *ops = find(rd->pts[first].kind);
        bool seen = false;
        for (int64_t e = 0; e < first && !seen; e++)
            seen = strcmp(rd->pts[e].kind, rd->pts[first].kind) == 0;
        if (!ops || !ops->resolve || seen) continue; /* unknown here, nothing to resolve, or done */
        bool autocap[ATTN_MAX_PARAMS] = {false};
        for (int64_t p = first; p < rd->n; p++) {
            attn_params v;
            if (strcmp(rd->pts[p].kind, ops->name) != 0 ||
                !bench_recorded_params(ops, rd->pts[p].params, &v))
                continue;
            for (int i = 0; i < ops->params.count; i++)
                autocap[i] |= resolved_default(ops, &rd->pts[p], &v, i) != ops->params.defs[i].def;
        }
        for (int64_t p = first; p < rd->n; p++) {
            attn_params v;
            if (strcmp(rd->pts[p].kind, ops->name) != 0 ||
                !bench_recorded_params(ops, rd->pts[p].params, &v))
                continue;
            /* the recorded items in their order, an auto value's replaced by "auto" */
            char items[160];
            int w = 0;
            snprintf(items, sizeof items, "%s", rd->pts[p].params);
            for (char *save = NULL, *item = strtok_r(items, ",", &save); item && w < 160;
                 item = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(item, '=');
                *eq = '\0'; /* bench_recorded_params saw every item has one */
                const int i = attn_param_index(attn_kind_params(ops), item);
                const bool is_auto =
                    i >= 0 && autocap[i] && resolved_default(ops, &rd->pts[p], &v, i) == v.v[i];
                w += snprintf(rd->params[p] + w, 160 - (size_t)w, "%s%s=%s", w ? "," : "", item,
                              is_auto ? "auto" : eq + 1);
            }
        }
    }
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const bench_sample *sort_samples; /* qsort has no context argument */

static int by_point_then_rep(const void *a, const void *b)
{
    const bench_sample *x = &sort_samples[*(const int64_t *)a],
                       *y = &sort_samples[*(const int64_t *)b];
    if (x->point_id != y->point_id)
        return (x->point_id > y->point_id) - (x->point_id < y->point_id);
    return (x->rep > y->rep) - (x->rep < y->rep);
}

/* rd's repetitions from /samples (rd->pts loaded): each point's, ascending. */
static attn_status load_samples(bench_run_data *rd, char *msg, size_t msg_len)
{
    bench_sample *all = NULL;
    int64_t nall = 0, m = 0;
    attn_status st = bench_store_read_samples(rd->path, &all, &nall, msg, msg_len);
    int64_t *order = st ? NULL : malloc((size_t)(nall > 0 ? nall : 1) * sizeof *order);
    rd->samples = st ? NULL : malloc((size_t)(nall > 0 ? nall : 1) * sizeof *rd->samples);
    rd->sample_first = calloc((size_t)rd->n, sizeof *rd->sample_first);
    rd->sample_count = calloc((size_t)rd->n, sizeof *rd->sample_count);
    if (!st && (!order || !rd->samples || !rd->sample_first || !rd->sample_count))
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory reading %s", rd->path);
    for (int64_t i = 0; !st && i < nall; i++)
        if (all[i].run_id == rd->run.run_id) order[m++] = i;
    sort_samples = all;
    if (!st) qsort(order, (size_t)m, sizeof *order, by_point_then_rep);
    /* points in file order have ascending point_id: walk both lists together */
    for (int64_t p = 0, i = 0; !st && p < rd->n; p++) {
        while (i < m && all[order[i]].point_id < rd->pts[p].point_id) i++;
        rd->sample_first[p] = i;
        while (i < m && all[order[i]].point_id == rd->pts[p].point_id)
            rd->samples[i] = all[order[i]].seconds, i++, rd->sample_count[p]++;
        qsort(rd->samples + rd->sample_first[p], (size_t)rd->sample_count[p], sizeof *rd->samples,
              by_value);
    }
    free(order);
    free(all);
    if (st) bench_run_data_free(rd);
    return st;
}

bool bench_point_time_ci(const bench_run_data *rd, int64_t p, double *lo, double *hi, int64_t *reps)
{
    *reps = rd->sample_count ? rd->sample_count[p] : 0;
    if (*reps == 1 || (*reps == 0 && rd->pts[p].reps < 2)) return false; /* not measured */
    if (*reps > 0) {
        bench_median_ci(rd->samples + rd->sample_first[p], *reps, lo, hi, NULL);
    } else {
        *lo = rd->pts[p].time_min_s;
        *hi = rd->pts[p].time_max_s;
    }
    return isfinite(*lo) && isfinite(*hi) && *lo > 0 && *hi >= *lo;
}

attn_status bench_run_load(const char *path, int64_t run_id, bench_run_data *rd, char *msg,
                           size_t msg_len)
{
    memset(rd, 0, sizeof *rd);
    snprintf(rd->path, sizeof rd->path, "%s", path);
    bench_run *runs = NULL;
    bench_point *all = NULL;
    int64_t nall = 0;
    attn_status st = bench_store_read_runs(path, &runs, &rd->nruns, msg, msg_len);
    if (st) return st;
    int64_t r = rd->nruns - 1;
    if (run_id != 0)
        for (r = 0; r < rd->nruns && runs[r].run_id != run_id; r++) {}
    if (rd->nruns == 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s has no runs yet (fill it with bench sweep "
                       "--out %s)",
                       path, path);
    else if (r == rd->nruns)
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s has no run %lld (it has runs %lld..%lld)",
                       path, (long long)run_id, (long long)runs[0].run_id,
                       (long long)runs[rd->nruns - 1].run_id);
    if (!st) {
        rd->run = runs[r];
        st = bench_store_read_points(path, &all, &nall, msg, msg_len);
    }
    free(runs);
    if (st) return st;
    rd->pts = malloc((size_t)(nall > 0 ? nall : 1) * sizeof *rd->pts);
    rd->params = malloc((size_t)(nall > 0 ? nall : 1) * sizeof *rd->params);
    if (!rd->pts || !rd->params) {
        free(all);
        bench_run_data_free(rd);
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory reading %s", path);
    }
    for (int64_t p = 0; p < nall; p++) {
        if (all[p].run_id != rd->run.run_id) continue;
        if (strcmp(all[p].status, "ok") != 0) {
            rd->failed++;
            continue;
        }
        bench_point *pt = &rd->pts[rd->n++];
        *pt = all[p];
        if (!pt->pass[0]) snprintf(pt->pass, sizeof pt->pass, "forward");
        if (!pt->dtype[0]) snprintf(pt->dtype, sizeof pt->dtype, "f32");
    }
    free(all);
    if (rd->n == 0) {
        long long id = (long long)rd->run.run_id, failed = (long long)rd->failed;
        bench_run_data_free(rd);
        if (failed)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "run %lld of %s has no measured point: all "
                             "%lld failed (see their status and message)",
                             id, path, failed);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "run %lld of %s has no points (was its sweep "
                         "interrupted before the first one ended?)",
                         id, path);
    }
    bench_series_normalize(rd, attn_kind_find);
    return load_samples(rd, msg, msg_len);
}

void bench_run_data_free(bench_run_data *rd)
{
    free(rd->pts);
    free(rd->params);
    free(rd->samples);
    free(rd->sample_first);
    free(rd->sample_count);
    rd->pts = NULL;
    rd->params = NULL;
    rd->samples = NULL;
    rd->sample_first = rd->sample_count = NULL;
    rd->n = 0;
}

double bench_expected_bytes(const bench_point *pt)
{
    const double q =
        (double)pt->batch * (double)pt->heads * (double)pt->q_len * (double)pt->head_dim;
    const double kv =
        (double)pt->batch * (double)pt->kv_heads * (double)pt->kv_len * (double)pt->head_dim;
    return sizeof(float) * (2 * q + 2 * kv) + (double)pt->workspace_bytes + (double)pt->state_bytes;
}

double bench_rss_of(const bench_point *pt, bool added)
{
    if (pt->peak_rss_bytes < 0 || (added && pt->base_rss_bytes < 0)) return NAN;
    return (double)(pt->peak_rss_bytes - (added ? pt->base_rss_bytes : 0));
}

/* ---- grouping ---- */

void bench_param_value(const char *params, const char *name, char *buf, size_t len)
{
    buf[0] = '\0';
    const size_t nl = strlen(name);
    for (const char *s = params; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
        if (strncmp(s, name, nl) == 0 && s[nl] == '=') {
            const char *end = strchr(s + nl + 1, ',');
            snprintf(buf, len, "%.*s",
                     (int)(end ? end - (s + nl + 1) : (ptrdiff_t)strlen(s + nl + 1)), s + nl + 1);
            return;
        }
}

/* Equal "name=value" lists, leaving out parameter `except` (NULL: none). */
static bool same_params(const char *a, const char *b, const char *except)
{
    if (!except) return strcmp(a, b) == 0;
    char va[64], vb[64];
    for (int pass = 0; pass < 2; pass++) { /* every name of a in b, then of b in a */
        const char *x = pass ? b : a, *y = pass ? a : b;
        for (const char *s = x; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
            const char *eq = strchr(s, '=');
            if (!eq) return strcmp(a, b) == 0;
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
            if (strcmp(name, except) == 0) continue;
            bench_param_value(x, name, va, sizeof va);
            bench_param_value(y, name, vb, sizeof vb);
            if (strcmp(va, vb) != 0) return false;
        }
    }
    return true;
}

/* The kernel set: a point of a file written before the isa column (isa "") matches any. */
bool bench_same_settings(const bench_run_data *rd, int64_t a, int64_t b, bench_group_by by)
{
    const bench_point *p = &rd->pts[a], *q = &rd->pts[b];
    const unsigned f = by.fields;
    return !((f & BENCH_K_KIND && strcmp(p->kind, q->kind) != 0) ||
             (f & BENCH_K_PARAMS && !same_params(rd->params[a], rd->params[b], by.except_param)) ||
             (f & BENCH_K_DATASET && (strcmp(p->dataset, q->dataset) != 0 ||
                                      strcmp(p->dataset_params, q->dataset_params) != 0)) ||
             (f & BENCH_K_MODE && strcmp(p->mode, q->mode) != 0) ||
             (f & BENCH_K_CAUSAL && p->causal != q->causal) ||
             (f & BENCH_K_PASS && strcmp(p->pass, q->pass) != 0) ||
             (f & BENCH_K_DTYPE && strcmp(p->dtype, q->dtype) != 0) ||
             (f & BENCH_K_BATCH && p->batch != q->batch) ||
             (f & BENCH_K_HEADS && p->heads != q->heads) ||
             (f & BENCH_K_KV_HEADS && p->kv_heads != q->kv_heads) ||
             (f & BENCH_K_HEAD_DIM && p->head_dim != q->head_dim) ||
             (f & BENCH_K_Q_LEN && strcmp(p->mode, "decode") == 0 && p->q_len != q->q_len) ||
             (f & BENCH_K_N && p->kv_len != q->kv_len) ||
             (f & BENCH_K_THREADS && p->threads != q->threads) ||
             (f & BENCH_K_ISA && p->isa[0] && q->isa[0] && strcmp(p->isa, q->isa) != 0));
}

static const double *sort_x; /* qsort has no context argument */

static int by_x(const void *a, const void *b)
{
    const double xa = sort_x[*(const int64_t *)a], xb = sort_x[*(const int64_t *)b];
    if (xa != xb) return (xa > xb) - (xa < xb);
    return (*(const int64_t *)a > *(const int64_t *)b) -
           (*(const int64_t *)a < *(const int64_t *)b);
}

attn_status bench_series_group(const bench_run_data *rd, const int64_t *idx, int64_t m,
                               bench_group_by by, const double *x, bench_series **set,
                               int64_t *nset)
{
    *set = NULL;
    *nset = 0;
    bench_series *s = calloc((size_t)(m > 0 ? m : 1), sizeof *s);
    if (!s) return ATTN_EFAIL;
    int64_t ns = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t k = 0;
        while (k < ns && !bench_same_settings(rd, s[k].idx[0], idx[i], by)) k++;
        if (k == ns) {
            if (!(s[ns].idx = malloc((size_t)m * sizeof *s[ns].idx))) {
                bench_series_free(s, ns);
                return ATTN_EFAIL;
            }
            ns++;
        }
        s[k].idx[s[k].n++] = idx[i];
    }
    sort_x = x;
    for (int64_t k = 0; k < ns; k++) qsort(s[k].idx, (size_t)s[k].n, sizeof *s[k].idx, by_x);
    *set = s;
    *nset = ns;
    return ATTN_OK;
}

void bench_series_free(bench_series *set, int64_t nset)
{
    for (int64_t k = 0; set && k < nset; k++) free(set[k].idx);
    free(set);
}

/* Settings a series shares with its full reference: all but n, kind and params. */
static const bench_group_by same_shape = {BENCH_K_ALL & ~BENCH_K_N & ~BENCH_K_KIND &
                                              ~BENCH_K_PARAMS,
                                          NULL};

int64_t bench_series_reference(const bench_run_data *rd, const bench_series *set, int64_t nset,
                               int64_t k)
{
    const int64_t me = set[k].idx[0];
    if (strcmp(rd->pts[me].kind, "full") == 0) return -1;
    char def[160] = "";
    const attn_ops *full = attn_kind_find("full");
    if (full) {
        attn_params p = attn_params_defaults(attn_kind_params(full));
        attn_params_format(attn_kind_params(full), &p, def, sizeof def);
    }
    for (int pass = 0; pass < 2; pass++) {
        int64_t found = -1;
        for (int64_t r = 0; r < nset; r++) {
            const int64_t o = set[r].idx[0];
            if (strcmp(rd->pts[o].kind, "full") != 0) continue;
            bench_group_by by = same_shape;
            if (pass == 1) {
                by.fields &= ~BENCH_K_KV_HEADS;
                if (rd->pts[o].kv_heads != rd->pts[o].heads) continue;
            }
            if (!bench_same_settings(rd, me, o, by)) continue;
            if (found < 0 || strcmp(rd->params[o], def) == 0) found = r;
        }
        if (found >= 0) return found;
    }
    return -1;
}

/* ---- labels ---- */

const char *bench_format_count(double v, char *buf, size_t len)
{
    const double m = 1048576, k = 1024;
    if (v >= m && fmod(v, m / 2) == 0) snprintf(buf, len, "%gM", v / m);
    else if (v >= k && fmod(v, k / 2) == 0) snprintf(buf, len, "%gK", v / k);
    else snprintf(buf, len, "%g", v);
    return buf;
}

/* Append " <text>" to buf at *w. */
static void add(char *buf, size_t len, int *w, const char *fmt, const char *text)
{
    if (*w < (int)len) *w += snprintf(buf + *w, len - (size_t)*w, fmt, text);
}

/* In labels, non-causal goes without saying: only "causal" is written. */
enum { BENCH_K_CAUSAL_LABEL = 1u << 30 };

/* The text of setting bit f of point p (kind and params excluded). */
static void setting_text(const bench_run_data *rd, int64_t p, unsigned f, char *buf, size_t len)
{
    const bench_point *pt = &rd->pts[p];
    char c[32];
    buf[0] = '\0';
    if (f == BENCH_K_DATASET)
        snprintf(buf, len, "%s%s%s%s", pt->dataset, pt->dataset_params[0] ? "(" : "",
                 pt->dataset_params, pt->dataset_params[0] ? ")" : "");
    else if (f == BENCH_K_MODE) snprintf(buf, len, "%s", pt->mode);
    else if (f == BENCH_K_CAUSAL) snprintf(buf, len, "%s", pt->causal ? "causal" : "non-causal");
    else if (f == BENCH_K_CAUSAL_LABEL) snprintf(buf, len, "%s", pt->causal ? "causal" : "");
    else if (f == BENCH_K_PASS) snprintf(buf, len, "%s", pt->pass);
    else if (f == BENCH_K_DTYPE) snprintf(buf, len, "%s", pt->dtype);
    else if (f == BENCH_K_BATCH) snprintf(buf, len, "B=%lld", (long long)pt->batch);
    else if (f == BENCH_K_HEADS) snprintf(buf, len, "H=%lld", (long long)pt->heads);
    else if (f == BENCH_K_KV_HEADS) snprintf(buf, len, "Hkv=%lld", (long long)pt->kv_heads);
    else if (f == BENCH_K_HEAD_DIM) snprintf(buf, len, "D=%lld", (long long)pt->head_dim);
    else if (f == BENCH_K_Q_LEN && strcmp(pt->mode, "decode") == 0)
        snprintf(buf, len, "q_len=%lld", (long long)pt->q_len);
    else if (f == BENCH_K_N)
        snprintf(buf, len, "n=%s", bench_format_count((double)pt->kv_len, c, sizeof c));
    else if (f == BENCH_K_THREADS) snprintf(buf, len, "threads=%d", (int)pt->threads);
    else if (f == BENCH_K_ISA) snprintf(buf, len, "%s", pt->isa);
}

/* The settings shown after kind and params, in this order. */
static const unsigned shown[] = {BENCH_K_CAUSAL,   BENCH_K_PASS,     BENCH_K_DTYPE, BENCH_K_DATASET,
                                 BENCH_K_MODE,     BENCH_K_Q_LEN,    BENCH_K_BATCH, BENCH_K_HEADS,
                                 BENCH_K_KV_HEADS, BENCH_K_HEAD_DIM, BENCH_K_N,     BENCH_K_THREADS,
                                 BENCH_K_ISA};

/* Does setting `what` differ between two series of one kind? (A setting that differs only
 * between kinds, like the kv_heads of mqa and full, is said once in the subtitle instead.) */
static bool varies_within_kind(const bench_run_data *rd, const bench_series *set, int64_t nset,
                               unsigned what)
{
    char a[160], b[160];
    for (int64_t k = 0; k < nset; k++) {
        setting_text(rd, set[k].idx[0], what, a, sizeof a);
        for (int64_t o = k + 1; o < nset; o++) {
            if (strcmp(rd->pts[set[k].idx[0]].kind, rd->pts[set[o].idx[0]].kind) != 0) continue;
            setting_text(rd, set[o].idx[0], what, b, sizeof b);
            if (strcmp(a, b) != 0) return true;
        }
    }
    return false;
}

/* Point p's dataset as a label names it: its name, and its params only when another series
 * uses the same dataset with other params. */
static void dataset_label(const bench_run_data *rd, const bench_series *set, int64_t nset,
                          int64_t p, char *buf, size_t len)
{
    const bench_point *pt = &rd->pts[p];
    bool params_differ = false;
    for (int64_t k = 0; k < nset && !params_differ; k++) {
        const bench_point *o = &rd->pts[set[k].idx[0]];
        params_differ = strcmp(o->dataset, pt->dataset) == 0 &&
                        strcmp(o->dataset_params, pt->dataset_params) != 0;
    }
    if (params_differ) setting_text(rd, p, BENCH_K_DATASET, buf, len);
    else snprintf(buf, len, "%s", pt->dataset);
}

void bench_series_label(const bench_run_data *rd, const bench_series *set, int64_t nset,
                        int64_t which, bench_group_by by, char *buf, size_t len)
{
    const int64_t me = set[which].idx[0];
    int w = snprintf(buf, len, "%s", rd->pts[me].kind);
    bool kind_said = true; /* "window=64" says "window" already: not "window window=64" */
    /* parameters that differ between series of this kind */
    const char *mine = rd->params[me];
    for (const char *s = mine; by.fields & BENCH_K_PARAMS && s && *s;
         s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
        const char *eq = strchr(s, '=');
        if (!eq) break;
        char name[64], a[64], b[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
        if (by.except_param && strcmp(name, by.except_param) == 0) continue;
        bench_param_value(mine, name, a, sizeof a);
        bool differs = false;
        for (int64_t k = 0; k < nset && !differs; k++) {
            const int64_t o = set[k].idx[0];
            if (strcmp(rd->pts[o].kind, rd->pts[me].kind) != 0) continue;
            bench_param_value(rd->params[o], name, b, sizeof b);
            differs = strcmp(a, b) != 0;
        }
        if (differs) {
            char item[140];
            snprintf(item, sizeof item, "%s=%s", name, a);
            if (kind_said && strcmp(name, rd->pts[me].kind) == 0) w = 0, buf[0] = '\0';
            add(buf, len, &w, w ? " %s" : "%s", item);
            kind_said = false;
        }
    }
    /* the other settings that differ between series of one kind (then named on every line) */
    for (size_t f = 0; f < sizeof shown / sizeof shown[0]; f++) {
        if (!(by.fields & shown[f])) continue;
        const unsigned what = shown[f] == BENCH_K_CAUSAL ? BENCH_K_CAUSAL_LABEL : shown[f];
        if (!varies_within_kind(rd, set, nset, what)) continue;
        char a[160];
        if (shown[f] == BENCH_K_DATASET) dataset_label(rd, set, nset, me, a, sizeof a);
        else setting_text(rd, me, what, a, sizeof a);
        if (a[0]) add(buf, len, &w, " %s", a);
    }
}

void bench_common_settings(const bench_run_data *rd, const int64_t *idx, int64_t m, unsigned fields,
                           char *buf, size_t len)
{
    int w = 0;
    buf[0] = '\0';
    for (size_t f = 0; f < sizeof shown / sizeof shown[0]; f++) {
        /* threads and kernel set: the figure's origin says them when shared (fig_common.c) */
        if (!(fields & shown[f]) || m == 0 || shown[f] & (BENCH_K_THREADS | BENCH_K_ISA)) continue;
        char a[160], b[160], c[160];
        setting_text(rd, idx[0], shown[f], a, sizeof a);
        if (!a[0]) continue;
        bool same = true, per_kind = true; /* shared by all; or by the points of each kind */
        for (int64_t i = 1; i < m; i++) {
            setting_text(rd, idx[i], shown[f], b, sizeof b);
            same &= strcmp(a, b) == 0;
            for (int64_t j = 0; j < i && per_kind; j++) {
                if (strcmp(rd->pts[idx[i]].kind, rd->pts[idx[j]].kind) != 0) continue;
                setting_text(rd, idx[j], shown[f], c, sizeof c);
                per_kind = strcmp(b, c) == 0;
                break; /* the first point of its kind stands for the others */
            }
        }
        if (same) {
            /* f32, the default storage, goes without saying */
            if (shown[f] == BENCH_K_DTYPE && strcmp(a, "f32") == 0) continue;
            add(buf, len, &w, w ? ", %s" : "%s", a);
        } else if (per_kind) { /* "Hkv=8 (mqa Hkv=1, gqa Hkv=2)": the first point's value, then
                                  the kinds whose value is another */
            add(buf, len, &w, w ? ", %s (" : "%s (", a);
            bool first = true;
            for (int64_t i = 1; i < m; i++) {
                bool seen = false;
                for (int64_t j = 0; j < i && !seen; j++)
                    seen = strcmp(rd->pts[idx[i]].kind, rd->pts[idx[j]].kind) == 0;
                setting_text(rd, idx[i], shown[f], b, sizeof b);
                if (seen || strcmp(a, b) == 0) continue;
                char item[200];
                snprintf(item, sizeof item, "%s%s %s", first ? "" : ", ", rd->pts[idx[i]].kind, b);
                add(buf, len, &w, "%s", item);
                first = false;
            }
            add(buf, len, &w, "%s", ")");
        }
    }
}
