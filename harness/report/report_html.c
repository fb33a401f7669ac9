/*
 * report_html.c — the pieces of `bench report`'s page (report_html.h): escaping, inline SVG,
 * the page's style sheet and sorting script, and the sections read straight from the results
 * file (command, machine and build facts, points).
 */
#include "report_html.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"

void bench_html_text(FILE *f, const char *text)
{
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((*s < 0x20 && *s != '\t' && *s != '\n') || *s == 0x7f) fputs("\xEF\xBF\xBD", f);
            else fputc(*s, f);
        }
    }
}

void bench_html_textf(FILE *f, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bench_html_text(f, buf);
}

/* ---- gnuplot's SVG, inline ---- */

/* Does s start a character reference (&name; &#10; &#x1F;)? */
static bool is_reference(const char *s)
{
    size_t i = 1;
    if (s[i] == '#') {
        i++;
        const bool hex = s[i] == 'x' || s[i] == 'X';
        i += hex;
        const size_t from = i;
        while (hex ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i])) i++;
        return i > from && s[i] == ';';
    }
    while (isalnum((unsigned char)s[i])) i++;
    return i > 1 && s[i] == ';';
}

static bool starts_nocase(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (tolower((unsigned char)*s) != *prefix) return false;
    return true;
}

/* Copy the attribute value at s (after its opening quote q) to f, prefixing ids and references
 * to them (attribute `name`); an inline base64 PNG (gnuplot's `with image`) is copied as it is.
 * Returns the position after the closing quote, NULL when the value refers outside the document
 * or the quote is never closed. */
static const char *copy_value(FILE *f, const char *s, char q, const char *name, const char *prefix)
{
    const bool href = strcmp(name, "href") == 0 || strcmp(name, "xlink:href") == 0;
    if (strcmp(name, "id") == 0) fputs(prefix, f);
    static const char png[] = "data:image/png;base64,"; /* a raster drawn inline (with image) */
    if (href && strncmp(s, png, sizeof png - 1) == 0) {
        const char *e = s + sizeof png - 1;
        while (isalnum((unsigned char)*e) || *e == '+' || *e == '/' || *e == '=') e++;
        if (*e != q) return NULL;
        fwrite(s, 1, (size_t)(e - s), f);
        fputc(q, f);
        return e + 1;
    }
    if (href) {
        if (*s != '#') return NULL;
        fputc(*s++, f);
        fputs(prefix, f);
    }
    for (; *s && *s != q; s++) {
        if (starts_nocase(s, "url(")) {
            if (s[4] != '#') return NULL;
            fprintf(f, "url(#%s", prefix);
            s += 4;
            continue;
        }
        if (*s == '&' && !is_reference(s)) fputs("&amp;", f);
        else fputc(*s, f);
    }
    if (!*s) return NULL;
    fputc(q, f);
    return s + 1;
}

attn_status bench_html_svg(FILE *f, const char *svg, const char *prefix, char *msg, size_t msg_len)
{
    const char *s = strstr(svg, "<svg");
    if (!s) return attn_fail(ATTN_EFAIL, msg, msg_len, "not an SVG image (no <svg element)");
    /* check first, so that a refused image writes nothing */
    for (const char *t = s; *t; t++)
        if (*t == '<' && (starts_nocase(t, "<script") || starts_nocase(t, "<foreignobject")))
            return attn_fail(ATTN_EFAIL, msg, msg_len, "the SVG image holds a script");
    char *copy = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&copy, &len);
    if (!out) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory");
    bool in_tag = false, ok = true;
    char name[32] = "";
    size_t nlen = 0;
    while (ok && *s) {
        const char c = *s;
        if (!in_tag) {
            if (c == '<') in_tag = true, nlen = 0, name[0] = '\0';
            if (c == '&' && !is_reference(s)) fputs("&amp;", out);
            else fputc(c, out);
            s++;
        } else if (c == '"' || c == '\'') {
            fputc(c, out);
            s = copy_value(out, s + 1, c, name, prefix);
            ok = s != NULL;
            nlen = 0, name[0] = '\0';
        } else {
            if (c == '>') in_tag = false;
            else if (isalnum((unsigned char)c) || c == ':' || c == '-' || c == '_') {
                if (nlen + 1 < sizeof name) name[nlen++] = c, name[nlen] = '\0';
            } else if (c != '=') {
                nlen = 0, name[0] = '\0';
            }
            fputc(c, out);
            s++;
        }
    }
    ok = fclose(out) == 0 && ok;
    if (ok) fwrite(copy, 1, len, f);
    free(copy);
    return ok ? ATTN_OK
              : attn_fail(ATTN_EFAIL, msg, msg_len,
                          "the SVG image refers outside itself or is cut short");
}

/* ---- the page ---- */

static const char STYLE[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}\n"
    "header,main{max-width:1800px;margin:0 auto;padding:0 20px}\n"
    "header{padding-top:12px}h1{font-size:1.5em;margin:.4em 0 .2em}\n"
    "h2{font-size:1.2em;margin:1.6em 0 .5em;border-bottom:1px solid #ccc}\n"
    "nav a{margin-right:1em}p.note{color:#555;font-size:.9em}\n"
    "pre.cmd{background:#fff;border:1px solid #ccc;padding:8px 10px;white-space:pre-wrap;"
    "word-break:break-all}\n"
    "#figure-list{display:grid;grid-template-columns:repeat(auto-fill,minmax(820px,1fr));"
    "gap:16px}\n"
    "figure{margin:0;background:#fff;border:1px solid #ddd;padding:6px}\n"
    "figure svg{display:block;max-width:100%;height:auto}\n"
    "figcaption{font-size:.85em;color:#555}\n"
    ".scroll{overflow-x:auto;background:#fff;border:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:.75em}\n"
    "th,td{padding:3px 2px;border-bottom:1px solid #e4e4e4;text-align:left}\n"
    "th{vertical-align:bottom}td{vertical-align:top}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.sortable th{cursor:pointer;user-select:none;background:#f0f0f0;position:sticky;top:0}\n"
    "table.sortable th:hover{background:#e2e2e2}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}\n"
    "th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "tr.error td{color:#a00}table.facts th{background:none;width:14em}\n";

/* Sorts a table.sortable by the header clicked (again: the other way). A cell sorts by its
 * data-v if it has one, else by its text; a column whose header has class num sorts by number,
 * with empty values (NaN) last both ways; equal keys keep their order. */
static const char SCRIPT[] =
    "'use strict';\n"
    "(function () {\n"
    "  function key(row, col) {\n"
    "    var c = row.cells[col], v = c.getAttribute('data-v');\n"
    "    return v === null ? c.textContent : v;\n"
    "  }\n"
    "  function sortBy(table, th, col) {\n"
    "    var asc = th.getAttribute('aria-sort') !== 'ascending';\n"
    "    var num = th.classList.contains('num');\n"
    "    Array.prototype.forEach.call(th.parentNode.cells, function (h) {\n"
    "      h.removeAttribute('aria-sort');\n"
    "    });\n"
    "    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');\n"
    "    var body = table.tBodies[0];\n"
    "    var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {\n"
    "      var k = key(r, col);\n"
    "      return {row: r, i: i, k: num ? (k === '' ? NaN : parseFloat(k)) : k};\n"
    "    });\n"
    "    rows.sort(function (a, b) {\n"
    "      var c;\n"
    "      if (num) {\n"
    "        if (isNaN(a.k) || isNaN(b.k)) c = isNaN(a.k) - isNaN(b.k);\n"
    "        else c = asc ? a.k - b.k : b.k - a.k;\n"
    "      } else {\n"
    "        c = a.k.localeCompare(b.k, undefined, {numeric: true});\n"
    "        if (!asc) c = -c;\n"
    "      }\n"
    "      return c || a.i - b.i;\n"
    "    });\n"
    "    rows.forEach(function (r) { body.appendChild(r.row); });\n"
    "  }\n"
    "  document.querySelectorAll('table.sortable').forEach(function (table) {\n"
    "    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {\n"
    "      th.tabIndex = 0;\n"
    "      th.addEventListener('click', function () { sortBy(table, th, col); });\n"
    "      th.addEventListener('keydown', function (e) {\n"
    "        if (e.key === 'Enter' || e.key === ' ') {\n"
    "          e.preventDefault();\n"
    "          sortBy(table, th, col);\n"
    "        }\n"
    "      });\n"
    "    });\n"
    "  });\n"
    "})();\n";

void bench_html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
          "<link rel=\"icon\" href=\"data:,\">\n<title>",
          f);
    bench_html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", STYLE);
}

void bench_html_end(FILE *f)
{
    fprintf(f, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", SCRIPT);
}

/* text escaped, with a line break allowed (<wbr>) after each character of `after`: a long
 * parameter list or label wraps in its cell instead of widening the table. */
static void text_breaking(FILE *f, const char *text, const char *after)
{
    char piece[512];
    while (*text) {
        size_t n = strcspn(text, after);
        const bool brk = text[n] != '\0';
        n += brk;
        if (n >= sizeof piece) n = sizeof piece - 1;
        snprintf(piece, sizeof piece, "%.*s", (int)n, text);
        bench_html_text(f, piece);
        if (brk && strchr(after, piece[strlen(piece) - 1])) fputs("<wbr>", f);
        text += n;
    }
}

void bench_html_td(FILE *f, const char *text)
{
    fputs("<td>", f);
    text_breaking(f, text && *text ? text : "-", ",(");
    fputs("</td>", f);
}

void bench_html_td_num(FILE *f, double v, const char *fmt, double scale)
{
    if (!isfinite(v)) {
        fputs("<td class=\"num\" data-v=\"\">-</td>", f);
        return;
    }
    char shown[64];
    snprintf(shown, sizeof shown, fmt, v * scale);
    fprintf(f, "<td class=\"num\" data-v=\"%.17g\">", v);
    bench_html_text(f, shown);
    fputs("</td>", f);
}

void bench_html_th(FILE *f, const char *label, int numeric, const char *title)
{
    fputs(numeric ? "<th class=\"num\"" : "<th", f);
    if (title) {
        fputs(" title=\"", f);
        bench_html_text(f, title);
        fputc('"', f);
    }
    fputc('>', f);
    text_breaking(f, label, "_/");
    fputs("</th>", f);
}

/* The recorded command with its program, the binary's path (build/harness/bench, or wherever
 * it was run from), written as the launcher that builds and runs it: "./bench ARGS". */
static void launcher_command(FILE *f, const char *command)
{
    const size_t prog = strcspn(command, " ");
    const char *slash = NULL;
    for (const char *c = command; c < command + prog; c++)
        if (*c == '/') slash = c;
    const char *base = slash ? slash + 1 : command;
    if ((size_t)(command + prog - base) == strlen("bench") && strncmp(base, "bench", 5) == 0) {
        bench_html_text(f, "./bench");
        command += prog;
    }
    bench_html_text(f, command);
}

void bench_html_command(FILE *f, const bench_run *run)
{
    fputs("<h2 id=\"reproduce\">Reproduce</h2>\n<pre class=\"cmd\"><code>", f);
    launcher_command(f, run->command);
    fputs("</code></pre>\n<p class=\"note\">The command as recorded in <code>/runs</code> "
          "(arguments that need it are shell-quoted; the program as <code>./bench</code>, the "
          "launcher in the repository's top folder), run with a binary built from commit <code>",
          f);
    bench_html_text(f, run->git_commit[0] ? run->git_commit : "unknown");
    fputs("</code> (<code>git checkout</code> it, then <code>./bench</code> builds it); the "
          "machine it ran on is below.</p>\n",
          f);
}

static void fact(FILE *f, const char *name, const char *value)
{
    fputs("<tr><th>", f);
    bench_html_text(f, name);
    fputs("</th>", f);
    bench_html_td(f, value);
    fputs("</tr>\n", f);
}

void bench_html_run_facts(FILE *f, const bench_run *run)
{
    char v[64];
    fputs("<h2 id=\"machine\">Machine and build</h2>\n<div class=\"scroll\"><table "
          "class=\"facts\">\n",
          f);
    snprintf(v, sizeof v, "%lld", (long long)run->run_id);
    fact(f, "run", v);
    fact(f, "started at (UTC)", run->started_at);
    fact(f, "host", run->host);
    fact(f, "CPU", run->cpu_model);
    snprintf(v, sizeof v, "%d OpenMP, %d BLAS inside them", run->threads, run->blas_threads);
    fact(f, "threads", v);
    snprintf(v, sizeof v, "%.1f GFLOP/s", run->sgemm_gflops);
    fact(f, "OpenBLAS sgemm 2048\xC2\xB3", v);
    snprintf(v, sizeof v, "%.1f GB/s", run->mem_bandwidth_gbs);
    fact(f, "memory read bandwidth", v);
    fact(f, "build", run->build);
    fact(f, "git commit", run->git_commit);
    fact(f, "OpenBLAS", run->openblas_config);
    fact(f, "HDF5", run->hdf5_version);
    snprintf(v, sizeof v, "%llu", (unsigned long long)run->seed);
    fact(f, "seed", v);
    fputs("</table></div>\n", f);
}

/* The columns of the points table: header, numeric?, tool tip. */
static const struct {
    const char *label;
    int numeric;
    const char *title;
} point_cols[] = {
    {"id", 1, "point_id"},
    {"kind", 0, NULL},
    {"params", 0, "the kind's parameters"},
    {"dataset", 0, "dataset(params)"},
    {"mode", 0, NULL},
    {"pass", 0, "the timed pass (a column only when some point is not forward)"},
    {"dtype", 0, "storage of q, k, v (a column only when some point is not f32)"},
    {"cau", 1, "causal mask: 1, or 0"},
    {"B", 1, "batch"},
    {"H", 1, "query heads"},
    {"Hkv", 1, "key/value heads"},
    {"d", 1, "head_dim"},
    {"q_len", 1, "queries (decode: per step)"},
    {"n", 1, "keys (kv_len)"},
    {"thr", 1, "OpenMP threads"},
    {"reps", 1, "timed repetitions"},
    {"isa", 0, "kernel set"},
    {"median ms", 1, "median time per forward"},
    {"min ms", 1, NULL},
    {"cv %", 1, "standard deviation / mean of the repetitions"},
    {"GFLOP/s", 1, "useful flops / median time"},
    {"%peak", 1, "GFLOP/s / FMA peak of the kernel set on the point's threads"},
    {"%sgemm", 1, "GFLOP/s / OpenBLAS sgemm on the point's threads"},
    {"GB/s", 1, "bytes moved once / median time"},
    {"RSS added MiB", 1, "peak RSS - RSS at the point's start"},
    {"ws MiB", 1, "workspace: the scratch the kind declared"},
    {"rel_err", 1, "relative L2 error vs float64 exact attention"},
    {"max_abs_err", 1, NULL},
    {"retr", 1, "retrieval: the share of planted queries retrieved (needle)"},
    {"self_err", 1, "relative L2 error vs the kind's own definition in float64"},
    {"status", 0, NULL},
};

/* The optional columns of the points table: pass and dtype, when some point is not forward or
 * not f32 (files before those columns: forward, f32). */
typedef struct point_cols_shown {
    bool pass, dtype;
} point_cols_shown;

static bool col_shown(const char *label, const point_cols_shown *sh)
{
    return strcmp(label, "pass") == 0 ? sh->pass : strcmp(label, "dtype") == 0 ? sh->dtype : true;
}

static void point_row(FILE *f, const bench_point *pt, const point_cols_shown *sh)
{
    const bool ok = strcmp(pt->status, "ok") == 0;
    fputs(ok ? "<tr>" : "<tr class=\"error\">", f);
    bench_html_td_num(f, (double)pt->point_id, "%.0f", 1);
    bench_html_td(f, pt->kind);
    bench_html_td(f, pt->params);
    char ds[160];
    snprintf(ds, sizeof ds, "%s%s%s%s", pt->dataset, pt->dataset_params[0] ? "(" : "",
             pt->dataset_params, pt->dataset_params[0] ? ")" : "");
    bench_html_td(f, ds);
    bench_html_td(f, pt->mode);
    if (sh->pass) bench_html_td(f, pt->pass[0] ? pt->pass : "forward");
    if (sh->dtype) bench_html_td(f, pt->dtype[0] ? pt->dtype : "f32");
    const double ints[] = {pt->causal,           (double)pt->batch,    (double)pt->heads,
                           (double)pt->kv_heads, (double)pt->head_dim, (double)pt->q_len,
                           (double)pt->kv_len,   pt->threads,          pt->reps};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        bench_html_td_num(f, ints[i], "%.0f", 1);
    bench_html_td(f, pt->isa);
    const double nan = NAN;
    bench_html_td_num(f, ok ? pt->time_median_s : nan, "%.4g", 1e3);
    bench_html_td_num(f, ok ? pt->time_min_s : nan, "%.4g", 1e3);
    bench_html_td_num(f, ok ? pt->time_cv : nan, "%.1f", 100);
    bench_html_td_num(f, ok ? pt->gflops_per_s : nan, "%.3g", 1);
    /* 0: a file written before the yardstick columns */
    bench_html_td_num(f, ok && pt->pct_peak > 0 ? pt->pct_peak : nan, "%.0f", 1);
    bench_html_td_num(f, ok && pt->pct_sgemm > 0 ? pt->pct_sgemm : nan, "%.0f", 1);
    bench_html_td_num(f, ok ? pt->gbytes_per_s : nan, "%.3g", 1);
    bench_html_td_num(f, ok ? bench_rss_of(pt, true) : nan, "%.1f", 1.0 / 1048576);
    bench_html_td_num(f, ok ? (double)pt->workspace_bytes : nan, "%.2f", 1.0 / 1048576);
    bench_html_td_num(f, ok ? pt->rel_err : nan, "%.1e", 1);
    bench_html_td_num(f, ok ? pt->max_abs_err : nan, "%.1e", 1);
    bench_html_td_num(f, ok && pt->retrieval_queries > 0 ? pt->retrieval : nan, "%.3f", 1);
    bench_html_td_num(f, ok ? pt->self_rel_err : nan, "%.1e", 1);
    char status[200];
    snprintf(status, sizeof status, "%s%s%s", pt->status, pt->message[0] ? ": " : "", pt->message);
    bench_html_td(f, status);
    fputs("</tr>\n", f);
}

void bench_html_points(FILE *f, const bench_point *pts, int64_t n, int64_t run_id)
{
    int64_t count = 0, failed = 0;
    point_cols_shown sh = {false, false};
    for (int64_t i = 0; i < n; i++) {
        if (pts[i].run_id != run_id) continue;
        count++, failed += strcmp(pts[i].status, "ok") != 0;
        sh.pass |= pts[i].pass[0] && strcmp(pts[i].pass, "forward") != 0;
        sh.dtype |= pts[i].dtype[0] && strcmp(pts[i].dtype, "f32") != 0;
    }
    fprintf(f, "<h2 id=\"points\">Points</h2>\n<p class=\"note\">%lld points", (long long)count);
    if (failed)
        fprintf(f, " (%lld failed: in red, left out of the figures and fits)", (long long)failed);
    fputs(". Click a column header to sort by it (again: the other way).</p>\n"
          "<div class=\"scroll\"><table class=\"sortable\" id=\"points-table\">\n<thead><tr>",
          f);
    for (size_t c = 0; c < sizeof point_cols / sizeof point_cols[0]; c++)
        if (col_shown(point_cols[c].label, &sh))
            bench_html_th(f, point_cols[c].label, point_cols[c].numeric, point_cols[c].title);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int64_t i = 0; i < n; i++)
        if (pts[i].run_id == run_id) point_row(f, &pts[i], &sh);
    fputs("</tbody></table></div>\n", f);
}
