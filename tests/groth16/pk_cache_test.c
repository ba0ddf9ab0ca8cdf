/* The preprocessed key cache (cuzk_pk_cache_*): a key loaded from its cache proves exactly
 * what the key loaded from the zkey proves (r = s = 0, byte for byte, on both curves, and the
 * proof verifies against the verification key snarkjs wrote), and every damaged cache is
 * refused with its own error: missing, not a cache, truncated, corrupt payload, stale zkey.
 * The tables a cache gets by default (cuzk_pk_precompute_auto): 2 copies from 2^10 to 2^14
 * points, none below or above; the reason is named. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "testutil.h"

static int copy_file(const char *from, const char *to)
{
    size_t n;
    char *d = tu_read_file(from, &n);
    if (!d)
        return -1;
    FILE *f = fopen(to, "wb");
    int ok = f && fwrite(d, 1, n, f) == n;
    if (f)
        fclose(f);
    free(d);
    return ok ? 0 : -1;
}

static void prove(const cuzk_pk *pk, const char *wtns_rel, cuzk_proof *out)
{
    cuzk_errbuf eb = {{0}};
    size_t n;
    uint8_t *wb = (uint8_t *)tu_read_file(tu_src_path(wtns_rel), &n);
    cuzk_wtns w;
    CHECK(wb && cuzk_wtns_parse(&w, wb, n, wtns_rel, &eb) == CUZK_OK);
    cuzk_prove_opts o = {0};
    o.zero_rs = 1;
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    CHECK_MSG(cuzk_prove(out, pk, w.values, w.n_witness, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_wtns_close(&w);
    free(wb);
}

static void one_curve(const char *dir, const char *tmp)
{
    char zsrc[512], zkey[512], wtns[512], vkrel[512], cpath[600];
    snprintf(zsrc, sizeof zsrc, "tests/fixtures/%s/poseidon.zkey", dir);
    snprintf(wtns, sizeof wtns, "tests/fixtures/%s/poseidon.wtns", dir);
    snprintf(vkrel, sizeof vkrel, "tests/fixtures/%s/poseidon_vk.json", dir);
    snprintf(zkey, sizeof zkey, "%s/%s.zkey", tmp, dir);
    CHECK(copy_file(tu_src_path(zsrc), zkey) == 0);
    char *cp = cuzk_pk_cache_path(zkey, NULL);
    CHECK(cp && strcmp(cp + strlen(cp) - 10, ".cuzkcache") == 0);
    snprintf(cpath, sizeof cpath, "%s", cp);
    free(cp);
    cp = cuzk_pk_cache_path(zkey, "/var/cache/cuzk");
    CHECK(cp && strncmp(cp, "/var/cache/cuzk/", 16) == 0 && strstr(cp, ".zkey."));
    free(cp);

    cuzk_errbuf eb = {{0}};
    cuzk_pk *pk = NULL, *pc = NULL;
    CHECK(cuzk_pk_cache_load(&pc, cpath, zkey, &eb) == CUZK_NOT_FOUND && !pc);
    cuzk_zkey zk;
    CHECK(cuzk_zkey_open(&zk, zkey, &eb) == CUZK_OK);
    CHECK(cuzk_pk_load(&pk, &zk, 2, &eb) == CUZK_OK);
    cuzk_zkey_close(&zk);
    CHECK_MSG(cuzk_pk_cache_save(pk, cpath, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(cuzk_pk_cache_load(&pc, cpath, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    if (!pc)
        return;
    CHECK(cuzk_pk_curve(pc) == cuzk_pk_curve(pk) && cuzk_pk_n_vars(pc) == cuzk_pk_n_vars(pk) &&
          cuzk_pk_domain_size(pc) == cuzk_pk_domain_size(pk) &&
          cuzk_pk_n_public(pc) == cuzk_pk_n_public(pk) && cuzk_pk_bytes(pc) == cuzk_pk_bytes(pk));
    cuzk_proof p1, p2;
    prove(pk, wtns, &p1);
    prove(pc, wtns, &p2);
    CHECK(memcmp(&p1, &p2, sizeof p1) == 0);
    /* The cached key's verification key is snarkjs's. */
    cuzk_json_doc *vd = NULL;
    cuzk_vk vk, vc;
    CHECK(cuzk_json_parse_file(&vd, tu_src_path(vkrel), 1 << 20, &eb) == CUZK_OK);
    CHECK(cuzk_vk_from_json(&vk, cuzk_json_root(vd), vkrel, &eb) == CUZK_OK);
    CHECK(cuzk_pk_vk(pc, &vc, &eb) == CUZK_OK);
    CHECK(memcmp(vk.alpha1, vc.alpha1, sizeof vk.alpha1) == 0 &&
          memcmp(vk.delta2, vc.delta2, sizeof vk.delta2) == 0 &&
          memcmp(vk.ic, vc.ic, (vk.n_public + 1) * (size_t)(strcmp(dir, "bn128") ? 96 : 64)) == 0);
    cuzk_vk_clear(&vk);
    cuzk_vk_clear(&vc);
    cuzk_json_free(vd);
    cuzk_pk_free(pc);
    pc = NULL;

    /* Damage, one kind at a time, on copies of the good cache. */
    size_t n;
    uint8_t *good = (uint8_t *)tu_read_file(cpath, &n);
    CHECK(good && n > 4096);
    char bad[640];
    snprintf(bad, sizeof bad, "%s.bad", cpath);
    FILE *f;
    /* corrupt payload byte */
    good[n / 2] ^= 1;
    f = fopen(bad, "wb");
    fwrite(good, 1, n, f);
    fclose(f);
    good[n / 2] ^= 1;
    CHECK(cuzk_pk_cache_load(&pc, bad, zkey, &eb) == CUZK_BAD_FORMAT && !pc);
    CHECK_MSG(strstr(eb.msg, "payload hash"), "%s", eb.msg);
    /* corrupt header byte (n_vars) */
    good[24] ^= 1;
    f = fopen(bad, "wb");
    fwrite(good, 1, n, f);
    fclose(f);
    good[24] ^= 1;
    CHECK(cuzk_pk_cache_load(&pc, bad, zkey, &eb) == CUZK_BAD_FORMAT && !pc);
    CHECK_MSG(strstr(eb.msg, "header hash"), "%s", eb.msg);
    /* truncated */
    f = fopen(bad, "wb");
    fwrite(good, 1, n - 7, f);
    fclose(f);
    CHECK(cuzk_pk_cache_load(&pc, bad, zkey, &eb) == CUZK_TRUNCATED && !pc);
    f = fopen(bad, "wb");
    fwrite(good, 1, 40, f);
    fclose(f);
    CHECK(cuzk_pk_cache_load(&pc, bad, zkey, &eb) == CUZK_TRUNCATED && !pc);
    /* not a cache */
    f = fopen(bad, "wb");
    fwrite("zkey", 1, 4, f);
    fwrite(good + 4, 1, n - 4, f);
    fclose(f);
    CHECK(cuzk_pk_cache_load(&pc, bad, zkey, &eb) == CUZK_BAD_FORMAT && !pc);
    CHECK_MSG(strstr(eb.msg, "not a cuzk key cache"), "%s", eb.msg);
    unlink(bad);
    free(good);
    /* stale: the zkey's modification time changes */
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec += 10;
    ts[1] = ts[0];
    CHECK(utimensat(AT_FDCWD, zkey, ts, 0) == 0);
    CHECK(cuzk_pk_cache_load(&pc, cpath, zkey, &eb) == CUZK_BAD_FORMAT && !pc);
    CHECK_MSG(strstr(eb.msg, "stale"), "%s", eb.msg);
    /* rewritten, it is good again */
    CHECK(cuzk_pk_cache_save(pk, cpath, zkey, &eb) == CUZK_OK);
    CHECK(cuzk_pk_cache_load(&pc, cpath, zkey, &eb) == CUZK_OK && pc);
    cuzk_pk_free(pc);
    cuzk_pk_free(pk);
    unlink(cpath);
    unlink(zkey);
}

static void precompute_auto(void)
{
    char why[96];
    CHECK(cuzk_pk_precompute_auto(1023, 2, why, sizeof why) == 0);
    CHECK_MSG(strcmp(why, "2^9 points, 2 threads: too few to pay") == 0, "%s", why);
    CHECK(cuzk_pk_precompute_auto(1024, 1, NULL, 0) == 2);
    CHECK(cuzk_pk_precompute_auto(4096, 2, why, sizeof why) == 2);
    CHECK_MSG(strcmp(why, "2^12 points, 2 threads") == 0, "%s", why);
    CHECK(cuzk_pk_precompute_auto(32767, 1, NULL, 0) == 2);
    CHECK(cuzk_pk_precompute_auto(32768, 1, why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "2^15 points, 1 thread: "), "%s", why);
    CHECK(cuzk_pk_precompute_auto((uint64_t)1 << 18, 2, why, sizeof why) == 0);
    CHECK_MSG(strstr(why, "2^18 points, 2 threads: "), "%s", why);
    CHECK(cuzk_pk_precompute_auto((uint64_t)1 << 24, 64, NULL, 0) == 0);
}

int main(void)
{
    precompute_auto();
    char tmp[] = "/tmp/cuzk-pkcache-XXXXXX";
    if (!mkdtemp(tmp))
        return 2;
    one_curve("bn128", tmp);
    one_curve("bls12381", tmp);
    rmdir(tmp);
    return tu_finish("pk_cache");
}
