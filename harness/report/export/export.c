/*
 * export.c — the registry of `bench export` formats (export.h): the table that lists them, the
 * --table names, loading a table's rows, and writing one document to a file atomically or to
 * stdout. What each document holds is its format's file (export_csv.c, export_json.c,
 * export_markdown.c).
 */
#include "export.h"

#include "atomic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the formats: one line each, in the order --help lists them ---- */

extern const bench_export_format bench_export_csv, bench_export_json, bench_export_markdown;

static const bench_export_format *const formats[] = {
    &bench_export_csv,
    &bench_export_json,
    &bench_export_markdown,
};
enum { NFORMATS = sizeof formats / sizeof formats[0] };

int bench_export_format_count(void) { return NFORMATS; }

const bench_export_format *bench_export_format_at(int i)
{
    return i >= 0 && i < NFORMATS ? formats[i] : NULL;
}

const bench_export_format *bench_export_format_find(const char *name)
{
    for (int i = 0; name && i < NFORMATS; i++)
        if (strcmp(formats[i]->name, name) == 0) return formats[i];
    return NULL;
}

/* names[0..n) joined into buf: sep between two, last before the last one. */
static const char *join(const char *const *names, int n, const char *sep, const char *last,
                        char *buf, size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && w < len; i++) {
        const char *before = i == 0 ? "" : i < n - 1 ? sep : last;
        const int k = snprintf(buf + w, len - w, "%s%s", before, names[i]);
        w += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

const char *bench_export_format_names(const char *sep, const char *last, char *buf, size_t len)
{
    const char *names[NFORMATS];
    for (int i = 0; i < NFORMATS; i++) names[i] = formats[i]->name;
    return join(names, NFORMATS, sep, last, buf, len);
}

/* ---- the tables, by their --table names ---- */

static const struct {
    bench_table_id id;
    const char *name;
} tables[] = {
    {BENCH_TABLE_POINTS, "points"}, {BENCH_TABLE_RUNS, "runs"}, {BENCH_TABLE_SAMPLES, "samples"},
    {BENCH_TABLE_HOSTS, "hosts"},   {BENCH_TABLE_FITS, "fits"},
};
enum { NTABLES = sizeof tables / sizeof tables[0] };

int bench_export_table_count(void) { return NTABLES; }

bench_table_id bench_export_table_at(int i) { return tables[i].id; }

const char *bench_export_table_name(bench_table_id t)
{
    for (int i = 0; i < NTABLES; i++)
        if (tables[i].id == t) return tables[i].name;
    return NULL;
}

bool bench_export_table_find(const char *name, bench_table_id *t)
{
    for (int i = 0; name && i < NTABLES; i++)
        if (strcmp(tables[i].name, name) == 0) {
            *t = tables[i].id;
            return true;
        }
    return false;
}

const char *bench_export_table_names(const char *sep, const char *last, char *buf, size_t len)
{
    const char *names[NTABLES];
    for (int i = 0; i < NTABLES; i++) names[i] = tables[i].name;
    return join(names, NTABLES, sep, last, buf, len);
}

/* ---- the rows ---- */

const void *bench_export_cell(const bench_export_data *d, int64_t r, const bench_column *c)
{
    return (const char *)d->rows + (size_t)r * d->row_size + c->offset;
}

static int64_t row_run(const bench_export_data *d, int64_t r)
{
    int64_t id; /* every table starts with run_id (int64) */
    memcpy(&id, (const char *)d->rows + (size_t)r * d->row_size, sizeof id);
    return id;
}

attn_status bench_export_load(bench_export_data *d, char *msg, size_t msg_len)
{
    attn_status st = bench_store_read_runs(d->path, &d->runs, &d->nruns, msg, msg_len);
    if (st != ATTN_OK) return st;
    bool known = d->run_id == 0;
    for (int64_t r = 0; r < d->nruns; r++) known |= d->runs[r].run_id == d->run_id;
    if (!known)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s has no run %lld (it has %lld run%s)",
                         d->path, (long long)d->run_id, (long long)d->nruns,
                         d->nruns == 1 ? "" : "s");
    void *rows = NULL;
    if (d->table == BENCH_TABLE_POINTS)
        st = bench_store_read_points(d->path, (bench_point **)&rows, &d->n, msg, msg_len);
    else if (d->table == BENCH_TABLE_FITS)
        st = bench_store_read_fits(d->path, (bench_fit_row **)&rows, &d->n, msg, msg_len);
    else if (d->table == BENCH_TABLE_SAMPLES)
        st = bench_store_read_samples(d->path, (bench_sample **)&rows, &d->n, msg, msg_len);
    else if (d->table == BENCH_TABLE_HOSTS)
        st = bench_store_read_hosts(d->path, (bench_host **)&rows, &d->n, msg, msg_len);
    else {
        rows = malloc((size_t)(d->nruns ? d->nruns : 1) * sizeof *d->runs);
        if (rows) memcpy(rows, d->runs, (size_t)d->nruns * sizeof *d->runs), d->n = d->nruns;
        else st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    }
    d->rows = rows;
    d->row_size = bench_store_row_size(d->table);
    if (st != ATTN_OK || d->run_id == 0) return st;
    int64_t kept = 0;
    for (int64_t r = 0; r < d->n; r++)
        if (row_run(d, r) == d->run_id) {
            if (kept != r)
                memcpy((char *)d->rows + (size_t)kept * d->row_size,
                       (char *)d->rows + (size_t)r * d->row_size, d->row_size);
            kept++;
        }
    d->n = kept;
    return ATTN_OK;
}

void bench_export_free(bench_export_data *d)
{
    free(d->rows);
    free(d->runs);
    d->rows = NULL, d->runs = NULL;
    d->n = d->nruns = 0;
}

void bench_export_cell_text(const bench_column *c, const void *p, int digits, char *buf, size_t len)
{
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    double f;
    switch (c->type) {
    case BENCH_COL_I32: memcpy(&i32, p, sizeof i32), snprintf(buf, len, "%d", (int)i32); break;
    case BENCH_COL_I64:
        memcpy(&i64, p, sizeof i64), snprintf(buf, len, "%lld", (long long)i64);
        break;
    case BENCH_COL_U64:
        memcpy(&u64, p, sizeof u64), snprintf(buf, len, "%llu", (unsigned long long)u64);
        break;
    case BENCH_COL_F64:
        memcpy(&f, p, sizeof f);
        if (isnan(f)) buf[0] = '\0';
        else if (isinf(f)) snprintf(buf, len, "%s", f > 0 ? "inf" : "-inf");
        else snprintf(buf, len, "%.*g", digits, f);
        break;
    case BENCH_COL_STR: snprintf(buf, len, "%s", (const char *)p); break;
    }
}

/* ---- the document ---- */

attn_status bench_export_write(const bench_export_data *d, const bench_export_format *fmt,
                               const char *out, char *msg, size_t msg_len)
{
    if (!out) {
        attn_status st = fmt->write(stdout, d);
        if (fflush(stdout) != 0 || ferror(stdout)) st = ATTN_EFAIL;
        if (st != ATTN_OK) attn_fail(st, msg, msg_len, "cannot write the export to stdout");
        return st;
    }
    char tmp[BENCH_PATH_MAX];
    FILE *f = bench_tmp_fopen(out, tmp, sizeof tmp, msg, msg_len);
    if (!f) return ATTN_EFAIL;
    attn_status st = fmt->write(f, d);
    if (st != ATTN_OK)
        attn_fail(st, msg, msg_len, "cannot write the export to %s: out of memory", out);
    return bench_tmp_fclose(f, tmp, out, st, msg, msg_len);
}
