/*
 * cmd_export.c — `bench export FILE.h5 [--run ID] [--table NAME] --format FMT [--out PATH]`: the
 * options. The formats and what they write are the registry of report/export.h; this file parses
 * the options, looks the format and the table up, and has the registry load and write them.
 */
#include <stdio.h>

#include "commands.h"
#include "export.h"
#include "targets.h"

enum { MAX_FORMATS = 32 }; /* formats offered to shell completion */

static const char export_description[] =
    "Writes a table of a results file in a format (below): CSV and JSON hold every column of the\n"
    "HDF5 table in its order, for pandas, R or a spreadsheet:\n"
    "  pd.read_csv(\"points.csv\")                  (NaN is an empty field)\n"
    "  pd.read_json(\"points.json\", orient=\"table\")  (NaN is null)\n"
    "The JSON document also holds the machine and build facts of the run (\"context\":\n"
    "host, cpu, threads, sgemm and memory yardsticks, commit, build, command, start) and\n"
    "of every exported run (\"runs\"). Markdown: the points as a readable table, run by run\n"
    "(other tables: every column).";

/* The help: usage and option lines with the registry's format and table names, and one line per
 * format. */
static void print_help(const bench_opt *opts, int nopts)
{
    char formats[256], tables[256], usage[640], description[4096];
    bench_export_format_names("|", "|", formats, sizeof formats);
    bench_export_table_names("|", "|", tables, sizeof tables);
    snprintf(usage, sizeof usage,
             "bench export FILE.h5 [--run ID] [--table %s] --format %s [--out PATH]", tables,
             formats);
    int w = snprintf(description, sizeof description, "%s\n\nformats:", export_description);
    for (int i = 0; i < bench_export_format_count() && w < (int)sizeof description; i++) {
        const bench_export_format *f = bench_export_format_at(i);
        w += snprintf(description + w, sizeof description - (size_t)w, "\n  %-10s .%-5s %s",
                      f->name, f->extension, f->summary);
    }
    bench_print_help(usage, description, opts, nopts);
}

/* "points (default), runs, samples, hosts or fits": the tables, the first the default. */
static void table_options(char *buf, size_t len)
{
    const int n = bench_export_table_count();
    buf[0] = '\0';
    for (int i = 0, w = 0; i < n && w < (int)len; i++) {
        const char *before = i == 0 ? "" : i < n - 1 ? ", " : " or ";
        const char *name = bench_export_table_name(bench_export_table_at(i));
        w += snprintf(buf + w, len - (size_t)w, "%s%s%s", before, name, i == 0 ? " (default)" : "");
    }
}

int bench_cmd_export(int argc, char **argv)
{
    const char *help = NULL, *run_s = NULL, *table_s = NULL, *format = NULL, *out = NULL;
    char formats[256], tables[256], format_help[320], table_help[320];
    bench_export_format_names(", ", " or ", formats, sizeof formats);
    bench_export_table_names(", ", " or ", tables, sizeof tables);
    snprintf(format_help, sizeof format_help, "%s (required)", formats);
    table_options(table_help, sizeof table_help);
    const char *format_names[MAX_FORMATS + 1] = {0}, *table_names[BENCH_NTABLES + 1] = {0};
    for (int i = 0; i < bench_export_format_count() && i < MAX_FORMATS; i++)
        format_names[i] = bench_export_format_at(i)->name;
    for (int i = 0; i < bench_export_table_count(); i++)
        table_names[i] = bench_export_table_name(bench_export_table_at(i));
    const bench_opt opts[] = {
        {"--run", "ID", "only this run's rows (default: every run in the file)", &run_s},
        {"--table", "NAME", table_help, &table_s, .choices = table_names},
        {"--format", "FMT", format_help, &format, .choices = format_names},
        {"--out", "PATH", "write to PATH (default: stdout)", &out},
        {"--help", NULL, "this help", &help},
    };
    bench_export_data d = {0};
    char msg[ATTN_MSG_LEN];
    if (bench_parse_file_args(argc, argv, opts, BENCH_COUNT(opts), "export", &d.path, &run_s,
                              &d.run_id, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    if (help) {
        print_help(opts, BENCH_COUNT(opts));
        return 0;
    }
    char bar[256];
    bench_export_format_names("|", "|", bar, sizeof bar);
    if (!d.path) {
        snprintf(msg, sizeof msg,
                 "bench export needs a results file: bench export FILE.h5 --format %s", bar);
        return bench_fail(ATTN_EINVAL, msg);
    }
    if (!table_s) table_s = bench_export_table_name(bench_export_table_at(0));
    if (!bench_export_table_find(table_s, &d.table)) {
        snprintf(msg, sizeof msg, "--table '%.60s': unknown table (%s)", table_s, tables);
        return bench_fail(ATTN_EINVAL, msg);
    }
    const bench_export_format *fmt = bench_export_format_find(format);
    if (!fmt) {
        snprintf(msg, sizeof msg, "bench export needs --format %s", formats);
        return bench_fail(ATTN_EINVAL, msg);
    }
    const bench_input input = {"", d.path};
    if (out && bench_check_target(out, "--out", BENCH_TARGET_FILE, &input, 1, msg, sizeof msg))
        return bench_fail(ATTN_EINVAL, msg);
    attn_status st = bench_export_load(&d, msg, sizeof msg);
    if (st == ATTN_OK) st = bench_export_write(&d, fmt, out, msg, sizeof msg);
    bench_export_free(&d);
    return st ? bench_fail(st, msg) : 0;
}
