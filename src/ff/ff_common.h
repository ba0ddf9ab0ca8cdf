/* Shared declarations of the field layer: the run-time choice of the multiplication kernel. */
#ifndef CUZK_FF_COMMON_H
#define CUZK_FF_COMMON_H

#include <stdint.h>

#if defined(__x86_64__) && defined(CUZK_ENABLE_ASM)
#define CUZK_FF_HAVE_ASM 1
#else
#define CUZK_FF_HAVE_ASM 0
#endif

/* Nonzero when the mulx/adcx/adox kernels are in use. Set by cuzk_ff_init() from CPUID;
 * tests flip it to check both paths give identical results. */
extern int cuzk__ff_use_asm;

#if CUZK_FF_HAVE_ASM
/* r = a*b/R mod p for n = 4 or 6 limbs, fully reduced; r may alias a or b. */
void cuzk__mul_mont_asm_4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                          const uint64_t p[4], uint64_t n0);
void cuzk__sqr_mont_asm_4(uint64_t r[4], const uint64_t a[4], const uint64_t p[4], uint64_t n0);
void cuzk__mul_mont_asm_6(uint64_t r[6], const uint64_t a[6], const uint64_t b[6],
                          const uint64_t p[6], uint64_t n0);
void cuzk__sqr_mont_asm_6(uint64_t r[6], const uint64_t a[6], const uint64_t p[6], uint64_t n0);
/* Fp2 = Fp[u]/(u^2 + 1) product with lazy reduction, r = c0 | c1 (n words each, 2n in all),
 * fully reduced; r may alias a or b. Plain pointers: the callers pass an Fp2 element's
 * address, whose first member GCC's bounds warnings would otherwise take as the region. */
void cuzk__fp2_mul_asm_4(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t p[4],
                         uint64_t n0);
void cuzk__fp2_mul_asm_6(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t p[6],
                         uint64_t n0);
#endif

/* Picks the multiplication kernel for this CPU (idempotent, thread-safe to call repeatedly
 * before threads start). Returns 1 when the assembly kernels were chosen. */
int cuzk_ff_init(void);

/* 1 if this CPU supports the BMI2 + ADX instructions the assembly kernels need. */
int cuzk_ff_cpu_has_adx(void);

#endif
