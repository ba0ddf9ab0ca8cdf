/* Jobs and their scheduling: submission (witness checks, the witness budget, request_id
 * reuse), admission up to max_jobs_in_flight by priority, the choice of the next partition,
 * the end of a job, and await / cancel. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "cuzk/io.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/parallel.h"

const char *cuzk_priority_name(cuzk_priority p)
{
    switch (p) {
    case CUZK_PRIO_LOW: return "low";
    case CUZK_PRIO_NORMAL: return "normal";
    case CUZK_PRIO_HIGH: return "high";
    case CUZK_PRIO_CRITICAL: return "critical";
    default: return "default";
    }
}

cuzk_err cuzk_priority_parse(const char *s, cuzk_priority *out, cuzk_errbuf *eb)
{
    static const char *names[] = {"low", "normal", "high", "critical"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0) {
            *out = (cuzk_priority)(i + 1);
            return CUZK_OK;
        }
    return cuzk_errf(eb, CUZK_BAD_CONFIG,
                     "priority '%s' is not one of low, normal, high, critical", s);
}

const char *cuzk_job_state_name(cuzk_job_state s)
{
    switch (s) {
    case CUZK_JOB_QUEUED: return "queued";
    case CUZK_JOB_RUNNING: return "running";
    case CUZK_JOB_COMPLETED: return "completed";
    case CUZK_JOB_FAILED: return "failed";
    case CUZK_JOB_CANCELLED: return "cancelled";
    default: return "unknown";
    }
}

static job *find_job(cuzk_engine *e, const char *id)
{
    for (job *j = e->jobs_head; j; j = j->next)
        if (strcmp(j->id, id) == 0)
            return j;
    return NULL;
}

static job *find_request(cuzk_engine *e, const char *rid, const char *owner)
{
    for (job *j = e->jobs_head; j; j = j->next)
        if (j->request_id[0] && strcmp(j->request_id, rid) == 0 && strcmp(j->owner, owner) == 0)
            return j;
    return NULL;
}

void cuzk__job_free(job *j)
{
    for (size_t i = 0; i < j->n_parts; i++) {
        free(j->parts[i].witness);
        free(j->parts[i].inputs);
        free(j->parts[i].result.proof_json);
        free(j->parts[i].result.public_json);
    }
    free(j->parts);
    free(j->request_id);
    free(j->owner);
    free(j->error);
    pthread_cond_destroy(&j->ended_cv);
    free(j);
}

static void unlink_job(cuzk_engine *e, job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        e->jobs_head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        e->jobs_tail = j->prev;
}

/* Forgets the oldest finished jobs nobody waits on beyond retain_jobs. Under e->mu. */
static void trim_finished(cuzk_engine *e)
{
    for (job *j = e->jobs_head; j && e->n_finished > e->cfg.retain_jobs;) {
        job *nx = j->next;
        if (!job_live(j) && j->waiters == 0) {
            unlink_job(e, j);
            cuzk__job_free(j);
            e->n_finished--;
        }
        j = nx;
    }
}

/* Admits queued jobs up to max_jobs_in_flight, best priority first, FIFO within a class.
 * Under e->mu. */
static void admit(cuzk_engine *e)
{
    for (;;) {
        unsigned in_flight = 0;
        job *best = NULL;
        for (job *j = e->jobs_head; j; j = j->next) {
            if (!job_live(j))
                continue;
            if (j->admitted)
                in_flight++;
            else if (!best || j->priority > best->priority)
                best = j; /* list is in submission order: first of the best class wins */
        }
        if (!best || (e->cfg.max_jobs_in_flight && in_flight >= e->cfg.max_jobs_in_flight))
            return;
        best->admitted = 1;
        pthread_cond_broadcast(&e->work_cv);
    }
}

/* Frees a partition's .wtns copy and returns its bytes to the witness budget. */
void cuzk__partition_drop_witness(cuzk_engine *e, partition *p)
{
    if (p->inputs) {
        free(p->inputs);
        p->inputs = NULL;
        cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, p->inputs_len);
    }
    if (!p->witness)
        return;
    free(p->witness);
    p->witness = NULL;
    cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, p->witness_len);
}

/* Parses each input object of a request and checks it as the circuit's witness program would
 * (a command's inputs: only that each is a JSON object), so bad inputs fail the request, not
 * a job later. */
static cuzk_err check_inputs(const circuit *c, const cuzk_submit *req, cuzk_errbuf *eb)
{
    for (size_t i = 0; i < req->n_inputs; i++) {
        char name[48];
        snprintf(name, sizeof name, "inputs %zu", i);
        const char *text = req->inputs[i] ? req->inputs[i] : "";
        size_t len = strlen(text);
        cuzk_json_doc *doc;
        cuzk_err err = cuzk_json_parse(&doc, text, len, len + 1, name, eb);
        if (err)
            return err;
        const cuzk_json *root = cuzk_json_root(doc);
        if (root->type != CUZK_JSON_OBJECT)
            err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: the circuit inputs must be a JSON "
                            "object (signal name -> value), as snarkjs takes input.json", name);
        else if (c->program)
            err = cuzk_witness_check(c->program, root, name, eb);
        cuzk_json_free(doc);
        if (err)
            return err;
    }
    return CUZK_OK;
}

/* Ends a job (under e->mu): frees what it no longer needs, releases its key hold. */
void cuzk__job_finish(cuzk_engine *e, job *j, cuzk_job_state st, cuzk_err err, const char *msg)
{
    j->state = st;
    j->err = err;
    free(j->error);
    j->error = xstrdup(msg);
    j->t_end = cuzk__now_ms();
    j->done_seq = ++e->next_done_seq;
    for (size_t i = 0; i < j->n_parts; i++) {
        cuzk__partition_drop_witness(e, &j->parts[i]);
        if (st != CUZK_JOB_COMPLETED) {
            free(j->parts[i].result.proof_json);
            free(j->parts[i].result.public_json);
            j->parts[i].result.proof_json = j->parts[i].result.public_json = NULL;
        }
    }
    j->circ->holders--;
    j->circ->last_used = ++e->lru_tick;
    if (st == CUZK_JOB_COMPLETED)
        e->completed++;
    else if (st == CUZK_JOB_FAILED)
        e->failed++;
    else
        e->cancelled++;
    e->n_finished++;
    /* One conversion per field: a "%s" that appended " error=..." became part of total_ms. */
    if (msg && msg[0])
        CUZK_LOG_INFO(TGT, "job ended", "job=%s circuit=%s state=%s partitions=%zu total_ms=%.1f "
                      "error=%s", j->id, j->circ->id, cuzk_job_state_name(st), j->n_parts,
                      j->t_end - j->t_submit, msg);
    else
        CUZK_LOG_INFO(TGT, "job ended", "job=%s circuit=%s state=%s partitions=%zu total_ms=%.1f",
                      j->id, j->circ->id, cuzk_job_state_name(st), j->n_parts,
                      j->t_end - j->t_submit);
    pthread_cond_broadcast(&j->ended_cv);
    pthread_cond_broadcast(&e->idle_cv);
    if (e->job_end_fn)
        e->job_end_fn(e->job_end_ctx, j->id);
    admit(e);
    trim_finished(e);
}

/* The next partition to run: the best admitted job (priority, then submission order) with a
 * partition not yet started. Under e->mu. */
job *cuzk__sched_pick(cuzk_engine *e)
{
    job *best = NULL;
    for (job *j = e->jobs_head; j; j = j->next)
        if (j->admitted && job_live(j) && !j->cancel_requested && j->next_part < j->n_parts &&
            (!best || j->priority > best->priority))
            best = j;
    return best;
}

unsigned cuzk__sched_live_jobs(cuzk_engine *e)
{
    unsigned n = 0;
    for (job *j = e->jobs_head; j; j = j->next)
        n += job_live(j);
    return n;
}

void cuzk__job_cancel_locked(cuzk_engine *e, job *j)
{
    __atomic_store_n(&j->cancel_requested, 1, __ATOMIC_RELAXED);
    if (j->parts_running == 0)
        cuzk__job_finish(e, j, CUZK_JOB_CANCELLED, CUZK_CANCELLED, "cancelled");
}

/* A request's witnesses are copied and fingerprinted (for the request_id reuse check) in
 * 4 KiB chunks on all cores, as cuzk_wtns_validate checks them: large witnesses copied on the
 * one gRPC handler thread would leave the GPU workers waiting for the next job. */
#define SUB_CHUNK ((size_t)4096) /* small enough that the tests' witnesses span several */
typedef struct {
    const cuzk_submit *req;
    partition *parts;  /* the copies: parts[i].witness */
    size_t *c0;        /* per witness, its first chunk; c0[n_witnesses] = the chunk count */
    uint64_t *ch;      /* per chunk, its hash */
} sub_job;

static void sub_task(void *arg, size_t t)
{
    sub_job *j = arg;
    size_t lo = 0, hi = j->req->n_witnesses; /* the witness whose chunks hold t */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (j->c0[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    size_t off = (t - j->c0[lo]) * SUB_CHUNK, len = j->req->witness_lens[lo];
    size_t n = len - off < SUB_CHUNK ? len - off : SUB_CHUNK;
    uint8_t *dst = j->parts[lo].witness + off;
    memcpy(dst, j->req->witnesses[lo] + off, n);
    j->ch[t] = cuzk__hash64(0, dst, n);
}

/* Copies every witness into parts[i].witness (witness_lens[i] bytes each) and returns the
 * request's fingerprint in *fp: each witness's length, then its chunks' hashes, in order.
 * Nonzero when out of memory. */
static int sub_copy_hash(const cuzk_submit *req, partition *parts, uint64_t *fp)
{
    size_t nw = req->n_witnesses;
    size_t *c0 = malloc((nw + 1) * sizeof *c0);
    if (!c0)
        return 1;
    c0[0] = 0;
    for (size_t i = 0; i < nw; i++)
        c0[i + 1] = c0[i] + (req->witness_lens[i] + SUB_CHUNK - 1) / SUB_CHUNK;
    uint64_t *ch = malloc((c0[nw] ? c0[nw] : 1) * sizeof *ch);
    if (!ch) {
        free(c0);
        return 1;
    }
    sub_job j = {req, parts, c0, ch};
    cuzk_parallel_for(c0[nw], 0, sub_task, &j);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < nw; i++) {
        h = fnv1a(h, &req->witness_lens[i], sizeof req->witness_lens[i]);
        h = fnv1a(h, ch + c0[i], (c0[i + 1] - c0[i]) * sizeof *ch);
    }
    *fp = h;
    free(ch);
    free(c0);
    return 0;
}

cuzk_err cuzk_engine_submit(cuzk_engine *e, const cuzk_submit *req, char job_id[32], int *existing,
                            cuzk_errbuf *eb)
{
    *existing = 0;
    job_id[0] = 0;
    const char *rid = req->request_id ? req->request_id : "";
    const char *owner = req->owner ? req->owner : "";
    if (strlen(rid) > 256)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "request_id is longer than 256 bytes");
    if (strlen(owner) > 64)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "owner is longer than 64 bytes");
    pthread_mutex_lock(&e->mu);
    circuit *c = cuzk__engine_find_circuit(e, req->circuit_id ? req->circuit_id : "");
    int accepting = e->accepting;
    pthread_mutex_unlock(&e->mu);
    if (!accepting)
        return cuzk_errf(eb, CUZK_CANCELLED, "the daemon is shutting down");
    if (!c)
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'",
                         req->circuit_id ? req->circuit_id : "");
    const int seeded = req->n_witness_seeds > 0, from_inputs = req->n_inputs > 0;
    const size_t n_parts = seeded ? req->n_witness_seeds
                           : from_inputs ? req->n_inputs : req->n_witnesses;
    if ((seeded != 0) + (from_inputs != 0) + (req->n_witnesses != 0) > 1)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "send one of witnesses, witness seeds and "
                         "circuit inputs");
    if (from_inputs && !c->program && !c->command.argv)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "circuit '%s' has no witness program: "
                         "circuit inputs are only for circuits with a wasm or a witness_cmd in "
                         "their [[circuit]] entry; send witnesses", c->id);
    if (seeded && !c->generated)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "circuit '%s' proves with a zkey: witness "
                         "seeds are only for circuits with a generated key (generate_* keys in "
                         "its [[circuit]] entry); send witnesses", c->id);
    if (n_parts == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "no witness: send one .witness per partition");
    if (n_parts > e->cfg.max_partitions)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%zu witnesses; at most %u partitions per job",
                         n_parts, e->cfg.max_partitions);
    partition shape = {0};
    shape.seeded = seeded;
    shape.inputs = from_inputs ? "" : NULL;
    const uint64_t made = cuzk__made_witness_bytes(c, &shape);
    pthread_mutex_lock(&e->mu);
    const int on_gpu = cuzk__partition_on_gpu(e, c);
    pthread_mutex_unlock(&e->mu);
    uint64_t need = cuzk__partition_need(c, on_gpu, made);
    if (need > e->cfg.working_budget)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "circuit '%s' needs %" PRIu64 " bytes of working memory per partition%s, "
                         "more than the whole working budget (%" PRIu64 " bytes; "
                         "memory.working_budget): no partition of it could ever run; raise "
                         "memory.working_budget to at least %" PRIu64 " bytes", c->id, need,
                         made ? " (the generated witness included)" : "",
                         e->cfg.working_budget, need);
    cuzk_priority prio = req->priority ? req->priority : c->priority;
    if (prio < CUZK_PRIO_LOW || prio > CUZK_PRIO_CRITICAL)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "priority %d is out of range", (int)prio);

    /* Check every witness before anything is queued: a bad one fails only this request. (A
     * seed's witness is made for the circuit: nothing to check.) */
    for (size_t i = 0; i < req->n_witnesses; i++) {
        cuzk_wtns w;
        char name[48];
        snprintf(name, sizeof name, "witness %zu", i);
        cuzk_err err = cuzk_wtns_parse(&w, req->witnesses[i], req->witness_lens[i], name, eb);
        int parsed = !err;
        if (!err && w.curve != c->curve)
            err = cuzk_errf(eb, CUZK_WRONG_CURVE, "witness %zu is on %s, circuit '%s' on %s", i,
                            cuzk_curve_name(w.curve), c->id, cuzk_curve_name(c->curve));
        if (!err && w.n_witness != c->n_vars)
            err = cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                            "witness %zu has %" PRIu64 " values, circuit '%s' expects %u", i,
                            w.n_witness, c->id, c->n_vars);
        if (!err)
            err = cuzk_wtns_validate(&w, eb); /* on all cores */
        if (parsed)
            cuzk_wtns_close(&w);
        if (err)
            return err;
    }

    cuzk_err ierr = check_inputs(c, req, eb);
    if (ierr)
        return ierr;

    /* The witness (or input) bytes are held until each partition ends: charge them now, or
     * refuse. */
    uint64_t wbytes = 0;
    for (size_t i = 0; i < req->n_witnesses; i++)
        wbytes += req->witness_lens[i];
    for (size_t i = 0; i < req->n_inputs; i++)
        wbytes += strlen(req->inputs[i] ? req->inputs[i] : "");
    if (wbytes > e->cfg.witness_budget)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "the request's witnesses are %" PRIu64 " bytes, more than the whole "
                         "witness budget (%" PRIu64 " bytes; memory.witness_budget)", wbytes,
                         e->cfg.witness_budget);
    if (cuzk_budget_try_reserve(e->witness_mem, CUZK_OWNER_WITNESS, wbytes, NULL)) {
        cuzk_budget_snapshot ws;
        cuzk_budget_get_snapshot(e->witness_mem, &ws);
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "busy: the witnesses of queued jobs hold %" PRIu64 " of %" PRIu64
                         " bytes and this request needs %" PRIu64 "; retry later (or raise "
                         "memory.witness_budget)", ws.in_use, ws.limit, wbytes);
    }
    job *j = calloc(1, sizeof *j);
    partition *parts = calloc(n_parts, sizeof *parts);
    if (!j || !parts) {
        free(j);
        free(parts);
        cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    j->parts = parts;
    j->n_parts = n_parts;
    for (size_t i = 0; i < req->n_witness_seeds; i++) {
        parts[i].seeded = 1;
        parts[i].seed = req->witness_seeds[i];
    }
    for (size_t i = 0; i < req->n_witnesses; i++) {
        parts[i].witness = malloc(req->witness_lens[i] ? req->witness_lens[i] : 1);
        if (!parts[i].witness) {
            cuzk__job_free(j);
            cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for the witnesses");
        }
        parts[i].witness_len = req->witness_lens[i];
    }
    uint64_t fp = fnv1a(0x5eed5eed5eed5eedull, req->witness_seeds,
                        req->n_witness_seeds * sizeof *req->witness_seeds);
    for (size_t i = 0; i < req->n_inputs; i++) {
        const char *text = req->inputs[i] ? req->inputs[i] : "";
        size_t len = strlen(text);
        parts[i].inputs = malloc(len + 1);
        if (!parts[i].inputs) {
            cuzk__job_free(j);
            cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for the inputs");
        }
        memcpy(parts[i].inputs, text, len + 1);
        parts[i].inputs_len = len;
        fp = fnv1a(fp, &len, sizeof len);
        fp = fnv1a(fp, text, len);
    }
    if (req->n_witnesses && sub_copy_hash(req, parts, &fp)) {
        cuzk__job_free(j);
        cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    j->request_id = xstrdup(rid);
    j->owner = xstrdup(owner);
    j->fingerprint = fp;
    j->circ = c;
    j->priority = prio;
    j->state = CUZK_JOB_QUEUED;
    j->error = xstrdup("");
    pthread_cond_init(&j->ended_cv, NULL);

    pthread_mutex_lock(&e->mu);
    if (!e->accepting) {
        pthread_mutex_unlock(&e->mu);
        cuzk__job_free(j);
        cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
        return cuzk_errf(eb, CUZK_CANCELLED, "the daemon is shutting down");
    }
    if (rid[0]) {
        job *old = find_request(e, rid, owner);
        if (old) {
            cuzk_err err = CUZK_OK;
            if (old->circ != c || old->n_parts != j->n_parts || old->fingerprint != fp)
                err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                                "request_id '%s' was already used for job %s with another "
                                "circuit or other witnesses", rid, old->id);
            else {
                memcpy(job_id, old->id, sizeof old->id);
                *existing = 1;
            }
            pthread_mutex_unlock(&e->mu);
            cuzk__job_free(j);
            cuzk_budget_release(e->witness_mem, CUZK_OWNER_WITNESS, wbytes);
            return err;
        }
    }
    j->seq = ++e->next_seq;
    /* Unguessable-ish and unique: sequence number plus a per-process salt. */
    snprintf(j->id, sizeof j->id, "j%" PRIu64 "-%08" PRIx64, j->seq,
             fnv1a(e->id_salt, &j->seq, sizeof j->seq) & 0xffffffffu);
    j->t_submit = cuzk__now_ms();
    c->holders++;
    j->prev = e->jobs_tail;
    if (e->jobs_tail)
        e->jobs_tail->next = j;
    else
        e->jobs_head = j;
    e->jobs_tail = j;
    e->submitted++;
    memcpy(job_id, j->id, sizeof j->id);
    if (rid[0])
        CUZK_LOG_INFO(TGT, "job accepted", "job=%s circuit=%s priority=%s partitions=%zu "
                      "request_id=%s", j->id, c->id, cuzk_priority_name(prio), j->n_parts, rid);
    else
        CUZK_LOG_INFO(TGT, "job accepted", "job=%s circuit=%s priority=%s partitions=%zu", j->id,
                      c->id, cuzk_priority_name(prio), j->n_parts);
    admit(e);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

static void fill_result(const job *j, cuzk_job_result *r)
{
    memset(r, 0, sizeof *r);
    memcpy(r->job_id, j->id, sizeof j->id);
    r->request_id = xstrdup(j->request_id);
    r->circuit_id = xstrdup(j->circ->id);
    r->state = j->state;
    r->err = j->err;
    r->error = xstrdup(j->error);
    r->n_parts = j->n_parts;
    r->parts_done = j->parts_done;
    double now = cuzk__now_ms();
    double end = job_live(j) ? now : j->t_end;
    r->queue_ms = (j->t_start ? j->t_start : end) - j->t_submit;
    r->synth_ms = j->synth_ms;
    r->prove_ms = j->prove_ms;
    r->budget_wait_ms = j->budget_wait_ms;
    r->gpu_ms = j->gpu_ms;
    r->g2_ms = j->g2_ms;
    r->witness_ms = j->witness_ms;
    r->total_ms = end - j->t_submit;
    r->seq = j->done_seq;
    if (j->state == CUZK_JOB_COMPLETED) {
        r->parts = calloc(j->n_parts, sizeof *r->parts);
        if (!r->parts)
            abort();
        for (size_t i = 0; i < j->n_parts; i++) {
            r->parts[i] = j->parts[i].result;
            r->parts[i].proof_json = xstrdup(j->parts[i].result.proof_json);
            r->parts[i].public_json = xstrdup(j->parts[i].result.public_json);
        }
    }
}

void cuzk_job_result_free(cuzk_job_result *r)
{
    if (!r)
        return;
    if (r->parts)
        for (size_t i = 0; i < r->n_parts; i++) {
            free(r->parts[i].proof_json);
            free(r->parts[i].public_json);
        }
    free(r->parts);
    free(r->request_id);
    free(r->circuit_id);
    free(r->error);
    memset(r, 0, sizeof *r);
}

cuzk_err cuzk_engine_await(cuzk_engine *e, const char *job_id, uint64_t timeout_ms,
                           cuzk_job_result *out, cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&e->mu);
    job *j = find_job(e, job_id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s' (finished jobs are forgotten "
                         "after %u newer ones)", job_id, e->cfg.retain_jobs);
    }
    j->waiters++;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (timeout_ms % 1000) * 1000000ull;
    dl.tv_sec += (time_t)(timeout_ms / 1000 + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    while (job_live(j)) {
        if (timeout_ms == 0)
            pthread_cond_wait(&j->ended_cv, &e->mu);
        else if (pthread_cond_timedwait(&j->ended_cv, &e->mu, &dl) != 0)
            break;
    }
    j->waiters--;
    fill_result(j, out);
    trim_finished(e);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

cuzk_err cuzk_engine_job_owner(cuzk_engine *e, const char *job_id, char *owner, size_t cap,
                               cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->mu);
    job *j = find_job(e, job_id);
    if (j)
        snprintf(owner, cap, "%s", j->owner);
    pthread_mutex_unlock(&e->mu);
    if (!j)
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s' (finished jobs are forgotten "
                         "after %u newer ones)", job_id, e->cfg.retain_jobs);
    return CUZK_OK;
}

cuzk_err cuzk_engine_cancel(cuzk_engine *e, const char *job_id, int *was_live,
                            cuzk_job_state *state, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->mu);
    job *j = find_job(e, job_id);
    if (!j) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown job '%s'", job_id);
    }
    *was_live = job_live(j) && !j->cancel_requested;
    if (*was_live) {
        CUZK_LOG_INFO(TGT, "cancelling job", "job=%s running_partitions=%zu", j->id,
                      j->parts_running);
        cuzk__job_cancel_locked(e, j);
        cuzk_budget_wake(e->working_mem);
    }
    *state = j->state;
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

void cuzk_engine_set_job_end_hook(cuzk_engine *e, cuzk_job_end_fn fn, void *ctx)
{
    pthread_mutex_lock(&e->mu);
    e->job_end_fn = fn;
    e->job_end_ctx = ctx;
    pthread_mutex_unlock(&e->mu);
}
