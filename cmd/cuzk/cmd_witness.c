/* cuzk witness: a circom circuit's witness from its inputs (like `snarkjs wtns calculate`). */
#include <stdio.h>
#include <string.h>

#include "cuzk/err.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "util/clock.h"

#include "cli.h"
#include "cmd_witness.h"

static const char *WITNESS_HELP =
    "Usage: cuzk witness [options] CIRCUIT.wasm INPUT.json WITNESS.wtns\n"
    "\n"
    "Computes a circom circuit's witness from its inputs, as `snarkjs wtns calculate` does,\n"
    "with the witness program circom writes (`circom --wasm`: CIRCUIT_js/CIRCUIT.wasm).\n"
    "The wasm is translated to C (wabt's wasm2c) and compiled (cc) once, then kept in a\n"
    "cache keyed by its SHA-256; each computation runs in a process of its own.\n"
    "\n"
    "INPUT.json maps each input signal to a value or, for array signals, nested arrays of\n"
    "them: numbers, decimal strings, 0x-hex strings, booleans; negative values count from r.\n"
    "A value not below r, an unknown or missing signal (named when circom's CIRCUIT.sym\n"
    "lies beside the wasm or in its parent folder) and a wrong array length are errors.\n"
    "\n"
    "Options:\n"
    "  --wasm-cache DIR   where built witness programs are kept (default: " CUZK_WITNESS_CACHE_DIR
    "\n"
    "                     beside the wasm)\n"
    "  --quiet            print neither progress nor the circuit's log() output\n"
    "  -h, --help         this help\n"
    "\n"
    "Needs wasm2c and its runtime (Debian: apt-get install wabt) and a C compiler (cc).\n"
    "Exit status: 0 witness written, 2 error (message on stderr; a failed assert in the\n"
    "circuit names the circuit's message).\n";

cuzk_err cuzk_cmd_witness_compute(cuzk_witness *w, const char *wasm_path, const char *input_path,
                                  const char *cache_dir, FILE *log, cuzk_errbuf *eb)
{
    cuzk_witness_opts wo = {cache_dir};
    cuzk_witness_program *prog = NULL;
    cuzk_json_doc *doc = NULL;
    cuzk_err e;
    memset(w, 0, sizeof *w);
    if ((e = cuzk_json_parse_file(&doc, input_path, 0, eb)))
        return e;
    if ((e = cuzk_witness_program_open(&prog, wasm_path, &wo, eb))) {
        cuzk_json_free(doc);
        return e;
    }
    double build_ms;
    if (log && cuzk_witness_program_built(prog, &build_ms))
        fprintf(log, "cuzk: built the witness program of %s in %.1f s (kept as %s)\n",
                wasm_path, build_ms / 1000, cuzk_witness_program_path(prog));
    double t0 = cuzk__now_ms();
    e = cuzk_witness_compute(prog, cuzk_json_root(doc), input_path, w, eb);
    if (log && w->log && w->log[0])
        fputs(w->log, log);
    if (log && !e)
        fprintf(log, "cuzk: witness of %s: %llu values (%s) in %.1f ms\n", wasm_path,
                (unsigned long long)w->n, cuzk_curve_name(w->curve), cuzk__now_ms() - t0);
    cuzk_witness_program_free(prog);
    cuzk_json_free(doc);
    return e;
}

int cuzk_cmd_witness(int argc, char **argv)
{
    cli_opt o[] = {{"wasm-cache", 0, 1, NULL, 0}, {"quiet", 0, 0, NULL, 0},
                   {"help", 'h', 0, NULL, 0}};
    enum { O_CACHE, O_QUIET, O_HELP };
    const char *pos[4];
    int npos, rc;
    if ((rc = cli_parse("witness", argc, argv, o, 3, pos, 4, &npos)))
        return rc;
    if (o[O_HELP].seen) {
        fputs(WITNESS_HELP, stdout);
        return 0;
    }
    if (npos != 3)
        return cli_usage("witness", "expected CIRCUIT.wasm INPUT.json WITNESS.wtns");
    cuzk_errbuf eb = {{0}};
    cuzk_witness w;
    cuzk_err e = cuzk_cmd_witness_compute(&w, pos[0], pos[1], o[O_CACHE].value,
                                          o[O_QUIET].seen ? NULL : stderr, &eb);
    if (!e)
        e = cuzk_wtns_write(pos[2], w.curve, w.values, w.n, &eb);
    cuzk_witness_clear(&w);
    if (e) {
        fprintf(stderr, "cuzk: error: %s (%s)\n", eb.msg[0] ? eb.msg : cuzk_strerror(e),
                cuzk_errname(e));
        return CLI_EXIT_INPUT;
    }
    return 0;
}
