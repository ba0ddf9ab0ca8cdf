/* bls12_381 G1 MSM on the device. */
#include "gpu/gpu_bls12_381.cuh"

CUZK_GPU_MSM_TU(cuzk__gpu_bls12_381_g1, cuzk_gpu::fe<FPL>, FR, SCALAR_BITS)
