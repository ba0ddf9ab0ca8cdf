/*
 * Property tests of the four prime fields against GMP, for both multiplication kernels
 * (portable C and, where the CPU has BMI2 + ADX, the mulx/adcx/adox assembly).
 *
 * GMP is the independent implementation: it gets p from the generated constants and computes
 * R = 2^(64N), R^-1, every expected result and every expected encoding on canonical values.
 * Inputs are random values (uniform, short, and close to p) and edge values: 0, 1, 2, p-1,
 * p-2, (p-1)/2, 2^k and 2^k +- 1 and p - 2^k for every k, plus the values whose Montgomery
 * limbs are those same numbers (so the kernels see extreme limbs too).
 *
 * CUZK_TEST_SEED overrides the PRNG seed; CUZK_FF_TEST_ITERS the random iterations per field.
 */
#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#include "ff/ff.h"
#include "testutil.h"

static char g_strbuf[1024], g_strbuf2[1024];

typedef struct {
    mpz_t p, R, Rinv;
    int n;
} field_ctx;

static void mpz_from_limbs(mpz_t r, const uint64_t *l, int n)
{
    mpz_import(r, (size_t)n, -1, sizeof l[0], 0, 0, l);
}

/* v must be below 2^(64n). */
static void limbs_from_mpz(uint64_t *l, int n, const mpz_t v)
{
    size_t count = 0;
    memset(l, 0, (size_t)n * sizeof l[0]);
    if (mpz_sizeinbase(v, 2) > (size_t)(64 * n)) {
        CHECK_MSG(0, "test bug: value too wide for %d limbs", n);
        return;
    }
    mpz_export(l, &count, -1, sizeof l[0], 0, 0, v);
}

/* Fixed-width bytes of v; order -1: little-endian, 1: big-endian. */
static void bytes_from_mpz(uint8_t *b, size_t len, const mpz_t v, int order)
{
    uint8_t tmp[128] = {0};
    size_t count = 0;
    mpz_export(tmp, &count, -1, 1, 0, 0, v);
    for (size_t i = 0; i < len; i++)
        b[order < 0 ? i : len - 1 - i] = tmp[i];
}

static void ctx_init(field_ctx *c, const uint64_t *p, int n)
{
    mpz_inits(c->p, c->R, c->Rinv, NULL);
    c->n = n;
    mpz_from_limbs(c->p, p, n);
    CHECK(mpz_probab_prime_p(c->p, 30) != 0);
    mpz_setbit(c->R, 64 * n);
    CHECK(mpz_invert(c->Rinv, c->R, c->p) != 0);
}

static void ctx_clear(field_ctx *c) { mpz_clears(c->p, c->R, c->Rinv, NULL); }

/* Uniform limbs below p (raw, for the kernel comparison). */
static void random_below(const field_ctx *c, uint64_t *l, int n)
{
    mpz_t v;
    mpz_init(v);
    for (int i = 0; i < n; i++)
        l[i] = tu_rand64();
    mpz_from_limbs(v, l, n);
    mpz_mod(v, v, c->p);
    limbs_from_mpz(l, n, v);
    mpz_clear(v);
}

/* A random canonical value: mostly uniform, sometimes short or just below p. */
static void random_value(const field_ctx *c, mpz_t v)
{
    uint64_t l[8];
    for (int i = 0; i < c->n; i++)
        l[i] = tu_rand64();
    mpz_from_limbs(v, l, c->n);
    mpz_mod(v, v, c->p);
    switch (tu_rand64() % 8) {
    case 0:
        mpz_tdiv_q_2exp(v, v, tu_rand64() % (64 * (unsigned)c->n));
        break;
    case 1:
        mpz_tdiv_q_2exp(v, v, tu_rand64() % (64 * (unsigned)c->n));
        mpz_sub(v, c->p, v);
        mpz_sub_ui(v, v, 1);
        mpz_mod(v, v, c->p);
        break;
    default:
        break;
    }
}

static void free_values(mpz_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mpz_clear(v[i]);
    free(v);
}

/* The edge values of the field, all reduced below p. */
static size_t edge_values(const field_ctx *c, mpz_t **out)
{
    int bits = 64 * c->n;
    size_t cap = (size_t)(2 * (12 + 4 * bits)), n = 0;
    mpz_t *v = malloc(cap * sizeof *v);
    mpz_t t;
    mpz_init(t);
#define PUSH(expr)                                                                        \
    do {                                                                                  \
        mpz_init(v[n]);                                                                   \
        expr;                                                                             \
        mpz_mod(v[n], v[n], c->p);                                                        \
        n++;                                                                              \
    } while (0)
    for (unsigned k = 0; k < 4; k++)
        PUSH(mpz_set_ui(v[n], k));
    for (unsigned k = 1; k < 4; k++)
        PUSH(mpz_sub_ui(v[n], c->p, k));
    PUSH((mpz_sub_ui(v[n], c->p, 1), mpz_tdiv_q_2exp(v[n], v[n], 1)));      /* (p-1)/2 */
    PUSH((mpz_add_ui(v[n], c->p, 1), mpz_tdiv_q_2exp(v[n], v[n], 1)));      /* (p+1)/2 */
    PUSH((mpz_sub_ui(v[n], c->p, 3), mpz_tdiv_q_2exp(v[n], v[n], 1)));      /* (p-3)/2 */
    PUSH(mpz_set(v[n], c->R));                                              /* R mod p */
    PUSH(mpz_set(v[n], c->Rinv));
    for (int k = 0; k < bits; k++) {
        mpz_set_ui(t, 0);
        mpz_setbit(t, (mp_bitcnt_t)k);
        PUSH(mpz_set(v[n], t));
        PUSH(mpz_sub_ui(v[n], t, 1));
        PUSH(mpz_add_ui(v[n], t, 1));
        PUSH(mpz_sub(v[n], c->p, t));
    }
    /* The same numbers as Montgomery limbs: canonical value x*R^-1. */
    size_t half = n;
    for (size_t i = 0; i < half; i++)
        PUSH(mpz_mul(v[n], v[i], c->Rinv));
#undef PUSH
    mpz_clear(t);
    *out = v;
    return n;
}

#define TF bn254_fp
#define TF_UPPER BN254_FP
#define TF_N 4
#define TF_SQRT 1
#include "ff_gmp_tmpl.h"

#define TF bn254_fr
#define TF_UPPER BN254_FR
#define TF_N 4
#define TF_SQRT 0
#include "ff_gmp_tmpl.h"

#define TF bls12_381_fp
#define TF_UPPER BLS12_381_FP
#define TF_N 6
#define TF_SQRT 1
#include "ff_gmp_tmpl.h"

#define TF bls12_381_fr
#define TF_UPPER BLS12_381_FR
#define TF_N 4
#define TF_SQRT 0
#include "ff_gmp_tmpl.h"

/* cuzk_ff_cpu_has_adx() (CPUID) against the kernel's own view in /proc/cpuinfo, and
 * cuzk_ff_init() setting the flag accordingly (and having run before main). */
static void check_cpu_detection(void)
{
    int use_at_start = cuzk__ff_use_asm;
    int has = cuzk_ff_cpu_has_adx();
    CHECK(cuzk_ff_init() == has);
    CHECK(cuzk__ff_use_asm == has);
    CHECK(use_at_start == has);
#if CUZK_FF_HAVE_ASM
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    int adx = 0, bmi2 = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        adx = strstr(line, " adx") != NULL;
        bmi2 = strstr(line, " bmi2") != NULL;
        break;
    }
    fclose(f);
    CHECK_MSG(has == (adx && bmi2), "cpuid says %d, /proc/cpuinfo adx=%d bmi2=%d", has, adx,
              bmi2);
#else
    CHECK(has == 0);
#endif
}

int main(void)
{
    check_cpu_detection();
    const char *seed = getenv("CUZK_TEST_SEED");
    if (seed)
        tu_seed(strtoull(seed, NULL, 0));
    const char *it = getenv("CUZK_FF_TEST_ITERS");
    long iters = it ? atol(it) : 3000;
    int have_asm = CUZK_FF_HAVE_ASM && cuzk_ff_cpu_has_adx();
    printf("ff_gmp: kernels tested: portable%s\n", have_asm ? " + asm (mulx/adcx/adox)" : "");
    bn254_fp_run(iters);
    bn254_fr_run(iters);
    bls12_381_fp_run(iters);
    bls12_381_fr_run(iters);
    return tu_finish("ff_gmp");
}
