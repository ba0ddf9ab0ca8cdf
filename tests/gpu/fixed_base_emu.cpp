/*
 * The fixed-base multiplication's kernel (src/gpu/ec/fixed_base_kernels.cuh) compiled for the host
 * (CUZK_GPU_HOST_EMU, tests/gpu/emu_cuda.h) and run as the device code runs it
 * (src/gpu/fixed_base.cuh, gpu_fixed_base.cu): the chain 2^i G, the window table from it, then
 * the products k_i G in chunks, for both curves and both groups, against the CPU's k G
 * (src/ec's double-and-add, tests/gpu/fixed_base_ref.c) byte for byte. Windows of 5 and 6 bits
 * (the device's 16 would take minutes here; 6 leaves a partial last window), scalars 0, 1, 2,
 * r - 1, r - 2, 2^(bits-1) - 1, 2^(bits-1) and random ones below r, canonical and in
 * Montgomery form, counts that are no multiple of the threads, the points per thread or the
 * chunk. Built and run by fixed_base_emu_test.sh.
 */
#include "emu_cuda.h" /* first: the CUDA shims */

#include <stdio.h>
#include <string.h>

#include <vector>

#include "ec/ec_params.h"
#include "gpu/ff/field.cuh"
#include "gpu/ec/fixed_base_kernels.cuh"
#include "emu_fields.h"

using namespace cuzk_gpu;

extern "C" void fb_ref(int curve, int g, const uint64_t k[4], uint8_t *out);

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32()
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 16);
}

static long checks, failed;
static void check(bool ok, const char *what, const char *grp, size_t i)
{
    checks++;
    if (!ok && failed++ < 20)
        printf("MISMATCH %s: %s, at %zu\n", what, grp, i);
}

/* k_fb_sum over n points as the host code launches it (threads per block, points per
 * thread), its scratch sized as the device's. */
template <class F, class Sel>
static void run_sum(const Sel &sel, size_t n, unsigned threads, int M, affine<F> *out)
{
    const size_t T = fb_threads(n, M);
    std::vector<F> scr(5 * (size_t)M * T);
    launch_serial((T + threads - 1) / threads, threads,
                  [&] { k_fb_sum<F, Sel>(sel, n, T, M, scr.data(), out); });
}

template <class F, class FRC>
static void run_group(const char *grp, int curve, int g, const void *gen_limbs, int w,
                      const uint64_t r2[4])
{
    const int nwin = (255 + w - 1) / w;
    const size_t nbits = (size_t)nwin * w;
    affine<F> gen;
    memcpy(&gen, gen_limbs, sizeof gen);
    const size_t pb = sizeof(affine<F>);
    std::vector<uint8_t> ref(pb);

    /* the chain: one thread */
    std::vector<affine<F>> bits(nbits);
    fb_sel_chain<F> chain;
    memset(&chain, 0, sizeof chain);
    chain.g = gen;
    run_sum<F>(chain, nbits, 1, (int)nbits, bits.data());
    for (size_t i = 0; i < 255; i++) {
        uint64_t k[4] = {0, 0, 0, 0};
        k[i / 64] = 1ull << (i % 64);
        fb_ref(curve, g, k, ref.data());
        check(memcmp(&bits[i], ref.data(), pb) == 0, "2^i G", grp, i);
    }

    /* the table, and spot checks of it */
    const size_t ntab = (size_t)nwin << w;
    std::vector<affine<F>> tab(ntab);
    run_sum<F>(fb_sel_table<F>{bits.data(), w}, ntab, 16, 3, tab.data());
    for (size_t e = 0; e < ntab; e += 37) {
        const size_t j = e >> w, d = e & (((size_t)1 << w) - 1);
        uint64_t k[4] = {0, 0, 0, 0};
        const size_t off = j * w;
        if (off < 256) {
            k[off / 64] = (uint64_t)d << (off % 64);
            if (off % 64 && off / 64 + 1 < 4)
                k[off / 64 + 1] = (uint64_t)d >> (64 - off % 64);
        }
        if (off + w > 256)
            continue; /* entries past bit 255: no canonical scalar reaches them */
        fb_ref(curve, g, k, ref.data());
        check(memcmp(&tab[e], ref.data(), pb) == 0, "table", grp, e);
    }

    /* the scalars: 32-bit words of the canonical integers */
    uint32_t r[8];
    for (int l = 0; l < 8; l++)
        r[l] = FRC::p(l);
    const int top = curve == 0 ? 253 : 254; /* 2^top < r */
    std::vector<std::vector<uint32_t>> ks;
    auto add = [&](std::vector<uint32_t> v) { ks.push_back(v); };
    add({0, 0, 0, 0, 0, 0, 0, 0});
    add({1, 0, 0, 0, 0, 0, 0, 0});
    add({2, 0, 0, 0, 0, 0, 0, 0});
    add({r[0] - 1, r[1], r[2], r[3], r[4], r[5], r[6], r[7]});
    add({r[0] - 2, r[1], r[2], r[3], r[4], r[5], r[6], r[7]});
    {
        std::vector<uint32_t> v(8, 0xffffffffu), u(8, 0);
        v[top / 32] = (1u << (top % 32)) - 1;
        for (int l = top / 32 + 1; l < 8; l++)
            v[l] = 0;
        u[top / 32] = 1u << (top % 32);
        add(v);
        add(u);
    }
    while (ks.size() < 45) {
        std::vector<uint32_t> v(8);
        for (int l = 0; l < 8; l++)
            v[l] = rnd32();
        v[7] %= r[7]; /* below r */
        add(v);
    }
    const size_t n = ks.size();
    std::vector<uint32_t> sc(8 * n), scm(8 * n);
    fe<FRC> R2;
    for (int l = 0; l < 8; l++)
        R2.v[l] = LIMB32(r2, l);
    std::vector<uint8_t> want(n * pb);
    for (size_t i = 0; i < n; i++) {
        fe<FRC> k;
        uint64_t k64[4];
        for (int l = 0; l < 8; l++)
            sc[8 * i + l] = k.v[l] = ks[i][l];
        for (int l = 0; l < 4; l++)
            k64[l] = (uint64_t)ks[i][2 * l] | (uint64_t)ks[i][2 * l + 1] << 32;
        const fe<FRC> m = mul_inl(k, R2); /* k R mod r */
        for (int l = 0; l < 8; l++)
            scm[8 * i + l] = m.v[l];
        fb_ref(curve, g, k64, want.data() + i * pb);
    }

    /* chunks as gpu_fixed_base.cu cuts them, with the device's geometry and a small one */
    struct {
        size_t chunk;
        unsigned threads;
        int M;
        bool mont;
    } runs[] = {{n, FB_THREADS, FB_PER_THREAD, false},
                {16, 8, 4, true},
                {n, 4, 5, true},
                {7, 2, 3, false}};
    for (auto &ru : runs) {
        std::vector<affine<F>> out(n);
        memset(out.data(), 0xa5, n * pb);
        for (size_t lo = 0; lo < n; lo += ru.chunk) {
            const size_t cnt = n - lo < ru.chunk ? n - lo : ru.chunk;
            fb_sel_scalar<F, FRC> sel{tab.data(), (ru.mont ? scm.data() : sc.data()) + 8 * lo,
                                      w, nwin, ru.mont};
            run_sum<F>(sel, cnt, ru.threads, ru.M, out.data() + lo);
        }
        for (size_t i = 0; i < n; i++)
            check(memcmp(&out[i], want.data() + i * pb, pb) == 0,
                  ru.mont ? "k G (Montgomery scalars)" : "k G", grp, i);
    }
}

struct w4 {
    uint64_t l[4];
};
struct w6 {
    uint64_t l[6];
};
struct g1_4 {
    w4 x, y;
};
struct g2_4 {
    struct {
        w4 c0, c1;
    } x, y;
};
struct g1_6 {
    w6 x, y;
};
struct g2_6 {
    struct {
        w6 c0, c1;
    } x, y;
};

int main()
{
    static const g1_4 bn1 = {BN254_G1_GEN_X, BN254_G1_GEN_Y};
    static const g2_4 bn2 = {BN254_G2_GEN_X, BN254_G2_GEN_Y};
    static const g1_6 bls1 = {BLS12_381_G1_GEN_X, BLS12_381_G1_GEN_Y};
    static const g2_6 bls2 = {BLS12_381_G2_GEN_X, BLS12_381_G2_GEN_Y};
    static const uint64_t bn_r2[4] = BN254_FR_R2, bls_r2[4] = BLS12_381_FR_R2;
    run_group<fe<BnFpL>, BnFr>("BN254 G1", 0, 1, &bn1, 5, bn_r2);
    run_group<fe2<BnFp>, BnFr>("BN254 G2", 0, 2, &bn2, 6, bn_r2);
    run_group<fe<BlsFpL>, BlsFr>("BLS12-381 G1", 1, 1, &bls1, 6, bls_r2);
    run_group<fe2<BlsFp>, BlsFr>("BLS12-381 G2", 1, 2, &bls2, 5, bls_r2);
    printf("fixed_base_emu: %ld checks, %ld failed\n", checks, failed);
    return failed ? 1 : 0;
}
