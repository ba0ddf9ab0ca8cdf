/* Budget and slab pool: limits are never exceeded under concurrency, blocking reserves wake
 * on release, timeout and cancel work, FIFO order holds, slabs are reused and the peak stays
 * flat, idle slabs are reclaimed under pressure; plus the small-allocation counters. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/pool.h"
#include "testutil.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_budget_basic(void)
{
    cuzk_budget *b;
    cuzk_errbuf eb;
    CHECK(cuzk_budget_new(&b, "working", 1000, &eb) == CUZK_OK);
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_WITNESS, 300, -1, NULL, &eb) == CUZK_OK);
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_ABC, 500, &eb) == CUZK_OK);
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_ABC, 201, &eb) == CUZK_OUT_OF_BUDGET);
    CHECK_MSG(strstr(eb.msg, "working budget: abc request of 201 B does not fit now (800 B of "
                             "1000 B in use)") != NULL,
              "%s", eb.msg);
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_ABC, 200, &eb) == CUZK_OK);
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_ABC, 0, &eb) == CUZK_OK);
    cuzk_budget_snapshot s;
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.limit == 1000 && s.in_use == 1000 && s.peak == 1000);
    CHECK(s.owner[CUZK_OWNER_WITNESS].in_use == 300 && s.owner[CUZK_OWNER_ABC].in_use == 700);
    cuzk_budget_release(b, CUZK_OWNER_ABC, 700);
    cuzk_budget_transfer(b, CUZK_OWNER_WITNESS, CUZK_OWNER_MSM_SCRATCH, 100);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 300 && s.peak == 1000);
    CHECK(s.owner[CUZK_OWNER_ABC].in_use == 0 && s.owner[CUZK_OWNER_ABC].peak == 700);
    CHECK(s.owner[CUZK_OWNER_WITNESS].in_use == 200 && s.owner[CUZK_OWNER_WITNESS].peak == 300);
    CHECK(s.owner[CUZK_OWNER_MSM_SCRATCH].in_use == 100);
    CHECK(s.failures == 1 && s.reserves == 3);

    /* larger than the whole budget: fails at once even with an unlimited wait */
    double t0 = now_s();
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_SRS_HOST, 1001, -1, NULL, &eb) == CUZK_OUT_OF_BUDGET);
    CHECK(now_s() - t0 < 0.5);
    CHECK_MSG(strcmp(eb.msg, "working budget: srs_host request of 1001 B is larger than the "
                             "whole budget of 1000 B") == 0,
              "%s", eb.msg);
    CHECK(cuzk_budget_reserve(b, (cuzk_owner)99, 1, -1, NULL, &eb) == CUZK_INVALID_ARGUMENT);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 200);
    cuzk_budget_release(b, CUZK_OWNER_MSM_SCRATCH, 100);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 0);
    for (int o = 0; o < CUZK_OWNER__COUNT; o++)
        CHECK(s.owner[o].in_use == 0);
    CHECK(strcmp(cuzk_owner_name(CUZK_OWNER_MSM_SCRATCH), "msm_scratch") == 0);
    cuzk_budget_free(b);

    /* sizes in messages are human readable and exact */
    CHECK(cuzk_budget_new(&b, "pinned", 8ull << 30, &eb) == CUZK_OK);
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_PINNED, 12ull << 30, -1, NULL, &eb) ==
          CUZK_OUT_OF_BUDGET);
    CHECK_MSG(strcmp(eb.msg, "pinned budget: pinned request of 12.0 GiB (12884901888 bytes) is "
                             "larger than the whole budget of 8.0 GiB (8589934592 bytes)") == 0,
              "%s", eb.msg);
    cuzk_budget_free(b);
}

/* ---- concurrency: in-use as seen by the users themselves never exceeds the limit */
#define LIMIT 1000
static cuzk_budget *g_b;
static long g_inuse, g_max_inuse;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void *hammer(void *arg)
{
    uint64_t seed = (uint64_t)(long)arg * 0x9e3779b97f4a7c15ULL + 1;
    cuzk_errbuf eb;
    for (int i = 0; i < 3000; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        uint64_t n = 1 + seed % (LIMIT / 3);
        cuzk_owner o = (cuzk_owner)(seed >> 40) % CUZK_OWNER_POOL_IDLE;
        if (cuzk_budget_reserve(g_b, o, n, -1, NULL, &eb) != CUZK_OK) {
            CHECK_MSG(0, "reserve failed: %s", eb.msg);
            continue;
        }
        pthread_mutex_lock(&g_mu);
        g_inuse += (long)n;
        if (g_inuse > g_max_inuse)
            g_max_inuse = g_inuse;
        pthread_mutex_unlock(&g_mu);
        if (i % 7 == 0)
            sched_yield();
        pthread_mutex_lock(&g_mu);
        g_inuse -= (long)n;
        pthread_mutex_unlock(&g_mu);
        cuzk_budget_release(g_b, o, n);
    }
    return NULL;
}

static void test_budget_concurrent(void)
{
    cuzk_errbuf eb;
    CHECK(cuzk_budget_new(&g_b, "working", LIMIT, &eb) == CUZK_OK);
    /* Pressure by construction, not by scheduling luck (on a loaded 2-core machine the
     * threads can run one after another): the whole budget is held until a thread is seen
     * waiting for it. */
    CHECK(cuzk_budget_reserve(g_b, CUZK_OWNER_WITNESS, LIMIT, -1, NULL, &eb) == CUZK_OK);
    pthread_t th[8];
    for (long t = 0; t < 8; t++)
        pthread_create(&th[t], NULL, hammer, (void *)t);
    cuzk_budget_snapshot s;
    for (int i = 0; i < 10000; i++) { /* at most ~10 s */
        cuzk_budget_get_snapshot(g_b, &s);
        if (s.waiting > 0)
            break;
        usleep(1000);
    }
    CHECK_MSG(s.waiting > 0, "no thread waited for the held budget within 10 s");
    cuzk_budget_release(g_b, CUZK_OWNER_WITNESS, LIMIT);
    for (int t = 0; t < 8; t++)
        pthread_join(th[t], NULL);
    cuzk_budget_get_snapshot(g_b, &s);
    CHECK_MSG(g_max_inuse <= LIMIT && g_max_inuse > LIMIT / 2, "max in use %ld", g_max_inuse);
    CHECK(s.peak <= LIMIT && s.in_use == 0 && s.waiting == 0 && s.reserves == 8 * 3000 + 1);
    CHECK_MSG(s.waits > 0, "no reservation ever waited: the test did not create pressure");
    cuzk_budget_free(g_b);
}

/* ---- blocking, timeout, cancel, FIFO */
typedef struct {
    cuzk_budget *b;
    uint64_t bytes;
    int64_t timeout_ns;
    const int *cancel;
    cuzk_err result;
    double done_at;
    int done;
} req;

static void *reserver(void *arg)
{
    req *r = arg;
    cuzk_errbuf eb;
    r->result = cuzk_budget_reserve(r->b, CUZK_OWNER_ABC, r->bytes, r->timeout_ns, r->cancel, &eb);
    r->done_at = now_s();
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *reserver_first(void *arg)
{
    req *r = arg;
    cuzk_errbuf eb;
    r->result = cuzk_budget_reserve_first(r->b, CUZK_OWNER_ABC, r->bytes, r->cancel, &eb);
    r->done_at = now_s();
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int is_done(req *r)
{
    return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

static void wait_waiters(cuzk_budget *b, uint64_t n)
{
    for (int i = 0; i < 2000 && cuzk_budget_waiters(b) < n; i++)
        sleep_ms(1);
}

static void test_budget_blocking(void)
{
    cuzk_budget *b;
    cuzk_errbuf eb;
    cuzk_budget_snapshot s;
    CHECK(cuzk_budget_new(&b, "working", 100, &eb) == CUZK_OK);
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_WITNESS, 100, -1, NULL, &eb) == CUZK_OK);

    /* a blocked reserve wakes when enough memory is released, not before */
    req r = {b, 60, -1, NULL, -1, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, reserver, &r);
    wait_waiters(b, 1);
    sleep_ms(50);
    CHECK(!is_done(&r) && cuzk_budget_waiters(b) == 1);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 50); /* 50 free: still not enough */
    sleep_ms(50);
    CHECK(!is_done(&r));
    double t_rel = now_s();
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 10); /* 60 free */
    pthread_join(th, NULL);
    CHECK(r.result == CUZK_OK && r.done_at - t_rel < 10.0);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 100 && s.owner[CUZK_OWNER_ABC].in_use == 60 && s.waits == 1);

    /* timeout: budget full, nobody releases */
    req t = {b, 10, 100000000LL, NULL, -1, 0, 0};
    double t0 = now_s();
    pthread_create(&th, NULL, reserver, &t);
    pthread_join(th, NULL);
    double el = t.done_at - t0;
    CHECK_MSG(t.result == CUZK_TIMEOUT && el >= 0.099 && el < 10.0, "result %d after %.3f s",
              t.result, el);
    CHECK(cuzk_budget_waiters(b) == 0);

    /* cancel with an explicit wake-up */
    int flag = 0;
    req c = {b, 10, -1, &flag, -1, 0, 0};
    pthread_create(&th, NULL, reserver, &c);
    wait_waiters(b, 1);
    sleep_ms(20);
    CHECK(!is_done(&c));
    t0 = now_s();
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    cuzk_budget_wake(b);
    pthread_join(th, NULL);
    CHECK_MSG(c.result == CUZK_CANCELLED && c.done_at - t0 < 5.0, "result %d after %.3f s",
              c.result, c.done_at - t0);

    /* cancel noticed by polling, without a wake-up */
    flag = 0;
    req c2 = {b, 10, -1, &flag, -1, 0, 0};
    pthread_create(&th, NULL, reserver, &c2);
    wait_waiters(b, 1);
    t0 = now_s();
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK_MSG(c2.result == CUZK_CANCELLED && c2.done_at - t0 < 10.0, "result %d after %.3f s",
              c2.result, c2.done_at - t0);
    /* a set flag does not stop a reservation that fits at once */
    cuzk_budget_release(b, CUZK_OWNER_ABC, 60);
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_ABC, 10, -1, &flag, &eb) == CUZK_OK);
    cuzk_budget_release(b, CUZK_OWNER_ABC, 10);

    /* FIFO: a big request queued first is not overtaken by small ones that would fit */
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 40); /* witness */
    req big = {b, 90, -1, NULL, -1, 0, 0}, small = {b, 10, -1, NULL, -1, 0, 0};
    pthread_t tb, ts;
    pthread_create(&tb, NULL, reserver, &big);
    wait_waiters(b, 1);
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_ABC, 10, &eb) == CUZK_OUT_OF_BUDGET);
    pthread_create(&ts, NULL, reserver, &small);
    wait_waiters(b, 2);
    sleep_ms(30);
    CHECK(!is_done(&big) && !is_done(&small));
    /* 90 free: exactly the big one fits. With FIFO it is granted and the small one keeps
     * waiting; a small request overtaking it would leave the big one blocked instead. */
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 30);
    pthread_join(tb, NULL);
    CHECK_MSG(big.result == CUZK_OK, "the big request was not granted first");
    wait_waiters(b, 1);
    CHECK(!is_done(&small) && cuzk_budget_waiters(b) == 1);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 10); /* 10 free: now the small one */
    pthread_join(ts, NULL);
    CHECK(small.result == CUZK_OK);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 100 && s.peak == 100);
    cuzk_budget_release(b, CUZK_OWNER_ABC, 100);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 0 && s.waiting == 0 && s.waiting_bytes == 0);

    /* reserve_first goes ahead of a queued request: with 30 free it is granted while the
     * request queued before it (50) keeps waiting; then that one is granted in turn. */
    CHECK(cuzk_budget_reserve(b, CUZK_OWNER_WITNESS, 100, -1, NULL, &eb) == CUZK_OK);
    req queued = {b, 50, -1, NULL, -1, 0, 0}, ahead = {b, 30, -1, NULL, -1, 0, 0};
    pthread_create(&tb, NULL, reserver, &queued);
    wait_waiters(b, 1);
    pthread_create(&ts, NULL, reserver_first, &ahead);
    wait_waiters(b, 2);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 30);
    pthread_join(ts, NULL);
    CHECK_MSG(ahead.result == CUZK_OK, "reserve_first was not granted ahead of the queue");
    sleep_ms(30);
    CHECK(!is_done(&queued) && cuzk_budget_waiters(b) == 1);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 50);
    pthread_join(tb, NULL);
    CHECK(queued.result == CUZK_OK);
    cuzk_budget_release(b, CUZK_OWNER_ABC, 80);
    cuzk_budget_release(b, CUZK_OWNER_WITNESS, 20);
    cuzk_budget_get_snapshot(b, &s);
    CHECK(s.in_use == 0 && s.waiting == 0);
    cuzk_budget_free(b);
}

/* ---- pool */
static int maps, unmaps, fail_map;
static cuzk_err on_map(void *ctx, void *data, size_t size, cuzk_errbuf *eb)
{
    (void)ctx;
    (void)data;
    if (fail_map)
        return cuzk_errf(eb, CUZK_GPU_FAULT, "cannot pin %zu bytes", size);
    maps++;
    return CUZK_OK;
}
static void on_unmap(void *ctx, void *data, size_t size)
{
    (void)ctx;
    (void)data;
    (void)size;
    unmaps++;
}

static void test_classes(void)
{
    CHECK(cuzk_pool_class_size(1) == 65536);
    CHECK(cuzk_pool_class_size(65536) == 65536);
    CHECK(cuzk_pool_class_size(65537) == 81920);
    CHECK(cuzk_pool_class_size(1 << 20) == 1 << 20);
    CHECK(cuzk_pool_class_size((1 << 20) + 1) == (1 << 20) + (1 << 18));
    CHECK(cuzk_pool_class_size(3 << 20) == 3 << 20);
    CHECK(cuzk_pool_class_size(100000) == 114688); /* 64 KiB + 3 x 16 KiB */
    CHECK(cuzk_pool_class_size(950000) == 1 << 20);
    CHECK(cuzk_pool_class_size(1ull << 48) == 1ull << 48);
    CHECK(cuzk_pool_class_size((1ull << 48) + 1) == 0);
    for (int i = 0; i < 20000; i++) {
        size_t n = 1 + (size_t)(tu_rand64() >> (tu_rand64() % 30 + 24));
        size_t c = cuzk_pool_class_size(n);
        /* covers the request, page multiple, at most 25% rounding above 64 KiB */
        CHECK_MSG(c >= n && c % 4096 == 0 && (n <= 65536 ? c == 65536 : c - n < n / 4 + 1),
                  "n=%zu class=%zu", n, c);
        if (c >= 2 * 65536) /* monotone: one byte less never lands in a larger class */
            CHECK(cuzk_pool_class_size(c - 1) <= c && cuzk_pool_class_size(c) == c);
    }
}

static void test_pool_reuse(void)
{
    cuzk_budget *b;
    cuzk_pool *p;
    cuzk_errbuf eb;
    cuzk_pool_hooks hooks = {on_map, on_unmap, NULL};
    CHECK(cuzk_budget_new(&b, "working", 64ull << 20, &eb) == CUZK_OK);
    CHECK(cuzk_pool_new(&p, b, &hooks, &eb) == CUZK_OK);
    cuzk_slab *s1, *s2;
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 1000000, -1, NULL, &s1, &eb) == CUZK_OK);
    CHECK(s1->size == (1u << 20) && ((uintptr_t)s1->data & 4095) == 0);
    memset(s1->data, 0xab, 1000000);
    void *data = s1->data;
    cuzk_budget_snapshot bs;
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(bs.in_use == s1->size && bs.owner[CUZK_OWNER_ABC].in_use == s1->size);
    cuzk_pool_release(p, s1);
    /* idle, still charged */
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(bs.in_use == (1u << 20) && bs.owner[CUZK_OWNER_ABC].in_use == 0 &&
          bs.owner[CUZK_OWNER_POOL_IDLE].in_use == bs.in_use);
    /* same class (any size rounding to it) gets the same buffer back */
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_WITNESS, 950000, -1, NULL, &s2, &eb) == CUZK_OK);
    CHECK(s2->data == data && ((unsigned char *)s2->data)[999999] == 0xab);
    CHECK(s2->owner == CUZK_OWNER_WITNESS);
    cuzk_pool_stats st;
    cuzk_pool_get_stats(p, &st);
    CHECK(st.hits == 1 && st.misses == 1 && st.slabs_live == 1 && st.slabs_idle == 0);
    cuzk_pool_release(p, s2);

    /* many proof-like cycles: three buffers per cycle; the peak stays flat after the first */
    const size_t sizes[3] = {3u << 20, 5u << 20, 100000};
    uint64_t peak_after_first = 0;
    for (int cyc = 0; cyc < 500; cyc++) {
        cuzk_slab *s[3];
        for (int k = 0; k < 3; k++) {
            CHECK(cuzk_pool_acquire(p, (cuzk_owner)k, sizes[k], -1, NULL, &s[k], &eb) == CUZK_OK);
            ((unsigned char *)s[k]->data)[sizes[k] - 1] = (unsigned char)cyc;
        }
        for (int k = 2; k >= 0; k--)
            cuzk_pool_release(p, s[k]);
        cuzk_budget_get_snapshot(b, &bs);
        if (cyc == 0)
            peak_after_first = bs.peak;
        else if (bs.peak != peak_after_first) {
            CHECK_MSG(0, "peak grew from %llu to %llu at cycle %d",
                      (unsigned long long)peak_after_first, (unsigned long long)bs.peak, cyc);
            break;
        }
    }
    cuzk_pool_get_stats(p, &st);
    CHECK_MSG(st.misses == 4 && st.hits == 1 + 499 * 3, "misses %llu hits %llu",
              (unsigned long long)st.misses, (unsigned long long)st.hits);
    CHECK(maps == 4 && unmaps == 0);
    CHECK(st.bytes_idle == (1u << 20) + (3u << 20) + (5u << 20) + 114688);

    /* trim returns idle memory to the OS and the budget */
    uint64_t freed = cuzk_pool_trim(p, 0);
    cuzk_pool_get_stats(p, &st);
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(freed > 0 && st.bytes_idle == 0 && st.slabs_idle == 0 && bs.in_use == 0);
    CHECK(unmaps == maps);

    /* a failing map hook fails the acquire and leaves nothing charged */
    fail_map = 1;
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_PINNED, 4096, -1, NULL, &s1, &eb) == CUZK_GPU_FAULT);
    fail_map = 0;
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(bs.in_use == 0 && s1 == NULL);

    /* larger than the budget, zero bytes, bad owners */
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 65ull << 20, -1, NULL, &s1, &eb) ==
          CUZK_OUT_OF_BUDGET);
    CHECK(strstr(eb.msg, "larger than the whole budget") != NULL);
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 0, -1, NULL, &s1, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_POOL_IDLE, 10, -1, NULL, &s1, &eb) ==
          CUZK_INVALID_ARGUMENT);
    cuzk_pool_free(p);
    cuzk_budget_free(b);
}

/* Idle slabs yield to other users of the budget: direct reservations and other classes. */
static void test_pool_reclaim(void)
{
    cuzk_budget *b;
    cuzk_pool *p;
    cuzk_errbuf eb;
    CHECK(cuzk_budget_new(&b, "working", 4u << 20, &eb) == CUZK_OK);
    CHECK(cuzk_pool_new(&p, b, NULL, &eb) == CUZK_OK);
    cuzk_slab *s, *s2;
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 3u << 20, -1, NULL, &s, &eb) == CUZK_OK);
    cuzk_pool_release(p, s);
    /* 3 MiB idle; a direct 2 MiB reservation must not wait on the cache */
    CHECK(cuzk_budget_try_reserve(b, CUZK_OWNER_SRS_HOST, 2u << 20, &eb) == CUZK_OK);
    cuzk_pool_stats st;
    cuzk_pool_get_stats(p, &st);
    CHECK(st.slabs_idle == 0 && st.unmapped == 1);
    cuzk_budget_release(b, CUZK_OWNER_SRS_HOST, 2u << 20);
    /* a different class also reclaims */
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 3u << 20, -1, NULL, &s, &eb) == CUZK_OK);
    cuzk_pool_release(p, s);
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_H, 2u << 20, 0, NULL, &s2, &eb) == CUZK_OK);
    cuzk_pool_get_stats(p, &st);
    CHECK(st.unmapped == 2 && st.slabs_live == 1);
    /* a release while someone waits on the budget frees instead of caching */
    req r = {b, 3u << 20, -1, NULL, -1, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, reserver, &r);
    wait_waiters(b, 1);
    cuzk_pool_release(p, s2);
    pthread_join(th, NULL);
    CHECK(r.result == CUZK_OK);
    cuzk_pool_get_stats(p, &st);
    CHECK(st.slabs_idle == 0 && st.unmapped == 3);
    cuzk_budget_release(b, CUZK_OWNER_ABC, 3u << 20);
    cuzk_pool_free(p);
    cuzk_budget_snapshot bs;
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(bs.in_use == 0 && bs.peak <= bs.limit);
    cuzk_budget_free(b);
}

/* Several threads acquiring and releasing through one pool with a tight budget. */
static cuzk_pool *g_p;
static void *pool_worker(void *arg)
{
    uint64_t seed = (uint64_t)(long)arg * 0x9e3779b97f4a7c15ULL + 7;
    cuzk_errbuf eb;
    for (int i = 0; i < 300; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        size_t n = (size_t)(1 + seed % 4) << 20; /* 1..4 MiB */
        cuzk_slab *s;
        if (cuzk_pool_acquire(g_p, CUZK_OWNER_ABC, n, -1, NULL, &s, &eb) != CUZK_OK) {
            CHECK_MSG(0, "%s", eb.msg);
            continue;
        }
        ((volatile unsigned char *)s->data)[n - 1] = 1;
        cuzk_pool_release(g_p, s);
    }
    return NULL;
}

static void test_pool_concurrent(void)
{
    cuzk_budget *b;
    cuzk_errbuf eb;
    CHECK(cuzk_budget_new(&b, "working", 10u << 20, &eb) == CUZK_OK);
    CHECK(cuzk_pool_new(&g_p, b, NULL, &eb) == CUZK_OK);
    pthread_t th[6];
    for (long t = 0; t < 6; t++)
        pthread_create(&th[t], NULL, pool_worker, (void *)t);
    for (int t = 0; t < 6; t++)
        pthread_join(th[t], NULL);
    cuzk_budget_snapshot bs;
    cuzk_budget_get_snapshot(b, &bs);
    cuzk_pool_stats st;
    cuzk_pool_get_stats(g_p, &st);
    CHECK_MSG(bs.peak <= bs.limit, "peak %llu > limit", (unsigned long long)bs.peak);
    CHECK(st.slabs_live == 0 && bs.in_use == st.bytes_idle);
    CHECK(st.hits > 0);
    cuzk_pool_free(g_p);
    cuzk_budget_get_snapshot(b, &bs);
    CHECK(bs.in_use == 0);
    cuzk_budget_free(b);
}

static long rss_kib(void)
{
    long pages = -1, rss = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = -1;
        fclose(f);
    }
    return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Idle slabs stay resident (that is the point of the cache); trimming gives them back. */
static void test_pool_rss(void)
{
    cuzk_budget *b;
    cuzk_pool *p;
    cuzk_errbuf eb;
    CHECK(cuzk_budget_new(&b, "working", 256u << 20, &eb) == CUZK_OK);
    CHECK(cuzk_pool_new(&p, b, NULL, &eb) == CUZK_OK);
    long r0 = rss_kib();
    cuzk_slab *s;
    CHECK(cuzk_pool_acquire(p, CUZK_OWNER_ABC, 64u << 20, -1, NULL, &s, &eb) == CUZK_OK);
    memset(s->data, 1, 64u << 20);
    cuzk_pool_release(p, s);
    long r1 = rss_kib();
    CHECK(cuzk_pool_trim(p, 0) == 64u << 20);
    long r2 = rss_kib();
    CHECK_MSG(r0 > 0 && r1 - r0 >= 60 * 1024 && r1 - r2 >= 60 * 1024,
              "rss KiB: start %ld, idle slab %ld, trimmed %ld", r0, r1, r2);
    cuzk_pool_free(p);
    cuzk_budget_free(b);
}

static void test_alloc(void)
{
    cuzk_alloc_stats a0, a1;
    cuzk_alloc_get_stats(&a0);
    char *p = cuzk_malloc(100);
    int *q = cuzk_calloc(10, sizeof(int));
    char *d = cuzk_strdup("hello");
    cuzk_alloc_get_stats(&a1);
    CHECK(p && q && d && strcmp(d, "hello") == 0);
    CHECK(a1.live_blocks == a0.live_blocks + 3 && a1.live_bytes == a0.live_bytes + 100 + 40 + 6);
    int zero = 1;
    for (int i = 0; i < 10; i++)
        zero &= q[i] == 0;
    CHECK(zero);
    CHECK(((uintptr_t)p & 15) == 0);
    p = cuzk_realloc(p, 1000);
    memset(p, 1, 1000);
    cuzk_alloc_get_stats(&a1);
    CHECK(a1.live_bytes == a0.live_bytes + 1000 + 40 + 6);
    CHECK(cuzk_calloc(SIZE_MAX / 2, 4) == NULL);
    cuzk__alloc_fail_after(1);
    void *ok = cuzk_malloc(1), *fail = cuzk_malloc(1);
    cuzk__alloc_fail_after(-1);
    CHECK(ok != NULL && fail == NULL);
    cuzk_free(ok);
    cuzk_free(p);
    cuzk_free(q);
    cuzk_free(d);
    cuzk_free(NULL);
    cuzk_alloc_get_stats(&a1);
    CHECK(a1.live_blocks == a0.live_blocks && a1.live_bytes == a0.live_bytes);
    CHECK(a1.failed >= a0.failed + 2);
}

int main(void)
{
    test_budget_basic();
    test_budget_concurrent();
    test_budget_blocking();
    test_classes();
    test_pool_reuse();
    test_pool_reclaim();
    test_pool_concurrent();
    test_pool_rss();
    test_alloc();
    return tu_finish("pool_test");
}
