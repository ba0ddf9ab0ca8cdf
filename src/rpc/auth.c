/* Bearer tokens and TLS PEM files of cuzk-daemon (see auth.h). No gRPC here: the fuzz target
 * builds this file alone. */
#define _GNU_SOURCE
#include "rpc/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/sha256.h"

#define MAX_FILE (1u << 20)
#define MIN_TOKEN 16
#define MAX_TOKEN 4096

typedef struct {
    uint8_t digest[32];
    cuzk_role role;
} token_entry;

struct cuzk_tokens {
    size_t n;
    token_entry *e;
};

const char *cuzk_role_name(cuzk_role r)
{
    static const char *const names[] = {"none", "read", "prove", "admin"};
    return (unsigned)r < 4 ? names[r] : "none";
}

static int parse_role(const char *s, size_t n, cuzk_role *out)
{
    for (int r = CUZK_ROLE_READ; r <= CUZK_ROLE_ADMIN; r++) {
        const char *name = cuzk_role_name((cuzk_role)r);
        if (strlen(name) == n && memcmp(s, name, n) == 0) {
            *out = (cuzk_role)r;
            return 0;
        }
    }
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

cuzk_err cuzk_tokens_parse(cuzk_tokens **out, const char *name, const char *text, size_t len,
                           cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_tokens *t = calloc(1, sizeof *t);
    size_t cap = 0;
    if (!t)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    cuzk_err e = CUZK_OK;
    const char *p = text, *end = text + len;
    for (unsigned line = 1; p < end && !e; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end, *q = p;
        p = nl ? nl + 1 : end;
        while (q < le && is_space(*q))
            q++;
        if (q == le || *q == '#')
            continue;
        const char *role = q;
        while (q < le && !is_space(*q))
            q++;
        size_t role_len = (size_t)(q - role);
        while (q < le && is_space(*q))
            q++;
        const char *tok = q;
        while (q < le && !is_space(*q))
            q++;
        size_t tok_len = (size_t)(q - tok);
        while (q < le && is_space(*q))
            q++;
        cuzk_role r;
        if (!tok_len || q != le) {
            e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%u: expected 'ROLE TOKEN' (two words)", name,
                          line);
        } else if (parse_role(role, role_len, &r)) {
            e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%u: role '%.*s' is not one of read, prove, "
                          "admin", name, line, (int)(role_len > 32 ? 32 : role_len), role);
        } else if (tok_len < MIN_TOKEN || tok_len > MAX_TOKEN) {
            e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%u: the token has %zu characters: use %d to "
                          "%d (e.g. openssl rand -hex 32)", name, line, tok_len, MIN_TOKEN,
                          MAX_TOKEN);
        } else {
            for (size_t i = 0; i < tok_len && !e; i++)
                if ((unsigned char)tok[i] < 0x21 || (unsigned char)tok[i] > 0x7e)
                    e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%u: the token has a byte that is "
                                  "not printable ASCII (0x%02x at %zu)", name, line,
                                  (unsigned char)tok[i], i);
            if (e)
                break;
            if (t->n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                token_entry *ne = realloc(t->e, nc * sizeof *ne);
                if (!ne) {
                    e = cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
                    break;
                }
                t->e = ne;
                cap = nc;
            }
            token_entry *te = &t->e[t->n];
            cuzk_sha256(te->digest, tok, tok_len);
            te->role = r;
            for (size_t k = 0; k < t->n && !e; k++)
                if (memcmp(t->e[k].digest, te->digest, 32) == 0)
                    e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%u: this token is listed before "
                                  "(give each token one role)", name, line);
            if (!e)
                t->n++;
        }
    }
    if (e) {
        cuzk_tokens_free(t);
        return e;
    }
    *out = t;
    return CUZK_OK;
}

/* Reads a whole file (at most MAX_FILE bytes) through fd into *out (malloc'd, NUL-ended). */
static cuzk_err read_fd(int fd, const char *what, const char *path, const struct stat *st,
                        char **out, size_t *len, cuzk_errbuf *eb)
{
    if ((uint64_t)st->st_size > MAX_FILE)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s %s: %lld bytes, more than 1 MiB", what, path,
                         (long long)st->st_size);
    size_t n = (size_t)st->st_size, got = 0;
    char *buf = malloc(n + 1);
    if (!buf)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = 0;
    *out = buf;
    *len = got;
    return CUZK_OK;
}

cuzk_err cuzk_tokens_load(cuzk_tokens **out, const char *path, cuzk_errbuf *eb)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.auth.tokens_file %s: %s", path,
                         strerror(errno));
    struct stat st;
    cuzk_err e = CUZK_OK;
    if (fstat(fd, &st) != 0)
        e = cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.auth.tokens_file %s: %s", path,
                      strerror(errno));
    else if (!S_ISREG(st.st_mode))
        e = cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.auth.tokens_file %s is not a regular file",
                      path);
    else if (st.st_mode & 077)
        e = cuzk_errf(eb, CUZK_BAD_CONFIG, "daemon.auth.tokens_file %s has mode %04o: others "
                      "than its owner may read it (chmod 600 %s)", path,
                      (unsigned)(st.st_mode & 07777), path);
    char *text = NULL;
    size_t len = 0;
    if (!e)
        e = read_fd(fd, "daemon.auth.tokens_file", path, &st, &text, &len, eb);
    close(fd);
    if (!e)
        e = cuzk_tokens_parse(out, path, text, len, eb);
    free(text);
    return e;
}

void cuzk_tokens_free(cuzk_tokens *t)
{
    if (!t)
        return;
    free(t->e);
    free(t);
}

size_t cuzk_tokens_count(const cuzk_tokens *t)
{
    return t ? t->n : 0;
}

cuzk_role cuzk_tokens_check(const cuzk_tokens *t, const char *token, size_t len,
                            char owner[CUZK_OWNER_ID_LEN])
{
    uint8_t d[32];
    cuzk_sha256(d, token, len);
    /* Every entry is compared in full, and the match is selected by masks, not branches. */
    unsigned role = 0;
    for (size_t i = 0; i < t->n; i++) {
        unsigned diff = 0;
        for (int k = 0; k < 32; k++)
            diff |= (unsigned)(t->e[i].digest[k] ^ d[k]);
        unsigned match = 0u - (((diff - 1u) >> 8) & 1u); /* all ones when diff == 0 */
        role |= match & (unsigned)t->e[i].role;
    }
    static const char hex[] = "0123456789abcdef";
    for (int k = 0; k < 8; k++) {
        owner[2 * k] = hex[d[k] >> 4];
        owner[2 * k + 1] = hex[d[k] & 15];
    }
    owner[16] = 0;
    return (cuzk_role)role;
}

/* ------------------------------------------------------------------ live table */

struct cuzk_auth {
    pthread_mutex_t mu;
    char *path;
    cuzk_tokens *t;
};

cuzk_err cuzk_auth_new(cuzk_auth **out, const char *tokens_file, cuzk_errbuf *eb)
{
    *out = NULL;
    cuzk_auth *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(tokens_file))) {
        free(a);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    }
    cuzk_err e = cuzk_tokens_load(&a->t, tokens_file, eb);
    if (e) {
        free(a->path);
        free(a);
        return e;
    }
    pthread_mutex_init(&a->mu, NULL);
    *out = a;
    return CUZK_OK;
}

cuzk_err cuzk_auth_reload(cuzk_auth *a, size_t *n_tokens, cuzk_errbuf *eb)
{
    cuzk_tokens *t = NULL;
    cuzk_err e = cuzk_tokens_load(&t, a->path, eb);
    if (e)
        return e;
    pthread_mutex_lock(&a->mu);
    cuzk_tokens *old = a->t;
    a->t = t;
    pthread_mutex_unlock(&a->mu);
    cuzk_tokens_free(old);
    *n_tokens = t->n;
    return CUZK_OK;
}

cuzk_role cuzk_auth_check(cuzk_auth *a, const char *value, size_t len,
                          char owner[CUZK_OWNER_ID_LEN])
{
    owner[0] = 0;
    if (len < 7 || strncasecmp(value, "Bearer ", 7) != 0)
        return CUZK_ROLE_NONE;
    value += 7;
    len -= 7;
    while (len && value[0] == ' ') {
        value++;
        len--;
    }
    pthread_mutex_lock(&a->mu);
    cuzk_role r = cuzk_tokens_check(a->t, value, len, owner);
    pthread_mutex_unlock(&a->mu);
    if (r == CUZK_ROLE_NONE)
        owner[0] = 0;
    return r;
}

void cuzk_auth_free(cuzk_auth *a)
{
    if (!a)
        return;
    cuzk_tokens_free(a->t);
    pthread_mutex_destroy(&a->mu);
    free(a->path);
    free(a);
}

/* ------------------------------------------------------------------ TLS files */

static int is_b64(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '/' || c == '=';
}

/* One "-----BEGIN LABEL-----" line at p (line start): the label into lab, the position after
 * the line into *next. 0 when p is not such a line. */
static int begin_line(const char *p, const char *end, char lab[64], const char **next)
{
    static const char B[] = "-----BEGIN ";
    size_t bl = sizeof B - 1;
    if ((size_t)(end - p) < bl || memcmp(p, B, bl) != 0)
        return 0;
    const char *s = p + bl, *d = s;
    while (d < end && ((*d >= 'A' && *d <= 'Z') || *d == ' '))
        d++;
    if ((size_t)(end - d) < 5 || memcmp(d, "-----", 5) != 0 || d - s >= 64 || d == s)
        return 0;
    memcpy(lab, s, (size_t)(d - s));
    lab[d - s] = 0;
    d += 5;
    while (d < end && (*d == '\r' || *d == ' '))
        d++;
    if (d < end && *d != '\n')
        return 0;
    *next = d < end ? d + 1 : end;
    return 1;
}

cuzk_err cuzk_tls_check_pem(const char *what, const char *text, size_t len, int want_key,
                            cuzk_errbuf *eb)
{
    const char *p = text, *end = text + len;
    unsigned certs = 0, keys = 0;
    /* gRPC reads the PEM as a C string: a NUL would cut it short. */
    if (memchr(text, 0, len))
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: holds a NUL byte (not a PEM text file)", what);
    while (p < end) {
        char lab[64];
        const char *body;
        if (!begin_line(p, end, lab, &body)) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
            continue;
        }
        /* The body: base64 lines (headers of encrypted keys are refused below), then END. */
        char endl[96];
        int el = snprintf(endl, sizeof endl, "-----END %s-----", lab);
        const char *q = body;
        size_t b64 = 0;
        int closed = 0;
        while (q < end) {
            const char *nl = memchr(q, '\n', (size_t)(end - q));
            const char *le = nl ? nl : end;
            if ((size_t)(le - q) >= (size_t)el && memcmp(q, endl, (size_t)el) == 0) {
                closed = 1;
                q = nl ? nl + 1 : end;
                break;
            }
            for (const char *c = q; c < le; c++) {
                if (*c == '\r' || *c == ' ')
                    continue;
                if (!is_b64(*c))
                    return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: the PEM block '%s' has a line "
                                     "that is not base64%s", what, lab,
                                     *c == ':' ? " (an encrypted key? give it without a "
                                                 "passphrase)" : "");
                b64++;
            }
            q = nl ? nl + 1 : end;
        }
        if (!closed)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: the PEM block '%s' has no END line",
                             what, lab);
        if (b64 < 16)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: the PEM block '%s' is empty", what, lab);
        if (strcmp(lab, "CERTIFICATE") == 0)
            certs++;
        else if (strcmp(lab, "PRIVATE KEY") == 0 || strcmp(lab, "RSA PRIVATE KEY") == 0 ||
                 strcmp(lab, "EC PRIVATE KEY") == 0)
            keys++;
        else if (strcmp(lab, "ENCRYPTED PRIVATE KEY") == 0)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: the private key is encrypted: give it "
                             "without a passphrase (openssl pkey -in KEY -out KEY.plain)", what);
        p = q;
    }
    if (want_key && keys != 1)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: %s", what,
                         keys ? "holds more than one private key" :
                                "holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    if (!want_key && !certs)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: holds no PEM certificate (-----BEGIN "
                         "CERTIFICATE-----)", what);
    if (!want_key && keys)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s: holds a private key: give certificates only",
                         what);
    return CUZK_OK;
}

cuzk_err cuzk_tls_read_pem(const char *what, const char *path, int want_key, char **out,
                           cuzk_errbuf *eb)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s %s: %s", what, path, strerror(errno));
    struct stat st;
    cuzk_err e = CUZK_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        e = cuzk_errf(eb, CUZK_BAD_CONFIG, "%s %s is not a regular file", what, path);
    char *text = NULL;
    size_t len = 0;
    if (!e)
        e = read_fd(fd, what, path, &st, &text, &len, eb);
    close(fd);
    if (!e) {
        char w[CUZK_ERRBUF_SIZE];
        snprintf(w, sizeof w, "%s %s", what, path);
        e = cuzk_tls_check_pem(w, text, len, want_key, eb);
    }
    if (e) {
        free(text);
        return e;
    }
    *out = text;
    return CUZK_OK;
}
