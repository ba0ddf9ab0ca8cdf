/*
 * Cubic extension Fp6 = Fp2[v]/(v^3 - xi), xi = 9 + u (BN254) or 1 + u (BLS12-381), written
 * once and instantiated for both curves by tower.h. Elements are c0 + c1 v + c2 v^2.
 *
 * Parameters: F6_NAME (bn254_fp6 | bls12_381_fp6), F6_F2 (bn254_fp2 | ...), F6_FP (bn254_fp |
 * ...), F6_XI_C0 (xi = F6_XI_C0 + u: 9 | 1), F6_FROB12 (the generated Frobenius table of
 * tower_params.h; this file keeps it as NAME_FROB for Fp12 too).
 *
 * Multiplication is Karatsuba over Fp2 (6 Fp2 products), squaring is Chung-Hasan CH-SQR2
 * ("Asymmetric squaring formulae", ARITH 2007). Nothing here allocates.
 */
#define X6N_(a, b) a##_##b
#define X6N(a, b) X6N_(a, b)
#define X6_(x) X6N(F6_NAME, x)
#define X6Q_(x) X6N(F6_F2, x)
#define X6QT X6Q_(t)
#define X6P_(x) X6N(F6_FP, x)

typedef struct {
    X6QT c0, c1, c2;
} X6_(t);

/* FROB[j-1][k-1] = xi^(k (p^j - 1) / 6): the factor the p^j-Frobenius puts on the w^k
 * coordinate of Fp12 (w^2 = v); Fp6 uses k = 2 (for v) and k = 4 (for v^2). */
static const X6QT X6_(FROB)[3][5] = F6_FROB12;

/* r = a xi in Fp2, xi = k + u: (a0 + a1 u)(k + u) = (k a0 - a1) + (a0 + k a1) u. The tower
 * calls it in every product and squaring, so k a is formed by doublings (9 a = 2(2(2a)) + a):
 * 10 Fp additions for BN254 instead of 18 with repeated addition, 2 for BLS12-381. */
static inline void X6_(mul_xi)(X6QT *r, const X6QT *a)
{
#if F6_XI_C0 == 1
    X6P_(t) t0;
    X6P_(sub)(&t0, &a->c0, &a->c1);
    X6P_(add)(&r->c1, &a->c0, &a->c1);
    r->c0 = t0;
#else
    X6QT k = *a;
    int top = 31 - __builtin_clz((unsigned)F6_XI_C0);
    for (int i = top - 1; i >= 0; i--) {
        X6Q_(dbl)(&k, &k);
        if ((F6_XI_C0 >> i) & 1)
            X6Q_(add)(&k, &k, a);
    }
    X6P_(t) t0;
    X6P_(sub)(&t0, &k.c0, &a->c1);
    X6P_(add)(&r->c1, &a->c0, &k.c1);
    r->c0 = t0;
#endif
}

static inline void X6_(set_zero)(X6_(t) *r)
{
    X6Q_(set_zero)(&r->c0);
    X6Q_(set_zero)(&r->c1);
    X6Q_(set_zero)(&r->c2);
}

static inline void X6_(set_one)(X6_(t) *r)
{
    X6Q_(set_one)(&r->c0);
    X6Q_(set_zero)(&r->c1);
    X6Q_(set_zero)(&r->c2);
}

static inline int X6_(is_zero)(const X6_(t) *a)
{
    return X6Q_(is_zero)(&a->c0) && X6Q_(is_zero)(&a->c1) && X6Q_(is_zero)(&a->c2);
}

static inline int X6_(is_one)(const X6_(t) *a)
{
    return X6Q_(is_one)(&a->c0) && X6Q_(is_zero)(&a->c1) && X6Q_(is_zero)(&a->c2);
}

static inline int X6_(eq)(const X6_(t) *a, const X6_(t) *b)
{
    return X6Q_(eq)(&a->c0, &b->c0) && X6Q_(eq)(&a->c1, &b->c1) && X6Q_(eq)(&a->c2, &b->c2);
}

static inline void X6_(add)(X6_(t) *r, const X6_(t) *a, const X6_(t) *b)
{
    X6Q_(add)(&r->c0, &a->c0, &b->c0);
    X6Q_(add)(&r->c1, &a->c1, &b->c1);
    X6Q_(add)(&r->c2, &a->c2, &b->c2);
}

static inline void X6_(sub)(X6_(t) *r, const X6_(t) *a, const X6_(t) *b)
{
    X6Q_(sub)(&r->c0, &a->c0, &b->c0);
    X6Q_(sub)(&r->c1, &a->c1, &b->c1);
    X6Q_(sub)(&r->c2, &a->c2, &b->c2);
}

static inline void X6_(dbl)(X6_(t) *r, const X6_(t) *a)
{
    X6Q_(dbl)(&r->c0, &a->c0);
    X6Q_(dbl)(&r->c1, &a->c1);
    X6Q_(dbl)(&r->c2, &a->c2);
}

static inline void X6_(neg)(X6_(t) *r, const X6_(t) *a)
{
    X6Q_(neg)(&r->c0, &a->c0);
    X6Q_(neg)(&r->c1, &a->c1);
    X6Q_(neg)(&r->c2, &a->c2);
}

/* r = a * v: (a0 + a1 v + a2 v^2) v = xi a2 + a0 v + a1 v^2. */
static inline void X6_(mul_by_v)(X6_(t) *r, const X6_(t) *a)
{
    X6QT t;
    X6_(mul_xi)(&t, &a->c2);
    r->c2 = a->c1;
    r->c1 = a->c0;
    r->c0 = t;
}

static inline void X6_(mul_by_fp2)(X6_(t) *r, const X6_(t) *a, const X6QT *k)
{
    X6Q_(mul)(&r->c0, &a->c0, k);
    X6Q_(mul)(&r->c1, &a->c1, k);
    X6Q_(mul)(&r->c2, &a->c2, k);
}

/* Karatsuba: with t_i = a_i b_i,
 *   c0 = t0 + xi ((a1 + a2)(b1 + b2) - t1 - t2)
 *   c1 = (a0 + a1)(b0 + b1) - t0 - t1 + xi t2
 *   c2 = (a0 + a2)(b0 + b2) - t0 - t2 + t1.  r may alias a or b. */
static inline void X6_(mul)(X6_(t) *r, const X6_(t) *a, const X6_(t) *b)
{
    X6QT t0, t1, t2, s, u, c0, c1, c2;
    X6Q_(mul)(&t0, &a->c0, &b->c0);
    X6Q_(mul)(&t1, &a->c1, &b->c1);
    X6Q_(mul)(&t2, &a->c2, &b->c2);

    X6Q_(add)(&s, &a->c1, &a->c2);
    X6Q_(add)(&u, &b->c1, &b->c2);
    X6Q_(mul)(&s, &s, &u);
    X6Q_(sub)(&s, &s, &t1);
    X6Q_(sub)(&s, &s, &t2);
    X6_(mul_xi)(&s, &s);
    X6Q_(add)(&c0, &s, &t0);

    X6Q_(add)(&s, &a->c0, &a->c1);
    X6Q_(add)(&u, &b->c0, &b->c1);
    X6Q_(mul)(&s, &s, &u);
    X6Q_(sub)(&s, &s, &t0);
    X6Q_(sub)(&s, &s, &t1);
    X6_(mul_xi)(&u, &t2);
    X6Q_(add)(&c1, &s, &u);

    X6Q_(add)(&s, &a->c0, &a->c2);
    X6Q_(add)(&u, &b->c0, &b->c2);
    X6Q_(mul)(&s, &s, &u);
    X6Q_(sub)(&s, &s, &t0);
    X6Q_(sub)(&s, &s, &t2);
    X6Q_(add)(&c2, &s, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

/* CH-SQR2: s0 = a0^2, s1 = 2 a0 a1, s2 = (a0 - a1 + a2)^2, s3 = 2 a1 a2, s4 = a2^2;
 * c0 = s0 + xi s3, c1 = s1 + xi s4, c2 = s1 + s2 + s3 - s0 - s4. */
static inline void X6_(sqr)(X6_(t) *r, const X6_(t) *a)
{
    X6QT s0, s1, s2, s3, s4, t;
    X6Q_(sqr)(&s0, &a->c0);
    X6Q_(mul)(&s1, &a->c0, &a->c1);
    X6Q_(dbl)(&s1, &s1);
    X6Q_(sub)(&s2, &a->c0, &a->c1);
    X6Q_(add)(&s2, &s2, &a->c2);
    X6Q_(sqr)(&s2, &s2);
    X6Q_(mul)(&s3, &a->c1, &a->c2);
    X6Q_(dbl)(&s3, &s3);
    X6Q_(sqr)(&s4, &a->c2);

    X6_(mul_xi)(&t, &s3);
    X6Q_(add)(&r->c0, &s0, &t);
    X6Q_(add)(&t, &s1, &s2);
    X6Q_(add)(&t, &t, &s3);
    X6Q_(sub)(&t, &t, &s0);
    X6Q_(sub)(&r->c2, &t, &s4);
    X6_(mul_xi)(&t, &s4);
    X6Q_(add)(&r->c1, &s1, &t);
}

/* Sparse product by b0 + b1 v (the shape of a line's coefficients):
 *   c0 = a0 b0 + xi a2 b1, c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1, c2 = a1 b1 + a2 b0. */
static inline void X6_(mul_by_01)(X6_(t) *r, const X6_(t) *a, const X6QT *b0, const X6QT *b1)
{
    X6QT t0, t1, s, u, c0, c1, c2;
    X6Q_(mul)(&t0, &a->c0, b0);
    X6Q_(mul)(&t1, &a->c1, b1);

    X6Q_(mul)(&s, &a->c2, b1);
    X6_(mul_xi)(&s, &s);
    X6Q_(add)(&c0, &s, &t0);

    X6Q_(add)(&s, &a->c0, &a->c1);
    X6Q_(add)(&u, b0, b1);
    X6Q_(mul)(&s, &s, &u);
    X6Q_(sub)(&s, &s, &t0);
    X6Q_(sub)(&c1, &s, &t1);

    X6Q_(mul)(&s, &a->c2, b0);
    X6Q_(add)(&c2, &s, &t1);

    r->c0 = c0;
    r->c1 = c1;
    r->c2 = c2;
}

/* Sparse product by b1 v: (a0 + a1 v + a2 v^2) b1 v = xi a2 b1 + a0 b1 v + a1 b1 v^2. */
static inline void X6_(mul_by_1)(X6_(t) *r, const X6_(t) *a, const X6QT *b1)
{
    X6QT t;
    X6Q_(mul)(&t, &a->c2, b1);
    X6_(mul_xi)(&t, &t);
    X6Q_(mul)(&r->c2, &a->c1, b1);
    X6Q_(mul)(&r->c1, &a->c0, b1);
    r->c0 = t;
}

/* 1/a = (A + B v + C v^2) / F with A = a0^2 - xi a1 a2, B = xi a2^2 - a0 a1, C = a1^2 - a0 a2,
 * F = a0 A + xi (a2 B + a1 C) (the norm-like adjugate; inv(0) = 0 since Fp2 inv(0) = 0). */
static inline void X6_(inv)(X6_(t) *r, const X6_(t) *a)
{
    X6QT A, B, C, F, t;
    X6Q_(sqr)(&A, &a->c0);
    X6Q_(mul)(&t, &a->c1, &a->c2);
    X6_(mul_xi)(&t, &t);
    X6Q_(sub)(&A, &A, &t);

    X6Q_(sqr)(&B, &a->c2);
    X6_(mul_xi)(&B, &B);
    X6Q_(mul)(&t, &a->c0, &a->c1);
    X6Q_(sub)(&B, &B, &t);

    X6Q_(sqr)(&C, &a->c1);
    X6Q_(mul)(&t, &a->c0, &a->c2);
    X6Q_(sub)(&C, &C, &t);

    X6Q_(mul)(&F, &a->c2, &B);
    X6Q_(mul)(&t, &a->c1, &C);
    X6Q_(add)(&F, &F, &t);
    X6_(mul_xi)(&F, &F);
    X6Q_(mul)(&t, &a->c0, &A);
    X6Q_(add)(&F, &F, &t);
    X6Q_(inv)(&F, &F);

    X6Q_(mul)(&r->c0, &A, &F);
    X6Q_(mul)(&r->c1, &B, &F);
    X6Q_(mul)(&r->c2, &C, &F);
}

/* r = a^(p^j), j = 1, 2 or 3: conj^j on each Fp2 coordinate, then v^(p^j) = FROB[j-1][1] v
 * and (v^2)^(p^j) = FROB[j-1][3] v^2. */
static inline void X6_(frob)(X6_(t) *r, const X6_(t) *a, int j)
{
    X6QT c0 = a->c0, c1 = a->c1, c2 = a->c2;
    if (j & 1) {
        X6Q_(conj)(&c0, &c0);
        X6Q_(conj)(&c1, &c1);
        X6Q_(conj)(&c2, &c2);
    }
    r->c0 = c0;
    X6Q_(mul)(&r->c1, &c1, &X6_(FROB)[j - 1][1]);
    X6Q_(mul)(&r->c2, &c2, &X6_(FROB)[j - 1][3]);
}

#undef F6_NAME
#undef F6_F2
#undef F6_FP
#undef F6_XI_C0
#undef F6_FROB12
