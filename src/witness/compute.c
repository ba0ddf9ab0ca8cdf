/* One witness computation: the program runs in a child process (wabt's runtime keeps its trap
 * state in globals and a trapping or crashing program must not take the caller with it); the
 * child speaks circom 2's protocol (circom_runtime's witness_calculator.js, calculateWTNSBin)
 * and sends back a reply: head, message, log, then the values. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/binfile.h"
#include "witness/inputs.h"
#include "witness/internal.h"

#define N32 8            /* 32-bit words of a field element (both curves' r fit 256 bits) */
#define MSG_MAX (1 << 16) /* cap on a reply's message and log */
/* Values the child takes from the program per write: it streams them, so the parent reads
 * while the child converts the next ones, and no second copy of the witness is faulted in. */
#define CHUNK_VALUES (1u << 14)
#define PIPE_BYTES (1 << 20)
#define EXIT_TRAPPED 4 /* the child's status when the program trapped while giving values */

typedef struct {
    int32_t err; /* cuzk_err */
    uint32_t curve;
    uint64_t n; /* values following the texts */
    uint32_t msg_len, log_len;
} reply_head;

/* circom_runtime's exceptionHandler texts. */
static const char *exception_text(uint32_t code)
{
    switch (code) {
    case 1: return "Signal not found.";
    case 2: return "Too many signals set.";
    case 3: return "Signal already set.";
    case 4: return "Assert Failed.";
    case 5: return "Not enough memory.";
    case 6: return "Input signal array access exceeds the size.";
    default: return "Unknown error.";
    }
}

/* wasm-rt.h's wasm_rt_trap_t. */
static const char *trap_text(int trap)
{
    switch (trap) {
    case 1: return "out-of-bounds memory access";
    case 2: return "integer overflow";
    case 3: return "integer divide by zero";
    case 4: return "invalid conversion";
    case 5: return "unreachable executed";
    case 6: return "invalid indirect call";
    case 7: return "uncaught exception";
    case 8: return "call stack exhausted";
    default: return "trap";
    }
}

/* What a child does: the witness, the checks of the inputs only (no input is set, so the
 * circuit does not run), or the program's shape only (curve and witness length). */
enum { MODE_COMPUTE, MODE_CHECK, MODE_SHAPE };

typedef struct {
    const cuzk_witness_program *p;
    const cuzk__inputs *in;
    const char *inputs_name;
    int mode;
    cuzk__wc *wc;
} job;

/* A trap's error: circom's exception and its messages when it raised one. */
static cuzk_err trapped(const job *j, int trap, cuzk_errbuf *eb)
{
    uint32_t exc = j->p->api.exception(j->wc);
    char msg[400];
    snprintf(msg, sizeof msg, "%s", j->p->api.error_text(j->wc));
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = 0;
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    if (exc)
        return cuzk_errf(eb, exc == 4 ? CUZK_WITNESS_UNSATISFIED : CUZK_INVALID_ARGUMENT,
                         "%s with %s: %s%s%s", j->p->wasm_path, j->inputs_name,
                         exception_text(exc), msg[0] ? " " : "", msg);
    return cuzk_errf(eb, CUZK_INTERNAL, "%s with %s: the witness program trapped (%s)%s%s",
                     j->p->wasm_path, j->inputs_name, trap_text(trap), msg[0] ? ": " : "", msg);
}

#define CALL(op, a, b, out)                                                                \
    do {                                                                                   \
        int trap_ = j->p->api.call(j->wc, op, a, b, out);                                  \
        if (trap_)                                                                         \
            return trapped(j, trap_, eb);                                                  \
    } while (0)

/* circom's signal-table file (circom --sym) beside the wasm, as circom lays out its output:
 * DIR/NAME.sym with DIR/NAME_js/NAME.wasm, or NAME.sym in the wasm's own folder. */
static FILE *open_sym(const char *wasm_path)
{
    const char *slash = strrchr(wasm_path, '/');
    const char *base = slash ? slash + 1 : wasm_path;
    size_t dl = slash ? (size_t)(slash - wasm_path) : 0;
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".wasm") == 0)
        bl -= 5;
    char p[4096];
    snprintf(p, sizeof p, "%.*s%s%.*s.sym", (int)dl, wasm_path, dl ? "/" : "", (int)bl, base);
    FILE *f = fopen(p, "r");
    if (f)
        return f;
    snprintf(p, sizeof p, "%.*s%s../%.*s.sym", (int)dl, wasm_path, dl ? "/" : "", (int)bl,
             base);
    return fopen(p, "r");
}

/* Names of the main component's input signals the inputs leave out, from the .sym file
 * (the wasm knows its inputs by hash only). 0 when there is no .sym. */
static int missing_names(const job *j, char *out, size_t cap)
{
    FILE *f = open_sym(j->p->wasm_path);
    if (!f)
        return 0;
    char line[1024];
    size_t len = 0;
    int found = 0;
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char *name = line;
        for (int c = 0; c < 3 && name; c++)
            name = strchr(name, ',') ? strchr(name, ',') + 1 : NULL;
        if (!name || strncmp(name, "main.", 5) != 0)
            continue;
        name += 5;
        size_t n = strcspn(name, "[.\r\n");
        if (name[n] == '.')
            continue; /* a subcomponent's signal */
        name[n] = 0;
        int given = 0;
        for (size_t i = 0; i < j->in->n_signals && !given; i++)
            given = strcmp(j->in->signals[i].name, name) == 0;
        if (given || (len && strstr(out, name)))
            continue;
        uint64_t h = cuzk__fnv1a64(name, n);
        uint32_t size;
        if (j->p->api.call(j->wc, CUZK__WC_INPUT_SIGNAL_SIZE, (uint32_t)(h >> 32), (uint32_t)h,
                           &size) ||
            (int32_t)size <= 0)
            continue;
        /* Names are tested against the list by substring: keep each one quoted. */
        len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s\"%s\"",
                                found ? ", " : "", name);
        found++;
    }
    fclose(f);
    return found;
}

static void sub_le(uint8_t *out, const uint8_t *a, const uint8_t *b)
{
    int borrow = 0;
    for (int i = 0; i < 32; i++) {
        int d = a[i] - b[i] - borrow;
        borrow = d < 0;
        out[i] = (uint8_t)d;
    }
}

/* The child's work up to the values (the circuit has run in MODE_COMPUTE), or an error. */
static cuzk_err run(const job *j, cuzk_curve *curve, uint64_t *nvalues, cuzk_errbuf *eb)
{
    uint32_t v, n32, nw, prime[N32];
    CALL(CUZK__WC_VERSION, 0, 0, &v);
    if (v != 2)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: a circom %u witness program; cuzk runs those of circom 2",
                         j->p->wasm_path, v);
    CALL(CUZK__WC_FIELD_NUM_LEN32, 0, 0, &n32);
    if (n32 != N32)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: field elements of %u bytes; bn128 and bls12381 use 32",
                         j->p->wasm_path, 4 * n32);
    CALL(CUZK__WC_RAW_PRIME, 0, 0, &v);
    int trap = j->p->api.read_shared(j->wc, prime, N32);
    if (trap)
        return trapped(j, trap, eb);
    uint8_t r[32];
    memcpy(r, prime, 32); /* words least significant first, each little-endian */
    if (cuzk_curve_from_r(r, 32, curve) != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED,
                         "%s: the circuit's prime is not the scalar field of bn128 or bls12381 "
                         "(circom --prime bn128 or bls12381)",
                         j->p->wasm_path);
    CALL(CUZK__WC_WITNESS_SIZE, 0, 0, &nw);
    *nvalues = nw;
    if (j->mode == MODE_SHAPE)
        return CUZK_OK;
    CALL(CUZK__WC_INIT, 0, 0, &v);
    uint64_t set = 0;
    for (size_t i = 0; i < j->in->n_signals; i++) {
        const cuzk__input_signal *s = &j->in->signals[i];
        uint32_t size;
        CALL(CUZK__WC_INPUT_SIGNAL_SIZE, s->hash_hi, s->hash_lo, &size);
        /* circom answers 0 (older releases -1) for a name that is not an input. */
        if ((int32_t)size <= 0)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                             "%s: signal \"%s\" is not an input of %s (Signal not found)",
                             j->inputs_name, s->name, j->p->wasm_path);
        if (s->count != size)
            return cuzk_errf(eb, CUZK_SIZE_MISMATCH,
                             "%s: signal \"%s\" takes %u value%s, %llu given", j->inputs_name,
                             s->name, size, size == 1 ? "" : "s", (unsigned long long)s->count);
        for (uint64_t k = 0; k < s->count; k++) {
            const cuzk__input_value *x = &j->in->values[s->first + k];
            if (!cuzk_curve_lt_r(*curve, x->mag)) {
                char path[256];
                cuzk__inputs_path(path, sizeof path, s->name, s->json, k);
                return cuzk_errf(eb, CUZK_NON_CANONICAL,
                                 "%s: %s is %snot below the %s field modulus r (reduce it mod r)",
                                 j->inputs_name, path, x->neg ? "negative and its magnitude is " : "",
                                 cuzk_curve_name(*curve));
            }
            uint8_t val[32];
            memcpy(val, x->mag, 32);
            static const uint8_t zero[32];
            if (x->neg && memcmp(val, zero, 32) != 0)
                sub_le(val, r, x->mag);
            uint32_t words[N32];
            memcpy(words, val, 32);
            if (j->mode == MODE_CHECK) {
                set++;
                continue;
            }
            if ((trap = j->p->api.set_input(j->wc, s->hash_hi, s->hash_lo, (uint32_t)k, words,
                                             N32)))
                return trapped(j, trap, eb);
            set++;
        }
    }
    uint32_t ninputs;
    CALL(CUZK__WC_INPUT_SIZE, 0, 0, &ninputs);
    if (set < ninputs) {
        char names[300];
        int nm = missing_names(j, names, sizeof names);
        if (nm)
            return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                             "%s: input signal%s %s of %s not given (%llu of %u input values "
                             "set)",
                             j->inputs_name, nm == 1 ? "" : "s", names, j->p->wasm_path,
                             (unsigned long long)set, ninputs);
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                         "%s: %llu of the %u input values of %s set: some input signals are "
                         "missing (with circom's --sym file beside the wasm cuzk names them)",
                         j->inputs_name, (unsigned long long)set, ninputs, j->p->wasm_path);
    }
    return CUZK_OK;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t k = write(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t k = read(fd, p, len > ((size_t)1 << 30) ? (size_t)1 << 30 : len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Writes the program's n values to fd, CHUNK_VALUES at a time: 0, -1 (write failed) or the
 * program's trap. */
static int stream_values(const job *j, int fd, uint64_t n)
{
    uint32_t *buf = malloc((size_t)CHUNK_VALUES * 32);
    if (!buf)
        return -1;
    int r = 0;
    for (uint64_t from = 0; from < n && !r; from += CHUNK_VALUES) {
        uint32_t k = n - from < CHUNK_VALUES ? (uint32_t)(n - from) : CHUNK_VALUES;
        r = j->p->api.witness(j->wc, buf, (uint32_t)from, k, N32);
        if (!r && write_all(fd, buf, (size_t)k * 32))
            r = -1;
    }
    free(buf);
    return r;
}

static void child(const job *jc, int fd)
{
    job j = *jc;
    cuzk_errbuf eb = {{0}};
    cuzk_curve curve = CUZK_CURVE_BN254;
    uint64_t n = 0;
    cuzk_err e;
    const char *log = "";
    j.wc = j.p->api.create();
    if (!j.wc) {
        e = cuzk_errf(&eb, CUZK_NO_MEMORY, "%s: cannot instantiate the witness program",
                      j.p->wasm_path);
    } else {
        e = run(&j, &curve, &n, &eb);
        log = j.p->api.log_text(j.wc);
    }
    reply_head h = {(int32_t)e, (uint32_t)curve, e ? 0 : n, (uint32_t)strlen(eb.msg),
                    (uint32_t)strlen(log)};
    if (h.log_len > MSG_MAX)
        h.log_len = MSG_MAX;
    if (write_all(fd, &h, sizeof h) || write_all(fd, eb.msg, h.msg_len) ||
        write_all(fd, log, h.log_len))
        _exit(3);
    int r = j.mode == MODE_COMPUTE && !e ? stream_values(&j, fd, h.n) : 0;
    _exit(r == 0 ? 0 : r < 0 ? 3 : EXIT_TRAPPED);
}

/* Runs j in a child and reads its reply into *w (the values only with MODE_COMPUTE; w->n is
 * the witness length in every mode). Frees in. */
static cuzk_err run_child(job *jp, cuzk__inputs *in, cuzk_witness *w, cuzk_errbuf *eb)
{
    const cuzk_witness_program *p = jp->p;
    const char *inputs_name = jp->inputs_name;
    const int values = jp->mode == MODE_COMPUTE;
    cuzk_err e = CUZK_OK;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        cuzk__inputs_free(in);
        return cuzk_errf(eb, CUZK_IO, "pipe: %s", strerror(errno));
    }
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES); /* fewer switches between the two; may be refused */
    job j = *jp;
    j.in = in;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        cuzk__inputs_free(in);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "cannot start the witness program: fork: %s",
                         strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(&j, fds[1]);
    }
    close(fds[1]);
    cuzk__inputs_free(in);
    reply_head h;
    char msg[CUZK_ERRBUF_SIZE] = "";
    int got = read_all(fds[0], &h, sizeof h) == 0 && h.msg_len < sizeof msg &&
              h.log_len <= MSG_MAX && h.n <= UINT32_MAX && h.curve < CUZK_CURVE_COUNT &&
              read_all(fds[0], msg, h.msg_len) == 0;
    if (got) {
        w->log = malloc(h.log_len + 1);
        w->values = malloc(values && h.n ? h.n * 32 : 1);
        if (!w->log || !w->values) {
            e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory for %llu witness values",
                          (unsigned long long)h.n);
            got = 0;
        } else if (read_all(fds[0], w->log, h.log_len) != 0 ||
                   (values && read_all(fds[0], w->values, h.n * 32) != 0)) {
            got = 0;
        } else {
            w->log[h.log_len] = 0;
        }
    }
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!got) {
        cuzk_witness_clear(w);
        if (e)
            return e;
        if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_TRAPPED)
            return cuzk_errf(eb, CUZK_INTERNAL,
                             "%s with %s: the witness program trapped while giving its values",
                             p->wasm_path, inputs_name);
        if (WIFSIGNALED(st))
            return cuzk_errf(eb, CUZK_INTERNAL,
                             "%s with %s: the witness program died of signal %d (%s)",
                             p->wasm_path, inputs_name, WTERMSIG(st), strsignal(WTERMSIG(st)));
        return cuzk_errf(eb, CUZK_INTERNAL,
                         "%s with %s: the witness program ended without an answer (exit "
                         "status %d)",
                         p->wasm_path, inputs_name, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    if (h.err) {
        char *log = w->log;
        w->log = NULL;
        cuzk_witness_clear(w);
        w->log = log; /* what the circuit printed before failing helps find why */
        return cuzk_errf(eb, (cuzk_err)h.err, "%s", msg);
    }
    w->curve = (cuzk_curve)h.curve;
    w->n = h.n;
    return CUZK_OK;
}

cuzk_err cuzk_witness_compute(const cuzk_witness_program *p, const cuzk_json *inputs,
                              const char *inputs_name, cuzk_witness *w, cuzk_errbuf *eb)
{
    memset(w, 0, sizeof *w);
    cuzk__inputs in;
    cuzk_err e = cuzk__inputs_parse(&in, inputs, inputs_name, eb);
    if (e)
        return e;
    job j = {p, NULL, inputs_name, MODE_COMPUTE, NULL};
    return run_child(&j, &in, w, eb);
}

cuzk_err cuzk_witness_check(const cuzk_witness_program *p, const cuzk_json *inputs,
                            const char *inputs_name, cuzk_errbuf *eb)
{
    cuzk_witness w;
    memset(&w, 0, sizeof w);
    cuzk__inputs in;
    cuzk_err e = cuzk__inputs_parse(&in, inputs, inputs_name, eb);
    if (e)
        return e;
    job j = {p, NULL, inputs_name, MODE_CHECK, NULL};
    e = run_child(&j, &in, &w, eb);
    cuzk_witness_clear(&w);
    return e;
}

cuzk_err cuzk_witness_program_shape(const cuzk_witness_program *p, cuzk_curve *curve,
                                    uint64_t *n_values, cuzk_errbuf *eb)
{
    cuzk_witness w;
    memset(&w, 0, sizeof w);
    cuzk__inputs in;
    memset(&in, 0, sizeof in);
    job j = {p, NULL, "no inputs", MODE_SHAPE, NULL};
    cuzk_err e = run_child(&j, &in, &w, eb);
    if (!e) {
        *curve = w.curve;
        *n_values = w.n;
    }
    cuzk_witness_clear(&w);
    return e;
}

void cuzk_witness_clear(cuzk_witness *w)
{
    free(w->values);
    free(w->log);
    memset(w, 0, sizeof *w);
}

void cuzk_witness_as_wtns(const cuzk_witness *w, cuzk_wtns *wt, const char *name)
{
    memset(wt, 0, sizeof *wt);
    cuzk__file_borrow(&wt->file, w->values, (size_t)w->n * 32, name);
    wt->curve = w->curve;
    wt->n8 = 32;
    wt->version = 2;
    wt->n_witness = w->n;
    wt->values = w->values;
}
