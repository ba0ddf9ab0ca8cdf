/*
 * Host side of the fixed-base multiplication (fixed_base_kernels.cuh): the handle that holds a
 * generator's window table on the device, and the per-curve entry points that build the table
 * and run one chunk. gpu_<curve>_fixed_base.cu instantiate them; gpu_fixed_base.cu is the C API
 * (gpu.h: cuzk_gpu_fixed_base_*), which streams chunks through two buffers.
 */
#ifndef CUZK_GPU_FIXED_BASE_CUH
#define CUZK_GPU_FIXED_BASE_CUH

#include <string.h>

#include "gpu/ec/fixed_base_kernels.cuh"
#include "gpu/gpu_internal.cuh"

/* Window bits: 16 windows of 16 bits for 255-bit scalars, a table of 2^20 points (96 MiB for
 * BLS12-381 G1, 192 MiB for G2). */
#define CUZK_GPU_FB_WINDOW 16
/* Scalars per chunk: the largest power of two whose scratch (5 field elements a point) stays
 * within this (2^22 for G1, 2^21 for G2). */
#define CUZK_GPU_FB_SCRATCH_BYTES ((size_t)1 << 30)

struct cuzk_gpu_fixed_base {
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_curve curve;
    cuzk_gpu_group group;
    int w, nwin;
    size_t fe_bytes, point_bytes;
    size_t chunk; /* scalars per chunk */
    void *tab;    /* nwin 2^w affine points: entry (j, d) = d 2^(w j) G */
    void *scr;    /* 5 (cap + FB_PER_THREAD) field elements */
    void *sc[2];  /* cap scalars each */
    void *out[2]; /* cap points each */
    size_t cap;   /* scalars the buffers hold (grown to the largest chunk asked) */
    cudaStream_t copy; /* uploads and downloads, beside the kernels on ctx->stream */
    cudaEvent_t ev_up[2], ev_done[2], ev_copied[2];
};

/* Per curve and group: the table for the group's generator into fb->tab (fb->scr holds at
 * least 5 (nwin 2^w + FB_PER_THREAD) elements), and the n points k_i G of the scalars at d_sc
 * into d_out (fb->scr holds 5 (n + FB_PER_THREAD) elements), queued on ctx->stream. */
#define CUZK__GPU_FB_DECL(c, g)                                                               \
    cuzk_err cuzk__gpu_##c##_##g##_fb_table(cuzk_gpu_fixed_base *fb, cuzk_errbuf *eb);        \
    cuzk_err cuzk__gpu_##c##_##g##_fb_run(cuzk_gpu_fixed_base *fb, const void *d_sc, size_t n, \
                                          bool mont, void *d_out, cuzk_errbuf *eb);
CUZK__GPU_FB_DECL(bn254, g1)
CUZK__GPU_FB_DECL(bn254, g2)
CUZK__GPU_FB_DECL(bls12_381, g1)
CUZK__GPU_FB_DECL(bls12_381, g2)

namespace cuzk_gpu {

template <class F> static unsigned fb_blocks(size_t T)
{
    return (unsigned)((T + FB_THREADS - 1) / FB_THREADS);
}

/* The generator from src/ec's Montgomery limbs (x then y, each c0 then c1 for G2: the device's
 * layout) into the table; a temporary buffer holds the chain 2^i G. */
template <class F>
static cuzk_err fb_table_run(cuzk_gpu_fixed_base *fb, const uint64_t *gen, cuzk_errbuf *eb)
{
    cuzk_gpu_ctx *ctx = fb->ctx;
    const size_t nbits = (size_t)fb->nwin * (size_t)fb->w;
    affine<F> g;
    static_assert(sizeof g % 8 == 0, "limbs");
    memcpy(&g, gen, sizeof g);
    affine<F> *bits = NULL;
    CU(cudaMalloc((void **)&bits, nbits * sizeof(affine<F>)));
    cuzk_err r = CUZK_OK;
    do {
        fb_sel_chain<F> c;
        memset(&c, 0, sizeof c);
        c.g = g;
        k_fb_sum<F, fb_sel_chain<F>><<<1, 1, 0, ctx->stream>>>(c, nbits, 1, (int)nbits,
                                                               (F *)fb->scr, bits);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "k_fb_sum (chain)", e);
            break;
        }
        const size_t n = (size_t)fb->nwin << fb->w;
        const size_t T = fb_threads(n, FB_PER_THREAD);
        fb_sel_table<F> sel{bits, fb->w};
        k_fb_sum<F, fb_sel_table<F>><<<fb_blocks<F>(T), FB_THREADS, 0, ctx->stream>>>(
            sel, n, T, FB_PER_THREAD, (F *)fb->scr, (affine<F> *)fb->tab);
        if ((e = cudaGetLastError()) == cudaSuccess)
            e = cudaStreamSynchronize(ctx->stream);
        if (e != cudaSuccess)
            r = cuzk__gpu_fault(eb, __FILE__, __LINE__, "k_fb_sum (table)", e);
    } while (0);
    cudaFree(bits);
    return r;
}

template <class F, class FRC>
static cuzk_err fb_run(cuzk_gpu_fixed_base *fb, const void *d_sc, size_t n, bool mont,
                       void *d_out, cuzk_errbuf *eb)
{
    cuzk_gpu_ctx *ctx = fb->ctx;
    const size_t T = fb_threads(n, FB_PER_THREAD);
    fb_sel_scalar<F, FRC> sel{(const affine<F> *)fb->tab, (const uint32_t *)d_sc, fb->w,
                              fb->nwin, mont};
    k_fb_sum<F, fb_sel_scalar<F, FRC>><<<fb_blocks<F>(T), FB_THREADS, 0, ctx->stream>>>(
        sel, n, T, FB_PER_THREAD, (F *)fb->scr, (affine<F> *)d_out);
    LAUNCHED("k_fb_sum");
    return CUZK_OK;
}

} // namespace cuzk_gpu

/* One curve's entry points (in its gpu_<curve>_fixed_base.cu): G1 over F1, G2 over F2, the
 * generators' limbs as src/ec stores them. */
#define CUZK_GPU_FB_TU(c, F1, F2, FRC, G1X, G1Y, G2X, G2Y)                                   \
    cuzk_err cuzk__gpu_##c##_g1_fb_table(cuzk_gpu_fixed_base *fb, cuzk_errbuf *eb)          \
    {                                                                                       \
        static const struct {                                                               \
            struct {                                                                        \
                uint64_t l[sizeof(F1) / 8];                                                 \
            } x, y;                                                                         \
        } g = {G1X, G1Y};                                                                   \
        return cuzk_gpu::fb_table_run<F1>(fb, (const uint64_t *)&g, eb);                    \
    }                                                                                       \
    cuzk_err cuzk__gpu_##c##_g2_fb_table(cuzk_gpu_fixed_base *fb, cuzk_errbuf *eb)          \
    {                                                                                       \
        static const struct {                                                               \
            struct {                                                                        \
                struct {                                                                    \
                    uint64_t l[sizeof(F2) / 16];                                            \
                } c0, c1;                                                                   \
            } x, y;                                                                         \
        } g = {G2X, G2Y};                                                                   \
        return cuzk_gpu::fb_table_run<F2>(fb, (const uint64_t *)&g, eb);                    \
    }                                                                                       \
    cuzk_err cuzk__gpu_##c##_g1_fb_run(cuzk_gpu_fixed_base *fb, const void *d_sc, size_t n, \
                                       bool mont, void *d_out, cuzk_errbuf *eb)             \
    {                                                                                       \
        return cuzk_gpu::fb_run<F1, FRC>(fb, d_sc, n, mont, d_out, eb);                     \
    }                                                                                       \
    cuzk_err cuzk__gpu_##c##_g2_fb_run(cuzk_gpu_fixed_base *fb, const void *d_sc, size_t n, \
                                       bool mont, void *d_out, cuzk_errbuf *eb)             \
    {                                                                                       \
        return cuzk_gpu::fb_run<F2, FRC>(fb, d_sc, n, mont, d_out, eb);                     \
    }

#endif
