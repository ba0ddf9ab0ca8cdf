/* Readers (and writers) for the circom / snarkjs binary files: Groth16 .zkey, .wtns, .r1cs.
 *
 * All three use the iden3 "binfile" container: 4-byte magic, u32 version, u32 nSections, then
 * nSections x {u32 id, u64 size, data}, little-endian, sections in any order (layouts as
 * snarkjs's and circom's readers and writers define them).
 *
 * A reader maps the file read-only (or borrows a caller's buffer) and keeps it mapped for
 * its lifetime; every pointer it exposes points into that mapping, so nothing is copied.
 * Opening validates the whole structure: the section table, every size against the file
 * and against what the header implies (computed in 64 bits with overflow checks), and each
 * zkey coefficient record's indices / each r1cs term's wire id. Field elements are NOT
 * range-checked on open (that reads every byte of a large key); call the *_validate
 * functions for that. Points stay raw: the curve layer decodes them and checks they are on
 * the curve.
 *
 * Errors: CUZK_IO (open/mmap/write failed), CUZK_BAD_FORMAT (wrong magic, bad structure,
 * wrong sizes, duplicated or missing section, bad indices), CUZK_TRUNCATED (something
 * extends past the end of the file), CUZK_UNSUPPORTED (unknown prime, non-Groth16 zkey,
 * unsupported version or element size), CUZK_NON_CANONICAL (*_validate: an element >= its
 * modulus), CUZK_WRONG_CURVE / CUZK_SIZE_MISMATCH (cuzk_wtns_check_zkey), CUZK_NO_MEMORY.
 * The message names the file and the problem. */
#ifndef CUZK_IO_H
#define CUZK_IO_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/curve.h"
#include "cuzk/err.h"

/* The file (mapping or borrowed buffer) behind a reader; fields are private. */
typedef struct {
    const uint8_t *data;
    uint64_t len;
    void *map_base; /* non-NULL when we own an mmap */
    size_t map_len;
    char name[256]; /* path or caller-given name, for messages (truncated) */
} cuzk_file;

static inline uint32_t cuzk_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t cuzk_le64(const uint8_t *p)
{
    return (uint64_t)cuzk_le32(p) | (uint64_t)cuzk_le32(p + 4) << 32;
}

/* One entry of a file's section table (for `cuzk inspect`): id, data offset and size. */
typedef struct {
    uint32_t id;
    uint64_t offset, size;
} cuzk_section_info;

/* Lists the section table of an opened file (the `file` member of a reader) in file order:
 * fills at most max entries and returns the number of sections in the table. */
uint32_t cuzk_file_sections(const cuzk_file *f, cuzk_section_info *out, uint32_t max);

/* ------------------------------------------------------------------ .zkey (Groth16 only) */

/* Points are affine, x || y (G2: x.c0 || x.c1 || y.c0 || y.c1), each coordinate n8q bytes
 * little-endian in Montgomery form (R = 2^(8*n8q)); the point at infinity is all zero bytes.
 * A G1 point takes g1_size = 2*n8q bytes, a G2 point g2_size = 4*n8q. */
typedef struct {
    cuzk_curve curve;
    uint32_t n8q, n8r;      /* 32/32 (BN254), 48/32 (BLS12-381) */
    uint32_t g1_size, g2_size;
    uint32_t n_vars;        /* witness length, including the constant 1 */
    uint32_t n_public;      /* public outputs + public inputs (excluding the constant 1) */
    uint32_t domain_size;   /* N, a power of two */
    uint32_t log_domain_size;
    /* Section 2: the verifying-key points, each g1_size / g2_size raw bytes. */
    const uint8_t *alpha1, *beta1, *beta2, *gamma2, *delta1, *delta2;
    /* Section 3: n_public + 1 G1 points. */
    const uint8_t *ic;
    uint64_t n_ic;
    /* Section 4: n_coefs records of coef_size = 12 + n8r bytes (after the leading u32
     * count): u32 m (0 = A, 1 = B), u32 c (row, < domain_size), u32 s (signal, < n_vars),
     * n8r bytes value = coefficient * 2^512 mod r, little-endian. Order is unspecified. */
    const uint8_t *coefs;
    uint64_t n_coefs;
    uint32_t coef_size;
    /* Sections 5..9: A (G1, n_vars), B1 (G1, n_vars), B2 (G2, n_vars),
     * C (G1, n_c = n_vars - n_public - 1, for signals n_public+1 ..), H (G1, domain_size). */
    const uint8_t *a, *b1, *b2, *c, *h;
    uint64_t n_a, n_b1, n_b2, n_c, n_h;
    /* Section 10 (MPC contributions), raw; NULL/0 when absent (provers do not need it). */
    const uint8_t *mpc;
    uint64_t mpc_len;
    cuzk_file file;
} cuzk_zkey;

/* One coefficient record of section 4. */
typedef struct {
    uint32_t matrix; /* 0 = A, 1 = B */
    uint32_t row;
    uint32_t signal;
    const uint8_t *value; /* n8r bytes, coefficient * 2^512 mod r (i.e. Montgomery of R*coef) */
} cuzk_zkey_coef;

static inline cuzk_zkey_coef cuzk_zkey_coef_at(const cuzk_zkey *zk, uint64_t i)
{
    const uint8_t *p = zk->coefs + i * zk->coef_size;
    cuzk_zkey_coef k = {cuzk_le32(p), cuzk_le32(p + 4), cuzk_le32(p + 8), p + 12};
    return k;
}

/* Maps `path` and parses it into *zk. On failure *zk holds nothing to free. */
cuzk_err cuzk_zkey_open(cuzk_zkey *zk, const char *path, cuzk_errbuf *eb);
/* Parses a caller-owned buffer (must outlive *zk); `name` is used in messages. */
cuzk_err cuzk_zkey_parse(cuzk_zkey *zk, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb);
/* Releases the mapping (no-op for a borrowed buffer); *zk is zeroed. Safe on a zeroed zkey. */
void cuzk_zkey_close(cuzk_zkey *zk);
/* Checks every point coordinate of every section is < q and every coefficient < r
 * (CUZK_NON_CANONICAL naming section and index otherwise). Reads the whole file. */
cuzk_err cuzk_zkey_validate(const cuzk_zkey *zk, cuzk_errbuf *eb);

/* ------------------------------------------------------------------ .wtns */

typedef struct {
    cuzk_curve curve;
    uint32_t n8;          /* 32 */
    uint32_t version;     /* 1 or 2 as in the file */
    uint64_t n_witness;   /* u32 in the file */
    const uint8_t *values; /* n_witness x n8 bytes, plain (not Montgomery) little-endian */
    cuzk_file file;
} cuzk_wtns;

cuzk_err cuzk_wtns_open(cuzk_wtns *w, const char *path, cuzk_errbuf *eb);
cuzk_err cuzk_wtns_parse(cuzk_wtns *w, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb);
void cuzk_wtns_close(cuzk_wtns *w);
/* Every value < r (else CUZK_NON_CANONICAL naming the lowest bad index); checked in chunks
 * on all cores. */
cuzk_err cuzk_wtns_validate(const cuzk_wtns *w, cuzk_errbuf *eb);
/* The witness fits the key: same curve (CUZK_WRONG_CURVE) and n_witness == n_vars
 * (CUZK_SIZE_MISMATCH). */
cuzk_err cuzk_wtns_check_zkey(const cuzk_wtns *w, const cuzk_zkey *zk, cuzk_errbuf *eb);

/* Writes a version-2 .wtns file: n values of 32 bytes each, plain little-endian, which must
 * already be < r (checked: CUZK_NON_CANONICAL). */
cuzk_err cuzk_wtns_write(const char *path, cuzk_curve curve, const uint8_t *values, uint64_t n,
                         cuzk_errbuf *eb);

/* ------------------------------------------------------------------ .r1cs */

/* A linear combination: n_terms records of term_size = 4 + n8 bytes: u32 wire id, then the
 * coefficient (n8 bytes, plain little-endian, not Montgomery). */
typedef struct {
    uint32_t n_terms;
    const uint8_t *terms;
} cuzk_r1cs_lc;

typedef struct {
    cuzk_curve curve;
    uint32_t n8;            /* 32 */
    uint32_t term_size;     /* 4 + n8 */
    uint32_t n_wires;       /* = zkey n_vars */
    uint32_t n_outputs, n_pub_inputs, n_prv_inputs;
    uint64_t n_labels;
    uint32_t n_constraints;
    uint64_t n_terms_total; /* over all A, B, C */
    /* Section 3 (wire -> label id, u64 each, n_wires entries); NULL when absent. */
    const uint8_t *wire_labels;
    uint64_t *offsets;      /* private: n_constraints + 1 offsets into `constraints` */
    const uint8_t *constraints;
    cuzk_file file;
} cuzk_r1cs;

cuzk_err cuzk_r1cs_open(cuzk_r1cs *r, const char *path, cuzk_errbuf *eb);
cuzk_err cuzk_r1cs_parse(cuzk_r1cs *r, const void *data, size_t len, const char *name,
                         cuzk_errbuf *eb);
void cuzk_r1cs_close(cuzk_r1cs *r);
/* Constraint i (< n_constraints): lc[0] = A, lc[1] = B, lc[2] = C, meaning
 * <A,w> * <B,w> - <C,w> = 0. */
void cuzk_r1cs_constraint(const cuzk_r1cs *r, uint32_t i, cuzk_r1cs_lc lc[3]);
static inline uint32_t cuzk_r1cs_term_wire(const cuzk_r1cs *r, const cuzk_r1cs_lc *lc,
                                           uint32_t j)
{
    return cuzk_le32(lc->terms + (uint64_t)j * r->term_size);
}
static inline const uint8_t *cuzk_r1cs_term_coef(const cuzk_r1cs *r, const cuzk_r1cs_lc *lc,
                                                 uint32_t j)
{
    return lc->terms + (uint64_t)j * r->term_size + 4;
}
/* Every coefficient < r (else CUZK_NON_CANONICAL naming constraint and term). */
cuzk_err cuzk_r1cs_validate(const cuzk_r1cs *r, cuzk_errbuf *eb);

/* ------------------------------------------------------------------ writers */

/* Streaming writer for the binfile container: open, then for each section begin / write... /
 * end (the section size is patched in at end), then close. Any failure is sticky: later calls
 * return it, and close removes the partial file. */
typedef struct {
    void *fp; /* FILE * */
    uint32_t declared, written;
    int in_section;
    int64_t size_at;  /* file offset of the open section's u64 size */
    uint64_t sec_len; /* bytes written into the open section */
    cuzk_err err;
    char path[256];
} cuzk_binfile_writer;

cuzk_err cuzk_binfile_writer_open(cuzk_binfile_writer *w, const char *path, const char magic[4],
                                  uint32_t version, uint32_t n_sections, cuzk_errbuf *eb);
cuzk_err cuzk_binfile_begin_section(cuzk_binfile_writer *w, uint32_t id, cuzk_errbuf *eb);
cuzk_err cuzk_binfile_write(cuzk_binfile_writer *w, const void *data, size_t n, cuzk_errbuf *eb);
cuzk_err cuzk_binfile_write_u32(cuzk_binfile_writer *w, uint32_t v, cuzk_errbuf *eb);
cuzk_err cuzk_binfile_end_section(cuzk_binfile_writer *w, cuzk_errbuf *eb);
/* Checks that n_sections sections were written, flushes and closes; on any error the file is
 * removed. Always releases the writer. */
cuzk_err cuzk_binfile_writer_close(cuzk_binfile_writer *w, cuzk_errbuf *eb);

/* Writes a Groth16 zkey from in-memory data: every field of *zk that the reader fills
 * (curve, n_vars, n_public, domain_size, the six header points, ic, coefs/n_coefs, a, b1,
 * b2, c, h, and mpc/mpc_len when non-NULL) may point anywhere; `file` is ignored. Sections
 * are written in the order 1..10 as snarkjs does after a contribution, so rewriting a parsed
 * snarkjs zkey reproduces it byte for byte. Point and coefficient bytes are written as given
 * (raw Montgomery, see cuzk_zkey). */
cuzk_err cuzk_zkey_write(const char *path, const cuzk_zkey *zk, cuzk_errbuf *eb);

/* Streaming .r1cs writer: sections in circom's order (constraints, header, wire labels);
 * labels are the identity map (label i for wire i), as circom writes for unoptimised wires. */
typedef struct {
    cuzk_binfile_writer bw;
    cuzk_curve curve;
    uint32_t n_wires, n_outputs, n_pub_inputs, n_prv_inputs;
    uint64_t n_constraints;
} cuzk_r1cs_writer;

/* One term of a linear combination: wire id and plain little-endian coefficient (< r). */
typedef struct {
    uint32_t wire;
    uint8_t coef[32];
} cuzk_r1cs_term;

cuzk_err cuzk_r1cs_writer_open(cuzk_r1cs_writer *w, const char *path, cuzk_curve curve,
                               uint32_t n_wires, uint32_t n_outputs, uint32_t n_pub_inputs,
                               uint32_t n_prv_inputs, cuzk_errbuf *eb);
/* Appends the constraint <a,w> * <b,w> = <c,w>; wire ids must be < n_wires and coefficients
 * < r (CUZK_INVALID_ARGUMENT / CUZK_NON_CANONICAL otherwise). */
cuzk_err cuzk_r1cs_writer_add(cuzk_r1cs_writer *w, const cuzk_r1cs_term *a, uint32_t na,
                              const cuzk_r1cs_term *b, uint32_t nb, const cuzk_r1cs_term *c,
                              uint32_t nc, cuzk_errbuf *eb);
cuzk_err cuzk_r1cs_writer_close(cuzk_r1cs_writer *w, cuzk_errbuf *eb);

#endif
