/* SHA-256 (FIPS 180-4): deterministic seeds (setup, gen-circuit) and content addresses
 * (the witness program cache). */
#ifndef CUZK_UTIL_SHA256_H
#define CUZK_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

void cuzk_sha256(uint8_t out[32], const void *data, size_t len);

#endif
