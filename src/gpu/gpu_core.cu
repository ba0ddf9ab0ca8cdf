/*
 * The CUDA backend's C API: device discovery, contexts, scratch, resident buffers, and the
 * dispatch to the per-curve code (gpu_bn254.cu, gpu_bls12_381.cu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu_internal.cuh"
#include "gpu/msm/stream.cuh"

extern "C" {
#include "util/parallel.h"
}

cuzk_err cuzk__gpu_fault(cuzk_errbuf *eb, const char *file, int line, const char *call,
                         cudaError_t e)
{
    const char *f = strrchr(file, '/');
    f = f ? f + 1 : file;
    cuzk_err code = (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
                        ? CUZK_NO_DEVICE
                        : CUZK_GPU_FAULT;
    return cuzk_errf(eb, code, "CUDA error at %s:%d in %s: %s (%s)", f, line, call,
                     cudaGetErrorString(e), cudaGetErrorName(e));
}

cuzk_err cuzk__gpu_scratch(cuzk_gpu_ctx *ctx, int slot, size_t bytes, void **out,
                           cuzk_errbuf *eb)
{
    if (bytes == 0)
        bytes = 1;
    if (ctx->scr_cap[slot] < bytes) {
        if (ctx->scr[slot]) {
            /* Queued kernels may still use the old buffer. */
            CU(cudaStreamSynchronize(ctx->stream));
            CU(cudaFree(ctx->scr[slot]));
            ctx->scr[slot] = NULL;
            ctx->scr_cap[slot] = 0;
        }
        size_t cap = bytes + bytes / 8; /* a little headroom for the next, larger call */
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, cap);
        if (e != cudaSuccess) {
            cudaGetLastError(); /* allocation failures are not sticky */
            return cuzk_errf(eb, CUZK_NO_MEMORY,
                             "GPU scratch: cannot allocate %zu bytes on device %d: %s", cap,
                             ctx->device, cudaGetErrorString(e));
        }
        ctx->scr[slot] = p;
        ctx->scr_cap[slot] = cap;
    }
    *out = ctx->scr[slot];
    return CUZK_OK;
}

/* Frees scratch slots (the next SCRATCH of one allocates it again), after the queued work. */
static cuzk_err scratch_drop(cuzk_gpu_ctx *ctx, const int *slots, int k, cuzk_errbuf *eb)
{
    bool any = false;
    for (int i = 0; i < k; i++)
        any |= ctx->scr[slots[i]] != NULL;
    if (!any)
        return CUZK_OK;
    CU(cudaStreamSynchronize(ctx->stream));
    for (int i = 0; i < k; i++) {
        CU(cudaFree(ctx->scr[slots[i]]));
        ctx->scr[slots[i]] = NULL;
        ctx->scr_cap[slots[i]] = 0;
    }
    return CUZK_OK;
}

/* Over a domain of more than ctx->part_max points (CUZK_GPU_MSM_PART_MAX) the H step and the
 * MSMs take turns in the scratch (gpu_plan.c counts the larger turn): the MSMs' slots go
 * before the H step's a, b, c are made, and b, c and the NTT's buffer go before the H MSM
 * (h stays in SCR_HA). The witness upload (SCR_SC_IN) stays throughout. */
static cuzk_err h_phase_msm_out(cuzk_gpu_ctx *ctx, size_t n, cuzk_errbuf *eb)
{
    static const int msm_slots[] = {SCR_SC,     SCR_FLAG1,   SCR_FLAG2,   SCR_IDX1,
                                    SCR_IDX2,   SCR_KEY0,    SCR_KEY1,    SCR_VAL0,
                                    SCR_VAL1,   SCR_CUB,     SCR_BUCKETS, SCR_CKEY0,
                                    SCR_CKEY1,  SCR_CPT0,    SCR_CPT1,    SCR_CHUNK0,
                                    SCR_BA_PRE, SCR_BA_TREE, SCR_BA_NPRE, SCR_BA_MASK,
                                    SCR_IDX1K};
    if (n <= ctx->part_max)
        return CUZK_OK;
    ctx->prep.valid = 0; /* the classification and sorted digits go with their slots */
    return scratch_drop(ctx, msm_slots, (int)(sizeof msm_slots / sizeof msm_slots[0]), eb);
}

static cuzk_err h_phase_h_out(cuzk_gpu_ctx *ctx, size_t n, cuzk_errbuf *eb)
{
    static const int h_slots[] = {SCR_HB, SCR_HC, SCR_NTT_TMP};
    if (n <= ctx->part_max)
        return CUZK_OK;
    return scratch_drop(ctx, h_slots, 3, eb);
}

static cuzk_err msm_dispatch(cuzk_gpu_ctx *ctx, cuzk_gpu_curve c, cuzk_gpu_group g,
                             const void *d_pts, size_t n, const void *d_sc, bool mont,
                             const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)
{
    if (c == CUZK_GPU_BN254)
        return g == CUZK_GPU_G1
                   ? cuzk__gpu_bn254_g1_msm(ctx, d_pts, n, d_sc, mont, tab, out, eb)
                   : cuzk__gpu_bn254_g2_msm(ctx, d_pts, n, d_sc, mont, tab, out, eb);
    return g == CUZK_GPU_G1 ? cuzk__gpu_bls12_381_g1_msm(ctx, d_pts, n, d_sc, mont, tab, out, eb)
                            : cuzk__gpu_bls12_381_g2_msm(ctx, d_pts, n, d_sc, mont, tab, out, eb);
}

/* A resident MSM: in one run, or over more than ctx->part_max points in equal parts into one
 * set of buckets (CUZK_GPU_MSM_PART_MAX; cuzk__gpu_part with every part's scalars on the
 * device already). */
static cuzk_err msm_resident(cuzk_gpu_ctx *ctx, cuzk_gpu_curve c, cuzk_gpu_group g,
                             const char *d_pts, size_t n, const uint8_t *d_sc, bool mont,
                             const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)
{
    if (n <= ctx->part_max || ctx->part.on)
        return msm_dispatch(ctx, c, g, d_pts, n, d_sc, mont, tab, out, eb);
    const size_t P = (n + ctx->part_max - 1) / ctx->part_max, per = (n + P - 1) / P;
    const size_t pb = cuzk_gpu_point_bytes(c, g);
    cuzk__gpu_part *pt = &ctx->part;
    memset(pt, 0, sizeof *pt);
    pt->on = true;
    pt->total = n;
    pt->parts = (int)P;
    pt->nmax = per;
    cuzk_err e = CUZK_OK;
    for (size_t lo = 0; lo < n && !e; lo += per) {
        const size_t len = n - lo < per ? n - lo : per;
        pt->first = lo == 0;
        pt->last = lo + len == n;
        pt->base = lo;
        pt->ready = NULL;
        e = msm_dispatch(ctx, c, g, d_pts + lo * pb, len, d_sc + lo * 32, mont, tab, out, eb);
    }
    pt->on = false;
    return e;
}

static cuzk_err tables_dispatch(cuzk_gpu_ctx *ctx, cuzk_gpu_curve c, cuzk_gpu_group g,
                                void *d_pts, size_t n, int t, int s, cuzk_errbuf *eb)
{
    if (c == CUZK_GPU_BN254)
        return g == CUZK_GPU_G1 ? cuzk__gpu_bn254_g1_tables(ctx, d_pts, n, t, s, eb)
                                : cuzk__gpu_bn254_g2_tables(ctx, d_pts, n, t, s, eb);
    return g == CUZK_GPU_G1 ? cuzk__gpu_bls12_381_g1_tables(ctx, d_pts, n, t, s, eb)
                            : cuzk__gpu_bls12_381_g2_tables(ctx, d_pts, n, t, s, eb);
}

/* Host-to-device copy of a large pageable buffer (the witness, a, b, c: up to 512 MiB each) on
 * stream st (the context's, or its upload stream), through the context's two pinned staging
 * buffers: a few host threads copy the next chunk into one while the DMA engine drains the other
 * (the driver's own path for pageable memory copies on one thread). Returns once the last chunk is
 * queued; the stream orders later work after it. Small copies, page-locked sources (the DMA engine
 * reads them at full speed) and contexts without staging go directly. */
struct upload_job {
    uint8_t *dst;
    const uint8_t *src;
    size_t len, piece;
};

static void upload_piece(void *arg, size_t i)
{
    upload_job *j = (upload_job *)arg;
    size_t lo = i * j->piece, n = j->len - lo < j->piece ? j->len - lo : j->piece;
    memcpy(j->dst + lo, j->src + lo, n);
}

/* Threads copying into the staging buffers: a few saturate the host's memory bandwidth, and
 * the witness upload runs beside synthesis, which wants every core (taking them all slows
 * synthesis by more than the copy gains). */
#define CUZK_GPU_STAGE_THREADS 4

/* Whether upload() copies bytes from src in one DMA (queued, returning at once). */
static bool upload_direct(const cuzk_gpu_ctx *ctx, const void *src, size_t bytes)
{
    if (!ctx->stage[0] || bytes < 2 * CUZK_GPU_STAGE_BYTES)
        return true;
    cudaPointerAttributes pa; /* page-locked already: the DMA engine reads it directly */
    const bool pinned =
        cudaPointerGetAttributes(&pa, src) == cudaSuccess && pa.type == cudaMemoryTypeHost;
    cudaGetLastError();
    return pinned;
}

static cuzk_err upload(cuzk_gpu_ctx *ctx, void *dst, const void *src, size_t bytes,
                       cudaStream_t st, cuzk_errbuf *eb)
{
    if (upload_direct(ctx, src, bytes)) {
        if (bytes)
            CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, st));
        return CUZK_OK;
    }
    const size_t piece = (size_t)2 << 20;
    for (size_t off = 0, k = 0; off < bytes; k ^= 1) {
        size_t len = bytes - off < CUZK_GPU_STAGE_BYTES ? bytes - off : CUZK_GPU_STAGE_BYTES;
        CU(cudaEventSynchronize(ctx->stage_ev[k])); /* its previous copy has left it */
        upload_job j = {(uint8_t *)ctx->stage[k], (const uint8_t *)src + off, len, piece};
        cuzk_parallel_for((len + piece - 1) / piece, CUZK_GPU_STAGE_THREADS, upload_piece, &j);
        CU(cudaMemcpyAsync((uint8_t *)dst + off, ctx->stage[k], len, cudaMemcpyHostToDevice,
                           st));
        CU(cudaEventRecord(ctx->stage_ev[k], st));
        off += len;
    }
    return CUZK_OK;
}

/* CUZK_GPU_TRACE=1: each MSM and H step prints its phases on stderr, host-timed around a
 * stream synchronisation (which the traced run pays; untraced runs do not synchronise). */
static int trace_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("CUZK_GPU_TRACE");
        on = v && *v == '1';
    }
    return on;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* With tracing: synchronises and returns the milliseconds since *t, then resets *t. */
static double trace_lap(cuzk_gpu_ctx *ctx, double *t)
{
    if (!trace_on())
        return 0;
    cudaStreamSynchronize(ctx->stream);
    double n = now_ms(), d = n - *t;
    *t = n;
    return d;
}

extern "C" {

int cuzk_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

cuzk_err cuzk_gpu_open(cuzk_gpu_ctx **out, int device, cuzk_errbuf *eb)
{
    *out = NULL;
    int n = cuzk_gpu_device_count();
    if (n == 0)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "no CUDA device found (cudaGetDeviceCount)");
    if (device < 0 || device >= n)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "GPU %d requested, %d present", device, n);
    cuzk_gpu_ctx *ctx = (cuzk_gpu_ctx *)calloc(1, sizeof *ctx);
    if (!ctx)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU context");
    ctx->device = device;
    cuzk_err r = CUZK_OK;
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, device);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaMallocHost(&ctx->host_res, CUZK_GPU_HOST_RES_BYTES);
    for (int i = 0; i < 2 && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&ctx->stage_ev[i], cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&ctx->up_stream, cudaStreamNonBlocking);
    for (int i = 0; i < CUZK_GPU_SPLIT_MAXP && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&ctx->up_ev[i], cudaEventDisableTiming);
    if (e == cudaSuccess) {
        /* Staging is an optimisation: without it uploads read pageable memory directly. */
        for (int i = 0; i < 2; i++) {
            if (cudaMallocHost(&ctx->stage[i], CUZK_GPU_STAGE_BYTES) != cudaSuccess) {
                cudaGetLastError();
                ctx->stage[i] = NULL;
            }
        }
        if (!ctx->stage[0] || !ctx->stage[1]) {
            for (int i = 0; i < 2; i++)
                if (ctx->stage[i])
                    cudaFreeHost(ctx->stage[i]);
            ctx->stage[0] = ctx->stage[1] = NULL;
        }
    }
    if (e != cudaSuccess) {
        r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cuzk_gpu_open", e);
        cuzk_gpu_close(ctx);
        return r;
    }
    snprintf(ctx->name, sizeof ctx->name, "%s", prop.name);
    ctx->sm_count = prop.multiProcessorCount;
    ctx->bad_scalar = UINT64_MAX;
    ctx->ba_chunk = CUZK_GPU_BA_PRE_BYTES;
    ctx->ba_quads = CUZK_GPU_BA_QUADS_DEFAULT;
    ctx->split_min = CUZK_GPU_MSM_SPLIT_MIN;
    ctx->part_max = CUZK_GPU_MSM_PART_MAX;
    *out = ctx;
    return CUZK_OK;
}

void cuzk_gpu_close(cuzk_gpu_ctx *ctx)
{
    if (!ctx)
        return;
    cudaSetDevice(ctx->device);
    if (ctx->stream)
        cudaStreamSynchronize(ctx->stream);
    cuzk_gpu_stream::free_bufs(ctx->strm);
    for (int i = 0; i < SCR_COUNT; i++)
        if (ctx->scr[i])
            cudaFree(ctx->scr[i]);
    for (int i = 0; i < 2; i++)
        if (ctx->tw[i])
            cudaFree(ctx->tw[i]);
    if (ctx->host_res)
        cudaFreeHost(ctx->host_res);
    for (int i = 0; i < 2; i++) {
        if (ctx->stage[i])
            cudaFreeHost(ctx->stage[i]);
        if (ctx->stage_ev[i])
            cudaEventDestroy(ctx->stage_ev[i]);
    }
    if (ctx->up_stream) {
        cudaStreamSynchronize(ctx->up_stream);
        cudaStreamDestroy(ctx->up_stream);
    }
    for (int i = 0; i < CUZK_GPU_SPLIT_MAXP; i++)
        if (ctx->up_ev[i])
            cudaEventDestroy(ctx->up_ev[i]);
    if (ctx->stream)
        cudaStreamDestroy(ctx->stream);
    cudaGetLastError();
    free(ctx);
}

const char *cuzk_gpu_name(const cuzk_gpu_ctx *ctx) { return ctx ? ctx->name : "none"; }

uint64_t cuzk_gpu_scratch_bytes(const cuzk_gpu_ctx *ctx)
{
    uint64_t sum = 0;
    if (!ctx)
        return 0;
    for (int i = 0; i < SCR_COUNT; i++)
        sum += ctx->scr_cap[i];
    for (int i = 0; i < 2; i++)
        if (ctx->tw[i])
            sum += ((uint64_t)1 << (ctx->tw_log[i] - 1)) * 32;
    if (ctx->strm)
        sum += 2 * (uint64_t)ctx->strm->cap;
    return sum;
}

cuzk_err cuzk_gpu_ba_fit(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, uint64_t n_points,
                         uint64_t domain, cuzk_errbuf *eb)
{
    size_t f = 0, t = 0;
    CU(cudaSetDevice(ctx->device));
    CU(cudaMemGetInfo(&f, &t));
    /* The stream buffers stay: the chunk may take the scratch slots' memory only. */
    const uint64_t margin = ((uint64_t)1 << 30) + t / 64,
                   have = cuzk_gpu_scratch_bytes(ctx) - cuzk_gpu_stream_buffer_bytes(ctx);
    const uint64_t avail = f + have > margin ? f + have - margin : 0;
    size_t chunk;
    int quads;
    cuzk__gpu_ba_fit(curve == CUZK_GPU_BLS12_381, n_points, domain, avail, &chunk, &quads);
    ctx->ba_chunk = chunk;
    ctx->ba_quads = quads;
    return CUZK_OK;
}

/* ctx's batch-affine setting changed to (chunk, q); the slots the chunk sized go back when it
 * changes (they grow again to the new setting's size on the next MSM). */
static cuzk_err ba_apply(cuzk_gpu_ctx *ctx, size_t chunk, int q, cuzk_errbuf *eb)
{
    if (ctx->ba_chunk == chunk && ctx->ba_quads == q)
        return CUZK_OK;
    ctx->ba_chunk = chunk;
    ctx->ba_quads = q;
    /* The slots the chunk sized go back now; they grow again to the new setting's size. */
    static const int slots[] = {SCR_BA_PRE, SCR_BA_TREE, SCR_BA_NPRE, SCR_BA_MASK};
    CU(cudaSetDevice(ctx->device));
    CU(cudaStreamSynchronize(ctx->stream));
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        if (ctx->scr[slots[i]])
            CU(cudaFree(ctx->scr[slots[i]]));
        ctx->scr[slots[i]] = NULL;
        ctx->scr_cap[slots[i]] = 0;
    }
    return CUZK_OK;
}

cuzk_err cuzk_gpu_ba_reset(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    return ba_apply(ctx, CUZK_GPU_BA_PRE_BYTES, CUZK_GPU_BA_QUADS_DEFAULT, eb);
}

cuzk_err cuzk__gpu_test_set(cuzk_gpu_ctx *ctx, const cuzk__gpu_test_options *o, cuzk_errbuf *eb)
{
    const uint32_t sm = o->slice_min;
    if (sm && (sm < 4 || sm > 128 || (sm & (sm - 1))))
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "cuzk__gpu_test_set: a slice floor of %u: expected 0 or a power of two, "
                         "4 to 128",
                         sm);
    if (o->split_min && o->split_min < 8)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "cuzk__gpu_test_set: a split from %llu scalars: expected 0 or at least 8",
                         (unsigned long long)o->split_min);
    if (o->part_max && o->part_max < 8)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "cuzk__gpu_test_set: parts of %llu points: expected 0 or at least 8",
                         (unsigned long long)o->part_max);
    ctx->part_max = o->part_max ? (size_t)o->part_max : CUZK_GPU_MSM_PART_MAX;
    ctx->ba_every = o->ba_every != 0;
    ctx->slice_min = sm;
    ctx->split_min = o->split_min ? (size_t)o->split_min : CUZK_GPU_MSM_SPLIT_MIN;
    ctx->split_all = o->split_min != 0;
    return CUZK_OK;
}

cuzk_err cuzk_gpu_ba_set(cuzk_gpu_ctx *ctx, uint64_t chunk, int quads, cuzk_errbuf *eb)
{
    if (chunk == 0 || chunk > CUZK_GPU_BA_CHUNK_MAX || quads < 0 || quads > 3)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "cuzk_gpu_ba_set: a chunk of %llu bytes with quads %d: expected 1 to "
                         "%zu bytes and quads 0 to 3",
                         (unsigned long long)chunk, quads, (size_t)CUZK_GPU_BA_CHUNK_MAX);
    return ba_apply(ctx, (size_t)chunk, quads, eb);
}

void cuzk_gpu_ba_setting(const cuzk_gpu_ctx *ctx, uint64_t *chunk, int *quads)
{
    *chunk = ctx->ba_chunk;
    *quads = ctx->ba_quads;
}

cuzk_err cuzk_gpu_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes,
                           cuzk_errbuf *eb)
{
    size_t f = 0, t = 0;
    *free_bytes = *total_bytes = 0;
    CU(cudaSetDevice(device));
    CU(cudaMemGetInfo(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return CUZK_OK;
}

cuzk_err cuzk_gpu_pin(cuzk_gpu_ctx *ctx, void *p, size_t len, cuzk_errbuf *eb)
{
    CU(cudaSetDevice(ctx->device));
    CU(cudaHostRegister(p, len, cudaHostRegisterPortable)); /* every device DMAs from it */
    return CUZK_OK;
}

/* Page-locked host memory on device `device` (portable: every device DMAs from it). */
static cuzk_err host_alloc_on(int device, size_t bytes, void **out, cuzk_errbuf *eb)
{
    *out = NULL;
    CU(cudaSetDevice(device));
    cudaError_t e = cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *out = NULL;
        return cuzk_errf(eb, CUZK_NO_MEMORY, "page-locked host buffer of %zu bytes: %s", bytes,
                         cudaGetErrorString(e));
    }
    return CUZK_OK;
}

cuzk_err cuzk_gpu_host_alloc(cuzk_gpu_ctx *ctx, size_t bytes, void **out, cuzk_errbuf *eb)
{
    return host_alloc_on(ctx->device, bytes, out, eb);
}

void cuzk_gpu_host_free(cuzk_gpu_ctx *ctx, void *p)
{
    if (!p)
        return;
    cudaSetDevice(ctx->device);
    cudaFreeHost(p);
    cudaGetLastError();
}

cuzk_err cuzk_gpu_host_alloc_any(size_t bytes, void **out, cuzk_errbuf *eb)
{
    *out = NULL;
    if (cuzk_gpu_device_count() <= 0)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "no CUDA device");
    return host_alloc_on(0, bytes, out, eb);
}

void cuzk_gpu_host_free_any(void *p)
{
    if (!p)
        return;
    cudaFreeHost(p);
    cudaGetLastError();
}

int cuzk_gpu_host_is_pinned(const void *p)
{
    if (!p || cuzk_gpu_device_count() <= 0)
        return 0;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

void cuzk_gpu_unpin(cuzk_gpu_ctx *ctx, void *p)
{
    cudaSetDevice(ctx->device);
    cudaHostUnregister(p);
    cudaGetLastError();
}

size_t cuzk_gpu_point_bytes(cuzk_gpu_curve curve, cuzk_gpu_group g)
{
    return (curve == CUZK_GPU_BN254 ? 64 : 96) * (g == CUZK_GPU_G2 ? 2 : 1);
}

size_t cuzk_gpu_point_limbs(cuzk_gpu_curve curve, cuzk_gpu_group g)
{
    return (curve == CUZK_GPU_BN254 ? 12 : 18) * (g == CUZK_GPU_G2 ? 2 : 1);
}

cuzk_err cuzk_gpu_points_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                const void *bytes, size_t n, cuzk_gpu_points **out,
                                cuzk_errbuf *eb)
{
    return cuzk_gpu_points_upload_ex(ctx, curve, g, 0, bytes, n, out, eb);
}

/* The map of the points at infinity (all zero bytes) among d's n points of `words` 16-byte
 * words: bit i of map word i / 32 (the map zeroed before), and their count. */
static __global__ void k_inf_map(const uint4 *d, size_t n, unsigned words, uint32_t *map,
                                 unsigned long long *cnt)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint4 *p = d + i * words;
    uint32_t acc = 0;
    for (unsigned k = 0; k < words; k++) {
        uint4 v = p[k];
        acc |= v.x | v.y | v.z | v.w;
    }
    if (!acc) {
        atomicOr(map + i / 32, 1u << (i % 32));
        atomicAdd(cnt, 1ull);
    }
}

/* Whether an MSM over p drops the entries of its points at infinity (gpu.h): sets with at least
 * 1/64 of their points at infinity. */
static bool inf_drop_on(const cuzk_gpu_points *p)
{
    return p->inf_bits && p->n_inf && p->n_inf >= p->n / 64;
}

/* Batch-affine accumulation for a G1 set (cuzk__gpu_ba_on's g1_pref): BLS12-381 sets with at
 * most 1/64 of their points at infinity (a key's C and H) or whose points at infinity the MSM
 * drops (A and B1); BN254 G1 is faster without it. */
static int ba_g1_pref(const cuzk_gpu_points *p)
{
    return p->curve == CUZK_GPU_BLS12_381 && p->group == CUZK_GPU_G1 &&
           (p->n_inf <= p->n / 64 || inf_drop_on(p));
}

/* An MSM's view of set p from its point `off` on. */
static cuzk__gpu_tab msm_tab(const cuzk_gpu_points *p, size_t off)
{
    cuzk__gpu_tab t = {p->n, p->t, p->s, ba_g1_pref(p), NULL, off};
    if (inf_drop_on(p))
        t.inf = p->inf_bits;
    return t;
}

cuzk_err cuzk_gpu_points_upload_ex(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                   size_t lead, const void *bytes, size_t n,
                                   cuzk_gpu_points **out, cuzk_errbuf *eb)
{
    *out = NULL;
    if (n >= 0x80000000u || lead >= 0x80000000u - n)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "GPU point sets hold at most 2^31 - 1 points");
    CU(cudaSetDevice(ctx->device));
    cuzk_gpu_points *p = (cuzk_gpu_points *)calloc(1, sizeof *p);
    if (!p)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU point set");
    size_t pb = cuzk_gpu_point_bytes(curve, g), sz = pb * (lead + n);
    cudaError_t e = cudaMalloc(&p->d, sz ? sz : 16);
    if (e != cudaSuccess) {
        cudaGetLastError();
        free(p);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU point set of %zu points (%zu bytes): %s",
                         lead + n, sz, cudaGetErrorString(e));
    }
    p->ctx = ctx;
    p->curve = curve;
    p->group = g;
    p->n = lead + n;
    p->t = 1;
    p->s = 0;
    /* On the context's stream, waited for: the MSMs run on that stream, which is
     * non-blocking, so it would not wait for a memset or copy on the legacy default stream
     * (cudaMemset and cudaMemcpy from pageable memory may return before the device has the
     * bytes). */
    if (lead)
        e = cudaMemsetAsync(p->d, 0, pb * lead, ctx->stream); /* all-zero bytes: infinity */
    if (e == cudaSuccess && n)
        e = cudaMemcpyAsync((uint8_t *)p->d + pb * lead, bytes, pb * n, cudaMemcpyHostToDevice,
                            ctx->stream);
    /* Its points at infinity, mapped and counted on the device (the count into 8 bytes after
     * the map, 8-byte aligned). */
    const size_t mb = ((size_t)cuzk__gpu_inf_map_bytes(p->n) + 7) & ~(size_t)7;
    unsigned long long h_inf = 0;
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&p->inf_bits, mb + 8);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(p->inf_bits, 0, mb + 8, ctx->stream);
    unsigned long long *d_inf = p->inf_bits ? (unsigned long long *)((char *)p->inf_bits + mb)
                                            : NULL;
    if (e == cudaSuccess && p->n) {
        k_inf_map<<<(unsigned)((p->n + 255) / 256), 256, 0, ctx->stream>>>(
            (const uint4 *)p->d, p->n, (unsigned)(pb / 16), p->inf_bits, d_inf);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&h_inf, d_inf, sizeof h_inf, cudaMemcpyDeviceToHost, ctx->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(ctx->stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        cudaFree(p->inf_bits);
        cudaFree(p->d);
        free(p);
        return cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaMemcpy(points)", e);
    }
    p->n_inf = (size_t)h_inf;
    *out = p;
    return CUZK_OK;
}

void cuzk_gpu_points_free(cuzk_gpu_points *pts)
{
    if (!pts)
        return;
    cudaSetDevice(pts->ctx->device);
    cudaFree(pts->d);
    cudaFree(pts->inf_bits);
    cudaGetLastError();
    free(pts);
}

size_t cuzk_gpu_points_count(const cuzk_gpu_points *pts) { return pts ? pts->n : 0; }

int cuzk_gpu_points_copies(const cuzk_gpu_points *pts) { return pts ? pts->t : 0; }

uint64_t cuzk_gpu_points_bytes(const cuzk_gpu_points *pts)
{
    if (!pts)
        return 0;
    /* A streamed set's points are the host's; its chunks are the context's buffers. */
    const uint64_t dev_pts = pts->host ? 0 : (uint64_t)pts->t * pts->n;
    return dev_pts * cuzk_gpu_point_bytes(pts->curve, pts->group) +
           cuzk__gpu_inf_map_bytes(pts->n);
}

cuzk_err cuzk_gpu_points_tables(cuzk_gpu_points *pts, int max_copies, cuzk_errbuf *eb)
{
    cuzk_gpu_ctx *ctx = pts->ctx;
    if (pts->host)
        return CUZK_OK; /* a streamed set has no tables (gpu.h) */
    const size_t pb = cuzk_gpu_point_bytes(pts->curve, pts->group);
    int c, t, s;
    cuzk__gpu_tab_plan(pts->n, pts->curve == CUZK_GPU_BN254 ? 254 : 255, max_copies, &c, &t,
                       &s);
    if (t == pts->t && (t == 1 || s == pts->s))
        return CUZK_OK;
    CU(cudaSetDevice(ctx->device));
    void *d = NULL;
    cudaError_t e = cudaMalloc(&d, (size_t)t * pts->n * pb);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuzk_errf(eb, CUZK_NO_MEMORY,
                         "GPU tables: %d copies of %zu points (%zu bytes): %s", t, pts->n,
                         (size_t)t * pts->n * pb, cudaGetErrorString(e));
    }
    double t0 = now_ms();
    cuzk_err r = CUZK_OK;
    /* On the context's stream, before the kernel that reads it (a plain cudaMemcpy between
     * device buffers returns before it is done, and the stream does not wait for it). */
    e = cudaMemcpyAsync(d, pts->d, pts->n * pb, cudaMemcpyDeviceToDevice, ctx->stream);
    if (e != cudaSuccess)
        r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaMemcpy(points to tables)", e);
    if (!r)
        r = tables_dispatch(ctx, pts->curve, pts->group, d, pts->n, t, s, eb);
    if (r) {
        cudaFree(d);
        cudaGetLastError();
        return r;
    }
    cudaFree(pts->d);
    pts->d = d;
    pts->t = t;
    pts->s = t > 1 ? s : 0;
    if (trace_on())
        fprintf(stderr, "[gpu %d] tables G%d n=%zu: %d copies %d bits apart (c=%d) in %.1f ms\n",
                ctx->device, pts->group == CUZK_GPU_G2 ? 2 : 1, pts->n, t, s, c,
                now_ms() - t0);
    return CUZK_OK;
}

#include "gpu/stream_api.cuh"

cuzk_err cuzk_gpu_scalars_stage(cuzk_gpu_ctx *ctx, const void *host, size_t n, size_t lo,
                                size_t hi, cuzk_errbuf *eb)
{
    /* First, before anything can fail: the slots no longer hold any MSM's preparation, and
     * the upload is not usable until its last range is queued. */
    ctx->prep.valid = 0;
    ctx->up.valid = 0;
    if (lo == 0) {
        ctx->up.host = (const uint8_t *)host;
        ctx->up.n = n;
        ctx->up.next = 0;
    }
    if (ctx->up.host != (const uint8_t *)host || ctx->up.n != n || lo != ctx->up.next ||
        hi < lo || hi > n)
        return cuzk_errf(eb, CUZK_INTERNAL,
                         "staged scalars: range [%zu, %zu) of %zu after [0, %zu) of another "
                         "buffer or out of order", lo, hi, n, ctx->up.next);
    CU(cudaSetDevice(ctx->device));
    void *d;
    SCRATCH(SCR_SC_IN, n * 32, d);
    if (hi > lo)
        CU(cudaMemcpyAsync((uint8_t *)d + lo * 32, (const uint8_t *)host + lo * 32,
                           (hi - lo) * 32, cudaMemcpyHostToDevice, ctx->stream));
    ctx->up.next = hi;
    ctx->up.valid = hi == n && n > 0;
    return CUZK_OK;
}

/* The upload of a split MSM's parts after the first, [from, P), on the upload stream, each
 * part's end recorded in up_ev[k] for the part to wait on. */
static cuzk_err split_queue_rest(cuzk_gpu_ctx *ctx, uint8_t *d_sc, const uint8_t *h,
                                 const size_t *beg, int from, int P, bool after_first,
                                 cuzk_errbuf *eb)
{
    if (after_first) {
        /* Behind the first part's copy: sharing the link would delay the first part. */
        CU(cudaEventRecord(ctx->up_ev[0], ctx->stream));
        CU(cudaStreamWaitEvent(ctx->up_stream, ctx->up_ev[0], 0));
    }
    for (int k = from; k < P; k++) {
        TRY(upload(ctx, d_sc + beg[k] * 32, h + beg[k] * 32, (beg[k + 1] - beg[k]) * 32,
                   ctx->up_stream, eb));
        CU(cudaEventRecord(ctx->up_ev[k], ctx->up_stream));
    }
    return CUZK_OK;
}

static cuzk_err msm_split_run(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, const char *base,
                              size_t count, const uint8_t *h, uint8_t *d_sc, bool mont,
                              const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)
{
    /* Each part's work must outlast the next part's upload: BN254 G1 works ~5 times as long
     * per scalar as the link takes to copy one, so each part is up to 4 times the one before
     * (D = 5); the other groups work longer, so D = 8. Parts grow by D - 1: with three, the
     * first (exposed) upload is 1 / (1 + (D - 1) + (D - 1)^2) of the scalars instead of 1 / D,
     * for one more merge of the buckets and smaller grids, which pays for BN254 G1 only. */
    const size_t pb = cuzk_gpu_point_bytes(pts->curve, pts->group);
    const unsigned D = pb <= 64 ? 5 : 8;
    int P = pb <= 64 ? 3 : 2;
    /* A page-locked buffer's later parts are queued at once (the DMA engine works alone); a
     * pageable one's go through the staging buffers on this thread, so after the first
     * part's work is queued (the copy then runs beside it), and in two parts only: with three
     * the second part's work would be queued only after the third's upload. */
    const bool direct = upload_direct(ctx, h, count * 32);
    if (!direct)
        P = 2;
    /* Part k is (D - 1)^k / sum_j (D - 1)^j of the scalars; fewer parts where the first would
     * hold fewer than two (an empty part would launch empty grids). */
    size_t beg[CUZK_GPU_SPLIT_MAXP + 1];
    double wsum, w;
    for (;; P--) {
        wsum = 0, w = 1;
        for (int k = 0; k < P; k++, w *= D - 1)
            wsum += w;
        if (P == 1 || (double)count >= 2 * wsum)
            break;
    }
    w = 1;
    beg[0] = 0;
    for (int k = 1; k < P; k++, w *= D - 1)
        beg[k] = beg[k - 1] + (size_t)((double)count * w / wsum);
    beg[P] = count;
    cuzk__gpu_part *pt = &ctx->part;
    memset(pt, 0, sizeof *pt);
    pt->on = true;
    pt->total = count;
    pt->parts = P;
    for (int k = 0; k < P; k++)
        if (beg[k + 1] - beg[k] > pt->nmax)
            pt->nmax = beg[k + 1] - beg[k];
    TRY(upload(ctx, d_sc, h, beg[1] * 32, ctx->stream, eb));
    if (direct)
        TRY(split_queue_rest(ctx, d_sc, h, beg, 1, P, true, eb));
    for (int k = 0; k < P; k++) {
        pt->first = k == 0;
        pt->last = k == P - 1;
        pt->base = beg[k];
        pt->ready = k ? ctx->up_ev[k] : NULL;
        TRY(msm_dispatch(ctx, pts->curve, pts->group, base + beg[k] * pb, beg[k + 1] - beg[k],
                         d_sc + beg[k] * 32, mont, tab, out, eb));
        if (k == 0 && !direct)
            TRY(split_queue_rest(ctx, d_sc, h, beg, 1, P, false, eb));
    }
    return CUZK_OK;
}

/* A one-off MSM over host scalars in two or three parts (CUZK_GPU_SCALARS_ONCE): the first
 * (BN254 G1: 1/21 of three; the others: 1/8 of two) uploaded, classified, sorted and
 * accumulated while the rest uploads on the other stream, then each next part into the same
 * buckets (cuzk__gpu_part, gpu_impl.cuh's msm_run). */
static cuzk_err msm_split(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, const char *base,
                          size_t count, const uint8_t *h, uint8_t *d_sc, bool mont,
                          const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)
{
    cuzk_err e = msm_split_run(ctx, pts, base, count, h, d_sc, mont, tab, out, eb);
    ctx->part.on = false;
    /* The second part's copy reads the caller's buffer: done before this returns, whatever
     * failed. */
    cudaError_t ce = cudaStreamSynchronize(ctx->up_stream);
    if (!e && ce != cudaSuccess)
        e = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaStreamSynchronize(up_stream)", ce);
    return e;
}

cuzk_err cuzk_gpu_msm(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                      size_t count, const void *scalars, unsigned flags, uint64_t *out,
                      cuzk_errbuf *eb)
{
    if (offset > pts->n || count > pts->n - offset)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "GPU MSM of %zu points at %zu: the set has %zu",
                         count, offset, pts->n);
    CU(cudaSetDevice(ctx->device));
    const bool mont = (flags & CUZK_GPU_SCALARS_MONT) != 0;
    /* Same scalars as the last MSM (the caller says so, and they are the same buffer, count,
     * form and curve): their upload and preparation are still on the device. */
    const bool check = (flags & CUZK_GPU_SCALARS_CHECK) && !mont;
    /* A streamed set's chunks prepare their own scalars (the upload is reused). */
    const bool reuse = (flags & CUZK_GPU_SCALARS_SAME) && !check && !pts->host &&
                       ctx->prep.valid && ctx->prep.host == scalars && ctx->prep.n == count &&
                       ctx->prep.mont == mont && ctx->prep.curve == (int)pts->curve;
    if (check)
        ctx->bad_scalar = UINT64_MAX;
    void *d_sc = NULL;
    double tt = now_ms(), t_up = 0;
    bool split = false;
    if (!reuse) {
        ctx->prep.valid = 0;
        const uint8_t *h = (const uint8_t *)scalars, *uh = ctx->up.host;
        if ((flags & CUZK_GPU_SCALARS_SAME) && ctx->up.valid && h >= uh &&
            (size_t)(h - uh) % 32 == 0 && (size_t)(h - uh) / 32 <= ctx->up.n &&
            count <= ctx->up.n - (size_t)(h - uh) / 32) {
            /* Inside the scalars uploaded last: read them there. */
            d_sc = (uint8_t *)ctx->scr[SCR_SC_IN] + (h - uh);
        } else {
            ctx->up.valid = 0;
            SCRATCH(SCR_SC_IN, count * 32, d_sc);
            /* BLS12-381 G2 from 2^24 scalars by default: below, its upload is short and the
             * later parts' extra launches and passes over the buckets cost what hiding the
             * upload saves. */
            const bool bls_g2 =
                pts->curve == CUZK_GPU_BLS12_381 && pts->group == CUZK_GPU_G2;
            split = (flags & CUZK_GPU_SCALARS_ONCE) && !pts->host &&
                    ctx->split_min && /* 0, or >= 8 */
                    count >= ctx->split_min && count <= ctx->part_max &&
                    (ctx->split_all || !bls_g2 || count >= CUZK_GPU_MSM_SPLIT_MIN_BLS_G2);
            if (!split) {
                TRY(upload(ctx, d_sc, scalars, count * 32, ctx->stream, eb));
                t_up = trace_lap(ctx, &tt);
            }
            ctx->up.host = h;
            ctx->up.n = count;
            ctx->up.next = count;
            ctx->up.valid = count > 0;
        }
    }
    const char *base = pts->host ? NULL
                                 : (const char *)pts->d +
                                       offset * cuzk_gpu_point_bytes(pts->curve, pts->group);
    ctx->prep_reuse = reuse;
    ctx->prep_check = check;
    const cuzk__gpu_tab tab = msm_tab(pts, offset);
    cuzk_err e = pts->host ? stream_msm(ctx, pts, offset, count, 1, NULL,
                                        (const uint8_t *)d_sc, mont, check, out, eb)
                 : split   ? msm_split(ctx, pts, base, count, (const uint8_t *)scalars,
                                       (uint8_t *)d_sc, mont, &tab, out, eb)
                           : msm_resident(ctx, pts->curve, pts->group, base, count,
                                          (const uint8_t *)d_sc, mont, &tab, out, eb);
    ctx->prep_reuse = false;
    ctx->prep_check = false;
    if (trace_on() && split)
        fprintf(stderr,
                "[gpu %d] msm G%d n=%zu: msm %.2f ms (in %d parts, each part's upload beside "
                "the work before it; %d ran alone)\n",
                ctx->device, pts->group == CUZK_GPU_G2 ? 2 : 1, count, trace_lap(ctx, &tt),
                ctx->part.parts, ctx->part.alone);
    else if (trace_on())
        fprintf(stderr, "[gpu %d] msm G%d n=%zu: upload %.2f ms, msm %.2f ms (%s)\n",
                ctx->device, pts->group == CUZK_GPU_G2 ? 2 : 1, count, t_up,
                trace_lap(ctx, &tt), reuse ? "prepared scalars reused" : "scalars prepared");
    if (e) {
        ctx->prep.valid = 0;
        ctx->up.valid = 0;
    } else if (split || pts->host || count > ctx->part_max) {
        ctx->prep.valid = 0; /* the slots hold the last part's (chunk's) preparation only */
    } else if (!reuse) {
        ctx->prep.host = scalars;
        ctx->prep.n = count;
        ctx->prep.mont = mont;
        ctx->prep.curve = (int)pts->curve;
        ctx->prep.valid = count > 0;
    }
    return e;
}

uint64_t cuzk_gpu_bad_scalar(const cuzk_gpu_ctx *ctx) { return ctx->bad_scalar; }

cuzk_err cuzk_gpu_sync(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    CU(cudaSetDevice(ctx->device));
    CU(cudaStreamSynchronize(ctx->stream));
    return CUZK_OK;
}

cuzk_err cuzk_gpu_fr_alloc(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n, cuzk_gpu_fr **out,
                           cuzk_errbuf *eb)
{
    *out = NULL;
    CU(cudaSetDevice(ctx->device));
    cuzk_gpu_fr *v = (cuzk_gpu_fr *)calloc(1, sizeof *v);
    if (!v)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU Fr vector");
    cudaError_t e = cudaMalloc(&v->d, n ? n * 32 : 32);
    if (e != cudaSuccess) {
        cudaGetLastError();
        free(v);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU Fr vector of %zu elements: %s", n,
                         cudaGetErrorString(e));
    }
    v->ctx = ctx;
    v->curve = curve;
    v->n = n;
    *out = v;
    return CUZK_OK;
}

void cuzk_gpu_fr_free(cuzk_gpu_fr *v)
{
    if (!v)
        return;
    cudaSetDevice(v->ctx->device);
    cudaFree(v->d);
    cudaGetLastError();
    free(v);
}

cuzk_err cuzk_gpu_fr_upload(cuzk_gpu_fr *v, const void *host, size_t n, cuzk_errbuf *eb)
{
    if (n > v->n)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "upload of %zu Fr into a vector of %zu", n,
                         v->n);
    CU(cudaSetDevice(v->ctx->device));
    CU(cudaMemcpyAsync(v->d, host, n * 32, cudaMemcpyHostToDevice, v->ctx->stream));
    CU(cudaStreamSynchronize(v->ctx->stream));
    return CUZK_OK;
}

cuzk_err cuzk_gpu_fr_download(cuzk_gpu_fr *v, void *host, size_t n, cuzk_errbuf *eb)
{
    if (n > v->n)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "download of %zu Fr from a vector of %zu", n,
                         v->n);
    CU(cudaSetDevice(v->ctx->device));
    CU(cudaMemcpyAsync(host, v->d, n * 32, cudaMemcpyDeviceToHost, v->ctx->stream));
    CU(cudaStreamSynchronize(v->ctx->stream));
    return CUZK_OK;
}

cuzk_err cuzk_gpu_ntt(cuzk_gpu_fr *v, int logn, int dir, const void *shift, cuzk_errbuf *eb)
{
    if (logn < 0 || logn > 40 || ((size_t)1 << logn) > v->n)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "NTT of 2^%d on a vector of %zu", logn, v->n);
    CU(cudaSetDevice(v->ctx->device));
    uint64_t s[4];
    if (shift)
        memcpy(s, shift, 32);
    if (v->curve == CUZK_GPU_BN254)
        return cuzk__gpu_bn254_fr_ntt(v->ctx, v->d, logn, dir, shift ? s : NULL, eb);
    return cuzk__gpu_bls12_381_fr_ntt(v->ctx, v->d, logn, dir, shift ? s : NULL, eb);
}

static cuzk_err h_check_pts(cuzk_gpu_curve curve, int logn, const cuzk_gpu_points *pts,
                            size_t offset, cuzk_errbuf *eb)
{
    size_t n = (size_t)1 << logn;
    if (pts && (pts->curve != curve || offset > pts->n || n > pts->n - offset))
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "H MSM needs %zu points at %zu of the given curve; the set has %zu", n,
                         offset, pts->n);
    return CUZK_OK;
}

/* The H step from a, b, c in the scratch slots SCR_HA/HB/HC, then h out and the H MSM. */
static cuzk_err h_finish(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, int logn, void *da, void *db,
                         void *dc, void *h_out, const cuzk_gpu_points *pts, size_t offset,
                         uint64_t *out, cuzk_errbuf *eb);

cuzk_err cuzk_gpu_h(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, int logn, const void *a,
                    const void *b, const void *c, void *h_out, const cuzk_gpu_points *pts,
                    size_t offset, uint64_t *out, cuzk_errbuf *eb)
{
    size_t n = (size_t)1 << logn;
    TRY(h_check_pts(curve, logn, pts, offset, eb));
    CU(cudaSetDevice(ctx->device));
    TRY(h_phase_msm_out(ctx, n, eb));
    void *da, *db, *dc;
    SCRATCH(SCR_HA, n * 32, da);
    SCRATCH(SCR_HB, n * 32, db);
    SCRATCH(SCR_HC, n * 32, dc);
    TRY(upload(ctx, da, a, n * 32, ctx->stream, eb));
    TRY(upload(ctx, db, b, n * 32, ctx->stream, eb));
    TRY(upload(ctx, dc, c, n * 32, ctx->stream, eb));
    return h_finish(ctx, curve, logn, da, db, dc, h_out, pts, offset, out, eb);
}

static cuzk_err h_finish(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, int logn, void *da, void *db,
                         void *dc, void *h_out, const cuzk_gpu_points *pts, size_t offset,
                         uint64_t *out, cuzk_errbuf *eb)
{
    size_t n = (size_t)1 << logn;
    double tt = now_ms();
    TRY(curve == CUZK_GPU_BN254 ? cuzk__gpu_bn254_fr_h(ctx, logn, da, db, dc, eb)
                                : cuzk__gpu_bls12_381_fr_h(ctx, logn, da, db, dc, eb));
    if (h_out) {
        CU(cudaMemcpyAsync(h_out, da, n * 32, cudaMemcpyDeviceToHost, ctx->stream));
    }
    CU(cudaStreamSynchronize(ctx->stream));
    double t_h = trace_lap(ctx, &tt);
    TRY(h_phase_h_out(ctx, n, eb));
    cuzk_err e = CUZK_OK;
    if (pts && pts->host) {
        e = stream_msm(ctx, pts, offset, n, 1, NULL, (const uint8_t *)da, true, false, out, eb);
    } else if (pts) {
        const char *base =
            (const char *)pts->d + offset * cuzk_gpu_point_bytes(pts->curve, pts->group);
        const cuzk__gpu_tab tab = msm_tab(pts, offset);
        e = msm_resident(ctx, curve, pts->group, base, n, (const uint8_t *)da, true, &tab, out,
                         eb);
    }
    if (trace_on())
        fprintf(stderr, "[gpu %d] H 2^%d: NTTs %.2f ms, H MSM %.2f ms\n", ctx->device, logn, t_h,
                trace_lap(ctx, &tt));
    return e;
}

cuzk_err cuzk_gpu_rows_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n_rows,
                              size_t n_signals, const uint64_t *const row_ptr[2],
                              const void *const rec[2], size_t rec_bytes, cuzk_gpu_rows **out,
                              cuzk_errbuf *eb)
{
    *out = NULL;
    if (rec_bytes < 40 || rec_bytes % 8 || rec_bytes > 4096)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "GPU rows: record size %zu (want a multiple of 8, 40 to 4096)", rec_bytes);
    if (n_signals >= ((size_t)1 << 32))
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "GPU rows: %zu signals (at most 2^32 - 1)",
                         n_signals);
    CU(cudaSetDevice(ctx->device));
    cuzk_gpu_rows *r = (cuzk_gpu_rows *)calloc(1, sizeof *r);
    if (!r)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU rows");
    r->ctx = ctx;
    r->curve = curve;
    r->n_rows = n_rows;
    r->n_signals = n_signals;
    r->stride = (uint32_t)rec_bytes;
    cuzk_err e = CUZK_OK;
    for (int m = 0; m < 2 && !e; m++) {
        size_t nrec = row_ptr[m][n_rows], rb = (n_rows + 1) * 8, cb = nrec * rec_bytes;
        cudaError_t ce = cudaMalloc((void **)&r->rp[m], rb);
        if (ce == cudaSuccess)
            ce = cudaMalloc(&r->rec[m], cb ? cb : 64);
        if (ce != cudaSuccess) {
            cudaGetLastError();
            e = cuzk_errf(eb, CUZK_NO_MEMORY,
                          "GPU rows of matrix %c: %zu rows, %zu terms (%zu bytes): %s", "AB"[m],
                          n_rows, nrec, rb + cb, cudaGetErrorString(ce));
            break;
        }
        r->bytes += rb + cb;
        e = upload(ctx, r->rp[m], row_ptr[m], rb, ctx->stream, eb);
        if (!e)
            e = upload(ctx, r->rec[m], rec[m], cb, ctx->stream, eb);
    }
    if (!e) {
        cudaError_t ce = cudaStreamSynchronize(ctx->stream);
        if (ce != cudaSuccess)
            e = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaStreamSynchronize(rows)", ce);
    }
    if (e) {
        cuzk_gpu_rows_free(r);
        return e;
    }
    *out = r;
    return CUZK_OK;
}

void cuzk_gpu_rows_free(cuzk_gpu_rows *rows)
{
    if (!rows)
        return;
    cudaSetDevice(rows->ctx->device);
    for (int m = 0; m < 2; m++) {
        cudaFree(rows->rp[m]);
        cudaFree(rows->rec[m]);
    }
    cudaGetLastError();
    free(rows);
}

size_t cuzk_gpu_rows_bytes(const cuzk_gpu_rows *rows) { return rows ? rows->bytes : 0; }

cuzk_err cuzk_gpu_h_witness(cuzk_gpu_ctx *ctx, const cuzk_gpu_rows *rows, int logn,
                            const void *witness, unsigned flags, void *const abc_out[3],
                            const cuzk_gpu_points *pts, size_t offset, uint64_t *out,
                            cuzk_errbuf *eb)
{
    if (logn < 0 || logn > 40 || rows->n_rows != ((size_t)1 << logn))
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "GPU synthesis: %zu rows for a domain of 2^%d",
                         rows->n_rows, logn);
    if (rows->ctx->device != ctx->device)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "GPU synthesis: rows on GPU %d, context on GPU %d", rows->ctx->device,
                         ctx->device);
    size_t n = (size_t)1 << logn;
    TRY(h_check_pts(rows->curve, logn, pts, offset, eb));
    CU(cudaSetDevice(ctx->device));
    const uint8_t *wh = (const uint8_t *)witness;
    size_t nw = rows->n_signals;
    void *d_w;
    if ((flags & CUZK_GPU_SCALARS_SAME) && ctx->up.valid && ctx->up.host == wh &&
        ctx->up.n >= nw) {
        d_w = ctx->scr[SCR_SC_IN]; /* A's MSM uploaded this witness */
    } else {
        ctx->up.valid = 0;
        ctx->prep.valid = 0;
        SCRATCH(SCR_SC_IN, nw * 32, d_w);
        TRY(upload(ctx, d_w, wh, nw * 32, ctx->stream, eb));
        ctx->up.host = wh;
        ctx->up.n = nw;
        ctx->up.next = nw;
        ctx->up.valid = nw > 0;
    }
    TRY(h_phase_msm_out(ctx, n, eb));
    void *da, *db, *dc;
    SCRATCH(SCR_HA, n * 32, da);
    SCRATCH(SCR_HB, n * 32, db);
    SCRATCH(SCR_HC, n * 32, dc);
    CU(cudaStreamSynchronize(ctx->stream));
    double t = now_ms();
    const uint64_t *const rp[2] = {rows->rp[0], rows->rp[1]};
    const void *const rec[2] = {rows->rec[0], rows->rec[1]};
    TRY(rows->curve == CUZK_GPU_BN254
            ? cuzk__gpu_bn254_fr_synth(ctx, n, rp, rec, rows->stride, d_w, da, db, dc, eb)
            : cuzk__gpu_bls12_381_fr_synth(ctx, n, rp, rec, rows->stride, d_w, da, db, dc, eb));
    CU(cudaStreamSynchronize(ctx->stream));
    ctx->synth_ms = now_ms() - t;
    if (trace_on())
        fprintf(stderr, "[gpu %d] synthesis 2^%d: %.2f ms\n", ctx->device, logn, ctx->synth_ms);
    if (abc_out) {
        void *d[3] = {da, db, dc};
        for (int k = 0; k < 3; k++)
            CU(cudaMemcpyAsync(abc_out[k], d[k], n * 32, cudaMemcpyDeviceToHost, ctx->stream));
    }
    return h_finish(ctx, rows->curve, logn, da, db, dc, NULL, pts, offset, out, eb);
}

double cuzk_gpu_last_synth_ms(const cuzk_gpu_ctx *ctx) { return ctx ? ctx->synth_ms : 0; }

} /* extern "C" */
