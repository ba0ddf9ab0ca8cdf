/* cuzk-daemon: the persistent proving server. Reads the config (every key has a default),
 * loads the preloaded keys, starts the engine, serves gRPC (and HTTP /metrics), and on
 * SIGTERM / SIGINT stops accepting, drains in-flight jobs within daemon.shutdown_grace, frees
 * everything and exits 0. Exit 2: bad configuration or start-up failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <grpc/grpc.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "                     beyond loopback only with daemon.insecure = true\n"
    "  --metrics ADDR     HTTP /metrics address, overrides metrics.listen (\"\" disables)\n"
    "  --log-level LEVEL  error, warn, info, debug, trace, off; overrides logging.level\n"
    "  -h, --help         this help\n";

static void log_stale(void *ctx, const char *path)
{
    (void)ctx;
    CUZK_LOG_INFO(TGT, "removed a stale key-cache temp file (its writer is gone)", "path=%s",
                  path);
}

static int usage(const char *msg)
{
    fprintf(stderr, "cuzk-daemon: %s\nTry 'cuzk-daemon --help'.\n", msg);
    return 2;
}

int main(int argc, char **argv)
{
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
    if (cfg.insecure && !cuzk_daemon_listen_is_local(cfg.listen))
        fprintf(stderr, "cuzk-daemon: warning: daemon.insecure: serving unauthenticated calls "
                "on %s\n", cfg.listen);
    if (level && cuzk_log_parse_level(level, &cfg.log_level, &eb)) {
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
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    grpc_init();
    cuzk_metrics_http *mh = NULL;
    char mbound[256] = "";
    if (cfg.metrics_listen[0]) {
        if ((e = cuzk_metrics_http_start(&mh, engine, cfg.metrics_listen, mbound, &eb))) {
            CUZK_LOG_ERROR(TGT, "metrics endpoint failed", "error=%s", eb.msg);
            cuzk_engine_free(engine);
            grpc_shutdown();
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
                          .max_pending_calls = cfg.max_pending_calls};
    cuzk_rpc_server *srv = NULL;
    char bound[256];
    if ((e = cuzk_rpc_start(&srv, engine, &rc, bound, &eb))) {
        CUZK_LOG_ERROR(TGT, "gRPC server failed", "error=%s", eb.msg);
        cuzk_metrics_http_stop(mh);
        cuzk_engine_free(engine);
        grpc_shutdown();
        cuzk_daemon_config_free(&cfg);
        return 2;
    }
    CUZK_LOG_INFO(TGT, "listening", "addr=%s max_message_size=%" PRIu64, bound,
                  cfg.max_message_size);
    {
        char ready[300];
        snprintf(ready, sizeof ready, "cuzk-daemon ready, serving on %s", bound);
        cuzk_log_emit(CUZK_LOG_LEVEL_INFO, TGT, ready, NULL);
    }

    int sig = 0;
    while (sigwait(&sigs, &sig) != 0)
        ;
    CUZK_LOG_INFO(TGT, "signal received: stopping", "signal=%s grace_ms=%" PRIu64,
                  sig == SIGTERM ? "SIGTERM" : "SIGINT", cfg.shutdown_grace_ms);
    /* Stop accepting calls (gRPC refuses new ones), let jobs finish, answer the waiting
     * calls, then tear down. A second signal during the drain is ignored (still blocked). */
    cuzk_rpc_stop_accepting(srv);
    unsigned n = cuzk_engine_shutdown(engine, cfg.shutdown_grace_ms);
    cuzk_rpc_finish(srv, 5000);
    cuzk_rpc_free(srv);
    cuzk_metrics_http_stop(mh);
    cuzk_engine_status st;
    cuzk_engine_get_status(engine, &st);
    cuzk_engine_free(engine);
    grpc_shutdown();
    CUZK_LOG_INFO(TGT, "cuzk-daemon stopped", "jobs_completed=%" PRIu64 " jobs_failed=%" PRIu64
                  " jobs_cancelled=%" PRIu64 " cancelled_at_shutdown=%u", st.jobs_completed,
                  st.jobs_failed, st.jobs_cancelled, n);
    cuzk_daemon_config_free(&cfg);
    return 0;
}
