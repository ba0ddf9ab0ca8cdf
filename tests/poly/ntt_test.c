/*
 * NTT (poly/ntt.h) on Fr of both curves:
 *  - roots of unity equal ffjavascript's Fr.w[k] (tests/vectors/roots.json, written by
 *    tests/vectors/gen/roots.mjs), w^(2^k) = 1 and w^(2^(k-1)) = -1;
 *  - forward NTT against the naive O(n^2) evaluation sum_j a_j w^(ij) at sizes 2^0 .. 2^8 and
 *    at sampled outputs for 2^12 (wide stages), several thread counts;
 *  - iNTT(NTT(x)) = x; coset shift against a_i g^i;
 *  - the Groth16 H step against a naive computation: interpolate by the naive inverse DFT,
 *    evaluate A, B, C at the odd 2N-th roots w_2N^(2i+1) by Horner, h_i = A B - C; with
 *    zero padding of short inputs.
 */
#include <string.h>

#include "ff/ff.h"
#include "poly/ntt.h"
#include "testutil.h"

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
                    F##_t wi, acc = F##_ZERO, x = F##_ONE, u;                             \
                    F##_pow_u64(&wi, &d.omega, i);                                        \
                    for (size_t j = 0; j < n; j++) {                                      \
                        F##_mul(&u, &a[j], &x);                                           \
                        F##_add(&acc, &acc, &u);                                          \
                        F##_mul(&x, &x, &wi);                                             \
                    }                                                                     \
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
            /* H step, naive for k <= 6 */                                                \
            if (k <= 6) {                                                                 \
                size_t na = n, nb = n > 1 ? n - 1 : n, nc = n / 2; /* zero padding */     \
                rand_##F(b, n);                                                           \
                rand_##F(c, n);                                                           \
                CHECK(F##_groth16_h(&d, h, a, na, b, nb, c, nc, th) == CUZK_OK);          \
                F##_t ca[64], cb[64], cc[64], ev[64], ninv, w2, x;                        \
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
            }                                                                             \
            F##_domain_free(&d);                                                          \
        }                                                                                 \
        F##_domain d;                                                                     \
        CHECK(F##_domain_init(&d, S + 1) == CUZK_INVALID_ARGUMENT);                       \
    }

NTT_TESTS(bn254_fr, "bn254", BN254_FR_TWO_ADICITY)
NTT_TESTS(bls12_381_fr, "bls12_381", BLS12_381_FR_TWO_ADICITY)

int main(void)
{
    cuzk_ff_init();
    size_t len;
    roots_json = tu_read_file(tu_src_path("tests/vectors/roots.json"), &len);
    CHECK_MSG(roots_json != NULL, "tests/vectors/roots.json missing");
    if (roots_json) {
        test_bn254_fr();
        test_bls12_381_fr();
    }
    return tu_finish("ntt_test");
}
