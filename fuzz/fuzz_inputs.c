/* libFuzzer target for the circuit-input reader (src/witness/inputs.c: what `cuzk witness` and
 * `cuzk prove --input` read from input.json, through the JSON reader). Built and run by
 * scripts/fuzz-smoke.sh (target inputs; seeds in fuzz/corpus/inputs/).
 * Invariants checked: a read either succeeds or fails with BAD_ENCODING / NON_CANONICAL
 * (NO_MEMORY if memory runs out) and an "f.json:" message; on success the signals' value
 * ranges tile the value array in order, each count is its JSON's flattened size, every value
 * has an element path that starts with its signal's name; nothing leaks (ASan). */
#include <string.h>

#include "cuzk/json.h"
#include "witness/inputs.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    cuzk_json_doc *doc = NULL;
    cuzk_errbuf eb;
    if (cuzk_json_parse(&doc, (const char *)data, size, 0, "f.json", &eb) != CUZK_OK)
        return 0;
    cuzk__inputs in;
    cuzk_err e = cuzk__inputs_parse(&in, cuzk_json_root(doc), "f.json", &eb);
    if (e) {
        if ((e != CUZK_BAD_ENCODING && e != CUZK_NON_CANONICAL && e != CUZK_NO_MEMORY) ||
            strncmp(eb.msg, "f.json:", 7) != 0 || in.values || in.signals)
            __builtin_trap();
        cuzk_json_free(doc);
        return 0;
    }
    uint64_t next = 0;
    for (size_t i = 0; i < in.n_signals; i++) {
        const cuzk__input_signal *s = &in.signals[i];
        if (s->first != next || s->count != cuzk__inputs_leaves(s->json))
            __builtin_trap();
        next += s->count;
        for (uint64_t k = 0; k < s->count; k++) {
            char path[128];
            cuzk__inputs_path(path, sizeof path, s->name, s->json, k);
            if (strncmp(path, s->name, strlen(s->name) < 127 ? strlen(s->name) : 127) != 0)
                __builtin_trap();
        }
    }
    if (next != in.n_values)
        __builtin_trap();
    cuzk__inputs_free(&in);
    cuzk_json_free(doc);
    return 0;
}
