/* cuzk setup / gen-circuit / gen-witness: test keys and synthetic circuits (cuzk/setup.h,
 * cuzk/gencircuit.h). Exit codes: 0 success, 2 bad input or any other error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/curve.h"
#include "cuzk/err.h"
#include "cuzk/gencircuit.h"
#include "cuzk/json.h"
#include "cuzk/setup.h"
#include "cuzk/units.h"
#include "util/clock.h"
#include "util/parallel.h"

#include "cli.h"

int cuzk_cmd_setup(int argc, char **argv);
int cuzk_cmd_gen_circuit(int argc, char **argv);
int cuzk_cmd_gen_witness(int argc, char **argv);

#define SX_EXIT_INPUT 2

static int sx_fail(const char *cmd, cuzk_err e, const cuzk_errbuf *eb)
{
    fprintf(stderr, "cuzk %s: error: %s (%s)\n", cmd, eb->msg[0] ? eb->msg : cuzk_strerror(e),
            cuzk_errname(e));
    return SX_EXIT_INPUT;
}

/* "1048576", "2^20", "1M", "64K", "1G" (binary multiples): cuzk_parse_count. 0 on success. */
static int sx_parse_size(const char *s, uint64_t *out)
{
    cuzk_errbuf eb = {{0}};
    return cuzk_parse_count(s, out, &eb) ? -1 : 0;
}

/* ------------------------------------------------------------------ setup */

static const char *SETUP_HELP =
    "Usage: cuzk setup [options] CIRCUIT.r1cs CIRCUIT.zkey\n"
    "\n"
    "Makes a Groth16 proving key (snarkjs .zkey, curve taken from the r1cs) with a\n"
    "single-party setup: random tau, alpha, beta, gamma, delta, no ceremony. FOR TESTING AND\n"
    "BENCHMARKING ONLY: whoever ran it can forge proofs. snarkjs accepts the key (zkey export\n"
    "verificationkey, groth16 prove / verify).\n"
    "\n"
    "Options:\n"
    "  --seed HEX         derive the secrets deterministically from these bytes (hex, 1-256\n"
    "                     bytes): same seed and r1cs, same file (default: OS randomness)\n"
    "  --threads N        CPU threads (default: all cores, or CUZK_THREADS)\n"
    "  --max-memory SIZE  refuse circuits whose setup needs more working memory, e.g. 8G,\n"
    "                     512M (default: the machine's physical memory)\n"
    "  --device N         compute the key's points on CUDA device N (default 0, when the\n"
    "                     machine has a GPU); -1: on the CPU. The key is the same either way\n"
    "  --quiet            no progress or summary (the testing-only warning is always printed)\n"
    "  -h, --help         this help\n";

typedef struct {
    double t0, last;
    int tty;
} sx_progress;

static void sx_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    sx_progress *p = ctx;
    double now = cuzk__now_ms();
    if (!p->tty || (now - p->last < 200 && done < total))
        return;
    p->last = now;
    double el = (now - p->t0) / 1e3, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr,
            "\rcuzk setup: %5.1f%%  %" PRIu64 "/%" PRIu64 " points  %.0f points/s  ETA %.0fs   ",
            100.0 * (double)done / (double)total, done, total, rate, eta);
    if (done >= total)
        fputc('\n', stderr);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int cuzk_cmd_setup(int argc, char **argv)
{
    const char *cmd = "setup";
    cli_opt o[] = {{"seed", 0, 1, NULL, 0},       {"threads", 0, 1, NULL, 0},
                  {"max-memory", 0, 1, NULL, 0}, {"quiet", 'q', 0, NULL, 0},
                  {"help", 'h', 0, NULL, 0},     {"device", 0, 1, NULL, 0}};
    const char *pos[2];
    int npos, rc = cli_parse(cmd, argc, argv, o, 6, pos, 2, &npos);
    if (rc)
        return rc;
    if (o[4].seen) {
        fputs(SETUP_HELP, stdout);
        return 0;
    }
    if (npos != 2)
        return cli_usage(cmd, "expected CIRCUIT.r1cs and CIRCUIT.zkey");
    cuzk_setup_opts so = {0};
    uint8_t seed[256];
    if (o[0].seen) {
        const char *h = o[0].value;
        if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
            h += 2;
        size_t n = strlen(h);
        if (n == 0 || n % 2 || n / 2 > sizeof seed)
            return cli_usage(cmd, "--seed must be an even number of hex digits (1 to 256 bytes)");
        for (size_t i = 0; i < n / 2; i++) {
            int a = hexval(h[2 * i]), b = hexval(h[2 * i + 1]);
            if (a < 0 || b < 0)
                return cli_usage(cmd, "--seed must be hex digits");
            seed[i] = (uint8_t)(a << 4 | b);
        }
        so.seed = seed;
        so.seed_len = n / 2;
    }
    if ((rc = cli_threads(cmd, &o[1], &so.nthreads)))
        return rc;
    if (o[2].seen && (sx_parse_size(o[2].value, &so.max_memory) || so.max_memory == 0))
        return cli_usage(cmd, "--max-memory must be a size such as 512M, 8G or 1073741824");
    if (o[5].seen) {
        char *end;
        errno = 0;
        long v = strtol(o[5].value, &end, 10);
        if (errno || *end || v < -1 || v > 255)
            return cli_usage(cmd, "--device must be -1 (the CPU) or a CUDA device number");
        so.device = (int)v;
    }
    fprintf(stderr,
            "cuzk setup: WARNING: single-party setup without a ceremony; the key is for testing "
            "and benchmarking only, never for production (its maker can forge proofs)\n");
    sx_progress pr = {cuzk__now_ms(), 0, !o[3].seen && isatty(2)};
    so.progress = sx_progress_cb;
    so.progress_ctx = &pr;
    cuzk_setup_info info;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_setup(pos[0], pos[1], &so, &info, &eb);
    if (e)
        return sx_fail(cmd, e, &eb);
    char where[32] = "the CPU";
    if (info.device >= 0)
        snprintf(where, sizeof where, "GPU %d", info.device);
    if (!o[3].seen)
        fprintf(stderr,
                "cuzk setup: wrote %s: %u constraints, %u wires, %u public, domain %u, %" PRIu64
                " coefficients, in %.2f s (points on %s, windows %u/%u, ~%" PRIu64
                " MiB working memory)\n",
                pos[1], info.n_constraints, info.n_vars, info.n_public, info.domain_size,
                info.n_coefs, info.ms_total / 1e3, where, info.window_g1, info.window_g2,
                info.mem_estimate >> 20);
    return 0;
}

/* ------------------------------------------------------------------ gen-circuit */

static const char *GEN_HELP =
    "Usage: cuzk gen-circuit --constraints N [options] -o DIR\n"
    "\n"
    "Writes a synthetic satisfiable circuit: DIR/circuit.r1cs, DIR/circuit.wtns (a satisfying\n"
    "witness), DIR/input.json (its inputs) and DIR/circuit.json (the parameters, for\n"
    "gen-witness). Deterministic in the seed; time linear in N; memory bounded (streamed).\n"
    "Profiles are described in docs/CIRCUITS.md.\n"
    "\n"
    "Options:\n"
    "  --constraints N    number of constraints (e.g. 1000, 2^20, 1M)\n"
    "  --curve C          bn128 (default) | bls12381\n"
    "  --profile P        dense (default) | sparse-bits | mixed\n"
    "  --seed S           seed string (default \"1\")\n"
    "  --segment L        cut the constraints into independent runs of L (e.g. 2^20) that\n"
    "                     share only the inputs, so a witness is made on many threads at\n"
    "                     once (default 0: one run; docs/CIRCUITS.md)\n"
    "  -o, --out DIR      output directory (created if missing)\n"
    "  --quiet            no summary\n"
    "  -h, --help         this help\n";

static int sx_mkdir(const char *d)
{
    struct stat st;
    if (stat(d, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : -1;
    return mkdir(d, 0777);
}

int cuzk_cmd_gen_circuit(int argc, char **argv)
{
    const char *cmd = "gen-circuit";
    cli_opt o[] = {{"constraints", 0, 1, NULL, 0}, {"curve", 0, 1, NULL, 0},
                  {"profile", 0, 1, NULL, 0},     {"seed", 0, 1, NULL, 0},
                  {"out", 'o', 1, NULL, 0},       {"quiet", 'q', 0, NULL, 0},
                  {"help", 'h', 0, NULL, 0},      {"threads", 0, 1, NULL, 0},
                  {"segment", 0, 1, NULL, 0}};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, o, 9, pos, 1, &npos);
    if (rc)
        return rc;
    if (o[6].seen) {
        fputs(GEN_HELP, stdout);
        return 0;
    }
    if (npos)
        return cli_usage(cmd, "unexpected argument (the output directory is given with -o)");
    cuzk_gen_params p = {0};
    uint64_t n;
    if (!o[0].seen || sx_parse_size(o[0].value, &n) || n == 0 || n > (1ull << 31))
        return cli_usage(cmd, "--constraints N is required (1 to 2^31)");
    p.n_constraints = (uint32_t)n;
    p.curve = CUZK_CURVE_BN254;
    if (o[1].seen && cuzk_curve_from_name(o[1].value, &p.curve))
        return cli_usage(cmd, "--curve must be bn128 or bls12381");
    p.profile = CUZK_GEN_DENSE;
    if (o[2].seen && cuzk_gen_profile_from_name(o[2].value, &p.profile))
        return cli_usage(cmd, "--profile must be dense, sparse-bits or mixed");
    p.seed = o[3].seen ? o[3].value : "1";
    uint64_t seg = 0;
    if (o[8].seen && (sx_parse_size(o[8].value, &seg) || seg > UINT32_MAX))
        return cli_usage(cmd, "--segment L must be a number of constraints (0 to 2^32-1)");
    p.segment = (uint32_t)seg;
    if (!o[4].seen)
        return cli_usage(cmd, "-o DIR is required");
    unsigned nt;
    if ((rc = cli_threads(cmd, &o[7], &nt)))
        return rc;
    const char *dir = o[4].value;
    if (sx_mkdir(dir)) {
        fprintf(stderr, "cuzk %s: error: cannot create directory %s: %s (IO)\n", cmd, dir,
                strerror(errno ? errno : ENOTDIR));
        return SX_EXIT_INPUT;
    }
    size_t dl = strlen(dir);
    char *r1cs = malloc(dl + 32), *wtns = malloc(dl + 32), *inp = malloc(dl + 32),
         *meta = malloc(dl + 32);
    if (!r1cs || !wtns || !inp || !meta) {
        free(r1cs), free(wtns), free(inp), free(meta);
        fprintf(stderr, "cuzk %s: error: out of memory\n", cmd);
        return SX_EXIT_INPUT;
    }
    sprintf(r1cs, "%s/circuit.r1cs", dir);
    sprintf(wtns, "%s/circuit.wtns", dir);
    sprintf(inp, "%s/input.json", dir);
    sprintf(meta, "%s/circuit.json", dir);
    cuzk_errbuf eb = {{0}};
    cuzk_gen_info info;
    cuzk_err e = cuzk_gen_circuit(&p, r1cs, wtns, inp, &info, &eb);
    if (!e) {
        cuzk_strbuf sb;
        cuzk_sb_init(&sb);
        cuzk_sb_printf(&sb,
                       "{\n \"generator\": \"cuzk gen-circuit\",\n \"version\": 1,\n"
                       " \"curve\": \"%s\",\n \"constraints\": %u,\n \"profile\": \"%s\",\n"
                       " \"seed\": ",
                       cuzk_curve_name(p.curve), p.n_constraints, cuzk_gen_profile_name(p.profile));
        cuzk_sb_json_string(&sb, p.seed);
        if (p.segment)
            cuzk_sb_printf(&sb, ",\n \"segment\": %u", p.segment);
        cuzk_sb_printf(&sb, ",\n \"wires\": %u,\n \"public_inputs\": %u,\n \"outputs\": 1\n}\n",
                       info.n_wires, info.n_public_inputs);
        e = cuzk_sb_write_file(&sb, meta, &eb);
        cuzk_sb_free(&sb);
    }
    if (!e && !o[5].seen)
        fprintf(stderr,
                "cuzk gen-circuit: wrote %s (%s, %s, %u constraints%s%.0u, %u wires, %" PRIu64
                " terms, %.1f%% of witness values 0/1) in %.2f s\n",
                dir, cuzk_curve_name(p.curve), cuzk_gen_profile_name(p.profile), p.n_constraints,
                p.segment ? " in runs of " : "", p.segment, info.n_wires, info.n_terms,
                100.0 * (double)info.n_binary / info.n_wires, info.ms / 1e3);
    free(r1cs), free(wtns), free(inp), free(meta);
    return e ? sx_fail(cmd, e, &eb) : 0;
}

/* ------------------------------------------------------------------ gen-witness */

static const char *GENW_HELP =
    "Usage: cuzk gen-witness --circuit DIR --seed S -o WITNESS.wtns\n"
    "\n"
    "Writes a fresh satisfying witness for a circuit made by gen-circuit (same constraints,\n"
    "different input values drawn from the witness seed S), e.g. for the many partitions of\n"
    "one key.\n"
    "\n"
    "Options:\n"
    "  --circuit DIR      directory written by gen-circuit (reads DIR/circuit.json)\n"
    "  --seed S           witness seed string (required)\n"
    "  -o, --out FILE     output .wtns\n"
    "  --input FILE       also write the inputs as JSON\n"
    "  --quiet            no summary\n"
    "  -h, --help         this help\n";

int cuzk_cmd_gen_witness(int argc, char **argv)
{
    const char *cmd = "gen-witness";
    cli_opt o[] = {{"circuit", 0, 1, NULL, 0}, {"seed", 0, 1, NULL, 0},
                  {"out", 'o', 1, NULL, 0},   {"quiet", 'q', 0, NULL, 0},
                  {"help", 'h', 0, NULL, 0},  {"input", 0, 1, NULL, 0}};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, o, 6, pos, 1, &npos);
    if (rc)
        return rc;
    if (o[4].seen) {
        fputs(GENW_HELP, stdout);
        return 0;
    }
    if (npos)
        return cli_usage(cmd, "unexpected argument");
    if (!o[0].seen || !o[1].seen || !o[2].seen)
        return cli_usage(cmd, "--circuit DIR, --seed S and -o FILE are required");
    size_t dl = strlen(o[0].value);
    char *meta = malloc(dl + 32);
    if (!meta)
        return SX_EXIT_INPUT;
    sprintf(meta, "%s/circuit.json", o[0].value);
    cuzk_errbuf eb = {{0}};
    cuzk_json_doc *doc = NULL;
    cuzk_err e = cuzk_json_parse_file(&doc, meta, 1 << 20, &eb);
    if (e) {
        free(meta);
        return sx_fail(cmd, e, &eb);
    }
    const cuzk_json *root = cuzk_json_root(doc);
    const cuzk_json *jc = cuzk_json_get(root, "curve"), *jn = cuzk_json_get(root, "constraints"),
                    *jp = cuzk_json_get(root, "profile"), *js = cuzk_json_get(root, "seed"),
                    *jg = cuzk_json_get(root, "segment");
    cuzk_gen_params p = {0};
    char *endp = NULL, *endg = NULL;
    unsigned long long n = jn && jn->type == CUZK_JSON_NUMBER ? strtoull(jn->str, &endp, 10) : 0;
    unsigned long long g = jg && jg->type == CUZK_JSON_NUMBER ? strtoull(jg->str, &endg, 10) : 0;
    if (!jc || jc->type != CUZK_JSON_STRING || cuzk_curve_from_name(jc->str, &p.curve) ||
        !jp || jp->type != CUZK_JSON_STRING || cuzk_gen_profile_from_name(jp->str, &p.profile) ||
        !js || js->type != CUZK_JSON_STRING || n == 0 || n > (1ull << 31) ||
        (jg && (jg->type != CUZK_JSON_NUMBER || *endg || g > UINT32_MAX))) {
        fprintf(stderr, "cuzk %s: error: %s: not a gen-circuit description (curve, constraints, "
                        "profile, seed, segment) (BAD_FORMAT)\n", cmd, meta);
        cuzk_json_free(doc);
        free(meta);
        return SX_EXIT_INPUT;
    }
    p.n_constraints = (uint32_t)n;
    p.seed = js->str;
    p.segment = (uint32_t)g;
    p.witness_seed = o[1].value;
    cuzk_gen_info info;
    e = cuzk_gen_circuit(&p, NULL, o[2].value, o[5].seen ? o[5].value : NULL, &info, &eb);
    if (!e && !o[3].seen)
        fprintf(stderr, "cuzk gen-witness: wrote %s (%u values) in %.2f s\n", o[2].value,
                info.n_wires, info.ms / 1e3);
    cuzk_json_free(doc);
    free(meta);
    return e ? sx_fail(cmd, e, &eb) : 0;
}
