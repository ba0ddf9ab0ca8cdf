/* libFuzzer target for the .r1cs reader: any input must give a result code, never a crash,
 * leak or out-of-bounds read (build and run: scripts/fuzz-smoke.sh). When the parse succeeds
 * the exposed arrays are walked end to end and validated, so a size the parser accepted but
 * got wrong shows up as an ASan report. */
#include <stddef.h>
#include <stdint.h>

#include "cuzk/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cuzk_errbuf eb;
    cuzk_r1cs r;
    if (cuzk_r1cs_parse(&r, data, size, "fuzz.r1cs", &eb) == CUZK_OK) {
        uint64_t terms = 0;
        for (uint32_t i = 0; i < r.n_constraints; i++) {
            cuzk_r1cs_lc lc[3];
            cuzk_r1cs_constraint(&r, i, lc);
            for (int m = 0; m < 3; m++) {
                for (uint32_t j = 0; j < lc[m].n_terms; j++)
                    if (cuzk_r1cs_term_wire(&r, &lc[m], j) >= r.n_wires)
                        __builtin_trap(); /* the parser promised this bound */
                terms += lc[m].n_terms;
            }
        }
        if (terms != r.n_terms_total)
            __builtin_trap();
        if (r.wire_labels) {
            volatile uint8_t sink = r.wire_labels[(uint64_t)r.n_wires * 8 - 1];
            (void)sink;
        }
        cuzk_r1cs_validate(&r, &eb);
        cuzk_r1cs_close(&r);
    }
    return 0;
}
