/* Fork-join parallel loops for the math layers (MSM, NTT, synthesis). */
#ifndef CUZK_PARALLEL_H
#define CUZK_PARALLEL_H

#include <stddef.h>

/* Threads used when a caller passes 0: CUZK_THREADS from the environment, else the number
 * of online CPUs, unless cuzk_set_num_threads() was called. */
unsigned cuzk_num_threads(void);
void cuzk_set_num_threads(unsigned n);

/* Runs fn(arg, i) for every i in [0, n) on up to nthreads threads (0 = cuzk_num_threads()),
 * the calling thread included; returns when all calls have returned. Indices are handed out
 * dynamically (atomic counter), so uneven tasks balance. */
void cuzk_parallel_for(size_t n, unsigned nthreads, void (*fn)(void *arg, size_t i), void *arg);

/* Same, but fn is called once per thread with its index t in [0, T) and T; for loops that
 * split a range into T contiguous chunks or keep per-thread scratch. Returns T used. */
unsigned cuzk_parallel_threads(unsigned nthreads, void (*fn)(void *arg, unsigned t, unsigned T),
                               void *arg);

#endif
