/*
 * cuzk's CUDA backend, as a small C API (no CUDA types here, so C code and the CPU-only build
 * include it; src/gpu/gpu_none.c implements it when CUDA is not built).
 *
 * Data conventions (identical to snarkjs and to src/ff, so buffers move without conversion):
 *   - A field element is little-endian 64-bit limbs of a*R mod p (Montgomery form); on the
 *     device the same bytes are read as little-endian 32-bit limbs.
 *   - An affine point is x || y; for G2 each coordinate is c0 || c1. The point at infinity is
 *     all zero bytes. n8q = 32 (BN254) or 48 (BLS12-381), so a G1 point is 64/96 bytes and a
 *     G2 point 128/192 bytes.
 *   - MSM results come back as a Jacobian point X, Y, Z (x = X/Z^2, y = Y/Z^3) in the same limb
 *     layout: cuzk_gpu_point_limbs() 64-bit words in all (3 coordinates, each 4 or 6 limbs,
 *     doubled for G2, c0 then c1). Z = 0 means infinity.
 *   - Scalars are 32 bytes each: little-endian canonical integers below r, or (with
 *     CUZK_GPU_SCALARS_MONT) Fr elements in Montgomery form.
 *
 * Every CUDA call and kernel launch is checked: a failure returns CUZK_GPU_FAULT with the
 * file:line, the call and CUDA's message in eb; no device returns CUZK_NO_DEVICE.
 * A context is used by one thread at a time.
 */
#ifndef CUZK_GPU_H
#define CUZK_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "cuzk/err.h"

typedef enum { CUZK_GPU_BN254 = 0, CUZK_GPU_BLS12_381 = 1 } cuzk_gpu_curve;
typedef enum { CUZK_GPU_G1 = 1, CUZK_GPU_G2 = 2 } cuzk_gpu_group;

typedef struct cuzk_gpu_ctx cuzk_gpu_ctx;
typedef struct cuzk_gpu_points cuzk_gpu_points;
typedef struct cuzk_gpu_fr cuzk_gpu_fr;

/* Batch-affine bucket accumulation (gpu_impl.cuh, msm_kernels.cuh): for G2 MSMs and
 * BLS12-381 G1 sets from CUZK_GPU_BA_MIN sorted entries (below, one inversion's latency
 * outweighs the gain). Its prefix products are made in chunks with one field inversion each, of
 * at most half an entry's point coordinate per sorted entry and never more than the context's
 * chunk bytes: CUZK_GPU_BA_PRE_BYTES by default, up to CUZK_GPU_BA_CHUNK_MAX through
 * cuzk_gpu_ba_set or cuzk_gpu_ba_fit. cuzk_gpu_scratch_estimate counts them. */
#define CUZK_GPU_BA_MIN ((size_t)1 << 22)
/* 4 GiB: a BLS12-381 G2 MSM of 2^24 in 3 chunks, leaving the device room for its key's tables. */
#define CUZK_GPU_BA_PRE_BYTES ((size_t)4 << 30)
#define CUZK_GPU_BA_CHUNK_MAX ((size_t)16 << 30)
/* Quads (msm_kernels.cuh): two pair sums of one run added in affine too, with a second product
 * tree per chunk; the pair sums share the chunk's bytes with the prefixes. They pay only with
 * large chunks, so a context opens without them (0) and a fitted one takes them (below). */
#define CUZK_GPU_BA_QUADS_DEFAULT 0

/* Points at infinity: every resident set keeps a map of them (one bit per point, built at
 * upload). An MSM over a set with at least 1/64 of its points at infinity (a key's A, B1 and
 * B2: one for each signal absent from A or B) drops their entries from its sorted digits and
 * from its list of scalars equal to 1 before the accumulation (CUB's select with
 * msm_kernels.cuh's inf_keep, into the sort pair's other buffers, so the sorted digits stay for
 * the next MSM over the same scalars), and every BLS12-381 G1 set then runs batch-affine. */

/* A context that proves alone on its device may take more (cuzk_gpu_ba_fit): the largest chunk
 * up to CUZK_GPU_BA_CHUNK_MAX, in steps of CUZK_GPU_BA_FIT_STEP, that the device's memory
 * holds beside what is resident, with quads for MSMs of at least CUZK_GPU_BA_QUADS_MIN sorted
 * entries once the chunk has CUZK_GPU_BA_QUADS_FIT bytes (setting 3). A margin of 1 GiB and
 * 1/64 of the device's memory stays free. */
#define CUZK_GPU_BA_FIT_STEP ((size_t)256 << 20)
#define CUZK_GPU_BA_QUADS_FIT ((size_t)8 << 30)
#define CUZK_GPU_BA_QUADS_MIN ((size_t)1 << 26)

/* Device scratch one context grows to when it proves circuits of n_points points per MSM set
 * and an H domain of `domain` (all MSMs, with or without fixed-base tables, the H step,
 * twiddles; scalars all outside {0, 1}, the largest case), an upper estimate for memory
 * budgets. Needs no device (src/gpu/gpu_plan.c). */
uint64_t cuzk_gpu_scratch_estimate(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain);
/* The same at a given batch-affine setting (chunk bytes, quads) instead of the default. */
uint64_t cuzk_gpu_scratch_estimate_at(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain,
                                      uint64_t chunk, int quads);

/* Bytes of device scratch a context holds now (its grown slots and twiddle tables). */
uint64_t cuzk_gpu_scratch_bytes(const cuzk_gpu_ctx *ctx);

/* Fits ctx's batch-affine chunk and quads to its device's memory (above) for circuits of
 * n_points points per MSM set and an H domain of `domain` (0: MSMs only): the largest setting
 * whose scratch estimate fits the context's scratch now plus the device's free memory, less
 * a margin. Only for a context that proves alone on its device after its key's point sets and
 * tables are resident (cuzk_prove with the key's own context, cuzk-bench-gpu): contexts that
 * share a device under a memory budget (the daemon's GPU workers) keep the settings
 * cuzk_gpu_scratch_estimate counts. cuzk_gpu_ba_reset returns ctx to the default setting and,
 * if it changed, frees the scratch the chunk sized (to grow again on the next MSM);
 * cuzk_gpu_ba_setting reports ctx's setting (quads: 0 none, 1 G1 sets, 2 G2 too, 3 G1 sets from
 * CUZK_GPU_BA_QUADS_MIN entries). */
cuzk_err cuzk_gpu_ba_fit(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, uint64_t n_points,
                         uint64_t domain, cuzk_errbuf *eb);
cuzk_err cuzk_gpu_ba_reset(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb);
void cuzk_gpu_ba_setting(const cuzk_gpu_ctx *ctx, uint64_t *chunk, int *quads);
/* Without a device, for contexts that share one under a budget (the daemon's GPU workers,
 * fitted to what the keys leave: engine.c's fit_workers): the setting cuzk_gpu_ba_fit would
 * give a context whose scratch may grow to `avail` bytes for circuits of (n_points, domain),
 * capped by the setting in *chunk / *quads when *chunk is not 0 (so several circuits' fits
 * chain to the smallest: a cap's quads come with it), and the scratch estimate at the result.
 * cuzk_gpu_ba_set gives ctx such a setting, or any chunk of 1 to CUZK_GPU_BA_CHUNK_MAX bytes
 * and quads 0 to 3 (others are refused with INVALID_ARGUMENT; cuzk_gpu_ba_reset returns it to
 * the default). */
uint64_t cuzk_gpu_ba_fit_bytes(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain,
                               uint64_t avail, uint64_t *chunk, int *quads);
cuzk_err cuzk_gpu_ba_set(cuzk_gpu_ctx *ctx, uint64_t chunk, int quads, cuzk_errbuf *eb);

/* Number of usable CUDA devices; 0 when there is none or no driver. Never fails. */
int cuzk_gpu_device_count(void);

/* Opens device `device` (CUDA numbering): a stream and reusable scratch. */
cuzk_err cuzk_gpu_open(cuzk_gpu_ctx **out, int device, cuzk_errbuf *eb);
void cuzk_gpu_close(cuzk_gpu_ctx *ctx);
/* Device name, as the driver reports it; never NULL. */
const char *cuzk_gpu_name(const cuzk_gpu_ctx *ctx);

/* Free and total memory of device `device` now (cudaMemGetInfo), for the daemon's default
 * GPU key budget. */
cuzk_err cuzk_gpu_mem_info(int device, uint64_t *free_bytes, uint64_t *total_bytes,
                           cuzk_errbuf *eb);

/* Page-locks caller memory so copies from/to it run at full bus speed (optional). */
cuzk_err cuzk_gpu_pin(cuzk_gpu_ctx *ctx, void *p, size_t len, cuzk_errbuf *eb);
void cuzk_gpu_unpin(cuzk_gpu_ctx *ctx, void *p);
/* Page-locked host memory (cudaHostAlloc, portable to every device): uploads from it go by
 * DMA at full bus speed, without the staging copy. Free with cuzk_gpu_host_free. */
cuzk_err cuzk_gpu_host_alloc(cuzk_gpu_ctx *ctx, size_t bytes, void **out, cuzk_errbuf *eb);
void cuzk_gpu_host_free(cuzk_gpu_ctx *ctx, void *p);
/* The same without a context (on device 0; NO_DEVICE without one): cuzk_witness_buf_alloc. */
cuzk_err cuzk_gpu_host_alloc_any(size_t bytes, void **out, cuzk_errbuf *eb);
void cuzk_gpu_host_free_any(void *p);
/* 1 when p points into page-locked host memory CUDA knows (cudaHostAlloc or
 * cudaHostRegister), so a DMA can read it directly; 0 otherwise or without a device. */
int cuzk_gpu_host_is_pinned(const void *p);

/* Bytes of one affine point (64, 96, 128, 192) and 64-bit words of one Jacobian result. */
size_t cuzk_gpu_point_bytes(cuzk_gpu_curve curve, cuzk_gpu_group g);
size_t cuzk_gpu_point_limbs(cuzk_gpu_curve curve, cuzk_gpu_group g);

/* Uploads n affine points (layout above) into a resident set. The bytes are not validated
 * (the caller checked them when it parsed the key). */
cuzk_err cuzk_gpu_points_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                const void *bytes, size_t n, cuzk_gpu_points **out,
                                cuzk_errbuf *eb);
/* The same with `lead` points at infinity in front: a set of lead + n points whose point
 * lead + i is bytes' point i. C's set is padded this way to the witness's length, so the C MSM
 * runs over the whole witness and reuses A's scalar preparation (the leading scalars meet
 * infinity). */
cuzk_err cuzk_gpu_points_upload_ex(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                   size_t lead, const void *bytes, size_t n,
                                   cuzk_gpu_points **out, cuzk_errbuf *eb);
void cuzk_gpu_points_free(cuzk_gpu_points *pts);
size_t cuzk_gpu_points_count(const cuzk_gpu_points *pts);

/* A streamed set: the same set as cuzk_gpu_points_upload_ex's, but its points stay in host
 * memory at `host` (the caller keeps it, unchanged, until cuzk_gpu_points_free; page-locked
 * with cuzk_gpu_host_alloc or cuzk_gpu_pin, else its copies are slow) and every MSM over it
 * (cuzk_gpu_msm, the H MSM) copies them to the device chunk_points at a time into two
 * buffers of the MSM's context (grown to the largest chunk, kept until cuzk_gpu_close,
 * counted by cuzk_gpu_scratch_bytes), the copy of the next chunk on a copy stream beside the
 * MSM of this one, and adds the chunks' sums: the same point as the resident set gives. On
 * the device it holds only the map of its points at infinity (made on the host here); it has
 * no fixed-base tables (cuzk_gpu_points_tables leaves it as it is). For keys larger than the
 * device's memory. */
cuzk_err cuzk_gpu_points_host(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                              size_t lead, const void *host, size_t n, size_t chunk_points,
                              cuzk_gpu_points **out, cuzk_errbuf *eb);
/* 1 for a set made by cuzk_gpu_points_host. */
int cuzk_gpu_points_streamed(const cuzk_gpu_points *pts);
/* Device bytes of ctx's chunk buffers now (0 before its first MSM over a streamed set). */
uint64_t cuzk_gpu_stream_buffer_bytes(const cuzk_gpu_ctx *ctx);

/* Fixed-base tables: a set's points are the same in every MSM (a proving key's), so copies
 * 2^(k s) P of each point (k < t) can be computed once; an MSM then sends all its windows into
 * g = s / c bucket sets instead of one per window (one bucket reduction, wider windows, fewer
 * bucket additions). Costs t times the set's device
 * memory. The plan (window width c, copies t, s = g c) comes from the set's size with at most
 * max_copies copies (0: as many as the windows need); an MSM uses them when they save work
 * for its count of scalars outside {0, 1} (else it runs as without). max_copies 1 drops the
 * tables. Replaces the set's device buffer (peak: the old plus the new). */
#define CUZK_GPU_TAB_MAX_C 24
#define CUZK_GPU_TAB_MAX_COPIES 24
cuzk_err cuzk_gpu_points_tables(cuzk_gpu_points *pts, int max_copies, cuzk_errbuf *eb);
/* Copies a set holds (1: no tables) and its device bytes (with the copies and the map of its
 * points at infinity, one bit per point: an MSM over a set with many drops their entries after
 * the sort, above). */
int cuzk_gpu_points_copies(const cuzk_gpu_points *pts);
uint64_t cuzk_gpu_points_bytes(const cuzk_gpu_points *pts);
/* Device bytes of a set of n points with the tables cuzk_gpu_points_tables(max_copies) would
 * build, for memory budgets; no device needed (gpu_plan.c). */
uint64_t cuzk_gpu_tables_bytes(cuzk_gpu_curve curve, cuzk_gpu_group g, uint64_t n,
                               int max_copies);

#define CUZK_GPU_SCALARS_MONT 1u /* scalars are Montgomery-form Fr, not canonical integers */
/* The caller promises that the scalars' bytes did not change since the previous MSM on this
 * context: when that MSM was over the same pointer, count, form and curve (any group), its
 * upload, classification, digits and sort are reused; when the scalars lie inside the host
 * range it uploaded, they are read from that upload; else everything is done again. A, B1,
 * B2 and C (a suffix of the witness) of one proof share the witness this way. */
#define CUZK_GPU_SCALARS_SAME 2u
/* Canonical scalars are checked on the device as they are classified: one not below r fails
 * the MSM with CUZK_NON_CANONICAL, and cuzk_gpu_bad_scalar() names the lowest such index.
 * (A prover that uploads a witness without reading it on the host checks it this way.)
 * The scalars are then always classified anew (no reuse of an earlier preparation). */
#define CUZK_GPU_SCALARS_CHECK 4u
/* No later MSM flagged CUZK_GPU_SCALARS_SAME will need this one's preparation (a one-off MSM
 * over host scalars, e.g. a benchmark's). An MSM that uploads its scalars then runs in parts,
 * each part's upload overlapping the work of the parts before (classification, sort and
 * accumulation), each later part adding its runs to the buckets the parts before it filled:
 * three parts for BN254 G1 (1/21, 4/21, 16/21), two for the others (1/8, 7/8), from
 * CUZK_GPU_MSM_SPLIT_MIN scalars, BLS12-381 G2 from CUZK_GPU_MSM_SPLIT_MIN_BLS_G2 (below, the
 * split costs more than the hidden upload saves). Its upload stays usable by a later
 * CUZK_GPU_SCALARS_SAME, its preparation does not. */
#define CUZK_GPU_SCALARS_ONCE 8u
#define CUZK_GPU_MSM_SPLIT_MIN ((size_t)1 << 21)
#define CUZK_GPU_MSM_SPLIT_MIN_BLS_G2 ((size_t)1 << 24)
/* A resident MSM over more points than this runs in equal parts of at most this many, one
 * after the other into one set of buckets under the whole MSM's plan: the scratch that grows
 * with the count (the sorted digits, the carries) is sized by a part, not the whole MSM (a
 * 2^27-point MSM's sort alone would need ~30 GB). Such an MSM's preparation is not kept for a
 * later CUZK_GPU_SCALARS_SAME (its upload is). CUZK_GPU_SCALARS_ONCE splits only MSMs up to
 * this size. */
#define CUZK_GPU_MSM_PART_MAX ((size_t)1 << 25)

/* Uploads scalars [lo, hi) of the n host scalars at `host` (32 bytes each) into the context's
 * scalar slot, queued on its stream (host page-locked for the copy to overlap the caller's
 * work; its bytes must not change until the next MSM). Ranges come in order from lo = 0;
 * once [0, n) is queued, an MSM flagged CUZK_GPU_SCALARS_SAME over `host` (or a range of it)
 * reads the scalars there, so a caller that fills a page-locked buffer in blocks can upload
 * each block while it fills the next. Any earlier preparation on the context is dropped. */
cuzk_err cuzk_gpu_scalars_stage(cuzk_gpu_ctx *ctx, const void *host, size_t n, size_t lo,
                                size_t hi, cuzk_errbuf *eb);

/* out = sum_{i<count} scalar_i * pts[offset + i], written as a Jacobian point (see above).
 * scalars: count x 32 bytes in host memory. */
cuzk_err cuzk_gpu_msm(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                      size_t count, const void *scalars, unsigned flags, uint64_t *out,
                      cuzk_errbuf *eb);
/* A batch: outs + j * limbs (cuzk_gpu_point_limbs words each) = sum_{i<count}
 * scalars[j][i] * pts[offset + i] for the nb vectors scalars[0 .. nb - 1] (count x 32 bytes
 * each in host memory, page-locked for their copies to overlap the MSMs; flags MONT and CHECK
 * as above, for every vector). Over a streamed set each chunk of points is copied to the device
 * once for all nb MSMs, beside the chunk's slices of the nb vectors (the context's scalar
 * buffers grow to nb slices of a chunk, 32 bytes a point each, counted by
 * cuzk_gpu_stream_buffer_bytes): the partitions of a proof read a key that does not fit the
 * device once instead of once each. Over a resident set it runs the nb MSMs one after the
 * other. A bad scalar fails the batch naming its vector and index. */
cuzk_err cuzk_gpu_msm_batch(cuzk_gpu_ctx *ctx, const cuzk_gpu_points *pts, size_t offset,
                            size_t count, size_t nb, const void *const *scalars, unsigned flags,
                            uint64_t *outs, cuzk_errbuf *eb);
/* The index of the lowest scalar not below r that the last MSM flagged CUZK_GPU_SCALARS_CHECK
 * on ctx found (UINT64_MAX: none, or no such MSM). */
uint64_t cuzk_gpu_bad_scalar(const cuzk_gpu_ctx *ctx);
/* Waits until everything queued on ctx's stream (e.g. cuzk_gpu_scalars_stage's copies) is
 * done. */
cuzk_err cuzk_gpu_sync(cuzk_gpu_ctx *ctx, cuzk_errbuf *eb);

/* ---- Fixed-base multiplication: k_i G for the generator G of one group (the test setup's
 * key points, src/groth16/setup_tmpl.h), by a window table of G on the device (one mixed
 * addition per 16-bit window) and one inversion per 32 points (src/gpu/ec/fixed_base_kernels.cuh).
 * The handle holds the table (96 MiB for BLS12-381 G1, 192 MiB for G2) and, after a product,
 * about 2.2 GiB of buffers for chunks of 2^22 (G1) or 2^21 (G2) scalars. */
typedef struct cuzk_gpu_fixed_base cuzk_gpu_fixed_base;
cuzk_err cuzk_gpu_fixed_base_new(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, cuzk_gpu_group g,
                                 cuzk_gpu_fixed_base **out, cuzk_errbuf *eb);
/* out (n affine points, the layout above; infinity for k_i = 0) = k_i G for the n scalars at
 * `scalars` (32 bytes each in host memory, canonical below r, or Montgomery Fr with
 * CUZK_GPU_SCALARS_MONT); the same bytes as the CPU's (affine points are canonical). */
cuzk_err cuzk_gpu_fixed_base_mul(cuzk_gpu_fixed_base *fb, const void *scalars, size_t n,
                                 unsigned flags, void *out, cuzk_errbuf *eb);
void cuzk_gpu_fixed_base_free(cuzk_gpu_fixed_base *fb);

/* ---- Fr vectors on the device and the NTT (domain size 2^logn, roots w = 5^((r-1)/2^logn)
 * as snarkjs uses for both curves). Elements are Montgomery-form Fr, reduced (the integer
 * a R mod r, below r), as the host's are; the transforms leave them reduced. (The passes
 * keep intermediate values below 2r, BN254's below 4r, and assume inputs below r; a vector
 * uploaded with unreduced words gives a wrong transform, not an error.) */
cuzk_err cuzk_gpu_fr_alloc(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n, cuzk_gpu_fr **out,
                           cuzk_errbuf *eb);
void cuzk_gpu_fr_free(cuzk_gpu_fr *v);
cuzk_err cuzk_gpu_fr_upload(cuzk_gpu_fr *v, const void *host, size_t n, cuzk_errbuf *eb);
cuzk_err cuzk_gpu_fr_download(cuzk_gpu_fr *v, void *host, size_t n, cuzk_errbuf *eb);

#define CUZK_GPU_NTT_FORWARD 0
#define CUZK_GPU_NTT_INVERSE 1
/* In place on v[0 .. 2^logn). Forward: v_j <- sum_i v_i (s w^j)^i, i.e. the evaluations on
 * the coset s*H (s = 1 when shift is NULL). Inverse undoes exactly that (same shift).
 * shift: one Montgomery Fr element (n8r bytes) or NULL. */
cuzk_err cuzk_gpu_ntt(cuzk_gpu_fr *v, int logn, int dir, const void *shift, cuzk_errbuf *eb);

/* snarkjs's H step on the device: a, b, c are 2^logn Montgomery Fr evaluations in host
 * memory; each is interpolated (iNTT), multiplied coefficient-wise by w_{2N}^i, evaluated
 * (NTT), and h_i = a_i b_i - c_i. If h_out is not NULL, h is copied back to it (Montgomery).
 * If pts is not NULL, out receives MSM(h, pts[offset .. offset + 2^logn)) without h leaving
 * the device. */
cuzk_err cuzk_gpu_h(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, int logn, const void *a,
                    const void *b, const void *c, void *h_out, const cuzk_gpu_points *pts,
                    size_t offset, uint64_t *out, cuzk_errbuf *eb);

/* ---- Synthesis on the device (a = A.w, b = B.w, c = a b row by row, as snarkjs). */
typedef struct cuzk_gpu_rows cuzk_gpu_rows;
/* Uploads a key's A (m = 0) and B (m = 1) matrices in CSR form, resident until freed:
 * row_ptr[m] has n_rows + 1 entries (row i's terms are records row_ptr[m][i] ..
 * row_ptr[m][i+1]); rec[m] holds row_ptr[m][n_rows] records of rec_bytes bytes (a multiple
 * of 8, at least 40): a little-endian u32 signal index at byte 0 and the coefficient times
 * R^2 mod r (Montgomery Fr, as the zkey stores it) at byte 8. Every signal index must be
 * below n_signals (the caller checked them when it loaded the key). */
cuzk_err cuzk_gpu_rows_upload(cuzk_gpu_ctx *ctx, cuzk_gpu_curve curve, size_t n_rows,
                              size_t n_signals, const uint64_t *const row_ptr[2],
                              const void *const rec[2], size_t rec_bytes, cuzk_gpu_rows **out,
                              cuzk_errbuf *eb);
void cuzk_gpu_rows_free(cuzk_gpu_rows *rows);
/* Device bytes the rows occupy. */
size_t cuzk_gpu_rows_bytes(const cuzk_gpu_rows *rows);
/* snarkjs's H step from the witness: a, b, c are synthesized on the device from the resident
 * rows (n_rows must be 2^logn) and the witness (n_signals canonical 32-byte values in host
 * memory), then everything continues as cuzk_gpu_h, a, b and c never leaving the device.
 * With CUZK_GPU_SCALARS_SAME the witness is read from the last MSM's upload on this context
 * when that upload was of this buffer and covers it (A's MSM of the same proof). abc_out:
 * NULL, or three host arrays of 2^logn elements receiving a, b, c (Montgomery; for tests). */
cuzk_err cuzk_gpu_h_witness(cuzk_gpu_ctx *ctx, const cuzk_gpu_rows *rows, int logn,
                            const void *witness, unsigned flags, void *const abc_out[3],
                            const cuzk_gpu_points *pts, size_t offset, uint64_t *out,
                            cuzk_errbuf *eb);
/* Milliseconds of the last cuzk_gpu_h_witness's synthesis kernel on ctx. */
double cuzk_gpu_last_synth_ms(const cuzk_gpu_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
