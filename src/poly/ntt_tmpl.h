/*
 * Radix-2 NTT over a prime field, written once and instantiated per Fr in ntt.c.
 * Parameters: NTT_F (field prefix), NTT_S (two-adicity), NTT_ROOT (initializer of the
 * Montgomery-form 2^S-th root 5^((r-1)/2^S) from ff_params.h), NTT_N0 (-r^-1 mod 2^64, for
 * calling the 4-limb multiplication kernel directly).
 *
 * Two butterflies (Chu and George, "Inside the FFT Black Box", ch. 4-5):
 *   DIT (Cooley-Tukey)      (u, v) -> (u + w v, u - w v): bit-reversed in, natural out;
 *   DIF (Gentleman-Sande)   (u, v) -> (u + v, (u - v) w): natural in, bit-reversed out.
 * With twiddles w_len^k (k = offset in the group of span len), neither needs the other's
 * permutation, so the Groth16 H step runs iNTT as DIF, scales by the coset factors in
 * bit-reversed order (a table of the domain, made on first use), and runs the forward NTT
 * as DIT: no bit-reversal pass at all. F_ntt / F_intt (natural order both ways) permute
 * first, then DIT.
 *
 * Schedule. Every transform of n = P m elements is split in two (the "four-step" view):
 *  - the top p = log2 P stages (spans > m) only mix the P elements i + j m (j < P) of one
 *    "column" i < m; they run column chunk by column chunk, all p stages on a chunk while it
 *    is in cache;
 *  - the remaining stages stay inside the P contiguous sub-blocks of m elements, each an
 *    independent task, done depth first (one stage over the sub-block, then recursion into
 *    its halves) so that from L2 size down everything runs in cache; below NTT_LEAF elements
 *    all stages of a block run in a loop.
 * For the H step the two transforms of one input meet in the sub-blocks: DIF down to span 2,
 * coset factors, DIT back up, in one visit of each leaf. A whole H step is three fork-joins
 * (cuzk_parallel_for): top DIF stages of a, b, c; sub-blocks of a, b, c; top DIT stages of
 * a, b, c with h = a'b' - c' computed on each chunk right after its last butterfly.
 * Butterflies with twiddle 1 (k = 0) skip the multiplication (the result is the same field
 * element, so outputs are bit-identical to any other correct schedule).
 */
#define NTN_(a, b) a##_##b
#define NTN(a, b) NTN_(a, b)
#define NF_(x) NTN(NTT_F, x)
#define NFT NF_(t)
#define NTT_RANGE ((size_t)1 << 12)  /* elements per task of the flat passes */
#define NTT_LEAF ((size_t)1 << 10)   /* 32 KiB: all stages of a leaf in L1 */
#define NTT_CHUNK ((size_t)1 << 11)  /* elements (P rows x columns) per top-stage task */

int NF_(root_of_unity)(NFT *w, unsigned log_n)
{
    if (log_n > NTT_S)
        return -1;
    static const NFT root = {NTT_ROOT};
    *w = root;
    for (unsigned i = log_n; i < NTT_S; i++)
        NF_(sqr)(w, w);
    return 0;
}

typedef struct {
    NFT *a;
    size_t n;
    unsigned log_n;
    const NFT *g; /* power series: a_i *= s g^i */
    NFT s;
    NFT *out;
} NF_(ntt_job);

static void NF_(pow_series_task)(void *arg, size_t t)
{
    /* out[i] = s g^i for i in the range (twiddle tables), or a[i] *= s g^i if out is NULL. */
    NF_(ntt_job) *j = arg;
    size_t lo = t * NTT_RANGE, hi = lo + NTT_RANGE < j->n ? lo + NTT_RANGE : j->n;
    NFT p;
    NF_(pow_u64)(&p, j->g, lo);
    NF_(mul)(&p, &p, &j->s);
    for (size_t i = lo; i < hi; i++) {
        if (j->out)
            j->out[i] = p;
        else
            NF_(mul)(&j->a[i], &j->a[i], &p);
        NF_(mul)(&p, &p, j->g);
    }
}

static void NF_(pow_series)(NFT *out, NFT *a, size_t n, const NFT *g, const NFT *s,
                            unsigned nthreads)
{
    NF_(ntt_job) j = {.a = a, .n = n, .g = g, .s = *s, .out = out};
    cuzk_parallel_for((n + NTT_RANGE - 1) / NTT_RANGE, nthreads, NF_(pow_series_task), &j);
}

/* The low `bits` bits of i reversed (1 <= bits <= 64): a 64-bit reversal by swapping
 * bytes, then nibbles, bit pairs and bits, shifted down. */
static inline size_t NF_(bitrev)(size_t i, unsigned bits)
{
    uint64_t x = __builtin_bswap64((uint64_t)i);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
    return (size_t)(x >> (64 - bits));
}

static void NF_(bitrev_task)(void *arg, size_t t)
{
    NF_(ntt_job) *j = arg;
    size_t lo = t * NTT_RANGE, hi = lo + NTT_RANGE < j->n ? lo + NTT_RANGE : j->n;
    for (size_t i = lo; i < hi; i++) {
        size_t r = NF_(bitrev)(i, j->log_n);
        if (r > i) {
            NFT x = j->a[i];
            j->a[i] = j->a[r];
            j->a[r] = x;
        }
    }
}

static void NF_(bitrev_permute)(NFT *a, size_t n, unsigned log_n, unsigned nthreads)
{
    if (log_n == 0)
        return;
    NF_(ntt_job) j = {.a = a, .n = n, .log_n = log_n};
    cuzk_parallel_for((n + NTT_RANGE - 1) / NTT_RANGE, nthreads, NF_(bitrev_task), &j);
}

cuzk_err NF_(domain_init)(NF_(domain) *d, unsigned log_n)
{
    memset(d, 0, sizeof *d);
    if (log_n > NTT_S || log_n > 40)
        return CUZK_INVALID_ARGUMENT;
    d->log_n = log_n;
    d->n = (size_t)1 << log_n;
    NF_(root_of_unity)(&d->omega, log_n);
    NF_(inv)(&d->omega_inv, &d->omega);
    NFT nn;
    NF_(from_u64)(&nn, d->n);
    NF_(inv)(&d->n_inv, &nn);
    if (log_n < NTT_S)
        NF_(root_of_unity)(&d->coset_gen, log_n + 1);
    else
        NF_(set_zero)(&d->coset_gen);
    size_t h = d->n / 2;
    if (h) {
        d->tw = malloc(sizeof(NFT) * h);
        d->tw_inv = malloc(sizeof(NFT) * h);
        if (!d->tw || !d->tw_inv) {
            NF_(domain_free)(d);
            return CUZK_NO_MEMORY;
        }
        NF_(pow_series)(d->tw, NULL, h, &d->omega, &NF_(ONE), 0);
        NF_(pow_series)(d->tw_inv, NULL, h, &d->omega_inv, &NF_(ONE), 0);
    }
    return CUZK_OK;
}

/*
 * The H step's coset factors n^-1 g^i stored at position bitrev(i), made on the first
 * F_groth16_h of the domain rather than in F_domain_init: a key whose H runs on a GPU never
 * pays the n elements. Concurrent first calls may both build a table; one compare-and-swap
 * publishes the winner and the other frees its copy. NULL when out of memory.
 */
static const NFT *NF_(coset_table)(const NF_(domain) *dc, unsigned nthreads)
{
    NF_(domain) *d = (NF_(domain) *)dc; /* the cache pointer is the one mutable member */
    NFT *t = __atomic_load_n(&d->coset_br, __ATOMIC_ACQUIRE);
    if (t)
        return t;
    t = malloc(sizeof(NFT) * d->n);
    if (!t)
        return NULL;
    NF_(pow_series)(t, NULL, d->n, &d->coset_gen, &d->n_inv, nthreads);
    NF_(bitrev_permute)(t, d->n, d->log_n, nthreads);
    NFT *expect = NULL;
    if (!__atomic_compare_exchange_n(&d->coset_br, &expect, t, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(t);
        t = expect;
    }
    return t;
}

void NF_(domain_free)(NF_(domain) *d)
{
    free(d->tw);
    free(d->tw_inv);
    free(d->coset_br);
    d->tw = d->tw_inv = d->coset_br = NULL;
}

/* ---- butterflies (u, v may not alias) ---- */

/*
 * s = a + b, d = a - b (mod p) for reduced a, b. d may alias neither a nor b; s may alias
 * either (it is written last). On x86-64 one asm block does both with the limbs in registers
 * (the difference first, then the sum from a reload of a and b, both in L1): the butterflies
 * spend about a quarter of their time here, the rest in the multiplication. Same algorithm as
 * F_add / F_sub (ff_tmpl.h): no carry out of a + b since p < 2^255; the difference adds p
 * on a borrow, the sum keeps (a + b) - p unless that borrows.
 */
#if defined(__x86_64__) && defined(__GNUC__)
static inline void NF_(addsub)(NFT *s, NFT *d, const NFT *a, const NFT *b)
{
    _Static_assert(sizeof(NFT) == 32, "4-limb field");
    uint64_t y0, y1, y2, y3, z0, z1, z2, z3;
    __asm__("movq 0(%[a]), %[y0]\n\t"
            "movq 8(%[a]), %[y1]\n\t"
            "movq 16(%[a]), %[y2]\n\t"
            "movq 24(%[a]), %[y3]\n\t"
            "subq 0(%[b]), %[y0]\n\t"
            "sbbq 8(%[b]), %[y1]\n\t"
            "sbbq 16(%[b]), %[y2]\n\t"
            "sbbq 24(%[b]), %[y3]\n\t"
            "movq $0, %[z0]\n\t" /* MOV leaves the borrow in CF */
            "movq $0, %[z1]\n\t"
            "movq $0, %[z2]\n\t"
            "movq $0, %[z3]\n\t"
            "cmovcq %[p0], %[z0]\n\t"
            "cmovcq %[p1], %[z1]\n\t"
            "cmovcq %[p2], %[z2]\n\t"
            "cmovcq %[p3], %[z3]\n\t"
            "addq %[z0], %[y0]\n\t"
            "adcq %[z1], %[y1]\n\t"
            "adcq %[z2], %[y2]\n\t"
            "adcq %[z3], %[y3]\n\t"
            "movq %[y0], 0(%[d])\n\t"
            "movq %[y1], 8(%[d])\n\t"
            "movq %[y2], 16(%[d])\n\t"
            "movq %[y3], 24(%[d])\n\t"
            "movq 0(%[a]), %[y0]\n\t"
            "movq 8(%[a]), %[y1]\n\t"
            "movq 16(%[a]), %[y2]\n\t"
            "movq 24(%[a]), %[y3]\n\t"
            "addq 0(%[b]), %[y0]\n\t"
            "adcq 8(%[b]), %[y1]\n\t"
            "adcq 16(%[b]), %[y2]\n\t"
            "adcq 24(%[b]), %[y3]\n\t"
            "movq %[y0], %[z0]\n\t"
            "movq %[y1], %[z1]\n\t"
            "movq %[y2], %[z2]\n\t"
            "movq %[y3], %[z3]\n\t"
            "subq %[p0], %[z0]\n\t"
            "sbbq %[p1], %[z1]\n\t"
            "sbbq %[p2], %[z2]\n\t"
            "sbbq %[p3], %[z3]\n\t"
            "cmovncq %[z0], %[y0]\n\t" /* no borrow: a + b >= p */
            "cmovncq %[z1], %[y1]\n\t"
            "cmovncq %[z2], %[y2]\n\t"
            "cmovncq %[z3], %[y3]\n\t"
            "movq %[y0], 0(%[s])\n\t"
            "movq %[y1], 8(%[s])\n\t"
            "movq %[y2], 16(%[s])\n\t"
            "movq %[y3], 24(%[s])\n\t"
            : [y0] "=&r"(y0), [y1] "=&r"(y1), [y2] "=&r"(y2), [y3] "=&r"(y3), [z0] "=&r"(z0),
              [z1] "=&r"(z1), [z2] "=&r"(z2), [z3] "=&r"(z3), "=m"(*d), "=m"(*s)
            : [a] "r"(a), [b] "r"(b), [s] "r"(s), [d] "r"(d), "m"(*a), "m"(*b),
              [p0] "m"(NF_(P).l[0]), [p1] "m"(NF_(P).l[1]), [p2] "m"(NF_(P).l[2]),
              [p3] "m"(NF_(P).l[3])
            : "cc");
}
#else
static inline void NF_(addsub)(NFT *s, NFT *d, const NFT *a, const NFT *b)
{
    NF_(sub)(d, a, b);
    NF_(add)(s, a, b);
}
#endif

/*
 * The butterfly loops below take k = whether the mulx/adx kernel is in use (cuzk__ff_use_asm)
 * as a constant: each stage tests the flag once and runs a copy of its loop that calls the
 * kernel directly, rather than F_mul re-reading the flag at every product (2-3% of an H step).
 */
#define NTT_INLINE static inline __attribute__((always_inline))

NTT_INLINE void NF_(mulk)(NFT *r, const NFT *a, const NFT *b, int k)
{
#if CUZK_FF_HAVE_ASM
    if (k) {
        cuzk__mul_mont_asm_4(r->l, a->l, b->l, NF_(P).l, NTT_N0);
        return;
    }
#endif
    (void)k;
    NF_(mul_portable)(r, a, b);
}

#if CUZK_FF_HAVE_ASM
#define NTT_DISPATCH(call_k) do { if (cuzk__ff_use_asm) call_k(1); else call_k(0); } while (0)
#else
#define NTT_DISPATCH(call_k) call_k(0)
#endif

NTT_INLINE void NF_(dit)(NFT *u, NFT *v, const NFT *w, int k)
{
    NFT t;
    NF_(mulk)(&t, v, w, k);
    NF_(addsub)(u, v, u, &t);
}

static inline void NF_(dit1)(NFT *u, NFT *v)
{
    NFT t = *v;
    NF_(addsub)(u, v, u, &t);
}

NTT_INLINE void NF_(dif)(NFT *u, NFT *v, const NFT *w, int k)
{
    NFT t;
    NF_(addsub)(u, &t, u, v);
    NF_(mulk)(v, &t, w, k);
}

static inline void NF_(dif1)(NFT *u, NFT *v)
{
    NFT t;
    NF_(addsub)(u, &t, u, v);
    *v = t;
}

/*
 * One stage of span len over a[0, m), m a multiple of len, a at a multiple of len in the
 * transform; twiddle of offset k is tw[k step] with step = n / len (tw: n/2 powers of w_n).
 */
NTT_INLINE void NF_(stage_k)(NFT *a, size_t m, size_t len, const NFT *tw, size_t step, int dif,
                             int k)
{
    size_t half = len / 2;
    for (size_t s = 0; s < m; s += len) {
        if (dif) {
            NF_(dif1)(&a[s], &a[s + half]);
            for (size_t i = 1; i < half; i++)
                NF_(dif)(&a[s + i], &a[s + i + half], &tw[i * step], k);
        } else {
            NF_(dit1)(&a[s], &a[s + half]);
            for (size_t i = 1; i < half; i++)
                NF_(dit)(&a[s + i], &a[s + i + half], &tw[i * step], k);
        }
    }
}

static void NF_(dit_stage)(NFT *a, size_t m, size_t len, const NFT *tw, size_t step)
{
#define NTT_CALL_(k) NF_(stage_k)(a, m, len, tw, step, 0, k)
    NTT_DISPATCH(NTT_CALL_);
#undef NTT_CALL_
}

static void NF_(dif_stage)(NFT *a, size_t m, size_t len, const NFT *tw, size_t step)
{
#define NTT_CALL_(k) NF_(stage_k)(a, m, len, tw, step, 1, k)
    NTT_DISPATCH(NTT_CALL_);
#undef NTT_CALL_
}

/* All DIT stages of spans 2 .. m inside a[0, m) (bit-reversed in), depth first. */
static void NF_(dit_block)(NFT *a, size_t m, const NFT *tw, size_t n)
{
    if (m > NTT_LEAF) {
        NF_(dit_block)(a, m / 2, tw, n);
        NF_(dit_block)(a + m / 2, m / 2, tw, n);
        NF_(dit_stage)(a, m, m, tw, n / m);
        return;
    }
    for (size_t len = 2; len <= m; len <<= 1)
        NF_(dit_stage)(a, m, len, tw, n / len);
}

/*
 * H step sub-block a[0, m) at offset off: DIF stages m .. 2 (inverse twiddles), times the
 * coset factors cs[0, m) (bit-reversed order, 1/n folded in), DIT stages 2 .. m.
 */
static void NF_(h_block)(const NF_(domain) *d, NFT *a, size_t m, const NFT *cs)
{
    size_t n = d->n;
    if (m > NTT_LEAF) {
        NF_(dif_stage)(a, m, m, d->tw_inv, n / m);
        NF_(h_block)(d, a, m / 2, cs);
        NF_(h_block)(d, a + m / 2, m / 2, cs + m / 2);
        NF_(dit_stage)(a, m, m, d->tw, n / m);
        return;
    }
    if (m == 1) {
        NF_(mul)(&a[0], &a[0], &cs[0]);
        return;
    }
    for (size_t len = m; len > 2; len >>= 1)
        NF_(dif_stage)(a, m, len, d->tw_inv, n / len);
    for (size_t s = 0; s < m; s += 2) { /* span 2 DIF, coset factors, span 2 DIT */
        NFT u, v;
        NF_(addsub)(&u, &v, &a[s], &a[s + 1]);
        NF_(mul)(&u, &u, &cs[s]);
        NF_(mul)(&v, &v, &cs[s + 1]);
        NF_(addsub)(&a[s], &a[s + 1], &u, &v);
    }
    for (size_t len = 4; len <= m; len <<= 1)
        NF_(dit_stage)(a, m, len, d->tw, n / len);
}

/*
 * The top stages (spans n .. 2m for DIF, 2m .. n for DIT) on the columns i in [i0, i1):
 * butterfly (s + k, s + k + len/2) with k = k0 + i, k0 a multiple of m.
 */
NTT_INLINE void NF_(top_stage_k)(NFT *a, size_t n, size_t m, size_t len, size_t i0, size_t i1,
                                 const NFT *tw, int dif, int k)
{
    size_t half = len / 2, step = n / len;
    for (size_t s = 0; s < n; s += len)
        for (size_t k0 = 0; k0 < half; k0 += m) {
            NFT *u = a + s + k0, *v = u + half;
            const NFT *w = tw + k0 * step;
            size_t i = i0;
            if (k0 == 0 && i == 0) {
                if (dif)
                    NF_(dif1)(&u[0], &v[0]);
                else
                    NF_(dit1)(&u[0], &v[0]);
                i++;
            }
            if (dif)
                for (; i < i1; i++)
                    NF_(dif)(&u[i], &v[i], &w[i * step], k);
            else
                for (; i < i1; i++)
                    NF_(dit)(&u[i], &v[i], &w[i * step], k);
        }
}

static void NF_(top_stage)(NFT *a, size_t n, size_t m, size_t len, size_t i0, size_t i1,
                           const NFT *tw, int dif)
{
#define NTT_CALL_(k)                                                                      \
    do {                                                                                  \
        if (dif)                                                                          \
            NF_(top_stage_k)(a, n, m, len, i0, i1, tw, 1, k);                             \
        else                                                                              \
            NF_(top_stage_k)(a, n, m, len, i0, i1, tw, 0, k);                             \
    } while (0)
    NTT_DISPATCH(NTT_CALL_);
#undef NTT_CALL_
}

typedef struct {
    const NF_(domain) *d;
    NFT *x[3];     /* the transformed arrays (a, b, c of the H step; one for F_ntt) */
    const NFT *src[3]; /* H step: the inputs, copied into x (zero-padded) by the first phase */
    size_t len[3];     /* their lengths */
    const NFT *cs;     /* H step: the domain's coset factors (coset_table) */
    size_t m;      /* sub-block size n / P */
    size_t cols;   /* columns per top-stage task */
    size_t nchunk; /* m / cols */
    int inverse;   /* F_intt: inverse twiddles and the factor 1/n in the top DIT stages */
} NF_(sched);

/* Split: P = n / m sub-blocks, P the power of two >= threads, and at least 2 when n > 1 so
 * the last stage can be fused with what follows. More sub-blocks per thread than that only add
 * fork-join and cache traffic (measured slower). */
static void NF_(sched_init)(NF_(sched) *s, const NF_(domain) *d, unsigned nthreads)
{
    if (!nthreads)
        nthreads = cuzk_num_threads();
    unsigned p = d->log_n ? 1 : 0;
    while (p < d->log_n && ((size_t)1 << p) < (size_t)nthreads && p < 10)
        p++;
    s->d = d;
    s->m = d->n >> p;
    s->cols = NTT_CHUNK >> p;
    if (s->cols < 1)
        s->cols = 1;
    if (s->cols > s->m)
        s->cols = s->m;
    s->nchunk = s->m / s->cols;
}

/* H step, first phase: copy one column chunk of input x into place (zeros past its length),
 * then its top DIF stages while it is in cache. */
static void NF_(top_dif_task)(void *arg, size_t t)
{
    NF_(sched) *s = arg;
    const NF_(domain) *d = s->d;
    size_t x = t / s->nchunk, i0 = (t % s->nchunk) * s->cols, i1 = i0 + s->cols;
    NFT *a = s->x[x];
    for (size_t r = 0; r < d->n && s->src[x]; r += s->m) { /* src NULL: already in place */
        size_t lo = r + i0, hi = r + i1, len = s->len[x];
        size_t cp = len <= lo ? 0 : (len < hi ? len : hi) - lo;
        if (cp)
            memcpy(a + lo, s->src[x] + lo, sizeof(NFT) * cp);
        if (lo + cp < hi)
            memset(a + lo + cp, 0, sizeof(NFT) * (hi - lo - cp)); /* zero: all-zero limbs */
    }
    for (size_t len = d->n; len > s->m; len >>= 1)
        NF_(top_stage)(a, d->n, s->m, len, i0, i1, d->tw_inv, 1);
}

static void NF_(top_dit_cols)(const NF_(sched) *s, NFT *a, size_t i0, size_t i1,
                              const NFT *tw)
{
    const NF_(domain) *d = s->d;
    for (size_t len = 2 * s->m; len <= d->n; len <<= 1)
        NF_(top_stage)(a, d->n, s->m, len, i0, i1, tw, 0);
}

static void NF_(h_block_task)(void *arg, size_t t)
{
    NF_(sched) *s = arg;
    size_t P = s->d->n / s->m, off = (t % P) * s->m;
    NF_(h_block)(s->d, s->x[t / P] + off, s->m, s->cs + off);
}

/* Top DIT stages of a, b, c on one column chunk, then h = a'b' - c' (into a) there. */
static void NF_(h_top_task)(void *arg, size_t t)
{
    NF_(sched) *s = arg;
    const NF_(domain) *d = s->d;
    size_t i0 = t * s->cols, i1 = i0 + s->cols;
    for (unsigned x = 0; x < 3; x++)
        NF_(top_dit_cols)(s, s->x[x], i0, i1, d->tw);
    NFT *h = s->x[0];
    const NFT *b = s->x[1], *c = s->x[2];
    for (size_t r = 0; r < d->n; r += s->m)
        for (size_t i = r + i0; i < r + i1; i++) {
            NF_(mul)(&h[i], &h[i], &b[i]);
            NF_(sub)(&h[i], &h[i], &c[i]);
        }
}

static void NF_(dit_block_task)(void *arg, size_t t)
{
    NF_(sched) *s = arg;
    const NF_(domain) *d = s->d;
    NF_(dit_block)(s->x[0] + t * s->m, s->m, s->inverse ? d->tw_inv : d->tw, d->n);
}

static void NF_(dit_top_task)(void *arg, size_t t)
{
    NF_(sched) *s = arg;
    const NF_(domain) *d = s->d;
    size_t i0 = t * s->cols, i1 = i0 + s->cols;
    NFT *a = s->x[0];
    NF_(top_dit_cols)(s, a, i0, i1, s->inverse ? d->tw_inv : d->tw);
    if (s->inverse)
        for (size_t r = 0; r < d->n; r += s->m)
            for (size_t i = r + i0; i < r + i1; i++)
                NF_(mul)(&a[i], &a[i], &d->n_inv);
}

static void NF_(ntt_natural)(const NF_(domain) *d, NFT *a, int inverse, unsigned nthreads)
{
    if (d->n < 2)
        return; /* n = 1: the transform and 1/n are the identity */
    NF_(sched) s;
    NF_(sched_init)(&s, d, nthreads);
    s.x[0] = a;
    s.inverse = inverse;
    NF_(bitrev_permute)(a, d->n, d->log_n, nthreads);
    cuzk_parallel_for(d->n / s.m, nthreads, NF_(dit_block_task), &s);
    cuzk_parallel_for(s.nchunk, nthreads, NF_(dit_top_task), &s);
}

void NF_(ntt)(const NF_(domain) *d, NFT *a, unsigned nthreads)
{
    NF_(ntt_natural)(d, a, 0, nthreads);
}

void NF_(intt)(const NF_(domain) *d, NFT *a, unsigned nthreads)
{
    NF_(ntt_natural)(d, a, 1, nthreads);
}

void NF_(coset_shift)(NFT *a, size_t n, const NFT *g, unsigned nthreads)
{
    NF_(pow_series)(NULL, a, n, g, &NF_(ONE), nthreads);
}

/* The H step on x[0..2] (from src[0..2] when not NULL); h = a'b' - c' lands in x[0]. */
static cuzk_err NF_(h_run)(const NF_(domain) *d, NFT *const x[3], const NFT *const src[3],
                           const size_t len[3], unsigned nthreads)
{
    const NFT *cs = NF_(coset_table)(d, nthreads);
    if (!cs)
        return CUZK_NO_MEMORY;
    NF_(sched) s;
    NF_(sched_init)(&s, d, nthreads);
    for (int i = 0; i < 3; i++) {
        s.x[i] = x[i];
        s.src[i] = src[i];
        s.len[i] = len[i];
    }
    s.cs = cs;
    s.inverse = 0;
    cuzk_parallel_for(3 * s.nchunk, nthreads, NF_(top_dif_task), &s);
    cuzk_parallel_for(3 * (d->n / s.m), nthreads, NF_(h_block_task), &s);
    cuzk_parallel_for(s.nchunk, nthreads, NF_(h_top_task), &s);
    return CUZK_OK;
}

cuzk_err NF_(groth16_h)(const NF_(domain) *d, NFT *h, const NFT *a, size_t na, const NFT *b,
                        size_t nb, const NFT *c, size_t nc, unsigned nthreads)
{
    if (d->log_n >= NTT_S)
        return CUZK_UNSUPPORTED;
    if (na > d->n || nb > d->n || nc > d->n)
        return CUZK_SIZE_MISMATCH;
    size_t n = d->n;
    if (n == 1) { /* x' = x (coset factor n^-1 g^0 = 1) */
        NFT z = NF_(ZERO);
        h[0] = na ? a[0] : z;
        NF_(mul)(&h[0], &h[0], nb ? &b[0] : &z);
        NF_(sub)(&h[0], &h[0], nc ? &c[0] : &z);
        return CUZK_OK;
    }
    NFT *bb = malloc(sizeof(NFT) * n * 2);
    if (!bb)
        return CUZK_NO_MEMORY;
    NFT *const x[3] = {h, bb, bb + n};
    const NFT *const src[3] = {a, b, c};
    const size_t len[3] = {na, nb, nc};
    cuzk_err e = NF_(h_run)(d, x, src, len, nthreads);
    free(bb);
    return e;
}

cuzk_err NF_(groth16_h_inplace)(const NF_(domain) *d, NFT *a, NFT *b, NFT *c,
                                unsigned nthreads)
{
    if (d->log_n >= NTT_S)
        return CUZK_UNSUPPORTED;
    if (d->n == 1) {
        NF_(mul)(&a[0], &a[0], &b[0]);
        NF_(sub)(&a[0], &a[0], &c[0]);
        return CUZK_OK;
    }
    NFT *const x[3] = {a, b, c};
    const NFT *const src[3] = {NULL, NULL, NULL};
    const size_t len[3] = {d->n, d->n, d->n};
    return NF_(h_run)(d, x, src, len, nthreads);
}

#undef NTT_F
#undef NTT_S
#undef NTT_ROOT
#undef NTT_RANGE
#undef NTT_LEAF
#undef NTT_CHUNK
#undef NTT_N0
#undef NTT_INLINE
#undef NTT_DISPATCH
