/* Single-party Groth16 setup writing a snarkjs .zkey (cuzk/setup.h): one pass over the r1cs
 * (ranges of rows on all threads) accumulates A_i(tau), B_i(tau), C_i(tau) for every wire in
 * the Lagrange basis, then every point section is computed chunk by chunk with fixed-base
 * multiplication on all threads or a GPU and streamed to the file, so memory is 96 bytes per
 * wire plus the tables, one chunk and each thread's range. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cuzk/io.h"
#include "cuzk/setup.h"
#include "ec/ec.h"
#include "ec/encode.h"
#include "ff/ff.h"
#include "gpu/gpu.h"
#include "groth16/gen_internal.h"
#include "poly/ntt.h"
#include "util/clock.h"
#include "util/parallel.h"
#include "util/sha256.h"

/* ------------------------------------------------------------------ per-curve templates */

/* Every scalar is < r < 2^255 on both curves. */
#define FB_SCALAR_BITS 255u

#define FB_G bn254_g1
#define FB_F bn254_fp
#include "groth16/fixedbase_tmpl.h"
#define FB_G bn254_g2
#define FB_F bn254_fp2
#include "groth16/fixedbase_tmpl.h"
#define FB_G bls12_381_g1
#define FB_F bls12_381_fp
#include "groth16/fixedbase_tmpl.h"
#define FB_G bls12_381_g2
#define FB_F bls12_381_fp2
#include "groth16/fixedbase_tmpl.h"

#define ST_FR bn254_fr
#define ST_G1 bn254_g1
#define ST_G2 bn254_g2
#define ST_G1_BYTES BN254_G1_SNARKJS_BYTES
#define ST_G2_BYTES BN254_G2_SNARKJS_BYTES
#define ST_NAME bn254
#define ST_GPU_CURVE CUZK_GPU_BN254
#define ST_MAX_LOG 28u
#include "groth16/setup_tmpl.h"

#define ST_FR bls12_381_fr
#define ST_G1 bls12_381_g1
#define ST_G2 bls12_381_g2
#define ST_G1_BYTES BLS12_381_G1_SNARKJS_BYTES
#define ST_G2_BYTES BLS12_381_G2_SNARKJS_BYTES
#define ST_NAME bls12_381
#define ST_GPU_CURVE CUZK_GPU_BLS12_381
#define ST_MAX_LOG 32u
#include "groth16/setup_tmpl.h"

/* ------------------------------------------------------------------ r1cs file and zkey file */

/* Constraints lo .. hi - 1 of an r1cs file, their terms copied out (a constraint has any
 * number). */
static cuzk_err st_r1cs_range(const void *src, uint64_t lo, uint64_t hi, cuzk__constraint_fn fn,
                              void *ctx, cuzk_errbuf *eb)
{
    const cuzk_r1cs *r = src;
    cuzk_r1cs_term *t = NULL;
    size_t cap = 0;
    cuzk_err e = CUZK_OK;
    for (uint64_t row = lo; row < hi && row < r->n_constraints && !e; row++) {
        cuzk_r1cs_lc lc[3];
        cuzk_r1cs_constraint(r, (uint32_t)row, lc);
        size_t need = (size_t)lc[0].n_terms + lc[1].n_terms + lc[2].n_terms;
        if (need > cap) {
            size_t nc = need > 2 * cap ? need : 2 * cap;
            cuzk_r1cs_term *nt = realloc(t, nc * sizeof *t);
            if (!nt) {
                e = cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory");
                break;
            }
            t = nt, cap = nc;
        }
        size_t k = 0;
        for (int mtx = 0; mtx < 3; mtx++)
            for (uint32_t j = 0; j < lc[mtx].n_terms; j++, k++) {
                t[k].wire = cuzk_r1cs_term_wire(r, &lc[mtx], j);
                memcpy(t[k].coef, cuzk_r1cs_term_coef(r, &lc[mtx], j), 32);
            }
        e = fn(ctx, row, t, lc[0].n_terms, t + lc[0].n_terms, lc[1].n_terms,
               t + lc[0].n_terms + lc[1].n_terms, lc[2].n_terms, eb);
    }
    free(t);
    return e;
}

typedef struct {
    cuzk__zkey_sink base;
    cuzk_binfile_writer bw;
} st_file_sink;

static cuzk_err st_file_begin(cuzk__zkey_sink *s, uint32_t id, cuzk_errbuf *eb)
{
    return cuzk_binfile_begin_section(&((st_file_sink *)s)->bw, id, eb);
}

static cuzk_err st_file_write(cuzk__zkey_sink *s, const void *p, size_t n, cuzk_errbuf *eb)
{
    return cuzk_binfile_write(&((st_file_sink *)s)->bw, p, n, eb);
}

static cuzk_err st_file_end(cuzk__zkey_sink *s, cuzk_errbuf *eb)
{
    return cuzk_binfile_end_section(&((st_file_sink *)s)->bw, eb);
}

cuzk_err cuzk__setup_run(const cuzk__circuit_source *src, cuzk__zkey_sink *sink,
                         const cuzk_setup_opts *o, cuzk_setup_info *info, cuzk_errbuf *eb)
{
    if (!o->seed || o->seed_len == 0 || o->seed_len > 256)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "setup: the seed must be 1 to 256 bytes");
    cuzk_setup_opts oo = *o;
    if (!oo.max_memory) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        oo.max_memory = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
    }
    return src->curve == CUZK_CURVE_BN254 ? run_bn254(src, sink, &oo, info, eb)
                                          : run_bls12_381(src, sink, &oo, info, eb);
}

/* ------------------------------------------------------------------ entry point */

cuzk_err cuzk_setup(const char *r1cs_path, const char *zkey_path, const cuzk_setup_opts *opts,
                    cuzk_setup_info *info, cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    cuzk_setup_opts o = {0};
    if (opts)
        o = *opts;
    uint8_t seed[256];
    size_t seed_len;
    if (o.seed) {
        if (o.seed_len == 0 || o.seed_len > sizeof seed)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "setup: the seed must be 1 to 256 bytes");
        memcpy(seed, o.seed, o.seed_len);
        seed_len = o.seed_len;
    } else {
        seed_len = 32;
        size_t got = 0;
        while (got < seed_len) {
            ssize_t k = getrandom(seed + got, seed_len - got, 0);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                return cuzk_errf(eb, CUZK_IO, "setup: the OS random generator failed: %s",
                                 strerror(errno));
            }
            got += (size_t)k;
        }
    }
    if (info)
        memset(info, 0, sizeof *info);

    cuzk_r1cs r;
    cuzk_err e = cuzk_r1cs_open(&r, r1cs_path, eb);
    if (e)
        return e;
    cuzk__circuit_source src = {r.curve,       r.n_constraints, r.n_wires,
                                (uint64_t)r.n_outputs + r.n_pub_inputs,
                                r.file.name,   (uint64_t)1 << 12, st_r1cs_range,
                                &r};
    st_file_sink fs = {{st_file_begin, st_file_write, st_file_end, NULL, NULL, {0, 0}}, {0}};
    o.seed = seed;
    o.seed_len = seed_len;
    if (!(e = cuzk_binfile_writer_open(&fs.bw, zkey_path, "zkey", 1, 10, eb))) {
        e = cuzk__setup_run(&src, &fs.base, &o, info, eb);
        if (e) {
            if (!fs.bw.err)
                fs.bw.err = e; /* makes close remove the partial file */
            cuzk_errbuf tmp;
            cuzk_binfile_writer_close(&fs.bw, &tmp);
        } else {
            e = cuzk_binfile_writer_close(&fs.bw, eb);
        }
    }
    cuzk_r1cs_close(&r);
    memset(seed, 0, sizeof seed);
    if (info)
        info->ms_total = cuzk__now_ms() - t0;
    return e;
}
