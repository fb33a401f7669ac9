/*
 * reader.c — reading a results file back (results.h): every row of a table, read again while a
 * writer's flush is half done and cut to the rows on disk; the optional tables (/hosts, /fits)
 * read as empty when absent; and /fits, rewritten whole by `bench fit` with one run's rows
 * replaced.
 */
#include <errno.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "h5table.h"

/* Open path read-only after checking it is a results file, and open dataset t->dset. */
static attn_status open_table_ro(const char *path, const table *t, hid_t *file, hid_t *dset,
                                 char *msg, size_t msg_len)
{
    *file = *dset = -1;
    if (!path || access(path, F_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path ? path : "(null)",
                         path ? strerror(errno) : "no path");
    attn_status cs = bench_h5_check_results_file(path, "", BENCH_FORMAT_VERSION_READ, msg, msg_len);
    if (cs != ATTN_OK) return cs;
    *file = bench_h5_open_unlocked(path, H5F_ACC_RDONLY);
    if (*file < 0) return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot open %s for reading", path);
    *dset = H5Dopen2(*file, t->dset, H5P_DEFAULT);
    if (*dset < 0) {
        H5Fclose(*file);
        *file = -1;
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s is damaged: it has no %s table", path,
                         t->dset);
    }
    return ATTN_OK;
}

/* Could the file hold `rows` rows of dset? A damaged extent may claim terabytes; the tables are
 * not compressed, so their rows take at least rows × the row's size on disk. A writer extends a
 * table just before writing its new rows: 64 MiB of slack covers that. */
static bool rows_fit_file(const char *path, hid_t dset, int64_t rows)
{
    struct stat st;
    hid_t ft = H5Dget_type(dset);
    const size_t row = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    if (row == 0 || stat(path, &st) != 0) return false;
    return (double)rows * (double)row <= (double)st.st_size + 64.0 * 1024 * 1024;
}

/* Read every row of table t into a malloc'd array (once: read_table retries). */
static attn_status read_table_once(const char *path, const table *t, void **out, int64_t *n,
                                   char *msg, size_t msg_len)
{
    *out = NULL;
    *n = 0;
    hid_t file, dset;
    attn_status st = open_table_ro(path, t, &file, &dset, msg, msg_len);
    if (st != ATTN_OK) return st;
    /* /fits, derived data, is read from older builds' files too: the columns it has */
    hid_t mtype =
        t == &bench_h5_fits ? bench_h5_memory_type_of(t, dset) : bench_h5_compound_type(t, false);
    int64_t rows = bench_h5_table_rows(dset);
    void *buf = NULL;
    if (mtype < 0 || rows < 0) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the size of %s in %s", t->dset, path);
    } else if ((uint64_t)rows > SIZE_MAX / t->row_size || !rows_fit_file(path, dset, rows)) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s is damaged: its %s table claims %lld rows, more than the file holds",
                       path, t->dset, (long long)rows);
    } else if (rows > 0 && !(buf = calloc((size_t)rows, t->row_size))) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory reading %lld rows of %s in %s",
                       (long long)rows, t->dset, path);
    } else if (bench_h5_read_rows(dset, mtype, 0, rows, buf) < 0) {
        st = attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "cannot read %s in %s: its columns do not match this build's (another version?)",
            t->dset, path);
        free(buf);
        buf = NULL;
    } else {
        bench_h5_terminate_strings(t, buf, rows);
        *out = buf;
        *n = rows;
    }
    if (mtype >= 0) H5Tclose(mtype);
    H5Dclose(dset);
    H5Fclose(file);
    return st;
}

/* Every row of table t into a malloc'd array. While another process writes the file (it holds
 * the writers' lock), a read that fails may have met a flush half done: it is tried again (for
 * about 2 s); rows not yet written (run_id 0: the table grew, its rows are not on disk yet) are
 * left out at the end. Every table's first column is run_id. */
static attn_status read_table(const char *path, const table *t, void **out, int64_t *n, char *msg,
                              size_t msg_len)
{
    bench_h5_quiet();
    attn_status st = read_table_once(path, t, out, n, msg, msg_len);
    for (int tries = 0; st != ATTN_OK && tries < 20 && bench_locked_by_other(path); tries++) {
        nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
        st = read_table_once(path, t, out, n, msg, msg_len);
    }
    if (st == ATTN_OK && bench_locked_by_other(path))
        while (*n > 0 &&
               *(const int64_t *)((const char *)*out + (size_t)(*n - 1) * t->row_size) == 0)
            --*n;
    return st;
}

attn_status bench_store_read_runs(const char *path, bench_run **runs, int64_t *n, char *msg,
                                  size_t msg_len)
{
    void *rows;
    attn_status st = read_table(path, &bench_h5_runs, &rows, n, msg, msg_len);
    *runs = rows;
    return st;
}

attn_status bench_store_read_points(const char *path, bench_point **points, int64_t *n, char *msg,
                                    size_t msg_len)
{
    void *rows;
    attn_status st = read_table(path, &bench_h5_points, &rows, n, msg, msg_len);
    *points = rows;
    return st;
}

attn_status bench_store_read_samples(const char *path, bench_sample **rows, int64_t *n, char *msg,
                                     size_t msg_len)
{
    void *buf;
    attn_status st = read_table(path, &bench_h5_samples, &buf, n, msg, msg_len);
    *rows = buf;
    return st;
}

/* Every row of table t, which a results file may lack (then none: ATTN_OK, *n = 0). */
static attn_status read_optional_table(const char *path, const table *t, void **rows, int64_t *n,
                                       char *msg, size_t msg_len)
{
    bench_h5_quiet();
    *rows = NULL;
    *n = 0;
    hid_t file, runs;
    attn_status st = open_table_ro(path, &bench_h5_runs, &file, &runs, msg, msg_len);
    if (st != ATTN_OK) return st;
    htri_t has = H5Lexists(file, t->dset, H5P_DEFAULT);
    H5Dclose(runs);
    H5Fclose(file);
    if (has <= 0) return ATTN_OK;
    return read_table(path, t, rows, n, msg, msg_len);
}

attn_status bench_store_read_fits(const char *path, bench_fit_row **rows, int64_t *n, char *msg,
                                  size_t msg_len)
{
    void *buf; /* none: written before any `bench fit` */
    attn_status st = read_optional_table(path, &bench_h5_fits, &buf, n, msg, msg_len);
    *rows = buf;
    return st;
}

attn_status bench_store_read_hosts(const char *path, bench_host **hosts, int64_t *n, char *msg,
                                   size_t msg_len)
{
    void *buf; /* none: written before /hosts existed */
    attn_status st = read_optional_table(path, &bench_h5_hosts, &buf, n, msg, msg_len);
    *hosts = buf;
    return st;
}

/* Does dset have every column of table t? */
static bool current_layout(hid_t dset, const table *t)
{
    hid_t type = H5Dget_type(dset);
    const int members = type < 0 ? -1 : H5Tget_nmembers(type);
    if (type >= 0) H5Tclose(type);
    return members == (int)t->nfields;
}

attn_status bench_store_write_fits(const char *path, int64_t run_id, const bench_fit_row *rows,
                                   int64_t n, char *msg, size_t msg_len)
{
    bench_h5_quiet();
    if (n < 0 || (n > 0 && !rows))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "invalid fit row count %lld", (long long)n);
    if (!path || access(path, F_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot read %s: %s", path ? path : "(null)",
                         path ? strerror(errno) : "no path");
    const int lock = bench_lock(path, "", msg, msg_len);
    if (lock < 0) return ATTN_EINVAL;
    attn_status st = bench_h5_check_results_file(path, "", BENCH_FORMAT_VERSION_READ, msg, msg_len);
    hid_t file = st != ATTN_OK ? -1 : bench_h5_open_unlocked(path, H5F_ACC_RDWR);
    if (st == ATTN_OK && file < 0)
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "cannot open %s for writing the fits (permissions, or open elsewhere?)",
                       path);
    if (st != ATTN_OK) {
        bench_unlock(lock);
        return st;
    }
    hid_t runs = H5Dopen2(file, bench_h5_runs.dset, H5P_DEFAULT), dset = -1;
    hid_t mtype = bench_h5_compound_type(&bench_h5_fits, false);
    int64_t nruns = runs < 0 ? -1 : bench_h5_table_rows(runs), old = 0, kept = 0;
    bench_fit_row *all = NULL;
    if (nruns < 0 || mtype < 0) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read /runs of %s", path);
        goto done;
    }
    if (run_id < 1 || run_id > nruns) {
        st = attn_fail(ATTN_EINVAL, msg, msg_len, "%s has no run %lld (it has runs 1..%lld)", path,
                       (long long)run_id, (long long)nruns);
        goto done;
    }
    if (H5Lexists(file, bench_h5_fits.dset, H5P_DEFAULT) > 0) {
        dset = H5Dopen2(file, bench_h5_fits.dset, H5P_DEFAULT);
        old = dset < 0 ? -1 : bench_h5_table_rows(dset);
    }
    /* zeroed: the columns an older /fits lacks read as empty */
    all = calloc((size_t)(old > 0 ? old : 0) + (size_t)n + 1, sizeof *all);
    if (!all) {
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for the fits of %s", path);
        goto done;
    }
    const hid_t otype = dset >= 0 ? bench_h5_memory_type_of(&bench_h5_fits, dset) : -1;
    const bool readable =
        old >= 0 && (old == 0 || (otype >= 0 && bench_h5_read_rows(dset, otype, 0, old, all) >= 0));
    if (otype >= 0) H5Tclose(otype);
    if (dset >= 0 && (!readable || !current_layout(dset, &bench_h5_fits))) {
        /* another layout (an older build): a readable one is written again in this one, its
         * missing columns empty; an unreadable one is derived data, recomputable: replaced */
        H5Dclose(dset);
        dset = -1;
        if (!readable) old = 0;
        H5Ldelete(file, bench_h5_fits.dset, H5P_DEFAULT);
    }
    for (int64_t r = 0; r < old; r++)
        if (all[r].run_id != run_id) all[kept++] = all[r];
    for (int64_t r = 0; r < n; r++) {
        all[kept + r] = rows[r];
        all[kept + r].run_id = run_id;
    }
    bench_h5_utf8_rows(&bench_h5_fits, all + kept, n);
    if (dset < 0 && bench_h5_create_table(file, &bench_h5_fits) >= 0)
        dset = H5Dopen2(file, bench_h5_fits.dset, H5P_DEFAULT);
    if (dset < 0 || bench_h5_set_rows(dset, kept + n) < 0 ||
        bench_h5_rows_io(dset, mtype, 0, kept + n, all, true) < 0 ||
        H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write /fits in %s (disk full?)", path);
done:
    free(all);
    if (dset >= 0) H5Dclose(dset);
    if (mtype >= 0) H5Tclose(mtype);
    if (runs >= 0) H5Dclose(runs);
    H5Fclose(file);
    bench_unlock(lock);
    return st;
}
