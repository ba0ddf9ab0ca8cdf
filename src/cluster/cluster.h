/* A cuzk cluster: daemons sharing one job queue in PostgreSQL (or YugabyteDB, which speaks its
 * protocol); any node answers any call. The layer sits above src/engine (each node proves with
 * its own engine and budgets) and below src/rpc (which routes SubmitProof, AwaitProof,
 * CancelProof and GetStatus here in cluster mode). docs/CLUSTER.md is the reference.
 *
 * Jobs and partitions are rows. SubmitProof inserts a job and one row per partition, with the
 * witness in the row (bytea) or in a file under a shared witness_dir. Each node's agent claims
 * pending partitions of circuits it serves (SELECT ... FOR UPDATE SKIP LOCKED) while it has a
 * free slot, under a lease (owner node, expiry) that it renews; proves each as a one-partition
 * job of its own engine; and records the proof once (the first result of a partition wins).
 * A partition whose lease expired (its node died or lost the database) is claimed again by any
 * node; one that lost max_attempts leases fails its job. When the last partition is recorded
 * the job is COMPLETED; finished jobs are deleted `retain` after they end. LISTEN/NOTIFY wakes
 * idle nodes and waiting callers at once; without it every wait is a poll of poll_interval.
 * Every time that matters (leases, heartbeats, expiry) is the database's clock.
 *
 * Built only when libpq is found; otherwise cuzk_cluster_start refuses with a message saying
 * so. Everything is thread safe. */
#ifndef CUZK_CLUSTER_H
#define CUZK_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "engine/engine.h"

typedef struct {
    const char *database;   /* libpq connection string or postgresql:// URI */
    const char *node_id;    /* unique per daemon; NULL or "": the host name */
    uint64_t lease_ms;      /* a claim's lifetime, renewed every lease / 3 */
    uint64_t poll_ms;       /* longest idle wait between looks at the queue */
    uint64_t retain_ms;     /* finished jobs are kept this long */
    unsigned slots;         /* partitions this node proves at once (0: 1) */
    unsigned max_attempts;  /* leases a partition may lose before its job fails (0: 3) */
    int notify;             /* use LISTEN/NOTIFY (a database without it: polling only) */
    const char *witness_dir; /* NULL or "": witnesses in the database; else files here */
    unsigned max_partitions; /* witnesses per request (0: 1024) */
} cuzk_cluster_config;

typedef struct cuzk_cluster cuzk_cluster;

/* Connects, creates or migrates the schema, registers the node (waiting up to one lease when
 * a live node has the same node_id), releases the claims a previous run of this node left,
 * and starts the agent. Fails with CUZK_IO and a message naming the database (password
 * hidden) when it cannot be reached. */
cuzk_err cuzk_cluster_start(cuzk_cluster **out, cuzk_engine *e, const cuzk_cluster_config *cfg,
                            cuzk_errbuf *eb);
/* The gRPC address clients reach this node at, shown in the fleet view. */
void cuzk_cluster_set_address(cuzk_cluster *cl, const char *address);
/* Stops claiming, waits up to grace_ms for the partitions this node proves to be recorded,
 * then releases the rest to other nodes and marks the node stopped. Returns the partitions
 * released. Idempotent. Waiting AwaitProof calls return the job's current state. */
unsigned cuzk_cluster_stop(cuzk_cluster *cl, uint64_t grace_ms);
void cuzk_cluster_free(cuzk_cluster *cl);

/* The engine's calls, cluster-wide: same arguments, results and error codes as
 * cuzk_engine_submit / _await / _cancel (see engine.h), plus CUZK_IO when the database cannot
 * be reached for a few seconds. request_id is unique across the cluster. */
cuzk_err cuzk_cluster_submit(cuzk_cluster *cl, const cuzk_submit *req, char job_id[32],
                             int *existing, cuzk_errbuf *eb);
cuzk_err cuzk_cluster_await(cuzk_cluster *cl, const char *job_id, uint64_t timeout_ms,
                            cuzk_job_result *out, cuzk_errbuf *eb);
cuzk_err cuzk_cluster_cancel(cuzk_cluster *cl, const char *job_id, int *was_live,
                             cuzk_job_state *state, cuzk_errbuf *eb);

/* Called (from a cluster thread, no cluster lock held) with the id of each job this node learns
 * has ended: at once on NOTIFY, else within poll_interval; a job may be reported more than
 * once. fn NULL removes it. */
void cuzk_cluster_set_job_end_hook(cuzk_cluster *cl, cuzk_job_end_fn fn, void *ctx);

typedef struct {
    char node_id[128];
    char address[256];
    char circuits[1024]; /* comma separated */
    double heartbeat_age_s;
    int alive;           /* heartbeat within one lease and not stopped */
    unsigned partitions_running, slots;
    uint64_t partitions_proved;
} cuzk_cluster_node;

typedef struct {
    char node_id[128]; /* the node answering */
    unsigned jobs_queued, jobs_running, partitions_pending, partitions_running;
    size_t n_nodes;
    cuzk_cluster_node *nodes; /* malloc'd */
} cuzk_cluster_fleet;

cuzk_err cuzk_cluster_get_fleet(cuzk_cluster *cl, cuzk_cluster_fleet *out, cuzk_errbuf *eb);
void cuzk_cluster_fleet_free(cuzk_cluster_fleet *f);

#endif
