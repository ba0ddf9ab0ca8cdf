/* The strict JSON reader: valid documents of every construct, and rejection (with a line and
 * column) of malformed ones, duplicate keys, depth bombs and oversized input. */
#include <string.h>

#include "cuzk/json.h"
#include "testutil.h"

static const cuzk_json *parse_ok(cuzk_json_doc **d, const char *s)
{
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_json_parse(d, s, strlen(s), 0, "t.json", &eb);
    CHECK_MSG(e == CUZK_OK, "%s: %s", s, eb.msg);
    return e ? NULL : cuzk_json_root(*d);
}

static void parse_bad(const char *s, const char *want)
{
    cuzk_json_doc *d = NULL;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = cuzk_json_parse(&d, s, strlen(s), 0, "t.json", &eb);
    CHECK_MSG(e == CUZK_BAD_ENCODING, "accepted: %s", s);
    CHECK_MSG(d == NULL, "doc set on error: %s", s);
    CHECK_MSG(strstr(eb.msg, want) != NULL, "%s: message '%s' lacks '%s'", s, eb.msg, want);
}

int main(void)
{
    cuzk_json_doc *d;
    const cuzk_json *r = parse_ok(&d, " {\"a\": [1, -2.5e3, \"x\\n\\u00e9\\\"\", true, false, null],"
                                      " \"b\": {}, \"c\": []} ");
    CHECK(r && r->type == CUZK_JSON_OBJECT && r->n == 3);
    const cuzk_json *a = cuzk_json_get(r, "a");
    CHECK(a && a->type == CUZK_JSON_ARRAY && a->n == 6);
    CHECK(strcmp(cuzk_json_at(a, 0)->str, "1") == 0);
    CHECK(strcmp(cuzk_json_at(a, 1)->str, "-2.5e3") == 0);
    CHECK(strcmp(cuzk_json_at(a, 2)->str, "x\n\xc3\xa9\"") == 0);
    CHECK(cuzk_json_at(a, 3)->type == CUZK_JSON_BOOL && cuzk_json_at(a, 3)->boolean == 1);
    CHECK(cuzk_json_at(a, 4)->boolean == 0 && cuzk_json_at(a, 5)->type == CUZK_JSON_NULL);
    CHECK(cuzk_json_at(a, 6) == NULL && cuzk_json_get(r, "zz") == NULL);
    CHECK(cuzk_json_get(r, "b")->n == 0 && cuzk_json_get(r, "c")->type == CUZK_JSON_ARRAY);
    cuzk_json_free(d);

    parse_bad("", "unexpected end");
    parse_bad("{", "t.json:1:2");
    parse_bad("[1,]", "unexpected character");
    parse_bad("{\"a\":1,\"a\":2}", "duplicate key");
    parse_bad("[1] x", "trailing");
    parse_bad("\"abc", "unterminated");
    parse_bad("01", "leading zero");
    parse_bad("[\"\\x\"]", "bad escape");
    parse_bad("[\"\\u00zz\"]", "bad \\u");
    parse_bad("[\"\\u0000\"]", "not allowed");
    parse_bad("[\"a\nb\"]", "control character");
    parse_bad("{1:2}", "string key");
    parse_bad("[1 2]", "expected ','");
    parse_bad("\n\n  tru", "t.json:3:3");
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    parse_bad(deep, "too deep");
    /* size cap */
    cuzk_errbuf eb;
    CHECK(cuzk_json_parse(&d, "[1, 2, 3]", 9, 4, "t.json", &eb) == CUZK_BAD_ENCODING);
    CHECK(strstr(eb.msg, "limit") != NULL);

    /* writer: escapes round-trip through the reader */
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
    cuzk_sb_puts(&sb, "[");
    cuzk_sb_json_string(&sb, "q\"b\\s\n\x01");
    cuzk_sb_printf(&sb, ",%d]", 42);
    r = parse_ok(&d, sb.buf);
    CHECK(r && strcmp(cuzk_json_at(r, 0)->str, "q\"b\\s\n\x01") == 0);
    CHECK(r && strcmp(cuzk_json_at(r, 1)->str, "42") == 0);
    cuzk_json_free(d);
    cuzk_sb_free(&sb);

    /* fuzz-ish: random byte strings never crash, and either parse or give BAD_ENCODING */
    for (int it = 0; it < 20000; it++) {
        char buf[32];
        const char alphabet[] = "{}[]\",:0123456789-+.eEtrufalsn \\u\n";
        size_t n = tu_rand64() % sizeof buf;
        for (size_t i = 0; i < n; i++)
            buf[i] = alphabet[tu_rand64() % (sizeof alphabet - 1)];
        cuzk_err e = cuzk_json_parse(&d, buf, n, 0, "r", &eb);
        CHECK(e == CUZK_OK || e == CUZK_BAD_ENCODING);
        if (!e)
            cuzk_json_free(d);
    }
    return tu_finish("json");
}
