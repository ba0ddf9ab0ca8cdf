/* GetStatus's fleet view on a cluster node (see src/cluster/cluster.h). */
#ifndef CUZK_RPC_CLUSTER_RPC_H
#define CUZK_RPC_CLUSTER_RPC_H

#include "cluster/cluster.h"
#include "cuzk/v1/proving.pb-c.h"

typedef struct cuzk__rpc_fleet cuzk__rpc_fleet;

/* Sets m->cluster from the cluster's database; the returned object owns what m points to until
 * cuzk__rpc_fleet_free (after the reply is packed). NULL, with m unchanged, when the database
 * cannot be read: the node's own status is still answered. */
cuzk__rpc_fleet *cuzk__rpc_fleet_fill(cuzk_cluster *cl, Cuzk__V1__GetStatusResponse *m);
void cuzk__rpc_fleet_free(cuzk__rpc_fleet *f);

#endif
