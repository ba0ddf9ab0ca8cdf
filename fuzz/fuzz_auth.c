/* libFuzzer target for the daemon's access files (src/rpc/auth.c): the tokens file parser and
 * the PEM checks of [daemon.tls]. Built and run by scripts/fuzz-smoke.sh (target auth; seeds
 * in fuzz/corpus/auth/). The first byte picks the reader: 0 tokens, 1 certificates, 2 a key.
 * Invariants checked: a parse either succeeds or fails with BAD_CONFIG (NO_MEMORY if memory
 * runs out) and a message naming the file; a parsed table gives every `ROLE TOKEN` line's
 * token its role and an unlisted string none; an accepted PEM holds the block it must; nothing
 * leaks (ASan). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rpc/auth.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int sp(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Re-reads the accepted text line by line and checks each token's role. */
static void check_table(const cuzk_tokens *t, const char *p, size_t n)
{
    const char *end = p + n;
    size_t lines = 0;
    char owner[CUZK_OWNER_ID_LEN];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *q = p;
        p = nl ? nl + 1 : end;
        while (q < le && sp(*q))
            q++;
        if (q == le || *q == '#')
            continue;
        const char *role = q;
        while (q < le && !sp(*q))
            q++;
        size_t rl = (size_t)(q - role);
        while (q < le && sp(*q))
            q++;
        const char *tok = q;
        while (q < le && !sp(*q))
            q++;
        cuzk_role want = rl == 4 && !memcmp(role, "read", 4)    ? CUZK_ROLE_READ
                         : rl == 5 && !memcmp(role, "prove", 5) ? CUZK_ROLE_PROVE
                         : rl == 5 && !memcmp(role, "admin", 5) ? CUZK_ROLE_ADMIN
                                                                : CUZK_ROLE_NONE;
        if (want == CUZK_ROLE_NONE || cuzk_tokens_check(t, tok, (size_t)(q - tok), owner) != want ||
            strlen(owner) != 16)
            __builtin_trap();
        lines++;
    }
    if (lines != cuzk_tokens_count(t) || cuzk_tokens_check(t, "", 0, owner) != CUZK_ROLE_NONE)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % 3;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    cuzk_errbuf eb;
    if (mode == 0) {
        cuzk_tokens *t = NULL;
        cuzk_err e = cuzk_tokens_parse(&t, "f.tokens", text, n, &eb);
        if (e) {
            if ((e != CUZK_BAD_CONFIG && e != CUZK_NO_MEMORY) || t ||
                (e == CUZK_BAD_CONFIG && strncmp(eb.msg, "f.tokens:", 9) != 0))
                __builtin_trap();
            return 0;
        }
        check_table(t, text, n);
        cuzk_tokens_free(t);
        return 0;
    }
    int key = mode == 2;
    cuzk_err e = cuzk_tls_check_pem("w", text, n, key, &eb);
    if (e) {
        if (e != CUZK_BAD_CONFIG || strncmp(eb.msg, "w:", 2) != 0)
            __builtin_trap();
        return 0;
    }
    const char *need = key ? "PRIVATE KEY-----" : "-----BEGIN CERTIFICATE-----";
    if (!memmem(text, n, need, strlen(need)))
        __builtin_trap();
    return 0;
}
