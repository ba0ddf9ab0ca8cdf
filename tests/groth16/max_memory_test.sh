#!/usr/bin/env bash
# `cuzk prove --max-memory SIZE` (cuzk_prove_memory_estimate) on generated dense circuits of
# 2^10, 2^12 and 2^14 constraints' domains, both curves, 1 and 2 threads:
#  - the estimate is an upper bound of the process's measured peak resident set
#    (/usr/bin/time %M, scripts/install-deps installs it): for the one-shot proof (the key
#    consumed as the proof goes), --repeat 2 (the key kept whole) and --key-cache with the
#    default tables and with --precompute 8 (the run that writes the cache and the one that
#    loads it, the default's choice named on stderr); each proof passes `cuzk verify`;
#  - the estimate is exact to the MiB at the boundary: --max-memory X MiB (the estimate
#    printed) proves, X - 1 MiB exits 2 with OUT_OF_BUDGET naming both sizes, before any
#    output is written; a malformed SIZE is a usage error.
set -uo pipefail
ROOT=${CUZK_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
CUZK=$BIN/cuzk
TIME=/usr/bin/time
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
[ -x "$CUZK" ] || { echo "max_memory_test: $CUZK missing (build first)" >&2; exit 1; }
[ -x "$TIME" ] || { echo "max_memory_test: $TIME missing (scripts/install-deps)" >&2; exit 1; }

# estimate ARGS...: the MiB a too-small bound (1 MiB) is refused with ("needs ~X MiB").
estimate() {
  "$CUZK" prove --backend cpu --max-memory 1MiB "$@" "$z" "$w" "$T/p.json" "$T/pub.json" \
    2>"$T/err" >/dev/null
  local rc=$?
  sed -n 's/.*the proof needs ~\([0-9]*\) MiB, --max-memory is 1 MiB.*/\1/p' "$T/err"
  [ "$rc" = 2 ] || echo "exit $rc" >&2
}

# bounded WHAT ARGS...: the estimate X bounds the measured peak; X MiB proves, X - 1 refused.
bounded() {
  local what=$1; shift
  local x
  x=$(estimate "$@")
  if ! [[ "$x" =~ ^[0-9]+$ ]] || [ "$x" -lt 2 ]; then
    bad "$what: no estimate in the refusal: $(head -c 300 "$T/err")"
    return
  fi
  ok
  rm -f "$T/p.json" "$T/pub.json"
  "$CUZK" prove --backend cpu --max-memory "$((x - 1))MiB" "$@" "$z" "$w" "$T/p.json" \
    "$T/pub.json" >/dev/null 2>"$T/err"
  local rc=$?
  if [ "$rc" = 2 ] && grep -q "needs ~$x MiB, --max-memory is $((x - 1)) MiB" "$T/err" &&
    grep -q OUT_OF_BUDGET "$T/err" && [ ! -e "$T/p.json" ]; then ok; else
    bad "$what: --max-memory $((x - 1))MiB: exit $rc, $(head -c 300 "$T/err")"; fi
  "$TIME" -f %M -o "$T/rss" "$CUZK" prove --backend cpu --max-memory "${x}MiB" "$@" "$z" "$w" \
    "$T/p.json" "$T/pub.json" >/dev/null 2>"$T/err"
  rc=$?
  if [ "$rc" != 0 ] || ! grep -q "estimated peak memory ~$x MiB (--max-memory $x MiB)" "$T/err"
  then
    bad "$what: --max-memory ${x}MiB: exit $rc, $(head -c 300 "$T/err")"
    return
  fi
  ok
  local kib
  kib=$(tail -1 "$T/rss")
  if [[ "$kib" =~ ^[0-9]+$ ]] && [ "$kib" -le $((x * 1024)) ]; then ok; else
    bad "$what: peak resident set $kib KiB above the estimate $x MiB"; fi
  "$CUZK" verify --quiet "$vk" "$T/pub.json" "$T/p.json" && ok || bad "$what: proof invalid"
  echo "  $what: estimate $x MiB, peak $((kib / 1024)) MiB"
}

for curve in bn128 bls12381; do
  for k in 10 12 14; do
    d=$T/$curve-$k
    "$CUZK" gen-circuit --constraints $((2 ** k - 200)) --curve "$curve" -o "$d" --quiet ||
      { bad "gen-circuit $curve 2^$k"; continue; }
    "$CUZK" setup --seed 01 --quiet "$d/circuit.r1cs" "$d/circuit.zkey" 2>/dev/null ||
      { bad "setup $curve 2^$k"; continue; }
    z=$d/circuit.zkey w=$d/circuit.wtns vk=$d/vk.json
    "$CUZK" export-vk "$z" "$vk" || { bad "export-vk $curve 2^$k"; continue; }
    for th in 1 2; do
      bounded "$curve 2^$k $th threads" --threads $th
    done
    bounded "$curve 2^$k --repeat 2" --threads 2 --repeat 2
    for run in writes loads; do
      bounded "$curve 2^$k --key-cache ($run)" --threads 2 --key-cache "$T/$curve-$k.cache"
      # the tables' default is said: 2 copies from 2^10 to 2^14 points
      want="key cache: 2 table copies \(2\^$k points, 2 threads\)"
      grep -Eq "$want" "$T/err" && ok || bad "$curve 2^$k: no '$want' in $(head -c 300 "$T/err")"
      bounded "$curve 2^$k --key-cache --precompute 8 ($run)" --threads 2 --precompute 8 \
        --key-cache "$T/$curve-$k-8.cache"
    done
  done
done
# from 2^15 points no tables pay: --key-cache loads the zkey, says so and writes no cache;
# --precompute 0 keeps one anyway
d=$T/bn128-15
"$CUZK" gen-circuit --constraints $((2 ** 15 - 200)) --curve bn128 -o "$d" --quiet &&
  "$CUZK" setup --seed 01 --quiet "$d/circuit.r1cs" "$d/circuit.zkey" 2>/dev/null &&
  "$CUZK" export-vk "$d/circuit.zkey" "$d/vk.json" || bad "inputs at 2^15"
"$CUZK" prove --threads 2 --key-cache "$T/c15" "$d/circuit.zkey" "$d/circuit.wtns" \
  "$T/p.json" "$T/pub.json" 2> "$T/err" &&
  "$CUZK" verify --quiet "$d/vk.json" "$T/pub.json" "$T/p.json" && ok || bad "2^15 --key-cache"
grep -q "key cache: not used (2^15 points, 2 threads: " "$T/err" && grep -q "(zkey)" "$T/err" &&
  [ ! -e "$T/c15" ] && ok || bad "2^15 --key-cache: $(head -c 400 "$T/err"); $(ls "$T")"
"$CUZK" prove --threads 2 --key-cache "$T/c15" --precompute 0 "$d/circuit.zkey" \
  "$d/circuit.wtns" "$T/p.json" "$T/pub.json" 2> "$T/err" && [ -s "$T/c15" ] && ok ||
  bad "2^15 --key-cache --precompute 0 wrote no cache: $(head -c 400 "$T/err")"
"$CUZK" prove --max-memory lots a b c d >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "max-memory must be a size" "$T/err" && ok || bad "--max-memory lots accepted"

echo "max_memory_test: $pass checks, $fail failed"
[ "$fail" = 0 ]
