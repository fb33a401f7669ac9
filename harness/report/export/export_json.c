/*
 * export_json.c — `bench export --format json` (written by libjansson): a Table Schema document,
 * which pd.read_json(path, orient="table") loads as the table: {"attnbench": {the file, table,
 * run and exporting build}, "context": the run's machine and build facts (its /runs row: --run's
 * run, else the file's last), "runs": every exported run's facts, "schema": {"fields": [name,
 * type, unit, description of every column]}, "data": [one object per row]}; NaN and ±Inf as null.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "export.h"
#include "version.h"

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
static const bench_run *context_run(const bench_export_data *d)
{
    for (int64_t r = d->nruns - 1; r >= 0; r--)
        if (d->run_id == 0 || d->runs[r].run_id == d->run_id) return &d->runs[r];
    return NULL;
}

static attn_status write_json(FILE *f, const bench_export_data *d)
{
    const bench_run *ctx = context_run(d);
    json_t *runs = json_array(), *data = json_array();
    for (int64_t r = 0; runs && r < d->nruns; r++)
        if (d->run_id == 0 || d->runs[r].run_id == d->run_id)
            json_array_append_new(runs, json_row(BENCH_TABLE_RUNS, &d->runs[r]));
    for (int64_t r = 0; data && r < d->n; r++)
        json_array_append_new(data, json_row(d->table, (const char *)d->rows + r * d->row_size));
    json_t *doc = json_pack("{s:{s:s, s:i, s:s, s:s, s:o, s:s}, s:o, s:o, s:o, s:o}", "attnbench",
                            "format", "attnbench-export", "format_version", 1, "file", d->path,
                            "table", bench_export_table_name(d->table), "run",
                            d->run_id ? json_integer(d->run_id) : json_null(), "exported_by",
                            "attnbench " BENCH_GIT_COMMIT, "context",
                            ctx ? json_row(BENCH_TABLE_RUNS, ctx) : json_null(), "runs", runs,
                            "schema", json_schema(d->table), "data", data);
    const int err = doc ? json_dumpf(doc, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;
    if (!err) fputc('\n', f);
    json_decref(doc);
    return err ? ATTN_EFAIL : ATTN_OK;
}

const bench_export_format bench_export_json = {
    .name = "json",
    .extension = "json",
    .summary = "a Table Schema document with the run's machine and build facts; NaN null",
    .write = write_json,
};
