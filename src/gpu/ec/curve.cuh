/*
 * Short-Weierstrass points (a = 0) over a device field F (fe<C> for G1, fe2<C> for G2).
 *
 * affine: x, y, the snarkjs byte layout; the point at infinity is x = y = 0 (never on these
 *         curves, b != 0).
 * xyzz:   (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity is ZZ = 0.
 *         Formulas from the Explicit-Formulas Database, "g1p/xyzz" (Bernstein, Lange):
 *         madd-2008-s (8M + 2S), add-2008-s (12M + 2S), dbl-2008-s-1 / mdbl-2008-s-1.
 *         They do not handle P == Q or P == -Q, so each caller-facing routine tests for those.
 *         Their independent products go in pairs (mul2 / sqr2, field.cuh): interleaved for G1,
 *         one after the other for Fp2 (G2).
 */
#ifndef CUZK_GPU_CURVE_CUH
#define CUZK_GPU_CURVE_CUH

#include "gpu/ff/field.cuh"

namespace cuzk_gpu {

template <class F> struct affine {
    F x, y;
    DI bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F> struct xyzz {
    F x, y, zz, zzz;
    static DI xyzz inf()
    {
        xyzz r;
        r.x = F::zero();
        r.y = F::zero();
        r.zz = F::zero();
        r.zzz = F::zero();
        return r;
    }
    DI bool is_inf() const { return zz.is_zero(); }
};

template <class F> DI void xyzz_dbl(xyzz<F> &p)
{
    if (p.is_inf())
        return;
    F u = dbl(p.y);
    F v = sqr(u);
    F w = u * v;
    F s = p.x * v;
    F x2 = sqr(p.x);
    F m = dbl(x2) + x2;
    F x3 = sqr(m) - dbl(s);
    F y3 = m * (s - x3) - w * p.y;
    p.zz = v * p.zz;
    p.zzz = w * p.zzz;
    p.x = x3;
    p.y = y3;
}

/* p = 2 q for an affine q (not infinity). */
template <class F> DI void xyzz_mdbl(xyzz<F> &p, const affine<F> &q)
{
    F u = dbl(q.y);
    F v = sqr(u);
    F w = u * v;
    F s = q.x * v;
    F x2 = sqr(q.x);
    F m = dbl(x2) + x2;
    p.x = sqr(m) - dbl(s);
    p.y = m * (s - p.x) - w * q.y;
    p.zz = v;
    p.zzz = w;
}

/* p + q in affine coordinates, given id = 1 / (q.x - p.x) (the batch-affine pair and quad sums,
 * msm_kernels.cuh: p != +-q, neither at infinity). */
/* The sum's coordinates from its slope lam = (y2 - y1) / (x2 - x1). */
template <class F>
DI affine<F> affine_from_lam(const F &lam, const F &x1, const F &x2, const F &y1)
{
    affine<F> s;
    s.x = sqr(lam) - x1 - x2;
    s.y = lam * (x1 - s.x) - y1;
    return s;
}
template <class F> DI affine<F> affine_add_inv(const affine<F> &p, const affine<F> &q, const F &id)
{
    return affine_from_lam((q.y - p.y) * id, p.x, q.x, p.y);
}

/* A thread's XYZZ sum parked in shared memory (the accumulation kernels, msm_kernels.cuh):
 * coordinate c (0..3: x, y, zz, zzz) is loaded where a formula uses it and stored where it
 * makes it, so it holds no registers in between. Word-major over the block's NT threads
 * (s[word][thread], 4 sizeof(F) / 4 = sizeof(F) words per thread; field.cuh's sh_words_ld /
 * sh_words_st): a warp's 32 lanes read 32 consecutive words, one per bank. */
template <class F, int NT> struct xyzz_park {
    static constexpr int W = sizeof(F) / 4;
    uint32_t (*s)[NT];
    int t;
    DI F get(int c) const
    {
        F r;
        sh_words_ld<NT>(r, s, c * W, t);
        return r;
    }
    DI void set(int c, const F &v) { sh_words_st<NT>(v, s, c * W, t); }
    DI void set(const xyzz<F> &p)
    {
        set(0, p.x);
        set(1, p.y);
        set(2, p.zz);
        set(3, p.zzz);
    }
    DI xyzz<F> load() const
    {
        xyzz<F> p;
        p.x = get(0);
        p.y = get(1);
        p.zz = get(2);
        p.zzz = get(3);
        return p;
    }
    DI F x() const { return get(0); }
    DI F y() const { return get(1); }
    DI F zz() const { return get(2); }
    DI F zzz() const { return get(3); }
    DI void set_x(const F &v) { set(0, v); }
    DI void set_y(const F &v) { set(1, v); }
    DI void set_zz(const F &v) { set(2, v); }
    DI void set_zzz(const F &v) { set(3, v); }
};
/* The same accessors over an xyzz in registers. */
template <class F> struct xyzz_regs {
    xyzz<F> &p;
    DI const F &x() const { return p.x; }
    DI const F &y() const { return p.y; }
    DI const F &zz() const { return p.zz; }
    DI const F &zzz() const { return p.zzz; }
    DI void set_x(const F &v) { p.x = v; }
    DI void set_y(const F &v) { p.y = v; }
    DI void set_zz(const F &v) { p.zz = v; }
    DI void set_zzz(const F &v) { p.zzz = v; }
    DI void set(const xyzz<F> &q) { p = q; }
};

/* The mixed addition's last products: y3 = R (q1 - x3) - y ppp, zz3 = zz pp, zzz3 = zzz ppp,
 * as two interleaved pairs (y3's products, then zz3's and zzz3's; field.cuh's mul2, one
 * product after another in Fp2). */
template <class F, class S>
DI void madd_tail_pairs(S &p, const F &R, const F &b, const F &ppp, const F &pp, const F &x3)
{
    F t, v;
    mul2(t, R, b, v, p.y(), ppp);
    p.set_y(t - v);
    p.set_x(x3);
    F zz3, zzz3;
    mul2(zz3, p.zz(), pp, zzz3, p.zzz(), ppp);
    p.set_zz(zz3);
    p.set_zzz(zzz3);
}
/* In Fp where field.cuh's dual_use holds (BN254's): y3 with one reduction beside zz3's
 * product (mul_sub_pair_call), then zzz3's. */
template <class C, class S>
DI void madd_tail(S &p, const fe<C> &R, const fe<C> &b, const fe<C> &ppp, const fe<C> &pp,
                  const fe<C> &x3)
{
    if (!dual_use<C>()) {
        madd_tail_pairs(p, R, b, ppp, pp, x3);
    } else {
        const fe_pair<C> r = mul_sub_pair_call(R, b, p.y(), ppp, p.zz(), pp);
        p.set_y(r.r0);
        p.set_x(x3);
        p.set_zz(r.r1);
        p.set_zzz(p.zzz() * ppp);
    }
}
template <class C, class S>
DI void madd_tail(S &p, const fe2<C> &R, const fe2<C> &b, const fe2<C> &ppp, const fe2<C> &pp,
                  const fe2<C> &x3)
{
    madd_tail_pairs(p, R, b, ppp, pp, x3);
}

/* p += q, q affine (possibly infinity), p through the accessors x() .. zzz(), set_x() ..
 * set_zzz() and set() of xyzz_park or xyzz_regs. */
template <class F, class S> DI void xyzz_madd(S &p, const affine<F> &q)
{
    if (q.is_inf())
        return;
    if (p.zz().is_zero()) {
        p.set_x(q.x);
        p.set_y(q.y);
        p.set_zz(F::one());
        p.set_zzz(F::one());
        return;
    }
    F u2, s2;
    mul2(u2, q.x, p.zz(), s2, q.y, p.zzz());
    F P = u2 - p.x();
    F R = s2 - p.y();
    if (P.is_zero()) {
        xyzz<F> d = xyzz<F>::inf();
        if (R.is_zero())
            xyzz_mdbl(d, q);
        p.set(d);
        return;
    }
    F pp, rr;
    sqr2(pp, P, rr, R);
    F ppp, q1;
    mul2(ppp, P, pp, q1, p.x(), pp);
    F x3 = rr - ppp - dbl(q1);
    madd_tail(p, R, q1 - x3, ppp, pp, x3);
}
template <class F> DI void xyzz_add_affine(xyzz<F> &p, const affine<F> &q)
{
    xyzz_regs<F> r{p};
    xyzz_madd(r, q);
}
template <class F, int NT> DI void xyzz_add_affine(xyzz_park<F, NT> &p, const affine<F> &q)
{
    xyzz_madd(p, q);
}

/* p += q, both xyzz. */
template <class F> DI void xyzz_add(xyzz<F> &p, const xyzz<F> &q)
{
    if (q.is_inf())
        return;
    if (p.is_inf()) {
        p = q;
        return;
    }
    F u1, u2, s1, s2;
    mul2(u1, p.x, q.zz, u2, q.x, p.zz);
    mul2(s1, p.y, q.zzz, s2, q.y, p.zzz);
    F P = u2 - u1;
    F R = s2 - s1;
    if (P.is_zero()) {
        if (R.is_zero())
            xyzz_dbl(p);
        else
            p = xyzz<F>::inf();
        return;
    }
    F pp, rr;
    sqr2(pp, P, rr, R);
    F ppp, q1;
    mul2(ppp, P, pp, q1, u1, pp);
    F x3 = rr - ppp - dbl(q1);
    F t, v;
    mul2(t, R, q1 - x3, v, s1, ppp);
    p.y = t - v;
    p.x = x3;
    F zz, zzz;
    mul2(zz, p.zz, q.zz, zzz, p.zzz, q.zzz);
    mul2(p.zz, zz, pp, p.zzz, zzz, ppp);
}

/* Jacobian (X, Y, Z) with Z = ZZZ: X = X*ZZ^2, Y = Y*ZZZ^2 (uses ZZ^3 = ZZZ^2). */
template <class F> DI void xyzz_to_jacobian(F out[3], const xyzz<F> &p)
{
    if (p.is_inf()) {
        out[0] = F::one();
        out[1] = F::one();
        out[2] = F::zero();
        return;
    }
    out[0] = p.x * sqr(p.zz);
    out[1] = p.y * sqr(p.zzz);
    out[2] = p.zzz;
}

} // namespace cuzk_gpu

#endif
