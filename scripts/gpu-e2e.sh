#!/usr/bin/env bash
# End-to-end proofs on a GPU machine: for each curve, a synthetic circuit (cuzk gen-circuit) of
# 2^LOG constraints, a test key (cuzk setup), then `cuzk prove` on the CPU and on the GPU (B in G2
# on CPU threads, then on the GPU), each verified, with the prover's stage timings.
# Usage: scripts/gpu-e2e.sh [LOG=20] [PROFILE=dense]   (CUZK_BIN_DIR: where cuzk is;
#        SKIP_CPU=1 leaves out the CPU-only proof)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${CUZK_BIN_DIR:-build/bin}
LOG=${1:-20}
PROFILE=${2:-dense}
W=${E2E_DIR:-$(mktemp -d)}
# constraints so that the domain is exactly 2^LOG (it must exceed constraints + public inputs)
n=$(( (1 << LOG) - (1 << (LOG - 6)) ))
echo "gpu-e2e: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPU threads; $n constraints ($PROFILE), domain 2^$LOG; $(date -u +%Y-%m-%dT%H:%MZ)"
for curve in bn128 bls12381; do
  d=$W/$curve
  mkdir -p "$W"
  t0=$(date +%s.%N)
  "$BIN/cuzk" gen-circuit --constraints $n --curve $curve --profile $PROFILE --seed 1 -o "$d" >/dev/null 2>&1 || { echo "gen-circuit failed"; exit 1; }
  t1=$(date +%s.%N)
  "$BIN/cuzk" setup --quiet --seed 01 "$d/circuit.r1cs" "$d/circuit.zkey" 2>/dev/null || { echo "setup failed"; exit 1; }
  t2=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v cu="$curve" 'BEGIN{printf "%s: gen-circuit %.1f s, setup %.1f s\n", cu, b-a, c-b}'
  runs=("cpu cpu" "gpu cpu" "gpu gpu" "gpu gpu")
  [ "${SKIP_CPU:-0}" = 1 ] && runs=("gpu cpu" "gpu gpu" "gpu gpu")
  for run in "${runs[@]}"; do
    set -- $run
    "$BIN/cuzk" prove --backend $1 --g2 $2 "$d/circuit.zkey" "$d/circuit.wtns" "$d/p.json" "$d/pub.json" 2>&1 | sed "s/^/  [$1, g2 $2] /"
  done
done
