#!/usr/bin/env bash
# Device run after a default changes: the pack's tests as built (gpu_test --quick; again with the
# batch-affine accumulation at every size in small chunks with quads, CUZK_GPU_BATCH_AFFINE=2
# CUZK_GPU_BA_CHUNK_BYTES=20000 CUZK_GPU_BA_QUADS=2; staged_test; tests/gpu/gpu_prove_test.sh),
# then the G1 and G2 MSM rows with tables (cuzk-bench-gpu --only g1,g2 --logs $LOGS --tables 0
# --reps 3; LOGS default 24), ROUNDS rounds (default 2), so that G2 / G1 comes from one call;
# then the dense 2^24 proofs (ba-proof.sh without ncu, REPEAT 3) for each of CURVES (default
# none; e.g. "bn128 bls12381"). SKIP_TEST=1 skips the tests, BA_TEST=0 the batch-affine run.
# Run from the repository root on the GPU machine after scripts/device-pack here (device tool:
# run "bash scripts/device/default-check.sh", carry ["build-device/cuzk-device.tar.xz"]).
# Writes $OUT/default-check.txt and the tests' logs.
set -u
O=${OUT:-/tmp/default-check-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk || { echo "default-check: cannot unpack the pack" >&2; exit 2; }
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
if [ -z "${SKIP_TEST:-}" ]; then
  dev_gpu_test "$O/gpu_test.log"
  [ "${BA_TEST:-1}" = 0 ] || dev_gpu_test "$O/gpu_test-ba-quads.log" CUZK_GPU_BATCH_AFFINE=2 \
    CUZK_GPU_BA_CHUNK_BYTES=20000 CUZK_GPU_BA_QUADS=2
  dev_staged_test "$O/staged.log"
  dev_prove_test "$O/gpu_prove_test.log"
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  echo "-- round $round ($(date -u '+%T'))"
  timeout 240 "$CUZK_BIN_DIR/cuzk-bench-gpu" --only g1,g2 --logs "$LOGS" --max-log "$MAXLOG" \
    --tables 0 --reps 3 --scalars random 2>&1 | grep -E "^\|" | grep -v -- "---\|what"
done
for c in ${CURVES-}; do
  NCU=0 CURVE=$c REPEAT=${REPEAT:-3} KNOBS=default bash scripts/device/ba-proof.sh |
    grep -v "^== end"
done
echo "== end $(date -u '+%T')"
} > "$O/default-check.txt" 2>&1
cat "$O/default-check.txt"
