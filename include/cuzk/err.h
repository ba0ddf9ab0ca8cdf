/* cuzk's one error enum. Every fallible function returns cuzk_err (0 = ok) and, where it
 * takes one, fills a caller's cuzk_errbuf with a sentence a user can act on. */
#ifndef CUZK_ERR_H
#define CUZK_ERR_H

#include <stddef.h>

#define CUZK_ERRNO_MAP(X)                                                              \
    X(OK, "ok")                                                                         \
    X(INVALID_ARGUMENT, "invalid argument")                                            \
    X(IO, "input/output error")                                                         \
    X(NO_MEMORY, "out of memory")                                                       \
    X(BAD_ENCODING, "bad encoding")                                                     \
    X(BAD_FORMAT, "malformed file")                                                     \
    X(TRUNCATED, "file truncated")                                                      \
    X(UNSUPPORTED, "unsupported")                                                       \
    X(WRONG_CURVE, "wrong curve")                                                       \
    X(NOT_ON_CURVE, "point not on curve")                                               \
    X(NOT_IN_SUBGROUP, "point not in prime-order subgroup")                             \
    X(NON_CANONICAL, "non-canonical field element")                                     \
    X(SIZE_MISMATCH, "size mismatch")                                                   \
    X(WITNESS_UNSATISFIED, "witness does not satisfy the circuit")                      \
    X(VERIFY_FAILED, "proof did not verify")                                            \
    X(OUT_OF_BUDGET, "memory budget exceeded")                                          \
    X(CANCELLED, "cancelled")                                                           \
    X(TIMEOUT, "timed out")                                                             \
    X(NOT_FOUND, "not found")                                                           \
    X(BAD_CONFIG, "bad configuration")                                                  \
    X(GPU_FAULT, "GPU fault")                                                           \
    X(NO_DEVICE, "no GPU device")                                                       \
    X(INTERNAL, "internal error")

typedef enum {
#define CUZK__ERR_ENUM(name, msg) CUZK_##name,
    CUZK_ERRNO_MAP(CUZK__ERR_ENUM)
#undef CUZK__ERR_ENUM
    CUZK__ERR_COUNT
} cuzk_err;

/* Short fixed description of a code ("point not on curve"). Never NULL. */
const char *cuzk_strerror(cuzk_err e);
/* Symbolic name of a code ("NOT_ON_CURVE"). Never NULL. */
const char *cuzk_errname(cuzk_err e);

/* Caller-owned buffer for a detailed message. */
#define CUZK_ERRBUF_SIZE 512
typedef struct {
    char msg[CUZK_ERRBUF_SIZE];
} cuzk_errbuf;

/* Formats the detail into eb (if eb is not NULL) and returns e, so a failing function can
 * write `return cuzk_errf(eb, CUZK_TRUNCATED, "%s: section 4 ends past the file", path);` */
cuzk_err cuzk_errf(cuzk_errbuf *eb, cuzk_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
