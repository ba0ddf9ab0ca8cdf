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
    uint32_t n_vars, n_public, domain_size, log_n;
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
    /* GPU residency: the point sets uploaded once, on the first GPU proof, and kept until the
     * key is freed. gpu_mu serialises use of the context (one thread at a time). */
    pthread_mutex_t gpu_mu;
    cuzk_gpu_ctx *gpu;
    cuzk_gpu_points *g_a, *g_b1, *g_c, *g_h, *g_b2;
} GT_(pk);

static void GT_(pk_free)(GT_(pk) *pk)
{
    if (!pk)
        return;
    cuzk_gpu_points_free(pk->g_a);
    cuzk_gpu_points_free(pk->g_b1);
    cuzk_gpu_points_free(pk->g_c);
    cuzk_gpu_points_free(pk->g_h);
    cuzk_gpu_points_free(pk->g_b2);
    cuzk_gpu_close(pk->gpu);
    pthread_mutex_destroy(&pk->gpu_mu);
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
}

static cuzk_err GT_(decode_points)(void **out, const uint8_t *src, size_t n, int g2,
                                   const char *section, const char *file, unsigned nthreads,
                                   cuzk_errbuf *eb)
{
    size_t sz = g2 ? sizeof(G2A) : sizeof(G1A);
    *out = NULL;
    void *dst = malloc(n ? n * sz : 1);
    if (!dst)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: cannot allocate %zu bytes for the %s points",
                         file, n * sz, section);
    GT_(decode_job) j = {src, dst, n, g2, section, file, CUZK_OK, 0, {{0}}, PTHREAD_MUTEX_INITIALIZER};
    cuzk_parallel_for((n + GT_DECODE_CHUNK - 1) / GT_DECODE_CHUNK, nthreads, GT_(decode_chunk), &j);
    pthread_mutex_destroy(&j.mu);
    if (j.err) {
        free(dst);
        return cuzk_errf(eb, j.err, "%s: %s point %zu: %s", file, section, j.bad_index, j.eb.msg);
    }
    *out = dst;
    return CUZK_OK;
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
    pthread_mutex_init(&pk->gpu_mu, NULL);
    pk->n_vars = zk->n_vars;
    pk->n_public = zk->n_public;
    pk->domain_size = zk->domain_size;
    pk->log_n = zk->log_domain_size;
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
        e = GT_(decode_points)(&p, zk->src, n, g2, what, file, nthreads, eb);                  \
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
    uint64_t N = pk->domain_size;
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
            }
        }
        free(fill[0]);
        free(fill[1]);
    }
    if (!e && (e = FR_(domain_init)(&pk->dom, pk->log_n)))
        e = cuzk_errf(eb, e, "%s: cannot set up the evaluation domain of size 2^%u", file, pk->log_n);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    pk->bytes = sizeof *pk + (zk->n_ic + zk->n_a + zk->n_b1 + zk->n_c + zk->n_h) * sizeof(G1A) +
                zk->n_b2 * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * (N + 1) * sizeof(uint64_t) + N * sizeof(FRT);
    *out = pk;
    return CUZK_OK;
}

/* ------------------------------------------------------------------ synthesis */

typedef struct {
    const GT_(pk) *pk;
    const FRT *w;
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
        FRT acc[2], t;
        for (int m = 0; m < 2; m++) {
            FR_(set_zero)(&acc[m]);
            const GT_(coef) *k = j->pk->coef[m];
            for (uint64_t i = j->pk->row_ptr[m][row]; i < j->pk->row_ptr[m][row + 1]; i++) {
                /* (coef R^2) * w / R = Montgomery form of coef * w. */
                FR_(mul)(&t, &k[i].value, &j->w[k[i].signal]);
                FR_(add)(&acc[m], &acc[m], &t);
            }
        }
        j->a[row] = acc[0];
        j->b[row] = acc[1];
        FR_(mul)(&j->c[row], &acc[0], &acc[1]);
    }
}

/* a, b, c: domain_size elements each; w: n_vars plain values (< r, checked by the caller). */
static void GT_(synthesize)(const GT_(pk) *pk, const FRT *w, FRT *a, FRT *b, FRT *c, unsigned nthreads)
{
    GT_(synth_job) j = {pk, w, a, b, c, pk->domain_size};
    cuzk_parallel_for((pk->domain_size + GT_SYNTH_CHUNK - 1) / GT_SYNTH_CHUNK, nthreads,
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
static int GT_(verify_points)(const G1A *alpha1, const G2A *beta2, const G2A *gamma2,
                              const G2A *delta2, const G1A *ic, const FRT *pub, uint64_t n_pub,
                              const G1A *A, const G2A *B, const G1A *C)
{
    G1J acc, t, icj;
    G1_(from_affine)(&acc, &ic[0]);
    for (uint64_t i = 0; i < n_pub; i++) {
        G1_(from_affine)(&icj, &ic[i + 1]);
        G1_(mul_limbs)(&t, &icj, pub[i].l, 4);
        G1_(add)(&acc, &acc, &t);
    }
    G1A P[4];
    G2A Q[4];
    G1_(affine_neg)(&P[0], A);
    Q[0] = *B;
    P[1] = *alpha1;
    Q[1] = *beta2;
    G1_(to_affine)(&P[2], &acc);
    Q[2] = *gamma2;
    P[3] = *C;
    Q[3] = *delta2;
    return GT_(multi_pairing_is_one)(P, Q, 4);
}

/* ------------------------------------------------------------------ GPU stages */

/* The B-in-G2 MSM on CPU threads beside the GPU's G1 work (--g2 cpu). */
typedef struct {
    const GT_(pk) *pk;
    const uint8_t *ws;
    unsigned nthreads;
    G2J out;
    cuzk_err err;
    double ms;
} GT_(g2_job);

static void *GT_(g2_thread)(void *arg)
{
    GT_(g2_job) *j = arg;
    double t = cuzk__now_ms();
    cuzk_msm_opts mo = {j->nthreads, 0, 0};
    j->err = G2_(msm_ex)(&j->out, j->pk->b2, j->ws, j->pk->n_vars, &mo);
    j->ms = cuzk__now_ms() - t;
    return NULL;
}

/* Uploads the key's point sets to device 0 on first use (pk->gpu_mu held). */
static cuzk_err GT_(gpu_ensure)(GT_(pk) *pk, int want_g2, cuzk_errbuf *eb)
{
    cuzk_err e = CUZK_OK;
    cuzk_gpu_curve gc = (cuzk_gpu_curve)GP_CURVE;
    if (!pk->gpu && (e = cuzk_gpu_open(&pk->gpu, 0, eb)))
        return e;
    if (!pk->g_a && (e = cuzk_gpu_points_upload(pk->gpu, gc, CUZK_GPU_G1, pk->a, pk->n_vars, &pk->g_a, eb)))
        return e;
    if (!pk->g_b1 && (e = cuzk_gpu_points_upload(pk->gpu, gc, CUZK_GPU_G1, pk->b1, pk->n_vars, &pk->g_b1, eb)))
        return e;
    if (!pk->g_c && (e = cuzk_gpu_points_upload(pk->gpu, gc, CUZK_GPU_G1, pk->c,
                                                 pk->n_vars - pk->n_public - 1, &pk->g_c, eb)))
        return e;
    if (!pk->g_h && (e = cuzk_gpu_points_upload(pk->gpu, gc, CUZK_GPU_G1, pk->h, pk->domain_size, &pk->g_h, eb)))
        return e;
    if (want_g2 && !pk->g_b2 &&
        (e = cuzk_gpu_points_upload(pk->gpu, gc, CUZK_GPU_G2, pk->b2, pk->n_vars, &pk->g_b2, eb)))
        return e;
    return CUZK_OK;
}

/* H and every MSM on the GPU (B in G2 on CPU threads beside it unless opts->g2_gpu). The GPU
 * writes Jacobian points in exactly the layout of G1J / G2J (X, Y, Z limbs, Fp2 as c0, c1). */
static cuzk_err GT_(gpu_stages)(GT_(pk) *pk, const uint8_t *ws, const FRT *a, const FRT *b,
                                const FRT *c, const cuzk_prove_opts *opts, cuzk_prove_stats *st,
                                G1J *pa, G1J *pb1, G1J *pc, G1J *ph, G2J *pb2, cuzk_errbuf *eb)
{
    cuzk_gpu_curve gc = (cuzk_gpu_curve)GP_CURVE;
    int g2_gpu = opts->g2_on_gpu;
    GT_(g2_job) job;
    memset(&job, 0, sizeof job);
    job.pk = pk;
    job.ws = ws;
    job.nthreads = opts->nthreads;
    pthread_t tid;
    int started = 0;
    if (!g2_gpu)
        started = pthread_create(&tid, NULL, GT_(g2_thread), &job) == 0;
    if (!g2_gpu && !started)
        GT_(g2_thread)(&job); /* no thread: run it here, before the GPU work */
    cuzk_err e;
    pthread_mutex_lock(&pk->gpu_mu);
    double t = cuzk__now_ms();
    e = GT_(gpu_ensure)(pk, g2_gpu, eb);
    st->gpu_upload_ms = cuzk__now_ms() - t;
    if (!e) {
        t = cuzk__now_ms();
        e = cuzk_gpu_h(pk->gpu, gc, (int)pk->log_n, a, b, c, NULL, pk->g_h, 0, (uint64_t *)ph, eb);
        st->h_ms = cuzk__now_ms() - t;
    }
    t = cuzk__now_ms();
    if (!e)
        e = cuzk_gpu_msm(pk->gpu, pk->g_a, 0, pk->n_vars, ws, 0, (uint64_t *)pa, eb);
    if (!e)
        e = cuzk_gpu_msm(pk->gpu, pk->g_b1, 0, pk->n_vars, ws, 0, (uint64_t *)pb1, eb);
    if (!e)
        e = cuzk_gpu_msm(pk->gpu, pk->g_c, 0, pk->n_vars - pk->n_public - 1,
                         ws + 32 * ((uint64_t)pk->n_public + 1), 0, (uint64_t *)pc, eb);
    st->msm_g1_ms = cuzk__now_ms() - t;
    if (!e && g2_gpu) {
        t = cuzk__now_ms();
        e = cuzk_gpu_msm(pk->gpu, pk->g_b2, 0, pk->n_vars, ws, 0, (uint64_t *)pb2, eb);
        st->msm_g2_ms = cuzk__now_ms() - t;
    }
    pthread_mutex_unlock(&pk->gpu_mu);
    if (started)
        pthread_join(tid, NULL);
    if (!g2_gpu) {
        st->msm_g2_ms = job.ms;
        if (!e && job.err)
            e = cuzk_errf(eb, job.err, "G2 MSM failed");
        *pb2 = job.out;
    }
    if (!e) {
        /* The device results are trusted only once they are points of the curve; a wrong one
         * would also fail self-verification, this names the stage. */
        if (!G1_(is_on_curve)(pa) || !G1_(is_on_curve)(pb1) || !G1_(is_on_curve)(pc) ||
            !G1_(is_on_curve)(ph) || !G2_(is_on_curve)(pb2))
            e = cuzk_errf(eb, CUZK_GPU_FAULT, "a GPU MSM result is not on the curve");
    }
    return e;
}

/* ------------------------------------------------------------------ prove */

static cuzk_err GT_(prove)(cuzk_proof *proof, GT_(pk) *pk, const uint8_t *witness,
                           uint64_t n_witness, const cuzk_prove_opts *opts, int use_gpu,
                           cuzk_prove_stats *st, cuzk_errbuf *eb)
{
    unsigned nt = opts->nthreads;
    uint64_t N = pk->domain_size;
    if (n_witness != pk->n_vars)
        return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                         "witness has %" PRIu64 " values, the circuit expects %u", n_witness,
                         pk->n_vars);
    double t0 = cuzk__now_ms(), t;
    FRT *w = malloc((pk->n_vars ? pk->n_vars : 1) * sizeof(FRT));
    FRT *a = malloc(N * sizeof(FRT)), *b = malloc(N * sizeof(FRT)), *c = malloc(N * sizeof(FRT));
    FRT *h = use_gpu ? NULL : malloc(N * sizeof(FRT)); /* the GPU keeps h on the device */
    cuzk_err e = CUZK_OK;
    if (!w || !a || !b || !c || (!use_gpu && !h)) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "cannot allocate the prover's working set (%" PRIu64 " bytes)",
                      (uint64_t)(pk->n_vars + 4 * N) * sizeof(FRT));
        goto out;
    }
    for (uint64_t i = 0; i < n_witness; i++) {
        memcpy(w[i].l, witness + 32 * i, 32);
        if (!FR_(limbs_lt_p)(w[i].l)) {
            e = cuzk_errf(eb, CUZK_NON_CANONICAL, "witness value %" PRIu64 " is not below r", i);
            goto out;
        }
    }
    if (n_witness == 0 || !(w[0].l[0] == 1 && !w[0].l[1] && !w[0].l[2] && !w[0].l[3])) {
        e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED, "witness value 0 must be 1 (the constant wire)");
        goto out;
    }

    t = cuzk__now_ms();
    GT_(synthesize)(pk, w, a, b, c, nt);
    st->synth_ms = cuzk__now_ms() - t;

    G1J pa, pb1, pc, ph;
    G2J pb2;
    const uint8_t *ws = (const uint8_t *)w;
    if (use_gpu) {
        e = GT_(gpu_stages)(pk, ws, a, b, c, opts, st, &pa, &pb1, &pc, &ph, &pb2, eb);
        free(a);
        free(b);
        free(c);
        a = b = c = NULL;
        if (e)
            goto out;
    } else {
        t = cuzk__now_ms();
        e = FR_(groth16_h)(&pk->dom, h, a, N, b, N, c, N, nt);
        st->h_ms = cuzk__now_ms() - t;
        free(a);
        free(b);
        free(c);
        a = b = c = NULL; /* dead after H: released at once */
        if (e) {
            e = cuzk_errf(eb, e, "H computation failed");
            goto out;
        }
        t = cuzk__now_ms();
        cuzk_msm_opts mo = {nt, 0, 0}, mh = {nt, CUZK_MSM_SCALARS_MONT, 0};
        if ((e = G1_(msm_ex)(&pa, pk->a, ws, pk->n_vars, &mo)) ||
            (e = G1_(msm_ex)(&pb1, pk->b1, ws, pk->n_vars, &mo)) ||
            (e = G1_(msm_ex)(&pc, pk->c, ws + 32 * ((uint64_t)pk->n_public + 1),
                             pk->n_vars - pk->n_public - 1, &mo)) ||
            (e = G1_(msm_ex)(&ph, pk->h, (const uint8_t *)h, N, &mh))) {
            e = cuzk_errf(eb, e, "G1 MSM failed");
            goto out;
        }
        st->msm_g1_ms = cuzk__now_ms() - t;
        t = cuzk__now_ms();
        if ((e = G2_(msm_ex)(&pb2, pk->b2, ws, pk->n_vars, &mo))) {
            e = cuzk_errf(eb, e, "G2 MSM failed");
            goto out;
        }
        st->msm_g2_ms = cuzk__now_ms() - t;
    }

    t = cuzk__now_ms();
    FRT r, s, rs;
    GT_(rand_scalar)(&r, opts->zero_rs);
    GT_(rand_scalar)(&s, opts->zero_rs);
    FR_(mul)(&rs, &r, &s);
    FR_(neg)(&rs, &rs);
    G1J alpha, beta1, delta1, tmp, A, B1, C;
    G2J beta2, delta2, B2, tmp2;
    G1_(from_affine)(&alpha, &pk->alpha1);
    G1_(from_affine)(&beta1, &pk->beta1);
    G1_(from_affine)(&delta1, &pk->delta1);
    G2_(from_affine)(&beta2, &pk->beta2);
    G2_(from_affine)(&delta2, &pk->delta2);
    /* pi_a = alpha + A + r delta1 */
    G1_(add)(&A, &alpha, &pa);
    GT_(g1_mul_fr)(&tmp, &delta1, &r);
    G1_(add)(&A, &A, &tmp);
    /* pi_b = beta2 + B2 + s delta2; b1 = beta1 + B1 + s delta1 */
    G2_(add)(&B2, &beta2, &pb2);
    GT_(g2_mul_fr)(&tmp2, &delta2, &s);
    G2_(add)(&B2, &B2, &tmp2);
    G1_(add)(&B1, &beta1, &pb1);
    GT_(g1_mul_fr)(&tmp, &delta1, &s);
    G1_(add)(&B1, &B1, &tmp);
    /* pi_c = C + H + s pi_a + r b1 - r s delta1 */
    G1_(add)(&C, &pc, &ph);
    GT_(g1_mul_fr)(&tmp, &A, &s);
    G1_(add)(&C, &C, &tmp);
    GT_(g1_mul_fr)(&tmp, &B1, &r);
    G1_(add)(&C, &C, &tmp);
    GT_(g1_mul_fr)(&tmp, &delta1, &rs);
    G1_(add)(&C, &C, &tmp);
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
    st->finalize_ms = cuzk__now_ms() - t;

    if (!opts->no_verify) {
        t = cuzk__now_ms();
        int ok = GT_(verify_points)(&pk->alpha1, &pk->beta2, &pk->gamma2, &pk->delta2, pk->ic,
                                    w + 1, pk->n_public, &aa, &ba, &ca);
        st->verify_ms = cuzk__now_ms() - t;
        if (!ok) {
            e = cuzk_errf(eb, CUZK_WITNESS_UNSATISFIED,
                          "the proof failed self-verification: the witness does not satisfy the "
                          "circuit (give the .r1cs to find the first failing constraint)");
            goto out;
        }
    }
out:
    free(w);
    free(a);
    free(b);
    free(c);
    free(h);
    st->total_ms = cuzk__now_ms() - t0;
    return e;
}
