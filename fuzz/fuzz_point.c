/* libFuzzer target for the point decoders (src/ec/encode.h): any input must give a result
 * code, never a crash or an out-of-bounds read, and whatever decodes must re-encode to an
 * input that decodes to the same point. Byte 0 picks the decoder; the rest is its input (for
 * JSON, NUL-separated strings). Built and run by scripts/fuzz-smoke.sh (target point; seeds
 * in fuzz/corpus/point/, made by fuzz/point-seeds.py). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ec/encode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIN(G, BYTES)                                                                     \
    do {                                                                                  \
        G##_affine p, q;                                                                  \
        uint8_t re[BYTES];                                                                \
        if (size < BYTES)                                                                 \
            return 0;                                                                     \
        if (G##_from_snarkjs(&p, data, chk, &eb) == CUZK_OK) {                            \
            G##_to_snarkjs(re, &p);                                                       \
            if (memcmp(re, data, BYTES) || G##_from_snarkjs(&q, re, chk, &eb) ||          \
                !G##_affine_eq(&p, &q))                                                   \
                __builtin_trap();                                                         \
        }                                                                                 \
    } while (0)

#define JSON(G, NS)                                                                       \
    do {                                                                                  \
        char buf[4096], dec[NS][CUZK_EC_DEC_MAX];                                         \
        const char *s[NS];                                                                \
        G##_affine p, q;                                                                  \
        if (size >= sizeof buf)                                                           \
            return 0;                                                                     \
        memcpy(buf, data, size);                                                          \
        buf[size] = 0;                                                                    \
        size_t off = 0;                                                                   \
        for (int i = 0; i < NS; i++) {                                                    \
            s[i] = buf + (off < size ? off : size);                                       \
            off += strlen(s[i]) + 1;                                                      \
        }                                                                                 \
        if (G##_from_json_dec(&p, s, chk, &eb) == CUZK_OK) {                              \
            G##_to_json_dec(dec, &p);                                                     \
            for (int i = 0; i < NS; i++)                                                  \
                s[i] = dec[i];                                                            \
            if (G##_from_json_dec(&q, s, chk, &eb) || !G##_affine_eq(&p, &q))             \
                __builtin_trap();                                                         \
        }                                                                                 \
    } while (0)

#define ZC(G, CB)                                                                         \
    do {                                                                                  \
        G##_affine p, q;                                                                  \
        uint8_t c[CB], u[2 * CB];                                                         \
        if (G##_from_zcash(&p, data, size, chk, &eb) == CUZK_OK) {                        \
            /* CHECK_RANGE accepts an uncompressed (x, y) off the curve, which has no       \
             * compressed form (its x may have no y at all); every other pair has both. */   \
            const int on = G##_affine_is_inf(&p) || G##_affine_is_on_curve(&p);           \
            if (!on && (chk != CUZK_EC_CHECK_RANGE || size == CB))                        \
                __builtin_trap();                                                         \
            G##_to_compressed(c, &p);                                                     \
            G##_to_uncompressed(u, &p);                                                   \
            if ((on && (G##_from_compressed(&q, c, CB, chk, &eb) ||                       \
                        !G##_affine_eq(&p, &q))) ||                                       \
                G##_from_uncompressed(&q, u, 2 * CB, chk, &eb) || !G##_affine_eq(&p, &q))  \
                __builtin_trap();                                                         \
            if (memcmp(size == CB ? c : u, data, size))                                   \
                __builtin_trap(); /* canonical: one encoding per point */                 \
        }                                                                                 \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cuzk_errbuf eb;
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    cuzk__ec_check chk = (cuzk__ec_check)((sel >> 4) % 3);
    data++;
    size--;
    switch (sel & 15) {
    case 0: BIN(bn254_g1, BN254_G1_SNARKJS_BYTES); break;
    case 1: BIN(bn254_g2, BN254_G2_SNARKJS_BYTES); break;
    case 2: BIN(bls12_381_g1, BLS12_381_G1_SNARKJS_BYTES); break;
    case 3: BIN(bls12_381_g2, BLS12_381_G2_SNARKJS_BYTES); break;
    case 4: JSON(bn254_g1, 3); break;
    case 5: JSON(bn254_g2, 6); break;
    case 6: JSON(bls12_381_g1, 3); break;
    case 7: JSON(bls12_381_g2, 6); break;
    case 8: ZC(bls12_381_g1, 48); break;
    case 9: ZC(bls12_381_g2, 96); break;
    default: break;
    }
    return 0;
}
