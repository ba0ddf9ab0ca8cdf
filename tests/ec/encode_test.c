/*
 * Point encodings and subgroup tests (src/ec/encode.h, src/ec/subgroup.h, src/ff/fp2_sqrt.h)
 * against known answers from @noble/curves and ffjavascript (tests/vectors/points_*.json,
 * written by tests/vectors/gen/points.mjs), plus GMP for field-level facts:
 *  - k*G computed with mul_limbs has noble's affine coordinates; its snarkjs binary and JSON
 *    encodings are ffjavascript's byte for byte, its ZCash encodings noble's; every encoding
 *    decodes back to the point, with full validation;
 *  - every invalid input of the vectors is rejected with the expected error, and the
 *    off-subgroup points are accepted by the on-curve-only fast path;
 *  - truncated and over-long inputs are rejected;
 *  - Fp2 square roots, the lexicographic order, and the endomorphism subgroup tests agree with
 *    the definitions (r * P == O, with cofactors computed by GMP) on random curve points.
 */
#include <gmp.h>
#include <string.h>
#include <time.h>

#include "ec/encode.h"
#include "ec/subgroup.h"
#include "ff/fp2_sqrt.h"
#include "testutil.h"

/* ------------------------------------------------------------------ record parsing */

/* Value of "key":"..." in a one-line record, into out; 0 if missing. */
static int field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *s = strstr(line, pat);
    if (!s)
        return 0;
    s += strlen(pat);
    const char *e = strchr(s, '"');
    if (!e || (size_t)(e - s) + 1 > cap)
        return 0;
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = 0;
    return 1;
}

static size_t unhex(uint8_t *out, size_t cap, const char *h)
{
    size_t n = strlen(h) / 2;
    if (n > cap)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
    return n;
}

/* Splits a comma-joined list in place; returns the count. */
static int split(char *s, const char **parts, int max)
{
    int n = 0;
    parts[n++] = s;
    for (char *c = s; *c && n <= max; c++)
        if (*c == ',') {
            *c = 0;
            if (n == max)
                return max + 1;
            parts[n++] = c + 1;
        }
    return n;
}

static void dec_to_limbs(uint64_t *l, int n, const char *dec)
{
    mpz_t z;
    size_t cnt = 0;
    mpz_init_set_str(z, dec, 10);
    memset(l, 0, sizeof(uint64_t) * (size_t)n);
    mpz_export(l, &cnt, -1, 8, 0, 0, z);
    mpz_clear(z);
}

static cuzk_err err_by_name(const char *name)
{
    for (int e = 0; e < CUZK__ERR_COUNT; e++)
        if (!strcmp(cuzk_errname((cuzk_err)e), name))
            return (cuzk_err)e;
    return CUZK__ERR_COUNT;
}

#define LINE_MAX_ 8192
static char line_buf[LINE_MAX_];
static long n_points, n_invalid;

/* ------------------------------------------------------------------ per-group checks */

/* Coordinates of an affine point against decimal strings (G1: x y; G2: x_c0 x_c1 y_c0 y_c1). */
#define COORD_EQ(FB, v, dec) (FB##_from_dec(&tmp_, dec, strlen(dec)) == 0 && FB##_eq(&tmp_, v))

#define DEFINE_GROUP(G, F, FB, DEG, ZC)                                                   \
    static void G##_point(const char *line)                                               \
    {                                                                                     \
        char k[200], buf[4096], js[2048];                                                 \
        uint64_t kl[4];                                                                   \
        CHECK(field(line, "k", k, sizeof k));                                             \
        dec_to_limbs(kl, 4, k);                                                           \
        G##_jac g, pj;                                                                    \
        G##_affine pa, back;                                                              \
        G##_from_affine(&g, &G##_GEN);                                                    \
        G##_mul_limbs(&pj, &g, kl, 4);                                                    \
        G##_to_affine(&pa, &pj);                                                          \
        FB##_t tmp_;                                                                      \
        const FB##_t *cx = (const FB##_t *)&pa.x, *cy = (const FB##_t *)&pa.y;            \
        static const char *const names1[] = {"x", "y"};                                   \
        static const char *const names2[] = {"x_c0", "x_c1", "y_c0", "y_c1"};             \
        for (int c = 0; c < 2 * DEG; c++) {                                               \
            const char *nm = DEG == 1 ? names1[c] : names2[c];                            \
            CHECK(field(line, nm, buf, sizeof buf));                                      \
            const FB##_t *v = c < DEG ? &cx[c] : &cy[c - DEG];                            \
            CHECK_MSG(COORD_EQ(FB, v, buf), #G " k=%s %s", k, nm);                        \
        }                                                                                 \
        /* snarkjs binary */                                                              \
        uint8_t want[512], got[512];                                                      \
        size_t n;                                                                         \
        cuzk_errbuf eb;                                                                   \
        CHECK(field(line, "snarkjs", buf, sizeof buf));                                   \
        n = unhex(want, sizeof want, buf);                                                \
        CHECK(n == sizeof(G##_affine));                                                   \
        G##_to_snarkjs(got, &pa);                                                         \
        CHECK_MSG(!memcmp(got, want, n), #G " k=%s snarkjs bytes", k);                   \
        memset(&back, 0x55, sizeof back);                                                 \
        CHECK(G##_from_snarkjs(&back, want, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);     \
        CHECK(G##_affine_eq(&back, &pa));                                                 \
        /* snarkjs JSON */                                                                \
        char dec[3 * DEG][CUZK_EC_DEC_MAX];                                               \
        const char *parts[8];                                                             \
        CHECK(field(line, "json", js, sizeof js));                                        \
        G##_to_json_dec(dec, &pa);                                                        \
        CHECK(split(js, parts, 8) == 3 * DEG);                                            \
        for (int c = 0; c < 3 * DEG; c++)                                                 \
            CHECK_MSG(!strcmp(dec[c], parts[c]), #G " k=%s json[%d] %s != %s", k, c,      \
                      dec[c], parts[c]);                                                  \
        memset(&back, 0x55, sizeof back);                                                 \
        CHECK(G##_from_json_dec(&back, parts, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);   \
        CHECK(G##_affine_eq(&back, &pa));                                                 \
        /* subgroup tests agree on members */                                             \
        CHECK(G##_in_subgroup(&pa));                                                      \
        CHECK(G##_in_subgroup_naive(&pa));                                                \
        if (ZC)                                                                           \
            G##_zcash_point(line, &pa, k);                                                \
        n_points++;                                                                       \
    }                                                                                     \
                                                                                          \
    static void G##_invalid(const char *line)                                             \
    {                                                                                     \
        char enc[32], data[4096], err[64], why[200];                                      \
        uint8_t bytes[512];                                                               \
        CHECK(field(line, "enc", enc, sizeof enc));                                       \
        CHECK(field(line, "data", data, sizeof data));                                    \
        CHECK(field(line, "error", err, sizeof err));                                     \
        field(line, "why", why, sizeof why);                                              \
        cuzk_err want = err_by_name(err), got, fast = CUZK_INTERNAL;                      \
        cuzk_errbuf eb = {{0}};                                                           \
        G##_affine a, orig;                                                               \
        memset(&orig, 0x77, sizeof orig);                                                 \
        a = orig;                                                                         \
        if (!strcmp(enc, "snarkjs")) {                                                    \
            size_t n = unhex(bytes, sizeof bytes, data);                                  \
            CHECK(n == sizeof(G##_affine));                                               \
            got = G##_from_snarkjs(&a, bytes, CUZK_EC_CHECK_SUBGROUP, &eb);               \
            G##_affine b;                                                                 \
            fast = G##_from_snarkjs(&b, bytes, CUZK_EC_CHECK_CURVE, NULL);                \
            if (want == CUZK_NOT_IN_SUBGROUP) {                                           \
                CHECK(!G##_in_subgroup(&b));                                              \
                CHECK(!G##_in_subgroup_naive(&b));                                        \
            }                                                                             \
        } else if (!strcmp(enc, "json")) {                                                \
            const char *parts[8];                                                         \
            CHECK(split(data, parts, 8) == 3 * DEG);                                      \
            got = G##_from_json_dec(&a, parts, CUZK_EC_CHECK_SUBGROUP, &eb);              \
            G##_affine b;                                                                 \
            fast = G##_from_json_dec(&b, parts, CUZK_EC_CHECK_CURVE, NULL);               \
        } else {                                                                          \
            got = fast = G##_zcash_invalid(enc, data, &a, &eb);                           \
            if (want == CUZK_NOT_IN_SUBGROUP) {                                           \
                G##_affine b;                                                             \
                size_t n = unhex(bytes, sizeof bytes, data);                              \
                fast = G##_zcash_decode(enc, bytes, n, &b, CUZK_EC_CHECK_CURVE);          \
                CHECK(fast == CUZK_OK && !G##_in_subgroup(&b) && !G##_in_subgroup_naive(&b)); \
            }                                                                             \
        }                                                                                 \
        CHECK_MSG(got == want, #G " %s (%s): got %s, want %s (%s)", enc, why,             \
                  cuzk_errname(got), err, eb.msg);                                        \
        CHECK_MSG(eb.msg[0] != 0, #G " %s (%s): no message", enc, why);                   \
        CHECK(!memcmp(&a, &orig, sizeof a)); /* untouched on failure */                   \
        /* The on-curve-only level accepts exactly the off-subgroup points. */             \
        if (want == CUZK_NOT_IN_SUBGROUP)                                                 \
            CHECK_MSG(fast == CUZK_OK, #G " %s (%s): fast path %s", enc, why,             \
                      cuzk_errname(fast));                                                \
        else                                                                              \
            CHECK_MSG(fast == want, #G " %s (%s): fast path %s", enc, why,                \
                      cuzk_errname(fast));                                                \
        n_invalid++;                                                                      \
    }

/* ZCash parts (BLS12-381 only). */
#define DEFINE_ZCASH(G, CB)                                                               \
    static cuzk_err G##_zcash_decode(const char *enc, const uint8_t *b, size_t n,         \
                                     G##_affine *a, cuzk__ec_check chk)                   \
    {                                                                                     \
        cuzk_errbuf eb;                                                                   \
        if (!strcmp(enc, "compressed"))                                                   \
            return G##_from_compressed(a, b, n, chk, &eb);                                \
        return G##_from_uncompressed(a, b, n, chk, &eb);                                  \
    }                                                                                     \
    static cuzk_err G##_zcash_invalid(const char *enc, const char *data, G##_affine *a,   \
                                      cuzk_errbuf *eb)                                    \
    {                                                                                     \
        uint8_t b[512];                                                                   \
        size_t n = unhex(b, sizeof b, data);                                              \
        cuzk_err e1, e2;                                                                  \
        if (!strcmp(enc, "compressed"))                                                   \
            e1 = G##_from_compressed(a, b, n, CUZK_EC_CHECK_SUBGROUP, eb);                \
        else                                                                              \
            e1 = G##_from_uncompressed(a, b, n, CUZK_EC_CHECK_SUBGROUP, eb);              \
        /* The flag-dispatching decoder rejects it too (a flipped compression flag makes   \
         * it read the other form, whose length is then wrong). */                        \
        G##_affine c;                                                                     \
        e2 = G##_from_zcash(&c, b, n, CUZK_EC_CHECK_SUBGROUP, NULL);                      \
        CHECK_MSG(e2 != CUZK_OK, #G " from_zcash accepted what from_%s rejects", enc);     \
        return e1;                                                                        \
    }                                                                                     \
    static void G##_zcash_point(const char *line, const G##_affine *pa, const char *k)    \
    {                                                                                     \
        char buf[1024];                                                                   \
        uint8_t want[2 * CB + 1], got[2 * CB];                                            \
        cuzk_errbuf eb;                                                                   \
        G##_affine back;                                                                  \
        CHECK(field(line, "compressed", buf, sizeof buf));                                \
        CHECK(unhex(want, sizeof want, buf) == CB);                                       \
        G##_to_compressed(got, pa);                                                       \
        CHECK_MSG(!memcmp(got, want, CB), #G " k=%s compressed", k);                      \
        CHECK(G##_from_compressed(&back, want, CB, CUZK_EC_CHECK_SUBGROUP, &eb) == 0);    \
        CHECK(G##_affine_eq(&back, pa));                                                  \
        CHECK(G##_from_zcash(&back, want, CB, CUZK_EC_CHECK_SUBGROUP, &eb) == 0);         \
        CHECK(G##_affine_eq(&back, pa));                                                  \
        CHECK(G##_from_compressed(&back, want, CB - 1, CUZK_EC_CHECK_SUBGROUP, &eb) ==    \
              CUZK_TRUNCATED);                                                            \
        CHECK(G##_from_zcash(&back, want, 1, CUZK_EC_CHECK_SUBGROUP, &eb) ==              \
              CUZK_TRUNCATED);                                                            \
        want[CB] = 0;                                                                     \
        CHECK(G##_from_compressed(&back, want, CB + 1, CUZK_EC_CHECK_SUBGROUP, &eb) ==    \
              CUZK_BAD_ENCODING);                                                         \
        CHECK(field(line, "uncompressed", buf, sizeof buf));                              \
        CHECK(unhex(want, sizeof want, buf) == 2 * CB);                                   \
        G##_to_uncompressed(got, pa);                                                     \
        CHECK_MSG(!memcmp(got, want, 2 * CB), #G " k=%s uncompressed", k);                \
        CHECK(G##_from_uncompressed(&back, want, 2 * CB, CUZK_EC_CHECK_SUBGROUP, &eb) == 0); \
        CHECK(G##_affine_eq(&back, pa));                                                  \
        CHECK(G##_from_zcash(&back, want, 2 * CB, CUZK_EC_CHECK_SUBGROUP, &eb) == 0);     \
        CHECK(G##_affine_eq(&back, pa));                                                  \
        CHECK(G##_from_uncompressed(&back, want, 2 * CB - 1, CUZK_EC_CHECK_SUBGROUP,      \
                                    &eb) == CUZK_TRUNCATED);                              \
        CHECK(G##_from_zcash(&back, want, CB, CUZK_EC_CHECK_SUBGROUP, &eb) ==             \
              CUZK_TRUNCATED);                                                            \
    }

DEFINE_ZCASH(bls12_381_g1, 48)
DEFINE_ZCASH(bls12_381_g2, 96)
/* Placeholders so the BN254 instantiations compile; never called (ZC = 0). */
#define NO_ZCASH(G)                                                                       \
    static void G##_zcash_point(const char *l, const G##_affine *p, const char *k)        \
    {                                                                                     \
        (void)l, (void)p, (void)k;                                                        \
    }                                                                                     \
    static cuzk_err G##_zcash_invalid(const char *e, const char *d, G##_affine *a,        \
                                      cuzk_errbuf *eb)                                    \
    {                                                                                     \
        (void)e, (void)d, (void)a;                                                        \
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "no ZCash encoding on BN254");             \
    }                                                                                     \
    static cuzk_err G##_zcash_decode(const char *e, const uint8_t *b, size_t n,           \
                                     G##_affine *a, cuzk__ec_check c)                     \
    {                                                                                     \
        (void)e, (void)b, (void)n, (void)a, (void)c;                                      \
        return CUZK_UNSUPPORTED;                                                          \
    }
NO_ZCASH(bn254_g1)
NO_ZCASH(bn254_g2)

DEFINE_GROUP(bn254_g1, bn254_fp, bn254_fp, 1, 0)
DEFINE_GROUP(bn254_g2, bn254_fp2, bn254_fp, 2, 0)
DEFINE_GROUP(bls12_381_g1, bls12_381_fp, bls12_381_fp, 1, 1)
DEFINE_GROUP(bls12_381_g2, bls12_381_fp2, bls12_381_fp, 2, 1)

static void run_vectors(const char *curve)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tests/vectors/points_%s.json", curve);
    size_t len;
    char *txt = tu_read_file(tu_src_path(rel), &len);
    CHECK_MSG(txt != NULL, "missing %s", rel);
    if (!txt)
        return;
    int bls = !strcmp(curve, "bls12_381");
    for (char *s = txt; *s;) {
        char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n < sizeof line_buf) {
            memcpy(line_buf, s, n);
            line_buf[n] = 0;
            char kind[16], group[8];
            if (field(line_buf, "kind", kind, sizeof kind) &&
                field(line_buf, "group", group, sizeof group)) {
                int pt = !strcmp(kind, "point"), g2 = !strcmp(group, "g2");
                if (bls) {
                    if (pt)
                        g2 ? bls12_381_g2_point(line_buf) : bls12_381_g1_point(line_buf);
                    else
                        g2 ? bls12_381_g2_invalid(line_buf) : bls12_381_g1_invalid(line_buf);
                } else {
                    if (pt)
                        g2 ? bn254_g2_point(line_buf) : bn254_g1_point(line_buf);
                    else
                        g2 ? bn254_g2_invalid(line_buf) : bn254_g1_invalid(line_buf);
                }
            }
        }
        s += n;
        if (*s)
            s++;
    }
    free(txt);
}

/* ------------------------------------------------------------------ field level */

#define RAND_FP(FB, N, out)                                                               \
    do {                                                                                  \
        uint64_t l_[N];                                                                   \
        do {                                                                              \
            tu_rand_bytes(l_, sizeof l_);                                                 \
            l_[N - 1] >>= 2; /* both moduli have their top two bits clear */             \
        } while (!FB##_limbs_lt_p(l_));                                                   \
        FB##_from_canonical(&(out), l_);                                                  \
    } while (0)

/* Fp2 sqrt: roots of squares are +-a; existence matches the norm's Legendre symbol (a is a
 * square in Fp2 iff its norm c0^2 + c1^2 is a square in Fp); special elements of both
 * branches of the algorithm. Lexicographic order against GMP. */
#define FP2_TESTS(F2, FB, N)                                                              \
    do {                                                                                  \
        F2##_t a, s, r, t, m1;                                                            \
        int sq = 0, nsq = 0;                                                              \
        for (int it = 0; it < 200; it++) {                                                \
            RAND_FP(FB, N, a.c0);                                                         \
            RAND_FP(FB, N, a.c1);                                                         \
            if (it % 7 == 0)                                                              \
                a.c1 = FB##_ZERO; /* base-field elements: the alpha = -1 branch */         \
            F2##_sqr(&s, &a);                                                             \
            CHECK(F2##_sqrt(&r, &s) == 0);                                                \
            F2##_neg(&t, &a);                                                             \
            CHECK(F2##_eq(&r, &a) || F2##_eq(&r, &t));                                    \
            FB##_t n0, n1;                                                                \
            FB##_sqr(&n0, &a.c0);                                                         \
            FB##_sqr(&n1, &a.c1);                                                         \
            FB##_add(&n0, &n0, &n1);                                                      \
            int has = F2##_sqrt(&r, &a) == 0;                                             \
            CHECK(has == (FB##_legendre(&n0) >= 0));                                      \
            if (has) {                                                                    \
                F2##_sqr(&t, &r);                                                         \
                CHECK(F2##_eq(&t, &a));                                                   \
                sq++;                                                                     \
            } else {                                                                      \
                nsq++;                                                                    \
            }                                                                             \
            /* exactly one of a, -a is the larger (a != 0) */                             \
            F2##_neg(&t, &a);                                                             \
            if (!F2##_is_zero(&a))                                                        \
                CHECK(F2##_is_lex_largest(&a) != F2##_is_lex_largest(&t));                \
        }                                                                                 \
        CHECK(sq > 20 && nsq > 20);                                                       \
        F2##_set_zero(&a);                                                                \
        CHECK(F2##_sqrt(&r, &a) == 0 && F2##_is_zero(&r));                                \
        CHECK(!F2##_is_lex_largest(&a));                                                  \
        F2##_set_one(&m1);                                                                \
        F2##_neg(&m1, &m1);                                                               \
        CHECK(F2##_sqrt(&r, &m1) == 0); /* sqrt(-1) = +-u */                              \
        CHECK(FB##_is_zero(&r.c0) && (FB##_is_one(&r.c1) || ({                            \
                  FB##_t n_;                                                              \
                  FB##_neg(&n_, &r.c1);                                                   \
                  FB##_is_one(&n_);                                                       \
              })));                                                                       \
        /* Fp order against GMP: largest iff 2v > p. */                                   \
        mpz_t v, pz;                                                                      \
        mpz_inits(v, pz, NULL);                                                           \
        mpz_import(pz, N, -1, 8, 0, 0, FB##_P.l);                                         \
        for (int it = 0; it < 200; it++) {                                                \
            FB##_t x;                                                                     \
            uint64_t l[N];                                                                \
            RAND_FP(FB, N, x);                                                            \
            if (it == 0)                                                                  \
                FB##_set_zero(&x);                                                        \
            FB##_to_canonical(l, &x);                                                     \
            if (it == 1) { /* (p-1)/2 and (p+1)/2, the boundary */                       \
                mpz_sub_ui(v, pz, 1);                                                     \
                mpz_fdiv_q_2exp(v, v, 1);                                                 \
            } else if (it == 2) {                                                         \
                mpz_add_ui(v, pz, 1);                                                     \
                mpz_fdiv_q_2exp(v, v, 1);                                                 \
            } else {                                                                      \
                mpz_import(v, N, -1, 8, 0, 0, l);                                         \
            }                                                                             \
            memset(l, 0, sizeof l);                                                       \
            mpz_export(l, NULL, -1, 8, 0, 0, v);                                          \
            FB##_from_canonical(&x, l);                                                   \
            mpz_mul_2exp(v, v, 1);                                                        \
            CHECK(FB##_is_lex_largest(&x) == (mpz_cmp(v, pz) > 0));                       \
            /* Fp2 with c1 = 0 falls back to c0; with c1 != 0, c1 decides */              \
            F2##_t y = {x, FB##_ZERO};                                                    \
            CHECK(F2##_is_lex_largest(&y) == FB##_is_lex_largest(&x));                    \
            F2##_t w = {FB##_ONE, x};                                                     \
            if (!FB##_is_zero(&x))                                                        \
                CHECK(F2##_is_lex_largest(&w) == FB##_is_lex_largest(&x));                \
        }                                                                                 \
        mpz_clears(v, pz, NULL);                                                          \
    } while (0)

/* ------------------------------------------------------------------ subgroup tests */

/* A random point of E(F): random x until x^3 + b is a square. */
#define RAND_POINT(G, F, SQRT, RANDF, out)                                                \
    do {                                                                                  \
        for (;;) {                                                                        \
            F##_t x_, r_;                                                                 \
            RANDF(x_);                                                                    \
            F##_sqr(&r_, &x_);                                                            \
            F##_mul(&r_, &r_, &x_);                                                       \
            F##_add(&r_, &r_, &G##_B);                                                    \
            if (SQRT(&(out).y, &r_) == 0) {                                               \
                (out).x = x_;                                                             \
                break;                                                                    \
            }                                                                             \
        }                                                                                 \
    } while (0)

#define RF_BLS1(x) RAND_FP(bls12_381_fp, 6, x)
#define RF_BLS2(x)                                                                        \
    do {                                                                                  \
        RAND_FP(bls12_381_fp, 6, (x).c0);                                                 \
        RAND_FP(bls12_381_fp, 6, (x).c1);                                                 \
    } while (0)
#define RF_BN2(x)                                                                         \
    do {                                                                                  \
        RAND_FP(bn254_fp, 4, (x).c0);                                                     \
        RAND_FP(bn254_fp, 4, (x).c1);                                                     \
    } while (0)

/* Random curve points (almost surely outside the subgroup), then the same times the cofactor
 * h (inside it): the fast test must agree with r * P == O on both. */
#define SUBGROUP_AGREE(G, F, SQRT, RANDF, HL, HN, iters)                                  \
    do {                                                                                  \
        int outside = 0;                                                                  \
        for (int it = 0; it < iters; it++) {                                              \
            G##_affine a, c;                                                              \
            G##_jac j;                                                                    \
            RAND_POINT(G, F, SQRT, RANDF, a);                                             \
            CHECK(G##_affine_is_on_curve(&a));                                            \
            int naive = G##_in_subgroup_naive(&a);                                        \
            CHECK(G##_in_subgroup(&a) == naive);                                          \
            outside += !naive;                                                            \
            G##_from_affine(&j, &a);                                                      \
            G##_mul_limbs(&j, &j, HL, HN);                                                \
            G##_to_affine(&c, &j);                                                        \
            CHECK(G##_in_subgroup_naive(&c));                                             \
            CHECK(G##_in_subgroup(&c));                                                   \
        }                                                                                 \
        CHECK(outside == iters);                                                          \
    } while (0)

static void mpz_to_limbs(uint64_t *l, int n, const mpz_t z)
{
    memset(l, 0, sizeof(uint64_t) * (size_t)n);
    CHECK(mpz_sizeinbase(z, 2) <= (size_t)64 * (size_t)n);
    mpz_export(l, NULL, -1, 8, 0, 0, z);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void subgroup_tests(void)
{
    /* Cofactors from the curve parameters, with GMP: BLS12-381 u = -0xd201000000010000,
     * h1 = (u - 1)^2 / 3, h2 = (u^8 - 4u^7 + 5u^6 - 4u^4 + 6u^3 - 4u^2 - 4u + 13) / 9;
     * BN254 G2: #E'(Fp2) = r (2p - r), so h = 2p - r. Each is checked against its curve
     * order identity where one is at hand: #E(Fp) = p + 1 - t = h1 r with t = u + 1. */
    mpz_t u, h1, h2, t, p, r, hb;
    mpz_inits(u, h1, h2, t, p, r, hb, NULL);
    mpz_set_str(u, "-d201000000010000", 16);
    mpz_sub_ui(h1, u, 1);
    mpz_mul(h1, h1, h1);
    CHECK(mpz_divisible_ui_p(h1, 3));
    mpz_divexact_ui(h1, h1, 3);
    mpz_import(p, 6, -1, 8, 0, 0, bls12_381_fp_P.l);
    static const uint64_t rbls[4] = BLS12_381_FR_P, rbn[4] = BN254_FR_P;
    mpz_import(r, 4, -1, 8, 0, 0, rbls);
    mpz_mul(t, h1, r); /* h1 r = p + 1 - (u + 1) = p - u */
    mpz_sub(hb, p, u);
    CHECK(mpz_cmp(t, hb) == 0);
    static const long c2[9] = {13, -4, -4, 6, -4, 0, 5, -4, 1}; /* coefficients of u^0..u^8 */
    mpz_set_ui(h2, 0);
    for (int i = 8; i >= 0; i--) {
        mpz_mul(h2, h2, u);
        if (c2[i] >= 0)
            mpz_add_ui(h2, h2, (unsigned long)c2[i]);
        else
            mpz_sub_ui(h2, h2, (unsigned long)-c2[i]);
    }
    CHECK(mpz_divisible_ui_p(h2, 9));
    mpz_divexact_ui(h2, h2, 9);
    mpz_import(p, 4, -1, 8, 0, 0, bn254_fp_P.l);
    mpz_import(r, 4, -1, 8, 0, 0, rbn);
    mpz_mul_2exp(hb, p, 1);
    mpz_sub(hb, hb, r);
    uint64_t h1l[2], h2l[8], hbl[4];
    mpz_to_limbs(h1l, 2, h1);
    mpz_to_limbs(h2l, 8, h2);
    mpz_to_limbs(hbl, 4, hb);
    mpz_clears(u, h1, h2, t, p, r, hb, NULL);

    SUBGROUP_AGREE(bls12_381_g1, bls12_381_fp, bls12_381_fp_sqrt, RF_BLS1, h1l, 2, 6);
    SUBGROUP_AGREE(bls12_381_g2, bls12_381_fp2, bls12_381_fp2_sqrt, RF_BLS2, h2l, 8, 4);
    SUBGROUP_AGREE(bn254_g2, bn254_fp2, bn254_fp2_sqrt, RF_BN2, hbl, 4, 4);

    /* phi has order 3 and is not the identity; psi^2 - t psi + p = 0 is not checked here, but
     * psi(G2) = u G2 (in_subgroup) and its rejections above pin both constants down. */
    bls12_381_g1_jac g, f;
    bls12_381_g1_from_affine(&g, &bls12_381_g1_GEN);
    bls12_381_g1_phi(&f, &g);
    CHECK(!bls12_381_g1_eq(&f, &g));
    bls12_381_g1_phi(&f, &f);
    bls12_381_g1_phi(&f, &f);
    CHECK(bls12_381_g1_eq(&f, &g));

    /* Speed of the fast tests against the definition (informational). */
    int reps = 20;
    double t0 = now_s();
    int acc = 0;
    for (int i = 0; i < reps; i++)
        acc += bls12_381_g1_in_subgroup(&bls12_381_g1_GEN);
    double t1 = now_s();
    for (int i = 0; i < reps; i++)
        acc += bls12_381_g1_in_subgroup_naive(&bls12_381_g1_GEN);
    double t2 = now_s();
    for (int i = 0; i < reps; i++)
        acc += bls12_381_g2_in_subgroup(&bls12_381_g2_GEN);
    double t3 = now_s();
    for (int i = 0; i < reps; i++)
        acc += bls12_381_g2_in_subgroup_naive(&bls12_381_g2_GEN);
    double t4 = now_s();
    for (int i = 0; i < reps; i++)
        acc += bn254_g2_in_subgroup(&bn254_g2_GEN);
    double t5 = now_s();
    for (int i = 0; i < reps; i++)
        acc += bn254_g2_in_subgroup_naive(&bn254_g2_GEN);
    double t6 = now_s();
    CHECK(acc == 6 * reps);
    printf("subgroup check (asm %d), us per point: bls12_381 G1 %.0f (naive %.0f), "
           "G2 %.0f (naive %.0f), bn254 G2 %.0f (naive %.0f)\n",
           cuzk__ff_use_asm, 1e6 * (t1 - t0) / reps, 1e6 * (t2 - t1) / reps,
           1e6 * (t3 - t2) / reps, 1e6 * (t4 - t3) / reps, 1e6 * (t5 - t4) / reps,
           1e6 * (t6 - t5) / reps);
}

/* ------------------------------------------------------------------ API edges */

static void edge_tests(void)
{
    cuzk_errbuf eb;
    bn254_g1_affine a;
    const char *inf[3] = {"0", "1", "0"};
    CHECK(bn254_g1_from_json_dec(&a, inf, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
    CHECK(bn254_g1_affine_is_inf(&a));
    const char *inf2[3] = {"5", "7", "0"}; /* ffjavascript: z = 0 is zero whatever x, y */
    CHECK(bn254_g1_from_json_dec(&a, inf2, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
    CHECK(bn254_g1_affine_is_inf(&a));
    const char *g0[3] = {"0001", "02", "1"}; /* leading zeros read as ffjavascript does */
    CHECK(bn254_g1_from_json_dec(&a, g0, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
    CHECK(bn254_g1_affine_eq(&a, &bn254_g1_GEN));
    const char *zz[3] = {"0", "0", "1"};
    CHECK(bn254_g1_from_json_dec(&a, zz, CUZK_EC_CHECK_RANGE, &eb) == CUZK_NOT_ON_CURVE);
    const char *empty[3] = {"", "2", "1"};
    CHECK(bn254_g1_from_json_dec(&a, empty, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_BAD_ENCODING);
    const char *neg[3] = {"-1", "2", "1"};
    CHECK(bn254_g1_from_json_dec(&a, neg, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_BAD_ENCODING);
    const char *nul[3] = {"1", NULL, "1"};
    CHECK(bn254_g1_from_json_dec(&a, nul, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_BAD_ENCODING);
    /* Jacobian z: (x z^2, y z^3, z) is the generator. */
    {
        bls12_381_g2_jac j;
        bls12_381_g2_affine b;
        bls12_381_fp2_t z, z2, z3;
        bls12_381_fp_from_u64(&z.c0, 3);
        bls12_381_fp_from_u64(&z.c1, 5);
        bls12_381_fp2_sqr(&z2, &z);
        bls12_381_fp2_mul(&z3, &z2, &z);
        bls12_381_fp2_mul(&j.X, &bls12_381_g2_GEN.x, &z2);
        bls12_381_fp2_mul(&j.Y, &bls12_381_g2_GEN.y, &z3);
        j.Z = z;
        char s[6][CUZK_EC_DEC_MAX];
        const bls12_381_fp_t *c[6] = {&j.X.c0, &j.X.c1, &j.Y.c0, &j.Y.c1, &j.Z.c0, &j.Z.c1};
        const char *ps[6];
        for (int i = 0; i < 6; i++) {
            CHECK(bls12_381_fp_to_dec(s[i], sizeof s[i], c[i]) > 0);
            ps[i] = s[i];
        }
        CHECK(bls12_381_g2_from_json_dec(&b, ps, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
        CHECK(bls12_381_g2_affine_eq(&b, &bls12_381_g2_GEN));
    }
    /* Arrays: the index of the bad point is in the message. */
    {
        enum { N = 5 };
        bn254_g2_affine pts[N], back[N];
        uint8_t buf[N * BN254_G2_SNARKJS_BYTES];
        bn254_g2_jac g, acc;
        bn254_g2_from_affine(&g, &bn254_g2_GEN);
        acc = g;
        for (int i = 0; i < N; i++) {
            bn254_g2_to_affine(&pts[i], &acc);
            bn254_g2_add(&acc, &acc, &g);
            bn254_g2_to_snarkjs(buf + i * BN254_G2_SNARKJS_BYTES, &pts[i]);
        }
        bn254_g2_affine_set_inf(&pts[2]);
        bn254_g2_to_snarkjs(buf + 2 * BN254_G2_SNARKJS_BYTES, &pts[2]);
        CHECK(bn254_g2_from_snarkjs_n(back, buf, N, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
        for (int i = 0; i < N; i++)
            CHECK(bn254_g2_affine_eq(&back[i], &pts[i]));
        memset(buf + 3 * BN254_G2_SNARKJS_BYTES + 32, 0xff, 32); /* x.c1 of point 3 */
        CHECK(bn254_g2_from_snarkjs_n(back, buf, N, CUZK_EC_CHECK_CURVE, &eb) ==
              CUZK_NON_CANONICAL);
        CHECK_MSG(strstr(eb.msg, "point 3:") && strstr(eb.msg, "x.c1"), "%s", eb.msg);
        CHECK(bn254_g2_from_snarkjs_n(back, buf, 3, CUZK_EC_CHECK_CURVE, &eb) == CUZK_OK);
    }
    /* ZCash infinity round trips. */
    {
        uint8_t c[96], u[192];
        bls12_381_g2_affine i, b;
        bls12_381_g2_affine_set_inf(&i);
        bls12_381_g2_to_compressed(c, &i);
        bls12_381_g2_to_uncompressed(u, &i);
        CHECK(c[0] == 0xc0 && u[0] == 0x40);
        CHECK(bls12_381_g2_from_zcash(&b, c, 96, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
        CHECK(bls12_381_g2_affine_is_inf(&b));
        CHECK(bls12_381_g2_from_zcash(&b, u, 192, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_OK);
        CHECK(bls12_381_g2_affine_is_inf(&b));
        CHECK(bls12_381_g2_from_zcash(&b, u, 0, CUZK_EC_CHECK_SUBGROUP, &eb) == CUZK_TRUNCATED);
    }
}

/* ------------------------------------------------------------------ snarkjs fixtures */

/* The next n quoted strings after "key" in a snarkjs JSON file, copied into out[i]. */
static int json_strs(const char *txt, const char *key, char (*out)[CUZK_EC_DEC_MAX], int n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *s = strstr(txt, pat);
    if (!s)
        return 0;
    s += strlen(pat);
    for (int i = 0; i < n; i++) {
        const char *a = strchr(s, '"');
        const char *b = a ? strchr(a + 1, '"') : NULL;
        if (!b || b - a - 1 >= CUZK_EC_DEC_MAX)
            return 0;
        memcpy(out[i], a + 1, (size_t)(b - a - 1));
        out[i][b - a - 1] = 0;
        s = b + 1;
    }
    return 1;
}

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* Finds section `type` of an iden3 binfile; returns its data and size. */
static const uint8_t *zkey_section(const uint8_t *f, size_t len, uint32_t type, size_t *size)
{
    if (len < 12 || memcmp(f, "zkey", 4))
        return NULL;
    uint32_t ns = rd32(f + 8);
    size_t off = 12;
    for (uint32_t i = 0; i < ns && off + 12 <= len; i++) {
        uint32_t t = rd32(f + off);
        uint64_t sz = rd32(f + off + 4) | (uint64_t)rd32(f + off + 8) << 32;
        if (off + 12 + sz > len)
            return NULL;
        if (t == type) {
            *size = (size_t)sz;
            return f + off + 12;
        }
        off += 12 + (size_t)sz;
    }
    return NULL;
}

/* A point of a snarkjs JSON file decodes with full validation, and encodes back to the same
 * strings; when `bin` is given (the same point in the .zkey), the binary and JSON decodings
 * agree and the binary re-encodes byte for byte. */
#define FIXTURE_STRS(G, DEG, s_, key, bin)                                                \
    do {                                                                                  \
        char e_[3 * DEG][CUZK_EC_DEC_MAX];                                                \
        const char *ps_[3 * DEG];                                                         \
        G##_affine j_, b_;                                                                \
        cuzk_errbuf eb_;                                                                  \
        for (int i_ = 0; i_ < 3 * DEG; i_++)                                              \
            ps_[i_] = s_[i_];                                                             \
        CHECK_MSG(G##_from_json_dec(&j_, ps_, CUZK_EC_CHECK_SUBGROUP, &eb_) == CUZK_OK,   \
                  "%s: %s", key, eb_.msg);                                                \
        G##_to_json_dec(e_, &j_);                                                         \
        for (int i_ = 0; i_ < 3 * DEG; i_++)                                              \
            CHECK_MSG(!strcmp(e_[i_], s_[i_]), "%s[%d]", key, i_);                        \
        const uint8_t *bin_ = (bin);                                                      \
        if (bin_) {                                                                       \
            uint8_t re_[sizeof(G##_affine)];                                              \
            CHECK(G##_from_snarkjs(&b_, bin_, CUZK_EC_CHECK_SUBGROUP, &eb_) == CUZK_OK);  \
            CHECK_MSG(G##_affine_eq(&b_, &j_), "%s: zkey and JSON differ", key);          \
            G##_to_snarkjs(re_, &b_);                                                     \
            CHECK(!memcmp(re_, bin_, sizeof re_));                                        \
        }                                                                                 \
        n_fixture++;                                                                      \
    } while (0)

#define FIXTURE_POINT(G, DEG, txt, key, bin)                                              \
    do {                                                                                  \
        char s_[3 * DEG][CUZK_EC_DEC_MAX];                                                \
        CHECK_MSG(json_strs(txt, key, s_, 3 * DEG), "%s missing", key);                   \
        FIXTURE_STRS(G, DEG, s_, key, bin);                                               \
    } while (0)

static long n_fixture;

/* Every point array of the zkey (sections 3, 5..9) decodes with full validation and
 * re-encodes to the same bytes. */
#define FIXTURE_ARRAY(G, f, flen, sec)                                                    \
    do {                                                                                  \
        size_t sz_ = 0;                                                                   \
        const uint8_t *d_ = zkey_section(f, flen, sec, &sz_);                             \
        CHECK_MSG(d_ && sz_ % sizeof(G##_affine) == 0, "zkey section %d", sec);           \
        size_t n_ = d_ ? sz_ / sizeof(G##_affine) : 0;                                    \
        G##_affine *pts_ = malloc(n_ * sizeof *pts_ + 1);                                 \
        uint8_t *re_ = malloc(sz_ + 1);                                                   \
        cuzk_errbuf eb_;                                                                  \
        CHECK_MSG(G##_from_snarkjs_n(pts_, d_, n_, CUZK_EC_CHECK_SUBGROUP, &eb_) == 0,    \
                  "section %d: %s", sec, eb_.msg);                                        \
        for (size_t i_ = 0; i_ < n_; i_++)                                                \
            G##_to_snarkjs(re_ + i_ * sizeof(G##_affine), &pts_[i_]);                     \
        CHECK(n_ == 0 || !memcmp(re_, d_, sz_));                                          \
        n_fixture += (long)n_;                                                            \
        free(pts_);                                                                       \
        free(re_);                                                                        \
    } while (0)

#define FIXTURES(C, G1, G2, N8Q, N8R, dir)                                                \
    do {                                                                                  \
        size_t zl, vl, pl;                                                                \
        uint8_t *z = (uint8_t *)tu_read_file(tu_src_path(dir "/multiplier.zkey"), &zl);   \
        char *vk = tu_read_file(tu_src_path(dir "/multiplier_vk.json"), &vl);             \
        char *pf = tu_read_file(tu_src_path(dir "/multiplier_proof.json"), &pl);          \
        if (!z || !vk || !pf) {                                                           \
            printf("%s fixtures missing, skipped\n", dir);                                \
        } else {                                                                          \
            size_t hs = 0;                                                                \
            const uint8_t *h = zkey_section(z, zl, 2, &hs);                               \
            CHECK(h && hs == 4 + N8Q + 4 + N8R + 12 + 3 * (2 * N8Q) + 3 * (4 * N8Q));     \
            if (h) {                                                                      \
                const uint8_t *pt = h + 4 + N8Q + 4 + N8R + 12;                           \
                uint32_t npub = rd32(h + 4 + N8Q + 4 + N8R + 4);                          \
                FIXTURE_POINT(G1, 1, vk, "vk_alpha_1", pt);                               \
                FIXTURE_POINT(G2, 2, vk, "vk_beta_2", pt + 4 * N8Q);                      \
                FIXTURE_POINT(G2, 2, vk, "vk_gamma_2", pt + 8 * N8Q);                     \
                FIXTURE_POINT(G2, 2, vk, "vk_delta_2", pt + 14 * N8Q);                    \
                size_t is = 0;                                                            \
                const uint8_t *ic = zkey_section(z, zl, 3, &is);                          \
                CHECK(ic && is == (npub + 1) * 2 * N8Q);                                  \
                /* IC: 3 (nPublic + 1) strings, three per point */                        \
                char(*ics)[CUZK_EC_DEC_MAX] = malloc(3 * (npub + 1) * CUZK_EC_DEC_MAX);    \
                CHECK(json_strs(vk, "IC", ics, 3 * (int)(npub + 1)));                     \
                for (uint32_t i = 0; ic && i <= npub; i++)                                \
                    FIXTURE_STRS(G1, 1, (ics + 3 * i), "IC", ic + i * 2 * N8Q);           \
                free(ics);                                                                \
            }                                                                             \
            FIXTURE_ARRAY(G1, z, zl, 3);                                                  \
            FIXTURE_ARRAY(G1, z, zl, 5);                                                  \
            FIXTURE_ARRAY(G1, z, zl, 6);                                                  \
            FIXTURE_ARRAY(G2, z, zl, 7);                                                  \
            FIXTURE_ARRAY(G1, z, zl, 8);                                                  \
            FIXTURE_ARRAY(G1, z, zl, 9);                                                  \
            FIXTURE_POINT(G1, 1, pf, "pi_a", NULL);                                       \
            FIXTURE_POINT(G2, 2, pf, "pi_b", NULL);                                       \
            FIXTURE_POINT(G1, 1, pf, "pi_c", NULL);                                       \
        }                                                                                 \
        free(z);                                                                          \
        free(vk);                                                                         \
        free(pf);                                                                         \
    } while (0)

int main(void)
{
    for (int pass = 0; pass < 2; pass++) {
        cuzk__ff_use_asm = pass ? cuzk_ff_cpu_has_adx() : 0;
        if (pass && !cuzk__ff_use_asm)
            break;
        n_points = n_invalid = 0;
        run_vectors("bn254");
        run_vectors("bls12_381");
        CHECK_MSG(n_points == 32 && n_invalid > 60, "%ld points, %ld invalid", n_points,
                  n_invalid);
        FP2_TESTS(bn254_fp2, bn254_fp, 4);
        FP2_TESTS(bls12_381_fp2, bls12_381_fp, 6);
        edge_tests();
        if (pass == 1 || !cuzk_ff_cpu_has_adx())
            subgroup_tests();
        n_fixture = 0;
        FIXTURES(bn254, bn254_g1, bn254_g2, 32, 32, "tests/fixtures/bn128");
        FIXTURES(bls12_381, bls12_381_g1, bls12_381_g2, 48, 32, "tests/fixtures/bls12381");
        printf("snarkjs fixtures: %ld points checked\n", n_fixture);
    }
    return tu_finish("encode");
}
