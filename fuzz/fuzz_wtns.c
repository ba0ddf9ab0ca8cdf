/* libFuzzer target for the .wtns reader: any input must give a result code, never a crash,
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
    cuzk_wtns w;
    if (cuzk_wtns_parse(&w, data, size, "fuzz.wtns", &eb) == CUZK_OK) {
        volatile uint8_t sink = 0;
        if (w.n_witness)
            sink ^= w.values[w.n_witness * w.n8 - 1];
        (void)sink;
        cuzk_wtns_validate(&w, &eb);
        cuzk_wtns_close(&w);
    }
    return 0;
}
