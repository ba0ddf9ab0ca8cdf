/* iden3 .r1cs reader (layout: iden3/r1csfile src/r1csfile.js). circom writes the sections in
 * the order 2, 1, 3; custom-gate sections (4, 5, PLONK only) are ignored. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/io.h"
#include "io/binfile.h"

static const char *const r1cs_sections[] = {"?", "header", "constraints", "wire labels"};

static const char *const lc_names[3] = {"A", "B", "C"};

static cuzk_err parse(cuzk_r1cs *r, cuzk_errbuf *eb)
{
    const cuzk_file *f = &r->file;
    cuzk__section s[4];
    cuzk_err e = cuzk__binfile_scan(f, "r1cs", 1, 1, s, 3, r1cs_sections, NULL, eb);
    if (e)
        return e;
    for (uint32_t id = 1; id <= 2; id++)
        if ((e = cuzk__require(f, s, id, r1cs_sections, eb)))
            return e;

    /* Header: u32 n8, prime (n8 bytes), u32 nWires, nOutputs, nPubInputs, nPrvInputs,
     * u64 nLabels, u32 nConstraints. */
    const uint8_t *h = f->data + s[1].off;
    if (s[1].size < 4)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section 1 (header) has %llu bytes",
                         f->name, (unsigned long long)s[1].size);
    uint32_t n8 = cuzk_le32(h);
    uint64_t want = 4 + (uint64_t)n8 + 4 * 4 + 8 + 4;
    if (s[1].size != want)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 1 (header) has %llu bytes, expected %llu for %u-byte "
                         "field elements",
                         f->name, (unsigned long long)s[1].size, (unsigned long long)want, n8);
    if (n8 != 32)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: field elements of %u bytes; bn128 and bls12381 use 32", f->name,
                         n8);
    if (cuzk_curve_from_r(h + 4, n8, &r->curve) != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: the prime is not the scalar field of bn128 or bls12381", f->name);
    const uint8_t *p = h + 4 + n8;
    r->n8 = n8;
    r->term_size = 4 + n8;
    r->n_wires = cuzk_le32(p);
    r->n_outputs = cuzk_le32(p + 4);
    r->n_pub_inputs = cuzk_le32(p + 8);
    r->n_prv_inputs = cuzk_le32(p + 12);
    r->n_labels = cuzk_le64(p + 16);
    r->n_constraints = cuzk_le32(p + 24);
    uint64_t n_io = 1 + (uint64_t)r->n_outputs + r->n_pub_inputs + r->n_prv_inputs;
    if (n_io > r->n_wires)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: 1 + %u outputs + %u public + %u private inputs exceed %u wires",
                         f->name, r->n_outputs, r->n_pub_inputs, r->n_prv_inputs, r->n_wires);

    /* Wire labels (optional; snarkjs only loads them on request). */
    if (s[3].present) {
        if (s[3].size != (uint64_t)r->n_wires * 8)
            return cuzk_errf(eb, CUZK_BAD_FORMAT,
                             "%s: section 3 (wire labels) has %llu bytes, expected %llu for %u "
                             "wires",
                             f->name, (unsigned long long)s[3].size,
                             (unsigned long long)r->n_wires * 8, r->n_wires);
        r->wire_labels = f->data + s[3].off;
    }

    /* Constraints. Each needs at least three u32 term counts: bound the count by the section
     * size before allocating the index, so a forged header cannot make us allocate. */
    const uint8_t *c = f->data + s[2].off;
    uint64_t size = s[2].size;
    uint32_t nc = r->n_constraints;
    if ((uint64_t)nc * 12 > size)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 2 (constraints) has %llu bytes, too few for %u constraints",
                         f->name, (unsigned long long)size, nc);
    r->offsets = malloc(((uint64_t)nc + 1) * sizeof *r->offsets);
    if (!r->offsets)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: no memory for the index of %u constraints",
                         f->name, nc);
    r->constraints = c;
    uint64_t pos = 0, total = 0;
    for (uint32_t i = 0; i < nc; i++) {
        r->offsets[i] = pos;
        for (int m = 0; m < 3; m++) {
            if (size - pos < 4)
                return cuzk_errf(eb, CUZK_BAD_FORMAT,
                                 "%s: constraint %u (%s) runs past the end of section 2",
                                 f->name, i, lc_names[m]);
            uint32_t nt = cuzk_le32(c + pos);
            pos += 4;
            uint64_t bytes = (uint64_t)nt * r->term_size; /* < 2^38 */
            if (bytes > size - pos)
                return cuzk_errf(eb, CUZK_BAD_FORMAT,
                                 "%s: constraint %u (%s) has %u terms, more than section 2 "
                                 "holds",
                                 f->name, i, lc_names[m], nt);
            for (uint32_t j = 0; j < nt; j++) {
                uint32_t wire = cuzk_le32(c + pos + (uint64_t)j * r->term_size);
                if (wire >= r->n_wires)
                    return cuzk_errf(eb, CUZK_BAD_FORMAT,
                                     "%s: constraint %u (%s) term %u refers to wire %u of %u",
                                     f->name, i, lc_names[m], j, wire, r->n_wires);
            }
            pos += bytes;
            total += nt;
        }
    }
    r->offsets[nc] = pos;
    if (pos != size)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: section 2 (constraints) has %llu bytes, the %u constraints use %llu",
                         f->name, (unsigned long long)size, nc, (unsigned long long)pos);
    r->n_terms_total = total;
    return CUZK_OK;
}

cuzk_err cuzk_r1cs_parse(cuzk_r1cs *r, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb)
{
    memset(r, 0, sizeof *r);
    cuzk__file_borrow(&r->file, data, len, name);
    cuzk_err e = parse(r, eb);
    if (e)
        cuzk_r1cs_close(r);
    return e;
}

cuzk_err cuzk_r1cs_open(cuzk_r1cs *r, const char *path, cuzk_errbuf *eb)
{
    memset(r, 0, sizeof *r);
    cuzk_err e = cuzk__file_map(&r->file, path, eb);
    if (!e)
        e = parse(r, eb);
    if (e)
        cuzk_r1cs_close(r);
    return e;
}

void cuzk_r1cs_close(cuzk_r1cs *r)
{
    free(r->offsets);
    cuzk__file_unmap(&r->file);
    memset(r, 0, sizeof *r);
}

void cuzk_r1cs_constraint(const cuzk_r1cs *r, uint32_t i, cuzk_r1cs_lc lc[3])
{
    const uint8_t *p = r->constraints + r->offsets[i];
    for (int m = 0; m < 3; m++) {
        lc[m].n_terms = cuzk_le32(p);
        lc[m].terms = p + 4;
        p += 4 + (uint64_t)lc[m].n_terms * r->term_size;
    }
}

cuzk_err cuzk_r1cs_validate(const cuzk_r1cs *r, cuzk_errbuf *eb)
{
    for (uint32_t i = 0; i < r->n_constraints; i++) {
        cuzk_r1cs_lc lc[3];
        cuzk_r1cs_constraint(r, i, lc);
        for (int m = 0; m < 3; m++)
            for (uint32_t j = 0; j < lc[m].n_terms; j++)
                if (!cuzk_curve_lt_r(r->curve, cuzk_r1cs_term_coef(r, &lc[m], j)))
                    return cuzk_errf(eb, CUZK_NON_CANONICAL,
                                     "%s: constraint %u (%s) term %u has a coefficient >= r",
                                     r->file.name, i, lc_names[m], j);
    }
    return CUZK_OK;
}
