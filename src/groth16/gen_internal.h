/* Internal: gen-circuit and setup as streams, so that a test key can be built in memory
 * (cuzk_pk_generate) from the same code that writes the r1cs and zkey files.
 *
 * A circuit source hands out any range of its constraints in row order (any number of times,
 * the same constraints each time, from several threads at once); the setup reads one and
 * writes the zkey's byte stream into a sink, section by section: into a file (cuzk_setup) or
 * into a key's arrays (cuzk_pk_generate), which may take its large sections in place. */
#ifndef CUZK_GROTH16_GEN_INTERNAL_H
#define CUZK_GROTH16_GEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/gencircuit.h"
#include "cuzk/io.h"
#include "cuzk/setup.h"

/* One constraint <a,w> <b,w> = <c,w> (terms: wire and canonical little-endian coefficient). */
typedef cuzk_err (*cuzk__constraint_fn)(void *ctx, uint64_t row, const cuzk_r1cs_term *a,
                                        uint32_t na, const cuzk_r1cs_term *b, uint32_t nb,
                                        const cuzk_r1cs_term *c, uint32_t nc, cuzk_errbuf *eb);

typedef struct {
    cuzk_curve curve;
    uint64_t n_constraints, n_wires;
    uint64_t n_public; /* outputs + public inputs */
    const char *name;  /* for messages */
    uint64_t chunk;    /* a range starts at a multiple of it */
    /* Calls fn for rows lo .. hi - 1 in order; stops at fn's first error. Thread-safe. */
    cuzk_err (*range)(const void *src, uint64_t lo, uint64_t hi, cuzk__constraint_fn fn,
                      void *ctx, cuzk_errbuf *eb);
    const void *src;
} cuzk__circuit_source;

/* The zkey's byte stream: begin(id), write..., end() for sections 1 .. 10 in order. Errors
 * may be returned at any call; setup checks them at each section's end. A sink may take
 * section 4 and the point sections in place instead (coef_rows, place: NULL when not). */
typedef struct cuzk__zkey_sink {
    cuzk_err (*begin)(struct cuzk__zkey_sink *s, uint32_t id, cuzk_errbuf *eb);
    cuzk_err (*write)(struct cuzk__zkey_sink *s, const void *p, size_t n, cuzk_errbuf *eb);
    cuzk_err (*end)(struct cuzk__zkey_sink *s, cuzk_errbuf *eb);
    /* Section 4 (then nothing is written to it, not even its count): the n_rec 44-byte
     * records of rows row0 .. row0 + n_rows - 1, in order, whose first A and B records are
     * the first[0]-th and first[1]-th of their matrices. Every row of the domain comes in
     * exactly one call; calls for different rows may run at once, on any thread. */
    cuzk_err (*coef_rows)(struct cuzk__zkey_sink *s, uint64_t row0, uint64_t n_rows,
                          const uint64_t first[2], const uint8_t *rec, uint64_t n_rec,
                          cuzk_errbuf *eb);
    /* Point section id (3, 5 .. 9, after its begin): where its `bytes` bytes go, written there
     * by the setup instead of through write; NULL: through write. */
    uint8_t *(*place)(struct cuzk__zkey_sink *s, uint32_t id, uint64_t bytes);
    uint64_t n_coef[2]; /* set by the setup before section 4: its A and B records */
} cuzk__zkey_sink;

/* cuzk_setup's work over a source into a sink; o->seed must be set. */
cuzk_err cuzk__setup_run(const cuzk__circuit_source *src, cuzk__zkey_sink *sink,
                         const cuzk_setup_opts *o, cuzk_setup_info *info, cuzk_errbuf *eb);

/* What gen-circuit produces, as calls: every constraint (in order), and every witness value:
 * wire 0, the inputs 2 .. , then one per constraint (the last is wire 1). Either may be NULL;
 * without `value` (and no JSON) the witness is not computed. */
typedef struct {
    cuzk__constraint_fn constraint;
    cuzk_err (*value)(void *ctx, uint32_t wire, const uint8_t v[32], cuzk_errbuf *eb);
    void *ctx;
} cuzk__gen_sink;

/* Tests only: replay a structure's bit gates as rows, through the field (1), as the replay
 * does for operands that are not bits; 0: from the bits (the default). */
void cuzk__gen_replay_gates_as_rows(int on);

/* The wire layout of p's circuit (info's n_wires, n_public_inputs, n_private_inputs). */
cuzk_err cuzk__gen_layout(const cuzk_gen_params *p, cuzk_gen_info *info, cuzk_errbuf *eb);
cuzk_err cuzk__gen_walk(const cuzk_gen_params *p, const cuzk__gen_sink *s,
                        const char *input_json_path, cuzk_gen_info *info, cuzk_errbuf *eb);
/* The generated circuit as a setup's source; p's strings must outlive *out. A thread walks
 * the circuit once, recording where each range starts (a range waits for its start). Free
 * with cuzk__gen_source_free. */
cuzk_err cuzk__gen_source_new(cuzk__circuit_source *out, const cuzk_gen_params *p,
                              cuzk_errbuf *eb);
void cuzk__gen_source_free(cuzk__circuit_source *src);

#endif
