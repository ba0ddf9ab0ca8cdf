/*
 * Quadratic extension Fp2 = Fp[u]/(u^2 + 1), the same for BN254 and BLS12-381 (-1 is a
 * non-residue mod both p, as p = 3 mod 4). Same API shape as a prime field (ff_tmpl.h) so
 * the curve template instantiates G2 over it exactly as G1 over Fp.
 *
 * Parameters: F2_NAME (bn254_fp2 | bls12_381_fp2), F2_BASE (bn254_fp | bls12_381_fp),
 * F2_XI_C0 (the c0 of the sextic non-residue xi = c0 + u used by the Fp6 tower: 9 | 1).
 */
#define F2N_(a, b) a##_##b
#define F2N(a, b) F2N_(a, b)
#define F2_(x) F2N(F2_NAME, x)
#define FB_(x) F2N(F2_BASE, x)

typedef struct {
    FB_(t) c0, c1;
} F2_(t);

static const F2_(t) F2_(ZERO) = {{{0}}, {{0}}};

static inline void F2_(set_zero)(F2_(t) *r) { *r = F2_(ZERO); }
static inline void F2_(set_one)(F2_(t) *r)
{
    r->c0 = FB_(ONE);
    r->c1 = FB_(ZERO);
}

static FF_INLINE_ void F2_(add)(F2_(t) *r, const F2_(t) *a, const F2_(t) *b)
{
    FB_(add)(&r->c0, &a->c0, &b->c0);
    FB_(add)(&r->c1, &a->c1, &b->c1);
}

static FF_INLINE_ void F2_(sub)(F2_(t) *r, const F2_(t) *a, const F2_(t) *b)
{
    FB_(sub)(&r->c0, &a->c0, &b->c0);
    FB_(sub)(&r->c1, &a->c1, &b->c1);
}

static FF_INLINE_ void F2_(dbl)(F2_(t) *r, const F2_(t) *a)
{
    FB_(dbl)(&r->c0, &a->c0);
    FB_(dbl)(&r->c1, &a->c1);
}

static FF_INLINE_ void F2_(neg)(F2_(t) *r, const F2_(t) *a)
{
    FB_(neg)(&r->c0, &a->c0);
    FB_(neg)(&r->c1, &a->c1);
}

/* Complex conjugate, which is also the p-power Frobenius on Fp2. */
static inline void F2_(conj)(F2_(t) *r, const F2_(t) *a)
{
    r->c0 = a->c0;
    FB_(neg)(&r->c1, &a->c1);
}

static inline int F2_(is_zero)(const F2_(t) *a) { return FB_(is_zero)(&a->c0) && FB_(is_zero)(&a->c1); }
static inline int F2_(eq)(const F2_(t) *a, const F2_(t) *b)
{
    return FB_(eq)(&a->c0, &b->c0) && FB_(eq)(&a->c1, &b->c1);
}
static inline int F2_(is_one)(const F2_(t) *a) { return FB_(is_one)(&a->c0) && FB_(is_zero)(&a->c1); }

/* Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u.
 * With the x86-64 kernels, in one assembly routine with lazy reduction (three double-width
 * products, two Montgomery reductions; scripts/gen-ff-asm.py). */
static FF_INLINE_ void F2_(mul)(F2_(t) *r, const F2_(t) *a, const F2_(t) *b)
{
#if CUZK_FF_HAVE_ASM && defined(F2_ASM_N)
    if (cuzk__ff_use_asm) {
        F2N(cuzk__fp2_mul_asm, F2_ASM_N)((uint64_t *)r, (const uint64_t *)a,
                                         (const uint64_t *)b, FB_(P).l, F2_N0);
        return;
    }
#endif
    FB_(t) t0, t1, s0, s1;
    FB_(mul)(&t0, &a->c0, &b->c0);
    FB_(mul)(&t1, &a->c1, &b->c1);
    FB_(add)(&s0, &a->c0, &a->c1);
    FB_(add)(&s1, &b->c0, &b->c1);
    FB_(mul)(&s0, &s0, &s1);
    FB_(sub)(&r->c0, &t0, &t1);
    FB_(sub)(&s0, &s0, &t0);
    FB_(sub)(&r->c1, &s0, &t1);
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u. */
static FF_INLINE_ void F2_(sqr)(F2_(t) *r, const F2_(t) *a)
{
    FB_(t) s, d, m;
    FB_(add)(&s, &a->c0, &a->c1);
    FB_(sub)(&d, &a->c0, &a->c1);
    FB_(mul)(&m, &a->c0, &a->c1);
    FB_(mul)(&r->c0, &s, &d);
    FB_(dbl)(&r->c1, &m);
}

static inline void F2_(mul_by_fp)(F2_(t) *r, const F2_(t) *a, const FB_(t) *k)
{
    FB_(mul)(&r->c0, &a->c0, k);
    FB_(mul)(&r->c1, &a->c1, k);
}

/* r = a * xi, xi = F2_XI_C0 + u: (a0 + a1 u)(k + u) = (k a0 - a1) + (a0 + k a1) u. */
static inline void F2_(mul_by_xi)(F2_(t) *r, const F2_(t) *a)
{
    FB_(t) ka0 = a->c0, ka1 = a->c1, t0;
    for (int i = 1; i < F2_XI_C0; i++) {
        FB_(add)(&ka0, &ka0, &a->c0);
        FB_(add)(&ka1, &ka1, &a->c1);
    }
    FB_(sub)(&t0, &ka0, &a->c1);
    FB_(add)(&r->c1, &a->c0, &ka1);
    r->c0 = t0;
}

/* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2); inv(0) = 0. */
static inline void F2_(inv)(F2_(t) *r, const F2_(t) *a)
{
    FB_(t) n, t;
    FB_(sqr)(&n, &a->c0);
    FB_(sqr)(&t, &a->c1);
    FB_(add)(&n, &n, &t);
    FB_(inv)(&n, &n);
    FB_(mul)(&r->c0, &a->c0, &n);
    FB_(mul)(&t, &a->c1, &n);
    FB_(neg)(&r->c1, &t);
}

static inline void F2_(from_u64)(F2_(t) *r, uint64_t v)
{
    FB_(from_u64)(&r->c0, v);
    r->c1 = FB_(ZERO);
}

#undef F2_NAME
#undef F2_BASE
#undef F2_XI_C0
#undef F2_ASM_N
#undef F2_N0
