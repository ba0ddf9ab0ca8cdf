/*
 * Core benchmark: field, curve, MSM, NTT and pairing timings for BN254 and BLS12-381 on the CPU.
 *
 * Prints, per curve: ns per Fp / Fr mul and sqr (dependent chains, best of several runs),
 * ns per G1 / G2 mixed addition (Jacobian + affine) and XYZZ mixed addition (chains over
 * distinct points), ms per Pippenger MSM (G1 at the --msm sizes with --threads threads and
 * at the --msm1 sizes single-threaded, G2 at the --g2 sizes; random scalars < r, points k*G for
 * sequential k), ms per forward NTT over Fr at the --ntt sizes, and the pairing time.
 * Times are printed, never asserted.
 *
 * Usage: cuzk-bench-core [--threads N] [--msm 16,20] [--msm1 16] [--g2 16] [--ntt 16,20]
 *                        [--curve bn254|bls12_381|all] [--reps R] [--window C]
 * (sizes are log2; an empty list such as --msm "" skips that part). Default runtime is about
 * a minute or two on 2 cores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec/ec.h"
#include "ec/pairing.h"
#include "ec/xyzz.h"
#include "ff/ff.h"
#include "msm/msm.h"
#include "poly/ntt.h"
#include "util/parallel.h"

#include "bench_common.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static volatile uint64_t sink;

/* First limb of any field element (Fp or Fp2), to feed the sink. */
static uint64_t word0(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef struct {
    unsigned threads, reps, window;
    int logs_msm[8], n_msm;
    int logs_msm1[8], n_msm1;
    int logs_g2[8], n_g2;
    int logs_ntt[8], n_ntt;
    int do_bn, do_bls;
} opts_t;

static int parse_list(const char *s, int *out)
{
    int n = 0;
    while (*s && n < 8) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s)
            break;
        if (v >= 0 && v <= 28)
            out[n++] = (int)v;
        s = *e == ',' ? e + 1 : e;
    }
    return n;
}

#define FIELD_BENCH(F)                                                                    \
    static void bench_field_##F(const char *label)                                        \
    {                                                                                     \
        const long iters = 1000000;                                                       \
        F##_t x, y;                                                                       \
        F##_from_u64(&x, 0x1234567890abcdefULL);                                          \
        F##_from_u64(&y, 0xfedcba0987654321ULL);                                          \
        F##_inv(&y, &y);                                                                  \
        double bm = 1e300, bs = 1e300;                                                    \
        for (int run = 0; run < 5; run++) {                                               \
            double t0 = now_s();                                                          \
            for (long i = 0; i < iters; i++)                                              \
                F##_mul(&x, &x, &y);                                                      \
            double t1 = now_s();                                                          \
            for (long i = 0; i < iters; i++)                                              \
                F##_sqr(&x, &x);                                                          \
            double t2 = now_s();                                                          \
            sink ^= x.l[0];                                                               \
            if (t1 - t0 < bm)                                                             \
                bm = t1 - t0;                                                             \
            if (t2 - t1 < bs)                                                             \
                bs = t2 - t1;                                                             \
        }                                                                                 \
        printf("  %-4s mul %7.1f ns   sqr %7.1f ns\n", label, bm * 1e9 / iters,           \
               bs * 1e9 / iters);                                                         \
    }

FIELD_BENCH(bn254_fp)
FIELD_BENCH(bn254_fr)
FIELD_BENCH(bls12_381_fp)
FIELD_BENCH(bls12_381_fr)

/* Points P_i = (s + i) G, s random, normalised in one batch. */
#define GROUP_BENCH(G, NBITS)                                                             \
    static G##_affine *make_points_##G(size_t n)                                          \
    {                                                                                     \
        G##_affine *a = malloc(sizeof(G##_affine) * n);                                   \
        G##_jac *j = malloc(sizeof(G##_jac) * n);                                         \
        __typeof__(j[0].X) *scr = malloc(sizeof(j[0].X) * n);                             \
        if (!a || !j || !scr) {                                                           \
            fprintf(stderr, "out of memory\n");                                           \
            exit(1);                                                                      \
        }                                                                                 \
        G##_jac g;                                                                        \
        G##_from_affine(&g, &G##_GEN);                                                    \
        uint64_t s = rnd();                                                               \
        G##_mul_limbs(&j[0], &g, &s, 1);                                                  \
        for (size_t i = 1; i < n; i++)                                                    \
            G##_add_affine(&j[i], &j[i - 1], &G##_GEN);                                   \
        G##_batch_to_affine(a, j, n, scr);                                                \
        free(j);                                                                          \
        free(scr);                                                                        \
        return a;                                                                         \
    }                                                                                     \
    static uint8_t *make_scalars_##G(size_t n)                                            \
    {                                                                                     \
        uint8_t *s = malloc(32 * n);                                                      \
        if (!s) {                                                                         \
            fprintf(stderr, "out of memory\n");                                           \
            exit(1);                                                                      \
        }                                                                                 \
        for (size_t i = 0; i < 4 * n; i++) {                                              \
            uint64_t v = rnd();                                                           \
            memcpy(s + 8 * i, &v, 8);                                                     \
        }                                                                                 \
        for (size_t i = 0; i < n; i++) /* below 2^(NBITS-1) < r */                        \
            s[32 * i + 31] &= (uint8_t)((1u << (NBITS - 1 - 248)) - 1);                   \
        return s;                                                                         \
    }                                                                                     \
    static void bench_add_##G(const char *label)                                          \
    {                                                                                     \
        enum { NP = 256, IT = 20000 };                                                    \
        G##_affine *pts = make_points_##G(NP);                                            \
        G##_jac acc;                                                                      \
        G##_xyzz xacc;                                                                    \
        double bj = 1e300, bx = 1e300;                                                    \
        for (int run = 0; run < 5; run++) {                                               \
            G##_from_affine(&acc, &G##_GEN);                                              \
            G##_xyzz_from_affine(&xacc, &G##_GEN);                                        \
            double t0 = now_s();                                                          \
            for (int i = 0; i < IT; i++)                                                  \
                G##_add_affine(&acc, &acc, &pts[i % NP]);                                 \
            double t1 = now_s();                                                          \
            for (int i = 0; i < IT; i++)                                                  \
                G##_xyzz_add_affine(&xacc, &xacc, &pts[i % NP]);                          \
            double t2 = now_s();                                                          \
            sink ^= word0(&acc.X) ^ word0(&xacc.X);                                       \
            if (t1 - t0 < bj)                                                             \
                bj = t1 - t0;                                                             \
            if (t2 - t1 < bx)                                                             \
                bx = t2 - t1;                                                             \
        }                                                                                 \
        printf("  %s madd: Jacobian+affine %7.1f ns   XYZZ+affine %7.1f ns\n", label,     \
               bj * 1e9 / IT, bx * 1e9 / IT);                                             \
        free(pts);                                                                        \
    }                                                                                     \
    static void bench_msm_##G(const char *label, int logn, unsigned threads,              \
                              const opts_t *o, int witness_like)                          \
    {                                                                                     \
        size_t n = (size_t)1 << logn;                                                     \
        double tg = now_s();                                                              \
        G##_affine *pts = make_points_##G(n);                                             \
        uint8_t *sc = make_scalars_##G(n);                                                \
        if (witness_like) /* 45% zero, 45% one, 10% full-size: a typical witness */       \
            for (size_t i = 0; i < n; i++) {                                              \
                unsigned v = (unsigned)(rnd() % 20);                                      \
                if (v < 18) {                                                             \
                    memset(sc + 32 * i, 0, 32);                                           \
                    sc[32 * i] = (uint8_t)(v & 1);                                        \
                }                                                                         \
            }                                                                             \
        tg = now_s() - tg;                                                                \
        G##_jac out;                                                                      \
        cuzk_msm_opts mo = {threads, 0, o->window};                                       \
        double best = 1e300;                                                              \
        for (unsigned r = 0; r < o->reps; r++) {                                          \
            double t0 = now_s();                                                          \
            cuzk_err e = G##_msm_ex(&out, pts, sc, n, &mo);                               \
            double t = now_s() - t0;                                                      \
            if (e != CUZK_OK) {                                                           \
                printf("  %s MSM 2^%d: error %s\n", label, logn, cuzk_errname(e));       \
                break;                                                                    \
            }                                                                             \
            if (t < best)                                                                 \
                best = t;                                                                 \
        }                                                                                 \
        sink ^= word0(&out.X);                                                            \
        printf("  %s MSM 2^%-2d threads %-3u window %-2u %10.2f ms  (%.0f ns/point; "     \
               "inputs made in %.1f s)%s\n",                                              \
               label, logn, threads,                                                      \
               o->window ? o->window : G##_msm_window(witness_like ? n / 10 : n, threads), \
               best * 1e3, best * 1e9 / (double)n, tg,                                    \
               witness_like ? " scalars 45% 0, 45% 1, 10% random" : "");                 \
        free(pts);                                                                        \
        free(sc);                                                                         \
    }

GROUP_BENCH(bn254_g1, 254)
GROUP_BENCH(bn254_g2, 254)
GROUP_BENCH(bls12_381_g1, 255)
GROUP_BENCH(bls12_381_g2, 255)

#define NTT_BENCH(F)                                                                      \
    static void bench_ntt_##F(int logn, unsigned threads, unsigned reps)                  \
    {                                                                                     \
        F##_domain d;                                                                     \
        if (F##_domain_init(&d, (unsigned)logn) != CUZK_OK) {                             \
            printf("  NTT 2^%d: domain init failed\n", logn);                            \
            return;                                                                       \
        }                                                                                 \
        F##_t *a = malloc(sizeof(F##_t) * d.n);                                           \
        for (size_t i = 0; i < d.n; i++)                                                  \
            F##_from_u64(&a[i], rnd());                                                   \
        double best = 1e300;                                                              \
        for (unsigned r = 0; r < reps; r++) {                                             \
            double t0 = now_s();                                                          \
            F##_ntt(&d, a, threads);                                                      \
            double t = now_s() - t0;                                                      \
            if (t < best)                                                                 \
                best = t;                                                                 \
        }                                                                                 \
        sink ^= a[1].l[0];                                                                \
        printf("  Fr NTT 2^%-2d threads %-3u %10.2f ms\n", logn, threads, best * 1e3);    \
        free(a);                                                                          \
        F##_domain_free(&d);                                                              \
    }

NTT_BENCH(bn254_fr)
NTT_BENCH(bls12_381_fr)

/* Pairing (src/ec/pairing.h): one full pairing e(G1, G2) and a
 * 4-pair product check (the shape of a Groth16 verification). */
#define PAIRING_BENCH(C)                                                                  \
    static void bench_pairing_##C(void)                                                   \
    {                                                                                     \
        C##_fp12_t f;                                                                     \
        double best = 1e300, best4 = 1e300;                                               \
        C##_g1_affine P[4];                                                               \
        C##_g2_affine Q[4];                                                               \
        for (int i = 0; i < 4; i++) {                                                     \
            P[i] = C##_g1_GEN;                                                            \
            Q[i] = C##_g2_GEN;                                                            \
        }                                                                                 \
        for (int r = 0; r < 5; r++) {                                                     \
            double t0 = now_s();                                                          \
            C##_pairing(&f, &P[0], &Q[0]);                                                \
            double t1 = now_s();                                                          \
            sink ^= (uint64_t)C##_multi_pairing_is_one(P, Q, 4);                          \
            double t2 = now_s();                                                          \
            if (t1 - t0 < best)                                                           \
                best = t1 - t0;                                                           \
            if (t2 - t1 < best4)                                                          \
                best4 = t2 - t1;                                                          \
        }                                                                                 \
        printf("  pairing %.3f ms   4-pair product check %.3f ms\n", best * 1e3,          \
               best4 * 1e3);                                                              \
    }

PAIRING_BENCH(bn254)
PAIRING_BENCH(bls12_381)

#define CURVE_RUN(C, FP, FR, G1, G2, NAME)                                                \
    do {                                                                                  \
        printf("%s\n", NAME);                                                             \
        bench_field_##FP("Fp");                                                           \
        bench_field_##FR("Fr");                                                           \
        bench_add_##G1("G1");                                                             \
        bench_add_##G2("G2");                                                             \
        for (int i = 0; i < o.n_msm1; i++)                                                \
            bench_msm_##G1("G1", o.logs_msm1[i], 1, &o, 0);                                  \
        for (int i = 0; i < o.n_msm; i++)                                                 \
            bench_msm_##G1("G1", o.logs_msm[i], o.threads, &o, 0);                        \
        if (o.n_msm)                                                                      \
            bench_msm_##G1("G1", o.logs_msm[0], o.threads, &o, 1);                        \
        for (int i = 0; i < o.n_g2; i++)                                                  \
            bench_msm_##G2("G2", o.logs_g2[i], o.threads, &o, 0);                            \
        for (int i = 0; i < o.n_ntt; i++)                                                 \
            bench_ntt_##FR(o.logs_ntt[i], o.threads, o.reps);                             \
        bench_pairing_##C();                                                              \
    } while (0)

int main(int argc, char **argv)
{
    opts_t o = {.threads = 0, .reps = 2, .window = 0, .do_bn = 1, .do_bls = 1};
    o.n_msm = parse_list("16,20", o.logs_msm);
    o.n_msm1 = parse_list("16", o.logs_msm1);
    o.n_g2 = parse_list("16", o.logs_g2);
    o.n_ntt = parse_list("16,20", o.logs_ntt);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: %s [--threads N] [--msm 16,20] [--msm1 16] [--g2 16] [--ntt 16,20]\n"
                   "       [--curve bn254|bls12_381|all] [--reps R] [--window C]\n"
                   "Prints ns per field op and point add, ms per MSM (sizes log2), NTT and\n"
                   "pairing for both curves, with the thread count and CPU model.\n",
                   argv[0]);
            return 0;
        }
        if (!v) {
            fprintf(stderr, "%s: missing value\n", a);
            return 2;
        }
        if (!strcmp(a, "--threads"))
            o.threads = (unsigned)atoi(v);
        else if (!strcmp(a, "--reps"))
            o.reps = (unsigned)atoi(v) ? (unsigned)atoi(v) : 1;
        else if (!strcmp(a, "--window"))
            o.window = (unsigned)atoi(v);
        else if (!strcmp(a, "--msm"))
            o.n_msm = parse_list(v, o.logs_msm);
        else if (!strcmp(a, "--msm1"))
            o.n_msm1 = parse_list(v, o.logs_msm1);
        else if (!strcmp(a, "--g2"))
            o.n_g2 = parse_list(v, o.logs_g2);
        else if (!strcmp(a, "--ntt"))
            o.n_ntt = parse_list(v, o.logs_ntt);
        else if (!strcmp(a, "--curve")) {
            o.do_bn = !strcmp(v, "bn254") || !strcmp(v, "all");
            o.do_bls = !strcmp(v, "bls12_381") || !strcmp(v, "all");
        } else {
            fprintf(stderr,
                    "usage: %s [--threads N] [--msm 16,20] [--msm1 16] [--g2 16] "
                    "[--ntt 16,20] [--curve bn254|bls12_381|all] [--reps R] [--window C]\n",
                    argv[0]);
            return 2;
        }
        i++;
    }
    int asm_on = cuzk_ff_init();
    if (!o.threads)
        o.threads = cuzk_num_threads();
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    printf("cuzk-bench-core: CPU %s, %u threads (MSM/NTT), field kernel %s, best of %u\n",
           cpu, o.threads, asm_on ? "asm (mulx/adx)" : "portable C", o.reps);
    if (o.do_bn)
        CURVE_RUN(bn254, bn254_fp, bn254_fr, bn254_g1, bn254_g2, "BN254");
    if (o.do_bls)
        CURVE_RUN(bls12_381, bls12_381_fp, bls12_381_fr, bls12_381_g1, bls12_381_g2,
                  "BLS12-381");
    return 0;
}
