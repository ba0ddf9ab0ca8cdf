/* The one choke point for small heap allocations in libcuzk (large buffers come from the
 * budgeted slab pool, cuzk/pool.h). Every block carries a 16-byte header with its size so the
 * library can report live bytes and live blocks at any time (leak checks in tests, the
 * daemon's status), and tests can inject failures to exercise out-of-memory paths.
 *
 * Blocks from these functions must be freed with cuzk_free (never free()), and vice versa.
 * Alignment is that of malloc (16 bytes on x86-64). Thread safe (atomic counters). */
#ifndef CUZK_ALLOC_H
#define CUZK_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void *cuzk_malloc(size_t n);
void *cuzk_calloc(size_t count, size_t size); /* NULL on count*size overflow */
void *cuzk_realloc(void *p, size_t n);        /* n == 0 frees p and returns NULL */
char *cuzk_strdup(const char *s);
char *cuzk_strndup(const char *s, size_t n);
void cuzk_free(void *p); /* NULL is fine */

typedef struct {
    uint64_t live_bytes;   /* requested bytes in blocks not yet freed */
    uint64_t live_blocks;  /* blocks not yet freed */
    uint64_t peak_bytes;   /* high-water mark of live_bytes */
    uint64_t total_allocs; /* successful allocations since start */
    uint64_t failed;       /* allocations that returned NULL */
} cuzk_alloc_stats;

void cuzk_alloc_get_stats(cuzk_alloc_stats *out);

/* Test hook: after n more successful allocations, every allocation fails until reset with
 * a negative n (the default). Not for production use. */
void cuzk__alloc_fail_after(long n);

#ifdef __cplusplus
}
#endif

#endif
