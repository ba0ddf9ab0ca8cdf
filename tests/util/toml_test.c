/* TOML subset: every construct parsed to the expected values, every error class with its
 * file:line, typed getters and their messages, unknown-key detection, and robustness on
 * mutated input. The size and duration strings are tested in units_test.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/alloc.h"
#include "cuzk/toml.h"
#include "testutil.h"

static cuzk_toml *parse_ok(const char *text)
{
    cuzk_toml *doc = NULL;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_toml_parse(&doc, "cuzk.toml", text, strlen(text), &eb);
    CHECK_MSG(e == CUZK_OK, "parse failed: %s\n--- doc:\n%s", eb.msg, text);
    return doc;
}

static const char *DOC = "# cuzk daemon config\n"                               /* 1 */
                         "\n"                                                   /* 2 */
                         "title = \"cuzk \\\"test\\\"\\t\\u00e9\\U0001F600\"\n" /* 3 */
                         "literal = 'C:\\path\\no\\escapes'   # comment\n"      /* 4 */
                         "[daemon]\n"                                           /* 5 */
                         "listen = \"0.0.0.0:9820\"\n"                          /* 6 */
                         "  grace = \"30s\"\n"                                  /* 7 */
                         "[gpus]\n"                                             /* 8 */
                         "devices = [ 0, 1,\n"                                  /* 9 */
                         "   2, # third\n"                                      /* 10 */
                         "]\n"                                                  /* 11 */
                         "workers_per_device = 2\n"                             /* 12 */
                         "big = 9_223_372_036_854_775_807\n"                    /* 13 */
                         "small = -9223372036854775808\n"                       /* 14 */
                         "hex = 0xdead_BEEF\n"                                  /* 15 */
                         "oct = 0o755\n"                                        /* 16 */
                         "bin = 0b1010\n"                                       /* 17 */
                         "ratio = 0.75\n"                                       /* 18 */
                         "exp = -1.5e-3\n"                                      /* 19 */
                         "e2 = 1E6\n"                                           /* 20 */
                         "pinf = +inf\n"                                        /* 21 */
                         "nnan = -nan\n"                                        /* 22 */
                         "yes = true\n"                                         /* 23 */
                         "no = false\n"                                         /* 24 */
                         "names = [\"a\", 'b', \"c,d\"]\n"                      /* 25 */
                         "empty = []\n"                                         /* 26 */
                         "[memory]\n"                                           /* 27 */
                         "working_budget = \"50GiB\"\n"                         /* 28 */
                         "pinned_budget = 1048576\n"                            /* 29 */
                         "limits.soft = 3\n"                                    /* 30 */
                         "limits . hard = 4\n"                                  /* 31 */
                         "\"quoted key\" = 5\n"                                 /* 32 */
                         "[a.b.c]\n"                                            /* 33 */
                         "d = 1\n"                                              /* 34 */
                         "[a]\n"                                                /* 35 */
                         "x = 2\n"                                              /* 36 */
                         "[[circuit]]\n"                                        /* 37 */
                         "id = \"mul\"\n"                                       /* 38 */
                         "zkey = \"mul.zkey\"\n"                                /* 39 */
                         "preload = true\n"                                     /* 40 */
                         "[circuit.extra]\n"                                    /* 41 */
                         "note = \"first\"\n"                                   /* 42 */
                         "[[circuit]]\n"                                        /* 43 */
                         "id = \"poseidon\"\n"                                  /* 44 */
                         "\r\n"                                                 /* 45 */
                         "[[circuit]]\n";                                       /* 46 */

static void test_valid(void)
{
    cuzk_toml *doc = parse_ok(DOC);
    if (!doc)
        return;
    const cuzk_toml_value *r = cuzk_toml_root(doc);
    cuzk_errbuf eb;
    const char *s = NULL;
    CHECK(cuzk_toml_get_string(r, "title", &s, &eb) == CUZK_OK && s &&
          strcmp(s, "cuzk \"test\"\t\xc3\xa9\xf0\x9f\x98\x80") == 0);
    CHECK(cuzk_toml_get_string(r, "literal", &s, &eb) == CUZK_OK &&
          strcmp(s, "C:\\path\\no\\escapes") == 0);
    CHECK(cuzk_toml_get_string(r, "daemon.listen", &s, &eb) == CUZK_OK &&
          strcmp(s, "0.0.0.0:9820") == 0);
    uint64_t ns = 0;
    CHECK(cuzk_toml_get_duration_ns(r, "daemon.grace", &ns, &eb) == CUZK_OK &&
          ns == 30000000000ull);

    const cuzk_toml_value *dev;
    CHECK(cuzk_toml_get_array(r, "gpus.devices", CUZK_TOML_INT, &dev, &eb) == CUZK_OK && dev);
    CHECK(cuzk_toml_len(dev) == 3);
    for (size_t i = 0; i < cuzk_toml_len(dev); i++) {
        int64_t x = -1;
        CHECK(cuzk_toml_as_int(cuzk_toml_at(dev, i), &x, &eb) == CUZK_OK && x == (int64_t)i);
    }
    CHECK(cuzk_toml_line(cuzk_toml_at(dev, 2)) == 10);
    CHECK(strcmp(cuzk_toml_path(cuzk_toml_at(dev, 1)), "gpus.devices[1]") == 0);
    int64_t v = 0;
    CHECK(cuzk_toml_get_int(r, "gpus.workers_per_device", &v, &eb) == CUZK_OK && v == 2);
    CHECK(cuzk_toml_get_int(r, "gpus.big", &v, &eb) == CUZK_OK && v == INT64_MAX);
    CHECK(cuzk_toml_get_int(r, "gpus.small", &v, &eb) == CUZK_OK && v == INT64_MIN);
    CHECK(cuzk_toml_get_int(r, "gpus.hex", &v, &eb) == CUZK_OK && v == 0xdeadbeef);
    CHECK(cuzk_toml_get_int(r, "gpus.oct", &v, &eb) == CUZK_OK && v == 0755);
    CHECK(cuzk_toml_get_int(r, "gpus.bin", &v, &eb) == CUZK_OK && v == 10);
    double d = 0;
    CHECK(cuzk_toml_get_float(r, "gpus.ratio", &d, &eb) == CUZK_OK && d == 0.75);
    CHECK(cuzk_toml_get_float(r, "gpus.exp", &d, &eb) == CUZK_OK && d == -1.5e-3);
    CHECK(cuzk_toml_get_float(r, "gpus.e2", &d, &eb) == CUZK_OK && d == 1e6);
    CHECK(cuzk_toml_get_float(r, "gpus.pinf", &d, &eb) == CUZK_OK && isinf(d) && d > 0);
    CHECK(cuzk_toml_get_float(r, "gpus.nnan", &d, &eb) == CUZK_OK && isnan(d));
    /* an integer is accepted where a float is expected */
    CHECK(cuzk_toml_get_float(r, "gpus.workers_per_device", &d, &eb) == CUZK_OK && d == 2.0);
    bool b = false;
    CHECK(cuzk_toml_get_bool(r, "gpus.yes", &b, &eb) == CUZK_OK && b);
    CHECK(cuzk_toml_get_bool(r, "gpus.no", &b, &eb) == CUZK_OK && !b);
    const cuzk_toml_value *names;
    CHECK(cuzk_toml_get_array(r, "gpus.names", CUZK_TOML_STRING, &names, &eb) == CUZK_OK);
    CHECK(names && cuzk_toml_len(names) == 3);
    if (names && cuzk_toml_len(names) == 3) {
        CHECK(cuzk_toml_as_string(cuzk_toml_at(names, 2), &s, &eb) == CUZK_OK &&
              strcmp(s, "c,d") == 0);
    }
    const cuzk_toml_value *empty;
    CHECK(cuzk_toml_get_array(r, "gpus.empty", 0, &empty, &eb) == CUZK_OK && empty &&
          cuzk_toml_len(empty) == 0);

    uint64_t sz = 0;
    CHECK(cuzk_toml_get_size(r, "memory.working_budget", &sz, &eb) == CUZK_OK && sz == 50ull << 30);
    CHECK(cuzk_toml_get_size(r, "memory.pinned_budget", &sz, &eb) == CUZK_OK && sz == 1048576);
    CHECK(cuzk_toml_get_int(r, "memory.limits.soft", &v, &eb) == CUZK_OK && v == 3);
    CHECK(cuzk_toml_get_int(r, "memory.limits.hard", &v, &eb) == CUZK_OK && v == 4);
    CHECK(cuzk_toml_get_int(r, "memory.quoted key", &v, &eb) == CUZK_OK && v == 5);
    CHECK(cuzk_toml_get_int(r, "a.b.c.d", &v, &eb) == CUZK_OK && v == 1);
    CHECK(cuzk_toml_get_int(r, "a.x", &v, &eb) == CUZK_OK && v == 2);
    const cuzk_toml_value *a;
    CHECK(cuzk_toml_get_table(r, "a", &a, &eb) == CUZK_OK && a && cuzk_toml_line(a) == 35);
    CHECK(a && cuzk_toml_len(a) == 2 && strcmp(cuzk_toml_key_at(a, 0), "b") == 0 &&
          strcmp(cuzk_toml_key_at(a, 1), "x") == 0);

    const cuzk_toml_value *circ;
    CHECK(cuzk_toml_get_tables(r, "circuit", &circ, &eb) == CUZK_OK && circ);
    CHECK(cuzk_toml_len(circ) == 3);
    if (circ && cuzk_toml_len(circ) == 3) {
        const cuzk_toml_value *c0 = cuzk_toml_at(circ, 0), *c1 = cuzk_toml_at(circ, 1);
        CHECK(cuzk_toml_get_string(c0, "id", &s, &eb) == CUZK_OK && strcmp(s, "mul") == 0);
        CHECK(cuzk_toml_get_string(c0, "zkey", &s, &eb) == CUZK_OK && strcmp(s, "mul.zkey") == 0);
        CHECK(cuzk_toml_get_bool(c0, "preload", &b, &eb) == CUZK_OK && b);
        CHECK(cuzk_toml_get_string(c0, "extra.note", &s, &eb) == CUZK_OK &&
              strcmp(s, "first") == 0);
        CHECK(cuzk_toml_get_string(c1, "id", &s, &eb) == CUZK_OK && strcmp(s, "poseidon") == 0);
        /* absent keys keep the caller's default */
        s = "default";
        CHECK(cuzk_toml_get_string(c1, "zkey", &s, &eb) == CUZK_OK && strcmp(s, "default") == 0);
        CHECK(cuzk_toml_line(c1) == 43 && strcmp(cuzk_toml_path(c1), "circuit[1]") == 0);
        CHECK(cuzk_toml_errf(c1, &eb, "missing required key '%s'", "zkey") == CUZK_BAD_CONFIG);
        CHECK_MSG(strcmp(eb.msg, "cuzk.toml:43: table 'circuit[1]': missing required key "
                                 "'zkey'") == 0,
                  "%s", eb.msg);
        const cuzk_toml_value *c2 = cuzk_toml_at(circ, 2);
        CHECK(c2 && cuzk_toml_len(c2) == 0 && cuzk_toml_line(c2) == 46);
    }
    v = 77;
    CHECK(cuzk_toml_get_int(r, "nope.nothing", &v, &eb) == CUZK_OK && v == 77);
    CHECK(cuzk_toml_get(r, "gpus.workers_per_device.deeper") == NULL);

    /* everything was read: no unknown keys */
    cuzk_errbuf ub = {{0}};
    CHECK_MSG(cuzk_toml_check_unused(doc, &ub) == CUZK_OK, "%s", ub.msg);
    cuzk_toml_free(doc);

    /* empty documents are fine */
    doc = parse_ok("");
    CHECK(doc && cuzk_toml_len(cuzk_toml_root(doc)) == 0);
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_OK);
    cuzk_toml_free(doc);
    doc = parse_ok("\xef\xbb\xbf# only a BOM and a comment\n\n   \n");
    cuzk_toml_free(doc);
    doc = parse_ok("k = 1"); /* no final newline */
    v = 0;
    CHECK(doc && cuzk_toml_get_int(cuzk_toml_root(doc), "k", &v, &eb) == CUZK_OK && v == 1);
    cuzk_toml_free(doc);
}

/* Type errors and range errors from the getters, with exact messages. */
static void test_getter_errors(void)
{
    cuzk_toml *doc = parse_ok("[gpus]\n"
                              "workers = \"four\"\n"
                              "neg = -1\n"
                              "n = 100\n"
                              "f = 1.5\n"
                              "size = \"12 furlongs\"\n"
                              "dur = 30\n"
                              "arr = [1, \"x\"]\n"
                              "huge = 9007199254740993\n");
    if (!doc)
        return;
    const cuzk_toml_value *r = cuzk_toml_root(doc);
    cuzk_errbuf eb;
    int64_t v = 5;
    CHECK(cuzk_toml_get_int(r, "gpus.workers", &v, &eb) == CUZK_BAD_CONFIG && v == 5);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:2: key 'gpus.workers': expected integer, got string") == 0,
              "%s", eb.msg);
    CHECK(cuzk_toml_get_int_range(r, "gpus.n", 1, 64, &v, &eb) == CUZK_BAD_CONFIG && v == 5);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:4: key 'gpus.n': 100 is out of range [1, 64]") == 0, "%s",
              eb.msg);
    CHECK(cuzk_toml_get_int_range(r, "gpus.n", 1, 100, &v, &eb) == CUZK_OK && v == 100);
    bool b;
    CHECK(cuzk_toml_get_bool(r, "gpus.f", &b, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:5: key 'gpus.f': expected boolean, got float") == 0, "%s",
              eb.msg);
    uint64_t u = 9;
    CHECK(cuzk_toml_get_size(r, "gpus.neg", &u, &eb) == CUZK_BAD_CONFIG && u == 9);
    CHECK_MSG(strstr(eb.msg, "cuzk.toml:3: key 'gpus.neg': size must not be negative") == eb.msg,
              "%s", eb.msg);
    CHECK(cuzk_toml_get_size(r, "gpus.size", &u, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "cuzk.toml:6: key 'gpus.size': invalid size '12 furlongs': unknown "
                             "unit 'furlongs'") == eb.msg,
              "%s", eb.msg);
    CHECK(cuzk_toml_get_size(r, "gpus.f", &u, &eb) == CUZK_BAD_CONFIG);
    CHECK(cuzk_toml_get_duration_ns(r, "gpus.dur", &u, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strstr(eb.msg, "cuzk.toml:7: key 'gpus.dur': expected a duration") == eb.msg, "%s",
              eb.msg);
    const cuzk_toml_value *arr;
    CHECK(cuzk_toml_get_array(r, "gpus.arr", CUZK_TOML_INT, &arr, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:8: key 'gpus.arr[1]': expected integer, got string") == 0,
              "%s", eb.msg);
    CHECK(cuzk_toml_get_tables(r, "gpus", &arr, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:1: key 'gpus': expected array of tables, got table") == 0,
              "%s", eb.msg);
    double d;
    CHECK(cuzk_toml_get_float(r, "gpus.huge", &d, &eb) == CUZK_BAD_CONFIG);
    cuzk_toml_free(doc);
}

static void test_unknown_keys(void)
{
    cuzk_toml *doc = parse_ok("[daemon]\n"        /* 1 */
                              "listen = \"x\"\n"  /* 2 */
                              "[gpus]\n"          /* 3 */
                              "workers = 2\n"     /* 4 */
                              "wrkers = 3\n"      /* 5 */
                              "[typo]\n"          /* 6 */
                              "[[circuit]]\n"     /* 7 */
                              "id = \"a\"\n"      /* 8 */
                              "pre_load = true\n" /* 9 */
                              "[[stray]]\n"       /* 10 */
                              "k = 1\n");         /* 11 */
    if (!doc)
        return;
    const cuzk_toml_value *r = cuzk_toml_root(doc);
    cuzk_errbuf eb;
    const char *s;
    int64_t v;
    const cuzk_toml_value *c;
    CHECK(cuzk_toml_get_string(r, "daemon.listen", &s, &eb) == CUZK_OK);
    CHECK(cuzk_toml_get_int(r, "gpus.workers", &v, &eb) == CUZK_OK);
    CHECK(cuzk_toml_get_tables(r, "circuit", &c, &eb) == CUZK_OK && c);
    CHECK(cuzk_toml_get_string(cuzk_toml_at(c, 0), "id", &s, &eb) == CUZK_OK);
    const cuzk_toml_value *un[8];
    size_t n = cuzk_toml_unused(doc, un, 8);
    CHECK(n == 4);
    if (n == 4) {
        CHECK(strcmp(cuzk_toml_path(un[0]), "gpus.wrkers") == 0 && cuzk_toml_line(un[0]) == 5);
        CHECK(strcmp(cuzk_toml_path(un[1]), "typo") == 0 && cuzk_toml_line(un[1]) == 6);
        CHECK(strcmp(cuzk_toml_path(un[2]), "circuit[0].pre_load") == 0 &&
              cuzk_toml_line(un[2]) == 9);
        CHECK(strcmp(cuzk_toml_path(un[3]), "stray") == 0 && cuzk_toml_line(un[3]) == 10);
    }
    CHECK(cuzk_toml_unused(doc, un, 1) == 4 && strcmp(cuzk_toml_path(un[0]), "gpus.wrkers") == 0);
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:5: unknown key 'gpus.wrkers'") == 0, "%s", eb.msg);
    /* consuming the rest clears the report, one entry at a time, lowest line first */
    cuzk_toml_get(r, "gpus.wrkers");
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:6: unknown table 'typo'") == 0, "%s", eb.msg);
    cuzk_toml_get(r, "typo");
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:9: unknown key 'circuit[0].pre_load'") == 0, "%s", eb.msg);
    cuzk_toml_mark_used(cuzk_toml_at(c, 0));
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_BAD_CONFIG);
    CHECK_MSG(strcmp(eb.msg, "cuzk.toml:10: unknown array of tables 'stray'") == 0, "%s", eb.msg);
    cuzk_toml_mark_used(cuzk_toml_get(r, "stray"));
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_OK);
    /* iterating a table does not consume it */
    cuzk_toml_free(doc);
    doc = parse_ok("[t]\na = 1\nb = 2\n");
    if (doc) {
        const cuzk_toml_value *t = cuzk_toml_get(cuzk_toml_root(doc), "t");
        for (size_t i = 0; i < cuzk_toml_len(t); i++)
            (void)cuzk_toml_at(t, i);
        CHECK(cuzk_toml_unused(doc, NULL, 0) == 2);
    }
    cuzk_toml_free(doc);
}

/* Every error class, with the line it must be reported on. */
static void test_parse_errors(void)
{
    static const struct {
        const char *doc;
        const char *want; /* prefix of the message */
    } cases[] = {
        {"a = 1\na = 2\n", "cuzk.toml:2: duplicate key 'a' (first defined on line 1)"},
        {"[t]\nx = 1\n[u]\n[t]\n", "cuzk.toml:4: table [t] is defined twice (first on line 1)"},
        {"[t]\nx.y = 1\nx.y = 2\n", "cuzk.toml:3: duplicate key 't.x.y'"},
        {"x.y = 1\n[x]\n", "cuzk.toml:2: table [x] is defined twice"},
        {"a = 1\n[a]\n", "cuzk.toml:2: [a]: 'a' is already integer"},
        {"a = 1\n[a.b]\n", "cuzk.toml:2: table 'a.b': 'a' is already a integer"},
        {"[[c]]\n[c]\n", "cuzk.toml:2: [c]: 'c' is already an array of tables"},
        {"[c]\n[[c]]\n", "cuzk.toml:2: [[c]]: 'c' is already a table"},
        {"a = [1]\n[[a]]\n", "cuzk.toml:2: [[a]]: 'a' is already a array"},
        {"[t]\nb = 1\nb.c = 2\n", "cuzk.toml:3: key 'b.c': 't.b' is already defined as a integer"},
        {"\n\nk = \"abc\n", "cuzk.toml:3: unterminated string (value)"},
        {"k = \"a\\qb\"\n", "cuzk.toml:1: unknown escape '\\q'"},
        {"k = \"\\u12\"\n", "cuzk.toml:1: bad \\u escape: need 4 hex digits"},
        {"k = \"\\uD800\"\n", "cuzk.toml:1: escape \\uD800 is not an allowed Unicode scalar"},
        {"k = \"\\u0000\"\n", "cuzk.toml:1: escape \\u0000 is not an allowed"},
        {"k = \"a\x01\"\n", "cuzk.toml:1: control character 0x01 in string"},
        {"k = \"\"\"multi\"\"\"\n", "cuzk.toml:1: multi-line strings are not supported"},
        {"k = '''x'''\n", "cuzk.toml:1: multi-line strings are not supported"},
        {"x = 1\nk = { a = 1 }\n", "cuzk.toml:2: key 'k': inline tables are not supported"},
        {"k = [[1], [2]]\n", "cuzk.toml:1: key 'k': nested arrays are not supported"},
        {"k = 1979-05-27\n", "cuzk.toml:1: key 'k': dates and times are not supported"},
        {"k = 07:32:00\n", "cuzk.toml:1: key 'k': dates and times are not supported"},
        {"k = 01\n", "cuzk.toml:1: key 'k': invalid integer '01' (leading zeros"},
        {"k = 1__0\n", "cuzk.toml:1: key 'k': invalid integer '1__0' (an underscore"},
        {"k = _1\n", "cuzk.toml:1: key 'k': invalid value '_1' (strings must be quoted)"},
        {"k = 1_\n", "cuzk.toml:1: key 'k': invalid integer '1_'"},
        {"k = 12abc\n", "cuzk.toml:1: key 'k': invalid integer '12abc'"},
        {"k = 0x\n", "cuzk.toml:1: key 'k': invalid integer '0x'"},
        {"k = -0x10\n", "cuzk.toml:1: key 'k': invalid integer '-0x10' (no sign allowed"},
        {"k = 0b102\n", "cuzk.toml:1: key 'k': invalid integer '0b102'"},
        {"k = 9223372036854775808\n", "cuzk.toml:1: key 'k': integer '9223372036854775808' is "
                                      "out of range"},
        {"k = -9223372036854775809\n", "cuzk.toml:1: key 'k': integer '-9223372036854775809' is "
                                       "out of range"},
        {"k = 1.\n", "cuzk.toml:1: key 'k': invalid float '1.'"},
        {"k = 1.e5\n", "cuzk.toml:1: key 'k': invalid float '1.e5'"},
        {"k = 1e\n", "cuzk.toml:1: key 'k': invalid float '1e'"},
        {"k = 00.5\n", "cuzk.toml:1: key 'k': invalid float '00.5' (leading zeros"},
        {"k = 1e999\n", "cuzk.toml:1: key 'k': float '1e999' is out of range"},
        {"k = 1.5_\n", "cuzk.toml:1: key 'k': invalid float '1.5_'"},
        {"k = True\n", "cuzk.toml:1: key 'k': invalid value 'True' (strings must be quoted)"},
        {"k = hello\n", "cuzk.toml:1: key 'k': invalid value 'hello' (strings must be quoted)"},
        {"k =\n", "cuzk.toml:1: key 'k': expected a value"},
        {"k = # nothing\n", "cuzk.toml:1: key 'k': expected a value"},
        {"k 1\n", "cuzk.toml:1: expected '=' after key 'k'"},
        {"= 1\n", "cuzk.toml:1: expected a key, found '= 1'"},
        {"a. = 1\n", "cuzk.toml:1: expected a key after '.' in 'a'"},
        {"k = 1 2\n", "cuzk.toml:1: unexpected text '2' after the value"},
        {"k = \"a\" \"b\"\n", "cuzk.toml:1: unexpected text '\"b\"' after the value"},
        {"[t] x = 1\n", "cuzk.toml:1: unexpected text 'x = 1' after the table header"},
        {"[t\n", "cuzk.toml:1: expected ']' after table name 't'"},
        {"[[t]\n", "cuzk.toml:1: expected ']]' after table name 't'"},
        {"[]\n", "cuzk.toml:1: expected a key, found ']'"},
        {"k = [1, 2\n", "cuzk.toml:2: key 'k': unterminated array"},
        {"k = [1 2]\n", "cuzk.toml:1: key 'k': expected ',' or ']' in array"},
        {"\n\nk = [1,\n,2]\n", "cuzk.toml:4: key 'k': expected a value"},
        {"ok = 1\nbad\x00 = 2\n", "cuzk.toml:2: NUL byte in file"},
        {"a = 1\n\nb = \"\xc3\x28\"\n", "cuzk.toml:3: invalid UTF-8 (byte 0xc3)"},
        {"a = 1\rb = 2\n", "cuzk.toml:1: lone carriage return"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cuzk_toml *doc = (cuzk_toml *)1;
        cuzk_errbuf eb = {{0}};
        /* the NUL case needs an explicit length */
        size_t len = strlen(cases[i].doc);
        if (strstr(cases[i].want, "NUL byte"))
            len = strlen(cases[i].doc) + 1 + strlen(cases[i].doc + strlen(cases[i].doc) + 1);
        cuzk_err e = cuzk_toml_parse(&doc, "cuzk.toml", cases[i].doc, len, &eb);
        CHECK_MSG(e == CUZK_BAD_CONFIG && doc == NULL, "case %zu: accepted: %s", i, cases[i].doc);
        CHECK_MSG(strncmp(eb.msg, cases[i].want, strlen(cases[i].want)) == 0,
                  "case %zu:\n  got  '%s'\n  want '%s...'", i, eb.msg, cases[i].want);
    }
}

static void test_load(void)
{
    char path[] = "/tmp/cuzk_toml_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const char *text = "[memory]\nworking_budget = \"2GiB\"\nbogus = 1\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    cuzk_toml *doc;
    cuzk_errbuf eb;
    CHECK(cuzk_toml_load(&doc, path, &eb) == CUZK_OK);
    uint64_t sz = 0;
    CHECK(cuzk_toml_get_size(cuzk_toml_root(doc), "memory.working_budget", &sz, &eb) == CUZK_OK &&
          sz == 2ull << 30);
    CHECK(cuzk_toml_check_unused(doc, &eb) == CUZK_BAD_CONFIG);
    char want[128];
    snprintf(want, sizeof want, "%s:3: unknown key 'memory.bogus'", path);
    CHECK_MSG(strcmp(eb.msg, want) == 0, "%s", eb.msg);
    cuzk_toml_free(doc);
    unlink(path);
    CHECK(cuzk_toml_load(&doc, path, &eb) == CUZK_IO && doc == NULL);
    CHECK(strstr(eb.msg, path) != NULL);
}

/* Mutated documents: every outcome is OK or a BAD_CONFIG message naming file:line. Under
 * ASan this is a small fuzz pass over the parser. */
static void test_mutations(void)
{
    size_t len = strlen(DOC);
    char *buf = malloc(len + 8);
    const char alphabet[] = "[]=\"'\\.,#\n \t0123456789abcxe_+-{}\x80\xc3";
    long bad = 0;
    for (int it = 0; it < 4000; it++) {
        memcpy(buf, DOC, len);
        size_t n = len;
        int edits = 1 + (int)(tu_rand64() % 4);
        for (int k = 0; k < edits; k++) {
            if (n < 2)
                break;
            size_t pos = tu_rand64() % n;
            switch (tu_rand64() % 3) {
            case 0: /* replace */
                buf[pos] = alphabet[tu_rand64() % (sizeof alphabet - 1)];
                break;
            case 1: /* delete */
                memmove(buf + pos, buf + pos + 1, n - pos - 1);
                n--;
                break;
            default: /* truncate */
                n = pos + 1;
                break;
            }
        }
        cuzk_toml *doc = NULL;
        cuzk_errbuf eb = {{0}};
        cuzk_err e = cuzk_toml_parse(&doc, "cuzk.toml", buf, n, &eb);
        if (e == CUZK_OK) {
            /* walk it: lookups of every key must work */
            const cuzk_toml_value *r = cuzk_toml_root(doc);
            for (size_t i = 0; i < cuzk_toml_len(r); i++)
                (void)cuzk_toml_get(r, cuzk_toml_key_at(r, i));
            cuzk_toml_free(doc);
        } else if (e != CUZK_BAD_CONFIG || strncmp(eb.msg, "cuzk.toml:", 10) != 0 || doc) {
            if (bad++ < 3)
                fprintf(stderr, "mutation %d: e=%d msg=%s\n", it, e, eb.msg);
        }
    }
    CHECK_MSG(bad == 0, "%ld mutated documents gave malformed errors", bad);
    free(buf);
}

int main(void)
{
    cuzk_alloc_stats before, after;
    cuzk_alloc_get_stats(&before);
    test_valid();
    test_getter_errors();
    test_unknown_keys();
    test_parse_errors();
    test_load();
    test_mutations();
    cuzk_alloc_get_stats(&after);
    /* every document freed everything it allocated */
    CHECK_MSG(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
              "leak: %llu blocks / %llu bytes live", (unsigned long long)after.live_blocks,
              (unsigned long long)after.live_bytes);
    return tu_finish("toml_test");
}
