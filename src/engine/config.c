/* cuzk-daemon configuration file (see config.h for the keys and defaults). */
#define _GNU_SOURCE
#include "engine/config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/toml.h"

static char *dup_or_die(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort();
    return d;
}

void cuzk_daemon_config_defaults(cuzk_daemon_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = dup_or_die("127.0.0.1:9820");
    c->max_message_size = 256ull << 20;
    c->shutdown_grace_ms = 30000;
    c->metrics_listen = dup_or_die("127.0.0.1:9821");
    c->gpu_workers_per_device = 0; /* automatic: 2, or 1 for a key two workers leave no room */
    c->backend = CUZK_BACKEND_AUTO;
    c->g2_on_gpu = 2;
    c->g2_gpu_min_scalars = 262144;
    c->g2_device = -1;
    c->gpu_tables = 1;
    c->gpu_ba_fit = 1;
    c->gpu_stream_chunk = CUZK_STREAM_CHUNK_DEFAULT;
    c->gpu_stream_batch = CUZK_STREAM_BATCH_DEFAULT;
    c->key_cache = 1;
    c->key_cache_dir = dup_or_die("");
    c->witness_dir = dup_or_die("");
    c->socket_mode = 0600;
    c->tokens_file = dup_or_die("");
    c->tls_cert = dup_or_die("");
    c->tls_key = dup_or_die("");
    c->tls_client_ca = dup_or_die("");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c->partition_workers = ncpu > 1 ? 2 : 1;
    c->max_jobs_in_flight = 16;
    c->retain_jobs = 1024;
    c->max_partitions = 1024;
    c->handler_threads = 64;
    c->max_pending_calls = 4096;
    c->max_calls_per_token = 256;
    c->max_jobs_per_token = 64;
    c->pinned_budget = CUZK_BUDGET_AUTO;
    c->gpu_budget = CUZK_BUDGET_AUTO;
    c->verify = 1;
    c->log_level = CUZK_LOG_LEVEL_INFO;
    c->log_format = CUZK_LOG_FORMAT_TEXT;
    c->cluster_database = dup_or_die("");
    c->cluster_node_id = dup_or_die("");
    c->cluster_witness_dir = dup_or_die("");
    c->cluster_lease_ms = 30000;
    c->cluster_poll_ms = 1000;
    c->cluster_retain_ms = 24ull * 3600 * 1000;
    c->cluster_max_attempts = 3;
    c->cluster_notify = 1;
}

void cuzk_daemon_config_free(cuzk_daemon_config *c)
{
    free(c->listen);
    free(c->metrics_listen);
    free(c->key_cache_dir);
    free(c->witness_dir);
    free(c->tokens_file);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->tls_client_ca);
    free(c->gpu_devices);
    free(c->cluster_database);
    free(c->cluster_node_id);
    free(c->cluster_witness_dir);
    for (size_t i = 0; i < c->n_circuits; i++) {
        free((char *)c->circuits[i].id);
        free((char *)c->circuits[i].zkey);
        free((char *)c->circuits[i].wasm);
        free((char *)c->circuits[i].wasm_cache);
        free((char *)c->circuits[i].witness_scratch_dir);
        if (c->circuits[i].witness_cmd) {
            for (size_t k = 0; c->circuits[i].witness_cmd[k]; k++)
                free((char *)c->circuits[i].witness_cmd[k]);
            free((char **)c->circuits[i].witness_cmd);
        }
        if (c->circuits[i].generate) {
            free((char *)c->circuits[i].generate->seed);
            free((cuzk_gen_params *)c->circuits[i].generate);
        }
    }
    free(c->circuits);
    memset(c, 0, sizeof *c);
}

static cuzk_err get_uint(const cuzk_toml_value *root, const char *path, int64_t lo, int64_t hi,
                         unsigned *out, cuzk_errbuf *eb)
{
    int64_t v = *out;
    cuzk_err e = cuzk_toml_get_int_range(root, path, lo, hi, &v, eb);
    if (!e)
        *out = (unsigned)v;
    return e;
}

/* A tier budget: "auto" (CUZK_BUDGET_AUTO) or a size. */
static cuzk_err get_tier_budget(const cuzk_toml_value *root, const char *path, uint64_t *out,
                                cuzk_errbuf *eb)
{
    const cuzk_toml_value *v = cuzk_toml_get(root, path);
    const char *s;
    if (v && cuzk_toml_type_of(v) == CUZK_TOML_STRING && cuzk_toml_as_string(v, &s, eb) == 0 &&
        strcmp(s, "auto") == 0) {
        *out = CUZK_BUDGET_AUTO;
        return CUZK_OK;
    }
    return cuzk_toml_get_size(root, path, out, eb); /* names file, line and key */
}

static cuzk_err get_str(const cuzk_toml_value *root, const char *path, char **out,
                        cuzk_errbuf *eb)
{
    const char *s = NULL;
    cuzk_err e = cuzk_toml_get_string(root, path, &s, eb);
    if (!e && s) {
        free(*out);
        *out = dup_or_die(s);
    }
    return e;
}

/* Makes *path (malloc'd) relative to the config file's folder unless it is absolute or "". */
static cuzk_err resolve_path(char **path, const char *base_dir, cuzk_errbuf *eb)
{
    char *p;
    if (!(*path)[0] || (*path)[0] == '/' || !base_dir || !base_dir[0])
        return CUZK_OK;
    if (asprintf(&p, "%s/%s", base_dir, *path) < 0)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    free(*path);
    *path = p;
    return CUZK_OK;
}

/* A count of constraints (generate_constraints, generate_segment) in lo .. hi: an integer, or
 * a string cuzk_parse_count reads ("2^27"). */
static cuzk_err get_count(const cuzk_toml_value *v, uint64_t lo, uint64_t hi, const char *range,
                          uint32_t *out, cuzk_errbuf *eb)
{
    int64_t n = -1;
    cuzk_err e;
    if (cuzk_toml_type_of(v) == CUZK_TOML_STRING) {
        const char *s;
        uint64_t u;
        cuzk_errbuf ub = {{0}};
        if ((e = cuzk_toml_as_string(v, &s, eb)))
            return e;
        if (cuzk_parse_count(s, &u, &ub))
            return cuzk_toml_errf(v, eb, "'%s' is not a number of constraints (1048576 or "
                                  "\"2^20\")", s);
        if (u < lo || u > hi)
            return cuzk_toml_errf(v, eb, "'%s' constraints: want %s", s, range);
        n = (int64_t)u;
    } else if ((e = cuzk_toml_as_int(v, &n, eb))) {
        return e;
    }
    if (n < (int64_t)lo || (uint64_t)n > hi)
        return cuzk_toml_errf(v, eb, "%lld constraints: want %s", (long long)n, range);
    *out = (uint32_t)n;
    return CUZK_OK;
}

/* A [[circuit]] entry's generated key (generate_* keys), or *out NULL when it has none. */
static cuzk_err get_generate(const cuzk_toml_value *t, cuzk_gen_params **out, cuzk_errbuf *eb)
{
    static const char *keys[] = {"generate_curve", "generate_profile", "generate_constraints",
                                 "generate_seed", "generate_segment"};
    const cuzk_toml_value *any = NULL;
    for (int k = 0; k < 5 && !any; k++)
        any = cuzk_toml_get(t, keys[k]);
    *out = NULL;
    if (!any)
        return CUZK_OK;
    if (!cuzk_toml_get(t, "generate_constraints"))
        return cuzk_toml_errf(t, eb, "'%s' without 'generate_constraints' (the generated key's "
                              "number of constraints)", cuzk_toml_path(any));
    cuzk_gen_params p = {0};
    p.curve = CUZK_CURVE_BN254;
    p.profile = CUZK_GEN_DENSE;
    const char *curve = NULL, *prof = NULL, *seed = "1";
    char num[24];
    cuzk_err e;
    if ((e = cuzk_toml_get_string(t, "generate_curve", &curve, eb)) ||
        (e = cuzk_toml_get_string(t, "generate_profile", &prof, eb)) ||
        (e = get_count(cuzk_toml_get(t, "generate_constraints"), 1, 1ull << 31, "1 to 2^31",
                       &p.n_constraints, eb)))
        return e;
    if (curve && cuzk_curve_from_name(curve, &p.curve))
        return cuzk_toml_errf(cuzk_toml_get(t, "generate_curve"), eb,
                              "'%s' is not one of bn128, bls12381", curve);
    if (prof && cuzk_gen_profile_from_name(prof, &p.profile))
        return cuzk_toml_errf(cuzk_toml_get(t, "generate_profile"), eb,
                              "'%s' is not one of dense, sparse-bits, mixed", prof);
    const cuzk_toml_value *sv = cuzk_toml_get(t, "generate_seed");
    if (sv && cuzk_toml_type_of(sv) == CUZK_TOML_INT) {
        int64_t x;
        if ((e = cuzk_toml_as_int(sv, &x, eb)))
            return e;
        snprintf(num, sizeof num, "%lld", (long long)x);
        seed = num;
    } else if (sv && (e = cuzk_toml_as_string(sv, &seed, eb))) {
        return e;
    }
    if (!seed[0])
        return cuzk_toml_errf(sv, eb, "the seed is empty");
    const cuzk_toml_value *gv = cuzk_toml_get(t, "generate_segment");
    if (gv && (e = get_count(gv, 0, UINT32_MAX, "0 (one run) to 2^32-1", &p.segment, eb)))
        return e;
    *out = malloc(sizeof **out);
    if (!*out)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    **out = p;
    (*out)->seed = dup_or_die(seed);
    return CUZK_OK;
}

int cuzk_daemon_listen_is_local(const char *addr)
{
    if (strncmp(addr, "unix:", 5) == 0)
        return 1;
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : strlen(addr);
    static const char *const local[] = {"localhost", "[::1]", "ip6-localhost"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (hl == strlen(local[i]) && strncmp(addr, local[i], hl) == 0)
            return 1;
    /* 127.0.0.0/8: four decimal parts, the first 127 */
    unsigned a, b, c, d;
    char tail;
    char host[64];
    if (hl >= sizeof host)
        return 0;
    memcpy(host, addr, hl);
    host[hl] = 0;
    return sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
           c < 256 && d < 256;
}

cuzk_err cuzk_daemon_check_exposure(const cuzk_daemon_config *c, cuzk_errbuf *eb)
{
    /* Server-only TLS encrypts but does not say who calls: it does not count. */
    int authenticated = c->tokens_file[0] || c->tls_client_ca[0];
    if (!c->insecure && !authenticated && !cuzk_daemon_listen_is_local(c->listen))
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.listen '%s' is reachable from the network "
                         "and calls are not authenticated: listen on 127.0.0.1 or unix:PATH, "
                         "set [daemon.auth] tokens_file or [daemon.tls] client_ca, or set "
                         "daemon.insecure = true to serve anyone who can connect", c->listen);
    if (c->metrics_listen[0] && !c->metrics_insecure && !c->metrics_require_token &&
        !cuzk_daemon_listen_is_local(c->metrics_listen))
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "metrics.listen '%s' is reachable from the "
                         "network and /metrics asks for no token: listen on 127.0.0.1, set "
                         "metrics.require_token = true (with [daemon.auth] tokens_file), or "
                         "metrics.insecure = true", c->metrics_listen);
    return CUZK_OK;
}

cuzk_err cuzk_daemon_check_listen(const char *what, const char *addr, int allow_unix,
                                   cuzk_errbuf *eb)
{
    if (allow_unix && strncmp(addr, "unix:", 5) == 0)
        return addr[5] ? CUZK_OK
                       : cuzk_errf(eb, CUZK_BAD_CONFIG, "%s 'unix:' names no socket path", what);
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || (addr[0] == '[' && colon[-1] != ']'))
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s '%s' has no port (HOST:PORT%s)", what, addr,
                         allow_unix ? " or unix:PATH" : "");
    const char *p = colon + 1;
    unsigned long port = 0;
    int ok = *p != 0 && strlen(p) <= 5;
    for (const char *d = p; ok && *d; d++) {
        ok = *d >= '0' && *d <= '9';
        port = port * 10 + (unsigned long)(*d - '0');
    }
    if (!ok || port > 65535)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s '%s': port '%s' is not 1 to 65535 (0: any "
                         "free port)", what, addr, p);
    return CUZK_OK;
}

static cuzk_err get_ms(const cuzk_toml_value *root, const char *path, uint64_t lo_ms,
                       uint64_t *ms, cuzk_errbuf *eb)
{
    uint64_t ns = *ms * 1000000ull;
    cuzk_err e = cuzk_toml_get_duration_ns(root, path, &ns, eb);
    if (e)
        return e;
    if (ns < lo_ms * 1000000ull)
        return cuzk_toml_errf(cuzk_toml_get(root, path), eb, "must be at least %" PRIu64 "ms",
                              lo_ms);
    *ms = ns / 1000000ull;
    return CUZK_OK;
}

/* [cluster]: present only when the daemon joins a cluster (docs/CLUSTER.md). */
static cuzk_err apply_cluster(cuzk_daemon_config *c, const cuzk_toml_value *root,
                              const char *base_dir, cuzk_errbuf *eb)
{
    const cuzk_toml_value *t;
    cuzk_err e = cuzk_toml_get_table(root, "cluster", &t, eb);
    if (e || !t)
        return e;
    const char *s = NULL;
    bool notify = c->cluster_notify;
    if ((e = get_str(root, "cluster.database", &c->cluster_database, eb)) ||
        (e = get_str(root, "cluster.node_id", &c->cluster_node_id, eb)) ||
        (e = get_str(root, "cluster.witness_dir", &c->cluster_witness_dir, eb)) ||
        (e = resolve_path(&c->cluster_witness_dir, base_dir, eb)) ||
        (e = get_ms(root, "cluster.lease", 500, &c->cluster_lease_ms, eb)) ||
        (e = get_ms(root, "cluster.poll_interval", 10, &c->cluster_poll_ms, eb)) ||
        (e = get_ms(root, "cluster.retain", 1000, &c->cluster_retain_ms, eb)) ||
        (e = get_uint(root, "cluster.slots", 0, 4096, &c->cluster_slots, eb)) ||
        (e = get_uint(root, "cluster.max_attempts", 1, 1000, &c->cluster_max_attempts, eb)) ||
        (e = cuzk_toml_get_bool(root, "cluster.notify", &notify, eb)) ||
        (e = cuzk_toml_get_string(root, "cluster.witness_storage", &s, eb)))
        return e;
    c->cluster_notify = notify;
    if (!c->cluster_database[0])
        return cuzk_toml_errf(t, eb, "missing required key 'database' (a PostgreSQL connection "
                              "string, e.g. \"postgresql://cuzk@db-host/cuzk\")");
    if (s && strcmp(s, "database") != 0 && strcmp(s, "shared_dir") != 0)
        return cuzk_toml_errf(cuzk_toml_get(root, "cluster.witness_storage"), eb,
                              "'%s' is not one of database, shared_dir", s);
    c->cluster_witness_shared = s && strcmp(s, "shared_dir") == 0;
    if (c->cluster_witness_shared && !c->cluster_witness_dir[0])
        return cuzk_toml_errf(t, eb, "witness_storage = \"shared_dir\" needs witness_dir (a "
                              "folder every node mounts at the same path)");
    return CUZK_OK;
}

/* A [[circuit]] entry's witness source: wasm (+ wasm_cache), or witness_cmd (a string split
 * on spaces, or an array of strings) with witness_timeout and witness_scratch_dir. Paths
 * relative to the config file's folder, the command's program too when it names a path. */
static cuzk_err get_witness_source(const cuzk_toml_value *t, cuzk_engine_circuit *ec,
                                   const char *base_dir, cuzk_errbuf *eb)
{
    const char *s = NULL;
    char *p = NULL;
    cuzk_err e;
    static const struct {
        const char *key;
        size_t off;
    } paths[] = {{"wasm", offsetof(cuzk_engine_circuit, wasm)},
                 {"wasm_cache", offsetof(cuzk_engine_circuit, wasm_cache)},
                 {"witness_scratch_dir", offsetof(cuzk_engine_circuit, witness_scratch_dir)}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        s = NULL;
        if ((e = cuzk_toml_get_string(t, paths[i].key, &s, eb)))
            return e;
        if (!s)
            continue;
        if (!s[0])
            return cuzk_toml_errf(cuzk_toml_get(t, paths[i].key), eb, "is empty");
        p = dup_or_die(s);
        if ((e = resolve_path(&p, base_dir, eb))) {
            free(p);
            return e;
        }
        *(const char **)((char *)ec + paths[i].off) = p;
    }
    const cuzk_toml_value *cv = cuzk_toml_get(t, "witness_cmd");
    if (cv) {
        if (ec->wasm)
            return cuzk_toml_errf(cv, eb, "give 'wasm' (circom's witness program) or "
                                  "'witness_cmd', not both");
        size_t n = 0, cap = 8;
        char **argv = calloc(cap + 1, sizeof *argv);
        if (!argv)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        ec->witness_cmd = (const char *const *)argv;
        if (cuzk_toml_type_of(cv) == CUZK_TOML_STRING) {
            if ((e = cuzk_toml_as_string(cv, &s, eb)))
                return e;
            for (const char *q = s; *q;) {
                while (*q == ' ')
                    q++;
                size_t len = strcspn(q, " ");
                if (!len)
                    break;
                if (n == cap) {
                    char **na = realloc(argv, (2 * cap + 1) * sizeof *argv);
                    if (!na)
                        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
                    argv = na;
                    cap *= 2;
                    ec->witness_cmd = (const char *const *)argv;
                }
                argv[n] = strndup(q, len);
                if (!argv[n])
                    abort();
                argv[++n] = NULL;
                q += len;
            }
        } else {
            const cuzk_toml_value *arr;
            if ((e = cuzk_toml_get_array(t, "witness_cmd", CUZK_TOML_STRING, &arr, eb)))
                return e;
            size_t len = cuzk_toml_len(arr);
            if (len > cap) {
                char **na = realloc(argv, (len + 1) * sizeof *argv);
                if (!na)
                    return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
                argv = na;
                ec->witness_cmd = (const char *const *)argv;
            }
            for (size_t i = 0; i < len; i++) {
                if ((e = cuzk_toml_as_string(cuzk_toml_at(arr, i), &s, eb)))
                    return e;
                argv[n] = dup_or_die(s);
                argv[++n] = NULL;
            }
        }
        if (n == 0)
            return cuzk_toml_errf(cv, eb, "names no command");
        if (strchr(argv[0], '/') && (e = resolve_path(&argv[0], base_dir, eb)))
            return e;
    } else {
        static const char *const cmd_keys[] = {"witness_timeout", "witness_scratch_dir"};
        for (size_t i = 0; i < 2; i++)
            if (cuzk_toml_get(t, cmd_keys[i]))
                return cuzk_toml_errf(cuzk_toml_get(t, cmd_keys[i]), eb,
                                      "is for a 'witness_cmd', which this circuit has not");
    }
    if (ec->wasm_cache && !ec->wasm)
        return cuzk_toml_errf(cuzk_toml_get(t, "wasm_cache"), eb, "without 'wasm'");
    uint64_t ns = 60ull * 1000000000ull;
    if ((e = cuzk_toml_get_duration_ns(t, "witness_timeout", &ns, eb)))
        return e;
    if (ns < 1000000ull)
        return cuzk_toml_errf(cuzk_toml_get(t, "witness_timeout"), eb, "must be at least 1ms");
    ec->witness_timeout_ms = ns / 1000000ull;
    return CUZK_OK;
}

static cuzk_err apply(cuzk_daemon_config *c, cuzk_toml *doc, const char *base_dir,
                      cuzk_errbuf *eb)
{
    const cuzk_toml_value *root = cuzk_toml_root(doc), *v;
    cuzk_err e;
    const char *s;
    if ((e = get_str(root, "daemon.listen", &c->listen, eb)) ||
        (e = cuzk_toml_get_size(root, "daemon.max_message_size", &c->max_message_size, eb)) ||
        (e = get_uint(root, "daemon.retain_jobs", 1, 1 << 20, &c->retain_jobs, eb)) ||
        (e = get_uint(root, "daemon.max_partitions", 1, 1 << 20, &c->max_partitions, eb)) ||
        (e = get_uint(root, "daemon.handler_threads", 1, 4096, &c->handler_threads, eb)) ||
        (e = get_uint(root, "daemon.max_pending_calls", 1, 1 << 20, &c->max_pending_calls,
                      eb)) ||
        (e = get_str(root, "metrics.listen", &c->metrics_listen, eb)) ||
        (e = get_uint(root, "gpus.workers_per_device", 0, 64, &c->gpu_workers_per_device, eb)) ||
        (e = get_uint(root, "gpus.host_threads", 0, 4096, &c->host_threads, eb)) ||
        (e = get_uint(root, "gpus.stream_batch", 1, CUZK_STREAM_BATCH_MAX, &c->gpu_stream_batch,
                      eb)) ||
        (e = get_uint(root, "gpus.emulated_devices", 0, CUZK_MAX_DEVICES, &c->emulated_devices,
                      eb)) ||
        (e = get_uint(root, "synthesis.partition_workers", 0, 4096, &c->partition_workers, eb)) ||
        (e = get_uint(root, "scheduler.max_jobs_in_flight", 0, 1 << 20, &c->max_jobs_in_flight,
                      eb)) ||
        (e = cuzk_toml_get_size(root, "memory.working_budget", &c->working_budget, eb)) ||
        (e = cuzk_toml_get_size(root, "memory.key_budget", &c->key_budget, eb)) ||
        (e = get_tier_budget(root, "memory.pinned_budget", &c->pinned_budget, eb)) ||
        (e = get_tier_budget(root, "memory.gpu_budget", &c->gpu_budget, eb)) ||
        (e = cuzk_toml_get_size(root, "gpus.stream_chunk", &c->gpu_stream_chunk, eb)) ||
        (e = cuzk_toml_get_size(root, "memory.witness_budget", &c->witness_budget, eb)))
        return e;
    cuzk_errbuf lb = {{0}};
    if ((v = cuzk_toml_get(root, "daemon.listen")) &&
        cuzk_daemon_check_listen("address", c->listen, 1, &lb))
        return cuzk_toml_errf(v, eb, "%s", lb.msg);
    if ((v = cuzk_toml_get(root, "metrics.listen")) && c->metrics_listen[0] &&
        cuzk_daemon_check_listen("address", c->metrics_listen, 0, &lb))
        return cuzk_toml_errf(v, eb, "%s", lb.msg);
    if (c->gpu_stream_chunk < 1024) {
        v = cuzk_toml_get(root, "gpus.stream_chunk");
        return cuzk_toml_errf(v, eb, "must be at least 1KiB");
    }
    if (c->max_message_size < 1024 || c->max_message_size > 0x7fffffffull) {
        v = cuzk_toml_get(root, "daemon.max_message_size");
        return cuzk_toml_errf(v, eb, "must be between 1KiB and 2GiB-1 (gRPC's limit)");
    }
    if (!c->partition_workers) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        c->partition_workers = ncpu > 1 ? 2 : 1;
    }
    uint64_t grace = c->shutdown_grace_ms * 1000000ull;
    if ((e = cuzk_toml_get_duration_ns(root, "daemon.shutdown_grace", &grace, eb)))
        return e;
    c->shutdown_grace_ms = grace / 1000000ull;
    bool insecure = c->insecure;
    if ((e = cuzk_toml_get_bool(root, "daemon.insecure", &insecure, eb)))
        return e;
    c->insecure = insecure;
    bool minsecure = c->metrics_insecure, mtoken = c->metrics_require_token;
    if ((e = cuzk_toml_get_bool(root, "metrics.insecure", &minsecure, eb)) ||
        (e = cuzk_toml_get_bool(root, "metrics.require_token", &mtoken, eb)))
        return e;
    c->metrics_insecure = minsecure;
    c->metrics_require_token = mtoken;
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "daemon.socket_mode", &s, eb)))
        return e;
    if (s) {
        char *end = NULL;
        unsigned long m = strtoul(s, &end, 8);
        if (!s[0] || *end || m > 0777 || s[0] == '-' || s[0] == '+' || s[0] == ' ')
            return cuzk_toml_errf(cuzk_toml_get(root, "daemon.socket_mode"), eb,
                                  "'%s' is not an octal mode from \"0000\" to \"0777\" (e.g. "
                                  "\"0660\")", s);
        c->socket_mode = (unsigned)m;
    }
    if ((e = get_str(root, "daemon.auth.tokens_file", &c->tokens_file, eb)) ||
        (e = get_uint(root, "daemon.auth.max_calls_per_token", 1, 1 << 20,
                      &c->max_calls_per_token, eb)) ||
        (e = get_uint(root, "daemon.auth.max_jobs_per_token", 1, 1 << 20,
                      &c->max_jobs_per_token, eb)) ||
        (e = cuzk_toml_get_size(root, "daemon.auth.max_witness_bytes_per_token",
                                &c->max_witness_bytes_per_token, eb)) ||
        (e = resolve_path(&c->tokens_file, base_dir, eb)) ||
        (e = get_str(root, "daemon.tls.cert", &c->tls_cert, eb)) ||
        (e = resolve_path(&c->tls_cert, base_dir, eb)) ||
        (e = get_str(root, "daemon.tls.key", &c->tls_key, eb)) ||
        (e = resolve_path(&c->tls_key, base_dir, eb)) ||
        (e = get_str(root, "daemon.tls.client_ca", &c->tls_client_ca, eb)) ||
        (e = resolve_path(&c->tls_client_ca, base_dir, eb)))
        return e;
    if (!c->tls_cert[0] != !c->tls_key[0])
        return cuzk_toml_errf(cuzk_toml_get(root, c->tls_cert[0] ? "daemon.tls.cert"
                                                                   : "daemon.tls.key"),
                              eb, "[daemon.tls] needs both cert and key");
    if (c->tls_client_ca[0] && !c->tls_cert[0])
        return cuzk_toml_errf(cuzk_toml_get(root, "daemon.tls.client_ca"), eb,
                              "client_ca (mutual TLS) needs cert and key in [daemon.tls]");
    if (c->metrics_require_token && !c->tokens_file[0])
        return cuzk_toml_errf(cuzk_toml_get(root, "metrics.require_token"), eb,
                              "needs [daemon.auth] tokens_file (a token of role read or "
                              "above opens /metrics)");
    bool verify = c->verify;
    if ((e = cuzk_toml_get_bool(root, "prover.verify", &verify, eb)))
        return e;
    c->verify = verify;
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "logging.level", &s, eb)))
        return e;
    if (s && cuzk_log_parse_level(s, &c->log_level, eb))
        return cuzk_toml_errf(cuzk_toml_get(root, "logging.level"), eb,
                              "'%s' is not one of error, warn, info, debug, trace, off", s);
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "logging.format", &s, eb)))
        return e;
    if (s && cuzk_log_parse_format(s, &c->log_format, eb))
        return cuzk_toml_errf(cuzk_toml_get(root, "logging.format"), eb,
                              "'%s' is not one of text, json", s);
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "gpus.backend", &s, eb)))
        return e;
    if (s) {
        if (strcmp(s, "auto") == 0)
            c->backend = CUZK_BACKEND_AUTO;
        else if (strcmp(s, "cpu") == 0)
            c->backend = CUZK_BACKEND_CPU;
        else if (strcmp(s, "gpu") == 0)
            c->backend = CUZK_BACKEND_GPU;
        else
            return cuzk_toml_errf(cuzk_toml_get(root, "gpus.backend"), eb,
                                  "'%s' is not one of auto, cpu, gpu", s);
    }
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "gpus.g2", &s, eb)))
        return e;
    if (s) {
        if (strcmp(s, "cpu") == 0 || strcmp(s, "gpu") == 0 || strcmp(s, "auto") == 0)
            c->g2_on_gpu = strcmp(s, "gpu") == 0 ? 1 : strcmp(s, "auto") == 0 ? 2 : 0;
        else
            return cuzk_toml_errf(cuzk_toml_get(root, "gpus.g2"), eb,
                                  "'%s' is not one of auto, cpu, gpu", s);
    }
    s = NULL;
    if ((e = cuzk_toml_get_string(root, "gpus.synth", &s, eb)))
        return e;
    if (s) {
        if (strcmp(s, "cpu") == 0 || strcmp(s, "gpu") == 0)
            c->synth_on_cpu = strcmp(s, "cpu") == 0;
        else
            return cuzk_toml_errf(cuzk_toml_get(root, "gpus.synth"), eb,
                                  "'%s' is not one of gpu, cpu", s);
    }
    int64_t g2min = (int64_t)c->g2_gpu_min_scalars;
    if ((e = cuzk_toml_get_int_range(root, "gpus.g2_gpu_min_scalars", 1, INT64_MAX, &g2min, eb)))
        return e;
    c->g2_gpu_min_scalars = (uint64_t)g2min;
    int64_t g2dev = c->g2_device;
    if ((e = cuzk_toml_get_int_range(root, "gpus.g2_device", -1, 1023, &g2dev, eb)))
        return e;
    c->g2_device = (int)g2dev;
    if ((e = cuzk_toml_get_array(root, "gpus.emulated_faulty_devices", CUZK_TOML_INT, &v, eb)))
        return e;
    for (size_t i = 0; v && i < cuzk_toml_len(v); i++) {
        int64_t d;
        if ((e = cuzk_toml_as_int(cuzk_toml_at(v, i), &d, eb)))
            return e;
        if (d < 0 || d >= CUZK_MAX_DEVICES)
            return cuzk_toml_errf(cuzk_toml_at(v, i), eb, "device index %lld is out of range "
                                  "(0..%d)", (long long)d, CUZK_MAX_DEVICES - 1);
        c->emulated_faulty_devices |= 1u << d;
    }
    v = NULL;
    if ((e = get_str(root, "daemon.witness_dir", &c->witness_dir, eb)) ||
        (e = resolve_path(&c->witness_dir, base_dir, eb)) ||
        (e = get_str(root, "keys.cache_dir", &c->key_cache_dir, eb)) ||
        (e = resolve_path(&c->key_cache_dir, base_dir, eb)))
        return e;
    struct stat st;
    if (c->witness_dir[0] && stat(c->witness_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cuzk_toml_errf(cuzk_toml_get(root, "daemon.witness_dir"), eb,
                              "%s is not a directory", c->witness_dir);
    bool kc = c->key_cache;
    if ((e = cuzk_toml_get_bool(root, "keys.cache", &kc, eb)))
        return e;
    c->key_cache = kc;
    bool mt = c->gpu_tables;
    if ((e = cuzk_toml_get_bool(root, "gpus.msm_tables", &mt, eb)))
        return e;
    c->gpu_tables = mt;
    bool bf = c->gpu_ba_fit;
    if ((e = cuzk_toml_get_bool(root, "gpus.ba_fit", &bf, eb)))
        return e;
    c->gpu_ba_fit = bf;
    if ((e = cuzk_toml_get_array(root, "gpus.devices", CUZK_TOML_INT, &v, eb)))
        return e;
    if (v) {
        size_t n = cuzk_toml_len(v);
        c->gpu_devices = calloc(n ? n : 1, sizeof(int));
        if (!c->gpu_devices)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
        for (size_t i = 0; i < n; i++) {
            int64_t d;
            if ((e = cuzk_toml_as_int(cuzk_toml_at(v, i), &d, eb)))
                return e;
            if (d < 0 || d > 1023)
                return cuzk_toml_errf(cuzk_toml_at(v, i), eb, "device %lld is out of range",
                                      (long long)d);
            c->gpu_devices[c->n_gpu_devices++] = (int)d;
        }
    }
    const cuzk_toml_value *circs;
    if ((e = cuzk_toml_get_tables(root, "circuit", &circs, eb)))
        return e;
    size_t n = circs ? cuzk_toml_len(circs) : 0;
    if (n) {
        c->circuits = calloc(n, sizeof *c->circuits);
        if (!c->circuits)
            return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const cuzk_toml_value *t = cuzk_toml_at(circs, i);
        const char *id = NULL, *zkey = NULL, *prio = NULL;
        bool preload = false;
        if ((e = cuzk_toml_get_string(t, "id", &id, eb)) ||
            (e = cuzk_toml_get_string(t, "zkey", &zkey, eb)) ||
            (e = cuzk_toml_get_bool(t, "preload", &preload, eb)) ||
            (e = cuzk_toml_get_string(t, "priority", &prio, eb)))
            return e;
        if (!id || !id[0])
            return cuzk_toml_errf(t, eb, "missing required key 'id'");
        for (size_t k = 0; k < c->n_circuits; k++)
            if (strcmp(c->circuits[k].id, id) == 0)
                return cuzk_toml_errf(cuzk_toml_get(t, "id"), eb,
                                      "circuit id '%s' is used twice", id);
        cuzk_priority p = CUZK_PRIO_NORMAL;
        if (prio && cuzk_priority_parse(prio, &p, eb))
            return cuzk_toml_errf(cuzk_toml_get(t, "priority"), eb,
                                  "'%s' is not one of low, normal, high, critical", prio);
        cuzk_gen_params *gen = NULL;
        if ((e = get_generate(t, &gen, eb)))
            return e;
        if (gen && zkey) {
            free((char *)gen->seed);
            free(gen);
            return cuzk_toml_errf(cuzk_toml_get(t, "zkey"), eb, "circuit '%s' has both 'zkey' "
                                  "and generate_* keys: give one (a zkey file, or the "
                                  "parameters of a generated test key)", id);
        }
        if (!gen && (!zkey || !zkey[0]))
            return cuzk_toml_errf(t, eb, "missing required key 'zkey' (or "
                                  "'generate_constraints' for a generated test key)");
        char *path = gen ? NULL : dup_or_die(zkey);
        if (path && (e = resolve_path(&path, base_dir, eb))) {
            free(path);
            return e;
        }
        cuzk_engine_circuit *ec = &c->circuits[c->n_circuits++];
        ec->id = dup_or_die(id);
        ec->zkey = path;
        ec->generate = gen;
        ec->preload = preload;
        ec->priority = p;
        if ((e = get_witness_source(t, ec, base_dir, eb)))
            return e;
    }
    if ((e = apply_cluster(c, root, base_dir, eb)))
        return e;
    return cuzk_toml_check_unused(doc, eb);
}

cuzk_err cuzk_daemon_config_parse(cuzk_daemon_config *c, const char *name, const char *text,
                                  size_t len, const char *base_dir, cuzk_errbuf *eb)
{
    cuzk_daemon_config_defaults(c);
    cuzk_toml *doc;
    cuzk_err e = cuzk_toml_parse(&doc, name, text, len, eb);
    if (!e) {
        e = apply(c, doc, base_dir, eb);
        cuzk_toml_free(doc);
    }
    if (e)
        cuzk_daemon_config_free(c);
    return e;
}

cuzk_err cuzk_daemon_config_load(cuzk_daemon_config *c, const char *path, cuzk_errbuf *eb)
{
    if (!path) {
        cuzk_daemon_config_defaults(c);
        return CUZK_OK;
    }
    cuzk_daemon_config_defaults(c);
    cuzk_toml *doc;
    cuzk_err e = cuzk_toml_load(&doc, path, eb);
    if (e) {
        cuzk_daemon_config_free(c);
        return e;
    }
    char *dir = dup_or_die(path), *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        strcpy(dir, ".");
    e = apply(c, doc, dir, eb);
    free(dir);
    cuzk_toml_free(doc);
    if (e)
        cuzk_daemon_config_free(c);
    return e;
}

void cuzk_daemon_config_engine(const cuzk_daemon_config *c, cuzk_engine_config *o)
{
    memset(o, 0, sizeof *o);
    o->partition_workers = c->partition_workers;
    o->prove_threads = c->host_threads;
    o->backend = c->backend;
    o->gpu_devices = c->gpu_devices;
    o->n_gpu_devices = c->n_gpu_devices;
    o->gpu_workers_per_device = c->gpu_workers_per_device;
    o->g2_on_gpu = c->g2_on_gpu;
    o->g2_gpu_min_scalars = c->g2_gpu_min_scalars;
    o->synth_on_cpu = c->synth_on_cpu;
    o->gpu_tables = c->gpu_tables;
    o->no_ba_fit = !c->gpu_ba_fit;
    o->gpu_stream_chunk = c->gpu_stream_chunk;
    o->gpu_stream_batch = c->gpu_stream_batch;
    o->emulated_devices = c->emulated_devices;
    o->emulated_faulty_devices = c->emulated_faulty_devices;
    o->g2_dedicated = c->g2_device >= 0;
    o->g2_device = c->g2_device;
    o->key_cache = c->key_cache;
    o->key_cache_dir = c->key_cache_dir;
    o->witness_budget = c->witness_budget;
    o->max_jobs_in_flight = c->max_jobs_in_flight;
    o->working_budget = c->working_budget;
    o->key_budget = c->key_budget;
    o->gpu_budget = c->gpu_budget;
    o->pinned_budget = c->pinned_budget;
    o->no_verify = !c->verify;
    o->retain_jobs = c->retain_jobs;
    o->max_partitions = c->max_partitions;
    o->circuits = c->circuits;
    o->n_circuits = c->n_circuits;
}
