/* XYZZ coordinates for G1 and G2 of BN254 and BLS12-381 (xyzz_tmpl.h over ec.h). */
#ifndef CUZK_XYZZ_H
#define CUZK_XYZZ_H

#include "ec/ec.h"

#define XZ_NAME bn254_g1
#define XZ_F bn254_fp
#include "ec/xyzz_tmpl.h"

#define XZ_NAME bn254_g2
#define XZ_F bn254_fp2
#include "ec/xyzz_tmpl.h"

#define XZ_NAME bls12_381_g1
#define XZ_F bls12_381_fp
#include "ec/xyzz_tmpl.h"

#define XZ_NAME bls12_381_g2
#define XZ_F bls12_381_fp2
#include "ec/xyzz_tmpl.h"

#endif
