/* libpq connections and statements for src/cluster. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cluster/cluster_internal.h"
#include "cuzk/log.h"

#define TGT CUZK__CLUSTER_TGT

static void trim_newline(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = 0;
}

static void no_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation already exists, skipping" and the like: not for the log */
}

PGconn *cuzk__db_connect(struct cuzk_cluster *cl, cuzk_errbuf *eb)
{
    PGconn *c = PQconnectdb(cl->conninfo);
    if (!c) {
        cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for a database connection");
        return NULL;
    }
    if (PQstatus(c) != CONNECTION_OK) {
        char m[CUZK_ERRBUF_SIZE];
        snprintf(m, sizeof m, "%s", PQerrorMessage(c));
        trim_newline(m);
        cuzk_errf(eb, CUZK_IO, "cluster database %s cannot be reached: %s", cl->conninfo_shown,
                  m);
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, no_notices, NULL);
    /* Leases and expiry compare timestamps in the database only; UTC keeps logs readable. */
    PGresult *r = PQexec(c, "SET TIME ZONE 'UTC'");
    PQclear(r);
    return c;
}

PGconn *cuzk__db_get(struct cuzk_cluster *cl, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&cl->pool_mu);
    PGconn *c = cl->n_idle ? cl->idle[--cl->n_idle] : NULL;
    pthread_mutex_unlock(&cl->pool_mu);
    if (c && PQstatus(c) == CONNECTION_OK)
        return c;
    if (c)
        PQfinish(c);
    return cuzk__db_connect(cl, eb);
}

void cuzk__db_put(struct cuzk_cluster *cl, PGconn *c)
{
    if (!c)
        return;
    if (PQstatus(c) != CONNECTION_OK || PQtransactionStatus(c) != PQTRANS_IDLE) {
        PQfinish(c);
        return;
    }
    pthread_mutex_lock(&cl->pool_mu);
    if (cl->n_idle < CUZK__POOL_IDLE) {
        cl->idle[cl->n_idle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&cl->pool_mu);
    if (c)
        PQfinish(c);
}

int cuzk__db_broken(PGconn *c)
{
    return !c || PQstatus(c) != CONNECTION_OK;
}

PGresult *cuzk__db_exec(PGconn *c, const char *sql, int n, const char *const *vals,
                        const int *lens, const int *binary, int binary_result, cuzk_errbuf *eb)
{
    PGresult *r = PQexecParams(c, sql, n, NULL, vals, lens, binary, binary_result);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return r;
    char m[CUZK_ERRBUF_SIZE];
    snprintf(m, sizeof m, "%s", r ? PQresultErrorMessage(r) : PQerrorMessage(c));
    trim_newline(m);
    cuzk_errf(eb, CUZK_IO, "cluster database: %s", m[0] ? m : "connection lost");
    CUZK_LOG_DEBUG(TGT, "statement failed", "error=%s sql=%.80s", m, sql);
    PQclear(r);
    return NULL;
}

int cuzk__db_cmd(PGconn *c, const char *sql, cuzk_errbuf *eb)
{
    PGresult *r = cuzk__db_exec(c, sql, 0, NULL, NULL, NULL, 0, eb);
    if (!r)
        return -1;
    PQclear(r);
    return 0;
}

void cuzk__db_notify(struct cuzk_cluster *cl, PGconn *c, const char *channel,
                     const char *payload)
{
    if (!cl->notify)
        return;
    const char *v[2] = {channel, payload};
    PGresult *r = PQexecParams(c, "SELECT pg_notify($1, $2)", 2, NULL, v, NULL, NULL, 0);
    PQclear(r);
}

void cuzk__cluster_new_id(char out[32])
{
    uint8_t b[12];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t k = getrandom(b + got, sizeof b - got, 0);
        if (k > 0)
            got += (size_t)k;
    }
    out[0] = 'c';
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 1 + 2 * i, 3, "%02x", b[i]);
}

cuzk_err cuzk__err_from_name(const char *name)
{
    for (int e = 0; e < CUZK__ERR_COUNT; e++)
        if (strcmp(cuzk_errname((cuzk_err)e), name) == 0)
            return (cuzk_err)e;
    return CUZK_INTERNAL;
}
