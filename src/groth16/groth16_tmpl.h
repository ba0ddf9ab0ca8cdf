/*
 * The Groth16 prover and verifier for one curve, written once and instantiated per curve by
 * groth16.c. Parameters: GP (curve prefix: bn254 | bls12_381), GP_CURVE (cuzk_curve value).
 *
 * The prover follows snarkjs's groth16_prove exactly (shared/reference/circom-snarkjs.md):
 *   synthesize  a = A.w, b = B.w from the key's coefficients (coef*R^2 mod r times a plain
 *               witness value under one Montgomery multiplication is Montgomery(coef*w)),
 *               c = a*b row by row (C is not stored in a zkey);
 *   h           evaluations of a, b, c on the odd coset of the 2N-th roots, h = a'b' - c',
 *               fed to the H MSM as is (no division by the vanishing polynomial);
 *   msm         A, B1 (G1) and B2 (G2) over the whole witness, C over w[nPublic+1..], H over h;
 *   finalize    pi_a = alpha + A + r delta, pi_b = beta2 + B2 + s delta2,
 *               pi_c = C + H + s pi_a + r (beta1 + B1 + s delta1) - r s delta1.
 * This file holds the curve's part: the key, its load and tables, synthesis, the CPU MSMs, the
 * blinding and the verifier, handed to the curve-independent stages of prover.c through
 * GT_(prover_ops).
 */
#define GTN_(a, b) a##_##b
#define GTN(a, b) GTN_(a, b)
#define GT_(x) GTN(GP, x)
#define G1_(x) GTN(GT_(g1), x)
#define G2_(x) GTN(GT_(g2), x)
#define FR_(x) GTN(GT_(fr), x)
#define FQ_(x) GTN(GT_(fp), x)
#define G1A G1_(affine)
#define G2A G2_(affine)
#define G1J G1_(jac)
#define G2J G2_(jac)
#define FRT FR_(t)

typedef struct {
    uint32_t signal;
    FRT value; /* coef * R^2 mod r, as stored in the zkey */
} GT_(coef);

typedef struct {
    cuzk__pk_base base; /* first: the curve-independent prover reaches the key through it */
    G1A alpha1, beta1, delta1;
    G2A beta2, gamma2, delta2;
    G1A *ic, *a, *b1, *c, *h;
    G2A *b2;
    /* Coefficients of A and B grouped by row (CSR): row i's terms are
     * coef[m][row_ptr[m][i] .. row_ptr[m][i+1]). */
    GT_(coef) *coef[2];
    uint64_t *row_ptr[2];
    uint64_t n_coef[2];
    FR_(domain) dom;
    size_t bytes;
    /* Fixed-base tables of the CPU MSMs (optional: GT_(pk_precompute) or the key cache):
     * tab[k] for A, B1, C, H (G1) and tab2 for B2 hold copies 1 .. t - 1 of the points
     * (msm.h's G_msm_tab_build for window c; copy 0 is the key's own array); t = 0: none.
     * tab_req: the copies asked for (each set holds at most that many). */
    struct {
        G1A *p;
        uint32_t t, c;
    } tab[4];
    struct {
        G2A *p;
        uint32_t t, c;
    } tab2;
    uint32_t tab_req;
    /* Tables loaded from a key cache are a read-only private mapping of it (not malloc'd). */
    void *tab_map;
    size_t tab_map_len;
} GT_(pk);

/* The key whose base is b (its first member). */
static GT_(pk) *GT_(pk_of)(cuzk__pk_base *b) { return (GT_(pk) *)b; }

static const cuzk__prover_ops GT_(prover_ops); /* at the end of this file */

/* A proof that consumes the key (cuzk_prove_opts.consume_key) frees each part once its last
 * reader is done: the coefficients after synthesis, the domain after H, point set k (0 A,
 * 1 B1, 2 C, 3 H, 4 B2) with its table after its MSM. Mapped tables (a key cache) have
 * their pages dropped instead; the mapping goes with the key. */
static void GT_(consume_coefs)(GT_(pk) *pk)
{
    for (int m = 0; m < 2; m++) {
        free(pk->coef[m]);
        free(pk->row_ptr[m]);
        pk->coef[m] = NULL;
        pk->row_ptr[m] = NULL;
    }
}

static void GT_(consume_set)(GT_(pk) *pk, int k)
{
    uint64_t nv = pk->base.n_vars;
    uint64_t n[5] = {nv, nv, nv - pk->base.n_public - 1, pk->base.domain_size, nv};
    void **pts[5] = {(void **)&pk->a, (void **)&pk->b1, (void **)&pk->c, (void **)&pk->h,
                     (void **)&pk->b2};
    free(*pts[k]);
    *pts[k] = NULL;
    void *tp = k < 4 ? (void *)pk->tab[k].p : (void *)pk->tab2.p;
    uint32_t t = k < 4 ? pk->tab[k].t : pk->tab2.t;
    if (t > 1) {
        if (pk->tab_map)
            cuzk__drop_pages(tp, (t - 1) * n[k] * (k < 4 ? sizeof(G1A) : sizeof(G2A)));
        else
            free(tp);
    }
    if (k < 4) {
        pk->tab[k].p = NULL;
        pk->tab[k].t = pk->tab[k].c = 0;
    } else {
        pk->tab2.p = NULL;
        pk->tab2.t = pk->tab2.c = 0;
    }
}

/* Frees the key's fixed-base tables and takes their bytes off pk->bytes. */
static void GT_(pk_tab_free)(GT_(pk) *pk)
{
    uint64_t nv = pk->base.n_vars;
    uint64_t n1[4] = {nv, nv, nv - pk->base.n_public - 1, pk->base.domain_size};
    for (int k = 0; k < 4; k++) {
        if (pk->tab[k].t > 1)
            pk->bytes -= (pk->tab[k].t - 1) * n1[k] * sizeof(G1A);
        if (!pk->tab_map)
            free(pk->tab[k].p);
        pk->tab[k].p = NULL;
        pk->tab[k].t = pk->tab[k].c = 0;
    }
    if (pk->tab2.t > 1)
        pk->bytes -= (pk->tab2.t - 1) * nv * sizeof(G2A);
    if (!pk->tab_map)
        free(pk->tab2.p);
    else
        munmap(pk->tab_map, pk->tab_map_len);
    pk->tab_map = NULL;
    pk->tab_map_len = 0;
    pk->tab2.p = NULL;
    pk->tab2.t = pk->tab2.c = 0;
    pk->tab_req = 0;
}

static void GT_(pk_free)(GT_(pk) *pk)
{
    if (!pk)
        return;
    cuzk__pk_base_free(&pk->base);
    GT_(pk_tab_free)(pk);
    free(pk->ic);
    free(pk->a);
    free(pk->b1);
    free(pk->b2);
    free(pk->c);
    free(pk->h);
    for (int m = 0; m < 2; m++) {
        free(pk->coef[m]);
        free(pk->row_ptr[m]);
    }
    FR_(domain_free)(&pk->dom);
    free(pk);
}

/* Decodes n snarkjs points of a section in parallel chunks, checking range and curve. */
typedef struct {
    const cuzk_zkey *zk;
    const uint8_t *src;
    void *dst;
    size_t n;
    int g2;
    const char *section;
    const char *file;
    cuzk_err err;
    size_t bad_index;
    cuzk_errbuf eb;
    pthread_mutex_t mu;
} GT_(decode_job);

#define GT_DECODE_CHUNK 4096

static void GT_(decode_chunk)(void *arg, size_t ci)
{
    GT_(decode_job) *j = arg;
    size_t lo = ci * GT_DECODE_CHUNK, hi = lo + GT_DECODE_CHUNK;
    if (hi > j->n)
        hi = j->n;
    cuzk_errbuf eb;
    for (size_t i = lo; i < hi; i++) {
        cuzk_err e;
        if (j->g2)
            e = G2_(from_snarkjs)((G2A *)j->dst + i, j->src + i * sizeof(G2A), CUZK_EC_CHECK_CURVE, &eb);
        else
            e = G1_(from_snarkjs)((G1A *)j->dst + i, j->src + i * sizeof(G1A), CUZK_EC_CHECK_CURVE, &eb);
        if (e) {
            pthread_mutex_lock(&j->mu);
            if (!j->err || i < j->bad_index) {
                j->err = e;
                j->bad_index = i;
                j->eb = eb;
            }
            pthread_mutex_unlock(&j->mu);
            return;
        }
    }
    size_t sz = j->g2 ? sizeof(G2A) : sizeof(G1A);
    cuzk__zkey_drop(j->zk, j->src + lo * sz, (hi - lo) * sz);
}

static cuzk_err GT_(decode_points)(void **out, const cuzk_zkey *zk, const uint8_t *src,
                                   size_t n, int g2,
                                   const char *section, const char *file, unsigned nthreads,
                                   cuzk_errbuf *eb)
{
    size_t sz = g2 ? sizeof(G2A) : sizeof(G1A);
    *out = NULL;
    void *dst = malloc(n ? n * sz : 1);
    if (!dst)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: cannot allocate %zu bytes for the %s points",
                         file, n * sz, section);
    GT_(decode_job) j = {zk,      src, dst, n, g2, section, file, CUZK_OK, 0, {{0}},
                         PTHREAD_MUTEX_INITIALIZER};
    cuzk_parallel_for((n + GT_DECODE_CHUNK - 1) / GT_DECODE_CHUNK, nthreads, GT_(decode_chunk), &j);
    pthread_mutex_destroy(&j.mu);
    if (j.err) {
        free(dst);
        return cuzk_errf(eb, j.err, "%s: %s point %zu: %s", file, section, j.bad_index, j.eb.msg);
    }
    *out = dst;
    return CUZK_OK;
}

/* The passes over the zkey's coefficients drop the mapping's pages behind them (as the
 * reader's check did): each pass faults them in again from the page cache, one at a time. */
static void GT_(coef_drop_behind)(const cuzk_zkey *zk, uint64_t i)
{
    const uint64_t every = (uint64_t)1 << 16;
    if ((i + 1) % every == 0 || i + 1 == zk->n_coefs) {
        uint64_t lo = i + 1 - ((i + 1) % every ? (i + 1) % every : every);
        cuzk__zkey_drop(zk, zk->coefs + lo * zk->coef_size, (i + 1 - lo) * zk->coef_size);
    }
}

static cuzk_err GT_(pk_load)(GT_(pk) **out, const cuzk_zkey *zk, unsigned nthreads, cuzk_errbuf *eb)
{
    const char *file = zk->file.name;
    *out = NULL;
    if (zk->g1_size != sizeof(G1A) || zk->g2_size != sizeof(G2A))
        return cuzk_errf(eb, CUZK_INTERNAL, "%s: point sizes do not match the curve", file);
    GT_(pk) *pk = calloc(1, sizeof *pk);
    if (!pk)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", file);
    cuzk__pk_base_init(&pk->base, &GT_(prover_ops));
    pk->base.n_vars = zk->n_vars;
    pk->base.n_public = zk->n_public;
    pk->base.domain_size = zk->domain_size;
    pk->base.log_n = zk->log_domain_size;
    cuzk_err e = CUZK_OK;
    cuzk_errbuf peb;
#define GT_HDR(dst, src, G, what)                                                              \
    if (!e && (e = G##_(from_snarkjs)(&pk->dst, zk->src, CUZK_EC_CHECK_SUBGROUP, &peb)))      \
        e = cuzk_errf(eb, e, "%s: header point %s: %s", file, what, peb.msg);
    GT_HDR(alpha1, alpha1, G1, "alpha1")
    GT_HDR(beta1, beta1, G1, "beta1")
    GT_HDR(delta1, delta1, G1, "delta1")
    GT_HDR(beta2, beta2, G2, "beta2")
    GT_HDR(gamma2, gamma2, G2, "gamma2")
    GT_HDR(delta2, delta2, G2, "delta2")
#undef GT_HDR
    void *p;
#define GT_PTS(dst, src, n, g2, what)                                                          \
    if (!e) {                                                                                  \
        e = GT_(decode_points)(&p, zk, zk->src, n, g2, what, file, nthreads, eb);                  \
        pk->dst = p;                                                                           \
    }
    GT_PTS(ic, ic, zk->n_ic, 0, "IC (section 3)")
    GT_PTS(a, a, zk->n_a, 0, "A (section 5)")
    GT_PTS(b1, b1, zk->n_b1, 0, "B1 (section 6)")
    GT_PTS(b2, b2, zk->n_b2, 1, "B2 (section 7)")
    GT_PTS(c, c, zk->n_c, 0, "C (section 8)")
    GT_PTS(h, h, zk->n_h, 0, "H (section 9)")
#undef GT_PTS
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    /* Coefficients: count per (matrix, row), then place (a counting sort, stable). */
    uint64_t N = pk->base.domain_size;
    for (int m = 0; m < 2 && !e; m++) {
        pk->row_ptr[m] = calloc(N + 1, sizeof(uint64_t));
        if (!pk->row_ptr[m])
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", file);
    }
    for (uint64_t i = 0; i < zk->n_coefs && !e; i++) {
        cuzk_zkey_coef k = cuzk_zkey_coef_at(zk, i);
        if (!cuzk_curve_lt_r(GP_CURVE, k.value))
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "%s: coefficient %" PRIu64 " (section 4) is not below r",
                          file, i);
        else
            pk->row_ptr[k.matrix][k.row + 1]++;
        GT_(coef_drop_behind)(zk, i);
    }
    for (int m = 0; m < 2 && !e; m++) {
        for (uint64_t r = 0; r < N; r++)
            pk->row_ptr[m][r + 1] += pk->row_ptr[m][r];
        pk->n_coef[m] = pk->row_ptr[m][N];
        pk->coef[m] = malloc((pk->n_coef[m] ? pk->n_coef[m] : 1) * sizeof(GT_(coef)));
        if (!pk->coef[m])
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", file);
    }
    if (!e) {
        uint64_t *fill[2];
        fill[0] = malloc(N * sizeof(uint64_t));
        fill[1] = malloc(N * sizeof(uint64_t));
        if (!fill[0] || !fill[1]) {
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", file);
        } else {
            memcpy(fill[0], pk->row_ptr[0], N * sizeof(uint64_t));
            memcpy(fill[1], pk->row_ptr[1], N * sizeof(uint64_t));
            for (uint64_t i = 0; i < zk->n_coefs; i++) {
                cuzk_zkey_coef k = cuzk_zkey_coef_at(zk, i);
                GT_(coef) *dst = &pk->coef[k.matrix][fill[k.matrix][k.row]++];
                dst->signal = k.signal;
                memcpy(dst->value.l, k.value, sizeof dst->value.l);
                GT_(coef_drop_behind)(zk, i);
            }
        }
        free(fill[0]);
        free(fill[1]);
    }
    if (!e && (e = FR_(domain_init)(&pk->dom, pk->base.log_n)))
        e = cuzk_errf(eb, e, "%s: cannot set up the evaluation domain of size 2^%u", file,
                      pk->base.log_n);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    pk->bytes = sizeof *pk + (zk->n_ic + zk->n_a + zk->n_b1 + zk->n_c + zk->n_h) * sizeof(G1A) +
                zk->n_b2 * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * (N + 1) * sizeof(uint64_t) + 2 * N * sizeof(FRT); /* the domain's twiddles,
                                          * and the coset table the first CPU H step adds */
    *out = pk;
    return CUZK_OK;
}

/* Builds the fixed-base tables of the five CPU MSMs with at most t copies each (t = 0 drops
 * them), each set's window picked for its size on nthreads threads. On failure the key keeps
 * no tables (it still proves, without them). */
static cuzk_err GT_(pk_precompute)(GT_(pk) *pk, unsigned t, unsigned nthreads, cuzk_errbuf *eb)
{
    GT_(pk_tab_free)(pk);
    if (!t)
        return CUZK_OK;
    unsigned T = nthreads ? nthreads : cuzk_num_threads();
    uint64_t nv = pk->base.n_vars;
    uint64_t n1[4] = {nv, nv, nv - pk->base.n_public - 1, pk->base.domain_size};
    const G1A *src[4] = {pk->a, pk->b1, pk->c, pk->h};
    static const char *what[5] = {"A", "B1", "C", "H", "B2"};
    cuzk_err e = CUZK_OK;
    int k;
    for (k = 0; k < 5; k++) {
        uint64_t n = k < 4 ? n1[k] : nv;
        unsigned c = k < 4 ? G1_(msm_tab_window)(n, t, T) : G2_(msm_tab_window)(n, t, T);
        unsigned tc = k < 4 ? G1_(msm_tab_copies)(t, c) : G2_(msm_tab_copies)(t, c);
        size_t sz = k < 4 ? sizeof(G1A) : sizeof(G2A);
        void *p = NULL;
        if (tc > 1 && n && !(p = cuzk__big_alloc((tc - 1) * n * sz))) {
            e = CUZK_NO_MEMORY;
            break;
        }
        if (k < 4) {
            pk->tab[k].p = p;
            pk->tab[k].t = tc;
            pk->tab[k].c = c;
            e = G1_(msm_tab_build)(p, src[k], n, tc, c, T);
        } else {
            pk->tab2.p = p;
            pk->tab2.t = tc;
            pk->tab2.c = c;
            e = G2_(msm_tab_build)(p, pk->b2, n, tc, c, T);
        }
        pk->bytes += tc > 1 ? (tc - 1) * n * sz : 0;
        if (e)
            break;
    }
    if (e) {
        GT_(pk_tab_free)(pk);
        return cuzk_errf(eb, e, "cannot build the precomputed tables of the %s points: %s",
                         what[k], cuzk_strerror(e));
    }
    pk->tab_req = t;
    return CUZK_OK;
}

/* ------------------------------------------------------------------ synthesis */

typedef struct {
    const GT_(pk) *pk;
    const uint8_t *w; /* 32 bytes a value, any alignment */
    FRT *a, *b, *c;
    uint64_t N;
} GT_(synth_job);

#define GT_SYNTH_CHUNK 1024

static void GT_(synth_chunk)(void *arg, size_t ci)
{
    GT_(synth_job) *j = arg;
    uint64_t lo = (uint64_t)ci * GT_SYNTH_CHUNK, hi = lo + GT_SYNTH_CHUNK;
    if (hi > j->N)
        hi = j->N;
    /* Most values of bit-heavy circuits are 0 or 1 and most coefficients 1 (R^2 in the key's
     * form): such a term's product is known without a multiplication, and so is c where a or
     * b is 0 or 1. The results are the same elements the products give. */
    for (uint64_t row = lo; row < hi; row++) {
        FRT acc[2], t, wv;
        for (int m = 0; m < 2; m++) {
            FR_(set_zero)(&acc[m]);
            const GT_(coef) *k = j->pk->coef[m];
            for (uint64_t i = j->pk->row_ptr[m][row]; i < j->pk->row_ptr[m][row + 1]; i++) {
                memcpy(wv.l, j->w + 32 * (uint64_t)k[i].signal, 32);
                if (!(wv.l[1] | wv.l[2] | wv.l[3]) && wv.l[0] <= 1) {
                    if (!wv.l[0])
                        continue;
                    if (FR_(eq)(&k[i].value, &FR_(R2))) {
                        FR_(add)(&acc[m], &acc[m], &FR_(ONE));
                        continue;
                    }
                }
                /* (coef R^2) * w / R = Montgomery form of coef * w. */
                FR_(mul)(&t, &k[i].value, &wv);
                FR_(add)(&acc[m], &acc[m], &t);
            }
        }
        j->a[row] = acc[0];
        j->b[row] = acc[1];
        if (FR_(is_zero)(&acc[0]) || FR_(is_zero)(&acc[1]))
            FR_(set_zero)(&j->c[row]);
        else if (FR_(is_one)(&acc[0]))
            j->c[row] = acc[1];
        else if (FR_(is_one)(&acc[1]))
            j->c[row] = acc[0];
        else
            FR_(mul)(&j->c[row], &acc[0], &acc[1]);
    }
}

/* a, b, c: domain_size elements each; w: n_vars plain values of 32 bytes (< r, checked by
 * the caller). */
static void GT_(synthesize)(const GT_(pk) *pk, const uint8_t *w, FRT *a, FRT *b, FRT *c,
                            unsigned nthreads)
{
    GT_(synth_job) j = {pk, w, a, b, c, pk->base.domain_size};
    cuzk_parallel_for((pk->base.domain_size + GT_SYNTH_CHUNK - 1) / GT_SYNTH_CHUNK, nthreads,
                      GT_(synth_chunk), &j);
}

/* ------------------------------------------------------------------ helpers */

static void GT_(rand_scalar)(FRT *out, int zero)
{
    /* Rejection sampling of a uniform value below r from the OS RNG. */
    uint64_t l[4];
    const uint64_t *R = FR_(P).l;
    for (;;) {
        if (zero) {
            memset(l, 0, sizeof l);
            break;
        }
        size_t got = 0;
        while (got < sizeof l) {
            ssize_t r = getrandom((uint8_t *)l + got, sizeof l - got, 0);
            if (r > 0)
                got += (size_t)r;
        }
        l[3] &= (~(uint64_t)0) >> (64 * 4 - GP_FR_BITS);
        int lt = 0;
        for (int i = 3; i >= 0; i--) {
            if (l[i] != R[i]) {
                lt = l[i] < R[i];
                break;
            }
        }
        if (lt)
            break;
    }
    FR_(from_canonical)(out, l);
}

static void GT_(g1_mul_fr)(G1J *r, const G1J *p, const FRT *k)
{
    uint64_t l[4];
    FR_(to_canonical)(l, k);
    G1_(mul_limbs)(r, p, l, 4);
}

static void GT_(g2_mul_fr)(G2J *r, const G2J *p, const FRT *k)
{
    uint64_t l[4];
    FR_(to_canonical)(l, k);
    G2_(mul_limbs)(r, p, l, 4);
}

/* ------------------------------------------------------------------ verify */

/* e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) == 1, vk_x = IC_0 + sum pub_i IC_i, with
 * pub as canonical limbs (plain values < r). Returns 1 when the proof is valid. */
/* The half of the verification that does not depend on the proof: the Miller loop of
 * (alpha1, beta2) and (vk_x, gamma2), vk_x = ic_0 + sum pub_i ic_{i+1}. */
static void GT_(verify_fixed)(GT_(fp12_t) *f, const G1A *alpha1, const G2A *beta2,
                              const G2A *gamma2, const G1A *ic, const void *pub, uint64_t n_pub)
{
    G1J acc, t, icj;
    G1_(from_affine)(&acc, &ic[0]);
    for (uint64_t i = 0; i < n_pub; i++) {
        uint64_t l[4];
        memcpy(l, (const uint8_t *)pub + 32 * i, 32); /* pub: 32 bytes a value, any alignment */
        G1_(from_affine)(&icj, &ic[i + 1]);
        G1_(mul_limbs)(&t, &icj, l, 4);
        G1_(add)(&acc, &acc, &t);
    }
    G1A P[2];
    G2A Q[2];
    P[0] = *alpha1;
    Q[0] = *beta2;
    G1_(to_affine)(&P[1], &acc);
    Q[1] = *gamma2;
    GT_(miller_loop)(f, P, Q, 2);
}

/* The rest given verify_fixed's f: the Miller loop of (-A, B) and (C, delta2) times f, one
 * final exponentiation, and whether that is one:
 * e(-A, B) e(alpha, beta) e(vk_x, gamma) e(C, delta) == 1. */
static int GT_(verify_rest)(const GT_(fp12_t) *fixed, const G2A *delta2, const G1A *A,
                            const G2A *B, const G1A *C)
{
    G1A P[2];
    G2A Q[2];
    G1_(affine_neg)(&P[0], A);
    Q[0] = *B;
    P[1] = *C;
    Q[1] = *delta2;
    GT_(fp12_t) f, e;
    GT_(miller_loop)(&f, P, Q, 2);
    GT_(fp12_mul)(&f, &f, fixed);
    GT_(final_exp)(&e, &f);
    return GT_(fp12_is_one)(&e);
}

static int GT_(verify_points)(const G1A *alpha1, const G2A *beta2, const G2A *gamma2,
                              const G2A *delta2, const G1A *ic, const FRT *pub, uint64_t n_pub,
                              const G1A *A, const G2A *B, const G1A *C)
{
    GT_(fp12_t) f;
    GT_(verify_fixed)(&f, alpha1, beta2, gamma2, ic, pub, n_pub);
    return GT_(verify_rest)(&f, delta2, A, B, C);
}

/* ------------------------------------------------------------------ the prover's curve part */

/* The host arrays the GPU staging (prover.c) uploads, in its order (a, b1, c, h, then b2,
 * then the rows: A's and B's row offsets, A's and B's terms), with their byte lengths: what
 * staging reads (so what is worth page-locking) and, since a device copy has the host layout
 * (points as they are, rows as cuzk_gpu_rows_upload copies them), what a stage occupies on
 * the device. Returns the count (CUZK_PK_GPU_ARRAYS). */
static size_t GT_(gpu_arrays)(cuzk__pk_base *base, void *ptr[CUZK_PK_GPU_ARRAYS],
                              size_t len[CUZK_PK_GPU_ARRAYS])
{
    GT_(pk) *pk = GT_(pk_of)(base);
    uint64_t nv = pk->base.n_vars, N = pk->base.domain_size;
    ptr[0] = pk->a, len[0] = nv * sizeof(G1A);
    ptr[1] = pk->b1, len[1] = nv * sizeof(G1A);
    ptr[2] = pk->c, len[2] = (nv - pk->base.n_public - 1) * sizeof(G1A);
    ptr[3] = pk->h, len[3] = N * sizeof(G1A);
    ptr[4] = pk->b2, len[4] = nv * sizeof(G2A);
    for (int m = 0; m < 2; m++) {
        ptr[5 + m] = pk->row_ptr[m], len[5 + m] = (N + 1) * sizeof(uint64_t);
        ptr[7 + m] = pk->coef[m], len[7 + m] = pk->n_coef[m] * sizeof(GT_(coef));
    }
    return CUZK_PK_GPU_ARRAYS;
}

/* The rest of the curve's operations of the curve-independent prover (prover.h), over the key
 * whose base they are given. */

static void GT_(ops_synthesize)(cuzk__pk_base *base, const uint8_t *w, void *a, void *b, void *c,
                                unsigned nthreads)
{
    GT_(synthesize)(GT_(pk_of)(base), w, a, b, c, nthreads);
}

static cuzk_err GT_(ops_h)(cuzk__pk_base *base, void *a, void *b, void *c, unsigned nthreads)
{
    return FR_(groth16_h_inplace)(&GT_(pk_of)(base)->dom, a, b, c, nthreads);
}

static cuzk_err GT_(ops_g1_msm)(cuzk__pk_base *base, int k, cuzk__g1_jac *out,
                                const uint8_t *sc, size_t n, const cuzk_msm_opts *o)
{
    const GT_(pk) *pk = GT_(pk_of)(base);
    const G1A *pts[4] = {pk->a, pk->b1, pk->c, pk->h};
    if (pk->tab[k].t)
        return G1_(msm_tab)(&out->GP, pts[k], pk->tab[k].p, pk->tab[k].t, pk->tab[k].c, sc, n,
                            o);
    return G1_(msm_ex)(&out->GP, pts[k], sc, n, o);
}

static cuzk_err GT_(ops_g2_msm)(cuzk__pk_base *base, cuzk__g2_jac *out, const uint8_t *sc,
                                size_t n, const cuzk_msm_opts *o)
{
    const GT_(pk) *pk = GT_(pk_of)(base);
    if (pk->tab2.t)
        return G2_(msm_tab)(&out->GP, pk->b2, pk->tab2.p, pk->tab2.t, pk->tab2.c, sc, n, o);
    return G2_(msm_ex)(&out->GP, pk->b2, sc, n, o);
}

static int GT_(ops_g1_on_curve)(const cuzk__g1_jac *p) { return G1_(is_on_curve)(&p->GP); }
static int GT_(ops_g2_on_curve)(const cuzk__g2_jac *p) { return G2_(is_on_curve)(&p->GP); }

static void GT_(ops_consume_coefs)(cuzk__pk_base *base) { GT_(consume_coefs)(GT_(pk_of)(base)); }

static void GT_(ops_consume_domain)(cuzk__pk_base *base)
{
    FR_(domain_free)(&GT_(pk_of)(base)->dom);
}

static void GT_(ops_consume_set)(cuzk__pk_base *base, int k)
{
    GT_(consume_set)(GT_(pk_of)(base), k);
}

static void GT_(ops_prep)(cuzk_prove_state *s)
{
    const GT_(pk) *pk = GT_(pk_of)(s->pk);
    GT_(prove_prep) *pre = &s->pre.GP;
    GT_(rand_scalar)(&pre->r, s->opts.zero_rs);
    GT_(rand_scalar)(&pre->s, s->opts.zero_rs);
    FR_(mul)(&pre->rs, &pre->r, &pre->s);
    FR_(neg)(&pre->rs, &pre->rs);
    G1J delta1;
    G2J delta2;
    G1_(from_affine)(&delta1, &pk->delta1);
    G2_(from_affine)(&delta2, &pk->delta2);
    GT_(g1_mul_fr)(&pre->rd1, &delta1, &pre->r);
    GT_(g1_mul_fr)(&pre->sd1, &delta1, &pre->s);
    GT_(g1_mul_fr)(&pre->rsd1, &delta1, &pre->rs);
    GT_(g2_mul_fr)(&pre->sd2, &delta2, &pre->s);
    if (!s->opts.no_verify)
        GT_(verify_fixed)(&pre->ml, &pk->alpha1, &pk->beta2, &pk->gamma2, pk->ic, s->wb + 32,
                          pk->base.n_public);
}

static int GT_(ops_finish)(cuzk_prove_state *s, cuzk_proof *proof)
{
    const GT_(pk) *pk = GT_(pk_of)(s->pk);
    const GT_(prove_prep) *pre = &s->pre.GP;
    double t = cuzk__now_ms();
    G1J alpha, beta1, tmp, A, B1, C;
    G2J beta2, B2;
    G1_(from_affine)(&alpha, &pk->alpha1);
    G1_(from_affine)(&beta1, &pk->beta1);
    G2_(from_affine)(&beta2, &pk->beta2);
    /* pi_a = alpha + A + r delta1 */
    G1_(add)(&A, &alpha, &s->pa.GP);
    G1_(add)(&A, &A, &pre->rd1);
    /* pi_b = beta2 + B2 + s delta2; b1 = beta1 + B1 + s delta1 */
    G2_(add)(&B2, &beta2, &s->pb2.GP);
    G2_(add)(&B2, &B2, &pre->sd2);
    G1_(add)(&B1, &beta1, &s->pb1.GP);
    G1_(add)(&B1, &B1, &pre->sd1);
    /* pi_c = C + H + s pi_a + r b1 - r s delta1 */
    G1_(add)(&C, &s->pc.GP, &s->ph.GP);
    GT_(g1_mul_fr)(&tmp, &A, &pre->s);
    G1_(add)(&C, &C, &tmp);
    GT_(g1_mul_fr)(&tmp, &B1, &pre->r);
    G1_(add)(&C, &C, &tmp);
    G1_(add)(&C, &C, &pre->rsd1);
    G1A aa, ca;
    G2A ba;
    G1_(to_affine)(&aa, &A);
    G1_(to_affine)(&ca, &C);
    G2_(to_affine)(&ba, &B2);
    memset(proof, 0, sizeof *proof);
    proof->curve = GP_CURVE;
    G1_(to_snarkjs)(proof->a, &aa);
    G2_(to_snarkjs)(proof->b, &ba);
    G1_(to_snarkjs)(proof->c, &ca);
    s->st.finalize_ms = cuzk__now_ms() - t;
    if (s->opts.no_verify)
        return 1;
    t = cuzk__now_ms();
    int ok = GT_(verify_rest)(&pre->ml, &pk->delta2, &aa, &ba, &ca);
    s->st.verify_ms = cuzk__now_ms() - t;
    return ok;
}

_Static_assert(sizeof(FRT) == CUZK__FR_BYTES, "an element of Fr is CUZK__FR_BYTES bytes");
_Static_assert(sizeof(GT_(coef)) % 8 == 0 && offsetof(GT_(coef), value) == 8,
               "GPU rows read a u32 signal at byte 0 and the value at byte 8");

static const cuzk__prover_ops GT_(prover_ops) = {
    .gpu_curve = (cuzk_gpu_curve)GP_CURVE,
    .fr_modulus = FR_(P).l,
    .coef_bytes = sizeof(GT_(coef)),
    .arrays = GT_(gpu_arrays),
    .synthesize = GT_(ops_synthesize),
    .h = GT_(ops_h),
    .g1_msm = GT_(ops_g1_msm),
    .g2_msm = GT_(ops_g2_msm),
    .g1_on_curve = GT_(ops_g1_on_curve),
    .g2_on_curve = GT_(ops_g2_on_curve),
    .consume_coefs = GT_(ops_consume_coefs),
    .consume_domain = GT_(ops_consume_domain),
    .consume_set = GT_(ops_consume_set),
    .prep = GT_(ops_prep),
    .finish = GT_(ops_finish),
};
