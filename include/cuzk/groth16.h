/* Groth16 proving and verification, snarkjs-compatible, for BN254 and BLS12-381.
 *
 * A proving key (cuzk_pk) is loaded once from a parsed .zkey: its points are copied into
 * aligned arrays and checked (coordinates < q, on the curve), its coefficients are checked
 * (< r) and indexed by row, and the evaluation domain is precomputed. It is then read-only:
 * any number of threads may prove with it at once.
 *
 * Points in cuzk_proof / cuzk_vk are held in snarkjs's binary layout (affine x || y,
 * coordinates little-endian Montgomery, G2 as c0 || c1; infinity all zero), which is also the
 * library's in-memory layout. */
#ifndef CUZK_GROTH16_H
#define CUZK_GROTH16_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/curve.h"
#include "cuzk/err.h"
#include "cuzk/gencircuit.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/setup.h"

#define CUZK_G1_MAX_BYTES 96
#define CUZK_G2_MAX_BYTES 192
#define CUZK_FR_BYTES 32
#define CUZK_MAX_DEVICES 16 /* GPUs a proving key can be resident on */

typedef struct {
    cuzk_curve curve;
    uint8_t a[CUZK_G1_MAX_BYTES];
    uint8_t b[CUZK_G2_MAX_BYTES];
    uint8_t c[CUZK_G1_MAX_BYTES];
} cuzk_proof;

typedef struct {
    cuzk_curve curve;
    uint32_t n_public;
    uint8_t alpha1[CUZK_G1_MAX_BYTES];
    uint8_t beta1[CUZK_G1_MAX_BYTES];
    uint8_t beta2[CUZK_G2_MAX_BYTES];
    uint8_t gamma2[CUZK_G2_MAX_BYTES];
    uint8_t delta1[CUZK_G1_MAX_BYTES];
    uint8_t delta2[CUZK_G2_MAX_BYTES];
    uint8_t *ic; /* (n_public + 1) G1 points, owned; free with cuzk_vk_clear */
} cuzk_vk;

typedef struct cuzk_pk cuzk_pk;

typedef enum { CUZK_BACKEND_AUTO = 0, CUZK_BACKEND_CPU, CUZK_BACKEND_GPU } cuzk_backend_kind;

typedef struct {
    unsigned nthreads;        /* 0: cuzk_num_threads() */
    int no_verify;            /* 1: skip the self-verification of the proof */
    int zero_rs;              /* test hook: r = s = 0, a deterministic proof */
    cuzk_backend_kind backend;
    int g2_on_gpu;            /* GPU backend: B in G2 on the GPU (1) or CPU threads beside it (0) */
    int synth_on_cpu;         /* GPU backend, cuzk_prove: a, b, c synthesized on CPU threads (1)
                               * instead of on the GPU from the key's resident A and B rows (0).
                               * The staged API (the daemon's engine) always synthesizes on the
                               * CPU, where it overlaps other partitions' GPU work. */
    int g2_device;            /* GPU backend, cuzk_prove, B in G2 on the GPU: the device for it;
                               * 0 runs it on device 0 with everything else, another device runs
                               * it beside device 0's work (off the critical path) */
    int gpu_tables;           /* GPU backend: build fixed-base tables for the key's point sets
                               * on first use of a device (CUZK_PK_STAGE_TABLES), when they fit
                               * its free memory with room for the proof's scratch; else the
                               * sets stay plain. 0: no tables. */
    int consume_key;          /* cuzk_prove on the CPU: the key serves this one proof, and each
                               * part of it (the coefficients, the domain, each point set with
                               * its table) is freed once its last reader is done, so the peak
                               * is the proof's working set plus the parts still ahead (the
                               * command line's one-shot proof). The key then only serves
                               * cuzk_pk_free; a later proof with it fails (INVALID_ARGUMENT).
                               * Ignored on a GPU. */
} cuzk_prove_opts;

typedef struct {
    double synth_ms, h_ms, msm_g1_ms, msm_g2_ms, finalize_ms, verify_ms, total_ms;
    double gpu_upload_ms; /* first GPU proof with a key: its point sets are uploaded once */
    double witness_ms;    /* the witness copied into the prover and range-checked (cuzk_prove
                           * on the GPU: its upload overlaps the copy, block by block; from a
                           * cuzk_witness_buf_alloc buffer with B in G2 on a GPU, the upload
                           * alone: the device checks it) */
    int used_gpu;         /* 1 when H and the G1 MSMs ran on the GPU */
    int gpu_tables;       /* copies in the fixed-base tables of the key's point sets on the
                           * GPU it used, the most of any set (0 or 1: none) */
    unsigned gpu_no_tables; /* with gpu_tables asked: the key's point sets (CUZK_PK_SET_*
                             * bits) on the GPUs it used whose tables would pay but did not
                             * fit beside the proof's scratch (they ran plain, ~10% slower) */
    uint64_t gpu_ba_chunk; /* the batch-affine chunk (bytes) of the GPU context it used, the
                            * largest if several: cuzk_prove's key context fits it to the
                            * memory the key's point sets and tables left (src/gpu/gpu.h) */
    int gpu_ba_quads;     /* that context's quads: 0 none, 1 for G1 sets, 2 for G2 too, 3 for
                           * G1 sets from CUZK_GPU_BA_QUADS_MIN entries (src/gpu/gpu.h) */
    int gpu_fallback;     /* 1 when backend AUTO fell back to the CPU after a GPU fault */
    char gpu_error[256];  /* that fault's message */
} cuzk_prove_stats;
/* Point-set bits (cuzk_prove_stats.gpu_no_tables, cuzk_pk_gpu_no_tables). */
#define CUZK_PK_SET_A 1u
#define CUZK_PK_SET_B1 2u
#define CUZK_PK_SET_C 4u
#define CUZK_PK_SET_H 8u
#define CUZK_PK_SET_B2 16u
/* Not a point set: the key's A and B rows (synthesis), for cuzk_pk_release_host_sets and
 * cuzk_pk_host_released. */
#define CUZK_PK_ROWS 32u

/* Loads and validates a proving key from a parsed zkey (which may be closed afterwards). */
cuzk_err cuzk_pk_load(cuzk_pk **out, const cuzk_zkey *zk, unsigned nthreads, cuzk_errbuf *eb);
/* A TEST key made in memory, never written: the circuit of cuzk_gen_circuit(p) and the key
 * `cuzk setup` makes for it with the bytes of p->seed as its seed (so `cuzk gen-circuit
 * --seed S` then `cuzk setup --seed HEX(S)` write this key), on p->nthreads threads (0: all).
 * Whoever makes it knows its secrets: it proves nothing to anyone else (CUZK_PK_GENERATED_NOTE
 * says so where keys are listed). p->witness_seed is ignored; cuzk_gen_witness makes
 * witnesses for it. info (may be NULL): the setup's figures. Errors: as cuzk_gen_circuit's
 * and cuzk_setup's (CUZK_OUT_OF_BUDGET when the setup's memory exceeds the machine's). */
cuzk_err cuzk_pk_generate(cuzk_pk **out, const cuzk_gen_params *p, cuzk_setup_info *info,
                          cuzk_errbuf *eb);
/* 1 for a key from cuzk_pk_generate. */
int cuzk_pk_is_generated(const cuzk_pk *pk);
#define CUZK_PK_GENERATED_NOTE "generated test key: secrets known to whoever made it"
void cuzk_pk_free(cuzk_pk *pk);
cuzk_curve cuzk_pk_curve(const cuzk_pk *pk);
uint32_t cuzk_pk_n_vars(const cuzk_pk *pk);
uint32_t cuzk_pk_n_public(const cuzk_pk *pk);
uint32_t cuzk_pk_domain_size(const cuzk_pk *pk);
/* Bytes the key holds in memory. */
size_t cuzk_pk_bytes(const cuzk_pk *pk);

/* The verification key of a proving key. Free with cuzk_vk_clear. */
cuzk_err cuzk_pk_vk(const cuzk_pk *pk, cuzk_vk *vk, cuzk_errbuf *eb);
void cuzk_vk_clear(cuzk_vk *vk);
/* The verification key straight from a parsed zkey (header and IC only, points validated). */
cuzk_err cuzk_zkey_vk(const cuzk_zkey *zk, cuzk_vk *vk, cuzk_errbuf *eb);

/* Backend AUTO uses the GPU when cuzk_gpu_device_count() > 0 and falls back to the CPU (noted in
 * the stats) if the GPU faults; GPU fails with CUZK_NO_DEVICE / CUZK_GPU_FAULT instead.
 * Proves with witness values (n_witness x 32 bytes, plain little-endian integers < r, w[0] = 1,
 * as in a .wtns file). The public inputs are w[1 .. n_public]. Errors: CUZK_SIZE_MISMATCH
 * (witness length), CUZK_NON_CANONICAL (a value >= r), CUZK_WITNESS_UNSATISFIED (the proof
 * failed self-verification: the witness does not satisfy the circuit), CUZK_NO_MEMORY. */
cuzk_err cuzk_prove(cuzk_proof *proof, const cuzk_pk *pk, const uint8_t *witness,
                    uint64_t n_witness, const cuzk_prove_opts *opts, cuzk_prove_stats *stats,
                    cuzk_errbuf *eb);

/* A buffer for n_values witness values (32 bytes each) that the GPU backend reads by DMA as it
 * is: page-locked host memory. cuzk_prove on the GPU, given a witness in such a buffer, skips
 * its own copy of the witness into page-locked memory (every value is still checked < r: on
 * the device when B in G2 runs on a GPU too, else on the host), which
 * at 2^24 values is most of the host's part of a proof. CUZK_NO_DEVICE without a CUDA device
 * (use ordinary memory then), CUZK_NO_MEMORY when it cannot be had. Free with
 * cuzk_witness_buf_free. */
cuzk_err cuzk_witness_buf_alloc(void **out, uint64_t n_values, cuzk_errbuf *eb);
void cuzk_witness_buf_free(void *p);

/* ------------------------------------------------------------------ key cache
 *
 * A preprocessed copy of a loaded key (points decoded and checked, coefficients indexed), so
 * a later load reads it at disk speed instead of parsing and validating the zkey again. The
 * cache records the zkey's size, modification time and inode and is refused when they differ
 * (stale), when its length or either of its hashes is wrong (truncated, corrupt), or when it
 * was written by another format version; the caller then loads the zkey and rewrites it. */
/* The cache file of a zkey: ZKEY.cuzkcache, or in cache_dir (when not NULL or "") a name
 * made of the zkey's file name and a hash of its full path. malloc'd; NULL when out of
 * memory. */
char *cuzk_pk_cache_path(const char *zkey_path, const char *cache_dir);
/* Removes CACHE_PATH.tmp.PID files, left by a cache write that was killed midway, whose
 * process no longer exists (a live writer's file stays); removed(ctx, path) is told each.
 * Returns the count. */
unsigned cuzk_pk_cache_remove_stale(const char *cache_path,
                                    void (*removed)(void *ctx, const char *path), void *ctx);
/* Writes the cache (to a temporary file renamed into place). */
cuzk_err cuzk_pk_cache_save(const cuzk_pk *pk, const char *cache_path, const char *zkey_path,
                            cuzk_errbuf *eb);
/* Loads a key from its cache. CUZK_NOT_FOUND when there is no cache file; CUZK_BAD_FORMAT /
 * CUZK_TRUNCATED (stale, corrupt, other version), CUZK_IO, CUZK_NO_MEMORY otherwise. */
cuzk_err cuzk_pk_cache_load(cuzk_pk **out, const char *cache_path, const char *zkey_path,
                            cuzk_errbuf *eb);
/* Checks a cache file without loading it: the header (magic, hash, version, curve), the
 * zkey's identity against the zkey on disk now, and the file's exact length (the payload hash
 * is checked only by cuzk_pk_cache_load, which stays the guard against corrupt arrays).
 * *file_bytes (when not NULL) receives the file's size. Errors as cuzk_pk_cache_load. */
cuzk_err cuzk_pk_cache_check(const char *cache_path, const char *zkey_path, uint64_t *file_bytes,
                             cuzk_errbuf *eb);

/* Fixed-base precomputation for the CPU MSMs: up to t shifted copies of each of the key's
 * point sets (A, B1, C, H in G1, B in G2; copy j of P is 2^(j s) P for the set's window
 * schedule, msm/msm.h), so each MSM reduces t times fewer windows at t times the points'
 * memory. t = 0 drops the tables; t = 1 keeps none either but fixes the window. Built on
 * nthreads threads (0: all); the windows are chosen for the set sizes on that many threads.
 * Call before proving with the key (it changes the key). Saved and loaded with the key
 * cache (cuzk_pk_cache_save / _load). The GPU backend does not use them. Errors:
 * CUZK_NO_MEMORY, CUZK_NOT_IN_SUBGROUP (a key point of small order); the key then has no
 * tables and still proves. */
cuzk_err cuzk_pk_precompute(cuzk_pk *pk, unsigned t, unsigned nthreads, cuzk_errbuf *eb);

/* An upper bound of the peak resident memory (bytes) of one process that loads the key of zk
 * and makes one proof with it on nthreads CPU threads (0: all): the key (with tables of
 * tab_copies copies, 0: none), a, b, c, the domain, the witness's file pages, the largest MSM's
 * scratch, and the program itself; consume as in cuzk_prove_opts.consume_key (0 keeps the
 * whole key for the length of the proof). `cuzk prove --max-memory` compares it with its
 * bound before anything is loaded. */
uint64_t cuzk_prove_memory_estimate(const cuzk_zkey *zk, unsigned nthreads, unsigned tab_copies,
                                    int consume);
/* The copies cuzk_pk_precompute should build for a key that is kept (a key cache) and proves
 * with sets of about n_points points on nthreads CPU threads (0: all): 2 from 2^10 to 2^14
 * points (the bucket sums they cut are a few per cent of a proof there, at 1.5 times the
 * points' memory; 3 and 4 copies measured no faster), 0 below (too few to matter) and from
 * 2^15 points on, where the bucket additions dominate and the tables measured no gain on 1
 * or 2 threads. why (may be NULL) receives the reason, e.g. "2^16 points, 2 threads". */
unsigned cuzk_pk_precompute_auto(uint64_t n_points, unsigned nthreads, char *why,
                                 size_t why_len);
/* The t the key's tables were built for (0: none). */
unsigned cuzk_pk_precompute_copies(const cuzk_pk *pk);

/* ------------------------------------------------------------------ staged proving
 *
 * The stages of cuzk_prove as separate calls, so the engine can run them on different
 * workers: begin (CPU: witness checks and synthesis of a, b, c), g1 (H and the G1 MSMs),
 * g2 (B in G2), end (blinding, the proof, self-verification unless opts->no_verify).
 * g1 and g2 may run at the same time on two threads; each may run on the CPU (device < 0) or
 * on a GPU (device >= 0, with `gpu` an open context on that device, or NULL to use the
 * key's own context on it, one caller at a time). The key's points are uploaded to a device
 * on its first use there and stay resident until cuzk_pk_free. A failed g1 or g2 keeps its
 * inputs, so the stage can be retried on another device or the CPU; a successful g1 frees
 * a, b, c at once. opts is copied; opts->backend and g2_on_gpu are ignored.
 * cuzk_prove_begin_ex with CUZK_PROVE_DEFER_SYNTH leaves synthesis to g1: a GPU g1 then
 * computes a, b, c on the device from the key's A and B rows (staged with
 * CUZK_PK_STAGE_ROWS, or uploaded on first use) and they never exist on the host; a CPU g1
 * (or the fallback after a GPU failure) synthesizes on the CPU first. */
typedef struct cuzk_prove_state cuzk_prove_state;
struct cuzk_gpu_ctx;
#define CUZK_PROVE_DEFER_SYNTH 1u
cuzk_err cuzk_prove_begin(cuzk_prove_state **out, const cuzk_pk *pk, const uint8_t *witness,
                          uint64_t n_witness, const cuzk_prove_opts *opts, cuzk_errbuf *eb);
cuzk_err cuzk_prove_begin_ex(cuzk_prove_state **out, const cuzk_pk *pk, const uint8_t *witness,
                             uint64_t n_witness, const cuzk_prove_opts *opts, unsigned flags,
                             cuzk_errbuf *eb);
cuzk_err cuzk_prove_g1(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                       cuzk_errbuf *eb);
cuzk_err cuzk_prove_g2(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                       cuzk_errbuf *eb);
/* g1 and g2 as one stage on one device (or the CPU): on a GPU, B in G2 reuses the witness
 * upload and digit sort of the A and B1 MSMs. After a failure, cuzk_prove_g2_done says
 * whether B in G2 was done (a retry of either stage skips what is done). */
cuzk_err cuzk_prove_g1g2(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                         cuzk_errbuf *eb);
int cuzk_prove_g2_done(const cuzk_prove_state *s);
/* The witness MSMs of k proofs of one key over its point sets streamed from host memory on
 * `device` (cuzk_pk_gpu_stage_streamed): per set, one batch (gpu.h cuzk_gpu_msm_batch) copies
 * each chunk of points once for the k witnesses. A, B1 and C, and B2 with with_g2; a set is
 * done for every proof or for none. Each proof's GPU g1 stage then skips the MSMs done here
 * (the results are checked on the curve as theirs are); a proof whose g1 MSMs ran already is
 * left out, as are sets that are resident. On failure the proofs are as before (their own
 * stages run every MSM) and the error says why. *batched: the sets done (CUZK_PK_SET_*).
 * device < 0 (the engine's emulated devices, for tests): the sets in `emulate` (CUZK_PK_SET_*
 * bits: the ones a device would stream) on CPU threads, each proof's the CPU g1 stage's. */
cuzk_err cuzk_prove_gpu_batch(cuzk_prove_state *const *states, size_t k, int device,
                              struct cuzk_gpu_ctx *gpu, int with_g2, unsigned emulate,
                              unsigned *batched, cuzk_errbuf *eb);
cuzk_err cuzk_prove_end(cuzk_prove_state *s, cuzk_proof *proof, cuzk_errbuf *eb);
/* What a stage of a key on a GPU holds besides the G1 point sets A, B1, C, H: */
#define CUZK_PK_STAGE_G2 1u   /* B in G2's points */
#define CUZK_PK_STAGE_ROWS 2u /* the A and B rows, for synthesis on the device */
/* Fixed-base tables for the point sets (gpu.h cuzk_gpu_points_tables): up to
 * CUZK_GPU_TAB_MAX_COPIES times their device memory (12 at 2^24), MSMs ~10-13% faster at 2^24
 * (docs/PERFORMANCE.md). Built on the device once per stage. */
#define CUZK_PK_STAGE_TABLES 4u
/* Uploads the key's point sets (and what `parts`, CUZK_PK_STAGE_* bits, adds) to GPU
 * `device` now rather than on its first proof there. */
cuzk_err cuzk_pk_gpu_stage(cuzk_pk *pk, int device, unsigned parts, cuzk_errbuf *eb);
/* The same with the point sets in `streamed` (CUZK_PK_SET_* bits) left in host memory: every
 * MSM over one copies its points to the device in chunks of about chunk_bytes, the copy of
 * the next chunk beside the MSM of this one (gpu.h cuzk_gpu_points_host), for keys larger
 * than the device's memory. The key's arrays should be page-locked (cuzk_pk_gpu_arrays,
 * cuzk_gpu_pin) for the copies to run at full bus speed. A set already staged keeps its
 * place until cuzk_pk_gpu_unstage. */
cuzk_err cuzk_pk_gpu_stage_streamed(cuzk_pk *pk, int device, unsigned parts, unsigned streamed,
                                    uint64_t chunk_bytes, cuzk_errbuf *eb);
/* The key's point sets streamed on GPU `device` (CUZK_PK_SET_* bits; 0 out of range). */
unsigned cuzk_pk_gpu_streamed(cuzk_pk *pk, int device);
/* Bit d set when the key's points are resident on GPU device d. */
uint32_t cuzk_pk_gpu_mask(cuzk_pk *pk);
/* The key's point sets on GPU `device` (CUZK_PK_SET_* bits) whose fixed-base tables would pay
 * (cuzk_gpu_tables_bytes: more than one copy) but are not built: after a stage with
 * CUZK_PK_STAGE_TABLES, those that did not fit. 0 for a device out of range. */
unsigned cuzk_pk_gpu_no_tables(cuzk_pk *pk, int device);
/* The names of the sets in `sets` (CUZK_PK_SET_* bits), comma-separated ("H,B2"; "" for none),
 * into buf (truncated to its size). */
void cuzk_pk_set_names(unsigned sets, char *buf, size_t size);
/* Frees the key's point sets (and its own context) on GPU `device`, undoing cuzk_pk_gpu_stage;
 * a later stage or proof there uploads them again. The caller guarantees that no g1 / g2
 * stage uses the key on that device meanwhile (the engine's GPU tier holds a key while a
 * stage runs). */
void cuzk_pk_gpu_unstage(cuzk_pk *pk, int device);
/* Frees the host copies of the point sets in `sets` (CUZK_PK_SET_* bits) of a key staged
 * whole on every device that will prove with it, so they live on the devices only: their
 * host bytes come back (cuzk_pk_bytes drops by them; returns the bytes freed). Unpin the
 * arrays first. From then on a CPU stage that reads such a set, and a stage on a device the
 * key is not staged on, fail with CUZK_UNSUPPORTED naming the set, and the key must not be
 * unstaged (cuzk_pk_gpu_unstage) where it holds them. With CUZK_PK_ROWS in `sets` the same
 * holds for the A and B rows of a key staged with them (CUZK_PK_STAGE_ROWS): synthesis on the
 * CPU then fails with CUZK_UNSUPPORTED. */
uint64_t cuzk_pk_release_host_sets(cuzk_pk *pk, unsigned sets);
/* The sets whose host copies cuzk_pk_release_host_sets freed. */
unsigned cuzk_pk_host_released(const cuzk_pk *pk);
/* Device bytes a stage of the key with `parts` (CUZK_PK_STAGE_* bits) occupies: the G1
 * point sets, plus B in G2, plus the rows; the point sets with their tables when `parts` has
 * CUZK_PK_STAGE_TABLES. */
uint64_t cuzk_pk_gpu_bytes(cuzk_pk *pk, unsigned parts);
/* The host arrays a stage may upload and their byte lengths, in this order: A, B1, C, H in
 * G1, B in G2, then the rows (A's and B's row offsets, A's and B's terms); a device copy has
 * the host's layout and length. What is worth page-locking (cuzk_gpu_pin) so uploads run at
 * full bus speed. Returns CUZK_PK_GPU_ARRAYS. The arrays stay valid until cuzk_pk_free
 * (unpin them first). */
#define CUZK_PK_GPU_ARRAYS 9
size_t cuzk_pk_gpu_arrays(cuzk_pk *pk, void *ptr[CUZK_PK_GPU_ARRAYS],
                          size_t len[CUZK_PK_GPU_ARRAYS]);
/* Timings so far (synth, h, msm_g1, msm_g2, finalize, verify, gpu_upload, used_gpu). */
const cuzk_prove_stats *cuzk_prove_state_stats(const cuzk_prove_state *s);
/* Bytes the state holds now (w, and a, b, c until g1 succeeds). */
uint64_t cuzk_prove_state_bytes(const cuzk_prove_state *s);
/* Page-locks the state's copy of the witness (cudaHostRegister through `gpu`, portable to
 * every device), so GPU stages upload it by DMA instead of through the staging buffers;
 * undone when the witness is freed (cuzk_prove_end or cuzk_prove_state_free). `gpu` must stay
 * open until then. CUZK_NO_DEVICE without a GPU; the state is unchanged on any error. */
cuzk_err cuzk_prove_state_pin(cuzk_prove_state *s, struct cuzk_gpu_ctx *gpu, cuzk_errbuf *eb);
void cuzk_prove_state_free(cuzk_prove_state *s);

/* Checks a proof against a verification key and public inputs (n_public x 32 bytes, plain
 * little-endian). CUZK_OK when valid, CUZK_VERIFY_FAILED when not; other codes for malformed
 * input (a point off the curve or outside the subgroup, a public input >= r, wrong count). */
cuzk_err cuzk_verify(const cuzk_vk *vk, const uint8_t *pub, uint64_t n_public,
                     const cuzk_proof *proof, cuzk_errbuf *eb);

/* Checks that a witness satisfies every constraint of an r1cs: <A,w> <B,w> = <C,w>.
 * CUZK_WITNESS_UNSATISFIED names the first failing constraint. */
cuzk_err cuzk_r1cs_check_witness(const cuzk_r1cs *r1cs, const uint8_t *witness,
                                 uint64_t n_witness, cuzk_errbuf *eb);

/* ------------------------------------------------------------------ snarkjs JSON */

/* proof.json: {"pi_a": [...], "pi_b": [...], "pi_c": [...], "protocol": "groth16", "curve"} */
void cuzk_proof_to_json(cuzk_strbuf *sb, const cuzk_proof *proof);
/* public.json: the decimal strings of the public inputs. */
void cuzk_public_to_json(cuzk_strbuf *sb, const uint8_t *pub, uint64_t n_public);
/* verification_key.json, with vk_alphabeta_12 = e(alpha, beta) as snarkjs writes it. */
cuzk_err cuzk_vk_to_json(cuzk_strbuf *sb, const cuzk_vk *vk, cuzk_errbuf *eb);

/* Parsers (points validated: on curve and in the subgroup). `name` is used in messages. */
cuzk_err cuzk_proof_from_json(cuzk_proof *proof, const cuzk_json *j, cuzk_curve curve,
                              const char *name, cuzk_errbuf *eb);
cuzk_err cuzk_vk_from_json(cuzk_vk *vk, const cuzk_json *j, const char *name, cuzk_errbuf *eb);
/* *pub is malloc'd (n x 32 bytes); free() it. */
cuzk_err cuzk_public_from_json(uint8_t **pub, uint64_t *n, const cuzk_json *j, cuzk_curve curve,
                               const char *name, cuzk_errbuf *eb);

/* ZCash/Filecoin compressed proof (BLS12-381 only): A (48) | B (96) | C (48) = 192 bytes. */
#define CUZK_PROOF_COMPRESSED_BYTES 192
cuzk_err cuzk_proof_to_compressed(uint8_t out[CUZK_PROOF_COMPRESSED_BYTES],
                                  const cuzk_proof *proof, cuzk_errbuf *eb);
cuzk_err cuzk_proof_from_compressed(cuzk_proof *proof, const uint8_t *in, size_t len,
                                    cuzk_errbuf *eb);

#endif
