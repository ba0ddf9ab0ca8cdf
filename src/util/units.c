/* Size ("50GiB") and duration ("500ms") strings, as config values and command-line flags
 * carry them. */
#include "cuzk/units.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses digits with single underscores between them into *out; returns the end or NULL on
 * overflow / malformed digits. */
static const char *parse_u64(const char *s, uint64_t *out, bool *overflow)
{
    uint64_t acc = 0;
    const char *p = s;
    *overflow = false;
    if (!(*p >= '0' && *p <= '9'))
        return NULL;
    while ((*p >= '0' && *p <= '9') || (*p == '_' && p[1] >= '0' && p[1] <= '9' && p > s)) {
        if (*p != '_') {
            unsigned d = (unsigned)(*p - '0');
            if (acc > (UINT64_MAX - d) / 10)
                *overflow = true;
            else
                acc = acc * 10 + d;
        }
        p++;
    }
    *out = acc;
    return p;
}

cuzk_err cuzk_parse_size(const char *s, uint64_t *out, cuzk_errbuf *eb)
{
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {
        {"B", 1},
        {"KiB", 1ull << 10},
        {"MiB", 1ull << 20},
        {"GiB", 1ull << 30},
        {"TiB", 1ull << 40},
        {"PiB", 1ull << 50},
        {"KB", 1000ull},
        {"kB", 1000ull},
        {"MB", 1000000ull},
        {"GB", 1000000000ull},
        {"TB", 1000000000000ull},
        {"PB", 1000000000000000ull},
    };
    if (!s)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "missing size");
    const char *p = s;
    while (*p == ' ')
        p++;
    uint64_t n;
    bool ovf;
    const char *q = parse_u64(p, &n, &ovf);
    if (!q)
        return cuzk_errf(eb, CUZK_BAD_CONFIG,
                         "invalid size '%s': expected a whole number "
                         "followed by an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
                         s);
    if (*q == '.')
        return cuzk_errf(eb, CUZK_BAD_CONFIG,
                         "invalid size '%s': use a whole number with a "
                         "smaller unit (e.g. 512MiB instead of 0.5GiB)",
                         s);
    if (ovf)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "size '%s' is too large (more than 2^64-1 bytes)", s);
    while (*q == ' ')
        q++;
    const char *u = q;
    size_t ulen = 0;
    while (u[ulen] && u[ulen] != ' ')
        ulen++;
    const char *tail = u + ulen;
    while (*tail == ' ')
        tail++;
    if (*tail)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "invalid size '%s': unexpected text after the unit",
                         s);
    uint64_t mul = 0;
    if (ulen == 0) {
        mul = 1;
    } else {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strlen(units[i].unit) == ulen && memcmp(units[i].unit, u, ulen) == 0)
                mul = units[i].mul;
    }
    if (!mul)
        return cuzk_errf(eb, CUZK_BAD_CONFIG,
                         "invalid size '%s': unknown unit '%.*s' (use B, "
                         "KiB, MiB, GiB, TiB, PiB, KB, MB, GB, TB or PB)",
                         s, (int)ulen, u);
    if (n > UINT64_MAX / mul)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "size '%s' is too large (more than 2^64-1 bytes)", s);
    *out = n * mul;
    return CUZK_OK;
}

cuzk_err cuzk_parse_duration(const char *s, uint64_t *out_ns, cuzk_errbuf *eb)
{
    /* Longest unit names first so "ms" is not read as "m" followed by garbage. */
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"ms", 1000000},
        {"s", 1000000000ull},
        {"m", 60000000000ull},
        {"h", 3600000000000ull},
        {"d", 86400000000000ull},
    };
    if (!s)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "missing duration");
    const char *p = s;
    while (*p == ' ')
        p++;
    if (p[0] == '0' && p[1 + strspn(p + 1, " ")] == 0) {
        *out_ns = 0;
        return CUZK_OK;
    }
    uint64_t total = 0;
    int terms = 0;
    while (*p) {
        uint64_t whole, frac = 0, frac_div = 1;
        bool ovf;
        const char *q = parse_u64(p, &whole, &ovf);
        if (!q)
            return cuzk_errf(eb, CUZK_BAD_CONFIG,
                             "invalid duration '%s': expected a number and "
                             "a unit (ns, us, ms, s, m, h, d), e.g. \"30s\" or \"1h30m\"",
                             s);
        if (*q == '.') {
            q++;
            if (!(*q >= '0' && *q <= '9'))
                return cuzk_errf(eb, CUZK_BAD_CONFIG,
                                 "invalid duration '%s': digits expected "
                                 "after '.'",
                                 s);
            /* Nanoseconds need at most 9 + 5 fractional digits (1 d = 86400e9 ns); further
             * digits are below 1 ns and dropped. */
            for (int k = 0; *q >= '0' && *q <= '9'; q++, k++) {
                if (k < 15) {
                    frac = frac * 10 + (uint64_t)(*q - '0');
                    frac_div *= 10;
                }
            }
        }
        if (ovf)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "duration '%s' is too long", s);
        uint64_t mul = 0;
        size_t ulen = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t l = strlen(units[i].unit);
            if (strncmp(q, units[i].unit, l) == 0 && !(q[l] >= 'a' && q[l] <= 'z')) {
                mul = units[i].ns;
                ulen = l;
                break;
            }
        }
        if (!mul)
            return cuzk_errf(eb, CUZK_BAD_CONFIG,
                             "invalid duration '%s': %s (use ns, us, ms, "
                             "s, m, h or d, e.g. \"30s\")",
                             s, *q ? "unknown unit" : "missing unit");
        /* frac / frac_div * mul, exact to 1 ns: mul <= 86400e9 < 2^47, frac < 10^15 < 2^50,
         * so split to stay in 128 bits. */
        unsigned __int128 part =
            (unsigned __int128)whole * mul + (unsigned __int128)frac * mul / frac_div;
        if (part > UINT64_MAX || total > UINT64_MAX - (uint64_t)part)
            return cuzk_errf(eb, CUZK_BAD_CONFIG,
                             "duration '%s' is too long (more than 2^64-1 "
                             "ns)",
                             s);
        total += (uint64_t)part;
        terms++;
        p = q + ulen;
        while (*p == ' ')
            p++;
    }
    if (!terms)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "invalid duration '%s': empty", s);
    *out_ns = total;
    return CUZK_OK;
}

cuzk_err cuzk_parse_count(const char *s, uint64_t *out, cuzk_errbuf *eb)
{
    char *end;
    errno = 0;
    if (s[0] == '2' && s[1] == '^' && s[2] >= '0' && s[2] <= '9') {
        unsigned long e = strtoul(s + 2, &end, 10);
        if (errno || *end || e > 63)
            goto bad;
        *out = 1ull << e;
        return CUZK_OK;
    }
    if (!(*s >= '0' && *s <= '9'))
        goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        goto bad;
    unsigned sh = 0;
    if (*end == 'K' || *end == 'k')
        sh = 10, end++;
    else if (*end == 'M' || *end == 'm')
        sh = 20, end++;
    else if (*end == 'G' || *end == 'g')
        sh = 30, end++;
    else if (*end == 'T' || *end == 't')
        sh = 40, end++;
    if (*end == 'i' && sh)
        end++;
    if ((*end == 'B' || *end == 'b') && sh)
        end++;
    if (*end || (sh && v > (UINT64_MAX >> sh)))
        goto bad;
    *out = (uint64_t)v << sh;
    return CUZK_OK;
bad:
    return cuzk_errf(eb, CUZK_BAD_CONFIG, "'%s' is not a count (1048576, \"2^20\" or 1M)", s);
}
