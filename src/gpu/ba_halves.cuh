/*
 * G2's pair sums with each Fp2 element split over two lanes (CUZK_GPU_BA_HALVES, opt-in).
 *
 * k_ba_pairs (msm_kernels.cuh) gives each slice one thread, which holds whole Fp2 elements and
 * makes each Fp2 product as two or three Fp products one after the other. Its G2 instances sit
 * at their register caps (168 registers, 3 warps per scheduler) and are bound by the latency
 * of those dependent products, not by the multiply-adds (PERF-NOTES, twenty-third pass: a
 * third of the issue slots used). k_ba_pairs_h gives a slice two adjacent lanes (lane ^ 1):
 * lane h holds coordinate c_h of every Fp2 value, so a lane holds half the words, and an Fp2
 * product is one Fp sum of two products per lane, with one reduction (field.cuh's
 * mul_add_call), the partner's coordinates fetched by warp shuffles:
 *   lane 0: c0 = a0 b0 - a1 b1 = a0 b0 + a1 (p - b1)
 *   lane 1: c1 = a0 b1 + a1 b0
 * Both lanes run the same instructions (the operands selected by h), so the pair never
 * diverges. A square is one product per lane: c0 = (a0 + a1)(a0 - a1), c1 = (a1 + a1) a0. The
 * multiply-adds per Fp2 product are those of BN254's two sums (784; BLS12-381 1752 against
 * Karatsuba's 1764), the chain each lane waits on half as long.
 *
 * Its outputs are k_ba_pairs's, word for word (both make canonical Fp values): the pair sums,
 * the quads' prefix products, the slice's product, the quad count and the two masks, which
 * k_ba_quads then reads as before. tests/gpu/msm_emu.cpp runs both on the same chunks and
 * compares every output word; its host emulation runs the lanes as coroutines that meet at
 * each shuffle (tests/gpu/emu_cuda.h).
 */
#ifndef CUZK_GPU_BA_HALVES_CUH
#define CUZK_GPU_BA_HALVES_CUH

#include "gpu/msm_kernels.cuh"

namespace cuzk_gpu
{

/* The C of fe2<C> (void for any other field). */
template <class F> struct fe2_base {
    typedef void type;
};
template <class C> struct fe2_base<fe2<C>> {
    typedef C type;
};

/* A lane's place in its pair: the pair's shuffle mask and the coordinate it holds. */
struct half_lane {
    uint32_t mask;
    uint32_t h;
};

/* The partner's words (every lane of the pair calls it: a sync point of the pair). */
template <class C> DI fe<C> par_of(const fe<C> &a, const half_lane &hl)
{
    fe<C> r;
#pragma unroll
    for (int k = 0; k < C::N; k++)
        r.v[k] = __shfl_xor_sync(hl.mask, a.v[k], 1);
    return r;
}
/* Bits set in both lanes' b. */
DI uint32_t both_bits(uint32_t b, const half_lane &hl)
{
    return b & __shfl_xor_sync(hl.mask, b, 1);
}

template <class C> DI fe<C> sel_fe(uint32_t h, const fe<C> &a1, const fe<C> &a0)
{
    fe<C> r;
#pragma unroll
    for (int k = 0; k < C::N; k++)
        r.v[k] = h ? a1.v[k] : a0.v[k];
    return r;
}

/* Coordinate h of the Fp2 product a b (a, b: this lane's coordinates). */
template <class C> DI fe<C> mul_h(const fe<C> &a, const fe<C> &b, const half_lane &hl)
{
    static_assert(C::N == 8 || C::N == 12, "Fp2 over BN254's or BLS12-381's Fp");
    const fe<C> ap = par_of(a, hl), bp = par_of(b, hl);
    /* lane 0: a0 b0 + a1 (p - b1); lane 1: a1 b0 + a0 b1 (mul_dual_inl: d' up to p) */
    const fe<C> nb = mod_minus<C, false>(bp);
    return mul_add_call(a, sel_fe(hl.h, bp, b), ap, sel_fe(hl.h, b, nb));
}
/* a b + c d' and e f + g h' (d', h' up to p) with one reduction each, their rows interleaved:
 * four carry chains in flight instead of two (field.cuh's mul_pair_call for two sums). */
template <class C>
__device__ __noinline__ fe_pair<C> mul_dual_pair_call(const fe<C> a, const fe<C> b, const fe<C> c,
                                                      const fe<C> d, const fe<C> e, const fe<C> f,
                                                      const fe<C> g, const fe<C> h)
{
    constexpr int N = C::N;
    uint32_t e0[N], o0[N], e1[N], o1[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row_sub<C>(e0, o0, a, b.v[i], c, d.v[i], i == 0);
        mont_row_sub<C>(e1, o1, e, f.v[i], g, h.v[i], i == 0);
        mont_row_sub<C>(o0, e0, a, b.v[i + 1], c, d.v[i + 1], false);
        mont_row_sub<C>(o1, e1, e, f.v[i + 1], g, h.v[i + 1], false);
    }
    fe_pair<C> r;
    r.r0 = mont_fin<C, true>(e0, o0);
    r.r1 = mont_fin<C, true>(e1, o1);
    return r;
}
/* Coordinate h of the Fp2 products a0 b0 and a1 b1, made together (mul_dual_pair_call). */
template <class C>
DI void mul2_h(fe<C> &r0, const fe<C> &a0, const fe<C> &b0, fe<C> &r1, const fe<C> &a1,
               const fe<C> &b1, const half_lane &hl)
{
    const fe<C> ap0 = par_of(a0, hl), bp0 = par_of(b0, hl);
    const fe<C> ap1 = par_of(a1, hl), bp1 = par_of(b1, hl);
    const fe<C> nb0 = mod_minus<C, false>(bp0), nb1 = mod_minus<C, false>(bp1);
    const fe_pair<C> r = mul_dual_pair_call(a0, sel_fe(hl.h, bp0, b0), ap0, sel_fe(hl.h, b0, nb0),
                                            a1, sel_fe(hl.h, bp1, b1), ap1, sel_fe(hl.h, b1, nb1));
    r0 = r.r0;
    r1 = r.r1;
}
/* Coordinate h of a^2. */
template <class C> DI fe<C> sqr_h(const fe<C> &a, const half_lane &hl)
{
    const fe<C> ap = par_of(a, hl);
    return mul_call(hl.h ? a + a : a + ap, hl.h ? ap : a - ap);
}

/* Bit 0: a is zero (both coordinates), bit 1: b is, bit 2: a == b. */
template <class C> DI uint32_t zero_eq_h(const fe<C> &a, const fe<C> &b, const half_lane &hl)
{
    return both_bits((uint32_t)a.is_zero() | (uint32_t)b.is_zero() << 1 | (uint32_t)(a == b) << 2,
                     hl);
}

/* This lane's coordinates of the point value v names (negated with v's sign bit, as ld_pt). */
template <class C> DI affine<fe<C>> ld_pt_h(const affine<fe2<C>> *pts, uint32_t v, uint32_t h)
{
    const fe<C> *e = (const fe<C> *)(pts + (v & 0x7fffffffu));
    affine<fe<C>> r;
    r.x = ld16(e + h);
    r.y = ld16(e + 2 + h);
    if (v >> 31)
        r.y = -r.y;
    return r;
}
/* This lane's coordinate of Fp2 element e (a pointer to it). */
template <class C> DI fe<C> ld_h(const fe2<C> *e, uint32_t h)
{
    return ld16v((const fe<C> *)e + h);
}
template <class C> DI void st_h(fe2<C> *e, uint32_t h, const fe<C> &a)
{
    st16((fe<C> *)e + h, a);
}

#ifndef CUZK_GPU_BA_HALVES_MINB_64
#define CUZK_GPU_BA_HALVES_MINB_64 8
#endif
#ifndef CUZK_GPU_BA_HALVES_MINB_96
#define CUZK_GPU_BA_HALVES_MINB_96 6
#endif
template <class C> constexpr int ba_halves_minb()
{
    return C::N == 8 ? CUZK_GPU_BA_HALVES_MINB_64 : CUZK_GPU_BA_HALVES_MINB_96;
}

/* k_ba_pairs for F = fe2<C> (G2), two lanes a slice: 2 Tc threads for the chunk's Tc slices.
 * The same walk as ba_pair_sums's for G2 (no JOIN: a pair with a point at infinity puts the
 * other point, P == +-Q or x = 0 goes to spec) and k_ba_pairs's put (the quads). PAIR: the
 * pair's inverse and the next running inverse (independent) in one call, rows interleaved
 * (CUZK_GPU_BA_HALVES 2), else one after the other (1). */
template <class C, bool ALL_ZERO, bool PAIR>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C>())
    k_ba_pairs_h(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
                 size_t Tc, const affine<fe2<C>> *pts, fe2<C> *pre, fe2<C> *prod, uint8_t *npre,
                 affine<fe2<C>> *psum, uint64_t *masks)
{
    typedef fe<C> H;
    typedef fe2<C> F;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, tl = g >> 1;
    if (tl >= Tc)
        return; /* both lanes of a pair (Tc counts pairs) */
    const half_lane hl = {3u << (threadIdx.x & 30), (uint32_t)(g & 1)};
    const uint32_t h = hl.h;
    const size_t beg = (t0 + tl) * L;
    const uint32_t P = L / 2;
    uint32_t k = 0;
    uint64_t quad = 0, spec = 0;
    H qacc = h ? H::zero() : H::one(); /* the quads' prefix product: F::one() */
    if (beg < M) {
        const size_t end = beg + L < M ? beg + L : M;
        uint32_t live;
        const pmask mask = ba_pairs<ALL_ZERO>(keys, beg, end, &live);
        uint32_t j = npre[tl];
        H iv = ld_h(prod + tl, h); /* the inverse of the slice's product (the tree's) */
        int open_r = -1;           /* the pair above the one being made, while in no quad */
        H ox = H::zero();          /* its x */
        pmask m = mask;
        for (int pi = mask.count() - 1; pi >= 0; pi--) {
            const int r = m.pop_high();
            const affine<H> p = ld_pt_h(pts, vals[beg + r], h);
            const affine<H> q = ld_pt_h(pts, vals[beg + r + 1], h);
            affine<H> s;
            if (zero_eq_h(p.x, q.x, hl)) { /* ba_special */
                /* bit 0: p at infinity, bit 1: q (x and y zero in both lanes) */
                const uint32_t inf = both_bits((uint32_t)(p.x.is_zero() && p.y.is_zero()) |
                                                   (uint32_t)(q.x.is_zero() && q.y.is_zero()) << 1,
                                               hl);
                if (!inf) {
                    spec |= 1ull << pi;
                    continue;
                }
                s = inf & 1 ? q : p;
            } else {
                j--;
                H id = iv;
                if (j) { /* the pair's inverse and the next running inverse */
                    const H pr = ld_h(pre + (size_t)(j - 1) * Tc + tl, h);
                    if (PAIR) {
                        mul2_h(id, iv, pr, iv, iv, q.x - p.x, hl);
                    } else {
                        id = mul_h(iv, pr, hl);
                        iv = mul_h(iv, q.x - p.x, hl);
                    }
                }
                const H lam = mul_h(q.y - p.y, id, hl);
                s.x = sqr_h(lam, hl) - p.x - q.x;
                s.y = mul_h(lam, p.x - s.x, hl) - p.y;
            }
            /* k_ba_pairs's put: the sum stored, a quad with the open pair above it if they
             * are one run's and their sums' x differ (neither 0) */
            {
                affine<F> *const d = psum + (size_t)pi * Tc + tl;
                st_h(&d->x, h, s.x);
                st_h(&d->y, h, s.y);
            }
            if (open_r == r + 2 &&
                key_at<ALL_ZERO>(keys, beg + r) == key_at<ALL_ZERO>(keys, beg + r + 2) &&
                !zero_eq_h(s.x, ox, hl)) {
                const H dx = ox - s.x;
                qacc = k ? mul_h(qacc, dx, hl) : dx;
                st_h(pre + (size_t)(P - 1 - k) * Tc + tl, h, qacc);
                k++;
                quad |= 1ull << pi;
                open_r = -1;
            } else {
                open_r = r;
                ox = s.x;
            }
        }
    }
    st_h(prod + tl, h, qacc);
    /* lane 1 has read npre[tl] (above) before lane 0 writes it */
    __syncwarp(hl.mask);
    if (!h) {
        npre[tl] = (uint8_t)k;
        masks[tl] = quad;
        masks[Tc + tl] = spec;
    }
}

} // namespace cuzk_gpu

#endif
