/* The proving engine without gRPC: proofs on both curves checked against the verification keys
 * snarkjs wrote (tests/fixtures/ * _vk.json), idempotent request ids, witness errors failing
 * only their own request, priority order with one worker, cancel, a small working budget under
 * many concurrent multi-partition jobs, key eviction, and the config file parser. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/log.h"
#include "engine/config.h"
#include "gpu/gpu.h"
#include "engine/engine.h"
#include "engine/engine_internal.h" /* cuzk__key_stream_plan */
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
    cuzk_submit s = {.circuit_id = circ, .request_id = rid, .priority = p, .n_witnesses = n,
                     .witnesses = ptrs, .witness_lens = lens};
    int existing;
    return cuzk_engine_submit(e, &s, id, &existing, eb);
}

static const cuzk_engine_circuit CIRCS[] = {
    {.id = "bn-mul", .zkey = "tests/fixtures/bn128/multiplier.zkey", .preload = 1},
    {.id = "bn-pos", .zkey = "tests/fixtures/bn128/poseidon.zkey"},
    {.id = "bls-mul", .zkey = "tests/fixtures/bls12381/multiplier.zkey", .preload = 1},
    {.id = "bls-pos", .zkey = "tests/fixtures/bls12381/poseidon.zkey",
     .priority = CUZK_PRIO_LOW},
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
    cuzk_submit s = {.circuit_id = "bn-pos", .request_id = "req-a", .n_witnesses = 2,
                     .witnesses = pp, .witness_lens = ll};
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_OK);
    CHECK(existing == 1 && strcmp(again, id2) == 0);
    s.n_witnesses = 1;
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_INVALID_ARGUMENT);
    /* Same count and lengths, one bit of the second witness's last value changed (still below
     * r): other witnesses, refused. The fingerprint covers every chunk of every witness. */
    blob flip = {malloc(bp.len), bp.len};
    memcpy(flip.data, bp.data, bp.len);
    {
        cuzk_wtns fw;
        CHECK(cuzk_wtns_parse(&fw, bp.data, bp.len, "w", &eb) == 0);
        flip.data[(size_t)(fw.values - bp.data) + 32 * (fw.n_witness - 1)] ^= 1;
        CHECK(fw.n_witness * 32 > 3 * 4096); /* spans several of the engine's 4 KiB chunks */
    }
    s.n_witnesses = 2;
    pp[1] = flip.data;
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK_MSG(strstr(eb.msg, "already used") != NULL, "%s", eb.msg);
    pp[1] = bp.data;
    existing = 0;
    CHECK(cuzk_engine_submit(e, &s, again, &existing, &eb) == CUZK_OK && existing == 1);
    /* Values not below r: the first one in request order is named (witness 1, value 7 of the
     * bad values 7 and 400), before a later witness's bad header. */
    {
        cuzk_wtns fw;
        CHECK(cuzk_wtns_parse(&fw, bp.data, bp.len, "w", &eb) == 0);
        size_t v0 = (size_t)(fw.values - bp.data);
        blob nc = {malloc(bp.len), bp.len}, hdr = {malloc(bp.len), bp.len};
        memcpy(nc.data, bp.data, bp.len);
        memset(nc.data + v0 + 32 * 400, 0xff, 32);
        memset(nc.data + v0 + 32 * 7, 0xff, 32);
        memcpy(hdr.data, bp.data, bp.len);
        hdr.data[0] ^= 0xff;
        blob three[3] = {bp, nc, hdr};
        CHECK(submit(e, "bn-pos", NULL, 0, three, 3, again, &eb) == CUZK_NON_CANONICAL);
        CHECK_MSG(strstr(eb.msg, "witness 1: witness value 7 is not below") != NULL, "%s",
                  eb.msg);
        blob hdr_first[2] = {hdr, nc};
        CHECK(submit(e, "bn-pos", NULL, 0, hdr_first, 2, again, &eb) == CUZK_BAD_FORMAT);
        CHECK_MSG(strstr(eb.msg, "witness 0") != NULL, "%s", eb.msg);
        free(nc.data);
        free(hdr.data);
    }
    free(flip.data);

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
    /* A request id is matched among one owner's jobs only: another owner's is a new job. */
    {
        char other[32], owner[80];
        cuzk_submit so = s;
        so.owner = "0123456789abcdef";
        CHECK(cuzk_engine_submit(e, &so, other, &existing, &eb) == CUZK_OK);
        CHECK(existing == 0 && strcmp(other, id2) != 0);
        CHECK(cuzk_engine_job_owner(e, other, owner, sizeof owner, &eb) == CUZK_OK &&
              strcmp(owner, "0123456789abcdef") == 0);
        CHECK(cuzk_engine_job_owner(e, id2, owner, sizeof owner, &eb) == CUZK_OK && !owner[0]);
        CHECK(cuzk_engine_job_owner(e, "j999-0", owner, sizeof owner, &eb) == CUZK_NOT_FOUND);
        CHECK(cuzk_engine_submit(e, &so, again, &existing, &eb) == CUZK_OK && existing == 1 &&
              strcmp(again, other) == 0);
    }
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
    /* Which LOW jobs were still queued once CRITICAL was: each of them must finish after it.
     * (How many LOW jobs the one worker got through before that depends on the machine's
     * load: on a loaded 2-core CI machine two once did, so the count is not asserted.) */
    int queued[6], nq = 0;
    for (int i = 0; i < 6; i++) {
        CHECK(cuzk_engine_await(e, low[i], 1, &r, &eb) == CUZK_OK);
        queued[i] = r.state == CUZK_JOB_QUEUED;
        nq += queued[i];
        cuzk_job_result_free(&r);
    }
    CHECK_MSG(nq >= 1, "no LOW job left queued behind CRITICAL");
    CHECK(cuzk_engine_await(e, crit, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    uint64_t cseq = r.seq;
    cuzk_job_result_free(&r);
    for (int i = 0; i < 6; i++) {
        CHECK(cuzk_engine_await(e, low[i], 0, &r, &eb) == CUZK_OK);
        CHECK(r.state == CUZK_JOB_COMPLETED);
        if (queued[i])
            CHECK_MSG(r.seq > cseq, "LOW #%d, queued behind CRITICAL (#%llu), finished as #%llu",
                      i, (unsigned long long)cseq, (unsigned long long)r.seq);
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

/* [cluster]: absent means a single node; present needs database; durations and storage. */
static void test_cluster_config(void)
{
    cuzk_daemon_config c;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_daemon_config_parse(&c, "e.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.cluster_database[0] == 0 && c.cluster_lease_ms == 30000 &&
          c.cluster_retain_ms == 24ull * 3600 * 1000 && c.cluster_notify == 1);
    cuzk_daemon_config_free(&c);
    const char *ok = "[cluster]\ndatabase = \"postgresql://db/cuzk\"\nnode_id = \"n1\"\n"
                     "lease = \"2s\"\nretain = \"1h\"\nslots = 3\nnotify = false\n"
                     "witness_storage = \"shared_dir\"\nwitness_dir = \"w\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "c.toml", ok, strlen(ok), "/cfg", &eb) == CUZK_OK);
    CHECK(strcmp(c.cluster_database, "postgresql://db/cuzk") == 0 &&
          strcmp(c.cluster_node_id, "n1") == 0 && c.cluster_lease_ms == 2000 &&
          c.cluster_retain_ms == 3600000 && c.cluster_slots == 3 && !c.cluster_notify &&
          c.cluster_witness_shared && strcmp(c.cluster_witness_dir, "/cfg/w") == 0);
    cuzk_daemon_config_free(&c);
    const char *nodb = "[cluster]\nnode_id = \"n1\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "n.toml", nodb, strlen(nodb), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "n.toml:1") && strstr(eb.msg, "database"), "%s", eb.msg);
    const char *nodir = "[cluster]\ndatabase = \"x\"\nwitness_storage = \"shared_dir\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "s.toml", nodir, strlen(nodir), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "witness_dir"), "%s", eb.msg);
    const char *lease = "[cluster]\ndatabase = \"x\"\nlease = \"10ms\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "l.toml", lease, strlen(lease), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "l.toml:3") && strstr(eb.msg, "cluster.lease"), "%s", eb.msg);
}

static void test_config(void)
{
    cuzk_daemon_config c;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_daemon_config_parse(&c, "empty.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(strcmp(c.listen, "127.0.0.1:9820") == 0 && c.gpu_workers_per_device == 0 && c.verify);
    CHECK(c.socket_mode == 0600 && !c.tokens_file[0] && !c.tls_cert[0] && !c.metrics_insecure);
    cuzk_daemon_config_free(&c);
    const char *good = "[daemon]\nlisten = \"127.0.0.1:1\"\n[memory]\nworking_budget = \"2GiB\"\n"
                       "[scheduler]\nmax_jobs_in_flight = 3\n[[circuit]]\nid = \"x\"\n"
                       "zkey = \"k.zkey\"\npriority = \"high\"\npreload = true\n";
    CHECK(cuzk_daemon_config_parse(&c, "a.toml", good, strlen(good), "/cfg", &eb) == CUZK_OK);
    CHECK(c.working_budget == 2ull << 30 && c.max_jobs_in_flight == 3 && c.n_circuits == 1);
    CHECK(strcmp(c.circuits[0].zkey, "/cfg/k.zkey") == 0);
    CHECK(c.circuits[0].priority == CUZK_PRIO_HIGH && c.circuits[0].preload);
    cuzk_daemon_config_free(&c);
    /* Witness sources: wasm paths and a command's program relative to the config's folder,
     * a command split on spaces or given as an array, its timeout (default 60 s). */
    const char *ws = "[[circuit]]\nid = \"w\"\nzkey = \"k.zkey\"\nwasm = \"c.wasm\"\n"
                     "wasm_cache = \"wc\"\n[[circuit]]\nid = \"s\"\nzkey = \"k.zkey\"\n"
                     "witness_cmd = \" ./gen.sh  --fast x\"\nwitness_timeout = \"2m\"\n"
                     "witness_scratch_dir = \"sc\"\n"
                     "[[circuit]]\nid = \"a\"\nzkey = \"k.zkey\"\n"
                     "witness_cmd = [\"sh\", \"-c\", \"gen $0 $1\"]\n";
    CHECK(cuzk_daemon_config_parse(&c, "w.toml", ws, strlen(ws), "/cfg", &eb) == CUZK_OK);
    CHECK_MSG(c.n_circuits == 3 && strcmp(c.circuits[0].wasm, "/cfg/c.wasm") == 0 &&
              strcmp(c.circuits[0].wasm_cache, "/cfg/wc") == 0 && !c.circuits[0].witness_cmd,
              "%s", eb.msg);
    const char *const *a1 = c.circuits[1].witness_cmd, *const *a2 = c.circuits[2].witness_cmd;
    CHECK(a1 && strcmp(a1[0], "/cfg/./gen.sh") == 0 && strcmp(a1[1], "--fast") == 0 &&
          strcmp(a1[2], "x") == 0 && !a1[3] && c.circuits[1].witness_timeout_ms == 120000 &&
          strcmp(c.circuits[1].witness_scratch_dir, "/cfg/sc") == 0 && !c.circuits[1].wasm);
    CHECK(a2 && strcmp(a2[0], "sh") == 0 && strcmp(a2[2], "gen $0 $1") == 0 && !a2[3] &&
          c.circuits[2].witness_timeout_ms == 60000);
    cuzk_daemon_config_free(&c);
    const char *bad_ws[][2] = {
        {"wasm = \"c.wasm\"\nwitness_cmd = \"g\"\n", "not both"},
        {"witness_timeout = \"5s\"\n", "witness_timeout"},
        {"witness_cmd = \"  \"\n", "names no command"},
        {"witness_cmd = [\"g\", 1]\n", "witness_cmd"},
        {"wasm_cache = \"d\"\n", "without 'wasm'"},
        {"witness_cmd = \"g\"\nwitness_timeout = \"0s\"\n", "at least 1ms"},
    };
    for (size_t i = 0; i < sizeof bad_ws / sizeof bad_ws[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "[[circuit]]\nid = \"x\"\nzkey = \"k.zkey\"\n%s",
                 bad_ws[i][0]);
        CHECK(cuzk_daemon_config_parse(&c, "v.toml", text, strlen(text), ".", &eb) ==
              CUZK_BAD_CONFIG);
        CHECK_MSG(strstr(eb.msg, "v.toml:") && strstr(eb.msg, bad_ws[i][1]), "%zu: %s", i,
                  eb.msg);
    }
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
    const char *gpus = "[gpus]\nbackend = \"cpu\"\ng2 = \"gpu\"\nsynth = \"cpu\"\n"
                       "[keys]\ncache_dir = \"kc\"\n[memory]\nwitness_budget = \"1MiB\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "g.toml", gpus, strlen(gpus), "/cfg", &eb) == CUZK_OK);
    CHECK(c.backend == CUZK_BACKEND_CPU && c.g2_on_gpu == 1 && c.key_cache == 1);
    CHECK(c.synth_on_cpu == 1);
    CHECK(strcmp(c.key_cache_dir, "/cfg/kc") == 0 && c.witness_budget == 1u << 20);
    cuzk_daemon_config_free(&c);
    CHECK(cuzk_daemon_config_parse(&c, "h.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.backend == CUZK_BACKEND_AUTO && c.g2_on_gpu == 2 && c.g2_gpu_min_scalars == 262144 &&
          c.key_cache == 1 && c.synth_on_cpu == 0 && c.gpu_tables == 1 &&
          c.key_cache_dir[0] == 0);
    cuzk_daemon_config_free(&c);
    /* gpus.msm_tables: on by default, off on request, a boolean or an error naming it. */
    const char *mt = "[gpus]\nmsm_tables = false\n";
    CHECK(cuzk_daemon_config_parse(&c, "mt.toml", mt, strlen(mt), ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(c.gpu_tables == 0 && ecf.gpu_tables == 0);
    }
    cuzk_daemon_config_free(&c);
    const char *mtbad = "[gpus]\nmsm_tables = \"yes\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "mu.toml", mtbad, strlen(mtbad), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "mu.toml:2") && strstr(eb.msg, "gpus.msm_tables"), "%s", eb.msg);
    /* gpus.ba_fit: on by default (the engine's no_ba_fit 0), off on request, a boolean. */
    CHECK(cuzk_daemon_config_parse(&c, "bf.toml", "", 0, ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(c.gpu_ba_fit == 1 && ecf.no_ba_fit == 0);
    }
    cuzk_daemon_config_free(&c);
    const char *bf = "[gpus]\nba_fit = false\n";
    CHECK(cuzk_daemon_config_parse(&c, "bf.toml", bf, strlen(bf), ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(c.gpu_ba_fit == 0 && ecf.no_ba_fit == 1);
    }
    cuzk_daemon_config_free(&c);
    const char *bfbad = "[gpus]\nba_fit = 1\n";
    CHECK(cuzk_daemon_config_parse(&c, "bb.toml", bfbad, strlen(bfbad), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "bb.toml:2") && strstr(eb.msg, "gpus.ba_fit"), "%s", eb.msg);
    /* gpus.emulated_devices (tests only): 0 by default, passed to the engine, at most
     * CUZK_MAX_DEVICES. */
    CHECK(cuzk_daemon_config_parse(&c, "em.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.emulated_devices == 0);
    cuzk_daemon_config_free(&c);
    const char *em = "[gpus]\nemulated_devices = 2\n";
    CHECK(cuzk_daemon_config_parse(&c, "em.toml", em, strlen(em), ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(c.emulated_devices == 2 && ecf.emulated_devices == 2);
    }
    cuzk_daemon_config_free(&c);
    const char *embad = "[gpus]\nemulated_devices = 17\n";
    CHECK(cuzk_daemon_config_parse(&c, "eb.toml", embad, strlen(embad), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "eb.toml:2") && strstr(eb.msg, "gpus.emulated_devices"), "%s",
              eb.msg);
    /* gpus.g2_device: -1 (beside each GPU worker) by default, a device number sets the
     * dedicated device; gpus.emulated_faulty_devices: indices, as a bit mask. */
    CHECK(cuzk_daemon_config_parse(&c, "g2.toml", "", 0, ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(c.g2_device == -1 && !ecf.g2_dedicated && ecf.emulated_faulty_devices == 0);
    }
    cuzk_daemon_config_free(&c);
    const char *g2d = "[gpus]\ng2_device = 3\nemulated_faulty_devices = [1, 5]\n";
    CHECK(cuzk_daemon_config_parse(&c, "g2.toml", g2d, strlen(g2d), ".", &eb) == CUZK_OK);
    {
        cuzk_engine_config ecf;
        cuzk_daemon_config_engine(&c, &ecf);
        CHECK(ecf.g2_dedicated && ecf.g2_device == 3 && ecf.emulated_faulty_devices == 0x22);
    }
    cuzk_daemon_config_free(&c);
    const char *g2bad[] = {"[gpus]\ng2_device = -2\n", "[gpus]\ng2_device = \"1\"\n",
                           "[gpus]\nemulated_faulty_devices = [16]\n"};
    for (size_t i = 0; i < 3; i++) {
        CHECK(cuzk_daemon_config_parse(&c, "g2.toml", g2bad[i], strlen(g2bad[i]), ".", &eb) ==
              CUZK_BAD_CONFIG);
        CHECK_MSG(strstr(eb.msg, "g2.toml:2") && strstr(eb.msg, i < 2 ? "gpus.g2_device" :
                  "out of range"), "case %zu: %s", i, eb.msg);
    }
    /* Tier budgets: "auto" (the default) or a size; "0" pins nothing. */
    CHECK(cuzk_daemon_config_parse(&c, "t.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.gpu_budget == CUZK_BUDGET_AUTO && c.pinned_budget == CUZK_BUDGET_AUTO);
    CHECK(c.gpu_stream_chunk == CUZK_STREAM_CHUNK_DEFAULT);
    cuzk_daemon_config_free(&c);
    /* gpus.stream_chunk: a size of at least 1KiB, passed to the engine. */
    const char *sc = "[gpus]\nstream_chunk = \"256MiB\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "s.toml", sc, strlen(sc), ".", &eb) == CUZK_OK);
    cuzk_engine_config scf;
    cuzk_daemon_config_engine(&c, &scf);
    CHECK(c.gpu_stream_chunk == 256ull << 20 && scf.gpu_stream_chunk == 256ull << 20);
    cuzk_daemon_config_free(&c);
    /* gpus.stream_batch: 1 to 16, default CUZK_STREAM_BATCH_DEFAULT, passed to the engine. */
    CHECK(cuzk_daemon_config_parse(&c, "t.toml", "", 0, ".", &eb) == CUZK_OK);
    CHECK(c.gpu_stream_batch == CUZK_STREAM_BATCH_DEFAULT);
    cuzk_daemon_config_free(&c);
    const char *sbt = "[gpus]\nstream_batch = 7\n";
    CHECK(cuzk_daemon_config_parse(&c, "s.toml", sbt, strlen(sbt), ".", &eb) == CUZK_OK);
    cuzk_daemon_config_engine(&c, &scf);
    CHECK(c.gpu_stream_batch == 7 && scf.gpu_stream_batch == 7);
    cuzk_daemon_config_free(&c);
    const char *sbbad = "[gpus]\nstream_batch = 17\n";
    CHECK(cuzk_daemon_config_parse(&c, "sb.toml", sbbad, strlen(sbbad), ".", &eb) ==
          CUZK_BAD_CONFIG && strstr(eb.msg, "gpus.stream_batch"));
    const char *scbad = "[gpus]\nstream_chunk = 100\n";
    CHECK(cuzk_daemon_config_parse(&c, "sb.toml", scbad, strlen(scbad), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "sb.toml:2") && strstr(eb.msg, "gpus.stream_chunk"), "%s", eb.msg);
    const char *tb = "[memory]\ngpu_budget = \"4GiB\"\npinned_budget = \"0\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "u.toml", tb, strlen(tb), ".", &eb) == CUZK_OK);
    CHECK(c.gpu_budget == 4ull << 30 && c.pinned_budget == 0);
    cuzk_engine_config ecf;
    cuzk_daemon_config_engine(&c, &ecf);
    CHECK(ecf.gpu_budget == 4ull << 30 && ecf.pinned_budget == 0);
    cuzk_daemon_config_free(&c);
    const char *ta = "[memory]\ngpu_budget = \"auto\"\npinned_budget = 1048576\n";
    CHECK(cuzk_daemon_config_parse(&c, "v.toml", ta, strlen(ta), ".", &eb) == CUZK_OK);
    CHECK(c.gpu_budget == CUZK_BUDGET_AUTO && c.pinned_budget == 1u << 20);
    cuzk_daemon_config_free(&c);
    const char *tbad = "[memory]\n\ngpu_budget = \"most\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "w.toml", tbad, strlen(tbad), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "w.toml:3") && strstr(eb.msg, "memory.gpu_budget"), "%s", eb.msg);
    const char *pbad = "[memory]\npinned_budget = true\n";
    CHECK(cuzk_daemon_config_parse(&c, "x.toml", pbad, strlen(pbad), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "x.toml:2") && strstr(eb.msg, "memory.pinned_budget"), "%s", eb.msg);
    const char *badb = "[gpus]\nbackend = \"tpu\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "i.toml", badb, strlen(badb), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "i.toml:2") && strstr(eb.msg, "auto, cpu, gpu"), "%s", eb.msg);
    const char *badg = "[gpus]\ng2 = \"fpga\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "j.toml", badg, strlen(badg), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "j.toml:2") && strstr(eb.msg, "gpus.g2"), "%s", eb.msg);
    const char *bads = "[gpus]\n\nsynth = \"fpga\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "k.toml", bads, strlen(bads), ".", &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "k.toml:3") && strstr(eb.msg, "gpus.synth") &&
                  strstr(eb.msg, "gpu, cpu"),
              "%s", eb.msg);
    const char *noid = "[[circuit]]\nzkey = \"a\"\n";
    CHECK(cuzk_daemon_config_parse(&c, "e.toml", noid, strlen(noid), ".", &eb) ==
          CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "e.toml:1") && strstr(eb.msg, "'id'"), "%s", eb.msg);
    /* Generated keys: generate_* instead of zkey. */
    const char *gen = "[[circuit]]\nid = \"p\"\ngenerate_curve = \"bls12381\"\n"
                      "generate_profile = \"sparse-bits\"\ngenerate_constraints = \"2^27\"\n"
                      "generate_seed = 7\ngenerate_segment = \"2^20\"\n"
                      "[[circuit]]\nid = \"q\"\ngenerate_constraints = 1000\n";
    CHECK(cuzk_daemon_config_parse(&c, "g1.toml", gen, strlen(gen), "/cfg", &eb) == CUZK_OK);
    CHECK(c.n_circuits == 2 && c.circuits[0].zkey == NULL && c.circuits[0].generate);
    if (c.n_circuits == 2 && c.circuits[0].generate && c.circuits[1].generate) {
        const cuzk_gen_params *g = c.circuits[0].generate, *h = c.circuits[1].generate;
        CHECK(g->curve == CUZK_CURVE_BLS12_381 && g->profile == CUZK_GEN_SPARSE_BITS &&
              g->n_constraints == 1u << 27 && strcmp(g->seed, "7") == 0 &&
              g->segment == 1u << 20);
        CHECK(h->curve == CUZK_CURVE_BN254 && h->profile == CUZK_GEN_DENSE &&
              h->n_constraints == 1000 && strcmp(h->seed, "1") == 0 && h->segment == 0);
    }
    cuzk_daemon_config_free(&c);
    static const struct {
        const char *text, *want;
    } bad_gen[] = {
        {"[[circuit]]\nid = \"p\"\nzkey = \"k.zkey\"\ngenerate_constraints = 10\n", "'zkey'"},
        {"[[circuit]]\nid = \"p\"\ngenerate_seed = \"x\"\n", "generate_constraints"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = \"2^40\"\n", "generate_constraints"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 0\n", "generate_constraints"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 9\ngenerate_curve = \"x\"\n",
         "generate_curve"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 9\ngenerate_profile = \"x\"\n",
         "generate_profile"},
        {"[[circuit]]\nid = \"p\"\n", "'zkey'"},
        {"[[circuit]]\nid = \"p\"\ngenerate_segment = 9\n", "generate_constraints"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 9\ngenerate_segment = -1\n",
         "generate_segment"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 9\ngenerate_segment = \"2^33\"\n",
         "generate_segment"},
        {"[[circuit]]\nid = \"p\"\ngenerate_constraints = 9\ngenerate_segment = \"x\"\n",
         "generate_segment"},
    };
    for (size_t i = 0; i < sizeof bad_gen / sizeof bad_gen[0]; i++) {
        CHECK(cuzk_daemon_config_parse(&c, "g2.toml", bad_gen[i].text, strlen(bad_gen[i].text),
                                       ".", &eb) == CUZK_BAD_CONFIG);
        CHECK_MSG(strstr(eb.msg, bad_gen[i].want), "case %zu: %s", i, eb.msg);
    }
}

/* Six 3-partition poseidon jobs, alternating BN254 and BLS12-381, submitted at once: each
 * must complete with proofs that verify against snarkjs's key. */
static void prove_six_poseidon(cuzk_engine *e, const char *what)
{
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
        CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "%s job %d: state %d %s", what, i, r.state,
                  r.error);
        if (r.state == CUZK_JOB_COMPLETED)
            check_proofs(&r, i & 1 ? "tests/fixtures/bls12381/poseidon_vk.json"
                                   : "tests/fixtures/bn128/poseidon_vk.json",
                         i & 1 ? CUZK_CURVE_BLS12_381 : CUZK_CURVE_BN254);
        cuzk_job_result_free(&r);
    }
    free(bp.data);
    free(lp.data);
}

/* The GPU pipeline on simulated devices (their "GPU" stage runs on the CPU in the GPU worker
 * threads): partitions flow through the GPU workers, a faulting device's partitions are
 * retried on the other one, and when every device faults they fall back to the CPU; every
 * proof verifies against snarkjs's key either way. */
static uint64_t g_g2_min; /* g2_gpu_min_scalars for the next run_gpu_case */

static void run_gpu_case(unsigned ndev, uint32_t faulty, int g2_on_gpu, cuzk_engine_status *st)
{
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = ndev;
    g_extra.emulated_faulty_devices = faulty;
    g_extra.gpu_workers_per_device = 2;
    g_extra.g2_on_gpu = g2_on_gpu;
    g_extra.g2_gpu_min_scalars = g_g2_min;
    cuzk_engine *e = make(3, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    char what[64];
    snprintf(what, sizeof what, "gpu case %u/%x", ndev, faulty);
    prove_six_poseidon(e, what);
    cuzk_engine_get_status(e, st);
    CHECK(st->n_devices == ndev && st->gpu_workers == 2 * ndev);
    CHECK(st->partitions_proved == 18 && st->budget.in_use == 0);
    CHECK(st->witness_budget.in_use == 0 && st->witness_budget.peak > 0);
    char *m = cuzk_engine_metrics(e);
    CHECK(m && strstr(m, "cuzk_gpu_faults_total") && strstr(m, "cuzk_gpu_partitions_total"));
    free(m);
    cuzk_engine_free(e);
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

/* Working sets by where a partition's stages run (engine.h "Memory"). With GPU workers a
 * partition of a key staged with its rows reserves only its witness copy (plus B in G2's CPU
 * scratch unless gpus.g2 = "gpu"); the engine keeps a fallback reserve free for one
 * partition's CPU stages. */
static void test_gpu_working_sets(void)
{
    cuzk_circuit_info ci[4];
    cuzk_engine_status st;
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_workers_per_device = 2;
    g_extra.g2_on_gpu = 1;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
    cuzk_engine_get_status(e, &st);
    uint64_t reserve = 0;
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(ci[i].gpu_partition_bytes == 32ull * ci[i].n_vars, "%s: %llu", ci[i].id,
                  (unsigned long long)ci[i].gpu_partition_bytes);
        CHECK(ci[i].gpu_partition_bytes < ci[i].partition_bytes);
        if (ci[i].partition_bytes - ci[i].gpu_partition_bytes > reserve)
            reserve = ci[i].partition_bytes - ci[i].gpu_partition_bytes;
    }
    CHECK_MSG(st.fallback_reserve == reserve, "fallback reserve %llu, want %llu",
              (unsigned long long)st.fallback_reserve, (unsigned long long)reserve);
    cuzk_engine_free(e);
    const uint64_t pmul = ci[2].partition_bytes, gmul = ci[2].gpu_partition_bytes;
    const uint64_t ppos = ci[3].partition_bytes, gpos = ci[3].gpu_partition_bytes;

    /* A budget below bls-mul's CPU working set: its preloaded, staged key takes device-stage
     * partitions, accepted and proved (without GPU workers the same request is refused). */
    blob lm = load("tests/fixtures/bls12381/multiplier.wtns");
    cuzk_errbuf eb = {{0}};
    char id[32];
    cuzk_job_result r;
    g_extra.g2_on_gpu = 1;
    for (int faulty = 0; faulty < 2; faulty++) {
        g_extra.emulated_devices = 1;
        g_extra.gpu_workers_per_device = 2;
        g_extra.g2_on_gpu = 1;
        g_extra.emulated_faulty_devices = (uint32_t)faulty;
        e = make(1, pmul - 1, 0);
        memset(&g_extra, 0, sizeof g_extra);
        cuzk_engine_get_status(e, &st);
        CHECK(st.fallback_reserve == 0 || st.fallback_reserve + gmul <= pmul - 1);
        CHECK_MSG(submit(e, "bls-mul", NULL, 0, &lm, 1, id, &eb) == CUZK_OK, "%s", eb.msg);
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK);
        if (!faulty) {
            CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "device stages under a small budget: %s",
                      r.error ? r.error : "");
            if (r.state == CUZK_JOB_COMPLETED)
                check_proofs(&r, "tests/fixtures/bls12381/multiplier_vk.json",
                             CUZK_CURVE_BLS12_381);
        } else {
            /* Its device faults and its CPU stages can never fit: a clear failure. */
            CHECK_MSG(r.state == CUZK_JOB_FAILED && r.error &&
                      strstr(r.error, "GPU stage failed") &&
                      strstr(r.error, "memory.working_budget") && strstr(r.error, "'bls-mul'"),
                      "state %d: %s", r.state, r.error ? r.error : "");
        }
        cuzk_job_result_free(&r);
        cuzk_engine_get_status(e, &st);
        CHECK(st.budget.in_use == 0 && st.budget.peak <= pmul - 1);
        cuzk_engine_free(e);
    }
    e = make(1, pmul - 1, 0);
    CHECK(submit(e, "bls-mul", NULL, 0, &lm, 1, id, &eb) == CUZK_OUT_OF_BUDGET);
    cuzk_engine_free(e);
    free(lm.data);

    /* Every device faults while the budget holds the CPU working set of one poseidon
     * partition beside two device-stage ones: each partition falls back in turn, none waits
     * forever, every proof verifies, and the budget is never exceeded. */
    const uint64_t budget = (ppos > pmul ? ppos : pmul) + 2 * gpos;
    g_extra.emulated_devices = 2;
    g_extra.emulated_faulty_devices = 3;
    g_extra.gpu_workers_per_device = 2;
    e = make(3, budget, 0);
    memset(&g_extra, 0, sizeof g_extra);
    prove_six_poseidon(e, "fallback under a tight budget");
    cuzk_engine_get_status(e, &st);
    CHECK(st.partitions_proved == 18 && st.cpu_fallbacks >= 3);
    CHECK_MSG(st.budget.in_use == 0 && st.budget.peak <= budget, "peak %llu of %llu",
              (unsigned long long)st.budget.peak, (unsigned long long)budget);
    cuzk_engine_free(e);
}

/* The automatic working budget: half the RAM, lowered when the preloaded keys leave less (RAM
 * less the keys and a sixteenth), the automatic witness budget a quarter of it; an explicit
 * budget is kept. */
static void test_auto_working_budget(void)
{
    cuzk_engine *e = make(1, 0, 0);
    cuzk_engine_status st;
    cuzk_circuit_info ci[4];
    CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
    cuzk_engine_get_status(e, &st);
    uint64_t keys = 0;
    for (int i = 0; i < 4; i++)
        keys += ci[i].resident ? ci[i].bytes : 0;
    CHECK(keys > 0 && st.budget.limit == phys_ram() / 2);
    cuzk_engine_free(e);
    const uint64_t ram = 2 * keys, room = ram - keys - ram / 16;
    cuzk__engine_set_ram(ram);
    e = make(1, 0, 0);
    cuzk_engine_get_status(e, &st);
    CHECK_MSG(st.budget.limit == room, "limit %llu, want %llu", (unsigned long long)st.budget.limit,
              (unsigned long long)room);
    CHECK(st.witness_budget.limit == (room / 4 > (256ull << 20) ? room / 4 : 256ull << 20));
    cuzk_engine_free(e);
    e = make(1, 1ull << 30, 0);
    cuzk_engine_get_status(e, &st);
    CHECK(st.budget.limit == 1ull << 30);
    cuzk_engine_free(e);
    cuzk__engine_set_ram(0);
}

/* ------------------------------------------------------------------ several GPUs */

/* An engine on ndev emulated devices, gw 2, pw partition workers; g2: gpus.g2 (0 cpu, 1 gpu);
 * g2_dev >= 0: the dedicated B in G2 device. */
static cuzk_engine *make_multi(unsigned ndev, unsigned pw, uint32_t faulty, int g2, int g2_dev)
{
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = ndev;
    g_extra.emulated_faulty_devices = faulty;
    g_extra.gpu_workers_per_device = 2;
    g_extra.g2_on_gpu = g2;
    g_extra.g2_dedicated = g2_dev >= 0;
    g_extra.g2_device = g2_dev;
    cuzk_engine *e = make(pw, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    return e;
}

static uint64_t sum_partitions(const cuzk_engine_status *st, int g2)
{
    uint64_t n = 0;
    for (unsigned d = 0; d < st->n_devices; d++)
        n += g2 ? st->devices[d].g2_partitions : st->devices[d].partitions;
    return n;
}

/* At 2, 4 and 8 devices: GPU stages spread over every device (each runs some, even with fewer
 * partition workers than devices; with one, strictly in turn, since every device is idle at
 * each stage and the one with the fewest stages started takes it), and keys are staged per
 * device: the preloaded ones on every device at start, the others on each device whose worker
 * runs one of their stages, counted in that device's key bytes. */
static void test_multi_gpu_spread(void)
{
    const unsigned ndevs[] = {2, 4, 8}, pws[] = {1, 3, 16};
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            unsigned ndev = ndevs[i];
            cuzk_engine *e = make_multi(ndev, pws[k], 0, 0, -1);
            cuzk_circuit_info ci[4];
            CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
            const uint32_t all = (1u << ndev) - 1;
            /* bn-mul and bls-mul preload: staged everywhere before any job. */
            CHECK_MSG(ci[0].gpu_mask == all && ci[2].gpu_mask == all, "%u devices: masks %x %x",
                      ndev, ci[0].gpu_mask, ci[2].gpu_mask);
            CHECK(ci[1].gpu_mask == 0 && ci[3].gpu_mask == 0);
            char what[64];
            snprintf(what, sizeof what, "spread %u devices pw %u", ndev, pws[k]);
            prove_six_poseidon(e, what);
            cuzk_engine_status st;
            cuzk_engine_get_status(e, &st);
            CHECK(st.n_devices == ndev && st.partitions_proved == 18);
            CHECK(sum_partitions(&st, 0) == 18 && st.gpu_faults == 0 && st.cpu_fallbacks == 0);
            CHECK(cuzk_engine_circuits(e, ci, 4) == 4);
            uint64_t key_sum = 0;
            for (unsigned d = 0; d < ndev; d++) {
                const uint32_t bit = 1u << d;
                CHECK_MSG(st.devices[d].partitions > 0, "%s: device %u ran no stage", what, d);
                CHECK_MSG(pws[k] > 1 || st.devices[d].partitions == 18 / ndev ||
                          st.devices[d].partitions == 18 / ndev + 1, "%s: device %u ran %llu "
                          "stages, not in turn", what, d,
                          (unsigned long long)st.devices[d].partitions);
                /* Every device ran poseidon stages: one of the two keys is staged there. */
                CHECK_MSG((ci[1].gpu_mask | ci[3].gpu_mask) & bit, "%s: device %u has no "
                          "poseidon key", what, d);
                uint64_t want = 0;
                for (int c = 0; c < 4; c++)
                    if (ci[c].gpu_mask & bit)
                        want += ci[c].gpu_bytes / (uint64_t)__builtin_popcount(ci[c].gpu_mask);
                CHECK_MSG(st.devices[d].key_bytes == want && want > 0, "%s: device %u key bytes "
                          "%llu, staged keys %llu", what, d,
                          (unsigned long long)st.devices[d].key_bytes, (unsigned long long)want);
                key_sum += st.devices[d].key_bytes;
                CHECK(!st.devices[d].disabled && st.devices[d].g2_partitions == 0);
            }
            CHECK(key_sum == st.keys_gpu_bytes);
            cuzk_engine_free(e);
        }
    }
}

/* At 2, 4 and 8 devices, the last device starts to fault after a first round of jobs: its
 * stages are retried on the others (no proof lost, none on the CPU, every proof verifies), it
 * is disabled after 3 faults in a row, and status and metrics show it disabled. */
static void test_multi_gpu_fault(void)
{
    const unsigned ndevs[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        unsigned ndev = ndevs[i], bad = ndev - 1;
        cuzk_engine *e = make_multi(ndev, 4, 0, 0, -1);
        char what[64];
        snprintf(what, sizeof what, "fault %u devices, before", ndev);
        prove_six_poseidon(e, what);
        cuzk_engine_status st;
        cuzk_engine_get_status(e, &st);
        CHECK(st.devices[bad].partitions > 0 && st.gpu_faults == 0);
        const uint64_t before = st.devices[bad].partitions;
        /* Device `bad` faults from now on: its stages are retried on the others, it is disabled
         * after 3 faults in a row, and every proof still verifies. */
        cuzk__gpu_set_faulty(e, bad, 1);
        int rounds = 0;
        do {
            snprintf(what, sizeof what, "fault %u devices, round %d", ndev, rounds);
            prove_six_poseidon(e, what);
            cuzk_engine_get_status(e, &st);
        } while (!st.devices[bad].disabled && ++rounds < 8);
        CHECK_MSG(st.devices[bad].disabled, "%u devices: device %u not disabled after %d "
                  "rounds (%llu faults)", ndev, bad, rounds,
                  (unsigned long long)st.devices[bad].faults);
        CHECK(st.devices[bad].faults >= 3 && st.gpu_faults == st.devices[bad].faults);
        CHECK(st.devices[bad].partitions == before);
        CHECK_MSG(st.gpu_retries == st.gpu_faults && st.cpu_fallbacks == 0, "retries %llu faults "
                  "%llu fallbacks %llu", (unsigned long long)st.gpu_retries,
                  (unsigned long long)st.gpu_faults, (unsigned long long)st.cpu_fallbacks);
        CHECK(st.partitions_failed == 0 && st.partitions_proved == sum_partitions(&st, 0));
        for (unsigned d = 0; d < bad; d++)
            CHECK(!st.devices[d].disabled && st.devices[d].faults == 0);
        char *m = cuzk_engine_metrics(e);
        char want[64];
        snprintf(want, sizeof want, "cuzk_gpu_disabled{device=\"%u\"} 1", bad);
        CHECK_MSG(m && strstr(m, want), "metrics lack %s", want);
        free(m);
        /* After it is disabled the others take everything. */
        const uint64_t faults = st.gpu_faults;
        prove_six_poseidon(e, "fault, after disabling");
        cuzk_engine_get_status(e, &st);
        CHECK(st.gpu_faults == faults && st.devices[bad].partitions == before);
        cuzk_engine_free(e);
    }
}

/* B in G2 on the GPU: beside each GPU worker (in its partition's stage, on its device) or on a
 * dedicated device (gpus.g2_device) that runs nothing else; when the dedicated device faults,
 * B in G2 falls back to the CPU, and once it is disabled it runs beside the workers again. */
static void test_multi_gpu_g2(void)
{
    const unsigned ndevs[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        unsigned ndev = ndevs[i];
        cuzk_engine_status st;
        cuzk_engine *e = make_multi(ndev, 4, 0, 1, -1);
        prove_six_poseidon(e, "g2 beside");
        cuzk_engine_get_status(e, &st);
        CHECK(st.g2_on_gpu == 18 && sum_partitions(&st, 1) == 18);
        for (unsigned d = 0; d < ndev; d++)
            CHECK(st.devices[d].g2_partitions == st.devices[d].partitions &&
                  !st.devices[d].g2_only);
        cuzk_engine_free(e);

        const unsigned g2d = ndev / 2;
        e = make_multi(ndev, 4, 0, 1, (int)g2d);
        prove_six_poseidon(e, "g2 dedicated");
        cuzk_engine_get_status(e, &st);
        CHECK(st.g2_on_gpu == 18 && st.cpu_fallbacks == 0 && st.gpu_faults == 0);
        CHECK_MSG(st.devices[g2d].g2_only && st.devices[g2d].g2_partitions == 18 &&
                  st.devices[g2d].partitions == 0, "%u devices: dedicated %u ran g2 %llu g1 %llu",
                  ndev, g2d, (unsigned long long)st.devices[g2d].g2_partitions,
                  (unsigned long long)st.devices[g2d].partitions);
        CHECK(sum_partitions(&st, 0) == 18);
        for (unsigned d = 0; d < ndev; d++)
            if (d != g2d)
                CHECK(!st.devices[d].g2_only && st.devices[d].g2_partitions == 0 &&
                      st.devices[d].partitions > 0);
        cuzk_engine_free(e);

        /* The dedicated device always faults. */
        e = make_multi(ndev, 4, 1u << g2d, 1, (int)g2d);
        prove_six_poseidon(e, "g2 dedicated, faulty");
        cuzk_engine_get_status(e, &st);
        CHECK(st.devices[g2d].disabled && st.devices[g2d].g2_partitions == 0);
        CHECK(st.devices[g2d].faults >= 3 && st.cpu_fallbacks >= st.devices[g2d].faults);
        CHECK_MSG(st.g2_on_gpu + st.cpu_fallbacks == 18 && sum_partitions(&st, 1) == st.g2_on_gpu,
                  "g2 on gpu %llu, fallbacks %llu", (unsigned long long)st.g2_on_gpu,
                  (unsigned long long)st.cpu_fallbacks);
        CHECK(sum_partitions(&st, 0) == 18);
        cuzk_engine_free(e);
    }
    /* Refused: a dedicated device with B in G2 kept on the CPU, or one that is not in use. */
    cuzk_engine_circuit circ = {.id = "m", .zkey = NULL};
    char *zk = strdup(tu_src_path("tests/fixtures/bn128/multiplier.zkey"));
    circ.zkey = zk;
    cuzk_engine_config cfg = {.partition_workers = 1, .circuits = &circ, .n_circuits = 1,
                              .emulated_devices = 2, .g2_dedicated = 1, .g2_device = 1};
    cuzk_engine *e = NULL;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_BAD_CONFIG && !e);
    CHECK_MSG(strstr(eb.msg, "gpus.g2_device") && strstr(eb.msg, "gpus.g2"), "%s", eb.msg);
    cfg.g2_on_gpu = 1;
    cfg.g2_device = 2;
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_BAD_CONFIG && !e);
    CHECK_MSG(strstr(eb.msg, "gpus.g2_device = 2") && strstr(eb.msg, "not one of"), "%s", eb.msg);
    /* One device: nothing to dedicate, B in G2 runs beside its workers. */
    cfg.emulated_devices = 1;
    cfg.g2_device = 0;
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_OK && e);
    if (e) {
        cuzk_engine_status st;
        blob w = load("tests/fixtures/bn128/multiplier.wtns");
        prove_one(e, "m", &w);
        cuzk_engine_get_status(e, &st);
        CHECK(!st.devices[0].g2_only && st.devices[0].g2_partitions == 1);
        free(w.data);
        cuzk_engine_free(e);
    }
    free(zk);
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

/* ------------------------------------------------------------------ generated keys */

static const cuzk_gen_params GEN = {.curve = CUZK_CURVE_BLS12_381,
                                    .n_constraints = 300,
                                    .profile = CUZK_GEN_SPARSE_BITS,
                                    .seed = "porep-7",
                                    .nthreads = 2};

/* GEN cut into runs of 64 constraints (the last one short). */
static const cuzk_gen_params GEN_SEG = {.curve = CUZK_CURVE_BLS12_381,
                                        .n_constraints = 300,
                                        .profile = CUZK_GEN_SPARSE_BITS,
                                        .seed = "porep-7",
                                        .nthreads = 1,
                                        .segment = 64};

static cuzk_engine *make_gen_of(const cuzk_gen_params *gp, unsigned prove_threads,
                                uint64_t budget, cuzk_errbuf *eb, cuzk_err *err)
{
    cuzk_engine_circuit circs[2] = {{.id = "gen", .generate = gp}, {.id = "bn-mul"}};
    char *zk = strdup(tu_src_path("tests/fixtures/bn128/multiplier.zkey"));
    circs[1].zkey = zk;
    cuzk_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.partition_workers = 2;
    cfg.prove_threads = prove_threads;
    cfg.working_budget = budget;
    cfg.key_cache = 1; /* a generated key is never written, cache or not */
    cfg.circuits = circs;
    cfg.n_circuits = 2;
    cuzk_engine *e = NULL;
    *err = cuzk_engine_new(&e, &cfg, eb);
    free(zk);
    return e;
}

static cuzk_engine *make_gen(uint64_t budget, cuzk_errbuf *eb, cuzk_err *err)
{
    return make_gen_of(&GEN, 1, budget, eb, err);
}

static cuzk_err submit_seeds(cuzk_engine *e, const char *circ, const uint64_t *seeds, size_t n,
                             char id[32], cuzk_errbuf *eb)
{
    cuzk_submit s = {.circuit_id = circ, .n_witness_seeds = n, .witness_seeds = seeds};
    int existing;
    return cuzk_engine_submit(e, &s, id, &existing, eb);
}

/* Every partition's proof verifies with the generated key's vk, and its public inputs are
 * those of cuzk_gen_witness for its seed (gp's, made in one pass). */
static void check_seed_proofs_of(const cuzk_gen_params *g, const cuzk_job_result *r,
                                 const cuzk_vk *vk, const uint64_t *seeds)
{
    cuzk_errbuf eb = {{0}};
    uint32_t nw = cuzk_gen_n_wires(g);
    uint8_t *w = malloc(32ull * nw);
    for (size_t i = 0; i < r->n_parts; i++) {
        cuzk_json_doc *pd = NULL, *ud = NULL;
        const cuzk_part_result *p = &r->parts[i];
        const char *pj = p->proof_json, *uj = p->public_json;
        CHECK(cuzk_json_parse(&pd, pj, strlen(pj), 1 << 20, "json", &eb) == 0);
        CHECK(cuzk_json_parse(&ud, uj, strlen(uj), 1 << 20, "json", &eb) == 0);
        cuzk_proof proof;
        uint8_t *pub = NULL;
        uint64_t npub = 0;
        CHECK(cuzk_proof_from_json(&proof, cuzk_json_root(pd), g->curve, "proof", &eb) == 0);
        CHECK(cuzk_public_from_json(&pub, &npub, cuzk_json_root(ud), g->curve, "public",
                                    &eb) == 0);
        CHECK_MSG(cuzk_verify(vk, pub, npub, &proof, &eb) == CUZK_OK, "verify: %s", eb.msg);
        char ws[24];
        snprintf(ws, sizeof ws, "%llu", (unsigned long long)seeds[i]);
        cuzk_gen_params gp = *g;
        gp.witness_seed = ws;
        gp.nthreads = 1;
        CHECK(cuzk_gen_witness(w, nw, &gp, NULL, &eb) == CUZK_OK);
        CHECK(npub == vk->n_public && memcmp(pub, w + 32, 32 * npub) == 0);
        free(pub);
        cuzk_json_free(pd);
        cuzk_json_free(ud);
    }
    free(w);
}

static void check_seed_proofs(const cuzk_job_result *r, const cuzk_vk *vk, const uint64_t *seeds)
{
    check_seed_proofs_of(&GEN, r, vk, seeds);
}

/* A segmented generated circuit: its seeds' witnesses made on two threads (one run each at a
 * time) prove, with the public inputs of the one-pass witness; the circuit list names the runs;
 * its key keeps the circuit's structure, and witnesses replayed from it prove too. */
static void test_generated_segmented(void)
{
    cuzk_errbuf eb = {{0}};
    cuzk_err err;
    cuzk_engine *e = make_gen_of(&GEN_SEG, 2, 1ull << 30, &eb, &err);
    CHECK_MSG(err == CUZK_OK, "engine_new: %s", eb.msg);
    if (!e)
        return;
    cuzk_circuit_info ci[2];
    CHECK(cuzk_engine_circuits(e, ci, 2) == 2);
    CHECK_MSG(strstr(ci[0].generate, "300 constraints in runs of 64 seed porep-7"), "%s",
              ci[0].generate);
    cuzk_pk *pk = NULL;
    cuzk_vk vk;
    CHECK_MSG(cuzk_pk_generate(&pk, &GEN_SEG, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    if (pk && cuzk_pk_vk(pk, &vk, &eb) == CUZK_OK) {
        const uint64_t seeds[3] = {3, 4, 5};
        char id[32];
        CHECK_MSG(submit_seeds(e, "gen", seeds, 3, id, &eb) == CUZK_OK, "%s", eb.msg);
        cuzk_job_result r;
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK);
        CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "state %d: %s", r.state, r.error);
        CHECK(r.n_parts == 3);
        if (r.state == CUZK_JOB_COMPLETED)
            check_seed_proofs_of(&GEN_SEG, &r, &vk, seeds);
        cuzk_job_result_free(&r);
        /* The key keeps the circuit's structure (in its host bytes): later seeds' witnesses
         * are replayed from it, and their proofs are as right. */
        cuzk_gen_structure *st = NULL;
        CHECK(cuzk_gen_structure_new(&st, &GEN_SEG, &eb) == CUZK_OK);
        CHECK(cuzk_engine_circuits(e, ci, 2) == 2);
        CHECK_MSG(ci[0].bytes == cuzk_pk_bytes(pk) + cuzk_gen_structure_bytes(st),
                  "host bytes %llu, key %llu + structure %llu", (unsigned long long)ci[0].bytes,
                  (unsigned long long)cuzk_pk_bytes(pk),
                  (unsigned long long)cuzk_gen_structure_bytes(st));
        cuzk_gen_structure_free(st);
        const uint64_t more[2] = {9, 10};
        CHECK_MSG(submit_seeds(e, "gen", more, 2, id, &eb) == CUZK_OK, "%s", eb.msg);
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK);
        CHECK_MSG(r.state == CUZK_JOB_COMPLETED && r.n_parts == 2, "state %d: %s", r.state,
                  r.error);
        if (r.state == CUZK_JOB_COMPLETED)
            check_seed_proofs_of(&GEN_SEG, &r, &vk, more);
        cuzk_job_result_free(&r);
        cuzk_vk_clear(&vk);
    }
    cuzk_pk_free(pk);
    cuzk_engine_free(e);
}

/* A circuit whose key is generated in memory, proved from witness seeds; evicted, it is made
 * again on its next use. Seeds for a zkey circuit are refused. */
static void test_generated(void)
{
    cuzk_errbuf eb = {{0}};
    cuzk_err err;
    cuzk_engine *e = make_gen(1ull << 30, &eb, &err);
    CHECK_MSG(err == CUZK_OK, "engine_new: %s", eb.msg);
    if (!e)
        return;
    cuzk_circuit_info ci[2];
    CHECK(cuzk_engine_circuits(e, ci, 2) == 2);
    CHECK(ci[0].generated && !ci[1].generated && ci[0].zkey[0] == 0);
    CHECK(strcmp(ci[0].note, CUZK_PK_GENERATED_NOTE) == 0 && ci[1].note[0] == 0);
    CHECK_MSG(strstr(ci[0].generate, "bls12381 sparse-bits 300 constraints seed porep-7"), "%s",
              ci[0].generate);
    CHECK(ci[0].tier == CUZK_TIER_COLD && !ci[0].resident);
    uint32_t nv, np, dom;
    CHECK(cuzk_gen_key_shape(&GEN, &nv, &np, &dom, &eb) == CUZK_OK);
    CHECK(ci[0].n_vars == nv && ci[0].n_public == np && ci[0].domain_size == dom);
    cuzk_pk *pk = NULL;
    cuzk_vk vk;
    CHECK_MSG(cuzk_pk_generate(&pk, &GEN, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(pk && cuzk_pk_vk(pk, &vk, &eb) == CUZK_OK);
    CHECK(cuzk_pk_n_vars(pk) == nv && cuzk_pk_domain_size(pk) == dom);
    uint64_t key_bytes = cuzk_pk_bytes(pk);
    {
        /* Host copies released (cuzk_pk_release_host_sets): their bytes come back, and a CPU
         * proof needing them fails naming them, for the G1 stage, B in G2 and synthesis. */
        void *ptr[CUZK_PK_GPU_ARRAYS];
        size_t len[CUZK_PK_GPU_ARRAYS];
        cuzk_pk *rp = NULL;
        CHECK(cuzk_pk_generate(&rp, &GEN, NULL, &eb) == CUZK_OK && rp);
        uint8_t *w = rp ? malloc(32ull * nv) : NULL;
        if (rp && w && cuzk_gen_witness(w, nv, &GEN, NULL, &eb) == CUZK_OK) {
            cuzk_pk_gpu_arrays(rp, ptr, len);
            const unsigned sets[3] = {CUZK_PK_SET_B2, CUZK_PK_SET_C, CUZK_PK_ROWS};
            const char *names[3] = {"B in G2 on the CPU needs the key's point sets B2",
                                    "G1 stage on the CPU needs the key's point sets C",
                                    "synthesis on the CPU needs the key's A and B rows"};
            const uint64_t lens[3] = {len[4], len[2], len[5] + len[6] + len[7] + len[8]};
            uint64_t left = key_bytes;
            unsigned gone = 0;
            cuzk_prove_opts po = {.backend = CUZK_BACKEND_CPU};
            for (int k = 0; k < 3; k++) {
                const uint64_t freed = cuzk_pk_release_host_sets(rp, sets[k]);
                left -= freed;
                gone |= sets[k];
                CHECK_MSG(freed == lens[k] && cuzk_pk_bytes(rp) == left &&
                              cuzk_pk_host_released(rp) == gone,
                          "released %llu of %llu, key %llu", (unsigned long long)freed,
                          (unsigned long long)lens[k], (unsigned long long)cuzk_pk_bytes(rp));
                cuzk_proof pr;
                cuzk_err pe = cuzk_prove(&pr, rp, w, nv, &po, NULL, &eb);
                CHECK_MSG(pe == CUZK_UNSUPPORTED && strstr(eb.msg, names[k]) &&
                              strstr(eb.msg, "released"),
                          "CPU proof without %s: %d %s", names[k], (int)pe, eb.msg);
            }
            CHECK(cuzk_pk_release_host_sets(rp, CUZK_PK_SET_C | CUZK_PK_ROWS) == 0); /* gone */
        }
        free(w);
        cuzk_pk_free(rp);
    }
    cuzk_pk_free(pk);

    const uint64_t seeds[3] = {1, 2, 77};
    char id[32];
    CHECK_MSG(submit_seeds(e, "gen", seeds, 3, id, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_job_result r;
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK);
    CHECK_MSG(r.state == CUZK_JOB_COMPLETED, "state %d: %s", r.state, r.error);
    CHECK(r.n_parts == 3 && r.witness_ms > 0);
    if (r.state == CUZK_JOB_COMPLETED)
        check_seed_proofs(&r, &vk, seeds);
    cuzk_job_result_free(&r);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_bytes == key_bytes && st.keys_loaded == 1);
    /* The witnesses were counted on the working budget, not the witness budget. */
    CHECK(st.budget.peak >= ci[0].partition_bytes + 32ull * nv);
    CHECK(st.budget.owner[CUZK_OWNER_WITNESS].peak >= 32ull * nv);
    CHECK(st.budget.in_use == 0 && st.witness_budget.peak == 0);
    CHECK(cuzk_engine_circuits(e, ci, 2) == 2 && ci[0].tier == CUZK_TIER_HOST &&
          ci[0].mapped_bytes == 0);

    /* Seeds are only for generated keys; not with witnesses. */
    CHECK(submit_seeds(e, "bn-mul", seeds, 1, id, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK_MSG(strstr(eb.msg, "'bn-mul'") && strstr(eb.msg, "generated"), "%s", eb.msg);
    blob bm = load("tests/fixtures/bn128/multiplier.wtns");
    const uint8_t *wp[1] = {bm.data};
    size_t wl[1] = {bm.len};
    cuzk_submit both = {.circuit_id = "gen", .n_witnesses = 1, .witnesses = wp,
                        .witness_lens = wl, .n_witness_seeds = 1, .witness_seeds = seeds};
    int existing;
    CHECK(cuzk_engine_submit(e, &both, id, &existing, &eb) == CUZK_INVALID_ARGUMENT);
    free(bm.data);

    /* Evicted: cold (no cache file), made again on the next proof. */
    int was;
    uint64_t freed;
    CHECK(cuzk_engine_evict_key(e, "gen", &was, &freed, &eb) == CUZK_OK && was &&
          freed == key_bytes);
    CHECK(cuzk_engine_circuits(e, ci, 2) == 2 && ci[0].tier == CUZK_TIER_COLD);
    CHECK(submit_seeds(e, "gen", seeds + 2, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_seed_proofs(&r, &vk, seeds + 2);
    cuzk_job_result_free(&r);
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_loaded == 2 && st.keys_from_cache == 0);
    cuzk_engine_free(e);
    cuzk_vk_clear(&vk);

    /* Neither a zkey nor generate parameters: refused at start. */
    cuzk_engine_circuit none = {.id = "none"};
    cuzk_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.circuits = &none;
    cfg.n_circuits = 1;
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_BAD_CONFIG && !e);
    CHECK_MSG(strstr(eb.msg, "'none'"), "%s", eb.msg);
}

/* Budgets too small for one partition (or for the request's witnesses) are refused at
 * submission with the budget's key, size and need; nothing waits. */
static void test_budget_too_small(void)
{
    cuzk_circuit_info ci[4];
    cuzk_engine *e0 = make(1, 1ull << 30, 0);
    cuzk_engine_circuits(e0, ci, 4);
    cuzk_engine_free(e0);
    uint64_t part = ci[3].partition_bytes; /* bls-pos */
    cuzk_engine *e = make(1, part - 1, 0);
    blob lp = load("tests/fixtures/bls12381/poseidon.wtns");
    cuzk_errbuf eb = {{0}};
    char id[32], need[32], have[32];
    CHECK(submit(e, "bls-pos", NULL, 0, &lp, 1, id, &eb) == CUZK_OUT_OF_BUDGET);
    snprintf(need, sizeof need, "%llu bytes", (unsigned long long)part);
    snprintf(have, sizeof have, "(%llu bytes", (unsigned long long)(part - 1));
    CHECK_MSG(strstr(eb.msg, "memory.working_budget") && strstr(eb.msg, need) &&
              strstr(eb.msg, have) && strstr(eb.msg, "'bls-pos'"), "%s", eb.msg);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.jobs_submitted == 0 && st.budget.waiting == 0);
    cuzk_engine_free(e);

    /* A generated circuit: the seed's witness and the generator's buffers (on the engine's
     * prove_threads, 1) count in the partition's need. */
    cuzk_err err;
    e = make_gen(1ull << 30, &eb, &err);
    CHECK(e && cuzk_engine_circuits(e, ci, 2) == 2);
    cuzk_engine_free(e);
    cuzk_gen_params g1 = GEN;
    g1.nthreads = 1;
    uint64_t gpart = ci[0].partition_bytes,
             gneed = gpart + 32ull * ci[0].n_vars + cuzk_gen_witness_scratch_bytes(&g1);
    CHECK(cuzk_gen_witness_scratch_bytes(&g1) > (1u << 20));
    e = make_gen(gneed - 1, &eb, &err);
    CHECK(e != NULL);
    const uint64_t seed = 5;
    CHECK(e && submit_seeds(e, "gen", &seed, 1, id, &eb) == CUZK_OUT_OF_BUDGET);
    snprintf(need, sizeof need, "%llu bytes", (unsigned long long)gneed);
    CHECK_MSG(strstr(eb.msg, "memory.working_budget") && strstr(eb.msg, need) &&
              strstr(eb.msg, "generated witness"), "%s", eb.msg);
    cuzk_engine_free(e);

    /* Witness budget smaller than the request's one witness. */
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.witness_budget = lp.len - 1;
    e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    CHECK(submit(e, "bls-pos", NULL, 0, &lp, 1, id, &eb) == CUZK_OUT_OF_BUDGET);
    snprintf(need, sizeof need, "%llu bytes", (unsigned long long)lp.len);
    CHECK_MSG(strstr(eb.msg, "memory.witness_budget") && strstr(eb.msg, need), "%s", eb.msg);
    cuzk_engine_get_status(e, &st);
    CHECK(st.jobs_submitted == 0 && st.witness_budget.in_use == 0);
    cuzk_engine_free(e);
    free(lp.data);
}

/* ------------------------------------------------------------------ key residency tiers */

/* Bytes of a key's pinned arrays (dev 0) or staged copy without tables (dev 1), from the
 * zkey's header alone (independent of cuzk_pk_gpu_bytes): A and B1 (n_vars G1 points each), C
 * (n_vars - n_public - 1; on the device padded to n_vars), H (domain size), B2 (n_vars G2
 * points) when with_g2, on the device each set with its map of points at infinity (a bit per
 * point in 32-bit words), and when with_rows the A and B rows for synthesis on the device:
 * per matrix domain_size + 1 offsets of 8 bytes, and every coefficient of section 4 as a
 * 40-byte record (u32 signal, padding, 32-byte value). */
static uint64_t map_bytes(uint64_t n) { return (n + 31) / 32 * 4; }
static uint64_t zkey_bytes(const char *rel, int with_g2, int with_rows, int dev)
{
    cuzk_zkey zk;
    cuzk_errbuf eb = {{0}};
    if (cuzk_zkey_open(&zk, tu_src_path(rel), &eb)) {
        fprintf(stderr, "%s: %s\n", rel, eb.msg);
        exit(2);
    }
    uint64_t g1 = 2ull * zk.n8q, g2 = 4ull * zk.n8q, nv = zk.n_vars;
    uint64_t b = (2 * nv + (nv - zk.n_public - 1) + zk.domain_size) * g1 + (with_g2 ? nv * g2 : 0);
    if (dev)
        b += (zk.n_public + 1) * g1 + (3 + !!with_g2) * map_bytes(nv) + map_bytes(zk.domain_size);
    if (with_rows)
        b += 2 * (zk.domain_size + 1) * 8 + zk.n_coefs * 40;
    cuzk_zkey_close(&zk);
    return b;
}

/* The tier of every circuit (in CIRCS order) as a string like "gpu,host,gpu,cold". */
static const char *tiers(cuzk_engine *e, cuzk_circuit_info ci[4])
{
    static char buf[64];
    cuzk_engine_circuits(e, ci, 4);
    snprintf(buf, sizeof buf, "%s,%s,%s,%s", cuzk_key_tier_name(ci[0].tier),
             cuzk_key_tier_name(ci[1].tier), cuzk_key_tier_name(ci[2].tier),
             cuzk_key_tier_name(ci[3].tier));
    return buf;
}

#define CHECK_TIERS(e, ci, want)                                                                  \
    do {                                                                                          \
        const char *got_ = tiers(e, ci);                                                          \
        CHECK_MSG(strcmp(got_, want) == 0, "tiers %s, expected %s", got_, want);                  \
    } while (0)

/* GPU tier on one simulated device with one GPU worker (stages run one at a time): exact
 * staging, LRU unstaging among unheld keys, a key larger than the budget proved on the CPU. */
static void test_gpu_tier(void)
{
    blob w[4] = {load("tests/fixtures/bn128/multiplier.wtns"),
                 load("tests/fixtures/bn128/poseidon.wtns"),
                 load("tests/fixtures/bls12381/multiplier.wtns"),
                 load("tests/fixtures/bls12381/poseidon.wtns")};
    const char *vk[4] = {"tests/fixtures/bn128/multiplier_vk.json",
                         "tests/fixtures/bn128/poseidon_vk.json",
                         "tests/fixtures/bls12381/multiplier_vk.json",
                         "tests/fixtures/bls12381/poseidon_vk.json"};
    uint64_t G[4];
    for (int i = 0; i < 4; i++)
        G[i] = zkey_bytes(CIRCS[i].zkey, 0, 1, 1); /* synthesis on the device: rows staged */
    /* The sizes the sequence below relies on (BLS points are 1.5x BN254's). */
    CHECK(G[0] < G[2] && G[2] < G[1] && G[3] > G[1] + G[0]);
    uint64_t B = G[1] + G[0]; /* bn-pos beside bn-mul, nothing more */
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_workers_per_device = 1;
    g_extra.gpu_budget = B;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    cuzk_circuit_info ci[4];
    cuzk_engine_status st;
    /* Start: the two preloaded multipliers are staged (they fit together). */
    CHECK_TIERS(e, ci, "gpu,cold,gpu,cold");
    CHECK(ci[0].gpu_bytes == G[0] && ci[2].gpu_bytes == G[2] && ci[0].gpu_mask == 1);
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].key_budget == B && st.devices[0].key_bytes == G[0] + G[2]);
    CHECK(st.keys_gpu_bytes == G[0] + G[2] && st.keys_in_tier[CUZK_TIER_GPU] == 2);
    CHECK(st.keys_in_tier[CUZK_TIER_COLD] == 2 && st.gpu_unstages == 0);
    /* bn-pos needs G[1]: both multipliers go (bn-mul first, ties broken in order; bls-mul too,
     * since it is larger than bn-mul). */
    prove_one(e, "bn-pos", &w[1]);
    CHECK_TIERS(e, ci, "host,gpu,host,cold");
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].key_bytes == G[1] && st.gpu_unstages == 2 && st.devices[0].key_stages == 3);
    CHECK(ci[1].gpu_bytes == G[1] && ci[0].gpu_bytes == 0 && ci[0].gpu_mask == 0);
    /* bn-mul fits beside it: the budget is now exactly full. */
    prove_one(e, "bn-mul", &w[0]);
    CHECK_TIERS(e, ci, "gpu,gpu,host,cold");
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].key_bytes == B && st.devices[0].key_peak == B && st.gpu_unstages == 2);
    /* bls-pos is larger than the whole budget: never staged, its GPU stage runs on the CPU. */
    char id[32];
    cuzk_errbuf eb = {{0}};
    cuzk_job_result r;
    CHECK(submit(e, "bls-pos", NULL, 0, &w[3], 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, vk[3], CUZK_CURVE_BLS12_381);
    cuzk_job_result_free(&r);
    CHECK_TIERS(e, ci, "gpu,gpu,host,host");
    cuzk_engine_get_status(e, &st);
    CHECK(st.gpu_budget_cpu == 1 && st.cpu_fallbacks == 0 && st.gpu_faults == 0);
    CHECK(st.devices[0].partitions == 2 && st.devices[0].key_bytes == B);
    /* bls-mul needs G[2]: the least recently used staged key (bn-pos) goes, not bn-mul. */
    CHECK(submit(e, "bls-mul", NULL, 0, &w[2], 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, vk[2], CUZK_CURVE_BLS12_381);
    cuzk_job_result_free(&r);
    CHECK_TIERS(e, ci, "gpu,host,gpu,host");
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].key_bytes == G[0] + G[2] && st.gpu_unstages == 3);
    CHECK(st.keys_gpu_bytes == G[0] + G[2] && st.devices[0].key_peak == B);
    char *m = cuzk_engine_metrics(e);
    CHECK(m && strstr(m, "cuzk_gpu_key_unstages_total 3\n"));
    CHECK(m && strstr(m, "cuzk_key_tier{circuit=\"bn-pos\",tier=\"host\"} 1\n"));
    CHECK(m && strstr(m, "cuzk_gpu_budget_cpu_stages_total 1\n"));
    free(m);
    /* Evicting a key from the host frees its staged copy and its GPU accounting. */
    int was = 0;
    uint64_t freed = 0;
    CHECK(cuzk_engine_evict_key(e, "bls-mul", &was, &freed, &eb) == CUZK_OK && was);
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].key_bytes == G[0] && st.keys_gpu_bytes == G[0]);
    CHECK_TIERS(e, ci, "gpu,host,cold,host"); /* no key cache: cold */
    cuzk_engine_free(e);
    for (int i = 0; i < 4; i++)
        free(w[i].data);
}


/* One proof of circuit `id` through e, checked with the vk. */
static void prove_verified(cuzk_engine *e, const char *id_, const char *wtns, const char *vk,
                           cuzk_curve curve)
{
    blob w = load(wtns);
    char id[32];
    cuzk_errbuf eb = {{0}};
    cuzk_job_result r;
    CHECK(submit(e, id_, NULL, 0, &w, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, vk, curve);
    cuzk_job_result_free(&r);
    free(w.data);
}

/* One bn-pos proof through e, checked with the vk. */
static void prove_pos_verified(cuzk_engine *e)
{
    prove_verified(e, "bn-pos", "tests/fixtures/bn128/poseidon.wtns",
                   "tests/fixtures/bn128/poseidon_vk.json", CUZK_CURVE_BN254);
}
/* A key whose staged copy fits the GPU budget only without its A and B rows is staged
 * without them (its partitions synthesize on the CPU) rather than not at all: exactly the
 * bytes without rows, its GPU stages on the device, its proofs right, its partitions' working
 * set the device path's with a, b, c added (they live on the host until the device's H). */
static void test_gpu_tier_norows(void)
{
    uint64_t with = zkey_bytes(CIRCS[1].zkey, 1, 1, 1);
    uint64_t without = zkey_bytes(CIRCS[1].zkey, 1, 0, 1);
    CHECK(without < with);
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_workers_per_device = 1;
    g_extra.g2_on_gpu = 1; /* B2 staged too; no B in G2 scratch in the working set */
    g_extra.gpu_budget = with - 1;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    prove_pos_verified(e);
    cuzk_circuit_info ci[4];
    cuzk_engine_circuits(e, ci, 4);
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK_MSG(ci[1].gpu_bytes == without && ci[1].gpu_mask == 1, "staged %llu, want %llu",
              (unsigned long long)ci[1].gpu_bytes, (unsigned long long)without);
    CHECK(st.devices[0].partitions == 1 && st.gpu_budget_cpu == 0);
    const uint64_t want = 32ull * ci[1].n_vars + 96ull * ci[1].domain_size;
    CHECK_MSG(ci[1].gpu_partition_bytes == want && want < ci[1].partition_bytes,
              "device-path working set without rows: %llu, want %llu",
              (unsigned long long)ci[1].gpu_partition_bytes, (unsigned long long)want);
    cuzk_engine_free(e);
}

/* A preloaded generated key staged on every device releases the host copies of its staged
 * sets and of its A and B rows (test hook: with emulated devices too): its host bytes drop by
 * them, no fallback reserve is kept for it (its CPU stages cannot run), and a partition that
 * needs them (an emulated device's stages read the host copies) fails naming
 * them instead of reading freed memory. */
static void test_generated_release(void)
{
    cuzk_errbuf eb = {{0}};
    cuzk_pk *pk = NULL;
    CHECK_MSG(cuzk_pk_generate(&pk, &GEN, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    if (!pk)
        return;
    void *ptr[CUZK_PK_GPU_ARRAYS];
    size_t len[CUZK_PK_GPU_ARRAYS];
    cuzk_pk_gpu_arrays(pk, ptr, len);
    const uint64_t whole = cuzk_pk_bytes(pk),
                   sets = len[0] + len[1] + len[2] + len[3] + len[4] + /* and the rows */
                          len[5] + len[6] + len[7] + len[8];
    cuzk_pk_free(pk);
    cuzk_engine_circuit circ = {.id = "gen", .generate = &GEN, .preload = 1};
    cuzk_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.partition_workers = 2;
    cfg.prove_threads = 1;
    cfg.working_budget = 1ull << 30;
    cfg.emulated_devices = 1;
    cfg.gpu_workers_per_device = 1;
    cfg.g2_on_gpu = 1; /* B2 always on a device: its host copy goes too */
    cfg.circuits = &circ;
    cfg.n_circuits = 1;
    cuzk__engine_set_release_emulated(1);
    cuzk_engine *e = NULL;
    cuzk_err err = cuzk_engine_new(&e, &cfg, &eb);
    cuzk__engine_set_release_emulated(0);
    CHECK_MSG(err == CUZK_OK, "engine_new: %s", eb.msg);
    if (!e)
        return;
    cuzk_circuit_info ci[1];
    cuzk_engine_status st;
    CHECK(cuzk_engine_circuits(e, ci, 1) == 1);
    cuzk_engine_get_status(e, &st);
    CHECK_MSG(ci[0].bytes == whole - sets && st.keys_bytes == whole - sets,
              "host bytes %llu, want %llu - %llu", (unsigned long long)ci[0].bytes,
              (unsigned long long)whole, (unsigned long long)sets);
    CHECK_MSG(st.fallback_reserve == 0, "fallback reserve %llu for a key without CPU stages",
              (unsigned long long)st.fallback_reserve);
    const uint64_t seeds[1] = {5};
    char id[32];
    cuzk_job_result r;
    CHECK_MSG(submit_seeds(e, "gen", seeds, 1, id, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK);
    CHECK_MSG(r.state == CUZK_JOB_FAILED && strstr(r.error, "released") &&
                  strstr(r.error, "A,B1,C,H"),
              "state %d: %s", r.state, r.error);
    cuzk_job_result_free(&r);
    cuzk_engine_free(e);
}

/* The choice of the sets a key streams (cuzk__key_stream_plan) for a few budgets: A, B1, C of
 * 100 bytes whole, H 200, B2 400, each 1 byte streamed (its map), 10 bytes of buffers. */
static void test_stream_plan(void)
{
    cuzk__key_sets s = {{100, 100, 100, 200, 400}, {1, 1, 1, 1, 1}};
    const unsigned A = CUZK_PK_SET_A, B1 = CUZK_PK_SET_B1, C = CUZK_PK_SET_C, H = CUZK_PK_SET_H,
                   B2 = CUZK_PK_SET_B2;
    static const struct {
        uint64_t budget;
        unsigned streamed;
        uint64_t bytes;
    } cases[] = {
        {1000, 0, 900},                /* everything fits: no buffers either */
        {900, 0, 900},
        {899, B2, 10 + 5 + 199 + 99 * 3}, /* H, C, A, B1 whole */
        {600, B2, 511},
        {510, B1 | B2, 412},           /* H, C, A whole */
        {400, A | B1 | B2, 313},       /* H and C whole */
        {312, C | A | B1 | B2, 214},   /* H whole */
        {250, C | A | B1 | B2, 214},
        {213, H | B1 | B2, 213},        /* H does not fit; C and A after it do */
        {113, A | B1 | C | H | B2, 15}, /* every set streamed: buffers and maps */
        {15, A | B1 | C | H | B2, 15},
        {14, A | B1 | C | H | B2, 15}, /* not even that fits (bytes > budget) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t bytes = 0;
        unsigned m = cuzk__key_stream_plan(&s, cases[i].budget, 10, &bytes);
        CHECK_MSG(m == cases[i].streamed && bytes == cases[i].bytes,
                  "budget %llu: streamed %#x (%llu bytes), want %#x (%llu)",
                  (unsigned long long)cases[i].budget, m, (unsigned long long)bytes,
                  cases[i].streamed, (unsigned long long)cases[i].bytes);
    }
    /* A set that is not staged (B2 without G2 on the GPU) is never streamed; a small set
     * later in the order stays whole when a larger one before it does not fit. */
    cuzk__key_sets t = {{100, 10, 100, 200, 0}, {1, 1, 1, 1, 0}};
    uint64_t bytes = 0;
    CHECK(cuzk__key_stream_plan(&t, 300, 10, &bytes) == (C | A) && bytes == 14 + 199 + 9);
}

/* The point sets a key pins (cuzk__key_pin_plan) for a few budgets: A, B1, C, H of 100 bytes,
 * B2 of 200, 700 bytes with the rest of the key. */
static void test_pin_plan(void)
{
    const unsigned A = CUZK_PK_SET_A, B1 = CUZK_PK_SET_B1, C = CUZK_PK_SET_C,
                   H = CUZK_PK_SET_H, B2 = CUZK_PK_SET_B2;
    const uint64_t set[5] = {100, 100, 100, 100, 200};
    static const struct {
        uint64_t room;
        unsigned streamed;
        int autob;
        unsigned plan;
        uint64_t need;
    } cases[] = {
        {700, A | B2, 0, CUZK__PIN_WHOLE, 700}, /* the whole key fits */
        {700, A | B2, 1, CUZK__PIN_WHOLE, 700},
        {699, 0, 0, 0, 0},                      /* nothing streamed: none */
        {699, 0, 1, 0, 0},
        {250, A | B1 | B2, 0, B2, 200},         /* B2 first, then what fits */
        {350, A | B1 | C | B2, 0, A | B2, 300},
        {199, A | H | B2, 0, A, 100},           /* B2 does not fit: A does */
        {99, A | B2, 0, 0, 0},
        {99, A | B1 | C | H | B2, 1, A | B1 | C | H | B2, 600}, /* automatic: every one */
        {250, C | B2, 1, C | B2, 300},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t need = 1;
        unsigned plan = cuzk__key_pin_plan(set, 700, cases[i].streamed, cases[i].room,
                                           cases[i].autob, &need);
        CHECK_MSG(plan == cases[i].plan && need == cases[i].need,
                  "case %zu: plan %#x (%llu bytes), want %#x (%llu)", i, plan,
                  (unsigned long long)need, cases[i].plan, (unsigned long long)cases[i].need);
    }
}

/* A key larger than the GPU budget even without its rows is staged with point sets streamed
 * from host memory (gpus.stream_chunk), not run on the CPU. With synthesis on the CPU (no
 * rows) and a budget one byte short of its whole copy, B in G2 (last in the order, the
 * largest) streams and the copy counts the G1 sets whole, B2's map, two chunk buffers and the
 * batch's scalar buffers (a chunk for each partition of a batch, gpus.stream_batch). With
 * synthesis on the GPU the same budget keeps the rows beside the streamed sets: a partition
 * then holds only its witness copy. Either way the proof is right and no GPU stage ran on the
 * CPU for want of room. A budget too small even for the buffers and maps still falls back to
 * the CPU. */
static void test_gpu_tier_streamed(void)
{
    const uint64_t whole = zkey_bytes(CIRCS[1].zkey, 1, 0, 1);
    const uint64_t rows = zkey_bytes(CIRCS[1].zkey, 1, 1, 1) - whole;
    cuzk_zkey zk;
    cuzk_errbuf zeb = {{0}};
    CHECK(cuzk_zkey_open(&zk, tu_src_path(CIRCS[1].zkey), &zeb) == CUZK_OK);
    const uint64_t b2 = (uint64_t)zk.n_vars * 4 * zk.n8q, nv = zk.n_vars;
    cuzk_zkey_close(&zk);
    const uint64_t buffers = (2 + CUZK_STREAM_BATCH_DEFAULT) * 1024;
    for (int mode = 0; mode < 3; mode++) { /* CPU synthesis, GPU synthesis, too small */
        const int small = mode == 2;
        memset(&g_extra, 0, sizeof g_extra);
        g_extra.emulated_devices = 1;
        g_extra.gpu_workers_per_device = 1;
        g_extra.g2_on_gpu = 1; /* B2 staged too */
        g_extra.synth_on_cpu = mode == 0;
        g_extra.gpu_budget = small ? 1024 : whole - 1;
        g_extra.gpu_stream_chunk = 1024;
        /* Room for B2's array, not the whole key: the streamed set alone is pinned. */
        g_extra.pinned_budget = b2 + b2 / 2;
        cuzk_engine *e = make(1, 1ull << 30, 0);
        memset(&g_extra, 0, sizeof g_extra);
        prove_pos_verified(e);
        cuzk_circuit_info ci[4];
        cuzk_engine_circuits(e, ci, 4);
        cuzk_engine_status st;
        cuzk_engine_get_status(e, &st);
        if (mode == 0) {
            const uint64_t want = whole - b2 + buffers;
            CHECK_MSG(ci[1].gpu_streamed == CUZK_PK_SET_B2 && ci[1].gpu_bytes == want &&
                          ci[1].gpu_mask == 1,
                      "streamed %#x, staged %llu, want B2 and %llu", ci[1].gpu_streamed,
                      (unsigned long long)ci[1].gpu_bytes, (unsigned long long)want);
            CHECK(st.devices[0].partitions == 1 && st.gpu_budget_cpu == 0);
            CHECK_MSG(ci[1].pinned_bytes == b2 && st.keys_pinned_bytes <= b2 + b2 / 2,
                      "pinned %llu of the key (B2 %llu), %llu in all",
                      (unsigned long long)ci[1].pinned_bytes, (unsigned long long)b2,
                      (unsigned long long)st.keys_pinned_bytes);
            /* a, b, c made on the host: in the partition's working set */
            CHECK(ci[1].gpu_partition_bytes >= 32 * nv + 3 * 32ull * ci[1].domain_size);
            /* the preloaded multipliers are staged beside it */
            CHECK(st.devices[0].key_bytes ==
                      ci[0].gpu_bytes + ci[1].gpu_bytes + ci[2].gpu_bytes + ci[3].gpu_bytes &&
                  want <= whole - 1);
        } else if (mode == 1) {
            CHECK_MSG((ci[1].gpu_streamed & CUZK_PK_SET_B2) && ci[1].gpu_mask == 1 &&
                          ci[1].gpu_bytes <= whole - 1 && ci[1].gpu_bytes >= rows + buffers,
                      "streamed %#x, staged %llu of %llu, rows %llu", ci[1].gpu_streamed,
                      (unsigned long long)ci[1].gpu_bytes, (unsigned long long)(whole - 1),
                      (unsigned long long)rows);
            CHECK(st.devices[0].partitions == 1 && st.gpu_budget_cpu == 0);
            /* the rows are on the device: a partition holds its witness copy alone */
            CHECK_MSG(ci[1].gpu_partition_bytes == 32 * nv, "partition %llu bytes, witness %llu",
                      (unsigned long long)ci[1].gpu_partition_bytes,
                      (unsigned long long)(32 * nv));
        } else {
            CHECK(ci[1].gpu_streamed == 0 && ci[1].gpu_mask == 0);
            CHECK(st.gpu_budget_cpu == 1);
        }
        cuzk_engine_free(e);
    }
}

/* A BLS12-381 key under a GPU budget of exactly its rows, every set's map and the stream
 * buffers (two chunks of points, and two of a batch's scalars: 32 bytes a G1 point of a chunk
 * for each of gpus.stream_batch partitions, G1's 96-byte points fitting fewer a chunk than a
 * BN254 point's 64) is staged with its rows and every set streamed, so its partitions
 * synthesize on the device; its proof is right. */
static void test_gpu_tier_streamed_rows_bls(void)
{
    const char *zkey = CIRCS[3].zkey;
    const uint64_t rows = zkey_bytes(zkey, 1, 1, 1) - zkey_bytes(zkey, 1, 0, 1);
    cuzk_zkey zk;
    cuzk_errbuf zeb = {{0}};
    CHECK(cuzk_zkey_open(&zk, tu_src_path(zkey), &zeb) == CUZK_OK);
    const uint64_t maps = 4 * map_bytes(zk.n_vars) + map_bytes(zk.domain_size);
    cuzk_zkey_close(&zk);
    const uint64_t chunk = 1024, g1_points = chunk / 96;
    const uint64_t buffers = 2 * chunk + 2 * CUZK_STREAM_BATCH_DEFAULT * 32 * g1_points;
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_workers_per_device = 1;
    g_extra.g2_on_gpu = 1;
    g_extra.gpu_budget = rows + maps + buffers;
    g_extra.gpu_stream_chunk = chunk;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    prove_verified(e, "bls-pos", "tests/fixtures/bls12381/poseidon.wtns",
                   "tests/fixtures/bls12381/poseidon_vk.json", CUZK_CURVE_BLS12_381);
    cuzk_circuit_info ci[4];
    cuzk_engine_circuits(e, ci, 4);
    const unsigned all = CUZK_PK_SET_A | CUZK_PK_SET_B1 | CUZK_PK_SET_C | CUZK_PK_SET_H |
                         CUZK_PK_SET_B2;
    CHECK_MSG(ci[3].gpu_streamed == all && ci[3].gpu_bytes == rows + maps + buffers &&
                  ci[3].gpu_mask == 1,
              "streamed %#x, staged %llu, want every set and %llu (rows %llu)",
              ci[3].gpu_streamed, (unsigned long long)ci[3].gpu_bytes,
              (unsigned long long)(rows + maps + buffers), (unsigned long long)rows);
    /* the rows are on the device: a partition holds its witness copy alone */
    CHECK_MSG(ci[3].gpu_partition_bytes == 32ull * ci[3].n_vars, "partition %llu bytes",
              (unsigned long long)ci[3].gpu_partition_bytes);
    cuzk_engine_free(e);
}

/* gpus.stream_batch: with point sets streamed, a GPU worker batches the witness MSMs of the
 * partitions of one key queued behind the one it takes (emulated devices run the batch on the
 * CPU, as the stage itself); each partition's stage then skips what the batch did. Eight
 * partitions through one worker: at least one batch, every proof right. With batches of one,
 * none. */
static void test_gpu_stream_batch(void)
{
    const uint64_t whole = zkey_bytes(CIRCS[1].zkey, 1, 0, 1);
    blob w = load("tests/fixtures/bn128/poseidon.wtns");
    blob ws[8];
    for (int i = 0; i < 8; i++)
        ws[i] = w;
    for (int single = 0; single < 2; single++) {
        memset(&g_extra, 0, sizeof g_extra);
        g_extra.emulated_devices = 1;
        g_extra.gpu_workers_per_device = 1;
        g_extra.g2_on_gpu = 1;
        g_extra.gpu_budget = whole / 3;
        g_extra.gpu_stream_chunk = 1024;
        g_extra.gpu_stream_batch = single ? 1 : 4;
        cuzk_engine *e = make(4, 1ull << 30, 0);
        memset(&g_extra, 0, sizeof g_extra);
        char id[32];
        cuzk_errbuf eb = {{0}};
        cuzk_job_result r;
        CHECK(submit(e, "bn-pos", NULL, 0, ws, 8, id, &eb) == CUZK_OK);
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
        if (r.state == CUZK_JOB_COMPLETED)
            check_proofs(&r, "tests/fixtures/bn128/poseidon_vk.json", CUZK_CURVE_BN254);
        cuzk_job_result_free(&r);
        cuzk_circuit_info ci[4];
        cuzk_engine_circuits(e, ci, 4);
        cuzk_engine_status st;
        cuzk_engine_get_status(e, &st);
        CHECK_MSG((ci[1].gpu_streamed & (CUZK_PK_SET_A | CUZK_PK_SET_B1)) &&
                      (ci[1].gpu_streamed & CUZK_PK_SET_B2),
                  "streamed %#x", ci[1].gpu_streamed);
        CHECK_MSG(single ? st.stream_batches == 0 : st.stream_batches >= 1,
                  "batches of %d: %llu batches", single ? 1 : 4,
                  (unsigned long long)st.stream_batches);
        CHECK(st.devices[0].partitions == 8 && st.gpu_budget_cpu == 0);
        cuzk_engine_free(e);
    }
    free(w.data);
}

/* gpu_tables: a staged copy counts the point sets with their fixed-base tables (gpu.h
 * cuzk_gpu_tables_bytes: A, B1, C padded to n_vars, H) when they fit the GPU budget beside the
 * other circuits' plain point sets, and is staged without them (but with its rows) when they
 * fit only alone. */
static void test_gpu_tier_tables(void)
{
    cuzk_zkey zk;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_zkey_open(&zk, tu_src_path(CIRCS[1].zkey), &eb) == CUZK_OK);
    uint64_t nv = zk.n_vars, dom = zk.domain_size;
    cuzk_zkey_close(&zk);
    uint64_t rows = zkey_bytes(CIRCS[1].zkey, 0, 1, 1) - zkey_bytes(CIRCS[1].zkey, 0, 0, 1);
    uint64_t tab = 3 * cuzk_gpu_tables_bytes(CUZK_GPU_BN254, CUZK_GPU_G1, nv, 0) +
                   cuzk_gpu_tables_bytes(CUZK_GPU_BN254, CUZK_GPU_G1, dom, 0) + rows;
    uint64_t plain = zkey_bytes(CIRCS[1].zkey, 0, 1, 1);
    CHECK_MSG(tab > 4 * plain, "tables %llu, plain %llu", (unsigned long long)tab,
              (unsigned long long)plain);
    /* The other three fixture keys' point sets: a few hundred KiB together. */
    for (int fits = 1; fits >= 0; fits--) {
        memset(&g_extra, 0, sizeof g_extra);
        g_extra.emulated_devices = 1;
        g_extra.gpu_workers_per_device = 1;
        g_extra.gpu_tables = 1;
        g_extra.gpu_budget = fits ? tab + (64ull << 20) : tab;
        cuzk_engine *e = make(1, 1ull << 30, 0);
        memset(&g_extra, 0, sizeof g_extra);
        prove_pos_verified(e);
        cuzk_circuit_info ci[4];
        cuzk_engine_circuits(e, ci, 4);
        CHECK_MSG(ci[1].gpu_bytes == (fits ? tab : plain) && ci[1].gpu_mask == 1,
                  "fits=%d: staged %llu, want %llu", fits, (unsigned long long)ci[1].gpu_bytes,
                  (unsigned long long)(fits ? tab : plain));
        cuzk_engine_free(e);
    }
}

/* Concurrency: one simulated device, two GPU workers, three partition workers, a budget that
 * holds one poseidon key at a time. Jobs of both keys interleave, so the workers take turns
 * unstaging each other's key; a simulated stage fails its job if its key is unstaged while it
 * holds it, so every job completing shows held keys are never unstaged. The device's staged
 * bytes never exceed the budget. */
static void test_gpu_tier_held(void)
{
    /* synthesis on the CPU: the staged copies hold no rows */
    uint64_t gb = zkey_bytes(CIRCS[1].zkey, 1, 0, 1), gl = zkey_bytes(CIRCS[3].zkey, 1, 0, 1);
    uint64_t B = gb > gl ? gb : gl;
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_workers_per_device = 2;
    g_extra.gpu_budget = B;
    g_extra.g2_on_gpu = 1; /* staged copies include B in G2 */
    g_extra.synth_on_cpu = 1;
    cuzk_engine *e = make(3, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    prove_six_poseidon(e, "held");
    cuzk_engine_status st;
    cuzk_engine_get_status(e, &st);
    CHECK(st.devices[0].partitions == 18 && st.cpu_fallbacks == 0 && st.gpu_budget_cpu == 0);
    CHECK(st.g2_on_gpu == 18);
    CHECK_MSG(st.devices[0].key_peak <= B && st.devices[0].key_bytes <= B,
              "peak %llu, budget %llu", (unsigned long long)st.devices[0].key_peak,
              (unsigned long long)B);
    /* Both poseidon keys were staged at least once, and one unstaged to make room. */
    CHECK(st.devices[0].key_stages >= 2 && st.gpu_unstages >= 1);
    /* The accounting adds up: staged - unstaged = keys staged now, whose bytes are the
     * device's. */
    cuzk_circuit_info ci[4];
    cuzk_engine_circuits(e, ci, 4);
    uint64_t now = 0, staged = 0;
    for (int i = 0; i < 4; i++) {
        now += ci[i].gpu_bytes;
        staged += ci[i].gpu_mask != 0;
    }
    CHECK(now == st.devices[0].key_bytes && st.devices[0].key_stages - st.gpu_unstages == staged);
    cuzk_engine_free(e);
}

/* Pinned tier (simulated: accounting only): keys are pinned when loaded, the least recently
 * used unheld pinned keys give up their pinning for a new key, and a key larger than the
 * budget stays "host". gpu_budget 1 keeps every key off the GPU tier, so the pinned tier
 * shows. */
static void test_pinned_tier(void)
{
    uint64_t P[4];
    for (int i = 0; i < 4; i++)
        P[i] = zkey_bytes(CIRCS[i].zkey, 1, 1, 0); /* every array a stage may upload */
    CHECK(P[0] < P[2] && P[2] < P[1] && P[3] > P[1] + P[0]);
    uint64_t budget = P[1] + P[0];
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.emulated_devices = 1;
    g_extra.gpu_budget = 1;
    g_extra.pinned_budget = budget;
    cuzk_engine *e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    cuzk_circuit_info ci[4];
    cuzk_engine_status st;
    CHECK_TIERS(e, ci, "pinned,cold,pinned,cold");
    CHECK(ci[0].pinned_bytes == P[0] && ci[2].pinned_bytes == P[2]);
    cuzk_engine_get_status(e, &st);
    CHECK(st.pinned_budget == budget && st.keys_pinned_bytes == P[0] + P[2]);
    CHECK(st.keys_pinned == 2 && st.pinned_unpins == 0);
    blob bp = load("tests/fixtures/bn128/poseidon.wtns");
    blob lp = load("tests/fixtures/bls12381/poseidon.wtns");
    prove_one(e, "bn-pos", &bp); /* unpins bn-mul (older) then bls-mul */
    CHECK_TIERS(e, ci, "host,pinned,host,cold");
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_pinned_bytes == P[1] && st.pinned_unpins == 2 && st.keys_pinned == 3);
    CHECK(st.pinned_peak == P[0] + P[2] || st.pinned_peak == P[1]);
    CHECK(st.gpu_budget_cpu == 1 && st.devices[0].key_bytes == 0);
    prove_one(e, "bls-pos", &lp); /* larger than the whole budget: not pinned, nothing unpinned */
    CHECK_TIERS(e, ci, "host,pinned,host,host");
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_pinned_bytes == P[1] && st.pinned_unpins == 2 && st.keys_pinned == 3);
    /* Evicting a pinned key unpins it (not counted as a budget unpin). */
    int was = 0;
    uint64_t freed = 0;
    cuzk_errbuf eb = {{0}};
    CHECK(cuzk_engine_evict_key(e, "bn-pos", &was, &freed, &eb) == CUZK_OK && was);
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_pinned_bytes == 0 && st.pinned_unpins == 2);
    CHECK_TIERS(e, ci, "host,cold,host,host");
    cuzk_engine_free(e);
    /* Without GPU workers nothing is pinned, whatever the budget. */
    memset(&g_extra, 0, sizeof g_extra);
    g_extra.pinned_budget = CUZK_BUDGET_AUTO;
    e = make(1, 1ull << 30, 0);
    memset(&g_extra, 0, sizeof g_extra);
    CHECK_TIERS(e, ci, "host,cold,host,cold");
    cuzk_engine_get_status(e, &st);
    CHECK(st.pinned_budget == 0 && st.keys_pinned_bytes == 0 && st.n_devices == 0);
    cuzk_engine_free(e);
    free(bp.data);
    free(lp.data);
}

static int copy_file(const char *from, const char *to)
{
    size_t n;
    char *d = tu_read_file(from, &n);
    FILE *f = d ? fopen(to, "wb") : NULL;
    int ok = f && fwrite(d, 1, n, f) == n;
    if (f)
        ok &= fclose(f) == 0;
    free(d);
    return ok;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Mapped tier: a key evicted from the host whose cache file is valid is "mapped" and reloads
 * from the cache (keys_from_cache rises, the proof verifies); once the zkey changes, the
 * cache is stale: an eviction then leaves the key "cold", and a reload never uses the stale
 * cache (it loads the zkey and rewrites the cache). */
static void test_mapped_tier(void)
{
    char dir[] = "/tmp/cuzk-engine-tiers-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char zk[256], cdir[256];
    snprintf(zk, sizeof zk, "%s/mul.zkey", dir);
    snprintf(cdir, sizeof cdir, "%s/cache", dir);
    CHECK(copy_file(tu_src_path("tests/fixtures/bn128/multiplier.zkey"), zk));
    CHECK(mkdir(cdir, 0700) == 0);
    cuzk_engine_circuit circ = {.id = "m", .zkey = zk};
    cuzk_engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.partition_workers = 1;
    cfg.prove_threads = 1;
    cfg.working_budget = 1ull << 30;
    cfg.key_cache = 1;
    cfg.key_cache_dir = cdir;
    cfg.circuits = &circ;
    cfg.n_circuits = 1;
    cuzk_engine *e = NULL;
    cuzk_errbuf eb = {{0}};
    CHECK_MSG(cuzk_engine_new(&e, &cfg, &eb) == CUZK_OK, "%s", eb.msg);
    if (!e)
        return;
    blob w = load("tests/fixtures/bn128/multiplier.wtns");
    const char *vk = "tests/fixtures/bn128/multiplier_vk.json";
    cuzk_circuit_info ci;
    cuzk_engine_status st;
    char *cpath = cuzk_pk_cache_path(zk, cdir);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(ci.tier == CUZK_TIER_COLD && ci.mapped_bytes == 0); /* no cache yet */
    char id[32];
    cuzk_job_result r;
    int was;
    uint64_t freed;
    /* 1: from the zkey, which writes the cache. */
    CHECK(submit(e, "m", NULL, 0, &w, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    cuzk_job_result_free(&r);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(ci.tier == CUZK_TIER_HOST && file_size(cpath) > 0);
    CHECK(cuzk_engine_evict_key(e, "m", &was, &freed, &eb) == CUZK_OK && was);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(ci.tier == CUZK_TIER_MAPPED && ci.mapped_bytes == file_size(cpath) && !ci.resident);
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_mapped_bytes == file_size(cpath) && st.keys_in_tier[CUZK_TIER_MAPPED] == 1);
    CHECK(st.keys_from_cache == 0 && st.keys_bytes == 0);
    /* 2: mapped -> host, from the cache. */
    CHECK(submit(e, "m", NULL, 0, &w, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, vk, CUZK_CURVE_BN254);
    cuzk_job_result_free(&r);
    cuzk_engine_get_status(e, &st);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(st.keys_from_cache == 1 && st.keys_loaded == 2 && ci.tier == CUZK_TIER_HOST);
    CHECK(st.keys_mapped_bytes == 0);
    /* The zkey changes (new mtime): the cache is stale. Evicting now leaves the key cold. */
    struct timespec ts[2] = {{time(NULL) + 10, 0}, {time(NULL) + 10, 0}};
    CHECK(utimensat(AT_FDCWD, zk, ts, 0) == 0);
    CHECK(cuzk_engine_evict_key(e, "m", &was, &freed, &eb) == CUZK_OK && was);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(ci.tier == CUZK_TIER_COLD && ci.mapped_bytes == 0);
    /* 3: the stale cache is not used: the zkey is loaded (keys_from_cache stays 1) and the
     * cache rewritten, so the next eviction is mapped again and the reload after it cached. */
    CHECK(submit(e, "m", NULL, 0, &w, 1, id, &eb) == CUZK_OK);
    CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
    if (r.state == CUZK_JOB_COMPLETED)
        check_proofs(&r, vk, CUZK_CURVE_BN254);
    cuzk_job_result_free(&r);
    cuzk_engine_get_status(e, &st);
    CHECK(st.keys_from_cache == 1 && st.keys_loaded == 3);
    CHECK(cuzk_engine_evict_key(e, "m", &was, &freed, &eb) == CUZK_OK && was);
    cuzk_engine_circuits(e, &ci, 1);
    CHECK(ci.tier == CUZK_TIER_MAPPED);
    /* A key that is mapped at start (valid cache from the run above). */
    cuzk_engine_free(e);
    e = NULL;
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_OK);
    if (e) {
        cuzk_engine_circuits(e, &ci, 1);
        CHECK(ci.tier == CUZK_TIER_MAPPED);
        CHECK(submit(e, "m", NULL, 0, &w, 1, id, &eb) == CUZK_OK);
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
        if (r.state == CUZK_JOB_COMPLETED)
            check_proofs(&r, vk, CUZK_CURVE_BN254);
        cuzk_job_result_free(&r);
        cuzk_engine_get_status(e, &st);
        CHECK(st.keys_from_cache == 1 && st.keys_loaded == 1);
        cuzk_engine_free(e);
    }
    /* A truncated cache is not "mapped" (its length no longer matches its header), and the
     * key loads from the zkey. */
    uint64_t csz = file_size(cpath);
    CHECK(csz > 1 && truncate(cpath, (off_t)csz - 1) == 0);
    e = NULL;
    CHECK(cuzk_engine_new(&e, &cfg, &eb) == CUZK_OK);
    if (e) {
        cuzk_engine_circuits(e, &ci, 1);
        CHECK(ci.tier == CUZK_TIER_COLD && ci.mapped_bytes == 0);
        CHECK(submit(e, "m", NULL, 0, &w, 1, id, &eb) == CUZK_OK);
        CHECK(cuzk_engine_await(e, id, 0, &r, &eb) == CUZK_OK && r.state == CUZK_JOB_COMPLETED);
        if (r.state == CUZK_JOB_COMPLETED)
            check_proofs(&r, vk, CUZK_CURVE_BN254);
        cuzk_job_result_free(&r);
        cuzk_engine_get_status(e, &st);
        CHECK(st.keys_from_cache == 0 && st.keys_loaded == 1 && file_size(cpath) == csz);
        cuzk_engine_free(e);
    }
    unlink(cpath);
    free(cpath);
    unlink(zk);
    rmdir(cdir);
    rmdir(dir);
    free(w.data);
}

/* The device scratch estimate the GPU budgets use (gpu.h): needs no device, so CI checks its
 * shape here (gpu_test checks it against a real context's scratch on a GPU): it grows with
 * the sizes, is larger for BLS12-381, covers what every proof must hold on the device (a, b,
 * c and the NTT buffer: 128 bytes per domain element; the witness: 32 per point; the digit
 * sort's keys and values, double-buffered: 16 bytes per point and window, >= 13 windows),
 * and stays within 1200 bytes per point at 2^24 (~863 / 969 today). */
static void test_scratch_estimate(void)
{
    for (int lg = 10; lg <= 26; lg += 4) {
        uint64_t n = 1ull << lg;
        for (int cv = 0; cv < 2; cv++) {
            cuzk_gpu_curve curve = cv ? CUZK_GPU_BLS12_381 : CUZK_GPU_BN254;
            uint64_t est = cuzk_gpu_scratch_estimate(curve, n, n);
            CHECK_MSG(est >= 128 * n + 32 * n + 16 * 13 * n, "2^%d: %llu below the floor", lg,
                      (unsigned long long)est);
            /* Below ~2^12 the fixed parts dominate and the slice length steps (as the real
             * scratch does), so growth is checked from 2^14 on. */
            if (lg >= 14) {
                CHECK(cuzk_gpu_scratch_estimate(curve, 2 * n, 2 * n) > est);
                CHECK(cuzk_gpu_scratch_estimate(curve, 2 * n, n) > est);
            }
            CHECK(cuzk_gpu_scratch_estimate(curve, n, 2 * n) > est);
            if (cv)
                CHECK(est > cuzk_gpu_scratch_estimate(CUZK_GPU_BN254, n, n));
            if (lg == 24)
                CHECK_MSG(est <= 1200 * n, "2^24 %s: %llu bytes", cv ? "bls" : "bn",
                          (unsigned long long)est);
        }
    }
}

int main(void)
{
    cuzk_log_set_level(CUZK_LOG_LEVEL_WARN);
    test_config();
    test_cluster_config();
    test_basic();
    test_key_lru();
    test_priority_cancel();
    test_budget();
    test_gpu_pipeline();
    test_gpu_working_sets();
    test_auto_working_budget();
    test_multi_gpu_spread();
    test_multi_gpu_fault();
    test_multi_gpu_g2();
    test_witness_budget();
    test_generated();
    test_generated_segmented();
    test_budget_too_small();
    test_gpu_tier();
    test_gpu_tier_held();
    test_gpu_tier_norows();
    test_generated_release();
    test_stream_plan();
    test_pin_plan();
    test_gpu_tier_streamed_rows_bls();
    test_gpu_tier_streamed();
    test_gpu_stream_batch();
    test_gpu_tier_tables();
    test_pinned_tier();
    test_mapped_tier();
    test_scratch_estimate();
    return tu_finish("engine");
}
