/*
 * test_cli.c — the bench binary as a user meets it: exit codes (2 for bad usage or input),
 * one clear line on stderr, results files left untouched on bad input, appending runs, and
 * `bench run --input/--output` against an independent float64 computation.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "h5_read.h"
#include "results.h"
#include "test_run.h"
#include "test_util.h"

static char dir[256];
static char out_text[1 << 16], err_text[1 << 16];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/attnbench-cli-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(cli, .init = make_dir, .fini = remove_dir, .timeout = 120);

/* Run `bench ARGS` (arguments written as in a shell; paths here have no spaces); returns the
 * exit status and keeps stdout/stderr in out_text/err_text. */
#define bench(...) tu_bench(out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

static void expect_usage_error(const char *words, const char *fmt, const char *arg)
{
    int code = bench(fmt, arg);
    cr_expect_eq(code, 2, "bench %s: exit %d, stderr: %s", arg, code, err_text);
    cr_expect(strstr(err_text, words) != NULL, "bench %s: stderr '%s' lacks '%s'", arg, err_text,
              words);
    cr_expect(strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
              "bench %s: expected one line on stderr, got '%s'", arg, err_text);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *read_all(const char *path, long *n)
{
    *n = file_size(path);
    char *buf = malloc(*n > 0 ? (size_t)*n : 1);
    FILE *f = fopen(path, "rb");
    cr_assert(f && fread(buf, 1, (size_t)*n, f) == (size_t)*n);
    fclose(f);
    return buf;
}

/* Every run and point of a results file (the test stops if it cannot be read). */
static void read_results(const char *file, bench_run **runs, int64_t *nr, bench_point **pts,
                         int64_t *np)
{
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_read_runs(file, runs, nr, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_read_points(file, pts, np, msg, sizeof msg), ATTN_OK, "%s", msg);
}

#define TINY                                                                                       \
    "sweep --kinds full --n 8,16 --causal 0,1 --heads 2 --head-dim 4 --reps 1 --warmup 0 "         \
    "--min-time 0 --threads 1 --quiet --dataset gaussian"

Test(cli, bad_usage_exits_2_with_one_clear_line)
{
    expect_usage_error("unknown command 'frobnicate'", "%s", "frobnicate");
    expect_usage_error("unknown kind 'nokind'", "%s", "run nokind");
    expect_usage_error("not a number", "%s", "run full block_q=abc");
    expect_usage_error("has no parameter 'nosuch'", "%s", "run full nosuch=1");
    expect_usage_error("out of range", "%s", "run full block_q=0");
    expect_usage_error("unknown option '--bogus'", "%s", "sweep --bogus 1");
    expect_usage_error("--n: 'abc' is not an integer", "%s", "sweep --n abc");
    expect_usage_error("--n: 0 is out of range", "%s", "sweep --n 0");
    expect_usage_error("--head-dim: 0 is out of range", "%s", "run full --head-dim 0");
    expect_usage_error("kv_heads 3 does not divide heads 8", "%s", "sweep --heads 8 --kv-heads 3");
    expect_usage_error("unknown kind 'nope'", "%s", "sweep --kinds full,nope");
    expect_usage_error("unknown dataset 'nope'", "%s", "sweep --dataset nope");
    expect_usage_error("no swept kind has a parameter 'nosuch'", "%s", "sweep --set nosuch=4");
    expect_usage_error("--causal: 2 is out of range", "%s", "sweep --causal 2");
    expect_usage_error("needs a KIND", "%s", "run");
    expect_usage_error("available", "%s", "run full --n 1M --heads 4096"); /* 4 TiB */
    expect_usage_error("'decoding' is neither prefill nor decode", "%s",
                       "run full --mode decoding");
    expect_usage_error("--mode: 'decode' given twice", "%s", "sweep --mode decode,decode");
    /* repeats are refused alike everywhere: list values, options, NAME=VALUE, --set */
    expect_usage_error("--n: 64 given twice", "%s", "sweep --kinds full --n 64,32:128");
    expect_usage_error("option --n given twice", "%s", "run full --n 64 --n 128");
    expect_usage_error("window given twice", "%s", "run window window=4 window=8");
    expect_usage_error("--q-len applies to decode points only", "%s",
                       "sweep --kinds full --n 64 --q-len 4");
    /* more KV heads than heads: refused before any parameter is resolved (no SIGFPE) */
    expect_usage_error("kv_heads 16 does not divide heads 8", "%s",
                       "run full --heads 8 --kv-heads 16");
    expect_usage_error("kv_heads 4 does not divide heads 2", "%s",
                       "run gqa --heads 2 --kv-heads 4");
    expect_usage_error("kv_heads 16 does not divide heads 8", "%s",
                       "sweep --kinds full,gqa --heads 8 --kv-heads 16");
}

/* Decode points: the newest q_len queries against a cache of n keys, causal, with the KV bytes
 * they read; prefill points beside them keep their causal axis; the run records bandwidth. */
Test(cli, sweep_decode_mode)
{
    char file[512];
    snprintf(file, sizeof file, "%s/d.h5", dir);
    cr_assert_eq(bench("sweep --kinds full --mode prefill,decode --n 8,16 --causal 0,1 --q-len 1,3 "
                       "--heads 2 --kv-heads 1,2 --head-dim 4 --reps 1 --warmup 0 --min-time 0 "
                       "--threads 1 --quiet --dataset gaussian --out %s",
                       file),
                 0, "stderr: %s", err_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(file, &runs, &nr, &pts, &np);
    cr_expect_gt(runs[0].mem_bandwidth_gbs, 0);
    int prefill = 0, decode = 0;
    for (int64_t p = 0; p < np; p++) {
        const bench_point *pt = &pts[p];
        cr_expect_str_eq(pt->status, "ok");
        cr_expect_leq(pt->rel_err, 1e-5, "point %lld rel_err %g", (long long)p, pt->rel_err);
        const double kv = 2.0 * sizeof(float) * (double)(pt->kv_heads * pt->kv_len * pt->head_dim);
        cr_expect_eq(pt->kv_bytes, kv, "point %lld: kv_bytes %g, expected %g", (long long)p,
                     pt->kv_bytes, kv);
        if (strcmp(pt->mode, "decode") == 0) {
            decode++;
            cr_expect_eq(pt->causal, 1);
            cr_expect(pt->q_len == 1 || pt->q_len == 3, "q_len %lld", (long long)pt->q_len);
        } else {
            cr_expect_str_eq(pt->mode, "prefill");
            cr_expect_eq(pt->q_len, pt->kv_len);
            prefill++;
        }
    }
    cr_expect_eq(prefill, 2 * 2 * 2, "n x causal x kv_heads");
    cr_expect_eq(decode, 2 * 2 * 2, "n x q_len x kv_heads");
    free(runs);
    free(pts);
}

/* "did you mean": a close misspelling gets the name it misses, a far one the usual pointer. */
Test(cli, did_you_mean)
{
    /* kinds */
    expect_usage_error("unknown kind 'windw' (did you mean 'window'?)", "%s", "run windw");
    expect_usage_error("--kinds: unknown kind 'lineer' (did you mean 'linear'?)", "%s",
                       "sweep --kinds full,lineer");
    expect_usage_error("unknown kind 'zzzzzz' (see bench list)", "%s", "run zzzzzz");
    /* datasets */
    expect_usage_error("unknown dataset 'gausian' (did you mean 'gaussian'?)", "%s",
                       "run full --dataset gausian");
    expect_usage_error("unknown dataset 'neddle' (did you mean 'needle'?)", "%s",
                       "sweep --kinds full --dataset gaussian,neddle");
    /* commands, and the launcher's */
    expect_usage_error("unknown command 'swep' (did you mean 'sweep'?)", "%s", "swep");
    expect_usage_error("unknown command 'lsit' (did you mean 'list'?)", "%s", "lsit");
    expect_usage_error("unknown command '--verison' (did you mean '--version'?)", "%s",
                       "--verison");
    expect_usage_error("'test' is a command of the launcher: ./bench test", "%s", "test");
    expect_usage_error("unknown command 'qqqq' (commands: sweep, run", "%s", "qqqq");
    /* options of every command (the table each parses with) */
    expect_usage_error("unknown option '--thread' for bench run (did you mean '--threads'?)", "%s",
                       "run full --thread 2");
    expect_usage_error("unknown option '--kind' for bench sweep (did you mean '--kinds'?)", "%s",
                       "sweep --kind full");
    expect_usage_error("unknown option '-n' for bench run (did you mean '--n'?)", "%s",
                       "run full -n 64");
    expect_usage_error("(did you mean '--verbose'?)", "%s", "list --verbos");
    expect_usage_error("(did you mean '--verbose'?)", "%s", "datasets --verb");
    expect_usage_error("(did you mean '--no-sgemm'?)", "%s", "info --no-sgem");
    expect_usage_error("(did you mean '--format'?)", "%s", "plot x.h5 --fromat svg");
    expect_usage_error("(did you mean '--no-store'?)", "%s", "fit x.h5 --nostore");
    expect_usage_error("unknown option '--bogus' for bench run (see bench run --help)", "%s",
                       "run full --bogus");
    /* parameter names (NAME=VALUE, --set NAME=...) and named choices */
    expect_usage_error("has no parameter 'windw', nor has dataset 'gaussian' (did you mean "
                       "'window'?)",
                       "%s", "run window windw=8");
    expect_usage_error("(did you mean 'needles'?)", "%s", "run full --dataset needle needle=8");
    expect_usage_error("--set windw: no swept kind has a parameter 'windw', nor has a swept "
                       "dataset (did you mean 'window'?)",
                       "%s", "sweep --kinds window --set windw=8");
    expect_usage_error("parameter map='favr' is not one of elu, relu, favor, trig (did you mean "
                       "'favor'?)",
                       "%s", "run linear map=favr");
    expect_usage_error("(did you mean 'prefill'?)", "%s", "run full --mode prefil");
}

Test(cli, version_and_short_help)
{
    cr_expect_eq(bench("--version"), 0);
    int major = -1, minor = -1, patch = -1, end = 0;
    cr_expect_eq(sscanf(out_text, "attnbench %d.%d.%d (commit %*[^)])%n", &major, &minor, &patch,
                        &end),
                 3, "'%s' is not 'attnbench X.Y.Z (commit C)'", out_text);
    cr_expect(end > 0 && strcmp(out_text + end, "\n") == 0, "'%s'", out_text);
    cr_expect_eq(bench("run -h"), 0, "bench run -h: %s", err_text);
    cr_expect(strstr(out_text, "usage: bench run") != NULL, "%s", out_text);
}

/* OpenBLAS falls back to SSE3 kernels ("core Prescott") on CPU models it does not know; bench
 * then re-executes with the core the CPU's features run (blas_core.c), so on any x86-64 with
 * AVX2 + FMA `bench info` never reports Prescott. An OPENBLAS_CORETYPE without AVX-512 kernels
 * on an AVX-512 CPU is kept and flagged. */
Test(cli, openblas_never_runs_its_generic_kernels_on_a_cpu_with_avx2)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        cr_skip_test("this CPU has no AVX2 + FMA");
    cr_assert_eq(unsetenv("OPENBLAS_CORETYPE"), 0);
    cr_assert_eq(bench("info --no-sgemm --no-bandwidth --no-peak"), 0, "%s", err_text);
    const char *line = strstr(out_text, "openblas");
    cr_assert_not_null(line, "%s", out_text);
    cr_expect(strstr(line, "(core ") && !strstr(line, "(core Prescott"), "%s", line);
    cr_expect(!strstr(line, "no AVX-512"), "no OPENBLAS_CORETYPE, yet a warning: %s", line);
    /* a user's OPENBLAS_CORETYPE is kept, and said to waste an AVX-512 CPU where it does */
    cr_assert_eq(setenv("OPENBLAS_CORETYPE", "Haswell", 1), 0);
    const int rc = bench("info --no-sgemm --no-bandwidth --no-peak");
    unsetenv("OPENBLAS_CORETYPE");
    cr_assert_eq(rc, 0, "%s", err_text);
    line = strstr(out_text, "openblas");
    cr_assert_not_null(line, "%s", out_text);
    const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
    cr_expect(strstr(line, "(core Haswell") != NULL, "%s", line);
    cr_expect((strstr(line, "OPENBLAS_CORETYPE: no AVX-512") != NULL) == wide, "%s", line);
#else
    cr_skip_test("not x86-64");
#endif
}

Test(cli, help_everywhere)
{
    const char *cmds[] = {"--help", "sweep --help", "run --help", "list --help", "info --help"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        cr_expect_eq(bench("%s", cmds[c]), 0, "bench %s", cmds[c]);
        cr_expect(strstr(out_text, "usage:") != NULL, "bench %s: %s", cmds[c], out_text);
    }
    cr_expect_eq(bench("list"), 0);
    cr_expect(strstr(out_text, "full") && strstr(out_text, "block_q"), "%s", out_text);
}

Test(cli, sweep_writes_then_appends_and_bad_input_leaves_the_file_untouched)
{
    char file[512];
    snprintf(file, sizeof file, "%s/r.h5", dir);
    cr_assert_eq(bench(TINY " --out %s", file), 0, "stderr: %s", err_text);
    cr_expect(strstr(out_text, "results:") != NULL, "%s", out_text);
    long n0;
    char *before = read_all(file, &n0);

    /* bad inputs: exit 2, file byte-for-byte the same */
    const char *bad[] = {"--n 0",       "--heads 8 --kv-heads 3", "--kinds nope",
                         "--threads 0", "--min-time -1",          "--set nosuch=1"};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        cr_expect_eq(bench("sweep %s --out %s", bad[b], file), 2, "sweep %s: %s", bad[b], err_text);
        long n1;
        char *after = read_all(file, &n1);
        cr_expect(n1 == n0 && memcmp(before, after, (size_t)n0) == 0,
                  "sweep %s modified the results file", bad[b]);
        free(after);
    }
    free(before);

    /* a second sweep appends a run */
    cr_assert_eq(bench(TINY " --out %s", file), 0, "stderr: %s", err_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(file, &runs, &nr, &pts, &np);
    cr_expect_eq(nr, 2);
    cr_expect_eq(np, 8);
    cr_expect_eq(runs[1].run_id, 2);
    cr_expect(strstr(runs[0].command, "--out") != NULL, "command: %s", runs[0].command);
    cr_expect_gt(runs[0].sgemm_gflops, 0);
    for (int64_t p = 0; p < np; p++) {
        cr_expect_str_eq(pts[p].status, "ok");
        cr_expect_eq(pts[p].run_id, p < 4 ? 1 : 2);
        cr_expect_eq(pts[p].reps, 1);
        cr_expect_leq(pts[p].rel_err, 1e-5, "point %lld rel_err %g", (long long)p, pts[p].rel_err);
        cr_expect_gt(pts[p].workspace_bytes, 0);
        cr_expect_gt(pts[p].peak_rss_bytes, 0);
        double *s;
        int64_t ns;
        cr_expect(tu_read_samples(file, pts[p].point_id, &s, &ns));
        cr_expect_eq(ns, 1);
        cr_expect_eq(s[0], pts[p].time_median_s);
        free(s);
    }
    free(runs);
    free(pts);
}

Test(cli, unwritable_or_foreign_out_is_refused)
{
    expect_usage_error("cannot create", TINY " --out %s", "/nonexistent-dir/r.h5");
    char file[512];
    snprintf(file, sizeof file, "%s/notes.txt", dir);
    FILE *f = fopen(file, "w");
    fputs("my notes\n", f);
    fclose(f);
    cr_expect_eq(bench(TINY " --out %s", file), 2, "stderr: %s", err_text);
    cr_expect(strstr(err_text, "not") != NULL, "stderr: %s", err_text);
    long n;
    char *after = read_all(file, &n);
    cr_expect(n == 9 && memcmp(after, "my notes\n", 9) == 0, "the text file was modified");
    free(after);
}

Test(cli, malformed_input_is_refused)
{
    char file[512];
    snprintf(file, sizeof file, "%s/missing.h5", dir);
    cr_expect_eq(bench("run full --input %s", file), 2, "%s", err_text);
    snprintf(file, sizeof file, "%s/qk.h5", dir);
    int64_t dims[4] = {1, 2, 3, 4};
    float x[24] = {0};
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_tensor_write(file, "q", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(file, "k", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(bench("run full --input %s", file), 2, "%s", err_text); /* no v */
    cr_expect(strstr(err_text, "'v'") != NULL, "stderr: %s", err_text);
    int64_t vd[4] = {1, 2, 4, 3};
    cr_assert_eq(bench_tensor_write(file, "v", vd, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_expect_eq(bench("run full --input %s", file), 2, "%s", err_text); /* v shape != k shape */
    cr_expect(strstr(err_text, "shapes do not fit") != NULL, "stderr: %s", err_text);
    cr_expect_eq(bench("run full --input %s --n 5", file), 2);
    char notes[512];
    snprintf(notes, sizeof notes, "%s/notes.txt", dir);
    FILE *f = fopen(notes, "w");
    fputs("keep me\n", f);
    fclose(f);
    cr_expect_eq(bench("run full --n 8 --output %s", notes), 2, "%s", err_text);
    cr_expect(strstr(err_text, "not an HDF5 file") != NULL, "stderr: %s", err_text);
    long n;
    char *kept = read_all(notes, &n);
    cr_expect(n == 8 && memcmp(kept, "keep me\n", 8) == 0, "--output damaged a text file");
    free(kept);
}

/* Independent float64 attention (its own loops, not the library's reference). */
static double *exact_attention(const float *q, const float *k, const float *v, int B, int H,
                               int Hkv, int T, int S, int D, bool causal)
{
    double *o = calloc((size_t)B * H * T * D, sizeof *o), *w = malloc((size_t)S * sizeof *w);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                int g = h / (H / Hkv), last = causal ? i + S - T : S - 1;
                const float *qi = q + (((size_t)b * H + h) * T + i) * D;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= last && j < S; j++) {
                    const float *kj = k + (((size_t)b * Hkv + g) * S + j) * D;
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += (double)qi[d] * kj[d];
                    w[j] = dot / sqrt((double)D);
                    mx = fmax(mx, w[j]);
                }
                for (int j = 0; j <= last && j < S; j++) sum += (w[j] = exp(w[j] - mx));
                double *oi = o + (((size_t)b * H + h) * T + i) * D;
                for (int j = 0; j <= last && j < S; j++)
                    for (int d = 0; d < D; d++)
                        oi[d] += w[j] / sum * v[(((size_t)b * Hkv + g) * S + j) * D + d];
            }
    free(w);
    return o;
}

Test(cli, run_input_output_matches_float64)
{
    const int B = 2, H = 4, Hkv = 2, T = 37, S = 53, D = 24;
    for (int causal = 0; causal <= 1; causal++) {
        char in[512], outp[512], msg[ATTN_MSG_LEN];
        snprintf(in, sizeof in, "%s/qkv%d.h5", dir, causal);
        snprintf(outp, sizeof outp, "%s/o%d.h5", dir, causal);
        float *q = tu_random((int64_t)B * H * T * D, 1.5, 11),
              *k = tu_random((int64_t)B * Hkv * S * D, 1.5, 12);
        float *v = tu_random((int64_t)B * Hkv * S * D, 1, 13);
        int64_t qd[4] = {B, H, T, D}, kd[4] = {B, Hkv, S, D}, od[4];
        cr_assert_eq(bench_tensor_write(in, "q", qd, q, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(bench_tensor_write(in, "k", kd, k, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(bench_tensor_write(in, "v", kd, v, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(bench("run full --causal %d --input %s --output %s --reps 2 --threads 2",
                           causal, in, outp),
                     0, "stderr: %s", err_text);
        cr_expect(strstr(out_text, "full") != NULL, "stdout: %s", out_text);
        float *o;
        cr_assert(tu_read_tensor(outp, "o", od, &o), "cannot read 'o' of %s", outp);
        cr_assert(od[0] == B && od[1] == H && od[2] == T && od[3] == D);
        double *ref = exact_attention(q, k, v, B, H, Hkv, T, S, D, causal);
        double err = tu_rel_l2(o, ref, (int64_t)B * H * T * D);
        cr_expect_leq(err, 1e-5, "causal=%d: rel L2 %g", causal, err);
        free(q), free(k), free(v), free(o), free(ref);
    }
}

/* q, k, v of shape [1,2,16,8] into file, with value bad at flat index at of tensor which. */
static void write_qkv_with(const char *file, char which, int64_t at, float bad)
{
    int64_t dims[4] = {1, 2, 16, 8};
    char msg[ATTN_MSG_LEN];
    const char *names = "qkv";
    for (int t = 0; t < 3; t++) {
        float *x = tu_random(256, 1, 20 + (uint64_t)t);
        if (names[t] == which) x[at] = bad;
        char name[2] = {names[t], '\0'};
        cr_assert_eq(bench_tensor_write(file, name, dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
        free(x);
    }
}

Test(cli, nonfinite_inputs_refused_and_outputs_marked)
{
    char nan_in[512], inf_in[512], res[512];
    snprintf(nan_in, sizeof nan_in, "%s/nan.h5", dir);
    snprintf(inf_in, sizeof inf_in, "%s/inf.h5", dir);
    snprintf(res, sizeof res, "%s/nonfinite.h5", dir);
    /* q[0,1,3,5] = 1*128 + 3*8 + 5 */
    write_qkv_with(nan_in, 'q', 157, NAN);
    write_qkv_with(inf_in, 'k', 2 * 8 + 1, INFINITY); /* k[0,0,2,1] */
    /* refused with the position, before anything is written */
    cr_expect_eq(bench("run full --input %s --out %s", nan_in, res), 2, "%s", err_text);
    cr_expect(strstr(err_text, "q[0,1,3,5] is NaN (--allow-nonfinite measures it anyway)"), "%s",
              err_text);
    cr_expect_eq(file_size(res), -1, "a refused run created %s", res);
    cr_expect_eq(bench("sweep --kinds full --dataset file=%s --out %s", inf_in, res), 2, "%s",
                 err_text);
    cr_expect(strstr(err_text, "k[0,0,2,1] is +Inf"), "%s", err_text);
    cr_expect_eq(file_size(res), -1, "a refused sweep created %s", res);
    /* measured anyway: an Inf key makes the causal rows that see it NaN: status nonfinite */
    cr_assert_eq(bench("run full --causal 1 --input %s --allow-nonfinite --reps 1 --min-time 0 "
                       "--warmup 0 --out %s",
                       inf_in, res),
                 0, "%s", err_text);
    cr_expect(strstr(err_text, "status nonfinite: output o[") != NULL, "%s", err_text);
    cr_expect(strstr(out_text, "[nonfinite output]") != NULL, "%s", out_text);
    cr_expect(strstr(out_text, "-nan") == NULL, "rel_err printed as -nan: %s", out_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(res, &runs, &nr, &pts, &np);
    cr_assert_eq(np, 1);
    cr_expect_str_eq(pts[0].status, "nonfinite");
    cr_expect(strstr(pts[0].message, "k[0,0,2,1] is +Inf (measured: --allow-nonfinite)"), "%s",
              pts[0].message);
    cr_expect(strstr(runs[0].command, "--allow-nonfinite") != NULL, "%s", runs[0].command);
    free(runs);
    free(pts);
}

/* The settings "NAME=CHOICE" of every named choice of every parameter of ops (the defaults
 * first, as ""), so a kind whose weights depend on a choice (linear map=favor) is covered. */
static int choice_settings(const attn_ops *ops, char out[][64], int max)
{
    int n = 0;
    snprintf(out[n++], 64, "%s", "");
    const attn_param_table *t = attn_kind_params(ops);
    for (int i = 0; i < t->count; i++)
        for (int c = 0; c < attn_param_choice_count(&t->defs[i]) && n < max; c++)
            snprintf(out[n++], 64, "%s=%s", t->defs[i].name, t->defs[i].choices[c]);
    return n;
}

/* Every kind with weights (registry-driven): `bench run --input` with the weights in the file
 * (the drawn ones, perturbed) reproduces the float64 reference computed with them, records
 * weights=file and writes them back with --output; a weight of other dims exits 2 with one line
 * naming it, before anything is measured. (tests/test_input_output.py, the `input_output` test,
 * checks the same against independent numpy definitions.) */
Test(cli, run_takes_weights_from_the_input_file)
{
    const int B = 1, H = 4, T = 21, S = 30, D = 8;
    int kinds_with_weights = 0;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        char settings[16][64];
        const int ns = choice_settings(ops, settings, 16);
        for (int c = 0; c < ns; c++) {
            const int64_t Hkv = attn_kind_kv_heads(ops, H, 0);
            attn_shape s = attn_shape_init(B, H, Hkv, T, S, D, false);
            attn_params p = tu_params(ops, settings[c], &s);
            char msg[ATTN_MSG_LEN];
            if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
            attn_weight w[ATTN_MAX_WEIGHTS];
            const int nw = attn_kind_weights(ops, &s, &p, w);
            if (nw == 0) continue;
            kinds_with_weights++;
            float *owned[ATTN_MAX_WEIGHTS];
            cr_assert_eq(attn_weights_draw(ops, &s, &p, owned, msg, sizeof msg), ATTN_OK, "%s",
                         msg);
            for (int i = 0; i < nw; i++) {
                const int64_t e = attn_weight_elems(&w[i]);
                float *noise = tu_random(e, 0.3, 70 + (uint64_t)i);
                for (int64_t x = 0; x < e; x++) owned[i][x] = 0.8f * owned[i][x] + noise[x];
                free(noise);
            }
            float *q = tu_random(attn_q_elems(&s), 1, 1), *k = tu_random(attn_kv_elems(&s), 1, 2);
            float *v = tu_random(attn_kv_elems(&s), 1, 3);
            char in[512], bad[512], outp[512];
            snprintf(in, sizeof in, "%s/%s%d.h5", dir, ops->name, c);
            snprintf(bad, sizeof bad, "%s/%s%d-bad.h5", dir, ops->name, c);
            snprintf(outp, sizeof outp, "%s/%s%d-o.h5", dir, ops->name, c);
            const int64_t qd[4] = {B, H, T, D}, kd[4] = {B, Hkv, S, D};
            for (int f = 0; f < 2; f++) {
                const char *path = f ? bad : in;
                cr_assert_eq(bench_tensor_write(path, "q", qd, q, msg, sizeof msg), ATTN_OK);
                cr_assert_eq(bench_tensor_write(path, "k", kd, k, msg, sizeof msg), ATTN_OK);
                cr_assert_eq(bench_tensor_write(path, "v", kd, v, msg, sizeof msg), ATTN_OK);
                for (int i = 0; i < nw; i++) {
                    int64_t dims[4];
                    memcpy(dims, w[i].dims, sizeof dims);
                    dims[0] += f && i == nw - 1; /* the bad file: the last weight one row more */
                    const attn_weight got = {w[i].name,
                                             w[i].summary,
                                             w[i].rank,
                                             {dims[0], dims[1], dims[2], dims[3]}};
                    float *data = f ? calloc((size_t)attn_weight_elems(&got), 4) : owned[i];
                    cr_assert_eq(bench_tensor_add(path, w[i].name, w[i].rank, dims, data, NULL,
                                                  NULL, 0, msg, sizeof msg),
                                 ATTN_OK, "%s", msg);
                    if (f) free(data);
                }
            }
            cr_expect_eq(bench("run %s %s --input %s --reps 1", ops->name, settings[c], bad), 2,
                         "%s %s: a weight of other dims: %s", ops->name, settings[c], err_text);
            cr_expect(strstr(err_text, w[nw - 1].name) &&
                          strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
                      "%s: expected one line naming '%s': %s", ops->name, w[nw - 1].name, err_text);
            cr_assert_eq(bench("run %s %s --input %s --output %s --reps 1 --threads 2", ops->name,
                               settings[c], in, outp),
                         0, "%s %s: %s", ops->name, settings[c], err_text);
            cr_expect(strstr(out_text, "weights=file") != NULL, "%s: %s", ops->name, out_text);
            float *o;
            int64_t od[4];
            cr_assert(tu_read_tensor(outp, "o", od, &o));
            attn_params given = p;
            for (int i = 0; i < nw; i++) given.w[i] = owned[i];
            double *ref = tu_reference(ops, &s, &given, q, k, v);
            const double err = tu_rel_l2(o, ref, attn_q_elems(&s));
            cr_expect_leq(err, 1e-5, "%s %s: rel L2 %.3g against float64 with the file's weights",
                          ops->name, settings[c], err);
            free(o), free(ref), free(q), free(k), free(v);
            attn_weights_free(owned);
        }
    }
    cr_expect_gt(kinds_with_weights, 0, "no kind has weights: linear map=favor should");
}

/* A weight in the input file that the kind does not read with its settings, though it would
 * with another value of a parameter (linformer share=kv: proj_k = E = F, so a proj_v in the file
 * would be left unread while the point says weights=file): refused with one line naming it
 * (registry-driven: every kind, every choice setting). */
Test(cli, run_refuses_a_weight_the_kind_would_leave_unread)
{
    const int B = 1, H = 4, T = 21, S = 30, D = 8;
    int refused = 0;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        char settings[16][64];
        const int ns = choice_settings(ops, settings, 16);
        for (int c = 1; c < ns; c++) {
            const int64_t Hkv = attn_kind_kv_heads(ops, H, 0);
            attn_shape s = attn_shape_init(B, H, Hkv, T, S, D, false);
            attn_params p = tu_params(ops, settings[c], &s);
            char msg[ATTN_MSG_LEN];
            if (attn_check(ops, &s, &p, msg, sizeof msg) != ATTN_OK) continue;
            attn_weight used[ATTN_MAX_WEIGHTS], other[ATTN_MAX_WEIGHTS];
            const int nu = attn_kind_weights(ops, &s, &p, used);
            const attn_weight *extra = NULL;
            for (int o = 1; o < ns && !extra; o++) {
                attn_params q = tu_params(ops, settings[o], &s);
                const int no = attn_kind_weights(ops, &s, &q, other);
                for (int i = 0; i < no && !extra; i++) {
                    bool listed = false;
                    for (int u = 0; u < nu; u++) listed |= strcmp(used[u].name, other[i].name) == 0;
                    if (!listed) extra = &other[i];
                }
            }
            if (!extra) continue;
            char in[512];
            snprintf(in, sizeof in, "%s/%s%d-unread.h5", dir, ops->name, c);
            float *q = tu_random(attn_q_elems(&s), 1, 1), *kv = tu_random(attn_kv_elems(&s), 1, 2);
            const int64_t qd[4] = {B, H, T, D}, kd[4] = {B, Hkv, S, D};
            cr_assert_eq(bench_tensor_write(in, "q", qd, q, msg, sizeof msg), ATTN_OK);
            cr_assert_eq(bench_tensor_write(in, "k", kd, kv, msg, sizeof msg), ATTN_OK);
            cr_assert_eq(bench_tensor_write(in, "v", kd, kv, msg, sizeof msg), ATTN_OK);
            float *data = calloc((size_t)attn_weight_elems(extra), sizeof *data);
            cr_assert_eq(bench_tensor_add(in, extra->name, extra->rank, extra->dims, data, NULL,
                                          NULL, 0, msg, sizeof msg),
                         ATTN_OK, "%s", msg);
            cr_expect_eq(bench("run %s %s --input %s --reps 1", ops->name, settings[c], in), 2,
                         "%s %s with '%s' in the file: %s", ops->name, settings[c], extra->name,
                         out_text);
            char want[96];
            snprintf(want, sizeof want, "holds weight '%s', which %s %s does not use", extra->name,
                     ops->name, settings[c]);
            cr_expect(strstr(err_text, want) &&
                          strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
                      "expected one line with \"%s\": %s", want, err_text);
            refused++;
            free(q), free(kv), free(data);
            unlink(in);
        }
    }
    cr_expect_gt(refused, 0, "linformer share=kv lists proj_k alone: it should be refused");
}

/* Lines of err_text containing needle. */
static int lines_with(const char *needle)
{
    int n = 0;
    for (const char *at = err_text; (at = strstr(at, needle)) != NULL; at++) n++;
    return n;
}

/* bench with an environment (ENV bench ARGS). */
static int bench_in(const char *env, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int st = tu_vbench(env, out_text, sizeof out_text, err_text, sizeof err_text, fmt, ap);
    va_end(ap);
    return st;
}

/* Variation judged robustly (BENCH_TEST_TIMES records chosen times, stats.h): one outlier among
 * steady repetitions is no warning (its CV is 213 %); a point that varies once and is steady when
 * measured again is none either; one that varies twice is one line naming the spread. A sweep
 * prints one closing line for all such points, each named with --verbose. One repetition
 * measures no variation: cv% "-", not 0.0. */
Test(cli, timing_variation_is_judged_robustly_and_summed_up_once)
{
    const char *quick = "--n 64 --heads 2 --head-dim 8 --reps 5 --min-time 0 --warmup-time 0 "
                        "--threads 1";
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=o", "run full %s", quick), 0, "%s", err_text);
    cr_expect(strstr(out_text, " 212.") != NULL, "its CV, 213 %%, in the row: %s", out_text);
    cr_expect(!strstr(err_text, "vary"), "one outlier: %s", err_text);
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=v,s", "run full %s", quick), 0, "%s", err_text);
    cr_expect(!strstr(err_text, "vary"), "steady when measured again: %s", err_text);
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=v", "run full %s", quick), 0, "%s", err_text);
    cr_expect(lines_with("timings vary (interquartile range 100% of the median 1 ms") == 1 &&
                  lines_with("\n") == 1,
              "one line: %s", err_text);

    char file[512];
    snprintf(file, sizeof file, "%s/vary.h5", dir);
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=v",
                          "sweep --kinds full,window --dataset gaussian --n 64,128 %s --out %s",
                          quick + strlen("--n 64 "), file),
                 0, "%s", err_text);
    cr_expect(
        lines_with("timings vary") == 1 &&
            strstr(err_text, "bench: timings vary at 4 of 4 points even measured twice") &&
            strstr(err_text,
                   "full gaussian n=64 causal, full gaussian n=128 causal, window gaussian n=64 "
                   "causal, window gaussian n=128 causal)"),
        "one closing line: %s", err_text);
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=v",
                          "sweep --kinds full --dataset gaussian --n 64,128 %s --out %s --verbose",
                          quick + strlen("--n 64 "), file),
                 0, "%s", err_text);
    cr_expect_eq(lines_with("bench: warning: full T="), 2, "--verbose: each point: %s", err_text);
    cr_expect_eq(bench_in("BENCH_TEST_TIMES=o",
                          "sweep --kinds full --dataset gaussian --n 64,128 %s --out %s",
                          quick + strlen("--n 64 "), file),
                 0, "%s", err_text);
    cr_expect(!strstr(err_text, "vary"), "outliers only: %s", err_text);
    unlink(file);

    cr_expect_eq(bench("run full --n 64 --reps 1 --min-time 0 --warmup 0"), 0, "%s", err_text);
    const char *row = strstr(out_text, "\nfull ");
    cr_assert_not_null(row, "%s", out_text);
    char cv[16] = "";
    cr_expect_eq(sscanf(row, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %15s", cv), 1);
    cr_expect_str_eq(cv, "-", "cv%% of one repetition: %s", row);
}

/* --max-point-time: a point predicted (from its series' previous n) over the budget is skipped,
 * stored nowhere, and listed once per kind after the sweep; each series' first point is
 * measured. The default --causal (auto) measures kinds defined with a mask causally. */
Test(cli, sweep_skips_points_over_the_time_budget)
{
    char file[512];
    snprintf(file, sizeof file, "%s/b.h5", dir);
    cr_assert_eq(bench("sweep --kinds full,linear --n 64,128,256 --max-point-time 1e-9 --heads 2 "
                       "--head-dim 8 --reps 1 --warmup 0 --min-time 0 --threads 1 --quiet "
                       "--dataset gaussian,local --out %s",
                       file),
                 0, "stderr: %s", err_text);
    cr_expect(strstr(err_text, "skipped 8 points over the time budget") != NULL, "%s", err_text);
    cr_expect_eq(lines_with("bench:   full (n=128, n=256; 4 points)"), 1, "%s", err_text);
    cr_expect_eq(lines_with("bench:   linear (n=128, n=256; 4 points)"), 1, "%s", err_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(file, &runs, &nr, &pts, &np);
    cr_expect_eq(np, 4, "only the n=64 points are stored");
    for (int64_t p = 0; p < np; p++) {
        cr_expect_eq(pts[p].kv_len, 64);
        cr_expect_eq(pts[p].causal, 1, "--causal auto: full and linear are defined causal");
        cr_expect_str_eq(pts[p].status, "ok");
    }
    free(runs);
    free(pts);
}

/* Sweeps stay whole (registry-driven: exercised by every kind whose definition has no causal
 * mask or no decode, linformer and nystrom today; fails if none has): with
 * --causal 1 such a kind's points are skipped and listed once, before measuring, with its
 * reason, while full's are measured; --causal auto measures it without the mask; `run` refuses
 * it with exit 2 and the reason on one line. */
Test(cli, sweep_skips_points_outside_a_kinds_definition)
{
    int exercised = 0;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        for (int decode = 0; decode < 2; decode++) {
            attn_shape s =
                attn_shape_init(1, 2, attn_kind_kv_heads(ops, 2, 0), decode ? 1 : 32, 32, 8, true);
            s.decode = decode;
            attn_params p = tu_params(ops, NULL, &s);
            char why[ATTN_MSG_LEN], file[512], line[ATTN_MSG_LEN + 64];
            if (attn_check(ops, &s, &p, why, sizeof why) != ATTN_ENODEF) continue;
            exercised++;
            snprintf(file, sizeof file, "%s/u-%s-%d.h5", dir, ops->name, decode);
            cr_assert_eq(bench("sweep --kinds %s,full --n 32 --causal 1 --mode %s --heads 2 "
                               "--head-dim 8 --reps 1 --warmup 0 --min-time 0 --threads 1 --quiet "
                               "--dataset gaussian,local --out %s",
                               ops->name, decode ? "decode" : "prefill", file),
                         0, "%s decode=%d: %s", ops->name, decode, err_text);
            cr_expect(strstr(err_text, "skipping 2 points outside their kind's definition") != NULL,
                      "%s: %s", ops->name, err_text);
            snprintf(line, sizeof line, "bench:   %s (%s; 2 points): %s", ops->name,
                     decode ? "decode" : "causal=1", why);
            cr_expect_eq(lines_with(line), 1, "%s: expected once '%s' in: %s", ops->name, line,
                         err_text);
            bench_run *runs;
            bench_point *pts;
            int64_t nr, np;
            read_results(file, &runs, &nr, &pts, &np);
            cr_expect_eq(np, 2, "%s: only full's points are stored", ops->name);
            for (int64_t q = 0; q < np; q++) cr_expect_str_eq(pts[q].kind, "full");
            free(runs), free(pts);
            cr_expect_eq(bench("run %s --n 32 --heads 2 --head-dim 8 %s", ops->name,
                               decode ? "--mode decode" : "--causal 1"),
                         2, "%s", err_text);
            cr_expect(strstr(err_text, why) &&
                          strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
                      "%s: run should refuse with one line '%s': %s", ops->name, why, err_text);
            if (decode) continue;
            cr_assert_eq(bench("sweep --kinds %s,full --n 32 --heads 2 --head-dim 8 --reps 1 "
                               "--warmup 0 --min-time 0 --threads 1 --quiet --dataset gaussian "
                               "--out %s",
                               ops->name, file),
                         0, "%s --causal auto: %s", ops->name, err_text);
            cr_expect(strstr(err_text, "--causal auto: measuring 1 point without the causal mask"),
                      "%s: %s", ops->name, err_text);
            read_results(file, &runs, &nr, &pts, &np);
            cr_expect_eq(np, 2 + 2);
            for (int64_t q = 2; q < np; q++)
                cr_expect_eq(pts[q].causal, strcmp(pts[q].kind, "full") == 0, "%s", pts[q].kind);
            free(runs), free(pts);
        }
    }
    cr_expect_gt(exercised, 0,
                 "no registered kind refuses a causal or decode point (ATTN_ENODEF): the skipping "
                 "path is not exercised");
}

/* --pass: run backward of a kind with a backward records pass, saved_bytes, the backward's flops
 * (2.5 x forward) and workspace; a kind without one exits 2 with its reason on one line; a sweep
 * over --pass forward,train stores both passes and lists the kind it skipped. */
Test(cli, pass_backward_and_train)
{
    const attn_ops *full = attn_kind_find("full"), *none = NULL;
    cr_assert(full && attn_kind_has_backward(full));
    attn_shape s = attn_shape_init(1, 2, 2, 32, 32, 8, false);
    attn_params p = attn_params_defaults(attn_kind_params(full));
    attn_params_resolve(full, &s, &p);
    char file[512], sweep[512];
    snprintf(file, sizeof file, "%s/pass.h5", dir);
    snprintf(sweep, sizeof sweep, "%s/pass-sweep.h5", dir);
    cr_assert_eq(bench("run full --pass backward --n 32 --heads 2 --head-dim 8 --reps 1 --warmup 0 "
                       "--min-time 0 --threads 1 --out %s",
                       file),
                 0, "%s", err_text);
    cr_expect(strstr(out_text, " backward ") != NULL, "the table shows the pass: %s", out_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(file, &runs, &nr, &pts, &np);
    cr_assert_eq(np, 1);
    cr_expect_str_eq(pts[0].pass, "backward");
    cr_expect_eq(pts[0].saved_bytes, (int64_t)attn_kind_saved_bytes(full, &s, &p));
    cr_expect_gt(pts[0].saved_bytes, 0);
    cr_expect_float_eq(pts[0].flops, 2.5 * full->flops(full, &s, &p), 1e-6 * pts[0].flops);
    const attn_exec x = tu_exec(1); /* --threads 1 */
    cr_expect_eq(pts[0].workspace_bytes, (int64_t)full->train->workspace_bytes(full, &x, &s, &p));
    cr_expect_eq(strcmp(pts[0].status, "ok"), 0, "%s", pts[0].message);
    free(runs), free(pts);

    for (int k = 0; k < attn_kind_count() && !none; k++) { /* a kind without a backward */
        const attn_ops *ops = attn_kind_at(k);
        if (!attn_kind_has_backward(ops) && !ops->distributed &&
            bench("run %s --n 32 --heads 2 --head-dim 8 --reps 1 --warmup 0 --min-time 0 "
                  "--threads 1",
                  ops->name) == 0)
            none = ops;
    }
    cr_assert(none, "every kind has a backward: the refusal is not exercised");
    const char *why = attn_kind_no_backward_reason(none);
    cr_expect_eq(bench("run %s --pass train --n 32 --heads 2 --head-dim 8", none->name), 2, "%s",
                 err_text);
    cr_expect(strstr(err_text, why) && strchr(err_text, '\n') == err_text + strlen(err_text) - 1,
              "%s: one line with '%s': %s", none->name, why, err_text);

    cr_assert_eq(bench("sweep --kinds full,%s --pass forward,train --n 32 --causal 0 --heads 2 "
                       "--head-dim 8 --reps 1 --warmup 0 --min-time 0 --threads 1 --quiet "
                       "--dataset gaussian --out %s",
                       none->name, sweep),
                 0, "%s", err_text);
    char line[ATTN_MSG_LEN + 64];
    snprintf(line, sizeof line, "bench:   %s (causal=0 pass=train; 1 point", none->name);
    cr_expect(strstr(err_text, line) && strstr(err_text, why), "expected '%s' and '%s' in: %s",
              line, why, err_text);
    read_results(sweep, &runs, &nr, &pts, &np);
    cr_assert_eq(np, 3, "full forward, full train, %s forward", none->name);
    int trains = 0;
    for (int64_t q = 0; q < np; q++) {
        const bool train = strcmp(pts[q].pass, "train") == 0;
        cr_expect(train || strcmp(pts[q].pass, "forward") == 0, "%s", pts[q].pass);
        if (!train) continue;
        trains++;
        cr_expect_str_eq(pts[q].kind, "full");
        cr_expect_float_eq(pts[q].flops, 3.5 * full->flops(full, &s, &p), 1e-6 * pts[q].flops);
    }
    cr_expect_eq(trains, 1);
    free(runs), free(pts);
}

/* `bench sweep` without --kinds measures every kind but those on request (attn_ops.on_request),
 * which `bench list` names with their reason; --kinds measures them. */
Test(cli, default_sweep_leaves_out_kinds_on_request)
{
    char file[512];
    snprintf(file, sizeof file, "%s/on-request.h5", dir);
    cr_assert_eq(bench("sweep --n 32 --heads 2 --head-dim 8 --reps 1 --warmup 0 --min-time 0 "
                       "--threads 1 --quiet --dataset gaussian --out %s",
                       file),
                 0, "%s", err_text);
    bench_run *runs;
    bench_point *pts;
    int64_t nr, np;
    read_results(file, &runs, &nr, &pts, &np);
    int on_request = 0;
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        int found = 0;
        for (int64_t q = 0; q < np; q++) found += strcmp(pts[q].kind, ops->name) == 0;
        on_request += ops->on_request != NULL;
        if (ops->on_request) cr_expect_eq(found, 0, "%s is measured on request only", ops->name);
        else cr_expect_gt(found, 0, "%s is missing from the default kinds", ops->name);
    }
    free(runs), free(pts);
    cr_assert_gt(on_request, 0, "no kind is measured on request: the rule is not exercised");
    cr_assert_eq(bench("list"), 0, "%s", out_text);
    for (int n = 0; n < attn_kind_count(); n++) {
        const attn_ops *ops = attn_kind_at(n);
        char line[ATTN_MSG_LEN];
        snprintf(line, sizeof line, "  %-12s %s\n", ops->name, ops->on_request);
        if (ops->on_request)
            cr_expect(strstr(out_text, line), "bench list does not say why %s is on request: %s",
                      ops->name, out_text);
    }
}
