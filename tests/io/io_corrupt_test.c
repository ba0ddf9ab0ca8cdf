/* Malformed inputs for the zkey / wtns / r1cs readers, built from the real snarkjs fixtures:
 * every prefix of the small files, wrong magic / version, dropped, duplicated, reordered and
 * resized sections, forged header counts and indices, out-of-range field elements, files of
 * the other curve, missing files. Each must give its own error code (and a message naming the
 * file), never a crash: the buffers are exactly sized heap copies so ASan sees any over-read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/io.h"
#include "io_testlib.h"
#include "testutil.h"

typedef enum { K_ZKEY, K_WTNS, K_R1CS } kind;

/* Parses an exactly-sized copy of b as kind k; returns the code, message in eb. */
static cuzk_err parse_as(kind k, const uint8_t *p, size_t n, cuzk_errbuf *eb)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (n)
        memcpy(copy, p, n);
    cuzk_err e;
    eb->msg[0] = 0;
    if (k == K_ZKEY) {
        cuzk_zkey z;
        e = cuzk_zkey_parse(&z, copy, n, "t.zkey", eb);
        if (!e) {
            /* touch every exposed array end, so a wrong count would trip ASan */
            volatile uint8_t s = 0;
            if (z.n_h)
                s ^= z.h[z.n_h * z.g1_size - 1];
            if (z.n_coefs)
                s ^= cuzk_zkey_coef_at(&z, z.n_coefs - 1).value[z.n8r - 1];
            (void)s;
            cuzk_zkey_validate(&z, NULL);
        }
        cuzk_zkey_close(&z);
    } else if (k == K_WTNS) {
        cuzk_wtns w;
        e = cuzk_wtns_parse(&w, copy, n, "t.wtns", eb);
        if (!e)
            cuzk_wtns_validate(&w, NULL);
        cuzk_wtns_close(&w);
    } else {
        cuzk_r1cs r;
        e = cuzk_r1cs_parse(&r, copy, n, "t.r1cs", eb);
        if (!e)
            cuzk_r1cs_validate(&r, NULL);
        cuzk_r1cs_close(&r);
    }
    free(copy);
    return e;
}

static cuzk_err parse_bf(kind k, const tb_binfile *bf, cuzk_errbuf *eb)
{
    tb_buf b = tb_join(bf);
    cuzk_err e = parse_as(k, b.p, b.n, eb);
    free(b.p);
    return e;
}

/* Expects code `want` and, when `needle` is given, that the message contains it. */
#define EXPECT(e, want, eb, needle)                                                           \
    do {                                                                                      \
        cuzk_err e_ = (e);                                                                    \
        CHECK_MSG(e_ == (want), "got %s, want %s (%s)", cuzk_errname(e_), cuzk_errname(want), \
                  (eb)->msg);                                                                 \
        if ((needle) != NULL)                                                                 \
            CHECK_MSG(strstr((eb)->msg, (needle)) != NULL, "message \"%s\" lacks \"%s\"",    \
                      (eb)->msg, (const char *)(needle));                                     \
    } while (0)

/* Every proper prefix of a valid file reports TRUNCATED; the full file parses. For big files
 * every prefix up to `dense` bytes, every section-table boundary +-2, and random lengths. */
static void prefixes(kind k, const tb_buf *b, size_t dense)
{
    cuzk_errbuf eb;
    size_t bad = 0;
    for (size_t n = 0; n < b->n; n++) {
        int try = n < dense;
        if (!try) /* near a section header / data start? (sections are few; scan) */
            for (size_t pos = 12; pos + 12 <= b->n;) {
                size_t d = pos > n ? pos - n : n - pos;
                size_t d2 = pos + 12 > n ? pos + 12 - n : n - pos - 12;
                if (d <= 2 || d2 <= 2) {
                    try = 1;
                    break;
                }
                pos += 12 + cuzk_le64(b->p + pos + 4);
            }
        if (!try && tu_rand64() % 64 != 0)
            continue;
        cuzk_err e = parse_as(k, b->p, n, &eb);
        if (e != CUZK_TRUNCATED && bad++ < 5)
            CHECK_MSG(0, "prefix %zu of %zu: %s (%s)", n, b->n, cuzk_errname(e), eb.msg);
        tu_checks++;
    }
    CHECK_MSG(parse_as(k, b->p, b->n, &eb) == CUZK_OK, "%s", eb.msg);
}

/* Random byte mutations: whatever the result, no crash (ASan/UBSan). */
static void mutations(kind k, const tb_buf *b, int rounds)
{
    cuzk_errbuf eb;
    uint8_t *m = malloc(b->n);
    for (int r = 0; r < rounds; r++) {
        memcpy(m, b->p, b->n);
        int flips = 1 + (int)(tu_rand64() % 4);
        for (int i = 0; i < flips; i++) {
            /* bias towards the first 200 bytes where the headers live */
            size_t at = tu_rand64() % 2 ? tu_rand64() % (b->n < 200 ? b->n : 200)
                                        : tu_rand64() % b->n;
            m[at] = (uint8_t)tu_rand64();
        }
        cuzk_err e = parse_as(k, m, b->n, &eb);
        CHECK(e < CUZK__ERR_COUNT);
    }
    free(m);
}

static void set32(uint8_t *p, uint32_t v)
{
    tb_put32(p, v);
}

static void zkey_cases(const char *curve)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s/multiplier.zkey", curve);
    tb_buf b = tb_fixture(rel);
    if (!b.p)
        return;
    cuzk_errbuf eb;
    tb_binfile orig, bf;
    tb_split(&b, &orig);
    cuzk_zkey ref;
    CHECK(cuzk_zkey_parse(&ref, b.p, b.n, "ref", &eb) == CUZK_OK);
    uint32_t n8q = ref.n8q, g1 = ref.g1_size;

    prefixes(K_ZKEY, &b, 1u << 20);
    mutations(K_ZKEY, &b, 3000);

    /* magic, version */
    tb_copy(&bf, &orig);
    memcpy(bf.magic, "zkex", 4);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "not a .zkey file");
    memcpy(bf.magic, "wtns", 4);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "t.zkey");
    memcpy(bf.magic, "zkey", 4);
    bf.version = 2;
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_UNSUPPORTED, &eb, "version 2");
    tb_free(&bf);

    /* every required section missing in turn; section 10 is optional */
    for (uint32_t id = 1; id <= 10; id++) {
        tb_copy(&bf, &orig);
        tb_remove(&bf, tb_find(&bf, id));
        char needle[32];
        snprintf(needle, sizeof needle, "missing section %u", id);
        if (id == 10) {
            cuzk_zkey z;
            tb_buf j = tb_join(&bf);
            CHECK(cuzk_zkey_parse(&z, j.p, j.n, "t", &eb) == CUZK_OK);
            CHECK(z.mpc == NULL && z.mpc_len == 0 && z.n_a == ref.n_a);
            cuzk_zkey_close(&z);
            free(j.p);
        } else {
            EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, needle);
        }
        /* duplicated */
        tb_free(&bf);
        tb_copy(&bf, &orig);
        tb_dup(&bf, tb_find(&bf, id));
        EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "appears twice");
        tb_free(&bf);
    }

    /* sections in reverse order, plus an unknown section: same content */
    tb_copy(&bf, &orig);
    for (int i = 0; i < bf.n / 2; i++) {
        int j = bf.n - 1 - i;
        uint32_t id = bf.id[i];
        uint8_t *d = bf.data[i];
        uint64_t s = bf.size[i];
        bf.id[i] = bf.id[j], bf.data[i] = bf.data[j], bf.size[i] = bf.size[j];
        bf.id[j] = id, bf.data[j] = d, bf.size[j] = s;
    }
    tb_dup(&bf, 0);
    bf.id[bf.n - 1] = 77;
    {
        tb_buf j = tb_join(&bf);
        cuzk_zkey z;
        CHECK(cuzk_zkey_parse(&z, j.p, j.n, "t", &eb) == CUZK_OK);
        CHECK(z.n_vars == ref.n_vars && z.n_coefs == ref.n_coefs);
        CHECK(memcmp(z.a, ref.a, ref.n_a * g1) == 0 && memcmp(z.h, ref.h, ref.n_h * g1) == 0);
        CHECK(memcmp(z.delta2, ref.delta2, ref.g2_size) == 0);
        cuzk_zkey_close(&z);
        free(j.p);
    }
    tb_free(&bf);

    /* section sizes off by one point / one byte, each named in the message */
    static const uint32_t ids[] = {2, 3, 4, 5, 6, 7, 8, 9};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        for (int delta = -1; delta <= 1; delta += 2) {
            tb_copy(&bf, &orig);
            int s = tb_find(&bf, ids[i]);
            uint64_t step = ids[i] == 4 ? ref.coef_size : ids[i] == 7 ? ref.g2_size : g1;
            uint64_t size0 = bf.size[s];
            tb_resize(&bf, s, delta > 0 ? size0 + step : size0 - step, 0);
            char needle[32];
            snprintf(needle, sizeof needle, "section %u (", ids[i]);
            EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, needle);
            tb_resize(&bf, s, delta > 0 ? size0 + 1 : size0 - 1, 0);
            EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, needle);
            tb_free(&bf);
        }
    }
    /* the exact message format for the A points */
    tb_copy(&bf, &orig);
    tb_resize(&bf, tb_find(&bf, 5), g1 * ref.n_vars - 7, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 5 (A points) has");
    {
        char needle[128];
        snprintf(needle, sizeof needle, "expected %u for %u variables", g1 * ref.n_vars,
                 ref.n_vars);
        CHECK_MSG(strstr(eb.msg, needle) != NULL, "%s", eb.msg);
    }
    tb_free(&bf);

    /* section 1: protocol; size */
    tb_copy(&bf, &orig);
    uint8_t *p1 = bf.data[tb_find(&bf, 1)];
    set32(p1, 2);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_UNSUPPORTED, &eb, "PLONK");
    set32(p1, 10);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_UNSUPPORTED, &eb, "not Groth16");
    set32(p1, 1);
    tb_resize(&bf, tb_find(&bf, 1), 8, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 1");
    tb_free(&bf);

    /* header fields */
    int h = tb_find(&orig, 2);
    struct {
        uint64_t off;
        int op; /* 0 = set u32, 1 = add to byte */
        uint32_t v;
        cuzk_err want;
        const char *needle;
    } hcases[] = {
        {0, 0, 40, CUZK_UNSUPPORTED, "40 bytes"},          /* n8q */
        {0, 0, 0xffffffffu, CUZK_UNSUPPORTED, "bytes"},    /* n8q huge */
        {0, 0, n8q == 32 ? 48 : 32, CUZK_BAD_FORMAT, "-byte base field"}, /* other n8q */
        {4, 1, 1, CUZK_UNSUPPORTED, "not that of bn128 or bls12381"},     /* q */
        {4 + n8q, 0, 48, CUZK_BAD_FORMAT, "scalar field elements"},       /* n8r */
        {8 + n8q, 1, 1, CUZK_BAD_FORMAT, "scalar field modulus r"},       /* r */
        {40 + n8q, 0, ref.n_vars + 1, CUZK_BAD_FORMAT, "section 5 (A points)"}, /* nVars+1 */
        {40 + n8q, 0, 0, CUZK_BAD_FORMAT, "variables"},                   /* nVars 0 */
        {44 + n8q, 0, ref.n_vars, CUZK_BAD_FORMAT, "public"},             /* nPublic >= nVars */
        {48 + n8q, 0, ref.domain_size + 1, CUZK_BAD_FORMAT, "power of two"},
        {48 + n8q, 0, 0, CUZK_BAD_FORMAT, "power of two"},
        {48 + n8q, 0, 1u << 31, CUZK_BAD_FORMAT, ""},
        {48 + n8q, 0, ref.domain_size * 2, CUZK_BAD_FORMAT, "section 9 (H points)"},
    };
    for (size_t i = 0; i < sizeof hcases / sizeof hcases[0]; i++) {
        tb_copy(&bf, &orig);
        uint8_t *p = bf.data[h] + hcases[i].off;
        if (hcases[i].op == 0)
            set32(p, hcases[i].v);
        else
            p[0] = (uint8_t)(p[0] + hcases[i].v);
        EXPECT(parse_bf(K_ZKEY, &bf, &eb), hcases[i].want, &eb, hcases[i].needle);
        tb_free(&bf);
    }
    /* n8q of the other curve with a header resized to match: q is then checked */
    tb_copy(&bf, &orig);
    set32(bf.data[h], n8q == 32 ? 48 : 32);
    tb_resize(&bf, h, bf.size[h] + (n8q == 32 ? 16 : -16) * 1, 0);
    CHECK(parse_bf(K_ZKEY, &bf, &eb) != CUZK_OK);
    tb_free(&bf);
    /* header shorter than its element sizes */
    tb_copy(&bf, &orig);
    tb_resize(&bf, h, 2, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 2");
    tb_resize(&bf, h, 4 + n8q, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 2");
    tb_free(&bf);

    /* section 4 records */
    int c4 = tb_find(&orig, 4);
    struct {
        uint64_t off; /* within record 1 */
        uint32_t v;
        const char *needle;
    } ccases[] = {
        {0, 2, "matrix 2"},
        {4, ref.domain_size, "outside the domain"},
        {4, 0xffffffffu, "outside the domain"},
        {8, ref.n_vars, "signal"},
    };
    for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++) {
        tb_copy(&bf, &orig);
        set32(bf.data[c4] + 4 + ref.coef_size + ccases[i].off, ccases[i].v);
        EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, ccases[i].needle);
        tb_free(&bf);
    }
    tb_copy(&bf, &orig);
    set32(bf.data[c4], (uint32_t)ref.n_coefs + 1);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 4 (coefficients)");
    set32(bf.data[c4], 0xffffffffu);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 4 (coefficients)");
    tb_resize(&bf, c4, 3, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 4");
    tb_free(&bf);
    /* section 10 too short */
    tb_copy(&bf, &orig);
    tb_resize(&bf, tb_find(&bf, 10), 67, 0);
    EXPECT(parse_bf(K_ZKEY, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 10");
    tb_free(&bf);

    /* section table lies: size past the end, nSections too large */
    {
        tb_buf j = tb_join(&orig);
        tb_put64(j.p + 12 + 4, (uint64_t)1 << 63);
        EXPECT(parse_as(K_ZKEY, j.p, j.n, &eb), CUZK_TRUNCATED, &eb, "claims");
        tb_put64(j.p + 12 + 4, UINT64_MAX);
        EXPECT(parse_as(K_ZKEY, j.p, j.n, &eb), CUZK_TRUNCATED, &eb, "claims");
        free(j.p);
        j = tb_join(&orig);
        tb_put32(j.p + 8, 0xffffffffu);
        EXPECT(parse_as(K_ZKEY, j.p, j.n, &eb), CUZK_TRUNCATED, &eb, "past the end");
        tb_put32(j.p + 8, 0);
        EXPECT(parse_as(K_ZKEY, j.p, j.n, &eb), CUZK_BAD_FORMAT, &eb, "missing section 1");
        free(j.p);
    }

    /* field elements: open succeeds, validate rejects (>= q in a point, >= r in a coef) */
    struct {
        uint32_t id;
        uint64_t off;
        uint32_t n;
        const char *needle;
    } vcases[] = {
        {5, 0, n8q, "A point 0 has coordinate 0"},
        {7, 3 * (uint64_t)n8q + 3 * ref.g2_size, n8q, "B2 point 3 has coordinate 3"},
        {9, g1 * (uint64_t)(ref.n_h - 1) + n8q, n8q, "H point 3 has coordinate 1"},
        {2, 4 + n8q + 4 + 32 + 12, n8q, "alpha1 point 0"},
        {4, 4 + 12, 32, "coefficient 0 has a value >= r"},
    };
    for (size_t i = 0; i < sizeof vcases / sizeof vcases[0]; i++) {
        tb_copy(&bf, &orig);
        memset(bf.data[tb_find(&bf, vcases[i].id)] + vcases[i].off, 0xff, vcases[i].n);
        tb_buf j = tb_join(&bf);
        cuzk_zkey z;
        CHECK(cuzk_zkey_parse(&z, j.p, j.n, "v.zkey", &eb) == CUZK_OK);
        EXPECT(cuzk_zkey_validate(&z, &eb), CUZK_NON_CANONICAL, &eb, vcases[i].needle);
        CHECK(strstr(eb.msg, "v.zkey") != NULL);
        free(j.p);
        tb_free(&bf);
    }
    /* q itself is out of range, q - 1 is in range (boundary of the compare) */
    {
        tb_copy(&bf, &orig);
        uint8_t qle[48];
        cuzk_curve_q_le(ref.curve, qle);
        uint8_t *a0 = bf.data[tb_find(&bf, 5)];
        memcpy(a0, qle, n8q);
        tb_buf j = tb_join(&bf);
        cuzk_zkey z;
        CHECK(cuzk_zkey_parse(&z, j.p, j.n, "v.zkey", &eb) == CUZK_OK);
        CHECK(cuzk_zkey_validate(&z, &eb) == CUZK_NON_CANONICAL);
        free(j.p);
        qle[0]--; /* q is odd: no borrow */
        memcpy(a0, qle, n8q);
        j = tb_join(&bf);
        CHECK(cuzk_zkey_parse(&z, j.p, j.n, "v.zkey", &eb) == CUZK_OK);
        CHECK(cuzk_zkey_validate(&z, &eb) == CUZK_OK);
        free(j.p);
        tb_free(&bf);
    }

    cuzk_zkey_close(&ref);
    tb_free(&orig);
    free(b.p);
}

static void wtns_cases(const char *curve)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s/multiplier.wtns", curve);
    tb_buf b = tb_fixture(rel);
    snprintf(rel, sizeof rel, "%s/poseidon.wtns", curve);
    tb_buf b2 = tb_fixture(rel);
    if (!b.p || !b2.p)
        return;
    cuzk_errbuf eb;
    prefixes(K_WTNS, &b, 1u << 20);
    prefixes(K_WTNS, &b2, 1u << 20);
    mutations(K_WTNS, &b, 3000);

    tb_binfile orig, bf;
    tb_split(&b, &orig);
    tb_copy(&bf, &orig);
    memcpy(bf.magic, "WTNS", 4);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "not a .wtns file");
    memcpy(bf.magic, "wtns", 4);
    bf.version = 3;
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "version 3");
    bf.version = 1; /* snarkjs reads version 1 files with the same layout */
    CHECK(parse_bf(K_WTNS, &bf, &eb) == CUZK_OK);
    tb_free(&bf);
    for (uint32_t id = 1; id <= 2; id++) {
        char needle[32];
        snprintf(needle, sizeof needle, "missing section %u", id);
        tb_copy(&bf, &orig);
        tb_remove(&bf, tb_find(&bf, id));
        EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, needle);
        tb_free(&bf);
        tb_copy(&bf, &orig);
        tb_dup(&bf, tb_find(&bf, id));
        EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "appears twice");
        tb_free(&bf);
    }
    int h = tb_find(&orig, 1), v = tb_find(&orig, 2);
    /* n8 = 8 (e.g. goldilocks) with a consistent header size */
    tb_copy(&bf, &orig);
    set32(bf.data[h], 8);
    tb_resize(&bf, h, 4 + 8 + 4, 0);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "8 bytes");
    set32(bf.data[h], 0xffffffffu);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 1 (header)");
    tb_resize(&bf, h, 3, 0);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 1 (header)");
    tb_free(&bf);
    /* prime = a base field q / a random prime: unsupported */
    tb_copy(&bf, &orig);
    bf.data[h][4] ^= 2;
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "scalar field");
    cuzk_curve_q_le(CUZK_CURVE_BN254, bf.data[h] + 4);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "scalar field");
    tb_free(&bf);
    /* nWitness does not match section 2 */
    tb_copy(&bf, &orig);
    uint32_t nw = cuzk_le32(bf.data[h] + 36);
    set32(bf.data[h] + 36, nw + 1);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 2 (values)");
    set32(bf.data[h] + 36, 0xffffffffu);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 2 (values)");
    set32(bf.data[h] + 36, nw);
    tb_resize(&bf, v, bf.size[v] - 1, 0);
    EXPECT(parse_bf(K_WTNS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "section 2 (values)");
    tb_free(&bf);
    /* values: r - 1 is fine, r is not (validate) */
    cuzk_wtns w;
    CHECK(cuzk_wtns_parse(&w, b.p, b.n, "x", &eb) == CUZK_OK);
    cuzk_curve cv = w.curve;
    cuzk_wtns_close(&w);
    for (int above = 0; above <= 1; above++) {
        tb_copy(&bf, &orig);
        uint8_t *val = bf.data[v] + 32 * 2;
        cuzk_curve_r_le(cv, val);
        if (!above)
            val[0]--; /* r is odd */
        tb_buf j = tb_join(&bf);
        CHECK(cuzk_wtns_parse(&w, j.p, j.n, "v.wtns", &eb) == CUZK_OK);
        if (above)
            EXPECT(cuzk_wtns_validate(&w, &eb), CUZK_NON_CANONICAL, &eb, "witness value 2");
        else
            CHECK(cuzk_wtns_validate(&w, &eb) == CUZK_OK);
        free(j.p);
        tb_free(&bf);
    }

    /* a witness of several validation chunks (the chain fixture, 16387 values: 4096 per chunk,
     * checked on all cores): the lowest bad index is named, whichever chunk finishes first */
    {
        snprintf(rel, sizeof rel, "%s/chain.wtns", curve);
        tb_buf c = tb_fixture(rel);
        if (c.p) {
            CHECK(cuzk_wtns_parse(&w, c.p, c.n, "c.wtns", &eb) == CUZK_OK);
            CHECK(w.n_witness > 3 * 4096);
            CHECK(cuzk_wtns_validate(&w, &eb) == CUZK_OK);
            size_t v0 = (size_t)(w.values - c.p), last = w.n_witness - 1;
            cuzk_wtns_close(&w);
            const size_t bad[3][2] = {{15000, 9000}, {last, last}, {4096, 4095}};
            for (int k = 0; k < 3; k++) {
                uint8_t *m = malloc(c.n);
                memcpy(m, c.p, c.n);
                for (int q = 0; q < 2; q++)
                    memset(m + v0 + 32 * bad[k][q], 0xff, 32);
                char want[64];
                size_t lo = bad[k][0] < bad[k][1] ? bad[k][0] : bad[k][1];
                snprintf(want, sizeof want, "witness value %zu is not below", lo);
                CHECK(cuzk_wtns_parse(&w, m, c.n, "c.wtns", &eb) == CUZK_OK);
                EXPECT(cuzk_wtns_validate(&w, &eb), CUZK_NON_CANONICAL, &eb, want);
                cuzk_wtns_close(&w);
                free(m);
            }
            free(c.p);
        }
    }

    /* the writer reproduces snarkjs's file byte for byte, and refuses values >= r */
    {
        CHECK(cuzk_wtns_parse(&w, b2.p, b2.n, "x", &eb) == CUZK_OK);
        char path[] = "/tmp/cuzk_io_wtns_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd >= 0)
            close(fd);
        CHECK_MSG(cuzk_wtns_write(path, w.curve, w.values, w.n_witness, &eb) == CUZK_OK, "%s",
                  eb.msg);
        size_t n = 0;
        char *again = tu_read_file(path, &n);
        CHECK(again && n == b2.n && memcmp(again, b2.p, n) == 0);
        free(again);
        uint8_t *vals = malloc(w.n_witness * 32);
        memcpy(vals, w.values, w.n_witness * 32);
        cuzk_curve_r_le(w.curve, vals + 32 * 5);
        EXPECT(cuzk_wtns_write(path, w.curve, vals, w.n_witness, &eb), CUZK_NON_CANONICAL, &eb,
               "value 5");
        CHECK(cuzk_wtns_write("/nonexistent-dir/x.wtns", w.curve, w.values, 1, &eb) == CUZK_IO);
        free(vals);
        unlink(path);
        cuzk_wtns_close(&w);
    }
    tb_free(&orig);
    free(b.p);
    free(b2.p);
}

static void r1cs_cases(const char *curve)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s/multiplier.r1cs", curve);
    tb_buf b = tb_fixture(rel);
    snprintf(rel, sizeof rel, "%s/poseidon.r1cs", curve);
    tb_buf b2 = tb_fixture(rel);
    if (!b.p || !b2.p)
        return;
    cuzk_errbuf eb;
    prefixes(K_R1CS, &b, 1u << 20);
    prefixes(K_R1CS, &b2, 4096);
    mutations(K_R1CS, &b, 3000);
    mutations(K_R1CS, &b2, 300);

    tb_binfile orig, bf;
    tb_split(&b2, &orig);
    cuzk_r1cs ref;
    CHECK(cuzk_r1cs_parse(&ref, b2.p, b2.n, "ref", &eb) == CUZK_OK);

    tb_copy(&bf, &orig);
    memcpy(bf.magic, "r1cz", 4);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "not a .r1cs file");
    memcpy(bf.magic, "r1cs", 4);
    bf.version = 2;
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "version 2");
    tb_free(&bf);
    for (uint32_t id = 1; id <= 3; id++) {
        tb_copy(&bf, &orig);
        tb_remove(&bf, tb_find(&bf, id));
        if (id == 3) { /* labels are optional */
            tb_buf j = tb_join(&bf);
            cuzk_r1cs r;
            CHECK(cuzk_r1cs_parse(&r, j.p, j.n, "t", &eb) == CUZK_OK);
            CHECK(r.wire_labels == NULL && r.n_terms_total == ref.n_terms_total);
            cuzk_r1cs_close(&r);
            free(j.p);
        } else {
            char needle[32];
            snprintf(needle, sizeof needle, "missing section %u", id);
            EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, needle);
        }
        tb_free(&bf);
        tb_copy(&bf, &orig);
        tb_dup(&bf, tb_find(&bf, id));
        EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "appears twice");
        tb_free(&bf);
    }
    /* custom-gate sections (4, 5) are ignored */
    tb_copy(&bf, &orig);
    tb_dup(&bf, tb_find(&bf, 3));
    bf.id[bf.n - 1] = 4;
    tb_dup(&bf, tb_find(&bf, 3));
    bf.id[bf.n - 1] = 5;
    CHECK(parse_bf(K_R1CS, &bf, &eb) == CUZK_OK);
    tb_free(&bf);

    int h = tb_find(&orig, 1), c = tb_find(&orig, 2), l = tb_find(&orig, 3);
    struct {
        uint64_t off;
        uint32_t v;
        cuzk_err want;
        const char *needle;
    } hcases[] = {
        {0, 8, CUZK_BAD_FORMAT, "section 1 (header)"},
        {36, ref.n_wires + 1, CUZK_BAD_FORMAT, "section 3 (wire labels)"},
        {36, 2, CUZK_BAD_FORMAT, "exceed 2 wires"},
        {40, 0xfffffff0u, CUZK_BAD_FORMAT, "outputs"},
        {60, 0xffffffffu, CUZK_BAD_FORMAT, "too few for 4294967295 constraints"},
        {60, ref.n_constraints - 1, CUZK_BAD_FORMAT, "section 2 (constraints) has"},
        {60, ref.n_constraints + 1, CUZK_BAD_FORMAT, "runs past the end of section 2"},
    };
    for (size_t i = 0; i < sizeof hcases / sizeof hcases[0]; i++) {
        tb_copy(&bf, &orig);
        set32(bf.data[h] + hcases[i].off, hcases[i].v);
        EXPECT(parse_bf(K_R1CS, &bf, &eb), hcases[i].want, &eb, hcases[i].needle);
        tb_free(&bf);
    }
    tb_copy(&bf, &orig);
    bf.data[h][4] ^= 1;
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "scalar field");
    tb_free(&bf);
    tb_copy(&bf, &orig);
    set32(bf.data[h], 8);
    tb_resize(&bf, h, 8 + 32, 0);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_UNSUPPORTED, &eb, "8 bytes");
    tb_free(&bf);
    /* constraint section: term count too big, wire out of range, trailing bytes */
    tb_copy(&bf, &orig);
    set32(bf.data[c], 0xffffffffu);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "constraint 0 (A) has 4294967295");
    tb_free(&bf);
    tb_copy(&bf, &orig);
    set32(bf.data[c] + 4, ref.n_wires);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "term 0 refers to wire");
    tb_free(&bf);
    tb_copy(&bf, &orig);
    tb_resize(&bf, c, bf.size[c] + 4, 0);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "use");
    tb_free(&bf);
    tb_copy(&bf, &orig);
    tb_resize(&bf, l, bf.size[l] - 8, 0);
    EXPECT(parse_bf(K_R1CS, &bf, &eb), CUZK_BAD_FORMAT, &eb, "wire labels");
    tb_free(&bf);
    /* a coefficient >= r: parse ok, validate names constraint and term */
    tb_copy(&bf, &orig);
    memset(bf.data[c] + 8, 0xff, 32); /* constraint 0, A, term 0 coefficient */
    {
        tb_buf j = tb_join(&bf);
        cuzk_r1cs r;
        CHECK(cuzk_r1cs_parse(&r, j.p, j.n, "v.r1cs", &eb) == CUZK_OK);
        EXPECT(cuzk_r1cs_validate(&r, &eb), CUZK_NON_CANONICAL, &eb, "constraint 0 (A) term 0");
        cuzk_r1cs_close(&r);
        free(j.p);
    }
    tb_free(&bf);

    cuzk_r1cs_close(&ref);
    tb_free(&orig);
    free(b.p);
    free(b2.p);
}

/* Prefixes of the bigger Poseidon zkey: dense over the headers, then section boundaries and
 * random lengths. */
static void big_prefixes(const char *curve)
{
    char rel[128];
    snprintf(rel, sizeof rel, "%s/poseidon.zkey", curve);
    tb_buf b = tb_fixture(rel);
    if (!b.p)
        return;
    prefixes(K_ZKEY, &b, 4096);
    mutations(K_ZKEY, &b, 200);
    free(b.p);
}

static void file_cases(void)
{
    cuzk_errbuf eb;
    cuzk_zkey z;
    cuzk_wtns w;
    cuzk_r1cs r;
    EXPECT(cuzk_zkey_open(&z, "/nonexistent/circuit.zkey", &eb), CUZK_IO, &eb,
           "/nonexistent/circuit.zkey: cannot open");
    EXPECT(cuzk_wtns_open(&w, "/nonexistent/w.wtns", &eb), CUZK_IO, &eb, "w.wtns");
    EXPECT(cuzk_r1cs_open(&r, "/tmp", &eb), CUZK_IO, &eb, "not a regular file");
    char path[] = "/tmp/cuzk_io_empty_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    EXPECT(cuzk_zkey_open(&z, path, &eb), CUZK_TRUNCATED, &eb, path);
    EXPECT(cuzk_wtns_open(&w, path, &eb), CUZK_TRUNCATED, &eb, "0 bytes");
    unlink(path);
    /* a zkey handed to the wtns reader and vice versa */
    EXPECT(cuzk_wtns_open(&w, tb_fixture_path("bn128/multiplier.zkey"), &eb), CUZK_BAD_FORMAT,
           &eb, "not a .wtns file");
    EXPECT(cuzk_r1cs_open(&r, tb_fixture_path("bn128/multiplier.wtns"), &eb), CUZK_BAD_FORMAT,
           &eb, "not a .r1cs file");
    /* close is safe on a zeroed object and twice */
    memset(&z, 0, sizeof z);
    cuzk_zkey_close(&z);
    cuzk_zkey_close(&z);
    memset(&r, 0, sizeof r);
    cuzk_r1cs_close(&r);
    /* parse of NULL/0 */
    EXPECT(cuzk_zkey_parse(&z, NULL, 0, "null", &eb), CUZK_TRUNCATED, &eb, "null");
    /* curve names */
    cuzk_curve c;
    CHECK(cuzk_curve_from_name("bn254", &c) == 0 && c == CUZK_CURVE_BN254);
    CHECK(cuzk_curve_from_name("BLS12-381", &c) == 0 && c == CUZK_CURVE_BLS12_381);
    CHECK(cuzk_curve_from_name("bls12377", &c) == -1);
    CHECK(!strcmp(cuzk_curve_name(CUZK_CURVE_BN254), "bn128"));
    CHECK(!strcmp(cuzk_curve_name(CUZK_CURVE_BLS12_381), "bls12381"));
    CHECK(cuzk_curve_n8q(CUZK_CURVE_BLS12_381) == 48 && cuzk_curve_n8r(CUZK_CURVE_BN254) == 32);
}

int main(void)
{
    static const char *const curves[] = {"bn128", "bls12381"};
    file_cases();
    for (int i = 0; i < 2; i++) {
        zkey_cases(curves[i]);
        wtns_cases(curves[i]);
        r1cs_cases(curves[i]);
        big_prefixes(curves[i]);
    }
    return tu_finish("io_corrupt");
}
