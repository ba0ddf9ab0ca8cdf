/* Instantiates the NTT (ntt_tmpl.h) for Fr of BN254 and BLS12-381. */
#include "poly/ntt.h"

#include <stdlib.h>
#include <string.h>

#include "util/parallel.h"

#define NTT_F bn254_fr
#define NTT_S BN254_FR_TWO_ADICITY
#define NTT_ROOT BN254_FR_ROOT_OF_UNITY
#define NTT_N0 BN254_FR_N0
#include "poly/ntt_tmpl.h"

#define NTT_F bls12_381_fr
#define NTT_S BLS12_381_FR_TWO_ADICITY
#define NTT_ROOT BLS12_381_FR_ROOT_OF_UNITY
#define NTT_N0 BLS12_381_FR_N0
#include "poly/ntt_tmpl.h"
