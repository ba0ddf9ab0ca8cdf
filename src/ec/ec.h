/* G1 and G2 of BN254 and BLS12-381 (ec_tmpl.h over ff.h / fp2.h). */
#ifndef CUZK_EC_H
#define CUZK_EC_H

#include <stddef.h>

#include "ec/ec_params.h"
#include "ff/ff.h"
#include "ff/fp2.h"

#define EC_NAME bn254_g1
#define EC_F bn254_fp
#define EC_B BN254_G1_B
#define EC_GEN_X BN254_G1_GEN_X
#define EC_GEN_Y BN254_G1_GEN_Y
#include "ec/ec_tmpl.h"

#define EC_NAME bn254_g2
#define EC_F bn254_fp2
#define EC_B BN254_G2_B
#define EC_GEN_X BN254_G2_GEN_X
#define EC_GEN_Y BN254_G2_GEN_Y
#include "ec/ec_tmpl.h"

#define EC_NAME bls12_381_g1
#define EC_F bls12_381_fp
#define EC_B BLS12_381_G1_B
#define EC_GEN_X BLS12_381_G1_GEN_X
#define EC_GEN_Y BLS12_381_G1_GEN_Y
#include "ec/ec_tmpl.h"

#define EC_NAME bls12_381_g2
#define EC_F bls12_381_fp2
#define EC_B BLS12_381_G2_B
#define EC_GEN_X BLS12_381_G2_GEN_X
#define EC_GEN_Y BLS12_381_G2_GEN_Y
#include "ec/ec_tmpl.h"

#endif
