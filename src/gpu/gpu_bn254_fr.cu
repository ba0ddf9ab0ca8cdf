/* bn254 Fr NTT and the H step on the device. */
#include "gpu/gpu_bn254.cuh"

CUZK_GPU_FR_TU(cuzk__gpu_bn254_fr, CURVE_ID, FR)
