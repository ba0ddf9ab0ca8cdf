/* A fast 64-bit hash of a byte string (internal). */
#ifndef CUZK_UTIL_HASH_H
#define CUZK_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Chained through h: four independent multiply-rotate lanes over 32-byte blocks (several GB/s
 * on one core), then the tail bytes and the length. For integrity against accidents
 * (truncation, bit rot, a reused request id with other witnesses), not against an adversary.
 * The key cache's hashes are this function: changing it invalidates every cache file. */
uint64_t cuzk__hash64(uint64_t h, const void *buf, size_t len);

#endif
