/* Witness computation from circuit inputs, shared by `cuzk witness` and `cuzk prove --wasm`. */
#ifndef CUZK_CMD_WITNESS_H
#define CUZK_CMD_WITNESS_H

#include <stdio.h>

#include "cuzk/witness.h"

/* Loads (building it once) the witness program and computes the witness of input_path into
 * *w. Progress and the circuit's log() output go to `log` (NULL: nowhere). Returns a cuzk_err;
 * eb says what went wrong. */
cuzk_err cuzk_cmd_witness_compute(cuzk_witness *w, const char *wasm_path, const char *input_path,
                                  const char *cache_dir, FILE *log, cuzk_errbuf *eb);

#endif
