/* One witness computation, the caller's side: the job is written to a memory file, a
 * cuzk-witness-runner process started with posix_spawn reads it and runs the program
 * (runner.c), and its reply comes back over a pipe (runner.h says what they say). Not fork():
 * a caller holding a large proving key would have its page tables copied at each computation,
 * and the child of a multithreaded process may not call malloc or the program's code. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/binfile.h"
#include "util/bigalloc.h"
#include "witness/inputs.h"
#include "witness/internal.h"
#include "witness/runner.h"
#include "witness_runner_dirs.h" /* generated: CUZK__RUNNER_FROM_BINDIR, _INSTALLED, _LIBEXEC */

extern char **environ;

#define PIPE_BYTES (1 << 20)
#define RUNNER_PLACES 4

static const char *runner_path; /* set by tests only, before any computation */

void cuzk__witness_set_runner(const char *path) { runner_path = path; }

/* The runner's path in out: beside the running program (a build tree's bin/), where an
 * install puts it relative to the program's bin/ (wherever the prefix was moved), in bin/
 * beside a build tree's tests/, then where this build installs it. */
static cuzk_err find_runner(char *out, size_t cap, cuzk_errbuf *eb)
{
    char places[RUNNER_PLACES][PATH_MAX];
    int n = 0;
    if (runner_path) {
        snprintf(places[n++], PATH_MAX, "%s", runner_path);
    } else {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        char *slash = len > 0 ? memrchr(exe, '/', (size_t)len) : NULL;
        if (slash) {
            *slash = 0;
            static const char *const rel[] = {"", "/" CUZK__RUNNER_FROM_BINDIR, "/../bin"};
            size_t dl = (size_t)(slash - exe);
            int in_bin = dl >= 4 && memcmp(slash - 4, "/bin", 4) == 0;
            for (int i = 0; i < (in_bin ? 2 : 3); i++)
                if (snprintf(places[n], PATH_MAX, "%s%s/%s", exe, rel[i], CUZK__RUNNER_NAME) <
                    PATH_MAX)
                    n++;
        }
        snprintf(places[n++], PATH_MAX, "%s", CUZK__RUNNER_INSTALLED);
    }
    char tried[CUZK_ERRBUF_SIZE] = "";
    size_t tl = 0;
    for (int i = 0; i < n; i++) {
        if (access(places[i], X_OK) == 0 && strlen(places[i]) < cap) {
            memcpy(out, places[i], strlen(places[i]) + 1);
            return CUZK_OK;
        }
        int k = snprintf(tried + tl, sizeof tried - tl, "%s%s", i ? ", " : "", places[i]);
        tl = k < 0 || (size_t)k >= sizeof tried - tl ? sizeof tried - 1 : tl + (size_t)k;
    }
    return cuzk_errf(eb, CUZK_NOT_FOUND,
                     "cannot start the witness program: no executable %s at %s (cmake "
                     "--install puts it in PREFIX/%s)",
                     CUZK__RUNNER_NAME, tried, CUZK__RUNNER_LIBEXEC);
}

static uint64_t shape_nodes(const cuzk_json *v)
{
    uint64_t n = 1;
    for (size_t i = 0; v->type == CUZK_JSON_ARRAY && i < v->n; i++)
        n += shape_nodes(v->items[i]);
    return n;
}

static void shape_put(const cuzk_json *v, uint32_t *out, uint64_t *at)
{
    out[(*at)++] = v->type == CUZK_JSON_ARRAY ? (uint32_t)v->n : CUZK__JOB_LEAF;
    for (size_t i = 0; v->type == CUZK_JSON_ARRAY && i < v->n; i++)
        shape_put(v->items[i], out, at);
}

/* A descriptor of fd that is not 0, 1 or 2, so that the runner's dup2s cannot overwrite one
 * another; fd is closed. -1 on failure. */
static int above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int k = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return k;
}

/* The job (runner.h) in a memory file, at its start: the runner reads it at its own pace and
 * nothing is left to block on when it fails early. */
static cuzk_err write_job(int *fd_out, const cuzk_witness_program *p, const char *inputs_name,
                          int mode, const cuzk__inputs *in, cuzk_errbuf *eb)
{
    uint64_t names_len = 0, n_shape = 0;
    for (size_t i = 0; i < in->n_signals; i++) {
        names_len += strlen(in->signals[i].name) + 1;
        n_shape += shape_nodes(in->signals[i].json);
    }
    cuzk__job_head h = {CUZK__JOB_PROTOCOL,
                        (uint32_t)mode,
                        in->n_signals,
                        in->n_values,
                        n_shape,
                        (uint32_t)strlen(p->so_path) + 1,
                        (uint32_t)strlen(p->wasm_path) + 1,
                        (uint32_t)strlen(inputs_name) + 1,
                        (uint32_t)names_len};
    if (names_len > UINT32_MAX || n_shape > UINT32_MAX)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: too many input signals or values",
                         inputs_name);
    size_t meta_len = in->n_signals * sizeof(cuzk__job_signal) + names_len + n_shape * 4;
    uint8_t *meta = malloc(meta_len ? meta_len : 1);
    if (!meta)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory for the witness program's job",
                         inputs_name);
    char *names = (char *)meta + in->n_signals * sizeof(cuzk__job_signal);
    uint32_t *shape = malloc(n_shape ? n_shape * 4 : 1);
    uint64_t name_at = 0, shape_at = 0;
    for (size_t i = 0; shape && i < in->n_signals; i++) {
        const cuzk__input_signal *s = &in->signals[i];
        uint64_t from = shape_at;
        shape_put(s->json, shape, &shape_at);
        cuzk__job_signal w = {s->hash_hi, s->hash_lo, (uint32_t)strlen(s->name),
                              (uint32_t)(shape_at - from), s->first, s->count};
        memcpy(meta + i * sizeof w, &w, sizeof w);
        memcpy(names + name_at, s->name, w.name_len + 1);
        name_at += w.name_len + 1;
    }
    if (shape)
        memcpy(names + names_len, shape, n_shape * 4);
    free(shape);
    int fd = shape ? above_stdio(memfd_create("cuzk-witness-job", MFD_CLOEXEC)) : -1;
    int ok = fd >= 0 && !cuzk__write_all(fd, &h, sizeof h) &&
             !cuzk__write_all(fd, p->so_path, h.so_len) &&
             !cuzk__write_all(fd, p->wasm_path, h.wasm_len) &&
             !cuzk__write_all(fd, inputs_name, h.inputs_name_len) &&
             !cuzk__write_all(fd, meta, meta_len) &&
             !cuzk__write_all(fd, in->values, in->n_values * sizeof *in->values) &&
             lseek(fd, 0, SEEK_SET) == 0;
    int err = errno;
    free(meta);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        return cuzk_errf(eb, shape ? CUZK_IO : CUZK_NO_MEMORY,
                         "cannot start the witness program: its job: %s", strerror(err));
    }
    *fd_out = fd;
    return CUZK_OK;
}

/* Starts the runner with the job on its stdin and reply_fd as its stdout, its stderr the
 * caller's, every other descriptor closed, and default signal mask and dispositions. */
static cuzk_err spawn_runner(pid_t *pid, int job_fd, int reply_fd, cuzk_errbuf *eb)
{
    char path[PATH_MAX];
    cuzk_err e = find_runner(path, sizeof path, eb);
    if (e)
        return e;
    char parent[24];
    snprintf(parent, sizeof parent, "%ld", (long)getpid());
    char *const argv[] = {path, parent, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, job_fd, 0);
    posix_spawn_file_actions_adddup2(&fa, reply_fd, 1);
    if (fcntl(2, F_GETFD) < 0)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    cuzk__spawnattr_signals(&at, 0);
    int rc = posix_spawn(pid, path, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0)
        return cuzk_errf(eb, rc == ENOMEM || rc == EAGAIN ? CUZK_NO_MEMORY : CUZK_IO,
                         "cannot start the witness program: %s: %s", path, strerror(rc));
    return CUZK_OK;
}

/* Runs the program in a runner and reads its reply into *w (the values only with
 * CUZK__MODE_COMPUTE; w->n is the witness length in every mode). Frees in. */
static cuzk_err run_runner(const cuzk_witness_program *p, const char *inputs_name, int mode,
                           cuzk__inputs *in, cuzk_witness *w, cuzk_errbuf *eb)
{
    const int values = mode == CUZK__MODE_COMPUTE;
    int job_fd = -1, fds[2];
    cuzk_err e = write_job(&job_fd, p, inputs_name, mode, in, eb);
    cuzk__inputs_free(in);
    if (e)
        return e;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        close(job_fd);
        return cuzk_errf(eb, CUZK_IO, "pipe: %s", strerror(errno));
    }
    fds[1] = above_stdio(fds[1]);
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES); /* fewer switches between the two; may be refused */
    pid_t pid = 0;
    e = fds[1] < 0 ? cuzk_errf(eb, CUZK_IO, "fcntl: %s", strerror(errno))
                   : spawn_runner(&pid, job_fd, fds[1], eb);
    close(job_fd);
    if (fds[1] >= 0)
        close(fds[1]);
    if (e) {
        close(fds[0]);
        return e;
    }
    cuzk__reply_head h;
    char msg[CUZK_ERRBUF_SIZE] = "";
    int got = cuzk__read_all(fds[0], &h, sizeof h) == 0 && h.msg_len < sizeof msg &&
              h.log_len <= CUZK__MSG_MAX && h.n <= UINT32_MAX && h.curve < CUZK_CURVE_COUNT &&
              cuzk__read_all(fds[0], msg, h.msg_len) == 0;
    if (got) {
        w->log = malloc(h.log_len + 1);
        w->values = cuzk__big_alloc(values && h.n ? h.n * 32 : 1); /* huge pages: fewer faults */
        if (!w->log || !w->values) {
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for %llu witness values",
                          (unsigned long long)h.n);
            got = 0;
        } else if (cuzk__read_all(fds[0], w->log, h.log_len) != 0 ||
                   (values && cuzk__read_all(fds[0], w->values, h.n * 32) != 0)) {
            got = 0;
        } else {
            w->log[h.log_len] = 0;
        }
    }
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!got) {
        cuzk_witness_clear(w);
        if (e)
            return e;
        if (WIFEXITED(st) && WEXITSTATUS(st) == CUZK__EXIT_TRAPPED)
            return cuzk_errf(eb, CUZK_INTERNAL,
                             "%s with %s: the witness program trapped while giving its values",
                             p->wasm_path, inputs_name);
        if (WIFSIGNALED(st))
            return cuzk_errf(eb, CUZK_INTERNAL,
                             "%s with %s: the witness program died of signal %d (%s)",
                             p->wasm_path, inputs_name, WTERMSIG(st), strsignal(WTERMSIG(st)));
        return cuzk_errf(eb, CUZK_INTERNAL,
                         "%s with %s: the witness program ended without an answer (exit "
                         "status %d)",
                         p->wasm_path, inputs_name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    if (h.err) {
        char *log = w->log;
        w->log = NULL;
        cuzk_witness_clear(w);
        w->log = log; /* what the circuit printed before failing helps find why */
        return cuzk_errf(eb, (cuzk_err)h.err, "%s", msg);
    }
    w->curve = (cuzk_curve)h.curve;
    w->n = h.n;
    return CUZK_OK;
}

cuzk_err cuzk_witness_compute(const cuzk_witness_program *p, const cuzk_json *inputs,
                              const char *inputs_name, cuzk_witness *w, cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    cuzk__inputs in;
    cuzk_err e = cuzk__inputs_parse(&in, inputs, inputs_name, eb);
    if (e)
        return e;
    return run_runner(p, inputs_name, CUZK__MODE_COMPUTE, &in, w, eb);
}

cuzk_err cuzk_witness_check(const cuzk_witness_program *p, const cuzk_json *inputs,
                            const char *inputs_name, cuzk_errbuf *eb)
{
    cuzk_witness w;
    memset(&w, 0, sizeof w);
    cuzk__inputs in;
    cuzk_err e = cuzk__inputs_parse(&in, inputs, inputs_name, eb);
    if (e)
        return e;
    e = run_runner(p, inputs_name, CUZK__MODE_CHECK, &in, &w, eb);
    cuzk_witness_clear(&w);
    return e;
}

cuzk_err cuzk_witness_program_shape(const cuzk_witness_program *p, cuzk_curve *curve,
                                    uint64_t *n_values, cuzk_errbuf *eb)
{
    cuzk_witness w;
    memset(&w, 0, sizeof w);
    cuzk__inputs in;
    memset(&in, 0, sizeof in);
    cuzk_err e = run_runner(p, "no inputs", CUZK__MODE_SHAPE, &in, &w, eb);
    if (!e) {
        *curve = w.curve;
        *n_values = w.n;
    }
    cuzk_witness_clear(&w);
    return e;
}

void cuzk_witness_clear(cuzk_witness *w)
{
    free(w->values);
    free(w->log);
    memset(w, 0, sizeof *w);
}

void cuzk_witness_as_wtns(const cuzk_witness *w, cuzk_wtns *wt, const char *name)
{
    memset(wt, 0, sizeof *wt);
    cuzk__file_borrow(&wt->file, w->values, (size_t)w->n * 32, name);
    wt->curve = w->curve;
    wt->n8 = 32;
    wt->version = 2;
    wt->n_witness = w->n;
    wt->values = w->values;
}
