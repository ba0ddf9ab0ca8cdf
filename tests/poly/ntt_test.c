/*
 * NTT (poly/ntt.h) on Fr of both curves:
 *  - roots of unity equal ffjavascript's Fr.w[k] (tests/vectors/roots.json, written by
 *    tests/vectors/gen/roots.mjs), w^(2^k) = 1 and w^(2^(k-1)) = -1;
 *  - forward NTT against the naive O(n^2) evaluation sum_j a_j w^(ij) at sizes 2^0 .. 2^8 and
 *    at sampled outputs for 2^12 (wide stages), several thread counts;
 *  - iNTT(NTT(x)) = x; coset shift against a_i g^i;
 *  - the Groth16 H step against a naive computation: interpolate by the naive inverse DFT,
 *    evaluate A, B, C at the odd 2N-th roots w_2N^(2i+1) by Horner, h_i = A B - C; with
 *    zero padding of short inputs (sizes 2^0 .. 2^8); the in-place variant equal to it;
 *  - 2^13 .. 2^16 (test_big below); and the small sizes again with the portable
 *    multiplication when the assembly kernel is in use (the NTT loops have a copy for each).
 */
#include <string.h>

#include "ff/ff.h"
#include "poly/ntt.h"
#include "testutil.h"
#include "util/parallel.h"

static const char *roots_json;

/* The k-th decimal string of the "w" array of the named curve in roots.json. */
static int json_root(const char *curve, unsigned k, const char **s, size_t *len)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\"", curve);
    const char *p = strstr(roots_json, key);
    if (!p || !(p = strstr(p, "\"w\"")) || !(p = strchr(p, '[')))
        return -1;
    for (unsigned i = 0; i <= k; i++) {
        p = strchr(p + 1, '"');
        if (!p)
            return -1;
        const char *e = strchr(p + 1, '"');
        if (i == k) {
            *s = p + 1;
            *len = (size_t)(e - p - 1);
            return 0;
        }
        p = e;
    }
    return -1;
}

#define NTT_TESTS(F, NAME, S)                                                             \
    static void naive_dft_##F(F##_t *out, const F##_t *a, size_t n, const F##_t *w)       \
    {                                                                                     \
        F##_t wi = F##_ONE;                                                               \
        for (size_t i = 0; i < n; i++) {                                                  \
            F##_t acc = F##_ZERO, x = F##_ONE, t;                                         \
            for (size_t j = 0; j < n; j++) {                                              \
                F##_mul(&t, &a[j], &x);                                                   \
                F##_add(&acc, &acc, &t);                                                  \
                F##_mul(&x, &x, &wi);                                                     \
            }                                                                             \
            out[i] = acc;                                                                 \
            F##_mul(&wi, &wi, w);                                                         \
        }                                                                                 \
    }                                                                                     \
    /* One output of the DFT, directly: sum_j a_j w^(i j). */                             \
    static void dft_at_##F(F##_t *acc, const F##_t *a, size_t n, const F##_t *w, size_t i) \
    {                                                                                     \
        F##_t wi, x = F##_ONE, u;                                                         \
        F##_pow_u64(&wi, w, i);                                                           \
        *acc = F##_ZERO;                                                                  \
        for (size_t j = 0; j < n; j++) {                                                  \
            F##_mul(&u, &a[j], &x);                                                       \
            F##_add(acc, acc, &u);                                                        \
            F##_mul(&x, &x, &wi);                                                         \
        }                                                                                 \
    }                                                                                     \
    static void rand_##F(F##_t *a, size_t n)                                              \
    {                                                                                     \
        for (size_t i = 0; i < n; i++)                                                    \
            F##_from_u64(&a[i], tu_rand64()), F##_mul(&a[i], &a[i], &a[i]);               \
    }                                                                                     \
    static void test_##F(void)                                                            \
    {                                                                                     \
        F##_t w, t, one = F##_ONE, mone;                                                  \
        F##_neg(&mone, &one);                                                             \
        CHECK(F##_root_of_unity(&w, S + 1) != 0);                                         \
        for (unsigned k = 0; k <= S; k++) {                                               \
            const char *s;                                                                \
            size_t len;                                                                   \
            F##_t ref;                                                                    \
            CHECK(F##_root_of_unity(&w, k) == 0);                                         \
            CHECK(json_root(NAME, k, &s, &len) == 0 && F##_from_dec(&ref, s, len) == 0);  \
            CHECK_MSG(F##_eq(&w, &ref), NAME " root k=%u differs from ffjavascript", k);  \
            t = w;                                                                        \
            for (unsigned i = 0; i + 1 < k; i++)                                          \
                F##_sqr(&t, &t);                                                          \
            if (k >= 1)                                                                   \
                CHECK(F##_eq(&t, &mone));                                                 \
            F##_sqr(&t, &t);                                                              \
            CHECK(k == 0 ? F##_eq(&w, &one) : F##_eq(&t, &one));                          \
        }                                                                                 \
        static F##_t a[1 << 12], b[1 << 12], c[1 << 12], h[1 << 12];                      \
        for (unsigned k = 0; k <= 12; k++) {                                              \
            F##_domain d;                                                                 \
            CHECK(F##_domain_init(&d, k) == CUZK_OK);                                     \
            size_t n = d.n;                                                               \
            unsigned th = (unsigned[]){1, 2, 3}[k % 3];                                   \
            rand_##F(a, n);                                                               \
            memcpy(b, a, sizeof(F##_t) * n);                                              \
            F##_ntt(&d, b, th);                                                           \
            if (k <= 8) {                                                                 \
                naive_dft_##F(c, a, n, &d.omega);                                         \
                CHECK_MSG(memcmp(b, c, sizeof(F##_t) * n) == 0, NAME " ntt k=%u", k);     \
            } else {                                                                      \
                for (int s = 0; s < 16; s++) { /* sampled outputs */                      \
                    size_t i = s == 0 ? 0 : s == 1 ? n - 1 : tu_rand64() % n;             \
                    F##_t acc;                                                            \
                    dft_at_##F(&acc, a, n, &d.omega, i);                                  \
                    CHECK_MSG(F##_eq(&acc, &b[i]), NAME " ntt k=%u i=%zu", k, i);         \
                }                                                                         \
            }                                                                             \
            F##_intt(&d, b, th == 1 ? 2 : 1);                                             \
            CHECK_MSG(memcmp(a, b, sizeof(F##_t) * n) == 0, NAME " intt(ntt) k=%u", k);   \
            /* coset shift */                                                             \
            F##_t g, gi = F##_ONE;                                                        \
            F##_from_u64(&g, 7 + k);                                                      \
            F##_coset_shift(b, n, &g, th);                                                \
            int ok = 1;                                                                   \
            for (size_t i = 0; i < n; i++) {                                              \
                F##_mul(&t, &a[i], &gi);                                                  \
                ok &= F##_eq(&t, &b[i]);                                                  \
                F##_mul(&gi, &gi, &g);                                                    \
            }                                                                             \
            CHECK_MSG(ok, NAME " coset k=%u", k);                                         \
            /* H step, naive for k <= 8 */                                                \
            if (k <= 8) {                                                                 \
                size_t na = n, nb = n > 1 ? n - 1 : n, nc = n / 2; /* zero padding */     \
                rand_##F(b, n);                                                           \
                rand_##F(c, n);                                                           \
                CHECK(F##_groth16_h(&d, h, a, na, b, nb, c, nc, th) == CUZK_OK);          \
                F##_t ca[256], cb[256], cc[256], ev[256], ninv, w2, x;                    \
                memcpy(ev, b, sizeof(F##_t) * n);                                         \
                memset(ev + nb, 0, sizeof(F##_t) * (n - nb));                             \
                naive_dft_##F(cb, ev, n, &d.omega_inv);                                   \
                memcpy(ev, c, sizeof(F##_t) * n);                                         \
                memset(ev + nc, 0, sizeof(F##_t) * (n - nc));                             \
                naive_dft_##F(cc, ev, n, &d.omega_inv);                                   \
                naive_dft_##F(ca, a, n, &d.omega_inv);                                    \
                F##_from_u64(&ninv, n);                                                   \
                F##_inv(&ninv, &ninv);                                                    \
                F##_root_of_unity(&w2, k + 1);                                            \
                ok = 1;                                                                   \
                for (size_t i = 0; i < n; i++) {                                          \
                    F##_pow_u64(&x, &w2, 2 * i + 1);                                      \
                    F##_t A = F##_ZERO, B = F##_ZERO, C = F##_ZERO;                       \
                    for (size_t j = n; j-- > 0;) {                                        \
                        F##_mul(&A, &A, &x), F##_add(&A, &A, &ca[j]);                     \
                        F##_mul(&B, &B, &x), F##_add(&B, &B, &cb[j]);                     \
                        F##_mul(&C, &C, &x), F##_add(&C, &C, &cc[j]);                     \
                    }                                                                     \
                    F##_mul(&A, &A, &ninv), F##_mul(&B, &B, &ninv), F##_mul(&C, &C, &ninv); \
                    F##_mul(&A, &A, &B);                                                  \
                    F##_sub(&A, &A, &C);                                                  \
                    ok &= F##_eq(&A, &h[i]);                                              \
                }                                                                         \
                CHECK_MSG(ok, NAME " groth16_h k=%u", k);                                 \
                /* in place, on the zero-padded inputs */                                 \
                static F##_t ia[256], ib[256], ic[256];                                   \
                memcpy(ia, a, sizeof(F##_t) * n);                                         \
                memcpy(ib, b, sizeof(F##_t) * n);                                         \
                memset(ib + nb, 0, sizeof(F##_t) * (n - nb));                             \
                memcpy(ic, c, sizeof(F##_t) * n);                                         \
                memset(ic + nc, 0, sizeof(F##_t) * (n - nc));                             \
                CHECK(F##_groth16_h_inplace(&d, ia, ib, ic, th) == CUZK_OK);              \
                CHECK_MSG(memcmp(ia, h, sizeof(F##_t) * n) == 0,                          \
                          NAME " groth16_h_inplace k=%u", k);                             \
            }                                                                             \
            F##_domain_free(&d);                                                          \
        }                                                                                 \
        F##_domain d;                                                                     \
        CHECK(F##_domain_init(&d, S + 1) == CUZK_INVALID_ARGUMENT);                       \
    }

/*
 * Larger sizes (2^13 .. 2^16, where the transforms recurse below their top-stage split and
 * the H step's sub-blocks exceed one leaf), thread counts 1, 2 and more:
 *  - forward NTT at sampled outputs against the direct sum, iNTT(NTT(x)) = x;
 *  - the H step at sampled points against the barycentric formula (independent of any NTT):
 *    with x = w_2N^(2i+1), x^N = -1, so A(x) = sum_j a_j L_j(x) = (-2/N) sum_j a_j w^j/(x - w^j);
 *    h_i = A(x) B(x) - C(x); inputs b, c shorter than N (zero padding); and the whole h equal
 *    for every thread count.
 */
#define NTT_BIG_TESTS(F, NAME)                                                            \
    static F##_t big_a_##F[1 << 16], big_b_##F[1 << 16], big_c_##F[1 << 16];             \
    static F##_t big_h_##F[1 << 16], big_h2_##F[1 << 16], big_t_##F[1 << 16];            \
    static F##_t big_s_##F[1 << 16];                                                      \
    /* sum_j v_j w^j inv_j over the first len of the n values (inv_j = 1/(x - w^j)) */     \
    static void bary_sum_##F(F##_t *acc, const F##_t *v, size_t len, const F##_t *winv,   \
                             size_t n)                                                    \
    {                                                                                     \
        F##_t t;                                                                          \
        *acc = F##_ZERO;                                                                  \
        for (size_t j = 0; j < len && j < n; j++) {                                       \
            F##_mul(&t, &v[j], &winv[j]);                                                 \
            F##_add(acc, acc, &t);                                                        \
        }                                                                                 \
    }                                                                                     \
    typedef struct {                                                                      \
        F##_domain d;                                                                     \
        F##_t *h[2];                                                                      \
        const F##_t *a, *b, *c;                                                           \
        size_t n, nb, nc;                                                                 \
        cuzk_err err[2];                                                                  \
    } race_##F;                                                                           \
    static void race_task_##F(void *arg, unsigned t, unsigned T)                          \
    {                                                                                     \
        race_##F *r = arg;                                                                \
        (void)T;                                                                          \
        if (t < 2)                                                                        \
            r->err[t] = F##_groth16_h(&r->d, r->h[t], r->a, r->n, r->b, r->nb, r->c,      \
                                      r->nc, 1);                                          \
    }                                                                                     \
    static void test_big_##F(void)                                                        \
    {                                                                                     \
        F##_t *a = big_a_##F, *b = big_b_##F, *c = big_c_##F, *h = big_h_##F;             \
        F##_t *h2 = big_h2_##F, *tt = big_t_##F, *sc = big_s_##F;                         \
        for (unsigned k = 13; k <= 16; k++) {                                             \
            F##_domain d;                                                                 \
            CHECK(F##_domain_init(&d, k) == CUZK_OK);                                     \
            size_t n = d.n;                                                               \
            rand_##F(a, n);                                                               \
            for (unsigned th = 1; th <= 2; th++) {                                        \
                memcpy(b, a, sizeof(F##_t) * n);                                          \
                F##_ntt(&d, b, th);                                                       \
                for (int s = 0; s < 6; s++) { /* sampled outputs */                       \
                    size_t i = s == 0 ? 0 : s == 1 ? n - 1 : tu_rand64() % n;             \
                    F##_t acc;                                                            \
                    dft_at_##F(&acc, a, n, &d.omega, i);                                  \
                    CHECK_MSG(F##_eq(&acc, &b[i]), NAME " ntt k=%u th=%u i=%zu", k, th, i); \
                }                                                                         \
                F##_intt(&d, b, 3 - th);                                                  \
                CHECK_MSG(memcmp(a, b, sizeof(F##_t) * n) == 0, NAME " intt(ntt) k=%u", k); \
            }                                                                             \
            /* H step: b one short, c half length */                                      \
            size_t nb = n - 1, nc = n / 2 + 3;                                            \
            rand_##F(b, n);                                                               \
            rand_##F(c, n);                                                               \
            CHECK(F##_groth16_h(&d, h, a, n, b, nb, c, nc, 1) == CUZK_OK);                \
            unsigned ths[] = {2, 3, 8, 2};                                                \
            for (unsigned q = 0; q < 4; q++) {                                            \
                int asm_was = cuzk__ff_use_asm;                                           \
                if (q == 3) /* the portable multiplication's copy of the loops */         \
                    cuzk__ff_use_asm = 0;                                                 \
                CHECK(F##_groth16_h(&d, h2, a, n, b, nb, c, nc, ths[q]) == CUZK_OK);      \
                cuzk__ff_use_asm = asm_was;                                               \
                CHECK_MSG(memcmp(h, h2, sizeof(F##_t) * n) == 0,                          \
                          NAME " groth16_h k=%u threads %u%s vs 1", k, ths[q],            \
                          q == 3 ? " portable" : "");                                     \
            }                                                                             \
            { /* in place (b, c zero-padded by hand), 2 threads */                        \
                F##_t *ib = big_t_##F, *ic = big_s_##F;                                   \
                memcpy(h2, a, sizeof(F##_t) * n);                                         \
                memcpy(ib, b, sizeof(F##_t) * nb);                                        \
                memset(ib + nb, 0, sizeof(F##_t) * (n - nb));                             \
                memcpy(ic, c, sizeof(F##_t) * nc);                                        \
                memset(ic + nc, 0, sizeof(F##_t) * (n - nc));                             \
                CHECK(F##_groth16_h_inplace(&d, h2, ib, ic, 2) == CUZK_OK);               \
                CHECK_MSG(memcmp(h, h2, sizeof(F##_t) * n) == 0,                          \
                          NAME " groth16_h_inplace k=%u", k);                             \
            }                                                                             \
            if (k == 13) { /* first use of a fresh domain's coset table from two threads */ \
                race_##F r = {.h = {h2, tt}, .a = a, .b = b, .c = c, .n = n, .nb = nb,       \
                              .nc = nc};                                                  \
                CHECK(F##_domain_init(&r.d, k) == CUZK_OK);                               \
                cuzk_parallel_threads(2, race_task_##F, &r);                              \
                CHECK(r.err[0] == CUZK_OK && r.err[1] == CUZK_OK);                        \
                CHECK_MSG(memcmp(h, h2, sizeof(F##_t) * n) == 0 &&                        \
                              memcmp(h, tt, sizeof(F##_t) * n) == 0,                      \
                          NAME " groth16_h concurrent first use");                        \
                F##_domain_free(&r.d);                                                    \
            }                                                                             \
            F##_t w2, mtwo_n, x, wj, A, B, C;                                             \
            F##_root_of_unity(&w2, k + 1);                                                \
            F##_from_u64(&mtwo_n, n);                                                     \
            F##_inv(&mtwo_n, &mtwo_n);                                                    \
            F##_add(&mtwo_n, &mtwo_n, &mtwo_n);                                           \
            F##_neg(&mtwo_n, &mtwo_n); /* -2/N */                                         \
            for (int s = 0; s < 4; s++) {                                                 \
                size_t i = s == 0 ? 0 : s == 1 ? n - 1 : tu_rand64() % n;                 \
                F##_pow_u64(&x, &w2, 2 * i + 1);                                          \
                wj = F##_ONE;                                                             \
                for (size_t j = 0; j < n; j++) { /* tt_j = x - w^j, sc_j = w^j */         \
                    F##_sub(&tt[j], &x, &wj);                                             \
                    sc[j] = wj;                                                           \
                    F##_mul(&wj, &wj, &d.omega);                                          \
                }                                                                         \
                F##_batch_inv(tt, tt, n, h2);                                             \
                for (size_t j = 0; j < n; j++)                                            \
                    F##_mul(&tt[j], &tt[j], &sc[j]);                                      \
                bary_sum_##F(&A, a, n, tt, n);                                            \
                bary_sum_##F(&B, b, nb, tt, n);                                           \
                bary_sum_##F(&C, c, nc, tt, n);                                           \
                F##_mul(&A, &A, &mtwo_n);                                                 \
                F##_mul(&B, &B, &mtwo_n);                                                 \
                F##_mul(&C, &C, &mtwo_n);                                                 \
                F##_mul(&A, &A, &B);                                                      \
                F##_sub(&A, &A, &C);                                                      \
                CHECK_MSG(F##_eq(&A, &h[i]), NAME " groth16_h k=%u i=%zu", k, i);         \
            }                                                                             \
            F##_domain_free(&d);                                                          \
        }                                                                                 \
    }

NTT_TESTS(bn254_fr, "bn254", BN254_FR_TWO_ADICITY)
NTT_TESTS(bls12_381_fr, "bls12_381", BLS12_381_FR_TWO_ADICITY)
NTT_BIG_TESTS(bn254_fr, "bn254")
NTT_BIG_TESTS(bls12_381_fr, "bls12_381")

int main(void)
{
    cuzk_ff_init();
    size_t len;
    roots_json = tu_read_file(tu_src_path("tests/vectors/roots.json"), &len);
    CHECK_MSG(roots_json != NULL, "tests/vectors/roots.json missing");
    if (roots_json) {
        test_bn254_fr();
        test_bls12_381_fr();
        test_big_bn254_fr();
        test_big_bls12_381_fr();
        if (cuzk__ff_use_asm) { /* the small sizes again with the portable multiplication */
            cuzk__ff_use_asm = 0;
            test_bn254_fr();
            test_bls12_381_fr();
            cuzk__ff_use_asm = 1;
        }
    }
    return tu_finish("ntt_test");
}
