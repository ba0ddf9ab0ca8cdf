/*
 * Multi-scalar multiplication on the CPU: out = sum_i scalars[i] * points[i] for G1 and G2 of
 * BN254 and BLS12-381 (Pippenger's bucket method, msm_tmpl.h).
 *
 * points:  n affine points in snarkjs's layout (NAME_affine, infinity = (0, 0)).
 * scalars: n 32-byte little-endian values. By default canonical integers < r (what a .wtns
 *          file holds); with CUZK_MSM_SCALARS_MONT, Fr elements in Montgomery form (the raw
 *          limbs of NAME_fr_t, as .zkey files store them).
 * Returns CUZK_OK; CUZK_NON_CANONICAL if some scalar is not below r; CUZK_INVALID_ARGUMENT
 * for n >= 2^32 or NULL pointers with n > 0; CUZK_NO_MEMORY if the scratch cannot be
 * allocated. All scratch is allocated and freed inside the call: index lists (8n bytes), per
 * thread a bucket-sorted affine copy of the points of one task (a window's points with
 * scalars other than 0 and 1, or a chunk of them: at most 2^18 points and 32 MiB) plus one
 * field element per two points and 4 bytes per point (T threads: G1 BLS12-381 at n = 2^15
 * is about 5 MiB per thread) and 8 bytes per bucket; a copy of the points whose scalar is 1
 * (for the batch-affine sum), and 32n bytes
 * for converted scalars with CUZK_MSM_SCALARS_MONT. The batch-affine scratch of one call is
 * one block; when the caller allows it (cuzk_msm_scratch_limit) blocks of 4 MiB or more are
 * kept for later calls (any group, any thread) in a process-wide cache of at most 4 blocks,
 * since fresh pages cost a fault and a zeroing each; a call that needs more than every cached
 * block frees them before it allocates (the cache never holds several MSMs' sizes at once).
 * nthreads = 0 uses cuzk_num_threads().
 */
#ifndef CUZK_MSM_H
#define CUZK_MSM_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "ec/ec.h"

#define CUZK_MSM_SCALARS_MONT 1u /* scalars are Montgomery-form Fr limbs */
/* Tests only: run the batch-affine bucket rounds down to single pairs (normally they stop at
 * a few dozen pairs and the rest is added in XYZZ), so small inputs exercise them; a table
 * MSM (G_msm_tab) also splits each window into at least 5 chunks. */
#define CUZK__MSM_ALL_ROUNDS 0x100u
/* Tests only: every window cut into chunks of at most 16 points (normally of at most 2^18,
 * above which a window is split), so small inputs exercise the chunked windows of large
 * ones. */
#define CUZK__MSM_SMALL_CHUNKS 0x200u

/* The most points of one (window, chunk) task, which each thread sorts a copy of: 2^18, and
 * at most 32 MiB of points of `bytes` bytes each (2^18 BN254 G2 points, 174762 BLS12-381 G2
 * points). A window of more points is cut into chunks of at most this many. */
#define CUZK__MSM_CHUNK_POINTS(bytes)                                                        \
    ((size_t)1 << 18 < ((size_t)32 << 20) / (bytes) ? (size_t)1 << 18                        \
                                                     : ((size_t)32 << 20) / (bytes))

typedef struct {
    unsigned nthreads; /* 0: cuzk_num_threads() */
    unsigned flags;    /* CUZK_MSM_* */
    unsigned window;   /* Pippenger window bits c, 0: chosen from n (tuning and tests) */
} cuzk_msm_opts;

/*
 * Fixed-base tables (the bases of every Groth16 MSM are fixed by the key). With t copies of
 * each point, copy j = 2^(j s) P_i, s = c ceil(W / t) bits (W = floor(NBITS / c) + 1 signed
 * c-bit windows), window w of scalar i is taken from copy w / ceil(W / t) at local window
 * w mod ceil(W / t): the MSM reduces only ceil(W / t) windows over the t n copies, so the
 * per-window bucket sums (and the doublings between windows) shrink t-fold and a wider c pays.
 *   G_msm_tab_copies(t, c): the copies a table for at most t copies and window c holds (fewer
 *       than t when t does not divide W evenly: ceil(W / ceil(W / t))); 0 for t = 0 or c
 *       outside 2 .. 20.
 *   G_msm_tab_window(n, t, nthreads): the window c for n points with at most t copies (the
 *       Pippenger cost model of msm_pick_window over the table's local windows).
 *   G_msm_tab_build(tab, points, n, t, c, nthreads): t = G_msm_tab_copies(t', c); writes
 *       copies 1 .. t - 1 into tab ((t - 1) n points, copy j at tab + (j - 1) n; copy 0 is
 *       `points` itself). The point at infinity stays infinity in every copy. Returns
 *       CUZK_NOT_IN_SUBGROUP when a finite point has an infinite copy (a point of small
 *       order: the bucket rounds assume none), CUZK_NO_MEMORY, CUZK_INVALID_ARGUMENT.
 *   G_msm_tab(out, points, tab, t, c, scalars, n, opts): the same result and errors as
 *       G_msm_ex(out, points, scalars, n, opts) (scalar 0 skipped, scalar 1 summed from copy
 *       0, scalars >= r rejected, CUZK_MSM_SCALARS_MONT honoured); opts->window is
 *       ignored (the table fixes c). Scratch as G_msm_ex, the sorted copy per thread holding
 *       up to 2^18 of the t n copies (at most 32 MiB).
 */
#define CUZK__MSM_DECL(G)                                                                 \
    cuzk_err G##_msm(G##_jac *out, const G##_affine *points, const uint8_t *scalars,      \
                     size_t n, unsigned nthreads);                                        \
    cuzk_err G##_msm_ex(G##_jac *out, const G##_affine *points, const uint8_t *scalars,   \
                        size_t n, const cuzk_msm_opts *opts);                             \
    unsigned G##_msm_window(size_t n, unsigned nthreads);                                 \
    unsigned G##_msm_tab_copies(unsigned t, unsigned c);                                  \
    unsigned G##_msm_tab_window(size_t n, unsigned t, unsigned nthreads);                 \
    cuzk_err G##_msm_tab_build(G##_affine *tab, const G##_affine *points, size_t n,       \
                               unsigned t, unsigned c, unsigned nthreads);                \
    cuzk_err G##_msm_tab(G##_jac *out, const G##_affine *points, const G##_affine *tab,   \
                         unsigned t, unsigned c, const uint8_t *scalars, size_t n,        \
                         const cuzk_msm_opts *opts);

/* The scratch cache: off (0, the default: every block is freed when its MSM ends) or at
 * most max_bytes held between calls (a one-shot process such as `cuzk prove`, whose five
 * MSMs run back to back; a caller that budgets its memory leaves it off); setting it frees
 * what is held. Bytes held now, and a call that frees every cached block (safe at any time:
 * concurrent MSMs keep their blocks and return them to the cache afterwards). */
void cuzk_msm_scratch_limit(size_t max_bytes);
size_t cuzk_msm_scratch_cached(void);
void cuzk_msm_scratch_release(void);

CUZK__MSM_DECL(bn254_g1)
CUZK__MSM_DECL(bn254_g2)
CUZK__MSM_DECL(bls12_381_g1)
CUZK__MSM_DECL(bls12_381_g2)

#endif
