/*
 * Radix-2 NTT over a prime field, written once and instantiated per Fr in ntt.c.
 * Parameters: NTT_F (field prefix), NTT_S (two-adicity), NTT_ROOT (initializer of the
 * Montgomery-form 2^S-th root 5^((r-1)/2^S) from ff_params.h).
 *
 * Forward transform: bit-reversal permutation, then iterative Cooley-Tukey (decimation in
 * time) butterflies (u, v) -> (u + w v, u - w v). Cache blocking: all stages with butterfly
 * span <= NTT_BLOCK run block by block (each block in L1/L2, one task per block); the wider
 * stages are split into ranges of butterflies, one parallel pass per stage.
 */
#define NTN_(a, b) a##_##b
#define NTN(a, b) NTN_(a, b)
#define NF_(x) NTN(NTT_F, x)
#define NFT NF_(t)
#define NTT_BLOCK ((size_t)1 << 11)
#define NTT_RANGE ((size_t)1 << 12)

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
    const NFT *tw;
    size_t n;
    unsigned log_n;
    size_t len; /* current stage span (wide stages) */
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

void NF_(domain_free)(NF_(domain) *d)
{
    free(d->tw);
    free(d->tw_inv);
    d->tw = d->tw_inv = NULL;
}

static inline size_t NF_(bitrev)(size_t i, unsigned bits)
{
    size_t r = 0;
    for (unsigned b = 0; b < bits; b++, i >>= 1)
        r = (r << 1) | (i & 1);
    return r;
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

static inline void NF_(butterfly)(NFT *u, NFT *v, const NFT *w)
{
    NFT t;
    NF_(mul)(&t, v, w);
    NF_(sub)(v, u, &t);
    NF_(add)(u, u, &t);
}

/* All stages of span 2 .. blk inside one block of blk elements. */
static void NF_(block_task)(void *arg, size_t t)
{
    NF_(ntt_job) *j = arg;
    size_t blk = j->n < NTT_BLOCK ? j->n : NTT_BLOCK;
    NFT *a = j->a + t * blk;
    for (size_t len = 2; len <= blk; len <<= 1) {
        size_t half = len / 2, step = j->n / len;
        for (size_t s = 0; s < blk; s += len)
            for (size_t k = 0; k < half; k++)
                NF_(butterfly)(&a[s + k], &a[s + k + half], &j->tw[k * step]);
    }
}

/* One wide stage (span len > block): butterflies [t R, (t+1) R) of the n/2. */
static void NF_(stage_task)(void *arg, size_t t)
{
    NF_(ntt_job) *j = arg;
    size_t half = j->len / 2, step = j->n / j->len;
    size_t lo = t * NTT_RANGE, hi = lo + NTT_RANGE < j->n / 2 ? lo + NTT_RANGE : j->n / 2;
    for (size_t b = lo; b < hi; b++) {
        size_t g = b / half, k = b % half, s = g * j->len;
        NF_(butterfly)(&j->a[s + k], &j->a[s + k + half], &j->tw[k * step]);
    }
}

static void NF_(ntt_core)(const NF_(domain) *d, NFT *a, const NFT *tw, unsigned nthreads)
{
    if (d->n < 2)
        return;
    NF_(ntt_job) j = {.a = a, .tw = tw, .n = d->n, .log_n = d->log_n};
    size_t nr = (d->n + NTT_RANGE - 1) / NTT_RANGE;
    cuzk_parallel_for(nr, nthreads, NF_(bitrev_task), &j);
    size_t blk = d->n < NTT_BLOCK ? d->n : NTT_BLOCK;
    cuzk_parallel_for(d->n / blk, nthreads, NF_(block_task), &j);
    for (size_t len = blk * 2; len <= d->n; len <<= 1) {
        j.len = len;
        cuzk_parallel_for((d->n / 2 + NTT_RANGE - 1) / NTT_RANGE, nthreads, NF_(stage_task), &j);
    }
}

void NF_(ntt)(const NF_(domain) *d, NFT *a, unsigned nthreads)
{
    NF_(ntt_core)(d, a, d->tw, nthreads);
}

void NF_(intt)(const NF_(domain) *d, NFT *a, unsigned nthreads)
{
    NF_(ntt_core)(d, a, d->tw_inv, nthreads);
    NF_(pow_series)(NULL, a, d->n, &NF_(ONE), &d->n_inv, nthreads);
}

void NF_(coset_shift)(NFT *a, size_t n, const NFT *g, unsigned nthreads)
{
    NF_(pow_series)(NULL, a, n, g, &NF_(ONE), nthreads);
}

/* x <- NTT(coset_shift(iNTT(x), w_2N)), with 1/N folded into the coset powers. */
static void NF_(to_odd_coset)(const NF_(domain) *d, NFT *x, unsigned nthreads)
{
    NF_(ntt_core)(d, x, d->tw_inv, nthreads);
    NF_(pow_series)(NULL, x, d->n, &d->coset_gen, &d->n_inv, nthreads);
    NF_(ntt_core)(d, x, d->tw, nthreads);
}

typedef struct {
    NFT *h;
    const NFT *b, *c;
    size_t n;
} NF_(h_job);

static void NF_(h_task)(void *arg, size_t t)
{
    NF_(h_job) *j = arg;
    size_t lo = t * NTT_RANGE, hi = lo + NTT_RANGE < j->n ? lo + NTT_RANGE : j->n;
    for (size_t i = lo; i < hi; i++) {
        NF_(mul)(&j->h[i], &j->h[i], &j->b[i]);
        NF_(sub)(&j->h[i], &j->h[i], &j->c[i]);
    }
}

static void NF_(load_padded)(NFT *dst, const NFT *src, size_t len, size_t n)
{
    if (len > n)
        len = n;
    if (len)
        memcpy(dst, src, sizeof(NFT) * len);
    if (n > len)
        memset(dst + len, 0, sizeof(NFT) * (n - len)); /* zero is all-zero limbs */
}

cuzk_err NF_(groth16_h)(const NF_(domain) *d, NFT *h, const NFT *a, size_t na, const NFT *b,
                        size_t nb, const NFT *c, size_t nc, unsigned nthreads)
{
    if (d->log_n >= NTT_S)
        return CUZK_UNSUPPORTED;
    if (na > d->n || nb > d->n || nc > d->n)
        return CUZK_SIZE_MISMATCH;
    size_t n = d->n;
    NFT *bb = malloc(sizeof(NFT) * n * 2);
    if (!bb)
        return CUZK_NO_MEMORY;
    NFT *cc = bb + n;
    NF_(load_padded)(h, a, na, n);
    NF_(load_padded)(bb, b, nb, n);
    NF_(load_padded)(cc, c, nc, n);
    NF_(to_odd_coset)(d, h, nthreads);
    NF_(to_odd_coset)(d, bb, nthreads);
    NF_(to_odd_coset)(d, cc, nthreads);
    NF_(h_job) j = {h, bb, cc, n};
    cuzk_parallel_for((n + NTT_RANGE - 1) / NTT_RANGE, nthreads, NF_(h_task), &j);
    free(bb);
    return CUZK_OK;
}

#undef NTT_F
#undef NTT_S
#undef NTT_ROOT
