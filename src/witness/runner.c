/* The witness runner's side of one computation (cuzk-witness-runner): reads the job (runner.h),
 * loads the program's shared object, speaks circom 2's protocol to it (circom_runtime's
 * witness_calculator.js, calculateWTNSBin) and writes the reply. A process runs one
 * computation: wabt's runtime keeps its trap state in globals, and a trapping or crashing
 * program then ends the runner, never the caller. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuzk/json.h"
#include "witness/inputs.h"
#include "witness/internal.h"
#include "witness/runner.h"

#define N32 8 /* 32-bit words of a field element (both curves' r fit 256 bits) */
/* Values taken from the program per write: they stream, so the caller reads while the runner
 * converts the next ones, and no second copy of the witness is faulted in. */
#define CHUNK_VALUES (1u << 14)

/* The job's values are read in place, at any offset. */
_Static_assert(_Alignof(cuzk__input_value) == 1, "cuzk__input_value is bytes");

typedef struct {
    const cuzk_witness_program *p;
    const cuzk__inputs *in;
    const char *inputs_name;
    int mode;
    cuzk__wc *wc;
} job;

/* The program's instance lives as long as the process (the shim has no destructor for it);
 * held here so that leak checkers see it reachable. */
static cuzk__wc *volatile instance;

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

/* The work up to the values (the circuit has run in CUZK__MODE_COMPUTE), or an error. */
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
    if (j->mode == CUZK__MODE_SHAPE)
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
                                 j->inputs_name, path,
                                 x->neg ? "negative and its magnitude is " : "",
                                 cuzk_curve_name(*curve));
            }
            uint8_t val[32];
            memcpy(val, x->mag, 32);
            static const uint8_t zero[32];
            if (x->neg && memcmp(val, zero, 32) != 0)
                sub_le(val, r, x->mag);
            uint32_t words[N32];
            memcpy(words, val, 32);
            if (j->mode == CUZK__MODE_CHECK) {
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
        if (!r && cuzk__write_all(fd, buf, (size_t)k * 32))
            r = -1;
    }
    free(buf);
    return r;
}

/* ---------------------------------------------------------------- the job, as read */

typedef struct {
    uint8_t *buf; /* the whole job file; texts and values point into it */
    cuzk__inputs in;
    cuzk_json *nodes; /* the signals' shapes, rebuilt for cuzk__inputs_path */
    cuzk_json **items;
    uint64_t n_items, items_used;
    cuzk_witness_program p;
    const char *inputs_name;
    int mode;
} job_file;

/* One preorder shape node and its subtree from shape[*at, end). */
static cuzk_json *shape_node(job_file *f, const uint32_t *shape, uint64_t *at, uint64_t end,
                             int depth)
{
    if (*at >= end || depth > CUZK_JSON_MAX_DEPTH)
        return NULL;
    cuzk_json *v = &f->nodes[*at];
    uint32_t n = shape[(*at)++];
    if (n == CUZK__JOB_LEAF) {
        v->type = CUZK_JSON_NUMBER;
        return v;
    }
    if (n > end - *at || n > f->n_items - f->items_used)
        return NULL;
    v->type = CUZK_JSON_ARRAY;
    v->n = n;
    v->items = f->items + f->items_used;
    f->items_used += n;
    for (uint32_t i = 0; i < n; i++)
        if (!(v->items[i] = shape_node(f, shape, at, end, depth + 1)))
            return NULL;
    return v;
}

/* A text of len bytes at buf[*off], its NUL included; NULL when it is not one. */
static const char *text_at(const uint8_t *buf, size_t *off, uint32_t len)
{
    const char *s = (const char *)buf + *off;
    if (len == 0 || len > CUZK__MSG_MAX || memchr(s, 0, len) != s + len - 1)
        return NULL;
    *off += len;
    return s;
}

/* Reads and checks the job on fd; 0, or -1 when it is not one this runner can read. */
static int read_job(job_file *f, int fd)
{
    struct stat st;
    cuzk__job_head h;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof h ||
        lseek(fd, 0, SEEK_SET) != 0)
        return -1;
    uint64_t size = (uint64_t)st.st_size;
    if (!(f->buf = malloc(size)) || cuzk__read_all(fd, f->buf, size) != 0)
        return -1;
    memcpy(&h, f->buf, sizeof h);
    if (h.protocol != CUZK__JOB_PROTOCOL || h.mode > CUZK__MODE_SHAPE || h.n_signals > size ||
        h.n_values > size || h.n_shape > size || h.names_len > size ||
        sizeof h + (uint64_t)h.so_len + h.wasm_len + h.inputs_name_len +
                h.n_signals * sizeof(cuzk__job_signal) + h.names_len + h.n_shape * 4 +
                h.n_values * sizeof(cuzk__input_value) !=
            size)
        return -1;
    size_t off = sizeof h;
    f->mode = (int)h.mode;
    f->p.so_path = (char *)text_at(f->buf, &off, h.so_len);
    f->p.wasm_path = (char *)text_at(f->buf, &off, h.wasm_len);
    f->inputs_name = text_at(f->buf, &off, h.inputs_name_len);
    if (!f->p.so_path || !f->p.wasm_path || !f->inputs_name)
        return -1;
    const uint8_t *sigs = f->buf + off;
    const char *names = (const char *)sigs + h.n_signals * sizeof(cuzk__job_signal);
    const uint8_t *shape_bytes = (const uint8_t *)names + h.names_len;
    f->in.values = (cuzk__input_value *)(shape_bytes + h.n_shape * 4);
    f->in.n_values = h.n_values;
    uint32_t *shape = malloc(h.n_shape ? h.n_shape * 4 : 1);
    f->in.signals = calloc(h.n_signals ? h.n_signals : 1, sizeof *f->in.signals);
    f->nodes = calloc(h.n_shape ? h.n_shape : 1, sizeof *f->nodes);
    f->items = calloc(h.n_shape ? h.n_shape : 1, sizeof *f->items);
    if (!shape || !f->in.signals || !f->nodes || !f->items) {
        free(shape);
        return -1;
    }
    memcpy(shape, shape_bytes, h.n_shape * 4);
    f->n_items = h.n_shape;
    uint64_t name_at = 0, shape_at = 0;
    int ok = 1;
    for (uint64_t i = 0; i < h.n_signals && ok; i++) {
        cuzk__job_signal w;
        memcpy(&w, sigs + i * sizeof w, sizeof w);
        cuzk__input_signal *s = &f->in.signals[i];
        uint64_t shape_end = shape_at + w.shape_len;
        ok = w.name_len < h.names_len - name_at && names[name_at + w.name_len] == 0 &&
             w.count <= h.n_values && w.first <= h.n_values - w.count &&
             shape_end <= h.n_shape;
        if (!ok)
            break;
        s->name = names + name_at;
        s->hash_hi = w.hash_hi;
        s->hash_lo = w.hash_lo;
        s->first = w.first;
        s->count = w.count;
        s->json = shape_node(f, shape, &shape_at, shape_end, 0);
        ok = s->json && shape_at == shape_end && cuzk__inputs_leaves(s->json) == w.count &&
             strlen(s->name) == w.name_len;
        name_at += w.name_len + 1;
        f->in.n_signals++;
    }
    free(shape);
    return ok && name_at == h.names_len && shape_at == h.n_shape ? 0 : -1;
}

static void job_file_free(job_file *f)
{
    free(f->in.signals);
    free(f->nodes);
    free(f->items);
    free(f->buf);
}

int cuzk__witness_runner_main(pid_t parent)
{
    /* Killed when the thread that started it ends: that thread waits for the runner. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        return 3;
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0)
        return 3;
    job_file f;
    memset(&f, 0, sizeof f);
    cuzk_errbuf eb = {{0}};
    cuzk_curve curve = CUZK_CURVE_BN254;
    uint64_t n = 0;
    cuzk_err e;
    const char *log = "";
    job j = {&f.p, &f.in, NULL, 0, NULL};
    if (read_job(&f, 0) != 0) {
        e = cuzk_errf(&eb, CUZK_INTERNAL,
                      "%s could not read its job: a runner from another build of cuzk? "
                      "(reinstall cuzk)",
                      CUZK__RUNNER_NAME);
    } else if ((e = cuzk__witness_program_load(&f.p, &eb)) == CUZK_OK) {
        j.inputs_name = f.inputs_name;
        j.mode = f.mode;
        instance = j.wc = f.p.api.create();
        if (!j.wc) {
            e = cuzk_errf(&eb, CUZK_NO_MEMORY, "%s: cannot instantiate the witness program",
                          f.p.wasm_path);
        } else {
            e = run(&j, &curve, &n, &eb);
            log = f.p.api.log_text(j.wc);
        }
    }
    cuzk__reply_head h = {(int32_t)e, (uint32_t)curve, e ? 0 : n, (uint32_t)strlen(eb.msg),
                          (uint32_t)strlen(log)};
    if (h.log_len > CUZK__MSG_MAX)
        h.log_len = CUZK__MSG_MAX;
    int r = -1;
    if (!cuzk__write_all(out, &h, sizeof h) && !cuzk__write_all(out, eb.msg, h.msg_len) &&
        !cuzk__write_all(out, log, h.log_len))
        r = j.mode == CUZK__MODE_COMPUTE && !e ? stream_values(&j, out, h.n) : 0;
    close(out);
    job_file_free(&f);
    return r == 0 ? 0 : r < 0 ? 3 : CUZK__EXIT_TRAPPED;
}
