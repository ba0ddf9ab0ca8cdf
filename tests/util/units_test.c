/* Size and duration strings: known answers, every rejected form, and random sizes
 * cross-checked against GMP for the arithmetic and the overflow bound. */
#include <gmp.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/units.h"
#include "testutil.h"

static void test_sizes(void)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"0", 0},
        {"1048576", 1048576},
        {"512B", 512},
        {"4KiB", 4096},
        {"64MiB", 64ull << 20},
        {"50GiB", 50ull << 30},
        {"50 GiB", 50ull << 30},
        {" 2TiB ", 2ull << 40},
        {"1PiB", 1ull << 50},
        {"4KB", 4000},
        {"4kB", 4000},
        {"64MB", 64000000},
        {"50GB", 50000000000ull},
        {"2TB", 2000000000000ull},
        {"1_000_000", 1000000},
        {"18446744073709551615", UINT64_MAX},
        {"16383PiB", 16383ull << 50},
    };
    cuzk_errbuf eb;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 12345;
        cuzk_err e = cuzk_parse_size(ok[i].s, &v, &eb);
        CHECK_MSG(e == CUZK_OK && v == ok[i].v, "'%s' -> %d %llu (%s)", ok[i].s, e,
                  (unsigned long long)v, e ? eb.msg : "");
    }
    static const char *bad[] = {
        "",
        " ",
        "GiB",
        "-1",
        "+1",
        "1.5GiB",
        "0.5GiB",
        "50gib",
        "50G",
        "50 Gi",
        "50GiBs",
        "5 0",
        "50GiB x",
        "1__0",
        "_1",
        "1_",
        "0x10",
        "18446744073709551616",
        "16384PiB",
        "18446744073709551615KB",
        "99999999999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 12345;
        cuzk_err e = cuzk_parse_size(bad[i], &v, &eb);
        CHECK_MSG(e == CUZK_BAD_CONFIG && v == 12345, "'%s' accepted as %llu", bad[i],
                  (unsigned long long)v);
        CHECK_MSG(strstr(eb.msg, bad[i]) != NULL, "message does not quote the input: %s", eb.msg);
    }
    CHECK(cuzk_parse_size("0.5GiB", &(uint64_t){0}, &eb) == CUZK_BAD_CONFIG &&
          strstr(eb.msg, "512MiB") != NULL);

    /* Random numbers and units against GMP: exact product or overflow past 2^64-1. */
    static const struct {
        const char *u;
        unsigned shift; /* binary: 2^shift */
        uint64_t dec;   /* decimal multiplier (0 for binary units) */
    } units[] = {{"", 0, 0},
                 {"B", 0, 0},
                 {"KiB", 10, 0},
                 {"MiB", 20, 0},
                 {"GiB", 30, 0},
                 {"TiB", 40, 0},
                 {"PiB", 50, 0},
                 {"KB", 0, 1000},
                 {"MB", 0, 1000000},
                 {"GB", 0, 1000000000ull},
                 {"TB", 0, 1000000000000ull},
                 {"PB", 0, 1000000000000000ull}};
    mpz_t n, m, lim;
    mpz_inits(n, m, lim, NULL);
    mpz_ui_pow_ui(lim, 2, 64);
    mpz_sub_ui(lim, lim, 1);
    for (int it = 0; it < 3000; it++) {
        uint64_t x = tu_rand64() >> (tu_rand64() % 64);
        size_t ui = tu_rand64() % (sizeof units / sizeof units[0]);
        char s[64];
        snprintf(s, sizeof s, "%llu%s%s", (unsigned long long)x, (it & 1) ? " " : "", units[ui].u);
        mpz_set_ui(n, 0);
        mpz_import(n, 1, -1, sizeof x, 0, 0, &x);
        if (units[ui].dec) {
            mpz_set_ui(m, 0);
            mpz_import(m, 1, -1, sizeof(uint64_t), 0, 0, &units[ui].dec);
            mpz_mul(n, n, m);
        } else {
            mpz_mul_2exp(n, n, units[ui].shift);
        }
        uint64_t v = 0;
        cuzk_err e = cuzk_parse_size(s, &v, &eb);
        if (mpz_cmp(n, lim) > 0) {
            CHECK_MSG(e == CUZK_BAD_CONFIG && strstr(eb.msg, "too large"), "'%s' should overflow",
                      s);
        } else {
            uint64_t want = 0;
            mpz_export(&want, NULL, -1, sizeof want, 0, 0, n);
            CHECK_MSG(e == CUZK_OK && v == want, "'%s': got %llu want %llu", s,
                      (unsigned long long)v, (unsigned long long)want);
        }
    }
    mpz_clears(n, m, lim, NULL);
}

static void test_durations(void)
{
    static const struct {
        const char *s;
        uint64_t ns;
    } ok[] = {
        {"0", 0},
        {"30s", 30000000000ull},
        {"500ms", 500000000ull},
        {"2m", 120000000000ull},
        {"1h30m", 5400000000000ull},
        {"1h 30m 15s", 5415000000000ull},
        {"1.5s", 1500000000ull},
        {"0.25ms", 250000},
        {"250us", 250000},
        {"7ns", 7},
        {"1d", 86400000000000ull},
        {"0.000000001s", 1},
        {"0.0000000019s", 1}, /* below 1 ns is dropped */
        {"5124095h", 5124095ull * 3600000000000ull},
        {"18446744073709551615ns", UINT64_MAX},
    };
    cuzk_errbuf eb;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 12345;
        cuzk_err e = cuzk_parse_duration(ok[i].s, &v, &eb);
        CHECK_MSG(e == CUZK_OK && v == ok[i].ns, "'%s' -> %d %llu (%s)", ok[i].s, e,
                  (unsigned long long)v, e ? eb.msg : "");
    }
    static const char *bad[] = {"",
                                "30",
                                "s",
                                "-1s",
                                "5min",
                                "1.s",
                                "1..5s",
                                "30 s x",
                                "1h30",
                                "5124096h",
                                "18446744073709551616ns",
                                "18446744073709551615ns1ns",
                                "1e3s",
                                "0s0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 12345;
        cuzk_err e = cuzk_parse_duration(bad[i], &v, &eb);
        CHECK_MSG(e == CUZK_BAD_CONFIG && v == 12345, "'%s' accepted as %llu", bad[i],
                  (unsigned long long)v);
    }
}

static void test_counts(void)
{
    cuzk_errbuf eb = {{0}};
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {{"1048576", 1048576}, {"2^20", 1u << 20}, {"2^0", 1}, {"64K", 65536},
              {"1M", 1u << 20}, {"1Gi", 1u << 30}, {"2TiB", 2ull << 40}, {"2^63", 1ull << 63}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 0;
        cuzk_err e = cuzk_parse_count(ok[i].s, &v, &eb);
        CHECK_MSG(e == CUZK_OK && v == ok[i].v, "'%s' -> %llu (err %d)", ok[i].s,
                  (unsigned long long)v, (int)e);
    }
    static const char *bad[] = {"", "-1", "2^", "2^64", "2^x", "1.5M", "1X", "M", "1Mx",
                                "99999999999999999999", "20000000000000T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 12345;
        cuzk_err e = cuzk_parse_count(bad[i], &v, &eb);
        CHECK_MSG(e == CUZK_BAD_CONFIG && v == 12345, "'%s' accepted as %llu", bad[i],
                  (unsigned long long)v);
    }
}

int main(void)
{
    test_sizes();
    test_durations();
    test_counts();
    return tu_finish("units_test");
}
