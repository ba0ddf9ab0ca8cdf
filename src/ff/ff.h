/* The four prime fields of cuzk: Fp and Fr of BN254 and BLS12-381 (see ff_tmpl.h). */
#ifndef CUZK_FF_H
#define CUZK_FF_H

#include <stddef.h>

#define FF_NAME bn254_fp
#define FF_UPPER BN254_FP
#define FF_N 4
#define FF_HAS_SQRT 1
#include "ff/ff_tmpl.h"

#define FF_NAME bn254_fr
#define FF_UPPER BN254_FR
#define FF_N 4
#include "ff/ff_tmpl.h"

#define FF_NAME bls12_381_fp
#define FF_UPPER BLS12_381_FP
#define FF_N 6
#define FF_HAS_SQRT 1
#include "ff/ff_tmpl.h"

#define FF_NAME bls12_381_fr
#define FF_UPPER BLS12_381_FR
#define FF_N 4
#include "ff/ff_tmpl.h"

#endif
