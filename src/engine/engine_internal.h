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
#include "cuzk/witness.h"
#include "engine/engine.h"
#include "gpu/gpu.h"

#define TGT "cuzk_engine"

/* A configured circuit and its proving key. The id, zkey path and dimensions are constant
 * after cuzk_engine_new; everything else is under e->mu (pk is also written only under
 * e->load_mu, so a loader sees no concurrent load). */
typedef struct {
    char *id, *zkey;
    int preload;
    cuzk_priority priority;
    cuzk_curve curve;
    uint32_t n8q, n_vars, n_public, domain_size;
    uint64_t partition_bytes; /* working set reserved per partition with CPU stages */
    uint64_t gpu_partition_bytes; /* ... whose H and MSMs run on a device (engine.h "Memory") */
    uint64_t seed_scratch;    /* generated key: cuzk_gen_witness's own buffers for a seed */
    cuzk_pk *pk;              /* NULL when not resident */
    uint64_t host_bytes;      /* cuzk_pk_bytes when resident */
    unsigned holders;         /* live jobs + preload calls in progress: never evicted while > 0 */
    uint64_t last_used;       /* e->lru_tick of its last use */
    /* Residency tiers (engine.h "Key residency tiers"). */
    uint64_t gpu_copy_bytes;  /* device bytes of one staged copy (set when loaded) */
    unsigned stage_parts;     /* CUZK_PK_STAGE_* of that copy */
    unsigned gpu_streamed;    /* CUZK_PK_SET_* of its sets streamed from host (0: all resident) */
    uint64_t pinned_bytes;    /* page-locked bytes (0: not pinned) */
    uint32_t pinned_arrays;   /* bit i: array i of cuzk_pk_gpu_arrays is page-locked */
    int pinned_streamed;      /* its streamed sets pinned beyond the automatic budget */
    uint32_t gpu_staged_mask; /* bit per device index it is staged on (set before the upload) */
    unsigned gpu_holds[CUZK_MAX_DEVICES];     /* GPU stages using the key on device d now */
    uint64_t gpu_last_used[CUZK_MAX_DEVICES]; /* lru_tick of its last GPU stage on device d */
    int mapped;               /* a valid cache file exists (its tier while not resident) */
    uint64_t cache_bytes;     /* that file's size */
    int generated;            /* its key is made by cuzk_pk_generate from gen (zkey is "") */
    cuzk_gen_params gen;      /* gen.seed owned */
    /* A generated circuit in runs: its structure, made with its key and freed with it (in
     * host_bytes), from which seed witnesses are replayed; read under e->mu. */
    cuzk_gen_structure *gen_structure;
    /* Witnesses from inputs (engine.h "Inputs"): the program, or the command. */
    cuzk_witness_program *program;
    cuzk_witness_command command; /* command.argv NULL: none; its strings owned */
} circuit;

/* One partition of a job: its witness until it ends, then its proof. */
typedef struct partition {
    uint8_t *witness;         /* the .wtns bytes, charged to e->witness_mem until freed */
    size_t witness_len;
    int seeded;               /* no .wtns: the worker generates the witness of this seed */
    uint64_t seed;
    char *inputs;             /* no .wtns: the worker computes the witness of these inputs
                               * (JSON), charged to e->witness_mem until freed */
    size_t inputs_len;
    cuzk_part_result result;
} partition;

/* A proof request. Every field but cancel_requested is under e->mu; cancel_requested is also
 * read without it (atomically) by the budget waits of its partitions. */
typedef struct job {
    struct job *prev, *next;  /* e->jobs_head list, submission order */
    uint64_t seq;             /* submission order */
    char id[32];
    char *request_id;         /* "" when none */
    char *owner;              /* cuzk_submit.owner, "" when none */
    uint64_t fingerprint;     /* of the witnesses, to tell a reused request_id apart */
    circuit *circ;
    cuzk_priority priority;
    cuzk_job_state state;
    int admitted, cancel_requested;
    size_t n_parts, next_part, parts_running, parts_done;
    partition *parts;
    cuzk_err err;
    char *error;
    double t_submit, t_start, t_end, synth_ms, prove_ms, budget_wait_ms, gpu_ms, g2_ms;
    double witness_ms;        /* witnesses made from seeds or inputs */
    uint64_t done_seq;        /* completion order (0 while live) */
    unsigned waiters;         /* callers in cuzk_engine_await: the job is not forgotten meanwhile */
    pthread_cond_t ended_cv;
} job;

/* A device in use by GPU workers; under e->mu once the workers run. */
typedef struct {
    int id;                   /* CUDA device number (emulated: the index) */
    char name[64];
    unsigned workers, busy_workers, fault_streak;
    uint64_t started;         /* stages taken (retries included): the spread's tie-break */
    uint64_t partitions, g2_partitions, faults;
    int disabled;
    /* GPU tier: staged keys' bytes against the device's key budget. tier_waiters: GPU workers
     * waiting for room (at most one; the others wait behind it, see cuzk__key_gpu_acquire). */
    uint64_t key_budget, key_bytes, key_peak, key_stages, key_unstages;
    unsigned tier_waiters;
    /* The automatic key budget's terms (cuzk__key_setup_tiers), and the workers' batch-affine
     * setting when fitted (cuzk__gpu_fit_workers; chunk 0: the default). */
    uint64_t free_at_start, memory_margin, worker_scratch, ba_chunk;
    int ba_quads;
} gpu_device;

/* A partition's GPU stage, queued by its partition worker, which owns it (on its stack) and
 * waits for done. Under e->mu while queued or being run. */
typedef struct gpu_stage {
    struct gpu_stage *next;   /* e->gpu_queue_head list */
    job *job;
    size_t part_index;
    cuzk_prove_state *prove_state;
    uint32_t faulted_devices; /* bit per device index that faulted on it */
    int done, g1_ok, g2_ok;
    int device;               /* index of the device that ran it (-1: none) */
    int g2_on_device;         /* B in G2 runs in the GPU stage too */
    int g2_only;              /* B in G2 alone, for the dedicated device (gpus.g2_device) */
    int batching;             /* in a GPU worker's batch now: no other worker takes it */
    int batched;              /* its witness MSMs were offered to a batch (done or not) */
    cuzk_err err;
    cuzk_errbuf eb;
    double gpu_ms;
} gpu_stage;

typedef struct {
    cuzk_engine *engine;
    unsigned device;          /* index into e->devices */
    pthread_t thread;
} gpu_worker;

struct cuzk_engine {
    cuzk_engine_config cfg;   /* with the defaults filled in; constant after start */
    double start_ms;
    uint64_t id_salt;
    unsigned stage_parts;     /* CUZK_PK_STAGE_*: B in G2 when g2 may run on the GPU, the rows
                               * unless synthesis stays on the CPU (keys may drop the rows) */
    cuzk_budget *working_mem; /* partition working sets (cfg.working_budget bytes) */
    cuzk_budget *witness_mem; /* witness bytes of accepted jobs (cfg.witness_budget bytes) */
    /* Working memory held aside for the CPU stages of a partition that reserved only its
     * device-path working set (engine.h "Memory"); used by one partition at a time, under
     * fallback_mu. 0: no circuit's CPU stages fit the budget beside it. */
    uint64_t fallback_reserve;
    pthread_mutex_t fallback_mu;

    /* mu guards everything below except where noted. */
    pthread_mutex_t mu;
    pthread_mutex_t load_mu;  /* one key load at a time; taken before mu */
    pthread_mutex_t pin_mu;   /* page-locking calls on pin_ctx */
    pthread_cond_t work_cv;   /* a partition may be available, or stopping */
    pthread_cond_t idle_cv;   /* a job ended or a partition ended */
    cuzk_job_end_fn job_end_fn; /* cuzk_engine_set_job_end_hook; called under mu */
    void *job_end_ctx;
    pthread_cond_t tier_cv;   /* a GPU stage released its key, or a GPU worker got room */

    circuit *circuits;
    size_t n_circuits;
    uint64_t lru_tick;

    /* Jobs and partition workers. */
    job *jobs_head, *jobs_tail;
    size_t n_finished;
    uint64_t next_seq, next_done_seq;
    int accepting, stopping;
    pthread_t *partition_threads;
    unsigned n_partition_threads, busy_partition_workers;

    /* GPU workers and their queue of GPU stages. */
    gpu_device devices[CUZK_MAX_DEVICES];
    unsigned n_devices;
    int gw_auto; /* gpus.workers_per_device automatic (cuzk__key_setup_tiers picks 2 or 1) */
    gpu_worker *gpu_workers;
    unsigned n_gpu_workers;
    gpu_stage *gpu_queue_head, *gpu_queue_tail;
    int g2_device;            /* index of the device that runs only B in G2 (-1: none) */
    uint32_t faulty_devices;  /* bit per device index whose stages fault (tests) */
    pthread_cond_t gpu_queue_cv; /* a GPU stage queued, or stopping */
    pthread_cond_t gpu_done_cv;  /* a GPU stage ended */
    int gpu_stopping;

    /* Pinned tier: page-locked key bytes against their budget. pin_ctx: a device context to
     * page-lock with (real GPUs only). */
    uint64_t pinned_budget, pinned_bytes, pinned_peak;
    int pinned_auto; /* memory.pinned_budget "auto": a key's streamed sets are always pinned */
    cuzk_gpu_ctx *pin_ctx;

    /* Counters. */
    uint64_t submitted, completed, failed, cancelled, partitions_proved, partitions_failed;
    uint64_t keys_loaded, keys_evicted, keys_from_cache, keys_pinned, key_unpins;
    uint64_t gpu_faults, gpu_retries, cpu_fallbacks, g2_gpu_partitions;
    uint64_t stream_batches; /* batches of witness MSMs over streamed sets (gpus.stream_batch) */
    uint64_t gpu_budget_cpu_stages; /* GPU stages run on the CPU: key above every GPU budget */
    double prove_ms_total;
    uint64_t working_allocated;    /* cuzk_engine_status.working_allocated */
    uint64_t witness_pinned_bytes; /* partitions' witness copies page-locked */
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
    return e->n_devices && !e->cfg.emulated_devices;
}

/* The GPU backend's name for circuit c's curve. */
static inline cuzk_gpu_curve gpu_curve(const circuit *c)
{
    return c->curve == CUZK_CURVE_BLS12_381 ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
}

/* The machine's RAM (or what cuzk__engine_set_ram set). */
uint64_t phys_ram(void);
/* For tests: the RAM the engines made from now on see (0: the machine's). */
void cuzk__engine_set_ram(uint64_t bytes);
/* Test hook: a preloaded generated key releases its host copies with emulated devices too
 * (key_residency.c release_generated); its partitions then fail naming the released sets. */
void cuzk__engine_set_release_emulated(int on);

/* ------------------------------------------------------------------ engine.c */

circuit *cuzk__engine_find_circuit(cuzk_engine *e, const char *id);
/* Room for a .wtns's header beside its values (a command's out.wtns is read whole). */
#define CUZK__WTNS_HEADER_MAX 256
/* Bytes of a witness the partition worker makes (from a seed or inputs; 0: received); a
 * seed's include the generator's buffers, held only while it runs. */
static inline uint64_t cuzk__made_witness_bytes(const circuit *c, const partition *p)
{
    if (p->seeded)
        return 32ull * c->n_vars + c->seed_scratch;
    if (p->inputs)
        return 32ull * c->n_vars + (c->command.argv ? CUZK__WTNS_HEADER_MAX : 0);
    return 0;
}
/* Whether c's partitions reserve their device-path working set (gpu_partition_bytes): a GPU
 * worker exists, c's key is resident, and some device's budget takes it. Called under
 * e->mu. */
int cuzk__partition_on_gpu(const cuzk_engine *e, const circuit *c);
/* Working set of a partition of c whose H and G1 MSMs run on a device: the prover's copy of
 * the witness; a, b, c when the key's staged copy has no rows (synthesis on the host); the
 * CPU's B in G2 unless gpus.g2 = "gpu". Set again once the key's staged parts are known. */
uint64_t cuzk__gpu_partition_bytes(const cuzk_engine *e, const circuit *c);
/* Working set of one partition of c: its prover's (partition_bytes, or gpu_partition_bytes
 * with on_gpu), and the witness the worker makes (made_bytes). */
static inline uint64_t cuzk__partition_need(const circuit *c, int on_gpu, uint64_t made_bytes)
{
    return (on_gpu ? c->gpu_partition_bytes : c->partition_bytes) + made_bytes;
}
/* "bls12381 sparse-bits 1024 constraints seed 1" */
void cuzk__generate_desc(const circuit *c, char *out, size_t n);

/* ------------------------------------------------------------------ key_residency.c */

cuzk_key_tier cuzk__key_tier(const circuit *c);
cuzk_err cuzk__key_pin_arrays(cuzk_engine *e, cuzk_pk *pk, int pin, uint32_t arrays,
                              cuzk_errbuf *eb);
int cuzk__key_gpu_reserve(cuzk_engine *e, circuit *c, unsigned d, int *upload);
int cuzk__key_gpu_acquire(cuzk_engine *e, circuit *c, unsigned d, int *upload);
void cuzk__key_gpu_release(cuzk_engine *e, circuit *c, unsigned d);
void cuzk__key_log_staged(const circuit *c, int dev, double ms);
/* A key's point sets in the order of their CUZK_PK_SET_* bits (A, B1, C, H, B2): device bytes
 * of each staged whole (0: not staged) and streamed (its map of points at infinity). */
typedef struct {
    uint64_t resident[5], streamed[5];
} cuzk__key_sets;
/* Which sets of a key stream (CUZK_PK_SET_* bits) for a copy within `budget` bytes: none when
 * every set fits; else the chunk buffers (`buffers` bytes) are reserved and the sets kept
 * whole in the order H, C (their MSMs run on every partition with dense scalars), A, B1, B2,
 * each that fits what is left, the others streamed. *bytes: the copy's device bytes (above
 * budget when even every set streamed does not fit). */
unsigned cuzk__key_stream_plan(const cuzk__key_sets *s, uint64_t budget, uint64_t buffers,
                               uint64_t *bytes);
/* Which point sets of a key to page-lock (CUZK_PK_SET_* bits; every array of the key for
 * CUZK__PIN_WHOLE) when it loads, from the bytes of its five sets (set[i]: A, B1, C, H, B2)
 * and of all its arrays (whole), the sets its staged copy streams and the pinned budget
 * (`room` of it free once unused keys are unpinned): the whole key when it fits; else, with
 * the automatic budget (auto_budget), every streamed set, whatever its size; else the
 * streamed sets that fit, B2 first (the largest), then A, B1, C, H; 0 for none. *need: their
 * bytes. */
#define CUZK__PIN_WHOLE 0x80000000u
unsigned cuzk__key_pin_plan(const uint64_t set[5], uint64_t whole, unsigned streamed,
                            uint64_t room, int auto_budget, uint64_t *need);
int cuzk__key_cache_valid(const cuzk_engine *e, const circuit *c, uint64_t *bytes);
cuzk_err cuzk__key_ensure(cuzk_engine *e, circuit *c, int *was_loaded, double *ms,
                          cuzk_errbuf *eb);
void cuzk__key_setup_tiers(cuzk_engine *e);
void cuzk__key_stage_preloaded(cuzk_engine *e, circuit *c);

/* ------------------------------------------------------------------ scheduler.c */

void cuzk__job_free(job *j);
void cuzk__job_finish(cuzk_engine *e, job *j, cuzk_job_state st, cuzk_err err, const char *msg);
void cuzk__job_cancel_locked(cuzk_engine *e, job *j);
void cuzk__partition_drop_witness(cuzk_engine *e, partition *p);
job *cuzk__sched_pick(cuzk_engine *e);
unsigned cuzk__sched_live_jobs(cuzk_engine *e);

/* ------------------------------------------------------------------ partition_worker.c */

void *cuzk__partition_worker_main(void *arg);

/* ------------------------------------------------------------------ gpu_worker.c */

int cuzk__gpu_device_takes(const cuzk_engine *e, unsigned d, uint32_t tried, const circuit *c,
                           int g2_only);
int cuzk__gpu_any_device_takes(const cuzk_engine *e, uint32_t tried, const circuit *c,
                               int g2_only);
/* For tests: device index d's GPU stages fault from now on (on 1) or run again (on 0). */
void cuzk__gpu_set_faulty(cuzk_engine *e, unsigned d, int on);
void *cuzk__gpu_worker_main(void *arg);
cuzk_err cuzk__gpu_setup_devices(cuzk_engine *e, cuzk_errbuf *eb);
void cuzk__gpu_fit_workers(cuzk_engine *e);

#endif
