/* A proving key built from the setup's zkey stream (gen_internal.h) without a file: the
 * header arrives as bytes, the point sections are written in place into the key's arrays (the
 * stream is snarkjs's layout, the key's in-memory one) and the coefficient records into the
 * key's CSR arrays, so the key is the one `cuzk setup` writes and cuzk_pk_load reads. Included
 * by groth16.c after groth16_tmpl.h, with GP defined. */

typedef struct {
    cuzk__zkey_sink base; /* first: the setup calls through it */
    GT_(pk) *pk;
    uint32_t sec;
    uint64_t off;      /* bytes of the section so far */
    uint8_t hdr[1024]; /* section 2 */
    cuzk_err err;
} GT_(gen_sink);

static cuzk_err GT_(gen_fail)(GT_(gen_sink) *g, cuzk_errbuf *eb, const char *what)
{
    if (!g->err)
        g->err = cuzk_errf(eb, CUZK_INTERNAL, "generated key: %s", what);
    return g->err;
}

static cuzk_err GT_(gen_begin)(cuzk__zkey_sink *s, uint32_t id, cuzk_errbuf *eb)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    g->sec = id;
    g->off = 0;
    if (id == 4) {
        GT_(pk) *pk = g->pk;
        if (!pk->row_ptr[0])
            return GT_(gen_fail)(g, eb, "coefficients before the header");
        for (int m = 0; m < 2; m++) {
            pk->n_coef[m] = s->n_coef[m];
            pk->coef[m] = malloc((s->n_coef[m] ? s->n_coef[m] : 1) * sizeof(GT_(coef)));
            if (!pk->coef[m] && !g->err)
                g->err = cuzk_errf(eb, CUZK_NO_MEMORY, "generated key: out of memory");
        }
    }
    return g->err;
}

/* Rows row0 .. row0 + n_rows - 1 of the CSR arrays from their records; thread-safe for
 * disjoint rows (each writes its own rows' entries and records). */
static cuzk_err GT_(gen_coef_rows)(cuzk__zkey_sink *s, uint64_t row0, uint64_t n_rows,
                                   const uint64_t first[2], const uint8_t *rec, uint64_t n_rec,
                                   cuzk_errbuf *eb)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    GT_(pk) *pk = g->pk;
    uint64_t fill[2] = {first[0], first[1]}, k = 0;
    if (g->err || !pk->coef[0] || !pk->coef[1] || row0 + n_rows > pk->base.domain_size)
        return cuzk_errf(eb, CUZK_INTERNAL, "generated key: coefficient rows out of place");
    for (uint64_t row = row0; row < row0 + n_rows; row++) {
        for (; k < n_rec && cuzk_le32(rec + 44 * k + 4) == row; k++) {
            const uint8_t *p = rec + 44 * k;
            uint32_t m = cuzk_le32(p), sig = cuzk_le32(p + 8);
            if (m > 1 || sig >= pk->base.n_vars || fill[m] >= pk->n_coef[m])
                return cuzk_errf(eb, CUZK_INTERNAL, "generated key: coefficient record %llu "
                                 "of row %llu out of range", (unsigned long long)k,
                                 (unsigned long long)row);
            GT_(coef) *dst = &pk->coef[m][fill[m]++];
            memset(dst, 0, sizeof *dst);
            dst->signal = sig;
            memcpy(dst->value.l, p + 12, sizeof dst->value.l);
        }
        pk->row_ptr[0][row + 1] = fill[0];
        pk->row_ptr[1][row + 1] = fill[1];
    }
    if (k != n_rec)
        return cuzk_errf(eb, CUZK_INTERNAL, "generated key: coefficient records out of order");
    return CUZK_OK;
}

static cuzk_err GT_(gen_header)(GT_(gen_sink) *g, cuzk_errbuf *eb)
{
    GT_(pk) *pk = g->pk;
    const uint8_t *p = g->hdr;
    uint32_t n8q = cuzk_le32(p);
    if (g->off < 4 || n8q != sizeof(G1A) / 2 || g->off != 4 + n8q + 4 + 32 + 12 +
                                                           3 * sizeof(G1A) + 3 * sizeof(G2A))
        return GT_(gen_fail)(g, eb, "unexpected header");
    p += 4 + n8q + 4 + 32;
    pk->base.n_vars = cuzk_le32(p);
    pk->base.n_public = cuzk_le32(p + 4);
    pk->base.domain_size = cuzk_le32(p + 8);
    p += 12;
    while (((uint64_t)1 << pk->base.log_n) < pk->base.domain_size)
        pk->base.log_n++;
    cuzk_errbuf peb;
    if (G1_(from_snarkjs)(&pk->alpha1, p, CUZK_EC_CHECK_CURVE, &peb) ||
        G1_(from_snarkjs)(&pk->beta1, p + sizeof(G1A), CUZK_EC_CHECK_CURVE, &peb) ||
        G2_(from_snarkjs)(&pk->beta2, p + 2 * sizeof(G1A), CUZK_EC_CHECK_CURVE, &peb) ||
        G2_(from_snarkjs)(&pk->gamma2, p + 2 * sizeof(G1A) + sizeof(G2A), CUZK_EC_CHECK_CURVE,
                          &peb) ||
        G1_(from_snarkjs)(&pk->delta1, p + 2 * sizeof(G1A) + 2 * sizeof(G2A),
                          CUZK_EC_CHECK_CURVE, &peb) ||
        G2_(from_snarkjs)(&pk->delta2, p + 3 * sizeof(G1A) + 2 * sizeof(G2A),
                          CUZK_EC_CHECK_CURVE, &peb))
        return GT_(gen_fail)(g, eb, "a header point is not on the curve");
    uint64_t nv = pk->base.n_vars, N = pk->base.domain_size;
    if (pk->base.n_public + 1 > nv)
        return GT_(gen_fail)(g, eb, "more public signals than wires");
    pk->ic = malloc((pk->base.n_public + 1) * sizeof(G1A));
    pk->a = malloc(nv * sizeof(G1A));
    pk->b1 = malloc(nv * sizeof(G1A));
    pk->b2 = malloc(nv * sizeof(G2A));
    pk->c = malloc((nv - pk->base.n_public - 1 ? nv - pk->base.n_public - 1 : 1) * sizeof(G1A));
    pk->h = malloc(N * sizeof(G1A));
    pk->row_ptr[0] = calloc(N + 1, sizeof(uint64_t));
    pk->row_ptr[1] = calloc(N + 1, sizeof(uint64_t));
    if (!pk->ic || !pk->a || !pk->b1 || !pk->b2 || !pk->c || !pk->h || !pk->row_ptr[0] ||
        !pk->row_ptr[1])
        return g->err = cuzk_errf(eb, CUZK_NO_MEMORY,
                                  "generated key: out of memory for %llu wires",
                                  (unsigned long long)nv);
    return CUZK_OK;
}

static cuzk_err GT_(gen_write)(cuzk__zkey_sink *s, const void *data, size_t n, cuzk_errbuf *eb)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    if (g->err)
        return g->err;
    switch (g->sec) {
    case 1:
    case 10:
        return CUZK_OK; /* protocol and contributions: nothing the key holds */
    case 2:
        if (g->off + n > sizeof g->hdr)
            return GT_(gen_fail)(g, eb, "header too long");
        memcpy(g->hdr + g->off, data, n);
        g->off += n;
        return CUZK_OK;
    default:
        return GT_(gen_fail)(g, eb, "a section came as bytes, not in place");
    }
}

/* Where point section id goes: its array in the key, of exactly `bytes` bytes. */
static uint8_t *GT_(gen_place)(cuzk__zkey_sink *s, uint32_t id, uint64_t bytes)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    GT_(pk) *pk = g->pk;
    const uint64_t nv = pk->base.n_vars, N = pk->base.domain_size;
    void *dst = NULL;
    uint64_t cap = 0;
    switch (id) {
    case 3:
        dst = pk->ic, cap = (pk->base.n_public + 1) * sizeof(G1A);
        break;
    case 5:
        dst = pk->a, cap = nv * sizeof(G1A);
        break;
    case 6:
        dst = pk->b1, cap = nv * sizeof(G1A);
        break;
    case 7:
        dst = pk->b2, cap = nv * sizeof(G2A);
        break;
    case 8:
        dst = pk->c, cap = (nv - pk->base.n_public - 1) * sizeof(G1A);
        break;
    case 9:
        dst = pk->h, cap = N * sizeof(G1A);
        break;
    default:
        break;
    }
    if (g->err || !dst || bytes != cap)
        return NULL; /* then its bytes come through write, which fails */
    g->off = bytes;
    return dst;
}

static cuzk_err GT_(gen_end)(cuzk__zkey_sink *s, cuzk_errbuf *eb)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    if (g->err)
        return g->err;
    if (g->sec == 2)
        return GT_(gen_header)(g, eb);
    if (g->sec == 4) {
        const uint64_t N = g->pk->base.domain_size;
        for (int m = 0; m < 2; m++)
            if (g->pk->row_ptr[m][N] != g->pk->n_coef[m])
                return GT_(gen_fail)(g, eb, "coefficient count mismatch");
    }
    return CUZK_OK;
}

/* The key's evaluation domain, made on its own thread while the setup runs (its twiddles are
 * one sequential product each: seconds at 2^27). */
typedef struct {
    FR_(domain) dom;
    unsigned log_n;
    cuzk_err err;
} GT_(gen_domain);

static void *GT_(gen_domain_thread)(void *arg)
{
    GT_(gen_domain) *d = arg;
    d->err = FR_(domain_init)(&d->dom, d->log_n);
    return NULL;
}

/* Runs the setup of `src` into a new key. */
static cuzk_err GT_(pk_generate)(GT_(pk) **out, const cuzk__circuit_source *src,
                                 const cuzk_setup_opts *o, cuzk_setup_info *info,
                                 cuzk_errbuf *eb)
{
    *out = NULL;
    GT_(pk) *pk = calloc(1, sizeof *pk);
    GT_(gen_sink) *g = calloc(1, sizeof *g);
    if (!pk || !g) {
        free(pk);
        free(g);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "generated key: out of memory");
    }
    cuzk__pk_base_init(&pk->base, &GT_(prover_ops));
    g->base.begin = GT_(gen_begin);
    g->base.write = GT_(gen_write);
    g->base.end = GT_(gen_end);
    g->base.coef_rows = GT_(gen_coef_rows);
    g->base.place = GT_(gen_place);
    g->pk = pk;
    /* The setup's domain: the least power of two above the constraints and public rows. */
    GT_(gen_domain) dom = {.log_n = 0, .err = CUZK_OK};
    while (((uint64_t)1 << dom.log_n) < src->n_constraints + src->n_public + 1)
        dom.log_n++;
    pthread_t dom_thread;
    const int dom_async = pthread_create(&dom_thread, NULL, GT_(gen_domain_thread), &dom) == 0;
    cuzk_err e = cuzk__setup_run(src, &g->base, o, info, eb);
    if (dom_async)
        pthread_join(dom_thread, NULL);
    else
        GT_(gen_domain_thread)(&dom);
    if (!dom.err)
        pk->dom = dom.dom;
    if (!e && (dom.err || dom.log_n != pk->base.log_n))
        e = cuzk_errf(eb, dom.err ? dom.err : CUZK_INTERNAL,
                      "generated key: cannot set up the evaluation domain of size 2^%u",
                      pk->base.log_n);
    free(g);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    uint64_t nv = pk->base.n_vars, N = pk->base.domain_size;
    /* As GT_(pk_load) counts. */
    pk->bytes = sizeof *pk + (3 * nv + N) * sizeof(G1A) +
                nv * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * (N + 1) * sizeof(uint64_t) + 2 * N * sizeof(FRT);
    *out = pk;
    return CUZK_OK;
}
