/* src/witness/inputs.c: circom's FNV-1a signal hashes (values from circom_runtime's fnvHash),
 * every value form snarkjs accepts, flattening order and element paths, and the errors. */
#include <stdio.h>
#include <string.h>

#include "cuzk/json.h"
#include "testutil.h"
#include "witness/inputs.h"
#include "witness/internal.h"

static cuzk_err parse(cuzk__inputs *in, cuzk_json_doc **doc, const char *text, cuzk_errbuf *eb)
{
    *doc = NULL;
    cuzk_err e = cuzk_json_parse(doc, text, strlen(text), 0, "in.json", eb);
    if (e)
        return e;
    return cuzk__inputs_parse(in, cuzk_json_root(*doc), "in.json", eb);
}

static int is_small(const cuzk__input_value *v, uint64_t x, int neg)
{
    for (int i = 0; i < 32; i++)
        if (v->mag[i] != (i < 8 ? (uint8_t)(x >> (8 * i)) : 0))
            return 0;
    return v->neg == neg;
}

static void expect_err(const char *text, cuzk_err want, const char *needle)
{
    cuzk__inputs in;
    cuzk_json_doc *doc;
    cuzk_errbuf eb = {{0}};
    cuzk_err e = parse(&in, &doc, text, &eb);
    CHECK_MSG(e == want && strstr(eb.msg, needle), "%s -> %s (%s), want %s", text, eb.msg,
              cuzk_errname(e), needle);
    if (!e)
        cuzk__inputs_free(&in);
    cuzk_json_free(doc);
}

int main(void)
{
    CHECK(cuzk__fnv1a64("", 0) == 0xcbf29ce484222325ull);
    CHECK(cuzk__fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    CHECK(cuzk__fnv1a64("in", 2) == 0x08b73807b55c4bbeull);
    CHECK(cuzk__fnv1a64("signal_name", 11) == 0x78f6c1866540c8e9ull);

    cuzk__inputs in;
    cuzk_json_doc *doc;
    cuzk_errbuf eb = {{0}};
    CHECK(parse(&in, &doc,
                "{\"a\": [[1, \"2\", \"0x1F\"], [true, false, \"-5\"]], \"in\": \"0XfF\","
                " \"e\": [], \"big\": \"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
                "ffffffff\"}",
                &eb) == CUZK_OK);
    CHECK(in.n_signals == 4 && in.n_values == 8);
    CHECK(strcmp(in.signals[0].name, "a") == 0 && in.signals[0].first == 0 &&
          in.signals[0].count == 6);
    CHECK(in.signals[1].hash_hi == 0x08b73807u && in.signals[1].hash_lo == 0xb55c4bbeu);
    CHECK(in.signals[2].count == 0 && in.signals[3].first == 7);
    CHECK(is_small(&in.values[0], 1, 0) && is_small(&in.values[1], 2, 0) &&
          is_small(&in.values[2], 31, 0) && is_small(&in.values[3], 1, 0) &&
          is_small(&in.values[4], 0, 0) && is_small(&in.values[5], 5, 1) &&
          is_small(&in.values[6], 255, 0));
    int all_ff = 1;
    for (int i = 0; i < 32; i++)
        all_ff &= in.values[7].mag[i] == 0xff;
    CHECK(all_ff);
    char path[64];
    cuzk__inputs_path(path, sizeof path, "a", in.signals[0].json, 4);
    CHECK_MSG(strcmp(path, "a[1][1]") == 0, "%s", path);
    cuzk__inputs_path(path, sizeof path, "in", in.signals[1].json, 0);
    CHECK(strcmp(path, "in") == 0);
    cuzk__inputs_free(&in);
    cuzk_json_free(doc);

    /* 2^53 is the largest JSON number taken; decimal strings may be any size below 2^256. */
    CHECK(parse(&in, &doc, "{\"x\": 9007199254740992, \"y\": -9007199254740992}", &eb) == 0);
    CHECK(is_small(&in.values[0], 1ull << 53, 0) && is_small(&in.values[1], 1ull << 53, 1));
    cuzk__inputs_free(&in);
    cuzk_json_free(doc);
    expect_err("{\"x\": 9007199254740993}", CUZK_BAD_ENCODING, "x = 9007199254740993");
    expect_err("{\"x\": 1e3}", CUZK_BAD_ENCODING, "x = 1e3");
    expect_err("{\"x\": [1, [2, 3.5]]}", CUZK_BAD_ENCODING, "x[1][1] = 3.5");
    expect_err("{\"x\": \"\"}", CUZK_BAD_ENCODING, "is not a number");
    expect_err("{\"x\": \" 5\"}", CUZK_BAD_ENCODING, "is not a number");
    expect_err("{\"x\": \"0x\"}", CUZK_BAD_ENCODING, "is not a number");
    expect_err("{\"x\": \"-0x5\"}", CUZK_BAD_ENCODING, "is not a number");
    expect_err("{\"x\": \"12a\"}", CUZK_BAD_ENCODING, "is not a number");
    expect_err("{\"x\": {\"y\": 1}}", CUZK_BAD_ENCODING, "x is an object");
    expect_err("{\"x\": [null]}", CUZK_BAD_ENCODING, "x[0] is null");
    expect_err("{\"x\": \"0x1ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\"}",
               CUZK_NON_CANONICAL, "not below the field modulus");
    expect_err("{\"x\": \"115792089237316195423570985008687907853269984665640564039457584007913"
               "129639936\"}",
               CUZK_NON_CANONICAL, "not below the field modulus"); /* 2^256 */
    expect_err("[1]", CUZK_BAD_ENCODING, "must be a JSON object");
    expect_err("{\"x\": 1, \"x\": 2}", CUZK_BAD_ENCODING, "duplicate key");
    return tu_finish("witness_inputs_test");
}
