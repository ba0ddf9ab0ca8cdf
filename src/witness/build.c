/* Builds circom's witness program into a shared object once and loads it: wasm2c translates
 * the wasm to C (module name "circuit"), cc compiles that with wabt's runtime and the shim
 * (program_shim.c.in). The result is kept as CACHE/<sha256 of the wasm>.<of the shim>.so;
 * builds run in a private temporary directory and are renamed into place, so concurrent
 * builders of one program never see a partial file. CACHE/id-* files record the digest of
 * a wasm file by its identity (identity_path), so a later open of the unchanged file loads
 * the object without reading and hashing the wasm. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/sha256.h"
#include "witness/internal.h"
#include "witness_shim.h" /* generated from program_shim.c.in: cuzk__witness_shim_src */

extern char **environ;

#define WASM_MAX_BYTES ((size_t)1 << 30)

/* Where Debian's wabt (and upstream's install) put wasm2c's runtime sources. */
static const char *const RUNTIME_DIRS[] = {"/usr/share/wabt/wasm2c", "/usr/src/wasm2c",
                                           "/usr/local/share/wabt/wasm2c",
                                           "/usr/local/src/wasm2c"};

/* -O1: the translated code is one large function per template; -O2 takes several times
 * longer to build for little faster witness programs. */
static const char *const CC_OPT = "-O1";

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first PATH directory holding an executable `name`, in out. */
static int find_on_path(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t n = c ? (size_t)(c - path) : strlen(path);
        if (n && snprintf(out, cap, "%.*s/%s", (int)n, path, name) < (int)cap &&
            access(out, X_OK) == 0)
            return 1;
        path += n + (c != NULL);
    }
    return 0;
}

static cuzk_err read_file(const char *path, uint8_t **buf, size_t *len, cuzk_errbuf *eb)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= WASM_MAX_BYTES) {
            fclose(f);
            free(b);
            return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: larger than 1 GiB", path);
        }
        uint8_t *nb = realloc(b, cap * 2);
        if (!nb)
            free(b);
        b = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!b)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory reading %s", path);
    if (err) {
        free(b);
        return cuzk_errf(eb, CUZK_IO, "%s: read error", path);
    }
    *buf = b;
    *len = n;
    return CUZK_OK;
}

static cuzk_err write_file(const char *path, const void *data, size_t len, cuzk_errbuf *eb)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(data, 1, len, f) == len;
    ok &= fclose(f) == 0;
    return ok ? CUZK_OK : cuzk_errf(eb, CUZK_IO, "%s: write failed", path);
}

static cuzk_err mkdir_p(const char *dir, cuzk_errbuf *eb)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: path too long", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return cuzk_errf(eb, CUZK_IO, "cannot create %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return cuzk_errf(eb, CUZK_IO,
                         "cannot create the witness program cache %s: %s (choose another "
                         "with --wasm-cache)",
                         tmp, strerror(errno));
    return CUZK_OK;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Runs argv with stdout and stderr into logpath; on failure the error quotes the log's tail. */
static cuzk_err run_tool(char *const argv[], const char *logpath, const char *what,
                         cuzk_errbuf *eb)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return cuzk_errf(eb, CUZK_IO, "cannot run %s: %s", argv[0], strerror(rc));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return cuzk_errf(eb, CUZK_INTERNAL, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return CUZK_OK;
    char tail[320] = "";
    FILE *f = fopen(logpath, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, sz > (long)sizeof tail - 1 ? sz - (long)sizeof tail + 1 : 0, SEEK_SET);
        size_t n = fread(tail, 1, sizeof tail - 1, f);
        tail[n] = 0;
        fclose(f);
        for (char *p = tail; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
    return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s failed (%s %d): %s", what,
                     WIFEXITED(st) ? "exit status" : "signal",
                     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), tail);
}

static cuzk_err build(const char *wasm_path, const uint8_t *wasm, size_t wasm_len,
                      const char *cache, const char *so_path, cuzk_errbuf *eb)
{
    char wasm2c[PATH_MAX], cc[PATH_MAX], rtdir[PATH_MAX] = "";
    if (!find_on_path("wasm2c", wasm2c, sizeof wasm2c))
        return cuzk_errf(eb, CUZK_NOT_FOUND,
                         "%s: wasm2c is not on PATH: install wabt (Debian: apt-get install "
                         "wabt), which cuzk uses to run circom's witness program",
                         wasm_path);
    if (!find_on_path("cc", cc, sizeof cc))
        return cuzk_errf(eb, CUZK_NOT_FOUND,
                         "%s: no C compiler (cc) on PATH: install one (Debian: apt-get "
                         "install build-essential) to build circom's witness program",
                         wasm_path);
    for (size_t i = 0; i < sizeof RUNTIME_DIRS / sizeof RUNTIME_DIRS[0]; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/wasm-rt-impl.c", RUNTIME_DIRS[i]);
        if (file_exists(p)) {
            snprintf(rtdir, sizeof rtdir, "%s", RUNTIME_DIRS[i]);
            break;
        }
    }
    if (!rtdir[0])
        return cuzk_errf(eb, CUZK_NOT_FOUND,
                         "%s: wasm2c's runtime (wasm-rt-impl.c) is not in %s or %s: install "
                         "wabt (Debian: apt-get install wabt)",
                         wasm_path, RUNTIME_DIRS[0], RUNTIME_DIRS[1]);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/build.XXXXXX", cache) >= (int)sizeof tmp)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: path too long", cache);
    if (!mkdtemp(tmp))
        return cuzk_errf(eb, CUZK_IO, "cannot create a build directory in %s: %s", cache,
                         strerror(errno));
    char in[PATH_MAX + 32], csrc[PATH_MAX + 32], shim[PATH_MAX + 32], so[PATH_MAX + 32],
        log[PATH_MAX + 32], rt[PATH_MAX + 32], inc_tmp[PATH_MAX + 32], inc_rt[PATH_MAX + 32];
    snprintf(in, sizeof in, "%s/circuit.wasm", tmp);
    snprintf(csrc, sizeof csrc, "%s/circuit.c", tmp);
    snprintf(shim, sizeof shim, "%s/shim.c", tmp);
    snprintf(so, sizeof so, "%s/circuit.so", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    snprintf(rt, sizeof rt, "%s/wasm-rt-impl.c", rtdir);
    snprintf(inc_tmp, sizeof inc_tmp, "-I%s", tmp);
    snprintf(inc_rt, sizeof inc_rt, "-I%s", rtdir);
    /* The bytes that were hashed are the bytes built, whatever happens to the file meanwhile. */
    cuzk_err e = write_file(in, wasm, wasm_len, eb);
    if (!e)
        e = write_file(shim, cuzk__witness_shim_src, sizeof cuzk__witness_shim_src - 1, eb);
    if (!e) {
        char *argv[] = {wasm2c, in, "-n", "circuit", "-o", csrc, NULL};
        e = run_tool(argv, log, "wasm2c (translating the witness program to C)", eb);
    }
    if (!e) {
        char *argv[] = {cc,     (char *)CC_OPT, "-fPIC",  "-shared", "-Wl,--no-undefined",
                        inc_tmp, inc_rt,        csrc,     rt,        shim,
                        "-o",   so,             "-lm",    NULL};
        e = run_tool(argv, log, "cc (compiling the witness program)", eb);
    }
    if (!e && rename(so, so_path) != 0)
        e = cuzk_errf(eb, CUZK_IO, "cannot move the built program to %s: %s", so_path,
                      strerror(errno));
    rm_tree(tmp);
    return e;
}

#define SYM(field, name)                                                                   \
    do {                                                                                   \
        *(void **)&p->api.field = dlsym(p->dl, name);                                      \
        if (!p->api.field)                                                                 \
            return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: %s lacks %s", p->wasm_path,         \
                             p->so_path, name);                                            \
    } while (0)

cuzk_err cuzk__witness_program_load(cuzk_witness_program *p, cuzk_errbuf *eb)
{
    /* RTLD_LOCAL: every program keeps its own copy of wasm2c's runtime. */
    p->dl = dlopen(p->so_path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: cannot load %s: %s", p->wasm_path,
                         p->so_path, dlerror());
    SYM(create, "cuzk_wc_new");
    SYM(error_text, "cuzk_wc_error_text");
    SYM(log_text, "cuzk_wc_log_text");
    SYM(exception, "cuzk_wc_exception");
    SYM(call, "cuzk_wc_call");
    SYM(read_shared, "cuzk_wc_read_shared");
    SYM(set_input, "cuzk_wc_set_input");
    SYM(witness, "cuzk_wc_witness");
    return CUZK_OK;
}

/* The name of the record of a wasm file's identity (device, inode, size, modification and
 * change times to the nanosecond) in the cache: it holds the SHA-256 of the bytes that had
 * that identity, so an unchanged wasm is not read and hashed again. A write to the file
 * changes its change time, a replacement its inode. */
static int identity_path(char *out, size_t cap, const char *cache, const struct stat *st)
{
    return snprintf(out, cap, "%s/id-%llx-%llx-%llx-%llx.%09ld-%llx.%09ld", cache,
                    (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                    (unsigned long long)st->st_size, (unsigned long long)st->st_mtim.tv_sec,
                    (long)st->st_mtim.tv_nsec, (unsigned long long)st->st_ctim.tv_sec,
                    (long)st->st_ctim.tv_nsec) < (int)cap;
}

/* Whether a and b name the same identity (the fields identity_path uses). */
static int same_identity(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The digest recorded for st, as 64 hex characters in hex; 0 when there is none. */
static int identity_read(const char *cache, const struct stat *st, char hex[65])
{
    char p[PATH_MAX];
    if (!identity_path(p, sizeof p, cache, st))
        return 0;
    FILE *f = fopen(p, "rb");
    if (!f)
        return 0;
    size_t n = fread(hex, 1, 65, f);
    fclose(f);
    if (n != 64)
        return 0;
    hex[64] = 0;
    for (int i = 0; i < 64; i++)
        if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
            return 0;
    return 1;
}

/* Records hex for st (a temporary file renamed into place); best effort. */
static void identity_write(const char *cache, const struct stat *st, const char hex[65])
{
    char p[PATH_MAX], t[PATH_MAX + 32];
    if (!identity_path(p, sizeof p, cache, st) ||
        snprintf(t, sizeof t, "%s.tmp.%ld", p, (long)getpid()) >= (int)sizeof t)
        return;
    if (write_file(t, hex, 64, &(cuzk_errbuf){{0}}) != CUZK_OK || rename(t, p) != 0)
        unlink(t);
}

/* The shared object's path for the wasm of digest hex (the shim is part of the object: a
 * cuzk with another shim builds its own). */
static char *so_path_of(const char *cache, const char *hex)
{
    uint8_t sd[32];
    cuzk_sha256(sd, cuzk__witness_shim_src, sizeof cuzk__witness_shim_src - 1);
    char *p = NULL;
    if (asprintf(&p, "%s/%s.%02x%02x%02x%02x.so", cache, hex, sd[0], sd[1], sd[2], sd[3]) < 0)
        return NULL;
    return p;
}

cuzk_err cuzk_witness_program_open(cuzk_witness_program **out, const char *wasm_path,
                                   const cuzk_witness_opts *opts, cuzk_errbuf *eb)
{
    *out = NULL;
    char cache[PATH_MAX];
    if (opts && opts->cache_dir && *opts->cache_dir) {
        snprintf(cache, sizeof cache, "%s", opts->cache_dir);
    } else {
        const char *slash = strrchr(wasm_path, '/');
        if (slash)
            snprintf(cache, sizeof cache, "%.*s/%s", (int)(slash - wasm_path), wasm_path,
                     CUZK_WITNESS_CACHE_DIR);
        else
            snprintf(cache, sizeof cache, "%s", CUZK_WITNESS_CACHE_DIR);
    }
    cuzk_witness_program *p = calloc(1, sizeof *p);
    if (!p || !(p->wasm_path = strdup(wasm_path))) {
        free(p);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    cuzk_err e = CUZK_OK;
    uint8_t *wasm = NULL;
    size_t wasm_len = 0;
    char hex[65];
    /* An unchanged wasm whose object is built: loaded without reading the wasm. */
    struct stat st, st2;
    int have_st = stat(wasm_path, &st) == 0 && S_ISREG(st.st_mode);
    if (have_st && identity_read(cache, &st, hex)) {
        if (!(p->so_path = so_path_of(cache, hex))) {
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
            goto out;
        }
        if (file_exists(p->so_path) && cuzk__witness_program_load(p, &(cuzk_errbuf){{0}}) == 0)
            goto out;
        if (p->dl)
            dlclose(p->dl);
        p->dl = NULL;
        free(p->so_path);
        p->so_path = NULL;
    }
    if ((e = read_file(wasm_path, &wasm, &wasm_len, eb)))
        goto out;
    if (wasm_len < 8 || memcmp(wasm, "\0asm", 4) != 0) {
        e = cuzk_errf(eb, CUZK_BAD_FORMAT,
                      "%s: not a WebAssembly module (circom --wasm writes "
                      "CIRCUIT_js/CIRCUIT.wasm)",
                      wasm_path);
        goto out;
    }
    uint8_t digest[32];
    cuzk_sha256(digest, wasm, wasm_len);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    /* The identity is recorded only when the file still has it after the read: the bytes
     * hashed are then the bytes it names. */
    have_st = have_st && stat(wasm_path, &st2) == 0 && same_identity(&st, &st2) &&
              (uint64_t)st.st_size == wasm_len;
    if (!(p->so_path = so_path_of(cache, hex))) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        goto out;
    }
    if (file_exists(p->so_path)) {
        cuzk_errbuf leb = {{0}};
        if (cuzk__witness_program_load(p, &leb) == CUZK_OK)
            goto done;
        /* A stale or damaged object (another machine's, a cut-off copy): build it again. */
        if (p->dl)
            dlclose(p->dl);
        p->dl = NULL;
    }
    double t0 = cuzk__now_ms();
    if ((e = mkdir_p(cache, eb)) ||
        (e = build(wasm_path, wasm, wasm_len, cache, p->so_path, eb)) ||
        (e = cuzk__witness_program_load(p, eb)))
        goto out;
    p->built = 1;
    p->build_ms = cuzk__now_ms() - t0;
done:
    /* A file changed within the last seconds could change again within the timestamps'
     * granularity and keep its identity: recorded once it has been still for 2 s. */
    if (have_st) {
        const time_t now = time(NULL);
        if (now - st.st_ctim.tv_sec >= 2 && now - st.st_mtim.tv_sec >= 2)
            identity_write(cache, &st, hex);
    }
out:
    free(wasm);
    if (e)
        cuzk_witness_program_free(p);
    else
        *out = p;
    return e;
}

void cuzk_witness_program_free(cuzk_witness_program *p)
{
    if (!p)
        return;
    if (p->dl)
        dlclose(p->dl);
    free(p->wasm_path);
    free(p->so_path);
    free(p);
}

int cuzk_witness_program_built(const cuzk_witness_program *p, double *build_ms)
{
    if (build_ms)
        *build_ms = p->build_ms;
    return p->built;
}

const char *cuzk_witness_program_path(const cuzk_witness_program *p) { return p->so_path; }
