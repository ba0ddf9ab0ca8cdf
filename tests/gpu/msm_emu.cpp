/*
 * The MSM's kernels (src/gpu/msm/msm_kernels.cuh, msm_reduce.cuh) compiled for the host
 * (CUZK_GPU_HOST_EMU: the PTX carry primitives emulated as in field_emu.cpp; tests/gpu/emu_cuda.h
 * runs a block's threads one after another, or as coroutines where the kernel synchronises), so CI
 * checks them without a GPU: for every group (BN254 / BLS12-381, G1 / G2), slice length and
 * chunking, k_ba_pass_a + the product tree (k_tree_up, the root inverted here, k_tree_down from the
 * node trees k_tree_up kept: every slice product times its inverse is one) + k_ba_pass_b must leave
 * exactly the buckets and carries k_accum1 leaves, as points. The entries cover long runs across
 * slices, runs of one, points at infinity, the same point twice in a row (doubling) and a point
 * beside its negation (cancellation), and the ones path (every key 0). Both then run through the
 * carry levels (k_accumk) and must equal each bucket's plain sum; in the chunked runs every
 * kernel adds into buckets that already hold values (a split MSM's later part), so the sums must
 * be those values plus the plain sums. Also the bucket reduction
 * (k_bucket_sums, k_bit_sums, k_pair_sum, k_to_jac) against sum (j + 1) B_j added plainly; a split
 * MSM's ones merge (k_add_into); the scalars' classification and range check (k_prep); the signed
 * digits of every window plan (k_digits, with and without fixed-base tables) against the scalars,
 * and the tables (k_tables) against repeated doubling; the predicate of the drop of points at
 * infinity (inf_val) against worked cases. Built and run by msm_emu_test.sh.
 */
#include "emu_cuda.h" /* first: the CUDA shims */

#include <stdio.h>
#include <string.h>

#include <string>

#include "ec/ec_params.h"
#include "gpu/ff/field.cuh"
#include "gpu/msm/ba_halves.cuh"
#include "gpu/msm/msm_kernels.cuh"
#include "gpu/msm/msm_reduce.cuh"
#include "emu_fields.h"

using namespace cuzk_gpu;

/* Generators as src/ec stores them (Montgomery, 64-bit limbs). */
struct w4 {
    uint64_t l[4];
};
struct w6 {
    uint64_t l[6];
};
struct w4x2 {
    w4 c0, c1;
};
struct w6x2 {
    w6 c0, c1;
};
static const w4 bn_g1x = BN254_G1_GEN_X, bn_g1y = BN254_G1_GEN_Y;
static const w4x2 bn_g2x = BN254_G2_GEN_X, bn_g2y = BN254_G2_GEN_Y;
static const w6 bls_g1x = BLS12_381_G1_GEN_X, bls_g1y = BLS12_381_G1_GEN_Y;
static const w6x2 bls_g2x = BLS12_381_G2_GEN_X, bls_g2y = BLS12_381_G2_GEN_Y;

template <class C, class W> static fe<C> from_w(const W &w)
{
    fe<C> r;
    for (int i = 0; i < C::N; i++)
        r.v[i] = LIMB32(w.l, i);
    return r;
}
template <class C, class W> static fe2<C> from_w2(const W &w)
{
    fe2<C> r;
    r.c0 = from_w<C>(w.c0);
    r.c1 = from_w<C>(w.c1);
    return r;
}

static uint64_t rs = 0x2545f4914f6cdd1dull;
static uint32_t rnd(uint32_t n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static long checks, failed;
static void check(bool ok, const char *what, const char *grp, uint32_t L, size_t i)
{
    checks++;
    if (!ok && failed++ < 10)
        printf("MISMATCH %s: %s, L = %u, at %zu\n", what, grp, L, i);
}

template <class F> static bool same_point(const xyzz<F> &a, const xyzz<F> &b)
{
    if (a.is_inf() || b.is_inf())
        return a.is_inf() && b.is_inf();
    return a.x * b.zz == b.x * a.zz && a.y * b.zzz == b.y * a.zzz;
}

template <class F> static affine<F> to_affine(const xyzz<F> &p)
{
    affine<F> a;
    a.x = p.x * inv(p.zz);
    a.y = p.y * inv(p.zzz);
    return a;
}

/* Runs fn(t) for the threads 0 .. T-1 of 64-thread blocks. */
template <class Fn> static void launch(size_t T, Fn fn)
{
    blockDim.x = ACC_THREADS;
    for (size_t t = 0; t < T; t++) {
        blockIdx.x = (unsigned)(t / ACC_THREADS);
        threadIdx.x = (unsigned)(t % ACC_THREADS);
        fn();
    }
}

/* G2's k_ba_pairs_h (ba_halves.cuh: two lanes a slice) on copies of k_ba_pairs's inputs, its
 * lanes as coroutines (they meet at each shuffle); halves_check: every word it wrote must be
 * k_ba_pairs's. G1: nothing to run. */
template <class F> struct halves_out {
    bool ran = false;
    std::vector<F> pre, tr;
    std::vector<uint8_t> npre;
    std::vector<affine<F>> psum;
    std::vector<uint64_t> masks;
};
template <class F, bool ALL_ZERO>
static halves_out<F> halves_run(const uint32_t *kp, const std::vector<uint32_t> &vals,
                                size_t M, uint32_t L, size_t t0, size_t tc,
                                const std::vector<affine<F>> &pts, const std::vector<F> &pre,
                                const std::vector<F> &tr, const std::vector<uint8_t> &npre,
                                const std::vector<affine<F>> &psum,
                                const std::vector<uint64_t> &masks)
{
    typedef typename fe2_base<F>::type C2;
    halves_out<F> o;
    if constexpr (!std::is_void<C2>::value) {
        o = {true, pre, tr, npre, psum, masks};
        launch_block((2 * tc + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
            k_ba_pairs_h<C2, ALL_ZERO>(kp, vals.data(), M, L, t0, tc, pts.data(), o.pre.data(),
                                       o.tr.data(), o.npre.data(), o.psum.data(),
                                       o.masks.data());
        });
    }
    return o;
}
template <class V> static bool same_words(const V &a, const V &b)
{
    return a.size() == b.size() && !memcmp(a.data(), b.data(), a.size() * sizeof(a[0]));
}
template <class F>
static void halves_check(const halves_out<F> &o, const std::vector<F> &pre,
                         const std::vector<F> &tr, const std::vector<uint8_t> &npre,
                         const std::vector<affine<F>> &psum, const std::vector<uint64_t> &masks,
                         const char *grp, uint32_t L, size_t t0)
{
    if (!o.ran)
        return;
    check(same_words(o.pre, pre), "halves: quads' prefixes", grp, L, t0);
    check(same_words(o.tr, tr), "halves: products", grp, L, t0);
    check(same_words(o.npre, npre), "halves: quad counts", grp, L, t0);
    check(same_words(o.psum, psum), "halves: pair sums", grp, L, t0);
    check(same_words(o.masks, masks), "halves: masks", grp, L, t0);
}

/* G2's k_ba_quads_h (ba_halves.cuh), or with passb its
 * k_ba_pass_b_h, on copies of the one-lane kernel's inputs and outputs, its lanes as coroutines;
 * every word it writes must be that kernel's (the quads' sums over the pair sums, the buckets,
 * the carries). G1: nothing to run. */
template <class F> struct quads_h_out {
    bool ran = false;
    std::vector<affine<F>> psum;
    std::vector<xyzz<F>> b, c;
    std::vector<uint32_t> k;
};
template <class F, bool ALL_ZERO>
static quads_h_out<F>
quads_h_run(const uint32_t *kp, const std::vector<uint32_t> &vals, size_t M,
            uint32_t L, size_t t0, size_t tc, const std::vector<affine<F>> &pts,
            const std::vector<F> &pre, const std::vector<F> &tr, const std::vector<uint8_t> &npre,
            const std::vector<affine<F>> &psum, const std::vector<uint64_t> &masks,
            const std::vector<xyzz<F>> &b, const std::vector<uint32_t> &k,
            const std::vector<xyzz<F>> &c, bool into, bool passb = false)
{
    typedef typename fe2_base<F>::type C2;
    quads_h_out<F> o;
    if constexpr (!std::is_void<C2>::value) {
        o = {true, psum, b, c, k};
        launch_block((2 * tc + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
            if (passb)
                k_ba_pass_b_h<C2, ALL_ZERO>(
                    kp, vals.data(), M, L, t0, tc, pts.data(), pre.data(), tr.data(),
                    npre.data(), o.b.data(), o.k.data(), o.c.data(), into);
            else
                k_ba_quads_h<C2, ALL_ZERO>(
                    kp, vals.data(), M, L, t0, tc, pts.data(), pre.data(), tr.data(),
                    npre.data(), o.psum.data(), masks.data(), o.b.data(), o.k.data(),
                    o.c.data(), into);
        });
    }
    return o;
}

/* The product tree's inverses as gpu_impl.cuh's tree_inverse makes them, in tr's
 * cuzk__gpu_tree_space(n) elements: up (k_tree_up, a block's threads as coroutines), the root
 * inverted (the host's src/ff there, field.cuh's inv here), down from the kept nodes, the
 * nodes' space poisoned first (k_tree_down must read only what k_tree_up wrote there). tr[0 ..
 * n) become their inverses; returns tree_levels's count. */
template <class F> static int tree_inverse_emu(F *tr, size_t n, unsigned cap)
{
    F *lv[16], *nd[16];
    size_t ln[16];
    unsigned lk[16];
    const int nl = tree_levels(tr, n, cap, lv, ln, lk);
    if (nl < 0)
        return nl;
    F *const nodes = tr + tree_elems(n, cap);
    for (size_t k = 0; k < tree_nodes(n, cap); k++)
        nodes[k] = F::zero();
    tree_node_levels(nodes, ln, lk, nl, nd);
    for (int l = 0; l < nl; l++)
        launch_block(ln[l + 1], BA_TREE,
                     [&] { k_tree_up<F>(lv[l], ln[l], lk[l], lv[l + 1], nd[l]); });
    *lv[nl] = inv(*lv[nl]);
    for (int l = nl - 1; l >= 0; l--)
        launch_block(ln[l + 1], BA_TREE,
                     [&] { k_tree_down<F>(lv[l], ln[l], lk[l], lv[l + 1], nd[l]); });
    return nl;
}

/* The product tree alone over n nonzero elements (products of two points' x coordinates), n
 * around the sizes where a thread takes one element, several, or a level is one block, two
 * (tree_k): every element times its inverse must be one, the levels as many as the sizes say.
 * deep: also 70001 elements with a cap of 64 blocks (nine a thread, 61 blocks) and 63495 with a
 * cap of 16 (the longest chains, 32 a thread, 16 blocks). And the space bound
 * (cuzk__gpu_tree_space) for every size up to 20000 and samples up to 2^37, caps 0 (taken as
 * 16) and 16 on. */
template <class F>
static void trees(const char *grp, const std::vector<affine<F>> &pts, size_t np, bool deep)
{
    struct {
        size_t n;
        unsigned cap;
        int levels;
    } cases[] = {{1, 0, 0},
                 {2, 0, 1},
                 {3, 528, 1},
                 {BA_TREE - 1, 0, 1},
                 {BA_TREE, 0, 1},
                 {BA_TREE + 1, 528, 1},
                 {2 * BA_TREE + 3, 0, 1},
                 {BA_TREE_ONE - 1, 0, 1},
                 {BA_TREE_ONE, 64, 1},
                 {BA_TREE_ONE + 1, 0, 2},
                 {4 * BA_TREE * 5 + 77, 528, 2},
                 {70001, 64, 2},
                 {(size_t)BA_TREE * 16 * 31 + 7, 16, 2}};
    for (const auto &c : cases) {
        if (c.n > 20000 && !deep)
            continue;
        std::vector<F> e(cuzk__gpu_tree_space(c.n)), orig(c.n);
        for (size_t i = 0; i < c.n; i++)
            e[i] = orig[i] = pts[rnd((uint32_t)np)].x * pts[rnd((uint32_t)np)].x;
        const int nl = tree_inverse_emu(e.data(), c.n, c.cap);
        check(nl == c.levels, "product tree: levels", grp, (uint32_t)nl, c.n);
        size_t bad = 0;
        for (size_t i = 0; i < c.n; i++)
            bad += !(orig[i] * e[i] == F::one());
        check(bad == 0, "product tree: element times inverse", grp, (uint32_t)bad, c.n);
    }
    if (!deep)
        return;
    static const unsigned caps[] = {0, 16, 17, 64, 132, 264, 528, 1056, 4096};
    for (unsigned cap : caps) {
        size_t over = 0, worst = 0;
        for (size_t k = 0; k < 20000 + 2000; k++) {
            const size_t n = k < 20000 ? k + 1 : 20000 + ((size_t)rnd(1u << 30) * 128 + rnd(128));
            if (tree_elems(n, cap) + tree_nodes(n, cap) > cuzk__gpu_tree_space(n)) {
                over++;
                worst = n;
            }
        }
        check(over == 0, "product tree: space bound", grp, cap, worst);
    }
}

template <class F, bool ALL_ZERO>
static void run(const char *grp, const std::vector<affine<F>> &pts, uint32_t L, size_t chunk,
                bool into = false)
{
    const size_t npts = pts.size();
    const uint32_t NB = 40;
    /* Sorted entries: runs of varied lengths over increasing bucket keys, then a SENT tail. */
    std::vector<uint32_t> keys, vals;
    static const uint32_t lens[] = {1, 2, 3, 5, 17, 64, 200};
    for (uint32_t k = 0; k < NB; k++) {
        uint32_t len = ALL_ZERO ? 3000 / NB : lens[rnd(7)];
        for (uint32_t j = 0; j < len; j++) {
            uint32_t v = rnd((uint32_t)npts) | (ALL_ZERO ? 0 : rnd(2) << 31);
            uint32_t r = rnd(16);
            /* In every fourth bucket most points repeat the one two entries back (negated in
             * half of those buckets): pairs with equal sums, or opposite ones, which must not
             * make a quad (their sums' x coordinates are equal). */
            const bool rep = k % 4 == 3 && j >= 2 && r < 10;
            if (rep)
                v = vals[vals.size() - 2] ^ (!ALL_ZERO && k % 8 == 7 ? 0x80000000u : 0u);
            else if (j && r == 0)
                v = vals.back(); /* the same point again: a doubling */
            else if (j && r == 1 && !ALL_ZERO)
                v = vals.back() ^ 0x80000000u; /* its negation: cancels */
            keys.push_back(ALL_ZERO ? 0 : k);
            vals.push_back(v);
        }
    }
    for (int j = 0; j < (ALL_ZERO ? 0 : 37); j++) {
        keys.push_back(SENT);
        vals.push_back(0);
    }
    const size_t M = keys.size(), T = (M + L - 1) / L;
    const uint32_t *kp = ALL_ZERO ? NULL : keys.data();
    const uint32_t nb = ALL_ZERO ? 1 : NB;

    std::vector<xyzz<F>> b_start(nb, xyzz<F>::inf());
    if (into)
        for (uint32_t k = 0; k < nb; k++)
            if (k % 3) {
                xyzz_add_affine(b_start[k], pts[rnd((uint32_t)npts)]);
                xyzz_add_affine(b_start[k], pts[rnd((uint32_t)npts)]);
            }
    std::vector<xyzz<F>> b_ref = b_start, c_ref(T);
    std::vector<uint32_t> k_ref(T);
    launch(T, [&] {
        k_accum1<F, ALL_ZERO>(kp, vals.data(), M, L, pts.data(), b_ref.data(), k_ref.data(),
                              c_ref.data(), into);
    });
    /* Batch-affine, in chunks of `chunk` slices, each chunk's slice products inverted as
     * gpu_impl.cuh's accumulate does it (tree_inverse): up the product tree (k_tree_up, a
     * block's threads as coroutines), the root inverted (the host's src/ff there, field.cuh's
     * inv here), down. With pairs (k_ba_pass_b) and with quads (k_ba_pairs, a second tree over
     * the quads' products, k_ba_quads); side 0 of bs / cs / ks is k_accum1's. */
    typedef typename fe2_base<F>::type C2; /* G2's Fp (void for G1) */
    constexpr bool G2 = !std::is_void<C2>::value;
    std::vector<xyzz<F>> bs[4] = {b_ref, b_start, b_start, b_start};
    std::vector<xyzz<F>> cs[4] = {c_ref, std::vector<xyzz<F>>(T), std::vector<xyzz<F>>(T),
                                  std::vector<xyzz<F>>(T)};
    std::vector<uint32_t> ks[4] = {k_ref, std::vector<uint32_t>(T), std::vector<uint32_t>(T),
                                   std::vector<uint32_t>(T)};
    size_t nquads = 0, nocts = 0;
    /* mode 0 pairs (pass B), 1 quads, 2 (G2) octs: after k_ba_pairs and the quads' tree,
     * k_ba_quads_oh, a third tree and k_ba_octs_h (ba_halves.cuh), its lanes as coroutines */
    for (int mode = 0; mode < (G2 ? 3 : 2); mode++) {
        const int quads = mode >= 1;
        const bool octs = mode == 2;
        std::vector<xyzz<F>> &b_ba = bs[1 + mode], &c_ba = cs[1 + mode];
        std::vector<uint32_t> &k_ba = ks[1 + mode];
        for (size_t t0 = 0; t0 < T; t0 += chunk) {
            const size_t tc = T - t0 < chunk ? T - t0 : chunk;
            std::vector<F> pre(tc * (L / 2)), tr(cuzk__gpu_tree_space(tc)), prod;
            std::vector<uint8_t> npre(tc);
            std::vector<affine<F>> psum(tc * (L / 2));
            std::vector<uint64_t> masks(2 * tc);
            launch(tc, [&] {
                k_ba_pass_a<F, ALL_ZERO>(kp, vals.data(), M, L, t0, tc, pts.data(), pre.data(),
                                         tr.data(), npre.data());
            });
            /* The chunk's product tree over tr (what: its check's name) */
            auto tree = [&](const char *what) {
                prod.assign(tr.begin(), tr.begin() + tc);
                check(tree_inverse_emu(tr.data(), tc, (unsigned)(t0 % 2 ? 0 : 64)) >= 0,
                      "tree depth", grp, L, tc);
                for (size_t i = 0; i < tc; i++)
                    check(prod[i].is_zero() || prod[i] * tr[i] == F::one(), what, grp, L,
                          t0 + i);
            };
            for (int level = 0; level < 1 + quads; level++) {
                tree(level ? "quad product tree inverse" : "product tree inverse");
                if (quads && level == 0) {
                    /* G2: k_ba_pairs_h on copies of the inputs first (halves_run) */
                    halves_out<F> hv;
                    if (!octs) /* once, with quads */
                        hv = halves_run<F, ALL_ZERO>(kp, vals, M, L, t0, tc, pts, pre, tr, npre,
                                                     psum, masks);
                    launch(tc, [&] {
                        k_ba_pairs<F, ALL_ZERO>(kp, vals.data(), M, L, t0, tc, pts.data(),
                                                pre.data(), tr.data(), npre.data(),
                                                psum.data(), masks.data());
                    });
                    for (size_t i = 0; i < tc; i++) {
                        check(__popcll(masks[i]) == npre[i], "quad count", grp, L, t0 + i);
                        check(!(masks[i] & masks[tc + i]), "quad of a point-by-point pair", grp,
                              L, t0 + i);
                        nquads += octs ? 0 : npre[i];
                    }
                    halves_check(hv, pre, tr, npre, psum, masks, grp, L, t0);
                }
            }
            if (octs) {
                if constexpr (G2) {
                    /* k_ba_quads_oh: the quads' sums, the octs' prefixes, count and mask bits
                     * (bit pi + 1 set, pi + 2 cleared for the oct of quads pi and pi + 2) */
                    const std::vector<uint64_t> qm(masks.begin(), masks.begin() + tc);
                    const std::vector<uint8_t> nq = npre;
                    launch_block((2 * tc + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
                        k_ba_quads_oh<C2, ALL_ZERO>(kp, M, L, t0, tc, pre.data(), tr.data(),
                                                    npre.data(), psum.data(), masks.data());
                    });
                    for (size_t i = 0; i < tc; i++) {
                        const uint64_t os = oct_starts(masks[i]);
                        check(masks[i] == ((qm[i] | os << 1) & ~(os << 2)),
                              "octs: the quads and the octs' bits", grp, L, t0 + i);
                        check((os & qm[i]) == os && ((os << 2) & qm[i]) == os << 2,
                              "octs: two quads each", grp, L, t0 + i);
                        check(__popcll(os) == npre[i] && 2 * npre[i] <= nq[i], "oct count", grp,
                              L, t0 + i);
                        nocts += npre[i];
                    }
                    tree("oct product tree inverse");
                    launch_block((2 * tc + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
                        k_ba_octs_h<C2, ALL_ZERO>(
                            kp, vals.data(), M, L, t0, tc, pts.data(), pre.data(), tr.data(),
                            npre.data(), psum.data(), masks.data(), b_ba.data(), k_ba.data(),
                            c_ba.data(), into);
                    });
                }
            } else if (quads) {
                /* G2: k_ba_quads_h on copies first (quads_h_run) */
                const quads_h_out<F> qh = quads_h_run<F, ALL_ZERO>(
                    kp, vals, M, L, t0, tc, pts, pre, tr, npre, psum, masks, b_ba, k_ba, c_ba,
                    into);
                launch(tc, [&] {
                    k_ba_quads<F, ALL_ZERO>(kp, vals.data(), M, L, t0, tc, pts.data(),
                                            pre.data(), tr.data(), npre.data(), psum.data(),
                                            masks.data(), b_ba.data(), k_ba.data(),
                                            c_ba.data(), into);
                });
                if (qh.ran) {
                    check(same_words(qh.psum, psum), "quads halves: sums", grp, L, t0);
                    check(same_words(qh.b, b_ba), "quads halves: buckets", grp, L, t0);
                    check(same_words(qh.k, k_ba), "quads halves: carry keys", grp, L, t0);
                    check(same_words(qh.c, c_ba), "quads halves: carry sums", grp, L, t0);
                }
            } else {
                /* G2: k_ba_pass_b_h on copies first (quads_h_run's passb) */
                const quads_h_out<F> qh = quads_h_run<F, ALL_ZERO>(
                    kp, vals, M, L, t0, tc, pts, pre, tr, npre, psum, masks, b_ba, k_ba, c_ba,
                    into, true);
                launch(tc, [&] {
                    k_ba_pass_b<F, ALL_ZERO>(kp, vals.data(), M, L, t0, tc, pts.data(),
                                             pre.data(), tr.data(), npre.data(), b_ba.data(),
                                             k_ba.data(), c_ba.data(), into);
                });
                if (qh.ran) {
                    check(same_words(qh.b, b_ba), "pass B halves: buckets", grp, L, t0);
                    check(same_words(qh.k, k_ba), "pass B halves: carry keys", grp, L, t0);
                    check(same_words(qh.c, c_ba), "pass B halves: carry sums", grp, L, t0);
                }
            }
        }
        const char *what = octs ? "octs" : quads ? "quads" : "pairs";
        for (uint32_t k = 0; k < nb; k++)
            check(same_point(b_ref[k], b_ba[k]), what, grp, L, k);
        for (size_t t = 0; t < T; t++) {
            check(k_ref[t] == k_ba[t], "carry key", grp, L, t);
            if (k_ref[t] != SENT && k_ref[t] == k_ba[t])
                check(same_point(c_ref[t], c_ba[t]), "carry sum", grp, L, t);
        }
    }
    /* Slices of 8 and more entries hold runs long enough for quads. */
    check(L < 8 || nquads > 0, "no quads made", grp, L, 0);
    /* and of 16 and more for octs (G2) */
    check(!G2 || L < 16 || nocts > 0, "no octs made", grp, L, 0);
    /* Then the carry levels (k_accumk, as gpu_impl.cuh's accumulate runs them) over both,
     * against each bucket summed plainly, entry by entry. */
    std::vector<xyzz<F>> naive = b_start;
    for (size_t i = 0; i < M && keys[i] != SENT; i++)
        xyzz_add_affine(naive[ALL_ZERO ? 0 : keys[i]], ld_pt(pts.data(), vals[i]));
    for (int side = 0; side < (G2 ? 4 : 3); side++) {
        std::vector<xyzz<F>> &b = bs[side];
        std::vector<uint32_t> ck0 = ks[side], ck1;
        std::vector<xyzz<F>> cp0 = cs[side], cp1;
        const uint32_t LK = 8;
        for (size_t Tl = T; Tl > 1;) {
            const size_t Tn = (Tl + LK - 1) / LK;
            ck1.assign(Tn, SENT);
            cp1.assign(Tn, xyzz<F>::inf());
            /* G2: k_accumk_h (ba_halves.cuh) on copies, its lanes as coroutines; every word it
             * writes must be k_accumk's */
            std::vector<xyzz<F>> b_h = b, cp1_h = cp1;
            std::vector<uint32_t> ck1_h = ck1;
            if constexpr (G2)
                launch_block((2 * Tn + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
                    k_accumk_h<C2>(ck0.data(), cp0.data(), Tl, LK, b_h.data(), ck1_h.data(),
                                   cp1_h.data());
                });
            launch(Tn, [&] {
                k_accumk<F>(ck0.data(), cp0.data(), Tl, LK, b.data(), ck1.data(), cp1.data());
            });
            if constexpr (G2) {
                check(same_words(b_h, b), "k_accumk_h: buckets", grp, L, Tl);
                check(same_words(ck1_h, ck1), "k_accumk_h: carry keys", grp, L, Tl);
                check(same_words(cp1_h, cp1), "k_accumk_h: carry sums", grp, L, Tl);
            }
            ck0.swap(ck1);
            cp0.swap(cp1);
            Tl = Tn;
        }
        for (uint32_t k = 0; k < nb; k++)
            check(same_point(b[k], naive[k]),
                  side == 3   ? "batch-affine octs + carries vs plain sum"
                  : side == 2 ? "batch-affine quads + carries vs plain sum"
                  : side == 1 ? "batch-affine + carries vs plain sum"
                              : "k_accum1 + carries vs plain sum",
                  grp, L, k);
    }
}

/* Runs fn() for the threads 0 .. T-1 of blocks of bs threads. */
template <class Fn> static void launch_bs(size_t T, unsigned bs, Fn fn)
{
    blockDim.x = bs;
    for (size_t t = 0; t < T; t++) {
        blockIdx.x = (unsigned)(t / bs);
        threadIdx.x = (unsigned)(t % bs);
        fn();
    }
}

/* k_tables: copy k of each point must be 2^(k s) P by repeated doubling, through its
 * Montgomery trick over the copies (X and Y parked in the copy's slot); infinity stays zero. */
template <class F> static void tables(const char *grp, const std::vector<affine<F>> &pts)
{
    std::vector<affine<F>> set(pts.begin(), pts.begin() + 20);
    for (size_t i = 150; i < 154; i++)
        set.push_back(pts[i]); /* points at infinity */
    const size_t n = set.size();
    static const int ts[] = {2, 5, 12}, ss[] = {1, 7, 22};
    for (int t : ts)
        for (int s : ss) {
            std::vector<affine<F>> buf(t * n);
            for (size_t i = 0; i < n; i++)
                buf[i] = set[i];
            launch_bs(n, 64, [&] { k_tables<F>(buf.data(), n, t, s); });
            for (size_t i = 0; i < n; i++) {
                xyzz<F> q = xyzz<F>::inf();
                xyzz_add_affine(q, set[i]);
                for (int k = 0; k < t; k++) {
                    const affine<F> &got = buf[k * n + i];
                    bool ok;
                    if (set[i].is_inf()) {
                        ok = got.is_inf();
                    } else {
                        affine<F> want = to_affine(q);
                        ok = got.x == want.x && got.y == want.y;
                    }
                    check(ok, "k_tables copy vs doublings", grp, (uint32_t)(t * 100 + s), i);
                    for (int j = 0; j < s; j++)
                        xyzz_dbl(q);
                }
            }
        }
}

/* k_digits: for every window plan (width c; g bucket sets, copy w / g of a set with tables
 * of `stride` points, g = W without), each scalar's entries must name its index, window
 * w = copy g + set, and signed digits that add up to the scalar: sum +-mag 2^(c w). */
static void digits(int nbits)
{
    const uint32_t n2 = 60, stride = 1000;
    std::vector<uint32_t> sc(8 * 200, 0), idx(n2);
    for (uint32_t j = 0; j < n2; j++) {
        idx[j] = 3 * j + 1;
        uint32_t *x = &sc[8 * idx[j]];
        for (int k = 0; k < 8; k++)
            x[k] = j == 0 ? 0xffffffffu : j == 1 ? (k == 7 ? 0x20000000u : 0) : j == 2 ? 2 * (k == 0) : rnd(0xffffffffu) + rnd(2);
        x[7] &= (1u << (nbits - 224)) - 1; /* below 2^nbits */
    }
    static const int cs[] = {4, 9, 11, 13, 16, 20, 22, 24};
    for (int c : cs) {
        const int W = nbits / c + 1;
        const int gs[] = {W, 1, 2, 3, (W + 1) / 2};
        for (int g : gs) {
            const int t = (W + g - 1) / g;
            std::vector<uint32_t> keys((size_t)W * n2), vals((size_t)W * n2);
            const uint32_t str = g < W ? stride : 0;
            launch_bs(n2, 128, [&] {
                k_digits(sc.data(), idx.data(), n2, c, W, g, str, keys.data(), vals.data());
            });
            for (uint32_t j = 0; j < n2; j++) {
                int64_t acc[20] = {0}; /* 32-bit words, signed, normalised at the end */
                bool ok = true;
                for (int w = 0; w < W; w++) {
                    const size_t o = (size_t)w * n2 + j;
                    if (keys[o] == SENT) {
                        ok &= vals[o] == 0;
                        continue;
                    }
                    const uint32_t set = keys[o] >> (c - 1), mag = (keys[o] & ((1u << (c - 1)) - 1)) + 1;
                    const uint32_t v = vals[o] & 0x7fffffffu;
                    const uint32_t copy = g < W ? v / stride : 0, id = g < W ? v % stride : v;
                    ok &= set < (uint32_t)g && copy < (uint32_t)t && id == idx[j] &&
                          (int)(copy * g + set) == w;
                    const int e = c * w;
                    const uint64_t m = (uint64_t)mag << (e % 32);
                    const int64_t sg = (vals[o] >> 31) ? -1 : 1;
                    acc[e / 32] += sg * (int64_t)(m & 0xffffffffu);
                    acc[e / 32 + 1] += sg * (int64_t)(m >> 32);
                }
                for (int k = 0; k < 19; k++) { /* carries, floor division for negatives */
                    int64_t cy = acc[k] >> 32;
                    acc[k] -= cy * ((int64_t)1 << 32);
                    acc[k + 1] += cy;
                }
                const uint32_t *x = &sc[8 * idx[j]];
                for (int k = 0; k < 20; k++)
                    ok &= acc[k] == (k < 8 ? (int64_t)x[k] : 0);
                char what[64];
                snprintf(what, sizeof what, "k_digits c=%d W=%d g=%d", c, W, g);
                check(ok, what, nbits == 254 ? "bn254" : "bls12-381", (uint32_t)c, j);
            }
        }
    }
}

/* k_bucket_sums, k_bit_sums, k_pair_sum, k_to_jac: per window, sum (j + 1) B_j over its
 * buckets (chunks of S: their run and tri sums, then the tri sums and the runs by bit of their
 * chunk index summed in trees), finished as the host does (tri + 2^log2 S sum_k 2^k R_k,
 * cuzk__gpu_horner_bits), against the buckets added (j + 1) times each; then to Jacobian,
 * against the XYZZ sums. */
template <class F> static void reduce(const char *grp, const std::vector<affine<F>> &pts)
{
    const int W = 3;
    static const uint32_t Ss[] = {1, 2, 8};
    static const uint32_t cnts[] = {1, 2, 4, 8, 32};
    for (uint32_t S : Ss)
        for (uint32_t cnt : cnts) {
            const uint32_t B = S * cnt, len0 = cnt >= 4 ? cnt / 4 : 1;
            int nb = 0, logS = 0;
            while ((1u << nb) < cnt)
                nb++;
            while ((1u << logS) < S)
                logS++;
            std::vector<xyzz<F>> bk((size_t)W * B, xyzz<F>::inf()), naive(W, xyzz<F>::inf());
            for (size_t i = 0; i < bk.size(); i++)
                if (rnd(5)) /* every fifth bucket or so empty */
                    xyzz_add_affine(bk[i], pts[rnd((uint32_t)pts.size())]);
            for (int w = 0; w < W; w++)
                for (uint32_t j = 0; j < B; j++)
                    for (uint32_t k = 0; k <= j; k++)
                        xyzz_add(naive[w], bk[(size_t)w * B + j]);
            std::vector<xyzz<F>> run((size_t)W * cnt), tri((size_t)W * cnt);
            /* G2: k_bucket_sums_h (ba_halves.cuh) on copies, its lanes as coroutines; every
             * word it writes must be k_bucket_sums's */
            typedef typename fe2_base<F>::type C2;
            std::vector<xyzz<F>> bk_h = bk, run_h = run, tri_h = tri;
            if constexpr (!std::is_void<C2>::value)
                launch_block((2 * (size_t)W * cnt + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS,
                             [&] {
                                 k_bucket_sums_h<C2>(bk_h.data(), W, B, S, run_h.data(),
                                                     tri_h.data());
                             });
            launch_serial(((size_t)W * cnt + 63) / 64, 64,
                          [&] { k_bucket_sums<F>(bk.data(), W, B, S, run.data(), tri.data()); });
            if constexpr (!std::is_void<C2>::value) {
                check(same_words(bk_h, bk), "k_bucket_sums_h: running sums", grp, S, cnt);
                check(same_words(run_h, run), "k_bucket_sums_h: chunk sums", grp, S, cnt);
                check(same_words(tri_h, tri), "k_bucket_sums_h: weighted sums", grp, S, cnt);
            }
            const size_t l1 = (size_t)W * (nb + 1) * len0;
            std::vector<xyzz<F>> lv(l1), lv_h(l1);
            if constexpr (!std::is_void<C2>::value) /* k_bit_sums_h, k_pair_sum_h likewise */
                launch_block((2 * l1 + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, [&] {
                    k_bit_sums_h<C2>(run.data(), tri.data(), W, cnt, nb, len0, lv_h.data());
                });
            launch_serial((l1 + 63) / 64, 64, [&] {
                k_bit_sums<F>(run.data(), tri.data(), W, cnt, nb, len0, lv.data());
            });
            if constexpr (!std::is_void<C2>::value)
                check(same_words(lv_h, lv), "k_bit_sums_h", grp, S, cnt);
            for (size_t n = l1, len = len0; len > 1; n /= 2, len /= 2) {
                std::vector<xyzz<F>> nx(n / 2), nx_h(n / 2);
                if constexpr (!std::is_void<C2>::value)
                    launch_block((n + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS,
                                 [&] { k_pair_sum_h<C2>(lv.data(), n / 2, nx_h.data()); });
                launch_serial((n / 2 + 63) / 64, 64,
                              [&] { k_pair_sum<F>(lv.data(), n / 2, nx.data()); });
                if constexpr (!std::is_void<C2>::value)
                    check(same_words(nx_h, nx), "k_pair_sum_h", grp, S, n);
                lv.swap(nx);
            }
            check(lv.size() == (size_t)W * (nb + 1), "bucket reduction: sums per window", grp, S,
                  cnt);
            std::vector<xyzz<F>> win(W);
            for (int w = 0; w < W && lv.size() == (size_t)W * (nb + 1); w++) {
                xyzz<F> acc = xyzz<F>::inf();
                for (int k = nb - 1; k >= 0; k--) {
                    xyzz_dbl(acc);
                    xyzz_add(acc, lv[(size_t)w * (nb + 1) + k]);
                }
                for (int k = 0; k < logS; k++)
                    xyzz_dbl(acc);
                xyzz_add(acc, lv[(size_t)w * (nb + 1) + nb]);
                win[w] = acc;
                check(same_point(win[w], naive[w]), "bucket reduction vs sum (j+1) B_j", grp, S,
                      cnt * 16 + w);
            }
        }
    {
        const uint32_t S = 1;
        std::vector<xyzz<F>> win(W, xyzz<F>::inf());
        for (int w = 0; w < W; w++)
            for (int k = 0; k < w; k++) /* window 0: infinity */
                xyzz_add_affine(win[w], pts[rnd((uint32_t)pts.size())]);
        /* k_add_into (a split MSM's later part's ones bucket into the first's): each sum the
         * two added, infinity on either side included (window 0 is infinity). */
        {
            std::vector<xyzz<F>> a(win), b(W, xyzz<F>::inf());
            for (int w = 0; w < W; w++)
                if (w % 3 != 1)
                    xyzz_add_affine(b[w], pts[rnd((uint32_t)pts.size())]);
            launch_serial(1, 64, [&] { k_add_into<F>(a.data(), b.data(), (size_t)W); });
            for (int w = 0; w < W; w++) {
                xyzz<F> want = win[w];
                xyzz_add(want, b[w]);
                check(same_point(a[w], want), "k_add_into vs xyzz_add", grp, S, (size_t)w);
            }
        }
        /* to Jacobian: the windows and a ones bucket (and none: infinity) */
        for (int with_ones = 0; with_ones < 2; with_ones++) {
            xyzz<F> ones = xyzz<F>::inf();
            xyzz_add_affine(ones, pts[7]);
            std::vector<F> jac(3 * (W + 1));
            launch_serial(1, 64, [&] {
                k_to_jac<F>(win.data(), W, with_ones ? &ones : NULL, jac.data());
            });
            for (int t = 0; t <= W; t++) {
                const xyzz<F> &p = t < W ? win[t] : with_ones ? ones : xyzz<F>::inf();
                const F &X = jac[3 * t], &Y = jac[3 * t + 1], &Z = jac[3 * t + 2];
                bool ok;
                if (p.is_inf()) {
                    ok = Z.is_zero();
                } else {
                    const F z2 = Z * Z;
                    ok = !Z.is_zero() && X * p.zz == p.x * z2 && Y * p.zzz == p.y * (z2 * Z);
                }
                check(ok, "k_to_jac vs xyzz", grp, S, (size_t)t);
            }
        }
    }
}

/* k_prep: canonical scalars copied, classified (one; neither zero nor one) and, with bad
 * given, the lowest index of a value not below r recorded; Montgomery scalars (k R, made by
 * adding one() k times) converted to k. */
template <class FR> static void prep(const char *name)
{
    const size_t n = 300;
    std::vector<uint32_t> in(8 * n), sc(8 * n), want(8 * n);
    std::vector<uint8_t> f1(n), f2(n);
    for (size_t i = 0; i < n; i++) {
        uint32_t *x = &in[8 * i];
        if (i % 7 == 0 || i % 7 == 1) {
            for (int k = 0; k < 8; k++)
                x[k] = k == 0 ? (uint32_t)(i % 7) : 0;
        } else {
            for (int k = 0; k < 8; k++)
                x[k] = rnd(0xffffffffu) + rnd(2);
            x[7] = rnd(FR::p(7)); /* below r's top word: below r */
        }
    }
    for (int k = 0; k < 8; k++) {
        in[8 * 200 + k] = FR::p(k);  /* r itself */
        in[8 * 123 + k] = 0xffffffffu; /* 2^256 - 1 */
        in[8 * 250 + k] = FR::p(k);
    }
    in[8 * 250] += 1; /* r + 1 */
    for (int with_bad = 0; with_bad < 2; with_bad++) {
        unsigned long long bad = ~0ull;
        launch_serial((n + 127) / 128, 128, [&] {
            k_prep<FR>(in.data(), sc.data(), f1.data(), f2.data(), n, false,
                       with_bad ? &bad : NULL);
        });
        bool ok = sc == in;
        for (size_t i = 0; i < n; i++) {
            const uint32_t *x = &in[8 * i];
            uint32_t hi = 0;
            for (int k = 1; k < 8; k++)
                hi |= x[k];
            const bool z = !hi && !x[0], o = !hi && x[0] == 1;
            ok &= f1[i] == o && f2[i] == (!z && !o);
        }
        check(ok, "k_prep canonical: copy and flags", name, 0, (size_t)with_bad);
        check(bad == (with_bad ? 123ull : ~0ull), "k_prep: lowest scalar not below r", name, 0,
              (size_t)bad);
    }
    /* Montgomery: k R for k < n */
    fe<FR> acc = fe<FR>::zero();
    for (size_t i = 0; i < n; i++) {
        memcpy(&in[8 * i], acc.v, 32);
        acc = acc + fe<FR>::one();
    }
    unsigned long long bad = ~0ull;
    launch_serial((n + 127) / 128, 128, [&] {
        k_prep<FR>(in.data(), sc.data(), f1.data(), f2.data(), n, true, &bad);
    });
    bool ok = bad == ~0ull;
    for (size_t i = 0; i < n; i++) {
        ok &= sc[8 * i] == (uint32_t)i && f1[i] == (i == 1) && f2[i] == (i > 1);
        for (int k = 1; k < 8; k++)
            ok &= sc[8 * i + k] == 0;
    }
    check(ok, "k_prep Montgomery: k R -> k", name, 0, 0);
}

template <class F>
static void group(const char *grp, const F &gx, const F &gy, bool deep_tree = false)
{
    const size_t NP = 150;
    std::vector<affine<F>> pts;
    affine<F> g;
    g.x = gx;
    g.y = gy;
    xyzz<F> acc = xyzz<F>::inf();
    for (size_t i = 0; i < NP; i++) {
        xyzz_add_affine(acc, g);
        pts.push_back(to_affine(acc));
    }
    affine<F> inf_pt;
    inf_pt.x = F::zero();
    inf_pt.y = F::zero();
    for (int i = 0; i < 10; i++)
        pts.push_back(inf_pt);
    for (int i = 0; i < 10; i++)
        pts.push_back(pts[i]); /* the same points at other indices */
    /* A check of the points themselves: 2 G from the doubling formula equals pts[1]. */
    xyzz<F> d;
    xyzz_mdbl(d, g);
    xyzz<F> p1 = xyzz<F>::inf();
    xyzz_add_affine(p1, pts[1]);
    check(same_point(d, p1), "2G", grp, 0, 1);
    tables<F>(grp, pts);
    reduce<F>(grp, pts);
    trees<F>(grp, pts, NP, deep_tree);
    static const uint32_t Ls[] = {4, 16, 32, 64, 128};
    for (uint32_t L : Ls) {
        run<F, false>(grp, pts, L, (size_t)1 << 30);
        run<F, false>(grp, pts, L, 5, true); /* chunked, into the buckets */
        run<F, true>(grp, pts, L, 7);
    }
}

/* inf_val / inf_keep, the predicate of the drop of points at infinity (gpu_impl.cuh selects
 * with it through CUB): value v (its sign bit aside) names point v, or with tables of stride
 * points point v % stride, of the MSM's points, which start at point off of the set. Expected
 * answers worked out by hand for a map of 140 points. */
static void inf_drop()
{
    static const uint32_t at_inf[] = {0, 5, 31, 32, 63, 97, 100, 139};
    std::vector<uint32_t> map(5, 0);
    for (uint32_t i : at_inf)
        map[i / 32] |= 1u << (i % 32);
    static const struct {
        uint32_t v, stride, off;
        bool inf;
    } cases[] = {
        {5, 0, 0, true},           {5 | 0x80000000u, 0, 0, true}, {6, 0, 0, false},
        {0, 0, 5, true},           {27, 0, 5, true},              {25, 0, 5, false},
        {197, 97, 0, false},       {291, 97, 0, true},            {260, 97, 34, true},
        {160, 97, 0, true},        {159, 97, 1, true},            {159, 97, 0, false},
        {62 | 0x80000000u, 97, 1, true}, {139, 0, 0, true},       {138, 0, 0, false},
        {33, 0, 67, true},         {33, 0, 66, false},            {97 * 4 + 39, 97, 100, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const inf_keep keep = {map.data(), cases[k].stride, cases[k].off};
        const bool got = inf_val(map.data(), cases[k].v, cases[k].stride, cases[k].off);
        check(got == cases[k].inf && keep(cases[k].v) == !cases[k].inf, "inf_val / inf_keep",
              cases[k].stride ? "tables" : "plain", cases[k].off, k);
    }
}

int main(void)
{
    digits(254);
    digits(255);
    prep<BnFr>("bn254 Fr");
    prep<BlsFr>("bls12-381 Fr");
    /* G1 over lazy fields, as on the device */
    group<fe<BnFpL>>("bn254 G1", from_w<BnFpL>(bn_g1x), from_w<BnFpL>(bn_g1y), true);
    group<fe<BlsFpL>>("bls12-381 G1", from_w<BlsFpL>(bls_g1x), from_w<BlsFpL>(bls_g1y));
    group<fe2<BnFp>>("bn254 G2", from_w2<BnFp>(bn_g2x), from_w2<BnFp>(bn_g2y));
    group<fe2<BlsFp>>("bls12-381 G2", from_w2<BlsFp>(bls_g2x), from_w2<BlsFp>(bls_g2y));
    inf_drop();
    printf("msm_emu: %ld checks, %ld failed\n", checks, failed);
    return failed != 0;
}
