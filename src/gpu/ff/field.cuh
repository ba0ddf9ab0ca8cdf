/*
 * Device prime-field arithmetic on 32-bit limbs, Montgomery form (R = 2^(32*N)), byte-identical
 * to the host's src/ff (a host 64-bit limb is two device limbs, low first).
 *
 * Multiplication is CIOS (Koc, Acar, Kaliski 1996) with every row done as PTX carry chains,
 * split into two independent chains per row (even/odd words, see mont_row): 4*N*N
 * multiply-adds, the minimum for schoolbook CIOS, plus 4 adds per row. t < 2p after every row
 * (all moduli here are below R/4), and one conditional subtraction ends fully reduced.
 *
 * The carry flag lives between separate asm statements; they are volatile and nothing else
 * sits between them in the unrolled loops (the usual practice for nvcc PTX chains).
 *
 * A field is described by a config struct C: C::N (limbs), C::n0 (-p^-1 mod 2^32), and
 * C::p(i) / C::one(i) returning limbs from __constant__ memory (IMAD reads constant banks
 * directly, so the modulus costs no registers).
 *
 * A config with `lazy = true` (and C::p2(i), the limbs of 2p; only for p < R/4) keeps its
 * elements in [0, 2p) instead of [0, p): a Montgomery product of operands below 2p is below 2p
 * before its final subtraction (see add_nr), so the multiplication drops that subtraction, and
 * addition and subtraction reduce modulo 2p instead of p at the same cost. Zero tests and
 * equality compare residues (x == 0 or x == p); canon() gives the element in [0, p), which is
 * what leaves the device (kernels that store points or results for the host call it).
 *
 * With CUZK_GPU_HOST_EMU defined this header compiles as plain C++ with the carry primitives
 * emulated, so the carry logic can be checked on a machine without a GPU
 * (tests/gpu/field_emu_test.sh, against GMP).
 */
#ifndef CUZK_GPU_FIELD_CUH
#define CUZK_GPU_FIELD_CUH

#include <stdint.h>

#ifndef CUZK_GPU_HOST_EMU
#define DI __device__ __forceinline__
#endif

namespace cuzk_gpu {

#ifndef CUZK_GPU_HOST_EMU
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
DI uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
DI uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
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

#else
/* Host emulation of the PTX carry-flag primitives (one global flag, as in PTX), so the
 * multiplication's carry logic can be checked against GMP on a machine without a GPU. */
#define DI inline
#define __device__
#define __noinline__
static thread_local uint32_t emu_cc; /* the emulated carry flag, per host thread (tests only) */
static inline uint32_t __umulhi(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a * b) >> 32);
}
#define EMU_OP(name, expr, setcc)                                                           \
    DI uint32_t name(uint32_t a, uint32_t b, uint32_t c)                                    \
    {                                                                                       \
        uint64_t r = (expr);                                                                \
        if (setcc)                                                                          \
            emu_cc = (uint32_t)(r >> 32);                                                   \
        return (uint32_t)r;                                                                 \
    }
EMU_OP(mad_lo_cc, (uint64_t)(uint32_t)(a * b) + c, 1)
EMU_OP(madc_lo_cc, (uint64_t)(uint32_t)(a * b) + c + emu_cc, 1)
EMU_OP(madc_hi_cc, (uint64_t)__umulhi(a, b) + c + emu_cc, 1)
EMU_OP(madc_hi, (uint64_t)__umulhi(a, b) + c + emu_cc, 0)
DI uint32_t add_cc(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a + b;
    emu_cc = (uint32_t)(r >> 32);
    return (uint32_t)r;
}
DI uint32_t addc_cc(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a + b + emu_cc;
    emu_cc = (uint32_t)(r >> 32);
    return (uint32_t)r;
}
DI uint32_t addc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a + b + emu_cc); }
DI uint32_t sub_cc(uint32_t a, uint32_t b)
{
    emu_cc = a < b;
    return a - b;
}
DI uint32_t subc_cc(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a - b - emu_cc;
    emu_cc = (uint32_t)(r >> 63);
    return (uint32_t)r;
}
DI uint32_t subc(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a - b - emu_cc); }
#endif

template <class...> using void_t_ = void;
template <class C, class = void> struct lazy_of {
    static constexpr bool v = false;
};
template <class C> struct lazy_of<C, void_t_<decltype(C::lazy)>> {
    static constexpr bool v = C::lazy;
};

/* Limb i of the modulus of C's representation: p, or 2p for a lazy field. */
/* C::p5_fits: 5p < 2^(32N), the bound of the squaring rows (sqr_call) and of the sums of two
 * products with one reduction (mul_sub_call); a constant of the config, which gpu_<curve>.cuh
 * static_asserts against the limbs (and tests/gpu/field_emu.cpp checks for its own configs).
 * p5_of: the constant, false where absent; p5_ok: the constant where it is true, else the test
 * of the top limb at run time. That test keeps both code paths in every kernel that squares:
 * BN254 G1's k_accum1 takes 136 registers with the test, 124 with the constant (sm_90). Where
 * the bound fails (BLS12-381's r, which declares nothing) the run-time test stays: the constant
 * false makes ptxas spill more in BLS12-381 G1's pass B, whose code does not use r. */
template <class C, class = void> struct p5_of {
    static constexpr bool v = false;
};
template <class C> struct p5_of<C, void_t_<decltype(C::p5_fits)>> {
    static constexpr bool v = C::p5_fits;
};
template <class C> DI bool p5_ok()
{
    return p5_of<C>::v || 5ull * ((uint64_t)C::p(C::N - 1) + 1) <= (1ull << 32);
}
/* A config with `low64_1 = true` has p = 2^64 - 2^32 + 1 mod 2^64 (p_0 = 1, p_1 = 2^32 - 1,
 * n0 = 2^32 - 1: BLS12-381's r): mont_row's reduction then needs no multiplication for m and
 * for m p_0, m p_1 (see there). */
template <class C, class = void> struct low64_of {
    static constexpr bool v = false;
};
template <class C> struct low64_of<C, void_t_<decltype(C::low64_1)>> {
    static constexpr bool v = C::low64_1;
};

template <class C, bool TWO = lazy_of<C>::v> DI uint32_t rep_mod(int i)
{
    if constexpr (TWO)
        return C::p2(i);
    else
        return C::p(i);
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
    /* The residue 0 (held as 0, or as p in a lazy field). */
    DI bool is_zero() const
    {
        uint32_t acc = 0, accp = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            acc |= v[i];
            if constexpr (lazy_of<C>::v)
                accp |= v[i] ^ C::p(i);
        }
        return acc == 0 || (lazy_of<C>::v && accp == 0);
    }
};

/* r = t - m if t >= m, for t < 2m held in N limbs plus a top word `hi` (0 or 1); m = p, or the
 * representation's modulus (2p for a lazy field) when TWO. */
template <class C, bool TWO = lazy_of<C>::v> DI fe<C> reduce_once(const uint32_t *t, uint32_t hi)
{
    constexpr int N = C::N;
    uint32_t s[N];
    s[0] = sub_cc(t[0], rep_mod<C, TWO>(0));
#pragma unroll
    for (int i = 1; i < N; i++)
        s[i] = subc_cc(t[i], rep_mod<C, TWO>(i));
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

/* a - b with the representation's modulus m (p, or 2p in a lazy field) added back: on a borrow
 * (the field's difference), or ALWAYS (a - b + m as an integer, which the caller knows lies in
 * [0, 2^(32N)): ntt_kernels.cuh's hv_sub). */
template <class C, bool ALWAYS = false> DI fe<C> sub_plus_mod(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    uint32_t t[N];
    t[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N; i++)
        t[i] = subc_cc(a.v[i], b.v[i]);
    /* all ones on borrow (or always): add p (2p in a lazy field) back */
    uint32_t bw = ALWAYS ? 0xffffffffu : subc(0, 0);
    fe<C> r;
    r.v[0] = add_cc(t[0], rep_mod<C>(0) & bw);
#pragma unroll
    for (int i = 1; i < N - 1; i++)
        r.v[i] = addc_cc(t[i], rep_mod<C>(i) & bw);
    r.v[N - 1] = addc(t[N - 1], rep_mod<C>(N - 1) & bw);
    return r;
}

template <class C> DI fe<C> operator-(const fe<C> &a, const fe<C> &b)
{
    return sub_plus_mod<C>(a, b);
}

template <class C> DI fe<C> operator-(const fe<C> &a) { return fe<C>::zero() - a; }

/* The element in [0, p) (a lazy field's value leaving the device). */
template <class C> DI fe<C> canon(const fe<C> &a)
{
    if constexpr (lazy_of<C>::v)
        return reduce_once<C, false>(a.v, 0);
    else
        return a;
}

/* Whether the N limbs of a hold an integer below p (a canonical element or scalar). */
template <class C> DI bool lt_mod(const fe<C> &a)
{
    (void)sub_cc(a.v[0], C::p(0));
#pragma unroll
    for (int i = 1; i < C::N; i++)
        (void)subc_cc(a.v[i], C::p(i));
    return subc(0, 0) != 0; /* the borrow out: a < p */
}

/* Equal residues. */
template <class C> DI bool operator==(const fe<C> &a, const fe<C> &b)
{
    if constexpr (lazy_of<C>::v) {
        return (a - b).is_zero();
    } else {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < C::N; i++)
            acc |= a.v[i] ^ b.v[i];
        return acc == 0;
    }
}

template <class C> DI fe<C> dbl(const fe<C> &a) { return a + a; }

/*
 * Montgomery multiplication, CIOS with the accumulator split into "even" and "odd" halves
 * (Emmart, Zheng, Weems, "Optimizing Modular Multiplication for NVIDIA's Maxwell GPUs",
 * ARITH 2016). For one word b_i, the products a_j b_i with j even occupy words j, j+1 and do
 * not overlap each other, so they form ONE carry chain over an N-word array X at offset 0;
 * those with j odd form a second chain over an N-word array Y at offset one word. The running
 * value is T = X + Y * 2^32. The two chains are independent, so each thread has two carry
 * chains in flight instead of one (the multiply-add latency is the bottleneck, not the issue
 * rate), and no separate carry-absorbing words are needed.
 *
 * One row (not the first) with X = the previous Y-array's partner (see mont_row):
 *   X[0] += Y[1]                  (the division by 2^32 of the previous row, low part; its
 *                                  carry, of weight 2^32, enters the odd chain below)
 *   Y <- (Y >> 64) + odd products (in place, ascending: the "shift" is free)
 *   X += even products            (carry out, of weight 2^(32N), goes to Y[N-1])
 *   m = X[0] * n0; Y += odd words of m*p; X += even words of m*p (carry to Y[N-1]); X[0] = 0.
 * Then T / 2^32 = Y + (X >> 32): the next row runs with the roles of the arrays swapped.
 * Bounds: a, b < p < 2^(32N-2), so T < 2p + 2^33 p < 2^(32N+32) before each division and
 * T < 2p after (CIOS); hence Y (which is at most T / 2^32) never carries out of its top word
 * and the odd chains' final carries are zero. One conditional subtraction ends reduced.
 */
template <class C> DI void mont_red(uint32_t *X, uint32_t *Y);
template <class C, bool RED = true>
DI void mont_row(uint32_t *X, uint32_t *Y, const fe<C> &a, uint32_t bi, bool first)
{
    constexpr int N = C::N;
    if (first) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            X[j] = a.v[j] * bi;
            X[j + 1] = __umulhi(a.v[j], bi);
            Y[j] = a.v[j + 1] * bi;
            Y[j + 1] = __umulhi(a.v[j + 1], bi);
        }
    } else {
        X[0] = add_cc(X[0], Y[1]);
        /* Y[j-1..j] = Y[j+1..j+2] + a_j b_i for odd j, carrying, with the carry of X[0] in. */
#pragma unroll
        for (int j = 1; j < N - 2; j += 2) {
            Y[j - 1] = madc_lo_cc(a.v[j], bi, Y[j + 1]);
            Y[j] = madc_hi_cc(a.v[j], bi, Y[j + 2]);
        }
        Y[N - 2] = madc_lo_cc(a.v[N - 1], bi, 0);
        Y[N - 1] = madc_hi(a.v[N - 1], bi, 0);
        X[0] = mad_lo_cc(a.v[0], bi, X[0]);
        X[1] = madc_hi_cc(a.v[0], bi, X[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            X[j] = madc_lo_cc(a.v[j], bi, X[j]);
            X[j + 1] = madc_hi_cc(a.v[j], bi, X[j + 1]);
        }
        Y[N - 1] = addc(Y[N - 1], 0);
    }
    if (RED)
        mont_red<C>(X, Y);
}

/* A row's reduction: m = X[0] n0, T += m p, so that X[0] becomes 0 (mont_row's second half). */
template <class C> DI void mont_red(uint32_t *X, uint32_t *Y)
{
    constexpr int N = C::N;
    uint32_t m;
    if constexpr (low64_of<C>::v) {
        /* n0 = -1, so m = -X[0] (its borrow: X[0] != 0); m p_1 = m 2^32 - m has low word
         * -m = X[0] and high word m - (m != 0); m p_0 = m: X[0] + m is 0 with a carry exactly
         * when X[0] != 0. The four multiply-adds of m p_0 and m p_1 per row become adds
         * (PTX of k_hmul: 240 -> 208 mad; m = X[0] n0 was already a negation). */
        m = sub_cc(0, X[0]);
        const uint32_t mh = subc(m, 0);
        Y[0] = add_cc(Y[0], X[0]);
        Y[1] = addc_cc(Y[1], mh);
    } else {
        m = X[0] * C::n0;
        Y[0] = mad_lo_cc(m, C::p(1), Y[0]);
        Y[1] = madc_hi_cc(m, C::p(1), Y[1]);
    }
#pragma unroll
    for (int j = 3; j < N; j += 2) {
        Y[j - 1] = madc_lo_cc(m, C::p(j), Y[j - 1]);
        Y[j] = madc_hi_cc(m, C::p(j), Y[j]);
    }
    if constexpr (low64_of<C>::v) {
        X[0] = add_cc(X[0], m);
        X[1] = addc_cc(X[1], 0);
    } else {
        X[0] = mad_lo_cc(m, C::p(0), X[0]);
        X[1] = madc_hi_cc(m, C::p(0), X[1]);
    }
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        X[j] = madc_lo_cc(m, C::p(j), X[j]);
        X[j + 1] = madc_hi_cc(m, C::p(j), X[j + 1]);
    }
    Y[N - 1] = addc(Y[N - 1], 0);
}

/* After the last row (run with X = o, so o[0] = 0): the product is e + (o >> 32), < 2p: a
 * lazy field keeps it so, any other subtracts p once. SUB: the representation's modulus is
 * subtracted once when the value reaches it, in a lazy field too (mul_sub's sums end below
 * 3p). */
template <class C, bool SUB = false> DI fe<C> mont_fin(const uint32_t *e, const uint32_t *o)
{
    constexpr int N = C::N;
    uint32_t t[N];
    t[0] = add_cc(e[0], o[1]);
#pragma unroll
    for (int k = 1; k < N - 1; k++)
        t[k] = addc_cc(e[k], o[k + 1]);
    t[N - 1] = addc(e[N - 1], 0);
    if constexpr (lazy_of<C>::v && !SUB) {
        fe<C> r;
#pragma unroll
        for (int k = 0; k < N; k++)
            r.v[k] = t[k];
        return r;
    } else {
        return reduce_once<C>(t, 0);
    }
}

/* The multiplication inlined: for small kernels (NTT butterflies, scalings). */
template <class C> DI fe<C> mul_inl(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    static_assert(N % 2 == 0, "even limb count");
    uint32_t e[N], o[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row<C>(e, o, a, b.v[i], i == 0);
        mont_row<C>(o, e, a, b.v[i + 1], false);
    }
    return mont_fin<C>(e, o);
}

/*
 * Squaring in the same rows, each cross product made once: row i adds a_i M^(i) where M^(i)
 * has words M_i = a_i, M_(i+1) = 2 a_(i+1) mod 2^32 and M_j = (2a)_j = 2 a_j + a_(j-1) / 2^31
 * mod 2^32 for j > i + 1 (the bit a_i would carry into word i + 1 belongs to row i + 1's
 * a_(i+1) a_i, not here), and nothing below word i: sum_i a_i M^(i) 2^(32 i) = a^2. Row i
 * makes N - i products instead of N; the odd chain still shifts its words below i (adds, not
 * multiply-adds), the even chain starts at its first word >= i. N (N - 1) multiply-adds fewer
 * per square (56 of 264 for BN254's Fp, 132 of 588 for BLS12-381's). 2a needs no word N: a <
 * 2p < 2^(32N-1) (p < 2^(32N-2), as mont_row assumes). A row adds up to 2^32 (2a + p) where a
 * product's adds 2^32 (b + p), so T stays below 2^(32N+32) before each division (the odd
 * chain's last carry 0) only while 2a + p stays below 2^(32N): 5p < 2^(32N) for operands below
 * 2p, which BN254's p and r and BLS12-381's p meet and BLS12-381's r (~0.45 2^256) does not.
 * The last row ends below a^2 / R + p < 2p as a product does. sq_rows_ok says where they are
 * used; elsewhere a square stays a product.
 */
template <class C> DI bool sq_rows_ok()
{
    /* And 8 limbs only: BLS12-381's Fp (12) squared in rows makes its G1 MSM slower (pass B
     * at 168 registers spills more), BN254's G1 faster. */
    return C::N == 8 && p5_ok<C>();
}
template <class C> DI uint32_t sq_word(const fe<C> &a, int i, int j)
{
    return j == i ? a.v[i] : j == i + 1 ? a.v[i + 1] << 1 : (a.v[j] << 1) | (a.v[j - 1] >> 31);
}
template <class C> DI void mont_row_sq(uint32_t *X, uint32_t *Y, const fe<C> &a, int i)
{
    constexpr int N = C::N;
    const uint32_t bi = a.v[i];
    if (i == 0) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            X[j] = sq_word(a, 0, j) * bi;
            X[j + 1] = __umulhi(sq_word(a, 0, j), bi);
            Y[j] = sq_word(a, 0, j + 1) * bi;
            Y[j + 1] = __umulhi(sq_word(a, 0, j + 1), bi);
        }
    } else {
        X[0] = add_cc(X[0], Y[1]);
#pragma unroll
        for (int j = 1; j < N - 2; j += 2) {
            if (j < i) { /* no product: the shift alone */
                Y[j - 1] = addc_cc(Y[j + 1], 0);
                Y[j] = addc_cc(Y[j + 2], 0);
            } else {
                Y[j - 1] = madc_lo_cc(sq_word(a, i, j), bi, Y[j + 1]);
                Y[j] = madc_hi_cc(sq_word(a, i, j), bi, Y[j + 2]);
            }
        }
        Y[N - 2] = madc_lo_cc(sq_word(a, i, N - 1), bi, 0); /* N - 1 >= i */
        Y[N - 1] = madc_hi(sq_word(a, i, N - 1), bi, 0);
        const int j0 = i + (i & 1); /* the even chain's first word */
        if (j0 < N) {
            X[j0] = mad_lo_cc(sq_word(a, i, j0), bi, X[j0]);
            X[j0 + 1] = madc_hi_cc(sq_word(a, i, j0), bi, X[j0 + 1]);
#pragma unroll
            for (int j = j0 + 2; j < N; j += 2) {
                X[j] = madc_lo_cc(sq_word(a, i, j), bi, X[j]);
                X[j + 1] = madc_hi_cc(sq_word(a, i, j), bi, X[j + 1]);
            }
            Y[N - 1] = addc(Y[N - 1], 0);
        }
    }
    mont_red<C>(X, Y);
}
template <class C> DI fe<C> sqr_inl(const fe<C> &a)
{
    constexpr int N = C::N;
    static_assert(N % 2 == 0, "even limb count");
    uint32_t e[N], o[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row_sq<C>(e, o, a, i);
        mont_row_sq<C>(o, e, a, i + 1);
    }
    return mont_fin<C>(e, o);
}

/* The multiplication as a called function, used by all curve arithmetic. The point kernels
 * with every multiplication inlined stall mostly on instruction fetch: an inlined BLS12-381
 * mul is ~600 instructions, an XYZZ addition 14 of them, and a kernel's few resident warps at
 * different places in that code miss the instruction cache. One shared copy of the
 * multiplication stays cached; the call costs a few instructions. (It also keeps ptxas fast on
 * G2.) */
template <class C> __device__ __noinline__ fe<C> mul_call(const fe<C> a, const fe<C> b)
{
    return mul_inl(a, b);
}

template <class C> DI fe<C> operator*(const fe<C> &a, const fe<C> &b) { return mul_call(a, b); }

template <class C> __device__ __noinline__ fe<C> sqr_call(const fe<C> a) { return sqr_inl(a); }

/* (Without squaring rows, the one called multiplication: one copy of the code in the cache.) */
template <class C> DI fe<C> sqr(const fe<C> &a)
{
    return sq_rows_ok<C>() ? sqr_call(a) : mul_call(a, a);
}

/* Two independent products with their rows interleaved: four carry chains in flight instead of
 * two. The curve kernels run few warps per SM (120-255 registers per thread), so a thread's
 * own independent work is what hides the multiply-add latency. */
template <class C> struct fe_pair {
    fe<C> r0, r1;
};
template <class C>
__device__ __noinline__ fe_pair<C> mul_pair_call(const fe<C> a0, const fe<C> b0, const fe<C> a1,
                                                 const fe<C> b1)
{
    constexpr int N = C::N;
    uint32_t e0[N], o0[N], e1[N], o1[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row<C>(e0, o0, a0, b0.v[i], i == 0);
        mont_row<C>(e1, o1, a1, b1.v[i], i == 0);
        mont_row<C>(o0, e0, a0, b0.v[i + 1], false);
        mont_row<C>(o1, e1, a1, b1.v[i + 1], false);
    }
    fe_pair<C> r;
    r.r0 = mont_fin<C>(e0, o0);
    r.r1 = mont_fin<C>(e1, o1);
    return r;
}
/* r0 = a0 b0, r1 = a1 b1 (the results may alias the operands). */
template <class C>
DI void mul2(fe<C> &r0, const fe<C> &a0, const fe<C> &b0, fe<C> &r1, const fe<C> &a1,
             const fe<C> &b1)
{
    const fe_pair<C> r = mul_pair_call(a0, b0, a1, b1);
    r0 = r.r0;
    r1 = r.r1;
}

/* Two squares with their rows interleaved, as mul_pair_call's products. */
template <class C>
__device__ __noinline__ fe_pair<C> sqr_pair_call(const fe<C> a0, const fe<C> a1)
{
    constexpr int N = C::N;
    uint32_t e0[N], o0[N], e1[N], o1[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row_sq<C>(e0, o0, a0, i);
        mont_row_sq<C>(e1, o1, a1, i);
        mont_row_sq<C>(o0, e0, a0, i + 1);
        mont_row_sq<C>(o1, e1, a1, i + 1);
    }
    fe_pair<C> r;
    r.r0 = mont_fin<C>(e0, o0);
    r.r1 = mont_fin<C>(e1, o1);
    return r;
}
template <class C> DI void sqr2(fe<C> &r0, const fe<C> &a, fe<C> &r1, const fe<C> &b)
{
    if (!sq_rows_ok<C>()) {
        mul2(r0, a, a, r1, b, b);
        return;
    }
    const fe_pair<C> r = sqr_pair_call(a, b);
    r0 = r.r0;
    r1 = r.r1;
}

/*
 * a b - c d with one reduction: each row adds a b_i and c d'_i (d' = m - d, m the
 * representation's modulus: p, or 2p in a lazy field, so d' is in (0, m] and nothing is
 * negative) and then reduces, so a row makes 3N word products where two products make 4N
 * (BN254's Fp: 392 multiply-adds against 528, BLS12-381's 876 against 1176). mont_row_add is
 * mont_red's multiply-add half with c, d'_i for p, m. Bounds, for operands below m: a row adds
 * below 2^32 (a + c + p) <= 2^32 5p (lazy) to T < a + c + p, so T stays below 2^(32N+32) before
 * each division (Y never carries out, as in mont_row) while 5p < 2^(32N) - 5 2^(32N-32), the
 * squaring rows' condition (dual_ok); the last row ends below (a b + c d') / R + p <= 8p^2/R
 * + p < 3p (lazy; 2p^2/R + p < 2p otherwise), so one conditional subtraction of m ends below
 * m.
 */
template <class C> DI bool dual_ok() { return p5_ok<C>(); }
/* Where the curve code uses it (curve.cuh's madd_tail): 8 limbs only. It speeds BN254's G1 MSM
 * up and slows BLS12-381's (12 limbs, its kernels at their register caps) down. */
template <class C> DI bool dual_use() { return C::N == 8 && dual_ok<C>(); }
template <class C> DI void mont_row_add(uint32_t *X, uint32_t *Y, const fe<C> &c, uint32_t di)
{
    constexpr int N = C::N;
    Y[0] = mad_lo_cc(c.v[1], di, Y[0]);
    Y[1] = madc_hi_cc(c.v[1], di, Y[1]);
#pragma unroll
    for (int j = 3; j < N; j += 2) {
        Y[j - 1] = madc_lo_cc(c.v[j], di, Y[j - 1]);
        Y[j] = madc_hi_cc(c.v[j], di, Y[j]);
    }
    X[0] = mad_lo_cc(c.v[0], di, X[0]);
    X[1] = madc_hi_cc(c.v[0], di, X[1]);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        X[j] = madc_lo_cc(c.v[j], di, X[j]);
        X[j + 1] = madc_hi_cc(c.v[j], di, X[j + 1]);
    }
    Y[N - 1] = addc(Y[N - 1], 0);
}
template <class C>
DI void mont_row_sub(uint32_t *X, uint32_t *Y, const fe<C> &a, uint32_t bi, const fe<C> &c,
                     uint32_t di, bool first)
{
    mont_row<C, false>(X, Y, a, bi, first);
    mont_row_add<C>(X, Y, c, di);
    mont_red<C>(X, Y);
}
/* m - d for d below m, m the representation's modulus (p with TWO false): mul_sub's second
 * operand, the NTT's negated twiddles (ntt_kernels.cuh's ntt_tw, r - w). */
template <class C, bool TWO = lazy_of<C>::v> DI fe<C> mod_minus(const fe<C> &d)
{
    constexpr int N = C::N;
    fe<C> r;
    r.v[0] = sub_cc(rep_mod<C, TWO>(0), d.v[0]);
#pragma unroll
    for (int i = 1; i < N - 1; i++)
        r.v[i] = subc_cc(rep_mod<C, TWO>(i), d.v[i]);
    r.v[N - 1] = subc(rep_mod<C, TWO>(N - 1), d.v[N - 1]);
    return r;
}
/* a b + c d' / R with one reduction per row (d' at most m). */
template <class C>
DI fe<C> mul_dual_inl(const fe<C> &a, const fe<C> &b, const fe<C> &c, const fe<C> &dn)
{
    constexpr int N = C::N;
    uint32_t e[N], o[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row_sub<C>(e, o, a, b.v[i], c, dn.v[i], i == 0);
        mont_row_sub<C>(o, e, a, b.v[i + 1], c, dn.v[i + 1], false);
    }
    return mont_fin<C, true>(e, o);
}
template <class C>
DI fe<C> mul_sub_inl(const fe<C> &a, const fe<C> &b, const fe<C> &c, const fe<C> &d)
{
    return mul_dual_inl(a, b, c, mod_minus(d));
}
template <class C>
__device__ __noinline__ fe<C> mul_sub_call(const fe<C> a, const fe<C> b, const fe<C> c,
                                           const fe<C> d)
{
    return mul_sub_inl(a, b, c, d);
}
/* a b + c d with one reduction per row. */
template <class C>
__device__ __noinline__ fe<C> mul_add_call(const fe<C> a, const fe<C> b, const fe<C> c,
                                           const fe<C> d)
{
    return mul_dual_inl(a, b, c, d);
}
/* r0 = a b - c d and r1 = e f, their rows interleaved. */
template <class C>
__device__ __noinline__ fe_pair<C> mul_sub_pair_call(const fe<C> a, const fe<C> b, const fe<C> c,
                                                     const fe<C> d, const fe<C> e, const fe<C> f)
{
    constexpr int N = C::N;
    const fe<C> dn = mod_minus(d);
    uint32_t e0[N], o0[N], e1[N], o1[N];
#pragma unroll
    for (int i = 0; i < N; i += 2) {
        mont_row_sub<C>(e0, o0, a, b.v[i], c, dn.v[i], i == 0);
        mont_row<C>(e1, o1, e, f.v[i], i == 0);
        mont_row_sub<C>(o0, e0, a, b.v[i + 1], c, dn.v[i + 1], false);
        mont_row<C>(o1, e1, e, f.v[i + 1], false);
    }
    fe_pair<C> r;
    r.r0 = mont_fin<C, true>(e0, o0);
    r.r1 = mont_fin<C>(e1, o1);
    return r;
}

/* a b + c d' and e f + g h' (d', h' up to p) with one reduction each, their rows interleaved:
 * four carry chains in flight instead of two (as mul_pair_call for two products; ba_halves.cuh's
 * Fp2 products in halves). */
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
/* a^-1 = a^(p-2) (Fermat; 0 -> 0), in Montgomery form as everything else: left-to-right
 * square-and-multiply over the bits of p - 2, about 32N squarings and 16N multiplications.
 * One thread; the batch-affine MSM runs one per chunk of its pairs (gpu_impl.cuh). */
template <class C> DI fe<C> inv(const fe<C> &a)
{
    uint32_t ex[C::N]; /* p - 2 (Fr's low words are small: borrow) */
    uint32_t borrow = 2;
    for (int i = 0; i < C::N; i++) {
        ex[i] = C::p(i) - borrow;
        borrow = C::p(i) < borrow ? 1 : 0;
    }
    fe<C> r = fe<C>::one();
    bool started = false;
    for (int i = C::N - 1; i >= 0; i--) {
        const uint32_t e = ex[i];
        for (int b = 31; b >= 0; b--) {
            if (started)
                r = sqr(r);
            if ((e >> b) & 1) {
                r = started ? r * a : a;
                started = true;
            }
        }
    }
    return r;
}

/* From Montgomery form to the canonical integer: one multiplication by 1. */
template <class C> DI fe<C> from_mont(const fe<C> &a)
{
    fe<C> one_int = fe<C>::zero();
    one_int.v[0] = 1;
    return mul_inl(a, one_int);
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
template <class C> DI fe2<C> canon(const fe2<C> &a)
{
    fe2<C> r;
    r.c0 = canon(a.c0);
    r.c1 = canon(a.c1);
    return r;
}

/* a + b < 2p without the final reduction, as an operand of a multiplication only: for
 * p < R/4 (both base fields of Fp2; not BLS12-381's Fr), a, b < 2p give a b < R p, so the
 * Montgomery product is still below 2p before its one conditional subtraction and every
 * intermediate of mul_inl stays in its words (T < W (a + p) < W 3p < 2^(32N+32)).
 * tests/gpu/field_emu.cpp checks products of operands up to 2p - 1 against GMP. In Fp2's
 * Karatsuba it saves two reductions per product. */
/* a + b in N words, no reduction: the caller knows the sum is below 2^(32N). */
template <class C> DI fe<C> add_nr_raw(const fe<C> &a, const fe<C> &b)
{
    constexpr int N = C::N;
    fe<C> r;
    r.v[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
    for (int i = 1; i < N - 1; i++)
        r.v[i] = addc_cc(a.v[i], b.v[i]);
    r.v[N - 1] = addc(a.v[N - 1], b.v[N - 1]);
    return r;
}
template <class C> DI fe<C> add_nr(const fe<C> &a, const fe<C> &b)
{
    if constexpr (lazy_of<C>::v)
        return a + b; /* operands already up to 2p: their sum must be reduced */
    else
        return add_nr_raw(a, b);
}

/* Karatsuba: 3 base multiplications. For 8-limb fields (BN254's Fp, where dual_ok holds:
 * 5p < R, which gpu_bn254.cuh asserts), two sums of two products with one reduction each
 * instead (mul_sub_call, mul_add_call): 784 multiply-adds against 792, two calls against three
 * and none of Karatsuba's sums and differences. BLS12-381's Fp2 (12 limbs, G2 kernels at their
 * register cap) keeps Karatsuba. */
template <class C> DI fe2<C> operator*(const fe2<C> &a, const fe2<C> &b)
{
    if constexpr (C::N == 8) {
        fe2<C> r;
        r.c0 = mul_sub_call(a.c0, b.c0, a.c1, b.c1);
        r.c1 = mul_add_call(a.c0, b.c1, a.c1, b.c0);
        return r;
    }
    fe<C> t0 = mul_call(a.c0, b.c0);
    fe<C> t1 = mul_call(a.c1, b.c1);
    fe<C> t2 = mul_call(add_nr(a.c0, a.c1), add_nr(b.c0, b.c1));
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
    r.c0 = mul_call(add_nr(a.c0, a.c1), a.c0 - a.c1);
    r.c1 = t + t;
    return r;
}
/* Fp2's two products and two squares one after the other: the G2 kernels (200-255 registers)
 * lose more to the pairs' extra registers than they gain. */
template <class C>
DI void mul2(fe2<C> &r0, const fe2<C> &a0, const fe2<C> &b0, fe2<C> &r1, const fe2<C> &a1,
             const fe2<C> &b1)
{
    const fe2<C> t = a0 * b0;
    r1 = a1 * b1;
    r0 = t;
}
template <class C> DI void sqr2(fe2<C> &r0, const fe2<C> &a, fe2<C> &r1, const fe2<C> &b)
{
    const fe2<C> t = sqr(a);
    r1 = sqr(b);
    r0 = t;
}

/* (a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + a1^2): one inversion in Fp (0 -> 0). */
template <class C> DI fe2<C> inv(const fe2<C> &a)
{
    const fe<C> n = inv(sqr(a.c0) + sqr(a.c1));
    fe2<C> r;
    r.c0 = a.c0 * n;
    r.c1 = -(a.c1 * n);
    return r;
}

/* An element in shared memory word-major (s[w0 + k][t], word k of the element of thread or
 * slot t): a warp whose lanes take consecutive t reads 32 consecutive words, one per bank. The
 * NTT's blocks keep their elements so (ntt_kernels.cuh), the MSM's parked sums too (curve.cuh's
 * xyzz_park). */
template <int NT, class C> DI void sh_words_ld(fe<C> &r, const uint32_t (*s)[NT], int w0, int t)
{
#pragma unroll
    for (int k = 0; k < C::N; k++)
        r.v[k] = s[w0 + k][t];
}
template <int NT, class C> DI void sh_words_ld(fe2<C> &r, const uint32_t (*s)[NT], int w0, int t)
{
    sh_words_ld<NT>(r.c0, s, w0, t);
    sh_words_ld<NT>(r.c1, s, w0 + C::N, t);
}
template <int NT, class C> DI void sh_words_st(const fe<C> &a, uint32_t (*s)[NT], int w0, int t)
{
#pragma unroll
    for (int k = 0; k < C::N; k++)
        s[w0 + k][t] = a.v[k];
}
template <int NT, class C> DI void sh_words_st(const fe2<C> &a, uint32_t (*s)[NT], int w0, int t)
{
    sh_words_st<NT>(a.c0, s, w0, t);
    sh_words_st<NT>(a.c1, s, w0 + C::N, t);
}

} // namespace cuzk_gpu

#endif
