/* Out-of-line field routines, instantiated per field by ff.c (same parameters as ff_tmpl.h). */

#define FFN_(a, b) a##_##b
#define FFN(a, b) FFN_(a, b)
#define FF_(x) FFN(FF_NAME, x)
#define FFC_(a, b) a##_##b
#define FFC(a, b) FFC_(a, b)
#define FF_K(x) FFC(FF_UPPER, x)

/* Decimal string (digits only, no sign, leading zeros allowed) to a field element.
 * Returns 0, or -1 for an empty string, a non-digit, or a value >= p. */
int FF_(from_dec)(FF_(t) *r, const char *s, size_t len)
{
    uint64_t acc[FF_N + 1] = {0};
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t carry = (uint64_t)(s[i] - '0');
        for (int k = 0; k < FF_N + 1; k++) {
            unsigned __int128 w = (unsigned __int128)acc[k] * 10 + carry;
            acc[k] = (uint64_t)w;
            carry = (uint64_t)(w >> 64);
        }
        if (carry || acc[FF_N])
            return -1;
    }
    if (!FF_(limbs_lt_p)(acc))
        return -1;
    FF_(from_canonical)(r, acc);
    return 0;
}

/* Writes the canonical decimal string of a, NUL-terminated, into out (cap >= 80 for 4 limbs,
 * 120 for 6 is always enough). Returns its length, or 0 if cap is too small. */
size_t FF_(to_dec)(char *out, size_t cap, const FF_(t) *a)
{
    uint64_t l[FF_N];
    char tmp[8 * FF_N * 3 + 2];
    size_t n = 0;
    FF_(to_canonical)(l, a);
    for (;;) {
        /* l /= 10^19, remainder into digits. */
        const uint64_t d = 10000000000000000000ULL;
        unsigned __int128 rem = 0;
        int nonzero = 0;
        for (int i = FF_N - 1; i >= 0; i--) {
            unsigned __int128 cur = (rem << 64) | l[i];
            l[i] = (uint64_t)(cur / d);
            rem = cur % d;
            nonzero |= l[i] != 0;
        }
        uint64_t chunk = (uint64_t)rem;
        for (int k = 0; k < 19; k++) {
            tmp[n++] = (char)('0' + chunk % 10);
            chunk /= 10;
            if (!nonzero && chunk == 0)
                break;
        }
        if (!nonzero)
            break;
    }
    if (n + 1 > cap)
        return 0;
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
    return n;
}

/* Montgomery's batch inversion: out[i] = 1/in[i] (0 stays 0). scratch holds n elements;
 * out may alias in. */
void FF_(batch_inv)(FF_(t) *out, const FF_(t) *in, size_t n, FF_(t) *scratch)
{
    FF_(t) acc = FF_(ONE);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!FF_(is_zero)(&in[i]))
            FF_(mul)(&acc, &acc, &in[i]);
    }
    FF_(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (FF_(is_zero)(&in[i])) {
            out[i] = FF_(ZERO);
            continue;
        }
        FF_(t) t;
        FF_(mul)(&t, &acc, &scratch[i]);
        FF_(mul)(&acc, &acc, &in[i]);
        out[i] = t;
    }
}

/* Legendre symbol: 0 for 0, 1 for a nonzero square, -1 otherwise. */
int FF_(legendre)(const FF_(t) *a)
{
    /* (p-1)/2 = (p-2+1)/2: shift p-2 right by one after adding one (p odd, so p-2 odd). */
    uint64_t e[FF_N] = FF_K(PM2);
    uint64_t carry = 1;
    for (int i = 0; i < FF_N; i++) {
        unsigned __int128 w = (unsigned __int128)e[i] + carry;
        e[i] = (uint64_t)w;
        carry = (uint64_t)(w >> 64);
    }
    for (int i = 0; i < FF_N; i++)
        e[i] = (e[i] >> 1) | (i + 1 < FF_N ? e[i + 1] << 63 : 0);
    if (FF_(is_zero)(a))
        return 0;
    FF_(t) t;
    FF_(pow_limbs)(&t, a, e, FF_N);
    return FF_(is_one)(&t) ? 1 : -1;
}

#ifdef FF_HAS_SQRT
/* p = 3 mod 4: r = a^((p+1)/4). Returns 0 if a is a square (r set), -1 otherwise. */
int FF_(sqrt)(FF_(t) *r, const FF_(t) *a)
{
    static const uint64_t e[FF_N] = FF_K(SQRT_EXP);
    FF_(t) s, c;
    FF_(pow_limbs)(&s, a, e, FF_N);
    FF_(sqr)(&c, &s);
    if (!FF_(eq)(&c, a))
        return -1;
    *r = s;
    return 0;
}
#endif

#undef FF_NAME
#undef FF_UPPER
#undef FF_N
#undef FF_HAS_SQRT
