/* Fp6 and Fp12 towers of both curves: field laws on random elements, inverses, the sparse
 * products against the general product, the Frobenius maps against exponentiation by p
 * (pow_limbs with the modulus, which checks the generated Frobenius table independently),
 * and the cyclotomic-subgroup operations (Granger-Scott squaring, conjugate = inverse)
 * against the generic ones. Portable and assembly multiplication kernels both. */
#include "ff/tower.h"
#include "testutil.h"

/* A uniformly random Fp element (rejection sampling below p), in Montgomery form. */
#define RAND_FP(F)                                                                        \
    static void rand_##F(F##_t *r)                                                        \
    {                                                                                     \
        enum { N = sizeof(r->l) / sizeof(r->l[0]) };                                      \
        uint64_t top = F##_P.l[N - 1];                                                    \
        uint64_t mask = ~(uint64_t)0 >> __builtin_clzll(top);                             \
        do {                                                                              \
            for (int i = 0; i < N; i++)                                                   \
                r->l[i] = tu_rand64();                                                    \
            r->l[N - 1] &= mask;                                                          \
        } while (!F##_limbs_lt_p(r->l));                                                  \
    }
RAND_FP(bn254_fp)
RAND_FP(bls12_381_fp)

#define TOWER_TESTS(C)                                                                    \
    static void rand_##C##_fp2(C##_fp2_t *r)                                              \
    {                                                                                     \
        rand_##C##_fp(&r->c0);                                                            \
        rand_##C##_fp(&r->c1);                                                            \
    }                                                                                     \
    static void rand_##C##_fp6(C##_fp6_t *r)                                              \
    {                                                                                     \
        rand_##C##_fp2(&r->c0);                                                           \
        rand_##C##_fp2(&r->c1);                                                           \
        rand_##C##_fp2(&r->c2);                                                           \
    }                                                                                     \
    static void rand_##C##_fp12(C##_fp12_t *r)                                            \
    {                                                                                     \
        rand_##C##_fp6(&r->c0);                                                           \
        rand_##C##_fp6(&r->c1);                                                           \
    }                                                                                     \
    static void test_##C(void)                                                            \
    {                                                                                     \
        enum { NL = sizeof(C##_fp_P.l) / sizeof(uint64_t) };                              \
        C##_fp6_t a6, b6, c6, x6, y6, one6, zero6;                                        \
        C##_fp12_t a, b, c, x, y, one, zero;                                              \
        C##_fp6_set_one(&one6);                                                           \
        C##_fp6_set_zero(&zero6);                                                         \
        C##_fp12_set_one(&one);                                                           \
        C##_fp12_set_zero(&zero);                                                         \
        for (int it = 0; it < 6; it++) {                                                  \
            /* Fp6 laws. */                                                               \
            rand_##C##_fp6(&a6);                                                          \
            rand_##C##_fp6(&b6);                                                          \
            rand_##C##_fp6(&c6);                                                          \
            C##_fp6_mul(&x6, &a6, &b6);                                                   \
            C##_fp6_mul(&x6, &x6, &c6);                                                   \
            C##_fp6_mul(&y6, &b6, &c6);                                                   \
            C##_fp6_mul(&y6, &a6, &y6);                                                   \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            C##_fp6_mul(&x6, &a6, &b6);                                                   \
            C##_fp6_mul(&y6, &b6, &a6);                                                   \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            C##_fp6_add(&x6, &b6, &c6);                                                   \
            C##_fp6_mul(&x6, &a6, &x6);                                                   \
            C##_fp6_mul(&y6, &a6, &b6);                                                   \
            C##_fp6_t z6;                                                                 \
            C##_fp6_mul(&z6, &a6, &c6);                                                   \
            C##_fp6_add(&y6, &y6, &z6);                                                   \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            C##_fp6_sqr(&x6, &a6);                                                        \
            C##_fp6_mul(&y6, &a6, &a6);                                                   \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            C##_fp6_inv(&x6, &a6);                                                        \
            C##_fp6_mul(&x6, &x6, &a6);                                                   \
            CHECK(C##_fp6_is_one(&x6));                                                   \
            C##_fp6_sub(&x6, &a6, &b6);                                                   \
            C##_fp6_add(&x6, &x6, &b6);                                                   \
            CHECK(C##_fp6_eq(&x6, &a6));                                                  \
            C##_fp6_neg(&x6, &a6);                                                        \
            C##_fp6_add(&x6, &x6, &a6);                                                   \
            CHECK(C##_fp6_is_zero(&x6));                                                  \
            /* v^3 = xi and the sparse products. */                                       \
            C##_fp6_t v6 = zero6;                                                         \
            C##_fp2_set_one(&v6.c1);                                                      \
            C##_fp6_mul(&x6, &a6, &v6);                                                   \
            C##_fp6_mul_by_v(&y6, &a6);                                                   \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            C##_fp6_mul(&x6, &v6, &v6);                                                   \
            C##_fp6_mul(&x6, &x6, &v6);                                                   \
            C##_fp2_t xi;                                                                 \
            C##_fp2_set_one(&xi);                                                         \
            C##_fp2_mul_by_xi(&xi, &xi);                                                  \
            CHECK(C##_fp2_eq(&x6.c0, &xi) && C##_fp2_is_zero(&x6.c1) &&                   \
                  C##_fp2_is_zero(&x6.c2));                                               \
            {                                                                             \
                C##_fp2_t p1, p2;                                                         \
                C##_fp6_mul_xi(&p1, &a6.c0);                                              \
                C##_fp2_mul(&p2, &a6.c0, &xi);                                            \
                CHECK(C##_fp2_eq(&p1, &p2));                                              \
            }                                                                             \
            C##_fp6_t s6 = zero6;                                                         \
            s6.c0 = b6.c0;                                                                \
            s6.c1 = b6.c1;                                                                \
            C##_fp6_mul(&x6, &a6, &s6);                                                   \
            C##_fp6_mul_by_01(&y6, &a6, &b6.c0, &b6.c1);                                  \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            s6 = zero6;                                                                   \
            s6.c1 = b6.c1;                                                                \
            C##_fp6_mul(&x6, &a6, &s6);                                                   \
            C##_fp6_mul_by_1(&y6, &a6, &b6.c1);                                           \
            CHECK(C##_fp6_eq(&x6, &y6));                                                  \
            /* Fp6 Frobenius = x^p. */                                                    \
            C##_fp6_frob(&x6, &a6, 1);                                                    \
            {                                                                             \
                /* a^p via (a^p) = prod; pow by p with the Fp12 routine on (a, 0). */     \
                C##_fp12_t t = zero;                                                      \
                t.c0 = a6;                                                                \
                C##_fp12_pow_limbs(&t, &t, C##_fp_P.l, NL);                               \
                CHECK(C##_fp6_eq(&x6, &t.c0) && C##_fp6_is_zero(&t.c1));                  \
            }                                                                             \
            C##_fp6_frob(&y6, &x6, 1);                                                    \
            C##_fp6_frob(&z6, &a6, 2);                                                    \
            CHECK(C##_fp6_eq(&y6, &z6));                                                  \
            C##_fp6_frob(&y6, &y6, 1);                                                    \
            C##_fp6_frob(&z6, &a6, 3);                                                    \
            CHECK(C##_fp6_eq(&y6, &z6));                                                  \
                                                                                          \
            /* Fp12 laws. */                                                              \
            rand_##C##_fp12(&a);                                                          \
            rand_##C##_fp12(&b);                                                          \
            rand_##C##_fp12(&c);                                                          \
            C##_fp12_mul(&x, &a, &b);                                                     \
            C##_fp12_mul(&x, &x, &c);                                                     \
            C##_fp12_mul(&y, &b, &c);                                                     \
            C##_fp12_mul(&y, &a, &y);                                                     \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_mul(&x, &a, &b);                                                     \
            C##_fp12_mul(&y, &b, &a);                                                     \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_t z;                                                                 \
            C##_fp12_add(&x, &b, &c);                                                     \
            C##_fp12_mul(&x, &a, &x);                                                     \
            C##_fp12_mul(&y, &a, &b);                                                     \
            C##_fp12_mul(&z, &a, &c);                                                     \
            C##_fp12_add(&y, &y, &z);                                                     \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_sqr(&x, &a);                                                         \
            C##_fp12_mul(&y, &a, &a);                                                     \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_inv(&x, &a);                                                         \
            C##_fp12_mul(&x, &x, &a);                                                     \
            CHECK(C##_fp12_is_one(&x));                                                   \
            CHECK(!C##_fp12_is_one(&a));                                                  \
            C##_fp12_sub(&x, &a, &b);                                                     \
            C##_fp12_add(&x, &x, &b);                                                     \
            CHECK(C##_fp12_eq(&x, &a));                                                   \
            C##_fp12_neg(&x, &a);                                                         \
            C##_fp12_add(&x, &x, &a);                                                     \
            CHECK(C##_fp12_is_zero(&x));                                                  \
            /* w^2 = v. */                                                                \
            C##_fp12_t w = zero;                                                          \
            C##_fp2_set_one(&w.c1.c0);                                                    \
            C##_fp12_sqr(&x, &w);                                                         \
            CHECK(C##_fp6_eq(&x.c0, &v6) && C##_fp6_is_zero(&x.c1));                      \
            /* Sparse line products against the general product. */                      \
            C##_fp2_t l0 = b.c0.c0, l1 = b.c1.c0, l3 = b.c1.c1, l2 = b.c0.c1;             \
            C##_fp12_t s = zero;                                                          \
            s.c0.c0 = l0;                                                                 \
            s.c1.c0 = l1;                                                                 \
            s.c1.c1 = l3;                                                                 \
            C##_fp12_mul(&x, &a, &s);                                                     \
            C##_fp12_mul_by_034(&y, &a, &l0, &l1, &l3);                                   \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            s = zero;                                                                     \
            s.c0.c0 = l0;                                                                 \
            s.c0.c1 = l2;                                                                 \
            s.c1.c1 = l3;                                                                 \
            C##_fp12_mul(&x, &a, &s);                                                     \
            C##_fp12_mul_by_014(&y, &a, &l0, &l2, &l3);                                   \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            /* Frobenius = x^p, and frob(j) = frob(1)^j. */                               \
            C##_fp12_frob(&x, &a, 1);                                                     \
            C##_fp12_pow_limbs(&y, &a, C##_fp_P.l, NL);                                   \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_frob(&y, &x, 1);                                                     \
            C##_fp12_frob(&z, &a, 2);                                                     \
            CHECK(C##_fp12_eq(&y, &z));                                                   \
            C##_fp12_frob(&y, &y, 1);                                                     \
            C##_fp12_frob(&z, &a, 3);                                                     \
            CHECK(C##_fp12_eq(&y, &z));                                                   \
            C##_fp12_frob(&x, &a, 3); /* p^6 Frobenius = conjugation */                   \
            C##_fp12_frob(&x, &x, 3);                                                     \
            C##_fp12_conj(&y, &a);                                                        \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_frob(&x, &a, 2); /* frob is multiplicative */                        \
            C##_fp12_frob(&y, &b, 2);                                                     \
            C##_fp12_mul(&x, &x, &y);                                                     \
            C##_fp12_mul(&y, &a, &b);                                                     \
            C##_fp12_frob(&y, &y, 2);                                                     \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            /* Cyclotomic subgroup: g = a^((p^6 - 1)(p^2 + 1)). */                        \
            C##_fp12_t g, h;                                                              \
            C##_fp12_inv(&x, &a);                                                         \
            C##_fp12_conj(&g, &a);                                                        \
            C##_fp12_mul(&g, &g, &x);                                                     \
            C##_fp12_frob(&x, &g, 2);                                                     \
            C##_fp12_mul(&g, &g, &x);                                                     \
            C##_fp12_conj(&x, &g);                                                        \
            C##_fp12_mul(&x, &x, &g);                                                     \
            CHECK(C##_fp12_is_one(&x));                                                   \
            C##_fp12_cyc_sqr(&x, &g);                                                     \
            C##_fp12_sqr(&y, &g);                                                         \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            C##_fp12_cyc_sqr(&h, &a); /* not in the subgroup: must differ */              \
            C##_fp12_sqr(&y, &a);                                                         \
            CHECK(!C##_fp12_eq(&h, &y));                                                  \
            uint64_t e = tu_rand64();                                                     \
            C##_fp12_cyc_pow_u64(&x, &g, e);                                              \
            C##_fp12_pow_limbs(&y, &g, &e, 1);                                            \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
            uint64_t e3[3] = {tu_rand64(), tu_rand64(), tu_rand64()};                     \
            C##_fp12_cyc_pow_limbs(&x, &g, e3, 3);                                        \
            C##_fp12_pow_limbs(&y, &g, e3, 3);                                            \
            CHECK(C##_fp12_eq(&x, &y));                                                   \
        }                                                                                 \
        C##_fp12_inv(&x, &zero);                                                          \
        CHECK(C##_fp12_is_zero(&x));                                                      \
        C##_fp12_inv(&x, &one);                                                           \
        CHECK(C##_fp12_is_one(&x));                                                       \
        C##_fp6_inv(&x6, &zero6);                                                         \
        CHECK(C##_fp6_is_zero(&x6));                                                      \
        C##_fp12_cyc_sqr(&x, &one);                                                       \
        CHECK(C##_fp12_is_one(&x));                                                       \
        C##_fp12_cyc_pow_u64(&x, &one, 0);                                                \
        CHECK(C##_fp12_is_one(&x));                                                       \
    }

TOWER_TESTS(bn254)
TOWER_TESTS(bls12_381)

/* The generated NAF of BN254's x, used by the final exponentiation, against the binary x. */
static void test_bn254_x_naf(void)
{
    static const int8_t naf[BN254_X_NAF_LEN] = BN254_X_NAF;
    uint64_t v = 0;
    for (int i = 0; i < BN254_X_NAF_LEN; i++)
        v = 2 * v + (uint64_t)(int64_t)naf[i];
    CHECK(v == BN254_X);
    bn254_fp12_t a, g, x, y;
    rand_bn254_fp12(&a);
    bn254_fp12_inv(&x, &a); /* g = a^((p^6 - 1)(p^2 + 1)), in the cyclotomic subgroup */
    bn254_fp12_conj(&g, &a);
    bn254_fp12_mul(&g, &g, &x);
    bn254_fp12_frob(&x, &g, 2);
    bn254_fp12_mul(&g, &g, &x);
    bn254_fp12_cyc_pow_naf(&x, &g, naf, BN254_X_NAF_LEN);
    bn254_fp12_pow_limbs(&y, &g, (const uint64_t[]){BN254_X}, 1);
    CHECK(bn254_fp12_eq(&x, &y));
}

int main(void)
{
    for (int pass = 0; pass < 2; pass++) {
        cuzk__ff_use_asm = pass ? cuzk_ff_cpu_has_adx() : 0;
        test_bn254();
        test_bls12_381();
        test_bn254_x_naf();
    }
    return tu_finish("tower_test");
}
