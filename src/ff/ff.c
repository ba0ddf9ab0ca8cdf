/* Field layer: run-time kernel choice and the out-of-line routines of each field. */
#include "ff/ff.h"

#include <pthread.h>

#if CUZK_FF_HAVE_ASM
#include <cpuid.h>
#endif

int cuzk__ff_use_asm = 0;

int cuzk_ff_cpu_has_adx(void)
{
#if CUZK_FF_HAVE_ASM
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, 0) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    /* EBX bit 8: BMI2 (mulx), bit 19: ADX (adcx/adox). */
    return ((b >> 8) & 1) && ((b >> 19) & 1);
#else
    return 0;
#endif
}

static pthread_once_t cuzk__ff_once = PTHREAD_ONCE_INIT;

static int cuzk__ff_chosen;

static void cuzk__ff_choose(void)
{
    cuzk__ff_chosen = cuzk_ff_cpu_has_adx();
    cuzk__ff_use_asm = cuzk__ff_chosen;
}

/* Chooses once per process (pthread_once): callers in many threads, e.g. every key load in
 * the daemon, never write the flag while provers read it. Tests that flip cuzk__ff_use_asm
 * themselves do so after this has run. */
int cuzk_ff_init(void)
{
    pthread_once(&cuzk__ff_once, cuzk__ff_choose);
    /* Written again only if a test flipped it; in a program the flag never changes after the
     * first call, so concurrent callers only read it. */
    if (cuzk__ff_use_asm != cuzk__ff_chosen)
        cuzk__ff_use_asm = cuzk__ff_chosen;
    return cuzk__ff_chosen;
}

/* Choose the kernel before main() too, so a program that never calls cuzk_ff_init() still
 * gets the fast path; calling it again is harmless. ff.o is always linked in, since every
 * inline multiplication reads cuzk__ff_use_asm. */
__attribute__((constructor)) static void cuzk__ff_auto_init(void) { cuzk_ff_init(); }

#define FF_NAME bn254_fp
#define FF_UPPER BN254_FP
#define FF_N 4
#define FF_HAS_SQRT 1
#include "ff/ff_tmpl_impl.h"

#define FF_NAME bn254_fr
#define FF_UPPER BN254_FR
#define FF_N 4
#include "ff/ff_tmpl_impl.h"

#define FF_NAME bls12_381_fp
#define FF_UPPER BLS12_381_FP
#define FF_N 6
#define FF_HAS_SQRT 1
#include "ff/ff_tmpl_impl.h"

#define FF_NAME bls12_381_fr
#define FF_UPPER BLS12_381_FR
#define FF_N 4
#include "ff/ff_tmpl_impl.h"
