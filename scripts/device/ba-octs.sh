#!/usr/bin/env bash
# Device run: G2's octs (CUZK_GPU_BA_HALVES bit 4, with bit 1: pairs of quads' sums added in
# affine too, k_ba_quads_oh and k_ba_octs_h in ba_halves.cuh) checked and measured. gpu_test
# --quick as built (its knob block runs HALVES 27 and 31 with quads), then with the
# batch-affine accumulation at every size in small chunks (CUZK_GPU_BATCH_AFFINE=2,
# CUZK_GPU_BA_CHUNK_BYTES=20000, CUZK_GPU_BA_QUADS=2) under each of OCTS_TEST (default 27), so
# that every G2 MSM's checks go through the octs (~2 min each); then the G2 MSM rows with tables (cuzk-bench-gpu --only
# $ONLY --logs $LOGS --tables 0 --reps 3: quads in the fitted chunk at 2^24 for the second
# part, pass B below 2^26 entries), each of SETTINGS (default: "default CUZK_GPU_BA_HALVES=27
# CUZK_GPU_BA_QUADS=2 CUZK_GPU_BA_QUADS=2,CUZK_GPU_BA_HALVES=27": today's, octs, quads for
# every G2 MSM, both; common.sh knob_env syntax) interleaved, ROUNDS rounds (default 2). ONLY
# (default g2), LOGS (default 20,22,24). Run from the repository root on the GPU machine after
# scripts/device-pack here (device tool: run "bash scripts/device/ba-octs.sh", carry
# ["build-device/cuzk-device.tar.xz"]). SKIP_TEST=1 skips the tests (tests and rows together
# take ~7 min by session 32's ba-halves.sh, which ran four tests in 9: split them over two calls
# if time is short). Writes
# $OUT/ba-octs.txt.
set -u
O=${OUT:-/tmp/ba-octs-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk || { echo "ba-octs: cannot unpack ${CUZK_PACK:-the pack}" >&2; exit 2; }
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
F=$O/ba-octs.txt
LOGS=${LOGS:-20,22,24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
SETTINGS=${SETTINGS:-default CUZK_GPU_BA_HALVES=27 CUZK_GPU_BA_QUADS=2 \
CUZK_GPU_BA_QUADS=2,CUZK_GPU_BA_HALVES=27}
{
dev_header
if [ -z "${SKIP_TEST:-}" ]; then
  dev_gpu_test "$O/gpu_test.log"
  for hv in ${OCTS_TEST:-27}; do
    dev_gpu_test "$O/gpu_test-octs$hv.log" CUZK_GPU_BATCH_AFFINE=2 \
      CUZK_GPU_BA_CHUNK_BYTES=20000 CUZK_GPU_BA_QUADS=2 CUZK_GPU_BA_HALVES=$hv
  done
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for k in $SETTINGS; do
    echo "-- round $round: $k ($(date -u '+%T'))"
    env $(knob_env "$k") timeout 240 "$NB" --only "${ONLY:-g2}" --logs "$LOGS" \
      --max-log "$MAXLOG" --tables 0 --reps 3 --scalars random $(knob_args "$k") 2>&1 |
      grep -E "^\|" | grep -v -- "---\|what"
  done
done
echo "== end $(date -u '+%T')"
} > "$F" 2>&1
cat "$F"
