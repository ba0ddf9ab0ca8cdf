/*
 * 16-byte loads and stores of structs whose size is a multiple of 16 (points, xyzz, field
 * elements), shared by the MSM and NTT kernels. The host emulation tests define uint4 and
 * __ldg themselves.
 */
#ifndef CUZK_GPU_LDST_CUH
#define CUZK_GPU_LDST_CUH

#include "gpu/ff/field.cuh" /* DI */

namespace cuzk_gpu {

template <class T> DI T ld16(const T *p)
{
    static_assert(sizeof(T) % 16 == 0, "ld16");
    T r;
    const uint4 *s = (const uint4 *)p;
    uint4 *d = (uint4 *)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = __ldg(s + i);
    return r;
}
template <class T> DI T ld16v(const T *p) /* not through the read-only path (written earlier) */
{
    T r;
    const uint4 *s = (const uint4 *)p;
    uint4 *d = (uint4 *)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
    return r;
}
template <class T> DI void st16(T *p, const T &v)
{
    static_assert(sizeof(T) % 16 == 0, "st16");
    uint4 *d = (uint4 *)p;
    const uint4 *s = (const uint4 *)&v;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
}

} // namespace cuzk_gpu

#endif
