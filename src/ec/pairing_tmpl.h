/*
 * Optimal ate pairing e: G1 x G2 -> GT for BN254 and BLS12-381, written once and instantiated
 * per curve by pairing.h (declarations) and pairing.c (definitions, with PAIRING_IMPL).
 *
 * Parameters: PR_NAME (bn254 | bls12_381), PR_BN (1: BN loop 6x + 2 with the two Frobenius
 * lines and a D-type twist; 0: BLS12 loop |x| with x < 0 and an M-type twist).
 *
 * Miller loop. T runs over multiples of Q in homogeneous projective coordinates on the twist
 * E': y^2 = x^3 + b' (x = X/Z, y = Y/Z) with the doubling and mixed-addition formulas of
 * Costello, Lange, Naehrig, "Faster pairing computations on curves with high-degree twists"
 * (PKC 2010) in the form of Aranha, Karabina, Longa, Gebotys, Lopez, "Faster explicit formulas
 * for computing pairings over ordinary curves" (EUROCRYPT 2011). Each step also
 * gives the line through T (and Q) evaluated at P = (xP, yP), scaled by a factor in Fp2, which
 * the final exponentiation removes. Untwisting:
 *   D-type (BN254, b' = b/xi): (x', y') -> (x' w^2, y' w^3); a line with slope s' w is
 *     yP - s' xP w + (s' x' - y') w^3: coordinates w^0, w^1, w^3 (mul_by_034);
 *   M-type (BLS12-381, b' = b xi): (x', y') -> (x' w^-2, y' w^-3); the line times w^3 (w^3 lies
 *     in Fp4, which the final exponentiation also removes) is
 *     (s' x' - y') - s' xP w^2 + yP w^3: coordinates w^0, w^2, w^3 (mul_by_014).
 * Doubling: with B = Y^2, E = 3 b' Z^2, H = 2 Y Z the tangent is H yP, -3 X^2 xP, B - E.
 * Addition of Q = (x2, y2): with th = Y - y2 Z, la = X - x2 Z it is la yP, -th xP,
 * th x2 - la y2.
 *
 * BN254 (x > 0): f = f_{6x+2,Q}(P) l_{T,psi(Q)}(P) l_{T+psi(Q),-psi^2(Q)}(P), 6x + 2 in NAF;
 * psi(x', y') = (conj(x') xi^((p-1)/3), conj(y') xi^((p-1)/2)) is the p-Frobenius on the twist.
 * BLS12-381: f = conj(f_{|x|,Q}(P)) (x < 0; the conjugate equals 1/f after the final
 * exponentiation, and the vertical line of [x]Q is removed by it).
 *
 * Final exponentiation by (p^12 - 1)/r: the easy part (p^6 - 1)(p^2 + 1) by a conjugation, one
 * inversion and a p^2-Frobenius, then the hard part (p^4 - p^2 + 1)/r. The fast hard part
 * (final_exp) uses x-based chains that compute a fixed power m of the pairing, m coprime to r
 * (see scripts/gen-constants.py --tower: BN254 m = 2x(6x^2 + 3x + 1), Fuentes-Castaneda et al.
 * 2011; BLS12-381 m = 3, Hayashida et al. 2020), so NAME_pairing(P, Q) = e(P, Q)^m. This is
 * the same value @noble/curves and arkworks return. final_exp_plain gives e(P, Q) itself.
 * Either is bilinear and non-degenerate, and "product == 1" is the same test for both.
 *
 * Inputs are affine points in the prime-order subgroups (the caller checks subgroup
 * membership); the point at infinity ((0, 0)) contributes a factor 1. No allocation: the
 * multi-pairing walks its input in chunks of PAIRING_CHUNK pairs kept on the stack.
 */
#define PRN_(a, b) a##_##b
#define PRN(a, b) PRN_(a, b)
#define PR_(x) PRN(PR_NAME, x)

#ifndef PAIRING_CHUNK
#define PAIRING_CHUNK 8
#endif

/* f = the product over i < n of the Miller loop values of (P[i], Q[i]) (before the final
 * exponentiation). */
void PR_(miller_loop)(PR_(fp12_t) *f, const PR_(g1_affine) *P, const PR_(g2_affine) *Q, size_t n);
/* r = f^((p^12 - 1)/r * m) (fast; m as above). */
void PR_(final_exp)(PR_(fp12_t) *r, const PR_(fp12_t) *f);
/* r = f^((p^12 - 1)/r) (plain exponentiation of the hard part; slow, for tests). */
void PR_(final_exp_plain)(PR_(fp12_t) *r, const PR_(fp12_t) *f);
/* out = e(P, Q)^m. */
void PR_(pairing)(PR_(fp12_t) *out, const PR_(g1_affine) *P, const PR_(g2_affine) *Q);
/* out = prod_i e(P[i], Q[i])^m with one final exponentiation. */
void PR_(multi_pairing)(PR_(fp12_t) *out, const PR_(g1_affine) *P, const PR_(g2_affine) *Q,
                        size_t n);
/* 1 if prod_i e(P[i], Q[i]) == 1 (n = 0 gives 1). */
int PR_(multi_pairing_is_one)(const PR_(g1_affine) *P, const PR_(g2_affine) *Q, size_t n);

#ifdef PAIRING_IMPL

typedef struct {
    PR_(fp2_t) X, Y, Z;
} PR_(g2_proj);

static const PR_(fp2_t) PR_(TWIST_B3) = PRN(PR_UPPER, TWIST_B3);

/* r = a / 2 in Fp: a + (a odd ? p : 0) is even and below 2p < 2^(64n), then shift. */
static inline void PR_(fp_halve)(PR_(fp_t) *r, const PR_(fp_t) *a)
{
    enum { N = sizeof(a->l) / sizeof(a->l[0]) };
    uint64_t t[N], mask = (uint64_t)0 - (a->l[0] & 1), carry = 0;
    for (int i = 0; i < N; i++) {
        unsigned __int128 w = (unsigned __int128)a->l[i] + (PR_(fp_P).l[i] & mask) + carry;
        t[i] = (uint64_t)w;
        carry = (uint64_t)(w >> 64);
    }
    for (int i = 0; i < N - 1; i++)
        r->l[i] = (t[i] >> 1) | (t[i + 1] << 63);
    r->l[N - 1] = t[N - 1] >> 1;
}

static inline void PR_(fp2_halve)(PR_(fp2_t) *r, const PR_(fp2_t) *a)
{
    PR_(fp_halve)(&r->c0, &a->c0);
    PR_(fp_halve)(&r->c1, &a->c1);
}

/* Multiplies f by the line with coordinates l0 (w^0), l1 (w^1 for D-type, w^2 for M-type) and
 * l3 (w^3). */
static inline void PR_(mul_line)(PR_(fp12_t) *f, const PR_(fp2_t) *l0, const PR_(fp2_t) *l1,
                                 const PR_(fp2_t) *l3)
{
#if PR_BN
    PR_(fp12_mul_by_034)(f, f, l0, l1, l3);
#else
    PR_(fp12_mul_by_014)(f, f, l0, l1, l3);
#endif
}

/* T = 2T and f *= tangent at T evaluated at P; nxP = -xP. */
static void PR_(dbl_step)(PR_(fp12_t) *f, PR_(g2_proj) *T, const PR_(fp_t) *nxP,
                          const PR_(fp_t) *yP)
{
    PR_(fp2_t) A, B, C, E, F, G, H, J, t;
    PR_(fp2_mul)(&A, &T->X, &T->Y);
    PR_(fp2_halve)(&A, &A);
    PR_(fp2_sqr)(&B, &T->Y);
    PR_(fp2_sqr)(&C, &T->Z);
    PR_(fp2_mul)(&E, &C, &PR_(TWIST_B3));
    PR_(fp2_dbl)(&F, &E);
    PR_(fp2_add)(&F, &F, &E);
    PR_(fp2_add)(&G, &B, &F);
    PR_(fp2_halve)(&G, &G);
    PR_(fp2_add)(&H, &T->Y, &T->Z);
    PR_(fp2_sqr)(&H, &H);
    PR_(fp2_add)(&t, &B, &C);
    PR_(fp2_sub)(&H, &H, &t); /* 2 Y Z */
    PR_(fp2_sqr)(&J, &T->X);

    /* X3 = A (B - F), Y3 = G^2 - 3 E^2, Z3 = B H. */
    PR_(fp2_sub)(&t, &B, &F);
    PR_(fp2_mul)(&T->X, &A, &t);
    PR_(fp2_sqr)(&G, &G);
    PR_(fp2_sqr)(&t, &E);
    PR_(fp2_sub)(&G, &G, &t);
    PR_(fp2_dbl)(&t, &t);
    PR_(fp2_sub)(&T->Y, &G, &t);
    PR_(fp2_mul)(&T->Z, &B, &H);

    /* Line: H yP (w^3 or w^0), -3 X^2 xP, B - E. */
    PR_(fp2_t) lH, lX, lB;
    PR_(fp2_mul_by_fp)(&lH, &H, yP);
    PR_(fp2_dbl)(&t, &J);
    PR_(fp2_add)(&t, &t, &J);
    PR_(fp2_mul_by_fp)(&lX, &t, nxP);
    PR_(fp2_sub)(&lB, &B, &E);
#if PR_BN
    PR_(mul_line)(f, &lH, &lX, &lB);
#else
    PR_(mul_line)(f, &lB, &lX, &lH);
#endif
}

/* T = T + Q (Q affine, Q != +-T) and f *= line through T and Q evaluated at P. With
 * update == 0 only the line is used (the last BN254 step). */
static void PR_(add_step)(PR_(fp12_t) *f, PR_(g2_proj) *T, const PR_(fp2_t) *x2,
                          const PR_(fp2_t) *y2, const PR_(fp_t) *nxP, const PR_(fp_t) *yP,
                          int update)
{
    PR_(fp2_t) th, la, t, u;
    PR_(fp2_mul)(&t, y2, &T->Z);
    PR_(fp2_sub)(&th, &T->Y, &t);
    PR_(fp2_mul)(&t, x2, &T->Z);
    PR_(fp2_sub)(&la, &T->X, &t);

    /* Line: la yP, -th xP, th x2 - la y2. */
    PR_(fp2_t) lL, lT, lC;
    PR_(fp2_mul_by_fp)(&lL, &la, yP);
    PR_(fp2_mul_by_fp)(&lT, &th, nxP);
    PR_(fp2_mul)(&t, &th, x2);
    PR_(fp2_mul)(&u, &la, y2);
    PR_(fp2_sub)(&lC, &t, &u);
#if PR_BN
    PR_(mul_line)(f, &lL, &lT, &lC);
#else
    PR_(mul_line)(f, &lC, &lT, &lL);
#endif
    if (!update)
        return;

    /* C = th^2, D = la^2, E = la D, F = Z C, G = X D, H = E + F - 2G;
     * X3 = la H, Y3 = th (G - H) - E Y, Z3 = Z E. */
    PR_(fp2_t) C, D, E, F, G, H;
    PR_(fp2_sqr)(&C, &th);
    PR_(fp2_sqr)(&D, &la);
    PR_(fp2_mul)(&E, &la, &D);
    PR_(fp2_mul)(&F, &T->Z, &C);
    PR_(fp2_mul)(&G, &T->X, &D);
    PR_(fp2_add)(&H, &E, &F);
    PR_(fp2_dbl)(&t, &G);
    PR_(fp2_sub)(&H, &H, &t);
    PR_(fp2_mul)(&T->X, &la, &H);
    PR_(fp2_sub)(&t, &G, &H);
    PR_(fp2_mul)(&t, &th, &t);
    PR_(fp2_mul)(&u, &E, &T->Y);
    PR_(fp2_sub)(&T->Y, &t, &u);
    PR_(fp2_mul)(&T->Z, &T->Z, &E);
}

/* One Miller loop shared by up to PAIRING_CHUNK pairs (one squaring of f per step for all). */
static void PR_(miller_chunk)(PR_(fp12_t) *f, const PR_(g1_affine) *P, const PR_(g2_affine) *Q,
                              size_t n)
{
    PR_(g2_proj) T[PAIRING_CHUNK];
    PR_(fp_t) nxP[PAIRING_CHUNK], yP[PAIRING_CHUNK];
    PR_(fp2_t) nyQ[PAIRING_CHUNK];
    for (size_t i = 0; i < n; i++) {
        T[i].X = Q[i].x;
        T[i].Y = Q[i].y;
        PR_(fp2_set_one)(&T[i].Z);
        PR_(fp_neg)(&nxP[i], &P[i].x);
        yP[i] = P[i].y;
        PR_(fp2_neg)(&nyQ[i], &Q[i].y);
    }
    PR_(fp12_set_one)(f);
#if PR_BN
    static const int8_t naf[PRN(PR_UPPER, ATE_NAF_LEN)] = PRN(PR_UPPER, ATE_NAF);
    for (int k = 1; k < PRN(PR_UPPER, ATE_NAF_LEN); k++) {
        if (k > 1)
            PR_(fp12_sqr)(f, f);
        for (size_t i = 0; i < n; i++) {
            PR_(dbl_step)(f, &T[i], &nxP[i], &yP[i]);
            if (naf[k] == 1)
                PR_(add_step)(f, &T[i], &Q[i].x, &Q[i].y, &nxP[i], &yP[i], 1);
            else if (naf[k] == -1)
                PR_(add_step)(f, &T[i], &Q[i].x, &nyQ[i], &nxP[i], &yP[i], 1);
        }
    }
    /* T = [6x+2]Q; add psi(Q), then -psi^2(Q) (line only). */
    const PR_(fp2_t) *F1 = PRN(PR_NAME, fp6_FROB)[0], *F2 = PRN(PR_NAME, fp6_FROB)[1];
    for (size_t i = 0; i < n; i++) {
        PR_(fp2_t) x1, y1, x2, y2;
        PR_(fp2_conj)(&x1, &Q[i].x);
        PR_(fp2_mul)(&x1, &x1, &F1[1]);
        PR_(fp2_conj)(&y1, &Q[i].y);
        PR_(fp2_mul)(&y1, &y1, &F1[2]);
        PR_(fp2_mul)(&x2, &Q[i].x, &F2[1]);
        PR_(fp2_mul)(&y2, &nyQ[i], &F2[2]);
        PR_(add_step)(f, &T[i], &x1, &y1, &nxP[i], &yP[i], 1);
        PR_(add_step)(f, &T[i], &x2, &y2, &nxP[i], &yP[i], 0);
    }
#else
    const uint64_t x = PRN(PR_UPPER, X_ABS);
    for (int b = 62; b >= 0; b--) {
        if (b < 62)
            PR_(fp12_sqr)(f, f);
        for (size_t i = 0; i < n; i++) {
            PR_(dbl_step)(f, &T[i], &nxP[i], &yP[i]);
            if ((x >> b) & 1)
                PR_(add_step)(f, &T[i], &Q[i].x, &Q[i].y, &nxP[i], &yP[i], 1);
        }
    }
    PR_(fp12_conj)(f, f); /* x < 0 */
#endif
}

void PR_(miller_loop)(PR_(fp12_t) *f, const PR_(g1_affine) *P, const PR_(g2_affine) *Q, size_t n)
{
    PR_(g1_affine) cp[PAIRING_CHUNK];
    PR_(g2_affine) cq[PAIRING_CHUNK];
    PR_(fp12_t) g;
    size_t m = 0;
    PR_(fp12_set_one)(f);
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !PR_(g1_affine_is_inf)(&P[i]) && !PR_(g2_affine_is_inf)(&Q[i])) {
            cp[m] = P[i];
            cq[m] = Q[i];
            m++;
        }
        if (m == PAIRING_CHUNK || (i == n && m > 0)) {
            PR_(miller_chunk)(&g, cp, cq, m);
            PR_(fp12_mul)(f, f, &g);
            m = 0;
        }
    }
}

/* f^((p^6 - 1)(p^2 + 1)): afterwards f is in the cyclotomic subgroup. */
static void PR_(final_exp_easy)(PR_(fp12_t) *r, const PR_(fp12_t) *f)
{
    PR_(fp12_t) t, u;
    PR_(fp12_inv)(&t, f);
    PR_(fp12_conj)(&u, f);
    PR_(fp12_mul)(&t, &u, &t);
    PR_(fp12_frob)(&u, &t, 2);
    PR_(fp12_mul)(r, &u, &t);
}

void PR_(final_exp_plain)(PR_(fp12_t) *r, const PR_(fp12_t) *f)
{
    static const uint64_t e[PRN(PR_UPPER, HARD_EXP_LIMBS)] = PRN(PR_UPPER, HARD_EXP);
    PR_(fp12_t) t;
    PR_(final_exp_easy)(&t, f);
    PR_(fp12_cyc_pow_limbs)(r, &t, e, PRN(PR_UPPER, HARD_EXP_LIMBS));
}

#if PR_BN
/* Hard part, BN254: f^(l0 + l1 p + l2 p^2 + l3 p^3) = f^(m (p^4 - p^2 + 1)/r) with
 * l0 = 12x^3+12x^2+6x+1, l1 = 12x^3+6x^2+4x, l2 = 12x^3+6x^2+6x, l3 = 12x^3+6x^2+4x-1. With
 * a = f^x, b = f^(x^2), c = f^(x^3) and y = c^12 b^6:
 * f^l1 = y a^4, f^l3 = f^l1 / f, f^l2 = y a^6, f^l0 = y b^6 a^6 f. */
static void PR_(final_exp_hard)(PR_(fp12_t) *r, const PR_(fp12_t) *f)
{
    static const int8_t xn[PRN(PR_UPPER, X_NAF_LEN)] = PRN(PR_UPPER, X_NAF);
    const int nl = PRN(PR_UPPER, X_NAF_LEN);
    PR_(fp12_t) a, b, c, a2, a4, a6, b2, b6, c4, y, t0, t1, t2, t3, u;
    PR_(fp12_cyc_pow_naf)(&a, f, xn, nl);
    PR_(fp12_cyc_pow_naf)(&b, &a, xn, nl);
    PR_(fp12_cyc_pow_naf)(&c, &b, xn, nl);
    PR_(fp12_cyc_sqr)(&a2, &a);
    PR_(fp12_cyc_sqr)(&a4, &a2);
    PR_(fp12_mul)(&a6, &a4, &a2);
    PR_(fp12_cyc_sqr)(&b2, &b);
    PR_(fp12_cyc_sqr)(&b6, &b2);
    PR_(fp12_mul)(&b6, &b6, &b2);
    PR_(fp12_cyc_sqr)(&c4, &c);
    PR_(fp12_cyc_sqr)(&c4, &c4);
    PR_(fp12_cyc_sqr)(&y, &c4);
    PR_(fp12_mul)(&y, &y, &c4); /* c^12 */
    PR_(fp12_mul)(&y, &y, &b6);
    PR_(fp12_mul)(&t1, &y, &a4);
    PR_(fp12_conj)(&u, f);
    PR_(fp12_mul)(&t3, &t1, &u);
    PR_(fp12_mul)(&t2, &y, &a6);
    PR_(fp12_mul)(&t0, &y, &b6);
    PR_(fp12_mul)(&t0, &t0, &a6);
    PR_(fp12_mul)(&t0, &t0, f);
    PR_(fp12_frob)(&u, &t1, 1);
    PR_(fp12_mul)(&t0, &t0, &u);
    PR_(fp12_frob)(&u, &t2, 2);
    PR_(fp12_mul)(&t0, &t0, &u);
    PR_(fp12_frob)(&u, &t3, 3);
    PR_(fp12_mul)(r, &t0, &u);
}
#else
/* a^x for the negative BLS12-381 x, on the cyclotomic subgroup. */
static void PR_(pow_x)(PR_(fp12_t) *r, const PR_(fp12_t) *a)
{
    PR_(fp12_cyc_pow_u64)(r, a, PRN(PR_UPPER, X_ABS));
    PR_(fp12_conj)(r, r);
}

/* Hard part, BLS12-381: f^(3 (p^4 - p^2 + 1)/r) = f^((x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3). */
static void PR_(final_exp_hard)(PR_(fp12_t) *r, const PR_(fp12_t) *f)
{
    PR_(fp12_t) y, t, u;
    PR_(pow_x)(&t, f); /* y = f^(x - 1) */
    PR_(fp12_conj)(&u, f);
    PR_(fp12_mul)(&y, &t, &u);
    PR_(pow_x)(&t, &y); /* y = y^(x - 1) */
    PR_(fp12_conj)(&u, &y);
    PR_(fp12_mul)(&y, &t, &u);
    PR_(pow_x)(&t, &y); /* y = y^(x + p) */
    PR_(fp12_frob)(&u, &y, 1);
    PR_(fp12_mul)(&y, &t, &u);
    PR_(pow_x)(&t, &y); /* y = y^(x^2 + p^2 - 1) */
    PR_(pow_x)(&t, &t);
    PR_(fp12_frob)(&u, &y, 2);
    PR_(fp12_mul)(&t, &t, &u);
    PR_(fp12_conj)(&u, &y);
    PR_(fp12_mul)(&y, &t, &u);
    PR_(fp12_cyc_sqr)(&t, f); /* times f^3 */
    PR_(fp12_mul)(&t, &t, f);
    PR_(fp12_mul)(r, &y, &t);
}
#endif

void PR_(final_exp)(PR_(fp12_t) *r, const PR_(fp12_t) *f)
{
    PR_(fp12_t) t;
    PR_(final_exp_easy)(&t, f);
    PR_(final_exp_hard)(r, &t);
}

void PR_(pairing)(PR_(fp12_t) *out, const PR_(g1_affine) *P, const PR_(g2_affine) *Q)
{
    PR_(fp12_t) f;
    PR_(miller_loop)(&f, P, Q, 1);
    PR_(final_exp)(out, &f);
}

void PR_(multi_pairing)(PR_(fp12_t) *out, const PR_(g1_affine) *P, const PR_(g2_affine) *Q,
                        size_t n)
{
    PR_(fp12_t) f;
    PR_(miller_loop)(&f, P, Q, n);
    PR_(final_exp)(out, &f);
}

int PR_(multi_pairing_is_one)(const PR_(g1_affine) *P, const PR_(g2_affine) *Q, size_t n)
{
    PR_(fp12_t) e;
    PR_(multi_pairing)(&e, P, Q, n);
    return PR_(fp12_is_one)(&e);
}

#endif /* PAIRING_IMPL */

#undef PR_NAME
#undef PR_UPPER
#undef PR_BN
