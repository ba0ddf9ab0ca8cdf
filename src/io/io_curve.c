/* Curve identification for the file formats: names as snarkjs writes them and the moduli as
 * the headers store them (little-endian). The moduli come from the generated field constants
 * so there is one source of truth. */
#include <string.h>
#include <strings.h>

#include "cuzk/curve.h"
#include "ff/ff_params.h"

typedef struct {
    const char *name;
    uint32_t n8q, n8r;
    const uint64_t *q, *r; /* little-endian 64-bit limbs */
} curve_info;

static const uint64_t bn254_q[] = BN254_FP_P, bn254_r[] = BN254_FR_P;
static const uint64_t bls_q[] = BLS12_381_FP_P, bls_r[] = BLS12_381_FR_P;

static const curve_info curves[CUZK_CURVE_COUNT] = {
    [CUZK_CURVE_BN254] = {"bn128", 32, 32, bn254_q, bn254_r},
    [CUZK_CURVE_BLS12_381] = {"bls12381", 48, 32, bls_q, bls_r},
};

static int valid(cuzk_curve c)
{
    return (unsigned)c < CUZK_CURVE_COUNT;
}

const char *cuzk_curve_name(cuzk_curve c)
{
    return valid(c) ? curves[c].name : "?";
}

int cuzk_curve_from_name(const char *name, cuzk_curve *out)
{
    static const struct {
        const char *s;
        cuzk_curve c;
    } names[] = {
        {"bn128", CUZK_CURVE_BN254},        {"bn254", CUZK_CURVE_BN254},
        {"altbn128", CUZK_CURVE_BN254},     {"alt_bn128", CUZK_CURVE_BN254},
        {"bls12381", CUZK_CURVE_BLS12_381}, {"bls12-381", CUZK_CURVE_BLS12_381},
        {"bls12_381", CUZK_CURVE_BLS12_381},
    };
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(name, names[i].s) == 0) {
            *out = names[i].c;
            return 0;
        }
    }
    return -1;
}

uint32_t cuzk_curve_n8q(cuzk_curve c)
{
    return valid(c) ? curves[c].n8q : 0;
}

uint32_t cuzk_curve_n8r(cuzk_curve c)
{
    return valid(c) ? curves[c].n8r : 0;
}

static uint8_t limb_byte(const uint64_t *l, uint32_t k)
{
    return (uint8_t)(l[k / 8] >> (8 * (k % 8)));
}

static void to_le(const uint64_t *l, uint32_t n8, uint8_t *out)
{
    for (uint32_t k = 0; k < n8; k++)
        out[k] = limb_byte(l, k);
}

void cuzk_curve_q_le(cuzk_curve c, uint8_t *out)
{
    if (valid(c))
        to_le(curves[c].q, curves[c].n8q, out);
}

void cuzk_curve_r_le(cuzk_curve c, uint8_t *out)
{
    if (valid(c))
        to_le(curves[c].r, curves[c].n8r, out);
}

/* Compares n8 little-endian bytes with an n8-byte modulus: <0, 0, >0. */
static int cmp_le(const uint8_t *v, const uint64_t *l, uint32_t n8)
{
    for (uint32_t k = n8; k-- > 0;) {
        uint8_t b = limb_byte(l, k);
        if (v[k] != b)
            return v[k] < b ? -1 : 1;
    }
    return 0;
}

int cuzk_curve_from_q(const uint8_t *q_le, uint32_t n8, cuzk_curve *out)
{
    for (int c = 0; c < CUZK_CURVE_COUNT; c++) {
        if (curves[c].n8q == n8 && cmp_le(q_le, curves[c].q, n8) == 0) {
            *out = (cuzk_curve)c;
            return 0;
        }
    }
    return -1;
}

int cuzk_curve_from_r(const uint8_t *r_le, uint32_t n8, cuzk_curve *out)
{
    for (int c = 0; c < CUZK_CURVE_COUNT; c++) {
        if (curves[c].n8r == n8 && cmp_le(r_le, curves[c].r, n8) == 0) {
            *out = (cuzk_curve)c;
            return 0;
        }
    }
    return -1;
}

int cuzk_curve_lt_q(cuzk_curve c, const uint8_t *v_le)
{
    return valid(c) && cmp_le(v_le, curves[c].q, curves[c].n8q) < 0;
}

int cuzk_curve_lt_r(cuzk_curve c, const uint8_t *v_le)
{
    return valid(c) && cmp_le(v_le, curves[c].r, curves[c].n8r) < 0;
}
