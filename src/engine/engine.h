/* The proving engine behind cuzk-daemon: circuits with resident proving keys, jobs, a
 * priority scheduler, partition workers and one working-memory budget. Usable without gRPC
 * (tests/engine drive it directly); src/rpc only translates messages.
 *
 * Jobs. A job is one proof request: a circuit and one witness (.wtns bytes) per partition.
 * Submission parses and checks every witness against the circuit (curve, length, values < r)
 * so a corrupt or mismatched witness is refused at once, with a message naming the partition,
 * and never reaches a worker. A job's states: QUEUED (accepted; waiting for admission or for a
 * worker) -> RUNNING (a partition started) -> COMPLETED | FAILED | CANCELLED. A non-empty
 * request_id makes submission idempotent: the same id returns the same job while the engine
 * remembers it (every live job and the last `retain_jobs` finished ones).
 *
 * Scheduling. Priority classes CRITICAL > HIGH > NORMAL > LOW, FIFO (submission order) within
 * a class. At most max_jobs_in_flight jobs are admitted; queued jobs are admitted in the same
 * order. Each free worker takes the next partition of the best admitted job (so the partitions
 * of the oldest job of the highest class go first, and one job's partitions spread over all
 * workers).
 *
 * Memory. working_budget 0 is half the RAM, lowered after the preloads to the RAM less the
 * preloaded keys' host bytes and a sixteenth when that is less (witness_budget 0 follows it).
 * Before a partition starts, its worker reserves the partition's working set on the
 * working budget as one reservation (a partial hold could deadlock two workers); when the
 * budget is full it waits (FIFO), it never overcommits. The reservation is released the moment
 * the partition ends, and the partition's witness bytes are freed then too. A partition larger
 * than the whole budget is refused at submission (OUT_OF_BUDGET). The working set is:
 *  - with CPU stages (no GPU worker, or the key not resident on a device that takes it):
 *    cuzk_engine_partition_bytes, the witness copy, a, b, c, h and the CPU MSMs' scratch;
 *  - with device stages (H and the G1 MSMs on a device): the witness copy, a, b, c when the
 *    key's staged copy has no rows (the partition worker synthesizes), plus B in G2's CPU
 *    scratch unless gpus.g2 = "gpu" (returned once the witness sends B in G2 to a device).
 *    Far smaller: at 2^27 it is 4 GiB (17 without staged rows) against about 50.
 * Such a partition that then needs CPU stages (every device faulted, or none takes its key any
 * more) reserves the rest of its CPU working set, ahead of queued reservations and one such
 * partition at a time (fallback_mu). Deadlock cannot happen: with GPU workers, the engine
 * computes a fallback reserve at start (the largest CPU-minus-device working set over the
 * circuits whose CPU working set fits the budget), and admits a device-stage partition only
 * while that reserve stays free beside it; so the partitions waiting for fallback_mu never hold
 * so much that the one holding it cannot get its rest. A circuit whose CPU working set exceeds
 * the whole budget has no CPU fallback: a GPU fault fails its partition, naming the budget.
 *
 * Witnesses. The .wtns bytes of accepted jobs are charged to their own budget until each
 * partition ends; a request whose witnesses do not fit beside those already held is refused
 * (CUZK_OUT_OF_BUDGET, "busy": retry later) instead of growing memory without bound.
 *
 * Keys. Every configured circuit's zkey header is read at start (cheap: structure only);
 * preloaded keys are loaded (cuzk_pk_load) before the engine is ready, others on first use.
 * A key is held by every live job of its circuit; when loading a key would make the resident
 * keys exceed key_budget, the least recently used keys that no job holds are evicted first.
 * cuzk_engine_evict_key evicts at once unless a job holds the key.
 *
 * Key residency tiers. Each key is in the highest of: "gpu" (its point sets are staged on at
 * least one device), "pinned" (resident and its uploaded arrays page-locked), "host"
 * (resident), "mapped" (not resident, but a valid cache file exists: the next load reads it at
 * disk / page-cache speed), "cold" (only its zkey). Budgets:
 *  - gpu_budget, per device: bytes of staged keys (cuzk_pk_gpu_bytes; B in G2 counted when G2
 *    may run on the GPU). A GPU stage needs its key staged on its device: a staged key is held
 *    there while the stage runs; staging one that does not fit first unstages the least
 *    recently used staged keys no running stage holds on that device (keys without live jobs
 *    before keys of live jobs). When only held keys are in the way the GPU worker waits for
 *    their stages to end (and other GPU workers of that device wait behind it, so it is not
 *    starved). A key larger than every device's gpu_budget even without its rows is staged
 *    with some of its point sets streamed: they stay in (pinned) host memory and every MSM
 *    over one copies it to the device in chunks of gpu_stream_chunk bytes, the next chunk's
 *    copy beside this chunk's MSM; the copy then counts its rows where they fit beside the
 *    rest (else synthesis moves to the partition workers), the sets kept whole (H and C first,
 *    then A, B1, B2, each that fits), the streamed sets' maps of points at infinity and the
 *    chunk and batch buffers of each GPU worker. Only a key that does not fit even so is never staged: its GPU
 *    stages run on the CPU (counted as gpu_budget_cpu). Default (0): the device's free memory
 *    at start less gw times a scratch estimate for the largest circuit and a margin; unlimited on
 *    emulated GPUs. No GPU workers: no GPU tier. When every circuit is preloaded (and
 *    no_ba_fit is 0), the GPU workers' batch-affine chunk is then fitted to what the keys'
 *    staged bytes leave (up to 16 GiB each, quads from 8 GiB: faster large MSMs), and the
 *    default budget reserves their larger scratch instead, so it still holds those keys.
 *  - pinned_budget: bytes of page-locked key arrays (cuzk_pk_gpu_arrays), only with GPU
 *    workers. A key is pinned when it is loaded, after unpinning the least recently used
 *    pinned keys no job holds if needed; a key that does not fit stays "host". 0: nothing is
 *    pinned; CUZK_BUDGET_AUTO: a quarter of the RAM. Pinned uploads run at full bus speed.
 *  - key_budget (host, above). A key evicted from the host whose cache file is valid (header,
 *    format, length and the zkey's size / mtime / inode, cuzk_pk_cache_check) becomes
 *    "mapped", else "cold". A load always goes through cuzk_pk_cache_load, which checks the
 *    zkey's identity and every hash again, so a stale or corrupt cache is never used: the zkey
 *    is loaded instead and the cache rewritten.
 * Evicting a key from the host unpins it and frees its staged copies first.
 *
 * Generated keys. A circuit configured with generate instead of a zkey has a test key made in
 * memory by cuzk_pk_generate (on the engine's CPU threads, pw x prove_threads) where a zkey
 * would be loaded: at start when preloaded, else on first use. Such a key is never written
 * (no cache file): evicted, it is "cold" and is generated again on its next use. Its bytes
 * count in every tier budget as a loaded key's do. Logs and circuit lists carry
 * CUZK_PK_GENERATED_NOTE for it. Its jobs may send witness seeds instead of witnesses: each
 * seed is one partition's witness (cuzk_gen_witness with the seed in decimal as its witness
 * seed, the witness `cuzk gen-witness --seed SEED` writes), made by the partition worker on
 * prove_threads threads (a segmented circuit's runs at once; otherwise the structure beside
 * the values) inside the partition's working-set reservation, which then also holds 32 n_vars
 * bytes for it and, while it is made, the generator's own buffers
 * (cuzk_gen_witness_scratch_bytes: about 33 MiB, or 2.1 MiB a thread segmented, whatever the
 * size); no witness bytes are received or charged to the witness budget. The key of a circuit
 * in runs (generate_segment) keeps the circuit's structure beside it (cuzk_gen_structure_new,
 * about 12.5 bytes a sparse-bits constraint: 1.7 GB at 2^27, counted in the key's host bytes
 * and freed with it), and seed witnesses are replayed from it, 3-4x faster.
 * A preloaded generated key staged on every usable GPU at start gives back the host copies of
 * its resident point sets (B2's only with gpus.g2 = "gpu"; streamed sets keep theirs) and of
 * its A and B rows when they are staged: its host bytes drop by them (at 2^27 BLS12-381, 77
 * GB of sets and 19 GB of rows of ~104), the automatic working budget grows by as much, and
 * the GPU tier never unstages it. A CPU stage over a released set or synthesis without the
 * rows (a GPU fault's fallback) fails its partition with CUZK_UNSUPPORTED naming them.
 *
 * Inputs. A circuit configured with circom's witness program (wasm) or a witness command
 * (witness_cmd) takes, instead of witnesses, one JSON object of circuit inputs per partition
 * (input.json as snarkjs reads it). The program is opened (translated and built unless
 * cached) when the engine starts, which fails if it cannot be built, is for another curve
 * than the key's, or computes another number of values than the key's n_vars. Submission
 * parses every input object and, with a program, checks it as the program would (unknown,
 * missing and mis-sized signals, values not below r: cuzk_witness_check), so such a request
 * is refused at once naming the signal. The partition worker computes the witness
 * (cuzk_witness_compute, or the command then the .wtns it wrote, parsed and checked as a
 * submitted one) inside the partition's working-set reservation, which then also holds its
 * 32 n_vars bytes (and a .wtns header); the inputs' bytes are charged to the witness budget
 * until the partition ends. A failed assert (or a command that fails or runs past its time
 * limit) fails the job with the circuit's message; the program runs in a child process, so
 * nothing it does reaches the engine.
 *
 * Budgets too small. A request is refused at submission (CUZK_OUT_OF_BUDGET, naming the
 * budget's config key, its size and the need) when one partition's working set is larger than
 * the whole working budget, or its witnesses larger than the whole witness budget: such a
 * request could never run.
 *
 * Pipeline. Partition workers (pw) take partitions as above. With GPU workers (gw per device,
 * each with its own stream and scratch on its device), a partition worker checks the witness
 * (synthesis of a, b, c is left to the GPU stage, which computes them on the device from the
 * key's staged rows, unless synth_on_cpu: then the partition worker synthesizes and the GPU
 * stage uploads them; a stage that falls back to the CPU synthesizes there first), queues the
 * partition for the GPU workers, runs B in G2 on its own CPU threads meanwhile (unless g2_on_gpu
 * says the GPU worker does it: always, or with auto when the witness has many full-width values,
 * where the CPU would take far longer), waits for the GPU stage (H and the G1 MSMs), then finalises
 * and self-verifies. So a GPU worker takes the next partition as soon as its GPU work is done, and
 * partitions of one job run on every device: a queued stage goes to the device with a free
 * worker that has the fewest busy workers, then the fewest stages started. With g2_dedicated, B
 * in G2 bound for a GPU is a stage of its own for device g2_device, beside the G1 stage on
 * another. A GPU fault retries the partition's GPU stage on
 * another device it has not failed on, else on the CPU; three faults in a row disable a device.
 * Faults, retries and CPU fallbacks are counted (status, metrics).
 *
 * Cancel. A queued job ends at once. A running job starts no new partition; partitions already
 * proving finish (a partition is the unit of work), release their memory, and then the job
 * ends CANCELLED.
 *
 * Everything is thread safe. */
#ifndef CUZK_ENGINE_H
#define CUZK_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/groth16.h"
#include "cuzk/pool.h"

typedef enum {
    CUZK_PRIO_DEFAULT = 0, /* the circuit's configured priority */
    CUZK_PRIO_LOW = 1,
    CUZK_PRIO_NORMAL = 2,
    CUZK_PRIO_HIGH = 3,
    CUZK_PRIO_CRITICAL = 4,
} cuzk_priority;

typedef enum {
    CUZK_JOB_UNKNOWN = 0,
    CUZK_JOB_QUEUED = 1,
    CUZK_JOB_RUNNING = 2,
    CUZK_JOB_COMPLETED = 3,
    CUZK_JOB_FAILED = 4,
    CUZK_JOB_CANCELLED = 5,
} cuzk_job_state;

const char *cuzk_priority_name(cuzk_priority p); /* "low" ... "critical", "default" */
/* "low", "normal", "high", "critical" (case-insensitive). */
cuzk_err cuzk_priority_parse(const char *s, cuzk_priority *out, cuzk_errbuf *eb);
const char *cuzk_job_state_name(cuzk_job_state s); /* "queued" ... */

typedef struct {
    const char *id;       /* unique circuit name clients use */
    const char *zkey;     /* path of the .zkey (NULL or "" with generate) */
    int preload;          /* load before ready (else on first use) */
    cuzk_priority priority; /* default priority of its jobs (DEFAULT: NORMAL) */
    /* Instead of a zkey: a test key generated in memory (see "Generated keys"); its nthreads
     * and witness_seed are ignored. Exactly one of zkey and generate. */
    const cuzk_gen_params *generate;
    /* Witnesses from circuit inputs (see "Inputs"): circom's witness program (NULL or "":
     * none) and where its build is cached (NULL or "": beside it), or instead a command
     * (argv, NULL-terminated; NULL: none) with its time limit (0: 60 s) and the directory its
     * scratch directories are made in (NULL or "": $TMPDIR, else /tmp). */
    const char *wasm, *wasm_cache;
    const char *const *witness_cmd;
    uint64_t witness_timeout_ms;
    const char *witness_scratch_dir;
} cuzk_engine_circuit;

typedef struct {
    unsigned partition_workers;  /* pw: partitions proved at once (0: 1) */
    unsigned prove_threads;      /* threads per partition prove (0: cores / pw, at least 1) */
    unsigned max_jobs_in_flight; /* j (0: unlimited) */
    uint64_t working_budget;     /* bytes for partition working sets (0: 1/2 of RAM) */
    uint64_t key_budget;         /* bytes of resident proving keys (0: unlimited) */
    int no_verify;               /* 1: skip the self-verification of proofs */
    unsigned retain_jobs;        /* finished jobs remembered for await / request_id (0: 1024) */
    unsigned max_partitions;     /* witnesses per request (0: 1024) */
    const cuzk_engine_circuit *circuits;
    size_t n_circuits;
    /* GPU workers (see "Pipeline" above). */
    cuzk_backend_kind backend;   /* AUTO: every usable device; CPU: none; GPU: fail without one */
    const int *gpu_devices;      /* CUDA device numbers to use (n_gpu_devices 0: all) */
    size_t n_gpu_devices;
    unsigned gpu_workers_per_device; /* gw (0: automatic, 2, or 1 when two workers' scratch
                                      * would leave the largest key no room on a device) */
    int g2_on_gpu;               /* B in G2 on the GPU worker (1), the partition worker (0),
                                  * or per partition (2, auto): on the GPU when the witness has
                                  * at least g2_gpu_min_scalars values other than 0 and 1 */
    uint64_t g2_gpu_min_scalars; /* auto's threshold (0: 262144) */
    int g2_dedicated;            /* 1: B in G2 that goes to a GPU runs on device g2_device (a
                                  * CUDA device number in use; emulated: the index) alone,
                                  * which runs no G1 stage while another device works; 0
                                  * (default): on the device of the partition's G1 stage */
    int g2_device;
    int synth_on_cpu;            /* 1: partition workers synthesize a, b, c and GPU stages
                                  * upload them; 0 (default): a GPU stage synthesizes on the
                                  * device from the key's rows, staged with its points */
    int gpu_tables;              /* 1: stage keys with fixed-base tables of their points
                                  * (CUZK_PK_STAGE_TABLES) when those fit the GPU budget */
    int no_ba_fit;               /* 1: GPU workers keep the default batch-affine chunk; 0
                                  * (default): fitted to the memory the preloaded keys leave
                                  * (see "Key residency tiers") */
    /* Key cache (see "Keys"): 1 to write and use ZKEY.cuzkcache files, in key_cache_dir when
     * it is not NULL or "" (else next to each zkey). */
    int key_cache;
    const char *key_cache_dir;
    /* Witness bytes of accepted jobs (0: 1/4 of working_budget, at least 256 MiB). */
    uint64_t witness_budget;
    /* For tests: emulated GPUs, whose GPU stages run on the CPU in the GPU worker threads and
     * whose key tiers are accounting only, so the GPU pipeline, tiers, retries and fallbacks
     * run without CUDA (config key gpus.emulated_devices); bit d of emulated_faulty_devices
     * makes device index d (emulated or real) fault on every GPU stage instead of running it
     * (config key gpus.emulated_faulty_devices). */
    unsigned emulated_devices;
    uint32_t emulated_faulty_devices;
    /* Key residency tiers (see "Key residency tiers"): bytes of staged keys per device (0:
     * automatic) and of page-locked key arrays (0: none; CUZK_BUDGET_AUTO: automatic). */
    uint64_t gpu_budget;
    uint64_t pinned_budget;
    /* Chunk bytes of point sets streamed from host memory (see "Key residency tiers"; 0:
     * CUZK_STREAM_CHUNK_DEFAULT). */
    uint64_t gpu_stream_chunk;
    /* Partitions of one key whose witness MSMs over its streamed sets run as one batch on a
     * GPU worker, each chunk copied once for all of them (0: CUZK_STREAM_BATCH_DEFAULT; 1:
     * each partition alone). Each worker's scalar buffers for a batch take up to this many
     * chunks more, counted in the budget. */
    unsigned gpu_stream_batch;
} cuzk_engine_config;

#define CUZK_STREAM_CHUNK_DEFAULT ((uint64_t)1 << 30)
#define CUZK_STREAM_BATCH_DEFAULT 5u
#define CUZK_STREAM_BATCH_MAX 16u

#define CUZK_BUDGET_AUTO UINT64_MAX

typedef enum {
    CUZK_TIER_COLD = 0,
    CUZK_TIER_MAPPED = 1,
    CUZK_TIER_HOST = 2,
    CUZK_TIER_PINNED = 3,
    CUZK_TIER_GPU = 4,
} cuzk_key_tier;

const char *cuzk_key_tier_name(cuzk_key_tier t); /* "cold", "mapped", "host", "pinned", "gpu" */

typedef struct cuzk_engine cuzk_engine;

/* Reads every circuit's zkey header and loads the preloaded keys (progress is logged under
 * target cuzk_engine), then starts the workers. */
cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *cfg, cuzk_errbuf *eb);
/* Stops accepting jobs (submit then fails with CUZK_CANCELLED "shutting down"), waits up to
 * grace_ms for every accepted job to end, then cancels what remains and waits for running
 * partitions. Returns the number of jobs that had to be cancelled. Idempotent. */
unsigned cuzk_engine_shutdown(cuzk_engine *e, uint64_t grace_ms);
/* Shuts down (grace 0) if needed and frees everything. */
void cuzk_engine_free(cuzk_engine *e);

/* ------------------------------------------------------------------ jobs */

typedef struct {
    const char *circuit_id;
    const char *request_id; /* NULL or "": not idempotent */
    cuzk_priority priority;
    size_t n_witnesses;
    const uint8_t *const *witnesses; /* .wtns bytes, copied */
    const size_t *witness_lens;
    /* Instead of witnesses (n_witnesses 0), for a circuit with a generated key: one witness
     * seed per partition (see "Generated keys"). */
    size_t n_witness_seeds;
    const uint64_t *witness_seeds;
    /* Opaque id of the submitter (the daemon's token id; NULL or "": none, at most 64
     * bytes). A request_id is matched only among the jobs of the same owner. */
    const char *owner;
    /* Instead of witnesses, for a circuit with a witness program or command: one JSON object
     * of circuit inputs per partition (NUL-terminated; see "Inputs"). */
    size_t n_inputs;
    const char *const *inputs;
} cuzk_submit;

/* Accepts a job. *job_id receives its id (a NUL-terminated string, at most 32 bytes with the
 * NUL). *existing = 1 when request_id named a job that already existed (then its id).
 * Errors: CUZK_NOT_FOUND (unknown circuit), CUZK_INVALID_ARGUMENT (no witness, too many,
 * request_id reused with another circuit or other witnesses, inputs for a circuit without a
 * witness program or command, inputs the program refuses), witness errors as returned by
 * cuzk_wtns_parse / the checks (CUZK_BAD_FORMAT, CUZK_TRUNCATED, CUZK_WRONG_CURVE,
 * CUZK_SIZE_MISMATCH, CUZK_NON_CANONICAL, ...), message prefixed with "witness K", and
 * CUZK_CANCELLED when shutting down. */
cuzk_err cuzk_engine_submit(cuzk_engine *e, const cuzk_submit *req, char job_id[32], int *existing,
                            cuzk_errbuf *eb);

typedef struct {
    char *proof_json;   /* snarkjs proof.json (malloc'd) */
    char *public_json;  /* snarkjs public.json (malloc'd) */
    int has_compressed; /* BLS12-381 */
    uint8_t compressed[192];
} cuzk_part_result;

typedef struct {
    char job_id[32];
    char *request_id, *circuit_id;
    cuzk_job_state state;
    cuzk_err err;       /* FAILED / CANCELLED: the code */
    char *error;        /* and the message (malloc'd, "" when none) */
    size_t n_parts, parts_done;
    cuzk_part_result *parts; /* n_parts entries when COMPLETED, else NULL */
    double queue_ms, synth_ms, prove_ms, budget_wait_ms, total_ms;
    double gpu_ms, g2_ms; /* summed over partitions: the GPU stage (H + G1), B in G2 */
    double witness_ms;    /* summed over partitions: witnesses made from seeds or inputs */
    uint64_t seq;       /* completion order (1, 2, ...; 0 while live), for tests */
} cuzk_job_result;

void cuzk_job_result_free(cuzk_job_result *r);

/* Waits for the job to end, at most timeout_ms (0: no limit), and fills *out (free with
 * cuzk_job_result_free). On timeout *out holds the current (QUEUED / RUNNING) state and the
 * call returns CUZK_OK; CUZK_NOT_FOUND for an unknown job id. A job's failure is reported in
 * out->state / out->err, not in the return value. */
cuzk_err cuzk_engine_await(cuzk_engine *e, const char *job_id, uint64_t timeout_ms,
                           cuzk_job_result *out, cuzk_errbuf *eb);
/* The owner a job was submitted with (cuzk_submit.owner; "" when none) into owner[cap].
 * CUZK_NOT_FOUND for an unknown job id. */
cuzk_err cuzk_engine_job_owner(cuzk_engine *e, const char *job_id, char *owner, size_t cap,
                               cuzk_errbuf *eb);
/* Called each time a job ends, with the engine's lock held: fn must not call the engine (the
 * daemon notes the id and answers the AwaitProof calls parked on it from its own threads).
 * One hook per engine; fn NULL removes it. */
typedef void (*cuzk_job_end_fn)(void *ctx, const char *job_id);
void cuzk_engine_set_job_end_hook(cuzk_engine *e, cuzk_job_end_fn fn, void *ctx);
/* *was_live = 1 when the job had not ended; *state: its state after the call. CUZK_NOT_FOUND
 * for an unknown id. */
cuzk_err cuzk_engine_cancel(cuzk_engine *e, const char *job_id, int *was_live,
                            cuzk_job_state *state, cuzk_errbuf *eb);

/* ------------------------------------------------------------------ keys */

typedef struct {
    char id[128];
    char zkey[512];
    int curve; /* cuzk_curve */
    uint32_t n_vars, n_public, domain_size;
    int resident;
    uint32_t gpu_mask; /* devices the key's points are staged on (bit per CUDA device) */
    uint64_t bytes;   /* resident bytes (0 when cold) */
    unsigned holders; /* live jobs of this circuit */
    cuzk_priority priority;
    uint64_t partition_bytes; /* working set reserved per partition with CPU stages */
    uint64_t gpu_partition_bytes; /* ... per partition whose stages run on a device */
    cuzk_key_tier tier;
    uint64_t gpu_bytes;    /* staged bytes, summed over the devices it is staged on */
    unsigned gpu_streamed; /* its point sets streamed from host memory (CUZK_PK_SET_* bits) */
    uint64_t pinned_bytes; /* page-locked host bytes */
    uint64_t mapped_bytes; /* its cache file's size when a valid cache is known (else 0) */
    int generated;         /* a generated test key (zkey is ""): see note */
    char generate[160];    /* its parameters ("bls12381 sparse-bits 1024 constraints seed 1") */
    const char *note;      /* CUZK_PK_GENERATED_NOTE for a generated key, else "" */
} cuzk_circuit_info;

/* Fills up to max entries, returns the number of circuits. */
size_t cuzk_engine_circuits(cuzk_engine *e, cuzk_circuit_info *out, size_t max);
/* Loads the key now unless resident. CUZK_NOT_FOUND for an unknown circuit. */
cuzk_err cuzk_engine_preload(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                             double *load_ms, cuzk_errbuf *eb);
/* Frees the key if resident; CUZK_INVALID_ARGUMENT "held by N jobs" while a job holds it. */
cuzk_err cuzk_engine_evict_key(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                               uint64_t *bytes_freed, cuzk_errbuf *eb);

/* ------------------------------------------------------------------ status */

typedef struct {
    double uptime_s;
    unsigned workers, busy_workers;
    unsigned jobs_queued, jobs_in_flight, partitions_pending;
    uint64_t jobs_submitted, jobs_completed, jobs_failed, jobs_cancelled;
    uint64_t partitions_proved, partitions_failed, keys_loaded, keys_evicted;
    uint64_t keys_bytes;
    double prove_ms_total;
    cuzk_budget_snapshot budget;
    cuzk_budget_snapshot witness_budget; /* witness bytes of accepted jobs */
    /* GPU workers: one entry per device in use (none on the CPU backend). */
    unsigned n_devices, gpu_workers, gpu_busy;
    struct {
        int id;            /* CUDA device number (emulated: the index) */
        char name[64];
        unsigned workers, busy;
        uint64_t partitions; /* G1 stages (H and the G1 MSMs) done here */
        uint64_t g2_partitions; /* partitions whose B in G2 ran here */
        uint64_t faults;
        int disabled;      /* after 3 faults in a row */
        int g2_only;       /* the device for B in G2 alone (gpus.g2_device) */
        uint64_t key_budget, key_bytes, key_peak; /* GPU tier: gpu_budget, staged bytes */
        uint64_t key_stages, key_unstages; /* keys staged; unstaged to make room */
        /* Device memory now (real GPUs: the driver's figures when the status is taken; 0 on
         * emulated ones) and the GPU workers' scratch as the automatic key budget estimated
         * it (gw x the largest circuit's estimate; 0 with a configured gpu_budget). */
        uint64_t memory_total, memory_used, scratch_estimate;
    } devices[CUZK_MAX_DEVICES];
    uint64_t gpu_faults, gpu_retries, cpu_fallbacks, keys_from_cache;
    uint64_t stream_batches; /* batches of several partitions' MSMs over streamed sets */
    uint64_t g2_on_gpu; /* partitions whose B in G2 ran on a GPU worker */
    /* Key tiers: bytes held in each kind of memory (a staged key is also resident on the host:
     * keys_bytes counts every resident key, keys_gpu_bytes device memory over all devices,
     * keys_pinned_bytes the page-locked part of keys_bytes, keys_mapped_bytes the cache files
     * of mapped keys), the tier budgets, and the budget evictions. */
    uint64_t keys_gpu_bytes, keys_pinned_bytes, keys_mapped_bytes;
    unsigned keys_in_tier[5]; /* by cuzk_key_tier */
    uint64_t pinned_budget, pinned_peak, key_budget;
    uint64_t gpu_unstages;   /* staged keys freed to make room (all devices) */
    uint64_t pinned_unpins;  /* pinned keys unpinned to make room */
    uint64_t keys_pinned;    /* keys page-locked */
    uint64_t gpu_budget_cpu; /* GPU stages run on the CPU: key larger than every gpu_budget */
    /* Where the other large bytes are: the working sets reserved are budget.in_use (by owner in
     * budget.owner); working_allocated is what the running partitions' provers and generated
     * witnesses hold of them, taken at each partition's stage boundaries; witness_pinned_bytes
     * the partitions' witness copies page-locked for DMA; host_rss / host_rss_peak the
     * process's resident memory now and at its peak (VmRSS / VmHWM; 0 where unknown). */
    uint64_t working_allocated, witness_pinned_bytes, host_rss, host_rss_peak;
    uint64_t fallback_reserve; /* working memory kept free for one partition's CPU stages */
} cuzk_engine_status;

void cuzk_engine_get_status(cuzk_engine *e, cuzk_engine_status *out);
/* Prometheus text exposition (malloc'd; free()). */
char *cuzk_engine_metrics(cuzk_engine *e);

/* Working set reserved for one partition of a key of these dimensions (bytes), with T prover
 * threads: 32 (n_vars + 4 N) for w, a, b, c, h; 32 N for the H scalars converted out of
 * Montgomery form; 8 n for MSM index lists; n g2 for the copy of points whose scalar is 1 (G2,
 * the largest); T 2^(c-1) 2 g2 for the Pippenger buckets (XYZZ G2), where n = max(n_vars, N),
 * g2 = 4 n8q the G2 affine size and c the MSM window for n points. */
uint64_t cuzk_engine_partition_bytes(uint32_t n_vars, uint32_t domain_size, uint32_t n8q,
                                     unsigned threads);

#endif
