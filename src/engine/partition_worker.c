/* Partition workers: each takes the next partition, reserves its working set, makes the key
 * resident, proves the partition (queuing its GPU stage for the GPU workers and running B in
 * G2 meanwhile, or everything on the CPU) and records the result in its job. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>

#include "cuzk/io.h"
#include "cuzk/json.h"
#include "msm/msm.h"
#include "util/clock.h"

/* MSM scratch of the CPU stages: digits, B in G2's points in its bucket form, buckets. */
static uint64_t cpu_msm_bytes(uint32_t n_vars, uint32_t domain_size, uint32_t n8q,
                              unsigned threads)
{
    uint64_t N = domain_size, n = n_vars > N ? n_vars : N;
    uint64_t g2 = 4ull * n8q;
    unsigned c = bn254_g1_msm_window((size_t)n, threads ? threads : 1);
    if (c < 1)
        c = 1;
    uint64_t buckets = (uint64_t)(threads ? threads : 1) * (1ull << (c - 1)) * 2 * g2;
    return 8 * n + n * g2 + buckets;
}

uint64_t cuzk_engine_partition_bytes(uint32_t n_vars, uint32_t domain_size, uint32_t n8q,
                                     unsigned threads)
{
    uint64_t N = domain_size;
    return 32ull * (n_vars + 4 * N) + 32ull * N + cpu_msm_bytes(n_vars, domain_size, n8q, threads);
}

uint64_t cuzk__gpu_partition_bytes(const cuzk_engine *e, const circuit *c)
{
    uint64_t b = 32ull * c->n_vars; /* the prover's copy of the witness */
    if (c->pk && !(c->stage_parts & CUZK_PK_STAGE_ROWS))
        b += 3 * 32ull * c->domain_size; /* a, b, c until the device's H step has them */
    if (e->cfg.g2_on_gpu != 1)      /* B in G2 may run on the partition worker */
        b += cpu_msm_bytes(c->n_vars, c->domain_size, c->n8q, e->cfg.prove_threads);
    return b;
}

int cuzk__partition_on_gpu(const cuzk_engine *e, const circuit *c)
{
    return e->n_devices && c->pk && cuzk__gpu_any_device_takes(e, 0, c, 0);
}

/* CPU stages of a partition that reserved only its device-path working set, `held` bytes (a
 * GPU fault, or no device takes its key any more): the rest of its CPU working set, reserved
 * ahead of queued reservations and by one partition at a time (engine.h "Memory"). On success
 * *extra bytes are held and e->fallback_mu is locked until cpu_stages_end. */
static cuzk_err cpu_stages_begin(cuzk_engine *e, job *j, uint64_t held, uint64_t *extra,
                                 const char *why, cuzk_errbuf *eb)
{
    const circuit *c = j->circ;
    *extra = 0;
    const unsigned gone = c->pk ? cuzk_pk_host_released(c->pk) : 0;
    if (gone) {
        char names[32];
        cuzk_pk_set_names(gone, names, sizeof names);
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s, and circuit '%s' keeps its key's %s on "
                         "the GPUs only (a generated key's host copies are released): no CPU "
                         "fallback", why, c->id, names);
    }
    if (c->partition_bytes > e->cfg.working_budget)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET, "%s, and circuit '%s' needs %" PRIu64 " bytes "
                         "of working memory per partition on the CPU, more than the whole "
                         "working budget (%" PRIu64 " bytes; memory.working_budget)", why, c->id,
                         c->partition_bytes, e->cfg.working_budget);
    uint64_t x = c->partition_bytes > held ? c->partition_bytes - held : 0;
    pthread_mutex_lock(&e->fallback_mu);
    cuzk_err err = cuzk_budget_reserve_first(e->working_mem, CUZK_OWNER_ABC, x,
                                             &j->cancel_requested, eb);
    if (err) {
        pthread_mutex_unlock(&e->fallback_mu);
        return err;
    }
    *extra = x;
    return CUZK_OK;
}

static void cpu_stages_end(cuzk_engine *e, uint64_t extra)
{
    cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, extra);
    pthread_mutex_unlock(&e->fallback_mu);
}

/* Where B in G2 goes for a partition with these witness values (32-byte plain integers):
 * the configured place, or with auto the GPU when at least g2_gpu_min_scalars of them are
 * other than 0 and 1 (the CPU MSM's cost grows with those; 0 and 1 cost next to nothing). */
static int g2_on_gpu(const cuzk_engine *e, const uint8_t *w, uint64_t n)
{
    if (e->cfg.g2_on_gpu != 2)
        return e->cfg.g2_on_gpu;
    uint64_t need = e->cfg.g2_gpu_min_scalars, cnt = 0;
    for (uint64_t i = 0; i < n && cnt < need; i++) {
        const uint8_t *v = w + 32 * i;
        uint64_t hi = 0;
        for (int k = 1; k < 32; k++)
            hi |= v[k];
        cnt += hi != 0 || v[0] > 1;
    }
    return cnt >= need;
}

/* Runs a partition's GPU stage through the GPU workers and waits for it; on a GPU fault that
 * no other device can take over, the stage runs on the CPU here. B in G2 runs on this thread
 * meanwhile, unless g2_gpu: then in the GPU stage, or as a stage of its own on the dedicated
 * device (gpus.g2_device) while that one works. Returns the first error. */
static cuzk_err run_stages(cuzk_engine *e, job *j, size_t pi, cuzk_prove_state *ps,
                           int g2_gpu, uint64_t gpu_held, double *gpu_ms, double *g2_ms,
                           cuzk_errbuf *eb)
{
    gpu_stage it, g2it;
    memset(&it, 0, sizeof it);
    memset(&g2it, 0, sizeof g2it);
    it.job = g2it.job = j;
    it.part_index = g2it.part_index = pi;
    it.prove_state = g2it.prove_state = ps;
    it.device = g2it.device = -1;
    g2it.g2_only = 1;
    int queued = 0, g2_queued = 0;
    pthread_mutex_lock(&e->mu);
    int any_dev = 0;
    for (unsigned d = 0; d < e->n_devices; d++)
        any_dev |= !e->devices[d].disabled;
    if (any_dev && !cuzk__gpu_any_device_takes(e, 0, j->circ, 0)) {
        /* Some device works but the key is larger than every GPU budget: never staged. */
        e->gpu_budget_cpu_stages++;
    } else if (e->n_devices && cuzk__gpu_any_device_takes(e, 0, j->circ, 0)) {
        g2_queued = g2_gpu && e->g2_device >= 0 && cuzk__gpu_any_device_takes(e, 0, j->circ, 1);
        it.g2_on_device = g2_gpu && !g2_queued;
        if (e->gpu_queue_tail)
            e->gpu_queue_tail->next = &it;
        else
            e->gpu_queue_head = &it;
        e->gpu_queue_tail = &it;
        if (g2_queued) {
            it.next = &g2it;
            e->gpu_queue_tail = &g2it;
        }
        queued = 1;
        pthread_cond_broadcast(&e->gpu_queue_cv);
    }
    pthread_mutex_unlock(&e->mu);

    cuzk_err err = CUZK_OK, g2err = CUZK_OK;
    cuzk_errbuf g2eb = {{0}};
    /* gpu_held: the partition reserved only its device-path working set. */
    uint64_t extra = 0;
    int cpu_held = 0;
    if (gpu_held && !queued) {
        if ((err = cpu_stages_begin(e, j, gpu_held, &extra, "no device takes the key now",
                                    eb)))
            return err;
        cpu_held = 1;
    }
    int g2_here = !queued || !g2_gpu;
    if (g2_here) {
        double t = cuzk__now_ms();
        g2err = cuzk_prove_g2(ps, -1, NULL, &g2eb);
        *g2_ms += cuzk__now_ms() - t;
        pthread_mutex_lock(&e->mu); /* a GPU worker may hold the item now */
        it.g2_ok = !g2err;
        pthread_mutex_unlock(&e->mu);
    }
    if (queued) {
        pthread_mutex_lock(&e->mu);
        while (!it.done || (g2_queued && !g2it.done))
            pthread_cond_wait(&e->gpu_done_cv, &e->mu);
        int fallback = 0;
        if (g2_queued) {
            it.g2_ok |= g2it.g2_ok;
            if (g2it.err == CUZK_GPU_FAULT || g2it.err == CUZK_NO_DEVICE)
                fallback = 1; /* B in G2 is redone on the CPU below */
            else if (g2it.err && !g2err) {
                g2err = g2it.err;
                g2eb = g2it.eb;
            }
        }
        fallback += it.err == CUZK_GPU_FAULT || it.err == CUZK_NO_DEVICE;
        e->cpu_fallbacks += (uint64_t)fallback;
        pthread_mutex_unlock(&e->mu);
        *gpu_ms += it.gpu_ms;
        if (!g2_here)
            *g2_ms += cuzk_prove_state_stats(ps)->msm_g2_ms;
        if (g2_queued && (g2it.err == CUZK_GPU_FAULT || g2it.err == CUZK_NO_DEVICE))
            CUZK_LOG_WARN(TGT, "B in G2 falls back to the CPU", "job=%s partition=%zu error=%s",
                          j->id, pi, g2it.eb.msg);
        err = it.err;
        if (err == CUZK_GPU_FAULT || err == CUZK_NO_DEVICE) {
            /* Every device that could take it failed: a GPU fault costs time, never the
             * proof (unless its CPU stages can never fit the working budget). */
            CUZK_LOG_WARN(TGT, "GPU stage falls back to the CPU", "job=%s partition=%zu error=%s",
                          j->id, pi, it.eb.msg);
            err = CUZK_OK;
        } else if (err) {
            *eb = it.eb;
        }
        if (!err && fallback && gpu_held) {
            char why[CUZK_ERRBUF_SIZE + 32];
            snprintf(why, sizeof why, "GPU stage failed (%s)",
                     it.err ? it.eb.msg : g2it.eb.msg);
            if ((err = cpu_stages_begin(e, j, gpu_held, &extra, why, eb)))
                return err;
            cpu_held = 1;
        }
    }
    if (!err && !it.g1_ok)
        err = cuzk_prove_g1(ps, -1, NULL, eb); /* CPU backend, or the fallback */
    if (!err && !it.g2_ok && !g2err) {
        double t = cuzk__now_ms();
        g2err = cuzk_prove_g2(ps, -1, NULL, &g2eb);
        *g2_ms += cuzk__now_ms() - t;
    }
    if (!err && g2err) {
        *eb = g2eb;
        err = g2err;
    }
    if (cpu_held)
        cpu_stages_end(e, extra);
    return err;
}

/* Sets this partition's share of e->working_allocated to bytes and of
 * e->witness_pinned_bytes to pinned (status: where the large bytes are). */
static void account(cuzk_engine *e, uint64_t *held, uint64_t bytes, uint64_t *pinned_held,
                    uint64_t pinned)
{
    pthread_mutex_lock(&e->mu);
    e->working_allocated += bytes - *held;
    e->witness_pinned_bytes += pinned - *pinned_held;
    pthread_mutex_unlock(&e->mu);
    *held = bytes;
    *pinned_held = pinned;
}

/* The witness of a witness seed (engine.h "Generated keys"): 32 n_vars bytes in *out
 * (malloc'd), as `cuzk gen-witness --seed SEED` writes them, replayed from the circuit's
 * structure when its key kept one (the job holds c, so it stays). */
static cuzk_err make_seed_witness(cuzk_engine *e, const circuit *c, uint64_t seed,
                                  uint8_t **out, cuzk_errbuf *eb)
{
    char ws[24];
    snprintf(ws, sizeof ws, "%" PRIu64, seed);
    cuzk_gen_params p = c->gen;
    p.witness_seed = ws;
    pthread_mutex_lock(&e->mu);
    p.structure = c->gen_structure;
    pthread_mutex_unlock(&e->mu);
    *out = malloc(32ull * c->n_vars);
    if (!*out)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for the witness of seed %s", ws);
    cuzk_err err = cuzk_gen_witness(*out, c->n_vars, &p, NULL, eb);
    if (err) {
        free(*out);
        *out = NULL;
    }
    return err;
}

/* The witness of a partition's circuit inputs (engine.h "Inputs"): 32 n_vars bytes in *out
 * (malloc'd), computed by the circuit's program, or read from the .wtns its command wrote
 * and checked as a submitted witness is. */
static cuzk_err make_inputs_witness(const job *j, size_t pi, uint8_t **out, cuzk_errbuf *eb)
{
    const circuit *c = j->circ;
    const partition *p = &j->parts[pi];
    char name[48];
    snprintf(name, sizeof name, "inputs %zu", pi);
    *out = NULL;
    cuzk_err err;
    if (c->program) {
        cuzk_json_doc *doc;
        if ((err = cuzk_json_parse(&doc, p->inputs, p->inputs_len, p->inputs_len + 1, name, eb)))
            return err;
        cuzk_witness w;
        err = cuzk_witness_compute(c->program, cuzk_json_root(doc), name, &w, eb);
        cuzk_json_free(doc);
        if (w.log && w.log[0])
            CUZK_LOG_DEBUG(TGT, "circuit log", "job=%s partition=%zu log=\"%.400s\"", j->id, pi,
                           w.log);
        if (!err && (w.curve != c->curve || w.n != c->n_vars)) /* checked at start */
            err = cuzk_errf(eb, CUZK_INTERNAL, "%s: the witness program made %" PRIu64
                            " values on %s, the key takes %u on %s", name, w.n,
                            cuzk_curve_name(w.curve), c->n_vars, cuzk_curve_name(c->curve));
        if (!err) {
            *out = w.values;
            w.values = NULL;
        }
        cuzk_witness_clear(&w);
        return err;
    }
    uint8_t *buf;
    size_t len;
    if ((err = cuzk_witness_run_command(&c->command, p->inputs, p->inputs_len, name, &buf, &len,
                                        eb)))
        return err;
    cuzk_wtns w;
    char wname[64];
    snprintf(wname, sizeof wname, "the out.wtns of %s", name);
    err = cuzk_wtns_parse(&w, buf, len, wname, eb);
    int parsed = !err;
    if (!err && w.curve != c->curve)
        err = cuzk_errf(eb, CUZK_WRONG_CURVE, "%s is on %s, circuit '%s' on %s", wname,
                        cuzk_curve_name(w.curve), c->id, cuzk_curve_name(c->curve));
    if (!err && w.n_witness != c->n_vars)
        err = cuzk_errf(eb, CUZK_SIZE_MISMATCH, "%s has %" PRIu64 " values, circuit '%s' "
                        "expects %u", wname, w.n_witness, c->id, c->n_vars);
    if (!err)
        err = cuzk_wtns_validate(&w, eb);
    if (!err) /* the values to the front: the buffer becomes the witness */
        memmove(buf, w.values, 32ull * c->n_vars);
    if (parsed)
        cuzk_wtns_close(&w);
    if (err)
        free(buf);
    else
        *out = buf;
    return err;
}

static void prove_partition(cuzk_engine *e, job *j, size_t pi)
{
    circuit *c = j->circ;
    cuzk_errbuf eb = {{0}};
    cuzk_err err;
    double tw = cuzk__now_ms();
    const int seeded = j->parts[pi].seeded;
    /* gen_bytes: the made witness, held until the prover has its copy (the seed scratch in it
     * only while the witness is made). */
    uint64_t gen_bytes = cuzk__made_witness_bytes(c, &j->parts[pi]);
    const uint64_t gen_scratch = seeded ? c->seed_scratch : 0;
    pthread_mutex_lock(&e->mu);
    const int on_gpu = cuzk__partition_on_gpu(e, c);
    pthread_mutex_unlock(&e->mu);
    uint64_t bytes = on_gpu ? c->gpu_partition_bytes : c->partition_bytes;
    const uint64_t need = cuzk__partition_need(c, on_gpu, gen_bytes);
    /* A device-path partition is admitted only while the fallback reserve stays free beside
     * it (engine.h "Memory"), then holds just its own working set. */
    uint64_t ask = need;
    if (on_gpu && e->fallback_reserve && need + e->fallback_reserve <= e->cfg.working_budget)
        ask += e->fallback_reserve;
    err = cuzk_budget_reserve(e->working_mem, CUZK_OWNER_ABC, ask, -1, &j->cancel_requested, &eb);
    if (!err && ask > need)
        cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, ask - need);
    double wait_ms = cuzk__now_ms() - tw;
    cuzk_part_result res = {0};
    double synth = 0, prove = 0, gpu_ms = 0, g2_ms = 0, witness_ms = 0;
    uint8_t *gen_w = NULL; /* a made witness's values, alive until the partition ends */
    if (!err && gen_bytes) {
        cuzk_budget_transfer(e->working_mem, CUZK_OWNER_ABC, CUZK_OWNER_WITNESS, gen_bytes);
        /* Counted as allocated while it is being made (the program's own process aside). */
        pthread_mutex_lock(&e->mu);
        e->working_allocated += gen_bytes;
        pthread_mutex_unlock(&e->mu);
        double t = cuzk__now_ms();
        if (seeded)
            err = make_seed_witness(e, c, j->parts[pi].seed, &gen_w, &eb);
        else
            err = make_inputs_witness(j, pi, &gen_w, &eb);
        pthread_mutex_lock(&e->mu);
        e->working_allocated -= gen_bytes;
        pthread_mutex_unlock(&e->mu);
        witness_ms = cuzk__now_ms() - t;
        if (err)
            cuzk_budget_release(e->working_mem, CUZK_OWNER_WITNESS, gen_bytes);
        if (err)
            cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, bytes);
        if (!err) {
            cuzk_budget_release(e->working_mem, CUZK_OWNER_WITNESS, gen_scratch);
            gen_bytes -= gen_scratch;
        }
    }
    if (!err) {
        /* One reservation, then split by owner for the status report (witness and MSM
         * scratch vs the a, b, c, h vectors). a, b, c are returned as soon as H is done. */
        uint64_t wit = 32ull * c->n_vars, abc = on_gpu ? 0 : 32ull * 4 * c->domain_size;
        int split = wit + abc <= bytes, abc_held = 1;
        uint64_t scratch = split ? bytes - wit - abc : 0; /* MSM scratch still held */
        if (split) {
            cuzk_budget_transfer(e->working_mem, CUZK_OWNER_ABC, CUZK_OWNER_WITNESS, wit);
            cuzk_budget_transfer(e->working_mem, CUZK_OWNER_ABC, CUZK_OWNER_MSM_SCRATCH,
                                 bytes - wit - abc);
        }
        if (!(err = cuzk__key_ensure(e, c, NULL, NULL, &eb))) {
            cuzk_wtns w;
            memset(&w, 0, sizeof w);
            pthread_mutex_lock(&e->mu);
            const uint8_t *wb = j->parts[pi].witness;
            size_t wl = j->parts[pi].witness_len;
            cuzk_pk *pk = c->pk;
            int defer = e->n_devices && (c->stage_parts & CUZK_PK_STAGE_ROWS);
            int pin = e->pin_ctx && cuzk__gpu_any_device_takes(e, 0, c, 0);
            pthread_mutex_unlock(&e->mu);
            /* Already checked at submission; parsing again only locates the values. */
            if (gen_w) {
                w.values = gen_w;
                w.n_witness = c->n_vars;
            } else {
                err = cuzk_wtns_parse(&w, wb, wl, "witness", &eb);
            }
            if (!err) {
                cuzk_prove_opts po = {0};
                po.nthreads = e->cfg.prove_threads;
                po.no_verify = e->cfg.no_verify;
                cuzk_prove_state *ps = NULL;
                uint64_t held = 0, pinned = 0, pinned_held = 0, gen_held = gen_bytes;
                double t0 = cuzk__now_ms();
                /* w.values points into the job's .wtns copy, alive until this partition
                 * ends: the public inputs are read from it below. */
                const uint8_t *pub = w.values + 32;
                /* With GPU workers and the key's rows staged, synthesis is left to the G1
                 * stage: on a device it runs there from the rows (a, b, c never exist
                 * here); on the CPU (no device takes the key, or the fallback) the stage
                 * synthesizes first. */
                err = cuzk_prove_begin_ex(&ps, pk, w.values, w.n_witness, &po,
                                          defer ? CUZK_PROVE_DEFER_SYNTH : 0, &eb);
                if (!gen_w)
                    cuzk_wtns_close(&w);
                /* Page-locking the partition's own witness copy lets the GPU stage upload it by
                 * DMA, several times faster than through staging buffers; the pinning costs CPU
                 * time here, while the GPU works on other partitions. pinned_budget = 0 (no
                 * pin_ctx) turns it off with the key pinning. */
                if (!err && pin) {
                    cuzk_errbuf peb = {{0}};
                    if (cuzk_prove_state_pin(ps, e->pin_ctx, &peb))
                        CUZK_LOG_DEBUG(TGT, "witness not page-locked", "job=%s partition=%zu "
                                       "error=%s", j->id, pi, peb.msg);
                    else
                        pinned = 32ull * c->n_vars;
                }
                if (!err)
                    account(e, &held, cuzk_prove_state_bytes(ps) + gen_held, &pinned_held,
                            pinned);
                const int g2_gpu = !err && g2_on_gpu(e, pub - 32, c->n_vars);
                uint8_t *pub_own = NULL;
                if (!err && gen_w) {
                    /* A made witness is dead once the prover holds its copy: only the public
                     * inputs are read later. Its bytes go back to the budget now. */
                    size_t pb = 32ull * c->n_public;
                    if (!(pub_own = malloc(pb ? pb : 1))) {
                        err = cuzk_errf(&eb, CUZK_NO_MEMORY, "out of memory");
                    } else {
                        memcpy(pub_own, pub, pb);
                        pub = pub_own;
                        free(gen_w);
                        gen_w = NULL;
                        cuzk_budget_release(e->working_mem, CUZK_OWNER_WITNESS, gen_bytes);
                        gen_held = 0;
                        account(e, &held, cuzk_prove_state_bytes(ps), &pinned_held, pinned);
                    }
                }
                if (!err && on_gpu && g2_gpu && split && scratch) {
                    /* B in G2 goes to a device: its CPU scratch is not needed (a fallback
                     * reserves it again). */
                    cuzk_budget_release(e->working_mem, CUZK_OWNER_MSM_SCRATCH, scratch);
                    bytes -= scratch;
                    scratch = 0;
                }
                if (!err)
                    err = run_stages(e, j, pi, ps, g2_gpu, on_gpu ? bytes : 0, &gpu_ms, &g2_ms,
                                     &eb);
                if (!err)
                    account(e, &held, cuzk_prove_state_bytes(ps) + gen_held, &pinned_held,
                            pinned);
                if (!err && split && cuzk_prove_state_bytes(ps) <= wit) {
                    cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, abc); /* H is done */
                    abc_held = 0;
                }
                cuzk_proof proof;
                if (!err)
                    err = cuzk_prove_end(ps, &proof, &eb);
                if (ps) {
                    const cuzk_prove_stats *st = cuzk_prove_state_stats(ps);
                    synth = st->synth_ms;
                    double total = cuzk__now_ms() - t0;
                    prove = total > synth ? total - synth : 0;
                    if (!err)
                        CUZK_LOG_INFO(TGT, "partition proved", "job=%s partition=%zu stages=%s "
                                      "witness_ms=%.1f synth_ms=%.1f h_ms=%.1f msm_g1_ms=%.1f "
                                      "msm_g2_ms=%.1f gpu_ms=%.1f g2_ms=%.1f total_ms=%.1f",
                                      j->id, pi, gpu_ms > 0 ? "gpu" : "cpu", witness_ms,
                                      st->synth_ms, st->h_ms, st->msm_g1_ms, st->msm_g2_ms,
                                      gpu_ms, g2_ms, total);
                }
                cuzk_prove_state_free(ps);
                account(e, &held, 0, &pinned_held, 0);
                if (!err) {
                    cuzk_strbuf sb;
                    cuzk_sb_init(&sb);
                    cuzk_proof_to_json(&sb, &proof);
                    res.proof_json = sb.oom ? NULL : sb.buf;
                    cuzk_sb_init(&sb);
                    cuzk_public_to_json(&sb, pub, c->n_public);
                    res.public_json = sb.oom ? NULL : sb.buf;
                    if (!res.proof_json || !res.public_json)
                        err = cuzk_errf(&eb, CUZK_NO_MEMORY, "cannot format the proof");
                    if (!err && c->curve == CUZK_CURVE_BLS12_381) {
                        err = cuzk_proof_to_compressed(res.compressed, &proof, &eb);
                        res.has_compressed = !err;
                    }
                }
                free(pub_own);
            }
        }
        if (split) {
            cuzk_budget_release(e->working_mem, CUZK_OWNER_WITNESS, wit);
            cuzk_budget_release(e->working_mem, CUZK_OWNER_MSM_SCRATCH, scratch);
            if (abc_held)
                cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, abc);
        } else {
            cuzk_budget_release(e->working_mem, CUZK_OWNER_ABC, bytes);
        }
        if (gen_w) {
            free(gen_w);
            cuzk_budget_release(e->working_mem, CUZK_OWNER_WITNESS, gen_bytes);
        }
    }

    pthread_mutex_lock(&e->mu);
    j->parts_running--;
    j->budget_wait_ms += wait_ms;
    j->synth_ms += synth;
    j->prove_ms += prove;
    j->gpu_ms += gpu_ms;
    j->g2_ms += g2_ms;
    j->witness_ms += witness_ms;
    cuzk__partition_drop_witness(e, &j->parts[pi]); /* dead once proved */
    if (!err) {
        j->parts[pi].result = res;
        j->parts_done++;
        e->partitions_proved++;
        e->prove_ms_total += synth + prove;
    } else {
        free(res.proof_json);
        free(res.public_json);
        if (err != CUZK_CANCELLED)
            e->partitions_failed++;
    }
    if (job_live(j)) {
        if (err && err != CUZK_CANCELLED && !j->cancel_requested) {
            /* The first failure decides the job; its other partitions stop starting. */
            char msg[CUZK_ERRBUF_SIZE + 32];
            snprintf(msg, sizeof msg, "partition %zu: %s", pi,
                     eb.msg[0] ? eb.msg : cuzk_strerror(err));
            __atomic_store_n(&j->cancel_requested, 1, __ATOMIC_RELAXED);
            cuzk_budget_wake(e->working_mem); /* its partitions waiting for memory give up */
            j->err = err;
            free(j->error);
            j->error = xstrdup(msg);
        }
        if (j->parts_running == 0) {
            if (j->cancel_requested && j->err && j->err != CUZK_CANCELLED) {
                char *m = xstrdup(j->error);
                cuzk__job_finish(e, j, CUZK_JOB_FAILED, j->err, m);
                free(m);
            } else if (j->cancel_requested) {
                cuzk__job_finish(e, j, CUZK_JOB_CANCELLED, CUZK_CANCELLED, "cancelled");
            } else if (j->parts_done == j->n_parts) {
                cuzk__job_finish(e, j, CUZK_JOB_COMPLETED, CUZK_OK, "");
            }
        }
    }
    pthread_mutex_unlock(&e->mu);
}

void *cuzk__partition_worker_main(void *arg)
{
    cuzk_engine *e = arg;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        job *j;
        while (!(j = cuzk__sched_pick(e)) && !e->stopping)
            pthread_cond_wait(&e->work_cv, &e->mu);
        if (!j)
            break;
        size_t pi = j->next_part++;
        j->parts_running++;
        if (j->state == CUZK_JOB_QUEUED) {
            j->state = CUZK_JOB_RUNNING;
            j->t_start = cuzk__now_ms();
        }
        e->busy_partition_workers++;
        pthread_mutex_unlock(&e->mu);
        prove_partition(e, j, pi);
        pthread_mutex_lock(&e->mu);
        e->busy_partition_workers--;
        pthread_cond_broadcast(&e->idle_cv);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}
