/* Size and duration strings, shared by the TOML config getters (cuzk_toml_get_size,
 * cuzk_toml_get_duration_ns) and command-line flags. */
#ifndef CUZK_UNITS_H
#define CUZK_UNITS_H

#include <stdint.h>

#include "cuzk/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "1048576", "512B", "4KiB", "64MiB", "50GiB", "2TiB", "1PiB" (powers of 1024) and "4KB"/"4kB",
 * "64MB", "50GB", "2TB", "1PB" (powers of 1000). Optional spaces between number and unit and
 * underscores between digits. Only whole numbers (write 512MiB, not 0.5GiB). Empty strings,
 * signs, unknown units, trailing garbage and results above 2^64-1 are CUZK_BAD_CONFIG. */
cuzk_err cuzk_parse_size(const char *s, uint64_t *out, cuzk_errbuf *eb);

/* One or more NUMBER UNIT terms, units ns, us, ms, s, m, h, d ("30s", "500ms", "1h30m",
 * "1.5s"); "0" alone is allowed. Result in nanoseconds; overflow past 2^64-1 ns (about 584
 * years) and garbage are CUZK_BAD_CONFIG. */
cuzk_err cuzk_parse_duration(const char *s, uint64_t *out_ns, cuzk_errbuf *eb);

/* A count of things (constraints, points): "1048576", "2^20", or a whole number with a binary
 * multiple "64K", "1M", "1Gi", "2TiB" (2^10 .. 2^40). Anything else, and results above 2^64-1,
 * are CUZK_BAD_CONFIG. */
cuzk_err cuzk_parse_count(const char *s, uint64_t *out, cuzk_errbuf *eb);

#ifdef __cplusplus
}
#endif

#endif
