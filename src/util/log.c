/* Leveled structured logging; see include/cuzk/log.h for the format and the field syntax. */
#include "cuzk/log.h"

#include "util/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "cuzk/alloc.h"

int cuzk__log_level = CUZK_LOG_LEVEL_INFO;
static int cuzk__log_format = CUZK_LOG_FORMAT_TEXT;
static int cuzk__log_fd = 2;
static cuzk_log_sink_fn cuzk__log_sink;
static void *cuzk__log_sink_ctx;
static pthread_mutex_t cuzk__log_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const cuzk__level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

void cuzk_log_set_level(cuzk_log_level level)
{
    if (level < CUZK_LOG_LEVEL_OFF)
        level = CUZK_LOG_LEVEL_OFF;
    if (level > CUZK_LOG_LEVEL_TRACE)
        level = CUZK_LOG_LEVEL_TRACE;
    __atomic_store_n(&cuzk__log_level, (int)level, __ATOMIC_RELAXED);
}

cuzk_log_level cuzk_log_get_level(void)
{
    return (cuzk_log_level)__atomic_load_n(&cuzk__log_level, __ATOMIC_RELAXED);
}

const char *cuzk_log_level_name(cuzk_log_level level)
{
    if (level < CUZK_LOG_LEVEL_ERROR || level > CUZK_LOG_LEVEL_TRACE)
        return "OFF";
    return cuzk__level_names[level];
}

cuzk_err cuzk_log_parse_level(const char *s, cuzk_log_level *out, cuzk_errbuf *eb)
{
    static const struct {
        const char *name;
        cuzk_log_level level;
    } names[] = {{"error", CUZK_LOG_LEVEL_ERROR},  {"warn", CUZK_LOG_LEVEL_WARN},
                 {"warning", CUZK_LOG_LEVEL_WARN}, {"info", CUZK_LOG_LEVEL_INFO},
                 {"debug", CUZK_LOG_LEVEL_DEBUG},  {"trace", CUZK_LOG_LEVEL_TRACE},
                 {"off", CUZK_LOG_LEVEL_OFF}};
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].level;
            return CUZK_OK;
        }
    }
    return cuzk_errf(eb, CUZK_INVALID_ARGUMENT,
                     "log level '%s' is not one of error, warn, info, debug, trace, off",
                     s ? s : "(null)");
}

void cuzk_log_set_format(cuzk_log_format fmt)
{
    __atomic_store_n(&cuzk__log_format, (int)fmt, __ATOMIC_RELAXED);
}

cuzk_err cuzk_log_parse_format(const char *s, cuzk_log_format *out, cuzk_errbuf *eb)
{
    if (s && strcasecmp(s, "text") == 0) {
        *out = CUZK_LOG_FORMAT_TEXT;
        return CUZK_OK;
    }
    if (s && strcasecmp(s, "json") == 0) {
        *out = CUZK_LOG_FORMAT_JSON;
        return CUZK_OK;
    }
    return cuzk_errf(eb, CUZK_INVALID_ARGUMENT, "log format '%s' is not one of text, json",
                     s ? s : "(null)");
}

void cuzk_log_set_fd(int fd)
{
    pthread_mutex_lock(&cuzk__log_mu);
    cuzk__log_fd = fd;
    cuzk__log_sink = NULL;
    cuzk__log_sink_ctx = NULL;
    pthread_mutex_unlock(&cuzk__log_mu);
}

void cuzk_log_set_file(FILE *f)
{
    fflush(f);
    cuzk_log_set_fd(fileno(f));
}

void cuzk_log_set_sink(cuzk_log_sink_fn fn, void *ctx)
{
    pthread_mutex_lock(&cuzk__log_mu);
    cuzk__log_sink = fn;
    cuzk__log_sink_ctx = ctx;
    if (!fn)
        cuzk__log_fd = 2;
    pthread_mutex_unlock(&cuzk__log_mu);
}

/* ------------------------------------------------------------------ string builder */

/* Grows from an inline buffer to the heap, never beyond `cap` bytes; past that it records the
 * truncation and drops further text, so a runaway value cannot make a log line unbounded. */
typedef struct {
    char *p;
    size_t len, size, cap;
    bool heap, trunc;
    char inl[1024];
} cuzk__sb;

static void sb_init(cuzk__sb *b, size_t cap)
{
    b->p = b->inl;
    b->len = 0;
    b->size = sizeof b->inl;
    b->cap = cap;
    b->heap = false;
    b->trunc = false;
}

static void sb_done(cuzk__sb *b)
{
    if (b->heap)
        cuzk_free(b->p);
}

/* Makes room for `want` bytes in total; false if the heap is exhausted. */
static bool sb_grow(cuzk__sb *b, size_t want)
{
    if (want <= b->size)
        return true;
    size_t ns = b->size * 2;
    while (ns < want)
        ns *= 2;
    char *np = cuzk_malloc(ns);
    if (!np)
        return false;
    memcpy(np, b->p, b->len);
    if (b->heap)
        cuzk_free(b->p);
    b->p = np;
    b->size = ns;
    b->heap = true;
    return true;
}

/* Appends what fits under the cap; once anything was cut, later text is dropped too, so a
 * truncated line is a prefix of the full one. */
static void sb_putn(cuzk__sb *b, const char *s, size_t n)
{
    if (b->trunc)
        return;
    if (n > b->cap - b->len) {
        n = b->cap - b->len;
        b->trunc = true;
    }
    if (!sb_grow(b, b->len + n)) {
        b->trunc = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Appends past the cap (for the line terminator); best effort if the heap is exhausted. */
static void sb_force(cuzk__sb *b, const char *s)
{
    size_t n = strlen(s);
    if (!sb_grow(b, b->len + n)) {
        if (b->size < n)
            return;
        /* overwrite the tail rather than lose the newline */
        b->len = b->size - n < b->len ? b->size - n : b->len;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void sb_puts(cuzk__sb *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

static void sb_putc(cuzk__sb *b, char c)
{
    sb_putn(b, &c, 1);
}

static void sb_printf(cuzk__sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(cuzk__sb *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Escapes s for the text format: \" \\ \n \r \t, other control bytes and invalid UTF-8 as
 * \xNN. Valid non-ASCII UTF-8 passes through. */
static void put_text_escaped(cuzk__sb *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t k = cuzk__utf8_seq(u + i, n - i);
        if (c == '"' || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c == '\n') {
            sb_puts(b, "\\n");
        } else if (c == '\r') {
            sb_puts(b, "\\r");
        } else if (c == '\t') {
            sb_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f || k == 0) {
            sb_printf(b, "\\x%02x", c);
        } else {
            sb_putn(b, s + i, k);
            i += k;
            continue;
        }
        i++;
    }
}

/* RFC 8259 string body; invalid UTF-8 bytes become U+FFFD so the line stays valid JSON. */
static void put_json_escaped(cuzk__sb *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t k = cuzk__utf8_seq(u + i, n - i);
        if (c == '"' || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c == '\n') {
            sb_puts(b, "\\n");
        } else if (c == '\r') {
            sb_puts(b, "\\r");
        } else if (c == '\t') {
            sb_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            sb_printf(b, "\\u%04x", c);
        } else if (k == 0) {
            sb_puts(b, "\\ufffd");
        } else {
            sb_putn(b, s + i, k);
            i += k;
            continue;
        }
        i++;
    }
}

static bool text_needs_quotes(const char *s, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = cuzk__utf8_seq((const unsigned char *)s + i, n - i);
        if (c <= 0x20 || c == '"' || c == '=' || c == '\\' || c == 0x7f || k == 0)
            return true;
        i += k;
    }
    return false;
}

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_json_number(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return false;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
    } else {
        return false;
    }
    if (i < n && s[i] == '.') {
        i++;
        size_t d = i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == d)
            return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
        if (i == d)
            return false;
    }
    return i == n;
}

/* ------------------------------------------------------------------ field formatting */

/* Formats one printf conversion starting at fmt[0] == '%' into b, consuming its arguments
 * from *ap according to the length modifier and conversion (C11 7.21.6.1). Returns the number
 * of format bytes consumed and sets *numeric when the conversion is a decimal number. Stars
 * are resolved into digits first so the final snprintf gets exactly one value argument. */
static size_t fmt_one(cuzk__sb *b, const char *fmt, va_list *ap, bool *numeric)
{
    char spec[64];
    size_t sl = 0, i = 1;
    spec[sl++] = '%';
    *numeric = false;
    if (fmt[i] == '%') {
        sb_putc(b, '%');
        return 2;
    }
    while (fmt[i] && strchr("-+ #0'", fmt[i]) && sl < 16)
        spec[sl++] = fmt[i++];
    if (fmt[i] == '*') {
        int w = va_arg(*ap, int);
        i++;
        if (w < 0) {
            spec[sl++] = '-';
            w = -w;
        }
        sl += (size_t)snprintf(spec + sl, sizeof spec - sl, "%d", w);
    } else {
        while (isdigit((unsigned char)fmt[i]) && sl < 30)
            spec[sl++] = fmt[i++];
    }
    if (fmt[i] == '.') {
        i++;
        if (fmt[i] == '*') {
            int p = va_arg(*ap, int);
            i++;
            if (p >= 0)
                sl += (size_t)snprintf(spec + sl, sizeof spec - sl, ".%d", p);
        } else {
            spec[sl++] = '.';
            while (isdigit((unsigned char)fmt[i]) && sl < 44)
                spec[sl++] = fmt[i++];
        }
    }
    /* length modifier: 0 none, 1 hh, 2 h, 3 l, 4 ll, 5 z, 6 j, 7 t, 8 L */
    int lm = 0;
    if (fmt[i] == 'h' && fmt[i + 1] == 'h')
        lm = 1, i += 2;
    else if (fmt[i] == 'h')
        lm = 2, i++;
    else if (fmt[i] == 'l' && fmt[i + 1] == 'l')
        lm = 4, i += 2;
    else if (fmt[i] == 'l')
        lm = 3, i++;
    else if (fmt[i] == 'z')
        lm = 5, i++;
    else if (fmt[i] == 'j')
        lm = 6, i++;
    else if (fmt[i] == 't')
        lm = 7, i++;
    else if (fmt[i] == 'L')
        lm = 8, i++;
    char conv = fmt[i];
    if (!conv)
        return i; /* dangling '%' at the end: the compiler's format check rejects this */
    i++;

    /* The final spec uses a normalised length modifier matching the promoted argument. */
    static const char *const lmstr[] = {"", "hh", "h", "l", "ll", "z", "j", "t", "L"};
    char tmp[256];
    int n = -1;
    char *big = NULL;
#define CUZK__FMT_VAL(T)                                                                           \
    do {                                                                                           \
        T v_ = va_arg(*ap, T);                                                                     \
        snprintf(spec + sl, sizeof spec - sl, "%s%c", lmstr[lm], conv);                            \
        n = snprintf(tmp, sizeof tmp, spec, v_);                                                   \
        if (n >= (int)sizeof tmp) {                                                                \
            size_t want_ = (size_t)n + 1 < CUZK_LOG_MAX_LINE ? (size_t)n + 1 : CUZK_LOG_MAX_LINE;  \
            big = cuzk_malloc(want_);                                                              \
            if (big)                                                                               \
                n = snprintf(big, want_, spec, v_);                                                \
            if (n >= (int)want_)                                                                   \
                n = (int)want_ - 1;                                                                \
        }                                                                                          \
    } while (0)

    switch (conv) {
    case 'd':
    case 'i':
        *numeric = true;
        if (lm == 3)
            CUZK__FMT_VAL(long);
        else if (lm == 4)
            CUZK__FMT_VAL(long long);
        else if (lm == 5)
            CUZK__FMT_VAL(ssize_t);
        else if (lm == 6)
            CUZK__FMT_VAL(intmax_t);
        else if (lm == 7)
            CUZK__FMT_VAL(ptrdiff_t);
        else
            CUZK__FMT_VAL(int);
        break;
    case 'u':
    case 'o':
    case 'x':
    case 'X':
        *numeric = conv == 'u';
        if (lm == 3)
            CUZK__FMT_VAL(unsigned long);
        else if (lm == 4)
            CUZK__FMT_VAL(unsigned long long);
        else if (lm == 5)
            CUZK__FMT_VAL(size_t);
        else if (lm == 6)
            CUZK__FMT_VAL(uintmax_t);
        else if (lm == 7)
            CUZK__FMT_VAL(ptrdiff_t);
        else
            CUZK__FMT_VAL(unsigned);
        break;
    case 'c':
        if (lm == 3)
            CUZK__FMT_VAL(wint_t);
        else
            CUZK__FMT_VAL(int);
        break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        *numeric = conv != 'a' && conv != 'A';
        if (lm == 8)
            CUZK__FMT_VAL(long double);
        else
            CUZK__FMT_VAL(double);
        break;
    case 's': {
        if (lm == 3) {
            CUZK__FMT_VAL(const wchar_t *);
        } else {
            const char *s = va_arg(*ap, const char *);
            if (!s)
                s = "(null)";
            /* Fast path for a plain %s: no copy through snprintf. */
            if (sl == 1) {
                sb_puts(b, s);
                return i;
            }
            snprintf(spec + sl, sizeof spec - sl, "s");
            n = snprintf(tmp, sizeof tmp, spec, s);
            if (n >= (int)sizeof tmp) {
                size_t want = (size_t)n + 1 < CUZK_LOG_MAX_LINE ? (size_t)n + 1 : CUZK_LOG_MAX_LINE;
                big = cuzk_malloc(want);
                if (big)
                    n = snprintf(big, want, spec, s);
                if (n >= (int)want)
                    n = (int)want - 1;
            }
        }
        break;
    }
    case 'p':
        lm = 0;
        CUZK__FMT_VAL(void *);
        break;
    case 'n':
        (void)va_arg(*ap, void *); /* %n is never honoured in a log line */
        return i;
    default:
        return i; /* unknown conversion: the compiler's format check rejects it */
    }
#undef CUZK__FMT_VAL
    if (n > 0) {
        if (big)
            sb_putn(b, big, (size_t)n);
        else
            sb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
    }
    cuzk_free(big);
    return i;
}

/* Emits the fields described by `fields` (see log.h) into line. */
static void put_fields(cuzk__sb *line, int json, const char *fields, va_list *ap)
{
    const char *f = fields;
    bool first = true;
    if (json)
        sb_puts(line, ",\"fields\":{");
    while (*f) {
        while (*f == ' ')
            f++;
        if (!*f)
            break;
        /* key: up to '=' (or the whole token when there is none, with an empty key) */
        const char *k = f;
        while (*f && *f != '=' && *f != ' ' && *f != '%')
            f++;
        size_t klen = 0;
        const char *key = "field";
        if (*f == '=') {
            key = k;
            klen = (size_t)(f - k);
            f++;
        } else {
            f = k;
            klen = strlen(key);
        }
        /* value: literal text and conversions up to the next space outside a conversion */
        cuzk__sb v;
        sb_init(&v, CUZK_LOG_MAX_LINE);
        int nconv = 0, nlit = 0;
        bool numeric = false;
        while (*f && *f != ' ') {
            if (*f == '%' && f[1] != '%') {
                bool num;
                f += fmt_one(&v, f, ap, &num);
                nconv++;
                numeric = num;
            } else if (*f == '%') {
                sb_putc(&v, '%');
                f += 2;
                nlit++;
            } else {
                sb_putc(&v, *f++);
                nlit++;
            }
        }
        if (json) {
            if (!first)
                sb_putc(line, ',');
            sb_putc(line, '"');
            put_json_escaped(line, key, klen);
            sb_puts(line, "\":");
            if (nconv == 1 && nlit == 0 && numeric && is_json_number(v.p, v.len)) {
                sb_putn(line, v.p, v.len);
            } else {
                sb_putc(line, '"');
                put_json_escaped(line, v.p, v.len);
                sb_putc(line, '"');
            }
        } else {
            sb_putc(line, ' ');
            sb_putn(line, key, klen);
            sb_putc(line, '=');
            if (text_needs_quotes(v.p, v.len)) {
                sb_putc(line, '"');
                put_text_escaped(line, v.p, v.len);
                sb_putc(line, '"');
            } else {
                sb_putn(line, v.p, v.len);
            }
        }
        first = false;
        sb_done(&v);
    }
    if (json)
        sb_putc(line, '}');
}

static void put_timestamp(cuzk__sb *b)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    sb_printf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
              tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000);
}

static void output_line(const char *p, size_t n)
{
    pthread_mutex_lock(&cuzk__log_mu);
    if (cuzk__log_sink) {
        cuzk__log_sink(cuzk__log_sink_ctx, p, n);
    } else {
        /* One write() per line; the loop only continues after a partial write or EINTR
         * (possible on pipes and terminals for lines above PIPE_BUF). */
        while (n > 0) {
            ssize_t w = write(cuzk__log_fd, p, n);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                break; /* nowhere to report a failing log sink */
            }
            p += w;
            n -= (size_t)w;
        }
    }
    pthread_mutex_unlock(&cuzk__log_mu);
}

void cuzk_log_emit(cuzk_log_level level, const char *target, const char *message,
                   const char *fields, ...)
{
    int saved_errno = errno; /* logging must not disturb the caller's errno */
    int json = __atomic_load_n(&cuzk__log_format, __ATOMIC_RELAXED) == CUZK_LOG_FORMAT_JSON;
    const char *lname = cuzk_log_level_name(level);
    if (!target)
        target = "cuzk";
    if (!message)
        message = "";
    /* Room is kept for the terminator ("...\n" or ",\"truncated\":true}\n"). The head is
     * bounded (target 256 bytes, message 8 KiB, i.e. at most 6 x that escaped) so it always
     * fits and a JSON line can fall back to it. */
    cuzk__sb line;
    sb_init(&line, CUZK_LOG_MAX_LINE - 32);
    size_t tlen = strnlen(target, 256), mlen = strnlen(message, 8192);
    size_t head_len;
    if (json) {
        sb_puts(&line, "{\"timestamp\":\"");
        put_timestamp(&line);
        sb_printf(&line, "\",\"level\":\"%s\",\"target\":\"", lname);
        put_json_escaped(&line, target, tlen);
        sb_puts(&line, "\",\"message\":\"");
        put_json_escaped(&line, message, mlen);
        sb_putc(&line, '"');
    } else {
        put_timestamp(&line);
        sb_printf(&line, " %s ", lname);
        sb_putn(&line, target, tlen);
        sb_puts(&line, ": ");
        /* The message is free text; only line breaks and control bytes are escaped. */
        put_text_escaped(&line, message, mlen);
    }
    head_len = line.len;
    if (fields && *fields) {
        va_list ap;
        va_start(ap, fields);
        put_fields(&line, json, fields, &ap);
        va_end(ap);
    }
    if (line.trunc) {
        if (json) {
            /* A cut JSON object is useless to a parser: keep the head and say so. */
            line.len = head_len;
            sb_force(&line, ",\"truncated\":true}\n");
        } else {
            sb_force(&line, "...\n");
        }
    } else {
        sb_force(&line, json ? "}\n" : "\n");
    }
    output_line(line.p, line.len);
    sb_done(&line);
    errno = saved_errno;
}
