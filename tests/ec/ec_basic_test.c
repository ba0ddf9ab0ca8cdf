/* Group laws of the curve template on all four groups: generator on curve, r*G = O,
 * (a+b)G = aG + bG, mixed and full addition agree, doubling = self-addition, batch
 * normalisation equals single normalisation. */
#include "ec/ec.h"
#include "testutil.h"

static const uint64_t BN254_R[4] = BN254_FR_P;
static const uint64_t BLS_R[4] = BLS12_381_FR_P;

#define GROUP_LAWS(G, RR)                                                                 \
    do {                                                                                  \
        G##_jac g, a, b, c, d, inf;                                                       \
        G##_from_affine(&g, &G##_GEN);                                                    \
        CHECK(G##_affine_is_on_curve(&G##_GEN));                                          \
        CHECK(G##_is_on_curve(&g));                                                       \
        G##_mul_limbs(&a, &g, RR, 4);                                                     \
        CHECK(G##_is_inf(&a));                                                            \
        for (int it = 0; it < 8; it++) {                                                  \
            uint64_t x = tu_rand64() >> 1, y = tu_rand64() >> 1, s = x + y;              \
            G##_mul_limbs(&a, &g, &x, 1);                                                 \
            G##_mul_limbs(&b, &g, &y, 1);                                                 \
            G##_mul_limbs(&c, &g, &s, 1);                                                 \
            G##_add(&d, &a, &b);                                                          \
            CHECK(G##_eq(&c, &d));                                                        \
            CHECK(G##_is_on_curve(&d));                                                   \
            G##_affine ba;                                                                \
            G##_to_affine(&ba, &b);                                                       \
            G##_add_affine(&d, &a, &ba);                                                  \
            CHECK(G##_eq(&c, &d));                                                        \
            G##_dbl(&d, &a);                                                              \
            G##_add(&c, &a, &a);                                                          \
            CHECK(G##_eq(&c, &d));                                                        \
            G##_neg(&c, &a);                                                              \
            G##_add(&d, &a, &c);                                                          \
            CHECK(G##_is_inf(&d));                                                        \
        }                                                                                 \
        G##_set_inf(&inf);                                                                \
        G##_add(&d, &inf, &g);                                                            \
        CHECK(G##_eq(&d, &g));                                                            \
        G##_jac pts[5];                                                                   \
        G##_affine aff[5], one;                                                           \
        pts[0] = g;                                                                       \
        G##_dbl(&pts[1], &g);                                                             \
        G##_set_inf(&pts[2]);                                                             \
        G##_add(&pts[3], &pts[1], &g);                                                    \
        G##_dbl(&pts[4], &pts[3]);                                                        \
        __typeof__(g.X) scratch[5];                                                       \
        G##_batch_to_affine(aff, pts, 5, scratch);                                        \
        for (int i = 0; i < 5; i++) {                                                     \
            G##_to_affine(&one, &pts[i]);                                                 \
            CHECK(G##_affine_eq(&one, &aff[i]));                                          \
            CHECK(G##_affine_is_on_curve(&aff[i]));                                       \
        }                                                                                 \
        CHECK(G##_affine_is_inf(&aff[2]));                                                \
    } while (0)

int main(void)
{
    for (int pass = 0; pass < 2; pass++) {
        cuzk__ff_use_asm = pass ? cuzk_ff_cpu_has_adx() : 0;
        GROUP_LAWS(bn254_g1, BN254_R);
        GROUP_LAWS(bn254_g2, BN254_R);
        GROUP_LAWS(bls12_381_g1, BLS_R);
        GROUP_LAWS(bls12_381_g2, BLS_R);
    }
    return tu_finish("ec_basic");
}
