/* test_run.h — running the bench binary from a test, as a user would: `ENV bench ARGS` through sh,
 * stdin from /dev/null, stdout and stderr captured. Header-only (static) so each test links alone.
 */
#ifndef TEST_RUN_H
#define TEST_RUN_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole file at path into buf (NUL-terminated, cut at len - 1; "" when unreadable). */
static inline void tu_slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

/* Run `ENV $BENCH_EXE ARGS` (env: assignments such as PATH=..., or ""; ARGS written as in a shell,
 * paths without spaces or quotes): stdout into out, stderr into err, or into out as well when err
 * is NULL. Returns the exit status (-1 when the process did not exit). */
static inline int tu_vbench(const char *env, char *out, size_t out_len, char *err, size_t err_len,
                            const char *fmt, va_list ap)
{
    const char *exe = getenv("BENCH_EXE");
    cr_assert_not_null(exe, "BENCH_EXE is not set (run through meson test)");
    char args[2048], cmd[4096], err_path[] = "/tmp/attnbench-stderr-XXXXXX";
    vsnprintf(args, sizeof args, fmt, ap);
    if (err) {
        int fd = mkstemp(err_path);
        cr_assert_geq(fd, 0);
        close(fd);
        snprintf(cmd, sizeof cmd, "%s '%s' %s 2>'%s' </dev/null", env, exe, args, err_path);
    } else {
        snprintf(cmd, sizeof cmd, "%s '%s' %s 2>&1 </dev/null", env, exe, args);
    }
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, out_len - 1, f);
    out[n] = '\0';
    while (fgetc(f) != EOF) {} /* drain what did not fit, so the child never blocks on a pipe */
    const int st = pclose(f);
    if (err) {
        tu_slurp(err_path, err, err_len);
        unlink(err_path);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* tu_vbench with the arguments given, and no environment: `bench ARGS` (fmt, ...). */
static inline int tu_bench(char *out, size_t out_len, char *err, size_t err_len, const char *fmt,
                           ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int st = tu_vbench("", out, out_len, err, err_len, fmt, ap);
    va_end(ap);
    return st;
}

#endif
