/* Instantiates the Pippenger MSM (msm_tmpl.h) for the four groups. */
#include "msm/msm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "ec/xyzz.h"
#include "util/bigalloc.h"
#include "util/parallel.h"

/* ------------------------------------------------------------- scratch block cache
 * The batch-affine bucket phase needs several MiB of scratch per MSM (the sorted point
 * copies); a proof runs five MSMs back to back, and fresh memory costs a page fault and a
 * zeroed page per 2 MiB (4 KiB without huge pages), which measured a few per cent of a
 * BLS12-381 proof (clear_page_erms under msm_bucket_thread). When the caller allows it
 * (cuzk_msm_scratch_limit: the one-shot command line does; the daemon, whose memory is
 * budgeted per partition, does not), blocks of at least MSM_CACHE_MIN bytes are kept after
 * use, in at most MSM_CACHE_SLOTS slots holding at most msm_cache_max bytes in all (the
 * largest blocks win), for the next MSM of any group; cuzk_msm_scratch_release() frees them.
 * Concurrent MSMs each take a different block. */
#define MSM_CACHE_MIN ((size_t)4 << 20)
#define MSM_CACHE_SLOTS 4
static size_t msm_cache_max; /* 0: no cache (the default); under msm_cache_mu */

static struct {
    void *p;
    size_t n;
} msm_cache[MSM_CACHE_SLOTS];
static pthread_mutex_t msm_cache_mu = PTHREAD_MUTEX_INITIALIZER;

/* A block of at least n bytes: the smallest cached one that fits, else a fresh one. Its size
 * goes to *got (hand it back to msm_scratch_put); NULL when out of memory. */
static void *msm_scratch_get(size_t n, size_t *got)
{
    void *p = NULL;
    if (n >= MSM_CACHE_MIN) {
        int best = -1;
        pthread_mutex_lock(&msm_cache_mu);
        for (int i = 0; i < MSM_CACHE_SLOTS; i++) {
            if (msm_cache[i].p && msm_cache[i].n >= n &&
                (best < 0 || msm_cache[i].n < msm_cache[best].n))
                best = i;
        }
        if (best >= 0) {
            p = msm_cache[best].p;
            *got = msm_cache[best].n;
            msm_cache[best].p = NULL;
            msm_cache[best].n = 0;
        } else {
            /* Every cached block is too small: freed before the larger one is made, so
             * the cache holds one MSM's scratch at a time, not the sum of several sizes. */
            for (int i = 0; i < MSM_CACHE_SLOTS; i++) {
                free(msm_cache[i].p);
                msm_cache[i].p = NULL;
                msm_cache[i].n = 0;
            }
        }
        pthread_mutex_unlock(&msm_cache_mu);
        if (p)
            return p;
    }
    *got = n;
    return cuzk__big_alloc(n); /* huge pages: fewer faults */
}

/* Returns a block from msm_scratch_get (p may be NULL): kept when it is large enough and
 * fits the bounds, evicting smaller blocks if need be; freed otherwise. */
static void msm_scratch_put(void *p, size_t n)
{
    if (!p)
        return;
    if (n < MSM_CACHE_MIN) {
        free(p);
        return;
    }
    pthread_mutex_lock(&msm_cache_mu);
    if (n > msm_cache_max) {
        pthread_mutex_unlock(&msm_cache_mu);
        free(p);
        return;
    }
    for (;;) {
        size_t tot = n;
        int free_slot = -1, smallest = -1;
        for (int i = 0; i < MSM_CACHE_SLOTS; i++) {
            if (!msm_cache[i].p) {
                free_slot = i;
                continue;
            }
            tot += msm_cache[i].n;
            if (smallest < 0 || msm_cache[i].n < msm_cache[smallest].n)
                smallest = i;
        }
        if (free_slot >= 0 && tot <= msm_cache_max) {
            msm_cache[free_slot].p = p;
            msm_cache[free_slot].n = n;
            break;
        }
        if (smallest < 0 || msm_cache[smallest].n > n) {
            free(p); /* every cached block is larger */
            break;
        }
        free(msm_cache[smallest].p);
        msm_cache[smallest].p = NULL;
        msm_cache[smallest].n = 0;
    }
    pthread_mutex_unlock(&msm_cache_mu);
}

size_t cuzk_msm_scratch_cached(void)
{
    size_t tot = 0;
    pthread_mutex_lock(&msm_cache_mu);
    for (int i = 0; i < MSM_CACHE_SLOTS; i++)
        tot += msm_cache[i].n;
    pthread_mutex_unlock(&msm_cache_mu);
    return tot;
}

void cuzk_msm_scratch_limit(size_t max_bytes)
{
    pthread_mutex_lock(&msm_cache_mu);
    msm_cache_max = max_bytes;
    pthread_mutex_unlock(&msm_cache_mu);
    cuzk_msm_scratch_release(); /* what is held may exceed the new bound */
}

void cuzk_msm_scratch_release(void)
{
    pthread_mutex_lock(&msm_cache_mu);
    for (int i = 0; i < MSM_CACHE_SLOTS; i++) {
        free(msm_cache[i].p);
        msm_cache[i].p = NULL;
        msm_cache[i].n = 0;
    }
    pthread_mutex_unlock(&msm_cache_mu);
}

#define MSM_G bn254_g1
#define MSM_F bn254_fp
#define MSM_FR bn254_fr
#define MSM_NBITS 254
#define MSM_RLIMBS BN254_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bn254_g2
#define MSM_F bn254_fp2
#define MSM_FP2_BASE bn254_fp
#define MSM_FR bn254_fr
#define MSM_NBITS 254
#define MSM_RLIMBS BN254_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bls12_381_g1
#define MSM_F bls12_381_fp
#define MSM_FR bls12_381_fr
#define MSM_NBITS 255
#define MSM_RLIMBS BLS12_381_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bls12_381_g2
#define MSM_F bls12_381_fp2
#define MSM_FP2_BASE bls12_381_fp
#define MSM_FR bls12_381_fr
#define MSM_NBITS 255
#define MSM_RLIMBS BLS12_381_FR_P
#include "msm/msm_tmpl.h"
