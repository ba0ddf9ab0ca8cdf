/* GetStatus's memory fields that name where the large bytes are (working sets allocated,
 * page-locked witnesses, the daemon's resident memory, each device's memory and scratch), in
 * their own file beside server.c. */
#ifndef CUZK_RPC_STATUS_MEMORY_H
#define CUZK_RPC_STATUS_MEMORY_H

#include "cuzk/v1/proving.pb-c.h"
#include "engine/engine.h"

/* Fills m's memory fields and those of gpus[0 .. s->n_devices) from s. */
void cuzk__rpc_status_memory(Cuzk__V1__GetStatusResponse *m, Cuzk__V1__GpuStatus *gpus,
                             const cuzk_engine_status *s);

#endif
