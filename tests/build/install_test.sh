#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then a program built only from what was installed:
# compiled and linked with `pkg-config --cflags --libs cuzk` (the installed cuzk.pc), it checks
# a snarkjs proof of the bn128 multiplier fixture with cuzk_verify (valid), the same proof
# against a changed public input (CUZK_VERIFY_FAILED), and cuzk_strerror's message for that.
# Also checks that the installed headers need nothing from src/, that the commands landed, and
# that the installed cuzk finds its witness runner in the moved prefix's libexec/cuzk.
set -u
SRC=$PWD
BIN=${CUZK_BIN_DIR:-build/bin}
BUILD=$(cd "$BIN/.." && pwd)
T=$(mktemp -d /tmp/cuzk-install-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
command -v pkg-config > /dev/null || fail "pkg-config not found (scripts/install-deps installs it)"

cmake --install "$BUILD" --prefix "$T/prefix" > "$T/install.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$T/install.log")"
for f in bin/cuzk libexec/cuzk/cuzk-witness-runner include/cuzk/groth16.h include/cuzk/err.h; do
  [ -e "$T/prefix/$f" ] || fail "$f not installed"
done
lib=$(find "$T/prefix" -name libcuzk.a | head -1)
[ -n "$lib" ] || fail "libcuzk.a not installed"
pc=$(dirname "$(find "$T/prefix" -name cuzk.pc | head -1)")
[ -f "$pc/cuzk.pc" ] || fail "cuzk.pc not installed"
[ -z "$(find "$T/prefix" -name '*.h' -path '*src*')" ] || fail "internal headers installed"

# The library was built with the sanitizers under `make asan`: the program links them too.
san=$(sed -n 's/^CUZK_SANITIZE:STRING=//p' "$BUILD/CMakeCache.txt")
flags=()
[ -z "$san" ] || flags=(-fsanitize="$san")

cat > "$T/verify.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuzk/groth16.h>
#include <cuzk/json.h>

static const cuzk_json *load(const char *dir, const char *name, cuzk_json_doc **d,
                             cuzk_errbuf *eb)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (cuzk_json_parse_file(d, path, 1 << 20, eb)) {
        fprintf(stderr, "%s: %s\n", path, eb->msg);
        exit(2);
    }
    return cuzk_json_root(*d);
}

int main(int argc, char **argv)
{
    cuzk_errbuf eb = {{0}};
    cuzk_json_doc *dv, *dp, *du;
    cuzk_vk vk;
    cuzk_proof proof;
    uint8_t *pub;
    uint64_t n;
    if (argc != 2)
        return 2;
    const cuzk_json *jv = load(argv[1], "multiplier_vk.json", &dv, &eb);
    const cuzk_json *jp = load(argv[1], "multiplier_proof.json", &dp, &eb);
    const cuzk_json *ju = load(argv[1], "multiplier_public.json", &du, &eb);
    if (cuzk_vk_from_json(&vk, jv, "vk", &eb) ||
        cuzk_proof_from_json(&proof, jp, vk.curve, "proof", &eb) ||
        cuzk_public_from_json(&pub, &n, ju, vk.curve, "public", &eb)) {
        fprintf(stderr, "parse: %s\n", eb.msg);
        return 2;
    }
    cuzk_err ok = cuzk_verify(&vk, pub, n, &proof, &eb);
    pub[0] ^= 1; /* another public input, still below r */
    cuzk_err bad = cuzk_verify(&vk, pub, n, &proof, &eb);
    const char *msg = cuzk_strerror(bad);
    printf("valid proof: %d, changed input: %d (%s)\n", (int)ok, (int)bad, msg);
    free(pub);
    cuzk_vk_clear(&vk);
    cuzk_json_free(dv);
    cuzk_json_free(dp);
    cuzk_json_free(du);
    return ok == CUZK_OK && bad == CUZK_VERIFY_FAILED && msg && msg[0] ? 0 : 1;
}
C
export PKG_CONFIG_PATH=$pc
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "${flags[@]}" -o "$T/verify" "$T/verify.c" \
  $(pkg-config --cflags --libs cuzk) > "$T/cc.log" 2>&1 ||
  fail "compile / link against the installed library: $(head -20 "$T/cc.log")"
"$T/verify" "$SRC/tests/fixtures/bn128" || fail "the installed library's cuzk_verify"
m=$SRC/tests/fixtures/bn128/multiplier
"$T/prefix/bin/cuzk" witness --quiet --wasm-cache "$T/wc" "$m.wasm" "$m.input.json" "$T/m.wtns" \
  > "$T/witness.log" 2>&1 || fail "the installed cuzk witness: $(tail -3 "$T/witness.log")"
cmp -s "$T/m.wtns" "$m.wtns" || fail "the installed cuzk witness: the .wtns differs from the fixture"
echo "install_test: installed to a prefix, built with pkg-config $(pkg-config --modversion cuzk)," \
  "verified, witness computed: 2 passed, 0 failed"
