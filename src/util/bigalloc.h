/* Large working buffers on transparent huge pages (internal). */
#ifndef CUZK_UTIL_BIGALLOC_H
#define CUZK_UTIL_BIGALLOC_H

#include <stddef.h>

/* n bytes; from 4 MiB up 2 MiB-aligned and advised onto 2 MiB transparent huge pages
 * (madvise mode), so first touching it costs one fault per 2 MiB instead of one per 4 KiB
 * page (a few ms per 512 MiB buffer); smaller requests are plain malloc. Free with free().
 * NULL when out of memory. */
void *cuzk__big_alloc(size_t n);

#endif
