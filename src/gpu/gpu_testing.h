/* Internal to the CUDA backend and its tests: settings that reach, at a test's sizes, paths the
 * defaults take only for large MSMs. Never set by the library, the daemon or the commands. */
#ifndef CUZK_GPU_TESTING_H
#define CUZK_GPU_TESTING_H

#include <stdint.h>

#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int ba_every;       /* batch-affine accumulation for every MSM of every size, both groups */
    uint32_t slice_min; /* a floor on the level-1 slice length: 0 (none), a power of two 4-128 */
    uint64_t split_min; /* CUZK_GPU_SCALARS_ONCE MSMs of every group split from this many
                         * scalars: 0 (the default: CUZK_GPU_MSM_SPLIT_MIN), or at least 8 */
    uint64_t part_max;  /* resident MSMs in parts of at most this many points: 0 (the default:
                         * CUZK_GPU_MSM_PART_MAX), or at least 8 */
} cuzk__gpu_test_options;

/* Applies o to ctx for its next MSMs; a value out of range is refused (INVALID_ARGUMENT).
 * Without the CUDA backend: CUZK_NO_DEVICE. */
cuzk_err cuzk__gpu_test_set(cuzk_gpu_ctx *ctx, const cuzk__gpu_test_options *o,
                            cuzk_errbuf *eb);

#ifdef __cplusplus
}
#endif

#endif
