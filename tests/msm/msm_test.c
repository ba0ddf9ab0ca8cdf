/*
 * Pippenger MSM (msm/msm.h) on all four groups against independent references built from the
 * Jacobian group law of ec_tmpl.h:
 *  - the naive sum of mul_limbs(k_i, P_i), for every prefix length in a list of sizes 1..300
 *    (non-powers of two included), with scalar sets: random < r; special values 0, 1, 2, r-1,
 *    small; all-equal; mostly 0/1; all 1 (the batch-affine tree for scalar 1); and point sets
 *    with repeated points, points at infinity, equal and opposite neighbours; thread
 *    counts 1, 2, 3, 7 and forced window sizes;
 *  - Montgomery-form scalar input (CUZK_MSM_SCALARS_MONT) gives the same result;
 *  - a scalar >= r is rejected with CUZK_NON_CANONICAL;
 *  - a 2^12 random case (2^9 on G2) against a single-threaded simultaneous double-and-add
 *    (one doubling chain over all points, add P_i where bit j of k_i is set).
 */
#include <string.h>

#include "ec/ec.h"
#include "msm/msm.h"
#include "testutil.h"

#define NMAX 300
static const size_t SIZES[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 63, 64, 65, 100, 127,
                               128, 129, 200, 255, 256, 257, 299, 300};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])
static const unsigned THREADS[] = {1, 2, 3, 7};

/* Random scalar < r as 4 limbs: rejection sampling on the top bits. */
static void rand_scalar(uint64_t k[4], const uint64_t r[4], unsigned nbits)
{
    for (;;) {
        tu_rand_bytes(k, 32);
        k[3] &= ((uint64_t)1 << (nbits - 192)) - 1;
        for (int i = 3; i >= 0; i--) {
            if (k[i] != r[i]) {
                if (k[i] < r[i])
                    return;
                break;
            }
        }
    }
}

static void put_scalar(uint8_t *b, const uint64_t k[4])
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(k[i] >> (8 * j));
}

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
                    memset(ks[i], 0, 32);                                                 \
                    if (sset == 0) {                                                      \
                        rand_scalar(ks[i], r, NBITS);                                     \
                    } else if (sset == 1) {                                               \
                        switch (tu_rand64() % 6) {                                        \
                        case 0: break;                                                    \
                        case 1: ks[i][0] = 1; break;                                      \
                        case 2: ks[i][0] = 2; break;                                      \
                        case 3: memcpy(ks[i], r, 32); ks[i][0] -= 1; break;               \
                        case 4: ks[i][0] = tu_rand64() & 0xffff; break;                   \
                        default: rand_scalar(ks[i], r, NBITS);                            \
                        }                                                                 \
                    } else if (sset == 2) {                                               \
                        memcpy(ks[i], same, 32); /* all equal */                          \
                    } else if (sset == 3) {                                               \
                        ks[i][0] = tu_rand64() % 4 == 0 ? 5 : tu_rand64() & 1; /* 0/1 */ \
                    } else {                                                              \
                        ks[i][0] = 1; /* all ones: only the batch-affine tree */          \
                    }                                                                     \
                    put_scalar(sb + 32 * i, ks[i]);                                       \
                }                                                                         \
                if (pset == 2 && sset < 3)                                                \
                    continue; /* point set 2 is aimed at the scalar-1 tree */             \
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
                    /* forced windows, including c = 2 and one wider than log n */        \
                    unsigned cw = (unsigned[]){2, 3, 5, 8, 13}[si % 5];                   \
                    cuzk_msm_opts o = {THREADS[(si + 1) % 4], 0, cw};                     \
                    e = G##_msm_ex(&out, pts, sb, n, &o);                                 \
                    CHECK(e == CUZK_OK);                                                  \
                    CHECK_MSG(G##_eq(&out, &pref[n]), #G " n=%zu c=%u pset=%d sset=%d",   \
                              n, cw, pset, sset);                                         \
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
        free(bp);                                                                         \
        free(bj);                                                                         \
        free(bk);                                                                         \
        free(bs);                                                                         \
        free(scr);                                                                        \
    }

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
    return tu_finish("msm_test");
}
