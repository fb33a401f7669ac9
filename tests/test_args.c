/* test_args.c — command-line value parsing: lists, ranges, suffixes, and the messages for bad
 * values; the option-table parser. */
#include <criterion/criterion.h>
#include <string.h>

#include "args.h"

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
