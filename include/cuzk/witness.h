/* Witnesses from circuit inputs: runs circom's witness program (`circom --wasm`'s
 * CIRCUIT_js/CIRCUIT.wasm) natively, as `snarkjs wtns calculate` does in JavaScript.
 *
 * The wasm is translated to C with wabt's wasm2c and built with the system C compiler into a
 * shared object once per program, cached under its SHA-256 (cuzk_witness_program_open). Each
 * computation runs in a process of its own, cuzk-witness-runner (installed in libexec/cuzk): a
 * failed assert or a crash of the program ends that process and comes back as an error naming
 * the circuit's message, never taking the caller down, and any number of computations may run
 * at once. */
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
 * CUZK_WITNESS_UNSATISFIED with the circuit's message; CUZK_NOT_FOUND when cuzk-witness-runner
 * is not installed (the message says where it was looked for). On success *w is owned by the
 * caller (cuzk_witness_clear). */
cuzk_err cuzk_witness_compute(const cuzk_witness_program *p, const cuzk_json *inputs,
                              const char *inputs_name, cuzk_witness *w, cuzk_errbuf *eb);
void cuzk_witness_clear(cuzk_witness *w);
/* Refuses the inputs exactly as cuzk_witness_compute would before running the circuit
 * (unknown, missing or mis-sized signals, values not below r, malformed values), without
 * running it: quick, for checking a request before it is queued. */
cuzk_err cuzk_witness_check(const cuzk_witness_program *p, const cuzk_json *inputs,
                            const char *inputs_name, cuzk_errbuf *eb);
/* The program's curve (from its prime) and the number of values its witnesses have. */
cuzk_err cuzk_witness_program_shape(const cuzk_witness_program *p, cuzk_curve *curve,
                                    uint64_t *n_values, cuzk_errbuf *eb);
/* *wt views w's values as a .wtns named `name` (w must outlive it; cuzk_wtns_close is a
 * no-op on it). */
void cuzk_witness_as_wtns(const cuzk_witness *w, cuzk_wtns *wt, const char *name);

/* Another witness generator, run as a command: `ARGV... input.json out.wtns` in a scratch
 * directory of its own (made under scratch_dir, removed after), with no shell in between, its
 * standard input /dev/null and its output (stdout and stderr) kept for messages. */
typedef struct {
    const char *const *argv;  /* the program and its first arguments, NULL-terminated */
    uint64_t timeout_ms;      /* the command (its process group) is killed past this; 0: none */
    const char *scratch_dir;  /* NULL or "": $TMPDIR, else /tmp */
    uint64_t max_bytes;       /* out.wtns larger than this is refused */
} cuzk_witness_command;

/* Writes inputs[0..len) to input.json, runs the command and returns out.wtns's bytes in
 * *wtns (malloc'd; the caller parses and checks them). Errors: CUZK_NOT_FOUND (the program
 * cannot be run), CUZK_TIMEOUT, CUZK_WITNESS_UNSATISFIED (it exited with a status other than
 * 0: the message ends with the tail of its output), CUZK_INTERNAL (killed by a signal),
 * CUZK_IO (scratch directory, no out.wtns), CUZK_SIZE_MISMATCH (out.wtns above max_bytes).
 * inputs_name names the inputs in messages. */
cuzk_err cuzk_witness_run_command(const cuzk_witness_command *cmd, const char *inputs,
                                  size_t len, const char *inputs_name, uint8_t **wtns,
                                  size_t *wtns_len, cuzk_errbuf *eb);

#endif
