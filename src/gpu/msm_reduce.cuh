/*
 * The MSM's kernels with block synchronisation or after the accumulation: the batch-affine
 * accumulation's product tree (k_tree_up, k_tree_down; the host inverts the roots), the bucket
 * reduction (k_bucket_reduce, k_group_sum) and the window sums to Jacobian (k_to_jac).
 * Included by gpu_impl.cuh; tests/gpu/msm_emu.cpp also compiles them for the host (a block's
 * threads as coroutines, tests/gpu/emu_cuda.h) and checks them in CI: the tree's inverses
 * against the elements, the reduction against sums of multiples.
 */
#ifndef CUZK_GPU_MSM_REDUCE_CUH
#define CUZK_GPU_MSM_REDUCE_CUH

#include "gpu/curve.cuh"
#include "gpu/ldst.cuh"

namespace cuzk_gpu {

/* The product tree of the batch-affine accumulation (msm_kernels.cuh): BA_TREE children per
 * node, one block per node, the tree in shared memory. */
#define BA_TREE 128

/* Block b's node tree over v[b * BA_TREE .. + BA_TREE) (clipped to n, padded with one) in
 * nd: leaves at BA_TREE + x, node k the product of nodes 2k and 2k + 1, the root at 1.
 * Thread x's own writes to node 1 are visible to it without a further barrier. */
template <class F> DI void tree_build(F *nd, const F *v, size_t n)
{
    const unsigned x = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BA_TREE + x;
    nd[BA_TREE + x] = i < n ? ld16v(v + i) : F::one();
    for (unsigned s = BA_TREE / 2; s >= 1; s >>= 1) {
        __syncthreads();
        if (x < s)
            nd[s + x] = nd[2 * (s + x)] * nd[2 * (s + x) + 1];
    }
}

/* The levels of the product tree over n elements at tr (n >= 1): level l starts at lv[l] and
 * holds ln[l] elements, level 0 being the elements themselves and each next level the
 * products of BA_TREE-element groups of the one below (k_tree_up), the last level one element,
 * the root. Returns that last level's index, or -1 past 16 levels. tr needs tree_elems(n). */
static inline size_t tree_elems(size_t n)
{
    size_t e = 1;
    for (size_t m = n; m > 1; m = (m + BA_TREE - 1) / BA_TREE)
        e += m;
    return e;
}
template <class F> static int tree_levels(F *tr, size_t n, F *lv[16], size_t ln[16])
{
    int nl = 0;
    lv[0] = tr;
    ln[0] = n;
    while (ln[nl] > 1) {
        if (nl + 1 >= 16)
            return -1;
        lv[nl + 1] = lv[nl] + ln[nl];
        ln[nl + 1] = (ln[nl] + BA_TREE - 1) / BA_TREE;
        nl++;
    }
    return nl;
}

/* out[b] = the product of v[b * BA_TREE .. + BA_TREE) (clipped to n). */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_up(const F *v, size_t n, F *out)
{
    __shared__ F nd[2 * BA_TREE];
    tree_build(nd, v, n);
    if (threadIdx.x == 0)
        st16(out + blockIdx.x, nd[1]);
}

/* v[b * BA_TREE .. + BA_TREE) (clipped to n) replaced by their inverses, given the inverse of
 * their product at pinv[b]: the node tree of k_tree_up, rebuilt, then walked down (the
 * inverse of a child is its parent's inverse times its sibling). */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_down(F *v, size_t n, const F *pinv)
{
    __shared__ F nd[2 * BA_TREE];
    const unsigned x = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BA_TREE + x;
    tree_build(nd, v, n);
    __syncthreads();
    if (x == 0)
        nd[1] = ld16v(pinv + blockIdx.x);
    for (unsigned s = 1; s < BA_TREE; s <<= 1) {
        __syncthreads();
        if (x < s) {
            const unsigned k = s + x;
            const F a = nd[2 * k], b = nd[2 * k + 1], iv = nd[k];
            nd[2 * k] = iv * b;
            nd[2 * k + 1] = iv * a;
        }
    }
    __syncthreads();
    if (i < n)
        st16(v + i, nd[BA_TREE + x]);
}

/* Per (window, chunk of S buckets): sum_{b in chunk} b * B_b. Bucket key index j holds digit
 * magnitude j + 1. */
template <class F>
__global__ void k_bucket_reduce(const xyzz<F> *buckets, int W, uint32_t B, uint32_t S,
                                xyzz<F> *out)
{
    uint32_t nch = B / S;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)W * nch)
        return;
    uint32_t w = t / nch, ch = t % nch;
    const xyzz<F> *bk = buckets + (size_t)w * B + (size_t)ch * S;
    xyzz<F> run = xyzz<F>::inf(), tri = xyzz<F>::inf();
    for (int j = (int)S - 1; j >= 0; j--) {
        xyzz_add(run, ld16v(bk + j));
        xyzz_add(tri, run);
    }
    /* tri = sum (j + 1) B_j over the chunk; add (ch * S) * run for the chunk's offset. */
    uint32_t m = ch * S;
    xyzz<F> off = xyzz<F>::inf();
    for (int bit = 31; bit >= 0; bit--) {
        xyzz_dbl(off);
        if ((m >> bit) & 1)
            xyzz_add(off, run);
    }
    xyzz_add(tri, off);
    st16(out + t, tri);
}

/* out[w * ng + g] = sum of in[w * cnt + g * G .. + G) (clipped to cnt). */
template <class F>
__global__ void k_group_sum(const xyzz<F> *in, int W, uint32_t cnt, uint32_t G, xyzz<F> *out)
{
    uint32_t ng = (cnt + G - 1) / G;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)W * ng)
        return;
    uint32_t w = t / ng, g = t % ng;
    xyzz<F> acc = xyzz<F>::inf();
    for (uint32_t i = g * G; i < cnt && i < g * G + G; i++)
        xyzz_add(acc, ld16v(in + (size_t)w * cnt + i));
    st16(out + t, acc);
}

/* Each window sum (t < W) and the ones bucket (t == W) to Jacobian, one thread each; the host
 * finishes with Horner's rule (cuzk__gpu_horner). That serial chain of W * c doublings took one
 * GPU thread 9 ms for a BLS12-381 G1 MSM of any size (ncu, 2026-11-30); the host's CPU code
 * does it in well under a millisecond. */
template <class F>
__global__ void k_to_jac(const xyzz<F> *win, int W, const xyzz<F> *ones, F *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t > W)
        return;
    xyzz<F> p;
    if (t < W)
        p = ld16v(win + t);
    else if (ones)
        p = ld16v(ones);
    else
        p = xyzz<F>::inf();
    F j[3];
    xyzz_to_jacobian(j, p);
    out[3 * t] = canon(j[0]); /* for the host: canonical (field.cuh) */
    out[3 * t + 1] = canon(j[1]);
    out[3 * t + 2] = canon(j[2]);
}

} // namespace cuzk_gpu

#endif
