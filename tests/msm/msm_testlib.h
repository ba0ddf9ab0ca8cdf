/*
 * Shared by the MSM tests: random scalars, scalar bytes, and the known answers from
 * @noble/curves (tests/vectors/msm.json, made by tests/vectors/gen/msm.mjs; decimal coordinates
 * and scalars parsed with GMP). A test file defines, per group G, kat_run_G(pts, scalars, n,
 * &expected) (the MSMs it checks against the expected point), then instantiates MSM_KAT(G, FP,
 * limbs, G1|G2) for each group and calls kat_tests().
 */
#ifndef CUZK_TESTS_MSM_TESTLIB_H
#define CUZK_TESTS_MSM_TESTLIB_H

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

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

/* One scalar of test set sset: 0 random; 1 a mix of 0, 1, 2, r - 1, 16-bit and random; 2 all
 * equal to `same`; 3 mostly 0/1 with some 5s; 4 all ones (only the scalar-1 tree). */
static void msm_scalar_set(uint64_t k[4], int sset, const uint64_t same[4], const uint64_t r[4],
                           unsigned nbits)
{
    memset(k, 0, 32);
    if (sset == 0) {
        rand_scalar(k, r, nbits);
    } else if (sset == 1) {
        switch (tu_rand64() % 6) {
        case 0: break;
        case 1: k[0] = 1; break;
        case 2: k[0] = 2; break;
        case 3: memcpy(k, r, 32); k[0] -= 1; break;
        case 4: k[0] = tu_rand64() & 0xffff; break;
        default: rand_scalar(k, r, nbits);
        }
    } else if (sset == 2) {
        memcpy(k, same, 32);
    } else if (sset == 3) {
        k[0] = tu_rand64() % 4 == 0 ? 5 : tu_rand64() & 1;
    } else {
        k[0] = 1;
    }
}

/* 4 limbs as the 32 little-endian bytes the MSM reads. */
static void put_scalar(uint8_t *b, const uint64_t k[4])
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(k[i] >> (8 * j));
}

/* The value of "key":"..." in a JSON line (malloc'd), or NULL. */
static char *kat_field(const char *line, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *s = strstr(line, pat);
    if (!s)
        return NULL;
    s += strlen(pat);
    const char *e = strchr(s, '"');
    if (!e)
        return NULL;
    char *out = malloc((size_t)(e - s) + 1);
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = 0;
    return out;
}

/* Next comma-separated decimal of *p as limbs (at most 6) via GMP; advances *p. */
static void kat_next(const char **p, uint64_t *l, int n)
{
    const char *s = *p, *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char buf[160];
    memset(l, 0, sizeof(uint64_t) * (size_t)n);
    if (len < sizeof buf) {
        memcpy(buf, s, len);
        buf[len] = 0;
        mpz_t z;
        mpz_init_set_str(z, buf, 10);
        if (mpz_sizeinbase(z, 2) <= 64 * (size_t)n)
            mpz_export(l, NULL, -1, 8, 0, 0, z);
        mpz_clear(z);
    }
    *p = e ? e + 1 : s + len;
}

#define KAT_FP(F, NL, x, p)                                                               \
    do {                                                                                  \
        uint64_t l_[6];                                                                   \
        kat_next(p, l_, NL);                                                              \
        F##_from_canonical(x, l_);                                                        \
    } while (0)
#define KAT_G1(F, NL, x, p) KAT_FP(F, NL, x, p)
#define KAT_G2(F, NL, x, p)                                                               \
    do {                                                                                  \
        KAT_FP(F, NL, &(x)->c0, p);                                                       \
        KAT_FP(F, NL, &(x)->c1, p);                                                       \
    } while (0)

/* kat_G(line): parses one record of group G and hands it to kat_run_G. */
#define MSM_KAT(G, FP, NL, KIND)                                                          \
    static void kat_##G(const char *line)                                                 \
    {                                                                                     \
        char *ps = kat_field(line, "points"), *ks = kat_field(line, "scalars");           \
        char *xs = kat_field(line, "x"), *ys = kat_field(line, "y"), *ns = kat_field(line, "n"); \
        CHECK(ps && ks && xs && ys && ns);                                                \
        size_t n = ns ? strtoul(ns, NULL, 10) : 0;                                        \
        G##_affine *pts = malloc(sizeof(G##_affine) * (n ? n : 1));                       \
        uint8_t *sb = malloc(32 * (n ? n : 1));                                           \
        const char *p = ps, *k = ks;                                                      \
        for (size_t i = 0; ps && ks && i < n; i++) {                                      \
            KAT_##KIND(FP, NL, &pts[i].x, &p);                                            \
            KAT_##KIND(FP, NL, &pts[i].y, &p);                                            \
            CHECK(G##_affine_is_on_curve(&pts[i]));                                       \
            uint64_t kl[4];                                                               \
            kat_next(&k, kl, 4);                                                          \
            put_scalar(sb + 32 * i, kl);                                                  \
        }                                                                                 \
        G##_affine ea;                                                                    \
        const char *xp = xs ? xs : "0", *yp = ys ? ys : "0";                              \
        KAT_##KIND(FP, NL, &ea.x, &xp);                                                   \
        KAT_##KIND(FP, NL, &ea.y, &yp);                                                   \
        G##_jac exp;                                                                      \
        G##_from_affine(&exp, &ea);                                                       \
        kat_run_##G(pts, sb, n, &exp);                                                    \
        free(pts);                                                                        \
        free(sb);                                                                         \
        free(ps);                                                                         \
        free(ks);                                                                         \
        free(xs);                                                                         \
        free(ys);                                                                         \
        free(ns);                                                                         \
    }

static void kat_bn254_g1(const char *line);
static void kat_bn254_g2(const char *line);
static void kat_bls12_381_g1(const char *line);
static void kat_bls12_381_g2(const char *line);

/* Every record of tests/vectors/msm.json (one per curve and group) through kat_G. */
static void kat_tests(void)
{
    size_t len;
    char *txt = tu_read_file(tu_src_path("tests/vectors/msm.json"), &len);
    CHECK_MSG(txt != NULL, "missing tests/vectors/msm.json");
    if (!txt)
        return;
    int seen = 0;
    for (char *s = txt; *s;) {
        char *e = strchr(s, '\n');
        if (e)
            *e = 0;
        int bls = strstr(s, "\"curve\":\"bls12_381\"") != NULL;
        int g2 = strstr(s, "\"group\":\"g2\"") != NULL;
        if (*s) {
            seen++;
            if (bls)
                g2 ? kat_bls12_381_g2(s) : kat_bls12_381_g1(s);
            else
                g2 ? kat_bn254_g2(s) : kat_bn254_g1(s);
        }
        s = e ? e + 1 : s + strlen(s);
    }
    CHECK_MSG(seen == 4, "msm.json: %d records, expected 4", seen);
    free(txt);
}

#endif
