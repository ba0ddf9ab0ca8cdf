/* The proving engine: see engine.h for the contract. One mutex (e->mu) guards the job list,
 * the circuits' bookkeeping and the counters; proving, key loading and budget waits happen
 * outside it. Key loads are serialised by e->load_mu (one key at a time: a load is already
 * parallel inside, and two loads at once would double the peak). */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/log.h"
#include "gpu/gpu.h"
#include "msm/msm.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/parallel.h"

#define TGT "cuzk_engine"

/* ------------------------------------------------------------------ names */

const char *cuzk_priority_name(cuzk_priority p)
{
    switch (p) {
    case CUZK_PRIO_LOW: return "low";
    case CUZK_PRIO_NORMAL: return "normal";
    case CUZK_PRIO_HIGH: return "high";
    case CUZK_PRIO_CRITICAL: return "critical";
    default: return "default";
    }
}

cuzk_err cuzk_priority_parse(const char *s, cuzk_priority *out, cuzk_errbuf *eb)
{
    static const char *names[] = {"low", "normal", "high", "critical"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0) {
            *out = (cuzk_priority)(i + 1);
            return CUZK_OK;
        }
    return cuzk_errf(eb, CUZK_BAD_CONFIG,
                     "priority '%s' is not one of low, normal, high, critical", s);
}

const char *cuzk_job_state_name(cuzk_job_state s)
{
    switch (s) {
    case CUZK_JOB_QUEUED: return "queued";
    case CUZK_JOB_RUNNING: return "running";
    case CUZK_JOB_COMPLETED: return "completed";
    case CUZK_JOB_FAILED: return "failed";
    case CUZK_JOB_CANCELLED: return "cancelled";
    default: return "unknown";
    }
}

const char *cuzk_key_tier_name(cuzk_key_tier t)
{
    switch (t) {
    case CUZK_TIER_MAPPED: return "mapped";
    case CUZK_TIER_HOST: return "host";
    case CUZK_TIER_PINNED: return "pinned";
    case CUZK_TIER_GPU: return "gpu";
    default: return "cold";
    }
}

/* ------------------------------------------------------------------ types */

typedef struct {
    char *id, *zkey;
    int preload;
    cuzk_priority priority;
    cuzk_curve curve;
    uint32_t n8q, n_vars, n_public, domain_size;
    cuzk_pk *pk;         /* NULL when cold; written under e->mu (and e->load_mu) */
    uint64_t bytes;      /* cuzk_pk_bytes when resident */
    unsigned holders;    /* live jobs + preload calls in progress */
    uint64_t last_used;  /* LRU tick */
    uint64_t part_bytes; /* working set per partition */
    /* Residency tiers (engine.h "Key residency tiers"), all under e->mu. */
    uint64_t gbytes;     /* device bytes of one staged copy (set when loaded) */
    unsigned stage_parts; /* CUZK_PK_STAGE_* of that copy (key_stage_parts) */
    uint64_t pbytes;     /* page-locked bytes (0: not pinned) */
    uint32_t gmask;      /* device indices the key is staged on (reserved before the upload) */
    unsigned ghold[CUZK_MAX_DEVICES]; /* GPU stages using the key on device d now */
    uint64_t glast[CUZK_MAX_DEVICES]; /* LRU tick of its last GPU stage on device d */
    int mapped;          /* a valid cache file was found (the tier while not resident) */
    uint64_t cache_bytes; /* its size */
} circuit;

typedef struct part {
    uint8_t *wtns;       /* the .wtns bytes (freed when the partition ends) */
    size_t wtns_len;
    cuzk_part_result res;
} part;

typedef struct job {
    struct job *prev, *next; /* e->jobs, submission order */
    uint64_t seq;            /* submission order */
    char id[32];
    char *request_id;        /* "" when none */
    uint64_t fingerprint;    /* of the witnesses, to tell a reused request_id apart */
    circuit *circ;
    cuzk_priority prio;
    cuzk_job_state state;
    int admitted, cancel;    /* cancel: read by budget waits (atomic) */
    size_t n_parts, next_part, running, done;
    part *parts;
    cuzk_err err;
    char *error;
    double t_submit, t_start, t_end, synth_ms, prove_ms, wait_ms, gpu_ms, g2_ms;
    uint64_t done_seq;
    unsigned waiters;
    pthread_cond_t cv;       /* signalled when the job ends */
} job;

/* A device in use by GPU workers. */
typedef struct {
    int id; /* CUDA device number (simulated: the index) */
    char name[64];
    unsigned workers, busy, fault_streak;
    uint64_t partitions, faults;
    int disabled;
    /* GPU tier: staged key bytes and their budget; tier_waiters: a GPU worker waits for room
     * (at most one: the others wait behind it, see gpu_acquire). */
    uint64_t kbudget, kbytes, kpeak, kstages, kunstages;
    unsigned tier_waiters;
    /* The automatic budget's terms (setup_tiers): free memory at start, the margin, one GPU
     * worker's scratch; and the workers' batch-affine setting when fitted (fit_workers; chunk
     * 0: the default). */
    uint64_t mfree, mmargin, wscratch, ba_chunk;
    int ba_quads;
} gdev;

/* A partition's GPU stage, queued by its partition worker (which owns the item, on its stack,
 * and waits for done). tried: bit per device index that faulted on it. */
typedef struct gitem {
    struct gitem *next;
    job *j;
    size_t pi;
    cuzk_prove_state *ps;
    uint32_t tried;
    int done, g1_ok, g2_ok, dev, g2_gpu;
    cuzk_err err;
    cuzk_errbuf eb;
    double ms;
} gitem;

typedef struct {
    cuzk_engine *e;
    unsigned dev; /* index into e->devs */
    pthread_t tid;
} gworker;

struct cuzk_engine {
    cuzk_engine_config cfg;
    cuzk_budget *wbudget;     /* witness bytes of accepted jobs */
    gdev devs[CUZK_MAX_DEVICES];
    unsigned n_devs;
    gworker *gworkers;
    unsigned n_gworkers;
    gitem *gq_head, *gq_tail;
    pthread_cond_t gpu_cv;    /* GPU work queued, or stopping */
    pthread_cond_t gdone_cv;  /* a GPU stage ended */
    int gpu_stopping;
    uint64_t gpu_faults, gpu_retries, cpu_fallbacks, keys_from_cache, g2_gpu_parts;
    circuit *circs;
    size_t n_circs;
    cuzk_budget *budget;
    pthread_mutex_t mu, load_mu;
    pthread_cond_t work_cv;  /* a partition may be available, or stopping */
    pthread_cond_t idle_cv;  /* a job ended or a partition ended */
    cuzk_job_end_fn job_end_fn; /* cuzk_engine_set_job_end_hook */
    void *job_end_ctx;
    pthread_t *workers;
    unsigned n_workers, busy;
    int accepting, stopping;
    job *head, *tail;
    size_t n_finished;
    uint64_t next_seq, next_done_seq, lru_tick;
    uint64_t id_salt;
    double t0;
    /* counters */
    uint64_t submitted, completed, failed, cancelled, parts_proved, parts_failed, keys_loaded,
        keys_evicted;
    double prove_ms_total;
    /* Key tiers: pinned bytes and budget (pin_ctx: a context to page-lock with, real GPUs),
     * tier_cv: a GPU stage released its key, or a GPU worker got room. */
    uint64_t pin_budget, pin_bytes, pin_peak, pins, unpins, gpu_budget_cpu;
    unsigned stage_parts; /* CUZK_PK_STAGE_*: B in G2 when g2 may run on the GPU, the rows
                           * unless synthesis stays on the CPU (keys may drop the rows) */
    cuzk_gpu_ctx *pin_ctx;
    pthread_mutex_t pin_mu;
    pthread_cond_t tier_cv;
};

/* ------------------------------------------------------------------ helpers */

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort(); /* small strings only; the engine cannot continue without memory for them */
    return d;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t cuzk_engine_partition_bytes(uint32_t n_vars, uint32_t domain_size, uint32_t n8q,
                                     unsigned threads)
{
    uint64_t N = domain_size, n = n_vars > N ? n_vars : N;
    uint64_t g2 = 4ull * n8q;
    unsigned c = bn254_g1_msm_window((size_t)n, threads ? threads : 1);
    if (c < 1)
        c = 1;
    uint64_t buckets = (uint64_t)(threads ? threads : 1) * (1ull << (c - 1)) * 2 * g2;
    return 32ull * (n_vars + 4 * N) + 32ull * N + 8 * n + n * g2 + buckets;
}

static circuit *find_circuit(cuzk_engine *e, const char *id)
{
    for (size_t i = 0; i < e->n_circs; i++)
        if (strcmp(e->circs[i].id, id) == 0)
            return &e->circs[i];
    return NULL;
}

static job *find_job(cuzk_engine *e, const char *id)
{
    for (job *j = e->head; j; j = j->next)
        if (strcmp(j->id, id) == 0)
            return j;
    return NULL;
}

static job *find_request(cuzk_engine *e, const char *rid)
{
    for (job *j = e->head; j; j = j->next)
        if (j->request_id[0] && strcmp(j->request_id, rid) == 0)
            return j;
    return NULL;
}

static int job_live(const job *j)
{
    return j->state == CUZK_JOB_QUEUED || j->state == CUZK_JOB_RUNNING;
}

static void free_job(job *j)
{
    for (size_t i = 0; i < j->n_parts; i++) {
        free(j->parts[i].wtns);
        free(j->parts[i].res.proof_json);
        free(j->parts[i].res.public_json);
    }
    free(j->parts);
    free(j->request_id);
    free(j->error);
    pthread_cond_destroy(&j->cv);
    free(j);
}

static void unlink_job(cuzk_engine *e, job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        e->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        e->tail = j->prev;
}

/* Forgets the oldest finished jobs nobody waits on beyond retain_jobs. Under e->mu. */
static void trim_finished(cuzk_engine *e)
{
    for (job *j = e->head; j && e->n_finished > e->cfg.retain_jobs;) {
        job *nx = j->next;
        if (!job_live(j) && j->waiters == 0) {
            unlink_job(e, j);
            free_job(j);
            e->n_finished--;
        }
        j = nx;
    }
}

/* Admits queued jobs up to max_jobs_in_flight, best priority first, FIFO within a class.
 * Under e->mu. */
static void admit(cuzk_engine *e)
{
    for (;;) {
        unsigned in_flight = 0;
        job *best = NULL;
        for (job *j = e->head; j; j = j->next) {
            if (!job_live(j))
                continue;
            if (j->admitted)
                in_flight++;
            else if (!best || j->prio > best->prio)
                best = j; /* list is in submission order: first of the best class wins */
        }
        if (!best || (e->cfg.max_jobs_in_flight && in_flight >= e->cfg.max_jobs_in_flight))
            return;
        best->admitted = 1;
        pthread_cond_broadcast(&e->work_cv);
    }
}

/* Frees a partition's .wtns copy and returns its bytes to the witness budget. */
static void drop_wtns(cuzk_engine *e, part *p)
{
    if (!p->wtns)
        return;
    free(p->wtns);
    p->wtns = NULL;
    cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, p->wtns_len);
}

/* Ends a job (under e->mu): frees what it no longer needs, releases its key hold. */
static void finish_job(cuzk_engine *e, job *j, cuzk_job_state st, cuzk_err err, const char *msg)
{
    j->state = st;
    j->err = err;
    free(j->error);
    j->error = xstrdup(msg);
    j->t_end = cuzk__now_ms();
    j->done_seq = ++e->next_done_seq;
    for (size_t i = 0; i < j->n_parts; i++) {
        drop_wtns(e, &j->parts[i]);
        if (st != CUZK_JOB_COMPLETED) {
            free(j->parts[i].res.proof_json);
            free(j->parts[i].res.public_json);
            j->parts[i].res.proof_json = j->parts[i].res.public_json = NULL;
        }
    }
    j->circ->holders--;
    j->circ->last_used = ++e->lru_tick;
    if (st == CUZK_JOB_COMPLETED)
        e->completed++;
    else if (st == CUZK_JOB_FAILED)
        e->failed++;
    else
        e->cancelled++;
    e->n_finished++;
    /* One conversion per field: a "%s" that appended " error=..." became part of total_ms. */
    if (msg && msg[0])
        CUZK_LOG_INFO(TGT, "job ended", "job=%s circuit=%s state=%s partitions=%zu total_ms=%.1f "
                      "error=%s", j->id, j->circ->id, cuzk_job_state_name(st), j->n_parts,
                      j->t_end - j->t_submit, msg);
    else
        CUZK_LOG_INFO(TGT, "job ended", "job=%s circuit=%s state=%s partitions=%zu total_ms=%.1f",
                      j->id, j->circ->id, cuzk_job_state_name(st), j->n_parts,
                      j->t_end - j->t_submit);
    pthread_cond_broadcast(&j->cv);
    pthread_cond_broadcast(&e->idle_cv);
    if (e->job_end_fn)
        e->job_end_fn(e->job_end_ctx, j->id);
    admit(e);
    trim_finished(e);
}

/* ------------------------------------------------------------------ keys */

/* ---- tiers: pinned host and GPU (engine.h "Key residency tiers") */

static int real_gpus(const cuzk_engine *e)
{
    return e->n_devs && !e->cfg.test_fake_gpus;
}

static cuzk_key_tier tier_of(const circuit *c)
{
    if (c->pk)
        return c->gmask ? CUZK_TIER_GPU : c->pbytes ? CUZK_TIER_PINNED : CUZK_TIER_HOST;
    return c->mapped ? CUZK_TIER_MAPPED : CUZK_TIER_COLD;
}

/* Bytes of the arrays a stage uploads (what pinning page-locks). */
static uint64_t pin_size(cuzk_pk *pk)
{
    void *p[CUZK_PK_GPU_ARRAYS];
    size_t l[CUZK_PK_GPU_ARRAYS], n = cuzk_pk_gpu_arrays(pk, p, l);
    uint64_t b = 0;
    for (size_t i = 0; i < n; i++)
        b += l[i];
    return b;
}

/* Page-locks (pin = 1) or unlocks a key's uploaded arrays. Simulated GPUs: accounting only. */
static cuzk_err pin_arrays(cuzk_engine *e, cuzk_pk *pk, int pin, cuzk_errbuf *eb)
{
    if (!real_gpus(e) || !e->pin_ctx)
        return CUZK_OK;
    void *p[CUZK_PK_GPU_ARRAYS];
    size_t l[CUZK_PK_GPU_ARRAYS], n = cuzk_pk_gpu_arrays(pk, p, l);
    cuzk_err err = CUZK_OK;
    pthread_mutex_lock(&e->pin_mu);
    for (size_t i = 0; i < n; i++) {
        if (!l[i])
            continue;
        if (!pin) {
            cuzk_gpu_unpin(e->pin_ctx, p[i]);
        } else if ((err = cuzk_gpu_pin(e->pin_ctx, p[i], l[i], eb))) {
            while (i-- > 0)
                if (l[i])
                    cuzk_gpu_unpin(e->pin_ctx, p[i]);
            break;
        }
    }
    pthread_mutex_unlock(&e->pin_mu);
    return err;
}

/* Drops c's pinning. Under e->mu. */
static void unpin_key(cuzk_engine *e, circuit *c)
{
    if (!c->pbytes)
        return;
    if (c->pk)
        pin_arrays(e, c->pk, 0, NULL);
    e->pin_bytes -= c->pbytes;
    c->pbytes = 0;
}

/* Pins a freshly loaded key (not yet published in c->pk, so nothing else reads its arrays
 * while they are page-locked) if it fits in pinned_budget, unpinning the least recently used
 * pinned keys no job holds first. Under e->load_mu, not e->mu. */
static void pin_new_key(cuzk_engine *e, circuit *c, cuzk_pk *pk)
{
    if (!e->pin_budget)
        return;
    uint64_t need = pin_size(pk);
    pthread_mutex_lock(&e->mu);
    if (need > e->pin_budget) {
        pthread_mutex_unlock(&e->mu);
        CUZK_LOG_INFO(TGT, "key not pinned: larger than the pinned budget", "circuit=%s "
                      "bytes=%" PRIu64 " pinned_budget=%" PRIu64, c->id, need, e->pin_budget);
        return;
    }
    while (e->pin_bytes + need > e->pin_budget) {
        circuit *v = NULL;
        for (size_t i = 0; i < e->n_circs; i++) {
            circuit *x = &e->circs[i];
            if (x != c && x->pbytes && x->pk && x->holders == 0 &&
                (!v || x->last_used < v->last_used))
                v = x;
        }
        if (!v)
            break;
        CUZK_LOG_INFO(TGT, "unpinning key (LRU, pinned budget)", "circuit=%s bytes=%" PRIu64,
                      v->id, v->pbytes);
        unpin_key(e, v);
        e->unpins++;
    }
    int fits = e->pin_bytes + need <= e->pin_budget;
    if (fits) {
        e->pin_bytes += need;
        if (e->pin_bytes > e->pin_peak)
            e->pin_peak = e->pin_bytes;
        c->pbytes = need;
    }
    pthread_mutex_unlock(&e->mu);
    if (!fits) {
        CUZK_LOG_INFO(TGT, "key not pinned: the pinned budget is held by keys in use",
                      "circuit=%s bytes=%" PRIu64, c->id, need);
        return;
    }
    cuzk_errbuf eb = {{0}};
    double t = cuzk__now_ms();
    cuzk_err err = pin_arrays(e, pk, 1, &eb);
    pthread_mutex_lock(&e->mu);
    if (err) {
        e->pin_bytes -= need;
        c->pbytes = 0;
    } else {
        e->pins++;
    }
    pthread_mutex_unlock(&e->mu);
    if (err)
        CUZK_LOG_WARN(TGT, "cannot pin the key: left in pageable memory", "circuit=%s error=%s",
                      c->id, eb.msg);
    else
        CUZK_LOG_INFO(TGT, "key pinned", "circuit=%s bytes=%" PRIu64 " ms=%.1f", c->id, need,
                      cuzk__now_ms() - t);
}

/* Frees c's staged copy on device index d. Under e->mu; no stage holds it there. */
static void gpu_unstage(cuzk_engine *e, circuit *c, unsigned d)
{
    if (!(c->gmask & (1u << d)))
        return;
    if (real_gpus(e) && c->pk)
        cuzk_pk_gpu_unstage(c->pk, e->devs[d].id);
    c->gmask &= ~(1u << d);
    e->devs[d].kbytes -= c->gbytes;
}

/* Reserves room for c's staged copy on device d if it is not staged there: unstages the least
 * recently used staged keys that no stage holds on d (keys without live jobs first) until it
 * fits. Returns 1 when c is staged or reserved (*upload = 1: the caller uploads it), 0 when
 * it does not fit now. Under e->mu. */
static int gpu_reserve(cuzk_engine *e, circuit *c, unsigned d, int *upload)
{
    gdev *g = &e->devs[d];
    uint32_t bit = 1u << d;
    *upload = 0;
    if (c->gmask & bit)
        return 1;
    if (c->gbytes > g->kbudget)
        return 0;
    while (g->kbytes + c->gbytes > g->kbudget) {
        circuit *v = NULL;
        for (size_t i = 0; i < e->n_circs; i++) {
            circuit *x = &e->circs[i];
            if (x == c || !(x->gmask & bit) || x->ghold[d])
                continue;
            if (!v || (x->holders == 0) > (v->holders == 0) ||
                ((x->holders == 0) == (v->holders == 0) && x->glast[d] < v->glast[d]))
                v = x;
        }
        if (!v)
            return 0;
        CUZK_LOG_INFO(TGT, "unstaging key (LRU, GPU budget)", "circuit=%s device=%d bytes=%"
                      PRIu64 " live_jobs=%u", v->id, g->id, v->gbytes, v->holders);
        gpu_unstage(e, v, d);
        g->kunstages++;
    }
    c->gmask |= bit;
    g->kbytes += c->gbytes;
    if (g->kbytes > g->kpeak)
        g->kpeak = g->kbytes;
    g->kstages++;
    *upload = 1;
    return 1;
}

/* The log line of a key staged on device `dev` (an id), naming the point sets whose fixed-base
 * tables did not fit (they stay plain: their MSMs run without tables, ~10% slower). */
static void log_staged(const circuit *c, int dev, double ms)
{
    char plain[32] = "";
    if (c->stage_parts & CUZK_PK_STAGE_TABLES)
        cuzk_pk_set_names(cuzk_pk_gpu_no_tables(c->pk, dev), plain, sizeof plain);
    if (plain[0])
        CUZK_LOG_WARN(TGT, "key staged on the GPU, some point sets without tables (no room)",
                      "circuit=%s device=%d bytes=%" PRIu64 " ms=%.1f no_tables=%s", c->id, dev,
                      c->gbytes, ms, plain);
    else
        CUZK_LOG_INFO(TGT, "key staged on the GPU", "circuit=%s device=%d bytes=%" PRIu64
                      " ms=%.1f", c->id, dev, c->gbytes, ms);
}

/* Holds c staged on device d for a GPU stage (see gpu_reserve), waiting while the keys in the
 * way are held by running stages. While one GPU worker of d waits for room, the others wait
 * behind it before taking any hold on d, so the keys it waits for are released and it is not
 * starved. Returns 0 (without waiting) when c is larger than d's budget. Under e->mu. */
static int gpu_acquire(cuzk_engine *e, circuit *c, unsigned d, int *upload)
{
    gdev *g = &e->devs[d];
    int waiting = 0;
    *upload = 0;
    if (c->gbytes > g->kbudget)
        return 0;
    for (;;) {
        if (waiting || !g->tier_waiters) {
            if (gpu_reserve(e, c, d, upload))
                break;
            if (!waiting) {
                waiting = 1;
                g->tier_waiters++;
            }
        }
        pthread_cond_wait(&e->tier_cv, &e->mu);
    }
    if (waiting) {
        g->tier_waiters--;
        pthread_cond_broadcast(&e->tier_cv);
    }
    c->ghold[d]++;
    return 1;
}

static void gpu_release(cuzk_engine *e, circuit *c, unsigned d)
{
    c->ghold[d]--;
    c->glast[d] = ++e->lru_tick;
    pthread_cond_broadcast(&e->tier_cv);
}

/* Whether c's cache file is valid now (header, length, the zkey's identity); *bytes: its size.
 * No lock needed (reads only c's constant fields). */
static int cache_valid(const cuzk_engine *e, const circuit *c, uint64_t *bytes)
{
    *bytes = 0;
    if (!e->cfg.key_cache)
        return 0;
    char *p = cuzk_pk_cache_path(c->zkey, e->cfg.key_cache_dir);
    cuzk_errbuf eb = {{0}};
    int ok = p && cuzk_pk_cache_check(p, c->zkey, bytes, &eb) == CUZK_OK;
    free(p);
    if (!ok)
        *bytes = 0;
    return ok;
}

/* Takes c's key out of the host tier (and so out of the pinned and GPU tiers): unpins it,
 * forgets its staged copies (cuzk_pk_free frees them), and notes whether it is now "mapped".
 * Returns the key for the caller to free. Under e->mu; nobody holds c. */
static cuzk_pk *drop_key(cuzk_engine *e, circuit *c)
{
    cuzk_pk *pk = c->pk;
    unpin_key(e, c);
    for (unsigned d = 0; d < e->n_devs; d++)
        if (c->gmask & (1u << d))
            e->devs[d].kbytes -= c->gbytes;
    c->gmask = 0;
    c->pk = NULL;
    c->bytes = 0;
    c->mapped = cache_valid(e, c, &c->cache_bytes);
    e->keys_evicted++;
    return pk;
}

/* Evicts least recently used unheld keys until `need` more bytes fit in key_budget.
 * Under e->mu and e->load_mu. */
static void make_key_room(cuzk_engine *e, uint64_t need, const circuit *keep)
{
    if (!e->cfg.key_budget)
        return;
    for (;;) {
        uint64_t used = 0;
        circuit *lru = NULL;
        for (size_t i = 0; i < e->n_circs; i++) {
            circuit *c = &e->circs[i];
            used += c->bytes;
            if (c->pk && c->holders == 0 && c != keep && (!lru || c->last_used < lru->last_used))
                lru = c;
        }
        if (used + need <= e->cfg.key_budget || !lru)
            return;
        CUZK_LOG_INFO(TGT, "evicting key (LRU)", "circuit=%s bytes=%" PRIu64, lru->id, lru->bytes);
        cuzk_pk_free(drop_key(e, lru));
        CUZK_LOG_INFO(TGT, "key tier", "circuit=%s tier=%s", lru->id,
                      cuzk_key_tier_name(tier_of(lru)));
    }
}

/* The GPU backend's name for circuit c's curve. */
static cuzk_gpu_curve gpu_curve(const circuit *c)
{
    return c->curve == CUZK_CURVE_BLS12_381 ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
}

/* Device bytes of circuit c's point sets staged without tables (A, B1, C, H; B2 when staged),
 * each with its map of points at infinity (cuzk_gpu_tables_bytes with max_copies 1), from its
 * dimensions, before its key is loaded. */
static uint64_t plain_points_bytes(const cuzk_engine *e, const circuit *c)
{
    const cuzk_gpu_curve gc = gpu_curve(c);
    return 3 * cuzk_gpu_tables_bytes(gc, CUZK_GPU_G1, c->n_vars, 1) +
           cuzk_gpu_tables_bytes(gc, CUZK_GPU_G1, c->domain_size, 1) +
           ((e->stage_parts & CUZK_PK_STAGE_G2)
                ? cuzk_gpu_tables_bytes(gc, CUZK_GPU_G2, c->n_vars, 1)
                : 0);
}

/* What a key's staged copy holds: the engine's stage_parts, less the A and B rows when only
 * the copy without them fits some device's GPU budget (that key's partitions then synthesize
 * on the CPU and upload a, b, c, rather than every GPU stage of it running on the CPU).
 * *gbytes: the copy's device bytes. */
static unsigned key_stage_parts(const cuzk_engine *e, const circuit *c, cuzk_pk *pk,
                                uint64_t *gbytes)
{
    unsigned parts = e->stage_parts;
    uint64_t b = cuzk_pk_gpu_bytes(pk, parts), kmax = 0;
    for (unsigned d = 0; d < e->n_devs; d++)
        if (!e->devs[d].disabled && e->devs[d].kbudget > kmax)
            kmax = e->devs[d].kbudget;
    /* The tables go first: they only make the MSMs faster. They are kept only when the key
     * with them fits beside the other circuits' point sets (so that keys that fit a device
     * together without tables do not evict each other for them). */
    uint64_t others = 0;
    for (size_t i = 0; i < e->n_circs; i++)
        if (&e->circs[i] != c)
            others += plain_points_bytes(e, &e->circs[i]);
    if ((parts & CUZK_PK_STAGE_TABLES) && e->n_devs && (b > kmax || others > kmax - b)) {
        uint64_t nb = cuzk_pk_gpu_bytes(pk, parts & ~CUZK_PK_STAGE_TABLES);
        CUZK_LOG_INFO(TGT, "key staged without fixed-base tables (they would not fit the GPU "
                      "budget beside the other circuits' point sets)", "circuit=%s bytes=%" PRIu64
                      " with_tables=%" PRIu64 " others=%" PRIu64 " gpu_budget=%" PRIu64, c->id,
                      nb, b, others, kmax);
        parts &= ~CUZK_PK_STAGE_TABLES;
        b = nb;
    }
    if ((parts & CUZK_PK_STAGE_ROWS) && e->n_devs && b > kmax) {
        uint64_t nb = cuzk_pk_gpu_bytes(pk, parts & ~CUZK_PK_STAGE_ROWS);
        if (nb <= kmax) {
            CUZK_LOG_INFO(TGT, "key staged without its A and B rows (they would not fit the "
                          "GPU budget): its partitions synthesize on the CPU", "circuit=%s "
                          "bytes=%" PRIu64 " with_rows=%" PRIu64 " gpu_budget=%" PRIu64,
                          c->id, nb, b, kmax);
            parts &= ~CUZK_PK_STAGE_ROWS;
            b = nb;
        }
    }
    *gbytes = b;
    return parts;
}

/* Makes c's key resident. The caller holds c (holders > 0) so nobody evicts it meanwhile.
 * Called without e->mu. */
static cuzk_err ensure_key(cuzk_engine *e, circuit *c, int *was_loaded, double *ms,
                           cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->load_mu);
    pthread_mutex_lock(&e->mu);
    int loaded = c->pk != NULL;
    pthread_mutex_unlock(&e->mu);
    if (was_loaded)
        *was_loaded = loaded;
    if (ms)
        *ms = 0;
    if (loaded) {
        pthread_mutex_unlock(&e->load_mu);
        return CUZK_OK;
    }
    double t0 = cuzk__now_ms();
    CUZK_LOG_INFO(TGT, "loading proving key", "circuit=%s zkey=%s", c->id, c->zkey);
    cuzk_pk *pk = NULL;
    cuzk_err err = CUZK_OK;
    char *cpath = e->cfg.key_cache ? cuzk_pk_cache_path(c->zkey, e->cfg.key_cache_dir) : NULL;
    const char *source = "zkey";
    if (cpath) {
        cuzk_errbuf ceb = {{0}};
        cuzk_err ce = cuzk_pk_cache_load(&pk, cpath, c->zkey, &ceb);
        if (!ce && (cuzk_pk_curve(pk) != c->curve || cuzk_pk_n_vars(pk) != c->n_vars ||
                    cuzk_pk_domain_size(pk) != c->domain_size ||
                    cuzk_pk_n_public(pk) != c->n_public)) {
            ce = cuzk_errf(&ceb, CUZK_BAD_FORMAT, "%s: the key's shape differs from the zkey's",
                           cpath);
            cuzk_pk_free(pk);
            pk = NULL;
        }
        if (!ce)
            source = "cache";
        else if (ce != CUZK_NOT_FOUND)
            CUZK_LOG_WARN(TGT, "key cache not used: loading the zkey", "circuit=%s error=%s",
                          c->id, ceb.msg);
    }
    cuzk_zkey zk;
    if (!pk && !(err = cuzk_zkey_open(&zk, c->zkey, eb))) {
        /* The file may have changed since start: the jobs were checked against the header
         * read then, so refuse a key whose shape differs. */
        if (zk.curve != c->curve || zk.n_vars != c->n_vars || zk.domain_size != c->domain_size ||
            zk.n_public != c->n_public)
            err = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s changed since the daemon started", c->zkey);
        else
            err = cuzk_pk_load(&pk, &zk, e->cfg.prove_threads * e->cfg.partition_workers, eb);
        cuzk_zkey_close(&zk);
        if (!err && cpath) {
            double tc = cuzk__now_ms();
            cuzk_errbuf ceb = {{0}};
            if (cuzk_pk_cache_save(pk, cpath, c->zkey, &ceb))
                CUZK_LOG_WARN(TGT, "cannot write the key cache", "circuit=%s error=%s", c->id,
                              ceb.msg);
            else
                CUZK_LOG_INFO(TGT, "key cache written", "circuit=%s path=%s ms=%.1f", c->id,
                              cpath, cuzk__now_ms() - tc);
        }
    }
    free(cpath);
    if (!err) {
        /* The cache now on disk (read or just written) is what a later reload would use. */
        uint64_t cbytes = 0;
        int mapped = cache_valid(e, c, &cbytes);
        uint64_t gbytes;
        unsigned parts = key_stage_parts(e, c, pk, &gbytes);
        pin_new_key(e, c, pk);
        pthread_mutex_lock(&e->mu);
        uint64_t bytes = cuzk_pk_bytes(pk);
        make_key_room(e, bytes, c);
        c->pk = pk;
        c->bytes = bytes;
        c->gbytes = gbytes;
        c->stage_parts = parts;
        c->gmask = 0;
        c->mapped = mapped;
        c->cache_bytes = cbytes;
        c->last_used = ++e->lru_tick;
        e->keys_loaded++;
        e->keys_from_cache += source[0] == 'c';
        pthread_mutex_unlock(&e->mu);
        double dt = cuzk__now_ms() - t0;
        if (ms)
            *ms = dt;
        CUZK_LOG_INFO(TGT, "proving key loaded", "circuit=%s curve=%s n_vars=%u domain=%u "
                      "bytes=%" PRIu64 " source=%s ms=%.1f", c->id, cuzk_curve_name(c->curve),
                      c->n_vars, c->domain_size, bytes, source, dt);
    }
    pthread_mutex_unlock(&e->load_mu);
    return err;
}

cuzk_err cuzk_engine_preload(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                             double *load_ms, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->mu);
    circuit *c = find_circuit(e, circuit_id);
    if (!c) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'", circuit_id);
    }
    c->holders++;
    pthread_mutex_unlock(&e->mu);
    cuzk_err err = ensure_key(e, c, was_loaded, load_ms, eb);
    pthread_mutex_lock(&e->mu);
    c->holders--;
    c->last_used = ++e->lru_tick;
    pthread_mutex_unlock(&e->mu);
    return err;
}

cuzk_err cuzk_engine_evict_key(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                               uint64_t *bytes_freed, cuzk_errbuf *eb)
{
    *was_loaded = 0;
    *bytes_freed = 0;
    pthread_mutex_lock(&e->load_mu);
    pthread_mutex_lock(&e->mu);
    circuit *c = find_circuit(e, circuit_id);
    cuzk_err err = CUZK_OK;
    cuzk_pk *pk = NULL;
    if (!c) {
        err = cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'", circuit_id);
    } else if (c->holders) {
        err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                        "circuit '%s': key held by %u job(s); evict it when they end", c->id,
                        c->holders);
    } else if (c->pk) {
        *was_loaded = 1;
        *bytes_freed = c->bytes;
        pk = drop_key(e, c);
    }
    pthread_mutex_unlock(&e->mu);
    if (pk) {
        cuzk_pk_free(pk);
        CUZK_LOG_INFO(TGT, "proving key evicted", "circuit=%s bytes=%" PRIu64, circuit_id,
                      *bytes_freed);
    }
    pthread_mutex_unlock(&e->load_mu);
    return err;
}

/* ------------------------------------------------------------------ workers */

/* The next partition to run: the best admitted job (priority, then submission order) with a
 * partition not yet started. Under e->mu. */
static job *pick(cuzk_engine *e)
{
    job *best = NULL;
    for (job *j = e->head; j; j = j->next)
        if (j->admitted && job_live(j) && !j->cancel && j->next_part < j->n_parts &&
            (!best || j->prio > best->prio))
            best = j;
    return best;
}

/* Where B in G2 goes for a partition with these witness values (32-byte plain integers):
 * the configured place, or with auto the GPU when at least g2_gpu_min_scalars of them are
 * other than 0 and 1 (the CPU MSM's cost grows with those; 0 and 1 cost next to nothing). */
static int g2_on_gpu(const cuzk_engine *e, const uint8_t *w, uint64_t n)
{
    if (e->cfg.g2_on_gpu != 2)
        return e->cfg.g2_on_gpu;
    uint64_t need = e->cfg.g2_gpu_min_scalars, cnt = 0;
    for (uint64_t i = 0; i < n && cnt < need; i++) {
        const uint8_t *v = w + 32 * i;
        uint64_t hi = 0;
        for (int k = 1; k < 32; k++)
            hi |= v[k];
        cnt += hi != 0 || v[0] > 1;
    }
    return cnt >= need;
}

/* Whether device d may run a GPU stage with key c: enabled, not yet failed on the item, and
 * the key fits in its GPU budget. Under e->mu. */
static int gpu_dev_takes(const cuzk_engine *e, unsigned d, uint32_t tried, const circuit *c)
{
    return !e->devs[d].disabled && !(tried & (1u << d)) && c->gbytes <= e->devs[d].kbudget;
}

/* Whether some device may take an item. Under e->mu. */
static int gpu_can_take(const cuzk_engine *e, uint32_t tried, const circuit *c)
{
    for (unsigned d = 0; d < e->n_devs; d++)
        if (gpu_dev_takes(e, d, tried, c))
            return 1;
    return 0;
}

/* Runs a partition's GPU stage through the GPU workers and waits for it; on a GPU fault that
 * no other device can take over, the stage runs on the CPU here. B in G2 runs on this thread
 * meanwhile (unless g2_on_gpu). Returns the first error. */
static cuzk_err run_stages(cuzk_engine *e, job *j, size_t pi, cuzk_prove_state *ps,
                           int g2_gpu, double *gpu_ms, double *g2_ms, cuzk_errbuf *eb)
{
    gitem it;
    memset(&it, 0, sizeof it);
    it.j = j;
    it.pi = pi;
    it.ps = ps;
    it.dev = -1;
    it.g2_gpu = g2_gpu;
    int queued = 0;
    pthread_mutex_lock(&e->mu);
    int any_dev = 0;
    for (unsigned d = 0; d < e->n_devs; d++)
        any_dev |= !e->devs[d].disabled;
    if (any_dev && !gpu_can_take(e, 0, j->circ)) {
        /* Some device works but the key is larger than every GPU budget: never staged. */
        e->gpu_budget_cpu++;
    } else if (e->n_devs && gpu_can_take(e, 0, j->circ)) {
        if (e->gq_tail)
            e->gq_tail->next = &it;
        else
            e->gq_head = &it;
        e->gq_tail = &it;
        queued = 1;
        pthread_cond_broadcast(&e->gpu_cv);
    }
    pthread_mutex_unlock(&e->mu);

    cuzk_err err = CUZK_OK, g2err = CUZK_OK;
    cuzk_errbuf g2eb = {{0}};
    int g2_here = !queued || !g2_gpu;
    if (g2_here) {
        double t = cuzk__now_ms();
        g2err = cuzk_prove_g2(ps, -1, NULL, &g2eb);
        *g2_ms += cuzk__now_ms() - t;
        pthread_mutex_lock(&e->mu); /* a GPU worker may hold the item now */
        it.g2_ok = !g2err;
        pthread_mutex_unlock(&e->mu);
    }
    if (queued) {
        pthread_mutex_lock(&e->mu);
        while (!it.done)
            pthread_cond_wait(&e->gdone_cv, &e->mu);
        pthread_mutex_unlock(&e->mu);
        *gpu_ms += it.ms;
        if (!g2_here)
            *g2_ms += cuzk_prove_state_stats(ps)->msm_g2_ms;
        err = it.err;
        if (err == CUZK_GPU_FAULT || err == CUZK_NO_DEVICE) {
            /* Every device that could take it failed: a GPU fault costs time, never the
             * proof. */
            pthread_mutex_lock(&e->mu);
            e->cpu_fallbacks++;
            pthread_mutex_unlock(&e->mu);
            CUZK_LOG_WARN(TGT, "GPU stage falls back to the CPU", "job=%s partition=%zu error=%s",
                          j->id, pi, it.eb.msg);
            err = CUZK_OK;
        } else if (err) {
            *eb = it.eb;
        }
    }
    if (!err && !it.g1_ok)
        err = cuzk_prove_g1(ps, -1, NULL, eb); /* CPU backend, or the fallback */
    if (!err && !it.g2_ok && !g2err) {
        double t = cuzk__now_ms();
        g2err = cuzk_prove_g2(ps, -1, NULL, &g2eb);
        *g2_ms += cuzk__now_ms() - t;
    }
    if (!err && g2err) {
        *eb = g2eb;
        err = g2err;
    }
    return err;
}

static void *gpu_worker_main(void *arg)
{
    gworker *w = arg;
    cuzk_engine *e = w->e;
    gdev *d = &e->devs[w->dev];
    int fake = e->cfg.test_fake_gpus > 0;
    cuzk_gpu_ctx *ctx = NULL;
    cuzk_errbuf oeb = {{0}};
    cuzk_err oerr = CUZK_OK;
    if (!fake && (oerr = cuzk_gpu_open(&ctx, d->id, &oeb)))
        CUZK_LOG_ERROR(TGT, "GPU worker cannot open its device", "device=%d error=%s", d->id,
                       oeb.msg);
    /* The chunk fit_workers fitted (the budget reserved it); on failure the default stays. */
    if (ctx && d->ba_chunk && cuzk_gpu_ba_set(ctx, d->ba_chunk, d->ba_quads, &oeb))
        CUZK_LOG_WARN(TGT, "GPU worker keeps the default batch-affine chunk", "device=%d "
                      "error=%s", d->id, oeb.msg);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        gitem *it = NULL, *prev = NULL;
        while (!e->gpu_stopping) {
            for (prev = NULL, it = e->gq_head; it; prev = it, it = it->next)
                if (gpu_dev_takes(e, w->dev, it->tried, it->j->circ))
                    break;
            if (it)
                break;
            pthread_cond_wait(&e->gpu_cv, &e->mu);
        }
        if (!it)
            break;
        if (prev)
            prev->next = it->next;
        else
            e->gq_head = it->next;
        if (e->gq_tail == it)
            e->gq_tail = prev;
        it->next = NULL;
        d->busy++;
        /* GPU tier: the key is staged on this device (within its budget) and held there
         * until the stage ends. gpu_dev_takes checked that it fits. */
        circuit *kc = it->j->circ;
        int upload = 0, held = gpu_acquire(e, kc, w->dev, &upload);
        cuzk_pk *kpk = kc->pk;
        int g1_ok = 0, g2_ok = it->g2_ok;
        pthread_mutex_unlock(&e->mu);

        cuzk_errbuf eb = {{0}};
        cuzk_err err = CUZK_OK;
        double t = cuzk__now_ms();
        if (!held) {
            err = cuzk_errf(&eb, CUZK_NO_DEVICE, "GPU %d: the key does not fit in its GPU budget",
                            d->id);
        } else if (upload && !fake && ctx) {
            /* Uploaded here rather than inside the stage so the staged bytes are exactly the
             * accounted ones (B in G2 included whenever G2 may run on the GPU). */
            if ((err = cuzk_pk_gpu_stage(kpk, d->id, kc->stage_parts, &eb)))
                CUZK_LOG_WARN(TGT, "cannot stage the key on the GPU", "circuit=%s device=%d "
                              "error=%s", kc->id, d->id, eb.msg);
            else
                log_staged(kc, d->id, cuzk__now_ms() - t);
        }
        if (err) {
            /* Not run: the key could not be staged. */
        } else if (fake) {
            if (e->cfg.test_faulty_gpus & (1u << w->dev))
                err = cuzk_errf(&eb, CUZK_GPU_FAULT, "simulated fault on test device %u", w->dev);
            else if (!(err = cuzk_prove_g1(it->ps, -1, NULL, &eb)))
                g1_ok = 1;
        } else if (!ctx) {
            err = cuzk_errf(&eb, oerr ? oerr : CUZK_NO_DEVICE, "GPU %d: %s", d->id, oeb.msg);
        } else if (it->g2_gpu && !g2_ok) {
            /* G1 and B in G2 in one stage: B2 reuses the witness upload and digit sort of
             * the A and B1 MSMs. */
            if (!(err = cuzk_prove_g1g2(it->ps, d->id, ctx, &eb)))
                g1_ok = g2_ok = 1;
            else
                g2_ok = cuzk_prove_g2_done(it->ps);
        } else if (!(err = cuzk_prove_g1(it->ps, d->id, ctx, &eb))) {
            g1_ok = 1;
        }
        if (!err && it->g2_gpu && !g2_ok) {
            if (!(err = fake ? cuzk_prove_g2(it->ps, -1, NULL, &eb)
                             : cuzk_prove_g2(it->ps, d->id, ctx, &eb)))
                g2_ok = 1;
        }
        double ms = cuzk__now_ms() - t;

        pthread_mutex_lock(&e->mu);
        if (held) {
            /* Simulated devices check the tier's invariant: a held key stays staged. */
            if (fake && !err && !(kc->gmask & (1u << w->dev)))
                err = cuzk_errf(&eb, CUZK_INTERNAL, "simulated GPU %u: key %s was unstaged "
                                "while a stage held it", w->dev, kc->id);
            gpu_release(e, kc, w->dev);
        }
        d->busy--;
        it->g1_ok |= g1_ok;
        e->g2_gpu_parts += g2_ok && !it->g2_ok;
        it->g2_ok |= g2_ok;
        it->ms += ms;
        if (err == CUZK_GPU_FAULT || err == CUZK_NO_DEVICE) {
            d->faults++;
            e->gpu_faults++;
            it->tried |= 1u << w->dev;
            CUZK_LOG_WARN(TGT, "GPU fault", "device=%d job=%s partition=%zu error=%s", d->id,
                          it->j->id, it->pi, eb.msg);
            if (++d->fault_streak >= 3 && !d->disabled) {
                d->disabled = 1;
                CUZK_LOG_ERROR(TGT, "GPU disabled after 3 faults in a row", "device=%d", d->id);
                /* Queued items that no enabled device can take go back to their partition
                 * workers (CPU fallback). */
                gitem *q = e->gq_head, *qp = NULL;
                while (q) {
                    gitem *nx = q->next;
                    if (!gpu_can_take(e, q->tried, q->j->circ)) {
                        if (qp)
                            qp->next = nx;
                        else
                            e->gq_head = nx;
                        if (e->gq_tail == q)
                            e->gq_tail = qp;
                        q->done = 1;
                        q->err = CUZK_GPU_FAULT;
                        snprintf(q->eb.msg, sizeof q->eb.msg, "no working GPU left");
                    } else {
                        qp = q;
                    }
                    q = nx;
                }
                pthread_cond_broadcast(&e->gdone_cv);
            }
            if (gpu_can_take(e, it->tried, kc)) {
                /* Retry on another device, ahead of newer work. */
                e->gpu_retries++;
                it->next = e->gq_head;
                e->gq_head = it;
                if (!e->gq_tail)
                    e->gq_tail = it;
                pthread_cond_broadcast(&e->gpu_cv);
                continue;
            }
        } else if (!err) {
            d->fault_streak = 0;
            d->partitions++;
        }
        it->err = err;
        it->eb = eb;
        it->dev = (int)w->dev;
        it->done = 1;
        pthread_cond_broadcast(&e->gdone_cv);
    }
    pthread_mutex_unlock(&e->mu);
    cuzk_gpu_close(ctx);
    return NULL;
}

static void prove_partition(cuzk_engine *e, job *j, size_t pi)
{
    circuit *c = j->circ;
    cuzk_errbuf eb = {{0}};
    cuzk_err err;
    double tw = cuzk__now_ms();
    uint64_t bytes = c->part_bytes;
    err = cuzk_budget_reserve(e->budget, CUZK_OWNER_ABC, bytes, -1, &j->cancel, &eb);
    double wait_ms = cuzk__now_ms() - tw;
    cuzk_part_result res = {0};
    double synth = 0, prove = 0, gpu_ms = 0, g2_ms = 0;
    if (!err) {
        /* One reservation, then split by owner for the status report (witness and MSM
         * scratch vs the a, b, c, h vectors). a, b, c are returned as soon as H is done. */
        uint64_t wit = 32ull * c->n_vars, abc = 32ull * 4 * c->domain_size;
        int split = wit + abc <= bytes, abc_held = 1;
        if (split) {
            cuzk_budget_transfer(e->budget, CUZK_OWNER_ABC, CUZK_OWNER_WITNESS, wit);
            cuzk_budget_transfer(e->budget, CUZK_OWNER_ABC, CUZK_OWNER_MSM_SCRATCH,
                                 bytes - wit - abc);
        }
        if (!(err = ensure_key(e, c, NULL, NULL, &eb))) {
            cuzk_wtns w;
            pthread_mutex_lock(&e->mu);
            const uint8_t *wb = j->parts[pi].wtns;
            size_t wl = j->parts[pi].wtns_len;
            cuzk_pk *pk = c->pk;
            int defer = e->n_devs && (c->stage_parts & CUZK_PK_STAGE_ROWS);
            int pin = e->pin_ctx && gpu_can_take(e, 0, c);
            pthread_mutex_unlock(&e->mu);
            /* Already checked at submission; parsing again only locates the values. */
            if (!(err = cuzk_wtns_parse(&w, wb, wl, "witness", &eb))) {
                cuzk_prove_opts po = {0};
                po.nthreads = e->cfg.prove_threads;
                po.no_verify = e->cfg.no_verify;
                cuzk_prove_state *ps = NULL;
                double t0 = cuzk__now_ms();
                /* w.values points into the job's .wtns copy, alive until this partition
                 * ends: the public inputs are read from it below. */
                const uint8_t *pub = w.values + 32;
                /* With GPU workers and the key's rows staged, synthesis is left to the G1
                 * stage: on a device it runs there from the rows (a, b, c never exist
                 * here); on the CPU (no device takes the key, or the fallback) the stage
                 * synthesizes first. */
                err = cuzk_prove_begin_ex(&ps, pk, w.values, w.n_witness, &po,
                                          defer ? CUZK_PROVE_DEFER_SYNTH : 0, &eb);
                cuzk_wtns_close(&w);
                /* The GPU stage uploads the witness by DMA from page-locked memory (at 2^24,
                 * 512 MiB: ~10 ms instead of ~38 through the staging buffers). The partition's
                 * own copy, already in the working budget; pinning costs CPU time here, while
                 * the GPU works on other partitions. pinned_budget = 0 (no pin_ctx) turns it
                 * off with the key pinning. */
                if (!err && pin) {
                    cuzk_errbuf peb = {{0}};
                    if (cuzk_prove_state_pin(ps, e->pin_ctx, &peb))
                        CUZK_LOG_DEBUG(TGT, "witness not page-locked", "job=%s partition=%zu "
                                       "error=%s", j->id, pi, peb.msg);
                }
                if (!err)
                    err = run_stages(e, j, pi, ps, g2_on_gpu(e, pub - 32, c->n_vars), &gpu_ms,
                                     &g2_ms, &eb);
                if (!err && split && cuzk_prove_state_bytes(ps) <= wit) {
                    cuzk_budget_release(e->budget, CUZK_OWNER_ABC, abc); /* H is done */
                    abc_held = 0;
                }
                cuzk_proof proof;
                if (!err)
                    err = cuzk_prove_end(ps, &proof, &eb);
                if (ps) {
                    const cuzk_prove_stats *st = cuzk_prove_state_stats(ps);
                    synth = st->synth_ms;
                    double total = cuzk__now_ms() - t0;
                    prove = total > synth ? total - synth : 0;
                }
                cuzk_prove_state_free(ps);
                if (!err) {
                    cuzk_strbuf sb;
                    cuzk_sb_init(&sb);
                    cuzk_proof_to_json(&sb, &proof);
                    res.proof_json = sb.oom ? NULL : sb.buf;
                    cuzk_sb_init(&sb);
                    cuzk_public_to_json(&sb, pub, c->n_public);
                    res.public_json = sb.oom ? NULL : sb.buf;
                    if (!res.proof_json || !res.public_json)
                        err = cuzk_errf(&eb, CUZK_NO_MEMORY, "cannot format the proof");
                    if (!err && c->curve == CUZK_CURVE_BLS12_381) {
                        err = cuzk_proof_to_compressed(res.compressed, &proof, &eb);
                        res.has_compressed = !err;
                    }
                }
            }
        }
        if (split) {
            cuzk_budget_release(e->budget, CUZK_OWNER_WITNESS, wit);
            cuzk_budget_release(e->budget, CUZK_OWNER_MSM_SCRATCH, bytes - wit - abc);
            if (abc_held)
                cuzk_budget_release(e->budget, CUZK_OWNER_ABC, abc);
        } else {
            cuzk_budget_release(e->budget, CUZK_OWNER_ABC, bytes);
        }
    }

    pthread_mutex_lock(&e->mu);
    j->running--;
    j->wait_ms += wait_ms;
    j->synth_ms += synth;
    j->prove_ms += prove;
    j->gpu_ms += gpu_ms;
    j->g2_ms += g2_ms;
    drop_wtns(e, &j->parts[pi]); /* dead once proved */
    if (!err) {
        j->parts[pi].res = res;
        j->done++;
        e->parts_proved++;
        e->prove_ms_total += synth + prove;
    } else {
        free(res.proof_json);
        free(res.public_json);
        if (err != CUZK_CANCELLED)
            e->parts_failed++;
    }
    if (job_live(j)) {
        if (err && err != CUZK_CANCELLED && !j->cancel) {
            /* The first failure decides the job; its other partitions stop starting. */
            char msg[CUZK_ERRBUF_SIZE + 32];
            snprintf(msg, sizeof msg, "partition %zu: %s", pi,
                     eb.msg[0] ? eb.msg : cuzk_strerror(err));
            __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
            cuzk_budget_wake(e->budget); /* its partitions waiting for memory give up */
            j->err = err;
            free(j->error);
            j->error = xstrdup(msg);
        }
        if (j->running == 0) {
            if (j->cancel && j->err && j->err != CUZK_CANCELLED) {
                char *m = xstrdup(j->error);
                finish_job(e, j, CUZK_JOB_FAILED, j->err, m);
                free(m);
            } else if (j->cancel) {
                finish_job(e, j, CUZK_JOB_CANCELLED, CUZK_CANCELLED, "cancelled");
            } else if (j->done == j->n_parts) {
                finish_job(e, j, CUZK_JOB_COMPLETED, CUZK_OK, "");
            }
        }
    }
    pthread_mutex_unlock(&e->mu);
}

static void *worker_main(void *arg)
{
    cuzk_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        job *j;
        while (!(j = pick(e)) && !e->stopping)
            pthread_cond_wait(&e->work_cv, &e->mu);
        if (!j)
            break;
        size_t pi = j->next_part++;
        j->running++;
        if (j->state == CUZK_JOB_QUEUED) {
            j->state = CUZK_JOB_RUNNING;
            j->t_start = cuzk__now_ms();
        }
        e->busy++;
        pthread_mutex_unlock(&e->mu);
        prove_partition(e, j, pi);
        pthread_mutex_lock(&e->mu);
        e->busy--;
        pthread_cond_broadcast(&e->idle_cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* ------------------------------------------------------------------ lifecycle */

static uint64_t phys_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (8ull << 30);
}

#if CUZK_HAVE_CUDA
static const char no_cuda_note[] = "";
#else
static const char no_cuda_note[] = " (this build has no CUDA backend)";
#endif

/* Picks the devices the GPU workers use (none on the CPU backend). */
static cuzk_err setup_devices(cuzk_engine *e, cuzk_errbuf *eb)
{
    const cuzk_engine_config *c = &e->cfg;
    if (c->test_fake_gpus) {
        unsigned n = c->test_fake_gpus > CUZK_MAX_DEVICES ? CUZK_MAX_DEVICES : c->test_fake_gpus;
        for (unsigned d = 0; d < n; d++) {
            e->devs[d].id = (int)d;
            snprintf(e->devs[d].name, sizeof e->devs[d].name, "simulated GPU %u (test)", d);
        }
        e->n_devs = n;
        return CUZK_OK;
    }
    if (c->backend == CUZK_BACKEND_CPU)
        return CUZK_OK;
    int count = cuzk_gpu_device_count();
    if (count <= 0) {
        if (c->backend == CUZK_BACKEND_GPU)
            return cuzk_errf(eb, CUZK_NO_DEVICE, "gpus.backend = \"gpu\" but no CUDA device is "
                             "available%s", no_cuda_note);
        return CUZK_OK;
    }
    size_t n = c->n_gpu_devices ? c->n_gpu_devices : (size_t)count;
    if (n > CUZK_MAX_DEVICES)
        n = CUZK_MAX_DEVICES;
    for (size_t i = 0; i < n; i++) {
        int id = c->n_gpu_devices ? c->gpu_devices[i] : (int)i;
        if (id < 0 || id >= count)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.devices lists device %d; %d CUDA "
                             "device(s) found (0..%d)", id, count, count - 1);
        for (size_t k = 0; k < i; k++)
            if (e->devs[k].id == id)
                return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.devices lists device %d twice", id);
        e->devs[i].id = id;
        cuzk_gpu_ctx *ctx;
        cuzk_errbuf oeb;
        if (cuzk_gpu_open(&ctx, id, &oeb)) {
            snprintf(e->devs[i].name, sizeof e->devs[i].name, "unusable");
            e->devs[i].disabled = 1;
            CUZK_LOG_ERROR(TGT, "GPU cannot be opened: not used", "device=%d error=%s", id,
                           oeb.msg);
        } else {
            snprintf(e->devs[i].name, sizeof e->devs[i].name, "%s", cuzk_gpu_name(ctx));
            cuzk_gpu_close(ctx);
            CUZK_LOG_INFO(TGT, "GPU in use", "device=%d name=\"%s\" workers=%u", id,
                          e->devs[i].name, c->gpu_workers_per_device);
        }
    }
    e->n_devs = (unsigned)n;
    return CUZK_OK;
}

/* The tier budgets (engine.h "Key residency tiers"), once the devices and circuits are
 * known. */
static void setup_tiers(cuzk_engine *e)
{
    const cuzk_engine_config *c = &e->cfg;
    /* Device scratch of one GPU worker: the largest over the circuits of the backend's own
     * estimate (every MSM, the H step and twiddles; gpu.h cuzk_gpu_scratch_estimate, which
     * gpu_test checks against a context's real scratch), plus fixed buffers. */
    uint64_t scratch = 0;
    for (size_t i = 0; i < e->n_circs; i++) {
        const circuit *ci = &e->circs[i];
        uint64_t s = cuzk_gpu_scratch_estimate(gpu_curve(ci), ci->n_vars, ci->domain_size);
        if (s > scratch)
            scratch = s;
    }
    scratch += 64ull << 20;
    for (unsigned d = 0; d < e->n_devs; d++) {
        gdev *g = &e->devs[d];
        if (c->gpu_budget && c->gpu_budget != CUZK_BUDGET_AUTO) {
            g->kbudget = c->gpu_budget;
        } else if (c->test_fake_gpus) {
            g->kbudget = UINT64_MAX; /* simulated devices have no memory to run out of */
        } else {
            uint64_t fr = 0, tot = 0;
            cuzk_errbuf meb = {{0}};
            if (!g->disabled && cuzk_gpu_mem_info(g->id, &fr, &tot, &meb) == CUZK_OK) {
                uint64_t margin = tot / 20 > (512ull << 20) ? tot / 20 : (512ull << 20);
                uint64_t keep = c->gpu_workers_per_device * scratch + margin;
                g->kbudget = fr > keep ? fr - keep : 0;
                g->mfree = fr;
                g->mmargin = margin;
                g->wscratch = scratch;
            }
            CUZK_LOG_INFO(TGT, "GPU key budget (automatic)", "device=%d free=%" PRIu64
                          " gpu_budget=%" PRIu64 " worker_scratch_estimate=%" PRIu64, g->id, fr,
                          g->kbudget, scratch);
        }
    }
    e->pin_budget = 0;
    if (e->n_devs && c->pinned_budget)
        e->pin_budget = c->pinned_budget == CUZK_BUDGET_AUTO ? phys_ram() / 4 : c->pinned_budget;
    if (e->pin_budget && real_gpus(e)) {
        /* Page-locking needs a CUDA context: the first usable device's. */
        cuzk_errbuf peb = {{0}};
        for (unsigned d = 0; d < e->n_devs && !e->pin_ctx; d++)
            if (!e->devs[d].disabled && cuzk_gpu_open(&e->pin_ctx, e->devs[d].id, &peb))
                e->pin_ctx = NULL;
        if (!e->pin_ctx)
            e->pin_budget = 0;
    }
}

/* The GPU workers' batch-affine chunk fitted to the device memory the keys leave, once every
 * circuit's key is preloaded (their staged bytes known), with the automatic GPU budget on real
 * devices and unless no_ba_fit: per worker (free - margin - the keys' staged bytes) / gw, the
 * largest setting whose scratch estimate fits that for every circuit (gpu.h
 * cuzk_gpu_ba_fit_bytes; quads with a chunk of 8 GiB or more). The device's key budget then
 * reserves the larger scratch: it shrinks, never below the keys' bytes. Before the GPU workers
 * start. */
static void fit_workers(cuzk_engine *e)
{
    const cuzk_engine_config *c = &e->cfg;
    if (!e->n_devs || c->no_ba_fit || c->test_fake_gpus ||
        (c->gpu_budget && c->gpu_budget != CUZK_BUDGET_AUTO))
        return;
    uint64_t keys = 0;
    for (size_t i = 0; i < e->n_circs; i++) {
        const circuit *ci = &e->circs[i];
        if (!ci->pk) {
            CUZK_LOG_INFO(TGT, "GPU workers keep the default batch-affine chunk: a circuit's "
                          "key is not preloaded (its device bytes are not known yet)",
                          "circuit=%s", ci->id);
            return;
        }
        keys += ci->gbytes;
    }
    const uint64_t gw = c->gpu_workers_per_device, fixed = 64ull << 20;
    for (unsigned d = 0; d < e->n_devs; d++) {
        gdev *g = &e->devs[d];
        if (g->disabled || !g->wscratch || g->mfree <= g->mmargin + keys)
            continue;
        const uint64_t per = (g->mfree - g->mmargin - keys) / gw;
        if (per <= fixed)
            continue;
        uint64_t chunk = 0, s = 0;
        int q = 0;
        for (size_t i = 0; i < e->n_circs; i++) {
            const circuit *ci = &e->circs[i];
            (void)cuzk_gpu_ba_fit_bytes(gpu_curve(ci), ci->n_vars, ci->domain_size, per - fixed,
                                        &chunk, &q);
        }
        for (size_t i = 0; i < e->n_circs; i++) {
            const circuit *ci = &e->circs[i];
            const uint64_t b = cuzk_gpu_scratch_estimate_at(gpu_curve(ci), ci->n_vars,
                                                            ci->domain_size, chunk, q);
            if (b > s)
                s = b;
        }
        s += fixed;
        const uint64_t keep = gw * s + g->mmargin;
        if (s <= g->wscratch || keep > g->mfree || g->mfree - keep < keys)
            continue;
        pthread_mutex_lock(&e->mu);
        g->kbudget = g->mfree - keep;
        g->ba_chunk = chunk;
        g->ba_quads = q;
        pthread_mutex_unlock(&e->mu);
        CUZK_LOG_INFO(TGT, "GPU workers' batch-affine chunk fitted to the memory the keys leave",
                      "device=%d chunk=%" PRIu64 " quads=%d worker_scratch_estimate=%" PRIu64
                      " keys=%" PRIu64 " gpu_budget=%" PRIu64, g->id, chunk, q, s, keys,
                      g->kbudget);
    }
}

cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *cfg, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    e->cfg = *cfg;
    e->cfg.circuits = NULL;
    if (!e->cfg.partition_workers)
        e->cfg.partition_workers = 1;
    if (!e->cfg.prove_threads) {
        unsigned n = cuzk_num_threads() / e->cfg.partition_workers;
        e->cfg.prove_threads = n ? n : 1;
    }
    if (!e->cfg.working_budget)
        e->cfg.working_budget = phys_ram() / 2;
    if (!e->cfg.witness_budget) {
        e->cfg.witness_budget = e->cfg.working_budget / 4;
        if (e->cfg.witness_budget < (256ull << 20))
            e->cfg.witness_budget = 256ull << 20;
    }
    if (!e->cfg.gpu_workers_per_device)
        e->cfg.gpu_workers_per_device = 2;
    if (!e->cfg.g2_gpu_min_scalars)
        e->cfg.g2_gpu_min_scalars = 262144;
    if (!e->cfg.retain_jobs)
        e->cfg.retain_jobs = 1024;
    if (!e->cfg.max_partitions)
        e->cfg.max_partitions = 1024;
    e->t0 = cuzk__now_ms();
    e->accepting = 1;
    e->id_salt = fnv1a(0xcbf29ce484222325ull, &e, sizeof e) ^ (uint64_t)time(NULL) ^
                 ((uint64_t)getpid() << 32);
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->load_mu, NULL);
    pthread_mutex_init(&e->pin_mu, NULL);
    pthread_cond_init(&e->tier_cv, NULL);
    e->stage_parts = (e->cfg.g2_on_gpu != 0 ? CUZK_PK_STAGE_G2 : 0) |
                     (e->cfg.synth_on_cpu ? 0 : CUZK_PK_STAGE_ROWS) |
                     (e->cfg.gpu_tables ? CUZK_PK_STAGE_TABLES : 0);
    pthread_cond_init(&e->work_cv, NULL);
    pthread_cond_init(&e->idle_cv, NULL);
    pthread_cond_init(&e->gpu_cv, NULL);
    pthread_cond_init(&e->gdone_cv, NULL);
    cuzk_err err = cuzk_budget_new(&e->budget, "working", e->cfg.working_budget, eb);
    if (!err)
        err = cuzk_budget_new(&e->wbudget, "witness", e->cfg.witness_budget, eb);
    if (!err)
        err = setup_devices(e, eb);
    if (err) {
        cuzk_engine_free(e);
        return err;
    }
    e->circs = calloc(cfg->n_circuits ? cfg->n_circuits : 1, sizeof *e->circs);
    if (!e->circs) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < cfg->n_circuits; i++) {
        const cuzk_engine_circuit *cc = &cfg->circuits[i];
        if (find_circuit(e, cc->id)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit id '%s' is configured twice", cc->id);
        }
        circuit *c = &e->circs[e->n_circs];
        cuzk_zkey zk;
        if ((err = cuzk_zkey_open(&zk, cc->zkey, eb))) {
            char m[CUZK_ERRBUF_SIZE];
            snprintf(m, sizeof m, "%s", eb->msg);
            cuzk_engine_free(e);
            return cuzk_errf(eb, err, "circuit '%s': %s", cc->id, m);
        }
        c->id = xstrdup(cc->id);
        c->zkey = xstrdup(cc->zkey);
        c->preload = cc->preload;
        c->priority = cc->priority ? cc->priority : CUZK_PRIO_NORMAL;
        c->curve = zk.curve;
        c->n8q = zk.n8q;
        c->n_vars = zk.n_vars;
        c->n_public = zk.n_public;
        c->domain_size = zk.domain_size;
        c->part_bytes = cuzk_engine_partition_bytes(c->n_vars, c->domain_size, c->n8q,
                                                    e->cfg.prove_threads);
        cuzk_zkey_close(&zk);
        e->n_circs++;
        CUZK_LOG_INFO(TGT, "circuit registered", "circuit=%s curve=%s n_vars=%u domain=%u "
                      "partition_bytes=%" PRIu64 " preload=%s", c->id, cuzk_curve_name(c->curve),
                      c->n_vars, c->domain_size, c->part_bytes, c->preload ? "true" : "false");
        c->mapped = cache_valid(e, c, &c->cache_bytes);
    }
    setup_tiers(e);
    for (size_t i = 0; i < e->n_circs; i++) {
        if (!e->circs[i].preload)
            continue;
        if ((err = cuzk_engine_preload(e, e->circs[i].id, NULL, NULL, eb))) {
            cuzk_engine_free(e);
            return err;
        }
        /* Stage the preloaded key's points on every device now, so the first proof does not
         * pay for the upload, if it fits beside the keys staged before it (no unstaging at
         * start: the first preloaded keys keep their places). A device that fails here is left
         * to the per-proof path (which retries elsewhere and counts the fault). */
        circuit *c = &e->circs[i];
        for (unsigned d = 0; d < e->n_devs; d++) {
            gdev *g = &e->devs[d];
            if (g->disabled)
                continue;
            pthread_mutex_lock(&e->mu);
            int fits = g->kbytes + c->gbytes <= g->kbudget, upload = 0;
            if (fits)
                gpu_reserve(e, c, d, &upload);
            pthread_mutex_unlock(&e->mu);
            if (!fits) {
                CUZK_LOG_INFO(TGT, "key not staged: the GPU budget is full", "circuit=%s "
                              "device=%d bytes=%" PRIu64 " staged=%" PRIu64 " gpu_budget=%"
                              PRIu64, c->id, g->id, c->gbytes, g->kbytes, g->kbudget);
                continue;
            }
            if (!upload || e->cfg.test_fake_gpus)
                continue;
            cuzk_errbuf geb;
            double t = cuzk__now_ms();
            if (cuzk_pk_gpu_stage(c->pk, g->id, c->stage_parts, &geb))
                CUZK_LOG_WARN(TGT, "cannot stage the key on the GPU", "circuit=%s device=%d "
                              "error=%s", c->id, g->id, geb.msg);
            else
                log_staged(c, g->id, cuzk__now_ms() - t);
        }
    }
    fit_workers(e);
    e->workers = calloc(e->cfg.partition_workers, sizeof *e->workers);
    if (!e->workers) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (unsigned i = 0; i < e->cfg.partition_workers; i++) {
        if (pthread_create(&e->workers[i], NULL, worker_main, e)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_INTERNAL, "cannot start partition worker %u", i);
        }
        e->n_workers++;
    }
    unsigned gw = e->n_devs * e->cfg.gpu_workers_per_device;
    e->gworkers = calloc(gw ? gw : 1, sizeof *e->gworkers);
    if (!e->gworkers) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (unsigned i = 0; i < gw; i++) {
        gworker *w = &e->gworkers[i];
        w->e = e;
        w->dev = i / e->cfg.gpu_workers_per_device;
        if (pthread_create(&w->tid, NULL, gpu_worker_main, w)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_INTERNAL, "cannot start GPU worker %u", i);
        }
        e->devs[w->dev].workers++;
        e->n_gworkers++;
    }
    CUZK_LOG_INFO(TGT, "engine started", "partition_workers=%u prove_threads=%u gpus=%u "
                  "gpu_workers=%u g2=%s max_jobs_in_flight=%u working_budget=%" PRIu64
                  " witness_budget=%" PRIu64 " key_budget=%" PRIu64 " pinned_budget=%" PRIu64
                  " verify=%s",
                  e->cfg.partition_workers, e->cfg.prove_threads, e->n_devs, e->n_gworkers,
                  e->cfg.g2_on_gpu == 2 ? "auto" : e->cfg.g2_on_gpu ? "gpu" : "cpu",
                  e->cfg.max_jobs_in_flight,
                  e->cfg.working_budget, e->cfg.witness_budget, e->cfg.key_budget,
                  e->pin_budget, e->cfg.no_verify ? "false" : "true");
    *out = e;
    return CUZK_OK;
}

static unsigned live_jobs(cuzk_engine *e)
{
    unsigned n = 0;
    for (job *j = e->head; j; j = j->next)
        n += job_live(j);
    return n;
}

static void cancel_locked(cuzk_engine *e, job *j)
{
    __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
    if (j->running == 0)
        finish_job(e, j, CUZK_JOB_CANCELLED, CUZK_CANCELLED, "cancelled");
}

unsigned cuzk_engine_shutdown(cuzk_engine *e, uint64_t grace_ms)
{
    unsigned n_cancelled = 0;
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        pthread_mutex_unlock(&e->mu);
        return 0;
    }
    e->accepting = 0;
    CUZK_LOG_INFO(TGT, "draining", "jobs=%u grace_ms=%" PRIu64, live_jobs(e), grace_ms);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (grace_ms % 1000) * 1000000ull;
    dl.tv_sec += (time_t)(grace_ms / 1000 + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    while (live_jobs(e) && pthread_cond_timedwait(&e->idle_cv, &e->mu, &dl) == 0)
        ;
    for (job *j = e->head; j; j = j->next)
        if (job_live(j) && !j->cancel) {
            n_cancelled++;
            cancel_locked(e, j);
        }
    if (n_cancelled)
        CUZK_LOG_WARN(TGT, "grace period over: cancelled jobs", "jobs=%u", n_cancelled);
    cuzk_budget_wake(e->budget);
    while (live_jobs(e))
        pthread_cond_wait(&e->idle_cv, &e->mu);
    e->stopping = 1;
    pthread_cond_broadcast(&e->work_cv);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_workers; i++)
        pthread_join(e->workers[i], NULL);
    e->n_workers = 0;
    pthread_mutex_lock(&e->mu);
    e->gpu_stopping = 1;
    pthread_cond_broadcast(&e->gpu_cv);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_gworkers; i++)
        pthread_join(e->gworkers[i].tid, NULL);
    e->n_gworkers = 0;
    return n_cancelled;
}

void cuzk_engine_free(cuzk_engine *e)
{
    if (!e)
        return;
    if (e->n_workers || e->n_gworkers)
        cuzk_engine_shutdown(e, 0);
    pthread_mutex_lock(&e->mu);
    /* Waiters in cuzk_engine_await hold references; they are gone once the callers (rpc
     * threads) are joined, which the daemon does before freeing the engine. */
    for (job *j = e->head; j;) {
        job *nx = j->next;
        free_job(j);
        j = nx;
    }
    e->head = e->tail = NULL;
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < e->n_circs; i++) {
        if (e->circs[i].pbytes && e->circs[i].pk)
            pin_arrays(e, e->circs[i].pk, 0, NULL);
        cuzk_pk_free(e->circs[i].pk);
        free(e->circs[i].id);
        free(e->circs[i].zkey);
    }
    free(e->circs);
    cuzk_gpu_close(e->pin_ctx);
    free(e->workers);
    free(e->gworkers);
    if (e->budget)
        cuzk_budget_free(e->budget);
    if (e->wbudget)
        cuzk_budget_free(e->wbudget);
    pthread_cond_destroy(&e->gpu_cv);
    pthread_cond_destroy(&e->gdone_cv);
    pthread_cond_destroy(&e->work_cv);
    pthread_cond_destroy(&e->idle_cv);
    pthread_mutex_destroy(&e->load_mu);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->pin_mu);
    pthread_cond_destroy(&e->tier_cv);
    free(e);
}

/* ------------------------------------------------------------------ submit / await / cancel */

/* A request's witnesses are copied and fingerprinted (for the request_id reuse check) in
 * 4 KiB chunks on all cores (cuzk_wtns_validate checks their values the same way): at 2^22
 * each is 128 MiB, and one thread in the gRPC handler took ~0.2 s per witness for each of the
 * check, a byte-wise FNV-1a fingerprint and the copy, while the GPU workers waited for the
 * next job (the H200's device was busy about half the time). */
#define SUB_CHUNK ((size_t)4096) /* small enough that the tests' witnesses span several */
typedef struct {
    const cuzk_submit *req;
    part *parts;       /* the copies: parts[i].wtns */
    size_t *c0;        /* per witness, its first chunk; c0[n_witnesses] = the chunk count */
    uint64_t *ch;      /* per chunk, its hash */
} sub_job;

static void sub_task(void *arg, size_t t)
{
    sub_job *j = arg;
    size_t lo = 0, hi = j->req->n_witnesses; /* the witness whose chunks hold t */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (j->c0[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    size_t off = (t - j->c0[lo]) * SUB_CHUNK, len = j->req->witness_lens[lo];
    size_t n = len - off < SUB_CHUNK ? len - off : SUB_CHUNK;
    uint8_t *dst = j->parts[lo].wtns + off;
    memcpy(dst, j->req->witnesses[lo] + off, n);
    j->ch[t] = cuzk__hash64(0, dst, n);
}

/* Copies every witness into parts[i].wtns (witness_lens[i] bytes each) and returns the request's
 * fingerprint in *fp: each witness's length, then its chunks' hashes, in order. Nonzero when
 * out of memory. */
static int sub_copy_hash(const cuzk_submit *req, part *parts, uint64_t *fp)
{
    size_t nw = req->n_witnesses;
    size_t *c0 = malloc((nw + 1) * sizeof *c0);
    if (!c0)
        return 1;
    c0[0] = 0;
    for (size_t i = 0; i < nw; i++)
        c0[i + 1] = c0[i] + (req->witness_lens[i] + SUB_CHUNK - 1) / SUB_CHUNK;
    uint64_t *ch = malloc((c0[nw] ? c0[nw] : 1) * sizeof *ch);
    if (!ch) {
        free(c0);
        return 1;
    }
    sub_job j = {req, parts, c0, ch};
    cuzk_parallel_for(c0[nw], 0, sub_task, &j);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < nw; i++) {
        h = fnv1a(h, &req->witness_lens[i], sizeof req->witness_lens[i]);
        h = fnv1a(h, ch + c0[i], (c0[i + 1] - c0[i]) * sizeof *ch);
    }
    *fp = h;
    free(ch);
    free(c0);
    return 0;
}

cuzk_err cuzk_engine_submit(cuzk_engine *e, const cuzk_submit *req, char job_id[32], int *existing,
                            cuzk_errbuf *eb)
{
    *existing = 0;
    job_id[0] = 0;
    const char *rid = req->request_id ? req->request_id : "";
    if (strlen(rid) > 256)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "request_id is longer than 256 bytes");
    pthread_mutex_lock(&e->mu);
    circuit *c = find_circuit(e, req->circuit_id ? req->circuit_id : "");
    int accepting = e->accepting;
    pthread_mutex_unlock(&e->mu);
    if (!accepting)
        return cuzk_errf(eb, CUZK_CANCELLED, "the daemon is shutting down");
    if (!c)
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'",
                         req->circuit_id ? req->circuit_id : "");
    if (req->n_witnesses == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "no witness: send one .wtns per partition");
    if (req->n_witnesses > e->cfg.max_partitions)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%zu witnesses; at most %u partitions per job",
                         req->n_witnesses, e->cfg.max_partitions);
    if (c->part_bytes > e->cfg.working_budget)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "circuit '%s' needs %" PRIu64 " bytes per partition, the working budget "
                         "is %" PRIu64 " bytes", c->id, c->part_bytes, e->cfg.working_budget);
    cuzk_priority prio = req->priority ? req->priority : c->priority;
    if (prio < CUZK_PRIO_LOW || prio > CUZK_PRIO_CRITICAL)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "priority %d is out of range", (int)prio);

    /* Check every witness before anything is queued: a bad one fails only this request. */
    for (size_t i = 0; i < req->n_witnesses; i++) {
        cuzk_wtns w;
        char name[48];
        snprintf(name, sizeof name, "witness %zu", i);
        cuzk_err err = cuzk_wtns_parse(&w, req->witnesses[i], req->witness_lens[i], name, eb);
        int parsed = !err;
        if (!err && w.curve != c->curve)
            err = cuzk_errf(eb, CUZK_WRONG_CURVE, "witness %zu is on %s, circuit '%s' on %s", i,
                            cuzk_curve_name(w.curve), c->id, cuzk_curve_name(c->curve));
        if (!err && w.n_witness != c->n_vars)
            err = cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                            "witness %zu has %" PRIu64 " values, circuit '%s' expects %u", i,
                            w.n_witness, c->id, c->n_vars);
        if (!err)
            err = cuzk_wtns_validate(&w, eb); /* on all cores */
        if (parsed)
            cuzk_wtns_close(&w);
        if (err)
            return err;
    }

    /* The witness bytes are held until each partition ends: charge them now, or refuse. */
    uint64_t wbytes = 0;
    for (size_t i = 0; i < req->n_witnesses; i++)
        wbytes += req->witness_lens[i];
    if (wbytes > e->cfg.witness_budget)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "the request's witnesses are %" PRIu64 " bytes, more than the whole "
                         "witness budget (%" PRIu64 " bytes; memory.witness_budget)", wbytes,
                         e->cfg.witness_budget);
    if (cuzk_budget_try_reserve(e->wbudget, CUZK_OWNER_WITNESS, wbytes, NULL)) {
        cuzk_budget_snapshot ws;
        cuzk_budget_get_snapshot(e->wbudget, &ws);
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "busy: the witnesses of queued jobs hold %" PRIu64 " of %" PRIu64
                         " bytes and this request needs %" PRIu64 "; retry later (or raise "
                         "memory.witness_budget)", ws.in_use, ws.limit, wbytes);
    }
    job *j = calloc(1, sizeof *j);
    part *parts = calloc(req->n_witnesses, sizeof *parts);
    if (!j || !parts) {
        free(j);
        free(parts);
        cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    j->parts = parts;
    j->n_parts = req->n_witnesses;
    for (size_t i = 0; i < req->n_witnesses; i++) {
        parts[i].wtns = malloc(req->witness_lens[i] ? req->witness_lens[i] : 1);
        if (!parts[i].wtns) {
            free_job(j);
            cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, wbytes);
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for the witnesses");
        }
        parts[i].wtns_len = req->witness_lens[i];
    }
    uint64_t fp;
    if (sub_copy_hash(req, parts, &fp)) {
        free_job(j);
        cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    j->request_id = xstrdup(rid);
    j->fingerprint = fp;
    j->circ = c;
    j->prio = prio;
    j->state = CUZK_JOB_QUEUED;
    j->error = xstrdup("");
    pthread_cond_init(&j->cv, NULL);

    pthread_mutex_lock(&e->mu);
    if (!e->accepting) {
        pthread_mutex_unlock(&e->mu);
        free_job(j);
        cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_CANCELLED, "the daemon is shutting down");
    }
    if (rid[0]) {
        job *old = find_request(e, rid);
        if (old) {
            cuzk_err err = CUZK_OK;
            if (old->circ != c || old->n_parts != j->n_parts || old->fingerprint != fp)
                err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                                "request_id '%s' was already used for job %s with another "
                                "circuit or other witnesses", rid, old->id);
            else {
                memcpy(job_id, old->id, sizeof old->id);
                *existing = 1;
            }
            pthread_mutex_unlock(&e->mu);
            free_job(j);
            cuzk_budget_release(e->wbudget, CUZK_OWNER_WITNESS, wbytes);
            return err;
        }
    }
    j->seq = ++e->next_seq;
    /* Unguessable-ish and unique: sequence number plus a per-process salt. */
    snprintf(j->id, sizeof j->id, "j%" PRIu64 "-%08" PRIx64, j->seq,
             fnv1a(e->id_salt, &j->seq, sizeof j->seq) & 0xffffffffu);
    j->t_submit = cuzk__now_ms();
    c->holders++;
    j->prev = e->tail;
    if (e->tail)
        e->tail->next = j;
    else
        e->head = j;
    e->tail = j;
    e->submitted++;
    memcpy(job_id, j->id, sizeof j->id);
    if (rid[0])
        CUZK_LOG_INFO(TGT, "job accepted", "job=%s circuit=%s priority=%s partitions=%zu "
                      "request_id=%s", j->id, c->id, cuzk_priority_name(prio), j->n_parts, rid);
    else
        CUZK_LOG_INFO(TGT, "job accepted", "job=%s circuit=%s priority=%s partitions=%zu", j->id,
                      c->id, cuzk_priority_name(prio), j->n_parts);
    admit(e);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

static void fill_result(const job *j, cuzk_job_result *r)
{
    memset(r, 0, sizeof *r);
    memcpy(r->job_id, j->id, sizeof j->id);
    r->request_id = xstrdup(j->request_id);
    r->circuit_id = xstrdup(j->circ->id);
    r->state = j->state;
    r->err = j->err;
    r->error = xstrdup(j->error);
    r->n_parts = j->n_parts;
    r->parts_done = j->done;
    double now = cuzk__now_ms();
    double end = job_live(j) ? now : j->t_end;
    r->queue_ms = (j->t_start ? j->t_start : end) - j->t_submit;
    r->synth_ms = j->synth_ms;
    r->prove_ms = j->prove_ms;
    r->budget_wait_ms = j->wait_ms;
    r->gpu_ms = j->gpu_ms;
    r->g2_ms = j->g2_ms;
    r->total_ms = end - j->t_submit;
    r->seq = j->done_seq;
    if (j->state == CUZK_JOB_COMPLETED) {
        r->parts = calloc(j->n_parts, sizeof *r->parts);
        if (!r->parts)
            abort();
        for (size_t i = 0; i < j->n_parts; i++) {
            r->parts[i] = j->parts[i].res;
            r->parts[i].proof_json = xstrdup(j->parts[i].res.proof_json);
            r->parts[i].public_json = xstrdup(j->parts[i].res.public_json);
        }
    }
}

void cuzk_job_result_free(cuzk_job_result *r)
{
    if (!r)
        return;
    if (r->parts)
        for (size_t i = 0; i < r->n_parts; i++) {
            free(r->parts[i].proof_json);
            free(r->parts[i].public_json);
        }
    free(r->parts);
    free(r->request_id);
    free(r->circuit_id);
    free(r->error);
    memset(r, 0, sizeof *r);
}

cuzk_err cuzk_engine_await(cuzk_engine *e, const char *job_id, uint64_t timeout_ms,
                           cuzk_job_result *out, cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&e->mu);
    job *j = find_job(e, job_id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s' (finished jobs are forgotten "
                         "after %u newer ones)", job_id, e->cfg.retain_jobs);
    }
    j->waiters++;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (timeout_ms % 1000) * 1000000ull;
    dl.tv_sec += (time_t)(timeout_ms / 1000 + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    while (job_live(j)) {
        if (timeout_ms == 0)
            pthread_cond_wait(&j->cv, &e->mu);
        else if (pthread_cond_timedwait(&j->cv, &e->mu, &dl) != 0)
            break;
    }
    j->waiters--;
    fill_result(j, out);
    trim_finished(e);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

cuzk_err cuzk_engine_cancel(cuzk_engine *e, const char *job_id, int *was_live,
                            cuzk_job_state *state, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->mu);
    job *j = find_job(e, job_id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s'", job_id);
    }
    *was_live = job_live(j) && !j->cancel;
    if (*was_live) {
        CUZK_LOG_INFO(TGT, "cancelling job", "job=%s running_partitions=%zu", j->id, j->running);
        cancel_locked(e, j);
        cuzk_budget_wake(e->budget);
    }
    *state = j->state;
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

/* ------------------------------------------------------------------ status */

void cuzk_engine_set_job_end_hook(cuzk_engine *e, cuzk_job_end_fn fn, void *ctx)
{
    pthread_mutex_lock(&e->mu);
    e->job_end_fn = fn;
    e->job_end_ctx = ctx;
    pthread_mutex_unlock(&e->mu);
}

void cuzk_engine_get_status(cuzk_engine *e, cuzk_engine_status *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&e->mu);
    s->uptime_s = (cuzk__now_ms() - e->t0) / 1e3;
    s->workers = e->cfg.partition_workers;
    s->busy_workers = e->busy;
    for (job *j = e->head; j; j = j->next) {
        if (!job_live(j))
            continue;
        if (j->admitted)
            s->jobs_in_flight++;
        else
            s->jobs_queued++;
        if (!j->cancel)
            s->partitions_pending += (unsigned)(j->n_parts - j->next_part);
    }
    s->jobs_submitted = e->submitted;
    s->jobs_completed = e->completed;
    s->jobs_failed = e->failed;
    s->jobs_cancelled = e->cancelled;
    s->partitions_proved = e->parts_proved;
    s->partitions_failed = e->parts_failed;
    s->keys_loaded = e->keys_loaded;
    s->keys_evicted = e->keys_evicted;
    s->prove_ms_total = e->prove_ms_total;
    for (size_t i = 0; i < e->n_circs; i++) {
        const circuit *c = &e->circs[i];
        cuzk_key_tier t = tier_of(c);
        s->keys_bytes += c->bytes;
        s->keys_pinned_bytes += c->pbytes;
        s->keys_gpu_bytes += (uint64_t)__builtin_popcount(c->gmask) * c->gbytes;
        if (t == CUZK_TIER_MAPPED)
            s->keys_mapped_bytes += c->cache_bytes;
        s->keys_in_tier[t]++;
    }
    s->pinned_budget = e->pin_budget;
    s->pinned_peak = e->pin_peak;
    s->pinned_unpins = e->unpins;
    s->keys_pinned = e->pins;
    s->key_budget = e->cfg.key_budget;
    s->gpu_budget_cpu = e->gpu_budget_cpu;
    s->n_devices = e->n_devs;
    for (unsigned d = 0; d < e->n_devs; d++) {
        const gdev *g = &e->devs[d];
        s->devices[d].id = g->id;
        snprintf(s->devices[d].name, sizeof s->devices[d].name, "%s", g->name);
        s->devices[d].workers = g->workers;
        s->devices[d].busy = g->busy;
        s->devices[d].partitions = g->partitions;
        s->devices[d].faults = g->faults;
        s->devices[d].disabled = g->disabled;
        s->devices[d].key_budget = g->kbudget;
        s->devices[d].key_bytes = g->kbytes;
        s->devices[d].key_peak = g->kpeak;
        s->devices[d].key_stages = g->kstages;
        s->devices[d].key_unstages = g->kunstages;
        s->gpu_unstages += g->kunstages;
        s->gpu_workers += g->workers;
        s->gpu_busy += g->busy;
    }
    s->gpu_faults = e->gpu_faults;
    s->gpu_retries = e->gpu_retries;
    s->cpu_fallbacks = e->cpu_fallbacks;
    s->keys_from_cache = e->keys_from_cache;
    s->g2_on_gpu = e->g2_gpu_parts;
    pthread_mutex_unlock(&e->mu);
    cuzk_budget_get_snapshot(e->budget, &s->budget);
    cuzk_budget_get_snapshot(e->wbudget, &s->witness_budget);
}

size_t cuzk_engine_circuits(cuzk_engine *e, cuzk_circuit_info *out, size_t max)
{
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_circs && i < max; i++) {
        const circuit *c = &e->circs[i];
        cuzk_circuit_info *o = &out[i];
        memset(o, 0, sizeof *o);
        snprintf(o->id, sizeof o->id, "%s", c->id);
        snprintf(o->zkey, sizeof o->zkey, "%s", c->zkey);
        o->curve = (int)c->curve;
        o->n_vars = c->n_vars;
        o->n_public = c->n_public;
        o->domain_size = c->domain_size;
        o->resident = c->pk != NULL;
        for (unsigned d = 0; d < e->n_devs; d++)
            if (c->gmask & (1u << d) && e->devs[d].id >= 0 && e->devs[d].id < 32)
                o->gpu_mask |= 1u << e->devs[d].id;
        o->tier = tier_of(c);
        o->gpu_bytes = (uint64_t)__builtin_popcount(c->gmask) * c->gbytes;
        o->pinned_bytes = c->pbytes;
        o->mapped_bytes = c->mapped ? c->cache_bytes : 0;
        o->bytes = c->bytes;
        o->holders = c->holders;
        o->priority = c->priority;
        o->partition_bytes = c->part_bytes;
    }
    size_t n = e->n_circs;
    pthread_mutex_unlock(&e->mu);
    return n;
}

char *cuzk_engine_metrics(cuzk_engine *e)
{
    cuzk_engine_status s;
    cuzk_engine_get_status(e, &s);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
#define GAUGE(name, help, fmt, v)                                                                  \
    cuzk_sb_printf(&sb, "# HELP " name " " help "\n# TYPE " name " gauge\n" name " " fmt "\n", v)
#define COUNTER(name, help, v)                                                                     \
    cuzk_sb_printf(&sb, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %" PRIu64     \
                   "\n", (uint64_t)(v))
    GAUGE("cuzk_uptime_seconds", "Seconds since the engine started.", "%.3f", s.uptime_s);
    GAUGE("cuzk_partition_workers", "Partition workers (pw).", "%u", s.workers);
    GAUGE("cuzk_partition_workers_busy", "Partition workers proving now.", "%u", s.busy_workers);
    GAUGE("cuzk_jobs_queued", "Jobs waiting for admission.", "%u", s.jobs_queued);
    GAUGE("cuzk_jobs_in_flight", "Admitted jobs not yet finished.", "%u", s.jobs_in_flight);
    GAUGE("cuzk_partitions_pending", "Partitions not yet started.", "%u", s.partitions_pending);
    COUNTER("cuzk_jobs_submitted_total", "Jobs accepted.", s.jobs_submitted);
    cuzk_sb_printf(&sb, "# HELP cuzk_jobs_finished_total Jobs ended, by final state.\n"
                        "# TYPE cuzk_jobs_finished_total counter\n"
                        "cuzk_jobs_finished_total{state=\"completed\"} %" PRIu64 "\n"
                        "cuzk_jobs_finished_total{state=\"failed\"} %" PRIu64 "\n"
                        "cuzk_jobs_finished_total{state=\"cancelled\"} %" PRIu64 "\n",
                   s.jobs_completed, s.jobs_failed, s.jobs_cancelled);
    COUNTER("cuzk_partitions_proved_total", "Partitions proved (and self-verified).",
            s.partitions_proved);
    COUNTER("cuzk_partitions_failed_total", "Partitions that failed.", s.partitions_failed);
    GAUGE("cuzk_prove_seconds_total", "Seconds spent proving partitions.", "%.3f",
          s.prove_ms_total / 1e3);
    COUNTER("cuzk_keys_loaded_total", "Proving keys loaded.", s.keys_loaded);
    COUNTER("cuzk_keys_evicted_total", "Proving keys evicted.", s.keys_evicted);
    GAUGE("cuzk_keys_resident_bytes", "Bytes of resident proving keys.", "%" PRIu64, s.keys_bytes);
    GAUGE("cuzk_budget_limit_bytes", "Working memory budget.", "%" PRIu64, s.budget.limit);
    GAUGE("cuzk_budget_in_use_bytes", "Working memory reserved now.", "%" PRIu64, s.budget.in_use);
    GAUGE("cuzk_budget_peak_bytes", "Peak working memory reserved.", "%" PRIu64, s.budget.peak);
    GAUGE("cuzk_budget_waiting", "Reservations waiting for memory now.", "%" PRIu64,
          s.budget.waiting);
    COUNTER("cuzk_budget_waits_total", "Reservations that had to wait.", s.budget.waits);
    GAUGE("cuzk_witness_budget_limit_bytes", "Budget for the witnesses of accepted jobs.",
          "%" PRIu64, s.witness_budget.limit);
    GAUGE("cuzk_witness_bytes", "Witness bytes held for accepted jobs.", "%" PRIu64,
          s.witness_budget.in_use);
    GAUGE("cuzk_gpu_workers", "GPU workers (gw x devices).", "%u", s.gpu_workers);
    GAUGE("cuzk_gpu_workers_busy", "GPU workers running a partition's GPU stage now.", "%u",
          s.gpu_busy);
    COUNTER("cuzk_gpu_faults_total", "GPU stages that faulted.", s.gpu_faults);
    COUNTER("cuzk_gpu_retries_total", "GPU stages retried on another device.", s.gpu_retries);
    COUNTER("cuzk_gpu_cpu_fallbacks_total", "GPU stages redone on the CPU.", s.cpu_fallbacks);
    COUNTER("cuzk_g2_on_gpu_total", "Partitions whose B in G2 ran on a GPU worker.",
            s.g2_on_gpu);
    COUNTER("cuzk_keys_from_cache_total", "Proving keys loaded from their cache file.",
            s.keys_from_cache);
    GAUGE("cuzk_keys_gpu_bytes", "Bytes of proving keys staged on GPUs (all devices).",
          "%" PRIu64, s.keys_gpu_bytes);
    GAUGE("cuzk_keys_pinned_bytes", "Bytes of proving keys page-locked in host memory.",
          "%" PRIu64, s.keys_pinned_bytes);
    GAUGE("cuzk_keys_mapped_bytes", "Bytes of the cache files of evicted keys (mapped tier).",
          "%" PRIu64, s.keys_mapped_bytes);
    GAUGE("cuzk_pinned_budget_bytes", "Budget for page-locked proving keys.", "%" PRIu64,
          s.pinned_budget);
    COUNTER("cuzk_gpu_key_unstages_total", "Staged keys freed to make room on a GPU.",
            s.gpu_unstages);
    COUNTER("cuzk_pinned_key_unpins_total", "Pinned keys unpinned to make room.",
            s.pinned_unpins);
    COUNTER("cuzk_keys_pinned_total", "Proving keys page-locked.", s.keys_pinned);
    COUNTER("cuzk_gpu_budget_cpu_stages_total",
            "GPU stages run on the CPU: the key is larger than every device's GPU budget.",
            s.gpu_budget_cpu);
    cuzk_sb_printf(&sb, "# HELP cuzk_keys_in_tier Proving keys per residency tier.\n"
                        "# TYPE cuzk_keys_in_tier gauge\n");
    for (int t = 0; t < 5; t++)
        cuzk_sb_printf(&sb, "cuzk_keys_in_tier{tier=\"%s\"} %u\n",
                       cuzk_key_tier_name((cuzk_key_tier)t), s.keys_in_tier[t]);
    if (s.n_devices) {
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_key_bytes Bytes of keys staged, by device.\n"
                            "# TYPE cuzk_gpu_key_bytes gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_key_bytes{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].key_bytes);
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_key_budget_bytes GPU key budget, by device.\n"
                            "# TYPE cuzk_gpu_key_budget_bytes gauge\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_key_budget_bytes{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].key_budget);
    }
    if (s.n_devices) {
        cuzk_sb_printf(&sb, "# HELP cuzk_gpu_partitions_total Partition GPU stages done, by "
                            "device.\n# TYPE cuzk_gpu_partitions_total counter\n");
        for (unsigned d = 0; d < s.n_devices; d++)
            cuzk_sb_printf(&sb, "cuzk_gpu_partitions_total{device=\"%d\"} %" PRIu64 "\n",
                           s.devices[d].id, s.devices[d].partitions);
    }
    cuzk_sb_printf(&sb, "# HELP cuzk_memory_in_use_bytes Working memory by owner.\n"
                        "# TYPE cuzk_memory_in_use_bytes gauge\n");
    for (int o = 0; o < CUZK_OWNER__COUNT; o++)
        cuzk_sb_printf(&sb, "cuzk_memory_in_use_bytes{owner=\"%s\"} %" PRIu64 "\n",
                       cuzk_owner_name((cuzk_owner)o), s.budget.owner[o].in_use);
    cuzk_sb_printf(&sb, "# HELP cuzk_key_resident Whether a circuit's proving key is resident.\n"
                        "# TYPE cuzk_key_resident gauge\n");
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_circs; i++)
        cuzk_sb_printf(&sb, "cuzk_key_resident{circuit=\"%s\"} %d\n", e->circs[i].id,
                       e->circs[i].pk != NULL);
    cuzk_sb_printf(&sb, "# HELP cuzk_key_tier A circuit's key residency tier (1 for its tier).\n"
                        "# TYPE cuzk_key_tier gauge\n");
    for (size_t i = 0; i < e->n_circs; i++)
        cuzk_sb_printf(&sb, "cuzk_key_tier{circuit=\"%s\",tier=\"%s\"} 1\n", e->circs[i].id,
                       cuzk_key_tier_name(tier_of(&e->circs[i])));
    pthread_mutex_unlock(&e->mu);
#undef GAUGE
#undef COUNTER
    if (sb.oom) {
        cuzk_sb_free(&sb);
        return NULL;
    }
    return sb.buf;
}
