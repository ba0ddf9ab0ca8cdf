/* Internals of src/cluster (see cluster.h). One libpq connection is used by one thread at a
 * time: the claimer and the maintainer own theirs, RPC calls and partition runners borrow one
 * from a small pool. */
#ifndef CUZK_CLUSTER_INTERNAL_H
#define CUZK_CLUSTER_INTERNAL_H

#include <libpq-fe.h>
#include <pthread.h>

#include "cluster/cluster.h"

#define CUZK__CLUSTER_TGT "cuzk_cluster"
#define CUZK__POOL_IDLE 8

/* cuzk_partitions.state */
enum { PART_PENDING = 0, PART_RUNNING = 1, PART_DONE = 2, PART_FAILED = 3, PART_CANCELLED = 4 };

/* A partition this node proves. */
typedef struct cuzk__run {
    struct cuzk__run *next;
    char job_id[32];
    int part, attempt;
    char circuit_id[128];
    cuzk_priority priority;
    uint8_t *witness; /* malloc'd; NULL once handed to the engine */
    size_t witness_len;
    char local_id[32]; /* the engine's job, "" before submission */
    int lost;          /* lease lost or job ended elsewhere: the result is not recorded */
    pthread_t thread;
    struct cuzk_cluster *cl;
} cuzk__run;

struct cuzk_cluster {
    cuzk_engine *engine;
    char *conninfo, *conninfo_shown, *node_id, *witness_dir;
    char *address; /* guarded by mu */
    uint64_t lease_ms, poll_ms, retain_ms;
    unsigned slots, max_attempts, max_partitions;
    int notify;
    char *circuits_array; /* the served circuits as a text[] literal */

    pthread_mutex_t mu;
    pthread_cond_t cv;      /* runs ended, stop requested */
    pthread_cond_t done_cv; /* a job may have ended (NOTIFY cuzk_done or a poll tick) */
    int stopping, stopped;
    cuzk__run *runs;        /* partitions this node proves (mu) */
    unsigned n_runs;
    uint64_t proved;        /* partitions recorded by this node */
    uint64_t done_epoch;    /* bumped on every done_cv broadcast */
    int wake_fd[2];         /* self-pipe: wakes the claimer */
    int maint_kick;         /* a cancel arrived: renew (and so stop cancelled runs) now */

    pthread_mutex_t hook_mu; /* taken before whatever lock the hook takes */
    cuzk_job_end_fn end_fn;
    void *end_ctx;
    char end_mark[64]; /* claimer: the latest expires_at of an ended job reported */

    pthread_mutex_t pool_mu;
    PGconn *idle[CUZK__POOL_IDLE];
    unsigned n_idle;

    pthread_t claimer, maintainer;
    int threads_started;
};

/* ---- db.c: connections and statements */
PGconn *cuzk__db_connect(struct cuzk_cluster *cl, cuzk_errbuf *eb);
/* A pooled connection (connects when none is idle), NULL with eb filled when the database
 * cannot be reached. */
PGconn *cuzk__db_get(struct cuzk_cluster *cl, cuzk_errbuf *eb);
/* Returns a connection to the pool (closes it when broken or the pool is full). */
void cuzk__db_put(struct cuzk_cluster *cl, PGconn *c);
/* Runs sql with text parameters (NULL values are SQL NULL). lens/binary may be NULL; a
 * parameter with binary[i] is sent as len[i] raw bytes. Returns the result (PQclear it) or
 * NULL with eb set ("cluster database: ..."). */
PGresult *cuzk__db_exec(PGconn *c, const char *sql, int n, const char *const *vals,
                        const int *lens, const int *binary, int binary_result, cuzk_errbuf *eb);
/* Runs a statement without parameters; 0 or -1 with eb set. */
int cuzk__db_cmd(PGconn *c, const char *sql, cuzk_errbuf *eb);
int cuzk__db_broken(PGconn *c);
/* Sends NOTIFY channel, payload; errors are ignored (polling covers a database without it). */
void cuzk__db_notify(struct cuzk_cluster *cl, PGconn *c, const char *channel,
                     const char *payload);

/* ---- schema.c */
#define CUZK__SCHEMA_VERSION 1
cuzk_err cuzk__schema_migrate(PGconn *c, cuzk_errbuf *eb);

/* ---- agent.c: claimer, runners, maintainer */
cuzk_err cuzk__agent_start(struct cuzk_cluster *cl, cuzk_errbuf *eb);
/* Recording from a runner: the proof of a partition, or its failure (fails the job). */
int cuzk__record_failure(struct cuzk_cluster *cl, PGconn *c, const char *job_id, int part,
                         cuzk_err err, const char *msg, cuzk_errbuf *eb);
void cuzk__wake_claimer(struct cuzk_cluster *cl);

/* ---- misc */
/* Fills out with "c" and 24 random hex digits. */
void cuzk__cluster_new_id(char out[32]);
/* A cuzk_err from its name ("WITNESS_UNSATISFIED"); CUZK_INTERNAL when unknown. */
cuzk_err cuzk__err_from_name(const char *name);

#endif
