#include "util/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_uint cuzk__nthreads;

unsigned cuzk_num_threads(void)
{
    unsigned n = atomic_load(&cuzk__nthreads);
    if (n)
        return n;
    const char *env = getenv("CUZK_THREADS");
    if (env) {
        long v = strtol(env, NULL, 10);
        if (v > 0 && v <= 4096)
            return (unsigned)v;
    }
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (unsigned)c : 1;
}

void cuzk_set_num_threads(unsigned n) { atomic_store(&cuzk__nthreads, n); }

typedef struct {
    void (*fn)(void *, size_t);
    void *arg;
    size_t n;
    atomic_size_t next;
} cuzk__pfor;

static void cuzk__pfor_run(cuzk__pfor *p)
{
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return;
        p->fn(p->arg, i);
    }
}

static void *cuzk__pfor_thread(void *v)
{
    cuzk__pfor_run(v);
    return NULL;
}

void cuzk_parallel_for(size_t n, unsigned nthreads, void (*fn)(void *arg, size_t i), void *arg)
{
    if (!nthreads)
        nthreads = cuzk_num_threads();
    if ((size_t)nthreads > n)
        nthreads = (unsigned)n;
    cuzk__pfor p = {fn, arg, n, 0};
    if (nthreads <= 1) {
        cuzk__pfor_run(&p);
        return;
    }
    pthread_t *tids = malloc(sizeof(pthread_t) * (nthreads - 1));
    unsigned started = 0;
    if (tids)
        for (; started < nthreads - 1; started++)
            if (pthread_create(&tids[started], NULL, cuzk__pfor_thread, &p) != 0)
                break; /* fewer threads: the caller still does all remaining work */
    cuzk__pfor_run(&p);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    free(tids);
}

typedef struct {
    void (*fn)(void *, unsigned, unsigned);
    void *arg;
    unsigned T;
} cuzk__pthr;

typedef struct {
    cuzk__pthr *c;
    unsigned t;
} cuzk__pthr_arg;

static void *cuzk__pthr_thread(void *v)
{
    cuzk__pthr_arg *a = v;
    a->c->fn(a->c->arg, a->t, a->c->T);
    return NULL;
}

unsigned cuzk_parallel_threads(unsigned nthreads, void (*fn)(void *arg, unsigned t, unsigned T),
                               void *arg)
{
    if (!nthreads)
        nthreads = cuzk_num_threads();
    if (nthreads > 1024)
        nthreads = 1024;
    pthread_t *tids = nthreads > 1 ? malloc(sizeof(pthread_t) * (nthreads - 1)) : NULL;
    cuzk__pthr_arg *args = nthreads > 1 ? malloc(sizeof(cuzk__pthr_arg) * (nthreads - 1)) : NULL;
    if (!tids || !args)
        nthreads = 1;
    cuzk__pthr c = {fn, arg, nthreads};
    /* Every index must run exactly once: if a thread cannot start, its index runs here. */
    unsigned started = 0;
    unsigned pending[1024];
    unsigned npending = 0;
    for (unsigned t = 1; t < nthreads; t++) {
        args[t - 1] = (cuzk__pthr_arg){&c, t};
        if (pthread_create(&tids[started], NULL, cuzk__pthr_thread, &args[t - 1]) == 0)
            started++;
        else if (npending < 1024)
            pending[npending++] = t;
    }
    fn(arg, 0, nthreads);
    for (unsigned i = 0; i < npending; i++)
        fn(arg, pending[i], nthreads);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    free(tids);
    free(args);
    return nthreads;
}
