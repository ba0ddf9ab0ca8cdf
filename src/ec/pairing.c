/* Instantiates the pairing template (pairing_tmpl.h) for BN254 and BLS12-381. */
#include "ec/ec.h"
#include "ff/tower.h"

#define PAIRING_IMPL 1

#define PR_NAME bn254
#define PR_UPPER BN254
#define PR_BN 1
#include "ec/pairing_tmpl.h"

#define PR_NAME bls12_381
#define PR_UPPER BLS12_381
#define PR_BN 0
#include "ec/pairing_tmpl.h"
