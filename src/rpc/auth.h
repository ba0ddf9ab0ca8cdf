/* Who may call the daemon: bearer tokens with roles, and the PEM files of [daemon.tls].
 *
 * Tokens file ([daemon.auth] tokens_file): one `ROLE TOKEN` pair per line, ROLE one of read,
 * prove, admin, TOKEN 16 to 4096 printable ASCII characters without spaces; blank lines and
 * lines starting with '#' are ignored. The file must be a regular file that neither group
 * nor others may read or write (mode 0600 or 0400). Tokens are kept as SHA-256 digests and a
 * presented token is compared with every entry in constant time, so neither a token's bytes
 * nor its length show in the time a check takes.
 *
 * Roles: read (GetStatus, GetMetrics, ListCircuits, AwaitProof of its own jobs), prove (read,
 * SubmitProof, Prove, CancelProof of its own jobs), admin (everything: PreloadKey, EvictKey,
 * await or cancel any job). A job belongs to the token that submitted it (its owner id: the
 * first 8 bytes of the token's SHA-256 in hex, also a log field). */
#ifndef CUZK_RPC_AUTH_H
#define CUZK_RPC_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

typedef enum {
    CUZK_ROLE_NONE = 0, /* no token, or an unknown one */
    CUZK_ROLE_READ = 1,
    CUZK_ROLE_PROVE = 2,
    CUZK_ROLE_ADMIN = 3,
} cuzk_role;

const char *cuzk_role_name(cuzk_role r);

#define CUZK_OWNER_ID_LEN 17 /* 16 hex digits and the NUL */

/* A parsed tokens file. */
typedef struct cuzk_tokens cuzk_tokens;

/* Parses a tokens file's text; name is used in messages ("tokens.txt:3: ..."). Errors
 * (CUZK_BAD_CONFIG) name the line; the message never contains a token. */
cuzk_err cuzk_tokens_parse(cuzk_tokens **out, const char *name, const char *text, size_t len,
                           cuzk_errbuf *eb);
/* Reads and parses path, refusing anything but a regular file of mode 0600 / 0400. */
cuzk_err cuzk_tokens_load(cuzk_tokens **out, const char *path, cuzk_errbuf *eb);
void cuzk_tokens_free(cuzk_tokens *t);
size_t cuzk_tokens_count(const cuzk_tokens *t);
/* The role of token[0..len) (CUZK_ROLE_NONE when unknown) and its owner id. */
cuzk_role cuzk_tokens_check(const cuzk_tokens *t, const char *token, size_t len,
                            char owner[CUZK_OWNER_ID_LEN]);

/* The live token table of a daemon: read at start, swapped whole on reload. Thread-safe. */
typedef struct cuzk_auth cuzk_auth;
cuzk_err cuzk_auth_new(cuzk_auth **out, const char *tokens_file, cuzk_errbuf *eb);
/* Re-reads the tokens file; on any error the old tokens stay in force. */
cuzk_err cuzk_auth_reload(cuzk_auth *a, size_t *n_tokens, cuzk_errbuf *eb);
/* The role of an `authorization` header value "Bearer TOKEN" (scheme case-insensitive). */
cuzk_role cuzk_auth_check(cuzk_auth *a, const char *value, size_t len,
                          char owner[CUZK_OWNER_ID_LEN]);
void cuzk_auth_free(cuzk_auth *a);

/* Checks that text[0..len) holds at least one PEM block of the kind wanted: certificates
 * ("-----BEGIN CERTIFICATE-----" ... END) when want_key is 0, one private key ("-----BEGIN
 * [RSA |EC ]PRIVATE KEY-----") when 1, with base64 between the lines. what names the
 * setting and file in the message. */
cuzk_err cuzk_tls_check_pem(const char *what, const char *text, size_t len, int want_key,
                            cuzk_errbuf *eb);
/* Reads a PEM file (at most 1 MiB) into *out (malloc'd, NUL-terminated) and checks it. */
cuzk_err cuzk_tls_read_pem(const char *what, const char *path, int want_key, char **out,
                           cuzk_errbuf *eb);

#endif
