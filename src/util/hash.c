#include "util/hash.h"

#include <string.h>

static inline uint64_t hash_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t cuzk__hash64(uint64_t h, const void *buf, size_t len)
{
    const uint64_t K1 = 0x9e3779b185ebca87ull, K2 = 0xc2b2ae3d27d4eb4full;
    const uint8_t *p = buf;
    uint64_t v[4] = {h + K1, h ^ K2, h - K1, hash_rotl(h, 17) + K2};
    size_t nb = len / 32;
    for (size_t b = 0; b < nb; b++, p += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, p + 8 * l, 8);
            v[l] = hash_rotl(v[l] + w * K2, 31) * K1;
        }
    uint64_t r = hash_rotl(v[0], 1) + hash_rotl(v[1], 7) + hash_rotl(v[2], 12) +
                 hash_rotl(v[3], 18);
    for (size_t i = 0; i < len % 32; i++)
        r = (r ^ p[i]) * 0x100000001b3ull;
    r ^= (uint64_t)len;
    r ^= r >> 33;
    r *= K2;
    r ^= r >> 29;
    return r;
}
