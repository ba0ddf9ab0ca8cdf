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

#include "gpu/ec/curve.cuh"
#include "gpu/gpu_plan.h"
#include "gpu/ff/ldst.cuh"

namespace cuzk_gpu {

/* The product tree of the batch-affine accumulation (msm_kernels.cuh). A block of BA_TREE
 * threads takes BA_TREE K elements of a level, K by the level's size (tree_k): thread x the
 * elements e_j = x + j BA_TREE of its block's (coalesced), multiplied one after another into
 * its product, and the BA_TREE threads' products a binary tree in shared memory. The shared
 * tree's steps leave most of a block's threads idle (step s: s of them) and each waits on the
 * one before: with one element a thread, 7 dependent products up and 7 down on 128 elements.
 * A thread's own chain keeps every thread busy, and the levels shrink faster (two instead of
 * three or four), which halves a tree's time. The walk down takes each thread's inverse from
 * the tree, then its elements' from their prefix products as Montgomery's simultaneous
 * inversion does. */
#define BA_TREE 128
#define BA_TREE_KMAX 32
#define BA_TREE_ONE (16 * BA_TREE) /* the most elements a level takes in one block */
/* cuzk__gpu_tree_space (gpu_plan.h, plain C) counts BA_TREE_ONE as 16 * 128. */
static_assert(BA_TREE_ONE == 16 * 128, "cuzk__gpu_tree_space's constant is BA_TREE_ONE");

/* Elements a thread at a level of m elements: a level of up to BA_TREE_ONE elements in one
 * block; a larger one in chains just long enough that its blocks fit one wave of the device's
 * cap blocks at once (a block's time is its chain and the shared tree's steps, whether its wave
 * is full or not), at least 4 and at most BA_TREE_KMAX. A cap below 16 counts as 16, the least
 * for which cuzk__gpu_tree_space (gpu_plan.h) holds the tree. */
static inline unsigned tree_k(size_t m, unsigned cap)
{
    if (m <= BA_TREE_ONE)
        return m <= BA_TREE ? 1u : (unsigned)((m + BA_TREE - 1) / BA_TREE);
    if (cap < 16)
        cap = 16;
    const size_t per = (size_t)BA_TREE * cap, k = (m + per - 1) / per;
    return k < 4 ? 4u : k > BA_TREE_KMAX ? (unsigned)BA_TREE_KMAX : (unsigned)k;
}

/* The trees' product: the one of least latency, a tree kernel's chains being its time and its
 * registers plenty. BN254's Fp2 (8 limbs) as its two sums in one call with their rows
 * interleaved (mul_dual_pair_call; field.cuh's operator* calls mul_sub_call and mul_add_call
 * one after the other: the same rows, the same words); BLS12-381's Karatsuba with a0 b0 and
 * a1 b1 interleaved (mul_pair_call); Fp as operator*. */
template <class C> DI fe<C> tree_mul(const fe<C> &a, const fe<C> &b) { return a * b; }
template <class C> DI fe2<C> tree_mul(const fe2<C> &a, const fe2<C> &b)
{
    fe2<C> r;
    if constexpr (C::N == 8) {
        const fe_pair<C> t =
            mul_dual_pair_call(a.c0, b.c0, a.c1, mod_minus(b.c1), a.c0, b.c1, a.c1, b.c0);
        r.c0 = t.r0;
        r.c1 = t.r1;
    } else {
        const fe_pair<C> t = mul_pair_call(a.c0, b.c0, a.c1, b.c1);
        const fe<C> t2 = mul_call(add_nr(a.c0, a.c1), add_nr(b.c0, b.c1));
        r.c0 = t.r0 - t.r1;
        r.c1 = t2 - t.r0 - t.r1;
    }
    return r;
}

/* r0 = a0 b0 and r1 = a1 b1 (the results may alias the operands): Fp's two products with
 * their rows interleaved (mul2), Fp2's one tree_mul after the other. */
template <class C>
DI void tree_mul2(fe<C> &r0, const fe<C> &a0, const fe<C> &b0, fe<C> &r1, const fe<C> &a1,
                  const fe<C> &b1)
{
    mul2(r0, a0, b0, r1, a1, b1);
}
template <class C>
DI void tree_mul2(fe2<C> &r0, const fe2<C> &a0, const fe2<C> &b0, fe2<C> &r1, const fe2<C> &a1,
                  const fe2<C> &b1)
{
    const fe2<C> t = tree_mul(a0, b0);
    r1 = tree_mul(a1, b1);
    r0 = t;
}

/* Element i of a level of n elements, one past its end. */
template <class F> DI F tree_elem(const F *v, size_t n, size_t i)
{
    return i < n ? ld16v(v + i) : F::one();
}

/* The levels of the product tree over n elements at tr (n >= 1): level l starts at lv[l] and
 * holds ln[l] elements, level 0 being the elements themselves and each next level the
 * products of BA_TREE lk[l]-element groups of the one below (k_tree_up, lk[l] = tree_k(ln[l],
 * cap)), the last level one element, the root. Returns that last level's index, or -1 past 16
 * levels. tr needs tree_elems(n, cap). */
static inline size_t tree_next(size_t m, unsigned cap)
{
    const size_t span = (size_t)BA_TREE * tree_k(m, cap);
    return (m + span - 1) / span;
}
static inline size_t tree_elems(size_t n, unsigned cap)
{
    size_t e = 1;
    for (size_t m = n; m > 1; m = tree_next(m, cap))
        e += m;
    return e;
}
template <class F>
static int tree_levels(F *tr, size_t n, unsigned cap, F *lv[16], size_t ln[16], unsigned lk[16])
{
    int nl = 0;
    lv[0] = tr;
    ln[0] = n;
    while (ln[nl] > 1) {
        if (nl + 1 >= 16)
            return -1;
        lk[nl] = tree_k(ln[nl], cap);
        lv[nl + 1] = lv[nl] + ln[nl];
        ln[nl + 1] = tree_next(ln[nl], cap);
        nl++;
    }
    return nl;
}

/* The nodes k_tree_up keeps for k_tree_down: BA_TREE K per block of every level but the last
 * (at most the level's elements and BA_TREE K - 1 more): the shared tree's nodes 2 .. BA_TREE -
 * 1 at those indices, its leaves (each thread's product; K > 1, else they are the elements)
 * at BA_TREE + x, and thread x's prefix products e_0 .. e_(j-1) for j = 2 .. K - 1 at 2 BA_TREE
 * + (j - 2) BA_TREE + x. */
static inline size_t tree_nodes(size_t n, unsigned cap)
{
    size_t e = 0;
    for (size_t m = n; m > 1; m = tree_next(m, cap))
        e += tree_next(m, cap) * BA_TREE * tree_k(m, cap);
    return e;
}
/* Level l's kept nodes at nd[l] (nodes: tree_nodes(ln[0]) elements; nl, ln, lk from
 * tree_levels). */
template <class F>
static void tree_node_levels(F *nodes, const size_t ln[16], const unsigned lk[16], int nl,
                             F *nd[16])
{
    nd[0] = nodes;
    for (int l = 0; l < nl; l++)
        nd[l + 1] = nd[l] + ln[l + 1] * BA_TREE * lk[l];
}

/* out[b] = the product of block b's BA_TREE K elements of v (clipped to n); its nodes kept at
 * nodes + b BA_TREE K for k_tree_down (tree_nodes). */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_up(const F *v, size_t n, unsigned K, F *out,
                                                    F *nodes)
{
    __shared__ F nd[2 * BA_TREE];
    const unsigned x = threadIdx.x;
    const size_t i0 = (size_t)blockIdx.x * BA_TREE * K + x;
    F *const kept = nodes + (size_t)blockIdx.x * BA_TREE * K;
    F p = tree_elem(v, n, i0);
#pragma unroll 1
    for (unsigned j = 1; j < K; j++) {
        const size_t i = i0 + (size_t)j * BA_TREE;
        if (i >= n)
            break;
        if (j >= 2)
            st16(kept + (size_t)j * BA_TREE + x, p);
        p = tree_mul(p, ld16v(v + i));
    }
    if (K > 1)
        st16(kept + BA_TREE + x, p);
    nd[BA_TREE + x] = p;
    for (unsigned s = BA_TREE / 2; s >= 1; s >>= 1) {
        __syncthreads();
        if (x < s)
            nd[s + x] = tree_mul(nd[2 * (s + x)], nd[2 * (s + x) + 1]);
    }
    /* thread 0 wrote node 1 itself; the other nodes are read after the last barrier */
    if (x == 0)
        st16(out + blockIdx.x, nd[1]);
    __syncthreads();
    if (x >= 2)
        st16(kept + x, nd[x]);
}

/* Block b's BA_TREE K elements of v (clipped to n) replaced by their inverses, given the
 * inverse of their product at pinv[b]: the kept shared tree walked down (the inverse of a
 * child is its parent's inverse times its sibling; loading the nodes instead of building them
 * again saves a third of the multiplications), then each thread's elements backwards, r the
 * inverse of e_0 .. e_j: 1 / e_j = r (e_0 .. e_(j-1)), and r e_j the next r. */
template <class F>
__global__ void __launch_bounds__(BA_TREE) k_tree_down(F *v, size_t n, unsigned K,
                                                      const F *pinv, const F *nodes)
{
    __shared__ F nd[2 * BA_TREE];
    const unsigned x = threadIdx.x;
    const size_t i0 = (size_t)blockIdx.x * BA_TREE * K + x;
    const F *const kept = nodes + (size_t)blockIdx.x * BA_TREE * K;
    nd[BA_TREE + x] = K > 1 ? ld16v(kept + BA_TREE + x) : tree_elem(v, n, i0);
    if (x >= 2)
        nd[x] = ld16v(kept + x);
    else if (x == 0)
        nd[1] = ld16v(pinv + blockIdx.x);
    for (unsigned s = 1; s < BA_TREE; s <<= 1) {
        __syncthreads();
        if (x < s) {
            const unsigned k = s + x;
            const F a = nd[2 * k], b = nd[2 * k + 1], iv = nd[k];
            F ia, ib;
            tree_mul2(ia, iv, b, ib, iv, a);
            nd[2 * k] = ia;
            nd[2 * k + 1] = ib;
        }
    }
    __syncthreads();
    if (i0 >= n)
        return;
    F r = nd[BA_TREE + x];
    const size_t c = (n - i0 + BA_TREE - 1) / BA_TREE; /* this thread's elements */
#pragma unroll 1
    for (unsigned j = (unsigned)(c < K ? c : K) - 1; j >= 1; j--) {
        const size_t i = i0 + (size_t)j * BA_TREE;
        const F q = ld16v(j == 1 ? v + i0 : kept + (size_t)j * BA_TREE + x);
        const F e = ld16v(v + i);
        F ie;
        tree_mul2(ie, r, q, r, r, e);
        st16(v + i, ie);
    }
    st16(v + i0, r);
}

/* The bucket reduction: per window (bucket set) w, sum_j (j + 1) B_j over its B buckets, in
 * chunks of S (both powers of two, cnt = B / S chunks). With run_c and tri_c the plain and
 * the (k + 1)-weighted sums of chunk c's buckets c S + k, the window sum is
 *   sum_c tri_c + S sum_c c run_c = sum_c tri_c + S sum_b 2^b R_b,
 * R_b being the sum of run_c over the chunks c with bit b set (b < nb = log2 cnt). So no
 * chunk needs its own offset c S run_c (a double-and-add chain of ~30 operations per chunk,
 * a third of the reduction's work) and no serial group sums follow (16-addition chains on a
 * few threads: latency-bound):
 *   k_bucket_sums  run_c, tri_c, one thread per chunk (2 S additions);
 *   k_bit_sums     the first level of the trees: per window nb + 1 segments of len0 =
 *                  max(cnt / 4, 1) points, segment b < nb pairs of the run_c with bit b set,
 *                  segment nb quads of the tri_c;
 *   k_pair_sum     out[i] = in[2i] + in[2i + 1], until each segment is one point;
 * and the host finishes each window as TRI + 2^log2(S) (Horner over R_nb-1 .. R_0)
 * (cuzk__gpu_horner_bits), then Horner over the windows. */
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
         * points are live at a time, not three (in one loop, BLS12-381 G2's kernel spills
         * kilobytes). */
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
 * (cuzk__gpu_horner_bits). That serial chain of W * c doublings is slow on one GPU thread
 * whatever the MSM's size; the host's CPU code does it far faster. */
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
