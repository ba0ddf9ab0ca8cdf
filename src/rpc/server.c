/* gRPC service cuzk.v1.ProvingService over the gRPC core C API (see server.h). */
#define _GNU_SOURCE
#include "rpc/server.h"

#include <errno.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cuzk/curve.h"
#include "cuzk/log.h"
#include "cuzk/v1/proving.pb-c.h"
#include "io/binfile.h"
#include "rpc/cluster_rpc.h"

#define TGT "cuzk_rpc"
#define SVC "/cuzk.v1.ProvingService/"

enum { ST_NEW, ST_RECV, ST_SEND };

typedef struct call {
    int stage;
    struct cuzk_rpc_server *srv;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
    grpc_byte_buffer *req, *resp;
    grpc_status_code code;
    grpc_slice status_msg;
    int has_status_msg;
    int cancelled;
    char method[64];
} call;

struct cuzk_rpc_server {
    cuzk_engine *engine;
    cuzk_cluster *cluster; /* NULL: a single node */
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t cq_thread;
    int cq_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int shutting_down, shutdown_done;
    unsigned handlers; /* handler threads alive */
    char shutdown_tag;
    char *devices;
    char *witness_dir; /* realpath of daemon.witness_dir, NULL when paths are refused */
};

/* ------------------------------------------------------------------ errors */

static grpc_status_code status_of(cuzk_err e)
{
    switch (e) {
    case CUZK_OK: return GRPC_STATUS_OK;
    case CUZK_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case CUZK_OUT_OF_BUDGET: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case CUZK_CANCELLED: return GRPC_STATUS_UNAVAILABLE; /* the engine refuses: shutting down */
    case CUZK_TIMEOUT: return GRPC_STATUS_DEADLINE_EXCEEDED;
    case CUZK_NO_MEMORY: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case CUZK_INTERNAL:
    case CUZK_IO:
    case CUZK_GPU_FAULT:
    case CUZK_NO_DEVICE: return GRPC_STATUS_INTERNAL;
    default: return GRPC_STATUS_INVALID_ARGUMENT; /* witness / request problems */
    }
}

static void set_status(call *c, grpc_status_code code, const char *msg)
{
    c->code = code;
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    c->status_msg = grpc_slice_from_copied_string(msg ? msg : "");
    c->has_status_msg = 1;
}

static void set_err(call *c, cuzk_err e, const cuzk_errbuf *eb)
{
    char m[CUZK_ERRBUF_SIZE + 64];
    snprintf(m, sizeof m, "%s (%s)", eb->msg[0] ? eb->msg : cuzk_strerror(e), cuzk_errname(e));
    set_status(c, status_of(e), m);
    CUZK_LOG_DEBUG(TGT, "call failed", "method=%s code=%d message=%s", c->method, (int)c->code, m);
}

/* ------------------------------------------------------------------ messages */

static void set_resp(call *c, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the reply");
        return;
    }
    protobuf_c_message_pack(m, buf);
    grpc_slice s = grpc_slice_new(buf, n, free);
    c->resp = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    c->code = GRPC_STATUS_OK;
}

static ProtobufCMessage *unpack(call *c, const ProtobufCMessageDescriptor *d)
{
    if (!c->req) {
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
        return NULL;
    }
    grpc_byte_buffer_reader r;
    if (!grpc_byte_buffer_reader_init(&r, c->req)) {
        set_status(c, GRPC_STATUS_INTERNAL, "cannot read the request");
        return NULL;
    }
    grpc_slice s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    ProtobufCMessage *m =
        protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
    grpc_slice_unref(s);
    if (!m) {
        char msg[160];
        snprintf(msg, sizeof msg, "the request is not a valid %s message", d->name);
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
    }
    return m;
}

static const char *curve_name(int c)
{
    return cuzk_curve_name((cuzk_curve)c);
}

/* Fills a ProofResult from an engine result and packs it as the reply. */
static void reply_result(call *c, const cuzk_job_result *r)
{
    Cuzk__V1__ProofResult pr = CUZK__V1__PROOF_RESULT__INIT;
    Cuzk__V1__Timings tm = CUZK__V1__TIMINGS__INIT;
    Cuzk__V1__Error er = CUZK__V1__ERROR__INIT;
    pr.job_id = (char *)r->job_id;
    pr.request_id = r->request_id;
    pr.circuit_id = r->circuit_id;
    pr.state = (Cuzk__V1__JobState)r->state;
    pr.partitions = (uint32_t)r->n_parts;
    pr.partitions_done = (uint32_t)r->parts_done;
    pr.completion_seq = r->seq;
    tm.queue_ms = r->queue_ms;
    tm.synthesis_ms = r->synth_ms;
    tm.prove_ms = r->prove_ms;
    tm.total_ms = r->total_ms;
    tm.budget_wait_ms = r->budget_wait_ms;
    tm.gpu_ms = r->gpu_ms;
    tm.g2_ms = r->g2_ms;
    pr.timings = &tm;
    if (r->state == CUZK_JOB_FAILED || r->state == CUZK_JOB_CANCELLED) {
        er.code = (char *)cuzk_errname(r->err);
        er.message = r->error;
        pr.error = &er;
    }
    Cuzk__V1__PartitionProof *pp = NULL, **ptrs = NULL;
    if (r->parts && r->n_parts) {
        pp = calloc(r->n_parts, sizeof *pp);
        ptrs = calloc(r->n_parts, sizeof *ptrs);
        if (!pp || !ptrs) {
            free(pp);
            free(ptrs);
            set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory for the reply");
            return;
        }
        for (size_t i = 0; i < r->n_parts; i++) {
            cuzk__v1__partition_proof__init(&pp[i]);
            pp[i].proof_json = r->parts[i].proof_json;
            pp[i].public_json = r->parts[i].public_json;
            if (r->parts[i].has_compressed) {
                pp[i].proof_compressed.data = (uint8_t *)r->parts[i].compressed;
                pp[i].proof_compressed.len = 192;
            }
            ptrs[i] = &pp[i];
        }
        pr.n_proofs = r->n_parts;
        pr.proofs = ptrs;
    }
    set_resp(c, &pr.base);
    free(pp);
    free(ptrs);
}

/* ------------------------------------------------------------------ handlers */

/* Maps the witness files a request names. Each must resolve (symlinks followed) to a file
 * inside daemon.witness_dir: the daemon reads nothing else on a client's behalf. Returns -1
 * with the call's status set on the first bad path. */
static int map_witness_paths(call *c, const Cuzk__V1__SubmitProofRequest *q, cuzk_file *maps,
                             size_t *n_mapped, const uint8_t **ptrs, size_t *lens)
{
    size_t dl = strlen(c->srv->witness_dir);
    for (size_t i = 0; i < q->n_witness_paths; i++) {
        char msg[CUZK_ERRBUF_SIZE + 600];
        const char *p = q->witness_paths[i];
        char *real = realpath(p, NULL);
        if (!real) {
            snprintf(msg, sizeof msg, "witness path %zu (%.400s): %s", i, p, strerror(errno));
            set_status(c, errno == ENOENT ? GRPC_STATUS_NOT_FOUND : GRPC_STATUS_INVALID_ARGUMENT,
                       msg);
            return -1;
        }
        int inside = strncmp(real, c->srv->witness_dir, dl) == 0 &&
                     (real[dl] == '/' || c->srv->witness_dir[dl - 1] == '/');
        if (!inside) {
            snprintf(msg, sizeof msg, "witness path %zu (%.400s) is outside daemon.witness_dir",
                     i, p);
            free(real);
            set_status(c, GRPC_STATUS_PERMISSION_DENIED, msg);
            return -1;
        }
        cuzk_errbuf eb = {{0}};
        cuzk_err e = cuzk__file_map(&maps[i], real, &eb);
        free(real);
        if (e) {
            snprintf(msg, sizeof msg, "witness path %zu: %s", i, eb.msg);
            set_status(c, GRPC_STATUS_INVALID_ARGUMENT, msg);
            return -1;
        }
        (*n_mapped)++;
        ptrs[i] = maps[i].data;
        lens[i] = (size_t)maps[i].len;
    }
    return 0;
}

static int do_submit(call *c, char job_id[32], int *existing)
{
    Cuzk__V1__SubmitProofRequest *q = (Cuzk__V1__SubmitProofRequest *)unpack(
        c, &cuzk__v1__submit_proof_request__descriptor);
    if (!q)
        return -1;
    size_t nw = q->n_witnesses ? q->n_witnesses : q->n_witness_paths;
    const uint8_t **ptrs = calloc(nw ? nw : 1, sizeof *ptrs);
    size_t *lens = calloc(nw ? nw : 1, sizeof *lens);
    cuzk_file *maps = calloc(nw ? nw : 1, sizeof *maps);
    size_t n_mapped = 0;
    int rc = -1;
    if (!ptrs || !lens || !maps) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else if (q->n_witnesses && q->n_witness_paths) {
        set_status(c, GRPC_STATUS_INVALID_ARGUMENT,
                   "send witnesses or witness_paths, not both");
    } else if (q->n_witness_paths && !c->srv->witness_dir) {
        set_status(c, GRPC_STATUS_FAILED_PRECONDITION,
                   "witness_paths are not accepted by this daemon (set daemon.witness_dir)");
    } else if (q->n_witness_paths && map_witness_paths(c, q, maps, &n_mapped, ptrs, lens)) {
        /* status set */
    } else {
        for (size_t i = 0; i < q->n_witnesses; i++) {
            ptrs[i] = q->witnesses[i].data;
            lens[i] = q->witnesses[i].len;
        }
        cuzk_submit s = {q->circuit_id, q->request_id, (cuzk_priority)q->priority,
                         nw, ptrs, lens};
        cuzk_errbuf eb = {{0}};
        cuzk_cluster *cl = c->srv->cluster;
        cuzk_err e = cl ? cuzk_cluster_submit(cl, &s, job_id, existing, &eb)
                        : cuzk_engine_submit(c->srv->engine, &s, job_id, existing, &eb);
        if (e)
            set_err(c, e, &eb);
        else
            rc = 0;
    }
    for (size_t i = 0; i < n_mapped; i++)
        cuzk__file_unmap(&maps[i]);
    free(maps);
    free(ptrs);
    free(lens);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    return rc;
}

static void await_reply(call *c, const char *job_id, uint64_t timeout_ms)
{
    cuzk_job_result r;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = c->srv->cluster ? cuzk_cluster_await(c->srv->cluster, job_id, timeout_ms, &r, &eb)
                                 : cuzk_engine_await(c->srv->engine, job_id, timeout_ms, &r, &eb);
    if (e) {
        set_err(c, e, &eb);
        return;
    }
    reply_result(c, &r);
    cuzk_job_result_free(&r);
}

static void h_submit(call *c)
{
    char id[32];
    int existing = 0;
    if (do_submit(c, id, &existing))
        return;
    Cuzk__V1__SubmitProofResponse m = CUZK__V1__SUBMIT_PROOF_RESPONSE__INIT;
    m.job_id = id;
    m.existing = existing;
    set_resp(c, &m.base);
}

static void h_prove(call *c)
{
    char id[32];
    int existing = 0;
    if (do_submit(c, id, &existing))
        return;
    await_reply(c, id, 0);
}

static void h_await(call *c)
{
    Cuzk__V1__AwaitProofRequest *q =
        (Cuzk__V1__AwaitProofRequest *)unpack(c, &cuzk__v1__await_proof_request__descriptor);
    if (!q)
        return;
    await_reply(c, q->job_id, q->timeout_ms);
    protobuf_c_message_free_unpacked(&q->base, NULL);
}

static void h_cancel(call *c)
{
    Cuzk__V1__CancelProofRequest *q =
        (Cuzk__V1__CancelProofRequest *)unpack(c, &cuzk__v1__cancel_proof_request__descriptor);
    if (!q)
        return;
    int was = 0;
    cuzk_job_state st = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = c->srv->cluster ? cuzk_cluster_cancel(c->srv->cluster, q->job_id, &was, &st, &eb)
                                 : cuzk_engine_cancel(c->srv->engine, q->job_id, &was, &st, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        return;
    }
    Cuzk__V1__CancelProofResponse m = CUZK__V1__CANCEL_PROOF_RESPONSE__INIT;
    m.cancelled = was;
    m.state = (Cuzk__V1__JobState)st;
    set_resp(c, &m.base);
}

static void h_status(call *c)
{
    cuzk_engine_status s;
    cuzk_engine_get_status(c->srv->engine, &s);
    Cuzk__V1__GetStatusResponse m = CUZK__V1__GET_STATUS_RESPONSE__INIT;
    m.uptime_s = s.uptime_s;
    m.partition_workers = s.workers;
    m.busy_workers = s.busy_workers;
    m.jobs_queued = s.jobs_queued;
    m.jobs_in_flight = s.jobs_in_flight;
    m.partitions_pending = s.partitions_pending;
    m.jobs_completed = s.jobs_completed;
    m.jobs_failed = s.jobs_failed;
    m.jobs_cancelled = s.jobs_cancelled;
    m.budget_limit = s.budget.limit;
    m.budget_in_use = s.budget.in_use;
    m.budget_peak = s.budget.peak;
    m.keys_bytes = s.keys_bytes;
    /* The working budget's owners, then the proving keys by tier (host includes pinned). */
    Cuzk__V1__MemoryOwner mo[CUZK_OWNER__COUNT + 3], *mop[CUZK_OWNER__COUNT + 3];
    for (int o = 0; o < CUZK_OWNER__COUNT; o++) {
        cuzk__v1__memory_owner__init(&mo[o]);
        mo[o].owner = (char *)cuzk_owner_name((cuzk_owner)o);
        mo[o].in_use = s.budget.owner[o].in_use;
        mo[o].peak = s.budget.owner[o].peak;
        mop[o] = &mo[o];
    }
    uint64_t gpu_peak = 0;
    for (unsigned d = 0; d < s.n_devices; d++)
        gpu_peak += s.devices[d].key_peak;
    static char o_host[] = "keys_host", o_pinned[] = "keys_pinned", o_gpu[] = "keys_gpu";
    char *kown[3] = {o_host, o_pinned, o_gpu};
    uint64_t kuse[3] = {s.keys_bytes, s.keys_pinned_bytes, s.keys_gpu_bytes};
    uint64_t kpeak[3] = {s.keys_bytes, s.pinned_peak, gpu_peak};
    for (int k = 0; k < 3; k++) {
        Cuzk__V1__MemoryOwner *x = &mo[CUZK_OWNER__COUNT + k];
        cuzk__v1__memory_owner__init(x);
        x->owner = kown[k];
        x->in_use = kuse[k];
        x->peak = kpeak[k] > kuse[k] ? kpeak[k] : kuse[k];
        mop[CUZK_OWNER__COUNT + k] = x;
    }
    m.n_memory = CUZK_OWNER__COUNT + 3;
    m.memory = mop;
    cuzk_circuit_info ci[256];
    size_t n = cuzk_engine_circuits(c->srv->engine, ci, 256);
    if (n > 256)
        n = 256;
    Cuzk__V1__KeyStatus ks[256], *ksp[256];
    int32_t kgpus[256][32];
    for (size_t i = 0; i < n; i++) {
        cuzk__v1__key_status__init(&ks[i]);
        ks[i].circuit_id = ci[i].id;
        ks[i].curve = (char *)curve_name(ci[i].curve);
        ks[i].tier = (char *)cuzk_key_tier_name(ci[i].tier);
        ks[i].bytes = ci[i].bytes;
        ks[i].gpu_bytes = ci[i].gpu_bytes;
        ks[i].pinned_bytes = ci[i].pinned_bytes;
        ks[i].mapped_bytes = ci[i].mapped_bytes;
        size_t ng = 0;
        for (int d = 0; d < 32; d++)
            if (ci[i].gpu_mask & (1u << d))
                kgpus[i][ng++] = d;
        ks[i].n_gpus = ng;
        ks[i].gpus = kgpus[i];
        ks[i].holders = ci[i].holders;
        ks[i].n_vars = ci[i].n_vars;
        ks[i].domain_size = ci[i].domain_size;
        ksp[i] = &ks[i];
    }
    m.n_keys = n;
    m.keys = ksp;
    char *dev = c->srv->devices, dline[CUZK_MAX_DEVICES][160], *dlp[CUZK_MAX_DEVICES];
    Cuzk__V1__GpuStatus gs[CUZK_MAX_DEVICES], *gsp[CUZK_MAX_DEVICES];
    for (unsigned d = 0; d < s.n_devices; d++) {
        cuzk__v1__gpu_status__init(&gs[d]);
        gs[d].device = s.devices[d].id;
        gs[d].name = s.devices[d].name;
        gs[d].workers = s.devices[d].workers;
        gs[d].busy = s.devices[d].busy;
        gs[d].partitions = s.devices[d].partitions;
        gs[d].faults = s.devices[d].faults;
        gs[d].disabled = s.devices[d].disabled;
        gs[d].key_budget = s.devices[d].key_budget;
        gs[d].key_bytes = s.devices[d].key_bytes;
        gs[d].key_peak = s.devices[d].key_peak;
        gs[d].key_stages = s.devices[d].key_stages;
        gs[d].key_unstages = s.devices[d].key_unstages;
        gsp[d] = &gs[d];
        snprintf(dline[d], sizeof dline[d], "gpu%d: %s (%u workers%s)", s.devices[d].id,
                 s.devices[d].name, s.devices[d].workers, s.devices[d].disabled ? ", disabled" : "");
        dlp[d] = dline[d];
    }
    if (s.n_devices) {
        m.n_devices = s.n_devices;
        m.devices = dlp;
    } else {
        m.n_devices = 1;
        m.devices = &dev;
    }
    m.n_gpus = s.n_devices;
    m.gpus = gsp;
    m.gpu_faults = s.gpu_faults;
    m.gpu_retries = s.gpu_retries;
    m.cpu_fallbacks = s.cpu_fallbacks;
    m.witness_budget_limit = s.witness_budget.limit;
    m.witness_in_use = s.witness_budget.in_use;
    m.keys_from_cache = s.keys_from_cache;
    m.keys_gpu_bytes = s.keys_gpu_bytes;
    m.keys_pinned_bytes = s.keys_pinned_bytes;
    m.keys_mapped_bytes = s.keys_mapped_bytes;
    m.pinned_budget = s.pinned_budget;
    m.key_budget = s.key_budget;
    m.gpu_unstages = s.gpu_unstages;
    m.pinned_unpins = s.pinned_unpins;
    m.gpu_budget_cpu = s.gpu_budget_cpu;
    cuzk__rpc_fleet *fleet = c->srv->cluster ? cuzk__rpc_fleet_fill(c->srv->cluster, &m) : NULL;
    set_resp(c, &m.base);
    cuzk__rpc_fleet_free(fleet);
}

static void h_metrics(call *c)
{
    char *t = cuzk_engine_metrics(c->srv->engine);
    if (!t) {
        set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    Cuzk__V1__GetMetricsResponse m = CUZK__V1__GET_METRICS_RESPONSE__INIT;
    m.text = t;
    set_resp(c, &m.base);
    free(t);
}

static void h_list(call *c)
{
    cuzk_circuit_info ci[256];
    size_t n = cuzk_engine_circuits(c->srv->engine, ci, 256);
    if (n > 256)
        n = 256;
    Cuzk__V1__CircuitInfo ii[256], *iip[256];
    for (size_t i = 0; i < n; i++) {
        cuzk__v1__circuit_info__init(&ii[i]);
        ii[i].id = ci[i].id;
        ii[i].curve = (char *)curve_name(ci[i].curve);
        ii[i].zkey = ci[i].zkey;
        ii[i].n_vars = ci[i].n_vars;
        ii[i].n_public = ci[i].n_public;
        ii[i].domain_size = ci[i].domain_size;
        ii[i].resident = ci[i].resident;
        ii[i].default_priority = (Cuzk__V1__Priority)ci[i].priority;
        iip[i] = &ii[i];
    }
    Cuzk__V1__ListCircuitsResponse m = CUZK__V1__LIST_CIRCUITS_RESPONSE__INIT;
    m.n_circuits = n;
    m.circuits = iip;
    set_resp(c, &m.base);
}

static void h_preload(call *c)
{
    Cuzk__V1__PreloadKeyRequest *q =
        (Cuzk__V1__PreloadKeyRequest *)unpack(c, &cuzk__v1__preload_key_request__descriptor);
    if (!q)
        return;
    int was = 0;
    double ms = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_engine_preload(c->srv->engine, q->circuit_id, &was, &ms, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        return;
    }
    Cuzk__V1__PreloadKeyResponse m = CUZK__V1__PRELOAD_KEY_RESPONSE__INIT;
    m.was_loaded = was;
    m.load_ms = ms;
    set_resp(c, &m.base);
}

static void h_evict(call *c)
{
    Cuzk__V1__EvictKeyRequest *q =
        (Cuzk__V1__EvictKeyRequest *)unpack(c, &cuzk__v1__evict_key_request__descriptor);
    if (!q)
        return;
    int was = 0;
    uint64_t freed = 0;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_engine_evict_key(c->srv->engine, q->circuit_id, &was, &freed, &eb);
    protobuf_c_message_free_unpacked(&q->base, NULL);
    if (e) {
        set_err(c, e, &eb);
        if (e == CUZK_INVALID_ARGUMENT)
            c->code = GRPC_STATUS_FAILED_PRECONDITION; /* held by a job: retry later */
        return;
    }
    Cuzk__V1__EvictKeyResponse m = CUZK__V1__EVICT_KEY_RESPONSE__INIT;
    m.was_loaded = was;
    m.bytes_freed = freed;
    set_resp(c, &m.base);
}

static const struct {
    const char *name;
    void (*fn)(call *);
} METHODS[] = {
    {"SubmitProof", h_submit}, {"AwaitProof", h_await},     {"Prove", h_prove},
    {"CancelProof", h_cancel}, {"GetStatus", h_status},     {"GetMetrics", h_metrics},
    {"ListCircuits", h_list},  {"PreloadKey", h_preload},   {"EvictKey", h_evict},
};

/* ------------------------------------------------------------------ call plumbing */

static void free_call(call *c)
{
    if (c->call)
        grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->md);
    if (c->req)
        grpc_byte_buffer_destroy(c->req);
    if (c->resp)
        grpc_byte_buffer_destroy(c->resp);
    if (c->has_status_msg)
        grpc_slice_unref(c->status_msg);
    free(c);
}

static void request_next(cuzk_rpc_server *s)
{
    call *c = calloc(1, sizeof *c);
    if (!c) {
        CUZK_LOG_ERROR(TGT, "out of memory: cannot accept more calls");
        return;
    }
    c->srv = s;
    c->stage = ST_NEW;
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->md);
    grpc_call_error ce =
        grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq, c);
    if (ce != GRPC_CALL_OK) {
        CUZK_LOG_ERROR(TGT, "grpc_server_request_call failed", "error=%d", (int)ce);
        free_call(c);
    }
}

static void send_reply(call *c)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n++].data.send_initial_metadata.count = 0;
    if (c->code == GRPC_STATUS_OK && c->resp) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->resp;
    } else if (c->code == GRPC_STATUS_OK) {
        set_status(c, GRPC_STATUS_INTERNAL, "no reply");
    }
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    if (!c->has_status_msg)
        set_status(c, c->code, "");
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.trailing_metadata_count = 0;
    ops[n].data.send_status_from_server.status = c->code;
    ops[n++].data.send_status_from_server.status_details = &c->status_msg;
    c->stage = ST_SEND;
    grpc_call_error ce = grpc_call_start_batch(c->call, ops, n, c, NULL);
    if (ce != GRPC_CALL_OK) {
        CUZK_LOG_ERROR(TGT, "grpc_call_start_batch (reply) failed", "error=%d", (int)ce);
        free_call(c); /* no completion will come */
    }
}

static void *handler_main(void *arg)
{
    call *c = arg;
    cuzk_rpc_server *s = c->srv;
    const char *m = c->method;
    int found = 0;
    if (strncmp(m, SVC, strlen(SVC)) == 0)
        for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
            if (strcmp(m + strlen(SVC), METHODS[i].name) == 0) {
                METHODS[i].fn(c);
                found = 1;
                break;
            }
    if (!found) {
        char msg[128];
        snprintf(msg, sizeof msg, "unknown method '%s'", m);
        set_status(c, GRPC_STATUS_UNIMPLEMENTED, msg);
    }
    send_reply(c); /* c belongs to the completion queue from here on */
    pthread_mutex_lock(&s->mu);
    s->handlers--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void on_event(cuzk_rpc_server *s, call *c, int ok)
{
    switch (c->stage) {
    case ST_NEW: {
        if (!ok) { /* server shutting down */
            free_call(c);
            return;
        }
        pthread_mutex_lock(&s->mu);
        int more = !s->shutting_down;
        pthread_mutex_unlock(&s->mu);
        if (more)
            request_next(s);
        size_t ml = GRPC_SLICE_LENGTH(c->details.method);
        if (ml >= sizeof c->method)
            ml = sizeof c->method - 1;
        memcpy(c->method, GRPC_SLICE_START_PTR(c->details.method), ml);
        c->method[ml] = 0;
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &c->req;
        c->stage = ST_RECV;
        if (grpc_call_start_batch(c->call, &op, 1, c, NULL) != GRPC_CALL_OK)
            free_call(c);
        return;
    }
    case ST_RECV: {
        if (!ok || !c->req) {
            /* The client went away, or the message broke a limit (gRPC has already answered
             * RESOURCE_EXHAUSTED "Received message larger than max"). Close our side. */
            if (!c->has_status_msg)
                set_status(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
            send_reply(c);
            return;
        }
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_mutex_lock(&s->mu);
        s->handlers++;
        pthread_mutex_unlock(&s->mu);
        if (pthread_create(&th, &at, handler_main, c) != 0) {
            pthread_mutex_lock(&s->mu);
            s->handlers--;
            pthread_mutex_unlock(&s->mu);
            set_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot start a handler thread");
            send_reply(c);
        }
        pthread_attr_destroy(&at);
        return;
    }
    case ST_SEND:
    default:
        free_call(c);
        return;
    }
}

static void *cq_main(void *arg)
{
    cuzk_rpc_server *s = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        if (ev.tag == &s->shutdown_tag) {
            pthread_mutex_lock(&s->mu);
            s->shutdown_done = 1;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        on_event(s, ev.tag, ev.success);
    }
    return NULL;
}

/* ------------------------------------------------------------------ lifecycle */

/* A daemon that died leaves its unix socket file behind and the next bind fails: remove the
 * file when it is a socket nobody accepts on (connect refused). A live daemon's socket stays. */
static void remove_stale_socket(const char *listen)
{
    if (strncmp(listen, "unix:", 5) != 0)
        return;
    const char *path = listen + 5;
    if (strncmp(path, "//", 2) == 0)
        path += 2;
    struct stat st;
    struct sockaddr_un sa;
    if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode) || strlen(path) >= sizeof sa.sun_path)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno == ECONNREFUSED) {
        CUZK_LOG_INFO(TGT, "removing stale unix socket", "path=%s", path);
        unlink(path);
    }
    close(fd);
}

cuzk_err cuzk_rpc_start(cuzk_rpc_server **out, cuzk_engine *e, const cuzk_rpc_config *cfg,
                        char bound[256], cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_rpc_server *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    s->engine = e;
    s->cluster = cfg->cluster;
    s->devices = strdup(cfg->devices ? cfg->devices : "cpu");
    if (cfg->witness_dir && cfg->witness_dir[0]) {
        s->witness_dir = realpath(cfg->witness_dir, NULL);
        if (!s->witness_dir) {
            cuzk_err e = cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.witness_dir %s: %s",
                                   cfg->witness_dir, strerror(errno));
            free(s->devices);
            free(s);
            return e;
        }
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    grpc_arg args[3];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)cfg->max_message_size;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = (int)cfg->max_message_size;
    /* gRPC sets SO_REUSEPORT by default: a second daemon on the same port would then share the
     * traffic silently instead of failing to start. */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = GRPC_ARG_ALLOW_REUSEPORT;
    args[2].value.integer = 0;
    grpc_channel_args ca = {3, args};
    s->cq = grpc_completion_queue_create_for_next(NULL);
    s->server = grpc_server_create(&ca, NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    remove_stale_socket(cfg->listen);
    grpc_server_credentials *cr = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(s->server, cfg->listen, cr);
    grpc_server_credentials_release(cr);
    if (port <= 0) {
        grpc_server_destroy(s->server);
        grpc_completion_queue_shutdown(s->cq);
        grpc_completion_queue_destroy(s->cq);
        free(s->devices);
        free(s->witness_dir);
        free(s);
        return cuzk_errf(eb, CUZK_IO, "cannot listen on '%s' (address in use or invalid)",
                         cfg->listen);
    }
    const char *colon = strrchr(cfg->listen, ':');
    if (strncmp(cfg->listen, "unix:", 5) != 0 && colon)
        snprintf(bound, 256, "%.*s:%d", (int)(colon - cfg->listen), cfg->listen, port);
    else
        snprintf(bound, 256, "%s", cfg->listen);
    grpc_server_start(s->server);
    request_next(s);
    if (pthread_create(&s->cq_thread, NULL, cq_main, s) != 0) {
        cuzk_rpc_stop_accepting(s);
        cuzk_rpc_free(s);
        return cuzk_errf(eb, CUZK_INTERNAL, "cannot start the completion-queue thread");
    }
    s->cq_started = 1;
    *out = s;
    return CUZK_OK;
}

void cuzk_rpc_stop_accepting(cuzk_rpc_server *s)
{
    pthread_mutex_lock(&s->mu);
    int first = !s->shutting_down;
    s->shutting_down = 1;
    pthread_mutex_unlock(&s->mu);
    if (first)
        grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
}

static int wait_until(cuzk_rpc_server *s, int (*pred)(cuzk_rpc_server *), uint64_t ms)
{
    gpr_timespec dl = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                   gpr_time_from_millis((int64_t)ms, GPR_TIMESPAN));
    struct timespec ts = {(time_t)dl.tv_sec, dl.tv_nsec};
    pthread_mutex_lock(&s->mu);
    while (!pred(s))
        if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0)
            break;
    int r = pred(s);
    pthread_mutex_unlock(&s->mu);
    return r;
}

static int is_shut(cuzk_rpc_server *s) { return s->shutdown_done; }
static int no_handlers(cuzk_rpc_server *s) { return s->handlers == 0; }

void cuzk_rpc_finish(cuzk_rpc_server *s, uint64_t wait_ms)
{
    cuzk_rpc_stop_accepting(s);
    if (!wait_until(s, is_shut, wait_ms)) {
        CUZK_LOG_WARN(TGT, "calls still open after the grace period: cancelling them");
        grpc_server_cancel_all_calls(s->server);
        wait_until(s, is_shut, 10000);
    }
    wait_until(s, no_handlers, 10000);
}

void cuzk_rpc_free(cuzk_rpc_server *s)
{
    if (!s)
        return;
    if (s->cq_started) {
        grpc_completion_queue_shutdown(s->cq);
        pthread_join(s->cq_thread, NULL);
    }
    grpc_server_destroy(s->server);
    grpc_completion_queue_destroy(s->cq);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->devices);
    free(s->witness_dir);
    free(s);
}
