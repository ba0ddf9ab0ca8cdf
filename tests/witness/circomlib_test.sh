#!/usr/bin/env bash
# cuzk witness / cuzk prove --wasm on circuits built from circomlib 2.0.5
# (tests/witness/circomlib: Poseidon leaf and Merkle path with Num2Bits, comparators as a range
# proof), compiled here by the repo's circom2 for bn128 and bls12381 (a few seconds each; the
# Poseidon programs are 1.8 MB of wasm, too large to keep in the repository):
#   the .wtns equals `snarkjs wtns calculate`'s byte for byte; `cuzk prove --wasm --input`
#   makes proofs `snarkjs groth16 verify` accepts (keys from `cuzk setup`) with the expected
#   public values; failed range and bit checks, a missing or mis-sized signal and a value not
#   below the curve's r fail with exit 2 and a message naming the template or the signal.
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
SNARKJS=$ROOT/node_modules/.bin/snarkjs
CIRCOM=$ROOT/node_modules/.bin/circom2
CUZK=$BIN/cuzk
IN=$ROOT/tests/witness/circomlib
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # expected_rc description cmd...
  local want=$1 what=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, expected $want"; sed 's/^/    /' "$T/err" "$T/out" | head -8 >&2; fi
}
expect_err() { # expected_rc regex description cmd...
  local want=$1 re=$2 what=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ "$rc" = "$want" ] && grep -Eq "$re" "$T/err"; then ok; else
    bad "$what: exit $rc (want $want), stderr: $(head -c 400 "$T/err")"; fi
}
for tool in "$SNARKJS" "$CIRCOM"; do
  [ -x "$tool" ] || { echo "circomlib_test: $tool missing (run npm ci)" >&2; exit 1; }
done
[ -d "$ROOT/node_modules/circomlib/circuits" ] || { echo "circomlib_test: circomlib missing (run npm ci)" >&2; exit 1; }
[ -x "$CUZK" ] || { echo "circomlib_test: $CUZK missing (build first)" >&2; exit 1; }
command -v wasm2c >/dev/null || { echo "circomlib_test: wasm2c missing (scripts/install-deps)" >&2; exit 1; }
W=(--wasm-cache "$T/cache")
declare -A R=([bn128]=21888242871839275222246405745257275088548364400416034343698204186575808495617
              [bls12381]=52435875175126190479447740508185965837690552500527637822603658699938581184513)

# circom2 runs under WASI and opens only files below its working directory: circuits and
# circomlib are copied there.
mkdir -p "$T/src/lib/circomlib"
cp -rL "$ROOT/node_modules/circomlib/circuits" "$T/src/lib/circomlib/"
cp "$IN"/*.circom "$T/src/"
for curve in bn128 bls12381; do
  for n in membership range; do
    mkdir -p "$T/src/$curve"
    (cd "$T/src" && "$CIRCOM" "$n.circom" --r1cs --wasm --sym -p "$curve" -l lib -o "$curve" \
       >"$T/circom.log" 2>&1) && ok || bad "$curve/$n: circom2: $(tail -c 400 "$T/circom.log")"
  done
done

# ---- byte-identical to snarkjs; proofs snarkjs verifies
for curve in bn128 bls12381; do
  d=$T/$curve; mkdir -p "$d"
  for n in membership range; do
    wasm=$T/src/$curve/${n}_js/$n.wasm
    expect_rc 0 "$curve/$n: cuzk witness" "$CUZK" witness --quiet "${W[@]}" "$wasm" "$IN/$n.input.json" "$d/$n.wtns"
    expect_rc 0 "$curve/$n: snarkjs wtns calculate" "$SNARKJS" wtns calculate "$wasm" "$IN/$n.input.json" "$d/$n.s.wtns"
    cmp -s "$d/$n.wtns" "$d/$n.s.wtns" && ok || bad "$curve/$n: cuzk's wtns differs from snarkjs's"
    expect_rc 0 "$curve/$n: setup" "$CUZK" setup --quiet --seed 01 "$T/src/$curve/$n.r1cs" "$d/$n.zkey"
    expect_rc 0 "$curve/$n: export-vk" "$CUZK" export-vk "$d/$n.zkey" "$d/${n}_vk.json"
    expect_rc 0 "$curve/$n: prove --wasm" "$CUZK" prove --quiet "${W[@]}" --wasm "$wasm" --input "$IN/$n.input.json" "$d/$n.zkey" "$d/${n}_proof.json" "$d/${n}_public.json"
    expect_rc 0 "$curve/$n: snarkjs verifies" "$SNARKJS" groth16 verify "$d/${n}_vk.json" "$d/${n}_public.json" "$d/${n}_proof.json"
  done
  # range's public values: the output (x == lo) then lo and hi.
  [ "$(tr -d ' \n' <"$d/range_public.json")" = '["0","1000","4294967295"]' ] && ok ||
    bad "$curve/range: public.json is $(tr -d ' \n' <"$d/range_public.json")"
  # membership's one public value, the root, is the witness's second value (after the 1).
  "$SNARKJS" wtns export json "$d/membership.s.wtns" "$d/w.json" >/dev/null 2>&1
  root=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1]))[1])' "$d/w.json")
  [ "$(tr -d ' \n' <"$d/membership_public.json")" = "[\"$root\"]" ] && ok ||
    bad "$curve/membership: public.json is not [root]"
done
# The programs differ by curve only in the prime, so the roots must differ.
[ "$(cat "$T/bn128/membership_public.json")" != "$(cat "$T/bls12381/membership_public.json")" ] &&
  ok || bad "membership: the same root on both curves"

# ---- failures, both curves: the signal or circomlib template that refused the input
for curve in bn128 bls12381; do
  m=$T/src/$curve/membership_js/membership.wasm
  g=$T/src/$curve/range_js/range.wasm
  bad_input() { # wasm regex description json
    echo "$4" >"$T/in.json"
    expect_err 2 "$2" "$curve: $3" "$CUZK" witness "${W[@]}" "$1" "$T/in.json" "$T/x.wtns"
    [ -e "$T/x.wtns" ] && bad "$curve: $3: a wtns was written" || ok
  }
  sib='["1", "2", "3", "4", "5", "6", "7", "8"]'
  bad_input "$m" 'Assert Failed\. Error in template Num2Bits_[0-9]+ line: [0-9]+.*WITNESS_UNSATISFIED' \
    "index past 2^8" "{\"secret\": [1, 2, 3], \"index\": 256, \"siblings\": $sib}"
  bad_input "$m" 'signal "siblings" takes 8 values, 7 given' "short path" \
    '{"secret": [1, 2, 3], "index": 5, "siblings": ["1", "2", "3", "4", "5", "6", "7"]}'
  bad_input "$m" 'signal "secret" takes 3 values, 1 given' "scalar for an array" \
    "{\"secret\": 1, \"index\": 5, \"siblings\": $sib}"
  bad_input "$m" 'input signal "index" of .* not given' "missing index" \
    "{\"secret\": [1, 2, 3], \"siblings\": $sib}"
  bad_input "$m" "secret\\[1\\] is not below the $curve field modulus" "value = r" \
    "{\"secret\": [1, \"${R[$curve]}\", 3], \"index\": 5, \"siblings\": $sib}"
  bad_input "$m" 'signal "leaf" is not an input' "an internal signal as input" \
    "{\"secret\": [1, 2, 3], \"index\": 5, \"siblings\": $sib, \"leaf\": 4}"
  bad_input "$g" 'Assert Failed\. Error in template Range_[0-9]+ line: 22' "x = hi" \
    '{"x": 4294967295, "lo": 1000, "hi": 4294967295}'
  bad_input "$g" 'Assert Failed\. Error in template Range_[0-9]+ line: 18' "x < lo" \
    '{"x": 999, "lo": 1000, "hi": 4294967295}'
  bad_input "$g" 'Assert Failed\. Error in template Num2Bits_[0-9]+ line: [0-9]+' "x past 2^32" \
    '{"x": 4294967296, "lo": 1000, "hi": 4294967295}'
  bad_input "$g" 'x is negative and its magnitude is not below' "x <= -r" \
    "{\"x\": \"-${R[$curve]}\", \"lo\": 1000, \"hi\": 2000}"
  # snarkjs refuses the same input at the same place.
  echo '{"x": 999, "lo": 1000, "hi": 4294967295}' >"$T/in.json"
  "$SNARKJS" wtns calculate "$g" "$T/in.json" "$T/x.wtns" >"$T/out" 2>&1
  grep -Eq "Assert Failed. Error in template Range_[0-9]+ line: 18" "$T/out" && ok ||
    bad "$curve: snarkjs accepts x < lo"
  rm -f "$T/x.wtns"
  expect_err 2 "Assert Failed.*Range_[0-9]+ line: 18" "$curve: prove --wasm with x < lo" \
    "$CUZK" prove --quiet "${W[@]}" --wasm "$g" --input "$T/in.json" "$T/$curve/range.zkey" "$T/p.json" "$T/q.json"
done

echo "circomlib_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
