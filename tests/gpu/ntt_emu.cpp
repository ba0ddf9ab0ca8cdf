/*
 * The NTT's kernels (src/gpu/ntt/ntt_kernels.cuh) compiled for the host and run as ntt_core,
 * ntt_api and h_api launch them (the same pass list, ntt_passes), against GMP: a block's
 * threads are coroutines meeting at __syncthreads, the shared memory one host array (blocks
 * run one after another), the PTX carry primitives emulated (field.cuh). For BN254 and
 * BLS12-381 Fr and several pass geometries (the device's, its tile chosen by size, and fixed
 * tiles), plus small blocks that make many passes at small sizes: the forward NTT, the
 * inverse (times 1/n), both on a coset, and H (three inverse
 * transforms with h_api's post-scalings, three forward ones, a b - c) must equal the
 * transforms computed here with GMP from the definition's roots, 5^((r-1)/2^k). Built and run
 * by ntt_emu_test.sh, so CI checks the NTT without a GPU. (The shims: emu_cuda.h.) Also the
 * synthesis of a, b, c on the device (k_synth) against sums taken with GMP.
 */
#include "emu_cuda.h" /* first: the CUDA shims */

#include <gmp.h>
#include <stdio.h>
#include <string.h>

#include "gpu/ff/field.cuh"
#include "gpu/ntt/ntt_kernels.cuh"
#include "emu_fields.h"

using namespace cuzk_gpu;

static int checks, failures;
#define CHECK_MSG(cond, ...)                                                                 \
    do {                                                                                     \
        checks++;                                                                            \
        if (!(cond)) {                                                                       \
            failures++;                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                      \
            printf(__VA_ARGS__);                                                             \
            printf("\n");                                                                    \
        }                                                                                    \
    } while (0)

static size_t nblk(size_t n, unsigned t) { return (n + t - 1) / t; }

/* ---- GMP side: r, Montgomery conversion, the reference transforms */

/* mpz_t in a vector. */
struct mpz_class_t {
    mpz_t v;
    mpz_class_t() { mpz_init(v); }
    mpz_class_t(const mpz_class_t &o) { mpz_init_set(v, o.v); }
    mpz_class_t &operator=(const mpz_class_t &o)
    {
        mpz_set(v, o.v);
        return *this;
    }
    ~mpz_class_t() { mpz_clear(v); }
};
typedef std::vector<mpz_class_t> zvec;


template <class FR> struct ref {
    mpz_t r, R;
    ref()
    {
        mpz_inits(r, R, NULL);
        uint32_t p[8];
        for (int i = 0; i < 8; i++)
            p[i] = FR::p(i);
        mpz_import(r, 8, -1, 4, 0, 0, p);
        mpz_set_ui(R, 1);
        mpz_mul_2exp(R, R, 256);
        mpz_mod(R, R, r);
    }
    ~ref() { mpz_clears(r, R, NULL); }
    fe<FR> to_fe(const mpz_t x) /* Montgomery form */
    {
        mpz_t t;
        mpz_init(t);
        mpz_mul(t, x, R);
        mpz_mod(t, t, r);
        fe<FR> f;
        memset(f.v, 0, sizeof f.v);
        size_t cnt = 0;
        mpz_export(f.v, &cnt, -1, 4, 0, 0, t);
        mpz_clear(t);
        return f;
    }
    /* w_{2^k} = 5^((r - 1) / 2^k) */
    void root(mpz_t w, int k)
    {
        mpz_t e;
        mpz_init(e);
        mpz_sub_ui(e, r, 1);
        mpz_fdiv_q_2exp(e, e, k);
        mpz_set_ui(w, 5);
        mpz_powm(w, w, e, r);
        mpz_clear(e);
    }
    /* X_j = sum_i x_i w^(i j), in place (iterative radix 2). */
    void dft(zvec &x, const mpz_t w);
};

template <class FR> void ref<FR>::dft(zvec &x, const mpz_t w)
{
    const size_t n = x.size();
    int logn = 0;
    while (((size_t)1 << logn) < n)
        logn++;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        for (int b = 0; b < logn; b++)
            j |= ((i >> b) & 1) << (logn - 1 - b);
        if (j > i)
            mpz_swap(x[i].v, x[j].v);
    }
    mpz_t wm, wk, t, e;
    mpz_inits(wm, wk, t, e, NULL);
    for (size_t m = 2; m <= n; m <<= 1) {
        mpz_set_ui(e, n / m);
        mpz_powm(wm, w, e, r);
        for (size_t k = 0; k < n; k += m) {
            mpz_set_ui(wk, 1);
            for (size_t j = 0; j < m / 2; j++) {
                mpz_mul(t, wk, x[k + j + m / 2].v);
                mpz_mod(t, t, r);
                mpz_sub(x[k + j + m / 2].v, x[k + j].v, t);
                mpz_mod(x[k + j + m / 2].v, x[k + j + m / 2].v, r);
                mpz_add(x[k + j].v, x[k + j].v, t);
                mpz_mod(x[k + j].v, x[k + j].v, r);
                mpz_mul(wk, wk, wm);
                mpz_mod(wk, wk, r);
            }
        }
    }
    mpz_clears(wm, wk, t, e, NULL);
}

/* ---- the device side, as gpu_impl.cuh's host code drives it */

/* Blocks of at most 2^log_sh elements, tiles of 2^lob (0: by size, as on the device). */
struct geom {
    int log_sh, lob;
};

template <class FR> struct dev {
    ref<FR> &R;
    std::vector<fe<FR>> tw;
    int L = 0;
    geom g;
    dev(ref<FR> &r, geom gg) : R(r), g(gg) {}

    /* ensure_tw: w_{2^L}^i for i < 2^(L-1), L >= 12, by k_pow. */
    void ensure_tw(int need)
    {
        if (L >= need)
            return;
        L = need < 12 ? 12 : need;
        size_t half = (size_t)1 << (L - 1);
        tw.assign(half, fe<FR>::zero());
        mpz_t w, one;
        mpz_inits(w, one, NULL);
        R.root(w, L);
        mpz_set_ui(one, 1);
        fr_const wc, oc;
        fe<FR> wf = R.to_fe(w), of = R.to_fe(one);
        memcpy(wc.l, wf.v, 32);
        memcpy(oc.l, of.v, 32);
        fe<FR> *p = tw.data();
        launch_serial(nblk(half / 64 + 1, 128), 128,
                      [&] { k_pow<FR, false>(p, half, wc, oc); });
        mpz_clears(w, one, NULL);
    }

    /* ntt_core: the passes in ntt_rep_of<FR> (BN254: lazy), as on the device */
    void ntt_core(fe<FR> *v_, int logn, int inverse, int post, const fe<FR> *f)
    {
        typedef typename ntt_rep_of<FR>::type FN;
        fe<FN> *const v = (fe<FN> *)v_;
        size_t n = (size_t)1 << logn;
        ensure_tw(logn + 1);
        std::vector<fe<FN>> tmp(n);
        fr_const fc;
        memset(&fc, 0, sizeof fc);
        if (f)
            memcpy(fc.l, f->v, 32);
        if (logn == 0) {
            if (post == 1 || post == 2) {
                mpz_t one;
                mpz_init_set_ui(one, 1);
                fe<FR> of = R.to_fe(one);
                fr_const oc;
                memcpy(oc.l, of.v, 32);
                mpz_clear(one);
                launch_serial(1, 32, [&] { k_pow<FR, true>(v_, 1, oc, fc); });
            }
            return;
        }
        ntt_pass pl[32];
        const int P = ntt_passes(logn, g.log_sh, g.lob, post, pl);
        for (int i = 0; i < P; i++) {
            const ntt_pass &q = pl[i];
            const fe<FN> *src = q.src_v ? v : tmp.data();
            fe<FN> *dst = q.dst_v ? v : tmp.data();
            const fe<FN> *twp = (const fe<FN> *)tw.data();
            const int Lc = L;
            auto k = [&] {
                if (q.sh == 512 && q.first)
                    k_ntt_pass<FN, true, 512>(src, dst, logn, q.m0, q.s, q.lob, twp, Lc, inverse,
                                              q.post, fc);
                else if (q.sh == 512)
                    k_ntt_pass<FN, false, 512>(src, dst, logn, q.m0, q.s, q.lob, twp, Lc,
                                               inverse, q.post, fc);
                else if (q.first)
                    k_ntt_pass<FN, true, 1024>(src, dst, logn, q.m0, q.s, q.lob, twp, Lc,
                                               inverse, q.post, fc);
                else
                    k_ntt_pass<FN, false, 1024>(src, dst, logn, q.m0, q.s, q.lob, twp, Lc,
                                                inverse, q.post, fc);
            };
            launch_block(q.blocks, (unsigned)q.threads, k);
            if (q.copy_back)
                memcpy(v, tmp.data(), n * sizeof(fe<FN>));
        }
    }

    fe<FR> fe_of(const mpz_t x) { return R.to_fe(x); }
    fr_const fc_of(const mpz_t x)
    {
        fe<FR> f = R.to_fe(x);
        fr_const c;
        memcpy(c.l, f.v, 32);
        return c;
    }

    /* ntt_api: forward (after scaling by shift^i) or inverse (then scaling by shift^-i / n). */
    void ntt_api(fe<FR> *v, int logn, int inverse, const mpz_t shift)
    {
        size_t n = (size_t)1 << logn;
        mpz_t one, nn, ninv, sinv;
        mpz_inits(one, nn, ninv, sinv, NULL);
        mpz_set_ui(one, 1);
        if (!inverse) {
            if (shift) {
                fr_const sc = fc_of(shift), oc = fc_of(one);
                launch_serial(nblk(n / 64 + 1, 128), 128,
                              [&] { k_pow<FR, true>(v, n, sc, oc); });
            }
            ntt_core(v, logn, 0, 0, NULL);
        } else {
            mpz_set_ui(nn, n);
            mpz_invert(ninv, nn, R.r);
            fe<FR> nf = fe_of(ninv);
            ntt_core(v, logn, 1, shift ? 0 : 1, &nf);
            if (shift) {
                mpz_invert(sinv, shift, R.r);
                fr_const sc = fc_of(sinv), nc = fc_of(ninv);
                launch_serial(nblk(n / 64 + 1, 128), 128,
                              [&] { k_pow<FR, true>(v, n, sc, nc); });
            }
        }
        mpz_clears(one, nn, ninv, sinv, NULL);
    }

    /* h_api */
    void h(fe<FR> *a, fe<FR> *b, fe<FR> *c, int logn)
    {
        size_t n = (size_t)1 << logn;
        mpz_t nn, f1, f2;
        mpz_inits(nn, f1, f2, NULL);
        mpz_set_ui(nn, n);
        mpz_invert(f1, nn, R.r);
        mpz_mul(f2, f1, f1);
        mpz_mod(f2, f2, R.r);
        fe<FR> f[3] = {fe<FR>::zero(), fe_of(f1), fe_of(f2)};
        fe<FR> *bufs[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            ntt_core(bufs[k], logn, 1, h_post[k], h_fexp[k] ? &f[h_fexp[k]] : NULL);
            ntt_core(bufs[k], logn, 0, 0, NULL);
        }
        launch_serial(nblk(n, 256), 256, [&] { k_hmul<FR>(a, b, c, n); });
        mpz_clears(nn, f1, f2, NULL);
    }
};

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rnd64()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

template <class FR> static void rand_vec(ref<FR> &R, zvec &x, size_t n)
{
    x.assign(n, mpz_class_t());
    for (size_t i = 0; i < n; i++) {
        uint64_t w[4] = {rnd64(), rnd64(), rnd64(), rnd64()};
        mpz_import(x[i].v, 4, -1, 8, 0, 0, w);
        mpz_mod(x[i].v, x[i].v, R.r);
    }
    if (n > 2) { /* the edges of the field */
        mpz_set_ui(x[0].v, 0);
        mpz_sub_ui(x[1].v, R.r, 1);
    }
}

template <class FR>
static bool same(ref<FR> &R, const std::vector<fe<FR>> &got, const zvec &want)
{
    bool ok = got.size() == want.size();
    for (size_t i = 0; ok && i < got.size(); i++) {
        /* canonical Montgomery words, as the host's src/ff stores them */
        fe<FR> w = R.to_fe(want[i].v);
        ok = !memcmp(w.v, got[i].v, sizeof w.v);
    }
    return ok;
}

template <class FR> static void test_one(ref<FR> &R, const char *name, geom g, int logn)
{
    const size_t n = (size_t)1 << logn;
    dev<FR> D(R, g);
    zvec x, want;
    rand_vec(R, x, n);
    std::vector<fe<FR>> v(n);
    mpz_t w, t, sh, shp;
    mpz_inits(w, t, sh, shp, NULL);
    R.root(w, logn);
    /* forward, plain and on a coset */
    for (int coset = 0; coset < 2; coset++) {
        mpz_set_ui(sh, 7 + (unsigned)logn);
        want = x;
        if (coset) {
            mpz_set_ui(shp, 1);
            for (size_t i = 0; i < n; i++) {
                mpz_mul(want[i].v, want[i].v, shp);
                mpz_mod(want[i].v, want[i].v, R.r);
                mpz_mul(shp, shp, sh);
                mpz_mod(shp, shp, R.r);
            }
        }
        R.dft(want, w);
        for (size_t i = 0; i < n; i++)
            v[i] = R.to_fe(x[i].v);
        D.ntt_api(v.data(), logn, 0, coset ? sh : NULL);
        CHECK_MSG(same(R, v, want), "%s ntt 2^%d (%d, %d) coset=%d", name, logn, g.log_sh,
                  g.lob, coset);
        /* and back */
        D.ntt_api(v.data(), logn, 1, coset ? sh : NULL);
        CHECK_MSG(same(R, v, x), "%s intt(ntt) 2^%d (%d, %d) coset=%d", name, logn, g.log_sh,
                  g.lob, coset);
    }
    /* forward again from lazy inputs: the passes take any element below 2r (x + r for every
     * other element; the same residues, so the same transform) */
    {
        want = x;
        R.dft(want, w);
        fe<FR> r;
        for (int k = 0; k < FR::N; k++)
            r.v[k] = FR::p(k);
        for (size_t i = 0; i < n; i++) {
            v[i] = R.to_fe(x[i].v);
            if (i & 1)
                v[i] = add_nr_raw(v[i], r); /* below 2r < 2^256: no carry out */
        }
        D.ntt_api(v.data(), logn, 0, NULL);
        CHECK_MSG(same(R, v, want), "%s ntt of lazy inputs 2^%d (%d, %d)", name, logn,
                  g.log_sh, g.lob);
    }
    /* the inverse alone against the definition: x_i = 1/n sum_j X_j w^(-ij) */
    {
        want = x;
        mpz_invert(t, w, R.r);
        R.dft(want, t);
        mpz_set_ui(t, n);
        mpz_invert(t, t, R.r);
        for (size_t i = 0; i < n; i++) {
            mpz_mul(want[i].v, want[i].v, t);
            mpz_mod(want[i].v, want[i].v, R.r);
        }
        for (size_t i = 0; i < n; i++)
            v[i] = R.to_fe(x[i].v);
        D.ntt_api(v.data(), logn, 1, NULL);
        CHECK_MSG(same(R, v, want), "%s intt 2^%d (%d, %d)", name, logn, g.log_sh, g.lob);
    }
    /* H: coefficients of a, b, c (inverse DFT), times g^i with g = w_{2n}, DFT, a b - c. */
    {
        zvec in[3], ev[3];
        for (int k = 0; k < 3; k++)
            rand_vec(R, in[k], n);
        mpz_t winv, ninv, gg, gp;
        mpz_inits(winv, ninv, gg, gp, NULL);
        mpz_invert(winv, w, R.r);
        mpz_set_ui(ninv, n);
        mpz_invert(ninv, ninv, R.r);
        R.root(gg, logn + 1);
        for (int k = 0; k < 3; k++) {
            ev[k] = in[k];
            R.dft(ev[k], winv);
            mpz_set(gp, ninv);
            for (size_t i = 0; i < n; i++) {
                mpz_mul(ev[k][i].v, ev[k][i].v, gp);
                mpz_mod(ev[k][i].v, ev[k][i].v, R.r);
                mpz_mul(gp, gp, gg);
                mpz_mod(gp, gp, R.r);
            }
            R.dft(ev[k], w);
        }
        want.assign(n, mpz_class_t());
        for (size_t i = 0; i < n; i++) {
            mpz_mul(want[i].v, ev[0][i].v, ev[1][i].v);
            mpz_sub(want[i].v, want[i].v, ev[2][i].v);
            mpz_mod(want[i].v, want[i].v, R.r);
        }
        std::vector<fe<FR>> a(n), b(n), c(n);
        for (size_t i = 0; i < n; i++) {
            a[i] = R.to_fe(in[0][i].v);
            b[i] = R.to_fe(in[1][i].v);
            c[i] = R.to_fe(in[2][i].v);
        }
        D.h(a.data(), b.data(), c.data(), logn);
        CHECK_MSG(same(R, a, want), "%s H 2^%d (%d, %d)", name, logn, g.log_sh, g.lob);
        mpz_clears(winv, ninv, gg, gp, NULL);
    }
    mpz_clears(w, t, sh, shp, NULL);
}

/* k_synth: a = A.w, b = B.w, c = a b per row, from rows of records (a u32 signal index at
 * byte 0, the coefficient times R^2 at byte 8, `stride` bytes apart) and a canonical witness,
 * against the sums taken here with GMP. Rows of 0 to 6 terms, repeated signals, coefficients
 * 0, 1 and r - 1 among random ones. */
template <class FR> static void test_synth(ref<FR> &R, const char *name)
{
    const size_t n = 300, nsig = 64;
    std::vector<uint32_t> w(8 * nsig);
    zvec wv(nsig);
    for (size_t i = 0; i < nsig; i++) {
        uint64_t l[4] = {rnd64(), rnd64(), rnd64(), rnd64() >> 3};
        if (i < 2)
            l[0] = i, l[1] = l[2] = l[3] = 0; /* signals 0 and 1: the values 0 and 1 */
        mpz_import(wv[i].v, 4, -1, 8, 0, 0, l);
        mpz_mod(wv[i].v, wv[i].v, R.r);
        memset(&w[8 * i], 0, 32);
        mpz_export(&w[8 * i], NULL, -1, 4, 0, 0, wv[i].v);
    }
    for (size_t stride = 40; stride <= 48; stride += 8) {
        std::vector<uint64_t> rp[2];
        std::vector<uint8_t> rec[2];
        zvec want[2];
        for (int m = 0; m < 2; m++) {
            rp[m].assign(n + 1, 0);
            want[m].assign(n, mpz_class_t());
            mpz_t coef, cR, t;
            mpz_inits(coef, cR, t, NULL);
            for (size_t i = 0; i < n; i++) {
                rp[m][i] = rec[m].size() / stride;
                const unsigned terms = (unsigned)(rnd64() % 7);
                for (unsigned k = 0; k < terms; k++) {
                    const uint32_t sig = (uint32_t)(rnd64() % nsig);
                    const unsigned kind = (unsigned)(rnd64() % 8);
                    if (kind == 0)
                        mpz_set_ui(coef, 0);
                    else if (kind == 1)
                        mpz_set_ui(coef, 1);
                    else if (kind == 2)
                        mpz_sub_ui(coef, R.r, 1);
                    else {
                        uint64_t l[4] = {rnd64(), rnd64(), rnd64(), rnd64() >> 2};
                        mpz_import(coef, 4, -1, 8, 0, 0, l);
                        mpz_mod(coef, coef, R.r);
                    }
                    mpz_mul(t, coef, wv[sig].v);
                    mpz_add(want[m][i].v, want[m][i].v, t);
                    mpz_mod(want[m][i].v, want[m][i].v, R.r);
                    /* coef R^2: the Montgomery form of coef R */
                    mpz_mul(cR, coef, R.R);
                    mpz_mod(cR, cR, R.r);
                    const fe<FR> c2 = R.to_fe(cR);
                    const size_t o = rec[m].size();
                    rec[m].resize(o + stride, 0xa5);
                    memcpy(&rec[m][o], &sig, 4);
                    memcpy(&rec[m][o + 8], c2.v, 32);
                }
            }
            rp[m][n] = rec[m].size() / stride;
            mpz_clears(coef, cR, t, NULL);
        }
        std::vector<fe<FR>> a(n), b(n), c(n);
        launch_serial(nblk(n, 128), 128, [&] {
            k_synth<FR>(rp[0].data(), rec[0].data(), rp[1].data(), rec[1].data(),
                        (uint32_t)stride, w.data(), n, a.data(), b.data(), c.data());
        });
        zvec wc(n);
        for (size_t i = 0; i < n; i++) {
            mpz_mul(wc[i].v, want[0][i].v, want[1][i].v);
            mpz_mod(wc[i].v, wc[i].v, R.r);
        }
        CHECK_MSG(same(R, a, want[0]) && same(R, b, want[1]) && same(R, c, wc),
                  "%s k_synth (stride %zu) vs GMP", name, stride);
    }
}

template <class FR> static void test_curve(const char *name)
{
    ref<FR> R;
    test_synth(R, name);
    /* Pass geometries (the first is the device's, its tile chosen by size, lob 0:
     * cuzk__gpu_ntt_auto_lob, the others tiles it picks at larger sizes), then small blocks
     * (emulation only) that make 3 to 9 passes at these sizes. */
    static const geom device_g[] = {{10, 0}, {10, 3}, {10, 1}};
    static const int device_logn[] = {0, 1, 2, 3, 5, 10, 11, 12, 13};
    for (const geom &g : device_g)
        for (int logn : device_logn)
            test_one(R, name, g, logn);
    static const geom small_g[] = {{5, 2}, {6, 3}, {5, 1}};
    static const int small_logn[] = {4, 5, 7, 9, 12};
    for (const geom &g : small_g)
        for (int logn : small_logn)
            test_one(R, name, g, logn);
    printf("  %s: ntt, intt, cosets and H over %zu geometries\n", name,
           sizeof device_g / sizeof device_g[0] + sizeof small_g / sizeof small_g[0]);
}

/* The two r's as the device configures them (gpu_<curve>.cuh): the NTT passes in their lazy
 * siblings (BLS12-381's r is above R/4: only products of a canonical and a lazy operand, as
 * the passes make them, stay below 2r). */
struct BnFrH : LazyOf<BnFr> {
    static constexpr bool harvey = true; /* stored sums below 4r (ntt_kernels.cuh, hv_red) */
};
struct BnFrN : BnFr {
    typedef BnFrH ntt_rep;
};
struct BlsFrN : BlsFr {
    typedef LazyOf<BlsFr> ntt_rep;
};

int main()
{
    test_curve<BnFrN>("BN254 Fr (passes in [0, 4r), Harvey's butterflies)");
    test_curve<BlsFrN>("BLS12-381 Fr (passes in [0, 2r))");
    /* Every element a pass stored in shared memory was below its representation's bound. */
    CHECK_MSG(emu_ntt_over_bound == 0, "%ld elements stored above the passes' bound",
              emu_ntt_over_bound);
    printf("ntt_emu: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
