/*
 * Extended Jacobian ("XYZZ") coordinates for short Weierstrass curves with a = 0, written once
 * and instantiated for the four groups (xyzz.h). Used for MSM bucket accumulation: a mixed
 * addition costs 8M + 2S and needs no doubling-specific case in the common path.
 *
 * A point (X, Y, ZZ, ZZZ) represents the affine point (X/ZZ, Y/ZZZ); every formula output
 * keeps the invariant ZZ^3 = ZZZ^2. ZZ = 0 is the point at infinity (then ZZZ = 0 too).
 *
 * Formulas from the Explicit-Formulas Database, hyperelliptic.org/EFD/g1p/auto-shortw-xyzz.html:
 * madd-2008-s (mixed add, Z2 = 1), add-2008-s, dbl-2008-s-1, mdbl-2008-s-1 (a = 0 dropped).
 * These additions are incomplete: P + P and P + (-P) are detected (P = R = 0 resp. P = 0)
 * and routed to the doubling or to infinity.
 *
 * Parameters: XZ_NAME (bn254_g1 ...: the group prefix of ec_tmpl.h), XZ_F (its field prefix).
 */
#define XZN_(a, b) a##_##b
#define XZN(a, b) XZN_(a, b)
#define XZ_(x) XZN(XZ_NAME, x)
#define XZF_(x) XZN(XZ_F, x)
#define XZFT XZF_(t)

typedef struct {
    XZFT X, Y, ZZ, ZZZ;
} XZ_(xyzz);

static inline int XZ_(xyzz_is_inf)(const XZ_(xyzz) *p) { return XZF_(is_zero)(&p->ZZ); }

static inline void XZ_(xyzz_set_inf)(XZ_(xyzz) *p)
{
    XZF_(set_one)(&p->X);
    XZF_(set_one)(&p->Y);
    XZF_(set_zero)(&p->ZZ);
    XZF_(set_zero)(&p->ZZZ);
}

static inline void XZ_(xyzz_from_affine)(XZ_(xyzz) *r, const XZ_(affine) *a)
{
    if (XZ_(affine_is_inf)(a)) {
        XZ_(xyzz_set_inf)(r);
        return;
    }
    r->X = a->x;
    r->Y = a->y;
    XZF_(set_one)(&r->ZZ);
    XZF_(set_one)(&r->ZZZ);
}

/* r = 2 * a for affine a (mdbl-2008-s-1): U = 2y, V = U^2, W = U V, S = x V, M = 3x^2,
 * X3 = M^2 - 2S, Y3 = M (S - X3) - W y, ZZ3 = V, ZZZ3 = W. */
static inline void XZ_(xyzz_dbl_affine)(XZ_(xyzz) *r, const XZ_(affine) *a)
{
    if (XZF_(is_zero)(&a->y)) { /* covers infinity (0, 0); no 2-torsion on these curves */
        XZ_(xyzz_set_inf)(r);
        return;
    }
    XZFT U, V, W, S, M, t;
    XZF_(dbl)(&U, &a->y);
    XZF_(sqr)(&V, &U);
    XZF_(mul)(&W, &U, &V);
    XZF_(mul)(&S, &a->x, &V);
    XZF_(sqr)(&t, &a->x);
    XZF_(dbl)(&M, &t);
    XZF_(add)(&M, &M, &t);
    XZF_(sqr)(&r->X, &M);
    XZF_(dbl)(&t, &S);
    XZF_(sub)(&r->X, &r->X, &t);
    XZF_(sub)(&t, &S, &r->X);
    XZF_(mul)(&t, &M, &t);
    XZF_(mul)(&U, &W, &a->y);
    XZF_(sub)(&r->Y, &t, &U);
    r->ZZ = V;
    r->ZZZ = W;
}

/* r = 2 * p (dbl-2008-s-1); r may alias p. */
static inline void XZ_(xyzz_dbl)(XZ_(xyzz) *r, const XZ_(xyzz) *p)
{
    if (XZ_(xyzz_is_inf)(p) || XZF_(is_zero)(&p->Y)) {
        XZ_(xyzz_set_inf)(r);
        return;
    }
    XZFT U, V, W, S, M, t;
    XZF_(dbl)(&U, &p->Y);
    XZF_(sqr)(&V, &U);
    XZF_(mul)(&W, &U, &V);
    XZF_(mul)(&S, &p->X, &V);
    XZF_(sqr)(&t, &p->X);
    XZF_(dbl)(&M, &t);
    XZF_(add)(&M, &M, &t);
    XZF_(mul)(&r->ZZ, &V, &p->ZZ);
    XZF_(mul)(&U, &W, &p->Y);
    XZF_(mul)(&r->ZZZ, &W, &p->ZZZ);
    XZF_(sqr)(&r->X, &M);
    XZF_(dbl)(&t, &S);
    XZF_(sub)(&r->X, &r->X, &t);
    XZF_(sub)(&t, &S, &r->X);
    XZF_(mul)(&t, &M, &t);
    XZF_(sub)(&r->Y, &t, &U);
}

/* r = p + q with q affine (madd-2008-s); r may alias p. q may be (0, 0) = infinity. */
static inline void XZ_(xyzz_add_affine)(XZ_(xyzz) *r, const XZ_(xyzz) *p, const XZ_(affine) *q)
{
    if (XZ_(affine_is_inf)(q)) {
        if (r != p)
            *r = *p;
        return;
    }
    if (XZ_(xyzz_is_inf)(p)) {
        XZ_(xyzz_from_affine)(r, q);
        return;
    }
    XZFT U2, S2, P, R, PP, PPP, Q, t;
    XZF_(mul)(&U2, &q->x, &p->ZZ);
    XZF_(mul)(&S2, &q->y, &p->ZZZ);
    XZF_(sub)(&P, &U2, &p->X);
    XZF_(sub)(&R, &S2, &p->Y);
    if (XZF_(is_zero)(&P)) {
        if (XZF_(is_zero)(&R))
            XZ_(xyzz_dbl_affine)(r, q);
        else
            XZ_(xyzz_set_inf)(r);
        return;
    }
    XZF_(sqr)(&PP, &P);
    XZF_(mul)(&PPP, &P, &PP);
    XZF_(mul)(&Q, &p->X, &PP);
    XZF_(mul)(&r->ZZ, &p->ZZ, &PP);
    XZF_(mul)(&r->ZZZ, &p->ZZZ, &PPP);
    XZF_(mul)(&S2, &PPP, &p->Y); /* Y1 PPP, before Y3 overwrites p->Y (r may alias p) */
    XZF_(sqr)(&t, &R);
    XZF_(sub)(&t, &t, &PPP);
    XZF_(sub)(&t, &t, &Q);
    XZF_(sub)(&r->X, &t, &Q);
    XZF_(sub)(&t, &Q, &r->X);
    XZF_(mul)(&t, &R, &t);
    XZF_(sub)(&r->Y, &t, &S2);
}

/* r = p - q with q affine: the same as adding (x, -y). */
static inline void XZ_(xyzz_sub_affine)(XZ_(xyzz) *r, const XZ_(xyzz) *p, const XZ_(affine) *q)
{
    XZ_(affine) nq;
    XZ_(affine_neg)(&nq, q);
    XZ_(xyzz_add_affine)(r, p, &nq);
}

/* r = p + q (add-2008-s); r may alias p or q. */
static inline void XZ_(xyzz_add)(XZ_(xyzz) *r, const XZ_(xyzz) *p, const XZ_(xyzz) *q)
{
    if (XZ_(xyzz_is_inf)(q)) {
        if (r != p)
            *r = *p;
        return;
    }
    if (XZ_(xyzz_is_inf)(p)) {
        if (r != q)
            *r = *q;
        return;
    }
    XZFT U1, U2, S1, S2, P, R, PP, PPP, Q, t;
    XZF_(mul)(&U1, &p->X, &q->ZZ);
    XZF_(mul)(&U2, &q->X, &p->ZZ);
    XZF_(mul)(&S1, &p->Y, &q->ZZZ);
    XZF_(mul)(&S2, &q->Y, &p->ZZZ);
    XZF_(sub)(&P, &U2, &U1);
    XZF_(sub)(&R, &S2, &S1);
    if (XZF_(is_zero)(&P)) {
        if (XZF_(is_zero)(&R))
            XZ_(xyzz_dbl)(r, p);
        else
            XZ_(xyzz_set_inf)(r);
        return;
    }
    XZF_(sqr)(&PP, &P);
    XZF_(mul)(&PPP, &P, &PP);
    XZF_(mul)(&Q, &U1, &PP);
    XZF_(mul)(&t, &p->ZZ, &q->ZZ);
    XZF_(mul)(&r->ZZ, &t, &PP);
    XZF_(mul)(&t, &p->ZZZ, &q->ZZZ);
    XZF_(mul)(&r->ZZZ, &t, &PPP);
    XZF_(mul)(&S1, &S1, &PPP);
    XZF_(sqr)(&t, &R);
    XZF_(sub)(&t, &t, &PPP);
    XZF_(sub)(&t, &t, &Q);
    XZF_(sub)(&r->X, &t, &Q);
    XZF_(sub)(&t, &Q, &r->X);
    XZF_(mul)(&t, &R, &t);
    XZF_(sub)(&r->Y, &t, &S1);
}

/* To Jacobian without inversion: with ZZZ^2 = ZZ^3, (X ZZ^2, Y ZZZ^2, ZZZ) is the same point
 * (X ZZ^2 / ZZZ^2 = X / ZZ and Y ZZZ^2 / ZZZ^3 = Y / ZZZ). */
static inline void XZ_(xyzz_to_jac)(XZ_(jac) *r, const XZ_(xyzz) *p)
{
    if (XZ_(xyzz_is_inf)(p)) {
        XZ_(set_inf)(r);
        return;
    }
    XZFT t;
    XZF_(sqr)(&t, &p->ZZ);
    XZF_(mul)(&r->X, &p->X, &t);
    XZF_(sqr)(&t, &p->ZZZ);
    XZF_(mul)(&r->Y, &p->Y, &t);
    r->Z = p->ZZZ;
}

/* From Jacobian: ZZ = Z^2, ZZZ = Z^3. */
static inline void XZ_(xyzz_from_jac)(XZ_(xyzz) *r, const XZ_(jac) *p)
{
    if (XZ_(is_inf)(p)) {
        XZ_(xyzz_set_inf)(r);
        return;
    }
    r->X = p->X;
    r->Y = p->Y;
    XZF_(sqr)(&r->ZZ, &p->Z);
    XZF_(mul)(&r->ZZZ, &r->ZZ, &p->Z);
}

/* To affine with one inversion: x = X / ZZ, y = Y / ZZZ, and 1/ZZ = (1/ZZZ)^2 ZZ^2. */
static inline void XZ_(xyzz_to_affine)(XZ_(affine) *r, const XZ_(xyzz) *p)
{
    if (XZ_(xyzz_is_inf)(p)) {
        XZ_(affine_set_inf)(r);
        return;
    }
    XZFT zi, zzi, t;
    XZF_(inv)(&zi, &p->ZZZ);
    XZF_(mul)(&r->y, &p->Y, &zi);
    XZF_(sqr)(&t, &zi);
    XZF_(sqr)(&zzi, &p->ZZ);
    XZF_(mul)(&zzi, &zzi, &t);
    XZF_(mul)(&r->x, &p->X, &zzi);
}

#undef XZ_NAME
#undef XZ_F
