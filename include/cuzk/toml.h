/* A strict parser for the subset of TOML 1.0 that cuzk's configuration uses. Size ("50GiB")
 * and duration ("500ms") values are read with the parsers of cuzk/units.h.
 *
 * Supported: comments, blank lines, [a.b] tables, [[a.b]] arrays of tables, bare / "quoted" /
 * 'literal' keys and dotted keys (a.b = 1), values that are basic strings ("..." with \b \t \n
 * \f \r \" \\ \uXXXX \UXXXXXXXX escapes), literal strings ('...'), integers (decimal with
 * underscores, 0x / 0o / 0b), floats (incl. inf / nan), booleans, and arrays of those scalars
 * (possibly spanning lines, with comments and a trailing comma). Rejected with an error that
 * names file and line: multi-line strings, inline tables, nested arrays, dates and times,
 * duplicate keys, tables defined twice, malformed numbers, integers out of int64 range,
 * control characters, NUL bytes and invalid UTF-8.
 *
 * All errors are CUZK_BAD_CONFIG with messages shaped like
 *   cuzk.toml:12: key 'gpus.workers_per_device': expected integer, got string
 *
 * Unknown keys: every lookup marks the values it reaches as used. After reading all the keys
 * it knows, the caller calls cuzk_toml_check_unused() which fails on the first (lowest line)
 * key nobody asked for: "cuzk.toml:7: unknown key 'gpus.wrkers'".
 *
 * Typical use:
 *   cuzk_toml *doc;
 *   if ((e = cuzk_toml_load(&doc, path, eb))) return e;
 *   const cuzk_toml_value *root = cuzk_toml_root(doc);
 *   int64_t gw = 2;                     // default, kept when the key is absent
 *   uint64_t budget = 8ull << 30;
 *   if ((e = cuzk_toml_get_int_range(root, "gpus.workers_per_device", 1, 64, &gw, eb)) ||
 *       (e = cuzk_toml_get_size(root, "memory.working_budget", &budget, eb))) goto out;
 *   const cuzk_toml_value *circuits;    // [[circuit]]
 *   if ((e = cuzk_toml_get_tables(root, "circuit", &circuits, eb))) goto out;
 *   for (size_t i = 0; i < cuzk_toml_len(circuits); i++) {
 *       const cuzk_toml_value *c = cuzk_toml_at(circuits, i);
 *       const char *id = NULL;
 *       if ((e = cuzk_toml_get_string(c, "id", &id, eb))) goto out;
 *       if (!id) { e = cuzk_toml_errf(c, eb, "missing required key 'id'"); goto out; }
 *   }
 *   e = cuzk_toml_check_unused(doc, eb);
 *   out: cuzk_toml_free(doc);          // strings returned above die with the document
 *
 * Not thread safe (the used marks are written by lookups); a document is parsed and read by
 * one thread. Lookups by dotted path cannot name keys that themselves contain '.'.
 */
#ifndef CUZK_TOML_H
#define CUZK_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/units.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CUZK_TOML_STRING = 1,
    CUZK_TOML_INT,
    CUZK_TOML_FLOAT,
    CUZK_TOML_BOOL,
    CUZK_TOML_ARRAY,       /* key = [ ... ] (scalars) */
    CUZK_TOML_TABLE,       /* [a], dotted-key parent, or an element of [[a]] */
    CUZK_TOML_TABLE_ARRAY, /* [[a]] */
} cuzk_toml_type;

typedef struct cuzk_toml cuzk_toml;
typedef struct cuzk_toml_value cuzk_toml_value;

/* Documents larger than this are refused (a config file, not a data file). */
#define CUZK_TOML_MAX_SIZE (16u << 20)

/* name is used in messages ("cuzk.toml"). text need not be NUL-terminated. */
cuzk_err cuzk_toml_parse(cuzk_toml **out, const char *name, const char *text, size_t len,
                         cuzk_errbuf *eb);
/* Reads and parses a file; messages use the path as given. */
cuzk_err cuzk_toml_load(cuzk_toml **out, const char *path, cuzk_errbuf *eb);
void cuzk_toml_free(cuzk_toml *doc);

const cuzk_toml_value *cuzk_toml_root(const cuzk_toml *doc);

/* ---- navigation */

/* Value at a dotted path below a table ("memory.working_budget"), or NULL if absent or if a
 * component on the way is not a table. Marks the tables on the way and the value used. */
const cuzk_toml_value *cuzk_toml_get(const cuzk_toml_value *table, const char *path);
cuzk_toml_type cuzk_toml_type_of(const cuzk_toml_value *v);
const char *cuzk_toml_type_name(cuzk_toml_type t);    /* "integer", "string", ... */
int cuzk_toml_line(const cuzk_toml_value *v);         /* 1-based; header line for tables */
const char *cuzk_toml_path(const cuzk_toml_value *v); /* "circuit[1].zkey", "gpus.devices[0]" */
const char *cuzk_toml_file(const cuzk_toml_value *v);
/* Elements of an array / array of tables, or keys of a table. */
size_t cuzk_toml_len(const cuzk_toml_value *v);
/* Element i of an array or array of tables (marked used), or the value of the i-th key of a
 * table in document order (NOT marked used: iterating is not consuming). NULL if out of range. */
const cuzk_toml_value *cuzk_toml_at(const cuzk_toml_value *v, size_t i);
/* Name of the i-th key of a table (NULL if v is not a table or i is out of range). */
const char *cuzk_toml_key_at(const cuzk_toml_value *v, size_t i);
/* Marks v (and, for tables and arrays, everything below it) used. */
void cuzk_toml_mark_used(const cuzk_toml_value *v);

/* ---- typed access to one value (marks it used). Wrong type -> CUZK_BAD_CONFIG. */

cuzk_err cuzk_toml_as_string(const cuzk_toml_value *v, const char **out, cuzk_errbuf *eb);
cuzk_err cuzk_toml_as_int(const cuzk_toml_value *v, int64_t *out, cuzk_errbuf *eb);
/* Accepts integers too (converted exactly or rejected if |x| > 2^53). */
cuzk_err cuzk_toml_as_float(const cuzk_toml_value *v, double *out, cuzk_errbuf *eb);
cuzk_err cuzk_toml_as_bool(const cuzk_toml_value *v, bool *out, cuzk_errbuf *eb);
/* A size string ("50GiB", see cuzk_parse_size) or a non-negative integer (bytes). */
cuzk_err cuzk_toml_as_size(const cuzk_toml_value *v, uint64_t *out, cuzk_errbuf *eb);
/* A duration string ("30s", see cuzk_parse_duration), result in nanoseconds. */
cuzk_err cuzk_toml_as_duration_ns(const cuzk_toml_value *v, uint64_t *out_ns, cuzk_errbuf *eb);

/* ---- typed getters by path. Absent key: CUZK_OK with *out untouched, so the caller presets
 * the default. Present with the wrong type or a bad value: CUZK_BAD_CONFIG. */

cuzk_err cuzk_toml_get_string(const cuzk_toml_value *table, const char *path, const char **out,
                              cuzk_errbuf *eb);
cuzk_err cuzk_toml_get_int(const cuzk_toml_value *table, const char *path, int64_t *out,
                           cuzk_errbuf *eb);
/* As get_int, and the value must lie in [lo, hi]. */
cuzk_err cuzk_toml_get_int_range(const cuzk_toml_value *table, const char *path, int64_t lo,
                                 int64_t hi, int64_t *out, cuzk_errbuf *eb);
cuzk_err cuzk_toml_get_float(const cuzk_toml_value *table, const char *path, double *out,
                             cuzk_errbuf *eb);
cuzk_err cuzk_toml_get_bool(const cuzk_toml_value *table, const char *path, bool *out,
                            cuzk_errbuf *eb);
cuzk_err cuzk_toml_get_size(const cuzk_toml_value *table, const char *path, uint64_t *out,
                            cuzk_errbuf *eb);
cuzk_err cuzk_toml_get_duration_ns(const cuzk_toml_value *table, const char *path, uint64_t *out_ns,
                                   cuzk_errbuf *eb);
/* An array whose elements all have type elem (0: any scalar type). *out = NULL when absent. */
cuzk_err cuzk_toml_get_array(const cuzk_toml_value *table, const char *path, cuzk_toml_type elem,
                             const cuzk_toml_value **out, cuzk_errbuf *eb);
/* An array of tables ([[path]]). *out = NULL when absent. */
cuzk_err cuzk_toml_get_tables(const cuzk_toml_value *table, const char *path,
                              const cuzk_toml_value **out, cuzk_errbuf *eb);
/* A table ([path] or dotted keys). *out = NULL when absent. */
cuzk_err cuzk_toml_get_table(const cuzk_toml_value *table, const char *path,
                             const cuzk_toml_value **out, cuzk_errbuf *eb);

/* Formats "FILE:LINE: key 'PATH': MESSAGE" (for a table: "FILE:LINE: table 'PATH': MESSAGE")
 * into eb and returns CUZK_BAD_CONFIG, for the caller's own validation of a value. */
cuzk_err cuzk_toml_errf(const cuzk_toml_value *v, cuzk_errbuf *eb, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- unknown keys */

/* Fails with "FILE:LINE: unknown key 'PATH'" for the lowest-line value never marked used. An
 * empty table nobody looked up counts as unknown too. */
cuzk_err cuzk_toml_check_unused(const cuzk_toml *doc, cuzk_errbuf *eb);
/* Fills out[0..max) with the unused values in line order and returns how many there are. */
size_t cuzk_toml_unused(const cuzk_toml *doc, const cuzk_toml_value **out, size_t max);

#ifdef __cplusplus
}
#endif

#endif
