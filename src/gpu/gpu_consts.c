/* Host-side Fr constants for the CUDA backend (roots of unity, inverses), computed with src/ff
 * so the device uses exactly the host's field. Only built into the CUDA backend. */
#ifdef CUZK_HAVE_CUDA
#include <stdint.h>
#include <string.h>

#include "ff/ff.h"

int cuzk__gpu_fr_two_adicity(int curve);
void cuzk__gpu_fr_root(int curve, int logn, uint64_t out[4]);
void cuzk__gpu_fr_inv(int curve, const uint64_t a[4], uint64_t out[4]);
void cuzk__gpu_fr_from_u64(int curve, uint64_t v, uint64_t out[4]);

int cuzk__gpu_fr_two_adicity(int curve)
{
    return curve == 0 ? BN254_FR_TWO_ADICITY : BLS12_381_FR_TWO_ADICITY;
}

/* w_{2^logn} = w_{2^s}^(2^(s - logn)), w_{2^s} = 5^((r-1)/2^s) (snarkjs, both curves). */
void cuzk__gpu_fr_root(int curve, int logn, uint64_t out[4])
{
    if (curve == 0) {
        bn254_fr_t w = {BN254_FR_ROOT_OF_UNITY};
        for (int i = logn; i < BN254_FR_TWO_ADICITY; i++)
            bn254_fr_sqr(&w, &w);
        memcpy(out, w.l, 32);
    } else {
        bls12_381_fr_t w = {BLS12_381_FR_ROOT_OF_UNITY};
        for (int i = logn; i < BLS12_381_FR_TWO_ADICITY; i++)
            bls12_381_fr_sqr(&w, &w);
        memcpy(out, w.l, 32);
    }
}

void cuzk__gpu_fr_inv(int curve, const uint64_t a[4], uint64_t out[4])
{
    if (curve == 0) {
        bn254_fr_t x, r;
        memcpy(x.l, a, 32);
        bn254_fr_inv(&r, &x);
        memcpy(out, r.l, 32);
    } else {
        bls12_381_fr_t x, r;
        memcpy(x.l, a, 32);
        bls12_381_fr_inv(&r, &x);
        memcpy(out, r.l, 32);
    }
}

void cuzk__gpu_fr_from_u64(int curve, uint64_t v, uint64_t out[4])
{
    if (curve == 0) {
        bn254_fr_t r;
        bn254_fr_from_u64(&r, v);
        memcpy(out, r.l, 32);
    } else {
        bls12_381_fr_t r;
        bls12_381_fr_from_u64(&r, v);
        memcpy(out, r.l, 32);
    }
}
#else
typedef int cuzk__gpu_consts_unused; /* ISO C forbids an empty translation unit */
#endif
