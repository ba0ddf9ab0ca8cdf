/*
 * MSMs over streamed point sets (src/gpu/msm/stream.cuh) on the host: the chunk loop with its two
 * buffers, copy stream and events (tests/gpu/emu_cuda.h's streams), each chunk's MSM a host
 * MSM over the chunk buffer's points (in place of the device's) that also checks the map of
 * points at infinity at the set index the loop gives it, the chunk sums added in Jacobian
 * coordinates. For both curves, G1 and G2, sets with and without points at infinity in front
 * (a key's C) and among the points, the whole set and a range inside it, chunks of the whole
 * range and of a half, a third, a seventh (1, 2, 3, 7 chunks), of 10 points (not a divisor)
 * and of one point: the streamed sum must equal the resident one (the same host MSM over the
 * whole range at once) and a plain sum of s_i P_i (each a double-and-add). Twice: with the
 * copy stream running its copies at once (a chunk copied into the buffer its predecessor is
 * still read from would change that sum) and deferred until their events are waited for (an
 * MSM that did not wait for its chunk's copy would read the chunk before). The same for a
 * batch of three scalar vectors over each chunk (run_batch), their scalars copied from host
 * vectors beside the points: each vector's sum must equal its resident one, and each chunk is
 * copied once for the three. Built and run by stream_emu_test.sh.
 */
#include "emu_cuda.h" /* first: the CUDA shims */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "cuzk/err.h"
}
#include "ec/ec_params.h"
#include "gpu/ff/field.cuh"
#include "gpu/ec/curve.cuh"
#include "emu_fields.h"

/* What gpu_internal.cuh gives stream.cuh on the device. */
extern "C" cuzk_err cuzk_errf(cuzk_errbuf *eb, cuzk_err e, const char *fmt, ...)
{
    if (eb) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
        va_end(ap);
    }
    return e;
}
static cuzk_err cuzk__gpu_fault(cuzk_errbuf *eb, const char *file, int line, const char *call,
                                cudaError_t)
{
    return cuzk_errf(eb, CUZK_GPU_FAULT, "%s:%d: %s failed", file, line, call);
}
#define CU(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess)                                                            \
            return cuzk__gpu_fault(eb, __FILE__, __LINE__, #call, e_);                    \
    } while (0)
#define TRY(expr)                                                                         \
    do {                                                                                  \
        cuzk_err r_ = (expr);                                                             \
        if (r_)                                                                           \
            return r_;                                                                    \
    } while (0)

#include "gpu/msm/stream.cuh"

using namespace cuzk_gpu;

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

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64()
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static long checks, failed;
static void check(bool ok, const char *what, const char *grp, const char *detail)
{
    checks++;
    if (!ok && failed++ < 20)
        printf("MISMATCH %s: %s, %s\n", what, grp, detail);
}

template <class F> static xyzz<F> from_jac(const uint64_t *w)
{
    F j[3];
    memcpy(j, w, sizeof j);
    xyzz<F> p;
    p.x = j[0];
    p.y = j[1];
    p.zz = j[2] * j[2];
    p.zzz = p.zz * j[2];
    return p;
}
template <class F> static void to_jac(uint64_t *w, const xyzz<F> &p)
{
    F j[3];
    xyzz_to_jacobian(j, p);
    memcpy(w, j, sizeof j);
}
template <class F> static bool same_point(const xyzz<F> &a, const xyzz<F> &b)
{
    if (a.is_inf() || b.is_inf())
        return a.is_inf() && b.is_inf();
    return a.x * b.zz == b.x * a.zz && a.y * b.zzz == b.y * a.zzz;
}

static bool bit(const uint8_t *sc, int b) { return (sc[b / 8] >> (b % 8)) & 1; }

/* The MSM a chunk runs, on the host: sum s_i P_i by Horner over the scalars' bits (one
 * doubling per bit, one addition per set bit). Checks on the way that the map says infinity
 * exactly for the points whose bytes are zero, at set index set_lo + i. */
template <class F>
static xyzz<F> horner(const affine<F> *pts, size_t n, const uint8_t *sc, const uint32_t *map,
                      size_t set_lo, const char *grp)
{
    bool map_ok = true;
    for (size_t i = 0; i < n; i++) {
        const size_t k = set_lo + i;
        map_ok &= ((map[k / 32] >> (k % 32)) & 1) == (pts[i].is_inf() ? 1u : 0u);
    }
    check(map_ok, "map of points at infinity at the chunk's set index", grp, "");
    int top = -1; /* the highest bit set in any scalar */
    for (size_t i = 0; i < n; i++)
        for (int b = 255; b > top; b--)
            if (bit(sc + 32 * i, b))
                top = b;
    xyzz<F> acc = xyzz<F>::inf();
    for (int b = top; b >= 0; b--) {
        xyzz_dbl(acc);
        for (size_t i = 0; i < n; i++)
            if (bit(sc + 32 * i, b))
                xyzz_add_affine(acc, pts[i]);
    }
    return acc;
}

/* s P by double-and-add from the low bit. */
template <class F> static xyzz<F> mul(const affine<F> &p, const uint8_t *sc)
{
    xyzz<F> acc = xyzz<F>::inf(), d = xyzz<F>::inf();
    xyzz_add_affine(d, p);
    for (int b = 0; b < 256; b++) {
        if (bit(sc, b))
            xyzz_add(acc, d);
        xyzz_dbl(d);
    }
    return acc;
}

template <class F> static void group(const char *grp, const F &gx, const F &gy)
{
    const size_t NH = 97; /* host points */
    const size_t pb = sizeof(affine<F>), limbs = 3 * sizeof(F) / 8;
    static_assert(3 * sizeof(F) <= 36 * 8, "stream.cuh's part sum");
    affine<F> g;
    g.x = gx;
    g.y = gy;
    std::vector<affine<F>> host;
    xyzz<F> acc = xyzz<F>::inf();
    affine<F> zero;
    zero.x = F::zero();
    zero.y = F::zero();
    for (size_t i = 0; i < NH; i++) {
        xyzz_add_affine(acc, g);
        affine<F> a;
        a.x = acc.x * inv(acc.zz);
        a.y = acc.y * inv(acc.zzz);
        host.push_back(a);
    }
    for (int with_inf = 0; with_inf < 2; with_inf++) {
        std::vector<affine<F>> h = host;
        if (with_inf) { /* points at infinity among the points, at chunk edges too */
            static const size_t at[] = {0, 9, 10, 11, 33, 50, 51, 52, 53, 96};
            for (size_t i : at)
                h[i] = zero;
            h[40] = h[39]; /* the same point twice in a row */
        }
        for (size_t lead : {(size_t)0, (size_t)5}) {
            const size_t n = lead + NH;
            /* The resident set: lead points at infinity, then the host's. */
            std::vector<affine<F>> res(lead, zero);
            res.insert(res.end(), h.begin(), h.end());
            std::vector<uint32_t> map((n + 31) / 32 + 2, 0);
            /* The map in pieces of a word and of three (the tasks of stream_api.cuh). */
            size_t n_inf = 0;
            for (size_t w0 = 0, step = 1; w0 < (n + 31) / 32; w0 += step, step = 4 - step)
                n_inf += cuzk_gpu_stream::inf_map_words((const uint8_t *)h.data(), pb, lead, NH,
                                                        map.data(), w0, w0 + step);
            size_t want_inf = 0;
            for (const affine<F> &p : res)
                want_inf += p.is_inf();
            check(n_inf == want_inf, "count of points at infinity", grp, "");
            check(map[(n + 31) / 32] == 0, "map words past the set untouched", grp, "");
            /* Scalars: zeros, ones, small, 64-bit, a few of 253 bits. */
            std::vector<uint8_t> sc(32 * n, 0);
            for (size_t i = 0; i < n; i++) {
                const uint64_t r = rnd64();
                uint64_t w[4] = {0, 0, 0, 0};
                switch (r % 8) {
                case 0: break;
                case 1: w[0] = 1; break;
                case 2: case 3: case 4: w[0] = r >> 52; break;
                case 5: case 6: w[0] = rnd64(); break;
                default:
                    for (int k = 0; k < 4; k++)
                        w[k] = rnd64();
                    w[3] >>= 3;
                }
                memcpy(&sc[32 * i], w, 32);
            }
            struct {
                size_t off, count;
            } ranges[] = {{0, n}, {3, n - 7}};
            for (auto rg : ranges) {
                char what[128];
                xyzz<F> plain = xyzz<F>::inf();
                for (size_t i = 0; i < rg.count; i++)
                    xyzz_add(plain, mul(res[rg.off + i], &sc[32 * (rg.off + i)]));
                const uint8_t *s0 = &sc[32 * rg.off];
                const xyzz<F> resident =
                    horner(res.data() + rg.off, rg.count, s0, map.data(), rg.off, grp);
                snprintf(what, sizeof what, "lead %zu, points at infinity %d, [%zu, +%zu)", lead,
                         with_inf, rg.off, rg.count);
                check(same_point(resident, plain), "resident sum = plain sum", grp, what);
                /* The batch's vectors: the range's scalars, and two others of the range's
                 * length (the same scalars turned by 7 and by 30 places). */
                const size_t NB = 3;
                std::vector<std::vector<uint8_t>> bv(NB);
                xyzz<F> bres[NB];
                for (size_t j = 0; j < NB; j++) {
                    bv[j].resize(32 * rg.count);
                    for (size_t i = 0; i < rg.count; i++)
                        memcpy(&bv[j][32 * i], s0 + 32 * ((i + 7 * j * j + j) % rg.count), 32);
                    bres[j] = horner(res.data() + rg.off, rg.count, bv[j].data(), map.data(),
                                     rg.off, grp);
                }
                const uint8_t *bptr[NB] = {bv[0].data(), bv[1].data(), bv[2].data()};
                const size_t c = rg.count;
                const size_t sizes[] = {c, (c + 1) / 2, (c + 2) / 3, (c + 6) / 7, 10, 1};
                const size_t want_k[] = {1, 2, 3, 7, (c + 9) / 10, c};
                for (int defer = 0; defer < 2; defer++) {
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                        const cuzk_gpu_stream::view v = {(const uint8_t *)h.data(), lead, pb,
                                                         sizes[si]};
                        emu_defer_streams = defer;
                        cuzk__gpu_stream_bufs *b = NULL;
                        cuzk_errbuf eb = {{0}};
                        emu_defer_streams = defer;
                        cuzk_err e = cuzk_gpu_stream::ensure_bufs(&b, sizes[si] * pb, 0, NULL, 0,
                                                                  &eb);
                        /* poison: a chunk read before its copy is not a point of the set */
                        for (int k = 0; k < 2 && !e; k++)
                            memset(b->d[k], 0x5a, b->cap);
                        size_t calls = 0;
                        auto msm = [&](const void *d_pts, size_t set_lo, size_t len, size_t lo,
                                       size_t, const uint8_t *, uint64_t *part) -> cuzk_err {
                            calls++;
                            check(set_lo == rg.off + lo && len <= sizes[si], "chunk geometry",
                                  grp, what);
                            to_jac(part, horner((const affine<F> *)d_pts, len, s0 + 32 * lo,
                                                map.data(), set_lo, grp));
                            return CUZK_OK;
                        };
                        auto add = [&](uint64_t *a, const uint64_t *p) {
                            xyzz<F> x = from_jac<F>(a);
                            xyzz_add(x, from_jac<F>(p));
                            to_jac(a, x);
                        };
                        uint64_t out[36];
                        const long copies0 = emu_copies;
                        if (!e)
                            e = cuzk_gpu_stream::run_batch(b, v, (cudaStream_t)NULL, rg.off,
                                                           rg.count, limbs, 1, NULL, msm, add,
                                                           out, &eb);
                        char d2[1024];
                        snprintf(d2, sizeof d2, "%s, chunks of %zu, %s copies: %s", what,
                                 sizes[si], defer ? "deferred" : "immediate",
                                 e ? eb.msg : "ok");
                        check(!e, "streamed MSM runs", grp, d2);
                        check(calls == want_k[si], "chunk count", grp, d2);
                        /* one copy per chunk, and a memset for each chunk with lead points */
                        check(b && b->copy->ran == b->copy->queued, "copy stream idle", grp,
                              d2);
                        check(emu_copies - copies0 >= (long)calls, "copies run", grp, d2);
                        if (!e)
                            check(same_point(from_jac<F>(out), resident),
                                  "streamed sum = resident sum", grp, d2);
                        cuzk_gpu_stream::free_bufs(b);

                        /* The batch over the same chunks. */
                        b = NULL;
                        e = cuzk_gpu_stream::ensure_bufs(&b, sizes[si] * pb, NB * sizes[si] * 32,
                                                         NULL, 0, &eb);
                        for (int k = 0; k < 2 && !e; k++) {
                            memset(b->d[k], 0x5a, b->cap);
                            memset(b->ds[k], 0x5a, b->sc_cap);
                        }
                        calls = 0;
                        auto bmsm = [&](const void *d_pts, size_t set_lo, size_t len, size_t lo,
                                        size_t j, const uint8_t *d_sc,
                                        uint64_t *part) -> cuzk_err {
                            calls++;
                            check(set_lo == rg.off + lo && len <= sizes[si] && j < NB &&
                                      d_sc == (const uint8_t *)b->ds[(lo / sizes[si]) & 1] +
                                                  j * sizes[si] * 32,
                                  "batch chunk geometry", grp, what);
                            to_jac(part, horner((const affine<F> *)d_pts, len, d_sc,
                                                map.data(), set_lo, grp));
                            return CUZK_OK;
                        };
                        uint64_t outs[NB * 36];
                        const long bcopies0 = emu_copies;
                        if (!e)
                            e = cuzk_gpu_stream::run_batch(b, v, (cudaStream_t)NULL, rg.off,
                                                           rg.count, limbs, NB, bptr, bmsm, add,
                                                           outs, &eb);
                        snprintf(d2, sizeof d2, "%s, chunks of %zu, %s copies, batch of %zu: %s",
                                 what, sizes[si], defer ? "deferred" : "immediate", NB,
                                 e ? eb.msg : "ok");
                        check(!e, "streamed batch runs", grp, d2);
                        check(calls == NB * want_k[si], "batch MSM count", grp, d2);
                        check(b && b->copy->ran == b->copy->queued, "batch copy stream idle",
                              grp, d2);
                        /* per chunk: the points once (and a memset with lead points), and a
                         * copy of each vector's slice */
                        check(emu_copies - bcopies0 >= (long)(want_k[si] * (1 + NB)) &&
                                  emu_copies - bcopies0 <= (long)(want_k[si] * (2 + NB)),
                              "batch copies: the points once a chunk", grp, d2);
                        for (size_t j = 0; j < NB && !e; j++)
                            check(same_point(from_jac<F>(outs + j * limbs), bres[j]),
                                  "streamed batch sum = resident sum of its vector", grp, d2);
                        cuzk_gpu_stream::free_bufs(b);
                    }
                }
            }
        }
    }
    /* An empty range: no chunk, the sum is infinity. */
    const cuzk_gpu_stream::view v = {(const uint8_t *)host.data(), 0, pb, 8};
    cuzk__gpu_stream_bufs *b = NULL;
    cuzk_errbuf eb = {{0}};
    uint64_t out[36];
    memset(out, 0xff, sizeof out);
    size_t calls = 0;
    cuzk_err e = cuzk_gpu_stream::ensure_bufs(&b, 8 * pb, 0, NULL, 0, &eb);
    if (!e)
        e = cuzk_gpu_stream::run_batch(
            b, v, (cudaStream_t)NULL, 4, 0, limbs, 1, NULL,
            [&](const void *, size_t, size_t, size_t, size_t, const uint8_t *,
                uint64_t *) -> cuzk_err {
                calls++;
                return CUZK_OK;
            },
            [](uint64_t *, const uint64_t *) {}, out, &eb);
    check(!e && calls == 0 && from_jac<F>(out).is_inf(), "empty range: infinity", grp, "");
    cuzk_gpu_stream::free_bufs(b);
}

int main(void)
{
    group<fe<BnFpL>>("bn254 G1", from_w<BnFpL>(bn_g1x), from_w<BnFpL>(bn_g1y));
    group<fe<BlsFpL>>("bls12-381 G1", from_w<BlsFpL>(bls_g1x), from_w<BlsFpL>(bls_g1y));
    group<fe2<BnFp>>("bn254 G2", from_w2<BnFp>(bn_g2x), from_w2<BnFp>(bn_g2y));
    group<fe2<BlsFp>>("bls12-381 G2", from_w2<BlsFp>(bls_g2x), from_w2<BlsFp>(bls_g2y));
    printf("stream_emu: %ld checks, %ld failed\n", checks, failed);
    return failed != 0;
}
