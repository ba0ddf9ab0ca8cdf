/* bls12_381 Fr NTT and the H step on the device. */
#include "gpu/gpu_bls12_381.cuh"

CUZK_GPU_FR_TU(cuzk__gpu_bls12_381_fr, CURVE_ID, FR)
