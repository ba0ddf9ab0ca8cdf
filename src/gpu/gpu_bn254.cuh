/* Field configurations of bn254 for the device code (included by gpu_bn254_*.cu). */
#ifndef CUZK_GPU_BN254_CUH
#define CUZK_GPU_BN254_CUH

#include "ff/ff_params.h"
#include "gpu/gpu_impl.cuh"

namespace {
__constant__ uint64_t fp_p[4] = BN254_FP_P;
constexpr uint64_t fp_p_h[4] = BN254_FP_P;
__constant__ uint64_t fp_p2[4] = { /* 2p */
    fp_p_h[0] << 1,
    (fp_p_h[1] << 1) | (fp_p_h[0] >> 63),
    (fp_p_h[2] << 1) | (fp_p_h[1] >> 63),
    (fp_p_h[3] << 1) | (fp_p_h[2] >> 63),
};
__constant__ uint64_t fp_one[4] = BN254_FP_ONE;
__constant__ uint64_t fr_p[4] = BN254_FR_P;
constexpr uint64_t fr_p_h[4] = BN254_FR_P;
__constant__ uint64_t fr_p2[4] = { /* 2r */
    fr_p_h[0] << 1,
    (fr_p_h[1] << 1) | (fr_p_h[0] >> 63),
    (fr_p_h[2] << 1) | (fr_p_h[1] >> 63),
    (fr_p_h[3] << 1) | (fr_p_h[2] >> 63),
};
__constant__ uint64_t fr_one[4] = BN254_FR_ONE;

/* Limb i (32-bit) of a 64-bit-limb constant: the low word of each 64-bit limb comes first. */
#define LIMB32(arr, i) ((uint32_t)((arr)[(i) >> 1] >> (((i)&1) * 32)))

struct FP {
    static constexpr int N = 8;
    static constexpr uint32_t n0 = (uint32_t)BN254_FP_N0;
    static constexpr bool p5_fits = true; /* 5p < 2^256 (field.cuh, p5_of) */
    static __device__ __forceinline__ uint32_t p(int i) { return LIMB32(fp_p, i); }
    static __device__ __forceinline__ uint32_t one(int i) { return LIMB32(fp_one, i); }
};
/* field.cuh's sums of two products with one reduction (dual_ok) and the squaring rows need
 * 5p < 2^256 (p5_fits); its Fp2 product takes them for every 8-limb field. */
static_assert(5 * ((fp_p_h[3] >> 32) + 1) <= (1ull << 32), "BN254 p < 2^256 / 5");
static_assert(5 * ((fr_p_h[3] >> 32) + 1) <= (1ull << 32), "BN254 r < 2^256 / 5");
/* Fp with elements kept in [0, 2p) (field.cuh, `lazy`): the G1 MSM's field. */
struct FPL : FP {
    static constexpr bool lazy = true;
    static __device__ __forceinline__ uint32_t p2(int i) { return LIMB32(fp_p2, i); }
};
struct FRL;
struct FR {
    static constexpr int N = 8;
    static constexpr uint32_t n0 = (uint32_t)BN254_FR_N0;
    static constexpr bool p5_fits = true; /* 5r < 2^256 */
    static __device__ __forceinline__ uint32_t p(int i) { return LIMB32(fr_p, i); }
    static __device__ __forceinline__ uint32_t one(int i) { return LIMB32(fr_one, i); }
    typedef FRL ntt_rep; /* the NTT passes' field (ntt_kernels.cuh, ntt_rep_of) */
};
/* Fr with elements kept in [0, 2r): the NTT passes' field (ntt_rep_of); `harvey`: their
 * butterflies store sums and differences below 4r unreduced (ntt_kernels.cuh, hv_red), which
 * needs 4r < 2^256. */
static_assert(fr_p_h[3] < (1ull << 62), "BN254 r < 2^254: 4r fits 256 bits");
struct FRL : FR {
    static constexpr bool lazy = true;
    static constexpr bool harvey = true;
    static __device__ __forceinline__ uint32_t p2(int i) { return LIMB32(fr_p2, i); }
};
} // namespace

#define CURVE_ID 0
#define SCALAR_BITS 254

#endif
