/* The node's agent: the claimer takes pending partitions of the circuits this node serves while
 * it has a free slot; a runner thread per claimed partition proves it as a one-partition job of
 * the local engine (whose budgets still decide when it runs) and records the result; the
 * maintainer heartbeats, renews this node's leases (a lease it finds gone means the job was
 * cancelled or another node took the partition: the local job is cancelled), fails partitions
 * that lost too many leases, and deletes expired jobs. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster_internal.h"
#include "cuzk/log.h"
#include "io/binfile.h"
#include "util/clock.h"

#define TGT CUZK__CLUSTER_TGT

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void deadline_in(struct timespec *ts, uint64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    uint64_t ns = (uint64_t)ts->tv_nsec + (ms % 1000) * 1000000ull;
    ts->tv_sec += (time_t)(ms / 1000 + ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
}

void cuzk__wake_claimer(struct cuzk_cluster *cl)
{
    char b = 1;
    ssize_t k = write(cl->wake_fd[1], &b, 1);
    (void)k; /* a full pipe already wakes it */
}

static int is_stopping(struct cuzk_cluster *cl)
{
    pthread_mutex_lock(&cl->mu);
    int s = cl->stopping;
    pthread_mutex_unlock(&cl->mu);
    return s;
}

/* ------------------------------------------------------------------ recording */

/* The job failed: marks it FAILED with err / msg, the failed partition FAILED and the others
 * that have not ended CANCELLED (their nodes stop them at the next renewal). 0 or -1. */
int cuzk__record_failure(struct cuzk_cluster *cl, PGconn *c, const char *job_id, int part,
                         cuzk_err err, const char *msg, cuzk_errbuf *eb)
{
    char ps[16], rs[32];
    snprintf(ps, sizeof ps, "%d", part);
    snprintf(rs, sizeof rs, "%" PRIu64, cl->retain_ms);
    const char *v[4] = {job_id, cuzk_errname(err), msg, rs};
    const char *k[2] = {job_id, ps};
    if (cuzk__db_cmd(c, "BEGIN", eb))
        return -1;
    PGresult *r = cuzk__db_exec(
        c, "UPDATE cuzk_jobs SET state = 4, err_code = $2, error = $3, finished_at = now(),"
           " expires_at = now() + $4::bigint * interval '1 millisecond',"
           " completion_seq = nextval('cuzk_completion_seq')"
           " WHERE job_id = $1 AND state IN (1, 2)",
        4, v, NULL, NULL, 0, eb);
    int ok = r != NULL, live = r && atoi(PQcmdTuples(r)) == 1;
    PQclear(r);
    if (ok && live) {
        r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = CASE WHEN part = $2::int THEN 3"
                             " ELSE 4 END, lease_owner = NULL, witness = NULL"
                             " WHERE job_id = $1 AND state IN (0, 1)",
                          2, k, NULL, NULL, 0, eb);
        ok = r != NULL;
        PQclear(r);
    }
    if (ok)
        ok = cuzk__db_cmd(c, "COMMIT", eb) == 0;
    if (!ok) {
        PQclear(PQexec(c, "ROLLBACK"));
        return -1;
    }
    if (live) {
        CUZK_LOG_WARN(TGT, "job failed", "job=%s partition=%d node=%s code=%s error=%s", job_id,
                      part, cl->node_id, cuzk_errname(err), msg);
        cuzk__db_notify(cl, c, "cuzk_cancel", job_id);
        cuzk__db_notify(cl, c, "cuzk_done", job_id);
    }
    return 0;
}

/* Records a partition's proof once: the first result of a partition wins, a later one (its
 * lease had expired and another node proved it too) is dropped. Completes the job with its
 * last partition. 0 or -1. */
static int record_result(struct cuzk_cluster *cl, PGconn *c, const cuzk__run *run,
                         const cuzk_job_result *res, int *recorded, cuzk_errbuf *eb)
{
    *recorded = 0;
    const cuzk_part_result *p = &res->parts[0];
    char ps[16], as[16], t[5][32], rs[32];
    snprintf(ps, sizeof ps, "%d", run->part);
    snprintf(as, sizeof as, "%d", run->attempt);
    double tv[5] = {res->synth_ms, res->prove_ms, res->budget_wait_ms, res->gpu_ms, res->g2_ms};
    for (int i = 0; i < 5; i++)
        snprintf(t[i], sizeof t[i], "%.3f", tv[i]);
    snprintf(rs, sizeof rs, "%" PRIu64, cl->retain_ms);
    if (cuzk__db_cmd(c, "BEGIN", eb))
        return -1;
    const char *k[2] = {run->job_id, ps};
    PGresult *r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = 2, lease_owner = NULL,"
                                   " lease_expires = NULL, witness = NULL"
                                   " WHERE job_id = $1 AND part = $2::int AND state IN (0, 1)"
                                   " RETURNING COALESCE(witness_path, '')",
                                2, k, NULL, NULL, 0, eb);
    if (!r)
        goto fail;
    int first = PQntuples(r) == 1;
    char wpath[1024] = "";
    if (first)
        snprintf(wpath, sizeof wpath, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    int completed = 0;
    if (first) {
        const char *v[13] = {run->job_id, ps, cl->node_id, as, p->proof_json, p->public_json,
                             p->has_compressed ? (const char *)p->compressed : NULL,
                             t[0], t[1], t[2], t[3], t[4]};
        int lens[13] = {0, 0, 0, 0, 0, 0, p->has_compressed ? 192 : 0};
        int bin[13] = {0, 0, 0, 0, 0, 0, 1};
        r = cuzk__db_exec(c, "INSERT INTO cuzk_results (job_id, part, node_id, attempt,"
                             " proof_json, public_json, proof_compressed, synth_ms, prove_ms,"
                             " budget_wait_ms, gpu_ms, g2_ms) VALUES ($1, $2::int, $3, $4::int,"
                             " $5, $6, $7, $8::float8, $9::float8, $10::float8, $11::float8,"
                             " $12::float8) ON CONFLICT (job_id, part) DO NOTHING",
                          12, v, lens, bin, 0, eb);
        if (!r)
            goto fail;
        PQclear(r);
        r = cuzk__db_exec(c, "UPDATE cuzk_jobs SET parts_done = parts_done + 1 WHERE job_id = $1"
                             " AND state IN (1, 2) RETURNING parts_done = n_parts",
                          1, k, NULL, NULL, 0, eb);
        if (!r)
            goto fail;
        completed = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
        PQclear(r);
        if (completed) {
            const char *v2[2] = {run->job_id, rs};
            r = cuzk__db_exec(c, "UPDATE cuzk_jobs SET state = 3, finished_at = now(),"
                                 " expires_at = now() + $2::bigint * interval '1 millisecond',"
                                 " completion_seq = nextval('cuzk_completion_seq')"
                                 " WHERE job_id = $1",
                              2, v2, NULL, NULL, 0, eb);
            if (!r)
                goto fail;
            PQclear(r);
        }
    }
    if (cuzk__db_cmd(c, "COMMIT", eb))
        goto fail;
    *recorded = first;
    if (wpath[0])
        unlink(wpath);
    if (completed) {
        CUZK_LOG_INFO(TGT, "job completed", "job=%s node=%s", run->job_id, cl->node_id);
        cuzk__db_notify(cl, c, "cuzk_done", run->job_id);
    }
    return 0;
fail:
    PQclear(PQexec(c, "ROLLBACK"));
    return -1;
}

/* Hands a claimed partition back to the queue (shutting down, or this node has no room). */
static int release_claim(struct cuzk_cluster *cl, PGconn *c, const cuzk__run *run,
                         cuzk_errbuf *eb)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", run->part);
    const char *v[3] = {run->job_id, ps, cl->node_id};
    PGresult *r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = 0, lease_owner = NULL,"
                                   " lease_expires = NULL, attempt = GREATEST(attempt - 1, 0)"
                                   " WHERE job_id = $1 AND part = $2::int AND state = 1"
                                   " AND lease_owner = $3",
                                3, v, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    PQclear(r);
    cuzk__db_notify(cl, c, "cuzk_work", run->job_id);
    return 0;
}

enum { OUTCOME_RESULT, OUTCOME_FAILURE, OUTCOME_RELEASE, OUTCOME_NONE };

/* Runs fn until it succeeds. The database may be restarting: a runner keeps its result until
 * it is written, or until the node stops (then the lease expires and another node redoes it). */
static void persist(struct cuzk_cluster *cl, cuzk__run *run, int outcome,
                    const cuzk_job_result *res, cuzk_err err, const char *msg)
{
    uint64_t backoff = 100;
    int logged = 0;
    for (;;) {
        cuzk_errbuf eb = {{0}};
        PGconn *c = cuzk__db_get(cl, &eb);
        int rc = -1, recorded = 0;
        if (c) {
            if (outcome == OUTCOME_RESULT)
                rc = record_result(cl, c, run, res, &recorded, &eb);
            else if (outcome == OUTCOME_FAILURE)
                rc = cuzk__record_failure(cl, c, run->job_id, run->part, err, msg, &eb);
            else
                rc = release_claim(cl, c, run, &eb);
            cuzk__db_put(cl, c);
        }
        if (rc == 0) {
            if (outcome == OUTCOME_RESULT && recorded) {
                pthread_mutex_lock(&cl->mu);
                cl->proved++;
                pthread_mutex_unlock(&cl->mu);
                CUZK_LOG_INFO(TGT, "partition proved", "job=%s partition=%d node=%s attempt=%d "
                              "prove_ms=%.1f", run->job_id, run->part, cl->node_id, run->attempt,
                              res->prove_ms);
            } else if (outcome == OUTCOME_RESULT) {
                CUZK_LOG_INFO(TGT, "partition result dropped: recorded already or job ended",
                              "job=%s partition=%d node=%s", run->job_id, run->part,
                              cl->node_id);
            }
            return;
        }
        if (!logged++)
            CUZK_LOG_WARN(TGT, "cannot record partition; retrying", "job=%s partition=%d "
                          "error=%s", run->job_id, run->part, eb.msg);
        if (is_stopping(cl) && logged > 20) {
            CUZK_LOG_WARN(TGT, "giving up recording partition: its lease will expire",
                          "job=%s partition=%d", run->job_id, run->part);
            return;
        }
        sleep_ms(backoff);
        if (backoff < 1000)
            backoff *= 2;
    }
}

/* ------------------------------------------------------------------ runners */

static void run_free(cuzk__run *run)
{
    free(run->witness);
    free(run);
}

static void run_detach(struct cuzk_cluster *cl, cuzk__run *run)
{
    pthread_mutex_lock(&cl->mu);
    for (cuzk__run **pp = &cl->runs; *pp; pp = &(*pp)->next)
        if (*pp == run) {
            *pp = run->next;
            break;
        }
    cl->n_runs--;
    pthread_cond_broadcast(&cl->cv);
    pthread_mutex_unlock(&cl->mu);
    cuzk__wake_claimer(cl);
}

static int retryable_here(cuzk_err e)
{
    /* This node cannot run it now (busy, too large for its budget, shutting down, the circuit
     * no longer served); another node or a later claim may. */
    return e == CUZK_OUT_OF_BUDGET || e == CUZK_CANCELLED || e == CUZK_NOT_FOUND ||
           e == CUZK_NO_MEMORY;
}

static void *run_main(void *arg)
{
    cuzk__run *run = arg;
    struct cuzk_cluster *cl = run->cl;
    cuzk_errbuf eb = {{0}};
    char msg[CUZK_ERRBUF_SIZE + 64];
    const uint8_t *w = run->witness;
    size_t wl = run->witness_len;
    cuzk_submit s = {.circuit_id = run->circuit_id, .priority = run->priority, .n_witnesses = 1,
                     .witnesses = &w, .witness_lens = &wl};
    char local[32];
    int existing = 0;
    cuzk_err e = cuzk_engine_submit(cl->engine, &s, local, &existing, &eb);
    free(run->witness);
    run->witness = NULL;
    if (e) {
        if (retryable_here(e)) {
            CUZK_LOG_INFO(TGT, "partition handed back", "job=%s partition=%d reason=%s",
                          run->job_id, run->part, eb.msg);
            persist(cl, run, OUTCOME_RELEASE, NULL, 0, NULL);
            if (e == CUZK_OUT_OF_BUDGET)
                sleep_ms(cl->poll_ms); /* the slot stays taken a moment: no claim loop */
        } else {
            snprintf(msg, sizeof msg, "partition %d: %s", run->part, eb.msg);
            persist(cl, run, OUTCOME_FAILURE, NULL, e, msg);
        }
        run_detach(cl, run);
        run_free(run);
        return NULL;
    }
    pthread_mutex_lock(&cl->mu);
    memcpy(run->local_id, local, sizeof local);
    int lost = run->lost;
    pthread_mutex_unlock(&cl->mu);
    if (lost) {
        int was;
        cuzk_job_state st;
        cuzk_engine_cancel(cl->engine, local, &was, &st, &eb);
    }
    cuzk_job_result res;
    e = cuzk_engine_await(cl->engine, local, 0, &res, &eb);
    pthread_mutex_lock(&cl->mu);
    lost = run->lost;
    pthread_mutex_unlock(&cl->mu);
    if (e) {
        CUZK_LOG_ERROR(TGT, "local job vanished", "job=%s partition=%d local=%s error=%s",
                       run->job_id, run->part, local, eb.msg);
        persist(cl, run, OUTCOME_RELEASE, NULL, 0, NULL);
    } else if (res.state == CUZK_JOB_COMPLETED && res.n_parts == 1 && res.parts) {
        persist(cl, run, OUTCOME_RESULT, &res, 0, NULL); /* a lost lease's proof may still win */
    } else if (res.state == CUZK_JOB_CANCELLED) {
        if (!lost)
            persist(cl, run, OUTCOME_RELEASE, NULL, 0, NULL); /* this node is stopping */
        else
            CUZK_LOG_INFO(TGT, "partition stopped: job cancelled or partition taken elsewhere",
                          "job=%s partition=%d node=%s", run->job_id, run->part, cl->node_id);
    } else if (res.err == CUZK_OUT_OF_BUDGET) {
        persist(cl, run, OUTCOME_RELEASE, NULL, 0, NULL);
    } else if (!lost) {
        snprintf(msg, sizeof msg, "partition %d: %s", run->part, res.error);
        persist(cl, run, OUTCOME_FAILURE, NULL, res.err, msg);
    }
    if (!e)
        cuzk_job_result_free(&res);
    run_detach(cl, run);
    run_free(run);
    return NULL;
}

/* ------------------------------------------------------------------ claimer */

/* Claims one partition and starts its runner. 1 claimed, 0 none pending, -1 database error. */
static int claim_one(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    char ls[32], ma[16];
    snprintf(ls, sizeof ls, "%" PRIu64, cl->lease_ms);
    snprintf(ma, sizeof ma, "%u", cl->max_attempts);
    if (cuzk__db_cmd(c, "BEGIN", eb))
        return -1;
    const char *v[2] = {cl->circuits_array, ma};
    PGresult *r = cuzk__db_exec(
        c, "SELECT job_id, part, COALESCE(lease_owner, '') FROM cuzk_partitions"
           " WHERE circuit_id = ANY($1::text[]) AND (state = 0 OR (state = 1 AND"
           " lease_expires < now() AND attempt < $2::int))"
           " ORDER BY priority DESC, created_at, job_id, part LIMIT 1 FOR UPDATE SKIP LOCKED",
        2, v, NULL, NULL, 0, eb);
    if (!r)
        goto fail;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return cuzk__db_cmd(c, "COMMIT", eb) ? -1 : 0;
    }
    cuzk__run *run = calloc(1, sizeof *run);
    if (!run) {
        PQclear(r);
        cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        goto fail;
    }
    snprintf(run->job_id, sizeof run->job_id, "%s", PQgetvalue(r, 0, 0));
    run->part = atoi(PQgetvalue(r, 0, 1));
    char prev_owner[128];
    snprintf(prev_owner, sizeof prev_owner, "%s", PQgetvalue(r, 0, 2));
    PQclear(r);
    const char *v2[4] = {run->job_id, NULL, cl->node_id, ls};
    char ps[16];
    snprintf(ps, sizeof ps, "%d", run->part);
    v2[1] = ps;
    /* Binary results: the witness comes back as raw bytes (integers are sent as text). */
    r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET state = 1, lease_owner = $3,"
                         " lease_expires = now() + $4::bigint * interval '1 millisecond',"
                         " attempt = attempt + 1 WHERE job_id = $1 AND part = $2::int"
                         " RETURNING attempt::text, circuit_id, priority::text, witness,"
                         " COALESCE(witness_path, '')",
                      4, v2, NULL, NULL, 1, eb);
    if (!r) {
        free(run);
        goto fail;
    }
    run->attempt = atoi(PQgetvalue(r, 0, 0));
    snprintf(run->circuit_id, sizeof run->circuit_id, "%s", PQgetvalue(r, 0, 1));
    run->priority = (cuzk_priority)atoi(PQgetvalue(r, 0, 2));
    char wpath[1024];
    snprintf(wpath, sizeof wpath, "%s", PQgetvalue(r, 0, 4));
    if (!PQgetisnull(r, 0, 3)) {
        run->witness_len = (size_t)PQgetlength(r, 0, 3);
        run->witness = malloc(run->witness_len ? run->witness_len : 1);
        if (run->witness)
            memcpy(run->witness, PQgetvalue(r, 0, 3), run->witness_len);
    }
    PQclear(r);
    r = cuzk__db_exec(c, "UPDATE cuzk_jobs SET state = 2, started_at = COALESCE(started_at,"
                         " now()) WHERE job_id = $1 AND state = 1",
                      1, v2, NULL, NULL, 0, eb);
    if (!r || cuzk__db_cmd(c, "COMMIT", eb)) {
        PQclear(r);
        run_free(run);
        goto fail;
    }
    PQclear(r);
    if (wpath[0]) { /* shared_dir storage: the submitting node wrote it there */
        cuzk_file f;
        cuzk_errbuf feb = {{0}};
        if (cuzk__file_map(&f, wpath, &feb) == CUZK_OK) {
            run->witness_len = (size_t)f.len;
            run->witness = malloc(f.len ? f.len : 1);
            if (run->witness && f.len)
                memcpy(run->witness, f.data, f.len);
            cuzk__file_unmap(&f);
        } else {
            CUZK_LOG_ERROR(TGT, "witness file unreadable", "job=%s partition=%d error=%s",
                           run->job_id, run->part, feb.msg);
        }
    }
    CUZK_LOG_INFO(TGT, "partition claimed", "job=%s partition=%d node=%s attempt=%d%s%s",
                  run->job_id, run->part, cl->node_id, run->attempt,
                  prev_owner[0] ? " lease_expired_on=" : "", prev_owner);
    run->cl = cl;
    pthread_mutex_lock(&cl->mu);
    run->next = cl->runs;
    cl->runs = run;
    cl->n_runs++;
    pthread_mutex_unlock(&cl->mu);
    if (!run->witness) {
        /* No witness (an unreadable shared file): the job cannot be proved anywhere alike. */
        persist(cl, run, OUTCOME_FAILURE, NULL, CUZK_IO, "the partition's witness is missing");
        run_detach(cl, run);
        run_free(run);
        return 1;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&run->thread, &at, run_main, run) != 0) {
        persist(cl, run, OUTCOME_RELEASE, NULL, 0, NULL);
        run_detach(cl, run);
        run_free(run);
    }
    pthread_attr_destroy(&at);
    return 1;
fail:
    PQclear(PQexec(c, "ROLLBACK"));
    return -1;
}

static int listen_all(struct cuzk_cluster *cl, PGconn *c)
{
    if (!cl->notify)
        return 0;
    cuzk_errbuf eb = {{0}};
    if (cuzk__db_cmd(c, "LISTEN cuzk_work", &eb) || cuzk__db_cmd(c, "LISTEN cuzk_done", &eb) ||
        cuzk__db_cmd(c, "LISTEN cuzk_cancel", &eb)) {
        if (cuzk__db_broken(c))
            return -1;
        CUZK_LOG_WARN(TGT, "the database refuses LISTEN: polling every poll_interval",
                      "error=%s", eb.msg);
        cl->notify = 0;
    }
    return 0;
}

static void broadcast_done(struct cuzk_cluster *cl)
{
    pthread_mutex_lock(&cl->mu);
    cl->done_epoch++;
    pthread_cond_broadcast(&cl->done_cv);
    pthread_mutex_unlock(&cl->mu);
}

static void report_end(struct cuzk_cluster *cl, const char *job_id)
{
    pthread_mutex_lock(&cl->hook_mu);
    if (cl->end_fn)
        cl->end_fn(cl->end_ctx, job_id);
    pthread_mutex_unlock(&cl->hook_mu);
}

/* Reports the jobs that ended since the last look, by their expires_at (finished_at + retain).
 * A transaction stamps its time when it starts, so one that committed late may carry an older
 * stamp: the look reaches 10 s behind the mark (a job reported twice is harmless). */
static int report_ended(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&cl->hook_mu);
    int hooked = cl->end_fn != NULL;
    pthread_mutex_unlock(&cl->hook_mu);
    if (!hooked)
        return 0;
    char rs[32];
    snprintf(rs, sizeof rs, "%" PRIu64, cl->retain_ms);
    const char *v[2] = {cl->end_mark[0] ? cl->end_mark : NULL, rs};
    PGresult *r = cuzk__db_exec(
        c, "SELECT job_id, expires_at::text FROM cuzk_jobs WHERE expires_at >"
           " COALESCE($1::timestamptz, now() + $2::bigint * interval '1 millisecond')"
           " - interval '10 seconds' ORDER BY expires_at",
        2, v, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    int n = PQntuples(r);
    for (int i = 0; i < n; i++)
        report_end(cl, PQgetvalue(r, i, 0));
    if (n)
        snprintf(cl->end_mark, sizeof cl->end_mark, "%s", PQgetvalue(r, n - 1, 1));
    PQclear(r);
    return 0;
}

static void *claimer_main(void *arg)
{
    struct cuzk_cluster *cl = arg;
    PGconn *c = NULL;
    int down_logged = 0;
    while (!is_stopping(cl)) {
        cuzk_errbuf eb = {{0}};
        if (!c) {
            c = cuzk__db_connect(cl, &eb);
            if (c && listen_all(cl, c)) {
                PQfinish(c);
                c = NULL;
            }
            if (!c) {
                if (!down_logged++)
                    CUZK_LOG_WARN(TGT, "cluster database unreachable; retrying", "error=%s",
                                  eb.msg);
            } else if (down_logged) {
                CUZK_LOG_INFO(TGT, "cluster database reachable again", "node=%s",
                              cl->node_id);
                down_logged = 0;
            }
        }
        while (c) {
            pthread_mutex_lock(&cl->mu);
            int room = !cl->stopping && cl->n_runs < cl->slots;
            pthread_mutex_unlock(&cl->mu);
            if (!room)
                break;
            int k = claim_one(cl, c, &eb);
            if (k < 0) {
                CUZK_LOG_WARN(TGT, "claim failed", "error=%s", eb.msg);
                if (cuzk__db_broken(c)) {
                    PQfinish(c);
                    c = NULL;
                } else {
                    sleep_ms(50); /* e.g. a serialization conflict: try again shortly */
                }
                break;
            }
            if (k == 0)
                break;
        }
        struct pollfd pf[2] = {{cl->wake_fd[0], POLLIN, 0}, {c ? PQsocket(c) : -1, POLLIN, 0}};
        int n = poll(pf, c ? 2 : 1, (int)cl->poll_ms);
        if (n > 0 && (pf[0].revents & POLLIN)) {
            char buf[64];
            while (read(cl->wake_fd[0], buf, sizeof buf) > 0)
                ;
        }
        int done = 0, cancel = 0;
        if (c) {
            if (!PQconsumeInput(c) || cuzk__db_broken(c)) {
                PQfinish(c);
                c = NULL;
            } else {
                PGnotify *nt;
                while ((nt = PQnotifies(c))) {
                    done |= strcmp(nt->relname, "cuzk_done") == 0;
                    if (strcmp(nt->relname, "cuzk_done") == 0)
                        report_end(cl, nt->extra);
                    cancel |= strcmp(nt->relname, "cuzk_cancel") == 0;
                    PQfreemem(nt);
                }
            }
        }
        if (cancel) {
            pthread_mutex_lock(&cl->mu);
            cl->maint_kick = 1;
            pthread_cond_broadcast(&cl->cv);
            pthread_mutex_unlock(&cl->mu);
        }
        if (done || n == 0)
            broadcast_done(cl); /* waiting callers look again (at least every poll_interval) */
        if (c && report_ended(cl, c, &eb) && cuzk__db_broken(c)) {
            PQfinish(c);
            c = NULL;
        }
    }
    if (c)
        PQfinish(c);
    return NULL;
}

/* ------------------------------------------------------------------ maintainer */

static int heartbeat(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    char run_s[16], slots_s[16], proved_s[32];
    pthread_mutex_lock(&cl->mu);
    snprintf(run_s, sizeof run_s, "%u", cl->n_runs);
    snprintf(proved_s, sizeof proved_s, "%" PRIu64, cl->proved);
    char *addr = strdup(cl->address ? cl->address : "");
    pthread_mutex_unlock(&cl->mu);
    snprintf(slots_s, sizeof slots_s, "%u", cl->slots);
    const char *v[6] = {cl->node_id, addr ? addr : "", cl->circuits_array, run_s, slots_s,
                        proved_s};
    PGresult *r = cuzk__db_exec(
        c, "INSERT INTO cuzk_nodes (node_id, address, circuits, partitions_running, slots,"
           " partitions_proved) VALUES ($1, $2, $3::text[], $4::int, $5::int, $6::bigint)"
           " ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = now(), stopped = false,"
           " address = EXCLUDED.address, circuits = EXCLUDED.circuits,"
           " partitions_running = EXCLUDED.partitions_running, slots = EXCLUDED.slots,"
           " partitions_proved = EXCLUDED.partitions_proved",
        6, v, NULL, NULL, 0, eb);
    free(addr);
    if (!r)
        return -1;
    PQclear(r);
    return 0;
}

/* Renews every lease this node holds. A partition this node runs whose lease is not renewed
 * (the job was cancelled or failed, or the lease expired and another node took it) is stopped
 * here: its local job is cancelled and its result will not be recorded. */
static int renew(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    typedef struct {
        char job_id[32], local_id[32];
        int part;
    } snap;
    snap *s = NULL;
    size_t n = 0;
    pthread_mutex_lock(&cl->mu);
    if (cl->n_runs)
        s = calloc(cl->n_runs, sizeof *s);
    for (cuzk__run *r = cl->runs; r && s; r = r->next, n++) {
        memcpy(s[n].job_id, r->job_id, 32);
        s[n].part = r->part;
    }
    pthread_mutex_unlock(&cl->mu);
    char ls[32];
    snprintf(ls, sizeof ls, "%" PRIu64, cl->lease_ms);
    const char *v[2] = {cl->node_id, ls};
    PGresult *r = cuzk__db_exec(c, "UPDATE cuzk_partitions SET lease_expires = now() +"
                                   " $2::bigint * interval '1 millisecond'"
                                   " WHERE lease_owner = $1 AND state = 1 RETURNING job_id, part",
                                2, v, NULL, NULL, 0, eb);
    if (!r) {
        free(s);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int held = 0;
        for (int k = 0; k < PQntuples(r) && !held; k++)
            held = strcmp(PQgetvalue(r, k, 0), s[i].job_id) == 0 &&
                   atoi(PQgetvalue(r, k, 1)) == s[i].part;
        if (held)
            continue;
        pthread_mutex_lock(&cl->mu);
        s[i].local_id[0] = 0;
        for (cuzk__run *x = cl->runs; x; x = x->next)
            if (strcmp(x->job_id, s[i].job_id) == 0 && x->part == s[i].part && !x->lost) {
                x->lost = 1;
                memcpy(s[i].local_id, x->local_id, 32);
                CUZK_LOG_INFO(TGT, "lease gone: stopping partition", "job=%s partition=%d "
                              "node=%s", x->job_id, x->part, cl->node_id);
            }
        pthread_mutex_unlock(&cl->mu);
        if (s[i].local_id[0]) {
            int was;
            cuzk_job_state st;
            cuzk_errbuf e2 = {{0}};
            cuzk_engine_cancel(cl->engine, s[i].local_id, &was, &st, &e2);
        }
    }
    PQclear(r);
    free(s);
    return 0;
}

/* Fails the jobs of partitions that lost max_attempts leases: a partition that takes its nodes
 * down must not take the whole fleet down in turn. */
static int fail_abandoned(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    char ma[16];
    snprintf(ma, sizeof ma, "%u", cl->max_attempts);
    const char *v[1] = {ma};
    PGresult *r = cuzk__db_exec(c, "SELECT job_id, part, attempt FROM cuzk_partitions"
                                   " WHERE state = 1 AND lease_expires < now()"
                                   " AND attempt >= $1::int LIMIT 16",
                                1, v, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r); i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "partition %s lost its lease %s times (its nodes died or lost "
                 "the database); see cluster.max_attempts", PQgetvalue(r, i, 1),
                 PQgetvalue(r, i, 2));
        cuzk__record_failure(cl, c, PQgetvalue(r, i, 0), atoi(PQgetvalue(r, i, 1)),
                             CUZK_TIMEOUT, msg, eb);
    }
    PQclear(r);
    return 0;
}

static void remove_witness_dir(struct cuzk_cluster *cl, const char *job_id)
{
    if (!cl->witness_dir)
        return;
    for (int part = 0; part < (int)cl->max_partitions; part++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s/%d.wtns", cl->witness_dir, job_id, part);
        if (unlink(p) != 0 && errno == ENOENT && part > 0)
            break;
    }
    char d[1100];
    snprintf(d, sizeof d, "%s/%s", cl->witness_dir, job_id);
    rmdir(d);
}

/* Deletes jobs whose retain time ran out (partitions and results go with them) and nodes
 * silent for as long. */
static int cleanup(struct cuzk_cluster *cl, PGconn *c, cuzk_errbuf *eb)
{
    PGresult *r = cuzk__db_exec(c, "DELETE FROM cuzk_jobs WHERE expires_at < now()"
                                   " RETURNING job_id",
                                0, NULL, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    if (PQntuples(r))
        CUZK_LOG_INFO(TGT, "expired jobs deleted", "jobs=%d", PQntuples(r));
    for (int i = 0; i < PQntuples(r); i++)
        remove_witness_dir(cl, PQgetvalue(r, i, 0));
    PQclear(r);
    char rs[32];
    snprintf(rs, sizeof rs, "%" PRIu64, cl->retain_ms);
    const char *v[1] = {rs};
    r = cuzk__db_exec(c, "DELETE FROM cuzk_nodes WHERE heartbeat_at < now() -"
                         " $1::bigint * interval '1 millisecond'",
                      1, v, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    PQclear(r);
    return 0;
}

static void *maintainer_main(void *arg)
{
    struct cuzk_cluster *cl = arg;
    PGconn *c = NULL;
    uint64_t tick = cl->lease_ms / 3 ? cl->lease_ms / 3 : 1;
    double last_cleanup = 0;
    for (;;) {
        pthread_mutex_lock(&cl->mu);
        if (!cl->maint_kick && !cl->stopped) {
            struct timespec dl;
            deadline_in(&dl, tick);
            while (!cl->maint_kick && !cl->stopped &&
                   pthread_cond_timedwait(&cl->cv, &cl->mu, &dl) == 0)
                ;
        }
        cl->maint_kick = 0;
        int stopped = cl->stopped;
        pthread_mutex_unlock(&cl->mu);
        if (stopped)
            break;
        cuzk_errbuf eb = {{0}};
        if (!c)
            c = cuzk__db_connect(cl, &eb);
        if (!c)
            continue; /* the claimer logs the outage */
        int bad = heartbeat(cl, c, &eb) || renew(cl, c, &eb);
        double now = cuzk__now_ms();
        if (!bad && now - last_cleanup > 5000) {
            bad = fail_abandoned(cl, c, &eb) || cleanup(cl, c, &eb);
            last_cleanup = now;
        }
        if (bad) {
            CUZK_LOG_DEBUG(TGT, "maintenance failed", "error=%s", eb.msg);
            if (cuzk__db_broken(c)) {
                PQfinish(c);
                c = NULL;
            }
        }
    }
    if (c)
        PQfinish(c);
    return NULL;
}

cuzk_err cuzk__agent_start(struct cuzk_cluster *cl, cuzk_errbuf *eb)
{
    if (pthread_create(&cl->claimer, NULL, claimer_main, cl) != 0)
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the cluster claimer thread");
    if (pthread_create(&cl->maintainer, NULL, maintainer_main, cl) != 0) {
        pthread_mutex_lock(&cl->mu);
        cl->stopping = 1;
        pthread_mutex_unlock(&cl->mu);
        cuzk__wake_claimer(cl);
        pthread_join(cl->claimer, NULL);
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the cluster maintainer thread");
    }
    cl->threads_started = 1;
    return CUZK_OK;
}
