/* Structured, leveled logging: one line per event.
 *
 * Text format (the default):
 *   2026-02-20T00:31:42.765128Z INFO cuzk_engine: job done job=7f3a ms=12.5 path="/a b/c.zkey"
 * JSON format (one object per line):
 *   {"timestamp":"2026-02-20T00:31:42.765128Z","level":"INFO","target":"cuzk_engine",
 *    "message":"job done","fields":{"job":"7f3a","ms":12.5,"path":"/a b/c.zkey"}}
 *
 * Usage:
 *   CUZK_LOG_INFO("cuzk_engine", "job done", "job=%s ms=%.1f", id, ms);
 *   CUZK_LOG_WARN("cuzk_daemon", "config reloaded");              // no fields
 *
 * The message is a plain string (never a format). The optional third argument is a printf
 * format checked by the compiler whose shape is `key=VALUE key=VALUE ...`: keys are separated
 * by spaces, and VALUE is any mix of literal text and conversions without spaces ("%zuB",
 * "%dx%d"). Each value is formatted on its own, so a %s value containing spaces, quotes or
 * newlines is quoted and escaped in the output instead of breaking the key=value structure.
 * In JSON, a value that is exactly one numeric conversion (%d %u %f %g ...) and prints as a
 * finite number is emitted as a JSON number; everything else is a JSON string.
 *
 * Cost below the level: the macros compare the level with one relaxed atomic load and do not
 * evaluate the message, the format or any argument when the level is disabled.
 *
 * Thread safety: a line is assembled in a private buffer and written with one write() (or one
 * sink call) under a mutex, so lines of concurrent threads never interleave. Lines longer than
 * CUZK_LOG_MAX_LINE bytes are truncated and end in "...".
 */
#ifndef CUZK_LOG_H
#define CUZK_LOG_H

#include <stddef.h>
#include <stdio.h>

#include "cuzk/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CUZK_LOG_LEVEL_OFF = -1, /* for cuzk_log_set_level only: nothing is logged */
    CUZK_LOG_LEVEL_ERROR = 0,
    CUZK_LOG_LEVEL_WARN = 1,
    CUZK_LOG_LEVEL_INFO = 2,
    CUZK_LOG_LEVEL_DEBUG = 3,
    CUZK_LOG_LEVEL_TRACE = 4,
} cuzk_log_level;

typedef enum {
    CUZK_LOG_FORMAT_TEXT = 0,
    CUZK_LOG_FORMAT_JSON = 1,
} cuzk_log_format;

#define CUZK_LOG_MAX_LINE 65536

/* Current level; read by the macros. Use cuzk_log_set_level to change it. */
extern int cuzk__log_level;

/* Default: INFO. */
void cuzk_log_set_level(cuzk_log_level level);
cuzk_log_level cuzk_log_get_level(void);
/* "error", "warn" (or "warning"), "info", "debug", "trace", "off"; case-insensitive. */
cuzk_err cuzk_log_parse_level(const char *s, cuzk_log_level *out, cuzk_errbuf *eb);
const char *cuzk_log_level_name(cuzk_log_level level); /* "INFO" ... */

/* Default: text. */
void cuzk_log_set_format(cuzk_log_format fmt);
/* "text" or "json". */
cuzk_err cuzk_log_parse_format(const char *s, cuzk_log_format *out, cuzk_errbuf *eb);

/* Where lines go. Default: fd 2 (stderr). Setting an fd or FILE removes any sink.
 * cuzk_log_set_file flushes f and writes to fileno(f) directly (stdio buffering bypassed). */
void cuzk_log_set_fd(int fd);
void cuzk_log_set_file(FILE *f);
/* Sink callback, called under the log mutex with one complete line (ending in '\n', not
 * NUL-terminated in len). NULL restores stderr. Useful for tests and for tee-ing logs. */
typedef void (*cuzk_log_sink_fn)(void *ctx, const char *line, size_t len);
void cuzk_log_set_sink(cuzk_log_sink_fn fn, void *ctx);

#define CUZK_LOG_ENABLED(level)                                                                    \
    ((int)(level) <= __atomic_load_n(&cuzk__log_level, __ATOMIC_RELAXED))

/* Emit one event regardless of the level (the macros check the level first). fields may be
 * NULL. */
void cuzk_log_emit(cuzk_log_level level, const char *target, const char *message,
                   const char *fields, ...) __attribute__((format(printf, 4, 5)));

/* CUZK_LOG(level, target, message [, fields_format, args...]) */
#define CUZK_LOG(level, target, ...)                                                               \
    do {                                                                                           \
        if (CUZK_LOG_ENABLED(level))                                                               \
            CUZK__LOG_PICK(__VA_ARGS__, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F,        \
                           CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F,        \
                           CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F,        \
                           CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F,        \
                           CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F, CUZK__LOG_F,        \
                           CUZK__LOG_M, dummy)                                                     \
            (level, target, __VA_ARGS__);                                                          \
    } while (0)
#define CUZK_LOG_ERROR(target, ...) CUZK_LOG(CUZK_LOG_LEVEL_ERROR, target, __VA_ARGS__)
#define CUZK_LOG_WARN(target, ...) CUZK_LOG(CUZK_LOG_LEVEL_WARN, target, __VA_ARGS__)
#define CUZK_LOG_INFO(target, ...) CUZK_LOG(CUZK_LOG_LEVEL_INFO, target, __VA_ARGS__)
#define CUZK_LOG_DEBUG(target, ...) CUZK_LOG(CUZK_LOG_LEVEL_DEBUG, target, __VA_ARGS__)
#define CUZK_LOG_TRACE(target, ...) CUZK_LOG(CUZK_LOG_LEVEL_TRACE, target, __VA_ARGS__)

/* Dispatch on the argument count: message alone (M) or message + fields + args (F); up to 23
 * field arguments. */
#define CUZK__LOG_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
                       _18, _19, _20, _21, _22, _23, _24, _25, NAME, ...)                          \
    NAME
#define CUZK__LOG_M(level, target, message) cuzk_log_emit(level, target, message, NULL)
#define CUZK__LOG_F(level, target, message, ...) cuzk_log_emit(level, target, message, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
