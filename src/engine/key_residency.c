/* Proving keys in their residency tiers (engine.h "Key residency tiers"): loading from the
 * cache file or the zkey, host LRU eviction under key_budget, page-locking under
 * pinned_budget, and staged copies per device under each GPU budget, with the holds that keep
 * a key staged while a GPU stage uses it. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"

#include <stdio.h>

#include "cuzk/io.h"
#include "util/clock.h"

const char *cuzk_key_tier_name(cuzk_key_tier t)
{
    switch (t) {
    case CUZK_TIER_MAPPED: return "mapped";
    case CUZK_TIER_HOST: return "host";
    case CUZK_TIER_PINNED: return "pinned";
    case CUZK_TIER_GPU: return "gpu";
    default: return "cold";
    }
}

cuzk_key_tier cuzk__key_tier(const circuit *c)
{
    if (c->pk)
        return c->gpu_staged_mask ? CUZK_TIER_GPU
               : c->pinned_bytes  ? CUZK_TIER_PINNED
                                  : CUZK_TIER_HOST;
    return c->mapped ? CUZK_TIER_MAPPED : CUZK_TIER_COLD;
}

#define ALL_ARRAYS ((1u << CUZK_PK_GPU_ARRAYS) - 1)
#define ROW_ARRAYS (ALL_ARRAYS & ~0x1fu) /* the A and B rows: arrays 5 .. (after the sets) */

/* Bytes of the arrays a stage uploads (what pinning page-locks), those in `arrays` (bit i:
 * array i of cuzk_pk_gpu_arrays). */
static uint64_t pin_size(cuzk_pk *pk, uint32_t arrays)
{
    void *p[CUZK_PK_GPU_ARRAYS];
    size_t l[CUZK_PK_GPU_ARRAYS], n = cuzk_pk_gpu_arrays(pk, p, l);
    uint64_t b = 0;
    for (size_t i = 0; i < n; i++)
        if (arrays & (1u << i))
            b += l[i];
    return b;
}

/* Page-locks (pin = 1) or unlocks the key's uploaded arrays in `arrays`. Emulated GPUs:
 * accounting only. */
cuzk_err cuzk__key_pin_arrays(cuzk_engine *e, cuzk_pk *pk, int pin, uint32_t arrays,
                              cuzk_errbuf *eb)
{
    if (!real_gpus(e) || !e->pin_ctx)
        return CUZK_OK;
    void *p[CUZK_PK_GPU_ARRAYS];
    size_t l[CUZK_PK_GPU_ARRAYS], n = cuzk_pk_gpu_arrays(pk, p, l);
    cuzk_err err = CUZK_OK;
    pthread_mutex_lock(&e->pin_mu);
    for (size_t i = 0; i < n; i++) {
        if (!l[i] || !(arrays & (1u << i)))
            continue;
        if (!pin) {
            cuzk_gpu_unpin(e->pin_ctx, p[i]);
        } else if ((err = cuzk_gpu_pin(e->pin_ctx, p[i], l[i], eb))) {
            while (i-- > 0)
                if (l[i] && (arrays & (1u << i)))
                    cuzk_gpu_unpin(e->pin_ctx, p[i]);
            break;
        }
    }
    pthread_mutex_unlock(&e->pin_mu);
    return err;
}

/* Drops c's pinning. Under e->mu. */
static void unpin_key(cuzk_engine *e, circuit *c)
{
    if (!c->pinned_bytes)
        return;
    if (c->pk)
        cuzk__key_pin_arrays(e, c->pk, 0, c->pinned_arrays, NULL);
    e->pinned_bytes -= c->pinned_bytes;
    c->pinned_bytes = 0;
    c->pinned_arrays = 0;
    c->pinned_streamed = 0;
}

/* The arrays (bit i: array i of cuzk_pk_gpu_arrays) of the point sets in `sets`
 * (CUZK_PK_SET_*): A, B1, C, H, B2 are arrays 0 to 4, the sets' own bits. */
static uint32_t set_arrays(unsigned sets)
{
    return sets & (CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_H |
                   CUZK_PK_SET_B2);
}

unsigned cuzk__key_pin_plan(const uint64_t set[5], uint64_t whole, unsigned streamed,
                            uint64_t room, int auto_budget, uint64_t *need)
{
    *need = 0;
    if (whole <= room) {
        *need = whole;
        return CUZK__PIN_WHOLE;
    }
    static const unsigned order[5] = {CUZK_PK_SET_B2, CUZK_PK_SET_A, CUZK_PK_SET_B1,
                                      CUZK_PK_SET_C, CUZK_PK_SET_H};
    static const int index[5] = {4, 0, 1, 2, 3};
    unsigned sets = 0;
    for (int k = 0; k < 5; k++) {
        if (!(streamed & order[k]))
            continue;
        if (auto_budget || *need + set[index[k]] <= room) {
            sets |= order[k];
            *need += set[index[k]];
        }
    }
    return sets;
}

/* Pins a freshly loaded key (not yet published in c->pk, so nothing else reads its arrays
 * while they are page-locked) as cuzk__key_pin_plan chooses, unpinning the least recently
 * used pinned keys no job holds first when the whole key would fit: every MSM over a
 * streamed set copies it, and page-locked copies run at the link's speed. The automatic
 * budget pins every streamed set, whatever its size: the arrays are page-locked where they
 * lie, so pinning takes no byte more of host memory, while a streamed set in pageable memory
 * makes every partition's copies of it several times slower; such a key's pins are then not
 * unpinned for other keys. Under e->load_mu, not e->mu. */
static void pin_new_key(cuzk_engine *e, circuit *c, cuzk_pk *pk, unsigned streamed)
{
    if (!e->pinned_budget)
        return;
    uint64_t set[5];
    for (int i = 0; i < 5; i++)
        set[i] = pin_size(pk, 1u << i);
    uint64_t need;
    unsigned plan = cuzk__key_pin_plan(set, pin_size(pk, ALL_ARRAYS), set_arrays(streamed),
                                       e->pinned_budget, e->pinned_auto, &need);
    if (!plan) {
        CUZK_LOG_INFO(TGT, "key not pinned: larger than the pinned budget", "circuit=%s "
                      "bytes=%" PRIu64 " pinned_budget=%" PRIu64, c->id,
                      pin_size(pk, ALL_ARRAYS), e->pinned_budget);
        return;
    }
    const uint32_t arrays = plan == CUZK__PIN_WHOLE ? ALL_ARRAYS : set_arrays(plan);
    if (plan != CUZK__PIN_WHOLE && e->pinned_auto) {
        /* The automatic budget's streamed sets: pinned beside the budget. */
        pthread_mutex_lock(&e->mu);
        c->pinned_bytes = need;
        c->pinned_arrays = arrays;
        c->pinned_streamed = 1;
        e->pinned_bytes += need;
        if (e->pinned_bytes > e->pinned_peak)
            e->pinned_peak = e->pinned_bytes;
        pthread_mutex_unlock(&e->mu);
        goto pin;
    }
    pthread_mutex_lock(&e->mu);
    while (e->pinned_bytes + need > e->pinned_budget) {
        circuit *v = NULL;
        for (size_t i = 0; i < e->n_circuits; i++) {
            circuit *x = &e->circuits[i];
            if (x != c && x->pinned_bytes && !x->pinned_streamed && x->pk && x->holders == 0 &&
                (!v || x->last_used < v->last_used))
                v = x;
        }
        if (!v)
            break;
        CUZK_LOG_INFO(TGT, "unpinning key (LRU, pinned budget)", "circuit=%s bytes=%" PRIu64,
                      v->id, v->pinned_bytes);
        unpin_key(e, v);
        e->key_unpins++;
    }
    int fits = e->pinned_bytes + need <= e->pinned_budget;
    if (fits) {
        e->pinned_bytes += need;
        if (e->pinned_bytes > e->pinned_peak)
            e->pinned_peak = e->pinned_bytes;
        c->pinned_bytes = need;
        c->pinned_arrays = arrays;
    }
    pthread_mutex_unlock(&e->mu);
    if (!fits) {
        CUZK_LOG_INFO(TGT, "key not pinned: the pinned budget is held by keys in use",
                      "circuit=%s bytes=%" PRIu64, c->id, need);
        return;
    }
pin:;
    cuzk_errbuf eb = {{0}};
    double t = cuzk__now_ms();
    cuzk_err err = cuzk__key_pin_arrays(e, pk, 1, arrays, &eb);
    pthread_mutex_lock(&e->mu);
    if (err) {
        e->pinned_bytes -= need;
        c->pinned_bytes = 0;
        c->pinned_arrays = 0;
        c->pinned_streamed = 0;
    } else {
        e->keys_pinned++;
    }
    pthread_mutex_unlock(&e->mu);
    if (err) {
        CUZK_LOG_WARN(TGT, "cannot pin the key: left in pageable memory", "circuit=%s error=%s",
                      c->id, eb.msg);
    } else if (arrays != ALL_ARRAYS) {
        char names[32];
        cuzk_pk_set_names(set_arrays(arrays), names, sizeof names);
        CUZK_LOG_INFO(TGT, "streamed point sets pinned (the whole key is larger than the pinned "
                      "budget)", "circuit=%s sets=%s bytes=%" PRIu64 " ms=%.1f", c->id, names,
                      need, cuzk__now_ms() - t);
    } else {
        CUZK_LOG_INFO(TGT, "key pinned", "circuit=%s bytes=%" PRIu64 " ms=%.1f", c->id, need,
                      cuzk__now_ms() - t);
    }
}

/* Frees c's staged copy on device index d. Under e->mu; no stage holds it there. */
static void gpu_unstage(cuzk_engine *e, circuit *c, unsigned d)
{
    if (!(c->gpu_staged_mask & (1u << d)))
        return;
    if (real_gpus(e) && c->pk)
        cuzk_pk_gpu_unstage(c->pk, e->devices[d].id);
    c->gpu_staged_mask &= ~(1u << d);
    e->devices[d].key_bytes -= c->gpu_copy_bytes;
}

/* Reserves room for c's staged copy on device d if it is not staged there: unstages the least
 * recently used staged keys that no stage holds on d (keys without live jobs first) until it
 * fits. Returns 1 when c is staged or reserved (*upload = 1: the caller uploads it), 0 when
 * it does not fit now. Under e->mu. */
int cuzk__key_gpu_reserve(cuzk_engine *e, circuit *c, unsigned d, int *upload)
{
    gpu_device *g = &e->devices[d];
    uint32_t bit = 1u << d;
    *upload = 0;
    if (c->gpu_staged_mask & bit)
        return 1;
    if (c->gpu_copy_bytes > g->key_budget)
        return 0;
    while (g->key_bytes + c->gpu_copy_bytes > g->key_budget) {
        circuit *v = NULL;
        for (size_t i = 0; i < e->n_circuits; i++) {
            circuit *x = &e->circuits[i];
            /* A key whose host copies were released cannot be staged again. */
            if (x == c || !(x->gpu_staged_mask & bit) || x->gpu_holds[d] ||
                (x->pk && cuzk_pk_host_released(x->pk)))
                continue;
            if (!v || (x->holders == 0) > (v->holders == 0) ||
                ((x->holders == 0) == (v->holders == 0) &&
                 x->gpu_last_used[d] < v->gpu_last_used[d]))
                v = x;
        }
        if (!v)
            return 0;
        CUZK_LOG_INFO(TGT, "unstaging key (LRU, GPU budget)", "circuit=%s device=%d bytes=%"
                      PRIu64 " live_jobs=%u", v->id, g->id, v->gpu_copy_bytes, v->holders);
        gpu_unstage(e, v, d);
        g->key_unstages++;
    }
    c->gpu_staged_mask |= bit;
    g->key_bytes += c->gpu_copy_bytes;
    if (g->key_bytes > g->key_peak)
        g->key_peak = g->key_bytes;
    g->key_stages++;
    *upload = 1;
    return 1;
}

static void stream_names(const circuit *c, unsigned streamed, char *res, char *str, size_t n);

/* The log line of a key staged on device `dev` (an id), naming the point sets whose fixed-base
 * tables did not fit (they stay plain: their MSMs run without tables, somewhat slower). */
void cuzk__key_log_staged(const circuit *c, int dev, double ms)
{
    char plain[32] = "";
    if (c->stage_parts & CUZK_PK_STAGE_TABLES)
        cuzk_pk_set_names(cuzk_pk_gpu_no_tables(c->pk, dev), plain, sizeof plain);
    if (c->gpu_streamed) {
        char res[32], str[32];
        stream_names(c, c->gpu_streamed, res, str, sizeof res);
        CUZK_LOG_INFO(TGT, "key staged on the GPU, some point sets streamed from host memory",
                      "circuit=%s device=%d bytes=%" PRIu64 " ms=%.1f resident=%s streamed=%s",
                      c->id, dev, c->gpu_copy_bytes, ms, res, str);
    } else if (plain[0])
        CUZK_LOG_WARN(TGT, "key staged on the GPU, some point sets without tables (no room)",
                      "circuit=%s device=%d bytes=%" PRIu64 " ms=%.1f no_tables=%s", c->id, dev,
                      c->gpu_copy_bytes, ms, plain);
    else
        CUZK_LOG_INFO(TGT, "key staged on the GPU", "circuit=%s device=%d bytes=%" PRIu64
                      " ms=%.1f", c->id, dev, c->gpu_copy_bytes, ms);
}

/* Holds c staged on device d for a GPU stage (see cuzk__key_gpu_reserve), waiting while the
 * keys in the way are held by running stages. While one GPU worker of d waits for room, the
 * others wait behind it before taking any hold on d, so the keys it waits for are released and
 * it is not starved. Returns 0 (without waiting) when c is larger than d's budget. Under e->mu. */
int cuzk__key_gpu_acquire(cuzk_engine *e, circuit *c, unsigned d, int *upload)
{
    gpu_device *g = &e->devices[d];
    int waiting = 0;
    *upload = 0;
    if (c->gpu_copy_bytes > g->key_budget)
        return 0;
    for (;;) {
        if (waiting || !g->tier_waiters) {
            if (cuzk__key_gpu_reserve(e, c, d, upload))
                break;
            if (!waiting) {
                waiting = 1;
                g->tier_waiters++;
            }
        }
        pthread_cond_wait(&e->tier_cv, &e->mu);
    }
    if (waiting) {
        g->tier_waiters--;
        pthread_cond_broadcast(&e->tier_cv);
    }
    c->gpu_holds[d]++;
    return 1;
}

void cuzk__key_gpu_release(cuzk_engine *e, circuit *c, unsigned d)
{
    c->gpu_holds[d]--;
    c->gpu_last_used[d] = ++e->lru_tick;
    pthread_cond_broadcast(&e->tier_cv);
}

/* Whether c's cache file is valid now (header, length, the zkey's identity); *bytes: its size.
 * No lock needed (reads only c's constant fields). */
int cuzk__key_cache_valid(const cuzk_engine *e, const circuit *c, uint64_t *bytes)
{
    *bytes = 0;
    if (!e->cfg.key_cache || c->generated)
        return 0;
    char *p = cuzk_pk_cache_path(c->zkey, e->cfg.key_cache_dir);
    cuzk_errbuf eb = {{0}};
    int ok = p && cuzk_pk_cache_check(p, c->zkey, bytes, &eb) == CUZK_OK;
    free(p);
    if (!ok)
        *bytes = 0;
    return ok;
}

/* Takes c's key out of the host tier (and so out of the pinned and GPU tiers): unpins it,
 * forgets its staged copies (cuzk_pk_free frees them), and notes whether it is now "mapped".
 * Returns the key for the caller to free. Under e->mu; nobody holds c. */
static cuzk_pk *drop_key(cuzk_engine *e, circuit *c)
{
    cuzk_pk *pk = c->pk;
    unpin_key(e, c);
    for (unsigned d = 0; d < e->n_devices; d++)
        if (c->gpu_staged_mask & (1u << d))
            e->devices[d].key_bytes -= c->gpu_copy_bytes;
    c->gpu_staged_mask = 0;
    c->pk = NULL;
    cuzk_gen_structure_free(c->gen_structure);
    c->gen_structure = NULL;
    c->host_bytes = 0;
    c->mapped = cuzk__key_cache_valid(e, c, &c->cache_bytes);
    e->keys_evicted++;
    return pk;
}

/* Evicts least recently used unheld keys until `need` more bytes fit in key_budget.
 * Under e->mu and e->load_mu. */
static void make_key_room(cuzk_engine *e, uint64_t need, const circuit *keep)
{
    if (!e->cfg.key_budget)
        return;
    for (;;) {
        uint64_t used = 0;
        circuit *lru = NULL;
        for (size_t i = 0; i < e->n_circuits; i++) {
            circuit *c = &e->circuits[i];
            used += c->host_bytes;
            if (c->pk && c->holders == 0 && c != keep && (!lru || c->last_used < lru->last_used))
                lru = c;
        }
        if (used + need <= e->cfg.key_budget || !lru)
            return;
        CUZK_LOG_INFO(TGT, "evicting key (LRU)", "circuit=%s bytes=%" PRIu64, lru->id,
                      lru->host_bytes);
        cuzk_pk_free(drop_key(e, lru));
        CUZK_LOG_INFO(TGT, "key tier", "circuit=%s tier=%s", lru->id,
                      cuzk_key_tier_name(cuzk__key_tier(lru)));
    }
}

/* Device bytes of circuit c's point sets staged without tables (A, B1, C, H; B2 when staged),
 * each with its map of points at infinity (cuzk_gpu_tables_bytes with max_copies 1), from its
 * dimensions, before its key is loaded. */
static uint64_t plain_points_bytes(const cuzk_engine *e, const circuit *c)
{
    const cuzk_gpu_curve gc = gpu_curve(c);
    return 3 * cuzk_gpu_tables_bytes(gc, CUZK_GPU_G1, c->n_vars, 1) +
           cuzk_gpu_tables_bytes(gc, CUZK_GPU_G1, c->domain_size, 1) +
           ((e->stage_parts & CUZK_PK_STAGE_G2)
                ? cuzk_gpu_tables_bytes(gc, CUZK_GPU_G2, c->n_vars, 1)
                : 0);
}

unsigned cuzk__key_stream_plan(const cuzk__key_sets *s, uint64_t budget, uint64_t buffers,
                               uint64_t *bytes)
{
    uint64_t whole = 0, streamed = 0;
    for (int i = 0; i < 5; i++) {
        whole += s->resident[i];
        streamed += s->resident[i] ? s->streamed[i] : 0;
    }
    if (whole <= budget) {
        *bytes = whole;
        return 0;
    }
    static const int order[5] = {3, 2, 0, 1, 4}; /* H, C, A, B1, B2 */
    unsigned mask = 0;
    uint64_t used = buffers + streamed;
    for (int k = 0; k < 5; k++) {
        const int i = order[k];
        if (!s->resident[i])
            continue;
        const uint64_t more = s->resident[i] - s->streamed[i];
        if (used <= budget && more <= budget - used)
            used += more;
        else
            mask |= 1u << i;
    }
    *bytes = used;
    return mask;
}

/* Device bytes of c's point sets staged whole or streamed (parts: CUZK_PK_STAGE_G2 for B2). */
static cuzk__key_sets key_sets(const circuit *c, unsigned parts)
{
    const cuzk_gpu_curve gc = gpu_curve(c);
    cuzk__key_sets s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < 5; i++) {
        const uint64_t n = i == 3 ? c->domain_size : c->n_vars; /* C padded to the witness */
        if (i == 4 && !(parts & CUZK_PK_STAGE_G2))
            continue;
        const cuzk_gpu_group g = i == 4 ? CUZK_GPU_G2 : CUZK_GPU_G1;
        s.resident[i] = cuzk_gpu_tables_bytes(gc, g, n, 1);
        s.streamed[i] = s.resident[i] - n * cuzk_gpu_point_bytes(gc, g); /* the map */
    }
    return s;
}

/* The names of the sets resident and streamed in a copy streaming `streamed`. */
static void stream_names(const circuit *c, unsigned streamed, char *res, char *str, size_t n)
{
    const unsigned all = CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_H |
                         ((c->stage_parts & CUZK_PK_STAGE_G2) ? CUZK_PK_SET_B2 : 0);
    cuzk_pk_set_names(all & ~streamed, res, n);
    cuzk_pk_set_names(streamed, str, n);
}

/* What a key's staged copy holds: the engine's stage_parts, less the A and B rows when only
 * the copy without them fits some device's GPU budget (that key's partitions then synthesize
 * on the CPU and upload a, b, c, rather than every GPU stage of it running on the CPU); when
 * not even that fits, some point sets streamed from host memory (*streamed,
 * cuzk__key_stream_plan) beside the rows where they fit, else without them.
 * *gpu_copy_bytes: the copy's device bytes. */
static unsigned key_stage_parts(const cuzk_engine *e, const circuit *c, cuzk_pk *pk,
                                uint64_t *gpu_copy_bytes, unsigned *streamed)
{
    *streamed = 0;
    unsigned parts = e->stage_parts;
    uint64_t b = cuzk_pk_gpu_bytes(pk, parts), kmax = 0;
    for (unsigned d = 0; d < e->n_devices; d++)
        if (!e->devices[d].disabled && e->devices[d].key_budget > kmax)
            kmax = e->devices[d].key_budget;
    /* The tables go first: they only make the MSMs faster. They are kept only when the key
     * with them fits beside the other circuits' point sets (so that keys that fit a device
     * together without tables do not evict each other for them). */
    uint64_t others = 0;
    for (size_t i = 0; i < e->n_circuits; i++)
        if (&e->circuits[i] != c)
            others += plain_points_bytes(e, &e->circuits[i]);
    if ((parts & CUZK_PK_STAGE_TABLES) && e->n_devices && (b > kmax || others > kmax - b)) {
        uint64_t nb = cuzk_pk_gpu_bytes(pk, parts & ~CUZK_PK_STAGE_TABLES);
        CUZK_LOG_INFO(TGT, "key staged without fixed-base tables (they would not fit the GPU "
                      "budget beside the other circuits' point sets)", "circuit=%s bytes=%" PRIu64
                      " with_tables=%" PRIu64 " others=%" PRIu64 " gpu_budget=%" PRIu64, c->id,
                      nb, b, others, kmax);
        parts &= ~CUZK_PK_STAGE_TABLES;
        b = nb;
    }
    if ((parts & CUZK_PK_STAGE_ROWS) && e->n_devices && b > kmax) {
        uint64_t nb = cuzk_pk_gpu_bytes(pk, parts & ~CUZK_PK_STAGE_ROWS);
        if (nb <= kmax) {
            CUZK_LOG_INFO(TGT, "key staged without its A and B rows (they would not fit the "
                          "GPU budget): its partitions synthesize on the CPU", "circuit=%s "
                          "bytes=%" PRIu64 " with_rows=%" PRIu64 " gpu_budget=%" PRIu64,
                          c->id, nb, b, kmax);
            parts &= ~CUZK_PK_STAGE_ROWS;
            b = nb;
        }
    }
    if (e->n_devices && b > kmax) {
        /* Each GPU worker of a device holds two chunk buffers while it streams, and for a
         * batch of partitions (gpus.stream_batch) two buffers of the batch's scalars for a
         * chunk: 32 bytes a point of the chunk for each partition, the most points a chunk
         * holds being those of G1 (the smaller point). The rows are kept when they fit beside
         * the buffers and the streamed sets' maps: its partitions then synthesize on the
         * device, holding no a, b, c in host memory and taking no host threads for them, which
         * is worth more than the sets they push out of the device (streamed too); else the
         * sets stream without them. */
        const unsigned nb = e->cfg.gpu_stream_batch > 1 ? e->cfg.gpu_stream_batch : 0;
        const uint64_t chunk = e->cfg.gpu_stream_chunk;
        const uint64_t g1_points = chunk / cuzk_gpu_point_bytes(gpu_curve(c), CUZK_GPU_G1);
        const uint64_t buffers =
            (uint64_t)e->cfg.gpu_workers_per_device * (2 * chunk + 2 * nb * 32 * g1_points);
        for (int keep = (parts & CUZK_PK_STAGE_ROWS) ? 1 : 0; keep >= 0; keep--) {
            const unsigned tp = keep ? parts : parts & ~CUZK_PK_STAGE_ROWS;
            const uint64_t rows =
                keep ? cuzk_pk_gpu_bytes(pk, tp) - cuzk_pk_gpu_bytes(pk, tp & ~CUZK_PK_STAGE_ROWS)
                     : 0;
            const cuzk__key_sets sets = key_sets(c, tp);
            uint64_t sb = 0;
            const unsigned m = cuzk__key_stream_plan(&sets, kmax, buffers + rows, &sb);
            if (!m || sb > kmax)
                continue;
            char res[32], str[32];
            circuit tmp = *c;
            tmp.stage_parts = tp;
            stream_names(&tmp, m, res, str, sizeof res);
            CUZK_LOG_INFO(TGT, "key staged with point sets streamed from host memory (the key "
                          "does not fit the GPU budget)", "circuit=%s bytes=%" PRIu64 " whole=%"
                          PRIu64 " gpu_budget=%" PRIu64 " resident=%s streamed=%s rows=%s "
                          "stream_chunk=%" PRIu64, c->id, sb, b, kmax, res, str,
                          keep ? "gpu" : "host (synthesis on the CPU)",
                          e->cfg.gpu_stream_chunk);
            parts = tp;
            b = sb;
            *streamed = m;
            break;
        }
    }
    *gpu_copy_bytes = b;
    return parts;
}

/* Makes c's generated key (engine.h "Generated keys") on the engine's CPU threads and checks
 * it has the shape registered at start; for a circuit in runs also its structure (*st, NULL
 * when it cannot be made: its witnesses are then drawn from the seed). Under e->load_mu. */
static cuzk_err generate_key(cuzk_engine *e, const circuit *c, cuzk_pk **out,
                             cuzk_gen_structure **st, cuzk_errbuf *eb)
{
    *st = NULL;
    char desc[160];
    cuzk__generate_desc(c, desc, sizeof desc);
    CUZK_LOG_INFO(TGT, "generating proving key", "circuit=%s generate=%s note=%s", c->id, desc,
                  CUZK_PK_GENERATED_NOTE);
    cuzk_gen_params p = c->gen;
    p.nthreads = e->cfg.prove_threads * e->cfg.partition_workers;
    cuzk_err err = cuzk_pk_generate(out, &p, NULL, eb);
    if (err) {
        char m[CUZK_ERRBUF_SIZE];
        snprintf(m, sizeof m, "%s", eb->msg);
        return cuzk_errf(eb, err, "circuit '%s': generating its key: %s", c->id, m);
    }
    if (cuzk_pk_n_vars(*out) != c->n_vars || cuzk_pk_domain_size(*out) != c->domain_size ||
        cuzk_pk_n_public(*out) != c->n_public) {
        err = cuzk_errf(eb, CUZK_INTERNAL, "circuit '%s': the generated key has %u wires, "
                        "domain %u, %u public; its registered shape was %u, %u, %u", c->id,
                        cuzk_pk_n_vars(*out), cuzk_pk_domain_size(*out), cuzk_pk_n_public(*out),
                        c->n_vars, c->domain_size, c->n_public);
        cuzk_pk_free(*out);
        *out = NULL;
    }
    if (!err && p.segment) {
        double t = cuzk__now_ms();
        cuzk_errbuf seb = {{0}};
        if (cuzk_gen_structure_new(st, &p, &seb))
            CUZK_LOG_WARN(TGT, "generated circuit: its structure not kept (seed witnesses are "
                          "drawn whole)", "circuit=%s error=%s", c->id, seb.msg);
        else
            CUZK_LOG_INFO(TGT, "generated circuit: structure kept for its seed witnesses",
                          "circuit=%s bytes=%" PRIu64 " ms=%.1f", c->id,
                          cuzk_gen_structure_bytes(*st), cuzk__now_ms() - t);
    }
    return err;
}

/* Makes c's key resident. The caller holds c (holders > 0) so nobody evicts it meanwhile.
 * Called without e->mu. */
cuzk_err cuzk__key_ensure(cuzk_engine *e, circuit *c, int *was_loaded, double *ms,
                           cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->load_mu);
    pthread_mutex_lock(&e->mu);
    int loaded = c->pk != NULL;
    pthread_mutex_unlock(&e->mu);
    if (was_loaded)
        *was_loaded = loaded;
    if (ms)
        *ms = 0;
    if (loaded) {
        pthread_mutex_unlock(&e->load_mu);
        return CUZK_OK;
    }
    double t0 = cuzk__now_ms();
    cuzk_pk *pk = NULL;
    cuzk_err err = CUZK_OK;
    char *cpath = NULL;
    const char *source = "zkey";
    cuzk_gen_structure *st = NULL;
    if (c->generated) {
        err = generate_key(e, c, &pk, &st, eb);
        source = "generated";
    } else {
        CUZK_LOG_INFO(TGT, "loading proving key", "circuit=%s zkey=%s", c->id, c->zkey);
        cpath = e->cfg.key_cache ? cuzk_pk_cache_path(c->zkey, e->cfg.key_cache_dir) : NULL;
    }
    if (cpath) {
        cuzk_errbuf ceb = {{0}};
        cuzk_err ce = cuzk_pk_cache_load(&pk, cpath, c->zkey, &ceb);
        if (!ce && (cuzk_pk_curve(pk) != c->curve || cuzk_pk_n_vars(pk) != c->n_vars ||
                    cuzk_pk_domain_size(pk) != c->domain_size ||
                    cuzk_pk_n_public(pk) != c->n_public)) {
            ce = cuzk_errf(&ceb, CUZK_BAD_FORMAT, "%s: the key's shape differs from the zkey's",
                           cpath);
            cuzk_pk_free(pk);
            pk = NULL;
        }
        if (!ce)
            source = "cache";
        else if (ce != CUZK_NOT_FOUND)
            CUZK_LOG_WARN(TGT, "key cache not used: loading the zkey", "circuit=%s error=%s",
                          c->id, ceb.msg);
    }
    cuzk_zkey zk;
    if (!pk && !c->generated && !(err = cuzk_zkey_open(&zk, c->zkey, eb))) {
        /* The file may have changed since start: the jobs were checked against the header
         * read then, so refuse a key whose shape differs. */
        if (zk.curve != c->curve || zk.n_vars != c->n_vars || zk.domain_size != c->domain_size ||
            zk.n_public != c->n_public)
            err = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s changed since the daemon started", c->zkey);
        else
            err = cuzk_pk_load(&pk, &zk, e->cfg.prove_threads * e->cfg.partition_workers, eb);
        cuzk_zkey_close(&zk);
        if (!err && cpath) {
            double tc = cuzk__now_ms();
            cuzk_errbuf ceb = {{0}};
            if (cuzk_pk_cache_save(pk, cpath, c->zkey, &ceb))
                CUZK_LOG_WARN(TGT, "cannot write the key cache", "circuit=%s error=%s", c->id,
                              ceb.msg);
            else
                CUZK_LOG_INFO(TGT, "key cache written", "circuit=%s path=%s ms=%.1f", c->id,
                              cpath, cuzk__now_ms() - tc);
        }
    }
    free(cpath);
    if (!err) {
        /* The cache now on disk (read or just written) is what a later reload would use. */
        uint64_t cbytes = 0;
        int mapped = cuzk__key_cache_valid(e, c, &cbytes);
        uint64_t gpu_copy_bytes;
        unsigned streamed;
        unsigned parts = key_stage_parts(e, c, pk, &gpu_copy_bytes, &streamed);
        pin_new_key(e, c, pk, streamed);
        if (streamed && real_gpus(e) && (set_arrays(streamed) & ~c->pinned_arrays))
            CUZK_LOG_WARN(TGT, "streamed point sets are not page-locked: their copies run "
                          "slower (raise memory.pinned_budget to the streamed sets' size)",
                          "circuit=%s", c->id);
        pthread_mutex_lock(&e->mu);
        uint64_t bytes = cuzk_pk_bytes(pk) + cuzk_gen_structure_bytes(st);
        make_key_room(e, bytes, c);
        c->pk = pk;
        c->gen_structure = st;
        st = NULL;
        c->host_bytes = bytes;
        c->gpu_copy_bytes = gpu_copy_bytes;
        c->stage_parts = parts;
        c->gpu_partition_bytes = cuzk__gpu_partition_bytes(e, c);
        c->gpu_streamed = streamed;
        c->gpu_staged_mask = 0;
        c->mapped = mapped;
        c->cache_bytes = cbytes;
        c->last_used = ++e->lru_tick;
        e->keys_loaded++;
        e->keys_from_cache += source[0] == 'c';
        pthread_mutex_unlock(&e->mu);
        double dt = cuzk__now_ms() - t0;
        if (ms)
            *ms = dt;
        /* Fields are fixed (the logger quotes each value): note is "" for a zkey's key. */
        CUZK_LOG_INFO(TGT, "proving key loaded", "circuit=%s curve=%s n_vars=%u domain=%u "
                      "bytes=%" PRIu64 " source=%s ms=%.1f note=%s", c->id,
                      cuzk_curve_name(c->curve), c->n_vars, c->domain_size, bytes, source, dt,
                      c->generated ? CUZK_PK_GENERATED_NOTE : "");
    }
    pthread_mutex_unlock(&e->load_mu);
    return err;
}

cuzk_err cuzk_engine_preload(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                             double *load_ms, cuzk_errbuf *eb)
{
    pthread_mutex_lock(&e->mu);
    circuit *c = cuzk__engine_find_circuit(e, circuit_id);
    if (!c) {
        pthread_mutex_unlock(&e->mu);
        return cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'", circuit_id);
    }
    c->holders++;
    pthread_mutex_unlock(&e->mu);
    cuzk_err err = cuzk__key_ensure(e, c, was_loaded, load_ms, eb);
    pthread_mutex_lock(&e->mu);
    c->holders--;
    c->last_used = ++e->lru_tick;
    pthread_mutex_unlock(&e->mu);
    return err;
}

cuzk_err cuzk_engine_evict_key(cuzk_engine *e, const char *circuit_id, int *was_loaded,
                               uint64_t *bytes_freed, cuzk_errbuf *eb)
{
    *was_loaded = 0;
    *bytes_freed = 0;
    pthread_mutex_lock(&e->load_mu);
    pthread_mutex_lock(&e->mu);
    circuit *c = cuzk__engine_find_circuit(e, circuit_id);
    cuzk_err err = CUZK_OK;
    cuzk_pk *pk = NULL;
    if (!c) {
        err = cuzk_errf(eb, CUZK_NOT_FOUND, "unknown circuit '%s'", circuit_id);
    } else if (c->holders) {
        err = cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                        "circuit '%s': key held by %u job(s); evict it when they end", c->id,
                        c->holders);
    } else if (c->pk) {
        *was_loaded = 1;
        *bytes_freed = c->host_bytes;
        pk = drop_key(e, c);
    }
    pthread_mutex_unlock(&e->mu);
    if (pk) {
        cuzk_pk_free(pk);
        CUZK_LOG_INFO(TGT, "proving key evicted", "circuit=%s bytes=%" PRIu64, circuit_id,
                      *bytes_freed);
    }
    pthread_mutex_unlock(&e->load_mu);
    return err;
}

/* Device memory kept free of keys and scratch: 5% of the device, at least 512 MiB. */
static uint64_t memory_margin(uint64_t total)
{
    return total / 20 > (512ull << 20) ? total / 20 : (512ull << 20);
}

/* The tier budgets (engine.h "Key residency tiers"), once the devices and circuits are
 * known. */
void cuzk__key_setup_tiers(cuzk_engine *e)
{
    const cuzk_engine_config *c = &e->cfg;
    /* Device scratch of one GPU worker: the largest over the circuits of the backend's own
     * estimate (every MSM, the H step and twiddles; gpu.h cuzk_gpu_scratch_estimate, which
     * gpu_test checks against a context's real scratch), plus fixed buffers. */
    uint64_t scratch = 0;
    for (size_t i = 0; i < e->n_circuits; i++) {
        const circuit *ci = &e->circuits[i];
        uint64_t s = cuzk_gpu_scratch_estimate(gpu_curve(ci), ci->n_vars, ci->domain_size);
        if (s > scratch)
            scratch = s;
    }
    scratch += 64ull << 20;
    /* Automatic GPU workers: two keep a device busy while one uploads, but at 2^26-2^27 two
     * workers' scratch leaves the largest key no room on the device (its sets would stream,
     * or run on the CPU); then one. */
    if (e->gw_auto && real_gpus(e) && (!c->gpu_budget || c->gpu_budget == CUZK_BUDGET_AUTO)) {
        uint64_t keys = 0;
        for (size_t i = 0; i < e->n_circuits; i++) {
            const uint64_t b = plain_points_bytes(e, &e->circuits[i]);
            keys = b > keys ? b : keys;
        }
        for (unsigned d = 0; d < e->n_devices && e->cfg.gpu_workers_per_device > 1; d++) {
            uint64_t fr = 0, tot = 0;
            cuzk_errbuf meb = {{0}};
            if (e->devices[d].disabled || cuzk_gpu_mem_info(e->devices[d].id, &fr, &tot, &meb))
                continue;
            if (fr < memory_margin(tot) + 2 * scratch + keys) {
                e->cfg.gpu_workers_per_device = 1;
                CUZK_LOG_INFO(TGT, "one GPU worker per device (automatic): two workers' scratch "
                              "would leave the largest key no room", "device=%d free=%" PRIu64
                              " worker_scratch_estimate=%" PRIu64 " key_points=%" PRIu64,
                              e->devices[d].id, fr, scratch, keys);
            }
        }
    }
    for (unsigned d = 0; d < e->n_devices; d++) {
        gpu_device *g = &e->devices[d];
        if (c->gpu_budget && c->gpu_budget != CUZK_BUDGET_AUTO) {
            g->key_budget = c->gpu_budget;
        } else if (c->emulated_devices) {
            g->key_budget = UINT64_MAX; /* emulated devices have no memory to run out of */
        } else {
            uint64_t fr = 0, tot = 0;
            cuzk_errbuf meb = {{0}};
            if (!g->disabled && cuzk_gpu_mem_info(g->id, &fr, &tot, &meb) == CUZK_OK) {
                uint64_t margin = memory_margin(tot);
                uint64_t keep = c->gpu_workers_per_device * scratch + margin;
                g->key_budget = fr > keep ? fr - keep : 0;
                g->free_at_start = fr;
                g->memory_margin = margin;
                g->worker_scratch = scratch;
            }
            CUZK_LOG_INFO(TGT, "GPU key budget (automatic)", "device=%d free=%" PRIu64
                          " gpu_budget=%" PRIu64 " worker_scratch_estimate=%" PRIu64, g->id, fr,
                          g->key_budget, scratch);
        }
    }
    e->pinned_budget = 0;
    e->pinned_auto = c->pinned_budget == CUZK_BUDGET_AUTO;
    if (e->n_devices && c->pinned_budget)
        e->pinned_budget = e->pinned_auto ? phys_ram() / 4 : c->pinned_budget;
    if (e->pinned_budget && real_gpus(e)) {
        /* Page-locking needs a CUDA context: the first usable device's. */
        cuzk_errbuf peb = {{0}};
        for (unsigned d = 0; d < e->n_devices && !e->pin_ctx; d++)
            if (!e->devices[d].disabled && cuzk_gpu_open(&e->pin_ctx, e->devices[d].id, &peb))
                e->pin_ctx = NULL;
        if (!e->pin_ctx)
            e->pinned_budget = 0;
    }
}

/* A generated key staged on every usable device (staged: how many took it, of `usable`)
 * gives back the host copies of its resident point sets and of its A and B rows when they
 * are staged (engine.h "Generated keys"): they are never read there again while the copies
 * stay staged, and at 2^27 they are 77 GB (sets) and 19 GB (rows) the partitions' working
 * sets can use. Its streamed sets keep theirs, and so does B2 unless B in G2 always runs on a
 * device. Not with emulated devices, whose stages run on the host copies. */
static int release_emulated;

void cuzk__engine_set_release_emulated(int on)
{
    __atomic_store_n(&release_emulated, on, __ATOMIC_RELAXED);
}

static void release_generated(cuzk_engine *e, circuit *c, unsigned staged, unsigned usable)
{
    if (!c->generated || !c->pk || !usable || staged != usable ||
        !(real_gpus(e) || __atomic_load_n(&release_emulated, __ATOMIC_RELAXED)))
        return;
    /* B2 only when B in G2 always runs on a device (gpus.g2 = "gpu"). */
    unsigned sets = CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_H |
                    ((c->stage_parts & CUZK_PK_STAGE_G2) && e->cfg.g2_on_gpu == 1
                         ? CUZK_PK_SET_B2
                         : 0);
    sets &= ~c->gpu_streamed;
    /* The A and B rows too when they are staged: partitions then synthesize on the GPUs. */
    if (c->stage_parts & CUZK_PK_STAGE_ROWS)
        sets |= CUZK_PK_ROWS;
    if (!sets)
        return;
    pthread_mutex_lock(&e->mu);
    const uint32_t pinned =
        c->pinned_arrays & (set_arrays(sets) | ((sets & CUZK_PK_ROWS) ? ROW_ARRAYS : 0));
    if (pinned) {
        const uint64_t pb = pin_size(c->pk, pinned);
        cuzk__key_pin_arrays(e, c->pk, 0, pinned, NULL);
        c->pinned_arrays &= ~pinned;
        c->pinned_bytes -= pb;
        e->pinned_bytes -= pb;
    }
    const uint64_t freed = cuzk_pk_release_host_sets(c->pk, sets);
    c->host_bytes -= freed;
    pthread_mutex_unlock(&e->mu);
    char names[32];
    cuzk_pk_set_names(sets, names, sizeof names);
    CUZK_LOG_INFO(TGT, "generated key: host copies of its staged point sets and rows "
                  "released (they live on the GPUs; no CPU fallback for them)",
                  "circuit=%s sets=%s bytes=%" PRIu64 " host_bytes=%" PRIu64, c->id, names,
                  freed, c->host_bytes);
}

/* Stages a preloaded key's points on every device at start, so the first proof does not pay
 * for the upload, if it fits beside the keys staged before it (no unstaging at start: the first
 * preloaded keys keep their places). A device that fails here is left to the per-proof path
 * (which retries elsewhere and counts the fault). */
void cuzk__key_stage_preloaded(cuzk_engine *e, circuit *c)
{
    unsigned staged = 0, usable = 0;
    for (unsigned d = 0; d < e->n_devices; d++) {
        gpu_device *g = &e->devices[d];
        if (g->disabled)
            continue;
        usable++;
        pthread_mutex_lock(&e->mu);
        int fits = g->key_bytes + c->gpu_copy_bytes <= g->key_budget, upload = 0;
        if (fits)
            cuzk__key_gpu_reserve(e, c, d, &upload);
        pthread_mutex_unlock(&e->mu);
        if (!fits) {
            CUZK_LOG_INFO(TGT, "key not staged: the GPU budget is full", "circuit=%s "
                          "device=%d bytes=%" PRIu64 " staged=%" PRIu64 " gpu_budget=%"
                          PRIu64, c->id, g->id, c->gpu_copy_bytes, g->key_bytes, g->key_budget);
            continue;
        }
        if (!upload || e->cfg.emulated_devices) {
            staged++; /* staged before, or an emulated device's reservation */
            continue;
        }
        cuzk_errbuf geb;
        double t = cuzk__now_ms();
        if (cuzk_pk_gpu_stage_streamed(c->pk, g->id, c->stage_parts, c->gpu_streamed,
                                       e->cfg.gpu_stream_chunk, &geb)) {
            CUZK_LOG_WARN(TGT, "cannot stage the key on the GPU", "circuit=%s device=%d "
                          "error=%s", c->id, g->id, geb.msg);
        } else {
            cuzk__key_log_staged(c, g->id, cuzk__now_ms() - t);
            staged++;
        }
    }
    release_generated(e, c, staged, usable);
}
