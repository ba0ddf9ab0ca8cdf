/* The witness layer's internals: the loaded program (build.c) and the interface its shared
 * object exports (program_shim.c.in). */
#ifndef CUZK_WITNESS_INTERNAL_H
#define CUZK_WITNESS_INTERNAL_H

#include <signal.h>
#include <spawn.h>
#include <stdint.h>

#include "cuzk/witness.h"

/* Spawn attributes for a child of the caller (the witness runner, a witness command): no signal
 * blocked and every one at its default, since the caller's ignored or blocked signals (SIGPIPE)
 * are not the child's; `flags` adds other POSIX_SPAWN_* flags set on `at` by the caller. */
static inline void cuzk__spawnattr_signals(posix_spawnattr_t *at, short flags)
{
    sigset_t none, dflt;
    sigemptyset(&none);
    sigfillset(&dflt);
    posix_spawnattr_setsigmask(at, &none);
    posix_spawnattr_setsigdefault(at, &dflt);
    posix_spawnattr_setflags(at, (short)(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
}

typedef struct cuzk__wc cuzk__wc; /* one instance of the program (the shim's struct) */

/* program_shim.c.in's OP_* */
enum {
    CUZK__WC_VERSION,
    CUZK__WC_FIELD_NUM_LEN32,
    CUZK__WC_RAW_PRIME,
    CUZK__WC_INIT,
    CUZK__WC_INPUT_SIGNAL_SIZE,
    CUZK__WC_INPUT_SIZE,
    CUZK__WC_WITNESS_SIZE
};

typedef struct {
    cuzk__wc *(*create)(void);
    const char *(*error_text)(const cuzk__wc *);
    const char *(*log_text)(const cuzk__wc *);
    uint32_t (*exception)(const cuzk__wc *);
    int (*call)(cuzk__wc *, int op, uint32_t a, uint32_t b, uint32_t *out);
    int (*read_shared)(cuzk__wc *, uint32_t *words, uint32_t n32);
    int (*set_input)(cuzk__wc *, uint32_t hi, uint32_t lo, uint32_t pos, const uint32_t *words,
                     uint32_t n32);
    int (*witness)(cuzk__wc *, uint32_t *out, uint32_t from, uint32_t n, uint32_t n32);
} cuzk__wc_api;

struct cuzk_witness_program {
    char *wasm_path; /* as given, for messages */
    char *so_path;
    void *dl;
    cuzk__wc_api api;
    int built;
    double build_ms;
};

/* Opens p->so_path and takes the shim's functions into p->api. */
cuzk_err cuzk__witness_program_load(cuzk_witness_program *p, cuzk_errbuf *eb);

/* 64-bit FNV-1a of a signal name, as circom addresses input signals. */
uint64_t cuzk__fnv1a64(const char *s, size_t n);

#endif
