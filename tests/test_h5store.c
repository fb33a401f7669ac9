/*
 * test_h5store.c — the HDF5 results store and tensor files: runs/points/samples round trip,
 * appending on reopen, refusing foreign or unwritable files without touching them, strings that
 * fill their field, tensors written by tensor_io.c and read back by the file dataset
 * (datasets/file.c) with their errors, and (when h5py and pandas are installed) that Python reads
 * /points as the header promises.
 */
#include <criterion/criterion.h>

#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datasets.h"
#include "h5_read.h"
#include "results.h"

/* ---- temporary directory per test ---- */

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/attnbench-h5-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp failed");
}

static void remove_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

TestSuite(h5store, .init = make_tmpdir, .fini = remove_tmpdir);

/* A path in the test's directory; the 8 most recent results stay valid. */
static const char *tmp(const char *name)
{
    static char path[8][512];
    static int which;
    which = (which + 1) % 8;
    snprintf(path[which], sizeof path[which], "%s/%s", tmpdir, name);
    return path[which];
}

/* Whole file contents (malloc'd) and size, for before/after comparisons. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, (size_t)size, f);
    fclose(f);
    cr_assert_eq(*len, (size_t)size);
    return buf;
}

/* ---- fixtures ---- */

static bench_run make_run(int which)
{
    bench_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-22T03:05:0%dZ", which);
    snprintf(run.command, sizeof run.command, "bench sweep --kinds naive,flash --run %d", which);
    snprintf(run.git_commit, sizeof run.git_commit, "abc123%d-dirty", which);
    snprintf(run.host, sizeof run.host, "host%d", which);
    snprintf(run.cpu_model, sizeof run.cpu_model, "Test CPU @ 2.0GHz");
    snprintf(run.build, sizeof run.build, "gcc 12 release -O3");
    snprintf(run.openblas_config, sizeof run.openblas_config, "OpenBLAS 0.3.21 NO_AFFINITY");
    snprintf(run.hdf5_version, sizeof run.hdf5_version, "1.10.8");
    run.threads = 2;
    run.blas_threads = 1;
    run.seed = 0xFFFFFFFFFFFFFFF0ull + (uint64_t)which; /* above INT64_MAX: unsigned survives */
    run.sgemm_gflops = 50.25 + which;
    return run;
}

static bench_point make_point(int64_t run_id, const char *kind, int k)
{
    bench_point pt;
    memset(&pt, 0, sizeof pt);
    pt.run_id = run_id;
    pt.point_id = -7; /* overwritten by the store */
    snprintf(pt.kind, sizeof pt.kind, "%s", kind);
    snprintf(pt.params, sizeof pt.params, "block_q=%d,block_k=64", 32 * (k + 1));
    snprintf(pt.dataset, sizeof pt.dataset, "random");
    snprintf(pt.mode, sizeof pt.mode, "prefill");
    pt.batch = 1;
    pt.heads = 8;
    pt.kv_heads = 2;
    pt.q_len = 1000 + k;
    pt.kv_len = 2048;
    pt.head_dim = 64;
    pt.causal = 1;
    pt.threads = 2;
    pt.seed = 12345u + (uint64_t)k;
    pt.warmup = 2;
    pt.reps = 3;
    pt.time_median_s = 0.5 + k;
    pt.time_min_s = 0.25 + k;
    pt.time_max_s = 0.75 + k;
    pt.time_p95_s = 0.7 + k;
    pt.time_mean_s = 0.52 + k;
    pt.time_stddev_s = 0.01;
    pt.time_cv = 0.02;
    pt.flops = 1.5e12;
    pt.gflops_per_s = 3000.0;
    pt.bytes = 4.0e6;
    pt.gbytes_per_s = 8.0;
    pt.workspace_bytes = (int64_t)1 << 40;
    pt.peak_rss_bytes = 123456789;
    pt.accuracy_rows = 16;
    pt.rel_err = 1.25e-7;
    pt.max_abs_err = 3e-6;
    pt.self_rel_err = -0.0;
    pt.rank = k - 1; /* -1: a collective point */
    snprintf(pt.host, sizeof pt.host, "node%d", k);
    snprintf(pt.status, sizeof pt.status, "ok");
    /* garbage after the NUL must not reach the file */
    memcpy(pt.status + 3, "JUNK", 4);
    return pt;
}

static void samples_for(int64_t point_seq, double *s, int n)
{
    for (int r = 0; r < n; r++)
        s[r] = 1.0 + (double)point_seq + 0.001 * (n - r); /* decreasing: order is visible */
}

/* Two runs, two points each (kinds flash, naive), three samples per point. */
static void write_two_runs(const char *path)
{
    char msg[ATTN_MSG_LEN];
    int64_t seq = 0;
    for (int which = 1; which <= 2; which++) {
        bench_store *st = NULL;
        cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
        bench_run run = make_run(which);
        cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(run.run_id, which);
        for (int k = 0; k < 2; k++, seq++) {
            bench_point pt = make_point(run.run_id, k == 0 ? "flash" : "naive", (int)seq);
            double s[3];
            samples_for(seq, s, 3);
            cr_assert_eq(bench_store_add_point(st, &pt, s, 3, msg, sizeof msg), ATTN_OK, "%s", msg);
            cr_assert_eq(pt.point_id, seq);
        }
        bench_store_close(st);
    }
}

/* ---- store ---- */

Test(h5store, round_trip_two_runs)
{
    const char *path = tmp("r.h5");
    write_two_runs(path);
    char msg[ATTN_MSG_LEN];

    bench_run *runs = NULL;
    int64_t nruns = 0;
    cr_assert_eq(bench_store_read_runs(path, &runs, &nruns, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(nruns, 2);
    for (int i = 0; i < 2; i++) {
        bench_run want = make_run(i + 1);
        want.run_id = i + 1;
        cr_assert_eq(runs[i].run_id, want.run_id);
        cr_assert_str_eq(runs[i].started_at, want.started_at);
        cr_assert_str_eq(runs[i].command, want.command);
        cr_assert_str_eq(runs[i].git_commit, want.git_commit);
        cr_assert_str_eq(runs[i].host, want.host);
        cr_assert_str_eq(runs[i].cpu_model, want.cpu_model);
        cr_assert_str_eq(runs[i].build, want.build);
        cr_assert_str_eq(runs[i].openblas_config, want.openblas_config);
        cr_assert_str_eq(runs[i].hdf5_version, want.hdf5_version);
        cr_assert_eq(runs[i].threads, want.threads);
        cr_assert_eq(runs[i].blas_threads, want.blas_threads);
        cr_assert_eq(runs[i].seed, want.seed);
        cr_assert_eq(runs[i].sgemm_gflops, want.sgemm_gflops);
    }
    free(runs);

    bench_point *pts = NULL;
    int64_t npts = 0;
    cr_assert_eq(bench_store_read_points(path, &pts, &npts, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(npts, 4);
    for (int64_t i = 0; i < 4; i++) {
        cr_assert_eq(pts[i].point_id, i);
        cr_assert_eq(pts[i].run_id, 1 + i / 2);
        cr_assert_str_eq(pts[i].kind, i % 2 == 0 ? "flash" : "naive");
    }
    /* every field of one point (the third: run 2, first point) */
    bench_point want = make_point(2, "flash", 2);
    const bench_point *got = &pts[2];
    cr_assert_eq(got->run_id, 2);
    cr_assert_eq(got->point_id, 2);
    cr_assert_str_eq(got->kind, want.kind);
    cr_assert_str_eq(got->params, want.params);
    cr_assert_str_eq(got->dataset, want.dataset);
    cr_assert_str_eq(got->mode, want.mode);
    cr_assert_eq(got->batch, want.batch);
    cr_assert_eq(got->heads, want.heads);
    cr_assert_eq(got->kv_heads, want.kv_heads);
    cr_assert_eq(got->q_len, want.q_len);
    cr_assert_eq(got->kv_len, want.kv_len);
    cr_assert_eq(got->head_dim, want.head_dim);
    cr_assert_eq(got->causal, want.causal);
    cr_assert_eq(got->threads, want.threads);
    cr_assert_eq(got->seed, want.seed);
    cr_assert_eq(got->warmup, want.warmup);
    cr_assert_eq(got->reps, want.reps);
    cr_assert_eq(got->time_median_s, want.time_median_s);
    cr_assert_eq(got->time_min_s, want.time_min_s);
    cr_assert_eq(got->time_max_s, want.time_max_s);
    cr_assert_eq(got->time_p95_s, want.time_p95_s);
    cr_assert_eq(got->time_mean_s, want.time_mean_s);
    cr_assert_eq(got->time_stddev_s, want.time_stddev_s);
    cr_assert_eq(got->time_cv, want.time_cv);
    cr_assert_eq(got->flops, want.flops);
    cr_assert_eq(got->gflops_per_s, want.gflops_per_s);
    cr_assert_eq(got->bytes, want.bytes);
    cr_assert_eq(got->gbytes_per_s, want.gbytes_per_s);
    cr_assert_eq(got->workspace_bytes, want.workspace_bytes);
    cr_assert_eq(got->peak_rss_bytes, want.peak_rss_bytes);
    cr_assert_eq(got->accuracy_rows, want.accuracy_rows);
    cr_assert_eq(got->rel_err, want.rel_err);
    cr_assert_eq(got->max_abs_err, want.max_abs_err);
    cr_assert_eq(got->self_rel_err, want.self_rel_err);
    cr_assert_eq(got->rank, want.rank);
    cr_assert_str_eq(got->host, want.host);
    cr_assert_str_eq(got->status, "ok");
    for (size_t c = 2; c < sizeof got->status; c++)
        cr_assert_eq(got->status[c], '\0', "byte %zu after the string is not NUL", c);
    cr_assert_str_eq(got->message, "");
    free(pts);

    for (int64_t p = 0; p < 4; p++) {
        double *s = NULL;
        int64_t ns = 0;
        cr_assert(tu_read_samples(path, p, &s, &ns));
        double expect[3];
        samples_for(p, expect, 3);
        cr_assert_eq(ns, 3);
        for (int r = 0; r < 3; r++)
            cr_assert_eq(s[r], expect[r], "point %lld rep %d", (long long)p, r);
        free(s);
    }
    double *s = NULL;
    int64_t ns = 0;
    cr_assert(tu_read_samples(path, 4, &s, &ns));
    cr_assert_eq(ns, 0, "no point 4, no samples");
    cr_assert_null(s);
}

Test(h5store, reopen_appends)
{
    const char *path = tmp("a.h5");
    char msg[ATTN_MSG_LEN];
    double s[2] = {0.5, 0.25};
    for (int which = 1; which <= 3; which++) {
        bench_store *st = NULL;
        cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
        bench_run run = make_run(which);
        cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(run.run_id, which);
        bench_point pt = make_point(0, "naive", which); /* run_id 0: the run just begun */
        cr_assert_eq(bench_store_add_point(st, &pt, s, 2, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(pt.point_id, which - 1);
        cr_assert_eq(pt.run_id, which);
        bench_store_close(st);
    }
    bench_point *pts = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_points(path, &pts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 3);
    for (int64_t i = 0; i < n; i++) {
        cr_assert_eq(pts[i].point_id, i);
        cr_assert_eq(pts[i].run_id, i + 1);
    }
    free(pts);
}

/* /hosts: rows of the run begun, read back; a file without the table reads as none */
Test(h5store, hosts_round_trip)
{
    const char *path = tmp("h.h5");
    char msg[ATTN_MSG_LEN];
    bench_host *hosts = NULL;
    int64_t n = -1;
    write_two_runs(path); /* no hosts */
    cr_assert_eq(bench_store_read_hosts(path, &hosts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 0);
    cr_assert_null(hosts);
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_host h = {
        .rank = 3, .ranks = 2, .threads = 8, .sgemm_gflops = 1234.5, .mem_bandwidth_gbs = 99.25};
    cr_assert_eq(bench_store_add_host(st, &h, msg, sizeof msg), ATTN_EFAIL, "no run begun yet");
    bench_run run = make_run(3);
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    for (int k = 0; k < 2; k++) {
        snprintf(h.host, sizeof h.host, "node%d", k);
        snprintf(h.cpu_model, sizeof h.cpu_model, "cpu %d", k);
        h.rank = 2 * k;
        cr_assert_eq(bench_store_add_host(st, &h, msg, sizeof msg), ATTN_OK, "%s", msg);
        cr_assert_eq(h.run_id, 3);
    }
    bench_store_close(st);
    cr_assert_eq(bench_store_read_hosts(path, &hosts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 2);
    for (int k = 0; k < 2; k++) {
        char name[16];
        snprintf(name, sizeof name, "node%d", k);
        cr_assert_eq(hosts[k].run_id, 3);
        cr_assert_str_eq(hosts[k].host, name);
        cr_assert_eq(hosts[k].rank, 2 * k);
        cr_assert_eq(hosts[k].ranks, 2);
        cr_assert_eq(hosts[k].threads, 8);
        cr_assert_eq(hosts[k].sgemm_gflops, 1234.5);
        cr_assert_eq(hosts[k].mem_bandwidth_gbs, 99.25);
    }
    free(hosts);
}

Test(h5store, empty_file_reads_zero_rows_and_point_needs_a_run)
{
    const char *path = tmp("e.h5");
    char msg[ATTN_MSG_LEN];
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_point pt = make_point(0, "naive", 0);
    cr_assert_eq(bench_store_add_point(st, &pt, NULL, 0, msg, sizeof msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "begin_run"), "%s", msg);
    bench_store_close(st);

    bench_run *runs = NULL;
    int64_t n = -1;
    cr_assert_eq(bench_store_read_runs(path, &runs, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 0);
    free(runs);
}

Test(h5store, full_length_strings_round_trip)
{
    const char *path = tmp("s.h5");
    char msg[ATTN_MSG_LEN];
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_run run = make_run(1);
    memset(run.command, 'c', sizeof run.command - 1);
    run.command[sizeof run.command - 1] = '\0';
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_point pt = make_point(run.run_id, "k", 0);
    memset(pt.kind, 'k', sizeof pt.kind - 1);
    pt.kind[sizeof pt.kind - 1] = '\0';
    cr_assert_eq(bench_store_add_point(st, &pt, NULL, 0, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_close(st);

    bench_run *runs = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_runs(path, &runs, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_str_eq(runs[0].command, run.command);
    free(runs);
    bench_point *pts = NULL;
    cr_assert_eq(bench_store_read_points(path, &pts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_str_eq(pts[0].kind, pt.kind);
    free(pts);
    double *s = NULL;
    cr_assert(tu_read_samples(path, 0, &s, &n));
    cr_assert_eq(n, 0);
    free(s);
}

/* An HDF5 file with a dataset and no attnbench attributes. */
static void write_foreign_hdf5(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hsize_t dims = 3;
    hid_t sp = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int v[3] = {1, 2, 3};
    cr_assert_geq(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
}

static void expect_refused_untouched(const char *path, const char *needle)
{
    size_t before_len, after_len;
    char *before = slurp(path, &before_len);
    char msg[ATTN_MSG_LEN] = "";
    bench_store *st = (bench_store *)1;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_null(st);
    cr_assert(strstr(msg, path), "message does not name the file: %s", msg);
    cr_assert(strstr(msg, needle), "message lacks '%s': %s", needle, msg);
    bench_run *runs = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_runs(path, &runs, &n, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_null(runs);
    char *after = slurp(path, &after_len);
    cr_assert_eq(after_len, before_len);
    cr_assert(memcmp(before, after, before_len) == 0, "%s was modified", path);
    free(before);
    free(after);
}

Test(h5store, refuses_foreign_hdf5_untouched)
{
    const char *path = tmp("foreign.h5");
    write_foreign_hdf5(path);
    expect_refused_untouched(path, "no 'format' attribute");
}

Test(h5store, refuses_text_file_untouched)
{
    const char *path = tmp("notes.txt");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("these are my notes, not a results file\n", f);
    fclose(f);
    expect_refused_untouched(path, "not an HDF5 file");
}

Test(h5store, refuses_other_format_version_untouched)
{
    const char *path = tmp("other_version.h5");
    char msg[ATTN_MSG_LEN];
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_close(st);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    int32_t v = BENCH_FORMAT_VERSION + 1;
    cr_assert_geq(H5Awrite(a, H5T_NATIVE_INT32, &v), 0);
    H5Aclose(a);
    H5Fclose(f);
    char needle[32];
    snprintf(needle, sizeof needle, "format_version %d", BENCH_FORMAT_VERSION + 1);
    expect_refused_untouched(path, needle);
}

/* Set the format_version attribute of the results file path. */
static void set_format_version(const char *path, int32_t v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    cr_assert_geq(H5Awrite(a, H5T_NATIVE_INT32, &v), 0);
    H5Aclose(a);
    H5Fclose(f);
}

Test(h5store, reads_version_2_but_appends_only_to_ours)
{
    const char *path = tmp("v2.h5");
    write_two_runs(path);
    set_format_version(path, 2);
    char msg[ATTN_MSG_LEN];
    bench_point *pts = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_points(path, &pts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 4);
    free(pts);
    size_t before_len, after_len;
    char *before = slurp(path, &before_len);
    bench_store *st = (bench_store *)1;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_null(st);
    char needle[128];
    snprintf(needle, sizeof needle, "this build reads it but appends runs only to version %d files",
             BENCH_FORMAT_VERSION);
    cr_assert(strstr(msg, "format_version 2") && strstr(msg, needle), "%s", msg);
    char *after = slurp(path, &after_len);
    cr_assert(after_len == before_len && memcmp(before, after, before_len) == 0, "modified");
    free(before);
    free(after);
}

/* Attribute `name` of obj (a string) into buf; false when absent. */
static bool string_attr(hid_t obj, const char *name, char *buf, size_t len)
{
    if (H5Aexists(obj, name) <= 0) return false;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = H5Aget_type(a);
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, len);
    H5Tset_cset(mt, H5Tget_cset(ft));
    const bool ok = H5Aread(a, mt, buf) >= 0;
    buf[len - 1] = '\0';
    H5Tclose(mt);
    H5Tclose(ft);
    H5Aclose(a);
    return ok;
}

/* Every column of every table has a unit and a description (a column added in the 3-argument
 * FIELD form has neither, and fails here), and a written file carries them as attributes: the HL
 * table convention (CLASS, TITLE, FIELD_<i>_NAME) and FIELD_<i>_UNIT, FIELD_<i>_DESCRIPTION. */
Test(h5store, every_column_has_a_unit_and_a_description_in_the_file)
{
    const char *path = tmp("described.h5");
    write_two_runs(path);
    bench_fit_row fit = {.metric = "time", .exponent = 2};
    char msg[ATTN_MSG_LEN];
    cr_assert_eq(bench_store_write_fits(path, 1, &fit, 1, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store *st = NULL; /* a /hosts table too */
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_run run = make_run(3);
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_host host = {.host = "h", .ranks = 1, .threads = 2};
    cr_assert_eq(bench_store_add_host(st, &host, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_close(st);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    for (int t = 0; t < BENCH_NTABLES; t++) {
        const char *table = bench_store_table_name((bench_table_id)t);
        const int n = bench_store_ncolumns((bench_table_id)t);
        cr_assert_gt(n, 0, "%s", table);
        hid_t d = H5Dopen2(f, table, H5P_DEFAULT);
        cr_assert_geq(d, 0, "%s", table);
        hid_t type = H5Dget_type(d);
        cr_assert_eq(H5Tget_nmembers(type), n, "%s: columns in the file", table);
        H5Tclose(type);
        char buf[256];
        cr_assert(string_attr(d, "CLASS", buf, sizeof buf) && strcmp(buf, "TABLE") == 0);
        cr_assert(string_attr(d, "TITLE", buf, sizeof buf) && buf[0], "%s: TITLE", table);
        for (int i = 0; i < n; i++) {
            const bench_column c = bench_store_column((bench_table_id)t, i);
            cr_assert(c.unit[0] && c.description[0], "%s.%s has no unit or no description", table,
                      c.name);
            const char *what[] = {"NAME", "UNIT", "DESCRIPTION"};
            const char *want[] = {c.name, c.unit, c.description};
            for (int w = 0; w < 3; w++) {
                char name[64];
                snprintf(name, sizeof name, "FIELD_%d_%s", i, what[w]);
                cr_assert(string_attr(d, name, buf, sizeof buf), "%s: no %s", table, name);
                cr_assert_str_eq(buf, want[w], "%s %s", table, name);
            }
        }
        H5Dclose(d);
    }
    H5Fclose(f);
}

/* One row of /run_status, read by name (a subset of its columns). */
typedef struct status_read {
    char status[16];
    int64_t planned, finished;
    char started_at[32], ended_at[32], message[160];
} status_read;

/* The /run_status rows of path (up to max) into rows; their count. */
static int read_status(const char *path, status_read *rows, int max)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(status_read));
    const struct {
        const char *name;
        size_t off, size;
    } str[] = {{"status", HOFFSET(status_read, status), 16},
               {"started_at", HOFFSET(status_read, started_at), 32},
               {"ended_at", HOFFSET(status_read, ended_at), 32},
               {"message", HOFFSET(status_read, message), 160}};
    for (int i = 0; i < 4; i++) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, str[i].size);
        H5Tset_cset(st, H5T_CSET_UTF8);
        H5Tinsert(t, str[i].name, str[i].off, st);
        H5Tclose(st);
    }
    H5Tinsert(t, "planned_points", HOFFSET(status_read, planned), H5T_NATIVE_INT64);
    H5Tinsert(t, "finished_points", HOFFSET(status_read, finished), H5T_NATIVE_INT64);
    /* as the store opens it (HDF5 refuses a second open in one process with other locking) */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_file_locking(fapl, 0, 1);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    hid_t d = H5Dopen2(f, "run_status", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d);
    const int n = (int)H5Sget_simple_extent_npoints(sp);
    cr_assert_leq(n, max);
    cr_assert_geq(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    H5Tclose(t);
    return n;
}

Test(h5store, run_status_counts_points_and_marks_an_interrupted_run)
{
    const char *path = tmp("status.h5");
    write_two_runs(path); /* complete, 2 points each, planned not said */
    char msg[ATTN_MSG_LEN];
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    bench_store_set_planned(st, 5);
    bench_run run = make_run(3);
    cr_assert_eq(bench_store_begin_run(st, &run, msg, sizeof msg), ATTN_OK, "%s", msg);
    for (int k = 0; k < 2; k++) {
        bench_point pt = make_point(run.run_id, "flash", k);
        double s[3];
        samples_for(k, s, 3);
        cr_assert_eq(bench_store_add_point(st, &pt, s, 3, msg, sizeof msg), ATTN_OK, "%s", msg);
    }
    status_read rows[4];
    cr_assert_eq(read_status(path, rows, 4), 3);
    cr_assert_str_eq(rows[2].status, "running");
    cr_assert_eq(rows[2].finished, 2, "a running run counts its stored points");
    int64_t kept = -1;
    cr_assert_eq(bench_store_interrupt(st, SIGINT, &kept), 3);
    cr_assert_eq(kept, 2);
    cr_assert_eq(read_status(path, rows, 4), 3);
    for (int r = 0; r < 2; r++) {
        cr_assert_str_eq(rows[r].status, "complete");
        cr_assert_eq(rows[r].planned, 0);
        cr_assert_eq(rows[r].finished, 2);
        cr_assert_str_eq(rows[r].started_at, make_run(r + 1).started_at);
        cr_assert_eq(strlen(rows[r].ended_at), 20, "ISO 8601 UTC: '%s'", rows[r].ended_at);
    }
    cr_assert_str_eq(rows[2].status, "interrupted");
    cr_assert_eq(rows[2].planned, 5);
    cr_assert_eq(rows[2].finished, 2);
    cr_assert_str_eq(rows[2].message, "SIGINT after 2 of 5 points");
    cr_assert_geq(strcmp(rows[2].ended_at, "2026-11-23T00:00:00Z"), 0, "%s", rows[2].ended_at);

    /* interrupted before its first run: a new file is not left behind */
    const char *fresh = tmp("never.h5");
    cr_assert_eq(bench_store_open(fresh, &st, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_interrupt(st, SIGTERM, &kept), 0);
    cr_assert_eq(kept, 0);
    cr_assert_neq(access(fresh, F_OK), 0, "an interrupted new file without a run was left");
}

Test(h5store, refuses_unwritable_path)
{
    char msg[ATTN_MSG_LEN] = "";
    bench_store *st = NULL;
    const char *path = "/nonexistent-dir-attnbench/x.h5";
    cr_assert_eq(bench_store_open(path, &st, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_null(st);
    cr_assert(strstr(msg, "cannot create /nonexistent-dir-attnbench/x.h5"), "%s", msg);
    cr_assert_neq(access("/nonexistent-dir-attnbench", F_OK), 0);

    bench_point *pts = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_points(tmp("missing.h5"), &pts, &n, msg, sizeof msg),
                 ATTN_EINVAL);
    cr_assert(strstr(msg, "missing.h5"), "%s", msg);
}

/* Format attributes right (ASCII cset, unlike ours) but no tables. */
Test(h5store, refuses_damaged_untouched)
{
    const char *path = tmp("damaged.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(BENCH_FORMAT) + 1);
    hid_t a = H5Acreate2(f, "format", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(H5Awrite(a, t, BENCH_FORMAT), 0);
    H5Aclose(a);
    int32_t v = BENCH_FORMAT_VERSION;
    a = H5Acreate2(f, "format_version", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(H5Awrite(a, H5T_NATIVE_INT32, &v), 0);
    H5Aclose(a);
    H5Tclose(t);
    H5Sclose(sp);
    H5Fclose(f);
    expect_refused_untouched(path, "damaged");
}

/* A table whose extent claims far more rows than the file holds (what the fuzzer found: a
 * damaged extent asked calloc for terabytes) is refused as damaged, with no allocation. */
Test(h5store, refuses_a_table_longer_than_its_file)
{
    const char *path = tmp("long.h5");
    write_two_runs(path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t d = H5Dopen2(f, "/points", H5P_DEFAULT);
    cr_assert_geq(d, 0);
    hsize_t rows = (hsize_t)1 << 40;
    cr_assert_geq(H5Dset_extent(d, &rows), 0);
    H5Dclose(d);
    H5Fclose(f);
    char msg[ATTN_MSG_LEN];
    bench_point *pts = NULL;
    int64_t n = 0;
    cr_assert_eq(bench_store_read_points(path, &pts, &n, msg, sizeof msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "damaged") && strstr(msg, "/points"), "%s", msg);
    cr_assert_null(pts);
    bench_run *runs = NULL;
    cr_assert_eq(bench_store_read_runs(path, &runs, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(n, 2);
    free(runs);
}

/* Open HDF5 files, datasets, groups, attributes and named types, in every file (transient
 * types, dataspaces and property lists have no public counter). */
static int64_t open_ids(void)
{
    ssize_t n = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    cr_assert_geq(n, 0);
    return (int64_t)n;
}

/* The file dataset (datasets/file.c) on path: its shape with the newest T queries (0: all)
 * into *s (when not NULL), and its q, k, v for shape s. */
static attn_status file_shape(const char *path, int64_t T, attn_shape *s, char *msg)
{
    const ds_ops *ds = ds_find("file");
    ds_params p = ds_params_defaults(ds);
    p.path = path;
    attn_shape scratch = attn_shape_init(1, 1, 1, 1, 1, 1, false);
    if (!s) s = &scratch;
    s->T = T;
    return ds->shape(&p, s, msg, ATTN_MSG_LEN);
}

static attn_status file_fill(const char *path, const attn_shape *s, float *q, float *k, float *v,
                             char *msg)
{
    const ds_ops *ds = ds_find("file");
    ds_params p = ds_params_defaults(ds);
    p.path = path;
    return ds->fill(s, &p, 0, 1, q, k, v, msg, ATTN_MSG_LEN);
}

Test(h5store, closes_every_hdf5_handle)
{
    char msg[ATTN_MSG_LEN];
    const char *text = tmp("x.txt");
    FILE *tf = fopen(text, "w");
    cr_assert_not_null(tf);
    fputs("text\n", tf);
    fclose(tf);
    const char *foreign = tmp("foreign.h5");
    write_foreign_hdf5(foreign);
    int64_t before = open_ids();

    const char *path = tmp("ids.h5");
    write_two_runs(path);
    bench_store *st = NULL;
    cr_assert_eq(bench_store_open(foreign, &st, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_eq(bench_store_open(text, &st, msg, sizeof msg), ATTN_EINVAL);
    cr_assert_eq(bench_store_open("/nonexistent-dir-attnbench/x.h5", &st, msg, sizeof msg),
                 ATTN_EINVAL);
    bench_run *runs = NULL;
    bench_point *pts = NULL;
    bench_fit_row *fits = NULL;
    int64_t n;
    cr_assert_eq(bench_store_read_runs(path, &runs, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_read_points(path, &pts, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_store_read_fits(path, &fits, &n, msg, sizeof msg), ATTN_OK, "%s", msg);
    free(runs);
    cr_assert_eq(bench_store_read_runs(foreign, &runs, &n, msg, sizeof msg), ATTN_EINVAL);
    free(runs);
    free(pts);
    free(fits);

    /* tensors written by tensor_io.c, read (and refused) by the file dataset */
    int64_t dims[4] = {1, 1, 2, 2};
    float x[4] = {1, 2, 3, 4}, y[3][4];
    const char *tpath = tmp("ids_t.h5");
    cr_assert_eq(bench_tensor_write(tpath, "q", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(tpath, "q", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(file_shape(tpath, 0, NULL, msg), ATTN_EINVAL, "no k, v");
    cr_assert_eq(bench_tensor_write(tpath, "k", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(tpath, "v", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    attn_shape sh;
    cr_assert_eq(file_shape(tpath, 0, &sh, msg), ATTN_OK, "%s", msg);
    cr_assert_eq(file_fill(tpath, &sh, y[0], y[1], y[2], msg), ATTN_OK, "%s", msg);
    cr_assert_eq(file_shape(foreign, 0, NULL, msg), ATTN_EINVAL);
    cr_assert_eq(file_shape(text, 0, NULL, msg), ATTN_EINVAL);

    cr_assert_eq(before, 0);
    cr_assert_eq(open_ids(), before, "HDF5 identifiers leaked: %lld open before, %lld after",
                 (long long)before, (long long)open_ids());
}

/* ---- Python (h5py + pandas) reads /points as the header says ---- */

Test(h5store, pandas_reads_points)
{
    if (system("/usr/bin/python3 -c 'import h5py, pandas' 2>/dev/null") != 0) {
        remove_tmpdir(); /* a skipped test does not reach .fini */
        cr_skip_test("python3 with h5py and pandas not installed "
                     "(apt-get install python3-h5py python3-pandas)");
    }
    const char *path = tmp("py.h5");
    write_two_runs(path);
    /* the snippets of docs/results-format.md "Reading it", as written there */
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import sys, h5py, pandas as pd; "
             "f = h5py.File(sys.argv[1], 'r'); "
             "assert f.attrs['format'] == b'attnbench-results', f.attrs['format']; "
             "assert f.attrs['format_version'] == %d; "
             "points = pd.DataFrame(f['points'][:]).apply("
             "lambda c: c.str.decode('utf-8') if c.dtype == object else c); "
             "status = pd.DataFrame(f['run_status'][:]).apply("
             "lambda c: c.str.decode('utf-8') if c.dtype == object else c); "
             "t = f['points']; "
             "units = {t.attrs[f'FIELD_{i}_NAME'].decode(): t.attrs[f'FIELD_{i}_UNIT'].decode() "
             "for i in range(len(t.dtype))}; "
             "assert len(points) == 4, len(points); "
             "assert list(points.kind) == ['flash', 'naive', 'flash', 'naive'], list(points.kind); "
             "assert list(points.status) == ['ok'] * 4; "
             "assert list(points.point_id) == [0, 1, 2, 3]; "
             "assert list(status.status) == ['complete'] * 2, status; "
             "assert list(status.finished_points) == [2, 2]; "
             "assert units['time_median_s'] == 's' and units['time_cv'] == '1', units; "
             "assert units['gbytes_per_s'] == 'GB/s' and units['bytes'] == 'B', units; "
             "assert set(units) == set(points.columns); "
             "s = pd.DataFrame(f['samples'][:]); "
             "assert len(s) == 12 and list(s[s.point_id == 2]['rep']) == [0, 1, 2]\" '%s'",
             BENCH_FORMAT_VERSION, path);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "python check failed (status %d)", rc);
}

/* ---- tensors ---- */

Test(h5store, tensor_round_trip_and_replace)
{
    const char *path = tmp("t.h5");
    char msg[ATTN_MSG_LEN];
    int64_t dims[4] = {2, 3, 5, 7};
    int64_t n = 2 * 3 * 5 * 7;
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = (float)i * 0.5f - 3.0f;
    cr_assert_eq(bench_tensor_write(path, "q", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(path, "k", dims, x, msg, sizeof msg), ATTN_OK, "%s", msg);

    int64_t got[4];
    float *y = NULL;
    cr_assert(tu_read_tensor(path, "q", got, &y));
    for (int i = 0; i < 4; i++) cr_assert_eq(got[i], dims[i]);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(y[i], x[i]);
    free(y);

    /* replace q with another shape; k stays */
    int64_t dims2[4] = {1, 1, 1, 3};
    float z[3] = {1.0f, -2.0f, 3.5f};
    cr_assert_eq(bench_tensor_write(path, "q", dims2, z, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert(tu_read_tensor(path, "q", got, &y));
    cr_assert_eq(got[3], 3);
    cr_assert_eq(y[1], -2.0f);
    free(y);
    cr_assert(tu_read_tensor(path, "k", got, &y));
    cr_assert_eq(got[2], 5);
    cr_assert_eq(y[n - 1], x[n - 1]);
    free(y);
    free(x);
}

/* Write a dataset of any rank and type directly with HDF5. */
static void write_raw(const char *path, const char *name, int rank, const hsize_t *dims,
                      hid_t ftype, hid_t mtype, const void *data)
{
    hid_t f = access(path, F_OK) == 0 ? H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)
                                      : H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(f, 0);
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    cr_assert_geq(d, 0);
    cr_assert_geq(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
}

/* Write q, k, v of shapes [1,2,3,4], [1,1,5,4], [1,1,5,4] as float32 into path, except the
 * one named `odd`, written as rank, dims, ftype, mtype, data instead (NULL: none). */
static void write_qkv(const char *path, const char *odd, int rank, const hsize_t *dims, hid_t ftype,
                      hid_t mtype, const void *data)
{
    static const float zeros[24] = {0};
    const hsize_t qd[4] = {1, 2, 3, 4}, kd[4] = {1, 1, 5, 4};
    const char *names[3] = {"q", "k", "v"};
    for (int n = 0; n < 3; n++) {
        if (odd && strcmp(odd, names[n]) == 0)
            write_raw(path, names[n], rank, dims, ftype, mtype, data);
        else write_raw(path, names[n], 4, n ? kd : qd, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, zeros);
    }
}

Test(h5store, file_dataset_converts_float64)
{
    const char *path = tmp("f64.h5");
    hsize_t dims[4] = {1, 1, 5, 4};
    double v[20];
    for (int i = 0; i < 20; i++) v[i] = i % 2 ? 0.1 * i : -1e30 / (i + 1);
    write_qkv(path, "v", 4, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v);
    char msg[ATTN_MSG_LEN];
    attn_shape s;
    cr_assert_eq(file_shape(path, 0, &s, msg), ATTN_OK, "%s", msg);
    cr_assert(s.B == 1 && s.H == 2 && s.Hkv == 1 && s.T == 3 && s.S == 5 && s.D == 4);
    float q[24], k[20], y[20];
    cr_assert_eq(file_fill(path, &s, q, k, y, msg), ATTN_OK, "%s", msg);
    for (int i = 0; i < 20; i++) cr_assert_eq(y[i], (float)v[i]);
}

Test(h5store, file_dataset_errors)
{
    char msg[ATTN_MSG_LEN];
    const float data[24] = {0};
    const int idata[24] = {0};
    const hsize_t d3[3] = {1, 5, 4}, d4[4] = {1, 1, 5, 4}, z4[4] = {1, 0, 5, 4};
    const char *rank3 = tmp("rank3.h5"), *ints = tmp("ints.h5"), *empty = tmp("empty.h5");
    const char *noq = tmp("noq.h5");
    write_qkv(rank3, "k", 3, d3, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data);
    write_qkv(ints, "v", 4, d4, H5T_STD_I32LE, H5T_NATIVE_INT, idata);
    write_qkv(empty, "k", 4, z4, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data);
    write_raw(noq, "k", 4, d4, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data);
    cr_assert_eq(file_shape(rank3, 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "dataset 'k' has rank 3, expected 4"), "%s", msg);
    cr_assert_eq(file_shape(ints, 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "dataset 'v' is not floating point"), "%s", msg);
    cr_assert_eq(file_shape(empty, 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "sizes must be in [1, 2^31)"), "%s", msg);
    cr_assert_eq(file_shape(noq, 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "no dataset 'q'"), "%s", msg);
    cr_assert_eq(file_shape(tmp("nope.h5"), 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "nope.h5"), "%s", msg);

    const char *txt = tmp("t.txt");
    FILE *f = fopen(txt, "w");
    cr_assert_not_null(f);
    fputs("not hdf5\n", f);
    fclose(f);
    cr_assert_eq(file_shape(txt, 0, NULL, msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "cannot read") && strstr(msg, "as an HDF5 file"), "%s", msg);
    int64_t one[4] = {1, 1, 1, 1}, dims[4];
    float x = 1.0f, *y = NULL;
    cr_assert_eq(bench_tensor_write(txt, "q", one, &x, msg, sizeof msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "not an HDF5 file"), "%s", msg);
    cr_assert_eq(bench_tensor_write(rank3, "grp/q", one, &x, msg, sizeof msg), ATTN_OK, "%s", msg);
    cr_assert_eq(bench_tensor_write(rank3, "grp", one, &x, msg, sizeof msg), ATTN_EINVAL);
    cr_assert(strstr(msg, "'grp' exists and is not a dataset"), "%s", msg);
    cr_assert(tu_read_tensor(rank3, "grp/q", dims, &y));
    cr_assert_eq(y[0], 1.0f);
    free(y);
    cr_assert_eq(bench_tensor_write("/nonexistent-dir-attnbench/t.h5", "q", one, &x, msg,
                                    sizeof msg),
                 ATTN_EINVAL);
    cr_assert(strstr(msg, "cannot create"), "%s", msg);
}
