/*
 * GLV endomorphism of G1 for BN254 and BLS12-381 (Gallant, Lambert, Vanstone, CRYPTO 2001):
 * phi(x, y) = (beta x, y) equals lambda (x, y) for every point of G1, beta a cube root of
 * unity in Fp and lambda one in Fr. A scalar k < r splits as k = k1 + k2 lambda (mod r) with
 * |k1|, |k2| < 2^NAME_GLV_BITS (128 or 129), so k P = k1 P + k2 phi(P): half-length scalars
 * for twice the points. The constants and the proof of the bound are in
 * scripts/gen-constants.py (--glv > src/ec/glv_params.h).
 */
#ifndef CUZK_GLV_H
#define CUZK_GLV_H

#include <stdint.h>

#include "ec/ec.h"
#include "ec/glv_params.h"

/* Lattice constants of one curve (see gen-constants.py): k1 = k + c1 na1 + c2 na2,
 * k2 = c1 nb1 + c2 nb2 modulo 2^256, c_i = floor(k g_i / 2^256). */
typedef struct {
    uint64_t g1[4], g2[4], na1[4], na2[4], nb1[4], nb2[4];
    unsigned bits;
} cuzk__glv_consts;

extern const cuzk__glv_consts cuzk__glv_bn254, cuzk__glv_bls12_381;

/* k (4 little-endian limbs, k < r) -> magnitudes k1, k2 (4 limbs, < 2^bits) and signs
 * (1: negative) with k = s1 k1 + s2 k2 lambda (mod r). */
void cuzk__glv_split(const cuzk__glv_consts *gc, const uint64_t k[4], uint64_t k1[4], int *neg1,
                     uint64_t k2[4], int *neg2);

/* r = phi(p) = (beta x, y); infinity maps to infinity. r may alias p. */
static inline void bn254_g1_affine_endo(bn254_g1_affine *r, const bn254_g1_affine *p)
{
    static const bn254_fp_t beta = BN254_G1_BETA;
    bn254_fp_mul(&r->x, &p->x, &beta);
    r->y = p->y;
}

static inline void bls12_381_g1_affine_endo(bls12_381_g1_affine *r, const bls12_381_g1_affine *p)
{
    static const bls12_381_fp_t beta = BLS12_381_G1_BETA;
    bls12_381_fp_mul(&r->x, &p->x, &beta);
    r->y = p->y;
}

#endif
