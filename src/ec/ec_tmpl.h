/*
 * Short Weierstrass curves y^2 = x^3 + b (a = 0) over a field F, written once and instantiated
 * for G1 (over Fp) and G2 (over Fp2) of both curves (ec.h).
 *
 * Parameters: EC_NAME (bn254_g1, ...), EC_F (field prefix: bn254_fp, bn254_fp2, ...),
 * EC_B, EC_GEN_X, EC_GEN_Y (initializers of the field constants, from ec_params.h).
 *
 * Affine points use (0, 0) for the point at infinity: (0, 0) is on none of these curves (b != 0),
 * and it is exactly snarkjs's encoding, so SRS arrays map to NAME_affine arrays byte for byte.
 * Jacobian (X, Y, Z) represents (X/Z^2, Y/Z^3); Z = 0 is infinity.
 * Formulas: dbl-2009-l, add-2007-bl, madd-2007-bl from the Explicit-Formulas Database
 * (hyperelliptic.org/EFD/g1p/auto-shortw-jacobian-0.html).
 */
#define ECN_(a, b) a##_##b
#define ECN(a, b) ECN_(a, b)
#define EC_(x) ECN(EC_NAME, x)
#define ECF_(x) ECN(EC_F, x)
#define ECFT ECF_(t)

typedef struct {
    ECFT x, y;
} EC_(affine);

typedef struct {
    ECFT X, Y, Z;
} EC_(jac);

static const ECFT EC_(B) = EC_B;
static const EC_(affine) EC_(GEN) = {EC_GEN_X, EC_GEN_Y};

static inline int EC_(affine_is_inf)(const EC_(affine) *p)
{
    return ECF_(is_zero)(&p->x) && ECF_(is_zero)(&p->y);
}

static inline void EC_(affine_set_inf)(EC_(affine) *p)
{
    ECF_(set_zero)(&p->x);
    ECF_(set_zero)(&p->y);
}

static inline int EC_(is_inf)(const EC_(jac) *p) { return ECF_(is_zero)(&p->Z); }

static inline void EC_(set_inf)(EC_(jac) *p)
{
    ECF_(set_one)(&p->X);
    ECF_(set_one)(&p->Y);
    ECF_(set_zero)(&p->Z);
}

static inline void EC_(from_affine)(EC_(jac) *r, const EC_(affine) *a)
{
    if (EC_(affine_is_inf)(a)) {
        EC_(set_inf)(r);
        return;
    }
    r->X = a->x;
    r->Y = a->y;
    ECF_(set_one)(&r->Z);
}

/* y^2 == x^3 + b; the point at infinity counts as on the curve. */
static inline int EC_(affine_is_on_curve)(const EC_(affine) *a)
{
    if (EC_(affine_is_inf)(a))
        return 1;
    ECFT l, r;
    ECF_(sqr)(&l, &a->y);
    ECF_(sqr)(&r, &a->x);
    ECF_(mul)(&r, &r, &a->x);
    ECF_(add)(&r, &r, &EC_(B));
    return ECF_(eq)(&l, &r);
}

/* Y^2 == X^3 + b Z^6. */
static inline int EC_(is_on_curve)(const EC_(jac) *p)
{
    if (EC_(is_inf)(p))
        return 1;
    ECFT l, r, z2, z6;
    ECF_(sqr)(&l, &p->Y);
    ECF_(sqr)(&r, &p->X);
    ECF_(mul)(&r, &r, &p->X);
    ECF_(sqr)(&z2, &p->Z);
    ECF_(sqr)(&z6, &z2);
    ECF_(mul)(&z6, &z6, &z2);
    ECF_(mul)(&z6, &z6, &EC_(B));
    ECF_(add)(&r, &r, &z6);
    return ECF_(eq)(&l, &r);
}

static inline void EC_(neg)(EC_(jac) *r, const EC_(jac) *p)
{
    r->X = p->X;
    ECF_(neg)(&r->Y, &p->Y);
    r->Z = p->Z;
}

static inline void EC_(affine_neg)(EC_(affine) *r, const EC_(affine) *p)
{
    r->x = p->x;
    ECF_(neg)(&r->y, &p->y);
}

static inline void EC_(dbl)(EC_(jac) *r, const EC_(jac) *p)
{
    if (EC_(is_inf)(p)) {
        *r = *p;
        return;
    }
    ECFT A, B, C, D, E, F, t;
    ECF_(sqr)(&A, &p->X);
    ECF_(sqr)(&B, &p->Y);
    ECF_(sqr)(&C, &B);
    ECF_(add)(&t, &p->X, &B);
    ECF_(sqr)(&t, &t);
    ECF_(sub)(&t, &t, &A);
    ECF_(sub)(&t, &t, &C);
    ECF_(dbl)(&D, &t);
    ECF_(dbl)(&E, &A);
    ECF_(add)(&E, &E, &A);
    ECF_(sqr)(&F, &E);
    /* Z3 first: r may alias p. */
    ECF_(mul)(&t, &p->Y, &p->Z);
    ECF_(dbl)(&r->Z, &t);
    ECF_(dbl)(&t, &D);
    ECF_(sub)(&r->X, &F, &t);
    ECF_(sub)(&t, &D, &r->X);
    ECF_(mul)(&t, &E, &t);
    ECF_(dbl)(&C, &C);
    ECF_(dbl)(&C, &C);
    ECF_(dbl)(&C, &C);
    ECF_(sub)(&r->Y, &t, &C);
}

static inline void EC_(add)(EC_(jac) *r, const EC_(jac) *p, const EC_(jac) *q)
{
    if (EC_(is_inf)(p)) {
        *r = *q;
        return;
    }
    if (EC_(is_inf)(q)) {
        *r = *p;
        return;
    }
    ECFT Z1Z1, Z2Z2, U1, U2, S1, S2, H, I, J, R, V, t;
    ECF_(sqr)(&Z1Z1, &p->Z);
    ECF_(sqr)(&Z2Z2, &q->Z);
    ECF_(mul)(&U1, &p->X, &Z2Z2);
    ECF_(mul)(&U2, &q->X, &Z1Z1);
    ECF_(mul)(&S1, &p->Y, &q->Z);
    ECF_(mul)(&S1, &S1, &Z2Z2);
    ECF_(mul)(&S2, &q->Y, &p->Z);
    ECF_(mul)(&S2, &S2, &Z1Z1);
    ECF_(sub)(&H, &U2, &U1);
    ECF_(sub)(&R, &S2, &S1);
    if (ECF_(is_zero)(&H)) {
        if (ECF_(is_zero)(&R)) {
            EC_(dbl)(r, p);
        } else {
            EC_(set_inf)(r);
        }
        return;
    }
    ECF_(dbl)(&I, &H);
    ECF_(sqr)(&I, &I);
    ECF_(mul)(&J, &H, &I);
    ECF_(dbl)(&R, &R);
    ECF_(mul)(&V, &U1, &I);
    /* Z3 = ((Z1 + Z2)^2 - Z1Z1 - Z2Z2) H, before X3/Y3 overwrite r (r may alias p or q). */
    ECF_(add)(&t, &p->Z, &q->Z);
    ECF_(sqr)(&t, &t);
    ECF_(sub)(&t, &t, &Z1Z1);
    ECF_(sub)(&t, &t, &Z2Z2);
    ECF_(mul)(&r->Z, &t, &H);
    ECF_(sqr)(&r->X, &R);
    ECF_(sub)(&r->X, &r->X, &J);
    ECF_(dbl)(&t, &V);
    ECF_(sub)(&r->X, &r->X, &t);
    ECF_(sub)(&t, &V, &r->X);
    ECF_(mul)(&t, &R, &t);
    ECF_(mul)(&S1, &S1, &J);
    ECF_(dbl)(&S1, &S1);
    ECF_(sub)(&r->Y, &t, &S1);
}

/* Mixed addition r = p + q with q affine. */
static inline void EC_(add_affine)(EC_(jac) *r, const EC_(jac) *p, const EC_(affine) *q)
{
    if (EC_(affine_is_inf)(q)) {
        *r = *p;
        return;
    }
    if (EC_(is_inf)(p)) {
        EC_(from_affine)(r, q);
        return;
    }
    ECFT Z1Z1, U2, S2, H, HH, I, J, R, V, t;
    ECF_(sqr)(&Z1Z1, &p->Z);
    ECF_(mul)(&U2, &q->x, &Z1Z1);
    ECF_(mul)(&S2, &q->y, &p->Z);
    ECF_(mul)(&S2, &S2, &Z1Z1);
    ECF_(sub)(&H, &U2, &p->X);
    ECF_(sub)(&R, &S2, &p->Y);
    if (ECF_(is_zero)(&H)) {
        if (ECF_(is_zero)(&R)) {
            EC_(dbl)(r, p);
        } else {
            EC_(set_inf)(r);
        }
        return;
    }
    ECF_(sqr)(&HH, &H);
    ECF_(dbl)(&I, &HH);
    ECF_(dbl)(&I, &I);
    ECF_(mul)(&J, &H, &I);
    ECF_(dbl)(&R, &R);
    ECF_(mul)(&V, &p->X, &I);
    ECFT Y1 = p->Y;
    ECF_(add)(&t, &p->Z, &H);
    ECF_(sqr)(&t, &t);
    ECF_(sub)(&t, &t, &Z1Z1);
    ECF_(sub)(&r->Z, &t, &HH);
    ECF_(sqr)(&r->X, &R);
    ECF_(sub)(&r->X, &r->X, &J);
    ECF_(dbl)(&t, &V);
    ECF_(sub)(&r->X, &r->X, &t);
    ECF_(sub)(&t, &V, &r->X);
    ECF_(mul)(&t, &R, &t);
    ECF_(mul)(&Y1, &Y1, &J);
    ECF_(dbl)(&Y1, &Y1);
    ECF_(sub)(&r->Y, &t, &Y1);
}

static inline void EC_(to_affine)(EC_(affine) *r, const EC_(jac) *p)
{
    if (EC_(is_inf)(p)) {
        EC_(affine_set_inf)(r);
        return;
    }
    ECFT zi, zi2, zi3;
    ECF_(inv)(&zi, &p->Z);
    ECF_(sqr)(&zi2, &zi);
    ECF_(mul)(&zi3, &zi2, &zi);
    ECF_(mul)(&r->x, &p->X, &zi2);
    ECF_(mul)(&r->y, &p->Y, &zi3);
}

/* Normalises n Jacobian points with one inversion (Montgomery's trick). scratch: n field
 * elements. Points at infinity become (0, 0). */
static inline void EC_(batch_to_affine)(EC_(affine) *r, const EC_(jac) *p, size_t n, ECFT *scratch)
{
    ECFT acc;
    ECF_(set_one)(&acc);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!EC_(is_inf)(&p[i]))
            ECF_(mul)(&acc, &acc, &p[i].Z);
    }
    ECF_(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (EC_(is_inf)(&p[i])) {
            EC_(affine_set_inf)(&r[i]);
            continue;
        }
        ECFT zi, zi2, zi3;
        ECF_(mul)(&zi, &acc, &scratch[i]);
        ECF_(mul)(&acc, &acc, &p[i].Z);
        ECF_(sqr)(&zi2, &zi);
        ECF_(mul)(&zi3, &zi2, &zi);
        ECFT Y = p[i].Y;
        ECF_(mul)(&r[i].x, &p[i].X, &zi2);
        ECF_(mul)(&r[i].y, &Y, &zi3);
    }
}

/* Projective equality: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3. */
static inline int EC_(eq)(const EC_(jac) *p, const EC_(jac) *q)
{
    int ip = EC_(is_inf)(p), iq = EC_(is_inf)(q);
    if (ip || iq)
        return ip && iq;
    ECFT z1, z2, a, b;
    ECF_(sqr)(&z1, &p->Z);
    ECF_(sqr)(&z2, &q->Z);
    ECF_(mul)(&a, &p->X, &z2);
    ECF_(mul)(&b, &q->X, &z1);
    if (!ECF_(eq)(&a, &b))
        return 0;
    ECF_(mul)(&z1, &z1, &p->Z);
    ECF_(mul)(&z2, &z2, &q->Z);
    ECF_(mul)(&a, &p->Y, &z2);
    ECF_(mul)(&b, &q->Y, &z1);
    return ECF_(eq)(&a, &b);
}

static inline int EC_(affine_eq)(const EC_(affine) *p, const EC_(affine) *q)
{
    return ECF_(eq)(&p->x, &q->x) && ECF_(eq)(&p->y, &q->y);
}

/* r = k * p for a little-endian limb scalar k of nlimbs limbs (any size; not constant time:
 * used for tests, setup and verification, never for secret scalars in a timing-sensitive
 * setting). */
static inline void EC_(mul_limbs)(EC_(jac) *r, const EC_(jac) *p, const uint64_t *k, int nlimbs)
{
    EC_(jac) acc, base = *p;
    EC_(set_inf)(&acc);
    for (int i = nlimbs - 1; i >= 0; i--)
        for (int b = 63; b >= 0; b--) {
            EC_(dbl)(&acc, &acc);
            if ((k[i] >> b) & 1)
                EC_(add)(&acc, &acc, &base);
        }
    *r = acc;
}

#undef EC_NAME
#undef EC_F
#undef EC_B
#undef EC_GEN_X
#undef EC_GEN_Y
