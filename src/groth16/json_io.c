/* snarkjs JSON for proofs, public inputs and verification keys. Output matches snarkjs's
 * JSON.stringify(x, null, 1) layout byte for byte (one-space indentation, no final newline). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "ec/ec.h"
#include "ec/encode.h"
#include "ec/pairing.h"
#include "groth16/internal.h"

static void indent(cuzk_strbuf *sb, int depth)
{
    cuzk_sb_puts(sb, "\n");
    for (int i = 0; i < depth; i++)
        cuzk_sb_puts(sb, " ");
}

/* An array of n strings at the given depth (the opening bracket is already placed). */
static void str_array(cuzk_strbuf *sb, char (*s)[CUZK_EC_DEC_MAX], int n, int depth)
{
    cuzk_sb_puts(sb, "[");
    for (int i = 0; i < n; i++) {
        indent(sb, depth + 1);
        cuzk_sb_json_string(sb, s[i]);
        if (i + 1 < n)
            cuzk_sb_puts(sb, ",");
    }
    indent(sb, depth);
    cuzk_sb_puts(sb, "]");
}

/* G1 as [x, y, z]; G2 as [[x0, x1], [y0, y1], [z0, z1]] (strings from the encoder). */
static void g1_json(cuzk_strbuf *sb, char (*s)[CUZK_EC_DEC_MAX], int depth)
{
    str_array(sb, s, 3, depth);
}

static void g2_json(cuzk_strbuf *sb, char (*s)[CUZK_EC_DEC_MAX], int depth)
{
    cuzk_sb_puts(sb, "[");
    for (int i = 0; i < 3; i++) {
        indent(sb, depth + 1);
        str_array(sb, s + 2 * i, 2, depth + 1);
        if (i < 2)
            cuzk_sb_puts(sb, ",");
    }
    indent(sb, depth);
    cuzk_sb_puts(sb, "]");
}

static void g1_dec(cuzk_curve c, const uint8_t *bytes, char (*s)[CUZK_EC_DEC_MAX])
{
    if (c == CUZK_CURVE_BN254) {
        bn254_g1_affine p;
        memcpy(&p, bytes, sizeof p);
        bn254_g1_to_json_dec(s, &p);
    } else {
        bls12_381_g1_affine p;
        memcpy(&p, bytes, sizeof p);
        bls12_381_g1_to_json_dec(s, &p);
    }
}

static void g2_dec(cuzk_curve c, const uint8_t *bytes, char (*s)[CUZK_EC_DEC_MAX])
{
    if (c == CUZK_CURVE_BN254) {
        bn254_g2_affine p;
        memcpy(&p, bytes, sizeof p);
        bn254_g2_to_json_dec(s, &p);
    } else {
        bls12_381_g2_affine p;
        memcpy(&p, bytes, sizeof p);
        bls12_381_g2_to_json_dec(s, &p);
    }
}

static uint32_t g1_size(cuzk_curve c) { return c == CUZK_CURVE_BN254 ? 64 : 96; }

void cuzk_proof_to_json(cuzk_strbuf *sb, const cuzk_proof *proof)
{
    char s[6][CUZK_EC_DEC_MAX];
    cuzk_sb_puts(sb, "{\n \"pi_a\": ");
    g1_dec(proof->curve, proof->a, s);
    g1_json(sb, s, 1);
    cuzk_sb_puts(sb, ",\n \"pi_b\": ");
    g2_dec(proof->curve, proof->b, s);
    g2_json(sb, s, 1);
    cuzk_sb_puts(sb, ",\n \"pi_c\": ");
    g1_dec(proof->curve, proof->c, s);
    g1_json(sb, s, 1);
    cuzk_sb_printf(sb, ",\n \"protocol\": \"groth16\",\n \"curve\": \"%s\"\n}",
                   cuzk_curve_name(proof->curve));
}

static void fr_dec(char *out, const uint8_t *le32)
{
    /* A plain little-endian 256-bit integer to decimal by repeated division by 10; no modulus
     * is involved, so one routine serves both curves' public inputs. */
    uint64_t l[4];
    memcpy(l, le32, 32);
    char tmp[90];
    size_t n = 0;
    do {
        unsigned __int128 rem = 0;
        for (int i = 3; i >= 0; i--) {
            unsigned __int128 cur = (rem << 64) | l[i];
            l[i] = (uint64_t)(cur / 10);
            rem = cur % 10;
        }
        tmp[n++] = (char)('0' + (int)rem);
    } while (l[0] | l[1] | l[2] | l[3]);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
}

void cuzk_public_to_json(cuzk_strbuf *sb, const uint8_t *pub, uint64_t n_public)
{
    char d[90];
    if (n_public == 0) {
        cuzk_sb_puts(sb, "[]");
        return;
    }
    cuzk_sb_puts(sb, "[");
    for (uint64_t i = 0; i < n_public; i++) {
        fr_dec(d, pub + 32 * i);
        cuzk_sb_puts(sb, "\n ");
        cuzk_sb_json_string(sb, d);
        if (i + 1 < n_public)
            cuzk_sb_puts(sb, ",");
    }
    cuzk_sb_puts(sb, "\n]");
}

cuzk_err cuzk_vk_to_json(cuzk_strbuf *sb, const cuzk_vk *vk, cuzk_errbuf *eb)
{
    char s[12][CUZK_EC_DEC_MAX];
    cuzk_sb_printf(sb, "{\n \"protocol\": \"groth16\",\n \"curve\": \"%s\",\n \"nPublic\": %u,\n",
                   cuzk_curve_name(vk->curve), vk->n_public);
    cuzk_sb_puts(sb, " \"vk_alpha_1\": ");
    g1_dec(vk->curve, vk->alpha1, s);
    g1_json(sb, s, 1);
    cuzk_sb_puts(sb, ",\n \"vk_beta_2\": ");
    g2_dec(vk->curve, vk->beta2, s);
    g2_json(sb, s, 1);
    cuzk_sb_puts(sb, ",\n \"vk_gamma_2\": ");
    g2_dec(vk->curve, vk->gamma2, s);
    g2_json(sb, s, 1);
    cuzk_sb_puts(sb, ",\n \"vk_delta_2\": ");
    g2_dec(vk->curve, vk->delta2, s);
    g2_json(sb, s, 1);
    /* vk_alphabeta_12 = e(alpha1, beta2): [[c0.c0, c0.c1, c0.c2], [c1.c0, c1.c1, c1.c2]] of Fp2
     * pairs, the layout ffjavascript's F12.toObject gives. */
    cuzk_err e = cuzk__alphabeta_dec(vk, s, eb);
    if (e)
        return e;
    cuzk_sb_puts(sb, ",\n \"vk_alphabeta_12\": [");
    for (int i = 0; i < 2; i++) {
        indent(sb, 2);
        cuzk_sb_puts(sb, "[");
        for (int j = 0; j < 3; j++) {
            indent(sb, 3);
            str_array(sb, s + 6 * i + 2 * j, 2, 3);
            if (j < 2)
                cuzk_sb_puts(sb, ",");
        }
        indent(sb, 2);
        cuzk_sb_puts(sb, "]");
        if (i == 0)
            cuzk_sb_puts(sb, ",");
    }
    cuzk_sb_puts(sb, "\n ],\n \"IC\": [");
    for (uint32_t i = 0; i <= vk->n_public; i++) {
        indent(sb, 2);
        g1_dec(vk->curve, vk->ic + (size_t)i * g1_size(vk->curve), s);
        g1_json(sb, s, 2);
        if (i < vk->n_public)
            cuzk_sb_puts(sb, ",");
    }
    cuzk_sb_puts(sb, "\n ]\n}");
    return CUZK_OK;
}

/* ------------------------------------------------------------------ parsing */

/* Collects the strings of a G1 ([x, y, z]) or G2 ([[..],[..],[..]]) JSON point. */
static int point_strs(const cuzk_json *j, int g2, const char **out)
{
    if (!j || j->type != CUZK_JSON_ARRAY || j->n != 3)
        return -1;
    for (int i = 0; i < 3; i++) {
        const cuzk_json *e = j->items[i];
        if (!g2) {
            if (e->type != CUZK_JSON_STRING)
                return -1;
            out[i] = e->str;
            continue;
        }
        if (e->type != CUZK_JSON_ARRAY || e->n != 2 || e->items[0]->type != CUZK_JSON_STRING ||
            e->items[1]->type != CUZK_JSON_STRING)
            return -1;
        out[2 * i] = e->items[0]->str;
        out[2 * i + 1] = e->items[1]->str;
    }
    return 0;
}

static cuzk_err parse_g1(uint8_t *dst, cuzk_curve c, const cuzk_json *j, const char *name,
                         const char *key, cuzk_errbuf *eb)
{
    const char *s[3];
    cuzk_errbuf peb;
    cuzk_err e;
    if (point_strs(j, 0, s))
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: \"%s\" must be an array of 3 decimal strings",
                         name, key);
    if (c == CUZK_CURVE_BN254) {
        bn254_g1_affine p;
        if ((e = bn254_g1_from_json_dec(&p, s, CUZK_EC_CHECK_SUBGROUP, &peb)))
            return cuzk_errf(eb, e, "%s: \"%s\": %s", name, key, peb.msg);
        bn254_g1_to_snarkjs(dst, &p);
    } else {
        bls12_381_g1_affine p;
        if ((e = bls12_381_g1_from_json_dec(&p, s, CUZK_EC_CHECK_SUBGROUP, &peb)))
            return cuzk_errf(eb, e, "%s: \"%s\": %s", name, key, peb.msg);
        bls12_381_g1_to_snarkjs(dst, &p);
    }
    return CUZK_OK;
}

static cuzk_err parse_g2(uint8_t *dst, cuzk_curve c, const cuzk_json *j, const char *name,
                         const char *key, cuzk_errbuf *eb)
{
    const char *s[6];
    cuzk_errbuf peb;
    cuzk_err e;
    if (point_strs(j, 1, s))
        return cuzk_errf(eb, CUZK_BAD_ENCODING,
                         "%s: \"%s\" must be 3 arrays of 2 decimal strings", name, key);
    if (c == CUZK_CURVE_BN254) {
        bn254_g2_affine p;
        if ((e = bn254_g2_from_json_dec(&p, s, CUZK_EC_CHECK_SUBGROUP, &peb)))
            return cuzk_errf(eb, e, "%s: \"%s\": %s", name, key, peb.msg);
        bn254_g2_to_snarkjs(dst, &p);
    } else {
        bls12_381_g2_affine p;
        if ((e = bls12_381_g2_from_json_dec(&p, s, CUZK_EC_CHECK_SUBGROUP, &peb)))
            return cuzk_errf(eb, e, "%s: \"%s\": %s", name, key, peb.msg);
        bls12_381_g2_to_snarkjs(dst, &p);
    }
    return CUZK_OK;
}

static cuzk_err parse_curve(cuzk_curve *c, const cuzk_json *j, const char *name, cuzk_errbuf *eb)
{
    const cuzk_json *cj = cuzk_json_get(j, "curve");
    if (!cj || cj->type != CUZK_JSON_STRING)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: missing \"curve\" string", name);
    if (cuzk_curve_from_name(cj->str, c))
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: unknown curve \"%s\" (bn128 or bls12381)",
                         name, cj->str);
    return CUZK_OK;
}

cuzk_err cuzk_proof_from_json(cuzk_proof *proof, const cuzk_json *j, cuzk_curve curve,
                              const char *name, cuzk_errbuf *eb)
{
    memset(proof, 0, sizeof *proof);
    if (!j || j->type != CUZK_JSON_OBJECT)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: a proof must be a JSON object", name);
    const cuzk_json *pj = cuzk_json_get(j, "protocol");
    if (pj && (pj->type != CUZK_JSON_STRING || strcmp(pj->str, "groth16") != 0))
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: protocol is not groth16", name);
    /* Like snarkjs, the curve comes from the verification key; a "curve" field in the proof
     * must agree with it when present. */
    if (cuzk_json_get(j, "curve")) {
        cuzk_curve pc;
        cuzk_err e = parse_curve(&pc, j, name, eb);
        if (e)
            return e;
        if (pc != curve)
            return cuzk_errf(eb, CUZK_WRONG_CURVE, "%s: the proof is on %s, the key on %s", name,
                             cuzk_curve_name(pc), cuzk_curve_name(curve));
    }
    proof->curve = curve;
    cuzk_err e;
    if ((e = parse_g1(proof->a, curve, cuzk_json_get(j, "pi_a"), name, "pi_a", eb)) ||
        (e = parse_g2(proof->b, curve, cuzk_json_get(j, "pi_b"), name, "pi_b", eb)) ||
        (e = parse_g1(proof->c, curve, cuzk_json_get(j, "pi_c"), name, "pi_c", eb)))
        return e;
    return CUZK_OK;
}

cuzk_err cuzk_vk_from_json(cuzk_vk *vk, const cuzk_json *j, const char *name, cuzk_errbuf *eb)
{
    memset(vk, 0, sizeof *vk);
    if (!j || j->type != CUZK_JSON_OBJECT)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: a verification key must be a JSON object",
                         name);
    const cuzk_json *pj = cuzk_json_get(j, "protocol");
    if (!pj || pj->type != CUZK_JSON_STRING || strcmp(pj->str, "groth16") != 0)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "%s: protocol is not groth16", name);
    cuzk_err e = parse_curve(&vk->curve, j, name, eb);
    if (e)
        return e;
    const cuzk_json *ic = cuzk_json_get(j, "IC");
    if (!ic || ic->type != CUZK_JSON_ARRAY || ic->n == 0 || ic->n > (1u << 24))
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: \"IC\" must be a non-empty array of points",
                         name);
    vk->n_public = (uint32_t)(ic->n - 1);
    const cuzk_json *np = cuzk_json_get(j, "nPublic");
    if (np && (np->type != CUZK_JSON_NUMBER || strtoull(np->str, NULL, 10) != vk->n_public))
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: nPublic does not match the %zu IC points",
                         name, ic->n);
    if ((e = parse_g1(vk->alpha1, vk->curve, cuzk_json_get(j, "vk_alpha_1"), name, "vk_alpha_1", eb)) ||
        (e = parse_g2(vk->beta2, vk->curve, cuzk_json_get(j, "vk_beta_2"), name, "vk_beta_2", eb)) ||
        (e = parse_g2(vk->gamma2, vk->curve, cuzk_json_get(j, "vk_gamma_2"), name, "vk_gamma_2", eb)) ||
        (e = parse_g2(vk->delta2, vk->curve, cuzk_json_get(j, "vk_delta_2"), name, "vk_delta_2", eb)))
        return e;
    vk->ic = malloc(ic->n * g1_size(vk->curve));
    if (!vk->ic)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < ic->n; i++) {
        char key[32];
        snprintf(key, sizeof key, "IC[%zu]", i);
        if ((e = parse_g1(vk->ic + i * g1_size(vk->curve), vk->curve, ic->items[i], name, key, eb))) {
            cuzk_vk_clear(vk);
            return e;
        }
    }
    return CUZK_OK;
}

cuzk_err cuzk_public_from_json(uint8_t **pub, uint64_t *n, const cuzk_json *j, cuzk_curve curve,
                               const char *name, cuzk_errbuf *eb)
{
    *pub = NULL;
    *n = 0;
    if (!j || j->type != CUZK_JSON_ARRAY)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: public inputs must be a JSON array", name);
    uint8_t *out = malloc(j->n ? j->n * 32 : 1);
    if (!out)
        return cuzk_errf(eb, CUZK_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < j->n; i++) {
        const cuzk_json *e = j->items[i];
        if (e->type != CUZK_JSON_STRING && e->type != CUZK_JSON_NUMBER) {
            free(out);
            return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: public input %zu is not a decimal string",
                             name, i);
        }
        /* Decimal to 256-bit little-endian, then range-check against r. */
        uint64_t l[5] = {0};
        int bad = e->len == 0;
        for (size_t k = 0; k < e->len && !bad; k++) {
            char ch = e->str[k];
            if (ch < '0' || ch > '9') {
                bad = 1;
                break;
            }
            uint64_t carry = (uint64_t)(ch - '0');
            for (int q = 0; q < 5; q++) {
                unsigned __int128 w = (unsigned __int128)l[q] * 10 + carry;
                l[q] = (uint64_t)w;
                carry = (uint64_t)(w >> 64);
            }
            if (carry || l[4])
                bad = 1;
        }
        if (bad) {
            free(out);
            return cuzk_errf(eb, CUZK_BAD_ENCODING, "%s: public input %zu (\"%.40s\") is not a "
                             "decimal integer", name, i, e->str);
        }
        memcpy(out + 32 * i, l, 32);
        if (!cuzk_curve_lt_r(curve, out + 32 * i)) {
            free(out);
            return cuzk_errf(eb, CUZK_NON_CANONICAL, "%s: public input %zu is not below r", name,
                             i);
        }
    }
    *pub = out;
    *n = j->n;
    return CUZK_OK;
}

cuzk_err cuzk_proof_to_compressed(uint8_t out[CUZK_PROOF_COMPRESSED_BYTES],
                                  const cuzk_proof *proof, cuzk_errbuf *eb)
{
    if (proof->curve != CUZK_CURVE_BLS12_381)
        return cuzk_errf(eb, CUZK_UNSUPPORTED, "the compressed proof encoding exists for "
                         "BLS12-381 only (this proof is on %s)", cuzk_curve_name(proof->curve));
    bls12_381_g1_affine a, c;
    bls12_381_g2_affine b;
    memcpy(&a, proof->a, sizeof a);
    memcpy(&b, proof->b, sizeof b);
    memcpy(&c, proof->c, sizeof c);
    bls12_381_g1_to_compressed(out, &a);
    bls12_381_g2_to_compressed(out + 48, &b);
    bls12_381_g1_to_compressed(out + 144, &c);
    return CUZK_OK;
}

cuzk_err cuzk_proof_from_compressed(cuzk_proof *proof, const uint8_t *in, size_t len,
                                    cuzk_errbuf *eb)
{
    if (len != CUZK_PROOF_COMPRESSED_BYTES)
        return cuzk_errf(eb, CUZK_BAD_ENCODING, "a compressed proof has 192 bytes, got %zu", len);
    bls12_381_g1_affine a, c;
    bls12_381_g2_affine b;
    cuzk_errbuf peb;
    cuzk_err e;
    if ((e = bls12_381_g1_from_compressed(&a, in, 48, CUZK_EC_CHECK_SUBGROUP, &peb)))
        return cuzk_errf(eb, e, "compressed proof A: %s", peb.msg);
    if ((e = bls12_381_g2_from_compressed(&b, in + 48, 96, CUZK_EC_CHECK_SUBGROUP, &peb)))
        return cuzk_errf(eb, e, "compressed proof B: %s", peb.msg);
    if ((e = bls12_381_g1_from_compressed(&c, in + 144, 48, CUZK_EC_CHECK_SUBGROUP, &peb)))
        return cuzk_errf(eb, e, "compressed proof C: %s", peb.msg);
    memset(proof, 0, sizeof *proof);
    proof->curve = CUZK_CURVE_BLS12_381;
    memcpy(proof->a, &a, sizeof a);
    memcpy(proof->b, &b, sizeof b);
    memcpy(proof->c, &c, sizeof c);
    return CUZK_OK;
}
