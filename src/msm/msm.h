/*
 * Multi-scalar multiplication on the CPU: out = sum_i scalars[i] * points[i] for G1 and G2 of
 * BN254 and BLS12-381 (Pippenger's bucket method, msm_tmpl.h).
 *
 * points:  n affine points in snarkjs's layout (NAME_affine, infinity = (0, 0)).
 * scalars: n 32-byte little-endian values. By default canonical integers < r (what a .wtns
 *          file holds); with CUZK_MSM_SCALARS_MONT, Fr elements in Montgomery form (the raw
 *          limbs of NAME_fr_t, as .zkey files store them).
 * Returns CUZK_OK; CUZK_NON_CANONICAL if some scalar is not below r; CUZK_INVALID_ARGUMENT
 * for n >= 2^32 or NULL pointers with n > 0; CUZK_NO_MEMORY if the scratch cannot be
 * allocated. All scratch is allocated and freed inside the call: index lists (8n bytes), per
 * thread either (up to 2^18 points with scalars other than 0 and 1) a bucket-sorted affine
 * copy of the points of one task plus one field element per two points and 4 bytes per point
 * (T threads: G1 BLS12-381 at n = 2^15 is about 5 MiB per thread) and 8 bytes per bucket,
 * or (larger inputs) 2^(c-1) XYZZ buckets (c the window: G1 BN254 at c = 16 is 4 MiB per
 * thread); a copy of the points whose scalar is 1 (for the batch-affine sum), and 32n bytes
 * for converted scalars with CUZK_MSM_SCALARS_MONT.
 * nthreads = 0 uses cuzk_num_threads().
 */
#ifndef CUZK_MSM_H
#define CUZK_MSM_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "ec/ec.h"

#define CUZK_MSM_SCALARS_MONT 1u /* scalars are Montgomery-form Fr limbs */
/* Tests only: run the batch-affine bucket rounds down to single pairs (normally they stop at
 * a few dozen pairs and the rest is added in XYZZ), so small inputs exercise them. */
#define CUZK__MSM_ALL_ROUNDS 0x100u
/* Tests only: the XYZZ bucket phase (normally used above 2^18 points) at any size. */
#define CUZK__MSM_XYZZ 0x200u

typedef struct {
    unsigned nthreads; /* 0: cuzk_num_threads() */
    unsigned flags;    /* CUZK_MSM_* */
    unsigned window;   /* Pippenger window bits c, 0: chosen from n (tuning and tests) */
} cuzk_msm_opts;

#define CUZK__MSM_DECL(G)                                                                 \
    cuzk_err G##_msm(G##_jac *out, const G##_affine *points, const uint8_t *scalars,      \
                     size_t n, unsigned nthreads);                                        \
    cuzk_err G##_msm_ex(G##_jac *out, const G##_affine *points, const uint8_t *scalars,   \
                        size_t n, const cuzk_msm_opts *opts);                             \
    unsigned G##_msm_window(size_t n, unsigned nthreads);

CUZK__MSM_DECL(bn254_g1)
CUZK__MSM_DECL(bn254_g2)
CUZK__MSM_DECL(bls12_381_g1)
CUZK__MSM_DECL(bls12_381_g2)

#endif
