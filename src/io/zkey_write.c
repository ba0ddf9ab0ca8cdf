/* Groth16 .zkey writer from in-memory data (layout: see zkey.c and cuzk/io.h). */
#include <string.h>

#include "cuzk/io.h"

cuzk_err cuzk_zkey_write(const char *path, const cuzk_zkey *zk, cuzk_errbuf *eb)
{
    if ((unsigned)zk->curve >= CUZK_CURVE_COUNT || zk->n_public >= zk->n_vars ||
        zk->domain_size == 0 || (zk->domain_size & (zk->domain_size - 1)) != 0 ||
        zk->n_coefs > UINT32_MAX)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "%s: inconsistent key (curve %d, %u variables, %u public, domain %u)",
                         path, (int)zk->curve, zk->n_vars, zk->n_public, zk->domain_size);
    const uint32_t n8q = cuzk_curve_n8q(zk->curve), n8r = cuzk_curve_n8r(zk->curve);
    const uint64_t g1 = 2 * n8q, g2 = 4 * n8q;
    uint8_t q[48], r[32];
    cuzk_curve_q_le(zk->curve, q);
    cuzk_curve_r_le(zk->curve, r);
    cuzk_binfile_writer w;
    cuzk_binfile_writer_open(&w, path, "zkey", 1, zk->mpc ? 10 : 9, eb);

    cuzk_binfile_begin_section(&w, 1, eb);
    cuzk_binfile_write_u32(&w, 1, eb); /* Groth16 */
    cuzk_binfile_end_section(&w, eb);

    cuzk_binfile_begin_section(&w, 2, eb);
    cuzk_binfile_write_u32(&w, n8q, eb);
    cuzk_binfile_write(&w, q, n8q, eb);
    cuzk_binfile_write_u32(&w, n8r, eb);
    cuzk_binfile_write(&w, r, n8r, eb);
    cuzk_binfile_write_u32(&w, zk->n_vars, eb);
    cuzk_binfile_write_u32(&w, zk->n_public, eb);
    cuzk_binfile_write_u32(&w, zk->domain_size, eb);
    cuzk_binfile_write(&w, zk->alpha1, g1, eb);
    cuzk_binfile_write(&w, zk->beta1, g1, eb);
    cuzk_binfile_write(&w, zk->beta2, g2, eb);
    cuzk_binfile_write(&w, zk->gamma2, g2, eb);
    cuzk_binfile_write(&w, zk->delta1, g1, eb);
    cuzk_binfile_write(&w, zk->delta2, g2, eb);
    cuzk_binfile_end_section(&w, eb);

    const uint64_t n_c = (uint64_t)zk->n_vars - zk->n_public - 1;
    struct {
        uint32_t id;
        const uint8_t *p;
        uint64_t bytes;
    } arr[] = {
        {3, zk->ic, ((uint64_t)zk->n_public + 1) * g1},
        {4, zk->coefs, zk->n_coefs * (12 + n8r)},
        {5, zk->a, (uint64_t)zk->n_vars * g1},
        {6, zk->b1, (uint64_t)zk->n_vars * g1},
        {7, zk->b2, (uint64_t)zk->n_vars * g2},
        {8, zk->c, n_c * g1},
        {9, zk->h, (uint64_t)zk->domain_size * g1},
        {10, zk->mpc, zk->mpc_len},
    };
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        if (arr[i].id == 10 && !zk->mpc)
            break;
        cuzk_binfile_begin_section(&w, arr[i].id, eb);
        if (arr[i].id == 4)
            cuzk_binfile_write_u32(&w, (uint32_t)zk->n_coefs, eb);
        if (arr[i].bytes)
            cuzk_binfile_write(&w, arr[i].p, arr[i].bytes, eb);
        cuzk_binfile_end_section(&w, eb);
    }
    return cuzk_binfile_writer_close(&w, eb);
}
