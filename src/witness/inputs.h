/* Circuit inputs from JSON, flattened (inputs.c). */
#ifndef CUZK_WITNESS_INPUTS_H
#define CUZK_WITNESS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/json.h"

typedef struct {
    uint8_t mag[32]; /* |value|, little-endian, below 2^256 */
    uint8_t neg;     /* value = r - mag */
} cuzk__input_value;

typedef struct {
    const char *name; /* borrowed from the JSON document */
    const cuzk_json *json;
    uint32_t hash_hi, hash_lo; /* FNV-1a of the name, as circom's setInputSignal takes it */
    uint64_t first, count;     /* values[first .. first + count) */
} cuzk__input_signal;

typedef struct {
    cuzk__input_signal *signals;
    size_t n_signals;
    cuzk__input_value *values;
    uint64_t n_values;
} cuzk__inputs;

/* Flattens root (borrowed: it must outlive in). Errors name the signal and element. */
cuzk_err cuzk__inputs_parse(cuzk__inputs *in, const cuzk_json *root, const char *inputs_name,
                            cuzk_errbuf *eb);
void cuzk__inputs_free(cuzk__inputs *in);
/* Values in v once flattened. */
uint64_t cuzk__inputs_leaves(const cuzk_json *v);
/* "name[i][j]" of the k-th flattened value of signal `name` whose JSON is v. */
void cuzk__inputs_path(char *buf, size_t cap, const char *name, const cuzk_json *v, uint64_t k);

#endif
