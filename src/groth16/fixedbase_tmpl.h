/* Fixed-base scalar multiplication k * G for many scalars k (the generator of one group),
 * written once and instantiated for G1 and G2 of both curves (setup.c).
 *
 * Define FB_G (group prefix: bn254_g1, ...) and FB_F (its coordinate field: bn254_fp,
 * bn254_fp2, ...) before including; both are undefined at the end.
 *
 * Method: the fixed-base windowed ("comb by windows") method, as in Brickell, Gordon, McCurley,
 * Wilson, "Fast exponentiation with precomputation" (EUROCRYPT '92), simplest form: the scalar
 * is cut into nwin = ceil(255 / w) windows of w bits; a table holds d * 2^(w k) G for every
 * window k and digit d < 2^w, in affine form; then k * G is the sum of one table entry per
 * window: nwin mixed additions and no doublings. The sums are normalised to affine in blocks
 * with one inversion per block (Montgomery's trick, batch_to_affine). Not constant time: the
 * secrets of a test setup are not protected anyway (see cuzk/setup.h). */
#define FXBN_(a, b) a##_##b
#define FXBN(a, b) FXBN_(a, b)
#define FXB_(x) FXBN(FB_G, x)
#define FXBF_(x) FXBN(FB_F, x)

typedef struct {
    unsigned w, nwin;
    FXB_(affine) *tab; /* nwin blocks of 2^w entries; entry 0 of each block is unused */
} FXB_(fb);

/* Bytes of the table for window w. */
static uint64_t FXB_(fb_table_bytes)(unsigned w)
{
    return (uint64_t)((FB_SCALAR_BITS + w - 1) / w) * ((uint64_t)1 << w) * sizeof(FXB_(affine));
}

/* Scratch one table-building task needs (2^w Jacobian points and field elements). */
static uint64_t FXB_(fb_build_bytes)(unsigned w)
{
    return ((uint64_t)1 << w) * (sizeof(FXB_(jac)) + sizeof(FXBF_(t)));
}

/* The window minimising the work nwin * (2^w + n) (table entries plus one addition per
 * window per scalar), with the table at most max_bytes. */
static unsigned FXB_(fb_window)(uint64_t n, uint64_t max_bytes)
{
    unsigned best = 2;
    double best_cost = 1e300;
    for (unsigned w = 2; w <= 20; w++) {
        if (w > 2 && FXB_(fb_table_bytes)(w) > max_bytes)
            break;
        double cost = (double)((FB_SCALAR_BITS + w - 1) / w) * ((double)(1u << w) + (double)n);
        if (cost < best_cost) {
            best_cost = cost;
            best = w;
        }
    }
    return best;
}

typedef struct {
    FXB_(fb) *fb;
    int fail;
} FXB_(fb_build_ctx);

static void FXB_(fb_build_one)(void *arg, size_t k)
{
    FXB_(fb_build_ctx) *c = arg;
    const size_t m = (size_t)1 << c->fb->w;
    FXB_(jac) *j = calloc(m, sizeof *j);
    FXBF_(t) *s = malloc(m * sizeof *s);
    if (!j || !s) {
        __atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
        free(j);
        free(s);
        return;
    }
    FXB_(jac) b;
    FXB_(from_affine)(&b, &FXB_(GEN));
    for (size_t i = 0; i < (size_t)c->fb->w * k; i++)
        FXB_(dbl)(&b, &b);
    FXB_(affine) ba;
    FXB_(to_affine)(&ba, &b);
    FXB_(set_inf)(&j[0]);
    for (size_t d = 1; d < m; d++)
        FXB_(add_affine)(&j[d], &j[d - 1], &ba);
    FXB_(batch_to_affine)(c->fb->tab + k * m, j, m, s);
    free(j);
    free(s);
}

static cuzk_err FXB_(fb_init)(FXB_(fb) *fb, unsigned w, unsigned nthreads, cuzk_errbuf *eb)
{
    fb->w = w;
    fb->nwin = (FB_SCALAR_BITS + w - 1) / w;
    fb->tab = malloc(FXB_(fb_table_bytes)(w));
    if (!fb->tab)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "setup: cannot allocate a %llu-byte table",
                         (unsigned long long)FXB_(fb_table_bytes)(w));
    FXB_(fb_build_ctx) c = {fb, 0};
    cuzk_parallel_for(fb->nwin, nthreads, FXB_(fb_build_one), &c);
    if (c.fail) {
        free(fb->tab);
        fb->tab = NULL;
        return cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory building the tables");
    }
    return CUZK_OK;
}

static void FXB_(fb_free)(FXB_(fb) *fb)
{
    free(fb->tab);
    fb->tab = NULL;
}

/* Bits [off, off + w) of a 4-limb little-endian scalar (zero beyond bit 255). */
static inline unsigned FXB_(fb_digit)(const uint64_t k[4], unsigned off, unsigned w)
{
    unsigned li = off / 64, sh = off % 64;
    if (li >= 4)
        return 0;
    uint64_t v = k[li] >> sh;
    if (sh + w > 64 && li + 1 < 4)
        v |= k[li + 1] << (64 - sh);
    return (unsigned)(v & (((uint64_t)1 << w) - 1));
}

/* Scalars per task. The sums of one block are built in affine coordinates, one window at a
 * time: all the block's additions of a window share one field inversion (Montgomery's trick),
 * so an addition costs about 6 multiplications instead of the 11 of a mixed Jacobian addition,
 * and no final normalisation is needed. */
#define FB_BLOCK 1024

typedef struct {
    const FXB_(fb) *fb;
    const uint64_t (*k)[4];
    size_t n;
    uint8_t *out;
    size_t point_bytes;
    int fail;
} FXB_(fb_mul_ctx);

static void FXB_(fb_mul_block)(void *arg, size_t blk)
{
    FXB_(fb_mul_ctx) *c = arg;
    const FXB_(fb) *fb = c->fb;
    size_t i0 = blk * FB_BLOCK, cnt = c->n - i0 < FB_BLOCK ? c->n - i0 : FB_BLOCK;
    FXB_(affine) *acc = calloc(cnt, sizeof *acc);
    FXBF_(t) *den = calloc(cnt, sizeof *den), *pre = calloc(cnt, sizeof *pre);
    uint32_t *idx = calloc(cnt, sizeof *idx);
    const FXB_(affine) **q = calloc(cnt, sizeof *q);
    uint8_t *inf = malloc(cnt);
    if (!acc || !den || !pre || !idx || !q || !inf) {
        __atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
        goto done;
    }
    memset(inf, 1, cnt);
    const size_t m = (size_t)1 << fb->w;
    for (unsigned win = 0; win < fb->nwin; win++) {
        size_t na = 0;
        for (size_t i = 0; i < cnt; i++) {
            unsigned d = FXB_(fb_digit)(c->k[i0 + i], win * fb->w, fb->w);
            if (!d)
                continue;
            const FXB_(affine) *t = &fb->tab[win * m + d];
            if (inf[i]) {
                acc[i] = *t;
                inf[i] = 0;
                continue;
            }
            if (FXBF_(eq)(&acc[i].x, &t->x)) {
                /* P = +-Q: doubling or infinity (practically never: acc is a sum of lower
                 * windows' multiples) */
                if (FXBF_(eq)(&acc[i].y, &t->y)) {
                    FXB_(jac) j;
                    FXB_(from_affine)(&j, &acc[i]);
                    FXB_(dbl)(&j, &j);
                    FXB_(to_affine)(&acc[i], &j);
                } else {
                    inf[i] = 1;
                }
                continue;
            }
            idx[na] = (uint32_t)i;
            q[na] = t;
            FXBF_(sub)(&den[na], &t->x, &acc[i].x);
            na++;
        }
        if (!na)
            continue;
        pre[0] = den[0];
        for (size_t j = 1; j < na; j++)
            FXBF_(mul)(&pre[j], &pre[j - 1], &den[j]);
        FXBF_(t) inv;
        FXBF_(inv)(&inv, &pre[na - 1]);
        for (size_t j = na; j-- > 0;) {
            FXBF_(t) di, lam, x3, y3;
            if (j) {
                FXBF_(mul)(&di, &inv, &pre[j - 1]);
                FXBF_(mul)(&inv, &inv, &den[j]);
            } else {
                di = inv;
            }
            FXB_(affine) *P = &acc[idx[j]];
            const FXB_(affine) *Q = q[j];
            FXBF_(sub)(&lam, &Q->y, &P->y);
            FXBF_(mul)(&lam, &lam, &di);
            FXBF_(sqr)(&x3, &lam);
            FXBF_(sub)(&x3, &x3, &P->x);
            FXBF_(sub)(&x3, &x3, &Q->x);
            FXBF_(sub)(&y3, &P->x, &x3);
            FXBF_(mul)(&y3, &y3, &lam);
            FXBF_(sub)(&y3, &y3, &P->y);
            P->x = x3;
            P->y = y3;
        }
    }
    for (size_t i = 0; i < cnt; i++) {
        if (inf[i])
            FXB_(affine_set_inf)(&acc[i]);
        FXB_(to_snarkjs)(c->out + (i0 + i) * c->point_bytes, &acc[i]);
    }
done:
    free(acc);
    free(den);
    free(pre);
    free(idx);
    free(q);
    free(inf);
}

/* out (n * point_bytes bytes, snarkjs layout) = k_i * G for canonical 4-limb scalars k_i < r. */
static cuzk_err FXB_(fb_mul)(const FXB_(fb) *fb, uint8_t *out, size_t point_bytes,
                            const uint64_t (*k)[4], size_t n, unsigned nthreads, cuzk_errbuf *eb)
{
    FXB_(fb_mul_ctx) c = {fb, k, n, out, point_bytes, 0};
    cuzk_parallel_for((n + FB_BLOCK - 1) / FB_BLOCK, nthreads, FXB_(fb_mul_block), &c);
    if (c.fail)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory in scalar multiplication");
    return CUZK_OK;
}

/* One point k * G (header points), by double-and-add. */
static void FXB_(mul_gen_bytes)(uint8_t *out, const uint64_t k[4])
{
    FXB_(jac) g, r;
    FXB_(affine) a;
    FXB_(from_affine)(&g, &FXB_(GEN));
    FXB_(mul_limbs)(&r, &g, k, 4);
    FXB_(to_affine)(&a, &r);
    FXB_(to_snarkjs)(out, &a);
}

#undef FB_G
#undef FB_F
#undef FXBN_
#undef FXBN
#undef FXB_
#undef FXBF_
