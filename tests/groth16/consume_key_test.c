/* cuzk_prove_opts.consume_key (the command line's one-shot proof frees each part of the key
 * once the proof is done with it): on both curves, with r = s = 0 the consuming proof is
 * byte for byte the proof of a key kept whole, for a key loaded from the zkey, one with
 * fixed-base tables (malloc'd) and one from a key cache (tables in a mapping); the proof
 * verifies against the verification key snarkjs wrote for the fixture. A witness refused
 * before the proof starts leaves the key whole; after a consuming proof, cuzk_prove and
 * cuzk_prove_begin with that key fail with CUZK_INVALID_ARGUMENT and say why, and
 * cuzk_pk_free still frees it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "testutil.h"

typedef struct {
    const char *dir;
    cuzk_wtns w;
    uint8_t *wbuf;
    cuzk_vk vk;
    cuzk_proof want; /* r = s = 0, from a key that is not consumed */
} fixture;

static cuzk_err prove(cuzk_proof *out, const cuzk_pk *pk, const fixture *fx, int consume,
                      int zero, uint64_t n_witness, cuzk_errbuf *eb)
{
    cuzk_prove_opts o = {0};
    o.zero_rs = zero;
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    o.consume_key = consume;
    return cuzk_prove(out, pk, fx->w.values, n_witness, &o, NULL, eb);
}

static cuzk_pk *load_zkey(const fixture *fx)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/fixtures/%s/poseidon.zkey", fx->dir);
    cuzk_errbuf eb = {{0}};
    cuzk_zkey zk;
    cuzk_pk *pk = NULL;
    CHECK_MSG(cuzk_zkey_open(&zk, tu_src_path(rel), &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(cuzk_pk_load(&pk, &zk, 2, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_zkey_close(&zk);
    return pk;
}

static int verifies(const fixture *fx, const cuzk_proof *p)
{
    cuzk_errbuf eb = {{0}};
    return cuzk_verify(&fx->vk, fx->w.values + 32, fx->vk.n_public, p, &eb) == CUZK_OK;
}

/* One consuming proof with pk (freed here): the bytes of fx->want, then refusals. */
static void consume_and_refuse(const fixture *fx, cuzk_pk *pk, const char *what)
{
    cuzk_errbuf eb = {{0}};
    cuzk_proof p;
    memset(&p, 0, sizeof p);
    CHECK_MSG(prove(&p, pk, fx, 1, 1, fx->w.n_witness, &eb) == CUZK_OK, "%s %s: %s", fx->dir,
              what, eb.msg);
    CHECK_MSG(memcmp(&p, &fx->want, sizeof p) == 0, "%s %s: the consuming proof differs",
              fx->dir, what);
    CHECK_MSG(verifies(fx, &p), "%s %s: the consuming proof does not verify", fx->dir, what);
    /* The key is spent: a second proof, or a staged one, is refused before any work. */
    memset(&eb, 0, sizeof eb);
    CHECK_MSG(prove(&p, pk, fx, 0, 1, fx->w.n_witness, &eb) == CUZK_INVALID_ARGUMENT,
              "%s %s: a second proof with a consumed key", fx->dir, what);
    CHECK_MSG(strstr(eb.msg, "consumed"), "%s %s: %s", fx->dir, what, eb.msg);
    CHECK(prove(&p, pk, fx, 1, 0, fx->w.n_witness, &eb) == CUZK_INVALID_ARGUMENT);
    cuzk_prove_state *s = NULL;
    cuzk_prove_opts o = {0};
    o.nthreads = 2;
    CHECK(cuzk_prove_begin(&s, pk, fx->w.values, fx->w.n_witness, &o, &eb) ==
              CUZK_INVALID_ARGUMENT &&
          !s);
    cuzk_prove_state_free(s);
    cuzk_pk_free(pk);
}

static void one_curve(const char *dir, const char *tmp)
{
    fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.dir = dir;
    char rel[256];
    cuzk_errbuf eb = {{0}};
    size_t n;
    snprintf(rel, sizeof rel, "tests/fixtures/%s/poseidon.wtns", dir);
    fx.wbuf = (uint8_t *)tu_read_file(tu_src_path(rel), &n);
    CHECK(fx.wbuf && cuzk_wtns_parse(&fx.w, fx.wbuf, n, rel, &eb) == CUZK_OK);
    snprintf(rel, sizeof rel, "tests/fixtures/%s/poseidon_vk.json", dir);
    cuzk_json_doc *vd = NULL;
    CHECK(cuzk_json_parse_file(&vd, tu_src_path(rel), 1 << 20, &eb) == CUZK_OK);
    CHECK(vd && cuzk_vk_from_json(&fx.vk, cuzk_json_root(vd), rel, &eb) == CUZK_OK);
    cuzk_json_free(vd);

    /* The reference: a key kept whole proves twice, the same bytes each time. */
    cuzk_pk *pk = load_zkey(&fx);
    cuzk_proof again;
    CHECK_MSG(prove(&fx.want, pk, &fx, 0, 1, fx.w.n_witness, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(verifies(&fx, &fx.want), "%s: the reference proof does not verify", dir);
    CHECK(prove(&again, pk, &fx, 0, 1, fx.w.n_witness, &eb) == CUZK_OK &&
          memcmp(&again, &fx.want, sizeof again) == 0);
    cuzk_pk_free(pk);

    /* A witness of the wrong length is refused before anything is freed. */
    pk = load_zkey(&fx);
    CHECK(prove(&again, pk, &fx, 1, 1, fx.w.n_witness - 1, &eb) == CUZK_SIZE_MISMATCH);
    consume_and_refuse(&fx, pk, "zkey key");

    /* Blinded (r, s random): still a valid proof. */
    pk = load_zkey(&fx);
    cuzk_proof blind;
    CHECK_MSG(prove(&blind, pk, &fx, 1, 0, fx.w.n_witness, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(verifies(&fx, &blind), "%s: a blinded consuming proof does not verify", dir);
    CHECK(memcmp(&blind, &fx.want, sizeof blind) != 0);
    cuzk_pk_free(pk);

    /* Fixed-base tables in malloc'd memory, freed set by set. */
    pk = load_zkey(&fx);
    CHECK_MSG(cuzk_pk_precompute(pk, 3, 2, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(cuzk_pk_precompute_copies(pk) == 3);
    consume_and_refuse(&fx, pk, "key with tables");

    /* A key cache: its tables are a mapping of the file, whose pages are dropped instead. */
    char zkey[512], cache[600];
    snprintf(rel, sizeof rel, "tests/fixtures/%s/poseidon.zkey", dir);
    snprintf(zkey, sizeof zkey, "%s", tu_src_path(rel));
    snprintf(cache, sizeof cache, "%s/%s.cuzkcache", tmp, dir);
    pk = load_zkey(&fx);
    CHECK(cuzk_pk_precompute(pk, 4, 2, &eb) == CUZK_OK);
    CHECK_MSG(cuzk_pk_cache_save(pk, cache, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_pk_free(pk);
    pk = NULL;
    CHECK_MSG(cuzk_pk_cache_load(&pk, cache, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    if (pk) {
        CHECK(cuzk_pk_precompute_copies(pk) == 4);
        consume_and_refuse(&fx, pk, "key cache");
    }
    /* The cache file is untouched by the consuming proof: it loads and proves again. */
    pk = NULL;
    CHECK_MSG(cuzk_pk_cache_load(&pk, cache, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    if (pk) {
        CHECK(prove(&again, pk, &fx, 1, 1, fx.w.n_witness, &eb) == CUZK_OK &&
              memcmp(&again, &fx.want, sizeof again) == 0);
        cuzk_pk_free(pk);
    }
    unlink(cache);
    cuzk_vk_clear(&fx.vk);
    cuzk_wtns_close(&fx.w);
    free(fx.wbuf);
}

int main(void)
{
    char tmp[] = "/tmp/cuzk-consume-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    one_curve("bn128", tmp);
    one_curve("bls12381", tmp);
    rmdir(tmp);
    return tu_finish("consume_key_test");
}
