/* Writers: rewriting a parsed snarkjs zkey reproduces snarkjs's file byte for byte; the r1cs
 * writer reproduces circom's constraint section byte for byte and its header fields; the
 * writers refuse bad input and leave no partial file behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/io.h"
#include "io_testlib.h"
#include "testutil.h"

static char tmp[] = "/tmp/cuzk_io_write_XXXXXX";

static void zkey_roundtrip(const char *rel)
{
    tb_buf b = tb_fixture(rel);
    if (!b.p)
        return;
    cuzk_errbuf eb;
    cuzk_zkey z;
    CHECK(cuzk_zkey_parse(&z, b.p, b.n, rel, &eb) == CUZK_OK);
    CHECK_MSG(cuzk_zkey_write(tmp, &z, &eb) == CUZK_OK, "%s", eb.msg);
    size_t n = 0;
    char *again = tu_read_file(tmp, &n);
    CHECK_MSG(again && n == b.n && memcmp(again, b.p, n) == 0, "%s: rewrite differs", rel);
    free(again);
    /* without section 10 the result still parses, with mpc NULL */
    cuzk_zkey z2 = z;
    z2.mpc = NULL;
    z2.mpc_len = 0;
    CHECK(cuzk_zkey_write(tmp, &z2, &eb) == CUZK_OK);
    cuzk_zkey z3;
    CHECK_MSG(cuzk_zkey_open(&z3, tmp, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(z3.mpc == NULL && z3.n_coefs == z.n_coefs &&
          memcmp(z3.h, z.h, z.n_h * z.g1_size) == 0);
    cuzk_zkey_close(&z3);
    /* inconsistent input and unwritable path */
    z2.domain_size = 3;
    CHECK(cuzk_zkey_write(tmp, &z2, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK(cuzk_zkey_write("/nonexistent-dir/x.zkey", &z, &eb) == CUZK_IO);
    CHECK(access("/nonexistent-dir/x.zkey", F_OK) != 0);
    /* the section table agrees with the sizes the header implies */
    cuzk_zkey_close(&z);
    CHECK(cuzk_zkey_parse(&z, b.p, b.n, rel, &eb) == CUZK_OK);
    cuzk_section_info si[16];
    uint32_t ns = cuzk_file_sections(&z.file, si, 16);
    CHECK(ns == 10);
    uint64_t g1 = z.g1_size, g2 = z.g2_size;
    uint64_t want[11] = {0, 4, 4 + 32 + 4 + 32 + 12 + 3 * g1 + 3 * g2 + (z.n8q - 32),
                         z.n_ic * g1, 4 + z.n_coefs * 44, z.n_vars * g1, z.n_vars * g1,
                         z.n_vars * g2, z.n_c * g1, z.n_h * g1, z.mpc_len};
    for (uint32_t i = 0; i < ns && i < 16; i++) {
        CHECK(si[i].id == i + 1); /* snarkjs writes 1..10 after a contribution */
        if (si[i].id >= 1 && si[i].id <= 10)
            CHECK_MSG(si[i].size == want[si[i].id], "%s section %u size %llu", rel, si[i].id,
                      (unsigned long long)si[i].size);
    }
    CHECK(si[3].offset + si[3].size + 12 == si[4].offset && si[3].offset + 4 ==
          (uint64_t)(z.coefs - b.p));
    CHECK(si[9].offset + si[9].size == b.n);
    cuzk_zkey_close(&z);
    free(b.p);
}

static void r1cs_roundtrip(const char *rel)
{
    tb_buf b = tb_fixture(rel);
    if (!b.p)
        return;
    cuzk_errbuf eb;
    cuzk_r1cs r;
    CHECK(cuzk_r1cs_parse(&r, b.p, b.n, rel, &eb) == CUZK_OK);
    cuzk_r1cs_writer w;
    CHECK(cuzk_r1cs_writer_open(&w, tmp, r.curve, r.n_wires, r.n_outputs, r.n_pub_inputs,
                                r.n_prv_inputs, &eb) == CUZK_OK);
    cuzk_r1cs_term *t[3];
    for (int m = 0; m < 3; m++)
        t[m] = malloc((r.n_terms_total + 1) * sizeof *t[m]);
    for (uint32_t i = 0; i < r.n_constraints; i++) {
        cuzk_r1cs_lc lc[3];
        cuzk_r1cs_constraint(&r, i, lc);
        for (int m = 0; m < 3; m++)
            for (uint32_t j = 0; j < lc[m].n_terms; j++) {
                t[m][j].wire = cuzk_r1cs_term_wire(&r, &lc[m], j);
                memcpy(t[m][j].coef, cuzk_r1cs_term_coef(&r, &lc[m], j), 32);
            }
        CHECK(cuzk_r1cs_writer_add(&w, t[0], lc[0].n_terms, t[1], lc[1].n_terms, t[2],
                                   lc[2].n_terms, &eb) == CUZK_OK);
    }
    /* rejected terms do not poison the writer */
    t[0][0].wire = r.n_wires;
    CHECK(cuzk_r1cs_writer_add(&w, t[0], 1, NULL, 0, NULL, 0, &eb) == CUZK_INVALID_ARGUMENT);
    t[0][0].wire = 0;
    memset(t[0][0].coef, 0xff, 32);
    CHECK(cuzk_r1cs_writer_add(&w, t[0], 1, NULL, 0, NULL, 0, &eb) == CUZK_NON_CANONICAL);
    CHECK_MSG(cuzk_r1cs_writer_close(&w, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_r1cs r2;
    CHECK_MSG(cuzk_r1cs_open(&r2, tmp, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(r2.curve == r.curve && r2.n_wires == r.n_wires && r2.n_outputs == r.n_outputs &&
          r2.n_pub_inputs == r.n_pub_inputs && r2.n_prv_inputs == r.n_prv_inputs &&
          r2.n_constraints == r.n_constraints && r2.n_terms_total == r.n_terms_total);
    CHECK(r2.offsets[r2.n_constraints] == r.offsets[r.n_constraints] &&
          memcmp(r2.constraints, r.constraints, r.offsets[r.n_constraints]) == 0);
    CHECK(r2.wire_labels && cuzk_le64(r2.wire_labels + 8 * (uint64_t)(r.n_wires - 1)) ==
                                r.n_wires - 1);
    cuzk_r1cs_close(&r2);
    for (int m = 0; m < 3; m++)
        free(t[m]);
    cuzk_r1cs_close(&r);
    free(b.p);
    /* bad shape */
    CHECK(cuzk_r1cs_writer_open(&w, tmp, CUZK_CURVE_BN254, 2, 1, 1, 0, &eb) ==
          CUZK_INVALID_ARGUMENT);
}

static void binfile_misuse(void)
{
    cuzk_errbuf eb;
    cuzk_binfile_writer w;
    CHECK(cuzk_binfile_writer_open(&w, tmp, "test", 1, 2, &eb) == CUZK_OK);
    CHECK(cuzk_binfile_write(&w, "x", 1, &eb) == CUZK_INVALID_ARGUMENT); /* outside a section */
    CHECK(cuzk_binfile_begin_section(&w, 1, &eb) == CUZK_INVALID_ARGUMENT); /* sticky */
    CHECK(cuzk_binfile_writer_close(&w, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK(access(tmp, F_OK) != 0); /* removed */
    CHECK(cuzk_binfile_writer_open(&w, tmp, "test", 1, 2, &eb) == CUZK_OK);
    CHECK(cuzk_binfile_begin_section(&w, 7, &eb) == CUZK_OK);
    CHECK(cuzk_binfile_write(&w, "abc", 3, &eb) == CUZK_OK);
    CHECK(cuzk_binfile_end_section(&w, &eb) == CUZK_OK);
    CHECK(cuzk_binfile_writer_close(&w, &eb) == CUZK_INVALID_ARGUMENT); /* 1 of 2 sections */
    CHECK(access(tmp, F_OK) != 0);
}

int main(void)
{
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    static const char *const curves[] = {"bn128", "bls12381"};
    for (int i = 0; i < 2; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "%s/multiplier.zkey", curves[i]);
        zkey_roundtrip(rel);
        snprintf(rel, sizeof rel, "%s/poseidon.zkey", curves[i]);
        zkey_roundtrip(rel);
        snprintf(rel, sizeof rel, "%s/poseidon.r1cs", curves[i]);
        r1cs_roundtrip(rel);
        snprintf(rel, sizeof rel, "%s/multiplier.r1cs", curves[i]);
        r1cs_roundtrip(rel);
    }
    binfile_misuse();
    unlink(tmp);
    return tu_finish("io_write");
}
