/* bn254 fixed-base multiplication k_i G on the device (the test setup's key points). */
#include "ec/ec_params.h"
#include "gpu/gpu_bn254.cuh"
#include "gpu/fixed_base.cuh"

CUZK_GPU_FB_TU(bn254, cuzk_gpu::fe<FPL>, cuzk_gpu::fe2<FP>, FR, BN254_G1_GEN_X, BN254_G1_GEN_Y,
               BN254_G2_GEN_X, BN254_G2_GEN_Y)
