/* libFuzzer target for the TOML-subset parser and the size/duration parsers.
 * Built and run by scripts/fuzz-smoke.sh (target toml; seeds in fuzz/corpus/toml/).
 * Invariants checked: a parse either succeeds or fails with BAD_CONFIG and a "name:line:"
 * message; every key of a parsed document can be looked up; nothing leaks (ASan). */
#include <stdlib.h>
#include <string.h>

#include "cuzk/toml.h"

static void walk(const cuzk_toml_value *t, int depth)
{
    if (depth > 64)
        return;
    for (size_t i = 0; i < cuzk_toml_len(t); i++) {
        const cuzk_toml_value *v = cuzk_toml_at(t, i);
        const char *s;
        int64_t x;
        double d;
        uint64_t u;
        cuzk_errbuf eb;
        (void)cuzk_toml_path(v);
        switch (cuzk_toml_type_of(v)) {
        case CUZK_TOML_STRING:
            cuzk_toml_as_string(v, &s, &eb);
            cuzk_toml_as_size(v, &u, &eb);
            cuzk_toml_as_duration_ns(v, &u, &eb);
            break;
        case CUZK_TOML_INT:
            cuzk_toml_as_int(v, &x, &eb);
            cuzk_toml_as_float(v, &d, &eb);
            break;
        default:
            walk(v, depth + 1);
        }
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    cuzk_toml *doc = NULL;
    cuzk_errbuf eb;
    cuzk_err e = cuzk_toml_parse(&doc, "f.toml", (const char *)data, size, &eb);
    if (e == CUZK_OK) {
        walk(cuzk_toml_root(doc), 0);
        cuzk_toml_check_unused(doc, &eb);
        cuzk_toml_free(doc);
    } else if (e != CUZK_BAD_CONFIG || doc != NULL || strncmp(eb.msg, "f.toml:", 7) != 0) {
        abort();
    }
    /* the same bytes as a size and a duration string */
    char buf[64];
    size_t n = size < sizeof buf - 1 ? size : sizeof buf - 1;
    memcpy(buf, data, n);
    buf[n] = 0;
    uint64_t v;
    cuzk_parse_size(buf, &v, &eb);
    cuzk_parse_duration(buf, &v, &eb);
    return 0;
}
