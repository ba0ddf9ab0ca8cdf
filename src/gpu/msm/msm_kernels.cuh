/*
 * The MSM's scalar classification (k_prep), bucket accumulation kernels (level 1 by XYZZ
 * mixed additions, k_accum1; by batch-affine pairs, k_ba_pass_a / k_ba_pass_b; the carry
 * levels, k_accumk); the signed digits (k_digits) and the fixed-base tables (k_tables).
 * Included by gpu_impl.cuh; free of CUB and of block-level synchronisation, so
 * tests/gpu/msm_emu.cpp also compiles them for the host (with CUZK_GPU_HOST_EMU and one thread
 * at a time) and checks them in CI, without a GPU: the batch-affine kernels against k_accum1,
 * the digits against the scalars, the tables against repeated doubling, the classification
 * and range check against the scalars. (The kernels that synchronise, or that follow the
 * accumulation, are in msm_reduce.cuh.)
 */
#ifndef CUZK_GPU_MSM_KERNELS_CUH
#define CUZK_GPU_MSM_KERNELS_CUH

#include <type_traits>

#include "gpu/ec/curve.cuh"
#include "gpu/gpu.h" /* CUZK_GPU_TAB_MAX_COPIES */
#include "gpu/ff/ldst.cuh"

namespace cuzk_gpu {

static const uint32_t SENT = 0xffffffffu;

/* Threads per block of the accumulation kernels: their 120-255 registers per thread leave room
 * for few warps per SM. Each of an SM's four schedulers has 16 K registers for the warps it
 * runs: 2 warps at up to 255 registers per thread, 3 at up to 168, 4 at up to 128 (ptxas
 * asked for 5 blocks of 64 threads caps a kernel at 168, not 204), so a kernel gains warps only
 * by crossing one of those lines. */
#define ACC_THREADS 64

/* The level-1 accumulation kernels (k_accum1, k_ba_pass_b) of BLS12-381 G1 (48-byte field
 * elements) and of G2 (64 and 96) keep each thread's XYZZ sum in shared memory (xyzz_park,
 * curve.cuh: sizeof(F) words per thread) instead of in 4 sizeof(F) / 4 registers, and ask ptxas
 * for acc_minb blocks per SM: BN254 G2's pass B and BLS12-381 G1's fit 168 registers (6 blocks
 * of 64 threads instead of 4), BLS12-381 G2's stays at 255 but nearly stops spilling. BN254 G1
 * (128 registers, 8 blocks) is slower parked at 96 registers and 10 blocks, so it keeps its
 * sum in registers. */
template <class F> struct acc_park_of {
    static constexpr bool v = sizeof(F) >= 48;
};
template <class F> constexpr int acc_minb()
{
    /* Not parked (BN254 G1): 0, no bound. Unbounded, k_accum1 fits 8 blocks of 64 (124
     * registers with field.cuh's p5_fits a constant); a bound of 1 lets ptxas take more
     * registers, one of 8 makes it spill. */
    return !acc_park_of<F>::v ? 0 : sizeof(F) == 96 ? 4 : 6;
}
/* k_ba_pairs's bounds: 8 blocks for BN254 G2 (fewer spills did not pay for fewer warps), 6 for
 * BLS12-381 G2 (its y coordinates parked: ba_y_park), else acc_minb's; pass B and k_ba_quads
 * take acc_minb's. */
template <class F> constexpr int ba_pairs_minb()
{
    return sizeof(F) == 64 ? 8 : sizeof(F) == 96 ? 6 : acc_minb<F>();
}
template <class F> constexpr int ba_passb_minb() { return acc_minb<F>(); }
template <class F> constexpr int ba_quads_minb() { return acc_minb<F>(); }
template <class F>
using acc_t = typename std::conditional<acc_park_of<F>::v, xyzz_park<F, ACC_THREADS>,
                                        xyzz<F>>::type;
/* The shared words of a block's parked sums (one word when F's are not parked). */
#define ACC_PARK_SHARED(F, name)                                                                \
    __shared__ uint32_t name[acc_park_of<F>::v ? sizeof(F) : 1][ACC_THREADS]
template <class F> DI void acc_reset(xyzz<F> &a) { a = xyzz<F>::inf(); }
template <class F, int NT> DI void acc_reset(xyzz_park<F, NT> &a) { a.set(xyzz<F>::inf()); }
/* The thread's sum at infinity, parked in s when F's sums are. */
template <class F> DI void acc_start(xyzz<F> &a, uint32_t (*)[ACC_THREADS]) { acc_reset(a); }
template <class F, int NT> DI void acc_start(xyzz_park<F, NT> &a, uint32_t (*s)[NT])
{
    a.s = s;
    a.t = threadIdx.x;
    acc_reset(a);
}
/* A run owned here starts at infinity, or (into: a split MSM's later part, adding its runs to
 * the buckets the parts before it filled) at its bucket's value: one mixed addition more for
 * the run's first point instead of a whole-set merge after (k_add_into, one XYZZ addition per
 * bucket, and a second bucket array). A carry (a run continuing an earlier slice's) always
 * starts at infinity: its owner's bucket takes it at the carry levels (k_accumk). */
template <class F> DI void acc_open(xyzz<F> &a, bool into, const xyzz<F> *buckets, uint32_t key)
{
    if (into)
        a = ld16v(buckets + key);
    else
        acc_reset(a);
}
template <class F, int NT>
DI void acc_open(xyzz_park<F, NT> &a, bool into, const xyzz<F> *buckets, uint32_t key)
{
    if (into)
        a.set(ld16v(buckets + key));
    else
        acc_reset(a);
}
template <class F> DI const xyzz<F> &acc_value(const xyzz<F> &a) { return a; }
template <class F, int NT> DI xyzz<F> acc_value(const xyzz_park<F, NT> &a) { return a.load(); }

/* Scalar i to canonical limbs in sc, flags f1 (one) and f2 (neither zero nor one). bad: NULL,
 * or the lowest index of a canonical input not below r (atomicMin; the caller set it to
 * ~0 first), such a scalar being classified as anything (the MSM fails on it). */
template <class FR>
__global__ void k_prep(const uint32_t *in, uint32_t *sc, uint8_t *f1, uint8_t *f2, size_t n,
                       bool mont, unsigned long long *bad)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fe<FR> x;
    const uint4 *s = (const uint4 *)(in + 8 * i);
    uint4 a = s[0], b = s[1];
    x.v[0] = a.x, x.v[1] = a.y, x.v[2] = a.z, x.v[3] = a.w;
    x.v[4] = b.x, x.v[5] = b.y, x.v[6] = b.z, x.v[7] = b.w;
    if (mont)
        x = from_mont(x);
    else if (bad && !lt_mod(x))
        atomicMin(bad, (unsigned long long)i);
    uint32_t hi = 0;
#pragma unroll
    for (int k = 1; k < 8; k++)
        hi |= x.v[k];
    bool zero = hi == 0 && x.v[0] == 0, one = hi == 0 && x.v[0] == 1;
    uint4 *o = (uint4 *)(sc + 8 * i);
    o[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    o[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
    f1[i] = one;
    f2[i] = !zero && !one;
}

template <bool ALL_ZERO> DI uint32_t key_at(const uint32_t *keys, size_t i)
{
    return ALL_ZERO ? 0u : keys[i];
}

template <class F> DI affine<F> ld_pt(const affine<F> *pts, uint32_t v)
{
    affine<F> q = ld16(pts + (v & 0x7fffffffu));
    if (v >> 31)
        q.y = -q.y;
    return q;
}

/* Stores the sum of a finished run: the slice's first run, when it continues one owned by an
 * earlier slice, as this slice's carry (key, sum); any other run to its bucket (owned here). */
template <class F>
DI void flush_run(uint32_t key, const xyzz<F> &acc, bool &carry, size_t t, xyzz<F> *buckets,
                  uint32_t *ckey, xyzz<F> *cpt)
{
    if (carry) {
        ckey[t] = key;
        st16(cpt + t, acc);
        carry = false;
    } else {
        st16(buckets + key, acc);
    }
}

/* The start of slice t at entry beg: its first key, and whether the run it opens continues
 * one owned by an earlier slice (it becomes this slice's carry). Clears the slice's carry
 * key. */
template <bool ALL_ZERO>
DI bool slice_start(const uint32_t *keys, size_t beg, size_t t, uint32_t *ckey, uint32_t *cur)
{
    *cur = key_at<ALL_ZERO>(keys, beg);
    const bool carry = beg > 0 && *cur != SENT && key_at<ALL_ZERO>(keys, beg - 1) == *cur;
    ckey[t] = SENT;
    return carry;
}

/* Level-1 accumulation over sorted (key, value) entries; values index affine points.
 * ALL_ZERO: every key is 0 (the ones: no key array, values are plain indices).
 *
 * One flat loop over the thread's L entries, a run boundary being a short store inside it:
 * every lane of a warp does its i-th addition at the same time. (Nested loops, one per run,
 * let lanes whose runs ended wait for the others at each run's end: half a warp's lanes idle
 * on average, in the kernel that dominates an MSM.) */
template <class F, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, acc_minb<F>())
k_accum1(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, const affine<F> *pts,
         xyzz<F> *buckets, uint32_t *ckey, xyzz<F> *cpt, bool into)
{
    ACC_PARK_SHARED(F, park);
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t beg = t * L;
    if (beg >= M)
        return;
    size_t end = beg + L < M ? beg + L : M;
    uint32_t cur;
    bool carry = slice_start<ALL_ZERO>(keys, beg, t, ckey, &cur);
    acc_t<F> acc;
    acc_start(acc, park);
    if (into && !carry && cur != SENT)
        acc_open(acc, true, buckets, cur);
    for (size_t i = beg; i < end; i++) {
        uint32_t k = key_at<ALL_ZERO>(keys, i);
        if (k != cur) {
            flush_run(cur, acc_value(acc), carry, t, buckets, ckey, cpt);
            acc_open(acc, into && k != SENT, buckets, k);
            cur = k;
        }
        if (k == SENT)
            break; /* sorted: only sentinels remain */
        xyzz_add_affine(acc, ld_pt(pts, vals[i]));
    }
    if (cur != SENT)
        flush_run(cur, acc_value(acc), carry, t, buckets, ckey, cpt);
}

/* Level >= 2: the carries of the previous level (sorted, with SENT gaps); a run owned here is
 * added to its bucket (which its owner at level 1 already wrote). Flat loop as in k_accum1. */
template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
k_accumk(const uint32_t *ikey, const xyzz<F> *ipt, size_t M, uint32_t L, xyzz<F> *buckets,
         uint32_t *ckey, xyzz<F> *cpt)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t beg = t * L;
    if (beg >= M)
        return;
    size_t end = beg + L < M ? beg + L : M;
    uint32_t cur = ikey[beg];
    bool carry = beg > 0 && cur != SENT && ikey[beg - 1] == cur;
    ckey[t] = SENT;
    xyzz<F> acc = xyzz<F>::inf();
    for (size_t i = beg; i <= end; i++) {
        uint32_t k = i < end ? ikey[i] : SENT;
        if (k != cur) {
            if (carry) {
                ckey[t] = cur;
                st16(cpt + t, acc);
                carry = false;
            } else if (cur != SENT) {
                xyzz<F> b = ld16v(buckets + cur);
                xyzz_add(b, acc);
                st16(buckets + cur, b);
            }
            acc = xyzz<F>::inf();
            cur = k;
        }
        if (k != SENT)
            xyzz_add(acc, ld16v(ipt + i));
    }
}

/* ---- Level 1 with batch-affine pair additions (Montgomery's simultaneous inversion).
 *
 * The same slices, runs and run ownership as k_accum1, but a slice first adds its entries in
 * pairs (two consecutive entries of one run, paired greedily from the slice's start) in affine
 * coordinates, and all the pairs of a chunk of slices share one field inversion:
 *   pass A (k_ba_pass_a): each slice multiplies its pairs' denominators x2 - x1 into prefix
 *     products (stored, pair-major so that neighbouring threads write neighbouring elements)
 *     and leaves its whole product;
 *   a product tree over the slices' products (k_tree_up, BA_TREE K children per node, K by
 *     the level: msm_reduce.cuh), one inversion at the root (on the host: root_inv),
 *     and the tree walked back (k_tree_down) give every slice the inverse of its product;
 *   pass B (k_ba_pass_b) walks the slice's pairs backwards: each pair's inverse is the running
 *     inverse times the previous prefix, the running inverse times the pair's denominator is
 *     the next running inverse; lambda, x3, y3 make the pair's affine sum, which joins the
 *     run's XYZZ sum by a mixed addition (as every point does in k_accum1).
 * Per pair 1 + 2 + 3 multiplications and one mixed addition (10): 16 instead of 20 for two
 * mixed additions, for one more gather of the pair's x coordinates and the prefix products'
 * write and read. A pair with x1 == x2 (P == +-Q) or an x coordinate 0 (infinity is
 * x = y = 0) stays out of the products; pass B adds its two points one at a time, and
 * xyzz_add_affine handles doubling, cancellation and infinity. Both passes decide that from
 * the same coordinates, so they agree on which pairs hold a prefix. */

template <class F> DI bool ba_special(const F &x1, const F &x2)
{
    return x1.is_zero() || x2.is_zero() || x1 == x2;
}

/* A slice's pairs: bit r set when entries r and r + 1 of the slice are a pair (slices of up
 * to 128 entries: two words). */
struct pmask {
    uint64_t w[2];
    DI bool at(uint32_t r) const { return (w[r >> 6] >> (r & 63)) & 1; }
    DI int count() const { return __popcll(w[0]) + __popcll(w[1]); }
    /* The lowest / highest set bit, cleared (the mask must not be empty). */
    DI int pop_low()
    {
        const int h = w[0] == 0;
        const int r = __ffsll((long long)w[h]) - 1;
        w[h] &= w[h] - 1;
        return 64 * h + r;
    }
    DI int pop_high()
    {
        const int h = w[1] != 0;
        const int r = 63 - __clzll((long long)w[h]);
        w[h] &= ~(1ull << r);
        return 64 * h + r;
    }
    DI bool any() const { return (w[0] | w[1]) != 0; }
};

/* The pairing of slice [beg, end) (end - beg <= 128): bit r of the result is set when entries
 * beg + r and beg + r + 1 are a pair. *live: the entries before the first SENT. */
template <bool ALL_ZERO>
DI pmask ba_pairs(const uint32_t *keys, size_t beg, size_t end, uint32_t *live)
{
    pmask mask = {{0, 0}};
    size_t i = beg;
    uint32_t k = key_at<ALL_ZERO>(keys, i);
    while (i < end && k != SENT) {
        uint32_t k2 = i + 1 < end ? key_at<ALL_ZERO>(keys, i + 1) : SENT;
        if (k2 == k) {
            const uint32_t r = (uint32_t)(i - beg);
            mask.w[r >> 6] |= 1ull << (r & 63);
            i += 2;
            k = i < end ? key_at<ALL_ZERO>(keys, i) : SENT;
        } else {
            i += 1;
            k = k2;
        }
    }
    *live = (uint32_t)(i - beg);
    return mask;
}

template <class F> DI F ld_x(const affine<F> *pts, uint32_t v)
{
    return ld16((const F *)(pts + (v & 0x7fffffffu)));
}
/* The y coordinate of the point value v names, negated with v's sign bit (as ld_pt). */
template <class F> DI F ld_y(const affine<F> *pts, uint32_t v)
{
    F y = ld16((const F *)(pts + (v & 0x7fffffffu)) + 1);
    if (v >> 31)
        y = -y;
    return y;
}

/* The pair sums of G2 and of BLS12-381 G1 (48-byte and larger fields; not G1's k_ba_pairs,
 * whose two paths join) load their y coordinates after the inverses' products (ba_pair_sums,
 * k_ba_quads); with 2 they also read the x coordinates again for x3 and y3 rather than keep
 * them across those products: fewer spills, except for BLS12-381 G2, whose y is parked. */
template <class F> struct ba_late_y {
    static constexpr int v = sizeof(F) < 48 || sizeof(F) >= 96 ? 0 : 2;
};

/* G2's pair sums keep the running inverse in shared memory (the caller's words: k_ba_pairs's
 * qs, pass B's parked XYZZ sum, unused until its phase 2) instead of in W registers across the
 * pair's lambda, x3 and y3: per pair the next running inverse is computed and stored first,
 * then the pair's inverse from the loaded one (ba_parked_inv). G1's pair kernels do not spill. */
template <class F> struct ba_iv_park {
    static constexpr bool v = sizeof(F) == 64 || sizeof(F) == 96;
};
/* The same for k_ba_quads's running inverse (in the parked XYZZ sum's words, unused until the
 * slice's additions): BLS12-381 G2 only (BN254 G2's k_ba_quads spilled more with it). */
template <class F> struct ba_quads_iv_park {
    static constexpr bool v = sizeof(F) == 96;
};

/* BLS12-381 G2's pair sums (k_ba_pairs and pass B) load a pair's y coordinates with its x
 * coordinates and park them in shared memory across the inverses' products (after the running
 * inverse's words: 2W more words a thread, within pass B's parked XYZZ sum's 4W; k_ba_pairs's
 * qs grows to 5W), read back with volatile loads, which the compiler cannot forward from the
 * stores: the y coordinates hold no registers across the products. (BN254 G2's pass B spilled
 * with it.) Needs the running inverse parked too. */
template <class F> struct ba_y_park {
    static constexpr bool v = ba_iv_park<F>::v && sizeof(F) == 96;
};
/* Volatile: the value parked by this thread must be read back from shared memory. */
template <class F> DI F sh_words_ld_volatile(const uint32_t (*s)[ACC_THREADS], int w0)
{
    F r;
    uint32_t *const v = (uint32_t *)&r;
#pragma unroll
    for (int k = 0; k < (int)(sizeof(F) / 4); k++)
        v[k] = *(const volatile uint32_t *)&s[w0 + k][threadIdx.x];
    return r;
}

/* Pass A reads the next pair's point values (vals) before this pair's x coordinates, so that
 * its gathers do not wait on their own index loads (a few more registers, no spills). */
/* Slices t0 .. t0 + Tc - 1 (thread tl = t - t0): prefix products of the pairs' denominators at
 * pre[j * Tc + tl], the slice's product at prod[tl] (one when it has no pair), their count at
 * npre[tl]. */
template <class F, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS)
k_ba_pass_a(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
            size_t Tc, const affine<F> *pts, F *pre, F *prod, uint8_t *npre)
{
    size_t tl = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (tl >= Tc)
        return;
    size_t beg = (t0 + tl) * L;
    F acc = F::one();
    uint32_t j = 0;
    if (beg < M) {
        size_t end = beg + L < M ? beg + L : M;
        uint32_t live;
        pmask mask = ba_pairs<ALL_ZERO>(keys, beg, end, &live);
        /* The next pair's point values read before this pair's x coordinates, so that the
         * gathers do not wait on their own index loads. */
        if (mask.any()) {
            int r = mask.pop_low();
            uint32_t v1 = vals[beg + r], v2 = vals[beg + r + 1];
            for (;;) {
                const bool more = mask.any();
                uint32_t n1 = 0, n2 = 0;
                if (more) {
                    r = mask.pop_low();
                    n1 = vals[beg + r];
                    n2 = vals[beg + r + 1];
                }
                const F x1 = ld_x(pts, v1), x2 = ld_x(pts, v2);
                if (!ba_special(x1, x2)) {
                    const F dx = x2 - x1;
                    acc = j ? acc * dx : dx;
                    st16(pre + (size_t)j * Tc + tl, acc);
                    j++;
                }
                if (!more)
                    break;
                v1 = n1;
                v2 = n2;
            }
        }
    }
    st16(prod + tl, acc);
    npre[tl] = (uint8_t)j;
}

/* A pair out of the products (ba_special): put the other point when one is at infinity and
 * return 0, else (P == +-Q, or x = 0 finite) put nothing and return bit pi, the pair to add
 * point by point. */
template <class F, class Put>
DI uint64_t ba_put_special(int pi, int r, const affine<F> &p, const affine<F> &q, Put &put)
{
    if (p.is_inf())
        put(pi, r, q);
    else if (q.is_inf())
        put(pi, r, p);
    else
        return 1ull << pi;
    return 0;
}

/* The running inverse of ba_pair_sums and k_ba_quads when parked (ba_iv_park,
 * ba_quads_iv_park) in shared words s[w0 .. w0 + W - 1][threadIdx.x], where the caller stored
 * it: returns the inverse of the pair (or quad) whose denominator is dx and steps the running
 * inverse past it; more: a prefix below it, pre() its value. (Not parked, the callers keep
 * their code as it was: the same through a function ran BN254 G2's k_ba_quads at 136 / 176
 * bytes of spills instead of 96 / 96.) */
template <class F, class Pre>
DI F ba_parked_inv(uint32_t (*s)[ACC_THREADS], int w0, bool more, Pre pre, const F &dx)
{
    F v;
    sh_words_ld<ACC_THREADS>(v, s, w0, threadIdx.x);
    if (more) { /* the next running inverse first: v alone stays live */
        sh_words_st<ACC_THREADS>(v * dx, s, w0, threadIdx.x);
        v = v * pre();
    }
    return v;
}

/* Phase 1 of pass B (k_ba_pass_b, k_ba_pairs: PAIRS): the slice's pairs (mask, beg) backwards, each
 * pair's inverse from the running one (iv, the inverse of the slice's product, parked at
 * ivs[ivw ..] when ba_iv_park; j its prefix count, pre its prefixes at pre[i * Tc + tl]).
 * put(pi, r, s) takes pair pi's sum (entries r and r + 1): the affine sum, or for a pair with a
 * point at infinity the other point. Returns the pairs that are added point by point (bit pi;
 * put is not called for them). */
template <bool JOIN, bool PAIRS, class F, class Put>
DI uint64_t ba_pair_sums(const pmask &mask, size_t beg, const uint32_t *vals,
                         const affine<F> *pts, uint32_t j, F iv, const F *pre, size_t Tc,
                         size_t tl, uint32_t (*ivs)[ACC_THREADS], int ivw, Put put)
{
    constexpr bool PARK = ba_iv_park<F>::v;
    if constexpr (PARK)
        sh_words_st<ACC_THREADS>(iv, ivs, ivw, threadIdx.x);
    uint64_t spec = 0;
    pmask m = mask;
    for (int pi = mask.count() - 1; pi >= 0; pi--) {
        const int r = m.pop_high();
        if constexpr (ba_y_park<F>::v && !JOIN) {
            /* ba_y_park: both points loaded at once, the y coordinates parked. */
            constexpr int W = sizeof(F) / 4;
            const uint32_t v1 = vals[beg + r], v2 = vals[beg + r + 1];
            const affine<F> p = ld_pt(pts, v1), q = ld_pt(pts, v2);
            if (ba_special(p.x, q.x)) {
                spec |= ba_put_special(pi, r, p, q, put);
                continue;
            }
            sh_words_st<ACC_THREADS>(p.y, ivs, ivw + W, threadIdx.x);
            sh_words_st<ACC_THREADS>(q.y, ivs, ivw + 2 * W, threadIdx.x);
            j--;
            const F id = ba_parked_inv(
                ivs, ivw, j, [&] { return ld16v(pre + (size_t)(j - 1) * Tc + tl); }, q.x - p.x);
            const F y1 = sh_words_ld_volatile<F>(ivs, ivw + W);
            const F lam = (sh_words_ld_volatile<F>(ivs, ivw + 2 * W) - y1) * id;
            /* x read again (cached) with the late loads, as their path does */
            constexpr bool XA = ba_late_y<F>::v == 2;
            const F x1 = XA ? ld_x(pts, v1) : p.x;
            affine<F> s;
            s.x = sqr(lam) - x1 - (XA ? ld_x(pts, v2) : q.x);
            s.y = lam * (x1 - s.x) - y1;
            put(pi, r, s);
            continue;
        }
        if constexpr (ba_late_y<F>::v && !JOIN) {
            /* G2 and BLS12-381 G1: the x coordinates first, the y coordinates only after the
             * inverses' products, so that they hold no registers across that call (the pair
             * kernels sit at their register caps and would spill; ba_late_y). */
            const uint32_t v1 = vals[beg + r], v2 = vals[beg + r + 1];
            const F x1 = ld_x(pts, v1), x2 = ld_x(pts, v2);
            if (ba_special(x1, x2)) { /* as below: pass B's put is one store */
                spec |= ba_put_special(pi, r, ld_pt(pts, v1), ld_pt(pts, v2), put);
                continue;
            }
            j--;
            F id = iv;
            if constexpr (PARK)
                id = ba_parked_inv(
                    ivs, ivw, j, [&] { return ld16v(pre + (size_t)(j - 1) * Tc + tl); }, x2 - x1);
            else if (j)
                mul2(id, iv, ld16v(pre + (size_t)(j - 1) * Tc + tl), iv, iv, x2 - x1);
            const F y1 = ld_y(pts, v1);
            const F lam = (ld_y(pts, v2) - y1) * id;
            affine<F> s;
            if (ba_late_y<F>::v == 2) {
                /* The x coordinates read again (cached), x2's after sqr(lam): written out, not
                 * through affine_from_lam, whose argument would load it first (other code). */
                const F x1b = ld_x(pts, v1);
                s.x = sqr(lam) - x1b - ld_x(pts, v2);
                s.y = lam * (x1b - s.x) - y1;
            } else {
                s = affine_from_lam(lam, x1, x2, y1);
            }
            put(pi, r, s);
            continue;
        }
        const affine<F> p = ld_pt(pts, vals[beg + r]);
        const affine<F> q = ld_pt(pts, vals[beg + r + 1]);
        affine<F> s;
        if (ba_special(p.x, q.x)) {
            /* Out of the products. A point at infinity makes the pair's sum the other
             * point (keys have many: signals absent from A or B); only P == +-Q (and a
             * finite point with x = 0) is added point by point in phase 2. That path
             * is divergent, two additions where the other lanes do one, so it must stay
             * rare: points at infinity take the cheap path. */
            if (!JOIN) { /* pass B's put is one store */
                spec |= ba_put_special(pi, r, p, q, put);
                continue;
            }
            if (!p.is_inf() && !q.is_inf()) {
                spec |= 1ull << pi;
                continue;
            }
            s = p.is_inf() ? q : p;
        } else {
            j--;
            F id = iv;
            if constexpr (PARK)
                id = ba_parked_inv(ivs, ivw, j,
                                   [&] { return ld16v(pre + (size_t)(j - 1) * Tc + tl); },
                                   q.x - p.x);
            else if (j) /* the pair's inverse and the next running inverse: independent */
                mul2(id, iv, ld16v(pre + (size_t)(j - 1) * Tc + tl), iv, iv, q.x - p.x);
            s = affine_add_inv(p, q, id);
        }
        /* JOIN: one call for both paths, the lanes joined before it, so that k_ba_pairs's put
         * (a store and the quads' prefix product) runs once per pair for the warp, not once
         * per path. G1 only: it stops BLS12-381 G1's k_ba_pairs spilling, but makes G2's
         * kernels much slower, although they spill less. */
        put(pi, r, s);
    }
    return spec;
}

/* Phase 2 of pass B (k_ba_pass_b, k_ba_quads): the slice forwards, as k_accum1, a pair being one
 * addition of its sum (sum(pi)), a quad (QUADS: pairs pi and pi + 1 with bit pi of quad, four
 * entries of one run) one addition of its sum (sum(pi)), a pair of spec one addition per point. */
template <class F, bool ALL_ZERO, bool QUADS, class Sum>
DI void ba_add_slice(const uint32_t *keys, const uint32_t *vals, size_t beg, uint32_t live,
                     size_t t, const pmask &mask, uint64_t spec, uint64_t quad,
                     const affine<F> *pts, uint32_t (*park)[ACC_THREADS], xyzz<F> *buckets,
                     uint32_t *ckey, xyzz<F> *cpt, uint32_t cur, bool carry, bool into, Sum sum)
{
    acc_t<F> acc;
    acc_start(acc, park);
    if (into && !carry && live)
        acc_open(acc, true, buckets, cur);
    int pi = 0;
    for (uint32_t r = 0; r < live;) {
        const uint32_t k = key_at<ALL_ZERO>(keys, beg + r);
        if (k != cur) {
            flush_run(cur, acc_value(acc), carry, t, buckets, ckey, cpt);
            acc_open(acc, into, buckets, k);
            cur = k;
        }
        const bool pair = mask.at(r);
        const bool qd = QUADS && pair && ((quad >> pi) & 1);
        const bool sp = pair && ((spec >> pi) & 1);
        affine<F> a = pair && !sp ? sum(pi) : ld_pt(pts, vals[beg + r]);
        if (sp) {
            xyzz_add_affine(acc, a);
            a = ld_pt(pts, vals[beg + r + 1]);
        }
        xyzz_add_affine(acc, a);
        pi += qd ? 2 : pair;
        r += qd ? 4 : pair ? 2 : 1;
    }
    if (live)
        flush_run(cur, acc_value(acc), carry, t, buckets, ckey, cpt);
}

/* A thread's level-1 slice as pass B and k_ba_quads open it (in a kernel taking keys, M, L, t0,
 * Tc, ckey): its index in the chunk (tl) and overall (t), first entry (beg), first key and carry
 * (cur, carry: slice_start), pairs and live entries (mask, live: ba_pairs); the kernel returns
 * when the thread has no slice. A macro rather than a function filling a struct: the struct
 * goes to the stack and adds to the spills of BLS12-381 G1's pass B. */
#define BA_SLICE_OPEN()                                                                        \
    size_t tl = (size_t)blockIdx.x * blockDim.x + threadIdx.x;                                 \
    if (tl >= Tc)                                                                              \
        return;                                                                                \
    const size_t t = t0 + tl, beg = t * L;                                                     \
    if (beg >= M)                                                                              \
        return;                                                                                \
    size_t end = beg + L < M ? beg + L : M;                                                    \
    uint32_t cur;                                                                              \
    bool carry = slice_start<ALL_ZERO>(keys, beg, t, ckey, &cur);                              \
    uint32_t live;                                                                             \
    const pmask mask = ba_pairs<ALL_ZERO>(keys, beg, end, &live)

/* Pass B over the slices of pass A; inv[tl] is the inverse of prod[tl]. Writes buckets and
 * carries exactly as k_accum1 does for the same slices. Two phases, so that the registers of
 * the pair sums (running inverse, both points, lambda) and those of the mixed additions (the
 * XYZZ sum) are not live at once: the pair sums go through a per-thread array in local
 * memory. (One loop doing both needs 170-180 registers for BN254 G1 against k_accum1's 128,
 * and loses more to the fewer resident warps than the pairs save.) */
#define BA_MAXP 64 /* pairs per slice: L1 <= 128 */
template <class F, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_passb_minb<F>())
k_ba_pass_b(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
            size_t Tc, const affine<F> *pts, const F *pre, const F *inv_, const uint8_t *npre,
            xyzz<F> *buckets, uint32_t *ckey, xyzz<F> *cpt, bool into)
{
    /* the running inverse (W words) and the parked y coordinates (2W) in the sum's 4W */
    static_assert(!ba_iv_park<F>::v || acc_park_of<F>::v, "pass B parks in the XYZZ sum's words");
    ACC_PARK_SHARED(F, park);
    BA_SLICE_OPEN();
    affine<F> sums[BA_MAXP];
    const uint64_t spec =
        ba_pair_sums<false, false>(mask, beg, vals, pts, npre[tl], ld16v(inv_ + tl), pre, Tc, tl,
                                   park, 0, [&](int pi, int, const affine<F> &s) { sums[pi] = s; });
    ba_add_slice<F, ALL_ZERO, false>(keys, vals, beg, live, t, mask, spec, 0, pts, park,
                                     buckets, ckey, cpt, cur, carry, into,
                                     [&](int pi) { return sums[pi]; });
}

/* k_ba_pairs makes the quads' prefix products only at its even puts, a quad closed at an odd
 * put waiting (its dx in shared memory) for the next, as ba_halves.cuh's k_ba_pairs_h does:
 * no two consecutive puts multiply, so the products overlap the pair sums' loads. */

/* ---- Quads: pairs of pair sums, added in affine too (cuzk_gpu_ba_set's quads).
 *
 * Two consecutive pairs of one run (entries r .. r + 3) whose sums S1, S2 have x1 != x2 (and
 * neither x 0) are a quad: S1 + S2 by the same affine addition, its inverse shared with the
 * chunk's other quads by a second product tree. Per quad 2 x 7 + 7 + 10 = 31 multiplications
 * against 2 x 7 + 2 x 10 = 34 for its two pairs, for the pair sums' trip through device memory
 * (they wait there for the second inversion) and one more pass. Three kernels per chunk instead
 * of pass B:
 *   k_ba_pairs: pass B's phase 1, the pair sums to psum[pi * Tc + tl] (pair-major); walking
 *     backwards it pairs each pair with the one above it when they make a quad (greedily from
 *     the slice's last pair), the quads' denominators x2 - x1 multiplied into prefix products
 *     (in pre, from its top slot down: below, why that never overwrites a level-1 prefix still
 *     to be read), the slice's product into prod (the level-1 tree's leaf, read by this thread
 *     already), the quad count into npre, the quads (bit pi: pairs pi, pi + 1) and the spec
 *     pairs into masks[tl], masks[Tc + tl];
 *   the product tree over prod, as for pass A;
 *   k_ba_quads: the quads forwards (the reverse of their prefix order), each quad's sum over
 *     its first pair's sum, then the slice's additions as pass B's phase 2.
 * In place: when quad k (from 0) is made, at most k + j < P prefix slots are in use, P = L / 2
 * the slots per slice and j the level-1 prefixes still to read (slots 0 .. j - 1): each quad
 * took two pairs, each level-1 prefix read one regular pair, so k + j <= npre - 1 + (P - npre)
 * / 2 < P. Quad k's prefix goes to slot P - 1 - k, above every slot still to be read (made a
 * pair later when deferred, when j is only smaller). */
template <class F, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_pairs_minb<F>())
k_ba_pairs(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
           size_t Tc, const affine<F> *pts, F *pre, F *prod, uint8_t *npre, affine<F> *psum,
           uint64_t *masks)
{
    /* The quads' prefix product (words 0 .. W - 1) and the open pair's x (W .. 2W - 1) wait
     * in shared memory while the pair sums use the registers (in registers they make BN254
     * G2's and BLS12-381 G1's kernels spill). */
    constexpr int W = sizeof(F) / 4;
    /* 2W ..: ba_parked_inv's running inverse, then the parked y coordinates (ba_y_park) */
    /* then a closed quad's dx waiting (words DW ..) */
    constexpr int DW = (ba_y_park<F>::v ? 5 : ba_iv_park<F>::v ? 3 : 2) * W;
    __shared__ uint32_t qs[DW + W][ACC_THREADS];
    const int th = threadIdx.x;
    size_t tl = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (tl >= Tc)
        return;
    const size_t beg = (t0 + tl) * L;
    const uint32_t P = L / 2;
    uint32_t k = 0;
    uint64_t quad = 0, spec = 0;
    sh_words_st<ACC_THREADS>(F::one(), qs, 0, th);
    if (beg < M) {
        size_t end = beg + L < M ? beg + L : M;
        uint32_t live;
        const pmask mask = ba_pairs<ALL_ZERO>(keys, beg, end, &live);
        int open_r = -1; /* the pair above the one being made, while it is in no quad */
        bool pend = false; /* a quad's product waits */
        uint32_t n = 0;    /* the puts so far */
        /* the quads' prefix product times dx, stored as the next prefix */
        auto quad_product = [&](const F &dx) {
            F acc;
            if (k) {
                sh_words_ld<ACC_THREADS>(acc, qs, 0, th);
                acc = acc * dx;
            } else {
                acc = dx;
            }
            sh_words_st<ACC_THREADS>(acc, qs, 0, th);
            st16(pre + (size_t)(P - 1 - k) * Tc + tl, acc);
            k++;
        };
        auto quad_pending = [&]() {
            F dx;
            sh_words_ld<ACC_THREADS>(dx, qs, DW, th);
            quad_product(dx);
            pend = false;
        };
        spec = ba_pair_sums<(sizeof(F) < 64), true>( /* G1 only: see ba_pair_sums */
            mask, beg, vals, pts, npre[tl], ld16v(prod + tl), pre, Tc, tl, qs, 2 * W,
            [&](int pi, int r, const affine<F> &s) {
                st16(psum + (size_t)pi * Tc + tl, s);
                F ox;
                if (open_r == r + 2)
                    sh_words_ld<ACC_THREADS>(ox, qs, W, th);
                if (open_r == r + 2 &&
                    key_at<ALL_ZERO>(keys, beg + r) == key_at<ALL_ZERO>(keys, beg + r + 2) &&
                    !ba_special(s.x, ox)) {
                    sh_words_st<ACC_THREADS>(ox - s.x, qs, DW, th);
                    pend = true;
                    quad |= 1ull << pi;
                    open_r = -1;
                } else {
                    open_r = r;
                    sh_words_st<ACC_THREADS>(s.x, qs, W, th);
                }
                /* no two consecutive puts close a quad: one product every two makes each */
                if (pend && !(n & 1))
                    quad_pending();
                n++;
            });
        if (pend)
            quad_pending();
    }
    F acc;
    sh_words_ld<ACC_THREADS>(acc, qs, 0, th);
    st16(prod + tl, acc);
    npre[tl] = (uint8_t)k;
    masks[tl] = quad;
    masks[Tc + tl] = spec;
}

/* The quads of k_ba_pairs summed (inv[tl], the inverse of its prod[tl]) and the slice added as
 * by pass B's phase 2: buckets and carries exactly as k_accum1 writes them. */
template <class F, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_quads_minb<F>())
k_ba_quads(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
           size_t Tc, const affine<F> *pts, const F *pre, const F *inv_, const uint8_t *npre,
           affine<F> *psum, const uint64_t *masks, xyzz<F> *buckets, uint32_t *ckey,
           xyzz<F> *cpt, bool into)
{
    ACC_PARK_SHARED(F, park);
    BA_SLICE_OPEN();
    const uint64_t quad = masks[tl], spec = masks[Tc + tl];
    {
        const uint32_t P = L / 2;
        uint32_t k = npre[tl];
        constexpr bool PARK = ba_quads_iv_park<F>::v;
        static_assert(!PARK || acc_park_of<F>::v, "the quads park in the XYZZ sum's words");
        F iv = ld16v(inv_ + tl);
        if constexpr (PARK)
            sh_words_st<ACC_THREADS>(iv, park, 0, threadIdx.x);
        for (uint64_t qq = quad; qq; qq &= qq - 1) {
            const int pi = __ffsll((long long)qq) - 1;
            affine<F> *const s1p = psum + (size_t)pi * Tc + tl;
            if constexpr (ba_late_y<F>::v != 0) {
                /* The y coordinates after the products, as in ba_pair_sums. */
                const F x1 = ld16v((const F *)s1p), x2 = ld16v((const F *)(s1p + Tc));
                k--;
                F id = iv;
                if constexpr (PARK)
                    id = ba_parked_inv(
                        park, 0, k, [&] { return ld16v(pre + (size_t)(P - k) * Tc + tl); },
                        x2 - x1);
                else if (k)
                    mul2(id, iv, ld16v(pre + (size_t)(P - k) * Tc + tl), iv, iv, x2 - x1);
                const F y1 = ld16v((const F *)s1p + 1);
                const F lam = (ld16v((const F *)(s1p + Tc) + 1) - y1) * id;
                st16(s1p, affine_from_lam(lam, x1, x2, y1));
                continue;
            }
            const affine<F> s1 = ld16v(s1p), s2 = ld16v(s1p + Tc);
            k--;
            F id = iv;
            if constexpr (PARK)
                id = ba_parked_inv(park, 0, k,
                                   [&] { return ld16v(pre + (size_t)(P - k) * Tc + tl); },
                                   s2.x - s1.x);
            else if (k)
                mul2(id, iv, ld16v(pre + (size_t)(P - k) * Tc + tl), iv, iv, s2.x - s1.x);
            st16(s1p, affine_add_inv(s1, s2, id));
        }
    }
    ba_add_slice<F, ALL_ZERO, true>(keys, vals, beg, live, t, mask, spec, quad, pts, park,
                                    buckets, ckey, cpt, cur, carry, into,
                                    [&](int pi) { return ld16v(psum + (size_t)pi * Tc + tl); });
}

/* ---- Digits and fixed-base tables (also free of CUB and block synchronisation; msm_emu.cpp
 * checks them on the host). */

/* Window w's digit goes to bucket set w % g with point index (w / g) * stride + id: copy
 * w / g of a set with fixed-base tables (g = W: no tables, every window its own set). */
static __global__ void k_digits(const uint32_t *sc, const uint32_t *idx, uint32_t n2, int c, int W,
                                int g, uint32_t stride, uint32_t *keys, uint32_t *vals)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n2)
        return;
    uint32_t id = idx[j];
    uint32_t s[9];
    const uint4 *p = (const uint4 *)(sc + 8 * (size_t)id);
    uint4 a = p[0], b = p[1];
    s[0] = a.x, s[1] = a.y, s[2] = a.z, s[3] = a.w;
    s[4] = b.x, s[5] = b.y, s[6] = b.z, s[7] = b.w;
    s[8] = 0;
    const uint32_t half = 1u << (c - 1), mask = (1u << c) - 1;
    uint32_t carry = 0, set = 0, base = id;
    for (int w = 0; w < W; w++) {
        int bit = w * c, word = bit >> 5, sh = bit & 31;
        uint32_t raw = 0;
        if (word < 8) {
            uint64_t two = ((uint64_t)s[word + 1] << 32) | s[word];
            raw = (uint32_t)(two >> sh) & mask;
        }
        uint32_t d = raw + carry;
        bool neg = false;
        uint32_t mag = d;
        carry = 0;
        if (w < W - 1 && d > half) {
            mag = (1u << c) - d; /* d - 2^c, negated; 0 when d == 2^c */
            neg = mag != 0;
            carry = 1;
        }
        size_t o = (size_t)w * n2 + j;
        if (mag == 0) {
            keys[o] = SENT;
            vals[o] = 0;
        } else {
            keys[o] = (set << (c - 1)) | (mag - 1);
            vals[o] = base | (neg ? 0x80000000u : 0u);
        }
        if (++set == (uint32_t)g) {
            set = 0;
            base += stride;
        }
    }
}

/* Dropping the entries of points at infinity from sorted digits (an MSM over a set with many;
 * gpu_impl.cuh selects the entries to keep with CUB, in order, so the
 * runs stay sorted). Value v names point (v & 0x7fffffff) of the MSM's points, or with tables
 * copy (v & 0x7fffffff) / stride of point (v & 0x7fffffff) % stride (stride 0: none); the
 * set's map has bit off + that point. A sentinel entry (digit 0, value 0) may go too: it adds
 * nothing. 32-bit arithmetic: a set holds fewer than 2^31 points. */
DI bool inf_val(const uint32_t *map, uint32_t v, uint32_t stride, uint32_t off)
{
    uint32_t i = v & 0x7fffffffu;
    if (stride)
        i %= stride;
    i += off;
    return (map[i >> 5] >> (i & 31)) & 1u;
}

struct inf_keep {
    const uint32_t *map;
    uint32_t stride, off;
    DI bool operator()(uint32_t v) const { return !inf_val(map, v, stride, off); }
};

/* Fixed-base tables: copies k = 1 .. t - 1 of each of the set's n points, copy k = 2^(k s)
 * times copy 0, written affine at pts[k n + i]. One thread per point: the copies by s
 * doublings each in XYZZ, then one inversion for all of them (Montgomery's trick over
 * d_k = ZZ_k ZZZ_k: 1/ZZ = ZZZ / d, 1/ZZZ = ZZ / d). X and Y wait in the copy's own slot.
 * Infinity (all zero bytes) stays zero in every copy; a finite point of the prime-order group
 * never doubles to infinity. */
template <class F>
__global__ void __launch_bounds__(64) k_tables(affine<F> *pts, size_t n, int t, int s)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const affine<F> p = pts[i];
    if (p.is_inf()) {
        for (int k = 1; k < t; k++) {
            pts[(size_t)k * n + i].x = F::zero();
            pts[(size_t)k * n + i].y = F::zero();
        }
        return;
    }
    F zz[CUZK_GPU_TAB_MAX_COPIES], zzz[CUZK_GPU_TAB_MAX_COPIES], pre[CUZK_GPU_TAB_MAX_COPIES];
    xyzz<F> q = xyzz<F>::inf();
    xyzz_add_affine(q, p);
    F acc = F::one();
    for (int k = 1; k < t; k++) {
        for (int j = 0; j < s; j++)
            xyzz_dbl(q);
        pts[(size_t)k * n + i].x = q.x;
        pts[(size_t)k * n + i].y = q.y;
        zz[k] = q.zz;
        zzz[k] = q.zzz;
        pre[k - 1] = acc; /* product of d_1 .. d_{k-1} */
        acc = acc * (q.zz * q.zzz);
    }
    F iv = inv(acc); /* 1 / (d_1 ... d_k) for k = t - 1, walking down */
    for (int k = t - 1; k >= 1; k--) {
        const F id = iv * pre[k - 1]; /* 1 / d_k */
        iv = iv * (zz[k] * zzz[k]);
        affine<F> a = pts[(size_t)k * n + i];
        a.x = canon(a.x * (id * zzz[k])); /* stored points are canonical (field.cuh) */
        a.y = canon(a.y * (id * zz[k]));
        pts[(size_t)k * n + i] = a;
    }
}

} // namespace cuzk_gpu

#endif
