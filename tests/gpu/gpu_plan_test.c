/*
 * The CUDA backend's MSM plan with fixed-base tables (src/gpu/gpu_plan.c), which needs no
 * device: the copies a set gets, the windows an MSM over it uses, and the bytes budgets count.
 * gpu_test checks the MSM results that follow from these plans on a device.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/gpu.h"
#include "gpu/gpu_plan.h"
#include "testutil.h"

static double adds(size_t n, int c, int g, int nbits)
{
    int W = nbits / c + 1;
    return (double)W * (double)n + 2.8 * (double)g * (double)(1u << (c - 1));
}

static void check_set(size_t n, int nbits, int maxc)
{
    int c, t, s;
    cuzk__gpu_tab_plan(n, nbits, maxc, &c, &t, &s);
    int lim = maxc > 0 && maxc < CUZK_GPU_TAB_MAX_COPIES ? maxc : CUZK_GPU_TAB_MAX_COPIES;
    CHECK_MSG(t >= 1 && t <= lim, "n=%zu max=%d: %d copies", n, maxc, t);
    CHECK_MSG((uint64_t)t * n <= 0x7fffffffu || t == 1, "n=%zu: %d copies overflow 31 bits", n,
              t);
    if (maxc == 1)
        CHECK(t == 1);
    const int cp = cuzk__gpu_choose_c(n ? n : 1, nbits), Wp = nbits / cp + 1;
    if (t > 1) {
        int W = nbits / c + 1, g = s / c;
        CHECK_MSG(c >= 4 && c <= CUZK_GPU_TAB_MAX_C && s % c == 0, "n=%zu: c=%d s=%d", n, c, s);
        /* every window has a copy, and no copy is unread */
        CHECK_MSG(t * g >= W && (t - 1) * g < W, "n=%zu: t=%d g=%d W=%d", n, t, g, W);
        /* a table is only built when it saves additions */
        CHECK_MSG(adds(n, c, g, nbits) < adds(n, cp, Wp, nbits), "n=%zu: no saving", n);
        /* a dense MSM over the set uses the table's windows */
        int mc, mg;
        cuzk__gpu_msm_plan(n, nbits, t, s, &mc, &mg);
        CHECK_MSG(mc == c && mg == g, "n=%zu: dense MSM plan c=%d g=%d, table c=%d g=%d", n,
                  mc, mg, c, g);
    }
    /* Any count of scalars outside {0, 1}: the plan covers every window. */
    const size_t n2s[] = {1, 7, n / 97 + 1, n / 3 + 1, n};
    for (int i = 0; i < 5; i++) {
        int mc, mg;
        cuzk__gpu_msm_plan(n2s[i], nbits, t, s, &mc, &mg);
        int W = nbits / mc + 1;
        CHECK_MSG(mc >= 4 && mc <= CUZK_GPU_TAB_MAX_C && mg >= 1 && mg <= W,
                  "n=%zu n2=%zu: c=%d g=%d", n, n2s[i], mc, mg);
        if (mg < W)
            CHECK_MSG(t > 1 && s % mc == 0 && mg == s / mc && t * mg >= W,
                      "n=%zu n2=%zu: c=%d g=%d t=%d s=%d", n, n2s[i], mc, mg, t, s);
        else
            CHECK_MSG(mc == cuzk__gpu_choose_c(n2s[i], nbits) || t > 1,
                      "n=%zu n2=%zu: plain plan c=%d", n, n2s[i], mc);
        /* never more additions than without tables */
        int pc = cuzk__gpu_choose_c(n2s[i], nbits);
        CHECK(adds(n2s[i], mc, mg, nbits) <= adds(n2s[i], pc, nbits / pc + 1, nbits));
    }
    /* The budget's bytes are the copies' bytes and the map of the points at infinity (one
     * bit per point, in 32-bit words). */
    const cuzk_gpu_curve cv = nbits == 254 ? CUZK_GPU_BN254 : CUZK_GPU_BLS12_381;
    const uint64_t pb = nbits == 254 ? 64 : 96, map = (n + 31) / 32 * 4;
    CHECK(cuzk__gpu_inf_map_bytes(n) == map && cuzk__gpu_inf_map_bytes(32) == 4 &&
          cuzk__gpu_inf_map_bytes(33) == 8);
    CHECK(cuzk_gpu_tables_bytes(cv, CUZK_GPU_G1, n, maxc) == (uint64_t)t * n * pb + map);
    CHECK(cuzk_gpu_tables_bytes(cv, CUZK_GPU_G2, n, maxc) == (uint64_t)t * n * pb * 2 + map);
}

/* The NTT's passes: every stage once, blocks within shared memory, tiles only over stages done,
 * and the fewest passes the block size allows. */
static void check_ntt_plan(int logn, int log_sh, int max_lob)
{
    int s[32], lob[32];
    const int P = cuzk__gpu_ntt_plan(logn, log_sh, max_lob, s, lob);
    const int later = log_sh - max_lob;
    const int Pmin = logn <= log_sh ? 1 : 1 + (logn - log_sh + later - 1) / later;
    CHECK_MSG(P == Pmin, "ntt 2^%d (%d, %d): %d passes, %d needed", logn, log_sh, max_lob, P,
              Pmin);
    int done = 0, ok = P >= 1 && P <= 32 && lob[0] == 0;
    for (int i = 0; ok && i < P; i++) {
        ok &= s[i] >= 1 && s[i] + lob[i] <= log_sh && lob[i] >= 0 && lob[i] <= done;
        done += s[i];
    }
    CHECK_MSG(ok && done == logn, "ntt 2^%d (%d, %d): bad passes", logn, log_sh, max_lob);
}

int main(void)
{
    for (int logn = 1; logn <= 31; logn++)
        for (int sh = 4; sh <= 10; sh++)
            for (int lb = 1; lb <= 3; lb++)
                check_ntt_plan(logn, sh, lb);
    {
        /* The default plans of the common sizes. */
        int s[32], lob[32];
        int P = cuzk__gpu_ntt_plan(27, 10, 3, s, lob);
        CHECK_MSG(P == 4 && s[0] == 9 && s[1] == 6 && s[2] == 6 && s[3] == 6, "2^27 (10, 3)");
        P = cuzk__gpu_ntt_plan(24, 10, 2, s, lob);
        CHECK_MSG(P == 3 && s[0] == 10 && s[1] == 7 && s[2] == 7 && lob[2] == 2, "2^24 (10, 2)");
        P = cuzk__gpu_ntt_plan(26, 10, 1, s, lob);
        CHECK_MSG(P == 3 && s[0] == 10 && s[1] == 8 && s[2] == 8 && lob[2] == 1, "2^26 (10, 1)");
        /* The default tile by size: later blocks of 2^9 elements, then the fewest passes. */
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(24, 10) == 2, "2^24 auto tile");
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(27, 10) == 3, "2^27 auto tile (4 passes of 2^9)");
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(26, 10) == 1, "2^26 auto tile (blocks 2^10, 2^9, 2^9)");
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(25, 10) == 1, "2^25 auto tile");
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(22, 10) == 3, "2^22 auto tile");
        CHECK_MSG(cuzk__gpu_ntt_auto_lob(28, 10) == 3, "2^28 auto tile");
        for (int logn = 1; logn <= 31; logn++)
            for (int sh = 4; sh <= 11; sh++) {
                const int lb = cuzk__gpu_ntt_auto_lob(logn, sh);
                CHECK_MSG(lb >= 1 && lb <= 3 && lb < sh, "auto tile 2^%d (%d): %d", logn, sh, lb);
            }
    }

    const size_t ns[] = {1, 2, 100, 1500, 3000, 65539, 1u << 20, 1u << 22, 1u << 24, 1u << 26,
                         (size_t)1 << 28, (size_t)3 << 29};
    const int maxcs[] = {0, 1, 2, 3, 5, 12, 40};
    for (int b = 0; b < 2; b++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (size_t k = 0; k < sizeof maxcs / sizeof maxcs[0]; k++)
                check_set(ns[i], b ? 255 : 254, maxcs[k]);
    /* The figures docs/PERFORMANCE.md quotes: 12 copies of 22-bit windows at 2^24, one bucket
     * set for all 12 windows... */
    int c, t, s;
    for (int b = 0; b < 2; b++) {
        cuzk__gpu_tab_plan((size_t)1 << 24, b ? 255 : 254, 0, &c, &t, &s);
        CHECK_MSG(c == 22 && t == 12 && s == 22, "2^24: c=%d t=%d s=%d", c, t, s);
    }
    /* ... and none where t n points would not fit 31-bit indices. */
    cuzk__gpu_tab_plan((size_t)3 << 29, 254, 0, &c, &t, &s);
    CHECK(t == 1);
    cuzk__gpu_tab_plan((size_t)1 << 28, 254, 0, &c, &t, &s);
    CHECK(t >= 1 && (uint64_t)t << 28 <= 0x7fffffffu);

    /* Past CUZK_GPU_MSM_PART_MAX points an MSM runs in parts: the slots that grow with the
     * count stop growing. Past it the H step and the MSMs also take turns in the scratch: from
     * 2^26 to 2^27 BLS12-381's estimate grows only by the witness upload and h (32 + 32 bytes
     * a point, with 1/8 headroom) and the twiddles (32); 2^27 needs under 36 GB (85 GB with
     * neither). Up to 2^25 every slot counts. */
    {
        const uint64_t e25 = cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, 1ull << 25, 1ull << 25),
                       e26 = cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, 1ull << 26, 1ull << 26),
                       e27 = cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, 1ull << 27, 1ull << 27);
        const uint64_t per = 2 * 32 * 9 / 8 + 32;
        CHECK_MSG(e27 - e26 == per * (1ull << 26) && e26 < e25 + per * (1ull << 25),
                  "estimates 2^25-2^27: %llu %llu %llu", (unsigned long long)e25,
                  (unsigned long long)e26, (unsigned long long)e27);
        CHECK_MSG(e27 < 36000000000ull, "2^27 estimate %llu", (unsigned long long)e27);
        const uint64_t e24 = cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, 1ull << 24, 1ull << 24);
        CHECK_MSG(e24 > 18000000000ull && e24 < 18200000000ull, "2^24 estimate %llu",
                  (unsigned long long)e24);
    }

    /* Quads settings (cuzk_gpu_ba_set): 0 off, 1 G1 sets, 2 G1 and G2. The scratch estimate
     * counts the pair sums for the groups that use them: BN254 runs batch-affine only for G2,
     * so quads for G1 add nothing there, for G2 the sums; BLS12-381's G1 sets take them with 1.
     * The prefixes and the sums share one slot, so G1 with quads beside G2 without stays
     * within the chunk's bytes (in two slots, 1 held more than 2). The default is 0. */
    uint64_t est[2][3];
    for (int q = 0; q < 3; q++)
        for (int b = 0; b < 2; b++)
            est[b][q] = cuzk_gpu_scratch_estimate_at(b ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254,
                                                     (uint64_t)1 << 24, (uint64_t)1 << 24,
                                                     (uint64_t)12 << 30, q);
    for (int b = 0; b < 2; b++) {
        const cuzk_gpu_curve cv = b ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
        CHECK(cuzk_gpu_scratch_estimate(cv, (uint64_t)1 << 24, (uint64_t)1 << 24) ==
              cuzk_gpu_scratch_estimate_at(cv, (uint64_t)1 << 24, (uint64_t)1 << 24,
                                           CUZK_GPU_BA_PRE_BYTES, CUZK_GPU_BA_QUADS_DEFAULT));
    }
    CHECK_MSG(est[0][1] == est[0][0] && est[0][2] > est[0][0], "BN254 %llu %llu %llu",
              (unsigned long long)est[0][0], (unsigned long long)est[0][1],
              (unsigned long long)est[0][2]);
    CHECK_MSG(est[1][1] > est[1][0] && est[1][2] > est[1][0] &&
                  est[1][1] < est[1][2] + ((uint64_t)1 << 30),
              "BLS12-381 %llu %llu %llu",
              (unsigned long long)est[1][0], (unsigned long long)est[1][1],
              (unsigned long long)est[1][2]);

    /* Setting 3 (cuzk__gpu_ba_fit's): quads for MSMs of CUZK_GPU_BA_QUADS_MIN entries or in
     * slices of 64 entries or more, G1 and G2. */
    for (int g2 = 0; g2 < 2; g2++) {
        CHECK(cuzk__gpu_ba_quads_on(3, g2, CUZK_GPU_BA_QUADS_MIN, 32) &&
              !cuzk__gpu_ba_quads_on(3, g2, CUZK_GPU_BA_QUADS_MIN - 1, 32) &&
              cuzk__gpu_ba_quads_on(3, g2, CUZK_GPU_BA_QUADS_MIN - 1, 64) &&
              cuzk__gpu_ba_quads_on(3, g2, (size_t)1 << 22, 128) &&
              !cuzk__gpu_ba_quads_on(3, g2, (size_t)1 << 22, 16));
    }
    /* Batch-affine: G2 and G1 sets that prefer it from CUZK_GPU_BA_MIN entries; every MSM
     * for tests. */
    CHECK(cuzk__gpu_ba_on(0, 1, 0, CUZK_GPU_BA_MIN) &&
          !cuzk__gpu_ba_on(0, 1, 0, CUZK_GPU_BA_MIN - 1) &&
          cuzk__gpu_ba_on(0, 0, 1, CUZK_GPU_BA_MIN) &&
          !cuzk__gpu_ba_on(0, 0, 0, (size_t)1 << 30) && cuzk__gpu_ba_on(1, 0, 0, 1));
    CHECK(cuzk__gpu_ba_quads_on(1, 0, 1, 4) && !cuzk__gpu_ba_quads_on(1, 1, (size_t)1 << 30, 128) &&
          cuzk__gpu_ba_quads_on(2, 1, 1, 4) && !cuzk__gpu_ba_quads_on(0, 0, (size_t)1 << 30, 128));
    /* A batch-affine MSM's slices: 128 or 64 entries where they still fill the SMs 2.5 times
     * over (512 threads each), else cuzk__gpu_slice_len's, never shorter. With 132 SMs: 168960
     * threads. */
    {
        const size_t want = (size_t)132 * 512 * CUZK_GPU_BA_SLICE_WAVES_X2 / 2;
        CHECK(want == 168960);
        const size_t w = want;
        CHECK(cuzk__gpu_ba_slice_len(w * 128, 132, 1) == 128);
        CHECK(cuzk__gpu_ba_slice_len(w * 128 - 1, 132, 1) == 64);
        CHECK(cuzk__gpu_ba_slice_len(w * 64, 132, 1) == 64);
        CHECK(cuzk__gpu_ba_slice_len(w * 64 - 1, 132, 1) == cuzk__gpu_slice_len(w * 64 - 1));
        CHECK(cuzk__gpu_slice_len(w * 64 - 1) == 32);
        CHECK(cuzk__gpu_ba_slice_len(w * 64, 132, 2) == 128); /* G2: two lanes a slice */
        CHECK(cuzk__gpu_ba_slice_len(w * 64 - 1, 132, 2) == 64);
        CHECK(cuzk__gpu_ba_slice_len(w * 32, 132, 2) == 64);
        CHECK(cuzk__gpu_ba_slice_len(w * 32 - 1, 132, 2) == 32);
        CHECK(cuzk__gpu_ba_slice_len((size_t)1 << 22, 132, 2) == 32);
        CHECK(cuzk__gpu_ba_slice_len((size_t)1 << 28, 1 << 20, 1) == 128); /* the tier's */
        CHECK(cuzk__gpu_ba_slice_len((size_t)1 << 22, 0, 1) == 128);
        /* G1's long slices only with quads (setting 3 in a fitted chunk, 2), G2's always */
        CHECK(cuzk__gpu_ba_len(w * 128, 132, 0, 1, 0) == cuzk__gpu_slice_len(w * 128));
        CHECK(cuzk__gpu_ba_len(w * 128, 132, 0, 1, 3) == 128);
        CHECK(cuzk__gpu_ba_len(w * 128 - 1, 132, 0, 1, 3) == 64);
        CHECK(cuzk__gpu_ba_len(w * 128, 132, 0, 1, 2) == 128);
        CHECK(cuzk__gpu_ba_len(w * 64 - 1, 132, 0, 1, 3) == 32); /* quads off with 32 */
        CHECK(cuzk__gpu_ba_len(w * 64, 132, 1, 2, 0) == 128);
        CHECK(cuzk__gpu_ba_len(w * 64, 132, 1, 2, 3) == 128);
        CHECK(cuzk__gpu_ba_len(w * 32 - 1, 132, 1, 2, 0) == 32);
        for (size_t M = 1; M < ((size_t)1 << 31); M = M * 3 + 1)
            for (int sm = 1; sm <= 256; sm *= 4) {
                const uint32_t L = cuzk__gpu_ba_slice_len(M, sm, 2);
                CHECK_MSG(L >= cuzk__gpu_slice_len(M) && L <= 128 && !(L & (L - 1)) &&
                              L >= cuzk__gpu_ba_slice_len(M, sm, 1) &&
                              L >= cuzk__gpu_ba_slice_len(M, sm * 2, 2),
                          "M %zu sm %d: %u", M, sm, L);
            }
    }
    /* cuzk__gpu_ba_fit (cuzk_gpu_ba_fit's choice): the largest chunk whose estimate fits. */
    {
        const uint64_t n = (uint64_t)1 << 24, G = (uint64_t)1 << 30;
        size_t chunk;
        int q;
        const uint64_t def = cuzk__gpu_scratch_estimate_at(1, n, n, CUZK_GPU_BA_PRE_BYTES, 0);
        CHECK(def == cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, n, n));
        cuzk__gpu_ba_fit(1, n, n, 0, &chunk, &q); /* nothing fits: the default */
        CHECK_MSG(chunk == CUZK_GPU_BA_PRE_BYTES && q == 0, "avail 0: %zu %d", chunk, q);
        cuzk__gpu_ba_fit(1, n, n, def, &chunk, &q);
        CHECK_MSG(chunk == CUZK_GPU_BA_PRE_BYTES && q == 0, "avail = default: %zu %d", chunk, q);
        cuzk__gpu_ba_fit(1, n, n, UINT64_MAX, &chunk, &q);
        CHECK_MSG(chunk == CUZK_GPU_BA_CHUNK_MAX && q == 3, "all: %zu %d", chunk, q);
        /* In between: what it picks fits, the next step up does not. BLS12-381 2^24's
         * estimate grows with the chunk up to ~13.6 GiB (G1 with quads in one chunk). */
        for (uint64_t a = def; a < def + 14 * G; a += G / 3) {
            cuzk__gpu_ba_fit(1, n, n, a, &chunk, &q);
            CHECK_MSG(chunk >= CUZK_GPU_BA_PRE_BYTES && chunk <= CUZK_GPU_BA_CHUNK_MAX &&
                          q == (chunk >= CUZK_GPU_BA_QUADS_FIT ? 3 : 0),
                      "avail %llu: %zu %d", (unsigned long long)a, chunk, q);
            CHECK_MSG(cuzk__gpu_scratch_estimate_at(1, n, n, chunk, q) <= a, "avail %llu fits",
                      (unsigned long long)a);
            const size_t up = chunk + CUZK_GPU_BA_FIT_STEP;
            CHECK_MSG(chunk == CUZK_GPU_BA_CHUNK_MAX ||
                          cuzk__gpu_scratch_estimate_at(1, n, n, up, up >= CUZK_GPU_BA_QUADS_FIT ? 3 : 0) >
                              a,
                      "avail %llu: %zu is the largest", (unsigned long long)a, chunk);
        }
        /* A small circuit's estimate does not grow with the chunk: the largest, at no cost. */
        const uint64_t sdef =
            cuzk__gpu_scratch_estimate_at(1, 1u << 12, 1u << 12, CUZK_GPU_BA_PRE_BYTES, 0);
        cuzk__gpu_ba_fit(1, 1u << 12, 1u << 12, sdef, &chunk, &q);
        CHECK_MSG(chunk == CUZK_GPU_BA_CHUNK_MAX && q == 3, "small: %zu %d", chunk, q);
    }
    /* cuzk_gpu_ba_fit_bytes (the daemon's GPU workers, engine.c's fit_workers): the fit and the
     * estimate at it; a cap from an earlier circuit's fit bounds the chunk and brings its quads,
     * in either order. */
    {
        const uint64_t big = (uint64_t)1 << 24, small = (uint64_t)1 << 12, G = (uint64_t)1 << 30;
        const uint64_t a6 = cuzk__gpu_scratch_estimate_at(1, big, big, 6 * G, 0),
                       a12 = cuzk__gpu_scratch_estimate_at(1, big, big, 12 * G, 3);
        uint64_t chunk = 0, s;
        int q = -1;
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BLS12_381, big, big, a6, &chunk, &q);
        CHECK_MSG(chunk == 6 * G && q == 0 && s == a6, "6 GiB: %llu %d",
                  (unsigned long long)chunk, q);
        chunk = 0, q = -1;
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BLS12_381, big, big, a12, &chunk, &q);
        CHECK_MSG(chunk == 12 * G && q == 3 && s == a12, "12 GiB: %llu %d",
                  (unsigned long long)chunk, q);
        /* A small circuit after it keeps the cap (its own fit is the largest chunk). */
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BN254, small, small, UINT64_MAX, &chunk, &q);
        CHECK_MSG(chunk == 12 * G && q == 3 &&
                      s == cuzk__gpu_scratch_estimate_at(0, small, small, 12 * G, 3),
                  "small after: %llu %d", (unsigned long long)chunk, q);
        /* The other order: the small circuit takes the largest, the big one caps it. */
        chunk = 0, q = -1;
        cuzk_gpu_ba_fit_bytes(CUZK_GPU_BN254, small, small, UINT64_MAX, &chunk, &q);
        CHECK_MSG(chunk == CUZK_GPU_BA_CHUNK_MAX && q == 3, "small: %llu %d",
                  (unsigned long long)chunk, q);
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BLS12_381, big, big, a6, &chunk, &q);
        CHECK_MSG(chunk == 6 * G && q == 0 && s == a6, "big after: %llu %d",
                  (unsigned long long)chunk, q);
        /* With the cap and no bound on memory: the estimate at the cap. */
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BLS12_381, big, big, UINT64_MAX, &chunk, &q);
        CHECK_MSG(chunk == 6 * G && q == 0 && s == a6, "capped: %llu %d",
                  (unsigned long long)chunk, q);
        /* Nothing beyond the default fits: the default, as cuzk_gpu_scratch_estimate counts. */
        chunk = 0, q = -1;
        s = cuzk_gpu_ba_fit_bytes(CUZK_GPU_BLS12_381, big, big, 0, &chunk, &q);
        CHECK(chunk == CUZK_GPU_BA_PRE_BYTES && q == 0 &&
              s == cuzk_gpu_scratch_estimate(CUZK_GPU_BLS12_381, big, big));
    }
    return tu_finish("gpu_plan");
}
