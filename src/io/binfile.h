/* Internal: mapping a file and scanning the iden3 binfile section table (src/io only). */
#ifndef CUZK_IO_BINFILE_H
#define CUZK_IO_BINFILE_H

#include <stdint.h>

#include "cuzk/io.h"

/* Where section `id` lies in the file; present == 0 when the file has none. */
typedef struct {
    uint64_t off, size;
    int present;
} cuzk__section;

/* Opens and maps `path` read-only into *f (an empty file maps to data = NULL, len = 0). */
cuzk_err cuzk__file_map(cuzk_file *f, const char *path, cuzk_errbuf *eb);
/* Wraps a caller's buffer (not owned). */
void cuzk__file_borrow(cuzk_file *f, const void *data, size_t len, const char *name);
void cuzk__file_unmap(cuzk_file *f);

/* Checks magic and version (min_ver..max_ver), then walks the nSections section headers,
 * each of which must lie inside the file with its data. Fills secs[1..max_id] (secs has
 * max_id + 1 entries; other ids are ignored, as snarkjs does); a duplicated id in 1..max_id
 * is CUZK_BAD_FORMAT. names[id] names sections in messages. */
cuzk_err cuzk__binfile_scan(const cuzk_file *f, const char magic[4], uint32_t min_ver,
                            uint32_t max_ver, cuzk__section *secs, uint32_t max_id,
                            const char *const *names, uint32_t *version, cuzk_errbuf *eb);

/* CUZK_BAD_FORMAT "NAME: missing section ID (what)" unless present. */
cuzk_err cuzk__require(const cuzk_file *f, const cuzk__section *secs, uint32_t id,
                       const char *const *names, cuzk_errbuf *eb);

/* Overflow-checked a * b and a + b; return 0 on overflow. */
static inline int cuzk__mul64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline int cuzk__add64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

#endif
