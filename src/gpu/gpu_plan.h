/* The MSM's plan (gpu_plan.c, plain C): the window width for n points of nbits-bit scalars,
 * entries per level-1 slice, batch-affine or not, a set's fixed-base tables (copies t, s bits
 * apart) and one MSM's windows over such a set (width c, g bucket sets); the NTT's passes.
 * Internal to the CUDA backend (gpu_impl.cuh's host code, cuzk_gpu_scratch_estimate) and its
 * tests. */
#ifndef CUZK_GPU_PLAN_H
#define CUZK_GPU_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int cuzk__gpu_choose_c(size_t n, int nbits);
/* Elements that hold the batch-affine product tree over up to n elements at any cap from 16
 * on (msm_reduce.cuh's tree_k): its levels (tree_elems), then its kept nodes (tree_nodes). A
 * bound, as the two are not monotonic in n (a chunk's tree may be over fewer elements than the
 * one its space was made for); tests/gpu/msm_emu.cpp checks it. gpu_impl.cuh's scratch and
 * cuzk_gpu_scratch_estimate both take it. 16 * 128 is msm_reduce.cuh's BA_TREE_ONE (asserted
 * there). */
static inline size_t cuzk__gpu_tree_space(size_t n) { return 2 * (n + n / 64 + 64) + 16 * 128; }
uint32_t cuzk__gpu_slice_len(size_t M);
/* A batch-affine MSM's slice length (gpu_plan.c): 128 or 64 where M / L slices of `lanes`
 * threads (2: G2's kernels two lanes a slice) still fill sm_count SMs, else
 * cuzk__gpu_slice_len(M); never shorter than that. */
#define CUZK_GPU_BA_SLICE_WAVES_X2 5 /* 2.5 times 512 threads per SM */
uint32_t cuzk__gpu_ba_slice_len(size_t M, int sm_count, int lanes);
/* The slice length of a batch-affine MSM of G2 (g2) or G1 under quads setting q: G2's
 * cuzk__gpu_ba_slice_len, G1's only where it brings quads (cuzk__gpu_ba_quads_on), else
 * cuzk__gpu_slice_len(M). */
uint32_t cuzk__gpu_ba_len(size_t M, int sm_count, int g2, int lanes, int q);
/* Whether an MSM sums its buckets by batch-affine pairs (gpu_plan.c). */
int cuzk__gpu_ba_on(int every, int g2, int g1_pref, size_t M);
/* Whether an MSM of G2 (g2) or G1 with M sorted entries in slices of L1 sums quads under
 * setting q (cuzk_gpu_ba_set's, or cuzk__gpu_ba_fit's 3): 1 for G1, 2 for both groups, 3 for
 * both groups from CUZK_GPU_BA_QUADS_MIN entries or in slices of 64 entries or more. */
int cuzk__gpu_ba_quads_on(int q, int g2, size_t M, uint32_t L1);
/* Slices of L1 entries per batch-affine chunk of `chunk` bytes (f bytes per coordinate, quads
 * or not), at least one and at most T; before accumulate's rounding to whole waves. */
size_t cuzk__gpu_ba_slices(size_t chunk, uint32_t L1, size_t f, int quads, size_t T);
/* cuzk_gpu_scratch_estimate (BLS12-381 or BN254) at a given chunk and quads setting. */
uint64_t cuzk__gpu_scratch_estimate_at(int bls, uint64_t n_points, uint64_t domain, size_t chunk,
                                       int q);
/* The setting cuzk_gpu_ba_fit gives a context (gpu.h) whose scratch may grow to `avail` bytes
 * for circuits of (n_points, domain): the largest chunk, in steps of CUZK_GPU_BA_FIT_STEP from
 * CUZK_GPU_BA_CHUNK_MAX down to CUZK_GPU_BA_PRE_BYTES, whose estimate fits avail, with quads
 * (setting 3: MSMs of CUZK_GPU_BA_QUADS_MIN entries, G1 and G2) from CUZK_GPU_BA_QUADS_FIT
 * bytes; when nothing fits, the default setting. */
void cuzk__gpu_ba_fit(int bls, uint64_t n_points, uint64_t domain, uint64_t avail, size_t *chunk,
                      int *quads);
void cuzk__gpu_tab_plan(size_t n, int nbits, int max_copies, int *c, int *t, int *s);
/* Bytes of a set's map of its points at infinity (one bit per point, 32-bit words): every
 * resident set of n points has one (gpu_internal.cuh cuzk_gpu_points.inf_bits). */
static inline uint64_t cuzk__gpu_inf_map_bytes(uint64_t n) { return (n + 31) / 32 * 4; }
void cuzk__gpu_msm_plan(size_t n2, int nbits, int t, int s, int *c, int *g);
/* The passes of a 2^logn NTT (logn >= 1) with blocks of at most 2^log_sh elements and tiles of
 * at most 2^max_lob contiguous elements after the first pass (log_sh > max_lob >= 1), the
 * stages spread evenly: stages s[i] and tile bits lob[i] of pass i (s[i] + lob[i] <= log_sh,
 * lob[0] = 0, lob[i] <= the stages before pass i); returns the number of passes (the fewest
 * possible, at most 32). */
int cuzk__gpu_ntt_plan(int logn, int log_sh, int max_lob, int s[32], int lob[32]);
/* The default tile bits (2 or 3) of a 2^logn NTT's later passes with blocks of 2^log_sh. */
int cuzk__gpu_ntt_auto_lob(int logn, int log_sh);

#ifdef __cplusplus
}
#endif

#endif
