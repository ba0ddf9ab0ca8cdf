/* Strict TOML-subset parser (see include/cuzk/toml.h for what is accepted). The grammar
 * follows the TOML 1.0.0 specification (https://toml.io/en/v1.0.0); everything outside the
 * subset is rejected with a message rather than half-supported. */
#include "cuzk/toml.h"

#include "util/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/alloc.h"

struct cuzk_toml_value {
    cuzk_toml_type type;
    int line;
    /* Tables only: 0 created implicitly by a header ([a.b] creates a), 1 defined by its own
     * header, 2 created by a dotted key (a.b = 1 creates a). TOML forbids defining one table
     * twice, so the parser tracks how each came to be. */
    int defined;
    bool used;
    char *key;  /* this value's key in its parent table; NULL for array elements */
    char *path; /* display path for messages */
    const char *file;
    union {
        char *s;
        int64_t i;
        double f;
        bool b;
    } u;
    /* children: table values in document order, or array elements */
    cuzk_toml_value **items;
    size_t n, cap;
};

struct cuzk_toml {
    char *name;
    cuzk_toml_value *root;
};

/* ------------------------------------------------------------------ values */

static void val_free(cuzk_toml_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        val_free(v->items[i]);
    cuzk_free(v->items);
    if (v->type == CUZK_TOML_STRING)
        cuzk_free(v->u.s);
    cuzk_free(v->key);
    cuzk_free(v->path);
    cuzk_free(v);
}

/* Keys that need no quoting in a display path. */
static bool key_is_bare(const char *k)
{
    if (!*k)
        return false;
    for (; *k; k++) {
        char c = *k;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

static char *make_path(const cuzk_toml_value *parent, const char *key, size_t index)
{
    const char *pp = parent && parent->path ? parent->path : "";
    size_t need = strlen(pp) + (key ? strlen(key) * 2 + 4 : 24) + 2;
    char *p = cuzk_malloc(need);
    if (!p)
        return NULL;
    if (!key)
        snprintf(p, need, "%s[%zu]", pp, index);
    else if (key_is_bare(key))
        snprintf(p, need, "%s%s%s", pp, *pp ? "." : "", key);
    else
        snprintf(p, need, "%s%s\"%s\"", pp, *pp ? "." : "", key); /* display only */
    return p;
}

static cuzk_toml_value *val_new(cuzk_toml_value *parent, const char *key, cuzk_toml_type t,
                                int line, const char *file)
{
    cuzk_toml_value *v = cuzk_calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->type = t;
    v->line = line;
    v->file = file;
    if (key && !(v->key = cuzk_strdup(key))) {
        cuzk_free(v);
        return NULL;
    }
    v->path = make_path(parent, key, parent ? parent->n : 0);
    if (!v->path) {
        val_free(v);
        return NULL;
    }
    return v;
}

static bool val_push(cuzk_toml_value *parent, cuzk_toml_value *child)
{
    if (parent->n == parent->cap) {
        size_t nc = parent->cap ? parent->cap * 2 : 8;
        cuzk_toml_value **ni = cuzk_realloc(parent->items, nc * sizeof *ni);
        if (!ni)
            return false;
        parent->items = ni;
        parent->cap = nc;
    }
    parent->items[parent->n++] = child;
    return true;
}

static cuzk_toml_value *table_find(const cuzk_toml_value *t, const char *key, size_t klen)
{
    if (!t || t->type != CUZK_TOML_TABLE)
        return NULL;
    for (size_t i = 0; i < t->n; i++) {
        const char *k = t->items[i]->key;
        if (strlen(k) == klen && memcmp(k, key, klen) == 0)
            return t->items[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------ parser */

typedef struct {
    const char *s, *end, *p;
    int line;
    const char *file;
    cuzk_errbuf *eb;
    cuzk_toml_value *root;
    char *keybuf; /* dotted key being parsed, for messages */
} parser;

static cuzk_err perr(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cuzk_err perr(parser *ps, const char *fmt, ...)
{
    if (ps->eb) {
        int n = snprintf(ps->eb->msg, sizeof ps->eb->msg, "%s:%d: ", ps->file, ps->line);
        if (n < 0 || (size_t)n >= sizeof ps->eb->msg)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->eb->msg + n, sizeof ps->eb->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return CUZK_BAD_CONFIG;
}

static cuzk_err oom(parser *ps)
{
    return cuzk_errf(ps->eb, CUZK_NO_MEMORY, "%s: out of memory while parsing", ps->file);
}

/* Length of the text at ps->p shown in messages: up to 20 bytes, never past the line. */
static int snippet(parser *ps)
{
    int n = 0;
    while (n < 20 && ps->p + n < ps->end && ps->p[n] != '\n' && ps->p[n] != '\r')
        n++;
    return n;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

static bool at_eol(parser *ps)
{
    return ps->p >= ps->end || *ps->p == '\n' ||
           (*ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n');
}

/* After a header or a value: spaces, an optional comment, then end of line. */
static cuzk_err expect_eol(parser *ps, const char *after)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '#') {
        while (ps->p < ps->end && *ps->p != '\n')
            ps->p++;
    }
    if (!at_eol(ps))
        return perr(ps, "unexpected text '%.*s' after %s", snippet(ps), ps->p, after);
    if (ps->p < ps->end && *ps->p == '\r')
        ps->p++;
    if (ps->p < ps->end) {
        ps->p++;
        ps->line++;
    }
    return CUZK_OK;
}

/* Skips spaces, comments and newlines (inside arrays). */
static void skip_ws_nl(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == '#') {
            while (ps->p < ps->end && *ps->p != '\n')
                ps->p++;
        }
        if (ps->p < ps->end && *ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n')
            ps->p++;
        if (ps->p < ps->end && *ps->p == '\n') {
            ps->p++;
            ps->line++;
            continue;
        }
        return;
    }
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a "basic" or 'literal' single-line string at ps->p into a new NUL-terminated buffer.
 * what names the thing for messages ("key", "value"). */
static cuzk_err parse_string(parser *ps, char **out, const char *what)
{
    char q = *ps->p;
    if (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q)
        return perr(ps, "multi-line strings are not supported (%s)", what);
    ps->p++;
    /* The decoded string is never longer than its source (escapes shrink or stay). */
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != q && *ps->p != '\n') {
        /* An escaped character is skipped, but never a line break: single-line strings. */
        if (q == '"' && *ps->p == '\\' && ps->p + 1 < ps->end && ps->p[1] != '\n')
            ps->p++;
        ps->p++;
    }
    if (ps->p >= ps->end || *ps->p != q)
        return perr(ps, "unterminated string (%s)", what);
    size_t srclen = (size_t)(ps->p - start);
    char *o = cuzk_malloc(srclen + 1);
    if (!o)
        return oom(ps);
    size_t n = 0;
    for (const char *c = start; c < ps->p; c++) {
        unsigned char ch = (unsigned char)*c;
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
            cuzk_free(o);
            return perr(ps, "control character 0x%02x in string (%s); use an escape", ch, what);
        }
        if (q == '\'' || ch != '\\') {
            o[n++] = (char)ch;
            continue;
        }
        c++;
        switch (*c) {
        case 'b':
            o[n++] = '\b';
            break;
        case 't':
            o[n++] = '\t';
            break;
        case 'n':
            o[n++] = '\n';
            break;
        case 'f':
            o[n++] = '\f';
            break;
        case 'r':
            o[n++] = '\r';
            break;
        case '"':
            o[n++] = '"';
            break;
        case '\\':
            o[n++] = '\\';
            break;
        case 'u':
        case 'U': {
            int digits = *c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int k = 0; k < digits; k++) {
                char h = c + 1 + k < ps->p ? c[1 + k] : 0;
                int d = (h >= '0' && h <= '9')   ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                 : -1;
                if (d < 0) {
                    cuzk_free(o);
                    return perr(ps, "bad \\%c escape: need %d hex digits (%s)", *c, digits, what);
                }
                cp = cp * 16 + (uint32_t)d;
            }
            if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                cuzk_free(o);
                return perr(ps, "escape \\%c%0*X is not an allowed Unicode scalar value (%s)", *c,
                            digits, cp, what);
            }
            /* \uXXXX (6 source bytes) yields at most 3 bytes, \UXXXXXXXX (10) at most 4. */
            n += put_utf8(o + n, cp);
            c += digits;
            break;
        }
        default:
            cuzk_free(o);
            return perr(ps, "unknown escape '\\%c' in string (%s)", *c ? *c : '?', what);
        }
    }
    o[n] = 0;
    ps->p++; /* closing quote */
    *out = o;
    return CUZK_OK;
}

static bool is_bare_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* Parses a dotted key into parts (caller frees each and the array). */
static cuzk_err parse_key(parser *ps, char ***parts_out, size_t *n_out)
{
    char **parts = NULL;
    size_t n = 0, cap = 0;
    cuzk_err e = CUZK_OK;
    size_t kb = 0;
    ps->keybuf[0] = 0;
    for (;;) {
        skip_ws(ps);
        char *part = NULL;
        if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\'')) {
            if ((e = parse_string(ps, &part, "key")))
                goto fail;
        } else {
            const char *st = ps->p;
            while (ps->p < ps->end && is_bare_char(*ps->p))
                ps->p++;
            if (ps->p == st) {
                if (n == 0 && at_eol(ps))
                    e = perr(ps, "expected a key, found end of line");
                else if (n == 0)
                    e = perr(ps, "expected a key, found '%.*s'", snippet(ps), st);
                else
                    e = perr(ps, "expected a key after '.' in '%s'", ps->keybuf);
                goto fail;
            }
            part = cuzk_strndup(st, (size_t)(ps->p - st));
            if (!part) {
                e = oom(ps);
                goto fail;
            }
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            char **np = cuzk_realloc(parts, nc * sizeof *np);
            if (!np) {
                cuzk_free(part);
                e = oom(ps);
                goto fail;
            }
            parts = np;
            cap = nc;
        }
        parts[n++] = part;
        kb += (size_t)snprintf(ps->keybuf + kb, kb < 256 ? 256 - kb : 0, "%s%s", n > 1 ? "." : "",
                               part);
        if (kb > 255)
            kb = 255;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == '.') {
            ps->p++;
            continue;
        }
        break;
    }
    *parts_out = parts;
    *n_out = n;
    return CUZK_OK;
fail:
    for (size_t i = 0; i < n; i++)
        cuzk_free(parts[i]);
    cuzk_free(parts);
    return e;
}

static void free_parts(char **parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cuzk_free(parts[i]);
    cuzk_free(parts);
}

/* Integer with TOML's rules: optional sign (decimal only), digits with single underscores
 * between digits, no leading zeros, 0x/0o/0b prefixes for unsigned values. */
static cuzk_err parse_int_token(parser *ps, const char *t, size_t len, int64_t *out)
{
    const char *kb = ps->keybuf;
    size_t i = 0;
    bool neg = false;
    int base = 10;
    if (t[0] == '+' || t[0] == '-') {
        neg = t[0] == '-';
        i++;
    }
    if (len - i >= 2 && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'o' || t[i + 1] == 'b')) {
        if (i)
            return perr(ps, "key '%s': invalid integer '%.*s' (no sign allowed with a prefix)", kb,
                        (int)len, t);
        base = t[i + 1] == 'x' ? 16 : t[i + 1] == 'o' ? 8 : 2;
        i += 2;
    } else if (len - i > 1 && t[i] == '0') {
        return perr(ps, "key '%s': invalid integer '%.*s' (leading zeros are not allowed)", kb,
                    (int)len, t);
    }
    if (i >= len)
        return perr(ps, "key '%s': invalid integer '%.*s'", kb, (int)len, t);
    uint64_t acc = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    bool prev_digit = false;
    for (; i < len; i++) {
        char c = t[i];
        if (c == '_') {
            if (!prev_digit || i + 1 >= len)
                return perr(ps,
                            "key '%s': invalid integer '%.*s' (an underscore must sit "
                            "between digits)",
                            kb, (int)len, t);
            prev_digit = false;
            continue;
        }
        int d = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : 99;
        if (d >= base)
            return perr(ps, "key '%s': invalid integer '%.*s'", kb, (int)len, t);
        if (acc > (limit - (uint64_t)d) / (uint64_t)base)
            return perr(ps, "key '%s': integer '%.*s' is out of range (64-bit signed)", kb,
                        (int)len, t);
        acc = acc * (uint64_t)base + (uint64_t)d;
        prev_digit = true;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return CUZK_OK;
}

/* Float: [+-] int-part ( '.' digits )? ( [eE] [+-]? digits )? with at least one of the two
 * optional parts, underscores only between digits, or [+-](inf|nan). */
static cuzk_err parse_float_token(parser *ps, const char *t, size_t len, double *out)
{
    const char *kb = ps->keybuf;
    size_t i = 0;
    if (t[0] == '+' || t[0] == '-')
        i++;
    if (len - i == 3 && (memcmp(t + i, "inf", 3) == 0 || memcmp(t + i, "nan", 3) == 0)) {
        double v = t[i] == 'i' ? INFINITY : NAN;
        *out = t[0] == '-' ? -v : v;
        return CUZK_OK;
    }
    char buf[128];
    size_t bn = 0;
    if (len >= sizeof buf)
        return perr(ps, "key '%s': float '%.20s...' is too long", kb, t);
    /* Copy without underscores, validating the shape as we go. */
    int state = 0; /* 0 int part, 1 fraction, 2 exponent */
    size_t digits_in_part = 0;
    bool prev_digit = false;
    size_t int_start = i;
    if (i)
        buf[bn++] = t[0];
    for (; i < len; i++) {
        char c = t[i];
        if (c >= '0' && c <= '9') {
            if (state == 0 && digits_in_part == 1 && t[int_start] == '0')
                return perr(ps, "key '%s': invalid float '%.*s' (leading zeros are not allowed)",
                            kb, (int)len, t);
            buf[bn++] = c;
            digits_in_part++;
            prev_digit = true;
        } else if (c == '_') {
            if (!prev_digit || i + 1 >= len || !(t[i + 1] >= '0' && t[i + 1] <= '9'))
                goto bad;
            prev_digit = false;
        } else if (c == '.' && state == 0) {
            if (!digits_in_part)
                goto bad;
            buf[bn++] = c;
            state = 1;
            digits_in_part = 0;
            prev_digit = false;
        } else if ((c == 'e' || c == 'E') && state < 2) {
            if (!digits_in_part)
                goto bad;
            buf[bn++] = 'e';
            state = 2;
            digits_in_part = 0;
            prev_digit = false;
            if (i + 1 < len && (t[i + 1] == '+' || t[i + 1] == '-'))
                buf[bn++] = t[++i];
        } else {
            goto bad;
        }
    }
    if (!digits_in_part || state == 0)
        goto bad;
    buf[bn] = 0;
    errno = 0;
    char *endp;
    double v = strtod(buf, &endp);
    if (*endp)
        goto bad;
    if (errno == ERANGE && isinf(v))
        return perr(ps, "key '%s': float '%.*s' is out of range", kb, (int)len, t);
    *out = v;
    return CUZK_OK;
bad:
    return perr(ps, "key '%s': invalid float '%.*s'", kb, (int)len, t);
}

/* Parses one scalar value at ps->p into v (already allocated, type unset). */
static cuzk_err parse_scalar(parser *ps, cuzk_toml_value *v)
{
    const char *kb = ps->keybuf;
    if (ps->p >= ps->end || at_eol(ps) || *ps->p == '#' || *ps->p == ',' || *ps->p == ']')
        return perr(ps, "key '%s': expected a value", kb);
    char c = *ps->p;
    if (c == '"' || c == '\'') {
        v->type = CUZK_TOML_STRING;
        return parse_string(ps, &v->u.s, "value");
    }
    if (c == '{')
        return perr(ps, "key '%s': inline tables are not supported; use a [table] section", kb);
    if (c == '[')
        return perr(ps, "key '%s': nested arrays are not supported", kb);
    /* A token runs to the next delimiter. */
    const char *t = ps->p;
    while (ps->p < ps->end && *ps->p != ' ' && *ps->p != '\t' && *ps->p != ',' && *ps->p != ']' &&
           *ps->p != '#' && *ps->p != '\n' && *ps->p != '\r')
        ps->p++;
    size_t len = (size_t)(ps->p - t);
    if ((len == 4 && memcmp(t, "true", 4) == 0) || (len == 5 && memcmp(t, "false", 5) == 0)) {
        v->type = CUZK_TOML_BOOL;
        v->u.b = len == 4;
        return CUZK_OK;
    }
    /* Dates (1979-05-27, 07:32:00) are valid TOML but outside the subset. */
    if ((len >= 10 && t[4] == '-' && t[7] == '-' && t[0] >= '0' && t[0] <= '9') ||
        (len >= 5 && t[2] == ':' && t[0] >= '0' && t[0] <= '9'))
        return perr(ps, "key '%s': dates and times are not supported", kb);
    bool is_float = false;
    bool looks_numeric =
        len > 0 && (t[0] == '+' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9') ||
                    (len == 3 && (memcmp(t, "inf", 3) == 0 || memcmp(t, "nan", 3) == 0)));
    if (!looks_numeric)
        return perr(ps, "key '%s': invalid value '%.*s' (strings must be quoted)", kb,
                    (int)(len > 40 ? 40 : len), t);
    bool prefixed = len > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'o' || t[1] == 'b');
    for (size_t i = 0; i < len && !prefixed; i++)
        if (t[i] == '.' || t[i] == 'e' || t[i] == 'E' || t[i] == 'i' || t[i] == 'n')
            is_float = true;
    if (is_float) {
        v->type = CUZK_TOML_FLOAT;
        return parse_float_token(ps, t, len, &v->u.f);
    }
    v->type = CUZK_TOML_INT;
    return parse_int_token(ps, t, len, &v->u.i);
}

/* key = value into table t (dotted keys create sub-tables). */
static cuzk_err parse_keyval(parser *ps, cuzk_toml_value *t)
{
    char **parts;
    size_t np;
    cuzk_err e = parse_key(ps, &parts, &np);
    if (e)
        return e;
    int line = ps->line;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '=') {
        e = perr(ps, "expected '=' after key '%s'", ps->keybuf);
        goto out;
    }
    ps->p++;
    skip_ws(ps);
    for (size_t i = 0; i + 1 < np; i++) {
        cuzk_toml_value *c = table_find(t, parts[i], strlen(parts[i]));
        if (!c) {
            c = val_new(t, parts[i], CUZK_TOML_TABLE, line, ps->file);
            if (!c || !val_push(t, c)) {
                val_free(c);
                e = oom(ps);
                goto out;
            }
            c->defined = 2;
        } else if (c->type != CUZK_TOML_TABLE || c->defined != 2) {
            e = perr(ps, "key '%s': '%s' is already defined as %s%s (line %d)", ps->keybuf, c->path,
                     c->type == CUZK_TOML_TABLE ? "a [table]" : "a ",
                     c->type == CUZK_TOML_TABLE ? "" : cuzk_toml_type_name(c->type), c->line);
            goto out;
        }
        t = c;
    }
    cuzk_toml_value *prev = table_find(t, parts[np - 1], strlen(parts[np - 1]));
    if (prev) {
        e = perr(ps, "duplicate key '%s' (first defined on line %d)", prev->path, prev->line);
        goto out;
    }
    cuzk_toml_value *v = val_new(t, parts[np - 1], CUZK_TOML_STRING, line, ps->file);
    if (!v) {
        e = oom(ps);
        goto out;
    }
    v->type = 0;
    if (ps->p < ps->end && *ps->p == '[') {
        v->type = CUZK_TOML_ARRAY;
        ps->p++;
        for (;;) {
            skip_ws_nl(ps);
            if (ps->p >= ps->end) {
                e = perr(ps, "key '%s': unterminated array", ps->keybuf);
                break;
            }
            if (*ps->p == ']') {
                ps->p++;
                break;
            }
            cuzk_toml_value *el = val_new(v, NULL, CUZK_TOML_STRING, ps->line, ps->file);
            if (!el) {
                e = oom(ps);
                break;
            }
            el->type = 0;
            if ((e = parse_scalar(ps, el)) || !val_push(v, el)) {
                val_free(el);
                if (!e)
                    e = oom(ps);
                break;
            }
            skip_ws_nl(ps);
            if (ps->p >= ps->end) {
                e = perr(ps, "key '%s': unterminated array", ps->keybuf);
                break;
            }
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == ']') {
                ps->p++;
                break;
            }
            e = perr(ps, "key '%s': expected ',' or ']' in array", ps->keybuf);
            break;
        }
    } else {
        e = parse_scalar(ps, v);
    }
    if (e || (e = expect_eol(ps, "the value")) || !val_push(t, v)) {
        val_free(v);
        if (!e)
            e = oom(ps);
    }
out:
    free_parts(parts, np);
    return e;
}

/* [a.b] or [[a.b]]; sets *cur to the table that following keys go into. */
static cuzk_err parse_header(parser *ps, cuzk_toml_value **cur)
{
    bool arr = ps->p + 1 < ps->end && ps->p[1] == '[';
    ps->p += arr ? 2 : 1;
    char **parts;
    size_t np;
    cuzk_err e = parse_key(ps, &parts, &np);
    if (e)
        return e;
    skip_ws(ps);
    if (arr ? (ps->end - ps->p < 2 || ps->p[0] != ']' || ps->p[1] != ']')
            : (ps->p >= ps->end || *ps->p != ']')) {
        e = perr(ps, "expected '%s' after table name '%s'", arr ? "]]" : "]", ps->keybuf);
        goto out;
    }
    ps->p += arr ? 2 : 1;
    int line = ps->line;
    cuzk_toml_value *t = ps->root;
    for (size_t i = 0; i + 1 < np; i++) {
        cuzk_toml_value *c = table_find(t, parts[i], strlen(parts[i]));
        if (!c) {
            c = val_new(t, parts[i], CUZK_TOML_TABLE, line, ps->file);
            if (!c || !val_push(t, c)) {
                val_free(c);
                e = oom(ps);
                goto out;
            }
        } else if (c->type == CUZK_TOML_TABLE_ARRAY) {
            c = c->items[c->n - 1]; /* [a.b] after [[a]] extends the last element of a */
        } else if (c->type != CUZK_TOML_TABLE) {
            e = perr(ps, "table '%s': '%s' is already a %s (line %d)", ps->keybuf, c->path,
                     cuzk_toml_type_name(c->type), c->line);
            goto out;
        }
        t = c;
    }
    const char *last = parts[np - 1];
    cuzk_toml_value *c = table_find(t, last, strlen(last));
    if (arr) {
        if (!c) {
            c = val_new(t, last, CUZK_TOML_TABLE_ARRAY, line, ps->file);
            if (!c || !val_push(t, c)) {
                val_free(c);
                e = oom(ps);
                goto out;
            }
        } else if (c->type != CUZK_TOML_TABLE_ARRAY) {
            e = perr(ps, "[[%s]]: '%s' is already %s%s (line %d)", ps->keybuf, c->path,
                     c->type == CUZK_TOML_TABLE ? "a table" : "a ",
                     c->type == CUZK_TOML_TABLE ? "" : cuzk_toml_type_name(c->type), c->line);
            goto out;
        }
        cuzk_toml_value *el = val_new(c, NULL, CUZK_TOML_TABLE, line, ps->file);
        if (!el || !val_push(c, el)) {
            val_free(el);
            e = oom(ps);
            goto out;
        }
        el->defined = 1;
        *cur = el;
    } else {
        if (!c) {
            c = val_new(t, last, CUZK_TOML_TABLE, line, ps->file);
            if (!c || !val_push(t, c)) {
                val_free(c);
                e = oom(ps);
                goto out;
            }
        } else if (c->type != CUZK_TOML_TABLE || c->defined != 0) {
            if (c->type == CUZK_TOML_TABLE)
                e = perr(ps, "table [%s] is defined twice (first on line %d)", ps->keybuf, c->line);
            else
                e = perr(ps, "[%s]: '%s' is already %s (line %d)", ps->keybuf, c->path,
                         c->type == CUZK_TOML_TABLE_ARRAY ? "an array of tables"
                                                          : cuzk_toml_type_name(c->type),
                         c->line);
            goto out;
        }
        c->defined = 1;
        c->line = line;
        *cur = c;
    }
    e = expect_eol(ps, "the table header");
out:
    free_parts(parts, np);
    return e;
}


cuzk_err cuzk_toml_parse(cuzk_toml **out, const char *name, const char *text, size_t len,
                         cuzk_errbuf *eb)
{
    *out = NULL;
    if (!name)
        name = "config";
    if (len > CUZK_TOML_MAX_SIZE)
        return cuzk_errf(eb, CUZK_BAD_CONFIG,
                         "%s: %zu bytes is larger than the %u-byte limit "
                         "for a config file",
                         name, len, CUZK_TOML_MAX_SIZE);
    /* Whole-document checks first, so the line-based parser can rely on them. */
    int line = 1;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)text[i];
        size_t k = cuzk__utf8_seq((const unsigned char *)text + i, len - i);
        if (c == 0)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%d: NUL byte in file", name, line);
        if (k == 0)
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%d: invalid UTF-8 (byte 0x%02x)", name, line,
                             c);
        if (c == '\r' && !(i + 1 < len && text[i + 1] == '\n'))
            return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%d: lone carriage return", name, line);
        if (c == '\n')
            line++;
        i += k;
    }
    cuzk_toml *doc = cuzk_calloc(1, sizeof *doc);
    char keybuf[260];
    if (!doc || !(doc->name = cuzk_strdup(name)) ||
        !(doc->root = val_new(NULL, NULL, CUZK_TOML_TABLE, 1, doc->name))) {
        cuzk_toml_free(doc);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory while parsing", name);
    }
    doc->root->path[0] = 0; /* the root has no name: children are "a", not "[0].a" */
    doc->root->defined = 1;
    doc->root->used = true;
    parser ps = {.s = text,
                 .end = text + len,
                 .p = text,
                 .line = 1,
                 .file = doc->name,
                 .eb = eb,
                 .root = doc->root,
                 .keybuf = keybuf};
    /* Skip a UTF-8 byte order mark. */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        ps.p += 3;
    cuzk_toml_value *cur = doc->root;
    cuzk_err e = CUZK_OK;
    while (ps.p < ps.end) {
        skip_ws(&ps);
        if (ps.p >= ps.end)
            break;
        char c = *ps.p;
        if (c == '#' || at_eol(&ps)) {
            e = expect_eol(&ps, "a comment");
        } else if (c == '[') {
            e = parse_header(&ps, &cur);
        } else {
            e = parse_keyval(&ps, cur);
        }
        if (e)
            break;
    }
    if (e) {
        cuzk_toml_free(doc);
        return e;
    }
    *out = doc;
    return CUZK_OK;
}

cuzk_err cuzk_toml_load(cuzk_toml **out, const char *path, cuzk_errbuf *eb)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cuzk_errf(eb, CUZK_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = cuzk_malloc(CUZK_TOML_MAX_SIZE + 1);
    if (!buf) {
        fclose(f);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, CUZK_TOML_MAX_SIZE + 1, f);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    cuzk_err e;
    if (err)
        e = cuzk_errf(eb, CUZK_IO, "%s: read error: %s", path, strerror(err));
    else
        e = cuzk_toml_parse(out, path, buf, n, eb);
    cuzk_free(buf);
    return e;
}

void cuzk_toml_free(cuzk_toml *doc)
{
    if (!doc)
        return;
    val_free(doc->root);
    cuzk_free(doc->name);
    cuzk_free(doc);
}

const cuzk_toml_value *cuzk_toml_root(const cuzk_toml *doc)
{
    return doc ? doc->root : NULL;
}

/* ------------------------------------------------------------------ navigation */

static void mark(const cuzk_toml_value *cv)
{
    /* Lookups are logically const: the used mark is bookkeeping for check_unused. */
    ((cuzk_toml_value *)cv)->used = true;
}

void cuzk_toml_mark_used(const cuzk_toml_value *v)
{
    if (!v)
        return;
    mark(v);
    for (size_t i = 0; i < v->n; i++)
        cuzk_toml_mark_used(v->items[i]);
}

const cuzk_toml_value *cuzk_toml_get(const cuzk_toml_value *table, const char *path)
{
    const cuzk_toml_value *t = table;
    const char *p = path;
    if (!t || !p)
        return NULL;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t klen = dot ? (size_t)(dot - p) : strlen(p);
        const cuzk_toml_value *c = table_find(t, p, klen);
        if (!c)
            return NULL;
        if (!dot) {
            mark(c);
            return c;
        }
        if (c->type != CUZK_TOML_TABLE)
            return NULL;
        mark(c);
        t = c;
        p = dot + 1;
    }
}

cuzk_toml_type cuzk_toml_type_of(const cuzk_toml_value *v)
{
    return v->type;
}

const char *cuzk_toml_type_name(cuzk_toml_type t)
{
    switch (t) {
    case CUZK_TOML_STRING:
        return "string";
    case CUZK_TOML_INT:
        return "integer";
    case CUZK_TOML_FLOAT:
        return "float";
    case CUZK_TOML_BOOL:
        return "boolean";
    case CUZK_TOML_ARRAY:
        return "array";
    case CUZK_TOML_TABLE:
        return "table";
    case CUZK_TOML_TABLE_ARRAY:
        return "array of tables";
    }
    return "value";
}

int cuzk_toml_line(const cuzk_toml_value *v)
{
    return v->line;
}

const char *cuzk_toml_path(const cuzk_toml_value *v)
{
    return v->path;
}

const char *cuzk_toml_file(const cuzk_toml_value *v)
{
    return v->file;
}

size_t cuzk_toml_len(const cuzk_toml_value *v)
{
    return v && (v->type == CUZK_TOML_ARRAY || v->type == CUZK_TOML_TABLE ||
                 v->type == CUZK_TOML_TABLE_ARRAY)
               ? v->n
               : 0;
}

const cuzk_toml_value *cuzk_toml_at(const cuzk_toml_value *v, size_t i)
{
    if (!v || i >= cuzk_toml_len(v))
        return NULL;
    if (v->type != CUZK_TOML_TABLE)
        mark(v->items[i]);
    return v->items[i];
}

const char *cuzk_toml_key_at(const cuzk_toml_value *v, size_t i)
{
    if (!v || v->type != CUZK_TOML_TABLE || i >= v->n)
        return NULL;
    return v->items[i]->key;
}

/* ------------------------------------------------------------------ typed access */

cuzk_err cuzk_toml_errf(const cuzk_toml_value *v, cuzk_errbuf *eb, const char *fmt, ...)
{
    if (eb) {
        bool tab = v->type == CUZK_TOML_TABLE || v->type == CUZK_TOML_TABLE_ARRAY;
        int n = snprintf(eb->msg, sizeof eb->msg, "%s:%d: %s '%s': ", v->file, v->line,
                         tab ? "table" : "key", v->path);
        if (n < 0 || (size_t)n >= sizeof eb->msg)
            n = 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(eb->msg + n, sizeof eb->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return CUZK_BAD_CONFIG;
}

static cuzk_err want(const cuzk_toml_value *v, cuzk_toml_type t, cuzk_errbuf *eb)
{
    mark(v);
    if (v->type == t)
        return CUZK_OK;
    /* Keys are always named by their own line: for errors in keys, not tables. */
    if (eb) {
        snprintf(eb->msg, sizeof eb->msg, "%s:%d: key '%s': expected %s, got %s", v->file, v->line,
                 v->path, cuzk_toml_type_name(t), cuzk_toml_type_name(v->type));
    }
    return CUZK_BAD_CONFIG;
}

cuzk_err cuzk_toml_as_string(const cuzk_toml_value *v, const char **out, cuzk_errbuf *eb)
{
    cuzk_err e = want(v, CUZK_TOML_STRING, eb);
    if (!e)
        *out = v->u.s;
    return e;
}

cuzk_err cuzk_toml_as_int(const cuzk_toml_value *v, int64_t *out, cuzk_errbuf *eb)
{
    cuzk_err e = want(v, CUZK_TOML_INT, eb);
    if (!e)
        *out = v->u.i;
    return e;
}

cuzk_err cuzk_toml_as_float(const cuzk_toml_value *v, double *out, cuzk_errbuf *eb)
{
    if (v->type == CUZK_TOML_INT) {
        mark(v);
        /* Every integer up to 2^53 in magnitude is exactly a double (IEEE 754 binary64). */
        if (v->u.i > (1LL << 53) || v->u.i < -(1LL << 53))
            return cuzk_toml_errf(v, eb,
                                  "integer %lld cannot be represented exactly as a "
                                  "float",
                                  (long long)v->u.i);
        *out = (double)v->u.i;
        return CUZK_OK;
    }
    cuzk_err e = want(v, CUZK_TOML_FLOAT, eb);
    if (!e)
        *out = v->u.f;
    return e;
}

cuzk_err cuzk_toml_as_bool(const cuzk_toml_value *v, bool *out, cuzk_errbuf *eb)
{
    cuzk_err e = want(v, CUZK_TOML_BOOL, eb);
    if (!e)
        *out = v->u.b;
    return e;
}

cuzk_err cuzk_toml_as_size(const cuzk_toml_value *v, uint64_t *out, cuzk_errbuf *eb)
{
    mark(v);
    if (v->type == CUZK_TOML_INT) {
        if (v->u.i < 0)
            return cuzk_toml_errf(v, eb, "size must not be negative, got %lld", (long long)v->u.i);
        *out = (uint64_t)v->u.i;
        return CUZK_OK;
    }
    if (v->type != CUZK_TOML_STRING)
        return cuzk_toml_errf(v, eb, "expected a size (\"50GiB\" or an integer), got %s",
                              cuzk_toml_type_name(v->type));
    cuzk_errbuf sub;
    if (cuzk_parse_size(v->u.s, out, &sub))
        return cuzk_toml_errf(v, eb, "%s", sub.msg);
    return CUZK_OK;
}

cuzk_err cuzk_toml_as_duration_ns(const cuzk_toml_value *v, uint64_t *out_ns, cuzk_errbuf *eb)
{
    mark(v);
    if (v->type != CUZK_TOML_STRING)
        return cuzk_toml_errf(v, eb,
                              "expected a duration string like \"30s\" or \"500ms\", "
                              "got %s",
                              cuzk_toml_type_name(v->type));
    cuzk_errbuf sub;
    if (cuzk_parse_duration(v->u.s, out_ns, &sub))
        return cuzk_toml_errf(v, eb, "%s", sub.msg);
    return CUZK_OK;
}

#define CUZK__TOML_GETTER(NAME, T, AS)                                                             \
    cuzk_err NAME(const cuzk_toml_value *table, const char *path, T *out, cuzk_errbuf *eb)         \
    {                                                                                              \
        const cuzk_toml_value *v = cuzk_toml_get(table, path);                                     \
        return v ? AS(v, out, eb) : CUZK_OK;                                                       \
    }

CUZK__TOML_GETTER(cuzk_toml_get_string, const char *, cuzk_toml_as_string)
CUZK__TOML_GETTER(cuzk_toml_get_int, int64_t, cuzk_toml_as_int)
CUZK__TOML_GETTER(cuzk_toml_get_float, double, cuzk_toml_as_float)
CUZK__TOML_GETTER(cuzk_toml_get_bool, bool, cuzk_toml_as_bool)
CUZK__TOML_GETTER(cuzk_toml_get_size, uint64_t, cuzk_toml_as_size)
CUZK__TOML_GETTER(cuzk_toml_get_duration_ns, uint64_t, cuzk_toml_as_duration_ns)

cuzk_err cuzk_toml_get_int_range(const cuzk_toml_value *table, const char *path, int64_t lo,
                                 int64_t hi, int64_t *out, cuzk_errbuf *eb)
{
    const cuzk_toml_value *v = cuzk_toml_get(table, path);
    if (!v)
        return CUZK_OK;
    int64_t x;
    cuzk_err e = cuzk_toml_as_int(v, &x, eb);
    if (e)
        return e;
    if (x < lo || x > hi)
        return cuzk_toml_errf(v, eb, "%lld is out of range [%lld, %lld]", (long long)x,
                              (long long)lo, (long long)hi);
    *out = x;
    return CUZK_OK;
}

cuzk_err cuzk_toml_get_array(const cuzk_toml_value *table, const char *path, cuzk_toml_type elem,
                             const cuzk_toml_value **out, cuzk_errbuf *eb)
{
    *out = NULL;
    const cuzk_toml_value *v = cuzk_toml_get(table, path);
    if (!v)
        return CUZK_OK;
    cuzk_err e = want(v, CUZK_TOML_ARRAY, eb);
    if (e)
        return e;
    for (size_t i = 0; i < v->n; i++) {
        mark(v->items[i]);
        if (elem && v->items[i]->type != elem)
            return cuzk_toml_errf(v->items[i], eb, "expected %s, got %s", cuzk_toml_type_name(elem),
                                  cuzk_toml_type_name(v->items[i]->type));
    }
    *out = v;
    return CUZK_OK;
}

cuzk_err cuzk_toml_get_tables(const cuzk_toml_value *table, const char *path,
                              const cuzk_toml_value **out, cuzk_errbuf *eb)
{
    *out = NULL;
    const cuzk_toml_value *v = cuzk_toml_get(table, path);
    if (!v)
        return CUZK_OK;
    cuzk_err e = want(v, CUZK_TOML_TABLE_ARRAY, eb);
    if (!e)
        *out = v;
    return e;
}

cuzk_err cuzk_toml_get_table(const cuzk_toml_value *table, const char *path,
                             const cuzk_toml_value **out, cuzk_errbuf *eb)
{
    *out = NULL;
    const cuzk_toml_value *v = cuzk_toml_get(table, path);
    if (!v)
        return CUZK_OK;
    cuzk_err e = want(v, CUZK_TOML_TABLE, eb);
    if (!e)
        *out = v;
    return e;
}

/* ------------------------------------------------------------------ unknown keys */

typedef struct {
    const cuzk_toml_value **out;
    size_t max, n;
} unused_acc;

/* Inserts keeping out[] sorted by line (small n: insertion sort is fine). */
static void unused_add(unused_acc *a, const cuzk_toml_value *v)
{
    size_t pos = a->n < a->max ? a->n : a->max;
    while (pos > 0 && a->out[pos - 1]->line > v->line)
        pos--;
    if (pos < a->max) {
        size_t last = a->n < a->max ? a->n : a->max - 1;
        memmove(a->out + pos + 1, a->out + pos, (last - pos) * sizeof *a->out);
        a->out[pos] = v;
    }
    a->n++;
}

static void unused_walk(const cuzk_toml_value *v, unused_acc *a)
{
    switch (v->type) {
    case CUZK_TOML_TABLE:
        if (!v->used && v->n == 0) {
            unused_add(a, v);
            return;
        }
        for (size_t i = 0; i < v->n; i++)
            unused_walk(v->items[i], a);
        return;
    case CUZK_TOML_TABLE_ARRAY:
        if (!v->used) {
            unused_add(a, v);
            return;
        }
        for (size_t i = 0; i < v->n; i++)
            unused_walk(v->items[i], a);
        return;
    default:
        if (!v->used)
            unused_add(a, v);
        return;
    }
}

size_t cuzk_toml_unused(const cuzk_toml *doc, const cuzk_toml_value **out, size_t max)
{
    unused_acc a = {out, out ? max : 0, 0};
    if (doc)
        unused_walk(doc->root, &a);
    return a.n;
}

cuzk_err cuzk_toml_check_unused(const cuzk_toml *doc, cuzk_errbuf *eb)
{
    const cuzk_toml_value *first;
    if (cuzk_toml_unused(doc, &first, 1) == 0)
        return CUZK_OK;
    const char *what = first->type == CUZK_TOML_TABLE         ? "table"
                       : first->type == CUZK_TOML_TABLE_ARRAY ? "array of tables"
                                                              : "key";
    return cuzk_errf(eb, CUZK_BAD_CONFIG, "%s:%d: unknown %s '%s'", first->file, first->line, what,
                     first->path);
}
