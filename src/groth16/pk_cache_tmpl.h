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
 *           h (G1), b2 (G2), row_ptr[0], row_ptr[1] (N + 1 each), coef[0], coef[1];
 *   tables  optional (format 3): the fixed-base tables of A, B1, C, H, B2 (copies 1 .. t - 1
 *           of each set whose header t is above 1, msm.h), hashed on their own (tab_hash) so
 *           a corrupt table is named as such. A cache without tables has t = 0 everywhere.
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
    uint64_t nv = pk->base.n_vars, N = pk->base.domain_size;
    size_t k = 0;
    out[k++] = (GT_(cache_arr)){(void **)&pk->ic, sizeof(G1A), (uint64_t)pk->base.n_public + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->a, sizeof(G1A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->b1, sizeof(G1A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->c, sizeof(G1A), nv - pk->base.n_public - 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->h, sizeof(G1A), N};
    out[k++] = (GT_(cache_arr)){(void **)&pk->b2, sizeof(G2A), nv};
    out[k++] = (GT_(cache_arr)){(void **)&pk->row_ptr[0], sizeof(uint64_t), N + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->row_ptr[1], sizeof(uint64_t), N + 1};
    out[k++] = (GT_(cache_arr)){(void **)&pk->coef[0], sizeof(GT_(coef)), pk->n_coef[0]};
    out[k++] = (GT_(cache_arr)){(void **)&pk->coef[1], sizeof(GT_(coef)), pk->n_coef[1]};
    return k;
}

/* The fixed-base table arrays (pointer slot, element size, count) of the sets with t > 1,
 * in the order A, B1, C, H, B2, given their copies t[5]. */
static size_t GT_(cache_tabs)(GT_(pk) *pk, const uint32_t t[5], GT_(cache_arr) out[5])
{
    uint64_t nv = pk->base.n_vars;
    uint64_t n1[5] = {nv, nv, nv - pk->base.n_public - 1, pk->base.domain_size, nv};
    size_t k = 0;
    for (int i = 0; i < 5; i++) {
        if (t[i] <= 1)
            continue;
        out[k++] = (GT_(cache_arr)){i < 4 ? (void **)&pk->tab[i].p : (void **)&pk->tab2.p,
                                    i < 4 ? sizeof(G1A) : sizeof(G2A), (t[i] - 1) * n1[i]};
    }
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
    h.n_vars = pk->base.n_vars;
    h.n_public = pk->base.n_public;
    h.domain_size = pk->base.domain_size;
    h.log_n = pk->base.log_n;
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
    for (int i = 0; i < 5; i++) {
        h.tab_t[i] = i < 4 ? pk->tab[i].t : pk->tab2.t;
        h.tab_c[i] = i < 4 ? pk->tab[i].c : pk->tab2.c;
    }
    h.tab_req = pk->tab_req;
    GT_(cache_arr) tarr[5];
    size_t nt = GT_(cache_tabs)(pk, h.tab_t, tarr);
    uint64_t len = 3 * sizeof(G1A) + 3 * sizeof(G2A);
    for (size_t i = 0; i < na; i++)
        len += arr[i].size * arr[i].n;
    for (size_t i = 0; i < nt; i++)
        len += tarr[i].size * tarr[i].n;
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
    uint64_t th = CUZK__CACHE_SEED;
    for (size_t i = 0; i < nt && !bad; i++) {
        size_t n = tarr[i].size * tarr[i].n;
        bad = cuzk__cache_io(fd, *tarr[i].p, n, off, 1, &th);
        off += n;
    }
    if (!bad) {
        h.payload_hash = ph;
        h.tab_hash = th;
        h.hdr_hash = cuzk__hash64(CUZK__CACHE_SEED, &h, offsetof(cuzk__cache_hdr, hdr_hash));
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
    cuzk__pk_base_init(&pk->base, &GT_(prover_ops));
    pk->base.n_vars = h->n_vars;
    pk->base.n_public = h->n_public;
    pk->base.domain_size = h->domain_size;
    pk->base.log_n = h->log_n;
    pk->n_coef[0] = h->n_coef[0];
    pk->n_coef[1] = h->n_coef[1];
    cuzk_err e = CUZK_OK;
    if (h->g1_bytes != sizeof(G1A) || h->g2_bytes != sizeof(G2A) ||
        h->coef_bytes != sizeof(GT_(coef)) || h->fr_bytes != sizeof(FRT) ||
        h->n_public >= h->n_vars || h->log_n > 32 || h->domain_size != (1ull << h->log_n))
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: inconsistent dimensions in the header", path);
    /* Tables: each set none (t = 0) or a consistent (copies, window) pair of msm.h. */
    for (int i = 0; i < 5 && !e; i++) {
        uint32_t t = h->tab_t[i], c = h->tab_c[i];
        unsigned ok = i < 4 ? G1_(msm_tab_copies)(t, c) : G2_(msm_tab_copies)(t, c);
        if (t ? ok != t || t > 256 : c != 0)
            e = cuzk_errf(eb, CUZK_BAD_FORMAT,
                          "%s: inconsistent precomputed table %d in the header (%u copies, "
                          "window %u)", path, i, t, c);
    }
    GT_(cache_arr) arr[10], tarr[5];
    size_t na = GT_(cache_arrays)(pk, arr), nt = e ? 0 : GT_(cache_tabs)(pk, h->tab_t, tarr);
    uint64_t len = 3 * sizeof(G1A) + 3 * sizeof(G2A);
    for (size_t i = 0; i < na + nt && !e; i++) {
        const GT_(cache_arr) *a = i < na ? &arr[i] : &tarr[i - na];
        if (a->n > (UINT64_MAX / 8) / a->size || len > UINT64_MAX / 4)
            e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: array %zu is too long", path, i);
        else
            len += a->size * a->n;
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
        *arr[i].p = cuzk__big_alloc(bytes);
        if (!*arr[i].p)
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: cannot allocate %zu bytes", path, bytes);
        else if (cuzk__cache_io(fd, *arr[i].p, bytes, off, 0, &ph))
            e = cuzk_errf(eb, CUZK_TRUNCATED, "%s: short read", path);
        off += bytes;
    }
    /* The tables (read-only, and most of the file with many copies) are mapped rather than
     * read: no copy and no zero-filled pages, only the hash pass over them (BLS12-381 2^14
     * constraints, 4 copies: the 33 MiB of tables added ~18 ms to the load read into malloc'd
     * memory, ~8 ms mapped). The file is only ever replaced by rename, so the mapped inode
     * does not change under the key. */
    uint64_t th = CUZK__CACHE_SEED, tlen = 0;
    for (size_t i = 0; i < nt; i++)
        tlen += tarr[i].size * tarr[i].n;
    if (!e && tlen) {
        uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), moff = off & ~(pg - 1);
        size_t mlen = (size_t)(off - moff + tlen);
        void *m = mmap(NULL, mlen, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)moff);
        if (m == MAP_FAILED) {
            e = cuzk_errf(eb, CUZK_IO, "%s: cannot map the precomputed tables: %s", path,
                          strerror(errno));
        } else {
            pk->tab_map = m;
            pk->tab_map_len = mlen;
            uint8_t *q = (uint8_t *)m + (off - moff);
            for (size_t i = 0; i < nt && !e; i++) {
                size_t bytes = tarr[i].size * tarr[i].n;
                *tarr[i].p = q;
                if (cuzk__cache_hash_mem(q, bytes, &th))
                    e = cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", path);
                q += bytes;
            }
        }
        off += tlen;
    }
    if (!e && ph != h->payload_hash)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: the payload hash does not match (corrupt file)",
                      path);
    if (!e && th != h->tab_hash)
        e = cuzk_errf(eb, CUZK_BAD_FORMAT,
                      "%s: the precomputed tables' hash does not match (corrupt file)", path);
    /* The tables are part of the key from here on (pk_free releases them on error). */
    for (int i = 0; i < 5; i++) {
        if (i < 4) {
            pk->tab[i].t = h->tab_t[i];
            pk->tab[i].c = h->tab_c[i];
        } else {
            pk->tab2.t = h->tab_t[i];
            pk->tab2.c = h->tab_c[i];
        }
    }
    pk->tab_req = h->tab_req;
    /* The CSR index must be monotone and end at the coefficient count, and every coefficient
     * must name a witness signal: the prover indexes with them. */
    for (int m = 0; m < 2 && !e; m++) {
        const uint64_t *rp = pk->row_ptr[m];
        int ok = rp[0] == 0 && rp[pk->base.domain_size] == pk->n_coef[m];
        for (uint64_t r = 0; r < pk->base.domain_size && ok; r++)
            ok = rp[r] <= rp[r + 1];
        for (uint64_t i = 0; i < pk->n_coef[m] && ok; i++)
            ok = pk->coef[m][i].signal < pk->base.n_vars;
        if (!ok)
            e = cuzk_errf(eb, CUZK_BAD_FORMAT, "%s: inconsistent coefficient index", path);
    }
    if (!e && (e = FR_(domain_init)(&pk->dom, pk->base.log_n)))
        e = cuzk_errf(eb, e, "%s: cannot set up the evaluation domain of size 2^%u", path,
                      pk->base.log_n);
    if (e) {
        GT_(pk_free)(pk);
        return e;
    }
    /* As GT_(pk_load) counts: ic + a + b1 + c + h = 3 n_vars + N G1 points. */
    pk->bytes = sizeof *pk + (3 * (uint64_t)h->n_vars + h->domain_size) * sizeof(G1A) +
                (uint64_t)h->n_vars * sizeof(G2A) + (pk->n_coef[0] + pk->n_coef[1]) * sizeof(GT_(coef)) +
                2 * ((uint64_t)h->domain_size + 1) * sizeof(uint64_t) +
                2 * (uint64_t)h->domain_size * sizeof(FRT);
    for (size_t i = 0; i < nt; i++)
        pk->bytes += tarr[i].size * tarr[i].n;
    *out = pk;
    return CUZK_OK;
}
