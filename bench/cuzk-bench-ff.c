/* Field multiplication benchmark: ns per Montgomery mul and sqr for the four fields, portable
 * C kernel vs the mulx/adcx/adox assembly kernel, single thread.
 *
 * Each figure is the best of many short blocks of a dependent chain (x = x*y or x = x^2),
 * i.e. latency per operation as a long chain of field ops in curve code sees it, including
 * the call and the run-time kernel switch. The minimum over short blocks keeps the figure
 * stable on a shared, loaded machine. Times are printed, never asserted.
 *
 * Usage: cuzk-bench-ff [ops per block]   (default 20000; 200 blocks)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ff/ff.h"

#include "bench_common.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A volatile sink keeps the compiler from dropping the chains. */
static volatile uint64_t sink;

#define RUNS 200

#define BENCH_FIELD(F)                                                                    \
    static void bench_##F(long iters, double *mul_ns, double *sqr_ns)                    \
    {                                                                                     \
        F##_t x, y;                                                                       \
        F##_from_u64(&x, 0x1234567890abcdefULL);                                          \
        F##_from_u64(&y, 0xfedcba0987654321ULL);                                          \
        F##_inv(&y, &y);                                                                  \
        double best_mul = 1e300, best_sqr = 1e300;                                        \
        for (int run = 0; run < RUNS; run++) {                                            \
            double t0 = now_ns();                                                         \
            for (long i = 0; i < iters; i++)                                              \
                F##_mul(&x, &x, &y);                                                      \
            double t1 = now_ns();                                                         \
            for (long i = 0; i < iters; i++)                                              \
                F##_sqr(&x, &x);                                                          \
            double t2 = now_ns();                                                         \
            sink ^= x.l[0];                                                               \
            if (t1 - t0 < best_mul)                                                       \
                best_mul = t1 - t0;                                                       \
            if (t2 - t1 < best_sqr)                                                       \
                best_sqr = t2 - t1;                                                       \
        }                                                                                 \
        *mul_ns = best_mul / (double)iters;                                               \
        *sqr_ns = best_sqr / (double)iters;                                               \
    }

BENCH_FIELD(bn254_fp)
BENCH_FIELD(bn254_fr)
BENCH_FIELD(bls12_381_fp)
BENCH_FIELD(bls12_381_fr)

typedef void (*bench_fn)(long, double *, double *);

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    if (iters <= 0) {
        fprintf(stderr, "usage: %s [iterations > 0]\n", argv[0]);
        return 2;
    }
    static const struct {
        const char *name;
        bench_fn fn;
    } fields[] = {
        {"bn254 Fp (4 limbs)", bench_bn254_fp},
        {"bn254 Fr (4 limbs)", bench_bn254_fr},
        {"bls12-381 Fp (6 limbs)", bench_bls12_381_fp},
        {"bls12-381 Fr (4 limbs)", bench_bls12_381_fr},
    };
    char model[256];
    cpu_model(model, sizeof model);
    int have_asm = cuzk_ff_cpu_has_adx() && CUZK_FF_HAVE_ASM;
    printf("cpu: %s\n", model);
    printf("asm kernels: %s\n", have_asm ? "mulx/adcx/adox" : "not available (portable only)");
    printf("single thread, dependent chains, best of %d blocks of %ld ops\n\n", RUNS, iters);
    printf("%-24s %12s %12s %12s %12s\n", "field", "mul C ns", "sqr C ns", "mul asm ns",
           "sqr asm ns");
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        double m[2] = {0, 0}, s[2] = {0, 0};
        cuzk__ff_use_asm = 0;
        fields[f].fn(iters, &m[0], &s[0]);
        if (have_asm) {
            cuzk__ff_use_asm = 1;
            fields[f].fn(iters, &m[1], &s[1]);
            printf("%-24s %12.2f %12.2f %12.2f %12.2f\n", fields[f].name, m[0], s[0], m[1],
                   s[1]);
        } else {
            printf("%-24s %12.2f %12.2f %12s %12s\n", fields[f].name, m[0], s[0], "-", "-");
        }
    }
    cuzk_ff_init();
    return 0;
}
