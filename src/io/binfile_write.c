/* Streaming writer for the iden3 binfile container (see binfile.c for the layout). Section
 * sizes are not known up front, so each section header is written with size 0 and patched
 * when the section ends. */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/io.h"

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static cuzk_err fail(cuzk_binfile_writer *w, cuzk_errbuf *eb, cuzk_err e, const char *what)
{
    if (!w->err)
        w->err = cuzk_errf(eb, e, "%s: %s%s%s", w->path, what, errno ? ": " : "",
                           errno ? strerror(errno) : "");
    return w->err;
}

static cuzk_err put(cuzk_binfile_writer *w, const void *p, size_t n, cuzk_errbuf *eb)
{
    errno = 0;
    if (n && fwrite(p, 1, n, w->fp) != n)
        return fail(w, eb, CUZK_IO, "write failed");
    return CUZK_OK;
}

cuzk_err cuzk_binfile_writer_open(cuzk_binfile_writer *w, const char *path, const char magic[4],
                                  uint32_t version, uint32_t n_sections, cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->declared = n_sections;
    errno = 0;
    w->fp = fopen(path, "wb");
    if (!w->fp)
        return fail(w, eb, CUZK_IO, "cannot create");
    uint8_t h[12];
    memcpy(h, magic, 4);
    le32(h + 4, version);
    le32(h + 8, n_sections);
    return put(w, h, sizeof h, eb);
}

cuzk_err cuzk_binfile_begin_section(cuzk_binfile_writer *w, uint32_t id, cuzk_errbuf *eb)
{
    if (w->err)
        return w->err;
    errno = 0;
    if (w->in_section || w->written >= w->declared)
        return fail(w, eb, CUZK_INVALID_ARGUMENT, "section opened out of turn");
    uint8_t h[12];
    le32(h, id);
    le64(h + 4, 0);
    off_t at = ftello(w->fp);
    if (at < 0)
        return fail(w, eb, CUZK_IO, "cannot tell position");
    w->size_at = (int64_t)at + 4;
    w->in_section = 1;
    w->sec_len = 0;
    return put(w, h, sizeof h, eb);
}

cuzk_err cuzk_binfile_write(cuzk_binfile_writer *w, const void *data, size_t n, cuzk_errbuf *eb)
{
    if (w->err)
        return w->err;
    errno = 0;
    if (!w->in_section)
        return fail(w, eb, CUZK_INVALID_ARGUMENT, "data written outside a section");
    w->sec_len += n;
    return put(w, data, n, eb);
}

cuzk_err cuzk_binfile_write_u32(cuzk_binfile_writer *w, uint32_t v, cuzk_errbuf *eb)
{
    uint8_t b[4];
    le32(b, v);
    return cuzk_binfile_write(w, b, 4, eb);
}

cuzk_err cuzk_binfile_end_section(cuzk_binfile_writer *w, cuzk_errbuf *eb)
{
    if (w->err)
        return w->err;
    errno = 0;
    if (!w->in_section)
        return fail(w, eb, CUZK_INVALID_ARGUMENT, "no section to end");
    uint8_t b[8];
    le64(b, w->sec_len);
    off_t end = ftello(w->fp);
    if (end < 0 || fseeko(w->fp, (off_t)w->size_at, SEEK_SET) != 0 ||
        fwrite(b, 1, 8, w->fp) != 8 || fseeko(w->fp, end, SEEK_SET) != 0)
        return fail(w, eb, CUZK_IO, "cannot patch the section size");
    w->in_section = 0;
    w->written++;
    return CUZK_OK;
}

cuzk_err cuzk_binfile_writer_close(cuzk_binfile_writer *w, cuzk_errbuf *eb)
{
    errno = 0;
    if (!w->err && (w->in_section || w->written != w->declared))
        fail(w, eb, CUZK_INVALID_ARGUMENT, "closed with sections missing or open");
    if (w->fp) {
        errno = 0;
        if (fclose(w->fp) != 0)
            fail(w, eb, CUZK_IO, "write failed");
        w->fp = NULL;
    }
    cuzk_err e = w->err;
    if (e)
        remove(w->path);
    memset(w, 0, sizeof *w);
    return e;
}
