/* Streaming .r1cs writer (layout: see r1cs.c). circom writes the constraints section first and
 * the header after it, which lets us stream constraints and fill in their count at the end. */
#include <string.h>

#include "cuzk/io.h"

cuzk_err cuzk_r1cs_writer_open(cuzk_r1cs_writer *w, const char *path, cuzk_curve curve,
                               uint32_t n_wires, uint32_t n_outputs, uint32_t n_pub_inputs,
                               uint32_t n_prv_inputs, cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    if ((unsigned)curve >= CUZK_CURVE_COUNT ||
        1 + (uint64_t)n_outputs + n_pub_inputs + n_prv_inputs > n_wires)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "%s: 1 + %u outputs + %u public + %u private inputs exceed %u wires",
                         path, n_outputs, n_pub_inputs, n_prv_inputs, n_wires);
    w->curve = curve;
    w->n_wires = n_wires;
    w->n_outputs = n_outputs;
    w->n_pub_inputs = n_pub_inputs;
    w->n_prv_inputs = n_prv_inputs;
    cuzk_err e = cuzk_binfile_writer_open(&w->bw, path, "r1cs", 1, 3, eb);
    if (!e)
        e = cuzk_binfile_begin_section(&w->bw, 2, eb);
    return e;
}

static cuzk_err put_lc(cuzk_r1cs_writer *w, const cuzk_r1cs_term *t, uint32_t n,
                       cuzk_errbuf *eb)
{
    cuzk_err e = cuzk_binfile_write_u32(&w->bw, n, eb);
    for (uint32_t i = 0; !e && i < n; i++) {
        e = cuzk_binfile_write_u32(&w->bw, t[i].wire, eb);
        if (!e)
            e = cuzk_binfile_write(&w->bw, t[i].coef, 32, eb);
    }
    return e;
}

cuzk_err cuzk_r1cs_writer_add(cuzk_r1cs_writer *w, const cuzk_r1cs_term *a, uint32_t na,
                              const cuzk_r1cs_term *b, uint32_t nb, const cuzk_r1cs_term *c,
                              uint32_t nc, cuzk_errbuf *eb)
{
    if (w->bw.err)
        return w->bw.err;
    const cuzk_r1cs_term *lc[3] = {a, b, c};
    uint32_t n[3] = {na, nb, nc};
    for (int m = 0; m < 3; m++)
        for (uint32_t i = 0; i < n[m]; i++) {
            if (lc[m][i].wire >= w->n_wires)
                return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                                 "%s: constraint %llu refers to wire %u of %u", w->bw.path,
                                 (unsigned long long)w->n_constraints, lc[m][i].wire,
                                 w->n_wires);
            if (!cuzk_curve_lt_r(w->curve, lc[m][i].coef))
                return cuzk_errf(eb, CUZK_NON_CANONICAL,
                                 "%s: constraint %llu has a coefficient >= r", w->bw.path,
                                 (unsigned long long)w->n_constraints);
        }
    if (w->n_constraints >= UINT32_MAX)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: too many constraints", w->bw.path);
    cuzk_err e = CUZK_OK;
    for (int m = 0; m < 3 && !e; m++)
        e = put_lc(w, lc[m], n[m], eb);
    if (!e)
        w->n_constraints++;
    return e;
}

cuzk_err cuzk_r1cs_writer_close(cuzk_r1cs_writer *w, cuzk_errbuf *eb)
{
    cuzk_binfile_writer *bw = &w->bw;
    uint8_t r[32];
    cuzk_curve_r_le(w->curve, r);
    cuzk_binfile_end_section(bw, eb);
    cuzk_binfile_begin_section(bw, 1, eb);
    cuzk_binfile_write_u32(bw, 32, eb);
    cuzk_binfile_write(bw, r, 32, eb);
    cuzk_binfile_write_u32(bw, w->n_wires, eb);
    cuzk_binfile_write_u32(bw, w->n_outputs, eb);
    cuzk_binfile_write_u32(bw, w->n_pub_inputs, eb);
    cuzk_binfile_write_u32(bw, w->n_prv_inputs, eb);
    uint8_t labels[8];
    for (int i = 0; i < 8; i++)
        labels[i] = (uint8_t)((uint64_t)w->n_wires >> (8 * i));
    cuzk_binfile_write(bw, labels, 8, eb); /* nLabels = nWires */
    cuzk_binfile_write_u32(bw, (uint32_t)w->n_constraints, eb);
    cuzk_binfile_end_section(bw, eb);
    cuzk_binfile_begin_section(bw, 3, eb);
    for (uint32_t i = 0; i < w->n_wires && !bw->err; i++) {
        uint8_t l[8];
        for (int k = 0; k < 8; k++)
            l[k] = (uint8_t)((uint64_t)i >> (8 * k));
        cuzk_binfile_write(bw, l, 8, eb);
    }
    cuzk_binfile_end_section(bw, eb);
    cuzk_err e = cuzk_binfile_writer_close(bw, eb);
    memset(w, 0, sizeof *w);
    return e;
}
