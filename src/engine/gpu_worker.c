/* GPU workers: the devices in use, the queue of partitions' GPU stages, and the workers that
 * run them (gw per device), with retries on another device after a fault, three faults in a
 * row disabling a device, and the batch-affine chunk fitted to the memory the keys leave. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>

#include "util/clock.h"

#if CUZK_HAVE_CUDA
static const char no_cuda_note[] = "";
#else
static const char no_cuda_note[] = " (this build has no CUDA backend)";
#endif

/* Whether device d may run a GPU stage with key c: enabled, not yet failed on the item, and
 * the key fits in its GPU budget. With a dedicated B in G2 device (gpus.g2_device) it runs the
 * B in G2 stages alone, and the G1 stages only once every other device is disabled. Under
 * e->mu. */
int cuzk__gpu_device_takes(const cuzk_engine *e, unsigned d, uint32_t tried, const circuit *c,
                           int g2_only)
{
    if (e->devices[d].disabled || (tried & (1u << d)) ||
        c->gpu_copy_bytes > e->devices[d].key_budget)
        return 0;
    if (e->g2_device < 0 || g2_only)
        return (int)d == e->g2_device || !g2_only;
    if ((int)d != e->g2_device)
        return 1;
    for (unsigned k = 0; k < e->n_devices; k++)
        if (k != d && !e->devices[k].disabled)
            return 0;
    return 1;
}

/* Whether some device may take an item. Under e->mu. */
int cuzk__gpu_any_device_takes(const cuzk_engine *e, uint32_t tried, const circuit *c,
                               int g2_only)
{
    for (unsigned d = 0; d < e->n_devices; d++)
        if (cuzk__gpu_device_takes(e, d, tried, c, g2_only))
            return 1;
    return 0;
}

static int stage_takes(const cuzk_engine *e, unsigned d, const gpu_stage *it)
{
    return !it->batching &&
           cuzk__gpu_device_takes(e, d, it->faulted_devices, it->job->circ, it->g2_only);
}

/* The stages queued behind `it` that may join its batch of witness MSMs over the key's
 * streamed sets (gpus.stream_batch): G1 stages of the same circuit that device d takes, not
 * offered to a batch before, up to the batch size with `it`; marked as batching (no other
 * worker takes them meanwhile). Returns how many (0: no batch). Under e->mu. */
static size_t batch_gather(cuzk_engine *e, unsigned d, gpu_stage *it, gpu_stage **out)
{
    const circuit *c = it->job->circ;
    const unsigned witness_sets = CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_B2;
    size_t n = 0;
    if (e->cfg.gpu_stream_batch < 2 || it->g2_only || it->batched || !it->prove_state ||
        !(c->gpu_streamed & witness_sets))
        return 0;
    for (gpu_stage *q = e->gpu_queue_head; q && n + 1 < e->cfg.gpu_stream_batch; q = q->next)
        if (q->job->circ == c && !q->g2_only && !q->batched && q->prove_state &&
            stage_takes(e, d, q)) {
            q->batching = 1;
            out[n++] = q;
        }
    return n;
}

/* Whether device d is the one to take queued stage it: of the devices that take it and have
 * a worker free, the one with the fewest busy workers, then the fewest stages started, then the
 * lowest index. So stages spread over every device before one runs two, and a free worker
 * never leaves a stage waiting: the preferred device's free worker was woken by the queueing
 * and rescans after every take (the taker wakes the others while stages remain). Under e->mu. */
static int preferred_device(const cuzk_engine *e, unsigned d, const gpu_stage *it)
{
    int best = -1;
    for (unsigned k = 0; k < e->n_devices; k++) {
        const gpu_device *g = &e->devices[k];
        if (g->busy_workers >= g->workers || !stage_takes(e, k, it))
            continue;
        const gpu_device *b = best < 0 ? NULL : &e->devices[best];
        if (!b || g->busy_workers < b->busy_workers ||
            (g->busy_workers == b->busy_workers && g->started < b->started))
            best = (int)k;
    }
    return best < 0 || best == (int)d;
}

void cuzk__gpu_set_faulty(cuzk_engine *e, unsigned d, int on)
{
    pthread_mutex_lock(&e->mu);
    if (d < e->n_devices) {
        if (on)
            e->faulty_devices |= 1u << d;
        else
            e->faulty_devices &= ~(1u << d);
    }
    pthread_mutex_unlock(&e->mu);
}

/* After a device is disabled: the queued stages that no enabled device can take go back to
 * their partition workers, which run them on the CPU. Under e->mu. */
static void return_unservable_stages(cuzk_engine *e)
{
    gpu_stage *q = e->gpu_queue_head, *qp = NULL;
    while (q) {
        gpu_stage *nx = q->next;
        if (!cuzk__gpu_any_device_takes(e, q->faulted_devices, q->job->circ, q->g2_only)) {
            if (qp)
                qp->next = nx;
            else
                e->gpu_queue_head = nx;
            if (e->gpu_queue_tail == q)
                e->gpu_queue_tail = qp;
            q->done = 1;
            q->err = CUZK_GPU_FAULT;
            snprintf(q->eb.msg, sizeof q->eb.msg, "no working GPU left");
        } else {
            qp = q;
        }
        q = nx;
    }
    pthread_cond_broadcast(&e->gpu_done_cv);
    /* The dedicated B in G2 device may take G1 stages now: let its workers rescan. */
    pthread_cond_broadcast(&e->gpu_queue_cv);
}

void *cuzk__gpu_worker_main(void *arg)
{
    gpu_worker *w = arg;
    cuzk_engine *e = w->engine;
    gpu_device *dev = &e->devices[w->device];
    int emulated = e->cfg.emulated_devices > 0;
    cuzk_gpu_ctx *ctx = NULL;
    cuzk_errbuf open_eb = {{0}};
    cuzk_err open_err = CUZK_OK;
    if (!emulated && (open_err = cuzk_gpu_open(&ctx, dev->id, &open_eb)))
        CUZK_LOG_ERROR(TGT, "GPU worker cannot open its device", "device=%d error=%s", dev->id,
                       open_eb.msg);
    /* The chunk cuzk__gpu_fit_workers fitted (the budget reserved it); on failure the default
     * stays. */
    if (ctx && dev->ba_chunk && cuzk_gpu_ba_set(ctx, dev->ba_chunk, dev->ba_quads, &open_eb))
        CUZK_LOG_WARN(TGT, "GPU worker keeps the default batch-affine chunk", "device=%d "
                      "error=%s", dev->id, open_eb.msg);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        gpu_stage *it = NULL, *prev = NULL;
        while (!e->gpu_stopping) {
            for (prev = NULL, it = e->gpu_queue_head; it; prev = it, it = it->next)
                if (stage_takes(e, w->device, it) && preferred_device(e, w->device, it))
                    break;
            if (it)
                break;
            pthread_cond_wait(&e->gpu_queue_cv, &e->mu);
        }
        if (!it)
            break;
        if (prev)
            prev->next = it->next;
        else
            e->gpu_queue_head = it->next;
        if (e->gpu_queue_tail == it)
            e->gpu_queue_tail = prev;
        it->next = NULL;
        dev->busy_workers++;
        dev->started++;
        if (e->gpu_queue_head) /* the stages left may now prefer another device */
            pthread_cond_broadcast(&e->gpu_queue_cv);
        const int faulty = (e->faulty_devices >> w->device) & 1;
        gpu_stage *batch[CUZK_STREAM_BATCH_MAX];
        const size_t nbatch = faulty ? 0 : batch_gather(e, w->device, it, batch);
        /* GPU tier: the key is staged on this device (within its budget) and held there
         * until the stage ends. cuzk__gpu_device_takes checked that it fits. */
        circuit *circ = it->job->circ;
        int upload = 0, held = cuzk__key_gpu_acquire(e, circ, w->device, &upload);
        cuzk_pk *pk = circ->pk;
        int g1_ok = 0, g2_ok = it->g2_ok;
        pthread_mutex_unlock(&e->mu);

        cuzk_errbuf eb = {{0}};
        cuzk_err err = CUZK_OK;
        double t = cuzk__now_ms();
        if (!held) {
            err = cuzk_errf(&eb, CUZK_NO_DEVICE, "GPU %d: the key does not fit in its GPU budget",
                            dev->id);
        } else if (upload && !emulated && ctx) {
            /* Uploaded here rather than inside the stage so the staged bytes are exactly the
             * accounted ones (B in G2 included whenever G2 may run on the GPU). */
            if ((err = cuzk_pk_gpu_stage_streamed(pk, dev->id, circ->stage_parts,
                                                  circ->gpu_streamed, e->cfg.gpu_stream_chunk,
                                                  &eb)))
                CUZK_LOG_WARN(TGT, "cannot stage the key on the GPU", "circuit=%s device=%d "
                              "error=%s", circ->id, dev->id, eb.msg);
            else
                cuzk__key_log_staged(circ, dev->id, cuzk__now_ms() - t);
        }
        if (!err && nbatch && (ctx || emulated)) {
            /* The witness MSMs over the streamed sets of this partition and the ones queued
             * behind it, each chunk copied once for all; B in G2 too when every one of them
             * runs it in its GPU stage. Each stage then runs what is left. A failed batch
             * leaves every partition as it was. */
            cuzk_prove_state *ss[CUZK_STREAM_BATCH_MAX];
            int with_g2 = it->g2_on_device && !it->g2_ok;
            ss[0] = it->prove_state;
            for (size_t i = 0; i < nbatch; i++) {
                ss[i + 1] = batch[i]->prove_state;
                with_g2 = with_g2 && batch[i]->g2_on_device && !batch[i]->g2_ok;
            }
            unsigned sets = 0;
            cuzk_errbuf beb = {{0}};
            const double tb = cuzk__now_ms();
            cuzk_err be = cuzk_prove_gpu_batch(ss, nbatch + 1, emulated ? -1 : dev->id,
                                               emulated ? NULL : ctx, with_g2,
                                               circ->gpu_streamed, &sets, &beb);
            const double bms = cuzk__now_ms() - tb;
            char names[32];
            cuzk_pk_set_names(sets, names, sizeof names);
            if (be)
                CUZK_LOG_WARN(TGT, "batched MSMs failed; each partition runs its own",
                              "device=%d circuit=%s partitions=%zu error=%s", dev->id, circ->id,
                              nbatch + 1, beb.msg);
            else
                CUZK_LOG_INFO(TGT, "batched MSMs over streamed sets", "device=%d circuit=%s "
                               "partitions=%zu sets=%s ms=%.1f", dev->id, circ->id, nbatch + 1,
                               names, bms);
            /* Each partition of the batch is charged its share of the batch's time (this
             * stage's own time counts from t). */
            t += bms * (double)nbatch / (double)(nbatch + 1);
            pthread_mutex_lock(&e->mu);
            it->batched = 1;
            for (size_t i = 0; i < nbatch; i++) {
                batch[i]->batching = 0;
                batch[i]->batched = 1;
                batch[i]->gpu_ms += bms / (double)(nbatch + 1);
                if (!be && (sets & CUZK_PK_SET_B2))
                    batch[i]->g2_ok = 1;
            }
            if (!be && (sets & CUZK_PK_SET_B2))
                g2_ok = 1;
            e->stream_batches += !be;
            pthread_cond_broadcast(&e->gpu_queue_cv);
            pthread_mutex_unlock(&e->mu);
        } else if (nbatch) {
            pthread_mutex_lock(&e->mu);
            for (size_t i = 0; i < nbatch; i++)
                batch[i]->batching = 0;
            pthread_cond_broadcast(&e->gpu_queue_cv);
            pthread_mutex_unlock(&e->mu);
        }
        if (err) {
            /* Not run: the key could not be staged. */
        } else if (faulty) {
            err = cuzk_errf(&eb, CUZK_GPU_FAULT, "GPU %d: fault injected for a test "
                            "(gpus.emulated_faulty_devices)", dev->id);
        } else if (it->g2_only) {
            if (!emulated && !ctx)
                err = cuzk_errf(&eb, open_err ? open_err : CUZK_NO_DEVICE, "GPU %d: %s",
                                dev->id, open_eb.msg);
            else if (!(err = cuzk_prove_g2(it->prove_state, emulated ? -1 : dev->id,
                                           emulated ? NULL : ctx, &eb)))
                g2_ok = 1;
        } else if (emulated) {
            if (!(err = cuzk_prove_g1(it->prove_state, -1, NULL, &eb)))
                g1_ok = 1;
        } else if (!ctx) {
            err = cuzk_errf(&eb, open_err ? open_err : CUZK_NO_DEVICE, "GPU %d: %s", dev->id,
                            open_eb.msg);
        } else if (it->g2_on_device && !g2_ok) {
            /* G1 and B in G2 in one stage: B2 reuses the witness upload and digit sort of
             * the A and B1 MSMs. */
            if (!(err = cuzk_prove_g1g2(it->prove_state, dev->id, ctx, &eb)))
                g1_ok = g2_ok = 1;
            else
                g2_ok = cuzk_prove_g2_done(it->prove_state);
        } else if (!(err = cuzk_prove_g1(it->prove_state, dev->id, ctx, &eb))) {
            g1_ok = 1;
        }
        if (!err && !it->g2_only && it->g2_on_device && !g2_ok) {
            if (!(err = emulated ? cuzk_prove_g2(it->prove_state, -1, NULL, &eb)
                             : cuzk_prove_g2(it->prove_state, dev->id, ctx, &eb)))
                g2_ok = 1;
        }
        double ms = cuzk__now_ms() - t;

        pthread_mutex_lock(&e->mu);
        if (held) {
            /* Emulated devices check the tier's invariant: a held key stays staged. */
            if (emulated && !err && !(circ->gpu_staged_mask & (1u << w->device)))
                err = cuzk_errf(&eb, CUZK_INTERNAL, "emulated GPU %u: key %s was unstaged "
                                "while a stage held it", w->device, circ->id);
            cuzk__key_gpu_release(e, circ, w->device);
        }
        dev->busy_workers--;
        it->g1_ok |= g1_ok;
        e->g2_gpu_partitions += g2_ok && !it->g2_ok;
        dev->g2_partitions += g2_ok && !it->g2_ok;
        it->g2_ok |= g2_ok;
        it->gpu_ms += ms;
        if (err == CUZK_GPU_FAULT || err == CUZK_NO_DEVICE) {
            dev->faults++;
            e->gpu_faults++;
            it->faulted_devices |= 1u << w->device;
            CUZK_LOG_WARN(TGT, "GPU fault", "device=%d job=%s partition=%zu error=%s", dev->id,
                          it->job->id, it->part_index, eb.msg);
            if (++dev->fault_streak >= 3 && !dev->disabled) {
                dev->disabled = 1;
                CUZK_LOG_ERROR(TGT, "GPU disabled after 3 faults in a row", "device=%d", dev->id);
                return_unservable_stages(e);
            }
            if (cuzk__gpu_any_device_takes(e, it->faulted_devices, circ, it->g2_only)) {
                /* Retry on another device, ahead of newer work. */
                e->gpu_retries++;
                it->next = e->gpu_queue_head;
                e->gpu_queue_head = it;
                if (!e->gpu_queue_tail)
                    e->gpu_queue_tail = it;
                pthread_cond_broadcast(&e->gpu_queue_cv);
                continue;
            }
        } else if (!err) {
            dev->fault_streak = 0;
            dev->partitions += !it->g2_only;
        }
        it->err = err;
        it->eb = eb;
        it->device = (int)w->device;
        it->done = 1;
        pthread_cond_broadcast(&e->gpu_done_cv);
    }
    pthread_mutex_unlock(&e->mu);
    cuzk_gpu_close(ctx);
    return NULL;
}

static cuzk_err pick_devices(cuzk_engine *e, cuzk_errbuf *eb);

/* Picks the devices the GPU workers use and the one for B in G2 alone (gpus.g2_device). */
cuzk_err cuzk__gpu_setup_devices(cuzk_engine *e, cuzk_errbuf *eb)
{
    cuzk_err err = pick_devices(e, eb);
    if (err)
        return err;
    const cuzk_engine_config *c = &e->cfg;
    e->faulty_devices = c->emulated_faulty_devices;
    e->g2_device = -1;
    if (!c->g2_dedicated)
        return CUZK_OK;
    if (!c->g2_on_gpu)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.g2_device = %d runs B in G2 on a GPU of its "
                         "own, but gpus.g2 = \"cpu\" keeps it on the CPU: set gpus.g2 to \"gpu\" "
                         "or \"auto\", or remove gpus.g2_device", c->g2_device);
    if (e->n_devices < 2) {
        CUZK_LOG_WARN(TGT, "gpus.g2_device ignored: fewer than two GPUs in use, B in G2 runs "
                      "beside each GPU worker", "g2_device=%d gpus=%u", c->g2_device, e->n_devices);
        return CUZK_OK;
    }
    for (unsigned d = 0; d < e->n_devices; d++)
        if (e->devices[d].id == c->g2_device)
            e->g2_device = (int)d;
    if (e->g2_device < 0)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.g2_device = %d is not one of the %u devices "
                         "in use (gpus.devices, or every device when empty)", c->g2_device,
                         e->n_devices);
    CUZK_LOG_INFO(TGT, "B in G2 on a GPU of its own", "device=%d", c->g2_device);
    return CUZK_OK;
}

/* The devices the GPU workers use (none on the CPU backend). */
static cuzk_err pick_devices(cuzk_engine *e, cuzk_errbuf *eb)
{
    const cuzk_engine_config *c = &e->cfg;
    if (c->emulated_devices) {
        unsigned n = c->emulated_devices;
        if (n > CUZK_MAX_DEVICES)
            n = CUZK_MAX_DEVICES;
        for (unsigned d = 0; d < n; d++) {
            e->devices[d].id = (int)d;
            snprintf(e->devices[d].name, sizeof e->devices[d].name, "emulated GPU %u (test)", d);
        }
        e->n_devices = n;
        CUZK_LOG_WARN(TGT, "for tests only: emulated GPUs, their stages run on the CPU "
                      "(gpus.emulated_devices)", "gpus=%u", n);
        return CUZK_OK;
    }
    if (c->backend == CUZK_BACKEND_CPU)
        return CUZK_OK;
    int count = cuzk_gpu_device_count();
    if (count <= 0) {
        if (c->backend == CUZK_BACKEND_GPU)
            return cuzk_errf(eb, CUZK_NO_DEVICE, "gpus.backend = \"gpu\" but no CUDA device is "
                             "available%s", no_cuda_note);
        return CUZK_OK;
    }
    size_t n = c->n_gpu_devices ? c->n_gpu_devices : (size_t)count;
    if (n > CUZK_MAX_DEVICES)
        n = CUZK_MAX_DEVICES;
    for (size_t i = 0; i < n; i++) {
        int id = c->n_gpu_devices ? c->gpu_devices[i] : (int)i;
        if (id < 0 || id >= count)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.devices lists device %d; %d CUDA "
                             "device(s) found (0..%d)", id, count, count - 1);
        for (size_t k = 0; k < i; k++)
            if (e->devices[k].id == id)
                return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.devices lists device %d twice", id);
        e->devices[i].id = id;
        cuzk_gpu_ctx *ctx;
        cuzk_errbuf oeb;
        if (cuzk_gpu_open(&ctx, id, &oeb)) {
            snprintf(e->devices[i].name, sizeof e->devices[i].name, "unusable");
            e->devices[i].disabled = 1;
            CUZK_LOG_ERROR(TGT, "GPU cannot be opened: not used", "device=%d error=%s", id,
                           oeb.msg);
        } else {
            snprintf(e->devices[i].name, sizeof e->devices[i].name, "%s", cuzk_gpu_name(ctx));
            cuzk_gpu_close(ctx);
            CUZK_LOG_INFO(TGT, "GPU in use", "device=%d name=\"%s\" workers=%u", id,
                          e->devices[i].name, c->gpu_workers_per_device);
        }
    }
    e->n_devices = (unsigned)n;
    return CUZK_OK;
}

/* The GPU workers' batch-affine chunk fitted to the device memory the keys leave, once every
 * circuit's key is preloaded (their staged bytes known), with the automatic GPU budget on real
 * devices and unless no_ba_fit: per worker (free - margin - the keys' staged bytes) / gw, the
 * largest setting whose scratch estimate fits that for every circuit (gpu.h
 * cuzk_gpu_ba_fit_bytes; quads with a chunk of 8 GiB or more). The device's key budget then
 * reserves the larger scratch: it shrinks, never below the keys' bytes. Before the GPU workers
 * start. */
void cuzk__gpu_fit_workers(cuzk_engine *e)
{
    const cuzk_engine_config *c = &e->cfg;
    if (!e->n_devices || c->no_ba_fit || c->emulated_devices ||
        (c->gpu_budget && c->gpu_budget != CUZK_BUDGET_AUTO))
        return;
    uint64_t keys = 0;
    for (size_t i = 0; i < e->n_circuits; i++) {
        const circuit *ci = &e->circuits[i];
        if (!ci->pk) {
            CUZK_LOG_INFO(TGT, "GPU workers keep the default batch-affine chunk: a circuit's "
                          "key is not preloaded (its device bytes are not known yet)",
                          "circuit=%s", ci->id);
            return;
        }
        keys += ci->gpu_copy_bytes;
    }
    const uint64_t gw = c->gpu_workers_per_device, fixed = 64ull << 20;
    for (unsigned d = 0; d < e->n_devices; d++) {
        gpu_device *g = &e->devices[d];
        if (g->disabled || !g->worker_scratch || g->free_at_start <= g->memory_margin + keys)
            continue;
        const uint64_t per = (g->free_at_start - g->memory_margin - keys) / gw;
        if (per <= fixed)
            continue;
        uint64_t chunk = 0, s = 0;
        int q = 0;
        for (size_t i = 0; i < e->n_circuits; i++) {
            const circuit *ci = &e->circuits[i];
            (void)cuzk_gpu_ba_fit_bytes(gpu_curve(ci), ci->n_vars, ci->domain_size, per - fixed,
                                        &chunk, &q);
        }
        for (size_t i = 0; i < e->n_circuits; i++) {
            const circuit *ci = &e->circuits[i];
            const uint64_t b = cuzk_gpu_scratch_estimate_at(gpu_curve(ci), ci->n_vars,
                                                            ci->domain_size, chunk, q);
            if (b > s)
                s = b;
        }
        s += fixed;
        const uint64_t keep = gw * s + g->memory_margin;
        if (s <= g->worker_scratch || keep > g->free_at_start || g->free_at_start - keep < keys)
            continue;
        pthread_mutex_lock(&e->mu);
        g->key_budget = g->free_at_start - keep;
        g->ba_chunk = chunk;
        g->ba_quads = q;
        pthread_mutex_unlock(&e->mu);
        CUZK_LOG_INFO(TGT, "GPU workers' batch-affine chunk fitted to the memory the keys leave",
                      "device=%d chunk=%" PRIu64 " quads=%d worker_scratch_estimate=%" PRIu64
                      " keys=%" PRIu64 " gpu_budget=%" PRIu64, g->id, chunk, q, s, keys,
                      g->key_budget);
    }
}
