/* The generator of cuzk/gencircuit.h for one scalar field (gencircuit.c instantiates it).
 * Define GC_FR (field prefix) and GC_NAME (function-name suffix). */
#define GCN_(a, b) a##_##b
#define GCN(a, b) GCN_(a, b)
#define GC_(x) GCN(x, GC_NAME)
#define GF_(x) GCN(GC_FR, x)
#define GFT GF_(t)

/* A uniformly random element (canonical limbs l, Montgomery form *x) by rejection. */
static void GC_(rand_fr)(gc_rng *g, uint64_t l[4], GFT *x)
{
    int top = 64 - __builtin_clzll(GF_(P).l[3]); /* bits of the top limb of r */
    uint64_t mask = top >= 64 ? ~0ull : ((1ull << top) - 1);
    do {
        for (int i = 0; i < 4; i++)
            l[i] = gc_next(g);
        l[3] &= mask;
    } while (!GF_(limbs_lt_p)(l));
    GF_(from_canonical)(x, l);
}

typedef struct {
    uint32_t wire;
    GFT c; /* Montgomery */
} GC_(term);

typedef struct {
    /* layout */
    uint32_t n_pub, n_bits, n_full, base, n_wires;
    uint64_t n;
    /* recent outputs: vk says 0, 1 or another value, kept in val (most values are 0 or 1, so
     * operands are mostly read from the small vk ring) */
    GFT *val;
    uint8_t *vk;
    uint64_t *kind; /* bit i % GC_RING: output i is always 0 or 1 (GC_KIND_BYTES) */
    GFT *inval;    /* input values, wires 2 .. base-1 */
    gc_rng rs, rw;
    uint32_t segment;   /* constraints per run (0: one run) */
    uint64_t lo;        /* the first constraint of the current constraint's run */
    uint8_t seg_key[32]; /* the runs' structure streams (gc_seed_segment) */
    GFT zero, one, two, mone;
    uint8_t b_one[32], b_two[32], b_mone[32];
} GC_(gen);

static const GFT *GC_(value)(const GC_(gen) *G, uint32_t wire)
{
    if (wire == 0)
        return &G->one;
    if (wire < G->base)
        return &G->inval[wire - 2];
    const uint32_t i = (wire - G->base) & (GC_RING - 1);
    const uint8_t t = G->vk[i];
    return t == 2 ? &G->val[i] : t ? &G->one : &G->zero;
}

/* Records constraint k's output value; 1 when it is 0 or 1. */
static int GC_(store)(GC_(gen) *G, uint64_t k, const GFT *v)
{
    const uint32_t i = k & (GC_RING - 1);
    if (GF_(is_zero)(v)) {
        G->vk[i] = 0;
        return 1;
    }
    if (GF_(is_one)(v)) {
        G->vk[i] = 1;
        return 1;
    }
    G->vk[i] = 2;
    G->val[i] = *v;
    return 0;
}

/* Structure choices: any operand, or one known to be 0/1. k = index of the constraint. */
static uint32_t GC_(pick_any)(GC_(gen) *G, uint64_t k)
{
    uint64_t recent = k - G->lo < GC_RING ? k - G->lo : GC_RING;
    if (recent == 0 || gc_below(&G->rs, 8) == 0)
        return 2 + (uint32_t)gc_below(&G->rs, G->base - 2);
    return G->base + (uint32_t)(k - 1 - gc_below(&G->rs, recent));
}

static uint32_t GC_(pick_bit)(GC_(gen) *G, uint64_t k)
{
    uint64_t recent = k - G->lo < GC_RING ? k - G->lo : GC_RING;
    for (int t = 0; recent && t < 6; t++) {
        uint64_t j = k - 1 - gc_below(&G->rs, recent);
        const uint32_t i = (uint32_t)j & (GC_RING - 1);
        if ((G->kind[i / 64] >> (i % 64)) & 1)
            return G->base + (uint32_t)j;
    }
    return 2 + G->n_pub + (uint32_t)gc_below(&G->rs, G->n_bits);
}

static int GC_(has)(const GC_(term) *t, unsigned n, uint32_t wire)
{
    for (unsigned i = 0; i < n; i++)
        if (t[i].wire == wire)
            return 1;
    return 0;
}

/* c * v, skipping the multiplication when either is 0 or 1 (most values and coefficients of
 * the bit profiles): the products are the same, so the witness is too. */
static void GC_(mul_fast)(GFT *r, const GFT *c, const GFT *v)
{
    if (GF_(is_zero)(v) || GF_(is_zero)(c))
        GF_(set_zero)(r);
    else if (GF_(is_one)(c))
        *r = *v;
    else if (GF_(is_one)(v))
        *r = *c;
    else
        GF_(mul)(r, c, v);
}

static void GC_(dot)(const GC_(gen) *G, GFT *r, const GC_(term) *t, unsigned n)
{
    GF_(set_zero)(r);
    for (unsigned i = 0; i < n; i++) {
        const GFT *v = GC_(value)(G, t[i].wire);
        if (GF_(is_zero)(v))
            continue;
        GFT p;
        GC_(mul_fast)(&p, &t[i].c, v);
        GF_(add)(r, r, &p);
    }
}

/* v's canonical little-endian bytes; 0 and 1 without leaving Montgomery form by a product. */
static void GC_(bytes)(const GC_(gen) *G, uint8_t out[32], const GFT *v)
{
    if (GF_(is_zero)(v))
        memset(out, 0, 32);
    else if (GF_(is_one)(v))
        memcpy(out, G->b_one, 32);
    else
        GF_(to_bytes_le)(out, v);
}

static void GC_(to_r1cs)(cuzk_r1cs_term *o, const GC_(term) *t, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        o[i].wire = t[i].wire;
        if (GF_(is_one)(&t[i].c)) { /* most terms: no conversion */
            memset(o[i].coef, 0, sizeof o[i].coef);
            o[i].coef[0] = 1;
        } else {
            GF_(to_bytes_le)(o[i].coef, &t[i].c);
        }
    }
}

/* The layout and constants of p's circuit, both streams seeded at their start. */
static cuzk_err GC_(init)(GC_(gen) *G, const cuzk_gen_params *p, cuzk_errbuf *eb)
{
    memset(G, 0, sizeof *G);
    G->n = p->n_constraints;
    gc_layout lay = {0, 0, 0, 0, 0};
    cuzk_err e = gc_layout_of(p, &lay, eb);
    if (e)
        return e;
    G->n_pub = lay.n_pub, G->n_bits = lay.n_bits, G->n_full = lay.n_full;
    G->base = lay.base;
    G->n_wires = lay.n_wires;
    G->segment = p->segment;
    if (gc_seed(&G->rs, "cuzk-gen-structure-v1", p->seed) ||
        gc_seed(&G->rw, "cuzk-gen-witness-v1", p->witness_seed ? p->witness_seed : p->seed) ||
        (G->segment && gc_seed_hash(G->seg_key, "cuzk-gen-segment-v1", p->seed)))
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
    GF_(set_zero)(&G->zero);
    G->one = GF_(ONE);
    GF_(add)(&G->two, &G->one, &G->one);
    GF_(neg)(&G->mone, &G->one);
    GF_(to_bytes_le)(G->b_one, &G->one);
    return CUZK_OK;
}

/* The input values (wires 2 .. base-1) from the witness stream: the bits, else uniform. */
static void GC_(inputs)(GC_(gen) *G)
{
    for (uint32_t i = 0; i < G->base - 2; i++) {
        uint64_t l[4];
        if (i >= G->n_pub && i < G->n_pub + G->n_bits)
            GF_(from_u64)(&G->inval[i], gc_next(&G->rw) & 1);
        else
            GC_(rand_fr)(&G->rw, l, &G->inval[i]);
    }
}

/* One constraint's terms; C[nc - 1] or C[0] is its output wire `out`, with coefficient cout. */
typedef struct {
    GC_(term) A[40], B[4], C[4];
    unsigned na, nb, nc;
    uint32_t out;
    GFT cout;
    unsigned gate; /* GC_GATE_*: the shape of a bit gate, or GC_GATE_ROW */
} GC_(row);

/* Constraint k from the structure stream and the kinds of the outputs before it; records k's
 * kind. Everything a constraint is depends on these two states alone (gc_source's
 * checkpoints restart the walk from them). */
static void GC_(step)(GC_(gen) *G, cuzk_gen_profile profile, uint64_t k, GC_(row) *R)
{
    GC_(term) *A = R->A, *B = R->B, *C = R->C;
    unsigned na = 0, nb = 0, nc = 0, gate = GC_GATE_ROW;
    int bit_out = 0;
    uint32_t out = k + 1 == G->n ? 1 : G->base + (uint32_t)k;
    if (G->segment && k % G->segment == 0) {
        G->lo = k;
        gc_seed_segment(&G->rs, G->seg_key, k / G->segment);
    }
    int dense = profile == CUZK_GEN_DENSE ||
                (profile == CUZK_GEN_MIXED && gc_below(&G->rs, 2) == 0);
    GFT cout = G->one;
    if (dense) {
        uint64_t l[4];
        unsigned want = 1 + (unsigned)gc_below(&G->rs, 3);
        for (unsigned i = 0; i < want; i++) {
            uint32_t wv = GC_(pick_any)(G, k);
            if (GC_(has)(A, na, wv))
                continue;
            A[na].wire = wv;
            GC_(rand_fr)(&G->rs, l, &A[na++].c);
        }
        want = 1 + (unsigned)gc_below(&G->rs, 2);
        for (unsigned i = 0; i < want; i++) {
            uint32_t wv = GC_(pick_any)(G, k);
            if (GC_(has)(B, nb, wv))
                continue;
            B[nb].wire = wv;
            GC_(rand_fr)(&G->rs, l, &B[nb++].c);
        }
        if (gc_below(&G->rs, 2))
            cout = G->mone;
        C[nc].wire = out;
        C[nc++].c = cout;
        if (gc_below(&G->rs, 2)) {
            C[nc].wire = GC_(pick_any)(G, k);
            GC_(rand_fr)(&G->rs, l, &C[nc++].c);
        }
    } else {
        unsigned g = (unsigned)gc_below(&G->rs, 100);
        if (g < 75) {
            /* AND (40) or XOR (35) of two bits */
            uint32_t x = GC_(pick_bit)(G, k), y = GC_(pick_bit)(G, k);
            int xor_ = g >= 40 && x != y;
            bit_out = 1;
            gate = xor_ ? GC_GATE_XOR : GC_GATE_AND;
            A[na].wire = x;
            A[na++].c = xor_ ? G->two : G->one;
            B[nb].wire = y;
            B[nb++].c = G->one;
            if (xor_) {
                cout = G->mone;
                C[nc].wire = x;
                C[nc++].c = G->one;
                C[nc].wire = y;
                C[nc++].c = G->one;
            }
            C[nc].wire = out;
            C[nc++].c = cout;
        } else if (g < 85) {
            /* boolean check x * (1 - x), whose output is 0 */
            uint32_t x = GC_(pick_bit)(G, k);
            bit_out = 1;
            gate = GC_GATE_BOOL;
            A[na].wire = x;
            A[na++].c = G->one;
            B[nb].wire = 0;
            B[nb++].c = G->one;
            B[nb].wire = x;
            B[nb++].c = G->mone;
            C[nc].wire = out;
            C[nc++].c = G->one;
        } else if (g < 90) {
            /* packing: out = sum 2^i b_i over 8..32 bits */
            unsigned want = 8 + (unsigned)gc_below(&G->rs, 25);
            GFT pw = G->one;
            gate = GC_GATE_PACK;
            for (unsigned i = 0; i < want; i++) {
                uint32_t x = GC_(pick_bit)(G, k);
                if (GC_(has)(A, na, x))
                    continue;
                A[na].wire = x;
                A[na++].c = pw;
                GF_(add)(&pw, &pw, &pw);
            }
            B[nb].wire = 0;
            B[nb++].c = G->one;
            C[nc].wire = out;
            C[nc++].c = G->one;
        } else {
            /* full-width product x * (y + c) */
            uint64_t l[4];
            A[na].wire = GC_(pick_any)(G, k);
            A[na++].c = G->one;
            B[nb].wire = GC_(pick_any)(G, k);
            B[nb++].c = G->one;
            B[nb].wire = 0;
            GC_(rand_fr)(&G->rs, l, &B[nb++].c);
            C[nc].wire = out;
            C[nc++].c = G->one;
        }
    }
    const uint32_t ki = (uint32_t)k & (GC_RING - 1);
    G->kind[ki / 64] = (G->kind[ki / 64] & ~(1ull << (ki % 64))) | ((uint64_t)bit_out << (ki % 64));
    R->na = na, R->nb = nb, R->nc = nc;
    R->out = out;
    R->cout = cout;
    R->gate = gate;
}

static cuzk_err GC_(emit)(const cuzk__constraint_fn fn, void *ctx, uint64_t k,
                          const GC_(row) *R, cuzk_r1cs_term *t, cuzk_errbuf *eb)
{
    cuzk_r1cs_term *tA = t, *tB = t + R->na, *tC = tB + R->nb;
    GC_(to_r1cs)(tA, R->A, R->na);
    GC_(to_r1cs)(tB, R->B, R->nb);
    GC_(to_r1cs)(tC, R->C, R->nc);
    return fn(ctx, k, tA, R->na, tB, R->nb, tC, R->nc, eb);
}

/* The witness value of R's output: out = (A.w * B.w - rest of C) / cout, cout = +-1. */
static void GC_(out_value)(const GC_(gen) *G, const GC_(row) *R, GFT *ov)
{
    GFT av, bv, rest;
    GC_(dot)(G, &av, R->A, R->na);
    GC_(dot)(G, &bv, R->B, R->nb);
    GC_(mul_fast)(ov, &av, &bv);
    GF_(set_zero)(&rest);
    for (unsigned i = 0; i < R->nc; i++)
        if (R->C[i].wire != R->out) {
            GFT tv;
            GC_(mul_fast)(&tv, &R->C[i].c, GC_(value)(G, R->C[i].wire));
            GF_(add)(&rest, &rest, &tv);
        }
    GF_(sub)(ov, ov, &rest);
    if (!GF_(eq)(&R->cout, &G->one))
        GF_(neg)(ov, ov);
}

static cuzk_err GC_(walk)(const cuzk_gen_params *p, const cuzk__gen_sink *s,
                          const char *json_path, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    GC_(gen) G;
    cuzk_err e = GC_(init)(&G, p, eb);
    if (e)
        return e;
    /* The structure stream never depends on values: without a witness they are skipped. */
    const int values = s->value || json_path;

    uint64_t n_terms = 0, n_bin = 0;
    G.val = malloc(GC_RING * sizeof(GFT));
    G.vk = malloc(GC_RING);
    G.kind = calloc(1, GC_KIND_BYTES);
    G.inval = malloc((G.base - 2) * sizeof(GFT));
    GC_(row) *R = malloc(sizeof *R);
    cuzk_r1cs_term *t = malloc(48 * sizeof *t);
    if (!G.val || !G.vk || !G.kind || !G.inval || !R || !t) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
        goto out;
    }
    GC_(inputs)(&G);
    uint8_t buf32[32];
    if (s->value) {
        if ((e = s->value(s->ctx, 0, G.b_one, eb)))
            goto out;
        for (uint32_t i = 0; i < G.base - 2; i++) {
            GC_(bytes)(&G, buf32, &G.inval[i]);
            if ((e = s->value(s->ctx, 2 + i, buf32, eb)))
                goto out;
        }
    }
    n_bin += 1 + G.n_bits;

    for (uint64_t k = 0; k < G.n; k++) {
        GC_(step)(&G, p->profile, k, R);
        const unsigned na = R->na, nb = R->nb, nc = R->nc;
        n_terms += na + nb + nc;
        if (s->constraint && (e = GC_(emit)(s->constraint, s->ctx, k, R, t, eb)))
            goto out;
        if (!values)
            continue;
        GFT ov;
        GC_(out_value)(&G, R, &ov);
        n_bin += GC_(store)(&G, k, &ov);
        if (s->value) {
            GC_(bytes)(&G, buf32, &ov);
            if ((e = s->value(s->ctx, R->out, buf32, eb)))
                goto out;
        }
    }
    if (json_path) {
        cuzk_strbuf sb;
        cuzk_sb_init(&sb);
        char dec[100];
        cuzk_sb_puts(&sb, "{\n \"public\": [");
        for (uint32_t i = 0; i < G.base - 2; i++) {
            if (i == G.n_pub)
                cuzk_sb_puts(&sb, "],\n \"private\": [");
            GF_(to_dec)(dec, sizeof dec, &G.inval[i]);
            cuzk_sb_printf(&sb, "%s\"%s\"", i == 0 || i == G.n_pub ? "" : ",", dec);
        }
        cuzk_sb_puts(&sb, "]\n}\n");
        e = cuzk_sb_write_file(&sb, json_path, eb);
        cuzk_sb_free(&sb);
        if (e)
            goto out;
    }
    if (info) {
        info->n_wires = G.n_wires;
        info->n_public_inputs = G.n_pub;
        info->n_private_inputs = G.n_bits + G.n_full;
        info->n_terms = n_terms;
        info->n_binary = values ? n_bin : 0;
    }
out:
    free(G.val);
    free(G.vk);
    free(G.kind);
    free(G.inval);
    free(R);
    free(t);
    return e;
}

/* A witness in two threads: the structure stream (GC_(step)) runs on a thread of its own a
 * few blocks of rows ahead of the values, which read each row where it was written. The same
 * values as GC_(walk) without a constraint sink or input file, in the same order. */
#define GC_PIPE_BLOCK 1024u
#define GC_PIPE_ROWS (16u * GC_PIPE_BLOCK)

typedef struct {
    GC_(gen) G; /* the structure side: rs, kind */
    cuzk_gen_profile profile;
    GC_(row) *rows; /* GC_PIPE_ROWS, row k at k % GC_PIPE_ROWS */
    uint64_t produced, consumed; /* rows, published a block at a time (atomics) */
    int stop;                    /* the values side gave up */
} GC_(pipe);

static void *GC_(pipe_structure)(void *arg)
{
    GC_(pipe) *P = arg;
    for (uint64_t k = 0; k < P->G.n; k++) {
        if (k % GC_PIPE_BLOCK == 0)
            while (k + GC_PIPE_BLOCK > __atomic_load_n(&P->consumed, __ATOMIC_ACQUIRE) +
                                           GC_PIPE_ROWS) {
                if (__atomic_load_n(&P->stop, __ATOMIC_ACQUIRE))
                    return NULL;
                sched_yield();
            }
        GC_(step)(&P->G, P->profile, k, &P->rows[k % GC_PIPE_ROWS]);
        if ((k + 1) % GC_PIPE_BLOCK == 0 || k + 1 == P->G.n)
            __atomic_store_n(&P->produced, k + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static cuzk_err GC_(walk_piped)(const cuzk_gen_params *p, const cuzk__gen_sink *s,
                                cuzk_gen_info *info, cuzk_errbuf *eb)
{
    GC_(gen) G;
    GC_(pipe) *P = calloc(1, sizeof *P);
    if (!P)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-witness: out of memory");
    cuzk_err e = GC_(init)(&G, p, eb);
    if (!e)
        e = GC_(init)(&P->G, p, eb);
    if (e) {
        free(P);
        return e;
    }
    P->profile = p->profile;
    P->G.kind = calloc(1, GC_KIND_BYTES);
    P->rows = malloc(GC_PIPE_ROWS * sizeof *P->rows);
    G.val = malloc(GC_RING * sizeof(GFT));
    G.vk = malloc(GC_RING);
    G.inval = malloc((G.base - 2) * sizeof(GFT));
    pthread_t th;
    int started = 0;
    uint64_t n_terms = 0, n_bin = 1 + G.n_bits;
    if (!P->G.kind || !P->rows || !G.val || !G.vk || !G.inval) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "gen-witness: out of memory");
        goto out;
    }
    if (pthread_create(&th, NULL, GC_(pipe_structure), P) != 0) {
        e = cuzk_errf(eb, CUZK_INTERNAL, "gen-witness: cannot start a thread");
        goto out;
    }
    started = 1;
    uint8_t buf32[32];
    GC_(inputs)(&G);
    if ((e = s->value(s->ctx, 0, G.b_one, eb)))
        goto out;
    for (uint32_t i = 0; i < G.base - 2 && !e; i++) {
        GC_(bytes)(&G, buf32, &G.inval[i]);
        e = s->value(s->ctx, 2 + i, buf32, eb);
    }
    uint64_t ready = 0;
    for (uint64_t k = 0; k < G.n && !e; k++) {
        while (k >= ready)
            if ((ready = __atomic_load_n(&P->produced, __ATOMIC_ACQUIRE)) <= k)
                sched_yield();
        const GC_(row) *R = &P->rows[k % GC_PIPE_ROWS];
        n_terms += R->na + R->nb + R->nc;
        GFT ov;
        GC_(out_value)(&G, R, &ov);
        n_bin += GC_(store)(&G, k, &ov);
        GC_(bytes)(&G, buf32, &ov);
        e = s->value(s->ctx, R->out, buf32, eb);
        if ((k + 1) % GC_PIPE_BLOCK == 0)
            __atomic_store_n(&P->consumed, k + 1, __ATOMIC_RELEASE);
    }
    if (!e && info) {
        info->n_wires = G.n_wires;
        info->n_public_inputs = G.n_pub;
        info->n_private_inputs = G.n_bits + G.n_full;
        info->n_terms = n_terms;
        info->n_binary = n_bin;
    }
out:
    if (started) {
        __atomic_store_n(&P->stop, 1, __ATOMIC_RELEASE);
        pthread_join(th, NULL);
    }
    free(P->G.kind);
    free(P->rows);
    free(P);
    free(G.val);
    free(G.vk);
    free(G.inval);
    return e;
}

/* A segmented circuit's witness on nt threads: each takes whole runs and writes their outputs'
 * values into w (32 bytes a wire), the runs drawn from the seed (structure and values in one
 * pass, GC_(runs_thread)) or, with s, replayed from the circuit's structure
 * (GC_(replay_thread), below). The runs share only the inputs, set first. The same values as
 * GC_(walk). */
typedef struct {
    const GC_(gen) *proto; /* layout, constants, inputs */
    cuzk_gen_profile profile;
    const cuzk_gen_structure *s; /* NULL: the runs drawn from the seed */
    const GFT *pow2;             /* replayed: 2^e, e < 255 */
    const uint8_t *inkind;       /* replayed: the inputs' values, 0, 1 or 2 (another value) */
    uint8_t *w;
    uint64_t n_runs, next; /* next: atomic */
    uint64_t n_terms, n_bin; /* atomics, summed */
    int failed;              /* a thread had no memory (atomic) */
} GC_(runs);

/* A thread's copy of the generator, with rings of its own (the kinds' too when `kind`) and a
 * row; 0 (J->failed set) when out of memory. GC_(thread_end) frees them either way. */
static int GC_(thread_begin)(GC_(runs) *J, GC_(gen) *G, int kind, GC_(row) **R)
{
    *G = *J->proto;
    G->val = malloc(GC_RING * sizeof(GFT));
    G->vk = malloc(GC_RING);
    G->kind = kind ? calloc(1, GC_KIND_BYTES) : NULL; /* updated a bit at a time */
    *R = malloc(sizeof **R);
    if (G->val && G->vk && (G->kind || !kind) && *R)
        return 1;
    __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
    return 0;
}

static void GC_(thread_end)(GC_(runs) *J, GC_(gen) *G, GC_(row) *R, uint64_t n_terms,
                            uint64_t n_bin)
{
    __atomic_fetch_add(&J->n_terms, n_terms, __ATOMIC_RELAXED);
    __atomic_fetch_add(&J->n_bin, n_bin, __ATOMIC_RELAXED);
    free(G->val);
    free(G->vk);
    free(G->kind);
    free(R);
}

/* The next run for a thread to make (*lo .. *hi - 1, its index in *r); 0 when none is left. */
static int GC_(next_run)(GC_(runs) *J, const GC_(gen) *G, uint64_t *r, uint64_t *lo,
                         uint64_t *hi)
{
    *r = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED);
    if (*r >= J->n_runs || __atomic_load_n(&J->failed, __ATOMIC_RELAXED))
        return 0;
    *lo = *r * G->segment;
    *hi = *lo + G->segment < G->n ? *lo + G->segment : G->n;
    return 1;
}

/* One thread of cuzk_parallel_threads: whole runs drawn until none is left. */
static void GC_(runs_thread)(void *arg, unsigned t, unsigned T)
{
    (void)t, (void)T;
    GC_(runs) *J = arg;
    GC_(gen) G;
    GC_(row) *R;
    uint64_t n_terms = 0, n_bin = 0, r, lo, hi;
    if (GC_(thread_begin)(J, &G, 1, &R))
        while (GC_(next_run)(J, &G, &r, &lo, &hi))
            for (uint64_t k = lo; k < hi; k++) {
                GC_(step)(&G, J->profile, k, R);
                n_terms += R->na + R->nb + R->nc;
                GFT ov;
                GC_(out_value)(&G, R, &ov);
                n_bin += GC_(store)(&G, k, &ov);
                GC_(bytes)(&G, J->w + (uint64_t)R->out * 32, &ov);
            }
    GC_(thread_end)(J, &G, R, n_terms, n_bin);
}

static void GC_(replay_thread)(void *arg, unsigned t, unsigned T);

/* nt: gc_threads's count, at most one thread a run; s: the structure to replay, or NULL. */
static cuzk_err GC_(walk_runs)(const cuzk_gen_params *p, const cuzk_gen_structure *s,
                               uint8_t *w, unsigned nt, cuzk_gen_info *info, cuzk_errbuf *eb)
{
    GC_(gen) G;
    cuzk_err e = GC_(init)(&G, p, eb);
    if (e)
        return e;
    G.inval = malloc((G.base - 2) * sizeof(GFT));
    GFT *pow2 = s ? malloc(255 * sizeof(GFT)) : NULL;
    uint8_t *inkind = s ? malloc(G.base - 2) : NULL;
    if (!G.inval || (s && (!pow2 || !inkind))) {
        free(G.inval);
        free(pow2);
        free(inkind);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-witness: out of memory");
    }
    if (s) {
        pow2[0] = G.one;
        for (int i = 1; i < 255; i++)
            GF_(add)(&pow2[i], &pow2[i - 1], &pow2[i - 1]);
    }
    GC_(inputs)(&G);
    memcpy(w, G.b_one, 32);
    for (uint32_t i = 0; i < G.base - 2; i++) {
        GC_(bytes)(&G, w + (uint64_t)(2 + i) * 32, &G.inval[i]);
        if (s)
            inkind[i] = GF_(is_zero)(&G.inval[i]) ? 0 : GF_(is_one)(&G.inval[i]) ? 1 : 2;
    }
    GC_(runs) J = {&G, p->profile, s, pow2, inkind, w, (G.n + G.segment - 1) / G.segment,
                   0, 0, 0, 0};
    cuzk_parallel_threads(nt, s ? GC_(replay_thread) : GC_(runs_thread), &J);
    free(G.inval);
    free(pow2);
    free(inkind);
    if (J.failed)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-witness: out of memory");
    if (info) {
        info->n_wires = G.n_wires;
        info->n_public_inputs = G.n_pub;
        info->n_private_inputs = G.n_bits + G.n_full;
        info->n_terms = s ? s->n_terms : J.n_terms;
        info->n_binary = 1 + G.n_bits + J.n_bin;
    }
    return CUZK_OK;
}

/* ---- a segmented circuit's structure, made once and replayed (struct cuzk_gen_structure) */

/* The most bytes one constraint encodes to: 48 terms of a 10-byte varint, a tag byte and 32
 * bytes, and its two header bytes. */
#define GC_ROW_MAX (2 + 48 * (10 + 1 + 32))

static uint8_t *GC_(enc_terms)(const GC_(gen) *G, uint8_t *q, const GC_(term) *t, unsigned n,
                               uint32_t out)
{
    for (unsigned i = 0; i < n; i++) {
        const uint32_t wire = t[i].wire;
        const int rel = wire >= G->base && wire < out;
        const uint64_t x = rel ? out - wire : wire;
        unsigned tag = 3;
        if (GF_(eq)(&t[i].c, &G->one))
            tag = 0;
        else if (GF_(eq)(&t[i].c, &G->two))
            tag = 1;
        else if (GF_(eq)(&t[i].c, &G->mone))
            tag = 2;
        q = gc_put_varint(q, x << 3 | (uint64_t)!rel << 2 | tag);
        if (tag != 3)
            continue;
        /* 2^e (a packing's weights) by its canonical form's single bit, else the limbs */
        uint64_t l[4];
        GF_(to_canonical)(l, &t[i].c);
        int e = -1;
        for (int w = 0; w < 4; w++)
            if (l[w]) {
                if (e >= 0 || (l[w] & (l[w] - 1))) {
                    e = -2;
                    break;
                }
                e = 64 * w + __builtin_ctzll(l[w]);
            }
        if (e >= 0 && e < 255) {
            *q++ = (uint8_t)e;
        } else {
            *q++ = 255;
            memcpy(q, &t[i].c, 32);
            q += 32;
        }
    }
    return q;
}

/* Run r's constraints encoded into *buf (malloc'd, *len bytes); *n_terms: their terms. */
static cuzk_err GC_(encode_run)(GC_(gen) *G, cuzk_gen_profile profile, uint64_t r, uint8_t **buf,
                                uint64_t *len, uint64_t *n_terms)
{
    GC_(row) R;
    uint64_t lo = r * G->segment, hi = lo + G->segment < G->n ? lo + G->segment : G->n;
    size_t cap = (size_t)(hi - lo) * 16 + GC_ROW_MAX, n = 0;
    uint8_t *b = malloc(cap);
    if (!b)
        return CUZK_NO_MEMORY;
    for (uint64_t k = lo; k < hi; k++) {
        GC_(step)(G, profile, k, &R);
        if (cap - n < GC_ROW_MAX) {
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return CUZK_NO_MEMORY;
            }
            b = nb;
            cap *= 2;
        }
        uint8_t *q = b + n;
        if (R.gate != GC_GATE_ROW) {
            *q++ = (uint8_t)(0x80 | R.gate);
            if (R.gate == GC_GATE_PACK)
                *q++ = (uint8_t)R.na;
            const unsigned nw = R.gate == GC_GATE_PACK ? R.na : R.gate == GC_GATE_BOOL ? 1 : 2;
            for (unsigned i = 0; i < nw; i++) {
                const uint32_t wire = i == 1 && R.gate != GC_GATE_PACK ? R.B[0].wire : R.A[i].wire;
                const int rel = wire >= G->base && wire < R.out;
                q = gc_put_varint(q, (uint64_t)(rel ? R.out - wire : wire) << 1 | !rel);
            }
            n = (size_t)(q - b);
            *n_terms += R.na + R.nb + R.nc;
            continue;
        }
        /* C without its output term (found by wire: the output is C's first or last) */
        GC_(term) rest[4];
        unsigned nr = 0;
        for (unsigned i = 0; i < R.nc; i++)
            if (R.C[i].wire != R.out)
                rest[nr++] = R.C[i];
        *q++ = (uint8_t)R.na;
        *q++ = (uint8_t)(R.nb | nr << 3 | (GF_(eq)(&R.cout, &G->one) ? 0 : 1) << 6);
        q = GC_(enc_terms)(G, q, R.A, R.na, R.out);
        q = GC_(enc_terms)(G, q, R.B, R.nb, R.out);
        q = GC_(enc_terms)(G, q, rest, nr, R.out);
        n = (size_t)(q - b);
        *n_terms += R.na + R.nb + R.nc;
    }
    uint8_t *fit = realloc(b, n ? n : 1);
    *buf = fit ? fit : b;
    *len = n;
    return CUZK_OK;
}

typedef struct {
    const GC_(gen) *proto;
    cuzk_gen_structure *s;
    uint64_t next; /* atomic */
    int failed;    /* atomic */
} GC_(enc_job);

static void GC_(encode_thread)(void *arg, unsigned t, unsigned T)
{
    (void)t, (void)T;
    GC_(enc_job) *J = arg;
    GC_(gen) G = *J->proto;
    G.kind = calloc(1, GC_KIND_BYTES);
    uint64_t n_terms = 0;
    if (!G.kind) {
        __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (;;) {
        uint64_t r = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED);
        if (r >= J->s->n_runs || __atomic_load_n(&J->failed, __ATOMIC_RELAXED))
            break;
        if (GC_(encode_run)(&G, J->s->profile, r, &J->s->run[r], &J->s->len[r], &n_terms)) {
            __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    __atomic_fetch_add(&J->s->n_terms, n_terms, __ATOMIC_RELAXED);
    free(G.kind);
}

/* Fills s's runs (s->n_runs, s->run, s->len allocated) on nt threads. */
static cuzk_err GC_(structure_make)(const cuzk_gen_params *p, cuzk_gen_structure *s, unsigned nt,
                                    cuzk_errbuf *eb)
{
    GC_(gen) G;
    cuzk_err e = GC_(init)(&G, p, eb);
    if (e)
        return e;
    GC_(enc_job) J = {&G, s, 0, 0};
    cuzk_parallel_threads(nt, GC_(encode_thread), &J);
    if (J.failed)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory for the structure");
    return CUZK_OK;
}

static const uint8_t *GC_(dec_terms)(const GC_(gen) *G, const GFT *pow2, const uint8_t *q,
                                     GC_(term) *t, unsigned n, uint32_t out)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t v;
        q = gc_get_varint(q, &v);
        const uint64_t x = v >> 3;
        t[i].wire = (v >> 2 & 1) ? (uint32_t)x : out - (uint32_t)x;
        switch (v & 3) {
        case 0: t[i].c = G->one; break;
        case 1: t[i].c = G->two; break;
        case 2: t[i].c = G->mone; break;
        default:
            if (*q == 255) {
                memcpy(&t[i].c, q + 1, 32);
                q += 33;
            } else {
                t[i].c = pow2[*q++];
            }
        }
    }
    return q;
}

/* 0 or 1 for a wire whose value is that bit (the constant 1, an input or a recent output),
 * 2 for any other value. inkind: the inputs' (wires 2 ..). */
static inline unsigned GC_(bit_of)(const GC_(gen) *G, const uint8_t *inkind, uint32_t wire)
{
    if (wire == 0)
        return 1;
    if (wire < G->base)
        return inkind[wire - 2];
    return G->vk[(wire - G->base) & (GC_RING - 1)];
}

/* A bit gate's constraint as a row (C without its output term), for operands that are not
 * bits (never, by the generator's construction; the generic row keeps the value exact). */
static void GC_(gate_row)(const GC_(gen) *G, const GFT *pow2, unsigned gate, const uint32_t *x,
                          unsigned m, GC_(row) *R)
{
    R->na = R->nb = R->nc = 0;
    R->cout = G->one;
    if (gate == GC_GATE_PACK) {
        for (unsigned i = 0; i < m; i++)
            R->A[R->na].wire = x[i], R->A[R->na++].c = pow2[i];
        R->B[R->nb].wire = 0, R->B[R->nb++].c = G->one;
        return;
    }
    R->A[R->na].wire = x[0], R->A[R->na++].c = gate == GC_GATE_XOR ? G->two : G->one;
    if (gate == GC_GATE_BOOL) {
        R->B[R->nb].wire = 0, R->B[R->nb++].c = G->one;
        R->B[R->nb].wire = x[0], R->B[R->nb++].c = G->mone;
        return;
    }
    R->B[R->nb].wire = x[1], R->B[R->nb++].c = G->one;
    if (gate == GC_GATE_XOR) {
        R->C[R->nc].wire = x[0], R->C[R->nc++].c = G->one;
        R->C[R->nc].wire = x[1], R->C[R->nc++].c = G->one;
        R->cout = G->mone;
    }
}

/* One thread of cuzk_parallel_threads: whole runs replayed from J->s until none is left. */
static void GC_(replay_thread)(void *arg, unsigned t, unsigned T)
{
    (void)t, (void)T;
    GC_(runs) *J = arg;
    GC_(gen) G;
    GC_(row) *R;
    uint64_t n_bin = 0, r, lo, hi;
    if (!GC_(thread_begin)(J, &G, 0, &R))
        goto out;
    while (GC_(next_run)(J, &G, &r, &lo, &hi)) {
        const uint8_t *q = J->s->run[r];
        for (uint64_t k = lo; k < hi; k++) {
            const uint32_t out = k + 1 == G.n ? 1 : G.base + (uint32_t)k;
            uint8_t *wo = J->w + (uint64_t)out * 32;
            if (q[0] & 0x80) {
                /* a bit gate: over bits, its output from the bits alone */
                const unsigned gate = q[0] & 0x7f;
                unsigned m = gate == GC_GATE_PACK ? q[1] : gate == GC_GATE_BOOL ? 1 : 2;
                q += gate == GC_GATE_PACK ? 2 : 1;
                uint32_t x[40];
                unsigned any = 0;
                uint64_t v = 0;
                for (unsigned i = 0; i < m; i++) {
                    uint64_t r;
                    q = gc_get_varint(q, &r);
                    x[i] = (r & 1) ? (uint32_t)(r >> 1) : out - (uint32_t)(r >> 1);
                    const unsigned bit = GC_(bit_of)(&G, J->inkind, x[i]);
                    any |= bit;
                    v |= (uint64_t)(bit & 1) << i;
                }
                if (any > 1 || __atomic_load_n(&gc_gate_rows, __ATOMIC_RELAXED)) {
                    GC_(gate_row)(&G, J->pow2, gate, x, m, R);
                    R->out = out;
                    GFT ov;
                    GC_(out_value)(&G, R, &ov);
                    n_bin += GC_(store)(&G, k, &ov);
                    GC_(bytes)(&G, wo, &ov);
                    continue;
                }
                if (gate == GC_GATE_AND)
                    v = v == 3;
                else if (gate == GC_GATE_XOR)
                    v = v == 1 || v == 2;
                else if (gate == GC_GATE_BOOL)
                    v = 0;
                const uint32_t ri = (uint32_t)k & (GC_RING - 1);
                memset(wo, 0, 32);
                if (v <= 1) {
                    G.vk[ri] = (uint8_t)v;
                    wo[0] = (uint8_t)v;
                    n_bin++;
                } else {
                    G.vk[ri] = 2;
                    GF_(from_u64)(&G.val[ri], v);
                    for (int i = 0; i < 8; i++)
                        wo[i] = (uint8_t)(v >> (8 * i));
                }
                continue;
            }
            const unsigned na = q[0], nb = q[1] & 7, nr = q[1] >> 3 & 7;
            const int mone = q[1] >> 6 & 1;
            q += 2;
            q = GC_(dec_terms)(&G, J->pow2, q, R->A, na, out);
            q = GC_(dec_terms)(&G, J->pow2, q, R->B, nb, out);
            q = GC_(dec_terms)(&G, J->pow2, q, R->C, nr, out);
            R->na = na, R->nb = nb, R->nc = nr;
            R->out = out;
            R->cout = mone ? G.mone : G.one;
            GFT ov;
            GC_(out_value)(&G, R, &ov);
            n_bin += GC_(store)(&G, k, &ov);
            GC_(bytes)(&G, wo, &ov);
        }
    }
out:
    GC_(thread_end)(J, &G, R, 0, n_bin);
}

/* The structure stream's state at every multiple of S->chunk, each published as it is saved
 * (the constraints are not kept). */
static cuzk_err GC_(scan)(gc_source *S, cuzk_errbuf *eb)
{
    GC_(gen) G;
    cuzk_err e = GC_(init)(&G, &S->p, eb);
    if (e)
        return e;
    G.kind = calloc(1, GC_KIND_BYTES);
    GC_(row) *R = malloc(sizeof *R);
    if (!G.kind || !R) {
        free(G.kind);
        free(R);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
    }
    for (uint64_t k = 0; k < G.n; k++) {
        if (k % S->chunk == 0) {
            gc_checkpoint_save(&S->cp[k / S->chunk], &G.rs, G.kind);
            if (!gc_publish(S, k / S->chunk))
                break;
        }
        GC_(step)(&G, S->p.profile, k, R);
    }
    free(G.kind);
    free(R);
    return CUZK_OK;
}

/* Constraints lo .. hi - 1 (lo a multiple of S->chunk), from lo's checkpoint. */
static cuzk_err GC_(range)(const gc_source *S, uint64_t lo, uint64_t hi, cuzk__constraint_fn fn,
                           void *ctx, cuzk_errbuf *eb)
{
    GC_(gen) G;
    cuzk_err e = GC_(init)(&G, &S->p, eb);
    if (e)
        return e;
    G.kind = malloc(GC_KIND_BYTES);
    GC_(row) *R = malloc(sizeof *R);
    cuzk_r1cs_term *t = malloc(48 * sizeof *t);
    if (!G.kind || !R || !t) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "gen-circuit: out of memory");
        goto out;
    }
    gc_checkpoint_load(&S->cp[lo / S->chunk], &G.rs, G.kind);
    G.lo = G.segment ? lo - lo % G.segment : 0;
    for (uint64_t k = lo; k < hi && !e; k++) {
        GC_(step)(&G, S->p.profile, k, R);
        e = GC_(emit)(fn, ctx, k, R, t, eb);
    }
out:
    free(G.kind);
    free(R);
    free(t);
    return e;
}

/* Bytes cuzk_gen_witness allocates beside the witness: the value and kind rings, the inputs'
 * values, and the row pipe (piped), one row and its terms (one pass), or nt threads' rings
 * and rows (runs > 0). */
static uint64_t GC_(witness_scratch)(uint32_t base, int piped, unsigned runs)
{
    uint64_t ring = (uint64_t)GC_RING * (sizeof(GFT) + 1) + GC_KIND_BYTES, in = (uint64_t)(base - 2) * sizeof(GFT);
    if (runs)
        return in + (uint64_t)runs * (ring + sizeof(GC_(row)));
    uint64_t b = ring + in;
    if (piped)
        return b + sizeof(GC_(pipe)) + (uint64_t)GC_PIPE_ROWS * sizeof(GC_(row));
    return b + sizeof(GC_(row)) + 48 * sizeof(cuzk_r1cs_term);
}

#undef GC_FR
#undef GC_NAME
#undef GCN_
#undef GCN
#undef GC_
#undef GF_
#undef GFT
