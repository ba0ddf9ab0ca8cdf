#include "util/bigalloc.h"

#include <stdlib.h>
#include <sys/mman.h>

void *cuzk__big_alloc(size_t n)
{
    const size_t huge = (size_t)2 << 20;
    if (n < 2 * huge)
        return malloc(n ? n : 1);
    size_t rn = (n + huge - 1) & ~(huge - 1);
    void *p = NULL;
    if (posix_memalign(&p, huge, rn))
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, rn, MADV_HUGEPAGE); /* advice only: without THP it is 4 KiB pages */
#endif
    return p;
}
