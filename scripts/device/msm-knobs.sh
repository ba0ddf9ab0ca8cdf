#!/usr/bin/env bash
# Device run: A/B of MSM settings given as environment assignments, the 2^24 MSM rows with
# fixed-base tables (cuzk-bench-gpu --logs 24 --max-log 24 --tables 0 --reps 3, random scalars),
# each setting in turn, ROUNDS rounds interleaved. KNOBS: space-separated settings, each
# "default" or VAR=VALUE and bench flags, comma-separated (e.g. "CUZK_GPU_BA_QUADS=0,--no-ba-fit";
# common.sh knob_env / knob_args) (default: "default CUZK_GPU_REDUCE_CHUNK=64
# CUZK_GPU_CARRY_SLICE=16"); ONLY: the bench's --only (default "g1,g2"); ROUNDS (default 2);
# LOGS (default 24: --logs, and --max-log its largest, so the point sets are that large) and
# SCALARS (default random) for other rows (e.g. LOGS=20,22,24 SCALARS=random,sparse01).
# gpu_test --quick runs first under each non-default setting (its MSM checks through it). Run
# from the repository root on the GPU machine after scripts/device-pack here, with build-device
# carried (device tool: run "bash scripts/device/msm-knobs.sh", carry ["build-device"]).
# CUZK_PACK=build-v-NAME/cuzk-device.tar.xz (a variant of build-variants.sh, e.g. main=) with
# SKIP_TEST=1 runs without the pack, beside bench-bins.sh PACK=none in the same call.
# Writes $OUT/msm-knobs.txt.
set -u
O=${OUT:-/tmp/msm-knobs-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czk || { echo "msm-knobs: cannot unpack ${CUZK_PACK:-the pack}" >&2; exit 2; }
[ -n "${SKIP_TEST:-}" ] || [ -x "$CUZK_BIN_DIR/gpu_test" ] ||
  { echo "msm-knobs: no gpu_test in ${CUZK_PACK:-the pack}: set SKIP_TEST=1" >&2; exit 2; }
NB=$CUZK_BIN_DIR/cuzk-bench-gpu
KNOBS=${KNOBS:-default CUZK_GPU_REDUCE_CHUNK=64 CUZK_GPU_CARRY_SLICE=16}
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
i=0
for k in $KNOBS; do
  i=$((i + 1))
  [ -z "$(knob_env "$k")" ] || [ -n "${SKIP_TEST:-}" ] || dev_gpu_test "$O/gpu_test-$i.log" $(knob_env "$k")
done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for k in $KNOBS; do
    echo "-- round $round: $k"
    env $(knob_env "$k") timeout 240 "$NB" --only "${ONLY:-g1,g2}" --logs "$LOGS" \
      --max-log "$MAXLOG" --tables 0 --reps 3 --scalars "${SCALARS:-random}" $(knob_args "$k") \
      2>&1 | grep -E "^\|" | grep -v -- "---\|what"
  done
done
echo "== end $(date -u '+%T')"
} > "$O/msm-knobs.txt" 2>&1
cat "$O/msm-knobs.txt"
