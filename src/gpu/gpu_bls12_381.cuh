/* Field configurations of bls12_381 for the device code (included by gpu_bls12_381_*.cu). */
#ifndef CUZK_GPU_BLS12_381_CUH
#define CUZK_GPU_BLS12_381_CUH

#include "ff/ff_params.h"
#include "gpu/gpu_impl.cuh"

namespace {
__constant__ uint64_t fp_p[6] = BLS12_381_FP_P;
constexpr uint64_t fp_p_h[6] = BLS12_381_FP_P;
__constant__ uint64_t fp_p2[6] = { /* 2p */
    fp_p_h[0] << 1,
    (fp_p_h[1] << 1) | (fp_p_h[0] >> 63),
    (fp_p_h[2] << 1) | (fp_p_h[1] >> 63),
    (fp_p_h[3] << 1) | (fp_p_h[2] >> 63),
    (fp_p_h[4] << 1) | (fp_p_h[3] >> 63),
    (fp_p_h[5] << 1) | (fp_p_h[4] >> 63),
};
__constant__ uint64_t fp_one[6] = BLS12_381_FP_ONE;
__constant__ uint64_t fr_p[4] = BLS12_381_FR_P;
__constant__ uint64_t fr_one[4] = BLS12_381_FR_ONE;

/* Limb i (32-bit) of a 64-bit-limb constant: the low word of each 64-bit limb comes first. */
#define LIMB32(arr, i) ((uint32_t)((arr)[(i) >> 1] >> (((i)&1) * 32)))

/* 5p < 2^384 (field.cuh, p5_of; its squaring rows and dual sums are for 8 limbs only). */
static_assert(5 * ((fp_p_h[5] >> 32) + 1) <= (1ull << 32), "BLS12-381 p < 2^384 / 5");
struct FP {
    static constexpr int N = 12;
    static constexpr uint32_t n0 = (uint32_t)BLS12_381_FP_N0;
    static constexpr bool p5_fits = true;
    static __device__ __forceinline__ uint32_t p(int i) { return LIMB32(fp_p, i); }
    static __device__ __forceinline__ uint32_t one(int i) { return LIMB32(fp_one, i); }
};
/* Fp with elements kept in [0, 2p) (field.cuh, `lazy`): the G1 MSM's field. */
struct FPL : FP {
    static constexpr bool lazy = true;
    static __device__ __forceinline__ uint32_t p2(int i) { return LIMB32(fp_p2, i); }
};
/* r = 2^64 - 2^32 + 1 mod 2^64: its Montgomery reduction with adds for m p_0 and m p_1
 * (field.cuh, low64_1). */
constexpr uint64_t fr_p_h[4] = BLS12_381_FR_P;
static_assert(fr_p_h[0] == 0xffffffff00000001ull && (uint32_t)BLS12_381_FR_N0 == 0xffffffffu,
              "BLS12-381 r mod 2^64 is 2^64 - 2^32 + 1");
__constant__ uint64_t fr_p2[4] = { /* 2r (< 2^256) */
    fr_p_h[0] << 1,
    (fr_p_h[1] << 1) | (fr_p_h[0] >> 63),
    (fr_p_h[2] << 1) | (fr_p_h[1] >> 63),
    (fr_p_h[3] << 1) | (fr_p_h[2] >> 63),
};
static_assert((fr_p_h[3] >> 63) == 0, "2r fits 256 bits");
/* 5r > 2^256: no squaring rows or dual sums in Fr (FR declares no p5_fits; field.cuh p5_ok). */
static_assert(5 * ((fr_p_h[3] >> 32) + 1) > (1ull << 32), "BLS12-381 r > 2^256 / 5");
struct FRL;
struct FR {
    static constexpr int N = 8;
    static constexpr uint32_t n0 = (uint32_t)BLS12_381_FR_N0;
    static constexpr bool low64_1 = true;
    static __device__ __forceinline__ uint32_t p(int i) { return LIMB32(fr_p, i); }
    static __device__ __forceinline__ uint32_t one(int i) { return LIMB32(fr_one, i); }
    typedef FRL ntt_rep; /* the NTT passes compute in [0, 2r) (ntt_kernels.cuh, ntt_rep_of) */
};
/* Fr with elements kept in [0, 2r): the NTT passes' field only (r > R/4: a product of two
 * such elements would not fit; ntt_rep_of says why the passes' products do). */
struct FRL : FR {
    static constexpr bool lazy = true;
    static __device__ __forceinline__ uint32_t p2(int i) { return LIMB32(fr_p2, i); }
};
} // namespace

#define CURVE_ID 1
#define SCALAR_BITS 255

#endif
