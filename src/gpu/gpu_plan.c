/* The CUDA backend's memory plan, as the host needs it without a device: the MSM's window
 * width, slice length and batch-affine choice (gpu_impl.cuh's msm_run and accumulate use these
 * functions) and an upper estimate of the device scratch a context grows to (gpu.h,
 * cuzk_gpu_scratch_estimate). Plain C: built with or without CUDA,
 * so memory budgets are the same on every build. Keep in step with the SCRATCH calls of
 * gpu_impl.cuh and gpu_core.cu (gpu_test checks the estimate against a context's real
 * scratch on the device). */
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"

int cuzk__gpu_choose_c(size_t n, int nbits);
uint32_t cuzk__gpu_slice_len(size_t M);
int cuzk__gpu_ba_on(int mode, int g2, size_t M);

/* Window width for n points with nbits-bit scalars: minimise (additions into buckets) +
 * (bucket-reduction additions, about 2 per bucket at ~1.4x the cost of a mixed addition). */
int cuzk__gpu_choose_c(size_t n, int nbits)
{
    int best = 4;
    double bestc = 1e300;
    for (int c = 4; c <= 20; c++) {
        int W = nbits / c + 1;
        double cost = (double)W * ((double)n + 2.8 * (double)(1u << (c - 1)));
        if (cost < bestc) {
            bestc = cost;
            best = c;
        }
    }
    return best;
}

/* Entries per level-1 accumulation thread for M sorted entries: longer slices mean fewer
 * carries for the later levels (each slice leaves at most one), as long as the slices still
 * fill the device. */
uint32_t cuzk__gpu_slice_len(size_t M)
{
    return M >= ((size_t)1 << 26)   ? 64
           : M >= ((size_t)1 << 22) ? 32
           : M >= ((size_t)1 << 16) ? 16
                                    : 4;
}

/* Whether an MSM of M sorted entries sums its buckets by batch-affine pairs: by default for G2
 * from CUZK_GPU_BA_MIN entries, where it measured faster (src/gpu/PERF-NOTES.md, third pass);
 * mode (CUZK_GPU_BATCH_AFFINE) 0 off, 1 for both groups from that size, 2 for every MSM of
 * every size (tests); -1 the default. */
int cuzk__gpu_ba_on(int mode, int g2, size_t M)
{
    return mode == 2 || (M >= CUZK_GPU_BA_MIN && (mode == 1 || (mode < 0 && g2)));
}

/* One slot per SCRATCH slot that grows with the problem (gpu_internal.cuh's SCR_*). */
enum { P_SC_IN, P_SC, P_FLAGS, P_IDX, P_KEYVAL, P_CUB, P_BUCKETS, P_CARRY0, P_CARRY1,
       P_CHUNK, P_BA_PRE, P_BA_TREE, P_H, P_NTT, P_COUNT };

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The scratch of one MSM of n points whose scalars are all outside {0, 1} (the largest case:
 * the sort and bucket arrays grow with the count of such scalars). */
static void msm_plan(uint64_t slot[P_COUNT], int bls, int g2, uint64_t n)
{
    const uint64_t fp = bls ? 48 : 32, f = g2 ? 2 * fp : fp, x = 4 * f; /* xyzz<F> */
    const int nbits = bls ? 255 : 254;
    const int c = cuzk__gpu_choose_c(n ? n : 1, nbits), W = nbits / c + 1;
    const uint64_t M = n * (uint64_t)W, B = (uint64_t)1 << (c - 1);
    const uint64_t L1 = cuzk__gpu_slice_len(M);
    const uint64_t T = (M + L1 - 1) / L1, T2 = (T + 7) / 8;
    slot[P_SC_IN] = max64(slot[P_SC_IN], 32 * n);
    slot[P_SC] = max64(slot[P_SC], 32 * n);
    slot[P_FLAGS] = max64(slot[P_FLAGS], 2 * n + 16);
    slot[P_IDX] = max64(slot[P_IDX], 8 * n);
    slot[P_KEYVAL] = max64(slot[P_KEYVAL], 16 * M);
    /* CUB's select and radix-sort temporaries: bounded generously (a few per cent of M's
     * bytes in practice). */
    slot[P_CUB] = max64(slot[P_CUB], M / 2 + ((uint64_t)16 << 20));
    slot[P_BUCKETS] = max64(slot[P_BUCKETS], W * B * x + x);
    slot[P_CARRY0] = max64(slot[P_CARRY0], T * (4 + x));
    slot[P_CARRY1] = max64(slot[P_CARRY1], (T2 + 1) * (4 + x));
    slot[P_CHUNK] = max64(slot[P_CHUNK], W * (B >= 4 ? B / 4 : 1) * x + (W + 1) * 3 * f);
    if (cuzk__gpu_ba_on(-1, g2, M)) {
        const uint64_t per = L1 / 2 * f;
        uint64_t tc = CUZK_GPU_BA_PRE_BYTES / per;
        if (tc > T)
            tc = T;
        slot[P_BA_PRE] = max64(slot[P_BA_PRE], tc * per);
        slot[P_BA_TREE] = max64(slot[P_BA_TREE], (tc + tc / 64 + 64) * f + tc);
    }
}

uint64_t cuzk_gpu_scratch_estimate(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain)
{
    uint64_t slot[P_COUNT] = {0};
    const int bls = curve == CUZK_GPU_BLS12_381;
    /* The slots are shared by every MSM of the context: the witness MSMs (A, B1, C in G1, B2
     * in G2 over n_points) and the H MSM (G1 over the domain). */
    msm_plan(slot, bls, 1, n_points);
    msm_plan(slot, bls, 0, n_points);
    msm_plan(slot, bls, 0, domain);
    /* The H step: a, b, c and the NTT's other buffer; the witness upload of synthesis. */
    slot[P_H] = 3 * 32 * domain;
    slot[P_NTT] = 32 * domain;
    slot[P_SC_IN] = max64(slot[P_SC_IN], 32 * n_points);
    uint64_t sum = 0;
    for (int i = 0; i < P_COUNT; i++)
        sum += slot[i] + slot[i] / 8; /* cuzk__gpu_scratch allocates 1/8 of headroom */
    /* Twiddles (cudaMalloc'd per context and curve): 2^(L-1) of 32 bytes, L = log2(domain)+1,
     * at least 2^11. */
    uint64_t tw = (uint64_t)1 << 11;
    while (tw < domain)
        tw <<= 1;
    return sum + 32 * tw;
}
