#!/usr/bin/env bash
# Side-by-side with snarkjs on circom witness programs, same machine, same run, two tables:
#  1. witness: `cuzk witness` vs `snarkjs wtns calculate`, same wasm and input.json, per curve
#     and size; checks that the two .wtns are identical.
#  2. fullprove: `cuzk prove --wasm --input` vs `snarkjs groth16 fullprove`, same zkey (made by
#     `cuzk setup --seed 01` from the circuit's r1cs) and input; both proofs must pass
#     `snarkjs groth16 verify`.
# Circuits are compiled here with the repo's circom2: CIRCUIT=chain is
# tests/fixtures/circuits/chain.circom with N rows (--O2; N + 3 wires, N constraints);
# CIRCUIT=poseidon is a chain of N circomlib Poseidon(2) hashes (needs node_modules/circomlib;
# --O0, 767 wires a hash: --O2 leaves 240 but takes minutes at 2^16 wires and far longer at 2^20).
# Times are whole commands (process start, wasm load, witness, proof, files written), wall
# seconds, median of RUNS with the two tools taking turns (the machine may be shared and noisy).
# cuzk's witness program is built once per wasm before the timing (its build time is printed).
# Usage: bench/witness-vs-snarkjs.sh
# Env: CIRCUIT (chain), CURVES ("bn128 bls12381"), WITNESS_SIZES (N values; chain "65533
#      1048573", poseidon "85 1367": 2^16 and 2^20 wires), PROVE_SIZES (N values; chain "65533",
#      2^16 constraints with the public output, poseidon "85"; "" skips the table), RUNS (3),
#      CUZK_BIN_DIR (build/bin)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" # circom2 runs under WASI and sees only files below its working directory
BIN=${CUZK_BIN_DIR:-build/bin}
CIRCUIT=${CIRCUIT:-chain} CURVES=${CURVES:-bn128 bls12381} RUNS=${RUNS:-3}
case $CIRCUIT in
  chain) OPT=--O2 WITNESS_SIZES=${WITNESS_SIZES-65533 1048573} PROVE_SIZES=${PROVE_SIZES-65533} ;;
  poseidon) OPT=--O0 WITNESS_SIZES=${WITNESS_SIZES-85 1367} PROVE_SIZES=${PROVE_SIZES-85} ;;
  *) echo "CIRCUIT must be chain or poseidon" >&2; exit 2 ;;
esac
SNARKJS=node_modules/.bin/snarkjs
W=$(mktemp -d "$ROOT/build-witness-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo '{"x": "3", "y": "0x1234567890abcdef"}' >"$W/input.json"

# compile CURVE N [r1cs]: prints the circuit's folder (wasm, and r1cs + sym when asked, which
# costs minutes at 2^20 constraints); "wires constraints" in its file info
compile() {
  local d=$W/$CIRCUIT-$1-$2
  if [ ! -f "$d/info" ] || { [ -n "${3:-}" ] && [ ! -f "$d/c.r1cs" ]; }; then
    mkdir -p "$d"
    case $CIRCUIT in
      chain) sed "s/Chain(16384)/Chain($2)/" tests/fixtures/circuits/chain.circom >"$d/c.circom" ;;
      poseidon)
        cp node_modules/circomlib/circuits/poseidon{,_constants}.circom "$d/"
        cat >"$d/c.circom" <<EOF
pragma circom 2.0.0;
include "poseidon.circom";
template PoseidonChain(N) {
    signal input x;
    signal input y;
    signal output out;
    component h[N];
    for (var i = 0; i < N; i++) {
        h[i] = Poseidon(2);
        h[i].inputs[0] <== i == 0 ? y : h[i-1].out;
        h[i].inputs[1] <== x;
    }
    out <== h[N-1].out;
}
component main = PoseidonChain($2);
EOF
        ;;
    esac
    node_modules/.bin/circom2 "${d#$ROOT/}/c.circom" $OPT --wasm ${3:+--r1cs --sym} -p "$1" \
      -o "${d#$ROOT/}" >"$d/circom.log"
    awk '/^wires:/ { w = $2 } /constraints:/ { c += $NF } END { print w, c }' \
      <(sed 's/\x1b\[[0-9;]*m//g' "$d/circom.log") >"$d/info"
  fi
  echo "$d"
}
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
         e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; }
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", a / b }'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
     "load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "cuzk: $($BIN/cuzk --version); snarkjs" \
     "$(node -e 'console.log(require("./node_modules/snarkjs/package.json").version)');" \
     "circuit: $CIRCUIT; median of $RUNS, tools taking turns"

if [ -n "$WITNESS_SIZES" ]; then
  echo
  printf '%-9s %8s %9s %12s %10s %10s %9s %8s %s\n' curve N wires "cuzk build" "cuzk s" \
    "snarkjs s" ratio "compute" wtns
  for curve in $CURVES; do
    for n in $WITNESS_SIZES; do
      d=$(compile "$curve" "$n"); wasm=$d/c_js/c.wasm
      build=$(secs "$BIN/cuzk" witness --quiet --wasm-cache "$d/cache" "$wasm" "$W/input.json" "$d/c.wtns")
      cs="" ss=""
      for _ in $(seq "$RUNS"); do
        cs+=" $(secs "$BIN/cuzk" witness --quiet --wasm-cache "$d/cache" "$wasm" "$W/input.json" "$d/c.wtns")"
        ss+=" $(secs "$SNARKJS" wtns calculate "$wasm" "$W/input.json" "$d/s.wtns")"
      done
      c=$(median <<<"$cs") s=$(median <<<"$ss")
      cmp -s "$d/c.wtns" "$d/s.wtns" && same=identical || same=DIFFERENT
      inner=$("$BIN/cuzk" witness --wasm-cache "$d/cache" "$wasm" "$W/input.json" "$d/c.wtns" 2>&1 |
              sed -n 's/.* in \([0-9.]*\) ms$/\1/p')
      # wires: the .wtns header's count (magic, version, sections, id, size, n8, q[n8], count)
      n8=$(od -An -tu4 -j24 -N4 "$d/c.wtns" | tr -d ' ')
      wires=$(od -An -tu4 -j$((28 + n8)) -N4 "$d/c.wtns" | tr -d ' ')
      printf '%-9s %8s %9s %12s %10s %10s %9s %8s %s\n' "$curve" "$n" "$wires" \
        "$build" "$c" "$s" "$(ratio "$s" "$c")" \
        "$(awk -v m="$inner" 'BEGIN { printf "%.3f", m / 1000 }')" "$same"
      rm -f "$d/c.wtns" "$d/s.wtns"
    done
  done
  echo "(cuzk build: once per wasm, not in the timing; compute: cuzk's witness computation alone)"
fi

if [ -n "$PROVE_SIZES" ]; then
  echo
  printf '%-9s %8s %12s %10s %10s %10s %9s %s\n' curve N constraints "setup s" "cuzk s" \
    "snarkjs s" ratio verify
  for curve in $CURVES; do
    for n in $PROVE_SIZES; do
      d=$(compile "$curve" "$n" r1cs); wasm=$d/c_js/c.wasm
      setup=$(secs "$BIN/cuzk" setup --quiet --seed 01 "$d/c.r1cs" "$d/k.zkey")
      "$SNARKJS" zkey export verificationkey "$d/k.zkey" "$d/vk.json" >/dev/null
      # build cuzk's witness program outside the timing, as the table above does
      "$BIN/cuzk" witness --quiet --wasm-cache "$d/cache" "$wasm" "$W/input.json" "$d/c.wtns"
      cs="" ss=""
      for _ in $(seq "$RUNS"); do
        cs+=" $(secs "$BIN/cuzk" prove --quiet --wasm "$wasm" --input "$W/input.json" \
                  --wasm-cache "$d/cache" "$d/k.zkey" "$d/cp.json" "$d/cpub.json")"
        ss+=" $(secs "$SNARKJS" groth16 fullprove "$W/input.json" "$wasm" "$d/k.zkey" \
                  "$d/sp.json" "$d/spub.json")"
      done
      c=$(median <<<"$cs") s=$(median <<<"$ss")
      ok=ok
      "$SNARKJS" groth16 verify "$d/vk.json" "$d/cpub.json" "$d/cp.json" >/dev/null || ok=FAILED
      "$SNARKJS" groth16 verify "$d/vk.json" "$d/spub.json" "$d/sp.json" >/dev/null || ok=FAILED
      cmp -s "$d/cpub.json" "$d/spub.json" || ok="public.json DIFFERS"
      printf '%-9s %8s %12s %10s %10s %10s %9s %s\n' "$curve" "$n" "$(cut -d' ' -f2 "$d/info")" \
        "$setup" "$c" "$s" "$(ratio "$s" "$c")" "$ok"
    done
  done
  echo "(setup: cuzk setup --seed 01, once, not in the timing; verify: snarkjs groth16 verify of both proofs)"
fi
