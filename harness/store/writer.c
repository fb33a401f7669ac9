/*
 * writer.c — the results writer of results.h (bench_store): one file holds the runs, points and
 * timing samples of any number of sweeps in appendable tables (/runs, /points, /samples),
 * flushed after every point so an interrupted sweep keeps what it finished, /run_status (how
 * each run ended) and /hosts. New files, the writers' lock and the room check come from atomic.h;
 * a write that fails half way is rolled back after reopening the file (HDF5 cannot shrink a table
 * whose unwritten chunk is still in its cache).
 */
#include <errno.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "h5table.h"
#include "signals.h"

/* Room checked before each write (atomic.h, bench_room): the chunks a row may add, and this for
 * the metadata (B-tree nodes, object headers, the superblock). */
enum { ROOM_MARGIN = 64 * 1024 };

/* The bytes of the new chunks that adding `add` rows to table t of `rows` rows allocates. */
static int64_t new_chunk_bytes(const table *t, int64_t rows, int64_t add)
{
    const int64_t per = (int64_t)t->chunk_rows, allocated = (rows + per - 1) / per;
    const int64_t needed = (rows + add + per - 1) / per;
    return (needed - allocated) * per * (int64_t)t->row_size;
}

struct bench_store {
    hid_t file;
    hid_t runs, points, samples, status;                  /* datasets */
    hid_t run_type, point_type, sample_type, status_type; /* memory types */
    int64_t run_id;           /* last run begun through this handle, or 0 */
    int64_t status_row;       /* its row in /run_status */
    int64_t run_points;       /* its points stored */
    int64_t planned;          /* its planned points (bench_store_set_planned), 0: not said */
    char started_at[32];      /* its start (bench_run.started_at) */
    bool run_failed;          /* a write failed: the run is marked incomplete */
    bool write_failed;        /* a run could not be begun: a new file is not published */
    bool created;             /* this handle created the file (published with its first run) */
    int lock_fd;              /* the writers' lock (atomic.h), or -1 */
    char tmp[BENCH_PATH_MAX]; /* a new file's temporary name until it is published, or "" */
    char path[BENCH_PATH_MAX];
};

/* Close st's HDF5 objects and file. */
static void close_hdf5(bench_store *st)
{
    hid_t *ids[] = {&st->run_type, &st->point_type, &st->sample_type, &st->status_type};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (*ids[i] >= 0) H5Tclose(*ids[i]), *ids[i] = -1;
    hid_t *dsets[] = {&st->runs, &st->points, &st->samples, &st->status};
    for (size_t i = 0; i < sizeof dsets / sizeof dsets[0]; i++)
        if (*dsets[i] >= 0) H5Dclose(*dsets[i]), *dsets[i] = -1;
    if (st->file >= 0) H5Fclose(st->file), st->file = -1;
}

/* Close the file (discarding an unpublished new one) and release the lock; st stays. */
static void store_close_file(bench_store *st)
{
    close_hdf5(st);
    bench_tmp_discard(st->tmp);
    st->tmp[0] = '\0';
    bench_unlock(st->lock_fd);
    st->lock_fd = -1;
}

static void store_free(bench_store *st)
{
    store_close_file(st);
    free(st);
}

/* Open the tables of st->file and build the row types. */
static attn_status open_tables(bench_store *st, char *msg, size_t msg_len)
{
    st->runs = H5Dopen2(st->file, bench_h5_runs.dset, H5P_DEFAULT);
    st->points = H5Dopen2(st->file, bench_h5_points.dset, H5P_DEFAULT);
    st->samples = H5Dopen2(st->file, bench_h5_samples.dset, H5P_DEFAULT);
    st->status = H5Dopen2(st->file, bench_h5_status.dset, H5P_DEFAULT);
    if (st->runs < 0 || st->points < 0 || st->samples < 0 || st->status < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s is damaged: it lacks one of /runs, /points, /samples, /run_status; "
                         "choose another --out",
                         st->path);
    st->run_type = bench_h5_compound_type(&bench_h5_runs, false);
    st->point_type = bench_h5_compound_type(&bench_h5_points, false);
    st->sample_type = bench_h5_compound_type(&bench_h5_samples, false);
    st->status_type = bench_h5_compound_type(&bench_h5_status, false);
    if (st->run_type < 0 || st->point_type < 0 || st->sample_type < 0 || st->status_type < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot build the HDF5 row types for %s",
                         st->path);
    return ATTN_OK;
}

/* Flush st->file; on failure the reason (atomic.h) into why. */
static herr_t flush_file(const bench_store *st, char *why, size_t why_len)
{
    errno = 0;
    herr_t err = H5Fflush(st->file, H5F_SCOPE_GLOBAL);
    if (err < 0) bench_write_reason(st->path, errno, why, why_len);
    return err;
}

/* Open the existing results file st->path (of our format_version) for appending, under the
 * writers' lock. */
static attn_status open_existing(bench_store *st, char *msg, size_t msg_len)
{
    static const char fix[] = "; choose another --out";
    st->lock_fd = bench_lock(st->path, fix, msg, msg_len);
    if (st->lock_fd < 0) return ATTN_EINVAL;
    attn_status cs = bench_h5_check_results_file(st->path, fix, BENCH_FORMAT_VERSION, msg, msg_len);
    if (cs != ATTN_OK) return cs;
    st->file = bench_h5_open_unlocked(st->path, H5F_ACC_RDWR);
    if (st->file < 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "cannot open %s for writing (permissions, or open elsewhere?)", st->path);
    return open_tables(st, msg, msg_len);
}

/* Create st->path as a new results file: written under a temporary name (atomic.h), with its
 * empty tables flushed, locked; published by the first run (bench_store_begin_run). */
static attn_status create_new(bench_store *st, char *msg, size_t msg_len)
{
    char dir[BENCH_PATH_MAX];
    bench_dir_of(st->path, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) != 0)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "cannot create %s: directory %s: %s", st->path,
                         dir, strerror(errno));
    char why[64] = "HDF5 could not create the file (check the path and permissions)";
    if (bench_room(-1, st->path, ROOM_MARGIN, why, sizeof why) < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot create %s: %s; nothing was written",
                         st->path, why);
    attn_status s = bench_tmp_begin(st->path, st->tmp, sizeof st->tmp, msg, msg_len);
    if (s != ATTN_OK) return s;
    errno = 0;
    hid_t fapl = bench_h5_unlocked_fapl();
    st->file = fapl < 0 ? -1 : H5Fcreate(st->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    if (st->file < 0) {
        if (errno) bench_write_reason(st->path, errno, why, sizeof why);
    } else if (bench_h5_write_format_attrs(st->file) < 0 ||
               bench_h5_create_table(st->file, &bench_h5_runs) < 0 ||
               bench_h5_create_table(st->file, &bench_h5_points) < 0 ||
               bench_h5_create_table(st->file, &bench_h5_samples) < 0 ||
               bench_h5_create_table(st->file, &bench_h5_status) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
    } else if (flush_file(st, why, sizeof why) >= 0) {
        st->lock_fd = bench_lock(st->tmp, "", msg, msg_len);
        return st->lock_fd < 0 ? ATTN_EFAIL : open_tables(st, msg, msg_len);
    }
    return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot create %s: %s; nothing was written",
                     st->path, why);
}

attn_status bench_store_open(const char *path, bench_store **store, char *msg, size_t msg_len)
{
    bench_h5_quiet();
    *store = NULL;
    if (!path || !*path)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "no results file given; pass --out FILE.h5");
    if (strlen(path) >= BENCH_PATH_MAX)
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "results file path is too long (%zu characters)", strlen(path));
    bench_store *st = malloc(sizeof *st);
    if (!st) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory opening %s", path);
    *st = (bench_store){.file = -1,
                        .runs = -1,
                        .points = -1,
                        .samples = -1,
                        .status = -1,
                        .run_type = -1,
                        .point_type = -1,
                        .sample_type = -1,
                        .status_type = -1,
                        .lock_fd = -1};
    snprintf(st->path, sizeof st->path, "%s", path);
    attn_status s =
        access(path, F_OK) == 0 ? open_existing(st, msg, msg_len) : create_new(st, msg, msg_len);
    if (s != ATTN_OK) {
        store_free(st);
        return s;
    }
    *store = st;
    return ATTN_OK;
}

/* After a failed write: close the file, dropping HDF5's caches (whose chunks that could not be
 * written confuse a later resize), and open it again as the disk has it. */
static herr_t reopen_file(bench_store *st)
{
    close_hdf5(st);
    st->file = bench_h5_open_unlocked(st->tmp[0] ? st->tmp : st->path, H5F_ACC_RDWR);
    char msg[ATTN_MSG_LEN];
    return st->file < 0 || open_tables(st, msg, sizeof msg) != ATTN_OK ? -1 : 0;
}

/* The current time, ISO 8601 UTC (as bench_run.started_at). */
static void iso_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Write the status of the run begun through st, with `finished` points stored and the time now,
 * into its /run_status row (in place: no new space is needed once the row exists). */
static herr_t mark_run(bench_store *st, const char *status, const char *message, int64_t finished)
{
    status_row row = {.run_id = st->run_id,
                      .planned_points = st->planned,
                      .finished_points = finished};
    snprintf(row.status, sizeof row.status, "%s", status);
    snprintf(row.message, sizeof row.message, "%s", message);
    snprintf(row.started_at, sizeof row.started_at, "%s", st->started_at);
    iso_now(row.ended_at, sizeof row.ended_at);
    bench_h5_utf8_rows(&bench_h5_status, &row, 1);
    return bench_h5_rows_io(st->status, st->status_type, st->status_row, 1, &row, true);
}

void bench_store_set_planned(bench_store *st, int64_t planned)
{
    if (st) st->planned = planned > 0 ? planned : 0;
}

int64_t bench_store_planned(const bench_store *st) { return st ? st->planned : 0; }

/* Append run (and its "running" /run_status row) and flush; on failure shrink both tables back
 * and say why. */
static attn_status append_run(bench_store *st, bench_run *run, char *msg, size_t msg_len)
{
    int64_t n = bench_h5_table_rows(st->runs), ns = bench_h5_table_rows(st->status);
    if (n < 0 || ns < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the size of /runs in %s", st->path);
    run->run_id = n + 1;
    status_row row = {.run_id = run->run_id, .status = "running", .planned_points = st->planned};
    snprintf(row.started_at, sizeof row.started_at, "%s", run->started_at);
    char why[64] = "write error";
    if (bench_room(st->lock_fd, st->path,
                   new_chunk_bytes(&bench_h5_runs, n, 1) +
                       new_chunk_bytes(&bench_h5_status, ns, 1) + ROOM_MARGIN,
                   why, sizeof why) < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: run %lld not started; nothing written",
                         st->path, why, (long long)run->run_id);
    bench_h5_utf8_rows(&bench_h5_runs, run, 1);
    bench_h5_utf8_rows(&bench_h5_status, &row, 1);
    errno = 0;
    if (bench_h5_append_rows(st->runs, st->run_type, n, run, 1) < 0 ||
        bench_h5_append_rows(st->status, st->status_type, ns, &row, 1) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
    } else if (flush_file(st, why, sizeof why) >= 0) {
        st->run_id = run->run_id;
        st->status_row = ns;
        st->run_points = 0;
        snprintf(st->started_at, sizeof st->started_at, "%s", run->started_at);
        st->run_failed = false;
        return ATTN_OK;
    }
    char again[64];
    const bool rolled_back = reopen_file(st) >= 0 && bench_h5_set_rows(st->runs, n) >= 0 &&
                             bench_h5_set_rows(st->status, ns) >= 0 &&
                             flush_file(st, again, sizeof again) >= 0;
    return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: run %lld not started%s", st->path, why,
                     (long long)run->run_id,
                     rolled_back ? "; nothing written" : " (its rollback failed too)");
}

attn_status bench_store_begin_run(bench_store *st, bench_run *run, char *msg, size_t msg_len)
{
    bench_h5_quiet();
    attn_status s = append_run(st, run, msg, msg_len);
    if (s != ATTN_OK) st->write_failed = true;
    if (s != ATTN_OK || !st->tmp[0]) return s;
    /* a new file: now valid with its first run, it takes its name */
    bool exists;
    s = bench_tmp_publish(st->tmp, st->path, &exists, msg, msg_len);
    if (s == ATTN_OK) {
        st->tmp[0] = '\0';
        st->created = true;
        return ATTN_OK;
    }
    st->run_id = 0;
    if (!exists) return s;
    /* another process created the file meanwhile: append the run there instead */
    store_close_file(st);
    s = open_existing(st, msg, msg_len);
    return s != ATTN_OK ? s : append_run(st, run, msg, msg_len);
}

/* Point point_id cannot be stored (why): if its write failed half way (wrote), shrink /points and
 * /samples back to npoints and nsamples rows; mark the run incomplete, flush, and say what was
 * kept. */
static attn_status stop_run(bench_store *st, int64_t point_id, bool wrote, int64_t npoints,
                            int64_t nsamples, const char *why, char *msg, size_t msg_len)
{
    bool ok = !wrote || (reopen_file(st) >= 0 && bench_h5_set_rows(st->points, npoints) >= 0 &&
                         bench_h5_set_rows(st->samples, nsamples) >= 0);
    char note[160], again[64], what[32] = "/hosts"; /* point_id < 0: a /hosts row */
    if (point_id >= 0) snprintf(what, sizeof what, "point %lld", (long long)point_id);
    snprintf(note, sizeof note, "%s writing %s; %lld point%s kept", why, what,
             (long long)st->run_points, st->run_points == 1 ? "" : "s");
    ok = mark_run(st, "incomplete", note, st->run_points) >= 0 && ok;
    ok = flush_file(st, again, sizeof again) >= 0 && ok;
    st->run_failed = true;
    return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: %s: %lld point%s of run %lld kept, %s",
                     st->path, why, (long long)st->run_points, st->run_points == 1 ? "" : "s",
                     (long long)st->run_id,
                     ok ? "run marked incomplete"
                        : "but the rollback could not be written either (the file may hold "
                          "blank rows)");
}

attn_status bench_store_add_point(bench_store *st, bench_point *pt, const double *samples_s,
                                  int64_t nsamples, char *msg, size_t msg_len)
{
    bench_h5_quiet();
    if (nsamples < 0 || nsamples > INT32_MAX || (nsamples > 0 && !samples_s))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "invalid sample count %lld for a point",
                         (long long)nsamples);
    if (st->run_failed)
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "%s: run %lld is marked incomplete after a failed write; no more points",
                         st->path, (long long)st->run_id);
    int64_t nruns = bench_h5_table_rows(st->runs);
    int64_t npoints = bench_h5_table_rows(st->points);
    int64_t nrows = bench_h5_table_rows(st->samples);
    if (nruns < 0 || npoints < 0 || nrows < 0)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read the table sizes of %s", st->path);
    if (pt->run_id == 0) pt->run_id = st->run_id; /* the run begun through this handle */
    if (pt->run_id < 1 || pt->run_id > nruns)
        return attn_fail(
            ATTN_EINVAL, msg, msg_len,
            "point has run_id %lld but %s has runs 1..%lld; call bench_store_begin_run "
            "first",
            (long long)pt->run_id, st->path, (long long)nruns);
    pt->point_id = npoints;

    sample_row *rows = malloc((size_t)(nsamples > 0 ? nsamples : 1) * sizeof *rows);
    if (!rows)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for %lld samples",
                         (long long)nsamples);
    for (int64_t r = 0; r < nsamples; r++)
        rows[r] = (sample_row){.run_id = pt->run_id,
                               .point_id = pt->point_id,
                               .rep = (int32_t)r,
                               .seconds = samples_s[r]};
    /* Samples first, then the point row; any failure (the flush included) rolls both back, so
     * no blank point row and no orphan samples remain. */
    char why[64] = "write error";
    const int64_t need = new_chunk_bytes(&bench_h5_points, npoints, 1) +
                         new_chunk_bytes(&bench_h5_samples, nrows, nsamples) + ROOM_MARGIN;
    if (bench_room(st->lock_fd, st->path, need, why, sizeof why) < 0) {
        free(rows);
        return stop_run(st, pt->point_id, false, npoints, nrows, why, msg, msg_len);
    }
    bench_h5_utf8_rows(&bench_h5_points, pt, 1);
    errno = 0;
    herr_t err = bench_h5_append_rows(st->samples, st->sample_type, nrows, rows, nsamples);
    if (err >= 0) err = bench_h5_append_rows(st->points, st->point_type, npoints, pt, 1);
    if (err >= 0 && pt->run_id == st->run_id) err = mark_run(st, "running", "", st->run_points + 1);
    if (err < 0) bench_write_reason(st->path, errno, why, sizeof why);
    else err = flush_file(st, why, sizeof why);
    free(rows);
    if (err < 0) return stop_run(st, pt->point_id, true, npoints, nrows, why, msg, msg_len);
    if (pt->run_id == st->run_id) st->run_points++;
    return ATTN_OK;
}

attn_status bench_store_add_host(bench_store *st, bench_host *h, char *msg, size_t msg_len)
{
    bench_h5_quiet();
    if (st->run_id < 1 || st->run_failed)
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: no run to add a host to", st->path);
    h->run_id = st->run_id;
    char why[64] = "write error";
    errno = 0;
    if (H5Lexists(st->file, bench_h5_hosts.dset, H5P_DEFAULT) <= 0 &&
        bench_h5_create_table(st->file, &bench_h5_hosts) < 0) {
        bench_write_reason(st->path, errno, why, sizeof why);
        return stop_run(st, -1, false, 0, 0, why, msg, msg_len);
    }
    hid_t dset = H5Dopen2(st->file, bench_h5_hosts.dset, H5P_DEFAULT);
    hid_t mtype = bench_h5_compound_type(&bench_h5_hosts, false);
    const int64_t n = dset < 0 ? -1 : bench_h5_table_rows(dset);
    herr_t err = n < 0 || mtype < 0 ? -1 : 0;
    if (err >= 0 &&
        bench_room(st->lock_fd, st->path, new_chunk_bytes(&bench_h5_hosts, n, 1) + ROOM_MARGIN, why,
                   sizeof why) < 0)
        err = -2; /* no room: nothing written */
    bench_h5_utf8_rows(&bench_h5_hosts, h, 1);
    if (err == 0 && (err = bench_h5_append_rows(dset, mtype, n, h, 1)) < 0)
        bench_write_reason(st->path, errno, why, sizeof why);
    if (err == 0) err = flush_file(st, why, sizeof why);
    if (mtype >= 0) H5Tclose(mtype);
    if (dset >= 0) H5Dclose(dset);
    if (err == 0) return ATTN_OK;
    /* shrink /hosts back (reopened: HDF5 keeps the unwritten chunk in its cache) */
    if (err == -1 && n >= 0 && reopen_file(st) >= 0) {
        hid_t again = H5Dopen2(st->file, bench_h5_hosts.dset, H5P_DEFAULT);
        if (again >= 0) bench_h5_set_rows(again, n), H5Dclose(again);
    }
    return stop_run(st, -1, false, 0, 0, why, msg, msg_len);
}

void bench_store_close(bench_store *st)
{
    if (!st) return;
    bench_h5_quiet();
    if (st->run_id > 0 && !st->run_failed && st->file >= 0)
        mark_run(st, "complete", "", st->run_points);
    if (st->file >= 0 && H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0) st->write_failed = true;
    /* a new file closed before any run (a caller that only creates it): valid, and empty */
    char msg[ATTN_MSG_LEN];
    bool exists;
    if (st->tmp[0] && !st->write_failed &&
        bench_tmp_publish(st->tmp, st->path, &exists, msg, sizeof msg) == ATTN_OK)
        st->tmp[0] = '\0';
    store_free(st);
}

int64_t bench_store_interrupt(bench_store *st, int sig, int64_t *kept)
{
    if (kept) *kept = 0;
    if (!st) return 0;
    bench_h5_quiet();
    const int64_t run = st->run_id;
    if (kept) *kept = st->run_points;
    if (st->created && st->run_points == 0) { /* a file of ours holding nothing measured */
        close_hdf5(st);
        unlink(st->path); /* under the writers' lock: no other writer has opened it */
        store_free(st);
        return 0;
    }
    if (run > 0 && !st->run_failed && st->file >= 0) {
        char note[160];
        if (st->planned > 0)
            snprintf(note, sizeof note, "SIG%s after %lld of %lld points", bench_signal_name(sig),
                     (long long)st->run_points, (long long)st->planned);
        else
            snprintf(note, sizeof note, "SIG%s after %lld points", bench_signal_name(sig),
                     (long long)st->run_points);
        mark_run(st, "interrupted", note, st->run_points);
        H5Fflush(st->file, H5F_SCOPE_GLOBAL);
    }
    store_free(st); /* a new file without a run is discarded, not published */
    return run;
}
