/*
 * Per-field body of ff_gmp_test.c, included once per field after defining
 *   TF       the field prefix (bn254_fp, ...)
 *   TF_N     its number of limbs
 *   TF_SQRT  1 for the Fp fields (sqrt exists)
 * Every expected value is computed by GMP from the canonical values, independently of the
 * code under test: an element whose canonical value is v must hold the limbs of v*R mod p,
 * R = 2^(64*TF_N), with R taken from GMP and p from the generated constants only.
 */
#define TFN_(a, b) a##_##b
#define TFN(a, b) TFN_(a, b)
#define T_(x) TFN(TF, x)
#define TF_STR_(x) #x
#define TF_STR(x) TF_STR_(x)

/* Element whose canonical value is v (v < p), built with GMP only. */
static void T_(elem)(T_(t) *x, const field_ctx *c, const mpz_t v)
{
    mpz_t m;
    mpz_init(m);
    mpz_mul_2exp(m, v, 64 * TF_N);
    mpz_mod(m, m, c->p);
    limbs_from_mpz(x->l, TF_N, m);
    mpz_clear(m);
}

/* Checks that x holds the canonical value want (reduced mod p here), bit for bit. */
static void T_(expect)(const field_ctx *c, const T_(t) *x, const mpz_t want, const char *op,
                       const mpz_t a, const mpz_t b)
{
    mpz_t w;
    T_(t) e;
    mpz_init(w);
    mpz_mod(w, want, c->p);
    T_(elem)(&e, c, w);
    int ok = memcmp(e.l, x->l, sizeof e.l) == 0;
    CHECK_MSG(ok, "%s %s (asm=%d) a=%s b=%s", TF_STR(TF), op, cuzk__ff_use_asm,
              mpz_get_str(g_strbuf, 16, a), mpz_get_str(g_strbuf2, 16, b));
    mpz_clear(w);
}

static void T_(check_binary)(const field_ctx *c, const mpz_t va, const mpz_t vb)
{
    T_(t) a, b, r;
    mpz_t w;
    mpz_init(w);
    T_(elem)(&a, c, va);
    T_(elem)(&b, c, vb);

    T_(add)(&r, &a, &b);
    mpz_add(w, va, vb);
    T_(expect)(c, &r, w, "add", va, vb);
    T_(sub)(&r, &a, &b);
    mpz_sub(w, va, vb);
    T_(expect)(c, &r, w, "sub", va, vb);
    T_(mul)(&r, &a, &b);
    mpz_mul(w, va, vb);
    T_(expect)(c, &r, w, "mul", va, vb);

    /* Aliased outputs. */
    r = a;
    T_(mul)(&r, &r, &b);
    T_(expect)(c, &r, w, "mul r=a", va, vb);
    r = b;
    T_(mul)(&r, &a, &r);
    T_(expect)(c, &r, w, "mul r=b", va, vb);
    r = a;
    T_(add)(&r, &r, &b);
    mpz_add(w, va, vb);
    T_(expect)(c, &r, w, "add r=a", va, vb);
    r = b;
    T_(sub)(&r, &a, &r);
    mpz_sub(w, va, vb);
    T_(expect)(c, &r, w, "sub r=b", va, vb);

    CHECK(T_(eq)(&a, &b) == (mpz_cmp(va, vb) == 0));
    mpz_clear(w);
}

static void T_(check_unary)(const field_ctx *c, const mpz_t va)
{
    T_(t) a, r;
    mpz_t w, z;
    mpz_inits(w, z, NULL);
    T_(elem)(&a, c, va);

    T_(neg)(&r, &a);
    mpz_neg(w, va);
    T_(expect)(c, &r, w, "neg", va, z);
    T_(dbl)(&r, &a);
    mpz_mul_2exp(w, va, 1);
    T_(expect)(c, &r, w, "dbl", va, z);
    T_(sqr)(&r, &a);
    mpz_mul(w, va, va);
    T_(expect)(c, &r, w, "sqr", va, z);
    r = a;
    T_(sqr)(&r, &r);
    T_(expect)(c, &r, w, "sqr r=a", va, z);
    T_(mul)(&r, &a, &a);
    T_(expect)(c, &r, w, "mul a*a", va, z);
    CHECK(T_(is_zero)(&a) == (mpz_sgn(va) == 0));
    CHECK(T_(is_one)(&a) == (mpz_cmp_ui(va, 1) == 0));

    /* Canonical limbs both ways. */
    uint64_t l[TF_N], lw[TF_N];
    T_(to_canonical)(l, &a);
    limbs_from_mpz(lw, TF_N, va);
    CHECK_MSG(memcmp(l, lw, sizeof l) == 0, "%s to_canonical", TF_STR(TF));
    T_(from_canonical)(&r, lw);
    T_(expect)(c, &r, va, "from_canonical", va, z);
    T_(from_mont_bytes_le)(&r, (const uint8_t *)a.l); /* limbs are LE on x86-64 */
    CHECK(T_(eq)(&r, &a));

    /* Bytes, both endiannesses, exact layout from GMP. */
    uint8_t le[8 * TF_N], be[8 * TF_N], wle[8 * TF_N], wbe[8 * TF_N];
    bytes_from_mpz(wle, 8 * TF_N, va, -1);
    bytes_from_mpz(wbe, 8 * TF_N, va, 1);
    T_(to_bytes_le)(le, &a);
    T_(to_bytes_be)(be, &a);
    CHECK_MSG(memcmp(le, wle, sizeof le) == 0, "%s to_bytes_le", TF_STR(TF));
    CHECK_MSG(memcmp(be, wbe, sizeof be) == 0, "%s to_bytes_be", TF_STR(TF));
    memset(&r, 0xa5, sizeof r);
    CHECK(T_(from_bytes_le)(&r, wle) == 0);
    CHECK(T_(eq)(&r, &a));
    memset(&r, 0xa5, sizeof r);
    CHECK(T_(from_bytes_be)(&r, wbe) == 0);
    CHECK(T_(eq)(&r, &a));

    /* Decimal, from GMP's own string (and with leading zeros). */
    char want[200], got[200];
    mpz_get_str(want, 10, va);
    size_t n = T_(to_dec)(got, sizeof got, &a);
    CHECK_MSG(n == strlen(want) && strcmp(got, want) == 0, "%s to_dec %s vs %s", TF_STR(TF),
              got, want);
    CHECK(T_(to_dec)(got, strlen(want), &a) == 0); /* no room for the NUL */
    memset(&r, 0xa5, sizeof r);
    CHECK(T_(from_dec)(&r, want, strlen(want)) == 0);
    CHECK(T_(eq)(&r, &a));
    char padded[220] = "000";
    strcat(padded, want);
    memset(&r, 0xa5, sizeof r);
    CHECK(T_(from_dec)(&r, padded, strlen(padded)) == 0);
    CHECK(T_(eq)(&r, &a));
    mpz_clears(w, z, NULL);
}

/* Inverse (0 maps to 0) and, for a sample, exponentiation. */
static void T_(check_inv)(const field_ctx *c, const mpz_t va)
{
    T_(t) a, r;
    mpz_t w, z;
    mpz_inits(w, z, NULL);
    T_(elem)(&a, c, va);
    T_(inv)(&r, &a);
    if (mpz_sgn(va) == 0)
        mpz_set_ui(w, 0);
    else
        CHECK(mpz_invert(w, va, c->p) != 0);
    T_(expect)(c, &r, w, "inv", va, z);
    r = a;
    T_(inv)(&r, &r);
    T_(expect)(c, &r, w, "inv r=a", va, z);
    mpz_clears(w, z, NULL);
}

static void T_(check_pow)(const field_ctx *c, const mpz_t va)
{
    T_(t) a, r;
    mpz_t w, e;
    mpz_inits(w, e, NULL);
    T_(elem)(&a, c, va);
    uint64_t el[TF_N];
    for (int i = 0; i < TF_N; i++)
        el[i] = tu_rand64();
    /* Short exponents too, so leading zero limbs are exercised. */
    int nl = 1 + (int)(tu_rand64() % TF_N);
    mpz_from_limbs(e, el, nl);
    T_(pow_limbs)(&r, &a, el, nl);
    mpz_powm(w, va, e, c->p);
    T_(expect)(c, &r, w, "pow_limbs", va, e);
    uint64_t e64 = tu_rand64() >> (tu_rand64() % 64);
    mpz_set_ui(e, 0);
    mpz_import(e, 1, -1, 8, 0, 0, &e64);
    T_(pow_u64)(&r, &a, e64);
    mpz_powm(w, va, e, c->p);
    T_(expect)(c, &r, w, "pow_u64", va, e);
    T_(pow_u64)(&r, &a, 0);
    mpz_set_ui(w, 1);
    T_(expect)(c, &r, w, "pow_u64 e=0", va, e);
    mpz_clears(w, e, NULL);
}

static void T_(check_legendre_sqrt)(const field_ctx *c, const mpz_t va)
{
    T_(t) a;
    mpz_t z, sq;
    mpz_inits(z, sq, NULL);
    T_(elem)(&a, c, va);
    int want = mpz_legendre(va, c->p);
    CHECK_MSG(T_(legendre)(&a) == want, "%s legendre", TF_STR(TF));
#if TF_SQRT
    {
        T_(t) r, s;
        mpz_t w;
        mpz_init(w);
        /* Non-squares are rejected; for squares the root is checked by GMP. */
        memset(&r, 0xa5, sizeof r);
        int rc = T_(sqrt)(&r, &a);
        CHECK_MSG(rc == (want >= 0 ? 0 : -1), "%s sqrt rc", TF_STR(TF));
        if (rc == 0) {
            T_(sqr)(&s, &r);
            CHECK(T_(eq)(&s, &a));
            /* Decode r independently: r_limbs * R^-1. */
            mpz_from_limbs(w, r.l, TF_N);
            mpz_mul(w, w, c->Rinv);
            mpz_mul(w, w, w);
            mpz_sub(w, w, va);
            mpz_mod(w, w, c->p);
            CHECK_MSG(mpz_sgn(w) == 0, "%s sqrt root", TF_STR(TF));
        }
        /* va^2 is always a square, with roots +-va. */
        mpz_mul(sq, va, va);
        mpz_mod(sq, sq, c->p);
        T_(elem)(&a, c, sq);
        rc = T_(sqrt)(&r, &a);
        CHECK(rc == 0);
        mpz_from_limbs(w, r.l, TF_N);
        mpz_mul(w, w, c->Rinv);
        mpz_mod(w, w, c->p);
        mpz_sub(z, c->p, va);
        mpz_mod(z, z, c->p);
        CHECK_MSG(mpz_cmp(w, va) == 0 || mpz_cmp(w, z) == 0, "%s sqrt of square",
                  TF_STR(TF));
        CHECK(T_(legendre)(&a) == (mpz_sgn(va) ? 1 : 0));
        mpz_clear(w);
    }
#endif
    mpz_clears(z, sq, NULL);
}

/* Batch inversion of n values with zeros mixed in, in place and out of place. */
static void T_(check_batch_inv)(const field_ctx *c, mpz_t *vals, size_t n)
{
    T_(t) in[64], out[64], scratch[64];
    mpz_t w, z;
    mpz_inits(w, z, NULL);
    for (size_t i = 0; i < n; i++)
        T_(elem)(&in[i], c, vals[i]);
    T_(batch_inv)(out, in, n, scratch);
    for (size_t i = 0; i < n; i++) {
        if (mpz_sgn(vals[i]) == 0)
            mpz_set_ui(w, 0);
        else
            mpz_invert(w, vals[i], c->p);
        T_(expect)(c, &out[i], w, "batch_inv", vals[i], z);
    }
    T_(batch_inv)(in, in, n, scratch);
    CHECK(memcmp(in, out, n * sizeof in[0]) == 0);
    mpz_clears(w, z, NULL);
}

/* Byte and decimal parsing: non-canonical and malformed inputs are rejected. */
static void T_(check_parsing)(const field_ctx *c)
{
    T_(t) r;
    uint8_t le[8 * TF_N], be[8 * TF_N];
    char s[260];
    mpz_t v, top;
    mpz_inits(v, top, NULL);
    mpz_setbit(top, 64 * TF_N);

    /* Values >= p in bytes: p, p+1, p+2^k, 2^(64N)-1, random ones. */
    for (int k = -2; k < 64 * TF_N + 40; k++) {
        if (k == -2)
            mpz_set(v, c->p);
        else if (k == -1)
            mpz_sub_ui(v, top, 1);
        else if (k < 64 * TF_N) {
            mpz_set_ui(v, 0);
            mpz_setbit(v, k);
            mpz_add(v, v, c->p);
        } else {
            uint64_t l[TF_N];
            for (int i = 0; i < TF_N; i++)
                l[i] = tu_rand64();
            mpz_from_limbs(v, l, TF_N);
            if (mpz_cmp(v, c->p) < 0)
                mpz_add(v, v, c->p);
        }
        if (mpz_cmp(v, top) >= 0)
            continue;
        bytes_from_mpz(le, sizeof le, v, -1);
        bytes_from_mpz(be, sizeof be, v, 1);
        CHECK_MSG(T_(from_bytes_le)(&r, le) == -1, "%s from_bytes_le accepted >= p (k=%d)",
                  TF_STR(TF), k);
        CHECK_MSG(T_(from_bytes_be)(&r, be) == -1, "%s from_bytes_be accepted >= p (k=%d)",
                  TF_STR(TF), k);
        CHECK(T_(from_mont_bytes_le)(&r, le) == -1);
        mpz_get_str(s, 10, v);
        CHECK_MSG(T_(from_dec)(&r, s, strlen(s)) == -1, "%s from_dec accepted %s", TF_STR(TF),
                  s);
    }

    /* p - 1 is the largest accepted value, p the smallest rejected. */
    mpz_sub_ui(v, c->p, 1);
    mpz_get_str(s, 10, v);
    CHECK(T_(from_dec)(&r, s, strlen(s)) == 0);
    T_(expect)(c, &r, v, "from_dec p-1", v, v);
    mpz_get_str(s, 10, c->p);
    CHECK(T_(from_dec)(&r, s, strlen(s)) == -1);

    /* Far too long numbers (overflowing every intermediate width). */
    mpz_ui_pow_ui(v, 10, 200);
    mpz_get_str(s, 10, v);
    CHECK(T_(from_dec)(&r, s, strlen(s)) == -1);
    mpz_mul_2exp(v, c->p, 64);
    mpz_get_str(s, 10, v);
    CHECK(T_(from_dec)(&r, s, strlen(s)) == -1);

    /* Zero in several spellings, leading zeros, length-limited parsing. */
    static const char *zeros[] = {"0", "00", "0000000000000000000000000000000000000000000"};
    for (size_t i = 0; i < sizeof zeros / sizeof zeros[0]; i++) {
        memset(&r, 0xa5, sizeof r);
        CHECK(T_(from_dec)(&r, zeros[i], strlen(zeros[i])) == 0);
        CHECK(T_(is_zero)(&r));
    }
    CHECK(T_(from_dec)(&r, "0007", 4) == 0);
    mpz_set_ui(v, 7);
    T_(expect)(c, &r, v, "from_dec 0007", v, v);
    CHECK(T_(from_dec)(&r, "12345", 3) == 0); /* only the first len bytes count */
    mpz_set_ui(v, 123);
    T_(expect)(c, &r, v, "from_dec len", v, v);
    CHECK(T_(to_dec)(s, sizeof s, &r) == 3 && strcmp(s, "123") == 0);
    T_(set_zero)(&r);
    CHECK(T_(to_dec)(s, sizeof s, &r) == 1 && strcmp(s, "0") == 0);
    CHECK(T_(to_dec)(s, 1, &r) == 0);

    /* Malformed decimal strings. */
    static const char *bad[] = {"", "-1", "+1", " 1", "1 ", "12a3", "0x10", "1.0", "1e5",
                                "\xd9\xa1", "/", ":"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(T_(from_dec)(&r, bad[i], strlen(bad[i])) == -1, "%s from_dec accepted '%s'",
                  TF_STR(TF), bad[i]);
    CHECK(T_(from_dec)(&r, "1\0" "2", 3) == -1); /* embedded NUL */

    /* from_u64 and the constants. */
    for (int i = 0; i < 200; i++) {
        uint64_t u = tu_rand64() >> (tu_rand64() % 64);
        T_(from_u64)(&r, u);
        mpz_import(v, 1, -1, 8, 0, 0, &u);
        T_(expect)(c, &r, v, "from_u64", v, v);
    }
    mpz_set_ui(v, 1);
    T_(expect)(c, &T_(ONE), v, "ONE", v, v);
    mpz_set_ui(v, 0);
    T_(expect)(c, &T_(ZERO), v, "ZERO", v, v);
    mpz_mul_2exp(v, top, 0);
    mpz_mod(v, v, c->p); /* R2 holds R^2 mod p in Montgomery form: canonical value R. */
    T_(expect)(c, &T_(R2), v, "R2", v, v);
    mpz_clears(v, top, NULL);
}

/* Direct kernel comparison: asm against the portable C, bit for bit, on raw limbs < p. */
static void T_(check_kernels_agree)(const field_ctx *c, mpz_t *vals, size_t n, long rounds)
{
#if CUZK_FF_HAVE_ASM
    if (!cuzk_ff_cpu_has_adx())
        return;
    uint64_t n0 = TFN(TF_UPPER, N0);
    for (long k = 0; k < rounds; k++) {
        T_(t) a, b, rc, ra;
        if (k < (long)n * 2) {
            limbs_from_mpz(a.l, TF_N, vals[k % n]); /* edge values as raw Montgomery limbs */
            limbs_from_mpz(b.l, TF_N, vals[(k * 7 + k / (long)n) % n]);
        } else {
            random_below(c, a.l, TF_N);
            random_below(c, b.l, TF_N);
        }
        T_(mul_portable)(&rc, &a, &b);
        TFN(cuzk__mul_mont_asm, TF_N)(ra.l, a.l, b.l, T_(P).l, n0);
        CHECK_MSG(memcmp(rc.l, ra.l, sizeof ra.l) == 0, "%s asm mul differs", TF_STR(TF));
        T_(mul_portable)(&rc, &a, &a);
        TFN(cuzk__sqr_mont_asm, TF_N)(ra.l, a.l, T_(P).l, n0);
        CHECK_MSG(memcmp(rc.l, ra.l, sizeof ra.l) == 0, "%s asm sqr differs", TF_STR(TF));
        ra = a;
        TFN(cuzk__sqr_mont_asm, TF_N)(ra.l, ra.l, T_(P).l, n0);
        CHECK(memcmp(rc.l, ra.l, sizeof ra.l) == 0);
        T_(mul_portable)(&rc, &a, &b);
        ra = b;
        TFN(cuzk__mul_mont_asm, TF_N)(ra.l, a.l, ra.l, T_(P).l, n0);
        CHECK(memcmp(rc.l, ra.l, sizeof ra.l) == 0);
    }
#else
    (void)c;
    (void)vals;
    (void)n;
    (void)rounds;
#endif
}

static void T_(run)(long iters)
{
    field_ctx c;
    T_(t) pm = T_(P);
    ctx_init(&c, pm.l, TF_N);
    mpz_t *edges;
    size_t ne = edge_values(&c, &edges);
    mpz_t va, vb;
    mpz_inits(va, vb, NULL);
    mpz_t batch[64];
    for (int i = 0; i < 64; i++)
        mpz_init(batch[i]);

    int kernels = (CUZK_FF_HAVE_ASM && cuzk_ff_cpu_has_adx()) ? 2 : 1;
    for (int kern = 0; kern < kernels; kern++) {
        cuzk__ff_use_asm = kern;
        /* Edge values: every unary op; binary ops against a few other edges. */
        for (size_t i = 0; i < ne; i++) {
            T_(check_unary)(&c, edges[i]);
            T_(check_binary)(&c, edges[i], edges[i]);
            for (int k = 0; k < 4; k++)
                T_(check_binary)(&c, edges[i], edges[tu_rand64() % ne]);
            if (i % 4 == 0 || i < 16)
                T_(check_inv)(&c, edges[i]);
            if (i % 16 == 0 || i < 16)
                T_(check_legendre_sqrt)(&c, edges[i]);
        }
        /* Random values. */
        for (long i = 0; i < iters; i++) {
            random_value(&c, va);
            random_value(&c, vb);
            T_(check_binary)(&c, va, vb);
            T_(check_unary)(&c, va);
            if (i % 2 == 0)
                T_(check_inv)(&c, va);
            if (i % 8 == 0) {
                T_(check_pow)(&c, va);
                T_(check_legendre_sqrt)(&c, va);
            }
        }
        /* Batch inversion: several sizes, zeros at the ends and inside. */
        for (size_t n = 1; n <= 64; n += 9) {
            for (size_t i = 0; i < n; i++) {
                if (i == 0 || i == n - 1 || tu_rand64() % 5 == 0)
                    mpz_set_ui(batch[i], tu_rand64() % 3 == 0 ? 1 : 0);
                else
                    random_value(&c, batch[i]);
            }
            T_(check_batch_inv)(&c, batch, n);
        }
        T_(check_parsing)(&c);
    }
    cuzk_ff_init();
    /* Raw-limb edge values for the kernel comparison: the same list read as Montgomery limbs. */
    T_(check_kernels_agree)(&c, edges, ne, 2 * (long)ne + 4 * iters);

    for (int i = 0; i < 64; i++)
        mpz_clear(batch[i]);
    mpz_clears(va, vb, NULL);
    free_values(edges, ne);
    ctx_clear(&c);
}

#undef TFN_
#undef TFN
#undef T_
#undef TF_STR_
#undef TF_STR
#undef TF
#undef TF_UPPER
#undef TF_N
#undef TF_SQRT
