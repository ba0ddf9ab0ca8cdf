/* Single-party Groth16 setup that writes a snarkjs-format .zkey, FOR TESTING AND BENCHMARKING
 * ONLY: whoever runs it knows the secrets (tau, alpha, beta, gamma, delta) and can forge proofs.
 * There is no ceremony and no contribution record (section 10 holds a zero circuit hash and 0
 * contributions).
 *
 * The key is the one snarkjs's `groth16 setup` + `zkey contribute` would produce for the same
 * secrets, up to the choice of gamma (snarkjs fixes gamma = 1; ours is random, which every
 * verifier accepts since vk_gamma_2 is part of the key):
 *   N = smallest power of two > nConstraints + nPublic; w = w_N (snarkjs's root, ntt.h);
 *   rows 0..m-1 are the constraints, row m+i has A = w_i for i = 0..nPublic;
 *   A_i(t) = sum_rows A[row][i] L_row(t) over the size-N Lagrange basis, same for B, C;
 *   L_j(t) = (t^N - 1)/N * w^j/(t - w^j);
 *   IC_i = (beta A_i + alpha B_i + C_i)/gamma G1 (i <= nPublic), C_i the same over delta;
 *   H_j = L^{(2N)}_{2j+1}(t)/delta G1 = (t^2N - 1)/(2N) * v w^j/(t - v w^j)/delta G1, v = w_2N,
 *   the odd points of the 2N domain (circom-snarkjs.md section 4.3).
 * Sections are written in the order 1..10; section 4 holds, per constraint, its A terms then
 * its B terms (coef * 2^512 mod r), then the nPublic + 1 public rows, as snarkjs writes them.
 *
 * Secrets: with a seed (any bytes), secret X in {tau, alpha, beta, gamma, delta} is the first
 * candidate c = 0, 1, ... such that SHA-256("cuzk-setup-v1" 0x00 X 0x00 seed u32le(c)), read
 * as a little-endian integer with its top bit cleared, is nonzero and < r (and, for tau, with
 * tau^(2N) != 1). Without a seed, 32 bytes from the OS RNG (getrandom) are the seed. */
#ifndef CUZK_SETUP_H
#define CUZK_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

/* Progress report: `done` of `total` work units (points computed) so far. Called from the
 * thread that called cuzk_setup, between chunks. */
typedef void (*cuzk_setup_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct {
    const uint8_t *seed; /* NULL: random secrets from the OS */
    size_t seed_len;     /* 1..256 bytes */
    unsigned nthreads;   /* 0: cuzk_num_threads() */
    uint64_t max_memory; /* bytes of working memory allowed (0: physical memory) */
    cuzk_setup_progress_fn progress;
    void *progress_ctx;
    /* The key's points (k_i G) on this CUDA device when the machine has one (0, the default:
     * the first); -1, or no GPU: on the CPU. Either way the same bytes. */
    int device;
} cuzk_setup_opts;

typedef struct {
    uint32_t n_constraints, n_vars, n_public, domain_size;
    uint64_t n_coefs;
    uint64_t mem_estimate; /* bytes of working memory the run needed (estimate) */
    unsigned window_g1, window_g2; /* the CPU's fixed-base windows (0 on a GPU) */
    int device;                    /* the CUDA device that made the points; -1: the CPU */
    double ms_total;
    /* Where the time went: the constraints' walk evaluating the QAP at tau, the coefficient
     * section, and the point sections (tables, scalars, multiplications, storing the points). */
    double ms_circuit, ms_coefs, ms_points;
} cuzk_setup_info;

/* Reads r1cs_path, writes zkey_path. Errors: those of cuzk_r1cs_open, CUZK_NON_CANONICAL (an
 * r1cs coefficient >= r), CUZK_UNSUPPORTED (domain too large for the curve's 2-adicity),
 * CUZK_OUT_OF_BUDGET (the estimate exceeds max_memory), CUZK_NO_MEMORY, CUZK_IO. A failed
 * run leaves no output file. info may be NULL. */
cuzk_err cuzk_setup(const char *r1cs_path, const char *zkey_path, const cuzk_setup_opts *opts,
                    cuzk_setup_info *info, cuzk_errbuf *eb);

#endif
