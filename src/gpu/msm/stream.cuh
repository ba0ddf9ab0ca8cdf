/*
 * MSMs over streamed point sets (gpu.h cuzk_gpu_points_host): the points stay in host memory
 * (page-locked, so the copies run by DMA at full bus speed) and an MSM over them runs chunk by
 * chunk: the copy of chunk k + 1 into one of two device buffers, on a copy stream, overlaps
 * the MSM of chunk k on the compute stream; each chunk's MSM is the resident one's over that
 * chunk's points and scalars, and the chunk sums are added on the host into one Jacobian
 * result. A batch of MSMs over the same points with several scalar vectors (the partitions of
 * one proof) copies each chunk once and runs every vector's MSM over it; the vectors' scalars
 * may stay in host memory too, their chunk's slices copied beside the points.
 *
 * Host code over the CUDA runtime only (no context): gpu_core.cu (stream_api.cuh) runs it with
 * the resident MSM, tests/gpu/stream_emu.cpp with emulated streams and a host MSM. The
 * includer provides the runtime (or emu_cuda.h's shims), cuzk/err.h and the CU / TRY macros.
 */
#ifndef CUZK_GPU_STREAM_CUH
#define CUZK_GPU_STREAM_CUH

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A context's chunk buffers: two of cap bytes for points and two of sc_cap bytes for the
 * scalars of a batch over host scalars (0 until one runs), the copy stream, and per buffer the
 * event that ends its copy (copied) and the event that ends the MSMs that read it (used). */
struct cuzk__gpu_stream_bufs {
    void *d[2], *ds[2];
    size_t cap, sc_cap;
    cudaStream_t copy;
    cudaEvent_t copied[2], used[2];
};

namespace cuzk_gpu_stream {

/* A streamed set as its MSMs read it: set points [0, lead) are at infinity and not stored,
 * point lead + i is host's point i; pb bytes a point, chunk points a chunk. */
struct view {
    const uint8_t *host;
    size_t lead, pb, chunk;
};

static inline size_t chunks(size_t count, size_t chunk)
{
    return count ? (count + chunk - 1) / chunk : 0;
}

/* The map of the points at infinity (all zero bytes; gpu_internal.cuh's inf_bits) of a set of
 * lead + n points, map words [w0, w1) (each 32 points; the words zeroed before); returns how
 * many of their points are at infinity. */
static size_t inf_map_words(const uint8_t *host, size_t pb, size_t lead, size_t n, uint32_t *map,
                            size_t w0, size_t w1)
{
    size_t cnt = 0;
    const size_t end = lead + n < 32 * w1 ? lead + n : 32 * w1;
    for (size_t i = 32 * w0; i < end; i++) {
        bool inf = true;
        if (i >= lead) {
            const uint8_t *p = host + (i - lead) * pb;
            for (size_t k = 0; k < pb && inf; k++)
                inf = p[k] == 0;
        }
        if (inf) {
            map[i / 32] |= 1u << (i % 32);
            cnt++;
        }
    }
    return cnt;
}

/* Queues on st the copy of set points [lo, lo + len) into dst: those below lead as zero bytes
 * (infinity), the rest from the host. */
static cuzk_err queue_chunk(const view &v, size_t lo, size_t len, uint8_t *dst, cudaStream_t st,
                            cuzk_errbuf *eb)
{
    const size_t z = lo >= v.lead ? 0 : v.lead - lo < len ? v.lead - lo : len;
    if (z)
        CU(cudaMemsetAsync(dst, 0, z * v.pb, st));
    if (len > z)
        CU(cudaMemcpyAsync(dst + z * v.pb, v.host + (lo + z - v.lead) * v.pb, (len - z) * v.pb,
                           cudaMemcpyHostToDevice, st));
    return CUZK_OK;
}

static void free_bufs(cuzk__gpu_stream_bufs *b)
{
    if (!b)
        return;
    if (b->copy) {
        cudaStreamSynchronize(b->copy);
        cudaStreamDestroy(b->copy);
    }
    for (int i = 0; i < 2; i++) {
        cudaFree(b->d[i]);
        cudaFree(b->ds[i]);
        if (b->copied[i])
            cudaEventDestroy(b->copied[i]);
        if (b->used[i])
            cudaEventDestroy(b->used[i]);
    }
    cudaGetLastError();
    free(b);
}

/* Grows the pair of buffers d (capacity *cap) to at least `bytes`, once compute's MSMs and
 * the copies are done with them. */
static cuzk_err grow_pair(cuzk__gpu_stream_bufs *b, void **d, size_t *cap, size_t bytes,
                          cudaStream_t compute, int device, const char *what, cuzk_errbuf *eb)
{
    if (*cap >= bytes)
        return CUZK_OK;
    CU(cudaStreamSynchronize(compute));
    CU(cudaStreamSynchronize(b->copy));
    for (int i = 0; i < 2; i++) {
        CU(cudaFree(d[i]));
        d[i] = NULL;
    }
    *cap = 0;
    for (int i = 0; i < 2; i++) {
        cudaError_t e = cudaMalloc(&d[i], bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            cudaFree(d[0]);
            d[0] = d[1] = NULL;
            return cuzk_errf(eb, CUZK_NO_MEMORY,
                             "GPU stream %s: cannot allocate 2 x %zu bytes on device %d: %s",
                             what, bytes, device, cudaGetErrorString(e));
        }
    }
    *cap = bytes;
    return CUZK_OK;
}

/* *pb with two point buffers of at least `bytes` and, when sc_bytes, two scalar buffers of at
 * least sc_bytes (created on first use, grown when a set's chunks or a batch are larger;
 * compute: the stream whose MSMs may still read the old buffers). */
static cuzk_err ensure_bufs(cuzk__gpu_stream_bufs **pbufs, size_t bytes, size_t sc_bytes,
                            cudaStream_t compute, int device, cuzk_errbuf *eb)
{
    cuzk__gpu_stream_bufs *b = *pbufs;
    if (!b) {
        b = (cuzk__gpu_stream_bufs *)calloc(1, sizeof *b);
        if (!b)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU stream buffers");
        cudaError_t e = cudaStreamCreateWithFlags(&b->copy, cudaStreamNonBlocking);
        for (int i = 0; i < 2 && e == cudaSuccess; i++) {
            e = cudaEventCreateWithFlags(&b->copied[i], cudaEventDisableTiming);
            if (e == cudaSuccess)
                e = cudaEventCreateWithFlags(&b->used[i], cudaEventDisableTiming);
        }
        if (e != cudaSuccess) {
            free_bufs(b);
            CU(e);
        }
        *pbufs = b;
    }
    TRY(grow_pair(b, b->d, &b->cap, bytes, compute, device, "buffers", eb));
    return grow_pair(b, b->ds, &b->sc_cap, sc_bytes, compute, device, "scalar buffers", eb);
}

/* out[j] (limbs words each, Jacobian; j < nb) = the MSM of scalar vector j over set points
 * [offset, offset + count) of v, chunk by chunk, each chunk copied once for the nb MSMs:
 * msm(d_pts, set_lo, len, lo, j, d_sc, part) runs on st the resident MSM of vector j over the
 * len points at d_pts (set points set_lo ..) from the vector's scalar lo on, its sum to part.
 * With hsc (nb host vectors of count scalars, 32 bytes each, page-locked for the copies to
 * overlap), each chunk's slices are copied beside its points and d_sc is vector j's slice on
 * the device (b's scalar buffers hold nb slices of a chunk); without, d_sc is NULL and msm
 * finds its scalars itself. add(acc, part) adds two sums. b's buffers hold a chunk. The copy
 * stream is idle on return. */
template <class MSM, class ADD>
static cuzk_err run_batch(cuzk__gpu_stream_bufs *b, const view &v, cudaStream_t st,
                          size_t offset, size_t count, size_t limbs, size_t nb,
                          const uint8_t *const *hsc, MSM msm, ADD add, uint64_t *out,
                          cuzk_errbuf *eb)
{
    const size_t K = chunks(count, v.chunk);
    uint64_t part[36];
    memset(out, 0, nb * limbs * 8); /* Z = 0: infinity, the sum of no chunk */
    auto queue = [&](size_t k) -> cuzk_err {
        const size_t lo = k * v.chunk, len = count - lo < v.chunk ? count - lo : v.chunk;
        /* The buffer's previous chunk is summed before its next copy lands. */
        CU(cudaStreamWaitEvent(b->copy, b->used[k & 1], 0));
        TRY(queue_chunk(v, offset + lo, len, (uint8_t *)b->d[k & 1], b->copy, eb));
        for (size_t j = 0; hsc && j < nb; j++)
            CU(cudaMemcpyAsync((uint8_t *)b->ds[k & 1] + j * v.chunk * 32, hsc[j] + lo * 32,
                               len * 32, cudaMemcpyHostToDevice, b->copy));
        CU(cudaEventRecord(b->copied[k & 1], b->copy));
        return CUZK_OK;
    };
    cuzk_err e = K ? queue(0) : CUZK_OK;
    for (size_t k = 0; k < K && !e; k++) {
        const size_t lo = k * v.chunk, len = count - lo < v.chunk ? count - lo : v.chunk;
        if (k + 1 < K && (e = queue(k + 1)))
            break;
        cudaError_t ce = cudaStreamWaitEvent(st, b->copied[k & 1], 0);
        if (ce != cudaSuccess) {
            e = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaStreamWaitEvent(copied)", ce);
            break;
        }
        for (size_t j = 0; j < nb && !e; j++) {
            const uint8_t *d_sc =
                hsc ? (const uint8_t *)b->ds[k & 1] + j * v.chunk * 32 : NULL;
            if ((e = msm(b->d[k & 1], offset + lo, len, lo, j, d_sc, part)))
                break;
            if (k == 0)
                memcpy(out + j * limbs, part, limbs * 8);
            else
                add(out + j * limbs, part);
        }
        if (e)
            break;
        if ((ce = cudaEventRecord(b->used[k & 1], st)) != cudaSuccess) {
            e = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaEventRecord(used)", ce);
            break;
        }
    }
    /* A failed chunk may leave copies queued: they read the caller's memory. */
    cudaError_t ce = cudaStreamSynchronize(b->copy);
    if (!e && ce != cudaSuccess)
        e = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaStreamSynchronize(copy)", ce);
    return e;
}

} // namespace cuzk_gpu_stream

#endif
