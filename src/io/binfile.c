/* iden3 binfile container: magic, u32 version, u32 nSections, then {u32 id, u64 size, data}. */
#include "io/binfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void set_name(cuzk_file *f, const char *name)
{
    snprintf(f->name, sizeof f->name, "%s", name ? name : "(buffer)");
}

cuzk_err cuzk__file_map(cuzk_file *f, const char *path, cuzk_errbuf *eb)
{
    memset(f, 0, sizeof *f);
    set_name(f, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cuzk_errf(eb, CUZK_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cuzk_errf(eb, CUZK_IO, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return CUZK_OK; /* the parser reports the truncation with the usual message */
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return cuzk_errf(eb, CUZK_IO, "%s: too large to map", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file referenced */
    if (p == MAP_FAILED)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot map %lld bytes: %s", path,
                         (long long)st.st_size, strerror(e));
    f->map_base = p;
    f->map_len = (size_t)st.st_size;
    f->data = p;
    f->len = (uint64_t)st.st_size;
    return CUZK_OK;
}

void cuzk__file_borrow(cuzk_file *f, const void *data, size_t len, const char *name)
{
    memset(f, 0, sizeof *f);
    set_name(f, name);
    f->data = data;
    f->len = data ? len : 0;
}

void cuzk__file_unmap(cuzk_file *f)
{
    if (f->map_base)
        munmap(f->map_base, f->map_len);
    memset(f, 0, sizeof *f);
}

cuzk_err cuzk__binfile_scan(const cuzk_file *f, const char magic[4], uint32_t min_ver,
                            uint32_t max_ver, cuzk__section *secs, uint32_t max_id,
                            const char *const *names, uint32_t *version, cuzk_errbuf *eb)
{
    const uint8_t *d = f->data;
    uint64_t len = f->len;
    memset(secs, 0, (max_id + 1) * sizeof *secs);
    /* A proper prefix of a valid file always reports TRUNCATED, whatever its length. */
    uint64_t m = len < 4 ? len : 4;
    if (memcmp(d ? (const void *)d : "", magic, m) != 0)
        return cuzk_errf(eb, CUZK_BAD_FORMAT,
                         "%s: not a .%.4s file (the first bytes are not \"%.4s\")", f->name,
                         magic, magic);
    if (len < 12)
        return cuzk_errf(eb, CUZK_TRUNCATED, "%s: %llu bytes, shorter than the 12-byte header",
                         f->name, (unsigned long long)len);
    uint32_t ver = cuzk_le32(d + 4);
    if (ver < min_ver || ver > max_ver)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: .%.4s version %u, supported %u..%u",
                         f->name, magic, ver, min_ver, max_ver);
    if (version)
        *version = ver;
    uint32_t n = cuzk_le32(d + 8);
    uint64_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
        if (len - pos < 12)
            return cuzk_errf(eb, CUZK_TRUNCATED,
                             "%s: section header %u of %u at offset %llu is past the end of "
                             "the file (%llu bytes)",
                             f->name, i + 1, n, (unsigned long long)pos,
                             (unsigned long long)len);
        uint32_t id = cuzk_le32(d + pos);
        uint64_t size = cuzk_le64(d + pos + 4);
        pos += 12;
        if (size > len - pos)
            return cuzk_errf(eb, CUZK_TRUNCATED,
                             "%s: section %u (id %u) claims %llu bytes at offset %llu but the "
                             "file has only %llu bytes left",
                             f->name, i + 1, id, (unsigned long long)size,
                             (unsigned long long)pos, (unsigned long long)(len - pos));
        if (id >= 1 && id <= max_id) {
            if (secs[id].present)
                return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: section %u (%s) appears twice",
                                 f->name, id, names[id]);
            secs[id].present = 1;
            secs[id].off = pos;
            secs[id].size = size;
        }
        pos += size;
    }
    return CUZK_OK;
}

cuzk_err cuzk__require(const cuzk_file *f, const cuzk__section *secs, uint32_t id,
                       const char *const *names, cuzk_errbuf *eb)
{
    if (!secs[id].present)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: missing section %u (%s)", f->name, id,
                         names[id]);
    return CUZK_OK;
}

uint32_t cuzk_file_sections(const cuzk_file *f, cuzk_section_info *out, uint32_t max)
{
    if (f->len < 12)
        return 0;
    uint32_t n = cuzk_le32(f->data + 8), i;
    uint64_t pos = 12;
    /* The readers validated the table; stay bounded anyway in case this is called on a file
     * that failed to parse. */
    for (i = 0; i < n && f->len - pos >= 12; i++) {
        uint64_t size = cuzk_le64(f->data + pos + 4);
        if (i < max) {
            out[i].id = cuzk_le32(f->data + pos);
            out[i].offset = pos + 12;
            out[i].size = size;
        }
        pos += 12;
        if (size > f->len - pos)
            return i + 1;
        pos += size;
    }
    return i;
}
