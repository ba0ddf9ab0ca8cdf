/* Synthetic circuit generator (cuzk/gencircuit.h; profiles in docs/CIRCUITS.md). */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuzk/gencircuit.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/setup.h"
#include "ff/ff.h"
#include "groth16/gen_internal.h"
#include "util/clock.h"
#include "util/parallel.h"
#include "util/sha256.h"

/* Operands are drawn from the last GC_RING constraint outputs (a power of two); their kinds
 * (0/1 or not) are kept one bit each. */
#define GC_RING (1u << 16)
#define GC_KIND_BYTES (GC_RING / 8)

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

static void gc_state_of(gc_rng *g, const uint8_t h[32])
{
    for (int i = 0; i < 4; i++) {
        g->s[i] = 0;
        for (int k = 0; k < 8; k++)
            g->s[i] |= (uint64_t)h[8 * i + k] << (8 * k);
    }
    if (!(g->s[0] | g->s[1] | g->s[2] | g->s[3]))
        g->s[0] = 1;
}

/* h = SHA-256(tag || 0x00 || seed); -1 out of memory. */
static int gc_seed_hash(uint8_t h[32], const char *tag, const char *seed)
{
    size_t tl = strlen(tag), sl = strlen(seed);
    uint8_t *buf = malloc(tl + 1 + sl + 1);
    if (!buf) {
        memset(h, 0, 32);
        return -1;
    }
    memcpy(buf, tag, tl);
    buf[tl] = 0;
    memcpy(buf + tl + 1, seed, sl);
    cuzk_sha256(h, buf, tl + 1 + sl);
    free(buf);
    return 0;
}

/* *g = the stream of SHA-256(tag || 0x00 || seed) (never all zero in practice, fixed up if
 * so); -1 out of memory. */
static int gc_seed(gc_rng *g, const char *tag, const char *seed)
{
    uint8_t h[32];
    int r = gc_seed_hash(h, tag, seed);
    gc_state_of(g, h);
    return r;
}

/* The structure stream of run `index` of a segmented circuit: SHA-256(key || index, 8 bytes
 * little-endian), key = SHA-256("cuzk-gen-segment-v1" || 0x00 || seed). */
static void gc_seed_segment(gc_rng *g, const uint8_t key[32], uint64_t index)
{
    uint8_t d[40], h[32];
    memcpy(d, key, 32);
    for (int i = 0; i < 8; i++)
        d[32 + i] = (uint8_t)(index >> (8 * i));
    cuzk_sha256(h, d, sizeof d);
    gc_state_of(g, h);
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

/* Wires: 0 = 1, 1 = output, then the public inputs, the bits, the full-width private inputs,
 * then one per constraint but the last (whose output is wire 1). */
typedef struct {
    uint32_t n_pub, n_bits, n_full, base, n_wires;
} gc_layout;

static cuzk_err gc_layout_of(const cuzk_gen_params *p, gc_layout *l, cuzk_errbuf *eb)
{
    if (!p || !p->seed || (unsigned)p->profile > CUZK_GEN_MIXED ||
        (unsigned)p->curve >= CUZK_CURVE_COUNT)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "gen-circuit: invalid parameters");
    switch (p->profile) {
    case CUZK_GEN_DENSE:
        l->n_pub = 4, l->n_bits = 0, l->n_full = 16;
        break;
    case CUZK_GEN_SPARSE_BITS:
        l->n_pub = 8, l->n_bits = 64, l->n_full = 8;
        break;
    default:
        l->n_pub = 4, l->n_bits = 32, l->n_full = 8;
        break;
    }
    l->base = 2 + l->n_pub + l->n_bits + l->n_full;
    uint64_t nw = (uint64_t)l->base + p->n_constraints - 1;
    if (p->n_constraints == 0 || nw > UINT32_MAX)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "gen-circuit: %llu constraints out of range",
                         (unsigned long long)p->n_constraints);
    l->n_wires = (uint32_t)nw;
    return CUZK_OK;
}

/* A circuit source over the generator (gen_internal.h): the structure stream's state at every
 * multiple of `chunk` constraints, so that ranges are generated independently. The state is
 * the stream (4 words) and the kinds of the last GC_RING outputs (one bit each). One thread
 * walks the structure stream and publishes the checkpoints as it passes them; a range waits
 * for its own, so the ranges' work starts with the walk. */
typedef struct {
    uint64_t s[4];
    uint64_t kind[GC_RING / 64];
} gc_checkpoint;

typedef struct {
    cuzk_gen_params p;
    uint64_t chunk;
    gc_checkpoint *cp;
    pthread_t walker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t ready; /* checkpoints published */
    int done, stop;
    cuzk_err err;
    cuzk_errbuf eb;
} gc_source;

/* Checkpoint i is saved; false when the source is being freed. */
static int gc_publish(gc_source *S, uint64_t i)
{
    pthread_mutex_lock(&S->mu);
    S->ready = i + 1;
    int go = !S->stop;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
    return go;
}

static void gc_checkpoint_save(gc_checkpoint *c, const gc_rng *g, const uint64_t *kind)
{
    memcpy(c->s, g->s, sizeof c->s);
    memcpy(c->kind, kind, sizeof c->kind);
}

static void gc_checkpoint_load(const gc_checkpoint *c, gc_rng *g, uint64_t *kind)
{
    memcpy(g->s, c->s, sizeof g->s);
    memcpy(kind, c->kind, sizeof c->kind);
}

/* The shapes of the sparse profiles' bit gates (out the constraint's output wire, x, y and
 * b_i bits): AND x * y = out; XOR 2x * y = x + y - out; BOOL x * (1 - x) = out (0);
 * PACK (sum 2^i b_i) * 1 = out. ROW: any other constraint. */
enum { GC_GATE_ROW = 0, GC_GATE_AND, GC_GATE_XOR, GC_GATE_BOOL, GC_GATE_PACK };

/* A segmented circuit's structure, made once (cuzk_gen_structure_new): each run's
 * constraints encoded one after the other. A bit gate is a byte 0x80 | its GC_GATE_*, for
 * PACK a byte with its bit count, then its operands' wires (x, y; x; the b_i in order), each
 * a varint x << 1 | abs (below). Any other constraint is a byte na (A's terms, below 0x80), a
 * byte nb | nc << 3 | (cout = -1) << 6 (B's terms, C's terms other than the output, whose wire
 * follows from the constraint's index), then its terms, A's, B's and C's: each a varint
 * x << 3 | abs << 2 | tag, the wire out - x (abs 0, a wire before the output among the
 * outputs) or x (abs 1), and its coefficient 1, 2, -1 (tag 0, 1, 2) or, tag 3, a byte e
 * followed for e = 255 by the coefficient's 32 bytes (Montgomery limbs), else 2^e. */
struct cuzk_gen_structure {
    cuzk_curve curve;
    cuzk_gen_profile profile;
    uint32_t n_constraints, segment;
    uint8_t seed[32]; /* SHA-256 of the circuit seed, tagged: whose structure this is */
    uint64_t n_runs, bytes, n_terms;
    uint8_t **run;
    uint64_t *len;
};

/* Tests: bit gates replayed as rows (their operands' values in the field), as for operands
 * that are not bits. */
static int gc_gate_rows;

void cuzk__gen_replay_gates_as_rows(int on)
{
    __atomic_store_n(&gc_gate_rows, on, __ATOMIC_RELAXED);
}

static uint8_t *gc_put_varint(uint8_t *q, uint64_t v)
{
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    return q;
}

static const uint8_t *gc_get_varint(const uint8_t *q, uint64_t *v)
{
    uint64_t x = 0;
    for (int sh = 0;; sh += 7) {
        const uint8_t b = *q++;
        x |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80))
            break;
    }
    *v = x;
    return q;
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

cuzk_err cuzk__gen_layout(const cuzk_gen_params *p, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    memset(info, 0, sizeof *info);
    info->n_wires = l.n_wires;
    info->n_public_inputs = l.n_pub;
    info->n_private_inputs = l.n_bits + l.n_full;
    return CUZK_OK;
}

cuzk_err cuzk__gen_walk(const cuzk_gen_params *p, const cuzk__gen_sink *s,
                        const char *input_json_path, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    return p->curve == CUZK_CURVE_BN254 ? walk_bn254(p, s, input_json_path, info, eb)
                                        : walk_bls12_381(p, s, input_json_path, info, eb);
}

/* ------------------------------------------------------------------ file sinks */

/* A .wtns written as the values arrive; wire 1 (the last) is patched into its place. */
typedef struct {
    cuzk_r1cs_writer *rw;
    FILE *f;
    const char *path;
} gc_files;

#define GC_WTNS_HEAD (12 + 12 + 40 + 12)

static cuzk_err gc_wtns_open(gc_files *g, const char *path, cuzk_curve curve, uint32_t n_wires,
                             char *buf, cuzk_errbuf *eb)
{
    g->path = path;
    g->f = fopen(path, "wb");
    if (!g->f)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot create: %s", path, strerror(errno));
    if (buf)
        setvbuf(g->f, buf, _IOFBF, 1 << 20);
    uint8_t h[GC_WTNS_HEAD];
    uint8_t *q = h;
    memcpy(q, "wtns", 4);
    gc_le32(q + 4, 2);
    gc_le32(q + 8, 2);
    q += 12;
    gc_le32(q, 1);
    gc_le64(q + 4, 40);
    q += 12;
    gc_le32(q, 32);
    cuzk_curve_r_le(curve, q + 4);
    gc_le32(q + 36, n_wires);
    q += 40;
    gc_le32(q, 2);
    gc_le64(q + 4, (uint64_t)n_wires * 32);
    fwrite(h, 1, sizeof h, g->f);
    return CUZK_OK;
}

static cuzk_err gc_wtns_value(void *ctx, uint32_t wire, const uint8_t v[32], cuzk_errbuf *eb)
{
    gc_files *g = ctx;
    if (wire == 1 && fseeko(g->f, GC_WTNS_HEAD + 32, SEEK_SET) != 0)
        return cuzk_errf(eb, CUZK_IO, "%s: seek failed", g->path);
    fwrite(v, 1, 32, g->f);
    if (wire == 0) {
        static const uint8_t zero[32];
        fwrite(zero, 1, 32, g->f); /* wire 1, patched at the end */
    }
    return CUZK_OK;
}

static cuzk_err gc_files_constraint(void *ctx, uint64_t row, const cuzk_r1cs_term *a,
                                    uint32_t na, const cuzk_r1cs_term *b, uint32_t nb,
                                    const cuzk_r1cs_term *c, uint32_t nc, cuzk_errbuf *eb)
{
    (void)row;
    return cuzk_r1cs_writer_add(((gc_files *)ctx)->rw, a, na, b, nb, c, nc, eb);
}

cuzk_err cuzk_gen_circuit(const cuzk_gen_params *p, const char *r1cs_path, const char *wtns_path,
                          const char *input_json_path, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    if (info)
        memset(info, 0, sizeof *info);
    cuzk_r1cs_writer rw;
    gc_files g = {NULL, NULL, NULL};
    char *wbuf = NULL;
    if (r1cs_path) {
        if ((e = cuzk_r1cs_writer_open(&rw, r1cs_path, p->curve, l.n_wires, 1, l.n_pub,
                                       l.n_bits + l.n_full, eb)))
            return e;
        g.rw = &rw;
    }
    if (wtns_path) {
        wbuf = malloc(1 << 20);
        e = gc_wtns_open(&g, wtns_path, p->curve, l.n_wires, wbuf, eb);
    }
    if (!e) {
        cuzk__gen_sink s = {g.rw ? gc_files_constraint : NULL, g.f ? gc_wtns_value : NULL, &g};
        e = cuzk__gen_walk(p, &s, input_json_path, info, eb);
    }
    if (g.f) {
        int bad = ferror(g.f);
        bad |= fclose(g.f) != 0;
        if (bad && !e)
            e = cuzk_errf(eb, CUZK_IO, "%s: write failed: %s", wtns_path, strerror(errno));
    }
    if (e && wtns_path)
        remove(wtns_path);
    free(wbuf);
    if (g.rw) {
        if (e) {
            if (!rw.bw.err)
                rw.bw.err = e; /* makes close remove the partial file */
            cuzk_errbuf tmp;
            cuzk_r1cs_writer_close(&rw, &tmp);
        } else {
            e = cuzk_r1cs_writer_close(&rw, eb);
        }
    }
    if (info)
        info->ms = cuzk__now_ms() - t0;
    return e;
}

/* ------------------------------------------------------------------ in memory */

typedef struct {
    uint8_t *w;
    uint64_t n;
} gc_mem;

/* A segmented witness's threads: nthreads (0: cuzk_num_threads), at most one per run. */
static unsigned gc_threads(const cuzk_gen_params *p)
{
    uint64_t nt = p->nthreads ? p->nthreads : cuzk_num_threads();
    uint64_t runs = ((uint64_t)p->n_constraints + p->segment - 1) / p->segment;
    return (unsigned)(nt < runs ? nt : runs);
}

static cuzk_err gc_mem_value(void *ctx, uint32_t wire, const uint8_t v[32], cuzk_errbuf *eb)
{
    gc_mem *m = ctx;
    if (wire >= m->n)
        return cuzk_errf(eb, CUZK_INTERNAL, "gen-witness: wire %u out of range", wire);
    memcpy(m->w + (uint64_t)wire * 32, v, 32);
    return CUZK_OK;
}

cuzk_err cuzk_gen_witness(uint8_t *w, uint64_t n_values, const cuzk_gen_params *p,
                          cuzk_gen_info *info, cuzk_errbuf *eb)
{
    double t0 = cuzk__now_ms();
    cuzk_gen_info lay;
    cuzk_err e = cuzk__gen_layout(p, &lay, eb);
    if (e)
        return e;
    if (n_values != lay.n_wires)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "gen-witness: the circuit has %u wires, the buffer holds %llu values",
                         lay.n_wires, (unsigned long long)n_values);
    if (p->structure) {
        const cuzk_gen_structure *st = p->structure;
        uint8_t id[32];
        if (gc_seed_hash(id, "cuzk-gen-structure-id-v1", p->seed))
            return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-witness: out of memory");
        if (st->curve != p->curve || st->profile != p->profile ||
            st->n_constraints != p->n_constraints || st->segment != p->segment ||
            memcmp(st->seed, id, 32) != 0)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                             "gen-witness: the structure given is another circuit's");
        unsigned nt = gc_threads(p);
        e = p->curve == CUZK_CURVE_BN254 ? walk_runs_bn254(p, st, w, nt, info, eb)
                                         : walk_runs_bls12_381(p, st, w, nt, info, eb);
    } else if (p->segment && p->nthreads != 1) {
        unsigned nt = gc_threads(p);
        e = p->curve == CUZK_CURVE_BN254 ? walk_runs_bn254(p, NULL, w, nt, info, eb)
                                         : walk_runs_bls12_381(p, NULL, w, nt, info, eb);
    } else {
        gc_mem m = {w, n_values};
        cuzk__gen_sink s = {NULL, gc_mem_value, &m};
        if (p->nthreads == 1)
            e = cuzk__gen_walk(p, &s, NULL, info, eb);
        else
            e = p->curve == CUZK_CURVE_BN254 ? walk_piped_bn254(p, &s, info, eb)
                                             : walk_piped_bls12_381(p, &s, info, eb);
    }
    if (info)
        info->ms = cuzk__now_ms() - t0;
    return e;
}

void cuzk_gen_structure_free(cuzk_gen_structure *s)
{
    if (!s)
        return;
    for (uint64_t r = 0; s->run && r < s->n_runs; r++)
        free(s->run[r]);
    free(s->run);
    free(s->len);
    free(s);
}

uint64_t cuzk_gen_structure_bytes(const cuzk_gen_structure *s) { return s ? s->bytes : 0; }

cuzk_err cuzk_gen_structure_new(cuzk_gen_structure **out, const cuzk_gen_params *p,
                                cuzk_errbuf *eb)
{
    *out = NULL;
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    if (!p->segment)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "gen-circuit: only a circuit in runs (segment > 0) has a structure "
                         "to keep");
    cuzk_gen_structure *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
    s->curve = p->curve;
    s->profile = p->profile;
    s->n_constraints = p->n_constraints;
    s->segment = p->segment;
    s->n_runs = ((uint64_t)p->n_constraints + p->segment - 1) / p->segment;
    s->run = calloc(s->n_runs, sizeof *s->run);
    s->len = calloc(s->n_runs, sizeof *s->len);
    if (!s->run || !s->len || gc_seed_hash(s->seed, "cuzk-gen-structure-id-v1", p->seed)) {
        cuzk_gen_structure_free(s);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
    }
    const unsigned nt = gc_threads(p);
    e = p->curve == CUZK_CURVE_BN254 ? structure_make_bn254(p, s, nt, eb)
                                     : structure_make_bls12_381(p, s, nt, eb);
    if (e) {
        cuzk_gen_structure_free(s);
        return e;
    }
    s->bytes = sizeof *s + s->n_runs * (sizeof *s->run + sizeof *s->len);
    for (uint64_t r = 0; r < s->n_runs; r++)
        s->bytes += s->len[r];
    *out = s;
    return CUZK_OK;
}

uint64_t cuzk_gen_witness_scratch_bytes(const cuzk_gen_params *p)
{
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_errbuf eb;
    if (gc_layout_of(p, &l, &eb))
        return 0;
    int piped = p->nthreads != 1;
    unsigned runs = p->segment && piped ? gc_threads(p) : 0;
    return p->curve == CUZK_CURVE_BN254 ? witness_scratch_bn254(l.base, piped, runs)
                                        : witness_scratch_bls12_381(l.base, piped, runs);
}

uint32_t cuzk_gen_n_wires(const cuzk_gen_params *p)
{
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_errbuf eb;
    return gc_layout_of(p, &l, &eb) ? 0 : l.n_wires;
}

cuzk_err cuzk_gen_key_shape(const cuzk_gen_params *p, uint32_t *n_vars, uint32_t *n_public,
                            uint32_t *domain_size, cuzk_errbuf *eb)
{
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    /* As cuzk__setup_run: one row per constraint, one per public signal and one for wire 0. */
    uint64_t rows = (uint64_t)p->n_constraints + 1 + l.n_pub + 1, N = 1;
    while (N < rows)
        N <<= 1;
    if (N > (1ull << 31))
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "gen-circuit: %u constraints need a domain "
                         "above 2^31", p->n_constraints);
    *n_vars = l.n_wires;
    *n_public = 1 + l.n_pub;
    *domain_size = (uint32_t)N;
    return CUZK_OK;
}

static void *gc_walker(void *arg)
{
    gc_source *S = arg;
    cuzk_errbuf eb;
    cuzk_err e = S->p.curve == CUZK_CURVE_BN254 ? scan_bn254(S, &eb) : scan_bls12_381(S, &eb);
    pthread_mutex_lock(&S->mu);
    S->done = 1;
    S->err = e;
    if (e)
        S->eb = eb;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
    return NULL;
}

static cuzk_err gc_source_range(const void *src, uint64_t lo, uint64_t hi,
                                cuzk__constraint_fn fn, void *ctx, cuzk_errbuf *eb)
{
    gc_source *S = (gc_source *)src;
    if (lo % S->chunk || lo > hi || hi > S->p.n_constraints)
        return cuzk_errf(eb, CUZK_INTERNAL, "gen-circuit: constraints %llu .. %llu requested",
                         (unsigned long long)lo, (unsigned long long)hi);
    if (lo == hi)
        return CUZK_OK;
    pthread_mutex_lock(&S->mu);
    while (S->ready <= lo / S->chunk && !S->done)
        pthread_cond_wait(&S->cv, &S->mu);
    cuzk_err e = S->ready > lo / S->chunk ? CUZK_OK : S->err ? S->err : CUZK_INTERNAL;
    pthread_mutex_unlock(&S->mu);
    if (e)
        return cuzk_errf(eb, e, "%s", S->err ? S->eb.msg : "gen-circuit: the walk stopped");
    return S->p.curve == CUZK_CURVE_BN254 ? range_bn254(S, lo, hi, fn, ctx, eb)
                                          : range_bls12_381(S, lo, hi, fn, ctx, eb);
}

cuzk_err cuzk__gen_source_new(cuzk__circuit_source *out, const cuzk_gen_params *p,
                              cuzk_errbuf *eb)
{
    memset(out, 0, sizeof *out);
    gc_layout l = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &l, eb);
    if (e)
        return e;
    /* A checkpoint (8 KiB) every 2^12 .. 2^16 constraints: about a thousand ranges. */
    uint64_t chunk = (uint64_t)1 << 12;
    while (chunk < (1u << 16) && chunk * 1024 < p->n_constraints)
        chunk <<= 1;
    gc_source *S = calloc(1, sizeof *S);
    uint64_t n_cp = (p->n_constraints + chunk - 1) / chunk;
    if (S)
        S->cp = malloc(n_cp * sizeof *S->cp);
    if (!S || !S->cp) {
        free(S);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory for %llu checkpoints",
                         (unsigned long long)n_cp);
    }
    S->p = *p;
    S->chunk = chunk;
    pthread_mutex_init(&S->mu, NULL);
    pthread_cond_init(&S->cv, NULL);
    if (pthread_create(&S->walker, NULL, gc_walker, S) != 0) {
        pthread_mutex_destroy(&S->mu);
        pthread_cond_destroy(&S->cv);
        free(S->cp);
        free(S);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: cannot start a thread");
    }
    out->curve = p->curve;
    out->n_constraints = p->n_constraints;
    out->n_wires = l.n_wires;
    out->n_public = 1 + l.n_pub;
    out->name = "generated circuit";
    out->chunk = chunk;
    out->range = gc_source_range;
    out->src = S;
    return CUZK_OK;
}

void cuzk__gen_source_free(cuzk__circuit_source *src)
{
    gc_source *S = (gc_source *)src->src;
    if (S) {
        pthread_mutex_lock(&S->mu);
        S->stop = 1;
        pthread_mutex_unlock(&S->mu);
        pthread_join(S->walker, NULL);
        pthread_mutex_destroy(&S->mu);
        pthread_cond_destroy(&S->cv);
        free(S->cp);
        free(S);
    }
    src->src = NULL;
}
