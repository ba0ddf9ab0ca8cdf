/*
 * GLV endomorphism and scalar split of G1 (ec/glv.h), checked independently of the constants'
 * generator:
 *  - with GMP: beta is a primitive cube root of unity mod p, lambda one mod r;
 *  - phi(P) = (beta x, y) equals lambda P computed by the Jacobian double-and-add
 *    (mul_limbs), on the generator and random multiples of it;
 *  - the split k = s1 k1 + s2 k2 lambda (mod r) holds in GMP with |k1|, |k2| < 2^BITS, for
 *    edge scalars (0, 1, 2, lambda and its neighbours, r - 1, r - 2, r - lambda, r / 2,
 *    powers of two around 2^128) and random ones, scalars just below r included;
 *  - at the point level, k P = k1 (s1 P) + k2 (s2 phi(P)).
 */
#include <gmp.h>
#include <string.h>

#include "ec/ec.h"
#include "ec/glv.h"
#include "testutil.h"

static void to_mpz(mpz_t z, const uint64_t *l, int n)
{
    mpz_import(z, (size_t)n, -1, 8, 0, 0, l);
}

static void from_mpz(uint64_t l[4], const mpz_t z)
{
    memset(l, 0, 32);
    mpz_export(l, NULL, -1, 8, 0, 0, z);
}

static void check_split(const cuzk__glv_consts *gc, const mpz_t r, const mpz_t lam,
                        const mpz_t k, const char *curve)
{
    uint64_t kl[4], k1[4], k2[4];
    int n1, n2;
    from_mpz(kl, k);
    cuzk__glv_split(gc, kl, k1, &n1, k2, &n2);
    mpz_t a, b, t;
    mpz_inits(a, b, t, NULL);
    to_mpz(a, k1, 4);
    to_mpz(b, k2, 4);
    CHECK_MSG(mpz_sizeinbase(a, 2) <= gc->bits && mpz_sizeinbase(b, 2) <= gc->bits,
              "%s: split of %s too long", curve, mpz_get_str(NULL, 16, k));
    if (n1)
        mpz_neg(a, a);
    if (n2)
        mpz_neg(b, b);
    mpz_mul(t, b, lam);
    mpz_add(t, t, a);
    mpz_sub(t, t, k);
    mpz_mod(t, t, r);
    CHECK_MSG(mpz_sgn(t) == 0, "%s: k1 + k2 lambda != k for k = %s", curve,
              mpz_get_str(NULL, 16, k));
    mpz_clears(a, b, t, NULL);
}

#define GLV_TESTS(C, FP, NFP, FPP, FRP, LAMBDA, GC)                                     \
    static void test_##C(void)                                                            \
    {                                                                                     \
        static const uint64_t rl[4] = FRP, laml[4] = LAMBDA;                              \
        static const uint64_t pl[NFP] = FPP;                                              \
        mpz_t p, r, lam, beta, t, k;                                                      \
        mpz_inits(p, r, lam, beta, t, k, NULL);                                           \
        to_mpz(p, pl, NFP);                                                               \
        to_mpz(r, rl, 4);                                                                 \
        to_mpz(lam, laml, 4);                                                             \
        /* beta from phi(G): x(phi(G)) / x(G) in GMP */                                  \
        C##_g1_affine g = C##_g1_GEN, pg;                                                 \
        C##_g1_affine_endo(&pg, &g);                                                      \
        uint64_t xl[NFP], pxl[NFP];                                                       \
        FP##_to_canonical(xl, &g.x);                                                      \
        FP##_to_canonical(pxl, &pg.x);                                                    \
        to_mpz(t, xl, NFP);                                                               \
        mpz_invert(t, t, p);                                                              \
        to_mpz(beta, pxl, NFP);                                                           \
        mpz_mul(beta, beta, t);                                                           \
        mpz_mod(beta, beta, p);                                                           \
        CHECK(mpz_cmp_ui(beta, 1) != 0);                                                  \
        mpz_powm_ui(t, beta, 3, p);                                                       \
        CHECK_MSG(mpz_cmp_ui(t, 1) == 0, #C ": beta^3 != 1");                             \
        CHECK(mpz_cmp_ui(lam, 1) != 0 && mpz_cmp(lam, r) < 0);                            \
        mpz_powm_ui(t, lam, 3, r);                                                        \
        CHECK_MSG(mpz_cmp_ui(t, 1) == 0, #C ": lambda^3 != 1");                           \
        /* phi(P) = lambda P on G and random multiples */                                \
        C##_g1_jac gj, pj, lj, qj;                                                        \
        C##_g1_from_affine(&gj, &g);                                                      \
        for (int it = 0; it < 8; it++) {                                                  \
            C##_g1_affine pa, pe;                                                         \
            uint64_t s = it ? tu_rand64() : 1;                                            \
            C##_g1_mul_limbs(&pj, &gj, &s, 1);                                            \
            C##_g1_to_affine(&pa, &pj);                                                   \
            C##_g1_affine_endo(&pe, &pa);                                                 \
            C##_g1_mul_limbs(&lj, &pj, laml, 4);                                          \
            C##_g1_from_affine(&qj, &pe);                                                 \
            CHECK_MSG(C##_g1_eq(&lj, &qj), #C ": phi(P) != lambda P (it %d)", it);        \
        }                                                                                 \
        C##_g1_affine inf;                                                                \
        C##_g1_affine_set_inf(&inf);                                                      \
        C##_g1_affine_endo(&inf, &inf);                                                   \
        CHECK(C##_g1_affine_is_inf(&inf));                                                \
        /* split edge values */                                                           \
        const long deltas[] = {0, 1, -1, 2};                                              \
        for (int i = 0; i < 4; i++) {                                                     \
            mpz_set_si(k, deltas[i] >= 0 ? deltas[i] : 0);                                \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_add_ui(k, lam, 0); /* lambda + d */                                      \
            if (deltas[i] >= 0)                                                           \
                mpz_add_ui(k, k, (unsigned long)deltas[i]);                               \
            else                                                                          \
                mpz_sub_ui(k, k, (unsigned long)-deltas[i]);                              \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_sub_ui(k, r, (unsigned long)(i + 1)); /* r - 1 .. r - 4 */               \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_sub(k, r, lam); /* r - lambda + d */                                      \
            mpz_add_ui(k, k, (unsigned long)i);                                           \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_ui_pow_ui(k, 2, 127 + (unsigned long)i); /* 2^127 .. 2^130 and -1 */     \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_sub_ui(k, k, 1);                                                          \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_fdiv_q_ui(k, r, 2); /* r / 2 + d */                                       \
            mpz_add_ui(k, k, (unsigned long)i);                                           \
            check_split(&GC, r, lam, k, #C);                                              \
            mpz_mul(k, lam, lam); /* lambda^2 = -lambda - 1 mod r, and neighbours */      \
            mpz_add_ui(k, k, (unsigned long)i);                                           \
            mpz_mod(k, k, r);                                                             \
            check_split(&GC, r, lam, k, #C);                                              \
        }                                                                                 \
        /* random scalars, and random ones just below r */                               \
        for (int it = 0; it < 20000; it++) {                                              \
            uint64_t kl[4];                                                               \
            tu_rand_bytes(kl, 32);                                                        \
            to_mpz(k, kl, 4);                                                             \
            if (it % 4 == 3) {                                                            \
                mpz_fdiv_r_2exp(k, k, 64);                                                \
                mpz_sub(k, r, k);                                                         \
                mpz_sub_ui(k, k, 1);                                                      \
            }                                                                             \
            mpz_mod(k, k, r);                                                             \
            check_split(&GC, r, lam, k, #C);                                              \
        }                                                                                 \
        /* point level: k P = k1 (s1 P) + k2 (s2 phi(P)) */                              \
        for (int it = 0; it < 6; it++) {                                                  \
            uint64_t kl[4], k1[4], k2[4], s = tu_rand64();                                \
            int n1, n2;                                                                   \
            tu_rand_bytes(kl, 32);                                                        \
            to_mpz(k, kl, 4);                                                             \
            mpz_mod(k, k, r);                                                             \
            from_mpz(kl, k);                                                              \
            C##_g1_affine pa, pe;                                                         \
            C##_g1_mul_limbs(&pj, &gj, &s, 1);                                            \
            C##_g1_to_affine(&pa, &pj);                                                   \
            C##_g1_affine_endo(&pe, &pa);                                                 \
            cuzk__glv_split(&GC, kl, k1, &n1, k2, &n2);                                   \
            if (n1)                                                                       \
                C##_g1_affine_neg(&pa, &pa);                                              \
            if (n2)                                                                       \
                C##_g1_affine_neg(&pe, &pe);                                              \
            C##_g1_jac a1, a2, ref;                                                       \
            C##_g1_from_affine(&a1, &pa);                                                 \
            C##_g1_from_affine(&a2, &pe);                                                 \
            C##_g1_mul_limbs(&a1, &a1, k1, 4);                                            \
            C##_g1_mul_limbs(&a2, &a2, k2, 4);                                            \
            C##_g1_add(&a1, &a1, &a2);                                                    \
            C##_g1_mul_limbs(&ref, &pj, kl, 4);                                           \
            CHECK_MSG(C##_g1_eq(&a1, &ref), #C ": k P != k1 P + k2 phi(P) (it %d)", it);  \
        }                                                                                 \
        mpz_clears(p, r, lam, beta, t, k, NULL);                                          \
    }

GLV_TESTS(bn254, bn254_fp, 4, BN254_FP_P, BN254_FR_P, BN254_GLV_LAMBDA, cuzk__glv_bn254)
GLV_TESTS(bls12_381, bls12_381_fp, 6, BLS12_381_FP_P, BLS12_381_FR_P, BLS12_381_GLV_LAMBDA,
          cuzk__glv_bls12_381)

int main(void)
{
    cuzk_ff_init();
    test_bn254();
    test_bls12_381();
    return tu_finish("glv_test");
}
