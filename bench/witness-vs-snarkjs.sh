#!/usr/bin/env bash
# Side-by-side: `cuzk witness` vs `snarkjs wtns calculate` on the same circom witness program
# and inputs, same machine, same run. The circuit is tests/fixtures/circuits/chain.circom with
# N rows (default 65536: 2^16 + 3 wires), compiled here with the repo's circom2. Prints the
# one-time build of cuzk's program, then best-of-RUNS wall seconds of each (whole commands:
# process start, wasm load, witness, .wtns write) and checks that the two .wtns are identical.
# Usage: bench/witness-vs-snarkjs.sh   Env: N (rows), CURVE (bn128 | bls12381), RUNS (3),
#        CUZK_BIN_DIR (build/bin)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" # circom2 runs under WASI and sees only files below its working directory
BIN=${CUZK_BIN_DIR:-build/bin}
N=${N:-65536} CURVE=${CURVE:-bn128} RUNS=${RUNS:-3}
SNARKJS=node_modules/.bin/snarkjs
W=$(mktemp -d "$ROOT/build-witness-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
sed "s/Chain(16384)/Chain($N)/" tests/fixtures/circuits/chain.circom >"$W/chain.circom"
echo '{"x": "3", "y": "0x1234567890abcdef"}' >"$W/input.json"
node_modules/.bin/circom2 "${W#$ROOT/}/chain.circom" --wasm -p "$CURVE" -o "${W#$ROOT/}" >/dev/null
wasm=$W/chain_js/chain.wasm
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
         e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; }
best() { local b=""; for _ in $(seq "$RUNS"); do
           local d; d=$(secs "$@"); b=$(awk -v d="$d" -v b="$b" 'BEGIN { print (b == "" || d < b) ? d : b }'); done
         echo "$b"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "circuit: chain N=$N on $CURVE, wasm $(stat -c %s "$wasm") bytes; runs: best of $RUNS"
build=$(secs "$BIN/cuzk" witness --quiet --wasm-cache "$W/cache" "$wasm" "$W/input.json" "$W/c.wtns")
c=$(best "$BIN/cuzk" witness --quiet --wasm-cache "$W/cache" "$wasm" "$W/input.json" "$W/c.wtns")
s=$(best "$SNARKJS" wtns calculate "$wasm" "$W/input.json" "$W/s.wtns")
cmp -s "$W/c.wtns" "$W/s.wtns" && same=identical || same=DIFFERENT
inner=$("$BIN/cuzk" witness --wasm-cache "$W/cache" "$wasm" "$W/input.json" "$W/c.wtns" 2>&1 |
        sed -n 's/.* in \([0-9.]*\) ms$/\1/p')
printf "%-34s %10s\n" "" "seconds"
printf "%-34s %10s\n" "cuzk build (once per wasm)" "$build"
printf "%-34s %10s\n" "cuzk witness (cached program)" "$c"
printf "%-34s %10s\n" "  computation only (one run)" "$(awk -v m="$inner" 'BEGIN { printf "%.3f", m / 1000 }')"
printf "%-34s %10s\n" "snarkjs wtns calculate" "$s"
echo "speedup (whole commands): $(awk -v a="$s" -v b="$c" 'BEGIN { printf "%.1fx", a / b }'); wtns $same"
