/* The gRPC front of cuzk-daemon (service cuzk.v1.ProvingService, proto/cuzk/v1/proving.proto)
 * over the gRPC core C API, messages via protobuf-c, and the HTTP /metrics endpoint.
 *
 * Threads: one thread polls the completion queue; it starts every call's read and, when the
 * request has arrived, queues the call for a pool of at most handler_threads threads (started
 * as needed), which call the engine and start the reply batch. A call that waits for a job
 * (AwaitProof, Prove) holds no thread: it is parked until the engine's job-end hook, its
 * timeout or the client's cancellation answers it. At most max_pending_calls calls are
 * accepted and unanswered at once (queued, running or parked); more are refused with
 * RESOURCE_EXHAUSTED. The completion-queue thread never blocks on the engine. */
#ifndef CUZK_RPC_SERVER_H
#define CUZK_RPC_SERVER_H

#include <stdint.h>

#include "cuzk/err.h"
#include "engine/engine.h"

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
} cuzk_rpc_config;

/* Binds and starts serving. *bound receives the address actually served (port resolved). */
cuzk_err cuzk_rpc_start(cuzk_rpc_server **out, cuzk_engine *e, const cuzk_rpc_config *cfg,
                        char bound[256], cuzk_errbuf *eb);
/* Stops accepting calls (new ones are refused by gRPC); calls in progress go on. */
void cuzk_rpc_stop_accepting(cuzk_rpc_server *s);
/* Waits up to wait_ms for the calls in progress to end, then cancels the rest, and stops the
 * polling thread. After cuzk_rpc_stop_accepting. */
void cuzk_rpc_finish(cuzk_rpc_server *s, uint64_t wait_ms);
void cuzk_rpc_free(cuzk_rpc_server *s);

/* HTTP GET /metrics (Prometheus text) on addr "host:port" (port 0: any). */
typedef struct cuzk_metrics_http cuzk_metrics_http;
cuzk_err cuzk_metrics_http_start(cuzk_metrics_http **out, cuzk_engine *e, const char *addr,
                                 char bound[256], cuzk_errbuf *eb);
void cuzk_metrics_http_stop(cuzk_metrics_http *m);

#endif
