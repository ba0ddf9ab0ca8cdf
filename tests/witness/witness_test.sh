#!/usr/bin/env bash
# cuzk witness / cuzk prove --wasm against snarkjs 0.7.6 on circom 2.2.3 programs of both
# curves (tests/witness/fixtures, made by scripts/make-witness-fixtures.sh):
#   the .wtns equals `snarkjs wtns calculate`'s byte for byte (array inputs in every accepted
#   form, no public signals, 26 public signals, the snarkjs multiplier fixture); the program is
#   built once and then taken from the cache; a failed assert, an unknown, missing or
#   mis-sized signal and values that are not numbers or not below r fail with exit 2 and a
#   message naming the signal; `cuzk prove --wasm --input` makes proofs `snarkjs groth16
#   verify` accepts (keys from `cuzk setup` and from snarkjs); missing wasm2c is a clear error;
#   several computations at once all succeed.
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
SNARKJS=$ROOT/node_modules/.bin/snarkjs
CUZK=$BIN/cuzk
FX=$ROOT/tests/witness/fixtures
IN=$ROOT/tests/witness/circuits
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
[ -x "$SNARKJS" ] || { echo "witness_test: $SNARKJS missing (run npm ci)" >&2; exit 1; }
[ -x "$CUZK" ] || { echo "witness_test: $CUZK missing (build first)" >&2; exit 1; }
command -v wasm2c >/dev/null || { echo "witness_test: wasm2c missing (scripts/install-deps)" >&2; exit 1; }
C=$T/cache
W=(--wasm-cache "$C")

expect_rc 0 "witness --help" "$CUZK" witness --help
grep -q "snarkjs wtns calculate" "$T/out" && ok || bad "witness --help text"
expect_rc 0 "prove --help" "$CUZK" prove --help
grep -q -- "--wasm FILE" "$T/out" && ok || bad "prove --help names --wasm"
expect_err 2 "expected CIRCUIT.wasm" "witness with too few arguments" "$CUZK" witness a.wasm
expect_err 2 "go together" "prove --wasm without --input" "$CUZK" prove --wasm a.wasm k.zkey p.json q.json

# ---- byte-identical to snarkjs, both curves
for curve in bn128 bls12381; do
  for n in arrays nopub manypub; do
    d=$T/$curve; mkdir -p "$d"
    expect_rc 0 "$curve/$n: cuzk witness" "$CUZK" witness "${W[@]}" "$FX/$curve/$n.wasm" "$IN/$n.input.json" "$d/$n.wtns"
    expect_rc 0 "$curve/$n: snarkjs wtns calculate" "$SNARKJS" wtns calculate "$FX/$curve/$n.wasm" "$IN/$n.input.json" "$d/$n.s.wtns"
    cmp -s "$d/$n.wtns" "$d/$n.s.wtns" && ok || bad "$curve/$n: cuzk's wtns differs from snarkjs's"
  done
  # The circuit's log() output, as snarkjs prints it.
  "$CUZK" witness "${W[@]}" "$FX/$curve/arrays.wasm" "$IN/arrays.input.json" "$d/a2.wtns" 2>"$T/err"
  grep -q "^row products 120 " "$T/err" && ok || bad "$curve: log() output missing: $(cat "$T/err")"
  # The snarkjs fixtures' multiplier program and witness.
  m=$ROOT/tests/fixtures/$curve
  expect_rc 0 "$curve/multiplier: cuzk witness" "$CUZK" witness "${W[@]}" "$m/multiplier.wasm" "$m/multiplier.input.json" "$d/m.wtns"
  cmp -s "$d/m.wtns" "$m/multiplier.wtns" && ok || bad "$curve/multiplier: wtns differs from the fixture"
done
n_so=$(ls "$C"/*.so | wc -l)
[ "$n_so" = 8 ] && ok || bad "expected 8 built programs in the cache, found $n_so"
expect_rc 0 "cached run" "$CUZK" witness "${W[@]}" "$FX/bn128/nopub.wasm" "$IN/nopub.input.json" "$T/n2.wtns"
grep -q "built the witness program" "$T/err" && bad "second run rebuilt the program" || ok
# Default cache: beside the wasm.
cp "$FX/bn128/nopub.wasm" "$T/nopub.wasm"
expect_rc 0 "default cache" "$CUZK" witness "$T/nopub.wasm" "$IN/nopub.input.json" "$T/n3.wtns"
ls "$T"/.cuzk-wasm-cache/*.so >/dev/null 2>&1 && ok || bad "no program in the default cache"
# An unchanged wasm is known by its identity (id-* records, kept once the file has been still
# for 2 s); a wasm rewritten in place is read and hashed again, and a record naming a digest
# with no program falls back to the bytes.
D=$T/idw; mkdir -p "$D"
cp "$FX/bn128/arrays.wasm" "$D/c.wasm"; sleep 2.1
expect_rc 0 "identity: first run" "$CUZK" witness "$D/c.wasm" "$IN/arrays.input.json" "$D/a.wtns"
ids=("$D"/.cuzk-wasm-cache/id-*)
[ -s "${ids[0]}" ] && [ "$(wc -c < "${ids[0]}")" = 64 ] && ok || bad "no identity record: $(ls -a "$D/.cuzk-wasm-cache")"
expect_rc 0 "identity: second run" "$CUZK" witness "$D/c.wasm" "$IN/arrays.input.json" "$D/a2.wtns"
cmp -s "$D/a2.wtns" "$T/bn128/arrays.s.wtns" && ok || bad "identity: second run's wtns differs from snarkjs's"
cat "$FX/bn128/nopub.wasm" > "$D/c.wasm" # same inode, other bytes
expect_rc 0 "identity: rewritten wasm" "$CUZK" witness "$D/c.wasm" "$IN/nopub.input.json" "$D/n.wtns"
cmp -s "$D/n.wtns" "$T/bn128/nopub.s.wtns" && ok || bad "identity: a rewritten wasm ran the old program"
sleep 2.1
expect_rc 0 "identity: record written" "$CUZK" witness "$D/c.wasm" "$IN/nopub.input.json" "$D/n.wtns"
for f in "$D"/.cuzk-wasm-cache/id-*; do printf '%064d' 0 > "$f"; done
expect_rc 0 "identity: record of a missing program" "$CUZK" witness "$D/c.wasm" "$IN/nopub.input.json" "$D/n2.wtns"
cmp -s "$D/n2.wtns" "$T/bn128/nopub.s.wtns" && ok || bad "identity: a bad record changed the witness"
grep -q "built the witness program" "$T/err" && bad "identity: a bad record made a rebuild" || ok

# ---- several computations at once (each runs in its own process)
for i in 1 2 3 4 5 6; do
  "$CUZK" witness --quiet "${W[@]}" "$FX/bls12381/manypub.wasm" "$IN/manypub.input.json" "$T/p$i.wtns" &
done
wait
for i in 1 2 3 4 5 6; do cmp -s "$T/p$i.wtns" "$T/bls12381/manypub.s.wtns" && ok || bad "parallel run $i"; done

# ---- failures
A=$FX/bn128/arrays.wasm
bad_input() { # regex description json
  echo "$3" >"$T/in.json"
  expect_err 2 "$1" "$2" "$CUZK" witness "${W[@]}" "$A" "$T/in.json" "$T/x.wtns"
  [ -e "$T/x.wtns" ] && bad "$2: a wtns was written" || ok
}
good='[[2,3,4],[5,6,7]]'
bad_input 'Assert Failed\. Error in template Arrays_0 line: 18.*WITNESS_UNSATISFIED' "failed assert" "{\"a\": $good, \"k\": 7}"
bad_input 'signal "zz" is not an input' "unknown signal" "{\"a\": $good, \"k\": 1, \"zz\": 3}"
bad_input 'signal "a" takes 6 values, 5 given' "short array" '{"a": [[2,3,4],[5,6]], "k": 1}'
bad_input 'signal "a" takes 6 values, 7 given' "long array" '{"a": [[2,3,4],[5,6,7,8]], "k": 1}'
bad_input 'signal "k" takes 1 value, 2 given' "array for a scalar" "{\"a\": $good, \"k\": [1, 2]}"
bad_input 'input signal "k" of .* not given' "missing signal" "{\"a\": $good}"
bad_input 'input signals ("a", "k"|"k", "a") of .* not given' "all signals missing" '{}'
bad_input 'a\[1\]\[2\] is not below the bn128 field modulus' "value = r" \
  '{"a": [[2,3,4],[5,6,"21888242871839275222246405745257275088548364400416034343698204186575808495617"]], "k": 1}'
bad_input 'k is not below the bn128' "hex value > r" \
  "{\"a\": $good, \"k\": \"0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000002\"}"
bad_input 'k is negative and its magnitude is not below' "negative value <= -r" \
  "{\"a\": $good, \"k\": \"-21888242871839275222246405745257275088548364400416034343698204186575808495617\"}"
bad_input 'a\[0\]\[1\] = "abc" is not a number' "non-numeric string" '{"a": [[2,"abc",4],[5,6,7]], "k": 1}'
bad_input 'a\[1\]\[0\] = 1.5' "fraction" '{"a": [[2,3,4],[1.5,6,7]], "k": 1}'
bad_input 'k = 9007199254740993.*decimal strings' "number past 2^53" "{\"a\": $good, \"k\": 9007199254740993}"
bad_input 'a\[0\]\[0\] is null' "null" '{"a": [[null,3,4],[5,6,7]], "k": 1}'
bad_input 'must be a JSON object' "array at the top" '[1, 2]'
bad_input 'duplicate key' "duplicate signal" "{\"a\": $good, \"k\": 1, \"k\": 2}"
expect_err 2 "not a WebAssembly module" "not a wasm" "$CUZK" witness "${W[@]}" "$IN/nopub.input.json" "$IN/nopub.input.json" "$T/x.wtns"
expect_err 2 "wasm2c is not on PATH.*wabt" "no wasm2c" env PATH=/nonexistent "$CUZK" witness --wasm-cache "$T/fresh" "$A" "$IN/arrays.input.json" "$T/x.wtns"
# Without the .sym, a missing signal is still refused (by count).
cp "$A" "$T/lonely.wasm"
echo "{\"a\": $good}" >"$T/in.json"
expect_err 2 "6 of the 7 input values .* set: some input signals are missing" "missing signal without .sym" \
  "$CUZK" witness "${W[@]}" "$T/lonely.wasm" "$T/in.json" "$T/x.wtns"
# snarkjs refuses the same inputs.
echo "{\"a\": $good, \"k\": 7}" >"$T/in.json"
"$SNARKJS" wtns calculate "$A" "$T/in.json" "$T/x.wtns" >"$T/out" 2>&1
grep -q "Assert Failed. Error in template Arrays_0 line: 18" "$T/out" && ok || bad "snarkjs accepts the failing assert"

# ---- prove --wasm: keys from cuzk setup (the new circuits) and from snarkjs (multiplier)
for curve in bn128 bls12381; do
  d=$T/$curve
  for n in arrays nopub manypub; do
    expect_rc 0 "$curve/$n: setup" "$CUZK" setup --quiet --seed 01 "$FX/$curve/$n.r1cs" "$d/$n.zkey"
    expect_rc 0 "$curve/$n: export-vk" "$CUZK" export-vk "$d/$n.zkey" "$d/${n}_vk.json"
    expect_rc 0 "$curve/$n: prove --wasm" "$CUZK" prove --quiet "${W[@]}" --wasm "$FX/$curve/$n.wasm" --input "$IN/$n.input.json" "$d/$n.zkey" "$d/${n}_proof.json" "$d/${n}_public.json"
    expect_rc 0 "$curve/$n: snarkjs verifies" "$SNARKJS" groth16 verify "$d/${n}_vk.json" "$d/${n}_public.json" "$d/${n}_proof.json"
  done
  npub=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).length)' "$d/manypub_public.json")
  [ "$npub" = 25 ] && ok || bad "$curve/manypub: $npub public values, expected 25"
  [ "$(tr -d ' \n' <"$d/nopub_public.json")" = "[]" ] && ok || bad "$curve/nopub: public.json not empty"
  m=$ROOT/tests/fixtures/$curve
  expect_rc 0 "$curve/multiplier: prove --wasm" "$CUZK" prove --quiet "${W[@]}" --wasm "$m/multiplier.wasm" --input "$m/multiplier.input.json" "$m/multiplier.zkey" "$d/mp.json" "$d/mpub.json"
  expect_rc 0 "$curve/multiplier: snarkjs verifies" "$SNARKJS" groth16 verify "$m/multiplier_vk.json" "$d/mpub.json" "$d/mp.json"
done
echo "{\"a\": $good, \"k\": 7}" >"$T/in.json"
expect_err 2 "Assert Failed" "prove --wasm with a failing assert" "$CUZK" prove --quiet "${W[@]}" --wasm "$A" --input "$T/in.json" "$T/bn128/arrays.zkey" "$T/p.json" "$T/q.json"
expect_err 2 "witness is for bls12381" "prove --wasm with the other curve's program" "$CUZK" prove --quiet "${W[@]}" --wasm "$FX/bls12381/nopub.wasm" --input "$IN/nopub.input.json" "$T/bn128/nopub.zkey" "$T/p.json" "$T/q.json"

echo "witness_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
