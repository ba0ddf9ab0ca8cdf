/* The cluster's tables, created and migrated by the daemon. cuzk_schema_version holds one row
 * per applied migration; migration N runs in one transaction that first inserts its row, so
 * two nodes starting at once apply it once (the second waits on the key, fails, and finds it
 * applied). Plain SQL only (no extensions, no advisory locks): it runs on PostgreSQL and
 * YugabyteDB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_internal.h"
#include "cuzk/log.h"

#define TGT CUZK__CLUSTER_TGT

/* Migration 1. States are cuzk_job_state (jobs) and PART_* (partitions). */
static const char *const V1[] = {
    "CREATE TABLE cuzk_nodes ("
    " node_id TEXT PRIMARY KEY,"
    " address TEXT NOT NULL DEFAULT '',"
    " circuits TEXT[] NOT NULL DEFAULT '{}',"
    " started_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " stopped BOOLEAN NOT NULL DEFAULT false,"
    " partitions_running INT NOT NULL DEFAULT 0,"
    " slots INT NOT NULL DEFAULT 0,"
    " partitions_proved BIGINT NOT NULL DEFAULT 0)",

    "CREATE TABLE cuzk_jobs ("
    " job_id TEXT PRIMARY KEY,"
    " request_id TEXT UNIQUE," /* NULL when none: request ids hold cluster-wide */
    " fingerprint BIGINT NOT NULL," /* circuit and witnesses, for request_id reuse */
    " circuit_id TEXT NOT NULL,"
    " priority INT NOT NULL,"
    " state INT NOT NULL,"
    " n_parts INT NOT NULL,"
    " parts_done INT NOT NULL DEFAULT 0,"
    " err_code TEXT,"
    " error TEXT,"
    " submitted_by TEXT NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " started_at TIMESTAMPTZ,"
    " finished_at TIMESTAMPTZ,"
    " expires_at TIMESTAMPTZ," /* finished_at + retain: deleted after it */
    " completion_seq BIGINT)",

    "CREATE INDEX cuzk_jobs_expiry ON cuzk_jobs (expires_at)",

    "CREATE TABLE cuzk_partitions ("
    " job_id TEXT NOT NULL REFERENCES cuzk_jobs (job_id) ON DELETE CASCADE,"
    " part INT NOT NULL,"
    " circuit_id TEXT NOT NULL,"
    " priority INT NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL,"
    " state INT NOT NULL DEFAULT 0,"
    " lease_owner TEXT,"
    " lease_expires TIMESTAMPTZ,"
    " attempt INT NOT NULL DEFAULT 0,"
    " witness BYTEA," /* NULL with shared_dir storage, and once the partition ended */
    " witness_path TEXT,"
    " PRIMARY KEY (job_id, part))",

    "CREATE INDEX cuzk_partitions_queue ON cuzk_partitions (state, priority DESC, created_at)",
    "CREATE INDEX cuzk_partitions_owner ON cuzk_partitions (lease_owner)",

    "CREATE TABLE cuzk_results ("
    " job_id TEXT NOT NULL REFERENCES cuzk_jobs (job_id) ON DELETE CASCADE,"
    " part INT NOT NULL,"
    " node_id TEXT NOT NULL,"
    " attempt INT NOT NULL,"
    " proof_json TEXT NOT NULL,"
    " public_json TEXT NOT NULL,"
    " proof_compressed BYTEA,"
    " synth_ms DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " prove_ms DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " budget_wait_ms DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " gpu_ms DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " g2_ms DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " PRIMARY KEY (job_id, part))", /* a partition's proof is recorded once */

    "CREATE SEQUENCE cuzk_completion_seq",
    NULL,
};

static const char *const *const MIGRATIONS[CUZK__SCHEMA_VERSION + 1] = {NULL, V1};

static int current_version(PGconn *c, int *v, cuzk_errbuf *eb)
{
    PGresult *r = cuzk__db_exec(c, "SELECT COALESCE(MAX(version), 0) FROM cuzk_schema_version",
                                0, NULL, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    *v = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

cuzk_err cuzk__schema_migrate(PGconn *c, cuzk_errbuf *eb)
{
    int v = 0;
    /* Two nodes creating the table at once: one may fail on the catalog's key; retry once. */
    for (int tries = 0;; tries++) {
        if (cuzk__db_cmd(c, "CREATE TABLE IF NOT EXISTS cuzk_schema_version ("
                            " version INT PRIMARY KEY,"
                            " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())", eb) == 0)
            break;
        if (tries == 2)
            return CUZK_IO;
    }
    if (current_version(c, &v, eb))
        return CUZK_IO;
    if (v > CUZK__SCHEMA_VERSION)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "the cluster database's schema is version %d, "
                         "newer than this cuzk-daemon knows (%d): upgrade this daemon", v,
                         CUZK__SCHEMA_VERSION);
    for (int m = v + 1; m <= CUZK__SCHEMA_VERSION; m++) {
        char ver[16];
        snprintf(ver, sizeof ver, "%d", m);
        const char *p[1] = {ver};
        int ok = cuzk__db_cmd(c, "BEGIN", eb) == 0;
        PGresult *r = ok ? cuzk__db_exec(c, "INSERT INTO cuzk_schema_version (version) "
                                            "VALUES ($1::int)", 1, p, NULL, NULL, 0, eb)
                         : NULL;
        ok = r != NULL;
        PQclear(r);
        for (const char *const *s = MIGRATIONS[m]; ok && *s; s++)
            ok = cuzk__db_cmd(c, *s, eb) == 0;
        if (ok)
            ok = cuzk__db_cmd(c, "COMMIT", eb) == 0;
        if (!ok) {
            cuzk_errbuf e2 = {{0}};
            PQclear(PQexec(c, "ROLLBACK"));
            int now = 0;
            if (current_version(c, &now, &e2) == 0 && now >= m)
                continue; /* another node applied it */
            return CUZK_IO;
        }
        CUZK_LOG_INFO(TGT, "cluster schema migrated", "version=%d", m);
    }
    return CUZK_OK;
}
