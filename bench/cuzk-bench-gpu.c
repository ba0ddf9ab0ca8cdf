/*
 * GPU benchmark: MSM (G1, G2, both curves; random, mostly-0/1 and skewed scalars) and NTT / H
 * over Fr.
 * Points stay resident on the device (uploaded once); scalars come from pinned host memory on
 * every call, as in a prover. Times are wall clock around the synchronous API call: best and
 * median of the repetitions after one warm-up. The MSMs are one-off (CUZK_GPU_SCALARS_ONCE):
 * from 2^21 scalars their upload overlaps their work, BLS12-381 G2's from 2^24 (src/gpu/gpu.h).
 *
 *   cuzk-bench-gpu [--max-log K] [--reps R] [--out FILE] [--only TAGS] [--logs K,K..]
 *                  [--scalars KIND[,KIND..]] [--inf-every K] [--tables C] [--no-ba-fit]
 *                  [--dump DIR] [--stream CHUNK]
 *
 * --only: comma-separated substrings of the row tags "ntt-bn254", "h-bls12-381", "g1-bn254",
 * "g2-bls12-381", ...: only matching rows run (e.g. --only g1 for every G1 MSM). --logs: only
 * these sizes (each still capped by --max-log; the NTT rows, 2^18 to 2^20, 2^22 and 2^24 to
 * 2^27, are not; G1's MSMs are 2^16, 2^20, 2^22, 2^24 and 2^26, G2's 2^20, 2^22 and 2^24).
 * Both exist so a profiler sees one case.
 *
 * --scalars: the scalar kinds of the MSM rows (default random,sparse01): random (253-bit),
 * sparse01 (witness-like: 50% zero, 42% one, 8% random), and three skewed kinds that put the
 * entries of each window into few buckets or few windows: equal (every scalar the same random
 * value: each window's entries all in one bucket), few16 (each scalar one of 16 random values)
 * and u64 (random below 2^64: only the lowest windows carry entries).
 *
 * Points: 2^20 distinct multiples of the generator, repeated to fill larger sets (the work an
 * MSM does does not depend on the points being distinct). They are never the point at
 * infinity, which a proving key's A and B sets often are (signals absent from a matrix): an
 * accumulation that handles infinity on a slow path looks better here than in a proof.
 * --inf-every K makes every K-th point the
 * point at infinity (the row's "scalars" column then says so), to measure that case.
 *
 * Results: point i is (i mod 2^20 + 1) S for a random S, so every MSM row's result is checked
 * on the host: it must be (sum_i s_i c_i) S with c_i = i mod 2^20 + 1 (0 for a point at
 * infinity); a wrong result ends the bench with an error (exit 1).
 *
 * --tables C: fixed-base tables on every MSM point set (cuzk_gpu_points_tables with at most C
 * copies, 0: as many as the windows need), built once for the set's largest size; the row's
 * "scalars" column then ends in "+tabT" (T copies) and the build time goes to stderr.
 *
 * The context's batch-affine chunk is fitted to the memory the point set and its tables leave
 * (cuzk_gpu_ba_fit: up to 16 GiB, quads for G1 from 8 GiB), as cuzk prove's key context;
 * --no-ba-fit keeps the default chunk (4 GiB, no quads), as the daemon's GPU workers, whose
 * memory budget counts it. stderr names the setting before each point set's rows.
 *
 * --stream CHUNK: each MSM row also runs over the same points streamed from pinned host memory
 * in chunks of CHUNK bytes (gpu.h cuzk_gpu_points_host; a size such as 1GiB, 256MiB or bytes):
 * a second row "MSM Gn str" and the overhead, its median over the resident median, in its
 * scalars column ("x1.07"); the streamed result is checked as the resident one is.
 *
 * --batch K,K..: with --stream, each streamed row is followed by one row per batch size K: the
 * MSMs of K scalar vectors over the streamed points in one batch (cuzk_gpu_msm_batch: each
 * chunk copied once for the K), the vectors page-locked in host memory (the row's scalars
 * shifted by 0 .. K - 1 places); its times are per MSM (the batch's over K), and its scalars
 * column the median over the single streamed MSM's ("x0.41"). Every vector's result is checked.
 *
 * --dump DIR: for each MSM size set, also write the points and scalars it used and each row's
 * result into DIR (an existing directory), so another MSM (scripts/device/sppark-side-by-side.sh
 * runs sppark's) can be run on the same inputs and compared; DIR/README states the layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec/ec.h"
#include "gpu/gpu.h"

static cuzk_gpu_ctx *ctx;
static int reps = 5, max_log = 26;
static FILE *outf;
static const char *only;    /* --only filter, NULL = everything */
static int logs_sel[16], nlogs_sel; /* --logs filter */
/* Scalar kinds (--scalars). */
enum { SK_RANDOM, SK_SPARSE01, SK_EQUAL, SK_FEW16, SK_U64, SK_N };
static const char *const sk_name[SK_N] = {"random", "sparse01", "equal", "few16", "u64"};
static int sk_on[SK_N] = {1, 1, 0, 0, 0}; /* the kinds run (default random, sparse01) */
static unsigned inf_every;  /* --inf-every K: every K-th point at infinity (0: none) */
static int tables = -1;     /* --tables C: max copies of fixed-base tables (-1: none) */
static int ba_fit = 1;      /* --no-ba-fit: 0 */
static const char *dump_dir; /* --dump DIR, NULL = none */
static size_t stream_chunk; /* --stream CHUNK bytes (0: resident rows only) */
static int batch_k[8], nbatch; /* --batch K,K.. (with --stream) */

static const char dump_readme[] =
    "Written by cuzk-bench-gpu --dump. For each MSM point set TAG (g1-bn254, g2-bls12-381, ...)\n"
    "run for sizes 2^k, k <= K (K the largest size run):\n"
    "  TAG-K.points   2^K affine points exactly as uploaded to the device: x || y, for G2 each\n"
    "                 coordinate c0 || c1; each Fp element n8 bytes (32 BN254, 48 BLS12-381) of\n"
    "                 little-endian 64-bit limbs of a*R mod p, R = 2^256 (BN254) or 2^384\n"
    "                 (Montgomery form); infinity would be all-zero bytes (none is generated).\n"
    "  TAG-K-S.scalars  2^K scalars of 32 bytes: little-endian canonical integers below r (not\n"
    "                 Montgomery), S the scalar kind (random, sparse01, equal, few16, u64).\n"
    "  TAG-k-S.result  one text line: the MSM of the first 2^k points and scalars as a canonical\n"
    "                 affine point, big-endian hex: '0xX 0xY' (G1) or\n"
    "                 '0xX.c0 0xX.c1 0xY.c0 0xY.c1' (G2); infinity is all zeros.\n"
    "The row of size 2^k uses the first 2^k points and scalars of the TAG-K files.\n";

static void dump_write(const char *name, const void *p, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dump_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "cuzk-bench-gpu: --dump: cannot write %s\n", path);
        exit(1);
    }
}

static int want(const char *kind, cuzk_gpu_curve curve)
{
    if (!only)
        return 1;
    char tag[64], buf[256];
    snprintf(tag, sizeof tag, "%s-%s", kind, curve == CUZK_GPU_BN254 ? "bn254" : "bls12-381");
    snprintf(buf, sizeof buf, "%s", only);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        if (strstr(tag, t))
            return 1;
    return 0;
}

static int want_log(int k)
{
    if (k > max_log)
        return 0;
    if (!nlogs_sel)
        return 1;
    for (int i = 0; i < nlogs_sel; i++)
        if (logs_sel[i] == k)
            return 1;
    return 0;
}
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Prints a row; returns the median. */
static double row(const char *what, const char *curve, int logn, const char *scal, double *t,
                  int k)
{
    qsort(t, k, sizeof *t, cmpd);
    char line[256];
    snprintf(line, sizeof line, "| %-10s | %-9s | 2^%-2d | %-9s | %9.2f | %9.2f |", what, curve,
             logn, scal, t[0] * 1e3, t[k / 2] * 1e3);
    printf("%s\n", line);
    fflush(stdout);
    if (outf) {
        fprintf(outf, "%s\n", line);
        fflush(outf);
    }
    return t[k / 2];
}

static void die(const char *what, cuzk_err e, cuzk_errbuf *eb)
{
    fprintf(stderr, "cuzk-bench-gpu: %s: %s: %s\n", what, cuzk_strerror(e), eb->msg);
    exit(1);
}

/* A random 253-bit scalar (below r for both curves). */
static void rnd_scalar(uint64_t l[4])
{
    l[0] = rnd(), l[1] = rnd(), l[2] = rnd(), l[3] = rnd() & 0x1fffffffffffffffULL;
}

/* 32-byte canonical scalars of one kind (SK_*, see --scalars). */
static void fill_scalars(uint8_t *s, size_t n, int kind)
{
    uint64_t pool[16][4];
    if (kind == SK_EQUAL || kind == SK_FEW16)
        for (int k = 0; k < 16; k++)
            rnd_scalar(pool[k]);
    for (size_t i = 0; i < n; i++) {
        uint64_t l[4] = {0, 0, 0, 0};
        if (kind == SK_RANDOM) {
            rnd_scalar(l);
        } else if (kind == SK_SPARSE01) {
            const uint64_t r = rnd() % 100;
            if (r >= 92)
                rnd_scalar(l);
            else if (r >= 50)
                l[0] = 1;
        } else if (kind == SK_EQUAL || kind == SK_FEW16) {
            memcpy(l, pool[kind == SK_EQUAL ? 0 : rnd() & 15], 32);
        } else {
            l[0] = rnd(); /* SK_U64 */
        }
        memcpy(s + 32 * i, l, 32);
    }
}

/* Point i = (i mod base_n + 1) S (G##_step = S), or infinity (--inf-every). */
#define GEN_POINTS(G)                                                                         \
    static G##_jac G##_step;                                                                  \
    static void *G##_points(size_t base_n, size_t n)                                          \
    {                                                                                         \
        G##_jac *jac = malloc(base_n * sizeof *jac), g, step;                                 \
        G##_affine *pts = malloc(n * sizeof *pts);                                            \
        void *scr = malloc(base_n * sizeof(jac[0].Z));                                        \
        if (!jac || !pts || !scr) {                                                           \
            fprintf(stderr, "out of host memory\n");                                          \
            exit(1);                                                                          \
        }                                                                                     \
        G##_from_affine(&g, &G##_GEN);                                                        \
        uint64_t k[4] = {rnd(), rnd(), rnd(), rnd() & 0xfffffffffffffffULL};                  \
        G##_mul_limbs(&step, &g, k, 4);                                                       \
        G##_step = step;                                                                      \
        jac[0] = step;                                                                        \
        for (size_t i = 1; i < base_n; i++)                                                   \
            G##_add(&jac[i], &jac[i - 1], &step);                                             \
        G##_batch_to_affine(pts, jac, base_n, scr);                                           \
        for (size_t i = base_n; i < n; i += base_n)                                           \
            memcpy(pts + i, pts, (n - i < base_n ? n - i : base_n) * sizeof *pts);            \
        for (size_t i = inf_every ? inf_every - 1 : n; i < n; i += inf_every)                 \
            memset(pts + i, 0, sizeof *pts); /* (0, 0): the point at infinity */              \
        free(jac);                                                                            \
        free(scr);                                                                            \
        return pts;                                                                           \
    }
GEN_POINTS(bn254_g1)
GEN_POINTS(bn254_g2)
GEN_POINTS(bls12_381_g1)
GEN_POINTS(bls12_381_g2)

/* Whether an MSM result (Jacobian, device limb layout = NAME_jac) over the first m points of
 * G##_points(base_n, ...) and the scalars sc is (sum_i s_i c_i) S, c_i = i mod base_n + 1 (0
 * at infinity): the sum as an integer (below 2^253 2^20 2^26 < 2^320), then reduced in Fr. */
#define GEN_CHECK(G, FR)                                                                      \
    static int G##_check(const uint64_t *out, const uint8_t *sc, size_t m, size_t base_n)    \
    {                                                                                         \
        uint64_t acc[5] = {0, 0, 0, 0, 0};                                                    \
        for (size_t i = 0; i < m; i++) {                                                      \
            if (inf_every && i % inf_every == inf_every - 1)                                  \
                continue;                                                                     \
            const uint64_t c = i % base_n + 1;                                                \
            uint64_t s[4];                                                                    \
            memcpy(s, sc + 32 * i, 32);                                                       \
            unsigned __int128 t = 0;                                                          \
            for (int k = 0; k < 4; k++) {                                                     \
                t += (unsigned __int128)s[k] * c + acc[k];                                    \
                acc[k] = (uint64_t)t;                                                         \
                t >>= 64;                                                                     \
            }                                                                                 \
            acc[4] += (uint64_t)t;                                                            \
        }                                                                                     \
        FR##_t e, w, t64, x;                                                                  \
        FR##_from_u64(&x, 1ULL << 32);                                                        \
        FR##_mul(&t64, &x, &x); /* 2^64 */                                                    \
        FR##_set_zero(&e);                                                                    \
        FR##_set_one(&w);                                                                     \
        for (int k = 0; k < 5; k++) {                                                         \
            FR##_from_u64(&x, acc[k]);                                                        \
            FR##_mul(&x, &x, &w);                                                             \
            FR##_add(&e, &e, &x);                                                             \
            FR##_mul(&w, &w, &t64);                                                           \
        }                                                                                     \
        uint64_t el[4];                                                                       \
        FR##_to_canonical(el, &e);                                                            \
        G##_jac want, got;                                                                    \
        G##_mul_limbs(&want, &G##_step, el, 4);                                               \
        memcpy(&got, out, sizeof got);                                                        \
        return G##_eq(&got, &want);                                                           \
    }
GEN_CHECK(bn254_g1, bn254_fr)
GEN_CHECK(bn254_g2, bn254_fr)
GEN_CHECK(bls12_381_g1, bls12_381_fr)
GEN_CHECK(bls12_381_g2, bls12_381_fr)

/* An MSM result (Jacobian, device limb layout = NAME_jac) as canonical affine big-endian hex,
 * one "0x..." per base-field coordinate, as DIR/README describes. */
#define GEN_RESULT_HEX(G, F)                                                                  \
    static void G##_result_hex(char *s, const uint64_t *out)                                  \
    {                                                                                         \
        G##_jac j;                                                                            \
        G##_affine a;                                                                         \
        memcpy(&j, out, sizeof j);                                                            \
        G##_to_affine(&a, &j);                                                                \
        const F##_t *c = (const F##_t *)&a;                                                   \
        for (size_t i = 0; i < sizeof a / sizeof *c; i++) {                                   \
            uint8_t b[sizeof *c];                                                             \
            F##_to_bytes_be(b, &c[i]);                                                        \
            s += sprintf(s, "%s0x", i ? " " : "");                                            \
            for (size_t k = 0; k < sizeof b; k++)                                             \
                s += sprintf(s, "%02x", b[k]);                                                \
        }                                                                                     \
    }
GEN_RESULT_HEX(bn254_g1, bn254_fp)
GEN_RESULT_HEX(bn254_g2, bn254_fp)
GEN_RESULT_HEX(bls12_381_g1, bls12_381_fp)
GEN_RESULT_HEX(bls12_381_g2, bls12_381_fp)

/* --batch: K MSMs over the streamed set gs in one batch, vector j the m scalars from sc's
 * j-th on (sc holds m scalars; the K - 1 after them are random), page-locked. */
static void bench_batch(cuzk_gpu_points *gs, cuzk_gpu_curve curve, cuzk_gpu_group g, int K, const uint8_t *sc, size_t m, size_t base_n,
                        int (*check)(const uint64_t *, const uint8_t *, size_t, size_t),
                        const char *what, const char *cname, int logn, double single)
{
    cuzk_errbuf eb = {{0}};
    const size_t bytes = 32 * (m + (size_t)K);
    uint8_t *buf = malloc(bytes);
    const void *vec[64];
    uint64_t *outs = calloc((size_t)K, 36 * sizeof(uint64_t));
    if (!buf || !outs || K > 64) {
        fprintf(stderr, "cuzk-bench-gpu: --batch %d: out of memory (or over 64)\n", K);
        exit(1);
    }
    memcpy(buf, sc, 32 * m);
    for (int j = 0; j < K; j++) {
        uint64_t l[4];
        rnd_scalar(l);
        memcpy(buf + 32 * (m + j), l, 32);
        vec[j] = buf + 32 * (size_t)j;
    }
    cuzk_err e = cuzk_gpu_pin(ctx, buf, bytes, &eb);
    if (e)
        die("batch pin", e, &eb);
    double t[32];
    e = cuzk_gpu_msm_batch(ctx, gs, 0, m, (size_t)K, vec, 0, outs, &eb); /* warm-up */
    for (int r = 0; r < reps && !e; r++) {
        double a = now();
        e = cuzk_gpu_msm_batch(ctx, gs, 0, m, (size_t)K, vec, 0, outs, &eb);
        t[r] = (now() - a) / K;
    }
    if (e)
        die("batch msm", e, &eb);
    const size_t limbs = cuzk_gpu_point_limbs(curve, g);
    for (int j = 0; j < K; j++)
        if (!check(outs + j * limbs, buf + 32 * (size_t)j, m, base_n)) {
            fprintf(stderr, "cuzk-bench-gpu: batch of %d %s %s 2^%d: vector %d wrong\n", K,
                    what, cname, logn, j);
            exit(1);
        }
    qsort(t, reps, sizeof *t, cmpd);
    char sw[24], ss[48];
    snprintf(sw, sizeof sw, "%s b%d", what, K);
    snprintf(ss, sizeof ss, "x%.2f", t[reps / 2] / single);
    row(sw, cname, logn, ss, t, reps);
    cuzk_gpu_unpin(ctx, buf);
    free(buf);
    free(outs);
}

static void bench_msm(cuzk_gpu_curve curve, cuzk_gpu_group g, const int *logs, int nlogs,
                      uint8_t *const *scs)
{
    cuzk_errbuf eb = {{0}};
    int top = 0;
    if (!want(g == CUZK_GPU_G1 ? "g1" : "g2", curve))
        return;
    for (int i = 0; i < nlogs; i++)
        if (want_log(logs[i]) && logs[i] > top)
            top = logs[i];
    if (!top)
        return;
    size_t n = (size_t)1 << top, base_n = n < (1u << 20) ? n : (1u << 20);
    double t0 = now();
    void *pts = curve == CUZK_GPU_BN254
                    ? (g == CUZK_GPU_G1 ? bn254_g1_points(base_n, n) : bn254_g2_points(base_n, n))
                    : (g == CUZK_GPU_G1 ? bls12_381_g1_points(base_n, n)
                                        : bls12_381_g2_points(base_n, n));
    cuzk_gpu_points *gp;
    cuzk_err e = cuzk_gpu_points_upload(ctx, curve, g, pts, n, &gp, &eb);
    if (e)
        die("upload", e, &eb);
    fprintf(stderr, "  (points for %s G%d 2^%d ready in %.1f s)\n",
            curve == CUZK_GPU_BN254 ? "bn254" : "bls12-381", g, top, now() - t0);
    if (tables >= 0) {
        t0 = now();
        if ((e = cuzk_gpu_points_tables(gp, tables, &eb)))
            die("tables", e, &eb);
        fprintf(stderr, "  (tables: %d copies, %.1f GiB, built in %.2f s)\n",
                cuzk_gpu_points_copies(gp), cuzk_gpu_points_bytes(gp) / 1073741824.0,
                now() - t0);
    }
    /* --stream: the same points from pinned host memory, chunk by chunk; one MSM now makes its
     * chunk buffers, so that the fitted batch-affine chunk below leaves them room. */
    cuzk_gpu_points *gs = NULL;
    if (stream_chunk) {
        const size_t pb = cuzk_gpu_point_bytes(curve, g), cp = stream_chunk / pb;
        uint64_t o1[36];
        if ((e = cuzk_gpu_pin(ctx, pts, n * pb, &eb)) ||
            (e = cuzk_gpu_points_host(ctx, curve, g, 0, pts, n, cp ? cp : 1, &gs, &eb)) ||
            (e = cuzk_gpu_msm(ctx, gs, 0, 1, scs[SK_RANDOM], 0, o1, &eb)))
            die("stream", e, &eb);
        fprintf(stderr, "  (streamed: chunks of %zu points, buffers %.2f GiB)\n", cp ? cp : 1,
                cuzk_gpu_stream_buffer_bytes(ctx) / 1073741824.0);
    }
    /* The bench's context proves alone on the device: its batch-affine chunk takes what the
     * points and tables left, as cuzk prove's does (gpu.h cuzk_gpu_ba_fit), unless --no-ba-fit
     * (the default chunk, as the daemon's workers have). */
    if (ba_fit) {
        if ((e = cuzk_gpu_ba_fit(ctx, curve, n, 0, &eb)))
            die("ba_fit", e, &eb);
    } else if ((e = cuzk_gpu_ba_reset(ctx, &eb))) {
        die("ba_reset", e, &eb);
    }
    uint64_t chunk = 0;
    int quads = 0;
    cuzk_gpu_ba_setting(ctx, &chunk, &quads);
    fprintf(stderr, "  (batch-affine chunk %.2f GiB%s%s)\n", chunk / 1073741824.0,
            quads == 2   ? ", quads"
            : quads == 3 ? ", quads for MSMs of 2^26 entries or more"
            : quads      ? ", quads for G1"
                         : "",
            ba_fit ? ", fitted" : "");
    char tag[64], name[128];
    snprintf(tag, sizeof tag, "g%d-%s", g, curve == CUZK_GPU_BN254 ? "bn254" : "bls12-381");
    void (*result_hex)(char *, const uint64_t *) =
        curve == CUZK_GPU_BN254
            ? (g == CUZK_GPU_G1 ? bn254_g1_result_hex : bn254_g2_result_hex)
            : (g == CUZK_GPU_G1 ? bls12_381_g1_result_hex : bls12_381_g2_result_hex);
    int (*check)(const uint64_t *, const uint8_t *, size_t, size_t) =
        curve == CUZK_GPU_BN254 ? (g == CUZK_GPU_G1 ? bn254_g1_check : bn254_g2_check)
                                : (g == CUZK_GPU_G1 ? bls12_381_g1_check : bls12_381_g2_check);
    if (dump_dir) {
        snprintf(name, sizeof name, "%s-%d.points", tag, top);
        dump_write(name, pts, n * cuzk_gpu_point_bytes(curve, g));
        for (int sk = 0; sk < SK_N; sk++) {
            if (!sk_on[sk])
                continue;
            snprintf(name, sizeof name, "%s-%d-%s.scalars", tag, top, sk_name[sk]);
            dump_write(name, scs[sk], n * 32);
        }
    }
    const char *cname = curve == CUZK_GPU_BN254 ? "BN254" : "BLS12-381";
    const char *what = g == CUZK_GPU_G1 ? "MSM G1" : "MSM G2";
    uint64_t out[36];
    for (int i = 0; i < nlogs; i++) {
        if (!want_log(logs[i]))
            continue;
        size_t m = (size_t)1 << logs[i];
        for (int sk = 0; sk < SK_N; sk++) {
            if (!sk_on[sk])
                continue;
            const uint8_t *sc = scs[sk];
            double t[32];
            /* One-off MSMs (CUZK_GPU_SCALARS_ONCE): from 2^21 scalars, the upload of all but
             * the first quarter or eighth runs beside that part's work (src/gpu/gpu.h). */
            e = cuzk_gpu_msm(ctx, gp, 0, m, sc, CUZK_GPU_SCALARS_ONCE, out, &eb); /* warm-up */
            if (e)
                die("msm", e, &eb);
            for (int r = 0; r < reps; r++) {
                double a = now();
                e = cuzk_gpu_msm(ctx, gp, 0, m, sc, CUZK_GPU_SCALARS_ONCE, out, &eb);
                t[r] = now() - a;
                if (e)
                    die("msm", e, &eb);
            }
            if (!check(out, sc, m, base_n)) {
                fprintf(stderr,
                        "cuzk-bench-gpu: %s %s 2^%d %s: wrong result (not the host's "
                        "(sum s_i c_i) S)\n",
                        what, cname, logs[i], sk_name[sk]);
                exit(1);
            }
            char scl[48];
            snprintf(scl, sizeof scl, "%s%s", sk_name[sk], inf_every ? "+inf" : "");
            if (inf_every)
                snprintf(scl + strlen(scl), sizeof scl - strlen(scl), "/%u", inf_every);
            if (cuzk_gpu_points_copies(gp) > 1)
                snprintf(scl + strlen(scl), sizeof scl - strlen(scl), "+tab%d",
                         cuzk_gpu_points_copies(gp));
            const double med = row(what, cname, logs[i], scl, t, reps);
            if (gs) {
                e = cuzk_gpu_msm(ctx, gs, 0, m, sc, CUZK_GPU_SCALARS_ONCE, out, &eb);
                for (int r = 0; r < reps && !e; r++) {
                    double a = now();
                    e = cuzk_gpu_msm(ctx, gs, 0, m, sc, CUZK_GPU_SCALARS_ONCE, out, &eb);
                    t[r] = now() - a;
                }
                if (e)
                    die("streamed msm", e, &eb);
                if (!check(out, sc, m, base_n)) {
                    fprintf(stderr, "cuzk-bench-gpu: streamed %s %s 2^%d %s: wrong result\n",
                            what, cname, logs[i], sk_name[sk]);
                    exit(1);
                }
                qsort(t, reps, sizeof *t, cmpd);
                char sw[24], ss[48];
                snprintf(sw, sizeof sw, "%s str", what);
                snprintf(ss, sizeof ss, "x%.2f", t[reps / 2] / med);
                const double smed = row(sw, cname, logs[i], ss, t, reps);
                for (int bi = 0; bi < nbatch; bi++)
                    bench_batch(gs, curve, g, batch_k[bi], sc, m, base_n, check, what, cname, logs[i],
                                smed);
            }
            if (dump_dir) {
                char hex[4 * 100 + 8];
                result_hex(hex, out);
                strcat(hex, "\n");
                snprintf(name, sizeof name, "%s-%d-%s.result", tag, logs[i], sk_name[sk]);
                dump_write(name, hex, strlen(hex));
            }
        }
    }
    cuzk_gpu_points_free(gp);
    if (gs) {
        cuzk_gpu_points_free(gs);
        cuzk_gpu_unpin(ctx, pts);
    }
    free(pts);
}

static void bench_ntt(cuzk_gpu_curve curve, const int *logs, int nlogs, uint8_t *buf)
{
    cuzk_errbuf eb = {{0}};
    const char *cname = curve == CUZK_GPU_BN254 ? "BN254" : "BLS12-381";
    if (!want("ntt", curve))
        return;
    for (int i = 0; i < nlogs; i++) {
        int listed = 0; /* NTT sizes ignore --max-log (their buffer is 2^27 anyway) */
        for (int k = 0; k < nlogs_sel; k++)
            listed |= logs_sel[k] == logs[i];
        if (nlogs_sel && !listed)
            continue;
        size_t n = (size_t)1 << logs[i];
        cuzk_gpu_fr *v;
        cuzk_err e = cuzk_gpu_fr_alloc(ctx, curve, n, &v, &eb);
        if (e)
            die("fr_alloc", e, &eb);
        /* Any 32-byte values below 2^253 are valid Montgomery elements. */
        fill_scalars(buf, n, SK_RANDOM);
        e = cuzk_gpu_fr_upload(v, buf, n, &eb);
        if (!e)
            e = cuzk_gpu_ntt(v, logs[i], CUZK_GPU_NTT_FORWARD, NULL, &eb); /* warm-up */
        if (e)
            die("ntt", e, &eb);
        double t[32];
        for (int dir = 0; dir < 2; dir++) {
            for (int r = 0; r < reps; r++) {
                double a = now();
                e = cuzk_gpu_ntt(v, logs[i], dir, NULL, &eb);
                t[r] = now() - a;
                if (e)
                    die("ntt", e, &eb);
            }
            row(dir ? "iNTT" : "NTT", cname, logs[i], "-", t, reps);
        }
        cuzk_gpu_fr_free(v);
    }
}

static void bench_h(cuzk_gpu_curve curve, int logn, uint8_t *buf)
{
    cuzk_errbuf eb = {{0}};
    if (!want_log(logn) || !want("h", curve))
        return;
    size_t n = (size_t)1 << logn;
    uint8_t *a = buf, *b = buf + 32 * n, *c = buf + 64 * n;
    fill_scalars(a, 3 * n, SK_RANDOM);
    double t[32];
    cuzk_err e = cuzk_gpu_h(ctx, curve, logn, a, b, c, NULL, NULL, 0, NULL, &eb);
    if (e)
        die("h", e, &eb);
    for (int r = 0; r < reps; r++) {
        double s = now();
        e = cuzk_gpu_h(ctx, curve, logn, a, b, c, NULL, NULL, 0, NULL, &eb);
        t[r] = now() - s;
        if (e)
            die("h", e, &eb);
    }
    row("H (3 iNTT+3 NTT)", curve == CUZK_GPU_BN254 ? "BN254" : "BLS12-381", logn, "-", t,
        reps);
}

int main(int argc, char **argv)
{
    const char *outpath = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-log") && i + 1 < argc)
            max_log = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            outpath = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
            dump_dir = argv[++i];
        else if (!strcmp(argv[i], "--scalars") && i + 1 < argc) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            memset(sk_on, 0, sizeof sk_on);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < SK_N && strcmp(t, sk_name[k]))
                    k++;
                if (k == SK_N) {
                    fprintf(stderr,
                            "cuzk-bench-gpu: --scalars: unknown kind '%s' (random, sparse01, "
                            "equal, few16, u64)\n",
                            t);
                    return 2;
                }
                sk_on[k] = 1;
            }
        } else if (!strcmp(argv[i], "--inf-every") && i + 1 < argc) {
            inf_every = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--no-ba-fit")) {
            ba_fit = 0;
        } else if (!strcmp(argv[i], "--stream") && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            const double mul = !strcmp(end, "GiB") ? 1073741824.0
                               : !strcmp(end, "MiB") ? 1048576.0
                               : !strcmp(end, "KiB") ? 1024.0
                               : !*end               ? 1.0
                                                     : -1.0;
            if (v * mul < 1024) {
                fprintf(stderr, "cuzk-bench-gpu: --stream: a chunk of at least 1KiB (e.g. "
                                "1GiB, 256MiB or bytes)\n");
                return 2;
            }
            stream_chunk = (size_t)(v * mul);
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            char *p = argv[++i];
            while (*p && nbatch < 8) {
                batch_k[nbatch] = (int)strtol(p, &p, 10);
                if (batch_k[nbatch] < 1 || batch_k[nbatch] > 64) {
                    fprintf(stderr, "cuzk-bench-gpu: --batch: sizes from 1 to 64\n");
                    return 2;
                }
                nbatch++;
                if (*p == ',')
                    p++;
                else
                    break;
            }
        } else if (!strcmp(argv[i], "--tables") && i + 1 < argc) {
            tables = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--logs") && i + 1 < argc) {
            char *p = argv[++i];
            while (*p && nlogs_sel < 16) {
                logs_sel[nlogs_sel++] = (int)strtol(p, &p, 10);
                if (*p == ',')
                    p++;
                else
                    break;
            }
        }
        else {
            const int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fprintf(help ? stdout : stderr,
                    "usage: cuzk-bench-gpu [--max-log K] [--reps R] [--out FILE] "
                    "[--only TAGS] [--logs K,K..] [--scalars KIND[,KIND..]] "
                    "[--inf-every K] [--tables C] [--no-ba-fit] [--dump DIR] "
                    "[--stream CHUNK [--batch K,K..]]\n"
                    "  GPU MSM (G1, G2), NTT and H step timings for both curves, best and "
                    "median of R after a warm-up.\n"
                    "  --only: comma-separated tags matched against kind-curve, e.g. "
                    "g1-bn254, g2, ntt-bls12-381, h\n"
                    "  --tables C: fixed-base tables on the point sets, at most C copies "
                    "(0: as many as the windows need)\n"
                    "  --no-ba-fit: the default batch-affine chunk (as the daemon's workers), "
                    "not one fitted to the memory the points and tables left\n"
                    "  --stream CHUNK: also each MSM over the points streamed from pinned host "
                    "memory in chunks of CHUNK bytes (1GiB, 256MiB), with its overhead\n"
                    "  --batch K,K..: with --stream, also K MSMs over the streamed points in "
                    "one batch (each chunk copied once), time per MSM\n"
                    "  --scalars: MSM scalar kinds, default random,sparse01; also equal, "
                    "few16, u64 (skewed)\n"
                    "  every MSM result is checked on the host (exit 1 if wrong)\n"
                    "  NTT rows: 2^18 to 2^20, 2^22 and 2^24 to 2^27 (--logs selects; --max-log "
                    "does not cap them)\n");
            if (!help)
                fprintf(stderr, "cuzk-bench-gpu: unknown argument '%s'\n", argv[i]);
            return help ? 0 : 2;
        }
    }
    if (reps < 1 || reps > 32)
        reps = 5;
    if (cuzk_gpu_device_count() == 0) {
        printf("cuzk-bench-gpu: no CUDA device; nothing to measure\n");
        return 0;
    }
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_gpu_open(&ctx, 0, &eb);
    if (e)
        die("open", e, &eb);
    if (outpath)
        outf = fopen(outpath, "w");
    if (dump_dir)
        dump_write("README", dump_readme, sizeof dump_readme - 1);
    char hdr[512];
    snprintf(hdr, sizeof hdr,
             "device: %s; best and median of %d after a warm-up; points resident, scalars "
             "from pinned host memory\n\n| what       | curve     | size | scalars   |  best ms "
             "| median ms |\n| --- | --- | --- | --- | ---: | ---: |",
             cuzk_gpu_name(ctx), reps);
    if (!ba_fit) {
        printf("batch-affine chunk: the default (--no-ba-fit)\n");
        if (outf)
            fprintf(outf, "batch-affine chunk: the default (--no-ba-fit)\n");
    }
    printf("%s\n", hdr);
    if (outf)
        fprintf(outf, "%s\n", hdr);

    /* One buffer per scalar kind run; the random one (always: the NTT and H rows' inputs) has
     * room for 2^27 elements. */
    size_t nmax = (size_t)1 << (max_log > 27 ? max_log : 27), nmsm = (size_t)1 << max_log;
    uint8_t *scs[SK_N] = {0};
    for (int sk = 0; sk < SK_N; sk++) {
        if (sk != SK_RANDOM && !sk_on[sk])
            continue;
        const size_t len = (sk == SK_RANDOM ? nmax : nmsm) * 32;
        if (!(scs[sk] = malloc(len))) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        fill_scalars(scs[sk], nmsm, sk);
        /* Pin whole buffers: a copy may not straddle a registered range's end. */
        if ((e = cuzk_gpu_pin(ctx, scs[sk], len, &eb)))
            die("pin", e, &eb);
    }
    uint8_t *sc_rand = scs[SK_RANDOM];

    /* NTT first (it overwrites the scalar buffer with its inputs, so refill afterwards),
     * then G1 of both curves, then G2: the most-wanted rows come first if time runs out. */
    static const int nl[] = {18, 19, 20, 22, 24, 25, 26, 27};
    for (int c = 0; c < 2; c++) {
        cuzk_gpu_curve cv = c ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
        bench_ntt(cv, nl, (int)(sizeof nl / sizeof nl[0]), sc_rand);
        bench_h(cv, 20, sc_rand);
        bench_h(cv, 24, sc_rand);
    }
    fill_scalars(sc_rand, nmsm, SK_RANDOM);
    static const int g1[] = {16, 20, 22, 24, 26};
    static const int g2[] = {20, 22, 24};
    bench_msm(CUZK_GPU_BN254, CUZK_GPU_G1, g1, 5, scs);
    bench_msm(CUZK_GPU_BLS12_381, CUZK_GPU_G1, g1, 5, scs);
    bench_msm(CUZK_GPU_BN254, CUZK_GPU_G2, g2, 3, scs);
    bench_msm(CUZK_GPU_BLS12_381, CUZK_GPU_G2, g2, 3, scs);
    for (int sk = 0; sk < SK_N; sk++)
        if (scs[sk]) {
            cuzk_gpu_unpin(ctx, scs[sk]);
            free(scs[sk]);
        }
    cuzk_gpu_close(ctx);
    if (outf)
        fclose(outf);
    return 0;
}
