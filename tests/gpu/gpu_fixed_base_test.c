/*
 * The GPU's fixed-base multiplication (cuzk_gpu_fixed_base_*) against the CPU, and the test
 * setup with its points on the GPU against the CPU's setup:
 *   - k_i G for scalars k_i = k0 + i d (the CPU adds d G point by point, src/ec) with 0, 1 and
 *     r - 1 among them, canonical and in Montgomery form, 1, 1000 and a chunk and 3 scalars,
 *     for both curves and groups, byte for byte;
 *   - cuzk_pk_generate of a 2^12 key with device -1 (the CPU) and 0: the same A, B1, C, H, B2
 *     and verification key, byte for byte.
 * With no CUDA device (CI) it prints a skip message and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/gencircuit.h"
#include "cuzk/groth16.h"
#include "ec/ec.h"
#include "gpu/gpu.h"
#include "testutil.h"

static cuzk_gpu_ctx *ctx;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

#define FB_GROUP_TEST(G, FR, CURVE, GROUP)                                                    \
    static void G##_affine_bytes(uint8_t *out, const G##_jac *p)                             \
    {                                                                                         \
        G##_affine a;                                                                         \
        if (G##_is_inf(p)) {                                                                  \
            memset(out, 0, sizeof a);                                                         \
            return;                                                                           \
        }                                                                                     \
        G##_to_affine(&a, p);                                                                 \
        memcpy(out, &a, sizeof a);                                                            \
    }                                                                                         \
    static void G##_mul_gen(G##_jac *r, const FR##_t *k)                                      \
    {                                                                                         \
        uint64_t l[4];                                                                        \
        G##_jac g;                                                                            \
        FR##_to_canonical(l, k);                                                              \
        G##_from_affine(&g, &G##_GEN);                                                        \
        G##_mul_limbs(r, &g, l, 4);                                                           \
    }                                                                                         \
    static void G##_test_fb(cuzk_gpu_fixed_base *fb, size_t n, int mont)                     \
    {                                                                                         \
        const size_t pb = sizeof(G##_affine);                                                 \
        FR##_t *k = malloc(n * sizeof *k);                                                    \
        uint64_t(*kc)[4] = malloc(n * sizeof *kc);                                            \
        uint8_t *want = malloc(n * pb), *got = malloc(n * pb);                                \
        G##_affine *scr_a = malloc(4096 * sizeof *scr_a);                                     \
        __typeof__(scr_a->x) *scr = (void *)scr_a; /* 4096 field elements */                 \
        if (!k || !kc || !want || !got || !scr_a) {                                           \
            CHECK_MSG(0, "%s: out of memory", #G);                                            \
            goto done;                                                                        \
        }                                                                                     \
        FR##_t k0, d;                                                                         \
        FR##_from_u64(&k0, tu_rand64());                                                      \
        FR##_from_u64(&d, tu_rand64() | 1);                                                   \
        FR##_mul(&k0, &k0, &k0); /* full width */                                            \
        FR##_mul(&d, &d, &k0);                                                                \
        G##_jac p, dg, blk[4096];                                                             \
        G##_mul_gen(&p, &k0);                                                                 \
        G##_mul_gen(&dg, &d);                                                                 \
        k[0] = k0;                                                                            \
        for (size_t i0 = 0; i0 < n; i0 += 4096) {                                             \
            size_t m = n - i0 < 4096 ? n - i0 : 4096;                                         \
            for (size_t j = 0; j < m; j++) {                                                  \
                if (i0 + j) {                                                                 \
                    FR##_add(&k[i0 + j], &k[i0 + j - 1], &d);                                 \
                    G##_add(&p, &p, &dg);                                                     \
                }                                                                             \
                blk[j] = p;                                                                   \
            }                                                                                 \
            G##_batch_to_affine((G##_affine *)(want + i0 * pb), blk, m, scr);                 \
        }                                                                                     \
        /* 0, 1 and r - 1 at the start, the middle and the end */                             \
        const size_t at[3] = {0, n / 2, n - 1};                                               \
        for (int j = 0; j < 3 && n >= 3; j++) {                                               \
            FR##_t v;                                                                         \
            if (j == 0)                                                                       \
                FR##_from_u64(&v, 0);                                                         \
            else if (j == 1)                                                                  \
                FR##_from_u64(&v, 1);                                                         \
            else                                                                              \
                FR##_sub(&v, &FR##_ZERO, &FR##_ONE);                                          \
            k[at[j]] = v;                                                                     \
            G##_jac q;                                                                        \
            G##_mul_gen(&q, &v);                                                              \
            G##_affine_bytes(want + at[j] * pb, &q);                                          \
        }                                                                                     \
        for (size_t i = 0; i < n; i++)                                                        \
            FR##_to_canonical(kc[i], &k[i]);                                                  \
        memset(got, 0xa5, n * pb);                                                            \
        cuzk_errbuf eb = {{0}};                                                               \
        double t0 = now_ms();                                                                 \
        cuzk_err e = cuzk_gpu_fixed_base_mul(fb, mont ? (const void *)k : (const void *)kc,  \
                                             n, mont ? CUZK_GPU_SCALARS_MONT : 0, got, &eb);  \
        double ms = now_ms() - t0;                                                            \
        CHECK_MSG(e == CUZK_OK, "%s fixed-base n=%zu: %s", #G, n, eb.msg);                    \
        size_t bad = 0, first = n;                                                            \
        for (size_t i = 0; i < n && !e; i++)                                                  \
            if (memcmp(got + i * pb, want + i * pb, pb) != 0) {                               \
                if (!bad++)                                                                   \
                    first = i;                                                                \
            }                                                                                 \
        CHECK_MSG(bad == 0, "%s fixed-base n=%zu%s: %zu points differ, the first at %zu", #G, \
                  n, mont ? " (Montgomery)" : "", bad, first);                                \
        printf("  %-14s n=%-8zu %s  %8.2f ms  %s\n", #G, n, mont ? "mont " : "canon", ms,     \
               bad || e ? "FAIL" : "ok");                                                     \
    done:                                                                                     \
        free(k);                                                                              \
        free(kc);                                                                             \
        free(want);                                                                           \
        free(got);                                                                            \
        free(scr_a);                                                                          \
    }                                                                                         \
    static void G##_test_fixed_base(size_t chunk)                                             \
    {                                                                                         \
        cuzk_errbuf eb = {{0}};                                                               \
        cuzk_gpu_fixed_base *fb = NULL;                                                       \
        double t0 = now_ms();                                                                 \
        cuzk_err e = cuzk_gpu_fixed_base_new(ctx, CURVE, GROUP, &fb, &eb);                    \
        CHECK_MSG(e == CUZK_OK, "%s fixed-base table: %s", #G, eb.msg);                       \
        if (e)                                                                                \
            return;                                                                           \
        printf("  %-14s table %.1f ms\n", #G, now_ms() - t0);                                 \
        G##_test_fb(fb, 1, 0);                                                                \
        G##_test_fb(fb, 1000, 1);                                                             \
        G##_test_fb(fb, chunk + 3, 0);                                               \
        G##_test_fb(fb, 5, 1); /* after the buffers grew */                                   \
        cuzk_gpu_fixed_base_free(fb);                                                         \
    }

FB_GROUP_TEST(bn254_g1, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G1)
FB_GROUP_TEST(bn254_g2, bn254_fr, CUZK_GPU_BN254, CUZK_GPU_G2)
FB_GROUP_TEST(bls12_381_g1, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G1)
FB_GROUP_TEST(bls12_381_g2, bls12_381_fr, CUZK_GPU_BLS12_381, CUZK_GPU_G2)

/* A key of 2^12 constraints generated with its points on the CPU and on GPU 0. */
static void test_keygen(cuzk_curve curve, cuzk_gen_profile prof)
{
    const char *cn = cuzk_curve_name(curve);
    cuzk_gen_params p = {0};
    p.curve = curve;
    p.profile = prof;
    p.n_constraints = 4000;
    p.seed = "gpu-setup";
    cuzk_pk *pk[2] = {NULL, NULL};
    cuzk_setup_info si[2];
    double ms[2];
    for (int k = 0; k < 2; k++) {
        cuzk_errbuf eb = {{0}};
        p.device = k ? 0 : -1;
        double t0 = now_ms();
        CHECK_MSG(cuzk_pk_generate(&pk[k], &p, &si[k], &eb) == CUZK_OK, "%s device %d: %s", cn,
                  p.device, eb.msg);
        ms[k] = now_ms() - t0;
        CHECK_MSG(!pk[k] || si[k].device == p.device, "%s: info.device %d for device %d", cn,
                  si[k].device, p.device);
    }
    if (pk[0] && pk[1]) {
        void *ptr[2][CUZK_PK_GPU_ARRAYS];
        size_t len[2][CUZK_PK_GPU_ARRAYS];
        cuzk_pk_gpu_arrays(pk[0], ptr[0], len[0]);
        cuzk_pk_gpu_arrays(pk[1], ptr[1], len[1]);
        static const char *names[5] = {"A", "B1", "C", "H", "B2"};
        for (int i = 0; i < 5; i++)
            CHECK_MSG(len[0][i] == len[1][i] && len[0][i] > 0 &&
                          memcmp(ptr[0][i], ptr[1][i], len[0][i]) == 0,
                      "%s key: %s differs between the CPU and the GPU", cn, names[i]);
        cuzk_vk v[2];
        cuzk_errbuf eb = {{0}};
        CHECK(cuzk_pk_vk(pk[0], &v[0], &eb) == CUZK_OK && cuzk_pk_vk(pk[1], &v[1], &eb) == 0);
        size_t g1 = curve == CUZK_CURVE_BN254 ? 64 : 96;
        CHECK_MSG(v[0].n_public == v[1].n_public &&
                      memcmp(v[0].ic, v[1].ic, (v[0].n_public + 1) * g1) == 0,
                  "%s key: IC differs between the CPU and the GPU", cn);
        cuzk_vk_clear(&v[0]);
        cuzk_vk_clear(&v[1]);
        printf("  %s %s key 2^12: CPU %.0f ms, GPU %.0f ms\n", cn, cuzk_gen_profile_name(prof),
               ms[0], ms[1]);
    }
    cuzk_pk_free(pk[0]);
    cuzk_pk_free(pk[1]);
}

int main(void)
{
    cuzk_ff_init();
    if (cuzk_gpu_device_count() == 0) {
        printf("gpu_fixed_base_test: no CUDA device (or no CUDA backend in this build): "
               "skipped\n");
        return tu_finish("gpu_fixed_base_test (skipped)");
    }
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_gpu_open(&ctx, 0, &eb);
    CHECK_MSG(e == CUZK_OK, "open: %s", eb.msg);
    if (e)
        return tu_finish("gpu_fixed_base_test");
    printf("gpu_fixed_base_test on %s\n", cuzk_gpu_name(ctx));
    /* a chunk and 3 more: chunks of 2^22 scalars in G1, 2^21 in G2 (fixed_base.cuh) */
    bn254_g1_test_fixed_base((size_t)1 << 22);
    bn254_g2_test_fixed_base((size_t)1 << 21);
    bls12_381_g1_test_fixed_base((size_t)1 << 22);
    bls12_381_g2_test_fixed_base((size_t)1 << 21);
    cuzk_gpu_close(ctx);
    test_keygen(CUZK_CURVE_BN254, CUZK_GEN_DENSE);
    test_keygen(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS);
    return tu_finish("gpu_fixed_base_test");
}
