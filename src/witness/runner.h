/* What the caller (compute.c) and the witness runner (cuzk-witness-runner, runner.c) say to
 * each other. The job is a file on the runner's stdin: cuzk__job_head; the program's shared
 * object path, the wasm's path and the inputs' name; a cuzk__job_signal per input signal; the
 * signals' names, each NUL-terminated; the shape of each signal's JSON value (preorder nodes:
 * CUZK__JOB_LEAF, or an array's child count); the values (cuzk__input_value). The reply on its
 * stdout is cuzk__reply_head, the message, the log, then the n values of 32 bytes, streamed as
 * the program gives them. Both sides come from one build: CUZK__JOB_PROTOCOL tells apart a
 * runner left over from another. */
#ifndef CUZK_WITNESS_RUNNER_H
#define CUZK_WITNESS_RUNNER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#define CUZK__RUNNER_NAME "cuzk-witness-runner"
#define CUZK__JOB_PROTOCOL 0x637a7701u
#define CUZK__JOB_LEAF UINT32_MAX
#define CUZK__MSG_MAX (1 << 16) /* cap on a reply's message and log, and on a job's texts */
#define CUZK__EXIT_TRAPPED 4    /* the runner's status when the program trapped giving values */

/* What a runner does: the witness, the checks of the inputs only (no input is set, so the
 * circuit does not run), or the program's shape only (curve and witness length). */
enum { CUZK__MODE_COMPUTE, CUZK__MODE_CHECK, CUZK__MODE_SHAPE };

typedef struct {
    uint32_t protocol, mode;
    uint64_t n_signals, n_values, n_shape;
    uint32_t so_len, wasm_len, inputs_name_len, names_len; /* names_len counts the NULs */
} cuzk__job_head;

typedef struct {
    uint32_t hash_hi, hash_lo;
    uint32_t name_len, shape_len; /* shape_len: preorder nodes of this signal's value */
    uint64_t first, count;
} cuzk__job_signal;

typedef struct {
    int32_t err; /* cuzk_err */
    uint32_t curve;
    uint64_t n; /* values following the texts */
    uint32_t msg_len, log_len;
} cuzk__reply_head;

static inline int cuzk__write_all(int fd, const void *buf, size_t len)
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

static inline int cuzk__read_all(int fd, void *buf, size_t len)
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

/* The runner's main: reads the job on fd 0 and answers on fd 1, which it then points at
 * stderr so that nothing the program prints can corrupt the reply. parent is the caller's pid:
 * the runner dies with it. Returns the exit status. */
int cuzk__witness_runner_main(pid_t parent);

/* Sets the runner's path (NULL: search for it as usual); for tests. */
void cuzk__witness_set_runner(const char *path);

#endif
