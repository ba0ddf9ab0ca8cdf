/* The CPU's k G (src/ec: double-and-add, the setup's header points) in the key's byte layout,
 * the reference of tests/gpu/fixed_base_emu.cpp. */
#include <string.h>

#include "ec/ec.h"

#define REF(G)                                                                               \
    static void G##_ref(const uint64_t k[4], uint8_t *out)                                   \
    {                                                                                        \
        G##_jac g, r;                                                                        \
        G##_affine a;                                                                        \
        G##_from_affine(&g, &G##_GEN);                                                       \
        G##_mul_limbs(&r, &g, k, 4);                                                         \
        if (G##_is_inf(&r)) {                                                                \
            memset(out, 0, sizeof a);                                                        \
            return;                                                                          \
        }                                                                                    \
        G##_to_affine(&a, &r);                                                               \
        memcpy(out, &a, sizeof a);                                                           \
    }
REF(bn254_g1)
REF(bn254_g2)
REF(bls12_381_g1)
REF(bls12_381_g2)

/* curve 0 BN254, 1 BLS12-381; g 1 or 2. */
void fb_ref(int curve, int g, const uint64_t k[4], uint8_t *out)
{
    if (curve == 0)
        (g == 1 ? bn254_g1_ref : bn254_g2_ref)(k, out);
    else
        (g == 1 ? bls12_381_g1_ref : bls12_381_g2_ref)(k, out);
}
