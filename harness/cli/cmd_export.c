/*
 * cmd_export.c — `bench export FILE.h5 [--run ID] [--table points|runs|samples|hosts|fits]
 * --format csv|json|markdown [--out PATH]`: a table of a results file as CSV or JSON (every
 * column of the HDF5 table, in its order, taken from the store's field tables: a column added
 * there is exported without a change here), or the points as a readable Markdown table.
 *
 * CSV (RFC 4180): a header of column names; strings quoted when they hold a comma, a quote or a
 * line break; reals with 17 significant digits (exact round trip); NaN as an empty field, ±Inf as
 * inf / -inf (pandas reads both). JSON (written by libjansson): a Table Schema document, which
 * pd.read_json(path, orient="table") loads as the table: {"attnbench": {...}, "context": the
 * run's machine and build facts, "runs": every exported run's facts, "schema": {"fields": [...]},
 * "data": [one object per row]}; NaN and ±Inf as null.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "memory.h"
#include "version.h"

/* The rows of one table of a file (the run's alone with --run), and every run for context. */
typedef struct export_data {
    const char *path;
    bench_table_id table;
    void *rows;
    int64_t n;
    size_t row_size;
    bench_run *runs;
    int64_t nruns;
    int64_t run_id; /* --run, or 0 */
} export_data;

/* The tables bench export writes, by their --table name (/run_status has no reader). */
static const char *const table_names[BENCH_NTABLES] = {[BENCH_TABLE_RUNS] = "runs",
                                                       [BENCH_TABLE_POINTS] = "points",
                                                       [BENCH_TABLE_SAMPLES] = "samples",
                                                       [BENCH_TABLE_HOSTS] = "hosts",
                                                       [BENCH_TABLE_FITS] = "fits"};

static const void *cell(const export_data *d, int64_t r, const bench_column *c)
{
    return (const char *)d->rows + (size_t)r * d->row_size + c->offset;
}

static int64_t row_run(const export_data *d, int64_t r)
{
    int64_t id; /* every table starts with run_id (int64) */
    memcpy(&id, (const char *)d->rows + (size_t)r * d->row_size, sizeof id);
    return id;
}

/* Read the table; keep the rows of run d->run_id (all when 0). */
static attn_status load(export_data *d, char *msg, size_t msg_len)
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

/* A number or string cell as CSV/Markdown text: integers exactly, reals with digits significant
 * digits ("" for NaN, inf, -inf), strings as they are. */
static void cell_text(const bench_column *c, const void *p, int digits, char *buf, size_t len)
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

/* ---- CSV ---- */

static void csv_string(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const export_data *d)
{
    const int nc = bench_store_ncolumns(d->table);
    for (int c = 0; c < nc; c++)
        fprintf(f, "%s%s", c ? "," : "", bench_store_column(d->table, c).name);
    fputc('\n', f);
    char buf[1100];
    for (int64_t r = 0; r < d->n; r++) {
        for (int c = 0; c < nc; c++) {
            const bench_column col = bench_store_column(d->table, c);
            if (c) fputc(',', f);
            cell_text(&col, cell(d, r, &col), 17, buf, sizeof buf);
            csv_string(f, buf);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ---- */

static json_t *json_cell(const bench_column *c, const void *p)
{
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    double f;
    switch (c->type) {
    case BENCH_COL_I32: memcpy(&i32, p, sizeof i32); return json_integer(i32);
    case BENCH_COL_I64: memcpy(&i64, p, sizeof i64); return json_integer(i64);
    case BENCH_COL_U64:
        memcpy(&u64, p, sizeof u64);
        return u64 <= INT64_MAX ? json_integer((json_int_t)u64) : json_real((double)u64);
    case BENCH_COL_F64: memcpy(&f, p, sizeof f); return isfinite(f) ? json_real(f) : json_null();
    case BENCH_COL_STR: return json_string((const char *)p);
    }
    return json_null();
}

/* Every column of one row of table t (a struct at row) as a JSON object. */
static json_t *json_row(bench_table_id t, const void *row)
{
    json_t *o = json_object();
    for (int c = 0; o && c < bench_store_ncolumns(t); c++) {
        const bench_column col = bench_store_column(t, c);
        json_object_set_new(o, col.name, json_cell(&col, (const char *)row + col.offset));
    }
    return o;
}

/* The Table Schema of table t: its columns, their types, units and descriptions (as the file's
 * FIELD_<i>_UNIT and FIELD_<i>_DESCRIPTION attributes). */
static json_t *json_schema(bench_table_id t)
{
    json_t *fields = json_array();
    for (int c = 0; fields && c < bench_store_ncolumns(t); c++) {
        const bench_column col = bench_store_column(t, c);
        const char *type = col.type == BENCH_COL_STR   ? "string"
                           : col.type == BENCH_COL_F64 ? "number"
                                                       : "integer";
        json_array_append_new(fields,
                              json_pack("{s:s, s:s, s:s, s:s}", "name", col.name, "type", type,
                                        "unit", col.unit, "description", col.description));
    }
    return json_pack("{s:o, s:s}", "fields", fields, "pandas_version", "1.4.0");
}

/* The run the rows belong to (--run, else the file's last), or NULL when the file has none. */
static const bench_run *context_run(const export_data *d)
{
    for (int64_t r = d->nruns - 1; r >= 0; r--)
        if (d->run_id == 0 || d->runs[r].run_id == d->run_id) return &d->runs[r];
    return NULL;
}

static attn_status write_json(FILE *f, const export_data *d)
{
    const bench_run *ctx = context_run(d);
    json_t *runs = json_array(), *data = json_array();
    for (int64_t r = 0; runs && r < d->nruns; r++)
        if (d->run_id == 0 || d->runs[r].run_id == d->run_id)
            json_array_append_new(runs, json_row(BENCH_TABLE_RUNS, &d->runs[r]));
    for (int64_t r = 0; data && r < d->n; r++)
        json_array_append_new(data, json_row(d->table, (const char *)d->rows + r * d->row_size));
    json_t *doc =
        json_pack("{s:{s:s, s:i, s:s, s:s, s:o, s:s}, s:o, s:o, s:o, s:o}", "attnbench", "format",
                  "attnbench-export", "format_version", 1, "file", d->path, "table",
                  table_names[d->table], "run", d->run_id ? json_integer(d->run_id) : json_null(),
                  "exported_by", "attnbench " BENCH_GIT_COMMIT, "context",
                  ctx ? json_row(BENCH_TABLE_RUNS, ctx) : json_null(), "runs", runs, "schema",
                  json_schema(d->table), "data", data);
    const int err = doc ? json_dumpf(doc, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;
    if (!err) fputc('\n', f);
    json_decref(doc);
    return err ? ATTN_EFAIL : ATTN_OK;
}

/* ---- Markdown ---- */

/* s with | escaped and line breaks as spaces. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

/* Any table, every column (reals with 4 significant digits). */
static void md_generic(FILE *f, const export_data *d)
{
    const int nc = bench_store_ncolumns(d->table);
    for (int pass = 0; pass < 2; pass++) {
        for (int c = 0; c < nc; c++)
            fprintf(f, "| %s ", pass ? "---" : bench_store_column(d->table, c).name);
        fprintf(f, "|\n");
    }
    char buf[1100];
    for (int64_t r = 0; r < d->n; r++) {
        for (int c = 0; c < nc; c++) {
            const bench_column col = bench_store_column(d->table, c);
            cell_text(&col, cell(d, r, &col), 4, buf, sizeof buf);
            fprintf(f, "| ");
            md_text(f, buf);
            fprintf(f, " ");
        }
        fprintf(f, "|\n");
    }
}

static void md_run_heading(FILE *f, const bench_run *r)
{
    fprintf(f, "### Run %lld\n\n", (long long)r->run_id);
    fprintf(f, "- started %s on `%s` (%s), %d thread%s\n", r->started_at, r->host, r->cpu_model,
            (int)r->threads, r->threads == 1 ? "" : "s");
    fprintf(f, "- sgemm %.1f GFLOP/s, memory read %.1f GB/s (measured at the start of the run)\n",
            r->sgemm_gflops, r->mem_bandwidth_gbs);
    fprintf(f, "- build %s, commit %s\n- command: ", r->build, r->git_commit);
    md_text(f, r->command);
    fprintf(f, "\n\n");
}

static void md_point(FILE *f, const bench_point *p)
{
    char ws[32], rss[32];
    bench_format_bytes((double)p->workspace_bytes, ws, sizeof ws);
    if (p->peak_rss_bytes >= 0) bench_format_bytes((double)p->peak_rss_bytes, rss, sizeof rss);
    else snprintf(rss, sizeof rss, "?");
    fprintf(f, "| %s | ", p->kind);
    md_text(f, p->params);
    fprintf(f, " | %s | %s | %lld | %lld | %lld | %lld | %lld | %lld | %s | %d |", p->dataset,
            p->mode, (long long)p->batch, (long long)p->heads, (long long)p->kv_heads,
            (long long)p->q_len, (long long)p->kv_len, (long long)p->head_dim,
            p->causal ? "yes" : "no", (int)p->threads);
    if (strcmp(p->status, "ok") != 0) {
        fprintf(f, " | | | | %s | %s | | %s: ", ws, rss, p->status);
        md_text(f, p->message);
        fprintf(f, " |\n");
        return;
    }
    fprintf(f, " %.4g | %.1f | %.1f | %.2f | %s | %s | %.2e | ok |\n", p->time_median_s * 1e3,
            100 * p->time_cv, p->gflops_per_s, p->gbytes_per_s, ws, rss, p->rel_err);
}

/* The points, run by run: the run's facts, then a table. */
static void md_points(FILE *f, const export_data *d)
{
    const bench_point *pts = d->rows;
    fprintf(f, "## Points of %s\n\n", d->path);
    for (int64_t r = 0; r < d->nruns; r++) {
        int64_t n = 0;
        for (int64_t p = 0; p < d->n; p++) n += pts[p].run_id == d->runs[r].run_id;
        if (n == 0) continue;
        md_run_heading(f, &d->runs[r]);
        fprintf(f, "| kind | params | dataset | mode | B | H | Hkv | T | S | D | causal | threads "
                   "| median ms | cv %% | GFLOP/s | GB/s | workspace | peak RSS | rel_err | "
                   "status |\n");
        fprintf(f, "|---|---|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|"
                   "---|\n");
        for (int64_t p = 0; p < d->n; p++)
            if (pts[p].run_id == d->runs[r].run_id) md_point(f, &pts[p]);
        fprintf(f, "\n");
    }
    if (d->n == 0) fprintf(f, "(no points)\n");
}

/* ---- the command ---- */

static attn_status write_to(FILE *f, const export_data *d, const char *format)
{
    attn_status st = ATTN_OK;
    if (strcmp(format, "csv") == 0) write_csv(f, d);
    else if (strcmp(format, "json") == 0) st = write_json(f, d);
    else if (d->table == BENCH_TABLE_POINTS) md_points(f, d);
    else md_generic(f, d);
    return st;
}

/* Write to out (NULL: stdout); a file is written beside its destination, renamed into place. */
static attn_status export(const export_data *d, const char *format, const char *out, char *msg,
                          size_t msg_len)
{
    char tmp[4200];
    if (out) snprintf(tmp, sizeof tmp, "%s.tmp-%ld", out, (long)getpid());
    FILE *f = out ? fopen(tmp, "w") : stdout;
    if (!f) return attn_fail(ATTN_EINVAL, msg, msg_len, "--out %s: cannot write it", out);
    attn_status st = write_to(f, d, format);
    const bool failed = fflush(f) != 0 || ferror(f);
    if (out && fclose(f) != 0) st = ATTN_EFAIL;
    if (failed) st = ATTN_EFAIL;
    if (st == ATTN_OK && out && rename(tmp, out) != 0) st = ATTN_EFAIL;
    if (out && st != ATTN_OK) unlink(tmp);
    if (st != ATTN_OK)
        attn_fail(st, msg, msg_len, "cannot write the export to %s (disk full?)",
                  out ? out : "stdout");
    return st;
}

int bench_cmd_export(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *table_s = NULL, *format = NULL, *out = NULL;
    const bench_opt opts[] = {
        {"--run", "ID", "only this run's rows (default: every run in the file)", &run_s},
        {"--table", "NAME", "points (default), runs, samples, hosts or fits", &table_s},
        {"--format", "FMT", "csv, json or markdown (required)", &format},
        {"--out", "PATH", "write to PATH (default: stdout)", &out},
        {"--help", NULL, "this help", &help},
    };
    export_data d = {0};
    char msg[ATTN_MSG_LEN];
    if (bench_parse_file_args(argc, argv, opts, BENCH_COUNT(opts), "export", &d.path, &run_s,
                              &d.run_id, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        bench_print_help(
            "bench export FILE.h5 [--run ID] [--table points|runs|samples|hosts|fits] "
            "--format csv|json|markdown [--out PATH]",
            "Writes a table of a results file as CSV or JSON, every column of the HDF5 table in\n"
            "its order, for pandas, R or a spreadsheet:\n"
            "  pd.read_csv(\"points.csv\")                  (NaN is an empty field)\n"
            "  pd.read_json(\"points.json\", orient=\"table\")  (NaN is null)\n"
            "The JSON document also holds the machine and build facts of the run (\"context\":\n"
            "host, cpu, threads, sgemm and memory yardsticks, commit, build, command, start) and\n"
            "of every exported run (\"runs\"). Markdown: the points as a readable table, run by run\n"
            "(other tables: every column).",
            opts, BENCH_COUNT(opts));
        return 0;
    }
    if (!d.path)
        return bench_fail(ATTN_EINVAL, "bench export needs a results file: bench export FILE.h5 "
                                       "--format csv|json|markdown");
    if (!table_s) table_s = "points";
    int t = 0;
    while (t < BENCH_NTABLES && !(table_names[t] && strcmp(table_s, table_names[t]) == 0)) t++;
    if (t == BENCH_NTABLES) {
        snprintf(msg, sizeof msg,
                 "--table '%.60s': unknown table (points, runs, samples, hosts or fits)", table_s);
        return bench_fail(ATTN_EINVAL, msg);
    }
    d.table = (bench_table_id)t;
    if (!format || (strcmp(format, "csv") && strcmp(format, "json") && strcmp(format, "markdown")))
        return bench_fail(ATTN_EINVAL, "bench export needs --format csv, json or markdown");
    struct stat sb;
    if (out && stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(msg, sizeof msg, "--out %.200s is a directory; give a file name", out);
        return bench_fail(ATTN_EINVAL, msg);
    }
    if (out && bench_check_writable(out, "--out", msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    attn_status st = load(&d, msg, sizeof msg);
    if (st == ATTN_OK) st = export(&d, format, out, msg, sizeof msg);
    free(d.rows);
    free(d.runs);
    return st ? bench_fail(st, msg) : 0;
}
