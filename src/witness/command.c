/* A witness generator run as a command (cuzk_witness_run_command): posix_spawn, so no shell
 * reads the command line and a large parent's memory is never copied; its own process group,
 * so a timeout kills what it started too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuzk/witness.h"
#include "util/clock.h"
#include "witness/internal.h"

extern char **environ;

#define TAIL_MAX 400 /* bytes of the command's output quoted in an error */
#define MAX_ARGS 64

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    while (len) {
        ssize_t k = write(fd, data, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            close(fd);
            return -1;
        }
        data += k;
        len -= (size_t)k;
    }
    return close(fd);
}

/* The last TAIL_MAX bytes read, as one line (control characters as spaces). */
typedef struct {
    char buf[TAIL_MAX];
    size_t len;
} tail;

static void tail_add(tail *t, const char *s, size_t n)
{
    if (n >= TAIL_MAX) {
        s += n - TAIL_MAX;
        n = TAIL_MAX;
    }
    if (t->len + n > TAIL_MAX) {
        size_t drop = t->len + n - TAIL_MAX;
        memmove(t->buf, t->buf + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
}

static const char *tail_text(tail *t, char *out, size_t cap)
{
    size_t n = t->len;
    while (n && (t->buf[n - 1] == '\n' || t->buf[n - 1] == ' ' || t->buf[n - 1] == '\r'))
        n--;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++)
        out[k++] = (unsigned char)t->buf[i] < 0x20 ? ' ' : t->buf[i];
    out[k] = 0;
    return out;
}

/* Reads what is available on fd into t; returns 0 at end of file or error, else 1. */
static int drain(int fd, tail *t)
{
    char b[4096];
    for (;;) {
        ssize_t k = read(fd, b, sizeof b);
        if (k > 0) {
            tail_add(t, b, (size_t)k);
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        return k < 0 && errno == EAGAIN;
    }
}

static cuzk_err read_output(const char *path, uint64_t max, uint8_t **out, size_t *out_len,
                            const char *what, cuzk_errbuf *eb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return cuzk_errf(eb, CUZK_IO, "%s exited with status 0 but wrote no out.wtns (%s)", what,
                         strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cuzk_errf(eb, CUZK_IO, "%s: out.wtns is not a regular file", what);
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "%s wrote %lld bytes of out.wtns, more than "
                         "the %llu the circuit's witness takes",
                         what, (long long)st.st_size, (unsigned long long)max);
    }
    size_t len = (size_t)st.st_size, got = 0;
    uint8_t *b = malloc(len ? len : 1);
    if (!b) {
        close(fd);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for %s's out.wtns", what);
    }
    while (got < len) {
        ssize_t k = read(fd, b + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (got != len) {
        free(b);
        return cuzk_errf(eb, CUZK_IO, "%s: out.wtns could not be read", what);
    }
    *out = b;
    *out_len = len;
    return CUZK_OK;
}

cuzk_err cuzk_witness_run_command(const cuzk_witness_command *cmd, const char *inputs, size_t len,
                                  const char *inputs_name, uint8_t **wtns, size_t *wtns_len,
                                  cuzk_errbuf *eb)
{
    *wtns = NULL;
    *wtns_len = 0;
    size_t na = 0;
    while (cmd->argv[na])
        na++;
    if (!na || na + 3 > MAX_ARGS)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "a witness command has 1 to %d words",
                         MAX_ARGS - 3);
    char what[300];
    snprintf(what, sizeof what, "witness command '%.200s' with %s", cmd->argv[0], inputs_name);
    const char *base =
        cmd->scratch_dir && cmd->scratch_dir[0] ? cmd->scratch_dir : getenv("TMPDIR");
    if (!base || !base[0])
        base = "/tmp";
    char dir[PATH_MAX], in_path[PATH_MAX + 16], out_path[PATH_MAX + 16];
    if (snprintf(dir, sizeof dir, "%s/cuzk-witness-XXXXXX", base) >= (int)sizeof dir)
        return cuzk_errf(eb, CUZK_IO, "scratch directory name too long: %s", base);
    if (!mkdtemp(dir))
        return cuzk_errf(eb, CUZK_IO, "cannot make a scratch directory in %s: %s", base,
                         strerror(errno));
    snprintf(in_path, sizeof in_path, "%s/input.json", dir);
    snprintf(out_path, sizeof out_path, "%s/out.wtns", dir);
    cuzk_err e = CUZK_OK;
    int pfd[2] = {-1, -1};
    if (write_file(in_path, inputs, len) != 0) {
        e = cuzk_errf(eb, CUZK_IO, "%s: cannot write %s: %s", what, in_path, strerror(errno));
        goto out;
    }
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        e = cuzk_errf(eb, CUZK_IO, "pipe: %s", strerror(errno));
        goto out;
    }
    const char *argv[MAX_ARGS];
    for (size_t i = 0; i < na; i++)
        argv[i] = cmd->argv[i];
    argv[na] = "input.json";
    argv[na + 1] = "out.wtns";
    argv[na + 2] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawn_file_actions_addchdir_np(&fa, dir);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_setpgroup(&at, 0);
    cuzk__spawnattr_signals(&at, POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(pfd[1]);
    pfd[1] = -1;
    if (rc != 0) {
        e = cuzk_errf(eb, CUZK_NOT_FOUND, "%s: cannot run it: %s", what, strerror(rc));
        goto out;
    }
    fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
    tail t = {{0}, 0};
    int open_out = 1, st = 0, timed_out = 0;
    double deadline = cmd->timeout_ms ? cuzk__now_ms() + (double)cmd->timeout_ms : 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        double left = deadline ? deadline - cuzk__now_ms() : 100;
        if (deadline && left <= 0) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            timed_out = 1;
            break;
        }
        int ms = left > 100 ? 100 : left < 1 ? 1 : (int)left;
        if (open_out) {
            struct pollfd p = {pfd[0], POLLIN, 0};
            if (poll(&p, 1, ms) > 0)
                open_out = drain(pfd[0], &t);
        } else {
            usleep((useconds_t)ms * 1000);
        }
    }
    if (open_out)
        drain(pfd[0], &t); /* what is left; a grandchild holding the pipe is not waited for */
    char tx[TAIL_MAX + 1];
    tail_text(&t, tx, sizeof tx);
    if (timed_out)
        e = cuzk_errf(eb, CUZK_TIMEOUT,
                      "%s ran longer than %.3gs (witness_timeout) and was "
                      "killed%s%s",
                      what, (double)cmd->timeout_ms / 1000, tx[0] ? "; output: " : "", tx);
    else if (WIFSIGNALED(st))
        e = cuzk_errf(eb, CUZK_INTERNAL, "%s died of signal %d (%s)%s%s", what, WTERMSIG(st),
                      strsignal(WTERMSIG(st)), tx[0] ? "; output: " : "", tx);
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED, "%s exited with status %d%s%s", what,
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1, tx[0] ? ": " : "", tx);
    else
        e = read_output(out_path, cmd->max_bytes, wtns, wtns_len, what, eb);
out:
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    rm_tree(dir);
    return e;
}
