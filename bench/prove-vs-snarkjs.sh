#!/usr/bin/env bash
# Side-by-side: `cuzk prove` vs `snarkjs groth16 prove` on the same zkey and witness, same
# machine, same run. Prints a table (best of RUNS wall-clock seconds each) and the ratio.
# Usage: bench/prove-vs-snarkjs.sh [CIRCUIT ...]   (default: chain, the largest fixture)
# Env: RUNS (default 3), CUZK_BIN_DIR (default build/bin), THREADS (default: all cores),
#      KEY_CACHE=1: also time `cuzk prove --key-cache` (the preprocessed key with its
#      fixed-base tables; the cache is written once before, outside the timing) and print
#      both ratios, labelled; PRECOMPUTE=T passes --precompute T with it (default: cuzk's).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CUZK_BIN_DIR:-build/bin}
RUNS=${RUNS:-3}
SNARKJS=node_modules/.bin/snarkjs
circuits=("$@")
[ ${#circuits[@]} -gt 0 ] || circuits=(chain)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
best() { # best wall seconds of RUNS runs of a command
  local b=""
  for _ in $(seq "$RUNS"); do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "command failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    b=$(awk -v s="$s" -v e="$e" -v b="$b" 'BEGIN { d = e - s; if (b == "" || d < b) b = d; printf "%.3f", b }')
  done
  echo "$b"
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
echo "cuzk: $($BIN/cuzk --version); snarkjs: $(node -e 'console.log(require("./node_modules/snarkjs/package.json").version)'); runs: best of $RUNS"
if [ -n "${KEY_CACHE:-}" ]; then
  printf '%-10s %-12s %10s %14s %15s %10s %13s %14s\n' curve circuit constraints "cuzk zkey s" \
    "cuzk cache s" "snarkjs s" "ratio zkey" "ratio cache"
else
  printf '%-10s %-22s %10s %12s %12s %8s\n' curve circuit constraints "cuzk s" "snarkjs s" ratio
fi
for curve in bn128 bls12381; do
  for c in "${circuits[@]}"; do
    d=tests/fixtures/$curve
    [ -f "$d/$c.zkey" ] || { echo "skip $curve/$c: no fixture" >&2; continue; }
    n=$($BIN/cuzk inspect "$d/$c.r1cs" | awk '/constraints:/ {print $2}')
    tc=$(best "$BIN/cuzk" prove --quiet ${THREADS:+--threads $THREADS} "$d/$c.zkey" "$d/$c.wtns" "$T/p.json" "$T/pub.json")
    ts=$(best "$SNARKJS" groth16 prove "$d/$c.zkey" "$d/$c.wtns" "$T/sp.json" "$T/spub.json")
    if [ -n "${KEY_CACHE:-}" ]; then
      kc=(--key-cache "$T/$curve-$c.cuzkcache" ${PRECOMPUTE:+--precompute $PRECOMPUTE})
      # warm: the first run loads the zkey, builds the tables and writes the cache
      "$BIN/cuzk" prove --quiet ${THREADS:+--threads $THREADS} "${kc[@]}" "$d/$c.zkey" "$d/$c.wtns" \
        "$T/p.json" "$T/pub.json" || { echo "cuzk prove --key-cache failed" >&2; exit 1; }
      tk=$(best "$BIN/cuzk" prove --quiet ${THREADS:+--threads $THREADS} "${kc[@]}" "$d/$c.zkey" "$d/$c.wtns" "$T/p.json" "$T/pub.json")
      printf '%-10s %-12s %10s %14s %15s %10s %12.1fx %13.1fx\n' "$curve" "$c" "$n" "$tc" "$tk" "$ts" \
        "$(awk -v a="$ts" -v b="$tc" 'BEGIN{print a/b}')" "$(awk -v a="$ts" -v b="$tk" 'BEGIN{print a/b}')"
    else
      printf '%-10s %-22s %10s %12s %12s %7.1fx\n' "$curve" "$c" "$n" "$tc" "$ts" "$(awk -v a="$ts" -v b="$tc" 'BEGIN{print a/b}')"
    fi
  done
done
