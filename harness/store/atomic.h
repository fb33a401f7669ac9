/*
 * atomic.h — files created atomically (store/'s results and tensors; the whole files of report/
 * and cli/: exports, pages, figures), the writers' lock, and honest reasons for failed writes.
 *
 * A new file is written under a temporary name beside its destination (".NAME.tmp-PID", same
 * directory, so the rename cannot cross filesystems) and renamed into place only once it is a
 * valid file: an interrupted creation leaves no file at the destination. While a temporary name
 * exists, a SIGINT, SIGTERM or SIGHUP that ends the process removes it first (the one signal
 * handler of measure/signals.h; a command that stops gracefully on the first signal discards it
 * itself when it closes). SIGKILL can leave a ".NAME.tmp-PID" behind: it is never read; delete
 * it.
 *
 * The writers' lock is an open-file-description lock (fcntl F_OFD_SETLK, Linux) on the file
 * itself: one writer at a time, whether HDF5's own file locking is on or off
 * (HDF5_USE_FILE_LOCKING=FALSE), and independent of HDF5's flock() in the same process.
 */
#ifndef BENCH_ATOMIC_H
#define BENCH_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn_core.h"

enum { BENCH_PATH_MAX = 4096 };

/* The temporary name of path into tmp (".NAME.tmp-PID" beside it), registered for removal on a
 * fatal signal until bench_tmp_publish or bench_tmp_discard. Creates nothing. */
attn_status bench_tmp_begin(const char *path, char *tmp, size_t tmp_len, char *msg, size_t msg_len);
/* fsync tmp, rename it to path unless path exists, fsync the directory; unregisters tmp.
 * ATTN_OK; ATTN_EINVAL with *exists set when path appeared meanwhile (tmp is left in place and
 * still registered: discard it); ATTN_EFAIL with msg otherwise. */
attn_status bench_tmp_publish(const char *tmp, const char *path, bool *exists, char *msg,
                              size_t msg_len);
/* Remove tmp (if present) and unregister it. */
void bench_tmp_discard(const char *tmp);

/* A whole file written at once (an export, a page, a figure): created as bench_tmp_begin's
 * temporary name (mode 0644 less the umask) and opened for writing; NULL with msg ("cannot write
 * PATH: ...") when it cannot be. Finish with bench_tmp_fclose. */
FILE *bench_tmp_fopen(const char *path, char *tmp, size_t tmp_len, char *msg, size_t msg_len);
/* Close f (from bench_tmp_fopen for path); when st is ATTN_OK and every write reached the file,
 * fsync it and rename it over path (replacing a file there, never a results file: looked at again
 * just before), then fsync the directory; otherwise remove it. Returns st, or ATTN_EFAIL with
 * msg "cannot write PATH: disk full" (and the like) when the writes or the rename failed, or
 * ATTN_EINVAL when path became a results file meanwhile. No temporary file is left either way. */
attn_status bench_tmp_fclose(FILE *f, const char *tmp, const char *path, attn_status st, char *msg,
                             size_t msg_len);

/* Take the writers' lock of the existing file path: a file descriptor to keep open while
 * writing (bench_unlock closes it), or -1 with msg when another writer holds it ("... is being
 * written by another bench process ...") or path cannot be opened (ending in fix). */
int bench_lock(const char *path, const char *fix, char *msg, size_t msg_len);
void bench_unlock(int fd);
/* Does another process hold the writers' lock of path? (Changes nothing.) */
bool bench_locked_by_other(const char *path);

/* Why a write into path just failed, for messages: "disk full", "file size limit reached",
 * "disk quota exceeded", or strerror(errno_seen); errno_seen 0: looked up from the free space
 * of path's directory ("write error" if nothing explains it). */
void bench_write_reason(const char *path, int errno_seen, char *buf, size_t len);

/* Is there room to write `bytes` more into path (open as fd, or -1 for a file not yet created)?
 * 0, or -1 with the reason in why: less free space on its filesystem, or the file would pass this
 * process's file size limit (ulimit -f). Checked before writing, so that HDF5 (which cannot undo
 * a write that failed half way) rarely meets a full disk. BENCH_TEST_NO_ROOM_CHECK set in the
 * environment (tests only) skips the check, so that the rollback of a failed write is tested. */
int bench_room(int fd, const char *path, int64_t bytes, char *why, size_t len);

/* The directory part of path ("." if none). */
void bench_dir_of(const char *path, char *dir, size_t len);

#endif
