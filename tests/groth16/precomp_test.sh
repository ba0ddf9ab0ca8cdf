#!/usr/bin/env bash
# Fixed-base precomputed tables through the key cache (`cuzk prove --key-cache --precompute`),
# both curves, the multiplier and poseidon fixtures:
#  - the first run writes the cache (said on stderr), the second loads it; both proofs pass
#    `snarkjs groth16 verify` (snarkjs 0.7.6 from the npm lockfile), for --precompute 1, 3, 16;
#  - with r = s = 0 (--zero-blinding) the proof from the cached tables is byte-identical to
#    the plain zkey proof (the table MSMs compute the same points);
#  - a cache without tables (--precompute 0) loads; one built for another --precompute is
#    rebuilt and said so;
#  - a corrupted byte in the tables (the end of the file) is refused naming the tables' hash,
#    one in the key's arrays naming the payload hash; the proof is still made from the zkey
#    and verifies, and the cache is rewritten (the next run loads it).
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
SNARKJS=$ROOT/node_modules/.bin/snarkjs
CUZK=$BIN/cuzk
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
[ -x "$SNARKJS" ] || { echo "precomp_test: $SNARKJS missing (run npm ci)" >&2; exit 1; }
[ -x "$CUZK" ] || { echo "precomp_test: $CUZK missing (build first)" >&2; exit 1; }

# prove_ok description regex-that-stderr-must-match cuzk-prove-args...: exit 0, stderr matches,
# snarkjs verifies the proof ($o.proof.json / $o.public.json).
prove_ok() {
  local what=$1 re=$2; shift 2
  "$CUZK" prove "$@" "$z" "$w" "$o.proof.json" "$o.public.json" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" != 0 ] || ! grep -Eq "$re" "$T/err"; then
    bad "$what: exit $rc, stderr: $(head -c 400 "$T/err")"
    return
  fi
  ok
  grep -q "warning" "$T/err" && bad "$what: $(grep warning "$T/err")" || ok
  if "$SNARKJS" groth16 verify "$vk" "$o.public.json" "$o.proof.json" >/dev/null 2>&1; then ok; else
    bad "$what: snarkjs rejects the proof"; fi
}
# flip_byte FILE OFFSET (negative: from the end)
flip_byte() { /usr/bin/python3 -c '
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[off] ^= 0x5a
open(p, "wb").write(b)' "$1" "$2"; }

for curve in bn128 bls12381; do
  for circ in multiplier poseidon; do
    d=$ROOT/tests/fixtures/$curve
    z=$d/$circ.zkey w=$d/$circ.wtns vk=$d/${circ}_vk.json
    [ -f "$z" ] || { bad "missing fixture $z"; continue; }
    o=$T/$curve-$circ
    for P in 1 3 16; do
      c=$T/$curve-$circ-$P.cache
      prove_ok "$curve/$circ P=$P: first run writes the cache" "no key cache at .* yet" \
        --key-cache "$c" --precompute "$P"
      [ -s "$c" ] && ok || bad "$curve/$circ P=$P: no cache written"
      prove_ok "$curve/$circ P=$P: second run loads it" "load [0-9.]+ \(key cache\)" \
        --key-cache "$c" --precompute "$P"
      grep -q "writing\|not used\|rebuilding" "$T/err" &&
        bad "$curve/$circ P=$P: cache rewritten" || ok
    done
    # zero blinding: cached tables give the same bytes as the plain zkey
    c=$T/$curve-$circ-16.cache
    "$CUZK" prove --quiet --zero-blinding "$z" "$w" "$o.plain.json" "$o.pub0.json" &&
      "$CUZK" prove --quiet --zero-blinding --key-cache "$c" --precompute 16 "$z" "$w" \
        "$o.tab.json" "$o.pub1.json" && cmp -s "$o.plain.json" "$o.tab.json" && ok ||
      bad "$curve/$circ: zero-blinding proof with tables differs from the plain one"
    # another --precompute: rebuilt; then 0 (no tables) loads as is
    prove_ok "$curve/$circ: cache built for 16, asked 0" "holds tables for --precompute 16, not 0" \
      --key-cache "$c" --precompute 0
    prove_ok "$curve/$circ: cache without tables loads" "load [0-9.]+ \(key cache\)" \
      --key-cache "$c" --precompute 0
    # corrupt tables (the last bytes of the file) and corrupt key arrays
    c=$T/$curve-$circ-3.cache
    flip_byte "$c" -7
    prove_ok "$curve/$circ: corrupt table refused" \
      "key cache not used: .*precomputed tables' hash does not match" \
      --key-cache "$c" --precompute 3
    prove_ok "$curve/$circ: rewritten cache loads" "load [0-9.]+ \(key cache\)" \
      --key-cache "$c" --precompute 3
    flip_byte "$c" 200 # alpha1, the first point of the payload
    prove_ok "$curve/$circ: corrupt key array refused" \
      "key cache not used: .*payload hash does not match" --key-cache "$c" --precompute 3
  done
done
# --precompute's range and the help
"$CUZK" prove --precompute 65 a b c d >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "precompute must be" "$T/err" && ok || bad "--precompute 65 accepted"
# The help text is read whole first: under pipefail, grep -q closing the pipe early would fail
# the pipeline with the writer's SIGPIPE.
help=$("$CUZK" prove --help)
grep -q -- "--key-cache PATH" <<< "$help" && ok || bad "--key-cache missing from --help"
grep -q -- "--precompute T" <<< "$help" && ok || bad "--precompute missing from --help"

echo "precomp_test: $pass checks, $fail failed"
[ "$fail" = 0 ]
