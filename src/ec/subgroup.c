/* Subgroup membership tests (subgroup.h). */
#include "ec/subgroup.h"

/* |u| of BLS12-381, u = -0xd201000000010000 (the curve's seed; negative). */
static const uint64_t BLS_ABS_U = 0xd201000000010000ULL;

#define NAIVE(G, R)                                                                       \
    int G##_in_subgroup_naive(const G##_affine *p)                                        \
    {                                                                                     \
        static const uint64_t r[4] = R;                                                   \
        G##_jac j, t;                                                                     \
        G##_from_affine(&j, p);                                                           \
        G##_mul_limbs(&t, &j, r, 4);                                                      \
        return G##_is_inf(&t);                                                            \
    }
NAIVE(bn254_g1, BN254_FR_P)
NAIVE(bn254_g2, BN254_FR_P)
NAIVE(bls12_381_g1, BLS12_381_FR_P)
NAIVE(bls12_381_g2, BLS12_381_FR_P)
#undef NAIVE

/* BN254 G1 has cofactor 1: every point of E(Fp) is in the group of order r. */
int bn254_g1_in_subgroup(const bn254_g1_affine *p)
{
    (void)p;
    return 1;
}

/* psi for the D-type sextic twist of BN254 over Fp2 = Fp[u]/(u^2+1), xi = 9 + u:
 * gx = xi^((p-1)/3), gy = xi^((p-1)/2). Canonical limbs. */
static const uint64_t BN_PSI_GX0[4] = {0x99e39557176f553dULL, 0xb78cc310c2c3330cULL,
                                       0x4c0bec3cf559b143ULL, 0x2fb347984f7911f7ULL};
static const uint64_t BN_PSI_GX1[4] = {0x1665d51c640fcba2ULL, 0x32ae2a1d0b7c9dceULL,
                                       0x4ba4cc8bd75a0794ULL, 0x16c9e55061ebae20ULL};
static const uint64_t BN_PSI_GY0[4] = {0xdc54014671a0135aULL, 0xdbaae0eda9c95998ULL,
                                       0xdc5ec698b6e2f9b9ULL, 0x063cf305489af5dcULL};
static const uint64_t BN_PSI_GY1[4] = {0x82d37f632623b0e3ULL, 0x21807dc98fa25bd2ULL,
                                       0x0704b5a7ec796f2bULL, 0x07c03cbcac41049aULL};
/* 6 u^2 for the BN254 seed u = 4965661367192848881 (127 bits). */
static const uint64_t BN_6U2[2] = {0xf83e9682e87cfd46ULL, 0x6f4d8248eeb859fbULL};

void bn254_g2_psi(bn254_g2_jac *r, const bn254_g2_jac *p)
{
    bn254_fp2_t gx, gy, t;
    bn254_fp_from_canonical(&gx.c0, BN_PSI_GX0);
    bn254_fp_from_canonical(&gx.c1, BN_PSI_GX1);
    bn254_fp_from_canonical(&gy.c0, BN_PSI_GY0);
    bn254_fp_from_canonical(&gy.c1, BN_PSI_GY1);
    bn254_fp2_conj(&t, &p->X);
    bn254_fp2_mul(&r->X, &t, &gx);
    bn254_fp2_conj(&t, &p->Y);
    bn254_fp2_mul(&r->Y, &t, &gy);
    bn254_fp2_conj(&r->Z, &p->Z);
}

/*
 * BN254 G2 (cofactor 2p - r, about 2^254). psi acts on G2 as multiplication by p = t - 1 =
 * 6u^2 (mod r); as the G1 cofactor is 1, gcd(h1, h2) = 1 and psi(Q) == [6u^2] Q holds for no
 * other point of E'(Fp2): Scott (eprint 2021/1130), with the proof corrected by El Housni,
 * Guillevic and Piellard, "Co-factor clearing and subgroup membership testing on
 * pairing-friendly curves" (eprint 2022/352). A 127-bit scalar multiplication instead of a
 * 254-bit one; checked against r * Q == O in tests/ec/encode_test.c.
 */
int bn254_g2_in_subgroup(const bn254_g2_affine *p)
{
    if (bn254_g2_affine_is_inf(p))
        return 1;
    bn254_g2_jac j, t, f;
    bn254_g2_from_affine(&j, p);
    bn254_g2_mul_limbs(&t, &j, BN_6U2, 2);
    bn254_g2_psi(&f, &j);
    return bn254_g2_eq(&t, &f);
}

/* beta: the primitive cube root of unity in Fp (2^((p-1)/3) or its square) for which
 * phi acts on G1 as multiplication by -u^2 (the other root gives the eigenvalue u^2 - 1).
 * Canonical limbs; tests/ec/encode_test.c checks beta^3 = 1 and phi(G) = -u^2 G. */
static const uint64_t BLS_BETA[6] = {0x2e01fffffffefffeULL, 0xde17d813620a0002ULL,
                                     0xddb3a93be6f89688ULL, 0xba69c6076a0f77eaULL,
                                     0x5f19672fdf76ce51ULL, 0x0000000000000000ULL};

void bls12_381_g1_phi(bls12_381_g1_jac *r, const bls12_381_g1_jac *p)
{
    bls12_381_fp_t beta;
    bls12_381_fp_from_canonical(&beta, BLS_BETA);
    /* x = X / Z^2, so (beta x) = (beta X) / Z^2. */
    bls12_381_fp_mul(&r->X, &p->X, &beta);
    r->Y = p->Y;
    r->Z = p->Z;
}

/*
 * Bowe, "Faster subgroup checks for BLS12-381" (eprint 2019/814); also Scott (eprint
 * 2021/1130): a point P of E(Fp) lies in G1 iff phi(P) == -u^2 P. Two 64-bit
 * scalar multiplications instead of one of 255 bits.
 */
int bls12_381_g1_in_subgroup(const bls12_381_g1_affine *p)
{
    if (bls12_381_g1_affine_is_inf(p))
        return 1;
    bls12_381_g1_jac j, t, f;
    bls12_381_g1_from_affine(&j, p);
    bls12_381_g1_mul_limbs(&t, &j, &BLS_ABS_U, 1);
    bls12_381_g1_mul_limbs(&t, &t, &BLS_ABS_U, 1);
    bls12_381_g1_neg(&t, &t);
    bls12_381_g1_phi(&f, &j);
    return bls12_381_g1_eq(&t, &f);
}

/* psi = twist^-1 . Frobenius . twist for the M-type sextic twist of BLS12-381 over
 * Fp2 = Fp[u]/(u^2+1), xi = 1 + u: cx = 1/xi^((p-1)/3) (= c1 u, c0 = 0), cy = 1/xi^((p-1)/2).
 * Canonical limbs; checked against their definition by tests/ec/encode_test.c. */
static const uint64_t BLS_PSI_CX1[6] = {0x8bfd00000000aaadULL, 0x409427eb4f49fffdULL,
                                        0x897d29650fb85f9bULL, 0xaa0d857d89759ad4ULL,
                                        0xec02408663d4de85ULL, 0x1a0111ea397fe699ULL};
static const uint64_t BLS_PSI_CY0[6] = {0xf1ee7b04121bdea2ULL, 0x304466cf3e67fa0aULL,
                                        0xef396489f61eb45eULL, 0x1c3dedd930b1cf60ULL,
                                        0xe2e9c448d77a2cd9ULL, 0x135203e60180a68eULL};
static const uint64_t BLS_PSI_CY1[6] = {0xc81084fbede3cc09ULL, 0xee67992f72ec05f4ULL,
                                        0x77f76e17009241c5ULL, 0x48395dabc2d3435eULL,
                                        0x6831e36d6bd17ffeULL, 0x06af0e0437ff400bULL};

void bls12_381_g2_psi(bls12_381_g2_jac *r, const bls12_381_g2_jac *p)
{
    bls12_381_fp2_t cx, cy, t;
    cx.c0 = bls12_381_fp_ZERO;
    bls12_381_fp_from_canonical(&cx.c1, BLS_PSI_CX1);
    bls12_381_fp_from_canonical(&cy.c0, BLS_PSI_CY0);
    bls12_381_fp_from_canonical(&cy.c1, BLS_PSI_CY1);
    /* In Jacobian coordinates: x = X/Z^2 and y = Y/Z^3, and conj is a field automorphism, so
     * psi(X, Y, Z) = (conj(X) cx, conj(Y) cy, conj(Z)). */
    bls12_381_fp2_conj(&t, &p->X);
    bls12_381_fp2_mul(&r->X, &t, &cx);
    bls12_381_fp2_conj(&t, &p->Y);
    bls12_381_fp2_mul(&r->Y, &t, &cy);
    bls12_381_fp2_conj(&r->Z, &p->Z);
}

/*
 * Scott, "A note on group membership tests for G1, G2 and GT on BLS pairing-friendly curves"
 * (eprint 2021/1130; proof corrected in eprint 2022/352, see bn254_g2_in_subgroup): a point
 * Q of E'(Fp2) lies in G2 iff psi(Q) == u Q. One
 * 64-bit scalar multiplication instead of one of 255 bits.
 */
int bls12_381_g2_in_subgroup(const bls12_381_g2_affine *p)
{
    if (bls12_381_g2_affine_is_inf(p))
        return 1;
    bls12_381_g2_jac j, t, f;
    bls12_381_g2_from_affine(&j, p);
    bls12_381_g2_mul_limbs(&t, &j, &BLS_ABS_U, 1);
    bls12_381_g2_neg(&t, &t); /* u < 0 */
    bls12_381_g2_psi(&f, &j);
    return bls12_381_g2_eq(&t, &f);
}
