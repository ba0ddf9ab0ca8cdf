/*
 * Point encodings for G1 and G2 of BN254 and BLS12-381, with validation on decode.
 *
 * snarkjs binary (.zkey, .ptau): affine x || y, G2 coordinates as c0 || c1, each base-field
 * element n8q bytes little-endian in Montgomery form (exactly our in-memory limbs); the point
 * at infinity is all zero bytes (our affine (0, 0)).
 *
 * snarkjs JSON (proof.json, verification_key.json): decimal strings of plain affine
 * coordinates plus a Jacobian z, as ffjavascript's G.toObject writes them:
 *   G1 = [x, y, "1"], infinity ["0", "1", "0"];
 *   G2 = [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]], infinity [["0","0"], ["1","0"], ["0","0"]].
 * Here a point is the flat array of its strings (3 for G1, 6 for G2, in that order); JSON
 * syntax is parsed elsewhere. On input z = 0 is infinity (x and y must still be canonical),
 * z = 1 affine, any other z Jacobian (x/z^2, y/z^3), as ffjavascript's fromObject reads them.
 *
 * ZCash / Filecoin (BLS12-381 only; zkcrypto's pairing crate, "bls12_381#serialization"):
 * big-endian, Fp2 as c1 then c0, flags in the top three bits of byte 0: 0x80 compressed,
 * 0x40 infinity, 0x20 y is the lexicographically larger root (compressed only).
 * G1 48 / 96 bytes, G2 96 / 192 bytes (compressed / uncompressed).
 *
 * Errors, distinct per cause: CUZK_BAD_ENCODING (flags, syntax of a decimal, wrong length),
 * CUZK_TRUNCATED (input shorter than the encoding), CUZK_NON_CANONICAL (a coordinate >= p),
 * CUZK_NOT_ON_CURVE, CUZK_NOT_IN_SUBGROUP. Decoders write *p only on success.
 */
#ifndef CUZK_EC_ENCODE_H
#define CUZK_EC_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "ec/ec.h"

/* How much a decoder validates. Every level checks that coordinates are canonical (< p). */
typedef enum {
    CUZK_EC_CHECK_RANGE = 0,    /* canonical only: data we wrote ourselves */
    CUZK_EC_CHECK_CURVE = 1,    /* + on the curve: the fast path for large SRS arrays */
    CUZK_EC_CHECK_SUBGROUP = 2, /* + in the prime-order subgroup: untrusted points */
} cuzk__ec_check;

#define BN254_G1_SNARKJS_BYTES 64
#define BN254_G2_SNARKJS_BYTES 128
#define BLS12_381_G1_SNARKJS_BYTES 96
#define BLS12_381_G2_SNARKJS_BYTES 192
#define BN254_G1_JSON_STRS 3
#define BN254_G2_JSON_STRS 6
#define BLS12_381_G1_JSON_STRS 3
#define BLS12_381_G2_JSON_STRS 6
/* Room for one decimal coordinate of either curve with its NUL (p < 10^115). */
#define CUZK_EC_DEC_MAX 120

#define BLS12_381_G1_COMPRESSED_BYTES 48
#define BLS12_381_G1_UNCOMPRESSED_BYTES 96
#define BLS12_381_G2_COMPRESSED_BYTES 96
#define BLS12_381_G2_UNCOMPRESSED_BYTES 192

#define CUZK__EC_ENCODE_DECL(G)                                                           \
    /* snarkjs binary: out / in hold G##_SNARKJS_BYTES bytes (n points: n times that). */  \
    void G##_to_snarkjs(uint8_t *out, const G##_affine *p);                               \
    cuzk_err G##_from_snarkjs(G##_affine *p, const uint8_t *in, cuzk__ec_check chk,       \
                              cuzk_errbuf *eb);                                           \
    cuzk_err G##_from_snarkjs_n(G##_affine *p, const uint8_t *in, size_t n,               \
                                cuzk__ec_check chk, cuzk_errbuf *eb);                     \
    /* snarkjs JSON: out[i] receives the i-th NUL-terminated decimal string. */            \
    void G##_to_json_dec(char (*out)[CUZK_EC_DEC_MAX], const G##_affine *p);              \
    cuzk_err G##_from_json_dec(G##_affine *p, const char *const *s, cuzk__ec_check chk,   \
                               cuzk_errbuf *eb);

CUZK__EC_ENCODE_DECL(bn254_g1)
CUZK__EC_ENCODE_DECL(bn254_g2)
CUZK__EC_ENCODE_DECL(bls12_381_g1)
CUZK__EC_ENCODE_DECL(bls12_381_g2)

#define CUZK__EC_ZCASH_DECL(G)                                                            \
    void G##_to_compressed(uint8_t *out, const G##_affine *p);                            \
    void G##_to_uncompressed(uint8_t *out, const G##_affine *p);                          \
    /* Exactly one form, len must be its size. */                                          \
    cuzk_err G##_from_compressed(G##_affine *p, const uint8_t *in, size_t len,            \
                                 cuzk__ec_check chk, cuzk_errbuf *eb);                    \
    cuzk_err G##_from_uncompressed(G##_affine *p, const uint8_t *in, size_t len,          \
                                   cuzk__ec_check chk, cuzk_errbuf *eb);                  \
    /* Either form, chosen by the compression flag of byte 0. */                           \
    cuzk_err G##_from_zcash(G##_affine *p, const uint8_t *in, size_t len,                 \
                            cuzk__ec_check chk, cuzk_errbuf *eb);

CUZK__EC_ZCASH_DECL(bls12_381_g1)
CUZK__EC_ZCASH_DECL(bls12_381_g2)

#endif
