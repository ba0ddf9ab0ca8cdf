/* Internal to src/engine: the engine's shared state and the functions its files call in each
 * other. Locking: one mutex (e->mu) guards the job list, the circuits' bookkeeping, the device
 * table and the counters; proving, key loading and budget waits happen outside it. Key loads are
 * serialised by e->load_mu (one key at a time: a load is already parallel inside, and two loads
 * at once would double the peak); e->pin_mu serialises page-locking calls. */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/log.h"
#include "engine/engine.h"
#include "gpu/gpu.h"

#define TGT "cuzk_engine"

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

/* ------------------------------------------------------------------ small helpers */

static inline char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort(); /* small strings only; the engine cannot continue without memory for them */
    return d;
}

static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline int job_live(const job *j)
{
    return j->state == CUZK_JOB_QUEUED || j->state == CUZK_JOB_RUNNING;
}

static inline int real_gpus(const cuzk_engine *e)
{
    return e->n_devs && !e->cfg.test_fake_gpus;
}

/* The GPU backend's name for circuit c's curve. */
static inline cuzk_gpu_curve gpu_curve(const circuit *c)
{
    return c->curve == CUZK_CURVE_BLS12_381 ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
}

static inline uint64_t phys_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (8ull << 30);
}

/* ------------------------------------------------------------------ engine.c */

circuit *cuzk__engine_find_circuit(cuzk_engine *e, const char *id);

/* ------------------------------------------------------------------ key_residency.c */

cuzk_key_tier cuzk__key_tier(const circuit *c);
cuzk_err cuzk__key_pin_arrays(cuzk_engine *e, cuzk_pk *pk, int pin, cuzk_errbuf *eb);
int cuzk__key_gpu_reserve(cuzk_engine *e, circuit *c, unsigned d, int *upload);
int cuzk__key_gpu_acquire(cuzk_engine *e, circuit *c, unsigned d, int *upload);
void cuzk__key_gpu_release(cuzk_engine *e, circuit *c, unsigned d);
void cuzk__key_log_staged(const circuit *c, int dev, double ms);
int cuzk__key_cache_valid(const cuzk_engine *e, const circuit *c, uint64_t *bytes);
cuzk_err cuzk__key_ensure(cuzk_engine *e, circuit *c, int *was_loaded, double *ms,
                          cuzk_errbuf *eb);
void cuzk__key_setup_tiers(cuzk_engine *e);
void cuzk__key_stage_preloaded(cuzk_engine *e, circuit *c);

/* ------------------------------------------------------------------ scheduler.c */

void cuzk__job_free(job *j);
void cuzk__job_finish(cuzk_engine *e, job *j, cuzk_job_state st, cuzk_err err, const char *msg);
void cuzk__job_cancel_locked(cuzk_engine *e, job *j);
void cuzk__partition_drop_witness(cuzk_engine *e, part *p);
job *cuzk__sched_pick(cuzk_engine *e);
unsigned cuzk__sched_live_jobs(cuzk_engine *e);

/* ------------------------------------------------------------------ partition_worker.c */

void *cuzk__partition_worker_main(void *arg);

/* ------------------------------------------------------------------ gpu_worker.c */

int cuzk__gpu_device_takes(const cuzk_engine *e, unsigned d, uint32_t tried, const circuit *c);
int cuzk__gpu_any_device_takes(const cuzk_engine *e, uint32_t tried, const circuit *c);
void *cuzk__gpu_worker_main(void *arg);
cuzk_err cuzk__gpu_setup_devices(cuzk_engine *e, cuzk_errbuf *eb);
void cuzk__gpu_fit_workers(cuzk_engine *e);

#endif
