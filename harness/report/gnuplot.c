/* gnuplot.c — gnuplot as a child process: found on PATH, spawned without a shell, script through
 * a pipe, data and the image in a private mkdtemp directory, image checked before it is moved. */
#include "gnuplot.h"

#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The first executable regular file named gnuplot in the PATH directories. */
static bool find_on_path(char *exe, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *dir = path; dir; dir = strchr(dir, ':') ? strchr(dir, ':') + 1 : NULL) {
        const char *end = strchr(dir, ':');
        int dlen = (int)(end ? end - dir : (ptrdiff_t)strlen(dir));
        snprintf(exe, len, "%.*s/gnuplot", dlen, dlen ? dir : ".");
        struct stat st;
        if (stat(exe, &st) == 0 && S_ISREG(st.st_mode) && access(exe, X_OK) == 0) return true;
    }
    exe[0] = '\0';
    return false;
}

attn_status bench_gnuplot_open(bench_gnuplot *g, char *msg, size_t msg_len)
{
    memset(g, 0, sizeof *g);
    if (!find_on_path(g->exe, sizeof g->exe))
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "gnuplot is not installed (not found on PATH): install it with "
                         "sudo apt-get install gnuplot-nox, then run bench plot again");
    const char *tmp = getenv("TMPDIR");
    snprintf(g->dir, sizeof g->dir, "%s/attnbench-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g->dir)) {
        int e = errno;
        g->dir[0] = '\0';
        return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot make a temporary directory in %s: %s",
                         tmp && *tmp ? tmp : "/tmp", strerror(e));
    }
    return ATTN_OK;
}

void bench_gnuplot_close(bench_gnuplot *g)
{
    if (!g->dir[0]) return;
    DIR *d = opendir(g->dir);
    if (d) {
        char path[4352];
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", g->dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(g->dir);
    g->dir[0] = '\0';
}

void bench_gnuplot_quote(const char *text, bool enhanced, char *buf, size_t len)
{
    size_t w = 0;
    if (len < 3) {
        if (len) buf[0] = '\0';
        return;
    }
    buf[w++] = '\'';
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        char piece[3] = {(char)*s, 0, 0};
        if (*s < 0x20 || *s == 0x7f) piece[0] = '?';
        else if (*s == '\'') piece[1] = '\''; /* '' is a quote inside '...' */
        else if (enhanced && strchr("^_@&~{}\\", *s)) piece[0] = '\\', piece[1] = (char)*s;
        size_t n = strlen(piece);
        if (w + n + 2 > len) break; /* room for the closing quote and NUL */
        memcpy(buf + w, piece, n);
        w += n;
    }
    buf[w++] = '\'';
    buf[w] = '\0';
}

FILE *bench_gnuplot_data(bench_gnuplot *g, char *quoted_path, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/data%d.dat", g->dir, g->files++);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (fd >= 0 && !f) close(fd);
    if (f) bench_gnuplot_quote(path, false, quoted_path, len);
    return f;
}

static const struct {
    const char *name, *terminal, *magic;
} formats[] = {
    {"png", "pngcairo", "\x89PNG\r\n\x1a\n"},
    {"svg", "svg", "<?xml"},
    {"pdf", "pdfcairo", "%PDF-"},
};

const char *bench_gnuplot_format_at(int i)
{
    return i >= 0 && i < (int)(sizeof formats / sizeof formats[0]) ? formats[i].name : NULL;
}

bool bench_gnuplot_format_ok(const char *name)
{
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
        if (strcmp(formats[f].name, name) == 0) return true;
    return false;
}

/* Does the file start with magic and hold more than it? */
static bool looks_like(const char *path, const char *magic)
{
    char head[16] = {0};
    const size_t n = strlen(magic);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    const size_t got = fread(head, 1, n + 1, f);
    fclose(f);
    return got == n + 1 && memcmp(head, magic, n) == 0;
}

/* The first line of gnuplot's stderr that says what went wrong. */
static void first_error(const char *err_path, char *buf, size_t len)
{
    snprintf(buf, len, "no message");
    FILE *f = fopen(err_path, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *s = line + strspn(line, " ");
        if (*s && (strstr(s, "error") || strstr(s, "line ") || strstr(s, "undefined") ||
                   strstr(s, "cannot") || strstr(s, "unknown"))) {
            snprintf(buf, len, "%s", s);
            break;
        }
        if (*s && strcmp(buf, "no message") == 0 && !strchr("^", *s)) snprintf(buf, len, "%s", s);
    }
    fclose(f);
}

/* Copy src into dest through a temporary file beside dest, renamed over it at the end
 * (atomic.h). */
static attn_status install(const char *src, const char *dest, char *msg, size_t msg_len)
{
    char tmp[BENCH_PATH_MAX];
    FILE *out = bench_tmp_fopen(dest, tmp, sizeof tmp, msg, msg_len);
    if (!out) return ATTN_EFAIL;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    attn_status st = in >= 0 ? ATTN_OK
                             : attn_fail(ATTN_EFAIL, msg, msg_len, "cannot read gnuplot's %s: %s",
                                         src, strerror(errno));
    char block[65536];
    for (ssize_t n; !st && (n = read(in, block, sizeof block)) != 0;)
        if (n < 0 || fwrite(block, 1, (size_t)n, out) != (size_t)n)
            st = attn_fail(ATTN_EFAIL, msg, msg_len, "cannot write %s: %s", dest, strerror(errno));
    if (in >= 0) close(in);
    return bench_tmp_fclose(out, tmp, dest, st, msg, msg_len);
}

/* Run gnuplot with text on its stdin and stderr into err_path; its exit status, or -1 with
 * errno saying why. */
static int run_gnuplot(const bench_gnuplot *g, const char *text, const char *err_path)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {"gnuplot", NULL};
    pid_t pid;
    const int spawned = posix_spawn(&pid, g->exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (spawned != 0) {
        close(fds[1]);
        errno = spawned; /* posix_spawn returns its error, it does not set errno */
        return -1;
    }
    /* a gnuplot that exits early must not kill us with SIGPIPE: ignore it while writing */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    for (size_t done = 0, len = strlen(text); done < len;) {
        const ssize_t n = write(fds[1], text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    close(fds[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

attn_status bench_gnuplot_render(bench_gnuplot *g, const char *script, const char *format,
                                 int width, int height, const char *dest, char *msg, size_t msg_len)
{
    size_t f = 0;
    while (f < sizeof formats / sizeof formats[0] && strcmp(formats[f].name, format) != 0) f++;
    if (f == sizeof formats / sizeof formats[0])
        return attn_fail(ATTN_EINVAL, msg, msg_len, "unknown image format '%s' (png, svg or pdf)",
                         format);
    char image[4200], err_path[4200], quoted[8500];
    snprintf(image, sizeof image, "%s/image.%s", g->dir, format);
    snprintf(err_path, sizeof err_path, "%s/gnuplot.err", g->dir);
    unlink(image);
    bench_gnuplot_quote(image, false, quoted, sizeof quoted);
    const size_t len = strlen(script) + strlen(quoted) + 256;
    char *text = malloc(len);
    if (!text) return attn_fail(ATTN_EFAIL, msg, msg_len, "out of memory for a gnuplot script");
    if (f == 2) /* pdfcairo takes inches */
        snprintf(
            text, len,
            "set terminal pdfcairo size %g,%g enhanced font 'sans,7'\nset output %s\n%s\nunset output\n",
            width / 100.0, height / 100.0, quoted, script);
    else
        snprintf(
            text, len,
            "set terminal %s size %d,%d enhanced font 'sans,10'%s\nset output %s\n%s\nunset output\n",
            formats[f].terminal, width, height, f == 0 ? " background '#ffffff'" : "", quoted,
            script);
    const int status = run_gnuplot(g, text, err_path), run_errno = errno;
    free(text);
    if (status != 0) {
        char why[512];
        first_error(err_path, why, sizeof why);
        unlink(image);
        if (status < 0)
            return attn_fail(ATTN_EFAIL, msg, msg_len, "cannot run %s: %s", g->exe,
                             strerror(run_errno));
        return attn_fail(ATTN_EFAIL, msg, msg_len, "gnuplot failed drawing %s (exit %d): %s", dest,
                         status, why);
    }
    if (!looks_like(image, formats[f].magic)) {
        unlink(image);
        return attn_fail(ATTN_EFAIL, msg, msg_len,
                         "gnuplot exited normally but drew no valid %s image for %s (does it have "
                         "the %s terminal?)",
                         format, dest, formats[f].terminal);
    }
    attn_status st = install(image, dest, msg, msg_len);
    unlink(image);
    return st;
}
