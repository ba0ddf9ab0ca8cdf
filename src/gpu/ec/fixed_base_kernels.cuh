/*
 * Fixed-base scalar multiplication k_i * G on the device (a proving key's points, made by the
 * test setup): the fixed-base windowed method (Brickell, Gordon, McCurley, Wilson, EUROCRYPT
 * '92) as src/groth16/fixedbase_tmpl.h runs it on the CPU. A table holds d 2^(w j) G for every
 * window j < nwin and digit d < 2^w in affine form; k G is one mixed XYZZ addition per nonzero
 * digit, no doublings. The sums go to affine with Montgomery's trick: each thread computes M
 * points, keeping the running product of their ZZZ, and inverts it once (1/ZZ follows from
 * 1/ZZZ since ZZ^3 = ZZZ^2: 1/Z = ZZ/ZZZ).
 *
 * One kernel, k_fb_sum, makes every point set from a selector that sums the point's terms:
 * the chain 2^i G (fb_sel_chain, one thread), the table from it (fb_sel_table: entry (j, d) is
 * the sum of 2^(w j + b) G over the bits b of d) and the products (fb_sel_scalar). Free of
 * block-level synchronisation, so tests/gpu/fixed_base_emu.cpp compiles it for the host
 * (CUZK_GPU_HOST_EMU) and checks it against the CPU's setup in CI.
 */
#ifndef CUZK_GPU_FIXED_BASE_KERNELS_CUH
#define CUZK_GPU_FIXED_BASE_KERNELS_CUH

#include "gpu/ec/curve.cuh"

namespace cuzk_gpu {

/* Threads per block, and points per thread (one inversion per FB_PER_THREAD points: about
 * 600 multiplications in BLS12-381's Fp against some 16 additions of 14 for each point). */
#define FB_THREADS 128
#define FB_PER_THREAD 32

/* Threads a k_fb_sum of n points with m points per thread runs; its scratch holds
 * 5 m fb_threads(n, m) field elements. */
static inline size_t fb_threads(size_t n, int m) { return (n + (size_t)m - 1) / (size_t)m; }

/* Point i = 2^i G, for one thread that asks for i = 0, 1, 2, ... in order (T = 1); the host
 * sets g and zeroes the rest. */
template <class F> struct fb_sel_chain {
    affine<F> g;
    xyzz<F> q; /* 2^i G for the next i */
    size_t next;
    DI void operator()(size_t, xyzz<F> &acc)
    {
        if (next++ == 0) {
            q = xyzz<F>::inf();
            xyzz_add_affine(q, g);
        }
        acc = q;
        xyzz_dbl(q);
    }
};

/* Entry (j, d) of the table, point i = j 2^w + d: the sum of bits[w j + b] for the bits b of
 * d (entry (j, 0) is infinity, never read). */
template <class F> struct fb_sel_table {
    const affine<F> *bits;
    int w;
    DI void operator()(size_t i, xyzz<F> &acc) const
    {
        const size_t j = i >> w;
        const unsigned d = (unsigned)(i & (((size_t)1 << w) - 1));
        for (int b = 0; b < w; b++)
            if ((d >> b) & 1)
                xyzz_add_affine(acc, bits[j * (size_t)w + (size_t)b]);
    }
};

/* Bits [off, off + w) of an 8-word little-endian scalar (w < 32; zero beyond bit 255). */
DI unsigned fb_digit(const uint32_t *k, unsigned off, int w)
{
    const unsigned li = off / 32, sh = off % 32;
    if (li >= 8)
        return 0;
    uint32_t v = k[li] >> sh;
    if (sh + (unsigned)w > 32 && li + 1 < 8)
        v |= k[li + 1] << (32 - sh);
    return v & ((1u << w) - 1);
}

/* Point i = k_i G: scalar i is 8 words at sc + 8 i, a canonical integer below r, or (mont)
 * Fr in Montgomery form; tab is fb_sel_table's table of nwin windows of w bits. */
template <class F, class FRC> struct fb_sel_scalar {
    const affine<F> *tab;
    const uint32_t *sc;
    int w, nwin;
    bool mont;
    DI void operator()(size_t i, xyzz<F> &acc) const
    {
        fe<FRC> k;
#pragma unroll
        for (int l = 0; l < 8; l++)
            k.v[l] = sc[8 * i + l];
        if (mont)
            k = from_mont(k);
        for (int j = 0; j < nwin; j++) {
            const unsigned d = fb_digit(k.v, (unsigned)(j * w), w);
            if (d)
                xyzz_add_affine(acc, tab[((size_t)j << w) + d]);
        }
    }
};

/* out[i] = sel's point i in affine form (infinity all zeros, coordinates canonical, the key's
 * layout) for i < n: thread t of T takes points m T + t for m < M. scr holds 5 M T elements:
 * X, Y, ZZ, ZZZ and the product of the ZZZ before it, for each point of each thread. */
template <class F, class Sel>
__global__ void __launch_bounds__(FB_THREADS)
k_fb_sum(Sel sel, size_t n, size_t T, int M, F *scr, affine<F> *out)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T)
        return;
    Sel sum = sel; /* fb_sel_chain keeps state */
    F prod = F::one();
    int m = 0;
    for (; m < M; m++) {
        const size_t i = (size_t)m * T + t;
        if (i >= n)
            break;
        xyzz<F> acc = xyzz<F>::inf();
        sum(i, acc);
        F *s = scr + (size_t)m * 5 * T + t;
        s[0] = acc.x;
        s[T] = acc.y;
        s[2 * T] = acc.zz;
        s[3 * T] = acc.zzz;
        s[4 * T] = prod;
        if (!acc.is_inf())
            prod = prod * acc.zzz;
    }
    F iv = inv(prod); /* 1 / the product of the thread's ZZZ */
    while (m-- > 0) {
        const size_t i = (size_t)m * T + t;
        const F *s = scr + (size_t)m * 5 * T + t;
        const F zz = s[2 * T];
        affine<F> a;
        if (zz.is_zero()) {
            a.x = F::zero();
            a.y = F::zero();
        } else {
            const F izzz = iv * s[4 * T];
            iv = iv * s[3 * T];
            const F izz = sqr(zz * izzz);
            a.x = canon(s[0] * izz);
            a.y = canon(s[T] * izzz);
        }
        out[i] = a;
    }
}

} // namespace cuzk_gpu

#endif
