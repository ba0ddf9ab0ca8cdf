#!/usr/bin/env bash
# Device run: G2's batch-affine kernels two lanes a slice (CUZK_GPU_BA_HALVES, ba_halves.cuh:
# bit 0 k_ba_pairs_h, bit 1 k_ba_quads_h, bit 3 k_ba_pass_b_h, bit 2 their Fp2 products in
# interleaved pairs) checked and measured. gpu_test --quick with the batch-affine accumulation at
# every size in small chunks (CUZK_GPU_BATCH_AFFINE=2, CUZK_GPU_BA_CHUNK_BYTES=20000): with quads
# (CUZK_GPU_BA_QUADS=2) and HALVES 3 and 7, without (0) and HALVES 8 and 12, so that every G2
# MSM's checks go through the new kernels; then the G2 MSM rows with tables (cuzk-bench-gpu
# --only $ONLY --logs $LOGS --tables 0 --reps 3; fitted chunk: quads at 2^24, pass B at 2^20 and
# 2^22), each of SETTINGS (default "0 11 15 10": none, all, all with paired products, the quads
# alone one-lane) interleaved, ROUNDS rounds (default 2). ONLY (default g2), LOGS (default
# 20,22,24). Run from the repository root on the GPU machine after scripts/device-pack here
# (device tool: run "bash scripts/device/ba-halves.sh", carry ["build-device"]). SKIP_TEST=1
# skips the tests; CUZK_PACK a variant tarball of build-variants.sh (with SKIP_TEST=1). Writes
# $OUT/ba-halves.txt (ba-halves-NAME.txt for a variant build-v-NAME).
set -u
O=${OUT:-/tmp/ba-halves-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk || { echo "ba-halves: cannot unpack ${CUZK_PACK:-the pack}" >&2; exit 2; }
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
F=$O/ba-halves${CUZK_PACK:+-$(basename "$(dirname "$CUZK_PACK")" | sed 's/^build-v-//')}.txt
LOGS=${LOGS:-20,22,24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
if [ -z "${SKIP_TEST:-}" ]; then
  for hq in 3:2 7:2 8:0 12:0; do
    dev_gpu_test "$O/gpu_test-halves${hq%:*}.log" CUZK_GPU_BATCH_AFFINE=2 \
      CUZK_GPU_BA_CHUNK_BYTES=20000 CUZK_GPU_BA_QUADS=${hq#*:} CUZK_GPU_BA_HALVES=${hq%:*}
  done
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for hv in ${SETTINGS:-0 11 15 10}; do
    echo "-- round $round: CUZK_GPU_BA_HALVES=$hv ($(date -u '+%T'))"
    env CUZK_GPU_BA_HALVES=$hv timeout 240 "$NB" --only "${ONLY:-g2}" --logs "$LOGS" \
      --max-log "$MAXLOG" --tables 0 --reps 3 --scalars random 2>&1 | grep -E "^\|" |
      grep -v -- "---\|what"
  done
done
echo "== end $(date -u '+%T')"
} > "$F" 2>&1
cat "$F"
