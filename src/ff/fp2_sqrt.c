/* Fp2 square roots and ZCash's lexicographic order for both curves (fp2_sqrt_tmpl.h). */
#include "ff/fp2_sqrt.h"

#define F2_NAME bn254_fp2
#define F2_BASE bn254_fp
#define F2_N 4
#include "ff/fp2_sqrt_tmpl.h"

#define F2_NAME bls12_381_fp2
#define F2_BASE bls12_381_fp
#define F2_N 6
#include "ff/fp2_sqrt_tmpl.h"
