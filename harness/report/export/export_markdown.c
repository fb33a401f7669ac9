/*
 * export_markdown.c — `bench export --format markdown`: for reading, or pasting into an issue.
 * The points as a readable table run by run, each under its run's facts (start, host, CPU,
 * threads, yardsticks, build, command); any other table with every column (reals with 4
 * significant digits). Text from the file has | escaped and line breaks as spaces.
 */
#include <stdio.h>
#include <string.h>

#include "export.h"
#include "memory.h"

/* s with | escaped and line breaks as spaces. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
}

/* Any table, every column (reals with 4 significant digits). */
static void md_generic(FILE *f, const bench_export_data *d)
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
            bench_export_cell_text(&col, bench_export_cell(d, r, &col), 4, buf, sizeof buf);
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
static void md_points(FILE *f, const bench_export_data *d)
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

static attn_status write_markdown(FILE *f, const bench_export_data *d)
{
    if (d->table == BENCH_TABLE_POINTS) md_points(f, d);
    else md_generic(f, d);
    return ATTN_OK;
}

const bench_export_format bench_export_markdown = {
    .name = "markdown",
    .extension = "md",
    .summary = "the points as a table per run under the run's facts; other tables: every column",
    .write = write_markdown,
};
