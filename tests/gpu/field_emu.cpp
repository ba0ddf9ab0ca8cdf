/*
 * The device field arithmetic (src/gpu/ff/field.cuh) compiled for the host with the PTX carry
 * primitives emulated (CUZK_GPU_HOST_EMU), checked against GMP: Montgomery products a*b/R mod
 * p for the four fields, sums of two products with one reduction (a b -+ c d: mul_sub_*,
 * mul_add_call, where dual_ok holds), Fp2 products and squares (u^2 = -1), add / sub / neg,
 * inversions (Fermat in Fp, over the norm in Fp2), zero tests, equality and canon(), on
 * random reduced inputs and the edge values 0, 1, p - 1; the two base fields again as lazy
 * fields (elements in [0, 2p), results checked as residues below 2p). Runs on machines without
 * a GPU (CI), so the carry logic of the even/odd multiplication is covered there. Built and
 * run by field_emu_test.sh.
 */
#define CUZK_GPU_HOST_EMU 1
#include <gmp.h>
#include <stdio.h>
#include <string.h>

#include "gpu/ff/field.cuh"
#include "emu_fields.h"

using namespace cuzk_gpu;

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint32_t r32(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)rs;
}

static long checks, failed;

template <class C> struct ctx {
    mpz_t P, Rinv, R, R2, t, u, v;
    ctx()
    {
        mpz_inits(P, Rinv, R, R2, t, u, v, NULL);
        uint32_t w[C::N];
        for (int i = 0; i < C::N; i++)
            w[i] = C::p(i);
        mpz_import(P, C::N, -1, 4, 0, 0, w);
        mpz_set_ui(Rinv, 1);
        mpz_mul_2exp(Rinv, Rinv, 32 * C::N);
        mpz_invert(Rinv, Rinv, P);
        mpz_set_ui(R, 1);
        mpz_mul_2exp(R, R, 32 * C::N);
        mpz_mod(R, R, P);
        mpz_mul(R2, R, R);
        mpz_mod(R2, R2, P);
    }
    void to_mpz(mpz_t r, const fe<C> &a) { mpz_import(r, C::N, -1, 4, 0, 0, a.v); }
    fe<C> from_mpz(const mpz_t a)
    {
        fe<C> r;
        memset(r.v, 0, sizeof r.v);
        mpz_export(r.v, NULL, -1, 4, 0, 0, a);
        return r;
    }
    /* random element; about every 5th is an edge value (0, 1, p - 1, all ones reduced,
     * p - small); in a lazy field a quarter are moved to [p, 2p) (2p - 1 among them) */
    fe<C> rnd()
    {
        fe<C> r = rnd_reduced();
        if (lazy_of<C>::v && r32() % 4 == 0) {
            to_mpz(u, r);
            mpz_add(u, u, P);
            if (r32() % 8 == 0) {
                mpz_mul_2exp(u, P, 1);
                mpz_sub_ui(u, u, 1);
            }
            r = from_mpz(u);
        }
        return r;
    }
    fe<C> rnd_reduced()
    {
        uint32_t w[C::N];
        for (int i = 0; i < C::N; i++)
            w[i] = r32();
        mpz_import(t, C::N, -1, 4, 0, 0, w);
        mpz_mod(t, t, P);
        switch (r32() % 24) {
        case 0: mpz_set_ui(t, 0); break;
        case 1: mpz_set_ui(t, 1); break;
        case 2: mpz_sub_ui(t, P, 1); break;
        case 3: /* every limb all ones, reduced: long carry chains */
            for (int i = 0; i < C::N; i++)
                w[i] = 0xffffffffu;
            mpz_import(t, C::N, -1, 4, 0, 0, w);
            mpz_mod(t, t, P);
            break;
        case 4: /* p - small */
            mpz_sub_ui(t, P, 1 + r32() % 1000);
            break;
        case 5: /* low word zero: a row's m is zero */
            mpz_fdiv_q_2exp(t, t, 32);
            mpz_mul_2exp(t, t, 32);
            break;
        case 6: /* one word set: most rows' m zero */
            mpz_set_ui(t, 1 + r32() % 0xffffffffu);
            mpz_mul_2exp(t, t, 32 * (r32() % C::N));
            mpz_mod(t, t, P);
            break;
        }
        return from_mpz(t);
    }
    /* got == want (reduced); in a lazy field got may also be want + p (below 2p) */
    void check(const char *what, const fe<C> &got, const mpz_t want)
    {
        fe<C> w = from_mpz(want);
        checks++;
        bool bad = memcmp(w.v, got.v, sizeof w.v) != 0;
        if (bad && lazy_of<C>::v) {
            to_mpz(v, got);
            mpz_sub(v, v, P);
            bad = mpz_cmp(v, want) != 0;
        }
        if (bad) {
            if (failed++ < 10)
                printf("MISMATCH %s (N=%d p0=%08x)\n", what, C::N, C::p(0));
        }
    }
};

template <class C> static void test_fp(int iters)
{
    ctx<C> c;
    mpz_t a, b, r;
    mpz_inits(a, b, r, NULL);
    /* The config's p5_fits (field.cuh's p5_of: squaring rows, dual sums) is 5p < 2^(32N). */
    mpz_mul_ui(a, c.P, 5);
    checks++;
    if (p5_of<C>::v != (mpz_sizeinbase(a, 2) <= 32 * (size_t)C::N)) {
        failed++;
        printf("MISMATCH p5_fits (N=%d p0=%08x): %d\n", C::N, C::p(0), (int)p5_of<C>::v);
    }
    for (int it = 0; it < iters; it++) {
        fe<C> x = c.rnd(), y = c.rnd();
        c.to_mpz(a, x);
        c.to_mpz(b, y);
        mpz_mul(r, a, b);
        mpz_mul(r, r, c.Rinv);
        mpz_mod(r, r, c.P);
        c.check("mul", x * y, r);
        c.check("mul_inl", mul_inl(x, y), r);
        if (!lazy_of<C>::v && mpz_sizeinbase(c.P, 2) + 2 <= 32 * (size_t)C::N) {
            /* Operands below 2p where 4p < R (the base fields of Fp2), as Fp2's Karatsuba
             * passes sums without reducing them (add_nr): x + p, and 2p - 1 (the largest)
             * every 16th time. (Lazy fields have such operands among their inputs.) */
            mpz_t a2, b2;
            mpz_inits(a2, b2, NULL);
            mpz_add(a2, a, c.P);
            if (it % 16 == 3) {
                mpz_mul_2exp(a2, c.P, 1);
                mpz_sub_ui(a2, a2, 1);
            }
            mpz_add(b2, b, c.P);
            fe<C> x2 = c.from_mpz(a2), y2 = c.from_mpz(b2);
            mpz_mul(r, a2, b2);
            mpz_mul(r, r, c.Rinv);
            mpz_mod(r, r, c.P);
            c.check("mul_inl < 2p", mul_inl(x2, y2), r);
            mpz_add(r, a, b); /* add_nr: the plain sum */
            c.check("add_nr", add_nr(x, y), r);
            mpz_clears(a2, b2, NULL);
        }
        mpz_mul(r, a, a);
        mpz_mul(r, r, c.Rinv);
        mpz_mod(r, r, c.P);
        c.check("sqr", sqr(x), r);
        {
            /* the interleaved pair (and its squares), each result against GMP; the pair's
             * results written over its operands, as the curve code does */
            fe<C> z = c.rnd(), x1 = x, y1 = y, sx, sz;
            mpz_t q, rz;
            mpz_inits(q, rz, NULL);
            c.to_mpz(q, z);
            mpz_mul(rz, q, a);
            mpz_mul(rz, rz, c.Rinv);
            mpz_mod(rz, rz, c.P);
            mul2(x1, x1, x1, y1, z, x1);
            c.check("mul2 first (a a)", x1, r);
            c.check("mul2 second (z a)", y1, rz);
            sqr2(sx, x, sz, z);
            mpz_mul(rz, q, q);
            mpz_mul(rz, rz, c.Rinv);
            mpz_mod(rz, rz, c.P);
            c.check("sqr2 first", sx, r);
            c.check("sqr2 second", sz, rz);
            mpz_clears(q, rz, NULL);
        }
        if (dual_ok<C>()) {
            /* a b - c d with one reduction (mul_sub_*), alone and beside a product; every
             * 16th time the largest operands: a, b, c = m - 1 and d = 0 (d' = m) */
            fe<C> z = c.rnd(), w = c.rnd(), x1 = x, y1 = y;
            if (it % 16 == 5) {
                mpz_set(c.u, c.P);
                if (lazy_of<C>::v)
                    mpz_mul_2exp(c.u, c.u, 1);
                mpz_sub_ui(c.u, c.u, 1);
                x1 = y1 = z = c.from_mpz(c.u);
                w = fe<C>::zero();
            }
            mpz_t a1, b1, q, s, rs, rp;
            mpz_inits(a1, b1, q, s, rs, rp, NULL);
            c.to_mpz(a1, x1);
            c.to_mpz(b1, y1);
            c.to_mpz(q, z);
            c.to_mpz(s, w);
            mpz_mul(rs, a1, b1);
            mpz_submul(rs, q, s);
            mpz_mul(rs, rs, c.Rinv);
            mpz_mod(rs, rs, c.P);
            c.check("mul_sub_inl", mul_sub_inl(x1, y1, z, w), rs);
            c.check("mul_sub_call", mul_sub_call(x1, y1, z, w), rs);
            mpz_mul(rp, a1, b1);
            mpz_addmul(rp, q, s);
            mpz_mul(rp, rp, c.Rinv);
            mpz_mod(rp, rp, c.P);
            c.check("mul_add_call", mul_add_call(x1, y1, z, w), rp);
            mpz_mul(rp, q, b1);
            mpz_mul(rp, rp, c.Rinv);
            mpz_mod(rp, rp, c.P);
            const fe_pair<C> pr = mul_sub_pair_call(x1, y1, z, w, z, y1);
            c.check("mul_sub_pair_call first", pr.r0, rs);
            c.check("mul_sub_pair_call second", pr.r1, rp);
            mpz_clears(a1, b1, q, s, rs, rp, NULL);
        }
        mpz_add(r, a, b);
        mpz_mod(r, r, c.P);
        c.check("add", x + y, r);
        mpz_sub(r, a, b);
        mpz_mod(r, r, c.P);
        c.check("sub", x - y, r);
        mpz_neg(r, a);
        mpz_mod(r, r, c.P);
        c.check("neg", -x, r);
        {
            /* residues: zero tests, equality, the canonical form */
            mpz_mod(r, a, c.P);
            checks += 3;
            fe<C> cx = canon(x);
            if (x.is_zero() != (mpz_sgn(r) == 0) || !(x == c.from_mpz(r)) ||
                memcmp(cx.v, c.from_mpz(r).v, sizeof cx.v)) {
                if (failed++ < 10)
                    printf("MISMATCH is_zero / == / canon (N=%d p0=%08x)\n", C::N, C::p(0));
            }
            mpz_mod(r, b, c.P);
            mpz_mod(c.t, a, c.P);
            bool eq = mpz_cmp(r, c.t) == 0;
            checks++;
            if ((x == y) != eq && failed++ < 10)
                printf("MISMATCH == (N=%d p0=%08x)\n", C::N, C::p(0));
        }
        {
            /* lt_mod (the device's range check of canonical scalars): raw words, and p - 1, p,
             * p + 1 (the edges a wrong borrow chain gets wrong) */
            uint32_t w[C::N];
            for (int i = 0; i < C::N; i++)
                w[i] = r32();
            mpz_import(c.t, C::N, -1, 4, 0, 0, w);
            switch (it % 8) {
            case 0: mpz_sub_ui(c.t, c.P, 1); break;
            case 1: mpz_set(c.t, c.P); break;
            case 2: mpz_add_ui(c.t, c.P, 1); break;
            case 3: mpz_set(c.t, a); break; /* an element (below 2p in a lazy field) */
            }
            fe<C> z = c.from_mpz(c.t);
            checks++;
            if (lt_mod(z) != (mpz_cmp(c.t, c.P) < 0) && failed++ < 10)
                printf("MISMATCH lt_mod (N=%d p0=%08x)\n", C::N, C::p(0));
        }
        if (it % 64 == 0) {
            /* x holds a = X R; its inverse is held as X^-1 R = a^-1 R^2 (0 -> 0). */
            mpz_mod(a, a, c.P);
            if (mpz_sgn(a) == 0) {
                mpz_set_ui(r, 0);
            } else {
                mpz_invert(r, a, c.P);
                mpz_mul(r, r, c.R2);
                mpz_mod(r, r, c.P);
            }
            c.check("inv", inv(x), r);
        }
    }
    mpz_clears(a, b, r, NULL);
}

/* (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u, all over R. */
/* GMP's (a0 + a1 u)(b0 + b1 u) / R and (a0 + a1 u)^2 / R in Fp2 = Fp[u]/(u^2 + 1). */
template <class C>
static void fp2_mul_ref(ctx<C> &c, mpz_t r0, mpz_t r1, const mpz_t a0, const mpz_t a1,
                        const mpz_t b0, const mpz_t b1)
{
    mpz_mul(r0, a0, b0);
    mpz_submul(r0, a1, b1);
    mpz_mul(r0, r0, c.Rinv);
    mpz_mod(r0, r0, c.P);
    mpz_mul(r1, a0, b1);
    mpz_addmul(r1, a1, b0);
    mpz_mul(r1, r1, c.Rinv);
    mpz_mod(r1, r1, c.P);
}
template <class C>
static void fp2_sqr_ref(ctx<C> &c, mpz_t r0, mpz_t r1, const mpz_t a0, const mpz_t a1)
{
    fp2_mul_ref(c, r0, r1, a0, a1, a0, a1);
}

template <class C> static void test_fp2(int iters)
{
    ctx<C> c;
    mpz_t a0, a1, b0, b1, r0, r1, s;
    mpz_inits(a0, a1, b0, b1, r0, r1, s, NULL);
    for (int it = 0; it < iters; it++) {
        fe2<C> x, y;
        x.c0 = c.rnd(), x.c1 = c.rnd(), y.c0 = c.rnd(), y.c1 = c.rnd();
        c.to_mpz(a0, x.c0), c.to_mpz(a1, x.c1), c.to_mpz(b0, y.c0), c.to_mpz(b1, y.c1);
        fp2_mul_ref(c, r0, r1, a0, a1, b0, b1);
        fe2<C> m = x * y;
        c.check("fp2 mul c0", m.c0, r0);
        c.check("fp2 mul c1", m.c1, r1);
        fp2_sqr_ref(c, r0, r1, a0, a1);
        fe2<C> q = sqr(x);
        c.check("fp2 sqr c0", q.c0, r0);
        c.check("fp2 sqr c1", q.c1, r1);
        {
            /* mul2 / sqr2 of Fp2 (two products, two squares, in turn): (x y, x x) and
             * (x x, y y), the second product written over x, an operand of both; x x is
             * (r0, r1) here, x y recomputed */
            fe2<C> x1 = x, xy, s0, s1;
            mul2(xy, x1, y, x1, x1, x1);
            c.check("fp2 mul2 second c0", x1.c0, r0);
            c.check("fp2 mul2 second c1", x1.c1, r1);
            sqr2(s0, x, s1, y);
            c.check("fp2 sqr2 first c0", s0.c0, r0);
            c.check("fp2 sqr2 first c1", s0.c1, r1);
            fp2_sqr_ref(c, r0, r1, b0, b1);
            c.check("fp2 sqr2 second c0", s1.c0, r0);
            c.check("fp2 sqr2 second c1", s1.c1, r1);
            fp2_mul_ref(c, r0, r1, a0, a1, b0, b1);
            c.check("fp2 mul2 first c0", xy.c0, r0);
            c.check("fp2 mul2 first c1", xy.c1, r1);
        }
        if (it % 16 == 0) {
            /* (X0 + X1 u)^-1 = (X0 - X1 u) / (X0^2 + X1^2), Xi = ai / R, held times R. */
            mpz_mul(r0, a0, c.Rinv);
            mpz_mod(r0, r0, c.P);
            mpz_mul(r1, a1, c.Rinv);
            mpz_mod(r1, r1, c.P);
            mpz_mul(s, r0, r0);
            mpz_addmul(s, r1, r1);
            mpz_mod(s, s, c.P);
            if (mpz_sgn(s) == 0) {
                mpz_set_ui(r0, 0);
                mpz_set_ui(r1, 0);
            } else {
                mpz_invert(s, s, c.P);
                mpz_mul(s, s, c.R);
                mpz_mul(r0, r0, s);
                mpz_mod(r0, r0, c.P);
                mpz_mul(r1, r1, s);
                mpz_neg(r1, r1);
                mpz_mod(r1, r1, c.P);
            }
            fe2<C> iv = inv(x);
            c.check("fp2 inv c0", iv.c0, r0);
            c.check("fp2 inv c1", iv.c1, r1);
        }
    }
    mpz_clears(a0, a1, b0, b1, r0, r1, s, NULL);
}

int main(void)
{
    test_fp<BnFp>(200000);
    test_fp<BlsFp>(200000);
    test_fp<BnFr>(100000);
    test_fp<BlsFr>(100000);
    test_fp<BlsFrG>(30000);
    test_fp2<BnFp>(50000);
    test_fp2<BlsFp>(50000);
    test_fp<BnFpL>(200000);
    test_fp<BlsFpL>(200000);
    test_fp2<BnFpL>(50000);
    test_fp2<BlsFpL>(50000);
    printf("field_emu: %ld checks, %ld failed\n", checks, failed);
    return failed != 0;
}
