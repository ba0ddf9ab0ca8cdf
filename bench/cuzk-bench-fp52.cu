/*
 * cuzk-bench-fp52: Montgomery products per second on the GPU, the backend's IMAD
 * multiplication (field.cuh's mul_inl, BN254's r kept below 2r as the NTT keeps it) against
 * the FP64-pipe one (src/gpu/fp52.cuh, 52-bit limbs in doubles), and both in one thread (do
 * the two pipes add up?). An experiment for the NTT's and MSMs' field products; not part of
 * any proof.
 *
 *   cuzk-bench-fp52 [--iters N] [--blocks-per-sm B] [--reps R]
 *
 * Each thread runs independent chains x <- x y (each product the next one's operand) for N
 * iterations (default 2000) over B blocks of 256 threads per SM (default 8); rows:
 *   imad CH     CH chains of field.cuh's product (words)
 *   fp52 CH     CH chains of fp52's product, operands and results kept as doubles
 *   fp52w CH    CH chains, operand kept in field.cuh's eight words and converted every
 *               product (from_words, the product, to_words: the NTT's case, twiddle in doubles)
 *   mix I+F     I imad chains and F fp52 chains in each thread
 *   trip ...    an NTT pass's trips (elements and twiddles in shared memory, four elements
 *               and two stages a trip, sums and differences modulo 2r) through either
 *               product, under the NTT passes' 40-register cap, 64 (fp52) and uncapped;
 *               fp52ps: fp52's product in product-scanning order (mont_mul_ps)
 * and prints the best of R runs (default 5): ms, products per second, products per SM per
 * clock (the device's reported clock), and for imad, the IMAD rate that is (264 per product).
 *
 * Check: every chain of every row starts from the same x and y (y scaled by 2^4 for fp52,
 * whose R is 2^260, so that both compute x y^N 2^(-256 N)); the last results of all chains are
 * compared with the imad row's, reduced below r, the trips' elements with the first trip row's:
 * any difference fails the run (exit 1).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/fp52.cuh"
#include "gpu/gpu_bn254.cuh" /* FR, FRL: the backend's BN254 r configurations */

using namespace cuzk_gpu;
namespace f52 = cuzk_fp52;

typedef f52::modulus<fr_p_h[0], fr_p_h[1], fr_p_h[2], fr_p_h[3]> P52;

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "cuzk-bench-fp52: %s: %s\n", #x, cudaGetErrorString(e_));         \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

/* Thread t's chain c starts from x (below 2^252 < r) and multiplies by y: hashes of t, c. */
__device__ uint32_t hash32(uint32_t a)
{
    a ^= a >> 16;
    a *= 0x7feb352d;
    a ^= a >> 15;
    a *= 0x846ca68b;
    a ^= a >> 16;
    return a;
}
__device__ fe<FRL> start(uint32_t t, uint32_t c, uint32_t salt)
{
    fe<FRL> x;
    for (int i = 0; i < 8; i++)
        x.v[i] = hash32(t * 131u + c * 17u + i * 0x9e3779b9u + salt);
    x.v[7] &= 0x0fffffffu;
    return x;
}
__device__ fe<FRL> y_of(uint32_t t) { return start(t, 99, 0x51ed27u); }
__device__ fe<FR> canon_of(const fe<FRL> &x)
{
    fe<FRL> c = canon(x);
    fe<FR> r;
    for (int i = 0; i < 8; i++)
        r.v[i] = c.v[i];
    return r;
}
/* w 2^4 mod r (w canonical): fp52's product x w' 2^-260 is then x w 2^-256. */
__device__ fe<FR> times16(fe<FR> r)
{
    for (int i = 0; i < 4; i++)
        r = r + r;
    return r;
}
__device__ fe<FR> y16(uint32_t t) { return times16(canon_of(y_of(t))); }
__device__ void to_d(const fe<FR> &a, double *d)
{
    uint64_t l[f52::L];
    f52::from_words(a.v, l);
    for (int k = 0; k < f52::L; k++)
        d[k] = (double)l[k];
}
__device__ fe<FR> from_d(const double *d)
{
    uint64_t l[f52::L];
    for (int k = 0; k < f52::L; k++)
        l[k] = (uint64_t)d[k];
    fe<FRL> x;
    f52::to_words(l, x.v);
    return canon_of(x);
}

/* out[(t * CH + c) * 8 ..]: each chain's last result, reduced below r. */
__device__ void put(uint32_t *out, uint32_t t, int c, int ch, const fe<FR> &x)
{
    for (int i = 0; i < 8; i++)
        out[((size_t)t * ch + c) * 8 + i] = x.v[i];
}

template <int CH> __global__ void k_imad(uint32_t *out, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    fe<FRL> x[CH];
    const fe<FRL> y = y_of(t);
#pragma unroll
    for (int c = 0; c < CH; c++)
        x[c] = start(t, c, 0);
    for (int n = 0; n < iters; n++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            x[c] = mul_inl(x[c], y);
#pragma unroll
    for (int c = 0; c < CH; c++)
        put(out, t, c, CH, canon_of(x[c]));
}

template <int CH> __global__ void k_fp52(uint32_t *out, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    double x[CH][f52::L], y[f52::L];
    to_d(y16(t), y);
#pragma unroll
    for (int c = 0; c < CH; c++)
        to_d(canon_of(start(t, c, 0)), x[c]);
    for (int n = 0; n < iters; n++)
#pragma unroll
        for (int c = 0; c < CH; c++)
            f52::mont_mul<P52>(x[c], y, x[c]);
#pragma unroll
    for (int c = 0; c < CH; c++)
        put(out, t, c, CH, from_d(x[c]));
}

template <int CH> __global__ void k_fp52w(uint32_t *out, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    double y[f52::L];
    to_d(y16(t), y);
    uint32_t x[CH][8];
#pragma unroll
    for (int c = 0; c < CH; c++) {
        const fe<FR> s = canon_of(start(t, c, 0));
        for (int i = 0; i < 8; i++)
            x[c][i] = s.v[i];
    }
    for (int n = 0; n < iters; n++)
#pragma unroll
        for (int c = 0; c < CH; c++) {
            uint64_t l[f52::L];
            double d[f52::L];
            f52::from_words(x[c], l);
#pragma unroll
            for (int k = 0; k < f52::L; k++)
                d[k] = f52::to_d(l[k]);
            f52::mont_mul<P52>(d, y, l);
            f52::to_words(l, x[c]);
        }
#pragma unroll
    for (int c = 0; c < CH; c++) {
        fe<FRL> v;
        for (int i = 0; i < 8; i++)
            v.v[i] = x[c][i];
        put(out, t, c, CH, canon_of(v));
    }
}

template <int CI, int CF> __global__ void k_mix(uint32_t *out, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    fe<FRL> xi[CI];
    const fe<FRL> yi = y_of(t);
    double xf[CF][f52::L], yf[f52::L];
    to_d(y16(t), yf);
#pragma unroll
    for (int c = 0; c < CI; c++)
        xi[c] = start(t, c, 0);
#pragma unroll
    for (int c = 0; c < CF; c++)
        to_d(canon_of(start(t, CI + c, 0)), xf[c]);
    for (int n = 0; n < iters; n++) {
#pragma unroll
        for (int c = 0; c < CI; c++)
            xi[c] = mul_inl(xi[c], yi);
#pragma unroll
        for (int c = 0; c < CF; c++)
            f52::mont_mul<P52>(xf[c], yf, xf[c]);
    }
#pragma unroll
    for (int c = 0; c < CI; c++)
        put(out, t, c, CI + CF, canon_of(xi[c]));
#pragma unroll
    for (int c = 0; c < CF; c++)
        put(out, t, CI + c, CI + CF, from_d(xf[c]));
}

/* One NTT pass's trips, as ntt_kernels.cuh's two-stages-per-trip kernel makes them: a block's
 * 1024 elements limb-major in shared memory, each thread's trip four elements read, two stages
 * of two butterflies (u + t, u - t modulo 2r, t = w v with w canonical and v below 2r) with
 * three twiddles read from a 64-entry table in shared memory, four elements stored; t by
 * field.cuh's product or fp52's (twiddle and v from words to limbs, t back to words; the
 * table's twiddles scaled by 2^4 for it). MINB: the launch bounds' blocks of 256 per SM (6:
 * 40 registers, as the NTT passes' 3 x 512; 4: 64). */
__device__ fe<FRL> sh_get(const uint32_t (*sh)[1024], int e)
{
    fe<FRL> x;
#pragma unroll
    for (int i = 0; i < 8; i++)
        x.v[i] = sh[i][e];
    return x;
}
__device__ void sh_put(uint32_t (*sh)[1024], int e, const fe<FRL> &x)
{
#pragma unroll
    for (int i = 0; i < 8; i++)
        sh[i][e] = x.v[i];
}
template <int USE52> __device__ fe<FRL> tw_mul(const uint32_t (*sw)[64], int j, const fe<FRL> &v)
{
    fe<FRL> w, r;
#pragma unroll
    for (int i = 0; i < 8; i++)
        w.v[i] = sw[i][j & 63];
    if (!USE52)
        return mul_inl(w, v);
    uint64_t l[f52::L];
    double wd[f52::L], vd[f52::L];
    f52::from_words(w.v, l);
#pragma unroll
    for (int k = 0; k < f52::L; k++)
        wd[k] = f52::to_d(l[k]);
    f52::from_words(v.v, l);
#pragma unroll
    for (int k = 0; k < f52::L; k++)
        vd[k] = f52::to_d(l[k]);
    if (USE52 == 2)
        f52::mont_mul_ps<P52>(wd, vd, l);
    else
        f52::mont_mul<P52>(wd, vd, l);
    f52::to_words(l, r.v);
    return r;
}
template <int USE52, int MINB> __global__ void __launch_bounds__(256, MINB)
k_trip(uint32_t *out, int iters)
{
    __shared__ uint32_t se[8][1024], sw[8][64];
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const int e0 = threadIdx.x, d = 256;
#pragma unroll 1
    for (int c = 0; c < 4; c++)
        sh_put(se, e0 + c * d, start(t, c, 0));
    if (threadIdx.x < 64) {
        fe<FR> w = canon_of(start(blockIdx.x, 200 + threadIdx.x, 0x2545f491u));
        if (USE52)
            w = times16(w);
#pragma unroll
        for (int i = 0; i < 8; i++)
            sw[i][threadIdx.x] = w.v[i];
    }
    __syncthreads();
    for (int n = 0; n < iters; n++) {
        fe<FRL> x0 = sh_get(se, e0);
        fe<FRL> tt = tw_mul<USE52>(sw, e0, sh_get(se, e0 + d));
        fe<FRL> a1 = x0 - tt;
        x0 = x0 + tt;
        fe<FRL> x2 = sh_get(se, e0 + 2 * d);
        tt = tw_mul<USE52>(sw, e0, sh_get(se, e0 + 3 * d));
        fe<FRL> a3 = x2 - tt;
        x2 = x2 + tt;
        tt = tw_mul<USE52>(sw, e0 + 1, x2);
        sh_put(se, e0, x0 + tt);
        sh_put(se, e0 + 2 * d, x0 - tt);
        tt = tw_mul<USE52>(sw, e0 + 2, a3);
        sh_put(se, e0 + d, a1 + tt);
        sh_put(se, e0 + 3 * d, a1 - tt);
    }
#pragma unroll 1
    for (int c = 0; c < 4; c++)
        put(out, t, c, 4, canon_of(sh_get(se, e0 + c * d)));
}

typedef void (*kern)(uint32_t *, int);
struct row {
    const char *name;
    kern k;
    int ch;   /* outputs per thread */
    int muls; /* products per thread per iteration */
    int grp;  /* 0: checked against imad 4's chains; 1: against the first trip row's */
};

int main(int argc, char **argv)
{
    int iters = 2000, bps = 8, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--blocks-per-sm") && i + 1 < argc)
            bps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: cuzk-bench-fp52 [--iters N] [--blocks-per-sm B] [--reps R]\n"
                            "  Montgomery products per second: field.cuh's IMAD product "
                            "against fp52.cuh's FP64 one (BN254 r)\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (iters < 1 || bps < 1 || reps < 1) {
        fprintf(stderr, "cuzk-bench-fp52: --iters, --blocks-per-sm and --reps must be >= 1\n");
        return 2;
    }
    int dev = 0, sms = 0, khz = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        fprintf(stderr, "cuzk-bench-fp52: no CUDA device\n");
        return 2;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const int threads = 256, blocks = sms * bps;
    const size_t nthr = (size_t)threads * blocks;
    const row rows[] = {
        {"imad 4", k_imad<4>, 4, 4, 0},
        {"imad 2", k_imad<2>, 2, 2, 0},
        {"fp52 1", k_fp52<1>, 1, 1, 0},
        {"fp52 2", k_fp52<2>, 2, 2, 0},
        {"fp52 4", k_fp52<4>, 4, 4, 0},
        {"fp52w 2", k_fp52w<2>, 2, 2, 0},
        {"fp52w 4", k_fp52w<4>, 4, 4, 0},
        {"mix 1+1", k_mix<1, 1>, 2, 2, 0},
        {"mix 2+2", k_mix<2, 2>, 4, 4, 0},
        {"mix 2+1", k_mix<2, 1>, 3, 3, 0},
        {"mix 1+2", k_mix<1, 2>, 3, 3, 0},
        {"trip imad 40 regs", k_trip<0, 6>, 4, 4, 1},
        {"trip imad", k_trip<0, 1>, 4, 4, 1},
        {"trip fp52 40 regs", k_trip<1, 6>, 4, 4, 1},
        {"trip fp52 64 regs", k_trip<1, 4>, 4, 4, 1},
        {"trip fp52", k_trip<1, 1>, 4, 4, 1},
        {"trip fp52ps 40 regs", k_trip<2, 6>, 4, 4, 1},
        {"trip fp52ps 64 regs", k_trip<2, 4>, 4, 4, 1},
        {"trip fp52ps", k_trip<2, 1>, 4, 4, 1},
    };
    const int nrows = (int)(sizeof rows / sizeof rows[0]);
    uint32_t *d_out, *ref[2], *h_out;
    CHECK(cudaMalloc(&d_out, nthr * 4 * 8 * 4));
    h_out = (uint32_t *)malloc(nthr * 4 * 8 * 4);
    ref[0] = (uint32_t *)malloc(nthr * 4 * 8 * 4);
    ref[1] = (uint32_t *)malloc(nthr * 4 * 8 * 4);
    if (!h_out || !ref[0] || !ref[1]) {
        fprintf(stderr, "cuzk-bench-fp52: out of host memory\n");
        return 2;
    }
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("# cuzk-bench-fp52: %s, %d SMs, %.0f MHz reported; %d blocks x %d threads, %d "
           "iterations, best of %d\n",
           prop.name, sms, khz / 1e3, blocks, threads, iters, reps);
    printf("| kernel | regs | ms | Gmul/s | mul / SM / clock | check |\n| --- | --- | --- | --- | "
           "--- | --- |\n");
    int bad = 0;
    for (int r = 0; r < nrows; r++) {
        cudaFuncAttributes fa;
        CHECK(cudaFuncGetAttributes(&fa, (const void *)rows[r].k));
        float best = 1e30f;
        for (int k = 0; k < reps; k++) {
            CHECK(cudaEventRecord(e0));
            rows[r].k<<<blocks, threads>>>(d_out, iters);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (ms < best)
                best = ms;
        }
        const int ch = rows[r].ch;
        CHECK(cudaMemcpy(h_out, d_out, nthr * ch * 32, cudaMemcpyDeviceToHost));
        /* Reference: the group's first row (imad 4's chains: the chain index is part of the
         * start value, so rows compare chain for chain up to their own count; the first trip
         * row's elements). */
        const char *ck = "ref";
        const int g = rows[r].grp;
        if (r == 0 || (g == 1 && rows[r - 1].grp == 0))
            memcpy(ref[g], h_out, nthr * 4 * 32);
        else {
            size_t diff = 0;
            for (size_t t = 0; t < nthr; t++)
                diff += memcmp(h_out + t * ch * 8, ref[g] + t * 4 * 8, (size_t)ch * 32) != 0;
            ck = diff ? "FAIL" : "ok";
            if (diff) {
                fprintf(stderr, "cuzk-bench-fp52: %s: %zu of %zu threads differ from %s\n",
                        rows[r].name, diff, nthr, g ? "trip imad 40 regs" : "imad 4");
                bad = 1;
            }
        }
        const double muls = (double)nthr * rows[r].muls * iters;
        printf("| %s | %d | %.3f | %.1f | %.4f | %s |\n", rows[r].name, fa.numRegs, best,
               muls / best / 1e6, muls / (best * 1e-3) / sms / (khz * 1e3), ck);
        fflush(stdout);
    }
    if (bad)
        return 1;
    cudaFree(d_out);
    free(h_out);
    free(ref[0]);
    free(ref[1]);
    return 0;
}
