/*
 * Internals of the CUDA backend shared by its translation units: the context, resident
 * buffers, scratch slots, the error macros and the per-curve entry points.
 * (CUDA separable compilation is off, so only host code crosses translation units.)
 */
#ifndef CUZK_GPU_INTERNAL_CUH
#define CUZK_GPU_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "gpu/gpu_plan.h"

/* Scratch slots: each grows on demand and is then reused, so a steady state of proofs of one
 * size does no cudaMalloc. */
enum {
    SCR_SC_IN,   /* scalars as given (host copy) */
    SCR_SC,      /* canonical scalars */
    SCR_FLAG1,   /* scalar == 1 */
    SCR_FLAG2,   /* scalar not in {0, 1} */
    SCR_IDX1,    /* indices of scalars == 1 */
    SCR_IDX2,    /* indices of other scalars */
    SCR_NSEL,    /* selected counts */
    SCR_KEY0,
    SCR_KEY1,
    SCR_VAL0,
    SCR_VAL1,
    SCR_CUB,     /* CUB temporary storage */
    SCR_BUCKETS,
    SCR_CKEY0,
    SCR_CKEY1,
    SCR_CPT0,
    SCR_CPT1,
    SCR_CHUNK0,
    SCR_CHUNK1,
    SCR_RES,
    SCR_NTT_TMP,
    SCR_HA,
    SCR_HB,
    SCR_HC,
    SCR_BA_PRE,  /* batch-affine accumulation: prefix products of the pairs' denominators (with
                  * quads, the pair sums after them: one slot, so that G1 with quads and G2
                  * without share the chunk's bytes instead of each growing its own slot) */
    SCR_BA_TREE, /* its product tree */
    SCR_BA_NPRE, /* prefixes per slice */
    SCR_BA_MASK, /* with quads: each slice's quads and point-by-point pairs */
    SCR_IDX1K,    /* the ones' indices whose points are not at infinity (CUZK_GPU_INF_DROP) */
    SCR_COUNT
};

/* One part of an MSM split so that its upload overlaps its work (cuzk_gpu_msm,
 * CUZK_GPU_SCALARS_ONCE); cuzk_gpu_msm sets it before each msm_run. The parts (two or three,
 * each larger than the one before) go into one set of buckets under one plan (window width
 * c, g bucket sets), which the first part makes from its own count of scalars outside {0, 1}
 * scaled to the whole MSM; a later part adds its buckets into the first's. A later part with
 * far more such scalars than the parts before predict (scalars ordered, e.g. zeros first) runs
 * alone: the sum so far is finished, the buckets restart under a plan for the parts left, and
 * the results are added on the host: a plan made for too few scalars would need many more
 * windows (memory and time). Three parts for BN254 G1, two for the others (msm_split_run). */
#define CUZK_GPU_SPLIT_MAXP 3
struct cuzk__gpu_part {
    bool on, first, last;
    size_t base;  /* the part's first scalar within the whole MSM */
    size_t total; /* the whole MSM's scalars */
    size_t nmax;  /* the largest part's (scratch sizes: no slot grows between the parts) */
    cudaEvent_t ready; /* the part's upload on ctx->up_stream (NULL: on ctx->stream) */
    /* Kept from the first part (or the last that ran alone) for the others. */
    int c, g;
    uint64_t n1, n2; /* the ones and others in these buckets so far */
    size_t n_seen;   /* the scalars they came from */
    /* The finished sum (Jacobian, device layout) of the parts before one that ran alone. */
    bool has_out;
    int parts, alone; /* the parts, and how many of them ran alone (CUZK_GPU_TRACE) */
    uint64_t first_out[36];
};

/* Pinned staging for host-to-device uploads: 2 x 32 MiB per context. */
#define CUZK_GPU_STAGE_BYTES ((size_t)32 << 20)

/* The MSM's sums to finish on the host: W (nb + 1) + 1 <= 256 Jacobian points (nb + 1 <=
 * c - 3 with chunks of S >= 8 buckets, W = nbits / c + 1) of at most 288 bytes (BLS12-381
 * G2); also the batch-affine root's inversion. */
#define CUZK_GPU_HOST_RES_BYTES 131072

/* NTT pass geometry (ntt_core, k_ntt_pass, cuzk__gpu_ntt_plan): up to 2^CUZK_GPU_NTT_LOG_SH
 * elements per block in shared memory, after the first pass tiles of 2^CUZK_GPU_NTT_LOB
 * contiguous elements per gather (0: by size, cuzk__gpu_ntt_auto_lob), stages spread evenly over
 * the fewest passes (CUZK_GPU_NTT_EVEN). The environment overrides them for A/B runs:
 * CUZK_GPU_NTT_BLOCK (1024 or 2048), CUZK_GPU_NTT_TILE (1..3), CUZK_GPU_NTT_PLAN (greedy or
 * even), CUZK_GPU_NTT_RADIX (below); cuzk_gpu_open refuses a value it does not understand.
 * The defaults are the measured ones (src/gpu/PERF-NOTES.md, eighth pass). */
#ifndef CUZK_GPU_NTT_LOG_SH
#define CUZK_GPU_NTT_LOG_SH 10
#endif
#ifndef CUZK_GPU_NTT_LOB
#define CUZK_GPU_NTT_LOB 0
#endif
#ifndef CUZK_GPU_NTT_EVEN
#define CUZK_GPU_NTT_EVEN 1
#endif
/* Two stages per trip through shared memory (k_ntt_pass4) for blocks of up to 1024 elements:
 * 0 off, 1 at 64 registers, 2 at 80 (NTT 2^27 41.7 -> 38.0 ms, BN254, H200,
 * src/gpu/PERF-NOTES.md eighth pass), 3 at 80 with each pass's twiddles staged in shared
 * memory (the default: 2^27 38.0 -> 36.5 ms, ninth pass); CUZK_GPU_NTT_RADIX=2|4|4w|4s
 * overrides it. */
#ifndef CUZK_GPU_NTT_R4
#define CUZK_GPU_NTT_R4 3
#endif
/* G2's batch-affine kernels two lanes a slice (ba_halves.cuh; CUZK_GPU_BA_HALVES's bits), by
 * G2's Fp2 size when the variable is unset. 11, k_ba_pairs_h, k_ba_quads_h and k_ba_pass_b_h
 * with their products one after the other (H200, 2^24 G2 MSMs with tables: BN254 115.0 -> 112.7
 * ms, BLS12-381 238.9 -> 231.5; 15, the products in interleaved pairs, was slower:
 * src/gpu/PERF-NOTES.md, session 32), for BN254 (64 bytes); 27, 11 with the octs (bit 4), for
 * BLS12-381 (96 bytes): its 2^24 G2 MSM 232.3-232.5 -> 230.9-231.0 ms on an H200, 236.2-237.1 ->
 * 235.4-236.7 on an H100, where BN254's was 0.1-0.5% slower with them (session 35). */
#ifndef CUZK_GPU_BA_HALVES_DEFAULT_64
#define CUZK_GPU_BA_HALVES_DEFAULT_64 11
#endif
#ifndef CUZK_GPU_BA_HALVES_DEFAULT_96
#define CUZK_GPU_BA_HALVES_DEFAULT_96 27
#endif
/* A CUZK_GPU_BA_HALVES value the kernels can run: 0 to 31, the octs (16) only with the quads
 * (2). cuzk_gpu_open refuses any other from the variable; the defaults are checked here. */
constexpr bool cuzk__gpu_ba_halves_ok(long v)
{
    return v >= 0 && v <= 31 && (!(v & 16) || (v & 2));
}
static_assert(cuzk__gpu_ba_halves_ok(CUZK_GPU_BA_HALVES_DEFAULT_64),
              "CUZK_GPU_BA_HALVES_DEFAULT_64: 0 to 31, bit 4 only with bit 1");
static_assert(cuzk__gpu_ba_halves_ok(CUZK_GPU_BA_HALVES_DEFAULT_96),
              "CUZK_GPU_BA_HALVES_DEFAULT_96: 0 to 31, bit 4 only with bit 1");

struct cuzk_gpu_ctx {
    int device;
    int sm_count;
    char name[256];
    cudaStream_t stream;
    void *scr[SCR_COUNT];
    size_t scr_cap[SCR_COUNT];
    void *tw[2]; /* per curve: w_{2^L}^i for i < 2^(L-1), Montgomery Fr */
    int tw_log[2];
    void *host_res; /* pinned, CUZK_GPU_HOST_RES_BYTES, for results */
    /* Two pinned staging buffers of CUZK_GPU_STAGE_BYTES for large uploads from pageable
     * memory (cuzk__gpu_upload), each with the event of the last copy out of it; NULL when
     * they could not be allocated (uploads then go straight from pageable memory). */
    void *stage[2];
    cudaEvent_t stage_ev[2];
    /* A second stream for the upload of a split MSM's second part (CUZK_GPU_SCALARS_ONCE), the
     * events that order it after the first part's upload and the second part after it, and
     * the smallest count split (CUZK_GPU_MSM_SPLIT; 0: never) and whether in every group
     * (the variable set) or not BLS12-381 G2 (the default). */
    cudaStream_t up_stream;
    cudaEvent_t up_ev[CUZK_GPU_SPLIT_MAXP];
    size_t split_min;
    unsigned split_div; /* CUZK_GPU_MSM_SPLIT_DIV: parts grow by split_div - 1 (0: by group) */
    unsigned split_parts; /* CUZK_GPU_MSM_SPLIT_PARTS: 2 or 3 (0: by group) */
    bool split_all;
    cuzk__gpu_part part;
    /* The scalar side of the last MSM over host scalars: their upload, classification (0, 1,
     * other), digits and radix sort, which depend on the scalars only, never on the points or
     * the group. An MSM flagged CUZK_GPU_SCALARS_SAME over the same scalars (same pointer,
     * count, form and curve) skips it and reads them from the scratch slots SCR_IDX1 and
     * SCR_KEY0/1, SCR_VAL0/1 (A, B1 and B2 of a proof share the witness). Any other MSM
     * clears valid before it overwrites those slots; a failed MSM clears it too. */
    struct {
        int valid;
        const void *host;
        size_t n;
        bool mont;
        int curve;
        uint32_t n1, n2;
        /* The sorted digits' windows: c bits (0: none sorted), g bucket sets, tables of
         * stride points (0: none); an MSM over these scalars with other windows (a set with
         * other tables, or none) sorts again from SCR_SC and SCR_IDX2. */
        int c, g;
        uint32_t stride;
        int ksel, vsel; /* which buffer of each sort pair holds the sorted data */
    } prep;
    bool prep_reuse; /* set by cuzk_gpu_msm for the next msm_run only */
    bool prep_check; /* likewise: CUZK_GPU_SCALARS_CHECK (canonical scalars) */
    uint64_t bad_scalar; /* what the last checked MSM found (UINT64_MAX: none) */
    int ba_mode;      /* CUZK_GPU_BATCH_AFFINE: -1 unset (the default), 0 off, 1 on, 2 every
                       * size, 3 G2 only (cuzk__gpu_ba_on) */
    size_t ba_chunk;  /* its bytes per chunk: CUZK_GPU_BA_CHUNK_BYTES or CUZK_GPU_BA_PRE_BYTES */
    int ba_quads;     /* pairs of pair sums in affine too: CUZK_GPU_BA_QUADS (1 G1, 2 G2 too) or
                       * cuzk_gpu_ba_fit's 3 (large G1 MSMs) */
    int ba_halves;    /* CUZK_GPU_BA_HALVES: G2's batch-affine kernels two lanes a slice (bits:
                       * 1 k_ba_pairs_h, 2 k_ba_quads_h, 8 k_ba_pass_b_h, 4 interleaved products,
                       * 16 octs with 2; -1 unset: CUZK_GPU_BA_HALVES_DEFAULT_64 / _96 by
                       * G2's Fp2 size, in gpu_impl.cuh's accumulate) */
    uint32_t red_chunk; /* CUZK_GPU_REDUCE_CHUNK: the bucket reduction's largest chunk (32) */
    uint32_t carry_lk;  /* CUZK_GPU_CARRY_SLICE: carries per thread at levels >= 2 (4) */
    uint32_t slice_min; /* CUZK_GPU_SLICE_MIN: a floor on the level-1 slice length (0: none) */
    int ba_long;        /* CUZK_GPU_BA_LONG_SLICES: batch-affine slices by the SMs (1) */
    int inf_drop;       /* CUZK_GPU_INF_DROP (gpu.h): 0, 1 or 2 */
    int ntt_log_sh;   /* CUZK_GPU_NTT_BLOCK: elements per NTT pass block, log2 (10 or 11) */
    int ntt_lob;      /* CUZK_GPU_NTT_TILE: tile after pass 1, log2 elements (0: by size) */
    int ntt_even;     /* CUZK_GPU_NTT_PLAN=even: stages spread evenly over the passes */
    int ntt_r4;       /* CUZK_GPU_NTT_RADIX: 0 (2), 1 (4), 2 (4w), 3 (4s): k_ntt_pass4 */
    bool ntt_big_attr[2]; /* per curve: the 64 KiB NTT pass kernels' shared-memory limit set */
    bool ntt_tws_attr[2]; /* the same for the staged-twiddle two-stage kernels */
    double synth_ms; /* the last cuzk_gpu_h_witness's synthesis kernel, host-timed */
    /* What SCR_SC_IN holds: the upload of n host scalars from host (valid = 0: nothing). An
     * MSM flagged CUZK_GPU_SCALARS_SAME over a range inside it reads them there (C's private
     * witness is a suffix of the witness A uploaded). */
    struct {
        int valid;
        const uint8_t *host;
        size_t n;
        size_t next; /* cuzk_gpu_scalars_stage: scalars [0, next) of host queued so far */
    } up;
};

struct cuzk_gpu_points {
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_curve curve;
    cuzk_gpu_group group;
    size_t n;
    void *d;   /* t n points: copy k of point i at k n + i (cuzk_gpu_points_tables) */
    int t, s;  /* copies (1: none), bits between copies */
    size_t n_inf; /* points at infinity among the n (counted on the device at upload) */
    uint32_t *inf_bits; /* bit i of word i / 32: point i at infinity (cuzk__gpu_inf_map_bytes) */
};

/* A set's fixed-base tables as an MSM reads them: t copies s bits apart, copy k of point i at
 * k stride + i (t = 1: none). */
struct cuzk__gpu_tab {
    size_t stride;
    int t, s;
    int ba_g1; /* a G1 set that prefers batch-affine accumulation (cuzk__gpu_ba_on) */
    /* The set's map of points at infinity when the MSM drops their entries (NULL: keeps
     * them), and the set index of the MSM's first point (its offset). */
    const uint32_t *inf;
    size_t off;
};

/* A key's A and B matrices in CSR form, resident (cuzk_gpu_rows_upload). */
struct cuzk_gpu_rows {
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_curve curve;
    size_t n_rows, n_signals;
    uint64_t *rp[2]; /* n_rows + 1 each */
    void *rec[2];    /* records of `stride` bytes */
    uint32_t stride;
    size_t bytes;
};

struct cuzk_gpu_fr {
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_curve curve;
    size_t n;
    void *d;
};

cuzk_err cuzk__gpu_fault(cuzk_errbuf *eb, const char *file, int line, const char *call,
                         cudaError_t e);

#define CU(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess)                                                            \
            return cuzk__gpu_fault(eb, __FILE__, __LINE__, #call, e_);                    \
    } while (0)

/* After every kernel launch: catches bad launch configurations at once; faults inside the
 * kernel surface at the next checked synchronisation. */
#define LAUNCHED(what) CU(cudaGetLastError())

#define TRY(expr)                                                                         \
    do {                                                                                  \
        cuzk_err r_ = (expr);                                                             \
        if (r_)                                                                           \
            return r_;                                                                    \
    } while (0)

/* Returns slot `slot` with at least `bytes` (grown with cudaMalloc when needed). */
cuzk_err cuzk__gpu_scratch(cuzk_gpu_ctx *ctx, int slot, size_t bytes, void **out,
                           cuzk_errbuf *eb);

#define SCRATCH(slot, bytes, ptr)                                                         \
    do {                                                                                  \
        void *p_;                                                                         \
        cuzk_err r_ = cuzk__gpu_scratch(ctx, (slot), (bytes), &p_, eb);                    \
        if (r_)                                                                           \
            return r_;                                                                    \
        ptr = (decltype(ptr))p_;                                                          \
    } while (0)

/* Per-curve entry points (gpu_<curve>_{g1,g2,fr}.cu). d_sc: n x 32-byte scalars on the
 * device; out: host, point_limbs words. The H step leaves h in d_a. */
#define CUZK__GPU_GROUP_DECL(c, g)                                                            \
    cuzk_err cuzk__gpu_##c##_##g##_msm(cuzk_gpu_ctx *ctx, const void *d_pts, size_t n,        \
                                       const void *d_sc, bool mont, const cuzk__gpu_tab *tab, \
                                       uint64_t *out, cuzk_errbuf *eb);                       \
    cuzk_err cuzk__gpu_##c##_##g##_tables(cuzk_gpu_ctx *ctx, void *d_pts, size_t n, int t,    \
                                          int s, cuzk_errbuf *eb);
#define CUZK__GPU_CURVE_DECL(c)                                                               \
    CUZK__GPU_GROUP_DECL(c, g1)                                                               \
    CUZK__GPU_GROUP_DECL(c, g2)                                                               \
    cuzk_err cuzk__gpu_##c##_fr_ntt(cuzk_gpu_ctx *ctx, void *d_v, int logn, int dir,         \
                                    const uint64_t *shift, cuzk_errbuf *eb);                 \
    cuzk_err cuzk__gpu_##c##_fr_h(cuzk_gpu_ctx *ctx, int logn, void *d_a, void *d_b,         \
                                  void *d_c, cuzk_errbuf *eb);                             \
    cuzk_err cuzk__gpu_##c##_fr_synth(cuzk_gpu_ctx *ctx, size_t n, const uint64_t *const rp[2], \
                                      const void *const rec[2], uint32_t stride,             \
                                      const void *d_w, void *d_a, void *d_b, void *d_c,      \
                                      cuzk_errbuf *eb);
CUZK__GPU_CURVE_DECL(bn254)
CUZK__GPU_CURVE_DECL(bls12_381)

/* Host-side Fr constants from src/ff (gpu_consts.c), 4 Montgomery limbs each. */
extern "C" {
int cuzk__gpu_fr_two_adicity(int curve);
void cuzk__gpu_fr_root(int curve, int logn, uint64_t out[4]);
void cuzk__gpu_fr_inv(int curve, const uint64_t a[4], uint64_t out[4]);
void cuzk__gpu_fr_from_u64(int curve, uint64_t v, uint64_t out[4]);
/* MSM finish: jac holds W (nb + 1) + 1 Jacobian points (device layout = src/ec's): per
 * window w the bit sums R_0 .. R_{nb-1} and the tri sum T, then the ones bucket; each window
 * sum is W_w = T + 2^logS sum_k 2^k R_k (msm_reduce.cuh) and out = sum_w 2^(c w) W_w + ones,
 * Jacobian. */
void cuzk__gpu_horner_bits(int curve, int g2, int W, int c, int nb, int logS, const void *jac,
                           uint64_t *out);
void cuzk__gpu_fp_inv(int curve, int fp2, uint64_t *x); /* in place, see gpu_consts.c */
void cuzk__gpu_jac_add(int curve, int g2, uint64_t *acc, const uint64_t *p); /* acc += p */
}

#endif
