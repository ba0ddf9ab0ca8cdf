/* cuzk-daemon configuration: the TOML file (strict: unknown keys, wrong types and bad sizes are
 * errors naming file, line and key) and its defaults. Every key has a default, so an empty
 * file (or none) works. Relative zkey paths are resolved against the config file's folder.
 *
 *   [daemon]     listen = "127.0.0.1:9820" ("unix:///path" too), insecure = false (true: allow
 *                a listen address other than loopback or unix while calls are not
 *                authenticated by tokens or mutual TLS; else the daemon refuses to start),
 *                socket_mode = "0600" (octal permission bits of a unix: socket),
 *                max_message_size = "256MiB",
 *                shutdown_grace = "30s", retain_jobs = 1024, max_partitions = 1024,
 *                witness_dir = "" (SubmitProof may name .wtns files inside it instead of
 *                sending them; "" refuses witness_paths), handler_threads = 64 (threads
 *                that serve calls; more calls queue; a wait for a job holds none),
 *                max_pending_calls = 4096 (calls accepted and not yet answered, waits
 *                included; more are refused with RESOURCE_EXHAUSTED)
 *   [daemon.auth] tokens_file = "" (lines `ROLE TOKEN`, roles read / prove / admin, mode 0600;
 *                every call then needs `authorization: Bearer TOKEN`; re-read on SIGHUP; "":
 *                calls are not authenticated; see rpc/auth.h), max_calls_per_token = 256
 *                (calls open at once, waits included), max_jobs_per_token = 64 (jobs submitted
 *                and not ended), max_witness_bytes_per_token = "0" (witness bytes of those
 *                jobs; "0": no per-token cap, memory.witness_budget bounds all together): per
 *                token of role read or prove (admin is not capped); past one a call gets
 *                RESOURCE_EXHAUSTED naming the key. Without tokens there are no per-client caps
 *   [daemon.tls] cert = "", key = "" (PEM; both or neither: TLS on the gRPC port), client_ca =
 *                "" (PEM CA: mutual TLS, clients must present a certificate it signed); the
 *                files are re-read on SIGHUP for new connections
 *   [metrics]    listen = "127.0.0.1:9821" (HTTP GET /metrics; "" disables), require_token =
 *                false (true: `Authorization: Bearer TOKEN` of role read or above, from
 *                daemon.auth.tokens_file), insecure = false (true: allow a listen address other
 *                than loopback without require_token)
 *   [gpus]       backend = "auto" (GPU workers on every usable device, none without one) |
 *                "cpu" | "gpu" (refuse to start without a device), devices = [] (all),
 *                workers_per_device = 0 (gw; automatic: 2, or 1 when two leave the largest
 *                key no room), g2 = "auto" (B in G2 on the partition worker's
 *                CPU threads, off the GPU worker's path, unless the partition's witness has at
 *                least g2_gpu_min_scalars = 262144 values other than 0 and 1: then on the GPU
 *                worker) | "cpu" | "gpu", synth = "gpu" (a GPU stage computes a, b, c on
 *                the device from the key's A and B rows, staged with its points) | "cpu"
 *                (partition workers synthesize, GPU stages upload a, b, c), host_threads = 0
 *                (gt: the CPU threads each partition worker synthesizes and proves with; 0:
 *                cores / pw), msm_tables = true (fixed-base tables of staged keys' points),
 *                stream_chunk = "1GiB" (a key larger than the GPU budget is staged with some
 *                point sets left in pinned host memory and streamed to the device in chunks
 *                of this size at every MSM; each GPU worker holds two such buffers, counted
 *                in the budget; at least 1KiB), stream_batch = 5 (the witness MSMs of up to
 *                this many partitions of one key over its streamed sets run as one batch,
 *                each chunk copied once for all; 1: each partition alone),
 *                ba_fit = true (the GPU workers' batch-affine chunk fitted to the memory the
 *                preloaded keys leave, when every circuit preloads), g2_device = -1 (B in G2
 *                on the GPU runs beside each GPU worker on its device; a device number of
 *                gpus.devices: on that device alone, which then runs no other stage while
 *                another device works; needs g2 = "gpu" or "auto" and two devices),
 *                emulated_devices = 0 (for tests: N emulated GPUs whose stages run on the CPU
 *                and whose key tiers are accounting only, so the GPU pipeline runs without
 *                CUDA; 0: real devices), emulated_faulty_devices = [] (for tests: the indices
 *                into the devices in use whose GPU stages fault instead of running)
 *   [keys]       cache = true (write a preprocessed copy of each loaded key and load it at disk
 *                speed next time), cache_dir = "" (next to each zkey, as ZKEY.cuzkcache)
 *   [synthesis]  partition_workers = 0 (pw; 0: 2, or 1 on a single core)
 *   [scheduler]  max_jobs_in_flight = 16 (j; 0: unlimited)
 *   [memory]     working_budget = "0" (partition working sets; 0: half the RAM),
 *                key_budget = "0" (resident proving keys; 0: unlimited),
 *                witness_budget = "0" (witness bytes of accepted jobs, beside the working
 *                budget; 0: 1/4 of the working budget, at least 256MiB),
 *                pinned_budget = "auto" (page-locked key arrays, only with GPU workers;
 *                "auto": a quarter of the RAM; "0": nothing pinned),
 *                gpu_budget = "auto" (per device: staged proving keys; "auto" or "0": the
 *                device's free memory at start less the GPU workers' scratch and a margin)
 *   [prover]     verify = true (self-verify every proof before returning it)
 *   [logging]    level = "info", format = "text" | "json"
 *   [[circuit]]  id = "...", zkey = "path.zkey", preload = false, priority = "normal"; or
 *                instead of zkey, a test key generated in memory (engine.h "Generated keys";
 *                the key `cuzk gen-circuit` + `cuzk setup --seed HEX(SEED)` would write):
 *                generate_constraints = 1048576 or "2^20" (required), generate_curve =
 *                "bn128" | "bls12381", generate_profile = "dense" | "sparse-bits" |
 *                "mixed", generate_seed = "1" (string or integer), defaults as gen-circuit's
 *   [cluster]    (absent: a single node, jobs in memory; docs/CLUSTER.md) database =
 *                "postgresql://..." (required in the table), node_id = "" (the host name),
 *                lease = "30s", poll_interval = "1s", retain = "24h", slots = 0 (partitions
 *                claimed at once; 0: partition_workers), max_attempts = 3 (leases a partition
 *                may lose before its job fails), notify = true (LISTEN/NOTIFY wake-ups),
 *                witness_storage = "database" | "shared_dir", witness_dir = "" (shared_dir:
 *                the folder every node mounts)
 *                "mixed", generate_seed = "1" (string or integer), defaults as gen-circuit's;
 *                proving from circuit inputs (engine.h "Inputs"): wasm = "circuit.wasm"
 *                (circom's witness program), wasm_cache = "" (beside the wasm), or instead
 *                witness_cmd = "CMD ARGS" (split on spaces) or ["CMD", "ARG"] (run as
 *                CMD ARGS input.json out.wtns, no shell), witness_timeout = "60s",
 *                witness_scratch_dir = "" ($TMPDIR, else /tmp); paths relative to the config
 *                file (a command's program too when it names a path)
 */
#ifndef CUZK_ENGINE_CONFIG_H
#define CUZK_ENGINE_CONFIG_H

#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/log.h"
#include "engine/engine.h"

typedef struct {
    char *listen;
    uint64_t max_message_size;
    uint64_t shutdown_grace_ms;
    char *metrics_listen;
    int *gpu_devices;
    size_t n_gpu_devices;
    unsigned gpu_workers_per_device;
    cuzk_backend_kind backend;
    int g2_on_gpu; /* 0 cpu, 1 gpu, 2 auto */
    uint64_t g2_gpu_min_scalars;
    int g2_device;    /* gpus.g2_device: B in G2 on this device alone (-1, default: beside
                       * each GPU worker) */
    int synth_on_cpu; /* gpus.synth = "cpu" */
    int gpu_tables;   /* gpus.msm_tables (default true) */
    int gpu_ba_fit;   /* gpus.ba_fit (default true) */
    uint64_t gpu_stream_chunk; /* gpus.stream_chunk (default 1 GiB) */
    unsigned gpu_stream_batch; /* gpus.stream_batch (default CUZK_STREAM_BATCH_DEFAULT) */
    unsigned emulated_devices; /* gpus.emulated_devices (tests only; default 0) */
    uint32_t emulated_faulty_devices; /* gpus.emulated_faulty_devices (tests only; default []) */
    int key_cache;
    char *key_cache_dir;
    char *witness_dir;
    uint64_t witness_budget;
    unsigned host_threads;
    unsigned partition_workers;
    unsigned max_jobs_in_flight;
    unsigned retain_jobs, max_partitions;
    unsigned handler_threads, max_pending_calls;
    int insecure; /* daemon.insecure */
    unsigned socket_mode; /* daemon.socket_mode (permission bits of a unix: socket) */
    char *tokens_file;    /* daemon.auth.tokens_file ("": calls are not authenticated) */
    unsigned max_calls_per_token, max_jobs_per_token; /* daemon.auth.* */
    uint64_t max_witness_bytes_per_token;             /* daemon.auth.* (0: none) */
    char *tls_cert, *tls_key, *tls_client_ca; /* daemon.tls.* ("": plaintext) */
    int metrics_insecure, metrics_require_token; /* metrics.insecure, metrics.require_token */
    uint64_t working_budget, key_budget, pinned_budget, gpu_budget;
    int verify;
    cuzk_log_level log_level;
    cuzk_log_format log_format;
    cuzk_engine_circuit *circuits; /* strings owned by the config */
    size_t n_circuits;
    /* [cluster]: cluster_database "" runs a single node. */
    char *cluster_database, *cluster_node_id, *cluster_witness_dir;
    uint64_t cluster_lease_ms, cluster_poll_ms, cluster_retain_ms;
    unsigned cluster_slots, cluster_max_attempts;
    int cluster_notify;
    int cluster_witness_shared; /* witness_storage = "shared_dir" */
} cuzk_daemon_config;

/* Fills *c with the defaults. */
void cuzk_daemon_config_defaults(cuzk_daemon_config *c);
/* Defaults, then the file at path (NULL: defaults only). text/len instead of a path when
 * path_is_text (for tests; base directory then ".") */
cuzk_err cuzk_daemon_config_load(cuzk_daemon_config *c, const char *path, cuzk_errbuf *eb);
cuzk_err cuzk_daemon_config_parse(cuzk_daemon_config *c, const char *name, const char *text,
                                  size_t len, const char *base_dir, cuzk_errbuf *eb);
void cuzk_daemon_config_free(cuzk_daemon_config *c);
/* A listen address: HOST:PORT with a port 0 to 65535 (0: any free port), or unix:PATH when
 * allow_unix. what names the setting in the message ("daemon.listen", "--listen"). */
cuzk_err cuzk_daemon_check_listen(const char *what, const char *addr, int allow_unix,
                                  cuzk_errbuf *eb);
/* 1 when addr is reachable only from this machine: unix:, localhost, [::1], 127.0.0.0/8. */
int cuzk_daemon_listen_is_local(const char *addr);
/* Refuses (CUZK_BAD_CONFIG) a listen address reachable from the network unless calls are
 * authenticated (daemon.auth.tokens_file, or mutual TLS: daemon.tls.client_ca) or
 * daemon.insecure; and a network metrics.listen unless metrics.require_token or
 * metrics.insecure. After command-line overrides. */
cuzk_err cuzk_daemon_check_exposure(const cuzk_daemon_config *c, cuzk_errbuf *eb);
/* The engine settings of a daemon config (pointers into c). */
void cuzk_daemon_config_engine(const cuzk_daemon_config *c, cuzk_engine_config *out);

#endif
