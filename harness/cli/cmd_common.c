/* cmd_common.c — what run and sweep share: measurement options, error exit, command line. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attn_suggest.h"
#include "commands.h"
#include "machine.h"
#include "yardstick.h"

attn_status bench_measure_parse(const bench_measure_opts *m, bench_measure_cfg *cfg, char *msg,
                                size_t msg_len)
{
    int64_t threads = bench_cpu_count(), reps = 5, warmup = 1, seed = 1, rows = 64;
    double min_time = 0.2, warmup_time = 0.05;
    if ((m->threads && bench_parse_i64(m->threads, "--threads", 1, 1024, &threads, msg, msg_len)) ||
        (m->reps && bench_parse_i64(m->reps, "--reps", 1, 1000000, &reps, msg, msg_len)) ||
        (m->warmup && bench_parse_i64(m->warmup, "--warmup", 0, 1000, &warmup, msg, msg_len)) ||
        (m->warmup_time && bench_parse_double(m->warmup_time, "--warmup-time", 0, 3600,
                                              &warmup_time, msg, msg_len)) ||
        (m->min_time &&
         bench_parse_double(m->min_time, "--min-time", 0, 3600, &min_time, msg, msg_len)) ||
        (m->seed && bench_parse_i64(m->seed, "--seed", 0, INT64_MAX, &seed, msg, msg_len)) ||
        (m->accuracy_rows &&
         bench_parse_i64(m->accuracy_rows, "--accuracy-rows", 1, 1 << 20, &rows, msg, msg_len)))
        return ATTN_EINVAL;
    cfg->isa = attn_isa_current();
    if (m->isa && bench_parse_isa(m->isa, "--isa", &cfg->isa, msg, msg_len)) return ATTN_EINVAL;
    cfg->threads = (int)threads;
    cfg->timing = (bench_timing_cfg){.warmup = (int)warmup,
                                     .warmup_time_s = warmup_time,
                                     .min_reps = (int)reps,
                                     .min_time_s = min_time,
                                     .max_reps = (int)(reps > 100000 ? reps : 100000)};
    cfg->seed = (uint64_t)seed;
    cfg->accuracy_rows = rows;
    cfg->allow_nonfinite = m->allow_nonfinite != NULL;
    return ATTN_OK;
}

const char *bench_isa_list(bool supported, char *buf, size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < ATTN_ISA_COUNT && w < len; i++)
        if (supported ? attn_isa_supported((attn_isa)i) : attn_isa_built((attn_isa)i))
            w += (size_t)snprintf(buf + w, len - w, "%s%s", w ? ", " : "",
                                  attn_isa_name((attn_isa)i));
    return buf;
}

attn_status bench_parse_isa(const char *text, const char *what, attn_isa *isa, char *msg,
                            size_t msg_len)
{
    char built[64], runs[64], hint[96];
    bench_isa_list(false, built, sizeof built);
    bench_isa_list(true, runs, sizeof runs);
    if (!attn_isa_parse(text, isa)) {
        attn_suggest s = attn_suggest_start(text);
        for (int i = 0; i < ATTN_ISA_COUNT; i++) attn_suggest_offer(&s, attn_isa_name((attn_isa)i));
        char choices[96];
        snprintf(choices, sizeof choices, "choices: %s", built);
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s: unknown kernel set (%s)", what, text,
                         attn_suggest_hint(&s, choices, hint, sizeof hint));
    }
    if (!attn_isa_built(*isa))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s: not built into this binary (built: %s)",
                         what, text, built);
    if (!attn_isa_supported(*isa))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s: this CPU cannot run it (runs: %s)",
                         what, text, runs);
    return ATTN_OK;
}

bench_run bench_new_run(int argc, char **argv, const bench_measure_cfg *cfg)
{
    bench_run run = {0};
    bench_machine_facts(&run);
    bench_join_args(argc, argv, run.command, sizeof run.command);
    run.threads = cfg->threads;
    run.blas_threads = 1; /* inside the forwards' parallel regions */
    run.seed = cfg->seed;
    const bench_yardstick_size size = bench_yardstick_size_in_force();
    run.sgemm_gflops = bench_sgemm_gflops(cfg->threads, size.sgemm_n, size.sgemm_reps);
    run.mem_bandwidth_gbs =
        bench_mem_bandwidth_gbs(cfg->threads, size.bandwidth_bytes, size.bandwidth_reps);
    return run;
}

attn_status bench_parse_mode(const char *text, bool *decode, char *msg, size_t msg_len)
{
    if (strcmp(text, "prefill") == 0) *decode = false;
    else if (strcmp(text, "decode") == 0) *decode = true;
    else {
        char hint[96];
        attn_suggest s = attn_suggest_start(text);
        attn_suggest_offer(&s, "prefill");
        attn_suggest_offer(&s, "decode");
        attn_suggest_hint(&s, NULL, hint, sizeof hint);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "--mode: '%s' is neither prefill nor decode%s%s%s", text,
                         s.best ? " (" : "", hint, s.best ? ")" : "");
    }
    return ATTN_OK;
}

attn_status bench_parse_pass(const char *text, bench_pass *pass, char *msg, size_t msg_len)
{
    const bench_pass all[] = {BENCH_PASS_FORWARD, BENCH_PASS_BACKWARD, BENCH_PASS_TRAIN};
    char hint[96];
    attn_suggest s = attn_suggest_start(text);
    for (int i = 0; i < 3; i++) {
        if (strcmp(text, bench_pass_name(all[i])) == 0) {
            *pass = all[i];
            return ATTN_OK;
        }
        attn_suggest_offer(&s, bench_pass_name(all[i]));
    }
    attn_suggest_hint(&s, NULL, hint, sizeof hint);
    return attn_fail(ATTN_EINVAL, msg, msg_len,
                     "--pass: '%s' is not forward, backward or train%s%s%s", text,
                     s.best ? " (" : "", hint, s.best ? ")" : "");
}

attn_status bench_parse_dtype(const char *text, attn_dtype *dtype, char *msg, size_t msg_len)
{
    if (attn_dtype_parse(text, dtype)) return ATTN_OK;
    char hint[96];
    attn_suggest s = attn_suggest_start(text);
    for (int i = 0; i < ATTN_DTYPE_COUNT; i++)
        attn_suggest_offer(&s, attn_dtype_name((attn_dtype)i));
    attn_suggest_hint(&s, NULL, hint, sizeof hint);
    return attn_fail(ATTN_EINVAL, msg, msg_len, "--dtype: '%s' is not f32, bf16 or f16%s%s%s", text,
                     s.best ? " (" : "", hint, s.best ? ")" : "");
}

attn_status bench_unknown_kind(const char *name, const char *prefix, char *msg, size_t msg_len)
{
    char hint[96];
    attn_suggest s = attn_suggest_start(name);
    for (int k = 0; k < attn_kind_count(); k++) attn_suggest_offer(&s, attn_kind_at(k)->name);
    return attn_fail(ATTN_EINVAL, msg, msg_len, "%sunknown kind '%s' (%s)", prefix, name,
                     attn_suggest_hint(&s, "see bench list", hint, sizeof hint));
}

int bench_fail(attn_status st, const char *msg)
{
    if (msg) fprintf(stderr, "bench: %s\n", msg);
    return st == ATTN_EINVAL || st == ATTN_ENODEF ? 2 : 1;
}

/* Does word need quoting for a POSIX shell (empty, or a character outside a safe set)? */
static bool needs_quotes(const char *word)
{
    if (!*word) return true;
    for (const char *s = word; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-+=:,./@%", *s)) return true;
    return false;
}

/* Does word hold a byte that is not valid UTF-8, or a control character? */
static bool needs_escapes(const char *word)
{
    for (const char *s = word; *s;) {
        const size_t n = bench_utf8_sequence(s);
        if (n == 0 || (unsigned char)*s < 0x20 || *s == 0x7f) return true;
        s += n;
    }
    return false;
}

/* word as $'...' (bash, zsh, ksh, POSIX.1-2024 sh) into buf from w: valid UTF-8 as it is, '\''
 * and '\\' escaped, any other byte as \xNN; the new length (stops short of len). */
static size_t put_escaped(const char *word, char *buf, size_t w, size_t len)
{
    if (w + 3 >= len) return w;
    buf[w++] = '$', buf[w++] = '\'';
    for (const char *s = word; *s;) {
        const size_t n = bench_utf8_sequence(s);
        char one[8];
        if (n == 0 || (unsigned char)*s < 0x20 || *s == 0x7f)
            snprintf(one, sizeof one, "\\x%02x", (unsigned char)*s);
        else if (*s == '\'' || *s == '\\') snprintf(one, sizeof one, "\\%c", *s);
        else snprintf(one, sizeof one, "%.*s", (int)n, s);
        const size_t k = strlen(one);
        if (w + k + 2 >= len) break;
        memcpy(buf + w, one, k);
        w += k, s += n ? n : 1;
    }
    buf[w++] = '\'';
    buf[w] = '\0';
    return w;
}

void bench_join_args(int argc, char **argv, char *buf, size_t len)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int a = 0; a < argc && w + 1 < len; a++) {
        if (a) buf[w++] = ' ';
        if (needs_escapes(argv[a])) {
            w = put_escaped(argv[a], buf, w, len);
            continue;
        }
        const bool quote = needs_quotes(argv[a]);
        if (quote && w + 1 < len) buf[w++] = '\'';
        for (const char *s = argv[a]; *s && w + 1 < len; s++) {
            if (*s == '\'' && quote) { /* close the quotes, an escaped quote, reopen them */
                if (w + 4 >= len) break;
                memcpy(buf + w, "'\\''", 4);
                w += 4;
            } else {
                buf[w++] = *s;
            }
        }
        if (quote && w + 1 < len) buf[w++] = '\'';
        buf[w] = '\0';
    }
}

attn_status bench_check_writable(const char *path, const char *what, char *msg, size_t msg_len)
{
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) == 0) return ATTN_OK;
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s: %s", what, path, strerror(errno));
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (access(dir, W_OK) == 0) return ATTN_OK;
    return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s: cannot create it in %s (%s)", what, path,
                     dir, strerror(errno));
}
