/* Witnesses from circuit inputs: runs circom's witness program (`circom --wasm`'s
 * CIRCUIT_js/CIRCUIT.wasm) natively, as `snarkjs wtns calculate` does in JavaScript.
 *
 * The wasm is translated to C with wabt's wasm2c and built with the system C compiler into a
 * shared object once per program, cached under its SHA-256 (cuzk_witness_program_open). Each
 * computation runs in a child process of its own: a failed assert or a crash of the program
 * ends that child and comes back as an error naming the circuit's message, never taking the
 * caller down, and any number of computations may run at once. */
#ifndef CUZK_WITNESS_H
#define CUZK_WITNESS_H

#include <stdint.h>

#include "cuzk/curve.h"
#include "cuzk/err.h"
#include "cuzk/io.h"
#include "cuzk/json.h"

typedef struct cuzk_witness_program cuzk_witness_program;

typedef struct {
    /* Where built programs are kept (created if missing). NULL: CUZK_WITNESS_CACHE_DIR
     * beside the wasm. */
    const char *cache_dir;
} cuzk_witness_opts;

#define CUZK_WITNESS_CACHE_DIR ".cuzk-wasm-cache"

/* Loads the program built from wasm_path, building it first when the cache has none for the
 * wasm's contents (seconds to minutes for big circuits; once). Errors: CUZK_IO (unreadable
 * wasm or cache), CUZK_NOT_FOUND (wasm2c, its runtime or cc missing: the message says which
 * package to install), CUZK_BAD_FORMAT (wasm2c or cc refused the program). */
cuzk_err cuzk_witness_program_open(cuzk_witness_program **out, const char *wasm_path,
                                   const cuzk_witness_opts *opts, cuzk_errbuf *eb);
void cuzk_witness_program_free(cuzk_witness_program *p);
/* 1 when open built the program, 0 when it came from the cache; the time it took. */
int cuzk_witness_program_built(const cuzk_witness_program *p, double *build_ms);
/* The shared object's path in the cache. */
const char *cuzk_witness_program_path(const cuzk_witness_program *p);

typedef struct {
    cuzk_curve curve;
    uint64_t n;      /* values */
    uint8_t *values; /* n values of 32 bytes, plain little-endian, each below r */
    char *log;       /* what the circuit's log() calls printed ("" if nothing) */
} cuzk_witness;

/* Computes the witness of the inputs (a JSON object as snarkjs takes it: signal name ->
 * number, decimal or 0x-hex string, boolean, or nested arrays of them for array signals;
 * negative values count from r). Refused with the signal's name: a value not below r, a
 * signal the circuit does not take as input, a wrong number of values, a missing input.
 * inputs_name names the inputs in messages. A failed assert in the circuit is
 * CUZK_WITNESS_UNSATISFIED with the circuit's message. On success *w is owned by the caller
 * (cuzk_witness_clear). */
cuzk_err cuzk_witness_compute(const cuzk_witness_program *p, const cuzk_json *inputs,
                              const char *inputs_name, cuzk_witness *w, cuzk_errbuf *eb);
void cuzk_witness_clear(cuzk_witness *w);
/* *wt views w's values as a .wtns named `name` (w must outlive it; cuzk_wtns_close is a
 * no-op on it). */
void cuzk_witness_as_wtns(const cuzk_witness *w, cuzk_wtns *wt, const char *name);

#endif
