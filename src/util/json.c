#include "cuzk/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* All nodes and strings of one document live in a chain of arena blocks, freed together. */
typedef struct cuzk__arena_block {
    struct cuzk__arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} cuzk__arena_block;

struct cuzk_json_doc {
    cuzk__arena_block *blocks;
    cuzk_json *root;
};

typedef struct {
    cuzk_json_doc *doc;
    const char *s, *end, *p;
    const char *name;
    cuzk_errbuf *eb;
    size_t nodes;
    int oom;
} cuzk__jp;

#define CUZK__JSON_MAX_NODES (16u << 20)

static void *cuzk__arena_alloc(cuzk__jp *jp, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    cuzk__arena_block *b = jp->doc->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        cuzk__arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) {
            jp->oom = 1;
            return NULL;
        }
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        jp->doc->blocks = nb;
        b = nb;
    }
    void *r = b->data + b->used;
    b->used += n;
    return r;
}

static cuzk_err cuzk__jerr(cuzk__jp *jp, const char *msg)
{
    if (jp->oom)
        return cuzk_errf(jp->eb, CUZK_NO_MEMORY, "%s: out of memory while parsing JSON", jp->name);
    size_t line = 1, col = 1;
    for (const char *q = jp->s; q < jp->p && q < jp->end; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return cuzk_errf(jp->eb, CUZK_BAD_ENCODING, "%s:%zu:%zu: %s", jp->name, line, col, msg);
}

static void cuzk__ws(cuzk__jp *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
        jp->p++;
}

static int cuzk__hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static cuzk_err cuzk__parse_string(cuzk__jp *jp, const char **out, size_t *outlen)
{
    /* jp->p at the opening quote. The unescaped string is never longer than the raw one. */
    const char *q = jp->p + 1;
    size_t raw = 0;
    while (q + raw < jp->end && q[raw] != '"') {
        if (q[raw] == '\\')
            raw++;
        raw++;
    }
    if (q + raw >= jp->end) {
        jp->p = jp->end;
        return cuzk__jerr(jp, "unterminated string");
    }
    char *buf = cuzk__arena_alloc(jp, raw + 1);
    if (!buf)
        return cuzk__jerr(jp, "");
    size_t n = 0;
    jp->p = q;
    while (*jp->p != '"') {
        unsigned char c = (unsigned char)*jp->p;
        if (c < 0x20)
            return cuzk__jerr(jp, "control character in string");
        if (c != '\\') {
            buf[n++] = (char)c;
            jp->p++;
            continue;
        }
        jp->p++;
        char e = *jp->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            if (jp->end - jp->p < 4)
                return cuzk__jerr(jp, "bad \\u escape");
            unsigned v = 0;
            for (int i = 0; i < 4; i++) {
                int h = cuzk__hex(jp->p[i]);
                if (h < 0)
                    return cuzk__jerr(jp, "bad \\u escape");
                v = v * 16 + (unsigned)h;
            }
            jp->p += 4;
            if (v == 0)
                return cuzk__jerr(jp, "\\u0000 is not allowed");
            if (v >= 0xd800 && v <= 0xdfff)
                return cuzk__jerr(jp, "surrogate \\u escapes are not supported");
            /* UTF-8 encode (at most 3 bytes, never longer than the 6-byte escape). */
            if (v < 0x80) {
                buf[n++] = (char)v;
            } else if (v < 0x800) {
                buf[n++] = (char)(0xc0 | (v >> 6));
                buf[n++] = (char)(0x80 | (v & 0x3f));
            } else {
                buf[n++] = (char)(0xe0 | (v >> 12));
                buf[n++] = (char)(0x80 | ((v >> 6) & 0x3f));
                buf[n++] = (char)(0x80 | (v & 0x3f));
            }
            break;
        }
        default:
            jp->p--;
            return cuzk__jerr(jp, "bad escape in string");
        }
    }
    jp->p++;
    buf[n] = 0;
    *out = buf;
    *outlen = n;
    return CUZK_OK;
}

static cuzk_err cuzk__parse_value(cuzk__jp *jp, cuzk_json **out, int depth);

/* Collects children in a temporary malloc'd vector, then copies them into the arena. */
typedef struct {
    cuzk_json **items;
    const char **keys;
    size_t n, cap;
} cuzk__vec;

static int cuzk__vec_push(cuzk__vec *v, cuzk_json *item, const char *key)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        cuzk_json **ni = realloc(v->items, cap * sizeof *ni);
        if (!ni)
            return -1;
        v->items = ni;
        const char **nk = realloc(v->keys, cap * sizeof *nk);
        if (!nk)
            return -1;
        v->keys = nk;
        v->cap = cap;
    }
    v->items[v->n] = item;
    v->keys[v->n] = key;
    v->n++;
    return 0;
}

static cuzk_err cuzk__finish_vec(cuzk__jp *jp, cuzk_json *node, cuzk__vec *v, int is_obj)
{
    node->n = v->n;
    node->items = cuzk__arena_alloc(jp, v->n * sizeof(cuzk_json *) + 1);
    if (is_obj)
        node->keys = cuzk__arena_alloc(jp, v->n * sizeof(char *) + 1);
    if (!node->items || (is_obj && !node->keys))
        return cuzk__jerr(jp, "");
    if (v->n) {
        memcpy(node->items, v->items, v->n * sizeof(cuzk_json *));
        if (is_obj)
            memcpy(node->keys, v->keys, v->n * sizeof(char *));
    }
    return CUZK_OK;
}

static cuzk_err cuzk__parse_value(cuzk__jp *jp, cuzk_json **out, int depth)
{
    if (depth > CUZK_JSON_MAX_DEPTH)
        return cuzk__jerr(jp, "nesting too deep");
    if (++jp->nodes > CUZK__JSON_MAX_NODES)
        return cuzk__jerr(jp, "too many values");
    cuzk__ws(jp);
    if (jp->p >= jp->end)
        return cuzk__jerr(jp, "unexpected end of input");
    cuzk_json *node = cuzk__arena_alloc(jp, sizeof *node);
    if (!node)
        return cuzk__jerr(jp, "");
    memset(node, 0, sizeof *node);
    char c = *jp->p;
    cuzk_err e = CUZK_OK;
    if (c == '{' || c == '[') {
        int is_obj = c == '{';
        node->type = is_obj ? CUZK_JSON_OBJECT : CUZK_JSON_ARRAY;
        jp->p++;
        cuzk__vec v = {0};
        cuzk__ws(jp);
        if (jp->p < jp->end && *jp->p == (is_obj ? '}' : ']')) {
            jp->p++;
        } else {
            for (;;) {
                const char *key = NULL;
                size_t klen;
                cuzk__ws(jp);
                if (is_obj) {
                    if (jp->p >= jp->end || *jp->p != '"') {
                        e = cuzk__jerr(jp, "expected a string key");
                        break;
                    }
                    if ((e = cuzk__parse_string(jp, &key, &klen)))
                        break;
                    for (size_t i = 0; i < v.n; i++)
                        if (strcmp(v.keys[i], key) == 0) {
                            e = cuzk__jerr(jp, "duplicate key");
                            break;
                        }
                    if (e)
                        break;
                    cuzk__ws(jp);
                    if (jp->p >= jp->end || *jp->p != ':') {
                        e = cuzk__jerr(jp, "expected ':'");
                        break;
                    }
                    jp->p++;
                }
                cuzk_json *child;
                if ((e = cuzk__parse_value(jp, &child, depth + 1)))
                    break;
                if (cuzk__vec_push(&v, child, key)) {
                    jp->oom = 1;
                    e = cuzk__jerr(jp, "");
                    break;
                }
                cuzk__ws(jp);
                if (jp->p < jp->end && *jp->p == ',') {
                    jp->p++;
                    continue;
                }
                if (jp->p < jp->end && *jp->p == (is_obj ? '}' : ']')) {
                    jp->p++;
                    break;
                }
                e = cuzk__jerr(jp, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
                break;
            }
        }
        if (!e)
            e = cuzk__finish_vec(jp, node, &v, is_obj);
        free(v.items);
        free(v.keys);
        if (e)
            return e;
    } else if (c == '"') {
        node->type = CUZK_JSON_STRING;
        if ((e = cuzk__parse_string(jp, &node->str, &node->len)))
            return e;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *st = jp->p;
        if (*jp->p == '-')
            jp->p++;
        if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
            return cuzk__jerr(jp, "bad number");
        if (*jp->p == '0' && jp->p + 1 < jp->end && jp->p[1] >= '0' && jp->p[1] <= '9')
            return cuzk__jerr(jp, "leading zero in number");
        while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
            jp->p++;
        if (jp->p < jp->end && *jp->p == '.') {
            jp->p++;
            if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
                return cuzk__jerr(jp, "bad number");
            while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
                jp->p++;
        }
        if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
            jp->p++;
            if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
                jp->p++;
            if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
                return cuzk__jerr(jp, "bad number");
            while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
                jp->p++;
        }
        node->type = CUZK_JSON_NUMBER;
        size_t n = (size_t)(jp->p - st);
        char *s = cuzk__arena_alloc(jp, n + 1);
        if (!s)
            return cuzk__jerr(jp, "");
        memcpy(s, st, n);
        s[n] = 0;
        node->str = s;
        node->len = n;
    } else {
        static const struct {
            const char *lit;
            cuzk_json_type t;
            int b;
        } lits[] = {{"true", CUZK_JSON_BOOL, 1}, {"false", CUZK_JSON_BOOL, 0}, {"null", CUZK_JSON_NULL, 0}};
        size_t i;
        for (i = 0; i < 3; i++) {
            size_t l = strlen(lits[i].lit);
            if ((size_t)(jp->end - jp->p) >= l && memcmp(jp->p, lits[i].lit, l) == 0) {
                node->type = lits[i].t;
                node->boolean = lits[i].b;
                jp->p += l;
                break;
            }
        }
        if (i == 3)
            return cuzk__jerr(jp, "unexpected character");
    }
    *out = node;
    return CUZK_OK;
}

cuzk_err cuzk_json_parse(cuzk_json_doc **out, const char *text, size_t len, size_t max_len,
                         const char *name, cuzk_errbuf *eb)
{
    *out = NULL;
    if (!max_len)
        max_len = 64u << 20;
    if (!name)
        name = "<json>";
    if (len > max_len)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: %zu bytes of JSON, the limit is %zu", name,
                         len, max_len);
    cuzk_json_doc *d = calloc(1, sizeof *d);
    if (!d)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", name);
    cuzk__jp jp = {d, text, text + len, text, name, eb, 0, 0};
    cuzk_err e = cuzk__parse_value(&jp, &d->root, 0);
    if (!e) {
        cuzk__ws(&jp);
        if (jp.p != jp.end)
            e = cuzk__jerr(&jp, "trailing characters after the JSON value");
    }
    if (e) {
        cuzk_json_free(d);
        return e;
    }
    *out = d;
    return CUZK_OK;
}

cuzk_err cuzk_json_parse_file(cuzk_json_doc **out, const char *path, size_t max_len,
                              cuzk_errbuf *eb)
{
    *out = NULL;
    if (!max_len)
        max_len = 64u << 20;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap > max_len) {
                free(buf);
                fclose(f);
                return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: larger than the JSON limit of %zu bytes",
                                 path, max_len);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", path);
    if (rerr) {
        free(buf);
        return cuzk_errf(eb, CUZK_IO, "%s: read error", path);
    }
    cuzk_err e = cuzk_json_parse(out, buf, n, max_len, path, eb);
    free(buf);
    return e;
}

const cuzk_json *cuzk_json_root(const cuzk_json_doc *d) { return d ? d->root : NULL; }

void cuzk_json_free(cuzk_json_doc *d)
{
    if (!d)
        return;
    cuzk__arena_block *b = d->blocks;
    while (b) {
        cuzk__arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(d);
}

const cuzk_json *cuzk_json_get(const cuzk_json *o, const char *key)
{
    if (!o || o->type != CUZK_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->items[i];
    return NULL;
}

const cuzk_json *cuzk_json_at(const cuzk_json *a, size_t i)
{
    if (!a || a->type != CUZK_JSON_ARRAY || i >= a->n)
        return NULL;
    return a->items[i];
}

void cuzk_sb_init(cuzk_strbuf *sb) { memset(sb, 0, sizeof *sb); }
void cuzk_sb_free(cuzk_strbuf *sb)
{
    free(sb->buf);
    memset(sb, 0, sizeof *sb);
}

static int cuzk__sb_reserve(cuzk_strbuf *sb, size_t extra)
{
    if (sb->oom)
        return -1;
    if (sb->len + extra + 1 <= sb->cap)
        return 0;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *nb = realloc(sb->buf, cap);
    if (!nb) {
        sb->oom = 1;
        return -1;
    }
    sb->buf = nb;
    sb->cap = cap;
    return 0;
}

void cuzk_sb_puts(cuzk_strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (cuzk__sb_reserve(sb, n))
        return;
    memcpy(sb->buf + sb->len, s, n + 1);
    sb->len += n;
}

void cuzk_sb_printf(cuzk_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || cuzk__sb_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void cuzk_sb_json_string(cuzk_strbuf *sb, const char *s)
{
    cuzk_sb_puts(sb, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"')
            cuzk_sb_puts(sb, "\\\"");
        else if (c == '\\')
            cuzk_sb_puts(sb, "\\\\");
        else if (c == '\n')
            cuzk_sb_puts(sb, "\\n");
        else if (c < 0x20)
            cuzk_sb_printf(sb, "\\u%04x", c);
        else {
            char t[2] = {(char)c, 0};
            cuzk_sb_puts(sb, t);
        }
    }
    cuzk_sb_puts(sb, "\"");
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w == 0 ? (errno = EIO, -1) : -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

cuzk_err cuzk_sb_write_file(const cuzk_strbuf *sb, const char *path, cuzk_errbuf *eb)
{
    if (sb->oom)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory while formatting", path);
    struct stat st;
    int exists = lstat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return cuzk_errf(eb, CUZK_IO, "%s: is a directory", path);
    if (exists && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or symlink (/dev/stdout among them) is written in place: renaming
         * over it would replace the node itself. A link's target receives the text. */
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0)
            return cuzk_errf(eb, CUZK_IO, "%s: %s", path, strerror(errno));
        int bad = write_all(fd, sb->buf, sb->len);
        int en = errno;
        if (close(fd) != 0 && !bad) {
            bad = 1;
            en = errno;
        }
        if (bad)
            return cuzk_errf(eb, CUZK_IO, "%s: write failed: %s", path, strerror(en));
        return CUZK_OK;
    }
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return cuzk_errf(eb, CUZK_IO, "%s: %s", tmp, strerror(errno));
    int bad = write_all(fd, sb->buf, sb->len);
    int en = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        en = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        en = errno;
    }
    if (bad) {
        unlink(tmp);
        return cuzk_errf(eb, CUZK_IO, "%s: write failed: %s", path, strerror(en));
    }
    return CUZK_OK;
}
