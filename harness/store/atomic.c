/*
 * atomic.c — new files under a temporary name renamed into place once valid, removed on a fatal
 * signal (by the one handler of measure/signals.c); the writers' lock (an OFD lock on the file);
 * the reason a write failed (atomic.h).
 */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE, F_OFD_SETLK */
#include "atomic.h"

#include "results.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* ---- temporary names, removed by a fatal signal (measure/signals.c) ---- */

void bench_dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else if (slash == path) snprintf(dir, len, "/");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

attn_status bench_tmp_begin(const char *path, char *tmp, size_t tmp_len, char *msg, size_t msg_len)
{
    const char *slash = strrchr(path, '/');
    const int dir_len = slash ? (int)(slash - path + 1) : 0;
    int n =
        snprintf(tmp, tmp_len, "%.*s.%s.tmp-%ld", dir_len, path, path + dir_len, (long)getpid());
    if (n < 0 || (size_t)n >= tmp_len || (size_t)n >= BENCH_PATH_MAX)
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s: the path is too long", path);
    if (!bench_signals_remove_on_exit(tmp))
        return attn_fail(ATTN_EFAIL, msg, msg_len, "%s: too many files being created at once",
                         path);
    /* A file size limit (ulimit -f) kills with SIGXFSZ by default: make it a write error that
     * is reported (and rolled back) instead. */
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGXFSZ, SIG_IGN);
    unlink(tmp); /* a leftover of an earlier process that had our pid and was killed */
    return ATTN_OK;
}

void bench_tmp_discard(const char *tmp)
{
    if (!tmp || !*tmp) return;
    unlink(tmp);
    bench_signals_forget(tmp);
}

/* Rename tmp to path unless path exists: 0, or -1 with errno (EEXIST when it does). */
static int rename_noreplace(const char *tmp, const char *path)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
    if (link(tmp, path) == 0) return unlink(tmp), 0;
    if (errno == EEXIST) return -1;
    /* no hard links on this filesystem: a plain rename, after a (racy) look */
    if (access(path, F_OK) == 0) return errno = EEXIST, -1;
    return rename(tmp, path);
}

static void fsync_path(const char *path, int flags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) return;
    fsync(fd); /* where it matters (a directory on some filesystems refuses: harmless) */
    close(fd);
}

attn_status bench_tmp_publish(const char *tmp, const char *path, bool *exists, char *msg,
                              size_t msg_len)
{
    *exists = false;
    fsync_path(tmp, 0);
    if (rename_noreplace(tmp, path) != 0) {
        if (errno == EEXIST) {
            *exists = true;
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s was created meanwhile by another "
                             "process",
                             path);
        }
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot rename %s to %s: %s", tmp, path,
                         strerror(errno));
    }
    bench_signals_forget(tmp);
    char dir[BENCH_PATH_MAX];
    bench_dir_of(path, dir, sizeof dir);
    fsync_path(dir, O_DIRECTORY);
    return ATTN_OK;
}

/* ---- whole files replaced at once ---- */

FILE *bench_tmp_fopen(const char *path, char *tmp, size_t tmp_len, char *msg, size_t msg_len)
{
    if (bench_tmp_begin(path, tmp, tmp_len, msg, msg_len)) return NULL;
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        const int e = errno;
        if (fd >= 0) close(fd);
        bench_tmp_discard(tmp);
        attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s", path, strerror(e));
    }
    return f;
}

attn_status bench_tmp_fclose(FILE *f, const char *tmp, const char *path, attn_status st, char *msg,
                             size_t msg_len)
{
    errno = 0;
    bool written = fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
    int e = errno;
    if (fclose(f) != 0 && written) written = false, e = errno;
    if (st == ATTN_OK && !written) {
        char why[64];
        bench_write_reason(path, e, why, sizeof why);
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s", path, why);
    }
    if (st == ATTN_OK && bench_store_is_results(path))
        st = attn_fail(ATTN_EINVAL, msg, msg_len,
                       "%s became a results file meanwhile: it is left as it is; write elsewhere",
                       path);
    if (st == ATTN_OK && rename(tmp, path) != 0)
        st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s", path, strerror(errno));
    if (st != ATTN_OK) {
        bench_tmp_discard(tmp);
        return st;
    }
    bench_signals_forget(tmp);
    char dir[BENCH_PATH_MAX];
    bench_dir_of(path, dir, sizeof dir);
    fsync_path(dir, O_DIRECTORY);
    return ATTN_OK;
}

/* ---- the writers' lock ---- */

int bench_lock(const char *path, const char *fix, char *msg, size_t msg_len)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        attn_fail(ATTN_EINVAL, msg, msg_len, "cannot open %s for writing: %s%s", path,
                  strerror(errno), fix);
        return -1;
    }
    struct sigaction old;
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGXFSZ, SIG_IGN);
#ifdef F_OFD_SETLK
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_OFD_SETLK, &lk) != 0) {
        const int e = errno;
        /* no lock support here (an old kernel, a filesystem without locks): write as before */
        if (e == EINVAL || e == ENOLCK || e == ENOSYS) return fd;
        close(fd);
        if (e == EAGAIN || e == EACCES)
            attn_fail(ATTN_EINVAL, msg, msg_len,
                      "%s is being written by another bench process (a sweep, run --out or fit): "
                      "wait for it to end, or write elsewhere",
                      path);
        else attn_fail(ATTN_EFAIL, msg, msg_len, "cannot lock %s: %s", path, strerror(e));
        return -1;
    }
#endif
    return fd;
}

bool bench_locked_by_other(const char *path)
{
#ifdef F_OFD_GETLK
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
    if (fd < 0) return false;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return close(fd), false;
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    const bool locked = fcntl(fd, F_OFD_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
    close(fd);
    return locked;
#else
    (void)path;
    return false;
#endif
}

void bench_unlock(int fd)
{
    if (fd >= 0) close(fd);
}

/* ---- why a write failed ---- */

void bench_write_reason(const char *path, int errno_seen, char *buf, size_t len)
{
    if (errno_seen == ENOSPC) snprintf(buf, len, "disk full");
    else if (errno_seen == EFBIG) snprintf(buf, len, "file size limit reached");
#ifdef EDQUOT
    else if (errno_seen == EDQUOT) snprintf(buf, len, "disk quota exceeded");
#endif
    else if (errno_seen != 0) snprintf(buf, len, "%s", strerror(errno_seen));
    else {
        char dir[BENCH_PATH_MAX];
        bench_dir_of(path, dir, sizeof dir);
        struct statvfs fs;
        const bool full = statvfs(dir, &fs) == 0 && fs.f_bavail == 0;
        snprintf(buf, len, "%s", full ? "disk full" : "write error");
    }
}

int bench_room(int fd, const char *path, int64_t bytes, char *why, size_t len)
{
    const char *test = getenv("BENCH_TEST_NO_ROOM_CHECK"); /* tests: HDF5 meets the full disk */
    if (test && *test) return 0;
    struct stat sb;
    const int64_t size = fd >= 0 && fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : 0;
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)size + (uint64_t)bytes > (uint64_t)rl.rlim_cur) {
        snprintf(why, len, "file size limit reached (ulimit -f %llu KiB)",
                 (unsigned long long)rl.rlim_cur / 1024);
        return -1;
    }
    struct statvfs fs;
    char dir[BENCH_PATH_MAX];
    bench_dir_of(path, dir, sizeof dir);
    const int got = fd >= 0 ? fstatvfs(fd, &fs) : statvfs(dir, &fs);
    if (got == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < (uint64_t)bytes) {
        snprintf(why, len, "disk full (%llu KiB free, %llu KiB needed)",
                 (unsigned long long)((uint64_t)fs.f_bavail * fs.f_frsize / 1024),
                 (unsigned long long)((bytes + 1023) / 1024));
        return -1;
    }
    return 0;
}
