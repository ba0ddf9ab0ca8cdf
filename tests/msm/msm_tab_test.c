/*
 * Fixed-base table MSM (G_msm_tab, msm/msm.h) on all four groups:
 *  - the table itself: copy j of P_i equals 2^(j s) P_i by the Jacobian double-and-add of
 *    ec_tmpl.h (s = c ceil(W / t)), infinity stays infinity;
 *  - G_msm_tab against the naive sum of mul_limbs(k_i, P_i) (an independent reference), for
 *    t in {1, 2, 3, 4, 8, 16}, sizes 1 .. 300 (non-powers of two), several windows (the
 *    picked one, 2, and wide ones), thread counts 1, 2, 3, with scalar sets: random; 0, 1, 2,
 *    r-1 and small values; all equal; mostly 0/1; all 1; and point sets with infinity,
 *    repeated points, equal and opposite neighbours; the batch-affine rounds down to single
 *    pairs (CUZK__MSM_ALL_ROUNDS) too;
 *  - Montgomery-form scalars (CUZK_MSM_SCALARS_MONT) give the same result; a scalar >= r is
 *    rejected with CUZK_NON_CANONICAL; inconsistent (t, c) with CUZK_INVALID_ARGUMENT;
 *  - known answers from @noble/curves (tests/vectors/msm.json, tests/vectors/gen/msm.mjs);
 *  - a 2^12 random case (2^9 on G2) against G_msm_ex at every t.
 */
#include <gmp.h>
#include <string.h>

#include "ec/ec.h"
#include "msm/msm.h"
#include "testutil.h"
#include "msm_testlib.h"

#define NMAX 300
static const size_t SIZES[] = {1, 2, 7, 64, 100, 255, 300};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
static const unsigned TS[] = {1, 2, 3, 4, 8, 16};
#define NTS (sizeof TS / sizeof TS[0])
#define NSETS 5

#define TAB_TESTS(G, F, RLIMBS, NBITS, NBIG, PSET0)                                              \
    /* builds the table of pts for (t, c) and checks every copy against doublings */      \
    static G##_affine *tab_of_##G(const G##_affine *pts, size_t n, unsigned t, unsigned c,   \
                                  int check)                                              \
    {                                                                                     \
        unsigned W = NBITS / c + 1, s = c * ((W + t - 1) / t);                            \
        G##_affine *tab = malloc(sizeof(G##_affine) * (n * (t - 1) + 1));                 \
        CHECK(G##_msm_tab_build(tab, pts, n, t, c, 1 + (unsigned)(n % 3)) == CUZK_OK);    \
        for (size_t i = 0; i < (size_t)check && i < n; i++) {                           \
            G##_jac q, e;                                                                 \
            G##_from_affine(&q, &pts[i]);                                                 \
            for (unsigned j = 1; j < t; j++) {                                            \
                uint64_t k[8] = {0};                                                      \
                unsigned bit = j * s;                                                     \
                if (bit >= 512)                                                           \
                    break;                                                                \
                k[bit / 64] = (uint64_t)1 << (bit % 64);                                  \
                G##_mul_limbs(&e, &q, k, 8);                                              \
                G##_jac got;                                                              \
                G##_from_affine(&got, &tab[(j - 1) * n + i]);                             \
                CHECK_MSG(G##_eq(&got, &e), #G " table copy %u of point %zu (t=%u c=%u)", \
                          j, i, t, c);                                                    \
            }                                                                             \
        }                                                                                 \
        return tab;                                                                       \
    }                                                                                     \
    static void test_##G(void)                                                            \
    {                                                                                     \
        static const uint64_t r[4] = RLIMBS;                                              \
        static G##_affine pts[NMAX], sub[NMAX * 16];                                      \
        static uint64_t ks[NMAX][4];                                                      \
        static uint8_t sb[NSETS][NMAX * 32], mb[NSETS][NMAX * 32];                        \
        static G##_jac pref[NSETS][NMAX + 1];                                             \
        G##_jac g;                                                                        \
        G##_from_affine(&g, &G##_GEN);                                                    \
        for (int pset = PSET0; pset < 2; pset++) {                                        \
            for (int i = 0; i < NMAX; i++) {                                              \
                G##_jac p;                                                                \
                uint64_t x = tu_rand64();                                                 \
                if (pset == 1 && i % 7 == 3) {                                            \
                    G##_affine_set_inf(&pts[i]);                                          \
                    continue;                                                             \
                }                                                                         \
                if (pset == 1 && i >= 5 && i % 5 == 0) {                                  \
                    pts[i] = pts[i % 5]; /* repeated points */                            \
                    continue;                                                             \
                }                                                                         \
                if (pset == 1 && i % 4 == 1) {                                            \
                    pts[i] = pts[i - 1]; /* equal neighbours */                           \
                    continue;                                                             \
                }                                                                         \
                if (pset == 1 && i % 4 == 2) {                                            \
                    G##_affine_neg(&pts[i], &pts[i - 1]); /* P, -P */                     \
                    continue;                                                             \
                }                                                                         \
                G##_mul_limbs(&p, &g, &x, 1);                                             \
                G##_to_affine(&pts[i], &p);                                               \
            }                                                                             \
            for (int sset = 0; sset < NSETS; sset++) {                                    \
                uint64_t same[4];                                                         \
                rand_scalar(same, r, NBITS);                                              \
                for (int i = 0; i < NMAX; i++) {                                          \
                    msm_scalar_set(ks[i], sset, same, r, NBITS);                          \
                    put_scalar(sb[sset] + 32 * i, ks[i]);                                 \
                    F##_t xm;                                                             \
                    F##_from_canonical(&xm, ks[i]);                                       \
                    F##_to_mont_bytes_le(mb[sset] + 32 * i, &xm);                         \
                }                                                                         \
                /* the naive reference: prefix sums of k_i P_i */                         \
                G##_set_inf(&pref[sset][0]);                                              \
                for (int i = 0; i < NMAX; i++) {                                          \
                    G##_jac p, kp;                                                        \
                    G##_from_affine(&p, &pts[i]);                                         \
                    G##_mul_limbs(&kp, &p, ks[i], 4);                                     \
                    G##_add(&pref[sset][i + 1], &pref[sset][i], &kp);                     \
                }                                                                         \
            }                                                                             \
            for (size_t ti = 0; ti < NTS; ti++) {                                         \
                /* windows: the picked one for 2^8 points, c = 2, and a wide one */       \
                unsigned cs[3] = {G##_msm_tab_window(256, TS[ti], 2), 2,                  \
                                  (unsigned[]){7, 9, 11}[(ti + (unsigned)pset) % 3]};    \
                for (int ci = 0; ci < 3; ci++) {                                          \
                    unsigned c = cs[ci], t = G##_msm_tab_copies(TS[ti], c);               \
                    CHECK(t >= 1 && t <= TS[ti]);                                         \
                    G##_affine *tab = tab_of_##G(pts, NMAX, t, c, ci == 0 ? 8 : 0);       \
                    for (size_t si = 0; si < NSIZES; si++) {                              \
                        size_t n = SIZES[si];                                             \
                        if (ci == 1 && n > 64)                                            \
                            continue; /* c = 2 (128 windows) on small inputs only: speed */ \
                        /* the table of the first n points: each copy's first n */        \
                        for (unsigned j = 1; j < t; j++)                                  \
                            memcpy(sub + (j - 1) * n, tab + (j - 1) * NMAX,               \
                                   sizeof(G##_affine) * n);                               \
                        for (int sset = 0; sset < NSETS; sset++) {                        \
                            unsigned th = 1 + (unsigned)((si + ti + ci + sset) % 3);      \
                            int v = (int)((si + ti + sset) % 3);                          \
                            cuzk_msm_opts o = {th, v == 1 ? CUZK__MSM_ALL_ROUNDS :        \
                                                   v == 2 ? CUZK_MSM_SCALARS_MONT : 0, 0}; \
                            G##_jac out;                                                  \
                            CHECK(G##_msm_tab(&out, pts, sub, t, c, v == 2 ? mb[sset] : sb[sset], \
                                              n, &o) == CUZK_OK);                         \
                            CHECK_MSG(G##_eq(&out, &pref[sset][n]),                       \
                                      #G " n=%zu t=%u c=%u th=%u v=%d pset=%d sset=%d", n,  \
                                      t, c, th, v, pset, sset);                           \
                        }                                                                 \
                    }                                                                     \
                    free(tab);                                                            \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        /* errors: a scalar equal to r; inconsistent copies / window; n = 0 */            \
        {                                                                                 \
            unsigned c = 5, t = G##_msm_tab_copies(4, c);                                 \
            G##_affine *tab = tab_of_##G(pts, 40, t, c, 0);                               \
            G##_jac out;                                                                  \
            static uint8_t eb_[NMAX * 32];                                                \
            memcpy(eb_, sb[0], sizeof eb_);                                               \
            put_scalar(eb_ + 32 * 17, r);                                                  \
            CHECK(G##_msm_tab(&out, pts, tab, t, c, eb_, 40, NULL) == CUZK_NON_CANONICAL); \
            CHECK(G##_msm_tab(&out, pts, tab, t, 1, eb_, 10, NULL) == CUZK_INVALID_ARGUMENT); \
            CHECK(G##_msm_tab(&out, pts, tab, 0, c, eb_, 10, NULL) == CUZK_INVALID_ARGUMENT); \
            CHECK(G##_msm_tab_copies(16, 16) == 16 && G##_msm_tab_copies(16, 13) == 10);  \
            CHECK(G##_msm_tab(&out, pts, tab, 16, 13, eb_, 10, NULL) == CUZK_INVALID_ARGUMENT); \
            CHECK(G##_msm_tab_build(NULL, pts, 10, 1, c, 1) == CUZK_OK); /* t = 1: none */ \
            CHECK(G##_msm_tab_build(NULL, pts, 10, 2, c, 1) == CUZK_INVALID_ARGUMENT);    \
            CHECK(G##_msm_tab(&out, pts, tab, t, c, eb_, 0, NULL) == CUZK_OK);             \
            CHECK(G##_is_inf(&out));                                                      \
            free(tab);                                                                    \
        }                                                                                 \
        /* a larger random case against the plain MSM at every t */                       \
        size_t nb = NBIG;                                                                 \
        G##_affine *bp = malloc(sizeof(G##_affine) * nb);                                 \
        G##_jac *bj = malloc(sizeof(G##_jac) * nb);                                       \
        uint8_t *bs = malloc(32 * nb);                                                    \
        __typeof__(g.X) *scr = malloc(sizeof(g.X) * nb);                                  \
        uint64_t s0 = tu_rand64();                                                        \
        G##_mul_limbs(&bj[0], &g, &s0, 1);                                                \
        for (size_t i = 1; i < nb; i++)                                                   \
            G##_add(&bj[i], &bj[i - 1], i % 3 ? &bj[0] : &g);                             \
        G##_batch_to_affine(bp, bj, nb, scr);                                             \
        for (size_t i = 0; i < nb; i++) {                                                 \
            uint64_t k[4];                                                                \
            rand_scalar(k, r, NBITS);                                                     \
            put_scalar(bs + 32 * i, k);                                                   \
        }                                                                                 \
        G##_jac ref, out;                                                                 \
        CHECK(G##_msm(&ref, bp, bs, nb, 2) == CUZK_OK);                                   \
        for (size_t ti = 0; ti < NTS; ti++) {                                             \
            unsigned c = G##_msm_tab_window(nb, TS[ti], 2), t = G##_msm_tab_copies(TS[ti], c); \
            G##_affine *tab = tab_of_##G(bp, nb, t, c, 0);                                \
            cuzk_msm_opts o = {1 + (unsigned)ti % 3, 0, 0};                               \
            CHECK(G##_msm_tab(&out, bp, tab, t, c, bs, nb, &o) == CUZK_OK);               \
            CHECK_MSG(G##_eq(&out, &ref), #G " big n=%zu t=%u c=%u", nb, t, c);           \
            free(tab);                                                                    \
        }                                                                                 \
        free(bp);                                                                         \
        free(bj);                                                                         \
        free(bs);                                                                         \
        free(scr);                                                                        \
    }

/* G2 (about 3x slower per operation) runs point set 1 only (it holds random points too). */
TAB_TESTS(bn254_g1, bn254_fr, BN254_FR_P, 254, 4096, 0)
TAB_TESTS(bn254_g2, bn254_fr, BN254_FR_P, 254, 512, 1)
TAB_TESTS(bls12_381_g1, bls12_381_fr, BLS12_381_FR_P, 255, 4096, 0)
TAB_TESTS(bls12_381_g2, bls12_381_fr, BLS12_381_FR_P, 255, 512, 1)

/* Known answers: every t, two windows. */
#define TAB_KAT_RUN(G)                                                                    \
    static void kat_run_##G(const G##_affine *pts, const uint8_t *sb, size_t n,           \
                            const G##_jac *exp)                                           \
    {                                                                                     \
        G##_jac out;                                                                      \
        for (size_t ti = 0; ti < NTS; ti++) {                                             \
            for (int v = 0; v < 2; v++) {                                                 \
                unsigned c = v ? (unsigned[]){3, 7, 11}[ti % 3]                           \
                               : G##_msm_tab_window(n, TS[ti], 2);                        \
                unsigned t = G##_msm_tab_copies(TS[ti], c);                               \
                G##_affine *tab = malloc(sizeof(G##_affine) * (n * (t - 1) + 1));         \
                CHECK(G##_msm_tab_build(tab, pts, n, t, c, 2) == CUZK_OK);                \
                cuzk_msm_opts o = {1 + (unsigned)(ti + v) % 3, v ? CUZK__MSM_ALL_ROUNDS : 0, 0}; \
                CHECK(G##_msm_tab(&out, pts, tab, t, c, sb, n, &o) == CUZK_OK);           \
                CHECK_MSG(G##_eq(&out, exp), #G " known answer, t=%u c=%u", t, c);       \
                free(tab);                                                                \
            }                                                                             \
        }                                                                                 \
    }
TAB_KAT_RUN(bn254_g1)
TAB_KAT_RUN(bn254_g2)
TAB_KAT_RUN(bls12_381_g1)
TAB_KAT_RUN(bls12_381_g2)
MSM_KAT(bn254_g1, bn254_fp, 4, G1)
MSM_KAT(bn254_g2, bn254_fp, 4, G2)
MSM_KAT(bls12_381_g1, bls12_381_fp, 6, G1)
MSM_KAT(bls12_381_g2, bls12_381_fp, 6, G2)

int main(void)
{
    cuzk_ff_init();
    kat_tests();
    test_bn254_g1();
    test_bn254_g2();
    test_bls12_381_g1();
    test_bls12_381_g2();
    return tu_finish("msm_tab");
}
