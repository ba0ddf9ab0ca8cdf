/*
 * The C API of the fixed-base multiplication (gpu.h, cuzk_gpu_fixed_base_*): a handle with the
 * generator's table on the device, and the products streamed in chunks through two buffers, so
 * that chunk c's kernel runs while chunk c - 1's points go back to the host and chunk c + 1's
 * scalars come in (on a second stream).
 */
#include <stdlib.h>

#include "gpu/fixed_base.cuh"

typedef cuzk_err (*fb_table_fn)(cuzk_gpu_fixed_base *, cuzk_errbuf *);
typedef cuzk_err (*fb_run_fn)(cuzk_gpu_fixed_base *, const void *, size_t, bool, void *,
                              cuzk_errbuf *);

static const fb_table_fn fb_table[2][2] = {
    {cuzk__gpu_bn254_g1_fb_table, cuzk__gpu_bn254_g2_fb_table},
    {cuzk__gpu_bls12_381_g1_fb_table, cuzk__gpu_bls12_381_g2_fb_table},
};
static const fb_run_fn fb_run[2][2] = {
    {cuzk__gpu_bn254_g1_fb_run, cuzk__gpu_bn254_g2_fb_run},
    {cuzk__gpu_bls12_381_g1_fb_run, cuzk__gpu_bls12_381_g2_fb_run},
};

static void fb_free_buffers(cuzk_gpu_fixed_base *fb)
{
    cudaFree(fb->scr);
    fb->scr = NULL;
    for (int b = 0; b < 2; b++) {
        cudaFree(fb->sc[b]);
        cudaFree(fb->out[b]);
        fb->sc[b] = fb->out[b] = NULL;
    }
    fb->cap = 0;
}

/* Buffers for chunks of `cap` scalars (the scratch also for the table's nwin 2^w points when
 * `table`). */
static cuzk_err fb_grow(cuzk_gpu_fixed_base *fb, size_t cap, bool table, cuzk_errbuf *eb)
{
    if (cap <= fb->cap && !table)
        return CUZK_OK;
    fb_free_buffers(fb);
    size_t pts = cap;
    if (table && ((size_t)fb->nwin << fb->w) > pts)
        pts = (size_t)fb->nwin << fb->w;
    CU(cudaMalloc(&fb->scr, 5 * (pts + FB_PER_THREAD) * fb->fe_bytes));
    for (int b = 0; b < 2; b++) {
        CU(cudaMalloc(&fb->sc[b], cap * 32));
        CU(cudaMalloc(&fb->out[b], cap * fb->point_bytes));
    }
    fb->cap = cap;
    return CUZK_OK;
}

cuzk_err cuzk_gpu_fixed_base_new(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                 cuzk_gpu_fixed_base **out, cuzk_errbuf *eb)
{
    *out = NULL;
    if ((curve != CUZK_GPU_BN254 && curve != CUZK_GPU_BLS12_381) ||
        (g != CUZK_GPU_G1 && g != CUZK_GPU_G2))
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "fixed-base multiplication: bad curve/group");
    CU(cudaSetDevice(ctx->device));
    cuzk_gpu_fixed_base *fb = (cuzk_gpu_fixed_base *)calloc(1, sizeof *fb);
    if (!fb)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "fixed-base multiplication: out of memory");
    fb->ctx = ctx;
    fb->curve = curve;
    fb->group = g;
    fb->w = CUZK_GPU_FB_WINDOW;
    fb->nwin = (255 + fb->w - 1) / fb->w;
    fb->point_bytes = cuzk_gpu_point_bytes(curve, g);
    fb->fe_bytes = fb->point_bytes / 2;
    fb->chunk = 1;
    while (5 * (2 * fb->chunk + FB_PER_THREAD) * fb->fe_bytes <= CUZK_GPU_FB_SCRATCH_BYTES)
        fb->chunk *= 2;
    *out = fb;
    cudaError_t e = cudaStreamCreateWithFlags(&fb->copy, cudaStreamNonBlocking);
    for (int b = 0; b < 2 && e == cudaSuccess; b++) {
        e = cudaEventCreateWithFlags(&fb->ev_up[b], cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&fb->ev_done[b], cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&fb->ev_copied[b], cudaEventDisableTiming);
    }
    cuzk_err r = CUZK_OK;
    if (e != cudaSuccess)
        r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaStreamCreate/cudaEventCreate", e);
    if (!r) {
        e = cudaMalloc(&fb->tab, ((size_t)fb->nwin << fb->w) * fb->point_bytes);
        if (e != cudaSuccess)
            r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "cudaMalloc (table)", e);
    }
    if (!r)
        r = fb_grow(fb, 1, true, eb);
    if (!r)
        r = fb_table[curve][g - 1](fb, eb);
    if (!r)
        fb_free_buffers(fb); /* the table's scratch; mul grows its own */
    if (r) {
        cuzk_gpu_fixed_base_free(fb);
        *out = NULL;
    }
    return r;
}

void cuzk_gpu_fixed_base_free(cuzk_gpu_fixed_base *fb)
{
    if (!fb)
        return;
    cudaSetDevice(fb->ctx->device);
    if (fb->copy)
        cudaStreamSynchronize(fb->copy);
    cudaStreamSynchronize(fb->ctx->stream);
    fb_free_buffers(fb);
    cudaFree(fb->tab);
    for (int b = 0; b < 2; b++) {
        if (fb->ev_up[b])
            cudaEventDestroy(fb->ev_up[b]);
        if (fb->ev_done[b])
            cudaEventDestroy(fb->ev_done[b]);
        if (fb->ev_copied[b])
            cudaEventDestroy(fb->ev_copied[b]);
    }
    if (fb->copy)
        cudaStreamDestroy(fb->copy);
    free(fb);
}

/* Chunk c: its scalars up on the copy stream (buffer c & 1 is free once chunk c - 2's points
 * went down, earlier on that stream), its kernel on ctx->stream after them and after chunk
 * c - 2's download, then chunk c - 1's points down while it runs. */
static cuzk_err fb_mul_run(cuzk_gpu_fixed_base *fb, const uint8_t *sc, size_t n, bool mont,
                           uint8_t *out, cuzk_errbuf *eb)
{
    cudaStream_t ks = fb->ctx->stream;
    const size_t nc = (n + fb->cap - 1) / fb->cap;
    for (size_t c = 0; c <= nc; c++) {
        if (c < nc) {
            const int b = (int)(c & 1);
            const size_t lo = c * fb->cap, cnt = n - lo < fb->cap ? n - lo : fb->cap;
            CU(cudaMemcpyAsync(fb->sc[b], sc + lo * 32, cnt * 32, cudaMemcpyHostToDevice,
                               fb->copy));
            CU(cudaEventRecord(fb->ev_up[b], fb->copy));
            CU(cudaStreamWaitEvent(ks, fb->ev_up[b], 0));
            if (c >= 2)
                CU(cudaStreamWaitEvent(ks, fb->ev_copied[b], 0));
            TRY(fb_run[fb->curve][fb->group - 1](fb, fb->sc[b], cnt, mont, fb->out[b], eb));
            CU(cudaEventRecord(fb->ev_done[b], ks));
        }
        if (c >= 1) {
            const int b = (int)((c - 1) & 1);
            const size_t lo = (c - 1) * fb->cap, cnt = n - lo < fb->cap ? n - lo : fb->cap;
            CU(cudaStreamWaitEvent(fb->copy, fb->ev_done[b], 0));
            CU(cudaMemcpyAsync(out + lo * fb->point_bytes, fb->out[b], cnt * fb->point_bytes,
                               cudaMemcpyDeviceToHost, fb->copy));
            CU(cudaEventRecord(fb->ev_copied[b], fb->copy));
        }
    }
    CU(cudaStreamSynchronize(fb->copy));
    CU(cudaStreamSynchronize(ks));
    return CUZK_OK;
}

cuzk_err cuzk_gpu_fixed_base_mul(cuzk_gpu_fixed_base *fb, const void *scalars, size_t n,
                                 unsigned flags, void *out, cuzk_errbuf *eb)
{
    if (n == 0)
        return CUZK_OK;
    CU(cudaSetDevice(fb->ctx->device));
    TRY(fb_grow(fb, n < fb->chunk ? n : fb->chunk, false, eb));
    cuzk_err r = fb_mul_run(fb, (const uint8_t *)scalars, n, (flags & CUZK_GPU_SCALARS_MONT) != 0,
                            (uint8_t *)out, eb);
    if (r) { /* leave no copy or kernel running on buffers the caller may free */
        cudaStreamSynchronize(fb->copy);
        cudaStreamSynchronize(fb->ctx->stream);
    }
    return r;
}
