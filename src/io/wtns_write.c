/* .wtns writer (version 2, the layout snarkjs writes): header section then values section. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/io.h"

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

cuzk_err cuzk_wtns_write(const char *path, cuzk_curve curve, const uint8_t *values, uint64_t n,
                         cuzk_errbuf *eb)
{
    const uint32_t n8 = 32;
    if ((unsigned)curve >= CUZK_CURVE_COUNT)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: invalid curve %d", path, (int)curve);
    if (n > UINT32_MAX)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "%s: %llu values do not fit the format's u32 count", path,
                         (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        if (!cuzk_curve_lt_r(curve, values + i * n8))
            return cuzk_errf(eb, CUZK_NON_CANONICAL, "%s: value %llu is not below r", path,
                             (unsigned long long)i);
    /* magic, version 2, 2 sections; section 1 = n8, r, nWitness; section 2 = values. */
    uint8_t head[12 + 12 + 4 + 32 + 4 + 12];
    uint8_t *p = head;
    memcpy(p, "wtns", 4);
    put32(p + 4, 2);
    put32(p + 8, 2);
    p += 12;
    put32(p, 1);
    put64(p + 4, 4 + n8 + 4);
    p += 12;
    put32(p, n8);
    cuzk_curve_r_le(curve, p + 4);
    put32(p + 4 + n8, (uint32_t)n);
    p += 4 + n8 + 4;
    put32(p, 2);
    put64(p + 4, n * n8);
    FILE *f = fopen(path, "wb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head;
    if (ok && n)
        ok = fwrite(values, n8, n, f) == n;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        e = errno;
        ok = 0;
    }
    if (!ok) {
        remove(path);
        return cuzk_errf(eb, CUZK_IO, "%s: write failed: %s", path, strerror(e));
    }
    return CUZK_OK;
}
