/*
 * Montgomery multiplication on the FP64 pipe (experiment; no kernel of the backend uses it yet).
 *
 * Every Fr / Fp product of the backend runs on 32-bit integer multiply-adds (field.cuh, CIOS:
 * 264 IMAD for a 256-bit product), and the IMAD pipe is where the NTT and the MSMs spend their
 * time (PERF-NOTES: the NTT at 2^24 sits ~25% above the IMAD floor). Hopper's FP64 pipe has the
 * same rate (64 DFMA per clock per SM on an H100 / H200) and sits idle. Here a field element
 * below 2^260 is five limbs of 52 bits, each held as a double (an integer below 2^52, exact),
 * and a limb product's 104 bits come out of two fused multiply-adds rounding toward zero
 * (Emmart, Zheng and Weems, "Faster modular exponentiation using double precision floating
 * point arithmetic on the GPU", ARITH 2018):
 *
 *   h = fma_rz(a, b, 2^104)          = 2^104 + H 2^52   (H = floor(ab / 2^52); the ulp there is
 *                                                          2^52, so rounding toward zero drops L)
 *   s = (2^104 + 2^52) - h           = (1 - H) 2^52     (exact)
 *   l = fma_rz(a, b, s)              = 2^52 + L         (L = ab mod 2^52; exact, ulp 1)
 *
 * so the bit patterns of h and l are H and L plus a fixed exponent pattern (E104, E52). The
 * patterns are summed as 64-bit integers into ten column sums (the integer ALU pipe, which the
 * IMAD products leave idle too), the exponents' share is taken off once per column (a constant
 * the column starts from), and the Montgomery reduction runs over the columns a limb at a time
 * with R = 2^260: m = c_i (-p^-1) mod 2^52 (three IMAD), m p added the same way, the column's
 * carry (c_i + m p_0) / 2^52 = ceil(c_i / 2^52) taken without m p_0's low half.
 *
 * Counted per product (25 limb products of a b, 5 reduction steps): ~150 FP64 operations,
 * ~145 integer adds and logic ops and 15 IMAD, against field.cuh's 264 IMAD; if the two pipes
 * overlap, about 1.7x the product rate. That is the question this header is here to answer on
 * the device (tests/gpu/fp52_rate.cu); tests/gpu/fp52_emu.cpp checks the arithmetic against GMP
 * on the host (CI).
 *
 * Bounds: for a modulus p < 2^255 and inputs below 2^256, the result (ab + mp) / 2^260 <
 * 2^252 + p < 2p (p > 2^252), so products chain in [0, 2p) like field.cuh's lazy fields. Column
 * sums stay below 2^58 (at most 20 patterns' mantissas and a carry each).
 *
 * With CUZK_GPU_HOST_EMU the same code compiles as plain C++: fma_rz is the C library's fma
 * under FE_TOWARDZERO (build with -frounding-math).
 */
#ifndef CUZK_GPU_FP52_CUH
#define CUZK_GPU_FP52_CUH

#include <stdint.h>

#ifdef CUZK_GPU_HOST_EMU
#include <cfenv>
#include <cmath>
#include <cstring>
#endif

namespace cuzk_fp52 {

#ifdef CUZK_GPU_HOST_EMU
#define FP52_DI static inline
#define FP52_CX constexpr
FP52_DI double fma_rz(double a, double b, double c)
{
    const int mode = std::fegetround();
    std::fesetround(FE_TOWARDZERO);
    volatile double r = std::fma(a, b, c);
    std::fesetround(mode);
    return r;
}
FP52_DI uint64_t d2u(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}
FP52_DI double u2d(uint64_t u)
{
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}
#else
#define FP52_DI __device__ __forceinline__
#define FP52_CX constexpr __host__ __device__
FP52_DI double fma_rz(double a, double b, double c) { return __fma_rz(a, b, c); }
FP52_DI uint64_t d2u(double d) { return (uint64_t)__double_as_longlong(d); }
FP52_DI double u2d(uint64_t u) { return __longlong_as_double((long long)u); }
#endif

constexpr int L = 5;                         /* limbs of 52 bits: R = 2^260 */
constexpr uint64_t M52 = (1ull << 52) - 1;
constexpr double TWO52 = 4503599627370496.0; /* 2^52 */
constexpr double TWO104 = TWO52 * TWO52;
constexpr double C2 = TWO104 + TWO52;        /* exact: 53 significant bits */
constexpr uint64_t E52 = 0x4330000000000000ull;  /* the bit pattern of 2^52 */
constexpr uint64_t E104 = 0x4670000000000000ull; /* of 2^104 */

/* A modulus p < 2^255 (four 64-bit words, low first) as the multiplication needs it: a type,
 * so that device code reads its limbs as constants. */
template <uint64_t W0, uint64_t W1, uint64_t W2, uint64_t W3> struct modulus {
    static FP52_CX uint64_t word(int q) { return q == 0 ? W0 : q == 1 ? W1 : q == 2 ? W2 : W3; }
    static FP52_CX uint64_t limb(int k) /* bits 52k .. 52k + 51 */
    {
        const int b = 52 * k, q = b / 64, s = b % 64;
        uint64_t v = word(q) >> s;
        if (s > 12 && q < 3)
            v |= word(q + 1) << (64 - s);
        return v & M52;
    }
    static FP52_CX uint64_t inv64() /* p^-1 mod 2^64, Newton (p odd) */
    {
        uint64_t x = 1;
        for (int i = 0; i < 6; i++)
            x *= 2 - W0 * x;
        return x;
    }
    static constexpr uint64_t pinv = (0 - inv64()) & M52; /* -p^-1 mod 2^52 */
    static_assert(W3 < (1ull << 63) && W3 >= (1ull << 60), "2^252 < p < 2^255");
    static_assert(W0 & 1, "p odd");
};

/* The exponents' share of column k, taken off before the sums: column k gets the low halves of
 * the limb products a_i b_j with i + j = k and the reduction's m_i p_j with i + j = k, j > 0,
 * and the high halves of those with i + j = k - 1 (m_i p_0's too). */
FP52_CX uint64_t bias(int k)
{
    uint64_t b = 0;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            if (i + j == k)
                b += E52 + (j > 0 ? E52 : 0);
            if (i + j + 1 == k)
                b += 2 * E104;
        }
    return 0 - b;
}

/* lo += the low half of a b, hi += its high half (bit patterns, see above). */
FP52_DI void mac2(uint64_t &lo, uint64_t &hi, double a, double b)
{
    const double h = fma_rz(a, b, TWO104);
    const double l = fma_rz(a, b, C2 - h);
    lo += d2u(l);
    hi += d2u(h);
}
FP52_DI void mac(uint64_t *c, int k, double a, double b) { mac2(c[k], c[k + 1], a, b); }

/* A limb below 2^52 (an integer held in a uint64) as a double, exactly. */
FP52_DI double to_d(uint64_t v) { return u2d(v | E52) - TWO52; }

/* r = a b 2^-260 mod p, in [0, 2p) for a, b < 2^256: five normalized 52-bit limbs. */
template <class P> FP52_DI void mont_mul(const double *a, const double *b, uint64_t *r)
{
    uint64_t c[2 * L];
#pragma unroll
    for (int k = 0; k < 2 * L; k++)
        c[k] = bias(k);
#pragma unroll
    for (int i = 0; i < L; i++)
#pragma unroll
        for (int j = 0; j < L; j++)
            mac(c, i + j, a[i], b[j]);
#pragma unroll
    for (int i = 0; i < L; i++) {
        const double m = to_d((c[i] * P::pinv) & M52);
        /* c_i + m p_0 is a multiple of 2^52: its quotient is ceil(c_i / 2^52) plus m p_0's high
         * half, and its low half need not be made. */
        c[i + 1] += ((c[i] + M52) >> 52) + d2u(fma_rz(m, (double)P::limb(0), TWO104));
#pragma unroll
        for (int j = 1; j < L; j++)
            mac(c, i + j, m, (double)P::limb(j));
    }
#pragma unroll
    for (int k = L; k < 2 * L - 1; k++) {
        r[k - L] = c[k] & M52;
        c[k + 1] += c[k] >> 52;
    }
    r[L - 1] = c[2 * L - 1];
}

/* The same product in product-scanning order (Comba; the reduction's m_i made as soon as
 * column i is complete): two column sums live instead of ten, and a, b, m dying column by
 * column, for kernels under a register cap; the same result. */
template <class P> FP52_DI void mont_mul_ps(const double *a, const double *b, uint64_t *r)
{
    double m[L];
    uint64_t cur = bias(0), nxt = bias(1);
#pragma unroll
    for (int k = 0; k < 2 * L - 1; k++) {
#pragma unroll
        for (int i = (k < L ? 0 : k - L + 1); i <= (k < L ? k : L - 1); i++)
            mac2(cur, nxt, a[i], b[k - i]);
#pragma unroll
        for (int i = (k < L ? 0 : k - L + 1); i < (k < L ? k : L); i++)
            mac2(cur, nxt, m[i], (double)P::limb(k - i));
        if (k < L) {
            m[k] = to_d((cur * P::pinv) & M52);
            nxt += ((cur + M52) >> 52) + d2u(fma_rz(m[k], (double)P::limb(0), TWO104));
        } else {
            r[k - L] = cur & M52;
            nxt += cur >> 52;
        }
        cur = nxt;
        nxt = bias(k + 2);
    }
    r[L - 1] = cur;
}

template <class P> FP52_DI void mont_mul(const double *a, const double *b, double *r)
{
    uint64_t t[L];
    mont_mul<P>(a, b, t);
#pragma unroll
    for (int k = 0; k < L; k++)
        r[k] = to_d(t[k]);
}

/* Eight 32-bit words (field.cuh's layout, low first; a value below 2^256) as five limbs. */
FP52_DI void from_words(const uint32_t *v, uint64_t *r)
{
#pragma unroll
    for (int k = 0; k < L; k++) {
        const int b = 52 * k, q = b / 32, s = b % 32;
        uint64_t x = (uint64_t)v[q] >> s;
        if (q + 1 < 8)
            x |= (uint64_t)v[q + 1] << (32 - s);
        if (q + 2 < 8 && 64 - s < 52)
            x |= (uint64_t)v[q + 2] << (64 - s);
        r[k] = x & M52;
    }
}

/* Five normalized limbs (a value below 2^256) as eight 32-bit words. */
FP52_DI void to_words(const uint64_t *t, uint32_t *v)
{
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int b = 32 * i, k = b / 52, s = b % 52;
        uint64_t x = t[k] >> s;
        if (k + 1 < L && 52 - s < 32)
            x |= t[k + 1] << (52 - s);
        v[i] = (uint32_t)x;
    }
}

} // namespace cuzk_fp52

#endif
