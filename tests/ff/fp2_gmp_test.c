/*
 * Fp2 multiplication of both curves against GMP, for both kernels: the portable C Karatsuba
 * (three Montgomery multiplications) and, where the CPU has BMI2 + ADX, the assembly routine
 * with lazy reduction (cuzk__fp2_mul_asm_N: three double-width products, two reductions).
 *
 * GMP computes (a0 + a1 u)(b0 + b1 u) mod (p, u^2 + 1) = (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u on
 * canonical values. Inputs: random elements, and every pair of components from the edge set
 * {0, 1, 2, p-1, p-2, (p-1)/2, (p+1)/2, 2^k, p - 2^k} as canonical values and as raw Montgomery
 * limbs (so the kernel sees its extreme operands: sums a0 + a1 near 2p, t0 < t1 and t0 > t1 by
 * a little, products near p^2). Aliasing: r = a, r = b, a = b = r.
 */
#include <gmp.h>
#include <string.h>

#include "ff/ff.h"
#include "ff/fp2.h"
#include "testutil.h"

static void mpz_from_limbs(mpz_t r, const uint64_t *l, int n)
{
    mpz_import(r, (size_t)n, -1, sizeof l[0], 0, 0, l);
}

static void limbs_from_mpz(uint64_t *l, int n, const mpz_t v)
{
    size_t count = 0;
    memset(l, 0, sizeof(uint64_t) * (size_t)n);
    mpz_export(l, &count, -1, sizeof l[0], 0, 0, v);
}

#define FP2_GMP_TESTS(F2, FB, N)                                                              \
    /* expected canonical c0, c1 of a * b (a, b Montgomery) */                                \
    static void F2##_expect(uint64_t e0[N], uint64_t e1[N], const F2##_t *a, const F2##_t *b, \
                            const mpz_t p)                                                    \
    {                                                                                         \
        uint64_t l[4][N];                                                                     \
        FB##_to_canonical(l[0], &a->c0);                                                      \
        FB##_to_canonical(l[1], &a->c1);                                                      \
        FB##_to_canonical(l[2], &b->c0);                                                      \
        FB##_to_canonical(l[3], &b->c1);                                                      \
        mpz_t a0, a1, b0, b1, c0, c1, t;                                                      \
        mpz_inits(a0, a1, b0, b1, c0, c1, t, NULL);                                           \
        mpz_from_limbs(a0, l[0], N);                                                          \
        mpz_from_limbs(a1, l[1], N);                                                          \
        mpz_from_limbs(b0, l[2], N);                                                          \
        mpz_from_limbs(b1, l[3], N);                                                          \
        mpz_mul(c0, a0, b0);                                                                  \
        mpz_mul(t, a1, b1);                                                                   \
        mpz_sub(c0, c0, t);                                                                   \
        mpz_mod(c0, c0, p);                                                                   \
        mpz_mul(c1, a0, b1);                                                                  \
        mpz_mul(t, a1, b0);                                                                   \
        mpz_add(c1, c1, t);                                                                   \
        mpz_mod(c1, c1, p);                                                                   \
        limbs_from_mpz(e0, N, c0);                                                            \
        limbs_from_mpz(e1, N, c1);                                                            \
        mpz_clears(a0, a1, b0, b1, c0, c1, t, NULL);                                          \
    }                                                                                         \
                                                                                              \
    static int F2##_matches(const F2##_t *r, const uint64_t e0[N], const uint64_t e1[N])      \
    {                                                                                         \
        uint64_t g0[N], g1[N];                                                                \
        if (!FB##_limbs_lt_p(r->c0.l) || !FB##_limbs_lt_p(r->c1.l))                           \
            return 0; /* not fully reduced */                                                 \
        FB##_to_canonical(g0, &r->c0);                                                        \
        FB##_to_canonical(g1, &r->c1);                                                        \
        return memcmp(g0, e0, sizeof g0) == 0 && memcmp(g1, e1, sizeof g1) == 0;              \
    }                                                                                         \
                                                                                              \
    static void F2##_one(const F2##_t *a, const F2##_t *b, const mpz_t p, const char *what)   \
    {                                                                                         \
        uint64_t e0[N], e1[N];                                                                \
        F2##_expect(e0, e1, a, b, p);                                                         \
        F2##_t r, x;                                                                          \
        F2##_mul(&r, a, b);                                                                   \
        CHECK_MSG(F2##_matches(&r, e0, e1), "%s %s: a*b", #F2, what);                         \
        x = *a;                                                                               \
        F2##_mul(&x, &x, b); /* r = a */                                                      \
        CHECK_MSG(F2##_matches(&x, e0, e1), "%s %s: r = a", #F2, what);                       \
        x = *b;                                                                               \
        F2##_mul(&x, a, &x); /* r = b */                                                      \
        CHECK_MSG(F2##_matches(&x, e0, e1), "%s %s: r = b", #F2, what);                       \
        F2##_expect(e0, e1, a, a, p);                                                         \
        x = *a;                                                                               \
        F2##_mul(&x, &x, &x); /* r = a = b */                                                 \
        CHECK_MSG(F2##_matches(&x, e0, e1), "%s %s: a*a in place", #F2, what);                \
    }                                                                                         \
                                                                                              \
    static void F2##_run(int iters)                                                           \
    {                                                                                         \
        mpz_t p, v, e;                                                                        \
        mpz_inits(p, v, e, NULL);                                                             \
        mpz_from_limbs(p, FB##_P.l, N);                                                       \
        /* the edge set, canonical */                                                         \
        enum { MAXE = 8 + 2 * 64 * N };                                                       \
        static uint64_t edge[MAXE][N];                                                        \
        int ne = 0;                                                                           \
        const long small[] = {0, 1, 2};                                                       \
        for (int i = 0; i < 3; i++) {                                                         \
            mpz_set_si(v, small[i]);                                                          \
            limbs_from_mpz(edge[ne++], N, v);                                                 \
        }                                                                                     \
        for (int k = 1; k <= 2; k++) {                                                        \
            mpz_sub_ui(v, p, (unsigned long)k);                                               \
            limbs_from_mpz(edge[ne++], N, v);                                                 \
        }                                                                                     \
        mpz_sub_ui(v, p, 1);                                                                  \
        mpz_tdiv_q_2exp(v, v, 1);                                                             \
        limbs_from_mpz(edge[ne++], N, v);                                                     \
        mpz_add_ui(v, v, 1);                                                                  \
        limbs_from_mpz(edge[ne++], N, v);                                                     \
        for (unsigned k = 1; k < 64 * N; k += 7) {                                            \
            mpz_set_ui(e, 0);                                                                 \
            mpz_setbit(e, k);                                                                 \
            if (mpz_cmp(e, p) >= 0)                                                           \
                break;                                                                        \
            limbs_from_mpz(edge[ne++], N, e);                                                 \
            mpz_sub(v, p, e);                                                                 \
            limbs_from_mpz(edge[ne++], N, v);                                                 \
        }                                                                                     \
        F2##_t a, b;                                                                          \
        /* every pair of components, as canonical values (converted) and as raw limbs */      \
        for (int raw = 0; raw < 2; raw++) {                                                   \
            for (int i = 0; i < ne; i++) {                                                    \
                int j = (i * 7 + 3) % ne, k = (i * 13 + 5) % ne, m = (i * 3 + 1) % ne;        \
                if (raw) {                                                                    \
                    memcpy(a.c0.l, edge[i], sizeof a.c0.l);                                   \
                    memcpy(a.c1.l, edge[j], sizeof a.c1.l);                                   \
                    memcpy(b.c0.l, edge[k], sizeof b.c0.l);                                   \
                    memcpy(b.c1.l, edge[m], sizeof b.c1.l);                                   \
                } else {                                                                      \
                    FB##_from_canonical(&a.c0, edge[i]);                                      \
                    FB##_from_canonical(&a.c1, edge[j]);                                      \
                    FB##_from_canonical(&b.c0, edge[k]);                                      \
                    FB##_from_canonical(&b.c1, edge[m]);                                      \
                }                                                                             \
                F2##_one(&a, &b, p, raw ? "edge (raw limbs)" : "edge");                       \
            }                                                                                 \
        }                                                                                     \
        /* all four components p - 1 (raw): the largest sums and products */                 \
        mpz_sub_ui(v, p, 1);                                                                  \
        limbs_from_mpz(a.c0.l, N, v);                                                         \
        a.c1 = a.c0;                                                                          \
        b = a;                                                                                \
        F2##_one(&a, &b, p, "all p-1");                                                       \
        for (int it = 0; it < iters; it++) {                                                  \
            uint64_t l[N];                                                                    \
            FB##_t *c[4] = {&a.c0, &a.c1, &b.c0, &b.c1};                                      \
            for (int q = 0; q < 4; q++) {                                                     \
                tu_rand_bytes(l, sizeof l);                                                   \
                mpz_from_limbs(v, l, N);                                                      \
                mpz_mod(v, v, p);                                                             \
                limbs_from_mpz(c[q]->l, N, v);                                                \
            }                                                                                 \
            F2##_one(&a, &b, p, "random");                                                    \
        }                                                                                     \
        mpz_clears(p, v, e, NULL);                                                            \
    }

FP2_GMP_TESTS(bn254_fp2, bn254_fp, 4)
FP2_GMP_TESTS(bls12_381_fp2, bls12_381_fp, 6)

int main(void)
{
    int asm_ok = cuzk_ff_init();
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the portable C; pass 1: the assembly (when this CPU has it) */
        if (pass == 1 && !asm_ok) {
            printf("fp2_gmp_test: this CPU has no BMI2 + ADX: the assembly path is not "
                   "checked here\n");
            break;
        }
        cuzk__ff_use_asm = pass;
        bn254_fp2_run(2000);
        bls12_381_fp2_run(2000);
    }
    cuzk__ff_use_asm = asm_ok;
    return tu_finish("fp2_gmp_test");
}
