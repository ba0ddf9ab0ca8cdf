/* GLV scalar split (glv.h): 256-bit integer arithmetic modulo 2^256. */
#include "ec/glv.h"

#include <string.h>

const cuzk__glv_consts cuzk__glv_bn254 = {
    BN254_GLV_G1, BN254_GLV_G2, BN254_GLV_NA1, BN254_GLV_NA2, BN254_GLV_NB1, BN254_GLV_NB2,
    BN254_GLV_BITS};
const cuzk__glv_consts cuzk__glv_bls12_381 = {
    BLS12_381_GLV_G1, BLS12_381_GLV_G2, BLS12_381_GLV_NA1, BLS12_381_GLV_NA2,
    BLS12_381_GLV_NB1, BLS12_381_GLV_NB2, BLS12_381_GLV_BITS};

/* floor(a b / 2^256): the high half of the 512-bit product. */
static void mul_hi(uint64_t r[4], const uint64_t a[4], const uint64_t b[4])
{
    uint64_t t[8] = {0};
    for (int i = 0; i < 4; i++) {
        unsigned __int128 carry = 0;
        for (int j = 0; j < 4; j++) {
            unsigned __int128 w = (unsigned __int128)a[i] * b[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)w;
            carry = w >> 64;
        }
        t[i + 4] = (uint64_t)carry;
    }
    memcpy(r, t + 4, 32);
}

/* acc += a b modulo 2^256. */
static void mul_lo_add(uint64_t acc[4], const uint64_t a[4], const uint64_t b[4])
{
    uint64_t t[4] = {0};
    for (int i = 0; i < 4; i++) {
        unsigned __int128 carry = 0;
        for (int j = 0; i + j < 4; j++) {
            unsigned __int128 w = (unsigned __int128)a[i] * b[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)w;
            carry = w >> 64;
        }
    }
    unsigned __int128 carry = 0;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 w = (unsigned __int128)acc[i] + t[i] + carry;
        acc[i] = (uint64_t)w;
        carry = w >> 64;
    }
}

/* Two's complement value v -> |v| and its sign. */
static void abs_sign(uint64_t v[4], int *neg)
{
    *neg = (int)(v[3] >> 63);
    if (!*neg)
        return;
    unsigned __int128 carry = 1;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 w = (unsigned __int128)(~v[i]) + carry;
        v[i] = (uint64_t)w;
        carry = w >> 64;
    }
}

void cuzk__glv_split(const cuzk__glv_consts *gc, const uint64_t k[4], uint64_t k1[4], int *neg1,
                     uint64_t k2[4], int *neg2)
{
    uint64_t c1[4], c2[4];
    mul_hi(c1, k, gc->g1);
    mul_hi(c2, k, gc->g2);
    memcpy(k1, k, 32);
    mul_lo_add(k1, c1, gc->na1);
    mul_lo_add(k1, c2, gc->na2);
    memset(k2, 0, 32);
    mul_lo_add(k2, c1, gc->nb1);
    mul_lo_add(k2, c2, gc->nb2);
    abs_sign(k1, neg1);
    abs_sign(k2, neg2);
}
