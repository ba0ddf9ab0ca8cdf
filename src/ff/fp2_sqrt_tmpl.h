/*
 * Out-of-line Fp2 routines (see fp2_sqrt.h), instantiated per curve by fp2_sqrt.c.
 * Parameters: F2_NAME (bn254_fp2 | ...), F2_BASE (bn254_fp | ...), F2_N (limbs of Fp).
 */
#define F2N_(a, b) a##_##b
#define F2N(a, b) F2N_(a, b)
#define F2_(x) F2N(F2_NAME, x)
#define FB_(x) F2N(F2_BASE, x)

void F2_(pow_limbs)(F2_(t) *r, const F2_(t) *a, const uint64_t *e, int nlimbs)
{
    F2_(t) acc, base = *a;
    F2_(set_one)(&acc);
    for (int i = nlimbs - 1; i >= 0; i--)
        for (int b = 63; b >= 0; b--) {
            F2_(sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                F2_(mul)(&acc, &acc, &base);
        }
    *r = acc;
}

/* p >> s as limbs (s < 64). */
static void FB_(p_shr)(uint64_t out[F2_N], int s)
{
    for (int i = 0; i < F2_N; i++)
        out[i] = (FB_(P).l[i] >> s) | (i + 1 < F2_N ? FB_(P).l[i + 1] << (64 - s) : 0);
}

/*
 * Algorithm 9 of Adj and Rodriguez-Henriquez, "Square root computation over even extension
 * fields" (eprint 2012/685), for Fp2 = Fp[u]/(u^2+1) with p = 3 mod 4:
 *   a1 = a^((p-3)/4), alpha = a1^2 a (= a^((p-1)/2)), a0 = alpha^p alpha (= norm(a)^((p-1)/2)).
 *   a0 = -1 means a is not a square. Otherwise x0 = a1 a; if alpha = -1 then x = u x0, else
 *   x = (1 + alpha)^((p-1)/2) x0.
 * alpha^p is the Frobenius, i.e. the conjugate. The result is checked by squaring, so a wrong
 * branch can never return a false root.
 */
int F2_(sqrt)(F2_(t) *r, const F2_(t) *a)
{
    uint64_t e34[F2_N], e12[F2_N];
    /* p = 3 mod 4, so (p-3)/4 = p >> 2 and (p-1)/2 = p >> 1. */
    FB_(p_shr)(e34, 2);
    FB_(p_shr)(e12, 1);
    F2_(t) a1, alpha, a0, x0, x, minus_one, chk;
    F2_(pow_limbs)(&a1, a, e34, F2_N);
    F2_(sqr)(&alpha, &a1);
    F2_(mul)(&alpha, &alpha, a);
    F2_(conj)(&a0, &alpha);
    F2_(mul)(&a0, &a0, &alpha);
    F2_(set_one)(&minus_one);
    F2_(neg)(&minus_one, &minus_one);
    if (F2_(eq)(&a0, &minus_one))
        return -1;
    F2_(mul)(&x0, &a1, a);
    if (F2_(eq)(&alpha, &minus_one)) {
        /* u (c0 + c1 u) = -c1 + c0 u */
        FB_(neg)(&x.c0, &x0.c1);
        x.c1 = x0.c0;
    } else {
        F2_(t) b;
        F2_(set_one)(&b);
        F2_(add)(&b, &b, &alpha);
        F2_(pow_limbs)(&b, &b, e12, F2_N);
        F2_(mul)(&x, &b, &x0);
    }
    F2_(sqr)(&chk, &x);
    if (!F2_(eq)(&chk, a))
        return -1;
    *r = x;
    return 0;
}

/* a > (p-1)/2 as canonical integers, i.e. a > p - a: ZCash's "lexicographically largest". */
int FB_(is_lex_largest)(const FB_(t) *a)
{
    uint64_t c[F2_N], half[F2_N];
    FB_(to_canonical)(c, a);
    FB_(p_shr)(half, 1); /* (p-1)/2, p odd */
    for (int i = F2_N - 1; i >= 0; i--) {
        if (c[i] != half[i])
            return c[i] > half[i];
    }
    return 0;
}

int F2_(is_lex_largest)(const F2_(t) *a)
{
    if (!FB_(is_zero)(&a->c1))
        return FB_(is_lex_largest)(&a->c1);
    return FB_(is_lex_largest)(&a->c0);
}

#undef F2_NAME
#undef F2_BASE
#undef F2_N
#undef F2N_
#undef F2N
#undef F2_
#undef FB_
