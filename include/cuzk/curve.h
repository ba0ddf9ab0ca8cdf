/* The two pairing curves cuzk proves on, as the file formats name them. */
#ifndef CUZK_CURVE_H
#define CUZK_CURVE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CUZK_CURVE_BN254 = 0,     /* circom/snarkjs "bn128" (alt_bn128) */
    CUZK_CURVE_BLS12_381 = 1, /* circom/snarkjs "bls12381" */
} cuzk_curve;

#define CUZK_CURVE_COUNT 2

/* The name snarkjs writes in JSON ("bn128" / "bls12381"); "?" for an invalid value. */
const char *cuzk_curve_name(cuzk_curve c);

/* Parses the names snarkjs accepts on its command line (case-insensitive): bn128, bn254,
 * altbn128, alt_bn128 and bls12381, bls12-381, bls12_381. Returns 0 on success, -1 if unknown. */
int cuzk_curve_from_name(const char *name, cuzk_curve *out);

/* Byte sizes of one base-field (Fq) and one scalar-field (Fr) element in the files:
 * 32/32 for BN254, 48/32 for BLS12-381. */
uint32_t cuzk_curve_n8q(cuzk_curve c);
uint32_t cuzk_curve_n8r(cuzk_curve c);

/* Writes the modulus q (base field) or r (scalar field) as n8q / n8r little-endian bytes,
 * the encoding the file headers use. */
void cuzk_curve_q_le(cuzk_curve c, uint8_t *out);
void cuzk_curve_r_le(cuzk_curve c, uint8_t *out);

/* Identifies the curve from a modulus as stored in a header (n8 little-endian bytes).
 * Returns 0 and sets *out when it is the q (resp. r) of a known curve with the matching
 * byte size, -1 otherwise. */
int cuzk_curve_from_q(const uint8_t *q_le, uint32_t n8, cuzk_curve *out);
int cuzk_curve_from_r(const uint8_t *r_le, uint32_t n8, cuzk_curve *out);

/* Compares an n8-byte little-endian integer with q (resp. r) of curve c (n8 must be the
 * curve's n8q resp. n8r): returns 1 when the value is strictly below the modulus. */
int cuzk_curve_lt_q(cuzk_curve c, const uint8_t *v_le);
int cuzk_curve_lt_r(cuzk_curve c, const uint8_t *v_le);

#endif
