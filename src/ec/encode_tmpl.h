/*
 * Encodings of one group (see encode.h), instantiated per group by encode.c.
 *
 * Parameters: EC_NAME (bn254_g1, ...), EC_F (coordinate field: bn254_fp or bn254_fp2, ...),
 * EC_FB (base prime field), EC_DEG (1 for G1, 2 for G2), EC_NB (bytes of a base element:
 * 32 | 48), EC_LABEL ("bn254 G1", for messages), EC_ZCASH (1: also the ZCash encodings).
 *
 * A coordinate is handled as EC_DEG base elements ("components"), c0 first, so G1 and G2
 * share every routine.
 */
#define ECN_(a, b) a##_##b
#define ECN(a, b) ECN_(a, b)
#define EC_(x) ECN(EC_NAME, x)
#define ECF_(x) ECN(EC_F, x)
#define ECB_(x) ECN(EC_FB, x)
#define ECFT ECF_(t)
#define ECBT ECB_(t)
/* Bytes of one coordinate and of an affine point in the fixed-width encodings. */
#define EC_CB (EC_DEG * EC_NB)

_Static_assert(sizeof(ECFT) == EC_DEG * sizeof(ECBT), "coordinate = EC_DEG base elements");
_Static_assert(sizeof(ECBT) == EC_NB, "base element size");

static inline ECBT *EC_(comp)(ECFT *v, int i)
{
#if EC_DEG == 1
    (void)i;
    return v;
#else
    return i ? &v->c1 : &v->c0;
#endif
}

static inline const ECBT *EC_(ccomp)(const ECFT *v, int i)
{
    return EC_(comp)((ECFT *)v, i);
}

/* "point 17: " when decoding arrays, "" otherwise. */
static void EC_(where)(char *buf, size_t cap, long idx)
{
    if (idx >= 0)
        snprintf(buf, cap, "point %ld: ", idx);
    else
        buf[0] = 0;
}

/* Checks common to every decoder, on an affine candidate whose coordinates are canonical.
 * is_inf: the encoding said "infinity" (for snarkjs binary, (0, 0) is infinity by definition).
 * Otherwise (0, 0) is rejected at every level: it is our in-memory infinity, but an encoding
 * that did not say "infinity" named the pair (0, 0), which is on no curve here (b != 0). */
static cuzk_err EC_(validate)(const EC_(affine) *a, int is_inf, cuzk__ec_check chk,
                              const char *what, long idx, cuzk_errbuf *eb)
{
    char w[48];
    if (is_inf)
        return CUZK_OK;
    if (EC_(affine_is_inf)(a) || (chk >= CUZK_EC_CHECK_CURVE && !EC_(affine_is_on_curve)(a))) {
        EC_(where)(w, sizeof w, idx);
        return cuzk_errf(eb, CUZK_NOT_ON_CURVE, "%s%s %s: (x, y) is not on the curve", w,
                         EC_LABEL, what);
    }
    if (chk >= CUZK_EC_CHECK_SUBGROUP && !EC_(in_subgroup)(a)) {
        EC_(where)(w, sizeof w, idx);
        return cuzk_errf(eb, CUZK_NOT_IN_SUBGROUP,
                         "%s%s %s: point is on the curve but not in the prime-order subgroup",
                         w, EC_LABEL, what);
    }
    return CUZK_OK;
}

/* ------------------------------------------------------------------ snarkjs binary */

void EC_(to_snarkjs)(uint8_t *out, const EC_(affine) *p)
{
    for (int i = 0; i < EC_DEG; i++) {
        ECB_(to_mont_bytes_le)(out + i * EC_NB, EC_(ccomp)(&p->x, i));
        ECB_(to_mont_bytes_le)(out + EC_CB + i * EC_NB, EC_(ccomp)(&p->y, i));
    }
}

static cuzk_err EC_(from_snarkjs_at)(EC_(affine) *p, const uint8_t *in, cuzk__ec_check chk,
                                     long idx, cuzk_errbuf *eb)
{
    EC_(affine) a;
    for (int c = 0; c < 2 * EC_DEG; c++) {
        ECBT *dst = EC_(comp)(c < EC_DEG ? &a.x : &a.y, c % EC_DEG);
        if (ECB_(from_mont_bytes_le)(dst, in + c * EC_NB) != 0) {
            char w[48];
            EC_(where)(w, sizeof w, idx);
            return cuzk_errf(eb, CUZK_NON_CANONICAL,
                             "%s%s point (snarkjs binary): %s%s is not below the field modulus",
                             w, EC_LABEL, c < EC_DEG ? "x" : "y",
                             EC_DEG == 1 ? "" : (c % EC_DEG ? ".c1" : ".c0"));
        }
    }
    cuzk_err e = EC_(validate)(&a, EC_(affine_is_inf)(&a), chk, "point (snarkjs binary)", idx, eb);
    if (e)
        return e;
    *p = a;
    return CUZK_OK;
}

cuzk_err EC_(from_snarkjs)(EC_(affine) *p, const uint8_t *in, cuzk__ec_check chk,
                           cuzk_errbuf *eb)
{
    return EC_(from_snarkjs_at)(p, in, chk, -1, eb);
}

cuzk_err EC_(from_snarkjs_n)(EC_(affine) *p, const uint8_t *in, size_t n, cuzk__ec_check chk,
                             cuzk_errbuf *eb)
{
    for (size_t i = 0; i < n; i++) {
        cuzk_err e = EC_(from_snarkjs_at)(&p[i], in + i * 2 * EC_CB, chk, (long)i, eb);
        if (e)
            return e;
    }
    return CUZK_OK;
}

/* ------------------------------------------------------------------ snarkjs JSON */

void EC_(to_json_dec)(char (*out)[CUZK_EC_DEC_MAX], const EC_(affine) *p)
{
    ECFT x = p->x, y = p->y, z;
    if (EC_(affine_is_inf)(p)) {
        /* ffjavascript's toObject of zero: (0, 1, 0). */
        ECF_(set_zero)(&x);
        ECF_(set_one)(&y);
        ECF_(set_zero)(&z);
    } else {
        ECF_(set_one)(&z);
    }
    const ECFT *v[3] = {&x, &y, &z};
    for (int c = 0; c < 3 * EC_DEG; c++)
        ECB_(to_dec)(out[c], CUZK_EC_DEC_MAX, EC_(ccomp)(v[c / EC_DEG], c % EC_DEG));
}

cuzk_err EC_(from_json_dec)(EC_(affine) *p, const char *const *s, cuzk__ec_check chk,
                            cuzk_errbuf *eb)
{
    static const char *const names[3] = {"x", "y", "z"};
    ECFT v[3];
    for (int c = 0; c < 3 * EC_DEG; c++) {
        const char *str = s[c];
        const char *sub = EC_DEG == 1 ? "" : (c % EC_DEG ? ".c1" : ".c0");
        size_t len = str ? strlen(str) : 0;
        size_t k = 0;
        while (k < len && str[k] >= '0' && str[k] <= '9')
            k++;
        if (len == 0 || k != len)
            return cuzk_errf(eb, CUZK_BAD_ENCODING,
                             "%s point (JSON): %s%s is not a decimal number: \"%.40s\"", EC_LABEL,
                             names[c / EC_DEG], sub, str ? str : "(null)");
        if (ECB_(from_dec)(EC_(comp)(&v[c / EC_DEG], c % EC_DEG), str, len) != 0)
            return cuzk_errf(eb, CUZK_NON_CANONICAL,
                             "%s point (JSON): %s%s is not below the field modulus", EC_LABEL,
                             names[c / EC_DEG], sub);
    }
    EC_(affine) a;
    int is_inf = 0;
    if (ECF_(is_zero)(&v[2])) {
        EC_(affine_set_inf)(&a);
        is_inf = 1;
    } else if (ECF_(is_one)(&v[2])) {
        a.x = v[0];
        a.y = v[1];
    } else {
        /* Jacobian, as ffjavascript's curves compute: (x / z^2, y / z^3). */
        EC_(jac) j = {v[0], v[1], v[2]};
        EC_(to_affine)(&a, &j);
    }
    cuzk_err e = EC_(validate)(&a, is_inf, chk, "point (JSON)", -1, eb);
    if (e)
        return e;
    *p = a;
    return CUZK_OK;
}

#if EC_ZCASH
/* ------------------------------------------------------------------ ZCash / Filecoin */

#define EC_FLAG_C 0x80 /* compressed */
#define EC_FLAG_I 0x40 /* infinity */
#define EC_FLAG_S 0x20 /* sign: y is the lexicographically larger root */

/* Coordinate big-endian, highest component first (Fp2: c1 then c0). */
static void EC_(put_be)(uint8_t *out, const ECFT *v)
{
    for (int i = 0; i < EC_DEG; i++)
        ECB_(to_bytes_be)(out + i * EC_NB, EC_(ccomp)(v, EC_DEG - 1 - i));
}

/* Reads a coordinate, ignoring the three flag bits when mask_flags. -1 if a component is
 * not below p (the component's name goes to *bad). */
static int EC_(get_be)(ECFT *v, const uint8_t *in, int mask_flags, const char **bad)
{
    for (int i = 0; i < EC_DEG; i++) {
        uint8_t b[EC_NB];
        memcpy(b, in + i * EC_NB, EC_NB);
        if (i == 0 && mask_flags)
            b[0] &= 0x1f;
        if (ECB_(from_bytes_be)(EC_(comp)(v, EC_DEG - 1 - i), b) != 0) {
            *bad = EC_DEG == 1 ? "" : (EC_DEG - 1 - i ? ".c1" : ".c0");
            return -1;
        }
    }
    return 0;
}

void EC_(to_compressed)(uint8_t *out, const EC_(affine) *p)
{
    if (EC_(affine_is_inf)(p)) {
        memset(out, 0, EC_CB);
        out[0] = EC_FLAG_C | EC_FLAG_I;
        return;
    }
    EC_(put_be)(out, &p->x);
    out[0] |= EC_FLAG_C;
    if (ECF_(is_lex_largest)(&p->y))
        out[0] |= EC_FLAG_S;
}

void EC_(to_uncompressed)(uint8_t *out, const EC_(affine) *p)
{
    if (EC_(affine_is_inf)(p)) {
        memset(out, 0, 2 * EC_CB);
        out[0] = EC_FLAG_I;
        return;
    }
    EC_(put_be)(out, &p->x);
    EC_(put_be)(out + EC_CB, &p->y);
}

static cuzk_err EC_(check_len)(size_t len, size_t want, const char *form, cuzk_errbuf *eb)
{
    if (len < want)
        return cuzk_errf(eb, CUZK_TRUNCATED, "%s %s point: %zu bytes, expected %zu", EC_LABEL,
                         form, len, want);
    if (len > want)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s %s point: %zu bytes, expected %zu",
                         EC_LABEL, form, len, want);
    return CUZK_OK;
}

/* Infinity: the flag byte must be exactly `flags` and every other bit zero. */
static cuzk_err EC_(check_inf)(const uint8_t *in, size_t len, uint8_t flags, const char *form,
                               cuzk_errbuf *eb)
{
    uint8_t acc = (uint8_t)(in[0] ^ flags);
    for (size_t i = 1; i < len; i++)
        acc |= in[i];
    if (acc)
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s %s point: infinity flag set but other bits are not zero "
                         "(byte 0 = 0x%02x)",
                         EC_LABEL, form, in[0]);
    return CUZK_OK;
}

cuzk_err EC_(from_compressed)(EC_(affine) *p, const uint8_t *in, size_t len,
                              cuzk__ec_check chk, cuzk_errbuf *eb)
{
    const char *form = "compressed";
    cuzk_err e = EC_(check_len)(len, EC_CB, form, eb);
    if (e)
        return e;
    uint8_t f = in[0];
    if (!(f & EC_FLAG_C))
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s compressed point: compression flag (0x80) not set (byte 0 = 0x%02x)",
                         EC_LABEL, f);
    if (f & EC_FLAG_I) {
        if ((e = EC_(check_inf)(in, len, EC_FLAG_C | EC_FLAG_I, form, eb)))
            return e;
        EC_(affine_set_inf)(p);
        return CUZK_OK;
    }
    EC_(affine) a;
    const char *bad;
    if (EC_(get_be)(&a.x, in, 1, &bad) != 0)
        return cuzk_errf(eb, CUZK_NON_CANONICAL,
                         "%s compressed point: x%s is not below the field modulus", EC_LABEL,
                         bad);
    /* y^2 = x^3 + b; no root means x is not the abscissa of a curve point. */
    ECFT rhs;
    ECF_(sqr)(&rhs, &a.x);
    ECF_(mul)(&rhs, &rhs, &a.x);
    ECF_(add)(&rhs, &rhs, &EC_(B));
    if (ECF_(sqrt)(&a.y, &rhs) != 0)
        return cuzk_errf(eb, CUZK_NOT_ON_CURVE,
                         "%s compressed point: x^3 + b is not a square, no point has this x",
                         EC_LABEL);
    if (ECF_(is_lex_largest)(&a.y) != !!(f & EC_FLAG_S))
        ECF_(neg)(&a.y, &a.y);
    /* x = 0 gives y^2 = b != 0, so (x, y) is never (0, 0), our in-memory infinity. */
    if ((e = EC_(validate)(&a, 0, chk, "compressed point", -1, eb)))
        return e;
    *p = a;
    return CUZK_OK;
}

cuzk_err EC_(from_uncompressed)(EC_(affine) *p, const uint8_t *in, size_t len,
                                cuzk__ec_check chk, cuzk_errbuf *eb)
{
    const char *form = "uncompressed";
    cuzk_err e = EC_(check_len)(len, 2 * EC_CB, form, eb);
    if (e)
        return e;
    uint8_t f = in[0];
    if (f & EC_FLAG_C)
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s uncompressed point: compression flag (0x80) set (byte 0 = 0x%02x)",
                         EC_LABEL, f);
    if (f & EC_FLAG_S)
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s uncompressed point: sign flag (0x20) set (byte 0 = 0x%02x)",
                         EC_LABEL, f);
    if (f & EC_FLAG_I) {
        if ((e = EC_(check_inf)(in, len, EC_FLAG_I, form, eb)))
            return e;
        EC_(affine_set_inf)(p);
        return CUZK_OK;
    }
    EC_(affine) a;
    const char *bad;
    if (EC_(get_be)(&a.x, in, 1, &bad) != 0)
        return cuzk_errf(eb, CUZK_NON_CANONICAL,
                         "%s uncompressed point: x%s is not below the field modulus", EC_LABEL,
                         bad);
    if (EC_(get_be)(&a.y, in + EC_CB, 0, &bad) != 0)
        return cuzk_errf(eb, CUZK_NON_CANONICAL,
                         "%s uncompressed point: y%s is not below the field modulus", EC_LABEL,
                         bad);
    if ((e = EC_(validate)(&a, 0, chk, "uncompressed point", -1, eb)))
        return e;
    *p = a;
    return CUZK_OK;
}

cuzk_err EC_(from_zcash)(EC_(affine) *p, const uint8_t *in, size_t len, cuzk__ec_check chk,
                         cuzk_errbuf *eb)
{
    if (len == 0)
        return cuzk_errf(eb, CUZK_TRUNCATED, "%s point: empty input", EC_LABEL);
    if (in[0] & EC_FLAG_C)
        return EC_(from_compressed)(p, in, len, chk, eb);
    return EC_(from_uncompressed)(p, in, len, chk, eb);
}

#undef EC_FLAG_C
#undef EC_FLAG_I
#undef EC_FLAG_S
#endif /* EC_ZCASH */

#undef EC_NAME
#undef EC_F
#undef EC_FB
#undef EC_DEG
#undef EC_NB
#undef EC_LABEL
#undef EC_ZCASH
#undef EC_CB
#undef ECB_
#undef ECBT
