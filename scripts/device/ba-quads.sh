#!/usr/bin/env bash
# Device run: the batch-affine quads (CUZK_GPU_BA_QUADS, msm_kernels.cuh) checked and measured.
# gpu_test --quick by default, then with the batch-affine accumulation at every size in small
# chunks (CUZK_GPU_BATCH_AFFINE=2, CUZK_GPU_BA_CHUNK_BYTES=20000) with quads and with pairs
# only; gpu_prove_test; then the 2^24 MSM rows with tables (cuzk-bench-gpu --only $ONLY --logs
# 24 --tables 0 --reps 3), quads on and off interleaved, ROUNDS rounds (default 2), in chunks
# of CHUNK bytes (default: CUZK_GPU_BA_CHUNK_BYTES unset, 4 GiB). Run from the
# repository root on the GPU machine after scripts/device-pack here (device tool: run "bash
# scripts/device/ba-quads.sh", carry ["build-device"]). SKIP_TEST=1 skips the tests. Writes
# $OUT/ba-quads.txt.
set -u
O=${OUT:-/tmp/ba-quads-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
{
dev_header
if [ -z "${SKIP_TEST:-}" ]; then
  dev_gpu_test "$O/gpu_test.log"
  dev_gpu_test "$O/gpu_test-ba-quads.log" CUZK_GPU_BATCH_AFFINE=2 CUZK_GPU_BA_CHUNK_BYTES=20000 \
    CUZK_GPU_BA_QUADS=2
  dev_gpu_test "$O/gpu_test-ba-pairs.log" CUZK_GPU_BATCH_AFFINE=2 CUZK_GPU_BA_CHUNK_BYTES=20000 \
    CUZK_GPU_BA_QUADS=0
  dev_prove_test "$O/gpu_prove_test.log"
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for q in 2 0; do
    echo "-- round $round: CUZK_GPU_BA_QUADS=$q ($(date -u '+%T'))"
    env CUZK_GPU_BA_QUADS=$q ${CHUNK:+CUZK_GPU_BA_CHUNK_BYTES=$CHUNK} timeout 240 "$NB" \
      --only "${ONLY:-g1-bls12-381,g2}" --logs 24 --max-log 24 --tables 0 --reps 3 \
      --scalars random 2>&1 | grep -E "^\|" | grep -v -- "---\|what"
  done
done
echo "== end $(date -u '+%T')"
} > "$O/ba-quads.txt" 2>&1
cat "$O/ba-quads.txt"
