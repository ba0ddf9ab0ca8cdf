/*
 * Quadratic extension Fp12 = Fp6[w]/(w^2 - v), written once and instantiated for both curves
 * by tower.h. Elements are c0 + c1 w with c0, c1 in Fp6 (fp6_tmpl.h). Over Fp2 the basis is
 * w^0..w^5 (w^6 = xi): c0.c0, c1.c0, c0.c1, c1.c1, c0.c2, c1.c2 are the w^0, w^1, w^2, w^3,
 * w^4, w^5 coordinates. This is the tower of @noble/curves and arkworks, so coefficients can
 * be compared one to one.
 *
 * Parameters: F12_NAME (bn254_fp12 | bls12_381_fp12), F12_F6 (bn254_fp6 | ...), F12_F2
 * (bn254_fp2 | ...).
 *
 * Besides the field operations: the sparse products by Miller-loop lines (mul_by_034 for a
 * D-type twist, mul_by_014 for an M-type twist), the Frobenius maps, and the operations that
 * are only valid on the cyclotomic subgroup G_{Phi_6(p^2)}, the elements of order dividing
 * p^4 - p^2 + 1 (what the easy part of the final exponentiation produces; they satisfy
 * a^(p^6 + 1) = 1): there the conjugate is the inverse and squaring has the cheaper
 * Granger-Scott form.
 * Nothing here allocates.
 */
#define X12N_(a, b) a##_##b
#define X12N(a, b) X12N_(a, b)
#define X12_(x) X12N(F12_NAME, x)
#define X12S_(x) X12N(F12_F6, x)
#define X12Q_(x) X12N(F12_F2, x)
#define X12ST X12S_(t)
#define X12QT X12Q_(t)

typedef struct {
    X12ST c0, c1;
} X12_(t);

static inline void X12_(set_zero)(X12_(t) *r)
{
    X12S_(set_zero)(&r->c0);
    X12S_(set_zero)(&r->c1);
}

static inline void X12_(set_one)(X12_(t) *r)
{
    X12S_(set_one)(&r->c0);
    X12S_(set_zero)(&r->c1);
}

static inline int X12_(is_zero)(const X12_(t) *a)
{
    return X12S_(is_zero)(&a->c0) && X12S_(is_zero)(&a->c1);
}

static inline int X12_(is_one)(const X12_(t) *a)
{
    return X12S_(is_one)(&a->c0) && X12S_(is_zero)(&a->c1);
}

static inline int X12_(eq)(const X12_(t) *a, const X12_(t) *b)
{
    return X12S_(eq)(&a->c0, &b->c0) && X12S_(eq)(&a->c1, &b->c1);
}

static inline void X12_(add)(X12_(t) *r, const X12_(t) *a, const X12_(t) *b)
{
    X12S_(add)(&r->c0, &a->c0, &b->c0);
    X12S_(add)(&r->c1, &a->c1, &b->c1);
}

static inline void X12_(sub)(X12_(t) *r, const X12_(t) *a, const X12_(t) *b)
{
    X12S_(sub)(&r->c0, &a->c0, &b->c0);
    X12S_(sub)(&r->c1, &a->c1, &b->c1);
}

static inline void X12_(neg)(X12_(t) *r, const X12_(t) *a)
{
    X12S_(neg)(&r->c0, &a->c0);
    X12S_(neg)(&r->c1, &a->c1);
}

/* The p^6-power Frobenius (w -> -w): the inverse on the cyclotomic subgroup. */
static inline void X12_(conj)(X12_(t) *r, const X12_(t) *a)
{
    r->c0 = a->c0;
    X12S_(neg)(&r->c1, &a->c1);
}

/* Karatsuba: (a0 + a1 w)(b0 + b1 w) = a0 b0 + v a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) w.
 * r may alias a or b. */
static inline void X12_(mul)(X12_(t) *r, const X12_(t) *a, const X12_(t) *b)
{
    X12ST t0, t1, s, u;
    X12S_(mul)(&t0, &a->c0, &b->c0);
    X12S_(mul)(&t1, &a->c1, &b->c1);
    X12S_(add)(&s, &a->c0, &a->c1);
    X12S_(add)(&u, &b->c0, &b->c1);
    X12S_(mul)(&s, &s, &u);
    X12S_(sub)(&s, &s, &t0);
    X12S_(sub)(&r->c1, &s, &t1);
    X12S_(mul_by_v)(&t1, &t1);
    X12S_(add)(&r->c0, &t0, &t1);
}

/* Complex squaring: with t = a0 a1, a^2 = (a0 + a1)(a0 + v a1) - t - v t + 2 t w. */
static inline void X12_(sqr)(X12_(t) *r, const X12_(t) *a)
{
    X12ST t, s, u;
    X12S_(mul)(&t, &a->c0, &a->c1);
    X12S_(add)(&s, &a->c0, &a->c1);
    X12S_(mul_by_v)(&u, &a->c1);
    X12S_(add)(&u, &u, &a->c0);
    X12S_(mul)(&s, &s, &u);
    X12S_(sub)(&s, &s, &t);
    X12S_(mul_by_v)(&u, &t);
    X12S_(sub)(&r->c0, &s, &u);
    X12S_(dbl)(&r->c1, &t);
}

/* 1/(a0 + a1 w) = (a0 - a1 w) / (a0^2 - v a1^2); inv(0) = 0. */
static inline void X12_(inv)(X12_(t) *r, const X12_(t) *a)
{
    X12ST n, t;
    X12S_(sqr)(&n, &a->c0);
    X12S_(sqr)(&t, &a->c1);
    X12S_(mul_by_v)(&t, &t);
    X12S_(sub)(&n, &n, &t);
    X12S_(inv)(&n, &n);
    X12S_(mul)(&r->c0, &a->c0, &n);
    X12S_(mul)(&t, &a->c1, &n);
    X12S_(neg)(&r->c1, &t);
}

/* Sparse product by a line a + b w + c w^3 (D-type twist, e.g. BN254), i.e. by
 * l0 + l1 w with l0 = (a, 0, 0), l1 = (b, c, 0): 13 Fp2 products instead of 18. */
static inline void X12_(mul_by_034)(X12_(t) *r, const X12_(t) *f, const X12QT *a,
                                    const X12QT *b, const X12QT *c)
{
    X12ST t0, t1, s;
    X12QT ab;
    X12S_(mul_by_fp2)(&t0, &f->c0, a);
    X12S_(mul_by_01)(&t1, &f->c1, b, c);
    X12S_(add)(&s, &f->c0, &f->c1);
    X12Q_(add)(&ab, a, b);
    X12S_(mul_by_01)(&s, &s, &ab, c);
    X12S_(sub)(&s, &s, &t0);
    X12S_(sub)(&r->c1, &s, &t1);
    X12S_(mul_by_v)(&t1, &t1);
    X12S_(add)(&r->c0, &t0, &t1);
}

/* Sparse product by a line a + b w^2 + c w^3 (M-type twist, e.g. BLS12-381), i.e. by
 * l0 + l1 w with l0 = (a, b, 0), l1 = (0, c, 0). */
static inline void X12_(mul_by_014)(X12_(t) *r, const X12_(t) *f, const X12QT *a,
                                    const X12QT *b, const X12QT *c)
{
    X12ST t0, t1, s;
    X12QT bc;
    X12S_(mul_by_01)(&t0, &f->c0, a, b);
    X12S_(mul_by_1)(&t1, &f->c1, c);
    X12S_(add)(&s, &f->c0, &f->c1);
    X12Q_(add)(&bc, b, c);
    X12S_(mul_by_01)(&s, &s, a, &bc);
    X12S_(sub)(&s, &s, &t0);
    X12S_(sub)(&r->c1, &s, &t1);
    X12S_(mul_by_v)(&t1, &t1);
    X12S_(add)(&r->c0, &t0, &t1);
}

/* r = a^(p^j), j = 1, 2 or 3: the w^k coordinate g becomes conj^j(g) FROB[j-1][k-1]. */
static inline void X12_(frob)(X12_(t) *r, const X12_(t) *a, int j)
{
    const X12QT *F = X12S_(FROB)[j - 1];
    X12_(t) t = *a;
    if (j & 1) {
        X12Q_(conj)(&t.c0.c0, &t.c0.c0);
        X12Q_(conj)(&t.c0.c1, &t.c0.c1);
        X12Q_(conj)(&t.c0.c2, &t.c0.c2);
        X12Q_(conj)(&t.c1.c0, &t.c1.c0);
        X12Q_(conj)(&t.c1.c1, &t.c1.c1);
        X12Q_(conj)(&t.c1.c2, &t.c1.c2);
    }
    r->c0.c0 = t.c0.c0;
    X12Q_(mul)(&r->c1.c0, &t.c1.c0, &F[0]);
    X12Q_(mul)(&r->c0.c1, &t.c0.c1, &F[1]);
    X12Q_(mul)(&r->c1.c1, &t.c1.c1, &F[2]);
    X12Q_(mul)(&r->c0.c2, &t.c0.c2, &F[3]);
    X12Q_(mul)(&r->c1.c2, &t.c1.c2, &F[4]);
}

/* (x + y s)^2 in Fp4 = Fp2[s]/(s^2 - xi): x^2 + xi y^2 + ((x + y)^2 - x^2 - y^2) s. */
static inline void X12_(fp4_sqr)(X12QT *r0, X12QT *r1, const X12QT *x, const X12QT *y)
{
    X12QT t0, t1, s;
    X12Q_(sqr)(&t0, x);
    X12Q_(sqr)(&t1, y);
    X12Q_(add)(&s, x, y);
    X12Q_(sqr)(&s, &s);
    X12Q_(sub)(&s, &s, &t0);
    X12Q_(sub)(r1, &s, &t1);
    X12S_(mul_xi)(&t1, &t1);
    X12Q_(add)(r0, &t0, &t1);
}

/* Granger-Scott squaring on the cyclotomic subgroup ("Faster squaring in the cyclotomic
 * subgroup of sixth degree extensions", PKC 2010). With s = w^3 (s^2 = xi) and t = w (t^3 = s)
 * write a = A + B t + C t^2, A = g0 + g3 s, B = g1 + g4 s, C = g2 + g5 s (g_k the w^k
 * coordinate). For a^(p^6 + 1) = 1:
 *   a^2 = (3 A^2 - 2 conj(A)) + (3 s C^2 + 2 conj(B)) t + (3 B^2 - 2 conj(C)) t^2,
 * where conj is s -> -s. 9 Fp2 squarings instead of 12 Fp2 products. Wrong outside the
 * subgroup (the tests check it against sqr on subgroup elements). */
static inline void X12_(cyc_sqr)(X12_(t) *r, const X12_(t) *a)
{
    X12QT a0, a1, b0, b1, c0, c1, t;
    X12_(fp4_sqr)(&a0, &a1, &a->c0.c0, &a->c1.c1); /* A^2 */
    X12_(fp4_sqr)(&b0, &b1, &a->c1.c0, &a->c0.c2); /* B^2 */
    X12_(fp4_sqr)(&c0, &c1, &a->c0.c1, &a->c1.c2); /* C^2 */

    /* g0' = 3 A^2_0 - 2 g0 = 2 (A^2_0 - g0) + A^2_0; g3' = 2 (A^2_1 + g3) + A^2_1. */
    X12Q_(sub)(&t, &a0, &a->c0.c0);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c0.c0, &t, &a0);
    X12Q_(add)(&t, &a1, &a->c1.c1);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c1.c1, &t, &a1);

    /* s C^2 = xi C^2_1 + C^2_0 s: g1' = 3 xi C^2_1 + 2 g1, g4' = 3 C^2_0 - 2 g4. */
    X12S_(mul_xi)(&c1, &c1);
    X12Q_(add)(&t, &c1, &a->c1.c0);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c1.c0, &t, &c1);
    X12Q_(sub)(&t, &c0, &a->c0.c2);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c0.c2, &t, &c0);

    /* g2' = 3 B^2_0 - 2 g2, g5' = 3 B^2_1 + 2 g5. */
    X12Q_(sub)(&t, &b0, &a->c0.c1);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c0.c1, &t, &b0);
    X12Q_(add)(&t, &b1, &a->c1.c2);
    X12Q_(dbl)(&t, &t);
    X12Q_(add)(&r->c1.c2, &t, &b1);
}

/* r = a^e for a little-endian limb exponent (any field element; left to right). */
static inline void X12_(pow_limbs)(X12_(t) *r, const X12_(t) *a, const uint64_t *e, int nlimbs)
{
    X12_(t) acc, base = *a;
    X12_(set_one)(&acc);
    for (int i = nlimbs - 1; i >= 0; i--)
        for (int b = 63; b >= 0; b--) {
            X12_(sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                X12_(mul)(&acc, &acc, &base);
        }
    *r = acc;
}

/* r = a^e on the cyclotomic subgroup (Granger-Scott squarings), e a 64-bit exponent. */
static inline void X12_(cyc_pow_u64)(X12_(t) *r, const X12_(t) *a, uint64_t e)
{
    X12_(t) acc, base = *a;
    X12_(set_one)(&acc);
    int started = 0;
    for (int b = 63; b >= 0; b--) {
        if (started)
            X12_(cyc_sqr)(&acc, &acc);
        if ((e >> b) & 1) {
            if (started) {
                X12_(mul)(&acc, &acc, &base);
            } else {
                acc = base;
                started = 1;
            }
        }
    }
    *r = acc;
}

/* r = a^e on the cyclotomic subgroup for e in non-adjacent form (digits -1, 0, 1, most
 * significant first, naf[0] = 1): a^-1 is the free conjugate there, so a NAF exponent
 * saves multiplications (BN254's x: 24 nonzero digits instead of 28 bits set). */
static inline void X12_(cyc_pow_naf)(X12_(t) *r, const X12_(t) *a, const int8_t *naf, int len)
{
    X12_(t) acc = *a, inv;
    X12_(conj)(&inv, a);
    for (int i = 1; i < len; i++) {
        X12_(cyc_sqr)(&acc, &acc);
        if (naf[i] == 1)
            X12_(mul)(&acc, &acc, a);
        else if (naf[i] == -1)
            X12_(mul)(&acc, &acc, &inv);
    }
    *r = acc;
}

/* r = a^e on the cyclotomic subgroup for a little-endian limb exponent. */
static inline void X12_(cyc_pow_limbs)(X12_(t) *r, const X12_(t) *a, const uint64_t *e,
                                       int nlimbs)
{
    X12_(t) acc, base = *a;
    X12_(set_one)(&acc);
    for (int i = nlimbs - 1; i >= 0; i--)
        for (int b = 63; b >= 0; b--) {
            X12_(cyc_sqr)(&acc, &acc);
            if ((e[i] >> b) & 1)
                X12_(mul)(&acc, &acc, &base);
        }
    *r = acc;
}

#undef F12_NAME
#undef F12_F6
#undef F12_F2
