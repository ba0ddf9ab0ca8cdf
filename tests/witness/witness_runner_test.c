/* The witness runner (cuzk-witness-runner, started by src/witness/compute.c): computations while
 * the caller holds 256 MiB it has written, several at once from threads, an element path of an
 * array input named from the runner's side, a missing runner named in the error, a runner that
 * ends without answering, and the runner refusing a job it cannot read. Needs wasm2c and cc, as
 * cuzk witness does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuzk/io.h"
#include "cuzk/json.h"
#include "cuzk/witness.h"
#include "testutil.h"
#include "witness/runner.h"

#define HELD_BYTES ((size_t)256 << 20)
#define THREADS 4
#define RUNS_PER_THREAD 3

extern char **environ;

static cuzk_witness_program *multiplier;
static cuzk_json_doc *multiplier_in;
static cuzk_wtns expected;

static cuzk_json_doc *parse(const char *text)
{
    cuzk_json_doc *d = NULL;
    cuzk_errbuf eb = {{0}};
    CHECK_MSG(cuzk_json_parse(&d, text, strlen(text), 0, "in.json", &eb) == CUZK_OK, "%s",
              eb.msg);
    return d;
}

/* 1 when a computation of the multiplier gives the fixture's witness. */
static int multiplier_ok(void)
{
    cuzk_witness w;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_witness_compute(multiplier, cuzk_json_root(multiplier_in), "in.json", &w,
                                      &eb);
    int ok = e == CUZK_OK && w.n == expected.n_witness && w.curve == CUZK_CURVE_BN254 &&
             memcmp(w.values, expected.values, w.n * 32) == 0;
    if (!ok)
        fprintf(stderr, "multiplier: %s (%s)\n", cuzk_errname(e), eb.msg);
    cuzk_witness_clear(&w);
    return ok;
}

static void *worker(void *arg)
{
    int *ok = arg;
    for (int i = 0; i < RUNS_PER_THREAD; i++)
        *ok &= multiplier_ok();
    return NULL;
}

/* Runs the runner by hand with stdin from path; its reply's head and message. */
static int run_runner_on(const char *runner, const char *path, cuzk__reply_head *h, char *msg,
                         size_t cap)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    char parent[24];
    snprintf(parent, sizeof parent, "%ld", (long)getpid());
    char *const argv[] = {(char *)runner, parent, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, path, O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, runner, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    int got = rc == 0 && cuzk__read_all(fds[0], h, sizeof *h) == 0 && h->msg_len < cap &&
              cuzk__read_all(fds[0], msg, h->msg_len) == 0;
    if (got)
        msg[h->msg_len] = 0;
    close(fds[0]);
    int st = 0;
    if (rc == 0)
        waitpid(pid, &st, 0);
    return got ? 0 : -1;
}

int main(void)
{
    char dir[] = "/tmp/cuzk-runner-test.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char cache[sizeof dir + 8];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    cuzk_witness_opts opts = {cache};
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_witness_program_open(
        &multiplier, tu_src_path("tests/fixtures/bn128/multiplier.wasm"), &opts, &eb);
    CHECK_MSG(e == CUZK_OK, "%s", eb.msg);
    if (e)
        return tu_finish("witness_runner_test");
    CHECK(cuzk_wtns_open(&expected, tu_src_path("tests/fixtures/bn128/multiplier.wtns"), &eb) ==
          CUZK_OK);
    size_t len;
    char *text = tu_read_file(tu_src_path("tests/fixtures/bn128/multiplier.input.json"), &len);
    CHECK(text != NULL);
    multiplier_in = parse(text ? text : "{}");
    free(text);

    /* The caller holds a large allocation it has written: fork() would copy its page tables. */
    uint8_t *held = malloc(HELD_BYTES);
    CHECK(held != NULL);
    for (size_t i = 0; held && i < HELD_BYTES; i += 4096)
        held[i] = (uint8_t)i;
    CHECK(multiplier_ok());

    /* One runner per computation: several at once from threads. */
    pthread_t t[THREADS];
    int ok[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ok[i] = 1;
        CHECK(pthread_create(&t[i], NULL, worker, &ok[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(ok[i], "thread %d", i);
    }
    free(held);

    /* The runner rebuilds an array input's shape to name an element. */
    cuzk_witness_program *arrays = NULL;
    e = cuzk_witness_program_open(
        &arrays, tu_src_path("tests/witness/fixtures/bn128/arrays.wasm"), &opts, &eb);
    CHECK_MSG(e == CUZK_OK, "%s", eb.msg);
    cuzk_json_doc *in = parse("{\"a\": [[2, 3, 4], [5, 6, \"218882428718392752222464057452572750"
                              "88548364400416034343698204186575808495617\"]], \"k\": 1}");
    cuzk_witness w;
    memset(&w, 0, sizeof w);
    e = arrays ? cuzk_witness_compute(arrays, cuzk_json_root(in), "in.json", &w, &eb)
               : CUZK_INTERNAL;
    CHECK_MSG(e == CUZK_NON_CANONICAL && strstr(eb.msg, "in.json: a[1][2] is not below the "
                                                        "bn128 field modulus r"),
              "%s", eb.msg);
    cuzk_witness_clear(&w); /* what the circuit logged before failing */
    CHECK(arrays == NULL || cuzk_witness_check(arrays, cuzk_json_root(in), "in.json", &eb) ==
                                CUZK_NON_CANONICAL);
    cuzk_json_free(in);
    cuzk_witness_program_free(arrays);

    /* A missing runner: the error names where it was looked for. */
    cuzk__witness_set_runner("/nonexistent/cuzk-witness-runner");
    memset(&eb, 0, sizeof eb);
    e = cuzk_witness_compute(multiplier, cuzk_json_root(multiplier_in), "in.json", &w, &eb);
    CHECK_MSG(e == CUZK_NOT_FOUND && strstr(eb.msg, "cannot start the witness program") &&
                  strstr(eb.msg, "/nonexistent/cuzk-witness-runner"),
              "%s (%s)", eb.msg, cuzk_errname(e));
    cuzk_witness_clear(&w);
    uint64_t n = 0;
    cuzk_curve c;
    CHECK(cuzk_witness_program_shape(multiplier, &c, &n, &eb) == CUZK_NOT_FOUND);
    /* A runner that ends without answering. */
    cuzk__witness_set_runner("/bin/false");
    e = cuzk_witness_compute(multiplier, cuzk_json_root(multiplier_in), "in.json", &w, &eb);
    CHECK_MSG(e == CUZK_INTERNAL && strstr(eb.msg, "ended without an answer (exit status 1)"),
              "%s (%s)", eb.msg, cuzk_errname(e));
    cuzk_witness_clear(&w);
    cuzk__witness_set_runner(NULL);
    CHECK(multiplier_ok());
    CHECK(cuzk_witness_program_shape(multiplier, &c, &n, &eb) == CUZK_OK &&
          n == expected.n_witness && c == CUZK_CURVE_BN254);

    /* The runner refuses a job it cannot read, with an answer rather than a crash. */
    const char *bin = getenv("CUZK_BIN_DIR");
    char runner[4096], junk[sizeof dir + 16];
    snprintf(runner, sizeof runner, "%s/%s", bin ? bin : "build/bin", CUZK__RUNNER_NAME);
    snprintf(junk, sizeof junk, "%s/junk", dir);
    FILE *f = fopen(junk, "wb");
    CHECK(f != NULL);
    if (f) {
        cuzk__job_head h = {CUZK__JOB_PROTOCOL, CUZK__MODE_COMPUTE, 1, 1, 1, 5, 5, 5, 2};
        fwrite(&h, sizeof h, 1, f); /* and nothing that it announces */
        fclose(f);
    }
    cuzk__reply_head rh = {0, 0, 0, 0, 0};
    char msg[CUZK_ERRBUF_SIZE] = "";
    CHECK(run_runner_on(runner, junk, &rh, msg, sizeof msg) == 0);
    CHECK_MSG(rh.err == CUZK_INTERNAL && rh.n == 0 && strstr(msg, "could not read its job"),
              "%d %s", rh.err, msg);

    cuzk_json_free(multiplier_in);
    cuzk_wtns_close(&expected);
    cuzk_witness_program_free(multiplier);
    char rm[sizeof dir + 16];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    return tu_finish("witness_runner_test");
}
