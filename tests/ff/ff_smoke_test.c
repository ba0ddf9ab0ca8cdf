/* Smoke test of the field template: a few identities on every field, both kernels. */
#include "ff/ff.h"
#include "testutil.h"

#define SMOKE(F)                                                                          \
    do {                                                                                  \
        F##_t a, b, c, d, one;                                                            \
        F##_set_one(&one);                                                                \
        F##_from_u64(&a, 12345);                                                          \
        F##_from_u64(&b, 678);                                                            \
        F##_mul(&c, &a, &b);                                                              \
        F##_from_u64(&d, 12345ULL * 678);                                                 \
        CHECK(F##_eq(&c, &d));                                                            \
        F##_inv(&d, &a);                                                                  \
        F##_mul(&d, &d, &a);                                                              \
        CHECK(F##_eq(&d, &one));                                                          \
        char s[160];                                                                      \
        F##_to_dec(s, sizeof s, &c);                                                      \
        CHECK(strcmp(s, "8369910") == 0);                                                 \
    } while (0)

#include <string.h>

int main(void)
{
    for (int pass = 0; pass < 2; pass++) {
        cuzk__ff_use_asm = pass ? cuzk_ff_cpu_has_adx() : 0;
        SMOKE(bn254_fp);
        SMOKE(bn254_fr);
        SMOKE(bls12_381_fp);
        SMOKE(bls12_381_fr);
    }
    return tu_finish("ff_smoke");
}
