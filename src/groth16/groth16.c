#define _GNU_SOURCE /* asprintf, realpath */
/* Curve-erased Groth16 API (include/cuzk/groth16.h) over the per-curve template. */
#include "cuzk/groth16.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ec/ec.h"
#include "ec/encode.h"
#include "ec/pairing.h"
#include "gpu/gpu.h"
#include "groth16/gen_internal.h"
#include "groth16/prover.h"
#include "msm/msm.h"
#include "poly/ntt.h"
#include "util/clock.h"
#include "util/bigalloc.h"
#include "util/hash.h"
#include "util/parallel.h"

/* ------------------------------------------------------------------ key cache (shared part) */

#define CUZK__CACHE_VERSION 3u /* 3: optional fixed-base tables after the key's arrays */
#define CUZK__CACHE_SEED 0x9e3779b97f4a7c15ull

typedef struct {
    uint64_t size, mtime_ns, ino;
} cuzk__zkey_id;

/* Header of a key cache file (layout in pk_cache_tmpl.h), the same for both curves. */
typedef struct {
    char magic[8]; /* "CUZKPKC\0" */
    uint32_t version, curve;
    uint32_t n_vars, n_public, domain_size, log_n;
    uint32_t g1_bytes, g2_bytes, coef_bytes, fr_bytes;
    uint64_t zkey_size, zkey_mtime_ns, zkey_ino;
    uint64_t n_coef[2];
    /* Fixed-base tables (pk_cache_tmpl.h), for A, B1, C, H, B2: copies (0: none) and window
     * bits of each; tab_req the copies asked for; tab_hash the tables' own hash. */
    uint32_t tab_req, tab_t[5], tab_c[5], tab_pad;
    uint64_t tab_hash;
    uint64_t payload_len, payload_hash; /* payload_len counts the tables too */
    uint64_t hdr_hash; /* of every byte above */
} cuzk__cache_hdr;

/* The key cache's hashes are cuzk__hash64 (util/hash.h): for integrity against accidents,
 * not against an adversary (the cache is as trusted as the zkey beside it). */

/* Large arrays move in chunks on all cores: each chunk is read (or written) with pread/pwrite
 * at its own offset and hashed on its own; the array's hash chains the chunk hashes in order.
 * So a cache loads at the disk's (or page cache's) speed rather than one core's hashing. */
/* 2 MiB: a 2^14-constraint key's arrays (1-5 MiB, tables included) still spread over the
 * cores (format 3; format 2 used 32 MiB chunks). */
#define CUZK__CACHE_CHUNK ((size_t)2 << 20)

typedef struct {
    int fd, write;
    uint8_t *buf;
    size_t len;
    uint64_t file_off;
    uint64_t *hashes;
    int err;
} cache_io;

static void cache_io_chunk(void *arg, size_t i)
{
    cache_io *c = arg;
    size_t off = i * CUZK__CACHE_CHUNK, n = c->len - off;
    if (n > CUZK__CACHE_CHUNK)
        n = CUZK__CACHE_CHUNK;
    uint8_t *p = c->buf + off;
    if (c->write)
        c->hashes[i] = cuzk__hash64(CUZK__CACHE_SEED + i, p, n);
    for (size_t done = 0; done < n;) {
        ssize_t r = c->write ? pwrite(c->fd, p + done, n - done, (off_t)(c->file_off + off + done))
                             : pread(c->fd, p + done, n - done, (off_t)(c->file_off + off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            __atomic_store_n(&c->err, 1, __ATOMIC_RELAXED);
            return;
        }
        done += (size_t)r;
    }
    if (!c->write)
        c->hashes[i] = cuzk__hash64(CUZK__CACHE_SEED + i, p, n);
}

/* Reads (write = 0) or writes len bytes of buf at file_off, chaining the array's hash into
 * *h. 0 on success, -1 on a short read or a failed write (errno as set by the call). */
static int cuzk__cache_io(int fd, void *buf, size_t len, uint64_t file_off, int write,
                          uint64_t *h)
{
    size_t nc = (len + CUZK__CACHE_CHUNK - 1) / CUZK__CACHE_CHUNK;
    uint64_t *hs = calloc(nc ? nc : 1, sizeof *hs);
    if (!hs) {
        errno = ENOMEM;
        return -1;
    }
    cache_io c = {fd, write, buf, len, file_off, hs, 0};
    if (nc == 1)
        cache_io_chunk(&c, 0);
    else if (nc)
        cuzk_parallel_for(nc, 0, cache_io_chunk, &c);
    *h = cuzk__hash64(*h, hs, nc * sizeof *hs);
    free(hs);
    return c.err ? -1 : 0;
}

/* The hash cuzk__cache_io chains into *h for len bytes, computed over memory already in place
 * (a mapped file), its chunks on all cores. */
typedef struct {
    const uint8_t *buf;
    size_t len;
    uint64_t *hashes;
} cache_hash_job;

static void cache_hash_chunk(void *arg, size_t i)
{
    cache_hash_job *j = arg;
    size_t off = i * CUZK__CACHE_CHUNK, n = j->len - off;
    if (n > CUZK__CACHE_CHUNK)
        n = CUZK__CACHE_CHUNK;
    j->hashes[i] = cuzk__hash64(CUZK__CACHE_SEED + i, j->buf + off, n);
}

static int cuzk__cache_hash_mem(const void *buf, size_t len, uint64_t *h)
{
    size_t nc = (len + CUZK__CACHE_CHUNK - 1) / CUZK__CACHE_CHUNK;
    uint64_t *hs = calloc(nc ? nc : 1, sizeof *hs);
    if (!hs)
        return -1;
    cache_hash_job j = {buf, len, hs};
    if (nc == 1)
        cache_hash_chunk(&j, 0);
    else if (nc)
        cuzk_parallel_for(nc, 0, cache_hash_chunk, &j);
    *h = cuzk__hash64(*h, hs, nc * sizeof *hs);
    free(hs);
    return 0;
}

/* The prover's large working buffers (the witness copy and a, b, c: 512 MiB each at 2^24
 * values) come from cuzk__big_alloc (util/bigalloc.h): each proof writes them fresh, and in
 * 4 KiB pages that is ~390k page faults for a, b, c alone at 2^24. */

/* Drops the pages of a zkey's file mapping within [p, p + len) from this process (the page
 * cache keeps them): pk_load reads each section once into the key, and the mapping's copy
 * would otherwise stay resident beside it for as long as the zkey is open. Whole pages only;
 * nothing for a caller's buffer (cuzk_zkey_parse). */
static void cuzk__drop_pages(const void *p, size_t len);
static void cuzk__zkey_drop(const cuzk_zkey *zk, const void *p, size_t len)
{
    if (zk->file.map_base)
        cuzk__drop_pages(p, len);
}

/* Drops the whole pages within [p, p + len) of a read-only file mapping from this process. */
static void cuzk__drop_pages(const void *p, size_t len)
{
    if (!p || !len)
        return;
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + pg - 1) & ~(pg - 1), hi = ((uintptr_t)p + len) & ~(pg - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: a failure costs memory */
}

#define GP bn254
#define GP_CURVE CUZK_CURVE_BN254
#define GP_FR_BITS BN254_FR_BITS
#include "groth16/groth16_tmpl.h"
#include "groth16/pk_cache_tmpl.h"
#include "groth16/pk_gen_tmpl.h"
#undef GP
#undef GP_CURVE
#undef GP_FR_BITS

#define GP bls12_381
#define GP_CURVE CUZK_CURVE_BLS12_381
#define GP_FR_BITS BLS12_381_FR_BITS
#include "groth16/groth16_tmpl.h"
#include "groth16/pk_cache_tmpl.h"
#include "groth16/pk_gen_tmpl.h"
#undef GP
#undef GP_CURVE
#undef GP_FR_BITS

struct cuzk_pk {
    cuzk_curve curve;
    int generated; /* cuzk_pk_generate: a test key whose secrets its maker knows */
    union {
        bn254_pk *bn254;
        bls12_381_pk *bls12_381;
    } k;
};

static uint32_t g1_bytes(cuzk_curve c) { return c == CUZK_CURVE_BN254 ? 64 : 96; }

cuzk_err cuzk_pk_load(cuzk_pk **out, const cuzk_zkey *zk, unsigned nthreads, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_ff_init();
    cuzk_pk *pk = calloc(1, sizeof *pk);
    if (!pk)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    pk->curve = zk->curve;
    cuzk_err e = zk->curve == CUZK_CURVE_BN254 ? bn254_pk_load(&pk->k.bn254, zk, nthreads, eb)
                                                : bls12_381_pk_load(&pk->k.bls12_381, zk, nthreads, eb);
    if (e) {
        free(pk);
        return e;
    }
    *out = pk;
    return CUZK_OK;
}

cuzk_err cuzk_pk_generate(cuzk_pk **out, const cuzk_gen_params *p, cuzk_setup_info *info,
                          cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    *out = NULL;
    cuzk_ff_init();
    size_t sl = p && p->seed ? strlen(p->seed) : 0;
    if (sl == 0 || sl > 256)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "generated key: the seed must be 1 to 256 characters");
    cuzk__circuit_source src;
    cuzk_err e = cuzk__gen_source_new(&src, p, eb);
    if (e)
        return e;
    cuzk_setup_opts o = {0};
    o.seed = (const uint8_t *)p->seed;
    o.seed_len = sl;
    o.nthreads = p->nthreads;
    o.device = p->device;
    if (info)
        memset(info, 0, sizeof *info);
    cuzk_pk *pk = calloc(1, sizeof *pk);
    if (!pk) {
        cuzk__gen_source_free(&src);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    pk->curve = p->curve;
    pk->generated = 1;
    e = p->curve == CUZK_CURVE_BN254 ? bn254_pk_generate(&pk->k.bn254, &src, &o, info, eb)
                                     : bls12_381_pk_generate(&pk->k.bls12_381, &src, &o, info, eb);
    cuzk__gen_source_free(&src);
    if (info) {
        info->ms_total = cuzk__now_ms() - t0;
    }
    if (e) {
        free(pk);
        return e;
    }
    *out = pk;
    return CUZK_OK;
}

int cuzk_pk_is_generated(const cuzk_pk *pk) { return pk->generated; }

void cuzk_pk_free(cuzk_pk *pk)
{
    if (!pk)
        return;
    if (pk->curve == CUZK_CURVE_BN254)
        bn254_pk_free(pk->k.bn254);
    else
        bls12_381_pk_free(pk->k.bls12_381);
    free(pk);
}

#define PK_FIELD(pk, f) ((pk)->curve == CUZK_CURVE_BN254 ? (pk)->k.bn254->f : (pk)->k.bls12_381->f)

/* The key's curve-independent part, which the prover (prover.c) works on. */
static cuzk__pk_base *pk_base(const cuzk_pk *pk)
{
    return pk->curve == CUZK_CURVE_BN254 ? &pk->k.bn254->base : &pk->k.bls12_381->base;
}

cuzk_curve cuzk_pk_curve(const cuzk_pk *pk) { return pk->curve; }
uint32_t cuzk_pk_n_vars(const cuzk_pk *pk) { return PK_FIELD(pk, base.n_vars); }
uint32_t cuzk_pk_n_public(const cuzk_pk *pk) { return PK_FIELD(pk, base.n_public); }
uint32_t cuzk_pk_domain_size(const cuzk_pk *pk) { return PK_FIELD(pk, base.domain_size); }
size_t cuzk_pk_bytes(const cuzk_pk *pk) { return PK_FIELD(pk, bytes); }

cuzk_err cuzk_pk_vk(const cuzk_pk *pk, cuzk_vk *vk, cuzk_errbuf *eb)
{
    memset(vk, 0, sizeof *vk);
    vk->curve = pk->curve;
    vk->n_public = cuzk_pk_n_public(pk);
    size_t n_ic = (size_t)vk->n_public + 1;
    vk->ic = malloc(n_ic * g1_bytes(pk->curve));
    if (!vk->ic)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
#define VK_FROM(P, k)                                                                         \
    do {                                                                                      \
        P##_g1_to_snarkjs(vk->alpha1, &k->alpha1);                                           \
        P##_g1_to_snarkjs(vk->beta1, &k->beta1);                                             \
        P##_g1_to_snarkjs(vk->delta1, &k->delta1);                                           \
        P##_g2_to_snarkjs(vk->beta2, &k->beta2);                                             \
        P##_g2_to_snarkjs(vk->gamma2, &k->gamma2);                                           \
        P##_g2_to_snarkjs(vk->delta2, &k->delta2);                                           \
        for (size_t i = 0; i < n_ic; i++)                                                    \
            P##_g1_to_snarkjs(vk->ic + i * g1_bytes(pk->curve), &k->ic[i]);                  \
    } while (0)
    if (pk->curve == CUZK_CURVE_BN254)
        VK_FROM(bn254, pk->k.bn254);
    else
        VK_FROM(bls12_381, pk->k.bls12_381);
#undef VK_FROM
    return CUZK_OK;
}

void cuzk_vk_clear(cuzk_vk *vk)
{
    free(vk->ic);
    vk->ic = NULL;
}

cuzk_err cuzk_witness_buf_alloc(void **out, uint64_t n_values, cuzk_errbuf *eb)
{
    *out = NULL;
    if (n_values > (uint64_t)SIZE_MAX / 32)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "a witness of %" PRIu64 " values", n_values);
    return cuzk_gpu_host_alloc_any((size_t)n_values * 32, out, eb);
}

void cuzk_witness_buf_free(void *p) { cuzk_gpu_host_free_any(p); }

cuzk_err cuzk_prove(cuzk_proof *proof, const cuzk_pk *pk, const uint8_t *witness,
                    uint64_t n_witness, const cuzk_prove_opts *opts, cuzk_prove_stats *stats,
                    cuzk_errbuf *eb)
{
    cuzk_prove_opts def = {0};
    cuzk_prove_stats st_local;
    if (!opts)
        opts = &def;
    if (!stats)
        stats = &st_local;
    memset(stats, 0, sizeof *stats);
    int use_gpu = 0;
    if (opts->backend == CUZK_BACKEND_GPU) {
        if (cuzk_gpu_device_count() == 0)
            return cuzk_errf(eb, CUZK_NO_DEVICE, "--backend gpu: no CUDA device is available%s",
#if CUZK_HAVE_CUDA
                             ""
#else
                             " (this build has no CUDA backend)"
#endif
            );
        use_gpu = 1;
    } else if (opts->backend == CUZK_BACKEND_AUTO) {
        use_gpu = cuzk_gpu_device_count() > 0;
    }
    int fallback = opts->backend == CUZK_BACKEND_AUTO;
    return cuzk__prove(proof, pk_base(pk), witness, n_witness, opts, use_gpu, fallback, stats,
                       eb);
}

/* ------------------------------------------------------------------ staged proving */

/* The stages themselves are prover.c's. */

cuzk_err cuzk_prove_begin(cuzk_prove_state **out, const cuzk_pk *pk, const uint8_t *witness,
                          uint64_t n_witness, const cuzk_prove_opts *opts, cuzk_errbuf *eb)
{
    return cuzk_prove_begin_ex(out, pk, witness, n_witness, opts, 0, eb);
}

cuzk_err cuzk_prove_begin_ex(cuzk_prove_state **out, const cuzk_pk *pk, const uint8_t *witness,
                             uint64_t n_witness, const cuzk_prove_opts *opts, unsigned flags,
                             cuzk_errbuf *eb)
{
    cuzk_prove_opts def = {0};
    return cuzk__prove_start(out, pk_base(pk), witness, n_witness, opts ? opts : &def,
                             (flags & CUZK_PROVE_DEFER_SYNTH) != 0, eb);
}

cuzk_err cuzk_pk_gpu_stage(cuzk_pk *pk, int device, unsigned parts, cuzk_errbuf *eb)
{
    return cuzk__pk_gpu_stage(pk_base(pk), device, parts, eb);
}

cuzk_err cuzk_pk_gpu_stage_streamed(cuzk_pk *pk, int device, unsigned parts, unsigned streamed,
                                    uint64_t chunk_bytes, cuzk_errbuf *eb)
{
    return cuzk__pk_gpu_stage_streamed(pk_base(pk), device, parts, streamed, chunk_bytes, eb);
}

unsigned cuzk_pk_gpu_streamed(cuzk_pk *pk, int device)
{
    return cuzk__pk_gpu_streamed(pk_base(pk), device);
}

void cuzk_pk_gpu_unstage(cuzk_pk *pk, int device) { cuzk__pk_gpu_unstage(pk_base(pk), device); }

uint64_t cuzk_pk_release_host_sets(cuzk_pk *pk, unsigned sets)
{
    cuzk__pk_base *b = pk_base(pk);
    void *ptr[CUZK_PK_GPU_ARRAYS];
    size_t len[CUZK_PK_GPU_ARRAYS];
    b->ops->arrays(b, ptr, len);
    uint64_t freed = 0;
    for (int k = 0; k < 5; k++) {
        if (!(sets >> k & 1) || !ptr[k])
            continue;
        b->ops->consume_set(b, k); /* the array and its CPU table, if it has one */
        freed += len[k];
        b->host_released |= 1u << k;
    }
    if ((sets & CUZK_PK_ROWS) && ptr[5]) {
        for (int k = 5; k < CUZK_PK_GPU_ARRAYS; k++)
            freed += len[k];
        b->ops->consume_coefs(b);
        b->host_released |= CUZK_PK_ROWS;
    }
    if (pk->curve == CUZK_CURVE_BN254)
        pk->k.bn254->bytes -= freed;
    else
        pk->k.bls12_381->bytes -= freed;
    return freed;
}

unsigned cuzk_pk_host_released(const cuzk_pk *pk)
{
    return PK_FIELD(pk, base.host_released);
}

size_t cuzk_pk_gpu_arrays(cuzk_pk *pk, void *ptr[CUZK_PK_GPU_ARRAYS],
                          size_t len[CUZK_PK_GPU_ARRAYS])
{
    cuzk__pk_base *b = pk_base(pk);
    return b->ops->arrays(b, ptr, len);
}

uint64_t cuzk_pk_gpu_bytes(cuzk_pk *pk, unsigned parts)
{
    void *ptr[CUZK_PK_GPU_ARRAYS];
    size_t len[CUZK_PK_GPU_ARRAYS];
    size_t n = cuzk_pk_gpu_arrays(pk, ptr, len);
    uint64_t b = 0;
    const cuzk_gpu_curve gc =
        pk->curve == CUZK_CURVE_BN254 ? CUZK_GPU_BN254 : CUZK_GPU_BLS12_381;
    for (size_t i = 0; i < n; i++) {
        if (!(i < 4 || (i == 4 && (parts & CUZK_PK_STAGE_G2)) ||
              (i > 4 && (parts & CUZK_PK_STAGE_ROWS))))
            continue;
        if (i <= 4) {
            /* The device set with its copies (max_copies 1: none) and its map of points at
             * infinity; C's set is padded to the witness length. */
            uint64_t pts = i == 3 ? cuzk_pk_domain_size(pk) : cuzk_pk_n_vars(pk);
            b += cuzk_gpu_tables_bytes(gc, i == 4 ? CUZK_GPU_G2 : CUZK_GPU_G1, pts,
                                       (parts & CUZK_PK_STAGE_TABLES) ? 0 : 1);
        } else {
            b += len[i];
        }
    }
    return b;
}

void cuzk_pk_set_names(unsigned sets, char *buf, size_t size)
{
    static const char *const name[6] = {"A", "B1", "C", "H", "B2", "rows"};
    size_t k = 0;
    if (size)
        buf[0] = 0;
    for (int i = 0; i < 6 && size; i++)
        if (sets >> i & 1) {
            int w = snprintf(buf + k, size - k, "%s%s", k ? "," : "", name[i]);
            if (w < 0 || (size_t)w >= size - k) {
                buf[k] = 0; /* truncated: the names that fit, whole */
                return;
            }
            k += (size_t)w;
        }
}

unsigned cuzk_pk_gpu_no_tables(cuzk_pk *pk, int device)
{
    return cuzk__pk_gpu_no_tables(pk_base(pk), device);
}

uint32_t cuzk_pk_gpu_mask(cuzk_pk *pk) { return cuzk__pk_gpu_mask(pk_base(pk)); }

/* Decodes a vk/proof (untrusted: subgroup-checked) and verifies. */
#define VERIFY_IMPL(P)                                                                        \
    static cuzk_err P##_verify_bytes(const cuzk_vk *vk, const uint8_t *pub, uint64_t n_pub,   \
                                     const cuzk_proof *proof, cuzk_errbuf *eb)                \
    {                                                                                         \
        P##_g1_affine alpha1, A, C, *ic = NULL;                                               \
        P##_g2_affine beta2, gamma2, delta2, B;                                               \
        P##_fr_t *pubv = NULL;                                                                \
        cuzk_errbuf peb;                                                                      \
        cuzk_err e;                                                                           \
        if ((e = P##_g1_from_snarkjs(&alpha1, vk->alpha1, CUZK_EC_CHECK_SUBGROUP, &peb)) ||   \
            (e = P##_g2_from_snarkjs(&beta2, vk->beta2, CUZK_EC_CHECK_SUBGROUP, &peb)) ||     \
            (e = P##_g2_from_snarkjs(&gamma2, vk->gamma2, CUZK_EC_CHECK_SUBGROUP, &peb)) ||   \
            (e = P##_g2_from_snarkjs(&delta2, vk->delta2, CUZK_EC_CHECK_SUBGROUP, &peb)))     \
            return cuzk_errf(eb, e, "verification key: %s", peb.msg);                         \
        if ((e = P##_g1_from_snarkjs(&A, proof->a, CUZK_EC_CHECK_SUBGROUP, &peb)))            \
            return cuzk_errf(eb, e, "proof pi_a: %s", peb.msg);                               \
        if ((e = P##_g2_from_snarkjs(&B, proof->b, CUZK_EC_CHECK_SUBGROUP, &peb)))            \
            return cuzk_errf(eb, e, "proof pi_b: %s", peb.msg);                               \
        if ((e = P##_g1_from_snarkjs(&C, proof->c, CUZK_EC_CHECK_SUBGROUP, &peb)))            \
            return cuzk_errf(eb, e, "proof pi_c: %s", peb.msg);                               \
        ic = malloc(((size_t)n_pub + 1) * sizeof *ic);                                        \
        pubv = malloc(((size_t)n_pub + 1) * sizeof *pubv);                                    \
        if (!ic || !pubv) {                                                                   \
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");                               \
            goto out;                                                                         \
        }                                                                                     \
        if ((e = P##_g1_from_snarkjs_n(ic, vk->ic, (size_t)n_pub + 1, CUZK_EC_CHECK_SUBGROUP,  \
                                       &peb))) {                                              \
            e = cuzk_errf(eb, e, "verification key IC: %s", peb.msg);                         \
            goto out;                                                                         \
        }                                                                                     \
        for (uint64_t i = 0; i < n_pub; i++) {                                                \
            memcpy(pubv[i].l, pub + 32 * i, 32);                                              \
            if (!P##_fr_limbs_lt_p(pubv[i].l)) {                                              \
                e = cuzk_errf(eb, CUZK_NON_CANONICAL, "public input %" PRIu64 " is not below r", \
                              i);                                                             \
                goto out;                                                                     \
            }                                                                                 \
        }                                                                                     \
        e = P##_verify_points(&alpha1, &beta2, &gamma2, &delta2, ic, pubv, n_pub, &A, &B, &C) \
                ? CUZK_OK                                                                     \
                : cuzk_errf(eb, CUZK_VERIFY_FAILED, "invalid proof");                         \
    out:                                                                                      \
        free(ic);                                                                             \
        free(pubv);                                                                           \
        return e;                                                                             \
    }
VERIFY_IMPL(bn254)
VERIFY_IMPL(bls12_381)

cuzk_err cuzk_verify(const cuzk_vk *vk, const uint8_t *pub, uint64_t n_public,
                     const cuzk_proof *proof, cuzk_errbuf *eb)
{
    cuzk_ff_init();
    if (proof->curve != vk->curve)
        return cuzk_errf(eb, CUZK_WRONG_CURVE, "the proof is on %s, the verification key on %s",
                         cuzk_curve_name(proof->curve), cuzk_curve_name(vk->curve));
    if (n_public != vk->n_public)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "%" PRIu64 " public inputs, the verification key expects %u", n_public,
                         vk->n_public);
    if (vk->curve == CUZK_CURVE_BN254)
        return bn254_verify_bytes(vk, pub, n_public, proof, eb);
    return bls12_381_verify_bytes(vk, pub, n_public, proof, eb);
}

#define ALPHABETA_IMPL(P)                                                                     \
    static cuzk_err P##_alphabeta_dec(const cuzk_vk *vk, char (*s)[CUZK_EC_DEC_MAX],          \
                                      cuzk_errbuf *eb)                                        \
    {                                                                                         \
        P##_g1_affine a;                                                                      \
        P##_g2_affine b;                                                                      \
        cuzk_errbuf peb;                                                                      \
        cuzk_err e;                                                                           \
        if ((e = P##_g1_from_snarkjs(&a, vk->alpha1, CUZK_EC_CHECK_SUBGROUP, &peb)) ||        \
            (e = P##_g2_from_snarkjs(&b, vk->beta2, CUZK_EC_CHECK_SUBGROUP, &peb)))           \
            return cuzk_errf(eb, e, "verification key: %s", peb.msg);                         \
        P##_fp12_t f, g;                                                                      \
        P##_miller_loop(&f, &a, &b, 1);                                                       \
        P##_final_exp(&g, &f);                                                                \
        const P##_fp2_t *c[6] = {&g.c0.c0, &g.c0.c1, &g.c0.c2, &g.c1.c0, &g.c1.c1, &g.c1.c2};  \
        for (int i = 0; i < 6; i++) {                                                         \
            P##_fp_to_dec(s[2 * i], CUZK_EC_DEC_MAX, &c[i]->c0);                              \
            P##_fp_to_dec(s[2 * i + 1], CUZK_EC_DEC_MAX, &c[i]->c1);                          \
        }                                                                                     \
        return CUZK_OK;                                                                       \
    }
ALPHABETA_IMPL(bn254)
ALPHABETA_IMPL(bls12_381)

cuzk_err cuzk__alphabeta_dec(const cuzk_vk *vk, char (*s)[CUZK_EC_DEC_MAX], cuzk_errbuf *eb)
{
    cuzk_ff_init();
    if (vk->curve == CUZK_CURVE_BN254)
        return bn254_alphabeta_dec(vk, s, eb);
    return bls12_381_alphabeta_dec(vk, s, eb);
}

cuzk_err cuzk_zkey_vk(const cuzk_zkey *zk, cuzk_vk *vk, cuzk_errbuf *eb)
{
    cuzk_ff_init();
    memset(vk, 0, sizeof *vk);
    vk->curve = zk->curve;
    vk->n_public = zk->n_public;
    uint32_t g1 = zk->g1_size, g2 = zk->g2_size;
    memcpy(vk->alpha1, zk->alpha1, g1);
    memcpy(vk->beta1, zk->beta1, g1);
    memcpy(vk->delta1, zk->delta1, g1);
    memcpy(vk->beta2, zk->beta2, g2);
    memcpy(vk->gamma2, zk->gamma2, g2);
    memcpy(vk->delta2, zk->delta2, g2);
    vk->ic = malloc(zk->n_ic * g1);
    if (!vk->ic)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    memcpy(vk->ic, zk->ic, zk->n_ic * g1);
    /* Validate every point (the header is small): canonical, on the curve, in the subgroup. */
    cuzk_errbuf peb;
    cuzk_err e = CUZK_OK;
#define VK_CHECK(P)                                                                           \
    do {                                                                                      \
        P##_g1_affine a;                                                                      \
        P##_g2_affine b;                                                                      \
        const uint8_t *g1s[3] = {vk->alpha1, vk->beta1, vk->delta1};                          \
        const uint8_t *g2s[3] = {vk->beta2, vk->gamma2, vk->delta2};                          \
        for (int i = 0; i < 3 && !e; i++)                                                     \
            e = P##_g1_from_snarkjs(&a, g1s[i], CUZK_EC_CHECK_SUBGROUP, &peb);                \
        for (int i = 0; i < 3 && !e; i++)                                                     \
            e = P##_g2_from_snarkjs(&b, g2s[i], CUZK_EC_CHECK_SUBGROUP, &peb);                \
        for (uint64_t i = 0; i < zk->n_ic && !e; i++)                                         \
            e = P##_g1_from_snarkjs(&a, vk->ic + i * g1, CUZK_EC_CHECK_SUBGROUP, &peb);        \
    } while (0)
    if (zk->curve == CUZK_CURVE_BN254)
        VK_CHECK(bn254);
    else
        VK_CHECK(bls12_381);
#undef VK_CHECK
    if (e) {
        cuzk_vk_clear(vk);
        return cuzk_errf(eb, e, "%s: verification key point: %s", zk->file.name, peb.msg);
    }
    return CUZK_OK;
}

#define R1CS_CHECK_IMPL(P)                                                                    \
    static cuzk_err P##_r1cs_check(const cuzk_r1cs *r, const uint8_t *witness, cuzk_errbuf *eb) \
    {                                                                                         \
        for (uint32_t i = 0; i < r->n_constraints; i++) {                                     \
            cuzk_r1cs_lc lc[3];                                                               \
            cuzk_r1cs_constraint(r, i, lc);                                                   \
            P##_fr_t v[3];                                                                    \
            for (int m = 0; m < 3; m++) {                                                     \
                P##_fr_set_zero(&v[m]);                                                       \
                for (uint32_t j = 0; j < lc[m].n_terms; j++) {                                \
                    P##_fr_t c, w, t;                                                         \
                    uint64_t l[4];                                                            \
                    memcpy(l, cuzk_r1cs_term_coef(r, &lc[m], j), 32);                         \
                    if (!P##_fr_limbs_lt_p(l))                                                \
                        return cuzk_errf(eb, CUZK_NON_CANONICAL,                              \
                                         "%s: constraint %u has a coefficient not below r",   \
                                         r->file.name, i);                                    \
                    P##_fr_from_canonical(&c, l);                                             \
                    /* plain w times Montgomery c: Montgomery-reduces to plain c*w; the sum   \
                     * is compared consistently, so the form does not matter. */             \
                    memcpy(w.l, witness + 32 * (uint64_t)cuzk_r1cs_term_wire(r, &lc[m], j),   \
                           32);                                                               \
                    P##_fr_mul(&t, &c, &w);                                                   \
                    P##_fr_add(&v[m], &v[m], &t);                                             \
                }                                                                             \
            }                                                                                 \
            /* v are plain values: v0*v1 in Montgomery gives v0*v1/R, so scale v2 too. */     \
            P##_fr_t ab, cc;                                                                  \
            P##_fr_mul(&ab, &v[0], &v[1]);                                                    \
            P##_fr_t one = {{1}};                                                             \
            P##_fr_mul(&cc, &v[2], &one);                                                     \
            if (!P##_fr_eq(&ab, &cc))                                                         \
                return cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED,                                \
                                 "%s: the witness does not satisfy constraint %u (of %u)",    \
                                 r->file.name, i, r->n_constraints);                          \
        }                                                                                     \
        return CUZK_OK;                                                                       \
    }
R1CS_CHECK_IMPL(bn254)
R1CS_CHECK_IMPL(bls12_381)

cuzk_err cuzk_r1cs_check_witness(const cuzk_r1cs *r1cs, const uint8_t *witness,
                                 uint64_t n_witness, cuzk_errbuf *eb)
{
    cuzk_ff_init();
    if (n_witness != r1cs->n_wires)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH, "witness has %" PRIu64 " values, %s has %u wires",
                         n_witness, r1cs->file.name, r1cs->n_wires);
    for (uint64_t i = 0; i < n_witness; i++)
        if (!cuzk_curve_lt_r(r1cs->curve, witness + 32 * i))
            return cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", i);
    if (r1cs->curve == CUZK_CURVE_BN254)
        return bn254_r1cs_check(r1cs, witness, eb);
    return bls12_381_r1cs_check(r1cs, witness, eb);
}

/* ------------------------------------------------------------------ key cache */

static cuzk_err zkey_identity(const char *zkey_path, cuzk__zkey_id *id, cuzk_errbuf *eb)
{
    struct stat st;
    if (stat(zkey_path, &st) != 0)
        return cuzk_errf(eb, CUZK_IO, "%s: %s", zkey_path, strerror(errno));
    id->size = (uint64_t)st.st_size;
    id->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    id->ino = (uint64_t)st.st_ino;
    return CUZK_OK;
}

char *cuzk_pk_cache_path(const char *zkey_path, const char *cache_dir)
{
    char *out = NULL;
    if (!cache_dir || !cache_dir[0]) {
        if (asprintf(&out, "%s.cuzkcache", zkey_path) < 0)
            return NULL;
        return out;
    }
    /* One folder for many keys: the file name plus a hash of the zkey's full path, so keys
     * of the same name in different folders do not collide. */
    char *abs = realpath(zkey_path, NULL);
    const char *full = abs ? abs : zkey_path;
    const char *base = strrchr(zkey_path, '/');
    base = base ? base + 1 : zkey_path;
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = full; *c; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    if (asprintf(&out, "%s/%s.%08" PRIx64 ".cuzkcache", cache_dir, base, h & 0xffffffffu) < 0)
        out = NULL;
    free(abs);
    return out;
}

unsigned cuzk_pk_cache_remove_stale(const char *cache_path,
                                    void (*removed)(void *ctx, const char *path), void *ctx)
{
    char *dir = strdup(cache_path);
    if (!dir)
        return 0;
    char *slash = strrchr(dir, '/');
    const char *base = strrchr(cache_path, '/') ? strrchr(cache_path, '/') + 1 : cache_path;
    if (slash)
        slash[slash == dir] = 0; /* "/name": the root folder */
    size_t bl = strlen(base);
    unsigned n = 0;
    DIR *d = opendir(slash ? dir : ".");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        /* BASE.tmp.PID, as cuzk_pk_cache_save names its temporary file */
        const char *nm = de->d_name;
        if (strncmp(nm, base, bl) != 0 || strncmp(nm + bl, ".tmp.", 5) != 0)
            continue;
        char *end;
        long pid = strtol(nm + bl + 5, &end, 10);
        if (*end || pid <= 0 || end == nm + bl + 5)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* the writer lives (or belongs to another user): its file */
        char *full = NULL;
        if (asprintf(&full, "%s/%s", slash ? dir : ".", nm) < 0)
            break;
        if (unlinkat(dirfd(d), nm, 0) == 0) {
            n++;
            if (removed)
                removed(ctx, full);
        }
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
    return n;
}

cuzk_err cuzk_pk_precompute(cuzk_pk *pk, unsigned t, unsigned nthreads, cuzk_errbuf *eb)
{
    cuzk_ff_init();
    if (pk->curve == CUZK_CURVE_BN254)
        return bn254_pk_precompute(pk->k.bn254, t, nthreads, eb);
    return bls12_381_pk_precompute(pk->k.bls12_381, t, nthreads, eb);
}

unsigned cuzk_pk_precompute_copies(const cuzk_pk *pk) { return PK_FIELD(pk, tab_req); }

unsigned cuzk_pk_precompute_auto(uint64_t n_points, unsigned nthreads, char *why,
                                 size_t why_len)
{
    const unsigned T = nthreads ? nthreads : cuzk_num_threads();
    unsigned lg = 0;
    while (lg < 63 && ((uint64_t)1 << (lg + 1)) <= n_points)
        lg++;
    unsigned t = 2;
    const char *reason = "";
    if (lg < 10) {
        t = 0;
        reason = ": too few to pay";
    } else if (lg >= 15) {
        t = 0;
        reason = ": the bucket additions dominate, no tables pay";
    }
    if (why && why_len)
        snprintf(why, why_len, "2^%u points, %u thread%s%s", lg, T, T == 1 ? "" : "s", reason);
    return t;
}

/* The CPU MSM's scratch for n points of g bytes (coordinates of g / 2) with t copies and
 * window c (msm.h): per thread a sorted copy of one task's points (at most all n t, and at
 * most CUZK__MSM_CHUNK_POINTS(g) + 1: larger windows are cut into chunks of that size) with a
 * field element per pair and a digit per point, the bucket starts and lengths (counted at
 * 8 + 2 g bytes a bucket, a margin over the 8 they take); the index lists, the
 * Montgomery-converted scalars, and the copies of the scalar-1 points that the
 * classification sums on T threads. */
static uint64_t msm_scratch_bound(uint64_t n, uint64_t g, unsigned t, unsigned c, unsigned T)
{
    uint64_t v = n * (t ? t : 1), cmax = CUZK__MSM_CHUNK_POINTS(g);
    uint64_t cap = (v < cmax ? v : cmax) + 1;
    uint64_t nb = ((uint64_t)1 << (c > 1 ? c - 1 : 0)) + 1;
    return T * (cap * (g + g / 4 + 4) + nb * (8 + 2 * g)) + n * (8 + 32) +
           (n / 4 + T) * (g + g / 4) + ((uint64_t)1 << 20);
}

/* The window the CPU MSM picks for n points of group k (0 G1, 1 G2) on T threads. */
static unsigned msm_window_of(cuzk_curve cv, int k, uint64_t n, unsigned t, unsigned T)
{
    if (cv == CUZK_CURVE_BN254)
        return t ? (k ? bn254_g2_msm_tab_window(n, t, T) : bn254_g1_msm_tab_window(n, t, T))
                 : (k ? bn254_g2_msm_window(n, T) : bn254_g1_msm_window(n, T));
    return t ? (k ? bls12_381_g2_msm_tab_window(n, t, T) : bls12_381_g1_msm_tab_window(n, t, T))
             : (k ? bls12_381_g2_msm_window(n, T) : bls12_381_g1_msm_window(n, T));
}

uint64_t cuzk_prove_memory_estimate(const cuzk_zkey *zk, unsigned nthreads, unsigned tab_copies,
                                    int consume)
{
    const uint64_t T = nthreads ? nthreads : cuzk_num_threads();
    const uint64_t g1 = zk->g1_size, g2 = zk->g2_size, N = zk->domain_size, fr = 32;
    const uint64_t t = tab_copies ? tab_copies : 1;
    /* Decoded points (the same size as the zkey's), with t - 1 further copies of each set
     * that the MSMs read (IC is read only by the verification). */
    const uint64_t pts = zk->n_ic * g1 + t * ((zk->n_a + zk->n_b1 + zk->n_c + zk->n_h) * g1 +
                                              zk->n_b2 * g2);
    /* coefficients by row (a 4-byte signal and the value, padded to 8) and row pointers */
    const uint64_t coefs = zk->n_coefs * ((4 + fr + 7) / 8 * 8) + 2 * (N + 1) * 8;
    const uint64_t load_extra = 2 * N * 8 + 2 * ((uint64_t)3 << 20); /* fill cursors, zkey
                                                                         * pages in flight */
    const uint64_t abc = 3 * N * fr, tw = N * fr, coset = N * fr;
    const uint64_t wit = (uint64_t)zk->n_vars * fr; /* the .wtns mapping, read in place */
    uint64_t scr = 0, sz[5][2] = {{zk->n_a, g1}, {zk->n_b1, g1}, {zk->n_c, g1},
                                  {zk->n_h, g1}, {zk->n_b2, g2}};
    for (int k = 0; k < 5; k++) {
        unsigned c = msm_window_of(zk->curve, k == 4, sz[k][0], tab_copies, (unsigned)T);
        uint64_t b = msm_scratch_bound(sz[k][0], sz[k][1], tab_copies, c, (unsigned)T);
        if (b > scr)
            scr = b;
    }
    const uint64_t prog = (uint64_t)8 << 20; /* the program, libraries, thread stacks */
    uint64_t peak;
    if (consume) {
        /* load and synthesis (everything but the coset table), H (coefficients freed),
         * then the MSMs (domain and a, b, c freed but h) */
        uint64_t p1 = pts + coefs + tw + (abc > load_extra ? abc : load_extra);
        uint64_t p2 = pts + abc + tw + coset;
        uint64_t p3 = pts + N * fr + scr;
        peak = p1 > p2 ? p1 : p2;
        peak = peak > p3 ? peak : p3;
    } else {
        uint64_t work = abc > N * fr + scr ? abc : N * fr + scr;
        peak = pts + coefs + tw + coset + (work > load_extra ? work : load_extra);
    }
    return peak + wit + prog;
}

cuzk_err cuzk_pk_cache_save(const cuzk_pk *pk, const char *cache_path, const char *zkey_path,
                            cuzk_errbuf *eb)
{
    cuzk__zkey_id id = {0, 0, 0};
    cuzk_err e = zkey_identity(zkey_path, &id, eb);
    if (e)
        return e;
    return pk->curve == CUZK_CURVE_BN254 ? bn254_cache_save(pk->k.bn254, cache_path, &id, eb)
                                         : bls12_381_cache_save(pk->k.bls12_381, cache_path, &id, eb);
}

/* Reads and checks a cache file's header (open on fd): magic, header hash, format version,
 * the zkey's identity (id: the zkey on disk now), the curve. */
static cuzk_err cache_header(int fd, struct stat *st, cuzk__cache_hdr *hp,
                             const cuzk__zkey_id *id, const char *cache_path,
                             const char *zkey_path, cuzk_errbuf *eb)
{
    cuzk_err e = CUZK_OK;
    cuzk__cache_hdr h;
    memset(&h, 0, sizeof h); /* copied out on every path, a short file's too */
    if (fstat(fd, st) != 0 || (uint64_t)st->st_size < sizeof h ||
        read(fd, &h, sizeof h) != (ssize_t)sizeof h)
        e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: shorter than a cache header", cache_path);
    else if (memcmp(h.magic, "CUZKPKC", 8) != 0)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: not a cuzk key cache", cache_path);
    else if (h.hdr_hash !=
             cuzk__hash64(CUZK__CACHE_SEED, &h, offsetof(cuzk__cache_hdr, hdr_hash)))
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: the header hash does not match (corrupt file)",
                      cache_path);
    else if (h.version != CUZK__CACHE_VERSION)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: cache format %u, this build reads %u",
                      cache_path, h.version, CUZK__CACHE_VERSION);
    else if (h.zkey_size != id->size || h.zkey_mtime_ns != id->mtime_ns || h.zkey_ino != id->ino)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: stale: %s changed since the cache was written",
                      cache_path, zkey_path);
    else if (h.curve != CUZK_CURVE_BN254 && h.curve != CUZK_CURVE_BLS12_381)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: unknown curve %u", cache_path, h.curve);
    *hp = h;
    return e;
}

/* Opens a cache file and checks its header against the zkey (cache_header). *fd is -1 when
 * the file could not be opened; otherwise the caller closes it, whatever the result. */
static cuzk_err cache_open(const char *cache_path, const char *zkey_path, int *fd,
                           struct stat *st, cuzk__cache_hdr *h, cuzk_errbuf *eb)
{
    *fd = -1;
    cuzk__zkey_id id = {0, 0, 0};
    cuzk_err e = zkey_identity(zkey_path, &id, eb);
    if (e)
        return e;
    *fd = open(cache_path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return errno == ENOENT ? cuzk_errf(eb, CUZK_NOT_FOUND, "%s: no cache file", cache_path)
                               : cuzk_errf(eb, CUZK_IO, "%s: %s", cache_path, strerror(errno));
    return cache_header(*fd, st, h, &id, cache_path, zkey_path, eb);
}

cuzk_err cuzk_pk_cache_check(const char *cache_path, const char *zkey_path, uint64_t *file_bytes,
                             cuzk_errbuf *eb)
{
    int fd;
    struct stat st;
    cuzk__cache_hdr h;
    cuzk_err e = cache_open(cache_path, zkey_path, &fd, &st, &h, eb);
    if (fd < 0)
        return e;
    /* The payload's exact length (what cache_load insists on) without reading it. */
    if (!e && h.payload_len != (uint64_t)st.st_size - sizeof h)
        e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: %llu payload bytes, the header says %llu",
                      cache_path, (unsigned long long)((uint64_t)st.st_size - sizeof h),
                      (unsigned long long)h.payload_len);
    close(fd);
    if (!e && file_bytes)
        *file_bytes = (uint64_t)st.st_size;
    return e;
}

cuzk_err cuzk_pk_cache_load(cuzk_pk **out, const char *cache_path, const char *zkey_path,
                            cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_ff_init();
    int fd;
    struct stat st;
    cuzk__cache_hdr h;
    cuzk_err e = cache_open(cache_path, zkey_path, &fd, &st, &h, eb);
    if (fd < 0)
        return e;
    cuzk_pk *pk = NULL;
    if (!e && !(pk = calloc(1, sizeof *pk)))
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    if (!e) {
        pk->curve = (cuzk_curve)h.curve;
        e = pk->curve == CUZK_CURVE_BN254
                ? bn254_cache_load(&pk->k.bn254, fd, &h, (uint64_t)st.st_size, cache_path, eb)
                : bls12_381_cache_load(&pk->k.bls12_381, fd, &h, (uint64_t)st.st_size,
                                       cache_path, eb);
        if (e) {
            free(pk);
            pk = NULL;
        }
    }
    close(fd);
    *out = pk;
    return e;
}
