/*
 * export_csv.c — `bench export --format csv` (RFC 4180): a header of column names, then one line
 * per row with every column of the HDF5 table in its order (taken from the store's field tables:
 * a column added there is exported without a change here); strings quoted when they hold a comma,
 * a quote or a line break; reals with 17 significant digits (exact round trip); NaN as an empty
 * field, ±Inf as inf / -inf (pandas reads both).
 */
#include <stdio.h>
#include <string.h>

#include "export.h"

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

static attn_status write_csv(FILE *f, const bench_export_data *d)
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
            bench_export_cell_text(&col, bench_export_cell(d, r, &col), 17, buf, sizeof buf);
            csv_string(f, buf);
        }
        fputc('\n', f);
    }
    return ATTN_OK;
}

const bench_export_format bench_export_csv = {
    .name = "csv",
    .extension = "csv",
    .summary = "RFC 4180, every column; reals exact (17 digits), NaN an empty field",
    .write = write_csv,
};
