/* The curve-independent prover (prover.c): what it reads of a proving key, and the proof state
 * its stages share. The curve arithmetic stays in groth16_tmpl.h. */
#ifndef CUZK_GROTH16_PROVER_H
#define CUZK_GROTH16_PROVER_H

#include <stdint.h>

#include "cuzk/groth16.h"
#include "groth16/pk_device.h"

/* The part of a proving key that does not depend on the curve: its dimensions, its residency
 * on each GPU, and whether a consuming proof freed its parts. First member of each curve's key
 * (groth16_tmpl.h), which the curve's functions reach it from. */
typedef struct cuzk__pk_base {
    uint32_t n_vars, n_public, domain_size, log_n;
    cuzk__pk_device dev[CUZK_MAX_DEVICES];
    int consumed; /* a proof with consume_key freed the key's parts */
} cuzk__pk_base;

/* A zeroed base's devices made ready; _free frees what they hold. */
void cuzk__pk_base_init(cuzk__pk_base *pk);
void cuzk__pk_base_free(cuzk__pk_base *pk);

#endif
