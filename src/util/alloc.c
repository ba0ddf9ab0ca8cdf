/* Small-allocation choke point: malloc with a size header and atomic accounting. */
#include "cuzk/alloc.h"

#include <stdlib.h>
#include <string.h>

/* The header keeps the user pointer aligned to 16 bytes (max_align_t on x86-64 and aarch64). */
#define CUZK__ALLOC_HDR 16

static uint64_t cuzk__live_bytes, cuzk__live_blocks, cuzk__peak_bytes, cuzk__total, cuzk__failed;
static long cuzk__fail_countdown = -1;

static int cuzk__alloc_should_fail(void)
{
    long c = __atomic_load_n(&cuzk__fail_countdown, __ATOMIC_RELAXED);
    if (c < 0)
        return 0;
    /* Decrement while positive; at zero every allocation fails. */
    while (c > 0) {
        if (__atomic_compare_exchange_n(&cuzk__fail_countdown, &c, c - 1, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return 0;
        if (c < 0)
            return 0;
    }
    return 1;
}

static void cuzk__alloc_account(size_t n)
{
    uint64_t live = __atomic_add_fetch(&cuzk__live_bytes, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cuzk__live_blocks, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cuzk__total, 1, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&cuzk__peak_bytes, __ATOMIC_RELAXED);
    while (live > peak && !__atomic_compare_exchange_n(&cuzk__peak_bytes, &peak, live, 1,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void *cuzk__alloc(size_t n, int zero)
{
    if (n > SIZE_MAX - CUZK__ALLOC_HDR || cuzk__alloc_should_fail()) {
        __atomic_add_fetch(&cuzk__failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    unsigned char *b = zero ? calloc(1, n + CUZK__ALLOC_HDR) : malloc(n + CUZK__ALLOC_HDR);
    if (!b) {
        __atomic_add_fetch(&cuzk__failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    memcpy(b, &n, sizeof n);
    cuzk__alloc_account(n);
    return b + CUZK__ALLOC_HDR;
}

void *cuzk_malloc(size_t n)
{
    return cuzk__alloc(n, 0);
}

void *cuzk_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        __atomic_add_fetch(&cuzk__failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    return cuzk__alloc(count * size, 1);
}

void cuzk_free(void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - CUZK__ALLOC_HDR;
    size_t n;
    memcpy(&n, b, sizeof n);
    __atomic_sub_fetch(&cuzk__live_bytes, n, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&cuzk__live_blocks, 1, __ATOMIC_RELAXED);
    free(b);
}

void *cuzk_realloc(void *p, size_t n)
{
    if (!p)
        return cuzk_malloc(n);
    if (n == 0) {
        cuzk_free(p);
        return NULL;
    }
    if (n > SIZE_MAX - CUZK__ALLOC_HDR || cuzk__alloc_should_fail()) {
        __atomic_add_fetch(&cuzk__failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    unsigned char *b = (unsigned char *)p - CUZK__ALLOC_HDR;
    size_t old;
    memcpy(&old, b, sizeof old);
    unsigned char *nb = realloc(b, n + CUZK__ALLOC_HDR);
    if (!nb) {
        __atomic_add_fetch(&cuzk__failed, 1, __ATOMIC_RELAXED);
        return NULL; /* p is untouched, as with realloc */
    }
    memcpy(nb, &n, sizeof n);
    /* Count a realloc as a free of the old block and an allocation of the new one. */
    __atomic_sub_fetch(&cuzk__live_bytes, old, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&cuzk__live_blocks, 1, __ATOMIC_RELAXED);
    cuzk__alloc_account(n);
    return nb + CUZK__ALLOC_HDR;
}

char *cuzk_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = cuzk_malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = 0;
    }
    return d;
}

char *cuzk_strdup(const char *s)
{
    size_t len = strlen(s);
    char *d = cuzk_malloc(len + 1);
    if (d)
        memcpy(d, s, len + 1);
    return d;
}

void cuzk_alloc_get_stats(cuzk_alloc_stats *out)
{
    out->live_bytes = __atomic_load_n(&cuzk__live_bytes, __ATOMIC_RELAXED);
    out->live_blocks = __atomic_load_n(&cuzk__live_blocks, __ATOMIC_RELAXED);
    out->peak_bytes = __atomic_load_n(&cuzk__peak_bytes, __ATOMIC_RELAXED);
    out->total_allocs = __atomic_load_n(&cuzk__total, __ATOMIC_RELAXED);
    out->failed = __atomic_load_n(&cuzk__failed, __ATOMIC_RELAXED);
}

void cuzk__alloc_fail_after(long n)
{
    __atomic_store_n(&cuzk__fail_countdown, n < 0 ? -1 : n, __ATOMIC_RELAXED);
}
