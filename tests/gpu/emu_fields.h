/*
 * The four device field configurations (src/gpu/ff/field.cuh's C parameter) for the host
 * emulation tests (field_emu.cpp, msm_emu.cpp): BN254 and BLS12-381 Fp and Fr, their 32-bit
 * limbs read from src/ff's 64-bit constants, as gpu_<curve>.cuh does on the device. Include
 * after gpu/ff/field.cuh with CUZK_GPU_HOST_EMU defined.
 */
#ifndef CUZK_TESTS_GPU_EMU_FIELDS_H
#define CUZK_TESTS_GPU_EMU_FIELDS_H

#include <stdint.h>

#include "ff/ff_params.h"

#define LIMB32(arr, i) ((uint32_t)((arr)[(i) >> 1] >> (((i)&1) * 32)))
static const uint64_t bn_p[4] = BN254_FP_P, bn_one[4] = BN254_FP_ONE;
static const uint64_t bls_p[6] = BLS12_381_FP_P, bls_one[6] = BLS12_381_FP_ONE;
static const uint64_t bnr_p[4] = BN254_FR_P, bnr_one[4] = BN254_FR_ONE;
static const uint64_t blsr_p[4] = BLS12_381_FR_P, blsr_one[4] = BLS12_381_FR_ONE;

#define CFG(name, n, arr, onearr, n0v, p5)                                                   \
    struct name {                                                                            \
        static constexpr int N = n;                                                          \
        static constexpr uint32_t n0 = (uint32_t)(n0v);                                      \
        static constexpr bool p5_fits = p5; /* 5p < 2^(32N): field_emu checks it */          \
        static uint32_t p(int i) { return LIMB32(arr, i); }                                  \
        static uint32_t one(int i) { return LIMB32(onearr, i); }                             \
    };
CFG(BnFp, 8, bn_p, bn_one, BN254_FP_N0, true)
CFG(BlsFp, 12, bls_p, bls_one, BLS12_381_FP_N0, true)
CFG(BnFr, 8, bnr_p, bnr_one, BN254_FR_N0, true)
CFG(BlsFrG, 8, blsr_p, blsr_one, BLS12_381_FR_N0, false)
#undef CFG
/* BLS12-381's r as the device configures it (gpu_bls12_381.cuh): the reduction without
 * multiplications for m p_0 and m p_1 (field.cuh, low64_1); BlsFrG is the generic one. */
struct BlsFr : BlsFrG {
    static constexpr bool low64_1 = true;
};
/* The same field with elements kept in [0, 2p) (field.cuh, `lazy`; the device's G1 field). */
template <class B> struct LazyOf : B {
    static constexpr bool lazy = true;
    static uint32_t p2(int i) { return (B::p(i) << 1) | (i ? B::p(i - 1) >> 31 : 0); }
};
typedef LazyOf<BnFp> BnFpL;
typedef LazyOf<BlsFp> BlsFpL;

#endif
