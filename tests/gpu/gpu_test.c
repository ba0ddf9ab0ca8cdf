/*
 * GPU backend against the CPU: MSM (G1, G2, both curves) and NTT / H over Fr.
 *
 * MSM references, independent of each other and of the GPU code:
 *   - structured points P_i = t_i G with known t_i (made on the CPU by repeated Jacobian
 *     addition, src/ec), so sum s_i P_i = (sum s_i t_i mod r) G: one CPU scalar multiple;
 *   - for small n, the naive sum of double-and-add multiples s_i P_i;
 *   - for medium n, the CPU Pippenger (src/msm).
 * Edge cases: scalars 0, 1, r - 1, all equal, Montgomery-form scalars, mostly 0/1 (witness-
 * like), points at infinity, repeated points, sizes 1 .. 2^22 including non-powers of two.
 * NTT: sample outputs against the definition sum a_i (s w^j)^i (Horner), whole vectors against
 * src/poly, inverse round trips; H: against src/poly's groth16_h and a naive O(N^2) version;
 * H MSM against the structured-point identity.
 *
 * With no CUDA device (CI) it prints a skip message and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec/ec.h"
#include "gpu/gpu.h"
#include "gpu/gpu_testing.h"
#include "msm/msm.h"
#include "poly/ntt.h"
#include "testutil.h"

static cuzk_gpu_ctx *ctx;
static int quick; /* CUZK_GPU_TEST_QUICK=1: skip the largest sizes */
/* Fixed-base tables for the sets the MSM tests upload: -1 none, else
 * cuzk_gpu_points_tables's max_copies (0: as many as the windows need). */
static int tab_copies = -1;
/* Flags every G##_test_msm adds (CUZK_GPU_SCALARS_ONCE: the split MSM), and the layout of its
 * scalars for a split MSM's plan: 0 as generated, 1 the first quarter zero (the first part
 * has no scalar outside {0, 1}: a later one runs alone under its own plan), 2 all but the
 * first quarter zero (the last part adds nothing to the buckets), 3 the first tenth zero but
 * for every 100th scalar (2^19 scalars in three parts: the middle one runs alone, after the
 * first's sum is finished, and the last adds to its buckets). */
static unsigned msm_flags;
static int msm_layout;

/* Builds the tables tab_copies asks for on gp (a set of n points); 0 when that failed. */
static int make_tables(cuzk_gpu_points *gp, size_t n, cuzk_gpu_curve curve, cuzk_gpu_group g,
                       const char *what)
{
    if (tab_copies < 0)
        return 1;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_gpu_points_tables(gp, tab_copies, &eb);
    CHECK_MSG(e == CUZK_OK, "%s: tables: %s", what, eb.msg);
    /* Every set tested with tables is large enough for them to pay (gpu_plan.c), and the
     * budget's figure (cuzk_gpu_tables_bytes, no device) is what the set holds. */
    int t = cuzk_gpu_points_copies(gp);
    CHECK_MSG(t > 1 && (tab_copies == 0 || t <= tab_copies), "%s: %d copies for max %d", what,
              t, tab_copies);
    CHECK_MSG(cuzk_gpu_points_bytes(gp) == cuzk_gpu_tables_bytes(curve, g, n, tab_copies) &&
                  cuzk_gpu_points_bytes(gp) == (uint64_t)t * n * cuzk_gpu_point_bytes(curve, g) +
                                                   (n + 31) / 32 * 4, /* the infinity map */
              "%s: %llu bytes", what, (unsigned long long)cuzk_gpu_points_bytes(gp));
    return e == CUZK_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { SC_RANDOM, SC_SPARSE, SC_EQUAL, SC_RM1, SC_EDGE, SC_MONT };
static const char *scname[] = {"random", "sparse01", "all-equal", "r-1", "0/1/r-1 mix", "mont"};

/* Per-group test code, instantiated for the four groups. */
#define GPU_GROUP_TESTS(G, FR, CURVE, GROUP)                                                  \
    /* t_i = t0 + i d, with infinity where i % 17 == 5 and repeats where i % 13 == 7. */     \
    static void G##_gen(size_t n, FR##_t *t, G##_affine *pts)                                \
    {                                                                                         \
        FR##_t t0, d;                                                                         \
        FR##_from_u64(&t0, tu_rand64() | 1);                                                  \
        FR##_from_u64(&d, tu_rand64() | 1);                                                   \
        FR##_mul(&d, &d, &t0); /* spread over the whole field */                              \
        G##_jac g, base, step, *jac = malloc(n * sizeof *jac);                                \
        G##_from_affine(&g, &G##_GEN);                                                        \
        uint64_t k[8];                                                                        \
        FR##_to_canonical(k, &t0);                                                            \
        G##_mul_limbs(&base, &g, k, 4);                                                       \
        FR##_to_canonical(k, &d);                                                             \
        G##_mul_limbs(&step, &g, k, 4);                                                       \
        FR##_t ti = t0;                                                                       \
        for (size_t i = 0; i < n; i++) {                                                      \
            jac[i] = base;                                                                    \
            t[i] = ti;                                                                        \
            G##_add(&base, &base, &step);                                                     \
            FR##_add(&ti, &ti, &d);                                                           \
        }                                                                                     \
        void *scr = malloc(n * sizeof(jac[0].Z));                                             \
        G##_batch_to_affine(pts, jac, n, scr);                                                \
        free(scr);                                                                            \
        free(jac);                                                                            \
        for (size_t i = 0; i < n; i++) {                                                      \
            if (i % 17 == 5) {                                                                \
                memset(&pts[i], 0, sizeof pts[i]);                                            \
                FR##_set_zero(&t[i]);                                                         \
            } else if (i % 13 == 7 && i > 0) {                                                \
                pts[i] = pts[i - 1];                                                          \
                t[i] = t[i - 1];                                                              \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    static void G##_scalars(size_t n, int mode, uint8_t *sc, FR##_t *sv)                     \
    {                                                                                         \
        FR##_t eq, rm1, one;                                                                  \
        FR##_set_one(&one);                                                                   \
        FR##_neg(&rm1, &one);                                                                 \
        do {                                                                                  \
            uint64_t l[4];                                                                    \
            tu_rand_bytes(l, 32);                                                             \
            l[3] &= 0x3fffffffffffffffULL;                                                    \
            if (FR##_limbs_lt_p(l)) {                                                         \
                FR##_from_canonical(&eq, l);                                                  \
                break;                                                                        \
            }                                                                                 \
        } while (1);                                                                          \
        for (size_t i = 0; i < n; i++) {                                                      \
            FR##_t v;                                                                         \
            uint64_t r = tu_rand64() % 100;                                                   \
            int rnd = 0;                                                                      \
            switch (mode) {                                                                   \
            case SC_SPARSE:                                                                   \
                if (r < 50)                                                                   \
                    FR##_set_zero(&v);                                                        \
                else if (r < 92)                                                              \
                    v = one;                                                                  \
                else                                                                          \
                    rnd = 1;                                                                  \
                break;                                                                        \
            case SC_EQUAL:                                                                    \
                v = eq;                                                                       \
                break;                                                                        \
            case SC_RM1:                                                                      \
                v = rm1;                                                                      \
                break;                                                                        \
            case SC_EDGE:                                                                     \
                if (r < 25)                                                                   \
                    FR##_set_zero(&v);                                                        \
                else if (r < 50)                                                              \
                    v = one;                                                                  \
                else if (r < 75)                                                              \
                    v = rm1;                                                                  \
                else                                                                          \
                    rnd = 1;                                                                  \
                break;                                                                        \
            default:                                                                          \
                rnd = 1;                                                                      \
            }                                                                                 \
            while (rnd) {                                                                     \
                uint64_t l[4];                                                                \
                tu_rand_bytes(l, 32);                                                         \
                l[3] &= 0x7fffffffffffffffULL;                                                \
                if (FR##_limbs_lt_p(l)) {                                                     \
                    FR##_from_canonical(&v, l);                                               \
                    rnd = 0;                                                                  \
                }                                                                             \
            }                                                                                 \
            sv[i] = v;                                                                        \
            if (mode == SC_MONT)                                                              \
                memcpy(sc + 32 * i, v.l, 32);                                                 \
            else {                                                                            \
                uint64_t l[4];                                                                \
                FR##_to_canonical(l, &v);                                                     \
                memcpy(sc + 32 * i, l, 32);                                                   \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    static int G##_check_point(const char *what, size_t n, const uint64_t *gpu,               \
                               const G##_jac *want)                                           \
    {                                                                                         \
        G##_jac got;                                                                          \
        memcpy(&got, gpu, sizeof got);                                                        \
        int ok = G##_eq(&got, want) && (G##_is_inf(&got) || G##_is_on_curve(&got));           \
        CHECK_MSG(ok, "%s %s n=%zu", #G, what, n);                                            \
        return ok;                                                                            \
    }                                                                                         \
                                                                                              \
    static void G##_test_msm(size_t n, int mode, int naive, int cpu_msm)                      \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        FR##_t *t = malloc((n + 8) * sizeof *t), *sv = malloc((n + 8) * sizeof *sv);          \
        G##_affine *pts = malloc((n + 8) * sizeof *pts);                                      \
        uint8_t *sc = malloc((n + 8) * 32);                                                   \
        double t0 = now();                                                                    \
        G##_gen(n + 8, t, pts);                                                               \
        G##_scalars(n, mode, sc, sv);                                                         \
        const size_t z0 = msm_layout == 2 ? n / 4 : 0,                                        \
                     z1 = msm_layout == 1   ? n / 4                                           \
                          : msm_layout == 2 ? n                                               \
                          : msm_layout == 3 ? n / 10                                          \
                                            : 0;                                              \
        for (size_t i = z0; i < z1; i++) { /* the layout's zeros */                           \
            if (msm_layout == 3 && i % 100 == 0)                                              \
                continue;                                                                     \
            memset(sc + 32 * i, 0, 32);                                                       \
            FR##_set_zero(&sv[i]);                                                            \
        }                                                                                     \
        double t1 = now();                                                                    \
        cuzk_gpu_points *gp = NULL;                                                           \
        cuzk_err e = cuzk_gpu_points_upload(ctx, CURVE, GROUP, pts, n + 8, &gp, &eb);         \
        CHECK_MSG(e == CUZK_OK, "upload: %s", eb.msg);                                        \
        if (!e && !make_tables(gp, n + 8, CURVE, GROUP, #G))                                  \
            e = CUZK_GPU_FAULT;                                                               \
        if (e) {                                                                              \
            cuzk_gpu_points_free(gp);                                                         \
            free(t), free(sv), free(pts), free(sc);                                           \
            return;                                                                           \
        }                                                                                     \
        /* Offset 3 into the set: the MSM uses points 3 .. 3 + n. */                          \
        uint64_t out[36];                                                                     \
        double t2 = now();                                                                    \
        e = cuzk_gpu_msm(ctx, gp, 3, n, sc,                                                   \
                         (mode == SC_MONT ? CUZK_GPU_SCALARS_MONT : 0) | msm_flags, out, &eb);  \
        double t3 = now();                                                                    \
        CHECK_MSG(e == CUZK_OK, "msm: %s", eb.msg);                                           \
        if (!e) {                                                                             \
            FR##_t acc, p;                                                                    \
            FR##_set_zero(&acc);                                                              \
            for (size_t i = 0; i < n; i++) {                                                  \
                FR##_mul(&p, &sv[i], &t[i + 3]);                                              \
                FR##_add(&acc, &acc, &p);                                                     \
            }                                                                                 \
            G##_jac g, want;                                                                  \
            G##_from_affine(&g, &G##_GEN);                                                    \
            uint64_t k[4];                                                                    \
            FR##_to_canonical(k, &acc);                                                       \
            G##_mul_limbs(&want, &g, k, 4);                                                   \
            int ok = G##_check_point("structured", n, out, &want);                            \
            if (naive) {                                                                      \
                G##_jac sum, q, m;                                                            \
                G##_set_inf(&sum);                                                            \
                for (size_t i = 0; i < n; i++) {                                              \
                    G##_from_affine(&q, &pts[i + 3]);                                         \
                    FR##_to_canonical(k, &sv[i]);                                             \
                    G##_mul_limbs(&m, &q, k, 4);                                              \
                    G##_add(&sum, &sum, &m);                                                  \
                }                                                                             \
                ok &= G##_check_point("naive", n, out, &sum);                                 \
            }                                                                                 \
            if (cpu_msm && mode != SC_MONT) {                                                 \
                G##_jac cpu;                                                                  \
                cuzk_err ce = G##_msm(&cpu, pts + 3, sc, n, 0);                               \
                CHECK(ce == CUZK_OK);                                                         \
                ok &= G##_check_point("cpu-msm", n, out, &cpu);                               \
            }                                                                                 \
            printf("  %-13s n=%-8zu %-12s %s  (gpu %.1f ms, cpu gen %.2f s)%s%s\n", #G, n,    \
                   scname[mode], ok ? "ok" : "MISMATCH", (t3 - t2) * 1e3, t1 - t0,            \
                   tab_copies < 0 ? "" : " tables",                                           \
                   !msm_flags  ? ""                                                           \
                   : msm_layout == 1 ? " split, first quarter 0"                              \
                   : msm_layout == 2 ? " split, last 3/4 0"                                   \
                   : msm_layout == 3 ? " split, first tenth 99% 0"                            \
                                     : " split");                                             \
        }                                                                                     \
        cuzk_gpu_points_free(gp);                                                             \
        free(t), free(sv), free(pts), free(sc);                                               \
    }

GPU_GROUP_TESTS(bn254_g1, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G1)
GPU_GROUP_TESTS(bn254_g2, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G2)
GPU_GROUP_TESTS(bls12_381_g1, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G1)
GPU_GROUP_TESTS(bls12_381_g2, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G2)

/* ---- Streamed sets (cuzk_gpu_points_host): the same MSM over the points kept in page-locked
 * host memory and streamed in chunks of the whole range, a half, a third, a seventh and 65537
 * points (not a divisor), with `lead` points at infinity in front (C's set), must equal the
 * resident set's and the structured reference; a resident MSM flagged CUZK_GPU_SCALARS_SAME
 * after it reads the same upload; a scalar not below r in the last chunk is found at the same
 * index as the resident MSM finds it. A batch of three vectors (cuzk_gpu_msm_batch: the
 * scalars, zeros, the scalars) over the streamed and the resident set gives each vector's sum,
 * and a bad scalar in the second fails it naming that vector. */
#define GPU_STREAM_TEST(G, FR, CURVE, GROUP)                                                  \
    static void G##_test_stream(size_t n, size_t lead, int mode)                              \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        const size_t m = lead + n, pb = cuzk_gpu_point_bytes(CURVE, GROUP);                   \
        FR##_t *t = malloc(n * sizeof *t), *sv = malloc(m * sizeof *sv);                      \
        uint8_t *sc = malloc(m * 32);                                                         \
        void *host = NULL;                                                                    \
        cuzk_err e = cuzk_gpu_host_alloc(ctx, n * pb, &host, &eb);                            \
        CHECK_MSG(e == CUZK_OK, "host_alloc: %s", eb.msg);                                    \
        if (e) {                                                                              \
            free(t), free(sv), free(sc);                                                      \
            return;                                                                           \
        }                                                                                     \
        G##_affine *pts = host;                                                               \
        G##_gen(n, t, pts);                                                                   \
        G##_scalars(m, mode, sc, sv);                                                         \
        FR##_t acc, p;                                                                        \
        FR##_set_zero(&acc);                                                                  \
        for (size_t i = 0; i < n; i++) {                                                      \
            FR##_mul(&p, &sv[lead + i], &t[i]);                                               \
            FR##_add(&acc, &acc, &p);                                                         \
        }                                                                                     \
        G##_jac g, want;                                                                      \
        G##_from_affine(&g, &G##_GEN);                                                        \
        uint64_t k[4];                                                                        \
        FR##_to_canonical(k, &acc);                                                           \
        G##_mul_limbs(&want, &g, k, 4);                                                       \
        const unsigned fl = mode == SC_MONT ? CUZK_GPU_SCALARS_MONT : 0;                      \
        cuzk_gpu_points *gr = NULL;                                                           \
        uint64_t res[36], out[36];                                                            \
        e = cuzk_gpu_points_upload_ex(ctx, CURVE, GROUP, lead, pts, n, &gr, &eb);             \
        if (!e)                                                                               \
            e = cuzk_gpu_msm(ctx, gr, 0, m, sc, fl, res, &eb);                                \
        CHECK_MSG(e == CUZK_OK, "resident: %s", eb.msg);                                      \
        int ok = !e && G##_check_point("stream: resident", m, res, &want);                    \
        const size_t chunks[5] = {m, (m + 1) / 2, (m + 2) / 3, (m + 6) / 7, 65537};           \
        double ms[5] = {0};                                                                   \
        for (int c = 0; c < 5 && !e; c++) {                                                   \
            cuzk_gpu_points *gs = NULL;                                                       \
            e = cuzk_gpu_points_host(ctx, CURVE, GROUP, lead, pts, n, chunks[c], &gs, &eb);   \
            CHECK_MSG(e == CUZK_OK, "points_host: %s", eb.msg);                               \
            if (e)                                                                            \
                break;                                                                        \
            CHECK(cuzk_gpu_points_streamed(gs) && !cuzk_gpu_points_streamed(gr) &&            \
                  cuzk_gpu_points_count(gs) == m &&                                           \
                  cuzk_gpu_points_bytes(gs) == (m + 31) / 32 * 4);                            \
            CHECK(cuzk_gpu_points_tables(gs, 0, &eb) == CUZK_OK &&                            \
                  cuzk_gpu_points_copies(gs) == 1);                                           \
            double a = now();                                                                 \
            e = cuzk_gpu_msm(ctx, gs, 0, m, sc, fl, out, &eb);                                \
            ms[c] = (now() - a) * 1e3;                                                        \
            CHECK_MSG(e == CUZK_OK, "streamed, chunks of %zu: %s", chunks[c], eb.msg);        \
            if (!e) {                                                                         \
                ok &= G##_check_point("stream: streamed", chunks[c], out, &want);             \
                /* the resident MSM over the same scalars, from the streamed one's upload */  \
                e = cuzk_gpu_msm(ctx, gr, 0, m, sc, fl | CUZK_GPU_SCALARS_SAME, out, &eb);    \
                CHECK_MSG(e == CUZK_OK, "resident after streamed: %s", eb.msg);               \
                ok &= !e && G##_check_point("stream: resident after", m, out, &want);         \
            }                                                                                 \
            if (!e && c == 2) {                                                               \
                /* a batch of three over both sets: the scalars, zeros, the scalars again */  \
                const size_t L = cuzk_gpu_point_limbs(CURVE, GROUP);                          \
                uint8_t *zero = calloc(m, 32);                                                \
                const void *vec[3] = {sc, zero, sc};                                          \
                uint64_t bo[3 * 36];                                                          \
                for (int r = 0; r < 2 && zero; r++) {                                         \
                    cuzk_err eb2 = cuzk_gpu_msm_batch(ctx, r ? gr : gs, 0, m, 3, vec, fl, bo, \
                                                      &eb);                                   \
                    CHECK_MSG(eb2 == CUZK_OK, "batch (%s): %s", r ? "resident" : "streamed",  \
                              eb.msg);                                                        \
                    int zinf = 1;                                                             \
                    for (size_t i = 2 * L / 3; i < L; i++)                                    \
                        zinf &= bo[L + i] == 0;                                               \
                    ok &= !eb2 && zinf &&                                                     \
                          G##_check_point("stream: batch vector 0", m, bo, &want) &&          \
                          G##_check_point("stream: batch vector 2", m, bo + 2 * L, &want);    \
                    if (mode != SC_MONT) { /* a bad scalar names its vector */                \
                        uint8_t keep[32];                                                     \
                        memcpy(keep, zero + 32 * (m - 3), 32);                                \
                        memset(zero + 32 * (m - 3), 0xff, 32);                                \
                        eb2 = cuzk_gpu_msm_batch(ctx, r ? gr : gs, 0, m, 3, vec,              \
                                                 CUZK_GPU_SCALARS_CHECK, bo, &eb);            \
                        CHECK_MSG(eb2 == CUZK_NON_CANONICAL && strstr(eb.msg, "vector 1"),    \
                                  "batch bad scalar (%s): %d %s", r ? "resident" : "streamed", \
                                  eb2, eb.msg);                                               \
                        memcpy(zero + 32 * (m - 3), keep, 32);                                \
                    }                                                                         \
                }                                                                             \
                free(zero);                                                                   \
            }                                                                                 \
            if (!e && c == 3 && mode != SC_MONT) {                                            \
                uint8_t keep[32];                                                             \
                memcpy(keep, sc + 32 * (m - 5), 32);                                          \
                memset(sc + 32 * (m - 5), 0xff, 32);                                          \
                cuzk_err er = cuzk_gpu_msm(ctx, gr, 0, m, sc, CUZK_GPU_SCALARS_CHECK, out, &eb); \
                uint64_t br = cuzk_gpu_bad_scalar(ctx);                                       \
                cuzk_err es = cuzk_gpu_msm(ctx, gs, 0, m, sc, CUZK_GPU_SCALARS_CHECK, out, &eb); \
                uint64_t bs = cuzk_gpu_bad_scalar(ctx);                                       \
                CHECK_MSG(er == CUZK_NON_CANONICAL && es == CUZK_NON_CANONICAL &&             \
                              br == m - 5 && bs == m - 5,                                     \
                          "bad scalar: resident %d at %llu, streamed %d at %llu", er,         \
                          (unsigned long long)br, es, (unsigned long long)bs);                \
                memcpy(sc + 32 * (m - 5), keep, 32);                                          \
            }                                                                                 \
            cuzk_gpu_points_free(gs);                                                         \
        }                                                                                     \
        printf("  %-13s n=%-8zu lead %-3zu %-9s streamed %s  (ms by chunks of 1/1, 1/2, 1/3, " \
               "1/7, 65537: %.1f %.1f %.1f %.1f %.1f)\n",                                     \
               #G, m, lead, scname[mode], ok ? "ok" : "MISMATCH", ms[0], ms[1], ms[2], ms[3], \
               ms[4]);                                                                        \
        cuzk_gpu_points_free(gr);                                                             \
        cuzk_gpu_host_free(ctx, host);                                                        \
        free(t), free(sv), free(sc);                                                          \
    }

GPU_STREAM_TEST(bn254_g1, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G1)
GPU_STREAM_TEST(bn254_g2, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G2)
GPU_STREAM_TEST(bls12_381_g1, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G1)
GPU_STREAM_TEST(bls12_381_g2, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G2)

static void test_stream(void)
{
    const size_t n = (size_t)1 << 20;
    bn254_g1_test_stream(n, 0, SC_RANDOM);
    bn254_g1_test_stream(n - 3, 9, SC_SPARSE);
    bls12_381_g1_test_stream(n, 0, SC_MONT);
    bls12_381_g1_test_stream(n, 5, SC_SPARSE);
    bn254_g2_test_stream(n, 0, SC_RANDOM);
    bls12_381_g2_test_stream(n, 3, SC_RANDOM);
}

/* ---- Shared scalars (CUZK_GPU_SCALARS_SAME): A, B1, B2 and C of a proof reuse one upload and
 * one sort. Each result is checked against the CPU MSM on the same inputs: a G2 MSM reusing a
 * G1 MSM's preparation, a suffix read from the last upload, a flagged MSM whose scalars are
 * not those of the last one (a fresh buffer, so nothing may be reused), and the flag after an
 * unrelated MSM overwrote the scratch. */
#define GPU_SHARED_TEST(G1, G2, FR, CURVE)                                                    \
    static void G1##_test_shared(size_t n)                                                   \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        FR##_t *t = malloc(n * sizeof *t), *sv = malloc(n * sizeof *sv);                      \
        G1##_affine *p1 = malloc(n * sizeof *p1);                                             \
        G2##_affine *p2 = malloc(n * sizeof *p2);                                             \
        uint8_t *sc = malloc(n * 32), *sc2 = malloc(n * 32);                                  \
        G1##_gen(n, t, p1);                                                                   \
        G2##_gen(n, t, p2);                                                                   \
        G1##_scalars(n, SC_SPARSE, sc, sv);                                                   \
        G1##_scalars(n, SC_RANDOM, sc2, sv);                                                  \
        cuzk_gpu_points *g1 = NULL, *g2 = NULL;                                               \
        int ok = cuzk_gpu_points_upload(ctx, CURVE, CUZK_GPU_G1, p1, n, &g1, &eb) == 0 &&     \
                 cuzk_gpu_points_upload(ctx, CURVE, CUZK_GPU_G2, p2, n, &g2, &eb) == 0;       \
        CHECK_MSG(ok, "upload: %s", eb.msg);                                                  \
        /* With tables: G1's full, G2 none (its MSMs must sort their own windows again). */   \
        ok = ok && make_tables(g1, n, CURVE, CUZK_GPU_G1, #G1 " shared");                    \
        uint64_t out[36];                                                                     \
        G1##_jac w1;                                                                          \
        G2##_jac w2;                                                                          \
        const size_t k = 37; /* C's suffix: scalars k .. n over points k .. n */              \
        if (ok) {                                                                             \
            CHECK(cuzk_gpu_msm(ctx, g1, 0, n, sc, 0, out, &eb) == 0);                         \
            CHECK(G1##_msm(&w1, p1, sc, n, 0) == 0);                                          \
            G1##_check_point("shared: first", n, out, &w1);                                  \
            CHECK(cuzk_gpu_msm(ctx, g2, 0, n, sc, CUZK_GPU_SCALARS_SAME, out, &eb) == 0);     \
            CHECK(G2##_msm(&w2, p2, sc, n, 0) == 0);                                          \
            G2##_check_point("shared: G2 reusing G1's sort", n, out, &w2);                   \
            CHECK(cuzk_gpu_msm(ctx, g1, k, n - k, sc + 32 * k, CUZK_GPU_SCALARS_SAME, out,    \
                               &eb) == 0);                                                    \
            CHECK(G1##_msm(&w1, p1 + k, sc + 32 * k, n - k, 0) == 0);                         \
            G1##_check_point("shared: suffix of the upload", n - k, out, &w1);               \
            CHECK(cuzk_gpu_msm(ctx, g1, 0, n, sc2, CUZK_GPU_SCALARS_SAME, out, &eb) == 0);    \
            CHECK(G1##_msm(&w1, p1, sc2, n, 0) == 0);                                         \
            G1##_check_point("shared: other scalars", n, out, &w1);                          \
            CHECK(cuzk_gpu_msm(ctx, g2, 0, n / 2, sc + 32, 0, out, &eb) == 0);                \
            CHECK(cuzk_gpu_msm(ctx, g2, 0, n, sc2, CUZK_GPU_SCALARS_SAME, out, &eb) == 0);    \
            CHECK(G2##_msm(&w2, p2, sc2, n, 0) == 0);                                         \
            G2##_check_point("shared: after another MSM", n, out, &w2);                      \
            /* Staged uploads (cuzk_gpu_scalars_stage) into one buffer, refilled: each MSM    \
             * flagged SAME must read the buffer's new scalars, never the last preparation. */ \
            uint8_t *buf = malloc(n * 32);                                                    \
            for (int round = 0; round < 2 && buf; round++) {                                  \
                memcpy(buf, round ? sc2 : sc, n * 32);                                        \
                for (size_t lo = 0; lo < n; lo += 1000)                                       \
                    CHECK(cuzk_gpu_scalars_stage(ctx, buf, n, lo, lo + 1000 < n ? lo + 1000 : n, \
                                                 &eb) == 0);                                  \
                CHECK(cuzk_gpu_msm(ctx, g1, 0, n, buf, CUZK_GPU_SCALARS_SAME, out, &eb) == 0); \
                CHECK(G1##_msm(&w1, p1, round ? sc2 : sc, n, 0) == 0);                       \
                G1##_check_point("shared: staged upload", n, out, &w1);                       \
                CHECK(cuzk_gpu_msm(ctx, g2, 0, n, buf, CUZK_GPU_SCALARS_SAME, out, &eb) == 0); \
                CHECK(G2##_msm(&w2, p2, round ? sc2 : sc, n, 0) == 0);                       \
                G2##_check_point("shared: staged upload, G2", n, out, &w2);                   \
            }                                                                                 \
            /* Out of order: refused, and nothing stale is read after it. */                  \
            if (buf) {                                                                        \
                CHECK(cuzk_gpu_scalars_stage(ctx, buf, n, 0, 10, &eb) == 0);                  \
                CHECK(cuzk_gpu_scalars_stage(ctx, buf, n, 20, n, &eb) == CUZK_INTERNAL);      \
                memcpy(buf, sc, n * 32);                                                      \
                CHECK(cuzk_gpu_msm(ctx, g1, 0, n, buf, CUZK_GPU_SCALARS_SAME, out, &eb) == 0); \
                CHECK(G1##_msm(&w1, p1, sc, n, 0) == 0);                                      \
                G1##_check_point("shared: after a refused staged upload", n, out, &w1);       \
            }                                                                                 \
            /* CUZK_GPU_SCALARS_CHECK: scalars not below r fail the MSM naming the lowest    \
             * index (r itself, all ones), also after a SAME upload and preparation of the    \
             * buffer; Montgomery scalars are not checked; the good scalars then pass. */     \
            if (buf) {                                                                        \
                uint64_t r_l[4];                                                              \
                FR##_t m1, o1;                                                                \
                FR##_set_one(&o1);                                                            \
                FR##_neg(&m1, &o1);                                                           \
                FR##_to_canonical(r_l, &m1);                                                  \
                r_l[0] += 1; /* r - 1 is even: now r */                                       \
                const size_t at[3][2] = {{n - 1, n - 1}, {3, n - 2}, {0, 0}};                 \
                for (int k = 0; k < 3; k++) {                                                 \
                    memcpy(buf, sc2, n * 32);                                                 \
                    memcpy(buf + 32 * at[k][0], r_l, 32);                                     \
                    memset(buf + 32 * at[k][1], 0xff, 32);                                    \
                    CHECK(cuzk_gpu_scalars_stage(ctx, buf, n, 0, n, &eb) == 0);               \
                    cuzk_err ce = cuzk_gpu_msm(ctx, g1, 0, n, buf,                            \
                                               CUZK_GPU_SCALARS_SAME | CUZK_GPU_SCALARS_CHECK, \
                                               out, &eb);                                     \
                    CHECK_MSG(ce == CUZK_NON_CANONICAL && cuzk_gpu_bad_scalar(ctx) == at[k][0], \
                              "checked scalars, bad at %zu: %s, index %llu (%s)", at[k][0],   \
                              cuzk_strerror(ce), (unsigned long long)cuzk_gpu_bad_scalar(ctx), \
                              eb.msg);                                                        \
                }                                                                             \
                memcpy(buf, sc2, n * 32);                                                     \
                CHECK(cuzk_gpu_msm(ctx, g1, 0, n, buf, CUZK_GPU_SCALARS_CHECK, out, &eb) == 0); \
                CHECK(cuzk_gpu_bad_scalar(ctx) == UINT64_MAX);                                \
                CHECK(G1##_msm(&w1, p1, sc2, n, 0) == 0);                                     \
                G1##_check_point("shared: checked scalars", n, out, &w1);                     \
                CHECK(cuzk_gpu_msm(ctx, g2, 0, n, buf, CUZK_GPU_SCALARS_SAME |                \
                                   CUZK_GPU_SCALARS_CHECK, out, &eb) == 0);                   \
                CHECK(G2##_msm(&w2, p2, sc2, n, 0) == 0);                                     \
                G2##_check_point("shared: checked scalars, G2 after G1", n, out, &w2);        \
                memset(buf, 0xff, 32); /* as Montgomery form: any 256 bits, never checked */  \
                CHECK(cuzk_gpu_msm(ctx, g1, 0, 1, buf, CUZK_GPU_SCALARS_MONT |                \
                                   CUZK_GPU_SCALARS_CHECK, out, &eb) == 0);                   \
            }                                                                                 \
            free(buf);                                                                        \
            printf("  %-13s n=%-8zu shared scalars checked%s\n", #G1 "+" #G2, n,             \
                   tab_copies < 0 ? "" : " (G1 with tables)");                               \
        }                                                                                     \
        cuzk_gpu_points_free(g1);                                                             \
        cuzk_gpu_points_free(g2);                                                             \
        free(t), free(sv), free(p1), free(p2), free(sc), free(sc2);                           \
    }
GPU_SHARED_TEST(bn254_g1, bn254_g2, bn254_fr, CUZK_GPU_BN254)
GPU_SHARED_TEST(bls12_381_g1, bls12_381_g2, bls12_381_fr, CUZK_GPU_BLS12_381)

/* ---- NTT and H per Fr. */
#define GPU_FR_TESTS(FR, CURVE)                                                               \
    static void FR##_rand(FR##_t *v)                                                          \
    {                                                                                         \
        FR##_from_u64(v, tu_rand64());                                                        \
        FR##_t w;                                                                             \
        FR##_from_u64(&w, tu_rand64());                                                       \
        FR##_mul(v, v, &w);                                                                   \
        FR##_from_u64(&w, tu_rand64());                                                       \
        FR##_add(v, v, &w);                                                                   \
    }                                                                                         \
    /* sum a_i x^i by Horner. */                                                              \
    static void FR##_horner(FR##_t *r, const FR##_t *a, size_t n, const FR##_t *x)            \
    {                                                                                         \
        FR##_set_zero(r);                                                                     \
        for (size_t i = n; i-- > 0;) {                                                        \
            FR##_mul(r, r, x);                                                                \
            FR##_add(r, r, &a[i]);                                                            \
        }                                                                                     \
    }                                                                                         \
    static void FR##_test_ntt(int logn)                                                       \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        size_t n = (size_t)1 << logn;                                                         \
        FR##_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);                        \
        FR##_t *c = malloc(n * sizeof *c);                                                    \
        for (size_t i = 0; i < n; i++)                                                        \
            FR##_rand(&a[i]);                                                                 \
        cuzk_gpu_fr *v = NULL;                                                                \
        cuzk_err e = cuzk_gpu_fr_alloc(ctx, CURVE, n, &v, &eb);                               \
        CHECK_MSG(e == CUZK_OK, "fr_alloc: %s", eb.msg);                                      \
        if (e)                                                                                \
            goto out;                                                                         \
        FR##_t w, sh;                                                                         \
        FR##_root_of_unity(&w, logn);                                                         \
        FR##_rand(&sh);                                                                       \
        for (int coset = 0; coset < 2; coset++) {                                             \
            e = cuzk_gpu_fr_upload(v, a, n, &eb);                                             \
            if (!e)                                                                           \
                e = cuzk_gpu_ntt(v, logn, CUZK_GPU_NTT_FORWARD, coset ? sh.l : NULL, &eb);    \
            if (!e)                                                                           \
                e = cuzk_gpu_fr_download(v, b, n, &eb);                                       \
            CHECK_MSG(e == CUZK_OK, "ntt: %s", eb.msg);                                       \
            if (e)                                                                            \
                goto out;                                                                     \
            int ok = 1;                                                                       \
            for (int s = 0; s < 6; s++) {                                                     \
                size_t j = s == 0 ? 0 : s == 1 ? n - 1 : tu_rand64() % n;                     \
                FR##_t x, y;                                                                  \
                FR##_pow_u64(&x, &w, j);                                                      \
                if (coset)                                                                    \
                    FR##_mul(&x, &x, &sh);                                                    \
                FR##_horner(&y, a, n, &x);                                                    \
                ok &= FR##_eq(&y, &b[j]);                                                     \
            }                                                                                 \
            CHECK_MSG(ok, "%s ntt 2^%d coset=%d vs definition", #FR, logn, coset);            \
            if (!coset && logn <= 24) {                                                       \
                FR##_domain d;                                                                \
                if (FR##_domain_init(&d, logn) == CUZK_OK) {                                  \
                    memcpy(c, a, n * sizeof *a);                                              \
                    FR##_ntt(&d, c, 0);                                                       \
                    int same = !memcmp(b, c, n * sizeof *c);                                  \
                    CHECK_MSG(same, "%s ntt 2^%d vs src/poly", #FR, logn);                    \
                    ok &= same;                                                               \
                    FR##_domain_free(&d);                                                     \
                }                                                                             \
            }                                                                                 \
            /* inverse of the same transform gives a back */                                  \
            e = cuzk_gpu_ntt(v, logn, CUZK_GPU_NTT_INVERSE, coset ? sh.l : NULL, &eb);        \
            if (!e)                                                                           \
                e = cuzk_gpu_fr_download(v, c, n, &eb);                                       \
            CHECK_MSG(e == CUZK_OK, "intt: %s", eb.msg);                                      \
            int rt = !e && !memcmp(a, c, n * sizeof *c);                                      \
            CHECK_MSG(rt, "%s intt(ntt) 2^%d coset=%d round trip", #FR, logn, coset);         \
            printf("  %-13s ntt 2^%-2d coset=%d %s\n", #FR, logn, coset,                      \
                   ok && rt ? "ok" : "MISMATCH");                                             \
        }                                                                                     \
    out:                                                                                      \
        cuzk_gpu_fr_free(v);                                                                  \
        free(a), free(b), free(c);                                                            \
    }                                                                                         \
    /* Naive H: coefficients by the O(N^2) inverse DFT, then evaluation at w_{2N} w^j. */     \
    static void FR##_naive_h(int logn, const FR##_t *a, const FR##_t *b, const FR##_t *c,     \
                             FR##_t *h)                                                       \
    {                                                                                         \
        size_t n = (size_t)1 << logn;                                                         \
        FR##_t w, wi, w2, ninv, nn;                                                           \
        FR##_root_of_unity(&w, logn);                                                         \
        FR##_inv(&wi, &w);                                                                    \
        FR##_root_of_unity(&w2, logn + 1);                                                    \
        FR##_from_u64(&nn, n);                                                                \
        FR##_inv(&ninv, &nn);                                                                 \
        const FR##_t *in[3] = {a, b, c};                                                      \
        FR##_t *ev[3], *co = malloc(n * sizeof *co);                                          \
        for (int k = 0; k < 3; k++) {                                                         \
            ev[k] = malloc(n * sizeof *co);                                                   \
            for (size_t i = 0; i < n; i++) {                                                  \
                FR##_t x;                                                                     \
                FR##_pow_u64(&x, &wi, i);                                                     \
                FR##_horner(&co[i], in[k], n, &x);                                            \
                FR##_mul(&co[i], &co[i], &ninv);                                              \
            }                                                                                 \
            for (size_t j = 0; j < n; j++) {                                                  \
                FR##_t x;                                                                     \
                FR##_pow_u64(&x, &w, j);                                                      \
                FR##_mul(&x, &x, &w2);                                                        \
                FR##_horner(&ev[k][j], co, n, &x);                                            \
            }                                                                                 \
        }                                                                                     \
        for (size_t j = 0; j < n; j++) {                                                      \
            FR##_mul(&h[j], &ev[0][j], &ev[1][j]);                                            \
            FR##_sub(&h[j], &h[j], &ev[2][j]);                                                \
        }                                                                                     \
        for (int k = 0; k < 3; k++)                                                           \
            free(ev[k]);                                                                      \
        free(co);                                                                             \
    }

GPU_FR_TESTS(bn254_fr, CUZK_GPU_BN254)
GPU_FR_TESTS(bls12_381_fr, CUZK_GPU_BLS12_381)

/* H on the GPU vs naive / src/poly, then the H MSM vs the structured-point identity. */
#define GPU_H_TEST(G, FR, CURVE)                                                              \
    static void G##_test_h(int logn)                                                          \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        size_t n = (size_t)1 << logn;                                                         \
        FR##_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *a),                        \
               *c = malloc(n * sizeof *a), *h = malloc(n * sizeof *a),                        \
               *want = malloc(n * sizeof *a), *t = malloc(n * sizeof *a);                     \
        G##_affine *pts = malloc(n * sizeof *pts);                                            \
        for (size_t i = 0; i < n; i++) {                                                      \
            FR##_rand(&a[i]);                                                                 \
            FR##_rand(&b[i]);                                                                 \
            FR##_rand(&c[i]);                                                                 \
        }                                                                                     \
        G##_gen(n, t, pts);                                                                   \
        cuzk_gpu_points *gp = NULL;                                                           \
        uint64_t out[36];                                                                     \
        cuzk_err e = cuzk_gpu_points_upload(ctx, CURVE, CUZK_GPU_G1, pts, n, &gp, &eb);       \
        if (!e)                                                                               \
            e = cuzk_gpu_h(ctx, CURVE, logn, a, b, c, h, gp, 0, out, &eb);                    \
        CHECK_MSG(e == CUZK_OK, "gpu_h: %s", eb.msg);                                         \
        if (!e) {                                                                             \
            int ok = 1;                                                                       \
            if (logn <= 9) {                                                                  \
                FR##_naive_h(logn, a, b, c, want);                                            \
                ok &= !memcmp(h, want, n * sizeof *h);                                        \
                CHECK_MSG(ok, "%s H 2^%d vs naive", #FR, logn);                               \
            }                                                                                 \
            FR##_domain d;                                                                    \
            if (FR##_domain_init(&d, logn) == CUZK_OK) {                                      \
                CHECK(FR##_groth16_h(&d, want, a, n, b, n, c, n, 0) == CUZK_OK);              \
                int same = !memcmp(h, want, n * sizeof *h);                                   \
                CHECK_MSG(same, "%s H 2^%d vs src/poly", #FR, logn);                          \
                ok &= same;                                                                   \
                FR##_domain_free(&d);                                                         \
            }                                                                                 \
            FR##_t acc, p;                                                                    \
            FR##_set_zero(&acc);                                                              \
            for (size_t i = 0; i < n; i++) {                                                  \
                FR##_mul(&p, &h[i], &t[i]);                                                   \
                FR##_add(&acc, &acc, &p);                                                     \
            }                                                                                 \
            G##_jac g, wantp;                                                                 \
            G##_from_affine(&g, &G##_GEN);                                                    \
            uint64_t k[4];                                                                    \
            FR##_to_canonical(k, &acc);                                                       \
            G##_mul_limbs(&wantp, &g, k, 4);                                                  \
            ok &= G##_check_point("H msm", n, out, &wantp);                                   \
            printf("  %-13s H 2^%-2d + H MSM %s\n", #FR, logn, ok ? "ok" : "MISMATCH");       \
        }                                                                                     \
        cuzk_gpu_points_free(gp);                                                             \
        free(a), free(b), free(c), free(h), free(want), free(t), free(pts);                   \
    }

GPU_H_TEST(bn254_g1, bn254_fr, CUZK_GPU_BN254)
GPU_H_TEST(bls12_381_g1, bls12_381_fr, CUZK_GPU_BLS12_381)

/* Synthesis on the GPU (cuzk_gpu_h_witness) against the same sums on the host: random rows
 * (empty ones, a long one, repeated signals), a = sum coef * w / R, c = a b, then the H MSM
 * against cuzk_gpu_h over the host's a, b, c. Once with the witness read from a preceding MSM's
 * upload (CUZK_GPU_SCALARS_SAME) and once uploaded by the call itself. */
typedef struct {
    uint32_t sig, pad;
    uint64_t v[4];
} synth_rec;

#define GPU_SYNTH_TEST(G, FR, CURVE)                                                          \
    static void G##_test_synth(int logn, int same)                                            \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        size_t n = (size_t)1 << logn, ns = n / 2 + 3;                                         \
        uint64_t *rp[2];                                                                      \
        synth_rec *rec[2];                                                                    \
        FR##_t *w = malloc(ns * sizeof *w), *want[3], *got[3];                                \
        for (size_t i = 0; i < ns; i++) {                                                     \
            FR##_rand(&w[i]);                                                                 \
            FR##_to_canonical(w[i].l, &w[i]); /* the witness is canonical */                  \
        }                                                                                     \
        for (int k = 0; k < 3; k++) {                                                         \
            want[k] = calloc(n, sizeof(FR##_t));                                              \
            got[k] = malloc(n * sizeof(FR##_t));                                              \
        }                                                                                     \
        for (int m = 0; m < 2; m++) {                                                         \
            rp[m] = malloc((n + 1) * sizeof(uint64_t));                                       \
            rec[m] = malloc((6 * n + 400) * sizeof(synth_rec));                               \
            rp[m][0] = 0;                                                                     \
            for (size_t r = 0; r < n; r++) {                                                  \
                size_t len = r == n / 3 ? 300 : (size_t)(tu_rand64() % 6);                    \
                for (size_t j = 0; j < len; j++) {                                            \
                    synth_rec *q = &rec[m][rp[m][r] + j];                                     \
                    memset(q, 0, sizeof *q);                                                  \
                    q->sig = j == 1 ? q[-1].sig : (uint32_t)(tu_rand64() % ns);               \
                    FR##_t cv, t;                                                             \
                    FR##_rand(&cv);                                                           \
                    memcpy(q->v, cv.l, 32);                                                   \
                    FR##_mul(&t, &cv, &w[q->sig]);                                            \
                    FR##_add(&want[m][r], &want[m][r], &t);                                   \
                }                                                                             \
                rp[m][r + 1] = rp[m][r] + len;                                                \
            }                                                                                 \
        }                                                                                     \
        for (size_t r = 0; r < n; r++)                                                        \
            FR##_mul(&want[2][r], &want[0][r], &want[1][r]);                                  \
        G##_affine *pts = malloc(n * sizeof *pts);                                            \
        FR##_t *t = malloc(n * sizeof *t);                                                    \
        G##_gen(n, t, pts);                                                                   \
        cuzk_gpu_points *gp = NULL;                                                           \
        cuzk_gpu_rows *rows = NULL;                                                           \
        uint64_t out[36], out2[36];                                                           \
        const uint64_t *const rpc[2] = {rp[0], rp[1]};                                        \
        const void *const recc[2] = {rec[0], rec[1]};                                         \
        void *const abc[3] = {got[0], got[1], got[2]};                                        \
        cuzk_err e = cuzk_gpu_points_upload(ctx, CURVE, CUZK_GPU_G1, pts, n, &gp, &eb);       \
        if (!e)                                                                               \
            e = cuzk_gpu_rows_upload(ctx, CURVE, n, ns, rpc, recc, sizeof(synth_rec), &rows,  \
                                     &eb);                                                    \
        if (!e && same) /* an MSM over the witness first: its upload is reused */             \
            e = cuzk_gpu_msm(ctx, gp, 0, ns < n ? ns : n, w, 0, out2, &eb);                   \
        if (!e)                                                                               \
            e = cuzk_gpu_h_witness(ctx, rows, logn, w, same ? CUZK_GPU_SCALARS_SAME : 0, abc, \
                                   gp, 0, out, &eb);                                          \
        CHECK_MSG(e == CUZK_OK, "gpu synth: %s", eb.msg);                                     \
        if (!e) {                                                                             \
            int ok = 1;                                                                       \
            for (int k = 0; k < 3; k++) {                                                     \
                int same_k = !memcmp(got[k], want[k], n * sizeof(FR##_t));                    \
                CHECK_MSG(same_k, "%s synth 2^%d: %c differs", #FR, logn, "abc"[k]);          \
                ok &= same_k;                                                                 \
            }                                                                                 \
            e = cuzk_gpu_h(ctx, CURVE, logn, want[0], want[1], want[2], NULL, gp, 0, out2,    \
                           &eb);                                                              \
            CHECK_MSG(e == CUZK_OK, "gpu_h: %s", eb.msg);                                     \
            G##_jac p1, p2;                                                                   \
            memcpy(&p1, out, sizeof p1);                                                      \
            memcpy(&p2, out2, sizeof p2);                                                     \
            int hs = !e && G##_eq(&p1, &p2) && (G##_is_inf(&p1) || G##_is_on_curve(&p1));     \
            CHECK_MSG(hs, "%s synth 2^%d: H MSM differs from cuzk_gpu_h's", #FR, logn);       \
            ok &= hs;                                                                         \
            printf("  %-13s synthesis 2^%-2d (%s witness) + H %s\n", #FR, logn,              \
                   same ? "shared" : "own", ok ? "ok" : "MISMATCH");                          \
        }                                                                                     \
        /* A domain that does not match the rows is refused. */                               \
        if (rows)                                                                             \
            CHECK(cuzk_gpu_h_witness(ctx, rows, logn + 1, w, 0, NULL, NULL, 0, out, &eb) ==   \
                  CUZK_SIZE_MISMATCH);                                                        \
        cuzk_gpu_rows_free(rows);                                                             \
        cuzk_gpu_points_free(gp);                                                             \
        for (int k = 0; k < 3; k++)                                                           \
            free(want[k]), free(got[k]);                                                      \
        free(rp[0]), free(rp[1]), free(rec[0]), free(rec[1]), free(w), free(pts), free(t);    \
    }

GPU_SYNTH_TEST(bn254_g1, bn254_fr, CUZK_GPU_BN254)
GPU_SYNTH_TEST(bls12_381_g1, bls12_381_fr, CUZK_GPU_BLS12_381)

/* cuzk_gpu_scratch_estimate (the memory budgets' figure) bounds what a context really grows
 * to: a fresh context runs a G2 and a G1 MSM of n points (scalars below 2^248, all outside
 * {0, 1}: the largest sort and bucket arrays; points at infinity, which cost the same scratch)
 * and the H step of 2^logd, then holds no more scratch than the estimate, and not less than a
 * third of it (an estimate that large would waste the GPU key budget). */
static void test_scratch_estimate(cuzk_gpu_curve curve, size_t n, int logd)
{
    cuzk_errbuf eb = {{0}};
    cuzk_gpu_ctx *c2 = NULL;
    cuzk_err e = cuzk_gpu_open(&c2, 0, &eb);
    CHECK_MSG(e == CUZK_OK, "open: %s", eb.msg);
    if (e)
        return;
    const size_t d = (size_t)1 << logd, m = n > d ? n : d;
    uint8_t *pts = calloc(n, 192), *sc = malloc(32 * m * 3);
    if (!pts || !sc) {
        CHECK_MSG(0, "scratch estimate: out of host memory");
        free(pts), free(sc), cuzk_gpu_close(c2);
        return;
    }
    tu_rand_bytes(sc, 32 * m * 3);
    for (size_t i = 0; i < 3 * m; i++)
        sc[32 * i + 31] = 0;
    for (int g = 0; g < 2; g++) {
        cuzk_gpu_points *gp = NULL;
        e = cuzk_gpu_points_upload(c2, curve, g ? CUZK_GPU_G1 : CUZK_GPU_G2, pts, n, &gp, &eb);
        CHECK_MSG(e == CUZK_OK, "scratch estimate: upload: %s", eb.msg);
        uint64_t out[36];
        if (!e) {
            e = cuzk_gpu_msm(c2, gp, 0, n, sc, 0, out, &eb);
            CHECK_MSG(e == CUZK_OK, "scratch estimate: msm: %s", eb.msg);
        }
        cuzk_gpu_points_free(gp);
    }
    e = cuzk_gpu_h(c2, curve, logd, sc, sc + 32 * m, sc + 64 * m, NULL, NULL, 0, NULL, &eb);
    CHECK_MSG(e == CUZK_OK, "scratch estimate: h: %s", eb.msg);
    const uint64_t used = cuzk_gpu_scratch_bytes(c2);
    const uint64_t est = cuzk_gpu_scratch_estimate(curve, n, d);
    CHECK_MSG(used <= est, "%s n=%zu d=2^%d: scratch %llu bytes > estimate %llu",
              curve == CUZK_GPU_BN254 ? "bn254" : "bls12_381", n, logd,
              (unsigned long long)used, (unsigned long long)est);
    CHECK_MSG(est <= 3 * used + (64u << 20), "%s n=%zu: estimate %llu far above scratch %llu",
              curve == CUZK_GPU_BN254 ? "bn254" : "bls12_381", n, (unsigned long long)est,
              (unsigned long long)used);
    printf("  scratch      %-9s n=%-8zu d=2^%-2d used %.1f MiB, estimate %.1f MiB\n",
           curve == CUZK_GPU_BN254 ? "bn254" : "bls12_381", n, logd, used / 1048576.0,
           est / 1048576.0);
    free(pts), free(sc);
    cuzk_gpu_close(c2);
}

#ifdef CUZK_HAVE_CUDA
/* ---- Host helpers of the CUDA backend, checked without a device (so in CI too). */
void cuzk__gpu_fp_inv(int curve, int fp2, uint64_t *x); /* gpu_consts.c */

/* The batch-affine tree's root inversion (cuzk__gpu_fp_inv): x * inv(x) == 1 in Fp and Fp2 of
 * both curves, for canonical inputs and inputs with coordinates in [p, 2p) (the device's lazy
 * field), and inv(0) == 0. */
#define GPU_HOST_INV_TEST(FP, F2, CURVE)                                                      \
    static void FP##_host_inv_test(void)                                                      \
    {                                                                                         \
        for (int it = 0; it < 300; it++) {                                                    \
            FP##_t c[2], lz[2];                                                               \
            int lazy = it % 3 == 1;                                                           \
            for (int k = 0; k < 2; k++) {                                                     \
                uint64_t l[sizeof c[k].l / 8];                                                \
                do {                                                                          \
                    tu_rand_bytes(l, sizeof l);                                               \
                    l[sizeof l / 8 - 1] &= FP##_P.l[sizeof l / 8 - 1];                        \
                } while (!FP##_limbs_lt_p(l));                                                \
                memcpy(c[k].l, l, sizeof l);                                                  \
                lz[k] = c[k];                                                                 \
                if (lazy) { /* c + p: the same residue held in [p, 2p) */                     \
                    unsigned __int128 cy = 0;                                                 \
                    for (size_t i = 0; i < sizeof l / 8; i++) {                               \
                        cy += (unsigned __int128)c[k].l[i] + FP##_P.l[i];                     \
                        lz[k].l[i] = (uint64_t)cy;                                            \
                        cy >>= 64;                                                            \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            if (it == 0)                                                                      \
                memset(c, 0, sizeof c), memset(lz, 0, sizeof lz);                             \
            /* Fp */                                                                          \
            FP##_t x = lz[0], r;                                                              \
            cuzk__gpu_fp_inv(CURVE, 0, x.l);                                                  \
            FP##_mul(&r, &x, &c[0]);                                                          \
            CHECK_MSG(it == 0 ? FP##_is_zero(&x) : FP##_is_one(&r),                           \
                      #FP " host inverse, input %d%s", it, lazy ? " (lazy)" : "");            \
            /* Fp2 */                                                                         \
            uint64_t w[2 * sizeof c[0].l / 8];                                                \
            memcpy(w, lz[0].l, sizeof c[0].l);                                                \
            memcpy(w + sizeof c[0].l / 8, lz[1].l, sizeof c[0].l);                            \
            cuzk__gpu_fp_inv(CURVE, 1, w);                                                    \
            F2##_t a, ia, p2;                                                                 \
            a.c0 = c[0];                                                                      \
            a.c1 = c[1];                                                                      \
            memcpy(ia.c0.l, w, sizeof c[0].l);                                                \
            memcpy(ia.c1.l, w + sizeof c[0].l / 8, sizeof c[0].l);                            \
            F2##_mul(&p2, &ia, &a);                                                           \
            CHECK_MSG(it == 0 ? F2##_is_zero(&ia) : F2##_is_one(&p2),                         \
                      #F2 " host inverse, input %d%s", it, lazy ? " (lazy)" : "");            \
        }                                                                                     \
    }
GPU_HOST_INV_TEST(bn254_fp, bn254_fp2, 0)
GPU_HOST_INV_TEST(bls12_381_fp, bls12_381_fp2, 1)
#endif

/* A second context with test-only settings o (cuzk__gpu_test_set) and, when chunk is not 0, the
 * batch-affine setting (chunk, quads) (cuzk_gpu_ba_set); NULL when that failed. */
static cuzk_gpu_ctx *open_with(const cuzk__gpu_test_options *o, uint64_t chunk, int quads)
{
    cuzk_errbuf eb = {{0}};
    cuzk_gpu_ctx *c = NULL;
    cuzk_err e = cuzk_gpu_open(&c, 0, &eb);
    if (!e)
        e = cuzk__gpu_test_set(c, o, &eb);
    if (!e && chunk)
        e = cuzk_gpu_ba_set(c, chunk, quads, &eb);
    CHECK_MSG(e == CUZK_OK, "open (test settings): %s", eb.msg);
    if (e && c) {
        cuzk_gpu_close(c);
        c = NULL;
    }
    return c;
}

/* Values out of range are refused with INVALID_ARGUMENT and a message naming them. */
static void test_refused(void)
{
    cuzk_errbuf eb = {{0}};
    static const cuzk__gpu_test_options bad[] = {
        {0, 96, 0, 0}, {0, 256, 0, 0}, {0, 2, 0, 0}, {0, 0, 7, 0}, {0, 0, 1, 0}, {0, 0, 0, 7}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cuzk_err e = cuzk__gpu_test_set(ctx, &bad[i], &eb);
        CHECK_MSG(e == CUZK_INVALID_ARGUMENT && strstr(eb.msg, "expected"),
                  "test options %zu refused: %d %s", i, (int)e, eb.msg);
    }
    static const struct {
        uint64_t chunk;
        int quads;
    } bad_ba[] = {{0, 0}, {CUZK_GPU_BA_CHUNK_MAX + 1, 0}, {20000, 4}, {20000, -1}};
    for (size_t i = 0; i < sizeof bad_ba / sizeof bad_ba[0]; i++) {
        cuzk_err e = cuzk_gpu_ba_set(ctx, bad_ba[i].chunk, bad_ba[i].quads, &eb);
        CHECK_MSG(e == CUZK_INVALID_ARGUMENT && strstr(eb.msg, "expected"),
                  "cuzk_gpu_ba_set(%llu, %d) refused: %d %s",
                  (unsigned long long)bad_ba[i].chunk, bad_ba[i].quads, (int)e, eb.msg);
    }
    uint64_t chunk;
    int quads;
    cuzk_gpu_ba_setting(ctx, &chunk, &quads);
    CHECK_MSG(chunk == CUZK_GPU_BA_PRE_BYTES && quads == CUZK_GPU_BA_QUADS_DEFAULT,
              "the setting after refusals: %llu %d", (unsigned long long)chunk, quads);
}

/* BN254 G1 over n random points and scalars through ctx with `flags` added to each MSM that
 * uploads: a scalar not below r at each of bad_at[] refused and named by its index in the
 * whole MSM; the checked MSM right; an MSM flagged SAME after it (the upload kept) right; and
 * one over the suffix from `off` inside that upload right. `what` names the MSM's kind. */
static void bn254_checked_shared(size_t n, const size_t bad_at[3], unsigned flags, size_t off,
                                 const char *what)
{
    cuzk_errbuf eb = {{0}};
    bn254_fr_t *t = malloc(n * sizeof *t), *sv = malloc(n * sizeof *sv);
    bn254_g1_affine *p = malloc(n * sizeof *p);
    uint8_t *sc = malloc(n * 32);
    cuzk_gpu_points *gp = NULL;
    bn254_g1_gen(n, t, p);
    bn254_g1_scalars(n, SC_RANDOM, sc, sv);
    cuzk_err e = cuzk_gpu_points_upload(ctx, CUZK_GPU_BN254, CUZK_GPU_G1, p, n, &gp, &eb);
    CHECK_MSG(e == CUZK_OK, "upload: %s", eb.msg);
    uint64_t out[36];
    for (int k = 0; k < 3 && !e; k++) {
        uint8_t save[32];
        memcpy(save, sc + 32 * bad_at[k], 32);
        memset(sc + 32 * bad_at[k], 0xff, 32); /* 2^256 - 1: not below r */
        cuzk_err be = cuzk_gpu_msm(ctx, gp, 0, n, sc, flags | CUZK_GPU_SCALARS_CHECK, out, &eb);
        CHECK_MSG(be == CUZK_NON_CANONICAL && cuzk_gpu_bad_scalar(ctx) == bad_at[k] &&
                      strstr(eb.msg, "not below r"),
                  "%s, bad scalar %zu: %d, %llu, %s", what, bad_at[k], (int)be,
                  (unsigned long long)cuzk_gpu_bad_scalar(ctx), eb.msg);
        memcpy(sc + 32 * bad_at[k], save, 32);
    }
    if (!e) {
        char name[96];
        bn254_g1_jac w;
        CHECK(cuzk_gpu_msm(ctx, gp, 0, n, sc, flags | CUZK_GPU_SCALARS_CHECK, out, &eb) == 0);
        CHECK(bn254_g1_msm(&w, p, sc, n, 0) == 0);
        snprintf(name, sizeof name, "%s, checked", what);
        bn254_g1_check_point(name, n, out, &w);
        CHECK(cuzk_gpu_msm(ctx, gp, 0, n, sc, CUZK_GPU_SCALARS_SAME, out, &eb) == 0);
        snprintf(name, sizeof name, "%s, then SAME", what);
        bn254_g1_check_point(name, n, out, &w);
        CHECK(cuzk_gpu_msm(ctx, gp, off, n - off, sc + 32 * off, CUZK_GPU_SCALARS_SAME | flags,
                           out, &eb) == 0);
        CHECK(bn254_g1_msm(&w, p + off, sc + 32 * off, n - off, 0) == 0);
        snprintf(name, sizeof name, "%s, then a suffix of its upload", what);
        bn254_g1_check_point(name, n - off, out, &w);
    }
    cuzk_gpu_points_free(gp);
    free(t), free(sv), free(p), free(sc);
}

/* ---- Split MSMs (CUZK_GPU_SCALARS_ONCE), through a context that splits from 64 scalars in
 * every group (three parts for BN254 G1, two for the others): the usual references for
 * every scalar kind, with and without tables, and the layouts that make the last part run
 * alone or add nothing to the first's buckets; a scalar not below r in each part, named by its
 * index in the whole MSM; an MSM flagged SAME after a split one (it may read the upload, not
 * the preparation). */
static void test_split(void)
{
    const cuzk__gpu_test_options o = {0, 0, 64, 0};
    cuzk_gpu_ctx *c0 = ctx, *c1 = open_with(&o, 0, 0);
    if (c1) {
        printf("  MSMs split from 64 scalars (CUZK_GPU_SCALARS_ONCE):\n");
        ctx = c1;
        msm_flags = CUZK_GPU_SCALARS_ONCE;
        for (int mode = 0; mode < 6; mode++) {
            bn254_g1_test_msm(64 + 37 * mode, mode, 1, 1);
            bls12_381_g1_test_msm(1000 + mode, mode, 0, 1);
            bn254_g2_test_msm(300 + mode, mode, 0, 1);
            bls12_381_g2_test_msm(129 + mode, mode, 0, 1);
        }
        bn254_g1_test_msm(65539, SC_RANDOM, 0, 1);
        bls12_381_g1_test_msm(1 << 20, SC_SPARSE, 0, 0);
        for (int layout = 1; layout <= 3; layout++) {
            msm_layout = layout;
            bn254_g1_test_msm(5000, SC_RANDOM, 0, 1);
            bls12_381_g2_test_msm(2000, SC_EDGE, 0, 1);
            bn254_g2_test_msm(1 << 16, SC_RANDOM, 0, 0);
        }
        msm_layout = 3;
        bn254_g1_test_msm(1 << 19, SC_RANDOM, 0, 0);
        msm_layout = 0;
        tab_copies = 0;
        bn254_g1_test_msm(70001, SC_RANDOM, 0, 1);
        bls12_381_g1_test_msm(3000, SC_SPARSE, 0, 1);
        msm_layout = 1;
        bn254_g1_test_msm(3001, SC_RANDOM, 0, 1);
        msm_layout = 2;
        bls12_381_g2_test_msm(1500, SC_RANDOM, 0, 1);
        msm_layout = 0;
        if (!quick) {
            /* Parts of over 64 MiB: a pageable buffer's second part through the staging
             * buffers, beside the first part's work. */
            bn254_g1_test_msm((1 << 22) + 5, SC_RANDOM, 0, 0);
            bls12_381_g2_test_msm(1 << 20, SC_RANDOM, 0, 0);
        }
        tab_copies = -1;
        msm_flags = 0;

        /* The parts: [0, 200), [200, 1000) in two; [0, 47), [47, 237), [237, 1000) in
         * three (BN254 G1: each part 4 times the one before). */
        static const size_t bad_at[3] = {20, 100, 900};
        bn254_checked_shared(1000, bad_at, CUZK_GPU_SCALARS_ONCE, 5, "split MSM");
        ctx = c0;
        cuzk_gpu_close(c1);
    }
}

/* ---- Resident MSMs in parts (CUZK_GPU_MSM_PART_MAX), through a context whose parts hold at
 * most 1000 points: every scalar kind, with and without tables, shared scalars (the upload
 * reused, the preparation not), a checked scalar not below r named by its index in the whole
 * MSM, and the H MSM over a domain of several parts. */
static void test_parts(void)
{
    const cuzk__gpu_test_options o = {0, 0, 0, 1000};
    cuzk_gpu_ctx *c0 = ctx, *c1 = open_with(&o, 0, 0);
    if (!c1)
        return;
    printf("  resident MSMs in parts of at most 1000 points:\n");
    ctx = c1;
    for (int mode = 0; mode < 6; mode++) {
        bn254_g1_test_msm(1001 + 517 * mode, mode, 1, 1);
        bls12_381_g1_test_msm(4096, mode, 0, 1);
        bn254_g2_test_msm(2999, mode, 0, 1);
        bls12_381_g2_test_msm(2000 + mode, mode, 0, 1);
    }
    bn254_g1_test_msm(1 << 16, SC_RANDOM, 0, 1);
    bls12_381_g1_test_msm(70000, SC_SPARSE, 0, 1);
    bn254_g1_test_shared(5000);
    bls12_381_g1_test_shared(3001);
    bn254_g1_test_h(12);
    bls12_381_g1_test_h(12);
    bn254_g1_test_synth(12, 1);
    bls12_381_g1_test_synth(12, 0);

    /* Parts [0, 834), [834, 1668), [1668, 2500). */
    static const size_t bad_at[3] = {10, 1200, 2499};
    bn254_checked_shared(2500, bad_at, 0, 7, "MSM in parts");
    ctx = c0;
    cuzk_gpu_close(c1);
}

/* The MSM checks a context runs: small sizes and every scalar kind, shared scalars, then the
 * same with fixed-base tables; big: the largest sizes too. */
static void msm_suite(int big)
{
    static const size_t small[] = {1, 2, 3, 7, 33, 100};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        int mode = (int)(i % 6);
        bn254_g1_test_msm(small[i], mode, 1, 1);
        bls12_381_g1_test_msm(small[i], mode, 1, 1);
        bn254_g2_test_msm(small[i], (mode + 1) % 6, 1, 1);
        bls12_381_g2_test_msm(small[i], (mode + 2) % 6, 1, 1);
    }
    for (int mode = 0; mode < 6; mode++) {
        bn254_g1_test_msm(1000 + mode, mode, 0, 1);
        bls12_381_g1_test_msm(4096, mode, 0, 1);
        bn254_g2_test_msm(777, mode, 0, 1);
        bls12_381_g2_test_msm(1024, mode, 0, 1);
    }
    bn254_g1_test_msm(65539, SC_RANDOM, 0, 1);
    bls12_381_g1_test_msm(65536, SC_SPARSE, 0, 1);
    bn254_g2_test_msm(1 << 16, SC_RANDOM, 0, 0);
    bls12_381_g2_test_msm((1 << 16) - 1, SC_EQUAL, 0, 0);
    bn254_g1_test_msm((1 << 20) + 1, SC_RANDOM, 0, 0);
    bls12_381_g1_test_msm(1 << 20, SC_SPARSE, 0, 0);
    bls12_381_g1_test_msm(1 << 18, SC_EQUAL, 0, 0);
    if (big) {
        bn254_g1_test_msm(1 << 22, SC_RANDOM, 0, 0);
        bls12_381_g1_test_msm(1 << 22, SC_RANDOM, 0, 0);
    }

    bn254_g1_test_shared(5000);
    bls12_381_g1_test_shared(3001);

    /* Fixed-base tables (cuzk_gpu_points_tables): the same references; sets with every copy
     * the windows need (one bucket set) and with at most 3 or 5 (windows share copies, several
     * bucket sets); sparse scalars make the MSM pick narrower windows dividing the copies'
     * shift. */
    static const int tab_modes[] = {SC_RANDOM, SC_SPARSE, SC_EDGE, SC_RM1, SC_MONT, SC_EQUAL};
    for (int k = 0; k < 3; k++) {
        tab_copies = k == 0 ? 0 : k == 1 ? 3 : 5;
        for (int m = 0; m < 6; m++) {
            bn254_g1_test_msm(3000 + 7 * m, tab_modes[m], 0, 1);
            bls12_381_g1_test_msm(2500 + m, tab_modes[(m + k) % 6], 0, 1);
        }
        bn254_g2_test_msm(2000 + k, tab_modes[k], 0, 1);
        bls12_381_g2_test_msm(1500 + k, tab_modes[k + 1], 0, 1);
        bn254_g1_test_msm(65539, tab_modes[k], 0, 1);
        bls12_381_g2_test_msm(1 << 15, tab_modes[k], 0, 0);
        if (k == 0) {
            bn254_g1_test_msm((1 << 20) + 1, SC_RANDOM, 0, 0);
            bls12_381_g1_test_msm(1 << 20, SC_SPARSE, 0, 0);
            if (big) {
                bn254_g2_test_msm(1 << 20, SC_RANDOM, 0, 0);
                bls12_381_g1_test_msm(1 << 22, SC_RANDOM, 0, 0);
            }
            bn254_g1_test_shared(5000);
            bls12_381_g1_test_shared(3001);
        }
    }
    tab_copies = -1;
}

/* gpu_test [stream]: everything, or only the streamed sets' checks. */
int main(int argc, char **argv)
{
    cuzk_ff_init();
#ifdef CUZK_HAVE_CUDA
    bn254_fp_host_inv_test();
    bls12_381_fp_host_inv_test();
#endif
    int ndev = cuzk_gpu_device_count();
    if (ndev == 0) {
        printf("gpu_test: no CUDA device (or no CUDA backend in this build): the device checks "
               "were skipped\n");
        return tu_finish("gpu_test (host helpers only)");
    }
    const char *q = getenv("CUZK_GPU_TEST_QUICK");
    quick = q && *q == '1';
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_gpu_open(&ctx, 0, &eb);
    CHECK_MSG(e == CUZK_OK, "open: %s", eb.msg);
    if (e)
        return tu_finish("gpu_test");
    printf("gpu_test on %s (%d device(s))\n", cuzk_gpu_name(ctx), ndev);
    if (argc > 1 && !strcmp(argv[1], "stream")) {
        test_stream();
        cuzk_gpu_close(ctx);
        return tu_finish("gpu_test stream");
    }

    /* Error path: a range past the set is refused with a message. */
    {
        cuzk_gpu_points *gp = NULL;
        uint8_t z[96 * 4] = {0};
        CHECK(cuzk_gpu_points_upload(ctx, CUZK_GPU_BN254, CUZK_GPU_G1, z, 4, &gp, &eb) == 0);
        uint64_t out[12];
        CHECK(cuzk_gpu_msm(ctx, gp, 2, 3, z, 0, out, &eb) == CUZK_SIZE_MISMATCH);
        /* all points at infinity: result infinity (Z = 0) */
        uint8_t s[4 * 32];
        tu_rand_bytes(s, sizeof s);
        for (int i = 0; i < 4; i++)
            s[32 * i + 31] = 0;
        CHECK(cuzk_gpu_msm(ctx, gp, 0, 4, s, 0, out, &eb) == 0);
        CHECK(out[8] == 0 && out[9] == 0 && out[10] == 0 && out[11] == 0);
        cuzk_gpu_points_free(gp);
    }

    msm_suite(!quick);

    static const int lns[] = {0, 1, 2, 3, 5, 9, 10, 11, 13, 16, 17, 20, 21};
    for (size_t i = 0; i < sizeof lns / sizeof lns[0]; i++) {
        bn254_fr_test_ntt(lns[i]);
        bls12_381_fr_test_ntt(lns[i]);
    }
    test_refused();
    /* Paths the defaults take only for large MSMs, at a test's sizes (cuzk__gpu_test_set):
     * batch-affine accumulation for every MSM in chunks of 20000 bytes (many chunks, each with
     * its inversion), with quads (k_ba_pairs, k_ba_quads; G2's two-lane k_ba_pairs_h,
     * k_ba_quads_h, BLS12-381's octs) and without (k_ba_pass_b, k_ba_pass_b_h), then the longest
     * level-1 slices the batch-affine kernels take (128, quads in every chunk) and 64-entry
     * slices without batch-affine. */
    {
        static const struct {
            cuzk__gpu_test_options o;
            uint64_t chunk;
            int quads;
        } runs[4] = {{{1, 0, 0, 0}, 20000, 2},
                     {{1, 0, 0, 0}, 20000, 0},
                     {{1, 128, 0, 0}, CUZK_GPU_BA_PRE_BYTES, 2},
                     {{0, 64, 0, 0}, 0, 0}};
        cuzk_gpu_ctx *c0 = ctx;
        for (int v = 0; v < 4; v++) {
            cuzk_gpu_ctx *c1 = open_with(&runs[v].o, runs[v].chunk, runs[v].quads);
            if (!c1)
                continue;
            printf("  MSMs with%s batch-affine at every size, chunks of %llu bytes, quads %d, "
                   "slices of %u entries at least:\n",
                   runs[v].o.ba_every ? "" : "out", (unsigned long long)runs[v].chunk,
                   runs[v].quads, runs[v].o.slice_min);
            ctx = c1;
            if (v < 2) {
                msm_suite(0);
            } else {
                bn254_g1_test_msm(70000, SC_RANDOM, 0, 1);
                bls12_381_g1_test_msm(3001, SC_SPARSE, 0, 1);
                bn254_g2_test_msm(5000, SC_EQUAL, 0, 1);
                bls12_381_g2_test_msm(2048, SC_RANDOM, 0, 1);
            }
            bn254_g2_test_msm(5000, SC_RANDOM, 0, 1);
            bn254_g2_test_msm(3000, SC_EQUAL, 0, 1);
            bn254_g2_test_msm(4000, SC_EDGE, 0, 1);
            bls12_381_g2_test_msm(1500, SC_SPARSE, 0, 1);
            bls12_381_g2_test_msm(1000, SC_EDGE, 0, 1);
            ctx = c0;
            cuzk_gpu_close(c1);
        }
    }
    test_split();
    test_parts();
    test_stream();
    static const int hl[] = {1, 4, 9, 12, 16};
    for (size_t i = 0; i < sizeof hl / sizeof hl[0]; i++) {
        bn254_g1_test_h(hl[i]);
        bls12_381_g1_test_h(hl[i]);
    }
    static const int sl[] = {1, 5, 12, 17};
    for (size_t i = 0; i < sizeof sl / sizeof sl[0]; i++) {
        bn254_g1_test_synth(sl[i], (int)(i & 1));
        bls12_381_g1_test_synth(sl[i], !(i & 1));
    }

    test_scratch_estimate(CUZK_GPU_BN254, (size_t)1 << 18, 18);
    test_scratch_estimate(CUZK_GPU_BLS12_381, ((size_t)1 << 17) + 3, 16);

    cuzk_gpu_close(ctx);
    return tu_finish("gpu_test");
}
