/*
 * MSM and NTT for one curve, written once as templates; gpu_bn254.cu and gpu_bls12_381.cu
 * instantiate them (one translation unit per curve).
 *
 * MSM (Pippenger, signed digits):
 *   1. prep: scalars to canonical integers; classify 0 / 1 / other; compact the indices of the
 *      ones and of the others (CUB select). Zeros cost nothing, ones are summed as one bucket
 *      (a plain batch addition), only the others go through the windows below.
 *   2. digits: window width c chosen by the count; digit d in [-2^(c-1), 2^(c-1)], carried to
 *      the next window; each nonzero digit becomes key = window << (c-1) | (|d| - 1) and value
 *      = point index | sign << 31. Zero digits get the key 0xffffffff (sorted last, skipped).
 *   3. sort (CUB radix sort on the used key bits), so each bucket is one run.
 *   4. accumulate: every thread takes L consecutive sorted entries (the same amount of work
 *      whatever the distribution, so skewed scalars cannot pile up on one thread). A run that
 *      starts in a thread's slice is owned by it: its sum (over the slice) goes to the bucket.
 *      A slice's first run continuing one from the previous slice becomes a carry (key, sum).
 *      Carries form a shorter sorted sequence; the same pass runs over it (adding to the
 *      bucket) until one thread is left. Sum is XYZZ += affine (madd) for the points, or
 *      (k_ba_pass_a / k_ba_pass_b) pairs of points first added in affine coordinates with
 *      one shared inversion, then madd.
 *   5. bucket reduction (msm_reduce.cuh): chunks of S buckets per thread: running sums give
 *      tri = sum (b-lo+1) B_b and run = sum B_b; the chunk offsets lo * run are not
 *      multiplied out but summed by bit (R_k: the runs of the chunks with bit k set) in trees
 *      of pair sums, with the tri sums.
 *   6. final: those sums and the ones bucket to Jacobian on the device, then on the host each
 *      window as tri + S sum_k 2^k R_k and Horner over windows (c doublings each) plus the
 *      ones (cuzk__gpu_horner_bits).
 *
 * NTT (radix-2 Cooley-Tukey, decimation in time; kernels in ntt_kernels.cuh): the first pass
 * gathers in bit-reversed order and runs up to 10 stages in shared memory; later passes run
 * their stages on tiles of 2, 4 or 8 consecutive columns (coalesced 64- to 256-byte reads),
 * the tile chosen for later blocks of about 2^9 elements, the stages spread evenly over the
 * passes: 2^24 is 10 + 7 + 7 stages, 2^26 10 + 8 + 8, 2^27 9 + 6 + 6 + 6;
 * each thread takes two stages per trip through shared memory (k_ntt_pass; cuzk__gpu_ntt_plan,
 * cuzk__gpu_ntt_auto_lob). Twiddles w_{2^L}^i (i < 2^(L-1)) are computed once per curve and
 * reused for every size up to 2^(L-1) (2^L for the coset step); inverse twiddles are
 * -w^(2^(L-1) - i).
 */
#ifndef CUZK_GPU_IMPL_CUH
#define CUZK_GPU_IMPL_CUH

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>

#include <limits.h>
#include <string.h>

#include "gpu/ec/curve.cuh"
#include "gpu/gpu_internal.cuh"
#include "gpu/msm/ba_halves.cuh"
#include "gpu/msm/msm_kernels.cuh"
#include "gpu/msm/msm_reduce.cuh"
#include "gpu/ntt/ntt_kernels.cuh"

namespace cuzk_gpu {

/* ------------------------------------------------------------------------------- MSM */

/* The inverse of the tree's root, on the host (src/ff, cuzk__gpu_fp_inv): a Fermat inversion
 * on one device thread is a long serial chain, once per chunk with the device idle meanwhile;
 * the round trip and the host's inversion take a fraction of that.
 * The device's Montgomery form is the host's; a lazy field's value may be up to 2p - 1. */
template <class C> static void host_inv(fe<C> *x)
{
    cuzk__gpu_fp_inv(C::N == 8 ? 0 : 1, 0, (uint64_t *)x->v);
}
template <class C> static void host_inv(fe2<C> *x)
{
    static_assert(sizeof *x == 2 * sizeof x->c0, "fe2 layout: c0 then c1");
    cuzk__gpu_fp_inv(C::N == 8 ? 0 : 1, 1, (uint64_t *)x->c0.v);
}
template <class F> static cuzk_err root_inv(cuzk_gpu_ctx *ctx, F *d, cuzk_errbuf *eb)
{
    static_assert(sizeof(F) <= CUZK_GPU_HOST_RES_BYTES, "root_inv: host_res too small");
    F *h = (F *)ctx->host_res;
    CU(cudaMemcpyAsync(h, d, sizeof(F), cudaMemcpyDeviceToHost, ctx->stream));
    CU(cudaStreamSynchronize(ctx->stream));
    host_inv(h);
    /* host_res is next written after a later synchronisation on this stream: the copy out of
     * it is done by then. */
    CU(cudaMemcpyAsync(d, h, sizeof(F), cudaMemcpyHostToDevice, ctx->stream));
    return CUZK_OK;
}

static inline unsigned nblk(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* The product tree's blocks the device runs at once (msm_reduce.cuh's tree_k sizes the chains
 * so that a large level's blocks fit one wave), at least 64 (a hint only: the tree's space,
 * cuzk__gpu_tree_space, holds for every cap). */
template <class F>
static cuzk_err tree_cap(const cuzk_gpu_ctx *ctx, unsigned *cap, cuzk_errbuf *eb)
{
    int up = 0, down = 0;
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&up, k_tree_up<F>, BA_TREE, 0));
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&down, k_tree_down<F>, BA_TREE, 0));
    const long c = (long)(up < down ? up : down) * ctx->sm_count;
    *cap = c < 64 ? 64u : c > (1l << 20) ? (1u << 20) : (unsigned)c;
    return CUZK_OK;
}

/* The batch-affine product tree over tr[0 .. tc) (tr: cuzk__gpu_tree_space(tc) elements or
 * more; the levels, then the kept nodes): up, the root inverted on the host, down; tr[i] is
 * then the inverse of what it held. */
template <class F>
static cuzk_err tree_inverse(cuzk_gpu_ctx *ctx, F *tr, size_t tc, unsigned cap, cuzk_errbuf *eb)
{
    cudaStream_t st = ctx->stream;
    /* Level l of the tree starts at lv[l], lk[l] elements a thread; the last level is one
     * element. */
    F *lv[16];
    size_t ln[16];
    unsigned lk[16];
    const int nl = tree_levels(tr, tc, cap, lv, ln, lk);
    if (nl < 0)
        return cuzk_errf(eb, CUZK_INTERNAL, "GPU MSM: product tree too deep");
    F *nd[16];
    tree_node_levels(tr + tree_elems(tc, cap), ln, lk, nl, nd);
    for (int l = 0; l < nl; l++) {
        k_tree_up<F><<<(unsigned)ln[l + 1], BA_TREE, 0, st>>>(lv[l], ln[l], lk[l], lv[l + 1],
                                                               nd[l]);
        LAUNCHED("k_tree_up");
    }
    TRY(root_inv(ctx, lv[nl], eb));
    for (int l = nl - 1; l >= 0; l--) {
        k_tree_down<F><<<(unsigned)ln[l + 1], BA_TREE, 0, st>>>(lv[l], ln[l], lk[l], lv[l + 1],
                                                                 nd[l]);
        LAUNCHED("k_tree_down");
    }
    return CUZK_OK;
}

/* Sums sorted runs into buckets (level 1 then carry levels until none remain); into: added to
 * what the buckets hold (a split MSM's later part: each run owned at level 1 starts at its
 * bucket's value, acc_open in msm_kernels.cuh), else stored over it. */
template <class F, bool ALL_ZERO>
static cuzk_err accumulate(cuzk_gpu_ctx *ctx, const uint32_t *keys, const uint32_t *vals,
                           size_t M, const affine<F> *pts, xyzz<F> *buckets, int ba_g1,
                           bool into, cuzk_errbuf *eb)
{
    cudaStream_t st = ctx->stream;
    /* G2 is the group of 64- and 96-byte coordinates. */
    const bool ba = cuzk__gpu_ba_on(ctx->ba_every, sizeof(F) >= 64, ba_g1, M);
    /* Batch-affine slices as long as the device's SMs allow (G2's kernels two lanes a slice),
     * for G1 only where quads come with them; tests may raise the floor (slice_min). */
    typedef typename fe2_base<F>::type C2; /* G2's Fp (void for G1) */
    /* G2's kernels run two lanes a slice or a carry slice (ba_halves.cuh), G1's one. */
    constexpr bool halves = !std::is_void<C2>::value;
    const int lanes = halves ? 2 : 1;
    const uint32_t L0 = ba ? cuzk__gpu_ba_len(M, ctx->sm_count, sizeof(F) >= 64, lanes,
                                              ctx->ba_quads)
                           : cuzk__gpu_slice_len(M);
    const uint32_t L1 = L0 < ctx->slice_min ? ctx->slice_min : L0;
    const uint32_t LK = CUZK_GPU_CARRY_SLICE;
    size_t T = (M + L1 - 1) / L1;
    uint32_t *ck0, *ck1;
    xyzz<F> *cp0, *cp1;
    SCRATCH(SCR_CKEY0, T * 4, ck0);
    SCRATCH(SCR_CPT0, T * sizeof(xyzz<F>), cp0);
    size_t T2 = (T + LK - 1) / LK;
    SCRATCH(SCR_CKEY1, T2 * 4 + 4, ck1);
    SCRATCH(SCR_CPT1, T2 * sizeof(xyzz<F>) + sizeof(xyzz<F>), cp1);
    if (ba) {
        /* Batch-affine pairs (k_ba_pass_a), in chunks of slices whose prefix products (and
         * with quads the pair sums and the slices' masks) fit ctx->ba_chunk bytes, each chunk
         * with one inversion (two with quads). */
        static_assert(sizeof(affine<F>) == 2 * sizeof(F), "cuzk__gpu_ba_slices' pair sums");
        const bool quads = cuzk__gpu_ba_quads_on(ctx->ba_quads, sizeof(F) >= 64, M, L1);
        /* BLS12-381's G2 sums octs with its quads (k_ba_quads_oh, k_ba_octs_h), where they
         * pay (ba_halves.cuh). */
        constexpr bool octs = halves && sizeof(F) >= 96;
        const size_t pre_per = (size_t)(L1 / 2) * sizeof(F),
                     sums_per = (size_t)(L1 / 2) * sizeof(affine<F>);
        size_t Tc = cuzk__gpu_ba_slices(ctx->ba_chunk, L1, sizeof(F), quads, T);
        if (Tc < T) {
            /* Chunks in whole waves of pass B (U slices: its resident blocks of every SM),
             * split as evenly as that allows: a chunk's last wave, partly filled, leaves SMs
             * idle until it ends (chunks of 20.7, 20.7 and 5.2 waves run as 21 + 21 + 6 waves;
             * 16 + 16 + 15 do the same work). */
            int nbk = 0;
            if constexpr (halves) {
                if (quads && octs)
                    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &nbk, k_ba_octs_h<C2, ALL_ZERO>, ACC_THREADS, 0));
                else if (quads)
                    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &nbk, k_ba_quads_h<C2, ALL_ZERO>, ACC_THREADS, 0));
                else
                    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &nbk, k_ba_pass_b_h<C2, ALL_ZERO>, ACC_THREADS, 0));
            } else if (quads) {
                CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &nbk, k_ba_quads<F, ALL_ZERO>, ACC_THREADS, 0));
            } else {
                CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &nbk, k_ba_pass_b<F, ALL_ZERO>, ACC_THREADS, 0));
            }
            const size_t U = (size_t)(nbk > 0 ? nbk : 1) * ctx->sm_count * ACC_THREADS / lanes;
            if (Tc >= U) {
                /* The fewest chunks whose even share, rounded up to whole waves, fits: rounding
                 * the share down to Tc instead leaves a last chunk of a part-filled wave
                 * (20 + 20 + 1 waves instead of 14 + 14 + 13). */
                for (size_t nch = (T + Tc - 1) / Tc;; nch++) {
                    const size_t even = (T + nch - 1) / nch, want = (even + U - 1) / U * U;
                    if (want <= Tc) {
                        Tc = want;
                        break;
                    }
                }
            }
        }
        unsigned tcap;
        TRY(tree_cap<F>(ctx, &tcap, eb));
        F *pre, *tr;
        uint8_t *npre;
        affine<F> *psum = NULL;
        uint64_t *masks = NULL;
        SCRATCH(SCR_BA_PRE, Tc * (pre_per + (quads ? sums_per : 0)), pre);
        /* every chunk's tree fits (tc <= Tc) */
        SCRATCH(SCR_BA_TREE, cuzk__gpu_tree_space(Tc) * sizeof(F), tr);
        SCRATCH(SCR_BA_NPRE, Tc, npre);
        if (quads) {
            psum = (affine<F> *)(pre + Tc * (L1 / 2)); /* 16-byte aligned: sizeof(F) is */
            SCRATCH(SCR_BA_MASK, Tc * 2 * sizeof(uint64_t), masks);
        }
        for (size_t t0 = 0; t0 < T; t0 += Tc) {
            const size_t tc = T - t0 < Tc ? T - t0 : Tc;
            k_ba_pass_a<F, ALL_ZERO><<<nblk(tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                keys, vals, M, L1, t0, tc, pts, pre, tr, npre);
            LAUNCHED("k_ba_pass_a");
            TRY(tree_inverse(ctx, tr, tc, tcap, eb));
            if (quads) {
                if constexpr (halves) {
                    k_ba_pairs_h<C2, ALL_ZERO><<<nblk(2 * tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                        keys, vals, M, L1, t0, tc, pts, pre, tr, npre, psum, masks);
                    LAUNCHED("k_ba_pairs_h");
                } else {
                    k_ba_pairs<F, ALL_ZERO><<<nblk(tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                        keys, vals, M, L1, t0, tc, pts, pre, tr, npre, psum, masks);
                    LAUNCHED("k_ba_pairs");
                }
                TRY(tree_inverse(ctx, tr, tc, tcap, eb));
                if constexpr (octs) { /* octs come with quads */
                    k_ba_quads_oh<C2, ALL_ZERO><<<nblk(2 * tc, ACC_THREADS), ACC_THREADS, 0,
                                                  st>>>(keys, M, L1, t0, tc, pre, tr, npre, psum,
                                                        masks);
                    LAUNCHED("k_ba_quads_oh");
                    TRY(tree_inverse(ctx, tr, tc, tcap, eb));
                    k_ba_octs_h<C2, ALL_ZERO><<<nblk(2 * tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                        keys, vals, M, L1, t0, tc, pts, pre, tr, npre, psum, masks, buckets, ck0,
                        cp0, into);
                    LAUNCHED("k_ba_octs_h");
                } else if constexpr (halves) {
                    k_ba_quads_h<C2, ALL_ZERO><<<nblk(2 * tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                        keys, vals, M, L1, t0, tc, pts, pre, tr, npre, psum, masks, buckets, ck0,
                        cp0, into);
                    LAUNCHED("k_ba_quads_h");
                } else {
                    k_ba_quads<F, ALL_ZERO><<<nblk(tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                        keys, vals, M, L1, t0, tc, pts, pre, tr, npre, psum, masks, buckets,
                        ck0, cp0, into);
                    LAUNCHED("k_ba_quads");
                }
            } else if constexpr (halves) {
                k_ba_pass_b_h<C2, ALL_ZERO><<<nblk(2 * tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                    keys, vals, M, L1, t0, tc, pts, pre, tr, npre, buckets, ck0, cp0, into);
                LAUNCHED("k_ba_pass_b_h");
            } else {
                k_ba_pass_b<F, ALL_ZERO><<<nblk(tc, ACC_THREADS), ACC_THREADS, 0, st>>>(
                    keys, vals, M, L1, t0, tc, pts, pre, tr, npre, buckets, ck0, cp0, into);
                LAUNCHED("k_ba_pass_b");
            }
        }
    } else {
        k_accum1<F, ALL_ZERO><<<nblk(T, ACC_THREADS), ACC_THREADS, 0, st>>>(
            keys, vals, M, L1, pts, buckets, ck0, cp0, into);
        LAUNCHED("k_accum1");
    }
    while (T > 1) {
        size_t Tn = (T + LK - 1) / LK;
        if constexpr (halves) {
            k_accumk_h<C2><<<nblk(2 * Tn, ACC_THREADS), ACC_THREADS, 0, st>>>(ck0, cp0, T, LK,
                                                                              buckets, ck1, cp1);
            LAUNCHED("k_accumk_h");
        } else {
            k_accumk<F><<<nblk(Tn, ACC_THREADS), ACC_THREADS, 0, st>>>(ck0, cp0, T, LK, buckets,
                                                                         ck1, cp1);
            LAUNCHED("k_accumk");
        }
        uint32_t *tk = ck0;
        ck0 = ck1;
        ck1 = tk;
        xyzz<F> *tp = cp0;
        cp0 = cp1;
        cp1 = tp;
        T = Tn;
    }
    return CUZK_OK;
}

/* Whether F is the field of G2's coordinates (Fp2) for curve CURVE (the host's finish). */
template <class F, int CURVE> constexpr int g2_of() { return sizeof(F) == (CURVE == 0 ? 64 : 96); }

/* The bucket reduction and the result: the buckets (g sets of 2^(c - 1); NULL: no scalar
 * outside {0, 1}) and the ones bucket (NULL: no ones) to out (Jacobian, host). */
template <class F, int CURVE>
static cuzk_err msm_finish(cuzk_gpu_ctx *ctx, int c, int g, xyzz<F> *buckets,
                           const xyzz<F> *ones, uint64_t *out, cuzk_errbuf *eb)
{
    typedef xyzz<F> X;
    cudaStream_t st = ctx->stream;
    X *win = NULL;
    int nwin = 0, red_nb = 0, red_logS = 0; /* the reduction's sums (below) */
    if (buckets) {
        /* Bucket reduction (msm_reduce.cuh): chunks of S buckets per thread, S (a power of
         * two) small enough that the g * B / S threads fill the device (the chunk's serial
         * chain is 2S additions), at most CUZK_GPU_REDUCE_CHUNK, at least 8 (the trees' space
         * below), then trees of pair sums with one addition per level. */
        const uint32_t B = 1u << (c - 1);
        uint32_t S = CUZK_GPU_REDUCE_CHUNK;
        while (S > 8 && (size_t)g * B / S < (size_t)256 * ctx->sm_count)
            S >>= 1;
        if (S > B)
            S = B;
        const uint32_t cnt = B / S, len0 = cnt >= 4 ? cnt / 4 : 1;
        int nb = 0, logS = 0;
        while ((1u << nb) < cnt)
            nb++;
        while ((1u << logS) < S)
            logS++;
        X *run, *tri;
        SCRATCH(SCR_CHUNK0, (size_t)2 * g * cnt * sizeof(X), run);
        tri = run + (size_t)g * cnt;
        /* G2's two lanes a chunk, a bit sum, a pair sum (ba_halves.cuh) */
        typedef typename fe2_base<F>::type C2; /* G2's Fp (void for G1) */
        constexpr bool sums_h = !std::is_void<C2>::value;
        if constexpr (sums_h) {
            k_bucket_sums_h<C2><<<nblk(2 * (size_t)g * cnt, ACC_THREADS), ACC_THREADS, 0, st>>>(
                buckets, g, B, S, run, tri);
            LAUNCHED("k_bucket_sums_h");
        } else {
            k_bucket_sums<F><<<nblk((size_t)g * cnt, 64), 64, 0, st>>>(buckets, g, B, S, run,
                                                                         tri);
            LAUNCHED("k_bucket_sums");
        }
        /* The trees in the buckets' space (dead now): level 1 at its start, then every level
         * alternately after it and at its start (1.5 times level 1's (nb + 1) cnt / 4 points
         * per window, within B: nb + 1 <= c - 3 with S >= 8). */
        const size_t l1 = (size_t)g * (nb + 1) * len0;
        if constexpr (sums_h) {
            k_bit_sums_h<C2><<<nblk(2 * l1, ACC_THREADS), ACC_THREADS, 0, st>>>(
                run, tri, g, cnt, nb, len0, buckets);
            LAUNCHED("k_bit_sums_h");
        } else {
            k_bit_sums<F><<<nblk(l1, 64), 64, 0, st>>>(run, tri, g, cnt, nb, len0, buckets);
            LAUNCHED("k_bit_sums");
        }
        X *src = buckets;
        for (size_t n = l1, len = len0; len > 1; n /= 2, len /= 2) {
            X *dst = src == buckets ? buckets + l1 : buckets;
            if constexpr (sums_h) {
                k_pair_sum_h<C2><<<nblk(n, ACC_THREADS), ACC_THREADS, 0, st>>>(src, n / 2, dst);
                LAUNCHED("k_pair_sum_h");
            } else {
                k_pair_sum<F><<<nblk(n / 2, 64), 64, 0, st>>>(src, n / 2, dst);
                LAUNCHED("k_pair_sum");
            }
            src = dst;
        }
        win = src; /* per window: R_0 .. R_nb-1, the tri sum */
        nwin = g * (nb + 1);
        red_nb = nb;
        red_logS = logS;
    } else {
        c = 1;
        g = 0;
    }
    /* Each window finishes as its tri sum + 2^logS sum_b 2^b R_b, the g window sums S_r
     * (r < g) as sum_r 2^(r c) S_r plus the ones (cuzk__gpu_horner_bits). */
    F *res;
    const size_t rbytes = (size_t)(nwin + 1) * 3 * sizeof(F);
    SCRATCH(SCR_RES, rbytes, res);
    if (rbytes > CUZK_GPU_HOST_RES_BYTES)
        return cuzk_errf(eb, CUZK_INTERNAL, "GPU MSM: %d window sums exceed the result buffer",
                         nwin);
    k_to_jac<F><<<nblk((size_t)nwin + 1, 128), 128, 0, st>>>(win, nwin, ones, res);
    LAUNCHED("k_to_jac");
    CU(cudaMemcpyAsync(ctx->host_res, res, rbytes, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    cuzk__gpu_horner_bits(CURVE, g2_of<F, CURVE>(), g, c, red_nb, red_logS, ctx->host_res, out);
    return CUZK_OK;
}

/* One MSM, or one part of a split one (ctx->part, cuzk__gpu_part in gpu_internal.cuh): the
 * first part fills the buckets and returns, a middle part adds its own into them and returns,
 * the last adds its own and finishes (a part that runs alone finishes the parts before it,
 * starts the buckets afresh, and the last adds the finished sums on the host). */
template <class F, class FR, int NBITS, int CURVE>
static cuzk_err msm_run(cuzk_gpu_ctx *ctx, const void *d_pts, size_t n, const void *d_sc,
                        bool mont, const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)
{
    typedef xyzz<F> X;
    cudaStream_t st = ctx->stream;
    const affine<F> *pts = (const affine<F> *)d_pts;
    cuzk__gpu_part *pt = &ctx->part;
    const bool split = pt->on;
    if (n == 0 && !split) {
        memset(out, 0, 3 * sizeof(F));
        return CUZK_OK;
    }
    const bool reuse = ctx->prep_reuse && !split;
    ctx->prep_reuse = false;
    uint32_t *idx1, n1, n2;
    const uint32_t *keys = NULL, *vals = NULL;
    /* A split MSM's slots are sized for its larger part: none grows (and waits for the queued
     * work) between the parts. */
    const size_t ns = split && pt->nmax > n ? pt->nmax : n;
    if (reuse) {
        /* The same scalars as the last MSM: their classification is still in the scratch
         * slots (cuzk_gpu_msm checked that they belong to these scalars), and so are their
         * sorted digits if that MSM's windows are this one's (below). */
        n1 = ctx->prep.n1;
        n2 = ctx->prep.n2;
        idx1 = (uint32_t *)ctx->scr[SCR_IDX1];
    } else {
        ctx->prep.valid = 0; /* the slots are about to hold these scalars' preparation */
        uint32_t *sc, *idx2, *nsel;
        uint8_t *f1, *f2;
        SCRATCH(SCR_SC, ns * 32, sc);
        SCRATCH(SCR_FLAG1, ns, f1);
        SCRATCH(SCR_FLAG2, ns, f2);
        SCRATCH(SCR_IDX1, ns * 4, idx1);
        SCRATCH(SCR_IDX2, ns * 4, idx2);
        SCRATCH(SCR_NSEL, 32, nsel);
        /* nsel: the two selection counts, then (checked scalars) the lowest bad index, then
         * the digits and ones kept by the drop of points at infinity (below). */
        const bool check = ctx->prep_check && !mont;
        if (!split || pt->last)
            ctx->prep_check = false;
        unsigned long long *bad = check ? (unsigned long long *)(nsel + 2) : NULL;
        if (check)
            CU(cudaMemsetAsync(bad, 0xff, 8, st));
        if (split && pt->ready)
            CU(cudaStreamWaitEvent(st, pt->ready, 0)); /* this part's upload */
        k_prep<FR><<<nblk(n, 256), 256, 0, st>>>((const uint32_t *)d_sc, sc, f1, f2, n, mont,
                                                  bad);
        LAUNCHED("k_prep");
        thrust::counting_iterator<uint32_t> it(0);
        size_t tb1 = 0, tb2 = 0;
        void *cubtmp;
        CU(cub::DeviceSelect::Flagged(NULL, tb1, it, f1, idx1, nsel, (int64_t)ns, st));
        SCRATCH(SCR_CUB, tb1 + 256, cubtmp);
        CU(cub::DeviceSelect::Flagged(cubtmp, tb1, it, f1, idx1, nsel, (int64_t)n, st));
        CU(cub::DeviceSelect::Flagged(NULL, tb2, it, f2, idx2, nsel + 1, (int64_t)ns, st));
        SCRATCH(SCR_CUB, tb2 + 256, cubtmp);
        CU(cub::DeviceSelect::Flagged(cubtmp, tb2, it, f2, idx2, nsel + 1, (int64_t)n, st));
        uint32_t hsel[4];
        CU(cudaMemcpyAsync(hsel, nsel, check ? 16 : 8, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        if (check) {
            uint64_t b = (uint64_t)hsel[2] | (uint64_t)hsel[3] << 32;
            if (b != UINT64_MAX && split)
                b += pt->base; /* the index within the whole MSM */
            ctx->bad_scalar = b;
            if (b != UINT64_MAX)
                return cuzk_errf(eb, CUZK_NON_CANONICAL, "GPU MSM: scalar %llu is not below r",
                                 (unsigned long long)b);
        }
        n1 = hsel[0];
        n2 = hsel[1];
        ctx->prep.n1 = n1;
        ctx->prep.n2 = n2;
        ctx->prep.c = 0; /* no digits sorted yet */
    }
    /* Windows: c bits, W of them, into g bucket sets (g < W: the set's tables). A split MSM's
     * plan is the first part's, for its count of others scaled to the whole MSM; a later part
     * runs alone when it holds more than twice the others that the parts before predict: their
     * sum is finished into pt->first_out and this part starts the buckets afresh under a plan
     * for its own count (scaled to the parts left, itself included). */
    int c, g;
    bool add = false, alone = false;
    if (!split) {
        cuzk__gpu_msm_plan(n2 ? n2 : 1, NBITS, tab->t, tab->s, &c, &g);
    } else {
        if (!pt->first) {
            const double pred =
                (double)pt->n2 * (double)n / (double)(pt->n_seen ? pt->n_seen : 1);
            alone = (double)n2 > 2 * pred + 65536;
        }
        if (pt->first || alone) {
            if (alone && (pt->n1 || pt->n2)) {
                /* The parts before: their buckets and ones are where they left them. */
                uint64_t sum[36];
                TRY((msm_finish<F, CURVE>(ctx, pt->c, pt->g,
                                          pt->n2 ? (X *)ctx->scr[SCR_BUCKETS] : NULL,
                                          pt->n1 ? (const X *)ctx->scr[SCR_CHUNK1] : NULL, sum,
                                          eb)));
                if (pt->has_out)
                    cuzk__gpu_jac_add(CURVE, g2_of<F, CURVE>(), pt->first_out, sum);
                else
                    memcpy(pt->first_out, sum, sizeof sum);
                pt->has_out = true;
            }
            pt->alone += alone;
            const double est = (double)n2 * (double)(pt->total - pt->base) / (double)n;
            cuzk__gpu_msm_plan(est >= 1 ? (size_t)est : 1, NBITS, tab->t, tab->s, &c, &g);
            pt->c = c;
            pt->g = g;
            pt->n1 = 0; /* counted below, with this part's */
            pt->n2 = 0;
            pt->n_seen = 0;
        } else {
            c = pt->c;
            g = pt->g;
            add = true;
        }
    }
    /* A split MSM's part that starts the buckets (and the ones bucket) afresh. */
    const bool fresh = split && (pt->first || alone);
    int W = NBITS / c + 1;
    const uint32_t stride = g < W ? (uint32_t)tab->stride : 0;
    if (n2 && reuse && ctx->prep.c == c && ctx->prep.g == g && ctx->prep.stride == stride) {
        keys = (const uint32_t *)ctx->scr[ctx->prep.ksel ? SCR_KEY1 : SCR_KEY0];
        vals = (const uint32_t *)ctx->scr[ctx->prep.vsel ? SCR_VAL1 : SCR_VAL0];
    } else if (n2) {
        const uint32_t *sc = (const uint32_t *)ctx->scr[SCR_SC];
        const uint32_t *idx2 = (const uint32_t *)ctx->scr[SCR_IDX2];
        size_t M = (size_t)n2 * W;
        uint32_t *k0, *k1, *v0, *v1;
        void *cubtmp;
        SCRATCH(SCR_KEY0, M * 4, k0);
        SCRATCH(SCR_KEY1, M * 4, k1);
        SCRATCH(SCR_VAL0, M * 4, v0);
        SCRATCH(SCR_VAL1, M * 4, v1);
        k_digits<<<nblk(n2, 128), 128, 0, st>>>(sc, idx2, n2, c, W, g, stride, k0, v0);
        LAUNCHED("k_digits");
        int gbits = 0;
        while ((1 << gbits) <= g)
            gbits++;
        int endbit = gbits + c - 1;
        cub::DoubleBuffer<uint32_t> dk(k0, k1), dv(v0, v1);
        size_t tbs = 0;
        /* 32-bit offsets where the entries fit: CUB's onesweep then takes 23 pairs per thread
         * instead of 17 (fewer tiles, fewer look-backs). */
        if (M <= (size_t)INT_MAX) {
            CU(cub::DeviceRadixSort::SortPairs(NULL, tbs, dk, dv, (int)M, 0, endbit, st));
            SCRATCH(SCR_CUB, tbs + 256, cubtmp);
            CU(cub::DeviceRadixSort::SortPairs(cubtmp, tbs, dk, dv, (int)M, 0, endbit, st));
        } else {
            CU(cub::DeviceRadixSort::SortPairs(NULL, tbs, dk, dv, (int64_t)M, 0, endbit, st));
            SCRATCH(SCR_CUB, tbs + 256, cubtmp);
            CU(cub::DeviceRadixSort::SortPairs(cubtmp, tbs, dk, dv, (int64_t)M, 0, endbit, st));
        }
        keys = dk.Current();
        vals = dv.Current();
        ctx->prep.ksel = dk.selector;
        ctx->prep.vsel = dv.selector;
        ctx->prep.c = c;
        ctx->prep.g = g;
        ctx->prep.stride = stride;
    }

    /* The entries of the set's points at infinity out (the set's inf_bits): the digits'
     * into the sort pair's other buffers, the ones' indices into SCR_IDX1K, so the sorted
     * digits and the ones' list stay for the next MSM over these scalars; one host sync for
     * both counts. */
    size_t M = (size_t)n2 * W;
    if ((n2 || n1) && tab->inf) {
        const uint32_t off = (uint32_t)(tab->off + (split ? pt->base : 0));
        int64_t *d_kept = (int64_t *)((char *)ctx->scr[SCR_NSEL] + 16); /* digits, ones */
        uint32_t *ko = NULL, *vo = NULL, *k1 = NULL;
        if (n2) {
            ko = (uint32_t *)ctx->scr[ctx->prep.ksel ? SCR_KEY0 : SCR_KEY1];
            vo = (uint32_t *)ctx->scr[ctx->prep.vsel ? SCR_VAL0 : SCR_VAL1];
            const inf_keep keep = {tab->inf, stride, off};
            auto in = thrust::make_zip_iterator(keys, vals);
            auto out = thrust::make_zip_iterator(ko, vo);
            size_t tbs = 0;
            CU(cub::DeviceSelect::FlaggedIf(NULL, tbs, in, vals, out, d_kept, (int64_t)M, keep,
                                            st));
            void *tmp;
            SCRATCH(SCR_CUB, tbs + 256, tmp);
            CU(cub::DeviceSelect::FlaggedIf(tmp, tbs, in, vals, out, d_kept, (int64_t)M, keep,
                                            st));
        }
        if (n1) {
            /* The ones' values are plain indices of this MSM's (part's) points. */
            const inf_keep keep = {tab->inf, 0, off};
            SCRATCH(SCR_IDX1K, ns * 4, k1);
            size_t tbs = 0;
            CU(cub::DeviceSelect::FlaggedIf(NULL, tbs, idx1, idx1, k1, d_kept + 1, (int64_t)n1,
                                            keep, st));
            void *tmp;
            SCRATCH(SCR_CUB, tbs + 256, tmp);
            CU(cub::DeviceSelect::FlaggedIf(tmp, tbs, idx1, idx1, k1, d_kept + 1, (int64_t)n1,
                                            keep, st));
        }
        int64_t kept[2] = {0, 0};
        CU(cudaMemcpyAsync(kept, d_kept, 16, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        if (n2) {
            keys = ko;
            vals = vo;
            M = (size_t)kept[0];
        }
        if (n1) {
            idx1 = k1;
            n1 = (uint32_t)kept[1];
        }
    }

    /* The ones: a single bucket (a split MSM's parts each their own: the second part's at
     * ones + 1, added to the first's at the end). */
    X *ones = NULL;
    if (split) {
        SCRATCH(SCR_CHUNK1, 2 * sizeof(X), ones);
        if (fresh)
            CU(cudaMemsetAsync(ones, 0, 2 * sizeof(X), st));
    } else if (n1) {
        SCRATCH(SCR_CHUNK1, sizeof(X), ones);
        CU(cudaMemsetAsync(ones, 0, sizeof(X), st));
    }
    X *ones_here = split && !fresh ? ones + 1 : ones;
    if (n1)
        TRY((accumulate<F, true>(ctx, NULL, idx1, n1, pts, ones_here, tab->ba_g1, false, eb)));
    /* Everything else: Pippenger. */
    const uint32_t B = 1u << (c - 1);
    const size_t nbk = (size_t)g * B;
    X *buckets = NULL;
    if (n2 || fresh || (add && pt->n2)) {
        SCRATCH(SCR_BUCKETS, nbk * sizeof(X), buckets);
        if (!add)
            CU(cudaMemsetAsync(buckets, 0, nbk * sizeof(X), st));
    }
    if (n2 && M) {
        /* A later part of a split MSM adds its runs to the buckets the parts before it filled
         * (accumulate's into: each run owned at level 1 starts at its bucket's value; carries
         * are added at the carry levels as always): no buckets of its own to merge after (one
         * XYZZ addition per bucket, a second bucket array and its clearing). */
        TRY((accumulate<F, false>(ctx, keys, vals, M, pts, buckets, tab->ba_g1, add && pt->n2,
                                  eb)));
    }
    if (!split)
        return msm_finish<F, CURVE>(ctx, c, g, n2 ? buckets : NULL, n1 ? ones : NULL, out, eb);
    /* A part added into the buckets: its ones bucket into the first's. */
    if (!fresh && n1) {
        k_add_into<F><<<1, 1, 0, st>>>(ones, ones + 1, 1);
        LAUNCHED("k_add_into");
    }
    pt->n1 += n1;
    pt->n2 += n2;
    pt->n_seen += n;
    if (!pt->last)
        return CUZK_OK; /* the next part adds to these buckets (the last one finishes) */
    TRY((msm_finish<F, CURVE>(ctx, c, g, pt->n2 ? buckets : NULL, pt->n1 ? ones : NULL, out,
                              eb)));
    if (pt->has_out)
        cuzk__gpu_jac_add(CURVE, g2_of<F, CURVE>(), out, pt->first_out);
    return CUZK_OK;
}

/* Copies 1 .. t - 1 of the n points at d_pts (room for t n points; copy 0 in place). */
template <class F>
static cuzk_err tables_run(cuzk_gpu_ctx *ctx, void *d_pts, size_t n, int t, int s,
                           cuzk_errbuf *eb)
{
    if (t > CUZK_GPU_TAB_MAX_COPIES)
        return cuzk_errf(eb, CUZK_INTERNAL, "GPU tables: %d copies (at most %d)", t,
                         CUZK_GPU_TAB_MAX_COPIES);
    if (t < 2 || n == 0)
        return CUZK_OK;
    k_tables<F><<<nblk(n, 64), 64, 0, ctx->stream>>>((affine<F> *)d_pts, n, t, s);
    LAUNCHED("k_tables");
    CU(cudaStreamSynchronize(ctx->stream));
    return CUZK_OK;
}

/* ------------------------------------------------------------------------------- NTT */

static inline fr_const mkc(const uint64_t *l)
{
    fr_const c;
    memcpy(c.l, l, 32);
    return c;
}

/* Twiddle table with L >= need. */
template <class FR>
static cuzk_err ensure_tw(cuzk_gpu_ctx *ctx, int curve, int need, cuzk_errbuf *eb)
{
    if (ctx->tw[curve] && ctx->tw_log[curve] >= need)
        return CUZK_OK;
    int L = need < 12 ? 12 : need;
    if (L > cuzk__gpu_fr_two_adicity(curve))
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "NTT domain 2^%d exceeds the field's 2-adicity %d", L,
                         cuzk__gpu_fr_two_adicity(curve));
    if (ctx->tw[curve]) {
        CU(cudaStreamSynchronize(ctx->stream));
        CU(cudaFree(ctx->tw[curve]));
        ctx->tw[curve] = NULL;
    }
    size_t half = (size_t)1 << (L - 1);
    void *p;
    CU(cudaMalloc(&p, half * sizeof(fe<FR>)));
    ctx->tw[curve] = p;
    ctx->tw_log[curve] = L;
    uint64_t w[4], one[4];
    cuzk__gpu_fr_root(curve, L, w);
    cuzk__gpu_fr_from_u64(curve, 1, one);
    k_pow<FR, false><<<nblk(half / 64 + 1, 128), 128, 0, ctx->stream>>>((fe<FR> *)p, half,
                                                                        mkc(w), mkc(one));
    LAUNCHED("k_pow");
    return CUZK_OK;
}

/* In-place NTT on d_v (2^logn), optional post-scaling of the result (see k_ntt_pass). The
 * passes compute in ntt_rep_of<FR> (in [0, 2r), canonical after the last pass). */
template <class FR>
static cuzk_err ntt_core(cuzk_gpu_ctx *ctx, int curve, fe<FR> *v_, int logn, int inverse,
                         int post, const uint64_t *f, cuzk_errbuf *eb)
{
    typedef typename ntt_rep_of<FR>::type FN;
    fe<FN> *const v = (fe<FN> *)v_;
    cudaStream_t st = ctx->stream;
    size_t n = (size_t)1 << logn;
    cuzk_err r = ensure_tw<FR>(ctx, curve, logn + 1, eb);
    if (r)
        return r;
    const fe<FN> *tw = (const fe<FN> *)ctx->tw[curve];
    int L = ctx->tw_log[curve];
    fe<FN> *tmp;
    SCRATCH(SCR_NTT_TMP, n * sizeof(fe<FN>), tmp);
    fr_const fc;
    memset(&fc, 0, sizeof fc);
    if (f)
        fc = mkc(f);
    if (logn == 0) {
        if (post == 1 || post == 2) { /* f, or f w_2^0 = f; post 3's w_2^0 is 1 */
            uint64_t one[4];
            cuzk__gpu_fr_from_u64(curve, 1, one);
            k_pow<FR, true><<<1, 32, 0, st>>>(v_, 1, mkc(one), fc);
            LAUNCHED("k_pow");
        }
        return CUZK_OK;
    }
    /* The passes (ntt_passes, cuzk__gpu_ntt_plan): even, tiles by size, staged twiddles. */
    ntt_pass pl[32];
    const int P = ntt_passes(logn, CUZK_GPU_NTT_LOG_SH, 0, post, pl);
    for (int i = 0; i < P; i++) {
        const ntt_pass &q = pl[i];
        const fe<FN> *src = q.src_v ? v : tmp;
        fe<FN> *dst = q.dst_v ? v : tmp;
        /* Staged twiddles take as much shared memory again as the elements. */
        const size_t shb = (size_t)8 * sizeof(uint32_t) * q.sh * 2;
        if (!ctx->ntt_tws_attr[curve]) {
            /* Above the default 48 KiB (the 1024-element kernels' 64 KiB), and the largest
             * shared-memory carveout (six blocks of 32 KiB per SM for the 512-element ones).
             * Once. */
            const void *const ks[4] = {(const void *)k_ntt_pass<FN, true, 1024>,
                                       (const void *)k_ntt_pass<FN, false, 1024>,
                                       (const void *)k_ntt_pass<FN, true, 512>,
                                       (const void *)k_ntt_pass<FN, false, 512>};
            for (int k = 0; k < 4; k++) {
                if (k < 2) /* the 1024-element ones: 64 KiB */
                    CU(cudaFuncSetAttribute(ks[k], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            8 * 4 * 1024 * 2));
                CU(cudaFuncSetAttribute(ks[k], cudaFuncAttributePreferredSharedMemoryCarveout,
                                        (int)cudaSharedmemCarveoutMaxShared));
            }
            ctx->ntt_tws_attr[curve] = true;
        }
        /* One launch of the kernel the pass names (q.first picks the template's FIRST). */
#define NTT_LAUNCH(K, ...)                                                                   \
    do {                                                                                     \
        if (q.first)                                                                         \
            K<FN, true, __VA_ARGS__><<<(unsigned)q.blocks, q.threads, shb, st>>>(            \
                src, dst, logn, q.m0, q.s, q.lob, tw, L, inverse, q.post, fc);               \
        else                                                                                 \
            K<FN, false, __VA_ARGS__><<<(unsigned)q.blocks, q.threads, shb, st>>>(           \
                src, dst, logn, q.m0, q.s, q.lob, tw, L, inverse, q.post, fc);               \
    } while (0)
        if (q.sh == 512)
            NTT_LAUNCH(k_ntt_pass, 512);
        else
            NTT_LAUNCH(k_ntt_pass, 1024);
#undef NTT_LAUNCH
        LAUNCHED("k_ntt_pass");
        if (q.copy_back)
            CU(cudaMemcpyAsync(v, tmp, n * sizeof(fe<FN>), cudaMemcpyDeviceToDevice, st));
    }
    return CUZK_OK;
}

template <class FR>
static cuzk_err ntt_api(cuzk_gpu_ctx *ctx, int curve, void *d_v, int logn, int dir,
                        const uint64_t *shift, cuzk_errbuf *eb)
{
    fe<FR> *v = (fe<FR> *)d_v;
    size_t n = (size_t)1 << logn;
    cudaStream_t st = ctx->stream;
    uint64_t one[4];
    cuzk__gpu_fr_from_u64(curve, 1, one);
    if (dir == CUZK_GPU_NTT_FORWARD) {
        if (shift) {
            k_pow<FR, true><<<nblk(n / 64 + 1, 128), 128, 0, st>>>(v, n, mkc(shift),
                                                                   mkc(one));
            LAUNCHED("k_pow");
        }
        cuzk_err r = ntt_core<FR>(ctx, curve, v, logn, 0, 0, NULL, eb);
        if (r)
            return r;
    } else {
        uint64_t nn[4], ninv[4];
        cuzk__gpu_fr_from_u64(curve, n, nn);
        cuzk__gpu_fr_inv(curve, nn, ninv);
        cuzk_err r = ntt_core<FR>(ctx, curve, v, logn, 1, shift ? 0 : 1, ninv, eb);
        if (r)
            return r;
        if (shift) {
            uint64_t sinv[4];
            cuzk__gpu_fr_inv(curve, shift, sinv);
            k_pow<FR, true><<<nblk(n / 64 + 1, 128), 128, 0, st>>>(v, n, mkc(sinv), mkc(ninv));
            LAUNCHED("k_pow");
        }
    }
    CU(cudaStreamSynchronize(st));
    return CUZK_OK;
}

template <class FR>
static cuzk_err synth_api(cuzk_gpu_ctx *ctx, size_t n, const uint64_t *const rp[2],
                          const void *const rec[2], uint32_t stride, const void *d_w, void *d_a,
                          void *d_b, void *d_c, cuzk_errbuf *eb)
{
    k_synth<FR><<<nblk(n, 128), 128, 0, ctx->stream>>>(
        rp[0], (const uint8_t *)rec[0], rp[1], (const uint8_t *)rec[1], stride,
        (const uint32_t *)d_w, n, (fe<FR> *)d_a, (fe<FR> *)d_b, (fe<FR> *)d_c);
    LAUNCHED("k_synth");
    return CUZK_OK;
}

template <class FR>
static cuzk_err h_api(cuzk_gpu_ctx *ctx, int curve, int logn, void *d_a, void *d_b, void *d_c,
                      cuzk_errbuf *eb)
{
    size_t n = (size_t)1 << logn;
    uint64_t nn[4], f[3][4];
    cuzk__gpu_fr_from_u64(curve, n, nn);
    cuzk__gpu_fr_inv(curve, nn, f[1]);
    /* n^2 < 2^64: ntt_core refuses domains past 2^31 (ensure_tw) */
    cuzk__gpu_fr_from_u64(curve, (uint64_t)n * n, nn);
    cuzk__gpu_fr_inv(curve, nn, f[2]);
    void *bufs[3] = {d_a, d_b, d_c};
    for (int k = 0; k < 3; k++) { /* a, b, c with the factors of h_post / h_fexp */
        fe<FR> *v = (fe<FR> *)bufs[k];
        cuzk_err r = ntt_core<FR>(ctx, curve, v, logn, 1, h_post[k],
                                  h_fexp[k] ? f[h_fexp[k]] : NULL, eb);
        if (!r)
            r = ntt_core<FR>(ctx, curve, v, logn, 0, 0, NULL, eb);
        if (r)
            return r;
    }
    k_hmul<FR><<<nblk(n, 256), 256, 0, ctx->stream>>>((fe<FR> *)d_a, (const fe<FR> *)d_b,
                                                       (const fe<FR> *)d_c, n);
    LAUNCHED("k_hmul");
    return CUZK_OK;
}

} // namespace cuzk_gpu

/* Entry points of one translation unit: MSM for one group, or the Fr code. */
#define CUZK_GPU_MSM_TU(fn, F, FRC, NBITS)                                                   \
    cuzk_err fn##_msm(cuzk_gpu_ctx *ctx, const void *d_pts, size_t n, const void *d_sc,      \
                      bool mont, const cuzk__gpu_tab *tab, uint64_t *out, cuzk_errbuf *eb)   \
    {                                                                                        \
        return cuzk_gpu::msm_run<F, FRC, NBITS, CURVE_ID>(ctx, d_pts, n, d_sc, mont, tab, out, \
                                                          eb);                              \
    }                                                                                        \
    cuzk_err fn##_tables(cuzk_gpu_ctx *ctx, void *d_pts, size_t n, int t, int s,             \
                         cuzk_errbuf *eb)                                                    \
    {                                                                                        \
        return cuzk_gpu::tables_run<F>(ctx, d_pts, n, t, s, eb);                             \
    }

#define CUZK_GPU_FR_TU(prefix, curve_id, FRC)                                                \
    cuzk_err prefix##_ntt(cuzk_gpu_ctx *ctx, void *d_v, int logn, int dir,                   \
                          const uint64_t *shift, cuzk_errbuf *eb)                            \
    {                                                                                        \
        return cuzk_gpu::ntt_api<FRC>(ctx, curve_id, d_v, logn, dir, shift, eb);             \
    }                                                                                        \
    cuzk_err prefix##_h(cuzk_gpu_ctx *ctx, int logn, void *a, void *b, void *c,              \
                        cuzk_errbuf *eb)                                                     \
    {                                                                                        \
        return cuzk_gpu::h_api<FRC>(ctx, curve_id, logn, a, b, c, eb);                       \
    }                                                                                        \
    cuzk_err prefix##_synth(cuzk_gpu_ctx *ctx, size_t n, const uint64_t *const rp[2],        \
                            const void *const rec[2], uint32_t stride, const void *d_w,      \
                            void *d_a, void *d_b, void *d_c, cuzk_errbuf *eb)                \
    {                                                                                        \
        return cuzk_gpu::synth_api<FRC>(ctx, n, rp, rec, stride, d_w, d_a, d_b, d_c, eb);    \
    }

#endif
