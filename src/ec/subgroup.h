/*
 * Prime-order subgroup membership for G1 and G2 of BN254 and BLS12-381.
 *
 * Precondition for all of them: the point is on the curve (affine_is_on_curve). The point at
 * infinity is in every subgroup. Results are 1 (member) or 0.
 *
 *   NAME_in_subgroup        the fast test used by the decoders
 *   NAME_in_subgroup_naive  r * P == O, the definition; slow (a full-length scalar
 *                           multiplication), kept as the reference the fast tests are checked
 *                           against
 */
#ifndef CUZK_EC_SUBGROUP_H
#define CUZK_EC_SUBGROUP_H

#include "ec/ec.h"

int bn254_g1_in_subgroup(const bn254_g1_affine *p);
int bn254_g2_in_subgroup(const bn254_g2_affine *p);
int bls12_381_g1_in_subgroup(const bls12_381_g1_affine *p);
int bls12_381_g2_in_subgroup(const bls12_381_g2_affine *p);

int bn254_g1_in_subgroup_naive(const bn254_g1_affine *p);
int bn254_g2_in_subgroup_naive(const bn254_g2_affine *p);
int bls12_381_g1_in_subgroup_naive(const bls12_381_g1_affine *p);
int bls12_381_g2_in_subgroup_naive(const bls12_381_g2_affine *p);

/* The endomorphisms behind the fast tests, exposed for the tests:
 * phi(x, y) = (beta x, y) on BLS12-381 G1, beta a primitive cube root of unity in Fp;
 * psi(x, y) = (conj(x) cx, conj(y) cy) on BLS12-381 G2 (untwist-Frobenius-twist, Galbraith
 * and Scott, "Exponentiation in pairing-friendly groups using homomorphisms", 2008). */
void bls12_381_g1_phi(bls12_381_g1_jac *r, const bls12_381_g1_jac *p);
void bls12_381_g2_psi(bls12_381_g2_jac *r, const bls12_381_g2_jac *p);
/* psi(x, y) = (conj(x) gx, conj(y) gy) on BN254 G2 (D-type twist). */
void bn254_g2_psi(bn254_g2_jac *r, const bn254_g2_jac *p);

#endif
