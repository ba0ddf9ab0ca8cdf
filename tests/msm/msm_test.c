/*
 * Pippenger MSM (msm/msm.h) on all four groups against independent references built from the
 * Jacobian group law of ec_tmpl.h:
 *  - the naive sum of mul_limbs(k_i, P_i), for every prefix length in a list of sizes 1..300
 *    (non-powers of two included), with scalar sets: random < r; special values 0, 1, 2, r-1,
 *    small; all-equal; mostly 0/1; all 1 (the batch-affine tree for scalar 1); and point sets
 *    with repeated points, points at infinity, equal and opposite neighbours; thread
 *    counts 1, 2, 3, 7 and forced window sizes, with windows whole and cut into chunks of
 *    16 points (CUZK__MSM_SMALL_CHUNKS; above 2^18 points windows are cut into chunks);
 *  - the batch-affine bucket rounds run down to single pairs (CUZK__MSM_ALL_ROUNDS) on the same
 *    cases: all-equal scalars put every point of a window into one bucket, so equal points
 *    (doubling), opposite points (infinity) and infinities meeting finite points all occur
 *    inside one batch;
 *  - known answers from @noble/curves (tests/vectors/msm.json) with the same edge cases;
 *  - Montgomery-form scalar input (CUZK_MSM_SCALARS_MONT) gives the same result;
 *  - a scalar >= r is rejected with CUZK_NON_CANONICAL;
 *  - a 2^12 random case (2^9 on G2) against a single-threaded simultaneous double-and-add
 *    (one doubling chain over all points, add P_i where bit j of k_i is set).
 */
#include <gmp.h>
#include <string.h>

#include "ec/ec.h"
#include "msm/msm.h"
#include "testutil.h"
#include "msm_testlib.h"

#define NMAX 300
static const size_t SIZES[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 63, 64, 65, 100, 127,
                               128, 129, 200, 255, 256, 257, 299, 300};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
static const unsigned THREADS[] = {1, 2, 3, 7};

#define MSM_TESTS(G, F, RLIMBS, NBITS, NBIG, PSET0)                                       \
    static void test_##G(void)                                                            \
    {                                                                                     \
        static const uint64_t r[4] = RLIMBS;                                              \
        static G##_affine pts[NMAX];                                                      \
        static uint64_t ks[NMAX][4];                                                      \
        static uint8_t sb[NMAX * 32];                                                     \
        G##_jac g;                                                                        \
        G##_from_affine(&g, &G##_GEN);                                                    \
        for (int pset = PSET0; pset < 3; pset++) {                                        \
            for (int i = 0; i < NMAX; i++) {                                              \
                G##_jac p;                                                                \
                uint64_t x = tu_rand64();                                                 \
                if (pset == 1 && i % 7 == 3) {                                            \
                    G##_affine_set_inf(&pts[i]); /* infinity in the array */              \
                    continue;                                                             \
                }                                                                         \
                if (pset == 1 && i >= 5 && i % 2 == 0) {                                  \
                    pts[i] = pts[i % 5]; /* repeated points */                            \
                    continue;                                                             \
                }                                                                         \
                if (pset == 2 && i % 4 == 1) { /* equal neighbours: tree doubling */      \
                    pts[i] = pts[i - 1];                                                  \
                    continue;                                                             \
                }                                                                         \
                if (pset == 2 && i % 4 == 3) { /* P, -P neighbours: tree infinity */      \
                    G##_affine_neg(&pts[i], &pts[i - 1]);                                 \
                    continue;                                                             \
                }                                                                         \
                if (pset == 2 && i % 13 == 0) {                                           \
                    G##_affine_set_inf(&pts[i]);                                          \
                    continue;                                                             \
                }                                                                         \
                G##_mul_limbs(&p, &g, &x, 1);                                             \
                G##_to_affine(&pts[i], &p);                                               \
            }                                                                             \
            for (int sset = 0; sset < 5; sset++) {                                        \
                uint64_t same[4];                                                         \
                rand_scalar(same, r, NBITS);                                              \
                for (int i = 0; i < NMAX; i++) {                                          \
                    msm_scalar_set(ks[i], sset, same, r, NBITS);                          \
                    put_scalar(sb + 32 * i, ks[i]);                                       \
                }                                                                         \
                if (pset == 2 && sset < 2)                                                \
                    continue; /* point set 2: the scalar-1 tree and the affine rounds */  \
                /* prefix sums of the naive products; for all-equal scalars k sum P_i */  \
                static G##_jac pref[NMAX + 1];                                            \
                G##_set_inf(&pref[0]);                                                    \
                for (int i = 0; i < NMAX; i++) {                                          \
                    G##_jac p, kp;                                                        \
                    G##_from_affine(&p, &pts[i]);                                         \
                    int nl = ks[i][3] ? 4 : ks[i][2] ? 3 : ks[i][1] ? 2 : 1;              \
                    if (sset != 2)                                                        \
                        G##_mul_limbs(&kp, &p, ks[i], nl);                                \
                    else                                                                  \
                        kp = p;                                                           \
                    G##_add(&pref[i + 1], &pref[i], &kp);                                 \
                }                                                                         \
                if (sset == 2)                                                            \
                    for (size_t si = 0; si < NSIZES; si++)                                \
                        G##_mul_limbs(&pref[SIZES[si]], &pref[SIZES[si]], same, 4);       \
                for (size_t si = 0; si < NSIZES; si++) {                                  \
                    size_t n = SIZES[si];                                                 \
                    G##_jac out;                                                          \
                    unsigned th = THREADS[si % 4];                                        \
                    cuzk_err e = G##_msm(&out, pts, sb, n, th);                           \
                    CHECK(e == CUZK_OK);                                                  \
                    CHECK_MSG(G##_eq(&out, &pref[n]), #G " n=%zu pset=%d sset=%d th=%u",  \
                              n, pset, sset, th);                                         \
                    /* forced windows, including c = 2 and one wider than log n; odd      \
                     * sizes' turns in windows cut into chunks, as large inputs' are */  \
                    unsigned cw = (unsigned[]){2, 3, 5, 8, 13}[si % 5];                   \
                    cuzk_msm_opts o = {THREADS[(si + 1) % 4],                             \
                                       si % 2 ? CUZK__MSM_SMALL_CHUNKS : 0, cw};          \
                    e = G##_msm_ex(&out, pts, sb, n, &o);                                 \
                    CHECK(e == CUZK_OK);                                                  \
                    CHECK_MSG(G##_eq(&out, &pref[n]), #G " n=%zu c=%u pset=%d sset=%d",   \
                              n, cw, pset, sset);                                         \
                    /* batch-affine rounds down to single pairs: with all-equal scalars   \
                     * every bucket holds the whole list, so point set 2's P, P and      \
                     * Q, -Q neighbours meet in one round (doubling, infinity), and      \
                     * infinities then meet finite points in later rounds (every other  \
                     * size, both parities, to keep the test fast under sanitizers) */    \
                    if (si % 2)                                                           \
                        continue;                                                         \
                    cuzk_msm_opts oa = {THREADS[(si + 2) % 4], CUZK__MSM_ALL_ROUNDS,      \
                                        (unsigned[]){0, 3, 4, 9}[si / 2 % 4]};                \
                    e = G##_msm_ex(&out, pts, sb, n, &oa);                                \
                    CHECK(e == CUZK_OK);                                                  \
                    CHECK_MSG(G##_eq(&out, &pref[n]), #G " n=%zu all rounds pset=%d sset=%d", \
                              n, pset, sset);                                             \
                }                                                                         \
                /* Montgomery-form scalars */                                             \
                static uint8_t mb[NMAX * 32];                                             \
                for (int i = 0; i < NMAX; i++) {                                          \
                    F##_t x;                                                              \
                    F##_from_canonical(&x, ks[i]);                                        \
                    F##_to_mont_bytes_le(mb + 32 * i, &x);                                \
                }                                                                         \
                cuzk_msm_opts om = {2, CUZK_MSM_SCALARS_MONT, 0};                         \
                G##_jac out;                                                              \
                CHECK(G##_msm_ex(&out, pts, mb, NMAX, &om) == CUZK_OK);                   \
                CHECK(G##_eq(&out, &pref[NMAX]));                                         \
            }                                                                             \
        }                                                                                 \
        /* scalar = r is not canonical; n = 0 gives infinity */                           \
        put_scalar(sb + 32 * 17, r);                                                      \
        G##_jac out;                                                                      \
        CHECK(G##_msm(&out, pts, sb, 40, 2) == CUZK_NON_CANONICAL);                       \
        CHECK(G##_msm(&out, pts, sb, 0, 2) == CUZK_OK);                                   \
        CHECK(G##_is_inf(&out));                                                          \
        /* larger random case against simultaneous double-and-add */                      \
        size_t nb = NBIG;                                                                 \
        G##_affine *bp = malloc(sizeof(G##_affine) * nb);                                 \
        G##_jac *bj = malloc(sizeof(G##_jac) * nb);                                       \
        uint64_t(*bk)[4] = malloc(32 * nb);                                               \
        uint8_t *bs = malloc(32 * nb);                                                    \
        __typeof__(g.X) *scr = malloc(sizeof(g.X) * nb);                                  \
        uint64_t s0 = tu_rand64();                                                        \
        G##_mul_limbs(&bj[0], &g, &s0, 1);                                                \
        for (size_t i = 1; i < nb; i++) /* P_i = P_{i-1} + (i % 3 ? P_0 : G) */           \
            G##_add(&bj[i], &bj[i - 1], i % 3 ? &bj[0] : &g);                             \
        G##_batch_to_affine(bp, bj, nb, scr);                                             \
        for (size_t i = 0; i < nb; i++) {                                                 \
            rand_scalar(bk[i], r, NBITS);                                                 \
            put_scalar(bs + 32 * i, bk[i]);                                               \
        }                                                                                 \
        G##_jac ref;                                                                      \
        G##_set_inf(&ref);                                                                \
        for (int bit = 255; bit >= 0; bit--) {                                            \
            G##_dbl(&ref, &ref);                                                          \
            for (size_t i = 0; i < nb; i++)                                               \
                if ((bk[i][bit / 64] >> (bit % 64)) & 1)                                  \
                    G##_add_affine(&ref, &ref, &bp[i]);                                   \
        }                                                                                 \
        for (unsigned t = 1; t <= 16; t *= 4) { /* 16: windows split into point chunks */ \
            CHECK(G##_msm(&out, bp, bs, nb, t) == CUZK_OK);                               \
            CHECK_MSG(G##_eq(&out, &ref), #G " big n=%zu threads=%u", nb, t);             \
        }                                                                                 \
        cuzk_msm_opts ob = {13, 0, 16};                                                   \
        CHECK(G##_msm_ex(&out, bp, bs, nb, &ob) == CUZK_OK);                              \
        CHECK_MSG(G##_eq(&out, &ref), #G " big n=%zu c=16 threads=13", nb);               \
        cuzk_msm_opts oc = {2, CUZK__MSM_ALL_ROUNDS, 0}, ox = {3, CUZK__MSM_SMALL_CHUNKS, 0}; \
        CHECK(G##_msm_ex(&out, bp, bs, nb, &oc) == CUZK_OK);                              \
        CHECK_MSG(G##_eq(&out, &ref), #G " big n=%zu all rounds", nb);                    \
        CHECK(G##_msm_ex(&out, bp, bs, nb, &ox) == CUZK_OK);                              \
        CHECK_MSG(G##_eq(&out, &ref), #G " big n=%zu windows in chunks", nb);             \
        free(bp);                                                                         \
        free(bj);                                                                         \
        free(bk);                                                                         \
        free(bs);                                                                         \
        free(scr);                                                                        \
    }

/* Known answers: default settings, all affine rounds, windows in small chunks, windows 2..9
 * and 1, 2, 3 threads. */
#define MSM_KAT_RUN(G)                                                                    \
    static void kat_run_##G(const G##_affine *pts, const uint8_t *sb, size_t n,           \
                            const G##_jac *exp)                                           \
    {                                                                                     \
        G##_jac out;                                                                      \
        for (unsigned v = 0; v < 8; v++) {                                                \
            unsigned fl = v >= 6 ? CUZK__MSM_SMALL_CHUNKS : v >= 3 ? CUZK__MSM_ALL_ROUNDS : 0; \
            cuzk_msm_opts o = {1 + v % 3, fl, (unsigned[]){0, 2, 5, 0, 4, 9, 0, 7}[v]};   \
            CHECK(G##_msm_ex(&out, pts, sb, n, &o) == CUZK_OK);                           \
            CHECK_MSG(G##_eq(&out, exp), #G " known answer, variant %u", v);              \
        }                                                                                 \
    }
MSM_KAT_RUN(bn254_g1)
MSM_KAT_RUN(bn254_g2)
MSM_KAT_RUN(bls12_381_g1)
MSM_KAT_RUN(bls12_381_g2)
MSM_KAT(bn254_g1, bn254_fp, 4, G1)
MSM_KAT(bn254_g2, bn254_fp, 4, G2)
MSM_KAT(bls12_381_g1, bls12_381_fp, 6, G1)
MSM_KAT(bls12_381_g2, bls12_381_fp, 6, G2)

/* G2 is about 3x slower per operation: it skips point set 0 (set 1 holds random points too)
 * and runs the large case at 2^9, to keep the test fast under sanitizers. */
MSM_TESTS(bn254_g1, bn254_fr, BN254_FR_P, 254, 4096, 0)
MSM_TESTS(bn254_g2, bn254_fr, BN254_FR_P, 254, 512, 1)
MSM_TESTS(bls12_381_g1, bls12_381_fr, BLS12_381_FR_P, 255, 4096, 0)
MSM_TESTS(bls12_381_g2, bls12_381_fr, BLS12_381_FR_P, 255, 512, 1)

int main(void)
{
    cuzk_ff_init();
    test_bn254_g1();
    test_bn254_g2();
    test_bls12_381_g1();
    test_bls12_381_g2();
    kat_tests();
    return tu_finish("msm_test");
}
