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
 * Stages are separate functions so the engine can run them on different workers; the MSMs and
 * H go through a backend table (CPU here; the GPU backend provides the same entries).
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
    cuzk__pk_base_init(&pk->base);
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
    for (uint64_t row = lo; row < hi; row++) {
        FRT acc[2], t, wv;
        for (int m = 0; m < 2; m++) {
            FR_(set_zero)(&acc[m]);
            const GT_(coef) *k = j->pk->coef[m];
            for (uint64_t i = j->pk->row_ptr[m][row]; i < j->pk->row_ptr[m][row + 1]; i++) {
                /* (coef R^2) * w / R = Montgomery form of coef * w. */
                memcpy(wv.l, j->w + 32 * (uint64_t)k[i].signal, 32);
                FR_(mul)(&t, &k[i].value, &wv);
                FR_(add)(&acc[m], &acc[m], &t);
            }
        }
        j->a[row] = acc[0];
        j->b[row] = acc[1];
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

/* ------------------------------------------------------------------ staged prover */

/* One proof in progress (cuzk_prove_state in the public API). Stages:
 *   pstart  (CPU) witness checks into w, and synthesis of a, b, c unless deferred;
 *   psynth  (CPU) a, b, c, allocated here: in pstart, or, when it deferred synthesis, first
 *           thing in a CPU G1 stage; a GPU G1 stage then synthesizes on the device instead
 *           and a, b, c never exist on the host;
 *   pg1     H and the G1 MSMs, on the CPU or a GPU; a, b, c are freed when it succeeds and
 *           kept when it fails, so the stage can be retried on another device or the CPU;
 *   pg2     B in G2, on the CPU or a GPU; may run on another thread at the same time as pg1
 *           (both only read w);
 *   pfinish blinding, the proof, self-verification; frees w. */
typedef struct {
    GT_(pk) *pk;
    cuzk_prove_opts opts;
    FRT *w, *a, *b, *c;
    /* The witness as the CPU stages read it (32 bytes a value): w, or with w NULL the
     * caller's witness itself (GT_(prove) on the CPU, which outlives the proof; a .wtns
     * mapping leaves it 4 bytes off 8-byte alignment, so it is only read bytewise). */
    const uint8_t *wb;
    G1J pa, pb1, pc, ph;
    G2J pb2;
    int g1_done, g2_done, g1_msm_done, synthesized;
    int w_borrowed; /* w is the caller's buffer (cuzk_prove's page-locked one): not freed here */
    int w_staged;   /* w was queued to device 0's key context while it was copied
                     * (cuzk_gpu_scalars_stage): the first witness MSM there reads it */
    int w_checked;  /* every value of w is known to be below r (pstart checks it on the host
                     * unless the device is to: then A's MSM does, or GT_(wcheck) before
                     * any CPU stage reads w) */
    cuzk_gpu_ctx *w_pin; /* w is page-locked through this context (GT_(wpin_state)) */
    /* What pfinish needs that no MSM result goes into (GT_(pprep); the command line's path
     * computes it on a thread beside the GPU work): the blinding scalars, their multiples of
     * delta, and the verification's fixed Miller loop. */
    struct {
        int ready;
        FRT r, s, rs;      /* rs = -r s */
        G1J rd1, sd1, rsd1; /* r delta1, s delta1, -r s delta1 */
        G2J sd2;            /* s delta2 */
        GT_(fp12_t) ml;     /* verify_fixed's loop (unless no_verify) */
    } pre;
    int consume; /* free the key's parts as the CPU stages finish with them (consume_key) */
    double g2_upload_ms; /* pg2_gpu's key upload time (added to st in pfinish) */
    cuzk_prove_stats st;
    double t0;
} GT_(pstate);

/* Frees w (unpinning it first when GT_(wpin_state) page-locked it), unless borrowed. */
static void GT_(wfree)(GT_(pstate) *s)
{
    if (s->w_pin) {
        cuzk_gpu_unpin(s->w_pin, s->w);
        s->w_pin = NULL;
    }
    if (!s->w_borrowed)
        free(s->w);
    s->w = NULL;
    s->wb = NULL;
}

/* Page-locks the state's own w (portable to every device), so a GPU stage uploads it by DMA
 * rather than through the staging buffers; undone when w is freed. */
static cuzk_err GT_(wpin_state)(GT_(pstate) *s, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    if (s->w_pin || s->w_borrowed || !s->w || !s->pk->base.n_vars)
        return CUZK_OK;
    cuzk_err e = cuzk_gpu_pin(ctx, s->w, (size_t)s->pk->base.n_vars * sizeof(FRT), eb);
    if (!e)
        s->w_pin = ctx;
    return e;
}

static void GT_(pfree)(GT_(pstate) *s)
{
    if (!s)
        return;
    GT_(wfree)(s);
    free(s->a);
    free(s->b);
    free(s->c);
    free(s);
}

static void GT_(free_abc)(GT_(pstate) *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    s->a = s->b = s->c = NULL; /* dead after H: released at once */
}

/* Synthesis of a, b, c on the CPU (allocated here), unless done. */
static cuzk_err GT_(wcheck)(GT_(pstate) *s, cuzk_errbuf *eb);

static cuzk_err GT_(psynth)(GT_(pstate) *s, cuzk_errbuf *eb)
{
    if (s->synthesized)
        return CUZK_OK;
    cuzk_err ce = GT_(wcheck)(s, eb);
    if (ce)
        return ce;
    uint64_t N = s->pk->base.domain_size;
    s->a = cuzk__big_alloc(N * sizeof(FRT));
    s->b = cuzk__big_alloc(N * sizeof(FRT));
    s->c = cuzk__big_alloc(N * sizeof(FRT));
    if (!s->a || !s->b || !s->c) {
        GT_(free_abc)(s);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "cannot allocate a, b, c (%" PRIu64 " bytes)",
                         3 * N * (uint64_t)sizeof(FRT));
    }
    double t = cuzk__now_ms();
    GT_(synthesize)(s->pk, s->wb, s->a, s->b, s->c, s->opts.nthreads);
    s->st.synth_ms = cuzk__now_ms() - t;
    if (s->consume)
        GT_(consume_coefs)(s->pk);
    s->synthesized = 1;
    return CUZK_OK;
}

/* The witness's copy into the prover's state, in chunks of `chunk` values; first_bad: the
 * lowest index of a value not below r (UINT64_MAX: none). stream: each value is checked as it
 * is read and stored around the caches (non-temporal stores, x86-64): for a witness far larger
 * than the caches that moves 2 bytes per byte instead of 3 (no read of the destination's lines
 * before they are written) and reads the source once. The GPU path waits for this copy
 * (docs/PERFORMANCE.md has its effect on a 2^24 proof). */
#define GT_WCOPY_CHUNK 65536
#define GT_WCOPY_STREAM_MIN ((uint64_t)1 << 13) /* values (256 KiB): smaller ones stay cached */
typedef struct {
    FRT *w;
    const uint8_t *src;
    uint64_t n, chunk;
    int stream;
    _Atomic uint64_t first_bad;
} GT_(wcopy_job);

static void GT_(wcopy_bad)(GT_(wcopy_job) *j, uint64_t i)
{
    uint64_t cur = atomic_load(&j->first_bad);
    while (i < cur && !atomic_compare_exchange_weak(&j->first_bad, &cur, i))
        ;
}

static void GT_(wcopy_chunk)(void *arg, size_t k)
{
    GT_(wcopy_job) *j = arg;
    uint64_t lo = (uint64_t)k * j->chunk, hi = lo + j->chunk;
    if (lo >= j->n)
        return;
    if (hi > j->n)
        hi = j->n;
    /* No destination, or the caller's buffer: only check. */
    const int in_place = !j->w || (const uint8_t *)j->w == j->src;
#if defined(__x86_64__)
    if (j->stream && !in_place && ((uintptr_t)j->w & 15) == 0) {
        for (uint64_t i = lo; i < hi; i++) {
            const uint8_t *sp = j->src + 32 * i;
            uint64_t l[4];
            memcpy(l, sp, 32);
            if (!FR_(limbs_lt_p)(l)) {
                GT_(wcopy_bad)(j, i);
                break;
            }
            __m128i *dp = (__m128i *)(j->w + i);
            _mm_stream_si128(dp, _mm_loadu_si128((const __m128i *)sp));
            _mm_stream_si128(dp + 1, _mm_loadu_si128((const __m128i *)(sp + 16)));
        }
        _mm_sfence(); /* the stores are weakly ordered: visible before the chunk is done */
        return;
    }
#endif
    if (!in_place)
        memcpy(j->w + lo, j->src + 32 * lo, 32 * (hi - lo));
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t l[4];
        memcpy(l, j->src + 32 * i, 32);
        if (!FR_(limbs_lt_p)(l)) {
            GT_(wcopy_bad)(j, i);
            return;
        }
    }
}

/* The range check of w on all threads (a device was to do it and did not get to: GPU fault
 * before A's MSM, then a CPU stage). */
static cuzk_err GT_(wcheck)(GT_(pstate) *s, cuzk_errbuf *eb)
{
    if (s->w_checked)
        return CUZK_OK;
    const uint64_t n = s->pk->base.n_vars;
    GT_(wcopy_job) j = {NULL, s->wb, n, GT_WCOPY_CHUNK, 0, UINT64_MAX};
    cuzk_parallel_for((n + GT_WCOPY_CHUNK - 1) / GT_WCOPY_CHUNK, s->opts.nthreads,
                      GT_(wcopy_chunk), &j);
    uint64_t bad = atomic_load(&j.first_bad);
    if (bad != UINT64_MAX)
        return cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", bad);
    s->w_checked = 1;
    return CUZK_OK;
}

/* wbuf: NULL, or a buffer of n_vars elements the caller owns for w (kept, not freed); the
 * witness itself without wready: read in place (only checked; w stays NULL, wb is it).
 * wready: NULL, or called with each range [lo, hi) of w as soon as it is copied and checked,
 * in order, from the copying thread (GT_(prove) uploads it meanwhile). wcheck_dev (with wbuf
 * the caller's witness itself and wready): w is not read here beyond value 0, only handed
 * to wready whole; the device range-checks it in A's MSM (w_checked stays 0). */
#define GT_WSTAGE_BLOCK ((uint64_t)1 << 20)
static cuzk_err GT_(pstart_ex)(GT_(pstate) **out, GT_(pk) *pk, const uint8_t *witness,
                               uint64_t n_witness, const cuzk_prove_opts *opts, int defer_synth,
                               void *wbuf, void (*wready)(void *, uint64_t, uint64_t),
                               void *warg, int wcheck_dev, cuzk_errbuf *eb)
{
    *out = NULL;
    if (pk->base.consumed)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "the proving key was consumed by an earlier proof (consume_key): "
                         "load it again");
    if (n_witness != pk->base.n_vars)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "witness has %" PRIu64 " values, the circuit expects %u", n_witness,
                         pk->base.n_vars);
    GT_(pstate) *s = calloc(1, sizeof *s);
    if (!s)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    s->t0 = cuzk__now_ms();
    s->pk = pk;
    s->opts = *opts;
    s->w_borrowed = wbuf != NULL;
    const int in_place = wbuf && wbuf == (const void *)witness && !wready;
    s->w = in_place ? NULL
           : wbuf   ? wbuf
                    : cuzk__big_alloc((pk->base.n_vars ? pk->base.n_vars : 1) * sizeof(FRT));
    s->wb = in_place ? witness : (const uint8_t *)s->w;
    cuzk_err e = CUZK_OK;
    if (!s->wb) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "cannot allocate the witness (%" PRIu64 " bytes)",
                      (uint64_t)pk->base.n_vars * sizeof(FRT));
        goto fail;
    }
    wcheck_dev = wcheck_dev && wbuf == witness && wready && n_witness > 0;
    if (wcheck_dev) {
        /* The caller's page-locked witness goes to the device as it is (one DMA, ~10 ms at
         * 2^24; the host check beside it cost ~4 ms more); value 0 is checked here so that
         * its errors read as on the CPU. */
        const double tw = cuzk__now_ms();
        uint64_t l0[4];
        memcpy(l0, s->wb, 32);
        if (!FR_(limbs_lt_p)(l0)) {
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value 0 is not below r");
            goto fail;
        }
        wready(warg, 0, n_witness);
        s->st.witness_ms = cuzk__now_ms() - tw;
    } else {
        /* Copy and range-check on all threads: at 2^24 values (512 MiB, fresh pages) one
         * thread took a few hundred ms before the GPU could start. With wready, in blocks of
         * 32 MiB, each handed on once copied (its upload then overlaps the next block's
         * copy); else the whole witness as one block. */
        const double tw = cuzk__now_ms();
        const uint64_t blk = wready ? GT_WSTAGE_BLOCK : n_witness,
                       chunk = wready ? GT_WSTAGE_BLOCK / 32 : GT_WCOPY_CHUNK;
        uint64_t bad = UINT64_MAX;
        for (uint64_t lo = 0; lo < n_witness && bad == UINT64_MAX; lo += blk) {
            uint64_t hi = n_witness - lo > blk ? lo + blk : n_witness;
            GT_(wcopy_job) j = {s->w ? s->w + lo : NULL, witness + 32 * lo, hi - lo, chunk,
                                n_witness >= GT_WCOPY_STREAM_MIN, UINT64_MAX};
            cuzk_parallel_for((hi - lo + chunk - 1) / chunk, s->opts.nthreads, GT_(wcopy_chunk),
                              &j);
            bad = atomic_load(&j.first_bad);
            if (bad != UINT64_MAX)
                bad += lo;
            else if (wready)
                wready(warg, lo, hi);
        }
        s->st.witness_ms = cuzk__now_ms() - tw;
        if (bad != UINT64_MAX) {
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", bad);
            goto fail;
        }
        s->w_checked = 1;
    }
    uint64_t w0[4] = {0, 0, 0, 0};
    if (n_witness)
        memcpy(w0, s->wb, 32);
    if (n_witness == 0 || !(w0[0] == 1 && !w0[1] && !w0[2] && !w0[3])) {
        e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED, "witness value 0 must be 1 (the constant wire)");
        goto fail;
    }
    if (!defer_synth && (e = GT_(psynth)(s, eb)))
        goto fail;
    *out = s;
    return CUZK_OK;
fail:
    GT_(pfree)(s);
    return e;
}

static cuzk_err GT_(pstart)(GT_(pstate) **out, GT_(pk) *pk, const uint8_t *witness,
                            uint64_t n_witness, const cuzk_prove_opts *opts, cuzk_errbuf *eb)
{
    return GT_(pstart_ex)(out, pk, witness, n_witness, opts, 0, NULL, NULL, NULL, 0, eb);
}


/* G1 MSM k (0 A, 1 B1, 2 C, 3 H) with its fixed-base table when the key has one. */
static cuzk_err GT_(pk_g1_msm)(const GT_(pk) *pk, int k, G1J *out, const G1A *pts,
                            const uint8_t *sc, size_t n, const cuzk_msm_opts *o)
{
    if (pk->tab[k].t)
        return G1_(msm_tab)(out, pts, pk->tab[k].p, pk->tab[k].t, pk->tab[k].c, sc, n, o);
    return G1_(msm_ex)(out, pts, sc, n, o);
}

/* H and the G1 MSMs on CPU threads (synthesizing first when pstart deferred it). */
static cuzk_err GT_(pg1_cpu)(GT_(pstate) *s, cuzk_errbuf *eb)
{
    GT_(pk) *pk = s->pk;
    uint64_t N = pk->base.domain_size;
    unsigned nt = s->opts.nthreads;
    const uint8_t *ws = s->wb;
    cuzk_err e = GT_(psynth)(s, eb);
    if (e)
        return e;
    /* H in place: h lands in a (b, c are dead then and go at once; a after the H MSM). The
     * state is then unsynthesized again, so a retry of this stage synthesizes anew. */
    double t = cuzk__now_ms();
    e = FR_(groth16_h_inplace)(&pk->dom, s->a, s->b, s->c, nt);
    s->st.h_ms = cuzk__now_ms() - t;
    FRT *h = s->a;
    s->a = NULL;
    GT_(free_abc)(s);
    s->synthesized = 0;
    if (e) {
        free(h);
        return cuzk_errf(eb, e, "H computation failed");
    }
    if (s->consume)
        FR_(domain_free)(&pk->dom);
    t = cuzk__now_ms();
    cuzk_msm_opts mo = {nt, 0, 0}, mh = {nt, CUZK_MSM_SCALARS_MONT, 0};
    /* H's MSM first: h is freed before the witness MSMs run. */
    e = GT_(pk_g1_msm)(pk, 3, &s->ph, pk->h, (const uint8_t *)h, N, &mh);
    free(h);
    if (!e && s->consume)
        GT_(consume_set)(pk, 3);
    const uint64_t npc = (uint64_t)pk->base.n_public + 1;
    G1J *res[3] = {&s->pa, &s->pb1, &s->pc};
    const G1A *pts[3] = {pk->a, pk->b1, pk->c};
    for (int k = 0; k < 3 && !e; k++) {
        e = GT_(pk_g1_msm)(pk, k, res[k], pts[k], k < 2 ? ws : ws + 32 * npc,
                           k < 2 ? pk->base.n_vars : pk->base.n_vars - npc, &mo);
        if (!e && s->consume)
            GT_(consume_set)(pk, k);
    }
    if (e)
        e = cuzk_errf(eb, e, "G1 MSM failed");
    s->st.msm_g1_ms = cuzk__now_ms() - t;
    s->g1_done = !e;
    return e;
}

/* B in G2 on CPU threads. */
static cuzk_err GT_(pg2_cpu)(GT_(pstate) *s, cuzk_errbuf *eb)
{
    cuzk_err ce = GT_(wcheck)(s, eb);
    if (ce)
        return ce;
    double t = cuzk__now_ms();
    cuzk_msm_opts mo = {s->opts.nthreads, 0, 0};
    const GT_(pk) *pk = s->pk;
    cuzk_err e = pk->tab2.t ? G2_(msm_tab)(&s->pb2, pk->b2, pk->tab2.p, pk->tab2.t, pk->tab2.c,
                                           s->wb, pk->base.n_vars, &mo)
                            : G2_(msm_ex)(&s->pb2, pk->b2, s->wb, pk->base.n_vars, &mo);
    s->st.msm_g2_ms = cuzk__now_ms() - t;
    if (e)
        return cuzk_errf(eb, e, "G2 MSM failed");
    if (s->consume)
        GT_(consume_set)(s->pk, 4);
    s->g2_done = 1;
    return CUZK_OK;
}

/* What GT_(gpu_ensure) uploads: the G1 point sets unless GT_WANT_NO_G1, and the bits. */
#define GT_WANT_G2 1   /* B2 */
#define GT_WANT_ROWS 2 /* the A and B rows, for synthesis on the GPU */
#define GT_WANT_NO_G1 4 /* not the G1 sets (a device that runs only B in G2) */
#define GT_WANT_TABLES 8 /* fixed-base tables for the sets uploaded, when they fit */
/* A device's point sets as an initialiser of 5 pointers, B2 (the largest gain) first. */
#define GT_DEV_SETS(d) {(d)->g_b2, (d)->g_a, (d)->g_b1, (d)->g_c, (d)->g_h}

/* Fixed-base tables (gpu.h cuzk_gpu_points_tables) for the device's point sets that have
 * none, while each fits the device's free memory with room for the largest scratch a proof of
 * this key grows (cuzk_gpu_scratch_estimate) and a margin; a set that does not fit stays
 * plain (its MSMs are then as fast as without tables, nothing fails). */
static cuzk_err GT_(gpu_tables)(GT_(pk) *pk, int device, cuzk__pk_device *d,
                                cuzk_errbuf *eb)
{
    cuzk_gpu_curve gc = (cuzk_gpu_curve)GP_CURVE;
    if (d->ba_fitted) {
        /* The context's chunk took the memory the tables left. A set still without tables
         * that would pay gets that memory back, once (tables gain 10-13% per MSM, the larger
         * chunk ~1.4% of a proof); otherwise nothing is tried (the reserve below assumes the
         * environment's chunk). */
        if (d->ba_unfit || !cuzk__pk_device_no_tables(d, (cuzk_gpu_curve)GP_CURVE))
            return CUZK_OK;
        cuzk_err e = cuzk_gpu_ba_reset(d->ctx, eb);
        if (e)
            return e;
        d->ba_fitted = 0;
        d->ba_unfit = 1;
    }
    cuzk_gpu_points *sets[5] = GT_DEV_SETS(d);
    uint64_t est = cuzk_gpu_scratch_estimate(gc, pk->base.n_vars, pk->base.domain_size),
             have = cuzk_gpu_scratch_bytes(d->ctx);
    uint64_t reserve = (est > have ? est - have : 0) + (1ull << 30);
    for (int i = 0; i < 5; i++) {
        cuzk_gpu_points *p = sets[i];
        if (!p || cuzk_gpu_points_copies(p) > 1)
            continue;
        uint64_t fr = 0, tot = 0,
                 need = cuzk_gpu_tables_bytes(gc, i == 0 ? CUZK_GPU_G2 : CUZK_GPU_G1,
                                              cuzk_gpu_points_count(p), 0);
        cuzk_err e = cuzk_gpu_mem_info(device, &fr, &tot, eb);
        if (e)
            return e;
        if (fr < need + reserve)
            break; /* the rest stay plain */
        e = cuzk_gpu_points_tables(p, 0, eb);
        if (e == CUZK_NO_MEMORY) {
            eb->msg[0] = 0; /* the allocation failed after all (fragmentation): stay plain */
            break;
        }
        if (e)
            return e;
    }
    return CUZK_OK;
}

/* Set `bit` (CUZK_PK_SET_*) of n points after lead at infinity on device d: uploaded, or
 * streamed from host (d->streamed). */
static cuzk_err GT_(gpu_set)(cuzk__pk_device *d, unsigned bit, cuzk_gpu_group g, size_t lead,
                             const void *host, size_t n, cuzk_gpu_points **out, cuzk_errbuf *eb)
{
    const cuzk_gpu_curve gc = (cuzk_gpu_curve)GP_CURVE;
    if (d->streamed & bit) {
        const size_t cp = (size_t)(d->stream_chunk / cuzk_gpu_point_bytes(gc, g));
        return cuzk_gpu_points_host(d->ctx, gc, g, lead, host, n, cp ? cp : 1, out, eb);
    }
    return cuzk_gpu_points_upload_ex(d->ctx, gc, g, lead, host, n, out, eb);
}

/* The G1 point sets A, B1, C, H on device d (its context open). */
static cuzk_err GT_(gpu_ensure_g1)(GT_(pk) *pk, cuzk__pk_device *d, cuzk_errbuf *eb)
{
    cuzk_err e = CUZK_OK;
    const cuzk_gpu_group g1 = CUZK_GPU_G1;
    if (!d->g_a && (e = GT_(gpu_set)(d, CUZK_PK_SET_A, g1, 0, pk->a, pk->base.n_vars, &d->g_a, eb)))
        return e;
    if (!d->g_b1 &&
        (e = GT_(gpu_set)(d, CUZK_PK_SET_B1, g1, 0, pk->b1, pk->base.n_vars, &d->g_b1, eb)))
        return e;
    /* C's set is padded in front to the witness's length (see pg1_gpu_msm). */
    if (!d->g_c && (e = GT_(gpu_set)(d, CUZK_PK_SET_C, g1, pk->base.n_public + 1, pk->c,
                                     pk->base.n_vars - pk->base.n_public - 1, &d->g_c, eb)))
        return e;
    if (!d->g_h &&
        (e = GT_(gpu_set)(d, CUZK_PK_SET_H, g1, 0, pk->h, pk->base.domain_size, &d->g_h, eb)))
        return e;
    return CUZK_OK;
}

/* Uploads the key's point sets to `device` on first use (pk->base.dev[device].mu held); want:
 * GT_WANT_* bits. */
static cuzk_err GT_(gpu_ensure)(GT_(pk) *pk, int device, int want, cuzk_errbuf *eb)
{
    int want_g2 = want & GT_WANT_G2;
    cuzk_err e = CUZK_OK;
    cuzk_gpu_curve gc = (cuzk_gpu_curve)GP_CURVE;
    cuzk__pk_device *d = &pk->base.dev[device];
    if (!d->ctx && (e = cuzk_gpu_open(&d->ctx, device, eb)))
        return e;
    if (!(want & GT_WANT_NO_G1) && (e = GT_(gpu_ensure_g1)(pk, d, eb)))
        return e;
    if (want_g2 && !d->g_b2 &&
        (e = GT_(gpu_set)(d, CUZK_PK_SET_B2, CUZK_GPU_G2, 0, pk->b2, pk->base.n_vars, &d->g_b2, eb)))
        return e;
    if ((want & GT_WANT_ROWS) && !d->g_rows) {
        const uint64_t *const rp[2] = {pk->row_ptr[0], pk->row_ptr[1]};
        const void *const rec[2] = {pk->coef[0], pk->coef[1]};
        _Static_assert(sizeof(GT_(coef)) % 8 == 0 && offsetof(GT_(coef), value) == 8,
                       "GPU rows read a u32 signal at byte 0 and the value at byte 8");
        if ((e = cuzk_gpu_rows_upload(d->ctx, gc, pk->base.domain_size, pk->base.n_vars, rp, rec,
                                      sizeof(GT_(coef)), &d->g_rows, eb)))
            return e;
    }
    /* Last, so the rows and the plain sets are in place first. */
    if ((want & GT_WANT_TABLES) && (e = GT_(gpu_tables)(pk, device, d, eb)))
        return e;
    return CUZK_OK;
}

/* Uploads the key's point sets to `device` now (the engine stages preloaded keys at start). */
/* Bit d set when the G1 point sets are resident on device d. */
static uint32_t GT_(gpu_mask)(GT_(pk) *pk)
{
    return cuzk__pk_devices_mask(pk->base.dev);
}

static unsigned GT_(gpu_no_tables)(GT_(pk) *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return 0;
    pthread_mutex_lock(&pk->base.dev[device].mu);
    unsigned m = cuzk__pk_device_no_tables(&pk->base.dev[device], (cuzk_gpu_curve)GP_CURVE);
    pthread_mutex_unlock(&pk->base.dev[device].mu);
    return m;
}

/* parts: CUZK_PK_STAGE_* bits. */
static cuzk_err GT_(gpu_stage)(GT_(pk) *pk, int device, unsigned parts, cuzk_errbuf *eb)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    pthread_mutex_lock(&pk->base.dev[device].mu);
    cuzk_err e = GT_(gpu_ensure)(pk, device, (parts & CUZK_PK_STAGE_G2 ? GT_WANT_G2 : 0) |
                                                 (parts & CUZK_PK_STAGE_ROWS ? GT_WANT_ROWS : 0) |
                                                 (parts & CUZK_PK_STAGE_TABLES ? GT_WANT_TABLES
                                                                               : 0),
                                 eb);
    pthread_mutex_unlock(&pk->base.dev[device].mu);
    return e;
}

/* The same with the sets in `streamed` (CUZK_PK_SET_* bits) streamed from the key's host
 * arrays in chunks of about chunk_bytes, unless already staged. */
static cuzk_err GT_(gpu_stage_streamed)(GT_(pk) *pk, int device, unsigned parts,
                                        unsigned streamed, uint64_t chunk_bytes, cuzk_errbuf *eb)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    if (streamed && chunk_bytes == 0)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "streamed point sets: chunks of 0 bytes");
    pthread_mutex_lock(&pk->base.dev[device].mu);
    pk->base.dev[device].streamed = streamed;
    pk->base.dev[device].stream_chunk = chunk_bytes;
    pthread_mutex_unlock(&pk->base.dev[device].mu);
    return GT_(gpu_stage)(pk, device, parts, eb);
}

static unsigned GT_(gpu_streamed)(GT_(pk) *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return 0;
    cuzk__pk_device *d = &pk->base.dev[device];
    pthread_mutex_lock(&d->mu);
    const cuzk_gpu_points *sets[5] = GT_DEV_SETS(d);
    static const unsigned bit[5] = {CUZK_PK_SET_B2, CUZK_PK_SET_A, CUZK_PK_SET_B1,
                                    CUZK_PK_SET_C, CUZK_PK_SET_H};
    unsigned m = 0;
    for (int i = 0; i < 5; i++)
        if (sets[i] && cuzk_gpu_points_streamed(sets[i]))
            m |= bit[i];
    pthread_mutex_unlock(&d->mu);
    return m;
}

/* Frees the key's point sets and its own context on `device` (the engine's GPU tier gives the
 * memory back; the caller guarantees no stage uses the key on that device meanwhile). The
 * next stage or proof there uploads them again. */
static void GT_(gpu_unstage)(GT_(pk) *pk, int device)
{
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return;
    cuzk__pk_device *d = &pk->base.dev[device];
    pthread_mutex_lock(&d->mu);
    cuzk_gpu_points_free(d->g_a);
    cuzk_gpu_points_free(d->g_b1);
    cuzk_gpu_points_free(d->g_c);
    cuzk_gpu_points_free(d->g_h);
    cuzk_gpu_points_free(d->g_b2);
    cuzk_gpu_rows_free(d->g_rows);
    if (d->wpin) /* not in use: no cuzk_prove runs on the key meanwhile (the caller's promise) */
        cuzk_gpu_host_free(d->ctx, d->wpin);
    d->wpin = NULL;
    d->wpin_len = 0;
    cuzk_gpu_close(d->ctx);
    d->g_a = d->g_b1 = d->g_c = d->g_h = d->g_b2 = NULL;
    d->g_rows = NULL;
    d->ctx = NULL;
    d->ba_fitted = d->ba_unfit = 0;
    d->streamed = 0;
    pthread_mutex_unlock(&d->mu);
}

/* The host arrays GT_(gpu_ensure) uploads, in its order (a, b1, c, h, then b2, then the
 * rows: A's and B's row offsets, A's and B's terms), with their byte lengths: what staging
 * reads (so what is worth page-locking) and, since a device copy has the host layout (points
 * as they are, rows as cuzk_gpu_rows_upload copies them), what a stage occupies on the
 * device. Returns the count (CUZK_PK_GPU_ARRAYS). */
static size_t GT_(gpu_arrays)(GT_(pk) *pk, void *ptr[CUZK_PK_GPU_ARRAYS],
                              size_t len[CUZK_PK_GPU_ARRAYS])
{
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

/* Makes the key resident on `device` and picks the context to compute with: the caller's
 * (which must be open on `device`; the device lock is then dropped again: the points are
 * read-only) or the key's own (then the lock stays held until GT_(gpu_release)). */
/* up_ms: where the upload time goes (s->st.gpu_upload_ms, or s->g2_upload_ms for a B-in-G2
 * stage that may run beside the G1 stage). */
static cuzk_err GT_(gpu_acquire)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, int want,
                                 double *up_ms, cuzk_gpu_ctx **use, cuzk_errbuf *eb)
{
    GT_(pk) *pk = s->pk;
    if (device < 0 || device >= CUZK_MAX_DEVICES)
        return cuzk_errf(eb, CUZK_NO_DEVICE, "GPU device %d is out of range (0..%d)", device,
                         CUZK_MAX_DEVICES - 1);
    pthread_mutex_lock(&pk->base.dev[device].mu);
    double t = cuzk__now_ms();
    if (s->opts.gpu_tables)
        want |= GT_WANT_TABLES;
    cuzk_err e = GT_(gpu_ensure)(pk, device, want, eb);
    *up_ms += cuzk__now_ms() - t;
    if (!e) {
        const cuzk_gpu_points *sets[5] = GT_DEV_SETS(&pk->base.dev[device]);
        for (int i = 0; i < 5; i++)
            if (sets[i] && cuzk_gpu_points_copies(sets[i]) > s->st.gpu_tables)
                s->st.gpu_tables = cuzk_gpu_points_copies(sets[i]);
        if (s->opts.gpu_tables)
            s->st.gpu_no_tables |=
                cuzk__pk_device_no_tables(&pk->base.dev[device], (cuzk_gpu_curve)GP_CURVE);
    }
    if (!e && !ctx && !pk->base.dev[device].ba_fitted) {
        /* The key's own context proves alone on the device (the daemon's workers bring their
         * own, whose chunk the memory budget counts): its batch-affine chunk may take what the
         * point sets and their tables left (gpu.h cuzk_gpu_ba_fit). */
        e = cuzk_gpu_ba_fit(pk->base.dev[device].ctx, (cuzk_gpu_curve)GP_CURVE, pk->base.n_vars,
                            pk->base.domain_size, eb);
        pk->base.dev[device].ba_fitted = !e;
    }
    if (!e) {
        uint64_t chunk = 0;
        int quads = 0;
        cuzk_gpu_ba_setting(ctx ? ctx : pk->base.dev[device].ctx, &chunk, &quads);
        if (chunk > s->st.gpu_ba_chunk)
            s->st.gpu_ba_chunk = chunk;
        if (quads > s->st.gpu_ba_quads)
            s->st.gpu_ba_quads = quads;
    }
    if (e || ctx)
        pthread_mutex_unlock(&pk->base.dev[device].mu);
    *use = ctx ? ctx : pk->base.dev[device].ctx;
    return e;
}

static void GT_(gpu_release)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx)
{
    if (!ctx)
        pthread_mutex_unlock(&s->pk->base.dev[device].mu);
}

/* The A, B1, C MSMs on the acquired context g of `device` (they need only the witness, so
 * they may run while the CPU synthesizes a, b, c), and B2 too when with_g2 is set and G2 is
 * not done yet. A, B1 and B2 share the witness as scalars: within one hold of the context the
 * later ones reuse the first one's upload and sorted digits (CUZK_GPU_SCALARS_SAME). So does
 * C: its scalars are a suffix of the witness, and its device set has n_public + 1 points at
 * infinity in front (gpu_ensure), so it is an MSM over the whole witness whose first terms
 * vanish. The GPU writes Jacobian points in exactly the layout of G1J / G2J (X, Y, Z limbs,
 * Fp2 as c0, c1); they are trusted only once they are points of the curve (a wrong one would
 * also fail self-verification; this names the stage). */
static cuzk_err GT_(g1_msms_on)(GT_(pstate) *s, int device, cuzk_gpu_ctx *g, int with_g2,
                                cuzk_errbuf *eb)
{
    GT_(pk) *pk = s->pk;
    const uint8_t *ws = (const uint8_t *)s->w;
    cuzk__pk_device *d = &pk->base.dev[device];
    with_g2 = with_g2 && !s->g2_done;
    G1J pa, pb1, pc;
    G2J pb2;
    double t = cuzk__now_ms(), t2 = 0;
    /* A reads the witness where GT_(prove) queued it while copying it, if it did so on this
     * context (cuzk_gpu_msm checks that the upload it finds is of this buffer). */
    unsigned fa = s->w_staged && device == 0 && g == pk->base.dev[0].ctx ? CUZK_GPU_SCALARS_SAME : 0;
    s->w_staged = 0;
    /* Not range-checked on the host (GT_(prove) left it to the device): A's MSM checks it. */
    if (!s->w_checked)
        fa |= CUZK_GPU_SCALARS_CHECK;
    cuzk_err e = cuzk_gpu_msm(g, d->g_a, 0, pk->base.n_vars, ws, fa, (uint64_t *)&pa, eb);
    if (e == CUZK_NON_CANONICAL && (fa & CUZK_GPU_SCALARS_CHECK) &&
        cuzk_gpu_bad_scalar(g) < pk->base.n_vars)
        e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r",
                      cuzk_gpu_bad_scalar(g));
    else if (!e)
        s->w_checked = 1;
    if (!e)
        e = cuzk_gpu_msm(g, d->g_b1, 0, pk->base.n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pb1,
                         eb);
    if (!e && with_g2) {
        double t1 = cuzk__now_ms();
        e = cuzk_gpu_msm(g, d->g_b2, 0, pk->base.n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pb2,
                         eb);
        t2 = cuzk__now_ms() - t1;
    }
    if (!e)
        e = cuzk_gpu_msm(g, d->g_c, 0, pk->base.n_vars, ws, CUZK_GPU_SCALARS_SAME, (uint64_t *)&pc,
                         eb);
    s->st.msm_g1_ms = cuzk__now_ms() - t - t2;
    if (!e && (!G1_(is_on_curve)(&pa) || !G1_(is_on_curve)(&pb1) || !G1_(is_on_curve)(&pc)))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: a G1 MSM result is not on the curve", device);
    if (!e && with_g2 && !G2_(is_on_curve)(&pb2))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the G2 MSM result is not on the curve", device);
    if (e)
        return e;
    s->pa = pa;
    s->pb1 = pb1;
    s->pc = pc;
    s->g1_msm_done = 1;
    if (with_g2) {
        s->pb2 = pb2;
        s->st.msm_g2_ms = t2;
        s->g2_done = 1;
    }
    return CUZK_OK;
}

/* H and the H MSM on the acquired context g; frees the host's a, b, c. When the state is
 * synthesized (the CPU made a, b, c) they are uploaded; else they are synthesized on the
 * device from the key's rows and the witness, and never exist on the host. The witness is
 * then read from A's upload when w_same (g1_msms_on ran just before in the same hold of g),
 * else uploaded again. */
static cuzk_err GT_(h_on)(GT_(pstate) *s, int device, cuzk_gpu_ctx *g, int w_same,
                          cuzk_errbuf *eb)
{
    GT_(pk) *pk = s->pk;
    int from_witness = !s->synthesized;
    G1J ph;
    cuzk_err e = GT_(wcheck)(s, eb); /* synthesis reads w (A's MSM checked it, if it ran) */
    if (e)
        return e;
    double t = cuzk__now_ms();
    if (from_witness) {
        e = cuzk_gpu_h_witness(g, pk->base.dev[device].g_rows, (int)pk->base.log_n, s->w,
                               w_same ? CUZK_GPU_SCALARS_SAME : 0, NULL, pk->base.dev[device].g_h, 0,
                               (uint64_t *)&ph, eb);
        s->st.synth_ms = cuzk_gpu_last_synth_ms(g);
    } else {
        e = cuzk_gpu_h(g, (cuzk_gpu_curve)GP_CURVE, (int)pk->base.log_n, s->a, s->b, s->c, NULL,
                       pk->base.dev[device].g_h, 0, (uint64_t *)&ph, eb);
    }
    s->st.h_ms = cuzk__now_ms() - t - (from_witness ? s->st.synth_ms : 0);
    if (!e && !G1_(is_on_curve)(&ph))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the H MSM result is not on the curve", device);
    if (e)
        return e;
    s->ph = ph;
    GT_(free_abc)(s);
    return CUZK_OK;
}

/* The witness MSMs alone (g1_msms_on in a hold of its own): the command line's --synth cpu
 * path runs them while the CPU synthesizes, then pg1_gpu_h. */
static cuzk_err GT_(pg1_gpu_msm)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, int with_g2,
                                 cuzk_errbuf *eb)
{
    if (s->g1_msm_done)
        return CUZK_OK;
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = GT_(gpu_acquire)(s, device, ctx, with_g2 && !s->g2_done ? GT_WANT_G2 : 0,
                                  &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    e = GT_(g1_msms_on)(s, device, g, with_g2, eb);
    GT_(gpu_release)(s, device, ctx);
    return e;
}

/* H and the H MSM from the host's a, b, c (psynth ran) in a hold of its own. */
static cuzk_err GT_(pg1_gpu_h)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    if (!s->synthesized)
        return cuzk_errf(eb, CUZK_INTERNAL, "pg1_gpu_h before synthesis");
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = GT_(gpu_acquire)(s, device, ctx, 0, &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    e = GT_(h_on)(s, device, g, 0, eb);
    GT_(gpu_release)(s, device, ctx);
    return e;
}

/* The whole G1 stage on a GPU in one hold of the context (so nothing else runs on it between
 * the MSMs and H; the engine's GPU stage and the command line's path): the witness MSMs
 * unless an earlier attempt did them, B in G2 too when with_g2, then H, synthesizing on the
 * device unless the CPU did (the key's rows are staged for it). */
static cuzk_err GT_(pg1_gpu_ex)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, int with_g2,
                                cuzk_errbuf *eb)
{
    int want = (with_g2 && !s->g2_done ? GT_WANT_G2 : 0) | (s->synthesized ? 0 : GT_WANT_ROWS);
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = GT_(gpu_acquire)(s, device, ctx, want, &s->st.gpu_upload_ms, &g, eb);
    if (e)
        return e;
    int w_same = 0;
    if (!s->g1_msm_done)
        w_same = !(e = GT_(g1_msms_on)(s, device, g, with_g2, eb));
    if (!e)
        e = GT_(h_on)(s, device, g, w_same, eb);
    GT_(gpu_release)(s, device, ctx);
    if (e)
        return e;
    s->g1_done = 1;
    s->st.used_gpu = 1;
    return CUZK_OK;
}

static cuzk_err GT_(pg1_gpu)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    return GT_(pg1_gpu_ex)(s, device, ctx, 0, eb);
}

/* H, the G1 MSMs and B in G2 on one GPU, B2 sharing A's scalar upload and sort. */
static cuzk_err GT_(pg12_gpu)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    return GT_(pg1_gpu_ex)(s, device, ctx, 1, eb);
}

static cuzk_err GT_(pg12_cpu)(GT_(pstate) *s, cuzk_errbuf *eb)
{
    cuzk_err e = GT_(pg1_cpu)(s, eb);
    if (!e && !s->g2_done)
        e = GT_(pg2_cpu)(s, eb);
    return e;
}

static int GT_(pg2_is_done)(const GT_(pstate) *s) { return s->g2_done; }

/* B in G2 on a GPU; want: GT_WANT_G2, with GT_WANT_NO_G1 on a device that runs only this. */
static cuzk_err GT_(pg2_gpu_ex)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, int want,
                                cuzk_errbuf *eb)
{
    GT_(pk) *pk = s->pk;
    cuzk_gpu_ctx *g = NULL;
    cuzk_err e = GT_(gpu_acquire)(s, device, ctx, want, &s->g2_upload_ms, &g, eb);
    if (e)
        return e;
    G2J pb2;
    double t = cuzk__now_ms();
    e = cuzk_gpu_msm(g, pk->base.dev[device].g_b2, 0, pk->base.n_vars, s->w, 0, (uint64_t *)&pb2, eb);
    s->st.msm_g2_ms = cuzk__now_ms() - t;
    GT_(gpu_release)(s, device, ctx);
    if (!e && !G2_(is_on_curve)(&pb2))
        e = cuzk_errf(eb, CUZK_GPU_FAULT, "GPU %d: the G2 MSM result is not on the curve", device);
    if (e)
        return e;
    s->pb2 = pb2;
    s->g2_done = 1;
    return CUZK_OK;
}

static cuzk_err GT_(pg2_gpu)(GT_(pstate) *s, int device, cuzk_gpu_ctx *ctx, cuzk_errbuf *eb)
{
    return GT_(pg2_gpu_ex)(s, device, ctx, GT_WANT_G2, eb);
}

static void GT_(pprep)(GT_(pstate) *s)
{
    if (s->pre.ready)
        return;
    const GT_(pk) *pk = s->pk;
    GT_(rand_scalar)(&s->pre.r, s->opts.zero_rs);
    GT_(rand_scalar)(&s->pre.s, s->opts.zero_rs);
    FR_(mul)(&s->pre.rs, &s->pre.r, &s->pre.s);
    FR_(neg)(&s->pre.rs, &s->pre.rs);
    G1J delta1;
    G2J delta2;
    G1_(from_affine)(&delta1, &pk->delta1);
    G2_(from_affine)(&delta2, &pk->delta2);
    GT_(g1_mul_fr)(&s->pre.rd1, &delta1, &s->pre.r);
    GT_(g1_mul_fr)(&s->pre.sd1, &delta1, &s->pre.s);
    GT_(g1_mul_fr)(&s->pre.rsd1, &delta1, &s->pre.rs);
    GT_(g2_mul_fr)(&s->pre.sd2, &delta2, &s->pre.s);
    if (!s->opts.no_verify)
        GT_(verify_fixed)(&s->pre.ml, &pk->alpha1, &pk->beta2, &pk->gamma2, pk->ic, s->wb + 32,
                          pk->base.n_public);
    s->pre.ready = 1;
}

static void *GT_(pprep_thread)(void *arg)
{
    GT_(pprep)(arg);
    return NULL;
}

static cuzk_err GT_(pfinish)(GT_(pstate) *s, cuzk_proof *proof, cuzk_errbuf *eb)
{
    s->st.gpu_upload_ms += s->g2_upload_ms; /* B in G2's, kept apart while it could run beside */
    s->g2_upload_ms = 0;
    GT_(pk) *pk = s->pk;
    if (!s->g1_done || !s->g2_done)
        return cuzk_errf(eb, CUZK_INTERNAL, "finish called before the %s stage ended",
                         s->g1_done ? "G2" : "G1");
    double t = cuzk__now_ms();
    GT_(pprep)(s); /* done already when a thread ran it beside the MSMs */
    G1J alpha, beta1, tmp, A, B1, C;
    G2J beta2, B2;
    G1_(from_affine)(&alpha, &pk->alpha1);
    G1_(from_affine)(&beta1, &pk->beta1);
    G2_(from_affine)(&beta2, &pk->beta2);
    /* pi_a = alpha + A + r delta1 */
    G1_(add)(&A, &alpha, &s->pa);
    G1_(add)(&A, &A, &s->pre.rd1);
    /* pi_b = beta2 + B2 + s delta2; b1 = beta1 + B1 + s delta1 */
    G2_(add)(&B2, &beta2, &s->pb2);
    G2_(add)(&B2, &B2, &s->pre.sd2);
    G1_(add)(&B1, &beta1, &s->pb1);
    G1_(add)(&B1, &B1, &s->pre.sd1);
    /* pi_c = C + H + s pi_a + r b1 - r s delta1 */
    G1_(add)(&C, &s->pc, &s->ph);
    GT_(g1_mul_fr)(&tmp, &A, &s->pre.s);
    G1_(add)(&C, &C, &tmp);
    GT_(g1_mul_fr)(&tmp, &B1, &s->pre.r);
    G1_(add)(&C, &C, &tmp);
    G1_(add)(&C, &C, &s->pre.rsd1);
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

    cuzk_err e = CUZK_OK;
    if (!s->opts.no_verify) {
        t = cuzk__now_ms();
        int ok = GT_(verify_rest)(&s->pre.ml, &pk->delta2, &aa, &ba, &ca);
        s->st.verify_ms = cuzk__now_ms() - t;
        if (!ok)
            e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED,
                          "the proof failed self-verification: the witness does not satisfy the "
                          "circuit (give the .r1cs to find the first failing constraint)");
    }
    GT_(wfree)(s);
    s->st.total_ms = cuzk__now_ms() - s->t0;
    return e;
}

/* The B-in-G2 MSM beside the G1 work: on CPU threads (--g2 cpu, device -1) or on another GPU
 * than the G1 work's (which needs only B2's points there). */
typedef struct {
    GT_(pstate) *s;
    int device;
    cuzk_err err;
    cuzk_errbuf eb;
} GT_(g2_job);

static void *GT_(g2_thread)(void *arg)
{
    GT_(g2_job) *j = arg;
    j->err = j->device < 0 ? GT_(pg2_cpu)(j->s, &j->eb)
                           : GT_(pg2_gpu_ex)(j->s, j->device, NULL, GT_WANT_G2 | GT_WANT_NO_G1,
                                             &j->eb);
    return NULL;
}

/* The witness-only GPU MSMs of the command line's path (device 0, the key's context). */
typedef struct {
    GT_(pstate) *s;
    int g2;
    cuzk_err err;
    cuzk_errbuf eb;
} GT_(gpu_msm_job);

static void *GT_(gpu_msm_thread)(void *arg)
{
    GT_(gpu_msm_job) *j = arg;
    j->err = GT_(pg1_gpu_msm)(j->s, 0, NULL, j->g2, &j->eb);
    return NULL;
}


/* GT_(prove)'s upload of the witness block by block while pstart copies it into the
 * page-locked buffer (cuzk_gpu_scalars_stage on device 0's key context, whose lock is held);
 * ok drops on the first failure (the first MSM then uploads the witness itself). */
typedef struct {
    cuzk_gpu_ctx *ctx;
    const void *w;
    uint64_t n, done;
    int ok;
    int wait; /* once the last range is queued, wait for the copies (the witness time is then
               * the time until the device has it) */
} GT_(wstage);

static void GT_(wstage_block)(void *arg, uint64_t lo, uint64_t hi)
{
    GT_(wstage) *ws = arg;
    cuzk_errbuf eb = {{0}};
    if (ws->ok && cuzk_gpu_scalars_stage(ws->ctx, ws->w, ws->n, lo, hi, &eb) == CUZK_OK &&
        (!ws->wait || hi < ws->n || cuzk_gpu_sync(ws->ctx, &eb) == CUZK_OK))
        ws->done = hi;
    else
        ws->ok = 0;
}


/* The whole proof in one call (the command line's path): on the CPU, or H and the G1 MSMs on
 * device 0 with B in G2 on the GPU after them or on CPU threads beside them. When the GPU
 * fails and fallback is set, the G1 stage (and G2 if it was on the GPU) is redone on the CPU
 * from the kept a, b, c. */
static cuzk_err GT_(prove)(cuzk_proof *proof, GT_(pk) *pk, const uint8_t *witness,
                           uint64_t n_witness, const cuzk_prove_opts *opts, int use_gpu,
                           int fallback, cuzk_prove_stats *st, cuzk_errbuf *eb)
{
    GT_(pstate) *s;
    /* Everything on the GPU: w goes into the page-locked buffer, so A's MSM uploads it by
     * DMA (at 2^24, 512 MiB: ~38 ms through the staging buffers from pageable memory). A
     * witness the caller holds in page-locked memory (cuzk_witness_buf_alloc) is that buffer
     * as it is (borrowed: pstart checks it, or leaves that to the device, below). */
    const int gpu_all = use_gpu && !opts->synth_on_cpu && n_witness == pk->base.n_vars && n_witness;
    const int wcaller = gpu_all && cuzk_gpu_host_is_pinned(witness);
    void *wown = gpu_all && !wcaller
                     ? cuzk__pk_device_wpin_take(&pk->base.dev[0], 0, pk->base.n_vars * sizeof(FRT))
                     : NULL;
    void *wpin = wcaller ? (void *)witness : wown; /* read only when it is the caller's */
    /* ... and while it is copied there, block by block, its upload runs (the copy and the DMA
     * each take ~10 ms at 2^24; overlapped, the GPU starts ~10 ms sooner). The caller's
     * buffer is uploaded as it is and range-checked by A's MSM on the device, when nothing
     * on the CPU reads it meanwhile (B in G2 on a GPU too; CPU stages check it first). */
    const int wdev = wcaller && opts->g2_on_gpu;
    GT_(wstage) ws = {NULL, wpin, pk->base.n_vars, 0, 0, wdev};
    if (wpin) {
        pthread_mutex_lock(&pk->base.dev[0].mu);
        cuzk_errbuf oeb = {{0}};
        if (!pk->base.dev[0].ctx) /* wpin_take opens it; the caller's buffer needs it too */
            cuzk_gpu_open(&pk->base.dev[0].ctx, 0, &oeb);
        ws.ctx = pk->base.dev[0].ctx;
        ws.ok = ws.ctx != NULL;
    }
    /* On the CPU the witness outlives the proof: read in place, never copied. */
    void *wbuf = use_gpu ? wpin : (void *)witness;
    /* A consuming proof synthesizes in pg1_cpu, where the coefficients are then freed. */
    const int consume = !use_gpu && opts->consume_key;
    cuzk_err e = GT_(pstart_ex)(&s, pk, witness, n_witness, opts, use_gpu || consume, wbuf,
                                ws.ok ? GT_(wstage_block) : NULL, &ws, wdev && ws.ok, eb);
    if (wpin)
        pthread_mutex_unlock(&pk->base.dev[0].mu);
    if (e) {
        cuzk__pk_device_wpin_give(&pk->base.dev[0], wown);
        return e;
    }
    if (consume) {
        s->consume = 1;
        pk->base.consumed = 1;
    }
    s->w_staged = ws.ok && ws.done == pk->base.n_vars;
    /* The blinding multiples of delta and the verification's fixed Miller loop on a thread
     * beside the GPU work (~1 ms that pfinish would otherwise spend after the last MSM). */
    pthread_t ppt;
    const int pp_started = use_gpu && pthread_create(&ppt, NULL, GT_(pprep_thread), s) == 0;
    if (use_gpu) {
        int g2_gpu = opts->g2_on_gpu;
        /* Where B in G2 runs: CPU threads (-1), device 0 with the rest, or another device
         * beside device 0's work (g2_device). */
        int g2dev = g2_gpu ? opts->g2_device : -1;
        GT_(g2_job) job;
        memset(&job, 0, sizeof job);
        job.s = s;
        job.device = g2dev;
        pthread_t tid;
        int started = 0;
        if (g2dev > 0 && !(started = pthread_create(&tid, NULL, GT_(g2_thread), &job) == 0))
            GT_(g2_thread)(&job); /* no thread: run it here, before the other work */
        if (!opts->synth_on_cpu) {
            /* Everything on the GPU: the A, B1, C (and B2) MSMs upload the witness once, and
             * synthesis, H and the H MSM read it there. With --g2 cpu, B in G2 runs on CPU
             * threads beside all of it (the CPU has nothing else to do). */
            if (g2dev < 0 && !(started = pthread_create(&tid, NULL, GT_(g2_thread), &job) == 0))
                GT_(g2_thread)(&job); /* no thread: run it here, before the GPU work */
            e = GT_(pg1_gpu_ex)(s, 0, NULL, g2dev == 0, eb);
        } else {
            /* The A, B1, C MSMs (and B2 with --g2 gpu) need only the witness: the GPU runs
             * them while the CPU synthesizes a, b, c; then H on the GPU while the CPU runs B
             * in G2 (--g2 cpu). */
            GT_(gpu_msm_job) mj;
            memset(&mj, 0, sizeof mj);
            mj.s = s;
            mj.g2 = g2dev == 0;
            pthread_t mt;
            int mstarted = pthread_create(&mt, NULL, GT_(gpu_msm_thread), &mj) == 0;
            cuzk_errbuf seb = {{0}};
            cuzk_err se = GT_(psynth)(s, &seb);
            if (mstarted)
                pthread_join(mt, NULL);
            else
                GT_(gpu_msm_thread)(&mj); /* no thread: after synthesis */
            if (se) {
                /* out of host memory: not a GPU fault, no fallback */
                if (started)
                    pthread_join(tid, NULL);
                if (pp_started)
                    pthread_join(ppt, NULL);
                GT_(pfree)(s);
                cuzk__pk_device_wpin_give(&pk->base.dev[0], wown);
                return cuzk_errf(eb, se, "%s", seb.msg);
            }
            if (g2dev < 0 && !(started = pthread_create(&tid, NULL, GT_(g2_thread), &job) == 0))
                GT_(g2_thread)(&job); /* no thread: run it here, before the GPU work */
            e = mj.err;
            if (e)
                *eb = mj.eb;
            else if (!(e = GT_(pg1_gpu_h)(s, 0, NULL, eb))) {
                s->g1_done = 1;
                s->st.used_gpu = 1;
            }
        }
        if (started)
            pthread_join(tid, NULL);
        if (e && fallback && (e == CUZK_GPU_FAULT || e == CUZK_NO_DEVICE)) {
            /* AUTO: a GPU fault costs time, never the proof. */
            snprintf(s->st.gpu_error, sizeof s->st.gpu_error, "%.255s", eb ? eb->msg : "");
            s->st.gpu_fallback = 1;
            s->st.used_gpu = 0;
            e = CUZK_OK;
            if (!s->g1_done)
                e = GT_(pg1_cpu)(s, eb); /* synthesizes first if the device was to */
        }
        if (!e && job.err && job.device >= 0 && fallback &&
            (job.err == CUZK_GPU_FAULT || job.err == CUZK_NO_DEVICE)) {
            /* B in G2 failed on its own GPU: the CPU redoes it below. */
            snprintf(s->st.gpu_error, sizeof s->st.gpu_error, "%.255s", job.eb.msg);
            s->st.gpu_fallback = 1;
            job.err = CUZK_OK;
        }
        if (!e && job.err)
            e = cuzk_errf(eb, job.err, "%s", job.eb.msg);
        if (!e && !s->g2_done && g2_gpu && fallback)
            e = GT_(pg2_cpu)(s, eb);
    } else {
        if (!(e = GT_(pg1_cpu)(s, eb)))
            e = GT_(pg2_cpu)(s, eb);
    }
    if (pp_started)
        pthread_join(ppt, NULL);
    if (!e)
        e = GT_(pfinish)(s, proof, eb);
    *st = s->st;
    GT_(pfree)(s);
    cuzk__pk_device_wpin_give(&pk->base.dev[0], wown);
    return e;
}
