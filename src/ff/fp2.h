/* Fp2 for BN254 and BLS12-381 (fp2_tmpl.h). */
#ifndef CUZK_FP2_H
#define CUZK_FP2_H

#include "ff/ff.h"

#define F2_NAME bn254_fp2
#define F2_BASE bn254_fp
#define F2_XI_C0 9 /* xi = 9 + u, as in scripts/gen-constants.py */
#define F2_ASM_N 4 /* limbs of the base field, for the assembly product */
#define F2_N0 BN254_FP_N0
#include "ff/fp2_tmpl.h"

#define F2_NAME bls12_381_fp2
#define F2_BASE bls12_381_fp
#define F2_XI_C0 1 /* xi = 1 + u */
#define F2_ASM_N 6
#define F2_N0 BLS12_381_FP_N0
#include "ff/fp2_tmpl.h"

#endif
