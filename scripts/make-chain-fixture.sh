#!/usr/bin/env bash
# The 16384-constraint "chain" fixture (tests/fixtures/circuits/chain.circom) for both curves.
#
# circom compiles it (r1cs + wasm) and snarkjs computes the witness, as for the other fixtures;
# the proving key comes from `cuzk setup --seed` instead of a snarkjs ceremony, because a power-15
# powers-of-tau `prepare phase2` takes most of an hour per curve on a 2-core machine. snarkjs then
# exports the verification key, proves with the key and verifies its own proof, so every file is
# still produced or checked by the reference implementation. Deterministic: same files every run
# (only chain_proof.json changes, snarkjs blinds with fresh randomness).
# Usage: scripts/make-chain-fixture.sh   (needs build/bin/cuzk and npm ci)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=${CUZK_BIN_DIR:-$ROOT/build/bin}
S=$ROOT/node_modules/.bin/snarkjs
C=$ROOT/node_modules/.bin/circom2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for curve in bn128 bls12381; do
  out=$ROOT/tests/fixtures/$curve
  mkdir -p "$out" "$W/$curve"
  echo "== $curve: circom" >&2
  "$C" tests/fixtures/circuits/chain.circom --r1cs --wasm -p "$curve" -o "$W/$curve" >/dev/null
  cp "$W/$curve/chain.r1cs" "$out/chain.r1cs"
  cp tests/fixtures/circuits/chain.input.json "$out/chain.input.json"
  "$S" wtns calculate "$W/$curve/chain_js/chain.wasm" "$out/chain.input.json" "$out/chain.wtns"
  "$S" wtns check "$out/chain.r1cs" "$out/chain.wtns" >/dev/null
  echo "== $curve: cuzk setup" >&2
  "$BIN/cuzk" setup --quiet --seed 636861696e2d66697874757265 "$out/chain.r1cs" "$out/chain.zkey"
  "$S" zkey export verificationkey "$out/chain.zkey" "$out/chain_vk.json" >/dev/null
  echo "== $curve: snarkjs prove + verify" >&2
  "$S" groth16 prove "$out/chain.zkey" "$out/chain.wtns" "$out/chain_proof.json" "$out/chain_public.json"
  "$S" groth16 verify "$out/chain_vk.json" "$out/chain_public.json" "$out/chain_proof.json" >/dev/null
done
echo "chain fixtures written" >&2
echo "== expected.txt (snarkjs-read values)" >&2; node tests/fixtures/gen-expected.mjs
