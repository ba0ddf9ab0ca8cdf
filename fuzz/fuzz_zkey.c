/* libFuzzer target for the .zkey reader: any input must give a result code, never a crash,
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
    cuzk_zkey z;
    if (cuzk_zkey_parse(&z, data, size, "fuzz.zkey", &eb) == CUZK_OK) {
        volatile uint8_t sink = 0;
        const uint8_t *ends[] = {
            z.alpha1 + z.g1_size, z.delta2 + z.g2_size, z.ic + z.n_ic * z.g1_size,
            z.a + z.n_a * z.g1_size, z.b1 + z.n_b1 * z.g1_size, z.b2 + z.n_b2 * z.g2_size,
            z.h + z.n_h * z.g1_size, z.coefs + z.n_coefs * z.coef_size,
        };
        for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
            sink ^= ends[i][-1];
        if (z.n_c)
            sink ^= z.c[z.n_c * z.g1_size - 1];
        if (z.mpc)
            sink ^= z.mpc[z.mpc_len - 1];
        for (uint64_t i = 0; i < z.n_coefs; i++) {
            cuzk_zkey_coef k = cuzk_zkey_coef_at(&z, i);
            if (k.matrix > 1 || k.row >= z.domain_size || k.signal >= z.n_vars)
                __builtin_trap(); /* the parser promised these bounds */
        }
        (void)sink;
        cuzk_zkey_validate(&z, &eb);
        cuzk_section_info si[16];
        uint32_t ns = cuzk_file_sections(&z.file, si, 16);
        for (uint32_t i = 0; i < ns && i < 16; i++)
            if (si[i].offset + si[i].size > size)
                __builtin_trap();
        cuzk_zkey_close(&z);
    }
    return 0;
}
