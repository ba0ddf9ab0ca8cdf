/*
 * Test-key generation benchmark: cuzk_pk_generate (the circuit of cuzk gen-circuit and the key
 * cuzk setup makes for it, in memory) with a domain of 2^K, with the key's points on a GPU or on
 * the CPU, and the GPU's fixed-base multiplication alone (cuzk_gpu_fixed_base_mul of 2^K
 * random scalars in G1 and G2, at most 2^24, tables built beforehand), so the setup's CPU
 * part and its points can be told apart.
 *
 *   cuzk-bench-setup [--logs K,K..] [--curve bn128|bls12381] [--profile P] [--device N]
 *                    [--threads N] [--only keygen|fixed-base|witness] [--segment L]
 *                    [--check]
 *
 * --logs: sizes, 2^K - 2^(K-6) constraints each (domain 2^K; default 20). --device: -1 the CPU;
 * default 0 (the CPU without a GPU). --check (keygen rows with a GPU): the same key generated
 * on the CPU too, compared byte for byte (A, B1, C, H, B2), its time in the cpu_s column.
 *
 * --only witness: a seed's witness (cuzk_gen_witness, as the daemon makes one per partition) of
 * the same circuit, best of two, on --threads threads (0: all), the circuit cut into runs of
 * --segment L constraints (default 0: one run); its points column holds the constraints.
 *
 * Prints one row per size and kind: seconds for the key (its points per second), after a
 * comment line with the key's phases (cuzk_setup_info's ms_circuit, ms_coefs, ms_points; the
 * rest is the evaluation domain and the allocations), or for the 2^K products of a fixed-base row (the best of two; its table's build time in a comment).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "cuzk/gencircuit.h"
#include "cuzk/groth16.h"
#include "gpu/gpu.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* The key's point sets A, B1, C, H, B2 equal in two keys. */
static int same_points(cuzk_pk *a, cuzk_pk *b)
{
    void *pa[CUZK_PK_GPU_ARRAYS], *pb[CUZK_PK_GPU_ARRAYS];
    size_t la[CUZK_PK_GPU_ARRAYS], lb[CUZK_PK_GPU_ARRAYS];
    cuzk_pk_gpu_arrays(a, pa, la);
    cuzk_pk_gpu_arrays(b, pb, lb);
    for (int i = 0; i < 5; i++)
        if (la[i] != lb[i] || memcmp(pa[i], pb[i], la[i]) != 0)
            return 0;
    return 1;
}

static int keygen_row(cuzk_curve curve, cuzk_gen_profile prof, int lg, int device,
                      unsigned threads, int check)
{
    cuzk_gen_params p = {0};
    p.curve = curve;
    p.profile = prof;
    /* the domain 2^lg must hold the constraints and the public rows (as scripts/device's keys) */
    p.n_constraints = (uint32_t)(((uint64_t)1 << lg) - ((uint64_t)1 << (lg > 6 ? lg - 6 : 0)));
    p.seed = "bench-setup";
    p.nthreads = threads;
    p.device = device;
    cuzk_errbuf eb = {{0}};
    cuzk_setup_info si;
    cuzk_pk *pk = NULL;
    double t0 = now_s();
    cuzk_err e = cuzk_pk_generate(&pk, &p, &si, &eb);
    double s = now_s() - t0;
    if (e) {
        fprintf(stderr, "cuzk-bench-setup: 2^%d: %s\n", lg, eb.msg);
        return 1;
    }
    uint64_t points = 4 * (uint64_t)si.n_vars + si.domain_size;
    char cpu_s[32] = "-", same[8] = "-";
    if (check && si.device >= 0) {
        cuzk_pk *pc = NULL;
        p.device = -1;
        t0 = now_s();
        e = cuzk_pk_generate(&pc, &p, NULL, &eb);
        double sc = now_s() - t0;
        if (e) {
            fprintf(stderr, "cuzk-bench-setup: 2^%d on the CPU: %s\n", lg, eb.msg);
            cuzk_pk_free(pk);
            return 1;
        }
        snprintf(cpu_s, sizeof cpu_s, "%.2f", sc);
        snprintf(same, sizeof same, "%s", same_points(pk, pc) ? "yes" : "NO");
        cuzk_pk_free(pc);
    }
    char where[16] = "cpu";
    if (si.device >= 0)
        snprintf(where, sizeof where, "gpu%d", si.device);
    printf("# keygen 2^%d %s: circuit %.2f s, coefficients %.2f s, points %.2f s, rest %.2f s\n",
           lg, where, si.ms_circuit / 1e3, si.ms_coefs / 1e3, si.ms_points / 1e3,
           s - (si.ms_circuit + si.ms_coefs + si.ms_points) / 1e3);
    printf("keygen-%-9s 2^%-3d %-6s %10u %12llu %9.2f %12.0f %8s %5s\n", cuzk_curve_name(curve),
           lg, where, si.n_vars, (unsigned long long)points, s, (double)points / s, cpu_s,
           same);
    fflush(stdout);
    cuzk_pk_free(pk);
    return !strcmp(same, "NO");
}

static int witness_row(cuzk_curve curve, cuzk_gen_profile prof, int lg, unsigned threads,
                       uint32_t segment)
{
    cuzk_gen_params p = {0};
    p.curve = curve;
    p.profile = prof;
    p.n_constraints = (uint32_t)(((uint64_t)1 << lg) - ((uint64_t)1 << (lg > 6 ? lg - 6 : 0)));
    p.seed = "bench-setup";
    p.witness_seed = "7";
    p.nthreads = threads;
    p.segment = segment;
    uint64_t nw = cuzk_gen_n_wires(&p);
    uint8_t *w = malloc(nw * 32);
    if (!w) {
        fprintf(stderr, "cuzk-bench-setup: 2^%d: out of memory for the witness\n", lg);
        return 1;
    }
    double best = 1e30;
    cuzk_gen_info gi;
    for (int r = 0; r < 2; r++) {
        cuzk_errbuf eb = {{0}};
        double t0 = now_s();
        if (cuzk_gen_witness(w, nw, &p, &gi, &eb)) {
            fprintf(stderr, "cuzk-bench-setup: witness 2^%d: %s\n", lg, eb.msg);
            free(w);
            return 1;
        }
        double sec = now_s() - t0;
        if (sec < best)
            best = sec;
    }
    printf("# witness 2^%d: runs of %u constraints, %u threads (0: all), %.1f%% values 0/1\n", lg,
           segment, threads, 100.0 * (double)gi.n_binary / (double)gi.n_wires);
    printf("wit-%-11s 2^%-3d %-6s %10llu %12u %9.3f %12.0f %8s %5s\n", cuzk_curve_name(curve), lg,
           "cpu", (unsigned long long)nw, p.n_constraints, best, p.n_constraints / best, "-",
           "-");
    fflush(stdout);
    if (!segment) {
        free(w);
        return 0;
    }
    /* The same witness replayed from the circuit's structure, made once (the daemon's
     * generated circuits): its "same" column compares it with the one above. */
    cuzk_errbuf eb = {{0}};
    cuzk_gen_structure *st = NULL;
    double t0 = now_s();
    uint8_t *w2 = malloc(nw * 32);
    if (!w2 || cuzk_gen_structure_new(&st, &p, &eb)) {
        fprintf(stderr, "cuzk-bench-setup: witness 2^%d: structure: %s\n", lg,
                w2 ? eb.msg : "out of memory");
        free(w);
        free(w2);
        return 1;
    }
    const double make_s = now_s() - t0;
    p.structure = st;
    double best2 = 1e30;
    for (int r = 0; r < 2; r++) {
        t0 = now_s();
        if (cuzk_gen_witness(w2, nw, &p, NULL, &eb)) {
            fprintf(stderr, "cuzk-bench-setup: witness 2^%d from the structure: %s\n", lg, eb.msg);
            break;
        }
        double sec = now_s() - t0;
        if (sec < best2)
            best2 = sec;
    }
    const int same = memcmp(w, w2, nw * 32) == 0;
    printf("# structure 2^%d: %.1f MiB (%.1f bytes a constraint), made in %.3f s\n", lg,
           (double)cuzk_gen_structure_bytes(st) / (1 << 20),
           (double)cuzk_gen_structure_bytes(st) / p.n_constraints, make_s);
    printf("witst-%-9s 2^%-3d %-6s %10llu %12u %9.3f %12.0f %8s %5s\n", cuzk_curve_name(curve),
           lg, "cpu", (unsigned long long)nw, p.n_constraints, best2, p.n_constraints / best2,
           "-", same ? "yes" : "NO");
    fflush(stdout);
    cuzk_gen_structure_free(st);
    free(w);
    free(w2);
    return !same;
}

static int fixed_base_row(cuzk_gpu_ctx *ctx, cuzk_curve curve, int lg)
{
    const cuzk_gpu_curve gc = curve == CUZK_CURVE_BN254 ? CUZK_GPU_BN254 : CUZK_GPU_BLS12_381;
    if (lg > 24)
        lg = 24; /* points per second: 2^24 is enough, and 2^27 would pin 24 GiB */
    const size_t n = (size_t)1 << lg;
    uint64_t *sc = malloc(n * 32);
    uint8_t *out = NULL;
    int rc = 0;
    for (int g = 1; g <= 2 && !rc; g++) {
        size_t pb = cuzk_gpu_point_bytes(gc, (cuzk_gpu_group)g);
        cuzk_errbuf eb = {{0}};
        if (!out && cuzk_gpu_host_alloc(ctx, n * 2 * pb, (void **)&out, &eb) != CUZK_OK) {
            out = NULL;
            fprintf(stderr, "cuzk-bench-setup: %s (pinned output buffer)\n", eb.msg);
            rc = 1;
            break;
        }
        if (!sc) {
            rc = 1;
            break;
        }
        for (size_t i = 0; i < 4 * n; i++)
            sc[i] = rnd64();
        for (size_t i = 0; i < n; i++)
            sc[4 * i + 3] &= 0x0fffffffffffffffull; /* below r on both curves */
        cuzk_gpu_fixed_base *fb = NULL;
        double t0 = now_s();
        cuzk_err e = cuzk_gpu_fixed_base_new(ctx, gc, (cuzk_gpu_group)g, &fb, &eb);
        double tab = now_s() - t0;
        double best = 1e30;
        for (int r = 0; r < 2 && !e; r++) { /* the first grows the buffers */
            t0 = now_s();
            e = cuzk_gpu_fixed_base_mul(fb, sc, n, 0, out, &eb);
            double s = now_s() - t0;
            if (s < best)
                best = s;
        }
        cuzk_gpu_fixed_base_free(fb);
        if (e) {
            fprintf(stderr, "cuzk-bench-setup: fixed-base 2^%d: %s\n", lg, eb.msg);
            rc = 1;
            break;
        }
        printf("# fixed-base G%d table built in %.0f ms\n", g, tab * 1e3);
        printf("fb-g%d-%-9s 2^%-3d %-6s %10s %12zu %9.3f %12.0f %8s %5s\n", g,
               cuzk_curve_name(curve), lg, "gpu", "-", n, best, (double)n / best, "-", "-");
        fflush(stdout);
    }
    if (out)
        cuzk_gpu_host_free(ctx, out);
    free(sc);
    return rc;
}

int main(int argc, char **argv)
{
    int logs[16], nlogs = 0, device = 0, check = 0;
    unsigned threads = 0;
    uint32_t segment = 0;
    const char *only = NULL;
    cuzk_curve curve = CUZK_CURVE_BLS12_381;
    cuzk_gen_profile prof = CUZK_GEN_SPARSE_BITS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--logs") && v) {
            char buf[128], *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok_r(buf, ",", &save); t && nlogs < 16;
                 t = strtok_r(NULL, ",", &save)) {
                int k = atoi(t);
                if (k < 1 || k > 31) {
                    fprintf(stderr, "cuzk-bench-setup: --logs: %s is not in 1..31\n", t);
                    return 2;
                }
                logs[nlogs++] = k;
            }
            i++;
        } else if (!strcmp(a, "--curve") && v) {
            if (cuzk_curve_from_name(v, &curve)) {
                fprintf(stderr, "cuzk-bench-setup: --curve: bn128 or bls12381\n");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--profile") && v) {
            if (cuzk_gen_profile_from_name(v, &prof)) {
                fprintf(stderr, "cuzk-bench-setup: --profile: dense, sparse-bits or mixed\n");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--device") && v) {
            char *end;
            errno = 0;
            long d = strtol(v, &end, 10);
            if (errno || *end || d < -1 || d > 255) {
                fprintf(stderr, "cuzk-bench-setup: --device: -1 (the CPU) or a device\n");
                return 2;
            }
            device = (int)d;
            i++;
        } else if (!strcmp(a, "--threads") && v) {
            threads = (unsigned)atoi(v);
            i++;
        } else if (!strcmp(a, "--segment") && v) {
            segment = (uint32_t)strtoul(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--only") && v) {
            only = v;
            i++;
        } else if (!strcmp(a, "--check")) {
            check = 1;
        } else {
            fprintf(stderr,
                    "usage: cuzk-bench-setup [--logs K,K..] [--curve bn128|bls12381] "
                    "[--profile P] [--device N] [--threads N] "
                    "[--only keygen|fixed-base|witness] [--segment L] [--check]\n");
            return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
        }
    }
    if (!nlogs)
        logs[nlogs++] = 20;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    int ndev = cuzk_gpu_device_count();
    cuzk_gpu_ctx *ctx = NULL;
    cuzk_errbuf eb = {{0}};
    if (ndev > 0 && device >= 0 && cuzk_gpu_open(&ctx, device, &eb) != CUZK_OK) {
        fprintf(stderr, "cuzk-bench-setup: GPU %d: %s\n", device, eb.msg);
        return 1;
    }
    printf("# cuzk-bench-setup: CPU %s, GPU %s, profile %s\n", cpu,
           ctx ? cuzk_gpu_name(ctx) : "none", cuzk_gen_profile_name(prof));
    printf("# %-15s %-5s %-6s %10s %12s %9s %12s %8s %5s\n", "row", "size", "on", "wires",
           "points", "seconds", "points/s", "cpu_s", "same");
    int rc = 0;
    for (int i = 0; i < nlogs && !rc; i++) {
        if (ctx && (!only || !strcmp(only, "fixed-base")))
            rc = fixed_base_row(ctx, curve, logs[i]);
        if (!rc && (!only || !strcmp(only, "keygen")))
            rc = keygen_row(curve, prof, logs[i], device, threads, check);
        if (!rc && only && !strcmp(only, "witness"))
            rc = witness_row(curve, prof, logs[i], threads, segment);
    }
    cuzk_gpu_close(ctx);
    return rc;
}
