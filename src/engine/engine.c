/* The proving engine's lifecycle (see engine.h for the contract): cuzk_engine_new reads the
 * circuits, sets up devices and tier budgets, preloads keys and starts the partition and GPU
 * workers; shutdown drains and joins them; free releases everything. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>
#include <time.h>

#include "cuzk/io.h"
#include "util/clock.h"
#include "util/parallel.h"

circuit *cuzk__engine_find_circuit(cuzk_engine *e, const char *id)
{
    for (size_t i = 0; i < e->n_circuits; i++)
        if (strcmp(e->circuits[i].id, id) == 0)
            return &e->circuits[i];
    return NULL;
}

void cuzk__generate_desc(const circuit *c, char *out, size_t n)
{
    char seg[40] = "";
    if (c->gen.segment)
        snprintf(seg, sizeof seg, " in runs of %u", c->gen.segment);
    snprintf(out, n, "%s %s %u constraints%s seed %s", cuzk_curve_name(c->gen.curve),
             cuzk_gen_profile_name(c->gen.profile), c->gen.n_constraints, seg, c->gen.seed);
}

/* Opens c's witness program (building it unless cached) and checks it makes witnesses for
 * c's key, or copies its witness command. c's key shape is known. */
static cuzk_err register_witness_source(circuit *c, const cuzk_engine_circuit *cc,
                                        cuzk_errbuf *eb)
{
    int has_wasm = cc->wasm && cc->wasm[0];
    if (has_wasm && cc->witness_cmd)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit '%s': give a wasm or a witness_cmd, "
                         "not both", cc->id);
    if (cc->witness_cmd) {
        size_t n = 0;
        while (cc->witness_cmd[n])
            n++;
        if (n == 0)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit '%s': witness_cmd is empty", cc->id);
        char **argv = calloc(n + 1, sizeof *argv);
        if (!argv)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        for (size_t i = 0; i < n; i++)
            argv[i] = xstrdup(cc->witness_cmd[i]);
        c->command.argv = (const char *const *)argv;
        c->command.timeout_ms = cc->witness_timeout_ms ? cc->witness_timeout_ms : 60000;
        c->command.scratch_dir = xstrdup(cc->witness_scratch_dir);
        c->command.max_bytes = 32ull * c->n_vars + CUZK__WTNS_HEADER_MAX;
        return CUZK_OK;
    }
    if (!has_wasm)
        return CUZK_OK;
    cuzk_witness_opts wo = {cc->wasm_cache && cc->wasm_cache[0] ? cc->wasm_cache : NULL};
    char m[CUZK_ERRBUF_SIZE];
    cuzk_err err = cuzk_witness_program_open(&c->program, cc->wasm, &wo, eb);
    cuzk_curve curve = c->curve;
    uint64_t n = 0;
    if (!err)
        err = cuzk_witness_program_shape(c->program, &curve, &n, eb);
    if (err) {
        snprintf(m, sizeof m, "%s", eb->msg);
        return cuzk_errf(eb, err, "circuit '%s': %s", cc->id, m);
    }
    double build_ms = 0;
    int built = cuzk_witness_program_built(c->program, &build_ms);
    CUZK_LOG_INFO(TGT, "witness program ready", "circuit=%s wasm=%s built=%s build_ms=%.0f "
                  "program=%s", c->id, cc->wasm, built ? "true" : "false", build_ms,
                  cuzk_witness_program_path(c->program));
    if (curve != c->curve)
        return cuzk_errf(eb, CUZK_WRONG_CURVE, "circuit '%s': %s computes witnesses on %s, its "
                         "key is on %s", c->id, cc->wasm, cuzk_curve_name(curve),
                         cuzk_curve_name(c->curve));
    if (n != c->n_vars)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "circuit '%s': %s computes %" PRIu64 " witness "
                         "values, its key takes %u (another circuit's program?)", c->id, cc->wasm,
                         n, c->n_vars);
    return CUZK_OK;
}

/* Fills c from its configuration: the zkey's header, or a generated key's shape (the key is
 * made later, where a zkey would be loaded). */
static cuzk_err register_circuit(cuzk_engine *e, circuit *c, const cuzk_engine_circuit *cc,
                                 cuzk_errbuf *eb)
{
    int has_zkey = cc->zkey && cc->zkey[0];
    if (has_zkey == (cc->generate != NULL))
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit '%s': give exactly one of a zkey and "
                         "the parameters of a generated key", cc->id);
    cuzk_err err;
    if (cc->generate) {
        uint32_t nv, np, dom;
        if ((err = cuzk_gen_key_shape(cc->generate, &nv, &np, &dom, eb))) {
            char m[CUZK_ERRBUF_SIZE];
            snprintf(m, sizeof m, "%s", eb->msg);
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit '%s': %s", cc->id, m);
        }
        c->generated = 1;
        c->gen = *cc->generate;
        c->gen.seed = xstrdup(cc->generate->seed);
        c->gen.witness_seed = NULL;
        c->gen.nthreads = e->cfg.prove_threads; /* a seed's witness: a partition's threads */
        c->curve = c->gen.curve;
        c->n8q = cuzk_curve_n8q(c->curve);
        c->n_vars = nv;
        c->n_public = np;
        c->domain_size = dom;
        c->seed_scratch = cuzk_gen_witness_scratch_bytes(&c->gen);
        c->zkey = xstrdup("");
    } else {
        cuzk_zkey zk;
        if ((err = cuzk_zkey_open(&zk, cc->zkey, eb))) {
            char m[CUZK_ERRBUF_SIZE];
            snprintf(m, sizeof m, "%s", eb->msg);
            return cuzk_errf(eb, err, "circuit '%s': %s", cc->id, m);
        }
        c->curve = zk.curve;
        c->n8q = zk.n8q;
        c->n_vars = zk.n_vars;
        c->n_public = zk.n_public;
        c->domain_size = zk.domain_size;
        cuzk_zkey_close(&zk);
        c->zkey = xstrdup(cc->zkey);
    }
    c->id = xstrdup(cc->id);
    if ((err = register_witness_source(c, cc, eb)))
        return err;
    c->preload = cc->preload;
    c->priority = cc->priority ? cc->priority : CUZK_PRIO_NORMAL;
    c->partition_bytes = cuzk_engine_partition_bytes(c->n_vars, c->domain_size, c->n8q,
                                                     e->cfg.prove_threads);
    c->gpu_partition_bytes = cuzk__gpu_partition_bytes(e, c);
    return CUZK_OK;
}

static uint64_t ram_override;

void cuzk__engine_set_ram(uint64_t bytes) { __atomic_store_n(&ram_override, bytes, __ATOMIC_RELAXED); }

uint64_t phys_ram(void)
{
    uint64_t o = __atomic_load_n(&ram_override, __ATOMIC_RELAXED);
    if (o)
        return o;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (8ull << 30);
}

/* The automatic working budget (half the RAM) lowered, when the preloaded keys leave less,
 * to the RAM less those keys and a sixteenth of it for everything else, so that the keys and
 * the working sets together fit the machine; the automatic witness budget follows it. */
static void fit_working_budget(cuzk_engine *e, int auto_witness)
{
    uint64_t ram = phys_ram(), keys = 0;
    for (size_t i = 0; i < e->n_circuits; i++)
        if (e->circuits[i].pk)
            keys += e->circuits[i].host_bytes;
    uint64_t room = ram > keys + ram / 16 ? ram - keys - ram / 16 : 0;
    if (room >= e->cfg.working_budget)
        return;
    CUZK_LOG_WARN(TGT, "working budget lowered to fit beside the preloaded keys",
                  "working_budget=%" PRIu64 " was=%" PRIu64 " keys=%" PRIu64 " ram=%" PRIu64,
                  room, e->cfg.working_budget, keys, ram);
    e->cfg.working_budget = room;
    cuzk_budget_set_limit(e->working_mem, room);
    if (auto_witness) {
        e->cfg.witness_budget = room / 4 > (256ull << 20) ? room / 4 : 256ull << 20;
        cuzk_budget_set_limit(e->witness_mem, e->cfg.witness_budget);
    }
}

cuzk_err cuzk_engine_new(cuzk_engine **out, const cuzk_engine_config *cfg, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_engine *e = calloc(1, sizeof *e);
    if (!e)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    e->cfg = *cfg;
    e->cfg.circuits = NULL;
    if (!e->cfg.partition_workers)
        e->cfg.partition_workers = 1;
    if (!e->cfg.prove_threads) {
        unsigned n = cuzk_num_threads() / e->cfg.partition_workers;
        e->cfg.prove_threads = n ? n : 1;
    }
    const int auto_working = !e->cfg.working_budget, auto_witness = !e->cfg.witness_budget;
    if (auto_working)
        e->cfg.working_budget = phys_ram() / 2;
    if (auto_witness) {
        e->cfg.witness_budget = e->cfg.working_budget / 4;
        if (e->cfg.witness_budget < (256ull << 20))
            e->cfg.witness_budget = 256ull << 20;
    }
    e->gw_auto = !e->cfg.gpu_workers_per_device;
    if (!e->cfg.gpu_workers_per_device)
        e->cfg.gpu_workers_per_device = 2;
    if (!e->cfg.gpu_stream_chunk)
        e->cfg.gpu_stream_chunk = CUZK_STREAM_CHUNK_DEFAULT;
    if (!e->cfg.gpu_stream_batch)
        e->cfg.gpu_stream_batch = CUZK_STREAM_BATCH_DEFAULT;
    if (e->cfg.gpu_stream_batch > CUZK_STREAM_BATCH_MAX)
        e->cfg.gpu_stream_batch = CUZK_STREAM_BATCH_MAX;
    if (!e->cfg.g2_gpu_min_scalars)
        e->cfg.g2_gpu_min_scalars = 262144;
    if (!e->cfg.retain_jobs)
        e->cfg.retain_jobs = 1024;
    if (!e->cfg.max_partitions)
        e->cfg.max_partitions = 1024;
    e->start_ms = cuzk__now_ms();
    e->accepting = 1;
    e->id_salt = fnv1a(0xcbf29ce484222325ull, &e, sizeof e) ^ (uint64_t)time(NULL) ^
                 ((uint64_t)getpid() << 32);
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->fallback_mu, NULL);
    pthread_mutex_init(&e->load_mu, NULL);
    pthread_mutex_init(&e->pin_mu, NULL);
    pthread_cond_init(&e->tier_cv, NULL);
    e->stage_parts = (e->cfg.g2_on_gpu != 0 ? CUZK_PK_STAGE_G2 : 0) |
                     (e->cfg.synth_on_cpu ? 0 : CUZK_PK_STAGE_ROWS) |
                     (e->cfg.gpu_tables ? CUZK_PK_STAGE_TABLES : 0);
    pthread_cond_init(&e->work_cv, NULL);
    pthread_cond_init(&e->idle_cv, NULL);
    pthread_cond_init(&e->gpu_queue_cv, NULL);
    pthread_cond_init(&e->gpu_done_cv, NULL);
    cuzk_err err = cuzk_budget_new(&e->working_mem, "working", e->cfg.working_budget, eb);
    if (!err)
        err = cuzk_budget_new(&e->witness_mem, "witness", e->cfg.witness_budget, eb);
    if (!err)
        err = cuzk__gpu_setup_devices(e, eb);
    if (err) {
        cuzk_engine_free(e);
        return err;
    }
    e->circuits = calloc(cfg->n_circuits ? cfg->n_circuits : 1, sizeof *e->circuits);
    if (!e->circuits) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < cfg->n_circuits; i++) {
        const cuzk_engine_circuit *cc = &cfg->circuits[i];
        if (cuzk__engine_find_circuit(e, cc->id)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "circuit id '%s' is configured twice", cc->id);
        }
        circuit *c = &e->circuits[e->n_circuits];
        if ((err = register_circuit(e, c, cc, eb))) {
            e->n_circuits++; /* what it holds so far is freed with the others */
            cuzk_engine_free(e);
            return err;
        }
        e->n_circuits++;
        char gen[160] = "";
        if (c->generated)
            cuzk__generate_desc(c, gen, sizeof gen);
        CUZK_LOG_INFO(TGT, "circuit registered", "circuit=%s curve=%s n_vars=%u domain=%u "
                      "partition_bytes=%" PRIu64 " gpu_partition_bytes=%" PRIu64
                      " seed_scratch_bytes=%" PRIu64 " preload=%s generate=%s note=%s", c->id,
                      cuzk_curve_name(c->curve), c->n_vars, c->domain_size, c->partition_bytes,
                      c->gpu_partition_bytes, c->seed_scratch,
                      c->preload ? "true" : "false", gen,
                      c->generated ? CUZK_PK_GENERATED_NOTE : "");
        c->mapped = cuzk__key_cache_valid(e, c, &c->cache_bytes);
    }
    cuzk__key_setup_tiers(e);
    for (size_t i = 0; i < e->n_circuits; i++) {
        if (!e->circuits[i].preload)
            continue;
        if ((err = cuzk_engine_preload(e, e->circuits[i].id, NULL, NULL, eb))) {
            cuzk_engine_free(e);
            return err;
        }
        cuzk__key_stage_preloaded(e, &e->circuits[i]);
    }
    if (auto_working)
        fit_working_budget(e, auto_witness);
    /* The fallback reserve (engine.h "Memory"): the largest CPU working set beyond the
     * device-path one, over the circuits whose CPU stages fit the working budget. */
    for (size_t i = 0; e->n_devices && i < e->n_circuits; i++) {
        const circuit *c = &e->circuits[i];
        /* A key whose host copies were released has no CPU stages to fall back to. */
        if (c->pk && cuzk_pk_host_released(c->pk))
            continue;
        if (c->partition_bytes <= e->cfg.working_budget &&
            c->partition_bytes - c->gpu_partition_bytes > e->fallback_reserve)
            e->fallback_reserve = c->partition_bytes - c->gpu_partition_bytes;
    }
    cuzk__gpu_fit_workers(e);
    e->partition_threads = calloc(e->cfg.partition_workers, sizeof *e->partition_threads);
    if (!e->partition_threads) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (unsigned i = 0; i < e->cfg.partition_workers; i++) {
        if (pthread_create(&e->partition_threads[i], NULL, cuzk__partition_worker_main, e)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_INTERNAL, "cannot start partition worker %u", i);
        }
        e->n_partition_threads++;
    }
    unsigned gw = e->n_devices * e->cfg.gpu_workers_per_device;
    e->gpu_workers = calloc(gw ? gw : 1, sizeof *e->gpu_workers);
    if (!e->gpu_workers) {
        cuzk_engine_free(e);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    /* Every device's worker count is set before any worker runs: a worker reads the others'
     * to pick the device for a stage. */
    for (unsigned d = 0; d < e->n_devices; d++)
        e->devices[d].workers = e->cfg.gpu_workers_per_device;
    for (unsigned i = 0; i < gw; i++) {
        gpu_worker *w = &e->gpu_workers[i];
        w->engine = e;
        w->device = i / e->cfg.gpu_workers_per_device;
        if (pthread_create(&w->thread, NULL, cuzk__gpu_worker_main, w)) {
            cuzk_engine_free(e);
            return cuzk_errf(eb, CUZK_INTERNAL, "cannot start GPU worker %u", i);
        }
        e->n_gpu_workers++;
    }
    CUZK_LOG_INFO(TGT, "engine started", "partition_workers=%u prove_threads=%u gpus=%u "
                  "gpu_workers=%u g2=%s max_jobs_in_flight=%u working_budget=%" PRIu64
                  " fallback_reserve=%" PRIu64 " witness_budget=%" PRIu64 " key_budget=%" PRIu64
                  " pinned_budget=%" PRIu64 " verify=%s",
                  e->cfg.partition_workers, e->cfg.prove_threads, e->n_devices, e->n_gpu_workers,
                  e->cfg.g2_on_gpu == 2 ? "auto" : e->cfg.g2_on_gpu ? "gpu" : "cpu",
                  e->cfg.max_jobs_in_flight,
                  e->cfg.working_budget, e->fallback_reserve, e->cfg.witness_budget,
                  e->cfg.key_budget,
                  e->pinned_budget, e->cfg.no_verify ? "false" : "true");
    *out = e;
    return CUZK_OK;
}

unsigned cuzk_engine_shutdown(cuzk_engine *e, uint64_t grace_ms)
{
    unsigned n_cancelled = 0;
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        pthread_mutex_unlock(&e->mu);
        return 0;
    }
    e->accepting = 0;
    CUZK_LOG_INFO(TGT, "draining", "jobs=%u grace_ms=%" PRIu64, cuzk__sched_live_jobs(e), grace_ms);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (grace_ms % 1000) * 1000000ull;
    dl.tv_sec += (time_t)(grace_ms / 1000 + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    while (cuzk__sched_live_jobs(e) && pthread_cond_timedwait(&e->idle_cv, &e->mu, &dl) == 0)
        ;
    for (job *j = e->jobs_head; j; j = j->next)
        if (job_live(j) && !j->cancel_requested) {
            n_cancelled++;
            cuzk__job_cancel_locked(e, j);
        }
    if (n_cancelled)
        CUZK_LOG_WARN(TGT, "grace period over: cancelled jobs", "jobs=%u", n_cancelled);
    cuzk_budget_wake(e->working_mem);
    while (cuzk__sched_live_jobs(e))
        pthread_cond_wait(&e->idle_cv, &e->mu);
    e->stopping = 1;
    pthread_cond_broadcast(&e->work_cv);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_partition_threads; i++)
        pthread_join(e->partition_threads[i], NULL);
    e->n_partition_threads = 0;
    pthread_mutex_lock(&e->mu);
    e->gpu_stopping = 1;
    pthread_cond_broadcast(&e->gpu_queue_cv);
    pthread_mutex_unlock(&e->mu);
    for (unsigned i = 0; i < e->n_gpu_workers; i++)
        pthread_join(e->gpu_workers[i].thread, NULL);
    e->n_gpu_workers = 0;
    return n_cancelled;
}

void cuzk_engine_free(cuzk_engine *e)
{
    if (!e)
        return;
    if (e->n_partition_threads || e->n_gpu_workers)
        cuzk_engine_shutdown(e, 0);
    pthread_mutex_lock(&e->mu);
    /* Waiters in cuzk_engine_await hold references; they are gone once the callers (rpc
     * threads) are joined, which the daemon does before freeing the engine. */
    for (job *j = e->jobs_head; j;) {
        job *nx = j->next;
        cuzk__job_free(j);
        j = nx;
    }
    e->jobs_head = e->jobs_tail = NULL;
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < e->n_circuits; i++) {
        if (e->circuits[i].pinned_bytes && e->circuits[i].pk)
            cuzk__key_pin_arrays(e, e->circuits[i].pk, 0, e->circuits[i].pinned_arrays, NULL);
        cuzk_pk_free(e->circuits[i].pk);
        cuzk_gen_structure_free(e->circuits[i].gen_structure);
        free(e->circuits[i].id);
        free(e->circuits[i].zkey);
        free((char *)e->circuits[i].gen.seed);
        cuzk_witness_program_free(e->circuits[i].program);
        if (e->circuits[i].command.argv) {
            for (size_t k = 0; e->circuits[i].command.argv[k]; k++)
                free((char *)e->circuits[i].command.argv[k]);
            free((char **)e->circuits[i].command.argv);
            free((char *)e->circuits[i].command.scratch_dir);
        }
    }
    free(e->circuits);
    cuzk_gpu_close(e->pin_ctx);
    free(e->partition_threads);
    free(e->gpu_workers);
    if (e->working_mem)
        cuzk_budget_free(e->working_mem);
    if (e->witness_mem)
        cuzk_budget_free(e->witness_mem);
    pthread_cond_destroy(&e->gpu_queue_cv);
    pthread_cond_destroy(&e->gpu_done_cv);
    pthread_cond_destroy(&e->work_cv);
    pthread_cond_destroy(&e->idle_cv);
    pthread_mutex_destroy(&e->load_mu);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->fallback_mu);
    pthread_mutex_destroy(&e->pin_mu);
    pthread_cond_destroy(&e->tier_cv);
    free(e);
}
