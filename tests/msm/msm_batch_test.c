/*
 * Batched MSMs (G_msm_batch) on all four groups against k separate G_msm_ex calls (msm_test
 * checks those against independent references): k = 1, 2, 5, 10 (and 32, the most), sizes
 * from 1 to 2^14 points (2^12 on G2), vectors of random scalars, mostly-0/1 scalars, the
 * special values 0, 1, 2, r - 1, all-equal and all-one scalars mixed in one batch (so a point
 * is listed for some vectors and not others), points with infinities, repeats and P, -P
 * neighbours; both bucket phases, the affine rounds down to single pairs, forced windows,
 * 1 to 7 threads, Montgomery-form input; a scalar >= r in any vector is refused; and the
 * known answers of @noble/curves (tests/vectors/msm.json) through a batch.
 */
#include <string.h>

#include "ec/ec.h"
#include "msm/msm.h"
#include "testutil.h"
#include "msm_testlib.h"

static const size_t KS[] = {1, 2, 5, 10};

#define MSMB_TESTS(G, F, RLIMBS, NBITS, NMAXB)                                            \
    static void test_##G(void)                                                            \
    {                                                                                     \
        static const uint64_t r[4] = RLIMBS;                                              \
        const size_t nmax = NMAXB;                                                        \
        G##_affine *pts = malloc(sizeof(G##_affine) * nmax);                              \
        G##_jac *pj = malloc(sizeof(G##_jac) * nmax);                                     \
        __typeof__(pj[0].X) *scr = malloc(sizeof(pj[0].X) * nmax);                       \
        uint8_t *sb = malloc(32 * nmax * CUZK_MSM_BATCH_MAX);                             \
        uint8_t *mb = malloc(32 * nmax * 10);                                             \
        G##_jac g, out[CUZK_MSM_BATCH_MAX], ref;                                          \
        G##_from_affine(&g, &G##_GEN);                                                    \
        uint64_t s0 = tu_rand64();                                                        \
        G##_mul_limbs(&pj[0], &g, &s0, 1);                                                \
        for (size_t i = 1; i < nmax; i++)                                                 \
            G##_add(&pj[i], &pj[i - 1], i % 3 ? &pj[0] : &g);                             \
        G##_batch_to_affine(pts, pj, nmax, scr);                                          \
        for (size_t i = 5; i < nmax; i++) {                                               \
            if (i % 11 == 0)                                                              \
                G##_affine_set_inf(&pts[i]);                                              \
            else if (i % 17 == 1)                                                         \
                G##_affine_neg(&pts[i], &pts[i - 1]);                                     \
            else if (i % 23 == 2)                                                         \
                pts[i] = pts[i % 5];                                                      \
        }                                                                                 \
        const size_t sizes[] = {1, 7, 300, nmax / 4 + 3, nmax};                           \
        for (int mode = 0; mode < 3; mode++) /* 0 random, 1 mostly 0/1, 2 mixed sets */   \
            for (size_t ki = 0; ki < 4; ki++)                                             \
                for (size_t si = 0; si < 5; si++) {                                       \
                    size_t k = KS[ki], n = sizes[si];                                     \
                    if (n == nmax && (k == 10) != (mode == 1) && k != 1)                  \
                        continue; /* the largest size: k = 10 sparse, k = 1 all modes */  \
                    const uint8_t *sv[CUZK_MSM_BATCH_MAX];                                \
                    for (size_t j = 0; j < k; j++) {                                      \
                        int sset = mode == 0 ? 0 : mode == 1 ? 3 : (int)((j + si) % 5);   \
                        uint64_t same[4], kk[4];                                          \
                        rand_scalar(same, r, NBITS);                                      \
                        for (size_t i = 0; i < n; i++) {                                  \
                            msm_scalar_set(kk, sset, same, r, NBITS);                     \
                            put_scalar(sb + 32 * (nmax * j + i), kk);                     \
                        }                                                                 \
                        sv[j] = sb + 32 * nmax * j;                                       \
                    }                                                                     \
                    unsigned th = (unsigned[]){1, 2, 3, 7}[(ki + si) % 4];                \
                    unsigned fl = n > 1000 ? 0                                            \
                                           : (unsigned[]){0, CUZK__MSM_ALL_ROUNDS,        \
                                                          CUZK__MSM_XYZZ}[(si + ki) % 3]; \
                    unsigned cw = n > 1000 ? 0 : (unsigned[]){0, 3, 0, 7, 11}[si];        \
                    cuzk_msm_opts o = {th, fl, cw};                                       \
                    CHECK(G##_msm_batch(out, pts, sv, k, n, &o) == CUZK_OK);              \
                    for (size_t j = 0; j < k; j++) {                                      \
                        cuzk_msm_opts o1 = {2, 0, 0};                                     \
                        CHECK(G##_msm_ex(&ref, pts, sv[j], n, &o1) == CUZK_OK);           \
                        CHECK_MSG(G##_eq(&out[j], &ref),                                  \
                                  #G " n=%zu k=%zu j=%zu mode=%d th=%u flags=%x c=%u", n, \
                                  k, j, mode, th, fl, cw);                                \
                    }                                                                     \
                    if (mode != 2 || k == 1 || n > 1000)                                  \
                        continue;                                                         \
                    /* Montgomery-form scalars */                                         \
                    for (size_t j = 0; j < k; j++)                                        \
                        for (size_t i = 0; i < n; i++) {                                  \
                            uint64_t kk[4];                                               \
                            F##_t x;                                                      \
                            memcpy(kk, sv[j] + 32 * i, 32);                               \
                            F##_from_canonical(&x, kk);                                   \
                            F##_to_mont_bytes_le(mb + 32 * (nmax * j + i), &x);           \
                        }                                                                 \
                    const uint8_t *mv[CUZK_MSM_BATCH_MAX];                                \
                    G##_jac out2[CUZK_MSM_BATCH_MAX];                                     \
                    for (size_t j = 0; j < k; j++)                                        \
                        mv[j] = mb + 32 * nmax * j;                                       \
                    cuzk_msm_opts om = {2, CUZK_MSM_SCALARS_MONT, 0};                     \
                    CHECK(G##_msm_batch(out2, pts, mv, k, n, &om) == CUZK_OK);            \
                    for (size_t j = 0; j < k; j++)                                        \
                        CHECK_MSG(G##_eq(&out2[j], &out[j]), #G " mont n=%zu k=%zu", n, k); \
                }                                                                         \
        /* the most vectors, each its own random scalars */                               \
        {                                                                                 \
            const uint8_t *sv[CUZK_MSM_BATCH_MAX];                                        \
            size_t n = 200;                                                               \
            for (size_t j = 0; j < CUZK_MSM_BATCH_MAX; j++) {                             \
                uint64_t same[4], kk[4];                                                  \
                rand_scalar(same, r, NBITS);                                              \
                for (size_t i = 0; i < n; i++) {                                          \
                    msm_scalar_set(kk, (int)(j % 4), same, r, NBITS);                     \
                    put_scalar(sb + 32 * (nmax * j + i), kk);                             \
                }                                                                         \
                sv[j] = sb + 32 * nmax * j;                                               \
            }                                                                             \
            cuzk_msm_opts o = {3, 0, 0};                                                  \
            CHECK(G##_msm_batch(out, pts, sv, CUZK_MSM_BATCH_MAX, n, &o) == CUZK_OK);     \
            for (size_t j = 0; j < CUZK_MSM_BATCH_MAX; j++) {                             \
                CHECK(G##_msm_ex(&ref, pts, sv[j], n, &o) == CUZK_OK);                    \
                CHECK_MSG(G##_eq(&out[j], &ref), #G " k=32 j=%zu", j);                    \
            }                                                                             \
            CHECK(G##_msm_batch(out, pts, sv, CUZK_MSM_BATCH_MAX + 1, n, &o) ==           \
                  CUZK_INVALID_ARGUMENT);                                                 \
            CHECK(G##_msm_batch(out, pts, sv, 0, n, &o) == CUZK_INVALID_ARGUMENT);        \
            /* a scalar = r in the last vector only; n = 0: infinities */                 \
            put_scalar(sb + 32 * (nmax * 3 + 17), r);                                     \
            CHECK(G##_msm_batch(out, pts, sv, 4, n, &o) == CUZK_NON_CANONICAL);           \
            CHECK(G##_msm_batch(out, pts, sv, 3, n, &o) == CUZK_OK);                      \
            CHECK(G##_msm_batch(out, pts, sv, 4, 0, &o) == CUZK_OK);                      \
            CHECK(G##_is_inf(&out[0]) && G##_is_inf(&out[3]));                            \
        }                                                                                 \
        free(pts);                                                                        \
        free(pj);                                                                         \
        free(scr);                                                                        \
        free(sb);                                                                         \
        free(mb);                                                                         \
    }

/* Known answers from @noble/curves: the vector in a batch of 3 beside an all-zero vector and
 * itself, in both bucket phases. */
#define MSMB_KAT_RUN(G)                                                                   \
    static void kat_run_##G(const G##_affine *pts, const uint8_t *sb, size_t n,           \
                            const G##_jac *exp)                                           \
    {                                                                                     \
        G##_jac out[3];                                                                   \
        uint8_t *zero = calloc(n ? n : 1, 32);                                            \
        const uint8_t *sv[3] = {sb, zero, sb};                                            \
        for (unsigned v = 0; v < 3; v++) {                                                \
            unsigned fl = v == 2 ? CUZK__MSM_XYZZ : v == 1 ? CUZK__MSM_ALL_ROUNDS : 0;    \
            cuzk_msm_opts o = {1 + v, fl, 0};                                             \
            CHECK(G##_msm_batch(out, pts, sv, 3, n, &o) == CUZK_OK);                      \
            CHECK_MSG(G##_eq(&out[0], exp) && G##_is_inf(&out[1]) && G##_eq(&out[2], exp), \
                      #G " batch known answer, variant %u", v);                           \
        }                                                                                 \
        free(zero);                                                                       \
    }
MSMB_KAT_RUN(bn254_g1)
MSMB_KAT_RUN(bn254_g2)
MSMB_KAT_RUN(bls12_381_g1)
MSMB_KAT_RUN(bls12_381_g2)
MSM_KAT(bn254_g1, bn254_fp, 4, G1)
MSM_KAT(bn254_g2, bn254_fp, 4, G2)
MSM_KAT(bls12_381_g1, bls12_381_fp, 6, G1)
MSM_KAT(bls12_381_g2, bls12_381_fp, 6, G2)

MSMB_TESTS(bn254_g1, bn254_fr, BN254_FR_P, 254, 1u << 14)
MSMB_TESTS(bn254_g2, bn254_fr, BN254_FR_P, 254, 1u << 12)
MSMB_TESTS(bls12_381_g1, bls12_381_fr, BLS12_381_FR_P, 255, 1u << 14)
MSMB_TESTS(bls12_381_g2, bls12_381_fr, BLS12_381_FR_P, 255, 1u << 12)

int main(void)
{
    cuzk_ff_init();
    test_bn254_g1();
    test_bn254_g2();
    test_bls12_381_g1();
    test_bls12_381_g2();
    kat_tests();
    return tu_finish("msm_batch_test");
}
