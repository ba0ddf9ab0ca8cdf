/*
 * Prime-field arithmetic in Montgomery form, written once and instantiated per field.
 *
 * Include this file after defining:
 *   FF_NAME   prefix of every generated name (bn254_fp, bn254_fr, bls12_381_fp, bls12_381_fr)
 *   FF_UPPER  the same prefix in capitals, naming the constants in ff_params.h
 *   FF_N      number of 64-bit limbs (4 or 6)
 * The file undefines them at its end, so it can be included again for the next field.
 *
 * Representation: little-endian 64-bit limbs of a*R mod p, R = 2^(64*FF_N), always fully
 * reduced (< p). This is exactly snarkjs's binary encoding of field elements in .zkey/.ptau
 * files and the GPU's encoding (32-bit limbs of the same bytes), so buffers move without
 * conversion.
 *
 * Multiplication is the CIOS method without the final carry word ("no-carry" CIOS, valid
 * because the top limb of every modulus here is below (2^64-1)/2 - 1; the generator asserts
 * it). See Koc, Acar, Kaliski, "Analyzing and comparing Montgomery multiplication
 * algorithms" (1996) and gnark-crypto's note on the no-carry variant. On x86-64 with BMI2 and
 * ADX a mulx/adcx/adox assembly kernel is chosen at run time (ff_asm.h).
 *
 * Nothing here allocates or logs.
 */
#include <stdint.h>
#include <string.h>

#include "ff/ff_common.h"
#include "ff/ff_params.h"

#define FFN_(a, b) a##_##b
#define FFN(a, b) FFN_(a, b)
#define FF_(x) FFN(FF_NAME, x)
#define FFC_(a, b) a##_##b
#define FFC(a, b) FFC_(a, b)
#define FF_K(x) FFC(FF_UPPER, x)

typedef struct {
    uint64_t l[FF_N];
} FF_(t);

static const FF_(t) FF_(P) = {FF_K(P)};
static const FF_(t) FF_(ONE) = {FF_K(ONE)};
static const FF_(t) FF_(R2) = {FF_K(R2)};
static const FF_(t) FF_(ZERO) = {{0}};

/* r = a - p if a >= p (a < 2p assumed); constant flow. */
static inline void FF_(reduce_once)(FF_(t) *r, const FF_(t) *a)
{
    uint64_t t[FF_N];
    unsigned __int128 w;
    uint64_t borrow = 0;
    for (int i = 0; i < FF_N; i++) {
        w = (unsigned __int128)a->l[i] - FF_(P).l[i] - borrow;
        t[i] = (uint64_t)w;
        borrow = (uint64_t)(w >> 64) & 1;
    }
    /* borrow set: a < p, keep a. */
    uint64_t mask = (uint64_t)0 - borrow;
    for (int i = 0; i < FF_N; i++)
        r->l[i] = (a->l[i] & mask) | (t[i] & ~mask);
}

static inline void FF_(add)(FF_(t) *r, const FF_(t) *a, const FF_(t) *b)
{
    /* a, b < p < 2^(64N-1), so a + b fits in N limbs. */
    FF_(t) s;
    unsigned __int128 w;
    uint64_t carry = 0;
    for (int i = 0; i < FF_N; i++) {
        w = (unsigned __int128)a->l[i] + b->l[i] + carry;
        s.l[i] = (uint64_t)w;
        carry = (uint64_t)(w >> 64);
    }
    FF_(reduce_once)(r, &s);
}

static inline void FF_(sub)(FF_(t) *r, const FF_(t) *a, const FF_(t) *b)
{
    uint64_t t[FF_N];
    unsigned __int128 w;
    uint64_t borrow = 0;
    for (int i = 0; i < FF_N; i++) {
        w = (unsigned __int128)a->l[i] - b->l[i] - borrow;
        t[i] = (uint64_t)w;
        borrow = (uint64_t)(w >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - borrow, carry = 0;
    for (int i = 0; i < FF_N; i++) {
        w = (unsigned __int128)t[i] + (FF_(P).l[i] & mask) + carry;
        r->l[i] = (uint64_t)w;
        carry = (uint64_t)(w >> 64);
    }
}

static inline void FF_(dbl)(FF_(t) *r, const FF_(t) *a) { FF_(add)(r, a, a); }

static inline int FF_(is_zero)(const FF_(t) *a)
{
    uint64_t acc = 0;
    for (int i = 0; i < FF_N; i++)
        acc |= a->l[i];
    return acc == 0;
}

static inline int FF_(eq)(const FF_(t) *a, const FF_(t) *b)
{
    uint64_t acc = 0;
    for (int i = 0; i < FF_N; i++)
        acc |= a->l[i] ^ b->l[i];
    return acc == 0;
}

static inline int FF_(is_one)(const FF_(t) *a) { return FF_(eq)(a, &FF_(ONE)); }

static inline void FF_(neg)(FF_(t) *r, const FF_(t) *a)
{
    FF_(t) z = FF_(ZERO);
    int zero = FF_(is_zero)(a);
    FF_(sub)(r, &z, a);
    if (zero)
        *r = FF_(ZERO);
}

static inline void FF_(set_zero)(FF_(t) *r) { *r = FF_(ZERO); }
static inline void FF_(set_one)(FF_(t) *r) { *r = FF_(ONE); }

/* Portable no-carry CIOS Montgomery multiplication: r = a*b/R mod p. */
static inline void FF_(mul_portable)(FF_(t) *r, const FF_(t) *a, const FF_(t) *b)
{
    uint64_t t[FF_N] = {0};
    const uint64_t n0 = FF_K(N0);
    for (int i = 0; i < FF_N; i++) {
        unsigned __int128 w = (unsigned __int128)a->l[0] * b->l[i] + t[0];
        uint64_t A = (uint64_t)(w >> 64);
        t[0] = (uint64_t)w;
        uint64_t m = t[0] * n0;
        w = (unsigned __int128)m * FF_(P).l[0] + t[0];
        uint64_t C = (uint64_t)(w >> 64);
        for (int j = 1; j < FF_N; j++) {
            w = (unsigned __int128)a->l[j] * b->l[i] + t[j] + A;
            A = (uint64_t)(w >> 64);
            t[j] = (uint64_t)w;
            w = (unsigned __int128)m * FF_(P).l[j] + t[j] + C;
            C = (uint64_t)(w >> 64);
            t[j - 1] = (uint64_t)w;
        }
        t[FF_N - 1] = C + A;
    }
    FF_(t) s;
    memcpy(s.l, t, sizeof t);
    FF_(reduce_once)(r, &s);
}

static inline void FF_(mul)(FF_(t) *r, const FF_(t) *a, const FF_(t) *b)
{
#if CUZK_FF_HAVE_ASM
    if (cuzk__ff_use_asm) {
        FFN(cuzk__mul_mont_asm, FF_N)(r->l, a->l, b->l, FF_(P).l, FF_K(N0));
        return;
    }
#endif
    FF_(mul_portable)(r, a, b);
}

static inline void FF_(sqr)(FF_(t) *r, const FF_(t) *a)
{
#if CUZK_FF_HAVE_ASM
    if (cuzk__ff_use_asm) {
        FFN(cuzk__sqr_mont_asm, FF_N)(r->l, a->l, FF_(P).l, FF_K(N0));
        return;
    }
#endif
    FF_(mul_portable)(r, a, a);
}

/* Montgomery form from canonical limbs (any value < p) and back. */
static inline void FF_(from_canonical)(FF_(t) *r, const uint64_t a[FF_N])
{
    FF_(t) x;
    memcpy(x.l, a, sizeof x.l);
    FF_(mul)(r, &x, &FF_(R2));
}

static inline void FF_(to_canonical)(uint64_t r[FF_N], const FF_(t) *a)
{
    FF_(t) one = {{1}}, x;
    FF_(mul)(&x, a, &one);
    memcpy(r, x.l, sizeof x.l);
}

static inline void FF_(from_u64)(FF_(t) *r, uint64_t v)
{
    uint64_t l[FF_N] = {v};
    FF_(from_canonical)(r, l);
}

/* 1 if the canonical little-endian limbs are < p. */
static inline int FF_(limbs_lt_p)(const uint64_t a[FF_N])
{
    for (int i = FF_N - 1; i >= 0; i--) {
        if (a[i] < FF_(P).l[i])
            return 1;
        if (a[i] > FF_(P).l[i])
            return 0;
    }
    return 0;
}

/* Exponentiation by a little-endian limb exponent of nlimbs limbs (left to right). */
static inline void FF_(pow_limbs)(FF_(t) *r, const FF_(t) *a, const uint64_t *e, int nlimbs)
{
    FF_(t) acc = FF_(ONE), base = *a;
    for (int i = nlimbs - 1; i >= 0; i--) {
        for (int b = 63; b >= 0; b--) {
            FF_(sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                FF_(mul)(&acc, &acc, &base);
        }
    }
    *r = acc;
}

static inline void FF_(pow_u64)(FF_(t) *r, const FF_(t) *a, uint64_t e)
{
    FF_(pow_limbs)(r, a, &e, 1);
}

/* Inverse by Fermat's little theorem; inv(0) = 0. Not constant time (the prover's inputs
 * are not secret here beyond r and s, which are never inverted). */
static inline void FF_(inv)(FF_(t) *r, const FF_(t) *a)
{
    static const uint64_t e[FF_N] = FF_K(PM2);
    FF_(pow_limbs)(r, a, e, FF_N);
}

/* Canonical bytes. Returns 0, or -1 when the value is not below p (non-canonical). */
static inline int FF_(from_bytes_le)(FF_(t) *r, const uint8_t *b)
{
    uint64_t l[FF_N];
    for (int i = 0; i < FF_N; i++) {
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--)
            v = (v << 8) | b[8 * i + k];
        l[i] = v;
    }
    if (!FF_(limbs_lt_p)(l))
        return -1;
    FF_(from_canonical)(r, l);
    return 0;
}

static inline void FF_(to_bytes_le)(uint8_t *b, const FF_(t) *a)
{
    uint64_t l[FF_N];
    FF_(to_canonical)(l, a);
    for (int i = 0; i < FF_N; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + k] = (uint8_t)(l[i] >> (8 * k));
}

static inline int FF_(from_bytes_be)(FF_(t) *r, const uint8_t *b)
{
    uint8_t le[8 * FF_N];
    for (int i = 0; i < 8 * FF_N; i++)
        le[i] = b[8 * FF_N - 1 - i];
    return FF_(from_bytes_le)(r, le);
}

static inline void FF_(to_bytes_be)(uint8_t *b, const FF_(t) *a)
{
    uint8_t le[8 * FF_N];
    FF_(to_bytes_le)(le, a);
    for (int i = 0; i < 8 * FF_N; i++)
        b[i] = le[8 * FF_N - 1 - i];
}

/* Raw Montgomery limbs (as stored in .zkey/.ptau) of n bytes; -1 when not below p. */
static inline int FF_(from_mont_bytes_le)(FF_(t) *r, const uint8_t *b)
{
    for (int i = 0; i < FF_N; i++) {
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--)
            v = (v << 8) | b[8 * i + k];
        r->l[i] = v;
    }
    return FF_(limbs_lt_p)(r->l) ? 0 : -1;
}

static inline void FF_(to_mont_bytes_le)(uint8_t *b, const FF_(t) *a)
{
    for (int i = 0; i < FF_N; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + k] = (uint8_t)(a->l[i] >> (8 * k));
}

/* Out-of-line helpers, instantiated once per field in ff.c. */
int FF_(from_dec)(FF_(t) *r, const char *s, size_t len);
size_t FF_(to_dec)(char *out, size_t cap, const FF_(t) *a);
void FF_(batch_inv)(FF_(t) *out, const FF_(t) *in, size_t n, FF_(t) *scratch);
#ifdef FF_HAS_SQRT
int FF_(sqrt)(FF_(t) *r, const FF_(t) *a);
#endif
int FF_(legendre)(const FF_(t) *a);

#undef FF_NAME
#undef FF_UPPER
#undef FF_N
#undef FF_HAS_SQRT
