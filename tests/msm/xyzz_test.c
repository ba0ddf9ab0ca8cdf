/* XYZZ coordinates (ec/xyzz.h) against the Jacobian group law of ec_tmpl.h on all four groups:
 * mixed add, add, double, the equal-point and inverse-point cases, infinity on either side,
 * conversions to Jacobian and affine, aliasing of output and input. */
#include "ec/xyzz.h"
#include "testutil.h"

#define XYZZ_LAWS(G)                                                                      \
    do {                                                                                  \
        G##_jac g, pj, qj, sj, tj;                                                        \
        G##_from_affine(&g, &G##_GEN);                                                    \
        for (int it = 0; it < 10; it++) {                                                 \
            uint64_t x = tu_rand64() | 1, y = tu_rand64() | 1;                           \
            G##_mul_limbs(&pj, &g, &x, 1);                                                \
            G##_mul_limbs(&qj, &g, &y, 1);                                                \
            G##_affine pa, qa, ra;                                                        \
            G##_to_affine(&pa, &pj);                                                      \
            G##_to_affine(&qa, &qj);                                                      \
            G##_xyzz p, q, r, s;                                                          \
            G##_xyzz_from_jac(&p, &pj); /* non-trivial ZZ */                              \
            G##_xyzz_from_affine(&q, &qa);                                                \
            G##_add(&sj, &pj, &qj);                                                       \
            G##_xyzz_add_affine(&r, &p, &qa);                                             \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            CHECK(G##_is_on_curve(&tj));                                                  \
            s = p;                                                                        \
            G##_xyzz_add_affine(&s, &s, &qa); /* aliasing */                              \
            G##_xyzz_to_jac(&tj, &s);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            G##_xyzz_add(&r, &p, &q);                                                     \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            G##_xyzz_add(&r, &r, &p); /* general add with two non-trivial ZZ */           \
            G##_add(&sj, &sj, &pj);                                                       \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            G##_xyzz_to_affine(&ra, &r);                                                  \
            G##_affine sa;                                                                \
            G##_to_affine(&sa, &sj);                                                      \
            CHECK(G##_affine_eq(&ra, &sa));                                               \
            /* doubling: dbl, add(p, p), madd(p, p_affine) */                             \
            G##_dbl(&sj, &pj);                                                            \
            G##_xyzz_dbl(&r, &p);                                                         \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            G##_xyzz_add(&r, &p, &p);                                                     \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            G##_xyzz_add_affine(&r, &p, &pa);                                             \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&sj, &tj));                                                      \
            /* inverse: p + (-p) = O, via madd, sub_affine and add */                     \
            G##_affine na;                                                                \
            G##_affine_neg(&na, &pa);                                                     \
            G##_xyzz_add_affine(&r, &p, &na);                                             \
            CHECK(G##_xyzz_is_inf(&r));                                                   \
            G##_xyzz_sub_affine(&r, &p, &pa);                                             \
            CHECK(G##_xyzz_is_inf(&r));                                                   \
            G##_xyzz_from_affine(&s, &na);                                                \
            G##_xyzz_add(&r, &p, &s);                                                     \
            CHECK(G##_xyzz_is_inf(&r));                                                   \
            /* infinity on either side */                                                 \
            G##_xyzz inf;                                                                 \
            G##_affine ainf;                                                              \
            G##_xyzz_set_inf(&inf);                                                       \
            G##_affine_set_inf(&ainf);                                                    \
            G##_xyzz_add_affine(&r, &inf, &pa);                                           \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&pj, &tj));                                                      \
            G##_xyzz_add_affine(&r, &p, &ainf);                                           \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&pj, &tj));                                                      \
            G##_xyzz_add(&r, &inf, &p);                                                   \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&pj, &tj));                                                      \
            G##_xyzz_add(&r, &p, &inf);                                                   \
            G##_xyzz_to_jac(&tj, &r);                                                     \
            CHECK(G##_eq(&pj, &tj));                                                      \
            G##_xyzz_dbl(&r, &inf);                                                       \
            CHECK(G##_xyzz_is_inf(&r));                                                   \
            G##_xyzz_add_affine(&r, &inf, &ainf);                                         \
            CHECK(G##_xyzz_is_inf(&r));                                                   \
            G##_xyzz_to_affine(&ra, &inf);                                                \
            CHECK(G##_affine_is_inf(&ra));                                                \
            G##_xyzz_to_jac(&tj, &inf);                                                   \
            CHECK(G##_is_inf(&tj));                                                       \
        }                                                                                 \
    } while (0)

int main(void)
{
    for (int pass = 0; pass < 2; pass++) {
        cuzk__ff_use_asm = pass ? cuzk_ff_cpu_has_adx() : 0;
        XYZZ_LAWS(bn254_g1);
        XYZZ_LAWS(bn254_g2);
        XYZZ_LAWS(bls12_381_g1);
        XYZZ_LAWS(bls12_381_g2);
    }
    return tu_finish("xyzz_test");
}
