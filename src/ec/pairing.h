/* Optimal ate pairing and multi-pairing check for BN254 and BLS12-381 (pairing_tmpl.h):
 * bn254_pairing, bn254_multi_pairing, bn254_multi_pairing_is_one, bn254_miller_loop,
 * bn254_final_exp, bn254_final_exp_plain, and the same with the bls12_381_ prefix.
 * bn254_pairing(P, Q) is e(P, Q)^m for a fixed m coprime to r (m = 2x(6x^2 + 3x + 1) for BN254,
 * 3 for BLS12-381; the value @noble/curves returns); final_exp_plain gives e(P, Q) itself.
 * Inputs must be in the prime-order subgroups (checked by the caller); (0, 0) is infinity. */
#ifndef CUZK_PAIRING_H
#define CUZK_PAIRING_H

#include <stddef.h>
#include <stdint.h>

#include "ec/ec.h"
#include "ff/tower.h"

#define PR_NAME bn254
#define PR_UPPER BN254
#define PR_BN 1
#include "ec/pairing_tmpl.h"

#define PR_NAME bls12_381
#define PR_UPPER BLS12_381
#define PR_BN 0
#include "ec/pairing_tmpl.h"

#endif
