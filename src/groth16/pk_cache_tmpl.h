/*
 * The preprocessed proving-key cache for one curve (included by groth16.c after
 * groth16_tmpl.h, with the same GP parameters).
 *
 * Loading a zkey decodes every point from snarkjs's layout, checks it is on the curve and
 * groups the coefficients by row: CPU work proportional to the key. The cache file holds the
 * result exactly as GT_(pk) keeps it in memory (Montgomery limbs, CSR coefficient arrays),
 * so a later load is a few large reads at disk speed. Layout (little-endian, 8-byte units):
 *
 *   header  cuzk__cache_hdr (groth16.c): magic, format version, curve, the key's dimensions and
 *           array lengths, the zkey's identity (size, mtime in ns, inode) and a 64-bit hash
 *           of the payload, then a hash of the header itself;
 *   payload alpha1 beta1 delta1 (G1) beta2 gamma2 delta2 (G2), then the arrays ic, a, b1, c,
 *           h (G1), b2 (G2), row_ptr[0], row_ptr[1] (N + 1 each), coef[0], coef[1].
 *
 * A cache is used only when its zkey identity matches the zkey on disk now (a rewritten zkey
 * makes it stale), its dimensions are consistent, its length is exact and both hashes match;
 * anything else is an error naming the reason, and the caller falls back to the zkey. The
 * points were validated when the zkey was parsed and the hash guards them since; a proof is
 * still self-verified, so a cache can cost a failed proof but never yield a wrong one.
 * Writes go to a temporary file renamed into place, so readers never see a partial cache.
 * Arrays move in 32 MiB chunks on all cores (groth16.c's cuzk__cache_io), each chunk hashed
 * on its own and the chunk hashes chained per array.
 */


/* The arrays of the payload in order: pointer slot, element size, count. */
typedef struct {
    void **p;
    size_t size;
    uint64_t n;
} GT_(cache_arr);

static size_t GT_(cache_arrays)(GT_(pk) *pk, GT_(cache_arr) out[10])
{
    uint64_t nv = pk->n_vars, N = pk->domain_size;
    size_t k = 0;
    out[k++] = (GT_(cache_arr)){(void **)&pk->ic, sizeof(G1A), (uint64_t)pk->n_public + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->a, sizeof(G1A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->b1, sizeof(G1A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->c, sizeof(G1A), nv - pk->n_public - 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->h, sizeof(G1A), N};
    out[k++] = (GT_(cache_arr)){(void **)&pk->b2, sizeof(G2A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->row_ptr[0], sizeof(uint64_t), N + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->row_ptr[1], sizeof(uint64_t), N + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->coef[0], sizeof(GT_(coef)), pk->n_coef[0]};
    out[k++] = (GT_(cache_arr)){(void **)&pk->coef[1], sizeof(GT_(coef)), pk->n_coef[1]};
    return k;
}

static cuzk_err GT_(cache_save)(GT_(pk) *pk, const char *path, const cuzk__zkey_id *id,
                                cuzk_errbuf *eb)
{
    cuzk__cache_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "CUZKPKC", 8);
    h.version = CUZK__CACHE_VERSION;
    h.curve = GP_CURVE;
    h.n_vars = pk->n_vars;
    h.n_public = pk->n_public;
    h.domain_size = pk->domain_size;
    h.log_n = pk->log_n;
    h.g1_bytes = sizeof(G1A);
    h.g2_bytes = sizeof(G2A);
    h.coef_bytes = sizeof(GT_(coef));
    h.fr_bytes = sizeof(FRT);
    h.zkey_size = id->size;
    h.zkey_mtime_ns = id->mtime_ns;
    h.zkey_ino = id->ino;
    h.n_coef[0] = pk->n_coef[0];
    h.n_coef[1] = pk->n_coef[1];
    GT_(cache_arr) arr[10];
    size_t na = GT_(cache_arrays)(pk, arr);
    uint64_t len = 3 * sizeof(G1A) + 3 * sizeof(G2A);
    for (size_t i = 0; i < na; i++)
        len += arr[i].size * arr[i].n;
    h.payload_len = len;

    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        cuzk_err e = cuzk_errf(eb, CUZK_IO, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return e;
    }
    /* The header goes first with the payload hash still 0, then again once it is known. */
    uint64_t ph = CUZK__CACHE_SEED, off = sizeof h;
    int bad = 0;
    void *hp[6] = {&pk->alpha1, &pk->beta1, &pk->delta1, &pk->beta2, &pk->gamma2, &pk->delta2};
    for (int i = 0; i < 6 && !bad; i++) {
        size_t n = i < 3 ? sizeof(G1A) : sizeof(G2A);
        bad = cuzk__cache_io(fd, hp[i], n, off, 1, &ph);
        off += n;
    }
    for (size_t i = 0; i < na && !bad; i++) {
        size_t n = arr[i].size * arr[i].n;
        bad = cuzk__cache_io(fd, *arr[i].p, n, off, 1, &ph);
        off += n;
    }
    if (!bad) {
        h.payload_hash = ph;
        h.hdr_hash = cuzk__cache_hash(CUZK__CACHE_SEED, &h, offsetof(cuzk__cache_hdr, hdr_hash));
        bad = pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || fsync(fd) != 0;
    }
    int saved = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    cuzk_err e = CUZK_OK;
    if (bad) {
        e = cuzk_errf(eb, CUZK_IO, "cannot write %s: %s", tmp, strerror(saved ? saved : EIO));
        unlink(tmp);
    } else if (rename(tmp, path) != 0) {
        e = cuzk_errf(eb, CUZK_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return e;
}

static cuzk_err GT_(cache_load)(GT_(pk) **out, int fd, const cuzk__cache_hdr *h,
                                uint64_t file_len, const char *path, cuzk_errbuf *eb)
{
    *out = NULL;
    GT_(pk) *pk = calloc(1, sizeof *pk);
    if (!pk)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    for (int d = 0; d < CUZK_MAX_DEVICES; d++)
        pthread_mutex_init(&pk->dev[d].mu, NULL);
    pk->n_vars = h->n_vars;
    pk->n_public = h->n_public;
    pk->domain_size = h->domain_size;
    pk->log_n = h->log_n;
    pk->n_coef[0] = h->n_coef[0];
    pk->n_coef[1] = h->n_coef[1];
    cuzk_err e = CUZK_OK;
    if (h->g1_bytes != sizeof(G1A) || h->g2_bytes != sizeof(G2A) ||
        h->coef_bytes != sizeof(GT_(coef)) || h->fr_bytes != sizeof(FRT) ||
        h->n_public >= h->n_vars || h->log_n > 32 || h->domain_size != (1ull << h->log_n))
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: inconsistent dimensions in the header", path);
    GT_(cache_arr) arr[10];
    size_t na = GT_(cache_arrays)(pk, arr);
    uint64_t len = 3 * sizeof(G1A) + 3 * sizeof(G2A);
    for (size_t i = 0; i < na && !e; i++) {
        if (arr[i].n > (UINT64_MAX / 2) / arr[i].size)
            e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: array %zu is too long", path, i);
        else
            len += arr[i].size * arr[i].n;
    }
    if (!e && (len != h->payload_len || file_len != sizeof *h + len))
        e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: %" PRIu64 " bytes, expected %" PRIu64, path,
                      file_len, (uint64_t)sizeof *h + len);
    uint64_t ph = CUZK__CACHE_SEED, off = sizeof *h;
    void *hp[6] = {&pk->alpha1, &pk->beta1, &pk->delta1, &pk->beta2, &pk->gamma2, &pk->delta2};
    for (int i = 0; i < 6 && !e; i++) {
        size_t n = i < 3 ? sizeof(G1A) : sizeof(G2A);
        if (cuzk__cache_io(fd, hp[i], n, off, 0, &ph))
            e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: short read", path);
        off += n;
    }
    for (size_t i = 0; i < na && !e; i++) {
        size_t bytes = arr[i].size * arr[i].n;
        *arr[i].p = malloc(bytes ? bytes : 1);
        if (!*arr[i].p)
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: cannot allocate %zu bytes", path, bytes);
        else if (cuzk__cache_io(fd, *arr[i].p, bytes, off, 0, &ph))
            e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: short read", path);
        off += bytes;
    }
    if (!e && ph != h->payload_hash)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: the payload hash does not match (corrupt file)",
                      path);
    /* The CSR index must be monotone and end at the coefficient count, and every coefficient
     * must name a witness signal: the prover indexes with them. */
    for (int m = 0; m < 2 && !e; m++) {
        const uint64_t *rp = pk->row_ptr[m];
        int ok = rp[0] == 0 && rp[pk->domain_size] == pk->n_coef[m];
        for (uint64_t r = 0; r < pk->domain_size && ok; r++)
            ok = rp[r] <= rp[r + 1];
        for (uint64_t i = 0; i < pk->n_coef[m] && ok; i++)
            ok = pk->coef[m][i].signal < pk->n_vars;
        if (!ok)
            e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: inconsistent coefficient index", path);
    }
    if (!e && (e = FR_(domain_init)(&pk->dom, pk->log_n)))
        e = cuzk_errf(eb, e, "%s: cannot set up the evaluation domain of size 2^%u", path,
                      pk->log_n);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    /* As GT_(pk_load) counts: ic + a + b1 + c + h = 3 n_vars + N G1 points. */
    pk->bytes = sizeof *pk + (3 * (uint64_t)h->n_vars + h->domain_size) * sizeof(G1A) +
                (uint64_t)h->n_vars * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * ((uint64_t)h->domain_size + 1) * sizeof(uint64_t) + h->domain_size * sizeof(FRT);
    *out = pk;
    return CUZK_OK;
}
