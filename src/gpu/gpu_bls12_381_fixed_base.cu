/* bls12_381 fixed-base multiplication k_i G on the device (the test setup's key points). */
#include "ec/ec_params.h"
#include "gpu/gpu_bls12_381.cuh"
#include "gpu/fixed_base.cuh"

CUZK_GPU_FB_TU(bls12_381, cuzk_gpu::fe<FPL>, cuzk_gpu::fe2<FP>, FR, BLS12_381_G1_GEN_X,
               BLS12_381_G1_GEN_Y, BLS12_381_G2_GEN_X, BLS12_381_G2_GEN_Y)
