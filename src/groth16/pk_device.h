/* A proving key's residency on one GPU device: the point sets and rows uploaded there, the
 * key's own context on it, and the page-locked witness buffer of cuzk_prove. Curve-independent:
 * every key's base (prover.h) holds one per device. */
#ifndef CUZK_GROTH16_PK_DEVICE_H
#define CUZK_GROTH16_PK_DEVICE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/groth16.h"
#include "gpu/gpu.h"

/* The point sets are uploaded on the first proof that uses the device and kept until the key
 * is freed. ctx is the key's own context on the device (the points belong to it); mu guards
 * the upload and serialises use of that context by callers that bring none of their own. */
typedef struct cuzk__pk_device {
    pthread_mutex_t mu;
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_points *g_a, *g_b1, *g_c, *g_h, *g_b2;
    cuzk_gpu_rows *g_rows; /* A and B for synthesis on the GPU (cuzk_prove's path) */
    /* cuzk_prove's page-locked witness buffer on this device (cuzk__pk_device_wpin_take): the
     * witness is copied and checked into it, and its upload is then a plain DMA. */
    void *wpin;
    size_t wpin_len;
    int wpin_busy;
    /* ctx's batch-affine chunk is fitted to the memory the tables left (prover.c gpu_acquire);
     * ba_unfit: it was given back once for tables (prover.c gpu_tables). */
    int ba_fitted, ba_unfit;
    /* CUZK_PK_SET_* bits of the sets staged (or to be staged) streamed from the key's host
     * arrays in chunks of about stream_chunk bytes (cuzk_pk_gpu_stage_streamed). */
    unsigned streamed;
    uint64_t stream_chunk;
} cuzk__pk_device;

void cuzk__pk_device_init(cuzk__pk_device *d);
/* Frees what was uploaded, the witness buffer and the context. */
void cuzk__pk_device_free(cuzk__pk_device *d);
/* Bit d set when the G1 point sets are resident on devs[d]. */
uint32_t cuzk__pk_devices_mask(cuzk__pk_device devs[CUZK_MAX_DEVICES]);
/* The CUZK_PK_SET_* bits of d's point sets whose tables would pay (more than one copy,
 * cuzk_gpu_tables_bytes) but are not built. d->mu held. */
unsigned cuzk__pk_device_no_tables(const cuzk__pk_device *d, cuzk_gpu_curve curve);
/* A page-locked buffer of at least `bytes` on device `device` (d), or NULL when it is in use by
 * another cuzk_prove on this key or cannot be had (then the witness is ordinary memory and its
 * upload goes through the staging buffers). Allocated once and kept with the key's context, so
 * a stream of proofs pays for the page locking once. Returned with cuzk__pk_device_wpin_give. */
void *cuzk__pk_device_wpin_take(cuzk__pk_device *d, int device, size_t bytes);
void cuzk__pk_device_wpin_give(cuzk__pk_device *d, void *p);

#endif
