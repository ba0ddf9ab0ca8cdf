/*
 * The NTT's kernels (the passes, k_ntt_pass; the twiddle table and the coset scaling, k_pow;
 * H's pointwise a b - c, k_hmul) and the synthesis of a, b, c that H starts from (k_synth).
 * Included by gpu_impl.cuh, whose host code (ntt_core, ntt_api, h_api, synth_api) launches
 * them; tests/gpu/ntt_emu.cpp also compiles them for the host (CUZK_GPU_HOST_EMU, a block's
 * threads as coroutines meeting at __syncthreads, tests/gpu/emu_cuda.h) and checks every pass
 * geometry in CI, without a GPU, against GMP.
 */
#ifndef CUZK_GPU_NTT_KERNELS_CUH
#define CUZK_GPU_NTT_KERNELS_CUH

#include "gpu/ff/field.cuh"
#include "gpu/gpu_plan.h"
#include "gpu/ff/ldst.cuh"

namespace cuzk_gpu {

template <class FR> DI fe<FR> pow_u64(fe<FR> b, uint64_t e)
{
    fe<FR> r = fe<FR>::one();
    while (e) {
        if (e & 1)
            r = mul_inl(r, b);
        b = mul_inl(b, b);
        e >>= 1;
    }
    return r;
}

template <class FR> DI fe<FR> load_fe(const uint64_t *p)
{
    fe<FR> r;
    for (int i = 0; i < 4; i++) {
        r.v[2 * i] = (uint32_t)p[i];
        r.v[2 * i + 1] = (uint32_t)(p[i] >> 32);
    }
    return r;
}

struct fr_const {
    uint64_t l[4];
};

/* x_i = f w^i for i < n, 64 consecutive per thread: stored (SCALE false: the twiddle table)
 * or multiplied into v[i] (SCALE true: a coset's scaling). */
template <class FR, bool SCALE>
__global__ void k_pow(fe<FR> *v, size_t n, fr_const w_, fr_const f_)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t beg = t * 64;
    if (beg >= n)
        return;
    fe<FR> w = load_fe<FR>(w_.l), f = load_fe<FR>(f_.l);
    fe<FR> x = mul_inl(f, pow_u64(w, beg));
    for (size_t i = beg; i < beg + 64 && i < n; i++) {
        v[i] = SCALE ? mul_inl(v[i], x) : x;
        x = mul_inl(x, w);
    }
}

/* Shared memory holds the block's elements limb-major (sh[limb][element]): a warp touching 32
 * consecutive elements hits 32 different banks (array-of-structs, 32-byte elements, would make
 * every access an 8-way bank conflict, and the passes are shared-memory bound). */
template <class FR, int SH> DI fe<FR> sh_ld(const uint32_t (*sh)[SH], int e)
{
    fe<FR> r;
    sh_words_ld<SH>(r, sh, 0, e);
    return r;
}
template <class FR, int SH> DI void sh_st(uint32_t (*sh)[SH], int e, const fe<FR> &x)
{
#ifdef CUZK_GPU_HOST_EMU
    emu_ntt_bound(x); /* below */
#endif
    sh_words_st<SH>(x, sh, 0, e);
}

/* The twiddle w_{2^L}^ti of the forward transform, or of the inverse: w^-ti = -w^(2^(L-1) - ti). */
template <class FR>
DI fe<FR> ntt_tw(const fe<FR> *tw, uint32_t ti, int inverse, uint32_t half_tab)
{
    /* Entry 0 is 1, loaded like the others: fe::one()'s constant words in this branch make
     * the passes slower. */
    if (!inverse || ti == 0)
        return ld16(tw + ti);
    /* -w = r - w: canonical, as w is (in a lazy FR too: ntt_rep_of) and not 0 */
    return mod_minus<FR, false>(ld16(tw + (half_tab - ti)));
}

/* Staged twiddles (TWS): stage st of a pass (stage m0 + st) uses 2^(st + lob) distinct twiddles,
 * w_{2^m}^j for j = (qlow << lo_all) + (tile << lob) + lo, qlow < 2^st, lo < 2^lob; entry
 * x = (qlow << lob) | lo of its table sits at ((2^st - 1) << lob) + x, 2^lob (2^s - 1) < E
 * entries in all. Each entry is two 16-byte halves in two arrays (tsh[0][i], tsh[1][i]), so a
 * warp reading consecutive entries reads consecutive 16-byte words: no bank conflicts. CAP
 * (the block's element capacity SH) bounds the entries. */
template <class FR, int CAP>
DI void ntt_tw_stage(uint4 (*tsh)[CAP], const fe<FR> *tw, int m0, int s, int lob,
                     int lo_all, uint32_t tile, int L, int inverse, uint32_t half_tab)
{
    for (int st = 0; st < s; st++) {
        const uint32_t base = ((1u << st) - 1) << lob, cnt = 1u << (st + lob);
        for (uint32_t x = threadIdx.x; x < cnt; x += blockDim.x) {
            const uint32_t j = ((x >> lob) << lo_all) + (tile << lob) + (x & ((1u << lob) - 1));
            const fe<FR> w = ntt_tw(tw, j << (L - m0 - st), inverse, half_tab);
            tsh[0][base + x] = make_uint4(w.v[0], w.v[1], w.v[2], w.v[3]);
            tsh[1][base + x] = make_uint4(w.v[4], w.v[5], w.v[6], w.v[7]);
        }
    }
}
template <class FR, int CAP>
DI fe<FR> ntt_tw_sh(const uint4 (*tsh)[CAP], int st, int lob, uint32_t x)
{
    const uint32_t i = (((1u << st) - 1) << lob) + x;
    const uint4 a = tsh[0][i], b = tsh[1][i];
    fe<FR> w;
    w.v[0] = a.x, w.v[1] = a.y, w.v[2] = a.z, w.v[3] = a.w;
    w.v[4] = b.x, w.v[5] = b.y, w.v[6] = b.z, w.v[7] = b.w;
    return w;
}

/* The representation the passes compute in: FR, or FR::ntt_rep where the configuration names
 * one (its lazy sibling, field.cuh: elements in [0, 2r) between the passes, which drops each
 * product's final subtraction). Every product is mul_inl(c, x), c a canonical twiddle or factor
 * (the inverse's negated twiddles made canonical too) and x an element below 2r: CIOS keeps its
 * running value below c + r < 2r and ends below (c x + m r) / R < 2r whenever 2r < R, so this
 * holds for BLS12-381's r (above R/4, where field.cuh's general lazy products of two elements
 * below 2r would not fit) as for BN254's. Sums below 4r keep their carry (reduced modulo 2r).
 * A lazy FR with `harvey` (BN254's, r < R/4) stores elements below 4r between stages instead
 * (hv_red below; x < 4r still ends below c x / R + r < 2r). Passes read canonical or lazy
 * elements (below 2r) alike; the last one stores canonical values (NTT_CANON in its post), so
 * what a transform leaves is canonical. */
template <class FR, class = void> struct ntt_rep_of {
    typedef FR type;
};
template <class FR> struct ntt_rep_of<FR, void_t_<typename FR::ntt_rep>> {
    typedef typename FR::ntt_rep type;
};
#define NTT_CANON 4 /* a pass's post bit: store canonical elements (the last pass) */

/* Harvey's butterfly (D. Harvey, "Faster arithmetic for number-theoretic transforms", 2014),
 * for a lazy FR that declares `harvey` (4r < 2^256: BN254's r, not BLS12-381's). The elements
 * the passes store are in [0, 4r); a butterfly u, v -> u + w v, u - w v brings u below 2r (one
 * conditional subtraction of 2r, hv_red), takes t = w v below 2r (a product of a canonical w
 * and any v < 4r: CIOS ends below w v / R + r < 4r^2 / R + r < 2r), and stores u + t and
 * u - t + 2r, both in [0, 4r), without reducing either: one conditional subtraction per
 * butterfly instead of two (the sum's and the difference's). Without `harvey` these are the
 * lazy field's own operations (every element below 2r). */
template <class C, class = void> struct harvey_of {
    static constexpr bool v = false;
};
template <class C> struct harvey_of<C, void_t_<decltype(C::harvey)>> {
    static constexpr bool v = C::harvey;
};
#ifdef CUZK_GPU_HOST_EMU
/* tests/gpu/ntt_emu.cpp: the elements the passes store in shared memory that are not below the
 * bound their butterflies assume (4r with Harvey's, 2r in a lazy FR, else r), counted. */
inline long emu_ntt_over_bound = 0;
template <class FR> inline void emu_ntt_bound(const fe<FR> &x)
{
    constexpr int N = FR::N;
    const uint64_t k = harvey_of<FR>::v ? 4 : lazy_of<FR>::v ? 2 : 1;
    uint32_t kr[N];
    uint64_t c = 0;
    for (int i = 0; i < N; i++) {
        c += (uint64_t)FR::p(i) * k;
        kr[i] = (uint32_t)c;
        c >>= 32;
    }
    if (c)
        return; /* k r >= 2^(32 N) > x */
    for (int i = N - 1; i >= 0; i--)
        if (x.v[i] != kr[i]) {
            emu_ntt_over_bound += x.v[i] > kr[i];
            return;
        }
    emu_ntt_over_bound++; /* x == k r */
}
#endif

/* An element below 4r brought below 2r (Harvey), else unchanged. */
template <class C> DI fe<C> hv_red(const fe<C> &a)
{
    if constexpr (harvey_of<C>::v)
        return reduce_once<C, true>(a.v, 0);
    else
        return a;
}
/* u + t for u, t < 2r: below 4r, unreduced (Harvey); else the field's sum. */
template <class C> DI fe<C> hv_add(const fe<C> &u, const fe<C> &t)
{
    if constexpr (harvey_of<C>::v)
        return add_nr_raw(u, t);
    else
        return u + t;
}
/* u - t + 2r for u, t < 2r: in (0, 4r), unreduced (Harvey); else the field's difference. */
template <class C> DI fe<C> hv_sub(const fe<C> &u, const fe<C> &t)
{
    if constexpr (harvey_of<C>::v)
        return sub_plus_mod<C, true>(u, t); /* 2r added modulo 2^256: exact, as u - t + 2r < 4r */
    else
        return u - t;
}

/* One pass of stages m0 .. m0+s-1 (1-based) of a size-2^logn DIT NTT, 2^(s+lob) <= SH elements
 * per block in dynamic shared memory (8 SH words of elements, as much again of twiddles).
 * Index of a block element: hi * 2^(m0-1+s) + q * 2^(m0-1) + tile * 2^lob + lo, q < 2^s.
 * first: read src in bit-reversed order. post (bits 0-1): 0 none, 1 times f, 2 times
 * f * w_{2N}^i, 3 times w_{2N}^i; NTT_CANON: canonical elements stored (a lazy FR's last
 * pass). Two stages per trip through shared memory where two are left (each thread takes the
 * four elements of two butterflies of stage m and the two of stage m + 1 that use them, with
 * three twiddles and four products: half the barriers and shared-memory traffic, two products
 * in flight per thread); the block has E/4 threads. Every twiddle of the pass is staged in
 * shared memory while the elements arrive (ntt_tw_stage), so the stages' loops load none from
 * global memory. */
template <class FR, bool FIRST, int SH>
DI void ntt_pass_body(const fe<FR> *src, fe<FR> *dst, int logn, int m0, int s, int lob,
                      const fe<FR> *tw, int L, int inverse, int post, fr_const f_)
{
    if (FIRST) { /* the first pass: stages from 1, untiled (constants for the compiler) */
        m0 = 1;
        lob = 0;
    }
#ifdef CUZK_GPU_HOST_EMU
    uint32_t *ntt_dsh = emu_dyn_shared(); /* tests/gpu/emu_cuda.h */
#else
    extern __shared__ __align__(16) uint32_t ntt_dsh[];
#endif
    uint32_t(*sh)[SH] = (uint32_t(*)[SH])ntt_dsh;
    const int E = 1 << (s + lob);
    const int lo_all = m0 - 1; /* bits below q */
    const uint32_t ntiles = 1u << (lo_all - lob);
    const uint32_t tile = blockIdx.x % ntiles;
    const uint32_t hi = blockIdx.x / ntiles;
    /* Element and twiddle indices fit 32 bits (logn < 32, L <= 32): fewer registers under
     * the 40-register cap than size_t ones. */
    const uint32_t base = (hi << (lo_all + s)) + (tile << lob);
    const uint32_t lomask = (1u << lob) - 1;
#define GIDX(e) (base + ((uint32_t)((e) >> lob) << lo_all) + ((e)&lomask))
    if (FIRST) {
        /* Stage 1 as the elements arrive: its twiddle is 1 (m0 = 1, lob = 0, one tile), so
         * each thread gathers a pair 2e, 2e + 1 and stores u + v, u - v: no multiplication
         * (1/logn of the butterflies' products). */
        for (int e = 2 * threadIdx.x; e < E; e += 2 * blockDim.x) {
            fe<FR> u = ld16v(src + (__brev(GIDX(e)) >> (32 - logn)));
            fe<FR> v = ld16v(src + (__brev(GIDX(e + 1)) >> (32 - logn)));
            sh_st<FR, SH>(sh, e, hv_add(u, v)); /* u, v below 2r: the transform's input */
            sh_st<FR, SH>(sh, e + 1, hv_sub(u, v));
        }
    } else {
        for (int e = threadIdx.x; e < E; e += blockDim.x)
            sh_st<FR, SH>(sh, e, ld16v(src + GIDX(e))); /* src may be dst (middle passes) */
    }
    const uint32_t half_tab = 1u << (L - 1);
    uint4(*tsh)[SH] = (uint4(*)[SH])(ntt_dsh + 8 * SH);
    ntt_tw_stage<FR, SH>(tsh, tw, m0, s, lob, lo_all, tile, L, inverse, half_tab);
    __syncthreads();
    for (int st = FIRST ? 1 : 0; st < s;) {
        if (st + 1 < s) {
            /* Elements q = qhigh b1 b0 qlow (b0 at bit st): stage m0 + st pairs b0 = 0, 1 with
             * the twiddle of qlow, the next stage pairs b1 = 0, 1 with that of (b0 qlow). */
            const int d = 1 << (st + lob); /* element distance of bit st */
            for (int qd = threadIdx.x; qd < E / 4; qd += blockDim.x) {
                uint32_t lo = qd & lomask, r = qd >> lob;
                uint32_t qlow = r & ((1u << st) - 1), qhigh = r >> st;
                const uint32_t x = (qlow << lob) | lo; /* the staged tables' entry */
                int e0 = (int)((((qhigh << (st + 2)) | qlow) << lob) | lo);
                fe<FR> wa = ntt_tw_sh<FR, SH>(tsh, st, lob, x);
                fe<FR> x0 = hv_red(sh_ld<FR, SH>(sh, e0));
                fe<FR> t = mul_inl(wa, sh_ld<FR, SH>(sh, e0 + d));
                fe<FR> a1 = hv_sub(x0, t);
                x0 = hv_add(x0, t); /* a0 */
                fe<FR> x2 = hv_red(sh_ld<FR, SH>(sh, e0 + 2 * d));
                t = mul_inl(wa, sh_ld<FR, SH>(sh, e0 + 3 * d));
                fe<FR> a3 = hv_sub(x2, t);
                x2 = hv_add(x2, t); /* a2 */
                t = mul_inl(ntt_tw_sh<FR, SH>(tsh, st + 1, lob, x), x2);
                x0 = hv_red(x0);
                sh_st<FR, SH>(sh, e0, hv_add(x0, t));
                sh_st<FR, SH>(sh, e0 + 2 * d, hv_sub(x0, t));
                t = mul_inl(ntt_tw_sh<FR, SH>(tsh, st + 1, lob, x + (1u << (st + lob))), a3);
                a1 = hv_red(a1);
                sh_st<FR, SH>(sh, e0 + d, hv_add(a1, t));
                sh_st<FR, SH>(sh, e0 + 3 * d, hv_sub(a1, t));
            }
            st += 2;
        } else {
            for (int bf = threadIdx.x; bf < E / 2; bf += blockDim.x) {
                uint32_t lo = bf & lomask, r = bf >> lob;
                uint32_t qlow = r & ((1u << st) - 1), qhigh = r >> st;
                uint32_t q0 = (qhigh << (st + 1)) | qlow, q1 = q0 | (1u << st);
                fe<FR> w = ntt_tw_sh<FR, SH>(tsh, st, lob, (qlow << lob) | lo);
                int e0 = (q0 << lob) | lo, e1 = (q1 << lob) | lo;
                fe<FR> u = hv_red(sh_ld<FR, SH>(sh, e0)), v = mul_inl(w, sh_ld<FR, SH>(sh, e1));
                sh_st<FR, SH>(sh, e0, hv_add(u, v));
                sh_st<FR, SH>(sh, e1, hv_sub(u, v));
            }
            st += 1;
        }
        __syncthreads();
    }
    const int pm = post & 3;
    fe<FR> f;
    if (pm)
        f = load_fe<FR>(f_.l);
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
        uint32_t g = GIDX(e);
        fe<FR> x = sh_ld<FR, SH>(sh, e);
        if (pm == 1)
            x = mul_inl(f, x);
        else if (pm == 2)
            x = mul_inl(canon(mul_inl(f, ld16(tw + (g << (L - logn - 1))))), x);
        else if (pm == 3)
            x = mul_inl(ld16(tw + (g << (L - logn - 1))), x);
        if (post & NTT_CANON)
            x = canon(hv_red(x)); /* [0, 4r) -> [0, r); no-op for a strict FR */
        st16(dst + g, x);
    }
#undef GIDX
}

/* Blocks of at most 256 threads (four elements live per thread); 3 blocks per SM cap the kernel
 * at 80 registers, which BN254's Fr needs without spills (at 4 blocks, 64 registers, it
 * spills). SH: the block's element capacity, 1024 or 512 (ntt_pass.sh). */
template <class FR, bool FIRST, int SH>
__global__ void __launch_bounds__(256, 3)
k_ntt_pass(const fe<FR> *src, fe<FR> *dst, int logn, int m0, int s, int lob, const fe<FR> *tw,
           int L, int inverse, int post, fr_const f_)
{
    ntt_pass_body<FR, FIRST, SH>(src, dst, logn, m0, s, lob, tw, L, inverse, post, f_);
}

template <class FR> __global__ void k_hmul(fe<FR> *a, const fe<FR> *b, const fe<FR> *c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = mul_inl(a[i], b[i]) - c[i];
}

/* Synthesis: a = A.w, b = B.w, c = a b, one thread per row. Row i's terms are the records
 * rec[m][rp[m][i] .. rp[m][i+1]) of `stride` bytes: a u32 signal index at byte 0 and the
 * coefficient times R^2 (as the zkey stores it) at byte 8. w holds canonical witness values,
 * so (coef R^2) w / R is the Montgomery form of coef w: one multiplication per term, exactly
 * the CPU's synthesis (groth16_tmpl.h), so the results are bit-identical. */
template <class FR>
__global__ void k_synth(const uint64_t *rpa, const uint8_t *reca, const uint64_t *rpb,
                        const uint8_t *recb, uint32_t stride, const uint32_t *w, size_t n,
                        fe<FR> *a, fe<FR> *b, fe<FR> *c)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fe<FR> acc[2];
#pragma unroll
    for (int m = 0; m < 2; m++) {
        const uint64_t *rp = m ? rpb : rpa;
        const uint8_t *rec = m ? recb : reca;
        acc[m] = fe<FR>::zero();
        for (uint64_t k = __ldg(rp + i), e = __ldg(rp + i + 1); k < e; k++) {
            const uint8_t *r = rec + k * stride;
            uint32_t sig = __ldg((const uint32_t *)r);
            const uint2 *cp = (const uint2 *)(r + 8);
            const uint4 *wp = (const uint4 *)(w + 8 * (size_t)sig);
            fe<FR> co, wv;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                uint2 v = __ldg(cp + j);
                co.v[2 * j] = v.x;
                co.v[2 * j + 1] = v.y;
            }
            uint4 x = __ldg(wp), y = __ldg(wp + 1);
            wv.v[0] = x.x, wv.v[1] = x.y, wv.v[2] = x.z, wv.v[3] = x.w;
            wv.v[4] = y.x, wv.v[5] = y.y, wv.v[6] = y.z, wv.v[7] = y.w;
            acc[m] = acc[m] + mul_inl(co, wv);
        }
    }
    a[i] = acc[0];
    b[i] = acc[1];
    c[i] = mul_inl(acc[0], acc[1]);
}

/* The launches of k_ntt_pass for one 2^logn transform (logn >= 1), as ntt_core issues them and
 * tests/gpu/ntt_emu.cpp replays them: the passes of cuzk__gpu_ntt_plan (max_lob 0: the tile
 * cuzk__gpu_ntt_auto_lob picks for the size), each reading v (the first, bit-reversed) or tmp
 * and writing tmp or, the last, v; a transform of one pass writes tmp and copies it back. The
 * last pass applies the post-scaling. */
struct ntt_pass {
    int first;        /* k_ntt_pass<FR, first, sh> */
    int sh;           /* the kernel's element capacity: 1024, or 512 for blocks of at most 512
                       * elements (16 + 16 KiB of elements and twiddles, so more blocks fit an
                       * SM) */
    int m0, s, lob;   /* its stages m0 .. m0 + s - 1, tiles of 2^lob */
    size_t blocks;
    int threads;
    int post;         /* 0 but on the last pass: the post-scaling, and NTT_CANON */
    int src_v, dst_v; /* reads v (else tmp), writes v (else tmp) */
    int copy_back;    /* then tmp is copied to v */
};
/* log_sh <= 10: a block holds at most the 1024 elements of k_ntt_pass's larger instance. */
static inline int ntt_passes(int logn, int log_sh, int max_lob, int post, ntt_pass out[32])
{
    int ps[32], plob[32];
    if (max_lob <= 0) /* the default: by size (cuzk__gpu_ntt_auto_lob) */
        max_lob = cuzk__gpu_ntt_auto_lob(logn, log_sh);
    const int P = cuzk__gpu_ntt_plan(logn, log_sh, max_lob, ps, plob);
    int done = 0;
    for (int i = 0; i < P; i++) {
        ntt_pass &q = out[i];
        const bool last = i == P - 1;
        const int E = 1 << (ps[i] + plob[i]);
        q.first = i == 0;
        q.sh = E <= 512 ? 512 : 1024;
        q.m0 = done + 1;
        q.s = ps[i];
        q.lob = plob[i];
        q.blocks = ((size_t)1 << logn) / (size_t)E;
        const int per = E / 4; /* four elements per thread */
        q.threads = per > 0 ? per : 1;
        q.post = last ? post | NTT_CANON : 0;
        q.src_v = i == 0;
        q.dst_v = last && i > 0;
        q.copy_back = last && i == 0;
        done += ps[i];
    }
    return P;
}

/* H's inverse transforms (h_api): each iNTT's last pass scales by f w_{2N}^i, so a, b, c come
 * out on the coset f n times their true values; a b - c needs f_a f_b n^2 = f_c n. b takes no f
 * (post 3: one product per element instead of two), a takes n^-2 and c n^-1, and h is exact.
 * Buffer k uses post h_post[k] with f = n^-h_fexp[k]. */
static const int h_post[3] = {2, 3, 2};
static const int h_fexp[3] = {2, 0, 1};

} // namespace cuzk_gpu

#endif
