/* Helpers shared by the tests/io tests (header-only; included once per test binary):
 * reading fixtures, hex decoding, and taking a binfile apart and putting it back together so
 * a test can drop, duplicate, reorder or resize sections of a real snarkjs file. */
#ifndef CUZK_IO_TESTLIB_H
#define CUZK_IO_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/io.h"
#include "testutil.h"

typedef struct {
    uint8_t *p;
    size_t n;
} tb_buf;

/* Reads tests/fixtures/REL; on failure records a failed check and returns an empty buffer. */
static tb_buf tb_fixture(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "tests/fixtures/%s", rel);
    tb_buf b = {0, 0};
    b.p = (uint8_t *)tu_read_file(tu_src_path(path), &b.n);
    CHECK_MSG(b.p != NULL, "cannot read fixture %s (run scripts/make-fixtures.sh)", path);
    if (!b.p)
        b.n = 0;
    return b;
}

static const char *tb_fixture_path(const char *rel)
{
    static char path[4096];
    char r[1024];
    snprintf(r, sizeof r, "tests/fixtures/%s", rel);
    snprintf(path, sizeof path, "%s", tu_src_path(r));
    return path;
}

static int tb_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes a hex string into out (at most cap bytes); returns the byte count or -1. */
static long tb_unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = tb_hexval(s[2 * i]), lo = tb_hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

/* ---------------------------------------------------------------- binfile surgery */

#define TB_MAX_SECTIONS 32

typedef struct {
    char magic[4];
    uint32_t version;
    int n;
    uint32_t id[TB_MAX_SECTIONS];
    uint8_t *data[TB_MAX_SECTIONS];
    uint64_t size[TB_MAX_SECTIONS];
} tb_binfile;

static void tb_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void tb_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Splits a well-formed file (trusted: our own fixtures) into sections, copying each. */
static int tb_split(const tb_buf *b, tb_binfile *bf)
{
    memset(bf, 0, sizeof *bf);
    if (b->n < 12)
        return -1;
    memcpy(bf->magic, b->p, 4);
    bf->version = cuzk_le32(b->p + 4);
    uint32_t n = cuzk_le32(b->p + 8);
    size_t pos = 12;
    for (uint32_t i = 0; i < n && i < TB_MAX_SECTIONS; i++) {
        bf->id[i] = cuzk_le32(b->p + pos);
        bf->size[i] = cuzk_le64(b->p + pos + 4);
        pos += 12;
        bf->data[i] = malloc(bf->size[i] + 1);
        memcpy(bf->data[i], b->p + pos, bf->size[i]);
        pos += bf->size[i];
        bf->n++;
    }
    return 0;
}

static void tb_free(tb_binfile *bf)
{
    for (int i = 0; i < bf->n; i++)
        free(bf->data[i]);
    memset(bf, 0, sizeof *bf);
}

static void tb_copy(tb_binfile *dst, const tb_binfile *src)
{
    *dst = *src;
    for (int i = 0; i < src->n; i++) {
        dst->data[i] = malloc(src->size[i] + 1);
        memcpy(dst->data[i], src->data[i], src->size[i]);
    }
}

/* Index of the first section with this id, or -1. */
static int tb_find(const tb_binfile *bf, uint32_t id)
{
    for (int i = 0; i < bf->n; i++)
        if (bf->id[i] == id)
            return i;
    return -1;
}

static void tb_remove(tb_binfile *bf, int i)
{
    free(bf->data[i]);
    for (int j = i; j + 1 < bf->n; j++) {
        bf->id[j] = bf->id[j + 1];
        bf->data[j] = bf->data[j + 1];
        bf->size[j] = bf->size[j + 1];
    }
    bf->n--;
}

/* Appends a copy of section i (a duplicate id). */
static void tb_dup(tb_binfile *bf, int i)
{
    int k = bf->n++;
    bf->id[k] = bf->id[i];
    bf->size[k] = bf->size[i];
    bf->data[k] = malloc(bf->size[i] + 1);
    memcpy(bf->data[k], bf->data[i], bf->size[i]);
}

/* Changes the data length of section i to new_size (new bytes are filled with `fill`). */
static void tb_resize(tb_binfile *bf, int i, uint64_t new_size, uint8_t fill)
{
    /* Test files are small; the bound also tells the compiler the memset below is sane. */
    if (new_size > ((uint64_t)1 << 30) || bf->size[i] > ((uint64_t)1 << 30))
        abort();
    bf->data[i] = realloc(bf->data[i], new_size + 1);
    if (!bf->data[i])
        abort();
    if (new_size > bf->size[i])
        memset(bf->data[i] + bf->size[i], fill, new_size - bf->size[i]);
    bf->size[i] = new_size;
}

/* Serialises into an exactly-sized heap buffer (so ASan sees any over-read). */
static tb_buf tb_join(const tb_binfile *bf)
{
    size_t n = 12;
    for (int i = 0; i < bf->n; i++)
        n += 12 + bf->size[i];
    tb_buf b = {malloc(n), n};
    memcpy(b.p, bf->magic, 4);
    tb_put32(b.p + 4, bf->version);
    tb_put32(b.p + 8, (uint32_t)bf->n);
    size_t pos = 12;
    for (int i = 0; i < bf->n; i++) {
        tb_put32(b.p + pos, bf->id[i]);
        tb_put64(b.p + pos + 4, bf->size[i]);
        pos += 12;
        memcpy(b.p + pos, bf->data[i], bf->size[i]);
        pos += bf->size[i];
    }
    return b;
}

#endif
