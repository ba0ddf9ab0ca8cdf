#!/usr/bin/env bash
# Device run: MSM time by scalar distribution (issue 5: skewed scalars must not collapse
# performance). cuzk-bench-gpu --scalars KINDS (default random,equal,few16,u64: every scalar the
# same, one of 16 values, below 2^64) for G1 and G2 of both curves at 2^LOGS (default 24),
# without fixed-base tables and with them (--tables 0); every row's result is checked on the
# host by the bench itself. gpu_test --quick first (QUICK=0 skips it). Run from the repository
# root on the GPU machine after scripts/device-pack here, with build-device carried (device
# tool: run "bash scripts/device/msm-skew.sh", carry ["build-device"]). Writes
# $OUT/msm-skew.txt.
set -u
O=${OUT:-/tmp/msm-skew-out}
mkdir -p "$O"
. scripts/device/common.sh
dev_unpack /tmp/czs
LOGS=${LOGS:-24}
MAXLOG=$(echo "$LOGS" | tr ',' '\n' | sort -n | tail -1)
{
dev_header
[ "${QUICK:-1}" = 0 ] || dev_gpu_test "$O/gpu_test.log"
for tab in "" "--tables 0"; do
  echo "-- ${tab:-no tables}"
  timeout "${LIMIT:-280}" "$CUZK_BIN_DIR/cuzk-bench-gpu" --only "${ONLY:-g1,g2}" --logs "$LOGS" \
    --max-log "$MAXLOG" --reps "${REPS:-3}" --scalars "${KINDS:-random,equal,few16,u64}" $tab 2>&1 |
    grep -E "^\||wrong|error|tables:" | grep -v -- "---\|what"
  echo "rc=${PIPESTATUS[0]}"
done
echo "== end $(date -u '+%T')"
} > "$O/msm-skew.txt" 2>&1
cat "$O/msm-skew.txt"
