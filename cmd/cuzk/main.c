/* cuzk: the command line. Parses arguments, calls libcuzk, prints. Exit codes: 0 success,
 * 1 an invalid proof (verify), 2 bad input or any other error. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/err.h"
#include "cuzk/groth16.h"
#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/units.h"
#include "gpu/gpu.h"
#include "msm/msm.h"
#include "util/clock.h"
#include "util/parallel.h"

#include "cli.h"
#include "cmd_witness.h"

#define EXIT_INVALID 1
#define EXIT_INPUT 2

static int g_quiet;

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    if (g_quiet || !isatty(2))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cuzk: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static int fail(cuzk_err e, const cuzk_errbuf *eb)
{
    fprintf(stderr, "cuzk: error: %s (%s)\n", eb->msg[0] ? eb->msg : cuzk_strerror(e),
            cuzk_errname(e));
    return EXIT_INPUT;
}

/* ------------------------------------------------------------------ prove */

static const char *PROVE_HELP =
    "Usage: cuzk prove [options] CIRCUIT.zkey WITNESS.wtns PROOF.json PUBLIC.json\n"
    "       cuzk prove [options] --wasm CIRCUIT.wasm --input INPUT.json CIRCUIT.zkey\n"
    "                  PROOF.json PUBLIC.json\n"
    "\n"
    "Makes a Groth16 proof from a snarkjs proving key and a witness (same arguments as\n"
    "rapidsnark's prover), or from the circuit's inputs and circom's witness program (like\n"
    "`snarkjs groth16 fullprove`; see `cuzk witness --help`). The proof is checked against\n"
    "the key before it is written unless --no-verify is given.\n"
    "\n"
    "Options:\n"
    "  --wasm FILE        compute the witness with circom's witness program FILE ...\n"
    "  --input FILE       ... from the circuit inputs in FILE (both or neither)\n"
    "  --wasm-cache DIR   where built witness programs are kept (default: a folder\n"
    "                     " CUZK_WITNESS_CACHE_DIR " beside the wasm)\n"
    "  --threads N        CPU threads (default: all cores, or CUZK_THREADS)\n"
    "  --backend B        auto | cpu | gpu (default auto: the GPU when one is present,\n"
    "                     falling back to the CPU if the GPU faults)\n"
    "  --g2 WHERE         gpu | cpu (default gpu): with the GPU backend, run the B-in-G2\n"
    "                     MSM on the GPU or on CPU threads beside the GPU's work\n"
    "  --g2-device D      auto | N (default auto: GPU 1 when there are two or more, else 0):\n"
    "                     the GPU of the B-in-G2 MSM (--g2 gpu); on another GPU than 0 it\n"
    "                     runs beside the rest of the proof\n"
    "  --gpu-tables T     auto | on | off (default auto: on with --repeat above 1): with the\n"
    "                     GPU backend, build fixed-base tables of the key's points on the\n"
    "                     device once (up to 12x their device memory at 2^24, a few seconds),\n"
    "                     making each MSM ~10-13% faster; skipped when they do not fit\n"
    "                     (the proof's line then names the point sets left without). The\n"
    "                     memory the points and tables leave goes to the MSMs' batch-affine\n"
    "                     chunk (up to 16 GiB, named on the proof's line)\n"
    "  --synth WHERE      gpu | cpu (default gpu): with the GPU backend, compute a = A.w,\n"
    "                     b = B.w, c = a*b on the GPU from the key's A and B rows (kept\n"
    "                     resident beside its points) or on CPU threads while the GPU runs\n"
    "                     the witness MSMs\n"
    "  --format F         json (default) | compressed: PROOF is then the 192-byte\n"
    "                     ZCash/Filecoin encoding A|B|C (BLS12-381 only)\n"
    "  --r1cs FILE        check the witness against the circuit first and name the first\n"
    "                     unsatisfied constraint\n"
    "  --no-verify        skip the self-verification of the proof\n"
    "  --verify           verify the proof before writing it (the default)\n"
    "  --zero-blinding    TESTING ONLY: r = s = 0, a deterministic proof that is NOT\n"
    "                     zero-knowledge (for comparing backends byte for byte)\n"
    "  --key-cache PATH   load the preprocessed key (points decoded and checked, with the\n"
    "                     precomputed tables) from PATH, or from CIRCUIT.zkey.cuzkcache\n"
    "                     for `auto`; when it is missing, stale (the zkey changed), corrupt\n"
    "                     or built for another --precompute, load the zkey, build the\n"
    "                     tables and write it (said on stderr), so the next run is fast\n"
    "  --precompute T     fixed-base tables of up to T shifted copies of the key's points\n"
    "                     for the CPU MSMs: fewer bucket reductions at T times the points'\n"
    "                     memory (0: none). Default with --key-cache on the CPU: by the\n"
    "                     key's size (2 from 2^10 to 2^14 points; said on stderr); where\n"
    "                     no tables pay (from 2^15 points) the cache is not used at all,\n"
    "                     the zkey loading as fast (--precompute 0 keeps one anyway);\n"
    "                     with the GPU backend (which does not use them) the cache is\n"
    "                     taken as it is; without --key-cache 0 (building them costs more\n"
    "                     than one proof saves)\n"
    "  --repeat N         prove N times with the key loaded once (on the GPU, resident after\n"
    "                     the first proof, as in the daemon); prints each proof's time and\n"
    "                     the best and median; every proof is verified unless --no-verify;\n"
    "                     the last one is written (default 1)\n"
    "  --max-memory SIZE  refuse to start when the proof's estimated peak memory (an upper\n"
    "                     bound of the CPU backend's resident set: key, tables, working\n"
    "                     buffers, MSM scratch) is above SIZE, e.g. 512MiB, 8GiB, rather\n"
    "                     than swap or be killed; the estimate is printed either way\n"
    "                     (default: no bound)\n"
    "  --quiet            no progress messages\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 proof written, 2 error (message on stderr).\n";

#define PRECOMPUTE_ANY UINT32_MAX /* GPU backend: whatever the cache holds; none when built */
/* --key-cache on the CPU without --precompute: cuzk_pk_precompute_auto for the key's size
 * and the threads, once the zkey's header is read. */
#define PRECOMPUTE_AUTO (UINT32_MAX - 1)

/* The proving key for `prove`: from the key cache (cache_arg: a path, "auto" for
 * ZKEY.cuzkcache, NULL for none) when it is valid and holds tables for `precomp` copies;
 * otherwise from the zkey (or the cached key), with tables built and the cache rewritten so
 * the next run is fast. A cache that cannot be used or written is a note on stderr, not an
 * error. how: what the load did, for the stage report. */
static cuzk_err prove_load_key(cuzk_pk **pk, const cuzk_zkey *zk, const char *zkey_path,
                               const char *cache_arg, unsigned precomp, unsigned nthreads,
                               char *how, size_t how_len, cuzk_errbuf *eb)
{
    *pk = NULL;
    char *cpath = NULL;
    cuzk_err e = CUZK_OK;
    if (cache_arg) {
        cpath = strcmp(cache_arg, "auto") == 0 ? cuzk_pk_cache_path(zkey_path, NULL)
                                                : strdup(cache_arg);
        if (!cpath)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        progress("loading the key cache %s", cpath);
        cuzk_errbuf ceb = {{0}};
        cuzk_err ce = cuzk_pk_cache_load(pk, cpath, zkey_path, &ceb);
        if (!ce && (precomp == PRECOMPUTE_ANY || cuzk_pk_precompute_copies(*pk) == precomp)) {
            snprintf(how, how_len, " (key cache)");
            free(cpath);
            return CUZK_OK;
        }
        if (!g_quiet) {
            if (ce == CUZK_NOT_FOUND)
                fprintf(stderr, "cuzk: no key cache at %s yet: loading %s and writing it\n",
                        cpath, zkey_path);
            else if (ce)
                fprintf(stderr, "cuzk: key cache not used: %s (%s); loading %s and rewriting it\n",
                        ceb.msg, cuzk_errname(ce), zkey_path);
            else
                fprintf(stderr,
                        "cuzk: key cache %s holds tables for --precompute %u, not %u: "
                        "rebuilding them and rewriting it\n",
                        cpath, cuzk_pk_precompute_copies(*pk), precomp);
        }
    }
    if (precomp == PRECOMPUTE_ANY)
        precomp = 0;
    if (!*pk) {
        progress("loading the proving key (%u variables, domain 2^%u)", zk->n_vars,
                 zk->log_domain_size);
        if ((e = cuzk_pk_load(pk, zk, nthreads, eb)))
            goto out;
        snprintf(how, how_len, " (zkey)");
    } else {
        snprintf(how, how_len, " (key cache)");
    }
    if (precomp || cuzk_pk_precompute_copies(*pk)) {
        progress("building the precomputed tables (--precompute %u)", precomp);
        cuzk_errbuf teb = {{0}};
        cuzk_err te = cuzk_pk_precompute(*pk, precomp, nthreads, &teb);
        if (te)
            fprintf(stderr, "cuzk: warning: %s; proving without precomputed tables\n", teb.msg);
        else if (precomp)
            snprintf(how + strlen(how) - 1, how_len - (strlen(how) - 1), " + tables)");
    }
    if (cpath) {
        progress("writing the key cache %s", cpath);
        cuzk_errbuf seb = {{0}};
        if (cuzk_pk_cache_save(*pk, cpath, zkey_path, &seb))
            fprintf(stderr, "cuzk: warning: the key cache was not written: %s\n", seb.msg);
    }
out:
    free(cpath);
    return e;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmd_prove(int argc, char **argv)
{
    cli_opt o[] = {{"threads", 0, 1, NULL, 0},       {"backend", 0, 1, NULL, 0},
                   {"format", 0, 1, NULL, 0},        {"r1cs", 0, 1, NULL, 0},
                   {"no-verify", 0, 0, NULL, 0},     {"verify", 0, 0, NULL, 0},
                   {"zero-blinding", 0, 0, NULL, 0}, {"quiet", 0, 0, NULL, 0},
                   {"help", 'h', 0, NULL, 0},        {"g2", 0, 1, NULL, 0},
                   {"repeat", 0, 1, NULL, 0},        {"synth", 0, 1, NULL, 0},
                   {"g2-device", 0, 1, NULL, 0},
                   {"key-cache", 0, 1, NULL, 0},     {"precompute", 0, 1, NULL, 0},
                   {"gpu-tables", 0, 1, NULL, 0},
                   {"wasm", 0, 1, NULL, 0},          {"input", 0, 1, NULL, 0},
                   {"wasm-cache", 0, 1, NULL, 0},    {"max-memory", 0, 1, NULL, 0}};
    enum { O_THREADS, O_BACKEND, O_FORMAT, O_R1CS, O_NOVERIFY, O_VERIFY, O_ZERO, O_QUIET, O_HELP,
           O_G2, O_REPEAT, O_SYNTH, O_G2DEV, O_KEYCACHE, O_PRECOMP, O_GPUTAB, O_WASM, O_INPUT,
           O_WASMCACHE, O_MAXMEM };
    const char *pos[8];
    int npos, rc;
    if ((rc = cli_parse("prove", argc, argv, o, (int)(sizeof o / sizeof o[0]), pos, 8, &npos)))
        return rc;
    if (o[O_HELP].seen) {
        fputs(PROVE_HELP, stdout);
        return 0;
    }
    g_quiet = o[O_QUIET].seen;
    const int from_inputs = o[O_WASM].seen;
    if (o[O_WASM].seen != o[O_INPUT].seen)
        return cli_usage("prove", "--wasm and --input go together");
    if (from_inputs && npos != 3)
        return cli_usage("prove", "expected --wasm CIRCUIT.wasm --input INPUT.json CIRCUIT.zkey "
                                  "PROOF.json PUBLIC.json");
    if (!from_inputs && npos != 4)
        return cli_usage("prove", "expected CIRCUIT.zkey WITNESS.wtns PROOF.json PUBLIC.json");
    /* pos[]: zkey, witness (when from a file), proof, public. */
    if (from_inputs) {
        pos[3] = pos[2];
        pos[2] = pos[1];
        pos[1] = NULL;
    }
    /* One process, one key: the CPU MSMs may keep their scratch blocks for the next MSM
     * (a proof runs five back to back; fresh pages cost a fault and a zeroing each). */
    cuzk_msm_scratch_limit((size_t)256 << 20);
    if (o[O_NOVERIFY].seen && o[O_VERIFY].seen)
        return cli_usage("prove", "--verify and --no-verify contradict each other");
    cuzk_prove_opts po = {0};
    if ((rc = cli_threads("prove", &o[O_THREADS], &po.nthreads)))
        return rc;
    po.no_verify = o[O_NOVERIFY].seen;
    po.zero_rs = o[O_ZERO].seen;
    if (o[O_BACKEND].seen) {
        if (strcmp(o[O_BACKEND].value, "auto") == 0)
            po.backend = CUZK_BACKEND_AUTO;
        else if (strcmp(o[O_BACKEND].value, "cpu") == 0)
            po.backend = CUZK_BACKEND_CPU;
        else if (strcmp(o[O_BACKEND].value, "gpu") == 0)
            po.backend = CUZK_BACKEND_GPU;
        else
            return cli_usage("prove", "--backend must be auto, cpu or gpu");
    }
    /* B in G2 on the GPU by default: with a dense witness it is the proof's longest MSM on
     * CPU threads, many times its GPU time. */
    po.g2_on_gpu = 1;
    if (o[O_G2].seen) {
        if (strcmp(o[O_G2].value, "cpu") == 0)
            po.g2_on_gpu = 0;
        else if (strcmp(o[O_G2].value, "gpu") != 0)
            return cli_usage("prove", "--g2 must be gpu or cpu");
    }
    if (o[O_SYNTH].seen) {
        if (strcmp(o[O_SYNTH].value, "cpu") == 0)
            po.synth_on_cpu = 1;
        else if (strcmp(o[O_SYNTH].value, "gpu") != 0)
            return cli_usage("prove", "--synth must be gpu or cpu");
    }
    /* B in G2 on a second GPU when there is one: it then runs beside the rest of the proof. */
    if (!o[O_G2DEV].seen || strcmp(o[O_G2DEV].value, "auto") == 0) {
        po.g2_device = cuzk_gpu_device_count() > 1 ? 1 : 0;
    } else {
        char *end;
        long v = strtol(o[O_G2DEV].value, &end, 10);
        int nd = cuzk_gpu_device_count();
        if (!*o[O_G2DEV].value || *end || v < 0 || v >= (nd > 0 ? nd : 1))
            return cli_usage("prove", "--g2-device must be auto or a GPU number below the "
                                      "device count");
        po.g2_device = (int)v;
    }
    /* Fixed-base tables: by default only with a key cache (building them costs more than
     * they save in one proof; the cache keeps them for the next). */
    unsigned precomp = o[O_KEYCACHE].seen ? PRECOMPUTE_AUTO : 0;
    int use_cache = o[O_KEYCACHE].seen;
    /* The GPU backend does not use the tables: with it, a cache is taken as it is and a new
     * one is written without tables, unless --precompute says otherwise. */
    if (o[O_KEYCACHE].seen && (po.backend == CUZK_BACKEND_GPU ||
                               (po.backend == CUZK_BACKEND_AUTO && cuzk_gpu_device_count() > 0)))
        precomp = PRECOMPUTE_ANY;
    if (o[O_PRECOMP].seen) {
        char *end;
        unsigned long v = strtoul(o[O_PRECOMP].value, &end, 10);
        if (!*o[O_PRECOMP].value || *end || v > 64)
            return cli_usage("prove", "--precompute must be a whole number from 0 to 64");
        precomp = (unsigned)v;
    }
    unsigned repeat = 1;
    if (o[O_REPEAT].seen) {
        char *end;
        unsigned long v = strtoul(o[O_REPEAT].value, &end, 10);
        if (!*o[O_REPEAT].value || *end || v < 1 || v > 100000)
            return cli_usage("prove", "--repeat must be a whole number from 1 to 100000");
        repeat = (unsigned)v;
    }
    /* GPU fixed-base tables cost more to build than they save in one proof. */
    po.gpu_tables = repeat > 1;
    /* One proof: the CPU frees each part of the key once the proof is done with it. */
    po.consume_key = repeat == 1;
    if (o[O_GPUTAB].seen) {
        if (strcmp(o[O_GPUTAB].value, "on") == 0)
            po.gpu_tables = 1;
        else if (strcmp(o[O_GPUTAB].value, "off") == 0)
            po.gpu_tables = 0;
        else if (strcmp(o[O_GPUTAB].value, "auto") != 0)
            return cli_usage("prove", "--gpu-tables must be auto, on or off");
    }
    uint64_t max_memory = 0;
    if (o[O_MAXMEM].seen) {
        cuzk_errbuf seb = {{0}};
        if (cuzk_parse_size(o[O_MAXMEM].value, &max_memory, &seb) || max_memory == 0)
            return cli_usage("prove", "--max-memory must be a size such as 512MiB, 8GiB or "
                                      "1073741824");
    }
    int compressed = 0;
    if (o[O_FORMAT].seen) {
        if (strcmp(o[O_FORMAT].value, "compressed") == 0)
            compressed = 1;
        else if (strcmp(o[O_FORMAT].value, "json") != 0)
            return cli_usage("prove", "--format must be json or compressed");
    }

    cuzk_errbuf eb = {{0}};
    cuzk_err e;
    cuzk_zkey zk;
    cuzk_wtns w;
    cuzk_witness wit = {0};
    double t0 = cuzk__now_ms();
    progress("reading %s", pos[0]);
    if ((e = cuzk_zkey_open(&zk, pos[0], &eb)))
        return fail(e, &eb);
    if (precomp == PRECOMPUTE_AUTO) {
        char why[96];
        uint64_t npts = zk.n_vars > zk.domain_size ? zk.n_vars : zk.domain_size;
        precomp = cuzk_pk_precompute_auto(npts, po.nthreads, why, sizeof why);
        if (precomp && !g_quiet)
            fprintf(stderr, "cuzk: key cache: %u table copies (%s)\n", precomp, why);
        /* A cache without tables holds what the zkey gives after a parse that costs no more
         * than reading the cache (measured 2^16-2^20, both curves): the zkey it is. */
        if (!precomp) {
            if (!g_quiet)
                fprintf(stderr, "cuzk: key cache: not used (%s; the zkey loads as fast as a "
                                "cache without tables; --precompute 0 keeps one anyway)\n", why);
            use_cache = 0;
        }
    }
    if (max_memory) {
        unsigned tabs = precomp == PRECOMPUTE_ANY ? 0 : precomp;
        uint64_t need = cuzk_prove_memory_estimate(&zk, po.nthreads, tabs, po.consume_key);
        if (need > max_memory) {
            cuzk_zkey_close(&zk);
            e = cuzk_errf(&eb, CUZK_OUT_OF_BUDGET,
                          "%s: the proof needs ~%" PRIu64 " MiB, --max-memory is %" PRIu64
                          " MiB", pos[0], (need + (1 << 20) - 1) >> 20, max_memory >> 20);
            return fail(e, &eb);
        }
        if (!g_quiet)
            fprintf(stderr, "cuzk: estimated peak memory ~%" PRIu64 " MiB (--max-memory %" PRIu64
                            " MiB)\n",
                    (need + (1 << 20) - 1) >> 20, max_memory >> 20);
    }
    if (from_inputs) {
        progress("computing the witness of %s", o[O_INPUT].value);
        e = cuzk_cmd_witness_compute(&wit, o[O_WASM].value, o[O_INPUT].value,
                                     o[O_WASMCACHE].value, g_quiet ? NULL : stderr, &eb);
        if (!e)
            cuzk_witness_as_wtns(&wit, &w, o[O_INPUT].value);
    } else {
        e = cuzk_wtns_open(&w, pos[1], &eb);
    }
    if (e) {
        cuzk_witness_clear(&wit);
        cuzk_zkey_close(&zk);
        return fail(e, &eb);
    }
    int ret = EXIT_INPUT;
    cuzk_pk *pk = NULL;
    void *wpinned = NULL;
    if ((e = cuzk_wtns_check_zkey(&w, &zk, &eb)) || (e = cuzk_wtns_validate(&w, &eb)))
        goto done;
    if (compressed && zk.curve != CUZK_CURVE_BLS12_381) {
        e = cuzk_errf(&eb, CUZK_UNSUPPORTED, "--format compressed needs a BLS12-381 key; %s is %s",
                      pos[0], cuzk_curve_name(zk.curve));
        goto done;
    }
    if (o[O_R1CS].seen) {
        cuzk_r1cs r1;
        if ((e = cuzk_r1cs_open(&r1, o[O_R1CS].value, &eb)))
            goto done;
        if (r1.curve != zk.curve)
            e = cuzk_errf(&eb, CUZK_WRONG_CURVE, "%s is on %s, the key on %s", o[O_R1CS].value,
                          cuzk_curve_name(r1.curve), cuzk_curve_name(zk.curve));
        else
            e = cuzk_r1cs_check_witness(&r1, w.values, w.n_witness, &eb);
        cuzk_r1cs_close(&r1);
        if (e)
            goto done;
    }
    char load_how[32] = "";
    if ((e = prove_load_key(&pk, &zk, pos[0], use_cache ? o[O_KEYCACHE].value : NULL,
                            precomp, po.nthreads, load_how, sizeof load_how, &eb)))
        goto done;
    /* On the GPU (everything on the device) the witness goes to page-locked memory once, so
     * each proof uploads it by DMA as it is instead of copying it there first. */
    const uint8_t *wv = w.values;
    if (po.backend != CUZK_BACKEND_CPU && !po.synth_on_cpu && w.n_witness &&
        cuzk_witness_buf_alloc(&wpinned, w.n_witness, &(cuzk_errbuf){{0}}) == CUZK_OK) {
        memcpy(wpinned, w.values, (size_t)w.n_witness * 32);
        wv = wpinned;
    }
    double t1 = cuzk__now_ms();
    progress("proving");
    cuzk_proof proof;
    cuzk_prove_stats st;
    double *runs = NULL;
    if (repeat > 1 && !(runs = malloc(sizeof(double) * repeat))) {
        e = cuzk_errf(&eb, CUZK_NO_MEMORY, "out of memory");
        goto done;
    }
    for (unsigned i = 0; i < repeat; i++) {
        double r0 = cuzk__now_ms();
        if ((e = cuzk_prove(&proof, pk, wv, w.n_witness, &po, &st, &eb))) {
            free(runs);
            goto done;
        }
        if (repeat > 1) {
            runs[i] = cuzk__now_ms() - r0;
            if (!g_quiet) {
                char up[96] = "";
                if (st.used_gpu && st.gpu_upload_ms > 0)
                    snprintf(up, sizeof up, " (incl. gpu upload %.1f%s)", st.gpu_upload_ms,
                             st.gpu_tables > 1 ? " with tables" : "");
                fprintf(stderr,
                        "cuzk: proof %u/%u: %.1f ms%s: witness %.1f, synthesis %.1f, h %.1f, "
                        "msm g1 %.1f, msm g2 %.1f, finalize %.1f, verify %.1f\n",
                        i + 1, repeat, runs[i], up, st.witness_ms, st.synth_ms, st.h_ms,
                        st.msm_g1_ms, st.msm_g2_ms, st.finalize_ms, st.verify_ms);
            }
        }
    }
    if (repeat > 1) {
        /* The first proof pays the GPU upload of the key's points; the best and the median
         * of the others are the resident-key latency. */
        unsigned k = repeat > 2 ? 1 : 0;
        qsort(runs + k, repeat - k, sizeof(double), cmp_double);
        if (!g_quiet)
            fprintf(stderr, "cuzk: %u proofs%s: best %.1f ms, median %.1f ms\n", repeat - k,
                    k ? " after the first" : "", runs[k], runs[k + (repeat - k) / 2]);
        free(runs);
    }
    if (st.gpu_fallback)
        fprintf(stderr, "cuzk: warning: the GPU failed (%s); the proof was made on the CPU\n",
                st.gpu_error);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
    if (compressed) {
        uint8_t buf[CUZK_PROOF_COMPRESSED_BYTES];
        if (!(e = cuzk_proof_to_compressed(buf, &proof, &eb))) {
            FILE *f = fopen(pos[2], "wb");
            if (!f || fwrite(buf, 1, sizeof buf, f) != sizeof buf || fclose(f) != 0)
                e = cuzk_errf(&eb, CUZK_IO, "%s: cannot write: %s", pos[2], strerror(errno));
        }
    } else {
        cuzk_proof_to_json(&sb, &proof);
        e = cuzk_sb_write_file(&sb, pos[2], &eb);
    }
    cuzk_sb_free(&sb);
    if (e)
        goto done;
    cuzk_sb_init(&sb);
    cuzk_public_to_json(&sb, w.values + 32, cuzk_pk_n_public(pk));
    e = cuzk_sb_write_file(&sb, pos[3], &eb);
    cuzk_sb_free(&sb);
    if (e)
        goto done;
    if (!g_quiet) {
        char up[160] = "", plain[32] = "";
        cuzk_pk_set_names(st.gpu_no_tables, plain, sizeof plain);
        if (st.used_gpu && st.gpu_tables > 1 && plain[0])
            snprintf(up, sizeof up,
                     "gpu upload %.1f with tables (%d copies; none for %s: they did not fit), ",
                     st.gpu_upload_ms, st.gpu_tables, plain);
        else if (st.used_gpu && st.gpu_tables > 1)
            snprintf(up, sizeof up, "gpu upload %.1f with tables (%d copies), ", st.gpu_upload_ms,
                     st.gpu_tables);
        else if (st.used_gpu && po.gpu_tables && plain[0])
            snprintf(up, sizeof up, "gpu upload %.1f (no tables: they did not fit), ",
                     st.gpu_upload_ms);
        else if (st.used_gpu && po.gpu_tables)
            snprintf(up, sizeof up, "gpu upload %.1f (no tables: too few points to pay), ",
                     st.gpu_upload_ms);
        else if (st.used_gpu)
            snprintf(up, sizeof up, "gpu upload %.1f, ", st.gpu_upload_ms);
        char ba[64] = ""; /* the batch-affine chunk the key's context took (src/gpu/gpu.h) */
        if (st.used_gpu && st.gpu_ba_chunk)
            snprintf(ba, sizeof ba, "batch-affine chunk %.1f GiB%s, ",
                     st.gpu_ba_chunk / 1073741824.0,
                     st.gpu_ba_quads == 1 ? " with G1 quads"
                     : st.gpu_ba_quads    ? " with quads"
                                          : "");
        fprintf(stderr,
                "cuzk: proved %s (%s, domain %u, %s, %u threads) in %.1f ms: load %.1f%s, %s%s"
                "witness %.1f, synthesis %.1f, h %.1f, msm g1 %.1f, msm g2 %.1f%s, finalize %.1f, "
                "verify %.1f%s\n",
                pos[0], cuzk_curve_name(zk.curve), zk.domain_size, st.used_gpu ? "gpu" : "cpu",
                cuzk_num_threads(), cuzk__now_ms() - t0, t1 - t0, load_how, up, ba, st.witness_ms,
                st.synth_ms, st.h_ms,
                st.msm_g1_ms, st.msm_g2_ms, st.used_gpu ? (po.g2_on_gpu ? " (gpu)" : " (cpu)") : "",
                st.finalize_ms, st.verify_ms, po.no_verify ? " (not verified)" : "");
    }
    ret = 0;
done:
    cuzk_witness_buf_free(wpinned);
    cuzk_pk_free(pk);
    cuzk_wtns_close(&w);
    cuzk_witness_clear(&wit);
    cuzk_zkey_close(&zk);
    return ret == 0 ? 0 : fail(e, &eb);
}

/* ------------------------------------------------------------------ verify */

static const char *VERIFY_HELP =
    "Usage: cuzk verify [options] VERIFICATION_KEY.json PUBLIC.json PROOF.json\n"
    "\n"
    "Checks a Groth16 proof like `snarkjs groth16 verify` (same argument order). PROOF may\n"
    "also be a 192-byte compressed BLS12-381 proof (detected by its size and flags).\n"
    "\n"
    "Options:\n"
    "  --quiet            print nothing, only the exit status\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 valid, 1 invalid, 2 bad input (message on stderr).\n";

static cuzk_err read_small_file(const char *path, uint8_t **buf, size_t *len, size_t cap,
                                cuzk_errbuf *eb)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: %s", path, strerror(errno));
    *buf = malloc(cap);
    if (!*buf) {
        fclose(f);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    *len = fread(*buf, 1, cap, f);
    fclose(f);
    return CUZK_OK;
}

static int cmd_verify(int argc, char **argv)
{
    cli_opt o[] = {{"quiet", 0, 0, NULL, 0}, {"help", 'h', 0, NULL, 0}};
    const char *pos[4];
    int npos, rc;
    if ((rc = cli_parse("verify", argc, argv, o, 2, pos, 4, &npos)))
        return rc;
    if (o[1].seen) {
        fputs(VERIFY_HELP, stdout);
        return 0;
    }
    g_quiet = o[0].seen;
    if (npos != 3)
        return cli_usage("verify", "expected VERIFICATION_KEY.json PUBLIC.json PROOF.json");
    cuzk_errbuf eb = {{0}};
    cuzk_err e;
    cuzk_json_doc *vj = NULL, *pj = NULL, *prj = NULL;
    cuzk_vk vk = {0};
    cuzk_proof proof;
    uint8_t *pub = NULL, *raw = NULL;
    uint64_t npub = 0;
    size_t rawlen = 0;
    int ret = EXIT_INPUT;
    if ((e = cuzk_json_parse_file(&vj, pos[0], 0, &eb)) ||
        (e = cuzk_vk_from_json(&vk, cuzk_json_root(vj), pos[0], &eb)) ||
        (e = cuzk_json_parse_file(&pj, pos[1], 0, &eb)) ||
        (e = cuzk_public_from_json(&pub, &npub, cuzk_json_root(pj), vk.curve, pos[1], &eb)))
        goto done;
    if ((e = read_small_file(pos[2], &raw, &rawlen, 4096, &eb)))
        goto done;
    if (rawlen == CUZK_PROOF_COMPRESSED_BYTES && (raw[0] & 0x80)) {
        if (vk.curve != CUZK_CURVE_BLS12_381) {
            e = cuzk_errf(&eb, CUZK_WRONG_CURVE, "%s: a compressed proof is BLS12-381, the key is %s",
                          pos[2], cuzk_curve_name(vk.curve));
            goto done;
        }
        if ((e = cuzk_proof_from_compressed(&proof, raw, rawlen, &eb)))
            goto done;
    } else {
        if ((e = cuzk_json_parse_file(&prj, pos[2], 0, &eb)) ||
            (e = cuzk_proof_from_json(&proof, cuzk_json_root(prj), vk.curve, pos[2], &eb)))
            goto done;
    }
    e = cuzk_verify(&vk, pub, npub, &proof, &eb);
    if (e == CUZK_OK) {
        if (!g_quiet)
            printf("OK: the proof is valid\n");
        ret = 0;
    } else if (e == CUZK_VERIFY_FAILED) {
        if (!g_quiet)
            printf("INVALID: the proof does not verify\n");
        ret = EXIT_INVALID;
    }
done:
    if (ret == EXIT_INPUT)
        fail(e, &eb);
    cuzk_json_free(vj);
    cuzk_json_free(pj);
    cuzk_json_free(prj);
    cuzk_vk_clear(&vk);
    free(pub);
    free(raw);
    return ret;
}

/* ------------------------------------------------------------------ export-vk */

static const char *EXPORT_HELP =
    "Usage: cuzk export-vk [options] CIRCUIT.zkey VERIFICATION_KEY.json\n"
    "\n"
    "Writes the verification key of a proving key, as `snarkjs zkey export\n"
    "verificationkey` does.\n"
    "\n"
    "Options:\n"
    "  -h, --help         this help\n";

static int cmd_export_vk(int argc, char **argv)
{
    cli_opt o[] = {{"help", 'h', 0, NULL, 0}};
    const char *pos[4];
    int npos, rc;
    if ((rc = cli_parse("export-vk", argc, argv, o, 1, pos, 4, &npos)))
        return rc;
    if (o[0].seen) {
        fputs(EXPORT_HELP, stdout);
        return 0;
    }
    if (npos != 2)
        return cli_usage("export-vk", "expected CIRCUIT.zkey VERIFICATION_KEY.json");
    cuzk_errbuf eb = {{0}};
    cuzk_err e;
    cuzk_zkey zk;
    if ((e = cuzk_zkey_open(&zk, pos[0], &eb)))
        return fail(e, &eb);
    /* Only the header and IC are needed: decode them without loading the whole key. */
    cuzk_vk vk;
    e = cuzk_zkey_vk(&zk, &vk, &eb);
    cuzk_zkey_close(&zk);
    if (e)
        return fail(e, &eb);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
    if (!(e = cuzk_vk_to_json(&sb, &vk, &eb)))
        e = cuzk_sb_write_file(&sb, pos[1], &eb);
    cuzk_sb_free(&sb);
    cuzk_vk_clear(&vk);
    return e ? fail(e, &eb) : 0;
}

/* ------------------------------------------------------------------ inspect */

static const char *INSPECT_HELP =
    "Usage: cuzk inspect [options] FILE\n"
    "\n"
    "Prints what a .zkey, .wtns or .r1cs file holds (kind, curve, sizes, sections; for a zkey\n"
    "also each MSM point set's points at infinity, whose terms the GPU MSMs drop) and\n"
    "validates it fully (every field element in range; for a zkey every point on its curve).\n"
    "\n"
    "Options:\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 valid, 2 invalid or unreadable (the problem on stderr).\n";

/* Points at infinity (all zero bytes) among the len / pb points of pb bytes at p. */
static uint64_t count_inf(const uint8_t *p, size_t len, size_t pb)
{
    uint64_t n = 0;
    for (size_t off = 0; off + pb <= len; off += pb) {
        size_t k = 0;
        while (k < pb && !p[off + k])
            k++;
        n += k == pb;
    }
    return n;
}

static int cmd_inspect(int argc, char **argv)
{
    cli_opt o[] = {{"help", 'h', 0, NULL, 0}};
    const char *pos[4];
    int npos, rc;
    if ((rc = cli_parse("inspect", argc, argv, o, 1, pos, 4, &npos)))
        return rc;
    if (o[0].seen) {
        fputs(INSPECT_HELP, stdout);
        return 0;
    }
    if (npos != 1)
        return cli_usage("inspect", "expected one FILE");
    const char *path = pos[0];
    cuzk_errbuf eb = {{0}};
    cuzk_err e;
    FILE *f = fopen(path, "rb");
    if (!f) {
        e = cuzk_errf(&eb, CUZK_IO, "%s: %s", path, strerror(errno));
        return fail(e, &eb);
    }
    char magic[4] = {0};
    size_t got = fread(magic, 1, 4, f);
    fclose(f);
    if (got == 4 && memcmp(magic, "zkey", 4) == 0) {
        cuzk_zkey zk;
        if ((e = cuzk_zkey_open(&zk, path, &eb)))
            return fail(e, &eb);
        printf("file:        %s\nkind:        zkey (Groth16 proving key, snarkjs)\n", path);
        printf("curve:       %s\nvariables:   %u\npublic:      %u\ndomain:      %u (2^%u)\n",
               cuzk_curve_name(zk.curve), zk.n_vars, zk.n_public, zk.domain_size,
               zk.log_domain_size);
        printf("coefficients:%" PRIu64 "\npoints:      A %" PRIu64 ", B1 %" PRIu64 ", B2 %" PRIu64
               ", C %" PRIu64 ", H %" PRIu64 ", IC %" PRIu64 "\n",
               zk.n_coefs, zk.n_a, zk.n_b1, zk.n_b2, zk.n_c, zk.n_h, zk.n_ic);
        printf("size:        %" PRIu64 " bytes\n", zk.file.len);
        e = cuzk_zkey_validate(&zk, &eb);
        cuzk_pk *pk = NULL;
        if (!e)
            e = cuzk_pk_load(&pk, &zk, 0, &eb);
        if (!e) {
            /* Each MSM set's points at infinity (signals absent from A or B make them in A,
             * B1 and B2): work the GPU backend's MSMs drop after sorting their digits. */
            void *ptr[CUZK_PK_GPU_ARRAYS];
            size_t len[CUZK_PK_GPU_ARRAYS];
            cuzk_pk_gpu_arrays(pk, ptr, len);
            const size_t g1 = 2 * (size_t)cuzk_curve_n8q(zk.curve);
            printf("at infinity: A %" PRIu64 ", B1 %" PRIu64 ", B2 %" PRIu64 ", C %" PRIu64
                   ", H %" PRIu64 "\n",
                   count_inf(ptr[0], len[0], g1), count_inf(ptr[1], len[1], g1),
                   count_inf(ptr[4], len[4], 2 * g1), count_inf(ptr[2], len[2], g1),
                   count_inf(ptr[3], len[3], g1));
        }
        cuzk_pk_free(pk);
        cuzk_zkey_close(&zk);
    } else if (got == 4 && memcmp(magic, "wtns", 4) == 0) {
        cuzk_wtns w;
        if ((e = cuzk_wtns_open(&w, path, &eb)))
            return fail(e, &eb);
        printf("file:        %s\nkind:        wtns (witness, version %u)\n", path, w.version);
        printf("curve:       %s\nvalues:      %" PRIu64 "\nsize:        %" PRIu64 " bytes\n",
               cuzk_curve_name(w.curve), w.n_witness, w.file.len);
        e = cuzk_wtns_validate(&w, &eb);
        cuzk_wtns_close(&w);
    } else if (got == 4 && memcmp(magic, "r1cs", 4) == 0) {
        cuzk_r1cs r;
        if ((e = cuzk_r1cs_open(&r, path, &eb)))
            return fail(e, &eb);
        printf("file:        %s\nkind:        r1cs (constraint system)\n", path);
        printf("curve:       %s\nwires:       %u\noutputs:     %u\npublic in:   %u\nprivate in:  %u\n"
               "labels:      %" PRIu64 "\nconstraints: %u\nterms:       %" PRIu64 "\n",
               cuzk_curve_name(r.curve), r.n_wires, r.n_outputs, r.n_pub_inputs, r.n_prv_inputs,
               r.n_labels, r.n_constraints, r.n_terms_total);
        e = cuzk_r1cs_validate(&r, &eb);
        cuzk_r1cs_close(&r);
    } else {
        e = cuzk_errf(&eb, CUZK_BAD_FORMAT, "%s: not a zkey, wtns or r1cs file (magic %.4s)",
                      path, got == 4 ? magic : "?");
        return fail(e, &eb);
    }
    if (e)
        return fail(e, &eb);
    printf("validation:  ok\n");
    return 0;
}

/* ------------------------------------------------------------------ main */

static const char *MAIN_HELP =
    "Usage: cuzk COMMAND [options] ARGS...\n"
    "\n"
    "Groth16 proofs for circom/snarkjs circuits on BN254 (bn128) and BLS12-381.\n"
    "\n"
    "Commands:\n"
    "  prove       CIRCUIT.zkey WITNESS.wtns PROOF.json PUBLIC.json\n"
    "              (or --wasm CIRCUIT.wasm --input INPUT.json CIRCUIT.zkey PROOF.json PUBLIC.json)\n"
    "  witness     CIRCUIT.wasm INPUT.json WITNESS.wtns  (circom's witness program)\n"
    "  verify      VERIFICATION_KEY.json PUBLIC.json PROOF.json\n"
    "  export-vk   CIRCUIT.zkey VERIFICATION_KEY.json\n"
    "  inspect     FILE (.zkey, .wtns or .r1cs)\n"
    "  setup       CIRCUIT.r1cs CIRCUIT.zkey  (test keys only: single-party setup)\n"
    "  gen-circuit --constraints N -o DIR  (synthetic circuit, witness, inputs)\n"
    "  gen-witness --circuit DIR --seed S -o WITNESS.wtns\n"
    "\n"
    "`cuzk COMMAND --help` describes each command. CUZK_THREADS sets the default thread count.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return EXIT_INPUT;
    }
    const char *c = argv[1];
    if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0 || strcmp(c, "help") == 0) {
        fputs(MAIN_HELP, stdout);
        return 0;
    }
    if (strcmp(c, "--version") == 0) {
        printf("cuzk 0.1.0\n");
        return 0;
    }
    if (strcmp(c, "prove") == 0)
        return cmd_prove(argc - 2, argv + 2);
    if (strcmp(c, "verify") == 0)
        return cmd_verify(argc - 2, argv + 2);
    if (strcmp(c, "export-vk") == 0)
        return cmd_export_vk(argc - 2, argv + 2);
    if (strcmp(c, "inspect") == 0)
        return cmd_inspect(argc - 2, argv + 2);
    if (strcmp(c, "setup") == 0) {
        extern int cuzk_cmd_setup(int, char **);
        return cuzk_cmd_setup(argc - 2, argv + 2);
    }
    if (strcmp(c, "witness") == 0) {
        extern int cuzk_cmd_witness(int, char **);
        return cuzk_cmd_witness(argc - 2, argv + 2);
    }
    if (strcmp(c, "gen-circuit") == 0) {
        extern int cuzk_cmd_gen_circuit(int, char **);
        return cuzk_cmd_gen_circuit(argc - 2, argv + 2);
    }
    if (strcmp(c, "gen-witness") == 0) {
        extern int cuzk_cmd_gen_witness(int, char **);
        return cuzk_cmd_gen_witness(argc - 2, argv + 2);
    }
    fprintf(stderr, "cuzk: unknown command '%s'\n\n%s", c, MAIN_HELP);
    return EXIT_INPUT;
}
