/* Logging: exact line shapes (text and JSON), escaping, level filtering, argument
 * non-evaluation below the level, truncation, and whole lines under concurrency. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/log.h"
#include "testutil.h"

/* ---- capture sink: the log calls it under its mutex */
static char cap[1 << 18];
static size_t cap_len;
static int cap_lines;

static void sink(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    if (cap_len + len < sizeof cap) {
        memcpy(cap + cap_len, line, len);
        cap_len += len;
        cap[cap_len] = 0;
    }
    cap_lines++;
}

static void cap_reset(void)
{
    cap_len = 0;
    cap[0] = 0;
    cap_lines = 0;
}

/* The part after "TIMESTAMP " in text mode. */
static const char *after_ts(void)
{
    const char *sp = strchr(cap, ' ');
    return sp ? sp + 1 : "";
}

static int matches(const char *re, const char *s)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
        return 0;
    int ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

static int evaluated;
static int bump(void)
{
    return ++evaluated;
}

static void test_text_format(void)
{
    cuzk_log_set_format(CUZK_LOG_FORMAT_TEXT);
    cuzk_log_set_level(CUZK_LOG_LEVEL_INFO);
    cap_reset();
    /* The log reads CLOCK_REALTIME; time() may read a coarser clock that lags it by a tick,
     * so at a second boundary it can still say the previous second (CI saw the log stamp
     * one second past time() taken after it). Bracket with the log's own clock. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t before = ts.tv_sec;
    CUZK_LOG_INFO("cuzk_engine", "job done", "job=%s ms=%.1f path=%s", "7f3a", 12.5, "/a b/c");
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t after = ts.tv_sec;
    CHECK(cap_lines == 1);
    CHECK_MSG(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z INFO "
                      "cuzk_engine: job done job=7f3a ms=12\\.5 path=\"/a b/c\"\n$",
                      cap),
              "line: %s", cap);
    /* The timestamp is UTC now: decode it independently (timegm) and compare with time(). */
    struct tm tm = {0};
    int us = -1;
    CHECK(sscanf(cap, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us) == 7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    CHECK_MSG(t >= before && t <= after, "timestamp %ld not in [%ld, %ld]", (long)t, (long)before,
              (long)after);
    CHECK(us >= 0 && us <= 999999);

    /* message only, every level name */
    cuzk_log_set_level(CUZK_LOG_LEVEL_TRACE);
    const char *names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
    for (int l = 0; l <= 4; l++) {
        cap_reset();
        CUZK_LOG(l, "cuzk_daemon", "ready");
        char want[64];
        snprintf(want, sizeof want, "%s cuzk_daemon: ready\n", names[l]);
        CHECK_MSG(strcmp(after_ts(), want) == 0, "got '%s' want '%s'", after_ts(), want);
    }
    cap_reset();
    CUZK_LOG_ERROR("t", "e");
    CUZK_LOG_WARN("t", "w");
    CUZK_LOG_DEBUG("t", "d");
    CUZK_LOG_TRACE("t", "x", "k=%d", 1);
    CHECK(cap_lines == 4);

    /* conversions of every kind, several per value, %% and star widths */
    cap_reset();
    size_t z = 1u << 20;
    long long ll = -1234567890123LL;
    unsigned long ul = 42;
    CUZK_LOG_INFO("t", "m",
                  "z=%zuB ll=%lld ul=%lu x=%#x dims=%dx%d pct=%d%% c=%c f=%.3e w=%5d "
                  "s=%.*s l=%-*s| g=%g",
                  z, ll, ul, 255u, 3, 4, 50, 'q', 1234.56, 7, 3, "abcdef", 4, "ab", 0.1);
    CHECK_MSG(strcmp(after_ts(),
                     "INFO t: m z=1048576B ll=-1234567890123 ul=42 x=0xff dims=3x4 "
                     "pct=50% c=q f=1.235e+03 w=\"    7\" s=abc l=\"ab  |\" g=0.1\n") == 0,
              "got '%s'", after_ts());

    /* quoting and escaping of values; control bytes in the message never break the line */
    cap_reset();
    CUZK_LOG_INFO("t", "two\nlines", "a=%s b=%s c=%s d=%s e=%s", "say \"hi\"", "back\\slash", "",
                  "k=v", "tab\there\x01");
    CHECK_MSG(strcmp(after_ts(), "INFO t: two\\nlines a=\"say \\\"hi\\\"\" b=\"back\\\\slash\" "
                                 "c=\"\" d=\"k=v\" e=\"tab\\there\\x01\"\n") == 0,
              "got '%s'", after_ts());
    CHECK(cap_lines == 1 && strchr(cap, '\n') == cap + cap_len - 1);

    /* NULL %s does not crash; UTF-8 passes through, invalid bytes are escaped */
    cap_reset();
    const char *volatile nul = NULL; /* volatile: hide the NULL from -Wformat */
    CUZK_LOG_INFO("t", "m", "n=%s u=%s bad=%s", nul, "h\xc3\xa9", "\xff");
    CHECK_MSG(strcmp(after_ts(), "INFO t: m n=(null) u=h\xc3\xa9 bad=\"\\xff\"\n") == 0, "got '%s'",
              after_ts());
}

static void test_levels(void)
{
    cuzk_log_set_format(CUZK_LOG_FORMAT_TEXT);
    cuzk_log_set_level(CUZK_LOG_LEVEL_WARN);
    cap_reset();
    evaluated = 0;
    CUZK_LOG_INFO("t", "hidden", "n=%d", bump());
    CUZK_LOG_DEBUG("t", "hidden", "n=%d", bump());
    CUZK_LOG_TRACE("t", "hidden", "n=%d", bump());
    CHECK(cap_lines == 0);
    CHECK_MSG(evaluated == 0, "arguments of disabled levels were evaluated %d times", evaluated);
    CUZK_LOG_WARN("t", "shown", "n=%d", bump());
    CUZK_LOG_ERROR("t", "shown", "n=%d", bump());
    CHECK(cap_lines == 2 && evaluated == 2);
    CHECK(strstr(cap, "WARN t: shown n=1\n") && strstr(cap, "ERROR t: shown n=2\n"));

    cuzk_log_set_level(CUZK_LOG_LEVEL_OFF);
    cap_reset();
    CUZK_LOG_ERROR("t", "x", "n=%d", bump());
    CHECK(cap_lines == 0 && evaluated == 2);
    CHECK(!CUZK_LOG_ENABLED(CUZK_LOG_LEVEL_ERROR));

    cuzk_log_set_level(CUZK_LOG_LEVEL_DEBUG);
    CHECK(cuzk_log_get_level() == CUZK_LOG_LEVEL_DEBUG);
    CHECK(CUZK_LOG_ENABLED(CUZK_LOG_LEVEL_DEBUG) && !CUZK_LOG_ENABLED(CUZK_LOG_LEVEL_TRACE));

    cuzk_log_level l;
    cuzk_errbuf eb;
    CHECK(cuzk_log_parse_level("Debug", &l, &eb) == CUZK_OK && l == CUZK_LOG_LEVEL_DEBUG);
    CHECK(cuzk_log_parse_level("warning", &l, &eb) == CUZK_OK && l == CUZK_LOG_LEVEL_WARN);
    CHECK(cuzk_log_parse_level("off", &l, &eb) == CUZK_OK && l == CUZK_LOG_LEVEL_OFF);
    CHECK(cuzk_log_parse_level("loud", &l, &eb) == CUZK_INVALID_ARGUMENT);
    CHECK(strstr(eb.msg, "'loud'") != NULL);
    cuzk_log_format f;
    CHECK(cuzk_log_parse_format("json", &f, &eb) == CUZK_OK && f == CUZK_LOG_FORMAT_JSON);
    CHECK(cuzk_log_parse_format("TEXT", &f, &eb) == CUZK_OK && f == CUZK_LOG_FORMAT_TEXT);
    CHECK(cuzk_log_parse_format("xml", &f, &eb) == CUZK_INVALID_ARGUMENT);
}

static void test_json(void)
{
    cuzk_log_set_format(CUZK_LOG_FORMAT_JSON);
    cuzk_log_set_level(CUZK_LOG_LEVEL_INFO);
    cap_reset();
    CUZK_LOG_INFO("cuzk_engine", "job \"done\"",
                  "job=%s ms=%.1f n=%d neg=%lld hex=%x sz=%zuB "
                  "s=%s nan=%f lead=%03d",
                  "a\nb", 12.5, 7, -3LL, 255u, (size_t)5, "\xc3\xa9\xff", (double)NAN, 5);
    CHECK(cap_lines == 1);
    CHECK_MSG(matches("^\\{\"timestamp\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                      "\\.[0-9]{6}Z\",",
                      cap),
              "got %s", cap);
    const char *tail = strstr(cap, "\"level\"");
    CHECK_MSG(tail && strcmp(tail, "\"level\":\"INFO\",\"target\":\"cuzk_engine\",\"message\":"
                                   "\"job \\\"done\\\"\",\"fields\":{\"job\":\"a\\nb\",\"ms\":12.5,"
                                   "\"n\":7,\"neg\":-3,\"hex\":\"ff\",\"sz\":\"5B\",\"s\":\""
                                   "\xc3\xa9\\ufffd\",\"nan\":\"nan\",\"lead\":\"005\"}}\n") == 0,
              "got %s", tail ? tail : cap);
    cap_reset();
    CUZK_LOG_WARN("t", "plain");
    tail = strstr(cap, "\"level\"");
    CHECK_MSG(tail &&
                  strcmp(tail, "\"level\":\"WARN\",\"target\":\"t\",\"message\":\"plain\"}\n") == 0,
              "got %s", cap);
    cuzk_log_set_format(CUZK_LOG_FORMAT_TEXT);
}

static void test_truncation(void)
{
    size_t n = 200000;
    char *big = malloc(n + 1);
    memset(big, 'x', n);
    big[n] = 0;
    cuzk_log_set_level(CUZK_LOG_LEVEL_INFO);
    cap_reset();
    CUZK_LOG_INFO("t", "big", "v=%s after=%d", big, 1);
    CHECK(cap_lines == 1);
    CHECK_MSG(cap_len <= CUZK_LOG_MAX_LINE && cap_len > CUZK_LOG_MAX_LINE - 100, "len %zu",
              cap_len);
    CHECK(cap_len >= 4 && memcmp(cap + cap_len - 4, "...\n", 4) == 0);
    CHECK(strstr(cap, "after=") == NULL);

    cuzk_log_set_format(CUZK_LOG_FORMAT_JSON);
    cap_reset();
    CUZK_LOG_INFO("t", "big", "v=%s", big);
    CHECK(cap_lines == 1 && cap_len < 300);
    const char *tail = strstr(cap, "\"level\"");
    CHECK_MSG(tail && strcmp(tail, "\"level\":\"INFO\",\"target\":\"t\",\"message\":\"big\","
                                   "\"truncated\":true}\n") == 0,
              "got %s", cap);
    cuzk_log_set_format(CUZK_LOG_FORMAT_TEXT);
    free(big);
}

/* ---- concurrency: whole lines through a real fd */
#define NTHREADS 8
#define NPER 2000

static void *writer(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < NPER; i++)
        CUZK_LOG_INFO("cuzk_test", "concurrent line with some padding text",
                      "thread=%d seq=%d "
                      "pad=%s",
                      id, i, "0123456789abcdef0123456789abcdef0123456789abcdef");
    return NULL;
}

static void test_threads(void)
{
    char path[] = "/tmp/cuzk_log_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    cuzk_log_set_level(CUZK_LOG_LEVEL_INFO);
    cuzk_log_set_fd(fd);
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, writer, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    cuzk_log_set_sink(sink, NULL);
    size_t len;
    char *all = tu_read_file(path, &len);
    close(fd);
    unlink(path);
    CHECK(all != NULL);
    if (!all)
        return;
    CHECK(len > 0 && all[len - 1] == '\n');
    int next[NTHREADS] = {0}, lines = 0, bad = 0;
    regex_t r;
    regcomp(&r,
            "^[0-9T:.Z-]{27} INFO cuzk_test: concurrent line with some padding text "
            "thread=[0-9] seq=[0-9]+ pad=0123456789abcdef0123456789abcdef0123456789abcdef$",
            REG_EXTENDED | REG_NOSUB);
    for (char *save = NULL, *l = strtok_r(all, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        int id, seq;
        lines++;
        if (regexec(&r, l, 0, NULL, 0) != 0 ||
            sscanf(strstr(l, "thread="), "thread=%d seq=%d", &id, &seq) != 2 || id < 0 ||
            id >= NTHREADS || seq != next[id]) {
            if (bad++ < 3)
                fprintf(stderr, "bad line: %s\n", l);
            continue;
        }
        next[id]++;
    }
    regfree(&r);
    CHECK_MSG(lines == NTHREADS * NPER && bad == 0, "%d lines, %d bad", lines, bad);
    free(all);
}

int main(void)
{
    cuzk_log_set_sink(sink, NULL);
    errno = 1234;
    test_text_format();
    CHECK_MSG(errno == 1234, "logging changed errno to %d", errno);
    test_levels();
    test_json();
    test_truncation();
    test_threads();
    cuzk_log_set_sink(NULL, NULL);
    return tu_finish("log_test");
}
