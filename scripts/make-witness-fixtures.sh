#!/usr/bin/env bash
# make-witness-fixtures.sh — regenerate tests/witness/fixtures/ from tests/witness/circuits/.
#
# For each curve (bn128, bls12381) and each circuit NAME.circom it compiles with circom2 (the
# repo's node_modules) and writes tests/witness/fixtures/CURVE/NAME.{wasm,sym,r1cs}: the
# witness program, its signal names (which let cuzk name a missing input) and the constraint
# system (tests make their keys from it with `cuzk setup`). circom's output is deterministic,
# so a rerun reproduces the files byte for byte. Takes a few seconds.
# Usage: scripts/make-witness-fixtures.sh   (after `npm ci` at the repo root)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" # circom2 runs under WASI and sees only files below its working directory
C=$ROOT/node_modules/.bin/circom2
[ -x "$C" ] || { echo "make-witness-fixtures: run 'npm ci' at $ROOT first" >&2; exit 2; }
SRC=tests/witness/circuits
W=$(mktemp -d "$ROOT/build-witness-fixtures.XXXXXX")
trap 'rm -rf "$W"' EXIT
for curve in bn128 bls12381; do
  out=tests/witness/fixtures/$curve
  mkdir -p "$out"
  for f in "$SRC"/*.circom; do
    n=$(basename "$f" .circom)
    "$C" "$f" --r1cs --wasm --sym -p "$curve" -o "${W#$ROOT/}" >/dev/null
    cp "$W/${n}_js/$n.wasm" "$W/$n.sym" "$W/$n.r1cs" "$out/"
  done
done
ls -l tests/witness/fixtures/*/ | awk 'NF > 5 { print "  " $5, $9 }' >&2
