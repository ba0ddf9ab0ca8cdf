#!/usr/bin/env bash
# Device run: the batch-affine chunk fitted to free memory (gpu.h cuzk_gpu_ba_fit) against the
# default chunk. Run from the repository root on the GPU machine after scripts/device-pack here,
# with build-device carried (device tool: run "bash scripts/device/ba-fit.sh", carry
# ["build-device"]). Writes $OUT/ba-fit.txt.
#  1. staged_test (the fit's choice and tables after a fitted chunk, GPU proofs against the
#     CPU's) and gpu_prove_test.
#  2. cuzk-bench-gpu, G1 BLS12-381 at LOGS (default 20,22,24) with tables, ROUNDS rounds (2) of
#     BENCH_KNOBS interleaved; each knob is "default" or comma-separated VAR=VALUE settings and
#     bench flags (--no-ba-fit). Default: "default --no-ba-fit CUZK_GPU_BA_QUADS=0".
#  3. G2 BN254 2^24 with every fifth point at infinity (B in G2's share in a dense proof is
#     estimated at ~22%): G2_KNOBS (default "default CUZK_GPU_BA_QUADS=2"), one round; G2=0
#     skips it.
#  4. PROOF=1 (default): a BLS12-381 2^24 dense key proved with `cuzk prove --gpu-tables on
#     --repeat 3` under PROOF_KNOBS (default "default CUZK_GPU_BA_QUADS=0,
#     CUZK_GPU_BA_CHUNK_BYTES=4294967296": the fitted chunk, then the old default), each with
#     its peak device memory.
set -u
O=${OUT:-/tmp/ba-fit-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czf
B=$CUZK_BIN_DIR
{
dev_header
t0=$(date +%s)
timeout 150 $B/staged_test > $O/staged.log 2>&1
echo "staged_test rc=$? ($(( $(date +%s) - t0 )) s): $(tail -1 $O/staged.log)"
grep -E "FAIL|failed" $O/staged.log | head -5
dev_prove_test $O/gpu_prove_test.log
for round in $(seq 1 "${ROUNDS:-2}"); do
  for k in ${BENCH_KNOBS:-default --no-ba-fit CUZK_GPU_BA_QUADS=0}; do
    echo "-- round $round: $k"
    env $(knob_env "$k") timeout 150 $B/cuzk-bench-gpu --only g1-bls12-381 --logs "${LOGS:-20,22,24}" \
      --max-log 24 --tables 0 --reps 3 --scalars random $(knob_args "$k") 2>&1 |
      grep -E "^\| MSM|batch-affine chunk"
  done
done
[ "${G2:-1}" = 1 ] && for k in ${G2_KNOBS:-default CUZK_GPU_BA_QUADS=2}; do
  echo "-- G2 BN254, every fifth point at infinity: $k"
  env $(knob_env "$k") timeout 150 $B/cuzk-bench-gpu --only g2-bn254 --logs 24 --max-log 24 \
    --tables 0 --reps 3 --scalars random --inf-every 5 $(knob_args "$k") 2>&1 |
    grep -E "^\| MSM|batch-affine chunk"
done
if [ "${PROOF:-1}" = 1 ]; then
  d=/tmp/ba-fit
  mkdir -p $d
  n=$(( (1 << 24) - (1 << 18) ))
  t0=$(date +%s)
  timeout 120 $B/cuzk gen-circuit --constraints $n --curve bls12381 --profile dense --seed 1 \
    -o $d > /dev/null 2>&1 || echo "gen-circuit failed"
  timeout 240 $B/cuzk setup --quiet --seed 01 $d/circuit.r1cs $d/circuit.zkey > /dev/null 2>&1 ||
    echo "setup failed"
  echo "bls12381 2^24 dense: circuit + key in $(( $(date +%s) - t0 )) s"
  i=0
  for k in ${PROOF_KNOBS:-default CUZK_GPU_BA_QUADS=0,CUZK_GPU_BA_CHUNK_BYTES=4294967296}; do
    i=$((i + 1))
    echo "-- proof: $k"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > $O/mem-$i.txt \
      2>/dev/null &
    smi=$!
    env $(knob_env "$k") timeout 150 $B/cuzk prove --backend gpu --g2 gpu --gpu-tables on \
      --repeat 3 $d/circuit.zkey $d/circuit.wtns $d/p.json $d/pub.json 2>&1 |
      grep -E "proof [2-9]/|proofs after|cuzk: proved" | cut -c1-400
    kill $smi 2>/dev/null
    wait $smi 2>/dev/null
    echo "  peak device memory: $(sort -n $O/mem-$i.txt | tail -1) of $(nvidia-smi \
      --query-gpu=memory.total --format=csv,noheader,nounits) MiB"
  done
  rm -rf $d
fi
echo "== end $(date -u '+%T')"
} > "$O/ba-fit.txt" 2>&1
cat "$O/ba-fit.txt"
