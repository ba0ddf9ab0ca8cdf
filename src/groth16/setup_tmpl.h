/* The setup of cuzk/setup.h for one curve, instantiated per curve in setup.c.
 *
 * Define ST_FR (scalar field prefix), ST_G1, ST_G2 (group prefixes), ST_G1_BYTES,
 * ST_G2_BYTES (snarkjs point sizes), ST_NAME (suffix for the function names) and ST_GPU_CURVE
 * (the curve for src/gpu). */
#define STN_(a, b) a##_##b
#define STN(a, b) STN_(a, b)
#define ST_(x) STN(x, ST_NAME)
#define FR_(x) STN(ST_FR, x)
#define G1_(x) STN(ST_G1, x)
#define G2_(x) STN(ST_G2, x)
#define FRT FR_(t)

/* The secret scalars and the domain. */
typedef struct {
    FRT tau, alpha, beta, gamma, delta, gamma_inv, delta_inv;
    FRT w, v;    /* w_N, w_2N */
    FRT zl, zh;  /* (tau^N - 1)/N and (tau^2N - 1)/(2N)/delta */
} ST_(secrets);

/* A wire's sums A_i(tau), B_i(tau), C_i(tau), side by side: a term touches one place. */
typedef struct {
    FRT v[3];
} ST_(qap);

/* Secret `name` from the seed (cuzk/setup.h). For tau, also tau^(2N) != 1 (tau outside the
 * 2N domain), so that no denominator tau - x below is zero. */
static void ST_(derive)(FRT *out, const char *name, const uint8_t *seed, size_t seed_len,
                        uint64_t two_n)
{
    static const char dom[] = "cuzk-setup-v1";
    size_t nl = strlen(name), len = sizeof dom + nl + 1 + seed_len + 4;
    uint8_t buf[sizeof dom + 16 + 1 + 256 + 4];
    memcpy(buf, dom, sizeof dom); /* includes the 0x00 separator */
    memcpy(buf + sizeof dom, name, nl);
    buf[sizeof dom + nl] = 0;
    memcpy(buf + sizeof dom + nl + 1, seed, seed_len);
    for (uint32_t ctr = 0;; ctr++) {
        uint8_t *c = buf + len - 4;
        c[0] = (uint8_t)ctr;
        c[1] = (uint8_t)(ctr >> 8);
        c[2] = (uint8_t)(ctr >> 16);
        c[3] = (uint8_t)(ctr >> 24);
        uint8_t h[32];
        cuzk_sha256(h, buf, len);
        h[31] &= 0x7f;
        if (FR_(from_bytes_le)(out, h) != 0 || FR_(is_zero)(out))
            continue;
        if (two_n) {
            FRT t;
            FR_(pow_u64)(&t, out, two_n);
            if (FR_(is_one)(&t))
                continue;
        }
        return;
    }
}

static void ST_(canon)(uint64_t k[4], const FRT *x) { FR_(to_canonical)(k, x); }

#define ST_CHUNK 65536
/* Scalars per chunk of points on a GPU: enough threads to fill it (fixed_base_kernels.cuh). */
#define ST_GPU_CHUNK ((size_t)1 << 22)

/* The GPU's fixed-base multiplications (NULL: the CPU's). */
typedef struct {
    cuzk_gpu_ctx *ctx;
    cuzk_gpu_fixed_base *g1, *g2;
} ST_(gpu);

/* The points k_i G of Montgomery scalars s[0..cnt) into pts, on the GPU (its scalars' form:
 * Montgomery Fr, 32 bytes each). */
static cuzk_err ST_(gpu_mul)(cuzk_gpu_fixed_base *g, const FRT *s, size_t cnt, uint8_t *pts,
                             cuzk_errbuf *eb)
{
    _Static_assert(sizeof(FRT) == 32, "Fr elements are 32 bytes");
    return cuzk_gpu_fixed_base_mul(g, s, cnt, CUZK_GPU_SCALARS_MONT, pts, eb);
}

/* The points k_i * G1 for the chunk's Montgomery scalars s[0..cnt) into pts, then written to
 * the sink unless pts is their place in it (placed). */
static cuzk_err ST_(put_g1)(cuzk__zkey_sink *bw, const G1_(fb) *fb, const ST_(gpu) *gpu,
                            const FRT *s, size_t cnt, uint64_t (*k)[4], uint8_t *pts,
                            int placed, unsigned nt, cuzk_errbuf *eb)
{
    cuzk_err e;
    if (gpu->g1) {
        e = ST_(gpu_mul)(gpu->g1, s, cnt, pts, eb);
    } else {
        for (size_t i = 0; i < cnt; i++)
            ST_(canon)(k[i], &s[i]);
        e = G1_(fb_mul)(fb, pts, ST_G1_BYTES, (const uint64_t(*)[4])k, cnt, nt, eb);
    }
    if (!e && !placed)
        e = bw->write(bw, pts, cnt * ST_G1_BYTES, eb);
    return e;
}

static cuzk_err ST_(put_g2)(cuzk__zkey_sink *bw, const G2_(fb) *fb, const ST_(gpu) *gpu,
                            const FRT *s, size_t cnt, uint64_t (*k)[4], uint8_t *pts,
                            int placed, unsigned nt, cuzk_errbuf *eb)
{
    cuzk_err e;
    if (gpu->g2) {
        e = ST_(gpu_mul)(gpu->g2, s, cnt, pts, eb);
    } else {
        for (size_t i = 0; i < cnt; i++)
            ST_(canon)(k[i], &s[i]);
        e = G2_(fb_mul)(fb, pts, ST_G2_BYTES, (const uint64_t(*)[4])k, cnt, nt, eb);
    }
    if (!e && !placed)
        e = bw->write(bw, pts, cnt * ST_G2_BYTES, eb);
    return e;
}

static void ST_(header_point_g1)(uint8_t *out, const FRT *x)
{
    uint64_t k[4];
    ST_(canon)(k, x);
    G1_(mul_gen_bytes)(out, k);
}

static void ST_(header_point_g2)(uint8_t *out, const FRT *x)
{
    uint64_t k[4];
    ST_(canon)(k, x);
    G2_(mul_gen_bytes)(out, k);
}

/* One chunk's scalars of section sec (3, 5 .. 9), for points i0 .. i0 + cnt - 1, in blocks of
 * ST_BLOCK on all threads. */
#define ST_BLOCK 4096
typedef struct {
    const ST_(secrets) *S;
    const ST_(qap) *q;
    FRT *sc, *xs, *ls; /* xs, ls: section 9's v w^i and tau - v w^i */
    uint64_t i0;
    size_t cnt;
    int sec;
    uint8_t *touch; /* the chunk's points, written in place by a GPU: faulted in here */
    size_t point_bytes;
} ST_(scalars);

static void ST_(scalars_block)(void *arg, size_t blk)
{
    const ST_(scalars) *P = arg;
    const ST_(secrets) *S = P->S;
    const size_t j0 = blk * ST_BLOCK, j1 = P->cnt - j0 < ST_BLOCK ? P->cnt : j0 + ST_BLOCK;
    if (P->touch) {
        /* The driver's copy into pageable memory takes the page faults on one thread. */
        const uintptr_t pg = 4096, a0 = (uintptr_t)(P->touch + j0 * P->point_bytes),
                        a1 = (uintptr_t)(P->touch + j1 * P->point_bytes);
        for (uintptr_t x = (a0 + pg - 1) & ~(pg - 1); x < a1; x += pg)
            *(volatile uint8_t *)x = 0;
    }
    if (P->sec == 9) {
        /* H_i = zh v w^i / (tau - v w^i) */
        FRT hx;
        FR_(pow_u64)(&hx, &S->w, P->i0 + j0);
        FR_(mul)(&hx, &hx, &S->v);
        for (size_t j = j0; j < j1; j++) {
            P->xs[j] = hx;
            FR_(sub)(&P->ls[j], &S->tau, &hx);
            FR_(mul)(&hx, &hx, &S->w);
        }
        FR_(batch_inv)(P->ls + j0, P->ls + j0, j1 - j0, P->sc + j0);
        for (size_t j = j0; j < j1; j++) {
            FR_(mul)(&P->sc[j], &P->ls[j], &P->xs[j]);
            FR_(mul)(&P->sc[j], &P->sc[j], &S->zh);
        }
        return;
    }
    for (size_t j = j0; j < j1; j++) {
        const uint64_t i = P->i0 + j;
        switch (P->sec) {
        case 3:
        case 8: {
            FRT t;
            FR_(mul)(&P->sc[j], &S->beta, &P->q[i].v[0]);
            FR_(mul)(&t, &S->alpha, &P->q[i].v[1]);
            FR_(add)(&P->sc[j], &P->sc[j], &t);
            FR_(add)(&P->sc[j], &P->sc[j], &P->q[i].v[2]);
            FR_(mul)(&P->sc[j], &P->sc[j], P->sec == 3 ? &S->gamma_inv : &S->delta_inv);
            break;
        }
        case 5:
            P->sc[j] = P->q[i].v[0];
            break;
        default: /* 6, 7 */
            P->sc[j] = P->q[i].v[1];
            break;
        }
    }
}

static void ST_(u32)(cuzk__zkey_sink *bw, uint32_t v, cuzk_errbuf *eb)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    bw->write(bw, b, 4, eb);
}

/* ls[j] = L_{r0 + j}(tau) = zl w^(r0 + j) / (tau - w^(r0 + j)) for j < cnt, one batch
 * inversion (xs, tmp: cnt elements of scratch). */
static void ST_(lagrange)(const ST_(secrets) *S, uint64_t r0, size_t cnt, FRT *ls, FRT *xs,
                          FRT *tmp)
{
    FRT x;
    FR_(pow_u64)(&x, &S->w, r0);
    for (size_t j = 0; j < cnt; j++) {
        xs[j] = x;
        FR_(sub)(&ls[j], &S->tau, &x);
        FR_(mul)(&x, &x, &S->w);
    }
    FR_(batch_inv)(ls, ls, cnt, tmp);
    for (size_t j = 0; j < cnt; j++) {
        FR_(mul)(&ls[j], &ls[j], &xs[j]);
        FR_(mul)(&ls[j], &ls[j], &S->zl);
    }
}

/* The first wires (the constant and the inputs, in most terms of most circuits) are summed per
 * thread; the others under a byte lock per 4 wires. Pass 1's threads take lanes of
 * consecutive ranges, about 4 per thread, so that they work on distant rows and their wires
 * (in circuits that, like the generated ones, use recent outputs), and the lock bytes of
 * those wires, rarely share a cache line. Field sums do not depend on their order. */
#define ST_LOCAL_WIRES 1024u

/* A job of pass 1 or of section 4: ranges of src->chunk rows, taken in turn by every thread. */
typedef struct {
    const ST_(secrets) *S;
    const cuzk__circuit_source *r;
    cuzk__zkey_sink *bw;
    ST_(qap) *q;
    uint8_t *locks;
    uint64_t n_ranges, n_local;
    uint64_t lane; /* pass 1: ranges per lane */
    uint64_t (*cnt)[2];   /* per range: its A and B terms (pass 1 counts them) */
    uint64_t (*first)[2]; /* per range: its first A and B record (section 4) */
    uint8_t **buf;        /* section 4 without the sink's coef_rows: one wave's records */
    uint64_t buf_cap;     /* records a range may have */
    uint64_t base;        /* section 4 in waves: the wave's first range */
    size_t next;
    int failed;
    pthread_mutex_t mu;
    cuzk_err err;
    cuzk_errbuf eb;
} ST_(jobs);

/* One thread's state in a job. */
typedef struct {
    ST_(jobs) *J;
    ST_(qap) *local;
    FRT *ls;
    uint64_t r0, cnt[2];
    uint8_t *rec;
    uint64_t n_rec, cap;
} ST_(worker);

static void ST_(job_fail)(ST_(jobs) *J, cuzk_err e, const cuzk_errbuf *eb)
{
    pthread_mutex_lock(&J->mu);
    if (!J->failed) {
        J->err = e;
        J->eb = *eb;
        __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&J->mu);
}

/* Coefficient bytes equal to 1 (most terms of most circuits): no conversion needed. */
static inline int ST_(coef_is_one)(const uint8_t c[32])
{
    uint8_t rest = 0;
    for (int i = 1; i < 32; i++)
        rest |= c[i];
    return c[0] == 1 && !rest;
}

static inline void ST_(lock)(uint8_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            ;
}

/* Adds the products co[j] to the sums of (wire[j], mtx[j]). */
static void ST_(pass1_add)(ST_(worker) *W, const FRT *co, const uint32_t *wire,
                           const uint8_t *mtx, unsigned k)
{
    const ST_(jobs) *J = W->J;
    for (unsigned j = 0; j < k; j++) {
        const uint32_t w = wire[j];
        if (w < J->n_local) {
            FR_(add)(&W->local[w].v[mtx[j]], &W->local[w].v[mtx[j]], &co[j]);
            continue;
        }
        uint8_t *lk = &J->locks[w >> 2];
        FRT *d = &J->q[w].v[mtx[j]];
        ST_(lock)(lk);
        FR_(add)(d, d, &co[j]);
        __atomic_store_n(lk, 0, __ATOMIC_RELEASE);
    }
}

static cuzk_err ST_(pass1_row)(void *ctx, uint64_t row, const cuzk_r1cs_term *ta, uint32_t na,
                               const cuzk_r1cs_term *tb, uint32_t nb, const cuzk_r1cs_term *tc,
                               uint32_t nc, cuzk_errbuf *eb)
{
    ST_(worker) *W = ctx;
    const ST_(jobs) *J = W->J;
    const FRT *l = &W->ls[row - W->r0];
    const cuzk_r1cs_term *t[3] = {ta, tb, tc};
    const uint32_t nt[3] = {na, nb, nc};
    W->cnt[0] += na;
    W->cnt[1] += nb;
    /* The products first, with their sums prefetched, then the additions: the sums are
     * mostly in no cache (recent wires spread over megabytes), and the lock's atomic would
     * otherwise wait for each miss in turn. */
    enum { BATCH = 16 };
    FRT co[BATCH];
    uint32_t wire[BATCH];
    uint8_t mx[BATCH];
    unsigned k = 0;
    for (int mtx = 0; mtx < 3; mtx++)
        for (uint32_t i = 0; i < nt[mtx]; i++) {
            const uint32_t w = t[mtx][i].wire;
            if (w >= J->n_local)
                __builtin_prefetch(&J->q[w].v[mtx], 1);
            if (ST_(coef_is_one)(t[mtx][i].coef)) {
                co[k] = *l;
            } else {
                if (FR_(from_bytes_le)(&co[k], t[mtx][i].coef))
                    return cuzk_errf(eb, CUZK_NON_CANONICAL,
                                     "%s: constraint %llu, %c term %u: coefficient >= r",
                                     J->r->name, (unsigned long long)row, "ABC"[mtx], i);
                FR_(mul)(&co[k], &co[k], l);
            }
            wire[k] = w;
            mx[k] = (uint8_t)mtx;
            if (++k == BATCH) {
                ST_(pass1_add)(W, co, wire, mx, k);
                k = 0;
            }
        }
    ST_(pass1_add)(W, co, wire, mx, k);
    return CUZK_OK;
}

/* Pass 1 on one thread: ranges in turn, then its sums of the first wires into the total. */
static void ST_(pass1_thread)(void *arg, unsigned t, unsigned T)
{
    (void)t, (void)T;
    ST_(jobs) *J = arg;
    const uint64_t chunk = J->r->chunk;
    ST_(worker) W = {J, calloc(J->n_local ? J->n_local : 1, sizeof(ST_(qap))),
                     malloc(chunk * sizeof(FRT)), 0, {0, 0}, NULL, 0, 0};
    FRT *xs = malloc(chunk * sizeof(FRT)), *tmp = malloc(chunk * sizeof(FRT));
    cuzk_errbuf eb;
    if (!W.local || !W.ls || !xs || !tmp) {
        cuzk_err e = cuzk_errf(&eb, CUZK_NO_MEMORY, "setup: out of memory");
        ST_(job_fail)(J, e, &eb);
        goto out;
    }
    for (uint64_t i = 0, end = 0;; i++) {
        if (i == end) {
            i = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED) * J->lane;
            end = i + J->lane < J->n_ranges ? i + J->lane : J->n_ranges;
        }
        if (i >= J->n_ranges || __atomic_load_n(&J->failed, __ATOMIC_RELAXED))
            break;
        const uint64_t lo = i * chunk, hi = lo + chunk < J->r->n_constraints
                                                 ? lo + chunk
                                                 : J->r->n_constraints;
        ST_(lagrange)(J->S, lo, hi - lo, W.ls, xs, tmp);
        W.r0 = lo;
        W.cnt[0] = W.cnt[1] = 0;
        cuzk_err e = J->r->range(J->r->src, lo, hi, ST_(pass1_row), &W, &eb);
        if (e) {
            ST_(job_fail)(J, e, &eb);
            break;
        }
        J->cnt[i][0] = W.cnt[0];
        J->cnt[i][1] = W.cnt[1];
    }
    pthread_mutex_lock(&J->mu);
    for (uint64_t w = 0; w < J->n_local; w++)
        for (int mtx = 0; mtx < 3; mtx++)
            FR_(add)(&J->q[w].v[mtx], &J->q[w].v[mtx], &W.local[w].v[mtx]);
    pthread_mutex_unlock(&J->mu);
out:
    free(W.local);
    free(W.ls);
    free(xs);
    free(tmp);
}

/* Section 4's records of one constraint: its A terms then its B terms, values coef * R^2 (the
 * Montgomery limbs of coef * R). */
static void ST_(coef_record)(uint8_t rec[44], uint32_t mtx, uint64_t row, uint32_t wire,
                             const FRT *co_r2)
{
    const uint32_t hdr[3] = {mtx, (uint32_t)row, wire};
    for (int q = 0; q < 3; q++)
        for (int y = 0; y < 4; y++)
            rec[4 * q + y] = (uint8_t)(hdr[q] >> (8 * y));
    FR_(to_mont_bytes_le)(rec + 12, co_r2);
}

static cuzk_err ST_(coef_row)(void *ctx, uint64_t row, const cuzk_r1cs_term *ta, uint32_t na,
                              const cuzk_r1cs_term *tb, uint32_t nb, const cuzk_r1cs_term *tc,
                              uint32_t nc, cuzk_errbuf *eb)
{
    (void)tc, (void)nc;
    ST_(worker) *W = ctx;
    const cuzk_r1cs_term *t[2] = {ta, tb};
    const uint32_t nt[2] = {na, nb};
    if (W->n_rec + na + nb > W->cap)
        return cuzk_errf(eb, CUZK_INTERNAL, "%s: constraint %llu differs from the first walk",
                         W->J->r->name, (unsigned long long)row);
    for (uint32_t mtx = 0; mtx < 2; mtx++)
        for (uint32_t i = 0; i < nt[mtx]; i++) {
            FRT co = FR_(R2);
            if (!ST_(coef_is_one)(t[mtx][i].coef)) {
                FR_(from_bytes_le)(&co, t[mtx][i].coef);
                FR_(mul)(&co, &co, &FR_(R2));
            }
            ST_(coef_record)(W->rec + 44 * W->n_rec++, mtx, row, t[mtx][i].wire, &co);
        }
    return CUZK_OK;
}

/* Range i's records into W->rec; placed in the key when the sink takes them so. */
static cuzk_err ST_(coef_range)(ST_(jobs) *J, ST_(worker) *W, size_t i, cuzk_errbuf *eb)
{
    const uint64_t chunk = J->r->chunk;
    const uint64_t lo = i * chunk,
                   hi = lo + chunk < J->r->n_constraints ? lo + chunk : J->r->n_constraints;
    W->n_rec = 0;
    W->cap = J->cnt[i][0] + J->cnt[i][1];
    cuzk_err e = J->r->range(J->r->src, lo, hi, ST_(coef_row), W, eb);
    if (!e && W->n_rec != W->cap)
        e = cuzk_errf(eb, CUZK_INTERNAL, "%s: constraints %llu .. %llu differ from the first "
                      "walk", J->r->name, (unsigned long long)lo, (unsigned long long)hi);
    if (!e && J->bw->coef_rows)
        e = J->bw->coef_rows(J->bw, lo, hi - lo, J->first[i], W->rec, W->n_rec, eb);
    return e;
}

/* Section 4 placed by the sink: ranges in turn on every thread. */
static void ST_(coef_thread)(void *arg, unsigned t, unsigned T)
{
    (void)t, (void)T;
    ST_(jobs) *J = arg;
    ST_(worker) W = {J, NULL, NULL, 0, {0, 0}, malloc(J->buf_cap * 44 + 1), 0, 0};
    cuzk_errbuf eb;
    cuzk_err e = W.rec ? CUZK_OK : cuzk_errf(&eb, CUZK_NO_MEMORY, "setup: out of memory");
    while (!e) {
        const size_t i = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED);
        if (i >= J->n_ranges || __atomic_load_n(&J->failed, __ATOMIC_RELAXED))
            break;
        e = ST_(coef_range)(J, &W, i, &eb);
    }
    if (e)
        ST_(job_fail)(J, e, &eb);
    free(W.rec);
}

/* Section 4 through write: one wave of ranges at a time into J->buf, written in order. */
static void ST_(coef_wave)(void *arg, size_t k)
{
    ST_(jobs) *J = arg;
    ST_(worker) W = {J, NULL, NULL, 0, {0, 0}, J->buf[k], 0, 0};
    cuzk_errbuf eb;
    cuzk_err e = ST_(coef_range)(J, &W, J->base + k, &eb);
    if (e)
        ST_(job_fail)(J, e, &eb);
}

static cuzk_err ST_(run)(const cuzk__circuit_source *r, cuzk__zkey_sink *bw,
                         const cuzk_setup_opts *o, cuzk_setup_info *info, cuzk_errbuf *eb)
{
    const uint8_t *seed = o->seed;
    const size_t seed_len = o->seed_len;
    const unsigned nt = o->nthreads ? o->nthreads : cuzk_num_threads();
    const uint64_t m = r->n_constraints, n = r->n_wires;
    const uint64_t np = r->n_public;
    if (np + 1 > n)
        return cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: %llu public signals but only %llu wires",
                         r->name, (unsigned long long)np, (unsigned long long)n);
    const uint64_t rows = m + np + 1;
    unsigned log_n = 0;
    while (((uint64_t)1 << log_n) < rows)
        log_n++;
    const uint64_t N = (uint64_t)1 << log_n;
    ST_(secrets) S;
    if (log_n > 31 || FR_(root_of_unity)(&S.v, log_n + 1) != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: %llu constraints + %llu public inputs need a domain of 2^%u, "
                         "larger than the %s scalar field supports for Groth16 (2^%u at most)",
                         r->name, (unsigned long long)m, (unsigned long long)np, log_n,
                         cuzk_curve_name(r->curve), ST_MAX_LOG - 1);
    FR_(root_of_unity)(&S.w, log_n);

    /* The points on a GPU when o->device allows it and there is one (the tables then live
     * there, and the chunks grow to fill it). */
    const int on_gpu = o->device >= 0 && cuzk_gpu_device_count() > 0;
    size_t chunk_n = ST_CHUNK;
    if (on_gpu) {
        chunk_n = ST_GPU_CHUNK;
        if (chunk_n > (n > N ? n : N))
            chunk_n = n > N ? n : N;
        if (chunk_n < ST_CHUNK)
            chunk_n = ST_CHUNK;
    }

    /* Memory: the three per-wire accumulators, the two tables with their build scratch (CPU
     * only), the r1cs constraint index, the chunk buffers and each thread's pass-1 scratch. */
    const uint64_t n_g1 = 4 * n + N - n; /* IC + C, A, B1, H: n + n + n + N */
    const uint64_t max_tab = 128ull << 20;
    unsigned w1 = G1_(fb_window)(n_g1, max_tab), w2 = G2_(fb_window)(n, max_tab);
    uint64_t tabs = G1_(fb_table_bytes)(w1) + G2_(fb_table_bytes)(w2);
    uint64_t build = (uint64_t)nt * (G1_(fb_build_bytes)(w1) > G2_(fb_build_bytes)(w2)
                                         ? G1_(fb_build_bytes)(w1)
                                         : G2_(fb_build_bytes)(w2));
    uint64_t chunk = (uint64_t)chunk_n * (3 * sizeof(FRT) + 32 + ST_G2_BYTES);
    uint64_t per_thread = 3 * r->chunk * sizeof(FRT) + ST_LOCAL_WIRES * 3 * sizeof(FRT);
    uint64_t mem = 3 * n * sizeof(FRT) + 8 * (m + 1) + chunk + nt * per_thread + n / 4 +
                   (on_gpu ? 0 : tabs + build + (uint64_t)nt * FB_BLOCK * 512);
    if (info) {
        info->n_constraints = (uint32_t)m;
        info->n_vars = (uint32_t)n;
        info->n_public = (uint32_t)np;
        info->domain_size = (uint32_t)N;
        info->mem_estimate = mem;
        info->window_g1 = on_gpu ? 0 : w1;
        info->window_g2 = on_gpu ? 0 : w2;
        info->device = on_gpu ? o->device : -1;
    }
    if (mem > o->max_memory)
        return cuzk_errf(eb, CUZK_OUT_OF_BUDGET,
                         "%s: setup of %llu constraints x %llu wires (domain 2^%u) needs about "
                         "%llu MiB of memory, above the limit of %llu MiB (--max-memory)",
                         r->name, (unsigned long long)m, (unsigned long long)n, log_n,
                         (unsigned long long)(mem >> 20),
                         (unsigned long long)(o->max_memory >> 20));

    /* Secrets. */
    ST_(derive)(&S.tau, "tau", seed, seed_len, 2 * N);
    ST_(derive)(&S.alpha, "alpha", seed, seed_len, 0);
    ST_(derive)(&S.beta, "beta", seed, seed_len, 0);
    ST_(derive)(&S.gamma, "gamma", seed, seed_len, 0);
    ST_(derive)(&S.delta, "delta", seed, seed_len, 0);
    FR_(inv)(&S.gamma_inv, &S.gamma);
    FR_(inv)(&S.delta_inv, &S.delta);
    {
        FRT t, ninv;
        FR_(pow_u64)(&t, &S.tau, N);
        FR_(sub)(&t, &t, &FR_(ONE));
        FR_(from_u64)(&ninv, N);
        FR_(inv)(&ninv, &ninv);
        FR_(mul)(&S.zl, &t, &ninv);
        FR_(pow_u64)(&t, &S.tau, 2 * N);
        FR_(sub)(&t, &t, &FR_(ONE));
        FR_(from_u64)(&ninv, 2 * N);
        FR_(inv)(&ninv, &ninv);
        FR_(mul)(&S.zh, &t, &ninv);
        FR_(mul)(&S.zh, &S.zh, &S.delta_inv);
    }

    cuzk_err e = CUZK_OK;
    ST_(qap) *q = calloc(n, sizeof *q);
    FRT *xs = malloc(chunk_n * sizeof(FRT)), *ls = malloc(chunk_n * sizeof(FRT));
    FRT *sc = malloc(chunk_n * sizeof(FRT));
    uint64_t(*k)[4] = on_gpu ? NULL : malloc(chunk_n * sizeof *k);
    uint8_t *pts = NULL; /* the points of a chunk, for a sink that does not place them */
    int pts_pinned = 0;
    G1_(fb) fb1 = {0};
    G2_(fb) fb2 = {0};
    ST_(gpu) gpu = {0};
    const uint64_t n_ranges = (m + r->chunk - 1) / r->chunk;
    ST_(jobs) J;
    memset(&J, 0, sizeof J);
    pthread_mutex_init(&J.mu, NULL);
    J.S = &S;
    J.r = r;
    J.bw = bw;
    J.q = q;
    J.n_ranges = n_ranges;
    J.n_local = n < ST_LOCAL_WIRES ? n : ST_LOCAL_WIRES;
    J.lane = (n_ranges + 4 * nt - 1) / (4 * nt);
    J.locks = calloc(n / 4 + 1, 1);
    J.cnt = calloc(n_ranges + 1, sizeof *J.cnt);
    J.first = calloc(n_ranges + 1, sizeof *J.first);
    if (!q || !xs || !ls || !sc || (!k && !on_gpu) || !J.locks || !J.cnt || !J.first) {
        e = cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory (%llu wires)",
                      (unsigned long long)n);
        goto out;
    }

    double t_phase = cuzk__now_ms();
    /* Pass 1: A_i(tau), B_i(tau), C_i(tau) over the constraint rows on all threads, then the
     * public rows (A = 1 at row m + i for wire i). */
    cuzk_parallel_threads(nt, ST_(pass1_thread), &J);
    if (J.failed) {
        e = cuzk_errf(eb, J.err, "%s", J.eb.msg);
        goto out;
    }
    for (uint64_t i0 = 0; i0 <= np; i0 += chunk_n) {
        const size_t cnt = np + 1 - i0 < chunk_n ? (size_t)(np + 1 - i0) : chunk_n;
        ST_(lagrange)(&S, m + i0, cnt, ls, xs, sc);
        for (size_t j = 0; j < cnt; j++)
            FR_(add)(&q[i0 + j].v[0], &q[i0 + j].v[0], &ls[j]);
    }
    uint64_t n_coef[2] = {np + 1, 0}, max_rec = 0;
    for (uint64_t i = 0; i < n_ranges; i++) {
        J.first[i][0] = n_coef[0] - (np + 1);
        J.first[i][1] = n_coef[1];
        n_coef[0] += J.cnt[i][0];
        n_coef[1] += J.cnt[i][1];
        if (J.cnt[i][0] + J.cnt[i][1] > max_rec)
            max_rec = J.cnt[i][0] + J.cnt[i][1];
    }
    J.first[n_ranges][0] = n_coef[0] - (np + 1); /* the public rows' records */
    J.first[n_ranges][1] = n_coef[1];
    J.buf_cap = max_rec;
    uint64_t n_coefs = n_coef[0] + n_coef[1];
    if (n_coefs > UINT32_MAX) {
        e = cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: %llu coefficients exceed the zkey's u32 count",
                      r->name, (unsigned long long)n_coefs);
        goto out;
    }
    if (info) {
        info->n_coefs = n_coefs;
        info->ms_circuit = cuzk__now_ms() - t_phase;
    }
    bw->n_coef[0] = n_coef[0];
    bw->n_coef[1] = n_coef[1];
    t_phase = cuzk__now_ms();

    /* Tables. */
    if (on_gpu) {
        cuzk_errbuf geb = {{0}};
        if ((e = cuzk_gpu_open(&gpu.ctx, o->device, &geb)) ||
            (e = cuzk_gpu_fixed_base_new(gpu.ctx, ST_GPU_CURVE, CUZK_GPU_G1, &gpu.g1, &geb)) ||
            (e = cuzk_gpu_fixed_base_new(gpu.ctx, ST_GPU_CURVE, CUZK_GPU_G2, &gpu.g2, &geb))) {
            e = cuzk_errf(eb, e, "setup: GPU %d (--device -1 runs on the CPU): %s", o->device,
                          geb.msg);
            goto out;
        }
    } else if ((e = G1_(fb_init)(&fb1, w1, nt, eb)) || (e = G2_(fb_init)(&fb2, w2, nt, eb))) {
        goto out;
    }

    const uint64_t total = 4 * n + N;
    uint64_t done = 0;
#define ST_PROGRESS(k_)                                                                       \
    do {                                                                                      \
        done += (k_);                                                                         \
        if (o->progress)                                                                      \
            o->progress(o->progress_ctx, done, total);                                        \
    } while (0)

    /* 1: protocol. */
    bw->begin(bw, 1, eb);
    ST_(u32)(bw, 1, eb);
    bw->end(bw, eb);
    /* 2: header. */
    {
        uint8_t qb[48], rr[32], p[ST_G2_BYTES];
        const uint32_t n8q = cuzk_curve_n8q(r->curve);
        cuzk_curve_q_le(r->curve, qb);
        cuzk_curve_r_le(r->curve, rr);
        bw->begin(bw, 2, eb);
        ST_(u32)(bw, n8q, eb);
        bw->write(bw, qb, n8q, eb);
        ST_(u32)(bw, 32, eb);
        bw->write(bw, rr, 32, eb);
        ST_(u32)(bw, (uint32_t)n, eb);
        ST_(u32)(bw, (uint32_t)np, eb);
        ST_(u32)(bw, (uint32_t)N, eb);
        ST_(header_point_g1)(p, &S.alpha);
        bw->write(bw, p, ST_G1_BYTES, eb);
        ST_(header_point_g1)(p, &S.beta);
        bw->write(bw, p, ST_G1_BYTES, eb);
        ST_(header_point_g2)(p, &S.beta);
        bw->write(bw, p, ST_G2_BYTES, eb);
        ST_(header_point_g2)(p, &S.gamma);
        bw->write(bw, p, ST_G2_BYTES, eb);
        ST_(header_point_g1)(p, &S.delta);
        bw->write(bw, p, ST_G1_BYTES, eb);
        ST_(header_point_g2)(p, &S.delta);
        bw->write(bw, p, ST_G2_BYTES, eb);
        if ((e = bw->end(bw, eb)))
            goto out;
    }
    /* 3 (IC, wires 0..np, over gamma) and 8 (C, wires np+1.., over delta) share the scalar
     * (beta A_i + alpha B_i + C_i) * factor. */
    for (int sec = 3; sec <= 9; sec++) {
        uint64_t lo = 0, hi = n;
        if (sec == 3)
            hi = np + 1;
        else if (sec == 8)
            lo = np + 1;
        else if (sec == 9)
            hi = N;
        if (sec == 4) {
            /* Coefficients: per constraint its A terms then its B terms, then the public
             * rows; values coef * R^2 = the Montgomery limbs of coef * R. Each range's
             * records are made on any thread; the sink places them, or they are written in
             * order, a wave of nt ranges at a time. */
            double t_coefs = cuzk__now_ms();
            bw->begin(bw, 4, eb);
            uint8_t *pub = malloc((np + 1) * 44);
            if (!pub) {
                e = cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory");
                goto out;
            }
            for (uint64_t i = 0; i <= np; i++)
                ST_(coef_record)(pub + 44 * i, 0, m + i, (uint32_t)i, &FR_(R2));
            J.next = 0;
            if (bw->coef_rows) {
                cuzk_parallel_threads(nt, ST_(coef_thread), &J);
                if (!J.failed)
                    e = bw->coef_rows(bw, m, np + 1, J.first[n_ranges], pub, np + 1, eb);
                /* the rows past the public ones hold no records */
                if (!J.failed && !e)
                    e = bw->coef_rows(bw, rows, N - rows, n_coef, NULL, 0, eb);
            } else {
                ST_(u32)(bw, (uint32_t)n_coefs, eb);
                const uint64_t wave = nt;
                J.buf = calloc(wave, sizeof *J.buf);
                for (uint64_t w = 0; J.buf && w < wave; w++)
                    if (!(J.buf[w] = malloc(max_rec * 44 + 1)))
                        break;
                if (!J.buf || !J.buf[wave - 1]) {
                    e = cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory");
                } else {
                    for (J.base = 0; J.base < n_ranges && !J.failed && !e; J.base += wave) {
                        const uint64_t cnt = n_ranges - J.base < wave ? n_ranges - J.base : wave;
                        cuzk_parallel_for(cnt, nt, ST_(coef_wave), &J);
                        for (uint64_t w = 0; w < cnt && !J.failed && !e; w++) {
                            const uint64_t i = J.base + w;
                            e = bw->write(bw, J.buf[w], (J.cnt[i][0] + J.cnt[i][1]) * 44, eb);
                        }
                    }
                }
                if (!e && !J.failed)
                    e = bw->write(bw, pub, (np + 1) * 44, eb);
                for (uint64_t w = 0; J.buf && w < wave; w++)
                    free(J.buf[w]);
                free(J.buf);
                J.buf = NULL;
            }
            free(pub);
            if (!e && J.failed)
                e = cuzk_errf(eb, J.err, "%s", J.eb.msg);
            if (e || (e = bw->end(bw, eb)))
                goto out;
            if (info)
                info->ms_coefs = cuzk__now_ms() - t_coefs;
            t_phase += cuzk__now_ms() - t_coefs;
            continue;
        }
        if (sec == 9) {
            /* H's scalars come from tau and the domain alone: the wires' A, B, C values are
             * dead, and their bytes (96 a wire) go before H's points are written. */
            free(q);
            q = NULL;
            J.q = NULL;
        }
        const size_t pb = sec == 7 ? ST_G2_BYTES : ST_G1_BYTES;
        bw->begin(bw, (uint32_t)sec, eb);
        uint8_t *dest = bw->place ? bw->place(bw, (uint32_t)sec, (hi - lo) * pb) : NULL;
        if (!dest && !pts) {
            /* On a GPU, page-locked: the points come back by DMA at full bus speed. */
            cuzk_errbuf geb = {{0}};
            if (on_gpu &&
                cuzk_gpu_host_alloc(gpu.ctx, chunk_n * ST_G2_BYTES, (void **)&pts, &geb) == 0)
                pts_pinned = 1;
            else if (!(pts = malloc(chunk_n * ST_G2_BYTES))) {
                e = cuzk_errf(eb, CUZK_NO_MEMORY, "setup: out of memory (%zu-point chunks)",
                              chunk_n);
                goto out;
            }
        }
        for (uint64_t i0 = lo; i0 < hi; i0 += chunk_n) {
            size_t cnt = hi - i0 < chunk_n ? (size_t)(hi - i0) : chunk_n;
            uint8_t *out_pts = dest ? dest + (i0 - lo) * pb : pts;
            ST_(scalars) sj = {&S, q, sc, xs, ls, i0, cnt, sec, on_gpu && dest ? out_pts : NULL,
                               pb};
            cuzk_parallel_for((cnt + ST_BLOCK - 1) / ST_BLOCK, nt, ST_(scalars_block), &sj);
            e = sec == 7 ? ST_(put_g2)(bw, &fb2, &gpu, sc, cnt, k, out_pts, dest != NULL, nt, eb)
                         : ST_(put_g1)(bw, &fb1, &gpu, sc, cnt, k, out_pts, dest != NULL, nt, eb);
            if (e)
                goto out;
            ST_PROGRESS(cnt);
        }
        if ((e = bw->end(bw, eb)))
            goto out;
    }
#undef ST_PROGRESS
    if (info)
        info->ms_points = cuzk__now_ms() - t_phase;
    /* 10: MPC parameters: a zero circuit hash and no contributions. */
    {
        uint8_t zero[64] = {0};
        bw->begin(bw, 10, eb);
        bw->write(bw, zero, 64, eb);
        ST_(u32)(bw, 0, eb);
        bw->end(bw, eb);
    }
out:
    G1_(fb_free)(&fb1);
    G2_(fb_free)(&fb2);
    cuzk_gpu_fixed_base_free(gpu.g1);
    cuzk_gpu_fixed_base_free(gpu.g2);
    if (pts_pinned)
        cuzk_gpu_host_free(gpu.ctx, pts);
    else
        free(pts);
    cuzk_gpu_close(gpu.ctx);
    pthread_mutex_destroy(&J.mu);
    free(J.locks);
    free(J.cnt);
    free(J.first);
    free(q);
    free(xs);
    free(ls);
    free(sc);
    free(k);
    return e;
}

#undef ST_LOCAL_WIRES
#undef ST_FR
#undef ST_G1
#undef ST_G2
#undef ST_G1_BYTES
#undef ST_G2_BYTES
#undef ST_NAME
#undef ST_GPU_CURVE
#undef ST_MAX_LOG
#undef STN_
#undef STN
#undef ST_
#undef FR_
#undef G1_
#undef G2_
#undef FRT
