/* The curve-independent prover (prover.c): the proof state its stages share, the stages on the
 * CPU and the GPU, the key's staging on the GPUs, and the one-call proof over them. What needs
 * the curve's arithmetic it reaches through the key's cuzk__prover_ops (groth16_tmpl.h). */
#ifndef CUZK_GROTH16_PROVER_H
#define CUZK_GROTH16_PROVER_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/groth16.h"
#include "ec/ec.h"
#include "ff/tower.h"
#include "gpu/gpu.h"
#include "groth16/pk_device.h"
#include "msm/msm.h"

/* Bytes of an element of Fr, the same on both curves: a witness value (plain) or an element
 * of a, b, c (Montgomery form). */
#define CUZK__FR_BYTES ((size_t)32)

/* An MSM result of either curve in Jacobian coordinates: the GPU writes X, Y, Z limbs (Fp2 as
 * c0, c1) in exactly this layout. */
typedef union {
    bn254_g1_jac bn254;
    bls12_381_g1_jac bls12_381;
} cuzk__g1_jac;

typedef union {
    bn254_g2_jac bn254;
    bls12_381_g2_jac bls12_381;
} cuzk__g2_jac;

/* What finishing needs that no MSM result goes into: the blinding scalars r, s and rs = -r s,
 * r delta1, s delta1, -r s delta1, s delta2, and the verification's Miller loop of the pairs
 * that do not depend on the proof (unless no_verify). */
#define CUZK__PROVE_PREP(P)                                                                   \
    typedef struct {                                                                          \
        P##_fr_t r, s, rs;                                                                    \
        P##_g1_jac rd1, sd1, rsd1;                                                            \
        P##_g2_jac sd2;                                                                       \
        P##_fp12_t ml;                                                                        \
    } P##_prove_prep;
CUZK__PROVE_PREP(bn254)
CUZK__PROVE_PREP(bls12_381)
#undef CUZK__PROVE_PREP

typedef union {
    bn254_prove_prep bn254;
    bls12_381_prove_prep bls12_381;
} cuzk__prove_prep;

typedef struct cuzk__prover_ops cuzk__prover_ops;

/* The part of a proving key that does not depend on the curve: its curve's operations, its
 * dimensions, its residency on each GPU, and whether a consuming proof freed its parts. First
 * member of each curve's key (groth16_tmpl.h), which the curve's operations reach it from. */
typedef struct cuzk__pk_base {
    const cuzk__prover_ops *ops;
    uint32_t n_vars, n_public, domain_size, log_n;
    cuzk__pk_device dev[CUZK_MAX_DEVICES];
    int consumed; /* a proof with consume_key freed the key's parts */
    unsigned host_released; /* CUZK_PK_SET_* whose host copies live on the devices only */
} cuzk__pk_base;

/* The curve's part of proving, one table per curve (groth16_tmpl.h). Point set k: 0 A, 1 B1,
 * 2 C, 3 H (G1), 4 B2. Scalars are 32 bytes a value, any alignment. */
struct cuzk__prover_ops {
    cuzk_gpu_curve gpu_curve;
    const uint64_t *fr_modulus; /* r as 4 little-endian limbs: every witness value is below */
    size_t coef_bytes; /* a coefficient record: u32 signal at byte 0, the value at byte 8 */
    /* The key's host arrays in upload order (cuzk_pk_gpu_arrays). */
    size_t (*arrays)(cuzk__pk_base *pk, void *ptr[CUZK_PK_GPU_ARRAYS],
                     size_t len[CUZK_PK_GPU_ARRAYS]);
    /* a = A.w, b = B.w, c = a*b (domain_size elements each) from n_vars witness values. */
    void (*synthesize)(cuzk__pk_base *pk, const uint8_t *w, void *a, void *b, void *c,
                       unsigned nthreads);
    /* h in place of a (b and c are scratch). */
    cuzk_err (*h)(cuzk__pk_base *pk, void *a, void *b, void *c, unsigned nthreads);
    /* G1 MSM of set k (0..3) over n scalars, with the key's fixed-base table when it has one. */
    cuzk_err (*g1_msm)(cuzk__pk_base *pk, int k, cuzk__g1_jac *out, const uint8_t *scalars,
                       size_t n, const cuzk_msm_opts *o);
    cuzk_err (*g2_msm)(cuzk__pk_base *pk, cuzk__g2_jac *out, const uint8_t *scalars, size_t n,
                       const cuzk_msm_opts *o);
    int (*g1_on_curve)(const cuzk__g1_jac *p);
    int (*g2_on_curve)(const cuzk__g2_jac *p);
    /* A consuming proof frees each part of the key once its last reader is done: the
     * coefficients after synthesis, the domain after H, set k with its table after its MSM. */
    void (*consume_coefs)(cuzk__pk_base *pk);
    void (*consume_domain)(cuzk__pk_base *pk);
    void (*consume_set)(cuzk__pk_base *pk, int k);
    /* Fills s->pre (random r, s unless opts.zero_rs). */
    void (*prep)(cuzk_prove_state *s);
    /* The proof from the MSM results and s->pre, self-verified unless opts.no_verify; sets
     * st.finalize_ms and st.verify_ms. 0 when the verification failed. */
    int (*finish)(cuzk_prove_state *s, cuzk_proof *proof);
};

/* One proof in progress. Stages:
 *   start   (CPU) witness checks into w, and synthesis of a, b, c unless deferred;
 *   synth   (CPU) a, b, c, allocated here: at start, or, when it deferred synthesis, first
 *           thing in a CPU G1 stage; a GPU G1 stage then synthesizes on the device instead
 *           and a, b, c never exist on the host;
 *   g1      H and the G1 MSMs, on the CPU or a GPU; a, b, c are freed when it succeeds and
 *           kept when it fails, so the stage can be retried on another device or the CPU;
 *   g2      B in G2, on the CPU or a GPU; may run on another thread at the same time as g1
 *           (both only read w);
 *   end     blinding, the proof, self-verification; frees w. */
struct cuzk_prove_state {
    cuzk__pk_base *pk;
    cuzk_prove_opts opts;
    uint8_t *w;      /* n_vars values */
    void *a, *b, *c; /* domain_size elements each */
    /* The witness as the CPU stages read it: w, or with w NULL the caller's witness itself
     * (cuzk__prove on the CPU, which outlives the proof; a .wtns mapping leaves it 4 bytes off
     * 8-byte alignment, so it is only read bytewise). */
    const uint8_t *wb;
    cuzk__g1_jac pa, pb1, pc, ph;
    cuzk__g2_jac pb2;
    int g1_done, g2_done, g1_msm_done, synthesized;
    unsigned msm_pre; /* CUZK_PK_SET_A, B1, C: results in pa, pb1, pc from a batch
                       * (cuzk_prove_gpu_batch), skipped by the g1 stage */
    int w_borrowed; /* w is the caller's buffer (cuzk_prove's page-locked one): not freed here */
    int w_staged;   /* w was queued to device 0's key context while it was copied
                     * (cuzk_gpu_scalars_stage): the first witness MSM there reads it */
    int w_checked;  /* every value of w is known to be below r (start checks it on the host
                     * unless the device is to: then A's MSM does, or the check before any
                     * CPU stage reads w) */
    cuzk_gpu_ctx *w_pin; /* w is page-locked through this context (cuzk_prove_state_pin) */
    /* pre is filled once (pre_ready), on a thread beside the GPU work in cuzk__prove. */
    int pre_ready;
    cuzk__prove_prep pre;
    int consume; /* free the key's parts as the CPU stages finish with them (consume_key) */
    double g2_upload_ms; /* the GPU B-in-G2 stage's key upload time (added to st at the end) */
    cuzk_prove_stats st;
    double t0;
};

/* A zeroed base set up for the curve's ops; _free frees what its devices hold. */
void cuzk__pk_base_init(cuzk__pk_base *pk, const cuzk__prover_ops *ops);
void cuzk__pk_base_free(cuzk__pk_base *pk);

/* The start stage (cuzk_prove_begin_ex): the witness checked and copied, synthesis unless
 * defer_synth. */
cuzk_err cuzk__prove_start(cuzk_prove_state **out, cuzk__pk_base *pk, const uint8_t *witness,
                           uint64_t n_witness, const cuzk_prove_opts *opts, int defer_synth,
                           cuzk_errbuf *eb);

/* The whole proof in one call (cuzk_prove): on the CPU, or H and the G1 MSMs on device 0 with
 * B in G2 on a GPU or CPU threads beside them. With fallback, a GPU fault redoes the GPU's
 * stages on the CPU. */
cuzk_err cuzk__prove(cuzk_proof *proof, cuzk__pk_base *pk, const uint8_t *witness,
                     uint64_t n_witness, const cuzk_prove_opts *opts, int use_gpu, int fallback,
                     cuzk_prove_stats *st, cuzk_errbuf *eb);

/* The key on the GPUs: cuzk_pk_gpu_stage, _stage_streamed, _streamed, _unstage, _no_tables
 * and cuzk_pk_gpu_mask of the public API. */
cuzk_err cuzk__pk_gpu_stage(cuzk__pk_base *pk, int device, unsigned parts, cuzk_errbuf *eb);
cuzk_err cuzk__pk_gpu_stage_streamed(cuzk__pk_base *pk, int device, unsigned parts,
                                     unsigned streamed, uint64_t chunk_bytes, cuzk_errbuf *eb);
unsigned cuzk__pk_gpu_streamed(cuzk__pk_base *pk, int device);
void cuzk__pk_gpu_unstage(cuzk__pk_base *pk, int device);
unsigned cuzk__pk_gpu_no_tables(cuzk__pk_base *pk, int device);
uint32_t cuzk__pk_gpu_mask(cuzk__pk_base *pk);

#endif
