/*
 * Number-theoretic transforms over Fr of BN254 and BLS12-381 (ntt_tmpl.h), with snarkjs's
 * roots of unity: w_{2^k} = 5^((r-1)/2^k) (5 is the smallest quadratic non-residue for both r),
 * and the Groth16 H step in snarkjs's convention.
 *
 * Per field F (bn254_fr, bls12_381_fr):
 *   F_root_of_unity(&w, k)      w_{2^k}, k <= two-adicity (28 | 32); -1 for larger k.
 *   F_domain_init(&d, k)        domain of size 2^k with twiddle tables (2^k elements in all,
 *                               allocated; CUZK_NO_MEMORY / CUZK_INVALID_ARGUMENT); free with
 *                               F_domain_free. The first H step (F_groth16_h[_inplace]) on d
 *                               adds a table of 2^k coset factors to it (thread-safe; the
 *                               pointer d->coset_br is the one member a call through
 *                               const F_domain * writes).
 *   F_ntt(&d, a, nthreads)      in place, natural order in and out: a_i <- sum_j a_j w^(ij).
 *   F_intt(&d, a, nthreads)     the inverse (includes the factor 1/n).
 *   F_coset_shift(a, n, &g, nthreads)   a_i <- a_i g^i.
 *   F_groth16_h(&d, h, a, na, b, nb, c, nc, nthreads)
 *       a, b, c: evaluations over the domain (Montgomery Fr; shorter inputs are zero-padded to
 *       N = 2^k). h_i = a'_i b'_i - c'_i where x' = NTT(coset_shift(iNTT(x), w_{2N})): the
 *       evaluations on the odd points of the 2N domain, which snarkjs's H query expects
 *       (circom-snarkjs.md section 0 fact 7). h has N elements and may alias none of a, b, c.
 *       Scratch: 2N elements, allocated inside the call (CUZK_NO_MEMORY). Needs k < two-adicity
 *       (CUZK_UNSUPPORTED otherwise).
 *   F_groth16_h_inplace(&d, a, b, c, nthreads)
 *       The same with a, b, c of N elements each, overwritten: h lands in a, b and c are left
 *       as b', c'. No scratch (for a caller that drops a, b, c after H anyway: saves the
 *       2N-element allocation and its page faults, and the copies).
 * nthreads = 0 uses cuzk_num_threads().
 */
#ifndef CUZK_NTT_H
#define CUZK_NTT_H

#include <stddef.h>

#include "cuzk/err.h"
#include "ff/ff.h"

#define CUZK__NTT_DECL(F)                                                                 \
    typedef struct {                                                                      \
        unsigned log_n;                                                                   \
        size_t n;                                                                         \
        F##_t omega, omega_inv, n_inv;                                                    \
        F##_t coset_gen; /* w_{2n}; zero when 2n exceeds the two-adicity */               \
        F##_t *tw;       /* n/2 powers omega^i */                                         \
        F##_t *tw_inv;   /* n/2 powers omega^-i */                                        \
        F##_t *coset_br; /* n factors n^-1 coset_gen^i at position bitrev(i), made by   */ \
                         /* the first H step (NULL until then; see ntt_tmpl.h)         */ \
    } F##_domain;                                                                         \
    int F##_root_of_unity(F##_t *w, unsigned log_n);                                      \
    cuzk_err F##_domain_init(F##_domain *d, unsigned log_n);                              \
    void F##_domain_free(F##_domain *d);                                                  \
    void F##_ntt(const F##_domain *d, F##_t *a, unsigned nthreads);                       \
    void F##_intt(const F##_domain *d, F##_t *a, unsigned nthreads);                      \
    void F##_coset_shift(F##_t *a, size_t n, const F##_t *g, unsigned nthreads);          \
    cuzk_err F##_groth16_h(const F##_domain *d, F##_t *h, const F##_t *a, size_t na,      \
                           const F##_t *b, size_t nb, const F##_t *c, size_t nc,          \
                           unsigned nthreads);                                            \
    cuzk_err F##_groth16_h_inplace(const F##_domain *d, F##_t *a, F##_t *b, F##_t *c,     \
                                   unsigned nthreads);

CUZK__NTT_DECL(bn254_fr)
CUZK__NTT_DECL(bls12_381_fr)

#endif
