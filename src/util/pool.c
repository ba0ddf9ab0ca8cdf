/* Memory budget (reserve before allocating) and a budgeted slab pool; see cuzk/pool.h. */
#define _GNU_SOURCE
#include "cuzk/pool.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static const char *const cuzk__owner_names[CUZK_OWNER__COUNT] = {
    "witness", "abc", "h", "msm_scratch", "srs_host", "pinned", "pool_idle", "other",
};

const char *cuzk_owner_name(cuzk_owner o)
{
    return (unsigned)o < CUZK_OWNER__COUNT ? cuzk__owner_names[o] : "unknown";
}

/* "12.0 GiB (12884901888 bytes)" style, for messages. */
static const char *fmt_bytes(char *buf, size_t n, uint64_t v)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double x = (double)v;
    int i = 0;
    while (x >= 1024 && i < 6) {
        x /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)v);
    else
        snprintf(buf, n, "%.1f %s (%llu bytes)", x, u[i], (unsigned long long)v);
    return buf;
}

/* ------------------------------------------------------------------ budget */

#define CUZK__MAX_RECLAIMERS 8
/* Waiters re-check their cancel flag at least this often even without a wake-up. */
#define CUZK__CANCEL_POLL_NS 50000000LL

typedef struct waiter {
    struct waiter *next;
    uint64_t bytes;
} waiter;

struct cuzk_budget {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char name[64];
    cuzk_budget_snapshot s; /* counters, guarded by mu */
    waiter *head, *tail;    /* FIFO of blocked reservations */
    struct {
        cuzk_budget_reclaim_fn fn;
        void *ctx;
    } rec[CUZK__MAX_RECLAIMERS];
    int nrec;
    int reclaiming; /* reclaimer calls in progress (remove waits for 0) */
};

cuzk_err cuzk_budget_new(cuzk_budget **out, const char *name, uint64_t limit, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_budget *b = cuzk_calloc(1, sizeof *b);
    if (!b)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory creating budget '%s'",
                         name ? name : "");
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    /* Timeouts measured on the monotonic clock: wall-clock steps must not cut waits short. */
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&b->mu, NULL);
    snprintf(b->name, sizeof b->name, "%s", name ? name : "memory");
    b->s.limit = limit;
    *out = b;
    return CUZK_OK;
}

void cuzk_budget_free(cuzk_budget *b)
{
    if (!b)
        return;
    assert(b->head == NULL);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    cuzk_free(b);
}

static void charge(cuzk_budget *b, cuzk_owner o, uint64_t bytes)
{
    b->s.in_use += bytes;
    if (b->s.in_use > b->s.peak)
        b->s.peak = b->s.in_use;
    b->s.owner[o].in_use += bytes;
    if (b->s.owner[o].in_use > b->s.owner[o].peak)
        b->s.owner[o].peak = b->s.owner[o].in_use;
    b->s.reserves++;
}

static void dequeue(cuzk_budget *b, waiter *w)
{
    waiter **pp = &b->head, *prev = NULL;
    while (*pp && *pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = w->next;
        if (b->tail == w)
            b->tail = prev;
    }
    b->s.waiting--;
    b->s.waiting_bytes -= w->bytes;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Calls the reclaimers without the lock; returns with the lock held again. */
static void run_reclaimers(cuzk_budget *b, uint64_t missing)
{
    int n = b->nrec;
    struct {
        cuzk_budget_reclaim_fn fn;
        void *ctx;
    } rec[CUZK__MAX_RECLAIMERS];
    memcpy(rec, b->rec, sizeof rec);
    b->reclaiming++;
    pthread_mutex_unlock(&b->mu);
    for (int i = 0; i < n; i++)
        rec[i].fn(rec[i].ctx, missing);
    pthread_mutex_lock(&b->mu);
    if (--b->reclaiming == 0)
        pthread_cond_broadcast(&b->cv);
}

static cuzk_err out_of_budget(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, bool whole,
                              cuzk_errbuf *eb)
{
    char x[64], y[64], z[64];
    b->s.failures++;
    if (whole)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "%s budget: %s request of %s is larger than the whole budget of %s",
                         b->name, cuzk_owner_name(owner), fmt_bytes(x, sizeof x, bytes),
                         fmt_bytes(y, sizeof y, b->s.limit));
    return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                     "%s budget: %s request of %s does not fit now (%s of %s in use)", b->name,
                     cuzk_owner_name(owner), fmt_bytes(x, sizeof x, bytes),
                     fmt_bytes(y, sizeof y, b->s.in_use), fmt_bytes(z, sizeof z, b->s.limit));
}

static cuzk_err reserve(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, int64_t timeout_ns,
                        const int *cancel, bool first, cuzk_errbuf *eb)
{
    if ((unsigned)owner >= CUZK_OWNER__COUNT)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "budget: bad owner tag %d", (int)owner);
    if (bytes == 0)
        return CUZK_OK;
    pthread_mutex_lock(&b->mu);
    if (bytes > b->s.limit) {
        cuzk_err e = out_of_budget(b, owner, bytes, true, eb);
        pthread_mutex_unlock(&b->mu);
        return e;
    }
    if ((first || !b->head) && b->s.limit - b->s.in_use >= bytes) {
        charge(b, owner, bytes);
        pthread_mutex_unlock(&b->mu);
        return CUZK_OK;
    }
    if (timeout_ns == 0 && b->nrec == 0) {
        cuzk_err e = out_of_budget(b, owner, bytes, false, eb);
        pthread_mutex_unlock(&b->mu);
        return e;
    }
    /* Queue up. Only the head may take memory, so grants are first come, first served. */
    waiter w = {NULL, bytes};
    if (first) {
        w.next = b->head;
        b->head = &w;
        if (!b->tail)
            b->tail = &w;
    } else {
        if (b->tail)
            b->tail->next = &w;
        else
            b->head = &w;
        b->tail = &w;
    }
    b->s.waiting++;
    b->s.waiting_bytes += bytes;
    int64_t deadline = timeout_ns > 0 ? mono_ns() + timeout_ns : 0;
    bool counted_wait = false, reclaimed = false;
    cuzk_err e = CUZK_OK;
    for (;;) {
        if (b->head == &w && b->s.limit - b->s.in_use >= bytes) {
            charge(b, owner, bytes);
            dequeue(b, &w);
            /* The next in line may fit too. */
            pthread_cond_broadcast(&b->cv);
            break;
        }
        if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)) {
            b->s.failures++;
            e = cuzk_errf(eb, CUZK_CANCELLED,
                          "%s budget: %s reservation cancelled while "
                          "waiting",
                          b->name, cuzk_owner_name(owner));
            dequeue(b, &w);
            pthread_cond_broadcast(&b->cv);
            break;
        }
        if (b->head == &w && b->nrec && !reclaimed) {
            /* Free cached memory (idle pool slabs) before waiting on other users. */
            reclaimed = true;
            run_reclaimers(b, bytes - (b->s.limit - b->s.in_use));
            continue;
        }
        int64_t now = mono_ns();
        if (timeout_ns == 0 || (timeout_ns > 0 && now >= deadline)) {
            if (timeout_ns == 0) {
                e = out_of_budget(b, owner, bytes, false, eb);
            } else {
                char x[64], y[64], z[64];
                b->s.failures++;
                e = cuzk_errf(eb, CUZK_TIMEOUT,
                              "%s budget: %s request of %s still did not fit after %.3f s "
                              "(%s of %s in use)",
                              b->name, cuzk_owner_name(owner), fmt_bytes(x, sizeof x, bytes),
                              (double)timeout_ns / 1e9, fmt_bytes(y, sizeof y, b->s.in_use),
                              fmt_bytes(z, sizeof z, b->s.limit));
            }
            dequeue(b, &w);
            pthread_cond_broadcast(&b->cv);
            break;
        }
        if (!counted_wait) {
            b->s.waits++;
            counted_wait = true;
        }
        int64_t until = now + CUZK__CANCEL_POLL_NS;
        if (timeout_ns > 0 && deadline < until)
            until = deadline;
        struct timespec ts = {(time_t)(until / 1000000000LL), (long)(until % 1000000000LL)};
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
        reclaimed = false;
    }
    pthread_mutex_unlock(&b->mu);
    return e;
}

cuzk_err cuzk_budget_reserve(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, int64_t timeout_ns,
                             const int *cancel, cuzk_errbuf *eb)
{
    return reserve(b, owner, bytes, timeout_ns, cancel, false, eb);
}

cuzk_err cuzk_budget_reserve_first(cuzk_budget *b, cuzk_owner owner, uint64_t bytes,
                                   const int *cancel, cuzk_errbuf *eb)
{
    return reserve(b, owner, bytes, -1, cancel, true, eb);
}

void cuzk_budget_set_limit(cuzk_budget *b, uint64_t limit)
{
    pthread_mutex_lock(&b->mu);
    b->s.limit = limit;
    if (b->head)
        pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

cuzk_err cuzk_budget_try_reserve(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, cuzk_errbuf *eb)
{
    return cuzk_budget_reserve(b, owner, bytes, 0, NULL, eb);
}

void cuzk_budget_release(cuzk_budget *b, cuzk_owner owner, uint64_t bytes)
{
    if (bytes == 0 || (unsigned)owner >= CUZK_OWNER__COUNT)
        return;
    pthread_mutex_lock(&b->mu);
    /* Releasing more than was reserved is a caller bug; clamp so accounting stays sane. */
    assert(b->s.owner[owner].in_use >= bytes);
    if (bytes > b->s.owner[owner].in_use)
        bytes = b->s.owner[owner].in_use;
    b->s.owner[owner].in_use -= bytes;
    b->s.in_use -= bytes;
    if (b->head)
        pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void cuzk_budget_transfer(cuzk_budget *b, cuzk_owner from, cuzk_owner to, uint64_t bytes)
{
    if ((unsigned)from >= CUZK_OWNER__COUNT || (unsigned)to >= CUZK_OWNER__COUNT)
        return;
    pthread_mutex_lock(&b->mu);
    assert(b->s.owner[from].in_use >= bytes);
    if (bytes > b->s.owner[from].in_use)
        bytes = b->s.owner[from].in_use;
    b->s.owner[from].in_use -= bytes;
    b->s.owner[to].in_use += bytes;
    if (b->s.owner[to].in_use > b->s.owner[to].peak)
        b->s.owner[to].peak = b->s.owner[to].in_use;
    pthread_mutex_unlock(&b->mu);
}

void cuzk_budget_wake(cuzk_budget *b)
{
    pthread_mutex_lock(&b->mu);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void cuzk_budget_get_snapshot(cuzk_budget *b, cuzk_budget_snapshot *out)
{
    pthread_mutex_lock(&b->mu);
    *out = b->s;
    pthread_mutex_unlock(&b->mu);
}

uint64_t cuzk_budget_waiters(cuzk_budget *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t n = b->s.waiting;
    pthread_mutex_unlock(&b->mu);
    return n;
}

cuzk_err cuzk_budget_add_reclaimer(cuzk_budget *b, cuzk_budget_reclaim_fn fn, void *ctx,
                                   cuzk_errbuf *eb)
{
    pthread_mutex_lock(&b->mu);
    if (b->nrec == CUZK__MAX_RECLAIMERS) {
        pthread_mutex_unlock(&b->mu);
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s budget: more than %d reclaimers", b->name,
                         CUZK__MAX_RECLAIMERS);
    }
    b->rec[b->nrec].fn = fn;
    b->rec[b->nrec].ctx = ctx;
    b->nrec++;
    pthread_mutex_unlock(&b->mu);
    return CUZK_OK;
}

void cuzk_budget_remove_reclaimer(cuzk_budget *b, cuzk_budget_reclaim_fn fn, void *ctx)
{
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->nrec; i++) {
        if (b->rec[i].fn == fn && b->rec[i].ctx == ctx) {
            memmove(&b->rec[i], &b->rec[i + 1], (size_t)(b->nrec - i - 1) * sizeof b->rec[0]);
            b->nrec--;
            break;
        }
    }
    /* A reserve may be running the old list right now: wait until it is done with ctx. */
    while (b->reclaiming > 0)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

/* ------------------------------------------------------------------ slab pool */

/* Size classes: 64 KiB, then 4 steps per power of two (2^k * {1.25, 1.5, 1.75, 2}) up to
 * 2^48 bytes. Every class size is a multiple of 16 KiB, hence of the page size. */
#define CUZK__MIN_CLASS_LOG 16
#define CUZK__MAX_CLASS_LOG 48
#define CUZK__NCLASSES (4 * (CUZK__MAX_CLASS_LOG - CUZK__MIN_CLASS_LOG) + 1)

static int class_of(size_t bytes, size_t *size)
{
    if (bytes <= ((size_t)1 << CUZK__MIN_CLASS_LOG)) {
        *size = (size_t)1 << CUZK__MIN_CLASS_LOG;
        return 0;
    }
    if (bytes > ((size_t)1 << CUZK__MAX_CLASS_LOG))
        return -1;
    int k = 63 - __builtin_clzll((unsigned long long)(bytes - 1)); /* 2^k < bytes <= 2^(k+1) */
    size_t base = (size_t)1 << k, q = base >> 2;
    size_t step = (bytes - base + q - 1) / q; /* 1..4 */
    *size = base + step * q;
    return 4 * (k - CUZK__MIN_CLASS_LOG) + (int)step;
}

size_t cuzk_pool_class_size(size_t bytes)
{
    size_t s;
    return class_of(bytes, &s) < 0 ? 0 : s;
}

struct cuzk_pool {
    pthread_mutex_t mu;
    cuzk_budget *budget;
    cuzk_pool_hooks hooks;
    bool has_hooks;
    cuzk_slab *free_list[CUZK__NCLASSES];
    cuzk_pool_stats st;
};

static void slab_unmap(cuzk_pool *p, cuzk_slab *s)
{
    if (p->has_hooks && p->hooks.on_unmap)
        p->hooks.on_unmap(p->hooks.ctx, s->data, s->size);
    munmap(s->data, s->size);
    cuzk_free(s);
}

/* Unmaps idle slabs, largest classes first, until `want` bytes are freed or none are idle;
 * releases their charge. Returns the bytes freed. Called with p->mu held. */
static uint64_t trim_locked(cuzk_pool *p, uint64_t want)
{
    uint64_t freed = 0;
    for (int c = CUZK__NCLASSES - 1; c >= 0 && freed < want; c--) {
        while (p->free_list[c] && freed < want) {
            cuzk_slab *s = p->free_list[c];
            p->free_list[c] = s->next;
            p->st.slabs_idle--;
            p->st.bytes_idle -= s->size;
            p->st.unmapped++;
            size_t size = s->size;
            freed += size;
            slab_unmap(p, s);
            cuzk_budget_release(p->budget, CUZK_OWNER_POOL_IDLE, size);
        }
    }
    return freed;
}

static void pool_reclaim(void *ctx, uint64_t bytes_needed)
{
    cuzk_pool *p = ctx;
    pthread_mutex_lock(&p->mu);
    trim_locked(p, bytes_needed);
    pthread_mutex_unlock(&p->mu);
}

cuzk_err cuzk_pool_new(cuzk_pool **out, cuzk_budget *b, const cuzk_pool_hooks *hooks,
                       cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_pool *p = cuzk_calloc(1, sizeof *p);
    if (!p)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory creating a pool");
    pthread_mutex_init(&p->mu, NULL);
    p->budget = b;
    if (hooks) {
        p->hooks = *hooks;
        p->has_hooks = true;
    }
    cuzk_err e = cuzk_budget_add_reclaimer(b, pool_reclaim, p, eb);
    if (e) {
        pthread_mutex_destroy(&p->mu);
        cuzk_free(p);
        return e;
    }
    *out = p;
    return CUZK_OK;
}

void cuzk_pool_free(cuzk_pool *p)
{
    if (!p)
        return;
    cuzk_budget_remove_reclaimer(p->budget, pool_reclaim, p);
    pthread_mutex_lock(&p->mu);
    assert(p->st.slabs_live == 0);
    trim_locked(p, UINT64_MAX);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_destroy(&p->mu);
    cuzk_free(p);
}

cuzk_err cuzk_pool_acquire(cuzk_pool *p, cuzk_owner owner, size_t bytes, int64_t timeout_ns,
                           const int *cancel, cuzk_slab **out, cuzk_errbuf *eb)
{
    *out = NULL;
    size_t size;
    int cls = bytes ? class_of(bytes, &size) : -1;
    if (cls < 0)
        return cuzk_errf(eb, bytes ? CUZK_OUT_OF_BUDGET : CUZK_INVALID_ARGUMENT,
                         "pool: cannot hand out a buffer of %zu bytes", bytes);
    if ((unsigned)owner >= CUZK_OWNER__COUNT || owner == CUZK_OWNER_POOL_IDLE)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "pool: bad owner tag %d", (int)owner);

    pthread_mutex_lock(&p->mu);
    cuzk_slab *s = p->free_list[cls];
    if (s) {
        p->free_list[cls] = s->next;
        p->st.slabs_idle--;
        p->st.bytes_idle -= s->size;
        p->st.slabs_live++;
        p->st.bytes_live += s->size;
        p->st.hits++;
        pthread_mutex_unlock(&p->mu);
        /* The bytes stay charged to the budget; only their owner changes. */
        cuzk_budget_transfer(p->budget, CUZK_OWNER_POOL_IDLE, owner, s->size);
        s->owner = owner;
        s->next = NULL;
        *out = s;
        return CUZK_OK;
    }
    pthread_mutex_unlock(&p->mu);

    cuzk_err e = cuzk_budget_reserve(p->budget, owner, size, timeout_ns, cancel, eb);
    if (e)
        return e;
    s = cuzk_calloc(1, sizeof *s);
    void *data = s ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                   : MAP_FAILED;
    if (data == MAP_FAILED) {
        int err = errno;
        cuzk_free(s);
        cuzk_budget_release(p->budget, owner, size);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "pool: cannot map %zu bytes for %s: %s", size,
                         cuzk_owner_name(owner), s ? strerror(err) : "out of memory");
    }
    if (p->has_hooks && p->hooks.on_map &&
        (e = p->hooks.on_map(p->hooks.ctx, data, size, eb)) != CUZK_OK) {
        munmap(data, size);
        cuzk_free(s);
        cuzk_budget_release(p->budget, owner, size);
        return e;
    }
    s->data = data;
    s->size = size;
    s->owner = owner;
    s->cls = (unsigned)cls;
    pthread_mutex_lock(&p->mu);
    p->st.slabs_live++;
    p->st.bytes_live += size;
    p->st.misses++;
    pthread_mutex_unlock(&p->mu);
    *out = s;
    return CUZK_OK;
}

void cuzk_pool_release(cuzk_pool *p, cuzk_slab *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&p->mu);
    p->st.slabs_live--;
    p->st.bytes_live -= s->size;
    if (cuzk_budget_waiters(p->budget) > 0) {
        /* Someone is waiting for memory: give it back instead of caching it. */
        cuzk_owner o = s->owner;
        size_t size = s->size;
        p->st.unmapped++;
        pthread_mutex_unlock(&p->mu);
        /* Unmap before releasing the charge so real memory never exceeds the budget. */
        slab_unmap(p, s);
        cuzk_budget_release(p->budget, o, size);
        return;
    }
    cuzk_budget_transfer(p->budget, s->owner, CUZK_OWNER_POOL_IDLE, s->size);
    s->next = p->free_list[s->cls];
    p->free_list[s->cls] = s;
    p->st.slabs_idle++;
    p->st.bytes_idle += s->size;
    pthread_mutex_unlock(&p->mu);
}

uint64_t cuzk_pool_trim(cuzk_pool *p, uint64_t keep_bytes)
{
    pthread_mutex_lock(&p->mu);
    uint64_t excess = p->st.bytes_idle > keep_bytes ? p->st.bytes_idle - keep_bytes : 0;
    uint64_t freed = excess ? trim_locked(p, excess) : 0;
    pthread_mutex_unlock(&p->mu);
    return freed;
}

void cuzk_pool_get_stats(cuzk_pool *p, cuzk_pool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    pthread_mutex_unlock(&p->mu);
}
