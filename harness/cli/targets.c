/* targets.c — output paths refused before any work: an input, a results file, not a file
 * (targets.h). */
#define _DEFAULT_SOURCE /* realpath */
#include "targets.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic.h"
#include "commands.h"
#include "results.h"

/* path with its directory resolved (symbolic links, "..", ".") into buf: realpath of path when
 * it exists, else realpath of its directory and its last component. false when neither resolves. */
static bool resolved(const char *path, char *buf)
{
    if (realpath(path, buf)) return true;
    char dir[BENCH_PATH_MAX], real_dir[PATH_MAX];
    bench_dir_of(path, dir, sizeof dir);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!*base || !realpath(dir, real_dir)) return false;
    const int n = snprintf(buf, PATH_MAX, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", base);
    return n > 0 && n < PATH_MAX;
}

bool bench_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    const bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a != has_b) return false;
    if (strcmp(a, b) == 0) return true;
    char ra[PATH_MAX], rb[PATH_MAX];
    return resolved(a, ra) && resolved(b, rb) && strcmp(ra, rb) == 0;
}

/* "a directory", "a FIFO", ...: an existing file that is not a regular one. */
static const char *not_regular(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

attn_status bench_check_target(const char *path, const char *what, bench_target_kind kind,
                               const bench_input *inputs, int ninputs, char *msg, size_t msg_len)
{
    for (int i = 0; i < ninputs; i++) {
        if (!inputs[i].path || !bench_same_file(path, inputs[i].path)) continue;
        if (!*inputs[i].what)
            return attn_fail(ATTN_EINVAL, msg, msg_len,
                             "%s %s is the results file read: it would be replaced; write to "
                             "another file",
                             what, path);
        return attn_fail(ATTN_EINVAL, msg, msg_len,
                         "%s %s and %s %s are the same file: give each its own", what, path,
                         inputs[i].what, inputs[i].path);
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s is %s: give a file name", what, path,
                         not_regular(sb.st_mode));
    if (kind != BENCH_TARGET_RESULTS && bench_store_is_results(path))
        return attn_fail(ATTN_EINVAL, msg, msg_len, "%s %s is a results file, not written over: %s",
                         what, path,
                         kind == BENCH_TARGET_TENSORS
                             ? "did you mean --out? (--output takes a new or a tensors HDF5 file)"
                             : "choose a new file name");
    return bench_check_writable(path, what, msg, msg_len);
}
