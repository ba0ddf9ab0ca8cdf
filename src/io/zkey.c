/* snarkjs Groth16 .zkey reader (layout: snarkjs src/zkey_utils.js, zkey_new.js). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuzk/io.h"
#include "io/binfile.h"

static const char *const zkey_sections[] = {
    "?",  "protocol", "Groth16 header", "IC points", "coefficients", "A points",
    "B1 points", "B2 points", "C points", "H points", "contributions",
};
#define ZKEY_MAX_ID 10

/* Data of section id must be exactly `want` bytes (want computed by the caller without
 * overflow). `what` describes how want was derived, for the message. */
static cuzk_err expect_size(const cuzk_file *f, const cuzk__section *s, uint32_t id,
                            uint64_t want, const char *what, cuzk_errbuf *eb)
{
    if (s[id].size == want)
        return CUZK_OK;
    return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section %u (%s) has %llu bytes, expected %llu %s",
                     f->name, id, zkey_sections[id], (unsigned long long)s[id].size,
                     (unsigned long long)want, what);
}

/* The coefficient check reads section 4 once; its pages of a mapped file are dropped from
 * the process behind the reader (the page cache keeps them), so a large key's coefficients
 * are not resident twice once the prover has sorted its own copy. */
#define ZKEY_DROP_EVERY ((uint64_t)1 << 16) /* records (2.75 MiB) */
static void drop_pages(const cuzk_file *f, const uint8_t *p, uint64_t len)
{
    if (!f->map_base || !len)
        return;
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + pg - 1) & ~(pg - 1), hi = ((uintptr_t)p + len) & ~(pg - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: a failure costs memory */
}

static unsigned log2_exact(uint32_t n)
{
    unsigned k = 0;
    while ((1u << k) < n)
        k++;
    return k;
}

static cuzk_err parse(cuzk_zkey *zk, cuzk_errbuf *eb)
{
    const cuzk_file *f = &zk->file;
    const uint8_t *d = f->data;
    cuzk__section s[ZKEY_MAX_ID + 1];
    cuzk_err e = cuzk__binfile_scan(f, "zkey", 1, 1, s, ZKEY_MAX_ID, zkey_sections, NULL, eb);
    if (e)
        return e;
    for (uint32_t id = 1; id <= 9; id++)
        if ((e = cuzk__require(f, s, id, zkey_sections, eb)))
            return e;

    /* Section 1: protocol. */
    if ((e = expect_size(f, s, 1, 4, "(one u32)", eb)))
        return e;
    uint32_t protocol = cuzk_le32(d + s[1].off);
    if (protocol != 1)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: protocol %u is not Groth16 (1)%s; only Groth16 keys are supported",
                         f->name, protocol,
                         protocol == 2 ? ", it is PLONK" : protocol == 10 ? ", it is FFLONK" : "");

    /* Section 2: n8q, q, n8r, r, nVars, nPublic, domainSize, then 3 G1 and 3 G2 points.
     * Read the element sizes first (bounded) so the rest is at fixed offsets. */
    const uint8_t *h = d + s[2].off;
    uint64_t hs = s[2].size;
    if (hs < 4)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section 2 (Groth16 header) has %llu bytes",
                         f->name, (unsigned long long)hs);
    uint32_t n8q = cuzk_le32(h);
    if (n8q != 32 && n8q != 48)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: base field elements of %u bytes; bn128 uses 32 and bls12381 48",
                         f->name, n8q);
    /* n8r is 32 on both curves, so the header size follows from n8q alone; checking it
     * first keeps every later read inside the section. */
    uint32_t g1 = 2 * n8q, g2 = 4 * n8q;
    uint64_t want_hdr = 4 + (uint64_t)n8q + 4 + 32 + 12 + 3 * (uint64_t)g1 + 3 * (uint64_t)g2;
    char what[160];
    snprintf(what, sizeof what, "for %u-byte base field elements", n8q);
    if ((e = expect_size(f, s, 2, want_hdr, what, eb)))
        return e;
    if (cuzk_curve_from_q(h + 4, n8q, &zk->curve) != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: the base field modulus q is not that of bn128 or bls12381",
                         f->name);
    uint32_t n8r = cuzk_le32(h + 4 + n8q);
    if (n8r != 32)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: scalar field elements of %u bytes, expected 32",
                         f->name, n8r);
    const uint8_t *p = h + 4 + n8q + 4;
    cuzk_curve rc;
    if (cuzk_curve_from_r(p, n8r, &rc) != 0 || rc != zk->curve)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: the scalar field modulus r is not that of %s (the curve of q)",
                         f->name, cuzk_curve_name(zk->curve));
    p += n8r;
    zk->n8q = n8q;
    zk->n8r = n8r;
    zk->g1_size = g1;
    zk->g2_size = g2;
    zk->n_vars = cuzk_le32(p);
    zk->n_public = cuzk_le32(p + 4);
    zk->domain_size = cuzk_le32(p + 8);
    p += 12;
    if (zk->n_vars == 0 || (uint64_t)zk->n_public + 1 > zk->n_vars)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: %u public signals need at least %llu variables, header has %u",
                         f->name, zk->n_public, (unsigned long long)zk->n_public + 1,
                         zk->n_vars);
    uint32_t N = zk->domain_size;
    unsigned max_log = zk->curve == CUZK_CURVE_BN254 ? 28 : 32; /* 2-adicity of r - 1 */
    if (N == 0 || (N & (N - 1)) != 0 || log2_exact(N) > max_log)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: domain size %u is not a power of two up to 2^%u", f->name, N,
                         max_log);
    /* The domain holds the extra rows of the public inputs (nPublic + 1 of them). */
    if ((uint64_t)zk->n_public + 1 > N)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: domain size %u cannot hold %u public inputs",
                         f->name, N, zk->n_public);
    zk->log_domain_size = log2_exact(N);
    zk->alpha1 = p;
    zk->beta1 = p + g1;
    zk->beta2 = p + 2 * g1;
    zk->gamma2 = p + 2 * g1 + g2;
    zk->delta1 = p + 2 * g1 + 2 * g2;
    zk->delta2 = p + 3 * g1 + 2 * g2;

    /* Sections 3, 5..9: point arrays whose counts follow from the header. All products are
     * below 2^32 * 192 so they cannot overflow 64 bits, but check anyway (cheap). */
    struct {
        uint32_t id;
        uint64_t count;
        uint32_t psize;
        const char *of;
        const uint8_t **ptr;
        uint64_t *n;
    } arrays[] = {
        {3, (uint64_t)zk->n_public + 1, g1, "public inputs + 1", &zk->ic, &zk->n_ic},
        {5, zk->n_vars, g1, "variables", &zk->a, &zk->n_a},
        {6, zk->n_vars, g1, "variables", &zk->b1, &zk->n_b1},
        {7, zk->n_vars, g2, "variables", &zk->b2, &zk->n_b2},
        {8, (uint64_t)zk->n_vars - zk->n_public - 1, g1, "private variables", &zk->c, &zk->n_c},
        {9, N, g1, "domain points", &zk->h, &zk->n_h},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        uint64_t want;
        if (!cuzk__mul64(arrays[i].count, arrays[i].psize, &want))
            return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section %u size overflows", f->name,
                             arrays[i].id);
        snprintf(what, sizeof what, "for %llu %s (%u bytes per %s point)",
                 (unsigned long long)arrays[i].count, arrays[i].of, arrays[i].psize,
                 arrays[i].psize == g1 ? "G1" : "G2");
        if ((e = expect_size(f, s, arrays[i].id, want, what, eb)))
            return e;
        *arrays[i].ptr = d + s[arrays[i].id].off;
        *arrays[i].n = arrays[i].count;
    }

    /* Section 4: u32 nCoef, then nCoef records {u32 m, u32 c, u32 s, n8r bytes}. */
    if (s[4].size < 4)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 4 (coefficients) has %llu bytes, too short for its count",
                         f->name, (unsigned long long)s[4].size);
    const uint8_t *cp = d + s[4].off;
    uint64_t n_coefs = cuzk_le32(cp);
    uint32_t csize = 12 + n8r;
    uint64_t want4 = n_coefs * csize + 4; /* < 2^32 * 44 + 4: no overflow */
    snprintf(what, sizeof what, "for %llu coefficients of %u bytes",
             (unsigned long long)n_coefs, csize);
    if ((e = expect_size(f, s, 4, want4, what, eb)))
        return e;
    zk->coefs = cp + 4;
    zk->n_coefs = n_coefs;
    zk->coef_size = csize;
    uint64_t dropped = 0;
    for (uint64_t i = 0; i < n_coefs; i++) {
        cuzk_zkey_coef k = cuzk_zkey_coef_at(zk, i);
        if (k.matrix > 1)
            return cuzk_errf(eb, CUZK_BAD_FORMAT,
                             "%s: coefficient %llu names matrix %u (only 0 = A and 1 = B exist)",
                             f->name, (unsigned long long)i, k.matrix);
        if (k.row >= N)
            return cuzk_errf(eb, CUZK_BAD_FORMAT,
                             "%s: coefficient %llu is in row %u, outside the domain of %u rows",
                             f->name, (unsigned long long)i, k.row, N);
        if (k.signal >= zk->n_vars)
            return cuzk_errf(eb, CUZK_BAD_FORMAT,
                             "%s: coefficient %llu refers to signal %u of %u", f->name,
                             (unsigned long long)i, k.signal, zk->n_vars);
        if (i + 1 - dropped == ZKEY_DROP_EVERY || i + 1 == n_coefs) {
            drop_pages(f, zk->coefs + dropped * csize, (i + 1 - dropped) * csize);
            dropped = i + 1;
        }
    }

    /* Section 10 is optional for proving; when present it holds at least the 64-byte circuit
     * hash and the u32 contribution count. */
    if (s[10].present) {
        if (s[10].size < 68)
            return cuzk_errf(eb, CUZK_BAD_FORMAT,
                             "%s: section 10 (contributions) has %llu bytes, at least 68 expected",
                             f->name, (unsigned long long)s[10].size);
        zk->mpc = d + s[10].off;
        zk->mpc_len = s[10].size;
    }
    return CUZK_OK;
}

cuzk_err cuzk_zkey_parse(cuzk_zkey *zk, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb)
{
    memset(zk, 0, sizeof *zk);
    cuzk__file_borrow(&zk->file, data, len, name);
    cuzk_err e = parse(zk, eb);
    if (e)
        memset(zk, 0, sizeof *zk);
    return e;
}

cuzk_err cuzk_zkey_open(cuzk_zkey *zk, const char *path, cuzk_errbuf *eb)
{
    memset(zk, 0, sizeof *zk);
    cuzk_err e = cuzk__file_map(&zk->file, path, eb);
    if (!e)
        e = parse(zk, eb);
    if (e)
        cuzk_zkey_close(zk);
    return e;
}

void cuzk_zkey_close(cuzk_zkey *zk)
{
    cuzk__file_unmap(&zk->file);
    memset(zk, 0, sizeof *zk);
}

/* Each of the `n` points of `size` bytes at p has coordinates < q. */
static cuzk_err check_points(const cuzk_zkey *zk, const char *what, const uint8_t *p,
                             uint64_t n, uint32_t size, cuzk_errbuf *eb)
{
    for (uint64_t i = 0; i < n; i++)
        for (uint32_t o = 0; o < size; o += zk->n8q)
            if (!cuzk_curve_lt_q(zk->curve, p + i * size + o))
                return cuzk_errf(eb, CUZK_NON_CANONICAL,
                                 "%s: %s point %llu has coordinate %u >= q", zk->file.name,
                                 what, (unsigned long long)i, o / zk->n8q);
    return CUZK_OK;
}

cuzk_err cuzk_zkey_validate(const cuzk_zkey *zk, cuzk_errbuf *eb)
{
    uint32_t g1 = zk->g1_size, g2 = zk->g2_size;
    struct {
        const char *what;
        const uint8_t *p;
        uint64_t n;
        uint32_t size;
    } all[] = {
        {"alpha1", zk->alpha1, 1, g1}, {"beta1", zk->beta1, 1, g1},
        {"beta2", zk->beta2, 1, g2},   {"gamma2", zk->gamma2, 1, g2},
        {"delta1", zk->delta1, 1, g1}, {"delta2", zk->delta2, 1, g2},
        {"IC", zk->ic, zk->n_ic, g1},  {"A", zk->a, zk->n_a, g1},
        {"B1", zk->b1, zk->n_b1, g1},  {"B2", zk->b2, zk->n_b2, g2},
        {"C", zk->c, zk->n_c, g1},     {"H", zk->h, zk->n_h, g1},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        cuzk_err e = check_points(zk, all[i].what, all[i].p, all[i].n, all[i].size, eb);
        if (e)
            return e;
    }
    for (uint64_t i = 0; i < zk->n_coefs; i++)
        if (!cuzk_curve_lt_r(zk->curve, cuzk_zkey_coef_at(zk, i).value))
            return cuzk_errf(eb, CUZK_NON_CANONICAL, "%s: coefficient %llu has a value >= r",
                             zk->file.name, (unsigned long long)i);
    return CUZK_OK;
}
