/* GetStatus's memory fields (see status_memory.h). */
#include "rpc/status_memory.h"

void cuzk__rpc_status_memory(Cuzk__V1__GetStatusResponse *m, Cuzk__V1__GpuStatus *gpus,
                             const cuzk_engine_status *s)
{
    m->working_allocated = s->working_allocated;
    m->witness_pinned_bytes = s->witness_pinned_bytes;
    m->host_rss = s->host_rss;
    m->host_rss_peak = s->host_rss_peak;
    m->fallback_reserve = s->fallback_reserve;
    for (unsigned d = 0; d < s->n_devices; d++) {
        gpus[d].memory_total = s->devices[d].memory_total;
        gpus[d].memory_used = s->devices[d].memory_used;
        gpus[d].scratch_estimate = s->devices[d].scratch_estimate;
    }
}
