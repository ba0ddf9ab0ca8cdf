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
#include "gpu/gpu_plan.h"

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

/* Bucket additions of an MSM of n scalars in W windows of c bits summed into g bucket sets
 * (g = W without tables): one madd per entry, ~2.8 per bucket for the reduction. */
static double msm_cost(size_t n, int W, int c, int g)
{
    return (double)W * (double)n + 2.8 * (double)g * (double)(1u << (c - 1));
}

/* A plan with tables is taken only when its bucket additions are below this share of the
 * plan without: the model's large savings (dense scalars) hold on the device, its small ones
 * (sparse scalars, mostly 0 and 1, over wide windows) turn into losses. */
#define TAB_MARGIN 0.95

/* Fixed-base tables for a resident set of n points (cuzk_gpu_points_tables): copy k of every
 * point is 2^(k s) P, t copies (the set itself is copy 0). Window w of an MSM then reads copy
 * w / g with its digit shifted by (w % g) c bits: the g = s / c bucket sets take every window,
 * so larger windows pay, and the bucket reduction runs g times instead of W. The window width
 * for n points with at most max_copies copies (0: no limit): c in [4, CUZK_GPU_TAB_MAX_C]
 * minimising the bucket additions; t = W / g copies, s = g c. t = 1: no table pays (n tiny,
 * max_copies 1, or t n points would not fit 31-bit indices). */
void cuzk__gpu_tab_plan(size_t n, int nbits, int max_copies, int *c, int *t, int *s)
{
    double best = 1e300;
    /* Sorted entries address copy k's point i as k n + i in 31 bits. */
    uint64_t tmax = max_copies > 0 && max_copies < CUZK_GPU_TAB_MAX_COPIES
                        ? (uint64_t)max_copies
                        : CUZK_GPU_TAB_MAX_COPIES;
    if (n && tmax > 0x7fffffffu / n)
        tmax = 0x7fffffffu / n;
    /* Without tables: the plain plan, the bar a table plan must pass (TAB_MARGIN). */
    const int cp = cuzk__gpu_choose_c(n ? n : 1, nbits), Wp = nbits / cp + 1;
    *c = cp;
    *t = 1;
    *s = cp;
    if (tmax < 2 || n == 0)
        return;
    for (int cc = 4; cc <= CUZK_GPU_TAB_MAX_C; cc++) {
        int W = nbits / cc + 1;
        int tt = (uint64_t)W < tmax ? W : (int)tmax;
        int g = (W + tt - 1) / tt;
        tt = (W + g - 1) / g; /* no copy that no window reads */
        double cost = msm_cost(n, W, cc, g);
        if (cost < best) {
            best = cost;
            *c = cc;
            *t = tt;
            *s = g * cc;
        }
    }
    if (*t < 2 || best >= TAB_MARGIN * msm_cost(n, Wp, cp, Wp)) {
        *c = cp;
        *t = 1;
        *s = cp;
    }
}

uint64_t cuzk_gpu_tables_bytes(cuzk_gpu_curve curve, cuzk_gpu_group g, uint64_t n,
                               int max_copies)
{
    const int bls = curve == CUZK_GPU_BLS12_381;
    int c, t, s;
    cuzk__gpu_tab_plan((size_t)n, bls ? 255 : 254, max_copies, &c, &t, &s);
    return (uint64_t)t * n * (bls ? 96 : 64) * (g == CUZK_GPU_G2 ? 2 : 1) +
           cuzk__gpu_inf_map_bytes(n);
}

/* One MSM's windows: n2 scalars outside {0, 1} over a set with t copies s bits apart (t = 1:
 * none). *c the window width, *g the bucket sets (windows per copy): the plain plan
 * (cuzk__gpu_choose_c, g = W) unless a width dividing s reads the copies for enough fewer
 * additions (TAB_MARGIN). */
void cuzk__gpu_msm_plan(size_t n2, int nbits, int t, int s, int *c, int *g)
{
    int cp = cuzk__gpu_choose_c(n2 ? n2 : 1, nbits), Wp = nbits / cp + 1;
    double best = TAB_MARGIN * msm_cost(n2, Wp, cp, Wp); /* the bar a table plan must pass */
    *c = cp;
    *g = Wp;
    if (t < 2)
        return;
    for (int cc = 4; cc <= CUZK_GPU_TAB_MAX_C && cc <= s; cc++) {
        if (s % cc)
            continue;
        int W = nbits / cc + 1, gg = s / cc;
        if ((long)t * gg < W)
            continue; /* the copies do not reach the top window */
        if (gg > W)
            gg = W;
        double cost = msm_cost(n2, W, cc, gg);
        if (cost < best) {
            best = cost;
            *c = cc;
            *g = gg;
        }
    }
}

/* Entries per level-1 accumulation thread for M sorted entries: longer slices mean fewer
 * carries for the later levels (each slice leaves at most one), as long as the slices still
 * fill the device. */
uint32_t cuzk__gpu_slice_len(size_t M)
{
    /* 128 halves the carries at 2^24 scalars and up (the carry levels, k_accumk, are a few
     * per cent of an MSM at 64), still ~23 waves of blocks; batch-affine slices hold at most
     * BA_MAXP (64) pairs. */
    return M >= ((size_t)1 << 27)   ? 128
           : M >= ((size_t)1 << 26) ? 64
           : M >= ((size_t)1 << 22) ? 32
           : M >= ((size_t)1 << 16) ? 16
                                    : 4;
}

/* A batch-affine MSM's slice length: the longest of 128 and 64 whose slices, `lanes` threads
 * each, still give the device's sm_count SMs CUZK_GPU_BA_SLICE_WAVES_X2 / 2 times 512 threads,
 * else cuzk__gpu_slice_len's. Longer slices pair more of their entries and make more quads,
 * with fewer carries, tree leaves and chunks; too few slices leave the SMs idle (G1 BLS12-381
 * 2^20 is faster with 64 than with 128, whose one-lane slices make 1.8 waves). */
uint32_t cuzk__gpu_ba_slice_len(size_t M, int sm_count, int lanes)
{
    const uint32_t L = cuzk__gpu_slice_len(M);
    const size_t want =
        (size_t)(sm_count > 0 ? sm_count : 1) * 512 * CUZK_GPU_BA_SLICE_WAVES_X2 / 2;
    for (uint32_t l = 128; l > L; l >>= 1)
        if (M / l * (size_t)(lanes > 1 ? lanes : 1) >= want)
            return l;
    return L;
}

uint32_t cuzk__gpu_ba_len(size_t M, int sm_count, int g2, int lanes, int q)
{
    const uint32_t L = cuzk__gpu_ba_slice_len(M, sm_count, lanes);
    /* G1's longer slices pay only with quads in them (without, BLS12-381 G1 is slower with
     * slices of 128); G2's without them too. */
    return g2 || cuzk__gpu_ba_quads_on(q, g2, M, L) ? L : cuzk__gpu_slice_len(M);
}

/* Whether an MSM of M sorted entries sums its buckets by batch-affine pairs: for G2 from
 * CUZK_GPU_BA_MIN entries, where it is faster, and for a G1 set that asks for it (g1_pref:
 * BLS12-381 sets, cuzk_gpu_msm); every: for every MSM of every size (tests). */
int cuzk__gpu_ba_on(int every, int g2, int g1_pref, size_t M)
{
    return every || (M >= CUZK_GPU_BA_MIN && (g2 || g1_pref));
}

int cuzk__gpu_ba_quads_on(int q, int g2, size_t M, uint32_t L1)
{
    return q == 2 || (q == 1 && !g2) || (q == 3 && (M >= CUZK_GPU_BA_QUADS_MIN || L1 >= 64));
}

size_t cuzk__gpu_ba_slices(size_t chunk, uint32_t L1, size_t f, int quads, size_t T)
{
    /* Per slice: L1 / 2 prefixes of f bytes; with quads as many affine pair sums (2 f) and two
     * mask words. */
    const size_t per = (size_t)(L1 / 2) * f * (quads ? 3 : 1) + (quads ? 16 : 0);
    size_t tc = chunk / per;
    if (tc < 1)
        tc = 1;
    return tc > T ? T : tc;
}

/* The fewest passes (each reads and writes the whole vector), the stages spread so that the
 * blocks are about equal: a 2^27 NTT with 2^10-element blocks and 8-element tiles is
 * 9 + 6 + 6 + 6 stages rather than 10 + 7 + 7 + 3, whose last pass would run small blocks of 64
 * elements. */
int cuzk__gpu_ntt_plan(int logn, int log_sh, int max_lob, int s[32], int lob[32])
{
    if (logn <= log_sh) {
        s[0] = logn;
        lob[0] = 0;
        return 1;
    }
    const int later = log_sh - max_lob; /* stages per pass after the first */
    const int P = 1 + (logn - log_sh + later - 1) / later;
    /* The first pass's blocks are 2^s[0] elements, a later one's 2^(s + max_lob): equal sizes
     * give s[0] ~ (logn + (P - 1) max_lob) / P. That is at most log_sh (logn <= log_sh +
     * (P - 1) later), at least max_lob (logn > max_lob), and leaves at most (P - 1) later
     * stages to the later passes (gpu_plan_test checks all three). */
    const int s0 = (logn + (P - 1) * max_lob + P - 1) / P;
    s[0] = s0;
    lob[0] = 0;
    int done = s0;
    for (int i = 1; i < P; i++) {
        const int left = P - i;
        int st = (logn - done + left - 1) / left;
        if (st > later)
            st = later;
        s[i] = st;
        lob[i] = max_lob;
        done += st;
    }
    return P;
}

/* One slot per SCRATCH slot that grows with the problem (gpu_internal.cuh's SCR_*). */
enum { P_SC_IN, P_SC, P_FLAGS, P_IDX, P_KEYVAL, P_CUB, P_BUCKETS, P_CARRY0, P_CARRY1,
       P_CHUNK, P_BA_PRE, P_BA_TREE, P_BA_MASK, P_H, P_NTT, P_COUNT };

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The scratch of one MSM of n points whose scalars are all outside {0, 1} (the largest case:
 * the sort and bucket arrays grow with the count of such scalars). */
static void msm_plan(uint64_t slot[P_COUNT], int bls, int g2, uint64_t n, int tab, size_t chunk,
                     int q)
{
    const uint64_t fp = bls ? 48 : 32, f = g2 ? 2 * fp : fp, x = 4 * f; /* xyzz<F> */
    const int nbits = bls ? 255 : 254;
    int c = cuzk__gpu_choose_c(n ? n : 1, nbits), W = nbits / c + 1, g = W;
    if (tab) {
        /* With the set's fullest tables (fewer windows, fewer but larger bucket sets). */
        int t, s;
        cuzk__gpu_tab_plan((size_t)n, nbits, 0, &c, &t, &s);
        cuzk__gpu_msm_plan((size_t)n, nbits, t, s, &c, &g);
        W = nbits / c + 1;
    }
    /* Over CUZK_GPU_MSM_PART_MAX points the MSM runs in equal parts under the whole MSM's
     * plan: the slots that grow with the count hold one part. */
    const uint64_t parts = (n + CUZK_GPU_MSM_PART_MAX - 1) / CUZK_GPU_MSM_PART_MAX;
    const uint64_t np = parts > 1 ? (n + parts - 1) / parts : n;
    const uint64_t M = np * (uint64_t)W, B = (uint64_t)1 << (c - 1);
    const uint64_t L1 = cuzk__gpu_slice_len(M);
    /* T2: the carries' second level at the smallest carry slice (CUZK_GPU_CARRY_SLICE 4). */
    const uint64_t T = (M + L1 - 1) / L1, T2 = (T + 3) / 4;
    slot[P_SC_IN] = max64(slot[P_SC_IN], 32 * n);
    slot[P_SC] = max64(slot[P_SC], 32 * np);
    slot[P_FLAGS] = max64(slot[P_FLAGS], 2 * np + 32);
    /* The ones' and others' indices, and the ones kept by the drop of points at infinity. */
    slot[P_IDX] = max64(slot[P_IDX], 12 * np);
    slot[P_KEYVAL] = max64(slot[P_KEYVAL], 16 * M);
    /* CUB's select and radix-sort temporaries: bounded generously (a few per cent of M's
     * bytes in practice). */
    slot[P_CUB] = max64(slot[P_CUB], M / 2 + ((uint64_t)16 << 20));
    slot[P_BUCKETS] = max64(slot[P_BUCKETS], g * B * x + x);
    slot[P_CARRY0] = max64(slot[P_CARRY0], T * (4 + x));
    slot[P_CARRY1] = max64(slot[P_CARRY1], (T2 + 1) * (4 + x));
    /* The reduction's run and tri sums (2 B / S per set, S >= 8, or 2 when B < 8) and its
     * sums for the host (at most c per set, and the ones). */
    slot[P_CHUNK] = max64(slot[P_CHUNK], g * (B >= 8 ? B / 4 : 2) * x + (g * c + 1) * 3 * f);
    if (cuzk__gpu_ba_on(0, g2, bls, M)) { /* BLS12-381 G1 sets may prefer it */
        /* The chunk as a context sizes it (gpu_impl.cuh's accumulate): with quads its budget
         * also holds the pair sums (an affine point per prefix, in the prefixes' slot) and two
         * mask words per slice. */
        /* accumulate may take longer slices (cuzk__gpu_ba_len, by the device's SMs):
         * fewer of them, so T and L1 here bound what it needs, and quads with or without
         * (by its slice length, setting 3), so both are counted. */
        const int quads = cuzk__gpu_ba_quads_on(q, g2, M, 128);
        const uint64_t pre_per = L1 / 2 * f, sums_per = L1 / 2 * 2 * f;
        for (int qd = 0; qd <= quads; qd++) {
            const uint64_t tc = cuzk__gpu_ba_slices(chunk, (uint32_t)L1, f, qd, T);
            slot[P_BA_PRE] = max64(slot[P_BA_PRE], tc * (pre_per + (qd ? sums_per : 0)));
            if (qd)
                slot[P_BA_MASK] = max64(slot[P_BA_MASK], tc * 16);
            /* The product tree's levels and kept nodes, and the prefix counts. */
            slot[P_BA_TREE] = max64(slot[P_BA_TREE], cuzk__gpu_tree_space(tc) * f + tc);
        }
    }
}

uint64_t cuzk__gpu_scratch_estimate_at(int bls, uint64_t n_points, uint64_t domain, size_t chunk,
                                       int q)
{
    uint64_t slot[P_COUNT] = {0};
    /* The slots are shared by every MSM of the context: the witness MSMs (A, B1, C in G1, B2
     * in G2 over n_points) and the H MSM (G1 over the domain). (None is a one-off MSM split
     * for its upload, CUZK_GPU_SCALARS_ONCE; its parts share one bucket array.) */
    for (int tab = 0; tab < 2; tab++) {
        msm_plan(slot, bls, 1, n_points, tab, chunk, q);
        msm_plan(slot, bls, 0, n_points, tab, chunk, q);
        if (domain)
            msm_plan(slot, bls, 0, domain, tab, chunk, q);
    }
    /* The H step: a, b, c and the NTT's other buffer; the witness upload of synthesis. */
    slot[P_H] = 3 * 32 * domain;
    slot[P_NTT] = 32 * domain;
    slot[P_SC_IN] = max64(slot[P_SC_IN], 32 * n_points);
    uint64_t sum = 0, msm = 0;
    for (int i = 0; i < P_COUNT; i++) {
        const uint64_t b = slot[i] + slot[i] / 8; /* cuzk__gpu_scratch's 1/8 of headroom */
        sum += b;
        if (i != P_SC_IN && i != P_H && i != P_NTT)
            msm += b;
    }
    if (domain > CUZK_GPU_MSM_PART_MAX) {
        /* The H step and the MSMs take turns (gpu_core.cu, h_phase_*): the witness upload,
         * then the larger of the H step's four vectors and the MSMs' slots beside h. */
        const uint64_t v = 32 * domain + 32 * domain / 8, hstep = 4 * v;
        sum = slot[P_SC_IN] + slot[P_SC_IN] / 8 + max64(hstep, msm + v);
    }
    /* Twiddles (cudaMalloc'd per context and curve): 2^(L-1) of 32 bytes, L = log2(domain)+1,
     * at least 2^11. */
    uint64_t tw = (uint64_t)1 << 11;
    while (tw < domain)
        tw <<= 1;
    return sum + 32 * tw;
}

/* The tile (2^1 to 2^3 contiguous elements) of a 2^logn NTT's later passes: the one whose even
 * plan gives those passes blocks closest to 2^9 elements, then the one with fewer passes; ties
 * go to the larger tile (longer contiguous runs per gather). Blocks of 2^9 elements are worth
 * more than a pass fewer: k_ntt_pass's 512-element instance fits twice the blocks per SM
 * (2^27 runs faster in four passes of 2^9 than in three of 2^10, 2^10 and 2^9). */
int cuzk__gpu_ntt_auto_lob(int logn, int log_sh)
{
    int best = log_sh > 3 ? 3 : 1, best_p = 1 << 30, best_dev = 1 << 30;
    for (int lb = 3; lb >= 1; lb--) {
        int s[32], lob[32], dev = 0;
        if (log_sh <= lb)
            continue;
        const int P = cuzk__gpu_ntt_plan(logn, log_sh, lb, s, lob);
        for (int i = 1; i < P; i++) {
            const int d = s[i] + lob[i] - 9;
            dev += d < 0 ? -d : d;
        }
        if (dev < best_dev || (dev == best_dev && P < best_p)) {
            best_p = P;
            best_dev = dev;
            best = lb;
        }
    }
    return best;
}

uint64_t cuzk_gpu_scratch_estimate(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain)
{
    return cuzk__gpu_scratch_estimate_at(curve == CUZK_GPU_BLS12_381, n_points, domain,
                                         CUZK_GPU_BA_PRE_BYTES, CUZK_GPU_BA_QUADS_DEFAULT);
}

uint64_t cuzk_gpu_scratch_estimate_at(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain,
                                      uint64_t chunk, int quads)
{
    return cuzk__gpu_scratch_estimate_at(curve == CUZK_GPU_BLS12_381, n_points, domain,
                                         (size_t)chunk, quads);
}

uint64_t cuzk_gpu_ba_fit_bytes(cuzk_gpu_curve curve, uint64_t n_points, uint64_t domain,
                               uint64_t avail, uint64_t *chunk, int *quads)
{
    const int bls = curve == CUZK_GPU_BLS12_381;
    size_t c;
    int q;
    cuzk__gpu_ba_fit(bls, n_points, domain, avail, &c, &q);
    if (*chunk && c > *chunk) {
        c = (size_t)*chunk;
        q = *quads;
    }
    *chunk = c;
    *quads = q;
    return cuzk__gpu_scratch_estimate_at(bls, n_points, domain, c, q);
}

void cuzk__gpu_ba_fit(int bls, uint64_t n_points, uint64_t domain, uint64_t avail, size_t *chunk,
                      int *quads)
{
    *chunk = CUZK_GPU_BA_PRE_BYTES;
    *quads = CUZK_GPU_BA_QUADS_DEFAULT;
    /* From the largest chunk down: the first whose estimate fits. The estimate grows with the
     * chunk only up to what the largest MSM needs (cuzk__gpu_ba_slices stops at its slices),
     * so a small circuit takes the largest chunk at no cost. */
    for (size_t c = CUZK_GPU_BA_CHUNK_MAX; c >= *chunk; c -= CUZK_GPU_BA_FIT_STEP) {
        const int q = c >= CUZK_GPU_BA_QUADS_FIT ? 3 : 0;
        if (cuzk__gpu_scratch_estimate_at(bls, n_points, domain, c, q) <= avail) {
            *chunk = c;
            *quads = q;
            return;
        }
        if (c < *chunk + CUZK_GPU_BA_FIT_STEP)
            break;
    }
}
