/* Point encodings of the four groups (encode.h, encode_tmpl.h). */
#include "ec/encode.h"

#include <stdio.h>
#include <string.h>

#include "ec/subgroup.h"
#include "ff/fp2_sqrt.h"

#define EC_NAME bn254_g1
#define EC_F bn254_fp
#define EC_FB bn254_fp
#define EC_DEG 1
#define EC_NB 32
#define EC_LABEL "bn254 G1"
#define EC_ZCASH 0
#include "ec/encode_tmpl.h"

#define EC_NAME bn254_g2
#define EC_F bn254_fp2
#define EC_FB bn254_fp
#define EC_DEG 2
#define EC_NB 32
#define EC_LABEL "bn254 G2"
#define EC_ZCASH 0
#include "ec/encode_tmpl.h"

#define EC_NAME bls12_381_g1
#define EC_F bls12_381_fp
#define EC_FB bls12_381_fp
#define EC_DEG 1
#define EC_NB 48
#define EC_LABEL "bls12_381 G1"
#define EC_ZCASH 1
#include "ec/encode_tmpl.h"

#define EC_NAME bls12_381_g2
#define EC_F bls12_381_fp2
#define EC_FB bls12_381_fp
#define EC_DEG 2
#define EC_NB 48
#define EC_LABEL "bls12_381 G2"
#define EC_ZCASH 1
#include "ec/encode_tmpl.h"
