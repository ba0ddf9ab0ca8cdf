/* Pairing benchmark: ms per Miller loop, final exponentiation, full pairing, and 4-pair
 * multi-pairing check (the Groth16 verification shape: 4 Miller loops, one final
 * exponentiation) for BN254 and BLS12-381, single thread, with the field kernel that
 * cuzk_ff_init() picks. Each figure is the best of RUNS runs of ITERS calls. Times are
 * printed, never asserted.
 *
 * Usage: cuzk-bench-pairing [iterations]   (default 20 per run)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ec/pairing.h"

#define RUNS 5

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* A volatile sink keeps the compiler from dropping the work. */
static volatile uint64_t sink;

#define BENCH_CURVE(C)                                                                    \
    static void bench_##C(int iters)                                                      \
    {                                                                                     \
        C##_g1_affine P[4];                                                               \
        C##_g2_affine Q[4];                                                               \
        C##_g1_jac pj;                                                                    \
        C##_g2_jac qj;                                                                    \
        for (int i = 0; i < 4; i++) {                                                     \
            uint64_t k = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);                       \
            C##_g1_from_affine(&pj, &C##_g1_GEN);                                         \
            C##_g1_mul_limbs(&pj, &pj, &k, 1);                                            \
            C##_g1_to_affine(&P[i], &pj);                                                 \
            C##_g2_from_affine(&qj, &C##_g2_GEN);                                         \
            C##_g2_mul_limbs(&qj, &qj, &k, 1);                                            \
            C##_g2_to_affine(&Q[i], &qj);                                                 \
        }                                                                                 \
        double best[4] = {1e300, 1e300, 1e300, 1e300};                                    \
        C##_fp12_t f, e;                                                                  \
        for (int run = 0; run < RUNS; run++) {                                            \
            double t0 = now_ms();                                                         \
            for (int i = 0; i < iters; i++) {                                             \
                C##_miller_loop(&f, &P[i & 3], &Q[i & 3], 1);                             \
                sink += f.c0.c0.c0.l[0];                                                  \
            }                                                                             \
            double t1 = now_ms();                                                         \
            for (int i = 0; i < iters; i++) {                                             \
                C##_final_exp(&e, &f);                                                    \
                sink += e.c0.c0.c0.l[0];                                                  \
            }                                                                             \
            double t2 = now_ms();                                                         \
            for (int i = 0; i < iters; i++) {                                             \
                C##_pairing(&e, &P[i & 3], &Q[i & 3]);                                    \
                sink += e.c0.c0.c0.l[0];                                                  \
            }                                                                             \
            double t3 = now_ms();                                                         \
            for (int i = 0; i < iters; i++)                                               \
                sink += (uint64_t)C##_multi_pairing_is_one(P, Q, 4);                      \
            double t4 = now_ms();                                                         \
            double d[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};                           \
            for (int k = 0; k < 4; k++)                                                   \
                if (d[k] / iters < best[k])                                               \
                    best[k] = d[k] / iters;                                               \
        }                                                                                 \
        printf("%-10s miller loop %7.3f ms  final exp %7.3f ms  pairing %7.3f ms  "       \
               "4-pair check %7.3f ms\n",                                                 \
               #C, best[0], best[1], best[2], best[3]);                                   \
    }

BENCH_CURVE(bn254)
BENCH_CURVE(bls12_381)

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    if (iters < 1)
        iters = 1;
    int asm_on = cuzk_ff_init();
    printf("cuzk-bench-pairing: single thread, %s field kernel, best of %d x %d\n",
           asm_on ? "mulx/adcx/adox" : "portable C", RUNS, iters);
    bench_bn254(iters);
    bench_bls12_381(iters);
    return (int)(sink & 0);
}
