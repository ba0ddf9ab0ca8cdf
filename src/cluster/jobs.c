/* The RPC side of the cluster: submit, await, cancel and the fleet view, answered from the
 * database by any node. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster_internal.h"
#include "cuzk/curve.h"
#include "cuzk/io.h"
#include "cuzk/log.h"
#include "util/clock.h"
#include "util/hash.h"

#define TGT CUZK__CLUSTER_TGT
/* How long a call waits for an unreachable database before it fails (a restart, a failover). */
#define DB_WAIT_MS 8000

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static PGconn *db_get_wait(struct cuzk_cluster *cl, double until_ms, cuzk_errbuf *eb)
{
    for (;;) {
        PGconn *c = cuzk__db_get(cl, eb);
        if (c || cuzk__now_ms() >= until_ms)
            return c;
        sleep_ms(200);
    }
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    return d;
}

/* ------------------------------------------------------------------ submit */

/* Checks every witness as the engine would when this node serves the circuit (curve, length,
 * values < r); otherwise only that it parses: the claiming node checks the rest. */
static cuzk_err check_witnesses(const cuzk_submit *req, const cuzk_circuit_info *ci,
                                cuzk_errbuf *eb)
{
    for (size_t i = 0; i < req->n_witnesses; i++) {
        cuzk_wtns w;
        char name[48];
        snprintf(name, sizeof name, "witness %zu", i);
        cuzk_err err = cuzk_wtns_parse(&w, req->witnesses[i], req->witness_lens[i], name, eb);
        if (err)
            return err;
        if (ci && (int)w.curve != ci->curve)
            err = cuzk_errf(eb, CUZK_WRONG_CURVE, "witness %zu is on %s, circuit '%s' on %s", i,
                            cuzk_curve_name(w.curve), ci->id,
                            cuzk_curve_name((cuzk_curve)ci->curve));
        if (!err && ci && w.n_witness != ci->n_vars)
            err = cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                            "witness %zu has %" PRIu64 " values, circuit '%s' expects %u", i,
                            w.n_witness, ci->id, ci->n_vars);
        if (!err && ci)
            err = cuzk_wtns_validate(&w, eb);
        cuzk_wtns_close(&w);
        if (err)
            return err;
    }
    return CUZK_OK;
}

static int write_all(const char *path, const uint8_t *p, size_t n)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0)
        return -1;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    /* Other nodes read it after the job's row commits: the bytes must be there by then. */
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void remove_files(struct cuzk_cluster *cl, const char *job_id, size_t n)
{
    char p[1200];
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s/%zu.wtns", cl->witness_dir, job_id, i);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/%s", cl->witness_dir, job_id);
    rmdir(p);
}

static cuzk_err write_files(struct cuzk_cluster *cl, const cuzk_submit *req, const char *job_id,
                            cuzk_errbuf *eb)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", cl->witness_dir, job_id);
    if (mkdir(p, 0750) != 0)
        return cuzk_errf(eb, CUZK_IO, "cluster.witness_dir: cannot create %s: %s", p,
                         strerror(errno));
    for (size_t i = 0; i < req->n_witnesses; i++) {
        snprintf(p, sizeof p, "%s/%s/%zu.wtns", cl->witness_dir, job_id, i);
        if (write_all(p, req->witnesses[i], req->witness_lens[i])) {
            cuzk_err e = cuzk_errf(eb, CUZK_IO, "cluster.witness_dir: cannot write %s: %s", p,
                                   strerror(errno));
            remove_files(cl, job_id, req->n_witnesses);
            return e;
        }
    }
    return CUZK_OK;
}

enum { INSERTED, CONFLICT, DB_ERROR };

/* One attempt: the job row and its partitions in one transaction. */
static int insert_job(struct cuzk_cluster *cl, PGconn *c, const cuzk_submit *req,
                      const char *job_id, const char *rid, cuzk_priority prio, uint64_t fp,
                      cuzk_errbuf *eb)
{
    char fps[32], prs[16], nps[16];
    snprintf(fps, sizeof fps, "%" PRId64, (int64_t)fp);
    snprintf(prs, sizeof prs, "%d", (int)prio);
    snprintf(nps, sizeof nps, "%zu", req->n_witnesses);
    if (cuzk__db_cmd(c, "BEGIN", eb))
        return DB_ERROR;
    const char *v[7] = {job_id, rid, fps, req->circuit_id, prs, nps, cl->node_id};
    PGresult *r = cuzk__db_exec(
        c, "INSERT INTO cuzk_jobs (job_id, request_id, fingerprint, circuit_id, priority, state,"
           " n_parts, submitted_by) VALUES ($1, NULLIF($2, ''), $3::bigint, $4, $5::int, 1,"
           " $6::int, $7) ON CONFLICT (request_id) DO NOTHING RETURNING job_id",
        7, v, NULL, NULL, 0, eb);
    if (!r)
        goto fail;
    int inserted = PQntuples(r) == 1;
    PQclear(r);
    if (!inserted) {
        PQclear(PQexec(c, "ROLLBACK"));
        return CONFLICT;
    }
    for (size_t i = 0; i < req->n_witnesses; i++) {
        char ps[24], path[1200];
        snprintf(ps, sizeof ps, "%zu", i);
        if (cl->witness_dir)
            snprintf(path, sizeof path, "%s/%s/%zu.wtns", cl->witness_dir, job_id, i);
        const char *pv[6] = {job_id, ps, req->circuit_id, prs,
                             cl->witness_dir ? NULL : (const char *)req->witnesses[i],
                             cl->witness_dir ? path : NULL};
        int lens[6] = {0, 0, 0, 0, cl->witness_dir ? 0 : (int)req->witness_lens[i], 0};
        int bin[6] = {0, 0, 0, 0, 1, 0};
        r = cuzk__db_exec(c, "INSERT INTO cuzk_partitions (job_id, part, circuit_id, priority,"
                             " created_at, witness, witness_path) VALUES ($1, $2::int, $3,"
                             " $4::int, now(), $5::bytea, $6)",
                          6, pv, lens, bin, 0, eb);
        if (!r)
            goto fail;
        PQclear(r);
    }
    if (cuzk__db_cmd(c, "COMMIT", eb))
        goto fail;
    return INSERTED;
fail:
    PQclear(PQexec(c, "ROLLBACK"));
    return DB_ERROR;
}

cuzk_err cuzk_cluster_submit(cuzk_cluster *cl, const cuzk_submit *req, char job_id[32],
                             int *existing, cuzk_errbuf *eb)
{
    *existing = 0;
    job_id[0] = 0;
    const char *rid = req->request_id ? req->request_id : "";
    const char *circ = req->circuit_id ? req->circuit_id : "";
    if (strlen(rid) > 256)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "request_id is longer than 256 bytes");
    if (!circ[0] || strlen(circ) > 127)
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%.127s'", circ);
    pthread_mutex_lock(&cl->mu);
    int stopping = cl->stopping;
    pthread_mutex_unlock(&cl->mu);
    if (stopping)
        return cuzk_errf(eb, CUZK_CANCELLED, "the daemon is shutting down");
    if (req->n_witness_seeds)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "witness_seeds are not taken by a cluster "
                         "node: send the witnesses");
    if (req->n_inputs)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "circuit inputs are not taken by a cluster "
                         "node: send the witnesses");
    if (req->n_witnesses == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "no witness: send one .wtns per partition");
    if (req->n_witnesses > cl->max_partitions)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%zu witnesses; at most %u partitions per job",
                         req->n_witnesses, cl->max_partitions);
    for (size_t i = 0; i < req->n_witnesses; i++)
        if (req->witness_lens[i] > 0x3fffffff)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "witness %zu is larger than 1 GiB, the "
                             "cluster database's limit for one value", i);
    cuzk_circuit_info *all = calloc(256, sizeof *all), *ci = NULL;
    if (!all)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    size_t nc = cuzk_engine_circuits(cl->engine, all, 256);
    for (size_t i = 0; i < nc && i < 256 && !ci; i++)
        if (strcmp(all[i].id, circ) == 0)
            ci = &all[i];
    cuzk_priority prio = req->priority ? req->priority : ci ? ci->priority : CUZK_PRIO_NORMAL;
    cuzk_err err = CUZK_OK;
    PGconn *c = NULL;
    if (prio < CUZK_PRIO_LOW || prio > CUZK_PRIO_CRITICAL) {
        err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "priority %d is out of range", (int)prio);
        goto out;
    }
    if ((err = check_witnesses(req, ci, eb)))
        goto out;
    uint64_t fp = cuzk__hash64(0x9e3779b97f4a7c15ull, circ, strlen(circ));
    for (size_t i = 0; i < req->n_witnesses; i++) {
        uint64_t len = req->witness_lens[i];
        fp = cuzk__hash64(fp, &len, sizeof len);
        fp = cuzk__hash64(fp, req->witnesses[i], req->witness_lens[i]);
    }
    double until = cuzk__now_ms() + DB_WAIT_MS;
    for (int tries = 0;; tries++) {
        if (c && cuzk__db_broken(c)) {
            PQfinish(c);
            c = NULL;
        }
        if (!c && !(c = db_get_wait(cl, until, eb))) {
            err = CUZK_IO;
            goto out;
        }
        if (!ci) { /* served by another node? */
            const char *v[1] = {circ};
            PGresult *r = cuzk__db_exec(c, "SELECT 1 FROM cuzk_nodes WHERE $1 = ANY(circuits)"
                                           " LIMIT 1", 1, v, NULL, NULL, 0, eb);
            if (!r) {
                if (cuzk__db_broken(c) && cuzk__now_ms() < until)
                    continue;
                err = CUZK_IO;
                goto out;
            }
            int known = PQntuples(r) == 1;
            PQclear(r);
            if (!known) {
                err = cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s' (no node of the cluster "
                                "serves it)", circ);
                goto out;
            }
        }
        cuzk__cluster_new_id(job_id);
        if (cl->witness_dir && (err = write_files(cl, req, job_id, eb)))
            goto out;
        int k = insert_job(cl, c, req, job_id, rid, prio, fp, eb);
        if (k == INSERTED) {
            CUZK_LOG_INFO(TGT, "job accepted", "job=%s circuit=%s priority=%s partitions=%zu "
                          "node=%s%s%s", job_id, circ, cuzk_priority_name(prio),
                          req->n_witnesses, cl->node_id, rid[0] ? " request_id=" : "", rid);
            cuzk__db_notify(cl, c, "cuzk_work", job_id);
            goto out;
        }
        if (cl->witness_dir)
            remove_files(cl, job_id, req->n_witnesses);
        if (k == CONFLICT) {
            const char *v[1] = {rid};
            PGresult *r = cuzk__db_exec(c, "SELECT job_id, circuit_id, fingerprint::text,"
                                           " n_parts FROM cuzk_jobs WHERE request_id = $1",
                                        1, v, NULL, NULL, 0, eb);
            if (!r) {
                err = CUZK_IO;
                goto out;
            }
            if (PQntuples(r) == 0) { /* deleted in between (retain ran out): insert again */
                PQclear(r);
                continue;
            }
            char fps[32];
            snprintf(fps, sizeof fps, "%" PRId64, (int64_t)fp);
            if (strcmp(PQgetvalue(r, 0, 1), circ) != 0 || strcmp(PQgetvalue(r, 0, 2), fps) != 0 ||
                (size_t)atoll(PQgetvalue(r, 0, 3)) != req->n_witnesses) {
                err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "request_id '%s' was already used for "
                                "job %s with another circuit or other witnesses", rid,
                                PQgetvalue(r, 0, 0));
                job_id[0] = 0;
            } else {
                snprintf(job_id, 32, "%s", PQgetvalue(r, 0, 0));
                *existing = 1;
            }
            PQclear(r);
            goto out;
        }
        /* A database error before COMMIT: nothing was stored. Retry a lost connection. */
        if (!cuzk__db_broken(c) || cuzk__now_ms() >= until || tries > 20) {
            err = CUZK_IO;
            job_id[0] = 0;
            goto out;
        }
    }
out:
    cuzk__db_put(cl, c);
    free(all);
    return err;
}

/* ------------------------------------------------------------------ await */

static int terminal(cuzk_job_state s)
{
    return s == CUZK_JOB_COMPLETED || s == CUZK_JOB_FAILED || s == CUZK_JOB_CANCELLED;
}

static int unhex(const char *h, uint8_t *out, size_t n)
{
    if (strlen(h) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

/* Fills *out from the job's rows. CUZK_NOT_FOUND, CUZK_IO or CUZK_OK. */
static cuzk_err load_job(PGconn *c, const char *job_id, cuzk_job_result *out, cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    const char *v[1] = {job_id};
    PGresult *r = cuzk__db_exec(
        c, "SELECT COALESCE(request_id, ''), circuit_id, state, n_parts, parts_done,"
           " COALESCE(err_code, ''), COALESCE(error, ''), COALESCE(completion_seq, 0),"
           " (EXTRACT(EPOCH FROM COALESCE(started_at, now()) - created_at) * 1000)::float8,"
           " (EXTRACT(EPOCH FROM COALESCE(finished_at, now()) - created_at) * 1000)::float8"
           " FROM cuzk_jobs WHERE job_id = $1",
        1, v, NULL, NULL, 0, eb);
    if (!r)
        return CUZK_IO;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s' (finished jobs are deleted "
                         "cluster.retain after they end)", job_id);
    }
    snprintf(out->job_id, sizeof out->job_id, "%s", job_id);
    out->request_id = xstrdup(PQgetvalue(r, 0, 0));
    out->circuit_id = xstrdup(PQgetvalue(r, 0, 1));
    out->state = (cuzk_job_state)atoi(PQgetvalue(r, 0, 2));
    out->n_parts = (size_t)atoll(PQgetvalue(r, 0, 3));
    out->parts_done = (size_t)atoll(PQgetvalue(r, 0, 4));
    out->err = PQgetvalue(r, 0, 5)[0] ? cuzk__err_from_name(PQgetvalue(r, 0, 5)) : CUZK_OK;
    out->error = xstrdup(PQgetvalue(r, 0, 6));
    out->seq = (uint64_t)strtoull(PQgetvalue(r, 0, 7), NULL, 10);
    out->queue_ms = atof(PQgetvalue(r, 0, 8));
    out->total_ms = atof(PQgetvalue(r, 0, 9));
    PQclear(r);
    if (!out->request_id || !out->circuit_id || !out->error) {
        cuzk_job_result_free(out);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    r = cuzk__db_exec(c, "SELECT part, proof_json, public_json,"
                         " COALESCE(encode(proof_compressed, 'hex'), ''), synth_ms, prove_ms,"
                         " budget_wait_ms, gpu_ms, g2_ms FROM cuzk_results WHERE job_id = $1"
                         " ORDER BY part",
                      1, v, NULL, NULL, 0, eb);
    if (!r) {
        cuzk_job_result_free(out);
        return CUZK_IO;
    }
    int n = PQntuples(r);
    for (int i = 0; i < n; i++) {
        out->synth_ms += atof(PQgetvalue(r, i, 4));
        out->prove_ms += atof(PQgetvalue(r, i, 5));
        out->budget_wait_ms += atof(PQgetvalue(r, i, 6));
        out->gpu_ms += atof(PQgetvalue(r, i, 7));
        out->g2_ms += atof(PQgetvalue(r, i, 8));
    }
    /* Proofs in witness order, one per partition, as a single node returns them. */
    if (out->state == CUZK_JOB_COMPLETED && (size_t)n == out->n_parts && n > 0) {
        out->parts = calloc((size_t)n, sizeof *out->parts);
        for (int i = 0; out->parts && i < n; i++) {
            cuzk_part_result *p = &out->parts[i];
            p->proof_json = xstrdup(PQgetvalue(r, i, 1));
            p->public_json = xstrdup(PQgetvalue(r, i, 2));
            p->has_compressed = unhex(PQgetvalue(r, i, 3), p->compressed, 192) == 0;
        }
        if (!out->parts) {
            PQclear(r);
            cuzk_job_result_free(out);
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        }
    }
    PQclear(r);
    return CUZK_OK;
}

cuzk_err cuzk_cluster_await(cuzk_cluster *cl, const char *job_id, uint64_t timeout_ms,
                            cuzk_job_result *out, cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    double start = cuzk__now_ms();
    double until = timeout_ms ? start + (double)timeout_ms : 0;
    double db_until = start + DB_WAIT_MS;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        uint64_t epoch = cl->done_epoch;
        int stopping = cl->stopping;
        pthread_mutex_unlock(&cl->mu);
        PGconn *c = cuzk__db_get(cl, eb);
        cuzk_err e = c ? load_job(c, job_id, out, eb) : CUZK_IO;
        cuzk__db_put(cl, c);
        double now = cuzk__now_ms();
        if (e == CUZK_IO) {
            /* The database is away (a restart, a failover): wait for it a while. */
            if (now >= db_until || stopping)
                return e;
            sleep_ms(cl->poll_ms < 500 ? cl->poll_ms : 500);
            continue;
        }
        db_until = now + DB_WAIT_MS;
        if (e || terminal(out->state) || stopping || (until && now >= until))
            return e;
        cuzk_job_result_free(out);
        uint64_t wait = cl->poll_ms;
        if (until && until - now < (double)wait)
            wait = (uint64_t)(until - now) + 1;
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + (wait % 1000) * 1000000ull;
        dl.tv_sec += (time_t)(wait / 1000 + ns / 1000000000ull);
        dl.tv_nsec = (long)(ns % 1000000000ull);
        pthread_mutex_lock(&cl->mu);
        while (cl->done_epoch == epoch && !cl->stopping &&
               pthread_cond_timedwait(&cl->done_cv, &cl->mu, &dl) == 0)
            ;
        pthread_mutex_unlock(&cl->mu);
    }
}

/* ------------------------------------------------------------------ cancel */

cuzk_err cuzk_cluster_cancel(cuzk_cluster *cl, const char *job_id, int *was_live,
                             cuzk_job_state *state, cuzk_errbuf *eb)
{
    *was_live = 0;
    *state = CUZK_JOB_UNKNOWN;
    PGconn *c = db_get_wait(cl, cuzk__now_ms() + DB_WAIT_MS, eb);
    if (!c)
        return CUZK_IO;
    char rs[32];
    snprintf(rs, sizeof rs, "%" PRIu64, cl->retain_ms);
    const char *v[2] = {job_id, rs};
    cuzk_err err = CUZK_IO;
    if (cuzk__db_cmd(c, "BEGIN", eb))
        goto out;
    PGresult *r = cuzk__db_exec(
        c, "UPDATE cuzk_jobs SET state = 5, err_code = 'CANCELLED', error = 'cancelled',"
           " finished_at = now(), expires_at = now() + $2::bigint * interval '1 millisecond',"
           " completion_seq = nextval('cuzk_completion_seq')"
           " WHERE job_id = $1 AND state IN (1, 2)",
        2, v, NULL, NULL, 0, eb);
    if (!r)
        goto rollback;
    *was_live = atoi(PQcmdTuples(r)) == 1;
    PQclear(r);
    if (*was_live) {
        r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = 4, lease_owner = NULL,"
                             " witness = NULL WHERE job_id = $1 AND state IN (0, 1)",
                          1, v, NULL, NULL, 0, eb);
        if (!r)
            goto rollback;
        PQclear(r);
    }
    r = cuzk__db_exec(c, "SELECT state FROM cuzk_jobs WHERE job_id = $1", 1, v, NULL, NULL, 0,
                      eb);
    if (!r)
        goto rollback;
    int found = PQntuples(r) == 1;
    if (found)
        *state = (cuzk_job_state)atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    if (cuzk__db_cmd(c, "COMMIT", eb))
        goto rollback;
    if (!found) {
        err = cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s'", job_id);
        goto out;
    }
    err = CUZK_OK;
    if (*was_live) {
        CUZK_LOG_INFO(TGT, "cancelling job", "job=%s node=%s", job_id, cl->node_id);
        cuzk__db_notify(cl, c, "cuzk_cancel", job_id);
        cuzk__db_notify(cl, c, "cuzk_done", job_id);
        pthread_mutex_lock(&cl->mu); /* this node's own runs stop without waiting for NOTIFY */
        cl->maint_kick = 1;
        pthread_cond_broadcast(&cl->cv);
        pthread_mutex_unlock(&cl->mu);
    }
    goto out;
rollback:
    PQclear(PQexec(c, "ROLLBACK"));
out:
    cuzk__db_put(cl, c);
    return err;
}

/* ------------------------------------------------------------------ fleet */

void cuzk_cluster_fleet_free(cuzk_cluster_fleet *f)
{
    free(f->nodes);
    memset(f, 0, sizeof *f);
}

cuzk_err cuzk_cluster_get_fleet(cuzk_cluster *cl, cuzk_cluster_fleet *out, cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    snprintf(out->node_id, sizeof out->node_id, "%s", cl->node_id);
    PGconn *c = cuzk__db_get(cl, eb);
    if (!c)
        return CUZK_IO;
    cuzk_err err = CUZK_IO;
    char ls[32];
    snprintf(ls, sizeof ls, "%" PRIu64, cl->lease_ms);
    const char *v[1] = {ls};
    PGresult *r = cuzk__db_exec(
        c, "SELECT node_id, address, array_to_string(circuits, ','),"
           " (EXTRACT(EPOCH FROM now() - heartbeat_at))::float8,"
           " (NOT stopped AND heartbeat_at > now() - $1::bigint * interval '1 millisecond'),"
           " partitions_running, slots, partitions_proved FROM cuzk_nodes ORDER BY node_id",
        1, v, NULL, NULL, 0, eb);
    if (!r)
        goto out;
    int n = PQntuples(r);
    out->nodes = calloc(n ? (size_t)n : 1, sizeof *out->nodes);
    if (!out->nodes) {
        PQclear(r);
        err = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        cuzk_cluster_node *x = &out->nodes[i];
        snprintf(x->node_id, sizeof x->node_id, "%s", PQgetvalue(r, i, 0));
        snprintf(x->address, sizeof x->address, "%s", PQgetvalue(r, i, 1));
        snprintf(x->circuits, sizeof x->circuits, "%s", PQgetvalue(r, i, 2));
        x->heartbeat_age_s = atof(PQgetvalue(r, i, 3));
        x->alive = PQgetvalue(r, i, 4)[0] == 't';
        x->partitions_running = (unsigned)atoi(PQgetvalue(r, i, 5));
        x->slots = (unsigned)atoi(PQgetvalue(r, i, 6));
        x->partitions_proved = (uint64_t)strtoull(PQgetvalue(r, i, 7), NULL, 10);
    }
    out->n_nodes = (size_t)n;
    PQclear(r);
    r = cuzk__db_exec(c, "SELECT (SELECT count(*) FROM cuzk_jobs WHERE state = 1),"
                         " (SELECT count(*) FROM cuzk_jobs WHERE state = 2),"
                         " (SELECT count(*) FROM cuzk_partitions WHERE state = 0),"
                         " (SELECT count(*) FROM cuzk_partitions WHERE state = 1)",
                      0, NULL, NULL, NULL, 0, eb);
    if (!r)
        goto out;
    out->jobs_queued = (unsigned)atoi(PQgetvalue(r, 0, 0));
    out->jobs_running = (unsigned)atoi(PQgetvalue(r, 0, 1));
    out->partitions_pending = (unsigned)atoi(PQgetvalue(r, 0, 2));
    out->partitions_running = (unsigned)atoi(PQgetvalue(r, 0, 3));
    PQclear(r);
    err = CUZK_OK;
out:
    cuzk__db_put(cl, c);
    if (err)
        cuzk_cluster_fleet_free(out);
    return err;
}
