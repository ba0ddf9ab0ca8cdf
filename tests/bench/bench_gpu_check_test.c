/*
 * cuzk-bench-gpu's host-side pieces, without a GPU: its scalar kinds (--scalars) and the check
 * every MSM row's result goes through (G##_check: the result must be (sum_i s_i c_i) S for
 * point i = c_i S). Each case computes the MSM on the CPU independently of that formula (point
 * by point, scalar multiplication and addition on the bench's own points and scalars); the
 * check must accept it, and must reject it once one scalar of a finite point is changed. All
 * four groups, every scalar kind, with and without points at infinity (--inf-every).
 */
#define main cuzk_bench_gpu_main
#include "../../bench/cuzk-bench-gpu.c"
#undef main

#include "testutil.h"

#define CASE(G)                                                                               \
    static void case_##G(size_t base_n, size_t n, int kind, unsigned inf)                     \
    {                                                                                         \
        inf_every = inf;                                                                      \
        G##_affine *pts = G##_points(base_n, n);                                              \
        uint8_t *sc = malloc(32 * n);                                                         \
        fill_scalars(sc, n, kind);                                                            \
        G##_jac acc, t, p;                                                                    \
        G##_set_inf(&acc);                                                                    \
        size_t finite = n;                                                                    \
        for (size_t i = 0; i < n; i++) {                                                      \
            uint64_t k[4];                                                                    \
            memcpy(k, sc + 32 * i, 32);                                                       \
            if (G##_affine_is_inf(&pts[i]))                                                   \
                continue;                                                                     \
            finite = i;                                                                       \
            G##_from_affine(&p, &pts[i]);                                                     \
            G##_mul_limbs(&t, &p, k, 4);                                                      \
            G##_add(&acc, &acc, &t);                                                          \
        }                                                                                     \
        uint64_t out[36];                                                                     \
        memcpy(out, &acc, sizeof acc);                                                        \
        CHECK_MSG(G##_check(out, sc, n, base_n), "%s %s inf %u: not accepted", #G,            \
                  sk_name[kind], inf);                                                        \
        sc[32 * finite] ^= 4; /* the last finite point's scalar */                            \
        CHECK_MSG(!G##_check(out, sc, n, base_n), "%s %s inf %u: a changed scalar accepted", \
                  #G, sk_name[kind], inf);                                                    \
        free(pts);                                                                            \
        free(sc);                                                                             \
    }
CASE(bn254_g1)
CASE(bn254_g2)
CASE(bls12_381_g1)
CASE(bls12_381_g2)

int main(void)
{
    for (int kind = 0; kind < SK_N; kind++) {
        for (unsigned inf = 0; inf <= 6; inf += 3) {
            /* More points than base_n, so that the points repeat as in the bench. */
            case_bn254_g1(16, 64, kind, inf);
            case_bn254_g2(16, 40, kind, inf);
            case_bls12_381_g1(16, 48, kind, inf);
            case_bls12_381_g2(8, 24, kind, inf);
        }
    }
    /* The kinds themselves: equal is one value, few16 at most 16, u64 below 2^64. */
    uint8_t *s = malloc(32 * 256);
    fill_scalars(s, 256, SK_EQUAL);
    int same = 1;
    for (int i = 1; i < 256; i++)
        same &= !memcmp(s, s + 32 * i, 32);
    CHECK(same);
    fill_scalars(s, 256, SK_FEW16);
    int distinct = 0;
    for (int i = 0; i < 256; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !memcmp(s + 32 * i, s + 32 * j, 32);
        distinct += !seen;
    }
    CHECK_MSG(distinct > 1 && distinct <= 16, "few16: %d distinct values", distinct);
    fill_scalars(s, 256, SK_U64);
    int high = 0;
    for (int i = 0; i < 256; i++)
        for (int k = 8; k < 32; k++)
            high |= s[32 * i + k];
    CHECK(!high);
    free(s);
    return tu_finish("bench_gpu_check");
}
