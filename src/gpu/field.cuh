/*
 * Device prime-field arithmetic on 32-bit limbs, Montgomery form (R = 2^(32*N)), byte-identical
 * to the host's src/ff (a host 64-bit limb is two device limbs, low first).
 *
 * Multiplication is CIOS (Koc, Acar, Kaliski 1996) with every row done as PTX carry chains:
 * per row, the low halves of a*b_i go in one mad.lo.cc/madc.lo.cc chain, the high halves in a
 * second chain shifted one word, then the same for m*p. That is 4*N*N multiply-adds, the
 * minimum for schoolbook CIOS, plus a few carry-absorbing adds per row. The accumulator keeps
 * two spare words, so no carry is ever lost; t < 2p after every row (all moduli here are far
 * below R/4), and one conditional subtraction ends fully reduced.
 *
 * The carry flag lives between separate asm statements; they are volatile and nothing else
 * sits between them in the unrolled loops (the usual practice for nvcc PTX chains).
 *
 * A field is described by a config struct C: C::N (limbs), C::n0 (-p^-1 mod 2^32), and
 * C::p(i) / C::one(i) returning limbs from __constant__ memory (IMAD reads constant banks
 * directly, so the modulus costs no registers).
 */
#ifndef CUZK_GPU_FIELD_CUH
#define CUZK_GPU_FIELD_CUH

#include <stdint.h>

#define DI __device__ __forceinline__

namespace cuzk_gpu {

DI uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
DI uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
DI uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
DI uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
DI uint32_t add_cc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DI uint32_t addc_cc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DI uint32_t addc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DI uint32_t sub_cc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DI uint32_t subc_cc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DI uint32_t subc(uint32_t a, uint32_t b)
{
    uint32_t r;
    asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

template <class C> struct fe {
    static constexpr int N = C::N;
    uint32_t v[C::N];

    static DI fe zero()
    {
        fe r;
#pragma unroll
        for (int i = 0; i < N; i++)
            r.v[i] = 0;
        return r;
    }
    static DI fe one()
    {
        fe r;
#pragma unroll
        for (int i = 0; i < N; i++)
            r.v[i] = C::one(i);
        return r;
    }
    DI bool is_zero() const
    {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++)
            acc |= v[i];
        return acc == 0;
    }
};

template <class C> DI bool operator==(const fe<C> &a, const fe<C> &b)
{
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < C::N; i++)
        acc |= a.v[i] ^ b.v[i];
    return acc == 0;
}

/* r = t - p if t >= p, for t < 2p held in N limbs plus a top word `hi` (0 or 1). */
template <class C> DI fe<C> reduce_once(const uint32_t *t, uint32_t hi)
{
    constexpr int N = C::N;
    uint32_t s[N];
    s[0] = sub_cc(t[0], C::p(0));
#pragma unroll
    for (int i = 1; i < N; i++)
        s[i] = subc_cc(t[i], C::p(i));
    uint32_t bw = subc(hi, 0); /* 0xffffffff when t < p */
    fe<C> r;
#pragma unroll
    for (int i = 0; i < N; i++)
        r.v[i] = (t[i] & bw) | (s[i] & ~bw);
    return r;
}

template <class C> DI fe<C> operator+(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    uint32_t t[N];
    t[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++)
        t[i] = addc_cc(a.v[i], b.v[i]);
    uint32_t hi = addc(0, 0);
    return reduce_once<C>(t, hi);
}

template <class C> DI fe<C> operator-(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    uint32_t t[N];
    t[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++)
        t[i] = subc_cc(a.v[i], b.v[i]);
    uint32_t bw = subc(0, 0); /* all ones on borrow: add p back */
    fe<C> r;
    r.v[0] = add_cc(t[0], C::p(0) & bw);
#pragma unroll
    for (int i = 1; i < N - 1; i++)
        r.v[i] = addc_cc(t[i], C::p(i) & bw);
    r.v[N - 1] = addc(t[N - 1], C::p(N - 1) & bw);
    return r;
}

template <class C> DI fe<C> operator-(const fe<C> &a) { return fe<C>::zero() - a; }

template <class C> DI fe<C> dbl(const fe<C> &a) { return a + a; }

template <class C> DI fe<C> operator*(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    uint32_t t[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; i++)
        t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t bi = b.v[i];
        /* t += a * b_i: low halves at word j, high halves at word j + 1. */
        t[0] = mad_lo_cc(a.v[0], bi, t[0]);
#pragma unroll
        for (int j = 1; j < N; j++)
            t[j] = madc_lo_cc(a.v[j], bi, t[j]);
        t[N] = addc_cc(t[N], 0);
        t[N + 1] = addc(t[N + 1], 0);
        t[1] = mad_hi_cc(a.v[0], bi, t[1]);
#pragma unroll
        for (int j = 1; j < N; j++)
            t[j + 1] = madc_hi_cc(a.v[j], bi, t[j + 1]);
        t[N + 1] = addc(t[N + 1], 0);
        /* t += m * p with m chosen so the low word becomes zero; then shift one word. */
        const uint32_t m = t[0] * C::n0;
        t[0] = mad_lo_cc(m, C::p(0), t[0]);
#pragma unroll
        for (int j = 1; j < N; j++)
            t[j] = madc_lo_cc(m, C::p(j), t[j]);
        t[N] = addc_cc(t[N], 0);
        t[N + 1] = addc(t[N + 1], 0);
        t[1] = mad_hi_cc(m, C::p(0), t[1]);
#pragma unroll
        for (int j = 1; j < N; j++)
            t[j + 1] = madc_hi_cc(m, C::p(j), t[j + 1]);
        t[N + 1] = addc(t[N + 1], 0);
#pragma unroll
        for (int j = 0; j < N + 1; j++)
            t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    return reduce_once<C>(t, t[N]);
}

template <class C> DI fe<C> sqr(const fe<C> &a) { return a * a; }

/* From Montgomery form to the canonical integer: one multiplication by 1. */
template <class C> DI fe<C> from_mont(const fe<C> &a)
{
    fe<C> one_int = fe<C>::zero();
    one_int.v[0] = 1;
    return a * one_int;
}

/* ---- Fp2 = Fp[u]/(u^2 + 1) (both BN254 and BLS12-381 use this tower). */
template <class C> struct fe2 {
    fe<C> c0, c1;
    static DI fe2 zero()
    {
        fe2 r;
        r.c0 = fe<C>::zero();
        r.c1 = fe<C>::zero();
        return r;
    }
    static DI fe2 one()
    {
        fe2 r;
        r.c0 = fe<C>::one();
        r.c1 = fe<C>::zero();
        return r;
    }
    DI bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
};

template <class C> DI bool operator==(const fe2<C> &a, const fe2<C> &b)
{
    return a.c0 == b.c0 && a.c1 == b.c1;
}
template <class C> DI fe2<C> operator+(const fe2<C> &a, const fe2<C> &b)
{
    fe2<C> r;
    r.c0 = a.c0 + b.c0;
    r.c1 = a.c1 + b.c1;
    return r;
}
template <class C> DI fe2<C> operator-(const fe2<C> &a, const fe2<C> &b)
{
    fe2<C> r;
    r.c0 = a.c0 - b.c0;
    r.c1 = a.c1 - b.c1;
    return r;
}
template <class C> DI fe2<C> operator-(const fe2<C> &a)
{
    fe2<C> r;
    r.c0 = -a.c0;
    r.c1 = -a.c1;
    return r;
}
template <class C> DI fe2<C> dbl(const fe2<C> &a) { return a + a; }
/* The base multiplication as a called function: G2 code inlining every Fp multiplication
 * grows so large that ptxas takes many minutes per kernel; a call per Fp mul costs little
 * next to the multiplication itself. */
template <class C> __device__ __noinline__ fe<C> mul_call(const fe<C> a, const fe<C> b)
{
    return a * b;
}

/* Karatsuba: 3 base multiplications. */
template <class C> DI fe2<C> operator*(const fe2<C> &a, const fe2<C> &b)
{
    fe<C> t0 = mul_call(a.c0, b.c0);
    fe<C> t1 = mul_call(a.c1, b.c1);
    fe<C> t2 = mul_call(a.c0 + a.c1, b.c0 + b.c1);
    fe2<C> r;
    r.c0 = t0 - t1;
    r.c1 = t2 - t0 - t1;
    return r;
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 multiplications. */
template <class C> DI fe2<C> sqr(const fe2<C> &a)
{
    fe<C> t = mul_call(a.c0, a.c1);
    fe2<C> r;
    r.c0 = mul_call(a.c0 + a.c1, a.c0 - a.c1);
    r.c1 = t + t;
    return r;
}

} // namespace cuzk_gpu

#endif
