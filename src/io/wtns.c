/* iden3 .wtns reader (layout: snarkjs src/wtns_utils.js): section 1 = u32 n8, prime r (n8
 * bytes), u32 nWitness; section 2 = nWitness plain little-endian values of n8 bytes. */
#include <stdatomic.h>
#include <string.h>

#include "cuzk/io.h"
#include "io/binfile.h"
#include "util/parallel.h"

static const char *const wtns_sections[] = {"?", "header", "values"};

static cuzk_err parse(cuzk_wtns *w, cuzk_errbuf *eb)
{
    const cuzk_file *f = &w->file;
    cuzk__section s[3];
    cuzk_err e = cuzk__binfile_scan(f, "wtns", 1, 2, s, 2, wtns_sections, &w->version, eb);
    if (e)
        return e;
    for (uint32_t id = 1; id <= 2; id++)
        if ((e = cuzk__require(f, s, id, wtns_sections, eb)))
            return e;
    const uint8_t *h = f->data + s[1].off;
    if (s[1].size < 4)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section 1 (header) has %llu bytes",
                         f->name, (unsigned long long)s[1].size);
    uint32_t n8 = cuzk_le32(h);
    if (s[1].size != 4 + (uint64_t)n8 + 4)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 1 (header) has %llu bytes, expected %llu for %u-byte "
                         "field elements",
                         f->name, (unsigned long long)s[1].size,
                         (unsigned long long)(4 + (uint64_t)n8 + 4), n8);
    if (n8 != 32)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: field elements of %u bytes; bn128 and bls12381 use 32", f->name,
                         n8);
    if (cuzk_curve_from_r(h + 4, n8, &w->curve) != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: the prime is not the scalar field of bn128 or bls12381", f->name);
    w->n8 = n8;
    w->n_witness = cuzk_le32(h + 4 + n8);
    uint64_t want = w->n_witness * n8; /* < 2^37: no overflow */
    if (s[2].size != want)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 2 (values) has %llu bytes, expected %llu for %llu values",
                         f->name, (unsigned long long)s[2].size, (unsigned long long)want,
                         (unsigned long long)w->n_witness);
    w->values = f->data + s[2].off;
    return CUZK_OK;
}

cuzk_err cuzk_wtns_parse(cuzk_wtns *w, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    cuzk__file_borrow(&w->file, data, len, name);
    cuzk_err e = parse(w, eb);
    if (e)
        memset(w, 0, sizeof *w);
    return e;
}

cuzk_err cuzk_wtns_open(cuzk_wtns *w, const char *path, cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    cuzk_err e = cuzk__file_map(&w->file, path, eb);
    if (!e)
        e = parse(w, eb);
    if (e)
        cuzk_wtns_close(w);
    return e;
}

void cuzk_wtns_close(cuzk_wtns *w)
{
    cuzk__file_unmap(&w->file);
    memset(w, 0, sizeof *w);
}

/* Values are checked in chunks on all cores (a 2^22 partition's witness is 128 MiB; the
 * daemon checks every witness of a request before accepting it); the error names the lowest
 * bad index, as a sequential scan would. */
#define WTNS_CHECK_CHUNK 4096 /* values (128 KiB) */
typedef struct {
    const cuzk_wtns *w;
    _Atomic uint64_t bad; /* lowest index of a value not below r (UINT64_MAX: none) */
} wtns_check;

static void wtns_check_chunk(void *arg, size_t c)
{
    wtns_check *j = arg;
    uint64_t lo = (uint64_t)c * WTNS_CHECK_CHUNK, hi = lo + WTNS_CHECK_CHUNK;
    if (hi > j->w->n_witness)
        hi = j->w->n_witness;
    for (uint64_t i = lo; i < hi; i++) {
        if (!cuzk_curve_lt_r(j->w->curve, j->w->values + i * j->w->n8)) {
            uint64_t cur = atomic_load(&j->bad);
            while (i < cur && !atomic_compare_exchange_weak(&j->bad, &cur, i))
                ;
            return;
        }
    }
}

cuzk_err cuzk_wtns_validate(const cuzk_wtns *w, cuzk_errbuf *eb)
{
    wtns_check j = {w, UINT64_MAX};
    size_t nc = (size_t)((w->n_witness + WTNS_CHECK_CHUNK - 1) / WTNS_CHECK_CHUNK);
    if (nc == 1)
        wtns_check_chunk(&j, 0);
    else if (nc)
        cuzk_parallel_for(nc, 0, wtns_check_chunk, &j);
    uint64_t bad = atomic_load(&j.bad);
    if (bad != UINT64_MAX)
        return cuzk_errf(eb, CUZK_NON_CANONICAL,
                         "%s: witness value %llu is not below the %s scalar field modulus r",
                         w->file.name, (unsigned long long)bad, cuzk_curve_name(w->curve));
    return CUZK_OK;
}

cuzk_err cuzk_wtns_check_zkey(const cuzk_wtns *w, const cuzk_zkey *zk, cuzk_errbuf *eb)
{
    if (w->curve != zk->curve)
        return cuzk_errf(eb, CUZK_WRONG_CURVE, "%s: witness is for %s but %s is for %s",
                         w->file.name, cuzk_curve_name(w->curve), zk->file.name,
                         cuzk_curve_name(zk->curve));
    if (w->n_witness != zk->n_vars)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "%s: %llu values, circuit %s expects %u",
                         w->file.name, (unsigned long long)w->n_witness, zk->file.name,
                         zk->n_vars);
    return CUZK_OK;
}
