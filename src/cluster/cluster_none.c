/* Stands in for src/cluster when libpq was not found at build time: a [cluster] config is
 * refused at start with a message saying how to build the cluster support. */
#include "cluster/cluster.h"

cuzk_err cuzk_cluster_start(cuzk_cluster **out, cuzk_engine *e, const cuzk_cluster_config *cfg,
                            cuzk_errbuf *eb)
{
    (void)e;
    (void)cfg;
    *out = NULL;
    return cuzk_errf(eb, CUZK_UNSUPPORTED, "this cuzk-daemon was built without cluster support "
                     "([cluster] needs libpq: apt install libpq-dev, then rebuild)");
}

void cuzk_cluster_set_address(cuzk_cluster *cl, const char *address)
{
    (void)cl;
    (void)address;
}

unsigned cuzk_cluster_stop(cuzk_cluster *cl, uint64_t grace_ms)
{
    (void)cl;
    (void)grace_ms;
    return 0;
}

void cuzk_cluster_free(cuzk_cluster *cl)
{
    (void)cl;
}

cuzk_err cuzk_cluster_submit(cuzk_cluster *cl, const cuzk_submit *req, char job_id[32],
                             int *existing, cuzk_errbuf *eb)
{
    (void)cl;
    (void)req;
    job_id[0] = 0;
    *existing = 0;
    return cuzk_errf(eb, CUZK_UNSUPPORTED, "built without cluster support");
}

cuzk_err cuzk_cluster_await(cuzk_cluster *cl, const char *job_id, uint64_t timeout_ms,
                            cuzk_job_result *out, cuzk_errbuf *eb)
{
    (void)cl;
    (void)job_id;
    (void)timeout_ms;
    (void)out;
    return cuzk_errf(eb, CUZK_UNSUPPORTED, "built without cluster support");
}

cuzk_err cuzk_cluster_cancel(cuzk_cluster *cl, const char *job_id, int *was_live,
                             cuzk_job_state *state, cuzk_errbuf *eb)
{
    (void)cl;
    (void)job_id;
    *was_live = 0;
    *state = CUZK_JOB_UNKNOWN;
    return cuzk_errf(eb, CUZK_UNSUPPORTED, "built without cluster support");
}

cuzk_err cuzk_cluster_get_fleet(cuzk_cluster *cl, cuzk_cluster_fleet *out, cuzk_errbuf *eb)
{
    (void)cl;
    (void)out;
    return cuzk_errf(eb, CUZK_UNSUPPORTED, "built without cluster support");
}

void cuzk_cluster_fleet_free(cuzk_cluster_fleet *f)
{
    (void)f;
}

void cuzk_cluster_set_job_end_hook(cuzk_cluster *cl, cuzk_job_end_fn fn, void *ctx)
{
    (void)cl;
    (void)fn;
    (void)ctx;
}
