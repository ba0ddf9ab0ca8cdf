/* The proving engine without gRPC: proofs on both curves checked against the verification keys
 * snarkjs wrote (tests/fixtures/ * _vk.json), idempotent request ids, witness errors failing
 * only their own request, priority order with one worker, cancel, a small working budget under
 * many concurrent multi-partition jobs, key eviction, and the config file parser. */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/log.h"
#include "engine/config.h"
#include "engine/engine.h"
#include "testutil.h"

typedef struct {
    uint8_t *data;
    size_t len;
} blob;

static blob load(const char *rel)
{
    blob b;
    b.data = (uint8_t *)tu_read_file(tu_src_path(rel), &b.len);
    if (!b.data) {
        fprintf(stderr, "cannot read %s\n", rel);
        exit(2);
    }
    return b;
}

/* Verifies every partition's proof with the snarkjs verification key and checks that the
 * public inputs are the witness's. */
static void check_proofs(const cuzk_job_result *r, const char *vk_rel, cuzk_curve curve)
{
    cuzk_errbuf eb = {{0}};
    cuzk_json_doc *vd = NULL;
    CHECK(cuzk_json_parse_file(&vd, tu_src_path(vk_rel), 1 << 20, &eb) == CUZK_OK);
    cuzk_vk vk;
    CHECK(cuzk_vk_from_json(&vk, cuzk_json_root(vd), vk_rel, &eb) == CUZK_OK);
    for (size_t i = 0; i < r->n_parts; i++) {
        cuzk_json_doc *pd = NULL, *ud = NULL;
        const cuzk_part_result *p = &r->parts[i];
        CHECK(cuzk_json_parse(&pd, p->proof_json, strlen(p->proof_json), 1 << 20, "json", &eb) == 0);
        CHECK(cuzk_json_parse(&ud, p->public_json, strlen(p->public_json), 1 << 20, "json", &eb) == 0);
        cuzk_proof proof;
        uint8_t *pub = NULL;
        uint64_t npub = 0;
        CHECK(cuzk_proof_from_json(&proof, cuzk_json_root(pd), curve, "proof", &eb) == 0);
        CHECK(cuzk_public_from_json(&pub, &npub, cuzk_json_root(ud), curve, "public", &eb) == 0);
        CHECK_MSG(cuzk_verify(&vk, pub, npub, &proof, &eb) == CUZK_OK, "verify: %s", eb.msg);
        CHECK(p->has_compressed == (curve == CUZK_CURVE_BLS12_381));
        if (p->has_compressed) {
            cuzk_proof p2;
            CHECK(cuzk_proof_from_compressed(&p2, p->compressed, 192, &eb) == 0);
            CHECK(memcmp(&p2, &proof, sizeof proof) == 0);
        }
        free(pub);
        cuzk_json_free(pd);
        cuzk_json_free(ud);
    }
    cuzk_vk_clear(&vk);
    cuzk_json_free(vd);
}

static cuzk_err submit(cuzk_engine *e, const char *circ, const char *rid, cuzk_priority p,
                       const blob *w, size_t n, char id[32], cuzk_errbuf *eb)
{
    const uint8_t *ptrs[64];
    size_t lens[64];
    for (size_t i = 0; i < n; i++) {
        ptrs[i] = w[i].data;
        lens[i] = w[i].len;
    }
    cuzk_submit s = {circ, rid, p, n, ptrs, lens};
    int existing;
    return cuzk_engine_submit(e, &s, id, &existing, eb);
}

static const cuzk_engine_circuit CIRCS[] = {
    {"bn-mul", "tests/fixtures/bn128/multiplier.zkey", 1, CUZK_PRIO_NORMAL},
    {"bn-pos", "tests/fixtures/bn128/poseidon.zkey", 0, CUZK_PRIO_NORMAL},
    {"bls-mul", "tests/fixtures/bls12381/multiplier.zkey", 1, CUZK_PRIO_NORMAL},
    {"bls-pos", "tests/fixtures/bls12381/poseidon.zkey", 0, CUZK_PRIO_LOW},
};

static cuzk_engine_config g_extra; /* GPU / witness settings for the next make_kb */

static cuzk_engine *make_kb(unsigned pw, uint64_t budget, unsigned jmax, uint64_t key_budget)
{
    static cuzk_engine_circuit circs[4];
    for (int i = 0; i < 4; i++) {
        circs[i] = CIRCS[i];
        circs[i].zkey = strdup(tu_src_path(CIRCS[i].zkey));
    }
    cuzk_engine_config cfg = g_extra;
    cfg.partition_workers = pw;
    cfg.prove_threads = 1;
    cfg.max_jobs_in_flight = jmax;
    cfg.working_budget = budget;
    cfg.key_budget = key_budget;
    cfg.circuits = circs;
    cfg.n_circuits = 4;
    cuzk_engine *e = NULL;
    cuzk_errbuf eb = {{0}};
    cuzk_err err = cuzk_engine_new(&e, &cfg, &eb);
    CHECK_MSG(err == CUZK_OK, "engine_new: %s", eb.msg);
    for (int i = 0; i < 4; i++)
        free((char *)circs[i].zkey);
    if (!e)
        exit(tu_finish("engine"));
    return e;
}

static cuzk_engine *make(unsigned pw, uint64_t budget, unsigned jmax)
{
    return make_kb(pw, budget, jmax, 0);
}

static void prove_one(cuzk_engine *e, const char *circ, const blob *w)
{
    cuzk_errbuf eb = {{0}};
    char id[32];
    cuzk_job_result r;
    CHECK(submit(e, circ, NULL, 0, w, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
}

/* key_budget: loading a key evicts the least recently used keys no job holds. */
static void test_key_lru(void)
{
    blob w[4] = {load("tests/fixtures/bn128/multiplier.wtns"),
                 load("tests/fixtures/bn128/poseidon.wtns"),
                 load("tests/fixtures/bls12381/multiplier.wtns"),
                 load("tests/fixtures/bls12381/poseidon.wtns")};
    cuzk_circuit_info ci[4];
    cuzk_engine *e = make(1, 1ull << 30, 0);
    prove_one(e, "bn-pos", &w[1]);
    prove_one(e, "bls-pos", &w[3]);
    CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
    uint64_t sz[4];
    for (int i = 0; i < 4; i++) {
        sz[i] = ci[i].bytes;
        CHECK(ci[i].resident && sz[i] > 0);
    }
    cuzk_engine_free(e);
    /* Room for both poseidon keys and a little more, not for the multipliers as well. */
    uint64_t kb = sz[1] + sz[3] + 1000;
    CHECK(sz[0] + sz[2] > 1000 && sz[0] < sz[1] && sz[2] < sz[1]);
    e = make_kb(1, 1ull << 30, 0, kb);
    prove_one(e, "bn-pos", &w[1]);
    prove_one(e, "bls-pos", &w[3]); /* evicts bn-mul and bls-mul (preloaded, least recent) */
    cuzk_engine_circuits(e, ci, 4);
    CHECK(!ci[0].resident && ci[1].resident && !ci[2].resident && ci[3].resident);
    prove_one(e, "bn-mul", &w[0]); /* evicts bn-pos, now the least recently used */
    cuzk_engine_circuits(e, ci, 4);
    CHECK(ci[0].resident && !ci[1].resident && !ci[2].resident && ci[3].resident);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_bytes <= kb && st.keys_evicted == 3);
    cuzk_engine_free(e);
    for (int i = 0; i < 4; i++)
        free(w[i].data);
}

static void test_basic(void)
{
    cuzk_engine *e = make(2, 1ull << 30, 0);
    blob bm = load("tests/fixtures/bn128/multiplier.wtns");
    blob bp = load("tests/fixtures/bn128/poseidon.wtns");
    blob lm = load("tests/fixtures/bls12381/multiplier.wtns");
    blob lp = load("tests/fixtures/bls12381/poseidon.wtns");
    cuzk_errbuf eb = {{0}};
    char id1[32], id2[32], id3[32], id4[32];
    blob two[2] = {bp, bp};
    CHECK(submit(e, "bn-mul", NULL, 0, &bm, 1, id1, &eb) == CUZK_OK);
    CHECK(submit(e, "bn-pos", "req-a", 0, two, 2, id2, &eb) == CUZK_OK);
    CHECK(submit(e, "bls-mul", NULL, 0, &lm, 1, id3, &eb) == CUZK_OK);
    CHECK(submit(e, "bls-pos", NULL, CUZK_PRIO_HIGH, &lp, 1, id4, &eb) == CUZK_OK);
    /* Same request id, same content: same job. Different content: refused. */
    char again[32];
    int existing = 0;
    const uint8_t *pp[2] = {bp.data, bp.data};
    size_t ll[2] = {bp.len, bp.len};
    cuzk_submit s = {"bn-pos", "req-a", 0, 2, pp, ll};
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_OK);
    CHECK(existing == 1 && strcmp(again, id2) == 0);
    s.n_witnesses = 1;
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_INVALID_ARGUMENT);

    cuzk_job_result r;
    CHECK(cuzk_engine_await(e, id1, 0, &r, &eb) == CUZK_OK);
    CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "state %d: %s", r.state, r.error);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, "tests/fixtures/bn128/multiplier_vk.json", CUZK_CURVE_BN254);
    cuzk_job_result_free(&r);
    CHECK(cuzk_engine_await(e, id2, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_COMPLETED && r.n_parts == 2);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, "tests/fixtures/bn128/poseidon_vk.json", CUZK_CURVE_BN254);
    CHECK(strcmp(r.request_id, "req-a") == 0);
    cuzk_job_result_free(&r);
    CHECK(cuzk_engine_await(e, id3, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, "tests/fixtures/bls12381/multiplier_vk.json", CUZK_CURVE_BLS12_381);
    cuzk_job_result_free(&r);
    CHECK(cuzk_engine_await(e, id4, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, "tests/fixtures/bls12381/poseidon_vk.json", CUZK_CURVE_BLS12_381);
    cuzk_job_result_free(&r);

    /* Witness errors fail the request with a message and nothing else. */
    blob bad = {malloc(bm.len), bm.len};
    memcpy(bad.data, bm.data, bm.len);
    bad.data[0] ^= 0xff; /* magic */
    CHECK(submit(e, "bn-mul", NULL, 0, &bad, 1, id1, &eb) == CUZK_BAD_FORMAT);
    CHECK(strstr(eb.msg, "witness 0") != NULL);
    bad.len = bm.len - 7;
    memcpy(bad.data, bm.data, bm.len);
    CHECK(submit(e, "bn-mul", NULL, 0, &bad, 1, id1, &eb) != CUZK_OK);
    CHECK(submit(e, "bn-pos", NULL, 0, &bm, 1, id1, &eb) == CUZK_SIZE_MISMATCH);
    CHECK_MSG(strstr(eb.msg, "expects") != NULL, "%s", eb.msg);
    CHECK(submit(e, "bls-mul", NULL, 0, &bm, 1, id1, &eb) == CUZK_WRONG_CURVE);
    CHECK(submit(e, "nope", NULL, 0, &bm, 1, id1, &eb) == CUZK_NOT_FOUND);
    CHECK(submit(e, "bn-mul", NULL, 0, &bm, 0, id1, &eb) == CUZK_INVALID_ARGUMENT);
    /* An unsatisfied witness (last value changed): the job fails, a good one beside it ends. */
    cuzk_wtns w;
    CHECK(cuzk_wtns_parse(&w, bm.data, bm.len, "w", &eb) == 0);
    size_t off = (size_t)(w.values - bm.data) + 32 * (w.n_witness - 1);
    bad.len = bm.len;
    memcpy(bad.data, bm.data, bm.len);
    bad.data[off] ^= 1;
    blob mixed[2] = {bm, bad};
    CHECK(submit(e, "bn-mul", NULL, 0, mixed, 2, id1, &eb) == CUZK_OK);
    CHECK(submit(e, "bn-mul", NULL, 0, &bm, 1, id2, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id1, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_FAILED && r.err == CUZK_WITNESS_UNSATISFIED);
    CHECK_MSG(strstr(r.error, "partition 1") != NULL, "%s", r.error);
    CHECK(r.parts == NULL);
    cuzk_job_result_free(&r);
    CHECK(cuzk_engine_await(e, id2, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    free(bad.data);

    /* Keys: evict a resident, unheld key; it reloads on demand. */
    int was;
    uint64_t freed;
    CHECK(cuzk_engine_evict_key(e, "bn-mul", &was, &freed, &eb) == CUZK_OK);
    CHECK(was == 1 && freed > 0);
    CHECK(cuzk_engine_evict_key(e, "bn-mul", &was, &freed, &eb) == CUZK_OK && was == 0);
    cuzk_circuit_info ci[4];
    CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
    CHECK(ci[0].resident == 0 && ci[2].resident == 1);
    CHECK(submit(e, "bn-mul", NULL, 0, &bm, 1, id1, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id1, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    double ms;
    CHECK(cuzk_engine_preload(e, "bn-mul", &was, &ms, &eb) == CUZK_OK && was == 1);

    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.jobs_completed == 6 && st.jobs_failed == 1);
    CHECK(st.budget.in_use == 0);
    char *m = cuzk_engine_metrics(e);
    CHECK(m && strstr(m, "cuzk_jobs_finished_total{state=\"completed\"} 6"));
    free(m);
    cuzk_engine_free(e);
    free(bm.data);
    free(bp.data);
    free(lm.data);
    free(lp.data);
}

/* One worker, LOW jobs queued, then a CRITICAL one: it completes before the LOWs that were
 * still waiting. Then cancel of queued and running jobs. */
static void test_priority_cancel(void)
{
    cuzk_engine *e = make(1, 1ull << 30, 0);
    blob bp = load("tests/fixtures/bn128/poseidon.wtns");
    cuzk_errbuf eb = {{0}};
    char low[6][32], crit[32];
    for (int i = 0; i < 6; i++)
        CHECK(submit(e, "bn-pos", NULL, CUZK_PRIO_LOW, &bp, 1, low[i], &eb) == CUZK_OK);
    CHECK(submit(e, "bn-pos", NULL, CUZK_PRIO_CRITICAL, &bp, 1, crit, &eb) == CUZK_OK);
    cuzk_job_result r;
    CHECK(cuzk_engine_await(e, crit, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    uint64_t cseq = r.seq;
    cuzk_job_result_free(&r);
    /* At most the LOW job(s) already running when CRITICAL arrived finished before it. */
    CHECK_MSG(cseq <= 2, "critical finished as #%llu", (unsigned long long)cseq);
    for (int i = 0; i < 6; i++) {
        CHECK(cuzk_engine_await(e, low[i], 0, &r, &eb) == CUZK_OK);
        CHECK(r.state == CUZK_JOB_COMPLETED);
        if (i >= 2)
            CHECK(r.seq > cseq);
        cuzk_job_result_free(&r);
    }

    /* Cancel: a 6-partition job (running) and a queued one behind it. */
    blob six[6] = {bp, bp, bp, bp, bp, bp};
    char a[32], b[32];
    CHECK(submit(e, "bn-pos", NULL, 0, six, 6, a, &eb) == CUZK_OK);
    CHECK(submit(e, "bn-pos", NULL, 0, six, 6, b, &eb) == CUZK_OK);
    int was;
    cuzk_job_state s;
    CHECK(cuzk_engine_cancel(e, b, &was, &s, &eb) == CUZK_OK && was == 1);
    CHECK(s == CUZK_JOB_CANCELLED);
    CHECK(cuzk_engine_cancel(e, a, &was, &s, &eb) == CUZK_OK && was == 1);
    CHECK(cuzk_engine_await(e, a, 0, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_CANCELLED && r.err == CUZK_CANCELLED);
    CHECK_MSG(r.parts_done < 6, "%zu parts done", r.parts_done);
    cuzk_job_result_free(&r);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.budget.in_use == 0 && st.jobs_cancelled == 2);
    CHECK(cuzk_engine_cancel(e, "j0-nope", &was, &s, &eb) == CUZK_NOT_FOUND);
    /* Awaiting with a timeout returns the live state. */
    CHECK(submit(e, "bn-pos", NULL, 0, six, 6, a, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, a, 1, &r, &eb) == CUZK_OK);
    CHECK(r.state == CUZK_JOB_QUEUED || r.state == CUZK_JOB_RUNNING);
    cuzk_job_result_free(&r);
    /* Shutdown with grace drains it. */
    CHECK(cuzk_engine_shutdown(e, 60000) == 0);
    CHECK(cuzk_engine_await(e, a, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    CHECK(submit(e, "bn-pos", NULL, 0, &bp, 1, a, &eb) == CUZK_CANCELLED);
    cuzk_engine_free(e);
    free(bp.data);
}

/* A budget of two partitions, 3 workers, 20 jobs of 3 partitions: every job completes and the
 * reserved bytes never exceed the budget. */
static void test_budget(void)
{
    cuzk_circuit_info ci[4];
    cuzk_engine *e0 = make(1, 1ull << 30, 0);
    cuzk_engine_circuits(e0, ci, 4);
    cuzk_engine_free(e0);
    uint64_t part = ci[1].partition_bytes;
    cuzk_engine *e = make(3, 2 * part + part / 2, 8);
    blob bp = load("tests/fixtures/bn128/poseidon.wtns");
    blob three[3] = {bp, bp, bp};
    cuzk_errbuf eb = {{0}};
    char ids[20][32];
    for (int i = 0; i < 20; i++)
        CHECK(submit(e, "bn-pos", NULL, 0, three, 3, ids[i], &eb) == CUZK_OK);
    for (int i = 0; i < 20; i++) {
        cuzk_job_result r;
        CHECK(cuzk_engine_await(e, ids[i], 0, &r, &eb) == CUZK_OK);
        CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "job %d state %d %s", i, r.state, r.error);
        cuzk_job_result_free(&r);
    }
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.budget.peak <= st.budget.limit && st.budget.peak >= part);
    CHECK(st.budget.waits > 0); /* the third worker had to wait */
    CHECK(st.budget.in_use == 0);
    cuzk_engine_free(e);
    free(bp.data);
}

static void test_config(void)
{
    cuzk_daemon_config c;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_daemon_config_parse(&c, "empty.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(strcmp(c.listen, "0.0.0.0:9820") == 0 && c.gpu_workers_per_device == 2 && c.verify);
    cuzk_daemon_config_free(&c);
    const char *good = "[daemon]\nlisten = \"127.0.0.1:1\"\n[memory]\nworking_budget = \"2GiB\"\n"
                       "[scheduler]\nmax_jobs_in_flight = 3\n[[circuit]]\nid = \"x\"\n"
                       "zkey = \"k.zkey\"\npriority = \"high\"\npreload = true\n";
    CHECK(cuzk_daemon_config_parse(&c, "a.toml", good, strlen(good), "/cfg", &eb) == CUZK_OK);
    CHECK(c.working_budget == 2ull << 30 && c.max_jobs_in_flight == 3 && c.n_circuits == 1);
    CHECK(strcmp(c.circuits[0].zkey, "/cfg/k.zkey") == 0);
    CHECK(c.circuits[0].priority == CUZK_PRIO_HIGH && c.circuits[0].preload);
    cuzk_daemon_config_free(&c);
    const char *unknown = "[gpus]\nwrkers = 2\n";
    CHECK(cuzk_daemon_config_parse(&c, "b.toml", unknown, strlen(unknown), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "b.toml:2") && strstr(eb.msg, "gpus.wrkers"), "%s", eb.msg);
    const char *type = "[synthesis]\npartition_workers = \"two\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "c.toml", type, strlen(type), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "c.toml:2") && strstr(eb.msg, "partition_workers"), "%s", eb.msg);
    const char *size = "[memory]\n\nworking_budget = \"12 parsecs\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "d.toml", size, strlen(size), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "d.toml:3") && strstr(eb.msg, "working_budget"), "%s", eb.msg);
    const char *gpus = "[gpus]\nbackend = \"cpu\"\ng2 = \"gpu\"\n[keys]\ncache_dir = \"kc\"\n"
                       "[memory]\nwitness_budget = \"1MiB\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "g.toml", gpus, strlen(gpus), "/cfg", &eb) == CUZK_OK);
    CHECK(c.backend == CUZK_BACKEND_CPU && c.g2_on_gpu == 1 && c.key_cache == 1);
    CHECK(strcmp(c.key_cache_dir, "/cfg/kc") == 0 && c.witness_budget == 1u << 20);
    cuzk_daemon_config_free(&c);
    CHECK(cuzk_daemon_config_parse(&c, "h.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.backend == CUZK_BACKEND_AUTO && c.g2_on_gpu == 2 && c.g2_gpu_min_scalars == 262144 &&
          c.key_cache == 1 &&
          c.key_cache_dir[0] == 0);
    cuzk_daemon_config_free(&c);
    const char *badb = "[gpus]\nbackend = \"tpu\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "i.toml", badb, strlen(badb), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "i.toml:2") && strstr(eb.msg, "auto, cpu, gpu"), "%s", eb.msg);
    const char *badg = "[gpus]\ng2 = \"fpga\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "j.toml", badg, strlen(badg), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "j.toml:2") && strstr(eb.msg, "gpus.g2"), "%s", eb.msg);
    const char *noid = "[[circuit]]\nzkey = \"a\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "e.toml", noid, strlen(noid), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "e.toml:1") && strstr(eb.msg, "'id'"), "%s", eb.msg);
}

/* The GPU pipeline on simulated devices (their "GPU" stage runs on the CPU in the GPU worker
 * threads): partitions flow through the GPU workers, a faulting device's partitions are
 * retried on the other one, and when every device faults they fall back to the CPU; every
 * proof verifies against snarkjs's key either way. */
static uint64_t g_g2_min; /* g2_gpu_min_scalars for the next run_gpu_case */

static void run_gpu_case(unsigned ndev, uint32_t faulty, int g2_on_gpu, cuzk_engine_status *st)
{
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.test_fake_gpus = ndev;
    g_extra.test_faulty_gpus = faulty;
    g_extra.gpu_workers_per_device = 2;
    g_extra.g2_on_gpu = g2_on_gpu;
    g_extra.g2_gpu_min_scalars = g_g2_min;
    cuzk_engine *e = make(3, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    blob bp = load("tests/fixtures/bn128/poseidon.wtns");
    blob lp = load("tests/fixtures/bls12381/poseidon.wtns");
    blob three_b[3] = {bp, bp, bp}, three_l[3] = {lp, lp, lp};
    cuzk_errbuf eb = {{0}};
    char ids[6][32];
    for (int i = 0; i < 6; i++)
        CHECK(submit(e, i & 1 ? "bls-pos" : "bn-pos", NULL, 0, i & 1 ? three_l : three_b, 3,
                     ids[i], &eb) == CUZK_OK);
    for (int i = 0; i < 6; i++) {
        cuzk_job_result r;
        CHECK(cuzk_engine_await(e, ids[i], 0, &r, &eb) == CUZK_OK);
        CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "gpu case %u/%x job %d: state %d %s", ndev,
                  faulty, i, r.state, r.error);
        if (r.state == CUZK_JOB_COMPLETED)
            check_proofs(&r, i & 1 ? "tests/fixtures/bls12381/poseidon_vk.json"
                                   : "tests/fixtures/bn128/poseidon_vk.json",
                         i & 1 ? CUZK_CURVE_BLS12_381 : CUZK_CURVE_BN254);
        cuzk_job_result_free(&r);
    }
    cuzk_engine_get_status(e, st);
    CHECK(st->n_devices == ndev && st->gpu_workers == 2 * ndev);
    CHECK(st->partitions_proved == 18 && st->budget.in_use == 0);
    CHECK(st->witness_budget.in_use == 0 && st->witness_budget.peak > 0);
    char *m = cuzk_engine_metrics(e);
    CHECK(m && strstr(m, "cuzk_gpu_faults_total") && strstr(m, "cuzk_gpu_partitions_total"));
    free(m);
    cuzk_engine_free(e);
    free(bp.data);
    free(lp.data);
}

static void test_gpu_pipeline(void)
{
    cuzk_engine_status st;
    /* Two healthy devices: every GPU stage runs on them, none on the CPU. */
    run_gpu_case(2, 0, 0, &st);
    CHECK(st.devices[0].partitions + st.devices[1].partitions == 18);
    CHECK(st.gpu_faults == 0 && st.cpu_fallbacks == 0);
    CHECK(st.g2_on_gpu == 0);
    /* B in G2 on the GPU workers too. */
    run_gpu_case(1, 0, 1, &st);
    CHECK(st.devices[0].partitions == 18 && st.cpu_fallbacks == 0 && st.g2_on_gpu == 18);
    /* auto: the fixtures' witnesses have ~500 values other than 0 and 1 (poseidon): below the
     * default threshold G2 stays on the CPU, at a threshold of 100 it moves to the GPU. */
    run_gpu_case(1, 0, 2, &st);
    CHECK_MSG(st.g2_on_gpu == 0, "auto, default threshold: %llu on GPU",
              (unsigned long long)st.g2_on_gpu);
    g_g2_min = 100;
    run_gpu_case(1, 0, 2, &st);
    g_g2_min = 0;
    CHECK_MSG(st.g2_on_gpu == 18, "auto, threshold 100: %llu on GPU",
              (unsigned long long)st.g2_on_gpu);
    /* Device 0 always faults: each fault is retried on device 1, which does all the work. */
    run_gpu_case(2, 1, 0, &st);
    CHECK_MSG(st.devices[1].partitions == 18 && st.devices[0].partitions == 0,
              "partitions %llu / %llu", (unsigned long long)st.devices[0].partitions,
              (unsigned long long)st.devices[1].partitions);
    CHECK(st.gpu_retries == st.gpu_faults && st.cpu_fallbacks == 0);
    CHECK(st.devices[0].faults == st.gpu_faults && st.devices[1].faults == 0);
    /* Every device faults: both are disabled after 3 faults in a row, the CPU does the rest. */
    run_gpu_case(2, 3, 0, &st);
    CHECK(st.devices[0].disabled && st.devices[1].disabled);
    CHECK(st.devices[0].faults >= 3 && st.devices[1].faults >= 3 &&
          st.gpu_faults == st.devices[0].faults + st.devices[1].faults);
    CHECK(st.cpu_fallbacks >= 3 && st.devices[0].partitions + st.devices[1].partitions == 0);
}

/* Witness bytes of accepted jobs are charged to the witness budget and refused beyond it. */
static void test_witness_budget(void)
{
    blob lp = load("tests/fixtures/bls12381/poseidon.wtns");
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.witness_budget = 3 * lp.len + lp.len / 2;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    blob four[4] = {lp, lp, lp, lp};
    cuzk_errbuf eb = {{0}};
    char a[32], b[32];
    CHECK(submit(e, "bls-pos", NULL, 0, four, 4, a, &eb) == CUZK_OUT_OF_BUDGET);
    CHECK_MSG(strstr(eb.msg, "more than the whole witness budget"), "%s", eb.msg);
    /* Three partitions on one worker (the key is cold): the second request finds the first's
     * witnesses still held. */
    CHECK(submit(e, "bls-pos", NULL, 0, four, 3, a, &eb) == CUZK_OK);
    CHECK(submit(e, "bls-pos", NULL, 0, four, 1, b, &eb) == CUZK_OUT_OF_BUDGET);
    CHECK_MSG(strstr(eb.msg, "busy") && strstr(eb.msg, "retry later"), "%s", eb.msg);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.witness_budget.in_use > 0 && st.witness_budget.in_use <= 3 * lp.len);
    cuzk_job_result r;
    CHECK(cuzk_engine_await(e, a, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    cuzk_engine_get_status(e, &st);
    CHECK(st.witness_budget.in_use == 0);
    CHECK(submit(e, "bls-pos", NULL, 0, four, 3, b, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, b, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    cuzk_engine_free(e);
    free(lp.data);
}

int main(void)
{
    cuzk_log_set_level(CUZK_LOG_LEVEL_WARN);
    test_config();
    test_basic();
    test_key_lru();
    test_priority_cancel();
    test_budget();
    test_gpu_pipeline();
    test_witness_budget();
    return tu_finish("engine");
}
