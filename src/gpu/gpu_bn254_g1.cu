/* bn254 G1 MSM on the device. */
#include "gpu/gpu_bn254.cuh"

CUZK_GPU_MSM_TU(cuzk__gpu_bn254_g1, cuzk_gpu::fe<FPL>, FR, SCALAR_BITS)
