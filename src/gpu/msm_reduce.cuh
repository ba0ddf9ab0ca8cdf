/*
 * The MSM's kernels with block synchronisation or after the accumulation: the batch-affine
 * accumulation's product tree (k_tree_up, k_tree_down; the host inverts the roots), a split
 * MSM's bucket merge (k_add_into), the bucket reduction (k_bucket_sums, k_bit_sums,
 * k_pair_sum) and its sums to Jacobian (k_to_jac).
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

/* The node trees' space for the levels of tree_levels over n elements: one tree of BA_TREE
 * nodes (node 0 unused) per block of every level but the last. */
static inline size_t tree_nodes(size_t n)
{
    size_t e = 0;
    for (size_t m = n; m > 1; m = (m + BA_TREE - 1) / BA_TREE)
        e += (m + BA_TREE - 1) / BA_TREE * BA_TREE;
    return e;
}

/* out[b] = the product of v[b * BA_TREE .. + BA_TREE) (clipped to n); the block's node tree
 * (nodes 2 .. BA_TREE - 1, the products below the root) kept at nodes + b * BA_TREE for
 * k_tree_down. */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_up(const F *v, size_t n, F *out, F *nodes)
{
    __shared__ F nd[2 * BA_TREE];
    const unsigned x = threadIdx.x;
    tree_build(nd, v, n);
    if (x == 0)
        st16(out + blockIdx.x, nd[1]);
    __syncthreads();
    if (x >= 2)
        st16(nodes + (size_t)blockIdx.x * BA_TREE + x, nd[x]);
}

/* v[b * BA_TREE .. + BA_TREE) (clipped to n) replaced by their inverses, given the inverse of
 * their product at pinv[b]: the node tree k_tree_up kept, walked down (the inverse of a child
 * is its parent's inverse times its sibling). Loading the nodes instead of building them again
 * saves a third of the multiplications (BLS12-381 G2's k_tree_down was 2.8 ms per 2^24 MSM). */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_down(F *v, size_t n, const F *pinv,
                                                      const F *nodes)
{
    __shared__ F nd[2 * BA_TREE];
    const unsigned x = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * BA_TREE + x;
    nd[BA_TREE + x] = i < n ? ld16v(v + i) : F::one();
    if (x >= 2)
        nd[x] = ld16v(nodes + (size_t)blockIdx.x * BA_TREE + x);
    else if (x == 0)
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

/* The bucket reduction: per window (bucket set) w, sum_j (j + 1) B_j over its B buckets, in
 * chunks of S (both powers of two, cnt = B / S chunks). With run_c and tri_c the plain and
 * the (k + 1)-weighted sums of chunk c's buckets c S + k, the window sum is
 *   sum_c tri_c + S sum_c c run_c = sum_c tri_c + S sum_b 2^b R_b,
 * R_b being the sum of run_c over the chunks c with bit b set (b < nb = log2 cnt). So no
 * chunk needs its own offset c S run_c (a double-and-add chain of ~30 operations per chunk,
 * 30% of the old reduction's work) and no serial group sums follow (their 16-addition chains
 * ran on a few threads: latency-bound, 3 ms for a BLS12-381 G2 MSM, ncu 2026-12-02):
 *   k_bucket_sums  run_c, tri_c, one thread per chunk (2 S additions);
 *   k_bit_sums     the first level of the trees: per window nb + 1 segments of len0 =
 *                  max(cnt / 4, 1) points, segment b < nb pairs of the run_c with bit b set,
 *                  segment nb quads of the tri_c;
 *   k_pair_sum     out[i] = in[2i] + in[2i + 1], until each segment is one point;
 * and the host finishes each window as TRI + 2^log2(S) (Horner over R_nb-1 .. R_0)
 * (cuzk__gpu_horner_bits), then the windows as before. */
template <class F>
__global__ void k_bucket_sums(xyzz<F> *buckets, int W, uint32_t B, uint32_t S,
                              xyzz<F> *run_out, xyzz<F> *tri_out)
{
    const uint32_t cnt = B / S;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (size_t)W * cnt)
        return;
    xyzz<F> *bk = buckets + t * S; /* window t / cnt, chunk t % cnt; dead after this */
    xyzz<F> run = xyzz<F>::inf(), tri = xyzz<F>::inf();
    if (sizeof(F) >= 64) {
        /* G2: the running sums stored over the chunk's buckets, then summed, so that two
         * points are live at a time, not three (ptxas, BLS12-381 G2: 2 KB of spill stores and
         * 7.3 KB of spill loads in the one loop below). */
        for (int j = (int)S - 1; j >= 0; j--) {
            xyzz_add(run, ld16v(bk + j));
            st16(bk + j, run);
        }
        st16(run_out + t, run);
        for (int j = (int)S - 1; j >= 0; j--)
            xyzz_add(tri, ld16v(bk + j));
    } else {
        for (int j = (int)S - 1; j >= 0; j--) {
            xyzz_add(run, ld16v(bk + j));
            xyzz_add(tri, run);
        }
        st16(run_out + t, run);
    }
    st16(tri_out + t, tri);
}

/* The k-th chunk index with bit sg set. */
DI uint32_t bit_chunk(uint32_t k, uint32_t sg)
{
    return ((k >> sg) << (sg + 1)) | (1u << sg) | (k & ((1u << sg) - 1));
}

/* Thread t of W (nb + 1) len0: window w, segment sg, element i (see k_bucket_sums). */
template <class F>
__global__ void k_bit_sums(const xyzz<F> *run, const xyzz<F> *tri, int W, uint32_t cnt, int nb,
                           uint32_t len0, xyzz<F> *out)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t per = (size_t)(nb + 1) * len0;
    if (t >= (size_t)W * per)
        return;
    const uint32_t w = (uint32_t)(t / per), sg = (uint32_t)((t % per) / len0),
                   i = (uint32_t)(t % len0);
    xyzz<F> acc = xyzz<F>::inf();
    if ((int)sg < nb) {
        /* The k-th chunk with bit sg set (k < cnt / 2), k = 2i, 2i + 1. */
        for (uint32_t k = 2 * i; k < 2 * i + 2 && k < cnt / 2; k++)
            xyzz_add(acc, ld16v(run + (size_t)w * cnt + bit_chunk(k, sg)));
    } else {
        for (uint32_t c = 4 * i; c < 4 * i + 4 && c < cnt; c++)
            xyzz_add(acc, ld16v(tri + (size_t)w * cnt + c));
    }
    st16(out + t, acc);
}

/* a[i] += b[i] for i < n (a split MSM's later part's ones bucket into the first's). */
template <class F> __global__ void k_add_into(xyzz<F> *a, const xyzz<F> *b, size_t n)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    xyzz<F> x = ld16v(a + t);
    xyzz_add(x, ld16v(b + t));
    st16(a + t, x);
}

template <class F> __global__ void k_pair_sum(const xyzz<F> *in, size_t n_out, xyzz<F> *out)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_out)
        return;
    xyzz<F> a = ld16v(in + 2 * t);
    xyzz_add(a, ld16v(in + 2 * t + 1));
    st16(out + t, a);
}

/* Each of the n sums (the windows' bit sums and tri sums, k_bit_sums) and the ones bucket
 * (t == n) to Jacobian, one thread each; the host finishes with Horner's rule
 * (cuzk__gpu_horner_bits). That serial chain of W * c doublings took one GPU thread 9 ms for a
 * BLS12-381 G1 MSM of any size (ncu, 2026-11-30); the host's CPU code does it in well under a
 * millisecond. */
template <class F>
__global__ void k_to_jac(const xyzz<F> *win, int W, const xyzz<F> *ones, F *out) /* W: the n */
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
