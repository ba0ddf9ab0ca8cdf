/* Keys and witnesses generated in memory (cuzk_pk_generate, cuzk_gen_witness) against the
 * files route (cuzk_gen_circuit + cuzk_setup + cuzk_pk_load): on both curves and four sizes
 * the keys hold the same points, coefficients and row index byte for byte, the witnesses are
 * the wtns file's values, proofs with r = s = 0 are equal and a blinded proof from the
 * generated key self-verifies. With a folder argument it also writes, per curve, the generated
 * key's verification_key.json and a proof's proof.json / public.json there (for
 * setup_gen_snarkjs_test.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/gencircuit.h"
#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/setup.h"
#include "groth16/gen_internal.h" /* cuzk__gen_replay_gates_as_rows */
#include "testutil.h"

static void hex(char *out, const char *s)
{
    for (; *s; s++, out += 2)
        sprintf(out, "%02x", (unsigned char)*s);
}

static void write_sb(cuzk_strbuf *sb, const char *dir, const char *curve, const char *name)
{
    char path[700];
    cuzk_errbuf eb = {{0}};
    snprintf(path, sizeof path, "%s/%s_%s", dir, curve, name);
    CHECK_MSG(cuzk_sb_write_file(sb, path, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_sb_free(sb);
}

static void one(cuzk_curve curve, cuzk_gen_profile prof, uint32_t n, uint32_t segment,
                const char *tmp, const char *out_dir)
{
    char cn[40];
    snprintf(cn, sizeof cn, "%s%s", cuzk_curve_name(curve), segment ? "_seg" : "");
    char r1cs[600], zkey[600], wtns[600];
    snprintf(r1cs, sizeof r1cs, "%s/c.r1cs", tmp);
    snprintf(zkey, sizeof zkey, "%s/c.zkey", tmp);
    snprintf(wtns, sizeof wtns, "%s/c.wtns", tmp);
    cuzk_errbuf eb = {{0}};
    cuzk_gen_params p = {0};
    p.curve = curve;
    p.profile = prof;
    p.n_constraints = n;
    p.seed = "porep-7";
    p.witness_seed = "w3";
    p.nthreads = 2;
    p.segment = segment;
    /* Files: circuit, witness of seed w3, key with the seed's bytes. */
    CHECK_MSG(cuzk_gen_circuit(&p, r1cs, wtns, NULL, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_setup_opts so = {0};
    so.seed = (const uint8_t *)p.seed;
    so.seed_len = strlen(p.seed);
    so.nthreads = 2;
    CHECK_MSG(cuzk_setup(r1cs, zkey, &so, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_zkey zk;
    cuzk_pk *pf = NULL, *pg = NULL;
    CHECK_MSG(cuzk_zkey_open(&zk, zkey, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(cuzk_pk_load(&pf, &zk, 2, &eb) == CUZK_OK, "%s", eb.msg);
    cuzk_zkey_close(&zk);
    /* Memory. */
    cuzk_setup_info si;
    CHECK_MSG(cuzk_pk_generate(&pg, &p, &si, &eb) == CUZK_OK, "%s", eb.msg);
    if (!pf || !pg) {
        cuzk_pk_free(pf);
        cuzk_pk_free(pg);
        return;
    }
    CHECK(cuzk_pk_is_generated(pg) && !cuzk_pk_is_generated(pf));
    CHECK(cuzk_pk_n_vars(pg) == cuzk_pk_n_vars(pf) && cuzk_pk_n_vars(pg) == si.n_vars);
    CHECK(cuzk_pk_n_public(pg) == cuzk_pk_n_public(pf));
    CHECK(cuzk_pk_domain_size(pg) == cuzk_pk_domain_size(pf));
    CHECK(cuzk_pk_bytes(pg) == cuzk_pk_bytes(pf));
    /* Point sets and row index byte for byte; coefficient records field by field (the
     * loaded key leaves the padding between signal and value unset). */
    void *ptr_f[CUZK_PK_GPU_ARRAYS], *ptr_g[CUZK_PK_GPU_ARRAYS];
    size_t len_f[CUZK_PK_GPU_ARRAYS], len_g[CUZK_PK_GPU_ARRAYS];
    cuzk_pk_gpu_arrays(pf, ptr_f, len_f);
    cuzk_pk_gpu_arrays(pg, ptr_g, len_g);
    for (int i = 0; i < CUZK_PK_GPU_ARRAYS; i++) {
        CHECK_MSG(len_f[i] == len_g[i], "%s array %d: %zu vs %zu bytes", cn, i, len_f[i],
                  len_g[i]);
        if (len_f[i] != len_g[i])
            continue;
        if (i < 7) {
            CHECK_MSG(memcmp(ptr_f[i], ptr_g[i], len_f[i]) == 0, "%s array %d differs", cn, i);
            continue;
        }
        const size_t rs = 8 + CUZK_FR_BYTES; /* {u32 signal; 4 bytes padding; Fr value} */
        CHECK(len_f[i] % rs == 0);
        size_t bad = 0;
        for (size_t k = 0; k + rs <= len_f[i]; k += rs) {
            const uint8_t *a = (const uint8_t *)ptr_f[i] + k, *b = (const uint8_t *)ptr_g[i] + k;
            bad += memcmp(a, b, 4) != 0 || memcmp(a + 8, b + 8, CUZK_FR_BYTES) != 0;
        }
        CHECK_MSG(bad == 0, "%s coefficients %d: %zu records differ", cn, i - 7, bad);
    }
    cuzk_vk vf, vg;
    CHECK(cuzk_pk_vk(pf, &vf, &eb) == CUZK_OK && cuzk_pk_vk(pg, &vg, &eb) == CUZK_OK);
    size_t g1 = curve == CUZK_CURVE_BN254 ? 64 : 96;
    CHECK(memcmp(vf.alpha1, vg.alpha1, sizeof vf.alpha1) == 0 &&
          memcmp(vf.beta2, vg.beta2, sizeof vf.beta2) == 0 &&
          memcmp(vf.gamma2, vg.gamma2, sizeof vf.gamma2) == 0 &&
          memcmp(vf.delta1, vg.delta1, sizeof vf.delta1) == 0 &&
          memcmp(vf.delta2, vg.delta2, sizeof vf.delta2) == 0 &&
          memcmp(vf.ic, vg.ic, (vf.n_public + 1) * g1) == 0);
    /* The witness in memory is the file's. */
    uint64_t nw = cuzk_gen_n_wires(&p);
    CHECK(nw == cuzk_pk_n_vars(pg));
    uint8_t *w = malloc(nw * 32);
    cuzk_gen_info gi;
    CHECK_MSG(cuzk_gen_witness(w, nw, &p, &gi, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(cuzk_gen_witness(w, nw - 1, &p, NULL, &eb) == CUZK_SIZE_MISMATCH);
    CHECK(gi.n_wires == nw && gi.n_binary > 0);
    cuzk_wtns wt;
    CHECK_MSG(cuzk_wtns_open(&wt, wtns, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(wt.n_witness == nw && memcmp(wt.values, w, nw * 32) == 0);
    /* In one thread too (nthreads 2 runs the structure on a thread of its own, or two runs at
     * once when segmented): the same. */
    {
        cuzk_gen_params p1 = p;
        p1.nthreads = 1;
        uint8_t *w1 = malloc(nw * 32);
        cuzk_gen_info g1i;
        CHECK_MSG(cuzk_gen_witness(w1, nw, &p1, &g1i, &eb) == CUZK_OK, "%s", eb.msg);
        CHECK_MSG(memcmp(w1, w, nw * 32) == 0, "%s: one-thread witness differs", cn);
        CHECK(g1i.n_binary == gi.n_binary && g1i.n_terms == gi.n_terms &&
              g1i.n_private_inputs == gi.n_private_inputs);
        free(w1);
    }
    cuzk_wtns_close(&wt);
    /* r = s = 0: equal proofs from both keys; blinded: verifies. */
    cuzk_prove_opts o = {0};
    o.backend = CUZK_BACKEND_CPU;
    o.nthreads = 2;
    o.zero_rs = 1;
    cuzk_proof a, b;
    CHECK_MSG(cuzk_prove(&a, pf, w, nw, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(cuzk_prove(&b, pg, w, nw, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    o.zero_rs = 0;
    CHECK_MSG(cuzk_prove(&b, pg, w, nw, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    uint32_t np = cuzk_pk_n_public(pg);
    CHECK(cuzk_verify(&vf, w + 32, np, &b, &eb) == CUZK_OK);
    /* Another witness seed: another witness that proves too; a wrong one does not verify. */
    p.witness_seed = "w4";
    uint8_t *w2 = malloc(nw * 32);
    CHECK(cuzk_gen_witness(w2, nw, &p, NULL, &eb) == CUZK_OK && memcmp(w, w2, nw * 32) != 0);
    CHECK_MSG(cuzk_prove(&a, pg, w2, nw, &o, NULL, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK(cuzk_verify(&vg, w2 + 32, np, &a, &eb) == CUZK_OK);
    CHECK(cuzk_verify(&vg, w + 32, np, &a, &eb) == CUZK_VERIFY_FAILED);
    if (out_dir && prof == CUZK_GEN_SPARSE_BITS) {
        cuzk_strbuf sb;
        cuzk_sb_init(&sb);
        CHECK(cuzk_vk_to_json(&sb, &vg, &eb) == CUZK_OK);
        write_sb(&sb, out_dir, cn, "vk.json");
        cuzk_sb_init(&sb);
        cuzk_proof_to_json(&sb, &b);
        write_sb(&sb, out_dir, cn, "proof.json");
        cuzk_sb_init(&sb);
        cuzk_public_to_json(&sb, w + 32, np);
        write_sb(&sb, out_dir, cn, "public.json");
    }
    char hs[600];
    hex(hs, "porep-7");
    printf("%s %s, %u constraints in runs of %u (domain %u): key generated in memory in %.0f ms, "
           "equal to gen-circuit + setup --seed %s\n",
           cn, cuzk_gen_profile_name(prof), n, segment, si.domain_size, si.ms_total, hs);
    free(w);
    free(w2);
    cuzk_vk_clear(&vf);
    cuzk_vk_clear(&vg);
    cuzk_pk_free(pf);
    cuzk_pk_free(pg);
    unlink(r1cs);
    unlink(zkey);
    unlink(wtns);
}

/* A witness of many blocks of rows (the two-thread generator's ring wraps several times)
 * equals the one-thread one, on each curve and profile; segmented, the runs made on four
 * threads equal the one-thread walk, and the runs change the circuit. */
static void piped(cuzk_curve curve, cuzk_gen_profile prof, uint32_t n, uint32_t segment)
{
    cuzk_gen_params p = {0};
    p.curve = curve;
    p.n_constraints = n;
    p.profile = prof;
    p.seed = "pipe";
    p.witness_seed = "w";
    p.segment = segment;
    uint64_t nw = cuzk_gen_n_wires(&p);
    uint8_t *a = malloc(nw * 32), *b = malloc(nw * 32);
    cuzk_errbuf eb = {{0}};
    cuzk_gen_info ia, ib;
    p.nthreads = 4;
    CHECK_MSG(cuzk_gen_witness(a, nw, &p, &ia, &eb) == CUZK_OK, "%s", eb.msg);
    p.nthreads = 1;
    CHECK_MSG(cuzk_gen_witness(b, nw, &p, &ib, &eb) == CUZK_OK, "%s", eb.msg);
    CHECK_MSG(memcmp(a, b, nw * 32) == 0, "%s profile %d segment %u: the witnesses differ",
              cuzk_curve_name(curve), (int)prof, segment);
    CHECK(ia.n_binary == ib.n_binary && ia.n_terms == ib.n_terms && ia.n_terms > n);
    if (segment) {
        /* the inputs are the same, the outputs after them another circuit's (wire 1, the last
         * output, is 0 or 1 in most sparse circuits either way) */
        p.segment = 0;
        CHECK_MSG(cuzk_gen_witness(b, nw, &p, &ib, &eb) == CUZK_OK, "%s", eb.msg);
        uint64_t in = 2 + ia.n_public_inputs + ia.n_private_inputs;
        CHECK(memcmp(a, b, 32) == 0 && memcmp(a + 64, b + 64, (in - 2) * 32) == 0);
        CHECK(memcmp(a + in * 32, b + in * 32, (nw - in) * 32) != 0);
        /* The structure made once and replayed: the same witness on 4 threads and on 1, the
         * same counts; refused for another circuit's witness, and for a circuit of one run. */
        p.segment = segment;
        p.nthreads = 3;
        cuzk_gen_structure *st = NULL;
        CHECK_MSG(cuzk_gen_structure_new(&st, &p, &eb) == CUZK_OK && st, "%s", eb.msg);
        const uint64_t sb = cuzk_gen_structure_bytes(st);
        CHECK_MSG(sb > 2ull * n && sb < (prof == CUZK_GEN_SPARSE_BITS ? 24ull : 200ull) * n,
                  "structure of %u constraints: %llu bytes", n, (unsigned long long)sb);
        p.structure = st;
        for (unsigned nt = 1; nt <= 4; nt += 3) {
            p.nthreads = nt;
            cuzk__gen_replay_gates_as_rows(nt == 4); /* the bit gates through the field too */
            memset(b, 0xee, nw * 32);
            cuzk_gen_info ir;
            CHECK_MSG(cuzk_gen_witness(b, nw, &p, &ir, &eb) == CUZK_OK, "%s", eb.msg);
            CHECK_MSG(memcmp(a, b, nw * 32) == 0,
                      "%s profile %d segment %u, %u threads: the replayed witness differs",
                      cuzk_curve_name(curve), (int)prof, segment, nt);
            CHECK(ir.n_binary == ia.n_binary && ir.n_terms == ia.n_terms &&
                  ir.n_wires == ia.n_wires);
        }
        cuzk__gen_replay_gates_as_rows(0);
        p.seed = "another";
        CHECK(cuzk_gen_witness(b, nw, &p, NULL, &eb) == CUZK_INVALID_ARGUMENT &&
              strstr(eb.msg, "another circuit"));
        p.seed = "pipe";
        p.segment = segment + 1;
        CHECK(cuzk_gen_witness(b, nw, &p, NULL, &eb) == CUZK_INVALID_ARGUMENT);
        p.segment = 0;
        p.structure = NULL;
        cuzk_gen_structure *none = NULL;
        CHECK(cuzk_gen_structure_new(&none, &p, &eb) == CUZK_INVALID_ARGUMENT && !none);
        cuzk_gen_structure_free(st);
        /* scratch: a thread's rings each */
        p.segment = segment;
        p.nthreads = 4;
        uint64_t s4 = cuzk_gen_witness_scratch_bytes(&p);
        p.nthreads = 2;
        CHECK(s4 > cuzk_gen_witness_scratch_bytes(&p) + (1u << 21));
    }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/cuzk_setup_gen_XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    const char *out = argc > 1 ? argv[1] : NULL;
    one(CUZK_CURVE_BN254, CUZK_GEN_SPARSE_BITS, 1000, 0, tmp, out);
    one(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS, 1000, 0, tmp, out);
    one(CUZK_CURVE_BN254, CUZK_GEN_DENSE, 2000, 0, tmp, out);
    one(CUZK_CURVE_BLS12_381, CUZK_GEN_MIXED, 4000, 0, tmp, out);
    /* Several ranges of rows (4096 each), made on different threads from the generator's
     * checkpoints in memory and from the r1cs file. */
    one(CUZK_CURVE_BN254, CUZK_GEN_MIXED, 9000, 0, tmp, out);
    /* Segmented: runs shorter than a range (so runs start inside ranges), the last run short;
     * and runs longer than a range. */
    one(CUZK_CURVE_BN254, CUZK_GEN_SPARSE_BITS, 1000, 300, tmp, out);
    one(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS, 1000, 300, tmp, out);
    one(CUZK_CURVE_BLS12_381, CUZK_GEN_MIXED, 9000, 3000, tmp, out);
    one(CUZK_CURVE_BN254, CUZK_GEN_DENSE, 9000, 5000, tmp, out);
    piped(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS, 70001, 0);
    piped(CUZK_CURVE_BN254, CUZK_GEN_DENSE, 50000, 0);
    /* Runs longer than the ring of recent outputs, and more runs than threads. */
    piped(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS, 300001, 70000);
    piped(CUZK_CURVE_BN254, CUZK_GEN_MIXED, 50000, 1000);
    piped(CUZK_CURVE_BN254, CUZK_GEN_DENSE, 20000, 3000);
    piped(CUZK_CURVE_BLS12_381, CUZK_GEN_SPARSE_BITS, 20000, 4096);
    rmdir(tmp);
    return tu_finish("setup_gen_test");
}
