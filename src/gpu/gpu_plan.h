/* The MSM's plan (gpu_plan.c, plain C): the window width for n points of nbits-bit scalars,
 * entries per level-1 slice, batch-affine or not, a set's fixed-base tables (copies t, s bits
 * apart) and one MSM's windows over such a set (width c, g bucket sets). Internal to the CUDA
 * backend (gpu_impl.cuh's host code, cuzk_gpu_scratch_estimate) and its tests. */
#ifndef CUZK_GPU_PLAN_H
#define CUZK_GPU_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int cuzk__gpu_choose_c(size_t n, int nbits);
uint32_t cuzk__gpu_slice_len(size_t M);
int cuzk__gpu_ba_on(int mode, int g2, int g1_pref, size_t M);
void cuzk__gpu_tab_plan(size_t n, int nbits, int max_copies, int *c, int *t, int *s);
void cuzk__gpu_msm_plan(size_t n2, int nbits, int t, int s, int *c, int *g);

#ifdef __cplusplus
}
#endif

#endif
