/* Single-party Groth16 setup writing a snarkjs .zkey (cuzk/setup.h): one pass over the r1cs
 * accumulates A_i(tau), B_i(tau), C_i(tau) for every wire in the Lagrange basis, then every
 * point section is computed chunk by chunk with fixed-base multiplication on all threads and
 * streamed to the file, so memory is 96 bytes per wire plus the tables and one chunk. */
#define _GNU_SOURCE
#include <errno.h>
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
#define ST_MAX_LOG 28u
#include "groth16/setup_tmpl.h"

#define ST_FR bls12_381_fr
#define ST_G1 bls12_381_g1
#define ST_G2 bls12_381_g2
#define ST_G1_BYTES BLS12_381_G1_SNARKJS_BYTES
#define ST_G2_BYTES BLS12_381_G2_SNARKJS_BYTES
#define ST_NAME bls12_381
#define ST_MAX_LOG 32u
#include "groth16/setup_tmpl.h"

/* ------------------------------------------------------------------ entry point */

cuzk_err cuzk_setup(const char *r1cs_path, const char *zkey_path, const cuzk_setup_opts *opts,
                    cuzk_setup_info *info, cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    cuzk_setup_opts o = {0};
    if (opts)
        o = *opts;
    if (!o.max_memory) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        o.max_memory = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
    }
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
    if (r.curve == CUZK_CURVE_BN254)
        e = run_bn254(&r, zkey_path, &o, seed, seed_len, info, eb);
    else
        e = run_bls12_381(&r, zkey_path, &o, seed, seed_len, info, eb);
    cuzk_r1cs_close(&r);
    memset(seed, 0, sizeof seed);
    if (info)
        info->ms_total = cuzk__now_ms() - t0;
    return e;
}
