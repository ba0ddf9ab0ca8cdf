/* bls12_381 G2 MSM on the device. */
#include "gpu/gpu_bls12_381.cuh"

CUZK_GPU_MSM_TU(cuzk__gpu_bls12_381_g2, cuzk_gpu::fe2<FP>, FR, SCALAR_BITS)
