/*
 * G2's batch-affine kernels with each Fp2 element split over two lanes.
 *
 * k_ba_pairs, k_ba_quads and k_ba_pass_b (msm_kernels.cuh) give each slice one thread, which
 * holds whole Fp2 elements and makes each Fp2 product as two or three Fp products one after the
 * other. Their G2 instances sit at their register caps (BN254's k_ba_pairs at 128 registers,
 * BLS12-381's at 168, its k_ba_quads and pass B at 250-255: 2 warps per scheduler) and are
 * bound by the latency of those dependent products, not by the multiply-adds. Here a slice
 * has two adjacent lanes (lane ^ 1): lane h holds coordinate c_h of every Fp2 value, so a lane
 * holds half the words, and an Fp2 product is one Fp sum of two products per lane, with one
 * reduction (field.cuh's mul_add_call), the partner's coordinates fetched by warp shuffles:
 *   lane 0: c0 = a0 b0 - a1 b1 = a0 b0 + a1 (p - b1)
 *   lane 1: c1 = a0 b1 + a1 b0
 * Both lanes run the same instructions (the operands selected by h), and every predicate
 * (is_zero, ==) is the whole Fp2 value's, the same in both, so a pair never diverges. A square
 * is one product per lane: c0 = (a0 + a1)(a0 - a1), c1 = (a1 + a1) a0. The multiply-adds per Fp2
 * product are those of BN254's two sums (784; BLS12-381 1752 against Karatsuba's 1764), the
 * chain each lane waits on half as long.
 *
 * k_ba_pairs_h writes k_ba_pairs's outputs word for word (both make
 * canonical Fp values): the pair sums, the quads' prefix products, the slice's product, the
 * quad count and the two masks; k_ba_quads_h k_ba_quads's: the quads' sums, buckets
 * and carries; k_ba_pass_b_h k_ba_pass_b's: buckets and carries. Their phases are
 * pair_sums_h and add_slice_h (ba_pair_sums and ba_add_slice for G2), the mixed additions
 * curve.cuh's generic xyzz_madd over fh (a lane's coordinate with Fp2's operations).
 * tests/gpu/msm_emu.cpp runs each beside the one-lane kernel on the same chunks and compares
 * every word; its host emulation runs the lanes as coroutines that meet at
 * each shuffle (tests/gpu/emu_cuda.h). gpu_test runs G2 MSMs through them on a device.
 */
#ifndef CUZK_GPU_BA_HALVES_CUH
#define CUZK_GPU_BA_HALVES_CUH

#include "gpu/msm/msm_kernels.cuh"
#include "gpu/msm/msm_reduce.cuh"

namespace cuzk_gpu {

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

/* An Fp2 value as the lane holds it, for the curve formulas (curve.cuh's xyzz_madd, generic in
 * the field): the lane's coordinate, with Fp2's operations (the lane's half from threadIdx.x:
 * the halves kernels' blocks have an even size, so lane g & 1 of the grid is threadIdx.x & 1).
 * Every predicate (is_zero, ==) holds for the whole Fp2 value, the same in both lanes, so the
 * formulas' branches never split a pair. */
DI half_lane this_half()
{
    return {3u << (threadIdx.x & 30), threadIdx.x & 1u};
}
template <class C> struct fh {
    fe<C> v;
    static DI fh zero()
    {
        fh r;
        r.v = fe<C>::zero();
        return r;
    }
    static DI fh one() /* Fp2's one: (1, 0) */
    {
        fh r;
        r.v = this_half().h ? fe<C>::zero() : fe<C>::one();
        return r;
    }
    DI bool is_zero() const { return both_bits(v.is_zero(), this_half()) != 0; }
};
template <class C> DI fh<C> fh_of(const fe<C> &a)
{
    fh<C> r;
    r.v = a;
    return r;
}
template <class C> DI fh<C> operator+(const fh<C> &a, const fh<C> &b)
{
    return fh_of<C>(a.v + b.v);
}
template <class C> DI fh<C> operator-(const fh<C> &a, const fh<C> &b)
{
    return fh_of<C>(a.v - b.v);
}
template <class C> DI fh<C> operator-(const fh<C> &a)
{
    return fh_of<C>(-a.v);
}
template <class C> DI fh<C> dbl(const fh<C> &a)
{
    return fh_of<C>(a.v + a.v);
}
template <class C> DI bool operator==(const fh<C> &a, const fh<C> &b)
{
    return both_bits(a.v == b.v, this_half()) != 0;
}
template <class C> DI fh<C> operator*(const fh<C> &a, const fh<C> &b)
{
    return fh_of<C>(mul_h(a.v, b.v, this_half()));
}
template <class C> DI fh<C> sqr(const fh<C> &a)
{
    return fh_of<C>(sqr_h(a.v, this_half()));
}
template <class C>
DI void mul2(fh<C> &r0, const fh<C> &a0, const fh<C> &b0, fh<C> &r1, const fh<C> &a1,
             const fh<C> &b1)
{
    const fh<C> t = a0 * b0;
    r1 = a1 * b1;
    r0 = t;
}
template <class C>
DI void sqr2(fh<C> &r0, const fh<C> &a, fh<C> &r1, const fh<C> &b)
{
    const fh<C> t = sqr(a);
    r1 = sqr(b);
    r0 = t;
}
template <class C, class S>
DI void madd_tail(S &p, const fh<C> &R, const fh<C> &b, const fh<C> &ppp,
                  const fh<C> &pp, const fh<C> &x3)
{
    madd_tail_pairs(p, R, b, ppp, pp, x3);
}
/* The parked sum's words (xyzz_park: N words a lane per coordinate). */
template <int NT, class C>
DI void sh_words_ld(fh<C> &r, const uint32_t (*s)[NT], int w0, int t)
{
    sh_words_ld<NT>(r.v, s, w0, t);
}
template <int NT, class C>
DI void sh_words_st(const fh<C> &a, uint32_t (*s)[NT], int w0, int t)
{
    sh_words_st<NT>(a.v, s, w0, t);
}

/* This lane's coordinates of the point value v names (ld_pt_h) / of an affine Fp2 point. */
template <class C>
DI affine<fh<C>> ld_pt_fh(const affine<fe2<C>> *pts, uint32_t v, uint32_t h)
{
    const affine<fe<C>> a = ld_pt_h(pts, v, h);
    affine<fh<C>> r;
    r.x.v = a.x;
    r.y.v = a.y;
    return r;
}
/* A run's sum to its bucket or (the slice's first run continuing an earlier slice's) to the
 * slice's carry, as flush_run: each lane its coordinates, lane 0 the carry's key. */
template <class C>
DI void flush_run_h(uint32_t key, const xyzz<fh<C>> &acc, bool &carry, size_t t,
                    xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt, uint32_t h)
{
    fe<C> *d = (fe<C> *)(carry ? cpt + t : buckets + key);
    if (carry && !h)
        ckey[t] = key;
    carry = false;
    st16(d + h, acc.x.v);
    st16(d + 2 + h, acc.y.v);
    st16(d + 4 + h, acc.zz.v);
    st16(d + 6 + h, acc.zzz.v);
}

/* This lane's coordinates of an XYZZ Fp2 point (a bucket a later part of a split MSM adds
 * its run to: acc_open's halves). */
template <class C> DI xyzz<fh<C>> ld_xyzz_h(const xyzz<fe2<C>> *b, uint32_t h)
{
    xyzz<fh<C>> r;
    r.x.v = ld_h(&b->x, h);
    r.y.v = ld_h(&b->y, h);
    r.zz.v = ld_h(&b->zz, h);
    r.zzz.v = ld_h(&b->zzz, h);
    return r;
}

template <class C> DI void st_xyzz_h(xyzz<fe2<C>> *b, const xyzz<fh<C>> &a, uint32_t h)
{
    st_h(&b->x, h, a.x.v);
    st_h(&b->y, h, a.y.v);
    st_h(&b->zz, h, a.zz.v);
    st_h(&b->zzz, h, a.zzz.v);
}

/* The kernels' launch bounds (blocks of 64 threads per SM) per field size: k_ba_pairs_h,
 * k_ba_quads_h and k_ba_pass_b_h at 8 blocks (128 registers) for BN254, 6 (168) for BLS12-381;
 * the carry levels' and the bucket sums' (k_accumk_h, k_bucket_sums_h) at 6 for BN254 and 4
 * (255 registers) for BLS12-381, where their spills at more blocks cost more than the warps
 * gained. */
enum { HV_PAIRS, HV_QUADS, HV_PASSB, HV_REDUCE };
template <class C, int K> constexpr int ba_halves_minb()
{
    return K == HV_REDUCE ? (C::N == 8 ? 6 : 4) : (C::N == 8 ? 8 : 6);
}

/* Pass B's phase 1 in halves (ba_pair_sums for G2, no JOIN): the slice's pairs (mask, beg)
 * backwards, each pair's inverse from the running one (iv: this lane's coordinate of the
 * inverse of the slice's product; j its prefix count, pre its prefixes at pre[i * Tc + tl]).
 * put(pi, r, s) takes this lane's coordinates of pair pi's sum (entries r and r + 1): the
 * affine sum, or for a pair with a point at infinity the other point. Returns the pairs added
 * point by point (P == +-Q, or x = 0 finite; bit pi, put not called). */
template <class C, class Put>
DI uint64_t pair_sums_h(const pmask &mask, size_t beg, const uint32_t *vals,
                        const affine<fe2<C>> *pts, uint32_t j, fe<C> iv, const fe2<C> *pre,
                        size_t Tc, size_t tl, const half_lane &hl, Put put)
{
    typedef fe<C> H;
    const uint32_t h = hl.h;
    uint64_t spec = 0;
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
                id = mul_h(iv, pr, hl);
                iv = mul_h(iv, q.x - p.x, hl);
            }
            const H lam = mul_h(q.y - p.y, id, hl);
            s.x = sqr_h(lam, hl) - p.x - q.x;
            s.y = mul_h(lam, p.x - s.x, hl) - p.y;
        }
        put(pi, r, s);
    }
    return spec;
}

/* k_ba_pairs_h makes the quads' prefix products (the product so far times the quad's dx) only
 * at its even puts (pair sums 0, 2, ... of the slice's walk: in the same turns in every lane of
 * a warp), a quad closed at an odd put made at the next. A slice's quads close at every second
 * pair of a run, so in any turn about half the lanes would make one while the others wait; no
 * two consecutive puts both close a quad (a quad leaves no open pair), so one product every two
 * puts makes every lane's. k_ba_quads_oh does the same for the octs' prefix products. */

/* add_slice_h takes each lane to its next real addition before the pair's lanes add: a run that
 * opens without a bucket value (every run of a split's first part, a slice's first run where it
 * continues an earlier slice's) copies its first point into the sum on the way, instead of
 * spending an addition's turn of the warp on xyzz_madd's copy while the other lanes add, and
 * the warp's lanes meet in a vote before each addition (nothing else makes nvcc reconverge
 * them there). */

/* Pass B's phase 2 in halves (ba_add_slice for G2): the slice forwards, a pair being one
 * addition of its sum (sum(pi): this lane's coordinates), a quad (QUADS: bit pi of quad) one
 * addition of its sum, an oct (OCTS: quads pi and pi + 2, bit pi + 1 of quad set too) one
 * addition of its sum, a pair of spec one addition per point; the XYZZ sum parked in shared
 * memory (park: N words a lane per coordinate), curve.cuh's xyzz_madd over fh. Buckets and
 * carries as ba_add_slice writes them. */
template <class C, bool ALL_ZERO, bool QUADS, bool OCTS = false, class Sum>
DI void add_slice_h(const uint32_t *keys, const uint32_t *vals, size_t beg, uint32_t live,
                    size_t t, const pmask &mask, uint64_t spec, uint64_t quad,
                    const affine<fe2<C>> *pts, uint32_t (*park)[ACC_THREADS],
                    xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt, uint32_t cur,
                    bool carry, bool into, uint32_t h, Sum sum)
{
    typedef fh<C> E;
    xyzz_park<E, ACC_THREADS> acc;
    acc.s = park;
    acc.t = threadIdx.x;
    /* into: a run owned here starts at its bucket's value (acc_open, msm_kernels.cuh) */
    acc.set(into && !carry && live ? ld_xyzz_h<C>(buckets + cur, h) : xyzz<E>::inf());
    int pi = 0;
    {
        /* empty: the sum is known to be infinity (a run opened without a bucket value), so
         * its next point is copied, not added: on the lane's way to its next addition */
        bool empty = !(into && !carry && live);
        uint32_t r = 0;
        /* the warp's lanes meet (a vote) before each addition, so that the lanes that copied
         * on the way add together with the others (nothing else makes nvcc reconverge them
         * there); every lane that came in votes until none has an addition */
        const uint32_t wm = __activemask();
        for (;;) {
            affine<E> a;
            bool have = false;
            while (r < live) {
                const uint32_t k = key_at<ALL_ZERO>(keys, beg + r);
                if (k != cur) {
                    flush_run_h(cur, acc.load(), carry, t, buckets, ckey, cpt, h);
                    acc.set(into ? ld_xyzz_h<C>(buckets + k, h) : xyzz<E>::inf());
                    empty = !into;
                    cur = k;
                }
                const bool pair = mask.at(r);
                const bool qd = QUADS && pair && ((quad >> pi) & 1);
                const bool oc = OCTS && qd && ((quad >> (pi + 1)) & 1);
                const bool sp = pair && ((spec >> pi) & 1);
                if (pair && !sp) {
                    const affine<fe<C>> s = sum(pi);
                    a.x.v = s.x;
                    a.y.v = s.y;
                } else {
                    a = ld_pt_fh<C>(pts, vals[beg + r], h);
                }
                if (sp) { /* rare (P == +-Q, x = 0): the first point added here */
                    xyzz_madd(acc, a);
                    a = ld_pt_fh<C>(pts, vals[beg + r + 1], h);
                    empty = acc.zz().is_zero();
                }
                pi += oc ? 4 : qd ? 2 : pair;
                r += oc ? 8 : qd ? 4 : pair ? 2 : 1;
                if (!empty) {
                    have = true;
                    break;
                }
                if (!a.is_inf()) { /* xyzz_madd's copy into an empty sum */
                    acc.set_x(a.x);
                    acc.set_y(a.y);
                    acc.set_zz(E::one());
                    acc.set_zzz(E::one());
                    empty = false;
                }
            }
            if (!__any_sync(wm, have))
                break;
            if (have)
                xyzz_madd(acc, a);
        }
        if (live)
            flush_run_h(cur, acc.load(), carry, t, buckets, ckey, cpt, h);
    }
}

/* A slice of two lanes as pass B and k_ba_quads open it (BA_SLICE_OPEN): g the lane's index in
 * the grid, tl = g / 2 the slice's in the chunk, t overall, beg its first entry; cur, carry as
 * slice_start makes them, its carry key cleared by lane 0; mask, live as ba_pairs. The kernel
 * returns when the pair has no slice (both lanes alike). */
#define BA_SLICE_OPEN_H()                                                                      \
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, tl = g >> 1;              \
    if (tl >= Tc)                                                                              \
        return;                                                                                \
    const uint32_t h = (uint32_t)(g & 1);                                                      \
    const size_t t = t0 + tl, beg = t * L;                                                     \
    if (beg >= M)                                                                              \
        return;                                                                                \
    const size_t end = beg + L < M ? beg + L : M;                                              \
    uint32_t cur = key_at<ALL_ZERO>(keys, beg);                                                \
    const bool carry = beg > 0 && cur != SENT && key_at<ALL_ZERO>(keys, beg - 1) == cur;      \
    if (!h)                                                                                    \
        ckey[t] = SENT;                                                                        \
    uint32_t live;                                                                             \
    const pmask mask = ba_pairs<ALL_ZERO>(keys, beg, end, &live)

/* k_ba_pairs for F = fe2<C> (G2), two lanes a slice: 2 Tc threads for the chunk's Tc slices.
 * pair_sums_h's walk and k_ba_pairs's put (the quads). */
template <class C, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_PAIRS>())
k_ba_pairs_h(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
             size_t Tc, const affine<fe2<C>> *pts, fe2<C> *pre, fe2<C> *prod, uint8_t *npre,
             affine<fe2<C>> *psum, uint64_t *masks)
{
    typedef fe<C> H;
    typedef fe2<C> F;
    __shared__ uint32_t qdx[C::N][ACC_THREADS];
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, tl = g >> 1;
    if (tl >= Tc)
        return; /* both lanes of a pair (Tc counts pairs) */
    const half_lane hl = this_half();
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
        int open_r = -1;  /* the pair above the one being made, while in no quad */
        H ox = H::zero(); /* its x */
        /* A quad's dx waits in shared memory (in registers the kernel spills more) for the
         * next even put (puts 0, 2, ...: each lane's n-th pair in the
         * warp's n-th turn, unless a special pair, rare, took a turn without one) */
        bool pend = false;
        uint32_t n = 0; /* the puts so far */
        /* the quads' prefix product times dx, the next prefix */
        auto quad_product = [&](const H &dx) {
            qacc = k ? mul_h(qacc, dx, hl) : dx;
            st_h(pre + (size_t)(P - 1 - k) * Tc + tl, h, qacc);
            k++;
        };
        auto quad_pending = [&]() {
            H dx;
            sh_words_ld<ACC_THREADS>(dx, qdx, 0, threadIdx.x);
            quad_product(dx);
            pend = false;
        };
        /* the running inverse: the inverse of the slice's product (the tree's) */
        spec = pair_sums_h<C>(
            mask, beg, vals, pts, npre[tl], ld_h(prod + tl, h), pre, Tc, tl, hl,
            [&](int pi, int r, const affine<H> &s) {
                /* k_ba_pairs's put: the sum stored, a quad with the open pair above it if
                 * they are one run's and their sums' x differ (neither 0) */
                affine<F> *const d = psum + (size_t)pi * Tc + tl;
                st_h(&d->x, h, s.x);
                st_h(&d->y, h, s.y);
                if (open_r == r + 2 &&
                    key_at<ALL_ZERO>(keys, beg + r) == key_at<ALL_ZERO>(keys, beg + r + 2) &&
                    !zero_eq_h(s.x, ox, hl)) {
                    sh_words_st<ACC_THREADS>(ox - s.x, qdx, 0, threadIdx.x);
                    pend = true;
                    quad |= 1ull << pi;
                    open_r = -1;
                } else {
                    open_r = r;
                    ox = s.x;
                }
                if (pend && !(n & 1))
                    quad_pending();
                n++;
            });
        if (pend)
            quad_pending();
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

/* The affine sum of two sums of one run, a and b (this lane's coordinates), stored over a and
 * returned: its inverse from the running one (iv, stepped past it; k the prefixes below it, pre()
 * the address of the one just below when k > 0), as k_ba_quads's. */
template <class C, class Pre>
DI affine<fh<C>> sum_over_h(affine<fe2<C>> *a, const affine<fe2<C>> *b, fh<C> &iv,
                                  uint32_t k, Pre pre, uint32_t h)
{
    typedef fh<C> E;
    const E x1 = fh_of<C>(ld_h(&a->x, h));
    const E x2 = fh_of<C>(ld_h(&b->x, h));
    E id = iv;
    if (k)
        mul2(id, iv, fh_of<C>(ld_h(pre(), h)), iv, iv, x2 - x1);
    const E y1 = fh_of<C>(ld_h(&a->y, h));
    const E lam = (fh_of<C>(ld_h(&b->y, h)) - y1) * id;
    const affine<E> s = affine_from_lam(lam, x1, x2, y1);
    st_h(&a->x, h, s.x.v);
    st_h(&a->y, h, s.y.v);
    return s;
}

/* k_ba_quads for F = fe2<C> (G2), two lanes a slice (2 Tc threads), after k_ba_pairs or
 * k_ba_pairs_h: the quads' sums over their first pair's sums, then add_slice_h; buckets and
 * carries as k_ba_quads writes them. */
template <class C, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_QUADS>())
k_ba_quads_h(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
             size_t Tc, const affine<fe2<C>> *pts, const fe2<C> *pre, const fe2<C> *inv_,
             const uint8_t *npre, affine<fe2<C>> *psum, const uint64_t *masks,
             xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt, bool into)
{
    typedef fh<C> E;
    typedef fe2<C> F;
    __shared__ uint32_t park[4 * C::N][ACC_THREADS];
    BA_SLICE_OPEN_H();
    const uint64_t quad = masks[tl], spec = masks[Tc + tl];
    {
        const uint32_t P = L / 2;
        uint32_t k = npre[tl];
        E iv = fh_of<C>(ld_h(inv_ + tl, h));
        for (uint64_t qq = quad; qq; qq &= qq - 1) {
            const int pi = __ffsll((long long)qq) - 1;
            affine<F> *const s1p = psum + (size_t)pi * Tc + tl;
            const E x1 = fh_of<C>(ld_h(&s1p->x, h));
            const E x2 = fh_of<C>(ld_h(&s1p[Tc].x, h));
            k--;
            E id = iv;
            if (k)
                mul2(id, iv, fh_of<C>(ld_h(pre + (size_t)(P - k) * Tc + tl, h)), iv, iv,
                     x2 - x1);
            const E y1 = fh_of<C>(ld_h(&s1p->y, h));
            const E lam = (fh_of<C>(ld_h(&s1p[Tc].y, h)) - y1) * id;
            const affine<E> s = affine_from_lam(lam, x1, x2, y1);
            st_h(&s1p->x, h, s.x.v);
            st_h(&s1p->y, h, s.y.v);
        }
    }
    add_slice_h<C, ALL_ZERO, true>(
        keys, vals, beg, live, t, mask, spec, quad, pts, park, buckets, ckey, cpt, cur, carry,
        into, h,
        [&](int pi) {
            const affine<F> *const d = psum + (size_t)pi * Tc + tl;
            affine<fe<C>> s;
            s.x = ld_h(&d->x, h);
            s.y = ld_h(&d->y, h);
            return s;
        });
}

/* ---- Octs: pairs of quad sums, added in affine too (BLS12-381 G2, with quads).
 *
 * Two quads of one run, the second starting four entries after the first (pairs pi, pi + 1 and
 * pi + 2, pi + 3), whose sums Q1, Q2 have x1 != x2 (neither 0) are an oct: Q1 + Q2 by the same
 * affine addition, its inverse shared with the chunk's other octs by a third product tree. In
 * the quads' count (msm_kernels.cuh) an oct takes 2 x (2 x 7 + 7) + 7 + 10 = 59 multiplications
 * against 2 x 31 = 62 for its two quads (an affine sum instead of a mixed addition), for the
 * quads' sums' trip through device memory and one more kernel and tree per chunk. Instead of
 * k_ba_quads_h:
 *   k_ba_quads_oh: the quads forwards (as k_ba_quads_h), each quad's sum stored over its first
 *     pair's; each paired with the open quad below it when they make an oct (greedily from the
 *     slice's start), the octs' denominators x2 - x1 multiplied into prefix products (oct k's
 *     in slot k: the quads' prefixes, still read, sit in slots P - nq .. P - 1 and k < nq / 2 <=
 *     P - nq), the slice's product into prod (the tree's leaf, read by this thread already),
 *     the oct count into npre, an oct of quads pi and pi + 2 into the quad mask as bit pi + 1
 *     set (pair pi + 1 is its first quad's second pair, a bit no quad uses) and bit pi + 2
 *     cleared (so oct_starts needs no loop; add_slice_h steps over the second quad);
 *   the product tree over prod;
 *   k_ba_octs_h: the octs backwards (the reverse of their prefix order), each oct's sum over
 *     its first quad's, then add_slice_h with octs (one addition an oct).
 * G2 in halves only. BLS12-381 only (gpu_impl.cuh's accumulate): for BN254 the
 * quads' saved products are eaten by the third tree and the sums' trip through memory. */

/* The octs' first quads (bit pi) of a quad mask with octs: an oct of quads pi and pi + 2 has
 * bits pi and pi + 1 set and pi + 2, pi + 3 clear; any other quad bit pi + 1 clear. */
DI uint64_t oct_starts(uint64_t quad) { return quad & (quad >> 1); }

/* k_ba_quads_h's quad sums (2 Tc threads, after k_ba_pairs or k_ba_pairs_h and the quads' tree:
 * inv_ the inverse of the slice's quad product) with the octs' prefix products, as described
 * above; no bucket written. */
template <class C, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_QUADS>())
k_ba_quads_oh(const uint32_t *keys, size_t M, uint32_t L, size_t t0, size_t Tc, fe2<C> *pre,
              fe2<C> *prod, uint8_t *npre, affine<fe2<C>> *psum, uint64_t *masks)
{
    typedef fh<C> E;
    typedef fe<C> H;
    typedef fe2<C> F;
    /* The octs' prefix product (this lane's coordinate, words 0 .. N - 1) and the open quad's
     * x (N .. 2N - 1) wait in shared memory while the quads' sums use the registers (in
     * registers they make BN254's kernel spill). */
    __shared__ uint32_t os[3 * C::N][ACC_THREADS];
    const int th = threadIdx.x;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, tl = g >> 1;
    if (tl >= Tc)
        return; /* both lanes of a pair */
    const half_lane hl = this_half();
    const uint32_t h = hl.h;
    const size_t beg = (t0 + tl) * L;
    uint32_t ko = 0;
    uint64_t quad = 0;
    sh_words_st<ACC_THREADS>(h ? H::zero() : H::one(), os, 0, th); /* F::one() */
    if (beg < M) {
        const size_t end = beg + L < M ? beg + L : M;
        uint32_t live;
        pmask m = ba_pairs<ALL_ZERO>(keys, beg, end, &live);
        const uint32_t P = L / 2;
        uint32_t k = npre[tl];
        quad = masks[tl];
        E iv = fh_of<C>(ld_h(prod + tl, h));
        int pn = 0, r = 0;   /* pairs popped from m; the last one's entry */
        int open_pi = -1;    /* the quad below the one being made, while in no oct */
        int open_r = 0;      /* its first entry */
        uint64_t flags = 0, second = 0; /* the octs' bits pi + 1 and pi + 2 */
        /* An oct's dx waits (words 2N .. 3N - 1) for the next even
         * quad (quads 0, 2, ...), as k_ba_pairs_h's quads' for its next even put */
        bool pend = false;
        uint32_t n = 0; /* the quads so far */
        auto oct_product = [&](H oacc) {
            if (ko) {
                H a;
                sh_words_ld<ACC_THREADS>(a, os, 0, th);
                oacc = mul_h(a, oacc, hl);
            }
            sh_words_st<ACC_THREADS>(oacc, os, 0, th);
            st_h(pre + (size_t)ko * Tc + tl, h, oacc);
            ko++;
        };
        auto oct_pending = [&]() {
            H dx;
            sh_words_ld<ACC_THREADS>(dx, os, 2 * C::N, th);
            oct_product(dx);
            pend = false;
        };
        for (uint64_t qq = quad; qq; qq &= qq - 1) {
            const int pi = __ffsll((long long)qq) - 1;
            while (pn <= pi) { /* the entry of pair pi */
                r = m.pop_low();
                pn++;
            }
            affine<F> *const s1p = psum + (size_t)pi * Tc + tl;
            k--;
            const affine<E> s = sum_over_h(
                s1p, s1p + Tc, iv, k, [&] { return pre + (size_t)(P - k) * Tc + tl; }, h);
            bool oct = false;
            if (open_pi == pi - 2 && r == open_r + 4 &&
                key_at<ALL_ZERO>(keys, beg + r) == key_at<ALL_ZERO>(keys, beg + open_r)) {
                H ox;
                sh_words_ld<ACC_THREADS>(ox, os, C::N, th);
                oct = !zero_eq_h(s.x.v, ox, hl);
                if (oct) {
                    sh_words_st<ACC_THREADS>(s.x.v - ox, os, 2 * C::N, th);
                    pend = true;
                    flags |= 1ull << (open_pi + 1);
                    second |= 1ull << pi;
                    open_pi = -1;
                }
            }
            if (!oct) {
                open_pi = pi;
                open_r = r;
                sh_words_st<ACC_THREADS>(s.x.v, os, C::N, th);
            }
            if (pend && !(n & 1))
                oct_pending();
            n++;
        }
        if (pend)
            oct_pending();
        quad = (quad | flags) & ~second;
    }
    H oacc;
    sh_words_ld<ACC_THREADS>(oacc, os, 0, th);
    st_h(prod + tl, h, oacc);
    /* lane 1 has read npre[tl] and masks[tl] (above) before lane 0 writes them */
    __syncwarp(hl.mask);
    if (!h) {
        npre[tl] = (uint8_t)ko;
        masks[tl] = quad;
    }
}

/* The octs of k_ba_quads_oh summed (inv_[tl], the inverse of its prod[tl]; 2 Tc threads), then
 * add_slice_h with octs: buckets and carries as k_ba_quads_h writes them, up to the grouping of
 * each run's additions (the same points, XYZZ coordinates of the same sums). */
template <class C, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_QUADS>())
k_ba_octs_h(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
            size_t Tc, const affine<fe2<C>> *pts, const fe2<C> *pre, const fe2<C> *inv_,
            const uint8_t *npre, affine<fe2<C>> *psum, const uint64_t *masks,
            xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt, bool into)
{
    typedef fh<C> E;
    typedef fe2<C> F;
    __shared__ uint32_t park[4 * C::N][ACC_THREADS];
    BA_SLICE_OPEN_H();
    const uint64_t quad = masks[tl], spec = masks[Tc + tl];
    {
        uint32_t k = npre[tl];
        E iv = fh_of<C>(ld_h(inv_ + tl, h));
        for (uint64_t oo = oct_starts(quad); oo; oo &= ~(1ull << (63 - __clzll((long long)oo)))) {
            const int pi = 63 - __clzll((long long)oo); /* the last made first */
            affine<F> *const s1p = psum + (size_t)pi * Tc + tl;
            k--;
            sum_over_h(s1p, s1p + 2 * Tc, iv, k, [&] { return pre + (size_t)(k - 1) * Tc + tl; },
                       h);
        }
    }
    add_slice_h<C, ALL_ZERO, true, true>(
        keys, vals, beg, live, t, mask, spec, quad, pts, park, buckets, ckey, cpt, cur, carry,
        into, h,
        [&](int pi) {
            const affine<F> *const d = psum + (size_t)pi * Tc + tl;
            affine<fe<C>> s;
            s.x = ld_h(&d->x, h);
            s.y = ld_h(&d->y, h);
            return s;
        });
}

/* k_ba_pass_b for F = fe2<C> (G2), two lanes a slice (2 Tc threads): pair_sums_h into a
 * per-lane array (this lane's coordinates, local memory), then add_slice_h. */
template <class C, bool ALL_ZERO>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_PASSB>())
k_ba_pass_b_h(const uint32_t *keys, const uint32_t *vals, size_t M, uint32_t L, size_t t0,
              size_t Tc, const affine<fe2<C>> *pts, const fe2<C> *pre, const fe2<C> *inv_,
              const uint8_t *npre, xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt,
              bool into)
{
    __shared__ uint32_t park[4 * C::N][ACC_THREADS];
    BA_SLICE_OPEN_H();
    const half_lane hl = this_half();
    affine<fe<C>> sums[BA_MAXP];
    const uint64_t spec = pair_sums_h<C>(
        mask, beg, vals, pts, npre[tl], ld_h(inv_ + tl, h), pre, Tc, tl, hl,
        [&](int pi, int, const affine<fe<C>> &s) { sums[pi] = s; });
    add_slice_h<C, ALL_ZERO, false>(keys, vals, beg, live, t, mask, spec, 0, pts, park, buckets,
                                    ckey, cpt, cur, carry, into, h,
                                    [&](int pi) { return sums[pi]; });
}

/* ---- G2's XYZZ sums after level 1, two lanes a sum (k_accumk_h, k_bucket_sums_h,
 * k_bit_sums_h, k_pair_sum_h; gpu_impl.cuh runs them for every G2 MSM).
 *
 * k_accumk (the carry levels) and the bucket reduction's kernels give each thread whole Fp2
 * points: for G2 they sit at 254 registers (BN254), two warps per scheduler, each general
 * XYZZ addition a chain of dependent Fp2 products. Here two adjacent lanes share each of their
 * threads' work, lane h holding coordinate h of every Fp2 value (fh, above), curve.cuh's
 * xyzz_add over fh; what they write is the one-lane kernels' output word for word (msm_emu
 * compares them). */

/* k_accumk for F = fe2<C>: 2 Tn threads for the level's Tn carry slices. */
template <class C>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_REDUCE>())
k_accumk_h(const uint32_t *ikey, const xyzz<fe2<C>> *ipt, size_t M, uint32_t L,
           xyzz<fe2<C>> *buckets, uint32_t *ckey, xyzz<fe2<C>> *cpt)
{
    typedef fh<C> E;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, t = g >> 1;
    const uint32_t h = (uint32_t)(g & 1);
    const size_t beg = t * L;
    if (beg >= M)
        return; /* both lanes of the pair */
    const size_t end = beg + L < M ? beg + L : M;
    uint32_t cur = ikey[beg];
    bool carry = beg > 0 && cur != SENT && ikey[beg - 1] == cur;
    if (!h)
        ckey[t] = SENT;
    xyzz<E> acc = xyzz<E>::inf();
    for (size_t i = beg; i <= end; i++) {
        const uint32_t k = i < end ? ikey[i] : SENT;
        if (k != cur) {
            if (carry) {
                if (!h)
                    ckey[t] = cur;
                st_xyzz_h(cpt + t, acc, h);
                carry = false;
            } else if (cur != SENT) {
                xyzz<E> b = ld_xyzz_h<C>(buckets + cur, h);
                xyzz_add(b, acc);
                st_xyzz_h(buckets + cur, b, h);
            }
            acc = xyzz<E>::inf();
            cur = k;
        }
        if (k != SENT)
            xyzz_add(acc, ld_xyzz_h<C>(ipt + i, h));
    }
}

/* k_bucket_sums for F = fe2<C> (its G2 form: the running sums stored over the chunk's buckets,
 * then summed): 2 W cnt threads. */
template <class C>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_REDUCE>())
k_bucket_sums_h(xyzz<fe2<C>> *buckets, int W, uint32_t B, uint32_t S, xyzz<fe2<C>> *run_out,
                xyzz<fe2<C>> *tri_out)
{
    typedef fh<C> E;
    const uint32_t cnt = B / S;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, t = g >> 1;
    const uint32_t h = (uint32_t)(g & 1);
    if (t >= (size_t)W * cnt)
        return; /* both lanes of the pair */
    xyzz<fe2<C>> *bk = buckets + t * S;
    xyzz<E> run = xyzz<E>::inf(), tri = xyzz<E>::inf();
    for (int j = (int)S - 1; j >= 0; j--) {
        xyzz_add(run, ld_xyzz_h<C>(bk + j, h));
        st_xyzz_h(bk + j, run, h);
    }
    st_xyzz_h(run_out + t, run, h);
    for (int j = (int)S - 1; j >= 0; j--)
        xyzz_add(tri, ld_xyzz_h<C>(bk + j, h));
    st_xyzz_h(tri_out + t, tri, h);
}

/* k_bit_sums for F = fe2<C>: 2 W (nb + 1) len0 threads. */
template <class C>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_REDUCE>())
k_bit_sums_h(const xyzz<fe2<C>> *run, const xyzz<fe2<C>> *tri, int W, uint32_t cnt, int nb,
             uint32_t len0, xyzz<fe2<C>> *out)
{
    typedef fh<C> E;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, t = g >> 1;
    const uint32_t h = (uint32_t)(g & 1);
    const size_t per = (size_t)(nb + 1) * len0;
    if (t >= (size_t)W * per)
        return; /* both lanes of the pair */
    const uint32_t w = (uint32_t)(t / per), sg = (uint32_t)((t % per) / len0),
                   i = (uint32_t)(t % len0);
    xyzz<E> acc = xyzz<E>::inf();
    if ((int)sg < nb) {
        for (uint32_t k = 2 * i; k < 2 * i + 2 && k < cnt / 2; k++)
            xyzz_add(acc, ld_xyzz_h<C>(run + (size_t)w * cnt + bit_chunk(k, sg), h));
    } else {
        for (uint32_t c = 4 * i; c < 4 * i + 4 && c < cnt; c++)
            xyzz_add(acc, ld_xyzz_h<C>(tri + (size_t)w * cnt + c, h));
    }
    st_xyzz_h(out + t, acc, h);
}

/* k_pair_sum for F = fe2<C>: 2 n_out threads. */
template <class C>
__global__ void __launch_bounds__(ACC_THREADS, ba_halves_minb<C, HV_REDUCE>())
k_pair_sum_h(const xyzz<fe2<C>> *in, size_t n_out, xyzz<fe2<C>> *out)
{
    typedef fh<C> E;
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x, t = g >> 1;
    const uint32_t h = (uint32_t)(g & 1);
    if (t >= n_out)
        return; /* both lanes of the pair */
    xyzz<E> a = ld_xyzz_h<C>(in + 2 * t, h);
    xyzz_add(a, ld_xyzz_h<C>(in + 2 * t + 1, h));
    st_xyzz_h(out + t, a, h);
}

} // namespace cuzk_gpu

#endif
