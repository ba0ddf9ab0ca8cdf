#!/usr/bin/env bash
# make-fixtures.sh — regenerate the circom/snarkjs test fixtures under tests/fixtures/.
#
# For each curve (bn128 = BN254, bls12381 = BLS12-381) and each circuit in
# tests/fixtures/circuits/ (multiplier, poseidon, chain) it writes to tests/fixtures/<curve>/:
#   NAME.r1cs NAME.wtns NAME.zkey NAME_vk.json NAME_proof.json NAME_public.json NAME.input.json
#   and NAME.wasm (circom's witness generator, only when it is under 1 MB)
# then runs tests/fixtures/gen-expected.mjs, which reads every fixture with snarkjs's own code
# and writes tests/fixtures/expected.json (the values tests/io/*_test.c compare against).
#
# Everything is deterministic: the powers of tau and the phase-2 key use `beacon`
# contributions (no OS randomness), so a rerun gives byte-identical .ptau/.r1cs/.zkey/.wtns.
# Only the proof (snarkjs draws r, s at random) differs between runs.
#
# Usage: scripts/make-fixtures.sh [ptau|all]      (default all; `ptau` only prepares the ptau cache)
# Env:
#   CURVES="bn128 bls12381"   curves to build
#   CIRCUITS="multiplier poseidon chain"
#   PTAU_DIR=~/.cache/cuzk-ptau where powers-of-tau files are cached (never inside the repo)
#   FIXTURE_CPU=1              pin snarkjs/circom to this CPU (taskset) so other work keeps a core;
#                              set FIXTURE_CPU= (empty) to use all cores
# Powers: the small circuits use a power-10 ptau (Poseidon(2) has 517 rows -> domain 2^10); the
# chain circuit (16384 rows + 1 public -> domain 2^15) a power-15 one. `prepare phase2` dominates
# and is cached in PTAU_DIR. Measured on the 2-vCPU dev box, pinned to one core: power 10 prepare
# 24 s (bn128) / 42 s (bls12381); the four small circuits ~2 min in all; power 15 ~20 CPU-minutes
# (bn128) and ~35 (bls12381). Each step's wall time is printed on stderr.
# The script must be run with the repo's node_modules installed (npm ci at the root).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# circom2 runs under WASI and only sees files below its working directory: work from the root.
cd "$ROOT"
CURVES=${CURVES:-"bn128 bls12381"}
CIRCUITS=${CIRCUITS:-"multiplier poseidon chain"}
PTAU_DIR=${PTAU_DIR:-$HOME/.cache/cuzk-ptau}
MODE=${1:-all}
S="$ROOT/node_modules/.bin/snarkjs"
C="$ROOT/node_modules/.bin/circom2"
[ -x "$S" ] && [ -x "$C" ] || { echo "make-fixtures: run 'npm ci' at $ROOT first" >&2; exit 2; }

# Beacon hashes: arbitrary fixed 32-byte values; `10` = 2^10 hash iterations (snarkjs minimum
# sensible work; the value only has to be fixed for reproducibility).
PTAU_BEACON=6375a7b3f1c0de0f2a9e4d5b8c7f60112233445566778899aabbccddeeff0011
ZKEY_BEACON=0badc0ffee15900dd15ea5e5c0de0123456789abcdeffedcba98765432100f0f

PIN=()
if [ -n "${FIXTURE_CPU-1}" ] && command -v taskset >/dev/null; then
    PIN=(taskset -c "${FIXTURE_CPU-1}")
fi

# tm LABEL CMD...: run CMD, log its wall time on stderr; keeps CMD's exit status.
tm()
{
    local label=$1 t0 rc=0
    shift
    t0=$(date +%s.%N)
    "$@" || rc=$?
    awk -v a="$t0" -v b="$(date +%s.%N)" -v l="$label" \
        'BEGIN { printf "  [%7.1f s] %s\n", b - a, l }' >&2
    return $rc
}

power_for()  # circuit -> ptau power it needs
{
    case $1 in
        chain) echo 15 ;;
        *) echo 10 ;;
    esac
}

# ptau CURVE POWER: make (or reuse) $PTAU_DIR/CURVE_POWER.ptau, prepared for phase 2.
ptau()
{
    local c=$1 p=$2
    local f=$PTAU_DIR/${c}_$p.ptau tmp=$PTAU_DIR/tmp.$$.${c}_$p
    [ -s "$f" ] && return 0
    mkdir -p "$PTAU_DIR"
    echo "== ptau $c power $p" >&2
    tm "ptau new $c $p" "${PIN[@]}" "$S" powersoftau new "$c" "$p" "$tmp.0.ptau" >/dev/null
    tm "ptau beacon $c $p" "${PIN[@]}" "$S" powersoftau beacon "$tmp.0.ptau" "$tmp.1.ptau" \
        "$PTAU_BEACON" 10 -n="cuzk fixtures" >/dev/null
    tm "ptau prepare phase2 $c $p" "${PIN[@]}" "$S" powersoftau prepare phase2 \
        "$tmp.1.ptau" "$tmp.2.ptau" >/dev/null
    mv "$tmp.2.ptau" "$f"
    rm -f "$tmp.0.ptau" "$tmp.1.ptau"
}

# flow CURVE NAME: compile, set up, prove and verify one circuit; copy results to the fixtures.
flow()
{
    local c=$1 n=$2
    local out=$ROOT/tests/fixtures/$c src=$ROOT/tests/fixtures/circuits
    local w=$WORK/$c
    local pt=$PTAU_DIR/${c}_$(power_for "$n").ptau
    mkdir -p "$out" "$w"
    echo "== $c / $n" >&2
    # circom resolves `include` relative to the file and to -l paths; circomlib comes from
    # the repo's node_modules.
    tm "circom2 $n ($c)" "${PIN[@]}" "$C" "$src/$n.circom" --r1cs --wasm -p "$c" \
        -l "$ROOT/node_modules" -o "$w" >/dev/null
    tm "groth16 setup $n ($c)" "${PIN[@]}" "$S" groth16 setup "$w/$n.r1cs" "$pt" \
        "$w/${n}_0.zkey" >/dev/null
    tm "zkey beacon $n ($c)" "${PIN[@]}" "$S" zkey beacon "$w/${n}_0.zkey" "$w/$n.zkey" \
        "$ZKEY_BEACON" 10 -n="cuzk fixtures" >/dev/null
    tm "zkey verify $n ($c)" "${PIN[@]}" "$S" zkey verify "$w/$n.r1cs" "$pt" "$w/$n.zkey" \
        >/dev/null
    tm "export vk $n ($c)" "${PIN[@]}" "$S" zkey export verificationkey "$w/$n.zkey" \
        "$w/${n}_vk.json" >/dev/null
    tm "wtns calculate $n ($c)" "${PIN[@]}" "$S" wtns calculate "$w/${n}_js/$n.wasm" \
        "$src/$n.input.json" "$w/$n.wtns" >/dev/null
    tm "wtns check $n ($c)" "${PIN[@]}" "$S" wtns check "$w/$n.r1cs" "$w/$n.wtns" >/dev/null
    tm "groth16 prove $n ($c)" "${PIN[@]}" "$S" groth16 prove "$w/$n.zkey" "$w/$n.wtns" \
        "$w/${n}_proof.json" "$w/${n}_public.json" >/dev/null
    tm "groth16 verify $n ($c)" "${PIN[@]}" "$S" groth16 verify "$w/${n}_vk.json" \
        "$w/${n}_public.json" "$w/${n}_proof.json" >/dev/null
    cp "$w/$n.r1cs" "$w/$n.zkey" "$w/$n.wtns" "$w/${n}_vk.json" "$w/${n}_proof.json" \
        "$w/${n}_public.json" "$out/"
    cp "$src/$n.input.json" "$out/$n.input.json"
    if [ "$(stat -c %s "$w/${n}_js/$n.wasm")" -lt 1048576 ]; then
        cp "$w/${n}_js/$n.wasm" "$out/$n.wasm"
    fi
}

T0=$(date +%s)
# Small powers first (for both curves) so the quick fixtures can be made while the big ptau runs.
POWERS=$(for n in $CIRCUITS; do power_for "$n"; done | sort -n -u)
for p in $POWERS; do
    for c in $CURVES; do ptau "$c" "$p"; done
done
if [ "$MODE" = ptau ]; then
    echo "ptau cache ready in $PTAU_DIR ($(($(date +%s) - T0)) s)" >&2
    exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-fixtures.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
for c in $CURVES; do
    for n in $CIRCUITS; do flow "$c" "$n"; done
done
tm "gen-expected" node "$ROOT/tests/fixtures/gen-expected.mjs"
echo "fixtures done in $(($(date +%s) - T0)) s" >&2
ls -l "$ROOT"/tests/fixtures/*/ | awk 'NF > 5 { print "  " $5, $9 }' >&2
