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
 * the key fits in its GPU budget. Under e->mu. */
int cuzk__gpu_device_takes(const cuzk_engine *e, unsigned d, uint32_t tried, const circuit *c)
{
    return !e->devs[d].disabled && !(tried & (1u << d)) && c->gbytes <= e->devs[d].kbudget;
}

/* Whether some device may take an item. Under e->mu. */
int cuzk__gpu_any_device_takes(const cuzk_engine *e, uint32_t tried, const circuit *c)
{
    for (unsigned d = 0; d < e->n_devs; d++)
        if (cuzk__gpu_device_takes(e, d, tried, c))
            return 1;
    return 0;
}

void *cuzk__gpu_worker_main(void *arg)
{
    gworker *w = arg;
    cuzk_engine *e = w->e;
    gdev *d = &e->devs[w->dev];
    int fake = e->cfg.test_fake_gpus > 0;
    cuzk_gpu_ctx *ctx = NULL;
    cuzk_errbuf oeb = {{0}};
    cuzk_err oerr = CUZK_OK;
    if (!fake && (oerr = cuzk_gpu_open(&ctx, d->id, &oeb)))
        CUZK_LOG_ERROR(TGT, "GPU worker cannot open its device", "device=%d error=%s", d->id,
                       oeb.msg);
    /* The chunk fit_workers fitted (the budget reserved it); on failure the default stays. */
    if (ctx && d->ba_chunk && cuzk_gpu_ba_set(ctx, d->ba_chunk, d->ba_quads, &oeb))
        CUZK_LOG_WARN(TGT, "GPU worker keeps the default batch-affine chunk", "device=%d "
                      "error=%s", d->id, oeb.msg);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        gitem *it = NULL, *prev = NULL;
        while (!e->gpu_stopping) {
            for (prev = NULL, it = e->gq_head; it; prev = it, it = it->next)
                if (cuzk__gpu_device_takes(e, w->dev, it->tried, it->j->circ))
                    break;
            if (it)
                break;
            pthread_cond_wait(&e->gpu_cv, &e->mu);
        }
        if (!it)
            break;
        if (prev)
            prev->next = it->next;
        else
            e->gq_head = it->next;
        if (e->gq_tail == it)
            e->gq_tail = prev;
        it->next = NULL;
        d->busy++;
        /* GPU tier: the key is staged on this device (within its budget) and held there
         * until the stage ends. gpu_dev_takes checked that it fits. */
        circuit *kc = it->j->circ;
        int upload = 0, held = cuzk__key_gpu_acquire(e, kc, w->dev, &upload);
        cuzk_pk *kpk = kc->pk;
        int g1_ok = 0, g2_ok = it->g2_ok;
        pthread_mutex_unlock(&e->mu);

        cuzk_errbuf eb = {{0}};
        cuzk_err err = CUZK_OK;
        double t = cuzk__now_ms();
        if (!held) {
            err = cuzk_errf(&eb, CUZK_NO_DEVICE, "GPU %d: the key does not fit in its GPU budget",
                            d->id);
        } else if (upload && !fake && ctx) {
            /* Uploaded here rather than inside the stage so the staged bytes are exactly the
             * accounted ones (B in G2 included whenever G2 may run on the GPU). */
            if ((err = cuzk_pk_gpu_stage(kpk, d->id, kc->stage_parts, &eb)))
                CUZK_LOG_WARN(TGT, "cannot stage the key on the GPU", "circuit=%s device=%d "
                              "error=%s", kc->id, d->id, eb.msg);
            else
                cuzk__key_log_staged(kc, d->id, cuzk__now_ms() - t);
        }
        if (err) {
            /* Not run: the key could not be staged. */
        } else if (fake) {
            if (e->cfg.test_faulty_gpus & (1u << w->dev))
                err = cuzk_errf(&eb, CUZK_GPU_FAULT, "simulated fault on test device %u", w->dev);
            else if (!(err = cuzk_prove_g1(it->ps, -1, NULL, &eb)))
                g1_ok = 1;
        } else if (!ctx) {
            err = cuzk_errf(&eb, oerr ? oerr : CUZK_NO_DEVICE, "GPU %d: %s", d->id, oeb.msg);
        } else if (it->g2_gpu && !g2_ok) {
            /* G1 and B in G2 in one stage: B2 reuses the witness upload and digit sort of
             * the A and B1 MSMs. */
            if (!(err = cuzk_prove_g1g2(it->ps, d->id, ctx, &eb)))
                g1_ok = g2_ok = 1;
            else
                g2_ok = cuzk_prove_g2_done(it->ps);
        } else if (!(err = cuzk_prove_g1(it->ps, d->id, ctx, &eb))) {
            g1_ok = 1;
        }
        if (!err && it->g2_gpu && !g2_ok) {
            if (!(err = fake ? cuzk_prove_g2(it->ps, -1, NULL, &eb)
                             : cuzk_prove_g2(it->ps, d->id, ctx, &eb)))
                g2_ok = 1;
        }
        double ms = cuzk__now_ms() - t;

        pthread_mutex_lock(&e->mu);
        if (held) {
            /* Simulated devices check the tier's invariant: a held key stays staged. */
            if (fake && !err && !(kc->gmask & (1u << w->dev)))
                err = cuzk_errf(&eb, CUZK_INTERNAL, "simulated GPU %u: key %s was unstaged "
                                "while a stage held it", w->dev, kc->id);
            cuzk__key_gpu_release(e, kc, w->dev);
        }
        d->busy--;
        it->g1_ok |= g1_ok;
        e->g2_gpu_parts += g2_ok && !it->g2_ok;
        it->g2_ok |= g2_ok;
        it->ms += ms;
        if (err == CUZK_GPU_FAULT || err == CUZK_NO_DEVICE) {
            d->faults++;
            e->gpu_faults++;
            it->tried |= 1u << w->dev;
            CUZK_LOG_WARN(TGT, "GPU fault", "device=%d job=%s partition=%zu error=%s", d->id,
                          it->j->id, it->pi, eb.msg);
            if (++d->fault_streak >= 3 && !d->disabled) {
                d->disabled = 1;
                CUZK_LOG_ERROR(TGT, "GPU disabled after 3 faults in a row", "device=%d", d->id);
                /* Queued items that no enabled device can take go back to their partition
                 * workers (CPU fallback). */
                gitem *q = e->gq_head, *qp = NULL;
                while (q) {
                    gitem *nx = q->next;
                    if (!cuzk__gpu_any_device_takes(e, q->tried, q->j->circ)) {
                        if (qp)
                            qp->next = nx;
                        else
                            e->gq_head = nx;
                        if (e->gq_tail == q)
                            e->gq_tail = qp;
                        q->done = 1;
                        q->err = CUZK_GPU_FAULT;
                        snprintf(q->eb.msg, sizeof q->eb.msg, "no working GPU left");
                    } else {
                        qp = q;
                    }
                    q = nx;
                }
                pthread_cond_broadcast(&e->gdone_cv);
            }
            if (cuzk__gpu_any_device_takes(e, it->tried, kc)) {
                /* Retry on another device, ahead of newer work. */
                e->gpu_retries++;
                it->next = e->gq_head;
                e->gq_head = it;
                if (!e->gq_tail)
                    e->gq_tail = it;
                pthread_cond_broadcast(&e->gpu_cv);
                continue;
            }
        } else if (!err) {
            d->fault_streak = 0;
            d->partitions++;
        }
        it->err = err;
        it->eb = eb;
        it->dev = (int)w->dev;
        it->done = 1;
        pthread_cond_broadcast(&e->gdone_cv);
    }
    pthread_mutex_unlock(&e->mu);
    cuzk_gpu_close(ctx);
    return NULL;
}

/* Picks the devices the GPU workers use (none on the CPU backend). */
cuzk_err cuzk__gpu_setup_devices(cuzk_engine *e, cuzk_errbuf *eb)
{
    const cuzk_engine_config *c = &e->cfg;
    if (c->test_fake_gpus) {
        unsigned n = c->test_fake_gpus > CUZK_MAX_DEVICES ? CUZK_MAX_DEVICES : c->test_fake_gpus;
        for (unsigned d = 0; d < n; d++) {
            e->devs[d].id = (int)d;
            snprintf(e->devs[d].name, sizeof e->devs[d].name, "simulated GPU %u (test)", d);
        }
        e->n_devs = n;
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
            if (e->devs[k].id == id)
                return cuzk_errf(eb, CUZK_BAD_CONFIG, "gpus.devices lists device %d twice", id);
        e->devs[i].id = id;
        cuzk_gpu_ctx *ctx;
        cuzk_errbuf oeb;
        if (cuzk_gpu_open(&ctx, id, &oeb)) {
            snprintf(e->devs[i].name, sizeof e->devs[i].name, "unusable");
            e->devs[i].disabled = 1;
            CUZK_LOG_ERROR(TGT, "GPU cannot be opened: not used", "device=%d error=%s", id,
                           oeb.msg);
        } else {
            snprintf(e->devs[i].name, sizeof e->devs[i].name, "%s", cuzk_gpu_name(ctx));
            cuzk_gpu_close(ctx);
            CUZK_LOG_INFO(TGT, "GPU in use", "device=%d name=\"%s\" workers=%u", id,
                          e->devs[i].name, c->gpu_workers_per_device);
        }
    }
    e->n_devs = (unsigned)n;
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
    if (!e->n_devs || c->no_ba_fit || c->test_fake_gpus ||
        (c->gpu_budget && c->gpu_budget != CUZK_BUDGET_AUTO))
        return;
    uint64_t keys = 0;
    for (size_t i = 0; i < e->n_circs; i++) {
        const circuit *ci = &e->circs[i];
        if (!ci->pk) {
            CUZK_LOG_INFO(TGT, "GPU workers keep the default batch-affine chunk: a circuit's "
                          "key is not preloaded (its device bytes are not known yet)",
                          "circuit=%s", ci->id);
            return;
        }
        keys += ci->gbytes;
    }
    const uint64_t gw = c->gpu_workers_per_device, fixed = 64ull << 20;
    for (unsigned d = 0; d < e->n_devs; d++) {
        gdev *g = &e->devs[d];
        if (g->disabled || !g->wscratch || g->mfree <= g->mmargin + keys)
            continue;
        const uint64_t per = (g->mfree - g->mmargin - keys) / gw;
        if (per <= fixed)
            continue;
        uint64_t chunk = 0, s = 0;
        int q = 0;
        for (size_t i = 0; i < e->n_circs; i++) {
            const circuit *ci = &e->circs[i];
            (void)cuzk_gpu_ba_fit_bytes(gpu_curve(ci), ci->n_vars, ci->domain_size, per - fixed,
                                        &chunk, &q);
        }
        for (size_t i = 0; i < e->n_circs; i++) {
            const circuit *ci = &e->circs[i];
            const uint64_t b = cuzk_gpu_scratch_estimate_at(gpu_curve(ci), ci->n_vars,
                                                            ci->domain_size, chunk, q);
            if (b > s)
                s = b;
        }
        s += fixed;
        const uint64_t keep = gw * s + g->mmargin;
        if (s <= g->wscratch || keep > g->mfree || g->mfree - keep < keys)
            continue;
        pthread_mutex_lock(&e->mu);
        g->kbudget = g->mfree - keep;
        g->ba_chunk = chunk;
        g->ba_quads = q;
        pthread_mutex_unlock(&e->mu);
        CUZK_LOG_INFO(TGT, "GPU workers' batch-affine chunk fitted to the memory the keys leave",
                      "device=%d chunk=%" PRIu64 " quads=%d worker_scratch_estimate=%" PRIu64
                      " keys=%" PRIu64 " gpu_budget=%" PRIu64, g->id, chunk, q, s, keys,
                      g->kbudget);
    }
}
