/* The curve-independent prover (prover.h): the proof state's stages on the CPU and the GPUs,
 * the key's staging on the GPUs, and the one-call proof; the curve's arithmetic is reached
 * through the key's cuzk__prover_ops.
 *
 * The prover follows snarkjs's groth16_prove (groth16_tmpl.h has the formulas): synthesis of
 * a, b, c, then h on the odd coset, the MSMs A, B1, C, H in G1 and B2 in G2, and the
 * blinded combination. */
#include "groth16/prover.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h> /* the witness copy's non-temporal stores */
#endif

#include "util/bigalloc.h"
#include "util/clock.h"
#include "util/parallel.h"

void cuzk__pk_base_init(cuzk__pk_base *pk, const cuzk__prover_ops *ops)
{
    pk->ops = ops;
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        cuzk__pk_device_init(&pk->dev[d]);
}

void cuzk__pk_base_free(cuzk__pk_base *pk)
{
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        cuzk__pk_device_free(&pk->dev[d]);
}

/* 1 if the little-endian limbs l are below r (4 limbs). */
static inline int below_r(const uint64_t l[4], const uint64_t r[4])
{
    for (int i = 3; i >= 0; i--) {
        if (l[i] < r[i])
            return 1;
        if (l[i] > r[i])
            return 0;
    }
    return 0;
}

/* Frees w (unpinning it first when cuzk_prove_state_pin page-locked it), unless borrowed. */
static void wfree(cuzk_prove_state *s)
{
    if (s->w_pin) {
        cuzk_gpu_unpin(s->w_pin, s->w);
        s->w_pin = NULL;
    }
    if (!s->w_borrowed)
        free(s->w);
    s->w = NULL;
    s->wb = NULL;
}

static void state_free(cuzk_prove_state *s)
{
    if (!s)
        return;
    wfree(s);
    free(s->a);
    free(s->b);
    free(s->c);
    free(s);
}

static void free_abc(cuzk_prove_state *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    s->a = s->b = s->c = NULL; /* dead after H: released at once */
}

static cuzk_err wcheck(cuzk_prove_state *s, cuzk_errbuf *eb);

static cuzk_err host_sets(const cuzk__pk_base *pk, unsigned sets, const char *where,
                          cuzk_errbuf *eb);

/* Synthesis of a, b, c on the CPU (allocated here), unless done. */
static cuzk_err synth_cpu(cuzk_prove_state *s, cuzk_errbuf *eb)
{
    if (s->synthesized)
        return CUZK_OK;
    cuzk_err ce = wcheck(s, eb);
    if (ce)
        return ce;
    if ((ce = host_sets(s->pk, CUZK_PK_ROWS, "synthesis on the CPU", eb)))
        return ce;
    uint64_t N = s->pk->domain_size;
    s->a = cuzk__big_alloc(N * CUZK__FR_BYTES);
    s->b = cuzk__big_alloc(N * CUZK__FR_BYTES);
    s->c = cuzk__big_alloc(N * CUZK__FR_BYTES);
    if (!s->a || !s->b || !s->c) {
        free_abc(s);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "cannot allocate a, b, c (%" PRIu64 " bytes)",
                         3 * N * (uint64_t)CUZK__FR_BYTES);
    }
    double t = cuzk__now_ms();
    s->pk->ops->synthesize(s->pk, s->wb, s->a, s->b, s->c, s->opts.nthreads);
    s->st.synth_ms = cuzk__now_ms() - t;
    if (s->consume)
        s->pk->ops->consume_coefs(s->pk);
    s->synthesized = 1;
    return CUZK_OK;
}

/* The witness's copy into the prover's state, in chunks of `chunk` values; first_bad: the
 * lowest index of a value not below r (UINT64_MAX: none). stream: each value is checked as it
 * is read and stored around the caches (non-temporal stores, x86-64): for a witness far larger
 * than the caches that moves 2 bytes per byte instead of 3 (no read of the destination's lines
 * before they are written) and reads the source once. The GPU path waits for this copy
 * (docs/PERFORMANCE.md has its effect on a 2^24 proof). */
#define WCOPY_CHUNK 65536
#define WCOPY_STREAM_MIN ((uint64_t)1 << 13) /* values (256 KiB): smaller ones stay cached */
typedef struct {
    uint8_t *w;
    const uint64_t *r;
    const uint8_t *src;
    uint64_t n, chunk;
    int stream;
    _Atomic uint64_t first_bad;
} wcopy_job;

static void wcopy_bad(wcopy_job *j, uint64_t i)
{
    uint64_t cur = atomic_load(&j->first_bad);
    while (i < cur && !atomic_compare_exchange_weak(&j->first_bad, &cur, i))
        ;
}

static void wcopy_chunk(void *arg, size_t k)
{
    wcopy_job *j = arg;
    uint64_t lo = (uint64_t)k * j->chunk, hi = lo + j->chunk;
    if (lo >= j->n)
        return;
    if (hi > j->n)
        hi = j->n;
    /* No destination, or the caller's buffer: only check. */
    const int in_place = !j->w || j->w == j->src;
#if defined(__x86_64__)
    if (j->stream && !in_place && ((uintptr_t)j->w & 15) == 0) {
        for (uint64_t i = lo; i < hi; i++) {
            const uint8_t *sp = j->src + 32 * i;
            uint64_t l[4];
            memcpy(l, sp, 32);
            if (!below_r(l, j->r)) {
                wcopy_bad(j, i);
                break;
            }
            __m128i *dp = (__m128i *)(j->w + 32 * i);
            _mm_stream_si128(dp, _mm_loadu_si128((const __m128i *)sp));
            _mm_stream_si128(dp + 1, _mm_loadu_si128((const __m128i *)(sp + 16)));
        }
        _mm_sfence(); /* the stores are weakly ordered: visible before the chunk is done */
        return;
    }
#endif
    if (!in_place)
        memcpy(j->w + 32 * lo, j->src + 32 * lo, 32 * (hi - lo));
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t l[4];
        memcpy(l, j->src + 32 * i, 32);
        if (!below_r(l, j->r)) {
            wcopy_bad(j, i);
            return;
        }
    }
}

/* The range check of w on all threads (a device was to do it and did not get to: GPU fault
 * before A's MSM, then a CPU stage). */
static cuzk_err wcheck(cuzk_prove_state *s, cuzk_errbuf *eb)
{
    if (s->w_checked)
        return CUZK_OK;
    const uint64_t n = s->pk->n_vars;
    wcopy_job j = {NULL, s->pk->ops->fr_modulus, s->wb, n, WCOPY_CHUNK, 0, UINT64_MAX};
    cuzk_parallel_for((n + WCOPY_CHUNK - 1) / WCOPY_CHUNK, s->opts.nthreads,
                      wcopy_chunk, &j);
    uint64_t bad = atomic_load(&j.first_bad);
    if (bad != UINT64_MAX)
        return cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", bad);
    s->w_checked = 1;
    return CUZK_OK;
}

/* wbuf: NULL, or a buffer of n_vars elements the caller owns for w (kept, not freed); the
 * witness itself without wready: read in place (only checked; w stays NULL, wb is it).
 * wready: NULL, or called with each range [lo, hi) of w as soon as it is copied and checked,
 * in order, from the copying thread (cuzk__prove uploads it meanwhile). wcheck_dev (with wbuf
 * the caller's witness itself and wready): w is not read here beyond value 0, only handed
 * to wready whole; the device range-checks it in A's MSM (w_checked stays 0). */
#define WSTAGE_BLOCK ((uint64_t)1 << 20)
static cuzk_err start(cuzk_prove_state **out, cuzk__pk_base *pk, const uint8_t *witness,
                      uint64_t n_witness, const cuzk_prove_opts *opts, int defer_synth,
                      void *wbuf, void (*wready)(void *, uint64_t, uint64_t), void *warg,
                      int wcheck_dev, cuzk_errbuf *eb)
{
    *out = NULL;
    if (pk->consumed)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "the proving key was consumed by an earlier proof (consume_key): "
                         "load it again");
    if (n_witness != pk->n_vars)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "witness has %" PRIu64 " values, the circuit expects %u", n_witness,
                         pk->n_vars);
    cuzk_prove_state *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    s->t0 = cuzk__now_ms();
    s->pk = pk;
    s->opts = *opts;
    s->w_borrowed = wbuf != NULL;
    const int in_place = wbuf && wbuf == (const void *)witness && !wready;
    s->w = in_place ? NULL
           : wbuf   ? wbuf
                    : cuzk__big_alloc((pk->n_vars ? pk->n_vars : 1) * CUZK__FR_BYTES);
    s->wb = in_place ? witness : (const uint8_t *)s->w;
    cuzk_err e = CUZK_OK;
    if (!s->wb) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "cannot allocate the witness (%" PRIu64 " bytes)",
                      (uint64_t)pk->n_vars * CUZK__FR_BYTES);
        goto fail;
    }
    wcheck_dev = wcheck_dev && wbuf == witness && wready && n_witness > 0;
    if (wcheck_dev) {
        /* The caller's page-locked witness goes to the device as it is (one DMA, ~10 ms at
         * 2^24; the host check beside it cost ~4 ms more); value 0 is checked here so that
         * its errors read as on the CPU. */
        const double tw = cuzk__now_ms();
        uint64_t l0[4];
        memcpy(l0, s->wb, 32);
        if (!below_r(l0, pk->ops->fr_modulus)) {
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value 0 is not below r");
            goto fail;
        }
        wready(warg, 0, n_witness);
        s->st.witness_ms = cuzk__now_ms() - tw;
    } else {
        /* Copy and range-check on all threads: at 2^24 values (512 MiB, fresh pages) one
         * thread took a few hundred ms before the GPU could start. With wready, in blocks of
         * 32 MiB, each handed on once copied (its upload then overlaps the next block's
         * copy); else the whole witness as one block. */
        const double tw = cuzk__now_ms();
        const uint64_t blk = wready ? WSTAGE_BLOCK : n_witness,
                       chunk = wready ? WSTAGE_BLOCK / 32 : WCOPY_CHUNK;
        uint64_t bad = UINT64_MAX;
        for (uint64_t lo = 0; lo < n_witness && bad == UINT64_MAX; lo += blk) {
            uint64_t hi = n_witness - lo > blk ? lo + blk : n_witness;
            wcopy_job j = {s->w ? s->w + 32 * lo : NULL, pk->ops->fr_modulus,
                           witness + 32 * lo, hi - lo, chunk, n_witness >= WCOPY_STREAM_MIN,
                           UINT64_MAX};
            cuzk_parallel_for((hi - lo + chunk - 1) / chunk, s->opts.nthreads, wcopy_chunk,
                              &j);
            bad = atomic_load(&j.first_bad);
            if (bad != UINT64_MAX)
                bad += lo;
            else if (wready)
                wready(warg, lo, hi);
        }
        s->st.witness_ms = cuzk__now_ms() - tw;
        if (bad != UINT64_MAX) {
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", bad);
            goto fail;
        }
        s->w_checked = 1;
    }
    uint64_t w0[4] = {0, 0, 0, 0};
    if (n_witness)
        memcpy(w0, s->wb, 32);
    if (n_witness == 0 || !(w0[0] == 1 && !w0[1] && !w0[2] && !w0[3])) {
        e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED,
                      "witness value 0 must be 1 (the constant wire)");
        goto fail;
    }
    if (!defer_synth && (e = synth_cpu(s, eb)))
        goto fail;
    *out = s;
    return CUZK_OK;
fail:
    state_free(s);
    return e;
}

cuzk_err cuzk__prove_start(cuzk_prove_state **out, cuzk__pk_base *pk, const uint8_t *witness,
                           uint64_t n_witness, const cuzk_prove_opts *opts, int defer_synth,
                           cuzk_errbuf *eb)
{
    return start(out, pk, witness, n_witness, opts, defer_synth, NULL, NULL, NULL, 0, eb);
}

/* CUZK_UNSUPPORTED when a set of `sets` (CUZK_PK_SET_*) has no host copy any more
 * (cuzk_pk_release_host_sets): a stage that reads it there (`where`) cannot run. */
static cuzk_err host_sets(const cuzk__pk_base *pk, unsigned sets, const char *where,
                          cuzk_errbuf *eb)
{
    const unsigned gone = sets & pk->host_released;
    if (!gone)
        return CUZK_OK;
    char names[32];
    cuzk_pk_set_names(gone, names, sizeof names);
    return cuzk_errf(eb, CUZK_UNSUPPORTED,
                     "%s needs the key's %s %s, whose host copies were released "
                     "(the key lives on the GPUs it was staged on)", where,
                     gone == CUZK_PK_ROWS ? "A and B" : "point sets", names);
}

/* Witness MSM k of s on CPU threads (the key's set k: 0 A, 1 B1, 2 C into pa, pb1, pc; 4 B2
 * into pb2). C's scalars are the witness after its public part. */
static cuzk_err witness_msm_cpu(cuzk_prove_state *s, int k)
{
    cuzk__pk_base *pk = s->pk;
    cuzk_msm_opts mo = {s->opts.nthreads, 0, 0};
    if (k == 4)
        return pk->ops->g2_msm(pk, &s->pb2, s->wb, pk->n_vars, &mo);
    const uint64_t npc = k == 2 ? (uint64_t)pk->n_public + 1 : 0;
    cuzk__g1_jac *res[3] = {&s->pa, &s->pb1, &s->pc};
    return pk->ops->g1_msm(pk, k, res[k], s->wb + 32 * npc, pk->n_vars - npc, &mo);
}

/* H and the G1 MSMs on CPU threads (synthesizing first when start deferred it). */
static cuzk_err pg1_cpu(cuzk_prove_state *s, cuzk_errbuf *eb)
{
    cuzk__pk_base *pk = s->pk;
    const cuzk__prover_ops *ops = pk->ops;
    uint64_t N = pk->domain_size;
    unsigned nt = s->opts.nthreads;
    cuzk_err e = host_sets(pk, CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_H,
                           "the G1 stage on the CPU", eb);
    if (e)
        return e;
    e = synth_cpu(s, eb);
    if (e)
        return e;
    /* H in place: h lands in a (b, c are dead then and go at once; a after the H MSM). The
     * state is then unsynthesized again, so a retry of this stage synthesizes anew. */
    double t = cuzk__now_ms();
    e = ops->h(pk, s->a, s->b, s->c, nt);
    s->st.h_ms = cuzk__now_ms() - t;
    void *h = s->a;
    s->a = NULL;
    free_abc(s);
    s->synthesized = 0;
    if (e) {
        free(h);
        return cuzk_errf(eb, e, "H computation failed");
    }
    if (s->consume)
        ops->consume_domain(pk);
    t = cuzk__now_ms();
    cuzk_msm_opts mh = {nt, CUZK_MSM_SCALARS_MONT, 0};
    /* H's MSM first: h is freed before the witness MSMs run. */
    e = ops->g1_msm(pk, 3, &s->ph, h, N, &mh);
    free(h);
    if (!e && s->consume)
        ops->consume_set(pk, 3);
    for (int k = 0; k < 3 && !e; k++) {
        if (s->msm_pre & (1u << k)) /* CUZK_PK_SET_*: a batch did it (cuzk_prove_gpu_batch) */
            continue;
        e = witness_msm_cpu(s, k);
        if (!e && s->consume)
            ops->consume_set(pk, k);
    }
    if (e)
        e = cuzk_errf(eb, e, "G1 MSM failed");
    s->st.msm_g1_ms += cuzk__now_ms() - t;
    s->g1_done = !e;
    return e;
}

/* B in G2 on CPU threads. */
static cuzk_err pg2_cpu(cuzk_prove_state *s, cuzk_errbuf *eb)
{
    cuzk_err ce = host_sets(s->pk, CUZK_PK_SET_B2, "B in G2 on the CPU", eb);
    if (!ce)
        ce = wcheck(s, eb);
    if (ce)
        return ce;
    double t = cuzk__now_ms();
    cuzk__pk_base *pk = s->pk;
    cuzk_err e = witness_msm_cpu(s, 4);
    s->st.msm_g2_ms = cuzk__now_ms() - t;
    if (e)
        return cuzk_errf(eb, e, "G2 MSM failed");
    if (s->consume)
        pk->ops->consume_set(pk, 4);
    s->g2_done = 1;
    return CUZK_OK;
}

/* What gpu_ensure uploads: the G1 point sets unless WANT_NO_G1, and the bits. */
#define WANT_G2 1   /* B2 */
#define WANT_ROWS 2 /* the A and B rows, for synthesis on the GPU */
#define WANT_NO_G1 4 /* not the G1 sets (a device that runs only B in G2) */
#define WANT_TABLES 8 /* fixed-base tables for the sets uploaded, when they fit */
/* A device's point sets as an initialiser of 5 pointers, B2 (the largest gain) first. */
#define DEV_SETS(d) {(d)->g_b2, (d)->g_a, (d)->g_b1, (d)->g_c, (d)->g_h}

/* Fixed-base tables (gpu.h cuzk_gpu_points_tables) for the device's point sets that have
 * none, while each fits the device's free memory with room for the largest scratch a proof of
 * this key grows (cuzk_gpu_scratch_estimate) and a margin; a set that does not fit stays
 * plain (its MSMs are then as fast as without tables, nothing fails). */
static cuzk_err gpu_tables(cuzk__pk_base *pk, int device, cuzk__pk_device *d, cuzk_errbuf *eb)
{
    const cuzk_gpu_curve gc = pk->ops->gpu_curve;
    if (d->ba_fitted) {
        /* The context's chunk took the memory the tables left. A set still without tables
         * that would pay gets that memory back, once (tables gain 10-13% per MSM, the larger
         * chunk ~1.4% of a proof); otherwise nothing is tried (the reserve below assumes the
         * environment's chunk). */
        if (d->ba_unfit || !cuzk__pk_device_no_tables(d, gc))
            return CUZK_OK;
        cuzk_err e = cuzk_gpu_ba_reset(d->ctx, eb);
        if (e)
            return e;
        d->ba_fitted = 0;
        d->ba_unfit = 1;
    }
    cuzk_gpu_points *sets[5] = DEV_SETS(d);
    uint64_t est = cuzk_gpu_scratch_estimate(gc, pk->n_vars, pk->domain_size),
             have = cuzk_gpu_scratch_bytes(d->ctx);
    uint64_t reserve = (est > have ? est - have : 0) + (1ull << 30);
    for (int i = 0; i < 5; i++) {
        cuzk_gpu_points *p = sets[i];
        if (!p || cuzk_gpu_points_copies(p) > 1)
            continue;
        uint64_t fr = 0, tot = 0,
                 need = cuzk_gpu_tables_bytes(gc, i == 0 ? CUZK_GPU_G2 : CUZK_GPU_G1,
                                              cuzk_gpu_points_count(p), 0);
        cuzk_err e = cuzk_gpu_mem_info(device, &fr, &tot, eb);
        if (e)
            return e;
        if (fr < need + reserve)
            break; /* the rest stay plain */
        e = cuzk_gpu_points_tables(p, 0, eb);
        if (e == CUZK_NO_MEMORY) {
            eb->msg[0] = 0; /* the allocation failed after all (fragmentation): stay plain */
            break;
        }
        if (e)
            return e;
    }
    return CUZK_OK;
}

/* Set `bit` (CUZK_PK_SET_*) of n points after lead at infinity on device d: uploaded, or
 * streamed from host (d->streamed). */
static cuzk_err gpu_set(cuzk__pk_device *d, cuzk_gpu_curve gc, unsigned bit, cuzk_gpu_group g,
                        size_t lead, const void *host, size_t n, cuzk_gpu_points **out,
                        cuzk_errbuf *eb)
{
    if (d->streamed & bit) {
        const size_t cp = (size_t)(d->stream_chunk / cuzk_gpu_point_bytes(gc, g));
        return cuzk_gpu_points_host(d->ctx, gc, g, lead, host, n, cp ? cp : 1, out, eb);
    }
    return cuzk_gpu_points_upload_ex(d->ctx, gc, g, lead, host, n, out, eb);
}

/* The G1 point sets A, B1, C, H on device d (its context open); host: the key's arrays
 * (cuzk__prover_ops.arrays). */
static cuzk_err gpu_ensure_g1(cuzk__pk_base *pk, cuzk__pk_device *d, void *const host[],
                              cuzk_errbuf *eb)
{
    cuzk_err e = CUZK_OK;
    const cuzk_gpu_curve gc = pk->ops->gpu_curve;
    const cuzk_gpu_group g1 = CUZK_GPU_G1;
    if (!d->g_a &&
        (e = gpu_set(d, gc, CUZK_PK_SET_A, g1, 0, host[0], pk->n_vars, &d->g_a, eb)))
        return e;
    if (!d->g_b1 &&
        (e = gpu_set(d, gc, CUZK_PK_SET_B1, g1, 0, host[1], pk->n_vars, &d->g_b1, eb)))
        return e;
    /* C's set is padded in front to the witness's length (see g1_msms_on). */
    if (!d->g_c && (e = gpu_set(d, gc, CUZK_PK_SET_C, g1, pk->n_public + 1, host[2],
                                pk->n_vars - pk->n_public - 1, &d->g_c, eb)))
        return e;
    if (!d->g_h &&
        (e = gpu_set(d, gc, CUZK_PK_SET_H, g1, 0, host[3], pk->domain_size, &d->g_h, eb)))
        return e;
    return CUZK_OK;
}

/* Uploads the key's point sets to `device` on first use (pk->dev[device].mu held); want:
 * WANT_* bits. */
static cuzk_err gpu_ensure(cuzk__pk_base *pk, int device, int want, cuzk_errbuf *eb)
{
    int want_g2 = want & WANT_G2;
    cuzk_err e = CUZK_OK;
    cuzk_gpu_curve gc = pk->ops->gpu_curve;
    cuzk__pk_device *d = &pk->dev[device];
    void *host[CUZK_PK_GPU_ARRAYS];
    size_t len[CUZK_PK_GPU_ARRAYS];
    pk->ops->arrays(pk, host, len);
    /* A released set can only be where it was staged. */
    unsigned missing = 0;
    if (!(want & WANT_NO_G1)) {
        cuzk_gpu_points *g1[4] = {d->g_a, d->g_b1, d->g_c, d->g_h};
        for (int k = 0; k < 4; k++)
            if (!g1[k])
                missing |= 1u << k;
    }
    if (want_g2 && !d->g_b2)
        missing |= CUZK_PK_SET_B2;
    if ((want & WANT_ROWS) && !d->g_rows)
        missing |= CUZK_PK_ROWS;
    if ((e = host_sets(pk, missing, "staging the key on this GPU", eb)))
        return e;
    if (!d->ctx && (e = cuzk_gpu_open(&d->ctx, device, eb)))
        return e;
    if (!(want & WANT_NO_G1) && (e = gpu_ensure_g1(pk, d, host, eb)))
        return e;
    if (want_g2 && !d->g_b2 &&
        (e = gpu_set(d, gc, CUZK_PK_SET_B2, CUZK_GPU_G2, 0, host[4], pk->n_vars, &d->g_b2, eb)))
        return e;
    if ((want & WANT_ROWS) && !d->g_rows) {
        const uint64_t *const rp[2] = {host[5], host[6]};
        const void *const rec[2] = {host[7], host[8]};
        if ((e = cuzk_gpu_rows_upload(d->ctx, gc, pk->domain_size, pk->n_vars, rp, rec,
                                      pk->ops->coef_bytes, &d->g_rows, eb)))
            return e;
    }
    /* Last, so the rows and the plain sets are in place first. */
    if ((want & WANT_TABLES) && (e = gpu_tables(pk, device, d, eb)))
        return e;
    return CUZK_OK;
}

uint32_t cuzk__pk_gpu_mask(cuzk__pk_base *pk) { return cuzk__pk_devices_mask(pk->dev); }

unsigned cuzk__pk_gpu_no_tables(cuzk__pk_base *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return 0;
    pthread_mutex_lock(&pk->dev[device].mu);
    unsigned m = cuzk__pk_device_no_tables(&pk->dev[device], pk->ops->gpu_curve);
    pthread_mutex_unlock(&pk->dev[device].mu);
    return m;
}

/* Uploads the key's point sets to `device` now (the engine stages preloaded keys at start);
 * parts: CUZK_PK_STAGE_* bits. */
cuzk_err cuzk__pk_gpu_stage(cuzk__pk_base *pk, int device, unsigned parts, cuzk_errbuf *eb)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    pthread_mutex_lock(&pk->dev[device].mu);
    cuzk_err e = gpu_ensure(pk, device,
                            (parts & CUZK_PK_STAGE_G2 ? WANT_G2 : 0) |
                                (parts & CUZK_PK_STAGE_ROWS ? WANT_ROWS : 0) |
                                (parts & CUZK_PK_STAGE_TABLES ? WANT_TABLES : 0),
                            eb);
    pthread_mutex_unlock(&pk->dev[device].mu);
    return e;
}

/* The same with the sets in `streamed` (CUZK_PK_SET_* bits) streamed from the key's host
 * arrays in chunks of about chunk_bytes, unless already staged. */
cuzk_err cuzk__pk_gpu_stage_streamed(cuzk__pk_base *pk, int device, unsigned parts,
                                     unsigned streamed, uint64_t chunk_bytes, cuzk_errbuf *eb)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    if (streamed && chunk_bytes == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "streamed point sets: chunks of 0 bytes");
    pthread_mutex_lock(&pk->dev[device].mu);
    pk->dev[device].streamed = streamed;
    pk->dev[device].stream_chunk = chunk_bytes;
    pthread_mutex_unlock(&pk->dev[device].mu);
    return cuzk__pk_gpu_stage(pk, device, parts, eb);
}

unsigned cuzk__pk_gpu_streamed(cuzk__pk_base *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return 0;
    cuzk__pk_device *d = &pk->dev[device];
    pthread_mutex_lock(&d->mu);
    const cuzk_gpu_points *sets[5] = DEV_SETS(d);
    static const unsigned bit[5] = {CUZK_PK_SET_B2, CUZK_PK_SET_A, CUZK_PK_SET_B1,
                                    CUZK_PK_SET_C, CUZK_PK_SET_H};
    unsigned m = 0;
    for (int i = 0; i < 5; i++)
        if (sets[i] && cuzk_gpu_points_streamed(sets[i]))
            m |= bit[i];
    pthread_mutex_unlock(&d->mu);
    return m;
}

/* Frees the key's point sets and its own context on `device` (the engine's GPU tier gives the
 * memory back; the caller guarantees no stage uses the key on that device meanwhile). The
 * next stage or proof there uploads them again. */
void cuzk__pk_gpu_unstage(cuzk__pk_base *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return;
    cuzk__pk_device *d = &pk->dev[device];
    pthread_mutex_lock(&d->mu);
    cuzk_gpu_points_free(d->g_a);
    cuzk_gpu_points_free(d->g_b1);
    cuzk_gpu_points_free(d->g_c);
    cuzk_gpu_points_free(d->g_h);
    cuzk_gpu_points_free(d->g_b2);
    cuzk_gpu_rows_free(d->g_rows);
    if (d->wpin) /* not in use: no cuzk_prove runs on the key meanwhile (the caller's promise) */
        cuzk_gpu_host_free(d->ctx, d->wpin);
    d->wpin = NULL;
    d->wpin_len = 0;
    cuzk_gpu_close(d->ctx);
    d->g_a = d->g_b1 = d->g_c = d->g_h = d->g_b2 = NULL;
    d->g_rows = NULL;
    d->ctx = NULL;
    d->ba_fitted = d->ba_unfit = 0;
    d->streamed = 0;
    pthread_mutex_unlock(&d->mu);
}

/* Makes the key resident on `device` and picks the context to compute with: the caller's
 * (which must be open on `device`; the device lock is then dropped again: the points are
 * read-only) or the key's own (then the lock stays held until gpu_release). */
/* up_ms: where the upload time goes (s->st.gpu_upload_ms, or s->g2_upload_ms for a B-in-G2
 * stage that may run beside the G1 stage). */
static cuzk_err gpu_acquire(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx, int want,
                            double *up_ms, cuzk_gpu_ctx **use, cuzk_errbuf *eb)
{
    cuzk__pk_base *pk = s->pk;
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    pthread_mutex_lock(&pk->dev[device].mu);
    double t = cuzk__now_ms();
    if (s->opts.gpu_tables)
        want |= WANT_TABLES;
    cuzk_err e = gpu_ensure(pk, device, want, eb);
    *up_ms += cuzk__now_ms() - t;
    if (!e) {
        const cuzk_gpu_points *sets[5] = DEV_SETS(&pk->dev[device]);
        for (int i = 0; i < 5; i++)
            if (sets[i] && cuzk_gpu_points_copies(sets[i]) > s->st.gpu_tables)
                s->st.gpu_tables = cuzk_gpu_points_copies(sets[i]);
        if (s->opts.gpu_tables)
            s->st.gpu_no_tables |= cuzk__pk_device_no_tables(&pk->dev[device], pk->ops->gpu_curve);
    }
    if (!e && !ctx && !pk->dev[device].ba_fitted) {
        /* The key's own context proves alone on the device (the daemon's workers bring their
         * own, whose chunk the memory budget counts): its batch-affine chunk may take what the
         * point sets and their tables left (gpu.h cuzk_gpu_ba_fit). */
        e = cuzk_gpu_ba_fit(pk->dev[device].ctx, pk->ops->gpu_curve, pk->n_vars,
                            pk->domain_size, eb);
        pk->dev[device].ba_fitted = !e;
    }
    if (!e) {
        uint64_t chunk = 0;
        int quads = 0;
        cuzk_gpu_ba_setting(ctx ? ctx : pk->dev[device].ctx, &chunk, &quads);
        if (chunk > s->st.gpu_ba_chunk)
            s->st.gpu_ba_chunk = chunk;
        if (quads > s->st.gpu_ba_quads)
            s->st.gpu_ba_quads = quads;
    }
    if (e || ctx)
        pthread_mutex_unlock(&pk->dev[device].mu);
    *use = ctx ? ctx : pk->dev[device].ctx;
    return e;
}

static void gpu_release(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx)
{
    if (!ctx)
        pthread_mutex_unlock(&s->pk->dev[device].mu);
}

/* The A, B1, C MSMs on the acquired context g of `device` (they need only the witness, so
 * they may run while the CPU synthesizes a, b, c), and B2 too when with_g2 is set and G2 is
 * not done yet. A, B1 and B2 share the witness as scalars: within one hold of the context the
 * later ones reuse the first one's upload and sorted digits (CUZK_GPU_SCALARS_SAME). So does
 * C: its scalars are a suffix of the witness, and its device set has n_public + 1 points at
 * infinity in front (gpu_ensure), so it is an MSM over the whole witness whose first terms
 * vanish. The GPU writes Jacobian points in exactly the layout of cuzk__g1_jac / cuzk__g2_jac;
 * they are trusted only once they are points of the curve (a wrong one would also fail
 * self-verification; this names the stage). */
static cuzk_err g1_msms_on(cuzk_prove_state *s, int device, cuzk_gpu_ctx *g, int with_g2,
                           cuzk_errbuf *eb)
{
    cuzk__pk_base *pk = s->pk;
    const uint8_t *ws = (const uint8_t *)s->w;
    cuzk__pk_device *d = &pk->dev[device];
    with_g2 = with_g2 && !s->g2_done;
    cuzk__g1_jac pa, pb1, pc;
    cuzk__g2_jac pb2;
    double t = cuzk__now_ms(), t2 = 0;
    /* A reads the witness where cuzk__prove queued it while copying it, if it did so on this
     * context (cuzk_gpu_msm checks that the upload it finds is of this buffer). */
    unsigned fa = s->w_staged && device == 0 && g == pk->dev[0].ctx ? CUZK_GPU_SCALARS_SAME : 0;
    s->w_staged = 0;
    /* Not range-checked on the host (cuzk__prove left it to the device): A's MSM checks it
     * (or the batch that did A, cuzk_prove_gpu_batch). */
    if (!s->w_checked)
        fa |= CUZK_GPU_SCALARS_CHECK;
    /* Sets a batch did: their results are in s already. */
    const unsigned pre = s->msm_pre;
    pa = s->pa, pb1 = s->pb1, pc = s->pc;
    cuzk_err e = CUZK_OK;
    if (!(pre & CUZK_PK_SET_A)) {
        e = cuzk_gpu_msm(g, d->g_a, 0, pk->n_vars, ws, fa, (uint64_t *)&pa, eb);
        if (e == CUZK_NON_CANONICAL && (fa & CUZK_GPU_SCALARS_CHECK) &&
            cuzk_gpu_bad_scalar(g) < pk->n_vars)
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r",
                          cuzk_gpu_bad_scalar(g));
        else if (!e)
            s->w_checked = 1;
    }
    if (!e && !(pre & CUZK_PK_SET_B1))
        e = cuzk_gpu_msm(g, d->g_b1, 0, pk->n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pb1,
                         eb);
    if (!e && with_g2) {
        double t1 = cuzk__now_ms();
        e = cuzk_gpu_msm(g, d->g_b2, 0, pk->n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pb2,
                         eb);
        t2 = cuzk__now_ms() - t1;
    }
    if (!e && !(pre & CUZK_PK_SET_C))
        e = cuzk_gpu_msm(g, d->g_c, 0, pk->n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pc,
                         eb);
    s->st.msm_g1_ms += cuzk__now_ms() - t - t2;
    if (!e && (!pk->ops->g1_on_curve(&pa) || !pk->ops->g1_on_curve(&pb1) ||
               !pk->ops->g1_on_curve(&pc)))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: a G1 MSM result is not on the curve", device);
    if (!e && with_g2 && !pk->ops->g2_on_curve(&pb2))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the G2 MSM result is not on the curve", device);
    if (e)
        return e;
    s->pa = pa;
    s->pb1 = pb1;
    s->pc = pc;
    s->g1_msm_done = 1;
    if (with_g2) {
        s->pb2 = pb2;
        s->st.msm_g2_ms = t2;
        s->g2_done = 1;
    }
    return CUZK_OK;
}

/* H and the H MSM on the acquired context g; frees the host's a, b, c. When the state is
 * synthesized (the CPU made a, b, c) they are uploaded; else they are synthesized on the
 * device from the key's rows and the witness, and never exist on the host. The witness is
 * then read from A's upload when w_same (g1_msms_on ran just before in the same hold of g),
 * else uploaded again. */
static cuzk_err h_on(cuzk_prove_state *s, int device, cuzk_gpu_ctx *g, int w_same,
                     cuzk_errbuf *eb)
{
    cuzk__pk_base *pk = s->pk;
    int from_witness = !s->synthesized;
    cuzk__g1_jac ph;
    cuzk_err e = wcheck(s, eb); /* synthesis reads w (A's MSM checked it, if it ran) */
    if (e)
        return e;
    double t = cuzk__now_ms();
    if (from_witness) {
        e = cuzk_gpu_h_witness(g, pk->dev[device].g_rows, (int)pk->log_n, s->w,
                               w_same ? CUZK_GPU_SCALARS_SAME : 0, NULL, pk->dev[device].g_h, 0,
                               (uint64_t *)&ph, eb);
        s->st.synth_ms = cuzk_gpu_last_synth_ms(g);
    } else {
        e = cuzk_gpu_h(g, pk->ops->gpu_curve, (int)pk->log_n, s->a, s->b, s->c, NULL,
                       pk->dev[device].g_h, 0, (uint64_t *)&ph, eb);
    }
    s->st.h_ms = cuzk__now_ms() - t - (from_witness ? s->st.synth_ms : 0);
    if (!e && !pk->ops->g1_on_curve(&ph))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the H MSM result is not on the curve", device);
    if (e)
        return e;
    s->ph = ph;
    free_abc(s);
    return CUZK_OK;
}

/* The witness MSMs alone (g1_msms_on in a hold of its own): the command line's --synth cpu
 * path runs them while the CPU synthesizes, then pg1_gpu_h. */
static cuzk_err pg1_gpu_msm(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx, int with_g2,
                            cuzk_errbuf *eb)
{
    if (s->g1_msm_done)
        return CUZK_OK;
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = gpu_acquire(s, device, ctx, with_g2 && !s->g2_done ? WANT_G2 : 0,
                             &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    e = g1_msms_on(s, device, g, with_g2, eb);
    gpu_release(s, device, ctx);
    return e;
}

/* H and the H MSM from the host's a, b, c (synth_cpu ran) in a hold of its own. */
static cuzk_err pg1_gpu_h(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    if (!s->synthesized)
        return cuzk_errf(eb, CUZK_INTERNAL, "pg1_gpu_h before synthesis");
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = gpu_acquire(s, device, ctx, 0, &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    e = h_on(s, device, g, 0, eb);
    gpu_release(s, device, ctx);
    return e;
}

/* The whole G1 stage on a GPU in one hold of the context (so nothing else runs on it between
 * the MSMs and H; the engine's GPU stage and the command line's path): the witness MSMs
 * unless an earlier attempt did them, B in G2 too when with_g2, then H, synthesizing on the
 * device unless the CPU did (the key's rows are staged for it). */
static cuzk_err pg1_gpu_ex(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx, int with_g2,
                           cuzk_errbuf *eb)
{
    int want = (with_g2 && !s->g2_done ? WANT_G2 : 0) | (s->synthesized ? 0 : WANT_ROWS);
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = gpu_acquire(s, device, ctx, want, &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    int w_same = 0;
    if (!s->g1_msm_done)
        w_same = !(e = g1_msms_on(s, device, g, with_g2, eb));
    if (!e)
        e = h_on(s, device, g, w_same, eb);
    gpu_release(s, device, ctx);
    if (e)
        return e;
    s->g1_done = 1;
    s->st.used_gpu = 1;
    return CUZK_OK;
}


/* cuzk_prove_gpu_batch's emulation on CPU threads: the sets in `sets` (B2 with with_g2), as
 * the CPU stages compute them. */
static cuzk_err batch_cpu(cuzk_prove_state *const *ss, size_t k, unsigned sets, int with_g2,
                          unsigned *batched, cuzk_errbuf *eb)
{
    sets &= CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | (with_g2 ? CUZK_PK_SET_B2 : 0);
    cuzk_err e = host_sets(ss[0]->pk, sets, "the batched MSMs on the CPU", eb);
    for (size_t i = 0; i < k && !e; i++)
        e = wcheck(ss[i], eb);
    if (e)
        return e;
    for (int set = 0; set < 5; set++) { /* CUZK_PK_SET_* is 1 << set */
        if (!(sets & (1u << set)))
            continue;
        for (size_t i = 0; i < k; i++)
            if ((e = witness_msm_cpu(ss[i], set)))
                return cuzk_errf(eb, e, "batched MSM failed");
        for (size_t i = 0; i < k; i++) {
            if (set == 4)
                ss[i]->g2_done = 1;
            else
                ss[i]->msm_pre |= 1u << set;
        }
        *batched |= 1u << set;
    }
    return CUZK_OK;
}

cuzk_err cuzk_prove_gpu_batch(cuzk_prove_state *const *ss, size_t k, int device,
                              struct cuzk_gpu_ctx *gpu, int with_g2, unsigned emulate,
                              unsigned *batched, cuzk_errbuf *eb)
{
    *batched = 0;
    if (k < 2 || k > 64)
        return CUZK_OK;
    cuzk__pk_base *pk = ss[0]->pk;
    unsigned checks = 0;
    for (size_t i = 0; i < k; i++) {
        if (ss[i]->pk != pk || ss[i]->g1_msm_done || !ss[i]->w)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "GPU batch: proof %zu is of another "
                             "key, has its MSMs done or no witness copy", i);
        checks |= !ss[i]->w_checked;
        with_g2 = with_g2 && !ss[i]->g2_done;
    }
    if (device < 0)
        return batch_cpu(ss, k, emulate, with_g2, batched, eb);
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = gpu_acquire(ss[0], device, gpu, with_g2 ? WANT_G2 : 0, &ss[0]->st.gpu_upload_ms,
                             &g, eb);
    if (e)
        return e;
    cuzk__pk_device *d = &pk->dev[device];
    const cuzk_gpu_points *sets[4] = {d->g_a, d->g_b1, d->g_c, with_g2 ? d->g_b2 : NULL};
    static const unsigned bit[4] = {CUZK_PK_SET_A, CUZK_PK_SET_B1, CUZK_PK_SET_C,
                                    CUZK_PK_SET_B2};
    const void *vec[64];
    for (size_t i = 0; i < k; i++)
        vec[i] = ss[i]->w;
    uint64_t *outs = malloc(k * 36 * sizeof *outs);
    if (!outs) {
        gpu_release(ss[0], device, gpu);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "GPU batch: out of memory");
    }
    for (int si = 0; si < 4 && !e; si++) {
        if (!sets[si] || !cuzk_gpu_points_streamed(sets[si]))
            continue;
        const int g2 = si == 3;
        const size_t limbs = cuzk_gpu_point_limbs(pk->ops->gpu_curve, g2 ? CUZK_GPU_G2
                                                                         : CUZK_GPU_G1);
        double t = cuzk__now_ms();
        e = cuzk_gpu_msm_batch(g, sets[si], 0, pk->n_vars, k, vec,
                               checks ? CUZK_GPU_SCALARS_CHECK : 0, outs, eb);
        for (size_t i = 0; i < k && !e; i++) {
            const uint64_t *o = outs + i * limbs;
            if (g2 ? !pk->ops->g2_on_curve((const cuzk__g2_jac *)o)
                   : !pk->ops->g1_on_curve((const cuzk__g1_jac *)o))
                e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: a batched MSM result is not on the "
                              "curve", device);
        }
        if (e)
            break;
        const double per = (cuzk__now_ms() - t) / (double)k;
        for (size_t i = 0; i < k; i++) {
            cuzk_prove_state *s = ss[i];
            const uint64_t *o = outs + i * limbs;
            if (g2) {
                memcpy(&s->pb2, o, limbs * 8);
                s->st.msm_g2_ms += per;
                s->g2_done = 1;
            } else {
                memcpy(si == 0 ? &s->pa : si == 1 ? &s->pb1 : &s->pc, o, limbs * 8);
                s->st.msm_g1_ms += per;
                s->msm_pre |= bit[si];
            }
            s->w_checked = 1; /* the batch checked every vector (CUZK_GPU_SCALARS_CHECK) */
        }
        *batched |= bit[si];
        checks = 0;
    }
    free(outs);
    gpu_release(ss[0], device, gpu);
    return e;
}

/* B in G2 on a GPU; want: WANT_G2, with WANT_NO_G1 on a device that runs only this. */
static cuzk_err pg2_gpu_ex(cuzk_prove_state *s, int device, cuzk_gpu_ctx *ctx, int want,
                           cuzk_errbuf *eb)
{
    cuzk__pk_base *pk = s->pk;
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = gpu_acquire(s, device, ctx, want, &s->g2_upload_ms, &g, eb);
    if (e)
        return e;
    cuzk__g2_jac pb2;
    double t = cuzk__now_ms();
    e = cuzk_gpu_msm(g, pk->dev[device].g_b2, 0, pk->n_vars, s->w, 0, (uint64_t *)&pb2, eb);
    s->st.msm_g2_ms = cuzk__now_ms() - t;
    gpu_release(s, device, ctx);
    if (!e && !pk->ops->g2_on_curve(&pb2))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the G2 MSM result is not on the curve", device);
    if (e)
        return e;
    s->pb2 = pb2;
    s->g2_done = 1;
    return CUZK_OK;
}

/* ------------------------------------------------------------------ the staged API */

cuzk_err cuzk_prove_g1(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                       cuzk_errbuf *eb)
{
    return device < 0 ? pg1_cpu(s, eb) : pg1_gpu_ex(s, device, gpu, 0, eb);
}

cuzk_err cuzk_prove_g2(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                       cuzk_errbuf *eb)
{
    return device < 0 ? pg2_cpu(s, eb) : pg2_gpu_ex(s, device, gpu, WANT_G2, eb);
}

/* On a GPU: H, the G1 MSMs and B in G2 on one device, B2 sharing A's scalar upload and sort. */
cuzk_err cuzk_prove_g1g2(cuzk_prove_state *s, int device, struct cuzk_gpu_ctx *gpu,
                         cuzk_errbuf *eb)
{
    if (device >= 0)
        return pg1_gpu_ex(s, device, gpu, 1, eb);
    cuzk_err e = pg1_cpu(s, eb);
    if (!e && !s->g2_done)
        e = pg2_cpu(s, eb);
    return e;
}

int cuzk_prove_g2_done(const cuzk_prove_state *s) { return s->g2_done; }

static void prep(cuzk_prove_state *s)
{
    if (s->pre_ready)
        return;
    s->pk->ops->prep(s);
    s->pre_ready = 1;
}

static void *prep_thread(void *arg)
{
    prep(arg);
    return NULL;
}

cuzk_err cuzk_prove_end(cuzk_prove_state *s, cuzk_proof *proof, cuzk_errbuf *eb)
{
    s->st.gpu_upload_ms += s->g2_upload_ms; /* B in G2's, kept apart while it could run beside */
    s->g2_upload_ms = 0;
    if (!s->g1_done || !s->g2_done)
        return cuzk_errf(eb, CUZK_INTERNAL, "finish called before the %s stage ended",
                         s->g1_done ? "G2" : "G1");
    double t = cuzk__now_ms();
    prep(s); /* done already when a thread ran it beside the MSMs */
    const double prep_ms = cuzk__now_ms() - t;
    cuzk_err e = CUZK_OK;
    if (!s->pk->ops->finish(s, proof))
        e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED,
                      "the proof failed self-verification: the witness does not satisfy the "
                      "circuit (give the .r1cs to find the first failing constraint)");
    s->st.finalize_ms += prep_ms;
    wfree(s);
    s->st.total_ms = cuzk__now_ms() - s->t0;
    return e;
}

const cuzk_prove_stats *cuzk_prove_state_stats(const cuzk_prove_state *s) { return &s->st; }

uint64_t cuzk_prove_state_bytes(const cuzk_prove_state *s)
{
    return (uint64_t)CUZK__FR_BYTES * ((s->w ? s->pk->n_vars : 0) +
                                       (s->a ? 3 * (uint64_t)s->pk->domain_size : 0));
}

/* Page-locks the state's own w (portable to every device), so a GPU stage uploads it by DMA
 * rather than through the staging buffers; undone when w is freed. */
cuzk_err cuzk_prove_state_pin(cuzk_prove_state *s, struct cuzk_gpu_ctx *gpu, cuzk_errbuf *eb)
{
    if (s->w_pin || s->w_borrowed || !s->w || !s->pk->n_vars)
        return CUZK_OK;
    cuzk_err e = cuzk_gpu_pin(gpu, s->w, (size_t)s->pk->n_vars * CUZK__FR_BYTES, eb);
    if (!e)
        s->w_pin = gpu;
    return e;
}

void cuzk_prove_state_free(cuzk_prove_state *s) { state_free(s); }

/* ------------------------------------------------------------------ the one-call proof */

/* The B-in-G2 MSM beside the G1 work: on CPU threads (--g2 cpu, device -1) or on another GPU
 * than the G1 work's (which needs only B2's points there). */
typedef struct {
    cuzk_prove_state *s;
    int device;
    cuzk_err err;
    cuzk_errbuf eb;
} g2_job;

static void *g2_thread(void *arg)
{
    g2_job *j = arg;
    j->err = j->device < 0
                 ? pg2_cpu(j->s, &j->eb)
                 : pg2_gpu_ex(j->s, j->device, NULL, WANT_G2 | WANT_NO_G1, &j->eb);
    return NULL;
}

/* The witness-only GPU MSMs of the command line's path (device 0, the key's context). */
typedef struct {
    cuzk_prove_state *s;
    int g2;
    cuzk_err err;
    cuzk_errbuf eb;
} gpu_msm_job;

static void *gpu_msm_thread(void *arg)
{
    gpu_msm_job *j = arg;
    j->err = pg1_gpu_msm(j->s, 0, NULL, j->g2, &j->eb);
    return NULL;
}

/* cuzk__prove's upload of the witness block by block while start copies it into the
 * page-locked buffer (cuzk_gpu_scalars_stage on device 0's key context, whose lock is held);
 * ok drops on the first failure (the first MSM then uploads the witness itself). */
typedef struct {
    cuzk_gpu_ctx *ctx;
    const void *w;
    uint64_t n, done;
    int ok;
    int wait; /* once the last range is queued, wait for the copies (the witness time is then
               * the time until the device has it) */
} wstage;

static void wstage_block(void *arg, uint64_t lo, uint64_t hi)
{
    wstage *ws = arg;
    cuzk_errbuf eb = {{0}};
    if (ws->ok && cuzk_gpu_scalars_stage(ws->ctx, ws->w, ws->n, lo, hi, &eb) == CUZK_OK &&
        (!ws->wait || hi < ws->n || cuzk_gpu_sync(ws->ctx, &eb) == CUZK_OK))
        ws->done = hi;
    else
        ws->ok = 0;
}

/* The whole proof in one call (the command line's path): on the CPU, or H and the G1 MSMs on
 * device 0 with B in G2 on the GPU after them or on CPU threads beside them. When the GPU
 * fails and fallback is set, the G1 stage (and G2 if it was on the GPU) is redone on the CPU
 * from the kept a, b, c. */
cuzk_err cuzk__prove(cuzk_proof *proof, cuzk__pk_base *pk, const uint8_t *witness,
                     uint64_t n_witness, const cuzk_prove_opts *opts, int use_gpu, int fallback,
                     cuzk_prove_stats *st, cuzk_errbuf *eb)
{
    cuzk_prove_state *s;
    /* Everything on the GPU: w goes into the page-locked buffer, so A's MSM uploads it by
     * DMA (at 2^24, 512 MiB: ~38 ms through the staging buffers from pageable memory). A
     * witness the caller holds in page-locked memory (cuzk_witness_buf_alloc) is that buffer
     * as it is (borrowed: start checks it, or leaves that to the device, below). */
    const int gpu_all = use_gpu && !opts->synth_on_cpu && n_witness == pk->n_vars && n_witness;
    const int wcaller = gpu_all && cuzk_gpu_host_is_pinned(witness);
    void *wown = gpu_all && !wcaller
                     ? cuzk__pk_device_wpin_take(&pk->dev[0], 0, pk->n_vars * CUZK__FR_BYTES)
                     : NULL;
    void *wpin = wcaller ? (void *)witness : wown; /* read only when it is the caller's */
    /* ... and while it is copied there, block by block, its upload runs (the copy and the DMA
     * each take ~10 ms at 2^24; overlapped, the GPU starts ~10 ms sooner). The caller's
     * buffer is uploaded as it is and range-checked by A's MSM on the device, when nothing
     * on the CPU reads it meanwhile (B in G2 on a GPU too; CPU stages check it first). */
    const int wdev = wcaller && opts->g2_on_gpu;
    wstage ws = {NULL, wpin, pk->n_vars, 0, 0, wdev};
    if (wpin) {
        pthread_mutex_lock(&pk->dev[0].mu);
        cuzk_errbuf oeb = {{0}};
        if (!pk->dev[0].ctx) /* wpin_take opens it; the caller's buffer needs it too */
            cuzk_gpu_open(&pk->dev[0].ctx, 0, &oeb);
        ws.ctx = pk->dev[0].ctx;
        ws.ok = ws.ctx != NULL;
    }
    /* On the CPU the witness outlives the proof: read in place, never copied. */
    void *wbuf = use_gpu ? wpin : (void *)witness;
    /* A consuming proof synthesizes in pg1_cpu, where the coefficients are then freed. */
    const int consume = !use_gpu && opts->consume_key;
    cuzk_err e = start(&s, pk, witness, n_witness, opts, use_gpu || consume, wbuf,
                       ws.ok ? wstage_block : NULL, &ws, wdev && ws.ok, eb);
    if (wpin)
        pthread_mutex_unlock(&pk->dev[0].mu);
    if (e) {
        cuzk__pk_device_wpin_give(&pk->dev[0], wown);
        return e;
    }
    if (consume) {
        s->consume = 1;
        pk->consumed = 1;
    }
    s->w_staged = ws.ok && ws.done == pk->n_vars;
    /* The blinding multiples of delta and the verification's fixed Miller loop on a thread
     * beside the GPU work (~1 ms that the end stage would otherwise spend after the last MSM). */
    pthread_t ppt;
    const int pp_started = use_gpu && pthread_create(&ppt, NULL, prep_thread, s) == 0;
    if (use_gpu) {
        int g2_gpu = opts->g2_on_gpu;
        /* Where B in G2 runs: CPU threads (-1), device 0 with the rest, or another device
         * beside device 0's work (g2_device). */
        int g2dev = g2_gpu ? opts->g2_device : -1;
        g2_job job;
        memset(&job, 0, sizeof job);
        job.s = s;
        job.device = g2dev;
        pthread_t tid;
        int started = 0;
        if (g2dev > 0 && !(started = pthread_create(&tid, NULL, g2_thread, &job) == 0))
            g2_thread(&job); /* no thread: run it here, before the other work */
        if (!opts->synth_on_cpu) {
            /* Everything on the GPU: the A, B1, C (and B2) MSMs upload the witness once, and
             * synthesis, H and the H MSM read it there. With --g2 cpu, B in G2 runs on CPU
             * threads beside all of it (the CPU has nothing else to do). */
            if (g2dev < 0 && !(started = pthread_create(&tid, NULL, g2_thread, &job) == 0))
                g2_thread(&job); /* no thread: run it here, before the GPU work */
            e = pg1_gpu_ex(s, 0, NULL, g2dev == 0, eb);
        } else {
            /* The A, B1, C MSMs (and B2 with --g2 gpu) need only the witness: the GPU runs
             * them while the CPU synthesizes a, b, c; then H on the GPU while the CPU runs B
             * in G2 (--g2 cpu). */
            gpu_msm_job mj;
            memset(&mj, 0, sizeof mj);
            mj.s = s;
            mj.g2 = g2dev == 0;
            pthread_t mt;
            int mstarted = pthread_create(&mt, NULL, gpu_msm_thread, &mj) == 0;
            cuzk_errbuf seb = {{0}};
            cuzk_err se = synth_cpu(s, &seb);
            if (mstarted)
                pthread_join(mt, NULL);
            else
                gpu_msm_thread(&mj); /* no thread: after synthesis */
            if (se) {
                /* out of host memory: not a GPU fault, no fallback */
                if (started)
                    pthread_join(tid, NULL);
                if (pp_started)
                    pthread_join(ppt, NULL);
                state_free(s);
                cuzk__pk_device_wpin_give(&pk->dev[0], wown);
                return cuzk_errf(eb, se, "%s", seb.msg);
            }
            if (g2dev < 0 && !(started = pthread_create(&tid, NULL, g2_thread, &job) == 0))
                g2_thread(&job); /* no thread: run it here, before the GPU work */
            e = mj.err;
            if (e)
                *eb = mj.eb;
            else if (!(e = pg1_gpu_h(s, 0, NULL, eb))) {
                s->g1_done = 1;
                s->st.used_gpu = 1;
            }
        }
        if (started)
            pthread_join(tid, NULL);
        if (e && fallback && (e == CUZK_GPU_FAULT || e == CUZK_NO_DEVICE)) {
            /* AUTO: a GPU fault costs time, never the proof. */
            snprintf(s->st.gpu_error, sizeof s->st.gpu_error, "%.255s", eb ? eb->msg : "");
            s->st.gpu_fallback = 1;
            s->st.used_gpu = 0;
            e = CUZK_OK;
            if (!s->g1_done)
                e = pg1_cpu(s, eb); /* synthesizes first if the device was to */
        }
        if (!e && job.err && job.device >= 0 && fallback &&
            (job.err == CUZK_GPU_FAULT || job.err == CUZK_NO_DEVICE)) {
            /* B in G2 failed on its own GPU: the CPU redoes it below. */
            snprintf(s->st.gpu_error, sizeof s->st.gpu_error, "%.255s", job.eb.msg);
            s->st.gpu_fallback = 1;
            job.err = CUZK_OK;
        }
        if (!e && job.err)
            e = cuzk_errf(eb, job.err, "%s", job.eb.msg);
        if (!e && !s->g2_done && g2_gpu && fallback)
            e = pg2_cpu(s, eb);
    } else {
        if (!(e = pg1_cpu(s, eb)))
            e = pg2_cpu(s, eb);
    }
    if (pp_started)
        pthread_join(ppt, NULL);
    if (!e)
        e = cuzk_prove_end(s, proof, eb);
    *st = s->st;
    state_free(s);
    cuzk__pk_device_wpin_give(&pk->dev[0], wown);
    return e;
}
