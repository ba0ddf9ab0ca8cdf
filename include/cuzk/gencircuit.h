/* Synthetic satisfiable R1CS circuits of any size for tests and benchmarks (docs/CIRCUITS.md).
 *
 * Every constraint k defines one new wire out_k from earlier wires:
 *     <A_k, w> * <B_k, w> = c * out_k + <rest of C_k, w>,   c = 1 or r - 1,
 * so the witness is computed forwards in one pass and every constraint holds by construction.
 * The last constraint defines wire 1, the circuit's single public output.
 *
 * Two independent random streams (xoshiro256**, seeded with SHA-256 of a domain tag and the
 * seed string): the STRUCTURE stream (gate types, operand wires, coefficients) depends only on
 * the circuit seed, the WITNESS stream (input values) only on the witness seed. So one circuit
 * (one r1cs, one zkey) has as many distinct satisfying witnesses as there are witness seeds.
 * Operands come from the inputs or from the last 2^16 constraint outputs, which bounds the
 * generator's memory (a ring of 2^16 values) whatever the size; both files are streamed.
 *
 * Segments. With segment = L > 0 the constraints are cut into runs of L (the last one shorter)
 * that share only the inputs: constraint k's operands come from the inputs or from the earlier
 * outputs of its own run, and each run's structure stream is seeded on its own (the seed and
 * the run's index). Such a witness is made by many threads at once, one run each, the way a
 * PoRep partition's many hashes are independent. L = 0 is one run: the original layout, whose
 * files and keys segment never changes.
 *
 * Wires: 0 = constant 1, 1 = output, then the public inputs, the private inputs (bits first,
 * then full-width values), then out_0 .. out_{N-2}. */
#ifndef CUZK_GENCIRCUIT_H
#define CUZK_GENCIRCUIT_H

#include <stdint.h>

#include "cuzk/curve.h"
#include "cuzk/err.h"

typedef enum {
    CUZK_GEN_DENSE = 0,       /* random full-width values and coefficients, few terms */
    CUZK_GEN_SPARSE_BITS = 1, /* PoRep-like: mostly boolean gates on 0/1 wires */
    CUZK_GEN_MIXED = 2,       /* each constraint drawn from one of the two above, 50/50 */
} cuzk_gen_profile;

const char *cuzk_gen_profile_name(cuzk_gen_profile p);
int cuzk_gen_profile_from_name(const char *name, cuzk_gen_profile *out); /* 0 or -1 */

typedef struct {
    cuzk_curve curve;
    uint32_t n_constraints; /* >= 1 */
    cuzk_gen_profile profile;
    const char *seed;         /* circuit (structure) seed: any string */
    const char *witness_seed; /* witness seed (NULL: the circuit seed) */
    unsigned nthreads;        /* cuzk_pk_generate's and cuzk_gen_witness's threads (0: all;
                               * cuzk_gen_witness below); gen-circuit's files are one
                               * sequential pass */
    int device;               /* cuzk_pk_generate's points on this CUDA device when there is
                               * one (0: the first); -1: on the CPU (cuzk_setup_opts) */
    uint32_t segment;         /* constraints per independent run (0: one run, see above) */
    /* cuzk_gen_witness's structure, made once for these parameters (cuzk_gen_structure_new),
     * or NULL: drawn again from the seed for every witness */
    const struct cuzk_gen_structure *structure;
} cuzk_gen_params;

/* A segmented circuit's structure (every run's constraints, about 12.5 bytes a constraint
 * for sparse-bits: its bit gates by their shape and operands), made once on p->nthreads
 * threads (0: all) so that cuzk_gen_witness replays it (p->structure) instead of drawing it
 * again from the seed, the bit gates' outputs from their operands' bits: the same witness,
 * 3-4x faster for sparse-bits. Its identity (curve, constraints, profile, segment and seed)
 * is checked by cuzk_gen_witness. Errors: CUZK_INVALID_ARGUMENT (not segmented, bad parameters),
 * CUZK_NO_MEMORY. */
typedef struct cuzk_gen_structure cuzk_gen_structure;
cuzk_err cuzk_gen_structure_new(cuzk_gen_structure **out, const cuzk_gen_params *p,
                                cuzk_errbuf *eb);
uint64_t cuzk_gen_structure_bytes(const cuzk_gen_structure *s); /* its memory */
void cuzk_gen_structure_free(cuzk_gen_structure *s);

typedef struct {
    uint32_t n_wires, n_public_inputs, n_private_inputs;
    uint64_t n_terms;       /* A + B + C terms written */
    uint64_t n_binary;      /* witness values that are 0 or 1 */
    double ms;
} cuzk_gen_info;

/* Generates the circuit: writes r1cs_path (NULL: skip it, as gen-witness does), wtns_path
 * (NULL: skip) and input_json_path ({"public": [...], "private": [...]}, decimal strings;
 * NULL: skip). Errors: CUZK_INVALID_ARGUMENT, CUZK_IO, CUZK_NO_MEMORY. */
cuzk_err cuzk_gen_circuit(const cuzk_gen_params *p, const char *r1cs_path, const char *wtns_path,
                          const char *input_json_path, cuzk_gen_info *info, cuzk_errbuf *eb);

/* The witness of cuzk_gen_circuit's wtns file, in memory: w holds n_values x 32 bytes (the
 * circuit's n_wires, else CUZK_SIZE_MISMATCH), plain little-endian values as in a .wtns, the
 * form cuzk_prove takes. info (may be NULL) as cuzk_gen_circuit's. Threads: nthreads 1 is one
 * pass; otherwise a circuit of one run takes two threads (the structure beside the values)
 * and a segmented one nthreads threads (0: cuzk_num_threads), each making whole runs, from
 * p->structure when set (CUZK_INVALID_ARGUMENT when it is another circuit's). */
cuzk_err cuzk_gen_witness(uint8_t *w, uint64_t n_values, const cuzk_gen_params *p,
                          cuzk_gen_info *info, cuzk_errbuf *eb);
/* Bytes cuzk_gen_witness allocates beside w while it runs, or 0 for invalid parameters: fixed
 * rings and, for one run and nthreads other than 1, the pipe between its two threads (about
 * 33 MiB whatever the size); segmented, about 2.1 MiB of rings per thread. */
uint64_t cuzk_gen_witness_scratch_bytes(const cuzk_gen_params *p);
/* The circuit's wire count (the witness length), or 0 for invalid parameters. */
uint32_t cuzk_gen_n_wires(const cuzk_gen_params *p);
/* The shape of the key cuzk_pk_generate makes for p, without making it: its n_vars (the wire
 * count), n_public (the output and the public inputs) and the setup's domain size (the least
 * power of two >= constraints + n_public + 1). Errors: CUZK_INVALID_ARGUMENT. */
cuzk_err cuzk_gen_key_shape(const cuzk_gen_params *p, uint32_t *n_vars, uint32_t *n_public,
                            uint32_t *domain_size, cuzk_errbuf *eb);

#endif
