/*
 * The MSM scratch cache (msm.c: blocks of 4 MiB or more kept between calls) at sizes that use
 * it, on BN254 G1 (2^16 and 2^15 points) and G2 (2^14 points), against an independent
 * reference: with P_i = (i + 1) G, sum_i k_i P_i = (sum_i k_i (i + 1) mod r) G, the scalar
 * computed with GMP and the point by the double-and-add of ec_tmpl.h.
 *  - a cold call (empty cache) leaves one block in the cache; calls after it (same size, a
 *    smaller one, another group) reuse a block holding stale data of other calls and must
 *    still be exact;
 *  - two MSMs at once on two threads (each takes its own block) are both exact;
 *  - the cache stays within its bound (256 MiB here), small calls (no block of 4 MiB) leave
 *    it untouched, and cuzk_msm_scratch_release() empties it;
 *  - off (the default, and limit 0) nothing is kept.
 */
#include <gmp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ec/ec.h"
#include "msm/msm.h"
#include "testutil.h"

#define CACHE_MAX ((size_t)256 << 20)

/* Points (i + 1) G for i < n, the scalars (random < r, every 16th 0, every 16th 1), and the
 * reference. */
#define SCRATCH_CASE(G, F, RLIMBS)                                                    \
    typedef struct {                                                                      \
        G##_affine *pts;                                                                  \
        uint8_t *sb;                                                                      \
        size_t n;                                                                         \
        G##_jac want;                                                                     \
    } G##_case;                                                                           \
                                                                                          \
    static void G##_make_points(G##_affine *pts, size_t n)                                \
    {                                                                                     \
        enum { CH = 1024 };                                                               \
        static G##_jac jq[CH];                                                            \
        static F##_t scr[CH];                                                             \
        G##_jac acc;                                                                      \
        G##_set_inf(&acc);                                                                \
        for (size_t lo = 0; lo < n; lo += CH) {                                           \
            size_t cnt = n - lo < CH ? n - lo : CH;                                       \
            for (size_t i = 0; i < cnt; i++) {                                            \
                G##_add_affine(&acc, &acc, &G##_GEN);                                     \
                jq[i] = acc;                                                              \
            }                                                                             \
            G##_batch_to_affine(pts + lo, jq, cnt, scr);                                  \
        }                                                                                 \
    }                                                                                     \
                                                                                          \
    static void G##_case_init(G##_case *cs, const G##_affine *pts, size_t n)              \
    {                                                                                     \
        static const uint64_t r[4] = RLIMBS;                                              \
        cs->pts = (G##_affine *)pts;                                                      \
        cs->n = n;                                                                        \
        cs->sb = malloc(32 * n);                                                          \
        mpz_t acc, k, rr;                                                                 \
        mpz_inits(acc, k, rr, NULL);                                                      \
        mpz_import(rr, 4, -1, 8, 0, 0, r);                                                \
        for (size_t i = 0; i < n; i++) {                                                  \
            uint64_t s[4] = {0, 0, 0, 0};                                                 \
            if (i % 16 == 5) {                                                            \
                mpz_set_ui(k, 1);                                                         \
            } else if (i % 16 == 9) {                                                     \
                mpz_set_ui(k, 0);                                                         \
            } else {                                                                      \
                tu_rand_bytes(s, 32);                                                     \
                mpz_import(k, 4, -1, 8, 0, 0, s);                                         \
                mpz_mod(k, k, rr);                                                        \
            }                                                                             \
            memset(s, 0, 32);                                                             \
            mpz_export(s, NULL, -1, 8, 0, 0, k);                                          \
            memcpy(cs->sb + 32 * i, s, 32); /* little-endian host */                      \
            mpz_mul_ui(k, k, (unsigned long)(i + 1));                                     \
            mpz_add(acc, acc, k);                                                         \
        }                                                                                 \
        mpz_mod(acc, acc, rr);                                                            \
        uint64_t e[4] = {0, 0, 0, 0};                                                     \
        mpz_export(e, NULL, -1, 8, 0, 0, acc);                                            \
        G##_jac g;                                                                        \
        G##_from_affine(&g, &G##_GEN);                                                    \
        G##_mul_limbs(&cs->want, &g, e, 4);                                               \
        mpz_clears(acc, k, rr, NULL);                                                     \
    }                                                                                     \
                                                                                          \
    static int G##_case_run(const G##_case *cs, unsigned threads)                         \
    {                                                                                     \
        G##_jac out;                                                                      \
        cuzk_msm_opts o = {threads, 0, 0};                                                \
        return G##_msm_ex(&out, cs->pts, cs->sb, cs->n, &o) == CUZK_OK &&                 \
               G##_eq(&out, &cs->want);                                                   \
    }                                                                                     \
                                                                                          \
    static void *G##_case_thread(void *arg)                                               \
    {                                                                                     \
        return G##_case_run(arg, 1) ? arg : NULL;                                         \
    }

SCRATCH_CASE(bn254_g1, bn254_fp, BN254_FR_P)
SCRATCH_CASE(bn254_g2, bn254_fp2, BN254_FR_P)

int main(void)
{
    enum { N1 = 1 << 16, N2 = 1 << 14 };
    cuzk_ff_init();
    cuzk_msm_scratch_release();
    CHECK(cuzk_msm_scratch_cached() == 0);

    static bn254_g1_affine p1[N1];
    static bn254_g2_affine p2[N2];
    bn254_g1_make_points(p1, N1);
    bn254_g2_make_points(p2, N2);
    bn254_g1_case a, b, c, d;
    bn254_g2_case e;
    bn254_g1_case_init(&a, p1, N1);
    bn254_g1_case_init(&b, p1, N1);
    bn254_g1_case_init(&c, p1, N1 / 2);
    bn254_g1_case_init(&d, p1, 300);
    bn254_g2_case_init(&e, p2, N2);

    /* off by default: a large MSM keeps nothing */
    CHECK_MSG(bn254_g1_case_run(&a, 2), "G1 n=2^16, no cache");
    CHECK(cuzk_msm_scratch_cached() == 0);
    cuzk_msm_scratch_limit(CACHE_MAX);

    /* small: no block kept */
    CHECK_MSG(bn254_g1_case_run(&d, 2), "G1 n=300");
    CHECK(cuzk_msm_scratch_cached() == 0);
    /* cold, then reuse (same size, other scalars; smaller; G2 on G1's stale block) */
    CHECK_MSG(bn254_g1_case_run(&a, 2), "G1 n=2^16 cold");
    size_t held = cuzk_msm_scratch_cached();
    CHECK_MSG(held >= ((size_t)4 << 20) && held <= CACHE_MAX, "cached %zu", held);
    CHECK_MSG(bn254_g1_case_run(&b, 2), "G1 n=2^16 reused");
    CHECK(cuzk_msm_scratch_cached() == held); /* the same block went back */
    CHECK_MSG(bn254_g1_case_run(&c, 2), "G1 n=2^15 reused");
    CHECK_MSG(bn254_g2_case_run(&e, 2), "G2 n=2^14 after G1");
    CHECK_MSG(bn254_g1_case_run(&a, 3), "G1 n=2^16 3 threads");
    CHECK(cuzk_msm_scratch_cached() <= CACHE_MAX);

    /* two at once: each takes a block of its own */
    pthread_t th[2];
    bn254_g1_case *cs[2] = {&a, &b};
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, bn254_g1_case_thread, cs[i]) == 0);
    for (int i = 0; i < 2; i++) {
        void *ret = NULL;
        CHECK(pthread_join(th[i], &ret) == 0);
        CHECK_MSG(ret == cs[i], "concurrent MSM %d", i);
    }
    held = cuzk_msm_scratch_cached();
    CHECK_MSG(held >= ((size_t)4 << 20) && held <= CACHE_MAX, "cached %zu", held);

    cuzk_msm_scratch_release();
    CHECK(cuzk_msm_scratch_cached() == 0);
    CHECK_MSG(bn254_g1_case_run(&c, 2), "G1 n=2^15 after release");
    /* limit 0 again: what is held goes, and nothing more is kept */
    CHECK(cuzk_msm_scratch_cached() > 0);
    cuzk_msm_scratch_limit(0);
    CHECK(cuzk_msm_scratch_cached() == 0);
    CHECK_MSG(bn254_g1_case_run(&b, 2), "G1 n=2^16 after limit 0");
    CHECK(cuzk_msm_scratch_cached() == 0);
    free(a.sb);
    free(b.sb);
    free(c.sb);
    free(d.sb);
    free(e.sb);
    cuzk_msm_scratch_release();
    return tu_finish("msm_scratch");
}
