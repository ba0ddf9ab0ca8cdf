/* cuzk-daemon: the persistent proving server. Reads the config (every key has a default),
 * loads the preloaded keys, starts the engine, serves gRPC (and HTTP /metrics), on SIGHUP
 * re-reads the tokens file and the TLS certificate (keeping the old ones when the new are bad;
 * connections stay open), and on SIGTERM / SIGINT stops accepting, drains in-flight jobs
 * within daemon.shutdown_grace, frees everything and exits 0. Exit 2: bad configuration or
 * start-up failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <grpc/grpc.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster.h"
#include "cuzk/err.h"
#include "cuzk/groth16.h"
#include "cuzk/log.h"
#include "engine/config.h"
#include "engine/engine.h"
#include "gpu/gpu.h"
#include "rpc/server.h"
#include "util/parallel.h"

#define TGT "cuzk_daemon"

static const char *HELP =
    "Usage: cuzk-daemon [--config FILE] [--listen ADDR] [--log-level LEVEL]\n"
    "\n"
    "Serves Groth16 proofs (snarkjs .zkey / .wtns, BN254 and BLS12-381) over gRPC,\n"
    "service cuzk.v1.ProvingService (proto/cuzk/v1/proving.proto).\n"
    "\n"
    "  --config FILE      TOML configuration (every key has a default; see configs/demo.toml)\n"
    "  --listen ADDR      gRPC address, overrides daemon.listen (HOST:PORT, unix:///PATH);\n"
    "                     beyond loopback only with tokens, mutual TLS or daemon.insecure\n"
    "  --metrics ADDR     HTTP /metrics address, overrides metrics.listen (\"\" disables)\n"
    "  --log-level LEVEL  error, warn, info, debug, trace, off; overrides logging.level\n"
    "  -h, --help         this help\n"
    "\n"
    "SIGHUP re-reads [daemon.auth] tokens_file and the [daemon.tls] files.\n";

static void log_stale(void *ctx, const char *path)
{
    (void)ctx;
    CUZK_LOG_INFO(TGT, "removed a stale key-cache temp file (its writer is gone)", "path=%s",
                  path);
}

/* SIGHUP: new tokens and certificates for the calls and connections that follow. */
static void reload(cuzk_auth *auth, cuzk_rpc_server *srv)
{
    cuzk_errbuf eb = {{0}};
    size_t n = 0;
    int tls = 0;
    if (auth && cuzk_auth_reload(auth, &n, &eb))
        CUZK_LOG_ERROR(TGT, "SIGHUP: tokens not reloaded, the old ones stay", "error=%s",
                       eb.msg);
    else if (auth)
        CUZK_LOG_INFO(TGT, "SIGHUP: tokens reloaded", "tokens=%zu", n);
    if (cuzk_rpc_reload_tls(srv, &tls, &eb))
        CUZK_LOG_ERROR(TGT, "SIGHUP: TLS files not reloaded, the old ones stay", "error=%s",
                       eb.msg);
    else if (tls)
        CUZK_LOG_INFO(TGT, "SIGHUP: TLS certificate reloaded (new connections use it)");
    if (!auth && !tls)
        CUZK_LOG_INFO(TGT, "SIGHUP: nothing to reload (no tokens_file, no TLS)");
}

static int usage(const char *msg)
{
    fprintf(stderr, "cuzk-daemon: %s\nTry 'cuzk-daemon --help'.\n", msg);
    return 2;
}

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* Buffers of 1 MiB and more are mapped and unmapped, never kept in a thread's arena: glibc's
     * own threshold grows to 32 MiB after the first large free, and then every partition worker
     * keeps its last working set resident, so RSS grew with partition_workers, not the budget. */
    (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    const char *config = NULL, *listen = NULL, *level = NULL, *metrics = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        const char *name = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(HELP, stdout);
            return 0;
        }
        static const char *names[] = {"--config", "--listen", "--log-level", "--metrics"};
        const char **dsts[] = {&config, &listen, &level, &metrics};
        for (int k = 0; k < 4; k++) {
            size_t nl = strlen(names[k]);
            if (strncmp(a, names[k], nl) == 0 && (a[nl] == 0 || a[nl] == '=')) {
                name = names[k];
                dst = dsts[k];
                if (a[nl] == '=') {
                    *dst = a + nl + 1;
                } else if (i + 1 < argc) {
                    *dst = argv[++i];
                } else {
                    char m[96];
                    snprintf(m, sizeof m, "option '%s' needs a value", name);
                    return usage(m);
                }
                break;
            }
        }
        if (!dst) {
            char m[300];
            snprintf(m, sizeof m, "unknown argument '%s'", a);
            return usage(m);
        }
    }

    cuzk_errbuf eb = {{0}};
    cuzk_daemon_config cfg;
    cuzk_err e = cuzk_daemon_config_load(&cfg, config, &eb);
    if (e) {
        fprintf(stderr, "cuzk-daemon: error: %s\n", eb.msg);
        return 2;
    }
    if (listen) {
        free(cfg.listen);
        cfg.listen = strdup(listen);
    }
    if (metrics) {
        free(cfg.metrics_listen);
        cfg.metrics_listen = strdup(metrics);
    }
    if ((listen && cuzk_daemon_check_listen("--listen", listen, 1, &eb)) ||
        (metrics && metrics[0] && cuzk_daemon_check_listen("--metrics", metrics, 0, &eb))) {
        fprintf(stderr, "cuzk-daemon: error: %s\n", eb.msg);
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    if (cuzk_daemon_check_exposure(&cfg, &eb)) {
        fprintf(stderr, "cuzk-daemon: error: %s\n", eb.msg);
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    int net = !cuzk_daemon_listen_is_local(cfg.listen);
    if (net && !cfg.tokens_file[0] && !cfg.tls_client_ca[0])
        fprintf(stderr, "cuzk-daemon: warning: daemon.insecure: serving unauthenticated calls "
                "on %s\n", cfg.listen);
    else if (net && cfg.tokens_file[0] && !cfg.tls_cert[0])
        fprintf(stderr, "cuzk-daemon: warning: bearer tokens travel unencrypted on %s: set "
                "[daemon.tls] cert and key\n", cfg.listen);
    if (cfg.metrics_listen[0] && cfg.metrics_insecure && !cfg.metrics_require_token &&
        !cuzk_daemon_listen_is_local(cfg.metrics_listen))
        fprintf(stderr, "cuzk-daemon: warning: metrics.insecure: /metrics open to anyone on "
                "%s\n", cfg.metrics_listen);
    cuzk_auth *auth = NULL;
    if (cfg.tokens_file[0] && cuzk_auth_new(&auth, cfg.tokens_file, &eb)) {
        fprintf(stderr, "cuzk-daemon: error: %s\n", eb.msg);
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    if (level && cuzk_log_parse_level(level, &cfg.log_level, &eb)) {
        cuzk_auth_free(auth);
        cuzk_daemon_config_free(&cfg);
        return usage(eb.msg);
    }
    cuzk_log_set_level(cfg.log_level);
    cuzk_log_set_format(cfg.log_format);

    /* Signals are taken by sigwait in this thread only; every thread started below inherits
     * the blocked mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    CUZK_LOG_INFO(TGT, "cuzk-daemon starting", "config=%s circuits=%zu backend=%s "
                  "cuda_devices=%d", config ? config : "(defaults)", cfg.n_circuits,
                  cfg.backend == CUZK_BACKEND_CPU ? "cpu" : cfg.backend == CUZK_BACKEND_GPU ? "gpu"
                                                                                      : "auto",
                  cuzk_gpu_device_count());
    for (size_t i = 0; cfg.key_cache && i < cfg.n_circuits; i++) {
        char *cp = cuzk_pk_cache_path(cfg.circuits[i].zkey, cfg.key_cache_dir);
        if (cp)
            cuzk_pk_cache_remove_stale(cp, log_stale, NULL);
        free(cp);
    }
    cuzk_engine_config ec;
    cuzk_daemon_config_engine(&cfg, &ec);
    cuzk_engine *engine = NULL;
    if ((e = cuzk_engine_new(&engine, &ec, &eb))) {
        CUZK_LOG_ERROR(TGT, "engine start failed", "error=%s code=%s", eb.msg, cuzk_errname(e));
        cuzk_auth_free(auth);
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    /* [cluster]: this daemon is one node of a cluster on a shared database. */
    cuzk_cluster *cluster = NULL;
    if (cfg.cluster_database[0]) {
        cuzk_cluster_config cc = {cfg.cluster_database, cfg.cluster_node_id,
                                  cfg.cluster_lease_ms, cfg.cluster_poll_ms,
                                  cfg.cluster_retain_ms,
                                  cfg.cluster_slots ? cfg.cluster_slots : cfg.partition_workers,
                                  cfg.cluster_max_attempts, cfg.cluster_notify,
                                  cfg.cluster_witness_shared ? cfg.cluster_witness_dir : NULL,
                                  cfg.max_partitions};
        if ((e = cuzk_cluster_start(&cluster, engine, &cc, &eb))) {
            CUZK_LOG_ERROR(TGT, "cluster start failed", "error=%s code=%s", eb.msg,
                           cuzk_errname(e));
            fprintf(stderr, "cuzk-daemon: error: %s\n", eb.msg);
            cuzk_engine_free(engine);
            cuzk_daemon_config_free(&cfg);
            return 2;
        }
    }
    grpc_init();
    cuzk_metrics_http *mh = NULL;
    char mbound[256] = "";
    if (cfg.metrics_listen[0]) {
        if ((e = cuzk_metrics_http_start(&mh, engine, cfg.metrics_listen,
                                         cfg.metrics_require_token ? auth : NULL, mbound,
                                         &eb))) {
            CUZK_LOG_ERROR(TGT, "metrics endpoint failed", "error=%s", eb.msg);
            cuzk_cluster_free(cluster);
            cuzk_engine_free(engine);
            grpc_shutdown();
            cuzk_auth_free(auth);
            cuzk_daemon_config_free(&cfg);
            return 2;
        }
        CUZK_LOG_INFO(TGT, "metrics endpoint listening", "addr=http://%s/metrics", mbound);
    }
    cuzk_rpc_config rc = {.listen = cfg.listen,
                          .max_message_size = cfg.max_message_size,
                          .devices = "cpu",
                          .witness_dir = cfg.witness_dir,
                          .handler_threads = cfg.handler_threads,
                          .max_pending_calls = cfg.max_pending_calls,
                          .max_calls_per_token = cfg.max_calls_per_token,
                          .max_jobs_per_token = cfg.max_jobs_per_token,
                          .max_witness_bytes_per_token = cfg.max_witness_bytes_per_token,
                          .cluster = cluster,
                          .auth = auth,
                          .tls_cert = cfg.tls_cert,
                          .tls_key = cfg.tls_key,
                          .tls_client_ca = cfg.tls_client_ca,
                          .socket_mode = cfg.socket_mode};
    cuzk_rpc_server *srv = NULL;
    char bound[256];
    if ((e = cuzk_rpc_start(&srv, engine, &rc, bound, &eb))) {
        CUZK_LOG_ERROR(TGT, "gRPC server failed", "error=%s", eb.msg);
        cuzk_metrics_http_stop(mh);
        cuzk_cluster_free(cluster);
        cuzk_engine_free(engine);
        grpc_shutdown();
        cuzk_auth_free(auth);
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    CUZK_LOG_INFO(TGT, "listening", "addr=%s max_message_size=%" PRIu64 " tls=%s auth=%s",
                  bound, cfg.max_message_size,
                  !cfg.tls_cert[0] ? "off" : cfg.tls_client_ca[0] ? "mutual" : "server",
                  auth ? "tokens" : "off");
    if (cluster)
        cuzk_cluster_set_address(cluster, bound);
    {
        char ready[300];
        snprintf(ready, sizeof ready, "cuzk-daemon ready, serving on %s", bound);
        cuzk_log_emit(CUZK_LOG_LEVEL_INFO, TGT, ready, NULL);
    }

    int sig = 0;
    for (;;) {
        if (sigwait(&sigs, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            break;
        reload(auth, srv);
    }
    CUZK_LOG_INFO(TGT, "signal received: stopping", "signal=%s grace_ms=%" PRIu64,
                  sig == SIGTERM ? "SIGTERM" : "SIGINT", cfg.shutdown_grace_ms);
    /* Stop accepting calls (gRPC refuses new ones), let jobs finish, answer the waiting
     * calls, then tear down. A second signal during the drain is ignored (still blocked). */
    cuzk_rpc_stop_accepting(srv);
    if (cluster) /* first: its partitions drain through the engine, the rest go to other nodes */
        cuzk_cluster_stop(cluster, cfg.shutdown_grace_ms);
    unsigned n = cuzk_engine_shutdown(engine, cfg.shutdown_grace_ms);
    cuzk_rpc_finish(srv, 5000);
    cuzk_rpc_free(srv);
    cuzk_cluster_free(cluster);
    cuzk_metrics_http_stop(mh);
    cuzk_engine_status st;
    cuzk_engine_get_status(engine, &st);
    cuzk_engine_free(engine);
    grpc_shutdown();
    cuzk_auth_free(auth);
    CUZK_LOG_INFO(TGT, "cuzk-daemon stopped", "jobs_completed=%" PRIu64 " jobs_failed=%" PRIu64
                  " jobs_cancelled=%" PRIu64 " cancelled_at_shutdown=%u", st.jobs_completed,
                  st.jobs_failed, st.jobs_cancelled, n);
    cuzk_daemon_config_free(&cfg);
    return 0;
}
