/* test_args.c — command-line value parsing: lists, ranges, suffixes, and the messages for bad
 * values; the option-table parser; the progress line's width; "did you mean". */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "args.h"
#include "attn_suggest.h"
#include "progress.h"

static void expect_list(const char *text, const int64_t *want, int nwant)
{
    int64_t *v = NULL;
    int n = 0;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_parse_i64_list(text, "--n", 1, 1 << 30, &v, &n, msg, sizeof msg), ATTN_OK,
                 "'%s': %s", text, msg);
    cr_assert_eq(n, nwant, "'%s' gave %d values", text, n);
    for (int k = 0; k < n; k++) cr_expect_eq(v[k], want[k], "'%s' value %d", text, k);
    free(v);
}

static void expect_bad_list(const char *text, const char *words)
{
    int64_t *v = NULL;
    int n = 0;
    char msg[ATTN_MSG_LEN] = "";
    cr_expect_eq(bench_parse_i64_list(text, "--n", 1, 1 << 30, &v, &n, msg, sizeof msg),
                 ATTN_EINVAL, "'%s' was accepted", text);
    cr_expect(strstr(msg, words) != NULL, "'%s': message '%s' lacks '%s'", text, msg, words);
    cr_expect(strstr(msg, "--n") != NULL, "'%s': message '%s' does not name the option", text, msg);
}

Test(args, lists_and_ranges)
{
    expect_list("5", (int64_t[]){5}, 1);
    expect_list("256:4096:x2", (int64_t[]){256, 512, 1024, 2048, 4096}, 5);
    expect_list("256:5000", (int64_t[]){256, 512, 1024, 2048, 4096}, 5); /* default x2 */
    expect_list("1K:4K:+1K", (int64_t[]){1024, 2048, 3072, 4096}, 4);
    expect_list("4,1:3:+1,1M", (int64_t[]){4, 1, 2, 3, 1048576}, 5);
    expect_list("10:100:x10", (int64_t[]){10, 100}, 2);
}

Test(args, bad_lists_say_why)
{
    expect_bad_list("abc", "not an integer");
    expect_bad_list("0", "out of range");
    expect_bad_list("4:2", "ends before it starts");
    expect_bad_list("3,1:3:+1", "3 given twice"); /* repeats are refused, ranges included */
    expect_bad_list("64,64", "given twice");
    expect_bad_list("1:8:x1", "range step");
    expect_bad_list("1:8:y2", "range step");
    expect_bad_list("1,,2", "empty item");
    expect_bad_list("", "empty item");
    expect_bad_list("12q", "not an integer");
    expect_bad_list("1:100000:+1", "more than");
}

Test(args, numbers)
{
    int64_t i;
    double d;
    char msg[ATTN_MSG_LEN];
    cr_expect_eq(bench_parse_i64("2k", "--x", 0, 10000, &i, msg, sizeof msg), ATTN_OK);
    cr_expect_eq(i, 2048);
    cr_expect_eq(bench_parse_i64("99999999999999999999", "--x", 0, 10, &i, msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect_eq(bench_parse_double("0.25", "--t", 0, 1, &d, msg, sizeof msg), ATTN_OK);
    cr_expect_eq(d, 0.25);
    cr_expect_eq(bench_parse_double("nan", "--t", 0, 1, &d, msg, sizeof msg), ATTN_EINVAL);
    cr_expect_eq(bench_parse_double("2", "--t", 0, 1, &d, msg, sizeof msg), ATTN_EINVAL);
    cr_expect(strstr(msg, "out of range") != NULL, "%s", msg);
}

Test(args, option_table)
{
    const char *a = NULL, *flag = NULL, *rep[3];
    int nrep = 0;
    const bench_opt opts[] = {
        {"--alpha", "X", "", &a},
        {"--flag", NULL, "", &flag},
        {"--set", "KV", "", rep, &nrep, 3},
    };
    char *argv[] = {"bench", "cmd", "--alpha=1", "pos", "--flag", "--set", "x=1", "--set=y=2"};
    const char *pos[2];
    int npos;
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_parse_opts(8, argv, 2, opts, 3, pos, 2, &npos, "cmd", msg, sizeof msg),
                 ATTN_OK, "%s", msg);
    cr_expect_str_eq(a, "1");
    cr_expect_str_eq(flag, "1");
    cr_expect_eq(npos, 1);
    cr_expect_str_eq(pos[0], "pos");
    cr_expect_eq(nrep, 2);
    cr_expect_str_eq(rep[0], "x=1");
    cr_expect_str_eq(rep[1], "y=2");

    char *bad1[] = {"bench", "cmd", "--nope"};
    cr_expect_eq(bench_parse_opts(3, bad1, 2, opts, 3, pos, 2, &npos, "cmd", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect(strstr(msg, "unknown option '--nope'") != NULL, "%s", msg);
    char *twice[] = {"bench", "cmd", "--alpha=1", "--alpha", "2"};
    a = NULL;
    cr_expect_eq(bench_parse_opts(5, twice, 2, opts, 3, pos, 2, &npos, "cmd", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect(strstr(msg, "option --alpha given twice") != NULL, "%s", msg);
    char *bad2[] = {"bench", "cmd", "--alpha"};
    a = NULL;
    cr_expect_eq(bench_parse_opts(3, bad2, 2, opts, 3, pos, 2, &npos, "cmd", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect(strstr(msg, "needs a value") != NULL, "%s", msg);
    char *bad3[] = {"bench", "cmd", "a", "b", "c"};
    cr_expect_eq(bench_parse_opts(5, bad3, 2, opts, 3, pos, 2, &npos, "cmd", msg, sizeof msg),
                 ATTN_EINVAL);
    cr_expect(strstr(msg, "unexpected argument 'c'") != NULL, "%s", msg);
}

/* The progress line at a width: its length, the counter and the ETA whole, and whether the label
 * was cut in its middle ("..." between its start and its end). */
static void expect_progress(int width, bool cut)
{
    const char *label = "linear n=4096 B=1 H=8 Hkv=8 D=64 causal=1 needle(needles=16,distance=-1,"
                        "margin=4) map=elu,features=256,seed=0,chunk=32";
    char line[512];
    bench_progress_format(line, sizeof line, width, 12, 237, label, 65.4, 192.2);
    cr_expect_leq(strlen(line), (size_t)width - 1, "width %d: '%s' is %zu long", width, line,
                  strlen(line));
    cr_expect(strncmp(line, "[12/237] line", 13) == 0, "width %d: '%s'", width, line);
    const char *tail = "  (1m05s, ETA 3m12s)";
    cr_expect(strlen(line) > strlen(tail) && strcmp(line + strlen(line) - strlen(tail), tail) == 0,
              "width %d: '%s' does not end with '%s'", width, line, tail);
    cr_expect_eq(strstr(line, "...") != NULL, cut, "width %d: '%s'", width, line);
    cr_expect_eq(strstr(line, "32  (") != NULL, true, "width %d: the label's end: '%s'", width,
                 line);
    if (!cut) cr_expect(strstr(line, label) != NULL, "width %d: '%s'", width, line);
}

Test(args, progress_line_fits_the_width)
{
    expect_progress(40, true);
    expect_progress(80, true);
    expect_progress(200, false);
    char line[512];
    /* no width (a log): the whole label; unknown ETA; hours */
    bench_progress_format(line, sizeof line, 0, 1, 3, "full n=64", 3725, NAN);
    cr_expect_str_eq(line, "[1/3] full n=64  (1h02m, ETA --)");
    /* too narrow even for the counter and the times: those stay whole, the label goes */
    bench_progress_format(line, sizeof line, 20, 100, 100, "window n=8192", 9.6, 0);
    cr_expect_str_eq(line, "[100/100]   (10s, ETA 0s)");
    char d[16];
    bench_format_duration(59.4, d, sizeof d);
    cr_expect_str_eq(d, "59s");
    bench_format_duration(59.6, d, sizeof d);
    cr_expect_str_eq(d, "1m00s");
    bench_format_duration(-1, d, sizeof d);
    cr_expect_str_eq(d, "--");
}

static const char *suggestion(const char *typed, const char *const *names, int n)
{
    attn_suggest s = attn_suggest_start(typed);
    for (int k = 0; k < n; k++) attn_suggest_offer(&s, names[k]);
    return s.best;
}

Test(args, edit_distance_and_suggestions)
{
    cr_expect_eq(attn_edit_distance("window", "window"), 0);
    cr_expect_eq(attn_edit_distance("windw", "window"), 1);  /* deletion */
    cr_expect_eq(attn_edit_distance("widnow", "window"), 1); /* adjacent swap (OSA) */
    cr_expect_eq(attn_edit_distance("wimdow", "window"), 1); /* substitution */
    cr_expect_eq(attn_edit_distance("Window", "window"), 0); /* case */
    cr_expect_eq(attn_edit_distance("ca", "abc"), 3);        /* OSA, not full Damerau (2) */
    cr_expect_eq(attn_edit_distance("", "mqa"), 3);
    const char *kinds[] = {"full", "mqa", "gqa", "window", "global", "linear", "linformer"};
    const int nk = BENCH_COUNT(kinds);
    cr_expect_str_eq(suggestion("windw", kinds, nk), "window");
    cr_expect_str_eq(suggestion("ful", kinds, nk), "full");
    cr_expect_str_eq(suggestion("lineer", kinds, nk), "linear");
    cr_expect_str_eq(suggestion("linform", kinds, nk), "linformer"); /* a prefix */
    cr_expect_str_eq(suggestion("nqa", kinds, nk), "mqa");           /* the first of two at 1 */
    cr_expect_null(suggestion("xyz", kinds, nk));
    cr_expect_null(suggestion("nosuchkind", kinds, nk));
    cr_expect_null(suggestion("window", kinds, nk)); /* itself: nothing to suggest */
    const char *opts[] = {"--n", "--threads", "--verbose", "--help"};
    cr_expect_str_eq(suggestion("--thread", opts, 4), "--threads");
    cr_expect_str_eq(suggestion("-threads", opts, 4), "--threads");
    cr_expect_str_eq(suggestion("--verb", opts, 4), "--verbose");
    cr_expect_str_eq(suggestion("-n", opts, 4), "--n");
    cr_expect_null(suggestion("--bogus", opts, 4));
    attn_suggest s = attn_suggest_start("windw");
    char hint[64];
    cr_expect_str_eq(attn_suggest_hint(&s, "see bench list", hint, sizeof hint), "see bench list");
    attn_suggest_offer(&s, "window");
    cr_expect_str_eq(attn_suggest_hint(&s, "see bench list", hint, sizeof hint),
                     "did you mean 'window'?");
}
