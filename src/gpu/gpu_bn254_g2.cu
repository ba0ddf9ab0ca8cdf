/* bn254 G2 MSM on the device. */
#include "gpu/gpu_bn254.cuh"

CUZK_GPU_MSM_TU(cuzk__gpu_bn254_g2, cuzk_gpu::fe2<FP>, FR, SCALAR_BITS)
