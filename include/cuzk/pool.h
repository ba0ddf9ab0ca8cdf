/* Memory budget and budgeted slab pool.
 *
 * cuzk_budget: a byte limit that large allocations are charged against BEFORE they happen.
 * A reservation either fits now, waits (FIFO, so a large request is never starved by a stream
 * of small ones) until releases make room, or fails: at once with CUZK_OUT_OF_BUDGET when it
 * exceeds the whole limit, with CUZK_TIMEOUT after its timeout, with CUZK_CANCELLED when the
 * caller's cancel flag becomes non-zero. Bytes are accounted per owner tag (in use and peak)
 * so the daemon can report where memory goes. Invariant: in_use <= limit at every instant.
 *
 * cuzk_pool: page-aligned buffers (mmap'ed, so trimming returns them to the OS) in size
 * classes of 4 steps per power of two (at most 25% rounding waste). A released buffer goes to
 * its class's free list and the next acquire of that class reuses it, so resident memory stays
 * flat across proofs. Every buffer, idle or not, is charged to the budget (idle ones under
 * CUZK_OWNER_POOL_IDLE); when a reservation on the budget would wait, idle buffers are
 * unmapped first to make room.
 *
 * Small allocations go through cuzk_malloc & co (cuzk/alloc.h), not through these.
 * Everything here is thread safe (one mutex + condvar per budget, one mutex per pool). */
#ifndef CUZK_POOL_H
#define CUZK_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/alloc.h"
#include "cuzk/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CUZK_OWNER_WITNESS = 0, /* decoded witness vectors */
    CUZK_OWNER_ABC,         /* a, b, c evaluations */
    CUZK_OWNER_H,           /* h coefficients, NTT buffers */
    CUZK_OWNER_MSM_SCRATCH, /* bucket / scalar scratch */
    CUZK_OWNER_SRS_HOST,    /* proving key points in host memory */
    CUZK_OWNER_PINNED,      /* page-locked staging buffers */
    CUZK_OWNER_POOL_IDLE,   /* pool buffers on a free list */
    CUZK_OWNER_OTHER,
    CUZK_OWNER__COUNT
} cuzk_owner;

/* "witness", "abc", "h", "msm_scratch", "srs_host", "pinned", "pool_idle", "other". */
const char *cuzk_owner_name(cuzk_owner o);

/* ------------------------------------------------------------------ budget */

typedef struct cuzk_budget cuzk_budget;

typedef struct {
    uint64_t limit;
    uint64_t in_use;
    uint64_t peak;
    uint64_t waiting;       /* reservations blocked right now */
    uint64_t waiting_bytes; /* bytes they ask for */
    uint64_t reserves;      /* successful reservations */
    uint64_t waits;         /* reservations that had to wait */
    uint64_t failures;      /* out-of-budget / timeout / cancelled */
    struct {
        uint64_t in_use, peak;
    } owner[CUZK_OWNER__COUNT];
} cuzk_budget_snapshot;

/* name is used in messages ("working"). limit 0 is allowed (every non-empty reserve fails). */
cuzk_err cuzk_budget_new(cuzk_budget **out, const char *name, uint64_t limit, cuzk_errbuf *eb);
/* All reservations must have been released; waiters must be gone. */
void cuzk_budget_free(cuzk_budget *b);

/* Waits until `bytes` fit, then charges them to owner.
 *   timeout_ns < 0: wait without limit; 0: do not wait (as try_reserve); > 0: wait at most this
 *   cancel: if not NULL, the wait ends with CUZK_CANCELLED once *cancel != 0 (read atomically;
 *     after setting it, call cuzk_budget_wake() for an immediate reaction, otherwise waiters
 *     notice within 50 ms).
 * A reservation that fits at once succeeds even if *cancel is already set (callers check
 * their own flag between stages).
 * bytes > limit fails at once with CUZK_OUT_OF_BUDGET and a message naming both sizes.
 * bytes == 0 always succeeds. */
cuzk_err cuzk_budget_reserve(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, int64_t timeout_ns,
                             const int *cancel, cuzk_errbuf *eb);
/* As cuzk_budget_reserve without a time limit, but ahead of every queued reservation: for a
 * holder that needs more to finish what it holds, so that others waiting behind it cannot
 * keep it (and what it holds) waiting. */
cuzk_err cuzk_budget_reserve_first(cuzk_budget *b, cuzk_owner owner, uint64_t bytes,
                                   const int *cancel, cuzk_errbuf *eb);
/* Changes the limit. Lowering it below in_use takes nothing back: reservations wait until
 * enough is released. */
void cuzk_budget_set_limit(cuzk_budget *b, uint64_t limit);
/* Succeeds only if the bytes fit now and nobody is queued ahead; else CUZK_OUT_OF_BUDGET. */
cuzk_err cuzk_budget_try_reserve(cuzk_budget *b, cuzk_owner owner, uint64_t bytes, cuzk_errbuf *eb);
void cuzk_budget_release(cuzk_budget *b, cuzk_owner owner, uint64_t bytes);
/* Moves a charge from one owner to another (no change to in_use). */
void cuzk_budget_transfer(cuzk_budget *b, cuzk_owner from, cuzk_owner to, uint64_t bytes);
/* Wakes every waiter so it rechecks its cancel flag. */
void cuzk_budget_wake(cuzk_budget *b);
void cuzk_budget_get_snapshot(cuzk_budget *b, cuzk_budget_snapshot *out);
/* Number of reservations waiting right now. */
uint64_t cuzk_budget_waiters(cuzk_budget *b);

/* Reclaimers free cached memory when a reservation would otherwise wait: fn is called without
 * the budget's lock with the number of bytes missing, and should release what it can through
 * cuzk_budget_release. At most 8 per budget. Used by cuzk_pool; callers rarely need it. */
typedef void (*cuzk_budget_reclaim_fn)(void *ctx, uint64_t bytes_needed);
cuzk_err cuzk_budget_add_reclaimer(cuzk_budget *b, cuzk_budget_reclaim_fn fn, void *ctx,
                                   cuzk_errbuf *eb);
void cuzk_budget_remove_reclaimer(cuzk_budget *b, cuzk_budget_reclaim_fn fn, void *ctx);

/* ------------------------------------------------------------------ slab pool */

typedef struct cuzk_pool cuzk_pool;

/* A buffer handed out by the pool; data is page-aligned and holds at least the requested
 * bytes (size is the class size actually mapped and charged). */
typedef struct cuzk_slab {
    void *data;
    size_t size;
    cuzk_owner owner;
    /* private */
    struct cuzk_slab *next;
    unsigned cls;
} cuzk_slab;

typedef struct {
    uint64_t slabs_live; /* handed out */
    uint64_t slabs_idle; /* on free lists */
    uint64_t bytes_live; /* class sizes of handed-out slabs */
    uint64_t bytes_idle; /* class sizes of idle slabs */
    uint64_t hits;       /* acquires served from a free list */
    uint64_t misses;     /* acquires that mapped new memory */
    uint64_t unmapped;   /* slabs returned to the OS (trim / reclaim) */
} cuzk_pool_stats;

/* Optional hooks run on every new mapping and before every unmapping (for example to
 * page-lock buffers for DMA with cudaHostRegister). A failing on_map fails the acquire. */
typedef struct {
    cuzk_err (*on_map)(void *ctx, void *data, size_t size, cuzk_errbuf *eb);
    void (*on_unmap)(void *ctx, void *data, size_t size);
    void *ctx;
} cuzk_pool_hooks;

/* hooks may be NULL. The pool registers itself as a reclaimer of b. */
cuzk_err cuzk_pool_new(cuzk_pool **out, cuzk_budget *b, const cuzk_pool_hooks *hooks,
                       cuzk_errbuf *eb);
/* Every slab must have been released; idle slabs are unmapped and their charge released. */
void cuzk_pool_free(cuzk_pool *p);

/* Hands out a slab of at least `bytes` (> 0) charged to owner, reusing an idle slab of the
 * same class when there is one, else reserving on the budget (timeout_ns and cancel as in
 * cuzk_budget_reserve) and mapping fresh memory. Contents are unspecified (not zeroed). */
cuzk_err cuzk_pool_acquire(cuzk_pool *p, cuzk_owner owner, size_t bytes, int64_t timeout_ns,
                           const int *cancel, cuzk_slab **out, cuzk_errbuf *eb);
/* Returns a slab to its free list (or unmaps it when someone waits on the budget). NULL ok. */
void cuzk_pool_release(cuzk_pool *p, cuzk_slab *s);
/* Unmaps idle slabs until at most keep_bytes stay idle; returns the bytes unmapped. */
uint64_t cuzk_pool_trim(cuzk_pool *p, uint64_t keep_bytes);
void cuzk_pool_get_stats(cuzk_pool *p, cuzk_pool_stats *out);
/* The class size a request of `bytes` is rounded up to (0 if too large). */
size_t cuzk_pool_class_size(size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
