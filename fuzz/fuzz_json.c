/* libFuzzer target for the JSON reader (src/util/json.c: what `cuzk verify` reads from
 * proof.json, public.json and verification_key.json). Built and run by scripts/fuzz-smoke.sh
 * (target json; seeds in fuzz/corpus/json/).
 * Invariants checked: a parse either succeeds or fails with BAD_ENCODING (NO_MEMORY if memory
 * runs out), a "name:" message and no document; a parsed tree is well formed (strings and
 * keys NUL-terminated at their length with no NUL inside, numbers a JSON number's characters,
 * children present); written back out with the writer (cuzk_sb_json_string) it parses again to
 * the same tree; nothing leaks (ASan). */
#include <stdlib.h>
#include <string.h>

#include "cuzk/json.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void check_str(const char *s, size_t len)
{
    if (!s || s[len] != 0 || strlen(s) != len)
        __builtin_trap();
}

static void walk(const cuzk_json *v, int depth)
{
    if (!v || depth > CUZK_JSON_MAX_DEPTH + 1)
        __builtin_trap();
    switch (v->type) {
    case CUZK_JSON_NULL:
    case CUZK_JSON_BOOL: break;
    case CUZK_JSON_NUMBER:
        check_str(v->str, v->len);
        if (v->len == 0 || strspn(v->str, "0123456789+-.eE") != v->len)
            __builtin_trap();
        break;
    case CUZK_JSON_STRING: check_str(v->str, v->len); break;
    case CUZK_JSON_ARRAY:
    case CUZK_JSON_OBJECT:
        for (size_t i = 0; i < v->n; i++) {
            if (v->type == CUZK_JSON_OBJECT) {
                check_str(v->keys[i], strlen(v->keys[i]));
                if (cuzk_json_get(v, v->keys[i]) == NULL)
                    __builtin_trap();
            }
            if (cuzk_json_at(v, i) != (v->type == CUZK_JSON_ARRAY ? v->items[i] : NULL))
                __builtin_trap();
            walk(v->items[i], depth + 1);
        }
        break;
    default: __builtin_trap();
    }
}

static void emit(cuzk_strbuf *sb, const cuzk_json *v)
{
    switch (v->type) {
    case CUZK_JSON_NULL: cuzk_sb_puts(sb, "null"); break;
    case CUZK_JSON_BOOL: cuzk_sb_puts(sb, v->boolean ? "true" : "false"); break;
    case CUZK_JSON_NUMBER: cuzk_sb_puts(sb, v->str); break;
    case CUZK_JSON_STRING: cuzk_sb_json_string(sb, v->str); break;
    default:
        cuzk_sb_puts(sb, v->type == CUZK_JSON_ARRAY ? "[" : "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                cuzk_sb_puts(sb, ",");
            if (v->type == CUZK_JSON_OBJECT) {
                cuzk_sb_json_string(sb, v->keys[i]);
                cuzk_sb_puts(sb, ":");
            }
            emit(sb, v->items[i]);
        }
        cuzk_sb_puts(sb, v->type == CUZK_JSON_ARRAY ? "]" : "}");
    }
}

static int same(const cuzk_json *a, const cuzk_json *b)
{
    if (a->type != b->type || a->n != b->n)
        return 0;
    switch (a->type) {
    case CUZK_JSON_NULL: return 1;
    case CUZK_JSON_BOOL: return a->boolean == b->boolean;
    case CUZK_JSON_NUMBER:
    case CUZK_JSON_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    default:
        for (size_t i = 0; i < a->n; i++)
            if ((a->type == CUZK_JSON_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0) ||
                !same(a->items[i], b->items[i]))
                return 0;
        return 1;
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    cuzk_json_doc *doc = NULL, *again = NULL;
    cuzk_errbuf eb;
    cuzk_err e = cuzk_json_parse(&doc, (const char *)data, size, 0, "f.json", &eb);
    if (e != CUZK_OK) {
        if ((e != CUZK_BAD_ENCODING && e != CUZK_NO_MEMORY) || doc != NULL ||
            strncmp(eb.msg, "f.json:", 7) != 0)
            __builtin_trap();
        return 0;
    }
    const cuzk_json *root = cuzk_json_root(doc);
    walk(root, 0);
    cuzk_strbuf sb;
    cuzk_sb_init(&sb);
    emit(&sb, root);
    if (sb.oom)
        __builtin_trap();
    if (cuzk_json_parse(&again, sb.buf, sb.len, 0, "again.json", &eb) != CUZK_OK ||
        !same(root, cuzk_json_root(again)))
        __builtin_trap();
    cuzk_json_free(again);
    cuzk_sb_free(&sb);
    cuzk_json_free(doc);
    return 0;
}
