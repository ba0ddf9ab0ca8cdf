/* Input JSON -> flat list of signal values, as snarkjs reads input.json (circom_runtime's
 * flatArray + normalize): each member of the top-level object is one input signal; nested
 * arrays flatten in order; a value is a JSON integer, a decimal or 0x-hex string, a negative
 * decimal (counted from r) or a boolean. What needs the circuit (names, sizes, r) is checked
 * where the program runs (compute.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witness/inputs.h"

uint64_t cuzk__fnv1a64(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* v = v * m + a on 4 little-endian limbs; 1 on overflow past 2^256. */
static int mul_add(uint64_t v[4], uint64_t m, uint64_t a)
{
    unsigned __int128 carry = a;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 t = (unsigned __int128)v[i] * m + carry;
        v[i] = (uint64_t)t;
        carry = t >> 64;
    }
    return carry != 0;
}

static void to_le(uint8_t out[32], const uint64_t v[4])
{
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(v[i / 8] >> (8 * (i % 8)));
}

/* Decimal digits, or "0x.." when allow_hex, into v; 0 ok, 1 not a number, 2 past 256 bits. */
static int parse_digits(const char *s, size_t n, int allow_hex, uint64_t v[4])
{
    memset(v, 0, 4 * sizeof v[0]);
    int hex = allow_hex && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    size_t i = hex ? 2 : 0;
    if (i == n)
        return 1;
    for (; i < n; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (hex && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (hex && c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 1;
        if (mul_add(v, hex ? 16 : 10, (uint64_t)d))
            return 2;
    }
    return 0;
}

void cuzk__inputs_path(char *buf, size_t cap, const char *name, const cuzk_json *v, uint64_t k)
{
    size_t len = (size_t)snprintf(buf, cap, "%s", name);
    while (v && v->type == CUZK_JSON_ARRAY && len < cap) {
        /* Find the child holding the k-th leaf. */
        size_t i = 0;
        for (; i < v->n; i++) {
            uint64_t c = cuzk__inputs_leaves(v->items[i]);
            if (k < c)
                break;
            k -= c;
        }
        if (i == v->n)
            break;
        len += (size_t)snprintf(buf + len, cap - len, "[%zu]", i);
        v = v->items[i];
    }
}

uint64_t cuzk__inputs_leaves(const cuzk_json *v)
{
    if (v->type != CUZK_JSON_ARRAY)
        return 1;
    uint64_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        n += cuzk__inputs_leaves(v->items[i]);
    return n;
}

static cuzk_err leaf(cuzk__input_value *out, const cuzk_json *v, const char *inputs_name,
                     const char *name, const cuzk_json *top, uint64_t k, cuzk_errbuf *eb)
{
    char path[256];
    uint64_t limbs[4];
    memset(out, 0, sizeof *out);
    switch (v->type) {
    case CUZK_JSON_BOOL:
        out->mag[0] = v->boolean ? 1 : 0;
        return CUZK_OK;
    case CUZK_JSON_NUMBER: {
        /* JSON numbers pass through a double in snarkjs: only exact integers are taken. */
        const char *s = v->str;
        size_t n = v->len;
        out->neg = n > 0 && s[0] == '-';
        int r = parse_digits(s + out->neg, n - out->neg, 0, limbs);
        if (r == 0 && (limbs[1] | limbs[2] | limbs[3] || limbs[0] > (1ull << 53)))
            r = 3;
        if (r == 0) {
            to_le(out->mag, limbs);
            return CUZK_OK;
        }
        cuzk__inputs_path(path, sizeof path, name, top, k);
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s: %s = %.*s: a number must be an integer of at most 2^53 (write "
                         "larger values as decimal strings)",
                         inputs_name, path, (int)(n > 80 ? 80 : n), s);
    }
    case CUZK_JSON_STRING: {
        const char *s = v->str;
        size_t n = v->len;
        /* BigInt() takes "-123" but not "-0x7b". */
        out->neg = n > 1 && s[0] == '-';
        int r = parse_digits(s + out->neg, n - out->neg, !out->neg, limbs);
        if (r == 0) {
            to_le(out->mag, limbs);
            return CUZK_OK;
        }
        cuzk__inputs_path(path, sizeof path, name, top, k);
        if (r == 2)
            return cuzk_errf(eb, CUZK_NON_CANONICAL,
                             "%s: %s = \"%.80s\" is not below the field modulus r", inputs_name,
                             path, s);
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s: %s = \"%.80s\" is not a number (decimal, or hex with 0x)",
                         inputs_name, path, s);
    }
    default:
        cuzk__inputs_path(path, sizeof path, name, top, k);
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s: %s is %s, not a number, a numeric string or an array of them",
                         inputs_name, path,
                         v->type == CUZK_JSON_NULL ? "null" : "an object");
    }
}

static cuzk_err flatten(cuzk__inputs *in, const cuzk_json *v, const char *inputs_name,
                        const char *name, const cuzk_json *top, uint64_t *k, cuzk_errbuf *eb)
{
    if (v->type == CUZK_JSON_ARRAY) {
        for (size_t i = 0; i < v->n; i++) {
            cuzk_err e = flatten(in, v->items[i], inputs_name, name, top, k, eb);
            if (e)
                return e;
        }
        return CUZK_OK;
    }
    cuzk_err e = leaf(&in->values[in->n_values], v, inputs_name, name, top, *k, eb);
    in->n_values++;
    (*k)++;
    return e;
}

cuzk_err cuzk__inputs_parse(cuzk__inputs *in, const cuzk_json *root, const char *inputs_name,
                            cuzk_errbuf *eb)
{
    memset(in, 0, sizeof *in);
    if (!root || root->type != CUZK_JSON_OBJECT)
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s: the inputs must be a JSON object of signal name -> value(s)",
                         inputs_name);
    uint64_t total = 0;
    /* Duplicate keys never get here: the JSON reader refuses them. */
    for (size_t i = 0; i < root->n; i++)
        total += cuzk__inputs_leaves(root->items[i]);
    in->signals = calloc(root->n ? root->n : 1, sizeof *in->signals);
    in->values = calloc(total ? total : 1, sizeof *in->values);
    if (!in->signals || !in->values) {
        cuzk__inputs_free(in);
        return cuzk_errf(eb, CUZK_NO_MEMORY, "%s: out of memory for %llu input values",
                         inputs_name, (unsigned long long)total);
    }
    for (size_t i = 0; i < root->n; i++) {
        cuzk__input_signal *s = &in->signals[i];
        s->name = root->keys[i];
        s->json = root->items[i];
        uint64_t h = cuzk__fnv1a64(s->name, strlen(s->name));
        s->hash_hi = (uint32_t)(h >> 32);
        s->hash_lo = (uint32_t)h;
        s->first = in->n_values;
        uint64_t k = 0;
        cuzk_err e = flatten(in, s->json, inputs_name, s->name, s->json, &k, eb);
        if (e) {
            cuzk__inputs_free(in);
            return e;
        }
        s->count = k;
        in->n_signals++;
    }
    return CUZK_OK;
}

void cuzk__inputs_free(cuzk__inputs *in)
{
    free(in->signals);
    free(in->values);
    memset(in, 0, sizeof *in);
}
