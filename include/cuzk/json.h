/* A small strict JSON reader (RFC 8259) for proof.json, public.json, verification_key.json and
 * request bodies, and a growable writer. The reader builds a tree in one allocation arena with
 * hard caps on input size, depth and node count, so hostile input cannot exhaust memory. */
#ifndef CUZK_JSON_H
#define CUZK_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

typedef enum {
    CUZK_JSON_NULL,
    CUZK_JSON_BOOL,
    CUZK_JSON_NUMBER,
    CUZK_JSON_STRING,
    CUZK_JSON_ARRAY,
    CUZK_JSON_OBJECT
} cuzk_json_type;

typedef struct cuzk_json cuzk_json;
struct cuzk_json {
    cuzk_json_type type;
    int boolean;
    /* NUMBER: the literal text; STRING: the unescaped value (NUL-terminated, may hold NULs
     * only via \u0000, which the reader rejects). */
    const char *str;
    size_t len;
    /* ARRAY / OBJECT children (object children carry their key). */
    cuzk_json **items;
    const char **keys;
    size_t n;
};

#define CUZK_JSON_MAX_DEPTH 64

typedef struct cuzk_json_doc cuzk_json_doc;

/* Parses text[0..len). max_len caps the input size (0 = 64 MiB). On error returns
 * CUZK_BAD_ENCODING with "name:line:col: message". */
cuzk_err cuzk_json_parse(cuzk_json_doc **out, const char *text, size_t len, size_t max_len,
                         const char *name, cuzk_errbuf *eb);
/* Reads and parses a file (CUZK_IO when it cannot be read). */
cuzk_err cuzk_json_parse_file(cuzk_json_doc **out, const char *path, size_t max_len,
                              cuzk_errbuf *eb);
const cuzk_json *cuzk_json_root(const cuzk_json_doc *d);
void cuzk_json_free(cuzk_json_doc *d);

/* Member of an object by key, NULL if absent or if o is not an object. */
const cuzk_json *cuzk_json_get(const cuzk_json *o, const char *key);
/* Element i of an array, NULL if out of range or not an array. */
const cuzk_json *cuzk_json_at(const cuzk_json *a, size_t i);

/* Growable output buffer for writers. */
typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} cuzk_strbuf;

void cuzk_sb_init(cuzk_strbuf *sb);
void cuzk_sb_free(cuzk_strbuf *sb);
void cuzk_sb_puts(cuzk_strbuf *sb, const char *s);
void cuzk_sb_printf(cuzk_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal with escapes. */
void cuzk_sb_json_string(cuzk_strbuf *sb, const char *s);
/* Writes the buffer to path: a regular file or a missing path atomically (temp file + rename);
 * a device, FIFO or symlink in place (a link's target receives the text; the node itself is
 * never replaced); a directory is refused. CUZK_IO on failure (ENOSPC from /dev/full
 * included), CUZK_NO_MEMORY if the buffer ran out of memory while being built. */
cuzk_err cuzk_sb_write_file(const cuzk_strbuf *sb, const char *path, cuzk_errbuf *eb);

#endif
