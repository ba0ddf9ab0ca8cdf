/* Synthetic circuit generator (cuzk/gencircuit.h; profiles in docs/CIRCUITS.md). */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuzk/gencircuit.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/setup.h"
#include "ff/ff.h"
#include "util/clock.h"
#include "util/sha256.h"

/* Operands are drawn from the last GC_RING constraint outputs (a power of two). */
#define GC_RING (1u << 16)

/* xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2018). */
typedef struct {
    uint64_t s[4];
} gc_rng;

static inline uint64_t gc_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t gc_next(gc_rng *g)
{
    uint64_t *s = g->s;
    uint64_t r = gc_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gc_rotl(s[3], 45);
    return r;
}

/* Uniform in [0, n), n >= 1 (Lemire's multiply-shift; the bias below 2^-40 for our n is
 * irrelevant to a test generator, and it keeps the stream's consumption fixed: one draw). */
static inline uint64_t gc_below(gc_rng *g, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)gc_next(g) * n) >> 64);
}

/* State = SHA-256(tag || 0x00 || seed), never all zero in practice (and fixed up if so). */
static void gc_seed(gc_rng *g, const char *tag, const char *seed)
{
    size_t tl = strlen(tag), sl = strlen(seed);
    uint8_t *buf = malloc(tl + 1 + sl + 1), h[32];
    if (!buf) {
        memset(g, 0, sizeof *g);
        g->s[0] = 1;
        return;
    }
    memcpy(buf, tag, tl);
    buf[tl] = 0;
    memcpy(buf + tl + 1, seed, sl);
    cuzk_sha256(h, buf, tl + 1 + sl);
    free(buf);
    for (int i = 0; i < 4; i++) {
        g->s[i] = 0;
        for (int k = 0; k < 8; k++)
            g->s[i] |= (uint64_t)h[8 * i + k] << (8 * k);
    }
    if (!(g->s[0] | g->s[1] | g->s[2] | g->s[3]))
        g->s[0] = 1;
}

static void gc_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void gc_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

#define GC_FR bn254_fr
#define GC_NAME bn254
#include "groth16/gencircuit_tmpl.h"

#define GC_FR bls12_381_fr
#define GC_NAME bls12_381
#include "groth16/gencircuit_tmpl.h"

static const char *const PROFILE_NAMES[] = {"dense", "sparse-bits", "mixed"};

const char *cuzk_gen_profile_name(cuzk_gen_profile p)
{
    return (unsigned)p < 3 ? PROFILE_NAMES[p] : "?";
}

int cuzk_gen_profile_from_name(const char *name, cuzk_gen_profile *out)
{
    for (int i = 0; i < 3; i++)
        if (strcasecmp(name, PROFILE_NAMES[i]) == 0) {
            *out = (cuzk_gen_profile)i;
            return 0;
        }
    return -1;
}

cuzk_err cuzk_gen_circuit(const cuzk_gen_params *p, const char *r1cs_path, const char *wtns_path,
                          const char *input_json_path, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    if (!p || !p->seed || (unsigned)p->profile > CUZK_GEN_MIXED ||
        (unsigned)p->curve >= CUZK_CURVE_COUNT)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "gen-circuit: invalid parameters");
    if (info)
        memset(info, 0, sizeof *info);
    cuzk_err e = p->curve == CUZK_CURVE_BN254
                     ? run_bn254(p, r1cs_path, wtns_path, input_json_path, info, eb)
                     : run_bls12_381(p, r1cs_path, wtns_path, input_json_path, info, eb);
    if (info)
        info->ms = cuzk__now_ms() - t0;
    return e;
}
