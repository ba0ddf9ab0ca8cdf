/* A proving key built from the setup's zkey byte stream (gen_internal.h) without a file: the
 * sink places every section where cuzk_pk_load would put the zkey's, so the key is the one
 * `cuzk setup` writes and cuzk_pk_load reads. Points are copied as they come (the stream is
 * snarkjs's layout, the key's in-memory one); coefficient records arrive row by row, so the
 * rows' CSR index is built as they come. Included by groth16.c after groth16_tmpl.h, with GP
 * defined. */

typedef struct {
    cuzk__zkey_sink base; /* first: the setup calls through it */
    GT_(pk) *pk;
    uint32_t sec;
    uint64_t off;       /* bytes of the section so far */
    uint8_t hdr[1024];  /* section 2 */
    uint8_t rec[64];    /* section 4: the count, then one record at a time */
    size_t rec_len;
    int counted;
    uint64_t next_row[2], fill[2]; /* CSR: rows below next_row are closed */
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

/* Closes the CSR rows of matrix m below `row`. */
static void GT_(gen_rows_to)(GT_(gen_sink) *g, int m, uint64_t row)
{
    for (; g->next_row[m] < row; g->next_row[m]++)
        g->pk->row_ptr[m][g->next_row[m] + 1] = g->fill[m];
}

static void GT_(gen_record)(GT_(gen_sink) *g, cuzk_errbuf *eb)
{
    GT_(pk) *pk = g->pk;
    uint32_t m = cuzk_le32(g->rec), row = cuzk_le32(g->rec + 4), sig = cuzk_le32(g->rec + 8);
    if (m > 1 || row >= pk->domain_size || sig >= pk->n_vars || row < g->next_row[m] ||
        g->fill[m] >= pk->n_coef[m]) {
        GT_(gen_fail)(g, eb, "coefficient record out of order");
        return;
    }
    GT_(gen_rows_to)(g, (int)m, row);
    GT_(coef) *dst = &pk->coef[m][g->fill[m]++];
    memset(dst, 0, sizeof *dst);
    dst->signal = sig;
    memcpy(dst->value.l, g->rec + 12, sizeof dst->value.l);
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
    pk->n_vars = cuzk_le32(p);
    pk->n_public = cuzk_le32(p + 4);
    pk->domain_size = cuzk_le32(p + 8);
    p += 12;
    while (((uint64_t)1 << pk->log_n) < pk->domain_size)
        pk->log_n++;
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
    uint64_t nv = pk->n_vars, N = pk->domain_size;
    if (pk->n_public + 1 > nv)
        return GT_(gen_fail)(g, eb, "more public signals than wires");
    pk->ic = malloc((pk->n_public + 1) * sizeof(G1A));
    pk->a = malloc(nv * sizeof(G1A));
    pk->b1 = malloc(nv * sizeof(G1A));
    pk->b2 = malloc(nv * sizeof(G2A));
    pk->c = malloc((nv - pk->n_public - 1 ? nv - pk->n_public - 1 : 1) * sizeof(G1A));
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
    GT_(pk) *pk = g->pk;
    const uint8_t *p = data;
    if (g->err)
        return g->err;
    void *dst = NULL;
    uint64_t cap = 0, nv = pk->n_vars;
    switch (g->sec) {
    case 2:
        if (g->off + n > sizeof g->hdr)
            return GT_(gen_fail)(g, eb, "header too long");
        memcpy(g->hdr + g->off, p, n);
        g->off += n;
        return CUZK_OK;
    case 4:
        for (size_t i = 0; i < n && !g->err; i++) {
            g->rec[g->rec_len++] = p[i];
            if (!g->counted && g->rec_len == 4) {
                g->counted = 1;
                g->rec_len = 0;
            } else if (g->rec_len == 12 + 32) {
                GT_(gen_record)(g, eb);
                g->rec_len = 0;
            }
        }
        return g->err;
    case 3:
        dst = pk->ic, cap = (pk->n_public + 1) * sizeof(G1A);
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
        dst = pk->c, cap = (nv - pk->n_public - 1) * sizeof(G1A);
        break;
    case 9:
        dst = pk->h, cap = (uint64_t)pk->domain_size * sizeof(G1A);
        break;
    default:
        return CUZK_OK; /* 1 (protocol) and 10 (contributions): nothing the key holds */
    }
    if (!dst || g->off + n > cap)
        return GT_(gen_fail)(g, eb, "a point section is longer than the header says");
    memcpy((uint8_t *)dst + g->off, p, n);
    g->off += n;
    return CUZK_OK;
}

static cuzk_err GT_(gen_end)(cuzk__zkey_sink *s, cuzk_errbuf *eb)
{
    GT_(gen_sink) *g = (GT_(gen_sink) *)s;
    if (g->err)
        return g->err;
    if (g->sec == 2)
        return GT_(gen_header)(g, eb);
    if (g->sec == 4) {
        for (int m = 0; m < 2; m++) {
            if (g->fill[m] != g->pk->n_coef[m])
                return GT_(gen_fail)(g, eb, "coefficient count mismatch");
            GT_(gen_rows_to)(g, m, g->pk->domain_size);
        }
    }
    return CUZK_OK;
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
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        pthread_mutex_init(&pk->dev[d].mu, NULL);
    g->base.begin = GT_(gen_begin);
    g->base.write = GT_(gen_write);
    g->base.end = GT_(gen_end);
    g->pk = pk;
    cuzk_err e = cuzk__setup_run(src, &g->base, o, info, eb);
    if (!e && (e = FR_(domain_init)(&pk->dom, pk->log_n)))
        e = cuzk_errf(eb, e, "generated key: cannot set up the evaluation domain of size 2^%u",
                      pk->log_n);
    free(g);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    uint64_t nv = pk->n_vars, N = pk->domain_size;
    /* As GT_(pk_load) counts. */
    pk->bytes = sizeof *pk + (3 * nv + N) * sizeof(G1A) +
                nv * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * (N + 1) * sizeof(uint64_t) + 2 * N * sizeof(FRT);
    *out = pk;
    return CUZK_OK;
}
