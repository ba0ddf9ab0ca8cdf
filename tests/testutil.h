/* Minimal test harness: each test binary is one process run by ctest; checks count failures
 * and the binary exits non-zero if any failed. */
#ifndef CUZK_TESTUTIL_H
#define CUZK_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern long tu_checks, tu_failures;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        tu_checks++;                                                                      \
        if (!(cond)) {                                                                    \
            tu_failures++;                                                                \
            if (tu_failures <= 20)                                                        \
                fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);  \
        }                                                                                 \
    } while (0)

#define CHECK_MSG(cond, ...)                                                              \
    do {                                                                                  \
        tu_checks++;                                                                      \
        if (!(cond)) {                                                                    \
            tu_failures++;                                                                \
            if (tu_failures <= 20) {                                                      \
                fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);  \
                fprintf(stderr, __VA_ARGS__);                                             \
                fputc('\n', stderr);                                                      \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* Deterministic PRNG (splitmix64) so failures reproduce; seed from CUZK_TEST_SEED if set. */
uint64_t tu_rand64(void);
void tu_rand_bytes(void *p, size_t n);
void tu_seed(uint64_t s);

/* Prints "name: N checks, M failed" and returns the process exit code. */
int tu_finish(const char *name);

/* Reads a whole file (for known-answer vectors); returns NULL if missing. Caller frees. */
char *tu_read_file(const char *path, size_t *len);

/* Path under the source tree (CUZK_SOURCE_DIR or "."), in a static buffer. */
const char *tu_src_path(const char *rel);

#endif
