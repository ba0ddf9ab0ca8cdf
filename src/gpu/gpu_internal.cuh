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
#include "gpu/gpu_testing.h"

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
    SCR_IDX1K,    /* the ones' indices whose points are not at infinity */
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
 * elements per block in shared memory, after the first pass tiles chosen by size
 * (cuzk__gpu_ntt_auto_lob), stages spread evenly over the fewest passes, two stages per trip
 * with each pass's twiddles staged in shared memory. */
#define CUZK_GPU_NTT_LOG_SH 10
/* The bucket reduction's largest chunk of buckets per thread (msm_finish) and the carries per
 * thread at the accumulation's levels >= 2 (more levels, each lighter). */
#define CUZK_GPU_REDUCE_CHUNK 32
#define CUZK_GPU_CARRY_SLICE 4

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
    /* A second stream for the upload of a split MSM's later parts (CUZK_GPU_SCALARS_ONCE), the
     * events that order each part after its upload, and the smallest count split, in every
     * group (split_all, tests) or not BLS12-381 G2 below CUZK_GPU_MSM_SPLIT_MIN_BLS_G2. */
    cudaStream_t up_stream;
    cudaEvent_t up_ev[CUZK_GPU_SPLIT_MAXP];
    size_t split_min;
    bool split_all;
    size_t part_max; /* CUZK_GPU_MSM_PART_MAX, or a test's (cuzk__gpu_test_set) */
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
    bool ba_every;    /* batch-affine for every MSM of every size (cuzk__gpu_test_set) */
    size_t ba_chunk;  /* batch-affine bytes per chunk (CUZK_GPU_BA_PRE_BYTES, cuzk_gpu_ba_set) */
    int ba_quads;     /* pairs of pair sums in affine too: 1 G1, 2 G2 too, 3 large MSMs */
    uint32_t slice_min; /* a floor on the level-1 slice length (0: none; cuzk__gpu_test_set) */
    bool ntt_tws_attr[2]; /* per curve: the NTT pass kernels' shared-memory limits set */
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
    /* MSMs over streamed sets: two device chunk buffers, a copy stream and their events
     * (stream.cuh; NULL until the first such MSM). */
    struct cuzk__gpu_stream_bufs *strm;
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
    /* A streamed set (cuzk_gpu_points_host, stream.cuh): d is NULL, points lead .. n - 1 are
     * the caller's host memory at host, copied to the device chunk points at a time. */
    const uint8_t *host;
    size_t lead, chunk;
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
