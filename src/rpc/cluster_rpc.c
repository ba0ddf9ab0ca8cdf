/* GetStatus's fleet view on a cluster node. */
#define _GNU_SOURCE
#include "rpc/cluster_rpc.h"

#include <stdlib.h>
#include <string.h>

#include "cuzk/log.h"

struct cuzk__rpc_fleet {
    cuzk_cluster_fleet fleet;
    Cuzk__V1__ClusterStatus status;
    Cuzk__V1__ClusterNode *nodes, **node_ptrs;
    char **circuit_ptrs; /* per node, pointers into a copy of its comma-separated list */
    char **circuit_bufs;
};

void cuzk__rpc_fleet_free(cuzk__rpc_fleet *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->circuit_bufs && f->nodes && i < f->fleet.n_nodes; i++) {
        free(f->circuit_bufs[i]);
        free(f->nodes[i].circuits);
    }
    free(f->circuit_bufs);
    free(f->nodes);
    free(f->node_ptrs);
    cuzk_cluster_fleet_free(&f->fleet);
    free(f);
}

cuzk__rpc_fleet *cuzk__rpc_fleet_fill(cuzk_cluster *cl, Cuzk__V1__GetStatusResponse *m)
{
    cuzk__rpc_fleet *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    cuzk_errbuf eb = {{0}};
    if (cuzk_cluster_get_fleet(cl, &f->fleet, &eb)) {
        CUZK_LOG_WARN("cuzk_rpc", "GetStatus without the fleet view", "error=%s", eb.msg);
        free(f);
        return NULL;
    }
    size_t n = f->fleet.n_nodes;
    f->nodes = calloc(n ? n : 1, sizeof *f->nodes);
    f->node_ptrs = calloc(n ? n : 1, sizeof *f->node_ptrs);
    f->circuit_bufs = calloc(n ? n : 1, sizeof *f->circuit_bufs);
    if (!f->nodes || !f->node_ptrs || !f->circuit_bufs) {
        cuzk__rpc_fleet_free(f);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        cuzk_cluster_node *x = &f->fleet.nodes[i];
        Cuzk__V1__ClusterNode *y = &f->nodes[i];
        cuzk__v1__cluster_node__init(y);
        y->node_id = x->node_id;
        y->address = x->address;
        y->heartbeat_age_s = x->heartbeat_age_s;
        y->alive = x->alive;
        y->partitions_running = x->partitions_running;
        y->slots = x->slots;
        y->partitions_proved = x->partitions_proved;
        char *buf = strdup(x->circuits);
        size_t k = 0, cap = 1;
        for (const char *p = x->circuits; *p; p++)
            cap += *p == ',';
        y->circuits = calloc(cap, sizeof *y->circuits);
        f->circuit_bufs[i] = buf;
        if (buf && y->circuits && buf[0]) {
            char *save = NULL;
            for (char *t = strtok_r(buf, ",", &save); t && k < cap; t = strtok_r(NULL, ",", &save))
                y->circuits[k++] = t;
        }
        y->n_circuits = k;
        f->node_ptrs[i] = y;
    }
    cuzk__v1__cluster_status__init(&f->status);
    f->status.node_id = f->fleet.node_id;
    f->status.jobs_queued = f->fleet.jobs_queued;
    f->status.jobs_running = f->fleet.jobs_running;
    f->status.partitions_pending = f->fleet.partitions_pending;
    f->status.partitions_running = f->fleet.partitions_running;
    f->status.n_nodes = n;
    f->status.nodes = f->node_ptrs;
    m->cluster = &f->status;
    return f;
}
