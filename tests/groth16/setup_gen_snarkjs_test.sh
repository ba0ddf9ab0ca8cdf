#!/usr/bin/env bash
# Keys generated in memory (cuzk_pk_generate) against snarkjs 0.7.6: setup_gen_test writes,
# per curve, in one run and segmented, the generated key's verification key and a proof made with it (and a fresh
# witness), and `snarkjs groth16 verify` must accept each, and refuse it with another
# public input.
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
SNARKJS=$ROOT/node_modules/.bin/snarkjs
TEST=$BIN/../tests/setup_gen_test
[ -x "$SNARKJS" ] || { echo "setup_gen_snarkjs_test: $SNARKJS missing (run npm ci)" >&2; exit 1; }
[ -x "$TEST" ] || { echo "setup_gen_snarkjs_test: $TEST missing (build first)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
"$TEST" "$T" >"$T/log" 2>&1 || { echo "FAIL: setup_gen_test" >&2; cat "$T/log" >&2; fail=1; }
for c in bn128 bls12381 bn128_seg bls12381_seg; do
  if ! "$SNARKJS" groth16 verify "$T/${c}_vk.json" "$T/${c}_public.json" "$T/${c}_proof.json" \
      >"$T/out" 2>&1 || ! grep -q "OK!" "$T/out"; then
    echo "FAIL: $c: snarkjs refused the generated key's proof: $(tail -3 "$T/out")" >&2
    fail=1
  fi
  # another public input: the same proof must not verify
  sed '0,/"[0-9]*"/s//"12345"/' "$T/${c}_public.json" >"$T/${c}_bad.json"
  if "$SNARKJS" groth16 verify "$T/${c}_vk.json" "$T/${c}_bad.json" "$T/${c}_proof.json" \
      >"$T/out" 2>&1 && grep -q "OK!" "$T/out"; then
    echo "FAIL: $c: snarkjs accepted a proof with another public input" >&2
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "setup_gen_snarkjs_test: ok (bn128, bls12381, each in one run and segmented)"
exit "$fail"
