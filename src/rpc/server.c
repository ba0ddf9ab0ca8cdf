/* gRPC service cuzk.v1.ProvingService over the gRPC core C API (see server.h). */
#define _GNU_SOURCE
#include "rpc/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "cuzk/curve.h"
#include "cuzk/log.h"
#include "cuzk/v1/proving.pb-c.h"
#include "rpc/cluster_rpc.h"
#include "rpc/status_memory.h"
#include "rpc/tls.h"

#define TGT "cuzk_rpc"
#define SVC "/cuzk.v1.ProvingService/"

enum { ST_NEW, ST_RECV, ST_SEND };
enum { TAG_MAIN, TAG_CLOSE };

typedef struct call call;

/* What one token holds now ([daemon.auth] max_*_per_token), keyed by its owner id. Entries
 * live as long as the server (one per token that called). Under srv->mu. */
typedef struct token_use {
    char owner[CUZK_OWNER_ID_LEN];
    unsigned calls, jobs;
    uint64_t witness_bytes;
    struct token_use *next;
} token_use;

/* A job submitted by a capped token and not yet seen to end: what its end gives back. */
typedef struct live_job {
    char job_id[32];
    token_use *tu;
    uint64_t witness_bytes;
    struct live_job *next;
} live_job;

#define LIVE_BUCKETS 256

typedef struct {
    call *c;
    int kind; /* TAG_MAIN: the call's read and reply batches; TAG_CLOSE: its close batch */
} call_tag;

struct call {
    int stage;
    struct cuzk_rpc_server *srv;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *req, *resp;
    grpc_status_code code;
    grpc_slice status_msg;
    int has_status_msg;
    int cancelled;
    char method[64];
    cuzk_role role;                 /* of the caller's token (with auth) */
    char owner[CUZK_OWNER_ID_LEN];  /* the caller's owner id; "" without auth */
    token_use *tu; /* the token's usage while this call counts in it (under srv->mu) */
    call_tag t_main, t_close;
    /* Under srv->mu: */
    int refs;          /* the reply path, the close batch, a park check in progress */
    int close_started; /* RECV_CLOSE_ON_SERVER runs as its own batch */
    int closed;        /* ... and has completed */
    int begun;         /* a client's call (counted in srv->open_calls) */
    int admitted;      /* counted in srv->pending until its reply starts */
    int parked;        /* in srv->parked, waiting for job_id to end */
    int resume;        /* queued to answer its parked wait */
    char job_id[64];
    uint64_t deadline_ms; /* of a parked wait, monotonic; 0: none */
    call *next, *prev;    /* work queue or parked list */
};

struct cuzk_rpc_server {
    cuzk_engine *engine;
    cuzk_cluster *cluster; /* NULL: a single node */
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t cq_thread;
    int cq_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* shutdown_done, pending */
    pthread_cond_t work_cv; /* queue not empty, or stopping */
    pthread_cond_t timer_cv;
    int shutting_down, shutdown_done, stopping;
    char shutdown_tag;
    char *devices;
    char *witness_dir; /* daemon.witness_dir as configured, NULL when paths are refused */
    char *witness_real; /* its realpath: absolute client paths may use either spelling */
    int witness_fd;     /* the directory, opened once at start; client paths resolve beneath */
    cuzk_auth *auth;    /* NULL: calls are not authenticated */
    cuzk_rpc_tls *tls;  /* NULL: plaintext */
    /* Handler pool: calls are queued and served by at most max_workers threads, started as
     * needed; a wait for a job parks the call (no thread) until the job ends, its timeout, or
     * the client goes away. */
    unsigned max_workers, n_workers, idle_workers;
    pthread_t *workers;
    pthread_t timer_thread;
    int timer_started;
    unsigned max_pending, pending, n_parked;
    unsigned open_calls; /* calls begun by clients and not yet freed */
    call *q_head, *q_tail, *parked;
    /* Per-token caps (with auth, roles below admin); max_witness 0: none. */
    unsigned max_calls_token, max_jobs_token;
    uint64_t max_witness_token;
    token_use *tokens;
    live_job *live[LIVE_BUCKETS];
};

/* ------------------------------------------------------------------ errors */

static grpc_status_code status_of(cuzk_err e)
{
    switch (e) {
    case CUZK_OK: return GRPC_STATUS_OK;
    case CUZK_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case CUZK_OUT_OF_BUDGET: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case CUZK_CANCELLED: return GRPC_STATUS_UNAVAILABLE; /* the engine refuses: shutting down */
    case CUZK_TIMEOUT: return GRPC_STATUS_DEADLINE_EXCEEDED;
    case CUZK_NO_MEMORY: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case CUZK_INTERNAL:
    case CUZK_IO:
    case CUZK_GPU_FAULT:
    case CUZK_NO_DEVICE: return GRPC_STATUS_INTERNAL;
    default: return GRPC_STATUS_INVALID_ARGUMENT; /* witness / request problems */
    }
}

static void set_status(call *c, grpc_status_code code, const char *msg)
{
    c->code = code;
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    c->status_msg = grpc_slice_from_copied_string(msg ? msg : "");
    c->has_status_msg = 1;
}

static void set_err(call *c, cuzk_err e, const cuzk_errbuf *eb)
{
    char m[CUZK_ERRBUF_SIZE + 64];
    snprintf(m, sizeof m, "%s (%s)", eb->msg[0] ? eb->msg : cuzk_strerror(e), cuzk_errname(e));
    set_status(c, status_of(e), m);
    CUZK_LOG_DEBUG(TGT, "call failed", "method=%s code=%d message=%s", c->method, (int)c->code, m);
}

/* ------------------------------------------------------------------ messages */

static void set_resp(call *c, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the reply");
        return;
    }
    protobuf_c_message_pack(m, buf);
    grpc_slice s = grpc_slice_new(buf, n, free);
    c->resp = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    c->code = GRPC_STATUS_OK;
}

static ProtobufCMessage *unpack(call *c, const ProtobufCMessageDescriptor *d)
{
    if (!c->req) {
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
        return NULL;
    }
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, c->req)) {
        set_status(c, GRPC_STATUS_INTERNAL, "cannot read the request");
        return NULL;
    }
    grpc_slice s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    ProtobufCMessage *m =
        protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
    grpc_slice_unref(s);
    if (!m) {
        char msg[160];
        snprintf(msg, sizeof msg, "the request is not a valid %s message", d->name);
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
    }
    return m;
}

static const char *curve_name(int c)
{
    return cuzk_curve_name((cuzk_curve)c);
}

/* Fills a ProofResult from an engine result and packs it as the reply. */
static void reply_result(call *c, const cuzk_job_result *r)
{
    Cuzk__V1__ProofResult pr = CUZK__V1__PROOF_RESULT__INIT;
    Cuzk__V1__Timings tm = CUZK__V1__TIMINGS__INIT;
    Cuzk__V1__Error er = CUZK__V1__ERROR__INIT;
    pr.job_id = (char *)r->job_id;
    pr.request_id = r->request_id;
    pr.circuit_id = r->circuit_id;
    pr.state = (Cuzk__V1__JobState)r->state;
    pr.partitions = (uint32_t)r->n_parts;
    pr.partitions_done = (uint32_t)r->parts_done;
    pr.completion_seq = r->seq;
    tm.queue_ms = r->queue_ms;
    tm.synthesis_ms = r->synth_ms;
    tm.prove_ms = r->prove_ms;
    tm.total_ms = r->total_ms;
    tm.budget_wait_ms = r->budget_wait_ms;
    tm.gpu_ms = r->gpu_ms;
    tm.g2_ms = r->g2_ms;
    tm.witness_ms = r->witness_ms;
    pr.timings = &tm;
    if (r->state == CUZK_JOB_FAILED || r->state == CUZK_JOB_CANCELLED) {
        er.code = (char *)cuzk_errname(r->err);
        er.message = r->error;
        pr.error = &er;
    }
    Cuzk__V1__PartitionProof *pp = NULL, **ptrs = NULL;
    if (r->parts && r->n_parts) {
        pp = calloc(r->n_parts, sizeof *pp);
        ptrs = calloc(r->n_parts, sizeof *ptrs);
        if (!pp || !ptrs) {
            free(pp);
            free(ptrs);
            set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the reply");
            return;
        }
        for (size_t i = 0; i < r->n_parts; i++) {
            cuzk__v1__partition_proof__init(&pp[i]);
            pp[i].proof_json = r->parts[i].proof_json;
            pp[i].public_json = r->parts[i].public_json;
            if (r->parts[i].has_compressed) {
                pp[i].proof_compressed.data = (uint8_t *)r->parts[i].compressed;
                pp[i].proof_compressed.len = 192;
            }
            ptrs[i] = &pp[i];
        }
        pr.n_proofs = r->n_parts;
        pr.proofs = ptrs;
    }
    set_resp(c, &pr.base);
    free(pp);
    free(ptrs);
}

/* ------------------------------------------------------------------ handlers */

/* Reads an opened witness file into owned memory (*out, malloc'd): a file truncated or
 * rewritten while it is read is this request's error, never a fault in the daemon (a mapping
 * of it would raise SIGBUS). At most cap bytes, and at most *budget_left (the witness budget:
 * the engine would refuse more after the copy), which it lowers. */
static int read_witness_fd(call *c, int fd, size_t i, const char *p, uint64_t cap,
                           uint64_t *budget_left, uint8_t **out, size_t *len)
{
    char msg[CUZK_ERRBUF_SIZE + 600];
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(msg, sizeof msg, "witness path %zu (%.400s): %s", i, p, strerror(errno));
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
        return -1;
    }
    if ((uint64_t)st.st_size > cap) {
        snprintf(msg, sizeof msg, "witness path %zu (%.400s): %lld bytes, more than the "
                 "circuit's witness can be (%" PRIu64 ")", i, p, (long long)st.st_size, cap);
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
        return -1;
    }
    if ((uint64_t)st.st_size > *budget_left) {
        snprintf(msg, sizeof msg, "witness path %zu (%.400s): the request's witnesses exceed "
                 "memory.witness_budget", i, p);
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
        return -1;
    }
    *budget_left -= (uint64_t)st.st_size;
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for a witness file");
        return -1;
    }
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    struct stat st2;
    int changed = got != n || fstat(fd, &st2) != 0 || st2.st_size != st.st_size ||
                  st2.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                  st2.st_mtim.tv_nsec != st.st_mtim.tv_nsec;
    if (changed) {
        free(buf);
        snprintf(msg, sizeof msg, "witness path %zu (%.400s) changed while it was read (%zu of "
                 "%zu bytes): write witness files completely before naming them", i, p, got, n);
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}

/* The largest .wtns a circuit takes: 32-byte values (both curves' Fr) and a header. 0 for an
 * unknown circuit (the engine then answers NOT_FOUND). */
static uint64_t witness_cap(cuzk_engine *e, const char *circuit_id)
{
    size_t max = 256;
    cuzk_circuit_info *ci = malloc(max * sizeof *ci);
    if (!ci)
        return 0;
    size_t n = cuzk_engine_circuits(e, ci, max);
    uint64_t cap = 0;
    for (size_t i = 0; i < n && i < max; i++)
        if (strcmp(ci[i].id, circuit_id) == 0)
            cap = (uint64_t)ci[i].n_vars * 32 + 4096;
    free(ci);
    return cap;
}

/* Opens rel beneath dirfd without following any symlink and without "..": openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or (kernels before 5.6) a walk of the components
 * with O_NOFOLLOW. O_NONBLOCK: opening a FIFO must not wait for a writer. */
static int open_beneath(int dirfd, const char *rel)
{
    const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return (int)fd;
    char buf[PATH_MAX];
    if (strlen(rel) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, rel);
    int cur = dirfd;
    char *save = NULL;
    for (char *comp = strtok_r(buf, "/", &save); comp;) {
        char *next = strtok_r(NULL, "/", &save);
        int nfd = strcmp(comp, "..") == 0 ? (errno = EXDEV, -1)
                  : next ? openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                         : openat(cur, comp, flags | O_NOFOLLOW);
        int en = errno;
        if (cur != dirfd)
            close(cur);
        if (nfd < 0) {
            errno = en == ENOTDIR ? ELOOP : en; /* O_PATH|O_NOFOLLOW on a link: not a dir */
            return -1;
        }
        cur = nfd;
        comp = next;
    }
    if (cur == dirfd) {
        errno = EISDIR;
        return -1;
    }
    return cur;
}

/* A client's path relative to witness_dir: absolute paths must start with the dir (as
 * configured or its realpath); ".." is refused anywhere. NULL with msg set when refused. */
static const char *beneath_rel(const cuzk_rpc_server *s, const char *p, char *msg, size_t ms,
                               size_t i)
{
    for (const char *c = p; (c = strstr(c, "..")); c += 2)
        if ((c == p || c[-1] == '/') && (c[2] == 0 || c[2] == '/')) {
            snprintf(msg, ms, "witness path %zu (%.400s): '..' is not allowed (name files "
                     "beneath daemon.witness_dir)", i, p);
            return NULL;
        }
    if (p[0] != '/')
        return p;
    const char *dirs[2] = {s->witness_dir, s->witness_real};
    for (int k = 0; k < 2; k++) {
        size_t dl = strlen(dirs[k]);
        while (dl > 1 && dirs[k][dl - 1] == '/')
            dl--;
        if (strncmp(p, dirs[k], dl) == 0 && p[dl] == '/')
            return p + dl + 1;
    }
    snprintf(msg, ms, "witness path %zu (%.400s) is outside daemon.witness_dir", i, p);
    return NULL;
}

static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "FIFO" : S_ISDIR(m) ? "directory" : S_ISCHR(m) || S_ISBLK(m) ? "device"
           : S_ISSOCK(m) ? "socket" : "special file";
}

/* Reads the witness files a request names. Each is opened once, beneath daemon.witness_dir,
 * following no symlink, and must be a regular file: the daemon reads nothing else on a
 * client's behalf, whatever is renamed or linked meanwhile. Relative paths are relative to
 * the dir. Returns -1 with the call's status set on the first bad path. */
static int read_witness_paths(call *c, const Cuzk__V1__SubmitProofRequest *q, uint8_t **bufs,
                              const uint8_t **ptrs, size_t *lens)
{
    uint64_t cap = witness_cap(c->srv->engine, q->circuit_id);
    if (!cap) {
        char msg[300];
        snprintf(msg, sizeof msg, "unknown circuit '%.200s'", q->circuit_id);
        set_status(c, GRPC_STATUS_NOT_FOUND, msg);
        return -1;
    }
    cuzk_engine_status es;
    cuzk_engine_get_status(c->srv->engine, &es);
    uint64_t left = es.witness_budget.limit;
    for (size_t i = 0; i < q->n_witness_paths; i++) {
        char msg[CUZK_ERRBUF_SIZE + 600];
        const char *p = q->witness_paths[i];
        const char *rel = beneath_rel(c->srv, p, msg, sizeof msg, i);
        if (!rel) {
            set_status(c, GRPC_STATUS_PERMISSION_DENIED, msg);
            return -1;
        }
        int fd = rel[0] ? open_beneath(c->srv->witness_fd, rel) : (errno = EISDIR, -1);
        if (fd < 0) {
            int en = errno;
            grpc_status_code code = GRPC_STATUS_INVALID_ARGUMENT;
            if (en == ELOOP || en == EXDEV) {
                snprintf(msg, sizeof msg, "witness path %zu (%.400s) is outside "
                         "daemon.witness_dir or goes through a symlink (links are not "
                         "followed)", i, p);
                code = GRPC_STATUS_PERMISSION_DENIED;
            } else if (en == EISDIR) {
                snprintf(msg, sizeof msg, "witness path %zu (%.400s) is not a regular file "
                         "(directory)", i, p);
            } else {
                snprintf(msg, sizeof msg, "witness path %zu (%.400s): %s", i, p, strerror(en));
                if (en == ENOENT)
                    code = GRPC_STATUS_NOT_FOUND;
                else if (en == EACCES || en == EPERM)
                    code = GRPC_STATUS_PERMISSION_DENIED;
            }
            set_status(c, code, msg);
            return -1;
        }
        struct stat st;
        memset(&st, 0, sizeof st);
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            snprintf(msg, sizeof msg, "witness path %zu (%.400s) is not a regular file (%s)", i,
                     p, file_kind(st.st_mode));
            close(fd);
            set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
            return -1;
        }
        int rc = read_witness_fd(c, fd, i, p, cap, &left, &bufs[i], &lens[i]);
        close(fd);
        if (rc)
            return -1;
        ptrs[i] = bufs[i];
    }
    return 0;
}

/* ------------------------------------------------------------------ per-token caps */

/* Whether the caller's token is held to [daemon.auth] max_*_per_token: with tokens, every
 * role but admin (the operator's). A daemon without tokens has no per-client caps. */
static int capped(const call *c)
{
    return c->srv->auth && c->role != CUZK_ROLE_NONE && c->role < CUZK_ROLE_ADMIN;
}

/* Under s->mu. The usage entry of owner, made on first use; NULL when out of memory. */
static token_use *token_of(cuzk_rpc_server *s, const char *owner)
{
    for (token_use *t = s->tokens; t; t = t->next)
        if (strcmp(t->owner, owner) == 0)
            return t;
    token_use *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->owner, sizeof t->owner, "%s", owner);
    t->next = s->tokens;
    s->tokens = t;
    return t;
}

/* Counts a capped caller's call in its token, or refuses it (status set, -1). */
static int take_call_slot(call *c)
{
    cuzk_rpc_server *s = c->srv;
    if (!capped(c))
        return 0;
    pthread_mutex_lock(&s->mu);
    token_use *t = token_of(s, c->owner);
    unsigned open = t ? t->calls : 0;
    int ok = t && open < s->max_calls_token;
    if (ok) {
        t->calls++;
        c->tu = t;
    }
    pthread_mutex_unlock(&s->mu);
    if (ok)
        return 0;
    char msg[200];
    if (!t)
        snprintf(msg, sizeof msg, "out of memory");
    else
        snprintf(msg, sizeof msg, "this token has %u calls open "
                 "(daemon.auth.max_calls_per_token = %u): retry when some have ended", open,
                 s->max_calls_token);
    set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
    CUZK_LOG_DEBUG(TGT, "call refused", "method=%s owner=%s reason=max_calls_per_token",
                   c->method, c->owner);
    return -1;
}

/* Under s->mu. The call stops counting in its token (answered, or freed unanswered). */
static void drop_call_slot(call *c)
{
    if (c->tu) {
        c->tu->calls--;
        c->tu = NULL;
    }
}

static unsigned live_bucket(const char *job_id)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)job_id; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % LIVE_BUCKETS;
}

/* Under s->mu. Takes job_id off the live list and gives its token back the job and its
 * witness bytes; 0 when it was not there (not capped, or already given back). */
static int end_live_job(cuzk_rpc_server *s, const char *job_id)
{
    for (live_job **pp = &s->live[live_bucket(job_id)]; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->job_id, job_id) == 0) {
            live_job *j = *pp;
            *pp = j->next;
            j->tu->jobs--;
            j->tu->witness_bytes -= j->witness_bytes;
            free(j);
            return 1;
        }
    return 0;
}

/* Reserves one job and wbytes witness bytes in a capped caller's token before its submit;
 * -1 with RESOURCE_EXHAUSTED set when a cap would be passed. *tu: the token (NULL: not
 * capped), for keep_job / unreserve_job. */
static int reserve_job(call *c, uint64_t wbytes, token_use **tu)
{
    cuzk_rpc_server *s = c->srv;
    *tu = NULL;
    if (!capped(c))
        return 0;
    char msg[300] = "";
    pthread_mutex_lock(&s->mu);
    token_use *t = token_of(s, c->owner);
    if (!t)
        snprintf(msg, sizeof msg, "out of memory");
    else if (t->jobs >= s->max_jobs_token)
        snprintf(msg, sizeof msg, "this token has %u jobs that have not ended "
                 "(daemon.auth.max_jobs_per_token = %u): await or cancel some first", t->jobs,
                 s->max_jobs_token);
    else if (s->max_witness_token && (wbytes > s->max_witness_token ||
                                      t->witness_bytes > s->max_witness_token - wbytes))
        snprintf(msg, sizeof msg, "this token's live jobs hold %" PRIu64 " witness bytes and "
                 "this request adds %" PRIu64 " (daemon.auth.max_witness_bytes_per_token = %"
                 PRIu64 "): await or cancel some first", t->witness_bytes, wbytes,
                 s->max_witness_token);
    if (!msg[0]) {
        t->jobs++;
        t->witness_bytes += wbytes;
        *tu = t;
    }
    pthread_mutex_unlock(&s->mu);
    if (!msg[0])
        return 0;
    set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
    CUZK_LOG_DEBUG(TGT, "submit refused", "owner=%s message=%s", c->owner, msg);
    return -1;
}

static void unreserve_job(cuzk_rpc_server *s, token_use *tu, uint64_t wbytes)
{
    if (!tu)
        return;
    pthread_mutex_lock(&s->mu);
    tu->jobs--;
    tu->witness_bytes -= wbytes;
    pthread_mutex_unlock(&s->mu);
}

static cuzk_err peek_job(cuzk_rpc_server *s, const char *job_id, cuzk_job_result *r,
                         cuzk_errbuf *eb);
static int job_ended(cuzk_job_state st);

/* The reservation becomes job_id's, given back by the job-end hook. A job that ended before
 * it was listed was not seen by the hook: it is given back here. */
static void keep_job(cuzk_rpc_server *s, token_use *tu, uint64_t wbytes, const char *job_id)
{
    if (!tu)
        return;
    live_job *j = calloc(1, sizeof *j);
    if (!j) { /* not tracked: give it back now rather than leak the token's count */
        unreserve_job(s, tu, wbytes);
        return;
    }
    snprintf(j->job_id, sizeof j->job_id, "%s", job_id);
    j->tu = tu;
    j->witness_bytes = wbytes;
    unsigned b = live_bucket(job_id);
    pthread_mutex_lock(&s->mu);
    j->next = s->live[b];
    s->live[b] = j;
    pthread_mutex_unlock(&s->mu);
    cuzk_job_result r;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = peek_job(s, job_id, &r, &eb);
    int ended = e || job_ended(r.state);
    if (!e)
        cuzk_job_result_free(&r);
    if (ended) {
        pthread_mutex_lock(&s->mu);
        end_live_job(s, job_id);
        pthread_mutex_unlock(&s->mu);
    }
}

static int do_submit(call *c, char job_id[32], int *existing)
{
    Cuzk__V1__SubmitProofRequest *q = (Cuzk__V1__SubmitProofRequest *)unpack(
        c, &cuzk__v1__submit_proof_request__descriptor);
    if (!q)
        return -1;
    size_t nw = q->n_witnesses ? q->n_witnesses : q->n_witness_paths;
    const uint8_t **ptrs = calloc(nw ? nw : 1, sizeof *ptrs);
    size_t *lens = calloc(nw ? nw : 1, sizeof *lens);
    uint8_t **bufs = calloc(nw ? nw : 1, sizeof *bufs); /* witness_paths' contents */
    int rc = -1;
    if (!ptrs || !lens || !bufs) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else if (q->n_witnesses && q->n_witness_paths) {
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT,
                   "send witnesses or witness_paths, not both");
    } else if (q->n_witness_paths && !c->srv->witness_dir) {
        set_status(c, GRPC_STATUS_FAILED_PRECONDITION,
                   "witness_paths are not accepted by this daemon (set daemon.witness_dir)");
    } else if (q->n_witness_paths && read_witness_paths(c, q, bufs, ptrs, lens)) {
        /* status set */
    } else {
        for (size_t i = 0; i < q->n_witnesses; i++) {
            ptrs[i] = q->witnesses[i].data;
            lens[i] = q->witnesses[i].len;
        }
        cuzk_submit s = {.circuit_id = q->circuit_id,
                         .request_id = q->request_id,
                         .priority = (cuzk_priority)q->priority,
                         .n_witnesses = nw,
                         .witnesses = ptrs,
                         .witness_lens = lens,
                         .n_witness_seeds = q->n_witness_seeds,
                         .witness_seeds = q->witness_seeds,
                         .owner = c->owner,
                         .n_inputs = q->n_inputs_json,
                         .inputs = (const char *const *)q->inputs_json};
        /* Witnesses made in the daemon (seeds, inputs) count as the circuit's largest. */
        uint64_t wbytes = 0, made = q->n_witness_seeds + q->n_inputs_json;
        for (size_t i = 0; i < nw; i++)
            wbytes += lens[i];
        if (made && capped(c))
            wbytes += made * witness_cap(c->srv->engine, q->circuit_id);
        token_use *tu = NULL;
        cuzk_errbuf eb = {{0}};
        cuzk_cluster *cl = c->srv->cluster;
        if (reserve_job(c, wbytes, &tu) == 0) {
            cuzk_err e = cl ? cuzk_cluster_submit(cl, &s, job_id, existing, &eb)
                            : cuzk_engine_submit(c->srv->engine, &s, job_id, existing, &eb);
            if (e || *existing)
                unreserve_job(c->srv, tu, wbytes);
            else
                keep_job(c->srv, tu, wbytes, job_id);
            if (e)
                set_err(c, e, &eb);
            else
                rc = 0;
        }
    }
    for (size_t i = 0; bufs && i < nw; i++)
        free(bufs[i]);
    free(bufs);
    free(ptrs);
    free(lens);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    return rc;
}

/* With tokens, a caller below admin awaits and cancels only the jobs its token submitted.
 * 0: allowed; -1 with the call's status set. */
static int check_owner(call *c, const char *job_id)
{
    if (!c->srv->auth || c->role >= CUZK_ROLE_ADMIN)
        return 0;
    char owner[80];
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_engine_job_owner(c->srv->engine, job_id, owner, sizeof owner, &eb);
    if (e) {
        set_err(c, e, &eb);
        return -1;
    }
    if (strcmp(owner, c->owner) == 0)
        return 0;
    char msg[200];
    snprintf(msg, sizeof msg, "job '%.64s' was submitted with another token (role admin may "
             "await or cancel any job)", job_id);
    set_status(c, GRPC_STATUS_PERMISSION_DENIED, msg);
    return -1;
}

static void park(call *c, const char *job_id, uint64_t timeout_ms);
static void h_submit(call *c)
{
    char id[32];
    int existing = 0;
    if (do_submit(c, id, &existing))
        return;
    Cuzk__V1__SubmitProofResponse m = CUZK__V1__SUBMIT_PROOF_RESPONSE__INIT;
    m.job_id = id;
    m.existing = existing;
    set_resp(c, &m.base);
}

static void h_prove(call *c)
{
    char id[32];
    int existing = 0;
    if (do_submit(c, id, &existing))
        return;
    park(c, id, 0);
}

static void h_await(call *c)
{
    Cuzk__V1__AwaitProofRequest *q =
        (Cuzk__V1__AwaitProofRequest *)unpack(c, &cuzk__v1__await_proof_request__descriptor);
    if (!q)
        return;
    if (check_owner(c, q->job_id) == 0)
        park(c, q->job_id, q->timeout_ms);
    protobuf_c_message_free_unpacked(&q->base, NULL);
}

static void h_cancel(call *c)
{
    Cuzk__V1__CancelProofRequest *q =
        (Cuzk__V1__CancelProofRequest *)unpack(c, &cuzk__v1__cancel_proof_request__descriptor);
    if (!q)
        return;
    if (check_owner(c, q->job_id)) {
        protobuf_c_message_free_unpacked(&q->base, NULL);
        return;
    }
    int was = 0;
    cuzk_job_state st = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = c->srv->cluster ? cuzk_cluster_cancel(c->srv->cluster, q->job_id, &was, &st, &eb)
                                 : cuzk_engine_cancel(c->srv->engine, q->job_id, &was, &st, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        return;
    }
    Cuzk__V1__CancelProofResponse m = CUZK__V1__CANCEL_PROOF_RESPONSE__INIT;
    m.cancelled = was;
    m.state = (Cuzk__V1__JobState)st;
    set_resp(c, &m.base);
}

static void h_status(call *c)
{
    cuzk_engine_status s;
    cuzk_engine_get_status(c->srv->engine, &s);
    Cuzk__V1__GetStatusResponse m = CUZK__V1__GET_STATUS_RESPONSE__INIT;
    m.uptime_s = s.uptime_s;
    m.partition_workers = s.workers;
    m.busy_workers = s.busy_workers;
    m.jobs_queued = s.jobs_queued;
    m.jobs_in_flight = s.jobs_in_flight;
    m.partitions_pending = s.partitions_pending;
    m.jobs_completed = s.jobs_completed;
    m.jobs_failed = s.jobs_failed;
    m.jobs_cancelled = s.jobs_cancelled;
    m.budget_limit = s.budget.limit;
    m.budget_in_use = s.budget.in_use;
    m.budget_peak = s.budget.peak;
    m.keys_bytes = s.keys_bytes;
    /* The working budget's owners, then the proving keys by tier (host includes pinned). */
    Cuzk__V1__MemoryOwner mo[CUZK_OWNER__COUNT + 3], *mop[CUZK_OWNER__COUNT + 3];
    for (int o = 0; o < CUZK_OWNER__COUNT; o++) {
        cuzk__v1__memory_owner__init(&mo[o]);
        mo[o].owner = (char *)cuzk_owner_name((cuzk_owner)o);
        mo[o].in_use = s.budget.owner[o].in_use;
        mo[o].peak = s.budget.owner[o].peak;
        mop[o] = &mo[o];
    }
    uint64_t gpu_peak = 0;
    for (unsigned d = 0; d < s.n_devices; d++)
        gpu_peak += s.devices[d].key_peak;
    static char o_host[] = "keys_host", o_pinned[] = "keys_pinned", o_gpu[] = "keys_gpu";
    char *kown[3] = {o_host, o_pinned, o_gpu};
    uint64_t kuse[3] = {s.keys_bytes, s.keys_pinned_bytes, s.keys_gpu_bytes};
    uint64_t kpeak[3] = {s.keys_bytes, s.pinned_peak, gpu_peak};
    for (int k = 0; k < 3; k++) {
        Cuzk__V1__MemoryOwner *x = &mo[CUZK_OWNER__COUNT + k];
        cuzk__v1__memory_owner__init(x);
        x->owner = kown[k];
        x->in_use = kuse[k];
        x->peak = kpeak[k] > kuse[k] ? kpeak[k] : kuse[k];
        mop[CUZK_OWNER__COUNT + k] = x;
    }
    m.n_memory = CUZK_OWNER__COUNT + 3;
    m.memory = mop;
    cuzk_circuit_info ci[256];
    size_t n = cuzk_engine_circuits(c->srv->engine, ci, 256);
    if (n > 256)
        n = 256;
    Cuzk__V1__KeyStatus ks[256], *ksp[256];
    int32_t kgpus[256][32];
    for (size_t i = 0; i < n; i++) {
        cuzk__v1__key_status__init(&ks[i]);
        ks[i].circuit_id = ci[i].id;
        ks[i].curve = (char *)curve_name(ci[i].curve);
        ks[i].tier = (char *)cuzk_key_tier_name(ci[i].tier);
        ks[i].bytes = ci[i].bytes;
        ks[i].gpu_bytes = ci[i].gpu_bytes;
        ks[i].pinned_bytes = ci[i].pinned_bytes;
        ks[i].mapped_bytes = ci[i].mapped_bytes;
        size_t ng = 0;
        for (int d = 0; d < 32; d++)
            if (ci[i].gpu_mask & (1u << d))
                kgpus[i][ng++] = d;
        ks[i].n_gpus = ng;
        ks[i].gpus = kgpus[i];
        ks[i].holders = ci[i].holders;
        ks[i].n_vars = ci[i].n_vars;
        ks[i].domain_size = ci[i].domain_size;
        ks[i].note = (char *)ci[i].note;
        ksp[i] = &ks[i];
    }
    m.n_keys = n;
    m.keys = ksp;
    char *dev = c->srv->devices, dline[CUZK_MAX_DEVICES][160], *dlp[CUZK_MAX_DEVICES];
    Cuzk__V1__GpuStatus gs[CUZK_MAX_DEVICES], *gsp[CUZK_MAX_DEVICES];
    for (unsigned d = 0; d < s.n_devices; d++) {
        cuzk__v1__gpu_status__init(&gs[d]);
        gs[d].device = s.devices[d].id;
        gs[d].name = s.devices[d].name;
        gs[d].workers = s.devices[d].workers;
        gs[d].busy = s.devices[d].busy;
        gs[d].partitions = s.devices[d].partitions;
        gs[d].g2_partitions = s.devices[d].g2_partitions;
        gs[d].g2_only = s.devices[d].g2_only;
        gs[d].faults = s.devices[d].faults;
        gs[d].disabled = s.devices[d].disabled;
        gs[d].key_budget = s.devices[d].key_budget;
        gs[d].key_bytes = s.devices[d].key_bytes;
        gs[d].key_peak = s.devices[d].key_peak;
        gs[d].key_stages = s.devices[d].key_stages;
        gs[d].key_unstages = s.devices[d].key_unstages;
        gsp[d] = &gs[d];
        snprintf(dline[d], sizeof dline[d], "gpu%d: %s (%u workers%s)", s.devices[d].id,
                 s.devices[d].name, s.devices[d].workers, s.devices[d].disabled ? ", disabled" : "");
        dlp[d] = dline[d];
    }
    if (s.n_devices) {
        m.n_devices = s.n_devices;
        m.devices = dlp;
    } else {
        m.n_devices = 1;
        m.devices = &dev;
    }
    m.n_gpus = s.n_devices;
    m.gpus = gsp;
    m.gpu_faults = s.gpu_faults;
    m.gpu_retries = s.gpu_retries;
    m.cpu_fallbacks = s.cpu_fallbacks;
    m.witness_budget_limit = s.witness_budget.limit;
    m.witness_in_use = s.witness_budget.in_use;
    m.keys_from_cache = s.keys_from_cache;
    m.keys_gpu_bytes = s.keys_gpu_bytes;
    m.keys_pinned_bytes = s.keys_pinned_bytes;
    m.keys_mapped_bytes = s.keys_mapped_bytes;
    m.pinned_budget = s.pinned_budget;
    m.key_budget = s.key_budget;
    m.gpu_unstages = s.gpu_unstages;
    m.pinned_unpins = s.pinned_unpins;
    m.gpu_budget_cpu = s.gpu_budget_cpu;
    cuzk__rpc_status_memory(&m, gs, &s);
    cuzk__rpc_fleet *fleet = c->srv->cluster ? cuzk__rpc_fleet_fill(c->srv->cluster, &m) : NULL;
    set_resp(c, &m.base);
    cuzk__rpc_fleet_free(fleet);
}

static void h_metrics(call *c)
{
    char *t = cuzk_engine_metrics(c->srv->engine);
    if (!t) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    cuzk_rpc_server *s = c->srv;
    pthread_mutex_lock(&s->mu);
    unsigned pend = s->pending, parked = s->n_parked, workers = s->n_workers;
    pthread_mutex_unlock(&s->mu);
    char *all = NULL;
    if (asprintf(&all, "%s# HELP cuzk_rpc_calls_pending gRPC calls accepted and not yet "
                 "answered\n# TYPE cuzk_rpc_calls_pending gauge\ncuzk_rpc_calls_pending %u\n"
                 "# HELP cuzk_rpc_calls_parked calls waiting for a job to end (no thread "
                 "each)\n# TYPE cuzk_rpc_calls_parked gauge\ncuzk_rpc_calls_parked %u\n"
                 "# HELP cuzk_rpc_handler_threads handler threads started\n"
                 "# TYPE cuzk_rpc_handler_threads gauge\ncuzk_rpc_handler_threads %u\n",
                 t, pend, parked, workers) < 0)
        all = NULL;
    free(t);
    if (!all) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    Cuzk__V1__GetMetricsResponse m = CUZK__V1__GET_METRICS_RESPONSE__INIT;
    m.text = all;
    set_resp(c, &m.base);
    free(all);
}

static void h_list(call *c)
{
    cuzk_circuit_info ci[256];
    size_t n = cuzk_engine_circuits(c->srv->engine, ci, 256);
    if (n > 256)
        n = 256;
    Cuzk__V1__CircuitInfo ii[256], *iip[256];
    for (size_t i = 0; i < n; i++) {
        cuzk__v1__circuit_info__init(&ii[i]);
        ii[i].id = ci[i].id;
        ii[i].curve = (char *)curve_name(ci[i].curve);
        ii[i].zkey = ci[i].zkey;
        ii[i].n_vars = ci[i].n_vars;
        ii[i].n_public = ci[i].n_public;
        ii[i].domain_size = ci[i].domain_size;
        ii[i].resident = ci[i].resident;
        ii[i].generate = ci[i].generate;
        ii[i].note = (char *)ci[i].note;
        ii[i].default_priority = (Cuzk__V1__Priority)ci[i].priority;
        iip[i] = &ii[i];
    }
    Cuzk__V1__ListCircuitsResponse m = CUZK__V1__LIST_CIRCUITS_RESPONSE__INIT;
    m.n_circuits = n;
    m.circuits = iip;
    set_resp(c, &m.base);
}

static void h_preload(call *c)
{
    Cuzk__V1__PreloadKeyRequest *q =
        (Cuzk__V1__PreloadKeyRequest *)unpack(c, &cuzk__v1__preload_key_request__descriptor);
    if (!q)
        return;
    int was = 0;
    double ms = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_engine_preload(c->srv->engine, q->circuit_id, &was, &ms, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        return;
    }
    Cuzk__V1__PreloadKeyResponse m = CUZK__V1__PRELOAD_KEY_RESPONSE__INIT;
    m.was_loaded = was;
    m.load_ms = ms;
    set_resp(c, &m.base);
}

static void h_evict(call *c)
{
    Cuzk__V1__EvictKeyRequest *q =
        (Cuzk__V1__EvictKeyRequest *)unpack(c, &cuzk__v1__evict_key_request__descriptor);
    if (!q)
        return;
    int was = 0;
    uint64_t freed = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_engine_evict_key(c->srv->engine, q->circuit_id, &was, &freed, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        if (e == CUZK_INVALID_ARGUMENT)
            c->code = GRPC_STATUS_FAILED_PRECONDITION; /* held by a job: retry later */
        return;
    }
    Cuzk__V1__EvictKeyResponse m = CUZK__V1__EVICT_KEY_RESPONSE__INIT;
    m.was_loaded = was;
    m.bytes_freed = freed;
    set_resp(c, &m.base);
}

/* Each method with the least role that may call it (with tokens). */
static const struct {
    const char *name;
    void (*fn)(call *);
    cuzk_role role;
} METHODS[] = {
    {"SubmitProof", h_submit, CUZK_ROLE_PROVE}, {"AwaitProof", h_await, CUZK_ROLE_READ},
    {"Prove", h_prove, CUZK_ROLE_PROVE},        {"CancelProof", h_cancel, CUZK_ROLE_PROVE},
    {"GetStatus", h_status, CUZK_ROLE_READ},    {"GetMetrics", h_metrics, CUZK_ROLE_READ},
    {"ListCircuits", h_list, CUZK_ROLE_READ},   {"PreloadKey", h_preload, CUZK_ROLE_ADMIN},
    {"EvictKey", h_evict, CUZK_ROLE_ADMIN},
};

/* ------------------------------------------------------------------ call plumbing */

static void free_call(call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->req)
        grpc_byte_buffer_destroy(c->req);
    if (c->resp)
        grpc_byte_buffer_destroy(c->resp);
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    free(c);
}

static void unref_call(call *c)
{
    cuzk_rpc_server *s = c->srv;
    pthread_mutex_lock(&s->mu);
    int last = --c->refs == 0;
    if (last && c->begun)
        s->open_calls--;
    if (last)
        drop_call_slot(c);
    pthread_mutex_unlock(&s->mu);
    if (last)
        free_call(c);
}

static void request_next(cuzk_rpc_server *s)
{
    call *c = calloc(1, sizeof *c);
    if (!c) {
        CUZK_LOG_ERROR(TGT, "out of memory: cannot accept more calls");
        return;
    }
    c->srv = s;
    c->stage = ST_NEW;
    c->refs = 1;
    c->t_main = (call_tag){c, TAG_MAIN};
    c->t_close = (call_tag){c, TAG_CLOSE};
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    grpc_call_error ce = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq,
                                                  s->cq, &c->t_main);
    if (ce != GRPC_CALL_OK) {
        CUZK_LOG_ERROR(TGT, "grpc_server_request_call failed", "error=%d", (int)ce);
        free_call(c);
    }
}

static void send_reply(call *c)
{
    if (c->tu) {
        pthread_mutex_lock(&c->srv->mu);
        drop_call_slot(c);
        pthread_mutex_unlock(&c->srv->mu);
    }
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n++].data.send_initial_metadata.count = 0;
    if (c->code == GRPC_STATUS_OK && c->resp) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->resp;
    } else if (c->code == GRPC_STATUS_OK) {
        set_status(c, GRPC_STATUS_INTERNAL, "no reply");
    }
    if (!c->close_started) {
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    }
    if (!c->has_status_msg)
        set_status(c, c->code, "");
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.trailing_metadata_count = 0;
    ops[n].data.send_status_from_server.status = c->code;
    ops[n++].data.send_status_from_server.status_details = &c->status_msg;
    c->stage = ST_SEND;
    grpc_call_error ce = grpc_call_start_batch(c->call, ops, n, &c->t_main, NULL);
    if (ce != GRPC_CALL_OK) {
        CUZK_LOG_ERROR(TGT, "grpc_call_start_batch (reply) failed", "error=%d", (int)ce);
        unref_call(c); /* no completion will come */
    }
}

/* Answers an admitted call: it stops counting against daemon.max_pending_calls. */
static void reply(call *c)
{
    cuzk_rpc_server *s = c->srv;
    pthread_mutex_lock(&s->mu);
    if (c->admitted) {
        c->admitted = 0;
        s->pending--;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    send_reply(c);
}

static void *worker_main(void *arg);

/* Under s->mu. Starts a worker when none is idle and the pool is not full; otherwise the
 * call waits in the queue for the next free one. */
static void enqueue(cuzk_rpc_server *s, call *c)
{
    c->next = NULL;
    if (s->q_tail)
        s->q_tail->next = c;
    else
        s->q_head = c;
    s->q_tail = c;
    if (s->idle_workers == 0 && s->n_workers < s->max_workers &&
        pthread_create(&s->workers[s->n_workers], NULL, worker_main, s) == 0)
        s->n_workers++;
    pthread_cond_signal(&s->work_cv);
}

/* Under s->mu. */
static void unpark(cuzk_rpc_server *s, call *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        s->parked = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = c->prev = NULL;
    c->parked = 0;
    s->n_parked--;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int job_ended(cuzk_job_state st)
{
    return st == CUZK_JOB_COMPLETED || st == CUZK_JOB_FAILED || st == CUZK_JOB_CANCELLED;
}

/* The job's state now (waiting at most 1 ms): from the engine, or on a cluster node from the
 * cluster's database. */
static cuzk_err peek_job(cuzk_rpc_server *s, const char *job_id, cuzk_job_result *r,
                         cuzk_errbuf *eb)
{
    return s->cluster ? cuzk_cluster_await(s->cluster, job_id, 1, r, eb)
                      : cuzk_engine_await(s->engine, job_id, 1, r, eb);
}

/* The job's result now (waiting at most 1 ms), as the reply. 1: the job has ended or is
 * unknown (the reply is final), 0: still live. */
static int try_result(call *c, int final)
{
    cuzk_job_result r;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = peek_job(c->srv, c->job_id, &r, &eb);
    if (e) {
        set_err(c, e, &eb);
        return 1;
    }
    int done = job_ended(r.state);
    if (done || final)
        reply_result(c, &r);
    cuzk_job_result_free(&r);
    return done;
}

/* Waits for job_id without holding a thread: the call joins the parked list, from which the
 * engine's job-end hook, the timer (timeout_ms) or the client's cancellation takes it. The
 * caller's handler returns at once and must not touch c afterwards. */
static void park(call *c, const char *job_id, uint64_t timeout_ms)
{
    cuzk_rpc_server *s = c->srv;
    snprintf(c->job_id, sizeof c->job_id, "%s", job_id);
    pthread_mutex_lock(&s->mu);
    if (c->closed) {
        pthread_mutex_unlock(&s->mu);
        set_status(c, GRPC_STATUS_CANCELLED, "the client cancelled the call");
        reply(c);
        return;
    }
    c->deadline_ms = timeout_ms ? mono_ms() + timeout_ms : 0;
    c->parked = 1;
    c->prev = NULL;
    c->next = s->parked;
    if (s->parked)
        s->parked->prev = c;
    s->parked = c;
    s->n_parked++;
    c->refs++; /* this check's: the call may be answered and freed by another thread */
    if (c->deadline_ms)
        pthread_cond_signal(&s->timer_cv);
    pthread_mutex_unlock(&s->mu);
    /* The job may have ended before the call was parked, unseen by the hook. */
    cuzk_job_result r;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = peek_job(s, c->job_id, &r, &eb);
    int ended = e || job_ended(r.state);
    pthread_mutex_lock(&s->mu);
    int mine = ended && c->parked;
    if (mine)
        unpark(s, c);
    pthread_mutex_unlock(&s->mu);
    if (mine) {
        if (e)
            set_err(c, e, &eb);
        else
            reply_result(c, &r);
        reply(c);
    }
    if (!e)
        cuzk_job_result_free(&r);
    unref_call(c);
}

/* The engine's job-end hook (engine lock held): parked calls on that job go to the queue. */
static void on_job_end(void *ctx, const char *job_id)
{
    cuzk_rpc_server *s = ctx;
    pthread_mutex_lock(&s->mu);
    end_live_job(s, job_id);
    for (call *c = s->parked, *nx; c; c = nx) {
        nx = c->next;
        if (strcmp(c->job_id, job_id) == 0) {
            unpark(s, c);
            c->resume = 1;
            enqueue(s, c);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* Answers parked waits whose timeout_ms has passed with the job's current state. */
static void *timer_main(void *arg)
{
    cuzk_rpc_server *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        uint64_t now = mono_ms(), next = now + 1000;
        for (call *c = s->parked, *nx; c; c = nx) {
            nx = c->next;
            if (!c->deadline_ms)
                continue;
            if (c->deadline_ms <= now) {
                unpark(s, c);
                c->resume = 1;
                enqueue(s, c);
            } else if (c->deadline_ms < next) {
                next = c->deadline_ms;
            }
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + (next - now) * 1000000u;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&s->timer_cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* The caller's role from its `authorization: Bearer TOKEN` metadata, checked against the
 * method's least role (an unknown method needs a known token). Runs when the call arrives,
 * before its request message is read: a caller without a token costs no message buffer.
 * 0 when allowed; else -1 with UNAUTHENTICATED or PERMISSION_DENIED set. */
static int authorize(call *c)
{
    if (!c->srv->auth)
        return 0;
    cuzk_role need = CUZK_ROLE_READ;
    if (strncmp(c->method, SVC, strlen(SVC)) == 0)
        for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
            if (strcmp(c->method + strlen(SVC), METHODS[i].name) == 0)
                need = METHODS[i].role;
    c->role = CUZK_ROLE_NONE;
    for (size_t i = 0; i < c->md.count && c->role == CUZK_ROLE_NONE; i++) {
        const grpc_metadata *m = &c->md.metadata[i];
        if (grpc_slice_str_cmp(m->key, "authorization") == 0)
            c->role = cuzk_auth_check(c->srv->auth, (const char *)GRPC_SLICE_START_PTR(m->value),
                                      GRPC_SLICE_LENGTH(m->value), c->owner);
    }
    char msg[200];
    if (c->role == CUZK_ROLE_NONE) {
        set_status(c, GRPC_STATUS_UNAUTHENTICATED, "this daemon needs a token: send metadata "
                   "'authorization: Bearer TOKEN' with a token of its tokens_file");
    } else if (c->role < need) {
        snprintf(msg, sizeof msg, "%s needs role %s; this token has role %s",
                 c->method + strlen(SVC), cuzk_role_name(need), cuzk_role_name(c->role));
        set_status(c, GRPC_STATUS_PERMISSION_DENIED, msg);
    } else {
        return 0;
    }
    CUZK_LOG_DEBUG(TGT, "call refused", "method=%s code=%d owner=%s", c->method, (int)c->code,
                   c->owner[0] ? c->owner : "-");
    return -1;
}

static void dispatch(call *c)
{
    const char *m = c->method;
    if (strncmp(m, SVC, strlen(SVC)) == 0)
        for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
            if (strcmp(m + strlen(SVC), METHODS[i].name) == 0) {
                pthread_mutex_lock(&c->srv->mu);
                c->refs++; /* c outlives a park() answered meanwhile by another thread */
                pthread_mutex_unlock(&c->srv->mu);
                METHODS[i].fn(c);
                /* A handler that got as far as park() is answered from there. */
                if (!c->job_id[0])
                    reply(c);
                unref_call(c);
                return;
            }
    char msg[128];
    snprintf(msg, sizeof msg, "unknown method '%s'", m);
    set_status(c, GRPC_STATUS_UNIMPLEMENTED, msg);
    reply(c);
}

static void *worker_main(void *arg)
{
    cuzk_rpc_server *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->q_head && !s->stopping) {
            s->idle_workers++;
            pthread_cond_wait(&s->work_cv, &s->mu);
            s->idle_workers--;
        }
        call *c = s->q_head;
        if (!c)
            break;
        s->q_head = c->next;
        if (!s->q_head)
            s->q_tail = NULL;
        c->next = NULL;
        pthread_mutex_unlock(&s->mu);
        if (c->resume) {
            try_result(c, 1);
            reply(c);
        } else {
            dispatch(c);
        }
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void on_close(cuzk_rpc_server *s, call *c)
{
    pthread_mutex_lock(&s->mu);
    c->closed = 1;
    int take = c->parked && c->cancelled;
    if (take)
        unpark(s, c);
    pthread_mutex_unlock(&s->mu);
    if (take) {
        set_status(c, GRPC_STATUS_CANCELLED, "the client cancelled the call");
        reply(c);
    }
    unref_call(c);
}

static void on_event(cuzk_rpc_server *s, call *c, int ok)
{
    switch (c->stage) {
    case ST_NEW: {
        if (!ok) { /* server shutting down */
            free_call(c);
            return;
        }
        pthread_mutex_lock(&s->mu);
        int more = !s->shutting_down;
        s->open_calls++;
        c->begun = 1;
        pthread_mutex_unlock(&s->mu);
        if (more)
            request_next(s);
        size_t ml = GRPC_SLICE_LENGTH(c->details.method);
        if (ml >= sizeof c->method)
            ml = sizeof c->method - 1;
        memcpy(c->method, GRPC_SLICE_START_PTR(c->details.method), ml);
        c->method[ml] = 0;
        if (authorize(c) || take_call_slot(c)) {
            send_reply(c);
            return;
        }
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &c->req;
        c->stage = ST_RECV;
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_main, NULL) != GRPC_CALL_OK)
            unref_call(c);
        return;
    }
    case ST_RECV: {
        if (!ok || !c->req) {
            /* The client went away, or the message broke a limit (gRPC has already answered
             * RESOURCE_EXHAUSTED "Received message larger than max"). Close our side. */
            if (!c->has_status_msg)
                set_status(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
            send_reply(c);
            return;
        }
        /* The close batch reports a client that cancels or goes away while its call waits. */
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        op.data.recv_close_on_server.cancelled = &c->cancelled;
        pthread_mutex_lock(&s->mu);
        c->refs++;
        c->close_started = 1;
        pthread_mutex_unlock(&s->mu);
        if (grpc_call_start_batch(c->call, &op, 1, &c->t_close, NULL) != GRPC_CALL_OK) {
            pthread_mutex_lock(&s->mu);
            c->refs--;
            c->close_started = 0;
            pthread_mutex_unlock(&s->mu);
        }
        pthread_mutex_lock(&s->mu);
        int full = s->pending >= s->max_pending;
        if (!full) {
            s->pending++;
            c->admitted = 1;
            enqueue(s, c);
        }
        pthread_mutex_unlock(&s->mu);
        if (full) {
            char msg[160];
            snprintf(msg, sizeof msg, "%u calls are pending (daemon.max_pending_calls): retry "
                     "later", s->max_pending);
            set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
            send_reply(c);
        }
        return;
    }
    case ST_SEND:
    default:
        unref_call(c);
        return;
    }
}

static void *cq_main(void *arg)
{
    cuzk_rpc_server *s = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        if (ev.tag == &s->shutdown_tag) {
            pthread_mutex_lock(&s->mu);
            s->shutdown_done = 1;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        call_tag *t = ev.tag;
        if (t->kind == TAG_CLOSE)
            on_close(s, t->c);
        else
            on_event(s, t->c, ev.success);
    }
    return NULL;
}

/* ------------------------------------------------------------------ lifecycle */

static const char *unix_path(const char *listen)
{
    if (strncmp(listen, "unix:", 5) != 0)
        return NULL;
    return strncmp(listen + 5, "//", 2) == 0 ? listen + 7 : listen + 5;
}

/* A daemon that died leaves its unix socket file behind and the next bind fails: the file is
 * removed when it is a socket nobody accepts on (connect refused). -1 when a process still
 * accepts on it: gRPC would unlink the file and bind anew, leaving that process unreachable. */
static int check_unix_socket(const char *listen, cuzk_errbuf *eb)
{
    const char *path = unix_path(listen);
    struct stat st;
    struct sockaddr_un sa;
    if (!path || stat(path, &st) != 0 || !S_ISSOCK(st.st_mode) ||
        strlen(path) >= sizeof sa.sun_path)
        return 0;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        cuzk_errf(eb, CUZK_IO, "cannot listen on '%s': another process serves on that socket "
                  "(stop it, or choose another path)", listen);
        rc = -1;
    } else if (errno == ECONNREFUSED) {
        CUZK_LOG_INFO(TGT, "removing stale unix socket", "path=%s", path);
        unlink(path);
    }
    close(fd);
    return rc;
}

cuzk_err cuzk_rpc_start(cuzk_rpc_server **out, cuzk_engine *e, const cuzk_rpc_config *cfg,
                        char bound[256], cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_rpc_server *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    s->engine = e;
    s->cluster = cfg->cluster;
    s->devices = strdup(cfg->devices ? cfg->devices : "cpu");
    s->witness_fd = -1;
    s->auth = cfg->auth;
    if (check_unix_socket(cfg->listen, eb)) {
        free(s->devices);
        free(s);
        return CUZK_IO;
    }
    if (cfg->tls_cert && cfg->tls_cert[0]) {
        cuzk_err te = cuzk_rpc_tls_new(&s->tls, cfg->tls_cert, cfg->tls_key, cfg->tls_client_ca,
                                       eb);
        if (te) {
            free(s->devices);
            free(s);
            return te;
        }
    }
    if (cfg->witness_dir && cfg->witness_dir[0]) {
        s->witness_fd = open(cfg->witness_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int en = errno;
        s->witness_real = s->witness_fd >= 0 ? realpath(cfg->witness_dir, NULL) : NULL;
        s->witness_dir = strdup(cfg->witness_dir);
        if (s->witness_fd >= 0)
            en = errno;
        if (s->witness_fd < 0 || !s->witness_real || !s->witness_dir) {
            cuzk_err e = cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.witness_dir %s: %s",
                                   cfg->witness_dir,
                                   en == ENOTDIR ? "not a directory" : strerror(en));
            if (s->witness_fd >= 0)
                close(s->witness_fd);
            free(s->witness_real);
            free(s->witness_dir);
            free(s->devices);
            cuzk_rpc_tls_free(s->tls);
            free(s);
            return e;
        }
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_cond_init(&s->timer_cv, NULL);
    s->max_workers = cfg->handler_threads ? cfg->handler_threads : 64;
    s->max_pending = cfg->max_pending_calls ? cfg->max_pending_calls : 4096;
    s->max_calls_token = cfg->max_calls_per_token ? cfg->max_calls_per_token : 256;
    s->max_jobs_token = cfg->max_jobs_per_token ? cfg->max_jobs_per_token : 64;
    s->max_witness_token = cfg->max_witness_bytes_per_token;
    grpc_arg args[3];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)cfg->max_message_size;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = (int)cfg->max_message_size;
    /* gRPC sets SO_REUSEPORT by default: a second daemon on the same port would then share the
     * traffic silently instead of failing to start. */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = GRPC_ARG_ALLOW_REUSEPORT;
    args[2].value.integer = 0;
    grpc_channel_args ca = {3, args};
    s->cq = grpc_completion_queue_create_for_next(NULL);
    s->server = grpc_server_create(&ca, NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    grpc_server_credentials *cr = s->tls ? cuzk_rpc_tls_credentials(s->tls)
                                         : grpc_insecure_server_credentials_create();
    /* A unix socket is created with mode 0600 at most (the umask), then given socket_mode:
     * it is never open to more than the owner before its mode is set. */
    const char *upath = unix_path(cfg->listen);
    mode_t old_mask = upath ? umask(0177) : 0;
    int port = cr ? grpc_server_add_http2_port(s->server, cfg->listen, cr) : 0;
    int en = 0;
    if (upath) {
        umask(old_mask);
        unsigned mode = cfg->socket_mode ? cfg->socket_mode : 0600;
        if (port > 0 && chmod(upath, (mode_t)mode) != 0) {
            en = errno;
            port = 0;
        }
    }
    if (cr)
        grpc_server_credentials_release(cr);
    if (port <= 0) {
        grpc_server_destroy(s->server);
        grpc_completion_queue_shutdown(s->cq);
        grpc_completion_queue_destroy(s->cq);
        free(s->devices);
        free(s->witness_dir);
        free(s->witness_real);
        if (s->witness_fd >= 0)
            close(s->witness_fd);
        int tls = s->tls != NULL;
        cuzk_rpc_tls_free(s->tls);
        free(s);
        if (en)
            return cuzk_errf(eb, CUZK_IO, "daemon.socket_mode: chmod %s: %s", upath,
                             strerror(en));
        return cuzk_errf(eb, CUZK_IO, "cannot listen on '%s' (address in use or invalid%s)",
                         cfg->listen, tls ? ", or the TLS certificate and key do not match" : "");
    }
    const char *colon = strrchr(cfg->listen, ':');
    if (strncmp(cfg->listen, "unix:", 5) != 0 && colon)
        snprintf(bound, 256, "%.*s:%d", (int)(colon - cfg->listen), cfg->listen, port);
    else
        snprintf(bound, 256, "%s", cfg->listen);
    s->workers = calloc(s->max_workers, sizeof *s->workers);
    if (!s->workers || pthread_create(&s->timer_thread, NULL, timer_main, s) != 0) {
        grpc_server_start(s->server);
        cuzk_rpc_stop_accepting(s);
        cuzk_rpc_free(s);
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the handler pool");
    }
    s->timer_started = 1;
    cuzk_engine_set_job_end_hook(e, on_job_end, s);
    if (s->cluster)
        cuzk_cluster_set_job_end_hook(s->cluster, on_job_end, s);
    grpc_server_start(s->server);
    request_next(s);
    if (pthread_create(&s->cq_thread, NULL, cq_main, s) != 0) {
        cuzk_rpc_stop_accepting(s);
        cuzk_rpc_free(s);
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the completion-queue thread");
    }
    s->cq_started = 1;
    *out = s;
    return CUZK_OK;
}

void cuzk_rpc_stop_accepting(cuzk_rpc_server *s)
{
    pthread_mutex_lock(&s->mu);
    int first = !s->shutting_down;
    s->shutting_down = 1;
    pthread_mutex_unlock(&s->mu);
    if (first)
        grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
}

static int wait_until(cuzk_rpc_server *s, int (*pred)(cuzk_rpc_server *), uint64_t ms)
{
    gpr_timespec dl = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                   gpr_time_from_millis((int64_t)ms, GPR_TIMESPAN));
    struct timespec ts = {(time_t)dl.tv_sec, dl.tv_nsec};
    pthread_mutex_lock(&s->mu);
    while (!pred(s))
        if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0)
            break;
    int r = pred(s);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static int is_shut(cuzk_rpc_server *s) { return s->shutdown_done; }
static int none_pending(cuzk_rpc_server *s) { return s->pending == 0; }

void cuzk_rpc_finish(cuzk_rpc_server *s, uint64_t wait_ms)
{
    cuzk_rpc_stop_accepting(s);
    /* gRPC's shutdown also waits for calls whose request has not arrived yet and for idle
     * client connections: with no call open nothing is lost by closing those at once; with
     * calls open, say what the grace period waits for. */
    if (!wait_until(s, is_shut, 100)) {
        pthread_mutex_lock(&s->mu);
        unsigned open = s->open_calls, pend = s->pending;
        pthread_mutex_unlock(&s->mu);
        if (open == 0) {
            CUZK_LOG_INFO(TGT, "shutdown: no open calls; closing idle client connections");
            grpc_server_cancel_all_calls(s->server);
        } else {
            char m[160];
            snprintf(m, sizeof m, "shutdown: waiting up to %.1f s for %u open calls",
                     (double)wait_ms / 1000.0, open);
            CUZK_LOG_INFO(TGT, m, "open_calls=%u answering=%u", open, pend);
        }
    }
    if (!wait_until(s, is_shut, wait_ms > 100 ? wait_ms - 100 : 0)) {
        CUZK_LOG_WARN(TGT, "calls still open after the grace period: cancelling them");
        grpc_server_cancel_all_calls(s->server);
        wait_until(s, is_shut, 10000);
    }
    wait_until(s, none_pending, 10000);
}

void cuzk_rpc_free(cuzk_rpc_server *s)
{
    if (!s)
        return;
    cuzk_engine_set_job_end_hook(s->engine, NULL, NULL);
    if (s->cluster)
        cuzk_cluster_set_job_end_hook(s->cluster, NULL, NULL);
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->work_cv);
    pthread_cond_broadcast(&s->timer_cv);
    unsigned nw = s->n_workers;
    pthread_mutex_unlock(&s->mu);
    for (unsigned i = 0; i < nw; i++)
        pthread_join(s->workers[i], NULL);
    if (s->timer_started)
        pthread_join(s->timer_thread, NULL);
    if (s->cq_started) {
        grpc_completion_queue_shutdown(s->cq);
        pthread_join(s->cq_thread, NULL);
    }
    grpc_server_destroy(s->server);
    grpc_completion_queue_destroy(s->cq);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->work_cv);
    pthread_cond_destroy(&s->timer_cv);
    pthread_mutex_destroy(&s->mu);
    free(s->workers);
    free(s->devices);
    free(s->witness_dir);
    free(s->witness_real);
    if (s->witness_fd >= 0)
        close(s->witness_fd);
    for (unsigned b = 0; b < LIVE_BUCKETS; b++)
        for (live_job *j = s->live[b], *nx; j; j = nx) {
            nx = j->next;
            free(j);
        }
    for (token_use *t = s->tokens, *nx; t; t = nx) {
        nx = t->next;
        free(t);
    }
    cuzk_rpc_tls_free(s->tls); /* after the server: its credentials fetch from it */
    free(s);
}

cuzk_err cuzk_rpc_reload_tls(cuzk_rpc_server *s, int *reloaded, cuzk_errbuf *eb)
{
    *reloaded = 0;
    if (!s->tls)
        return CUZK_OK;
    cuzk_err e = cuzk_rpc_tls_reload(s->tls, eb);
    *reloaded = !e;
    return e;
}
