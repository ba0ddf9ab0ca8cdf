/* The staged prover (cuzk_prove_begin / g1 / g2 / g1g2 / end) gives exactly the proof of
 * cuzk_prove, whichever way its stages are split or ordered, with synthesis in begin or
 * deferred to g1 (cuzk_prove_begin_ex, CUZK_PROVE_DEFER_SYNTH): with r = s = 0, byte for byte,
 * on both curves, and the proof verifies against the verification key snarkjs wrote for the
 * fixture. A deferred state holds only the witness until g1 synthesizes, also after a g1
 * that failed on a device. On a machine with a GPU, g1 and g1g2 on device 0 (B in G2 reusing
 * the witness upload and digit sort of A and B1; deferred: a, b, c synthesized on the device
 * from the key's rows) give the same bytes too. */
#include <stdio.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "gpu/gpu.h"
#include "testutil.h"

typedef enum {
    SPLIT_G1_G2,
    SPLIT_G2_G1,
    SPLIT_G1G2,
    SPLIT_G2_THEN_G1G2,
    SPLIT_BAD_DEVICE_THEN_CPU,
    SPLIT_GPU_G1G2,
    SPLIT_GPU_G1_THEN_G2
} split;
static const char *split_name[] = {"g1, g2",         "g2, g1",        "g1g2",
                                   "g2 then g1g2",   "g1 on a device that does not exist, then the CPU",
                                   "g1g2 on GPU 0",  "g1 on GPU 0, then g2 on the CPU"};

static void staged(const cuzk_pk *pk, const cuzk_wtns *w, const cuzk_prove_opts *o, split how,
                   int defer, const cuzk_proof *want, const char *dir)
{
    cuzk_errbuf eb = {{0}};
    cuzk_prove_state *s = NULL;
    cuzk_err e = cuzk_prove_begin_ex(&s, pk, w->values, w->n_witness, o,
                                     defer ? CUZK_PROVE_DEFER_SYNTH : 0, &eb);
    CHECK_MSG(e == CUZK_OK, "%s begin: %s", dir, eb.msg);
    if (e)
        return;
    /* The host working set: the witness, and a, b, c once synthesized (32-byte elements). */
    uint64_t wbytes = 32 * cuzk_pk_n_vars(pk), abc = 3 * 32 * cuzk_pk_domain_size(pk);
    CHECK_MSG(cuzk_prove_state_bytes(s) == wbytes + (defer ? 0 : abc), "%s %s defer %d: %llu",
              dir, split_name[how], defer, (unsigned long long)cuzk_prove_state_bytes(s));
    switch (how) {
    case SPLIT_G1_G2:
        e = cuzk_prove_g1(s, -1, NULL, &eb);
        CHECK(!e && !cuzk_prove_g2_done(s));
        if (!e)
            e = cuzk_prove_g2(s, -1, NULL, &eb);
        break;
    case SPLIT_G2_G1:
        e = cuzk_prove_g2(s, -1, NULL, &eb);
        CHECK(!e && cuzk_prove_g2_done(s));
        if (!e)
            e = cuzk_prove_g1(s, -1, NULL, &eb);
        break;
    case SPLIT_G1G2:
        CHECK(!cuzk_prove_g2_done(s));
        e = cuzk_prove_g1g2(s, -1, NULL, &eb);
        break;
    case SPLIT_G2_THEN_G1G2: /* g1g2 skips the G2 already done */
        e = cuzk_prove_g2(s, -1, NULL, &eb);
        if (!e)
            e = cuzk_prove_g1g2(s, -1, NULL, &eb);
        break;
    case SPLIT_BAD_DEVICE_THEN_CPU: {
        cuzk_errbuf feb = {{0}};
        CHECK(cuzk_prove_g1(s, 1000, NULL, &feb) == CUZK_NO_DEVICE && strstr(feb.msg, "1000"));
        /* the failed stage kept its inputs: still no a, b, c when deferred */
        CHECK(cuzk_prove_state_bytes(s) == wbytes + (defer ? 0 : abc));
        e = cuzk_prove_g1(s, -1, NULL, &eb);
        if (!e)
            e = cuzk_prove_g2(s, -1, NULL, &eb);
        break;
    }
    case SPLIT_GPU_G1G2:
        e = cuzk_prove_g1g2(s, 0, NULL, &eb);
        CHECK(!e && cuzk_prove_state_stats(s)->used_gpu);
        break;
    case SPLIT_GPU_G1_THEN_G2:
        e = cuzk_prove_g1(s, 0, NULL, &eb);
        CHECK(!e && cuzk_prove_state_stats(s)->used_gpu && !cuzk_prove_g2_done(s));
        if (!e)
            e = cuzk_prove_g2(s, -1, NULL, &eb);
        break;
    }
    /* a, b, c are gone once g1 is done, wherever they were made */
    CHECK(e || cuzk_prove_state_bytes(s) == wbytes);
    CHECK_MSG(e == CUZK_OK, "%s %s defer %d: %s", dir, split_name[how], defer, eb.msg);
    CHECK(e || cuzk_prove_g2_done(s));
    cuzk_proof p;
    if (!e) {
        e = cuzk_prove_end(s, &p, &eb);
        CHECK_MSG(e == CUZK_OK, "%s %s end: %s", dir, split_name[how], eb.msg);
        CHECK_MSG(!e && memcmp(&p, want, sizeof p) == 0, "%s %s defer %d: a different proof",
                  dir, split_name[how], defer);
    }
    cuzk_prove_state_free(s);
}

/* Fixture `name` of curve directory `dir`: its key loaded, its witness read (wb, parsed into
 * w). 0 (after failed CHECKs) when either is missing. */
static int load_fixture(const char *dir, const char *name, cuzk_pk **pk, uint8_t **wb,
                        cuzk_wtns *w)
{
    char zrel[256], wrel[256];
    snprintf(zrel, sizeof zrel, "tests/fixtures/%s/%s.zkey", dir, name);
    snprintf(wrel, sizeof wrel, "tests/fixtures/%s/%s.wtns", dir, name);
    cuzk_errbuf eb = {{0}};
    cuzk_zkey zk;
    *pk = NULL;
    CHECK(cuzk_zkey_open(&zk, tu_src_path(zrel), &eb) == CUZK_OK);
    CHECK_MSG(cuzk_pk_load(pk, &zk, 2, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_zkey_close(&zk);
    size_t n;
    *wb = (uint8_t *)tu_read_file(tu_src_path(wrel), &n);
    CHECK(*wb && cuzk_wtns_parse(w, *wb, n, wrel, &eb) == CUZK_OK);
    if (!*pk || !*wb) {
        cuzk_pk_free(*pk);
        free(*wb);
        return 0;
    }
    return 1;
}

/* The proof verifies against snarkjs's verification key of fixture `name`. */
static void check_snarkjs_vk(const char *dir, const char *name, const cuzk_pk *pk,
                             const cuzk_wtns *w, const cuzk_proof *p)
{
    char vkrel[256];
    snprintf(vkrel, sizeof vkrel, "tests/fixtures/%s/%s_vk.json", dir, name);
    cuzk_errbuf eb = {{0}};
    cuzk_json_doc *vd = NULL;
    cuzk_vk vk;
    CHECK(cuzk_json_parse_file(&vd, tu_src_path(vkrel), 1 << 20, &eb) == CUZK_OK);
    CHECK(cuzk_vk_from_json(&vk, cuzk_json_root(vd), vkrel, &eb) == CUZK_OK);
    CHECK_MSG(cuzk_verify(&vk, w->values + 32, cuzk_pk_n_public(pk), p, &eb) == CUZK_OK,
              "%s %s: %s", dir, name, eb.msg);
    cuzk_vk_clear(&vk);
    cuzk_json_free(vd);
}

static void one_curve(const char *dir, int gpu)
{
    cuzk_errbuf eb = {{0}};
    cuzk_pk *pk;
    uint8_t *wb;
    cuzk_wtns w;
    if (!load_fixture(dir, "poseidon", &pk, &wb, &w))
        return;
    cuzk_prove_opts o = {0};
    o.zero_rs = 1;
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    cuzk_proof want;
    CHECK_MSG(cuzk_prove(&want, pk, w.values, w.n_witness, &o, NULL, &eb) == CUZK_OK, "%s",
              eb.msg);
    /* The reference proof is right: it verifies against snarkjs's verification key. */
    check_snarkjs_vk(dir, "poseidon", pk, &w, &want);
    for (int defer = 0; defer < 2; defer++) {
        for (int how = SPLIT_G1_G2; how <= SPLIT_BAD_DEVICE_THEN_CPU; how++)
            staged(pk, &w, &o, (split)how, defer, &want, dir);
        if (gpu) {
            staged(pk, &w, &o, SPLIT_GPU_G1G2, defer, &want, dir);
            staged(pk, &w, &o, SPLIT_GPU_G1_THEN_G2, defer, &want, dir);
        }
    }
    cuzk_wtns_close(&w);
    free(wb);
    cuzk_pk_free(pk);
}

/* The witness copy into the prover (non-temporal stores from GT_WCOPY_STREAM_MIN values on
 * x86-64; the chain fixture has 16384): the proof verifies against snarkjs's key, and a value
 * not below r is refused naming its index, wherever it sits. */
static void witness_copy(const char *dir, int gpu)
{
    cuzk_errbuf eb = {{0}};
    cuzk_pk *pk;
    uint8_t *wb;
    cuzk_wtns w;
    if (!load_fixture(dir, "chain", &pk, &wb, &w))
        return;
    CHECK_MSG(w.n_witness >= 8192, "%s: chain has %llu values, fewer than the streamed copy's "
              "threshold", dir, (unsigned long long)w.n_witness);
    cuzk_prove_opts o = {0};
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    cuzk_proof p;
    CHECK_MSG(cuzk_prove(&p, pk, w.values, w.n_witness, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    check_snarkjs_vk(dir, "chain", pk, &w, &p);
    uint8_t *bad = malloc(32 * (size_t)w.n_witness);
    CHECK(bad != NULL);
    const uint64_t at[3] = {1, 8191, w.n_witness - 1};
    for (int k = 0; bad && k < 3; k++) {
        memcpy(bad, w.values, 32 * (size_t)w.n_witness);
        memset(bad + 32 * at[k], 0xff, 32);
        if (k == 2) /* two bad values: the lower index is named */
            memset(bad + 32 * (at[k] - 100), 0xff, 32);
        uint64_t want = k == 2 ? at[k] - 100 : at[k];
        char msg[64];
        snprintf(msg, sizeof msg, "witness value %llu is not below r", (unsigned long long)want);
        cuzk_err e = cuzk_prove(&p, pk, bad, w.n_witness, &o, NULL, &eb);
        CHECK_MSG(e == CUZK_NON_CANONICAL && strstr(eb.msg, msg), "%s: value %llu: %s (%s)", dir,
                  (unsigned long long)want, cuzk_strerror(e), eb.msg);
    }
    free(bad);
    /* A witness in page-locked memory (cuzk_witness_buf_alloc): on a GPU the prover uploads it
     * as it is (only checking it); the proof is the CPU's at r = s = 0, and a bad value is
     * still refused by name. Without a device the allocation says NO_DEVICE. */
    void *pb = NULL;
    cuzk_err ae = cuzk_witness_buf_alloc(&pb, w.n_witness, &eb);
    if (!gpu) {
        CHECK_MSG(ae == CUZK_NO_DEVICE && !pb, "%s: witness buffer without a GPU: %s", dir,
                  cuzk_strerror(ae));
    } else if (ae != CUZK_OK) {
        CHECK_MSG(0, "%s: cuzk_witness_buf_alloc: %s", dir, eb.msg);
    } else {
        memcpy(pb, w.values, 32 * (size_t)w.n_witness);
        cuzk_proof pc, pg;
        o.zero_rs = 1;
        o.backend = CUZK_BACKEND_CPU;
        CHECK_MSG(cuzk_prove(&pc, pk, w.values, w.n_witness, &o, NULL, &eb) == CUZK_OK, "%s",
                  eb.msg);
        o.backend = CUZK_BACKEND_GPU;
        /* B in G2 on CPU threads: the host checks the witness; on the GPU too: A's MSM
         * checks it on the device (CUZK_GPU_SCALARS_CHECK). Bad values at 0, 5000, the end,
         * and two at once (the lower one named); then the good witness again. */
        for (int g2 = 0; g2 < 2; g2++) {
            o.g2_on_gpu = g2;
            cuzk_err ge = cuzk_prove(&pg, pk, pb, w.n_witness, &o, NULL, &eb);
            CHECK_MSG(ge == CUZK_OK && memcmp(&pc, &pg, sizeof pc) == 0,
                      "%s: GPU proof from a page-locked witness (B in G2 on the %s): %s", dir,
                      g2 ? "GPU" : "CPU", ge ? eb.msg : "differs from the CPU's");
            const uint64_t bat[4] = {0, 5000, w.n_witness - 1, 7000};
            for (int k = 0; k < 4; k++) {
                memset((uint8_t *)pb + 32 * bat[k], 0xff, 32);
                if (k == 3)
                    memset((uint8_t *)pb + 32 * (w.n_witness - 2), 0xff, 32);
                char msg[64];
                snprintf(msg, sizeof msg, "witness value %llu is not below r",
                         (unsigned long long)bat[k]);
                ge = cuzk_prove(&pg, pk, pb, w.n_witness, &o, NULL, &eb);
                CHECK_MSG(ge == CUZK_NON_CANONICAL && strstr(eb.msg, msg),
                          "%s: bad value %llu in a page-locked witness (B in G2 on the %s): "
                          "%s (%s)", dir, (unsigned long long)bat[k], g2 ? "GPU" : "CPU",
                          cuzk_strerror(ge), eb.msg);
                memcpy(pb, w.values, 32 * (size_t)w.n_witness);
            }
            ge = cuzk_prove(&pg, pk, pb, w.n_witness, &o, NULL, &eb);
            CHECK_MSG(ge == CUZK_OK && memcmp(&pc, &pg, sizeof pc) == 0,
                      "%s: GPU proof after bad witnesses (B in G2 on the %s): %s", dir,
                      g2 ? "GPU" : "CPU", ge ? eb.msg : "differs from the CPU's");
        }
        cuzk_witness_buf_free(pb);
    }
    cuzk_wtns_close(&w);
    free(wb);
    cuzk_pk_free(pk);
}

/* cuzk_pk_set_names, and on a GPU: a key staged with tables on an otherwise idle device has
 * every set whose tables pay with them (cuzk_pk_gpu_no_tables 0; a set too small for tables to
 * pay is not reported), and a device out of range reports none. */
static void tables_report(const char *dir, int gpu)
{
    char b[32];
    cuzk_pk_set_names(0, b, sizeof b);
    CHECK(!strcmp(b, ""));
    cuzk_pk_set_names(CUZK_PK_SET_H | CUZK_PK_SET_B2, b, sizeof b);
    CHECK_MSG(!strcmp(b, "H,B2"), "%s", b);
    cuzk_pk_set_names(31, b, sizeof b);
    CHECK_MSG(!strcmp(b, "A,B1,C,H,B2"), "%s", b);
    cuzk_pk_set_names(31, b, 6); /* "A,B1" and ",C" does not fit */
    CHECK_MSG(!strcmp(b, "A,B1"), "%s", b);
    cuzk_pk *pk;
    uint8_t *wb;
    cuzk_wtns w;
    if (!load_fixture(dir, "poseidon", &pk, &wb, &w))
        return;
    CHECK(cuzk_pk_gpu_no_tables(pk, -1) == 0 && cuzk_pk_gpu_no_tables(pk, 1000) == 0);
    if (gpu) {
        cuzk_errbuf eb = {{0}};
        CHECK_MSG(cuzk_pk_gpu_stage(pk, 0, CUZK_PK_STAGE_G2 | CUZK_PK_STAGE_TABLES, &eb) ==
                      CUZK_OK,
                  "%s", eb.msg);
        unsigned m = cuzk_pk_gpu_no_tables(pk, 0);
        cuzk_pk_set_names(m, b, sizeof b);
        CHECK_MSG(m == 0, "%s: tables missing for %s on an idle device", dir, b);
    }
    cuzk_wtns_close(&w);
    free(wb);
    cuzk_pk_free(pk);
}

/* cuzk_prove's key context fits its batch-affine chunk to the memory the key left (gpu.h
 * cuzk_gpu_ba_fit): a small key's estimate does not grow with the chunk, so it takes the
 * largest, with quads for G1. A proof with tables after
 * one without gives the fitted memory back first: every set still gets its tables. Each proof
 * equals the CPU's (r = s = 0). */
static void ba_fit_report(const char *dir, int gpu)
{
    cuzk_pk *pk;
    uint8_t *wb;
    cuzk_wtns w;
    if (!gpu || !load_fixture(dir, "poseidon", &pk, &wb, &w))
        return;
    cuzk_errbuf eb = {{0}};
    cuzk_prove_opts o = {0};
    o.zero_rs = 1;
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    cuzk_proof want, p;
    CHECK_MSG(cuzk_prove(&want, pk, w.values, w.n_witness, &o, NULL, &eb) == CUZK_OK, "%s",
              eb.msg);
    o.backend = CUZK_BACKEND_GPU;
    o.g2_on_gpu = 1;
    for (int tab = 0; tab < 2; tab++) {
        o.gpu_tables = tab;
        cuzk_prove_stats st;
        CHECK_MSG(cuzk_prove(&p, pk, w.values, w.n_witness, &o, &st, &eb) == CUZK_OK, "%s %d: %s",
                  dir, tab, eb.msg);
        CHECK_MSG(st.used_gpu && !memcmp(&p, &want, sizeof p), "%s tables %d: GPU proof differs",
                  dir, tab);
        CHECK_MSG(st.gpu_ba_chunk == CUZK_GPU_BA_CHUNK_MAX, "%s tables %d: chunk %llu", dir, tab,
                  (unsigned long long)st.gpu_ba_chunk);
        CHECK_MSG(st.gpu_ba_quads == 3, "%s tables %d: quads %d", dir, tab, st.gpu_ba_quads);
        if (tab) {
            char b[32];
            cuzk_pk_set_names(st.gpu_no_tables, b, sizeof b);
            CHECK_MSG(st.gpu_tables > 1 && st.gpu_no_tables == 0,
                      "%s: after a fitted chunk, tables %d, missing for %s", dir, st.gpu_tables,
                      b);
        }
    }
    cuzk_wtns_close(&w);
    free(wb);
    cuzk_pk_free(pk);
}

int main(void)
{
    int gpu = cuzk_gpu_device_count() > 0;
    if (!gpu)
        printf("staged_test: no CUDA device: g1 / g1g2 on a GPU are not checked here (run this test "
               "on a GPU machine; scripts/device-pack packs it)\n");
    one_curve("bn128", gpu);
    one_curve("bls12381", gpu);
    witness_copy("bn128", gpu);
    witness_copy("bls12381", gpu);
    tables_report("bn128", gpu);
    tables_report("bls12381", gpu);
    ba_fit_report("bn128", gpu);
    ba_fit_report("bls12381", gpu);
    return tu_finish("staged_test");
}
