/*
 * The FP64-pipe Montgomery multiplication (src/gpu/fp52.cuh) on the host, against GMP: the
 * fused multiply-adds rounding toward zero (the C library's fma under FE_TOWARDZERO, as the
 * device's __fma_rz) split every limb product into the high and low halves __int128 says, and
 * mont_mul gives a b 2^-260 mod p, below 2p with limbs below 2^52 (mont_mul_ps, the
 * product-scanning order, the same limbs), for BN254's r and p and
 * BLS12-381's r, on random inputs below 2^256 and below 2p, the edge values (0, 1, p - 1, p,
 * 2p - 1, 2^256 - 1) and chains of products (each output the next input); from_words / to_words
 * move field.cuh's eight words to limbs and back. Built with -frounding-math by
 * fp52_emu_test.sh; needs no GPU (CI).
 */
#define CUZK_GPU_HOST_EMU 1
#include <gmp.h>
#include <stdio.h>
#include <string.h>

#include "ff/ff_params.h"
#include "gpu/fp52.cuh"

using namespace cuzk_fp52;

static constexpr uint64_t w_bn_r[4] = BN254_FR_P, w_bn_p[4] = BN254_FP_P,
                          w_bls_r[4] = BLS12_381_FR_P;
typedef modulus<w_bn_r[0], w_bn_r[1], w_bn_r[2], w_bn_r[3]> bn254_r;
typedef modulus<w_bn_p[0], w_bn_p[1], w_bn_p[2], w_bn_p[3]> bn254_p;
typedef modulus<w_bls_r[0], w_bls_r[1], w_bls_r[2], w_bls_r[3]> bls_r;

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint64_t r64(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static long checks, failed;
static void check(bool ok, const char *what, const char *field)
{
    checks++;
    if (!ok && failed++ < 10)
        fprintf(stderr, "fp52_emu: %s: %s wrong\n", field, what);
}

/* The limb products' split: h and l's patterns less the exponents are ab's halves. */
static void check_split(void)
{
    const uint64_t edge[] = {0, 1, 2, M52, M52 - 1, 1ull << 51, (1ull << 26) + 1};
    for (int t = 0; t < 200000; t++) {
        uint64_t a, b;
        if (t < 49) {
            a = edge[t / 7];
            b = edge[t % 7];
        } else {
            a = r64() & M52;
            b = r64() & M52;
            if (t % 3 == 0)
                a >>= r64() % 52;
        }
        uint64_t c[2] = {0, 0};
        mac(c, 0, (double)a, (double)b);
        const unsigned __int128 ab = (unsigned __int128)a * b;
        check(c[0] - E52 == (uint64_t)(ab & M52) && c[1] - E104 == (uint64_t)(ab >> 52),
              "a limb product's halves", "split");
    }
}

struct field {
    const char *name;
    const uint64_t *w;
    mpz_t P, Rinv;
    field(const char *n, const uint64_t *words) : name(n), w(words)
    {
        mpz_inits(P, Rinv, NULL);
        mpz_import(P, 4, -1, 8, 0, 0, w);
        mpz_set_ui(Rinv, 1);
        mpz_mul_2exp(Rinv, Rinv, 260);
        mpz_invert(Rinv, Rinv, P);
    }
    ~field() { mpz_clears(P, Rinv, NULL); }
};

static void words_of(mpz_t x, uint32_t v[8])
{
    memset(v, 0, 32);
    mpz_export(v, NULL, -1, 4, 0, 0, x);
}

/* One product: v, u as eight words; checks the result's bound and residue, returns it. */
template <class P>
static void one(field &f, const uint32_t *v, const uint32_t *u, uint32_t *out)
{
    uint64_t a[L], b[L], r[L];
    double ad[L], bd[L], rd[L];
    from_words(v, a);
    from_words(u, b);
    for (int k = 0; k < L; k++) {
        ad[k] = (double)a[k];
        bd[k] = (double)b[k];
    }
    uint64_t rp[L];
    mont_mul<P>(ad, bd, r);
    mont_mul<P>(ad, bd, rd);
    mont_mul_ps<P>(ad, bd, rp);
    bool limbs = true, same = true, ps = true;
    for (int k = 0; k < L; k++) {
        limbs &= r[k] <= M52;
        same &= rd[k] == (double)r[k];
        ps &= rp[k] == r[k];
    }
    check(limbs, "a limb above 2^52", f.name);
    check(same, "the doubles' result", f.name);
    check(ps, "the product-scanning order's result", f.name);
    to_words(r, out);
    mpz_t x, y, z, e;
    mpz_inits(x, y, z, e, NULL);
    mpz_import(x, 8, -1, 4, 0, 0, v);
    mpz_import(y, 8, -1, 4, 0, 0, u);
    mpz_import(z, 8, -1, 4, 0, 0, out);
    mpz_mul(e, x, y);
    mpz_mul(e, e, f.Rinv);
    mpz_mod(e, e, f.P);
    mpz_t p2;
    mpz_init(p2);
    mpz_mul_2exp(p2, f.P, 1);
    check(mpz_cmp(z, p2) < 0, "a result not below 2p", f.name);
    mpz_mod(z, z, f.P);
    check(mpz_cmp(z, e) == 0, "a b 2^-260 mod p", f.name);
    mpz_clears(x, y, z, e, p2, NULL);
}

template <class P> static void check_field(field &f)
{
    /* Edge values: 0, 1, p - 1, p, 2p - 1, 2^256 - 1. */
    uint32_t edge[6][8];
    mpz_t t;
    mpz_init(t);
    /* The modulus' limbs put together again are p. */
    for (int k = L - 1; k >= 0; k--) {
        mpz_mul_2exp(t, t, 52);
        mpz_add_ui(t, t, P::limb(k));
    }
    check(mpz_cmp(t, f.P) == 0, "the modulus' limbs", f.name);
    const int de[6] = {0, 1, -1, 0, -1, -1};
    for (int i = 0; i < 6; i++) {
        if (i < 2)
            mpz_set_ui(t, i);
        else if (i < 4)
            mpz_set(t, f.P);
        else if (i == 4)
            mpz_mul_2exp(t, f.P, 1);
        else {
            mpz_set_ui(t, 1);
            mpz_mul_2exp(t, t, 256);
        }
        if (i >= 2 && de[i] < 0)
            mpz_sub_ui(t, t, 1);
        words_of(t, edge[i]);
    }
    uint32_t out[8];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            one<P>(f, edge[i], edge[j], out);
    /* Random below 2^256, below 2p, and limbs of extreme values. */
    mpz_t p2;
    mpz_init(p2);
    mpz_mul_2exp(p2, f.P, 1);
    for (int n = 0; n < 20000; n++) {
        uint32_t v[8], u[8];
        for (int i = 0; i < 8; i++) {
            v[i] = (uint32_t)r64();
            u[i] = (uint32_t)r64();
        }
        if (n % 4 == 1) { /* reduced below 2p */
            mpz_import(t, 8, -1, 4, 0, 0, v);
            mpz_mod(t, t, p2);
            words_of(t, v);
            mpz_import(t, 8, -1, 4, 0, 0, u);
            mpz_mod(t, t, p2);
            words_of(t, u);
        } else if (n % 4 == 2) { /* words all-ones or zero */
            for (int i = 0; i < 8; i++) {
                v[i] = (r64() & 1) ? 0xffffffffu : 0;
                u[i] = (r64() & 1) ? 0xffffffffu : 0;
            }
        }
        /* from_words / to_words: eight words to limbs and back. */
        uint64_t a[L];
        uint32_t back[8];
        from_words(v, a);
        to_words(a, back);
        check(memcmp(back, v, 32) == 0, "words to limbs and back", f.name);
        one<P>(f, v, u, out);
    }
    /* Chains: each product the next left operand, below 2p throughout. */
    for (int c = 0; c < 200; c++) {
        uint32_t x[8], y[8];
        for (int i = 0; i < 8; i++) {
            x[i] = (uint32_t)r64();
            y[i] = (uint32_t)r64();
        }
        for (int s = 0; s < 100; s++) {
            one<P>(f, x, y, out);
            memcpy(x, out, 32);
        }
    }
    mpz_clears(t, p2, NULL);
}

int main(void)
{
    check(((bn254_r::pinv * w_bn_r[0]) & M52) == M52 && ((bls_r::pinv * w_bls_r[0]) & M52) == M52,
          "-p^-1 mod 2^52", "setup");
    check(((bn254_p::pinv * w_bn_p[0]) & M52) == M52, "-p^-1 mod 2^52", "setup");
    check_split();
    field fr("bn254 r", w_bn_r), fp("bn254 p", w_bn_p), fb("bls12-381 r", w_bls_r);
    check_field<bn254_r>(fr);
    check_field<bn254_p>(fp);
    check_field<bls_r>(fb);
    printf("fp52_emu: %ld checks, %ld failed\n", checks, failed);
    return failed ? 1 : 0;
}
