/* A node's life in the cluster: start (connect, migrate, register, take back what a previous run
 * of this node held), stop (drain, release, mark stopped), free. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster_internal.h"
#include "cuzk/log.h"

#define TGT CUZK__CLUSTER_TGT

/* The connection string as logs and errors show it: any password replaced by "***". */
static char *hide_password(const char *ci)
{
    size_t n = strlen(ci);
    char *out = malloc(n + 8);
    if (!out)
        return NULL;
    const char *scheme = strstr(ci, "://");
    const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
    const char *colon = scheme ? strchr(scheme + 3, ':') : NULL;
    if (scheme && at && colon && colon < at) { /* postgresql://user:secret@host */
        snprintf(out, n + 8, "%.*s***%s", (int)(colon + 1 - ci), ci, at);
        return out;
    }
    const char *pw = strstr(ci, "password=");
    if (pw) { /* key=value form, or a URI's ?password= */
        const char *end = pw + 9;
        while (*end && *end != ' ' && *end != '&')
            end++;
        snprintf(out, n + 8, "%.*s***%s", (int)(pw + 9 - ci), ci, end);
        return out;
    }
    memcpy(out, ci, n + 1);
    return out;
}

/* The served circuits as a text[] literal: {"a","b"} with " and \ escaped. */
static char *circuits_literal(cuzk_engine *e)
{
    cuzk_circuit_info *ci = calloc(256, sizeof *ci);
    if (!ci)
        return NULL;
    size_t n = cuzk_engine_circuits(e, ci, 256);
    if (n > 256)
        n = 256;
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += 2 * strlen(ci[i].id) + 3;
    char *out = malloc(cap), *p = out;
    if (!out) {
        free(ci);
        return NULL;
    }
    *p++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        *p++ = '"';
        for (const char *s = ci[i].id; *s; s++) {
            if (*s == '"' || *s == '\\')
                *p++ = '\\';
            *p++ = *s;
        }
        *p++ = '"';
    }
    *p++ = '}';
    *p = 0;
    free(ci);
    return out;
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A node row with this node_id and a fresh heartbeat is either a live daemon (two daemons with
 * one node_id would steal each other's leases) or this node's previous run, which died: wait
 * until the heartbeat is a lease old, then the leases it held are this run's to release. */
static cuzk_err wait_node_id_free(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    for (int round = 0; round < 3; round++) {
        const char *v[1] = {cl->node_id};
        PGresult *r = cuzk__db_exec(c, "SELECT (EXTRACT(EPOCH FROM now() - heartbeat_at) *"
                                       " 1000)::bigint FROM cuzk_nodes WHERE node_id = $1"
                                       " AND NOT stopped",
                                    1, v, NULL, NULL, 0, eb);
        if (!r)
            return CUZK_IO;
        long long age = PQntuples(r) ? atoll(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        if (age < 0 || age >= (long long)cl->lease_ms)
            return CUZK_OK;
        if (round == 2)
            break;
        CUZK_LOG_WARN(TGT, "node_id has a fresh heartbeat: waiting one lease for it to go "
                      "stale (a previous run that died, or another daemon with this node_id)",
                      "node=%s heartbeat_age_ms=%lld", cl->node_id, age);
        sleep_ms(cl->lease_ms - (uint64_t)age + 100);
    }
    return cuzk_errf(eb, CUZK_BAD_CONFIG, "cluster.node_id '%s' is in use by a live node: give "
                     "each daemon its own node_id", cl->node_id);
}

static cuzk_err register_node(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    cuzk_err e = wait_node_id_free(cl, c, eb);
    if (e)
        return e;
    char sl[16];
    snprintf(sl, sizeof sl, "%u", cl->slots);
    const char *v[3] = {cl->node_id, cl->circuits_array, sl};
    PGresult *r = cuzk__db_exec(
        c, "INSERT INTO cuzk_nodes (node_id, circuits, slots) VALUES ($1, $2::text[], $3::int)"
           " ON CONFLICT (node_id) DO UPDATE SET circuits = EXCLUDED.circuits,"
           " slots = EXCLUDED.slots, started_at = now(), heartbeat_at = now(), stopped = false,"
           " partitions_running = 0",
        3, v, NULL, NULL, 0, eb);
    if (!r)
        return CUZK_IO;
    PQclear(r);
    /* This process runs nothing yet: what the node_id still holds, a previous run held. */
    r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = 0, lease_owner = NULL,"
                         " lease_expires = NULL WHERE lease_owner = $1 AND state = 1",
                      1, v, NULL, NULL, 0, eb);
    if (!r)
        return CUZK_IO;
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    if (n) {
        CUZK_LOG_INFO(TGT, "released the partitions a previous run of this node held",
                      "node=%s partitions=%d", cl->node_id, n);
        cuzk__db_notify(cl, c, "cuzk_work", cl->node_id);
    }
    return CUZK_OK;
}

void cuzk_cluster_free(cuzk_cluster *cl)
{
    if (!cl)
        return;
    cuzk_cluster_stop(cl, 0);
    for (unsigned i = 0; i < cl->n_idle; i++)
        PQfinish(cl->idle[i]);
    if (cl->wake_fd[0] >= 0)
        close(cl->wake_fd[0]);
    if (cl->wake_fd[1] >= 0)
        close(cl->wake_fd[1]);
    pthread_mutex_destroy(&cl->mu);
    pthread_mutex_destroy(&cl->pool_mu);
    pthread_mutex_destroy(&cl->hook_mu);
    pthread_cond_destroy(&cl->cv);
    pthread_cond_destroy(&cl->done_cv);
    free(cl->conninfo);
    free(cl->conninfo_shown);
    free(cl->node_id);
    free(cl->witness_dir);
    free(cl->address);
    free(cl->circuits_array);
    free(cl);
}

cuzk_err cuzk_cluster_start(cuzk_cluster **out, cuzk_engine *e, const cuzk_cluster_config *cfg,
                            cuzk_errbuf *eb)
{
    *out = NULL;
    struct cuzk_cluster *cl = calloc(1, sizeof *cl);
    if (!cl)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    cl->wake_fd[0] = cl->wake_fd[1] = -1;
    pthread_mutex_init(&cl->mu, NULL);
    pthread_mutex_init(&cl->pool_mu, NULL);
    pthread_mutex_init(&cl->hook_mu, NULL);
    pthread_cond_init(&cl->cv, NULL);
    pthread_cond_init(&cl->done_cv, NULL);
    cl->engine = e;
    cl->lease_ms = cfg->lease_ms ? cfg->lease_ms : 30000;
    cl->poll_ms = cfg->poll_ms ? cfg->poll_ms : 1000;
    cl->retain_ms = cfg->retain_ms ? cfg->retain_ms : 24ull * 3600 * 1000;
    cl->slots = cfg->slots ? cfg->slots : 1;
    cl->max_attempts = cfg->max_attempts ? cfg->max_attempts : 3;
    cl->max_partitions = cfg->max_partitions ? cfg->max_partitions : 1024;
    cl->notify = cfg->notify;
    char host[256] = "";
    if (!cfg->node_id || !cfg->node_id[0])
        gethostname(host, sizeof host - 1);
    cl->node_id = strdup(cfg->node_id && cfg->node_id[0] ? cfg->node_id : host);
    cl->conninfo = strdup(cfg->database ? cfg->database : "");
    cl->conninfo_shown = hide_password(cl->conninfo ? cl->conninfo : "");
    cl->witness_dir = cfg->witness_dir && cfg->witness_dir[0] ? strdup(cfg->witness_dir) : NULL;
    cl->circuits_array = circuits_literal(e);
    cuzk_err err = CUZK_OK;
    if (!cl->node_id || !cl->conninfo || !cl->conninfo_shown || !cl->circuits_array ||
        (cfg->witness_dir && cfg->witness_dir[0] && !cl->witness_dir)) {
        err = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        goto fail;
    }
    if (!cl->node_id[0] || strlen(cl->node_id) > 120) {
        err = cuzk_errf(eb, CUZK_BAD_CONFIG, "cluster.node_id must be 1 to 120 bytes");
        goto fail;
    }
    if (cl->witness_dir && access(cl->witness_dir, W_OK | X_OK) != 0) {
        err = cuzk_errf(eb, CUZK_BAD_CONFIG, "cluster.witness_dir %s: %s", cl->witness_dir,
                        strerror(errno));
        goto fail;
    }
    if (pipe2(cl->wake_fd, O_NONBLOCK | O_CLOEXEC) != 0) {
        err = cuzk_errf(eb, CUZK_INTERNAL, "pipe: %s", strerror(errno));
        goto fail;
    }
    PGconn *c = cuzk__db_connect(cl, eb);
    if (!c) {
        err = CUZK_IO;
        goto fail;
    }
    if ((err = cuzk__schema_migrate(c, eb)) || (err = register_node(cl, c, eb))) {
        PQfinish(c);
        goto fail;
    }
    cuzk__db_put(cl, c);
    if ((err = cuzk__agent_start(cl, eb)))
        goto fail;
    CUZK_LOG_INFO(TGT, "joined the cluster", "node=%s database=%s circuits=%s slots=%u "
                  "lease_ms=%" PRIu64 " witnesses=%s", cl->node_id, cl->conninfo_shown,
                  cl->circuits_array, cl->slots, cl->lease_ms,
                  cl->witness_dir ? cl->witness_dir : "database");
    *out = cl;
    return CUZK_OK;
fail:
    cl->stopped = 1; /* nothing to drain */
    cuzk_cluster_free(cl);
    return err;
}

void cuzk_cluster_set_job_end_hook(cuzk_cluster *cl, cuzk_job_end_fn fn, void *ctx)
{
    pthread_mutex_lock(&cl->hook_mu);
    cl->end_fn = fn;
    cl->end_ctx = ctx;
    pthread_mutex_unlock(&cl->hook_mu);
}

void cuzk_cluster_set_address(cuzk_cluster *cl, const char *address)
{
    char *a = strdup(address ? address : "");
    pthread_mutex_lock(&cl->mu);
    free(cl->address);
    cl->address = a;
    pthread_mutex_unlock(&cl->mu);
}

static int wait_runs(struct cuzk_cluster *cl, uint64_t ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (ms % 1000) * 1000000ull;
    dl.tv_sec += (time_t)(ms / 1000 + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&cl->mu);
    while (cl->n_runs && pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) == 0)
        ;
    int left = (int)cl->n_runs;
    pthread_mutex_unlock(&cl->mu);
    return left;
}

unsigned cuzk_cluster_stop(cuzk_cluster *cl, uint64_t grace_ms)
{
    pthread_mutex_lock(&cl->mu);
    if (cl->stopped) {
        pthread_mutex_unlock(&cl->mu);
        return 0;
    }
    cl->stopping = 1;
    pthread_cond_broadcast(&cl->cv);
    pthread_cond_broadcast(&cl->done_cv);
    pthread_mutex_unlock(&cl->mu);
    cuzk__wake_claimer(cl);
    if (cl->threads_started)
        pthread_join(cl->claimer, NULL);
    /* The maintainer keeps renewing the leases while the partitions drain. */
    unsigned released = 0;
    if (wait_runs(cl, grace_ms)) {
        char ids[64][32];
        unsigned n = 0;
        pthread_mutex_lock(&cl->mu);
        for (cuzk__run *r = cl->runs; r && n < 64; r = r->next)
            if (r->local_id[0])
                memcpy(ids[n++], r->local_id, 32);
        pthread_mutex_unlock(&cl->mu);
        for (unsigned i = 0; i < n; i++) {
            int was;
            cuzk_job_state st;
            cuzk_errbuf eb = {{0}};
            cuzk_engine_cancel(cl->engine, ids[i], &was, &st, &eb);
        }
        /* Runners release their partitions when their local jobs end cancelled. */
        pthread_mutex_lock(&cl->mu);
        released = cl->n_runs;
        pthread_mutex_unlock(&cl->mu);
        wait_runs(cl, 365ull * 86400 * 1000); /* a running partition ends */
    }
    pthread_mutex_lock(&cl->mu);
    cl->stopped = 1;
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    if (cl->threads_started)
        pthread_join(cl->maintainer, NULL);
    cuzk_errbuf eb = {{0}};
    PGconn *c = cuzk__db_get(cl, &eb);
    if (c) {
        const char *v[1] = {cl->node_id};
        PQclear(cuzk__db_exec(c, "UPDATE cuzk_nodes SET stopped = true, partitions_running = 0"
                                 " WHERE node_id = $1",
                              1, v, NULL, NULL, 0, &eb));
        cuzk__db_put(cl, c);
    }
    if (cl->threads_started)
        CUZK_LOG_INFO(TGT, "left the cluster", "node=%s released=%u", cl->node_id, released);
    return released;
}
