/* The gRPC front of cuzk-daemon (service cuzk.v1.ProvingService, proto/cuzk/v1/proving.proto)
 * over the gRPC core C API, messages via protobuf-c, and the HTTP /metrics endpoint.
 *
 * Threads: one thread polls the completion queue; it starts every call's read and, when the
 * request has arrived, queues the call for a pool of at most handler_threads threads (started
 * as needed), which call the engine and start the reply batch. A call that waits for a job
 * (AwaitProof, Prove) holds no thread: it is parked until the engine's job-end hook, its
 * timeout or the client's cancellation answers it. At most max_pending_calls calls are
 * accepted and unanswered at once (queued, running or parked); more are refused with
 * RESOURCE_EXHAUSTED, as are a token's calls, jobs or witness bytes past its
 * [daemon.auth] max_*_per_token caps. The completion-queue thread never blocks on the engine. */
#ifndef CUZK_RPC_SERVER_H
#define CUZK_RPC_SERVER_H

#include <stdint.h>

#include "cluster/cluster.h"
#include "cuzk/err.h"
#include "engine/engine.h"
#include "rpc/auth.h"

typedef struct cuzk_rpc_server cuzk_rpc_server;

typedef struct {
    const char *listen;        /* "host:port" (port 0: any free port), "unix:///path" */
    uint64_t max_message_size; /* receive and send limit, bytes */
    const char *devices;       /* comma separated, for GetStatus ("cpu") */
    const char *witness_dir;   /* SubmitProof witness_paths: regular files opened beneath it
                                * (relative, or absolute under it), no symlink or ".." in the
                                * way, read into memory; NULL/"": paths refused */
    unsigned handler_threads;   /* handler pool size (0: 64) */
    unsigned max_pending_calls; /* calls accepted and unanswered (0: 4096) */
    /* With auth, per token of role read or prove (admin is not capped): calls open, waits
     * included (0: 256); jobs submitted and not ended (0: 64); witness bytes of those jobs
     * (0: no per-token cap, memory.witness_budget alone). Past one: RESOURCE_EXHAUSTED. */
    unsigned max_calls_per_token, max_jobs_per_token;
    uint64_t max_witness_bytes_per_token;
    cuzk_cluster *cluster;     /* a cluster node: jobs go through it (src/rpc/cluster_rpc.c) */
    cuzk_auth *auth;            /* bearer tokens checked on every call; NULL: none */
    const char *tls_cert, *tls_key; /* PEM files; NULL/"": plaintext */
    const char *tls_client_ca;      /* PEM CA of client certificates (mutual TLS); NULL/"" */
    unsigned socket_mode;           /* permission bits of a unix: socket (0: 0600) */
} cuzk_rpc_config;

/* Binds and starts serving. *bound receives the address actually served (port resolved).
 * A unix: socket that another process still accepts on is refused (CUZK_IO); a socket file
 * nobody accepts on is replaced. */
cuzk_err cuzk_rpc_start(cuzk_rpc_server **out, cuzk_engine *e, const cuzk_rpc_config *cfg,
                        char bound[256], cuzk_errbuf *eb);
/* Stops accepting calls (new ones are refused by gRPC); calls in progress go on. */
void cuzk_rpc_stop_accepting(cuzk_rpc_server *s);
/* Waits up to wait_ms for the calls in progress to end, then cancels the rest, and stops the
 * polling thread. After cuzk_rpc_stop_accepting. */
void cuzk_rpc_finish(cuzk_rpc_server *s, uint64_t wait_ms);
void cuzk_rpc_free(cuzk_rpc_server *s);
/* Re-reads the TLS certificate, key and client CA for new connections (SIGHUP); on an error
 * the old ones stay. *reloaded = 0 when the server has no TLS. */
cuzk_err cuzk_rpc_reload_tls(cuzk_rpc_server *s, int *reloaded, cuzk_errbuf *eb);

/* HTTP GET /metrics (Prometheus text) on addr "host:port" (port 0: any). With auth, a
 * request needs `Authorization: Bearer TOKEN` of role read or above (else 401). */
typedef struct cuzk_metrics_http cuzk_metrics_http;
cuzk_err cuzk_metrics_http_start(cuzk_metrics_http **out, cuzk_engine *e, const char *addr,
                                 cuzk_auth *auth, char bound[256], cuzk_errbuf *eb);
void cuzk_metrics_http_stop(cuzk_metrics_http *m);

#endif
