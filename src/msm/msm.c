/* Instantiates the Pippenger MSM (msm_tmpl.h) for the four groups. */
#include "msm/msm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ec/xyzz.h"
#include "util/parallel.h"

#define MSM_G bn254_g1
#define MSM_F bn254_fp
#define MSM_FR bn254_fr
#define MSM_NBITS 254
#define MSM_RLIMBS BN254_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bn254_g2
#define MSM_F bn254_fp2
#define MSM_FR bn254_fr
#define MSM_NBITS 254
#define MSM_RLIMBS BN254_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bls12_381_g1
#define MSM_F bls12_381_fp
#define MSM_FR bls12_381_fr
#define MSM_NBITS 255
#define MSM_RLIMBS BLS12_381_FR_P
#include "msm/msm_tmpl.h"

#define MSM_G bls12_381_g2
#define MSM_F bls12_381_fp2
#define MSM_FR bls12_381_fr
#define MSM_NBITS 255
#define MSM_RLIMBS BLS12_381_FR_P
#include "msm/msm_tmpl.h"
