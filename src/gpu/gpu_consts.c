/* Host-side helpers of the CUDA backend: Fr constants (roots of unity, inverses), computed with
 * src/ff so the device uses exactly the host's field, and the MSM's final window combination
 * (src/ec). Only built into the CUDA backend. */
#ifdef CUZK_HAVE_CUDA
#include <stdint.h>
#include <string.h>

#include "ec/ec.h"
#include "ff/ff.h"

int cuzk__gpu_fr_two_adicity(int curve);
void cuzk__gpu_fr_root(int curve, int logn, uint64_t out[4]);
void cuzk__gpu_fr_inv(int curve, const uint64_t a[4], uint64_t out[4]);
void cuzk__gpu_fr_from_u64(int curve, uint64_t v, uint64_t out[4]);
void cuzk__gpu_horner_bits(int curve, int g2, int W, int c, int nb, int logS, const void *jac,
                           uint64_t *out);
void cuzk__gpu_fp_inv(int curve, int fp2, uint64_t *x);

/* x <- 1/x in place (0 -> 0): an Fp element (fp2 = 0) or an Fp2 element c0, c1 (fp2 = 1) of
 * the curve's base field, Montgomery form; each coordinate may be up to 2p - 1 (the device's
 * lazy field), the result is canonical. */
#define GPU_FP_INV(FP, F2)                                                                    \
    static void FP##_gpu_inv(int fp2, uint64_t *x)                                            \
    {                                                                                         \
        FP##_t c[2];                                                                          \
        for (int k = 0; k <= fp2; k++) {                                                      \
            memcpy(c[k].l, x + k * (sizeof c[k].l / 8), sizeof c[k].l);                       \
            FP##_reduce_once(&c[k], &c[k]);                                                   \
        }                                                                                     \
        if (fp2) {                                                                            \
            F2##_t a, r;                                                                      \
            a.c0 = c[0];                                                                      \
            a.c1 = c[1];                                                                      \
            F2##_inv(&r, &a);                                                                 \
            c[0] = r.c0;                                                                      \
            c[1] = r.c1;                                                                      \
        } else {                                                                              \
            FP##_inv(&c[0], &c[0]);                                                           \
        }                                                                                     \
        for (int k = 0; k <= fp2; k++)                                                        \
            memcpy(x + k * (sizeof c[k].l / 8), c[k].l, sizeof c[k].l);                       \
    }
GPU_FP_INV(bn254_fp, bn254_fp2)
GPU_FP_INV(bls12_381_fp, bls12_381_fp2)

void cuzk__gpu_fp_inv(int curve, int fp2, uint64_t *x)
{
    if (curve == 0)
        bn254_fp_gpu_inv(fp2, x);
    else
        bls12_381_fp_gpu_inv(fp2, x);
}

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
/* The MSM's finish (gpu_internal.cuh, cuzk__gpu_horner_bits) with src/ec's complete Jacobian
 * formulas: each window's sum from its bit sums and tri sum, then Horner's rule over the
 * windows, then the ones bucket. The device's Jacobian points have exactly the layout of
 * G##_jac. */
#define GPU_HORNER(G)                                                                         \
    static void G##_gpu_horner(int W, int c, int nb, int logS, const void *jac, uint64_t *out) \
    {                                                                                         \
        G##_jac acc, win, p;                                                                  \
        const char *q = (const char *)jac;                                                    \
        G##_set_inf(&acc);                                                                    \
        for (int w = W - 1; w >= 0; w--) {                                                    \
            const char *ws = q + (size_t)w * (nb + 1) * sizeof p;                             \
            G##_set_inf(&win);                                                                \
            for (int k = nb - 1; k >= 0; k--) {                                               \
                if (!G##_is_inf(&win))                                                        \
                    G##_dbl(&win, &win);                                                      \
                memcpy(&p, ws + (size_t)k * sizeof p, sizeof p);                              \
                G##_add(&win, &win, &p);                                                      \
            }                                                                                 \
            for (int k = 0; k < logS && !G##_is_inf(&win); k++)                               \
                G##_dbl(&win, &win);                                                          \
            memcpy(&p, ws + (size_t)nb * sizeof p, sizeof p);                                 \
            G##_add(&win, &win, &p);                                                          \
            for (int k = 0; k < c && !G##_is_inf(&acc); k++)                                  \
                G##_dbl(&acc, &acc);                                                          \
            G##_add(&acc, &acc, &win);                                                        \
        }                                                                                     \
        memcpy(&p, q + (size_t)W * (nb + 1) * sizeof p, sizeof p);                            \
        G##_add(&acc, &acc, &p);                                                              \
        memcpy(out, &acc, sizeof acc);                                                        \
    }
/* acc += p, Jacobian points of the device layout (a split MSM's two results, gpu_impl.cuh). */
#define GPU_JAC_ADD(G)                                                                        \
    static void G##_gpu_jac_add(uint64_t *acc, const uint64_t *p)                             \
    {                                                                                         \
        G##_jac a, b;                                                                         \
        memcpy(&a, acc, sizeof a);                                                            \
        memcpy(&b, p, sizeof b);                                                              \
        G##_add(&a, &a, &b);                                                                  \
        memcpy(acc, &a, sizeof a);                                                            \
    }
#define GPU_HOST_OPS(G) GPU_HORNER(G) GPU_JAC_ADD(G)
GPU_HOST_OPS(bn254_g1)
GPU_HOST_OPS(bn254_g2)
GPU_HOST_OPS(bls12_381_g1)
GPU_HOST_OPS(bls12_381_g2)

/* G##_fn(args) for the group (curve 0 BN254, else BLS12-381; G2 when g2). */
#define GPU_BY_GROUP(curve, g2, fn, ...)                                                      \
    do {                                                                                      \
        if ((curve) == 0) {                                                                   \
            if (g2)                                                                           \
                bn254_g2_##fn(__VA_ARGS__);                                                   \
            else                                                                              \
                bn254_g1_##fn(__VA_ARGS__);                                                   \
        } else {                                                                              \
            if (g2)                                                                           \
                bls12_381_g2_##fn(__VA_ARGS__);                                               \
            else                                                                              \
                bls12_381_g1_##fn(__VA_ARGS__);                                               \
        }                                                                                     \
    } while (0)

void cuzk__gpu_horner_bits(int curve, int g2, int W, int c, int nb, int logS, const void *jac,
                           uint64_t *out)
{
    GPU_BY_GROUP(curve, g2, gpu_horner, W, c, nb, logS, jac, out);
}

/* acc += p (a split MSM's two results, gpu_impl.cuh). */
void cuzk__gpu_jac_add(int curve, int g2, uint64_t *acc, const uint64_t *p)
{
    GPU_BY_GROUP(curve, g2, gpu_jac_add, acc, p);
}
#else
typedef int cuzk__gpu_consts_unused; /* ISO C forbids an empty translation unit */
#endif
