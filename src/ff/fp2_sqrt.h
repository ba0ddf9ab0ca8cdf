/*
 * Square roots in Fp2 and the "lexicographically largest" order of ZCash's point encoding,
 * for BN254 and BLS12-381 (instantiated in fp2_sqrt.c from fp2_sqrt_tmpl.h).
 *
 *   NAME_fp2_pow_limbs(r, a, e, n)  r = a^e, e little-endian limbs
 *   NAME_fp2_sqrt(r, a)             0 and r^2 = a when a is a square, -1 otherwise (r untouched)
 *   NAME_fp_is_lex_largest(a)       1 when canonical a > (p-1)/2, i.e. a > -a as integers
 *   NAME_fp2_is_lex_largest(a)      ZCash's order: c1 decides unless it is 0, then c0 decides
 *
 * Nothing here allocates; none of it is constant time (inputs are public points).
 */
#ifndef CUZK_FP2_SQRT_H
#define CUZK_FP2_SQRT_H

#include "ff/ff.h"
#include "ff/fp2.h"

void bn254_fp2_pow_limbs(bn254_fp2_t *r, const bn254_fp2_t *a, const uint64_t *e, int nlimbs);
int bn254_fp2_sqrt(bn254_fp2_t *r, const bn254_fp2_t *a);
int bn254_fp_is_lex_largest(const bn254_fp_t *a);
int bn254_fp2_is_lex_largest(const bn254_fp2_t *a);

void bls12_381_fp2_pow_limbs(bls12_381_fp2_t *r, const bls12_381_fp2_t *a, const uint64_t *e,
                             int nlimbs);
int bls12_381_fp2_sqrt(bls12_381_fp2_t *r, const bls12_381_fp2_t *a);
int bls12_381_fp_is_lex_largest(const bls12_381_fp_t *a);
int bls12_381_fp2_is_lex_largest(const bls12_381_fp2_t *a);

#endif
